/*
 * tree_graph.c - the proof tree's PN graph (tree.h is the manual,
 * tree_int.h says how the tree is split): the node table, expansion,
 * evaluation, the pass and the incremental update, picking jobs, what a
 * result does to the graph, the backed-up records, stats and walks.
 *
 * OWNS: the nodes in memory, their bounds, numbers and flags, the jobs
 * in flight, and the change set (tree_int.h, THE CHANGE SET).
 * CALLS: the engine (moves, positions), the bound algebra
 * (engine/value.h), ab_eval (the static evaluation, a pure function) and
 * the record helpers of prover/store.h and prover/admit.h (pst_move_of,
 * padm_push: values, no store). Nothing else: no LMDB, no proof store, no
 * databases, no clock, no alpha-beta search. What it learns from outside
 * comes in as facts (mtg_set_own, mtg_expand, mtg_child_scores,
 * mtg_result); what must be kept goes out in t->chg, which the driver
 * (tree.c) applies. So every rule here can be driven by a unit test with
 * facts alone (tests/test_manager_graph.c).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <xxhash.h>

#include "manager/tree_int.h"
#include "prover/posmap.h"
#include "prover/prover.h"

/* ---- constants -------------------------------------------------------- */

#define MT_MAXDEPTH 4000 /* deeper than any line: a pass stops there */
#define MT_SEED_PLIES 16 /* the engine's line used as seed, at most */

/* ---- small helpers ------------------------------------------------------ */

static uint64_t
sat_add(uint64_t a, uint64_t b)
{
    return a + b >= MT_INF ? MT_INF : a + b;
}

/* ---- the change set (tree_int.h, THE CHANGE SET) ------------------------- */

/* Node i's stored fields changed: it enters the set's nodes, once. */
static void
chg_node(mt_tree *t, uint32_t i)
{
    mtg_changes *c = &t->chg;
    if (t->n[i].dirty)
        return;
    if (pmap_room((void **)&c->node, &c->capnode, c->nnode, sizeof *c->node)) {
        c->oom = 1;
        return;
    }
    c->node[c->nnode++] = i;
    t->n[i].dirty = 1;
}

/* Appends v (size bytes) to the set's vector *vec of *n, growing it. */
static void
chg_push(mt_tree *t, void **vec, size_t *cap, size_t *n, const void *v, size_t size)
{
    if (pmap_room(vec, cap, *n, size)) {
        t->chg.oom = 1;
        return;
    }
    memcpy((char *)*vec + *n * size, v, size);
    (*n)++;
}

void
mtg_changes_clear(mt_tree *t)
{
    mtg_changes *c = &t->chg;
    for (size_t k = 0; k < c->nnode; k++)
        if (c->node[k] < t->count)
            t->n[c->node[k]].dirty = 0;
    for (size_t k = 0; k < c->backup.n; k++) {
        long i = mtg_find(t, &c->backup.v[k].pos);
        if (i >= 0)
            t->n[i].bslot = 0;
    }
    c->nnode = c->nissued = c->nanswered = 0;
    c->backup.n = 0;
    c->state = c->oom = 0;
}

uint32_t
mtg_job_max_default(uint32_t job_ms)
{
    uint64_t m = (uint64_t)job_ms * MT_JOB_GROW;
    return m > UINT32_MAX / 2 ? UINT32_MAX / 2 : (uint32_t)m;
}

/* The multiple of the first job's budget that a node's next job gets
 * after `jobs` jobs: doubled each time, up to the cap. */
static uint32_t
job_mult(const mt_tree *t, uint32_t jobs)
{
    uint32_t m = 1;
    while (jobs-- > 0 && (uint64_t)t->job_ms * m * 2 <= t->job_max_ms)
        m *= 2;
    return m;
}

/* The multiple of the first job's budget after `jobs` jobs, doubled
 * each time without the cap (at most 2^16). */
static uint32_t
uncapped_mult(uint32_t jobs)
{
    return 1u << (jobs < 16 ? jobs : 16);
}

/* THE ROOT'S OWN JOBS (tree.h): the root, while its own jobs go on, has
 * them without the cap. */
static int
root_series(const mt_tree *t, uint32_t i)
{
    return i == 0 && t->n[0].early;
}

/* Whether the root's own job may be given now: its first, or while the
 * root's own jobs have had at most twice the time of all the others
 * (those in flight counted at their budgets), so that one worker shares
 * its time between the root's df-pn and the tree, and with two or more
 * the one that had the root's job has it again at once while the others
 * grow the tree. */
static int
root_turn(const mt_tree *t)
{
    const mt_node *r = &t->n[0];
    uint64_t others = t->all_job_ms - r->job_ms;
    for (size_t k = 0; k < t->njob; k++)
        if (t->job[k].live && (t->job[k].node != 0 || t->job[k].other))
            others += t->job[k].ms;
    return r->jobs == 0 || r->job_ms <= 2 * others;
}

/* ---- goals and questions ------------------------------------------------ */

static const char *const goal_names[] = {"value", "win", "draw", ">=draw", "<=draw"};

const char *
mt_goal_name(int goal)
{
    return goal >= 0 && goal <= MT_GOAL_LE_DRAW ? goal_names[goal] : "?";
}

int
mt_goal_parse(const char *s)
{
    for (int g = 0; g <= MT_GOAL_LE_DRAW; g++)
        if (!strcmp(s, goal_names[g]))
            return g;
    return -1;
}

int
mt_goal_settled(int goal, eng_bound b)
{
    int lo = eng_bound_lo(b), hi = eng_bound_hi(b);
    switch (goal) {
    case MT_GOAL_VALUE:
        return lo == hi;
    case MT_GOAL_WIN:
        return lo == ENG_WIN || hi <= ENG_DRAW;
    case MT_GOAL_DRAW:
        return lo == hi || lo == ENG_WIN || hi == ENG_LOSS;
    case MT_GOAL_GE_DRAW:
        return lo >= ENG_DRAW || hi == ENG_LOSS;
    case MT_GOAL_LE_DRAW:
        return hi <= ENG_DRAW || lo == ENG_WIN;
    default:
        return 1;
    }
}

/* The next question for the goal, given the root's bound (see tree.h and
 * prover.h, VALUES AND QUERIES): a draw is always two questions. */
static eng_question
next_question(int goal, const eng_pos *root, eng_bound b, int hint)
{
    int s = root->stm, o = !root->stm;
    int lo = eng_bound_lo(b), hi = eng_bound_hi(b);
    eng_question q = {s, ENG_DRAW};
    switch (goal) {
    case MT_GOAL_WIN:
        q.target = ENG_WIN;
        break;
    case MT_GOAL_LE_DRAW:
        q.attacker = o;
        break;
    case MT_GOAL_GE_DRAW:
        break;
    default: /* value, draw */
        if (lo >= ENG_DRAW)
            q.attacker = o; /* stm at least draws: does it win? */
        else if (hi <= ENG_DRAW)
            q.attacker = s; /* stm at most draws: does it draw? */
        else if (hint > 0 && goal == MT_GOAL_VALUE)
            q.target = ENG_WIN;
        else if (hint < 0 && goal == MT_GOAL_VALUE)
            q.attacker = o, q.target = ENG_WIN;
        break;
    }
    return q;
}

/* +1 the node's bound answers the question yes, -1 no, 0 open
 * (eng_question_answer: the rule is written once, in engine/value.c). */
static int
q_status(const eng_question *q, const mt_node *n)
{
    return eng_question_answer(q, n->pos.stm, n->bound);
}

/* THE ROOT'S OTHER QUESTION (tree.h): the question a value or draw goal
 * asks after "does X at least draw" ("does the other side at least
 * draw", next_question), when the root's bound leaves both open. A
 * first question "does X win" (the score says X is ahead) has none: its
 * follower is needed only when X does not win. */
static int
other_question(const mt_tree *t, eng_question *out)
{
    if ((t->goal != MT_GOAL_VALUE && t->goal != MT_GOAL_DRAW) || t->q.target != ENG_DRAW)
        return 0;
    eng_question o = {!t->q.attacker, ENG_DRAW};
    if (q_status(&t->q, &t->n[0]) != 0 || q_status(&o, &t->n[0]) != 0)
        return 0;
    *out = o;
    return 1;
}

/* ---- the node table ------------------------------------------------------ */

static uint32_t
pos_hash(const eng_pos *p)
{
    uint8_t k[MT_KEY];
    pos_key(p, k);
    return XXH32(k, sizeof k, 0x9e3779b9u);
}

static int
table_grow(mt_tree *t)
{
    uint32_t ns = t->nslot ? t->nslot * 2 : 1024;
    uint32_t *s = calloc(ns, sizeof *s);
    if (!s)
        return MT_ENOMEM;
    for (uint32_t i = 0; i < t->count; i++) {
        uint32_t h = pos_hash(&t->n[i].pos) & (ns - 1);
        while (s[h])
            h = (h + 1) & (ns - 1);
        s[h] = i + 1;
    }
    free(t->slot);
    t->slot = s;
    t->nslot = ns;
    return 0;
}

long
mtg_find(const mt_tree *t, const eng_pos *p)
{
    if (!t->nslot)
        return -1;
    uint32_t h = pos_hash(p) & (t->nslot - 1);
    while (t->slot[h]) {
        const mt_node *n = &t->n[t->slot[h] - 1];
        if (eng_equal(&n->pos, p)) /* side to move included */
            return (long)(t->slot[h] - 1);
        h = (h + 1) & (t->nslot - 1);
    }
    return -1;
}

long
mtg_add(mt_tree *t, const eng_pos *p)
{
    if ((uint64_t)(t->count + 1) * 2 > t->nslot && table_grow(t))
        return MT_ENOMEM;
    if (t->count == t->cap) {
        uint32_t nc = t->cap ? t->cap * 2 : 1024;
        mt_node *nn = realloc(t->n, (size_t)nc * sizeof *nn);
        if (!nn)
            return MT_ENOMEM;
        t->n = nn;
        t->cap = nc;
    }
    mt_node *n = &t->n[t->count];
    memset(n, 0, sizeof *n);
    n->pos = *p;
    n->own = n->bound = n->recorded = ENG_LW;
    n->src = SRC_NONE;
    n->pn = n->dn = 1;
    n->seq = t->count;
    uint32_t h = pos_hash(p) & (t->nslot - 1);
    while (t->slot[h])
        h = (h + 1) & (t->nslot - 1);
    t->slot[h] = t->count + 1;
    return (long)t->count++;
}

void
mtg_set_own(mt_tree *t, uint32_t i, const mtg_own *o)
{
    mt_node *n = &t->n[i];
    n->own = o->own;
    n->src = o->src;
    if (o->src == SRC_STORE)
        n->recorded = o->recorded;
    n->bound = eng_bound_meet(n->bound, n->own);
    if (n->bound == ENG_BOUND_INVALID)
        n->bound = n->own;
}

/*
 * SCORES (tree.h, THE MANAGER RUNS NO SEARCH)
 * A node's heuristic score orders the work (THRESHOLD ITERATION, LEAF
 * NUMBERS) and never decides a bound. It comes from the workers: a job's
 * own alpha-beta score for its position (mtg_result), and the scores of
 * its children when the job left it open (mtg_child_scores), kept with
 * the node until it is expanded. A node no worker has scored yet (the
 * children of a node expanded before any result of its own, as an idle
 * worker's early expansion; a root whose creator ran no search) gets the
 * static evaluation, at depth 0, which a worker's score replaces when
 * one comes. A position the databases value or with no move needs none.
 * Before, the manager ran a 6-ply alpha-beta of its own in its event
 * loop for each such node (0.7 ms a child).
 */
static void
static_score(mt_node *n)
{
    if (n->src == SRC_DB || n->src == SRC_END)
        return;
    n->score = (int16_t)ab_eval(&n->pos);
    n->depth = 0;
}

static int16_t
clamp_score(int s)
{
    return (int16_t)(s > 32000 ? 32000 : s < -32000 ? -32000 : s);
}

/* ---- expansion -------------------------------------------------------------- */

/* Adds p to node k's parents (once). */
static int
par_add(mt_tree *t, uint32_t k, uint32_t p)
{
    mt_node *n = &t->n[k];
    for (uint32_t j = 0; j < n->npar; j++)
        if (n->par[j] == p)
            return 0;
    if (n->npar == n->cappar) {
        uint32_t nc = n->cappar ? n->cappar * 2 : 2;
        uint32_t *np = realloc(n->par, nc * sizeof *np);
        if (!np)
            return MT_ENOMEM;
        n->par = np;
        n->cappar = nc;
    }
    n->par[n->npar++] = p;
    return 0;
}

int
mtg_link(mt_tree *t, uint32_t i, const mtg_own *own, int n)
{
    eng_movelist ml;
    eng_pos p = t->n[i].pos;
    eng_generate(&p, &ml, ENG_DUPS_MERGE);
    if (n != ml.n)
        return MT_EINVAL;
    uint32_t *kid = malloc((ml.n ? ml.n : 1) * sizeof *kid);
    if (!kid)
        return MT_ENOMEM;
    uint32_t first_new = t->count;
    for (int m = 0; m < ml.n; m++) {
        eng_pos c;
        eng_make(&p, &ml.m[m], &c);
        long k = mtg_find(t, &c);
        if (k < 0) {
            k = mtg_add(t, &c);
            if (k < 0) {
                free(kid);
                return (int)k;
            }
            mtg_set_own(t, (uint32_t)k, &own[m]);
            if (t->n[i].nkscore == (uint16_t)ml.n) { /* a worker's, for these moves */
                t->n[k].score = t->n[i].kscore[m];
                t->n[k].depth = MT_SCORE_DEPTH;
            } else {
                static_score(&t->n[k]);
            }
        }
        kid[m] = (uint32_t)k;
        if (par_add(t, (uint32_t)k, i)) {
            free(kid);
            return MT_ENOMEM;
        }
    }
    free(t->n[i].kid);
    t->n[i].kid = kid;
    t->n[i].nkid = (uint16_t)ml.n;
    /* the scores kept for the children have been given (SCORES) */
    free(t->n[i].kscore);
    t->n[i].kscore = NULL;
    t->n[i].nkscore = 0;
    /* an opened tree that lost children in a stop writes them again */
    if (t->n[i].expanded && t->count > first_new) {
        chg_node(t, i);
        for (uint32_t k = first_new; k < t->count; k++)
            chg_node(t, k);
    }
    return 0;
}

static int update_from(mt_tree *t, uint32_t i, char *err, size_t errlen);

int
mtg_expand(mt_tree *t, uint32_t i, const mtg_own *own, int n, int early, char *err, size_t errlen)
{
    if (t->n[i].expanded)
        return 0;
    uint32_t first_new = t->count; /* nodes from here on are new */
    int rc = mtg_link(t, i, own, n);
    if (rc)
        return rc;
    t->n[i].expanded = 1;
    if (early) {
        t->n[i].early = 1;
        t->widened++;
    }
    chg_node(t, i);
    for (uint32_t k = first_new; k < t->count; k++)
        chg_node(t, k);
    return update_from(t, i, err, errlen);
}

int
mtg_child_scores(mt_tree *t, uint32_t i, const int16_t *scores, size_t n, char *err, size_t errlen)
{
    mt_node *nd = &t->n[i];
    eng_movelist ml;
    eng_generate(&nd->pos, &ml, ENG_DUPS_MERGE);
    if (n == 0 || n > MT_SCORES_MAX || n != (size_t)ml.n)
        return 0;
    if (!nd->expanded) { /* kept until it is expanded (SCORES) */
        int16_t *v = realloc(nd->kscore, n * sizeof *v);
        if (!v)
            return MT_ENOMEM;
        memcpy(v, scores, n * sizeof *v);
        nd->kscore = v;
        nd->nkscore = (uint16_t)n;
        return 0;
    }
    /* an early node: its children were scored statically; each takes the
     * worker's now, and its parents see the change */
    for (uint16_t k = 0; k < nd->nkid && k < n; k++) {
        mt_node *c = &t->n[nd->kid[k]];
        if (c->depth > 0 || c->src == SRC_DB || c->src == SRC_END || c->score == scores[k])
            continue;
        c->score = scores[k];
        c->depth = MT_SCORE_DEPTH;
        chg_node(t, nd->kid[k]);
        int rc = update_from(t, nd->kid[k], err, errlen);
        if (rc)
            return rc;
    }
    return 0;
}

/* ---- the pass: bounds, numbers ------------------------------------------------ */

/* The flag of an expanded node whose open children are all flagged
 * (kids_busy) or not: an early node (IDLE WORKERS in tree.h) is itself a
 * job while none is in flight on it; any other expanded node in flight
 * (a job on an interior node a repetition blocks) is busy. */
static int
node_busy(const mt_node *n, int kids_busy)
{
    return n->early ? n->inflight && kids_busy : n->inflight || kids_busy;
}

/* LEAF NUMBERS (tree.h): an open leaf's numbers from its score. */
static void
leaf_numbers(const mt_tree *t, const mt_node *n, uint64_t *pn, uint64_t *dn)
{
    *pn = *dn = 1;
    int step = t->leaf_step;
    if (step <= 0) /* uniform, the default */
        return;
    int sx = n->pos.stm == t->q.attacker ? n->score : -n->score;
    int m = sx - (t->q.target == ENG_WIN ? MT_LEAF_NEED : -MT_LEAF_NEED);
    uint64_t k = 1 + (uint64_t)(m < 0 ? -m : m) / (uint64_t)step;
    if (k > MT_LEAF_MAX)
        k = MT_LEAF_MAX;
    if (m < 0)
        *pn = k;
    else
        *dn = k;
}

/*
 * Node i's bound (its own met with the negamax of its children's), its
 * numbers and its flag, from its children as they stand.
 * RETURN nonzero when any of them changed.
 */
static int
node_eval(mt_tree *t, uint32_t i)
{
    mt_node *n = &t->n[i];
    eng_bound ob = n->bound;
    uint64_t opn = n->pn, odn = n->dn;
    uint8_t ofl = n->flagged;
    /* bound */
    eng_bound b = n->own;
    if (n->expanded && n->nkid > 0) {
        eng_bound up = eng_bound_neg(t->n[n->kid[0]].bound);
        for (uint16_t k = 1; k < n->nkid; k++)
            up = eng_bound_max(up, eng_bound_neg(t->n[n->kid[k]].bound));
        eng_bound m = eng_bound_meet(b, up);
        if (m == ENG_BOUND_INVALID) {
            if (!t->contradict)
                eng_format_fen(&n->pos, t->contra_fen, sizeof t->contra_fen);
            t->contradict = 1;
        } else {
            b = m;
        }
    }
    if ((b == ENG_WW || b == ENG_LL) && b != ob)
        n->won_at = ++t->stamp;
    n->bound = b;
    /* numbers */
    int qs = q_status(&t->q, n);
    n->flagged = 0;
    if (qs > 0) {
        n->pn = 0;
        n->dn = MT_INF;
    } else if (qs < 0) {
        n->pn = MT_INF;
        n->dn = 0;
    } else if (!n->expanded || n->nkid == 0) {
        leaf_numbers(t, n, &n->pn, &n->dn);
        if (n->inflight) {
            n->flagged = 1;
        } else if (t->h < MT_H_INF) {
            int sx = n->pos.stm == t->q.attacker ? n->score : -n->score;
            if (sx > t->h)
                n->pn = 0, n->dn = MT_INF;
            else if (sx < -t->h)
                n->pn = MT_INF, n->dn = 0;
        }
    } else {
        int or_node = n->pos.stm == t->q.attacker;
        uint64_t pn = or_node ? MT_INF : 0, dn = or_node ? 0 : MT_INF;
        int open = 0, open_unflagged = 0;
        for (uint16_t k = 0; k < n->nkid; k++) {
            const mt_node *c = &t->n[n->kid[k]];
            if (or_node) {
                pn = c->pn < pn ? c->pn : pn;
                dn = sat_add(dn, c->dn);
            } else {
                pn = sat_add(pn, c->pn);
                dn = c->dn < dn ? c->dn : dn;
            }
            if (c->pn && c->dn) {
                open++;
                open_unflagged += !c->flagged;
            }
        }
        n->pn = pn;
        n->dn = dn;
        n->flagged = node_busy(n, open > 0 && open_unflagged == 0);
    }
    return n->bound != ob || n->pn != opn || n->dn != odn || n->flagged != ofl;
}

/* ---- backed-up records ----------------------------------------------------- */

/*
 * WIN MOVES
 * The record of a backed-up win names one move to a child lost for the
 * other side, and a win must end: following win moves must never come
 * back. Among the lost children, the one whose loss was established
 * first (won_at; 0 for a bound from outside the tree, whose record has
 * its own proof) is taken. Each win or loss was established from
 * children established before it, so won_at falls along every line of
 * win moves and no line can close a cycle. (Taking the first lost child
 * in move order did close one: a child lost because of its parent's win,
 * taken as that parent's win move; the checker refused the record.)
 */

/* The record of node n's backed-up bound: moves to children that prove it. */
static void
backup_record(const mt_tree *t, const mt_node *n, pst_item *it)
{
    memset(it, 0, sizeof *it);
    it->pos = n->pos;
    it->rec.bound = n->bound;
    it->rec.win.from = it->rec.draw.from = PST_NOMOVE;
    int lo = eng_bound_lo(n->bound);
    if (lo < ENG_DRAW)
        return;
    eng_movelist ml;
    eng_generate(&n->pos, &ml, ENG_DUPS_MERGE);
    uint64_t first = UINT64_MAX;
    for (int m = 0; m < ml.n && m < n->nkid; m++) {
        eng_bound cb = t->n[n->kid[m]].bound;
        if (lo == ENG_WIN && cb == ENG_LL && t->n[n->kid[m]].won_at < first) {
            first = t->n[n->kid[m]].won_at;
            it->rec.win = pst_move_of(&ml.m[m]);
        }
        if (eng_bound_hi(cb) <= ENG_DRAW && it->rec.draw.from == PST_NOMOVE)
            it->rec.draw = pst_move_of(&ml.m[m]);
    }
}

/* Node i's backed-up record into the change set when its bound is new to
 * the store (a node's latest record replaces one it has there already),
 * and the node taken as recorded (THE CHANGE SET). */
static void
backup_push(mt_tree *t, uint32_t i)
{
    mt_node *n = &t->n[i];
    if (n->bound == n->recorded || n->src == SRC_DB || n->src == SRC_END)
        return;
    /* A partial leaf needs no record for what its own bound says: the
     * checker takes it as a leaf for the questions that bound answers
     * (prover/leaf.h). */
    if (n->src == SRC_PARTIAL && n->bound == n->own)
        return;
    pst_item it;
    backup_record(t, n, &it);
    padm_items *b = &t->chg.backup;
    if (n->bslot) {
        b->v[n->bslot - 1] = it;
    } else if (padm_push(b, &it) == 0) {
        n->bslot = (uint32_t)b->n;
    } else {
        t->chg.oom = 1;
        return;
    }
    t->chg.pushed++;
    n->recorded = n->bound;
    if (n->src == SRC_NONE)
        n->src = SRC_BACKUP;
}

/* MT_ESTORE when a pass or an update found a node's backed-up bound
 * disjoint from its own (a proof contradicts the tree: a bug). */
static int
contradiction(const mt_tree *t, char *err, size_t errlen)
{
    if (!t->contradict)
        return 0;
    eng_errf(err, errlen,
             "the tree's backed-up bound contradicts a stored proof at %s (a bug: the "
             "state is left as it is, as evidence)",
             t->contra_fen);
    return MT_ESTORE;
}

static void
pass_node(mt_tree *t, uint32_t i, int depth)
{
    mt_node *n = &t->n[i];
    n->epoch = t->epoch;
    n->onstack = 1;
    if (n->expanded && depth < MT_MAXDEPTH) {
        for (uint16_t k = 0; k < n->nkid; k++) {
            mt_node *c = &t->n[n->kid[k]];
            if (c->epoch != t->epoch)
                pass_node(t, n->kid[k], depth + 1);
            else if (c->onstack)
                t->cycles = 1;
        }
    }
    node_eval(t, i);
    backup_push(t, i);
    t->n[i].onstack = 0;
}

/* One pass over the graph from the root; the backed-up records go to the
 * change set. Repeated (at most 4 times) while a cycle may have left a
 * stale bound: while a round met a cycle and found a record to back up. */
int
mtg_pass(mt_tree *t, char *err, size_t errlen)
{
    for (int round = 0; round < 4; round++) {
        uint64_t before = t->chg.pushed;
        t->epoch++;
        t->cycles = 0;
        pass_node(t, 0, 0);
        int rc = contradiction(t, err, errlen);
        if (rc)
            return rc;
        if (!t->cycles || t->chg.pushed == before)
            break;
    }
    return 0;
}

/*
 * UPDATES (tree.h, NUMBERS AFTER A RESULT)
 * After a change at node i (a result, an expansion, a job released),
 * only i and the nodes above it can change: i is evaluated again (and
 * first its children when it was just expanded), and every node whose
 * bound, numbers or flag changed queues its parents (all of them: a
 * transposition has several). Cycles can make numbers climb round and
 * round; past a budget of evaluations the update gives up and one whole
 * pass settles everything, as before.
 */
static int
update_from(mt_tree *t, uint32_t i, char *err, size_t errlen)
{
    size_t budget = 4096 + t->count / 8;
    t->updates++;
    t->epoch++; /* marks the touched nodes */
    t->nwq = t->ntouched = 0;
    mt_node *s = &t->n[i];
    if (s->expanded)
        for (uint16_t k = 0; k < s->nkid; k++) {
            uint32_t c = s->kid[k];
            if (t->n[c].epoch == t->epoch)
                continue;
            if (pmap_room((void **)&t->touched, &t->captouched, t->ntouched, sizeof *t->touched))
                return mtg_pass(t, err, errlen);
            t->n[c].epoch = t->epoch;
            t->touched[t->ntouched++] = c;
            node_eval(t, c);
        }
    if (pmap_room((void **)&t->wq, &t->capwq, 0, sizeof *t->wq))
        return mtg_pass(t, err, errlen);
    t->wq[t->nwq++] = i;
    s->queued = 1;
    size_t evals = 0;
    int fallback = 0;
    while (t->nwq) {
        uint32_t x = t->wq[--t->nwq];
        mt_node *n = &t->n[x];
        n->queued = 0;
        if (++evals > budget) {
            fallback = 1;
            break;
        }
        int changed = node_eval(t, x) || x == i;
        if (n->epoch != t->epoch) {
            if (pmap_room((void **)&t->touched, &t->captouched, t->ntouched, sizeof *t->touched)) {
                fallback = 1;
                break;
            }
            n->epoch = t->epoch;
            t->touched[t->ntouched++] = x;
        }
        if (!changed)
            continue;
        if (pmap_room((void **)&t->wq, &t->capwq, t->nwq + t->n[x].npar, sizeof *t->wq)) {
            fallback = 1;
            break;
        }
        for (uint32_t j = 0; j < t->n[x].npar; j++) {
            mt_node *p = &t->n[t->n[x].par[j]];
            if (!p->queued) {
                p->queued = 1;
                t->wq[t->nwq++] = t->n[x].par[j];
            }
        }
    }
    if (fallback) {
        while (t->nwq)
            t->n[t->wq[--t->nwq]].queued = 0;
        t->fallbacks++;
        return mtg_pass(t, err, errlen);
    }
    for (size_t k = 0; k < t->ntouched; k++)
        backup_push(t, t->touched[k]);
    return contradiction(t, err, errlen);
}

int
mtg_check_numbers(mt_tree *t, char *err, size_t errlen)
{
    size_t n = t->count;
    uint64_t *keep = malloc(n * 3 * sizeof *keep);
    if (!keep)
        return MT_ENOMEM;
    for (size_t i = 0; i < n; i++) {
        keep[3 * i] = t->n[i].pn;
        keep[3 * i + 1] = t->n[i].dn;
        keep[3 * i + 2] = (uint64_t)t->n[i].bound | (uint64_t)t->n[i].flagged << 8;
    }
    int rc = mtg_pass(t, err, errlen);
    /* with a cycle, numbers have no one right value (the pass takes a
     * node met again on its stack at its previous numbers, the update
     * goes round until nothing changes): only bounds are compared */
    int bounds_only = t->cycles;
    long diff = 0, first = -1;
    for (size_t i = 0; !rc && i < n; i++)
        if (bounds_only ? (keep[3 * i + 2] & 0xff) != t->n[i].bound
                        : keep[3 * i] != t->n[i].pn || keep[3 * i + 1] != t->n[i].dn ||
                              keep[3 * i + 2] !=
                                  ((uint64_t)t->n[i].bound | (uint64_t)t->n[i].flagged << 8)) {
            diff++;
            if (first < 0)
                first = (long)i;
        }
    if (!rc && diff) {
        char fen[ENG_FEN_MAX];
        const mt_node *x = &t->n[first];
        eng_format_fen(&x->pos, fen, sizeof fen);
        eng_errf(err, errlen,
                 "%ld of %zu nodes differ from a whole pass, first %s: bound %s pn %" PRIu64
                 " dn %" PRIu64 " flag %d, the pass says %s pn %" PRIu64 " dn %" PRIu64 " flag %d",
                 diff, n, fen, eng_bound_name((eng_bound)(keep[3 * first + 2] & 0xff)),
                 keep[3 * first], keep[3 * first + 1], (int)(keep[3 * first + 2] >> 8),
                 eng_bound_name(x->bound), x->pn, x->dn, x->flagged);
        rc = MT_ECORRUPT;
    }
    free(keep);
    return rc;
}

/* ---- creating ------------------------------------------------------------------ */

void
mtg_params(mt_tree *t, const mt_create *create)
{
    t->root = create->root;
    t->goal = create->goal;
    t->db_pieces = create->db_pieces;
    t->job_ms = create->job_ms;
    t->job_max_ms =
        create->job_max_ms >= t->job_ms ? create->job_max_ms : mtg_job_max_default(t->job_ms);
    t->job_nodes = create->job_nodes;
    t->root_score = create->root_score;
    t->root_depth = create->root_depth;
    t->no_early = create->no_early;
    t->no_root_jobs = create->no_root_jobs;
    t->h0 = t->h = create->h0;
    t->h_step = create->h_step > 0 ? create->h_step : 100;
    snprintf(t->seed, sizeof t->seed, "%s", create->seed ? create->seed : "");
    snprintf(t->db_dir, sizeof t->db_dir, "%s", create->db_dir ? create->db_dir : "");
}

int
mtg_root(mt_tree *t, const mtg_own *o)
{
    long r = mtg_add(t, &t->root);
    if (r < 0)
        return (int)r;
    mtg_set_own(t, 0, o);
    /* the first question's hint: the creator's search of the root, else
     * the static evaluation (SCORES); the root's jobs bring searched
     * scores, which the next question takes (advance) */
    if (t->root_depth > 0) {
        t->n[0].score = clamp_score(t->root_score);
        t->n[0].depth = (uint16_t)t->root_depth;
    } else {
        static_score(&t->n[0]);
    }
    t->q = next_question(t->goal, &t->root, t->n[0].bound, prv_hint(t->n[0].score));
    chg_node(t, 0);
    return 0;
}

void
mtg_root_early(mt_tree *t)
{
    mt_node *r = &t->n[0];
    t->all_job_ms = t->oq_ms; /* kept (THE ROOT'S OTHER QUESTION) */
    for (uint32_t i = 0; i < t->count; i++)
        t->all_job_ms += t->n[i].job_ms;
    if (!t->no_early && !t->no_root_jobs && r->expanded)
        r->early = 1;
}

void
mtg_free(mt_tree *t)
{
    for (uint32_t i = 0; i < t->count; i++) {
        free(t->n[i].kid);
        free(t->n[i].par);
        free(t->n[i].kscore);
    }
    free(t->chg.node);
    free(t->chg.issued);
    free(t->chg.answered);
    padm_items_free(&t->chg.backup);
    free(t->wq);
    free(t->touched);
    free(t->n);
    free(t->slot);
    free(t->job);
    free(t);
}

int
mtg_open_mem(const mt_create *create, mt_tree **out, char *err, size_t errlen)
{
    *out = NULL;
    mt_tree *t = calloc(1, sizeof *t);
    if (!t)
        return MT_ENOMEM;
    mtg_params(t, create);
    t->first_job = t->next_job = 1;
    /* no store and no databases: the root's own bound is a loss when it
     * has no move, else nothing (THE IN-MEMORY TREE) */
    eng_movelist ml;
    mtg_own o = {ENG_LW, ENG_LW, SRC_NONE};
    if (eng_generate(&create->root, &ml, ENG_DUPS_MERGE) == 0)
        o = (mtg_own){ENG_LL, ENG_LW, SRC_END};
    int rc = mtg_root(t, &o);
    if (!rc)
        rc = mtg_pass(t, err, errlen);
    mtg_changes_clear(t); /* nothing kept */
    if (rc) {
        mtg_free(t);
        return rc;
    }
    *out = t;
    return 0;
}

int
mtg_set_kids(mt_tree *t, uint32_t i, const uint32_t *kid, uint16_t n)
{
    uint32_t *v = malloc((n ? n : 1) * sizeof *v);
    if (!v)
        return MT_ENOMEM;
    for (uint16_t k = 0; k < n; k++) {
        v[k] = kid[k];
        if (par_add(t, kid[k], i)) {
            free(v);
            return MT_ENOMEM;
        }
    }
    free(t->n[i].kid);
    t->n[i].kid = v;
    t->n[i].nkid = n;
    return 0;
}

/* ---- picking jobs ------------------------------------------------------------- */

int
mt_done(const mt_tree *t)
{
    return mt_goal_settled(t->goal, t->n[0].bound);
}

mt_jobrec *
mtg_job_find(mt_tree *t, uint64_t id)
{
    for (size_t j = 0; j < t->njob; j++)
        if (t->job[j].id == id)
            return &t->job[j];
    return NULL;
}

static void
job_drop(mt_tree *t, uint64_t id)
{
    for (size_t j = 0; j < t->njob; j++)
        if (t->job[j].id == id) {
            t->job[j] = t->job[--t->njob];
            return;
        }
}

mt_jobrec *
mtg_job_add(mt_tree *t, uint64_t id, uint32_t node, eng_question q, int live)
{
    if (pmap_room((void **)&t->job, &t->capjob, t->njob, sizeof *t->job))
        return NULL;
    mt_jobrec *j = &t->job[t->njob++];
    *j = (mt_jobrec){id, node, q, live, 0, 0};
    return j;
}

/* Whether a job of node i's own (not the root's other question) is in
 * flight: a node's in-flight mark after one of its jobs ends. */
static int
node_live(const mt_tree *t, uint32_t i)
{
    for (size_t k = 0; k < t->njob; k++)
        if (t->job[k].live && !t->job[k].other && t->job[k].node == i)
            return 1;
    return 0;
}

/*
 * THE ROOT'S OTHER QUESTION (tree.h): whether it may be given now, *q
 * the question. Only while the root's own job is in flight on another
 * worker, none of the other question's is, and the root's bound leaves
 * both questions open; then its first job, or while its jobs have had
 * at most twice the time of the tree's (in flight counted at their
 * budgets), or always with force (no other work).
 */
static int
other_turn(const mt_tree *t, int force, eng_question *q)
{
    const mt_node *r = &t->n[0];
    if (t->no_early || t->no_root_jobs || !r->early || !r->inflight || !other_question(t, q))
        return 0;
    uint64_t tree = t->all_job_ms - r->job_ms - t->oq_ms;
    for (size_t k = 0; k < t->njob; k++) {
        if (!t->job[k].live)
            continue;
        if (t->job[k].other)
            return 0;
        if (t->job[k].node != 0)
            tree += t->job[k].ms;
    }
    return force || t->oq_jobs == 0 || t->oq_ms <= 2 * tree;
}

/* A new job on node i for question q (other: the root's other
 * question), recorded and in the change set: mult times the first job's
 * budget, named for worker prefer. RETURN MT_PICK_JOB (*job filled) or
 * MT_ENOMEM. */
static int
issue(mt_tree *t, uint32_t i, eng_question q, int other, uint32_t mult, uint32_t prefer,
      mt_job *job)
{
    mt_jobrec *j = mtg_job_add(t, t->next_job, i, q, 1);
    if (!j)
        return MT_ENOMEM;
    j->other = other;
    t->next_job++;
    uint64_t ms = (uint64_t)t->job_ms * mult;
    job->id = j->id;
    job->pos = t->n[i].pos;
    job->q = q;
    job->time_ms = ms > UINT32_MAX / 2 ? UINT32_MAX / 2 : (uint32_t)ms;
    job->node_limit = t->job_nodes * mult;
    job->prefer = prefer;
    j->ms = job->time_ms;
    chg_push(t, (void **)&t->chg.issued, &t->chg.capissued, &t->chg.nissued, j, sizeof *j);
    t->chg.state = 1; /* next_job */
    return MT_PICK_JOB;
}

/* Flags of the nodes on a selection path, from the bottom up. */
static void
reflag_path(mt_tree *t, const uint32_t *path, int len)
{
    for (int d = len - 1; d >= 0; d--) {
        mt_node *n = &t->n[path[d]];
        if (!n->expanded || !n->nkid) {
            n->flagged = n->inflight;
            continue;
        }
        int open = 0, free_ = 0;
        for (uint16_t k = 0; k < n->nkid; k++) {
            const mt_node *c = &t->n[n->kid[k]];
            if (c->pn && c->dn) {
                open++;
                free_ += !c->flagged;
            }
        }
        n->flagged = node_busy(n, open > 0 && free_ == 0);
    }
}

/* Moves to the next question or raises h when the root is resolved;
 * returns 1 when something changed (numbers were recomputed). */
static int
advance(mt_tree *t, char *err, size_t errlen, int *rc)
{
    mt_node *root = &t->n[0];
    *rc = 0;
    if (mt_done(t))
        return 0;
    if (q_status(&t->q, root) != 0) {
        t->q = next_question(t->goal, &t->root, root->bound, prv_hint(root->score));
        t->h = t->h0;
        /* the other question's job in flight is now the root's own
         * (THE ROOT'S OTHER QUESTION) */
        for (size_t k = 0; k < t->njob; k++) {
            mt_jobrec *j = &t->job[k];
            if (j->other && j->q.attacker == t->q.attacker && j->q.target == t->q.target) {
                j->other = 0;
                root->inflight |= (uint8_t)j->live;
                root->worker = t->oq_worker;
            }
        }
    } else if ((root->pn == 0 || root->dn == 0) && t->h < MT_H_INF) {
        t->h = t->h + t->h_step >= MT_H_INF ? MT_H_INF : t->h + t->h_step;
    } else {
        return 0;
    }
    t->chg.state = 1;
    if ((*rc = mtg_pass(t, err, errlen)))
        return 0;
    return 1;
}

/*
 * The selection line from the root (path[0..*len-1], the onpath marks
 * cleared again): the most-proving child at OR nodes, the most-disproving
 * at AND nodes. With free_only, flagged children are passed by, an early
 * node whose own job is free ends the line, and so does a node whose open
 * children are all on the line (a repetition blocks them: the node itself
 * is the job); a node whose open children are all flagged although it is
 * not ends it with *stale set (its flag is stale). Without, flags are
 * ignored and the line runs to a leaf. RETURN the last node.
 */
/* Whether every open child of n is flagged (in flight below). */
static int
kids_flagged(const mt_tree *t, const mt_node *n)
{
    for (uint16_t k = 0; k < n->nkid; k++) {
        const mt_node *c = &t->n[n->kid[k]];
        if (c->pn && c->dn && !c->flagged)
            return 0;
    }
    return 1;
}

static uint32_t
descend(mt_tree *t, int free_only, uint32_t *path, int *len, int *stale)
{
    uint32_t cur = 0;
    *len = 0;
    *stale = 0;
    path[(*len)++] = 0;
    t->n[0].onpath = 1;
    while (t->n[cur].expanded && t->n[cur].nkid && *len < MT_MAXDEPTH) {
        const mt_node *n = &t->n[cur];
        if (free_only && n->early && !n->inflight &&
            (cur != 0 || root_turn(t) || kids_flagged(t, n)))
            break; /* its own jobs go on (IDLE WORKERS, THE ROOT'S OWN JOBS) */
        int or_node = n->pos.stm == t->q.attacker;
        long best = -1;
        int blocked = 0;
        for (uint16_t k = 0; k < n->nkid; k++) {
            const mt_node *c = &t->n[n->kid[k]];
            if (!c->pn || !c->dn || (free_only && c->flagged))
                continue;
            if (c->onpath) {
                blocked = 1;
                continue;
            }
            const mt_node *b = best < 0 ? NULL : &t->n[best];
            uint64_t cv = or_node ? c->pn : c->dn, cw = or_node ? c->dn : c->pn;
            if (!b || cv < (or_node ? b->pn : b->dn) ||
                (cv == (or_node ? b->pn : b->dn) && cw > (or_node ? b->dn : b->pn)))
                best = n->kid[k];
        }
        if (best < 0) {
            *stale = free_only && !blocked;
            break;
        }
        cur = (uint32_t)best;
        path[(*len)++] = cur;
        t->n[cur].onpath = 1;
    }
    for (int d = 0; d < *len; d++)
        t->n[path[d]].onpath = 0;
    return cur;
}

/*
 * IDLE WORKERS (tree.h): every open leaf is in flight and a worker asks
 * for work, so the in-flight leaf at the end of the most-proving line
 * (flags ignored) is to be expanded now, while its job runs, and marked
 * early: its own jobs go on growing to the cap, and its children are
 * work for the idle. RETURN 1 with *node that leaf, 0 when none can be.
 * The children are the caller's to bring (mtg_expand, early).
 */
static int
widen(mt_tree *t, uint32_t *node)
{
    uint32_t path[MT_MAXDEPTH];
    int len, stale;
    uint32_t cur = descend(t, 0, path, &len, &stale);
    mt_node *n = &t->n[cur];
    if (n->expanded || !n->inflight || !n->pn || !n->dn || n->src == SRC_DB || n->src == SRC_END)
        return 0;
    *node = cur;
    return 1;
}

int
mtg_pick(mt_tree *t, mt_job *job, uint32_t *expand, char *err, size_t errlen)
{
    int rc;
    for (int guard = 0; guard < 64; guard++) {
        if (mt_done(t))
            return MT_PICK_DONE;
        if (advance(t, err, errlen, &rc))
            continue;
        if (rc)
            return rc;
        mt_node *root = &t->n[0];
        eng_question oq;
        if (other_turn(t, root->flagged, &oq)) /* its budget doubles without the cap,
                                                  like the root's own */
            return issue(t, 0, oq, 1, uncapped_mult(t->oq_jobs), t->oq_worker, job);
        if (root->flagged) {
            if (!t->no_early && widen(t, expand))
                return MTG_EXPAND;
            return MT_PICK_WAIT;
        }
        uint32_t path[MT_MAXDEPTH];
        int len, restart;
        uint32_t cur = descend(t, 1, path, &len, &restart);
        mt_node *n = &t->n[cur];
        if (restart || n->inflight) { /* a stale flag */
            n->flagged = 1;
            reflag_path(t, path, len - 1);
            continue;
        }
        n->inflight = 1;
        /* flagged above it, on every path (transpositions too) */
        if ((rc = update_from(t, cur, err, errlen)))
            return rc;
        /* a node gets double the budget of its last job (JOBS in tree.h);
         * an interior node (a repetition blocks its children) cannot be
         * expanded instead, so its budget grows past the cap, and so
         * does the root's own (THE ROOT'S OWN JOBS) */
        uint32_t mult = (n->expanded && !n->early) || root_series(t, cur) ? uncapped_mult(n->jobs)
                                                                          : job_mult(t, n->jobs);
        return issue(t, cur, t->q, 0, mult, n->worker, job);
    }
    return MT_PICK_WAIT;
}

void
mt_given(mt_tree *t, uint64_t id, uint32_t worker)
{
    mt_jobrec *j = mtg_job_find(t, id);
    if (j && j->other)
        t->oq_worker = worker;
    else if (j)
        t->n[j->node].worker = worker;
}

/* Whether some line of nodes whose bounds leave the tree's question open
 * leads from the root down to node i: a node whose every parent is
 * settled is below no line the tree can still prove through. Bounds, not
 * numbers: a number 0 may be provisional (THRESHOLD ITERATION), a bound
 * is proved. The upward walk visits at most WANT_WALK_MAX nodes (beyond
 * it the node counts as needed). */
#define WANT_WALK_MAX 512
static int
on_open_line(const mt_tree *t, uint32_t i)
{
    uint32_t seen[WANT_WALK_MAX], n = 0, k = 0;
    seen[n++] = i;
    while (k < n) {
        const mt_node *x = &t->n[seen[k++]];
        if (x == &t->n[0])
            return 1;
        for (uint32_t p = 0; p < x->npar; p++) {
            uint32_t q = x->par[p];
            if (q_status(&t->q, &t->n[q]) != 0)
                continue;
            int dup = 0;
            for (uint32_t v = 0; v < n && !dup; v++)
                dup = seen[v] == q;
            if (dup)
                continue;
            if (n == WANT_WALK_MAX)
                return 1;
            seen[n++] = q;
        }
    }
    return 0;
}

int
mt_job_wanted(const mt_tree *t, uint64_t id)
{
    for (size_t j = 0; j < t->njob; j++) {
        const mt_jobrec *r = &t->job[j];
        if (r->id != id)
            continue;
        const mt_node *n = &t->n[r->node];
        if (mt_done(t) || q_status(&r->q, n) != 0)
            return 0; /* the run is over, or the job's question is answered */
        if (r->other)
            return 1; /* the root's other question, still open at the root */
        if (r->q.attacker != t->q.attacker || r->q.target != t->q.target)
            return 0; /* the tree has gone on to another question */
        return on_open_line(t, r->node);
    }
    return 0;
}

int
mt_job_open(const mt_tree *t, uint64_t id, uint32_t *ms)
{
    for (size_t j = 0; j < t->njob; j++)
        if (t->job[j].id == id) { /* the test mt_result makes (mtg_job_find) */
            *ms = t->job[j].ms;
            return 1;
        }
    *ms = 0;
    return 0;
}

int
mtg_release(mt_tree *t, uint64_t id, char *err, size_t errlen)
{
    mt_jobrec *j = mtg_job_find(t, id);
    if (!j || !j->live)
        return 0;
    j->live = 0;
    t->n[j->node].inflight = (uint8_t)node_live(t, j->node);
    return update_from(t, j->node, err, errlen); /* its flags change above it */
}

int
mtg_release_all(mt_tree *t, char *err, size_t errlen)
{
    for (size_t j = 0; j < t->njob; j++) {
        t->job[j].live = 0;
        t->n[t->job[j].node].inflight = 0;
    }
    return mtg_pass(t, err, errlen);
}

/* ---- results -------------------------------------------------------------------- */

int
mtg_result(mt_tree *t, mt_jobrec *j, const mtg_result_fact *f, char *err, size_t errlen)
{
    uint64_t id = j->id;
    uint32_t i = j->node;
    int other = j->other;
    mt_node *nd = &t->n[i];
    eng_bound m = eng_bound_meet(nd->own, f->bound);
    if (m == ENG_BOUND_INVALID) {
        char fen[ENG_FEN_MAX];
        eng_format_fen(&nd->pos, fen, sizeof fen);
        eng_errf(err, errlen, "job %" PRIu64 " proved %s for %s, which contradicts the known %s",
                 id, eng_bound_name(f->bound), fen, eng_bound_name(nd->own));
        return MT_ESTORE;
    }
    if (m != nd->own) {
        nd->own = m;
        if (nd->src == SRC_NONE || nd->src == SRC_BACKUP)
            nd->src = SRC_STORE;
    }
    if (f->bound != ENG_LW) /* what the store holds, admitted (tree_proof.c) */
        nd->recorded = f->bound;
    if (f->depth > 0) {
        nd->score = clamp_score(f->score);
        nd->depth = (uint16_t)f->depth;
    }
    if (other) { /* THE ROOT'S OTHER QUESTION: not the root's own series */
        t->oq_jobs++;
        t->oq_ms += f->ms;
    } else {
        nd->jobs++;
        nd->job_ms += f->ms;
    }
    t->all_job_ms += f->ms;
    nd->job_nodes += f->nodes;
    t->jobs_done++;
    t->jobs_proved += f->settled ? 1 : 0;
    job_drop(t, id);
    chg_push(t, (void **)&t->chg.answered, &t->chg.capanswered, &t->chg.nanswered, &id, sizeof id);
    chg_node(t, i);
    t->chg.state = 1;
    nd->inflight = (uint8_t)node_live(t, i);
    /* the worker's scores for the children: kept with the node (SCORES) */
    int rc = f->nkids ? mtg_child_scores(t, i, f->kids, f->nkids, err, errlen) : 0;
    if (rc)
        return rc;
    /* a job that left its leaf open: the leaf's next job gets double
     * the budget, and when its budget has reached the cap the tree grows
     * there instead (a leaf's bound is its own; the update backs the
     * result up) */
    if (!nd->expanded)
        nd->bound = m;
    int grows = other || root_series(t, i) || job_mult(t, nd->jobs) > job_mult(t, nd->jobs - 1);
    if (!grows) /* an early node's jobs have reached the cap */
        nd->early = 0;
    if (!mt_done(t) && q_status(&t->q, nd) == 0 && !nd->expanded && !grows)
        return MTG_EXPAND; /* the caller brings the children (mtg_expand) */
    return update_from(t, i, err, errlen);
}

/* ---- reporting -------------------------------------------------------------------- */

void
mt_stats_get(const mt_tree *t, mt_stats *out)
{
    memset(out, 0, sizeof *out);
    const mt_node *root = &t->n[0];
    out->root_bound = root->bound;
    out->q = t->q;
    out->goal = t->goal;
    out->root_pn = root->pn;
    out->root_dn = root->dn;
    out->nodes = t->count;
    for (uint32_t i = 0; i < t->count; i++) {
        const mt_node *n = &t->n[i];
        out->expanded += n->expanded;
        out->in_flight += n->inflight;
        if (!n->expanded && n->bound != ENG_LW && n->src == SRC_STORE)
            out->leaves_proven++;
    }
    for (size_t k = 0; k < t->njob; k++)
        out->in_flight += t->job[k].live && t->job[k].other;
    out->jobs_done = t->jobs_done;
    out->jobs_proved = t->jobs_proved;
    out->jobs_issued = t->next_job - t->first_job;
    out->widened = t->widened;
    out->other_jobs = t->oq_jobs;
    out->other_ms = t->oq_ms;
    out->h = t->h;
    out->db_pieces = t->db_pieces;
    out->job_ms = t->job_ms;
    out->job_max_ms = t->job_max_ms;
    out->job_nodes = t->job_nodes;
    out->seconds = t->seconds;
    eng_format_fen(&t->root, out->root_fen, sizeof out->root_fen);
    snprintf(out->seed, sizeof out->seed, "%s", t->seed);
}

int
mt_max_depth(const mt_tree *t)
{
    uint32_t *queue = malloc((size_t)(t->count ? t->count : 1) * sizeof *queue);
    uint16_t *dist = malloc((size_t)(t->count ? t->count : 1) * sizeof *dist);
    if (!queue || !dist) {
        free(queue);
        free(dist);
        return -1;
    }
    for (uint32_t i = 0; i < t->count; i++)
        dist[i] = UINT16_MAX;
    uint32_t head = 0, tail = 0;
    int deepest = 0;
    if (t->count) {
        dist[0] = 0;
        queue[tail++] = 0;
    }
    while (head < tail) {
        uint32_t i = queue[head++];
        const mt_node *n = &t->n[i];
        if (dist[i] > deepest)
            deepest = dist[i];
        for (uint16_t k = 0; k < n->nkid; k++)
            if (dist[n->kid[k]] == UINT16_MAX && dist[i] + 1 < UINT16_MAX) {
                dist[n->kid[k]] = (uint16_t)(dist[i] + 1);
                queue[tail++] = n->kid[k];
            }
    }
    free(queue);
    free(dist);
    return deepest;
}

/* What mt_walk, mt_lookup and mt_each show of node i (depth 0, no move,
 * a leaf unless expanded). */
static void
view_fill(const mt_tree *t, uint32_t i, mt_view *v)
{
    const mt_node *n = &t->n[i];
    memset(v, 0, sizeof *v);
    v->pos = n->pos;
    v->bound = n->bound;
    v->leaf = !n->expanded;
    v->source = n->src;
    v->score = n->score;
    v->in_flight = n->inflight;
    v->flagged = n->flagged;
    v->pn = n->pn;
    v->dn = n->dn;
    v->jobs = n->jobs;
    v->expanded = n->expanded;
    v->children = n->nkid;
    v->parents = n->npar;
    v->job_ms = n->job_ms;
    v->job_nodes = n->job_nodes;
}

static int
walk_node(const mt_tree *t, uint32_t i, int depth, int max_depth, const char *move, uint8_t *on,
          int (*fn)(const mt_view *v, void *arg), void *arg)
{
    const mt_node *n = &t->n[i];
    mt_view v;
    view_fill(t, i, &v);
    v.depth = depth;
    snprintf(v.move, sizeof v.move, "%s", move);
    v.leaf = !n->expanded || on[i] || depth >= max_depth;
    if (fn(&v, arg))
        return 1;
    if (v.leaf)
        return 0;
    on[i] = 1;
    eng_movelist ml;
    eng_generate(&n->pos, &ml, ENG_DUPS_MERGE);
    /* preferred first: resolved-for-the-mover children, then by numbers */
    int order[ENG_MAX_MOVES];
    int nk = n->nkid < ml.n ? n->nkid : ml.n;
    for (int k = 0; k < nk; k++)
        order[k] = k;
    int or_node = n->pos.stm == t->q.attacker;
    for (int a = 1; a < nk; a++)
        for (int b = a; b > 0; b--) {
            const mt_node *x = &t->n[n->kid[order[b]]], *y = &t->n[n->kid[order[b - 1]]];
            uint64_t xv = or_node ? x->pn : x->dn, yv = or_node ? y->pn : y->dn;
            if (xv >= yv)
                break;
            int tmp = order[b];
            order[b] = order[b - 1];
            order[b - 1] = tmp;
        }
    int stop = 0;
    for (int k = 0; k < nk && !stop; k++) {
        char mv[64];
        eng_format_move(&ml.m[order[k]], mv, sizeof mv);
        stop = walk_node(t, n->kid[order[k]], depth + 1, max_depth, mv, on, fn, arg);
    }
    on[i] = 0;
    return stop;
}

void
mt_walk(const mt_tree *t, int max_depth, int (*fn)(const mt_view *v, void *arg), void *arg)
{
    uint8_t *on = calloc(t->count ? t->count : 1, 1);
    if (!on)
        return;
    walk_node(t, 0, 0, max_depth, "", on, fn, arg);
    free(on);
}

/* ---- read-only access (the proof browser, web/web.h) ------------------------ */

int
mt_lookup(const mt_tree *t, const eng_pos *p, mt_view *out)
{
    long i = mtg_find(t, p);
    if (i < 0)
        return MT_EINVAL;
    view_fill(t, (uint32_t)i, out);
    return 0;
}

size_t
mt_parents(const mt_tree *t, const eng_pos *p, eng_pos *out, size_t cap)
{
    long i = mtg_find(t, p);
    if (i < 0)
        return 0;
    const mt_node *n = &t->n[i];
    for (uint32_t j = 0; j < n->npar && j < cap; j++)
        out[j] = t->n[n->par[j]].pos;
    return n->npar;
}

void
mt_each(const mt_tree *t, int (*fn)(const mt_view *v, void *arg), void *arg)
{
    mt_view v;
    for (uint32_t i = 0; i < t->count; i++) {
        view_fill(t, i, &v);
        if (fn(&v, arg))
            return;
    }
}

const char *
mt_strerror(int code)
{
    switch (code) {
    case MT_OK:
        return "ok";
    case MT_EIO:
        return "I/O error";
    case MT_ECORRUPT:
        return "damaged tree";
    case MT_ENOMEM:
        return "out of memory";
    case MT_EINVAL:
        return "invalid argument";
    case MT_ESTORE:
        return "proof store error";
    case MT_EREFUSED:
        return "refused at admission";
    case MT_EOLD:
        return "written before admission";
    case MT_ENOSPC:
        return "the disk is full";
    case MT_EDB:
        return "database error";
    default:
        return "unknown error";
    }
}
