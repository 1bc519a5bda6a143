#!/usr/bin/env bash
# bench/prove_vs_solve.sh - `prove` against `solve` on the same positions
# (issue 41, part 1), in one run, one position at a time:
#   solve        checkers solve --db DB --time B FEN
#                (nothing written: df-pn's answer, no certificate)
#   solve+store  checkers solve --db DB --time B --store S FEN
#                (the proof written to a store, as a job's proof is)
#   prove        checkers prove --fen FEN --db DB --state S --workers 2 --budget B
#                (the proof written by the workers, admitted by the manager's
#                independent checker), then `proof check --state S`
# Prints one tab-separated line a position (result and wall seconds of
# each, the check's verdict), then the sums over the positions every
# command settled, and prove's time as a ratio to each solve's.
#
# Settings (environment): CHECKERS (default bin/checkers), DB (databases,
# default build/testdata/egdb5, `make testdata`'s), PIECES (the pieces of
# them used, default 4: the 2-4 databases, which leave these endings
# long), BUDGET seconds a command (default 60), POSITIONS a file of FENs,
# one a line (default: the 40 king endings and issue 41's position, from
# results/prove-endings.md), ROUNDS (default 1), BASE a second program
# whose `prove` runs too, right after the first's, as the same-run
# baseline (its column and prove's ratio to it are added).
# By hand, not in `make bench`: about 15 minutes for the default set.
set -u
C=${CHECKERS:-bin/checkers}
DB=${DB:-build/testdata/egdb5}
PIECES=${PIECES:-4}
B=${BUDGET:-60}
ROUNDS=${ROUNDS:-1}
here=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/prove-vs-solve.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
if [ -n "${POSITIONS:-}" ]; then
    grep -v '^\s*\(#\|$\)' "$POSITIONS" > "$tmp/fens"
else
    # the table's first column, then the issue's position
    sed -n 's/^| \([BW]:[^ |]*\) |.*/\1/p' "$here/results/prove-endings.md" | sort -u > "$tmp/fens"
    grep -qx 'W:W21,28,K32:BK19,K25' "$tmp/fens" || echo 'W:W21,28,K32:BK19,K25' >> "$tmp/fens"
fi
[ -x "$C" ] || { echo "prove_vs_solve: no program $C" >&2; exit 2; }
[ -d "$DB" ] || { echo "prove_vs_solve: no databases in $DB" >&2; exit 2; }
echo "machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(nproc) cores; load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "program: $C ($(cd "$here" && git rev-parse --short HEAD 2>/dev/null || echo '?'))${BASE:+; baseline: $BASE}; databases: $DB up to $PIECES pieces; budget: $B s"
now() { date +%s.%N; }
settled() { case $1 in win | loss | draw) return 0 ;; *) return 1 ;; esac; }
hdr=
[ -n "${BASE:-}" ] && hdr=$(printf '\tprove (BASE)\ts')
printf 'round\tposition\tsolve\ts\tsolve+store\ts\tprove\ts\tcheck%s\n' "$hdr"
s1=0 s2=0 s3=0 n=0 wrong=0 nb=0 sb=0 sc=0
for r in $(seq 1 "$ROUNDS"); do
    while read -r fen; do
        t0=$(now)
        a=$($C solve --db "$DB" --pieces "$PIECES" --time "$B" "$fen" 2>/dev/null | head -n 1 | cut -f 2)
        t1=$(now)
        rm -rf "$tmp/s"
        b=$($C solve --db "$DB" --pieces "$PIECES" --time "$B" --store "$tmp/s" "$fen" 2>/dev/null | head -n 1 | cut -f 2)
        t2=$(now)
        rm -rf "$tmp/p"
        c=$($C prove --fen "$fen" --db "$DB" --pieces "$PIECES" --state "$tmp/p" --workers 2 --budget "$B" --quiet \
            2>/dev/null | head -n 1 | cut -f 2)
        t3=$(now)
        k=-
        if settled "${c:-}"; then
            k=$($C proof check --state "$tmp/p" --db "$DB" 2>/dev/null | head -n 1 | cut -f 2)
        fi
        ta=$(echo "$t1 - $t0" | bc) tb=$(echo "$t2 - $t1" | bc) tc=$(echo "$t3 - $t2" | bc)
        extra=
        if [ -n "${BASE:-}" ]; then
            rm -rf "$tmp/q"
            t4=$(now)
            d=$($BASE prove --fen "$fen" --db "$DB" --pieces "$PIECES" --state "$tmp/q" --workers 2 \
                --budget "$B" --quiet 2>/dev/null | head -n 1 | cut -f 2)
            td=$(echo "$(now) - $t4" | bc)
            extra=$(printf '\t%s\t%.1f' "${d:--}" "$td")
            if settled "${a:-}" && settled "${d:-}" && [ "$d" != "$a" ]; then wrong=$((wrong + 1)); fi
            if settled "${c:-}" && settled "${d:-}"; then
                nb=$((nb + 1)) sb=$(echo "$sb + $td" | bc) sc=$(echo "$sc + $tc" | bc)
            fi
        fi
        printf '%s\t%s\t%s\t%.1f\t%s\t%.1f\t%s\t%.1f\t%s%s\n' "$r" "$fen" "${a:--}" "$ta" "${b:--}" \
            "$tb" "${c:--}" "$tc" "$k" "$extra"
        # answers that disagree, or a settled proof not valid: wrong
        for v in "${b:-}" "${c:-}"; do
            if settled "${a:-}" && settled "$v" && [ "$v" != "$a" ]; then wrong=$((wrong + 1)); fi
        done
        if settled "${c:-}" && [ "$k" != valid ]; then wrong=$((wrong + 1)); fi
        if settled "${a:-}" && settled "${b:-}" && settled "${c:-}"; then
            n=$((n + 1))
            s1=$(echo "$s1 + $ta" | bc) s2=$(echo "$s2 + $tb" | bc) s3=$(echo "$s3 + $tc" | bc)
        fi
    done < "$tmp/fens"
done
printf 'settled by all three: %d; seconds: solve %.1f, solve+store %.1f, prove %.1f\n' "$n" "$s1" "$s2" "$s3"
if [ "$n" -gt 0 ]; then
    printf 'prove / solve: x%.2f; prove / solve+store: x%.2f\n' "$(echo "scale=4; $s3 / $s1" | bc)" \
        "$(echo "scale=4; $s3 / $s2" | bc)"
fi
if [ "$nb" -gt 0 ]; then
    printf 'settled by both proves: %d; seconds: prove %.1f, BASE prove %.1f: x%.2f\n' "$nb" "$sc" "$sb" \
        "$(echo "scale=4; $sc / $sb" | bc)"
fi
echo "disagreements or invalid proofs: $wrong"
[ "$wrong" -eq 0 ]
