/*
 * tree.c - the manager's proof tree (tree.h is the manual).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <lmdb.h>
#include <xxhash.h>

#include "prover/admit.h"
#include "manager/tree.h"
#include "prover/check.h"
#include "prover/posmap.h"
#include "prover/prover.h"
#include "prover/search.h"

/* ---- constants -------------------------------------------------------- */

#define MT_MAP_BYTES ((size_t)1 << 36) /* address space, not disk */
#define MT_KEY 17
#define MT_VAL 32
#define MT_MAXDEPTH 4000 /* deeper than any line: a pass stops there */
#define MT_SEED_PLIES 16 /* the engine's line used as seed, at most */

enum { SRC_NONE = '-', SRC_DB = 'd', SRC_END = 't', SRC_STORE = 's', SRC_BACKUP = 'b' };

/* ---- types ------------------------------------------------------------ */

typedef struct mt_node {
    eng_pos pos;
    uint32_t *kid; /* children, in eng_generate (merged) order */
    uint32_t *par; /* parents (every node that has it as a child) */
    uint32_t npar, cappar;
    uint16_t nkid;
    uint8_t expanded, inflight, flagged, onstack, onpath, queued, src;
    eng_bound own;      /* from proofs outside the tree */
    eng_bound bound;    /* own intersected with the backup */
    eng_bound recorded; /* what the store holds for it (LW: nothing) */
    int16_t score;
    uint16_t depth;
    uint32_t jobs, job_ms, seq, epoch;
    uint32_t worker; /* who had its last job (mt_given; not persisted) */
    uint64_t won_at; /* when its bound became a win or a loss (WIN MOVES) */
    uint64_t job_nodes, pn, dn;
} mt_node;

typedef struct mt_jobrec {
    uint64_t id;
    uint32_t node;
    eng_question q;
    int live; /* in flight in this run */
} mt_jobrec;

struct mt_tree {
    MDB_env *env;
    MDB_dbi meta, nodes, jobs, hist;
    char dir[4096];
    const egdb *db;
    pst_env *store;
    ab_ctx *ab;

    mt_node *n;
    uint32_t count, cap;
    uint32_t *slot; /* open addressing: node index + 1, 0 empty */
    uint32_t nslot;

    mt_jobrec *job;
    size_t njob, capjob;

    /* the children's scores a worker sent with job kid_job (mt_child_scores) */
    int16_t kid_scores[MT_SCORES_MAX];
    uint32_t nkid_scores;
    uint64_t kid_job;

    /* the incremental update (UPDATES) */
    uint32_t *wq, *touched;
    size_t nwq, capwq, ntouched, captouched;
    uint64_t updates, fallbacks; /* incremental updates, and those that fell back to a pass */

    /* parameters and state (meta) */
    eng_pos root;
    int goal, db_pieces, h, h0, h_step;
    uint32_t job_ms, job_max_ms, score_nodes;
    uint64_t job_nodes, next_job, first_job, jobs_done, jobs_proved, hist_n;
    eng_question q;
    double seconds;
    char seed[256];

    uint32_t epoch;
    uint64_t stamp; /* the clock of won_at */
    int cycles;     /* a pass met a node on its stack */
    int contradict; /* a pass found own and backup disjoint */
    char contra_fen[ENG_FEN_MAX];
    padm_items items;          /* backed-up records of a pass */
    uint64_t admitted;         /* workers' records admitted since the tree was opened */
    int unadmitted;            /* a schema 1 tree (MT_SCHEMA_UNADMITTED): not resumed */
    char owner[PST_OWNER_MAX]; /* the proof's id, also the store's owner label */
    uint64_t records;          /* the store's records when the tree was last saved */
    char db_dir[480];          /* the databases' folder at creation (absolute; "" none) */
    int rdonly;                /* opened by mt_open_ro: nothing is ever written */
};

/* ---- small helpers ------------------------------------------------------ */

static void
put32(uint8_t *b, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        b[i] = (uint8_t)(v >> (8 * i));
}

static uint32_t
get32(const uint8_t *b)
{
    return (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
}

static void
put64(uint8_t *b, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        b[i] = (uint8_t)(v >> (8 * i));
}

static uint64_t
get64(const uint8_t *b)
{
    return (uint64_t)get32(b) | (uint64_t)get32(b + 4) << 32;
}

static void
pos_key(const eng_pos *p, uint8_t k[MT_KEY])
{
    put32(k, p->bm);
    put32(k + 4, p->wm);
    put32(k + 8, p->bk);
    put32(k + 12, p->wk);
    k[16] = (uint8_t)p->stm;
}

static eng_pos
key_pos(const uint8_t k[MT_KEY])
{
    eng_pos p = {get32(k), get32(k + 4), get32(k + 8), get32(k + 12), k[16]};
    return p;
}

static uint64_t
sat_add(uint64_t a, uint64_t b)
{
    return a + b >= MT_INF ? MT_INF : a + b;
}

/* The cap of a node's budget when the proof does not set one. */
static uint32_t
job_max_default(uint32_t job_ms)
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

static const char *
lmdb_msg(int rc)
{
    return mdb_strerror(rc);
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

/* +1 the node's bound answers the question yes, -1 no, 0 open. */
static int
q_status(const eng_question *q, const mt_node *n)
{
    eng_bound b = n->pos.stm == q->attacker ? n->bound : eng_bound_neg(n->bound);
    int lo = eng_bound_lo(b), hi = eng_bound_hi(b);
    if (q->target == ENG_WIN)
        return lo == ENG_WIN ? 1 : hi <= ENG_DRAW ? -1 : 0;
    return lo >= ENG_DRAW ? 1 : hi == ENG_LOSS ? -1 : 0;
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

static long
node_find(const mt_tree *t, const eng_pos *p)
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

/* Appends a node for p (not yet in the table); returns its index or a
 * negative MT_E*. Its own bound and source are filled by node_own. */
static long
node_add(mt_tree *t, const eng_pos *p)
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

/* The node's bound from outside the tree: no move, databases, store. */
static int
node_own(mt_tree *t, mt_node *n, char *err, size_t errlen)
{
    eng_movelist ml;
    eng_generate(&n->pos, &ml, ENG_DUPS_MERGE);
    if (ml.n == 0) {
        n->own = ENG_LL;
        n->src = SRC_END;
    } else if (t->db && eng_pieces(&n->pos) <= t->db_pieces) {
        int v = egdb_probe(t->db, &n->pos);
        if (v < 0) {
            char fen[ENG_FEN_MAX];
            eng_format_fen(&n->pos, fen, sizeof fen);
            eng_errf(err, errlen, "database probe of %s failed: %s", fen, egdb_strerror(v));
            return MT_EDB;
        }
        n->own = eng_bound_exact(egdb_outcome(v));
        n->src = SRC_DB;
    } else {
        pst_record r;
        int rc = pst_get(t->store, &n->pos, &r);
        if (rc == 0) {
            n->own = n->recorded = r.bound;
            n->src = SRC_STORE;
        } else if (rc != PST_ENOTFOUND) {
            char fen[ENG_FEN_MAX];
            eng_format_fen(&n->pos, fen, sizeof fen);
            eng_errf(err, errlen, "proof store read of %s failed: %s", fen, pst_strerror(rc));
            return MT_ESTORE;
        }
    }
    n->bound = eng_bound_meet(n->bound, n->own);
    if (n->bound == ENG_BOUND_INVALID)
        n->bound = n->own;
    return 0;
}

/* The manager's own heuristic: a short alpha-beta search. */
static void
node_score(mt_tree *t, mt_node *n)
{
    if (n->src == SRC_DB || n->src == SRC_END)
        return;
    ab_opts o = {.db = t->db,
                 .db_pieces = t->db_pieces,
                 .max_depth = MT_SCORE_DEPTH,
                 .node_limit = t->score_nodes ? t->score_nodes : MT_SCORE_NODES};
    ab_result r;
    if (t->ab && ab_search(t->ab, &n->pos, &o, &r) == 0) {
        n->score = (int16_t)(r.score > 32000 ? 32000 : r.score < -32000 ? -32000 : r.score);
        n->depth = (uint16_t)r.depth;
    } else {
        n->score = (int16_t)ab_eval(&n->pos);
    }
}

/* ---- LMDB ------------------------------------------------------------------ */

static void
node_encode(const mt_node *n, uint8_t k[MT_KEY], uint8_t v[MT_VAL])
{
    pos_key(&n->pos, k);
    memset(v, 0, MT_VAL);
    v[0] = 1;
    v[1] = n->expanded ? 1 : 0;
    v[2] = (uint8_t)(uint16_t)n->score;
    v[3] = (uint8_t)((uint16_t)n->score >> 8);
    v[4] = (uint8_t)n->depth;
    v[5] = (uint8_t)(n->depth >> 8);
    put32(v + 8, n->jobs);
    put32(v + 12, n->job_ms);
    put64(v + 16, n->job_nodes);
    put32(v + 24, n->seq);
    uint8_t buf[MT_KEY + 28];
    memcpy(buf, k, MT_KEY);
    memcpy(buf + MT_KEY, v, 28);
    put32(v + 28, XXH32(buf, sizeof buf, 0));
}

static int
node_put(mt_tree *t, MDB_txn *txn, const mt_node *n)
{
    uint8_t k[MT_KEY], v[MT_VAL];
    node_encode(n, k, v);
    MDB_val key = {MT_KEY, k}, val = {MT_VAL, v};
    return mdb_put(txn, t->nodes, &key, &val, 0);
}

static int
meta_put(mt_tree *t, MDB_txn *txn, const char *key, const char *fmt, ...)
{
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    MDB_val k = {strlen(key), (void *)key}, v = {strlen(buf), buf};
    return mdb_put(txn, t->meta, &k, &v, 0);
}

static int
meta_get(mt_tree *t, MDB_txn *txn, const char *key, char *out, size_t cap)
{
    MDB_val k = {strlen(key), (void *)key}, v;
    int rc = mdb_get(txn, t->meta, &k, &v);
    if (rc)
        return rc;
    size_t n = v.mv_size < cap - 1 ? v.mv_size : cap - 1;
    memcpy(out, v.mv_data, n);
    out[n] = 0;
    return 0;
}

/* Writes the counters and the question (inside txn). */
static int
meta_state(mt_tree *t, MDB_txn *txn)
{
    int rc = meta_put(t, txn, "h", "%d", t->h);
    if (!rc)
        rc = meta_put(t, txn, "question", "%d %d", t->q.attacker, t->q.target);
    if (!rc)
        rc = meta_put(t, txn, "next_job", "%" PRIu64, t->next_job);
    if (!rc)
        rc = meta_put(t, txn, "jobs_done", "%" PRIu64 " %" PRIu64, t->jobs_done, t->jobs_proved);
    if (!rc)
        rc = meta_put(t, txn, "seconds", "%.3f", t->seconds);
    if (!rc)
        rc = meta_put(t, txn, "hist_n", "%" PRIu64, t->hist_n);
    /* the store's record count, which only grows: every store write this
     * tree rests on was committed before (STORE AND TREE) */
    uint64_t recs;
    char label[PST_OWNER_MAX];
    if (!rc && pst_owner(t->store, label, sizeof label, &recs, NULL, 0) == 0 && recs > t->records)
        t->records = recs;
    if (!rc)
        rc = meta_put(t, txn, "records", "%" PRIu64, t->records);
    return rc;
}

/* Runs fn inside one write transaction and commits. */
typedef int (*txn_fn)(mt_tree *t, MDB_txn *txn, void *arg);

static int
in_txn(mt_tree *t, txn_fn fn, void *arg, char *err, size_t errlen)
{
    MDB_txn *txn;
    int rc = mdb_txn_begin(t->env, NULL, 0, &txn);
    if (!rc) {
        rc = fn(t, txn, arg);
        if (rc)
            mdb_txn_abort(txn);
        else
            rc = mdb_txn_commit(txn);
    }
    if (rc) {
        uint64_t avail = 0;
        if ((rc == ENOSPC || rc == EIO || rc == EDQUOT) && pst_disk_full(t->dir, &avail)) {
            eng_errf(err, errlen,
                     "tree %s: the disk is full (%" PRIu64 " bytes free): free some space and "
                     "run again, nothing was lost",
                     t->dir, avail);
            return MT_ENOSPC;
        }
        eng_errf(err, errlen, "tree %s: write failed: %s", t->dir, lmdb_msg(rc));
        return MT_EIO;
    }
    return 0;
}

static int
txn_state(mt_tree *t, MDB_txn *txn, void *arg)
{
    (void)arg;
    return meta_state(t, txn);
}

static int
txn_owner(mt_tree *t, MDB_txn *txn, void *arg)
{
    (void)arg;
    return meta_put(t, txn, "owner", "%s", t->owner);
}

/* ---- expansion -------------------------------------------------------------- */

typedef struct expand_arg {
    uint32_t node;
    uint32_t first_new; /* nodes from here on are new */
} expand_arg;

static int
txn_expand(mt_tree *t, MDB_txn *txn, void *arg)
{
    expand_arg *a = arg;
    int rc = node_put(t, txn, &t->n[a->node]);
    for (uint32_t i = a->first_new; !rc && i < t->count; i++)
        rc = node_put(t, txn, &t->n[i]);
    return rc;
}

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

/* Links node i's children (creating missing ones, scored and with their
 * own bounds); does not persist. */
static int
link_children(mt_tree *t, uint32_t i, char *err, size_t errlen)
{
    eng_movelist ml;
    eng_pos p = t->n[i].pos;
    eng_generate(&p, &ml, ENG_DUPS_MERGE);
    uint32_t *kid = malloc((ml.n ? ml.n : 1) * sizeof *kid);
    if (!kid)
        return MT_ENOMEM;
    for (int m = 0; m < ml.n; m++) {
        eng_pos c;
        eng_make(&p, &ml.m[m], &c);
        long k = node_find(t, &c);
        if (k < 0) {
            k = node_add(t, &c);
            if (k < 0) {
                free(kid);
                return (int)k;
            }
            int rc = node_own(t, &t->n[k], err, errlen);
            if (rc) {
                free(kid);
                return rc;
            }
            if (t->nkid_scores == (uint32_t)ml.n) /* a worker's, for these moves */
                t->n[k].score = t->kid_scores[m];
            else
                node_score(t, &t->n[k]);
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
    return 0;
}

static int
expand(mt_tree *t, uint32_t i, char *err, size_t errlen)
{
    if (t->n[i].expanded)
        return 0;
    expand_arg a = {i, t->count};
    int rc = link_children(t, i, err, errlen);
    if (rc)
        return rc;
    t->n[i].expanded = 1;
    return in_txn(t, txn_expand, &a, err, errlen);
}

/* ---- the pass: bounds, records, numbers ------------------------------------- */

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
        n->pn = n->dn = 1;
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
        n->flagged = n->inflight || (open > 0 && open_unflagged == 0);
    }
    return n->bound != ob || n->pn != opn || n->dn != odn || n->flagged != ofl;
}

/* Queues node n's record when its bound is new to the store. */
static void
backup_push(mt_tree *t, mt_node *n)
{
    if (n->bound != n->recorded && n->src != SRC_DB && n->src != SRC_END) {
        pst_item it;
        backup_record(t, n, &it);
        if (padm_push(&t->items, &it) == 0 && n->src == SRC_NONE)
            n->src = SRC_BACKUP;
    }
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
    backup_push(t, &t->n[i]);
    t->n[i].onstack = 0;
}

/* The tree's own records (t->items) are admitted like a worker's: each
 * is a root, checked over the store's admitted records (admit.h). */
static int
admit_backups(mt_tree *t, char *err, size_t errlen)
{
    if (t->contradict) {
        eng_errf(err, errlen,
                 "the tree's backed-up bound contradicts a stored proof at %s (a bug: the "
                 "state is left as it is, as evidence)",
                 t->contra_fen);
        return MT_ESTORE;
    }
    if (!t->items.n || t->rdonly) /* read-only: shown, never written */
        return 0;
    padm_report rep;
    char aerr[512];
    int rc =
        padm_admit(t->store, t->db, t->items.v, t->items.n, NULL, 0, 0, 0, &rep, aerr, sizeof aerr);
    if (rc == PST_ENOSPC) {
        eng_errf(err, errlen, "%s", aerr);
        return MT_ENOSPC;
    }
    if (rc) {
        eng_errf(err, errlen,
                 "the tree's backed-up records were refused (%s): %s (a bug: the state "
                 "is left as it is, as evidence)",
                 padm_strerror(rc), aerr);
        return MT_ESTORE;
    }
    for (size_t j = 0; j < t->items.n; j++) {
        long k = node_find(t, &t->items.v[j].pos);
        if (k >= 0)
            t->n[k].recorded = t->items.v[j].rec.bound;
    }
    return 0;
}

/* One pass over the graph from the root; writes the backed-up records.
 * Repeated (at most 4 times) while a cycle may have left a stale bound. */
static int
pass(mt_tree *t, char *err, size_t errlen)
{
    for (int round = 0; round < 4; round++) {
        t->epoch++;
        t->cycles = 0;
        t->items.n = 0;
        pass_node(t, 0, 0);
        int rc = admit_backups(t, err, errlen);
        if (rc)
            return rc;
        if (!t->cycles || !t->items.n)
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
                return pass(t, err, errlen);
            t->n[c].epoch = t->epoch;
            t->touched[t->ntouched++] = c;
            node_eval(t, c);
        }
    if (pmap_room((void **)&t->wq, &t->capwq, 0, sizeof *t->wq))
        return pass(t, err, errlen);
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
        return pass(t, err, errlen);
    }
    t->items.n = 0;
    for (size_t k = 0; k < t->ntouched; k++)
        backup_push(t, &t->n[t->touched[k]]);
    return admit_backups(t, err, errlen);
}

int
mt_check_numbers(mt_tree *t, char *err, size_t errlen)
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
    int rc = pass(t, err, errlen);
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

/* ---- opening and creating ---------------------------------------------------- */

static int
env_open(mt_tree *t, const char *dir, char *err, size_t errlen)
{
    if (!t->rdonly && mkdir(dir, 0755) && errno != EEXIST) {
        eng_errf(err, errlen, "cannot create %s: %s", dir, strerror(errno));
        return MT_EIO;
    }
    /* the fields LMDB trusts, checked before it reads them (a truncated
     * file would make it fault, not fail) */
    char why[600];
    int hc = pst_lmdb_check(dir, why, sizeof why);
    if (hc) {
        eng_errf(err, errlen, "the tree is damaged: %s", why);
        return hc == PST_EIO ? MT_EIO : MT_ECORRUPT;
    }
    int rc = mdb_env_create(&t->env);
    if (!rc)
        rc = mdb_env_set_maxdbs(t->env, 8);
    if (!rc)
        rc = mdb_env_set_mapsize(t->env, MT_MAP_BYTES);
    if (!rc)
        rc = mdb_env_open(t->env, dir, MDB_NOTLS | (t->rdonly ? MDB_RDONLY : 0), 0644);
    if (rc) {
        eng_errf(err, errlen, "cannot open the tree in %s: %s", dir, lmdb_msg(rc));
        return MT_EIO;
    }
    /* every page read once, guarded, before anything else reads one: a
     * damaged page is an error here, not a fault in load_nodes */
    hc = pst_lmdb_walk(t->env, dir, why, sizeof why);
    if (hc) {
        eng_errf(err, errlen, "the tree is damaged: %s", why);
        return hc == PST_EIO ? MT_EIO : MT_ECORRUPT;
    }
    MDB_txn *txn;
    /* read-only: the tables must exist (a read transaction, committed so
     * that its handles stay open for the later ones) */
    unsigned create = t->rdonly ? 0 : MDB_CREATE;
    rc = mdb_txn_begin(t->env, NULL, t->rdonly ? MDB_RDONLY : 0, &txn);
    if (!rc)
        rc = mdb_dbi_open(txn, "meta", create, &t->meta);
    if (!rc)
        rc = mdb_dbi_open(txn, "nodes", create, &t->nodes);
    if (!rc)
        rc = mdb_dbi_open(txn, "jobs", create | MDB_INTEGERKEY, &t->jobs);
    if (!rc)
        rc = mdb_dbi_open(txn, "hist", create | MDB_INTEGERKEY, &t->hist);
    if (!rc)
        rc = mdb_txn_commit(txn);
    else
        mdb_txn_abort(txn);
    if (rc) {
        eng_errf(err, errlen, "cannot open the tree's tables in %s: %s", dir, lmdb_msg(rc));
        return MT_EIO;
    }
    return 0;
}

static int
txn_create(mt_tree *t, MDB_txn *txn, void *arg)
{
    (void)arg;
    char fen[ENG_FEN_MAX];
    eng_format_fen(&t->root, fen, sizeof fen);
    int rc = meta_put(t, txn, "schema", "%s", MT_SCHEMA);
    if (!rc)
        rc = meta_put(t, txn, "root", "%s", fen);
    if (!rc)
        rc = meta_put(t, txn, "goal", "%s", mt_goal_name(t->goal));
    if (!rc)
        rc = meta_put(t, txn, "params", "%d %u %" PRIu64 " %d %d", t->db_pieces, t->job_ms,
                      t->job_nodes, t->h0, t->h_step);
    if (!rc)
        rc = meta_put(t, txn, "job_max_ms", "%u", t->job_max_ms);
    if (!rc)
        rc = meta_put(t, txn, "first_job", "%" PRIu64, t->first_job);
    if (!rc)
        rc = meta_put(t, txn, "seed", "%s", t->seed);
    if (!rc && t->db_dir[0])
        rc = meta_put(t, txn, "db_dir", "%s", t->db_dir);
    if (!rc)
        rc = meta_put(t, txn, "owner", "%s", t->owner);
    if (!rc)
        rc = meta_state(t, txn);
    if (!rc)
        rc = node_put(t, txn, &t->n[0]);
    return rc;
}

/* Expands the seed line (the given moves, else the engine's line). */
static int
seed_line(mt_tree *t, const char *seed, char *err, size_t errlen)
{
    uint32_t cur = 0;
    if (seed && *seed) {
        char buf[256], *save = NULL;
        snprintf(buf, sizeof buf, "%s", seed);
        int ply = 0;
        for (char *tok = strtok_r(buf, " \t,", &save); tok; tok = strtok_r(NULL, " \t,", &save)) {
            /* skip move numbers like "1." */
            if (strchr(tok, '.') && !strchr(tok, '-') && !strchr(tok, 'x'))
                continue;
            eng_move m;
            char perr[160];
            if (eng_parse_move(&t->n[cur].pos, tok, &m, perr, sizeof perr)) {
                eng_errf(err, errlen, "seed line, move %d '%s': %s", ply + 1, tok, perr);
                return MT_EINVAL;
            }
            int rc = expand(t, cur, err, errlen);
            if (rc)
                return rc;
            eng_pos c;
            eng_make(&t->n[cur].pos, &m, &c);
            long k = node_find(t, &c);
            if (k < 0) {
                eng_errf(err, errlen, "seed line, move %d '%s': child not found", ply + 1, tok);
                return MT_EINVAL;
            }
            cur = (uint32_t)k;
            ply++;
        }
        return expand(t, cur, err, errlen);
    }
    /* The engine's principal variation, searched for a second. */
    ab_opts o = {.db = t->db, .db_pieces = t->db_pieces, .max_depth = 40, .time_limit = 1.0};
    ab_result r;
    if (!t->ab || ab_search(t->ab, &t->root, &o, &r) != 0)
        return expand(t, 0, err, errlen);
    char line[240] = "";
    size_t used = 0;
    for (int i = 0; i < r.pvlen && i < MT_SEED_PLIES; i++) {
        if (t->n[cur].src == SRC_DB || t->n[cur].src == SRC_END)
            break;
        int rc = expand(t, cur, err, errlen);
        if (rc)
            return rc;
        char mv[64];
        eng_format_move(&r.pv[i], mv, sizeof mv);
        used += (size_t)snprintf(line + used, used < sizeof line ? sizeof line - used : 0, "%s%s",
                                 i ? " " : "", mv);
        eng_pos c;
        eng_make(&t->n[cur].pos, &r.pv[i], &c);
        long k = node_find(t, &c);
        if (k < 0)
            break;
        cur = (uint32_t)k;
    }
    snprintf(t->seed, sizeof t->seed, "engine: %s", line);
    return 0;
}

static int
load_meta(mt_tree *t, char *err, size_t errlen)
{
    MDB_txn *txn;
    int rc = mdb_txn_begin(t->env, NULL, MDB_RDONLY, &txn);
    if (rc) {
        eng_errf(err, errlen, "tree %s: %s", t->dir, lmdb_msg(rc));
        return MT_EIO;
    }
    char buf[512];
    int bad = 0;
    if (meta_get(t, txn, "schema", buf, sizeof buf)) {
        mdb_txn_abort(txn);
        eng_errf(err, errlen,
                 "%s holds no proof (no tree schema): start one with --opening, "
                 "--acf or --fen",
                 t->dir);
        return MT_EINVAL;
    }
    t->unadmitted = !strcmp(buf, MT_SCHEMA_UNADMITTED);
    if (strcmp(buf, MT_SCHEMA) && !t->unadmitted) {
        mdb_txn_abort(txn);
        eng_errf(err, errlen, "tree %s has schema '%s', this program reads '%s'", t->dir, buf,
                 MT_SCHEMA);
        return MT_ECORRUPT;
    }
    char perr[160];
    if (meta_get(t, txn, "root", buf, sizeof buf) ||
        eng_parse_fen(buf, &t->root, perr, sizeof perr))
        bad = 1;
    if (!bad && (meta_get(t, txn, "goal", buf, sizeof buf) || (t->goal = mt_goal_parse(buf)) < 0))
        bad = 2;
    if (!bad && (meta_get(t, txn, "params", buf, sizeof buf) ||
                 sscanf(buf, "%d %u %" SCNu64 " %d %d", &t->db_pieces, &t->job_ms, &t->job_nodes,
                        &t->h0, &t->h_step) != 5))
        bad = 3;
    /* the first job id (trees made before random ids: 1) */
    if (!bad && (meta_get(t, txn, "first_job", buf, sizeof buf) ||
                 sscanf(buf, "%" SCNu64, &t->first_job) != 1))
        t->first_job = 1;
    /* the cap of growing budgets; a tree made before it grows to the default */
    if (!bad && (meta_get(t, txn, "job_max_ms", buf, sizeof buf) ||
                 sscanf(buf, "%u", &t->job_max_ms) != 1 || t->job_max_ms < t->job_ms))
        t->job_max_ms = job_max_default(t->job_ms);
    if (!bad && (meta_get(t, txn, "h", buf, sizeof buf) || sscanf(buf, "%d", &t->h) != 1))
        bad = 4;
    if (!bad && (meta_get(t, txn, "question", buf, sizeof buf) ||
                 sscanf(buf, "%d %d", &t->q.attacker, &t->q.target) != 2 ||
                 (t->q.attacker != ENG_BLACK && t->q.attacker != ENG_WHITE) ||
                 (t->q.target != ENG_WIN && t->q.target != ENG_DRAW)))
        bad = 5;
    if (!bad && (meta_get(t, txn, "next_job", buf, sizeof buf) ||
                 sscanf(buf, "%" SCNu64, &t->next_job) != 1))
        bad = 6;
    if (!bad && (meta_get(t, txn, "jobs_done", buf, sizeof buf) ||
                 sscanf(buf, "%" SCNu64 " %" SCNu64, &t->jobs_done, &t->jobs_proved) != 2))
        bad = 7;
    if (!bad &&
        (meta_get(t, txn, "seconds", buf, sizeof buf) || sscanf(buf, "%lf", &t->seconds) != 1))
        bad = 8;
    if (!bad &&
        (meta_get(t, txn, "hist_n", buf, sizeof buf) || sscanf(buf, "%" SCNu64, &t->hist_n) != 1))
        bad = 9;
    if (!bad && meta_get(t, txn, "seed", t->seed, sizeof t->seed))
        t->seed[0] = 0;
    if (!bad && meta_get(t, txn, "db_dir", t->db_dir, sizeof t->db_dir))
        t->db_dir[0] = 0;
    /* a tree made before owner labels has neither (store_check) */
    if (!bad && meta_get(t, txn, "owner", t->owner, sizeof t->owner))
        t->owner[0] = 0;
    if (!bad &&
        (meta_get(t, txn, "records", buf, sizeof buf) || sscanf(buf, "%" SCNu64, &t->records) != 1))
        t->records = 0;
    mdb_txn_abort(txn);
    if (bad) {
        static const char *const what[] = {"",        "root",     "goal",     "params",
                                           "h",       "question", "next_job", "jobs_done",
                                           "seconds", "hist_n"};
        eng_errf(err, errlen, "tree %s: meta entry '%s' is missing or malformed", t->dir,
                 what[bad]);
        return MT_ECORRUPT;
    }
    return 0;
}

static int
load_nodes(mt_tree *t, char *err, size_t errlen)
{
    MDB_txn *txn;
    MDB_cursor *cur;
    int rc = mdb_txn_begin(t->env, NULL, MDB_RDONLY, &txn);
    if (!rc)
        rc = mdb_cursor_open(txn, t->nodes, &cur);
    if (rc) {
        eng_errf(err, errlen, "tree %s: %s", t->dir, lmdb_msg(rc));
        return MT_EIO;
    }
    /* the root first, at index 0 */
    long r = node_add(t, &t->root);
    if (r < 0) {
        mdb_cursor_close(cur);
        mdb_txn_abort(txn);
        return (int)r;
    }
    MDB_val k, v;
    int out = 0;
    for (rc = mdb_cursor_get(cur, &k, &v, MDB_FIRST); !rc;
         rc = mdb_cursor_get(cur, &k, &v, MDB_NEXT)) {
        const uint8_t *kb = k.mv_data, *vb = v.mv_data;
        uint8_t buf[MT_KEY + 28];
        if (k.mv_size != MT_KEY || v.mv_size != MT_VAL || vb[0] != 1) {
            eng_errf(err, errlen, "tree %s: a node record has the wrong size or format", t->dir);
            out = MT_ECORRUPT;
            break;
        }
        memcpy(buf, kb, MT_KEY);
        memcpy(buf + MT_KEY, vb, 28);
        eng_pos p = key_pos(kb);
        char verr[128];
        if (get32(vb + 28) != XXH32(buf, sizeof buf, 0) || p.stm > 1 ||
            eng_validate(&p, verr, sizeof verr)) {
            eng_errf(err, errlen,
                     "tree %s: a node record fails its checksum or holds an invalid "
                     "position (the tree is damaged)",
                     t->dir);
            out = MT_ECORRUPT;
            break;
        }
        long i = node_find(t, &p);
        if (i < 0)
            i = node_add(t, &p);
        if (i < 0) {
            out = (int)i;
            break;
        }
        mt_node *n = &t->n[i];
        n->expanded = vb[1] & 1;
        n->score = (int16_t)(vb[2] | vb[3] << 8);
        n->depth = (uint16_t)(vb[4] | vb[5] << 8);
        n->jobs = get32(vb + 8);
        n->job_ms = get32(vb + 12);
        n->job_nodes = get64(vb + 16);
    }
    if (!out && rc != MDB_NOTFOUND) {
        eng_errf(err, errlen, "tree %s: reading nodes: %s", t->dir, lmdb_msg(rc));
        out = MT_EIO;
    }
    mdb_cursor_close(cur);
    /* jobs not answered before the stop: kept for late results */
    if (!out && !mdb_cursor_open(txn, t->jobs, &cur)) {
        for (rc = mdb_cursor_get(cur, &k, &v, MDB_FIRST); !rc;
             rc = mdb_cursor_get(cur, &k, &v, MDB_NEXT)) {
            if (k.mv_size != 8 || v.mv_size != MT_KEY + 2)
                continue;
            uint64_t id;
            memcpy(&id, k.mv_data, 8);
            eng_pos p = key_pos(v.mv_data);
            long i = node_find(t, &p);
            if (i < 0)
                continue;
            if (t->njob == t->capjob) {
                size_t nc = t->capjob ? t->capjob * 2 : 64;
                mt_jobrec *nj = realloc(t->job, nc * sizeof *nj);
                if (!nj) {
                    out = MT_ENOMEM;
                    break;
                }
                t->job = nj;
                t->capjob = nc;
            }
            const uint8_t *vb = v.mv_data;
            eng_question jq = {vb[MT_KEY], vb[MT_KEY + 1]};
            t->job[t->njob++] = (mt_jobrec){id, (uint32_t)i, jq, 0};
        }
        mdb_cursor_close(cur);
    }
    mdb_txn_abort(txn);
    if (out)
        return out;
    /* bounds, then children (which may create nodes missing after a crash) */
    uint32_t loaded = t->count;
    for (uint32_t i = 0; i < loaded; i++) {
        int e = node_own(t, &t->n[i], err, errlen);
        if (e)
            return e;
    }
    for (uint32_t i = 0; i < loaded; i++) {
        if (!t->n[i].expanded)
            continue;
        expand_arg a = {i, t->count};
        int e = link_children(t, i, err, errlen);
        if (!e && t->count > a.first_new && !t->rdonly)
            e = in_txn(t, txn_expand, &a, err, errlen);
        if (e)
            return e;
    }
    return 0;
}

/*
 * STORE AND TREE
 *   The tree's bounds rest on <state>/proofs, which lives in another
 *   LMDB environment, so nothing in LMDB ties the two together: a proofs
 *   folder that is missing, emptied, swapped for another proof's, or
 *   rolled back by LMDB to an older meta page would make the tree start
 *   over, or adopt records it never admitted, without a word. Two facts
 *   tie them:
 *   - the owner label: a random id made with the tree, kept in its meta
 *     ("owner") and in the store's (pst_owner_set);
 *   - the record count: every tree save writes the store's count
 *     ("records"); store writes are committed before the tree saves that
 *     rests on them, and records are merged, never deleted, so the count
 *     a store holds is never below the one its tree saw.
 *   At open, a store whose label or count disagrees is damage (exit 3).
 *   A tree made before labels adopts its store as it finds it.
 */
static void
owner_make(mt_tree *t)
{
    uint64_t r = 0;
    if (getrandom(&r, sizeof r, 0) != (ssize_t)sizeof r)
        r = (uint64_t)time(NULL) << 20 ^ (uint64_t)getpid();
    snprintf(t->owner, sizeof t->owner, "tree-%016" PRIx64, r);
}

/* At creation: the store must be new (empty, unlabelled). */
static int
store_check_new(mt_tree *t, char *err, size_t errlen)
{
    char label[PST_OWNER_MAX], e[512];
    uint64_t recs;
    int rc = pst_owner(t->store, label, sizeof label, &recs, e, sizeof e);
    if (rc) {
        eng_errf(err, errlen, "the proof store: %s", e);
        return rc == PST_ECORRUPT ? MT_ECORRUPT : MT_ESTORE;
    }
    if (label[0] || recs) {
        eng_errf(err, errlen,
                 "the proof store beside %s already holds %" PRIu64 " records%s%s%s: a new proof "
                 "starts in an empty state directory",
                 t->dir, recs, label[0] ? " (of proof " : "", label, label[0] ? ")" : "");
        return MT_EINVAL;
    }
    owner_make(t);
    return 0;
}

/* What store_verdict finds besides damage. */
enum { STORE_OURS = 0, STORE_TO_LABEL = 1 };

/*
 * store_verdict - compares a store's label and record count with what the
 * tree t (its meta loaded) saw: STORE_OURS, STORE_TO_LABEL (a tree made
 * before labels, or one stopped between its creation and the label: the
 * store is labelled now), or MT_ECORRUPT with err (STORE AND TREE).
 */
static int
store_verdict(const mt_tree *t, const char *label, uint64_t recs, const char *sp, char *err,
              size_t errlen)
{
    if (!t->owner[0]) {
        if (!label[0])
            return STORE_TO_LABEL;
        eng_errf(err, errlen,
                 "the proof store %s belongs to proof %s, but the tree %s carries no "
                 "label: the store was swapped (the state is damaged)",
                 sp, label, t->dir);
        return MT_ECORRUPT;
    }
    if (!label[0] && recs == 0 && t->records == 0)
        return STORE_TO_LABEL;
    if (!label[0] && recs == 0) {
        eng_errf(err, errlen,
                 "the proof store %s is missing or empty, but held %" PRIu64
                 " records when the tree %s was last saved (the state is damaged)",
                 sp, t->records, t->dir);
        return MT_ECORRUPT;
    }
    if (strcmp(label, t->owner)) {
        eng_errf(err, errlen,
                 "the proof store %s belongs to %s, not to this tree's proof %s: it was "
                 "swapped (the state is damaged)",
                 sp, label[0] ? label : "no proof (it has no owner label)", t->owner);
        return MT_ECORRUPT;
    }
    if (recs < t->records) {
        eng_errf(err, errlen,
                 "the proof store %s holds %" PRIu64 " records, fewer than the %" PRIu64
                 " it held when the tree was last saved: records were lost (a damaged file, or "
                 "LMDB fell back to an older state; the state is damaged)",
                 sp, recs, t->records);
        return MT_ECORRUPT;
    }
    return STORE_OURS;
}

/* Reads the store's label and count into label/recs. */
static int
store_owner(const mt_tree *t, pst_env *st, char *label, uint64_t *recs, char *err, size_t errlen)
{
    char e[512];
    int rc = pst_owner(st, label, PST_OWNER_MAX, recs, e, sizeof e);
    if (rc) {
        eng_errf(err, errlen, "the proof store beside %s: %s", t->dir, e);
        return rc == PST_ECORRUPT ? MT_ECORRUPT : MT_ESTORE;
    }
    return 0;
}

/* At open: the store is this tree's, whole; labels it when it may. */
static int
store_check(mt_tree *t, char *err, size_t errlen)
{
    char label[PST_OWNER_MAX], e[512];
    uint64_t recs;
    int rc = store_owner(t, t->store, label, &recs, err, errlen);
    if (rc)
        return rc;
    rc = store_verdict(t, label, recs, pst_path(t->store), err, errlen);
    if (rc != STORE_TO_LABEL)
        return rc;
    int had = t->owner[0] != 0;
    if (!had)
        owner_make(t);
    if ((rc = pst_owner_set(t->store, t->owner, e, sizeof e))) {
        eng_errf(err, errlen, "the proof store: %s", e);
        return MT_ESTORE;
    }
    return had ? 0 : in_txn(t, txn_owner, NULL, err, errlen);
}

int
mt_open(const char *dir, const mt_create *create, const egdb *db, pst_env *store, mt_tree **out,
        char *err, size_t errlen)
{
    *out = NULL;
    mt_tree *t = calloc(1, sizeof *t);
    if (!t)
        return MT_ENOMEM;
    snprintf(t->dir, sizeof t->dir, "%s", dir);
    t->db = db;
    t->store = store;
    ab_new((size_t)16 << 20, &t->ab);
    int rc = env_open(t, dir, err, errlen);
    if (rc)
        goto fail;
    if (create) {
        char buf[64];
        MDB_txn *txn;
        if (!mdb_txn_begin(t->env, NULL, MDB_RDONLY, &txn)) {
            int has = !meta_get(t, txn, "schema", buf, sizeof buf);
            mdb_txn_abort(txn);
            if (has) {
                eng_errf(err, errlen,
                         "%s already holds a proof: resume it with "
                         "`checkers prove --state DIR`, or use another directory",
                         dir);
                rc = MT_EINVAL;
                goto fail;
            }
        }
        t->root = create->root;
        t->goal = create->goal;
        t->db_pieces = create->db_pieces;
        t->job_ms = create->job_ms;
        t->job_max_ms =
            create->job_max_ms >= t->job_ms ? create->job_max_ms : job_max_default(t->job_ms);
        t->job_nodes = create->job_nodes;
        t->score_nodes = create->score_nodes;
        t->h0 = t->h = create->h0;
        t->h_step = create->h_step > 0 ? create->h_step : 100;
        /* job ids start at a random multiple of 2^32, so that a worker's
         * unacknowledged result from another proof (same port, another
         * state) names no job of this one and is dropped, not taken for
         * one of its jobs */
        uint32_t r32 = 0;
        if (getrandom(&r32, sizeof r32, 0) != (ssize_t)sizeof r32)
            r32 = (uint32_t)time(NULL) ^ (uint32_t)getpid();
        t->first_job = t->next_job = ((uint64_t)(r32 & 0x7fffffffu) << 32) | 1;
        snprintf(t->seed, sizeof t->seed, "%s", create->seed ? create->seed : "");
        snprintf(t->db_dir, sizeof t->db_dir, "%s", create->db_dir ? create->db_dir : "");
        if ((rc = store_check_new(t, err, errlen)))
            goto fail;
        long r = node_add(t, &t->root);
        if (r < 0) {
            rc = (int)r;
            goto fail;
        }
        if ((rc = node_own(t, &t->n[0], err, errlen)))
            goto fail;
        node_score(t, &t->n[0]);
        t->q = next_question(t->goal, &t->root, t->n[0].bound, prv_hint(t->n[0].score));
        if ((rc = in_txn(t, txn_create, NULL, err, errlen)))
            goto fail;
        char e[512];
        if ((rc = pst_owner_set(t->store, t->owner, e, sizeof e))) {
            eng_errf(err, errlen, "the proof store: %s", e);
            rc = MT_ESTORE;
            goto fail;
        }
        if ((rc = seed_line(t, create->seed, err, errlen)))
            goto fail;
        if ((rc = in_txn(t, txn_create, NULL, err, errlen)))
            goto fail;
    } else {
        if (!(rc = load_meta(t, err, errlen)) && t->unadmitted) {
            eng_errf(err, errlen,
                     "tree %s was written before workers' proofs were checked on admission "
                     "(schema '%s'): its proof store may hold records no checker has seen, so "
                     "this program does not build on it. Start the proof again in a new state "
                     "directory; `checkers proof check --state` still checks what the old one "
                     "holds",
                     t->dir, MT_SCHEMA_UNADMITTED);
            rc = MT_EOLD;
        }
        if (rc || (rc = store_check(t, err, errlen)) || (rc = load_nodes(t, err, errlen)))
            goto fail;
        if (db == NULL && t->db_pieces > 0) {
            eng_errf(err, errlen, "the proof in %s rests on %d-piece databases: give --db", dir,
                     t->db_pieces);
            rc = MT_EINVAL;
            goto fail;
        }
    }
    if ((rc = pass(t, err, errlen)))
        goto fail;
    *out = t;
    return 0;
fail:
    mt_close(t);
    return rc;
}

void
mt_close(mt_tree *t)
{
    if (!t)
        return;
    if (t->env)
        mdb_env_close(t->env);
    for (uint32_t i = 0; i < t->count; i++) {
        free(t->n[i].kid);
        free(t->n[i].par);
    }
    free(t->wq);
    free(t->touched);
    free(t->n);
    free(t->slot);
    free(t->job);
    padm_items_free(&t->items);
    ab_free(t->ab);
    free(t);
}

/* ---- picking jobs ------------------------------------------------------------- */

int
mt_done(const mt_tree *t)
{
    return mt_goal_settled(t->goal, t->n[0].bound);
}

static mt_jobrec *
job_find(mt_tree *t, uint64_t id)
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

typedef struct job_arg {
    const mt_jobrec *j;
    int del;
} job_arg;

static int
txn_job(mt_tree *t, MDB_txn *txn, void *arg)
{
    job_arg *a = arg;
    MDB_val k = {8, (void *)&a->j->id};
    int rc;
    if (a->del) {
        rc = mdb_del(txn, t->jobs, &k, NULL);
        if (rc == MDB_NOTFOUND)
            rc = 0;
    } else {
        uint8_t v[MT_KEY + 2];
        pos_key(&t->n[a->j->node].pos, v);
        v[MT_KEY] = (uint8_t)a->j->q.attacker;
        v[MT_KEY + 1] = (uint8_t)a->j->q.target;
        MDB_val val = {sizeof v, v};
        rc = mdb_put(txn, t->jobs, &k, &val, 0);
    }
    return rc ? rc : meta_state(t, txn);
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
        n->flagged = n->inflight || (open > 0 && free_ == 0);
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
    } else if ((root->pn == 0 || root->dn == 0) && t->h < MT_H_INF) {
        t->h = t->h + t->h_step >= MT_H_INF ? MT_H_INF : t->h + t->h_step;
    } else {
        return 0;
    }
    if ((*rc = pass(t, err, errlen)) || (*rc = in_txn(t, txn_state, NULL, err, errlen)))
        return 0;
    return 1;
}

int
mt_pick(mt_tree *t, mt_job *job, char *err, size_t errlen)
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
        if (root->flagged)
            return MT_PICK_WAIT;
        /* descend: most-proving child at OR nodes, most-disproving at AND */
        uint32_t path[MT_MAXDEPTH];
        int len = 0;
        uint32_t cur = 0;
        path[len++] = 0;
        root->onpath = 1;
        int restart = 0;
        while (t->n[cur].expanded && t->n[cur].nkid && len < MT_MAXDEPTH) {
            mt_node *n = &t->n[cur];
            int or_node = n->pos.stm == t->q.attacker;
            long best = -1;
            int blocked = 0;
            for (uint16_t k = 0; k < n->nkid; k++) {
                const mt_node *c = &t->n[n->kid[k]];
                if (!c->pn || !c->dn || c->flagged)
                    continue;
                if (c->onpath) {
                    blocked = 1;
                    continue;
                }
                if (best < 0) {
                    best = n->kid[k];
                    continue;
                }
                const mt_node *b = &t->n[best];
                uint64_t cv = or_node ? c->pn : c->dn, bv = or_node ? b->pn : b->dn;
                uint64_t cw = or_node ? c->dn : c->pn, bw = or_node ? b->dn : b->pn;
                if (cv < bv || (cv == bv && cw > bw))
                    best = n->kid[k];
            }
            if (best < 0) {
                if (!blocked) { /* every open child in flight: stale flag */
                    n->flagged = 1;
                    restart = 1;
                }
                break; /* blocked by a repetition: the node itself is the job */
            }
            cur = (uint32_t)best;
            path[len++] = cur;
            t->n[cur].onpath = 1;
        }
        for (int d = 0; d < len; d++)
            t->n[path[d]].onpath = 0;
        mt_node *n = &t->n[cur];
        if (restart || n->inflight) {
            n->flagged = 1;
            reflag_path(t, path, len - 1);
            continue;
        }
        n->inflight = 1;
        /* flagged above it, on every path (transpositions too) */
        if ((rc = update_from(t, cur, err, errlen)))
            return rc;
        if (t->njob == t->capjob) {
            size_t nc = t->capjob ? t->capjob * 2 : 64;
            mt_jobrec *nj = realloc(t->job, nc * sizeof *nj);
            if (!nj)
                return MT_ENOMEM;
            t->job = nj;
            t->capjob = nc;
        }
        mt_jobrec *j = &t->job[t->njob++];
        *j = (mt_jobrec){t->next_job++, cur, t->q, 1};
        job_arg a = {j, 0};
        if ((rc = in_txn(t, txn_job, &a, err, errlen)))
            return rc;
        job->id = j->id;
        job->pos = n->pos;
        job->q = j->q;
        /* a node gets double the budget of its last job (JOBS in tree.h);
         * an interior node (a repetition blocks its children) cannot be
         * expanded instead, so its budget grows past the cap */
        uint32_t mult = n->expanded ? 1u << (n->jobs < 16 ? n->jobs : 16) : job_mult(t, n->jobs);
        job->time_ms = t->job_ms * mult;
        job->node_limit = t->job_nodes * mult;
        job->prefer = n->worker;
        return MT_PICK_JOB;
    }
    return MT_PICK_WAIT;
}

void
mt_child_scores(mt_tree *t, uint64_t id, const int16_t *scores, size_t n)
{
    t->kid_job = id;
    t->nkid_scores = n <= MT_SCORES_MAX ? (uint32_t)n : 0;
    if (t->nkid_scores)
        memcpy(t->kid_scores, scores, n * sizeof *scores);
}

void
mt_given(mt_tree *t, uint64_t id, uint32_t worker)
{
    mt_jobrec *j = job_find(t, id);
    if (j)
        t->n[j->node].worker = worker;
}

int
mt_job_wanted(const mt_tree *t, uint64_t id)
{
    for (size_t j = 0; j < t->njob; j++)
        if (t->job[j].id == id) {
            const mt_node *n = &t->n[t->job[j].node];
            return !mt_done(t) && q_status(&t->q, n) == 0;
        }
    return 0;
}

int
mt_release(mt_tree *t, uint64_t id, char *err, size_t errlen)
{
    mt_jobrec *j = job_find(t, id);
    if (!j || !j->live)
        return 0;
    j->live = 0;
    t->n[j->node].inflight = 0;
    return update_from(t, j->node, err, errlen); /* its flags change above it */
}

int
mt_release_all(mt_tree *t, char *err, size_t errlen)
{
    for (size_t j = 0; j < t->njob; j++) {
        t->job[j].live = 0;
        t->n[t->job[j].node].inflight = 0;
    }
    return pass(t, err, errlen);
}

/* ---- results -------------------------------------------------------------------- */

typedef struct result_arg {
    uint32_t node;
    uint64_t id;
} result_arg;

static int
txn_result(mt_tree *t, MDB_txn *txn, void *arg)
{
    result_arg *a = arg;
    MDB_val k = {8, &a->id};
    int rc = mdb_del(txn, t->jobs, &k, NULL);
    if (rc == MDB_NOTFOUND)
        rc = 0;
    if (!rc)
        rc = node_put(t, txn, &t->n[a->node]);
    return rc ? rc : meta_state(t, txn);
}

/* The bound the batch's records claim for pos (LW: none). */
static eng_bound
batch_bound(const pst_item *items, size_t n, const eng_pos *pos)
{
    eng_pos c = eng_canonical(pos);
    eng_bound b = ENG_LW;
    for (size_t k = 0; k < n; k++) {
        eng_pos ck = eng_canonical(&items[k].pos);
        if (ck.bm == c.bm && ck.wm == c.wm && ck.bk == c.bk && ck.wk == c.wk &&
            eng_bound_valid(items[k].rec.bound)) {
            eng_bound m = eng_bound_meet(b, items[k].rec.bound);
            b = m == ENG_BOUND_INVALID ? b : m;
        }
    }
    return b;
}

int
mt_result(mt_tree *t, uint64_t id, eng_bound bound, int settled, int score, int depth,
          uint64_t nodes, uint32_t ms, const pst_item *items, size_t n, size_t max_items, char *err,
          size_t errlen)
{
    mt_jobrec *j = job_find(t, id);
    if (!j) {
        /* a job of another proof, or answered already: nothing to check
         * its records against, so none is kept */
        if (n)
            eng_errf(err, errlen,
                     "job %" PRIu64 " is not open in this proof: its %zu records are dropped", id,
                     n);
        return 0;
    }
    uint32_t i = j->node;
    mt_node *nd = &t->n[i];
    char fen[ENG_FEN_MAX];
    eng_format_fen(&nd->pos, fen, sizeof fen);
    /* 1. admission (admit.h): the batch is checked as the proof of the
     * job's position before anything of it is written; a batch that
     * claims more than it proves, or holds anything else, is refused */
    if (!eng_bound_valid(bound))
        bound = ENG_LW;
    if (bound == ENG_LW && n) {
        eng_errf(err, errlen, "job %" PRIu64 " claims nothing for %s but sent %zu records", id, fen,
                 n);
        return MT_EREFUSED;
    }
    if (bound != ENG_LW) {
        eng_bound sent = batch_bound(items, n, &nd->pos);
        if (sent == ENG_LW || eng_bound_meet(sent, bound) != sent) {
            eng_errf(err, errlen, "job %" PRIu64 " claims %s for %s but its records prove %s", id,
                     eng_bound_name(bound), fen, sent == ENG_LW ? "nothing" : eng_bound_name(sent));
            return MT_EREFUSED;
        }
        padm_report rep;
        char aerr[512];
        int rc = padm_admit(t->store, t->db, items, n, &nd->pos, 1, 1, max_items, &rep, aerr,
                            sizeof aerr);
        if (padm_refused(rc)) {
            eng_errf(err, errlen, "job %" PRIu64 " (%s): refused at admission: %s", id, fen, aerr);
            return MT_EREFUSED;
        }
        if (rc) {
            eng_errf(err, errlen, "job %" PRIu64 " (%s): the proof store failed: %s", id, fen,
                     aerr);
            return rc == PST_ENOSPC ? MT_ENOSPC : MT_ESTORE;
        }
        t->admitted += rep.written;
        pst_record r;
        int g = pst_get(t->store, &nd->pos, &r);
        if (g != 0) {
            eng_errf(err, errlen, "job %" PRIu64 ": the admitted record of %s cannot be read: %s",
                     id, fen, pst_strerror(g));
            return MT_ESTORE;
        }
        nd->recorded = r.bound;
        bound = r.bound;
    }
    eng_bound m = eng_bound_meet(nd->own, bound);
    if (m == ENG_BOUND_INVALID) {
        eng_errf(err, errlen, "job %" PRIu64 " proved %s for %s, which contradicts the known %s",
                 id, eng_bound_name(bound), fen, eng_bound_name(nd->own));
        return MT_ESTORE;
    }
    if (m != nd->own) {
        nd->own = m;
        if (nd->src == SRC_NONE || nd->src == SRC_BACKUP)
            nd->src = SRC_STORE;
    }
    if (depth > 0) {
        nd->score = (int16_t)(score > 32000 ? 32000 : score < -32000 ? -32000 : score);
        nd->depth = (uint16_t)depth;
    }
    nd->jobs++;
    nd->job_ms += ms;
    nd->job_nodes += nodes;
    nd->inflight = 0;
    t->jobs_done++;
    t->jobs_proved += settled ? 1 : 0;
    job_drop(t, id);
    /* 3. a job that left its leaf open: the leaf's next job gets double
     * the budget, and when its budget has reached the cap the tree grows
     * there instead (a leaf's bound is its own; the one pass below backs
     * the result up) */
    int rc;
    if (!nd->expanded)
        nd->bound = m;
    int grows = job_mult(t, nd->jobs) > job_mult(t, nd->jobs - 1);
    if (t->kid_job != id) /* the scores sent were for another job */
        t->nkid_scores = 0;
    rc = 0;
    if (!mt_done(t) && q_status(&t->q, nd) == 0 && !nd->expanded && !grows)
        rc = expand(t, i, err, errlen);
    t->nkid_scores = 0;
    if (rc)
        return rc;
    result_arg a = {i, id};
    if ((rc = in_txn(t, txn_result, &a, err, errlen)))
        return rc;
    return update_from(t, i, err, errlen);
}

/* ---- reporting -------------------------------------------------------------------- */

int
mt_check_root(mt_tree *t, char *err, size_t errlen)
{
    pchk_result ck;
    char cerr[512], fen[ENG_FEN_MAX];
    eng_format_fen(&t->root, fen, sizeof fen);
    int rc = pchk_check(t->store, t->db, &t->root, &ck, cerr, sizeof cerr);
    if (rc) {
        eng_errf(err, errlen, "the checker cannot run on the root %s: %s", fen, cerr);
        return MT_ESTORE;
    }
    if (ck.status == PCHK_NOTHING) {
        eng_errf(err, errlen, "the proof store holds no record for the settled root %s", fen);
        return MT_ECORRUPT;
    }
    if (ck.status != PCHK_VALID) {
        eng_errf(err, errlen, "the proof of the settled root %s fails the checker at %s: %s", fen,
                 ck.where, ck.why);
        return MT_ECORRUPT;
    }
    if (!mt_goal_settled(t->goal, ck.bound)) {
        eng_errf(err, errlen,
                 "the checked bound %s of the root %s does not settle the goal %s that the tree "
                 "says is settled",
                 eng_bound_name(ck.bound), fen, mt_goal_name(t->goal));
        return MT_ECORRUPT;
    }
    return 0;
}

uint64_t
mt_admitted(const mt_tree *t)
{
    return t->admitted;
}

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
    out->jobs_done = t->jobs_done;
    out->jobs_proved = t->jobs_proved;
    out->jobs_issued = t->next_job - t->first_job;
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

typedef struct hist_arg {
    double s;
} hist_arg;

static int
txn_sample(mt_tree *t, MDB_txn *txn, void *arg)
{
    hist_arg *a = arg;
    const mt_node *root = &t->n[0];
    uint8_t v[8 * 6 + 1];
    uint64_t bits;
    memcpy(&bits, &a->s, 8);
    put64(v, bits);
    put64(v + 8, root->pn);
    put64(v + 16, root->dn);
    put64(v + 24, t->count);
    put64(v + 32, t->jobs_done);
    put64(v + 40, t->jobs_proved);
    v[48] = root->bound;
    uint64_t key = t->hist_n++;
    MDB_val k = {8, &key}, val = {sizeof v, v};
    int rc = mdb_put(txn, t->hist, &k, &val, 0);
    return rc ? rc : meta_state(t, txn);
}

int
mt_sample(mt_tree *t, double seconds, char *err, size_t errlen)
{
    hist_arg a = {seconds};
    return in_txn(t, txn_sample, &a, err, errlen);
}

int
mt_add_seconds(mt_tree *t, double s)
{
    t->seconds += s;
    return in_txn(t, txn_state, NULL, NULL, 0);
}

int
mt_history(mt_tree *t,
           void (*fn)(double s, uint64_t pn, uint64_t dn, uint64_t nodes, uint64_t jobs,
                      uint64_t proved, int bound, void *arg),
           void *arg)
{
    MDB_txn *txn;
    MDB_cursor *cur;
    if (mdb_txn_begin(t->env, NULL, MDB_RDONLY, &txn))
        return MT_EIO;
    if (mdb_cursor_open(txn, t->hist, &cur)) {
        mdb_txn_abort(txn);
        return MT_EIO;
    }
    MDB_val k, v;
    for (int rc = mdb_cursor_get(cur, &k, &v, MDB_FIRST); !rc;
         rc = mdb_cursor_get(cur, &k, &v, MDB_NEXT)) {
        if (v.mv_size != 49)
            continue;
        const uint8_t *b = v.mv_data;
        uint64_t bits = get64(b);
        double s;
        memcpy(&s, &bits, 8);
        fn(s, get64(b + 8), get64(b + 16), get64(b + 24), get64(b + 32), get64(b + 40), b[48], arg);
    }
    mdb_cursor_close(cur);
    mdb_txn_abort(txn);
    return 0;
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

int
mt_info(const char *dir, eng_pos *root, int *goal, int *db_pieces, char *err, size_t errlen)
{
    return mt_info_db(dir, root, goal, db_pieces, NULL, 0, err, errlen);
}

int
mt_store_check(const char *dir, pst_env *store, char *err, size_t errlen)
{
    mt_tree t;
    memset(&t, 0, sizeof t);
    snprintf(t.dir, sizeof t.dir, "%s", dir);
    t.rdonly = 1; /* it only reads the meta */
    int rc = env_open(&t, dir, err, errlen);
    if (!rc)
        rc = load_meta(&t, err, errlen);
    if (t.env)
        mdb_env_close(t.env);
    char label[PST_OWNER_MAX];
    uint64_t recs;
    if (!rc)
        rc = store_owner(&t, store, label, &recs, err, errlen);
    if (!rc)
        rc = store_verdict(&t, label, recs, pst_path(store), err, errlen);
    return rc == STORE_TO_LABEL ? 0 : rc;
}

int
mt_info_db(const char *dir, eng_pos *root, int *goal, int *db_pieces, char *db_dir, size_t cap,
           char *err, size_t errlen)
{
    mt_tree t;
    memset(&t, 0, sizeof t);
    snprintf(t.dir, sizeof t.dir, "%s", dir);
    t.rdonly = 1; /* it only reads: `serve` asks it before anything is open */
    struct stat sb;
    char dm[4200];
    snprintf(dm, sizeof dm, "%s/data.mdb", dir);
    if (stat(dm, &sb)) {
        eng_errf(err, errlen, "%s holds no proof tree (no %s)", dir, dm);
        return MT_EINVAL;
    }
    int rc = env_open(&t, dir, err, errlen);
    if (!rc)
        rc = load_meta(&t, err, errlen);
    if (t.env)
        mdb_env_close(t.env);
    if (!rc) {
        *root = t.root;
        *goal = t.goal;
        *db_pieces = t.db_pieces;
        if (db_dir && cap)
            snprintf(db_dir, cap, "%s", t.db_dir);
    }
    return rc;
}

/* ---- read-only access (the proof browser, manager/web.h) ------------------------ */

int
mt_open_ro(const char *dir, const egdb *db, pst_env *store, mt_tree **out, char *err,
           size_t errlen)
{
    *out = NULL;
    mt_tree *t = calloc(1, sizeof *t);
    if (!t)
        return MT_ENOMEM;
    snprintf(t->dir, sizeof t->dir, "%s", dir);
    t->db = db;
    t->store = store;
    t->rdonly = 1;
    ab_new((size_t)16 << 20, &t->ab); /* scores of children missing after a crash */
    struct stat sb;
    char dm[4200];
    snprintf(dm, sizeof dm, "%s/data.mdb", dir);
    int rc = MT_EINVAL;
    if (stat(dm, &sb)) {
        eng_errf(err, errlen, "%s holds no proof tree (no %s)", dir, dm);
        goto fail;
    }
    if ((rc = env_open(t, dir, err, errlen)) || (rc = load_meta(t, err, errlen)))
        goto fail;
    if (t->unadmitted) {
        eng_errf(err, errlen,
                 "tree %s was written before workers' proofs were checked on admission "
                 "(schema '%s'): `checkers proof check --state` checks what it holds",
                 t->dir, MT_SCHEMA_UNADMITTED);
        rc = MT_EOLD;
        goto fail;
    }
    if (db == NULL && t->db_pieces > 0) {
        eng_errf(err, errlen, "the proof in %s rests on %d-piece databases: give --db", dir,
                 t->db_pieces);
        rc = MT_EINVAL;
        goto fail;
    }
    /* the store is this tree's, whole (STORE AND TREE); nothing labelled */
    char label[PST_OWNER_MAX];
    uint64_t recs;
    if ((rc = store_owner(t, store, label, &recs, err, errlen)))
        goto fail;
    rc = store_verdict(t, label, recs, pst_path(store), err, errlen);
    if (rc != STORE_OURS && rc != STORE_TO_LABEL)
        goto fail;
    if ((rc = load_nodes(t, err, errlen)) || (rc = pass(t, err, errlen)))
        goto fail;
    *out = t;
    return 0;
fail:
    mt_close(t);
    return rc;
}

int
mt_lookup(const mt_tree *t, const eng_pos *p, mt_view *out)
{
    long i = node_find(t, p);
    if (i < 0)
        return MT_EINVAL;
    view_fill(t, (uint32_t)i, out);
    return 0;
}

size_t
mt_parents(const mt_tree *t, const eng_pos *p, eng_pos *out, size_t cap)
{
    long i = node_find(t, p);
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
