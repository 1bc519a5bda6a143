"""A reader of the partial-information database files (.pwl), written from
their documentation (egdb/partial.h, FILE FORMAT; egdb/index.h) for the
certificate checker; it shares no code with the C prober.

What a probe does (the documented contract):
  - a position with White to move is looked up as its colour-flipped twin
    (files hold Black to move only);
  - the position's slice names the file "<dir>/KKMM.RR.pwl", as for the
    compressed files;
  - the file is a 128-byte header, then one 4-bit code per position of the
    slice in index order: the order of index.h's build layout (men
    placements gap-free, then black kings, then white kings, each in colex
    order: the king order 0 of the compressed files), position i in the
    low nibble of byte i // 2 when i is even, the high nibble when odd;
  - codes 0 LL, 1 LD, 2 DD, 3 DW, 4 WW, 5 LW: a bound lo..hi on the value
    for the side to move; 6-15 never appear (damage).
Nothing is resolved by search: a capture position has its own stored bound.

The header's XXH3 checksums are not verified here (not in the standard
library): the certificate names each file by its SHA-256, which the checker
verifies before the file is read.
"""

import os
import struct

import cwl
import rules

HEADER = 128
MAGIC = b"CKPWL\0\0\1"
BOUNDS = {0: (-1, -1), 1: (-1, 0), 2: (0, 0), 3: (0, 1), 4: (1, 1), 5: (-1, 1)}


class PwlFile:
    """One partial slice file: its header checked against the slice, its
    payload kept whole (a partial slice is small: 3-vs-3 is 32 MB)."""

    def __init__(self, path, s):
        self.path = path
        data = cwl.read_file(path)
        if len(data) < HEADER or data[:8] != MAGIC:
            raise cwl.DatabaseError("%s: not a partial slice file of version 1 (bad magic)"
                                    % path)
        hs = struct.unpack_from("<4B2b", data, 8)
        if tuple(hs) != tuple(s):
            raise cwl.DatabaseError("%s: the header names another slice" % path)
        (positions,) = struct.unpack_from("<Q", data, 16)
        self.index = cwl.SliceIndex(s, 0)
        if positions != self.index.size:
            raise cwl.DatabaseError("%s: holds %d positions, the slice has %d"
                                    % (path, positions, self.index.size))
        if len(data) != HEADER + (positions + 1) // 2:
            raise cwl.DatabaseError("%s: file size does not match its header" % path)
        self.data = memoryview(data)[HEADER:]

    def bound(self, p):
        """The stored bound (lo, hi) of a Black-to-move position of the slice."""
        i = self.index.index(p)
        code = (self.data[i >> 1] >> (4 * (i & 1))) & 0x0F
        if code not in BOUNDS:
            raise cwl.DatabaseError("%s: position %d has the code %d (damaged)"
                                    % (self.path, i, code))
        return BOUNDS[code]


class Database:
    """Probes .pwl files of a folder. listed: the slice names of the files
    a probe may read (the certificate's header)."""

    def __init__(self, folder, listed):
        self.folder = folder
        self.listed = listed
        self.files = {}

    def probe(self, p):
        """The stored bound (lo, hi) of p for its side to move; raises
        cwl.NotListed naming the file when the header does not list it."""
        c = p if p[4] == rules.BLACK else rules.flip(p)
        s = cwl.slice_of(c)
        name = cwl.slice_name(s)
        f = self.files.get(name)
        if f is None:
            if name not in self.listed:
                raise cwl.NotListed(name + ".pwl")
            f = PwlFile(os.path.join(self.folder, name + ".pwl"), s)
            self.files[name] = f
        return f.bound(c)
