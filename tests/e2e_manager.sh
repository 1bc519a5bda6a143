#!/bin/bash
# End-to-end checks of the proof-tree manager (`checkers prove`), its
# workers and `proof check --state`, on loopback: proofs whose values the
# 1-5 piece databases confirm (the manager uses fewer pieces, and small
# jobs, so that the tree has to grow), the manager killed with SIGKILL
# mid-proof again and again, a worker killed mid-job, malformed frames, a
# wrong token and version, and the status page. Run by `make test` with
# $CHECKERS and $CHECKERS_TEST_DB set. Needs bash (/dev/tcp).
set -u
C=${CHECKERS:-bin/checkers}
DB=${CHECKERS_TEST_DB:-}
fail=0
if [ -z "$DB" ] || [ ! -d "$DB" ]; then
    echo "FAIL e2e_manager: CHECKERS_TEST_DB is not set (run through make test)"
    exit 1
fi
. "$(dirname "$0")/lib_e2e.sh"
e2e_setup e2e_manager
dbval() { $C egdb probe --db "$DB" "$1" | cut -f 2; }
npieces() { echo "$1" | tr -cd '0-9,:' | tr ':,' '\n\n' | grep -c .; }

# 1. Proofs through the manager and two local workers: a loss (the tree
#    grows: each job may search only 3000 df-pn positions), a draw (two
#    questions, one for each side) and a win; each agrees with the
#    databases and passes the independent checker over the whole state.
for spec in 'B:W30,31,K19:B6,K12|3000' 'B:WK1:BK32|0' 'W:WK10:B26,K29|0'; do
    f=${spec%|*}
    nodes=${spec#*|}
    n=$(npieces "$f")
    S="$T/s$n-$nodes"
    out=$($C prove --fen "$f" --state "$S" --db "$DB" --pieces $((n - 1)) --workers 2 \
        --job-time 2 --job-nodes "$nodes" --budget 120 --quiet 2>"$T/log")
    rc=$?
    check "prove $f exit" 0 $rc
    check "prove $f = database" "$f	$(dbval "$f")" "$(echo "$out" | head -n 1)"
    $C proof check --state "$S" --db "$DB" >"$T/chk" 2>/dev/null
    check "proof check --state $f" "0 valid" "$? $(head -n 1 "$T/chk" | cut -f 2)"
    check "goal settled $f" 1 "$(grep -c 'goal value: settled' "$T/chk")"
done
# A job whose df-pn proves the exact value runs no alpha-beta after it
# (worker.c, AN EXACT VALUE NEEDS NO SCORE): its result goes at once; a
# job left open still scores its position for the tree.
exact=$(cat "$T"/s*/workers/*.log | grep -E 'job [0-9]+: (win|loss|draw) \(settled\)')
check "some jobs proved an exact value" 1 "$([ -n "$exact" ] && echo 1 || echo 0)"
check "exact jobs ran no alpha-beta" "$(echo "$exact" | wc -l)" "$(echo "$exact" | grep -c ', no alpha-beta')"
check "open jobs scored by alpha-beta" 1 \
    "$(cat "$T"/s5-3000/workers/*.log | grep -E '\(budget\).*, alpha-beta [0-9]+ nodes' | head -n 1 | wc -l)"
S="$T/s5-3000"
# Resuming a finished proof answers at once; the tree shows it.
out=$($C prove --state "$S" --db "$DB" --quiet 2>/dev/null)
check "resume a finished proof" "0 B:W30,31,K19:B6,K12	loss" "$? $(echo "$out" | head -n 1)"
check "tree root line" "B:W30,31,K19:B6,K12	loss" "$($C tree --state "$S" --db "$DB" | head -n 1)"
check "tree --pdn has games" 1 "$($C tree --state "$S" --db "$DB" --pdn --depth 2 |
    awk '/^\[Event/ {n++} END {print (n > 3)}')"

# 2. The manager killed with SIGKILL mid-proof, four times, each time on an
#    event: after its run's 10th admitted result (the root needs about 250
#    jobs of 300 df-pn positions when budgets do not grow, --job-max equal
#    to --job-time, and the root's own jobs are off: they grow past the
#    cap; so every kill lands mid-proof, however fast the machine). After each kill: every record stored before it is
#    still there, and every result the log says was admitted is counted
#    in the tree; the final answer is the database's and checks.
f='B:W30,31,K19:B6,K12'
S="$T/kill"
args="--db $DB --workers 2 --job-time 2 --quiet"
admitted() { cat "$T"/klog* 2>/dev/null | grep -c 'records admitted (result'; }
this_run() {
    local n
    n=$(grep -c 'records admitted (result' "$T/klog$1" 2>/dev/null)
    [ "${n:-0}" -ge 10 ]
}
no_workers() { ! pgrep -f "$S/workers/" >/dev/null; }
$C prove --fen "$f" --state "$S" --pieces 4 --job-nodes 300 --job-max 2 --no-root-jobs $args \
    >"$T/out" \
    2>"$T/klog0" &
mp=$!
pids="$pids $mp"
kills=0
for round in 1 2 3 4; do
    wait_for 300 eval "this_run $((round - 1)) || gone $mp"
    if kill -9 $mp 2>/dev/null; then
        kills=$((kills + 1))
    fi
    wait $mp 2>/dev/null
    wait_for 60 no_workers # its local workers follow it (PDEATHSIG)
    $C store export --store "$S/state" 2>/dev/null | cut -f 1 | sort >"$T/before"
    answered=$($C tree --state "$S" --db "$DB" --depth 0 2>/dev/null | sed -n 2p |
        grep -o '[0-9]* jobs answered' | cut -d ' ' -f 1)
    check "kill $round: every admitted result kept" 1 $((${answered:-0} >= $(admitted)))
    $C prove --state "$S" $args >"$T/out" 2>"$T/klog$round" &
    mp=$!
    pids="$pids $mp"
    wait_for 60 listening "$T/klog$round" $mp
    $C store export --store "$S/state" 2>/dev/null | cut -f 1 | sort >"$T/after"
    check "kill $round: no stored record lost" "" "$(comm -23 "$T/before" "$T/after" | head -n 3)"
done
wait $mp
check "after the kills: exit" 0 $?
check "after the kills: each of the 4 kills landed mid-proof" 4 $kills
check "after the kills: the database's value" "$f	loss" "$(head -n 1 "$T/out")"
$C proof check --state "$S" --db "$DB" >"$T/chk" 2>/dev/null
check "after the kills: proof check" "0 valid" "$? $(head -n 1 "$T/chk" | cut -f 2)"

# 3. Workers outside the manager (given the state's token), one of them
#    killed once it has a job: the manager sees it go, its job goes back to
#    the pool, and a second worker, started only then, completes the proof.
#    Each step waits on the event before it, and the root's own jobs are
#    off and budgets kept small, so that no single job can settle the root
#    before the kill lands.
P=$(port 1)
S="$T/remote"
manager_bg "$T/log3" --fen "$f" --state "$S" --db "$DB" --pieces 4 --workers 0 \
    --listen 127.0.0.1:$P --job-time 2 --job-nodes 300 --job-max 2 --no-root-jobs \
    --budget 120 --quiet
check "a token is made for the state, mode 0600" "600" "$(stat -c %a "$S/token" 2>/dev/null)"
worker_bg "$T/w1.log" --connect 127.0.0.1:$P --db "$DB" --store "$T/w1" --token-file "$S/token"
w1=$wp
wait_for 60 grep -qs 'job [0-9]*:' "$T/w1.log"
kill -9 $w1
wait $w1 2>/dev/null
saw_go() { grep -qs 'connection .* closed' "$T/log3" || gone $mp; }
wait_for 60 saw_go
check "worker killed: the manager saw it go" 1 "$(grep -c 'connection .* closed' "$T/log3" |
    awk '{print ($1 >= 1)}')"
check "worker killed: the manager is still proving" 0 "$(gone $mp && echo 1 || echo 0)"
worker_bg "$T/w2.log" --connect 127.0.0.1:$P --db "$DB" --store "$T/w2" --token-file "$S/token"
w2=$wp
wait $mp
check "worker killed: proof completes" "0 $f	loss" "$? $(head -n 1 "$T/out")"
kill $w2 2>/dev/null
wait $w2 2>/dev/null

# 3b. No token, no work: on loopback too, a worker without the state's
#     token is refused.
P=$(port 4)
S="$T/notoken"
manager_bg "$T/log3b" --fen "$f" --state "$S" --db "$DB" --pieces 4 --workers 0 \
    --listen 127.0.0.1:$P --job-time 2 --job-nodes 300 --budget 60 --quiet
$C worker --connect 127.0.0.1:$P --db "$DB" --store "$T/w5" 2>"$T/w5.log"
check "loopback without the token: the worker stops with exit 2" 2 $?
#    One manager a state: a second one on it is refused while the first runs.
$C prove --state "$S" --workers 0 --budget 5 --quiet >/dev/null 2>"$T/second.err"
check "a second manager on a running state: exit 2" 2 $?
check "... saying who holds it" 1 "$(grep -c "in use by another manager (pid $mp)" "$T/second.err")"
kill $mp 2>/dev/null
wait $mp 2>/dev/null

# 4. Bad frames, a wrong token and version, the status page: each bad
#    connection is closed with a logged reason, and the manager goes on to
#    finish the proof with a good worker.
P=$(port 2)
HP=$(port 3)
S="$T/bad"
echo "s3cret-token" >"$T/token"
echo "wrong-token" >"$T/badtoken"
manager_bg "$T/log4" --fen "$f" --state "$S" --db "$DB" --pieces 4 --workers 0 \
    --listen 127.0.0.1:$P --token-file "$T/token" --status-port $HP --job-time 2 \
    --job-nodes 300 --budget 120 --max-connections 6 --quiet
send() { # bytes as printf escapes
    (exec 3<>/dev/tcp/127.0.0.1/$P && printf "$1" >&3) 2>/dev/null
}
send '\377\377\377\377\001'                 # 4 GiB announced
send '\000\000\000\000\052'                 # unknown type 42
send '\004\000\000\000\010\001\002\003'     # HEARTBEAT cut short
send '\010\000\000\000\010\001\002\003\004\005\006\007\010' # a HEARTBEAT before HELLO
# HELLO of version 9 (magic CKPW, version 9, the rest empty)
send '\024\000\000\000\001CKPW\011\000\005\000\001\000\000\000\000\000\000\000\000\000\000\000'
send '\000\040\000\000\010'                 # 8 KiB announced before HELLO
logged() { grep -qi -- "$1" "$T/log4"; }
# Each of those is closed with its reason logged. Only then the next: with
# --max-connections 6 a seventh sent while they were still open was
# refused at the door now and then ("refusing connections: 6 open
# already"), and its reason never came.
for reason in 'more than the 4194304' 'type 42' 'before HELLO' 'version 9 not supported' \
    'a frame of 8192 bytes before HELLO'; do
    wait_for 30 logged "$reason"
    check "reason logged: $reason" 0 $?
done
# a HELLO with a wrong token whose name would forge a log line and clear
# the screen: "x\nFORGED: worker 7 joined\e[2J"
send '\060\000\000\000\001CKPW\002\000\005\000\001\000\000\000\003\000bad\035\000x\nFORGED: worker 7 joined\033[2J'
$C worker --connect 127.0.0.1:$P --db "$DB" --store "$T/w3" --token-file "$T/badtoken" \
    2>"$T/w3.log"
check "wrong token: the worker stops with exit 2" 2 $?
for reason in 'bad token' 'x\\x0aFORGED'; do
    wait_for 30 logged "$reason"
    check "reason logged: $reason" 0 $?
done
check "a peer's name cannot start a log line" 0 "$(grep -c '^FORGED' "$T/log4")"
check "nor send escape codes to the log" 0 "$(grep -c $'\033' "$T/log4")"
# the connection cap (--max-connections 6): idle connections past it are
# refused and the refusal logged; closing them frees the places
for fdn in 11 12 13 14 15 16 17 18; do eval "exec $fdn<>/dev/tcp/127.0.0.1/$P" 2>/dev/null; done
wait_for 30 logged 'refusing connections: 6 open already'
check "connections past the cap refused, logged" 0 $?
for fdn in 11 12 13 14 15 16 17 18; do eval "exec $fdn>&-"; done
# a connection that never says HELLO is closed after 5 s (it held a place)
exec 19<>/dev/tcp/127.0.0.1/$P
wait_for 30 logged 'no HELLO within 5 s'
check "a connection without HELLO closed after 5 s" 0 $?
exec 19>&-
check "the token is never logged" 0 "$(cat "$T/log4" "$T/w3.log" | grep -c 's3cret')"
json=$( (exec 3<>/dev/tcp/127.0.0.1/$HP && printf 'GET /status.json HTTP/1.0\r\n\r\n' >&3 &&
    cat <&3) 2>/dev/null | tr -d '\r' | sed '1,/^$/d')
for key in '"root":"B:W30,31,K19:B6,K12"' '"goal":"value"' '"pn":' '"dn":' '"tree":{"nodes":' \
    '"jobs":{"issued":' '"workers":[' '"top":[' '"history":['; do
    case "$json" in
    *"$key"*) echo "ok   status.json has $key" ;;
    *) echo "FAIL status.json lacks $key: $(echo "$json" | cut -c1-200)"; fail=1 ;;
    esac
done
html=$( (exec 3<>/dev/tcp/127.0.0.1/$HP && printf 'GET / HTTP/1.0\r\n\r\n' >&3 && cat <&3) \
    2>/dev/null)
check "status page: html with an svg chart" 1 "$(echo "$html" | grep -c '<svg' | awk '{print ($1 >= 1)}')"
worker_bg "$T/w4.log" --connect 127.0.0.1:$P --db "$DB" --store "$T/w4" --token-file "$T/token"
w4=$wp
wait $mp
check "after bad frames: the proof completes" "0 $f	loss" "$? $(head -n 1 "$T/out")"
kill $w4 2>/dev/null
wait $w4 2>/dev/null

# 5. Bad usage: exit 2 with a message naming the problem.
$C prove --fen 'B:W33:B1' --state "$T/x" --db "$DB" >/dev/null 2>"$T/err"
check "bad FEN exit" 2 $?
$C prove --state "$T/nothing" --db "$DB" >/dev/null 2>"$T/err"
check "nothing to resume exit" 2 $?
check "nothing to resume message" 1 "$(grep -c 'holds no proof' "$T/err")"
$C prove --fen "$f" --state "$T/y" --db "$DB" --pieces 4 --listen 0.0.0.0:$P >/dev/null 2>"$T/err"
check "beyond loopback without a token" "2 1" "$? $(grep -c 'needs --token-file' "$T/err")"
echo "ab" >"$T/weak"
$C prove --fen "$f" --state "$T/y2" --db "$DB" --pieces 4 --listen 0.0.0.0:$P --token-file "$T/weak" \
    >/dev/null 2>"$T/err"
check "beyond loopback with a 2-character token: exit 2, saying how long" "2 1" \
    "$? $(grep -c 'at least 32 characters' "$T/err")"
$C prove --opening "12-16 24-19 9-99" --state "$T/z" --db "$DB" >/dev/null 2>"$T/err"
check "bad opening move" "2 1" "$? $(grep -c "move 3 '9-99'" "$T/err")"

# A root the databases hold is settled at once, and its proof is the
# database leaf itself (no store record): not "damaged" (it was exit 3).
r='B:W30,31:B6,K12'
rv="$r	$($C egdb probe --db "$DB" "$r" | cut -f 2)"
$C prove --fen "$r" --state "$T/dbroot" --db "$DB" --pieces 4 --workers 1 --quiet >"$T/o" 2>"$T/err"
check "a root in the databases: settled with their value" "0 $rv" "$? $(head -n 1 "$T/o")"
$C proof check --state "$T/dbroot" >"$T/o" 2>/dev/null
check "... and proof check --state accepts it (a database leaf)" "0 valid 1" \
    "$? $(head -n 1 "$T/o" | cut -f 2) $(grep -c '^database leaves: 1' "$T/o")"

# A state that holds another proof: the message names what it holds and
# what differs (the root, or the goal).
$C prove --fen "$f" --state "$T/dbroot" --db "$DB" >/dev/null 2>"$T/err"
check "another root: exit 2, both roots named" "2 1" \
    "$? $(grep -c "holds the proof of $r (goal value), not of the root given, $f" "$T/err")"
$C prove --fen "$r" --goal win --state "$T/dbroot" --db "$DB" >/dev/null 2>"$T/err"
check "another goal: exit 2, both goals named" "2 1" \
    "$? $(grep -c "holds the proof of $r with the goal value, not win" "$T/err")"
# The usage lines name every option the help describes.
usage=$($C prove --help | sed -n '1,/^$/p')
for o in --quiet --no-root-jobs; do
    check "prove's usage line names $o" 1 "$(echo "$usage" | grep -c -- "\[$o\]")"
done

# Ctrl-C on a terminal (script(1) gives prove a pty): the last progress
# line is replaced by the final one, not run into it ("h 200" then
# "15s root ..." on one line). The signal is sent once a progress line
# shows, to the manager (found by its state folder in /proc).
if command -v script >/dev/null; then
    HARD='W:W21,28,K32:BK19,K25' # minutes with 1-4 pieces (B:W17,21,K32:B3,K16 is proved in 3 s since stop 46)
    script -qfc "$C prove --fen '$HARD' --state $T/tty --db $DB --pieces 4 --workers 1 --job-time 30" \
        "$T/tty.txt" >/dev/null 2>&1 &
    sc=$!
    wait_for 60 grep -qs 'jobs/min' "$T/tty.txt"
    ppid_=
    for c in /proc/[0-9]*/cmdline; do
        case "$({ tr '\0' ' ' <"$c"; } 2>/dev/null)" in
        "$C prove --fen $HARD --state $T/tty "*) ppid_=${c#/proc/} ppid_=${ppid_%/cmdline} ;;
        esac
    done
    if [ -n "$ppid_" ]; then
        kill -INT "$ppid_"
    else
        echo "FAIL Ctrl-C: no prove process found"
        fail=1
        kill "$sc"
    fi
    wait "$sc"
    check "Ctrl-C: the last progress line does not run into the final one" "0 1" \
        "$(grep -Ec 'h (inf|[0-9]+)[0-9]+s root' "$T/tty.txt") \
$(grep -c "$(printf '\033')\\[K[0-9]*s root" "$T/tty.txt" | awk '{print ($1 >= 1)}')"
else
    echo "skip Ctrl-C on a terminal: no script(1)"
fi

# Local workers that cannot start (issue 41): their store cannot be made
# (a file where its folder goes), as on a full disk where their logs cannot
# be written either. The manager must stop with their words, exit 1, not
# restart them and wait with no workers; the state then resumes.
S="$T/nostart"
r='B:W30,31,K19:B6,K12'
mkdir -p "$S/workers" && echo x >"$S/workers/store"
timeout 120 $C prove --fen "$r" --state "$S" --db "$DB" --pieces 4 --job-nodes 3000 --workers 2 \
    --quiet >"$T/o" 2>"$T/err"
check "local workers that cannot start: the manager stops (exit 1), saying why" "1 1 1" \
    "$? $(grep -c 'stopped: local workers could not start' "$T/o") $(grep -c 'checkers worker: store ' "$T/o")"
rm -f "$S/workers/store"
$C prove --state "$S" --workers 1 --quiet >"$T/o" 2>"$T/err"
check "... and once they can, the proof resumes" "0 $r	$($C egdb probe --db "$DB" "$r" | cut -f 2)" \
    "$? $(head -n 1 "$T/o")"

exit $fail
