#!/bin/sh
# End-to-end checks of `checkers solve`, `proof check` and `store`: results
# against the databases, proofs written to a store and checked by the
# independent checker, answers from the store, budgets, exit codes, and a
# solver killed with SIGKILL while it writes. Run by `make test` with
# $CHECKERS set to the binary and $CHECKERS_TEST_DB to the 1-5 piece
# databases. The solver uses fewer pieces (--pieces) than the reference
# value the databases give, so it has to search.
set -u
C=${CHECKERS:-bin/checkers}
DB=${CHECKERS_TEST_DB:-}
fail=0
if [ -z "$DB" ] || [ ! -d "$DB" ]; then
    echo "FAIL e2e_solve: CHECKERS_TEST_DB is not set (run through make test)"
    exit 1
fi
T=$(mktemp -d "${TMPDIR:-/tmp}/e2e_solve.XXXXXX") || { echo "FAIL mktemp"; exit 1; }
bg=
cleanup() {
    [ -n "$bg" ] && kill -9 "$bg" 2>/dev/null
    rm -rf "$T"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

. "$(dirname "$0")/lib_e2e.sh"

# The value the full databases give (win/loss/draw), the solver's first line.
dbval() { $C egdb probe --db "$DB" "$1" | cut -f 2; }
S="$T/store"

# A win, a loss and a draw, each with the databases one piece short (the
# draws only exist by repetition there: kings shuttle for ever).
for f in 'B:W24,28:B5,K10' 'W:WK3:BK10,K14' 'B:WK1:BK32' 'W:WK10:B26,K29' 'B:W9,23:B22,K27'; do
    n=$(echo "$f" | tr -cd '0-9,:' | tr ':,' '\n\n' | grep -c .)
    out=$($C solve --db "$DB" --pieces $((n - 1)) --store "$S" --time 60 "$f")
    rc=$?
    check "solve $f exit" 0 $rc
    check "solve $f = database" "$(dbval "$f")" "$(echo "$out" | head -n 1 | cut -f 2)"
    $C proof check --store "$S" --db "$DB" --pieces $((n - 1)) "$f" >"$T/chk" 2>/dev/null
    check "proof check $f" "0 valid" "$? $(head -n 1 "$T/chk" | cut -f 2)"
done

# Asked again, the store answers: no df-pn query needs more than a few nodes.
out=$($C solve --db "$DB" --pieces 3 --store "$S" --json 'B:W24,28:B5,K10')
check "answered from the store" "win" "$(echo "$out" | sed 's/.*"result":"\([^"]*\)".*/\1/')"
check "store nodes" "1" "$(echo "$out" | sed 's/.*"nodes":\([0-9]*\),.*/\1/' | awk '{print ($1 <= 2)}')"

# One goal only.
check "goal win on a draw" "<=draw" \
    "$($C solve --db "$DB" --pieces 1 --goal win 'B:WK1:BK32' | head -n 1 | cut -f 2)"
check "goal draw on a draw" ">=draw" \
    "$($C solve --db "$DB" --pieces 1 --goal draw 'B:WK1:BK32' | head -n 1 | cut -f 2)"

# The budget runs out: exit 1, and the result is unknown or a bound.
out=$($C solve --db "$DB" --pieces 4 --nodes 50 'W:W5,15,K1:B20,23')
check "budget exit" 1 $?
case "$(echo "$out" | head -n 1 | cut -f 2)" in
unknown | ">=draw" | "<=draw") echo "ok   budget result" ;;
*) echo "FAIL budget result: $(echo "$out" | head -n 1)"; fail=1 ;;
esac

# Infinity is written "inf", as the pages and their JSON write it (a
# proven win: dn infinite), never as the number 2^30.
out=$($C solve --db "$DB" --pieces 3 'B:W24,28:B5,K10')
check "solve: infinity as inf" "1 0" \
    "$(echo "$out" | grep -c 'root pn 0 dn inf$') $(echo "$out" | grep -c 1073741824)"
check "solve --json: infinity as \"inf\"" 1 \
    "$($C solve --db "$DB" --pieces 3 --json 'B:W24,28:B5,K10' | grep -c '"dn":"inf"')"

# Ctrl-C on a terminal (script(1) gives solve a pty): said as an
# interruption, not as a budget, and the progress line (with the "^C" a
# terminal echoes after it) erased before the answer. The signal is sent
# once a progress line shows the search runs.
if command -v script >/dev/null; then
    script -qfc "$C solve --db $DB --pieces 2 --time 300 'B:W17,21,K32:B3,K16'" "$T/tty.txt" \
        >/dev/null 2>&1 &
    sc=$!
    # (sh has no $SECONDS for lib_e2e's wait_for: a count of 50 ms naps)
    n=0
    until grep -q 'df-pn:' "$T/tty.txt" 2>/dev/null || [ $n -ge 1200 ]; do
        sleep 0.05
        n=$((n + 1))
    done
    spid=
    for f in /proc/[0-9]*/cmdline; do
        case "$({ tr '\0' ' ' <"$f"; } 2>/dev/null)" in
        "$C solve "*"--time 300 "*) spid=${f#/proc/} spid=${spid%/cmdline} ;;
        esac
    done
    if [ -n "$spid" ]; then
        kill -INT "$spid"
    else
        echo "FAIL Ctrl-C: no solve process found"
        fail=1
        kill "$sc"
    fi
    wait "$sc"
    check "Ctrl-C: interrupted, not a budget" "1 0" \
        "$(grep -c 'interrupted (Ctrl-C): nothing proved' "$T/tty.txt") $(grep -c 'budget ran out' "$T/tty.txt")"
    check "Ctrl-C: the progress line erased before the answer" 1 \
        "$(grep -c "$(printf '\033')\\[KB:W17,21,K32:B3,K16" "$T/tty.txt")"
else
    echo "skip Ctrl-C on a terminal: no script(1)"
fi

# The store, read-only.
check "store get" "WW" "$($C store get --store "$S" 'B:W24,28:B5,K10' | head -n 1 | cut -f 2)"
check "store export lines" 1 "$($C store export --store "$S" | awk 'END {print (NR > 10)}')"
$C store get --store "$S" 'B:W30:B3' >/dev/null 2>&1
check "store get, nothing stored" 1 $?
$C proof check --store "$S" --db "$DB" 'B:W30:B3' >/dev/null 2>&1
check "proof check, nothing stored" 2 $?

# Bad input: exit 2 with a message naming it.
$C solve --db "$DB" 'B:W33:B1' >/dev/null 2>"$T/err"
check "bad FEN exit" 2 $?
check "bad FEN message" 1 "$(grep -c "33" "$T/err")"
$C solve 'B:W30:B3' >/dev/null 2>&1
check "no --db" 2 $?
$C solve --db "$DB" --goal maybe 'B:W30:B3' >/dev/null 2>&1
check "bad goal" 2 $?
$C solve --db "$DB" --tt-kept lots 'B:W30:B3' >/dev/null 2>"$T/err"
check "bad --tt-kept: exit 2, named" "2 1" "$? $(grep -c -- '--tt-kept' "$T/err")"

# A solver killed with SIGKILL while it works and writes: the store still
# opens, and every proof in it still checks.
S2="$T/store2"
$C solve --db "$DB" --pieces 4 --store "$S2" --time 60 'W:W9,19,25:BK4,K29' >/dev/null 2>&1 &
bg=$!
$C solve --db "$DB" --pieces 2 --store "$S2" 'B:WK1:B4,K31' >/dev/null 2>&1
# killed once it has the store open and is searching (an event, not a time)
wait_for 30 test -f "$S2/data.mdb"
kill -9 "$bg" 2>/dev/null
wait "$bg" 2>/dev/null
bg=
$C store stats --store "$S2" >/dev/null 2>&1
check "store opens after SIGKILL" 0 $?
$C proof check --store "$S2" --db "$DB" --pieces 2 'B:WK1:B4,K31' >/dev/null 2>&1
check "proof checks after SIGKILL" 0 $?
# whatever the killed solver had committed is whole: its root checks, or
# nothing was stored for it (exit 2); never an invalid proof (exit 1)
$C proof check --store "$S2" --db "$DB" --pieces 4 'W:W9,19,25:BK4,K29' >/dev/null 2>&1
rc=$?
check "killed solver's proof whole or absent" 1 "$([ $rc -eq 0 ] || [ $rc -eq 2 ] && echo 1 || echo 0)"

exit $fail
