"""A reader of the compressed endgame database files (.cwl), written from
their documentation (egdb/codec.h, egdb/index.h, docs/egdb.md) for the
certificate checker; it shares no code with the C prober.

What a probe does (the documented contract, not the C implementation):
  - a position with White to move is looked up as its colour-flipped twin
    (files hold Black to move only); a side to move without pieces has lost;
  - the position's slice (material and each side's leading row) names the
    file "<dir>/KKMM.RR.cwl";
  - a position whose value the file dropped (the side to move has a capture;
    with header flag 1 also a threatened capture whose every move leads to a
    capture position or to one threatening nothing) is valued by playing its
    moves and probing the children: a win if one child is lost for its side
    to move, a draw if one is drawn, else a loss;
  - any other position's value is read: its index in the slice (index.h:
    men placements gap-free, kings in the order the header names), the page
    and block holding that index, and the block's run-length code (codec.h).
Values are for the side to move: 1 win, 2 loss, 3 draw.

The files' own XXH3 checksums are not verified here (XXH3 is not in the
standard library); the certificate names each file by its SHA-256, which
the checker verifies before it reads a file (digest_ok).
"""

import bisect
import hashlib
import os
import struct
from math import comb

import rules

WIN, LOSS, DRAW = 1, 2, 3
NLEN = 32
NSYM = 64
MAX_BITS = 15
HEADER = 80
FLAG_THREATS = 1


class DatabaseError(Exception):
    """A database file is missing, unreadable or damaged."""


# ---- bits -------------------------------------------------------------------


def rev32(x):
    """The board turned 180 degrees: bit i -> bit 31 - i (White's frame)."""
    return int("{:032b}".format(x)[::-1], 2)


def pext(x, mask):
    """Gathers the bits of x selected by mask into the low bits."""
    r, k = 0, 0
    while mask:
        low = mask & -mask
        if x & low:
            r |= 1 << k
        k += 1
        mask ^= low
    return r


def bits_of(x):
    out = []
    while x:
        low = x & -x
        out.append(low.bit_length() - 1)
        x ^= low
    return out


def colex(set_):
    """Colex rank: the j-th lowest element c (j = 1, 2, ...) adds C(c, j)."""
    return sum(comb(c, j) for j, c in enumerate(bits_of(set_), 1))


def snake(m):
    """Row snake: the four squares of every odd row (bits 4-7, 12-15, ...)
    in reverse order."""
    out = m & 0x0F0F0F0F
    for r in (1, 3, 5, 7):
        nib = (m >> (4 * r)) & 0xF
        rev = ((nib & 1) << 3) | ((nib & 2) << 1) | ((nib & 4) >> 1) | ((nib & 8) >> 3)
        out |= rev << (4 * r)
    return out


def gray_rank(elems, k):
    """Revolving-door rank of the k-subset with the given ascending elements:
    sum over i of (-1)^(k-i) (C(c_i + 1, i) - 1)."""
    r = 0
    for i, c in enumerate(elems, 1):
        term = comb(c + 1, i) - 1
        r += -term if (k - i) & 1 else term
    return r


# ---- slices -------------------------------------------------------------------

DIGITS = "0123456789abc"


def slice_of(p):
    """(nbk, nwk, nbm, nwm, rb, rw) of a Black-to-move position."""
    bm, wm, bk, wk, _ = p
    rb = (bm.bit_length() - 1) // 4 if bm else -1
    rw = 7 - ((wm & -wm).bit_length() - 1) // 4 if wm else -1
    pc = rules.popcount
    return (pc(bk), pc(wk), pc(bm), pc(wm), rb, rw)


def slice_name(s):
    nbk, nwk, nbm, nwm, rb, rw = s
    return "%s%s%s%s.%d%d" % (DIGITS[nbk], DIGITS[nwk], DIGITS[nbm], DIGITS[nwm], rb + 1, rw + 1)


class SliceIndex:
    """The index of one slice in one king order (index.h)."""

    def __init__(self, s, order):
        nbk, nwk, nbm, nwm, rb, rw = s
        self.nbk, self.nwk, self.nbm, self.nwm = nbk, nwk, nbm, nwm
        self.order = order
        self.kn = 32 - nbm - nwm
        self.ckb = comb(self.kn, nbk)
        self.ckw = comb(self.kn - nbk, nwk)
        if order in (2, 4):  # white kings outer
            self.kouter, self.kinner = comb(self.kn, nwk), comb(self.kn - nwk, nbk)
        else:
            self.kouter, self.kinner = self.ckb, self.ckw
        if nbm:
            self.bn = 4 * rb + 4
            self.bbase = comb(self.bn - 4, nbm)
        if nwm:
            self.wregion = (1 << (4 * rw + 4)) - 1
            self.wlead = 0xF << (4 * rw)
        self.off = None
        if nbm and nwm:
            # Black sets in colex order are the masks in numeric order; each
            # leaves room for a number of white sets; off = prefix sums.
            from itertools import combinations
            lead = 0xF << (4 * rb)
            masks = []
            for c in combinations(range(self.bn), nbm):
                m = 0
                for b in c:
                    m |= 1 << b
                if m & lead:
                    masks.append(m)
            masks.sort()
            self.off, total = {}, 0
            for m in masks:
                self.off[m] = total
                total += self._white_count(m)
            self.nmen = total
        elif nwm:
            self.nmen = self._white_count(0)
        elif nbm:
            self.nmen = comb(self.bn, nbm) - self.bbase
        else:
            self.nmen = 1
        self.size = self.nmen * self.ckb * self.ckw

    def _white_free(self, bm):
        free = self.wregion & ~rev32(bm)
        nf = rules.popcount(free)
        nlead = rules.popcount(free & self.wlead)
        return free, comb(nf - nlead, self.nwm), comb(nf, self.nwm)

    def _white_count(self, bm):
        _, base, allsets = self._white_free(bm)
        return allsets - base

    def _white_rank(self, bm, wm):
        free, base, _ = self._white_free(bm)
        return colex(pext(rev32(wm), free)) - base

    def index(self, p):
        bm, wm, bk, wk, _ = p
        if self.off is not None:
            men = self.off[bm] + self._white_rank(bm, wm)
        elif self.nwm == 0:
            men = colex(bm) - self.bbase if self.nbm else 0
        else:
            men = self._white_rank(0, wm)
        kfree = ~(bm | wm) & 0xFFFFFFFF
        if self.order == 0:
            bkr = colex(pext(bk, kfree))
            wkr = colex(pext(wk, kfree & ~bk))
            return (men * self.ckb + bkr) * self.ckw + wkr
        wout = self.order in (2, 4)
        outer, inner = (wk, bk) if wout else (bk, wk)
        nout, nin = (self.nwk, self.nbk) if wout else (self.nbk, self.nwk)
        kf, ko = snake(kfree), snake(outer)
        so, si = pext(ko, kf), pext(snake(inner), kf & ~ko)
        if self.order >= 3:  # reversed: elements counted from the top
            n_o, n_i = self.kn, self.kn - nout
            a = gray_rank(sorted(n_o - 1 - c for c in bits_of(so)), nout)
            b = gray_rank(sorted(n_i - 1 - c for c in bits_of(si)), nin)
        else:
            a = gray_rank(bits_of(so), nout)
            b = gray_rank(bits_of(si), nin)
        if men & 1:
            a = self.kouter - 1 - a
        if ((men & self.kouter) ^ a) & 1:
            b = self.kinner - 1 - b
        return men * (self.ckb * self.ckw) + a * self.kinner + b


# ---- one file -----------------------------------------------------------------


def read_file(path):
    """The whole of a database file, as bytes; a file that cannot be read
    is a DatabaseError naming it (pwl.py reads its files the same way)."""
    try:
        with open(path, "rb") as f:
            return f.read()
    except OSError as e:
        raise DatabaseError("%s: %s" % (path, e.strerror))


class CwlFile:
    """One compressed slice file: header, prefix code, block table, data."""

    def __init__(self, path, s):
        self.path = path
        data = read_file(path)
        if len(data) < HEADER + NSYM:
            raise DatabaseError("%s: too short for a compressed slice" % path)
        if data[:7] != b"CKCWL\0\0":
            raise DatabaseError("%s: not a compressed slice (bad magic)" % path)
        if data[7] not in (3, 4):
            raise DatabaseError("%s: format version %d, this reader reads 3 and 4"
                                % (path, data[7]))
        self.version = data[7]
        hs = struct.unpack_from("<4B2bBB", data, 8)
        if tuple(hs[:6]) != tuple(s):
            raise DatabaseError("%s: the header names another slice" % path)
        self.flags, self.order = hs[6], hs[7]
        (self.positions,) = struct.unpack_from("<Q", data, 16)
        self.shift = data[24]
        (nblocks,) = struct.unpack_from("<I", data, 28)
        (data_bytes,) = struct.unpack_from("<Q", data, 32)
        if self.order > 4 or not 6 <= self.shift <= 13:
            raise DatabaseError("%s: unknown king order or page size" % path)
        lens = data[80:80 + NSYM]
        t = 80 + NSYM
        self.offsets = struct.unpack_from("<%dI" % (nblocks + 1), data, t)
        t += 4 * (nblocks + 1) + 4 * nblocks
        counts = data[t:t + nblocks]
        t += nblocks
        if len(data) != t + data_bytes or self.offsets[-1] != data_bytes:
            raise DatabaseError("%s: file size does not match its header" % path)
        self.data = memoryview(data)[t:]
        self.first_page = [0]
        for c in counts:
            self.first_page.append(self.first_page[-1] + c)
        npages = (self.positions + (1 << self.shift) - 1) >> self.shift
        if self.first_page[-1] != npages:
            raise DatabaseError("%s: page counts do not add up to the slice" % path)
        self.index = SliceIndex(s, self.order)
        if self.index.size != self.positions:
            raise DatabaseError("%s: holds %d positions, the slice has %d"
                                % (path, self.positions, self.index.size))
        # Canonical prefix code: codes of one length are consecutive in
        # symbol order, shorter lengths first (codec.h PREFIX CODE).
        self.code = {}
        code = 0
        for ln in range(1, MAX_BITS + 1):
            for sym in range(NSYM):
                if lens[sym] == ln:
                    self.code[(ln, code)] = sym
                    code += 1
            code <<= 1
        self.runs = {}  # block -> (run starts, run values)

    def _decode(self, b):
        """The runs of block b: starts and values (codec.h RUNS AND PREDICTION)."""
        blk = bytes(self.data[self.offsets[b]:self.offsets[b + 1]])
        first = self.first_page[b] << self.shift
        last = min(self.first_page[b + 1] << self.shift, self.positions)
        total = last - first
        if not blk:
            raise DatabaseError("%s: block %d is empty" % (self.path, b))
        v0, seed = blk[0] & 3, (blk[0] >> 2) & 3
        marked = self.version >= 4 and blk[0] & 16
        if v0 == 0 or seed == 0 or v0 == seed or blk[0] >> (5 if self.version >= 4 else 4):
            raise DatabaseError("%s: block %d: bad first byte" % (self.path, b))
        # Format 4: a marked block has 3 marks of 5 bytes before its runs,
        # each the decoder's state before the run holding position
        # total * k / 4 (codec.h MARKS); this reader starts at the first
        # run and checks each mark when it gets there.
        marks = []
        if marked:
            if len(blk) < 16:
                raise DatabaseError("%s: block %d ends in its marks" % (self.path, b))
            for k in range(3):
                x = int.from_bytes(blk[1 + 5 * k:6 + 5 * k], "little")
                marks.append((total * (k + 1) // 4, x & 0xFFFFF, (x >> 20) & 0x1FFF,
                              (x >> 33) & 3, (x >> 35) & 3, x >> 37))
        cur, prev = seed, v0
        bits = "".join(format(x, "08b") for x in blk[16 if marked else 1:])
        nbits = len(bits)
        at, pos = 0, 0
        starts, values = [], []
        code = self.code
        while pos < total:
            start_at = at  # the bit where this run's code starts
            c, ln, sym = 0, 0, None
            while ln < MAX_BITS:
                if at >= nbits:
                    raise DatabaseError("%s: block %d ends early" % (self.path, b))
                c = (c << 1) | (bits[at] == "1")
                at += 1
                ln += 1
                sym = code.get((ln, c))
                if sym is not None:
                    break
            if sym is None:
                raise DatabaseError("%s: block %d: not a code" % (self.path, b))
            bucket, miss = sym % NLEN, sym >= NLEN
            if bucket < 15:
                run = bucket + 1
            else:
                eb = 4 + bucket - 15
                if at + eb > nbits:
                    raise DatabaseError("%s: block %d ends early" % (self.path, b))
                run = (16 << (bucket - 15)) + int(bits[at:at + eb], 2)
                at += eb
            if run > total - pos:
                raise DatabaseError("%s: block %d: a run passes its end" % (self.path, b))
            while marks and marks[0][0] < pos + run:
                if marks[0][1:] != (start_at, pos, cur, prev, 0):
                    raise DatabaseError("%s: block %d: a mark does not match its run"
                                        % (self.path, b))
                marks.pop(0)
            v = (6 - cur - prev) if miss else prev
            prev, cur = cur, v
            starts.append(pos)
            values.append(v)
            pos += run
        if marks:
            raise DatabaseError("%s: block %d: a mark past its runs" % (self.path, b))
        return starts, values

    def value(self, i):
        """The stored value of index i (meaningless for a dropped position)."""
        g = i >> self.shift
        b = bisect.bisect_right(self.first_page, g) - 1
        if b not in self.runs:
            self.runs[b] = self._decode(b)
        starts, values = self.runs[b]
        k = bisect.bisect_right(starts, i - (self.first_page[b] << self.shift)) - 1
        return values[k]


# ---- the database ---------------------------------------------------------------


def file_digest(path):
    """(size, SHA-256) of a file."""
    h = hashlib.sha256()
    n = 0
    with open(path, "rb") as f:
        while True:
            chunk = f.read(1 << 20)
            if not chunk:
                break
            h.update(chunk)
            n += len(chunk)
    return n, h.digest()


class NotListed(Exception):
    """A probe needs a file the certificate's header does not list."""


class Database:
    """Probes .cwl files of a folder. listed: {name: (size, sha256)} of the
    files a probe may read (the certificate's header); a file is checked
    against its digest before it is first read."""

    def __init__(self, folder, listed):
        self.folder = folder
        self.listed = listed
        self.files = {}
        self.memo = {}

    def _file(self, s):
        name = slice_name(s)
        f = self.files.get(name)
        if f is None:
            if name not in self.listed:
                raise NotListed(name + ".cwl")
            f = CwlFile(os.path.join(self.folder, name + ".cwl"), s)
            self.files[name] = f
        return f

    def dropped(self, p, flags):
        """Whether the file drops the value of p (Black to move)."""
        if rules.has_capture(p):
            return True
        if not flags & FLAG_THREATS:
            return False
        q = p[:4] + (1 - p[4],)
        if not rules.has_capture(q):  # the opponent threatens nothing
            return False
        for m in rules.moves(p):
            c = rules.play(p, m)
            if not rules.has_capture(c) and rules.has_capture(c[:4] + (1 - c[4],)):
                return False
        return True

    def probe(self, p):
        """The value (WIN, LOSS, DRAW) of p for its side to move."""
        c = p if p[4] == rules.BLACK else rules.flip(p)
        v = self.memo.get(c)
        if v is not None:
            return v
        if not (c[0] | c[2]):
            v = LOSS
        else:
            f = self._file(slice_of(c))
            if self.dropped(c, f.flags):
                v = LOSS
                for m in rules.moves(c):
                    w = self.probe(rules.play(c, m))
                    if w == LOSS:
                        v = WIN
                        break
                    if w == DRAW:
                        v = DRAW
            else:
                v = f.value(f.index.index(c))
        self.memo[c] = v
        return v
