#!/bin/bash
# End-to-end check of the README's main command on a fresh clone: the
# repository is cloned into a temporary folder (what has been committed,
# nothing of this work tree: no proofs/, no egdb-data/, no build/), and
# there `make run` is run with small databases and a budget. It must build,
# make its databases, start the proof and stop at its budget with exit 0;
# run again, it resumes; `checkers prove --state DIR` alone resumes too
# (the state keeps its databases' folder). The clone is built with -O1 to
# keep the suite short: what this checks is the path a new user takes
# (folders, databases, state), not speed. Then `make compare` and `make
# frontier` run there too, on two openings and one rung with small budgets.
# Run by `make test`.
set -u
C=${CHECKERS:-bin/checkers}
fail=0
. "$(dirname "$0")/lib_e2e.sh"
R=$(git -C "$(dirname "$0")" rev-parse --show-toplevel 2>/dev/null)
if [ -z "$R" ]; then
    echo "ok   e2e_fresh: skipped (not in a git repository)"
    exit 0
fi
T=$(mktemp -d "${TMPDIR:-/tmp}/e2e_fresh.XXXXXX") || { echo "FAIL mktemp"; exit 1; }
trap 'rm -rf "$T"' EXIT
git clone -q "$R" "$T/clone"
check "clone" 0 $?
# ../shared beside the clone, as beside the repository
[ -d "$R/../shared" ] && ln -s "$(cd "$R/.." && pwd)/shared" "$T/shared"
cd "$T/clone" || exit 1
state=proofs/12-16_24-19_10-14
jobs() { bin/checkers tree --state "$state" --depth 0 2>/dev/null | sed -n 2p |
    grep -o '[0-9]* jobs answered' | cut -d ' ' -f 1; }

# 1. The main job, from nothing: 1-4 piece databases, 20 s of proving;
#    jobs of 2 s that do not grow (--job-max), so that the short resumed
#    runs below each answer some.
make run PIECES=4 OPT=-O1 PROVE_ARGS="--budget 20 --job-time 2 --job-max 2 --quiet" >"$T/run1" 2>&1
check "make run on a fresh clone: exit 0" 0 $?
check "it proved with the opening's root" 1 \
    "$(grep -c '^B:W.*	\(unknown\|>=draw\|win\|draw\|loss\|<=draw\)$\|^W:W.*	\(unknown\|>=draw\|win\|draw\|loss\|<=draw\)$' "$T/run1" | awk '{print ($1 >= 1)}')"
check "its state is in $state" 1 "$([ -f "$state/state/data.mdb" ] && echo 1)"
check "the first start says what to expect, make demo, more workers" 3 \
    "$(grep -c '== first start of the proof\|make demo. shows\|More workers' "$T/run1")"
check "it stopped at its budget, resumable" 1 "$(grep -c '^continue with: ' "$T/run1")"
j1=$(jobs)
check "jobs were answered" 1 $((${j1:-0} > 0))

# 2. Run again: it resumes (more jobs, the same state).
make run PIECES=4 OPT=-O1 PROVE_ARGS="--budget 10 --job-time 2 --quiet" >"$T/run2" 2>&1
check "make run again: exit 0" 0 $?
j2=$(jobs)
check "it resumed: more jobs answered" 1 $((${j2:-0} > ${j1:-0}))
check "... without the first start's words" 0 "$(grep -c 'first start of the proof' "$T/run2")"

# 3. The state directory alone is enough to resume.
bin/checkers prove --state "$state" --budget 10 --quiet >"$T/run3" 2>"$T/err3"
check "prove --state DIR alone: stopped at its budget (exit 1)" 1 $?
check "... no databases asked for" 0 "$(grep -c 'give --db' "$T/err3")"
j3=$(jobs)
check "... and it worked on" 1 $((${j3:-0} > ${j2:-0}))

# 4. The comparison with the 2007 table, for two openings with a small
#    budget: each proved (or resumed), then the table written.
make compare PIECES=4 OPT=-O1 BUDGET=4s OPENINGS=1,3 PROVE_ARGS="--job-time 1 --job-max 1" \
    >"$T/cmp" 2>&1
check "make compare OPENINGS=1,3 on a fresh clone: exit 0" 0 $?
check "... its table: openings 1 and 3 run, the other 17 not" "0 0 17" \
    "$(grep '^| 1 |' results/compare-19.md | grep -c 'not run') \
$(grep '^| 3 |' results/compare-19.md | grep -c 'not run') $(grep -c '^| [0-9]* |.*| not run |' results/compare-19.md)"
make compare PIECES=4 OPT=-O1 OPENINGS=x >"$T/cmpx" 2>&1
check "make compare OPENINGS=x: refused, saying why" "1 1" \
    "$(grep -c 'Error' "$T/cmpx" | awk '{print ($1 >= 1)}') $(grep -c "'x' is not a number" "$T/cmpx")"

# 5. The frontier, one rung of one opening, with a small budget.
make frontier PIECES=4 OPT=-O1 BUDGET=4s \
    FRONTIER_ARGS="--openings 1 --rungs 8 --job-time 1 --out $T/fr" >"$T/fr.out" 2>&1
check "make frontier (opening 1, rung 8) on a fresh clone: exit 0" 0 $?
check "... its table written" 1 "$([ -s "$T/fr/frontier.tsv" ] && [ -s "$T/fr/frontier.md" ] && echo 1)"

exit $fail
