/*
 * ab.c - the heuristic alpha-beta solver (search.h): iterative deepening,
 * principal variation search, a transposition table of full positions,
 * capture quiescence, a single-reply extension, late move reductions,
 * killer and history ordering, database probes at quiet nodes, repetition
 * draws along the current line. docs/search.md has the measurements.
 *
 * WHY A PROVEN SCORE IS A PROOF
 *   Leaves are scored three ways: a terminal (no move) is -(AB_WIN - ply),
 *   a database win or loss is +-(AB_WIN - ply - AB_DBPLY), everything else
 *   (evaluation, database draw, repetition) lies within +-AB_HEUR_MAX. The
 *   proven range starts at AB_WIN - AB_MAXPLY = 29488, and the hard ply
 *   limit below keeps every terminal and database score inside it. So a
 *   minimax value in the proven range means the winner has a strategy in
 *   the searched tree whose every leaf is a terminal or database win, and
 *   every reply of the loser was looked at (a reply the loser could use to
 *   escape would have brought the value down to a heuristic one).
 *   Fail-soft bounds keep the same meaning: a lower bound in the win range
 *   is a proof of the win, an upper bound in the loss range a proof of the
 *   loss. A repetition scores 0, so a proof never rests on one: a line of
 *   the winner's strategy that repeated would score 0, not a win.
 *   Transposition-table entries graft proofs found elsewhere; each entry is
 *   written only after its own subtree was searched, from entries written
 *   before it, so by induction on the time of writing every proof entry
 *   stands for a finite strategy tree. This is also why a proof entry is
 *   trusted at any depth (TT_DEPTH_PROOF).
 *
 * WHAT IS PATH-DEPENDENT
 *   Only the repetition draw. The node that sees the repetition returns 0
 *   without touching the table. Its ancestors may store values that the 0
 *   influenced (the usual graph-history compromise of heuristic searches);
 *   by the argument above that can only hide a proof, never make one.
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include "engine/bits.h"
#include "prover/leaf.h"
#include "prover/search.h"

/* ---- constants -------------------------------------------------------- */

#define AB_INF (AB_WIN + 1)

/* Scores at least this far from 0 are proofs (search.h, SCORES). */
#define AB_PROVEN_MIN (AB_WIN - AB_MAXPLY)

/* No node deeper than this: a database score there is still
 * AB_WIN - 400 - AB_DBPLY = AB_WIN - 500, inside the proven range, and
 * the path, move lists and killers are sized by it. A node at the limit
 * is scored by the evaluation (a heuristic value, so never a false
 * proof). */
#define AB_PLY_LIMIT 400

/* Iterations stop at this nominal depth whatever max_depth says: the
 * single-reply extension and the quiescence search add plies on top of
 * it, and AB_PLY_LIMIT must stay out of reach in all but freak lines. */
#define AB_DEPTH_LIMIT 200

/* Limits (time, nodes, stop flag) are looked at every 4096 nodes: a clock
 * read costs about as much as a few nodes, and 4096 nodes are about a
 * millisecond. */
#define AB_CHECK_MASK 4095u

/* Late move reductions: at a node off the principal variation with at
 * least AB_LMR_DEPTH plies left for its children, quiet moves from the
 * AB_LMR_MOVES-th on are first searched one ply shallower. */
#define AB_LMR_DEPTH 2
#define AB_LMR_MOVES 3

/* Transposition table geometry: buckets of four 32-byte entries, one
 * bucket per two cache lines, at least 1 MB. */
#define TT_WAYS 4
#define TT_MIN_BYTES ((size_t)1 << 20)

/* Bound kinds of an entry; TT_NONE marks an empty slot. */
enum { TT_NONE = 0, TT_UPPER = 1, TT_LOWER = 2, TT_EXACT = 3 };

/* The depth stored with a proof (a win lower bound, a loss upper bound or
 * an exact proven score): a proof holds at any depth. */
#define TT_DEPTH_PROOF 255

/* No best move stored. */
#define TT_NO_SQ 0xFF

/* Move ordering classes, far enough apart that no history score crosses
 * into the class above. */
#define ORD_TT (1 << 30)
#define ORD_CAPTURE (1 << 26)
#define ORD_KILLER0 (1 << 25)
#define ORD_KILLER1 (1 << 24)
#define ORD_PROMOTION (1 << 23)
#define ORD_HISTORY_MAX (1 << 22)

/* ---- types ------------------------------------------------------------ */

/*
 * One table entry: the whole position (so a hit is never a hash
 * collision), the score in the table's ply-free form (tt_score_to), the
 * bound kind, the depth it was searched to, the search it came from, and
 * its best move as (from, to, captured), which names exactly one merged
 * move (ENG_DUPS_MERGE).
 */
typedef struct tt_entry {
    uint32_t bm, wm, bk, wk;
    uint32_t captured;
    int16_t score;
    uint8_t from, to;
    uint8_t stm;
    uint8_t bound;
    uint8_t depth;
    uint8_t age;
    uint8_t pad[4];
} tt_entry;

typedef struct tt_bucket {
    tt_entry e[TT_WAYS];
} tt_bucket;

struct ab_ctx {
    tt_bucket *tt;
    size_t tt_mask; /* buckets - 1 (a power of two) */
    uint8_t age;    /* bumped by every ab_search    */

    /* History: cutoffs of quiet moves by side, origin and destination. */
    int hist[2][ENG_NSQUARES][ENG_NSQUARES];
    eng_move killer[AB_PLY_LIMIT + 1][2];

    /* The current line: path[ply] is the position at ply; rev_start[ply]
     * is the first ply since which only king moves were made (positions
     * before it cannot come back). */
    eng_pos path[AB_PLY_LIMIT + 1];
    int rev_start[AB_PLY_LIMIT + 1];
    eng_movelist ml[AB_PLY_LIMIT + 1];
    int ord[AB_PLY_LIMIT + 1][ENG_MAX_MOVES];

    /* Triangular principal variation: pv[ply][ply..pvlen[ply]-1]. */
    eng_move pv[AB_MAXPV][AB_MAXPV];
    int pvlen[AB_MAXPV];

    /* The search in hand. */
    const egdb *db;
    int db_pieces;
    uint64_t nodes, probes, node_limit;
    double deadline; /* monotonic seconds, 0: none */
    volatile int *stop;
    int can_abort; /* 0 during the first iteration, which always completes */
    int abort;
    int err;
};

/* ---- prototypes ------------------------------------------------------- */

static int ab_node(ab_ctx *c, int depth, int ply, int alpha, int beta, int is_pv);

/* ---- helpers ---------------------------------------------------------- */

static double
ab_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static int
ab_same_move(const eng_move *a, const eng_move *b)
{
    return a->from == b->from && a->to == b->to && a->captured == b->captured;
}

/* The table keeps proven scores as distances from the node that stored
 * them, as chess programs keep mate scores: a win found 30 plies below
 * the root and stored at ply 10 is a win 20 plies from that node, and
 * must read as such when the node is met again at ply 4. */
static int
tt_score_to(int s, int ply)
{
    if (s >= AB_PROVEN_MIN)
        return s + ply;
    if (s <= -AB_PROVEN_MIN)
        return s - ply;
    return s;
}

static int
tt_score_from(int s, int ply)
{
    if (s >= AB_PROVEN_MIN)
        return s - ply;
    if (s <= -AB_PROVEN_MIN)
        return s + ply;
    return s;
}

static int
tt_matches(const tt_entry *e, const eng_pos *p)
{
    return e->bound != TT_NONE && e->bm == p->bm && e->wm == p->wm && e->bk == p->bk &&
           e->wk == p->wk && e->stm == (uint8_t)p->stm;
}

static tt_entry *
tt_find(ab_ctx *c, uint64_t key, const eng_pos *p)
{
    tt_bucket *b = &c->tt[key & c->tt_mask];
    for (int i = 0; i < TT_WAYS; i++)
        if (tt_matches(&b->e[i], p))
            return &b->e[i];
    return NULL;
}

/*
 * tt_store - records a search result. The slot is the entry of the same
 * position if there is one, else an empty slot, else the entry that is
 * worth least: entries of earlier searches before those of this one, and
 * among those the shallowest. An entry of the same position is kept
 * instead when it is a proof and the new result is not (the proof says
 * more), or when it is deeper and from this search and the new result is
 * only a bound. best may be NULL (a fail-low has no best move worth
 * keeping); the slot then keeps the move it had for the same position.
 */
static void
tt_store(ab_ctx *c, uint64_t key, const eng_pos *p, int depth, int bound, int score, int ply,
         const eng_move *best)
{
    tt_bucket *b = &c->tt[key & c->tt_mask];
    tt_entry *slot = NULL;
    int same = 0, worth = INT_MAX;
    for (int i = 0; i < TT_WAYS; i++) {
        tt_entry *e = &b->e[i];
        if (tt_matches(e, p)) {
            slot = e;
            same = 1;
            break;
        }
        int w = e->bound == TT_NONE ? -1 : e->depth + (e->age == c->age ? 256 : 0);
        if (w < worth) {
            worth = w;
            slot = e;
        }
    }
    if (same) {
        int keep = (slot->depth == TT_DEPTH_PROOF && depth != TT_DEPTH_PROOF) ||
                   (slot->age == c->age && slot->depth > depth && bound != TT_EXACT);
        if (keep) {
            if (slot->from == TT_NO_SQ && best) {
                slot->from = best->from;
                slot->to = best->to;
                slot->captured = best->captured;
            }
            return;
        }
    }
    slot->bm = p->bm;
    slot->wm = p->wm;
    slot->bk = p->bk;
    slot->wk = p->wk;
    slot->stm = (uint8_t)p->stm;
    slot->score = (int16_t)tt_score_to(score, ply);
    slot->bound = (uint8_t)bound;
    slot->depth = (uint8_t)depth;
    slot->age = c->age;
    if (best) {
        slot->from = best->from;
        slot->to = best->to;
        slot->captured = best->captured;
    } else if (!same) {
        slot->from = TT_NO_SQ;
        slot->to = TT_NO_SQ;
        slot->captured = 0;
    }
}

static void
ab_check_limits(ab_ctx *c)
{
    if (prv_stopped(c->stop))
        c->abort = 1;
    if (c->node_limit && c->nodes >= c->node_limit)
        c->abort = 1;
    if (c->deadline > 0 && ab_now() >= c->deadline)
        c->abort = 1;
}

/* Nonzero when the position at ply already stood on the current line
 * since the last irreversible move. Only positions with the same side to
 * move (two plies apart) can be equal. */
static int
ab_repeated(const ab_ctx *c, int ply)
{
    const eng_pos *p = &c->path[ply];
    for (int i = ply - 2; i >= c->rev_start[ply]; i -= 2)
        if (eng_equal(&c->path[i], p))
            return 1;
    return 0;
}

/* Nonzero when the side to move has a plain (non-capture) move: one of
 * its pieces has an empty square diagonally forward, or a king one
 * diagonally backward. With no capture either, the side has no move and
 * has lost; a leaf must know that before it calls the evaluation. */
static int
ab_has_plain_move(const eng_pos *p)
{
    uint32_t empty = ~(p->bm | p->wm | p->bk | p->wk);
    uint32_t men = p->stm == ENG_BLACK ? p->bm : p->wm;
    uint32_t kings = p->stm == ENG_BLACK ? p->bk : p->wk;
    uint32_t down = p->stm == ENG_BLACK ? men | kings : kings;
    uint32_t up = p->stm == ENG_BLACK ? kings : men | kings;
    return ((bits_down1(down) | bits_down2(down) | bits_up1(up) | bits_up2(up)) & empty) != 0;
}

/*
 * ab_probe - what the databases know of a quiet position (prover/leaf.h),
 * as a score at ply. An exact value is the score; a partial bound closes
 * the node only when it decides the window: at least a draw (DW) with
 * beta <= 0 fails high at 0, at most a draw (LD) with alpha >= 0 fails
 * low at 0. RETURN 1 and *score when the node is closed; 0 when it is
 * not (too many pieces, or a bound that leaves the window open); 0 with
 * c->err = AB_EDB and the search aborted when the probe failed (a
 * damaged block: never a value).
 */
static int
ab_probe(ab_ctx *c, const eng_pos *p, int ply, int alpha, int beta, int *score)
{
    c->probes++;
    pleaf lf;
    if (pleaf_of(c->db, c->db_pieces, p, PLEAF_QUIET | PLEAF_MOVES, &lf) < 0) {
        c->err = AB_EDB;
        c->abort = 1;
        return 0;
    }
    if (lf.kind == PLEAF_NONE)
        return 0;
    int win = AB_WIN - ply - AB_DBPLY;
    switch (lf.bound) {
    case ENG_WW:
        *score = win;
        return 1;
    case ENG_LL:
        *score = -win;
        return 1;
    case ENG_DD:
        *score = 0;
        return 1;
    case ENG_DW:
        *score = 0;
        return beta <= 0;
    case ENG_LD:
        *score = 0;
        return alpha >= 0;
    default:
        return 0;
    }
}

/*
 * ab_order - ordering scores of the moves at ply: the table's move first,
 * then captures (all moves are captures when there is one; longer ones
 * first, as they are the likeliest to matter), the two killers of the
 * ply, promotions, and the rest by history.
 */
static void
ab_order(ab_ctx *c, int ply, const eng_move *tt_move)
{
    const eng_pos *p = &c->path[ply];
    const eng_movelist *ml = &c->ml[ply];
    int *ord = c->ord[ply];
    uint32_t men = p->stm == ENG_BLACK ? p->bm : p->wm;
    uint32_t crown = p->stm == ENG_BLACK ? ENG_ROW7 : ENG_ROW0;
    for (int i = 0; i < ml->n; i++) {
        const eng_move *m = &ml->m[i];
        int promo = ((men >> m->from) & 1u) && ((crown >> m->to) & 1u);
        int s;
        if (tt_move && ab_same_move(m, tt_move))
            s = ORD_TT;
        else if (m->captured)
            s = ORD_CAPTURE + 256 * __builtin_popcount(m->captured) + (promo ? 128 : 0);
        else if (ab_same_move(m, &c->killer[ply][0]))
            s = ORD_KILLER0;
        else if (ab_same_move(m, &c->killer[ply][1]))
            s = ORD_KILLER1;
        else
            s = (promo ? ORD_PROMOTION : 0) + c->hist[p->stm][m->from][m->to];
        ord[i] = s;
    }
}

/* Brings the best-ordered move of k..n-1 to index k. */
static void
ab_pick(ab_ctx *c, int ply, int k)
{
    eng_movelist *ml = &c->ml[ply];
    int *ord = c->ord[ply];
    int b = k;
    for (int i = k + 1; i < ml->n; i++)
        if (ord[i] > ord[b])
            b = i;
    if (b != k) {
        eng_move tm = ml->m[k];
        ml->m[k] = ml->m[b];
        ml->m[b] = tm;
        int ts = ord[k];
        ord[k] = ord[b];
        ord[b] = ts;
    }
}

/* A quiet move refuted the opponent's last move: remember it as a killer
 * of the ply and credit its history (deeper cutoffs count more: they
 * saved more work). The history is halved when it grows large, so it
 * stays below the killers' class and old cutoffs fade. */
static void
ab_credit(ab_ctx *c, int ply, int depth, const eng_move *m)
{
    if (m->captured)
        return;
    if (!ab_same_move(m, &c->killer[ply][0])) {
        c->killer[ply][1] = c->killer[ply][0];
        c->killer[ply][0] = *m;
    }
    int *h = &c->hist[c->path[ply].stm][m->from][m->to];
    *h += depth * depth;
    if (*h >= ORD_HISTORY_MAX)
        for (int s = 0; s < 2; s++)
            for (int f = 0; f < ENG_NSQUARES; f++)
                for (int t = 0; t < ENG_NSQUARES; t++)
                    c->hist[s][f][t] /= 2;
}

/* ---- the search ------------------------------------------------------- */

/*
 * ab_node - the fail-soft value of path[ply] for its side to move, with
 * `depth` plies of nominal depth left, in the window (alpha, beta).
 * is_pv: the node is on the principal variation (full window); table
 * cutoffs are taken only elsewhere, so the PV stays whole.
 */
static int
ab_node(ab_ctx *c, int depth, int ply, int alpha, int beta, int is_pv)
{
    const eng_pos *p = &c->path[ply];
    if (ply < AB_MAXPV)
        c->pvlen[ply] = ply;
    c->nodes++;
    if ((c->nodes & AB_CHECK_MASK) == 0 && c->can_abort)
        ab_check_limits(c);
    if (c->abort)
        return 0;

    if (ply > 0 && ab_repeated(c, ply))
        return 0;
    uint32_t own = p->stm == ENG_BLACK ? (p->bm | p->bk) : (p->wm | p->wk);
    if (!own)
        return -(AB_WIN - ply);
    if (ply >= AB_PLY_LIMIT)
        return ab_eval(p);

    /* A position whose side to move must capture is never a leaf and never
     * probed: the capture is played out here (quiescence), so every
     * position a proof rests on is one the search saw. */
    int capture = eng_has_capture(p);
    if (!capture) {
        /* The root is searched even when the database knows it, so that
         * the result has a move and a line. */
        if (ply > 0 && c->db &&
            (egdb_scope_has(c->db_pieces, p) || (c->db_pieces & EGDB_SCOPE_PARTIAL))) {
            int v;
            if (ab_probe(c, p, ply, alpha, beta, &v))
                return v;
            if (c->abort)
                return 0;
        }
        if (depth <= 0)
            return ab_has_plain_move(p) ? ab_eval(p) : -(AB_WIN - ply);
    }

    /* Mate-distance bounds: nothing here beats winning at the next ply or
     * loses earlier than losing here. They only ever cut in lines that are
     * already proven. */
    int lo = -(AB_WIN - ply), hi = AB_WIN - ply - 1;
    if (alpha < lo)
        alpha = lo;
    if (beta > hi)
        beta = hi;
    if (alpha >= beta)
        return alpha;

    /* The table is kept for nodes with depth left; quiescence nodes are
     * cheap and many, and would only crowd the deeper entries out. */
    uint64_t key = 0;
    eng_move tt_move;
    const eng_move *tt_mp = NULL;
    if (depth > 0) {
        key = eng_key(p);
        const tt_entry *e = tt_find(c, key, p);
        if (e) {
            if (e->from != TT_NO_SQ) {
                memset(&tt_move, 0, sizeof tt_move);
                tt_move.from = e->from;
                tt_move.to = e->to;
                tt_move.captured = e->captured;
                tt_mp = &tt_move;
            }
            int s = tt_score_from(e->score, ply);
            if (!is_pv && e->depth >= depth) {
                if (e->bound == TT_EXACT || (e->bound == TT_LOWER && s >= beta) ||
                    (e->bound == TT_UPPER && s <= alpha))
                    return s;
            }
        }
    }

    eng_movelist *ml = &c->ml[ply];
    int n = eng_generate(p, ml, ENG_DUPS_MERGE);
    if (n < 0) {
        /* More than ENG_MAX_MOVES moves: a search over a partial list
         * could miss the defence, so refuse rather than guess. */
        c->err = AB_EINVAL;
        c->abort = 1;
        return 0;
    }
    if (n == 0)
        return -(AB_WIN - ply);
    ab_order(c, ply, tt_mp);

    /* A single legal move (usually a forced capture) costs no depth: the
     * line it starts is as narrow as it gets, and checkers tactics are
     * chains of forced replies. Cycles of single moves end at a
     * repetition, and every other chain at the ply limit. */
    int child_depth = (n == 1 && depth > 0) ? depth : depth - 1;
    if (child_depth < 0)
        child_depth = 0;

    uint32_t men = p->stm == ENG_BLACK ? p->bm : p->wm;
    int alpha0 = alpha;
    int best = -AB_INF, best_k = -1;
    for (int k = 0; k < n; k++) {
        ab_pick(c, ply, k);
        const eng_move *m = &ml->m[k];
        eng_make(p, m, &c->path[ply + 1]);
        int irreversible = m->captured || ((men >> m->from) & 1u);
        c->rev_start[ply + 1] = irreversible ? ply + 1 : c->rev_start[ply];

        int s;
        if (k == 0) {
            s = -ab_node(c, child_depth, ply + 1, -beta, -alpha, is_pv);
        } else {
            /* Late quiet moves, after the table move, the killers and the
             * promotions, rarely turn out best: search them a ply shallower
             * first, and again at full depth only if they beat alpha. A
             * shallower subtree is still a subtree: a proof found in it is
             * a proof (every leaf is terminal or a database value), so
             * reductions cost accuracy of heuristic scores, never
             * soundness. */
            int r = 0;
            if (!is_pv && !capture && child_depth >= AB_LMR_DEPTH && k >= AB_LMR_MOVES &&
                c->ord[ply][k] < ORD_PROMOTION)
                r = 1;
            s = -ab_node(c, child_depth - r, ply + 1, -alpha - 1, -alpha, 0);
            if (!c->abort && r && s > alpha)
                s = -ab_node(c, child_depth, ply + 1, -alpha - 1, -alpha, 0);
            if (!c->abort && is_pv && s > alpha && s < beta)
                s = -ab_node(c, child_depth, ply + 1, -beta, -alpha, 1);
        }
        if (c->abort)
            return 0;
        if (s > best) {
            best = s;
            best_k = k;
            if (s > alpha) {
                alpha = s;
                if (ply + 1 < AB_MAXPV) {
                    c->pv[ply][ply] = *m;
                    int end = c->pvlen[ply + 1];
                    for (int j = ply + 1; j < end; j++)
                        c->pv[ply][j] = c->pv[ply + 1][j];
                    c->pvlen[ply] = end > ply + 1 ? end : ply + 1;
                }
                if (s >= beta) {
                    ab_credit(c, ply, depth > 0 ? depth : 1, m);
                    break;
                }
            }
        }
    }

    if (depth > 0) {
        int bound = best >= beta ? TT_LOWER : best > alpha0 ? TT_EXACT : TT_UPPER;
        int proof = (best >= AB_PROVEN_MIN && bound != TT_UPPER) ||
                    (best <= -AB_PROVEN_MIN && bound != TT_LOWER);
        tt_store(c, key, p, proof ? TT_DEPTH_PROOF : depth, bound, best, ply,
                 bound == TT_UPPER ? NULL : &ml->m[best_k]);
    }
    return best;
}

/*
 * ab_finish_pv - checks the line by replaying it (each move must be one
 * eng_generate gives in the position reached) and lengthens a short line
 * with the table's best moves, stopping where the table has none, the
 * move is not legal, or the line would come back to a position it holds.
 */
static void
ab_finish_pv(ab_ctx *c, const eng_pos *root, ab_result *out)
{
    eng_pos line[AB_MAXPV + 1];
    eng_movelist *ml = &c->ml[0];
    line[0] = *root;
    int len = 0;
    for (int i = 0; i < out->pvlen; i++) {
        int n = eng_generate(&line[len], ml, ENG_DUPS_MERGE), k;
        for (k = 0; k < n; k++)
            if (ab_same_move(&ml->m[k], &out->pv[i]))
                break;
        if (k >= n)
            break;
        out->pv[len] = ml->m[k];
        eng_make(&line[len], &ml->m[k], &line[len + 1]);
        len++;
    }
    while (len < AB_MAXPV) {
        const eng_pos *p = &line[len];
        const tt_entry *e = tt_find(c, eng_key(p), p);
        if (!e || e->from == TT_NO_SQ)
            break;
        eng_move want = {.from = e->from, .to = e->to, .captured = e->captured};
        int n = eng_generate(p, ml, ENG_DUPS_MERGE), k;
        for (k = 0; k < n; k++)
            if (ab_same_move(&ml->m[k], &want))
                break;
        if (k >= n)
            break;
        eng_make(p, &ml->m[k], &line[len + 1]);
        int cycle = 0;
        for (int j = 0; j <= len && !cycle; j++)
            cycle = eng_equal(&line[j], &line[len + 1]);
        if (cycle)
            break;
        out->pv[len++] = ml->m[k];
    }
    out->pvlen = len;
}

/* Fills in what an iteration's score and line leave open: the figures so
 * far, the verdict, the checked and lengthened line. */
static void
ab_finish_result(ab_ctx *c, const eng_pos *root, ab_result *out, double t0)
{
    out->nodes = c->nodes;
    out->db_probes = c->probes;
    out->seconds = ab_now() - t0;
    /* A proof whose distance grew past AB_MAXPLY through grafted table
     * entries would fall between the two ranges; search.h promises only
     * those two, so such a score is reported as the largest heuristic
     * one (the side is certainly no worse off than that). */
    if (!ab_score_proven(out->score) && out->score > AB_HEUR_MAX)
        out->score = AB_HEUR_MAX;
    if (!ab_score_proven(out->score) && out->score < -AB_HEUR_MAX)
        out->score = -AB_HEUR_MAX;
    out->proven = out->score >= AB_PROVEN_MIN    ? AB_PROVEN_WIN
                  : out->score <= -AB_PROVEN_MIN ? AB_PROVEN_LOSS
                                                 : AB_HEURISTIC;
    ab_finish_pv(c, root, out);
}

/* ---- functions -------------------------------------------------------- */

int
ab_new(size_t tt_bytes, ab_ctx **out)
{
    *out = NULL;
    if (tt_bytes < TT_MIN_BYTES)
        tt_bytes = TT_MIN_BYTES;
    size_t buckets = 1;
    while (buckets * 2 * sizeof(tt_bucket) <= tt_bytes)
        buckets *= 2;
    ab_ctx *c = calloc(1, sizeof *c);
    if (!c)
        return AB_ENOMEM;
    /* Mapped, not allocated and cleared: the kernel's pages come zeroed
     * and are zeroed only when first touched. A worker's table is 64 MB
     * (a quarter of --tt), and clearing it at start was half of the CPU
     * time of a `prove` that settles a small position at once (perf:
     * ab_new's memset, 49% of the samples). Page-aligned, so its buckets
     * are aligned to cache lines as before. */
    void *m = mmap(NULL, buckets * sizeof(tt_bucket), PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED) {
        free(c);
        return AB_ENOMEM;
    }
    c->tt = m;
    c->tt_mask = buckets - 1;
    *out = c; /* the table, history and killers all start zeroed */
    return AB_OK;
}

void
ab_free(ab_ctx *c)
{
    if (!c)
        return;
    munmap(c->tt, (c->tt_mask + 1) * sizeof(tt_bucket));
    free(c);
}

void
ab_clear(ab_ctx *c)
{
    memset(c->tt, 0, (c->tt_mask + 1) * sizeof(tt_bucket));
    memset(c->hist, 0, sizeof c->hist);
    memset(c->killer, 0, sizeof c->killer);
    c->age = 0;
}

const char *
ab_strerror(int code)
{
    switch (code) {
    case AB_OK:
        return "success";
    case AB_ENOMEM:
        return "out of memory";
    case AB_EINVAL:
        return "the search refused its arguments";
    case AB_EDB:
        return "a database probe failed (a damaged block?)";
    default:
        return "unknown search error";
    }
}

int
ab_score_proven(int score)
{
    return score >= AB_PROVEN_MIN || score <= -AB_PROVEN_MIN;
}

int
ab_search(ab_ctx *c, const eng_pos *p, const ab_opts *o, ab_result *out)
{
    if (!c || !p || !o || !out)
        return AB_EINVAL;
    memset(out, 0, sizeof *out);
    if (eng_validate(p, NULL, 0) != 0)
        return AB_EINVAL;
    /* `!(x >= 0)` also refuses a NaN time. */
    if (o->max_depth < 0 || !(o->time_limit >= 0))
        return AB_EINVAL;
    if (o->max_depth == 0 && o->time_limit == 0 && o->node_limit == 0)
        return AB_EINVAL;

    double t0 = ab_now();
    c->db = o->db;
    c->db_pieces = 0;
    if (o->db) {
        /* The scope asked for, when the databases hold it (egdb.h). */
        int have = egdb_scope(o->db);
        c->db_pieces =
            o->db_pieces > 0 && egdb_scope_within(o->db_pieces, have) ? o->db_pieces : have;
    }
    c->nodes = 0;
    c->probes = 0;
    c->node_limit = o->node_limit;
    c->deadline = o->time_limit > 0 ? t0 + o->time_limit : 0;
    c->stop = o->stop;
    c->abort = 0;
    c->err = 0;
    c->age++;
    memset(c->killer, 0, sizeof c->killer);
    /* Old history still orders well, but should not outweigh this
     * search's own cutoffs for long. */
    for (int s = 0; s < 2; s++)
        for (int f = 0; f < ENG_NSQUARES; f++)
            for (int t = 0; t < ENG_NSQUARES; t++)
                c->hist[s][f][t] /= 4;

    c->path[0] = *p;
    c->rev_start[0] = 0;
    int maxd = o->max_depth > 0 && o->max_depth < AB_DEPTH_LIMIT ? o->max_depth : AB_DEPTH_LIMIT;
    for (int d = 1; d <= maxd; d++) {
        c->can_abort = d > 1;
        if (c->can_abort) {
            /* Between iterations the limits are looked at directly, so a
             * stop that came early ends the search after depth 1 and not
             * after the next 4096-node mark. */
            ab_check_limits(c);
            if (c->abort)
                break;
        }
        int s = ab_node(c, d, 0, -AB_INF, AB_INF, 1);
        if (c->err)
            break;
        if (c->abort)
            break; /* the unfinished iteration says nothing */
        out->score = s;
        out->depth = d;
        out->pvlen = c->pvlen[0];
        memcpy(out->pv, c->pv[0], (size_t)out->pvlen * sizeof(eng_move));
        ab_finish_result(c, p, out, t0);
        if (o->progress)
            o->progress(out, o->progress_arg);
        /* A proof does not get truer with depth; the manager wants it now. */
        if (out->proven != AB_HEURISTIC)
            break;
        /* Each iteration costs several times the one before it: once half
         * the time is gone, the next would not finish. */
        if (c->deadline > 0 && ab_now() - t0 > 0.5 * o->time_limit)
            break;
    }
    /* The figures count the unfinished iteration too: it was work done. */
    out->nodes = c->nodes;
    out->db_probes = c->probes;
    out->seconds = ab_now() - t0;
    if (c->err) {
        out->pvlen = 0;
        return c->err;
    }
    return AB_OK;
}
