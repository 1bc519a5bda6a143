/*
 * test_manager_tree.c - the proof tree (manager/tree.h) driven in-process,
 * with jobs solved by prv_solve as a worker would, on random 5-piece
 * positions with the 4-piece databases: every settled root agrees with the
 * 5-piece database, no bound anywhere contradicts it, the whole proof
 * passes the independent checker, and a tree closed and reopened midway
 * (a restart) reaches the same answer, and a forged worker result is
 * caught by the checker before the tree uses it. Small df-pn budgets make the tree
 * grow below unresolved jobs.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <lmdb.h>
#include <xxhash.h>

#include "egdb/egdb.h"
#include "manager/manager.h"
#include "manager/tree.h"
#include "prover/admit.h"
#include "prover/check.h"
#include "prover/prover.h"
#include "prover/store.h"
#include "tests/test_state_util.h"
#include "tests/test_util.h"

typedef struct fixture {
    egdb *full, *db4;
    dfpn_ctx *ctx; /* one df-pn table for every job, as a worker keeps it */
} fixture;

static fixture F;
static int failed_jobs; /* proof walks that failed (prover.h: a known limit) */

static int
setup(void **state)
{
    (void)state;
    const char *d = test_db_dir();
    if (!d)
        return -1;
    char err[256];
    if (egdb_open(d, 0, (size_t)64 << 20, &F.full, err, sizeof err) ||
        egdb_open(d, 4, (size_t)64 << 20, &F.db4, err, sizeof err)) {
        fprintf(stderr, "%s\n", err);
        return -1;
    }
    return dfpn_new((size_t)8 << 20, &F.ctx) ? -1 : 0;
}

static int
teardown(void **state)
{
    (void)state;
    egdb_close(F.full);
    egdb_close(F.db4);
    dfpn_free(F.ctx);
    return 0;
}

static int
rm_rf(const char *d)
{
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", d);
    return system(cmd);
}

/* A job answered as worker.c answers it: df-pn, on the table every job
 * shares, into the worker's own store, the proof gathered by the
 * checker's walk (padm_collect) and sent to the tree, which admits it
 * into its store. The job's own node limit (it grows with re-jobs), or
 * nodes when it has none. */
static void
answer(mt_tree *t, pst_env *wst, const mt_job *j, uint64_t nodes)
{
    prv_opts o = {.db = F.db4,
                  .db_pieces = 4,
                  .store = wst,
                  .question = &j->q,
                  .node_limit = j->node_limit ? j->node_limit : nodes,
                  .time_limit = 1.0,
                  .ctx = F.ctx};
    prv_result r;
    char err[512];
    int pr = prv_solve(&j->pos, &o, &r, err, sizeof err);
    if (pr) { /* as the worker reports it: a failed job proves nothing */
        assert_int_equal(pr, PRV_ESOLVER);
        assert_int_equal(r.error, DFPN_EPROOF);
        failed_jobs++;
        r.bound = ENG_LW;
        r.complete = 0;
    }
    padm_items items = {0};
    if (r.bound != ENG_LW) {
        int c = padm_collect(wst, F.db4, &j->pos, &items, err, sizeof err);
        if (c)
            fprintf(stderr, "padm_collect: %s\n", err);
        assert_int_equal(c, 0); /* the worker's own proof passes its own check */
    }
    err[0] = 0;
    int rc = mt_result(t, j->id, r.bound, r.complete, 0, 0, r.nodes, 1, items.v, items.n, 0, err,
                       sizeof err);
    if (rc)
        fprintf(stderr, "mt_result: %s\n", err);
    assert_int_equal(rc, 0);
    padm_items_free(&items);
}

/* A job answered with nothing: its budget ran out. */
static void
answer_nothing(mt_tree *t, const mt_job *j)
{
    char err[256] = "";
    assert_int_equal(mt_result(t, j->id, ENG_LW, 0, 0, 0, j->node_limit, j->time_ms, NULL, 0, 0,
                               err, sizeof err),
                     0);
}

/* The root's score, as `checkers prove` gives a new proof (manager.h,
 * wrk_score): the search a worker runs for a node, on the 4-piece
 * databases. */
static void
root_scored(mt_create *cr)
{
    ab_ctx *ab = NULL;
    assert_int_equal(ab_new((size_t)16 << 20, &ab), 0);
    cr->root_score = wrk_score(ab, F.db4, cr->db_pieces, &cr->root, &cr->root_depth);
    ab_free(ab);
}

/* Proves p with the tree; returns the root's bound. restart_after: close
 * and reopen the tree after that many jobs (0: never). */
static eng_bound
prove(const eng_pos *p, uint64_t nodes, int restart_after, int max_jobs, int *jobs_out)
{
    char dir[256], sdir[300], tdir[300], err[512];
    assert_non_null(test_tmpdir(dir, sizeof dir, "tree"));
    snprintf(tdir, sizeof tdir, "%s", dir); /* the state: one environment */
    pst_env *st, *wst;
    snprintf(sdir, sizeof sdir, "%s/worker", dir);
    assert_int_equal(pst_open(sdir, 0, &wst, err, sizeof err), 0);
    mt_create cr = {.root = *p,
                    .goal = MT_GOAL_VALUE,
                    .db_pieces = 4,
                    .job_ms = 1000,
                    .job_nodes = nodes,
                    .h0 = 100,
                    .h_step = 300,
                    /* the tree's own work: the root's own jobs (two thirds
                     * of them, growing without a cap) are test_root_series' */
                    .no_root_jobs = 1};
    root_scored(&cr);
    mt_tree *t;
    int rc = mt_open(tdir, &cr, F.db4, &t, err, sizeof err);
    if (rc)
        fprintf(stderr, "mt_open: %s\n", err);
    assert_int_equal(rc, 0);
    st = mt_store(t);
    int jobs = 0;
    for (;;) {
        mt_job j;
        rc = mt_pick(t, &j, err, sizeof err);
        assert_true(rc >= 0);
        if (rc == MT_PICK_DONE)
            break;
        assert_int_equal(rc, MT_PICK_JOB); /* one job at a time: never WAIT */
        answer(t, wst, &j, nodes);
        jobs++;
        /* the incremental updates left what a whole pass computes */
        if (mt_check_numbers(t, err, sizeof err)) {
            fprintf(stderr, "after job %d: %s\n", jobs, err);
            fail();
        }
        if (jobs >= max_jobs)
            break;
        if (jobs == restart_after) {
            mt_close(t);
            assert_int_equal(mt_open(tdir, NULL, F.db4, &t, err, sizeof err), 0);
            st = mt_store(t);
        }
    }
    mt_stats s;
    mt_stats_get(t, &s);
    /* the proof as a whole, from scratch (the store is the tree's: before
     * it is closed) */
    pchk_result cr2;
    assert_int_equal(pchk_check(st, F.db4, p, &cr2, err, sizeof err), 0);
    if (cr2.status == PCHK_INVALID)
        fprintf(stderr, "invalid at %s: %s\n", cr2.where, cr2.why);
    assert_int_equal(cr2.status == PCHK_NOTHING ? PCHK_VALID : cr2.status, PCHK_VALID);
    assert_int_equal(cr2.status == PCHK_NOTHING ? ENG_LW : cr2.bound, s.root_bound);
    mt_close(t);
    pst_close(wst);
    rm_rf(dir);
    *jobs_out = jobs;
    return s.root_bound;
}

static eng_bound
db_value(const eng_pos *p)
{
    int v = egdb_probe(F.full, p);
    assert_true(v >= 0);
    return eng_bound_exact(egdb_outcome(v));
}

/* Random 5-piece roots: settled answers equal the database's. */
static void
test_random_roots(void **state)
{
    (void)state;
    uint64_t s = 0x5eed7ee5u;
    int n = test_sanitized() ? 4 : 16, total_jobs = 0, multi = 0, settled = 0;
    for (int i = 0; i < n; i++) {
        eng_pos p = test_random_pos(&s, 5);
        eng_movelist ml;
        eng_generate(&p, &ml, ENG_DUPS_MERGE);
        if (ml.n == 0) {
            i--;
            continue;
        }
        int jobs;
        eng_bound b = prove(&p, 3000, 0, 150, &jobs);
        eng_bound want = db_value(&p);
        char fen[ENG_FEN_MAX];
        eng_format_fen(&p, fen, sizeof fen);
        int ok = eng_bound_is_exact(b) ? b == want : eng_bound_contains(b, eng_bound_lo(want));
        if (!ok)
            fprintf(stderr, "%s: tree %s, database %s\n", fen, eng_bound_name(b),
                    eng_bound_name(want));
        assert_true(ok); /* never a wrong bound */
        settled += eng_bound_is_exact(b);
        total_jobs += jobs;
        multi += jobs > 1;
    }
    fprintf(stderr, "%d roots, %d jobs (%d failed walks), %d roots needed more than one job\n", n,
            total_jobs, failed_jobs, multi);
    fprintf(stderr, "%d of %d settled within 150 jobs\n", settled, n);
    assert_true(multi > 0);        /* the tree did grow below unresolved jobs */
    assert_true(settled * 2 >= n); /* and settles most of them */
}

/* A restart midway reaches the same answer. */
static void
test_restart(void **state)
{
    (void)state;
    eng_pos p;
    char err[128];
    assert_int_equal(eng_parse_fen("B:W30,31,K19:B6,K12", &p, err, sizeof err), 0);
    int j1, j2;
    eng_bound a = prove(&p, 300, 0, 5000, &j1);
    eng_bound b = prove(&p, 300, j1 / 2 > 0 ? j1 / 2 : 1, 5000, &j2);
    assert_int_equal(a, db_value(&p));
    assert_int_equal(b, a);
    fprintf(stderr, "restart: %d jobs without, %d with a restart\n", j1, j2);
}

/* Nodes whose score is one test_growing_budgets gave (1000 and up). */
static int
count_scored(const mt_view *v, void *arg)
{
    int *seen = arg;
    if (v->score >= 1000 && v->score < 1000 + MT_SCORES_MAX && v->source == '-')
        (*seen)++;
    return 0;
}

/* A budgets test's tree (tree.h, JOBS) in a new folder dir (its tree in
 * tdir, its store in *st): root B:W30,31,K19:B6,K12, first jobs of 1000 ms
 * and 100 nodes growing to job_max_ms; no_early as mt_create has it. */
static mt_tree *
budget_tree_of(const char *name, const char *fen, int goal, uint64_t job_nodes, char *dir,
               size_t dlen, char *tdir, size_t tlen, pst_env **st, eng_pos *root,
               uint32_t job_max_ms, int no_early)
{
    char err[512];
    assert_non_null(test_tmpdir(dir, dlen, name));
    snprintf(tdir, tlen, "%s", dir); /* the state: one environment */
    assert_int_equal(eng_parse_fen(fen, root, err, sizeof err), 0);
    mt_create cr = {.root = *root,
                    .goal = goal,
                    .db_pieces = 4,
                    .job_ms = 1000,
                    .job_max_ms = job_max_ms,
                    .job_nodes = job_nodes,
                    .h0 = 100,
                    .h_step = 300,
                    .no_early = no_early};
    root_scored(&cr);
    mt_tree *t;
    assert_int_equal(mt_open(tdir, &cr, F.db4, &t, err, sizeof err), 0);
    *st = mt_store(t); /* the tree's */
    return t;
}

/* The tree of B:W30,31,K19:B6,K12 (a loss for Black) with jobs of 100
 * df-pn positions: the budget tests'. */
static mt_tree *
budget_tree(const char *name, int goal, char *dir, size_t dlen, char *tdir, size_t tlen,
            pst_env **st, eng_pos *root, uint32_t job_max_ms, int no_early)
{
    return budget_tree_of(name, "B:W30,31,K19:B6,K12", goal, 100, dir, dlen, tdir, tlen, st, root,
                          job_max_ms, no_early);
}

/* Growing budgets (tree.h, JOBS): a leaf left open by its job stays a
 * leaf and its next job gets double the budget, named for the worker
 * that had it; once a job at the cap has left it open, it is expanded
 * and its children start again at the first budget. */
static void
test_growing_budgets(void **state)
{
    (void)state;
    char dir[256], tdir[300], err[512];
    pst_env *st;
    eng_pos root;
    /* no_early: a leaf's budget, the root's own jobs aside */
    mt_tree *t = budget_tree("tree-budgets", MT_GOAL_GE_DRAW, dir, sizeof dir, tdir, sizeof tdir,
                             &st, &root, 4000, 1);
    mt_job j;
    int scored = 0;
    eng_pos leaf; /* the first pick: a leaf of the seed line */
    uint32_t want[] = {1000, 2000, 4000};
    for (int k = 0; k < 3; k++) {
        assert_int_equal(mt_pick(t, &j, err, sizeof err), MT_PICK_JOB);
        if (k == 0)
            leaf = j.pos;
        assert_true(eng_equal(&j.pos, &leaf)); /* the same leaf again */
        assert_int_equal(j.time_ms, want[k]);
        assert_int_equal(j.node_limit, 100 * want[k] / 1000);
        assert_int_equal(j.prefer, k ? 7u : 0u); /* the worker that had it */
        mt_given(t, j.id, 7);
        if (k == 2) { /* the worker's scores for the children: 1000 + move index */
            eng_movelist ml;
            int n = eng_generate(&j.pos, &ml, ENG_DUPS_MERGE);
            int16_t sc[MT_SCORES_MAX];
            for (int m = 0; m < n; m++)
                sc[m] = (int16_t)(1000 + m);
            mt_child_scores(t, j.id, sc, (size_t)n);
            scored = n;
        }
        answer_nothing(t, &j);
    }
    /* the new children got the worker's scores, not the manager's
     * search (those the databases value need none) */
    int seen = 0, leaves = 0;
    mt_walk(t, 64, count_scored, &seen);
    eng_movelist ml;
    int n = eng_generate(&leaf, &ml, ENG_DUPS_MERGE);
    for (int m = 0; m < n; m++) {
        eng_pos c;
        eng_make(&leaf, &ml.m[m], &c);
        leaves += eng_pieces(&c) <= 4;
    }
    /* (a child the tree already held keeps its score) */
    assert_true(seen > 0 && seen <= scored - leaves);
    /* the job at the cap left it open: expanded, a child's first job */
    assert_int_equal(mt_pick(t, &j, err, sizeof err), MT_PICK_JOB);
    assert_false(eng_equal(&j.pos, &leaf));
    assert_int_equal(j.time_ms, 1000);
    assert_int_equal(j.prefer, 0u);
    /* the cap is kept in the state: a resumed tree grows the same way */
    answer_nothing(t, &j);
    eng_pos child = j.pos;
    mt_close(t);
    assert_int_equal(mt_open(tdir, NULL, F.db4, &t, err, sizeof err), 0);
    st = mt_store(t);
    /* (no_early is not kept: the reopened tree gives the root, which has
     * had no job, its own first job - IDLE WORKERS in tree.h) */
    assert_int_equal(mt_pick(t, &j, err, sizeof err), MT_PICK_JOB);
    assert_true(eng_equal(&j.pos, &root));
    assert_int_equal(j.time_ms, 1000);
    assert_int_equal(mt_pick(t, &j, err, sizeof err), MT_PICK_JOB);
    assert_true(eng_equal(&j.pos, &child));
    assert_int_equal(j.time_ms, 2000);
    mt_stats s;
    mt_stats_get(t, &s);
    assert_int_equal(s.job_max_ms, 4000);
    mt_close(t);
    rm_rf(dir);
}

/* The root's own jobs (tree.h, THE ROOT'S OWN JOBS): the seed line
 * expands the root before any job, yet the first pick is the root
 * itself, as one `solve` would start; a second worker meanwhile gets a
 * leaf below it; the root's next job gets double the budget, past the
 * cap, and is given only while the root has had at most twice the
 * others' time; a reopened tree goes on with the same series. */
static void
test_root_series(void **state)
{
    (void)state;
    char dir[256], tdir[300], err[512];
    pst_env *st;
    eng_pos root;
    /* one question: the other question of a value goal has jobs of its
     * own (test_root_other_question) */
    mt_tree *t = budget_tree("tree-root", MT_GOAL_GE_DRAW, dir, sizeof dir, tdir, sizeof tdir, &st,
                             &root, 2000, 0);
    mt_stats s;
    mt_stats_get(t, &s);
    assert_true(s.expanded > 0); /* the seed line */
    mt_job j, k;
    assert_int_equal(mt_pick(t, &j, err, sizeof err), MT_PICK_JOB);
    assert_true(eng_equal(&j.pos, &root));
    assert_int_equal(j.time_ms, 1000);
    assert_int_equal(mt_pick(t, &k, err, sizeof err), MT_PICK_JOB);
    assert_false(eng_equal(&k.pos, &root));
    answer_nothing(t, &j);
    /* the root has had 1 s, and the leaf in flight counts at its budget
     * (1 s): the root's turn again at once, as the second worker would
     * keep it while the first grows the tree */
    assert_int_equal(mt_pick(t, &j, err, sizeof err), MT_PICK_JOB);
    assert_true(eng_equal(&j.pos, &root));
    assert_int_equal(j.time_ms, 2000);
    answer_nothing(t, &k);
    answer_nothing(t, &j);
    /* one worker from here: the root's own jobs double past the cap
     * (2 s), each given only while the root has had at most twice the
     * others' time, and the tree gets jobs between them */
    uint64_t root_ms = 3000, other_ms = k.time_ms;
    uint32_t want = 4000;
    int roots = 0, others = 0;
    for (int n = 0; n < 200 && roots < 4; n++) {
        assert_int_equal(mt_pick(t, &j, err, sizeof err), MT_PICK_JOB);
        if (eng_equal(&j.pos, &root)) {
            assert_int_equal(j.time_ms, want);
            assert_true(root_ms <= 2 * other_ms);
            root_ms += j.time_ms;
            want *= 2;
            roots++;
        } else {
            other_ms += j.time_ms;
            others++;
        }
        answer_nothing(t, &j);
    }
    assert_int_equal(roots, 4); /* 4, 8, 16 and 32 s: past the cap */
    assert_true(others >= 2);
    assert_true(root_ms - want / 2 <= 2 * other_ms); /* before the last root job */
    /* reopened, the root's own jobs go on where they were */
    assert_int_equal(mt_check_numbers(t, err, sizeof err), 0);
    mt_close(t);
    assert_int_equal(mt_open(tdir, NULL, F.db4, &t, err, sizeof err), 0);
    st = mt_store(t);
    for (int n = 0; n < 200; n++) {
        assert_int_equal(mt_pick(t, &j, err, sizeof err), MT_PICK_JOB);
        if (eng_equal(&j.pos, &root))
            break;
        other_ms += j.time_ms;
        answer_nothing(t, &j);
    }
    assert_true(eng_equal(&j.pos, &root));
    assert_int_equal(j.time_ms, want);
    assert_true(root_ms <= 2 * other_ms);
    answer_nothing(t, &j);
    assert_int_equal(mt_check_numbers(t, err, sizeof err), 0);
    mt_close(t);
    rm_rf(dir);
}

/* The next pick is the root's other question (want), with budget ms,
 * named for worker prefer; given to worker 2. */
static void
pick_other(mt_tree *t, mt_job *k, const eng_pos *root, eng_question want, uint32_t ms,
           uint32_t prefer)
{
    char err[512];
    assert_int_equal(mt_pick(t, k, err, sizeof err), MT_PICK_JOB);
    assert_true(eng_equal(&k->pos, root));
    assert_int_equal(k->q.attacker, want.attacker);
    assert_int_equal(k->q.target, want.target);
    assert_int_equal(k->time_ms, ms);
    assert_int_equal(k->prefer, prefer);
    mt_given(t, k->id, 2);
}

/* THE ROOT'S OTHER QUESTION across a restart: its series goes on at the
 * budget it had reached, and a job of it issued before the stop and
 * answered after counts as the other question's, not the root's own. */
static void
test_other_question_reopened(void **state)
{
    (void)state;
    const char *fen = "B:W9,K18,K4:BK10,17"; /* a draw (test_root_other_question) */
    char dir[256], tdir[300], err[512];
    pst_env *st;
    eng_pos root;
    mt_tree *t = budget_tree_of("tree-other-reopen", fen, MT_GOAL_VALUE, 20000, dir, sizeof dir,
                                tdir, sizeof tdir, &st, &root, 2000, 0);
    mt_job j, k, l, m, n;
    mt_stats s;
    assert_int_equal(mt_pick(t, &j, err, sizeof err), MT_PICK_JOB);
    assert_true(eng_equal(&j.pos, &root));
    mt_given(t, j.id, 1);
    eng_question want = {!j.q.attacker, ENG_DRAW};
    pick_other(t, &k, &root, want, 1000, 0);
    assert_int_equal(mt_pick(t, &l, err, sizeof err), MT_PICK_JOB);
    assert_false(eng_equal(&l.pos, &root));
    mt_given(t, l.id, 3);
    answer_nothing(t, &k);
    pick_other(t, &k, &root, want, 2000, 2);
    /* stopped with three jobs in flight, one of them the other question's */
    assert_int_equal(mt_check_numbers(t, err, sizeof err), 0);
    mt_close(t);
    assert_int_equal(mt_open(tdir, NULL, F.db4, &t, err, sizeof err), 0);
    st = mt_store(t);
    mt_stats_get(t, &s);
    assert_int_equal(s.other_jobs, 1);
    assert_int_equal(s.other_ms, 1000);
    assert_int_equal(s.jobs_done, 1);
    /* the root's own series: its first job was never answered */
    assert_int_equal(mt_pick(t, &m, err, sizeof err), MT_PICK_JOB);
    assert_true(eng_equal(&m.pos, &root));
    assert_int_equal(m.q.attacker, j.q.attacker);
    assert_int_equal(m.time_ms, 1000);
    mt_given(t, m.id, 1);
    assert_int_equal(mt_pick(t, &n, err, sizeof err), MT_PICK_JOB);
    assert_false(eng_equal(&n.pos, &root));
    mt_given(t, n.id, 3);
    /* the other question goes on at double its one answered job's budget
     * (it began again at 1,000 ms before its series was kept); the
     * workers are new, so it prefers none */
    pick_other(t, &l, &root, want, 2000, 0);
    /* the job issued before the stop answers late: the other question's,
     * not the root's own */
    answer_nothing(t, &k);
    mt_stats_get(t, &s);
    assert_int_equal(s.other_jobs, 2);
    assert_int_equal(s.other_ms, 3000);
    answer_nothing(t, &l);
    answer_nothing(t, &m);
    answer_nothing(t, &n);
    mt_stats_get(t, &s);
    assert_int_equal(s.other_jobs, 3);
    assert_int_equal(s.other_ms, 5000);
    assert_int_equal(mt_check_numbers(t, err, sizeof err), 0);
    mt_close(t);
    rm_rf(dir);
}

/* The other question of a drawn root's value (tree.h, THE ROOT'S OTHER
 * QUESTION): given while the root's own job is in flight, never by one
 * worker alone; answered in either order, the two give the database's
 * draw, and the one answered second was in flight as the other's. */
static void
test_root_other_question(void **state)
{
    (void)state;
    const char *fen = "B:W9,K18,K4:BK10,17"; /* a draw; each question in 20,000 positions */
    for (int order = 0; order < 2; order++) {
        char dir[256], tdir[300], wdir[300], err[512];
        pst_env *st, *wst;
        eng_pos root;
        mt_tree *t = budget_tree_of(order ? "tree-other1" : "tree-other0", fen, MT_GOAL_VALUE,
                                    20000, dir, sizeof dir, tdir, sizeof tdir, &st, &root, 2000, 0);
        assert_int_equal(db_value(&root), ENG_DD);
        snprintf(wdir, sizeof wdir, "%s/worker", dir);
        assert_int_equal(pst_open(wdir, 0, &wst, err, sizeof err), 0);
        mt_job j, k, l, m;
        /* one worker: the root's job answered before anyone asks again,
         * so the next is the tree's, never the other question */
        assert_int_equal(mt_pick(t, &j, err, sizeof err), MT_PICK_JOB);
        assert_true(eng_equal(&j.pos, &root));
        mt_given(t, j.id, 1);
        answer_nothing(t, &j);
        assert_int_equal(mt_pick(t, &l, err, sizeof err), MT_PICK_JOB);
        assert_false(eng_equal(&l.pos, &root));
        mt_given(t, l.id, 1);
        answer_nothing(t, &l);
        /* the root's job in flight: the next worker gets the other
         * question, the one after it the tree */
        assert_int_equal(mt_pick(t, &j, err, sizeof err), MT_PICK_JOB);
        assert_true(eng_equal(&j.pos, &root));
        assert_int_equal(j.prefer, 1);
        mt_given(t, j.id, 1);
        assert_int_equal(j.q.target, ENG_DRAW); /* the score calls it level */
        eng_question want = {!j.q.attacker, ENG_DRAW};
        pick_other(t, &k, &root, want, 1000, 0);
        assert_int_equal(mt_pick(t, &l, err, sizeof err), MT_PICK_JOB);
        assert_false(eng_equal(&l.pos, &root));
        assert_int_equal(l.q.attacker, j.q.attacker);
        assert_int_equal(l.q.target, j.q.target);
        mt_given(t, l.id, 3);
        mt_stats s;
        mt_stats_get(t, &s);
        assert_int_equal(s.in_flight, 3);
        /* the other question's next job goes to the worker that had it,
         * with double the budget */
        answer_nothing(t, &k);
        pick_other(t, &k, &root, want, 2000, 2);
        assert_int_equal(mt_check_numbers(t, err, sizeof err), 0);
        /* all three are wanted while both questions are open */
        assert_true(mt_job_wanted(t, j.id));
        assert_true(mt_job_wanted(t, k.id));
        assert_true(mt_job_wanted(t, l.id));
        if (order == 0) {
            /* the root's question first: the other question's job in
             * flight becomes the root's own, so the tree's next job asks
             * that question and the root is not given twice */
            answer(t, wst, &j, 20000);
            /* the leaf's job asks the question the root has answered:
             * the manager cancels it (UNWANTED JOBS); the root's second
             * question goes on */
            assert_false(mt_job_wanted(t, l.id));
            assert_true(mt_job_wanted(t, k.id));
            assert_false(mt_job_wanted(t, j.id)); /* answered: no longer in flight */
            assert_int_equal(mt_release(t, l.id, err, sizeof err), 0);
            assert_int_equal(mt_pick(t, &m, err, sizeof err), MT_PICK_JOB);
            assert_false(eng_equal(&m.pos, &root));
            assert_int_equal(m.q.attacker, want.attacker);
            assert_int_equal(m.q.target, want.target);
            answer(t, wst, &k, 20000);
        } else {
            /* the other question first: the root's own job goes on, and
             * so does the leaf's job below it */
            answer(t, wst, &k, 20000);
            assert_true(mt_job_wanted(t, j.id));
            assert_true(mt_job_wanted(t, l.id));
            assert_int_equal(mt_pick(t, &m, err, sizeof err), MT_PICK_JOB);
            assert_false(eng_equal(&m.pos, &root));
            assert_int_equal(m.q.attacker, j.q.attacker);
            assert_int_equal(m.q.target, j.q.target);
            answer(t, wst, &j, 20000);
        }
        assert_int_equal(mt_check_numbers(t, err, sizeof err), 0);
        assert_int_equal(mt_pick(t, &m, err, sizeof err), MT_PICK_DONE);
        mt_stats_get(t, &s);
        assert_int_equal(s.root_bound, ENG_DD);
        assert_int_equal(mt_check_root(t, err, sizeof err), 0);
        mt_close(t);
        pst_close(wst);
        rm_rf(dir);
    }
    /* a root the score calls won for one side: its first question is
     * "does White win", and the other (needed only if not) waits */
    char dir[256], tdir[300], err[512];
    pst_env *st;
    eng_pos root;
    mt_tree *t = budget_tree("tree-other2", MT_GOAL_VALUE, dir, sizeof dir, tdir, sizeof tdir, &st,
                             &root, 2000, 0);
    mt_job j, k;
    assert_int_equal(mt_pick(t, &j, err, sizeof err), MT_PICK_JOB);
    assert_true(eng_equal(&j.pos, &root));
    assert_int_equal(j.q.attacker, ENG_WHITE);
    assert_int_equal(j.q.target, ENG_WIN);
    assert_int_equal(mt_pick(t, &k, err, sizeof err), MT_PICK_JOB);
    assert_false(eng_equal(&k.pos, &root));
    mt_close(t);
    rm_rf(dir);
}

/* For test_unwanted_jobs: whether the walk finds target on a line from the
 * root whose nodes above it all leave the tree's question open. */
typedef struct open_line {
    eng_pos target;
    eng_question q;
    int open_above[256]; /* open_above[d]: every node at depth < d is open */
    int found;
} open_line;

static int
q_open(const eng_question *q, const eng_pos *pos, eng_bound bound)
{
    eng_bound b = pos->stm == q->attacker ? bound : eng_bound_neg(bound);
    int lo = eng_bound_lo(b), hi = eng_bound_hi(b);
    if (q->target == ENG_WIN)
        return !(lo == ENG_WIN || hi <= ENG_DRAW);
    return !(lo >= ENG_DRAW || hi == ENG_LOSS);
}

static int
find_open_line(const mt_view *v, void *arg)
{
    open_line *o = arg;
    if (v->depth >= 255)
        return 0;
    if (v->depth == 0)
        o->open_above[0] = 1;
    if (o->open_above[v->depth] && eng_equal(&v->pos, &o->target)) {
        o->found = 1;
        return 1;
    }
    o->open_above[v->depth + 1] = o->open_above[v->depth] && q_open(&o->q, &v->pos, v->bound);
    return 0;
}

/*
 * Jobs the tree no longer wants (mt_job_wanted; the manager cancels them,
 * manager.c: UNWANTED JOBS), against a plain walk of the tree: with three
 * jobs in flight and real proofs, after every result each job still in
 * flight is wanted exactly when its node's question is open and some
 * line from the root reaches it through open nodes only (every line of
 * the walk, depth first, not the tree's parent links). The unwanted ones
 * are released, as the manager does. The root, W:W13,K26,K32:B5,K1 with
 * jobs of 100 positions, gives all three kinds: jobs of a settled run, of
 * an answered question, and of an open node whose parents a sibling's
 * result settled.
 */
static void
test_unwanted_jobs(void **state)
{
    (void)state;
    char dir[256], tdir[300], wdir[300], err[512];
    pst_env *st, *wst;
    eng_pos root;
    mt_tree *t = budget_tree_of("tree-unwanted", "W:W13,K26,K32:B5,K1", MT_GOAL_DRAW, 100, dir,
                                sizeof dir, tdir, sizeof tdir, &st, &root, 4000, 0);
    snprintf(wdir, sizeof wdir, "%s/worker", dir);
    assert_int_equal(pst_open(wdir, 0, &wst, err, sizeof err), 0);
    /* a new table: the earlier tests' table knows this root */
    dfpn_free(F.ctx);
    assert_int_equal(dfpn_new((size_t)8 << 20, &F.ctx), 0);
    mt_job fl[3];
    int other[3]; /* the root's other question (its own question when given) */
    int nfl = 0, results = 0, unwanted = 0, below_settled = 0, rc = MT_PICK_JOB;
    while (results < 400) {
        while (nfl < 3 && (rc = mt_pick(t, &fl[nfl], err, sizeof err)) == MT_PICK_JOB) {
            mt_stats s;
            mt_stats_get(t, &s);
            other[nfl] = eng_equal(&fl[nfl].pos, &root) &&
                         (fl[nfl].q.attacker != s.q.attacker || fl[nfl].q.target != s.q.target);
            mt_given(t, fl[nfl].id, (uint32_t)nfl + 1);
            nfl++;
        }
        if (rc == MT_PICK_DONE || nfl == 0)
            break;
        assert_true(rc == MT_PICK_JOB || rc == MT_PICK_WAIT);
        answer(t, wst, &fl[0], 3000);
        results++;
        memmove(fl, fl + 1, (size_t)(nfl - 1) * sizeof fl[0]);
        memmove(other, other + 1, (size_t)(nfl - 1) * sizeof other[0]);
        nfl--;
        mt_stats s;
        mt_stats_get(t, &s);
        for (int k = 0; k < nfl;) {
            mt_view v;
            assert_int_equal(mt_lookup(t, &fl[k].pos, &v), 0);
            open_line o = {.target = fl[k].pos, .q = s.q};
            mt_walk(t, 250, find_open_line, &o);
            int same_q = fl[k].q.attacker == s.q.attacker && fl[k].q.target == s.q.target;
            int want = !mt_goal_settled(s.goal, s.root_bound) &&
                       q_open(&fl[k].q, &v.pos, v.bound) && (other[k] || (same_q && o.found));
            if (want != mt_job_wanted(t, fl[k].id)) {
                char f[ENG_FEN_MAX];
                eng_format_fen(&fl[k].pos, f, sizeof f);
                fail_msg("job on %s: mt_job_wanted %d, the walk says %d (same question %d, open "
                         "%d, on an open line %d, parents %u)",
                         f, !want, want, same_q, q_open(&fl[k].q, &v.pos, v.bound), o.found,
                         v.parents);
            }
            if (!want) {
                unwanted++;
                below_settled += same_q && q_open(&fl[k].q, &v.pos, v.bound) && !other[k] &&
                                 !mt_goal_settled(s.goal, s.root_bound);
                assert_int_equal(mt_release(t, fl[k].id, err, sizeof err), 0);
                fl[k] = fl[--nfl];
                other[k] = other[nfl];
            } else {
                k++;
            }
        }
        assert_int_equal(mt_check_numbers(t, err, sizeof err), 0);
    }
    printf("  %d results, %d jobs in flight found unwanted, %d of them open nodes below settled "
           "ones\n",
           results, unwanted, below_settled);
    assert_true(below_settled > 0);
    assert_int_equal(rc, MT_PICK_DONE);
    mt_stats s;
    mt_stats_get(t, &s);
    assert_true(eng_bound_contains(s.root_bound, eng_bound_lo(db_value(&root))));
    assert_int_equal(mt_check_root(t, err, sizeof err), 0);
    mt_close(t);
    pst_close(wst);
    rm_rf(dir);
}

/* A worker's false claim, with a forged record as its "proof", is refused
 * at admission: nothing of it is written, the tree does not move, a
 * restart does not bring it back, and the honest proof that follows
 * settles the database's value. */
static void
test_forged_result(void **state)
{
    (void)state;
    char dir[256], wdir[300], tdir[300], err[512];
    assert_non_null(test_tmpdir(dir, sizeof dir, "tree-forged"));
    snprintf(wdir, sizeof wdir, "%s/worker", dir);
    snprintf(tdir, sizeof tdir, "%s", dir); /* the state: one environment */
    pst_env *st, *wst;
    assert_int_equal(pst_open(wdir, 0, &wst, err, sizeof err), 0);
    eng_pos root;
    assert_int_equal(eng_parse_fen("B:W30,31,K19:B6,K12", &root, err, sizeof err), 0);
    eng_bound truth = db_value(&root);
    assert_int_equal(truth, ENG_LL); /* the 5-piece database: a loss for Black */
    mt_create cr = {.root = root,
                    .goal = MT_GOAL_VALUE,
                    .db_pieces = 4,
                    .job_ms = 1000,
                    .h0 = 100,
                    .h_step = 300};
    root_scored(&cr);
    mt_tree *t;
    assert_int_equal(mt_open(tdir, &cr, F.db4, &t, err, sizeof err), 0);
    st = mt_store(t);
    mt_job j;
    assert_int_equal(mt_pick(t, &j, err, sizeof err), MT_PICK_JOB);
    /* the opposite of the truth, with a legal move as its "proof" */
    eng_movelist ml;
    eng_generate(&j.pos, &ml, ENG_DUPS_MERGE);
    eng_bound jt = db_value(&j.pos);
    pst_item it = {j.pos,
                   {jt == ENG_WW ? ENG_LL : ENG_WW, {PST_NOMOVE, 0, 0}, {PST_NOMOVE, 0, 0}, 0, 0}};
    if (it.rec.bound == ENG_WW)
        it.rec.win = pst_move_of(&ml.m[0]);
    err[0] = 0;
    assert_int_equal(mt_result(t, j.id, it.rec.bound, 1, 0, 0, 1, 1, &it, 1, 0, err, sizeof err),
                     MT_EREFUSED);
    assert_non_null(strstr(err, "refused at admission"));
    pst_record r;
    assert_int_equal(pst_get(st, &j.pos, &r), PST_ENOTFOUND); /* nothing written */
    mt_stats s;
    mt_stats_get(t, &s);
    assert_int_equal(s.jobs_done, 0);
    assert_int_equal(s.root_bound, ENG_LW);
    /* a restart reads nothing of it back */
    assert_int_equal(mt_release(t, j.id, err, sizeof err), 0);
    mt_close(t);
    assert_int_equal(mt_open(tdir, NULL, F.db4, &t, err, sizeof err), 0);
    st = mt_store(t);
    mt_stats_get(t, &s);
    assert_int_equal(s.root_bound, ENG_LW);
    /* honest jobs then settle the truth, which the checker accepts */
    int jobs = 0, rc;
    while ((rc = mt_pick(t, &j, err, sizeof err)) == MT_PICK_JOB && jobs < 5000) {
        answer(t, wst, &j, 3000);
        jobs++;
    }
    assert_int_equal(rc, MT_PICK_DONE);
    mt_stats_get(t, &s);
    assert_int_equal(s.root_bound, truth);
    assert_int_equal(mt_check_root(t, err, sizeof err), 0);
    mt_close(t);
    assert_int_equal(mt_open(tdir, NULL, F.db4, &t, err, sizeof err), 0);
    st = mt_store(t);
    mt_stats_get(t, &s);
    assert_int_equal(s.root_bound, truth);
    mt_close(t);
    pst_close(wst);
    rm_rf(dir);
}

/* ---- one transaction per result (tree.h) ------------------------------ */

/* The store's record count and the tree's jobs answered, of the state in
 * tdir (opened and closed). */
static void
kept_counts(const char *tdir, uint64_t *recs, uint64_t *done)
{
    char err[512], label[PST_OWNER_MAX];
    mt_tree *t;
    assert_int_equal(mt_open(tdir, NULL, F.db4, &t, err, sizeof err), 0);
    assert_int_equal(pst_owner(mt_store(t), label, sizeof label, recs, err, sizeof err), 0);
    mt_stats s;
    mt_stats_get(t, &s);
    *done = s.jobs_done;
    mt_close(t);
}

/* Picks a job on the state in tdir and answers it with a real search
 * (answer), its worker store in wdir; in a child process, killed by the
 * test hook CHECKERS_RESULT_KILL=admitted after the admission when kill
 * is set. RETURN the child's wait status, or 0 without kill. */
static int
answer_one(const char *tdir, const char *wdir, int kill)
{
    pid_t pid = kill ? fork() : 0;
    assert_true(pid >= 0);
    if (pid > 0) {
        int ws;
        assert_int_equal(waitpid(pid, &ws, 0), pid);
        return ws;
    }
    if (kill)
        setenv("CHECKERS_RESULT_KILL", "admitted", 1);
    char err[512];
    pst_env *w;
    mt_tree *t;
    mt_job j;
    assert_int_equal(pst_open(wdir, 0, &w, err, sizeof err), 0);
    assert_int_equal(mt_open(tdir, NULL, F.db4, &t, err, sizeof err), 0);
    assert_int_equal(mt_pick(t, &j, err, sizeof err), MT_PICK_JOB);
    answer(t, w, &j, 20000);
    mt_close(t);
    pst_close(w);
    if (kill)
        _exit(0); /* the hook did not fire: the parent sees exit 0 */
    return 0;
}

/*
 * ONE TRANSACTION PER RESULT (issue 42): a worker's result is admitted
 * and the graph's change applied in one commit. The manager killed
 * (SIGKILL, the test hook, waited on with waitpid) after the admission
 * and before the apply keeps neither: the store holds the records it
 * held and the tree the jobs answered it had (before, the admitted
 * records were committed on their own). The same job answered without
 * the kill keeps both.
 */
static void
test_result_one_transaction(void **state)
{
    (void)state;
    char dir[256], tdir[300], wdir[400];
    pst_env *st;
    eng_pos root;
    mt_tree *t = budget_tree_of("tree-onetxn", "B:W30,31,K19:B6,K12", MT_GOAL_VALUE, 20000, dir,
                                sizeof dir, tdir, sizeof tdir, &st, &root, 2000, 0);
    mt_close(t);
    snprintf(wdir, sizeof wdir, "%s/worker", dir);
    uint64_t recs0, done0, recs, done;
    kept_counts(tdir, &recs0, &done0);
    int ws = answer_one(tdir, wdir, 1);
    assert_true(WIFSIGNALED(ws) && WTERMSIG(ws) == SIGKILL);
    kept_counts(tdir, &recs, &done);
    assert_int_equal(recs, recs0); /* nothing of the admitted batch */
    assert_int_equal(done, done0); /* nor of the graph's change */
    answer_one(tdir, wdir, 0);
    kept_counts(tdir, &recs, &done);
    assert_true(recs > recs0); /* the result proves something: it was kept */
    assert_int_equal(done, done0 + 1);
    rm_rf(dir);
}

/* ---- the state's layout (tree.h, THE STATE'S LAYOUT) -------------------- */

/* XXH64 over every entry (key and value, with their lengths) of the n
 * named databases names of the environment in dir, in key order, and
 * their entry count into *entries: what an upgrade must keep, byte for
 * byte. Read-only. */
static uint64_t
env_hash(const char *dir, const char *const *names, int n, uint64_t *entries)
{
    MDB_env *env;
    MDB_txn *txn;
    assert_int_equal(mdb_env_create(&env), 0);
    assert_int_equal(mdb_env_set_maxdbs(env, 8), 0);
    assert_int_equal(mdb_env_open(env, dir, MDB_RDONLY, 0644), 0);
    assert_int_equal(mdb_txn_begin(env, NULL, MDB_RDONLY, &txn), 0);
    uint64_t h = 0;
    *entries = 0;
    for (int i = 0; i < n; i++) {
        MDB_dbi dbi;
        MDB_cursor *cur;
        MDB_val k, v;
        int f = strstr(names[i], "jobs") || strstr(names[i], "hist") ? MDB_INTEGERKEY : 0;
        assert_int_equal(mdb_dbi_open(txn, names[i], (unsigned)f, &dbi), 0);
        assert_int_equal(mdb_cursor_open(txn, dbi, &cur), 0);
        for (int rc = mdb_cursor_get(cur, &k, &v, MDB_FIRST); !rc;
             rc = mdb_cursor_get(cur, &k, &v, MDB_NEXT)) {
            h = XXH64(k.mv_data, k.mv_size, h ^ k.mv_size);
            h = XXH64(v.mv_data, v.mv_size, h ^ v.mv_size << 20);
            ++*entries;
        }
        mdb_cursor_close(cur);
    }
    mdb_txn_abort(txn);
    mdb_env_close(env);
    return h;
}

static const char *const old_tree_dbs[] = {"meta", "nodes", "jobs", "hist"};
static const char *const new_tree_dbs[] = {MT_DB_META, MT_DB_NODES, MT_DB_JOBS, MT_DB_HIST};
static const char *const store_dbs[] = {"meta", "nodes"};

/* What a state holds: the tree's entries and the store's, hashed. */
typedef struct state_sum {
    uint64_t tree, store, ntree, nstore;
} state_sum;

static state_sum
old_sum(const char *dir)
{
    char p[400];
    state_sum s;
    snprintf(p, sizeof p, "%s/tree", dir);
    s.tree = env_hash(p, old_tree_dbs, 4, &s.ntree);
    snprintf(p, sizeof p, "%s/proofs", dir);
    s.store = env_hash(p, store_dbs, 2, &s.nstore);
    return s;
}

/* The upgraded state: the same bytes in one environment, nothing of the
 * old layout left, the store readable as a store. */
static void
assert_upgraded(const char *dir, const state_sum *want)
{
    char p[400], err[512];
    struct stat sb;
    state_sum s;
    snprintf(p, sizeof p, "%s/%s", dir, MT_STATE_DIR);
    s.tree = env_hash(p, new_tree_dbs, 4, &s.ntree);
    s.store = env_hash(p, store_dbs, 2, &s.nstore);
    assert_true(s.ntree == want->ntree && s.tree == want->tree);
    assert_true(s.nstore == want->nstore && s.store == want->store);
    pst_env *st;
    assert_int_equal(pst_open(p, PST_RDONLY, &st, err, sizeof err), 0);
    char label[PST_OWNER_MAX];
    uint64_t recs;
    assert_int_equal(pst_owner(st, label, sizeof label, &recs, err, sizeof err), 0);
    if (strncmp(label, "tree-", 5))
        fprintf(stderr, "label '%s', %llu records\n", label, (unsigned long long)recs);
    assert_true(!strncmp(label, "tree-", 5) && recs == want->nstore - 2);
    pst_close(st);
    const char *gone[3] = {"tree", "proofs", MT_STATE_DIR ".tmp"};
    for (int i = 0; i < 3; i++) {
        snprintf(p, sizeof p, "%s/%s", dir, gone[i]);
        assert_int_not_equal(stat(p, &sb), 0);
    }
}

/*
 * A state of the two-environment layout (a state written by this code,
 * mt_open and a few answered jobs, split into the old layout by the
 * fixture generator, test_state_util.h), upgraded into one environment
 * (issue 42):
 * every entry of both kept byte for byte, the old folders gone, the
 * tree opened on it with the root's bound it had, a second call a no-op; a SIGKILL at each step of
 * the upgrade (the test hook, waited on with waitpid, never a sleep) followed by a rerun gives the
 * same state; a tree without its store is refused as damage and left
 * as it is.
 */
static void
test_state_upgrade(void **state)
{
    (void)state;
    char dir[256], tdir[300], wdir[300], err[512], cmd[2000];
    pst_env *st, *wst;
    eng_pos root;
    mt_tree *t =
        budget_tree("upgrade", MT_GOAL_VALUE, dir, sizeof dir, tdir, sizeof tdir, &st, &root, 0, 1);
    snprintf(wdir, sizeof wdir, "%s/worker", dir);
    assert_int_equal(pst_open(wdir, 0, &wst, err, sizeof err), 0);
    for (int k = 0; k < 6; k++) {
        mt_job j;
        int rc = mt_pick(t, &j, err, sizeof err);
        if (rc != MT_PICK_JOB)
            break;
        answer(t, wst, &j, 100);
    }
    /* records for the store's part of the copy (jobs of 100 positions
     * prove little): the root's children, "at most a draw" for their
     * side to move (the store takes any record that says something) */
    eng_movelist ml;
    int nm = eng_generate(&root, &ml, ENG_DUPS_MERGE);
    pst_item items[64];
    for (int k = 0; k < nm && k < 64; k++) {
        eng_make(&root, &ml.m[k], &items[k].pos);
        items[k].rec = (pst_record){ENG_LD, {PST_NOMOVE, 0, 0}, {PST_NOMOVE, 0, 0}, 1, 0};
    }
    assert_true(nm > 0);
    assert_int_equal(pst_put_many(st, items, (size_t)(nm < 64 ? nm : 64), err, sizeof err), 0);
    mt_close(t); /* and its store, st */
    pst_close(wst);
    /* the tree as a reader sees it (the records above included) */
    mt_stats before;
    assert_int_equal(mt_open_ro(dir, F.db4, &t, err, sizeof err), 0);
    mt_stats_get(t, &before);
    mt_close(t);
    assert_int_equal(test_state_split(dir, err, sizeof err), 0);
    state_sum want = old_sum(dir);
    assert_true(want.ntree > 10 && want.nstore > 2);

    static const char *const steps[] = {"copied", "synced", "renamed", "removed-tree"};
    for (int i = 0; i < 4; i++) {
        char copy[400];
        snprintf(copy, sizeof copy, "%s-kill%d", dir, i);
        snprintf(cmd, sizeof cmd, "rm -rf '%s' && cp -r '%s' '%s'", copy, dir, copy);
        assert_int_equal(system(cmd), 0);
        pid_t pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
            setenv("CHECKERS_UPGRADE_KILL", steps[i], 1);
            mt_state_upgrade(copy, err, sizeof err);
            _exit(0); /* the hook did not fire: the parent sees exit 0 */
        }
        int ws;
        assert_int_equal(waitpid(pid, &ws, 0), pid);
        assert_true(WIFSIGNALED(ws) && WTERMSIG(ws) == SIGKILL);
        int rc = mt_state_upgrade(copy, err, sizeof err);
        if (rc < 0)
            fprintf(stderr, "after a kill at %s: %s\n", steps[i], err);
        assert_int_equal(rc, 1);
        assert_upgraded(copy, &want);
        assert_int_equal(mt_state_upgrade(copy, err, sizeof err), 0);
        rm_rf(copy);
    }

    /* a tree without its store: damage, nothing touched */
    char copy[400], p[450];
    struct stat sb;
    snprintf(copy, sizeof copy, "%s-nostore", dir);
    snprintf(cmd, sizeof cmd, "rm -rf '%s' && cp -r '%s' '%s' && rm -rf '%s/proofs'", copy, dir,
             copy, copy);
    assert_int_equal(system(cmd), 0);
    assert_int_equal(mt_state_upgrade(copy, err, sizeof err), MT_ECORRUPT);
    assert_non_null(strstr(err, "proofs is missing or empty"));
    snprintf(p, sizeof p, "%s/tree/data.mdb", copy);
    assert_int_equal(stat(p, &sb), 0);
    rm_rf(copy);

    /* the readers upgrade too (mt_open_ro): the same tree */
    assert_int_equal(mt_open_ro(dir, F.db4, &t, err, sizeof err), 0);
    mt_stats after;
    mt_stats_get(t, &after);
    assert_int_equal(after.root_bound, before.root_bound);
    assert_int_equal(after.nodes, before.nodes);
    assert_int_equal(after.jobs_done, before.jobs_done);
    mt_close(t);
    assert_upgraded(dir, &want);
    assert_int_equal(mt_state_upgrade(dir, err, sizeof err), 0);
    rm_rf(dir);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_random_roots),
        cmocka_unit_test(test_restart),
        cmocka_unit_test(test_forged_result),
        cmocka_unit_test(test_growing_budgets),
        cmocka_unit_test(test_root_series),
        cmocka_unit_test(test_root_other_question),
        cmocka_unit_test(test_other_question_reopened),
        cmocka_unit_test(test_unwanted_jobs),
        cmocka_unit_test(test_state_upgrade),
        cmocka_unit_test(test_result_one_transaction),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
