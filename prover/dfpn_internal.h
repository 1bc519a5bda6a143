/*
 * dfpn_internal.h - what the three parts of the df-pn solver share. Not a
 * public header: only prover/dfpn*.c include it; the interface is dfpn.h.
 *
 * The solver is split by job:
 *   dfpn_table.c  the transposition table (facts and open numbers, its
 *                 replacement and garbage collection, THE TABLE ACROSS
 *                 QUERIES), the path-dependent table, and the unanswered
 *                 queries a later query may resume;
 *   dfpn.c        the search (valuing children, Nagai's MID with TCA and
 *                 the 1+epsilon trick, depth rounds) and the interface
 *                 (dfpn_new, dfpn_prove, ...);
 *   dfpn_walk.c   the proof walk: after an answer, its proof is walked
 *                 from the root and written into the store (prover.h,
 *                 WRITING A PROOF).
 * This header holds the types they share (the context, table entries, the
 * children of an expanded node), the small helpers, and the functions one
 * part calls in another. Every function here works on one dfpn_ctx, which
 * belongs to one thread (dfpn.h, THREAD SAFETY); none allocates unless it
 * says so.
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
#ifndef PROVER_DFPN_INTERNAL_H
#define PROVER_DFPN_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "engine/bits.h"
#include "engine/engine.h"
#include "prover/dfpn.h"
#include "prover/posmap.h"
#include "prover/store.h"

/* The question's target inside the search (the table's entries and the
 * proof walk are written in these terms). */
enum dfpn_goal { DFPN_DRAW = 0, DFPN_WIN = 1 };

/* ---- constants -------------------------------------------------------- */

#define BUCKET 4 /* entries a bucket: 128 bytes, two cache lines */
#define KEPT_MIN                                                                                   \
    65536                    /* the facts kept aside: the first allocation's                       \
                                slots (dfpn_table.c) */
#define GC_SAMPLE 16384      /* entries sampled to find the median effort    */
#define ARENA_CHILDREN 65536 /* children on the current line, all plies     */
#define PT_MIN 4096          /* path-dependent table entries, at least       */
#define SAT (DFPN_INF - 1)   /* the largest number a non-final node can have */
/* Both numbers of a line cut at the round's depth limit. A node whose
 * best child has a number of DEEP or more, or a root with one, takes it
 * for "only cut lines are left" and ends the round (DEPTH LIMIT in
 * dfpn.c), so DEEP must lie above any number a real search reaches: with
 * 1 << 22 the sums of a king ending's DAG (double counting) passed it
 * after about 47 M positions, and the search stopped with a third of its
 * time left (docs/solver.md, "The depth cut's marker"). */
#define DEEP (1u << 28)
#define FIRST_DEPTH 96 /* the first round's depth limit (DEPTH LIMIT)  */

enum { F_USED = 1, F_WHITE = 2, F_FINAL = 4 };
#define ROUND_SHIFT 3 /* open entry: flags bits 3-7, its depth round    */
#define BOUND_SHIFT 3 /* final entry: flags bits 3-5, its eng_bound     */
#define F_LOOSE 64    /* final entry: found by an optimistic search    */
#define NSUSP 8       /* unanswered queries whose open entries are kept */
#define NREFUTED 16   /* queries whose optimistic answer a walk refused */
#define NWCUT 8       /* queries whose proof walk ran out of budget     */

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

/* A query whose optimistic answer the proof walk refused (dfpn.c, A
 * REFUTED QUERY IS NOT ASKED OPTIMISTICALLY AGAIN). */
typedef struct refq {
    eng_pos root;
    uint8_t used, attacker, goal;
} refq;

/* A query whose proof walk ran out of its time or positions, and what it
 * had used (dfpn_walk.c, A WALK CUT SHORT GETS TWICE AS MUCH NEXT TIME). */
typedef struct wcut {
    eng_pos root;
    uint8_t used, attacker, goal;
    double seconds; /* the walk's time */
    uint64_t nodes; /* positions its searches valued */
    uint64_t cap;   /* the draw walk's cap on one search (c->wcap) */
} wcut;

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

/*
 * THE PATH-DEPENDENT TABLE'S TAGS. Every child the search values that the
 * main table has no final entry for asks the path-dependent table, and
 * nearly every such lookup misses. An entry is 92 bytes, so one bucket of
 * PT_WAYS spans six cache lines of a table an eighth the size of the main
 * one: with the entries alone, a GHI-safe search of a level ten-piece
 * position spent 39% of its time in that miss (perf, stop 36). So each
 * entry has a 32-bit tag in an array of its own (a bucket's tags are 16
 * bytes, the whole array 1/23 of the entries): the generation in the top
 * byte and 24 bits of the key above the bucket index's, 0 for a free way.
 * A lookup reads the entry only when its tag matches, and then compares the
 * full position as before: a tag only filters, so no result is ever taken
 * on a tag or a hash alone.
 * The tags are 2 MB for a 256 MB table, still a cache miss a lookup, while
 * a query stores few results there (40,148 in 20 M positions of the level
 * position above, 66,662 in a six-piece king ending). So before the tags, a
 * bitmap of PT_BITS bits (64 KB, which stays in the core's cache) says
 * whether this generation stored anything under 19 other bits of the key;
 * it is cleared with each new generation, when every entry goes stale.
 */
#define PT_BITS (1u << 19)
static inline uint32_t
pt_tag(uint64_t key, uint8_t gen)
{
    return ((uint32_t)gen << 24) | (uint32_t)((key >> 40) & 0xFFFFFF);
}
static inline uint32_t
pt_bit(uint64_t key)
{
    return (uint32_t)(key >> 20) & (PT_BITS - 1);
}

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

enum {
    LEAF_NONE,
    LEAF_END,
    LEAF_DB,
    LEAF_STORE,
    LEAF_REP,
    LEAF_TT,
    LEAF_PT,
    LEAF_CUT,
    LEAF_BLOCK /* an open position of the win walk's graph, blocked */
};

/*
 * A position the proof walk took (dfpn_walk.c), by its index in the
 * walk's set (c->wmap). Both walks build a graph of candidates (WRITING A
 * WIN, WRITING A DRAW); the fields marked "win walk" are its alone.
 */
enum { WS_NONE, WS_NEW, WS_OPEN, WS_DONE, WS_FAIL };
typedef struct wnode {
    eng_pos pos;
    uint32_t item;    /* its record in the batch, or UINT32_MAX */
    uint32_t kids;    /* its first edge to a child (c->we) */
    uint32_t parents; /* its first edge from a parent */
    uint32_t seen;    /* win walk: the last search for stuck parts
                         (win_unstick) that reached it */
    uint32_t idx;     /* win walk, there: its Tarjan index, and once its
                         component is complete, the component's */
    uint32_t low;     /* win walk, there: its Tarjan low link */
    uint32_t tried;   /* win walk: the graph's size when it was last
                         searched with the open nodes blocked */
    uint16_t len;     /* win walk, done: plies of its proof (the longest
                         line) */
    uint16_t pending; /* win walk, the other side to move: replies not won */
    uint16_t mv;      /* w_side to move: its move's index in the move list
                         (ENG_DUPS_MERGE): won with (win walk), or its
                         candidate (draw walk) */
    uint8_t state;    /* WS_*: NEW to be expanded, OPEN expanded (the draw
                         walk: standing), DONE won or written, FAIL */
    uint8_t mover;    /* w_side moves here */
    uint8_t level;    /* win walk: the budget of that search (win_unstick);
                         draw walk: searched again already */
    uint8_t onstk;    /* win walk: on Tarjan's stack */
} wnode;

/* An edge of a walk's graph, in a node's list of children or of
 * parents. */
typedef struct wedge {
    uint32_t node; /* the child, or the parent */
    uint32_t next; /* the next edge of the list, or UINT32_MAX */
    uint16_t mv;   /* the parent's move (its index in the move list) */
} wedge;

/* A growable list of node indices. */
typedef struct wlist {
    uint32_t *v;
    size_t n, cap;
} wlist;

struct dfpn_ctx {
    tt_entry *tt;
    size_t nbuckets; /* a power of two */
    size_t used;
    tt_entry *kept;                 /* strict facts given up in full buckets, for the
                                       walks (dfpn_table.c, A FACT GIVEN UP IS KEPT
                                       ASIDE): open addressing by key, kcap slots */
    size_t kcap, nkept;             /* a power of two (0: none yet); slots in use */
    size_t kmax;                    /* at most this many slots (0: nothing kept) */
    uint64_t kept_total, kept_back; /* facts put aside, and taken back by a
                                       walk, over the context's life */
    pt_entry *pt;
    uint32_t *ptag;       /* the entries' tags (THE PATH-DEPENDENT TABLE'S TAGS) */
    uint64_t *pbits;      /* PT_BITS bits: this generation stored under the key's pt_bit */
    size_t npt;           /* a power of two */
    uint8_t gen;          /* the current query's generation (never 0) */
    uint8_t rgen, rround; /* a resumed query: its earlier generation and round */
    int resumed;          /* this query resumes an earlier one (rgen, rround) */
    int loose;            /* optimistic (or naive): may use F_LOOSE facts */
    susp susp[NSUSP];
    refq refuted[NREFUTED]; /* a ring: the oldest goes first */
    unsigned nrefuted;      /* the ring's next slot */
    wcut wcuts[NWCUT];      /* a ring: walks cut short, the oldest goes first */
    unsigned nwcut;         /* the ring's next slot */

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
    int maxply; /* the current depth limit (dfpn.c, DEPTH LIMIT) */
    int round;  /* depth rounds so far in this query, the proof walk's
                   searches' included; an entry keeps it modulo 32, so an
                   open entry of 32 rounds before can look live: that
                   costs its numbers' accuracy only, since no final
                   result rests on open numbers */

    /* the current line */
    eng_pos path[DFPN_MAXPLY + 2];
    int seg[DFPN_MAXPLY + 2]; /* first ply of the reversible segment */
    child *arena;
    size_t top;
    eng_movelist ml;

    /* writing a proof (dfpn_walk.c) */
    pmap wmap; /* the positions the walk took, each with an index */
    wnode *wn; /* by that index */
    size_t wn_cap;
    wedge *we; /* the walk's edges */
    size_t nwe, we_cap;
    wlist wstack, wprop, wq; /* the walk's work: nodes to visit (a stack),
                                to close or fail; Tarjan's stacks */
    wlist wsink;             /* the win walk's stuck components */
    uint32_t wseen;          /* the win walk's searches for stuck parts */
    uint32_t wblock;         /* nonzero: the win walk searches with the
                                component wblock - 1 of its last search
                                for stuck parts blocked (value_child) */
    pst_item *items;
    size_t nitems, items_cap;
    eng_pos *rests; /* the store's records the proof's records rest on: the
                       children (or the root) walk_leaf took from the store
                       (dfpn_last_proof); repeats are kept */
    size_t nrests, rests_cap;
    int leaf_stored;     /* the last walk_leaf that said 1 took the store's record */
    int proof_put;       /* the last dfpn_prove wrote its whole proof (items and
                            rests are that proof's) */
    int w_side, w_reach; /* the proof being written: its side, reach or not */
    uint64_t researched;
    uint64_t wcap;     /* positions a walk's search of a position again may
                          take */
    uint64_t wcap_min; /* at least this (A WALK CUT SHORT...) */
    char stuck[300];   /* where the last candidate could not be closed */
};

/* What the table knows of a position for this query. */
typedef struct look {
    tt_entry *fin;  /* a fact that answers the query, or NULL */
    int att_won;    /* with fin: the attacker succeeds */
    uint16_t len;   /* with fin: its proof length */
    tt_entry *open; /* the live open entry, or NULL */
} look;

/* ---- small helpers ---------------------------------------------------- */

static inline double
now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static inline int
same_pos(const eng_pos *a, const eng_pos *b)
{
    return a->bm == b->bm && a->wm == b->wm && a->bk == b->bk && a->wk == b->wk && a->stm == b->stm;
}

static inline int
npieces(const eng_pos *p)
{
    return bits_popcount(p->bm | p->wm | p->bk | p->wk);
}

/* Nonzero when a final child is the attacker's success. */
static inline int
attacker_won(const child *ch)
{
    return ch->pn == 0;
}

static inline int
is_final(uint32_t pn, uint32_t dn)
{
    return pn == 0 || dn == 0;
}

/* The first depth round's limit a query asks for (dfpn_opts.first_depth),
 * kept where the rounds can grow: at least 2 plies (x1.5 of 1 is 1), at
 * most DFPN_MAXPLY. */
static inline int
first_depth(const dfpn_opts *o)
{
    int d = o->first_depth > 0 ? o->first_depth : FIRST_DEPTH;
    return d < 2 ? 2 : d > DFPN_MAXPLY ? DFPN_MAXPLY : d;
}

/* ---- the table (dfpn_table.c) ----------------------------------------- */

/*
 * dfpn_tt_find - what the table knows of p (key: eng_key(p)) for the
 * current query: a fact that answers it (its answer in the attacker's
 * frame and its proof length; the fact counts as used again), and the
 * live open entry. Loose facts of other queries say nothing.
 */
void dfpn_tt_find(dfpn_ctx *c, const eng_pos *p, uint64_t key, look *l);

/*
 * dfpn_tt_find_kept - dfpn_tt_find for the walks: when the table has no
 * fact that answers, a fact it gave up and kept aside (dfpn_set_kept)
 * that answers is put back into the table first (A FACT GIVEN UP IS
 * KEPT ASIDE). The search calls dfpn_tt_find alone.
 */
void dfpn_tt_find_kept(dfpn_ctx *c, const eng_pos *p, uint64_t key, look *l);

/*
 * dfpn_tt_put - writes what is known of p: open numbers, or (pn or dn 0)
 * a final result with the length of its proof, kept as a fact (loose:
 * from an optimistic search, on the safety side). work is added to the
 * entry's effort; depth is the ply it was seen at (for TCA). May run the
 * garbage collector.
 */
void dfpn_tt_put(dfpn_ctx *c, const eng_pos *p, uint64_t key, uint32_t pn, uint32_t dn,
                 uint16_t len, uint64_t work, int depth, int loose);

/* dfpn_table_alloc - zeroed memory for a table, aligned to 2 MB and
 * asking for huge pages (dfpn.c, THE TABLE'S PAGES); NULL when there is
 * none. dfpn_table_free gives it back. */
void *dfpn_table_alloc(size_t bytes);
void dfpn_table_free(void *p, size_t bytes);

/* dfpn_new_generation - starts a query's generation (THE TABLE ACROSS
 * QUERIES); sweeps open entries and the path-dependent table when the
 * 8-bit counter wraps. */
void dfpn_new_generation(dfpn_ctx *c);

/*
 * dfpn_pt_get - a path-dependent result for p at ply that holds on the
 * current line (c->path), whose reversible segment starts at seg; *rep_up
 * is recomputed for this line. RETURN the entry, or NULL.
 */
const pt_entry *dfpn_pt_get(dfpn_ctx *c, const eng_pos *p, uint64_t key, int seg, int ply,
                            int *rep_up);

/* dfpn_pt_says - nonzero when the path-dependent table holds a result of
 * p with this outcome for some line (whatever positions it rests on):
 * a guide for the draw walk (dfpn_walk.c, WRITING A DRAW), never an
 * answer. */
int dfpn_pt_says(dfpn_ctx *c, const eng_pos *p, uint64_t key, int att_won);

/* dfpn_pt_put - keeps a path-dependent result of p: it holds on every line
 * that has the positions of d above it. */
void dfpn_pt_put(dfpn_ctx *c, const eng_pos *p, uint64_t key, int att_won, const deps *d, int len);

/* dfpn_resume - if this query (c->attacker, goal, loose) on root stopped
 * unanswered before, goes on at its round, its open entries live again. */
void dfpn_resume(dfpn_ctx *c, const eng_pos *root);

/* dfpn_suspend - remembers this unanswered query in place of the oldest. */
void dfpn_suspend(dfpn_ctx *c, const eng_pos *root);

/* ---- the search (dfpn.c) ---------------------------------------------- */

/* dfpn_set_error - ends the query with a DFPN_E* code and a message (the
 * first error stands). */
void dfpn_set_error(dfpn_ctx *c, int code, const char *msg);

/*
 * dfpn_root - makes root path[0] (the line starts there) and, with value,
 * values it as a child of nothing into *rc: it may be a leaf (no move, the
 * databases, the store, the table's facts). Without, *rc is open (pn and
 * dn 1): the search that follows sees the root afresh, whatever the table
 * says of it.
 */
void dfpn_root(dfpn_ctx *c, const eng_pos *root, int value, child *rc);

/*
 * dfpn_deepen - unless *rc (from dfpn_root) is final, searches path[0] in
 * depth rounds (dfpn.c, DEPTH LIMIT) from the limit c->maxply up, until
 * it is solved, the budget runs out, or the full depth was searched.
 */
void dfpn_deepen(dfpn_ctx *c, child *rc);

/*
 * dfpn_mid - Nagai's multiple iterative deepening at path[ply] until its
 * proof number reaches thpn or its disproof number thdn, or it is solved,
 * or the budget runs out; *self gets its numbers and, when solved, what
 * it rests on. inc: TCA's threshold increase is on.
 * PRECONDITION: path[ply] is not a leaf.
 */
void dfpn_mid(dfpn_ctx *c, int ply, uint32_t thpn, uint32_t thdn, int inc, child *self);

/* ---- the proof walk (dfpn_walk.c) ------------------------------------- */

/*
 * dfpn_write_proof - walks the proof of the answer just found from
 * path[0] (attacker_won_root: which side it proves) and, with put and a
 * store, writes it in one transaction; fills out's proof fields.
 * RETURN 0, DFPN_EPROOF (the proof could not be closed: c->emsg says
 * where), DFPN_ENOMEM, DFPN_EDB or DFPN_ESTORE.
 */
int dfpn_write_proof(dfpn_ctx *c, int attacker_won_root, int put, dfpn_result *out);

#endif /* PROVER_DFPN_INTERNAL_H */
