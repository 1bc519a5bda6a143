/*
 * dfpn_walk.c - writing the proof of an answered query into the
 * proven-node store (prover.h, WRITING A PROOF; dfpn_internal.h says how
 * the solver's parts fit).
 *
 * Two walks, one for each kind of proof: a win must be acyclic (WRITING
 * A WIN), "at least a draw" is a set of positions closed under play and
 * may have cycles (WRITING A DRAW). Both take the positions of the proof
 * into one set (c->wmap, a wnode for each), make one record for each,
 * stop at the checker's leaves (walk_leaf), and write the records in one
 * transaction (dfpn_write_proof).
 */
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/value.h"
#include "prover/dfpn_internal.h"
#include "prover/leaf.h"

/* ---- constants -------------------------------------------------------- */

/* The least node budget of a walk's searches when the query had one. */
#define DFPN_WALK_MIN_NODES 1000000u
/* The verification walk of an optimistic answer: this many times the
 * search's own time and positions, at least DFPN_VERIFY_MIN_S seconds
 * (VERIFYING AN OPTIMISTIC ANSWER in dfpn_write_proof). */
#define DFPN_VERIFY_TIMES 4
#define DFPN_VERIFY_MIN_S 2.0

#define NO_ITEM UINT32_MAX /* a node without a record (yet) */
#define NO_EDGE UINT32_MAX /* the end of a node's list of edges */
/* The budget of a search of the win walk's unstick: at first BREAK_FIRST
 * positions, at most as many as the query's search took, and never less
 * than BREAK_MAX_MIN. */
#define BREAK_FIRST 1000
#define BREAK_MAX_MIN 100000
/* A search of the draw walk gets at most the query's positions over this,
 * and at least BREAK_MAX_MIN. */
#define DRAW_RESEARCH_SHARE 8

/* ---- the positions of a walk ------------------------------------------ */

static int
wl_push(wlist *l, uint32_t x)
{
    if (pmap_room((void **)&l->v, &l->cap, l->n, sizeof *l->v) != 0)
        return -1;
    l->v[l->n++] = x;
    return 0;
}

/* The node of p, added (cleared, WS_NONE) when missing; *added says which
 * (may be NULL). RETURN its index, or -1 when out of memory. */
static long
node_add(dfpn_ctx *c, const eng_pos *p, int *added)
{
    int fresh;
    long i = pmap_add(&c->wmap, p, &fresh);
    if (i < 0 || pmap_room((void **)&c->wn, &c->wn_cap, (size_t)i, sizeof *c->wn) != 0)
        return -1;
    if (fresh) {
        wnode *n = &c->wn[i];
        memset(n, 0, sizeof *n);
        n->pos = *p;
        n->item = NO_ITEM;
        n->kids = n->parents = NO_EDGE;
    }
    if (added)
        *added = fresh;
    return i;
}

/* What the walk may take as a leaf: 1 a leaf that satisfies the goal, 0
 * not a leaf, -1 a leaf that contradicts the goal (a bug: reported), -2
 * a database probe failed. */
static int
walk_leaf(dfpn_ctx *c, const eng_pos *p)
{
    int wr = c->w_reach;
    const dfpn_opts *o = c->o;
    c->leaf_stored = 0;
    /* The checker's leaf rule, with the scope it will check under: the
     * databases' own (egdb_covers), partial bounds included. */
    pleaf lf;
    if (pleaf_of(o->db, o->db ? egdb_scope(o->db) : 0, p, 0, &lf) < 0)
        return -2;
    if (lf.kind != PLEAF_NONE) {
        eng_question q = {c->w_side, wr ? ENG_WIN : ENG_DRAW};
        int a = pleaf_answer(&lf, &q, p->stm);
        if (a != 0)
            return a;
        /* a partial bound that leaves the goal open: a position to prove */
    }
    if (o->store) {
        pst_record r;
        if (pst_get(o->store, p, &r) == 0) {
            eng_bound b = p->stm == c->w_side ? r.bound : eng_bound_neg(r.bound);
            int lo = eng_bound_lo(b);
            int has = p->stm != c->w_side ||
                      (wr ? r.win.from != PST_NOMOVE
                          : (r.draw.from != PST_NOMOVE || r.win.from != PST_NOMOVE));
            if ((wr ? lo == ENG_WIN : lo >= ENG_DRAW) && has) {
                c->leaf_stored = 1;
                return 1;
            }
        }
    }
    return 0;
}

/* A record for node i (position p) in the batch: the bound the proof
 * gives it, no move yet. RETURN -1 when out of memory. */
static int
add_item(dfpn_ctx *c, const eng_pos *p, long i)
{
    if (pmap_room((void **)&c->items, &c->items_cap, c->nitems, sizeof *c->items) != 0)
        return -1;
    pst_item *it = &c->items[c->nitems];
    memset(it, 0, sizeof *it);
    it->pos = *p;
    int w_moves = p->stm == c->w_side;
    it->rec.bound = c->w_reach ? (w_moves ? ENG_WW : ENG_LL) : (w_moves ? ENG_DW : ENG_LD);
    it->rec.win.from = PST_NOMOVE;
    it->rec.draw.from = PST_NOMOVE;
    c->wn[i].item = (uint32_t)c->nitems++;
    return 0;
}

/* The effort behind p's entry in the table, for its record. */
static uint64_t
effort_of(dfpn_ctx *c, const eng_pos *p)
{
    look l;
    dfpn_tt_find(c, p, eng_key(p), &l);
    return l.fin ? l.fin->work : l.open ? l.open->work : 0;
}

static void
walk_fail(dfpn_ctx *c, const eng_pos *p, const char *why)
{
    char fen[ENG_FEN_MAX], m[256];
    eng_format_fen(p, fen, sizeof fen);
    snprintf(m, sizeof m, "at %s: %s", fen, why);
    dfpn_set_error(c, DFPN_EPROOF, m);
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

static void
no_memory(dfpn_ctx *c)
{
    dfpn_set_error(c, DFPN_ENOMEM, "out of memory writing the proof");
}

/* The walk was cut short (its time, or a stop), not only a search's
 * budget. */
static int
walk_cut(const dfpn_ctx *c)
{
    return prv_stopped(c->o->stop) || (c->deadline > 0 && now() >= c->deadline);
}

/* Why the walk stopped before its proof was whole. */
static const char *
cut_reason(const dfpn_ctx *c)
{
    if (prv_stopped(c->o->stop))
        return "stopped while writing the proof";
    if (c->node_limit && c->nodes >= c->node_limit)
        return "the positions for writing the proof ran out";
    if (c->o->walk_max_positions && c->wmap.n >= c->o->walk_max_positions)
        return "the walk's cap of positions ran out";
    return "the time for writing the proof ran out";
}

/* ---- the records of a proof -------------------------------------------- */

/* p is a leaf of the proof by the store's record: listed in c->rests
 * (dfpn_last_proof), so that a worker can send what the proof rests on
 * without walking it again. RETURN -1 when out of memory. */
static int
add_rest(dfpn_ctx *c, const eng_pos *p)
{
    if (pmap_room((void **)&c->rests, &c->rests_cap, c->nrests, sizeof *c->rests) != 0)
        return -1;
    c->rests[c->nrests++] = *p;
    return 0;
}

/*
 * The records of the proof from the root: each of its nodes once (the WON
 * nodes of the win walk, the standing ones of the draw walk, which become
 * DONE), where w_side moves with its move (c->wn[].mv).
 * RETURN 0, or -1 on error.
 */
static int
proof_records(dfpn_ctx *c, uint32_t root)
{
    int win = c->w_reach;
    c->wstack.n = 0;
    if (wl_push(&c->wstack, root) != 0)
        goto nomem;
    while (c->wstack.n) {
        uint32_t i = c->wstack.v[--c->wstack.n];
        if (c->wn[i].item != NO_ITEM)
            continue;
        eng_pos p = c->wn[i].pos;
        c->wn[i].state = WS_DONE;
        if (add_item(c, &p, i) != 0)
            goto nomem;
        pst_record *r = &c->items[c->wn[i].item].rec;
        r->effort = effort_of(c, &p);
        if (win)
            r->length = c->wn[i].len;
        eng_movelist ml;
        int n = eng_generate(&p, &ml, ENG_DUPS_MERGE);
        if (c->wn[i].mover) {
            *(win ? &r->win : &r->draw) = pst_move_of(&ml.m[c->wn[i].mv]);
            n = 1, ml.m[0] = ml.m[c->wn[i].mv];
        }
        for (int k = 0; k < n; k++) {
            eng_pos q;
            eng_make(&p, &ml.m[k], &q);
            if (walk_leaf(c, &q) == 1) {
                if (c->leaf_stored && add_rest(c, &q) != 0)
                    goto nomem;
                continue;
            }
            /* cannot be: a node closes (or stands) on its children */
            long j = pmap_find(&c->wmap, &q);
            if (j < 0 || c->wn[j].state == WS_FAIL || (win && c->wn[j].state != WS_DONE))
                return walk_fail(c, &q, "a child of the proof is not in it"), -1;
            if (wl_push(&c->wstack, (uint32_t)j) != 0)
                goto nomem;
        }
    }
    return 0;
nomem:
    no_memory(c);
    return -1;
}

/* ---- writing a win ------------------------------------------------------ */

/*
 * WRITING A WIN
 * A win proof must be acyclic: a line that came back to a position would
 * be a draw. The table's facts are each true (no win rests on a
 * repetition), but together they need not hold a proof: an entry that
 * the bucket's replacement or the collector frees is proved again later,
 * through whatever the table holds then, so the facts' own supports can
 * run in circles, and the proof lengths they carry then no longer
 * decrease along a proof. (A walk that followed those lengths depth
 * first met its own line again and again, gave up what it had closed
 * below each choice, and searched again until its time ran out:
 * test_win_walk_small_table in tests/test_prover_dfpn.c.)
 *
 * So the win walk builds a graph of the proof's candidates and closes it
 * from the leaves up, the way a retrograde analysis does:
 *   nodes     positions (their index in c->wmap). Where w_side moves, a
 *             node gets an edge to one candidate child at a time: a child
 *             the table knows won, the shortest proof first. Where the
 *             other side moves, an edge to every reply. A node where
 *             w_side moves and whose children no table knows (their facts
 *             were freed) is searched again, as a root of its own; then
 *             they are known.
 *   closing   a node is WON, with a length, where w_side moves when one
 *             child is a leaf (length 1) or WON (its length + 1), and
 *             where the other side moves when every reply is a leaf or
 *             WON (the longest + 1). A node whose reply reaches a losing
 *             leaf, or is refuted by a search, FAILS, and so does every
 *             node above it where the other side moves.
 *   unsticking when nothing is left to expand and the root is still open,
 *             the open nodes wait on one another. Their strongly connected
 *             components that wait on nothing outside themselves are
 *             stuck: no closing elsewhere can close them. In each, the
 *             nodes where w_side moves get their next known candidate;
 *             where none is left, they are searched again afresh with the
 *             component blocked (value_child), which finds a win that does
 *             not come back into it, and that win's first move is the new
 *             candidate.
 * The proof written follows WON nodes only, each to a child of smaller
 * length, so it is acyclic by construction, whatever the table's lengths
 * say; every node is expanded once.
 */

/* The table says q is won for w_side: 1, with its proof length. */
static int
known_win(dfpn_ctx *c, const eng_pos *q, unsigned *len)
{
    look l;
    dfpn_tt_find_kept(c, q, eng_key(q), &l);
    if (!l.fin || l.att_won != (c->w_side == c->attacker))
        return 0;
    *len = l.len;
    return 1;
}

static unsigned
len_plus(unsigned l)
{
    return l + 1 > UINT16_MAX - 1 ? UINT16_MAX - 1 : l + 1;
}

/* Node i is new to the win walk: it is expanded later. RETURN -1 when
 * out of memory. */
static int
win_new(dfpn_ctx *c, long i)
{
    wnode *n = &c->wn[i];
    n->state = WS_NEW;
    n->mover = n->pos.stm == c->w_side;
    return wl_push(&c->wstack, (uint32_t)i);
}

/* The node of q, made when missing. RETURN its index, or -1 when out of
 * memory. */
static long
win_node(dfpn_ctx *c, const eng_pos *q)
{
    int added;
    long j = node_add(c, q, &added);
    if (j >= 0 && added && win_new(c, j) != 0)
        return -1;
    return j;
}

/* An edge from node `from` to node `to` by move mv of from's list. */
static int
edge_add(dfpn_ctx *c, uint32_t from, uint32_t to, int mv)
{
    if (pmap_room((void **)&c->we, &c->we_cap, c->nwe + 1, sizeof *c->we) != 0)
        return -1;
    wedge *k = &c->we[c->nwe], *p = &c->we[c->nwe + 1];
    k->node = to, k->mv = (uint16_t)mv, k->next = c->wn[from].kids;
    p->node = from, p->mv = (uint16_t)mv, p->next = c->wn[to].parents;
    c->wn[from].kids = (uint32_t)c->nwe;
    c->wn[to].parents = (uint32_t)c->nwe + 1;
    c->nwe += 2;
    return 0;
}

/* Node i (position p) takes its child by move m (index k of its list) as
 * a candidate: the child's node (made when missing) and an edge to it.
 * RETURN 1, or -1 when out of memory. */
static int
take_child(dfpn_ctx *c, uint32_t i, const eng_pos *p, const eng_move *m, int k)
{
    eng_pos q;
    eng_make(p, m, &q);
    long j = win_node(c, &q);
    if (j < 0 || edge_add(c, i, (uint32_t)j, k) != 0)
        return no_memory(c), -1;
    return 1;
}

static int
has_edge(const dfpn_ctx *c, uint32_t from, uint32_t to)
{
    for (uint32_t e = c->wn[from].kids; e != NO_EDGE; e = c->we[e].next)
        if (c->we[e].node == to)
            return 1;
    return 0;
}

/*
 * Closes node i as WON (len; mv: w_side's move, where it moves), and then
 * every open node above it that this closes. RETURN -1 when out of
 * memory.
 */
static int
close_won(dfpn_ctx *c, uint32_t i, unsigned len, int mv)
{
    wnode *n = &c->wn[i];
    if (n->state != WS_OPEN && n->state != WS_NEW)
        return 0;
    n->state = WS_DONE, n->len = (uint16_t)len, n->mv = (uint16_t)mv;
    c->wprop.n = 0;
    if (wl_push(&c->wprop, i) != 0)
        return -1;
    while (c->wprop.n) {
        uint32_t x = c->wprop.v[--c->wprop.n];
        unsigned l = len_plus(c->wn[x].len);
        for (uint32_t e = c->wn[x].parents; e != NO_EDGE; e = c->we[e].next) {
            wnode *p = &c->wn[c->we[e].node];
            if (p->state != WS_OPEN)
                continue;
            if (p->mover) {
                p->len = (uint16_t)l, p->mv = c->we[e].mv;
            } else {
                if (l > p->len)
                    p->len = (uint16_t)l;
                if (--p->pending)
                    continue;
            }
            p->state = WS_DONE;
            if (wl_push(&c->wprop, c->we[e].node) != 0)
                return -1;
        }
    }
    return 0;
}

/* Node i FAILS, and every open node above it where the other side moves.
 * RETURN -1 when out of memory. */
static int
close_failed(dfpn_ctx *c, uint32_t i)
{
    c->wn[i].state = WS_FAIL;
    c->wprop.n = 0;
    if (wl_push(&c->wprop, i) != 0)
        return -1;
    while (c->wprop.n) {
        uint32_t x = c->wprop.v[--c->wprop.n];
        for (uint32_t e = c->wn[x].parents; e != NO_EDGE; e = c->we[e].next) {
            wnode *p = &c->wn[c->we[e].node];
            if (p->state != WS_OPEN || p->mover)
                continue;
            p->state = WS_FAIL;
            if (wl_push(&c->wprop, c->we[e].node) != 0)
                return -1;
        }
    }
    return 0;
}

/*
 * Searches q again as a root of its own (dfpn_root, dfpn_deepen: depth
 * rounds, GHI-safe while the win walk runs) within cap positions (0: no
 * cap); afresh: q's own fact aside; block (nonzero): with the stuck
 * component block - 1 blocked (value_child).
 * RETURN 1 won for w_side, 0 not, 2 undecided, -1 the walk is cut short
 * or failed (c->abort, c->error).
 */
static int
win_research(dfpn_ctx *c, const eng_pos *q, uint64_t cap, uint32_t block, int afresh)
{
    child rc;
    c->researched++;
    c->node_limit = cap ? c->nodes + cap : 0;
    c->maxply = first_depth(c->o);
    c->round++; /* the numbers of the rounds before saw other cuts */
    c->wblock = block;
    dfpn_root(c, q, !afresh, &rc);
    dfpn_deepen(c, &rc);
    c->wblock = 0;
    c->node_limit = 0;
    if (c->error || (c->abort && walk_cut(c)))
        return -1;
    c->abort = 0;
    if (!is_final(rc.pn, rc.dn))
        return 2;
    return attacker_won(&rc) == (c->w_side == c->attacker);
}

/*
 * Gives node i (open, w_side moves) a candidate: a leaf or a won child
 * closes it; else the child with the shortest known win that is not yet
 * one of its edges (nodes of the graph count as known, without length).
 * RETURN 1 when i gained an edge or closed, 0 when no candidate is left,
 * -1 on error (c->error set).
 */
static int
win_widen(dfpn_ctx *c, uint32_t i)
{
    eng_pos p = c->wn[i].pos, q;
    eng_movelist ml;
    int n = eng_generate(&p, &ml, ENG_DUPS_MERGE), best = -1, done = -1;
    unsigned bestlen = UINT_MAX, donelen = UINT_MAX;
    for (int k = 0; k < n; k++) {
        eng_make(&p, &ml.m[k], &q);
        int lf = walk_leaf(c, &q);
        if (lf == -2)
            return walk_fail(c, &q, "database probe failed"), -1;
        if (lf == 1)
            return close_won(c, i, 1, k) != 0 ? (no_memory(c), -1) : 1;
        if (lf == -1)
            continue;
        long j = pmap_find(&c->wmap, &q);
        unsigned l = UINT16_MAX;
        if (j >= 0 && c->wn[j].state == WS_DONE && c->wn[j].len < donelen)
            done = k, donelen = c->wn[j].len;
        if (j >= 0 &&
            (c->wn[j].state == WS_FAIL || c->wn[j].state == WS_DONE || has_edge(c, i, (uint32_t)j)))
            continue;
        if ((known_win(c, &q, &l) || j >= 0) && l < bestlen)
            best = k, bestlen = l;
    }
    if (done >= 0)
        return close_won(c, i, len_plus(donelen), done) != 0 ? (no_memory(c), -1) : 1;
    if (best < 0)
        return 0;
    return take_child(c, i, &p, &ml.m[best], best);
}

/*
 * Expands node i (WS_NEW): where w_side moves, its first candidate (the
 * position searched again first when no child is known: their facts were
 * freed); where the other side moves, an edge to every reply.
 * RETURN 0, or -1 on error (c->error set, or the walk cut short).
 */
static int
win_expand(dfpn_ctx *c, uint32_t i)
{
    c->wn[i].state = WS_OPEN;
    eng_pos p = c->wn[i].pos;
    if (c->wn[i].mover) {
        int r = win_widen(c, i);
        if (r != 0)
            return r < 0 ? -1 : 0;
        r = win_research(c, &p, 0, 0, 0);
        if (r < 0)
            return -1;
        if (r == 0)
            return close_failed(c, i);
        return win_widen(c, i) < 0 ? -1 : 0; /* none: left to win_unstick */
    }
    eng_movelist ml;
    int n = eng_generate(&p, &ml, ENG_DUPS_MERGE);
    unsigned len = 0, pending = 0;
    for (int k = 0; k < n; k++) {
        eng_pos q;
        eng_make(&p, &ml.m[k], &q);
        int lf = walk_leaf(c, &q);
        if (lf == -2)
            return walk_fail(c, &q, "database probe failed"), -1;
        if (lf == -1)
            return close_failed(c, i);
        if (lf == 1) {
            len = len > 1 ? len : 1;
            continue;
        }
        long j = win_node(c, &q);
        if (j < 0 || edge_add(c, i, (uint32_t)j, k) != 0)
            return no_memory(c), -1;
        if (c->wn[j].state == WS_FAIL)
            return close_failed(c, i);
        if (c->wn[j].state == WS_DONE)
            len = len > len_plus(c->wn[j].len) ? len : len_plus(c->wn[j].len);
        else
            pending++;
    }
    c->wn[i].len = (uint16_t)len;
    c->wn[i].pending = (uint16_t)pending;
    return pending ? 0 : close_won(c, i, len, 0);
}

/*
 * Lists the stuck components of the graph in c->wsink, each as its size
 * and then its nodes. The open nodes the root reaches through open nodes
 * fall into strongly connected components (Tarjan's algorithm, without
 * recursion); a component none of whose edges leads to an open node
 * outside it waits only on itself: no closing elsewhere can close it.
 * Tarjan completes a component after every component it reaches, so
 * those already carry their component's number (idx) when it is checked.
 * RETURN -1 when out of memory.
 */
static int
stuck_parts(dfpn_ctx *c, uint32_t root)
{
    wlist *st = &c->wq, *call = &c->wprop, *out = &c->wsink;
    uint32_t next = 0;
    c->wseen++;
    st->n = call->n = out->n = 0;
    c->wn[root].seen = c->wseen;
    c->wn[root].idx = c->wn[root].low = next++;
    c->wn[root].onstk = 1;
    if (wl_push(st, root) || wl_push(call, root) || wl_push(call, c->wn[root].kids))
        return -1;
    while (call->n) {
        uint32_t v = call->v[call->n - 2], e = call->v[call->n - 1];
        if (e != NO_EDGE) { /* the next edge of v */
            call->v[call->n - 1] = c->we[e].next;
            uint32_t w = c->we[e].node;
            wnode *x = &c->wn[w];
            if (x->state != WS_OPEN)
                continue;
            if (x->seen != c->wseen) {
                x->seen = c->wseen;
                x->idx = x->low = next++;
                x->onstk = 1;
                if (wl_push(st, w) || wl_push(call, w) || wl_push(call, x->kids))
                    return -1;
            } else if (x->onstk && x->idx < c->wn[v].low) {
                c->wn[v].low = x->idx;
            }
            continue;
        }
        call->n -= 2; /* v is done */
        if (call->n && c->wn[v].low < c->wn[call->v[call->n - 2]].low)
            c->wn[call->v[call->n - 2]].low = c->wn[v].low;
        if (c->wn[v].low != c->wn[v].idx)
            continue;
        size_t from = st->n; /* v's component: the stack down to v */
        while (st->v[--from] != v)
            ;
        uint32_t comp = c->wn[v].idx;
        for (size_t k = from; k < st->n; k++) {
            c->wn[st->v[k]].onstk = 0;
            c->wn[st->v[k]].idx = comp;
        }
        int sink = 1;
        for (size_t k = from; k < st->n && sink; k++)
            for (uint32_t f = c->wn[st->v[k]].kids; f != NO_EDGE && sink; f = c->we[f].next)
                sink = c->wn[c->we[f].node].state != WS_OPEN || c->wn[c->we[f].node].idx == comp;
        if (sink && wl_push(out, (uint32_t)(st->n - from)) != 0)
            return -1;
        for (size_t k = from; k < st->n && sink; k++)
            if (wl_push(out, st->v[k]) != 0)
                return -1;
        st->n = from;
    }
    return 0;
}

/*
 * Frees one stuck component (the n nodes at m): each of its open nodes
 * where w_side moves gets its next known candidate; when none has one,
 * each is searched again, afresh and with the component blocked, which
 * finds a win that does not come back into it when there is one; that
 * win's first move is the node's new candidate. The wins found so are
 * mostly a few dozen positions deep, while a search that finds none runs
 * to its budget, so the budget starts small (BREAK_FIRST positions) and
 * grows eightfold, up to c->wcap, only when no node of the component
 * found one; a node whose search ended (won or not) is not searched again
 * while the graph is the same, nor one whose budget was as large.
 * RETURN the number of nodes that gained a candidate (or closed), -1 on
 * error.
 */
static int
unstick(dfpn_ctx *c, const uint32_t *m, uint32_t n)
{
    int grown = 0;
    for (uint32_t k = 0; k < n; k++) {
        if (c->wn[m[k]].state != WS_OPEN || !c->wn[m[k]].mover)
            continue;
        int r = win_widen(c, m[k]);
        if (r < 0)
            return -1;
        grown += r;
    }
    for (unsigned level = 0; !grown; level++) {
        uint64_t cap = (uint64_t)BREAK_FIRST << (3 * level);
        if (cap > c->wcap)
            cap = c->wcap;
        for (uint32_t k = 0; k < n; k++) {
            wnode *x = &c->wn[m[k]];
            if (x->state != WS_OPEN || !x->mover || (x->tried == c->wmap.n && x->level >= level))
                continue;
            x->tried = (uint32_t)c->wmap.n, x->level = (uint8_t)level;
            eng_pos p = x->pos;
            int r = win_research(c, &p, cap, x->idx + 1, 1);
            if (r < 0)
                return -1;
            if (r != 2) /* an answer: a larger budget gives the same */
                c->wn[m[k]].level = UINT8_MAX;
            if (r == 1 && (r = win_widen(c, m[k])) < 0)
                return -1;
            grown += r == 1;
        }
        if (cap >= c->wcap)
            break;
    }
    return grown;
}

/* Frees every stuck component below the root (stuck_parts, unstick).
 * RETURN how many were freed, or -1 on error. */
static int
win_unstick(dfpn_ctx *c, uint32_t root)
{
    if (stuck_parts(c, root) != 0)
        return no_memory(c), -1;
    int freed = 0;
    for (size_t h = 0; h < c->wsink.n; h += 1 + c->wsink.v[h]) {
        int r = unstick(c, &c->wsink.v[h + 1], c->wsink.v[h]);
        if (r < 0)
            return -1;
        freed += r;
    }
    return freed;
}

/*
 * win_walk - the win proof of path[0] (not a leaf) into the batch.
 * RETURN 0; 1 when it cannot be closed (c->stuck says why); -1 with
 * c->error set.
 */
static int
win_walk(dfpn_ctx *c)
{
    /* searches here are GHI-safe and keep no line: a loose fact (dfpn.h,
     * optimistic) can only deny a win, and none is needed */
    const eng_pos top = c->path[0];
    int loose = c->loose;
    c->loose = 0;
    c->wcap = c->nodes > BREAK_MAX_MIN ? c->nodes : BREAK_MAX_MIN;
    if (c->wcap < c->wcap_min) /* A WALK CUT SHORT... */
        c->wcap = c->wcap_min;
    int rc = 0;
    long root = win_node(c, &top);
    if (root < 0)
        return no_memory(c), -1;
    for (;;) {
        while (c->wstack.n && !c->error && !c->abort) {
            if (c->o->walk_max_positions && c->wmap.n >= c->o->walk_max_positions) {
                c->abort = 1; /* a test's stand-in for the clock */
                break;
            }
            uint32_t i = c->wstack.v[--c->wstack.n];
            if (c->wn[i].state == WS_NEW && win_expand(c, i) != 0)
                break;
        }
        if (c->error) {
            rc = -1;
        } else if (c->abort) {
            rc = walk_stuck(c, &top, cut_reason(c));
        } else if (c->wn[root].state == WS_DONE) {
            rc = proof_records(c, (uint32_t)root);
        } else if (c->wn[root].state == WS_FAIL) {
            rc = walk_stuck(c, &top, "a reply the proof needs is not won (a bug)");
        } else {
            int g = win_unstick(c, (uint32_t)root);
            if (g > 0)
                continue;
            if (g < 0)
                rc = c->error ? -1 : walk_stuck(c, &top, cut_reason(c));
            else
                rc = walk_stuck(
                    c, &top, "every won move below it comes back to it, even after new searches");
        }
        break;
    }
    c->loose = loose;
    c->path[0] = top;
    return rc;
}

/* ---- writing a draw ----------------------------------------------------- */

/*
 * WRITING A DRAW
 * The proof that w_side (the safety side) at least draws is a set of
 * positions closed under play: where w_side moves, one move into the set
 * or to a leaf; where the other side moves, every reply. It may have
 * cycles (going round one is a draw), so unlike a win it needs no order
 * among its positions: the walk builds a graph of candidates, as the win
 * walk does, and keeps the largest closed set in it (a greatest fixed
 * point, where the win walk closes the least): a node STANDS until it
 * FAILS.
 *   taking    where w_side moves, a node takes one candidate move at a
 *             time: a leaf that satisfies the goal, else a child that
 *             stands in the graph, else a child the table says w_side
 *             succeeds in; where the other side moves, every reply (a
 *             reply the table does not know is first searched again, as
 *             a root of its own). A position the path-dependent table
 *             says w_side succeeds in, on whatever line, counts as one
 *             the table knows, after the facts where w_side moves
 *             (SUCCESSES ON A LINE GUIDE THE WALK, below).
 *   failing   a node where the other side moves FAILS when a reply is a
 *             losing leaf or a failed node, or a search does not show
 *             that w_side succeeds there; a node where w_side moves
 *             FAILS when no candidate is left, after one new search of
 *             the node itself (whose children then come in, ranked by
 *             the table's numbers, when no fact names one: a draw that
 *             rests on a repetition of the node is not stored as a
 *             fact). A failure goes up at once: a parent where the other
 *             side moves fails, and a parent where w_side moves whose
 *             candidate it was takes its next one.
 *   closing   when no node is left to expand and the root stands, the
 *             nodes the root reaches by candidates and replies stand,
 *             and they are the proof.
 * Every position is expanded once and searched again at most once, so an
 * answer that cannot be closed (an optimistic search's draw resting on a
 * repetition as if it held on every line) is refused within one pass
 * over the positions it names. The table's facts only guide the choice:
 * a draw fact may be loose (an optimistic query's) and the set is closed
 * whatever they say; a fact that w_side fails is the other side's win,
 * which never rests on a repetition, so it is believed. (The walk this
 * replaces went depth first along one line, and rolled back what it had
 * taken below a failed choice: docs/solver.md, "The draw walk".)
 *
 * SUCCESSES ON A LINE GUIDE THE WALK. A GHI-safe search proves most of a
 * draw through repetitions of positions on its line; such a result is
 * not a fact (a fact holds on every line) but a path-dependent entry,
 * kept with the positions it rests on (dfpn.c, final_info). The walk has
 * no line: its graph's cycles are its repetitions. So it takes a
 * position the path-dependent table says w_side succeeds in, on whatever
 * line, as it takes a fact: a node, expanded in turn, not searched again.
 * Where the guide is wrong the node fails in the graph, as one a loose
 * fact named does. And a guide can be wrong: the position may be lost on
 * every line of the graph, its draw resting on a repetition of a
 * position the graph does not reach from it; the failure below it then
 * costs searches that find nothing. So where w_side moves a fact comes
 * first and a guide second: on W:WK9,K26:B21,K18,K29, "White at least
 * draws?" (1 MB table, 2 M positions), the walk with the guides ranked
 * as facts ran out of its 1 M positions; ranked after them it searched
 * 1,497 positions again, and 308,767 without guides. Measured with
 * `solve --store --time 60` on the draw W:WK24,K26,K30:BK8,K14,K28 (2-4
 * databases): White's draw walk searched 72.5 M positions again in
 * 25.3 s and was cut short, nothing proved; with the guide 10,710 in
 * 0.4 s, and the proof of 99,051 positions was written (docs/solver.md,
 * "The draw walk's guide").
 */

/* The table's fact on q: 1 w_side succeeds, 0 it fails; else 2 when the
 * path-dependent table has w_side succeed there on some line (a guide:
 * SUCCESSES ON A LINE GUIDE THE WALK), -1 when nothing is known; *num:
 * without a fact, w_side's number in the live open entry (UINT32_MAX
 * when there is none). */
static int
known_draw(dfpn_ctx *c, const eng_pos *q, uint32_t *num)
{
    look l;
    dfpn_tt_find_kept(c, q, eng_key(q), &l);
    if (l.fin)
        return l.att_won == (c->w_side == c->attacker);
    if (dfpn_pt_says(c, q, eng_key(q), c->w_side == c->attacker))
        return 2; /* a success resting on a line's repetition: a guide */
    *num = !l.open ? UINT32_MAX : c->w_side == c->attacker ? l.open->pn : l.open->dn;
    return -1;
}

/*
 * Searches q again as a root of its own (win_research), within the walk's
 * budgets and at most c->wcap positions.
 * RETURN 1 w_side succeeds there, 0 it does not or the search could not
 * tell, -1 the walk is cut short (c->abort) or failed (c->error).
 */
static int
draw_research(dfpn_ctx *c, const eng_pos *q, int afresh)
{
    uint64_t limit = c->node_limit, cap = c->wcap;
    if (limit && c->nodes >= limit) {
        c->abort = 1;
        return -1;
    }
    if (limit && limit - c->nodes < cap)
        cap = limit - c->nodes;
    int r = win_research(c, q, cap, 0, afresh);
    c->node_limit = limit;
    return r == 2 ? 0 : r;
}

/*
 * Gives node i (standing, w_side moves) its next candidate (WRITING A
 * DRAW, taking); with any, also a child no fact names, the smallest
 * number first.
 * RETURN 1 when it has one, 0 when none is left, -1 on error.
 */
static int
draw_widen(dfpn_ctx *c, uint32_t i, int any)
{
    eng_pos p = c->wn[i].pos, q;
    eng_movelist ml;
    int n = eng_generate(&p, &ml, ENG_DUPS_MERGE), best = -1, rank = 4;
    uint32_t bestnum = UINT32_MAX;
    for (int k = 0; k < n; k++) {
        eng_make(&p, &ml.m[k], &q);
        int lf = walk_leaf(c, &q);
        if (lf == -2)
            return walk_fail(c, &q, "database probe failed"), -1;
        if (lf == 1) {
            c->wn[i].mv = (uint16_t)k;
            return 1;
        }
        if (lf == -1)
            continue;
        long j = pmap_find(&c->wmap, &q);
        if (j >= 0) {
            if (c->wn[j].state != WS_FAIL && rank > 1)
                best = k, rank = 1;
            continue;
        }
        uint32_t num = UINT32_MAX;
        int f = known_draw(c, &q, &num);
        if (f == 1 && rank > 2)
            best = k, rank = 2;
        else if (f == 2 && rank > 2) /* a guide: after the facts, before the rest */
            best = k, rank = 3, bestnum = 0;
        else if (f < 0 && any && (rank > 3 || (rank == 3 && num < bestnum)))
            best = k, rank = 3, bestnum = num;
    }
    if (best < 0)
        return 0;
    c->wn[i].mv = (uint16_t)best;
    return take_child(c, i, &p, &ml.m[best], best);
}

/* Node i (w_side moves) has no candidate left: unless done already, it
 * is searched again, and its children come in (draw_widen with any).
 * RETURN as draw_widen. */
static int
draw_retry(dfpn_ctx *c, uint32_t i)
{
    if (c->wn[i].level) /* searched again already */
        return 0;
    c->wn[i].level = 1;
    eng_pos p = c->wn[i].pos;
    int r = draw_research(c, &p, 1);
    if (r <= 0)
        return r;
    return draw_widen(c, i, 1);
}

/* Node i (standing, w_side moves) takes its next candidate: from its
 * children, else after its one new search (draw_retry).
 * RETURN as draw_widen. */
static int
draw_next(dfpn_ctx *c, uint32_t i)
{
    int r = draw_widen(c, i, c->wn[i].level);
    return r == 0 ? draw_retry(c, i) : r;
}

/*
 * Node i FAILS, and the failure goes up (WRITING A DRAW, failing).
 * RETURN 0, or -1 on error (c->error set, or the walk cut short).
 */
static int
draw_fail(dfpn_ctx *c, uint32_t i)
{
    wlist *f = &c->wprop;
    f->n = 0;
    c->wn[i].state = WS_FAIL;
    if (wl_push(f, i) != 0)
        return no_memory(c), -1;
    while (f->n) {
        uint32_t x = f->v[--f->n];
        for (uint32_t e = c->wn[x].parents; e != NO_EDGE; e = c->we[e].next) {
            uint32_t u = c->we[e].node;
            if (c->wn[u].state != WS_OPEN)
                continue;
            if (c->wn[u].mover) {
                if (c->wn[u].mv != c->we[e].mv) /* not its candidate */
                    continue;
                int r = draw_next(c, u);
                if (r < 0)
                    return -1;
                if (r > 0)
                    continue;
            }
            c->wn[u].state = WS_FAIL;
            if (wl_push(f, u) != 0)
                return no_memory(c), -1;
        }
    }
    return 0;
}

/*
 * Expands node i (WS_NEW): where w_side moves, its first candidate; where
 * the other side moves, an edge to every reply (the cheap refutations
 * first: a losing leaf, a failed node, a fact against w_side).
 * RETURN 0, or -1 on error (c->error set, or the walk cut short).
 */
static int
draw_expand(dfpn_ctx *c, uint32_t i)
{
    c->wn[i].state = WS_OPEN;
    if (c->wn[i].mover) {
        int r = draw_next(c, i); /* a new node: not searched again yet */
        if (r < 0)
            return -1;
        return r ? 0 : draw_fail(c, i);
    }
    eng_pos p = c->wn[i].pos, q;
    eng_movelist ml;
    int n = eng_generate(&p, &ml, ENG_DUPS_MERGE);
    /* each reply: 0 a satisfying leaf, 1 taken as it is (a node of the
     * graph, or a draw the table knows), 2 searched again first */
    uint8_t take[ENG_MAX_MOVES];
    for (int k = 0; k < n; k++) {
        eng_make(&p, &ml.m[k], &q);
        int lf = walk_leaf(c, &q);
        if (lf == -2)
            return walk_fail(c, &q, "database probe failed"), -1;
        if (lf == -1)
            return draw_fail(c, i);
        take[k] = 0;
        if (lf == 1)
            continue;
        long j = pmap_find(&c->wmap, &q);
        uint32_t num;
        int f = j < 0 ? known_draw(c, &q, &num) : c->wn[j].state == WS_FAIL ? 0 : 1;
        if (f == 0)
            return draw_fail(c, i);
        take[k] = f > 0 ? 1 : 2;
    }
    for (int k = 0; k < n; k++) {
        if (take[k] == 2) {
            eng_make(&p, &ml.m[k], &q);
            int f = draw_research(c, &q, 0);
            if (f <= 0)
                return f < 0 ? -1 : draw_fail(c, i);
        }
        if (take[k] && take_child(c, i, &p, &ml.m[k], k) < 0)
            return -1;
    }
    return 0;
}

/*
 * draw_walk - the draw proof of path[0] (not a leaf) into the batch.
 * RETURN 0; 1 when it cannot be closed (c->stuck says why); -1 with
 * c->error set.
 */
static int
draw_walk(dfpn_ctx *c)
{
    const eng_pos top = c->path[0];
    c->wcap = c->nodes / DRAW_RESEARCH_SHARE > BREAK_MAX_MIN ? c->nodes / DRAW_RESEARCH_SHARE
                                                             : BREAK_MAX_MIN;
    if (c->wcap < c->wcap_min) /* A WALK CUT SHORT... */
        c->wcap = c->wcap_min;
    int rc = 0;
    long root = win_node(c, &top);
    if (root < 0)
        return no_memory(c), -1;
    while (c->wstack.n && !c->error && !c->abort && c->wn[root].state != WS_FAIL) {
        uint32_t i = c->wstack.v[--c->wstack.n];
        if (walk_cut(c) || (c->o->walk_max_positions && c->wmap.n >= c->o->walk_max_positions))
            c->abort = 1; /* the cap: a test's stand-in for the clock */
        else if (c->wn[i].state == WS_NEW && draw_expand(c, i) != 0)
            break;
    }
    if (c->error)
        rc = -1;
    else if (c->abort)
        rc = walk_stuck(c, &top, cut_reason(c));
    else if (c->wn[root].state == WS_FAIL)
        rc = walk_stuck(c, &top, "no move keeps the proof, even after new searches");
    else
        rc = proof_records(c, (uint32_t)root);
    c->path[0] = top;
    return rc;
}

/* ---- the proof as a whole ---------------------------------------------- */

/* The main line of the written proof, from the set. */
static void
main_line(dfpn_ctx *c, const eng_pos *root, dfpn_result *out)
{
    eng_pos p = *root;
    out->pvlen = 0;
    for (int k = 0; k < 128; k++) {
        long se = pmap_find(&c->wmap, &p);
        if (se < 0 || c->wn[se].state != WS_DONE || c->wn[se].item == NO_ITEM)
            break;
        const pst_record *r = &c->items[c->wn[se].item].rec;
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
                long x = pmap_find(&c->wmap, &q);
                if (x >= 0 && c->wn[x].state == WS_DONE && c->wn[x].item != NO_ITEM &&
                    c->wn[x].len > bl)
                    bl = c->wn[x].len, bi = i;
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

/*
 * A WALK CUT SHORT GETS TWICE AS MUCH NEXT TIME. A walk gets half of
 * what is left of its query's time, and the draw walk's searches a share
 * of the positions its query searched. When a walk runs out, the next run
 * of the same query (a re-job of the leaf) finds the answer at once in
 * the table and walks again: with half of its own job's time, which may
 * be less than the walk that ran out had, and with searches capped by the
 * few positions that query took. Found in a ladder run: "Black draws" of
 * B:W12,18,21,22,25,32:B3,6,10,11,15,20 proved in a 20 s job whose walk
 * ran out after 24.7 s, and walked again, and cut again, in the next
 * job. So the context keeps the last NWCUT walks cut short (root,
 * question, the time, positions and search cap they had), and a walk of
 * the same query gets at least twice each, even past its job's budget
 * (a worker's late result is still taken). What the cut walk's searches
 * proved stays in the table.
 */
static wcut *
find_wcut(dfpn_ctx *c, const eng_pos *root)
{
    for (int i = 0; i < NWCUT; i++) {
        wcut *w = &c->wcuts[i];
        if (w->used && w->attacker == c->attacker && w->goal == c->goal &&
            eng_equal(&w->root, root))
            return w;
    }
    return NULL;
}

static void
remember_wcut(dfpn_ctx *c, const eng_pos *root, double seconds, uint64_t nodes, uint64_t cap)
{
    wcut *w = find_wcut(c, root);
    if (!w)
        w = &c->wcuts[c->nwcut++ % NWCUT];
    w->root = *root;
    w->used = 1;
    w->attacker = (uint8_t)c->attacker;
    w->goal = (uint8_t)c->goal;
    w->seconds = seconds;
    w->nodes = nodes;
    w->cap = cap;
}

/*
 * A WIN WALK CUT SHORT KEEPS WHAT IT CLOSED. Every WON node of the win
 * walk is a whole proof on its own: its move (or every reply) leads to
 * leaves and WON nodes of smaller length, down to the checker's leaves.
 * So when the walk runs out of time or positions, those proofs are
 * written (in one transaction, as a finished walk's are), and the next
 * walk of the query takes each of them as a leaf (walk_leaf reads the
 * store): it goes on from where this one stopped instead of walking the
 * same positions again. Before, a cut walk wrote nothing: in `prove` on
 * W:W21,28,K32:BK19,K25 (2-4 databases), whose proof after the
 * optimistic search is 1.67 M positions, a job's walk ran out, and the
 * next job walked again from the root, and could run out again
 * (docs/solver.md, "A proof that takes long to write"). A draw walk keeps
 * the closed part of what stands (A DRAW WALK CUT SHORT KEEPS WHAT IS
 * CLOSED, above).
 * RETURN 0, or DFPN_ENOMEM / DFPN_ESTORE (c->error set).
 */
/*
 * A DRAW WALK CUT SHORT KEEPS WHAT IS CLOSED. The standing nodes of a cut
 * draw walk are not a proof, since some of them wait on nodes never
 * expanded. But the largest set of them that is closed under play (where
 * w_side moves, its candidate is a satisfying leaf or in the set; where
 * the other side moves, every reply is) is a proof that w_side at least
 * draws from each of its positions, cycles and all (WRITING A DRAW). It
 * is found as the walk finds its own, a greatest fixed point: the
 * unexpanded nodes fail, and so does every standing node whose own moves
 * do not check out (a reply missing where the walk was cut inside an
 * expansion); a failure goes up the parents' edges (where w_side moves,
 * only to a parent whose candidate it was). What stands then is written,
 * and the next walk of the query reads it as leaves. Before, a cut draw
 * walk wrote nothing: W:WK24,K26,K30:BK8,K14,K28 (2-4 databases), which
 * `solve` proves a draw, never settled under `solve --store` or `prove`
 * (docs/solver.md, "Facts kept aside").
 * RETURN 0, or -1 with c->error set.
 */
static int
draw_closed(dfpn_ctx *c)
{
    wlist *f = &c->wprop;
    f->n = 0;
    for (size_t i = 0; i < c->wmap.n; i++) {
        wnode *n = &c->wn[i];
        int ok = n->state == WS_OPEN;
        eng_pos p = n->pos, q;
        eng_movelist ml;
        int k = ok ? eng_generate(&p, &ml, ENG_DUPS_MERGE) : 0, k0 = 0;
        if (ok && n->mover)
            k0 = n->mv, k = n->mv + 1;
        for (int m = k0; ok && m < k; m++) {
            eng_make(&p, &ml.m[m], &q);
            int lf = walk_leaf(c, &q);
            if (lf == 1)
                continue;
            long j = lf == 0 ? pmap_find(&c->wmap, &q) : -1;
            ok = j >= 0 && (c->wn[j].state == WS_OPEN || c->wn[j].state == WS_NEW);
            ok = ok && has_edge(c, (uint32_t)i, (uint32_t)j);
        }
        if (!ok && n->state != WS_FAIL) {
            n->state = WS_FAIL;
            if (wl_push(f, (uint32_t)i) != 0)
                return no_memory(c), -1;
        }
    }
    while (f->n) {
        uint32_t x = f->v[--f->n];
        for (uint32_t e = c->wn[x].parents; e != NO_EDGE; e = c->we[e].next) {
            uint32_t u = c->we[e].node;
            if (c->wn[u].state != WS_OPEN || (c->wn[u].mover && c->wn[u].mv != c->we[e].mv))
                continue;
            c->wn[u].state = WS_FAIL;
            if (wl_push(f, u) != 0)
                return no_memory(c), -1;
        }
    }
    return 0;
}

static int
keep_won(dfpn_ctx *c, dfpn_result *out)
{
    c->nitems = 0;
    c->nrests = 0;
    if (!c->w_reach && draw_closed(c) != 0) /* A DRAW WALK CUT SHORT... */
        return c->error;
    uint8_t whole = c->w_reach ? WS_DONE : WS_OPEN;
    for (size_t i = 0; i < c->wmap.n; i++)
        if (c->wn[i].state == whole && c->wn[i].item == NO_ITEM &&
            proof_records(c, (uint32_t)i) != 0)
            return c->error;
    if (!c->nitems)
        return 0;
    char e[256];
    int rc = pst_put_many(c->o->store, c->items, c->nitems, e, sizeof e);
    if (rc != 0) {
        char m[300];
        snprintf(m, sizeof m, "keeping the proof written so far: %s", e);
        dfpn_set_error(c, DFPN_ESTORE, m);
        return DFPN_ESTORE;
    }
    out->kept_records = c->nitems;
    return 0;
}

int
dfpn_write_proof(dfpn_ctx *c, int attacker_won_root, int put, dfpn_result *out)
{
    const eng_pos root = c->path[0];
    c->w_side = attacker_won_root ? c->attacker : !c->attacker;
    c->w_reach = c->w_side != c->safety;
    pmap_clear(&c->wmap);
    c->wstack.n = c->wprop.n = c->wq.n = 0;
    c->nwe = 0;
    c->nitems = 0;
    c->nrests = 0;
    c->top = 0;
    c->researched = 0;
    /* The walk may search again: it gets a budget of its own, half the
     * query's time (at least 5 s). Without a time limit the win walk has
     * none (it expands each position once, and searches only what a
     * proof needs), the draw walk a minute (its searches of positions
     * the table does not know may each run to c->wcap). */
    double tl = c->o->time_limit;
    c->deadline = tl > 0 ? now() + (tl / 2 > 5 ? tl / 2 : 5) : c->w_reach ? 0 : now() + 60;
    /* with a node budget, the walk's searches get half of it more, and at
     * least DFPN_WALK_MIN_NODES (a small job's proof must still be
     * written): without a limit they ran on for their minute (87 million
     * nodes for a 10-million-node solve of an 8-piece position) */
    uint64_t wl = c->o->node_limit / 2;
    c->node_limit =
        c->o->node_limit ? c->nodes + (wl > DFPN_WALK_MIN_NODES ? wl : DFPN_WALK_MIN_NODES) : 0;
    /* VERIFYING AN OPTIMISTIC ANSWER. A safety result of an optimistic
     * search (dfpn.h) stands only if this walk closes it; when it cannot,
     * the GHI-safe search runs next. A walk that is not closing is mostly
     * one that will not: so it gets DFPN_VERIFY_TIMES the search's own
     * time and positions (at least DFPN_VERIFY_MIN_S and
     * DFPN_WALK_MIN_NODES), not half the query's. Measured on
     * W:W28,32,K1,K12:B3,19,20,23,K6,K27 (docs/solver.md): a draw whose
     * four searches take 2.6 M positions spent 45 s in two refused
     * walks. */
    int verify_walk = c->o->optimistic && !c->w_reach;
    if (verify_walk) {
        double spent = now() - c->t0;
        double vt = spent * DFPN_VERIFY_TIMES > DFPN_VERIFY_MIN_S ? spent * DFPN_VERIFY_TIMES
                                                                  : DFPN_VERIFY_MIN_S;
        if (c->deadline == 0 || now() + vt < c->deadline)
            c->deadline = now() + vt;
        uint64_t vn = c->nodes * DFPN_VERIFY_TIMES > DFPN_WALK_MIN_NODES
                          ? c->nodes * DFPN_VERIFY_TIMES
                          : DFPN_WALK_MIN_NODES;
        if (!c->node_limit || c->nodes + vn < c->node_limit)
            c->node_limit = c->nodes + vn;
    }
    /* a walk of this query was cut short before: twice what it had */
    const wcut *cut = verify_walk ? NULL : find_wcut(c, &root);
    if (cut) {
        double t = 2 * cut->seconds;
        if (c->deadline > 0 && c->deadline < now() + t)
            c->deadline = now() + t;
        if (c->node_limit && c->node_limit < c->nodes + 2 * cut->nodes)
            c->node_limit = c->nodes + 2 * cut->nodes;
    }
    c->wcap_min = cut ? 2 * cut->cap : 0;
    double w_t0 = now();
    uint64_t w_n0 = c->nodes;
    c->abort = 0;
    /* the walk's own steps go to the full depth (its searches of positions
     * as roots start their rounds afresh: win_research); the open numbers
     * of the last round saw its cut, so they are forgotten */
    c->maxply = DFPN_MAXPLY;
    c->round++;
    int lf = walk_leaf(c, &root);
    if (lf == 1) {
        /* the root is a leaf: nothing to write; a stored one is what the
         * answer rests on (dfpn_last_proof) */
        if (c->leaf_stored && add_rest(c, &root) != 0)
            return no_memory(c), c->error;
        c->proof_put = put && c->o->store;
        return 0;
    }
    if (lf < 0) {
        walk_fail(c, &root, "the root's leaf value contradicts the answer");
        return c->error;
    }
    int wr;
    if (c->w_reach) {
        wr = win_walk(c);
        c->path[0] = root; /* its searches ran from roots of their own */
    } else {
        wr = draw_walk(c);
    }
    out->walk_seconds = now() - w_t0;
    out->walk_nodes = c->nodes - w_n0;
    if (wr != 0 && c->abort && !verify_walk && !prv_stopped(c->o->stop))
        remember_wcut(c, &root, now() - w_t0, c->nodes - w_n0, c->wcap);
    /* cut short (time, positions, or a stop): a walk keeps what it closed
     * (A WIN WALK CUT SHORT KEEPS WHAT IT CLOSED, A DRAW WALK ...) */
    if (wr != 0 && c->abort && !c->error && c->o->store && put) {
        int k = keep_won(c, out);
        if (k != 0)
            return k;
    }
    if (wr > 0 && out->kept_records) {
        char m[sizeof c->stuck + 96];
        snprintf(m, sizeof m, "%s (%" PRIu64 " positions of the proof kept for the next walk)",
                 c->stuck, out->kept_records);
        dfpn_set_error(c, DFPN_EPROOF, m);
    } else if (wr > 0) {
        dfpn_set_error(c, DFPN_EPROOF, c->stuck);
    }
    if (wr != 0)
        return c->error ? c->error : DFPN_EPROOF;
    out->researched = c->researched;
    long r = pmap_find(&c->wmap, &root);
    out->proof_length = c->w_reach && r >= 0 ? c->wn[r].len : -1;
    main_line(c, &root, out);
    if (c->o->store && put) {
        char e[256];
        int rc = pst_put_many(c->o->store, c->items, c->nitems, e, sizeof e);
        if (rc != 0) {
            char m[300];
            snprintf(m, sizeof m, "writing the proof: %s", e);
            dfpn_set_error(c, DFPN_ESTORE, m);
            return DFPN_ESTORE;
        }
        out->proof_records = c->nitems;
        c->proof_put = 1;
    }
    return 0;
}
