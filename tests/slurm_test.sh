#!/bin/bash
# tests/slurm_test.sh - scripts/slurm-prove.sbatch on a real one-node Slurm
# cluster made here (make test-slurm; not part of make test). Run as root on a
# Debian machine: installs Debian's slurm-wlm and munge when missing, starts
# its own munged, slurmctld and slurmd (no systemd) with their sockets,
# state and logs in a temporary folder and their ports chosen free, all on
# loopback, then:
#   1. submits a 5-piece proof (1-4 piece databases, jobs of at most 300
#      df-pn positions: the tree has to grow) on 2 tasks: the job ends
#      COMPLETED, the result is the database's value, `proof check --state`
#      accepts it, both workers took part with their own store slots, and
#      no worker is left once the job has ended;
#   2. submits a longer proof of another root (jobs of at most 50
#      positions: about 270 jobs), and once the manager's log shows 10
#      admitted results freezes the job's two workers (SIGSTOP): from then
#      on nothing more can be proven, however fast the solver is, so the
#      check does not race the proof (before, the root needed 18 jobs and
#      finished first on a fast run). Then the batch shell gets SIGTERM
#      (what --signal=B:TERM does before the time limit): the manager
#      stops cleanly (exit 1, root unknown); the workers are let go on
#      (SIGCONT) once it is gone, and the script stops them. Then it
#      submits the script again with the state alone, which resumes and
#      finishes: proved, the earlier results kept (jobs over all runs >
#      jobs of this run), checked, and the workers reused the first job's
#      store slots; while the first job runs, a second manager on its
#      state is refused (the lock);
#   3. submits it with workers that cannot start: the script stops the
#      manager instead of leaving it idle (exit 1, and says why).
#   4. builds the 1-5 piece databases with scripts/slurm-egdb.sh (a job array
#      per piece count and men count, a task per unit): byte for byte the
#      files of a build on one machine.
# Every wait is on an event (a job's state, a log line, a process gone)
# with a deadline. The daemons it started are stopped and the folder
# removed at exit (KEEP=1 keeps the folder).
# Needs bin/checkers and the 1-5 piece test databases (make all testdata);
# CHECKERS and CHECKERS_TEST_DB may point elsewhere.
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
C=${CHECKERS:-$ROOT/bin/checkers}
DB=${CHECKERS_TEST_DB:-$ROOT/build/testdata/egdb5}
SCRIPT=$ROOT/scripts/slurm-prove.sbatch
. "$ROOT/tests/lib_e2e.sh"
t_start=$SECONDS

die() {
    echo "FAIL slurm_test: $*"
    exit 1
}
[ "$(id -u)" -eq 0 ] || die "must run as root (it installs packages and starts Slurm's daemons)"
[ -x "$C" ] || die "no program at $C (make all)"
[ -f "$DB/.complete" ] || die "no test databases at $DB (make testdata)"
[ -f "$SCRIPT" ] || die "no $SCRIPT"

# ---- packages ---------------------------------------------------------------
need_pkgs() {
    for b in munged slurmctld slurmd sbatch squeue scontrol scancel srun; do
        command -v "$b" >/dev/null || return 0
    done
    return 1
}
if need_pkgs; then
    echo "== installing slurm-wlm and munge (apt-get)"
    export DEBIAN_FRONTEND=noninteractive
    alog=$(mktemp "${TMPDIR:-/tmp}/slurm_test-apt.XXXXXX") || die "mktemp"
    # the package lists are updated only when the install cannot do without
    apt-get install -y -q slurm-wlm munge >"$alog" 2>&1 ||
        { apt-get update -q >>"$alog" 2>&1 && apt-get install -y -q slurm-wlm munge >>"$alog" 2>&1; } ||
        die "apt-get install slurm-wlm munge failed (its output: $alog)"
    need_pkgs && die "slurm-wlm and munge are installed but a command is missing (see $alog)"
    rm -f "$alog"
fi
for b in flock cksum; do
    command -v "$b" >/dev/null || die "$b is missing (util-linux, coreutils)"
done

# ---- the temporary cluster ---------------------------------------------------
T=$(mktemp -d "${TMPDIR:-/tmp}/slurm_test.XXXXXX") || die "mktemp"
chmod 755 "$T"
daemons="" # pids of munged, slurmctld, slurmd, in start order
cleanup() {
    local rc=$?
    if [ -n "${SLURM_CONF:-}" ] && [ -f "$SLURM_CONF" ] && command -v scancel >/dev/null; then
        scancel --quiet --user=root 2>/dev/null
        no_jobs() { [ -z "$(squeue -h -o %i 2>/dev/null)" ]; }
        wait_for 60 no_jobs || echo "note: jobs still listed at exit"
    fi
    local p rev=""
    for p in $daemons; do rev="$p $rev"; done
    for p in $rev; do
        kill -TERM "$p" 2>/dev/null
        wait_for 30 gone "$p" || kill -KILL "$p" 2>/dev/null
        wait "$p" 2>/dev/null
    done
    if [ -n "${KEEP:-}" ]; then
        echo "kept $T"
    else
        rm -rf "$T"
    fi
    exit "$rc"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

HOST=$(hostname -s)
mkdir -p "$T/munge" "$T/slurm/state" "$T/slurm/spool" "$T/work"
# munged wants its socket's folder open to all (x) and its key private
chmod 755 "$T/munge"
# A munge key of our own: 1024 random bytes, read by the munged started here.
if ! head -c 1024 /dev/urandom >"$T/munge/munge.key" || ! chmod 400 "$T/munge/munge.key"; then
    die "cannot write the munge key $T/munge/munge.key"
fi
MSOCK=$T/munge/munge.socket.2
munged --socket="$MSOCK" --key-file="$T/munge/munge.key" \
    --pid-file="$T/munge/munged.pid" --log-file="$T/munge/munged.log" \
    --seed-file="$T/munge/munged.seed" >"$T/munge/start.log" 2>&1 ||
    die "munged did not start: $(cat "$T/munge/start.log" "$T/munge/munged.log" 2>/dev/null)"
# munged forks into the background: its pid comes from its pid file
wait_for 10 test -s "$T/munge/munged.pid" || die "munged wrote no pid file"
daemons="$(cat "$T/munge/munged.pid")"
munge -s x --socket="$MSOCK" | unmunge --socket="$MSOCK" >/dev/null ||
    die "munge cannot encode and decode a credential through $MSOCK"

CTLD_PORT=$(port 1)
SLURMD_PORT=$(port 2)
[ "$SLURMD_PORT" = "$CTLD_PORT" ] && SLURMD_PORT=$((CTLD_PORT + 1))
export SLURM_CONF=$T/slurm/slurm.conf
cat >"$SLURM_CONF" <<CONF
# written by tests/slurm_test.sh: one node (this machine, 2 CPUs), loopback only
ClusterName=checkerstest
SlurmctldHost=$HOST(127.0.0.1)
SlurmctldPort=$CTLD_PORT
SlurmdPort=$SLURMD_PORT
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$MSOCK
StateSaveLocation=$T/slurm/state
SlurmdSpoolDir=$T/slurm/spool
SlurmctldPidFile=$T/slurm/slurmctld.pid
SlurmdPidFile=$T/slurm/slurmd.pid
SlurmctldLogFile=$T/slurm/slurmctld.log
SlurmdLogFile=$T/slurm/slurmd.log
SlurmdParameters=config_overrides
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MpiDefault=none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
ReturnToService=2
MinJobAge=3600
KillWait=30
NodeName=$HOST NodeAddr=127.0.0.1 CPUs=2 State=UNKNOWN
PartitionName=test Nodes=$HOST Default=YES MaxTime=INFINITE State=UP
CONF
slurmctld -D -c -f "$SLURM_CONF" >"$T/slurm/slurmctld.out" 2>&1 &
daemons="$daemons $!"
ctld=$!
slurmd -D -f "$SLURM_CONF" >"$T/slurm/slurmd.out" 2>&1 &
daemons="$daemons $!"
sd=$!
node_idle() {
    gone "$ctld" && return 0
    gone "$sd" && return 0
    sinfo -h -N -o %T 2>/dev/null | grep -qx idle
}
wait_for 60 node_idle
if gone "$ctld" || gone "$sd" || ! sinfo -h -N -o %T 2>/dev/null | grep -qx idle; then
    echo "slurmctld:"
    tail -n 20 "$T/slurm/slurmctld.out" "$T/slurm/slurmctld.log" 2>/dev/null
    echo "slurmd:"
    tail -n 20 "$T/slurm/slurmd.out" "$T/slurm/slurmd.log" 2>/dev/null
    die "the node did not come up idle within 60 s (state: $(sinfo -h -N -o %T 2>/dev/null))"
fi
echo "ok   slurm cluster up: node $HOST idle (slurmctld :$CTLD_PORT, slurmd :$SLURMD_PORT)"

# ---- helpers ------------------------------------------------------------------
jobfield() { # JOBID FIELD: a field of `scontrol show job`
    scontrol -o show job "$1" 2>/dev/null | tr ' ' '\n' | sed -n "s/^$2=//p" | head -n 1
}
job_ended() {
    case "$(jobfield "$1" JobState)" in
    COMPLETED | FAILED | CANCELLED | TIMEOUT | NODE_FAIL | OUT_OF_MEMORY | PREEMPTED | BOOT_FAIL | DEADLINE) return 0 ;;
    *) return 1 ;;
    esac
}
# wait_job JOBID SECONDS: until the job has ended (asking slurmctld four
# times a second); says why when it has not.
wait_job() {
    local end=$((SECONDS + $2))
    until job_ended "$1"; do
        [ "$SECONDS" -ge "$end" ] && break
        sleep 0.25
    done
    if ! job_ended "$1"; then
        echo "FAIL job $1 did not end within $2 s: state $(jobfield "$1" JobState)," \
            "reason $(jobfield "$1" Reason)"
        fail=1
        return 1
    fi
}
# submit NAME VAR=VALUE...: sbatch the script (2 tasks on this node) with
# these parameters in its environment; the job id in $jid.
submit() {
    local name=$1
    shift
    jid=$(cd "$T/work" && env "$@" CHECKERS="$C" DB="$DB" LISTEN=127.0.0.1 \
        MANAGER_HOST=127.0.0.1 sbatch --parsable -N 1 -n 2 --job-name="$name" \
        --output="$T/work/$name-%j.out" "$SCRIPT" 2>"$T/work/sbatch.err")
    [ -n "$jid" ] || die "sbatch $name failed: $(cat "$T/work/sbatch.err")"
    jid=${jid%%;*}
    echo "     submitted $name as job $jid ($((SECONDS - t_start)) s into the test)"
}
# The processes still running with the argument 127.0.0.1:$1 (the manager's
# --listen, its workers' --connect), one command line a line; read from
# /proc, so no procps is needed. (The pattern is a regex that does not
# match its own text, so this grep never finds itself.)
procs_of() {
    local f re="127\\.0\\.0\\.1:$1"
    for f in $(grep -l -a -z -x -e "$re" /proc/[0-9]*/cmdline 2>/dev/null); do
        tr '\0' ' ' 2>/dev/null <"$f" && echo
    done
}
none_left() { [ -z "$(procs_of "$1")" ]; }
# pids_of PORT WORD: the pids of the processes with the argument
# 127.0.0.1:PORT and WORD as another argument (worker, prove).
pids_of() {
    local f re="127\\.0\\.0\\.1:$1"
    for f in $(grep -l -a -z -x -e "$re" /proc/[0-9]*/cmdline 2>/dev/null); do
        if tr '\0' '\n' 2>/dev/null <"$f" | grep -qx "$2"; then
            f=${f#/proc/}
            echo "${f%/cmdline}"
        fi
    done
}
show_job() { # what the job said, for a failure
    echo "---- job $1: $(scontrol -o show job "$1" 2>/dev/null | grep -o 'JobState=[^ ]*\|ExitCode=[^ ]*' | tr '\n' ' ')"
    cat "$T/work/"*"-$1.out" 2>/dev/null | tail -n 25
}
egdb_value=$($C egdb probe --db "$DB" 'B:W30,31,K19:B6,K12' | cut -f 2)
check "the databases' value of the root" loss "$egdb_value"
check "the databases' value of part 2's root" loss \
    "$($C egdb probe --db "$DB" 'B:W17,21,K32:B3,K16' | cut -f 2)"

# ---- 1. a whole proof ------------------------------------------------------------
F='B:W30,31,K19:B6,K12'
S1=$T/proofs/whole
P1=$(port 3)
submit whole FEN="$F" STATE="$S1" PIECES=4 JOB_TIME=5 JOB_NODES=300 PORT="$P1" \
    WORKER_STORES="$T/stores"
j1=$jid
if wait_job "$j1" 300; then
    check "1. job state" COMPLETED "$(jobfield "$j1" JobState)"
    check "1. job exit code" 0:0 "$(jobfield "$j1" ExitCode)"
    out="$S1/slurm-logs/manager-$j1.out"
    check "1. manager's result" "$F	loss" "$(head -n 1 "$out" 2>/dev/null)"
    $C proof check --state "$S1" --db "$DB" >"$T/chk1" 2>/dev/null
    check "1. proof check --state" "0 valid" "$? $(head -n 1 "$T/chk1" | cut -f 2)"
    check "1. token file made, mode 0600" 600 "$(stat -c %a "$S1/token" 2>/dev/null)"
    joined=$(grep -c 'worker [0-9]* joined' "$S1/slurm-logs/manager-$j1.log" 2>/dev/null)
    check "1. two workers joined the manager" 2 "$joined"
    connected=$(grep -l 'connected to 127.0.0.1' "$S1"/slurm-logs/worker-"$j1"-*.log 2>/dev/null |
        wc -l)
    check "1. each task's worker connected (its log)" 2 "$connected"
    key="whole-$(printf '%s' "$S1" | cksum | cut -d ' ' -f 1)"
    slots=$(ls -d "$T/stores/$key/$HOST"/slot-? 2>/dev/null | wc -l)
    check "1. each worker its own store slot" 2 "$slots"
    wait_for 30 none_left "$P1"
    check "1. no worker left after the job" "" "$(procs_of "$P1")"
fi
[ "$fail" = 0 ] || show_job "$j1"

# ---- 2. stopped mid-proof, then resumed by a second submission ------------------
# A root of about 270 jobs of 50 positions (the jobs are bounded by
# positions, not time: their count does not depend on the machine); the
# stop waits on events only (10 results admitted, the workers frozen, the
# manager gone).
F2='B:W17,21,K32:B3,K16'
S2=$T/proofs/resumed
P2=$(port 4)
admitted() { # JOBID: results the manager of that job admitted
    local n
    n=$(grep -c 'records admitted (result' "$S2/slurm-logs/manager-$1.log" 2>/dev/null)
    echo "${n:-0}"
}
ten_admitted() { [ "$(admitted "$1")" -ge 10 ] || job_ended "$1"; }
submit first FEN="$F2" STATE="$S2" PIECES=4 JOB_TIME=5 JOB_NODES=50 PORT="$P2" \
    WORKER_STORES="$T/stores"
j2=$jid
wait_for 300 ten_admitted "$j2" || echo "FAIL 2. no 10 admitted results within 300 s"
# frozen: at most the results already sent can still come in, a few of
# the root's hundreds of jobs: the signal lands mid-proof
wk=$(pids_of "$P2" worker)
[ -n "$wk" ] && kill -STOP $wk
check "2. the first job's two workers frozen" 2 "$(echo $wk | wc -w)"
mgr=$(pids_of "$P2" prove)
check "2. first job still running after 10 admitted results" RUNNING "$(jobfield "$j2" JobState)"
# A second manager on the same state is refused while the first runs (the
# script run by hand with a job id of its own: it stops at the lock, before
# any Slurm call, so the busy node does not make it wait).
(cd "$T/work" && SLURM_JOB_ID=999999 STATE="$S2" CHECKERS="$C" DB="$DB" PORT="$P2" \
    bash "$SCRIPT" >"$T/dup.out" 2>&1)
check "2. a second job on the same state is refused (exit 2)" "2 1" \
    "$? $(grep -c 'another job holds .*slurm.lock' "$T/dup.out")"
# what Slurm sends before the time limit (--signal=B:TERM@120): the batch
# shell alone is signalled; the manager stops, the script stops the workers
scancel --batch --signal=TERM "$j2" || echo "FAIL 2. scancel --batch --signal=TERM $j2"
# the manager stops; then the workers go on, find it gone, and the
# script's SIGTERM stops them
[ -n "$mgr" ] && { wait_for 60 gone "$mgr" || echo "FAIL 2. the manager did not stop within 60 s of the TERM"; }
[ -n "$wk" ] && kill -CONT $wk
if wait_job "$j2" 120; then
    check "2. first job: stopped (exit 1: resumable)" "FAILED 1:0" \
        "$(jobfield "$j2" JobState) $(jobfield "$j2" ExitCode)"
    check "2. first job: root not settled" "$F2	unknown" \
        "$(head -n 1 "$S2/slurm-logs/manager-$j2.out" 2>/dev/null)"
    check "2. first job: the manager saw the TERM" 1 \
        "$(grep -c 'terminated (SIGTERM)' "$S2/slurm-logs/manager-$j2.out" \
            "$S2/slurm-logs/manager-$j2.log" 2>/dev/null | awk -F: '{s += $NF} END {print (s >= 1)}')"
    wait_for 30 none_left "$P2"
    check "2. first job: no worker left" "" "$(procs_of "$P2")"
fi
before=$(admitted "$j2")
# again, with the state alone (no FEN): the resume
submit second STATE="$S2" PORT="$P2" WORKER_STORES="$T/stores"
j3=$jid
if wait_job "$j3" 300; then
    check "2. second job state" COMPLETED "$(jobfield "$j3" JobState)"
    check "2. second job exit code" 0:0 "$(jobfield "$j3" ExitCode)"
    out="$S2/slurm-logs/manager-$j3.out"
    check "2. resumed proof's result" "$F2	loss" "$(head -n 1 "$out" 2>/dev/null)"
    all=$(sed -n 's/.*jobs: \([0-9]*\) answered.* over all runs, \([0-9]*\) in this run.*/\1 \2/p' \
        "$out")
    check "2. the first job's $before results kept (jobs over all runs - this run >= $before)" 1 \
        "$(echo "$all" | awk -v b="$before" '{print ($1 > $2 && $1 - $2 >= b)}')"
    $C proof check --state "$S2" --db "$DB" >"$T/chk2" 2>/dev/null
    check "2. proof check --state" "0 valid" "$? $(head -n 1 "$T/chk2" | cut -f 2)"
    key="resumed-$(printf '%s' "$S2" | cksum | cut -d ' ' -f 1)"
    check "2. the second job's workers took the first one's store slots" 2 \
        "$(ls -d "$T/stores/$key/$HOST"/slot-? 2>/dev/null | wc -l)"
    wait_for 30 none_left "$P2"
    check "2. second job: no worker left" "" "$(procs_of "$P2")"
fi
if [ "$fail" != 0 ]; then
    show_job "$j2"
    show_job "$j3"
fi

# ---- 3. no worker can start: the manager is not left idle -------------------------
S3=$T/proofs/noworkers
submit noworkers FEN="$F" STATE="$S3" PIECES=4 PORT="$(port 5)" WORKER_STORES="$T/stores" \
    WORKER_ARGS=--no-such-option
j4=$jid
if wait_job "$j4" 120; then
    check "3. workers that cannot start: the manager stopped (exit 1)" "FAILED 1:0" \
        "$(jobfield "$j4" JobState) $(jobfield "$j4" ExitCode)"
    check "3. the job's output says why" 1 \
        "$(grep -c "the workers' step ended" "$T/work/noworkers-$j4.out" 2>/dev/null)"
fi
[ "$fail" = 0 ] || show_job "$j4"

# ---- 4. the 1-5 piece databases built as job arrays ------------------------------
# scripts/slurm-egdb.sh: one array per piece count and men count, a task a
# unit, each array after the one before; the files must be byte for byte
# those of the test databases, built on one machine by `egdb build`.
E=$T/egdb-slurm
mkdir -p "$E"
if CHECKERS="$C" SBATCH_ARGS="-c 1" "$ROOT/scripts/slurm-egdb.sh" "$E" 5 >"$T/work/egdb-jobs" \
    2>"$T/work/egdb-jobs.err"; then
    arrays=$(grep -c 'egdb-[0-9]-[0-9]' "$T/work/egdb-jobs")
    check "4. one job array a level (piece count, men)" 20 "$arrays"
    jf=$(tail -n 1 "$T/work/egdb-jobs" | cut -f 1)
    if wait_job "$jf" 900; then
        check "4. the last job" "COMPLETED 0:0" "$(jobfield "$jf" JobState) $(jobfield "$jf" ExitCode)"
        same=0 differ=0 missing=0
        for f in $(cd "$DB" && ls | grep -E '^[0-9]{4}\.[0-9]{2}\.(wld|cwl)$'); do
            if [ ! -f "$E/$f" ]; then
                missing=$((missing + 1))
            elif cmp -s "$DB/$f" "$E/$f"; then
                same=$((same + 1))
            else
                differ=$((differ + 1))
            fi
        done
        check "4. every file byte for byte the one-machine build's ($same)" "0 0" "$differ $missing"
        check "4. every unit of 1-5 pieces marked done" 65 "$(ls "$E/units" | grep -c '\.done$')"
    else
        tail -n 5 "$E"/slurm/*.out 2>/dev/null | tail -n 30
    fi
else
    echo "FAIL 4. slurm-egdb.sh: $(cat "$T/work/egdb-jobs.err")"
    fail=1
fi

if [ "$fail" = 0 ]; then
    echo "slurm_test: passed in $((SECONDS - t_start)) s"
else
    echo "slurm_test: FAILED (after $((SECONDS - t_start)) s)"
fi
exit $fail
