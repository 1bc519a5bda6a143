#!/bin/bash
# bench/cert.sh - what a proof certificate costs: export time, size per
# record, and the time of both checkers on it (the C check of the
# certificate, `proof check --cert`, and the Python checker,
# checker/checkcert.py, on one core), beside `proof check` of the same
# proof from its store as the baseline measured in the same run.
#
#   bash bench/cert.sh --state DIR [--db DIR]
#   bash bench/cert.sh --store PATH --db DIR --pieces N FEN
#
# Prints one Markdown table row per run (results/certificate.md has them),
# then the machine. Not part of `make bench` (the Python check of a large
# proof takes minutes).
set -u
C=${CHECKERS:-bin/checkers}
HERE=$(cd "$(dirname "$0")" && pwd)
OUT=${OUT:-$(mktemp -d "${TMPDIR:-/tmp}/bench_cert.XXXXXX")}
args=("$@")
db=""
for ((i = 0; i < $#; i++)); do
    [ "${args[$i]}" = --db ] && db=${args[$((i + 1))]}
done
cert="$OUT/bench.cert"

# wall and CPU seconds of a command: "wall cpu" on fd 3
timed() {
    local t0 t1
    t0=$(date +%s.%N)
    /usr/bin/time -f "%U %S" -o "$OUT/time" "$@" >"$OUT/out" 2>"$OUT/err"
    local rc=$?
    t1=$(date +%s.%N)
    printf "%.2f %.2f\n" "$(echo "$t1 - $t0" | bc)" "$(awk '{print $1 + $2}' "$OUT/time")" >&3
    return $rc
}

exec 3>"$OUT/t"
timed $C proof check "${args[@]}" || { echo "proof check failed: $(cat "$OUT/out" "$OUT/err")"; exit 1; }
base=$(tail -n 1 "$OUT/t")
timed $C proof export "${args[@]}" --out "$cert" || { echo "export failed: $(cat "$OUT/err")"; exit 1; }
exp=$(tail -n 1 "$OUT/t")
npos=$(sed -n 's/^positions: //p' "$OUT/out")
nleaf=$(sed -n 's/^database leaves: \([0-9]*\).*/\1/p' "$OUT/out")
nfiles=$(sed -n 's/^database files: //p' "$OUT/out")
bytes=$(stat -c %s "$cert")
raw=$(sed -n 's/.*(body \([0-9]*\) before.*/\1/p' "$OUT/out")
timed $C proof check --cert "$cert" --db "$db" || { echo "C check: $(cat "$OUT/out")"; exit 1; }
cchk=$(tail -n 1 "$OUT/t")
timed taskset -c 0 python3 "$HERE/../checker/checkcert.py" "$cert" --db "$db" ||
    { echo "Python check: $(cat "$OUT/out")"; exit 1; }
pchk=$(tail -n 1 "$OUT/t")
# Times are wall seconds with the CPU seconds (user + system) in brackets:
# on a shared machine the CPU time is the one to compare.
w() { echo "$1 ($2)"; }
echo "| positions | leaves | files | bytes | bytes a position | raw bytes a position | export s | proof check (store) s | C check (cert) s | Python check s, one core |"
echo "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
echo "| $npos | $nleaf | $nfiles | $bytes | $(printf "%.2f" "$(echo "$bytes / $npos" | bc -l)") | $(printf "%.2f" "$(echo "$raw / $npos" | bc -l)") | $(w $exp) | $(w $base) | $(w $cchk) | $(w $pchk) |"
echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(python3 --version)"
echo "certificate kept in $cert"
