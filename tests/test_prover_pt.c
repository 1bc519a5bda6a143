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
 * (dfpn_table.c, A STRICT FACT GIVES WAY LAST), and the facts it gives
 * up are kept aside for the walks (A FACT GIVEN UP IS KEPT ASIDE).
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

/* The n-th position whose key falls in the first eighth of c's buckets
 * (from *i on): facts put there overflow their buckets while the table
 * stays below the collector's three quarters. */
static eng_pos
pos_low(const dfpn_ctx *c, uint32_t *i)
{
    for (;; (*i)++) {
        eng_pos p = pos_g(*i);
        if ((eng_key(&p) & (c->nbuckets - 1)) < c->nbuckets / 8) {
            (*i)++;
            return p;
        }
    }
}

/*
 * Strict facts put into the first eighth of a 1 MB table's buckets far
 * beyond what they hold (150,000 of them, 4,096 entries): each one a
 * full bucket gives up is
 * kept aside, so that a walk's lookup (dfpn_tt_find_kept) finds every
 * one, with its length and side, and puts it back, while the search's
 * lookup (dfpn_tt_find) does not see them. The kept table doubles past
 * its first size and keeps what it held. Without dfpn_set_kept, some
 * are lost (what the walk then searches again).
 */
static void
run_kept(int keep)
{
    dfpn_ctx *c = fresh();
    if (keep)
        dfpn_set_kept(c, 8u << 20); /* 262,144 slots */
    c->attacker = ENG_WHITE;
    c->goal = DFPN_WIN;
    c->safety = ENG_BLACK;
    c->loose = 0;
    c->round = 0;
    enum { N = 150000 };
    uint32_t at = 0;
    for (uint32_t i = 0; i < N; i++) {
        eng_pos p = pos_low(c, &at);
        /* the attacker's wins and losses, by turns */
        dfpn_tt_put(c, &p, eng_key(&p), (i & 1) ? 0 : DFPN_INF, (i & 1) ? DFPN_INF : 0,
                    (uint16_t)(1 + i % 60), 10 + i % 5, 1, 0);
    }
    assert_int_equal(c->gc_runs, 0); /* the buckets gave them up, not the collector */
    uint32_t in_table = 0, found = 0;
    look l;
    at = 0;
    for (uint32_t i = 0; i < N; i++) {
        eng_pos p = pos_low(c, &at);
        dfpn_tt_find(c, &p, eng_key(&p), &l);
        in_table += l.fin != NULL;
    }
    assert_true(in_table <= c->nbuckets * BUCKET / 8);
    at = 0;
    for (uint32_t i = 0; i < N; i++) {
        eng_pos p = pos_low(c, &at);
        dfpn_tt_find_kept(c, &p, eng_key(&p), &l);
        if (!l.fin)
            continue;
        found++;
        assert_int_equal(l.att_won, (int)(i & 1));
        assert_int_equal(l.len, 1 + i % 60);
    }
    if (keep) {
        assert_int_equal(found, N);
        assert_true(c->kcap > KEPT_MIN); /* it doubled, and kept what it held */
        assert_true(c->kept_back >= N - in_table);
    } else {
        assert_int_equal(found, in_table);
        assert_int_equal(c->kept_total, 0);
    }
    dfpn_free(c);
}

static void
test_given_up_facts_kept_aside(void **state)
{
    (void)state;
    run_kept(1);
}

static void
test_given_up_facts_lost_without(void **state)
{
    (void)state;
    run_kept(0);
}

/*
 * At its ceiling and three quarters full, the kept table starts again:
 * what it held is gone (only lost, never wrong), and later facts are
 * kept.
 */
static void
test_kept_table_starts_again(void **state)
{
    (void)state;
    dfpn_ctx *c = fresh();
    dfpn_set_kept(c, (size_t)KEPT_MIN * sizeof(tt_entry)); /* one allocation */
    c->attacker = ENG_WHITE;
    c->goal = DFPN_WIN;
    c->safety = ENG_BLACK;
    c->loose = 0;
    c->round = 0;
    /* until the kept table has been emptied once */
    uint32_t at = 0, n = 0;
    size_t last = 0;
    for (;; n++) {
        eng_pos p = pos_low(c, &at);
        dfpn_tt_put(c, &p, eng_key(&p), 0, DFPN_INF, 2, 10, 1, 0);
        if (c->nkept < last)
            break;
        last = c->nkept;
    }
    assert_int_equal(c->gc_runs, 0);
    assert_int_equal(c->kcap, KEPT_MIN);
    assert_int_equal(c->nkept, 1); /* the fact given up by the last put */
    look l;
    uint32_t kept = 0, lost = 0;
    at = 0;
    for (uint32_t j = 0; j <= n; j++) {
        eng_pos q = pos_low(c, &at);
        dfpn_tt_find(c, &q, eng_key(&q), &l);
        if (l.fin)
            continue;
        dfpn_tt_find_kept(c, &q, eng_key(&q), &l);
        kept += l.fin != NULL;
        lost += l.fin == NULL;
    }
    /* the last one given up (and one that putting it back gave up) */
    assert_true(kept >= 1 && kept <= 2);
    assert_true(lost >= KEPT_MIN / 2); /* what was kept before is gone */
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
        cmocka_unit_test(test_given_up_facts_kept_aside),
        cmocka_unit_test(test_given_up_facts_lost_without),
        cmocka_unit_test(test_kept_table_starts_again),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
