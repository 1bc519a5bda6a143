#!/bin/bash
# End-to-end check of a remote worker's default proof store (worker.c,
# THE DEFAULT STORE): a worker started without --store keeps its store
# beside its databases, one per host and piece count, and keeps it
# across manager restarts and proofs:
#   1. a proof with the 4-piece databases: the store
#      DB/worker-store-<host>-4p is made and holds the proof's records;
#   2. the manager gone, a new proof of the same root on the same port:
#      the same worker reconnects, uses the same store (the records are
#      still there) and the proof ends with the database's value;
#   3. a proof with the 3-piece databases: the worker switches to
#      DB/worker-store-<host>-3p (records proved with 4-piece leaves
#      would make its jobs fail there).
# Run by `make test` with $CHECKERS and $CHECKERS_TEST_DB set.
set -u
C=${CHECKERS:-bin/checkers}
DB=${CHECKERS_TEST_DB:-}
if [ -z "$DB" ] || [ ! -d "$DB" ]; then
    echo "FAIL e2e_worker_store: CHECKERS_TEST_DB is not set (run through make test)"
    exit 1
fi
. "$(dirname "$0")/lib_e2e.sh"
e2e_setup e2e_worker_store

# the databases in a folder of this test (links), so the stores the
# worker makes beside them stay here
mkdir -p "$T/db"
ln -s "$DB"/* "$T/db/"

f='B:W30,31,K19:B6,K12'
want="$f	$($C egdb probe --db "$DB" "$f" | cut -f 2)"
records() { $C store stats --store "$1" 2>/dev/null | awk '/^records/ {print $2; exit}'; }
P=$(port 1)

# 1. The first proof; the worker has no --store.
manager_bg "$T/log1" --fen "$f" --state "$T/s1" --db "$DB" --pieces 4 --workers 0 \
    --listen 127.0.0.1:$P --job-nodes 3000 --budget 120 --quiet
worker_bg "$T/w.log" --connect 127.0.0.1:$P --db "$T/db" --token-file "$T/s1/token"
w=$wp
wait $mp
check "proof 1 with a remote worker and no --store: the database's value" "0 $want" \
    "$? $(head -n 1 "$T/out")"
store4=$(ls -d "$T"/db/worker-store-*-4p 2>/dev/null)
check "its store is beside the databases, named for the host and 4 pieces" 1 \
    "$([ -n "$store4" ] && [ -f "$store4/data.mdb" ] && echo 1)"
n1=$(records "$store4")
check "... and holds the proof's records" 1 $((${n1:-0} > 0))

# proof K PIECES: a new manager on state sK with the first one's port and
# token, proving f with the PIECES-piece databases to the end
proof() {
    mkdir -p "$T/s$1"
    cp "$T/s1/token" "$T/s$1/token"
    chmod 600 "$T/s$1/token"
    manager_bg "$T/log$1" --fen "$f" --state "$T/s$1" --db "$DB" --pieces "$2" --workers 0 \
        --listen 127.0.0.1:$P --job-nodes 3000 --budget 120 --quiet
    wait $mp
    check "proof $1 with the $2-piece databases, the worker reconnected: the database's value" \
        "0 $want" "$? $(head -n 1 "$T/out")"
}

# 2. A new manager, a new state: the worker comes back by itself, to the
#    same store.
proof 2 4
check "... with the same store, opened once (kept across the restart)" 1 \
    "$(grep -c "proof store $store4\$" "$T/w.log")"
n2=$(records "$store4")
check "... whose records were kept" 1 $((${n2:-0} >= ${n1:-1}))

# 3. The same root proved with the 3-piece databases: another store.
proof 3 3
check "... the worker switched to the 3-piece store" 1 \
    "$(grep -c 'proof store .*/worker-store-.*-3p$' "$T/w.log")"
kill $w 2>/dev/null
wait $w 2>/dev/null
exit $fail
