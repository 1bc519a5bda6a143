/*
 * tree_lmdb.c - the proof tree's persistence (tree.h is the manual and
 * says what is stored; tree_int.h says how the tree is split): its LMDB
 * environment, the graph's change sets written (mts_apply), open, create
 * and load, the tie to its proof store, and the history of the root's
 * numbers.
 *
 * OWNS: the state's LMDB environment (<state>/state: tree.h, THE STATE'S
 * LAYOUT) and the tree's databases in it; the proof store inside it is
 * opened here (pst_open_in) and closed with the tree.
 * CALLS: the upgrade of a state of the old layout (state_upgrade.c,
 * mt_state_upgrade, before the environment is opened), the graph (tree_graph.c: the nodes it loads,
 * their facts) and the proof part (tree_proof.c: own bounds at open, the children lost in a stop,
 * the seed line, the backed-up records admitted after its commit).
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

#include "manager/tree_int.h"

/* ---- constants -------------------------------------------------------- */

#define MT_MAP_BYTES ((size_t)1 << 36) /* address space, not disk */
#define MT_VAL 32

/* ---- types ------------------------------------------------------------ */

/* The tree's environment (one per tree, opened once) and its four
 * named databases (tree.h, PERSISTENCE). Apart from mt_tree so that the
 * graph, which has no I/O, needs no LMDB type. */
struct mts_env {
    MDB_env *env;
    MDB_dbi meta, nodes, jobs, hist;
    pst_env *store; /* the proof store inside env (state_open), closed first */
    int scoped;     /* a result's one transaction is open (mts_begin) */
};

/* A tree transaction's body, and what in_txn passes through the store's
 * pst_txn_write inside a result's transaction. */
typedef int (*txn_fn)(mt_tree *t, MDB_txn *txn, void *arg);
typedef struct scoped_op {
    mt_tree *t;
    txn_fn fn;
    void *arg;
} scoped_op;

/* ---- small helpers ------------------------------------------------------ */

static eng_pos
key_pos(const uint8_t k[MT_KEY])
{
    eng_pos p = {get32(k), get32(k + 4), get32(k + 8), get32(k + 12), k[16]};
    return p;
}

static const char *
lmdb_msg(int rc)
{
    return mdb_strerror(rc);
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
    return mdb_put(txn, t->lm->nodes, &key, &val, 0);
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
    return mdb_put(txn, t->lm->meta, &k, &v, 0);
}

static int
meta_get(mt_tree *t, MDB_txn *txn, const char *key, char *out, size_t cap)
{
    MDB_val k = {strlen(key), (void *)key}, v;
    int rc = mdb_get(txn, t->lm->meta, &k, &v);
    if (rc)
        return rc;
    size_t n = v.mv_size < cap - 1 ? v.mv_size : cap - 1;
    memcpy(out, v.mv_data, n);
    out[n] = 0;
    return 0;
}

/*
 * The meta entries' checksum (tree.h, PERSISTENCE): XXH64 over every
 * entry but "check" itself, key and value with their lengths, in key
 * order. The nodes carry their own checksums; the meta entries decide
 * what the tree is (root, goal, databases, owner label), and without one
 * a damaged entry read as a missing one: "give --db", or a proof store
 * "swapped" when the tree was what changed. RETURN 0 and *sum, or an
 * LMDB code.
 */
static const MDB_val meta_check_key = {5, (void *)"check"};

static int
meta_sum(mt_tree *t, MDB_txn *txn, uint64_t *sum)
{
    MDB_cursor *cur;
    int rc = mdb_cursor_open(txn, t->lm->meta, &cur);
    if (rc)
        return rc;
    uint64_t h = 0x6d6574612d73756dULL;
    MDB_val k, v;
    for (rc = mdb_cursor_get(cur, &k, &v, MDB_FIRST); !rc;
         rc = mdb_cursor_get(cur, &k, &v, MDB_NEXT)) {
        if (k.mv_size == meta_check_key.mv_size &&
            !memcmp(k.mv_data, meta_check_key.mv_data, k.mv_size))
            continue;
        h = XXH64(k.mv_data, k.mv_size, h ^ k.mv_size);
        h = XXH64(v.mv_data, v.mv_size, h ^ ((uint64_t)v.mv_size << 32));
    }
    mdb_cursor_close(cur);
    *sum = h;
    return rc == MDB_NOTFOUND ? 0 : rc;
}

/* Rewrites "check" (inside a write transaction, after its meta writes). */
static int
meta_seal(mt_tree *t, MDB_txn *txn)
{
    uint64_t sum;
    int rc = meta_sum(t, txn, &sum);
    if (rc)
        return rc;
    char hex[17];
    snprintf(hex, sizeof hex, "%016" PRIx64, sum);
    MDB_val k = meta_check_key, v = {16, hex};
    return mdb_put(txn, t->lm->meta, &k, &v, 0);
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
    if (!rc)
        rc = meta_put(t, txn, "other_question", "%" PRIu32 " %" PRIu64, t->oq_jobs, t->oq_ms);
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

/* A write that failed with rc: on a full disk (ENOSPC, or the EIO LMDB
 * gives for a short write) err says so, naming the folder, and the
 * answer is MT_ENOSPC (not damage: LMDB loses the transaction whole and
 * the file stays as it was); otherwise MT_EIO with LMDB's words after
 * before, dir and after. */
static int
write_failed(const char *dir, int rc, const char *before, const char *after, char *err,
             size_t errlen)
{
    uint64_t avail = 0;
    if ((rc == ENOSPC || rc == EIO || rc == EDQUOT) && pst_disk_full(dir, &avail)) {
        eng_errf(err, errlen,
                 "tree %s: the disk is full (%" PRIu64 " bytes free): free some space and "
                 "run again, nothing was lost",
                 dir, avail);
        return MT_ENOSPC;
    }
    eng_errf(err, errlen, "%s%s%s: %s", before, dir, after, lmdb_msg(rc));
    return MT_EIO;
}

/* fn, then the meta sealed: in_txn's body inside a result's transaction
 * (pst_txn_body). */
static int
scoped_body(MDB_txn *txn, void *arg, char *err, size_t errlen)
{
    (void)err;
    (void)errlen;
    scoped_op *op = arg;
    int rc = op->fn(op->t, txn, op->arg);
    return rc ? rc : meta_seal(op->t, txn);
}

/* Runs fn inside one write transaction and commits; inside a result's
 * transaction (mts_begin), inside that one, committed with it. */
static int
in_txn(mt_tree *t, txn_fn fn, void *arg, char *err, size_t errlen)
{
    if (!t->lm) /* the in-memory tree of the tests keeps nothing (tree_int.h) */
        return 0;
    if (t->lm->scoped) {
        scoped_op op = {t, fn, arg};
        char e[512];
        int rc = pst_txn_write(t->store, scoped_body, &op, e, sizeof e);
        if (rc == 0)
            return 0;
        eng_errf(err, errlen, "tree %s: write failed: %s", t->dir, e);
        return rc == PST_ENOSPC ? MT_ENOSPC : MT_EIO;
    }
    MDB_txn *txn;
    int rc = mdb_txn_begin(t->lm->env, NULL, 0, &txn);
    if (!rc) {
        rc = fn(t, txn, arg);
        if (!rc)
            rc = meta_seal(t, txn); /* every write: the meta as they now are */
        if (rc)
            mdb_txn_abort(txn);
        else
            rc = mdb_txn_commit(txn);
    }
    return rc ? write_failed(t->dir, rc, "tree ", ": write failed", err, errlen) : 0;
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

/* ---- the change set's writes (tree_int.h, THE CHANGE SET) --------------- */

/* Job j's record in "jobs" (tree.h, PERSISTENCE). */
static int
job_put(mt_tree *t, MDB_txn *txn, const mt_jobrec *j)
{
    MDB_val k = {8, (void *)&j->id};
    uint8_t v[MT_KEY + 3];
    pos_key(&t->n[j->node].pos, v);
    v[MT_KEY] = (uint8_t)j->q.attacker;
    v[MT_KEY + 1] = (uint8_t)j->q.target;
    v[MT_KEY + 2] = (uint8_t)(j->other != 0);
    MDB_val val = {sizeof v, v};
    return mdb_put(txn, t->lm->jobs, &k, &val, 0);
}

/* Everything the change set names for the tree, and the counters. */
static int
txn_apply(mt_tree *t, MDB_txn *txn, void *arg)
{
    (void)arg;
    const mtg_changes *c = &t->chg;
    int rc = 0;
    for (size_t k = 0; !rc && k < c->nnode; k++)
        rc = node_put(t, txn, &t->n[c->node[k]]);
    for (size_t k = 0; !rc && k < c->nissued; k++)
        rc = job_put(t, txn, &c->issued[k]);
    for (size_t k = 0; !rc && k < c->nanswered; k++) {
        MDB_val key = {8, &c->answered[k]};
        rc = mdb_del(txn, t->lm->jobs, &key, NULL);
        if (rc == MDB_NOTFOUND) /* issued before a stop that lost it */
            rc = 0;
    }
    return rc ? rc : meta_state(t, txn);
}

int
mts_begin(mt_tree *t, char *err, size_t errlen)
{
    if (!t->lm || t->rdonly || t->lm->scoped)
        return 0;
    char e[512];
    int rc = pst_txn_begin(t->store, e, sizeof e);
    if (rc) {
        eng_errf(err, errlen, "tree %s: cannot begin a result's transaction: %s", t->dir, e);
        return rc == PST_ECORRUPT ? MT_ECORRUPT : MT_EIO;
    }
    t->lm->scoped = 1;
    return 0;
}

int
mts_end(mt_tree *t, int commit, char *err, size_t errlen)
{
    if (!t->lm || !t->lm->scoped)
        return 0;
    t->lm->scoped = 0;
    char e[512];
    int rc = pst_txn_end(t->store, commit, e, sizeof e);
    if (rc) {
        eng_errf(err, errlen, "tree %s: a result's commit failed, nothing of it kept: %s", t->dir,
                 e);
        return rc == PST_ENOSPC ? MT_ENOSPC : rc == PST_ECORRUPT ? MT_ECORRUPT : MT_EIO;
    }
    return 0;
}

int
mts_apply(mt_tree *t, char *err, size_t errlen)
{
    const mtg_changes *c = &t->chg;
    int rc = 0;
    if (c->oom) {
        eng_errf(err, errlen, "tree %s: out of memory", t->dir);
        rc = MT_ENOMEM;
    } else if (!t->rdonly && (c->nnode || c->nissued || c->nanswered || c->state)) {
        rc = in_txn(t, txn_apply, NULL, err, errlen);
    }
    /* the tree's transaction first: the records it backs up rest on the
     * nodes it names (tree.c, WHY THE APPLY COMES LAST) */
    if (!rc)
        rc = mtp_admit_backups(t, err, errlen);
    mtg_changes_clear(t);
    return rc;
}

/* ---- opening and creating ---------------------------------------------------- */

/*
 * A tree whose file was made but whose first commit never happened (the
 * disk filled while the state was created: LMDB writes the file's first
 * pages at open, the tables only at the first commit) holds nothing: it
 * is no tree, not a damaged one, and a new proof may be started in its
 * place. Its main table is empty; a tree ever committed has its four
 * tables there. RETURN 0 (it was written), or MT_EINVAL with err.
 */
static int
never_written(mt_tree *t, const char *dir, char *err, size_t errlen)
{
    MDB_txn *txn;
    MDB_dbi main_dbi;
    MDB_stat st;
    int rc = mdb_txn_begin(t->lm->env, NULL, MDB_RDONLY, &txn);
    if (rc)
        return 0; /* the table reads below say what is wrong */
    int empty = !mdb_dbi_open(txn, NULL, 0, &main_dbi) && !mdb_stat(txn, main_dbi, &st) &&
                st.ms_entries == 0;
    mdb_txn_abort(txn);
    if (!empty)
        return 0;
    eng_errf(err, errlen,
             "%s holds no proof tree: it was never written whole (the disk was full when the "
             "proof was started?)",
             dir);
    return MT_EINVAL;
}

/* Opens (creating) the environment in dir into t->lm; on an error t->lm
 * may be left half open: env_close frees it. */
static int
env_open(mt_tree *t, const char *dir, char *err, size_t errlen)
{
    if (!t->lm && !(t->lm = calloc(1, sizeof *t->lm)))
        return MT_ENOMEM;
    if (!t->rdonly && mkdir(dir, 0755) && errno != EEXIST) {
        eng_errf(err, errlen, "cannot create %s: %s", dir, strerror(errno));
        return MT_EIO;
    }
    /* a full disk: an error, not SIGBUS or a file refused for good */
    char why[600];
    int hc = t->rdonly ? 0 : pst_lmdb_prepare(dir, 126, why, sizeof why);
    if (hc) {
        eng_errf(err, errlen, "tree %s", why);
        return hc == PST_ENOSPC ? MT_ENOSPC : MT_EIO;
    }
    /* the fields LMDB trusts, checked before it reads them (a truncated
     * file would make it fault, not fail) */
    hc = pst_lmdb_check(dir, why, sizeof why);
    if (hc) {
        eng_errf(err, errlen, "the tree is damaged: %s", why);
        return hc == PST_EIO ? MT_EIO : MT_ECORRUPT;
    }
    int rc = mdb_env_create(&t->lm->env);
    if (!rc)
        rc = mdb_env_set_maxdbs(t->lm->env, 8);
    if (!rc)
        rc = mdb_env_set_mapsize(t->lm->env, MT_MAP_BYTES);
    if (!rc)
        rc = mdb_env_open(t->lm->env, dir, MDB_NOTLS | (t->rdonly ? MDB_RDONLY : 0), 0644);
    if (rc) /* creating the file writes its first pages */
        return write_failed(dir, rc, "cannot open the tree in ", "", err, errlen);
    /* every page read once, guarded, before anything else reads one: a
     * damaged page is an error here, not a fault in load_nodes */
    hc = pst_lmdb_walk(t->lm->env, dir, why, sizeof why);
    if (hc) {
        eng_errf(err, errlen, "the tree is damaged: %s", why);
        return hc == PST_EIO ? MT_EIO : MT_ECORRUPT;
    }
    MDB_txn *txn;
    /* read-only: the tables must exist (a read transaction, committed so
     * that its handles stay open for the later ones) */
    unsigned create = t->rdonly ? 0 : MDB_CREATE;
    if (t->rdonly && (rc = never_written(t, dir, err, errlen)))
        return rc;
    rc = mdb_txn_begin(t->lm->env, NULL, t->rdonly ? MDB_RDONLY : 0, &txn);
    if (!rc)
        rc = mdb_dbi_open(txn, MT_DB_META, create, &t->lm->meta);
    if (!rc)
        rc = mdb_dbi_open(txn, MT_DB_NODES, create, &t->lm->nodes);
    if (!rc)
        rc = mdb_dbi_open(txn, MT_DB_JOBS, create | MDB_INTEGERKEY, &t->lm->jobs);
    if (!rc)
        rc = mdb_dbi_open(txn, MT_DB_HIST, create | MDB_INTEGERKEY, &t->lm->hist);
    if (!rc)
        rc = mdb_txn_commit(txn);
    else
        mdb_txn_abort(txn);
    if (rc)
        return write_failed(dir, rc, "cannot open the tree's tables in ", "", err, errlen);
    return 0;
}

/*
 * state_open - the state in folder state opened into t (THE STATE'S
 * LAYOUT in tree.h): a state of the old layout upgraded first
 * (mt_state_upgrade), then its one environment (t->dir is its folder,
 * <state>/state) with the tree's databases, and the proof store inside
 * it (pst_open_in; t->store, owned by t). RETURN 0 or MT_E* with err.
 */
static int
state_open(mt_tree *t, const char *state, char *err, size_t errlen)
{
    snprintf(t->dir, sizeof t->dir, "%.4000s/%s", state, MT_STATE_DIR);
    int rc = mt_state_upgrade(state, err, errlen);
    if (rc < 0)
        return rc;
    if ((rc = env_open(t, t->dir, err, errlen)))
        return rc;
    char e[600];
    int sc =
        pst_open_in(t->lm->env, t->dir, t->rdonly ? PST_RDONLY : 0, &t->lm->store, e, sizeof e);
    if (sc) {
        eng_errf(err, errlen, "the proof store in %s: %s", t->dir, e);
        return sc == PST_ECORRUPT || sc == PST_EVERSION ? MT_ECORRUPT
               : sc == PST_ENOSPC                       ? MT_ENOSPC
                                                        : MT_ESTORE;
    }
    t->store = t->lm->store;
    return 0;
}

/* Whether dir holds a tree (its data.mdb), for the calls that must not
 * create one. RETURN 0, or MT_EINVAL with err. */
static int
tree_present(const char *dir, char *err, size_t errlen)
{
    struct stat sb;
    char dm[4200];
    snprintf(dm, sizeof dm, "%s/data.mdb", dir);
    if (stat(dm, &sb)) {
        eng_errf(err, errlen, "%s holds no proof tree (no %s)", dir, dm);
        return MT_EINVAL;
    }
    /* less than two pages: LMDB's first write, cut short by a full disk
     * (pst_lmdb_prepare); no commit ever happened in it */
    long os_page = sysconf(_SC_PAGESIZE);
    if (sb.st_size < 2 * (os_page > 0 ? os_page : 4096)) {
        eng_errf(err, errlen,
                 "%s holds no proof tree: it was never written whole (the disk was full when "
                 "the proof was started?)",
                 dir);
        return MT_EINVAL;
    }
    return 0;
}

static void
env_close(mt_tree *t)
{
    if (t->lm && t->lm->store) /* its pooled transactions before the environment */
        pst_close(t->lm->store);
    if (t->lm && t->lm->env)
        mdb_env_close(t->lm->env);
    free(t->lm);
    t->lm = NULL;
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
        rc = meta_put(t, txn, "root_jobs", "%d", !t->no_root_jobs);
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

/* The tree's metadata read back into t, every entry checked.
 * LONG: one read transaction over the meta entries, each parsed and
 * range-checked where it is read; split up, the entries' checks would be
 * far from the keys they check. */
static int
load_meta(mt_tree *t, char *err, size_t errlen)
{
    MDB_txn *txn;
    int rc = mdb_txn_begin(t->lm->env, NULL, MDB_RDONLY, &txn);
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
    /* the checksum of the entries (schema 2 trees: a schema 1 tree
     * predates it, and is refused below anyway) */
    uint64_t sum = 0;
    MDB_val ck = meta_check_key, cv;
    if (!t->unadmitted && !meta_sum(t, txn, &sum) && !mdb_get(txn, t->lm->meta, &ck, &cv)) {
        char want[17], have[17] = "";
        snprintf(want, sizeof want, "%016" PRIx64, sum);
        if (cv.mv_size == 16)
            memcpy(have, cv.mv_data, 16);
        have[16] = 0;
        if (strcmp(have, want)) {
            mdb_txn_abort(txn);
            eng_errf(err, errlen,
                     "the tree is damaged: %s/data.mdb: its meta entries (root, goal, "
                     "databases, owner label, counters) fail their checksum: one was changed, "
                     "added or removed outside this program",
                     t->dir);
            return MT_ECORRUPT;
        }
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
        t->job_max_ms = mtg_job_max_default(t->job_ms);
    /* the root's own jobs (tree.h, IDLE WORKERS); a tree made before them
     * has them from now on */
    int rj;
    if (!bad && (meta_get(t, txn, "root_jobs", buf, sizeof buf) || sscanf(buf, "%d", &rj) != 1))
        rj = 1;
    t->no_root_jobs = !rj;
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
    /* the root's other question's series (tree.h); a tree made before
     * it was kept begins it again */
    if (!bad && (meta_get(t, txn, "other_question", buf, sizeof buf) ||
                 sscanf(buf, "%" SCNu32 " %" SCNu64, &t->oq_jobs, &t->oq_ms) != 2)) {
        t->oq_jobs = 0;
        t->oq_ms = 0;
    }
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

/* Every node read back into the graph, each record checked.
 * LONG: one cursor over the nodes in one read transaction; the decoding
 * and its checks (a damaged page is an error, never a fault) belong to
 * that loop. */
static int
load_nodes(mt_tree *t, char *err, size_t errlen)
{
    MDB_txn *txn;
    MDB_cursor *cur;
    int rc = mdb_txn_begin(t->lm->env, NULL, MDB_RDONLY, &txn);
    if (!rc)
        rc = mdb_cursor_open(txn, t->lm->nodes, &cur);
    if (rc) {
        eng_errf(err, errlen, "tree %s: %s", t->dir, lmdb_msg(rc));
        return MT_EIO;
    }
    /* the root first, at index 0 */
    long r = mtg_add(t, &t->root);
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
        long i = mtg_find(t, &p);
        if (i < 0)
            i = mtg_add(t, &p);
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
    if (!out && !mdb_cursor_open(txn, t->lm->jobs, &cur)) {
        for (rc = mdb_cursor_get(cur, &k, &v, MDB_FIRST); !rc;
             rc = mdb_cursor_get(cur, &k, &v, MDB_NEXT)) {
            /* MT_KEY + 2: a tree made before the other question's mark */
            if (k.mv_size != 8 || (v.mv_size != MT_KEY + 2 && v.mv_size != MT_KEY + 3))
                continue;
            uint64_t id;
            memcpy(&id, k.mv_data, 8);
            eng_pos p = key_pos(v.mv_data);
            long i = mtg_find(t, &p);
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
            /* marked the other question's, unless the tree has since
             * gone on to that question: then it is the root's own, as
             * the question's change made it in that run (tree_graph.c) */
            int other = v.mv_size == MT_KEY + 3 && vb[MT_KEY + 2] == 1 &&
                        !(jq.attacker == t->q.attacker && jq.target == t->q.target);
            t->job[t->njob++] = (mt_jobrec){id, (uint32_t)i, jq, 0, 0, other};
        }
        mdb_cursor_close(cur);
    }
    mdb_txn_abort(txn);
    if (out)
        return out;
    /* bounds, then children (which may create nodes missing after a crash) */
    uint32_t loaded = t->count;
    for (uint32_t i = 0; i < loaded; i++) {
        mtg_own o;
        int e = mtp_own_of(t, &t->n[i].pos, &o, err, errlen);
        if (e)
            return e;
        mtg_set_own(t, i, &o);
    }
    for (uint32_t i = 0; i < loaded; i++) {
        if (!t->n[i].expanded)
            continue;
        int e = mtp_link(t, i, err, errlen); /* children lost in a stop: in the change set */
        if (e)
            return e;
    }
    return 0;
}

/*
 * STORE AND TREE
 *   The tree's bounds rest on the proof store. Until issue 42 the store
 *   was <state>/proofs, another LMDB environment, and nothing in LMDB
 *   tied the two together: a proofs folder that was missing, emptied,
 *   swapped for another proof's, or rolled back by LMDB to an older meta
 *   page would make the tree start over, or adopt records it never
 *   admitted, without a word. Both are now in one environment (THE
 *   STATE'S LAYOUT), but a state of the old layout is upgraded as it is
 *   found, so the checks stay: they refuse what the old folders brought
 *   with them (tests/e2e_damaged_state.sh). Two facts tie them:
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
                 "label: the store was swapped, or the tree's label lost (the state is damaged)",
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
        return rc == PST_ENOSPC ? MT_ENOSPC : MT_ESTORE;
    }
    return had ? 0 : in_txn(t, txn_owner, NULL, err, errlen);
}

/* The databases a loaded tree rests on must be given (db). RETURN 0, or
 * MT_EINVAL with err. */
static int
db_given(const mt_tree *t, const egdb *db, char *err, size_t errlen)
{
    if (db == NULL && t->db_pieces > 0) {
        char name[48];
        egdb_scope_name(t->db_pieces, name, sizeof name);
        eng_errf(err, errlen, "the proof in %s rests on the %s-piece databases: give --db", t->dir,
                 name);
        return MT_EINVAL;
    }
    return 0;
}

/* A tree with nothing loaded, on the databases db. NULL when memory
 * runs out. */
static mt_tree *
tree_new(const egdb *db)
{
    mt_tree *t = calloc(1, sizeof *t);
    if (!t)
        return NULL;
    t->db = db;
    return t;
}

pst_env *
mt_store(const mt_tree *t)
{
    return t->store;
}

int
mt_open(const char *state, const mt_create *create, const egdb *db, mt_tree **out, char *err,
        size_t errlen)
{
    *out = NULL;
    mt_tree *t = tree_new(db);
    if (!t)
        return MT_ENOMEM;
    const char *dir = t->dir; /* the environment's folder, for the messages */
    int rc = state_open(t, state, err, errlen);
    if (rc)
        goto fail;
    if (create) {
        char buf[64];
        MDB_txn *txn;
        if (!mdb_txn_begin(t->lm->env, NULL, MDB_RDONLY, &txn)) {
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
        mtg_params(t, create);
        /* job ids start at a random multiple of 2^32, so that a worker's
         * unacknowledged result from another proof (same port, another
         * state) names no job of this one and is dropped, not taken for
         * one of its jobs */
        uint32_t r32 = 0;
        if (getrandom(&r32, sizeof r32, 0) != (ssize_t)sizeof r32)
            r32 = (uint32_t)time(NULL) ^ (uint32_t)getpid();
        t->first_job = t->next_job = ((uint64_t)(r32 & 0x7fffffffu) << 32) | 1;
        mtg_own own;
        if ((rc = store_check_new(t, err, errlen)) ||
            (rc = mtp_own_of(t, &t->root, &own, err, errlen)) || (rc = mtg_root(t, &own)))
            goto fail;
        if ((rc = in_txn(t, txn_create, NULL, err, errlen)))
            goto fail;
        char e[512];
        if ((rc = pst_owner_set(t->store, t->owner, e, sizeof e))) {
            eng_errf(err, errlen, "the proof store: %s", e);
            rc = rc == PST_ENOSPC ? MT_ENOSPC : MT_ESTORE; /* a full disk: resumable */
            goto fail;
        }
        if ((rc = mtp_seed(t, create->seed, err, errlen)) || (rc = mts_apply(t, err, errlen)))
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
        if (rc || (rc = store_check(t, err, errlen)) || (rc = load_nodes(t, err, errlen)) ||
            (rc = db_given(t, db, err, errlen)))
            goto fail;
    }
    mtg_root_early(t);
    if ((rc = mtg_pass(t, err, errlen)) || (rc = mts_apply(t, err, errlen)))
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
    if (t) { /* the environment first: the graph does not know it */
        env_close(t);
        mtg_free(t);
    }
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
    int rc = mdb_put(txn, t->lm->hist, &k, &val, 0);
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
    if (!t->lm) /* the in-memory tree: no history */
        return 0;
    if (mdb_txn_begin(t->lm->env, NULL, MDB_RDONLY, &txn))
        return MT_EIO;
    if (mdb_cursor_open(txn, t->lm->hist, &cur)) {
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

int
mt_info(const char *state, eng_pos *root, int *goal, int *db_pieces, char *err, size_t errlen)
{
    return mt_info_db(state, root, goal, db_pieces, NULL, 0, err, errlen);
}

int
mt_open_store(const char *state, mt_tree **out, char *err, size_t errlen)
{
    *out = NULL;
    mt_tree *t = tree_new(NULL);
    if (!t)
        return MT_ENOMEM;
    t->rdonly = 1; /* it only reads the meta and the store */
    char label[PST_OWNER_MAX];
    uint64_t recs;
    int rc = state_open(t, state, err, errlen);
    if (!rc)
        rc = load_meta(t, err, errlen);
    if (!rc)
        rc = store_owner(t, t->store, label, &recs, err, errlen);
    if (!rc)
        rc = store_verdict(t, label, recs, pst_path(t->store), err, errlen);
    if (rc != 0 && rc != STORE_TO_LABEL) {
        mt_close(t);
        return rc;
    }
    *out = t;
    return 0;
}

int
mt_info_db(const char *state, eng_pos *root, int *goal, int *db_pieces, char *db_dir, size_t cap,
           char *err, size_t errlen)
{
    mt_tree t;
    memset(&t, 0, sizeof t);
    t.rdonly = 1; /* it only reads: `serve` asks it before anything is open */
    snprintf(t.dir, sizeof t.dir, "%.4000s/%s", state, MT_STATE_DIR);
    int rc = mt_state_upgrade(state, err, errlen);
    if (rc < 0)
        return rc;
    if ((rc = tree_present(t.dir, err, errlen)))
        return rc;
    rc = env_open(&t, t.dir, err, errlen);
    if (!rc)
        rc = load_meta(&t, err, errlen);
    env_close(&t);
    if (!rc) {
        *root = t.root;
        *goal = t.goal;
        *db_pieces = t.db_pieces;
        if (db_dir && cap)
            snprintf(db_dir, cap, "%s", t.db_dir);
    }
    return rc;
}

/* ---- read-only access (the proof browser, web/web.h) ------------------------ */

int
mt_open_ro(const char *state, const egdb *db, mt_tree **out, char *err, size_t errlen)
{
    *out = NULL;
    mt_tree *t = tree_new(db);
    if (!t)
        return MT_ENOMEM;
    t->rdonly = 1;
    snprintf(t->dir, sizeof t->dir, "%.4000s/%s", state, MT_STATE_DIR);
    pst_env *store;
    int rc = mt_state_upgrade(state, err, errlen);
    if (rc < 0 || (rc = tree_present(t->dir, err, errlen)) ||
        (rc = state_open(t, state, err, errlen)) || (rc = load_meta(t, err, errlen)))
        goto fail;
    store = t->store;
    if (t->unadmitted) {
        eng_errf(err, errlen,
                 "tree %s was written before workers' proofs were checked on admission "
                 "(schema '%s'): `checkers proof check --state` checks what it holds",
                 t->dir, MT_SCHEMA_UNADMITTED);
        rc = MT_EOLD;
        goto fail;
    }
    if ((rc = db_given(t, db, err, errlen)))
        goto fail;
    /* the store is this tree's, whole (STORE AND TREE); nothing labelled */
    char label[PST_OWNER_MAX];
    uint64_t recs;
    if ((rc = store_owner(t, store, label, &recs, err, errlen)))
        goto fail;
    rc = store_verdict(t, label, recs, pst_path(store), err, errlen);
    if (rc != STORE_OURS && rc != STORE_TO_LABEL)
        goto fail;
    if ((rc = load_nodes(t, err, errlen)) || (rc = mtg_pass(t, err, errlen)) ||
        (rc = mts_apply(t, err, errlen))) /* read-only: nothing written */
        goto fail;
    *out = t;
    return 0;
fail:
    mt_close(t);
    return rc;
}
