/*
 * test_value.c - the value algebra of engine/value.h: bounds and seed
 * 000's build-time values.
 *
 * WHAT IS CHECKED
 *   - bounds: make/lo/hi round trips for all nine (lo, hi) pairs (three
 *     invalid), names, negation as (lo, hi) -> (-hi, -lo) and as an
 *     involution, max as the componentwise max (every pair), max
 *     commutative, associative (every triple) and idempotent with LL the
 *     identity and WW absorbing, contains / is_exact for every bound and
 *     outcome, and the paper's examples max(LT, TW) = TW, max(TT, LW) = TW.
 *   - seed 000's Table 2: every one of the 100 cells of eng_pval_max
 *     against a second transcription of the paper kept here as text (the
 *     rows exactly as printed), independent of value.c's table; then the
 *     properties the table has (symmetric, associative on all 1000
 *     triples, agrees with the componentwise max of the decided bounds
 *     with "u" kept unless the result is WW, LL the identity).
 *   - build-time negation: an involution, known values negate as bounds,
 *     decide(neg(v)) == neg(decide(v)), and the Figure 4 step
 *     max(neg(uTW)) = uLT; completed and decide as the paper defines them.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "engine/value.h"

/* ---- static data -------------------------------------------------------- */

/* Seed 000, Table 2, as printed (header row, then one row per value). */
/* clang-format off */
static const char *const paper_header = "WW TT LL TW LT LW uLW uTW uTT uLT";
static const char *const paper_rows[10] = {
    "WW WW WW WW WW WW WW WW WW WW WW",
    "TT WW TT TT TW TT TW uTW uTW uTT uTT",
    "LL WW TT LL TW LT LW uLW uTW uTT uLT",
    "TW WW TW TW TW TW TW uTW uTW uTW uTW",
    "LT WW TT LT TW LT LW uLW uTW uTT uLT",
    "LW WW TW LW TW LW LW uLW uTW uTW uLW",
    "uLW WW uTW uLW uTW uLW uLW uLW uTW uTW uLW",
    "uTW WW uTW uTW uTW uTW uTW uTW uTW uTW uTW",
    "uTT WW uTT uTT uTW uTT uTW uTW uTW uTT uTT",
    "uLT WW uTT uLT uTW uLT uLW uLW uTW uTT uLT",
};
/* clang-format on */

/* ---- helpers ------------------------------------------------------------ */

/* The build-time value named by the paper's spelling, or -1. */
static int
pval_by_name(const char *s)
{
    for (int v = 0; v < ENG_NPVALS; v++)
        if (strcmp(eng_pval_name((eng_pval)v), s) == 0)
            return v;
    return -1;
}

/* Splits a row into at most n space-separated words. */
static int
split(const char *row, char words[][8], int n)
{
    int k = 0;
    const char *p = row;
    while (*p && k < n) {
        while (*p == ' ')
            p++;
        int len = 0;
        while (p[len] && p[len] != ' ')
            len++;
        if (len == 0)
            break;
        assert_true(len < 8);
        memcpy(words[k], p, (size_t)len);
        words[k][len] = '\0';
        k++;
        p += len;
    }
    return k;
}

/* ---- bounds ------------------------------------------------------------- */

static void
test_bound_make(void **state)
{
    (void)state;
    static const struct {
        int lo, hi;
        eng_bound b;
        const char *name;
    } want[] = {
        {ENG_LOSS, ENG_LOSS, ENG_LL, "LL"}, {ENG_LOSS, ENG_DRAW, ENG_LD, "LD"},
        {ENG_DRAW, ENG_DRAW, ENG_DD, "DD"}, {ENG_DRAW, ENG_WIN, ENG_DW, "DW"},
        {ENG_WIN, ENG_WIN, ENG_WW, "WW"},   {ENG_LOSS, ENG_WIN, ENG_LW, "LW"},
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        eng_bound b = eng_bound_make(want[i].lo, want[i].hi);
        assert_int_equal(b, want[i].b);
        assert_int_equal(eng_bound_lo(b), want[i].lo);
        assert_int_equal(eng_bound_hi(b), want[i].hi);
        assert_string_equal(eng_bound_name(b), want[i].name);
        assert_true(eng_bound_valid(b));
    }
    /* The codes are stored in files: they must not move. */
    assert_int_equal(ENG_LL, 0);
    assert_int_equal(ENG_LD, 1);
    assert_int_equal(ENG_DD, 2);
    assert_int_equal(ENG_DW, 3);
    assert_int_equal(ENG_WW, 4);
    assert_int_equal(ENG_LW, 5);
    assert_int_equal(eng_bound_make(ENG_DRAW, ENG_LOSS), ENG_BOUND_INVALID);
    assert_int_equal(eng_bound_make(ENG_WIN, ENG_LOSS), ENG_BOUND_INVALID);
    assert_int_equal(eng_bound_make(ENG_WIN, ENG_DRAW), ENG_BOUND_INVALID);
    assert_int_equal(eng_bound_make(-2, 0), ENG_BOUND_INVALID);
    assert_int_equal(eng_bound_make(0, 2), ENG_BOUND_INVALID);
    assert_int_equal(eng_bound_exact(ENG_WIN), ENG_WW);
    assert_int_equal(eng_bound_exact(ENG_DRAW), ENG_DD);
    assert_int_equal(eng_bound_exact(ENG_LOSS), ENG_LL);
    assert_int_equal(eng_bound_exact(3), ENG_BOUND_INVALID);
    assert_false(eng_bound_valid(6));
    assert_false(eng_bound_valid(-1));
    assert_string_equal(eng_bound_name(ENG_BOUND_INVALID), "??");
}

static void
test_bound_neg(void **state)
{
    (void)state;
    for (eng_bound b = 0; b < ENG_NBOUNDS; b++) {
        eng_bound n = eng_bound_neg(b);
        assert_int_equal(eng_bound_lo(n), -eng_bound_hi(b));
        assert_int_equal(eng_bound_hi(n), -eng_bound_lo(b));
        assert_int_equal(eng_bound_neg(n), b);
        assert_int_equal(eng_bound_is_exact(n), eng_bound_is_exact(b));
    }
    assert_int_equal(eng_bound_neg(ENG_LL), ENG_WW);
    assert_int_equal(eng_bound_neg(ENG_LD), ENG_DW);
    assert_int_equal(eng_bound_neg(ENG_DD), ENG_DD);
    assert_int_equal(eng_bound_neg(ENG_LW), ENG_LW);
}

static void
test_bound_max(void **state)
{
    (void)state;
    for (eng_bound a = 0; a < ENG_NBOUNDS; a++) {
        assert_int_equal(eng_bound_max(a, a), a);
        assert_int_equal(eng_bound_max(a, ENG_LL), a);
        assert_int_equal(eng_bound_max(ENG_WW, a), ENG_WW);
        for (eng_bound b = 0; b < ENG_NBOUNDS; b++) {
            eng_bound m = eng_bound_max(a, b);
            int lo = eng_bound_lo(a) > eng_bound_lo(b) ? eng_bound_lo(a) : eng_bound_lo(b);
            int hi = eng_bound_hi(a) > eng_bound_hi(b) ? eng_bound_hi(a) : eng_bound_hi(b);
            assert_int_equal(eng_bound_lo(m), lo);
            assert_int_equal(eng_bound_hi(m), hi);
            assert_int_equal(m, eng_bound_max(b, a));
            for (eng_bound c = 0; c < ENG_NBOUNDS; c++)
                assert_int_equal(eng_bound_max(m, c), eng_bound_max(a, eng_bound_max(b, c)));
        }
    }
    /* Seed 000, section 2.2. */
    assert_int_equal(eng_bound_max(ENG_LD, ENG_DW), ENG_DW);
    assert_int_equal(eng_bound_max(ENG_DD, ENG_LW), ENG_DW);
}

/* The intersection: exactly the outcomes both bounds contain, or none. */
static void
test_bound_meet(void **state)
{
    (void)state;
    for (eng_bound a = 0; a < ENG_NBOUNDS; a++) {
        assert_int_equal(eng_bound_meet(a, ENG_LW), a); /* LW says nothing */
        for (eng_bound b = 0; b < ENG_NBOUNDS; b++) {
            eng_bound m = eng_bound_meet(a, b);
            assert_int_equal(m, eng_bound_meet(b, a));
            int any = 0;
            for (int v = ENG_LOSS; v <= ENG_WIN; v++) {
                int both = eng_bound_contains(a, v) && eng_bound_contains(b, v);
                any |= both;
                if (m != ENG_BOUND_INVALID)
                    assert_int_equal(eng_bound_contains(m, v), both);
            }
            assert_int_equal(m == ENG_BOUND_INVALID, !any);
        }
    }
    assert_int_equal(eng_bound_meet(ENG_LD, ENG_DW), ENG_DD);
    assert_int_equal(eng_bound_meet(ENG_LL, ENG_DW), ENG_BOUND_INVALID);
}

static void
test_bound_contains(void **state)
{
    (void)state;
    static const struct {
        eng_bound b;
        int loss, draw, win;
    } want[] = {{ENG_LL, 1, 0, 0}, {ENG_LD, 1, 1, 0}, {ENG_DD, 0, 1, 0},
                {ENG_DW, 0, 1, 1}, {ENG_WW, 0, 0, 1}, {ENG_LW, 1, 1, 1}};
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        assert_int_equal(!!eng_bound_contains(want[i].b, ENG_LOSS), want[i].loss);
        assert_int_equal(!!eng_bound_contains(want[i].b, ENG_DRAW), want[i].draw);
        assert_int_equal(!!eng_bound_contains(want[i].b, ENG_WIN), want[i].win);
        assert_int_equal(!!eng_bound_is_exact(want[i].b),
                         want[i].loss + want[i].draw + want[i].win == 1);
    }
    assert_false(eng_bound_contains(ENG_LW, 2));
    assert_false(eng_bound_contains(ENG_BOUND_INVALID, ENG_DRAW));
    assert_false(eng_bound_is_exact(ENG_BOUND_INVALID));
}

/* ---- seed 000's build-time values --------------------------------------- */

static void
test_table2_cells(void **state)
{
    (void)state;
    char head[10][8];
    assert_int_equal(split(paper_header, head, 10), 10);
    for (int c = 0; c < 10; c++)
        assert_int_equal(pval_by_name(head[c]), c); /* enum order = paper order */
    int cells = 0;
    for (int r = 0; r < 10; r++) {
        char w[11][8];
        assert_int_equal(split(paper_rows[r], w, 11), 11);
        int row = pval_by_name(w[0]);
        assert_int_equal(row, r);
        for (int c = 0; c < 10; c++) {
            int want = pval_by_name(w[c + 1]);
            assert_true(want >= 0);
            int got = eng_pval_max((eng_pval)row, (eng_pval)pval_by_name(head[c]));
            if (got != want)
                printf("Table 2 cell max(%s, %s): got %s, paper %s\n", w[0], head[c],
                       eng_pval_name((eng_pval)got), w[c + 1]);
            assert_int_equal(got, want);
            cells++;
        }
    }
    assert_int_equal(cells, 100);
}

/* What Table 2 turns out to be: componentwise max of the decided bounds,
 * unknown when either argument is, except that a win is a win. */
static void
test_table2_structure(void **state)
{
    (void)state;
    for (eng_pval a = 0; a < ENG_NPVALS; a++) {
        assert_int_equal(eng_pval_max(a, ENG_PV_LL), a); /* LL is the identity */
        assert_int_equal(eng_pval_max(a, a), a);
        for (eng_pval b = 0; b < ENG_NPVALS; b++) {
            eng_pval m = eng_pval_max(a, b);
            assert_int_equal(m, eng_pval_max(b, a));
            eng_bound db = eng_bound_max(eng_pval_decide(a), eng_pval_decide(b));
            assert_int_equal(eng_pval_decide(m), db);
            int unknown = !eng_pval_completed(a) || !eng_pval_completed(b);
            if (db == ENG_WW)
                assert_int_equal(m, ENG_PV_WW);
            else
                assert_int_equal(!eng_pval_completed(m), unknown);
            for (eng_pval c = 0; c < ENG_NPVALS; c++)
                assert_int_equal(eng_pval_max(m, c), eng_pval_max(a, eng_pval_max(b, c)));
        }
    }
}

static void
test_pval_neg_decide(void **state)
{
    (void)state;
    static const char *const want_neg[ENG_NPVALS][2] = {
        {"WW", "LL"}, {"TT", "TT"},   {"LL", "WW"},   {"TW", "LT"},   {"LT", "TW"},
        {"LW", "LW"}, {"uLW", "uLW"}, {"uTW", "uLT"}, {"uTT", "uTT"}, {"uLT", "uTW"},
    };
    static const char *const want_decide[ENG_NPVALS] = {"WW", "DD", "LL", "DW", "LD",
                                                        "LW", "LW", "DW", "DD", "LD"};
    for (eng_pval v = 0; v < ENG_NPVALS; v++) {
        assert_string_equal(eng_pval_name(v), want_neg[v][0]);
        assert_string_equal(eng_pval_name(eng_pval_neg(v)), want_neg[v][1]);
        assert_int_equal(eng_pval_neg(eng_pval_neg(v)), v);
        assert_string_equal(eng_bound_name(eng_pval_decide(v)), want_decide[v]);
        assert_int_equal(eng_pval_decide(eng_pval_neg(v)), eng_bound_neg(eng_pval_decide(v)));
        /* completed: WW, TT, LL, LW, TW, LT (seed 000, section 2.3). */
        assert_int_equal(!!eng_pval_completed(v), v <= ENG_PV_LW);
    }
    for (eng_bound b = 0; b < ENG_NBOUNDS; b++) {
        eng_pval p = eng_pval_of_bound(b);
        assert_true(eng_pval_completed(p));
        assert_int_equal(eng_pval_decide(p), b);
        assert_int_equal(eng_pval_neg(p), eng_pval_of_bound(eng_bound_neg(b)));
    }
    /* Figure 4: the cycle node next to an LW exit becomes uTW, its parent
     * (whose only move leads to it) uLT; the node with children uLT and LW
     * becomes uLW. */
    eng_pval n = eng_pval_max(eng_pval_neg(ENG_PV_UTT), eng_pval_neg(ENG_PV_LW));
    assert_int_equal(n, ENG_PV_UTW);
    assert_int_equal(eng_pval_neg(n), ENG_PV_ULT);
    assert_int_equal(eng_pval_max(ENG_PV_ULT, ENG_PV_LW), ENG_PV_ULW);
    assert_string_equal(eng_pval_name(ENG_NPVALS), "??");
}

/*
 * The question algebra (eng_question_answer, eng_question_bound) against
 * its definition, computed here from eng_bound_contains alone: a bound
 * answers "does X reach the target" yes when every value it allows, seen
 * from X, reaches the target; no when none does; else it leaves it open.
 * And the bound an answer proves is the weakest that gives that answer.
 */
static void
test_question_algebra(void **state)
{
    (void)state;
    int checked = 0;
    for (int b = 0; b < ENG_NBOUNDS; b++)
        for (int stm = 0; stm < 2; stm++)
            for (int att = 0; att < 2; att++)
                for (int t = 0; t < 2; t++) {
                    eng_question q = {att, t ? ENG_WIN : ENG_DRAW};
                    int all = 1, none = 1;
                    for (int v = ENG_LOSS; v <= ENG_WIN; v++) {
                        if (!eng_bound_contains((eng_bound)b, v))
                            continue;
                        int vx = stm == att ? v : -v; /* the value for X */
                        if (vx >= q.target)
                            none = 0;
                        else
                            all = 0;
                    }
                    int want = all ? 1 : none ? -1 : 0;
                    assert_int_equal(eng_question_answer(&q, stm, (eng_bound)b), want);
                    checked++;
                }
    assert_int_equal(checked, ENG_NBOUNDS * 8);
    for (int stm = 0; stm < 2; stm++)
        for (int att = 0; att < 2; att++)
            for (int t = 0; t < 2; t++)
                for (int yes = 0; yes < 2; yes++) {
                    eng_question q = {att, t ? ENG_WIN : ENG_DRAW};
                    eng_bound pb = eng_question_bound(&q, stm, yes);
                    /* it gives the answer, and every bound that gives the
                     * answer is inside it */
                    assert_int_equal(eng_question_answer(&q, stm, pb), yes ? 1 : -1);
                    for (int b = 0; b < ENG_NBOUNDS; b++)
                        if (eng_question_answer(&q, stm, (eng_bound)b) == (yes ? 1 : -1))
                            assert_int_equal(eng_bound_meet((eng_bound)b, pb), b);
                }
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bound_make),       cmocka_unit_test(test_bound_neg),
        cmocka_unit_test(test_bound_max),        cmocka_unit_test(test_bound_meet),
        cmocka_unit_test(test_bound_contains),   cmocka_unit_test(test_table2_cells),
        cmocka_unit_test(test_table2_structure), cmocka_unit_test(test_pval_neg_decide),
        cmocka_unit_test(test_question_algebra),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
