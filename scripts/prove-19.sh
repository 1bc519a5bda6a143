#!/bin/sh
# prove-19.sh BUDGET DB CHECKERS [PROVE_ARGS...] - runs (or resumes) the proof
# of each of the 19 published openings for BUDGET (e.g. 60s, 2h) with the
# goal the 2007 table claims (Draw: value; "<=Draw" for Black: >=draw for
# White, to move; "Loss" for Black: win for White), state in
# proofs/<opening>/, then writes results/compare-19.md, .csv and .svg with
# `checkers compare`. Run again, every proof resumes. Used by `make compare`.
# OPENINGS (environment; `make compare OPENINGS=1,4-6`) proves and compares
# only those openings (numbers of the table, ranges allowed).
set -u
budget=$1
db=$2
c=$3
shift 3
states=""
list=${OPENINGS:-1-19}
# chosen NO: whether opening NO is in $list
chosen() {
    for part in $(echo "$list" | tr ',' ' '); do
        case $part in
        *-*) lo=${part%-*} hi=${part#*-} ;;
        *) lo=$part hi=$part ;;
        esac
        case "$lo$hi" in
        *[!0-9]*|"") echo "prove-19: OPENINGS='$list': '$part' is not a number or a range" >&2; exit 2 ;;
        esac
        [ "$1" -ge "$lo" ] && [ "$1" -le "$hi" ] && return 0
    done
    return 1
}
chosen 1 || true # checks the list
# no, moves, published value: from the data file
grep -v '^#' openings/published-19-openings.tsv | tail -n +2 |
    while IFS='	' read -r no moves proof rest; do
        chosen "$no" || continue
        case $proof in
        Draw) goal=value ;;
        "<=Draw") goal=">=draw" ;;
        Loss) goal=win ;;
        *) echo "prove-19: opening $no: unknown published value '$proof'" >&2; exit 2 ;;
        esac
        state="proofs/$(echo "$moves" | tr ' ' _)"
        echo "== opening $no ($moves, published $proof for Black): goal $goal for White, $budget, state $state"
        # state/: one environment (issue 42); tree/: a state of the old layout
        if [ -f "$state/state/data.mdb" ] || [ -f "$state/tree/data.mdb" ]; then
            "$c" prove --state "$state" --db "$db" --budget "$budget" --quiet "$@"
        else
            "$c" prove --opening "$moves" --goal "$goal" --state "$state" --db "$db" \
                --budget "$budget" --quiet "$@"
        fi
        rc=$?
        # 0 proved, 1 stopped at the budget; anything else is a failure
        if [ $rc -gt 1 ]; then
            echo "prove-19: opening $no: checkers prove exited $rc" >&2
            exit $rc
        fi
    done || exit $?
for s in $(grep -v '^#' openings/published-19-openings.tsv | tail -n +2 | cut -f1,2 | tr ' \t' '_ '); do
    case $s in
    *_*) ;;
    *) no=$s; continue ;;
    esac
    chosen "$no" && states="$states proofs/$s"
done
if [ -z "$states" ]; then
    echo "prove-19: OPENINGS='$list' names none of the 19 openings" >&2
    exit 2
fi
# shellcheck disable=SC2086
exec "$c" compare --state $states --db "$db"
