#!/bin/bash
# End-to-end checks of the state's upgrade (issue 42: one environment;
# manager/tree.h, THE STATE'S LAYOUT). A finished proof and an unfinished
# one are written back in the layout states had before (<state>/tree and
# <state>/proofs, two LMDB environments) by forge_worker old-layout; then
#   - every reader upgrades the old state at open, and `proof check
#     --state` finds the same root's value, valid;
#   - `prove --state` resumes an unfinished old state to the database's
#     value, after the upgrade;
#   - a SIGKILL at each step of the upgrade (the test hook
#     CHECKERS_UPGRADE_KILL=STEP kills the process at that step: the
#     script waits on that exit, never on time) followed by a rerun of
#     the same command finishes the upgrade, loses no record, and gives
#     the same answer.
# Run by `make test` with $CHECKERS and $CHECKERS_TEST_DB set.
set -u
C=${CHECKERS:-bin/checkers}
DB=${CHECKERS_TEST_DB:-}
if [ -z "$DB" ] || [ ! -d "$DB" ]; then
    echo "FAIL e2e_state_upgrade: CHECKERS_TEST_DB is not set (run through make test)"
    exit 1
fi
. "$(dirname "$0")/lib_e2e.sh"
e2e_setup e2e_state_upgrade
F="${TOOLS:-build/tests}/forge_worker"

f='B:W30,31,K19:B6,K12'
S="$T/good"
$C prove --fen "$f" --state "$S" --db "$DB" --pieces 4 --workers 2 --job-nodes 3000 --quiet \
    --no-root-jobs >"$T/out" 2>/dev/null
check "a finished proof" "0 $f	loss" "$? $(head -n 1 "$T/out")"
check "... kept in one environment (state/), nothing else" "1 0 0" \
    "$([ -f "$S/state/data.mdb" ] && echo 1) $(ls -d "$S/tree" "$S/proofs" 2>/dev/null | wc -l) \
$(ls -d "$S/state.tmp" 2>/dev/null | wc -l)"
$C proof check --state "$S" >"$T/chk" 2>/dev/null
check "... which the checker accepts" "0 valid" "$? $(head -n 1 "$T/chk" | cut -f 2)"
bound=$(grep '^bound:' "$T/chk")
records=$($C store stats --store "$S/state" --json | jq .records)
check "... its store read as any store (store stats on state/)" 1 $((records > 10))
$C store export --store "$S/state" 2>/dev/null | sort >"$T/records"

# the layout before issue 42, written back from the state
old() { # DIR: a copy of the good state in the old layout
    rm -rf "$1" && cp -r "$S" "$1" && "$F" old-layout "$1"
}
O="$T/old"
old "$O"
check "an old-layout state made" "0 1 1 0" \
    "$? $(ls -d "$O/tree" | wc -l) $(ls -d "$O/proofs" | wc -l) $(ls -d "$O/state" 2>/dev/null | wc -l)"

# a reader upgrades it: the same value, valid, every record kept
$C proof check --state "$O" >"$T/chk" 2>"$T/err"
check "proof check --state on the old layout: valid, the same bound" "0 valid $bound" \
    "$? $(head -n 1 "$T/chk" | cut -f 2) $(grep '^bound:' "$T/chk")"
check "... the state upgraded in place (state/ only)" "1 0" \
    "$([ -f "$O/state/data.mdb" ] && echo 1) $(ls -d "$O/tree" "$O/proofs" 2>/dev/null | wc -l)"
$C store export --store "$O/state" 2>/dev/null | sort >"$T/after"
check "... every record kept" "" "$(comm -3 "$T/records" "$T/after" | head -n 3)"
$C tree --state "$O" --depth 0 >"$T/tree" 2>/dev/null
check "... and tree reads it" 0 $?

# a SIGKILL at each step of the upgrade, then the same command again
for step in copied synced renamed removed-tree; do
    D="$T/kill-$step"
    old "$D"
    CHECKERS_UPGRADE_KILL=$step $C proof check --state "$D" >/dev/null 2>&1
    check "killed at '$step' (SIGKILL: exit 137)" 137 $?
    $C proof check --state "$D" >"$T/chk" 2>"$T/err"
    check "... rerun: valid, the same bound" "0 valid $bound" \
        "$? $(head -n 1 "$T/chk" | cut -f 2) $(grep '^bound:' "$T/chk")"
    check "... the upgrade finished (state/ only)" "1 0 0" \
        "$([ -f "$D/state/data.mdb" ] && echo 1) $(ls -d "$D/tree" "$D/proofs" 2>/dev/null | wc -l) \
$(ls -d "$D/state.tmp" 2>/dev/null | wc -l)"
    $C store export --store "$D/state" 2>/dev/null | sort >"$T/after"
    check "... no record lost" "" "$(comm -3 "$T/records" "$T/after" | head -n 3)"
    rm -rf "$D"
done

# an unfinished proof of the old layout: `prove --state` upgrades it and
# resumes it to the database's value
U="$T/unfinished"
$C prove --fen "$f" --state "$U" --db "$DB" --pieces 4 --workers 0 --job-nodes 3000 --no-root-jobs \
    --budget 1 --quiet >/dev/null 2>&1 # no worker: the tree made, nothing proved
"$F" old-layout "$U"
check "an unfinished proof in the old layout" "0 1" "$? $(ls -d "$U/tree" | wc -l)"
CHECKERS_UPGRADE_KILL=synced $C prove --state "$U" --workers 1 --quiet >/dev/null 2>&1
check "prove --state killed during the upgrade (exit 137)" 137 $?
$C prove --state "$U" --workers 1 --quiet >"$T/o" 2>"$T/err"
check "... then resumed: the database's value" "0 $f	loss" "$? $(head -n 1 "$T/o")"
$C proof check --state "$U" >"$T/chk" 2>/dev/null
check "... and it checks" "0 valid" "$? $(head -n 1 "$T/chk" | cut -f 2)"

exit $fail
