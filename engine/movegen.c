/*
 * movegen.c - legal moves of English checkers, copy-make, and perft.
 *
 * Plain moves are found for all pieces at once with the mask shifts of
 * bits.h. Captures are found the same way ("which pieces have a jump"),
 * then each capturing piece's jump sequences are followed one by one with
 * a depth-first search, because the rules make the whole sequence one
 * move and let the side choose any of them.
 *
 * The same code serves three callers: eng_generate (a list with routes,
 * for search and notation), eng_count_moves (only the number, for perft's
 * last ply and for databases), and perft itself. Both colours share the
 * code; the colour is a constant argument of always-inlined functions so
 * the compiler produces one specialised copy per colour.
 */
#include <string.h>

#include "engine/bits.h"
#include "engine/engine.h"

/* ---- constants -------------------------------------------------------- */

#define ALWAYS_INLINE inline __attribute__((always_inline))

/* Direction indices as in bits_step(): 0,1 = down (Black's forward),
 * 2,3 = up (White's forward). */
enum { DIR_DOWN1 = 0, DIR_DOWN2 = 1, DIR_UP1 = 2, DIR_UP2 = 3 };

/* ---- types ------------------------------------------------------------ */

/* Where merged-mode counting remembers the distinct (to, captured) pairs
 * of one king: only a king can reach the same end with the same captures
 * by two routes (a man's route is fixed by its captured set, one capture
 * per row it crosses). */
typedef struct capture_key {
    uint32_t captured;
    uint8_t to;
} capture_key;

/* State of the depth-first search over one piece's jump sequences. */
typedef struct jump_ctx {
    uint32_t opp;   /* opponent pieces not captured so far          */
    uint32_t empty; /* empty squares (the mover's origin included)  */
    uint32_t promo; /* the mover's crowning row (0 for a king)      */
    int dir_lo;     /* allowed directions dir_lo..dir_hi            */
    int dir_hi;
    int from;
    int dups;
    eng_movelist *list; /* NULL when only counting                  */
    int first;          /* list index of this piece's first capture */
    uint64_t count;
    int overflow;
    int nkeys; /* merged counting of a king's routes       */
    uint8_t path[ENG_MAX_JUMPS];
    capture_key keys[ENG_MAX_MOVES];
} jump_ctx;

/* ---- prototypes ------------------------------------------------------- */

static void jump_search(jump_ctx *c, uint32_t at, uint32_t captured, int depth);
static void jump_emit(jump_ctx *c, int to, uint32_t captured, int njumps);

/* ---- functions -------------------------------------------------------- */

/*
 * The colour-dependent parts of a move, for the code below that is
 * written once for both sides: side is a constant wherever speed matters
 * (the always-inlined callers pass ENG_BLACK or ENG_WHITE), so each of
 * these folds to one shift or one constant in the specialised copies.
 *
 * Why once and not a Black copy and a White copy: eng_make, perft's plain
 * moves and the man-capture counters were written out per colour for
 * speed, and measured against this version they bought nothing.
 * bench/perft, main's binary and this one alternating, six runs each in
 * one session (2 cores, shared), medians: perft 12 with routes kept
 * 2.131 s before, 2.108 s after (0.99); routes merged 2.188 s, 2.110 s
 * (0.96); perft 11 with a list and a make at every node 1.634 s, 1.619 s
 * (0.99); user time of the whole bench 3.91 s, 3.92 s (1.00).
 */

/* A man of side's two forward steps from x (Black moves down, White up). */
static ALWAYS_INLINE uint32_t
ahead1(uint32_t x, int side)
{
    return side == ENG_BLACK ? bits_down1(x) : bits_up1(x);
}

static ALWAYS_INLINE uint32_t
ahead2(uint32_t x, int side)
{
    return side == ENG_BLACK ? bits_down2(x) : bits_up2(x);
}

/* The row where side's men are crowned. */
static ALWAYS_INLINE uint32_t
crown_row(int side)
{
    return side == ENG_BLACK ? ENG_ROW7 : ENG_ROW0;
}

/* The first jump of a man of side at `at` in forward direction d (0 or
 * 1): the square it lands on (0: none), and *over the piece it takes. */
static ALWAYS_INLINE uint32_t
man_jump(uint32_t at, int d, uint32_t opp, uint32_t empty, int side, uint32_t *over)
{
    *over = (d ? ahead2(at, side) : ahead1(at, side)) & opp;
    return (d ? ahead2(*over, side) : ahead1(*over, side)) & empty;
}

/* Side's men and kings in r, and the opponent's (pointers into r). */
static ALWAYS_INLINE void
side_sets(eng_pos *r, int side, uint32_t **men, uint32_t **kings, uint32_t **omen,
          uint32_t **okings)
{
    *men = side == ENG_BLACK ? &r->bm : &r->wm;
    *kings = side == ENG_BLACK ? &r->bk : &r->wk;
    *omen = side == ENG_BLACK ? &r->wm : &r->bm;
    *okings = side == ENG_BLACK ? &r->wk : &r->bk;
}

/* Records one finished capture route, merging duplicates if asked. */
static void
jump_emit(jump_ctx *c, int to, uint32_t captured, int njumps)
{
    int merge = c->dups == ENG_DUPS_MERGE && c->promo == 0; /* kings only */
    if (c->list == NULL) {
        if (merge) {
            for (int i = 0; i < c->nkeys; i++)
                if (c->keys[i].to == to && c->keys[i].captured == captured)
                    return;
            if (c->nkeys < ENG_MAX_MOVES) {
                c->keys[c->nkeys].to = (uint8_t)to;
                c->keys[c->nkeys].captured = captured;
                c->nkeys++;
            }
        }
        c->count++;
        return;
    }
    eng_movelist *l = c->list;
    if (merge)
        for (int i = c->first; i < l->n; i++)
            if (l->m[i].to == to && l->m[i].captured == captured)
                return;
    if (l->n >= ENG_MAX_MOVES) {
        c->overflow = 1;
        return;
    }
    eng_move *m = &l->m[l->n++];
    m->captured = captured;
    m->from = (uint8_t)c->from;
    m->to = (uint8_t)to;
    m->njumps = (uint8_t)njumps;
    memcpy(m->path, c->path, (size_t)njumps);
    c->count++;
}

/*
 * Follows every jump sequence from square mask `at`. A captured piece is
 * taken out of `opp` at once, so it can never be jumped twice; leaving
 * its square occupied or empty makes no difference otherwise, because
 * every landing square has the parity of the origin in both coordinates
 * while captured pieces sit on the other parity. The mover's origin
 * is empty during the sequence (a king may come back to it). `empty`
 * never changes during the search: every square the piece visits was
 * empty to begin with (or is the origin), and a jump never lands on the
 * square it starts from.
 */
static void
jump_search(jump_ctx *c, uint32_t at, uint32_t captured, int depth)
{
    int found = 0;
    for (int dir = c->dir_lo; dir <= c->dir_hi; dir++) {
        uint32_t over = bits_step(dir, at) & c->opp;
        if (!over)
            continue;
        uint32_t land = bits_step(dir, over) & c->empty;
        if (!land)
            continue;
        found = 1;
        c->path[depth] = (uint8_t)bits_lsb(land);
        if (land & c->promo) {
            /* A man crowned by a capture stops there. */
            jump_emit(c, bits_lsb(land), captured | over, depth + 1);
            continue;
        }
        c->opp &= ~over;
        jump_search(c, land, captured | over, depth + 1);
        c->opp |= over;
    }
    if (!found && depth > 0)
        jump_emit(c, bits_lsb(at), captured, depth);
}

/* Pieces of `movers` that have a jump in direction step(), given the
 * opponent set and the empty squares: x jumps if step(x) is an opponent
 * and step(step(x)) is empty, i.e. x is in inv(opp & inv(empty)). */
static ALWAYS_INLINE uint32_t
jumpers(uint32_t men, uint32_t kings, uint32_t opp, uint32_t empty, int side)
{
    /* Forward jumps concern every piece, backward ones only kings: skip
     * their masks when there are none (most of the opening game). */
    uint32_t r;
    if (side == ENG_BLACK) {
        r = (men | kings) & (bits_up1(opp & bits_up1(empty)) | bits_up2(opp & bits_up2(empty)));
        if (kings)
            r |=
                kings & (bits_down1(opp & bits_down1(empty)) | bits_down2(opp & bits_down2(empty)));
    } else {
        r = (men | kings) &
            (bits_down1(opp & bits_down1(empty)) | bits_down2(opp & bits_down2(empty)));
        if (kings)
            r |= kings & (bits_up1(opp & bits_up1(empty)) | bits_up2(opp & bits_up2(empty)));
    }
    return r;
}

/* Runs the capture search for every capturing piece of the side. */
static ALWAYS_INLINE void
captures_side(const eng_pos *p, jump_ctx *c, uint32_t jm, int side)
{
    uint32_t men = side == ENG_BLACK ? p->bm : p->wm;
    uint32_t all = p->bm | p->wm | p->bk | p->wk;
    c->opp = side == ENG_BLACK ? (p->wm | p->wk) : (p->bm | p->bk);
    while (jm) {
        int sq = bits_lsb(jm);
        uint32_t b = 1u << sq;
        jm &= jm - 1;
        c->empty = ~all | b;
        c->from = sq;
        c->nkeys = 0;
        c->first = c->list ? c->list->n : 0;
        if (b & men) {
            c->promo = side == ENG_BLACK ? ENG_ROW7 : ENG_ROW0;
            c->dir_lo = side == ENG_BLACK ? DIR_DOWN1 : DIR_UP1;
            c->dir_hi = c->dir_lo + 1;
        } else {
            c->promo = 0;
            c->dir_lo = DIR_DOWN1;
            c->dir_hi = DIR_UP2;
        }
        jump_search(c, b, 0, 0);
    }
}

/* Number of plain (non-capture) moves of the side. */
static ALWAYS_INLINE uint64_t
count_plain(uint32_t men, uint32_t kings, uint32_t empty, int side)
{
    uint32_t fwd = men | kings;
    uint64_t n;
    if (side == ENG_BLACK)
        n = (uint64_t)bits_popcount(bits_down1(fwd) & empty) +
            (uint64_t)bits_popcount(bits_down2(fwd) & empty);
    else
        n = (uint64_t)bits_popcount(bits_up1(fwd) & empty) +
            (uint64_t)bits_popcount(bits_up2(fwd) & empty);
    if (kings) {
        if (side == ENG_BLACK)
            n += (uint64_t)bits_popcount(bits_up1(kings) & empty) +
                 (uint64_t)bits_popcount(bits_up2(kings) & empty);
        else
            n += (uint64_t)bits_popcount(bits_down1(kings) & empty) +
                 (uint64_t)bits_popcount(bits_down2(kings) & empty);
    }
    return n;
}

/*
 * Counting fast paths for perft's last ply, where captures are common.
 * A man's sequences need no duplicate check (see capture_key) and only
 * its two forward directions; a king's routes, counted with duplicates
 * kept, need no bookkeeping either. Merged counting of king routes goes
 * through the general search, which remembers (to, captured) pairs.
 */
static uint64_t
count_man_jumps(uint32_t at, uint32_t opp, uint32_t empty, int side)
{
    uint64_t n = 0;
    int found = 0;
    for (int d = 0; d < 2; d++) {
        uint32_t over, land = man_jump(at, d, opp, empty, side, &over);
        if (!land)
            continue;
        found = 1;
        if (land & crown_row(side))
            n++;
        else
            n += count_man_jumps(land, opp & ~over, empty, side);
    }
    return found ? n : 1;
}

/* Counts a man's sequences from `at`, with the first jump inlined: most
 * captures are single jumps, and this keeps them free of calls. */
static ALWAYS_INLINE uint64_t
count_man_first(uint32_t at, uint32_t opp, uint32_t empty, int side)
{
    uint64_t n = 0;
    for (int d = 0; d < 2; d++) {
        uint32_t over, land = man_jump(at, d, opp, empty, side, &over);
        if (!land)
            continue;
        if (land & crown_row(side)) {
            n++;
            continue;
        }
        uint32_t rest = opp & ~over;
        uint32_t more =
            (ahead1(ahead1(land, side) & rest, side) | ahead2(ahead2(land, side) & rest, side)) &
            empty;
        n += more ? count_man_jumps(land, rest, empty, side) : 1;
    }
    return n;
}

static uint64_t
count_king_routes(uint32_t at, uint32_t opp, uint32_t empty)
{
    uint64_t n = 0;
    uint32_t over, land;
    int found = 0;
#define KING_DIR(step)                                                                             \
    over = step(at) & opp;                                                                         \
    land = step(over) & empty;                                                                     \
    if (land) {                                                                                    \
        found = 1;                                                                                 \
        n += count_king_routes(land, opp & ~over, empty);                                          \
    }
    KING_DIR(bits_down1)
    KING_DIR(bits_down2)
    KING_DIR(bits_up1)
    KING_DIR(bits_up2)
#undef KING_DIR
    return found ? n : 1;
}

static ALWAYS_INLINE uint64_t
count_side(const eng_pos *p, int dups, int side)
{
    uint32_t men = side == ENG_BLACK ? p->bm : p->wm;
    uint32_t kings = side == ENG_BLACK ? p->bk : p->wk;
    uint32_t opp = side == ENG_BLACK ? (p->wm | p->wk) : (p->bm | p->bk);
    uint32_t empty = ~(p->bm | p->wm | p->bk | p->wk);
    uint32_t jm = jumpers(men, kings, opp, empty, side);
    if (!jm)
        return count_plain(men, kings, empty, side);
    if (dups == ENG_DUPS_KEEP || !(jm & kings)) {
        uint64_t n = 0;
        uint32_t all_empty = empty;
        while (jm) {
            uint32_t b = jm & (0u - jm);
            jm &= jm - 1;
            if (b & men)
                n += count_man_first(b, opp, all_empty, side);
            else
                n += count_king_routes(b, opp, all_empty | b);
        }
        return n;
    }
    jump_ctx c;
    c.list = NULL;
    c.dups = dups;
    c.count = 0;
    c.overflow = 0;
    captures_side(p, &c, jm, side);
    return c.count;
}

uint64_t
eng_count_moves(const eng_pos *p, int dups)
{
    return p->stm == ENG_BLACK ? count_side(p, dups, ENG_BLACK) : count_side(p, dups, ENG_WHITE);
}

int
eng_has_capture(const eng_pos *p)
{
    uint32_t empty = ~(p->bm | p->wm | p->bk | p->wk);
    if (p->stm == ENG_BLACK)
        return jumpers(p->bm, p->bk, p->wm | p->wk, empty, ENG_BLACK) != 0;
    return jumpers(p->wm, p->wk, p->bm | p->bk, empty, ENG_WHITE) != 0;
}

/* Appends the plain moves of the side, by origin square then direction. */
static ALWAYS_INLINE int
plain_side(const eng_pos *p, eng_movelist *l, int side)
{
    uint32_t men = side == ENG_BLACK ? p->bm : p->wm;
    uint32_t kings = side == ENG_BLACK ? p->bk : p->wk;
    uint32_t empty = ~(p->bm | p->wm | p->bk | p->wk);
    uint32_t pieces = men | kings;
    while (pieces) {
        int sq = bits_lsb(pieces);
        uint32_t b = 1u << sq;
        pieces &= pieces - 1;
        int lo = DIR_DOWN1, hi = DIR_UP2;
        if (b & men) {
            lo = side == ENG_BLACK ? DIR_DOWN1 : DIR_UP1;
            hi = lo + 1;
        }
        for (int dir = lo; dir <= hi; dir++) {
            uint32_t to = bits_step(dir, b) & empty;
            if (!to)
                continue;
            if (l->n >= ENG_MAX_MOVES)
                return ENG_EOVERFLOW; /* cannot happen: at most 48 plain moves */
            eng_move *m = &l->m[l->n++];
            m->captured = 0;
            m->from = (uint8_t)sq;
            m->to = (uint8_t)bits_lsb(to);
            m->njumps = 0;
        }
    }
    return l->n;
}

static ALWAYS_INLINE int
generate_side(const eng_pos *p, eng_movelist *l, int dups, int side)
{
    uint32_t men = side == ENG_BLACK ? p->bm : p->wm;
    uint32_t kings = side == ENG_BLACK ? p->bk : p->wk;
    uint32_t opp = side == ENG_BLACK ? (p->wm | p->wk) : (p->bm | p->bk);
    uint32_t empty = ~(p->bm | p->wm | p->bk | p->wk);
    uint32_t jm = jumpers(men, kings, opp, empty, side);
    l->n = 0;
    if (!jm)
        return plain_side(p, l, side);
    jump_ctx c;
    c.list = l;
    c.dups = dups;
    c.count = 0;
    c.overflow = 0;
    captures_side(p, &c, jm, side);
    return c.overflow ? ENG_EOVERFLOW : l->n;
}

int
eng_generate(const eng_pos *p, eng_movelist *list, int dups)
{
    if (p->stm == ENG_BLACK)
        return generate_side(p, list, dups, ENG_BLACK);
    return generate_side(p, list, dups, ENG_WHITE);
}

/* Side's move from fb to tb in r, taking the pieces of `captured`. */
static ALWAYS_INLINE void
make_side(eng_pos *r, uint32_t fb, uint32_t tb, uint32_t captured, int side)
{
    uint32_t *men, *kings, *omen, *okings;
    side_sets(r, side, &men, &kings, &omen, &okings);
    /* A king's capture can end on its own origin (a ring of captures), so
     * the origin is cleared before the destination is set, never toggled
     * together with it. */
    if (*kings & fb) {
        *kings = (*kings & ~fb) | tb;
    } else {
        *men ^= fb;
        if (tb & crown_row(side))
            *kings |= tb;
        else
            *men |= tb;
    }
    *omen &= ~captured;
    *okings &= ~captured;
}

void
eng_make(const eng_pos *p, const eng_move *m, eng_pos *out)
{
    uint32_t fb = 1u << m->from, tb = 1u << m->to;
    eng_pos r = *p;
    if (p->stm == ENG_BLACK)
        make_side(&r, fb, tb, m->captured, ENG_BLACK);
    else
        make_side(&r, fb, tb, m->captured, ENG_WHITE);
    r.stm = p->stm ^ 1;
    *out = r;
}

/*
 * Perft. The hot loop is the parent of the last ply: it walks the plain
 * moves straight from the destination masks (no move list) and bulk-counts
 * each child's moves with count_side(). Captures, rarer, go through the
 * general generator. Each colour gets its own specialised copy.
 */
static uint64_t perft_black(const eng_pos *p, int depth, int dups);
static uint64_t perft_white(const eng_pos *p, int depth, int dups);

static ALWAYS_INLINE uint64_t
perft_child(const eng_pos *c, int depth, int dups, int side)
{
    /* c has the other side to move; depth counts plies below c. */
    if (depth == 1)
        return side == ENG_BLACK ? count_side(c, dups, ENG_WHITE) : count_side(c, dups, ENG_BLACK);
    return side == ENG_BLACK ? perft_white(c, depth, dups) : perft_black(c, depth, dups);
}

/* Walks the plain moves of `movers` in one direction. */
static ALWAYS_INLINE uint64_t
perft_plain_dir(const eng_pos *p, int depth, int dups, int side, int dir, uint32_t movers,
                int kings)
{
    uint32_t empty = ~(p->bm | p->wm | p->bk | p->wk);
    uint32_t tos = bits_step(dir, movers) & empty;
    uint64_t total = 0;
    while (tos) {
        uint32_t tb = tos & (0u - tos);
        tos &= tos - 1;
        uint32_t fb = bits_step(dir ^ 2, tb); /* the opposite direction */
        eng_pos c = *p;
        c.stm = side ^ 1;
        uint32_t *cmen, *ckings, *omen, *okings;
        side_sets(&c, side, &cmen, &ckings, &omen, &okings);
        if (kings) {
            *ckings ^= fb | tb;
        } else {
            *cmen ^= fb | tb;
            if (tb & crown_row(side)) {
                *cmen ^= tb;
                *ckings |= tb;
            }
        }
        total += perft_child(&c, depth - 1, dups, side);
    }
    return total;
}

static ALWAYS_INLINE uint64_t
perft_side(const eng_pos *p, int depth, int dups, int side)
{
    uint32_t men = side == ENG_BLACK ? p->bm : p->wm;
    uint32_t kings = side == ENG_BLACK ? p->bk : p->wk;
    uint32_t opp = side == ENG_BLACK ? (p->wm | p->wk) : (p->bm | p->bk);
    uint32_t empty = ~(p->bm | p->wm | p->bk | p->wk);
    uint64_t total = 0;
    if (jumpers(men, kings, opp, empty, side)) {
        eng_movelist l;
        int n = generate_side(p, &l, dups, side);
        if (n < 0)
            n = l.n; /* overflow: cannot occur in reachable play */
        for (int i = 0; i < n; i++) {
            eng_pos c;
            eng_make(p, &l.m[i], &c);
            total += perft_child(&c, depth - 1, dups, side);
        }
        return total;
    }
    /* Directions: a man's are its forward two; the {d, d^2} pairs are
     * opposites (down1/up1, down2/up2). */
    int f = side == ENG_BLACK ? DIR_DOWN1 : DIR_UP1;
    total += perft_plain_dir(p, depth, dups, side, f, men, 0);
    total += perft_plain_dir(p, depth, dups, side, f + 1, men, 0);
    if (kings)
        for (int dir = DIR_DOWN1; dir <= DIR_UP2; dir++)
            total += perft_plain_dir(p, depth, dups, side, dir, kings, 1);
    return total;
}

static uint64_t
perft_black(const eng_pos *p, int depth, int dups)
{
    return perft_side(p, depth, dups, ENG_BLACK);
}

static uint64_t
perft_white(const eng_pos *p, int depth, int dups)
{
    return perft_side(p, depth, dups, ENG_WHITE);
}

uint64_t
eng_perft(const eng_pos *p, int depth, int dups)
{
    if (depth <= 0)
        return 1;
    if (depth == 1)
        return eng_count_moves(p, dups);
    return p->stm == ENG_BLACK ? perft_black(p, depth, dups) : perft_white(p, depth, dups);
}
