#!/bin/bash
# End-to-end checks of proof certificates (`proof export`, `proof check
# --cert`, docs/certificate.md) and of the second checker written from that
# document (checker/checkcert.py, Python, no code shared with the C):
#   1. agreement: on wins, losses, draws and one-sided bounds proved by
#      `solve`, and on proofs through the manager with two workers, the
#      store's `proof check`, the C check of the certificate and the Python
#      checker all say valid, for the same claim;
#   2. damaged certificates (tests/cert_tamper.py) are refused by both
#      checkers, the Python one naming the damaged position and the reason;
#      database files other than the certificate's (a changed digest, a
#      set compressed again) are no verdict, and with --other-files are
#      checked by their values;
#   3. the Python rules' perft equals the C engine's (start position, both
#      counting conventions, and three more positions), and the Python
#      database reader's values the C prober's;
#   4. exit statuses: nothing stored, a missing certificate or database, a
#      stored proof that lost a record;
#   5. format 2: a proof over partial databases (1-3 complete, 4-piece
#      0022/1012/0121 partial: 17 'B' leaves) and one over a split (1-4 and
#      4 against 1), valid for both checkers; checked without the .pwl or
#      the split's files, a clear failure with exit status 2; a partial
#      leaf's claim and a .pwl byte tampered with, refused by both.
# Run by `make test` with $CHECKERS set to the binary and
# $CHECKERS_TEST_DB to the 1-5 piece databases.
set -u
C=${CHECKERS:-bin/checkers}
DB=${CHECKERS_TEST_DB:-}
HERE=$(cd "$(dirname "$0")" && pwd)
PY="python3 $HERE/../checker/checkcert.py"
TAMPER="python3 $HERE/cert_tamper.py"
if [ -z "$DB" ] || [ ! -d "$DB" ]; then
    echo "FAIL e2e_cert: CHECKERS_TEST_DB is not set (run through make test)"
    exit 1
fi
. "$HERE/lib_e2e.sh"
e2e_setup e2e_cert

npieces() { echo "$1" | tr -cd '0-9,:' | tr ':,' '\n\n' | grep -c .; }

# agree NAME CERT CLAIM [DBDIR]: the C check of the certificate and the
# Python checker both say valid, for the claim CLAIM (a bound code).
agree() {
    local d=${4:-$DB}
    $C proof check --cert "$2" --db "$d" >"$T/c.out" 2>/dev/null
    check "$1: C check of the certificate" "0 valid $3" \
        "$? $(head -n 1 "$T/c.out" | cut -f 2) $(sed -n 's/^claim: //p' "$T/c.out")"
    $PY "$2" --db "$d" >"$T/py.out" 2>/dev/null
    check "$1: Python checker" "0 valid $3" \
        "$? $(head -n 1 "$T/py.out") $(sed -n 's/^claim: //p' "$T/py.out")"
}

# 1a. Proofs by `solve` (the databases one or more pieces short, so there is
#     a proof to write), each in a store of its own: win, loss, draw, and a
#     one-sided bound each way.
k=0
for spec in 'B:W24,28:B5,K10|3|value|WW' 'W:WK3:BK10,K14|2|value|LL' 'B:WK1:BK32|1|value|DD' \
    'W:WK10:B26,K29|2|value|LL' 'B:W9,23:B22,K27|3|value|WW' 'B:WK1:BK32|1|win|LD' \
    'B:WK1:BK32|1|draw|DW'; do
    IFS='|' read -r f p goal claim <<<"$spec"
    k=$((k + 1))
    S="$T/store$k"
    g=""
    [ "$goal" != value ] && g="--goal $goal"
    $C solve --db "$DB" --pieces "$p" --store "$S" --time 60 $g "$f" >/dev/null 2>&1
    $C proof check --store "$S" --db "$DB" --pieces "$p" "$f" >"$T/chk" 2>/dev/null
    check "proof check $f ($goal)" "0 valid" "$? $(head -n 1 "$T/chk" | cut -f 2)"
    $C proof export --store "$S" --db "$DB" --pieces "$p" --out "$T/c$k.cert" "$f" >"$T/exp" 2>&1
    check "export $f ($goal)" "0 $claim" "$? $(sed -n 's/^claim: \([A-Z]*\).*/\1/p' "$T/exp")"
    agree "$f ($goal)" "$T/c$k.cert" "$claim"
done
WIN2=$T/c4.cert # Black wins, kings only: a place for a cycle

# 1b. Through the manager and two local workers: a 5-piece loss whose
#     leaves rest on the 1-4 piece databases (captures resolved by the
#     reader), and a draw (two sections).
for spec in 'B:W30,31,K19:B6,K12|3000|LL' 'B:WK1:BK32|0|DD'; do
    IFS='|' read -r f nodes claim <<<"$spec"
    n=$(npieces "$f")
    S="$T/state$n"
    $C prove --fen "$f" --state "$S" --db "$DB" --pieces $((n - 1)) --workers 2 \
        --job-time 2 --job-nodes "$nodes" --budget 120 --quiet >/dev/null 2>"$T/log"
    check "prove $f exit" 0 $?
    $C proof check --state "$S" --db "$DB" >"$T/chk" 2>/dev/null
    check "proof check --state $f" "0 valid" "$? $(head -n 1 "$T/chk" | cut -f 2)"
    $C proof export --state "$S" --out "$T/m$n.cert" >"$T/exp$n" 2>&1
    check "export --state $f" "0 $claim" "$? $(sed -n 's/^claim: \([A-Z]*\).*/\1/p' "$T/exp$n")"
    agree "manager $f" "$T/m$n.cert" "$claim"
done
LEAVES=$T/m5.cert
check "the manager's certificate has database leaves and files" "1 1" \
    "$(sed -n 's/^database leaves: \([0-9]*\).*/\1/p' "$T/exp5" | awk '{print ($1 > 0)}') $(sed -n 's/^database files: //p' "$T/exp5" | awk '{print ($1 > 0)}')"
$C proof export --state "$T/state5" --out "$T/again.cert" >/dev/null 2>&1
cmp -s "$T/again.cert" "$LEAVES"
check "a second export is byte-identical" 0 $?

# 2. Damaged certificates: refused by both checkers, for the right reason.
#    KIND|certificate|what the Python checker's reason must say
for spec in "move|$LEAVES|is not legal here" "missing|$LEAVES|(a missing position)" \
    "reply|$LEAVES|(a defender's reply left out)" "leaf|$LEAVES|which does not give it" \
    "cycle|$WIN2|cycle or no progress" \
    "truncate|$LEAVES|the file is truncated" "version|$LEAVES|format version 9;"; do
    IFS='|' read -r kind cert reason <<<"$spec"
    where=$($TAMPER "$kind" "$cert" "$T/bad.cert")
    check "tamper $kind made" 0 $?
    $PY "$T/bad.cert" --db "$DB" >"$T/py.out" 2>/dev/null
    check "tamper $kind: Python says invalid" "1 invalid" "$? $(head -n 1 "$T/py.out")"
    check "tamper $kind: Python's reason" 1 "$(grep '^reason: ' "$T/py.out" | grep -cF "$reason")"
    check "tamper $kind: Python's position" "$where" "$(sed -n 's/^failing position: //p' "$T/py.out")"
    $C proof check --cert "$T/bad.cert" --db "$DB" >"$T/c.out" 2>/dev/null
    check "tamper $kind: C says invalid" "1 invalid" "$? $(head -n 1 "$T/c.out" | cut -f 2)"
done

# 2b. Database files other than the certificate's (prover/cert.h, FILES
#     THAT DIFFER): a digest changed in the certificate, and the leaves'
#     files compressed again another way (--no-threats: other bytes, the
#     same values). Without --other-files both checkers give no verdict
#     (exit 2), naming a file; with it, both check the values: valid, and
#     the files that differ counted.
# no_verdict NAME CERT DIR PATTERN [ARG]: both checkers exit 2 with a
# message matching PATTERN.
no_verdict() {
    $PY "$2" --db "$3" ${5:-} >/dev/null 2>"$T/err"
    check "$1: Python: no verdict" "2 1" "$? $(grep -c "$4" "$T/err")"
    $C proof check --cert "$2" --db "$3" ${5:-} >/dev/null 2>"$T/err"
    check "$1: C: no verdict" "2 1" "$? $(grep -c "$4" "$T/err")"
}
# valid_other NAME CERT DIR COUNT: with --other-files both checkers say
# valid and count COUNT (a pattern) files other than the certificate's.
valid_other() {
    local counted="^database files: [0-9]* listed, $4 of them other"
    $PY "$2" --db "$3" --other-files >"$T/py.out" 2>/dev/null
    check "$1, --other-files: Python valid, files counted" "0 valid 1" \
        "$? $(head -n 1 "$T/py.out") $(grep -c "$counted" "$T/py.out")"
    $C proof check --cert "$2" --db "$3" --other-files >"$T/c.out" 2>/dev/null
    check "$1, --other-files: C valid, files counted" "0 valid 1" \
        "$? $(head -n 1 "$T/c.out" | cut -f 2) $(grep -c "$counted" "$T/c.out")"
}
$TAMPER digest "$LEAVES" "$T/bad.cert" >/dev/null
check "tamper digest made" 0 $?
no_verdict "tamper digest" "$T/bad.cert" "$DB" 'differs from the certificate.s'
valid_other "tamper digest" "$T/bad.cert" "$DB" 1
mkdir -p "$T/other"
for f in "$DB"/*.wld; do
    b=$(basename "$f")
    [ $((${b:0:1} + ${b:1:1} + ${b:2:1} + ${b:3:1})) -le 4 ] && ln -s "$f" "$T/other/$b"
done
$C egdb compress --db "$T/other" --pieces 4 --no-threats >/dev/null 2>&1
check "the 1-4 set compressed again without threats" 0 $?
ndiff=$(for f in "$T"/other/*.cwl; do cmp -s "$f" "$DB/$(basename "$f")" || echo x; done | wc -l)
check "some files differ from the originals" 1 "$((ndiff > 0))"
no_verdict "recompressed set" "$LEAVES" "$T/other" 'differs from the certificate.s'
valid_other "recompressed set" "$LEAVES" "$T/other" '[1-9][0-9]*'
#     A leaf claim changed and checked against the other files: invalid,
#     the reason saying the files differ.
where=$($TAMPER leaf "$LEAVES" "$T/bad.cert")
$PY "$T/bad.cert" --db "$T/other" --other-files >"$T/py.out" 2>/dev/null
check "recompressed set, tamper leaf: Python invalid, files named" "1 invalid 1" \
    "$? $(head -n 1 "$T/py.out") $(grep '^reason: ' "$T/py.out" | grep -c 'checked against other files')"
$C proof check --cert "$T/bad.cert" --db "$T/other" --other-files >"$T/c.out" 2>/dev/null
check "recompressed set, tamper leaf: C invalid, files named" "1 invalid 1" \
    "$? $(head -n 1 "$T/c.out" | cut -f 2) $(grep '^reason: ' "$T/c.out" | grep -c 'checked against other files')"

# 3. The rules: the Python perft against the C engine's, every capture
#    route counted and routes merged, and the published figures
#    (../shared/reference/perft.md has them for the start position only):
#    the start, the README's king position, the position of `proof check
#    --help`'s second example (an opening, 11 against 12 men) and one
#    where kings capture the same men by different routes and white men
#    crown in the middle of a capture (5,655 routes, 5,395 moves at depth 6).
for spec in 'B:W21-32:B1-12|6|36768' 'B:W18,24,27,28,K10,K15:B12,16,20,K22,K25,K29|5|' \
    'W:W21,22,23,25,26,27,28,29,30,31,32:B1,2,3,4,5,6,7,8,9,10,11,15|6|' \
    'W:W9,10,11,K26,K27:B5,6,7,14,15,22,23,K31|6|'; do
    IFS='|' read -r f d published <<<"$spec"
    for conv in routes merged; do
        u=""
        pm=""
        [ $conv = merged ] && u="--unique" && pm="--merged"
        cv=$($C perft $u --fen "$f" "$d" 2>/dev/null | head -n 1)
        pv=$($PY --perft "$d" --fen "$f" $pm)
        check "perft $d $conv $f: Python = C" "$cv" "$pv"
        [ -n "$published" ] && check "perft $d $conv $f: published" "$published" "$pv"
    done
done

# 3b. The Python database reader against the C prober: random positions of
#     2-5 pieces, either side to move, captures and threats resolved by each
#     side its own way; every king order of the files read.
out=$(python3 "$HERE/cert_reader_check.py" "$C" "$DB" 5 1000 11)
check "Python reader = C prober ($out)" 0 $?

# 4. Exit statuses.
$C proof export --store "$T/store1" --db "$DB" --pieces 3 --out "$T/x.cert" 'B:W29,30:B3,4' \
    >/dev/null 2>&1
check "export, nothing stored" 2 $?
check "export, nothing stored: no file" 0 "$(ls "$T"/x.cert* 2>/dev/null | wc -l)"
# A root the databases hold is its own proof (cert.h): one leaf record.
# (Until now this export failed with an empty message: the store's "not
# found" outlived the database's answer.)
$C proof export --store "$T/store1" --db "$DB" --pieces 3 --out "$T/dbroot.cert" 'B:W30:B3' \
    >"$T/exp" 2>&1
check "export of a database root" "0 1" "$? $(sed -n 's/^database leaves: \([0-9]*\).*/\1/p' "$T/exp")"
agree "database root" "$T/dbroot.cert" WW
$PY "$T/none.cert" --db "$DB" >/dev/null 2>&1
check "Python, no certificate" 2 $?
$PY "$LEAVES" --db "$T/nodb" >/dev/null 2>&1
check "Python, databases missing" 2 $?
$C proof check --cert "$LEAVES" --db "$T/nodb" >/dev/null 2>&1
check "C, databases missing" 2 $?
# A store whose proof lost a record (the first record whose loss the
# check sees): export refuses it as not valid, exit 1, which the command
# reads from pcert_stats.invalid, not from its message's words (issue 42).
F=${TOOLS:-build/tests}/forge_worker
f1='B:W24,28:B5,K10'
for skip in 0 1 2 3 4 5 6 7 8 9; do
    rm -rf "$T/holed"
    "$F" copy-store "$T/store1" "$T/holed" $skip >/dev/null 2>&1 || break
    $C proof check --store "$T/holed" --db "$DB" --pieces 3 "$f1" >/dev/null 2>&1
    [ $? = 1 ] && break
done
$C proof export --store "$T/holed" --db "$DB" --pieces 3 --out "$T/h.cert" "$f1" >/dev/null \
    2>"$T/herr"
check "export, a record of the proof lost: exit 1" 1 $?
check "... says it is not valid" 1 "$(grep -c 'the stored proof is not valid' "$T/herr")"
check "... and writes nothing" 0 "$(ls "$T"/h.cert* 2>/dev/null | wc -l)"

# 5a. Partial databases: 1-3 complete and the 4-piece materials 0022,
#     1012, 0121 (twins) as partial bounds. White's two men against two
#     black men is a draw; the root's own bound is LD (Black at least
#     draws: that section is the root's 'B' leaf alone), and White's draw
#     rests on 16 more partial leaves. Once by `solve` into a store, once
#     through the manager and two workers into a state.
P=$T/pdb
$C egdb build --pieces 3 --dir "$P" >/dev/null 2>&1 &&
    $C egdb build --only 0022,1012,0121 --dir "$P" >/dev/null 2>&1
check "partial databases built" 0 $?
$C egdb verify --db "$P" --partial >"$T/pv" 2>/dev/null
check "egdb verify --partial: every bound held by its moves" "0 1" \
    "$? $(grep -c 'partial slices, every bound of [1-9][0-9]* positions held by its moves' "$T/pv")"
F='W:W21,22:B9,10'
$C solve --db "$P" --store "$T/pstore" --time 120 "$F" >/dev/null 2>&1
$C proof export --store "$T/pstore" --db "$P" --out "$T/ps.cert" "$F" >"$T/exp" 2>&1
check "partial: export --store" "0 DD 2 17" "$? $(sed -n 's/^claim: \([A-Z]*\).*/\1/p' "$T/exp") \
$(sed -n 's/^format: \([0-9]\).*/\1/p' "$T/exp") $(sed -n 's/.*of which partial: //p' "$T/exp")"
agree "partial, solve" "$T/ps.cert" DD "$P"
check "partial: Python counts the partial leaves" 17 "$(sed -n 's/^partial leaves: //p' "$T/py.out")"
$C prove --fen "$F" --state "$T/pstate" --db "$P" --workers 2 --job-time 5 --budget 240 \
    --quiet >/dev/null 2>"$T/log"
check "partial: prove --state" 0 $?
$C proof export --state "$T/pstate" --out "$T/pm.cert" >"$T/exp" 2>&1
check "partial: export --state" "0 DD 2" "$? $(sed -n 's/^claim: \([A-Z]*\).*/\1/p' "$T/exp") \
$(sed -n 's/^format: \([0-9]\).*/\1/p' "$T/exp")"
check "partial: the state's certificate names its scope" "3+partial" \
    "$(sed -n 's/^format: 2 (databases \(.*\))/\1/p' "$T/exp")"
agree "partial, prove --state" "$T/pm.cert" DD "$P"
check "partial: the certificate lists .pwl files" 1 \
    "$(python3 -c 'import struct,sys; d=open(sys.argv[1],"rb").read(); n=struct.unpack_from("<I",d,36)[0]; print(int(any(d[47+48*i]==1 for i in range(n))))' "$T/pm.cert")"

#     Without the .pwl files: no verdict, exit 2, the missing file named
#     as a partial database file.
mkdir -p "$T/nopwl"
ln -s "$P"/*.cwl "$T/nopwl/"
$C proof check --cert "$T/pm.cert" --db "$T/nopwl" >/dev/null 2>"$T/err"
check "partial: C without .pwl files: exit 2" 2 $?
check "partial: C names the partial file missing" 1 "$(grep -c '\.pwl: .*partial database file' "$T/err")"
$PY "$T/pm.cert" --db "$T/nopwl" >/dev/null 2>"$T/err"
check "partial: Python without .pwl files: exit 2" 2 $?
check "partial: Python names the partial file missing" 1 "$(grep -c '\.pwl: .*partial database file' "$T/err")"

#     The store checked without the .pwl files: the store records that
#     its proofs rest on 3+partial, so a leaf they took reads as "no
#     stored proof" for want of its file: no verdict (exit 2), both scopes
#     named, never "invalid". With the files: valid.
$C proof check --store "$T/pstore" --db "$T/nopwl" "$F" >"$T/c.out" 2>/dev/null
check "partial: proof check --store without .pwl files: cannot check, exit 2" "2 cannot check" \
    "$? $(head -n 1 "$T/c.out" | cut -f 2)"
check "partial: ... naming both scopes" 1 \
    "$(grep -c '^reason: .*used the 3+partial databases (recorded in the store).*the folder given holds 3:' "$T/c.out")"
$C proof check --store "$T/pstore" --db "$P" "$F" >"$T/c.out" 2>/dev/null
check "partial: proof check --store with them: valid" "0 valid" "$? $(head -n 1 "$T/c.out" | cut -f 2)"

#     A partial leaf's claim made stronger than its file's bound, and one
#     byte of a listed .pwl file changed: refused by both, named.
where=$($TAMPER bleaf "$T/pm.cert" "$T/bad.cert")
check "partial: tamper bleaf made" 0 $?
$PY "$T/bad.cert" --db "$P" >"$T/py.out" 2>/dev/null
check "partial: tamper bleaf: Python says invalid" "1 invalid" "$? $(head -n 1 "$T/py.out")"
check "partial: tamper bleaf: Python's reason" 1 "$(grep '^reason: ' "$T/py.out" | grep -c 'partial leaf claims .*, the partial database .*\.pwl says')"
check "partial: tamper bleaf: Python's position" "$where" "$(sed -n 's/^failing position: //p' "$T/py.out")"
$C proof check --cert "$T/bad.cert" --db "$P" >"$T/c.out" 2>/dev/null
check "partial: tamper bleaf: C says invalid" "1 invalid" "$? $(head -n 1 "$T/c.out" | cut -f 2)"
check "partial: tamper bleaf: C's position" "$where" "$(sed -n 's/^failing position: //p' "$T/c.out")"
$TAMPER pwl "$T/pm.cert" "$T/badpdb" "$P" >/dev/null
check "partial: tamper pwl made" 0 $?
no_verdict "partial: tamper pwl" "$T/pm.cert" "$T/badpdb" 'partial database file .*\.pwl: its size or SHA-256 differs'
no_verdict "partial: tamper pwl, --other-files" "$T/pm.cert" "$T/badpdb" \
    'partial database file .*\.pwl: its size or SHA-256 differs' --other-files

#     The Python .pwl reader against `checkers egdb probe`.
out=$(python3 "$HERE/cert_reader_check.py" "$C" "$P" --partial 1000 3)
check "Python partial reader = C prober ($out)" 0 $?

# 5b. A split: the 1-4 piece databases and 4 against 1 of 5 pieces (links
#     to the test databases' files), a 6-piece root whose leaves include
#     4-against-1 positions. Checked without the split: exit 2.
S4=$T/split
mkdir -p "$S4" "$T/only4"
for f in "$DB"/*.cwl; do
    k=$(basename "$f")
    nb=$((0x${k:0:1} + 0x${k:2:1}))
    nw=$((0x${k:1:1} + 0x${k:3:1}))
    if [ $((nb + nw)) -le 4 ]; then
        ln -s "$f" "$S4/" && ln -s "$f" "$T/only4/"
    elif [ $((nb + nw)) -eq 5 ] && { [ $nb -eq 4 ] || [ $nw -eq 4 ]; }; then
        ln -s "$f" "$S4/"
    fi
done
F='W:W14,K30:BK5,K6,K7,K10'
$C solve --db "$S4" --store "$T/sstore" --time 60 "$F" >/dev/null 2>&1
$C proof export --store "$T/sstore" --db "$S4" --out "$T/split.cert" "$F" >"$T/exp" 2>&1
check "split: export" "0 LL 4+4v1" "$? $(sed -n 's/^claim: \([A-Z]*\).*/\1/p' "$T/exp") \
$(sed -n 's/^format: 2 (databases \(.*\))/\1/p' "$T/exp")"
agree "split" "$T/split.cert" LL "$S4"
$C proof check --cert "$T/split.cert" --db "$T/only4" >/dev/null 2>"$T/err"
check "split: C without the split's files: exit 2" 2 $?
check "split: C names the split" 1 "$(grep -c 'split of the next piece count\|4+4v1' "$T/err")"
$PY "$T/split.cert" --db "$T/only4" >/dev/null 2>"$T/err"
check "split: Python without the split's files: exit 2" 2 $?
check "split: Python names the split" 1 "$(grep -c 'split of the next piece count' "$T/err")"
exit $fail
