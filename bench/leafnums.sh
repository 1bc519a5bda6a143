#!/bin/bash
# bench/leafnums.sh - the manager's leaf numbers (manager/tree.h, LEAF
# NUMBERS): uniform (every open leaf 1 and 1, `--leaf-step 0`) against
# numbers from the heuristic score (`--leaf-step D`), on the same roots in
# the same run. By hand (a few minutes a root and step), not in make bench.
#
# So that the tree alone decides, each root is proved by the tree only
# (`--no-root-jobs`: no df-pn on the root itself), with one local worker
# and jobs bounded by df-pn positions, not time (`--job-nodes`, default
# 300000, doubling to 8 times): the jobs a proof takes are then the same
# from run to run, and the baseline (uniform) and each step are compared
# by jobs as well as by time.
#
# The roots are ladder positions of 8-12 pieces that `frontier run`
# proved with the 1-6 databases (results/frontier.tsv, results/level-2-6):
# decided and level ones, a draw among them. LEAF_ROOTS="FEN ..." runs
# others; LEAF_STEPS="0 50 25" the steps (0: uniform, the baseline, and
# first); LEAF_BUDGET seconds a root (default 300); EGDB the databases
# (default egdb-data), LEAF_PIECES their piece limit (default 6).
#
# Every settled proof is checked by `proof check --state` (its verdict
# beside it). The summary gives, per step, the roots settled and checked,
# and on the roots every step settles the jobs and seconds in all, with
# their ratio to the baseline's.
set -u
C=${CHECKERS:-bin/checkers}
DB=${EGDB:-egdb-data}
PIECES=${LEAF_PIECES:-6}
BUDGET=${LEAF_BUDGET:-300}
NODES=${LEAF_NODES:-300000}
STEPS=(${LEAF_STEPS:-0 50})
T=$(mktemp -d "${TMPDIR:-/tmp}/bench_leafnums.XXXXXX")
trap 'rm -rf "$T"' EXIT
[ -d "$DB" ] || { echo "bench/leafnums.sh: no databases in $DB (make egdb)" >&2; exit 1; }
ROOTS=(${LEAF_ROOTS:-})
if [ ${#ROOTS[@]} -eq 0 ]; then
    ROOTS=(
        'W:W18,24,27,30,32:B1,3,7,17,20'
        'B:W12,14,27,31,32:B3,7,13,20,23'
        'W:W12,17,27,31,32:B5,6,16,19,20'
        'W:W18,19,20,30,K6:B7,11,12,21,K29'
        'W:W12,18,21,27,31,32:B3,7,10,13,20,23'
        'B:W12,13,16,20,21,23,31:B3,5,6,8,10'
        'W:W12,13,14,18,21,32:B3,5,6,7,22,27'
        'W:W25,28,29,30,31:B1,2,3,10,13,19,27'
        'W:W9,12,18,21,23:B3,5,7,17,22'
        'B:W12,21,23,24,25,K8:B7,9,14,15'
    )
fi
. "$(dirname "$0")/prove_lib.sh"
printf "%-42s %5s %8s %6s  %s\n" root step wall_s jobs result
i=0
k=0
for r in "${ROOTS[@]}"; do
    i=$((i + 1))
    for s in "${STEPS[@]}"; do
        k=$((k + 1))
        S="$T/r$i-s$s-$k" # a new state for every run, the same step twice too
        prove_root "$S" "$r" --pieces "$PIECES" --workers 1 --no-root-jobs --job-nodes "$NODES" \
            --job-time 60 --leaf-step "$s" --budget "$BUDGET"
        printf "%-42s %5s %8.2f %6d  %s (%s)\n" "$r" "$s" "$P_WALL" "$P_JOBS" "${P_RESULT:-?}" "$P_CHECK"
        echo "$i $s $P_WALL $P_JOBS $([ "$P_CHECK" = valid ] && echo 1 || echo 0)" >>"$T/rows"
    done
done
awk -v nsteps="${#STEPS[@]}" '
    { key[$1, $2] = 1; wall[$1, $2] = $3; jobs[$1, $2] = $4; ok[$1, $2] = $5;
      if (!($2 in seen)) { seen[$2] = 1; order[++ns] = $2 }; roots[$1] = 1 }
    END {
        for (k = 1; k <= ns; k++) { s = order[k]; n = 0
            for (r in roots) n += ok[r, s]
            settled[s] = n }
        both = 0
        for (r in roots) { all = 1
            for (k = 1; k <= ns; k++) if (!ok[r, order[k]]) all = 0
            if (all) { both++; for (k = 1; k <= ns; k++) { s = order[k]; tj[s] += jobs[r, s]; tw[s] += wall[r, s] } } }
        b = order[1]
        for (k = 1; k <= ns; k++) { s = order[k]
            printf "step %s%s: %d of %d settled and checked; on the %d all settle: %d jobs (x%.2f), %.1f s (x%.2f)\n",
                s, s == 0 ? " (uniform, the baseline)" : "", settled[s], length(roots), both,
                tj[s], tj[b] ? tj[s] / tj[b] : 0, tw[s], tw[b] ? tw[s] / tw[b] : 0 }
    }' "$T/rows"
