#!/bin/bash
# bench/scaling.sh - the time to prove a fixed set of roots, each of which
# needs many jobs, with 1 and then 2 local workers (by hand:
# bash bench/scaling.sh). The baseline is the 1-worker pass, measured in
# the same run; the ratio is its time over the 2-worker pass's.
#
# The roots are ladder rungs of 8-12 pieces that `frontier run` proved
# with the 1-6 databases and two workers (results/frontier.tsv, and the
# level ladder's B:W12,14,27,31,32:B3,7,13,20,23). Since the root is a job
# of its own (manager/tree.h, THE ROOT'S OWN JOBS) they are settled in 1-8
# jobs of 5 s, mostly by the root's own df-pn; the figures before and
# after are in docs/manager.md. SCALING_ROOTS="FEN FEN ..." runs others.
#
# SCALING_SET=level runs harder roots, with the 1-7 databases: the level
# ladder's positions that `frontier run` proved in 4-50 s (results/
# level-2-7: four draws of 10 and 12 pieces, a 10- and a 14-piece loss)
# and the king ending draw above. A level draw is two questions, which
# two workers ask at once (manager/tree.h, THE ROOT'S OTHER QUESTION).
#
# Every proof is checked by `proof check --state` (its verdict printed
# beside it). Needs the 1-6 piece databases in egdb-data (EGDB=DIR to use
# others; SCALING_PIECES=N opens them to N pieces, default 6, or 7 for
# the level set). A pass takes a minute or two (the level set: five to
# ten); by hand, not in make bench (BENCH_BY_HAND).
#
# SCALING_PASSES=N (default 3) runs N rounds of a 1-worker pass then a
# 2-worker pass, and reports each round's ratio, the ratio of the mean
# times, and the range: one round says little, since where a draw's job
# boundaries fall decides which search gets the work the next job
# resumes, and the same binary has given x1.45 and x3.32 in two rounds
# (docs/manager.md, scaling on the 2-6 level set).
set -u
C=${CHECKERS:-bin/checkers}
DB=${EGDB:-egdb-data}
T=$(mktemp -d "${TMPDIR:-/tmp}/bench_scaling.XXXXXX")
trap 'rm -rf "$T"' EXIT
ROOTS=(${SCALING_ROOTS:-})
PIECES=${SCALING_PIECES:-6}
if [ ${#ROOTS[@]} -eq 0 ] && [ "${SCALING_SET:-}" = level ]; then
    PIECES=${SCALING_PIECES:-7}
    ROOTS=(
        'W:W13,26,28,30,32:B1,4,6,17,20'
        'W:W18,24,27,30,32:B1,3,7,17,20'
        'B:W19,20,21,22,23,31:B2,3,10,12,13,14'
        'W:W18,19,20,23,31:B2,7,12,13,17'
        'B:W22,27,31,32,K16:B10,13,20,24,K29'
        'B:W9,19,20,23,26,30,31:B1,3,4,11,12,14,17'
        'W:W28,32,K1,K12:B3,19,20,23,K6,K27'
    )
elif [ ${#ROOTS[@]} -eq 0 ]; then
    ROOTS=(
        'W:W28,32,K1,K12:B3,19,20,23,K6,K27'
        'B:W12,14,27,31,32:B3,7,13,20,23'
        'W:W11,21,22,26,29,K2:B4,13,20,K9'
        'B:W6,25,28,29,30:B1,2,3,13'
        'W:W25,28,29,30,31:B1,2,3,10,13,19,27'
        'B:W12,21,24,25,27,31,32,K4:B3,6,14,15,18,20'
        'W:W5,11,14,30:B1,6,12,21,K27,K29'
        'W:W12,K2,K6,K8:B5,10,K17,K23'
        'B:W8,21,22,32,K4,K24:B13,23,28,K31'
    )
fi
. "$(dirname "$0")/prove_lib.sh"
pass() { # workers round
    local w=$1 n=$2 total=0 jobs=0 ok=0
    for r in "${ROOTS[@]}"; do
        S="$T/r$n-w$w-$(echo "$r" | tr ':,' '__')"
        prove_root "$S" "$r" --pieces "$PIECES" --workers "$w" --job-time 5 --budget 600
        [ "$P_CHECK" = valid ] && ok=$((ok + 1))
        printf "%-34s %5d %7d %8.2f %5d  %s (%s)\n" "$r" "$n" "$w" "$P_WALL" "$P_JOBS" "$P_RESULT" "$P_CHECK"
        total=$(echo "$total + $P_WALL" | bc)
        jobs=$((jobs + P_JOBS))
    done
    printf "%-34s %5d %7d %8.2f %5d  %d of %d proved and checked\n" "all" "$n" "$w" "$total" "$jobs" "$ok" "${#ROOTS[@]}"
}
PASSES=${SCALING_PASSES:-3}
case $PASSES in '' | *[!0-9]* | 0)
    echo "scaling.sh: SCALING_PASSES must be a positive whole number, not '$PASSES'" >&2
    exit 2 ;;
esac
printf "%-34s %5s %7s %8s %5s  %s\n" root round workers wall_s jobs result
for n in $(seq 1 "$PASSES"); do
    pass 1 "$n"
    pass 2 "$n"
done | tee "$T/table"
awk '$1 == "all" { t[$2, $3] = $4; s[$3] += $4; k[$3]++; if ($2 > r) r = $2 }
     END {
         for (n = 1; n <= r; n++) {
             x = t[n, 1] / t[n, 2]
             printf "round %d: 1 worker %.1f s, 2 workers %.1f s: x%.2f\n", n, t[n, 1], t[n, 2], x
             if (n == 1 || x < lo) lo = x
             if (n == 1 || x > hi) hi = x
         }
         printf "scaling: %d roots, %d rounds, mean 1 worker %.1f s, 2 workers %.1f s: x%.2f (rounds x%.2f to x%.2f)\n", '"${#ROOTS[@]}"', r, s[1] / k[1], s[2] / k[2], (s[1] / k[1]) / (s[2] / k[2]), lo, hi
     }' "$T/table"
