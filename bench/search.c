/*
 * search.c - speed of the alpha-beta solver (prover/search.h): nodes a
 * second to a fixed depth on two positions, without the endgame databases
 * (the baseline) and with the 1-5 piece databases, rounds alternating so
 * that both see the same machine load. Each search starts from an empty
 * table, so every round does the same work (the node counts are exact and
 * printed; only the times vary).
 *
 *   start position, depth 15: 24 pieces, the databases are never reached;
 *     the ratio shows what the probe test at every quiet node costs.
 *   an 8-piece ending, depth 25: lines reach 5 pieces and the databases
 *     cut them; fewer nodes, each dearer.
 *
 * The databases are found through CHECKERS_TEST_DB (`make testdata` builds
 * them, the Makefile exports the variable), or the first argument.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "bench/bench_util.h"
#include "egdb/egdb.h"
#include "prover/search.h"

/* ---- constants -------------------------------------------------------- */

#define ROUNDS 3
#define TT_BYTES ((size_t)64 << 20)

/* ---- types ------------------------------------------------------------ */

typedef struct bench_case {
    const char *name;
    const char *fen;
    int depth;
} bench_case;

/* ---- static data ------------------------------------------------------ */

static const bench_case cases[] = {
    {"start position", "B:W21-32:B1-12", 15},
    {"8-piece ending", "B:W22,23,26,31:B5,6,9,14", 25},
};

/* ---- functions -------------------------------------------------------- */

/* One search from an empty table; its time, the result in *r. */
static double
run(ab_ctx *c, const eng_pos *p, const egdb *db, int depth, ab_result *r)
{
    ab_clear(c);
    ab_opts o = {.db = db, .max_depth = depth};
    double t0 = bench_now();
    if (ab_search(c, p, &o, r) != 0) {
        fprintf(stderr, "bench search: the search failed\n");
        exit(1);
    }
    return bench_now() - t0;
}

int
main(int argc, char **argv)
{
    const char *dir = argc > 1 ? argv[1] : getenv("CHECKERS_TEST_DB");
    egdb *db = NULL;
    char err[512];
    if (dir && egdb_open(dir, 5, (size_t)256 << 20, &db, err, sizeof err) != 0) {
        fprintf(stderr, "bench search: %s (going on without databases)\n", err);
        db = NULL;
    }
    ab_ctx *c;
    if (ab_new(TT_BYTES, &c) != 0) {
        fprintf(stderr, "bench search: out of memory\n");
        return 1;
    }
    bench_machine();
    printf("table %zu MB, %d rounds alternating, median times%s\n", TT_BYTES >> 20, ROUNDS,
           db ? ", databases 1-5 pieces" : ", no databases found");

    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        eng_pos p;
        char perr[256];
        if (eng_parse_fen(cases[k].fen, &p, perr, sizeof perr) != 0) {
            fprintf(stderr, "bench search: %s\n", perr);
            return 1;
        }
        double tb[ROUNDS], td[ROUNDS];
        ab_result rb, rd = {0};
        for (int i = 0; i < ROUNDS; i++) {
            tb[i] = run(c, &p, NULL, cases[k].depth, &rb);
            if (db)
                td[i] = run(c, &p, db, cases[k].depth, &rd);
        }
        qsort(tb, ROUNDS, sizeof tb[0], bench_cmp_double);
        double mb = tb[ROUNDS / 2], nb = (double)rb.nodes / mb;
        printf("%s, depth %d\n", cases[k].name, cases[k].depth);
        printf("  baseline, no databases: %" PRIu64 " nodes, %.3f s, %.2f M nodes/s, score %d\n",
               rb.nodes, mb, nb / 1e6, rb.score);
        if (db) {
            qsort(td, ROUNDS, sizeof td[0], bench_cmp_double);
            double md = td[ROUNDS / 2], nd = (double)rd.nodes / md;
            printf("  databases 1-5:          %" PRIu64 " nodes, %.3f s, %.2f M nodes/s, score %d, "
                   "%" PRIu64 " probes; %.2fx the baseline's nodes/s, %.2fx its time\n",
                   rd.nodes, md, nd / 1e6, rd.score, rd.db_probes, nd / nb, md / mb);
        }
    }
    ab_free(c);
    if (db)
        egdb_close(db);
    return 0;
}
