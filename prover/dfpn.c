/*
 * dfpn.c - depth-first proof-number search with GHI-safe repetitions: the
 * search and the interface of dfpn.h. The table is dfpn_table.c, the
 * writing of whole proofs into the proven-node store dfpn_walk.c
 * (dfpn_internal.h says how the parts fit).
 *
 * Read prover.h (REPETITIONS AND GHI, WRITING A PROOF) first: it states
 * what this file guarantees and why; the comments here say how. Numbers
 * are in the attacker's frame (dfpn_internal.h).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "engine/value.h"
#include "prover/dfpn_internal.h"
#include "prover/leaf.h"
#include "prover/search.h"

/* ---- small helpers ---------------------------------------------------- */

static uint32_t
sat_add(uint32_t a, uint32_t b)
{
    if (a >= DFPN_INF || b >= DFPN_INF)
        return DFPN_INF;
    uint32_t s = a + b; /* both < 2^30: no wrap */
    return s >= DFPN_INF ? SAT : s;
}

static void
set_success(child *ch, int attacker_success)
{
    ch->pn = attacker_success ? 0 : DFPN_INF;
    ch->dn = attacker_success ? DFPN_INF : 0;
}

void
dfpn_set_error(dfpn_ctx *c, int code, const char *msg)
{
    if (!c->error) {
        c->error = code;
        snprintf(c->emsg, sizeof c->emsg, "%s", msg);
    }
    c->abort = 1;
}

/* ---- budget and progress ---------------------------------------------- */

static void
budget(dfpn_ctx *c)
{
    if (prv_stopped(c->o->stop))
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

/* The query as a question (engine/value.h), for the leaf rule. */
static eng_question
query_question(const dfpn_ctx *c)
{
    return (eng_question){c->attacker, c->goal == DFPN_WIN ? ENG_WIN : ENG_DRAW};
}

/*
 * INITIAL NUMBERS. A new position's numbers start from mobility (the
 * side to move's move count is the number it sums: 1 to prove an OR node,
 * nm for an AND node's), scaled by the static evaluation (ab_eval): the
 * further the attacker's score lies below what the goal needs (+30 for a
 * win, -30 for at least a draw, in hundredths of a man), the larger the
 * proof number, one step per DFPN_EV_STEP; the further above, the larger
 * the disproof number. So the search first follows the lines the
 * evaluation favours for the question asked (Winands and Schadd's
 * evaluation-based initial numbers). Measured with 10 million nodes a
 * position and the 1-6 databases (docs/solver.md, "Level positions"):
 * on 18 frontier rungs of 8-10 pieces one more bound and 34-35% fewer
 * nodes on the two it proves; on the 16 ten-piece rungs of the level
 * ladder one more bound; on the 2,000 five-piece test positions the same
 * 82.2% proved.
 */
#define DFPN_EV_STEP 50
#define DFPN_EV_NEED 30

static void
init_numbers(const dfpn_ctx *c, const eng_pos *p, uint32_t nm, uint32_t *pn, uint32_t *dn)
{
    if (p->stm == c->attacker)
        *pn = 1, *dn = nm;
    else
        *pn = nm, *dn = 1;
    int sc = ab_eval(p);
    int sa = p->stm == c->attacker ? sc : -sc;
    int m = sa - (c->goal == DFPN_WIN ? DFPN_EV_NEED : -DFPN_EV_NEED);
    if (m < 0)
        *pn *= (uint32_t)(1 + -m / DFPN_EV_STEP);
    else
        *dn *= (uint32_t)(1 + m / DFPN_EV_STEP);
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
 *   7. the table's numbers, or initial numbers (INITIAL NUMBERS).
 * Before all of them, while the win walk searches with a stuck component
 * of its graph blocked (c->wblock; dfpn_walk.c, WRITING A WIN), a
 * position of it below the search's root is the safety side's success,
 * as a repetition is, but resting on the walk rather than on any line: so
 * nothing that rests on it is ever stored (rep_up past any line,
 * DEP_OVER).
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

    if (c->wblock && ply > 0) {
        long w = pmap_find(&c->wmap, p);
        if (w >= 0 && c->wn[w].state == WS_OPEN && c->wn[w].seen == c->wseen &&
            c->wn[w].idx == c->wblock - 1) {
            set_success(ch, c->safety == c->attacker);
            ch->rep_up = DFPN_MAXPLY + 1;
            ch->d.n = DEP_OVER;
            ch->leaf = LEAF_BLOCK;
            return;
        }
    }
    look l;
    dfpn_tt_find(c, p, ch->key, &l);
    if (l.fin) {
        from_tt(ch, &l);
        return;
    }
    /* 2. repetition: only positions since the last irreversible move can
     * recur, and only those with the same side to move (two plies apart). */
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
    uint64_t nm = eng_count_moves(p, ENG_DUPS_MERGE);
    if (nm == 0) { /* 3. the side to move has lost */
        set_success(ch, p->stm != c->attacker);
        ch->leaf = LEAF_END;
        return;
    }
    const dfpn_opts *o = c->o;
    if (o->db && (egdb_scope_has(o->db_pieces, p) || (o->db_pieces & EGDB_SCOPE_PARTIAL))) {
        /* 4. the databases (prover/leaf.h): an exact value always, a
         * partial bound only when it answers this query. */
        pleaf lf;
        int rc = pleaf_of(o->db, o->db_pieces, p, PLEAF_QUIET | PLEAF_MOVES, &lf);
        if (rc < 0) {
            char fen[ENG_FEN_MAX], m[200];
            eng_format_fen(p, fen, sizeof fen);
            snprintf(m, sizeof m, "database probe of %s failed: %s", fen, egdb_strerror(rc));
            dfpn_set_error(c, DFPN_EDB, m);
            ch->fixed = 0, ch->pn = ch->dn = SAT;
            return;
        }
        eng_question q = query_question(c);
        int a = pleaf_answer(&lf, &q, p->stm);
        if (lf.kind != PLEAF_NONE)
            c->probes++;
        if (a != 0) {
            set_success(ch, a > 0);
            ch->leaf = LEAF_DB;
            return;
        }
    }
    /* 5. The store is read when a position is first met in a query's
     * round, not again while its open entry lives: the lookup is a
     * B-tree descent, and asked at every visit of every child it took a
     * quarter of the search's time (docs/solver.md, "The store's
     * lookups"). A record another process writes meanwhile is seen in
     * the next round or query. */
    if (o->store && !l.open) {
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
                dfpn_tt_put(c, p, ch->key, ch->pn, ch->dn, 0, 0, ply, 0);
                return;
            }
        }
        if (rc != PST_ENOTFOUND) {
            char m[200];
            snprintf(m, sizeof m, "proven-node store: %s", pst_strerror(rc));
            dfpn_set_error(c, DFPN_ESTORE, m);
            ch->fixed = 0, ch->pn = ch->dn = SAT;
            return;
        }
    }
    int up; /* 6. */
    const pt_entry *q = dfpn_pt_get(c, p, ch->key, ch->irrev ? ply : c->seg[ply - 1], ply, &up);
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
    } else {
        init_numbers(c, p, (uint32_t)nm, &ch->pn, &ch->dn);
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
    dfpn_tt_find(c, &ch->pos, ch->key, &l);
    if (l.fin) {
        from_tt(ch, &l);
        return;
    }
    int up;
    const pt_entry *q =
        dfpn_pt_get(c, &ch->pos, ch->key, ch->irrev ? ply : c->seg[ply - 1], ply, &up);
    if (q) {
        from_pt(ch, q, up);
        return;
    }
    if (l.open && ch->leaf != LEAF_CUT) {
        ch->pn = l.open->pn, ch->dn = l.open->dn;
        ch->min_depth = l.open->min_depth;
    }
}

/* Generates the children of path[ply] into the arena (c->top grows; the
 * caller restores it) and values them.
 * RETURN the number of children, or -1 when the line is too deep. */
static int
dfpn_expand(dfpn_ctx *c, int ply, child **out)
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

/* The child x of path[ply] becomes path[ply+1]. */
static void
dfpn_descend(dfpn_ctx *c, int ply, const child *x)
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
 * dfpn_mid - Nagai's multiple iterative deepening at path[ply]: search below
 * it until its proof number reaches thpn or its disproof number thdn, or
 * it is solved, or the budget runs out; then record what it learnt.
 * The node's numbers, and when it is solved what it rests on, are also
 * written to *self (its entry in the parent's list of children): a
 * path-dependent result resting on more positions than a table entry
 * names is kept nowhere else.
 * PRECONDITION: path[ply] is not a leaf (it has moves and is not valued
 * by the databases, the store or a repetition).
 */
void
dfpn_mid(dfpn_ctx *c, int ply, uint32_t thpn, uint32_t thdn, int inc, child *self)
{
    const eng_pos *p = &c->path[ply];
    uint64_t key = eng_key(p);
    uint64_t exp0 = c->expanded;
    size_t top0 = c->top;
    child *ch;
    int n = dfpn_expand(c, ply, &ch);
    if (n <= 0) { /* too deep: leave it open, and make it unattractive to
                     both sides without saturating the sums above it */
        c->top = top0;
        dfpn_tt_put(c, p, key, DEEP, DEEP, 0, 1, ply, 0);
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
        dfpn_descend(c, ply, x);
        dfpn_mid(c, ply + 1, cpn, cdn, inc, x);
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
            dfpn_tt_put(c, p, key, pn, dn, (uint16_t)len, work, ply, loose);
        else if (d.n != DEP_OVER) /* lines holding d only */
            dfpn_pt_put(c, p, key, pn == 0, &d, len);
    } else {
        dfpn_tt_put(c, p, key, pn, dn, 0, work, ply, 0);
    }
    c->top = top0;
}

/* ---- a search from a root --------------------------------------------- */

void
dfpn_root(dfpn_ctx *c, const eng_pos *root, int value, child *rc)
{
    c->top = 0;
    c->path[0] = *root;
    c->seg[0] = 0;
    memset(rc, 0, sizeof *rc);
    rc->pos = *root;
    rc->key = eng_key(root);
    rc->irrev = 1;
    if (value) /* the root itself may be a leaf: value it as a child of nothing */
        value_child(c, 0, rc);
    else
        rc->pn = rc->dn = 1;
}

/*
 * DEPTH LIMIT. In king endings a line can run for hundreds of plies
 * without repeating, and a plain df-pn dives down them. So the search
 * runs with a depth limit that grows (by half, from FIRST_DEPTH plies to
 * DFPN_MAXPLY): positions past it are open and blocked (both numbers
 * DEEP), so the search stops when only such lines are left, and the
 * next round goes deeper. Proofs and disproofs never rest on a cut
 * position, so every final result of a round is true in the next; the
 * numbers of open positions are not (they saw the cut), so a new round
 * forgets them, and a round too shallow for the proof costs a whole
 * round's work. FIRST_DEPTH was 24 and is 96: with 24, a king ending's
 * win (30-60 plies) or a level position's line to the databases took
 * several rounds, each starting over (docs/solver.md, "The depth
 * limit's first round"). One round at the full depth stays a bad idea:
 * the search then ends at once when a line reaches DFPN_MAXPLY.
 */
void
dfpn_deepen(dfpn_ctx *c, child *rc)
{
    if (c->error || is_final(rc->pn, rc->dn))
        return;
    while (!c->abort) {
        dfpn_mid(c, 0, DEEP, DEEP, 0, rc);
        if (is_final(rc->pn, rc->dn) || c->abort || c->maxply >= DFPN_MAXPLY)
            break;
        c->maxply = c->maxply * 3 / 2 > DFPN_MAXPLY ? DFPN_MAXPLY : c->maxply * 3 / 2;
        c->round++; /* forgets the open entries: see open_live() */
    }
}

/* ---- the interface ----------------------------------------------------- */

/*
 * THE TABLE'S PAGES. The tables are read at random, one entry a position
 * valued: with 4 KB pages nearly every read of a 256 MB table also misses
 * the TLB. They are mapped on their own, aligned to 2 MB, and the kernel
 * is asked for huge pages (MADV_HUGEPAGE: Debian's default transparent
 * huge pages are "madvise", so a plain calloc gets none; the database
 * cache does the same, egdb/cache.c). Measured with `solve --nodes
 * 60000000` on three ten-piece level positions, the same positions
 * valued: x1.05 to x1.24 positions a second (docs/solver.md, "The table's
 * pages"). Where the kernel
 * gives none, it is the same memory with small pages. Zeroed, as
 * calloc's was.
 */
#define HUGE_PAGE (2u << 20)

void *
dfpn_table_alloc(size_t bytes)
{
    size_t len = bytes + HUGE_PAGE;
    char *m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED)
        return NULL;
    char *p = (char *)(((uintptr_t)m + HUGE_PAGE - 1) & ~(uintptr_t)(HUGE_PAGE - 1));
    if (p > m) /* the unaligned head and tail go back */
        munmap(m, (size_t)(p - m));
    if (m + len > p + bytes)
        munmap(p + bytes, (size_t)(m + len - (p + bytes)));
#ifdef MADV_HUGEPAGE
    (void)madvise(p, bytes, MADV_HUGEPAGE); /* advisory: fine if refused */
#endif
    return p;
}

void
dfpn_table_free(void *p, size_t bytes)
{
    if (p)
        munmap(p, bytes);
}

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
    c->tt = dfpn_table_alloc(nb * BUCKET * sizeof *c->tt);
    c->pt = dfpn_table_alloc(c->npt * sizeof *c->pt);
    c->ptag = dfpn_table_alloc(c->npt * sizeof *c->ptag);
    c->pbits = calloc(PT_BITS / 64, sizeof *c->pbits);
    c->arena = malloc(ARENA_CHILDREN * sizeof *c->arena);
    if (!c->tt || !c->pt || !c->ptag || !c->pbits || !c->arena) {
        dfpn_free(c);
        return DFPN_ENOMEM;
    }
    *out = c;
    return 0;
}

void
dfpn_set_kept(dfpn_ctx *c, size_t max_bytes)
{
    size_t n = 1;
    while (n * 2 * sizeof *c->kept <= max_bytes)
        n *= 2;
    c->kmax = max_bytes >= sizeof *c->kept * KEPT_MIN ? n : 0;
}

void
dfpn_free(dfpn_ctx *c)
{
    if (!c)
        return;
    dfpn_table_free(c->tt, c->nbuckets * BUCKET * sizeof *c->tt);
    dfpn_table_free(c->pt, c->npt * sizeof *c->pt);
    dfpn_table_free(c->ptag, c->npt * sizeof *c->ptag);
    free(c->pbits);
    dfpn_table_free(c->kept, c->kcap * sizeof *c->kept);
    free(c->arena);
    pmap_free(&c->wmap);
    free(c->wn);
    free(c->we);
    free(c->wstack.v);
    free(c->wprop.v);
    free(c->wq.v);
    free(c->wsink.v);
    free(c->items);
    free(c->rests);
    free(c);
}

int
dfpn_last_proof(const dfpn_ctx *c, const pst_item **items, size_t *nitems, const eng_pos **rests,
                size_t *nrests)
{
    if (!c->proof_put) {
        *items = NULL, *nitems = 0, *rests = NULL, *nrests = 0;
        return 0;
    }
    *items = c->items, *nitems = c->nitems;
    *rests = c->rests, *nrests = c->nrests;
    return 1;
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

/*
 * A REFUTED QUERY IS NOT ASKED OPTIMISTICALLY AGAIN. When the walk
 * refuses an optimistic answer, prv_solve runs the GHI-safe search with
 * what is left of the budget, and an unanswered safe search is resumed by
 * the next run of the same query (a re-job). But that next run began
 * optimistic again: a new optimistic query (its loose facts serve only
 * their own query), which reached the same unclosable answer, and a walk
 * that refused it again, each job, so the safe search only ever had what
 * the two left over. In a manager's root series of 10 s and 20 s jobs
 * (the level ladder's B:W12,18,21,22,25,32:B3,6,10,11,15,20, Black to
 * move draws) the jobs ran 13.3 s and 27.3 s and proved nothing, where
 * one `solve` of 60 s proves ">=draw". So the context remembers the last
 * NREFUTED queries refuted (position and question), and an optimistic
 * run of one of them returns at once, refuted, with nothing searched: the
 * caller goes straight to the safe search, which resumes.
 */
static int
refuted_before(const dfpn_ctx *c, const eng_pos *root, const eng_question *q)
{
    for (int i = 0; i < NREFUTED; i++) {
        const refq *r = &c->refuted[i];
        if (r->used && r->attacker == q->attacker && r->goal == q->target &&
            eng_equal(&r->root, root))
            return 1;
    }
    return 0;
}

static void
remember_refuted(dfpn_ctx *c, const eng_pos *root, const eng_question *q)
{
    if (refuted_before(c, root, q))
        return;
    refq *r = &c->refuted[c->nrefuted++ % NREFUTED];
    r->root = *root;
    r->used = 1;
    r->attacker = (uint8_t)q->attacker;
    r->goal = (uint8_t)q->target;
}

int
dfpn_prove(dfpn_ctx *c, const eng_pos *root, const eng_question *q, const dfpn_opts *o,
           dfpn_result *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    out->proof_length = -1;
    c->proof_put = 0; /* dfpn_last_proof: nothing of this query yet */
    if (eng_validate(root, err, errlen) != 0 || !eng_question_valid(q) ||
        (o->ghi_naive && o->store))
        return DFPN_EINVAL;
    if (o->optimistic && refuted_before(c, root, q)) {
        out->refuted = 1;
        return 0;
    }
    dfpn_new_generation(c);
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
    c->root_pn = c->root_dn = 1;
    child rc;
    dfpn_root(c, root, 1, &rc);
    c->maxply = first_depth(o);
    c->round = 0;
    dfpn_resume(c, root);
    out->resumed = c->resumed;
    dfpn_deepen(c, &rc);
    uint32_t pn = rc.pn, dn = rc.dn;
    out->pn = pn;
    out->dn = dn;
    out->status = pn == 0 ? DFPN_PROVEN : dn == 0 ? DFPN_DISPROVEN : DFPN_UNKNOWN;
    if (out->status == DFPN_UNKNOWN && !c->error)
        dfpn_suspend(c, root);
    int rcode = 0;
    if (c->error) {
        out->status = DFPN_UNKNOWN;
        rcode = c->error;
    } else if (out->status != DFPN_UNKNOWN) {
        int winner = out->status == DFPN_PROVEN ? attacker : !attacker;
        int verify = o->optimistic && winner == c->safety;
        if (o->write_proof || verify) {
            /* without write_proof the walk only verifies: nothing is written */
            rcode = dfpn_write_proof(c, out->status == DFPN_PROVEN, o->write_proof, out);
            if (rcode == DFPN_EPROOF && verify) { /* not a certificate: not an answer */
                out->status = DFPN_UNKNOWN;
                out->refuted = 1;
                rcode = 0;
                remember_refuted(c, root, q);
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
    out->kept_total = c->kept_total;
    out->kept_back = c->kept_back;
    out->tt_bytes = c->nbuckets * BUCKET * sizeof *c->tt;
    out->seconds = now() - c->t0;
    if (rcode && err && errlen)
        snprintf(err, errlen, "%s", c->emsg[0] ? c->emsg : dfpn_strerror(rcode));
    return rcode;
}
