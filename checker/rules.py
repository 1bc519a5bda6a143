"""The rules of English checkers, written for the certificate checker from the
README's rules and docs/certificate.md ("Rules") alone; no code is shared with
the C engine.

Board: squares 1..32; a position is four 32-bit masks (bit s-1 is square s):
black men, white men, black kings, white kings, and the side to move
(0 Black, 1 White). Square s lies on row (s-1)//4 (row 0 holds 1-4, Black's
back row) and, within the row, at index (s-1)%4; on even rows the playable
columns are 1,3,5,7, on odd rows 0,2,4,6. Black men move towards higher rows,
White men towards lower ones; a black man on row 7 or a white man on row 0 is
crowned.

A move is (from, to, captured): squares 1..32 and the mask of captured
pieces. Capture routes that start and end on the same squares and capture the
same pieces are one move (the certificate's rule 1).
"""

BLACK, WHITE = 0, 1
FULL = 0xFFFFFFFF

# Coordinates and diagonal neighbours, from the geometry above.
_COORD = {}
_SQUARE = {}
for _s in range(1, 33):
    _r, _k = (_s - 1) // 4, (_s - 1) % 4
    _c = 2 * _k + 1 if _r % 2 == 0 else 2 * _k
    _COORD[_s] = (_r, _c)
    _SQUARE[(_r, _c)] = _s

# NEXT[s][d]: the square one step from s in direction d, or 0 off the board.
# Directions 0,1 go up a row (towards 29-32), 2,3 down a row.
DIRS = ((1, -1), (1, 1), (-1, -1), (-1, 1))
NEXT = [[0] * 4 for _ in range(33)]
for _s in range(1, 33):
    _r, _c = _COORD[_s]
    for _d, (_dr, _dc) in enumerate(DIRS):
        NEXT[_s][_d] = _SQUARE.get((_r + _dr, _c + _dc), 0)

# The directions a man of each colour moves and captures in.
MAN_DIRS = {BLACK: (0, 1), WHITE: (2, 3)}
KING_DIRS = (0, 1, 2, 3)
CROWN_ROW = {BLACK: 7, WHITE: 0}


def bit(s):
    return 1 << (s - 1)


def row(s):
    return (s - 1) // 4


def popcount(x):
    return bin(x).count("1")


def squares(mask):
    """Squares (1..32) of a mask, ascending."""
    out = []
    while mask:
        low = mask & -mask
        out.append(low.bit_length())
        mask ^= low
    return out


def _sides(p):
    bm, wm, bk, wk, stm = p
    if stm == BLACK:
        return bm, bk, wm | wk
    return wm, wk, bm | bk


def _jumps(p, s, king, colour, origin, captured, path, occ, opp, out):
    """Extends a capture route of the piece now on s; appends finished routes
    (from, to, captured, path) to out."""
    dirs = KING_DIRS if king else MAN_DIRS[colour]
    extended = False
    for d in dirs:
        over = NEXT[s][d]
        if not over:
            continue
        land = NEXT[over][d]
        if not land:
            continue
        ob = bit(over)
        if not (opp & ob) or (captured & ob):
            continue
        # The landing square must be empty; captured pieces stay on the board
        # until the move ends, the moving piece's origin square is empty.
        lb = bit(land)
        if (occ & lb) and land != origin:
            continue
        extended = True
        ncap = captured | ob
        npath = path + (land,)
        if not king and row(land) == CROWN_ROW[colour]:
            out.append((origin, land, ncap, npath))  # crowned: the move ends
            continue
        _jumps(p, land, king, colour, origin, ncap, npath, occ, opp, out)
    if not extended and captured:
        out.append((origin, s, captured, path))


def capture_routes(p):
    """Every capture route of the side to move: (from, to, captured, path)."""
    colour = p[4]
    men, kings, opp = _sides(p)
    occ = p[0] | p[1] | p[2] | p[3]
    out = []
    for s in squares(men | kings):
        _jumps(p, s, bool(kings & bit(s)), colour, s, 0, (), occ, opp, out)
    return out


def has_capture(p):
    """Whether the side to move has a capture (so must capture)."""
    colour = p[4]
    men, kings, opp = _sides(p)
    occ = p[0] | p[1] | p[2] | p[3]
    for s in squares(men | kings):
        dirs = KING_DIRS if kings & bit(s) else MAN_DIRS[colour]
        for d in dirs:
            over = NEXT[s][d]
            if over and opp & bit(over):
                land = NEXT[over][d]
                if land and not occ & bit(land):
                    return True
    return False


def moves(p, routes=False):
    """The legal moves of p as (from, to, captured) triples; with routes=True,
    one per capture route (as published perft counts), else routes with the
    same (from, to, captured) merged. Captures are compulsory."""
    caps = capture_routes(p)
    if caps:
        if routes:
            return [(f, t, c) for (f, t, c, _) in caps]
        seen, out = set(), []
        for f, t, c, _ in caps:
            if (f, t, c) not in seen:
                seen.add((f, t, c))
                out.append((f, t, c))
        return out
    colour = p[4]
    men, kings, _ = _sides(p)
    occ = p[0] | p[1] | p[2] | p[3]
    out = []
    for s in squares(men | kings):
        dirs = KING_DIRS if kings & bit(s) else MAN_DIRS[colour]
        for d in dirs:
            t = NEXT[s][d]
            if t and not occ & bit(t):
                out.append((s, t, 0))
    return out


def has_move(p):
    if has_capture(p):
        return True
    colour = p[4]
    men, kings, _ = _sides(p)
    occ = p[0] | p[1] | p[2] | p[3]
    for s in squares(men | kings):
        dirs = KING_DIRS if kings & bit(s) else MAN_DIRS[colour]
        for d in dirs:
            t = NEXT[s][d]
            if t and not occ & bit(t):
                return True
    return False


def play(p, m):
    """The position after move m = (from, to, captured) of p."""
    bm, wm, bk, wk, stm = p
    f, t, cap = m
    fb, tb = bit(f), bit(t)
    if stm == BLACK:
        if bk & fb:
            bk = (bk & ~fb) | tb
        else:
            bm &= ~fb
            if row(t) == 7:
                bk |= tb
            else:
                bm |= tb
        wm &= ~cap
        wk &= ~cap
    else:
        if wk & fb:
            wk = (wk & ~fb) | tb
        else:
            wm &= ~fb
            if row(t) == 0:
                wk |= tb
            else:
                wm |= tb
        bm &= ~cap
        bk &= ~cap
    return (bm, wm, bk, wk, 1 - stm)


def flip(p):
    """The colour-flipped twin: colours swapped, board turned (s -> 33 - s),
    side to move swapped. It has the same value for its side to move."""
    def turn(m):
        return int("{:032b}".format(m)[::-1], 2)
    bm, wm, bk, wk, stm = p
    return (turn(wm), turn(bm), turn(wk), turn(bk), 1 - stm)


def valid(p):
    """None, or what makes p not a position."""
    bm, wm, bk, wk, stm = p
    if stm not in (0, 1):
        return "side to move %d" % stm
    masks = (bm, wm, bk, wk)
    if any(m < 0 or m > FULL for m in masks):
        return "a mask beyond 32 squares"
    if popcount(bm | wm | bk | wk) != sum(popcount(m) for m in masks):
        return "two pieces on one square"
    if bm & 0xF0000000:
        return "a black man on 29-32"
    if wm & 0x0000000F:
        return "a white man on 1-4"
    if popcount(bm | bk) > 12 or popcount(wm | wk) > 12:
        return "more than 12 pieces a side"
    return None


def pieces(p):
    return popcount(p[0] | p[1] | p[2] | p[3])


def fen(p):
    """PDN FEN: side, White's list, Black's list; men then kings, ascending."""
    bm, wm, bk, wk, stm = p
    def lst(men, kings):
        return ",".join([str(s) for s in squares(men)] + ["K%d" % s for s in squares(kings)])
    return "%s:W%s:B%s" % ("B" if stm == BLACK else "W", lst(wm, wk), lst(bm, bk))


def parse_fen(text):
    """Reads a FEN such as B:W18,24,K10:B12,K22 (ranges like 21-32 allowed)."""
    parts = text.strip().rstrip(".").split(":")
    if len(parts) != 3 or parts[0] not in ("B", "W"):
        raise ValueError("not a FEN: %r" % text)
    masks = {"B": [0, 0], "W": [0, 0]}
    for part in parts[1:]:
        colour, body = part[:1], part[1:]
        if colour not in masks:
            raise ValueError("not a FEN colour list: %r" % part)
        for tok in filter(None, (x.strip() for x in body.split(","))):
            king = tok.startswith("K")
            tok = tok[1:] if king else tok
            lo, _, hi = tok.partition("-")
            for s in range(int(lo), int(hi or lo) + 1):
                if not 1 <= s <= 32:
                    raise ValueError("square %d out of 1..32" % s)
                masks[colour][1 if king else 0] |= bit(s)
    p = (masks["B"][0], masks["W"][0], masks["B"][1], masks["W"][1],
         BLACK if parts[0] == "B" else WHITE)
    why = valid(p)
    if why:
        raise ValueError("%s: %s" % (text, why))
    return p


def move_text(p, m):
    """A move in PDN: 11-15, or a capture's route 15x24x31 (the first route
    of the merged ones)."""
    f, t, cap = m
    if not cap:
        return "%d-%d" % (f, t)
    for rf, rt, rc, path in capture_routes(p):
        if (rf, rt, rc) == m:
            return "x".join(str(s) for s in (f,) + path)
    return "%dx%d" % (f, t)


def perft(p, depth, routes=True):
    """Leaves of the legal-move tree of the given depth below p."""
    if depth == 0:
        return 1
    ms = moves(p, routes)
    if depth == 1:
        return len(ms)
    return sum(perft(play(p, m), depth - 1, routes) for m in ms)


START = (0x00000FFF, 0xFFF00000, 0, 0, BLACK)
