#!/usr/bin/env python3
"""bench/status_latency.py - does the manager's event loop keep answering
while a large proof is admitted? (issue 42's target: while a proof of at
least 10^5 records is admitted, the status page answers within 50 ms.)

Runs `checkers prove` with two local workers and --status-port on a root
whose proof arrives as one large result (default: W:W21,28,K32:BK19,K25
with the 1-4 piece databases, GHI-safe: one result of about 346,000
records), and asks the status page's JSON (/api/status) every 10 ms until the
root settles or the budget ends. Each request's wall time is recorded,
and the manager's log tells when each result was handled and how many
records it brought. Printed: the requests, the slowest, how many took
more than 50 ms, and the slowest requests around the largest admission.

Not part of `make test` (about a minute, both cores). Usage:
  bench/status_latency.py [--checkers bin/checkers] [--db DIR]
      [--fen FEN] [--pieces 4] [--budget 120] [--ghi safe] [--keep]
The databases: CHECKERS_TEST_DB or build/testdata/egdb5 (make testdata).
The proof written is checked with `proof check --state` at the end.
The requests are split by the manager's log: those that overlapped the
admission of a result of at least 10^5 records (its line says when it
was on the result writer, manager/writer.h, in seconds of the run, which
the pages' "seconds.run" places on this script's clock to 0.1 s; the window
is widened by 50 ms each side), and the
rest of the run
(its end included, when the manager stops serving to wind down).
Exit status 1 when a request took more than 50 ms during such an
admission, no such result came, or the proof is not checked valid.
"""
import argparse
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request

LIMIT_MS = 50.0
BIG = 100_000


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--checkers", default="bin/checkers")
    ap.add_argument("--db", default=os.environ.get("CHECKERS_TEST_DB", "build/testdata/egdb5"))
    ap.add_argument("--fen", default="W:W21,28,K32:BK19,K25")
    ap.add_argument("--pieces", default="4")
    ap.add_argument("--budget", default="120")
    ap.add_argument("--ghi", default="safe")
    ap.add_argument("--keep", action="store_true")
    a = ap.parse_args()

    tmp = tempfile.mkdtemp(prefix="status-latency.")
    port = free_port()
    log = open(os.path.join(tmp, "log"), "w")
    cmd = [a.checkers, "prove", "--fen", a.fen, "--db", a.db, "--pieces", a.pieces,
           "--state", os.path.join(tmp, "S"), "--workers", "2", "--budget", a.budget,
           "--ghi", a.ghi, "--status-port", str(port), "--quiet"]
    t0 = time.monotonic()
    mgr = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=log, text=True)
    url = "http://127.0.0.1:%d/api/status" % port
    samples = []  # (seconds since start, ms, ok, start, end)
    offsets = []  # our clock minus the run's seconds the pages report
    trace = open(os.path.join(tmp, "trace"), "w")  # with --keep: every request
    while mgr.poll() is None:
        s = time.monotonic()
        ok = True
        try:
            with urllib.request.urlopen(url, timeout=10) as r:
                body = r.read()
            mr = re.search(rb'"seconds":\{"run":([\d.]+)', body)
            if mr:  # where the manager's clock starts, in ours (to 0.1 s)
                offsets.append((s + time.monotonic()) / 2 - t0 - float(mr.group(1)))
        except Exception:  # not listening yet, or gone: counted apart
            ok = False
        e = time.monotonic()
        samples.append((s - t0, (e - s) * 1000.0, ok, s, e))
        if a.keep:
            trace.write("%s %.1f %d\n" % (time.strftime("%H:%M:%S"), (e - s) * 1000.0, ok))
        time.sleep(0.01)
    out = mgr.stdout.read()
    log.close()
    trace.close()

    # the manager's log: "HH:MM:SS manager: job J from W: BOUND, N records admitted"
    text = open(os.path.join(tmp, "log")).read()
    big = [int(m.group(1)) for m in re.finditer(r"(\d+) records admitted", text)]
    # the admission windows of the large results: the line is logged when
    # the writer hands a result back, with its time on the writer (to the
    # second: the window is widened by a second each side)
    windows = []
    offsets.sort()
    off = offsets[len(offsets) // 2] if offsets else 0.0
    for mm in re.finditer(r" (\d+) records admitted.*; [\d.]+ s on the writer "
                          r"\(([\d.]+)-([\d.]+) s of this run\)", text):
        if int(mm.group(1)) >= BIG:  # the run's seconds, from the manager's start
            windows.append((t0 + off + float(mm.group(2)) - 0.05,
                            t0 + off + float(mm.group(3)) + 0.05))
    work = re.search(r"manager work ([\d.]+) s", out + text)
    answered = [x for x in samples if x[2]]
    # a request that failed slowly was waiting on a blocked loop (it ended
    # when the manager did): it counts; one refused at once (before the
    # port opened, or after the end) does not
    first = answered[0][0] if answered else 0
    waited = [x for x in samples if x[2] or (x[0] >= first and x[1] > LIMIT_MS)]
    def during(x):  # the request overlapped an admission window
        # a request that failed, begun in the last 0.15 s of a window (its
        # widening and the clock's 0.1 s), met the manager's end when that
        # result settled the run, not a held loop
        return any(x[3] <= b - (0 if x[2] else 0.15) and x[4] >= a for a, b in windows)
    inside = [x for x in waited if during(x)]
    slow = [x for x in inside if x[1] > LIMIT_MS]
    slow_out = [x for x in waited if not during(x) and x[1] > LIMIT_MS]
    print("status_latency: %s, %s pieces, --ghi %s; %d requests answered, %d failed after"
          " waiting (counted), %d refused at once (before the port opened or at the end)" %
          (a.fen, a.pieces, a.ghi, len(answered), len(waited) - len(answered),
           len(samples) - len(waited)))
    print("results admitted: %d, the largest %d records; %s" %
          (len(big), max(big) if big else 0,
           ("manager work %s s" % work.group(1)) if work else "no manager-work line"))
    for name, part, over in (("during the large admissions", inside, slow),
                             ("the rest of the run", [x for x in waited if not during(x)],
                              slow_out)):
        if not part:
            print("request ms, %s: none" % name)
            continue
        ms = sorted(x[1] for x in part)
        print("request ms, %s (%d): median %.1f, 99th %.1f, max %.1f; over %d ms: %d" %
              (name, len(part), ms[len(ms) // 2], ms[min(len(ms) - 1, int(len(ms) * 0.99))],
               ms[-1], LIMIT_MS, len(over)))
        for x in sorted(over, key=lambda x: -x[1])[:5]:
            print("  at %.1f s: %.0f ms%s" % (x[0], x[1], "" if x[2] else " (failed)"))
    print("the run's clock starts %.2f s after the command; the manager's loop, held for "
          "the graph steps: %s" % (off,
           ", ".join(re.findall(r"the loop held (\d+ ms)", text)) or "no large result"))
    print("root: %s" % (out.splitlines()[0] if out else "(no result line)"))
    # the proof the run wrote, checked from scratch as any proof a bench writes
    chk = subprocess.run([a.checkers, "proof", "check", "--state", os.path.join(tmp, "S"),
                          "--db", a.db], capture_output=True, text=True)
    verdict = [l.split("\t")[1] for l in chk.stdout.splitlines() if l.startswith(a.fen + "\t")]
    print("proof check --state: %s (exit %d)" % (verdict[0] if verdict else "?", chk.returncode))
    if not a.keep:
        shutil.rmtree(tmp, ignore_errors=True)
    else:
        print("kept: %s" % tmp)
    if not big or max(big) < BIG:
        print("status_latency: no result of %d records or more came: nothing measured" % BIG)
        return 1
    if chk.returncode != 0 or not verdict or verdict[0] != "valid":
        print("status_latency: the proof written was not checked valid")
        return 1
    if not windows:
        print("status_latency: no admission of %d records or more was timed (no "
              "'on the writer' line)" % BIG)
        return 1
    return 1 if slow else 0


if __name__ == "__main__":
    sys.exit(main())
