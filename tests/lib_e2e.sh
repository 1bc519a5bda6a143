# lib_e2e.sh - sourced by the end-to-end scripts (tests/e2e_*.sh):
# check NAME EXPECTED ACTUAL prints "ok" or "FAIL ..." and sets fail=1 on a
# mismatch; each script ends with `exit $fail`.
fail=0
check() { # name, expected, actual
    if [ "$2" != "$3" ]; then
        echo "FAIL $1: expected [$2] got [$3]"
        fail=1
    else
        echo "ok   $1"
    fi
}

# wait_for SECONDS COMMAND...: runs COMMAND until it succeeds, at most
# SECONDS; returns 1 when it never did. The checks wait on what they need
# (a log line, a file, a process gone), never on a fixed time, so that a
# loaded or a fast machine gives the same verdict.
wait_for() {
    local end=$((SECONDS + $1))
    shift
    until "$@"; do
        [ "$SECONDS" -ge "$end" ] && return 1
        sleep 0.05
    done
}

# e2e_setup NAME: the temporary folder $T (removed at the end, unless KEEP
# is set) and the background processes listed in $pids (killed at the
# end). For the scripts that start managers and workers.
e2e_setup() {
    T=$(mktemp -d "${TMPDIR:-/tmp}/$1.XXXXXX") || { echo "FAIL mktemp"; exit 1; }
    pids=""
    trap 'for p in $pids; do kill -9 "$p" 2>/dev/null; done; umount "$T"/* 2>/dev/null; [ -n "${KEEP:-}" ] || rm -rf "$T"' EXIT
    trap 'exit 1' INT TERM
}

# port K: a free-looking port: bash cannot ask the kernel, so pick one
# from the pid and K, and move on while something answers there.
port() {
    local p=$((20000 + ($$ * 7 + $1) % 30000))
    while (exec 3<>/dev/tcp/127.0.0.1/$p) 2>/dev/null; do p=$((p + 1)); done
    echo $p
}

# A manager's log says it listens, or the manager ($2) is gone.
gone() { ! kill -0 "$1" 2>/dev/null; }
listening() { grep -q 'listening on port' "$1" 2>/dev/null || gone "$2"; }

# manager_bg LOG ARGS...: `$C prove ARGS` in the background (stdout in
# $T/out, stderr in LOG), its pid in $mp and $pids; returns once it
# listens (or has ended).
manager_bg() {
    local log=$1
    shift
    $C prove "$@" >"$T/out" 2>"$log" &
    mp=$!
    pids="$pids $mp"
    wait_for 60 listening "$log" $mp
}

# worker_bg LOG ARGS...: `$C worker ARGS` in the background (stderr in
# LOG), its pid in $wp and $pids.
worker_bg() {
    local log=$1
    shift
    $C worker "$@" 2>"$log" &
    wp=$!
    pids="$pids $wp"
}
