#!/bin/bash
# bench/dfpnrate.sh - df-pn's speed against a baseline binary, in the same
# run, on level positions (the level ladder's rungs, openings/level.tsv):
# for each of the first RATE_N positions (default 6) of each piece count in
# RATE_PIECES (default "10 12"), each question (`solve --goal draw`, then
# `--goal win`) is searched to RATE_NODES df-pn positions (default
# 5,000,000) by the baseline (RATE_BASE, a `checkers` binary: required) and
# by CHECKERS (default bin/checkers), one after the other, RATE_PASSES times
# (default 2), alternating which goes first. Time is CPU time (user + system)
# of the whole process, so another job on the machine changes it less than
# it would change wall time.
#
# No proof is written (no --store): the answers are the solvers' own,
# compared only with each other; what is proved is measured, and checked,
# by the ladders and bench/endings.c.
# With the same node budget a search is deterministic, so a change that
# only makes the search faster must give the same result and the same
# counts: each row shows both, and "same" or "DIFFERENT". RATE_SAME=1
# (default) makes any difference exit 1; RATE_SAME=0 compares binaries
# whose search differs (the ratio is then of time, not of like work).
#
# Baseline binary: build the revision to compare with in a worktree, e.g.
#   git worktree add /tmp/base REV && make -C /tmp/base && RATE_BASE=/tmp/base/bin/checkers
# Needs the 1-6 databases (egdb-data; RATE_DB, opened to RATE_DBPIECES=6).
# Not part of `make bench` (it needs a second binary): run it by hand.
set -u
C=${CHECKERS:-bin/checkers}
B=${RATE_BASE:?bench/dfpnrate.sh: set RATE_BASE to the baseline checkers binary}
DB=${RATE_DB:-egdb-data}
DBP=${RATE_DBPIECES:-6}
N=${RATE_N:-6}
NODES=${RATE_NODES:-5000000}
PASSES=${RATE_PASSES:-2}
SAME=${RATE_SAME:-1}
PIECES=${RATE_PIECES:-10 12}
[ -d "$DB" ] || { echo "bench/dfpnrate.sh: no databases in $DB (make egdb)" >&2; exit 1; }
[ -x "$B" ] || { echo "bench/dfpnrate.sh: no baseline binary at $B" >&2; exit 1; }
T=$(mktemp -d "${TMPDIR:-/tmp}/bench_rate.XXXXXX")
trap 'rm -rf "$T"' EXIT
for p in $PIECES; do
    awk -F'\t' -v p="$p" '!/^#/ && $3 == p && $6 != "-" { print $6 }' openings/level.tsv |
        awk '!s[$0]++' | head -n "$N"
done | awk '!s[$0]++' >"$T/fens"

# one(BIN, GOAL, FEN): prints "result nodes cpu_seconds"
one() {
    local out cpu
    TIMEFORMAT='%U %S'
    { time "$1" solve --db "$DB" --pieces "$DBP" --nodes "$NODES" --goal "$2" "$3" >"$T/out" 2>&1; } 2>"$T/time"
    cpu=$(awk '{ printf "%.3f", $1 + $2 }' "$T/time")
    out=$(awk 'NR == 1 { split($0, f, "\t"); r = f[2] } /^nodes:/ { n = $2 } END { print r, n }' "$T/out")
    echo "$out $cpu"
}

printf "%-46s %-5s %-8s %11s %9s %9s %s\n" position goal result nodes base_s new_s same
diff=0
for pass in $(seq "$PASSES"); do
    while read -r fen; do
        for g in draw win; do
            if [ $((pass % 2)) -eq 1 ]; then
                read -r rb nb tb <<<"$(one "$B" "$g" "$fen")"
                read -r rn nn tn <<<"$(one "$C" "$g" "$fen")"
            else
                read -r rn nn tn <<<"$(one "$C" "$g" "$fen")"
                read -r rb nb tb <<<"$(one "$B" "$g" "$fen")"
            fi
            s=same
            if [ "$rb" != "$rn" ] || [ "$nb" != "$nn" ]; then
                s="DIFFERENT (base $rb $nb)"
                diff=$((diff + 1))
            fi
            printf "%-46s %-5s %-8s %11s %9s %9s %s\n" "$fen" "$g" "$rn" "$nn" "$tb" "$tn" "$s"
            echo "$pass $nb $tb $nn $tn" >>"$T/rows"
        done
    done <"$T/fens"
done
awk -v passes="$PASSES" '
    { nb[$1] += $2; tb[$1] += $3; nn[$1] += $4; tn[$1] += $5 }
    END {
        for (p = 1; p <= passes; p++) {
            printf "pass %d: base %.1f s (%.2f M positions a CPU second), new %.1f s (%.2f M): x%.2f\n",
                p, tb[p], nb[p] / tb[p] / 1e6, tn[p], nn[p] / tn[p] / 1e6, tb[p] / tn[p]
            TB += tb[p]; TN += tn[p]
        }
        printf "all passes: base %.1f s, new %.1f s: x%.2f (base time / new time)\n", TB, TN, TB / TN
    }' "$T/rows"
if [ "$diff" -gt 0 ]; then
    echo "$diff rows differ in result or positions searched"
    [ "$SAME" = 1 ] && exit 1
fi
exit 0
