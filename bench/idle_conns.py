#!/usr/bin/env python3
"""idle_conns.py - idle and slow TCP connections to a proof-tree manager
(bench/load.sh, part 2). Not a worker: it never says HELLO.

    idle_conns.py --port P [--host 127.0.0.1] [--silent N] [--drip N]
                  [--oversize N] [--hold S] [--reopen]

Kinds of connection, all opened at the start, one blocking connect after
the other (no burst: the manager's listen backlog is 64):
  silent    connects and sends nothing; the manager should close it once
            it has been silent for MGR_SILENCE_MS (15 s, manager.h)
  drip      sends the 5-byte header of a 400-byte HELLO, then one payload
            byte every 2 s: a frame that never completes must not count
            as a sign of life (slowloris); closed at the silence timeout
  oversize  sends a header announcing a frame of 65,536 bytes before
            HELLO: above MGR_PRE_HELLO_MAX (4,096), closed at once
With --reopen, a silent connection the manager closes is opened again at
once, so that N stay open for the whole hold. After --hold seconds every
connection still open is closed by us.

Prints "opened N in S s (M open now); connect latency ..." (stdout,
flushed) once all are opened (a connect that takes a second or more had
its SYN dropped: the manager's accept queue was full), then at the end
one line per kind:
  KIND opened=N failed=F closed_by_peer=C still_open=O close_s=min/median/max
(close_s: seconds from connect to the manager's close, first connections
only, i.e. not counting reopened ones) and "reopened=R" for silent.
"""
import argparse
import select
import socket
import statistics
import struct
import sys
import time


LATENCY = []  # seconds each connect of the opening took


def connect(host, port):
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.settimeout(10)
    t = time.monotonic()
    try:
        s.connect((host, port))
    except OSError:
        s.close()
        return None
    LATENCY.append(time.monotonic() - t)
    s.setblocking(False)
    return s


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--silent", type=int, default=1000)
    ap.add_argument("--drip", type=int, default=0)
    ap.add_argument("--oversize", type=int, default=0)
    ap.add_argument("--hold", type=float, default=30.0)
    ap.add_argument("--reopen", action="store_true")
    a = ap.parse_args()

    kinds = ["silent", "drip", "oversize"]
    stats = {k: {"opened": 0, "failed": 0, "closed": 0, "times": [], "reopened": 0} for k in kinds}
    conns = {}  # fd -> [sock, kind, t_connect, first (not a reopen), next_drip]
    poller = select.poll()

    def open_one(kind, first):
        s = connect(a.host, a.port)
        if s is None:
            stats[kind]["failed"] += 1
            return
        t = time.monotonic()
        if kind == "drip":
            s.send(struct.pack("<IB", 400, 1))  # HELLO header, payload never whole
        elif kind == "oversize":
            s.send(struct.pack("<IB", 65536, 1))
        conns[s.fileno()] = [s, kind, t, first, t + 2.0]
        poller.register(s.fileno(), select.POLLIN | select.POLLERR | select.POLLHUP)
        if first:
            stats[kind]["opened"] += 1
        else:
            stats[kind]["reopened"] += 1

    def service(timeout_ms, reopen):
        """Takes the manager's closes (reopening silent ones if reopen)
        and drips a byte where one is due."""
        closed = []
        for fd, ev in poller.poll(timeout_ms):
            c = conns.get(fd)
            if c is None:
                continue
            s, kind, t0, first = c[0], c[1], c[2], c[3]
            try:
                data = s.recv(4096)
            except BlockingIOError:
                continue
            except OSError:
                data = b""
            if data:
                continue  # the manager says nothing before HELLO; ignore anything
            poller.unregister(fd)
            del conns[fd]
            s.close()
            if first:
                stats[kind]["closed"] += 1
                stats[kind]["times"].append(time.monotonic() - t0)
            closed.append(kind)
        # reopened only once every close is timed: a reopen may wait
        for kind in closed:
            if kind == "silent" and reopen:
                open_one(kind, False)
        now = time.monotonic()
        for c in list(conns.values()):
            if c[1] == "drip" and now >= c[4]:
                c[4] = now + 2.0
                try:
                    c[0].send(b"\0")
                except OSError:
                    pass

    # open them all, taking closes as they come (so that a connection
    # refused at the cap is seen closed at once, not after the opening);
    # reopening starts with the hold
    t_open = time.monotonic()
    for kind, n in (("silent", a.silent), ("drip", a.drip), ("oversize", a.oversize)):
        for _ in range(n):
            open_one(kind, True)
            service(0, False)
    lat = sorted(LATENCY)
    print("opened %d in %.1f s (%d open now); connect latency median %.4f s, max %.2f s, "
          "%d over 0.5 s" % (a.silent + a.drip + a.oversize, time.monotonic() - t_open,
                             len(conns), statistics.median(lat) if lat else 0,
                             lat[-1] if lat else 0, sum(1 for x in lat if x > 0.5)), flush=True)

    end = time.monotonic() + a.hold
    while True:
        now = time.monotonic()
        if now >= end:
            break
        service(min(500, max(1, int((end - now) * 1000))), a.reopen)

    still = {k: 0 for k in kinds}
    for c in conns.values():
        if c[3]:
            still[c[1]] += 1
        c[0].close()
    for k in kinds:
        st = stats[k]
        if st["opened"] + st["failed"] == 0:
            continue
        ts = st["times"]
        cs = ("%.1f/%.1f/%.1f" % (min(ts), statistics.median(ts), max(ts))) if ts else "-"
        line = "%s opened=%d failed=%d closed_by_peer=%d still_open=%d close_s=%s" % (
            k, st["opened"], st["failed"], st["closed"], still[k], cs)
        if k == "silent":
            line += " reopened=%d" % st["reopened"]
        print(line, flush=True)


if __name__ == "__main__":
    sys.exit(main())
