#!/bin/bash
# bench/load.sh - a load test of the proof-tree manager on loopback (not
# part of `make test`: it needs minutes, 15 GB of memory and both cores).
#
#   Part 1  one manager (no local workers) and LOAD_WORKERS (200) worker
#           processes for LOAD_SECONDS (120 s) of tiny jobs (--job-time 5
#           --job-nodes 300) on a 5-piece root with the 1-4 piece
#           databases. Reports the jobs answered, the manager's own ms a
#           job (the "(N ms a job)" of its output, as bench/manager.sh
#           reads it), its peak RSS (VmHWM), wall time, the workers busy
#           (the progress lines' "in flight" against "workers"), and every
#           closed connection, refusal or error in its log. Then nothing
#           may be lost: the manager is stopped with SIGINT, the workers
#           are stopped, the state is resumed (`prove --state S`, 2 local
#           workers, at most LOAD_FINISH seconds) and must hold what it
#           held at the stop; the root's proof, if settled, is checked
#           with `proof check --state`, and every record of S/state (all
#           that is settled) with `proof check --store`.
#   Part 2  a fresh manager with 2 local workers, and LOAD_IDLE (1,000)
#           TCP connections that never say HELLO (bench/idle_conns.py:
#           silent ones, reopened when the manager closes them, plus a
#           few that drip a frame that never completes, and a few that
#           announce an oversized frame before HELLO), held for
#           LOAD_IDLE_SECONDS (30 s). The manager's RSS and open files
#           with them, how it closed them (MGR_SILENCE_MS, the pre-HELLO
#           limit) and the real workers' jobs in three equal windows:
#           before, during and after the idle connections.
#   Part 3  the connection cap: --max-connections LOAD_CAP (300), 2 workers,
#           LOAD_IDLE idle connections reopened at once when closed (a
#           hostile client), and a third worker started during them.
#
# Workers run under SCHED_IDLE (chrt -i 0) when chrt exists: on 2 cores
# 200 workers would otherwise take the manager's CPU time (it would be
# measured waiting for a core), and the machine stays usable for others.
# The worker's memory floor is ~75 MB (its alpha-beta table is a fixed
# 64 MB; --tt and --cache 1 set the rest), so the workers read a view of
# the 1-4 piece databases (symlinks: the proof uses 4 pieces, and opening
# the 5-piece tables costs each worker 15 MB more). No more workers are
# started once MemAvailable falls below LOAD_MIN_AVAIL_MB (4096): the
# count reached is printed.
#
# Every wait is on an event (a log line, a process gone, a count of open
# files) with a deadline; the only fixed waits are the measurement windows.
# Everything goes to a temporary folder, kept with KEEP=1.
#
# Environment: CHECKERS (bin/checkers), CHECKERS_TEST_DB
# (build/testdata/egdb5: make testdata), LOAD_WORKERS, LOAD_SECONDS,
# LOAD_ROOTS (roots separated by '|': when one is proved inside the
# window, the next is started, with new workers: see stop_workers' call),
# LOAD_JOB_TIME, LOAD_JOB_NODES, LOAD_FINISH, LOAD_IDLE, LOAD_IDLE_SECONDS,
# LOAD_MIN_AVAIL_MB, LOAD_CAP, LOAD_PARTS (123: all three; any subset).
set -u
C=${CHECKERS:-bin/checkers}
DB=${CHECKERS_TEST_DB:-build/testdata/egdb5}
NW=${LOAD_WORKERS:-200}
WINDOW=${LOAD_SECONDS:-120}
ROOTS=${LOAD_ROOTS:-'B:W17,21,K32:B3,K16|B:W30,31,K19:B6,K12'}
JOB_TIME=${LOAD_JOB_TIME:-5}
JOB_NODES=${LOAD_JOB_NODES:-300}
FINISH=${LOAD_FINISH:-600}
IDLE=${LOAD_IDLE:-1000}
IDLE_S=${LOAD_IDLE_SECONDS:-30}
MIN_AVAIL=${LOAD_MIN_AVAIL_MB:-4096}
PARTS=${LOAD_PARTS:-123}
HERE=$(cd "$(dirname "$0")" && pwd)

T=$(mktemp -d "${TMPDIR:-/tmp}/bench_load.XXXXXX") || exit 1
pids=""
cleanup() {
    for p in $pids; do kill -9 "$p" 2>/dev/null; done
    if [ -n "${KEEP:-}" ]; then echo "kept: $T"; else rm -rf "$T"; fi
}
trap cleanup EXIT
trap 'exit 1' INT TERM

now() { date +%s.%N; }
say() { echo "$(date +%H:%M:%S) load: $*"; }
die() {
    say "FAILED: $*"
    exit 1
}
gone() { ! kill -0 "$1" 2>/dev/null; }
# wait_for SECONDS COMMAND...: COMMAND until it succeeds, at most SECONDS
wait_for() {
    local end=$((SECONDS + $1))
    shift
    until "$@"; do
        [ "$SECONDS" -ge "$end" ] && return 1
        sleep 0.1
    done
}
status_kb() { awk -v k="$2:" '$1 == k { print $2 }' "/proc/$1/status" 2>/dev/null; }
nfds() { ls "/proc/$1/fd" 2>/dev/null | wc -l; }
avail_mb() { awk '$1 == "MemAvailable:" { print int($2 / 1024) }' /proc/meminfo; }
results_in() { grep -c 'records admitted (result' "$1" 2>/dev/null; } # results committed
joined_in() { grep -c 'manager: worker [0-9]* joined' "$1" 2>/dev/null; }
port_of() { sed -n 's/.*listening on port \([0-9][0-9]*\) .*/\1/p' "$1" 2>/dev/null | head -n 1; }
# The kernel's count of connections dropped because a listen queue was full
# (the whole machine's, since boot): a dropped SYN is retried 1 s later.
overflows() { awk '/^TcpExt:/ { if (!h) { split($0, k); h = 1 } else for (i = 2; i <= NF; i++) if (k[i] == "ListenOverflows") print $i }' /proc/net/netstat; }
listening() { [ -n "$(port_of "$1")" ] || gone "$2"; }
has_n() { [ "$(joined_in "$1")" -ge "$2" ] || gone "$3"; }
fds_at_most() { [ "$(nfds "$1")" -le "$2" ] || gone "$1"; }
out_field() { # OUTFILE: the jobs answered in this run
    sed -n 's/.* \([0-9]*\) in this run$/\1/p' "$1"
}
ms_a_job() { sed -n 's/.*(\([0-9.]*\) ms a job).*/\1/p' "$1"; }
run_s() { sed -n 's/^time: \([0-9.]*\) s this run.*/\1/p' "$1"; }
# The samples of a manager's RSS (kB) and open files, one a second.
sampler() { # PID FILE
    while kill -0 "$1" 2>/dev/null; do
        echo "$(date +%s) $(status_kb "$1" VmRSS) $(nfds "$1")" >>"$2"
        sleep 1
    done
}
# Reasons the manager gave for closing connections, refusals, failures.
log_summary() { # LOG
    echo "  connections closed, by reason:"
    sed -n 's/.* closed: \(.*\)$/\1/p' "$1" | sed 's/[0-9][0-9]*/N/g' | sort | uniq -c |
        sed 's/^/    /'
    local n
    for pat in 'refusing' 'refused at admission' 'failed' 'lease expired' 'the tree failed' \
        'damaged' 'cannot' 'not open'; do
        n=$(grep -c -- "$pat" "$1")
        echo "  log lines with '$pat': $n"
    done
}
# progress lines (every 10 s): "workers W", "J in flight", "R jobs/min"
progress_table() { # LOG
    echo "  progress (every 10 s): seconds, jobs done, in flight, workers, jobs/min, tree"
    sed -n 's/^\([0-9]*\)s root .*| tree \([0-9]*\) .*| jobs \([0-9]*\) done, \([0-9]*\) in flight | workers \([0-9]*\) | \([0-9.]*\) jobs\/min.*/    \1 \3 \4 \5 \6 \2/p' "$1"
}

[ -x "$C" ] || die "$C not built (make)"
[ -d "$DB" ] || die "$DB missing (make testdata)"
command -v python3 >/dev/null || die "python3 is needed for part 2"
PRIO=""
command -v chrt >/dev/null && PRIO="chrt -i 0"
echo "machine: $(nproc) cores, $(awk '/MemTotal/ { printf "%.1f GiB", $2 / 1048576 }' /proc/meminfo), $(awk -F': ' '/model name/ { print $2; exit }' /proc/cpuinfo); fd limit of this shell: soft $(ulimit -Sn), hard $(ulimit -Hn)"
echo "commit: $(git -C "$HERE" rev-parse --short HEAD 2>/dev/null), $C"

# The workers' view of the databases: the 1-4 piece files (symlinks).
WDB="$T/egdb1-4"
mkdir -p "$WDB"
for f in "$DB"/*; do
    b=$(basename "$f")
    m=${b%%.*}
    if [[ $m =~ ^[0-9]{4}$ ]] && ((${m:0:1} + ${m:1:1} + ${m:2:1} + ${m:3:1} > 4)); then
        continue
    fi
    ln -s "$(cd "$(dirname "$f")" && pwd)/$b" "$WDB/$b"
done
od -An -N32 -tx1 /dev/urandom | tr -d ' \n' >"$T/token"
echo >>"$T/token"
chmod 600 "$T/token"

# ---- part 1 ----------------------------------------------------------------
part1() {
    local P="$T/p1" k wpids="" nstarted=0 port="" i=0 mp t_all t_end w_start w_end fdn
    mkdir -p "$P"
    IFS='|' read -r -a roots <<<"$ROOTS"
    echo
    echo "== part 1: $NW workers, ${WINDOW} s, jobs of --job-time $JOB_TIME --job-nodes $JOB_NODES"
    start_mgr() { # index i -> mp, port, P/s$i, P/out$i, P/log$i
        say "manager $i: root ${roots[$i]}"
        $C prove --fen "${roots[$i]}" --state "$P/s$i" --db "$DB" --pieces 4 --workers 0 \
            --job-time "$JOB_TIME" --job-nodes "$JOB_NODES" --token-file "$T/token" \
            >"$P/out$i" 2>"$P/log$i" &
        mp=$!
        pids="$pids $mp"
        t_start[$i]=$(now)
        wait_for 60 listening "$P/log$i" $mp || die "manager $i does not listen"
        gone $mp && die "manager $i ended at its start: $(tail -n 3 "$P/log$i")"
        port=$(port_of "$P/log$i")
        sampler $mp "$P/rss$i" &
        pids="$pids $!"
    }
    start_workers() { # -> wpids, nstarted; returns once they joined manager i
        say "manager $i listens on port $port (pid $mp); starting $NW workers${PRIO:+ ($PRIO)}"
        wpids="" nstarted=0
        mkdir -p "$P/w$i"
        local ov0 t0
        ov0=$(overflows)
        t0=$(now)
        for ((k = 0; k < NW; k++)); do
            if ((k % 10 == 0)) && (($(avail_mb) < MIN_AVAIL)); then
                say "MemAvailable $(avail_mb) MB < $MIN_AVAIL MB: no more workers after $k"
                break
            fi
            $PRIO $C worker --connect "127.0.0.1:$port" --token-file "$T/token" --db "$WDB" \
                --tt 1 --cache 1 --store "$P/w$i/$k" >/dev/null 2>"$P/w$i/$k.log" &
            wpids="$wpids $!"
            pids="$pids $!"
            nstarted=$((k + 1))
        done
        wait_for 300 has_n "$P/log$i" "$nstarted" $mp ||
            say "only $(joined_in "$P/log$i") of $nstarted workers joined in 300 s"
        say "$(joined_in "$P/log$i") workers joined $(awk -v a="$t0" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }') s after the first was started; listen queue overflows (machine-wide) meanwhile: $(($(overflows) - ov0))"
    }
    stop_workers() {
        kill -TERM $wpids 2>/dev/null
        for p in $wpids; do wait_for 60 gone "$p" || say "worker $p still runs"; done
        wait $wpids 2>/dev/null
    }
    start_mgr
    start_workers
    t_all=$(now)
    say "$(joined_in "$P/log0") workers joined in $(awk -v a="${t_start[0]}" -v b="$t_all" 'BEGIN { printf "%.1f", b - a }') s; MemAvailable $(avail_mb) MB; the ${WINDOW} s window starts"
    w_start=$(results_in "$P/log0")
    t_end=$(awk -v a="$t_all" -v w="$WINDOW" 'BEGIN { printf "%.0f", a + w }')
    # the window: a root proved inside it makes way for the next one
    while :; do
        while ! gone $mp && (($(date +%s) < t_end)); do sleep 0.2; done
        gone $mp || break
        wait $mp
        rc[$i]=$?
        t_stop[$i]=$(now)
        say "manager $i ended (exit ${rc[$i]}): $(head -n 1 "$P/out$i")"
        i=$((i + 1))
        if ((i >= ${#roots[@]})); then
            say "no more roots (LOAD_ROOTS): the window ends early"
            break
        fi
        (($(date +%s) < t_end)) || break
        # A new proof gets new workers on a new port: a worker that outlives
        # one proof resends its unacknowledged result to the next manager at
        # the same address, which takes it for its own job of the same id
        # (results/load-test.md, findings).
        stop_workers
        start_mgr
        start_workers
    done
    local last=$i
    if ! gone $mp; then
        hwm[$i]=$(status_kb $mp VmHWM)
        fdn=$(nfds $mp)
        grep 'Max open files' /proc/$mp/limits >"$P/limits"
        w_end=$(results_in "$P/log$i")
        say "window over: manager $i VmHWM ${hwm[$i]} kB, $fdn open files; SIGINT"
        kill -INT $mp
        wait_for 120 gone $mp || die "manager $i still runs 120 s after SIGINT"
        wait $mp
        rc[$i]=$?
        t_stop[$i]=$(now)
    else
        last=$((i - 1))
        w_end=$(results_in "$P/log$last")
    fi
    say "stopping the workers"
    stop_workers
    echo
    echo "-- part 1 results"
    echo "workers started $nstarted (for each manager); joined the first manager $(joined_in "$P/log0")"
    for ((j = 0; j <= last; j++)); do
        local peak
        peak=$(awk 'BEGIN { m = 0 } $2 > m { m = $2 } END { print m }' "$P/rss$j")
        echo "manager $j: root ${roots[$j]}, exit ${rc[$j]}, wall $(awk -v a="${t_start[$j]}" -v b="${t_stop[$j]}" 'BEGIN { printf "%.1f", b - a }') s"
        echo "  output: $(tr '\n' ' ' <"$P/out$j")"
        echo "  jobs answered this run: $(out_field "$P/out$j"); manager ms a job: $(ms_a_job "$P/out$j"); run $(run_s "$P/out$j") s"
        echo "  peak RSS: VmHWM ${hwm[$j]:-?} kB (sampled VmRSS max $peak kB); open files at most $(awk 'BEGIN { m = 0 } $3 > m { m = $3 } END { print m }' "$P/rss$j")"
        progress_table "$P/log$j"
        log_summary "$P/log$j"
    done
    if ((last == 0)); then
        echo "jobs committed in the ${WINDOW} s window (after all joined): $((w_end - w_start))"
    fi
    [ -f "$P/limits" ] && echo "manager's $(cat "$P/limits")"
    echo "worker logs: $(cat "$P"/w*/*.log | grep -c 'records$\|records:') results computed; disconnections by reason:"
    cat "$P"/w*/*.log | sed -n 's/.*disconnected from [^ ]*: \(.*\)$/\1/p' | sort | uniq -c | sed 's/^/    /'
    echo "  worker log lines with 'refused' $(cat "$P"/w*/*.log | grep -c refused), 'failed' $(cat "$P"/w*/*.log | grep -c 'failed'), 'cannot' $(cat "$P"/w*/*.log | grep -c 'cannot')"

    # ---- nothing lost: resume the last state
    local S="$P/s$last" before after
    echo
    echo "-- part 1: resume $S with 2 local workers (at most ${FINISH} s)"
    before=$($C tree --state "$S" --depth 0 | sed -n 2p)
    local recs_before
    recs_before=$($C store stats --store "$S/state" | awk '$1 == "records" { print $2 }')
    echo "at the stop: $before; $recs_before records in $S/state"
    $C prove --state "$S" --workers 2 --budget "$FINISH" >"$P/out-resume" 2>"$P/log-resume" &
    local rp=$!
    pids="$pids $rp"
    wait_for 60 listening "$P/log-resume" $rp || die "the resumed manager does not start"
    after=$($C tree --state "$S" --depth 0 | sed -n 2p)
    echo "resumed (tree as read at its start): $after"
    wait $rp
    local rrc=$?
    echo "resumed run: exit $rrc: $(tr '\n' ' ' <"$P/out-resume")"
    local prev total this
    prev=$(echo "$before" | sed -n 's/.* \([0-9]*\) jobs answered.*/\1/p')
    total=$(sed -n 's/.*jobs: \([0-9]*\) answered.*/\1/p' "$P/out-resume")
    this=$(out_field "$P/out-resume")
    echo "jobs over all runs $total = $prev at the stop + $this resumed: $([ "$total" -eq $((prev + this)) ] && echo ok || echo MISMATCH)"
    log_summary "$P/log-resume"
    echo
    echo "-- part 1: the checker"
    for ((j = 0; j <= last; j++)); do
        $C proof check --state "$P/s$j" --db "$DB" >"$P/check$j" 2>&1
        echo "proof check --state s$j: exit $? $(head -n 1 "$P/check$j" | cut -f 2)"
        $C store export --store "$P/s$j/state" | cut -f 1 >"$P/records$j"
        local v=0 bad=0 f r
        while read -r f; do
            r=$($C proof check --store "$P/s$j/state" --db "$DB" --pieces 4 "$f" 2>/dev/null |
                head -n 1 | cut -f 2)
            if [ "$r" = valid ]; then v=$((v + 1)); else
                bad=$((bad + 1))
                echo "  record $f: $r"
            fi
        done <"$P/records$j"
        echo "every record of s$j/state checked alone: $v valid, $bad not"
    done
}

# ---- part 2 ----------------------------------------------------------------
part2() {
    local P="$T/p2" mp port base_fd base_rss a0 a1 b0 b1 c0 c1 hp
    mkdir -p "$P"
    local root=${ROOTS%%|*}
    echo
    echo "== part 2: $IDLE idle connections for ${IDLE_S} s beside 2 local workers"
    $C prove --fen "$root" --state "$P/s" --db "$DB" --pieces 4 --workers 2 \
        --job-time "$JOB_TIME" --job-nodes "$JOB_NODES" >"$P/out" 2>"$P/log" &
    mp=$!
    pids="$pids $mp"
    wait_for 60 listening "$P/log" $mp || die "part 2's manager does not listen"
    port=$(port_of "$P/log")
    wait_for 60 has_n "$P/log" 2 $mp || die "its 2 workers did not join"
    wait_for 120 eval '[ "$(results_in "$P/log")" -ge 20 ] || gone $mp' # past the start
    gone $mp && die "part 2's manager ended: $(cat "$P/out")"
    sampler $mp "$P/rss" &
    pids="$pids $!"
    grep 'Max open files' /proc/$mp/limits >"$P/limits"
    base_fd=$(nfds $mp)
    base_rss=$(status_kb $mp VmRSS)
    say "manager pid $mp port $port: $base_fd open files, VmRSS $base_rss kB; window A (${IDLE_S} s, no idle connections)"
    a0=$(results_in "$P/log")
    sleep "$IDLE_S"
    a1=$(results_in "$P/log")
    local rss_a
    rss_a=$(status_kb $mp VmRSS)
    say "window B: $IDLE connections"
    local nd=10 no=10
    python3 "$HERE/idle_conns.py" --port "$port" --silent $((IDLE - nd - no)) --drip $nd \
        --oversize $no --hold "$IDLE_S" --reopen >"$P/helper" 2>&1 &
    hp=$!
    pids="$pids $hp"
    local ov0
    ov0=$(overflows)
    wait_for 120 eval 'grep -q "^opened" "$P/helper" || gone $hp' || die "the helper did not open its connections"
    b0=$(results_in "$P/log")
    local fd_b rss_b0
    fd_b=$(nfds $mp)
    rss_b0=$(status_kb $mp VmRSS)
    say "helper: $(head -n 1 "$P/helper"); the manager has $fd_b open files, VmRSS $rss_b0 kB; listen queue overflows (machine-wide) while opening: $(($(overflows) - ov0))"
    wait_for $((IDLE_S + 60)) gone $hp
    b1=$(results_in "$P/log")
    local rss_b1 hwm_b
    rss_b1=$(status_kb $mp VmRSS)
    hwm_b=$(status_kb $mp VmHWM)
    wait_for 30 fds_at_most $mp $((base_fd + 2)) || say "the manager's open files did not come back to $base_fd: $(nfds $mp)"
    local fd_after
    fd_after=$(nfds $mp)
    say "window C (${IDLE_S} s, no idle connections); the manager has $fd_after open files"
    c0=$(results_in "$P/log")
    sleep "$IDLE_S"
    c1=$(results_in "$P/log")
    local rss_c hwm
    rss_c=$(status_kb $mp VmRSS)
    hwm=$(status_kb $mp VmHWM)
    kill -INT $mp
    wait_for 120 gone $mp || die "part 2's manager still runs after SIGINT"
    wait $mp
    local mrc=$?
    echo
    echo "-- part 2 results"
    echo "manager exit $mrc: $(tr '\n' ' ' <"$P/out")"
    echo "manager's $(cat "$P/limits"); --max-connections default 4096"
    echo "idle helper:"
    sed 's/^/  /' "$P/helper"
    echo "jobs committed: window A $((a1 - a0)) | B (idle connections) $((b1 - b0)) | C $((c1 - c0)) (each ${IDLE_S} s; B from all opened to the helper's end)"
    echo "open files: before $base_fd, with the connections $fd_b (sampled max $(awk 'BEGIN { m = 0 } $3 > m { m = $3 } END { print m }' "$P/rss")), after $fd_after"
    echo "VmRSS kB: before $base_rss, end of A $rss_a, B opened $rss_b0, end of B $rss_b1, end of C $rss_c; VmHWM at B's end $hwm_b, at the end $hwm"
    progress_table "$P/log"
    log_summary "$P/log"
    echo "closed 'silent for too long' while connections had no HELLO: $(grep -c 'no HELLO.*silent for too long' "$P/log")"
    echo "closed before HELLO for an oversized frame: $(grep -c 'no HELLO.*before HELLO (at most' "$P/log")"
}

# ---- part 3 ----------------------------------------------------------------
# The connection cap: a manager with --max-connections LOAD_CAP (300), two
# workers connected, then LOAD_IDLE silent connections (reopened as soon as
# they are closed, as a hostile client would) for LOAD_IDLE_SECONDS, and a
# third worker started once they are open: are the two served, does the
# third get in, are the refusals logged once a second, is no descriptor
# leaked.
part3() {
    local P="$T/p3" mp port hp base_fd j0 j1 wl="" t3 cap=${LOAD_CAP:-300}
    mkdir -p "$P/w"
    local root=${ROOTS%%|*}
    echo
    echo "== part 3: --max-connections $cap, 2 workers, then $IDLE reopened idle connections for ${IDLE_S} s and a third worker"
    $C prove --fen "$root" --state "$P/s" --db "$DB" --pieces 4 --workers 0 --max-connections "$cap" \
        --job-time "$JOB_TIME" --job-nodes "$JOB_NODES" --token-file "$T/token" >"$P/out" 2>"$P/log" &
    mp=$!
    pids="$pids $mp"
    wait_for 60 listening "$P/log" $mp || die "part 3's manager does not listen"
    port=$(port_of "$P/log")
    for k in 1 2; do
        $C worker --connect "127.0.0.1:$port" --token-file "$T/token" --db "$WDB" --tt 1 --cache 1 \
            --store "$P/w/$k" 2>"$P/w/$k.log" &
        wl="$wl $!"
        pids="$pids $!"
    done
    wait_for 60 has_n "$P/log" 2 $mp || die "part 3: the 2 workers did not join"
    base_fd=$(nfds $mp)
    python3 "$HERE/idle_conns.py" --port "$port" --silent "$IDLE" --hold "$IDLE_S" --reopen \
        >"$P/helper" 2>&1 &
    hp=$!
    pids="$pids $hp"
    wait_for 120 eval 'grep -q "^opened" "$P/helper" || gone $hp' || die "part 3: the helper did not open"
    j0=$(results_in "$P/log")
    t3=$(now)
    $C worker --connect "127.0.0.1:$port" --token-file "$T/token" --db "$WDB" --tt 1 --cache 1 \
        --store "$P/w/3" 2>"$P/w/3.log" &
    wl="$wl $!"
    pids="$pids $!"
    local fd_max=0 f
    while ! gone $hp; do
        f=$(nfds $mp)
        ((f > fd_max)) && fd_max=$f
        sleep 0.5
    done
    j1=$(results_in "$P/log")
    local third="no" t_end3
    t_end3=$(date +%H:%M:%S)
    [ "$(joined_in "$P/log")" -ge 3 ] && third="yes"
    wait_for 60 has_n "$P/log" 3 $mp
    local joined_after
    joined_after=$(grep 'manager: worker [0-9]* joined' "$P/log" | sed -n 3p | cut -c1-8)
    wait_for 30 fds_at_most $mp $((base_fd + 3))
    local fd_end
    fd_end=$(nfds $mp)
    kill -INT $mp
    wait_for 120 gone $mp || die "part 3's manager still runs after SIGINT"
    kill -TERM $wl 2>/dev/null
    wait $wl 2>/dev/null
    echo "-- part 3 results"
    echo "idle helper:"
    sed 's/^/  /' "$P/helper"
    echo "manager open files: $base_fd with 2 workers, at most $fd_max with the idle connections (cap $cap), $fd_end after"
    echo "jobs committed while the idle connections were held: $((j1 - j0))"
    echo "refusal log lines: $(grep -c 'refusing connections' "$P/log"); the last: $(grep 'refusing connections' "$P/log" | tail -n 1)"
    echo "third worker started at $(date -d @"${t3%.*}" +%H:%M:%S), the idle connections closed at $t_end3; it joined during the flood: $third; joined at: ${joined_after:-not within 60 s after}"
    echo "third worker's log: $(grep -c 'disconnected' "$P/w/3.log") disconnections; $(grep -m1 'connected to' "$P/w/3.log")"
}

case $PARTS in
*1*) part1 ;;
esac
case $PARTS in
*2*) part2 ;;
esac
case $PARTS in
*3*) part3 ;;
esac
