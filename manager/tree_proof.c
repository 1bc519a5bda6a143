/*
 * tree_proof.c - where the proof tree meets the proof store and the
 * databases (tree.h is the manual, tree_int.h says how the tree is
 * split): a position's own bound, the facts of a node's new children and
 * the seed line, the admission of the tree's backed-up records and of a
 * worker's result before the graph takes it, the check of the settled
 * root.
 *
 * OWNS: every read of the store and the databases the tree makes, and
 * every admission.
 * CALLS: the graph (tree_graph.c: facts in), prover/admit.h,
 * prover/check.h, prover/leaf.h (the leaf rule), prover/store.h,
 * egdb/egdb.h.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "manager/tree_int.h"
#include "prover/check.h"
#include "prover/leaf.h"

/* ---- a position's own bound ------------------------------------------------ */

int
mtp_own_of(mt_tree *t, const eng_pos *p, mtg_own *o, char *err, size_t errlen)
{
    /* The leaf rule (prover/leaf.h). A partial bound is the node's own
     * bound like an exact one: the tree's questions take from it what
     * it answers, and the store may still hold a stronger record. */
    *o = (mtg_own){ENG_LW, ENG_LW, SRC_NONE};
    pleaf lf;
    int v = pleaf_of(t->db, t->db ? t->db_pieces : 0, p, 0, &lf);
    if (v < 0) {
        char fen[ENG_FEN_MAX];
        eng_format_fen(p, fen, sizeof fen);
        eng_errf(err, errlen, "database probe of %s failed: %s", fen, egdb_strerror(v));
        return MT_EDB;
    }
    if (lf.kind == PLEAF_END) {
        o->own = ENG_LL;
        o->src = SRC_END;
    } else if (lf.kind == PLEAF_DB) {
        o->own = lf.bound;
        o->src = SRC_DB;
    } else if (t->store) { /* none in the in-memory tree of the tests */
        pst_record r;
        int rc = pst_get(t->store, p, &r);
        if (rc == 0) {
            o->own = o->recorded = r.bound;
            o->src = SRC_STORE;
            if (lf.kind == PLEAF_PARTIAL) {
                eng_bound m = eng_bound_meet(r.bound, lf.bound);
                if (m != ENG_BOUND_INVALID)
                    o->own = m;
            }
        } else if (rc != PST_ENOTFOUND) {
            char fen[ENG_FEN_MAX];
            eng_format_fen(p, fen, sizeof fen);
            eng_errf(err, errlen, "proof store read of %s failed: %s", fen, pst_strerror(rc));
            return MT_ESTORE;
        } else if (lf.kind == PLEAF_PARTIAL) {
            o->own = lf.bound;
            o->src = SRC_PARTIAL;
        }
    } else if (lf.kind == PLEAF_PARTIAL) {
        o->own = lf.bound;
        o->src = SRC_PARTIAL;
    }
    return 0;
}

/* ---- children ----------------------------------------------------------------- */

/* The facts of node i's children the graph does not hold yet, in move
 * order, into own[] (ENG_MAX_MOVES); *n the number of moves. */
static int
kid_facts(mt_tree *t, uint32_t i, mtg_own *own, int *n, char *err, size_t errlen)
{
    eng_movelist ml;
    eng_pos p = t->n[i].pos;
    *n = eng_generate(&p, &ml, ENG_DUPS_MERGE);
    for (int m = 0; m < ml.n; m++) {
        eng_pos c;
        eng_make(&p, &ml.m[m], &c);
        own[m] = (mtg_own){ENG_LW, ENG_LW, SRC_NONE};
        if (mtg_find(t, &c) < 0) {
            int rc = mtp_own_of(t, &c, &own[m], err, errlen);
            if (rc)
                return rc;
        }
    }
    return 0;
}

int
mtp_expand(mt_tree *t, uint32_t i, int early, char *err, size_t errlen)
{
    mtg_own own[ENG_MAX_MOVES];
    int n;
    if (t->n[i].expanded)
        return 0;
    int rc = kid_facts(t, i, own, &n, err, errlen);
    return rc ? rc : mtg_expand(t, i, own, n, early, err, errlen);
}

int
mtp_link(mt_tree *t, uint32_t i, char *err, size_t errlen)
{
    mtg_own own[ENG_MAX_MOVES];
    int n;
    int rc = kid_facts(t, i, own, &n, err, errlen);
    return rc ? rc : mtg_link(t, i, own, n);
}

/*
 * THE SEED LINE (tree.h)
 * A given line (`prove --seed`, or the openings' seeds.tsv, which
 * `checkers openings seed` searched outside the manager) is expanded
 * move by move. Without one the root alone is expanded: the manager
 * runs no search of its own, so it has no line to follow; the root's
 * first job (the root is early from the start) is the worker's search
 * of it, and its result gives the root's children their searched scores
 * (mtg_child_scores). Before, the manager searched the root for a second
 * with alpha-beta and expanded up to 16 plies of its principal variation.
 */
int
mtp_seed(mt_tree *t, const char *seed, char *err, size_t errlen)
{
    uint32_t cur = 0;
    int rc;
    if (!seed || !*seed) { /* a root the databases hold, or with no move, needs none */
        uint8_t src = t->n[0].src;
        return src == SRC_DB || src == SRC_END ? 0 : mtp_expand(t, 0, 0, err, errlen);
    }
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
        if ((rc = mtp_expand(t, cur, 0, err, errlen)))
            return rc;
        eng_pos c;
        eng_make(&t->n[cur].pos, &m, &c);
        long k = mtg_find(t, &c);
        if (k < 0) {
            eng_errf(err, errlen, "seed line, move %d '%s': child not found", ply + 1, tok);
            return MT_EINVAL;
        }
        cur = (uint32_t)k;
        ply++;
    }
    return mtp_expand(t, cur, 0, err, errlen);
}

/* ---- backed-up records -------------------------------------------------------- */

/* The tree's own records (the change set's backups, tree_graph.c) are
 * admitted like a worker's: each is a root, checked over the store's
 * admitted records (admit.h). */
int
mtp_admit_backups(mt_tree *t, char *err, size_t errlen)
{
    const padm_items *b = &t->chg.backup;
    if (!b->n || t->rdonly || !t->store) /* read-only: shown, never written; the
                                           in-memory tree: taken as written */
        return 0;
    padm_report rep;
    char aerr[512];
    int rc = padm_admit(t->store, t->db, b->v, b->n, NULL, 0, 0, 0, &rep, aerr, sizeof aerr);
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
mtp_admit_result(mt_tree *t, const mt_jobrec *j, eng_bound *boundp, const pst_item *items, size_t n,
                 size_t max_items, uint64_t *written, char *err, size_t errlen)
{
    *written = 0;
    uint64_t id = j->id;
    eng_bound bound = *boundp;
    const mt_node *nd = &t->n[j->node];
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
        *written = rep.written;
        pst_record r;
        int g = pst_get(t->store, &nd->pos, &r);
        if (g != 0) {
            eng_errf(err, errlen, "job %" PRIu64 ": the admitted record of %s cannot be read: %s",
                     id, fen, pst_strerror(g));
            return MT_ESTORE;
        }
        bound = r.bound;
    }
    *boundp = bound; /* what the store now holds: the graph's fact */
    return 0;
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
    if ((rc = pchk_db_root(t->db, &t->root, &ck, cerr, sizeof cerr)) < 0) {
        eng_errf(err, errlen, "the checker cannot value the root %s: %s", fen, cerr);
        return rc == PST_ECORRUPT ? MT_ECORRUPT : MT_ESTORE;
    }
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
