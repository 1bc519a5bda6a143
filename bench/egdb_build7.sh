#!/usr/bin/env bash
# bench/egdb_build7.sh - the exact builder's speed on fixed 7-piece materials, a baseline
# binary against a new one in the same run, alternating (A B A B ...), with the bytes compared.
#
# usage: bench/egdb_build7.sh BASE_BIN NEW_BIN
#   BASE_BIN, NEW_BIN  two `checkers` binaries (e.g. a copy of today's bin/checkers and the
#                      one under test)
# environment:
#   DB16      a complete 1-6 piece set (.wld files) to read; default /work/egdb-data. Only
#             read: its files are symlinked into WORK.
#   WORK      scratch folder; default /tmp/egdb-build7. Holds the symlinks, the 7-piece slices
#             built before the targets (built once, by BASE_BIN, and kept) and the targets.
#   TARGETS   materials to time, "KKMM" (black kings, white kings, black men, white men),
#             each with its twin, in build order; default "5200 5110": the kings-only 5 v 2
#             (it needs only the 6-piece databases) and 5 kings and a man against a king
#             (docs/egdb.md, "Build speed"). The first run also builds, with BASE_BIN, every
#             7-piece slice listed before the last target (here 7000, 6100, 4300, 6010).
#   STOP_AFTER  the last slice pair of the targets in build order, as the build names it in
#             its progress ("write NAME pair ..."); default 5110.10.
#   ROUNDS    pairs of runs (A B); default 2.   THREADS: default 2.
#   PAUSE_PATTERN  a process (pgrep -f) to pause with SIGSTOP during each timed run and resume
#             with SIGCONT right after (a trap resumes it on any exit); default the long
#             build ("egdb build --pieces"); empty: pause nothing.
#
# How one material is built alone: `checkers egdb build --pieces 7` keeps every complete
# slice and builds the missing ones in build order. The targets' files are removed before
# each run, so the run builds exactly them; the script stops it with SIGINT as soon as the
# last target pair is being written (the build then finishes that pair and stops before the
# next). Times are the build's own per-slice log (build-log.tsv: index tables, both phases,
# packing, writing), so start-up (mapping the 1-6 set) is not counted.
set -euo pipefail

A=${1:?usage: egdb_build7.sh BASE_BIN NEW_BIN}
B=${2:?usage: egdb_build7.sh BASE_BIN NEW_BIN}
DB16=${DB16:-/work/egdb-data}
WORK=${WORK:-/tmp/egdb-build7}
TARGETS=${TARGETS:-5200 5110}
STOP_AFTER=${STOP_AFTER:-5110.10}
ROUNDS=${ROUNDS:-2}
THREADS=${THREADS:-2}
PAUSE_PATTERN=${PAUSE_PATTERN-egdb build --pieces}

# ---- the process to pause (always resumed), the 1-6 set linked ------------
. "$(dirname "$0")/egdb_bench_lib.sh"
bench_pause_setup "$PAUSE_PATTERN"
link_complete "$DB16" "$WORK" 6
if [ "$LINKED" -lt 4219 ]; then
    echo "egdb_build7: $DB16 holds $LINKED slices of 1-6 pieces, not the 4219 of a complete set" >&2
    exit 1
fi

# The twin of a material: KKMM -> the kings swapped, the men swapped.
twin() { echo "${1:1:1}${1:0:1}${1:3:1}${1:2:1}"; }

remove_targets() {
    for t in $TARGETS; do
        rm -f "$WORK/$t".*.wld "$WORK/$(twin "$t")".*.wld "$WORK/$t".*.cwl "$WORK/$(twin "$t")".*.cwl
    done
    rm -f "$WORK/build-log.tsv"
}

# Runs one build of the targets with binary $1; leaves build-log.tsv.
run_build() {
    local bin=$1 err=$WORK/run.err
    : >"$err"
    /usr/bin/time -f '%e %U %S' -o "$WORK/run.time" \
        "$bin" egdb build --pieces 7 --dir "$WORK" --threads "$THREADS" >/dev/null 2>"$err" &
    local pid=$!
    # Poll for the last target pair's write line (a bench, not a test: a poll is fine).
    while kill -0 "$pid" 2>/dev/null; do
        if grep -q "^write $STOP_AFTER " "$err"; then
            # The build is the child of /usr/bin/time, which ignores SIGINT.
            pkill -INT -P "$pid" || true
            break
        fi
        sleep 0.02
    done
    wait "$pid" || true
    if ! grep -q "^write $STOP_AFTER " "$err"; then
        echo "egdb_build7: $bin did not reach $STOP_AFTER:" >&2
        tail -n 5 "$err" >&2
        exit 1
    fi
}

# Positions and seconds of material $1 (and its twin) in build-log.tsv.
material_rate() {
    awk -v a="$1" -v b="$(twin "$1")" -F '\t' '
        substr($1, 1, 4) == a || substr($1, 1, 4) == b { n += $2; s += $3 }
        END { printf "%d %.3f\n", n, s }' "$WORK/build-log.tsv"
}

# ---- first: the slices before the targets, once, by the baseline ----------
if [ ! -e "$WORK/.prereq-done-${TARGETS// /-}" ]; then
    echo "building the 7-piece slices that precede the targets (once, with $A) ..."
    run_build "$A"
    touch "$WORK/.prereq-done-${TARGETS// /-}"
fi

echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'); paused during runs: ${PAUSED:-nothing}"
echo "targets: $TARGETS (with twins), $THREADS threads, $ROUNDS rounds of A=$A B=$B"
mkdir -p "$WORK/ref"
declare -A pos sec cpu
for r in $(seq 1 "$ROUNDS"); do
    for side in A B; do
        bin=$A
        [ "$side" = B ] && bin=$B
        remove_targets
        pause
        t0=$(date +%s.%N)
        run_build "$bin"
        t1=$(date +%s.%N)
        resume
        line="round $r $side:"
        for t in $TARGETS; do
            read -r n s < <(material_rate "$t")
            pos[$side,$t]=$(( ${pos[$side,$t]:-0} + n ))
            sec[$side,$t]=$(awk -v x="${sec[$side,$t]:-0}" -v y="$s" 'BEGIN { print x + y }')
            line="$line  $t $n positions $s s ($(awk -v n="$n" -v s="$s" 'BEGIN { printf "%.2f", n / s / 1e6 }') M/s)"
        done
        read -r el us sy < <(tail -n 1 "$WORK/run.time")
        cpu[$side]=$(awk -v x="${cpu[$side]:-0}" -v u="$us" -v s="$sy" 'BEGIN { print x + u + s }')
        line="$line  [process: $(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }') s wall, $us s user, $sy s sys]"
        echo "$line"
        # The bytes: every target file against the first run's.
        for t in $TARGETS; do
            for f in "$WORK/$t".*.wld "$WORK/$(twin "$t")".*.wld; do
                ref="$WORK/ref/$(basename "$f")"
                if [ "$r" = 1 ] && [ "$side" = A ]; then
                    cp "$f" "$ref"
                elif ! cmp -s "$f" "$ref"; then
                    echo "egdb_build7: $(basename "$f") of run $r $side differs from run 1 A" >&2
                    exit 1
                fi
            done
        done
    done
done
echo "bytes: every target .wld file identical across all runs"
for t in $TARGETS; do
    ra=$(awk -v n="${pos[A,$t]}" -v s="${sec[A,$t]}" 'BEGIN { print n / s }')
    rb=$(awk -v n="${pos[B,$t]}" -v s="${sec[B,$t]}" 'BEGIN { print n / s }')
    awk -v t="$t" -v ra="$ra" -v rb="$rb" 'BEGIN {
        printf "%s (+twin): A %.2f M positions/s, B %.2f M positions/s, B/A = %.2fx\n", t, ra / 1e6, rb / 1e6, rb / ra }'
done
na=0; sa=0; nb=0; sb=0
for t in $TARGETS; do
    na=$((na + pos[A,$t])); nb=$((nb + pos[B,$t]))
    sa=$(awk -v x="$sa" -v y="${sec[A,$t]}" 'BEGIN { print x + y }')
    sb=$(awk -v x="$sb" -v y="${sec[B,$t]}" 'BEGIN { print x + y }')
done
awk -v na="$na" -v sa="$sa" -v nb="$nb" -v sb="$sb" 'BEGIN {
    printf "all targets: A %.2f M positions/s, B %.2f M positions/s, B/A = %.2fx\n", na / sa / 1e6, nb / sb / 1e6, (nb / sb) / (na / sa) }'
awk -v na="$na" -v ca="${cpu[A]}" -v nb="$nb" -v cb="${cpu[B]}" 'BEGIN {
    printf "CPU time of the whole processes (start-up included): A %.1f s, B %.1f s, B/A speed = %.2fx\n", ca, cb, ca / cb }'
