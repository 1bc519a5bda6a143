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
