/*
 * tree_cost.c - the manager's own work per job on trees of 10^4, 10^5 and
 * 10^6 nodes (tree.h, NUMBERS AFTER A RESULT), and how many workers with
 * 30 s jobs one manager can feed at each size.
 *
 * The tree is real, not synthetic: the proof tree of the start position
 * (24 pieces: no database reaches it), grown by the manager's own
 * selection with jobs that each come back unresolved, so every job
 * expands its leaf. A new node gets the static evaluation (the manager
 * runs no search: tree.h, SCORES; the jobs here bring no scores); the
 * cost of the search a worker runs for each child instead is measured
 * apart, per new node (TREE_BENCH_SCORE is kept for older binaries'
 * runs: before, the manager scored each new node with that many
 * alpha-beta nodes while growing). At each size, TREE_BENCH_JOBS jobs (default 2,000) are timed:
 * picking the leaf (mt_pick) and taking its result (mt_result: the
 * commits, the expansion, the incremental update of the ancestors). As
 * the same-run baseline, the whole-graph pass that every result cost
 * before the incremental update (mt_check_numbers runs one, and checks
 * that the updates left what it computes).
 *
 * The state lives in TREE_BENCH_DIR (default /dev/shm when it exists, so
 * that synced LMDB commits cost what they cost on a fast disk).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "bench/bench_util.h"
#include "engine/engine.h"
#include "manager/tree.h"
#include "prover/search.h"
#include "prover/store.h"

/* ---- functions -------------------------------------------------------- */

static int
env_int(const char *name, int def)
{
    const char *s = getenv(name);
    return s && atoi(s) > 0 ? atoi(s) : def;
}

/* One job: picked, then answered "nothing proved". RETURN 0, 1 when the
 * tree has nothing to pick, -1 on an error. */
static int
one_job(mt_tree *t, double *pick_s, double *result_s)
{
    char err[512];
    mt_job j;
    double t0 = bench_now();
    int r = mt_pick(t, &j, err, sizeof err);
    double t1 = bench_now();
    *pick_s += t1 - t0;
    if (r != MT_PICK_JOB) {
        if (r < 0)
            fprintf(stderr, "tree_cost: pick: %s\n", err);
        return r < 0 ? -1 : 1;
    }
    r = mt_result(t, j.id, ENG_LW, 0, 0, 0, 1, 1, NULL, 0, 0, err, sizeof err);
    *result_s += bench_now() - t1;
    if (r) {
        fprintf(stderr, "tree_cost: result: %s\n", err);
        return -1;
    }
    return 0;
}

int
main(void)
{
    struct stat sb;
    const char *base = getenv("TREE_BENCH_DIR");
    if (!base)
        base = stat("/dev/shm", &sb) == 0 ? "/dev/shm" : "/tmp";
    int score = env_int("TREE_BENCH_SCORE", 50), jobs = env_int("TREE_BENCH_JOBS", 2000);
    long max_nodes = env_int("TREE_BENCH_MAX", 1000000);
    char dir[512], err[512];
    snprintf(dir, sizeof dir, "%s/tree_cost.XXXXXX", base); /* mkdtemp fills in the X's */
    if (!mkdtemp(dir)) {
        fprintf(stderr, "tree_cost: cannot make a folder in %s\n", base);
        return 1;
    }
    mt_create cr = {.goal = MT_GOAL_VALUE,
                    .job_ms = 30000,
                    .job_max_ms = 30000, /* every unresolved job expands its leaf */
                    .h0 = 200,
                    .h_step = 200};
    eng_start(&cr.root);
    mt_tree *t;
    if (mt_open(dir, &cr, NULL, &t, err, sizeof err)) {
        fprintf(stderr, "tree_cost: %s\n", err);
        return 1;
    }
    /* the search a worker runs for each child (MT_SCORE_NODES), per new
     * node: what the manager once ran itself */
    ab_ctx *ab;
    double score_ms = 0;
    if (ab_new((size_t)16 << 20, &ab) == 0) {
        eng_pos p;
        eng_start(&p);
        eng_movelist ml;
        int n = eng_generate(&p, &ml, ENG_DUPS_MERGE);
        double t0 = bench_now();
        for (int i = 0; i < n; i++) {
            eng_pos c;
            eng_make(&p, &ml.m[i], &c);
            ab_opts o = {.max_depth = 12, .node_limit = 4000};
            ab_result r;
            ab_search(ab, &c, &o, &r);
        }
        score_ms = (bench_now() - t0) * 1000 / n;
        ab_free(ab);
    }
    bench_machine();
    printf("the proof tree of the start position, grown by its own selection (every job "
           "unresolved: each expands its leaf); new nodes get the static evaluation "
           "(TREE_BENCH_SCORE %d: ignored, the manager runs no search)\n",
           score);
    printf("%9s %7s %11s %11s %12s %12s %14s\n", "nodes", "jobs", "pick_ms", "result_ms",
           "mgr_ms/job", "pass_ms", "workers@30s");
    long sizes[] = {10000, 100000, 1000000};
    double pick = 0, res = 0;
    int rc = 0;
    for (int s = 0; s < 3 && sizes[s] <= max_nodes && !rc; s++) {
        mt_stats ms;
        /* grow; the size is looked at every 256 jobs: mt_stats_get walks
         * every node, and asked after each job it made the growth
         * quadratic (93% of the time on the way to 10^6 nodes, which
         * took past 40 minutes) */
        for (long k = 0;; k++) {
            if (k % 256 == 0) {
                mt_stats_get(t, &ms);
                if ((long)ms.nodes >= sizes[s])
                    break;
            }
            if ((rc = one_job(t, &pick, &res)) != 0)
                break;
        }
        if (rc)
            break;
        pick = res = 0;
        int done = 0;
        for (; done < jobs && !(rc = one_job(t, &pick, &res)); done++) {
        }
        if (rc < 0 || done == 0)
            break;
        rc = 0;
        mt_stats_get(t, &ms);
        double t0 = bench_now();
        int crc = mt_check_numbers(t, err, sizeof err);
        double pass_ms = (bench_now() - t0) * 1000;
        if (crc) {
            fprintf(stderr, "tree_cost: the updates and a whole pass disagree: %s\n", err);
            rc = -1;
            break;
        }
        double per = (pick + res) * 1000 / done;
        printf("%9" PRIu64 " %7d %11.3f %11.3f %12.3f %12.1f %14.0f\n", ms.nodes, done,
               pick * 1000 / done, res * 1000 / done, per, pass_ms, 30000 / per);
    }
    printf("the real score (4,000 alpha-beta nodes) costs %.2f ms a new node, about %.1f ms a "
           "job that expands a leaf of 8 children (not in the table above: the workers compute "
           "them now)\n",
           score_ms, score_ms * 8);
    mt_close(t);
    char cmd[700];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "tree_cost: could not remove %s\n", dir);
    return rc < 0 ? 1 : 0;
}
