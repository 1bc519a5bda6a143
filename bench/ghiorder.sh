#!/bin/bash
# bench/ghiorder.sh - the two orders of searches under repetition
# (prv_opts.ghi, `checkers solve --ghi`) on level positions, by positions
# searched (not time), so that the figures do not depend on the load:
#   A  the first frontier ladder's rungs of 8 and 10 pieces whose material
#      is level (results/frontier.tsv: as many men and as many kings a side);
#   B  the level ladder's ten-piece rungs (openings/level.tsv);
#   C  the level ladder's twelve-piece rungs.
# Each distinct position is solved for its value (`solve --goal value`,
# its proof written to a store and checked by `proof check`) once per mode in GHI_MODES (default "optimistic safe auto"), with
# GHI_NODES df-pn positions (default 10,000,000, about 3 s of one core)
# and the databases of GHI_PIECES pieces (default 6) in GHI_DB (default
# egdb-data). Prints one row per position and mode, then per set and mode
# the exact values, the bounds, and the positions searched in all.
# Not part of `make bench`: run it by hand (about a minute a mode per set
# at the default budget).
set -u
C=${CHECKERS:-bin/checkers}
DB=${GHI_DB:-egdb-data}
NODES=${GHI_NODES:-10000000}
PIECES=${GHI_PIECES:-6}
MODES=${GHI_MODES:-optimistic safe auto}
SETS=${GHI_SETS:-A B C}
[ -d "$DB" ] || { echo "bench/ghiorder.sh: no databases in $DB (make egdb)" >&2; exit 1; }
T=$(mktemp -d "${TMPDIR:-/tmp}/bench_ghi.XXXXXX")
trap 'rm -rf "$T"' EXIT
# level: as many men and as many kings on each side
level='function cnt(s, k,   a, n, i, c) { n = split(s, a, ","); c = 0
           for (i = 1; i <= n; i++) if ((substr(a[i], 1, 1) == "K") == k && a[i] != "") c++; return c }
       function lv(f,   p, w, b) { split(f, p, ":"); w = substr(p[2], 2); b = substr(p[3], 2)
           return cnt(w, 0) == cnt(b, 0) && cnt(w, 1) == cnt(b, 1) }'
awk -F'\t' "$level"' !/^#/ && ($3 == 8 || $3 == 10) && $5 != "-" && lv($5) { print $5 }' \
    results/frontier.tsv | awk '!s[$0]++' >"$T/A"
awk -F'\t' '!/^#/ && $3 == 10 && $6 != "-" { print $6 }' openings/level.tsv | awk '!s[$0]++' >"$T/B"
awk -F'\t' '!/^#/ && $3 == 12 && $6 != "-" { print $6 }' openings/level.tsv | awk '!s[$0]++' >"$T/C"
printf "%-3s %-10s %-44s %-8s %12s %8s\n" set mode position result nodes seconds
for s in $SETS; do
    while read -r fen; do
        for m in $MODES; do
            rm -rf "$T/store"
            out=$($C solve --db "$DB" --pieces "$PIECES" --nodes "$NODES" --ghi "$m" --store "$T/store" \
                --json "$fen" 2>/dev/null)
            res=$(printf '%s' "$out" | sed -n 's/.*"result":"\([^"]*\)".*/\1/p')
            # every proof written is checked from scratch; a refused one is a bug
            if [ -n "$res" ] && [ "$res" != unknown ] &&
                ! $C proof check --store "$T/store" --db "$DB" --pieces "$PIECES" "$fen" >/dev/null 2>&1; then
                echo "bench/ghiorder.sh: the checker REFUSES the $m proof of $fen ($res)" >&2
                res="$res-REFUSED"
            fi
            nod=$(printf '%s' "$out" | sed -n 's/.*"fen":"[^"]*","result":"[^"]*","bound":"[^"]*","complete":[a-z]*,"nodes":\([0-9]*\).*/\1/p')
            sec=$(printf '%s' "$out" | sed -n 's/.*"expanded":[0-9]*,"seconds":\([0-9.]*\).*/\1/p')
            printf "%-3s %-10s %-44s %-8s %12s %8s\n" "$s" "$m" "$fen" "${res:-?}" "${nod:-?}" "${sec:-?}" | tee -a "$T/rows"
        done
    done <"$T/$s"
done
echo
awk '{ k = $1 " " $2; n[k]++; nodes[k] += $5; sec[k] += $6
       if ($4 == "win" || $4 == "loss" || $4 == "draw") e[k]++; else if ($4 == ">=draw" || $4 == "<=draw") b[k]++ }
     END { printf "%-3s %-10s %9s %6s %6s %14s %9s\n", "set", "mode", "positions", "exact", "bounds", "nodes", "seconds"
           for (k in n) { split(k, x, " "); printf "%-3s %-10s %9d %6d %6d %14d %9.1f\n", x[1], x[2], n[k], e[k], b[k], nodes[k], sec[k] } }' \
    "$T/rows" | sort
