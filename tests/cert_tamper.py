#!/usr/bin/env python3
"""cert_tamper.py - makes damaged copies of a proof certificate for
tests/e2e_cert.sh, one kind of damage each, the way a forger would (counts
in the end record kept consistent, the body re-compressed), so that each
copy must be refused for its own reason:

  move     a kept move changed to another legal move (into the certificate
           when one leads there, else out of it)
  missing  the position a kept move leads to removed
  reply    the position a defender's reply leads to removed
  leaf     a database leaf's claimed value changed: to one that still gives
           its section's goal but not the database's value where a leaf
           allows it, else to one that does not give the goal
  bleaf    the same for a partial leaf ('B', format 2): a claim stronger
           than the .pwl file's bound
  pwl      one byte of the payload of the first partial file (.pwl) listed
           changed, in the database folder given as a fourth argument (the
           file is copied first: OUT names the copy's folder)
  cycle    a win proof's kept move changed so that it comes back to a
           position from which the changed one is reached again
  digest   one byte of the first database file's digest changed
  truncate the file cut at two thirds
  version  the format version byte set to 9 (no such version)

usage: cert_tamper.py KIND IN OUT [DBDIR]
Prints the FEN of the position the damage is at ("-" when none); exit 1
when the certificate has no place for that damage.
"""

import os
import struct
import sys
import zlib

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "checker"))
import rules  # noqa: E402

POS = struct.Struct("<4IB")


def parse(data):
    (nfiles,) = struct.unpack_from("<I", data, 36)
    end = 40 + 48 * nfiles
    body = zlib.decompress(data[end:])
    recs, at, sec = [], 0, None
    while at < len(body):
        tag = chr(body[at])
        if tag == "S":
            sec = (body[at + 1], body[at + 2])
            recs.append(["S", sec])
            at += 3
        elif tag == "E":
            at += 17
        elif tag in ("L", "B"):
            p = POS.unpack_from(body, at + 1)
            lo, hi = struct.unpack_from("<bb", body, at + 18)
            recs.append([tag, sec, p, lo, hi])
            at += 20
        else:
            p = POS.unpack_from(body, at + 1)
            at += 18
            move = length = None
            if p[4] == sec[0]:
                move = struct.unpack_from("<BBI", body, at)
                at += 6
            if sec[1]:
                (length,) = struct.unpack_from("<I", body, at)
                at += 4
            recs.append(["P", sec, p, move, length])
    return data[:end], recs


def build(head, recs):
    out = bytearray()
    npos = nleaf = 0
    for r in recs:
        if r[0] == "S":
            out += bytes([ord("S"), r[1][0], r[1][1]])
        elif r[0] in ("L", "B"):
            out += r[0].encode() + POS.pack(*r[2]) + struct.pack("<bb", r[3], r[4])
            nleaf += 1
        else:
            out += b"P" + POS.pack(*r[2])
            if r[3] is not None:
                out += struct.pack("<BBI", *r[3])
            if r[4] is not None:
                out += struct.pack("<I", r[4])
            npos += 1
    out += b"E" + struct.pack("<QQ", npos, nleaf)
    return head + zlib.compress(bytes(out))


def positions(recs, sec):
    return {r[2]: r for r in recs if r[0] == "P" and r[1] == sec}


def reaches(recs, sec, start, goal):
    """Whether goal is reached from start through the section's records."""
    by = positions(recs, sec)
    seen, todo = {start}, [start]
    while todo:
        p = todo.pop()
        if p == goal:
            return True
        r = by.get(p)
        if r is None:
            continue
        ms = [tuple(r[3])] if r[3] is not None else rules.moves(p)
        for m in ms:
            c = rules.play(p, m)
            if c not in seen:
                seen.add(c)
                todo.append(c)
    return False


def main(kind, src, dst, extra=None):
    data = open(src, "rb").read()
    head, recs = parse(data)
    where = "-"
    if kind == "pwl":
        # OUT is a folder: a copy of DBDIR with one payload byte of the
        # first listed .pwl file changed (the header's checksums untouched,
        # as a forger who does not care would leave them).
        import shutil
        (nfiles,) = struct.unpack_from("<I", data, 36)
        names = [data[40 + 48 * i:47 + 48 * i].decode() for i in range(nfiles)
                 if data[47 + 48 * i] == 1]
        if not names:
            return 1
        shutil.copytree(extra, dst, symlinks=True)
        fp = os.path.join(dst, names[0] + ".pwl")
        d = bytearray(open(fp, "rb").read())
        d[128] ^= 0x11
        os.remove(fp)
        open(fp, "wb").write(bytes(d))
        print(where)
        return 0
    if kind == "truncate":
        open(dst, "wb").write(data[:len(data) * 2 // 3])
        print(where)
        return 0
    if kind == "version":
        d = bytearray(data)
        d[7] = 9
        open(dst, "wb").write(bytes(d))
        print(where)
        return 0
    if kind == "digest":
        d = bytearray(data)
        if struct.unpack_from("<I", d, 36)[0] == 0:
            return 1
        d[40 + 16] ^= 0x01
        open(dst, "wb").write(bytes(d))
        print(where)
        return 0
    done = False
    # The first record (in file order) that reaches each position, and how:
    # the checkers report the first failing record, so the damage must be
    # met first where it is meant to be.
    first = {}
    for r in recs:
        if r[0] != "P":
            continue
        ms = [tuple(r[3])] if r[3] is not None else rules.moves(r[2])
        for m in ms:
            first.setdefault((r[1], rules.play(r[2], m)), (r, r[3] is not None))
    root = struct.unpack_from("<4IB", data, 16)
    if kind in ("leaf", "bleaf"):
        # A claim that gives the section's goal (X's value: lo where X is
        # to move, -hi otherwise) but leaves out the stored value or bound.
        tag = "L" if kind == "leaf" else "B"
        claims = [(-1, -1), (-1, 0), (0, 0), (0, 1), (1, 1)]
        for r in recs:
            if r[0] != tag:
                continue
            (x, win), p, lo, hi = r[1], r[2], r[3], r[4]
            need = 1 if win else 0
            for c in claims:
                if (c[0] if p[4] == x else -c[1]) >= need and not (c[0] <= lo and hi <= c[1]):
                    r[3], r[4] = c
                    where, done = rules.fen(p), True
                    break
            if done:
                break
        if not done and kind == "leaf":
            for r in recs:
                if r[0] == "L" and r[3] == r[4]:
                    r[3] = r[4] = 1 if r[3] != 1 else -1
                    where, done = rules.fen(r[2]), True
                    break
        if not done:
            return 1
        open(dst, "wb").write(build(head, recs))
        print(where)
        return 0
    for r in recs:
        if done:
            break
        if r[0] != "P":
            continue
        sec, p, move = r[1], r[2], r[3]
        if kind == "move" and move is not None:
            # the same piece to its own square: never a legal move
            r[3] = (move[0], move[0], move[2])
            where, done = rules.fen(p), True
        elif kind == "cycle" and move is not None and sec[1]:
            others = [m for m in rules.moves(p) if m != tuple(move)
                      and reaches(recs, sec, rules.play(p, m), p)]
            if others:
                r[3] = others[0]
                where, done = rules.fen(p), True
        elif kind in ("missing", "reply"):
            ref = first.get((sec, p))
            if ref is None or p == root or ref[1] != (kind == "missing"):
                continue
            recs.remove(r)
            where, done = rules.fen(ref[0][2]), True
    if not done:
        return 1
    open(dst, "wb").write(build(head, recs))
    print(where)
    return 0


if __name__ == "__main__":
    if len(sys.argv) not in (4, 5):
        print(__doc__.strip(), file=sys.stderr)
        sys.exit(2)
    sys.exit(main(*sys.argv[1:]))
