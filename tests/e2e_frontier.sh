#!/bin/bash
# End-to-end checks of `checkers compare` and `checkers frontier` with the
# 1-5 piece test databases: a short proof of a published opening reached
# by another move order, compared with the table; a ladder made and read
# back; rungs proved, checked, resumed and reported; bad input refused
# with the file and line named; the level ladder made twice (the same
# file), and run with a position that is the rung of two rows (proved
# once). Run by `make test` (about a minute).
set -u
C=${CHECKERS:-bin/checkers}
C=$(realpath "$C")
DB=$(realpath "${CHECKERS_TEST_DB:-build/testdata/egdb5}")
. "$(dirname "$0")/lib_e2e.sh"
T=$(mktemp -d "${TMPDIR:-/tmp}/e2e_frontier.XXXXXX") || exit 1
trap '[ -n "${KEEP:-}" ] || rm -rf "$T"' EXIT

# ---- compare -------------------------------------------------------------
# Published opening 19 is 12-16 24-19 08-12; ballot 155 reaches it by
# another move order.
$C prove --opening '11-16 24-19 8-11' --goal '>=draw' --state "$T/o16" --db "$DB" \
    --workers 1 --budget 3 --job-time 1 --quiet >/dev/null 2>"$T/prove.err"
check "a short proof stops at its budget" 1 $?
$C compare --state "$T/o16" --db "$DB" --out "$T/res" >"$T/cmp.out" 2>"$T/cmp.err"
check "compare exit" 0 $?
check "19 table rows starting | N |" 19 "$(grep -c '^| [0-9][0-9]* |' "$T/res/compare-19.md")"
row=$(grep '^| 19 |' "$T/res/compare-19.md")
check "row 19: the published value" 1 "$(echo "$row" | grep -c '| <=Draw | 266924 | 49 |')"
check "row 19: ours unresolved, open" 1 "$(echo "$row" | grep -c '| unresolved | open |')"
check "row 19: root pn / dn" 1 "$(echo "$row" | grep -Ec '\| [0-9]+ / [0-9]+ \|')"
check "other rows: not run" 18 "$(grep -c '| not run |' "$T/res/compare-19.md")"
check "csv: header and 19 rows" 20 "$(wc -l <"$T/res/compare-19.csv")"
check "csv: row 19 has its state" 1 "$(grep -c "^19,.*,$T/o16,>=draw,unresolved,open," "$T/res/compare-19.csv")"
check "svg written" 1 "$(grep -c '</svg>' "$T/res/compare-19.svg")"
check "no row CONTRADICTS" 0 "$(grep -c '| CONTRADICTS |' "$T/res/compare-19.md")"

# A proof of a position that is not one of the 19 openings.
$C prove --fen 'B:W30,31,K19:B6,K12' --state "$T/small" --db "$DB" --pieces 4 --workers 1 \
    --job-nodes 3000 --quiet >/dev/null 2>&1
check "a small proof" 0 $?
# resumed with databases of another count: refused, not reported as theirs
$C prove --state "$T/small" --db "$DB" --pieces 5 --workers 1 --quiet >/dev/null 2>"$T/err"
check "prove --pieces 5 on a 2-4 proof: exit 2" 2 $?
check "prove --pieces 5 on a 2-4 proof: says so" 1 \
    "$(grep -c 'rests on the 4-piece databases, and --pieces 5' "$T/err")"
$C compare --state "$T/small" --db "$DB" --out "$T/res2" >/dev/null 2>"$T/err"
check "compare: not an opening, exit 2" 2 $?
check "compare: says so" 1 "$(grep -c 'not the position of any of the 19' "$T/err")"
$C prove --opening '12-16 24-19 8-12' --goal '>=draw' --state "$T/o16b" --db "$DB" \
    --workers 0 --budget 1 --quiet >/dev/null 2>&1
check "a second proof of opening 19 (stopped)" 1 $?
$C compare --state "$T/o16" "$T/o16b" --db "$DB" --out "$T/res2" >/dev/null 2>"$T/err"
check "compare: two proofs of one opening, exit 2" 2 $?
check "compare: says so" 1 "$(grep -c 'both prove opening 19' "$T/err")"
$C compare --db "$DB" >/dev/null 2>&1
check "compare: no --state, exit 2" 2 $?
$C compare --state "$T/nothing" --db "$DB" --out "$T/res2" >/dev/null 2>"$T/err"
check "compare: no proof there, exit 2" 2 $?

# ---- frontier ------------------------------------------------------------
O=$T/openings
mkdir -p "$O"
cp openings/three-move-ballots.tsv openings/published-19-openings.tsv "$O"/
CHECKERS_OPENINGS=$O $C frontier run --db "$DB" --dir "$T/fs" --out "$T/fo" >/dev/null 2>"$T/err"
check "frontier run: no ladder, exit 2" 2 $?
check "frontier run: says how to make it" 1 "$(grep -c 'frontier ladder' "$T/err")"
CHECKERS_OPENINGS=$O $C frontier ladder --db "$DB" --depth 2 --plies 30 >"$T/lad.out" 2>&1
check "frontier ladder exit" 0 $?
check "ladder: one line per opening" 19 "$(grep -c '^opening' "$T/lad.out")"
check "ladder: rungs for every opening (30 plies reach 18 pieces)" 19 \
    "$(awk -F'\t' '$3 == 18' "$O/ladder.tsv" | wc -l)"
# the shipped ladder, for the runs below
cp openings/ladder.tsv "$O"/
F="$C frontier run --db $DB --dir $T/fs --out $T/fo --workers 1 --job-time 1"
CHECKERS_OPENINGS=$O $F --openings 2 --rungs 8 --budget 3 >"$T/f1.out" 2>&1
check "frontier run exit" 0 $?
tsv=$T/fo/frontier.tsv
check "tsv: six rungs of opening 2" 6 "$(awk -F'\t' '$1 == 2' "$tsv" | wc -l)"
st=$(awk -F'\t' '$1 == 2 && $3 == 8 {print $6}' "$tsv")
case $st in proved | open) r=1 ;; *) r=0 ;; esac
check "rung 8 proved or open ($st)" 1 "$r"
if [ "$st" = proved ]; then
    check "a proved rung is checked valid" valid "$(awk -F'\t' '$1 == 2 && $3 == 8 {print $8}' "$tsv")"
    $C proof check --state "$T/fs/02-08" --db "$DB" >/dev/null
    check "proof check --state on the rung" 0 $?
fi
check "rungs not asked for: skipped" 5 "$(awk -F'\t' '$1 == 2 && $6 == "skipped"' "$tsv" | wc -l)"
check "report: the by-piece row of 8" 1 "$(grep -c '^| 8 | 1 | [01] |' "$T/fo/frontier.md")"
check "report: svg" 1 "$(grep -c '</svg>' "$T/fo/frontier.svg")"
check "report: the command" 1 "$(grep -c 'checkers frontier run --db' "$T/fo/frontier.md")"
if [ "$st" = open ]; then
    CHECKERS_OPENINGS=$O $F --openings 2 --rungs 8 --budget 2 >/dev/null 2>&1
    check "a second run resumes the rung: budget 3 + 2" 5 \
        "$(awk -F'\t' '$1 == 2 && $3 == 8 {print $11}' "$tsv")"
    check "the second run resumed the same state (time over both runs > 4 s)" 1 \
        "$(awk -F'\t' '$1 == 2 && $3 == 8 {print ($10 > 4)}' "$tsv")"
    CHECKERS_OPENINGS=$O $F --openings 2 --rungs 8 --budget 2 --untried >/dev/null 2>&1
    check "--untried leaves a tried rung alone" 5 \
        "$(awk -F'\t' '$1 == 2 && $3 == 8 {print $11}' "$tsv")"
fi
$C frontier report --out "$T/fo" >/dev/null
check "frontier report exit" 0 $?
# Climbing: every rung of opening 5 with a 1 s budget; above the first rung
# not proved, every rung is skipped (and never started).
CHECKERS_OPENINGS=$O $F --openings 5 --budget 1 >/dev/null 2>&1
check "climbing run exit" 0 $?
check "climbing: rungs above the first unproved one are skipped" ok "$(awk -F'\t' '
    $1 == 5 { if (seen && $6 != "skipped") bad = 1; if ($6 != "proved") seen = 1 }
    END { print (seen && !bad) ? "ok" : "bad" }' "$tsv")"
first=$(awk -F'\t' '$1 == 5 && $6 != "proved" {print $3; exit}' "$tsv")
above=$((first + 2))
check "climbing: no state for the rung above ($above)" 0 "$(ls -d "$T"/fs/05-* | grep -c "05-$above\$")"
if [ "$above" -le 18 ]; then
    CHECKERS_OPENINGS=$O $F --openings 5 --rungs "$above" --all --budget 1 >/dev/null 2>&1
    check "--all: the rung above is tried" 1 "$(awk -F'\t' -v r="$above" \
        '$1 == 5 && $3 == r && ($6 == "open" || $6 == "proved")' "$tsv" | wc -l)"
fi
CHECKERS_OPENINGS=$O $F --openings 0 >/dev/null 2>&1
check "bad --openings, exit 2" 2 $?
CHECKERS_OPENINGS=$O $F --rungs 9 >/dev/null 2>&1
check "no rung 9, exit 2" 2 $?
CHECKERS_OPENINGS=$O $F --budget x >/dev/null 2>&1
check "bad --budget, exit 2" 2 $?
# a damaged ladder: a line cut short no longer reaches its FEN
awk -F'\t' 'BEGIN {OFS = "\t"} !/^#/ && $1 == 3 && $3 == 18 {sub(/ [^ ]*$/, "", $7)} {print}' \
    openings/ladder.tsv >"$O/ladder.tsv"
CHECKERS_OPENINGS=$O $F --openings 3 >/dev/null 2>"$T/err"
check "damaged ladder, exit 2" 2 $?
check "damaged ladder: file and line named" 1 "$(grep -c 'ladder.tsv, line [0-9]*: the line' "$T/err")"
cp openings/ladder.tsv "$O"/
# a ladder row under the wrong opening number
awk -F'\t' 'BEGIN {OFS = "\t"} !/^#/ && $1 == 4 && $3 == 18 {next} !/^#/ && $1 == 3 && $3 == 18 {$1 = 4} {print}' \
    openings/ladder.tsv >"$O/ladder.tsv"
CHECKERS_OPENINGS=$O $F --openings 3 >/dev/null 2>"$T/err"
check "ladder row of another opening, exit 2" 2 $?
check "ladder row of another opening: named" 1 "$(grep -c 'not published opening 4' "$T/err")"
cp openings/ladder.tsv "$O"/
# damaged results tables: a short row, a rung that does not exist, a row twice
cp "$tsv" "$T/good.tsv"
printf 'no\theader\n1\t2\t3\n' >"$tsv"
$C frontier report --out "$T/fo" >/dev/null 2>"$T/err"
check "damaged frontier.tsv, exit 2" 2 $?
check "damaged frontier.tsv: line named" 1 "$(grep -c 'frontier.tsv, line 2' "$T/err")"
awk -F'\t' 'BEGIN {OFS = "\t"} $1 == 2 && $3 == 10 {$3 = 9} {print}' "$T/good.tsv" >"$tsv"
$C frontier report --out "$T/fo" >/dev/null 2>"$T/err"
check "frontier.tsv with rung 9, exit 2" 2 $?
check "frontier.tsv with rung 9: named" 1 "$(grep -c 'rung 9: no such rung' "$T/err")"
awk -F'\t' '{print} $1 == 2 && $3 == 10 {print}' "$T/good.tsv" >"$tsv"
$C frontier report --out "$T/fo" >/dev/null 2>"$T/err"
check "frontier.tsv with a row twice, exit 2" 2 $?
check "frontier.tsv with a row twice: named" 1 "$(grep -c 'a second row' "$T/err")"
cp "$T/good.tsv" "$tsv"
CHECKERS_OPENINGS=$O $F --openings 2 --db "$T/nodb" >/dev/null 2>"$T/err"
check "frontier run: no databases, exit 2 before any rung" 2 $?

# ---- the level ladder ------------------------------------------------------
# Made twice at a small depth: the same file (the ladder is deterministic).
CHECKERS_OPENINGS=$O $C frontier ladder --level --db "$DB" --depth 3 >"$T/lv1.out" 2>&1
check "level ladder exit" 0 $?
cp "$O/level.tsv" "$T/level1.tsv"
CHECKERS_OPENINGS=$O $C frontier ladder --level --db "$DB" --depth 3 >/dev/null 2>&1
check "level ladder made twice: the same file" 0 "$(cmp -s "$T/level1.tsv" "$O/level.tsv"; echo $?)"
check "level ladder: one line per opening" 19 "$(grep -c '^opening' "$T/lv1.out")"
rows=$(grep -v '^#' "$O/level.tsv" | tail -n +2 | wc -l)
said=$(grep -c '^# opening [0-9]*: no level position' "$O/level.tsv")
check "level ladder: each of the 76 rungs a row or a comment" 76 $((rows + said))
check "level ladder: rows only of 10-16 pieces, even" 0 "$(grep -v '^#' "$O/level.tsv" |
    awk -F'\t' 'NR > 1 && ($4 > $3 || $4 % 2 || $3 < 10 || $3 > 16)' | wc -l)"
# A hand-made level ladder: on this line of opening 4 the first level
# position with at most 14 pieces has 12 (a combination), so it is the
# rung of 14 and of 12.
line='24-19 11-16 18-15 16x23 26x19 7-11 31-26 11x18 22x15 9-14 26-22 14-18 28-24 3-7 24-20 7-11 20-16 11x20 27-24 20x27 32x23x14x7 2x11x18 22x15'
fen='B:W15,19,21,25,29,30:B1,4,6,8,12,13'
printf 'no\topening\trung\tpieces\tply\tfen\tline\n' >"$O/level.tsv"
for r in 12 14; do printf '4\t09-13 23-18 05-09\t%s\t12\t23\t%s\t%s\n' $r "$fen" "$line"; done \
    >>"$O/level.tsv"
# from $T, so that the default folders land there
(cd "$T" && CHECKERS_OPENINGS=$O $C frontier run --ladder level --db "$DB" --openings 4 --all \
    --budget 2 --workers 1 --job-time 1) >"$T/lr.out" 2>&1
check "level run exit" 0 $?
ltsv=$T/results/level-2-5/frontier.tsv
check "level run: results/level-2-5 by default (1-5 databases)" 1 "$(ls "$ltsv" 2>/dev/null | wc -l)"
check "level run: the table names its ladder" 1 "$(grep -c '^# ladder: level$' "$ltsv")"
check "level run: four rows, two of them unreached" "4 2" "$(awk -F'\t' '$1 == 4' "$ltsv" | wc -l) \
$(awk -F'\t' '$1 == 4 && $6 == "unreached"' "$ltsv" | wc -l)"
st=$(awk -F'\t' '$1 == 4 && $3 == 12 {print $6}' "$ltsv")
case $st in proved | open) r=1 ;; *) r=0 ;; esac
check "level run: rung 12 proved or open ($st)" 1 "$r"
check "level run: rung 14 takes rung 12's result" \
    "$(awk -F'\t' '$1 == 4 && $3 == 12 {print $6, $7, $9, $10}' "$ltsv")" \
    "$(awk -F'\t' '$1 == 4 && $3 == 14 {print $6, $7, $9, $10}' "$ltsv")"
check "level run: the position proved once (one state, in proofs/level-2-5)" "04-12" \
    "$(find "$T/proofs/level-2-5" -mindepth 1 -maxdepth 1 -type d -printf '%f\n')"
check "level run: says so" 1 "$(grep -c 'rung 14 (12 pieces): the position of opening 4, rung 12' "$T/lr.out")"
md=$T/results/level-2-5/frontier.md
check "level report: the title" 1 "$(grep -c '^# Level positions' "$md")"
check "level report: one distinct position of 12 pieces" "| 12 | 1 | 1 |" \
    "$(sed -n '/^## By pieces/,/^## By rung/p' "$md" | grep '^| [0-9]' | cut -c1-14)"
check "level report: by rung, 12 and 14" 2 \
    "$(sed -n '/^## By rung/,/^## Every/p' "$md" | grep -Ec '^\| 1[24] \| 1 \| 1 \|')"
$C frontier report --out "$T/results/level-2-5" >/dev/null 2>&1
check "frontier report on it: exit 0" 0 $?
check "frontier report keeps the level ladder's report" 1 "$(grep -c '^# Level positions' "$md")"
# --pieces: the same ladder with the databases of up to 4 pieces only, from the
# 1-5 folder (a 2-6 baseline from a folder that holds the 1-7 set)
(cd "$T" && CHECKERS_OPENINGS=$O $C frontier run --ladder level --db "$DB" --pieces 4 \
    --openings 4 --rungs 12 --budget 2 --workers 1 --job-time 1) >"$T/p4.out" 2>&1
check "level run --pieces 4: exit 0" 0 $?
check "level run --pieces 4: its states in proofs/level-2-4 by default" 1 \
    "$(ls -d "$T"/proofs/level-2-4/04-12 2>/dev/null | wc -l)"
check "level run --pieces 4: results/level-2-4 by default" 1 \
    "$(ls "$T/results/level-2-4/frontier.tsv" 2>/dev/null | wc -l)"
check "level run --pieces 4: the report says 2-4" 1 \
    "$(grep -c 'Databases: 2-4 pieces' "$T/results/level-2-4/frontier.md" 2>/dev/null)"
check "level run --pieces 4: the proof used the 2-4 databases" 4 \
    "$(awk -F'\t' '$1 == 4 && $3 == 12 {print $17}' "$T/results/level-2-4/frontier.tsv")"
# A folder with a split beyond its complete counts (1-4 and 4v1 of 5, as an
# 8-piece folder holds 1-7 and 4v4): its default folders are named by the
# scope, apart from the 2-4 run's, whose states `prove` would refuse.
mkdir "$T/db41"
for f in $(cd "$DB" && ls | awk '/^[0-9][0-9][0-9][0-9]\.[0-9][0-9]\.(cwl|wld)$/ {
    b = substr($0, 1, 1) + substr($0, 3, 1); w = substr($0, 2, 1) + substr($0, 4, 1)
    if (b + w <= 4 || (b + w == 5 && (b == 4 || w == 4))) print }'); do
    ln -s "$(cd "$DB" && pwd)/$f" "$T/db41/$f"
done
(cd "$T" && CHECKERS_OPENINGS=$O $C frontier run --ladder level --db "$T/db41" \
    --openings 4 --rungs 12 --budget 2 --workers 1 --job-time 1) >"$T/p41.out" 2>&1
check "level run over 1-4 + 4v1: exit 0" 0 $?
check "level run over 1-4 + 4v1: states and results named by the scope" "1 1" \
    "$(ls -d "$T"/proofs/level-2-4+4v1/04-12 2>/dev/null | wc -l) $(ls "$T/results/level-2-4+4v1/frontier.tsv" 2>/dev/null | wc -l)"
check "level run over 1-4 + 4v1: the report names the scope" 1 \
    "$(grep -c 'Databases: 2-4+4v1 pieces' "$T/results/level-2-4+4v1/frontier.md" 2>/dev/null)"
CHECKERS_OPENINGS=$O $F --openings 4 --out "$T/results/level-2-5" >/dev/null 2>"$T/err"
check "a frontier run into a level table: exit 2" 2 $?
check "a frontier run into a level table: says so" 1 "$(grep -c 'the results of the level ladder' "$T/err")"
CHECKERS_OPENINGS=$O $C frontier run --ladder level --db "$DB" --rungs 8 --out "$T/lv" >/dev/null 2>"$T/err"
check "level run: no rung 8, exit 2" 2 $?
CHECKERS_OPENINGS=$O $C frontier run --ladder nothing --db "$DB" >/dev/null 2>"$T/err"
check "no such ladder, exit 2" 2 $?
# a level row whose position is not level is refused with its line named
printf 'no\topening\trung\tpieces\tply\tfen\tline\n4\t09-13 23-18 05-09\t14\t13\t22\tW:W19,21,22,25,29,30:B1,4,6,8,12,13,18\t%s\n' \
    "${line% *}" >"$O/level.tsv"
CHECKERS_OPENINGS=$O $C frontier run --ladder level --db "$DB" --out "$T/lv" >/dev/null 2>"$T/err"
check "a row not level, exit 2" 2 $?
check "a row not level: named" 1 "$(grep -c 'level.tsv, line 2: .*not level' "$T/err")"
exit $fail
