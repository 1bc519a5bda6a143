#!/bin/bash
# bench/manager.sh - the proof-tree manager with 1 and 2 local workers
# (make bench). The baseline is the run with one worker, measured in the
# same run; each ratio is 2 workers over 1.
#   A. small jobs (at most 300 df-pn positions each) on a root the tree
#      proves in seconds: the manager's own work per job (picking leaves,
#      taking results, LMDB commits) is what limits the job rate here;
#   B. one-second jobs on a harder root for a fixed 40 s: jobs a minute,
#      the number that projects to many workers.
# Roots are 5-piece positions with the 1-4 piece databases, so that the
# tree has to grow. Each finished proof goes through `proof check --state`
# (its verdict is printed beside the result). Needs the 1-5 piece test databases (make testdata).
set -u
C=${CHECKERS:-bin/checkers}
DB=${CHECKERS_TEST_DB:-build/testdata/egdb5}
T=$(mktemp -d "${TMPDIR:-/tmp}/bench_manager.XXXXXX")
trap 'rm -rf "$T"' EXIT
now() { date +%s.%N; }
run() { # label root workers extra-args...
    label=$1 root=$2 w=$3
    shift 3
    S="$T/$label-$w"
    t0=$(now)
    out=$($C prove --fen "$root" --state "$S" --db "$DB" --pieces 4 --workers "$w" --quiet "$@" \
        2>/dev/null)
    t1=$(now)
    jobs=$(echo "$out" | sed -n 's/.*jobs: \([0-9]*\) answered.*/\1/p')
    mgr=$(echo "$out" | sed -n 's/.*(\([0-9.]*\) ms a job).*/\1/p')
    res=$(echo "$out" | head -n 1 | cut -f 2)
    if [ "$res" != unknown ]; then # every finished proof is checked from scratch
        chk=$($C proof check --state "$S" --db "$DB" 2>/dev/null | head -n 1 | cut -f 2)
        res="$res ($chk)"
    fi
    awk -v l="$label" -v w="$w" -v a="$t0" -v b="$t1" -v j="$jobs" -v m="$mgr" -v r="$res" \
        'BEGIN { printf "%-3s %7d %8.2f %7d %9.0f %11s  %s\n", l, w, b - a, j, j * 60 / (b - a), m, r }'
}
printf "%-3s %7s %8s %7s %9s %11s  %s\n" run workers wall_s jobs jobs/min mgr_ms/job result
{
    run A 'B:W30,31,K19:B6,K12' 1 --job-time 5 --job-nodes 300
    run A 'B:W30,31,K19:B6,K12' 2 --job-time 5 --job-nodes 300
    run B 'B:W17,21,K32:B3,K16' 1 --job-time 1 --budget 40
    run B 'B:W17,21,K32:B3,K16' 2 --job-time 1 --budget 40
} | tee "$T/table"
awk '$1 == "A" || $1 == "B" { w[$1 $2] = $3; r[$1 $2] = $5 }
     END { printf "A: 2 workers / 1: wall time x%.2f faster, jobs a minute x%.2f\n", w["A1"] / w["A2"], r["A2"] / r["A1"];
           printf "B: 2 workers / 1: jobs a minute x%.2f\n", r["B2"] / r["B1"] }' "$T/table"
