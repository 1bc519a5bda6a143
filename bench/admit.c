/*
 * admit.c - what the manager's admission of one large result costs
 * (prover/admit.h, padm_admit), against the checker's own walk of the
 * same proof in the same run.
 *
 * A proof is found (or read from a store given), its records collected
 * as a worker would send them (padm_collect), and then admitted into a
 * fresh store, ADMIT_BENCH_ROUNDS times, inside one write transaction
 * of the store (pst_txn_begin/end), as the manager's result writer does
 * (manager/tree.c, mt_result_in). Reported for each round: the records,
 * the seconds, the records a second, and the ratio to the baseline: the
 * seconds of padm_collect on the source store (the independent
 * checker's walk of the same proof over a store, with nothing written),
 * measured in the same run. Admission does that walk over the batch and
 * the store, and writes what it proved; the ratio says what staging and
 * writing add to the check.
 *
 * Settings (environment):
 *   ADMIT_BENCH_DB      databases (default: those of `make testdata`)
 *   ADMIT_BENCH_PIECES  their pieces (default 4)
 *   ADMIT_BENCH_FEN     the root (default B:W32,K7,K28:BK1,K23, a king
 *                       ending whose proof the 2-4 databases leave long)
 *   ADMIT_BENCH_STORE   a store already holding the root's proof
 *                       (`checkers solve --store DIR FEN`); without it,
 *                       the root is solved first into a temporary store
 *   ADMIT_BENCH_ROUNDS  admissions (default 3)
 * Exit status 1 when an admission fails or writes a different number of
 * records from one round to the next.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/bench_util.h"
#include "egdb/egdb.h"
#include "engine/engine.h"
#include "prover/admit.h"
#include "prover/prover.h"
#include "prover/store.h"
#include "tests/test_util.h"

static const char *
env_or(const char *name, const char *def)
{
    const char *v = getenv(name);
    return v && *v ? v : def;
}

/* Admits items into a fresh store under dir, in one write transaction;
 * the seconds in *secs, the records written in *written. */
static int
admit_once(const char *dir, int round, const egdb *db, const padm_items *items, const eng_pos *root,
           double *secs, uint64_t *written)
{
    char path[600], err[512];
    snprintf(path, sizeof path, "%s/admit%d", dir, round);
    pst_env *st;
    if (pst_open(path, 0, &st, err, sizeof err)) {
        fprintf(stderr, "admit: %s\n", err);
        return -1;
    }
    double t0 = bench_now();
    padm_report rep;
    int rc = pst_txn_begin(st, err, sizeof err);
    if (rc == 0) {
        rc = padm_admit(st, db, items->v, items->n, root, 1, 1, 0, &rep, err, sizeof err);
        char e2[256];
        int ec = pst_txn_end(st, rc == 0, e2, sizeof e2);
        if (rc == 0 && ec) {
            rc = ec;
            snprintf(err, sizeof err, "%s", e2);
        }
    }
    *secs = bench_now() - t0;
    *written = rc == 0 ? rep.written : 0;
    pst_close(st);
    if (rc)
        fprintf(stderr, "admit: round %d refused: %s\n", round, err);
    return rc ? -1 : 0;
}

int
main(void)
{
    bench_machine();
    const char *dbdir = getenv("ADMIT_BENCH_DB");
    if (!dbdir || !*dbdir)
        dbdir = test_db_dir();
    int pieces = atoi(env_or("ADMIT_BENCH_PIECES", "4"));
    const char *fen = env_or("ADMIT_BENCH_FEN", "B:W32,K7,K28:BK1,K23");
    const char *given = getenv("ADMIT_BENCH_STORE");
    int rounds = atoi(env_or("ADMIT_BENCH_ROUNDS", "3"));
    char err[512];
    if (!dbdir) {
        fprintf(stderr, "admit: no databases (set ADMIT_BENCH_DB or run make testdata)\n");
        return 1;
    }
    egdb *db;
    if (egdb_open(dbdir, pieces, (size_t)256 << 20, &db, err, sizeof err)) {
        fprintf(stderr, "admit: %s\n", err);
        return 1;
    }
    eng_pos root;
    if (eng_parse_fen(fen, &root, err, sizeof err)) {
        fprintf(stderr, "admit: %s: %s\n", fen, err);
        return 1;
    }
    char dir[400];
    if (!test_tmpdir(dir, sizeof dir, "bench-admit")) {
        fprintf(stderr, "admit: no temporary folder\n");
        return 1;
    }
    char src[600];
    pst_env *st;
    if (given) {
        snprintf(src, sizeof src, "%s", given);
        if (pst_open(src, PST_RDONLY, &st, err, sizeof err)) {
            fprintf(stderr, "admit: %s\n", err);
            return 1;
        }
    } else {
        snprintf(src, sizeof src, "%s/source", dir);
        if (pst_open(src, 0, &st, err, sizeof err)) {
            fprintf(stderr, "admit: %s\n", err);
            return 1;
        }
        prv_opts o = {.db = db, .db_pieces = pieces, .store = st, .tt_bytes = (size_t)256 << 20};
        prv_result r;
        double t0 = bench_now();
        if (prv_solve(&root, &o, &r, err, sizeof err) || !r.complete) {
            fprintf(stderr, "admit: solving %s: %s\n", fen, err[0] ? err : "not settled");
            return 1;
        }
        printf("source: %s solved into %s in %.2f s (%s)\n", fen, src, bench_now() - t0,
               eng_bound_name(r.bound));
    }
    padm_items items = {0};
    double c0 = bench_now();
    if (padm_collect(st, db, &root, &items, err, sizeof err) || items.n == 0) {
        fprintf(stderr, "admit: collecting the proof of %s: %s\n", fen,
                err[0] ? err : "no record for the root");
        return 1;
    }
    double base = bench_now() - c0;
    pst_close(st);
    printf("baseline: the checker's walk of the proof over the store (padm_collect): "
           "%zu records in %.2f s, %.0f a second\n",
           items.n, base, items.n / base);
    int fail = 0;
    uint64_t first = 0;
    for (int k = 0; k < rounds; k++) {
        double s;
        uint64_t w;
        if (admit_once(dir, k, db, &items, &root, &s, &w)) {
            fail = 1;
            break;
        }
        if (k == 0)
            first = w;
        else if (w != first) {
            fprintf(stderr, "admit: round %d wrote %" PRIu64 " records, round 0 %" PRIu64 "\n", k,
                    w, first);
            fail = 1;
        }
        printf("admission %d: %zu records (%" PRIu64 " written) in %.2f s, %.0f a second, "
               "x%.2f the baseline's time\n",
               k + 1, items.n, w, s, items.n / s, s / base);
    }
    padm_items_free(&items);
    egdb_close(db);
    char cmd[500];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "admit: could not remove %s\n", dir);
    return fail;
}
