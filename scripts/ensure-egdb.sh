#!/bin/sh
# ensure-egdb.sh DIR N CHECKERS - makes sure DIR holds the complete 1-N
# piece endgame databases, building (or resuming) them when it does not.
# Used by `make prove` and `make demo`.
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
6) t="about 10 minutes on 2 cores (2.5 billion positions; 27 MB compressed)" ;;
7) t="about 2.3 hours on 2 cores and 10 GB of disk, then 1.4 hours of verification (34.8 billion positions; docs/egdb.md)" ;;
*) t="many hours" ;;
esac
echo "== building the 1-$n piece endgame databases into $dir: $t."
echo "   Ctrl-C stops it; the next run resumes where it stopped."
"$c" egdb build --pieces "$n" --dir "$dir"
touch "$dir/.complete-$n"
