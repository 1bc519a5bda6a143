#!/usr/bin/env bash
# bench/egdb_partial_speed.sh - the partial-information builder's speed (egdb/partial_build.c)
# on fixed materials, a baseline binary against a new one in the same run, alternating
# (A B A B ...), with every .pwl file compared byte for byte.
#
# usage: bench/egdb_partial_speed.sh BASE_BIN NEW_BIN
#   BASE_BIN, NEW_BIN  two `checkers` binaries (a copy of today's bin/checkers and the one
#                      under test)
# environment:
#   DB     a folder of complete databases (.wld files) to read; default /work/egdb-data.
#          Only read: the slices of up to PIECES pieces are symlinked into WORK.
#   PIECES the complete piece counts linked (1..PIECES); default 6.
#   WORK   scratch folder; default /tmp/egdb-partial-speed.
#   MATS   the materials built as partial databases ("KKMM,...", twins implied); default
#          0043: the men-only 4 v 3 of 7 pieces (89.4 M positions with its twin), whose
#          captures lead into the complete 6-piece set and whose promotions, into materials
#          with a king that are not linked, count as unknown (seed 000, 2.3), as the 9-piece
#          builds' do.
#   ROUNDS pairs of runs (A B); default 2.   THREADS: default 2.
#   PAUSE_PATTERN  a process (pgrep -f) to pause with SIGSTOP during each timed run and
#          resume right after (a trap resumes it on any exit); default the long build of
#          /work/egdb-data; empty: pause nothing.
#
# Times: the wall time of the build and the CPU time of its process (start-up, which maps the
# complete files, included), and the builder's own split (first pass, later passes, write).
set -euo pipefail

A=${1:?usage: egdb_partial_speed.sh BASE_BIN NEW_BIN}
B=${2:?usage: egdb_partial_speed.sh BASE_BIN NEW_BIN}
DB=${DB:-/work/egdb-data}
PIECES=${PIECES:-6}
WORK=${WORK:-/tmp/egdb-partial-speed}
MATS=${MATS:-0043}
ROUNDS=${ROUNDS:-2}
THREADS=${THREADS:-2}
PAUSE_PATTERN=${PAUSE_PATTERN-egdb build --pieces}

. "$(dirname "$0")/egdb_bench_lib.sh"
bench_pause_setup "$PAUSE_PATTERN"

# ---- the scratch folder: links to the complete slices of up to PIECES pieces -------
mkdir -p "$WORK/ref"
link_complete "$DB" "$WORK" "$PIECES"
n=$LINKED
if [ "$n" -eq 0 ]; then
    echo "egdb_partial_speed: $DB holds no complete slice of up to $PIECES pieces" >&2
    exit 1
fi

echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'); paused during runs: ${PAUSED:-nothing}"
echo "partial materials $MATS over $n complete slices of 1-$PIECES pieces; $THREADS threads; $ROUNDS rounds of A=$A B=$B"
declare -A wall cpu
for r in $(seq 1 "$ROUNDS"); do
    for side in A B; do
        bin=$A
        [ "$side" = B ] && bin=$B
        rm -f "$WORK"/*.pwl "$WORK"/*.pwl.tmp "$WORK/partial-log.tsv"
        pause
        /usr/bin/time -f '%e %U %S' -o "$WORK/run.time" \
            "$bin" egdb build --only "$MATS" --dir "$WORK" --threads "$THREADS" \
            >"$WORK/run.out" 2>"$WORK/run.err" || {
            resume
            echo "egdb_partial_speed: $bin failed:" >&2
            tail -n 5 "$WORK/run.err" >&2
            exit 1
        }
        resume
        read -r el us sy < <(tail -n 1 "$WORK/run.time")
        wall[$side]=$(awk -v x="${wall[$side]:-0}" -v y="$el" 'BEGIN { print x + y }')
        cpu[$side]=$(awk -v x="${cpu[$side]:-0}" -v u="$us" -v s="$sy" 'BEGIN { print x + u + s }')
        split=$(grep -m1 'first pass' "$WORK/run.out" | sed 's/^ *//')
        positions=$(awk -F '\t' '{ n += $2 } END { print n }' "$WORK/partial-log.tsv")
        echo "round $r $side: $positions positions, $el s wall, $us s user, $sy s sys ($split)"
        for f in "$WORK"/*.pwl; do
            ref="$WORK/ref/$(basename "$f")"
            if [ "$r" = 1 ] && [ "$side" = A ]; then
                cp "$f" "$ref"
            elif ! cmp -s "$f" "$ref"; then
                echo "egdb_partial_speed: $(basename "$f") of run $r $side differs from run 1 A" >&2
                exit 1
            fi
        done
    done
done
echo "bytes: every .pwl file identical across all runs"
awk -v wa="${wall[A]}" -v wb="${wall[B]}" -v ca="${cpu[A]}" -v cb="${cpu[B]}" 'BEGIN {
    printf "wall: A %.1f s, B %.1f s, B/A speed = %.2fx\n", wa, wb, wa / wb
    printf "CPU:  A %.1f s, B %.1f s, B/A speed = %.2fx\n", ca, cb, ca / cb }'
