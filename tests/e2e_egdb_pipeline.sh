#!/bin/bash
# End-to-end: a pipelined build of one split (egdb/pipeline.h), through the
# command line only, the way an 8-piece build runs, on 5 pieces:
#   1. a build whose peak disk is more than the disk has is refused before
#      it starts, naming both figures (a tmpfs of 16 MB; root only), and so
#      is --estimate; --estimate builds nothing and says the cost;
#   2. `egdb build --pieces 5 --split 4v1 --pipeline` killed with SIGKILL at
#      five random moments (each after a random number of its log lines),
#      then run to the end: its compressed files are byte for byte those of
#      the ordinary 1-5 build ($CHECKERS_TEST_DB), and no 5-piece 2-bit file
#      is left;
#   2b. a unit whose check passed, staged again, is not checked again when
#      its 2-bit files are the same bytes, and is when one byte changed; a
#      stop in its compression keeps the files finished, which are still
#      compared (one byte changed in one: refused); a staged unit whose
#      compressed file was cut short is not done, and is staged again;
#   3. probes: a position of the split answers as the ordinary build, one of
#      another split is "not in the database" (exit 1), never a value;
#      `egdb verify` passes, and `egdb verify --only` of one unit;
#   3b. the split's positions as leaves of proofs (solve, prove with two
#      workers, proof check), and a check with smaller databases: no verdict
#      (exit 2), naming the databases the store records and the folder's;
#   4. one byte changed in a 5-piece compressed file: verify exits 3 naming
#      the file, and so does verify --only of its material, naming the
#      a position the damaged block holds, whose probe exits 3 too;
#   5. a partial (bounds) build over databases kept compressed only writes the
#      same files as over 2-bit files.
# Cost: about a minute on 2 cores.
set -u
. "$(dirname "$0")/lib_e2e.sh"
C=${CHECKERS:-bin/checkers}
DB=${CHECKERS_TEST_DB:-build/testdata/egdb5}
if [ ! -f "$DB/2200.00.cwl" ]; then
    echo "FAIL no test database in $DB (make testdata builds it)"
    exit 1
fi
e2e_setup e2e_egdb_pipeline

# The 1-4 piece build files: what a 5-piece build starts from.
mkdir "$T/base"
ls "$DB" | awk '/^[0-9][0-9][0-9][0-9]\.[0-9][0-9]\.wld$/ {
    if (substr($0, 1, 1) + substr($0, 2, 1) + substr($0, 3, 1) + substr($0, 4, 1) <= 4) print }' |
    (cd "$DB" && xargs cp -t "$T/base")
check "1-4 piece build files copied" 1029 "$(ls "$T/base" | wc -l)"

# ---- 1. not enough disk ------------------------------------------------------
if [ "$(id -u)" -eq 0 ] && mkdir "$T/small" && mount -t tmpfs -o size=16m tmpfs "$T/small" 2>/dev/null; then
    cp "$T"/base/* "$T/small/"
    msg=$($C egdb build --pieces 5 --split 4v1 --dir "$T/small" 2>&1)
    rc=$?
    check "a build the disk cannot hold: exit" 1 $rc
    case "$msg" in
    *"not enough free disk"*"needs about"*"margin"*"are free"*) echo "ok   it names the disk needed and free" ;;
    *) echo "FAIL the refusal names both figures: $msg"; fail=1 ;;
    esac
    check "nothing was built on the small disk" 0 "$(ls "$T/small" | grep -c '\.cwl$')"
    # --estimate (the cluster script's check): the same refusal, exit 1
    msg=$($C egdb build --pieces 5 --split 4v1 --keep-build-files --estimate --dir "$T/small" 2>&1)
    check "--estimate on the small disk: exit" 1 $?
    case "$msg" in
    *"not enough free disk"*) echo "ok   ... it says why" ;;
    *) echo "FAIL ... it says why: $msg"; fail=1 ;;
    esac
    umount "$T/small"
else
    echo "ok   (the disk refusal is checked as root only: skipped)"
fi

# --estimate says the cost and builds nothing (exit 0 when the disk holds it).
cp -r "$T/base" "$T/e"
n0=$(ls "$T/e" | wc -l)
out=$($C egdb build --pieces 5 --split 4v1 --estimate --dir "$T/e" 2>"$T/log.e")
check "--estimate: exit 0, nothing written" "0 $n0" "$? $(ls "$T/e" | wc -l)"
want=$($C egdb units --pieces 5 --split 4v1 2>/dev/null | awk -F '\t' '{ s += $5 } END { print s }')
case "$out" in
*"estimate only, nothing built: $want positions to compute"*) echo "ok   ... the 4v1 positions said ($want)" ;;
*) echo "FAIL ... the 4v1 positions said: $out"; fail=1 ;;
esac
grep -q "disk: .* more at the peak" "$T/log.e" && echo "ok   ... and the disk" || { echo "FAIL ... and the disk"; fail=1; }
rm -rf "$T/e"

# ---- 2. killed at random moments, then resumed --------------------------------
cp -r "$T/base" "$T/p"
RANDOM=$$
for k in 1 2 3 4 5; do
    lines=$((1 + RANDOM % 40))
    $C egdb build --pieces 5 --split 4v1 --pipeline --dir "$T/p" >"$T/out.$k" 2>"$T/log.$k" &
    bp=$!
    pids="$pids $bp"
    # The moment: once the build has logged `lines` lines (or has ended).
    wait_for 300 sh -c "{ [ -f '$T/log.$k' ] && [ \$(wc -l <'$T/log.$k') -ge $lines ]; } || ! kill -0 $bp 2>/dev/null"
    kill -9 $bp 2>/dev/null
    wait $bp 2>/dev/null
    echo "ok   kill $k after $(wc -l <"$T/log.$k") log lines (asked $lines)"
done
$C egdb build --pieces 5 --split 4v1 --pipeline --dir "$T/p" >"$T/out.end" 2>"$T/log.end"
check "the resumed build ends" 0 $?
# The 4v1 slices: four pieces of one colour (kings + men) and one of the other.
four_one() { awk '{ b = substr($0, 1, 1) + substr($0, 3, 1); w = substr($0, 2, 1) + substr($0, 4, 1)
    if ((b == 4 && w == 1) || (b == 1 && w == 4)) print }'; }
same=0 differ=0
for b in $(ls "$T/p" | grep '\.cwl$' | four_one); do
    if cmp -s "$T/p/$b" "$DB/$b"; then same=$((same + 1)); else differ=$((differ + 1)); fi
done
want=$(ls "$DB" | grep '\.cwl$' | four_one | wc -l)
check "compressed 4v1 files identical to the ordinary build's" "$want 0" "$same $differ"
check "no 5-piece build file left" 0 "$(ls "$T/p" | grep '\.wld$' | four_one | wc -l)"
check "every unit marked, and its check recorded" "$(ls "$T/p/units" | grep -c '\.verified$') 0" \
    "$(ls "$T/p/units" | grep -c '\.done$') $(ls "$T/p/units" | grep -vc '\.done$\|\.verified$\|^stages\.tsv$')"
# units/stages.tsv: each unit's stages with their times; every marked unit
# had its compressed files checked in one of the runs: compressed (each
# file read back and compared as it is written), or compared with the
# 2-bit files (files a killed run left, which may be all of them when the
# kill came between the last file and the stage's log line).
check "every marked unit's compression or comparison timed in units/stages.tsv" \
    "$(ls "$T/p/units" | grep -c '\.done$')" \
    "$(awk -F'\t' '($2 == "compress" || $2 == "compare") && NF == 5 { print $1 }' "$T/p/units/stages.tsv" | sort -u | wc -l)"
$C egdb build --pieces 5 --split 4v1 --pipeline --dir "$T/p" >"$T/out.again" 2>&1
check "a third run has nothing to do" 0 $?
grep -q "nothing to do" "$T/out.again" && echo "ok   it says so" || {
    echo "FAIL it says so: $(cat "$T/out.again")"
    fail=1
}

# Where each unit stands (`egdb units --dir`): all ten done here; in a folder
# of the 1-4 files, none; with unit 4100's two 2-bit files of the ordinary
# build copied in, 4100 built (not staged), and with one of 3110's fourteen,
# 3110 started 1/14.
$C egdb units --pieces 5 --split 4v1 --dir "$T/p" >"$T/units.p" 2>"$T/units.p.err"
check "egdb units --dir: every unit done" "0 10 10" \
    "$? $(wc -l <"$T/units.p") $(awk -F'\t' '$6 == "done"' "$T/units.p" | wc -l)"
check "egdb units --dir: the summary" 1 "$(grep -c ': 10 of 10 units done, .*(100.0%)$' "$T/units.p.err")"
mkdir "$T/s" && cp "$T"/base/* "$T/s/" && cp "$DB/4100.00.wld" "$DB/1400.00.wld" "$DB/3110.70.wld" "$T/s/"
$C egdb units --pieces 5 --split 4v1 --dir "$T/s" >"$T/units.s" 2>"$T/units.s.err"
check "egdb units --dir: built, started, the rest not" "built|started 1/14|8" \
    "$(awk -F'\t' '$3 == "4100" { a = $6 } $3 == "3110" { b = $6 } $6 == "-" { n++ } END { print a "|" b "|" n }' "$T/units.s")"
check "egdb units --dir: nothing done" 1 "$(grep -c ': 0 of 10 units done' "$T/units.s.err")"
# Unit 4100 through its stages, as the records and files a build leaves say
# (names only: the records' digests are the build's to match).
state4100() {
    $C egdb units --pieces 5 --split 4v1 --dir "$T/s" 2>/dev/null | awk -F'\t' '$3 == "4100" { print $6 }'
}
mkdir -p "$T/s/units"
printf 'checkers egdb unit checking 1\nchecked\n' >"$T/s/units/4100.checking"
check "egdb units --dir: a record of the check naming no slice" "checking 0/2" "$(state4100)"
printf '1400.00\n4100.00\n4100.00\n3110.70\n4100.0' >>"$T/s/units/4100.checking"
check "egdb units --dir: the slices it names, once each, a torn line not" "checking 2/2" "$(state4100)"
: >"$T/s/units/4100.verified"
check "egdb units --dir: checked, none compressed" "compressing 0/2" "$(state4100)"
cp "$DB/4100.00.cwl" "$T/s/"
check "egdb units --dir: checked, one compressed" "compressing 1/2" "$(state4100)"
cp "$DB/1400.00.cwl" "$T/s/"
check "egdb units --dir: checked, both compressed, not marked" "compressed" "$(state4100)"
rm -rf "$T/s"

# Progress in a log: each unit's verify and compress log their tenths, not the
# first unit's only (an 8-piece unit once ran an hour without a line).
cp -r "$T/base" "$T/q"
$C egdb build --pieces 5 --split 4v1 --pipeline --dir "$T/q" >/dev/null 2>"$T/log.q"
check "an uninterrupted pipelined build ends" 0 $?
units=$(ls "$T/q/units" | grep -c '\.done$')
check "a verify line at 100% for each of its units" "$units" "$(grep -c '^verify 2-bit files: .*(100%)' "$T/log.q")"
check "a compress line at 100% for each of its units" "$units" "$(awk '/^compress .*total 100\.0%/ {
    if (substr($2, 1, 1) + substr($2, 2, 1) + substr($2, 3, 1) + substr($2, 4, 1) == 5) n++ } END { print n + 0 }' "$T/log.q")"
rm -rf "$T/q"

# ---- 2b. a unit whose check passed is not checked again -----------------------
# A stop after a unit's check (its compression, its comparison) used to
# lose the check: 22 minutes for an 8-piece unit. The check's mark
# (units/KKMM.verified: each 2-bit file's size and digest) lets the next
# run skip it when the files are the same bytes, and only then. A cluster
# task (--unit) keeps its 2-bit files, so the unit is staged again by
# removing its mark and compressed files.
cp -r "$T/base" "$T/u"
$C egdb build --pieces 5 --unit 4100 --pipeline --dir "$T/u" >/dev/null 2>"$T/log.u1"
check "unit 4100 built and staged" "0 1 1" "$? $(ls "$T/u/units" | grep -c '^4100\.done$') $(ls "$T/u/units" | grep -c '^4100\.verified$')"
grep -q 'checked in an earlier run' "$T/log.u1" && { echo "FAIL the first run checked the unit"; fail=1; }
unstage() { rm -f "$T/u/units/4100.done" "$T/u"/4100.*.cwl "$T/u"/1400.*.cwl; }
unstage
$C egdb build --pieces 5 --unit 4100 --pipeline --dir "$T/u" >/dev/null 2>"$T/log.u2"
check "staged again" 0 $?
check "the check not run again: the log says why" "1 0" \
    "$(grep -c 'verify 2-bit files: checked in an earlier run (units/4100.verified), the same bytes' "$T/log.u2") $(grep -c '^verify 2-bit files: [0-9]' "$T/log.u2")"
same=0 differ=0
for b in $(cd "$T/u" && ls 4100.*.cwl 1400.*.cwl 2>/dev/null); do
    if cmp -s "$T/u/$b" "$DB/$b"; then same=$((same + 1)); else differ=$((differ + 1)); fi
done
check "its compressed files identical to the ordinary build's" "$(cd "$DB" && ls 4100.*.cwl 1400.*.cwl | wc -l) 0" "$same $differ"
# A stop in the compression keeps the compressed files it finished: only
# the missing one is compressed again (one "slice 1/1" line), and a kept
# file is still compared with the 2-bit file, so one changed byte in it is
# refused, naming it.
rm -f "$T/u/units/4100.done" "$T/u/1400.00.cwl"
$C egdb build --pieces 5 --unit 4100 --pipeline --dir "$T/u" >/dev/null 2>"$T/log.u4"
check "after a stop in the compression: staged, one slice compressed" "0 1 0" \
    "$? $(grep -c '^compress 1400.00 slice 1/1' "$T/log.u4") $(grep -c '^compress 4100' "$T/log.u4")"
check "... the same bytes" "0 0" "$(cmp -s "$T/u/1400.00.cwl" "$DB/1400.00.cwl"; echo $?) $(cmp -s "$T/u/4100.00.cwl" "$DB/4100.00.cwl"; echo $?)"
check "... the kept file compared with its 2-bit file (stage 3)" "4100 compare" \
    "$(tail -n 1 "$T/u/units/stages.tsv" | cut -f 1,2 | tr '\t' ' ')"
rm -f "$T/u/units/4100.done" "$T/u/1400.00.cwl"
printf '\x5a' | dd of="$T/u/4100.00.cwl" bs=1 seek=$(($(stat -c %s "$T/u/4100.00.cwl") - 20)) conv=notrunc 2>/dev/null
$C egdb build --pieces 5 --unit 4100 --pipeline --dir "$T/u" >/dev/null 2>"$T/log.u5"
rc=$?
check "a kept compressed file with a changed byte: refused, named, no mark" "1 0" \
    "$(grep -c '4100.00.cwl' "$T/log.u5" | sed 's/^[1-9][0-9]*$/1/') $(ls "$T/u/units" | grep -c '^4100\.done$')"
[ $rc -ne 0 ] && echo "ok   ... exit $rc" || { echo "FAIL ... exit 0"; fail=1; }
# One byte of a 2-bit file changed after the check: the digests differ, so
# nothing is skipped, and the damaged file is refused (exit 3) rather than
# compressed.
unstage
f=$(cd "$T/u" && ls 4100.*.wld | head -n 1)
printf '\x5a' | dd of="$T/u/$f" bs=1 seek=$(($(stat -c %s "$T/u/$f") / 2)) conv=notrunc 2>/dev/null
$C egdb build --pieces 5 --unit 4100 --pipeline --dir "$T/u" >/dev/null 2>"$T/log.u3"
rc=$?
check "a changed 2-bit file is refused: exit" 3 $rc
check "no skip, and the file named" "0 1" "$(grep -c 'checked in an earlier run' "$T/log.u3") $(grep -c "$f" "$T/log.u3" | sed 's/^[1-9][0-9]*$/1/')"
rm -rf "$T/u"
# A staged unit's compressed file cut short (a copy of the folder
# interrupted) keeps a valid header: the unit is not taken as staged (it
# was, and a whole build then deleted its 2-bit files), and the next run
# writes the file again, the same bytes as the ordinary build's.
cp -r "$T/base" "$T/t"
$C egdb build --pieces 5 --unit 4100 --pipeline --dir "$T/t" >/dev/null 2>&1
check "unit 4100 staged" "0 1" "$? $(ls "$T/t/units" | grep -c '^4100\.done$')"
truncate -s $(($(stat -c %s "$T/t/4100.00.cwl") / 2)) "$T/t/4100.00.cwl"
check "a cut compressed file: the unit is no longer done" 0 \
    "$($C egdb units --pieces 5 --split 4v1 --dir "$T/t" | awk '$3 == "4100" && $NF == "done"' | wc -l)"
$C egdb build --pieces 5 --unit 4100 --pipeline --dir "$T/t" >/dev/null 2>"$T/log.t"
check "... staged again: exit" 0 $?
check "... the file written again, the same bytes" 0 "$(cmp -s "$T/t/4100.00.cwl" "$DB/4100.00.cwl"; echo $?)"
rm -rf "$T/t"

# ---- 2c. a check stopped inside a unit resumes at the slices it had not finished
# The check of an 8-piece unit runs up to half an hour; a stop in it lost all
# of it. units/KKMM.checking (the mark's text when the check began, the line
# "checked", then each slice as it is finished) lets the next run skip the
# slices it names, when the text is still that of the files, and only then.
# Unit 3101 (3 kings and a man against a king, 14 slices) needs 3200 first.
cp -r "$T/base" "$T/k"
$C egdb build --pieces 5 --unit 3200 --pipeline --dir "$T/k" >/dev/null 2>&1
$C egdb build --pieces 5 --unit 3101 --pipeline --dir "$T/k" >/dev/null 2>"$T/log.k1"
check "unit 3101 built and staged; its record of the check replaced by the mark" "0 1 0" \
    "$? $(ls "$T/k/units" | grep -c '^3101\.verified$') $(ls "$T/k/units" | grep -c '^3101\.checking$')"
cp "$T/k/units/3101.verified" "$T/mark3101"
full=$(awk -F'\t' '$1 == "3101" && $2 == "verify" { print $3; exit }' "$T/k/units/stages.tsv")
# What a run stopped in the check leaves: three slices finished, a torn line.
unstage3101() { rm -f "$T/k/units/3101.done" "$T/k/units/3101.verified" "$T/k"/3101.*.cwl "$T/k"/1310.*.cwl; }
unstage3101
{
    echo "checkers egdb unit checking 1"
    cat "$T/mark3101"
    echo checked
    sed -n '3,5p' "$T/mark3101" | cut -f 1
    printf '13'
} >"$T/k/units/3101.checking"
$C egdb build --pieces 5 --unit 3101 --pipeline --dir "$T/k" >/dev/null 2>"$T/log.k2"
check "resumed: staged" 0 $?
said=$(grep -o '3 of 14 slices ([0-9]* positions) checked in an earlier run (units/3101.checking), the same bytes' "$T/log.k2" | head -n 1)
skipped=$(echo "$said" | sed 's/.*(\([0-9]*\) positions).*/\1/')
part=$(awk -F'\t' '$1 == "3101" && $2 == "verify" { p = $3 } END { print p }' "$T/k/units/stages.tsv")
check "three slices skipped, the log says so, the rest checked" "1 $full" \
    "$([ -n "$said" ] && [ "$skipped" -gt 0 ] && echo 1 || echo 0) $((part + ${skipped:-0}))"
check "the same mark; the record gone" "0 0" \
    "$(cmp -s "$T/k/units/3101.verified" "$T/mark3101"; echo $?) $(ls "$T/k/units" | grep -c '^3101\.checking$')"
same=0 differ=0
for b in $(cd "$T/k" && ls 3101.*.cwl 1310.*.cwl 2>/dev/null); do
    if cmp -s "$T/k/$b" "$DB/$b"; then same=$((same + 1)); else differ=$((differ + 1)); fi
done
check "its compressed files identical to the ordinary build's" "14 0" "$same $differ"
# A record whose text is not the files' (one digest changed in it): nothing skipped.
unstage3101
{
    echo "checkers egdb unit checking 1"
    sed '3s/\t[0-9a-f]*$/\t0123456789abcdef/' "$T/mark3101"
    echo checked
    sed -n '3,16p' "$T/mark3101" | cut -f 1
} >"$T/k/units/3101.checking"
$C egdb build --pieces 5 --unit 3101 --pipeline --dir "$T/k" >/dev/null 2>"$T/log.k3"
check "a record of other bytes: staged, nothing skipped, every position checked" "0 0 $full" \
    "$? $(grep -c 'checked in an earlier run' "$T/log.k3") $(awk -F'\t' '$1 == "3101" && $2 == "verify" { p = $3 } END { print p }' "$T/k/units/stages.tsv")"
rm -rf "$T/k"

# ---- 3. probes and verify -----------------------------------------------------
for fen in 'B:WK30:BK1,K2,K3,K6' 'W:W30:B1,K2,K3,K6' 'B:W:BK1,K2,K3,K6,K7'; do
    a=$($C egdb probe --db "$T/p" "$fen" 2>&1)
    ra=$?
    b=$($C egdb probe --db "$DB" "$fen" 2>&1)
    case "$fen" in
    *W:BK*) # five against none: another split, not built here
        check "probe $fen (5v0, not built): exit" 1 $ra
        case "$a" in *"not in the database"*) echo "ok   it says not in the database" ;;
        *) echo "FAIL it says not in the database: $a"; fail=1 ;; esac ;;
    *) check "probe $fen as the ordinary build" "$b" "$a" ;;
    esac
done
$C egdb verify --db "$T/p" >"$T/verify" 2>&1
check "verify the pipelined directory" 0 $?
# One unit of the split alone (verify --only: how a unit of a long build is
# checked again): its positions only, every file's checksum still read.
$C egdb verify --db "$T/p" --only 1003 >"$T/verify1" 2>&1
check "verify --only 1003 (a unit of 4v1)" "0 1" "$? $(grep -c 'every position of 1003' "$T/verify1")"
$C egdb verify --db "$T/p" --only 0005 >"$T/verify2" 2>&1
check "verify --only 0005 (5v0, not built): exit" 3 $?

# ---- 3b. proofs that take the split's positions as leaves -------------------------
# The databases 1-4 and the 4v1 split of 5 pieces are the scope "4+4v1": df-pn
# and the checker take a 4v1 position as a leaf. Checked with the 1-4 pieces
# alone, the check gives no verdict (exit 2): the store records the databases
# its proofs rest on, and the message names both; with the whole 1-5 set it
# holds.
F6='B:WK29,K30:BK1,K2,K3,K4'
$C solve --db "$T/p" --store "$T/s6" "$F6" >"$T/solve6" 2>&1
check "solve a 4v2 position over 1-4 + 4v1" "0 $F6	win" "$? $(head -n 1 "$T/solve6")"
$C proof check --store "$T/s6" --db "$T/p" "$F6" >"$T/chk6" 2>&1
check "proof check with the same databases" "0 1" "$? $(grep -c 'database leaves: [1-9][0-9]* (up to 4+4v1 pieces' "$T/chk6")"
$C proof check --store "$T/s6" --db "$T/base" "$F6" >"$T/chk6b" 2>&1
check "proof check with 1-4 only: cannot check (exit 2, not invalid), naming both scopes" "2 cannot check 1" \
    "$? $(head -n 1 "$T/chk6b" | cut -f 2) $(grep -c 'used the 4+4v1 databases (recorded in the store).*the folder given holds 4:' "$T/chk6b")"
$C proof check --store "$T/s6" --db "$DB" "$F6" >"$T/chk6c" 2>&1
check "proof check with the whole 1-5 set" 0 $?
$C prove --fen "$F6" --state "$T/m6" --db "$T/p" --workers 2 --quiet >"$T/m6.out" 2>"$T/m6.err"
check "prove over 1-4 + 4v1 with two workers" "0 $F6	win" "$? $(head -n 1 "$T/m6.out")"
$C proof check --state "$T/m6" >"$T/m6.chk" 2>/dev/null
check "... proof check --state (the state names its databases)" "0 valid" \
    "$? $(head -n 1 "$T/m6.chk" | cut -f 2)"
$C prove --state "$T/m6" --db "$T/base" --workers 1 --quiet >/dev/null 2>"$T/m6b.err"
check "... resumed with 1-4 only: refused, naming both" "2 1" \
    "$? $(grep -c '4+4v1' "$T/m6b.err")"

# ---- 4. one byte changed in a 5-piece compressed file ---------------------------
f=$T/p/$(ls "$T/p" | grep '\.cwl$' | four_one | tail -1)
size=$(stat -c %s "$f")
off=$((size - 3))
v=$(od -An -tu1 -j"$off" -N1 "$f" | tr -d ' ')
printf "\\$(printf '%03o' $(((v + 1) % 256)))" | dd of="$f" bs=1 seek="$off" conv=notrunc 2>/dev/null
msg=$($C egdb verify --db "$T/p" 2>&1)
check "verify a damaged 5-piece file: exit" 3 $?
case "$msg" in *"$(basename "$f")"*) echo "ok   verify names the file" ;;
*) echo "FAIL verify names the file: $msg"; fail=1 ;; esac
m=$(basename "$f" | cut -c1-4)
msg=$($C egdb verify --db "$T/p" --only "$m" 2>&1)
check "verify --only $m, the damaged file's material: exit" 3 $?
case "$msg" in *"$(basename "$f")"*) echo "ok   verify --only names the file" ;;
*) echo "FAIL verify --only names the file: $msg"; fail=1 ;; esac
# The message names a position the damaged block holds: its probe is refused.
fen=$(echo "$msg" | sed -n 's/.*a position it holds: \([^ ]*\) .*/\1/p' | head -n 1)
$C egdb probe --db "$T/p" "$fen" >/dev/null 2>"$T/probe-dmg"
check "probe a position of the damaged block ($fen): exit, file named" "3 1" \
    "$? $(grep -c "$(basename "$f")" "$T/probe-dmg")"

# ---- 5. a partial build over databases kept compressed only ----------------------
# A pipelined set keeps no 2-bit files: a partial build (bounds, seed 000)
# then reads its exits through the compressed files. The 4-piece material
# 0022 over the 1-3 piece files as 2-bit files or as compressed files only:
# the same bytes.
mkdir "$T/q-wld" "$T/q-cwl"
small() { awk '{ if (substr($0, 1, 1) + substr($0, 2, 1) + substr($0, 3, 1) + substr($0, 4, 1) <= 3) print }'; }
(cd "$DB" && ls | grep '\.wld$' | small | xargs cp -t "$T/q-wld")
(cd "$DB" && ls | grep '\.cwl$' | small | xargs cp -t "$T/q-cwl")
$C egdb build --only 0022 --dir "$T/q-wld" >"$T/q-wld.out" 2>&1
check "partial 0022 over 2-bit files" 0 $?
$C egdb build --only 0022 --dir "$T/q-cwl" >"$T/q-cwl.out" 2>&1
check "partial 0022 over compressed files only" 0 $?
same=0 differ=0
for f in "$T"/q-wld/*.pwl; do
    if cmp -s "$f" "$T/q-cwl/$(basename "$f")"; then same=$((same + 1)); else differ=$((differ + 1)); fi
done
check "the same bound files ($same)" "0 yes" "$differ $([ "$same" -gt 0 ] && echo yes)"
check "the same shares of exact values and bounds" "$(grep '^partial database' "$T/q-wld.out")" \
    "$(grep '^partial database' "$T/q-cwl.out")"
exit $fail
