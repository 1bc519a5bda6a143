#!/bin/bash
# bench/hard.sh - the manager with two local workers against one solver,
# on the frontier ladder's rungs that are still open (results/frontier.tsv,
# status "open", rungs HARD_RUNGS, default 10): the first HARD_N of them
# (default 6), each run three ways in the same run:
#   solve 60    one `checkers solve` process (one core), 60 s;
#   solve 120   the same with 120 s (the baseline the manager must reach);
#   prove 60    `checkers prove` with 2 local workers (two cores), 60 s,
#               first jobs of HARD_JOB s (default 2) growing to HARD_MAX
#               (default 16).
# A rung counts as proved when the value is settled (win, loss, draw);
# bounds (>=draw, <=draw) are counted apart. Every settled proof of the
# manager is checked again with `proof check --state`.
# Not part of `make bench` (about four minutes a rung): run it by hand.
# Needs the 1-6 piece databases (egdb-data, `make egdb`); HARD_PIECES=N
# opens them to N pieces only (default: all the folder holds).
set -u
C=${CHECKERS:-bin/checkers}
DB=${HARD_DB:-egdb-data}
N=${HARD_N:-6}
RUNGS=${HARD_RUNGS:-10}
JOB=${HARD_JOB:-2}
MAX=${HARD_MAX:-16}
P=()
[ -n "${HARD_PIECES:-}" ] && P=(--pieces "$HARD_PIECES")
T=$(mktemp -d "${TMPDIR:-/tmp}/bench_hard.XXXXXX")
trap 'rm -rf "$T"' EXIT
[ -d "$DB" ] || { echo "bench/hard.sh: no databases in $DB (make egdb)" >&2; exit 1; }
awk -F'\t' -v r=",$RUNGS," 'index(r, "," $3 ",") && $6 == "open" { print $5 }' \
    results/frontier.tsv | head -n "$N" >"$T/fens"
kind() { case "$1" in win | loss | draw) echo exact ;; '>=draw' | '<=draw') echo bound ;; *) echo none ;; esac; }
printf "%-48s %-9s %-9s %-9s %s\n" position solve_60 solve_120 prove_60 checked
i=0
while read -r fen; do
    i=$((i + 1))
    s60=$($C solve --db "$DB" "${P[@]}" --time 60 "$fen" 2>/dev/null | head -n 1 | cut -f 2)
    s120=$($C solve --db "$DB" "${P[@]}" --time 120 "$fen" 2>/dev/null | head -n 1 | cut -f 2)
    S="$T/p$i"
    p60=$($C prove --fen "$fen" --state "$S" --db "$DB" "${P[@]}" --workers 2 --budget 60 --job-time "$JOB" \
        --job-max "$MAX" --quiet 2>/dev/null | head -n 1 | cut -f 2)
    chk=-
    if [ "$(kind "${p60:-unknown}")" != none ]; then
        chk=$($C proof check --state "$S" --db "$DB" 2>/dev/null | head -n 1 | cut -f 2)
    fi
    printf "%-48s %-9s %-9s %-9s %s\n" "$fen" "${s60:-?}" "${s120:-?}" "${p60:-?}" "$chk"
    echo "$(kind "${s60:-x}") $(kind "${s120:-x}") $(kind "${p60:-x}")" >>"$T/kinds"
done <"$T/fens"
awk '{ for (k = 1; k <= 3; k++) { e[k] += $k == "exact"; b[k] += $k == "bound" } }
     END { printf "settled: solve 60 s %d, solve 120 s %d, prove 60 s (2 workers) %d of %d\n", e[1], e[2], e[3], NR;
           printf "bounds only: solve 60 s %d, solve 120 s %d, prove 60 s %d\n", b[1], b[2], b[3] }' "$T/kinds"
