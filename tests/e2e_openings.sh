#!/bin/sh
# End-to-end checks of `checkers openings`: the 174 ballots, the published
# 19 openings matched to ballots by position (move orders and the table's
# '-' for captures included), and bad input. Run by `make test`.
set -u
C=${CHECKERS:-bin/checkers}
. "$(dirname "$0")/lib_e2e.sh"
check "174 ballots" 174 "$($C openings list | grep -vc '^#')"
check "ballot lines start with their number" 174 "$($C openings list | awk -F'\t' '$1 == NR' | wc -l)"
check "barred ballots" 1 "$($C openings list --status barred | awk 'END {print (NR > 0)}')"
check "published: 14 ballot positions" 14 "$($C openings list --published | grep -vc '^#')"
check "published: 5 positions no ballot reaches" 5 "$($C openings list --published | grep -c '^#')"
# Ballot 155 (11-16 24-19 8-11) reaches the position of published opening
# 19 (12-16 24-19 08-12) by another move order.
check "a transposition of the table" 1 \
    "$($C openings show 155 | grep -c 'published (2007 proof, opening 19, 12-16 24-19 08-12): <=Draw')"
check "moves with a capture written as -" "ACF ballot 4 (crossboard)" \
    "$($C openings show '09-13 22-17 13-22' | sed -n 2p)"
check "not a ballot" "not an ACF ballot position" "$($C openings show '12-16 24-19 10-15' | sed -n 2p)"
$C openings show 175 >/dev/null 2>&1
check "no ballot 175" 2 $?
$C openings show '12-16 24-19 10-99' >/dev/null 2>&1
check "illegal move" 2 $?
# Seed lines: written to seeds.tsv in the data directory (a copy here),
# replaced when made again, found by `prove` for the opening's position.
T=$(mktemp -d "${TMPDIR:-/tmp}/e2e_openings.XXXXXX") || exit 1
trap 'rm -rf "$T"' EXIT
cp openings/three-move-ballots.tsv openings/published-19-openings.tsv "$T"/
CHECKERS_OPENINGS=$T $C openings seed 16 --time 1 >/dev/null
check "seed exit" 0 $?
CHECKERS_OPENINGS=$T $C openings seed '12-16 24-19 10-15' --time 1 >/dev/null
check "seed again: one line per opening" 1 "$(grep -vc '^#\|^no' "$T/seeds.tsv")"
check "seed line fields" 7 "$(grep -v '^#\|^no' "$T/seeds.tsv" | awk -F'\t' '{print NF}')"
CHECKERS_OPENINGS=$T $C prove --opening '12-16 24-19 10-15' --state "$T/p" --workers 0 \
    --budget 1 2>"$T/err" >/dev/null
check "prove uses the seed line" 1 "$(grep -c 'seed line from openings/seeds.tsv' "$T/err")"
exit $fail
