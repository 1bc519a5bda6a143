/*
 * rejobs.c - what a worker gains by keeping its df-pn table across jobs
 * (dfpn_table.c, THE TABLE ACROSS QUERIES).
 *
 * The manager gives a leaf a short first job and doubles the budget of
 * each re-job of the same leaf. This benchmark plays that schedule on
 * its own, for a seeded sample of random positions, two ways in the same
 * run:
 *   new    a new table for every job (the baseline: what a worker did
 *          before it kept its table);
 *   kept   one table for every job of the run, as a worker keeps it:
 *          facts found by earlier jobs are read by later ones, and a
 *          re-job resumes the unanswered query where it stopped.
 * Each leaf is asked "does the side to move at least draw?" with the
 * databases two pieces short, a first budget of REJOB_BENCH_FIRST df-pn
 * positions, doubled on each re-job, at most 9 re-jobs. Reported: the
 * positions and seconds all jobs took, the leaves settled, and the ratio
 * kept / new. Every answer is compared with the database of the
 * positions' own piece count (a wrong answer: exit status 1).
 *
 * Settings (environment): REJOB_BENCH_DB (default egdb-data, else the
 * test databases of `make testdata`), REJOB_BENCH_PIECES pieces of a
 * position (default 6 with egdb-data, 5 with the test databases),
 * REJOB_BENCH_DBPIECES the databases' pieces (default two fewer: leaves
 * that need several jobs), REJOB_BENCH_N positions (default 40),
 * REJOB_BENCH_FIRST (default 2000),
 * REJOB_BENCH_TT table megabytes (default 64).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "bench/bench_util.h"
#include "egdb/egdb.h"
#include "engine/engine.h"
#include "prover/prover.h"
#include "tests/test_util.h"

/* ---- constants -------------------------------------------------------- */

#define MAX_REJOBS 9
#define MAXN 1000

/* ---- types ------------------------------------------------------------ */

typedef struct tally {
    uint64_t nodes;
    double seconds;
    int jobs, settled, wrong;
    uint64_t pnodes[MAXN]; /* each position's positions until settled */
    char psettled[MAXN];
} tally;

/* ---- functions -------------------------------------------------------- */

static int
env_int(const char *name, int def)
{
    const char *s = getenv(name);
    return s && atoi(s) > 0 ? atoi(s) : def;
}

/* Plays the re-job schedule for every position; kept: one table for all. */
static int
run(const eng_pos *ps, int n, const egdb *db, int dbp, const egdb *ref, int first, size_t tt,
    int kept, tally *t)
{
    memset(t, 0, sizeof *t);
    dfpn_ctx *keep = NULL;
    if (kept && dfpn_new(tt, &keep) != 0)
        return -1;
    double t0 = bench_now();
    for (int i = 0; i < n; i++) {
        eng_question q = {ps[i].stm, ENG_DRAW};
        uint64_t budget = (uint64_t)first;
        for (int k = 0; k <= MAX_REJOBS; k++, budget *= 2) {
            dfpn_ctx *c = keep;
            if (!c && dfpn_new(tt, &c) != 0)
                return -1;
            prv_opts o = {
                .db = db, .db_pieces = dbp, .question = &q, .node_limit = budget, .ctx = c};
            prv_result r;
            char err[300];
            int rc = prv_solve(&ps[i], &o, &r, err, sizeof err);
            if (c != keep)
                dfpn_free(c);
            if (rc != 0) {
                fprintf(stderr, "solve failed: %s\n", err);
                return -1;
            }
            t->jobs++;
            t->nodes += r.nodes;
            t->pnodes[i] += r.nodes;
            if (!r.complete)
                continue;
            t->settled++;
            t->psettled[i] = 1;
            int v = egdb_probe(ref, &ps[i]);
            eng_bound truth = v == EGDB_WIN ? ENG_WW : v == EGDB_LOSS ? ENG_LL : ENG_DD;
            if (eng_bound_meet(truth, r.bound) != truth) {
                char fen[ENG_FEN_MAX];
                eng_format_fen(&ps[i], fen, sizeof fen);
                fprintf(stderr, "WRONG: %s proved %s, the database says %s\n", fen,
                        prv_bound_word(r.bound), prv_bound_word(truth));
                t->wrong++;
            }
            break;
        }
    }
    t->seconds = bench_now() - t0;
    dfpn_free(keep);
    return 0;
}

int
main(void)
{
    struct stat sb;
    const char *dir = getenv("REJOB_BENCH_DB");
    int big = !dir && stat("egdb-data", &sb) == 0;
    if (!dir)
        dir = big ? "egdb-data" : "build/testdata/egdb5";
    int pieces = env_int("REJOB_BENCH_PIECES", big ? 6 : 5);
    int n = env_int("REJOB_BENCH_N", 40), first = env_int("REJOB_BENCH_FIRST", 2000);
    size_t tt = (size_t)env_int("REJOB_BENCH_TT", 64) << 20;
    if (n > MAXN)
        n = MAXN;
    char err[300];
    egdb *db, *ref;
    int dbp = env_int("REJOB_BENCH_DBPIECES", pieces - 2);
    if (dbp >= pieces)
        dbp = pieces - 1;
    if (egdb_open(dir, dbp, 256u << 20, &db, err, sizeof err) != 0 ||
        egdb_open(dir, pieces, 512u << 20, &ref, err, sizeof err) != 0) {
        fprintf(stderr, "rejobs: cannot open the %d- and %d-piece databases in %s: %s\n", dbp,
                pieces, dir, err);
        return 1;
    }
    static eng_pos ps[MAXN];
    uint64_t s = 0x5EED0A11ull;
    for (int i = 0; i < n; i++)
        ps[i] = test_random_pos(&s, pieces);
    bench_machine();
    printf("re-jobs: %d random %d-piece positions, databases of %d pieces (%s), first job %d "
           "positions, doubled each re-job, table %zu MB\n",
           n, pieces, dbp, dir, first, tt >> 20);
    static tally fresh, kept;
    if (run(ps, n, db, dbp, ref, first, tt, 0, &fresh) != 0 ||
        run(ps, n, db, dbp, ref, first, tt, 1, &kept) != 0)
        return 1;
    /* where both settled: what it took each (a position left open used
     * its whole budget either way, which says nothing) */
    uint64_t both_new = 0, both_kept = 0;
    int both = 0;
    for (int i = 0; i < n; i++)
        if (fresh.psettled[i] && kept.psettled[i]) {
            both++;
            both_new += fresh.pnodes[i];
            both_kept += kept.pnodes[i];
        }
    printf("%-6s %8s %8s %14s %9s\n", "table", "jobs", "settled", "positions", "seconds");
    printf("%-6s %8d %8d %14" PRIu64 " %9.2f\n", "new", fresh.jobs, fresh.settled, fresh.nodes,
           fresh.seconds);
    printf("%-6s %8d %8d %14" PRIu64 " %9.2f\n", "kept", kept.jobs, kept.settled, kept.nodes,
           kept.seconds);
    printf("kept / new: positions x%.2f, seconds x%.2f, jobs x%.2f\n",
           (double)kept.nodes / (double)fresh.nodes, kept.seconds / fresh.seconds,
           (double)kept.jobs / fresh.jobs);
    printf("on the %d positions both settled: %" PRIu64 " positions with a new table, %" PRIu64
           " kept: x%.2f\n",
           both, both_new, both_kept, both_new ? (double)both_kept / (double)both_new : 0.0);
    egdb_close(db);
    egdb_close(ref);
    return fresh.wrong || kept.wrong ? 1 : 0;
}
