#!/usr/bin/env python3
"""cert_reader_check.py - the Python database reader (checker/cwl.py)
against the C prober (`checkers egdb probe`) on random positions, for
tests/e2e_cert.sh: every value must agree.

usage: cert_reader_check.py CHECKERS DBDIR PIECES COUNT SEED
       cert_reader_check.py CHECKERS DBDIR --partial COUNT SEED
With --partial, the partial-database reader (checker/pwl.py) on random
positions of the materials of DBDIR's .pwl files, either side to move,
against the bounds `checkers egdb probe` prints.
Prints "N agree" or the first disagreements; exit 1 on any.
"""
import os
import random
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "checker"))
import cwl  # noqa: E402
import pwl  # noqa: E402
import rules  # noqa: E402


def random_of(rnd, nbk, nwk, nbm, nwm):
    """A random placement of a material, men off their crowning rows."""
    while True:
        sq = rnd.sample(range(1, 33), nbk + nwk + nbm + nwm)
        p = [0, 0, 0, 0, rnd.randint(0, 1)]
        for i, s in enumerate(sq):
            k = 2 if i < nbk else 3 if i < nbk + nwk else 0 if i < nbk + nwk + nbm else 1
            if (k == 0 and s > 28) or (k == 1 and s < 5):
                break
            p[k] |= rules.bit(s)
        else:
            return tuple(p)


def main_partial(checkers, folder, count, seed):
    rnd = random.Random(seed)
    names = sorted(f[:-4] for f in os.listdir(folder) if f.endswith(".pwl"))
    mats = sorted({tuple(int(c, 13) for c in n[:4]) for n in names})
    db = pwl.Database(folder, set(names))
    ps = []
    while len(ps) < count:
        nbk, nwk, nbm, nwm = rnd.choice(mats)
        p = random_of(rnd, nbk, nwk, nbm, nwm)
        if rnd.randint(0, 1):
            p = rules.flip(p)  # the same slice, asked with White to move
        ps.append(p)
    fens = [rules.fen(p) for p in ps]
    out = subprocess.run([checkers, "egdb", "probe", "--db", folder] + fens,
                         capture_output=True, text=True, check=True).stdout.splitlines()
    name = {(-1, -1): "LL", (-1, 0): "LD", (0, 0): "DD", (0, 1): "DW", (1, 1): "WW",
            (-1, 1): "LW"}
    exact = {"loss": "LL", "draw": "DD", "win": "WW"}  # a complete slice's answer
    bad = [(f, line) for f, p, line in zip(fens, ps, out)
           if exact.get(line.split("\t")[1], line.split("\t")[1]) != name[db.probe(p)]]
    for f, line in bad[:5]:
        print("disagree: %s C %s" % (f, line.split("\t")[1]))
    print("%d agree, %d disagree (%d partial files read)"
          % (len(fens) - len(bad), len(bad), len(db.files)))
    return 1 if bad else 0


def main(checkers, folder, pieces, count, seed):
    rnd = random.Random(seed)
    listed = {f[:-4]: None for f in os.listdir(folder) if f.endswith(".cwl")}
    db = cwl.Database(folder, listed)
    fens = []
    while len(fens) < count:
        n = rnd.randint(2, pieces)
        nb = rnd.randint(1, n - 1)
        p = [0, 0, 0, 0, rnd.randint(0, 1)]
        for i, s in enumerate(rnd.sample(range(1, 33), n)):
            black = i < nb
            king = rnd.random() < 0.4 or (black and s > 28) or (not black and s < 5)
            p[(0 if black else 1) + (2 if king else 0)] |= rules.bit(s)
        fens.append(rules.fen(tuple(p)))
    out = subprocess.run([checkers, "egdb", "probe", "--db", folder] + fens,
                         capture_output=True, text=True, check=True).stdout.splitlines()
    name = {cwl.WIN: "win", cwl.LOSS: "loss", cwl.DRAW: "draw"}
    bad = [(f, line) for f, line in zip(fens, out)
           if line.split("\t")[1] != name[db.probe(rules.parse_fen(f))]]
    for f, line in bad[:5]:
        print("disagree: %s C %s" % (f, line.split("\t")[1]))
    orders = sorted({f.order for f in db.files.values()})
    print("%d agree, %d disagree (%d files read, king orders %s)"
          % (len(fens) - len(bad), len(bad), len(db.files), orders))
    return 1 if bad else 0


if __name__ == "__main__":
    if len(sys.argv) != 6:
        print(__doc__.strip(), file=sys.stderr)
        sys.exit(2)
    a = sys.argv
    if a[3] == "--partial":
        sys.exit(main_partial(a[1], a[2], int(a[4]), int(a[5])))
    sys.exit(main(a[1], a[2], int(a[3]), int(a[4]), int(a[5])))
