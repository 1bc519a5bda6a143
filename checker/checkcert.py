#!/usr/bin/env python3
"""checkcert.py - an independent checker of checkers proof certificates.

Written from docs/certificate.md and the README's rules alone, in Python 3
with the standard library only; it shares no code with the C programs that
write the certificates. It trusts the rules (rules.py), the database files
(cwl.py, each checked against the SHA-256 the certificate names) and nothing
else in the certificate: every claim is re-derived.

usage: checkcert.py CERT [--db DIR] [--other-files]
       checkcert.py --perft DEPTH [--fen FEN] [--merged]

Reads formats 1 and 2 (format 2: a database scope with splits of the next
piece count and partial-database leaves, each checked against its .pwl
file, read by pwl.py).

Output: "valid", or "invalid" with the first failing position and the
reason. Exit status (the project's convention): 0 valid, 1 invalid, 2 bad
usage, a certificate or a database file it lists that cannot be read (the
message names the file and the scope the certificate rests on; no
verdict), 3 a damaged database file (no verdict).

A listed database file whose size or SHA-256 differs from the certificate's
is not the file the prover used (a rebuilt or recompressed set, or damage):
no verdict (exit 2), unless --other-files is given; then the leaves are
checked against the values of the .cwl files given, and the output counts
the files that differ. This checker cannot tell such a file from a damaged
one (it has no XXH3): check the folder with `checkers egdb verify` first.
A partial (.pwl) file that differs is no verdict even with --other-files.
"""

import os
import struct
import sys
import time
import zlib

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import cwl  # noqa: E402
import pwl  # noqa: E402
import rules  # noqa: E402

VERSIONS = (1, 2)
KIND_EXT = {0: "cwl", 1: "pwl"}
MAGIC = b"CKCERT\0"
FIXED = 40
ENTRY = 48
POS = struct.Struct("<4IB")
WORD = {-1: "a loss", 0: "a draw", 1: "a win"}
BOUND = {(-1, -1): "LL", (-1, 0): "LD", (0, 0): "DD", (0, 1): "DW", (1, 1): "WW",
         (-1, 1): "LW"}


class Invalid(Exception):
    """The certificate does not prove its claim: where (a position or None)
    and why."""

    def __init__(self, where, why):
        super().__init__(why)
        self.where, self.why = where, why


def colour(c):
    return "Black" if c == rules.BLACK else "White"


def goals_of(lo, hi, s):
    """The sections a claim lo..hi for the root's side to move s implies."""
    g = []
    if lo >= 0:
        g.append((s, lo == 1))
    if hi <= 0:
        g.append((1 - s, hi == -1))
    return g


class Scope:
    """What the databases value (docs/certificate.md, "The databases' scope"):
    every position of at most n pieces, those of n + 1 pieces whose larger
    side has a count in splits, and with partial, bounds from .pwl files."""

    def __init__(self, n, splits, partial):
        self.n, self.splits, self.partial = n, splits, partial

    def has(self, p):
        nb = rules.popcount(p[0] | p[2])
        nw = rules.popcount(p[1] | p[3])
        if nb + nw <= self.n:
            return True
        return nb + nw == self.n + 1 and max(nb, nw) in self.splits

    def name(self):
        s = str(self.n)
        if self.splits:
            s += "+" + ",".join("%dv%d" % (a, self.n + 1 - a) for a in sorted(self.splits,
                                                                              reverse=True))
        return s + ("+partial" if self.partial else "")


# ---- reading ---------------------------------------------------------------------


def read_header(data):
    if len(data) < 8 or data[:7] != MAGIC:
        raise Invalid(None, "not a certificate (bad magic in bytes 0-6)")
    version = data[7]
    if version not in VERSIONS:
        raise Invalid(None, "format version %d; this checker reads versions %d and %d"
                      % (version, VERSIONS[0], VERSIONS[1]))
    if len(data) < FIXED:
        raise Invalid(None, "the file is truncated (inside the header)")
    variant, routes, lo, hi, npieces, comp, nsec, zero = struct.unpack_from("<BBbbBBBB", data, 8)
    if variant != 1 or routes != 1:
        raise Invalid(None, "rules %d, route rule %d: this checker knows rules 1, routes 1"
                      % (variant, routes))
    root = POS.unpack_from(data, 16)
    flags = data[33]
    (splitbits,) = struct.unpack_from("<H", data, 34)
    splits = {a for a in range(16) if splitbits >> a & 1}
    scope_ok = (flags == 0 and splitbits == 0) if version == 1 else \
        (flags & ~1 == 0 and all(npieces > 0 and (npieces + 2) // 2 <= a <= npieces + 1
                                 for a in splits) and (npieces > 0 or flags == 0))
    if comp != 1 or zero != 0 or rules.valid(root) or not -1 <= lo <= hi <= 1 \
            or npieces > 8 or not scope_ok:
        raise Invalid(None, "malformed header (compression, root, claim, piece limit or "
                      "scope)")
    scope = Scope(npieces, splits, flags & 1 == 1)
    goals = goals_of(lo, hi, root[4])
    if not goals or nsec != len(goals):
        raise Invalid(root, "the claim %s implies %d sections, the header says %d"
                      % (BOUND[(lo, hi)], len(goals), nsec))
    (nfiles,) = struct.unpack_from("<I", data, 36)
    end = FIXED + ENTRY * nfiles
    if end > len(data):
        raise Invalid(None, "the file is truncated (inside the list of database files)")
    files = {}
    prev = None
    for i in range(nfiles):
        e = data[FIXED + ENTRY * i:FIXED + ENTRY * (i + 1)]
        name = e[:7].decode("ascii", "replace")
        size, digest = struct.unpack_from("<Q", e, 8)[0], e[16:48]
        kind = e[7]
        if kind not in ((0, 1) if scope.partial else (0,)) or len(name) != 7 \
                or name[4] != ".":
            raise Invalid(None, "database file entry %d: %r (kind %d) is not a slice name and "
                          "file kind" % (i, name, kind))
        if prev is not None and e[:8] <= prev:
            raise Invalid(None, "database file entry %d: %r is out of order or repeated"
                          % (i, name))
        prev = e[:8]
        files[(name, kind)] = (size, digest)
    return root, (lo, hi), scope, goals, files, end


def read_body(raw, goals, scope):
    """Sections as (goal, records in file order, positions, leaves)."""
    z = zlib.decompressobj()
    try:
        body = z.decompress(raw)
    except zlib.error as e:
        raise Invalid(None, "the compressed body is damaged (%s)" % e)
    if not z.eof:
        raise Invalid(None, "the file is truncated (the compressed body ends early)")
    if z.unused_data:
        raise Invalid(None, "bytes after the end of the compressed body")
    sections, at, npos, nleaf = [], 0, 0, 0
    cur = None
    while True:
        if at >= len(body):
            raise Invalid(None, "the file is truncated (no end record)")
        tag = body[at:at + 1]
        if tag == b"S":
            if at + 3 > len(body):
                raise Invalid(None, "the file is truncated (the body stops inside a record)")
            g = (body[at + 1], body[at + 2] == 1)
            k = len(sections)
            if k >= len(goals) or body[at + 2] > 1 or g != goals[k]:
                raise Invalid(None, "body byte %d: section %d is not the goal the header's "
                              "claim implies" % (at, k + 1))
            cur = (g, [], {}, {})
            sections.append(cur)
            at += 3
            continue
        if tag == b"E":
            if at + 17 > len(body):
                raise Invalid(None, "the file is truncated (the body stops inside a record)")
            cp, cl = struct.unpack_from("<QQ", body, at + 1)
            if (cp, cl) != (npos, nleaf):
                raise Invalid(None, "end record: counts do not match the records read")
            if at + 17 != len(body):
                raise Invalid(None, "%d bytes after the end record" % (len(body) - at - 17))
            break
        if tag not in (b"P", b"L") and not (tag == b"B" and scope.partial):
            raise Invalid(None, "body byte %d: unknown record tag 0x%02x%s"
                          % (at, body[at], " (a partial leaf, and the header's scope has no "
                             "partial databases)" if tag == b"B" else ""))
        if cur is None:
            raise Invalid(None, "body byte %d: a record before the first section" % at)
        (x, win), order, recs, leaves = cur
        if at + 18 > len(body):
            raise Invalid(None, "the file is truncated (the body stops inside a record)")
        p = POS.unpack_from(body, at + 1)
        why = rules.valid(p)
        if why:
            raise Invalid(None, "body byte %d: not a position: %s" % (at, why))
        at += 18
        if tag in (b"L", b"B"):
            if at + 2 > len(body):
                raise Invalid(None, "the file is truncated (the body stops inside a record)")
            lo, hi = struct.unpack_from("<bb", body, at)
            at += 2
            if not -1 <= lo <= hi <= 1 or (lo, hi) == (-1, 1):
                raise Invalid(p, "leaf record with the bound %d..%d" % (lo, hi))
            if p in leaves or p in recs:
                raise Invalid(p, "the position appears twice in section %d" % len(sections))
            leaves[p] = (lo, hi, tag.decode())
            order.append((tag.decode(), p))
            nleaf += 1
            continue
        move, length = None, None
        if p[4] == x:
            if at + 6 > len(body):
                raise Invalid(None, "the file is truncated (the body stops inside a record)")
            f, t, cap = struct.unpack_from("<BBI", body, at)
            move = (f, t, cap)
            at += 6
        if win:
            if at + 4 > len(body):
                raise Invalid(None, "the file is truncated (the body stops inside a record)")
            (length,) = struct.unpack_from("<I", body, at)
            at += 4
        if p in recs or p in leaves:
            raise Invalid(p, "the position appears twice in section %d" % len(sections))
        recs[p] = (move, length)
        order.append(("P", p))
        npos += 1
    if len(sections) != len(goals):
        raise Invalid(None, "the body has %d sections, the claim implies %d"
                      % (len(sections), len(goals)))
    return sections, npos, nleaf


# ---- checking ----------------------------------------------------------------------


class Checker:
    def __init__(self, db, pdb, scope):
        self.db = db
        self.pdb = pdb
        self.scope = scope

    def leaf_value(self, p):
        """The database's value of p for its side to move (-1, 0, 1)."""
        try:
            v = self.db.probe(p)
        except cwl.NotListed as e:
            raise Invalid(p, "the leaf's value rests on database file %s, which the header "
                          "does not list" % e)
        return {cwl.WIN: 1, cwl.LOSS: -1, cwl.DRAW: 0}[v]

    def leaf_bound(self, p):
        """The partial database's stored bound (lo, hi) of p for its side to move."""
        try:
            return self.pdb.probe(p)
        except cwl.NotListed as e:
            raise Invalid(p, "the partial leaf rests on %s, which the header does not list"
                          % e)

    def check_section(self, root, goal, order, recs, leaves):
        x, win = goal
        need = 1 if win else 0
        gname = "%s %s" % (colour(x), "wins" if win else "at least draws")
        scope = self.scope

        def fail(where, why):
            raise Invalid(where, "%s: %s" % (gname, why))

        def covered(p, c, kind, mtext):
            """Whether child c of p (reached by move text mtext) meets the goal."""
            rec = recs.get(c)
            if rec is not None:
                if win and rec[1] >= recs[p][1]:
                    fail(p, "cycle or no progress: %s %s leads to %s, whose length %d is not "
                         "below this position's %d (a win must end)"
                         % (kind, mtext, rules.fen(c), rec[1], recs[p][1]))
                return
            if not rules.has_move(c):
                vx = -1 if c[4] == x else 1
                if vx < need:
                    fail(p, "%s %s leaves %s without a move (a loss for %s)"
                         % (kind, mtext, colour(c[4]), colour(c[4])))
                return
            claim = leaves.get(c)
            if scope.has(c) and (claim is None or claim[2] != "L"):
                fail(p, "%s %s leads to %s, a database position with no leaf record"
                     % (kind, mtext, rules.fen(c)))
            if claim is not None and claim[2] == ("L" if scope.has(c) else "B"):
                vx = claim[0] if c[4] == x else -claim[1]
                if vx < need:
                    fail(p, "%s %s leads to a database leaf claimed as %s for %s"
                         % (kind, mtext, BOUND[claim[:2]], colour(c[4])))
                return
            if kind == "kept move":
                fail(p, "kept move %s leads to %s, which is not in the certificate (a "
                     "missing position)" % (mtext, rules.fen(c)))
            fail(p, "reply %s leads to %s, which is not in the certificate (a defender's "
                 "reply left out)" % (mtext, rules.fen(c)))

        # The root first: it must be in the section, or a leaf meeting the goal.
        if root not in recs:
            if not rules.has_move(root):
                if (-1 if root[4] == x else 1) < need:
                    fail(root, "%s has no move here" % colour(root[4]))
            elif root not in leaves:
                fail(root, "the root is neither a position record nor a database leaf")
            else:
                lo, hi, _ = leaves[root]
                if (lo if root[4] == x else -hi) < need:
                    fail(root, "the root's leaf claims %s" % BOUND[(lo, hi)])

        for kind, p in order:
            if kind in ("L", "B"):
                lo, hi, _ = leaves[p]
                if kind == "L" and not scope.has(p):
                    fail(p, "a database leaf outside the header's scope %s" % scope.name())
                if kind == "B" and scope.has(p):
                    fail(p, "a partial leaf of a position the complete databases of the scope "
                         "%s hold (it must be an 'L' leaf)" % scope.name())
                if (lo if p[4] == x else -hi) < need:
                    fail(p, "the leaf claims %s (%s to move), which does not give it"
                         % (BOUND[(lo, hi)], colour(p[4])))
                if kind == "L":
                    v = self.leaf_value(p)
                    if not lo <= v <= hi:
                        fail(p, "database leaf claims %s, the database says %s"
                             % (BOUND[(lo, hi)], WORD[v]))
                    continue
                slo, shi = self.leaf_bound(p)
                if not (lo <= slo and shi <= hi):
                    fail(p, "partial leaf claims %s, the partial database %s.pwl says %s"
                         % (BOUND[(lo, hi)],
                            cwl.slice_name(cwl.slice_of(p if p[4] == rules.BLACK
                                                        else rules.flip(p))),
                            BOUND[(slo, shi)]))
                continue
            move, length = recs[p]
            if scope.has(p):
                fail(p, "a position record the databases value (%d pieces, in the header's "
                     "scope: it must be a leaf)" % rules.pieces(p))
            ms = rules.moves(p)
            if not ms:
                fail(p, "a position record without a legal move (a terminal position is not "
                     "recorded)")
            if p[4] == x:
                if move not in ms:
                    f, t, cap = move
                    fail(p, "kept move %d%s%d (captures 0x%08x) is not legal here"
                         % (f, "x" if cap else "-", t, cap))
                covered(p, rules.play(p, move), "kept move", rules.move_text(p, move))
            else:
                for m in ms:
                    covered(p, rules.play(p, m), "reply", rules.move_text(p, m))


class FilesDiffer(OSError):
    """A listed database file is not the one the certificate was made with."""


def check(path, dbdir, other_files=False):
    """(verdict, where, why, stats); raises OSError (FilesDiffer among them) /
    cwl.DatabaseError."""
    with open(path, "rb") as f:
        data = f.read()
    stats = {}
    differ = 0
    try:
        root, claim, scope, goals, files, end = read_header(data)
        stats["claim"] = BOUND[claim]
        stats["root"] = rules.fen(root)
        stats["databases"] = scope.name()
        for (name, kind), (size, digest) in sorted(files.items()):
            fp = os.path.join(dbdir or ".", name + "." + KIND_EXT[kind])
            try:
                got = cwl.file_digest(fp)
            except OSError as e:  # no verdict without the files (exit 2)
                n = sum(int(ch, 13) for ch in name[:4])
                what = ": this is a partial database file; give the folder that holds the " \
                    ".pwl files" if kind == 1 else ": this file is of a split of the next " \
                    "piece count" if n > scope.n else ""
                raise OSError(e.errno, "database file %s: %s (the certificate rests on the "
                              "databases %s%s)" % (fp, e.strerror, scope.name(), what))
            if got != (size, digest):
                if kind == 1:
                    raise FilesDiffer(0, "partial database file %s: its size or SHA-256 "
                                      "differs from the certificate's; no verdict. A partial "
                                      "file's bounds depend on the databases it was built over, "
                                      "and no checker can check them from the file alone: check "
                                      "with the .pwl files the certificate names" % fp)
                if not other_files:
                    raise FilesDiffer(0, "database file %s: its size or SHA-256 differs from "
                                      "the certificate's (not the file it was made with: a "
                                      "rebuilt or recompressed set, or damage); no verdict. "
                                      "Check with the files it names, or with --other-files "
                                      "against these files' values (`checkers egdb verify` "
                                      "them first)" % fp)
                differ += 1
        if files:
            stats["database files"] = "%d listed" % len(files) + (
                ", %d of them other than the certificate's (checked against their values)"
                % differ if differ else "")
        sections, npos, nleaf = read_body(data[end:], goals, scope)
        stats["positions"], stats["leaves"] = npos, nleaf
        stats["partial leaves"] = sum(1 for sec in sections for v in sec[3].values()
                                      if v[2] == "B")
        ck = Checker(cwl.Database(dbdir or ".", {n: v for (n, k), v in files.items() if k == 0}),
                     pwl.Database(dbdir or ".", {n for (n, k) in files if k == 1}), scope)
        for goal, order, recs, leaves in sections:
            ck.check_section(root, goal, order, recs, leaves)
    except Invalid as e:
        why = e.why
        if differ:
            why += (" (checked against other files: %d of the %d listed differ from those the "
                    "certificate was made with)" % (differ, len(files)))
        return "invalid", e.where, why, stats
    return "valid", None, None, stats


def main(argv):
    args = argv[1:]
    if not args or args[0] in ("-h", "--help"):
        print(__doc__.strip())
        return 0 if args else 2
    if args[0] == "--perft":
        try:
            depth = int(args[1])
            fen = args[args.index("--fen") + 1] if "--fen" in args else None
            p = rules.parse_fen(fen) if fen else rules.START
        except (IndexError, ValueError) as e:
            print("checkcert.py --perft: %s" % e, file=sys.stderr)
            return 2
        print(rules.perft(p, depth, routes="--merged" not in args))
        return 0
    cert, dbdir, rest = args[0], None, args[1:]
    other_files = "--other-files" in rest
    rest = [a for a in rest if a != "--other-files"]
    if rest[:1] == ["--db"] and len(rest) == 2:
        dbdir = rest[1]
    elif rest:
        print("checkcert.py: usage: checkcert.py CERT [--db DIR] [--other-files]",
              file=sys.stderr)
        return 2
    t0 = time.process_time()
    try:
        verdict, where, why, stats = check(cert, dbdir, other_files)
    except FilesDiffer as e:
        print("checkcert.py: %s: %s" % (cert, e.strerror), file=sys.stderr)
        return 2  # no verdict: not the files the certificate was made with
    except OSError as e:
        print("checkcert.py: %s: %s" % (cert, e.strerror), file=sys.stderr)
        return 2  # the certificate or a database file cannot be read
    except cwl.DatabaseError as e:
        print("checkcert.py: %s" % e, file=sys.stderr)
        return 3
    print(verdict)
    if verdict != "valid":
        print("failing position: %s" % (rules.fen(where) if where else "-"))
        print("reason: %s" % why)
    for k in ("root", "claim", "databases", "positions", "leaves", "partial leaves",
              "database files"):
        if k in stats:
            print("%s: %s" % (k, stats[k]))
    print("checked in %.2f s of CPU" % (time.process_time() - t0), file=sys.stderr)
    return 0 if verdict == "valid" else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
