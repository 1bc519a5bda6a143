#!/bin/sh
# slurm-egdb.sh DIR N [SPLITS] - builds the 1-N piece endgame databases in
# DIR (a folder every node sees) on a Slurm cluster, as job arrays.
#
# The unit of work is a unit: a material and its colour-flipped twin
# (egdb/pipeline.h; `checkers egdb units --pieces n` lists them). A unit
# needs the smaller databases (captures) and the units of its piece count
# with one man fewer (promotions), so the units of n pieces and m men
# never need each other: each such level is one job array, one task a
# unit, and each array waits (--dependency=afterok) for the one before it.
# Every task runs `checkers egdb build --pieces n --unit KKMM --pipeline`:
# it builds the unit's slice pairs, checks every position against its
# successors, compresses it and compares the compressed files with the
# 2-bit ones, then marks it done (DIR/units/KKMM.done). A last job runs
# the whole build, which finds every unit done and only finishes: for 8
# pieces it deletes the 2-bit files no unit reads any more. The files are
# byte for byte those of a build on one machine.
#
# SPLITS (e.g. "4v4") restricts the top piece count; the smaller ones are
# built whole. A task stopped (time limit, scancel, a node lost) leaves its
# finished slice pairs; submitting the script again resumes: a done unit's
# task ends at once.
#
# Environment:
#   CHECKERS     the program (default: bin/checkers beside this script)
#   SBATCH_ARGS  more sbatch options for every job (default "-c 2": two
#                threads a task), e.g. "-p big -c 16 --mem=24G --time=12:00:00"
#   FROM         the first piece count to build (default 1; the counts below
#                must be complete in DIR)
#   EGDB_NO_DISK_CHECK=1  submit without the disk check (see below)
# Prints the job ids, the last one's last. docs/slurm.md has the details.
set -eu
if [ $# -lt 2 ]; then
    echo "usage: $0 DIR N [SPLITS]" >&2
    exit 2
fi
dir=$1
n_top=$2
splits=${3:-}
here=$(cd "$(dirname "$0")" && pwd)
c=${CHECKERS:-$here/../bin/checkers}
args=${SBATCH_ARGS:--c 2}
from=${FROM:-1}
[ -x "$c" ] || { echo "$0: no program at $c (make, or set CHECKERS)" >&2; exit 2; }
command -v sbatch >/dev/null || { echo "$0: sbatch not found" >&2; exit 2; }
mkdir -p "$dir/slurm"
dir=$(cd "$dir" && pwd)
c=$(cd "$(dirname "$c")" && pwd)/$(basename "$c")

# The cost first, and a refusal when the folder's disk cannot hold it: the
# tasks keep their 2-bit files (only the last job deletes), so the peak is
# every 2-bit file of the build and its compressed files, as a build with
# --keep-build-files has it. Not when every unit of the top count is done
# already (a pipelined build deleted 2-bit files that the estimate would
# count again); the estimate also counts again the units a pipelined build
# on one machine finished and dropped before the folder came to the
# cluster: EGDB_NO_DISK_CHECK=1 skips it then.
# shellcheck disable=SC2086
done_line=$("$c" egdb units --pieces "$n_top" ${splits:+--split "$splits"} --dir "$dir" 2>&1 >/dev/null | tail -n 1)
all_done=$(echo "$done_line" | awk '{ for (i = 1; i < NF; i++) if ($(i + 1) == "of" && $(i + 3) == "units") { print ($i == $(i + 2)) ? 1 : 0; exit } }')
if [ "${EGDB_NO_DISK_CHECK:-0}" != 1 ] && [ "${all_done:-0}" != 1 ]; then
    # shellcheck disable=SC2086
    "$c" egdb build --pieces "$n_top" ${splits:+--split "$splits"} --keep-build-files --estimate \
        --dir "$dir" >&2 || {
        echo "$0: the build does not fit $dir (above; EGDB_NO_DISK_CHECK=1 skips the check); nothing submitted" >&2
        exit 1
    }
fi

dep=""
n=$from
while [ "$n" -le "$n_top" ]; do
    split_arg=""
    if [ "$n" -eq "$n_top" ] && [ -n "$splits" ]; then
        split_arg="--split $splits"
    fi
    # shellcheck disable=SC2086
    "$c" egdb units --pieces "$n" $split_arg >"$dir/slurm/units-$n.tsv"
    m=0
    while [ "$m" -le "$n" ]; do
        list=$dir/slurm/units-$n-$m.tsv
        awk -F '\t' -v m="$m" '$2 == m' "$dir/slurm/units-$n.tsv" >"$list"
        k=$(wc -l <"$list")
        if [ "$k" -gt 0 ]; then
            # shellcheck disable=SC2086
            jid=$(sbatch --parsable $args --job-name="egdb-$n-$m" --array=0-$((k - 1)) \
                ${dep:+--dependency=afterok:$dep} --output="$dir/slurm/egdb-$n-$m-%a.out" \
                --wrap "u=\$(sed -n \"\$((SLURM_ARRAY_TASK_ID + 1))p\" '$list' | cut -f 3) &&
                    exec '$c' egdb build --pieces $n --unit \"\$u\" --pipeline --dir '$dir' \
                    --threads \${SLURM_CPUS_PER_TASK:-1}")
            dep=${jid%%;*}
            echo "$dep	egdb-$n-$m	$k units"
        fi
        m=$((m + 1))
    done
    n=$((n + 1))
done
# The last job: the whole build finds every unit done, compresses what has
# no compressed file yet and, for 8 pieces, drops the 2-bit files.
final_args="--pieces $n_top"
[ -n "$splits" ] && final_args="$final_args --split $splits"
# shellcheck disable=SC2086
jid=$(sbatch --parsable $args --job-name="egdb-finish" ${dep:+--dependency=afterok:$dep} \
    --output="$dir/slurm/egdb-finish.out" \
    --wrap "exec '$c' egdb build $final_args --dir '$dir' --threads \${SLURM_CPUS_PER_TASK:-1}")
echo "${jid%%;*}	egdb-finish"
