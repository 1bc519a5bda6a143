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
