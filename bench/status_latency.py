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
Exit status 1 when a request took more than 50 ms while a result of at
least 10^5 records was being admitted, no such result came, or the
proof is not checked valid.
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
    samples = []  # (seconds since start, ms, ok)
    trace = open(os.path.join(tmp, "trace"), "w")  # with --keep: every request
    while mgr.poll() is None:
        s = time.monotonic()
        ok = True
        try:
            with urllib.request.urlopen(url, timeout=10) as r:
                r.read()
        except Exception:  # not listening yet, or gone: counted apart
            ok = False
        e = time.monotonic()
        samples.append((s - t0, (e - s) * 1000.0, ok))
        if a.keep:
            trace.write("%s %.1f %d\n" % (time.strftime("%H:%M:%S"), (e - s) * 1000.0, ok))
        time.sleep(0.01)
    out = mgr.stdout.read()
    log.close()
    trace.close()

    # the manager's log: "HH:MM:SS manager: job J from W: BOUND, N records admitted"
    text = open(os.path.join(tmp, "log")).read()
    big = [int(m.group(1)) for m in re.finditer(r"(\d+) records admitted", text)]
    work = re.search(r"manager work ([\d.]+) s", out + text)
    answered = [x for x in samples if x[2]]
    # a request that failed slowly was waiting on a blocked loop (it ended
    # when the manager did): it counts; one refused at once (before the
    # port opened, or after the end) does not
    first = answered[0][0] if answered else 0
    waited = [x for x in samples if x[2] or (x[0] >= first and x[1] > LIMIT_MS)]
    slow = [x for x in waited if x[1] > LIMIT_MS]
    print("status_latency: %s, %s pieces, --ghi %s; %d requests answered, %d failed after"
          " waiting (counted), %d refused at once (before the port opened or at the end)" %
          (a.fen, a.pieces, a.ghi, len(answered), len(waited) - len(answered),
           len(samples) - len(waited)))
    print("results admitted: %d, the largest %d records; %s" %
          (len(big), max(big) if big else 0,
           ("manager work %s s" % work.group(1)) if work else "no manager-work line"))
    if waited:
        ms = sorted(x[1] for x in waited)
        print("request ms: median %.1f, 99th %.1f, max %.1f; over %d ms: %d" %
              (ms[len(ms) // 2], ms[min(len(ms) - 1, int(len(ms) * 0.99))], ms[-1],
               LIMIT_MS, len(slow)))
        for t, m, ok in sorted(slow, key=lambda x: -x[1])[:5]:
            print("  at %.1f s: %.0f ms%s" % (t, m, "" if ok else " (failed)"))
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
    return 1 if slow else 0


if __name__ == "__main__":
    sys.exit(main())
