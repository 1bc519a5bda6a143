# bench/egdb_bench_lib.sh - sourced by the database benches that time a build beside the long
# one (egdb_build7.sh, egdb_partial_speed.sh).
#
# bench_pause_setup PATTERN
#   the processes matching PATTERN (pgrep -f; empty: none) when it is called are paused by
#   `pause` (SIGSTOP) and resumed by `resume` (SIGCONT); a trap resumes them on any exit of the
#   script, Ctrl-C included. Sets PAUSED (their pids, for the report).
# link_complete DB WORK MAXP
#   symlinks every complete slice file DB/*.wld of at most MAXP pieces into WORK (each once:
#   an existing link is kept) and sets LINKED to how many there are. DB is only read.

bench_pause_setup() {
    PAUSED=""
    if [ -n "$1" ]; then
        PAUSED=$(pgrep -f -- "$1" | tr '\n' ' ' || true)
    fi
    trap resume EXIT
    trap 'resume; exit 130' INT TERM
}
resume() {
    if [ -n "$PAUSED" ]; then kill -CONT $PAUSED 2>/dev/null || true; fi
}
pause() {
    if [ -n "$PAUSED" ]; then kill -STOP $PAUSED 2>/dev/null || true; fi
}

# The piece count of a slice name "KKMM.RR" (a digit or a..c for 10..12 each).
slice_pieces() {
    local d=${1:0:4} pieces=0 c k
    for k in 0 1 2 3; do
        c=${d:$k:1}
        case $c in a) c=10 ;; b) c=11 ;; c) c=12 ;; esac
        pieces=$((pieces + c))
    done
    echo "$pieces"
}

link_complete() {
    local db=$1 work=$2 maxp=$3 f name
    LINKED=0
    mkdir -p "$work"
    for f in "$db"/*.wld; do
        [ -e "$f" ] || continue
        name=$(basename "$f" .wld)
        if [ "$(slice_pieces "$name")" -le "$maxp" ]; then
            [ -e "$work/$name.wld" ] || ln -s "$f" "$work/$name.wld"
            LINKED=$((LINKED + 1))
        fi
    done
}
