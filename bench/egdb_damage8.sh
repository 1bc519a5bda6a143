#!/bin/bash
# bench/egdb_damage8.sh DB [CHECKERS]  (NK=2: on a 1-4 piece folder) - one byte changed in a compressed
# 8-piece file, by hand (issue 40: "a damaged compressed 8-piece file is
# refused and named, never answered"). tests/e2e_egdb_damage.sh does the
# same on every part of small files in `make test`; a new machine has no
# 8-piece files, so this runs on a folder that has them (the 4v4 split).
#
# DB is never written: a scratch folder of links to its files gets a copy
# of 4400.00.cwl (four kings against four: one slice, about 8 MB), and one
# byte in the middle of that copy's data is changed. Then:
#   1. `egdb verify --only $m` exits 3 naming the file and the block;
#   2. 20,000 random four-kings-against-four positions, either side to
#      move, probed in one `egdb probe` through the damaged folder and
#      through DB: every value it prints is DB's, every other position is
#      refused naming the file (those whose probe reads the damaged
#      block), and it exits 3 if any was refused;
#   3. a changed header byte: any probe is refused at open, naming the file.
# Takes a minute or two (each command opens the folder's ~15,000 files;
# step 1 reads every checksum of the 1-7 build files).
set -u
db=$1
c=${2:-bin/checkers}
k=${NK:-4} # kings a side (NK=2: the same on a 1-4 piece folder, to try the script)
m=$k${k}00
f=$m.00.cwl
[ -f "$db/$f" ] || { echo "no $db/$f: the 4v4 split is not built there"; exit 2; }
T=$(mktemp -d "${TMPDIR:-/tmp}/egdb_damage8.XXXXXX") || exit 1
trap 'rm -rf "$T"' EXIT
fail=0
ok() { echo "ok   $1"; }
bad() { echo "FAIL $1"; fail=1; }
mkdir "$T/d"
for p in "$db"/*.cwl "$db"/*.wld; do
    [ -e "$p" ] && ln -s "$(cd "$(dirname "$p")" && pwd)/$(basename "$p")" "$T/d/$(basename "$p")"
done
rm "$T/d/$f"
cp "$db/$f" "$T/d/$f"
size=$(stat -c %s "$T/d/$f")
off=$((size / 2))
v=$(od -An -tu1 -j"$off" -N1 "$T/d/$f" | tr -d ' ')
printf "\\$(printf '%03o' $(((v + 1) % 256)))" | dd of="$T/d/$f" bs=1 seek="$off" conv=notrunc 2>/dev/null
echo "== $f: byte $off of $size changed ($v -> $(((v + 1) % 256)))"

# 1. verify of the material
msg=$("$c" egdb verify --db "$T/d" --only $m 2>&1)
rc=$?
echo "   verify: $(echo "$msg" | tail -n 1)"
[ $rc -eq 3 ] && ok "verify --only $m exits 3" || bad "verify --only $m exits $rc, not 3"
case "$msg" in *"$f"*block*) ok "verify names the file and the block" ;;
*) bad "verify names the file and the block" ;; esac

# 1b. a position of the damaged block (one that keeps its value), which verify names
fen=$(echo "$msg" | sed -n 's/.*a position it holds: \([^ ]*\) .*/\1/p' | head -n 1)
if [ -n "$fen" ]; then
    pm=$("$c" egdb probe --db "$T/d" "$fen" 2>&1)
    rc=$?
    echo "   probe $fen: exit $rc: $pm"
    [ $rc -eq 3 ] && case "$pm" in *"$f"*) true ;; *) false ;; esac &&
        ok "a position of the damaged block: refused (exit 3), the file named" ||
        bad "a position of the damaged block"
    good=$("$c" egdb probe --db "$db" "$fen" 2>&1)
    echo "   (the undamaged folder: $good)"
else
    bad "verify names a position of the block"
fi

# 2. random positions of 4400, either side to move
awk -v k="$k" 'BEGIN { srand(40); for (i = 0; i < 20000; i++) {
        delete used; n = 0
        while (n < 2 * k) { q = int(rand() * 32) + 1; if (!(q in used)) { used[q] = 1; sq[n++] = q } }
        w = ""; b = ""
        for (j = 0; j < k; j++) { w = w (j ? ",K" : "K") sq[j]; b = b (j ? ",K" : "K") sq[k + j] }
        printf "%s:W%s:B%s\n", (rand() < 0.5 ? "B" : "W"), w, b } }' >"$T/fens"
"$c" egdb probe --db "$db" $(cat "$T/fens") >"$T/good" 2>"$T/good.err"
rc=$?
[ $rc -eq 0 ] && [ "$(wc -l <"$T/good")" -eq 20000 ] && ok "the undamaged folder values all 20000" ||
    bad "the undamaged folder: exit $rc, $(wc -l <"$T/good") values ($(head -c 300 "$T/good.err"))"
"$c" egdb probe --db "$T/d" $(cat "$T/fens") >"$T/dmg" 2>"$T/dmg.err"
rc=$?
n=$(wc -l <"$T/dmg")
refused=$(grep -c "$f" "$T/dmg.err")
other=$(grep -vc "$f" "$T/dmg.err")
wrong=$(grep -Fxvf "$T/good" "$T/dmg" | wc -l)
echo "   probe through the damaged folder: exit $rc, $n values, $refused refused naming $f, $other other errors"
[ "$wrong" -eq 0 ] && ok "every value it gave is the undamaged folder's" || bad "$wrong values differ"
[ $((n + refused)) -eq 20000 ] && [ "$other" -eq 0 ] && ok "every position valued or refused" ||
    bad "values + refusals = $((n + refused)), other errors $other"
if [ "$refused" -gt 0 ]; then
    [ $rc -eq 3 ] && ok "exit 3 (damaged), e.g. $(grep -m1 "$f" "$T/dmg.err" | cut -c1-200)" ||
        bad "exit $rc with refusals"
else
    echo "   (no position read the damaged block; every value right)"
fi

# 3. a header byte
cp "$db/$f" "$T/d/$f"
v=$(od -An -tu1 -j10 -N1 "$T/d/$f" | tr -d ' ')
printf "\\$(printf '%03o' $(((v + 1) % 256)))" | dd of="$T/d/$f" bs=1 seek=10 conv=notrunc 2>/dev/null
msg=$("$c" egdb probe --db "$T/d" "$(head -n 1 "$T/fens")" 2>&1)
rc=$?
echo "   header byte 10: exit $rc: $msg"
[ $rc -eq 3 ] && case "$msg" in *"$f"*) true ;; *) false ;; esac &&
    ok "a changed header byte: refused at open, the file named" || bad "a changed header byte"
exit $fail
