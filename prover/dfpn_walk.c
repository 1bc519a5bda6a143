/*
 * dfpn_walk.c - writing the proof of an answered query into the
 * proven-node store (prover.h, WRITING A PROOF; dfpn_internal.h says how
 * the solver's parts fit).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/value.h"
#include "prover/dfpn_internal.h"

/* The least node budget of a walk's searches when the query had one. */
#define DFPN_WALK_MIN_NODES 1000000u

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
    dfpn_set_error(c, DFPN_EPROOF, m);
}

/* Searches path[ply] again (its line is the walk's) until it is solved;
 * *self gets the result. */
static void
research(dfpn_ctx *c, int ply, child *self)
{
    c->researched++;
    for (int k = 0; k < 64 && !c->abort && !is_final(self->pn, self->dn); k++)
        dfpn_mid(c, ply, DEEP, DEEP, 0, self);
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
        return dfpn_set_error(c, DFPN_ENOMEM, "out of memory writing the proof"), -1;
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
        int n = dfpn_expand(c, ply, &ch);
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
                    dfpn_descend(c, ply, x);
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
                dfpn_descend(c, ply, x);
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
    dfpn_tt_find(c, &p, eng_key(&p), &l);
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

int
dfpn_write_proof(dfpn_ctx *c, int attacker_won_root, int put, dfpn_result *out)
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
    /* with a node budget, the walk's searches get half of it more, and at
     * least DFPN_WALK_MIN_NODES (a small job's proof must still be
     * written): without a limit they ran on for their minute (87 million
     * nodes for a 10-million-node solve of an 8-piece position) */
    uint64_t wl = c->o->node_limit / 2;
    c->node_limit =
        c->o->node_limit ? c->nodes + (wl > DFPN_WALK_MIN_NODES ? wl : DFPN_WALK_MIN_NODES) : 0;
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
        dfpn_set_error(c, DFPN_EPROOF, c->stuck);
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
            dfpn_set_error(c, DFPN_ESTORE, m);
            return DFPN_ESTORE;
        }
        out->proof_records = c->nitems;
    }
    return 0;
}
