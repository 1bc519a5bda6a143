#!/bin/sh
# bench/partial-9-10.sh SRC DIR CHECKERS [MATERIALS] - bounds at 9 and 10
# pieces (issue 40, part 2; seed 000, Tables 3-5): links the complete
# databases of SRC (every .wld and .cwl file, with their folders' marks)
# into DIR, builds the partial-information databases of MATERIALS there
# (default: the men-only 0044, 0053, 0054 and 0055, colour twins implied,
# smaller counts first so that each uses the one below), and prints the
# resolved share by leading ranks (`checkers egdb stats`). DIR holds links
# and .pwl files only, so SRC is never written (a build may be running in
# it: only files that are whole are linked, and a slice file appears under
# its final name only when it is whole).
#
# What the 2007 project had below its 10-piece partial databases was the
# complete 2-9 set; what this machine has decides how much is resolved
# here, and the report says which complete counts were found.
set -eu
src=$1
dir=$2
c=$3
mats=${4:-0044,0053,0054,0055}
mkdir -p "$dir"
n=0
for f in "$src"/*.wld "$src"/*.cwl; do
    [ -e "$f" ] || continue
    b=$(basename "$f")
    [ -e "$dir/$b" ] || ln -s "$(cd "$(dirname "$f")" && pwd)/$b" "$dir/$b"
    n=$((n + 1))
done
if [ -d "$src/units" ]; then
    mkdir -p "$dir/units"
    for f in "$src"/units/*.done; do
        [ -e "$f" ] || continue
        [ -e "$dir/units/$(basename "$f")" ] || cp "$f" "$dir/units/"
    done
fi
echo "== $n complete slice files of $src linked into $dir"
echo "== partial build of $mats"
t0=$(date +%s)
"$c" egdb build --only "$mats" --dir "$dir"
t1=$(date +%s)
echo "== built in $((t1 - t0)) s"
"$c" egdb stats --db "$dir"
