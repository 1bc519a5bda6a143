#!/bin/sh
# bench/level-2-8.sh DB [OUT] [BUDGET] [CHECKERS] - the level ladder with
# the 2-7 databases and with everything DB holds (issue 40's targets), in
# one run of measurements on the same positions (openings/level.tsv).
# LADDER=frontier runs the frontier ladder instead (openings/ladder.tsv,
# rungs 8, 10 and 12, as results/frontier-2-7 was run; RUNGS="8 10 12 14"
# adds more): state proofs/frontier-2-8, default OUT results/frontier-2-8.
#
# DB is one folder with the complete 1-7 set, the whole 4v4 split of 8
# pieces and, beside them, the partial-information files (.pwl) of 9 and
# 10 pieces (bench/partial-9-10.sh makes such a folder of links). The 2-7
# runs read the same folder with --pieces 7, which loads neither the
# 8-piece files nor the partial ones.
#
# The two sets alternate rung by rung (10, 12, 14, 16: 2-7 first, then
# the full set), so that a slow stretch of the machine falls on both.
# Every rung is tried (--all), 2 local workers, jobs of 5 s, BUDGET a
# position (default 60s). Proof states go to proofs/level-2-8/{2-7,full}.
# Run again after a stop, it tries only the rungs never tried (--untried),
# so each has one budget; a rung cut off by the stop has no budget
# recorded and is tried again, resuming its proof state. Writes OUT/2-7/ and OUT/full/ (frontier.tsv, .md, .svg,
# as `frontier run` writes them) and OUT/README.md, the two side by side
# by piece count with the targets (what an earlier README holds
# from a line "## Notes" on is kept). Default OUT: results/level-2-8.
#
# Takes about 2 x 46 positions x (BUDGET + start and check): 1.5-2 hours
# at 60 s (the frontier ladder: at most 2 x 57 positions, most of the
# lower rungs proved in seconds). Measure on a quiet machine, or say what
# ran beside it.
set -eu
db=$1
ladder=${LADDER:-level}
case $ladder in
level) rungs=${RUNGS:-10 12 14 16} ;;
frontier) rungs=${RUNGS:-8 10 12} ;;
*)
    echo "LADDER must be level or frontier, not $ladder" >&2
    exit 2
    ;;
esac
out=${2:-results/$ladder-2-8}
budget=${3:-60s}
c=${4:-bin/checkers}
state=proofs/$ladder-2-8
mkdir -p "$out/2-7" "$out/full" "$state"
run() { # $1: name, $2: rung, rest: extra options
    name=$1
    rung=$2
    shift 2
    echo "== $(date -u +%H:%M:%S) rung $rung, $name"
    "$c" frontier run --ladder "$ladder" --db "$db" --budget "$budget" --workers 2 --job-time 5 \
        --all --untried --rungs "$rung" --dir "$state/$name" --out "$out/$name" "$@"
}
for rung in $rungs; do
    run 2-7 "$rung" --pieces 7
    run full "$rung"
done

# The distinct positions of each piece count, and how many each set
# proved exactly (status "proved": the checker accepted a proof that
# settles the value). Rungs never tried (status "skipped": the frontier
# ladder's rungs above those run) are left out. Columns of frontier.tsv:
# 4 pieces, 5 fen, 6 status, 7 result, 17 db_pieces.
tally() {
    grep -v '^#' "$1" | awk -F'\t' 'NR > 1 && $5 != "" && $4 > 0 && $6 != "skipped" {
        if (!(($4, $5) in seen)) { seen[$4, $5] = 1; n[$4]++ }
        if ($6 == "proved" && !(($4, $5) in ok)) { ok[$4, $5] = 1; p[$4]++ }
        if ($17 != "") scope = $17
    } END {
        for (k in n) printf "%s\t%d\t%d\t%s\n", k, n[k], p[k] + 0, scope
    }' | sort -n
}
tally "$out/2-7/frontier.tsv" > "$out/.t27"
tally "$out/full/frontier.tsv" > "$out/.tfull"
# What a person wrote under "## Notes" in an earlier README is kept.
notes=""
if [ -f "$out/README.md" ]; then
    notes=$(sed -n '/^## Notes$/,$p' "$out/README.md")
fi
{
    echo "# The $ladder ladder: the 2-7 databases against 2-8 with the partial bounds"
    echo
    echo "This table was written by \`LADDER=$ladder bench/level-2-8.sh $db $out $budget $c\` on"
    echo "$(date -u +%Y-%m-%d) ($(git rev-parse --short HEAD 2>/dev/null || echo '?')) from the two sets' results: 2 local workers,"
    echo "$budget a position, the two sets alternating rung by rung. Each run's command is in its set's"
    echo "frontier.tsv; each set's own report: [2-7](2-7/frontier.md), [full](full/frontier.md). A"
    echo "position counts when the independent checker accepted a proof that settles its value (a draw"
    echo "needs both bounds)."
    echo
    echo "| pieces | positions | exact, 2-7 | exact, $(sed -n 's/.*Databases: \(2-[^ ]*\) pieces.*/\1/p' "$out/full/frontier.md" | head -n 1) | target |"
    echo "| ---: | ---: | ---: | ---: | ---: |"
    awk -F'\t' -v ladder="$ladder" 'NR == FNR { a[$1] = $3; next }
        { t = ladder != "level" ? "-" : $1 == 10 ? "85%" : $1 == 12 ? "60%" : $1 == 14 ? "30%" : $1 == 16 ? "10%" : "-"
          printf "| %s | %d | %d (%.0f%%) | %d (%.0f%%) | %s |\n", $1, $2, a[$1], 100 * a[$1] / $2,
              $3, 100 * $3 / $2, t }' "$out/.t27" "$out/.tfull"
    if [ -n "$notes" ]; then
        echo
        printf '%s\n' "$notes"
    fi
} > "$out/README.tmp"
mv "$out/README.tmp" "$out/README.md"
rm -f "$out/.t27" "$out/.tfull"
cat "$out/README.md"
