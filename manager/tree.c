/*
 * tree.c - the proof tree's driver (tree.h is the manual, tree_int.h says
 * how the tree is split): the calls of tree.h that change the tree. Each
 * gives the pure graph (tree_graph.c) its facts, brings the children it
 * asks for (tree_proof.c, mtp_expand), and applies the change set it
 * leaves (tree_lmdb.c, mts_apply: the tree's writes in one transaction,
 * then the backed-up records admitted).
 *
 * OWNS: nothing but the order of those steps, and the scores a worker
 * sent with a result until the result is admitted (mt_child_scores).
 * CALLS: the graph, the proof part and persistence. Nothing calls
 * it but the manager (manager.c), the commands and the tests.
 *
 * WHY THE APPLY COMES LAST
 *   A call's change set is applied once, after the graph is done with the
 *   call: one tree transaction for everything it changed (before, an
 *   expansion, the answered job and each pass's records were written one
 *   after the other), then the records the tree backs up, which rest on
 *   the nodes just written. Whatever fails stops the run with the state
 *   whole: the tree's transaction commits whole or not at all, and a
 *   record not yet admitted is backed up again by the next open's pass.
 */
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "manager/tree_int.h"

/* ---- constants -------------------------------------------------------- */

#define PICK_EXPANSIONS 64 /* early expansions one pick may ask for, at most */

/* ---- functions -------------------------------------------------------- */

/* The test hook of ONE TRANSACTION PER RESULT (tree.h): with
 * CHECKERS_RESULT_KILL=admitted the process is killed (SIGKILL) after a
 * result's admission, before the graph's change is applied, so that a
 * test can show that the admitted records were not kept without it. */
static void
result_hook(void)
{
    const char *k = getenv("CHECKERS_RESULT_KILL");
    if (k && !strcmp(k, "admitted"))
        raise(SIGKILL);
}

/* The change set applied, after a graph call that returned rc: a
 * failure of the call wins (its err), the set is dropped then. */
static int
apply(mt_tree *t, int rc, char *err, size_t errlen)
{
    if (rc < 0) {
        mtg_changes_clear(t);
        return rc;
    }
    int a = mts_apply(t, err, errlen);
    return a ? a : rc;
}

int
mt_pick(mt_tree *t, mt_job *job, char *err, size_t errlen)
{
    /* each early expansion makes the next pick find an unflagged leaf or
     * none; the bound only guards against a loop the graph would not end */
    for (int k = 0; k < PICK_EXPANSIONS; k++) {
        uint32_t node;
        int rc = mtg_pick(t, job, &node, err, errlen);
        if (rc == MTG_EXPAND) /* an idle worker: node's children (IDLE WORKERS) */
            rc = mtp_expand(t, node, 1, err, errlen);
        else
            return apply(t, rc, err, errlen);
        if ((rc = apply(t, rc, err, errlen)))
            return rc;
    }
    return MT_PICK_WAIT;
}

int
mtd_take(mt_tree *t, mt_jobrec *j, const mtg_result_fact *f, char *err, size_t errlen)
{
    uint32_t i = j->node; /* j is dropped by the graph */
    int rc = mtg_result(t, j, f, err, errlen);
    if (rc == MTG_EXPAND) { /* a job at the cap left the leaf open: it grows */
        rc = mtp_expand(t, i, 0, err, errlen);
    }
    return apply(t, rc, err, errlen);
}

int
mt_result(mt_tree *t, uint64_t id, eng_bound bound, int settled, int score, int depth,
          uint64_t nodes, uint32_t ms, const pst_item *items, size_t n, size_t max_items, char *err,
          size_t errlen)
{
    return mt_result_in(t, NULL, id, bound, settled, score, depth, nodes, ms, items, n, max_items,
                        err, errlen);
}

int
mt_result_in(mt_tree *t, const mt_fence *fence, uint64_t id, eng_bound bound, int settled,
             int score, int depth, uint64_t nodes, uint32_t ms, const pst_item *items, size_t n,
             size_t max_items, char *err, size_t errlen)
{
    mt_jobrec *j = mtg_job_find(t, id);
    if (!j) {
        /* a job of another proof, or answered already: nothing to check
         * its records against, so none is kept */
        if (n)
            eng_errf(err, errlen,
                     "job %" PRIu64 " is not open in this proof: its %zu records are dropped", id,
                     n);
        t->nkid_scores = 0;
        return 0;
    }
    /* 0. ONE TRANSACTION: everything below is committed together, or
     * nothing of it */
    int rc = mts_begin(t, err, errlen);
    if (rc) {
        t->nkid_scores = 0;
        return rc;
    }
    /* 1. admission (tree_proof.c): nothing of the batch is written unless
     * it proves what it claims. It reads the graph (the job, its node's
     * position) and changes nothing of it: a fence's reader may go on
     * reading beside it */
    uint64_t written;
    rc = mtp_admit_result(t, j, &bound, items, n, max_items, &written, err, errlen);
    if (rc) {
        t->nkid_scores = 0;
        mts_end(t, 0, NULL, 0); /* refused: the batch was not written */
        return rc;
    }
    result_hook();
    if (fence)
        fence->enter(fence->arg); /* from here the graph changes: its readers wait */
    t->admitted += written;
    /* 2. the graph takes what the store now holds, with the children's
     * scores the worker sent with this job (kept with the node) */
    mtg_result_fact f = {bound, settled, score, depth, nodes, ms, NULL, 0};
    if (t->kid_job == id && t->nkid_scores) {
        f.kids = t->kid_scores;
        f.nkids = t->nkid_scores;
    }
    rc = mtd_take(t, j, &f, err, errlen);
    t->nkid_scores = 0;
    if (fence) /* the graph is whole again; the commit touches only the file */
        fence->leave(fence->arg);
    /* the commit: the admitted records, the node, the job answered and
     * the records it backs up at once (a failure above drops them all,
     * and the manager stops: the graph in memory is ahead of the file) */
    int e = mts_end(t, rc == 0, rc ? NULL : err, rc ? 0 : errlen);
    return rc ? rc : e;
}

void
mt_child_scores(mt_tree *t, uint64_t id, const int16_t *scores, size_t n)
{
    /* held until the result of job id is admitted: a refused result's
     * scores are never kept */
    t->kid_job = id;
    t->nkid_scores = n <= MT_SCORES_MAX ? (uint32_t)n : 0;
    if (t->nkid_scores)
        memcpy(t->kid_scores, scores, n * sizeof *scores);
}

int
mt_release(mt_tree *t, uint64_t id, char *err, size_t errlen)
{
    return apply(t, mtg_release(t, id, err, errlen), err, errlen);
}

int
mt_release_all(mt_tree *t, char *err, size_t errlen)
{
    return apply(t, mtg_release_all(t, err, errlen), err, errlen);
}

int
mt_set_leaf_step(mt_tree *t, int step, char *err, size_t errlen)
{
    t->leaf_step = step;
    return apply(t, mtg_pass(t, err, errlen), err, errlen);
}

int
mt_check_numbers(mt_tree *t, char *err, size_t errlen)
{
    return apply(t, mtg_check_numbers(t, err, errlen), err, errlen);
}
