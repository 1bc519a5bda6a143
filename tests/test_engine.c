/*
 * test_engine.c - the rules engine against published and independent
 * figures: perft from the start (reference/perft.md), the colour-flip
 * symmetry on positions reached by seeded random play, and hand-checked
 * rule cases (crowning ends a capture, compulsory capture, duplicate
 * king routes, no flying kings, no move loses).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "engine/engine.h"
#include "tests/test_util.h"

/* ---- helpers ---------------------------------------------------------- */

/* Mask of a list of 1-based squares, terminated by 0. */
static uint32_t
sq(int first, ...)
{
    uint32_t m = 0;
    va_list ap;
    va_start(ap, first);
    for (int s = first; s != 0; s = va_arg(ap, int))
        m |= 1u << (s - 1);
    va_end(ap);
    return m;
}

static uint64_t
rng_next(uint64_t *s)
{
    /* xorshift64*: small, seeded, the same on every machine. */
    *s ^= *s >> 12;
    *s ^= *s << 25;
    *s ^= *s >> 27;
    return *s * 2685821657736338717ull;
}

/* ---- perft from the start position ------------------------------------ */

static const uint64_t perft_published[] = {
    1, 7, 49, 302, 1469, 7361, 36768, 179740, 845931, 3963680, 18391564, 85242128, 388623673};

static void
test_perft_start(void **state)
{
    (void)state;
    eng_pos p;
    eng_start(&p);
    int maxd = test_sanitized() ? 9 : 11;
    for (int d = 0; d <= maxd; d++) {
        assert_int_equal(eng_perft(&p, d, ENG_DUPS_KEEP), perft_published[d]);
        /* Duplicate routes first appear at depth 12. */
        assert_int_equal(eng_perft(&p, d, ENG_DUPS_MERGE), perft_published[d]);
    }
}

static void
test_perft_12(void **state)
{
    (void)state;
    if (test_sanitized())
        skip(); /* 388M leaves: checked by the release run of this suite */
    eng_pos p;
    eng_start(&p);
    assert_int_equal(eng_perft(&p, 12, ENG_DUPS_KEEP), 388623673ull);
    assert_int_equal(eng_perft(&p, 12, ENG_DUPS_MERGE), 388617999ull);
}

/* perft by explicit lists must equal the bulk-counting perft. */
static uint64_t
perft_slow(const eng_pos *p, int depth, int dups)
{
    if (depth == 0)
        return 1;
    eng_movelist l;
    int n = eng_generate(p, &l, dups);
    assert_true(n >= 0);
    assert_int_equal((uint64_t)n, eng_count_moves(p, dups));
    uint64_t t = 0;
    for (int i = 0; i < n; i++) {
        eng_pos c;
        eng_make(p, &l.m[i], &c);
        t += perft_slow(&c, depth - 1, dups);
    }
    return t;
}

/* ---- random play: flip symmetry, list/count agreement ----------------- */

static void
test_flip_symmetry(void **state)
{
    (void)state;
    uint64_t seed = 0x9E3779B97F4A7C15ull;
    int positions = 0;
    int depth = test_sanitized() ? 3 : 4;
    for (int game = 0; positions < 300; game++) {
        eng_pos p;
        eng_start(&p);
        int plies = (int)(rng_next(&seed) % 80);
        for (int ply = 0; ply < plies; ply++) {
            eng_movelist l;
            int n = eng_generate(&p, &l, ENG_DUPS_MERGE);
            if (n <= 0)
                break;
            eng_make(&p, &l.m[rng_next(&seed) % (uint64_t)n], &p);
        }
        eng_pos f = eng_flip(&p);
        eng_pos ff = eng_flip(&f);
        assert_true(eng_equal(&p, &ff));
        assert_int_equal(eng_validate(&p, NULL, 0), 0);
        assert_int_equal(eng_key(&p), eng_key(&f));
        for (int dups = 0; dups <= 1; dups++) {
            uint64_t a = eng_perft(&p, depth, dups);
            assert_int_equal(a, eng_perft(&f, depth, dups));
            if (positions % 10 == 0)
                assert_int_equal(a, perft_slow(&p, depth, dups));
        }
        positions++;
    }
}

static void
test_keys_differ(void **state)
{
    (void)state;
    /* The start position is its own twin, so with either side to move
     * it has one key; one move later the side to move matters. */
    eng_pos p;
    eng_start(&p);
    eng_pos f = eng_flip(&p);
    f.stm = ENG_BLACK;
    assert_true(eng_equal(&p, &f));
    eng_movelist l;
    eng_generate(&p, &l, ENG_DUPS_MERGE);
    eng_pos a;
    eng_make(&p, &l.m[0], &a);
    eng_pos b = a;
    b.stm = ENG_BLACK;
    assert_int_not_equal(eng_key(&a), eng_key(&b));
    assert_int_not_equal(eng_key(&a), eng_key(&p));
}

/* ---- rule cases -------------------------------------------------------- */

static void
test_capture_compulsory(void **state)
{
    (void)state;
    /* Black man on 14, white man on 18: 14x23 is the only legal move,
     * though the man on 1 could move too. */
    eng_pos p = {sq(14, 1, 0), sq(18, 0), 0, 0, ENG_BLACK};
    eng_movelist l;
    assert_int_equal(eng_generate(&p, &l, ENG_DUPS_MERGE), 1);
    assert_int_equal(l.m[0].from, 13);
    assert_int_equal(l.m[0].to, 22);
    assert_int_equal(l.m[0].captured, sq(18, 0));
    assert_true(eng_has_capture(&p));
}

static void
test_crowning_ends_capture(void **state)
{
    (void)state;
    /* Black man on 22 (row 5) jumps the white king on 25 and lands on
     * 29, Black's crowning row: it becomes a king there. */
    eng_pos p = {sq(22, 0), sq(0), 0, sq(25, 0), ENG_BLACK};
    eng_movelist l;
    assert_int_equal(eng_generate(&p, &l, ENG_DUPS_KEEP), 1);
    assert_int_equal(l.m[0].to, 28);
    eng_pos c;
    eng_make(&p, &l.m[0], &c);
    assert_int_equal(c.bk, sq(29, 0));
    assert_int_equal(c.bm, 0);
    assert_int_equal(c.wk, 0);

    /* Black man on 23 jumps 27 and is crowned on 32: one jump. */
    eng_pos q = {sq(23, 0), sq(27, 0), 0, 0, ENG_BLACK};
    assert_int_equal(eng_generate(&q, &l, ENG_DUPS_KEEP), 1);
    assert_int_equal(l.m[0].njumps, 1);
    assert_int_equal(l.m[0].to, 31);
}

static void
test_crowned_man_stops_even_if_king_could_continue(void **state)
{
    (void)state;
    /* White man on 10 jumps 7 and lands on 3, its crowning row. A king
     * on 3 could go on over 8 to 12; the crowned man must stop. */
    eng_pos p = {sq(7, 8, 0), sq(10, 0), 0, 0, ENG_WHITE};
    eng_movelist l;
    assert_int_equal(eng_generate(&p, &l, ENG_DUPS_KEEP), 1);
    assert_int_equal(l.m[0].to, 2);
    assert_int_equal(l.m[0].njumps, 1);
    eng_pos c;
    eng_make(&p, &l.m[0], &c);
    assert_int_equal(c.wk, sq(3, 0));
    assert_int_equal(c.bm, sq(8, 0));
    /* A king on 10 instead continues: 10x3x12. */
    eng_pos k = {sq(7, 8, 0), 0, 0, sq(10, 0), ENG_WHITE};
    assert_int_equal(eng_generate(&k, &l, ENG_DUPS_KEEP), 1);
    assert_int_equal(l.m[0].njumps, 2);
    assert_int_equal(l.m[0].to, 11);
}

static void
test_duplicate_king_routes(void **state)
{
    (void)state;
    /* A black king on 10 and white men on 14, 15, 22, 23: the king can
     * take all four going round the ring 10-17-26-19-10 one way or the
     * other, ending on 10 with the same pieces taken (two routes, one
     * move). Merged mode keeps one route per (to, captured); keep mode
     * has the same set of triples. */
    eng_pos p = {0, sq(14, 15, 22, 23, 0), sq(10, 0), 0, ENG_BLACK};
    eng_movelist keep, merge;
    int nk = eng_generate(&p, &keep, ENG_DUPS_KEEP);
    int nm = eng_generate(&p, &merge, ENG_DUPS_MERGE);
    assert_true(nk > nm); /* the ring gives two routes for one capture */
    for (int i = 0; i < nm; i++)
        for (int j = i + 1; j < nm; j++)
            assert_false(merge.m[i].to == merge.m[j].to &&
                         merge.m[i].captured == merge.m[j].captured);
    for (int i = 0; i < nk; i++) {
        int found = 0;
        for (int j = 0; j < nm; j++)
            found |= keep.m[i].to == merge.m[j].to && keep.m[i].captured == merge.m[j].captured;
        assert_true(found);
    }
    assert_int_equal((uint64_t)nk, eng_count_moves(&p, ENG_DUPS_KEEP));
    assert_int_equal((uint64_t)nm, eng_count_moves(&p, ENG_DUPS_MERGE));
    /* The full ring: four pieces captured, back on the origin, and the
     * king is still there after the move (a toggle of origin and
     * destination would remove it). */
    int ring = 0;
    for (int i = 0; i < nk; i++)
        if (keep.m[i].captured == sq(14, 15, 22, 23, 0) && keep.m[i].to == 9) {
            eng_pos c;
            eng_make(&p, &keep.m[i], &c);
            assert_int_equal(c.bk, sq(10, 0));
            assert_int_equal(c.wm, 0);
            ring++;
        }
    assert_int_equal(ring, 2);
    /* The same for White. */
    eng_pos w = eng_flip(&p);
    eng_movelist wl;
    int nw = eng_generate(&w, &wl, ENG_DUPS_MERGE);
    int wring = 0;
    for (int i = 0; i < nw; i++)
        if (wl.m[i].from == wl.m[i].to) {
            eng_pos c;
            eng_make(&w, &wl.m[i], &c);
            assert_int_equal(c.wk, 1u << wl.m[i].from);
            assert_int_equal(c.bm | c.bk, 0);
            wring++;
        }
    assert_int_equal(wring, 1);
}

static void
test_no_flying_kings(void **state)
{
    (void)state;
    /* A lone black king on 1 has exactly two moves (1-5, 1-6), not the
     * long diagonal. */
    eng_pos p = {0, sq(32, 0), sq(1, 0), 0, ENG_BLACK};
    assert_int_equal(eng_count_moves(&p, ENG_DUPS_KEEP), 2);
    /* A king cannot jump a piece two squares away. */
    eng_pos q = {0, sq(10, 0), sq(1, 0), 0, ENG_BLACK};
    assert_false(eng_has_capture(&q));
}

static void
test_no_move_loses(void **state)
{
    (void)state;
    /* No pieces: no moves. A blocked man: no moves. */
    eng_pos p = {0, sq(20, 0), 0, 0, ENG_BLACK};
    assert_int_equal(eng_count_moves(&p, ENG_DUPS_KEEP), 0);
    eng_movelist l;
    assert_int_equal(eng_generate(&p, &l, ENG_DUPS_KEEP), 0);
    /* White man on 29 (a corner: its only step is 25) blocked by a
     * black man on 25, which it cannot jump because 22 is occupied. */
    eng_pos q = {sq(25, 22, 0), sq(29, 0), 0, 0, ENG_WHITE};
    assert_int_equal(eng_count_moves(&q, ENG_DUPS_KEEP), 0);
}

static void
test_validate(void **state)
{
    (void)state;
    char err[128];
    eng_pos p = {sq(30, 0), 0, 0, 0, ENG_BLACK};
    assert_int_equal(eng_validate(&p, err, sizeof err), ENG_EFEN);
    assert_non_null(strstr(err, "30"));
    eng_pos q = {sq(5, 0), sq(5, 0), 0, 0, ENG_BLACK};
    assert_int_equal(eng_validate(&q, err, sizeof err), ENG_EFEN);
    eng_pos r = {0, sq(2, 0), 0, 0, ENG_BLACK};
    assert_int_equal(eng_validate(&r, err, sizeof err), ENG_EFEN);
    eng_pos s;
    eng_start(&s);
    assert_int_equal(eng_validate(&s, err, sizeof err), 0);
    s.bk = sq(13, 0); /* 13 pieces */
    assert_int_equal(eng_validate(&s, err, sizeof err), ENG_EFEN);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_perft_start),
        cmocka_unit_test(test_perft_12),
        cmocka_unit_test(test_flip_symmetry),
        cmocka_unit_test(test_keys_differ),
        cmocka_unit_test(test_capture_compulsory),
        cmocka_unit_test(test_crowning_ends_capture),
        cmocka_unit_test(test_crowned_man_stops_even_if_king_could_continue),
        cmocka_unit_test(test_duplicate_king_routes),
        cmocka_unit_test(test_no_flying_kings),
        cmocka_unit_test(test_no_move_loses),
        cmocka_unit_test(test_validate),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
