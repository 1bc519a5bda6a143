/*
 * test_prover_admit.c - admission (prover/admit.h): a worker's records
 * are written only when the checker proves them, and only as far as it
 * proves them.
 *
 * An honest df-pn proof (the 5-piece loss B:W30,31,K19:B6,K12 with the
 * 4-piece databases) is gathered with padm_collect and admitted whole;
 * then forged batches, each refused with nothing written: a losing move,
 * a missing reply, a cycle passed off as a win, a record outside the
 * claimed proof, two records that contradict each other, a record that
 * contradicts the store, too many records, a root without a record. The
 * cycle is built by hand on the single corner (squares 4 and 8: White's
 * king has one move everywhere, Black's king shuttles 29-25): as a win
 * it must be refused; the same records as "Black at least draws" are a
 * true proof and are admitted, with each record cut down to what that
 * proof showed.
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
#include "prover/admit.h"
#include "prover/check.h"
#include "prover/dfpn.h"
#include "prover/prover.h"
#include "prover/store.h"
#include "tests/test_util.h"

typedef struct fixture {
    egdb *db4;
    char dir[256];
    pst_env *wst;      /* the worker's store, with an honest proof */
    padm_items honest; /* that proof, as the worker sends it */
    eng_pos root;
} fixture;

static fixture F;
static int store_no;

static pst_env *
fresh_store(void)
{
    char path[400], err[256];
    snprintf(path, sizeof path, "%s/s%d", F.dir, store_no++);
    pst_env *st;
    assert_int_equal(pst_open(path, 0, &st, err, sizeof err), 0);
    return st;
}

static eng_pos
pos_of(const char *fen)
{
    eng_pos p;
    char err[128];
    assert_int_equal(eng_parse_fen(fen, &p, err, sizeof err), 0);
    return p;
}

static int
setup(void **state)
{
    (void)state;
    const char *d = test_db_dir();
    char err[512];
    if (!d || egdb_open(d, 4, (size_t)64 << 20, &F.db4, err, sizeof err))
        return -1;
    if (!test_tmpdir(F.dir, sizeof F.dir, "admit"))
        return -1;
    char path[400];
    snprintf(path, sizeof path, "%s/worker", F.dir);
    if (pst_open(path, 0, &F.wst, err, sizeof err))
        return -1;
    if (eng_parse_fen("B:W30,31,K19:B6,K12", &F.root, err, sizeof err))
        return -1;
    eng_question draws = {F.root.stm, ENG_DRAW}; /* does Black, to move, at least draw? */
    prv_opts o = {.db = F.db4,
                  .db_pieces = 4,
                  .store = F.wst,
                  .question = &draws,
                  .tt_bytes = (size_t)16 << 20};
    prv_result r;
    if (prv_solve(&F.root, &o, &r, err, sizeof err) || r.bound != ENG_LL) {
        fprintf(stderr, "the honest proof: %s (bound %s)\n", err, eng_bound_name(r.bound));
        return -1;
    }
    if (padm_collect(F.wst, F.db4, &F.root, &F.honest, err, sizeof err)) {
        fprintf(stderr, "padm_collect: %s\n", err);
        return -1;
    }
    return 0;
}

static int
teardown(void **state)
{
    (void)state;
    padm_items_free(&F.honest);
    pst_close(F.wst);
    egdb_close(F.db4);
    char cmd[400];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", F.dir);
    return system(cmd) != 0;
}

static padm_items
copy_honest(void)
{
    padm_items c = {0};
    for (size_t i = 0; i < F.honest.n; i++)
        assert_int_equal(padm_push(&c, &F.honest.v[i]), 0);
    return c;
}

static size_t
count_records(pst_env *st)
{
    pst_stats s;
    char err[256];
    assert_int_equal(pst_stats_get(st, &s, err, sizeof err), 0);
    return (size_t)s.records;
}

/* The index of the batch's record for p (any orientation), or -1. */
/* Admits b into a fresh store for root; returns the code and leaves the
 * store's record count in *written. */
static int
admit_fresh(const padm_items *b, const eng_pos *root, const egdb *db, int strict, size_t max,
            size_t *written, char *err, size_t errlen)
{
    pst_env *st = fresh_store();
    padm_report rep;
    int rc = padm_admit(st, db, b->v, b->n, root, 1, strict, max, &rep, err, errlen);
    *written = count_records(st);
    pst_close(st);
    return rc;
}

/* The honest proof is admitted whole, checks in the new store, and the
 * worker's collection is exactly what the admission reached. */
static void
test_honest(void **state)
{
    (void)state;
    assert_true(F.honest.n > 10);
    pst_env *st = fresh_store();
    padm_report rep;
    char err[512];
    int rc = padm_admit(st, F.db4, F.honest.v, F.honest.n, &F.root, 1, 1, 0, &rep, err, sizeof err);
    if (rc)
        fprintf(stderr, "%s\n", err);
    assert_int_equal(rc, 0);
    assert_int_equal(rep.reached, rep.staged);
    assert_int_equal(count_records(st), rep.staged);
    pchk_result ck;
    assert_int_equal(pchk_check(st, F.db4, &F.root, &ck, err, sizeof err), 0);
    assert_int_equal(ck.status, PCHK_VALID);
    assert_int_equal(ck.bound, ENG_LL);
    /* again, over what is now admitted: the same records, nothing new */
    rc = padm_admit(st, F.db4, F.honest.v, F.honest.n, &F.root, 1, 1, 0, &rep, err, sizeof err);
    assert_int_equal(rc, 0);
    assert_int_equal(count_records(st), rep.staged);
    pst_close(st);
    fprintf(stderr, "honest proof: %zu records admitted\n", F.honest.n);
}

/* The root's defender (Black, to move, loses) is given a record that
 * claims a win with a legal move: the checker refuses it, nothing is
 * written. */
static void
test_losing_move(void **state)
{
    (void)state;
    padm_items b = copy_honest();
    long r = padm_index(&b, &F.root);
    assert_true(r >= 0);
    eng_movelist ml;
    eng_generate(&F.root, &ml, ENG_DUPS_MERGE);
    pst_item forged = {F.root, {ENG_WW, pst_move_of(&ml.m[0]), {PST_NOMOVE, 0, 0}, 0, 0}};
    b.v[r] = forged;
    char err[512];
    size_t w;
    assert_int_equal(admit_fresh(&b, &F.root, F.db4, 1, 0, &w, err, sizeof err), PADM_EREFUSED);
    assert_int_equal(w, 0);
    assert_non_null(strstr(err, "fails the checker"));
    padm_items_free(&b);
}

/* One record below the root left out: a reply with no proof. */
static void
test_missing_reply(void **state)
{
    (void)state;
    padm_items b = copy_honest();
    long r = padm_index(&b, &F.root);
    size_t drop = r == 0 ? 1 : 0; /* any record but the root's */
    b.v[drop] = b.v[--b.n];
    char err[512];
    size_t w;
    assert_int_equal(admit_fresh(&b, &F.root, F.db4, 1, 0, &w, err, sizeof err), PADM_EREFUSED);
    assert_int_equal(w, 0);
    assert_non_null(strstr(err, "no stored proof"));
    padm_items_free(&b);
}

/* The single-corner shuttle: 4 positions, each side with one move that
 * the records use. */
static void
shuttle(padm_items *b, int draw)
{
    static const char *const black[] = {"B:WK4:B3,11,12,15,16,K29", "B:WK8:B3,11,12,15,16,K25"};
    static const char *const white[] = {"W:WK4:B3,11,12,15,16,K25", "W:WK8:B3,11,12,15,16,K29"};
    static const char *const move[] = {"29-25", "25-29"};
    b->n = 0;
    for (int k = 0; k < 2; k++) {
        eng_pos p = pos_of(black[k]);
        eng_move m;
        char err[128];
        assert_int_equal(eng_parse_move(&p, move[k], &m, err, sizeof err), 0);
        pst_item it = {p, {ENG_WW, pst_move_of(&m), {PST_NOMOVE, 0, 0}, 0, 0}};
        if (draw) {
            it.rec.bound = ENG_DW;
            it.rec.draw = it.rec.win;
            it.rec.win.from = PST_NOMOVE;
        }
        assert_int_equal(padm_push(b, &it), 0);
        pst_item w = {pos_of(white[k]), {ENG_LL, {PST_NOMOVE, 0, 0}, {PST_NOMOVE, 0, 0}, 0, 0}};
        assert_int_equal(padm_push(b, &w), 0);
    }
}

static void
test_cycle_win(void **state)
{
    (void)state;
    padm_items b = {0};
    shuttle(&b, 0);
    eng_pos root = pos_of("B:WK4:B3,11,12,15,16,K29");
    char err[512];
    size_t w;
    assert_int_equal(admit_fresh(&b, &root, NULL, 1, 0, &w, err, sizeof err), PADM_EREFUSED);
    assert_int_equal(w, 0);
    assert_non_null(strstr(err, "cycle"));
    padm_items_free(&b);
}

/* The same shuttle as a draw is a proof: admitted, and White's records,
 * sent as losses, are written only as "at most a draw" (LD): the draw
 * proof showed no more. */
static void
test_cycle_draw_restricted(void **state)
{
    (void)state;
    padm_items b = {0};
    shuttle(&b, 1);
    eng_pos root = pos_of("B:WK4:B3,11,12,15,16,K29");
    pst_env *st = fresh_store();
    padm_report rep;
    char err[512];
    int rc = padm_admit(st, NULL, b.v, b.n, &root, 1, 1, 0, &rep, err, sizeof err);
    if (rc)
        fprintf(stderr, "%s\n", err);
    assert_int_equal(rc, 0);
    assert_int_equal(rep.written, 4);
    pst_record r;
    eng_pos wp = pos_of("W:WK4:B3,11,12,15,16,K25");
    assert_int_equal(pst_get(st, &wp, &r), 0);
    assert_int_equal(r.bound, ENG_LD);
    assert_int_equal(pst_get(st, &root, &r), 0);
    assert_int_equal(r.bound, ENG_DW);
    /* and the store's LD cannot carry a later claim of a win through it */
    padm_items w = {0};
    shuttle(&w, 0);
    w.v[1] = w.v[--w.n]; /* White's record at the first step left to the store */
    rc = padm_admit(st, NULL, w.v, w.n, &root, 1, 1, 0, &rep, err, sizeof err);
    assert_int_equal(rc, PADM_EREFUSED);
    assert_non_null(strstr(err, "admitted bound"));
    pst_close(st);
    padm_items_free(&b);
    padm_items_free(&w);
}

/* A true record for a position the claimed proof never reaches: refused
 * in a strict (worker's) batch; otherwise not written. */
static void
test_outside(void **state)
{
    (void)state;
    padm_items b = copy_honest();
    padm_items d = {0};
    shuttle(&d, 1);
    assert_int_equal(padm_push(&b, &d.v[0]), 0);
    char err[512];
    size_t w;
    assert_int_equal(admit_fresh(&b, &F.root, F.db4, 1, 0, &w, err, sizeof err), PADM_EOUTSIDE);
    assert_int_equal(w, 0);
    assert_non_null(strstr(err, "outside the job"));
    assert_int_equal(admit_fresh(&b, &F.root, F.db4, 0, 0, &w, err, sizeof err), 0);
    assert_int_equal(w, F.honest.n);
    padm_items_free(&b);
    padm_items_free(&d);
}

/* Two records of one position that cannot both be true; a record that
 * contradicts the store; more records than allowed; no root record; a
 * record the store would refuse. */
static void
test_bad_batches(void **state)
{
    (void)state;
    char err[512];
    size_t w;
    padm_items b = copy_honest();
    long r = padm_index(&b, &F.root);
    eng_movelist ml;
    eng_generate(&F.root, &ml, ENG_DUPS_MERGE);
    pst_item ww = {F.root, {ENG_WW, pst_move_of(&ml.m[0]), {PST_NOMOVE, 0, 0}, 0, 0}};
    assert_int_equal(padm_push(&b, &ww), 0);
    assert_int_equal(admit_fresh(&b, &F.root, F.db4, 1, 0, &w, err, sizeof err), PADM_ECONTRADICT);
    assert_int_equal(w, 0);
    b.n--;

    assert_int_equal(admit_fresh(&b, &F.root, F.db4, 1, b.n - 1, &w, err, sizeof err),
                     PADM_ETOOMANY);
    assert_int_equal(w, 0);

    eng_pos other = pos_of("B:WK4:B3,11,12,15,16,K29");
    assert_int_equal(admit_fresh(&b, &other, F.db4, 1, 0, &w, err, sizeof err), PADM_ENOROOT);
    assert_int_equal(w, 0);

    pst_item bad = b.v[r];
    bad.rec.bound = ENG_LW; /* says nothing */
    padm_items one = {0};
    assert_int_equal(padm_push(&one, &bad), 0);
    assert_int_equal(admit_fresh(&one, &F.root, F.db4, 1, 0, &w, err, sizeof err), PADM_EBADRECORD);
    padm_items_free(&one);

    /* the store holds the truth (LL); a batch claiming a draw there */
    pst_env *st = fresh_store();
    padm_report rep;
    assert_int_equal(padm_admit(st, F.db4, b.v, b.n, &F.root, 1, 1, 0, &rep, err, sizeof err), 0);
    pst_item dd = {F.root, {ENG_DD, {PST_NOMOVE, 0, 0}, pst_move_of(&ml.m[0]), 0, 0}};
    size_t before = count_records(st);
    assert_int_equal(padm_admit(st, F.db4, &dd, 1, &F.root, 1, 1, 0, &rep, err, sizeof err),
                     PADM_ECONTRADICT);
    assert_non_null(strstr(err, "contradicts"));
    assert_int_equal(count_records(st), before);
    pst_close(st);
    padm_items_free(&b);
}

/* ---- what a worker sends (admit.h, WHAT A WORKER SENDS) ------------------ */

/* A worker's job in these tests: df-pn answers q at p over the worker's
 * store wst (write_proof, as a worker's solve), and the batch is gathered
 * from what the writer produced (padm_gather with the acknowledged claims
 * sent). RETURN the bound proven; the batch in *out. */
static eng_bound
job(dfpn_ctx *ctx, pst_env *wst, const eng_pos *p, const eng_question *q, const padm_sent *sent,
    padm_items *out, size_t *written)
{
    prv_opts o = {.db = F.db4, .db_pieces = 4, .store = wst, .question = q, .ctx = ctx};
    prv_result r;
    char err[512];
    assert_int_equal(prv_solve(p, &o, &r, err, sizeof err), 0);
    assert_int_not_equal(r.bound, ENG_LW);
    const pst_item *wr;
    const eng_pos *rests;
    size_t nwr, nrests;
    assert_int_equal(dfpn_last_proof(ctx, &wr, &nwr, &rests, &nrests), 1);
    *written = nwr;
    out->n = 0;
    int rc =
        padm_gather(wst, F.db4, p, r.bound, wr, nwr, rests, nrests, sent, out, err, sizeof err);
    if (rc)
        fprintf(stderr, "padm_gather: %s\n", err);
    assert_int_equal(rc, 0);
    return r.bound;
}

/* Admits b (strict, as the manager admits a worker's batch) into st. */
static int
admit_strict(pst_env *st, const padm_items *b, const eng_pos *root)
{
    padm_report rep;
    char err[512];
    int rc = padm_admit(st, F.db4, b->v, b->n, root, 1, 1, 0, &rep, err, sizeof err);
    if (rc)
        fprintf(stderr, "admission: %s\n", err);
    return rc;
}

/* Two jobs: first a child C of the root (its proof written to the worker's
 * store, sent, admitted, ACKed), then the root, whose proof takes C as a
 * stored leaf. The root's batch does not send C again, and is admitted
 * strict over the manager's store. Before issue 42 the worker sent C's
 * whole proof with every job that rested on it (padm_collect's walk
 * stopped at nothing the manager held). Without the acknowledgement (C's
 * job failed, was refused, or C was kept by a walk cut short), C and its
 * proof go with the root's batch, which is still admitted strict into a
 * store that has never seen them. */
static void
test_gather_acked_not_resent(void **state)
{
    (void)state;
    char path[400], err[256];
    snprintf(path, sizeof path, "%s/gather-worker", F.dir);
    pst_env *wst;
    assert_int_equal(pst_open(path, 0, &wst, err, sizeof err), 0);
    dfpn_ctx *ctx;
    assert_int_equal(dfpn_new((size_t)16 << 20, &ctx), 0);
    padm_sent *sent;
    assert_int_equal(padm_sent_new(&sent), 0);
    pst_env *mst = fresh_store();

    /* job 1: C, the root after Black's first move: White to move wins */
    eng_movelist ml;
    assert_true(eng_generate(&F.root, &ml, ENG_DUPS_MERGE) > 0);
    eng_pos c;
    eng_make(&F.root, &ml.m[0], &c);
    eng_question wwins = {ENG_WHITE, ENG_WIN};
    padm_items b1 = {0};
    size_t nwr;
    assert_int_equal(job(ctx, wst, &c, &wwins, sent, &b1, &nwr), ENG_WW);
    assert_true(b1.n > 1);
    assert_int_equal(b1.n, nwr); /* a fresh store: the writer's records alone */
    assert_true(padm_index(&b1, &c) >= 0);
    assert_int_equal(admit_strict(mst, &b1, &c), 0);
    assert_int_equal(padm_sent_add(sent, b1.v, b1.n), 0); /* the ACK */
    assert_int_equal(padm_sent_count(sent), b1.n);
    assert_true(padm_sent_covers(sent, &c, ENG_WHITE, 1));

    /* job 2: the root (Black to move draws? no: LL); C is a stored leaf */
    eng_question bdraws = {ENG_BLACK, ENG_DRAW};
    padm_items b2 = {0};
    assert_int_equal(job(ctx, wst, &F.root, &bdraws, sent, &b2, &nwr), ENG_LL);
    assert_int_equal(padm_index(&b2, &c), -1); /* not resent */
    assert_int_equal(b2.n, nwr);
    assert_true(padm_index(&b2, &F.root) >= 0);
    assert_int_equal(admit_strict(mst, &b2, &F.root), 0);
    pchk_result ck;
    char cerr[512];
    assert_int_equal(pchk_check(mst, F.db4, &F.root, &ck, cerr, sizeof cerr), 0);
    assert_int_equal(ck.status, PCHK_VALID);
    assert_int_equal(ck.bound, ENG_LL);

    /* the same job with nothing acknowledged: C's proof goes with it,
     * gathered from the worker's store, and a fresh store admits it */
    padm_items b3 = {0};
    assert_int_equal(job(ctx, wst, &F.root, &bdraws, NULL, &b3, &nwr), ENG_LL);
    assert_true(padm_index(&b3, &c) >= 0);
    assert_true(b3.n > nwr);
    pst_env *fresh = fresh_store();
    assert_int_equal(admit_strict(fresh, &b3, &F.root), 0);
    assert_int_equal(pchk_check(fresh, F.db4, &F.root, &ck, cerr, sizeof cerr), 0);
    assert_int_equal(ck.status, PCHK_VALID);
    /* ... but not into one that lacks a record the batch left out: the
     * root's batch of job 2 over a store without C is refused */
    pst_env *bare = fresh_store();
    assert_int_equal(admit_strict(bare, &b2, &F.root), PADM_EREFUSED);
    pst_close(bare);
    pst_close(fresh);
    fprintf(stderr, "gather: C %zu records; the root %zu with C acknowledged, %zu without\n", b1.n,
            b2.n, b3.n);

    /* job 3: C again, now a stored leaf at the root: its record alone
     * goes (the manager wants the job's claim), its proof acknowledged */
    padm_items b4 = {0};
    assert_int_equal(job(ctx, wst, &c, &wwins, sent, &b4, &nwr), ENG_WW);
    assert_int_equal(nwr, 0);
    assert_int_equal(b4.n, 1);
    assert_true(eng_equal(&b4.v[0].pos, &c));
    assert_int_equal(b4.v[0].rec.bound, ENG_WW);
    assert_int_equal(admit_strict(mst, &b4, &c), 0);

    padm_items_free(&b1);
    padm_items_free(&b2);
    padm_items_free(&b3);
    padm_items_free(&b4);
    padm_sent_free(sent);
    dfpn_free(ctx);
    pst_close(mst);
    pst_close(wst);
}

/* Records a win walk cut short kept in the worker's store (dfpn_walk.c, A
 * WIN WALK CUT SHORT KEEPS WHAT IT CLOSED) were never sent: the job that
 * kept them failed. The proof that finally rests on them sends them: the
 * writer's own records alone are refused by a store that never saw the
 * kept ones, the batch with them gathered is admitted strict and checks.
 * A cut run leaves no written proof to send (dfpn_last_proof says 0). The
 * walk is cut by a cap of 200 positions, as in test_prover_dfpn.c. */
static void
test_gather_kept_resent(void **state)
{
    (void)state;
    char path[400], err[512] = "";
    snprintf(path, sizeof path, "%s/gather-kept", F.dir);
    pst_env *wst;
    assert_int_equal(pst_open(path, 0, &wst, err, sizeof err), 0);
    eng_pos p = pos_of("W:WK1,K6:BK2,K3,K31");
    dfpn_ctx *c;
    assert_int_equal(dfpn_new((size_t)16 << 20, &c), 0);
    dfpn_opts o = {0};
    o.db = F.db4;
    o.db_pieces = 4;
    o.node_limit = 5000000;
    o.store = wst;
    o.write_proof = 1;
    o.walk_max_positions = 200;
    eng_question q = {ENG_BLACK, ENG_WIN};
    dfpn_result r;
    const pst_item *wr;
    const eng_pos *rests;
    size_t nwr, nrests;
    int runs = 0, rc;
    uint64_t kept = 0;
    do {
        rc = dfpn_prove(c, &p, &q, &o, &r, err, sizeof err);
        runs++;
        if (rc == 0)
            break;
        assert_int_equal(rc, DFPN_EPROOF);
        kept += r.kept_records;
        assert_int_equal(dfpn_last_proof(c, &wr, &nwr, &rests, &nrests), 0);
    } while (runs < 100);
    assert_int_equal(rc, 0);
    assert_true(kept > 0);
    assert_int_equal(dfpn_last_proof(c, &wr, &nwr, &rests, &nrests), 1);
    assert_true(nrests > 0);
    /* the writer's records alone: the kept records are missing */
    padm_items alone = {0}, b = {0};
    for (size_t i = 0; i < nwr; i++)
        assert_int_equal(padm_push(&alone, &wr[i]), 0);
    pst_env *st = fresh_store();
    assert_int_equal(admit_strict(st, &alone, &p), PADM_EREFUSED);
    /* with what they rest on gathered from the store */
    assert_int_equal(
        padm_gather(wst, F.db4, &p, ENG_LL, wr, nwr, rests, nrests, NULL, &b, err, sizeof err), 0);
    assert_true(b.n > nwr);
    assert_int_equal(admit_strict(st, &b, &p), 0);
    pchk_result ck;
    assert_int_equal(pchk_check(st, F.db4, &p, &ck, err, sizeof err), 0);
    assert_int_equal(ck.status, PCHK_VALID);
    assert_int_equal(ck.bound, ENG_LL); /* White, to move, loses */
    fprintf(stderr, "kept: %d runs, %" PRIu64 " records kept; %zu written by the last, %zu sent\n",
            runs, kept, nwr, b.n);
    padm_items_free(&alone);
    padm_items_free(&b);
    dfpn_free(c);
    pst_close(st);
    pst_close(wst);
}

/* The acknowledged claims: a bound by position (either orientation), met
 * as ACKs come, and only the claims that bound implies are covered. */
static void
test_sent_covers(void **state)
{
    (void)state;
    padm_sent *s;
    assert_int_equal(padm_sent_new(&s), 0);
    eng_pos p = pos_of("B:W30,31,K19:B6,K12");
    assert_false(padm_sent_covers(s, &p, ENG_BLACK, 0));
    pst_item dw = {p, {ENG_DW, {PST_NOMOVE, 0, 0}, {PST_NOMOVE, 0, 0}, 0, 0}};
    assert_int_equal(padm_sent_add(s, &dw, 1), 0);
    assert_true(padm_sent_covers(s, &p, ENG_BLACK, 0));  /* Black to move draws */
    assert_false(padm_sent_covers(s, &p, ENG_BLACK, 1)); /* not a win */
    assert_false(padm_sent_covers(s, &p, ENG_WHITE, 0)); /* nothing for White */
    eng_pos twin = eng_flip(&p); /* White to move: the same bound, for White */
    assert_true(padm_sent_covers(s, &twin, ENG_WHITE, 0));
    assert_false(padm_sent_covers(s, &twin, ENG_BLACK, 0));
    pst_item ld = {p, {ENG_LD, {PST_NOMOVE, 0, 0}, {PST_NOMOVE, 0, 0}, 0, 0}};
    assert_int_equal(padm_sent_add(s, &ld, 1), 0); /* met: DD */
    assert_true(padm_sent_covers(s, &p, ENG_WHITE, 0));
    assert_int_equal(padm_sent_count(s), 1);
    padm_sent_clear(s);
    assert_false(padm_sent_covers(s, &p, ENG_BLACK, 0));
    assert_false(padm_sent_covers(NULL, &p, ENG_BLACK, 0));
    padm_sent_free(s);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_honest),
        cmocka_unit_test(test_losing_move),
        cmocka_unit_test(test_missing_reply),
        cmocka_unit_test(test_cycle_win),
        cmocka_unit_test(test_cycle_draw_restricted),
        cmocka_unit_test(test_outside),
        cmocka_unit_test(test_bad_batches),
        cmocka_unit_test(test_gather_acked_not_resent),
        cmocka_unit_test(test_gather_kept_resent),
        cmocka_unit_test(test_sent_covers),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
