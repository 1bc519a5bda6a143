# bench/prove_lib.sh - sourced by the bench scripts that prove a root with
# `checkers prove` and check the proof (scaling.sh, leafnums.sh).
#
# prove_root STATE FEN [prove options...] runs
#   $C prove --fen FEN --state STATE --db $DB --quiet [options...]
# and, when it settled (exit 0), `proof check --state STATE`; it sets
#   P_WALL    its wall time in seconds (prove only, not the check);
#   P_JOBS    the jobs answered (0 when the output names none);
#   P_RESULT  the result on prove's first line (win, draw, >=draw, ...);
#   P_CHECK   the checker's verdict (valid, invalid, ...), - when unchecked.
# Needs C (the checkers program) and DB (the databases' folder).
prove_root() {
    local state=$1 fen=$2 t0 t1 out rc
    shift 2
    t0=$(date +%s.%N)
    out=$($C prove --fen "$fen" --state "$state" --db "$DB" --quiet "$@" 2>/dev/null)
    rc=$?
    t1=$(date +%s.%N)
    P_WALL=$(echo "$t1 - $t0" | bc)
    P_JOBS=$(echo "$out" | sed -n 's/.*jobs: \([0-9]*\) answered.*/\1/p')
    P_JOBS=${P_JOBS:-0}
    P_RESULT=$(echo "$out" | head -n 1 | cut -f 2)
    P_CHECK=-
    if [ $rc -eq 0 ]; then
        P_CHECK=$($C proof check --state "$state" --db "$DB" 2>/dev/null | head -n 1 | cut -f 2)
    fi
    return 0
}
