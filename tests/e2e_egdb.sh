#!/bin/sh
# End-to-end checks of `checkers egdb`: building, resuming after kill -9,
# verifying, probing, statistics and counts, through the command line only.
# Run by `make test` with $CHECKERS set to the binary. Databases go to a
# temporary directory under $TMPDIR (default /tmp), removed at the end.
#
# The kill test builds 1-5 pieces in the background and sends SIGKILL once
# some 5-piece slice files exist (polled, so it lands mid-build however fast
# the builder is), checks that some but not all files are there, resumes,
# and compares every file with an uninterrupted build (cmp); a second build
# started meanwhile is refused (the directory's lock), and the lock dies
# with the killed build (the resume takes it). Then a compression of the
# same files is stopped by SIGINT and resumed to the same bytes. Cost: two
# 5-piece builds, about 20 s each on 2 cores, and one compression, 20 s.
set -u
C=${CHECKERS:-bin/checkers}
fail=0
T=$(mktemp -d "${TMPDIR:-/tmp}/e2e_egdb.XXXXXX") || { echo "FAIL mktemp"; exit 1; }
bg=
cleanup() {
    [ -n "$bg" ] && kill -9 "$bg" 2>/dev/null
    rm -rf "$T"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

. "$(dirname "$0")/lib_e2e.sh"

yes_() { # name, condition result (0 = true), details
    if [ "$2" -eq 0 ]; then
        echo "ok   $1"
    else
        echo "FAIL $1: $3"
        fail=1
    fi
}

nwld() { # number of slice files in a directory
    ls "$1" 2>/dev/null | grep -c '\.wld$'
}

N4=1029 # slice files of 1-4 pieces
N5=2223 # slice files of 1-5 pieces

# ---- build, and build again ------------------------------------------------

$C egdb build --pieces 4 --dir "$T/a" >"$T/out" 2>"$T/err"
check "build 4 exit" 0 $?
check "build 4 files" $N4 "$(nwld "$T/a")"
out=$($C egdb build --pieces 4 --dir "$T/a" 2>&1); rc=$?
check "rebuild exit" 0 $rc
case "$out" in *"nothing to do"*) echo "ok   rebuild does nothing";;
    *) echo "FAIL rebuild does nothing: $out"; fail=1;; esac
check "rebuild files unchanged" $N4 "$(nwld "$T/a")"

# ---- kill -9 in the middle of a 5-piece build, resume, compare ------------------

$C egdb build --pieces 5 --dir "$T/b" >"$T/b.out" 2>"$T/b.err" &
bg=$!
i=0
while [ $i -lt 600 ]; do
    [ "$(nwld "$T/b")" -gt $((N4 + 20)) ] && break
    kill -0 "$bg" 2>/dev/null || break
    sleep 0.2 2>/dev/null || sleep 1
    i=$((i + 1))
done
# one writer per directory (the build is still writing: it has 20 of its
# slices done and many more to do): a second build (or compression) is refused
$C egdb build --pieces 5 --dir "$T/b" >/dev/null 2>"$T/b2.err"
check "a second build in the same directory is refused" 1 $?
check "the refusal names the other build" 1 \
    "$(grep -c 'another build or compression (pid [0-9]*) is working' "$T/b2.err")"
kill -9 "$bg" 2>/dev/null
wait "$bg" 2>/dev/null
rc=$?
bg=
killed=$(nwld "$T/b")
echo "     killed with $killed slice files and $(ls "$T/b" | grep -c '\.tmp$') temporary files"
check "kill -9 ends the build" 137 $rc
[ "$killed" -gt $N4 ] && [ "$killed" -lt $N5 ]
yes_ "killed mid-build ($killed of $N5 slice files)" $? "$killed files"
$C egdb build --pieces 5 --dir "$T/b" >"$T/b.out" 2>"$T/b.err"
check "resumed build exit" 0 $?
# The kill may fall between the two files of a slice pair: that pair is
# rebuilt, so one file fewer may be kept.
kept=$(sed -n 's/.*(\([0-9]*\) kept from an earlier run).*/\1/p' "$T/b.out")
[ -n "$kept" ] && [ "$kept" -le "$killed" ] && [ "$kept" -ge $((killed - 1)) ]
yes_ "resume keeps the finished files (${kept:-?} of $killed)" $? "$(head -n 1 "$T/b.out")"
$C egdb build --pieces 5 --dir "$T/c" >"$T/c.out" 2>"$T/c.err"
check "uninterrupted build exit" 0 $?
check "uninterrupted files" $N5 "$(nwld "$T/c")"
check "resumed files" $N5 "$(nwld "$T/b")"
differ=0
for f in "$T"/c/*.wld "$T"/c/*.cwl; do
    cmp -s "$f" "$T/b/${f##*/}" || { differ=$((differ + 1)); echo "     differs: ${f##*/}"; }
done
check "resumed files identical to uninterrupted, build and compressed (cmp)" 0 $differ
check "compressed files" $N5 "$(ls "$T/c" | grep -c '\.cwl$')"
rm -rf "$T/c"

# ---- Ctrl-C during the compression, resume, compare ----------------------------
# One thread over the 1-5 build files (about 20 s): SIGINT once some
# compressed files exist. The command stops after the slice in hand (a
# background job starts with SIGINT ignored, so only the command's own
# handler can stop it), keeps what it finished, and a second run
# compresses the rest to the same bytes as the build's own compression.

mkdir "$T/e" && cp "$T"/b/*.wld "$T/e/"
ncwl() { ls "$1" 2>/dev/null | grep -c '\.cwl$'; }
$C egdb compress --db "$T/e" --threads 1 >"$T/e.out" 2>"$T/e.err" &
bg=$!
i=0
while [ $i -lt 600 ]; do
    [ "$(ncwl "$T/e")" -gt 20 ] && break
    kill -0 "$bg" 2>/dev/null || break
    sleep 0.2 2>/dev/null || sleep 1
    i=$((i + 1))
done
kill -INT "$bg" 2>/dev/null
wait "$bg" 2>/dev/null
rc=$?
bg=
stopped=$(ncwl "$T/e")
check "Ctrl-C stops the compression (exit 1)" 1 $rc
check "the compression says how to resume" 1 "$(grep -c 'stopped; run again to resume' "$T/e.err")"
[ "$stopped" -gt 20 ] && [ "$stopped" -lt $N5 ]
yes_ "stopped mid-compression ($stopped of $N5 compressed files)" $? "$stopped files"
check "no temporary file left" 0 "$(ls "$T/e" | grep -c '\.tmp$')"
$C egdb compress --db "$T/e" >"$T/e.out" 2>"$T/e.err"
check "resumed compression exit" 0 $?
check "resumed compression did the rest" "compressed $((N5 - stopped)) slices" \
    "$(grep -o '^compressed [0-9]* slices' "$T/e.out")"
differ=0
for f in "$T"/b/*.cwl; do
    cmp -s "$f" "$T/e/${f##*/}" || { differ=$((differ + 1)); echo "     differs: ${f##*/}"; }
done
check "resumed compression identical to the build's (cmp)" 0 $differ
rm -rf "$T/e"

# ---- verify, then corrupt one byte ----------------------------------------

$C egdb verify --db "$T/a" >/dev/null 2>&1
check "verify good dir exit" 0 $?
mkdir "$T/d" && cp "$T"/a/*.wld "$T/d/"
f="$T/d/1111.33.wld"
off=1000 # inside the payload (the header is 64 bytes)
old=$(od -An -tu1 -j$off -N1 "$f" | tr -d ' ')
new=$(((old + 1) % 256))
printf "\\$(printf '%03o' $new)" | dd of="$f" bs=1 seek=$off conv=notrunc 2>/dev/null
check "byte changed" $new "$(od -An -tu1 -j$off -N1 "$f" | tr -d ' ')"
msg=$($C egdb verify --db "$T/d" 2>&1); rc=$?
check "verify corrupt dir exit (3: damaged file)" 3 $rc
case "$msg" in *1111.33*) echo "ok   verify names the file";;
    *) echo "FAIL verify names the file: $msg"; fail=1;; esac

# ---- probe ---------------------------------------------------------------

check "probe draw" "$(printf 'W:WK32:BK1\tdraw')" "$($C egdb probe --db "$T/a" 'W:WK32:BK1' 2>&1)"
check "probe no pieces" "$(printf 'B:W20:B\tloss')" "$($C egdb probe --db "$T/a" 'B:W20:B' 2>&1)"
check "probe capture wins" "$(printf 'B:W14:BK10\twin')" "$($C egdb probe --db "$T/a" 'B:W14:BK10' 2>&1)"
out=$($C egdb probe --db "$T/b" 'B:W20,K30:B1,5,K9' 'W:W20,K30:B1,5,K9' 2>&1); rc=$?
check "probe 5 pieces exit" 0 $rc
check "probe 5 pieces lines" 2 "$(printf '%s\n' "$out" | grep -cE '^[BW]:[^	]*	(win|loss|draw)$')"
$C egdb probe --db "$T/a" 'B:W33:B1' >/dev/null 2>&1
check "probe bad FEN exit" 2 $?
$C egdb probe --db "$T/a" 'B:W20,K30:B1,5,K9' >/dev/null 2>&1
check "probe too many pieces exit" 1 $?

# ---- stats and count -------------------------------------------------------

json=$($C egdb stats --db "$T/a" --json 2>&1); rc=$?
check "stats --json exit" 0 $rc
case "$json" in "{"*'"total":{"slices":1029,"positions":7361090,'*"}") echo "ok   stats --json total";;
    *) echo "FAIL stats --json total: $json"; fail=1;; esac
check "count 8 total" 406309208481 \
    "$($C egdb count --pieces 8 | awk '$1 == 8 && $2 == "all" { print $3 }')"

exit $fail
