#!/bin/sh
# End-to-end: one byte changed in each part of a compressed slice file
# (.cwl: header, code lengths, block table offsets / block checksums /
# page counts, data) and of a build file (.wld: header, payload), through
# the command line only. For each, `egdb verify` must exit 3 naming the
# file and the damaged part, and a probe of positions in (or resolved
# through) that file must either exit 3 naming the part or print the
# value the undamaged database gives: never exit 0 with another value.
#
# Every byte of both formats is covered by a checksum (codec.h DAMAGE,
# store.h), so no part is exempt; bytes that carry no meaning (the .cwl
# header's zero bytes 25-27, a .wld's padding bits) are covered as well.
#
# Uses the 1-4 piece files of the 1-5 piece test database that `make
# testdata` builds ($CHECKERS_TEST_DB, default build/testdata/egdb5),
# copied to a temporary directory: the test database is never written.
# Cost: 10-20 s on 2 cores (about fifty commands, each opening the 1029
# slice files; damage is found before any value is checked).
set -u
C=${CHECKERS:-bin/checkers}
DB=${CHECKERS_TEST_DB:-build/testdata/egdb5}
fail=0
if [ ! -f "$DB/2200.00.cwl" ] || [ ! -f "$DB/2200.00.wld" ]; then
    echo "FAIL no test database in $DB (make testdata builds it)"
    exit 1
fi
T=$(mktemp -d "${TMPDIR:-/tmp}/e2e_egdb_damage.XXXXXX") || { echo "FAIL mktemp"; exit 1; }
trap 'rm -rf "$T"' EXIT
trap 'exit 1' INT TERM

ok() { echo "ok   $1"; }
bad() { echo "FAIL $1"; fail=1; }

byte_at() { # file, offset
    od -An -tu1 -j"$2" -N1 "$1" | tr -d ' '
}

set_byte() { # file, offset, value 0..255
    printf "\\$(printf '%03o' "$3")" | dd of="$1" bs=1 seek="$2" conv=notrunc 2>/dev/null
}

u32_at() { # file, offset: a little-endian u32
    echo $(($(byte_at "$1" "$2") + 256 * $(byte_at "$1" $(($2 + 1))) + \
        65536 * $(byte_at "$1" $(($2 + 2))) + 16777216 * $(byte_at "$1" $(($2 + 3)))))
}

# ---- the 1-4 piece files: compressed only, build files only, both ---------

mkdir "$T/cwl" "$T/wld" "$T/both"
# A slice name starts with its four piece counts (bk wk bm wm).
ls "$DB" | awk '/^[0-9][0-9][0-9][0-9]\.[0-9][0-9]\.(cwl|wld)$/ {
    if (substr($0, 1, 1) + substr($0, 2, 1) + substr($0, 3, 1) + substr($0, 4, 1) <= 4) print }' \
    >"$T/names"
(cd "$DB" && grep '\.cwl$' "$T/names" | xargs cp -t "$T/cwl" &&
    grep '\.wld$' "$T/names" | xargs cp -t "$T/wld") || bad "copying the test database"
cp "$T"/cwl/* "$T"/wld/* "$T/both/"
n=$(ls "$T/cwl" | wc -l)
[ "$n" -eq 1029 ] && ok "1-4 piece files copied (1029 slices)" || bad "copied $n .cwl files, not 1029"

# Positions: P1 in 1100.00 (one king each; its file is one block), P2 in
# 2200.00 (two kings each), P3 a capture into 1100.00 (resolved by a
# search through it), P4 in another slice (2100.00).
P1='W:WK32:BK1'
P2='B:WK3,K7:BK4,K21'
P3='B:WK14,K32:BK10'
P4='B:WK32:BK1,K5'
for d in cwl wld both; do
    $C egdb verify --db "$T/$d" >/dev/null 2>&1
    rc=$?
    [ $rc -eq 0 ] && ok "verify undamaged $d files" || bad "verify undamaged $d files: exit $rc"
done
for P in "$P1" "$P2" "$P3" "$P4"; do
    v=$($C egdb probe --db "$T/cwl" "$P" 2>&1)
    rc=$?
    [ $rc -eq 0 ] || bad "probe $P undamaged: exit $rc ($v)"
    echo "$v" >>"$T/baseline"
done
cmp -s "$T/baseline" - <<EOF || bad "baseline values: $(cat "$T/baseline")"
$(printf '%s\tdraw' "$P1")
$(printf '%s\tloss' "$P2")
$(printf '%s\tdraw' "$P3")
$(printf '%s\twin' "$P4")
EOF

# damage DIR FILE OFFSET VALUE PART MUST: sets byte OFFSET of DIR/FILE to
# VALUE, then expects `egdb verify` to exit 3 naming FILE and PART, and a
# probe of P1-P4 to answer each position either with its undamaged value
# or with an error naming FILE and PART (exit 3 when any did). MUST lists
# the positions that have to fail: their file is refused at open, or they
# are in (or resolved through) the damaged block. Restores the file.
damage() {
    dir=$T/$1 file=$2 off=$3 val=$4 part=$5 must=$6
    what="$1/$file byte $off"
    old=$(byte_at "$dir/$file" "$off")
    if [ "$old" = "$val" ]; then
        bad "$what: byte already $val (test broken)"
        return
    fi
    set_byte "$dir/$file" "$off" "$val"
    msg=$($C egdb verify --db "$dir" 2>&1)
    rc=$?
    case "$rc:$msg" in
    "3:"*"$file: $part"*) ok "$what -> verify exit 3: ${msg#*"$file": }";;
    *) bad "$what: verify exit $rc, expected 3 naming '$file: $part': $msg";;
    esac
    $C egdb probe --db "$dir" --cache 1 "$P1" "$P2" "$P3" "$P4" >"$T/pout" 2>"$T/perr"
    rc=$?
    k=0 failed=0 answered=""
    for P in "$P1" "$P2" "$P3" "$P4"; do
        k=$((k + 1))
        line=$(grep -F "$P	" "$T/pout")
        case " $must " in *" $k "*) need=1;; *) need=0;; esac
        if [ -z "$line" ]; then
            failed=1
            if grep -qF "$P: " "$T/perr" && grep -F "$P: " "$T/perr" | grep -qF "$file: $part"; then
                :
            elif grep -qF "$file: $part" "$T/perr" && ! grep -q "^checkers egdb probe: [BW]:" "$T/perr"; then
                : # refused at open: one message for all
            else
                bad "$what: probe P$k ($P): no value and no message naming '$file: $part': $(cat "$T/perr")"
            fi
        elif [ $need -eq 1 ]; then
            bad "$what: probe P$k ($P) answered [$line]; it reads the damage"
        elif [ "$line" != "$(sed -n "${k}p" "$T/baseline")" ]; then
            bad "$what: probe P$k WRONG VALUE [$line], undamaged: $(sed -n "${k}p" "$T/baseline")"
        else
            answered="$answered P$k"
        fi
    done
    if [ $failed -eq 1 ] && [ $rc -ne 3 ]; then
        bad "$what: probe exit $rc with a damaged file, expected 3"
    elif [ $failed -eq 0 ] && [ $rc -ne 0 ]; then
        bad "$what: probe exit $rc with every value given"
    else
        ok "$what -> probe exit $rc:${answered:+ undamaged values for$answered;} $(sed -n 1p "$T/perr" |
            cut -c1-150)"
    fi
    cp "$DB/$file" "$dir/$file"
}

flip() { # a value other than byte OFFSET's: the byte + 85 (mod 256)
    echo $((($(byte_at "$T/$1/$2" "$3") + 85) % 256))
}

# ---- .cwl: 2200.00 (several blocks) and 1100.00 (one block) ----------------

F=2200.00.cwl
nb=$(u32_at "$T/cwl/$F" 28)
offsets=144
sums=$((offsets + 4 * (nb + 1)))
pages=$((sums + 4 * nb))
data=$((pages + nb))
size=$(wc -c <"$T/cwl/$F")
echo "     $F: $nb blocks; offsets at $offsets, block checksums at $sums, page counts at" \
    "$pages, data at $data, $size bytes"
[ "$nb" -gt 3 ] || bad "$F has $nb blocks: too few for the table tests"

# The header: magic, a counted field, an unused zero byte, its checksum.
damage cwl $F 1 "$(flip cwl $F 1)" "header (bytes 0-79)" "2"
damage cwl $F 20 "$(flip cwl $F 20)" "header (bytes 0-79): checksum mismatch" "2"
damage cwl $F 26 "$(flip cwl $F 26)" "header (bytes 0-79): checksum mismatch" "2"
damage cwl $F 77 "$(flip cwl $F 77)" "header (bytes 0-79): checksum mismatch" "2"
# The code lengths, an unused symbol's and a used one's (the first
# nonzero length).
damage cwl $F 143 "$(flip cwl $F 143)" "code lengths (bytes 80-143)" "2"
i=80
while [ "$(byte_at "$T/cwl/$F" $i)" = 0 ]; do i=$((i + 1)); done
damage cwl $F $i "$(flip cwl $F $i)" "code lengths (bytes 80-143)" "2"
# The block table: an offset moved by one (still in order: only the two
# blocks around it stop matching), an offset's high byte, a checksum
# entry, a page count.
o=$((offsets + 4 * 3))
damage cwl $F $o $((($(byte_at "$T/cwl/$F" $o) + 1) % 256)) "block table, offsets" "2"
damage cwl $F $((o + 3)) "$(flip cwl $F $((o + 3)))" "block table, offsets" "2"
damage cwl $F $((sums + 4 * 2 + 1)) "$(flip cwl $F $((sums + 4 * 2 + 1)))" \
    "block table, block checksums" "2"
damage cwl $F $((pages + 1)) "$(flip cwl $F $((pages + 1)))" "block table, page counts" "2"
# The data: the first block, and the last one (the fault a user found:
# verify used to report a position probing into it as a wrong value,
# exit 1).
damage cwl $F $((data + 2)) "$(flip cwl $F $((data + 2)))" "data, block 0 " ""
damage cwl $F $((size - 3)) "$(flip cwl $F $((size - 3)))" "data, block $((nb - 1)) " ""
# One block holds all of 1100.00: P1 is in it, P3 captures into it.
G=1100.00.cwl
gdata=$((144 + 4 * 2 + 4 + 1))
damage cwl $G $((gdata + 5)) "$(flip cwl $G $((gdata + 5)))" "data, block 0 " "1 3"
damage cwl $G 150 "$(flip cwl $G 150)" "block table, offsets" "1 3"

# ---- .wld: 2200.00 (build files only, then next to the compressed ones) ---

W=2200.00.wld
wsize=$(wc -c <"$T/wld/$W")
damage wld $W 0 "$(flip wld $W 0)" "header (bytes 0-63)" "2"
damage wld $W 7 "$(flip wld $W 7)" "header (bytes 0-63)" "2"
damage wld $W 20 "$(flip wld $W 20)" "header (bytes 0-63): checksum mismatch" "2"
damage wld $W 14 "$(flip wld $W 14)" "header (bytes 0-63): checksum mismatch" "2"
damage wld $W 60 "$(flip wld $W 60)" "header (bytes 0-63): checksum mismatch" "2"
damage wld $W 64 "$(flip wld $W 64)" "payload (bytes 64-" "2"
damage wld $W $((wsize - 1)) "$(flip wld $W $((wsize - 1)))" "payload (bytes 64-" "2"
# Next to an intact compressed file, probes read the compressed file (so
# may answer), and verify still checks the build file.
damage both $W 500 "$(flip both $W 500)" "payload (bytes 64-" ""
damage both $F $((data + 2)) "$(flip both $F $((data + 2)))" "data, block 0 " ""

exit $fail
