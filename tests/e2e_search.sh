#!/bin/sh
# End-to-end checks of `checkers search`: the output format scripts read,
# proven results with the databases, exit codes and messages. Run by
# `make test` with $CHECKERS set to the binary and $CHECKERS_TEST_DB to
# the 1-5 piece databases (the database checks are skipped without it).
set -u
C=${CHECKERS:-bin/checkers}
DB=${CHECKERS_TEST_DB:-}
fail=0

. "$(dirname "$0")/lib_e2e.sh"

# The first line is FEN<TAB>SCORE<TAB>verdict; the FEN is echoed as given.
out=$($C search --depth 6 'B:W21-32:B1-12' 2>/dev/null)
check "search exit" 0 $?
check "first line fields" "B:W21-32:B1-12 heuristic" \
    "$(echo "$out" | head -n 1 | awk -F '\t' '{print $1, $3}')"
check "depth line" "depth: 6" "$(echo "$out" | sed -n 2p)"
check "line count" 7 "$(echo "$out" | wc -l | tr -d ' ')"
check "pv line" "pv:" "$(echo "$out" | sed -n 3p | cut -d ' ' -f 1)"

# A side without a move: a proven loss at once.
check "no move" "B:W8,11:B4	-30000	proven loss" \
    "$($C search --depth 3 'B:W8,11:B4' 2>/dev/null | head -n 1)"
# Blocking it: a proven win in one ply, with its move.
out=$($C search --depth 3 'W:W8,15:B4' 2>/dev/null)
check "win in one" "W:W8,15:B4	29999	proven win" "$(echo "$out" | head -n 1)"
check "win in one pv" "pv: 15-11" "$(echo "$out" | sed -n 3p)"

if [ -n "$DB" ] && [ -d "$DB" ]; then
    # Two kings against one king and a man that must be given up: the
    # database wins, and the search proves it through the capture.
    out=$($C search --db "$DB" --pieces 4 --depth 12 'B:W18,K27:B10,K15,K22' 2>/dev/null)
    check "db proven win" "proven win" "$(echo "$out" | head -n 1 | cut -f 3)"
    check "db probes counted" 1 "$(echo "$out" | awk '/^db probes:/ {print ($3 > 0)}')"
    check "db agrees" "B:W18,K27:B10,K15,K22	win" \
        "$($C egdb probe --db "$DB" 'B:W18,K27:B10,K15,K22')"
    $C search --db "$DB" --pieces 9 --depth 2 'B:W18:B14' >/dev/null 2>&1
    check "pieces above EGDB_MAX_PIECES exit" 2 $?
fi

# Exit codes: 2 for bad usage or input, with a message naming the problem;
# 1 when the work fails.
$C search >/dev/null 2>&1;                          check "no FEN exit" 2 $?
$C search --help >/dev/null 2>&1;                   check "--help exit" 0 $?
$C search --depth 0 'B:W18:B14' >/dev/null 2>&1;    check "depth 0 exit" 2 $?
$C search --frob 'B:W18:B14' >/dev/null 2>&1;       check "unknown option exit" 2 $?
$C search --pieces 4 'B:W18:B14' >/dev/null 2>&1;   check "--pieces without --db exit" 2 $?
msg=$($C search --time abc 'B:W18:B14' 2>&1); rc=$?
check "bad time exit" 2 $rc
case "$msg" in *"--time"*"abc"*) echo "ok   bad time message";;
    *) echo "FAIL bad time message: $msg"; fail=1;; esac
msg=$($C search --depth 2 'B:W33:B1' 2>&1); rc=$?
check "bad FEN exit" 2 $rc
case "$msg" in *"33"*) echo "ok   bad FEN message";;
    *) echo "FAIL bad FEN message: $msg"; fail=1;; esac
msg=$($C search --db /nonexistent/dir --depth 2 'B:W18:B14' 2>&1); rc=$?
check "missing db exit" 1 $rc
case "$msg" in *nonexistent*) echo "ok   missing db message";;
    *) echo "FAIL missing db message: $msg"; fail=1;; esac

exit $fail
