/*
 * test_prover_pt.c - df-pn's path-dependent table (prover/dfpn_internal.h,
 * THE PATH-DEPENDENT TABLE'S TAGS): the bitmap and the tags in front of
 * the entries only filter. What dfpn_pt_put stored, dfpn_pt_get finds, on
 * every line that holds the positions it rests on, until a new generation;
 * a different position under the same key, a different key, an entry
 * shifted out of a full bucket and every entry of an older generation are
 * not found. Keys are chosen by hand so that entries share a bucket and
 * differ in the bits the tags and the bitmap read.
 *
 * The transposition table's replacement: a strict fact gives way last
 * (dfpn_table.c, A STRICT FACT GIVES WAY LAST). A table that may grow
 * doubles when it fills and keeps every entry it could find before; one
 * that may not collects its garbage and loses some; strict facts given
 * up in full buckets make it grow before it fills (A TABLE THAT GROWS).
 *
 * Needs no databases: the table is driven directly.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "engine/engine.h"
#include "prover/dfpn_internal.h"

/* A legal-looking position numbered i: one black man on square i % 28,
 * one white king, Black to move. Distinct for i < 28. */
static eng_pos
pos_n(int i)
{
    eng_pos p;
    memset(&p, 0, sizeof p);
    p.bm = 1u << (i % 28);
    p.wk = 1u << 31;
    p.stm = ENG_BLACK;
    return p;
}

/* A key in bucket 0 of the table (low bits 0) whose tag bits (40-63) are
 * hi and whose bitmap bits (20-38) are mid. */
static uint64_t
key_of(uint64_t hi, uint64_t mid)
{
    return (hi << 40) | (mid << 20);
}

/* A solver with a 1 MB table, in its first generation. */
static dfpn_ctx *
fresh(void)
{
    dfpn_ctx *c = NULL;
    assert_int_equal(dfpn_new(1u << 20, &c), 0);
    dfpn_new_generation(c);
    return c;
}

static const pt_entry *
get(dfpn_ctx *c, const eng_pos *p, uint64_t key, int ply)
{
    int up = -1;
    return dfpn_pt_get(c, p, key, 0, ply, &up);
}

static void
test_found_until_new_generation(void **state)
{
    (void)state;
    dfpn_ctx *c = fresh();
    deps none = {0};
    eng_pos a = pos_n(1), b = pos_n(2);
    uint64_t k = key_of(0x123456, 0x4321);

    assert_null(get(c, &a, k, 1)); /* an empty table */
    dfpn_pt_put(c, &a, k, 1, &none, 7);
    const pt_entry *e = get(c, &a, k, 1);
    assert_non_null(e);
    assert_int_equal(e->attacker_won, 1);
    assert_int_equal(e->len, 7);
    /* the same key, another position: the full position decides */
    assert_null(get(c, &b, k, 1));
    /* the same position under keys differing in the tag's or the bitmap's bits */
    assert_null(get(c, &a, key_of(0x123457, 0x4321), 1));
    assert_null(get(c, &a, key_of(0x123456, 0x4322), 1));

    dfpn_new_generation(c); /* every entry goes stale */
    assert_null(get(c, &a, k, 1));
    dfpn_pt_put(c, &b, k, 0, &none, 3); /* and the way is used again */
    assert_null(get(c, &a, k, 1));
    e = get(c, &b, k, 1);
    assert_non_null(e);
    assert_int_equal(e->attacker_won, 0);
    dfpn_free(c);
}

static void
test_full_bucket_shifts_out_the_oldest(void **state)
{
    (void)state;
    dfpn_ctx *c = fresh();
    deps none = {0};
    eng_pos p[PT_WAYS + 1];
    for (int i = 0; i <= PT_WAYS; i++) {
        p[i] = pos_n(3 + i);
        /* one bucket, tags apart, the bitmap's bits shared by two of them */
        dfpn_pt_put(c, &p[i], key_of(0x100 + (uint64_t)i, (uint64_t)(i / 2)), i & 1, &none, 10 + i);
    }
    assert_null(get(c, &p[0], key_of(0x100, 0), 1)); /* shifted out */
    for (int i = 1; i <= PT_WAYS; i++) {
        const pt_entry *e = get(c, &p[i], key_of(0x100 + (uint64_t)i, (uint64_t)(i / 2)), 1);
        assert_non_null(e);
        assert_true(memcmp(&e->pos, &p[i], sizeof p[i]) == 0);
        assert_int_equal(e->attacker_won, i & 1);
        assert_int_equal(e->len, 10 + i);
    }
    dfpn_free(c);
}

static void
test_holds_only_on_lines_with_its_positions(void **state)
{
    (void)state;
    dfpn_ctx *c = fresh();
    eng_pos a = pos_n(7), q = pos_n(8), other = pos_n(9);
    deps d = {0};
    d.n = 1;
    d.p[0] = q;
    uint64_t k = key_of(0xABCDEF, 0x77);
    dfpn_pt_put(c, &a, k, 0, &d, 4);

    c->path[0] = other;
    c->path[1] = other;
    assert_null(get(c, &a, k, 2)); /* q is not on the line */
    c->path[1] = q;
    int up = -1;
    assert_non_null(dfpn_pt_get(c, &a, k, 0, 2, &up));
    assert_int_equal(up, 1);                       /* q is one ply above */
    assert_null(dfpn_pt_get(c, &a, k, 2, 2, &up)); /* q above the reversible segment */
    dfpn_free(c);
}

static void
test_generation_wrap_forgets(void **state)
{
    (void)state;
    dfpn_ctx *c = fresh();  /* generation 1, never seen again after a wrap */
    dfpn_new_generation(c); /* 2, the first after a wrap */
    deps none = {0};
    eng_pos a = pos_n(11);
    uint64_t k = key_of(0x42, 0x42);
    uint8_t g = c->gen;
    dfpn_pt_put(c, &a, k, 1, &none, 1);
    /* round the 8-bit counter back to the same generation number: the
     * wrap clears the table, so the old entry must not come back */
    do
        dfpn_new_generation(c);
    while (c->gen != g);
    assert_null(get(c, &a, k, 1));
    dfpn_pt_put(c, &a, k, 1, &none, 1);
    assert_non_null(get(c, &a, k, 1));
    dfpn_free(c);
}

/* A key of bucket 0 (low bits 0), distinct for each i. */
static uint64_t
key_k(int i)
{
    return (uint64_t)(i + 1) << 40;
}

/*
 * A full bucket takes a new entry in place of an open entry or a loose
 * fact, even one with far more work, before a strict fact (a win the
 * proof's walk will follow); only a bucket of strict facts gives one up,
 * the least worth keeping. Before the rule, the strict fact (the bonus
 * plus 10 positions of work) was the bucket's lowest score, and went.
 */
static void
test_strict_fact_gives_way_last(void **state)
{
    (void)state;
    dfpn_ctx *c = fresh();
    c->attacker = ENG_WHITE; /* "does White win?", strict */
    c->goal = DFPN_WIN;
    c->safety = ENG_BLACK;
    c->loose = 0;
    c->round = 0;
    look l;
    eng_pos p[8];
    for (int i = 0; i < 8; i++)
        p[i] = pos_n(12 + i);
    const uint64_t big = 10u * DFPN_FINAL_BONUS;
    dfpn_tt_put(c, &p[0], key_k(0), 0, DFPN_INF, 5, 10, 1, 0); /* a strict win, little work */
    /* three open entries of much work */
    for (int i = 1; i < 4; i++)
        dfpn_tt_put(c, &p[i], key_k(i), 3, 4, 0, big, 1, 0);
    dfpn_tt_put(c, &p[4], key_k(4), 5, 6, 0, big, 1, 0); /* a fifth: the bucket is full */
    dfpn_tt_find(c, &p[0], key_k(0), &l);
    assert_non_null(l.fin); /* the win stays */
    assert_int_equal(l.att_won, 1);
    assert_int_equal(l.len, 5);
    dfpn_tt_find(c, &p[4], key_k(4), &l);
    assert_non_null(l.open); /* in an open entry's place */

    /* a loose fact (an optimistic query's draw) gives way before it too */
    c->loose = 1;
    dfpn_tt_put(c, &p[1], key_k(1), DFPN_INF, 0, 0, big, 1, 1);
    c->loose = 0;
    dfpn_tt_put(c, &p[5], key_k(5), 0, DFPN_INF, 7, 10, 1, 0); /* a second strict win */
    dfpn_tt_find(c, &p[0], key_k(0), &l);
    assert_non_null(l.fin);
    dfpn_tt_find(c, &p[5], key_k(5), &l);
    assert_non_null(l.fin);

    /* a bucket of strict facts: the one least worth keeping goes */
    dfpn_tt_put(c, &p[6], key_k(6), 0, DFPN_INF, 9, big, 1, 0);
    dfpn_tt_put(c, &p[7], key_k(7), 0, DFPN_INF, 9, big, 1, 0);
    dfpn_tt_put(c, &p[2], key_k(2), 0, DFPN_INF, 9, big, 1, 0); /* p[2] was open: now a fact */
    dfpn_tt_find(c, &p[6], key_k(6), &l);
    assert_non_null(l.fin);
    dfpn_tt_find(c, &p[7], key_k(7), &l);
    assert_non_null(l.fin);
    dfpn_tt_find(c, &p[2], key_k(2), &l);
    assert_non_null(l.fin);
    int kept = 0;
    for (int i = 0; i < 8; i++) {
        dfpn_tt_find(c, &p[i], key_k(i), &l);
        kept += l.fin != NULL;
    }
    assert_int_equal(kept, 4);
    dfpn_tt_find(c, &p[0], key_k(0), &l); /* 10 positions of work: the least */
    assert_null(l.fin);
    dfpn_free(c);
}

/* Distinct positions for the growth test, with their true keys (the
 * table's buckets are recomputed from them when it doubles). */
static eng_pos
pos_g(uint32_t i)
{
    eng_pos p;
    memset(&p, 0, sizeof p);
    p.bm = i + 1;
    p.wk = 1u << 31;
    p.stm = (i & 1) ? ENG_WHITE : ENG_BLACK;
    return p;
}

/* Entries in use in key's bucket. */
static int
bucket_used(const dfpn_ctx *c, uint64_t key)
{
    const tt_entry *b = &c->tt[(key & (c->nbuckets - 1)) * BUCKET];
    int k = 0;
    for (int i = 0; i < BUCKET; i++)
        k += (b[i].flags & F_USED) != 0;
    return k;
}

/*
 * Fills a 1 MB table with strict facts and open entries of this query,
 * to three quarters, skipping positions whose bucket is full (so that no
 * fact is given up on the way), then puts one more. Growing: the table
 * doubled once, nothing is lost (facts keep their lengths, open entries
 * their numbers), and later entries go on into the larger table; at its
 * ceiling it collects. Fixed (the same puts without dfpn_set_growth):
 * the collection runs and loses entries, which is what the check of the
 * growing table would see if it collected instead of growing.
 */
static void
run_growth(int grow)
{
    dfpn_ctx *c = fresh();
    if (grow)
        dfpn_set_growth(c, 2u << 20);
    c->attacker = ENG_WHITE;
    c->goal = DFPN_WIN;
    c->safety = ENG_BLACK;
    c->loose = 0;
    c->round = 0;
    size_t entries = c->nbuckets * BUCKET, limit = entries * 3 / 4;
    enum { MAXN = 1 << 17 };
    static unsigned char put[MAXN];
    uint32_t n = 0, nput = 0;
    while (c->used < limit && n < MAXN) {
        eng_pos p = pos_g(n);
        uint64_t k = eng_key(&p);
        put[n] = bucket_used(c, k) < BUCKET;
        if (put[n] && n % 3)
            dfpn_tt_put(c, &p, k, 0, DFPN_INF, (uint16_t)(1 + n % 50), 10, 1, 0);
        else if (put[n])
            dfpn_tt_put(c, &p, k, 5 + n % 7, 9, 0, 10, 1, 0);
        nput += put[n];
        n++;
    }
    assert_int_equal(c->used, limit);
    assert_int_equal(nput, limit);
    assert_int_equal(c->tt_grows, 0);
    eng_pos extra = pos_g(n);
    dfpn_tt_put(c, &extra, eng_key(&extra), 0, DFPN_INF, 3, 10, 1, 0); /* the table is full */
    uint32_t after = 0;
    look l;
    for (uint32_t i = 0; i < n; i++) {
        if (!put[i])
            continue;
        eng_pos p = pos_g(i);
        dfpn_tt_find(c, &p, eng_key(&p), &l);
        if (i % 3) {
            after += l.fin != NULL;
            if (l.fin)
                assert_int_equal(l.len, 1 + i % 50);
        } else {
            after += l.open != NULL;
            if (l.open)
                assert_int_equal(l.open->pn, 5 + i % 7);
        }
    }
    dfpn_tt_find(c, &extra, eng_key(&extra), &l);
    if (grow) {
        assert_int_equal(c->tt_grows, 1);
        assert_int_equal(c->nbuckets * BUCKET, 2 * entries);
        assert_int_equal(c->gc_runs, 0);
        assert_int_equal(after, nput); /* nothing lost */
        assert_non_null(l.fin);
        /* at the ceiling (2 MB) the next fill collects */
        for (uint32_t i = n + 1; c->gc_runs == 0; i++) {
            eng_pos p = pos_g(i);
            dfpn_tt_put(c, &p, eng_key(&p), 0, DFPN_INF, 2, 10, 1, 0);
        }
        assert_int_equal(c->tt_grows, 1);
    } else {
        assert_int_equal(c->tt_grows, 0);
        assert_int_equal(c->gc_runs, 1);
        assert_true(after < nput); /* collected: some are gone */
    }
    dfpn_free(c);
}

static void
test_table_grows_and_keeps(void **state)
{
    (void)state;
    run_growth(1);
}

static void
test_fixed_table_collects(void **state)
{
    (void)state;
    run_growth(0);
}

/*
 * Strict facts given up in full buckets make a table that may grow
 * double long before it is three quarters full: after one in
 * GROW_EVICTED of its entries went, and not before.
 */
static void
test_table_grows_when_facts_go(void **state)
{
    (void)state;
    dfpn_ctx *c = fresh();
    dfpn_set_growth(c, 4u << 20);
    c->attacker = ENG_WHITE;
    c->goal = DFPN_WIN;
    c->safety = ENG_BLACK;
    c->loose = 0;
    c->round = 0;
    size_t entries = c->nbuckets * BUCKET;
    uint64_t lost = 0;
    for (uint32_t i = 0; c->tt_grows == 0; i++) {
        eng_pos p = pos_g(i);
        uint64_t k = eng_key(&p);
        int full = bucket_used(c, k) == BUCKET;
        dfpn_tt_put(c, &p, k, 0, DFPN_INF, 4, 10, 1, 0);
        if (c->tt_grows == 0)
            lost += full; /* a bucket of four strict facts gave one up */
    }
    assert_int_equal(lost + 1, entries / GROW_EVICTED);
    assert_true(c->used < entries * 3 / 4);
    assert_int_equal(c->gc_runs, 0);
    dfpn_free(c);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_found_until_new_generation),
        cmocka_unit_test(test_full_bucket_shifts_out_the_oldest),
        cmocka_unit_test(test_holds_only_on_lines_with_its_positions),
        cmocka_unit_test(test_generation_wrap_forgets),
        cmocka_unit_test(test_strict_fact_gives_way_last),
        cmocka_unit_test(test_table_grows_and_keeps),
        cmocka_unit_test(test_fixed_table_collects),
        cmocka_unit_test(test_table_grows_when_facts_go),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
