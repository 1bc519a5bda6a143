#!/bin/sh
# ensure-egdb.sh DIR N CHECKERS - makes sure DIR holds the complete 1-N
# piece endgame databases, building (or resuming) them when it does not.
# Used by `make prove`, `make demo` and `make egdb`.
#
# N = 8: the 1-7 set first (kept whole: the 8-piece build reads it), then
# the 8-piece splits one after the other, 4v4 first (where play goes),
# then 5v3, 6v2, 7v1 and 8v0, each built by the pipeline (a material at a
# time, its 2-bit files deleted once nothing reads them; docs/egdb.md,
# "Eight pieces"). Each split says its cost before it starts and is refused
# when the disk cannot hold it; SPLITS (e.g. "4v4") builds fewer.
set -eu
dir=$1
n=$2
c=$3
if [ -f "$dir/.complete-$n" ]; then
    exit 0
fi
case $n in
[1-4]) t="a few seconds" ;;
5) t="about a minute on 2 idle cores" ;;
6) t="about 10 minutes on 2 cores (2.5 billion positions; 28 MB compressed)" ;;
7) t="about 2.3 hours on 2 cores and 10 GB of disk, then 1.4 hours of verification (34.8 billion positions; docs/egdb.md)" ;;
8) t="the 1-7 set, then 4v4 (111.4 billion positions, about 10 hours on 2 cores and 16 GB more disk at the peak) and the other splits (about 30 hours more); docs/egdb.md, \"Eight pieces\"" ;;
*) t="many hours" ;;
esac
echo "== building the 1-$n piece endgame databases into $dir: $t."
echo "   Ctrl-C stops it; the next run resumes where it stopped."
if [ "$n" -le 7 ]; then
    "$c" egdb build --pieces "$n" --dir "$dir"
    touch "$dir/.complete-$n"
    exit 0
fi
"$0" "$dir" 7 "$c"
for s in ${SPLITS:-4v4 5v3 6v2 7v1 8v0}; do
    if [ -f "$dir/.complete-8-$s" ]; then
        continue
    fi
    echo "== 8 pieces, split $s"
    "$c" egdb build --pieces 8 --split "$s" --dir "$dir"
    touch "$dir/.complete-8-$s"
done
for s in 4v4 5v3 6v2 7v1 8v0; do
    [ -f "$dir/.complete-8-$s" ] || exit 0
done
touch "$dir/.complete-8"
