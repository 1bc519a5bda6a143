/*
 * dfpn.c - depth-first proof-number search with GHI-safe repetitions and
 * the writing of whole proofs into the proven-node store.
 *
 * Read prover.h (REPETITIONS AND GHI, WRITING A PROOF) first: it states
 * what this file guarantees and why; the comments here say how.
 *
 * Numbers are kept in the attacker's frame throughout: pn is the proof
 * number of "the attacker reaches the goal", dn its disproof number. A
 * node with pn == 0 is a success for the attacker, dn == 0 a success for
 * the defender. One of the two sides is the SAFETY side of the query:
 * the side whose success a repetition gives (goal WIN: the defender, who
 * only has to avoid losing; goal DRAW: the attacker, who only has to
 * avoid losing). The other side is the REACH side: its success is a win,
 * which no repetition can give.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "engine/bits.h"
#include "engine/value.h"
#include "prover/dfpn.h"

/* The question's target inside the search (the table's entries and the
 * proof walk are written in these terms). */
enum dfpn_goal { DFPN_DRAW = 0, DFPN_WIN = 1 };

/* ---- constants -------------------------------------------------------- */

#define BUCKET 4             /* entries a bucket: 128 bytes, two cache lines */
#define GC_SAMPLE 16384      /* entries sampled to find the median effort    */
#define ARENA_CHILDREN 65536 /* children on the current line, all plies     */
#define PT_MIN 4096          /* path-dependent table entries, at least       */
#define SAT (DFPN_INF - 1)   /* the largest number a non-final node can have */
#define DEEP (1u << 22)      /* both numbers of a line cut at DFPN_MAXPLY    */

enum { F_USED = 1, F_WHITE = 2, F_FINAL = 4 };
#define ROUND_SHIFT 3 /* open entry: flags bits 3-7, its depth round    */
#define BOUND_SHIFT 3 /* final entry: flags bits 3-5, its eng_bound     */
#define F_LOOSE 64    /* final entry: found by an optimistic search    */
#define NSUSP 8       /* unanswered queries whose open entries are kept */

/* ---- types ------------------------------------------------------------ */

/*
 * A table entry: the full position, so that a hit is confirmed exactly.
 * An open entry holds the current query's numbers; a final entry holds a
 * fact about the position (a bound for its side to move), valid for
 * every query (THE TABLE ACROSS QUERIES).
 */
typedef struct tt_entry {
    uint32_t bm, wm, bk, wk;
    uint32_t pn, dn; /* open: the numbers; final: pn is the proof length
                        of a win or loss (dn unused)                   */
    uint32_t work;   /* positions expanded below, saturating            */
    uint16_t min_depth;
    uint8_t flags;
    uint8_t gen; /* the query that last wrote or used it */
} tt_entry;

/* An unanswered query whose open entries may serve the same query again
 * (THE TABLE ACROSS QUERIES). */
typedef struct susp {
    eng_pos root;
    uint8_t used, attacker, goal, loose, gen, round;
    uint16_t maxply;
} susp;

/*
 * The positions above a node that a path-dependent result rests on (the
 * ancestors whose repetition it used), at most NDEP of them; DEP_OVER when
 * there were more: such a result is then only handed to its caller (mid's
 * out-parameter), never stored, so no result is ever keyed by a hash.
 */
#define NDEP 3
#define DEP_OVER 0xFF
typedef struct deps {
    uint8_t n;
    eng_pos p[NDEP];
} deps;

/*
 * A path-dependent result. A safety success only gets better with more
 * positions on the line (each is one more repetition for the safety side
 * to use), so it holds on every line that has all the positions it rests
 * on (d) above the node. Both the position and those positions are
 * compared in full.
 */
typedef struct pt_entry {
    eng_pos pos;
    deps d;
    uint8_t used, gen, attacker_won;
    uint16_t len;
} pt_entry;
#define PT_WAYS 4

/* What the search knows of one child while its parent is expanded. */
typedef struct child {
    eng_move mv;
    eng_pos pos;
    uint64_t key; /* eng_key of pos */
    uint32_t pn, dn;
    int16_t rep_up; /* safety success: plies above pos of the repeated
                       position it rests on (<= 0: path-independent) */
    deps d;         /* which positions those are (rep_up > 0) */
    uint16_t len;   /* final: plies of its proof (reach side: the
                       longest line; safety side: unused) */
    uint16_t min_depth;
    uint8_t fixed; /* final, and cannot change on this line */
    uint8_t irrev; /* the move to it was a man move or a capture */
    uint8_t leaf;  /* LEAF_*: how it was valued */
} child;

enum { LEAF_NONE, LEAF_END, LEAF_DB, LEAF_STORE, LEAF_REP, LEAF_TT, LEAF_PT, LEAF_CUT };

/* The set of positions of a proof being written. */
typedef struct pset_entry {
    eng_pos pos;
    uint32_t used;
    uint32_t state; /* 1 in progress, 2 done */
    uint32_t item;  /* index of its record in the batch, or UINT32_MAX */
    uint16_t len;
} pset_entry;

struct dfpn_ctx {
    tt_entry *tt;
    size_t nbuckets; /* a power of two */
    size_t used;
    pt_entry *pt;
    size_t npt;       /* a power of two */
    uint8_t gen;      /* the current query's generation (never 0) */
    uint8_t rgen, rround; /* a resumed query: its earlier generation and round */
    int resumed;          /* this query resumes an earlier one (rgen, rround) */
    int loose;            /* optimistic (or naive): may use F_LOOSE facts */
    susp susp[NSUSP];
    uint64_t pt_puts; /* path-dependent results stored in this query: none
                         (always so in optimistic mode) skips the lookups */

    /* the query */
    const dfpn_opts *o;
    int attacker, goal, safety; /* colours: safety = side a repetition helps */
    double eps;
    double t0, deadline, next_progress;
    uint64_t node_limit;
    uint64_t nodes, expanded, probes, store_hits, gc_runs;
    int abort; /* budget or stop: unwind */
    int error; /* a DFPN_E* code that ends the query */
    char emsg[400];
    uint32_t root_pn, root_dn;
    int maxply; /* the current depth limit (DEPTH LIMIT below) */
    int round;  /* depth rounds so far (< 32 by the growth of maxply) */

    /* the current line */
    eng_pos path[DFPN_MAXPLY + 2];
    int seg[DFPN_MAXPLY + 2]; /* first ply of the reversible segment */
    child *arena;
    size_t top;
    eng_movelist ml;

    /* writing a proof */
    pset_entry *set;
    size_t nset, set_cap;
    pst_item *items;
    size_t nitems, items_cap;
    int w_side, w_reach; /* the proof being written: its side, reach or not */
    uint64_t researched;
    eng_pos *log; /* positions taken, in order (for rollback) */
    size_t nlog, log_cap;
    char stuck[300]; /* where the last candidate could not be closed */
    int strict;      /* walking: a repetition counts before the table */
};

/* ---- prototypes ------------------------------------------------------- */

static void mid(dfpn_ctx *c, int ply, uint32_t thpn, uint32_t thdn, int inc, child *self);

/* ---- small helpers ---------------------------------------------------- */

static double
now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static uint32_t
sat_add(uint32_t a, uint32_t b)
{
    if (a >= DFPN_INF || b >= DFPN_INF)
        return DFPN_INF;
    uint32_t s = a + b; /* both < 2^30: no wrap */
    return s >= DFPN_INF ? SAT : s;
}

static int
same_pos(const eng_pos *a, const eng_pos *b)
{
    return a->bm == b->bm && a->wm == b->wm && a->bk == b->bk && a->wk == b->wk && a->stm == b->stm;
}

static int
npieces(const eng_pos *p)
{
    return bits_popcount(p->bm | p->wm | p->bk | p->wk);
}

/* Nonzero when a final child is the attacker's success. */
static int
attacker_won(const child *ch)
{
    return ch->pn == 0;
}

static int
is_final(uint32_t pn, uint32_t dn)
{
    return pn == 0 || dn == 0;
}

static void
set_success(child *ch, int attacker_success)
{
    ch->pn = attacker_success ? 0 : DFPN_INF;
    ch->dn = attacker_success ? DFPN_INF : 0;
}

static void
set_error(dfpn_ctx *c, int code, const char *msg)
{
    if (!c->error) {
        c->error = code;
        snprintf(c->emsg, sizeof c->emsg, "%s", msg);
    }
    c->abort = 1;
}

/* ---- the transposition table ------------------------------------------ */

/*
 * THE TABLE ACROSS QUERIES
 * A worker keeps one table for its whole life (prv_opts.ctx), so that a
 * job learns from the jobs before it. Each query is a generation; what an
 * entry holds decides how long it is believed:
 *   a final entry is a fact about its position, a bound for the side to
 *   move (the attacker wins, the defender at least draws, ...), true
 *   whatever question or line led to it (prover.h: reach results never
 *   rest on a repetition; safety results enter the table only when they
 *   rest on no line above them). Every later query reads it in its own
 *   terms, as it reads the store: "White wins" answers both "does White
 *   win" and "does Black draw". Facts about one position from different
 *   queries are merged into one bound (eng_bound_meet). A fact found by
 *   an optimistic search (dfpn_opts.optimistic) may rest on a line it
 *   was not proven on: it is marked F_LOOSE and only its own query reads
 *   it (and that query resumed): loose facts carried to other queries
 *   made optimistic answers the walk could not close, and re-searches
 *   that cost a hundred times the work (bench/rejobs.c, first version).
 *   an open entry (numbers) means something only for its query's root,
 *   question and depth round: it is live in its own generation and round.
 *   When a query stops unanswered (its budget ran out), its root,
 *   question, generation and round are remembered (NSUSP of them); the
 *   same query asked again (a re-job of the same leaf) resumes at that
 *   round, with that generation's open entries live again until its
 *   first new round.
 * Entries are aged, not cleared: the garbage collector and the bucket's
 * replacement weigh an entry's effort halved for each generation since it
 * was last used, so old work gives way to new, and proofs stay longest.
 * Only when the 8-bit generation wraps are open entries swept (a stale
 * generation must never look current) and the path-dependent table
 * cleared.
 */

/* An open entry still live: of this query's round (or of the query it
 * resumes, until its first new round). */
static int
open_live(const dfpn_ctx *c, const tt_entry *e)
{
    unsigned r = (unsigned)e->flags >> ROUND_SHIFT;
    if (e->gen == c->gen)
        return r == ((unsigned)c->round & 31);
    return c->resumed && e->gen == c->rgen && c->round == c->rround &&
           r == ((unsigned)c->rround & 31);
}

/* A slot that holds nothing worth keeping. */
static int
dead(const dfpn_ctx *c, const tt_entry *e)
{
    if (!(e->flags & F_USED))
        return 1;
    return !(e->flags & F_FINAL) && !open_live(c, e);
}

static int
same_entry_pos(const tt_entry *e, const eng_pos *p)
{
    return (e->flags & F_WHITE) == (p->stm ? F_WHITE : 0) && e->bm == p->bm && e->wm == p->wm &&
           e->bk == p->bk && e->wk == p->wk;
}

static eng_bound
entry_bound(const tt_entry *e)
{
    return (eng_bound)(((unsigned)e->flags >> BOUND_SHIFT) & 7);
}

/* What a final entry says to this query: 1 the attacker succeeds, 0 the
 * defender does, -1 nothing (or a loose fact of another query). */
static int
fact_answer(const dfpn_ctx *c, const tt_entry *e)
{
    if ((e->flags & F_LOOSE) &&
        (!c->loose || (e->gen != c->gen && !(c->resumed && e->gen == c->rgen))))
        return -1;
    int stm = (e->flags & F_WHITE) ? ENG_WHITE : ENG_BLACK;
    eng_bound b = entry_bound(e);
    if (stm != c->attacker)
        b = eng_bound_neg(b);
    int lo = eng_bound_lo(b), hi = eng_bound_hi(b);
    if (c->goal == DFPN_WIN)
        return lo == ENG_WIN ? 1 : hi <= ENG_DRAW ? 0 : -1;
    return lo >= ENG_DRAW ? 1 : hi == ENG_LOSS ? 0 : -1;
}

/* The fact a final result of this query states, as a bound for p's side
 * to move. */
static eng_bound
fact_of(const dfpn_ctx *c, const eng_pos *p, int attacker_success)
{
    eng_bound b;
    if (attacker_success)
        b = c->goal == DFPN_WIN ? ENG_WW : ENG_DW;
    else
        b = c->goal == DFPN_WIN ? ENG_LD : ENG_LL;
    return p->stm == c->attacker ? b : eng_bound_neg(b);
}

/* What the table knows of a position for this query. */
typedef struct look {
    tt_entry *fin;  /* a fact that answers the query, or NULL */
    int att_won;    /* with fin: the attacker succeeds */
    uint16_t len;   /* with fin: its proof length */
    tt_entry *open; /* the live open entry, or NULL */
} look;

static void
tt_find(dfpn_ctx *c, const eng_pos *p, uint64_t key, look *l)
{
    tt_entry *b = &c->tt[(key & (c->nbuckets - 1)) * BUCKET];
    l->fin = l->open = NULL;
    for (int i = 0; i < BUCKET; i++) {
        tt_entry *e = &b[i];
        if (!(e->flags & F_USED) || !same_entry_pos(e, p))
            continue;
        if (e->flags & F_FINAL) {
            int a = fact_answer(c, e);
            if (a >= 0 && !l->fin) {
                l->fin = e;
                l->att_won = a;
                l->len = (uint16_t)e->pn;
                e->gen = c->gen; /* used again: young again */
            }
        } else if (open_live(c, e)) {
            l->open = e;
        }
    }
}

static int
cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* What an entry is worth keeping: its effort (a final one counts
 * DFPN_FINAL_BONUS more), halved for each generation since its last use. */
static uint64_t
entry_score(const dfpn_ctx *c, const tt_entry *e)
{
    uint64_t s = (uint64_t)e->work + ((e->flags & F_FINAL) ? DFPN_FINAL_BONUS : 0);
    unsigned age = (uint8_t)(c->gen - e->gen);
    return age >= 40 ? 0 : s >> age;
}

/*
 * GARBAGE COLLECTION (small-tree GC)
 * Frees every entry whose score (entry_score: effort, the bonus of a
 * final entry, aged) is below the median of a sample, and every dead one.
 * Entries that cost little to recompute, or that no recent query used,
 * go; proofs and big subtrees stay. Freeing an entry loses only
 * information, never correctness: a missing child is valued afresh.
 */
static void
tt_gc(dfpn_ctx *c)
{
    size_t n = c->nbuckets * BUCKET;
    uint64_t *s = malloc(GC_SAMPLE * sizeof *s);
    if (!s)
        return; /* bucket replacement still bounds the table */
    size_t k = 0;
    uint64_t x = 0x243F6A8885A308D3ull ^ c->gc_runs;
    for (int tries = 0; k < GC_SAMPLE && tries < 4 * GC_SAMPLE; tries++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        const tt_entry *e = &c->tt[x % n];
        if (!dead(c, e))
            s[k++] = entry_score(c, e);
    }
    qsort(s, k, sizeof *s, cmp_u64); /* 16k numbers, once a collection */
    uint64_t median = k ? s[k / 2] : 0;
    free(s);
    size_t kept = 0; /* recounted: dead entries are freed unseen */
    for (size_t i = 0; i < n; i++) {
        tt_entry *e = &c->tt[i];
        if (dead(c, e) || entry_score(c, e) <= median)
            e->flags = 0;
        else
            kept++;
    }
    c->used = kept;
    c->gc_runs++;
}

/* A slot of the key's bucket for a new entry: a dead one, else the one
 * least worth keeping. */
static tt_entry *
tt_slot(dfpn_ctx *c, uint64_t key)
{
    if (c->used * 4 >= c->nbuckets * BUCKET * 3)
        tt_gc(c);
    tt_entry *b = &c->tt[(key & (c->nbuckets - 1)) * BUCKET], *v = NULL;
    for (int i = 0; i < BUCKET; i++) {
        if (dead(c, &b[i])) {
            if (b[i].flags & F_USED)
                c->used--; /* counted while it lived */
            b[i].flags = 0;
            v = &b[i];
            break;
        }
        if (!v || entry_score(c, &b[i]) < entry_score(c, v))
            v = &b[i];
    }
    if (!(v->flags & F_USED))
        c->used++;
    v->flags = 0;
    v->work = 0;
    return v;
}

static void
tt_fill(dfpn_ctx *c, tt_entry *e, const eng_pos *p, int depth)
{
    e->bm = p->bm, e->wm = p->wm, e->bk = p->bk, e->wk = p->wk;
    e->flags = (uint8_t)(F_USED | (p->stm ? F_WHITE : 0));
    e->gen = c->gen;
    e->work = 0;
    e->min_depth = (uint16_t)depth;
}

static void
add_work(tt_entry *e, uint64_t work)
{
    uint64_t w = (uint64_t)e->work + work;
    e->work = w > UINT32_MAX ? UINT32_MAX : (uint32_t)w;
}

/*
 * Writes what is known of p: open numbers, or (pn or dn 0) a final
 * result, with the length of its proof, as a fact (loose: from an
 * optimistic search, on the safety side). work is added to the entry's
 * effort.
 */
static void
tt_put(dfpn_ctx *c, const eng_pos *p, uint64_t key, uint32_t pn, uint32_t dn, uint16_t len,
       uint64_t work, int depth, int loose)
{
    tt_entry *b = &c->tt[(key & (c->nbuckets - 1)) * BUCKET];
    tt_entry *open = NULL, *fact = NULL, *answer = NULL;
    uint8_t lf = loose ? F_LOOSE : 0;
    for (int i = 0; i < BUCKET; i++) {
        tt_entry *e = &b[i];
        if (!(e->flags & F_USED) || !same_entry_pos(e, p))
            continue;
        if (!(e->flags & F_FINAL)) {
            if (open_live(c, e))
                open = e;
            continue;
        }
        if ((e->flags & F_LOOSE) == lf)
            fact = e;
        if (fact_answer(c, e) >= 0)
            answer = e;
    }
    if (!is_final(pn, dn)) {
        if (answer)
            return; /* a fact is never overwritten by numbers */
        if (!open) {
            open = tt_slot(c, key);
            tt_fill(c, open, p, depth);
            open->flags |= (uint8_t)((c->round & 31) << ROUND_SHIFT);
        }
        open->gen = c->gen;
        open->pn = pn, open->dn = dn;
        add_work(open, work);
        if (depth < open->min_depth)
            open->min_depth = (uint16_t)depth;
        return;
    }
    eng_bound f = fact_of(c, p, pn == 0);
    if (loose && answer && !(answer->flags & F_LOOSE) && fact_answer(c, answer) == (pn == 0))
        fact = answer; /* a true fact says it already: it only gains the effort */
    /* the length of a win or loss; a store leaf's length 0 is kept as 1
     * (the walk only compares lengths) */
    uint32_t l = len ? len : 1;
    if (fact) {
        if (fact != answer || !loose) {
            /* a loose fact of another query is replaced, not merged */
            int stale = (fact->flags & F_LOOSE) && fact->gen != c->gen &&
                        !(c->resumed && fact->gen == c->rgen);
            eng_bound m = stale ? f : eng_bound_meet(entry_bound(fact), f);
            /* disjoint facts: only loose ones can be (a strict fact is
             * true); the newer stands */
            if (m == ENG_BOUND_INVALID)
                m = f;
            if (stale || eng_bound_is_exact(f)) /* a new win or loss brings its length */
                fact->pn = l;
            fact->flags = (uint8_t)((fact->flags & (F_USED | F_WHITE | F_FINAL | F_LOOSE)) |
                                    (m << BOUND_SHIFT));
        }
        fact->gen = c->gen;
        add_work(fact, work);
        if (open) { /* its numbers are over: the fact holds the effort */
            add_work(fact, open->work);
            open->flags = 0;
            c->used--;
        }
        return;
    }
    tt_entry *e = open;
    if (!e) {
        e = tt_slot(c, key);
        tt_fill(c, e, p, depth);
    }
    e->flags = (uint8_t)(F_USED | (p->stm ? F_WHITE : 0) | F_FINAL | lf | (f << BOUND_SHIFT));
    e->gen = c->gen;
    e->pn = l;
    e->dn = 0;
    add_work(e, work);
}

/* A new generation. Entries are kept (THE TABLE ACROSS QUERIES); when
 * the counter wraps, open entries and the path-dependent table go, so
 * that no stale generation ever looks current. */
static void
new_generation(dfpn_ctx *c)
{
    if (++c->gen != 0)
        return;
    size_t n = c->nbuckets * BUCKET, kept = 0;
    for (size_t i = 0; i < n; i++) {
        tt_entry *e = &c->tt[i];
        if (!(e->flags & F_FINAL))
            e->flags = 0;
        else {
            e->gen = 1;
            kept++;
        }
    }
    c->used = kept;
    memset(c->pt, 0, c->npt * sizeof *c->pt);
    memset(c->susp, 0, sizeof c->susp);
    c->gen = 2;
}

/* ---- the path-dependent table ------------------------------------------ */

/* Nonzero when q is on the line above ply (plies seg..ply-1); *at is the
 * nearest such ply. */
static int
on_line(const dfpn_ctx *c, int seg, int ply, const eng_pos *q, int *at)
{
    for (int a = ply - 1; a >= seg; a--)
        if (same_pos(&c->path[a], q)) {
            *at = a;
            return 1;
        }
    return 0;
}

/*
 * pt_get - a path-dependent result for p at ply that holds on the current
 * line, whose reversible segment starts at seg; *rep_up is recomputed for
 * this line.
 */
static const pt_entry *
pt_get(dfpn_ctx *c, const eng_pos *p, uint64_t key, int seg, int ply, int *rep_up)
{
    if (!c->pt_puts)
        return NULL;
    const pt_entry *b = &c->pt[(key & ((c->npt - 1) & ~(size_t)(PT_WAYS - 1)))];
    for (int i = 0; i < PT_WAYS; i++) {
        const pt_entry *e = &b[i];
        if (!e->used || e->gen != c->gen || !same_pos(&e->pos, p))
            continue;
        int ok = 1, up = 0, at;
        for (int k = 0; k < e->d.n && ok; k++) {
            ok = on_line(c, seg, ply, &e->d.p[k], &at);
            if (ok && ply - at > up)
                up = ply - at;
        }
        if (ok) {
            *rep_up = up;
            return e;
        }
    }
    return NULL;
}

static void
pt_put(dfpn_ctx *c, const eng_pos *p, uint64_t key, int att_won, const deps *d, int len)
{
    pt_entry *b = &c->pt[(key & ((c->npt - 1) & ~(size_t)(PT_WAYS - 1)))];
    pt_entry *e = &b[0];
    c->pt_puts++;
    for (int i = 0; i < PT_WAYS; i++) /* a free way, else the first */
        if (!b[i].used || b[i].gen != c->gen) {
            e = &b[i];
            break;
        }
    if (e == &b[0] && b[0].used && b[0].gen == c->gen) { /* all taken: shift out the oldest */
        memmove(&b[0], &b[1], (PT_WAYS - 1) * sizeof *b);
        e = &b[PT_WAYS - 1];
    }
    e->pos = *p;
    e->d = *d;
    e->used = 1;
    e->gen = c->gen;
    e->attacker_won = (uint8_t)att_won;
    e->len = (uint16_t)len;
}

/* ---- budget and progress ---------------------------------------------- */

static void
budget(dfpn_ctx *c)
{
    if (c->o->stop && *c->o->stop)
        c->abort = 1;
    if (c->node_limit && c->nodes >= c->node_limit)
        c->abort = 1;
    if ((c->nodes & 1023) == 0) {
        double t = now();
        if (c->deadline > 0 && t >= c->deadline)
            c->abort = 1;
        if (c->o->progress && t >= c->next_progress) {
            dfpn_progress pr = {c->nodes,   c->expanded,
                                t - c->t0,  c->root_pn,
                                c->root_dn, (double)c->used / (double)(c->nbuckets * BUCKET),
                                c->gc_runs};
            c->o->progress(&pr, c->o->progress_arg);
            c->next_progress = t + 0.5;
        }
    }
}

/* ---- valuing a child ------------------------------------------------- */

/* A child valued by a fact of the table: a path-independent truth. */
static void
from_tt(child *ch, const look *l)
{
    set_success(ch, l->att_won);
    ch->len = l->len;
    ch->rep_up = 0;
    ch->d.n = 0;
    ch->fixed = 1;
    ch->leaf = LEAF_TT;
}

/* A child valued by a path-dependent result that holds on this line. */
static void
from_pt(child *ch, const pt_entry *q, int rep_up)
{
    set_success(ch, q->attacker_won);
    ch->rep_up = (int16_t)rep_up;
    ch->d = q->d;
    ch->len = q->len;
    ch->fixed = 1;
    ch->leaf = LEAF_PT;
}

/* The value v (EGDB_WIN/LOSS/DRAW for the side to move of p) as a
 * success for the attacker (1) or the defender (0). */
static int
attacker_succeeds(const dfpn_ctx *c, const eng_pos *p, int v)
{
    int o = egdb_outcome(v);
    if (p->stm != c->attacker)
        o = -o;
    return c->goal == DFPN_WIN ? o == ENG_WIN : o >= ENG_DRAW;
}

/*
 * value_child - what is known of ch (at ply `ply`, its ancestors in
 * c->path[0..ply-1]) without expanding it. The order matters:
 *   1. a final table entry: a path-independent truth, whatever the line;
 *   2. a repetition on the line: the safety side's success, resting on
 *      the repeated position (rep_up plies above);
 *   3. no legal move, 4. the databases (quiet positions only), 5. the
 *      store: path-independent truths;
 *   6. a path-dependent result for this very line;
 *   7. the table's numbers, or initial numbers from mobility.
 */
static void
value_child(dfpn_ctx *c, int ply, child *ch)
{
    const eng_pos *p = &ch->pos;
    ch->fixed = 1;
    ch->rep_up = 0;
    ch->d.n = 0;
    ch->len = 0;
    ch->leaf = LEAF_NONE;
    ch->min_depth = UINT16_MAX;
    c->nodes++;
    budget(c);

    look l;
    tt_find(c, p, ch->key, &l);
    if (l.fin && !c->strict) {
        from_tt(ch, &l);
        return;
    }
    /* 2. repetition: only positions since the last irreversible move can
     * recur, and only those with the same side to move (two plies apart).
     * While a proof is written it is checked before the table, so that a
     * win written through a new search never comes back to the walk's
     * line. */
    if (!ch->irrev)
        for (int a = ply - 2; a >= c->seg[ply - 1]; a -= 2)
            if (same_pos(&c->path[a], p)) {
                set_success(ch, c->safety == c->attacker);
                ch->rep_up = (int16_t)(ply - a);
                ch->d.n = 1;
                ch->d.p[0] = *p;
                ch->leaf = LEAF_REP;
                return;
            }
    if (l.fin) {
        from_tt(ch, &l);
        return;
    }
    uint64_t nm = eng_count_moves(p, ENG_DUPS_MERGE);
    if (nm == 0) { /* 3. the side to move has lost */
        set_success(ch, p->stm != c->attacker);
        ch->leaf = LEAF_END;
        return;
    }
    const dfpn_opts *o = c->o;
    if (o->db && npieces(p) <= o->db_pieces) { /* 4. */
        int v = egdb_probe_quiet(o->db, p);
        if (v >= 0) {
            c->probes++;
            set_success(ch, attacker_succeeds(c, p, v));
            ch->leaf = LEAF_DB;
            return;
        }
        if (v != EGDB_ECAPTURE && v != EGDB_ENOTFOUND) {
            char fen[ENG_FEN_MAX], m[200];
            eng_format_fen(p, fen, sizeof fen);
            snprintf(m, sizeof m, "database probe of %s failed: %s", fen, egdb_strerror(v));
            set_error(c, DFPN_EDB, m);
            ch->fixed = 0, ch->pn = ch->dn = SAT;
            return;
        }
    }
    if (o->store) { /* 5. */
        pst_record r;
        int rc = pst_get(o->store, p, &r);
        if (rc == 0) {
            eng_bound b = p->stm == c->attacker ? r.bound : eng_bound_neg(r.bound);
            int lo = eng_bound_lo(b), hi = eng_bound_hi(b);
            int win = c->goal == DFPN_WIN;
            if (win ? lo == ENG_WIN : lo >= ENG_DRAW) {
                set_success(ch, 1);
            } else if (win ? hi <= ENG_DRAW : hi == ENG_LOSS) {
                set_success(ch, 0);
            } else {
                rc = PST_ENOTFOUND; /* says nothing about this goal */
            }
            if (rc == 0) {
                c->store_hits++;
                ch->leaf = LEAF_STORE;
                tt_put(c, p, ch->key, ch->pn, ch->dn, 0, 0, ply, 0);
                return;
            }
        }
        if (rc != PST_ENOTFOUND) {
            char m[200];
            snprintf(m, sizeof m, "proven-node store: %s", pst_strerror(rc));
            set_error(c, DFPN_ESTORE, m);
            ch->fixed = 0, ch->pn = ch->dn = SAT;
            return;
        }
    }
    int up; /* 6. */
    const pt_entry *q = pt_get(c, p, ch->key, ch->irrev ? ply : c->seg[ply - 1], ply, &up);
    if (q) {
        from_pt(ch, q, up);
        return;
    }
    ch->fixed = 0;         /* 7. */
    if (ply > c->maxply) { /* past the depth limit: open, and blocked */
        ch->pn = ch->dn = DEEP;
        ch->leaf = LEAF_CUT;
        return;
    }
    if (l.open) {
        ch->pn = l.open->pn, ch->dn = l.open->dn;
        ch->min_depth = l.open->min_depth;
    } else if (p->stm == c->attacker) {
        ch->pn = 1, ch->dn = (uint32_t)nm;
    } else {
        ch->pn = (uint32_t)nm, ch->dn = 1;
    }
}

/* Re-reads a child that is not fixed: its subtree (or a transposition)
 * may have changed what the tables say. */
static void
refresh_child(dfpn_ctx *c, int ply, child *ch)
{
    if (ch->fixed)
        return;
    look l;
    tt_find(c, &ch->pos, ch->key, &l);
    if (l.fin) {
        from_tt(ch, &l);
        return;
    }
    int up;
    const pt_entry *q = pt_get(c, &ch->pos, ch->key, ch->irrev ? ply : c->seg[ply - 1], ply, &up);
    if (q) {
        from_pt(ch, q, up);
        return;
    }
    if (l.open && ch->leaf != LEAF_CUT) {
        ch->pn = l.open->pn, ch->dn = l.open->dn;
        ch->min_depth = l.open->min_depth;
    }
}

/* Generates the children of path[ply] into the arena and values them.
 * RETURN the number of children, or -1 when the line is too deep. */
static int
expand(dfpn_ctx *c, int ply, child **out)
{
    const eng_pos *p = &c->path[ply];
    int n = eng_generate(p, &c->ml, ENG_DUPS_MERGE);
    if (n < 0 || ply + 1 > DFPN_MAXPLY || c->top + (size_t)n > ARENA_CHILDREN)
        return -1;
    child *ch = &c->arena[c->top];
    c->top += (size_t)n;
    c->expanded++;
    uint32_t men = p->stm ? p->wm : p->bm;
    for (int i = 0; i < n; i++) {
        child *x = &ch[i];
        x->mv = c->ml.m[i];
        eng_make(p, &x->mv, &x->pos);
        x->irrev = x->mv.captured != 0 || ((men >> x->mv.from) & 1);
        x->key = eng_key(&x->pos);
        /* the table is far larger than the caches: fetch every child's
         * bucket (two lines) before any is read, so the misses overlap */
        const char *b = (const char *)&c->tt[(x->key & (c->nbuckets - 1)) * BUCKET];
        __builtin_prefetch(b);
        __builtin_prefetch(b + 64);
    }
    for (int i = 0; i < n; i++)
        value_child(c, ply + 1, &ch[i]);
    *out = ch;
    return n;
}

/* The child at i becomes path[ply+1]. */
static void
descend(dfpn_ctx *c, int ply, const child *x)
{
    c->path[ply + 1] = x->pos;
    c->seg[ply + 1] = x->irrev ? ply + 1 : c->seg[ply];
}

/* ---- the search ------------------------------------------------------- */

/* The child threshold of the 1+epsilon trick: search the best child until
 * its number passes the second best's by the factor 1+epsilon. */
static uint32_t
grow(const dfpn_ctx *c, uint32_t second)
{
    if (second >= SAT)
        return SAT;
    double g = ceil((double)second * (1.0 + c->eps));
    uint32_t a = g >= (double)SAT ? SAT : (uint32_t)g;
    return a > second + 1 ? a : second + 1;
}

/* The node's numbers from its children; *best and the second best's
 * number (of the kind the node minimises). */
static void
combine(const dfpn_ctx *c, int or_node, const child *ch, int n, uint32_t *pn, uint32_t *dn,
        int *best, uint32_t *second)
{
    uint32_t mn = DFPN_INF, mn2 = DFPN_INF, sum = 0;
    int b = 0;
    for (int i = 0; i < n; i++) {
        uint32_t a = or_node ? ch[i].pn : ch[i].dn; /* minimised */
        uint32_t s = or_node ? ch[i].dn : ch[i].pn; /* summed */
        sum = sat_add(sum, s);
        /* ties go to the child with the smaller other number */
        if (a < mn || (a == mn && (or_node ? ch[i].dn < ch[b].dn : ch[i].pn < ch[b].pn))) {
            mn2 = mn;
            mn = a;
            b = i;
        } else if (a < mn2) {
            mn2 = a;
        }
    }
    (void)c;
    *best = b;
    *second = mn2;
    *pn = or_node ? mn : sum;
    *dn = or_node ? sum : mn;
}

static void
deps_union(deps *a, const deps *b)
{
    if (a->n == DEP_OVER)
        return;
    if (b->n == DEP_OVER) {
        a->n = DEP_OVER;
        return;
    }
    for (int k = 0; k < b->n; k++) {
        int have = 0;
        for (int j = 0; j < a->n && !have; j++)
            have = same_pos(&a->p[j], &b->p[k]);
        if (have)
            continue;
        if (a->n == NDEP) {
            a->n = DEP_OVER;
            return;
        }
        a->p[a->n++] = b->p[k];
    }
}

/*
 * What a final node rests on. The side that succeeded either chose one
 * child (it moves here) or needed every child. For the safety side the
 * dependency on repetitions is carried up: rep_up one less per ply, and
 * the set of positions it rests on, less the node itself (a repetition of
 * the node closes inside its own proof). For the reach side the proof
 * length (one more per ply).
 */
static void
final_info(const dfpn_ctx *c, int or_node, const child *ch, int n, int att_won, const eng_pos *self,
           int *rep_up, deps *d, int *len)
{
    int chooser = att_won ? or_node : !or_node;
    int safety = (att_won ? c->attacker : !c->attacker) == c->safety;
    int r = chooser ? INT16_MAX : INT16_MIN, l = chooser ? INT16_MAX : 0;
    int pick = -1;
    d->n = 0;
    for (int i = 0; i < n; i++) {
        if (!is_final(ch[i].pn, ch[i].dn) || attacker_won(&ch[i]) != att_won)
            continue;
        if (chooser) {
            if (safety ? ch[i].rep_up < r : ch[i].len < l) {
                r = ch[i].rep_up;
                l = ch[i].len;
                pick = i;
            }
        } else {
            if (ch[i].rep_up > r)
                r = ch[i].rep_up;
            if (ch[i].len > l)
                l = ch[i].len;
            if (safety)
                deps_union(d, &ch[i].d);
        }
    }
    if (chooser && safety && pick >= 0)
        *d = ch[pick].d;
    if (d->n != DEP_OVER) /* the node itself closes its own repetitions */
        for (int k = 0; k < d->n; k++)
            if (same_pos(&d->p[k], self)) {
                d->p[k--] = d->p[--d->n];
            }
    *rep_up = safety ? r - 1 : 0;
    if (*rep_up <= 0)
        d->n = 0;
    *len = l >= UINT16_MAX - 1 ? UINT16_MAX - 1 : l + 1;
}

/*
 * mid - Nagai's multiple iterative deepening at path[ply]: search below
 * it until its proof number reaches thpn or its disproof number thdn, or
 * it is solved, or the budget runs out; then record what it learnt.
 * The node's numbers, and when it is solved what it rests on, are also
 * written to *self (its entry in the parent's list of children): a
 * path-dependent result resting on more positions than a table entry
 * names is kept nowhere else.
 * PRECONDITION: path[ply] is not a leaf (it has moves and is not valued
 * by the databases, the store or a repetition).
 */
static void
mid(dfpn_ctx *c, int ply, uint32_t thpn, uint32_t thdn, int inc, child *self)
{
    const eng_pos *p = &c->path[ply];
    uint64_t key = eng_key(p);
    uint64_t exp0 = c->expanded;
    size_t top0 = c->top;
    child *ch;
    int n = expand(c, ply, &ch);
    if (n <= 0) { /* too deep: leave it open, and make it unattractive to
                     both sides without saturating the sums above it */
        c->top = top0;
        tt_put(c, p, key, DEEP, DEEP, 0, 1, ply, 0);
        self->pn = self->dn = DEEP;
        return;
    }
    int or_node = p->stm == c->attacker;
    uint32_t pn, dn, second;
    int best;
    /* TCA (Kishimoto 2010): a child first seen at a shallower depth may be
     * an ancestor's transposition, whose numbers would stop this node
     * from making progress. Its children then get thresholds above their
     * current numbers, so every call expands something. */
    for (int i = 0; i < n && !inc; i++)
        if (!ch[i].fixed && ch[i].min_depth <= ply)
            inc = 1;
    combine(c, or_node, ch, n, &pn, &dn, &best, &second);
    if (inc && !is_final(pn, dn)) {
        if (thpn <= pn)
            thpn = pn + 1 > SAT ? SAT : pn + 1;
        if (thdn <= dn)
            thdn = dn + 1 > SAT ? SAT : dn + 1;
    }
    for (;;) {
        combine(c, or_node, ch, n, &pn, &dn, &best, &second);
        if (ply == 0)
            c->root_pn = pn, c->root_dn = dn;
        if (is_final(pn, dn) || pn >= thpn || dn >= thdn || c->abort)
            break;
        child *x = &ch[best];
        if (x->pn >= DEEP || x->dn >= DEEP)
            break; /* only lines past the depth limit are left here */
        uint32_t cpn, cdn, g = grow(c, second);
        if (or_node) {
            cpn = g < thpn ? g : thpn;
            cdn = thdn >= DFPN_INF ? SAT : thdn - dn + x->dn;
        } else {
            cdn = g < thdn ? g : thdn;
            cpn = thpn >= DFPN_INF ? SAT : thpn - pn + x->pn;
        }
        if (cpn > SAT)
            cpn = SAT;
        if (cdn > SAT)
            cdn = SAT;
        if (inc) {
            if (cpn <= x->pn)
                cpn = x->pn + 1 > SAT ? SAT : x->pn + 1;
            if (cdn <= x->dn)
                cdn = x->dn + 1 > SAT ? SAT : x->dn + 1;
        }
        descend(c, ply, x);
        mid(c, ply + 1, cpn, cdn, inc, x);
        for (int i = 0; i < n; i++) /* transpositions may have solved others */
            refresh_child(c, ply + 1, &ch[i]);
    }
    uint64_t work = c->expanded - exp0;
    self->pn = pn, self->dn = dn;
    if (is_final(pn, dn)) {
        int rep_up, len;
        deps d;
        final_info(c, or_node, ch, n, pn == 0, p, &rep_up, &d, &len);
        self->fixed = 1;
        self->rep_up = (int16_t)(rep_up > 0 ? rep_up : 0);
        self->d = d;
        self->len = (uint16_t)len;
        /* a safety result of an optimistic search may rest on its line:
         * a loose fact (THE TABLE ACROSS QUERIES) */
        int loose = c->loose && (pn == 0 ? c->attacker : !c->attacker) == c->safety;
        if (rep_up <= 0 || c->loose)
            tt_put(c, p, key, pn, dn, (uint16_t)len, work, ply, loose);
        else if (d.n != DEP_OVER) /* lines holding d only */
            pt_put(c, p, key, pn == 0, &d, len);
    } else {
        tt_put(c, p, key, pn, dn, 0, work, ply, 0);
    }
    c->top = top0;
}

/* ---- writing a proof --------------------------------------------------- */

/*
 * WRITING A PROOF (prover.h tells what is written and why it is enough)
 * A depth-first walk from the root over the side w_side's proof, with a
 * set of the positions taken so far. Where w_side moves, one child that
 * the tables say succeeds is taken (for a win: the shortest, never one
 * still on the walk, so that the written win proof is acyclic); where the
 * other side moves, every child. A child the tables no longer know
 * (evicted, or a path-dependent result of another line) is searched
 * again from this line. Leaves are exactly the checker's leaves: no
 * legal move, a position the databases cover, a position whose stored
 * record already implies the goal.
 */

static uint64_t
pos_hash(const eng_pos *p)
{
    uint64_t h = ((uint64_t)p->bm << 32 | p->wm) * 0x9E3779B97F4A7C15ull;
    h ^= ((uint64_t)p->bk << 32 | p->wk) + (uint64_t)p->stm;
    h *= 0xC2B2AE3D27D4EB4Full;
    return h ^ (h >> 29);
}

static int
log_add(dfpn_ctx *c, const eng_pos *p)
{
    if (c->nlog == c->log_cap) {
        size_t cap = c->log_cap ? c->log_cap * 2 : 4096;
        eng_pos *l = realloc(c->log, cap * sizeof *l);
        if (!l)
            return -1;
        c->log = l;
        c->log_cap = cap;
    }
    c->log[c->nlog++] = *p;
    return 0;
}

static pset_entry *
pset_find(dfpn_ctx *c, const eng_pos *p, int add)
{
    if (add && (c->nset + 1) * 2 > c->set_cap) {
        size_t cap = c->set_cap ? c->set_cap * 2 : 4096;
        pset_entry *s = calloc(cap, sizeof *s);
        if (!s)
            return NULL;
        for (size_t i = 0; i < c->set_cap; i++)
            if (c->set[i].used) {
                size_t j = pos_hash(&c->set[i].pos) & (cap - 1);
                while (s[j].used)
                    j = (j + 1) & (cap - 1);
                s[j] = c->set[i];
            }
        free(c->set);
        c->set = s;
        c->set_cap = cap;
    }
    if (!c->set_cap)
        return NULL;
    size_t j = pos_hash(p) & (c->set_cap - 1);
    while (c->set[j].used) {
        if (same_pos(&c->set[j].pos, p)) {
            pset_entry *q = &c->set[j];
            if (q->state != 3) /* 3: rolled back, as if absent */
                return q;
            if (!add)
                return NULL;
            q->state = 0;
            q->item = UINT32_MAX;
            q->len = 0;
            return log_add(c, p) == 0 ? q : NULL;
        }
        j = (j + 1) & (c->set_cap - 1);
    }
    if (!add)
        return NULL;
    if (log_add(c, p) != 0)
        return NULL;
    c->set[j].used = 1;
    c->set[j].pos = *p;
    c->set[j].state = 0;
    c->set[j].item = UINT32_MAX;
    c->set[j].len = 0;
    c->nset++;
    return &c->set[j];
}

/* What the walk may take as a leaf: 1 a leaf that satisfies the goal, 0
 * not a leaf, -1 a leaf that contradicts the goal (a bug: reported). */
static int
walk_leaf(dfpn_ctx *c, const eng_pos *p)
{
    int wr = c->w_reach;
    if (eng_count_moves(p, ENG_DUPS_MERGE) == 0) /* lost for the side to move */
        return (p->stm != c->w_side) ? 1 : -1;
    const dfpn_opts *o = c->o;
    if (o->db && npieces(p) <= egdb_max_pieces(o->db)) {
        int v = egdb_probe(o->db, p);
        if (v == EGDB_ENOTFOUND)
            return 0;
        if (v < 0)
            return -2;
        int x = egdb_outcome(v);
        if (p->stm != c->w_side)
            x = -x;
        return (wr ? x == ENG_WIN : x >= ENG_DRAW) ? 1 : -1;
    }
    if (o->store) {
        pst_record r;
        if (pst_get(o->store, p, &r) == 0) {
            eng_bound b = p->stm == c->w_side ? r.bound : eng_bound_neg(r.bound);
            int lo = eng_bound_lo(b);
            int has = p->stm != c->w_side ||
                      (wr ? r.win.from != PST_NOMOVE
                          : (r.draw.from != PST_NOMOVE || r.win.from != PST_NOMOVE));
            if ((wr ? lo == ENG_WIN : lo >= ENG_DRAW) && has)
                return 1;
        }
    }
    return 0;
}

/* Does the child succeed for w_side in the tables (after value_child)? */
static int
child_wins(const dfpn_ctx *c, const child *x)
{
    if (!is_final(x->pn, x->dn))
        return 0;
    return attacker_won(x) == (c->w_side == c->attacker);
}

static int
add_item(dfpn_ctx *c, const eng_pos *p, pset_entry *se)
{
    if (c->nitems == c->items_cap) {
        size_t cap = c->items_cap ? c->items_cap * 2 : 1024;
        pst_item *it = realloc(c->items, cap * sizeof *it);
        if (!it)
            return -1;
        c->items = it;
        c->items_cap = cap;
    }
    pst_item *it = &c->items[c->nitems];
    memset(it, 0, sizeof *it);
    it->pos = *p;
    int w_moves = p->stm == c->w_side;
    it->rec.bound = c->w_reach ? (w_moves ? ENG_WW : ENG_LL) : (w_moves ? ENG_DW : ENG_LD);
    it->rec.win.from = PST_NOMOVE;
    it->rec.draw.from = PST_NOMOVE;
    se->item = (uint32_t)c->nitems++;
    return 0;
}

static void
walk_fail(dfpn_ctx *c, const eng_pos *p, const char *why)
{
    char fen[ENG_FEN_MAX], m[256];
    eng_format_fen(p, fen, sizeof fen);
    snprintf(m, sizeof m, "at %s: %s", fen, why);
    set_error(c, DFPN_EPROOF, m);
}

/* Searches path[ply] again (its line is the walk's) until it is solved;
 * *self gets the result. */
static void
research(dfpn_ctx *c, int ply, child *self)
{
    c->researched++;
    for (int k = 0; k < 64 && !c->abort && !is_final(self->pn, self->dn); k++)
        mid(c, ply, DEEP, DEEP, 0, self);
}

/* A failure to close the proof below a choice: remembered, so that the
 * walk can try another move, and reported if none is left. */
static int
walk_stuck(dfpn_ctx *c, const eng_pos *p, const char *why)
{
    char fen[ENG_FEN_MAX];
    eng_format_fen(p, fen, sizeof fen);
    snprintf(c->stuck, sizeof c->stuck, "at %s: %s", fen, why);
    return 1;
}

/* Forgets every position the walk took since log entry `to`. */
static void
rollback(dfpn_ctx *c, size_t to, size_t items)
{
    while (c->nlog > to) {
        pset_entry *q = pset_find(c, &c->log[--c->nlog], 0);
        if (q)
            q->state = 3;
    }
    c->nitems = items;
}

/*
 * walk - adds path[ply] (not a leaf) and its proof below to the set.
 * Where the proving side moves, the candidate moves are tried in order
 * (a leaf, a position already taken, then by the tables' proof length or
 * repetitions); a candidate whose proof cannot be closed (a win that
 * would come back to a position on the walk, a reply the tables cannot
 * prove again) is rolled back and the next tried.
 * RANK 3: after the position is searched again (the second attempt), the
 * children no table knows come last, each searched by itself on this
 * line, the proving side's smallest number first. The new search may have
 * proved the position without leaving any child known: a result resting
 * on more repetitions of the line than a stored result may name (NDEP,
 * DEP_OVER) is handed up and never stored.
 * RETURN 0; 1 when the proof below cannot be closed (c->stuck says where);
 * -1 with c->error set (a database or memory failure).
 */
static int
walk(dfpn_ctx *c, int ply)
{
    const eng_pos p = c->path[ply];
    if (c->abort) /* the walk's budget, or a stop */
        return walk_stuck(c, &p, "the time for writing the proof ran out");
    pset_entry *se = pset_find(c, &p, 1);
    if (!se || add_item(c, &p, se) != 0)
        return set_error(c, DFPN_ENOMEM, "out of memory writing the proof"), -1;
    se->state = 1;
    uint32_t item = se->item;
    size_t top0 = c->top;
    int w_moves = p.stm == c->w_side;
    int maxlen = 0, closed = 0;
    for (int attempt = 0; attempt < 2 && !closed; attempt++) {
        if (attempt == 1) { /* search this position again on this line */
            child self = {.pn = 1, .dn = 1};
            research(c, ply, &self);
            if (c->error)
                return -1;
        }
        child *ch;
        c->top = top0;
        int n = expand(c, ply, &ch);
        if (c->error)
            return -1;
        if (n <= 0)
            return walk_stuck(c, &p, "the line is too deep to write");
        if (w_moves) {
            int rank[ENG_MAX_MOVES], len[ENG_MAX_MOVES];
            for (int i = 0; i < n; i++) {
                int lf = walk_leaf(c, &ch[i].pos);
                if (lf == -2)
                    return walk_fail(c, &ch[i].pos, "database probe failed"), -1;
                pset_entry *q = pset_find(c, &ch[i].pos, 0);
                rank[i] = 4, len[i] = INT32_MAX;
                if (lf == 1)
                    rank[i] = 0, len[i] = 0;
                else if (lf == 0 && q && (q->state == 2 || !c->w_reach))
                    rank[i] = 1, len[i] = q->len;
                else if (lf == 0 && !q && child_wins(c, &ch[i]))
                    rank[i] = 2, len[i] = c->w_reach ? ch[i].len : ch[i].rep_up;
                else if (lf == 0 && !q && !ch[i].fixed && attempt == 1)
                    rank[i] = 3, len[i] = (int)(c->w_side == c->attacker ? ch[i].pn : ch[i].dn);
            }
            for (;;) {
                int pick = -1;
                for (int i = 0; i < n; i++)
                    if (rank[i] < 4 && (pick < 0 || rank[i] < rank[pick] ||
                                        (rank[i] == rank[pick] && len[i] < len[pick])))
                        pick = i;
                if (pick < 0)
                    break;
                child *x = &ch[pick];
                if (rank[pick] < 2) {
                    maxlen = len[pick];
                } else {
                    size_t log0 = c->nlog, items0 = c->nitems;
                    descend(c, ply, x);
                    if (rank[pick] == 3) { /* RANK 3 below */
                        research(c, ply + 1, x);
                        if (c->error)
                            return -1;
                        if (!child_wins(c, x)) {
                            rank[pick] = 4;
                            continue;
                        }
                    }
                    int r = walk(c, ply + 1);
                    if (r < 0)
                        return -1;
                    if (r > 0) { /* try the next candidate */
                        rollback(c, log0, items0);
                        rank[pick] = 4;
                        continue;
                    }
                    pset_entry *q = pset_find(c, &x->pos, 0);
                    maxlen = q ? q->len : 0;
                }
                pst_move mv = pst_move_of(&x->mv);
                if (c->w_reach)
                    c->items[item].rec.win = mv;
                else
                    c->items[item].rec.draw = mv;
                closed = 1;
                break;
            }
            if (!closed && attempt == 1)
                return walk_stuck(c, &p, "no move keeps the proof, even after a new search");
        } else {
            closed = 1;
            for (int i = 0; i < n && closed; i++) {
                child *x = &ch[i];
                int lf = walk_leaf(c, &x->pos);
                if (lf == -2)
                    return walk_fail(c, &x->pos, "database probe failed"), -1;
                if (lf == -1) /* a reply the proof cannot survive */
                    return walk_stuck(c, &x->pos, "a reply reaches a losing leaf");
                if (lf == 1)
                    continue;
                pset_entry *q = pset_find(c, &x->pos, 0);
                if (q) {
                    if (c->w_reach && q->state != 2) /* a win may not cycle */
                        return walk_stuck(c, &x->pos, "a reply comes back to the walk's line");
                    if (q->len > maxlen)
                        maxlen = q->len;
                    continue;
                }
                descend(c, ply, x);
                if (!child_wins(c, x)) {
                    research(c, ply + 1, x);
                    if (c->error)
                        return -1;
                    if (!child_wins(c, x)) {
                        closed = 0;
                        break;
                    }
                }
                int r = walk(c, ply + 1);
                if (r != 0)
                    return r; /* the choice above tries another move */
                q = pset_find(c, &x->pos, 0);
                if (q && q->len > maxlen)
                    maxlen = q->len;
            }
            if (!closed && attempt == 1)
                return walk_stuck(c, &p, "a reply escapes the proof, even after a new search");
        }
    }
    c->top = top0;
    se = pset_find(c, &p, 0); /* the set may have moved */
    se->state = 2;
    se->len = (uint16_t)(maxlen + 1 > UINT16_MAX - 1 ? UINT16_MAX - 1 : maxlen + 1);
    look l;
    tt_find(c, &p, eng_key(&p), &l);
    c->items[item].rec.effort = l.fin ? l.fin->work : l.open ? l.open->work : 0;
    c->items[item].rec.length = c->w_reach ? se->len : 0;
    return 0;
}

/* The main line of the written proof, from the set. */
static void
main_line(dfpn_ctx *c, dfpn_result *out)
{
    eng_pos p = c->path[0];
    out->pvlen = 0;
    for (int k = 0; k < 128; k++) {
        pset_entry *se = pset_find(c, &p, 0);
        if (!se || se->item == UINT32_MAX)
            break;
        const pst_record *r = &c->items[se->item].rec;
        eng_move m;
        if (p.stm == c->w_side) {
            const pst_move *pm = c->w_reach ? &r->win : &r->draw;
            if (pst_move_find(&p, pm, &m) != 0)
                break;
        } else { /* the reply with the longest proof below it */
            eng_movelist l;
            int n = eng_generate(&p, &l, ENG_DUPS_MERGE), bi = -1, bl = -1;
            for (int i = 0; i < n; i++) {
                eng_pos q;
                eng_make(&p, &l.m[i], &q);
                pset_entry *x = pset_find(c, &q, 0);
                if (x && x->len > bl)
                    bl = x->len, bi = i;
            }
            if (bi < 0) /* every reply ends at once: show the first */
                bi = 0;
            if (n <= 0)
                break;
            m = l.m[bi];
        }
        out->pv[out->pvlen++] = m;
        eng_make(&p, &m, &p);
    }
}

static int
write_proof(dfpn_ctx *c, int attacker_won_root, int put, dfpn_result *out)
{
    c->w_side = attacker_won_root ? c->attacker : !c->attacker;
    c->w_reach = c->w_side != c->safety;
    c->nset = 0;
    if (c->set)
        memset(c->set, 0, c->set_cap * sizeof *c->set);
    c->nitems = 0;
    c->nlog = 0;
    c->top = 0;
    c->researched = 0;
    c->strict = 1;
    /* The walk may search again: it gets a budget of its own, half the
     * query's time (at least 5 s), or a minute without a time limit. */
    double tl = c->o->time_limit;
    c->deadline = now() + (tl > 0 ? (tl / 2 > 5 ? tl / 2 : 5) : 60);
    c->node_limit = 0;
    c->abort = 0;
    /* new searches on the walk's lines may go to the full depth; the open
     * numbers of the last round saw its cut, so they are forgotten */
    c->maxply = DFPN_MAXPLY;
    c->round++;
    int lf = walk_leaf(c, &c->path[0]);
    if (lf == 1)
        return 0; /* the root is a leaf: nothing to write */
    if (lf < 0) {
        walk_fail(c, &c->path[0], "the root's leaf value contradicts the answer");
        return c->error;
    }
    int wr = walk(c, 0);
    c->strict = 0;
    if (wr > 0)
        set_error(c, DFPN_EPROOF, c->stuck);
    if (wr != 0)
        return c->error ? c->error : DFPN_EPROOF;
    out->researched = c->researched;
    pset_entry *root = pset_find(c, &c->path[0], 0);
    out->proof_length = c->w_reach && root ? root->len : -1;
    main_line(c, out);
    if (c->o->store && put) {
        char e[256];
        int rc = pst_put_many(c->o->store, c->items, c->nitems, e, sizeof e);
        if (rc != 0) {
            char m[300];
            snprintf(m, sizeof m, "writing the proof: %s", e);
            set_error(c, DFPN_ESTORE, m);
            return DFPN_ESTORE;
        }
        out->proof_records = c->nitems;
    }
    return 0;
}

/* ---- the interface ----------------------------------------------------- */

int
dfpn_new(size_t tt_bytes, dfpn_ctx **out)
{
    dfpn_ctx *c = calloc(1, sizeof *c);
    if (!c)
        return DFPN_ENOMEM;
    size_t nb = 1;
    while (nb * 2 * BUCKET * sizeof(tt_entry) <= (tt_bytes < (1u << 20) ? (1u << 20) : tt_bytes))
        nb *= 2;
    c->nbuckets = nb;
    c->npt = PT_MIN;
    while (c->npt * sizeof(pt_entry) * 8 < nb * BUCKET * sizeof(tt_entry))
        c->npt *= 2;
    c->tt = calloc(nb * BUCKET, sizeof *c->tt);
    c->pt = calloc(c->npt, sizeof *c->pt);
    c->arena = malloc(ARENA_CHILDREN * sizeof *c->arena);
    if (!c->tt || !c->pt || !c->arena) {
        dfpn_free(c);
        return DFPN_ENOMEM;
    }
    *out = c;
    return 0;
}

void
dfpn_free(dfpn_ctx *c)
{
    if (!c)
        return;
    free(c->tt);
    free(c->pt);
    free(c->arena);
    free(c->set);
    free(c->items);
    free(c->log);
    free(c);
}

const char *
dfpn_strerror(int code)
{
    switch (code) {
    case DFPN_OK:
        return "success";
    case DFPN_ENOMEM:
        return "out of memory";
    case DFPN_EINVAL:
        return "invalid position or goal";
    case DFPN_EDB:
        return "endgame database probe failed";
    case DFPN_ESTORE:
        return "proven-node store failed";
    case DFPN_EPROOF:
        return "the proof could not be written whole";
    default:
        return "unknown error";
    }
}

/* The remembered unanswered query this one repeats, if any: it goes on
 * at the round it stopped in, its open entries live again (THE TABLE
 * ACROSS QUERIES). */
static void
resume(dfpn_ctx *c, const eng_pos *root)
{
    c->resumed = 0;
    for (int i = 0; i < NSUSP; i++) {
        susp *s = &c->susp[i];
        if (s->used && same_pos(&s->root, root) && s->attacker == c->attacker &&
            s->goal == c->goal && s->loose == c->loose) {
            c->resumed = 1;
            c->rgen = s->gen;
            c->rround = s->round;
            c->round = s->round;
            c->maxply = s->maxply;
            s->used = 0;
            return;
        }
    }
}

/* Remembers this unanswered query in place of the oldest one. */
static void
suspend(dfpn_ctx *c, const eng_pos *root)
{
    susp *v = &c->susp[0];
    for (int i = 0; i < NSUSP; i++) {
        susp *s = &c->susp[i];
        if (!s->used) {
            v = s;
            break;
        }
        if ((uint8_t)(c->gen - s->gen) > (uint8_t)(c->gen - v->gen))
            v = s;
    }
    v->used = 1;
    v->root = *root;
    v->attacker = (uint8_t)c->attacker;
    v->goal = (uint8_t)c->goal;
    v->loose = (uint8_t)c->loose;
    v->gen = c->gen;
    v->round = (uint8_t)c->round;
    v->maxply = (uint16_t)c->maxply;
}

int
dfpn_prove(dfpn_ctx *c, const eng_pos *root, const eng_question *q, const dfpn_opts *o,
           dfpn_result *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    out->proof_length = -1;
    if (eng_validate(root, err, errlen) != 0 || !eng_question_valid(q) ||
        (o->ghi_naive && o->store))
        return DFPN_EINVAL;
    new_generation(c);
    c->pt_puts = 0;
    c->o = o;
    int attacker = q->attacker, goal = q->target == ENG_WIN ? DFPN_WIN : DFPN_DRAW;
    c->attacker = attacker;
    c->goal = goal;
    c->loose = o->optimistic || o->ghi_naive;
    c->safety = goal == DFPN_WIN ? !attacker : attacker;
    c->eps = o->epsilon > 0 ? o->epsilon : 0.25;
    c->t0 = now();
    c->deadline = o->time_limit > 0 ? c->t0 + o->time_limit : 0;
    c->next_progress = c->t0 + 0.5;
    c->node_limit = o->node_limit;
    c->nodes = c->expanded = c->probes = c->store_hits = c->gc_runs = 0;
    c->abort = c->error = 0;
    c->emsg[0] = 0;
    c->top = 0;
    c->path[0] = *root;
    c->seg[0] = 0;
    c->root_pn = c->root_dn = 1;

    /* The root itself may be a leaf: value it as a child of nothing. */
    child rc;
    memset(&rc, 0, sizeof rc);
    rc.pos = *root;
    rc.key = eng_key(root);
    rc.irrev = 1;
    value_child(c, 0, &rc);
    uint32_t pn = rc.pn, dn = rc.dn;
    /*
     * DEPTH LIMIT. In king endings a line can run for hundreds of plies
     * without repeating, and a plain df-pn dives down them. So the search
     * runs with a depth limit that grows (by half, from 24 plies to
     * DFPN_MAXPLY): positions past it are open and blocked (both numbers
     * DEEP), so the search stops when only such lines are left, and the
     * next round goes deeper. Proofs and disproofs never rest on a cut
     * position, so every final result of a round is true in the next; the
     * numbers of open positions are not (they saw the cut), so a new round
     * forgets them.
     */
    c->maxply = 24;
    c->round = 0;
    resume(c, root);
    out->resumed = c->resumed;
    if (!c->error && !is_final(pn, dn)) {
        while (!c->abort) {
            mid(c, 0, DEEP, DEEP, 0, &rc);
            pn = rc.pn, dn = rc.dn;
            if (is_final(pn, dn) || c->abort || c->maxply >= DFPN_MAXPLY)
                break;
            c->maxply = c->maxply * 3 / 2 > DFPN_MAXPLY ? DFPN_MAXPLY : c->maxply * 3 / 2;
            c->round++; /* forgets the open entries: see open_live() */
        }
    }
    out->pn = pn;
    out->dn = dn;
    out->status = pn == 0 ? DFPN_PROVEN : dn == 0 ? DFPN_DISPROVEN : DFPN_UNKNOWN;
    if (out->status == DFPN_UNKNOWN && !c->error)
        suspend(c, root);
    int rcode = 0;
    if (c->error) {
        out->status = DFPN_UNKNOWN;
        rcode = c->error;
    } else if (out->status != DFPN_UNKNOWN) {
        int winner = out->status == DFPN_PROVEN ? attacker : !attacker;
        int verify = o->optimistic && winner == c->safety;
        if (o->write_proof || verify) {
            /* without write_proof the walk only verifies: nothing is written */
            rcode = write_proof(c, out->status == DFPN_PROVEN, o->write_proof, out);
            if (rcode == DFPN_EPROOF && verify) { /* not a certificate: not an answer */
                out->status = DFPN_UNKNOWN;
                out->refuted = 1;
                rcode = 0;
            }
        }
    }
    out->nodes = c->nodes;
    out->expanded = c->expanded;
    out->db_probes = c->probes;
    out->store_hits = c->store_hits;
    out->gc_runs = c->gc_runs;
    out->tt_used = c->used;
    out->tt_entries = c->nbuckets * BUCKET;
    out->seconds = now() - c->t0;
    if (rcode && err && errlen)
        snprintf(err, errlen, "%s", c->emsg[0] ? c->emsg : dfpn_strerror(rcode));
    return rcode;
}
