/*
 * tree_proof.c - where the proof tree meets the proof store (tree.h is
 * the manual, tree_int.h says how the tree is split): a node's own bound,
 * the tree's backed-up records and their admission, a worker's result
 * admitted before the graph takes it, the check of the settled root.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "manager/tree_int.h"
#include "prover/check.h"
#include "prover/leaf.h"

/* ---- a node's own bound --------------------------------------------------- */

int
mtp_own(mt_tree *t, mt_node *n, char *err, size_t errlen)
{
    /* The leaf rule (prover/leaf.h). A partial bound is the node's own
     * bound like an exact one: the tree's questions take from it what
     * it answers, and the store may still hold a stronger record. */
    pleaf lf;
    int v = pleaf_of(t->db, t->db ? t->db_pieces : 0, &n->pos, 0, &lf);
    if (v < 0) {
        char fen[ENG_FEN_MAX];
        eng_format_fen(&n->pos, fen, sizeof fen);
        eng_errf(err, errlen, "database probe of %s failed: %s", fen, egdb_strerror(v));
        return MT_EDB;
    }
    if (lf.kind == PLEAF_END) {
        n->own = ENG_LL;
        n->src = SRC_END;
    } else if (lf.kind == PLEAF_DB) {
        n->own = lf.bound;
        n->src = SRC_DB;
    } else if (t->store) { /* none in the in-memory tree of the tests */
        pst_record r;
        int rc = pst_get(t->store, &n->pos, &r);
        if (rc == 0) {
            n->own = n->recorded = r.bound;
            n->src = SRC_STORE;
            if (lf.kind == PLEAF_PARTIAL) {
                eng_bound m = eng_bound_meet(r.bound, lf.bound);
                if (m != ENG_BOUND_INVALID)
                    n->own = m;
            }
        } else if (rc != PST_ENOTFOUND) {
            char fen[ENG_FEN_MAX];
            eng_format_fen(&n->pos, fen, sizeof fen);
            eng_errf(err, errlen, "proof store read of %s failed: %s", fen, pst_strerror(rc));
            return MT_ESTORE;
        } else if (lf.kind == PLEAF_PARTIAL) {
            n->own = lf.bound;
            n->src = SRC_PARTIAL;
        }
    } else if (lf.kind == PLEAF_PARTIAL) {
        n->own = lf.bound;
        n->src = SRC_PARTIAL;
    }
    n->bound = eng_bound_meet(n->bound, n->own);
    if (n->bound == ENG_BOUND_INVALID)
        n->bound = n->own;
    return 0;
}

/* ---- backed-up records -------------------------------------------------------- */

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

void
mtp_backup_push(mt_tree *t, mt_node *n)
{
    /* A partial leaf needs no record for what its own bound says: the
     * checker takes it as a leaf for the questions that bound answers. */
    if (n->bound != n->recorded && n->src != SRC_DB && n->src != SRC_END &&
        !(n->src == SRC_PARTIAL && n->bound == n->own)) {
        pst_item it;
        backup_record(t, n, &it);
        if (padm_push(&t->items, &it) == 0 && n->src == SRC_NONE)
            n->src = SRC_BACKUP;
    }
}

/* The tree's own records (t->items) are admitted like a worker's: each
 * is a root, checked over the store's admitted records (admit.h). */
int
mtp_admit_backups(mt_tree *t, char *err, size_t errlen)
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
    /* the in-memory tree of the tests has no store: its records are taken
     * as written (tree_int.h, THE IN-MEMORY TREE) */
    int rc = t->store ? padm_admit(t->store, t->db, t->items.v, t->items.n, NULL, 0, 0, 0, &rep,
                                   aerr, sizeof aerr)
                      : 0;
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
        long k = mtg_find(t, &t->items.v[j].pos);
        if (k >= 0)
            t->n[k].recorded = t->items.v[j].rec.bound;
    }
    return 0;
}

/* ---- results -------------------------------------------------------------------- */

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
    mt_jobrec *j = mtg_job_find(t, id);
    if (!j) {
        /* a job of another proof, or answered already: nothing to check
         * its records against, so none is kept */
        if (n)
            eng_errf(err, errlen,
                     "job %" PRIu64 " is not open in this proof: its %zu records are dropped", id,
                     n);
        return 0;
    }
    mt_node *nd = &t->n[j->node];
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
    /* 2. the graph takes what the store now holds (tree_graph.c) */
    return mtg_result(t, j, bound, settled, score, depth, nodes, ms, err, errlen);
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
    /* a root the databases hold, or with no move, needs no record: its
     * value is the leaf the checker would take it for; a root of a
     * partial database adds its bound to what its record proves */
    pchk_db_root(t->db, &t->root, &ck);
    if (ck.status == PCHK_NOTHING) {
        eng_movelist ml;
        eng_generate(&t->root, &ml, ENG_DUPS_MERGE);
        if (ml.n != 0) {
            eng_errf(err, errlen, "the proof store holds no record for the settled root %s", fen);
            return MT_ECORRUPT;
        }
        ck.bound = ENG_LL;
        ck.status = PCHK_VALID;
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
