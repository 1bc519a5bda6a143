#!/bin/sh
# End-to-end checks of the checkers command line: outputs, exit codes and
# error messages a script can rely on. Run by `make test` with $CHECKERS
# set to the binary.
set -u
C=${CHECKERS:-bin/checkers}
fail=0

. "$(dirname "$0")/lib_e2e.sh"

check "perft 10" 18391564 "$($C perft 10 2>/dev/null)"
check "perft --unique 9" 3963680 "$($C perft --unique 9 2>/dev/null)"
check "perft --fen white first" 1469 "$($C perft --fen 'W:W21-32:B1-12' 4 2>/dev/null)"
check "divide total" "total	302" "$($C perft --divide 3 2>/dev/null | tail -n 1)"
check "divide lines" 8 "$($C perft --divide 3 2>/dev/null | wc -l | tr -d ' ')"
check "moves count" 7 "$($C moves 'B:W21-32:B1-12' | wc -l | tr -d ' ')"
check "moves first" "9-13	W:W21,22,23,24,25,26,27,28,29,30,31,32:B1,2,3,4,5,6,7,8,10,11,12,13" \
    "$($C moves 'B:W21-32:B1-12.' | head -n 1)"
check "show capture" "1 legal move (capture compulsory): 14x23" \
    "$($C show 'B:W18:B14,1' | tail -n 1)"
check "show no move" "no legal move: Black loses" "$($C show 'B:W20:B' | tail -n 1)"

# Exit codes: 2 for bad usage or input, with a message naming the problem.
$C perft >/dev/null 2>&1;                 check "perft no depth exit" 2 $?
$C perft abc >/dev/null 2>&1;             check "perft bad depth exit" 2 $?
$C frobnicate >/dev/null 2>&1;            check "unknown command exit" 2 $?
$C perft --help >/dev/null 2>&1;          check "perft --help exit" 0 $?
$C show --help >/dev/null 2>&1;           check "show --help exit" 0 $?
$C moves --help >/dev/null 2>&1;          check "moves --help exit" 0 $?
msg=$($C show 'B:W33:B1' 2>&1); rc=$?
check "bad square exit" 2 $rc
case "$msg" in *"33"*"offset"*) echo "ok   bad square message";;
    *) echo "FAIL bad square message: $msg"; fail=1;; esac
msg=$($C moves 'B:W5,5:B1' 2>&1); rc=$?
check "twice exit" 2 $rc
case "$msg" in *twice*) echo "ok   twice message";; *) echo "FAIL twice message: $msg"; fail=1;; esac

exit $fail
