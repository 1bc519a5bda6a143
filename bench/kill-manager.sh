#!/bin/bash
# bench/kill-manager.sh - the manager killed with SIGKILL at random moments
# of proofs with two local workers, then resumed (issue 42's target "nothing
# is lost under SIGKILL"; not part of `make test`: 100 runs take minutes).
#
# Each run: a fresh state proves one root (the KILL_ROOTS, in turn) with
# the 1-4 piece databases (--pieces 4) and two local workers, jobs of one
# second and KILL_JOB_NODES (5,000) positions, so that a proof is many
# results. The resume is the same command without the job limits. The manager is killed (SIGKILL;
# its local workers follow it: PR_SET_PDEATHSIG) once its log holds a
# random number (1..KILL_MAX_LINES, 4) of lines saying records were admitted, or at
# once when the number drawn is 0 (a kill during the state's creation).
# A random moment is a random event (a log line), not a random delay.
# Then, before the resume:
#   - every result the manager logged as admitted ("job J from W: BOUND,
#     N records admitted") was committed before it was logged (and before
#     its ACK): the job's position (from the worker's log "job J: FEN
#     question") must have a record in the state's store whose bound
#     implies the logged one. This is "no admitted record is lost".
# Then `prove --state S` resumes (two local workers, KILL_FINISH seconds at
# most) and must settle the root with the 1-5 database's value, and `proof
# check --state S` must say valid.
#
# Output: one line a run (root, kill point, results admitted before the
# kill, their records found, the resumed value), then the totals. Exit
# status 1 when any run lost a record, gave another value or a proof the
# checker refused.
#
# Environment: CHECKERS (bin/checkers), CHECKERS_TEST_DB (build/testdata/
# egdb5: make testdata), KILL_RUNS (100), KILL_MAX_LINES (4), KILL_SEED
# (the random draw), KILL_FINISH (300), KILL_ROOTS (5-piece roots with
# '|' between), KEEP=1 keeps the temporary folder, KILL_KEEP_FAILED the
# folder a failed run's state and logs are copied to (/tmp/kill-manager-failed).
set -u
C=${CHECKERS:-bin/checkers}
DB=${CHECKERS_TEST_DB:-build/testdata/egdb5}
RUNS=${KILL_RUNS:-100}
MAXL=${KILL_MAX_LINES:-4}
FINISH=${KILL_FINISH:-300}
JOBN=${KILL_JOB_NODES:-5000}
ROOTS=${KILL_ROOTS:-'W:WK1,K24:BK12,K16,K29|W:WK5,K6:B25,K4,K19|B:WK11,K28:B21,25,K19|W:W15,K4,K14:BK21,K32'}
RANDOM=${KILL_SEED:-42}
T=$(mktemp -d /tmp/kill-manager.XXXXXX)
KEPT=${KILL_KEEP_FAILED:-/tmp/kill-manager-failed}
[ "${KEEP:-0}" = 1 ] || trap 'rm -rf "$T"' EXIT
IFS='|' read -r -a R <<<"$ROOTS"

# Waits until the file $1 holds at least $2 lines matching $3, or the
# process $4 has ended; a deadline of 600 s. The condition is the event
# (the manager's own log line); it is looked at every 20 ms.
wait_lines() {
    local end=$((SECONDS + 600)) n
    while :; do
        n=$(grep -c -- "$3" "$1" 2>/dev/null)
        [ "${n:-0}" -ge "$2" ] && return 0
        kill -0 "$4" 2>/dev/null || return 1
        [ "$SECONDS" -lt "$end" ] || return 1
        sleep 0.02
    done
}

# The bound word of a state's record for FEN ('-' when none). A state holds
# its store in <state>/state (one environment) or <state>/proofs (before).
stored() {
    local s=$1/state
    [ -d "$s" ] || s=$1/proofs
    "$C" store get --store "$s" "$2" 2>/dev/null | cut -f2 | head -1
}

# 1 when the stored bound $1 implies the logged bound word $2 (win, loss,
# draw, >=draw, <=draw: for the job position's side to move).
implies() {
    case "$2" in
    win) [ "$1" = WW ] ;;
    loss) [ "$1" = LL ] ;;
    draw) [ "$1" = DD ] ;;
    ">=draw") [ "$1" = WW ] || [ "$1" = DW ] || [ "$1" = DD ] ;;
    "<=draw") [ "$1" = LL ] || [ "$1" = LD ] || [ "$1" = DD ] ;;
    *) return 1 ;;
    esac
}

bad=0 results=0 found=0 unknown=0 killed_early=0 settled_before=0
echo "kill-manager: $RUNS runs, roots ${#R[@]}, kill after 0..$MAXL admitted results, seed ${KILL_SEED:-42}"
for i in $(seq 1 "$RUNS"); do
    root=${R[$(((i - 1) % ${#R[@]}))]}
    S=$T/s$i
    want=$("$C" egdb probe --db "$DB" "$root" | cut -f2)
    k=$((RANDOM % (MAXL + 1)))
    "$C" prove --fen "$root" --db "$DB" --pieces 4 --state "$S" --workers 2 --job-time 1 \
        --job-nodes "$JOBN" --budget 600 --quiet >"$T/out$i" 2>"$T/log$i" &
    mp=$!
    if [ "$k" -gt 0 ]; then
        wait_lines "$T/log$i" "$k" ' [1-9][0-9]* records admitted' "$mp"
    else
        wait_lines "$T/log$i" 1 'listening on port\|starting' "$mp"
    fi
    if kill -0 "$mp" 2>/dev/null; then
        kill -KILL "$mp"
    else
        settled_before=$((settled_before + 1))
    fi
    wait "$mp" 2>/dev/null
    # the local workers follow the manager (PDEATHSIG): wait for them
    for n in $(seq 1 500); do
        pgrep -f -- "--store $S/" >/dev/null || break
        sleep 0.02
    done
    # every admitted result is in the store, at least as strong as logged
    lost=0 nres=0 nfound=0 nunk=0
    while read -r job bound; do
        nres=$((nres + 1))
        fen=$(grep -h "job $job: [WB]:" "$S"/workers/*.log 2>/dev/null | head -1 |
            sed 's/.*job [0-9]*: \([^ ]*\) .*/\1/')
        if [ -z "$fen" ]; then
            # the worker's line naming the job's position was still in
            # its pipe to the manager (the manager writes the workers'
            # logs) when the manager was killed: nothing to look up
            nunk=$((nunk + 1))
            continue
        fi
        got=$(stored "$S" "$fen")
        if implies "$got" "$bound"; then
            nfound=$((nfound + 1))
        else
            lost=$((lost + 1))
            echo "  run $i: job $job ($fen, $bound) admitted before the kill, stored: '${got:-none}'"
        fi
    done < <(sed -n 's/.*job \([0-9]*\) from [^ ]*: \([^,]*\), [0-9]* records admitted.*/\1 \2/p' "$T/log$i" |
        grep -v ' unknown$')
    results=$((results + nres))
    unknown=$((unknown + nunk))
    found=$((found + nfound))
    [ "$k" -eq 0 ] && killed_early=$((killed_early + 1))
    # resume to the end
    "$C" prove --fen "$root" --db "$DB" --pieces 4 --state "$S" --workers 2 --budget "$FINISH" \
        --quiet >"$T/rout$i" 2>"$T/rlog$i"
    rc=$?
    got=$(head -1 "$T/rout$i" | cut -f2)
    chk=$("$C" proof check --state "$S" --db "$DB" 2>&1 | grep -m1 "^$root" | cut -f2)
    ok=1
    [ "$lost" -eq 0 ] || ok=0
    [ "$rc" -eq 0 ] && [ "$got" = "$want" ] || ok=0
    [ "$chk" = valid ] || ok=0
    [ $ok -eq 1 ] || bad=$((bad + 1))
    printf 'run %3d  %-26s kill after %2d  admitted before %2d, found %2d%s  resumed: %s (want %s, exit %d)  check: %s%s\n' \
        "$i" "$root" "$k" "$nres" "$nfound" "$([ $nunk -eq 0 ] || echo " ($nunk not named)")" \
        "${got:-?}" "$want" "$rc" "$chk" "$([ $ok -eq 1 ] || echo '  <-- FAILED')"
    if [ $ok -eq 0 ]; then # kept, with the logs, for a look
        mkdir -p "$KEPT" && cp -r "$S" "$T/log$i" "$T/rlog$i" "$T/rout$i" "$KEPT/" 2>/dev/null
        mv "$KEPT/$(basename "$S")" "$KEPT/s$i" 2>/dev/null
        echo "  run $i: the resume said: $(grep -v ' manager: ' "$T/rlog$i" | head -2 | tr '\n' ' ')"
    fi
    [ "${KEEP:-0}" = 1 ] || rm -rf "$S"
done
echo "kill-manager: $RUNS runs ($killed_early killed while the state was made, $settled_before settled before the kill)," \
    "$results results admitted before a kill: $found found in the store, $unknown whose position no log named;" \
    "$bad runs failed${KEPT:+ (kept in $KEPT)}"
[ "$bad" -eq 0 ]
