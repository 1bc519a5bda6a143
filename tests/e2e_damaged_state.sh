#!/bin/bash
# End-to-end checks of damaged state directories: copies of a finished
# proof are damaged and every command that opens a state (prove --state,
# tree, proof check --state) must answer exit 3 naming the file, never
# crash (exit 128+signal) and never print a value.
#   - tree/data.mdb cut short at sizes from 8 KiB to one page short of
#     the whole file (LMDB would read past the end: SIGBUS);
#   - a store that lost a record inside a worker's proof (e2e_admission.sh
#     covers it);
# and a full disk, which is not damage: exit 1, resumable.
# Run by `make test` with $CHECKERS and $CHECKERS_TEST_DB set.
set -u
C=${CHECKERS:-bin/checkers}
DB=${CHECKERS_TEST_DB:-}
if [ -z "$DB" ] || [ ! -d "$DB" ]; then
    echo "FAIL e2e_damaged_state: CHECKERS_TEST_DB is not set (run through make test)"
    exit 1
fi
. "$(dirname "$0")/lib_e2e.sh"
e2e_setup e2e_damaged_state

f='B:W30,31,K19:B6,K12'
S="$T/good"
$C prove --fen "$f" --state "$S" --db "$DB" --pieces 4 --workers 2 --job-nodes 3000 --quiet \
    >"$T/out" 2>/dev/null
check "a finished proof to damage" "0 $f	loss" "$? $(head -n 1 "$T/out")"
$C proof check --state "$S" >"$T/chk" 2>/dev/null
check "... which the checker accepts, before the damage" "0 valid" "$? $(head -n 1 "$T/chk" | cut -f 2)"
size=$(stat -c %s "$S/tree/data.mdb")

# every command that opens a state: exit 3, the damage named, no value
opens() { # name state
    local name=$1 D=$2
    $C prove --state "$D" --quiet >"$T/o1" 2>"$T/e1"
    check "$name: prove --state exits 3" 3 $?
    $C tree --state "$D" >"$T/o2" 2>"$T/e2"
    check "$name: tree exits 3" 3 $?
    $C proof check --state "$D" >"$T/o3" 2>"$T/e3"
    check "$name: proof check --state exits 3" 3 $?
    check "$name: no value printed" 0 "$(cat "$T/o1" "$T/o2" "$T/o3" | grep -c 'loss')"
    check "$name: the file named" 3 "$(cat "$T/e1" "$T/e2" "$T/e3" | grep -c 'tree/data.mdb')"
}

for cut in 8192 16384 $((size / 2)) $((size - 4096)); do
    [ "$cut" -gt 0 ] && [ "$cut" -lt "$size" ] || continue
    D="$T/cut$cut"
    cp -r "$S" "$D"
    truncate -s "$cut" "$D/tree/data.mdb"
    opens "tree/data.mdb cut to $cut of $size bytes" "$D"
done

# A full disk is not damage: a run that fills it stops with exit 1 (resumable),
# naming the full disk; once space is freed the proof resumes and checks.
# Needs a small tmpfs (root); skipped where none can be mounted.
M="$T/small"
mkdir -p "$M"
if mount -t tmpfs -o size=200k tmpfs "$M" 2>/dev/null; then
    $C prove --fen "$f" --state "$M/s" --db "$DB" --pieces 4 --workers 1 --job-nodes 3000 \
        --quiet >"$T/fo" 2>"$T/fe"
    check "disk full mid-run: exit 1 (stopped, resumable)" 1 $?
    check "... the full disk named" 1 "$(grep -c 'the disk is full' "$T/fe" | awk '{print ($1 >= 1)}')"
    mount -o remount,size=64m "$M"
    $C prove --state "$M/s" --workers 1 --quiet >"$T/fo" 2>/dev/null
    check "space freed: the proof resumes to the end" "0 $f	loss" "$? $(head -n 1 "$T/fo")"
    $C proof check --state "$M/s" >"$T/fo" 2>/dev/null
    check "... and checks" "0 valid" "$? $(head -n 1 "$T/fo" | cut -f 2)"
    umount "$M"
else
    echo "ok   disk full: skipped (no tmpfs can be mounted here)"
fi

exit $fail
