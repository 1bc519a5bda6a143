/*
 * test_errors.c - the one error space of errors/errors.h.
 *
 * WHAT IS CHECKED
 *   - the ranges: in order, disjoint, each CK_ERR_WIDTH codes wide and
 *     holding its module's codes from first to last;
 *   - every code of every range, first to last: defined (ck_err_defined),
 *     named by its module's strerror with a message that is not that
 *     module's "unknown" answer, the same message from ck_strerror, and
 *     ck_err_module naming the module;
 *   - the code after each module's last one is unknown to that module's
 *     strerror: a code added to an enum without a row here (and a case
 *     in ck_err_defined) fails this suite;
 *   - codes in no range (free ranges, positive codes, LMDB's) get
 *     "unknown error code" and no module;
 *   - the codes that clashed before issue 42: WEB_E* and MGP_E* apart,
 *     and the protocol, solve and alpha-beta codes named.
 * Two equal codes in different enums are a compile error of
 * errors/errors.c (ck_err_defined's switch), not a test here.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "errors/errors.h"
#include "manager/protocol.h"
#include "web/web.h"
#include "prover/prover.h"
#include "prover/search.h"
#include "prover/store.h"

/* A module's answer for a code it does not know contains "unknown" (each
 * strerror's default). */
static int
is_unknown(const char *msg)
{
    return msg == NULL || strstr(msg, "unknown") != NULL;
}

static void
test_ranges_disjoint(void **state)
{
    (void)state;
    size_t n;
    const ck_err_range *r = ck_err_ranges(&n);
    assert_true(n >= 11);
    for (size_t i = 0; i < n; i++) {
        assert_true(r[i].first < 0);
        assert_true(r[i].last <= r[i].first);
        assert_true(r[i].last > r[i].first - CK_ERR_WIDTH);
        /* a range starts on a multiple of 50, plus one: -101, -151, ... */
        assert_int_equal((-r[i].first - 1) % CK_ERR_WIDTH, 0);
        if (i > 0) /* descending and not overlapping the one before */
            assert_true(r[i].first <= r[i - 1].first - CK_ERR_WIDTH);
    }
}

static void
test_every_code_named(void **state)
{
    (void)state;
    size_t n;
    const ck_err_range *r = ck_err_ranges(&n);
    int codes = 0;
    for (size_t i = 0; i < n; i++) {
        for (int c = r[i].first; c >= r[i].last; c--) {
            const char *own = r[i].name(c);
            if (!ck_err_defined(c) || is_unknown(own))
                fail_msg("%s: code %d has no message (\"%s\")", r[i].module, c, own ? own : "NULL");
            assert_string_equal(ck_strerror(c), own);
            assert_string_equal(ck_err_module(c), r[i].module);
            codes++;
        }
        /* one past the last: not a code of the module */
        int next = r[i].last - 1;
        if (!is_unknown(r[i].name(next)) || ck_err_defined(next))
            fail_msg("%s: code %d is named (\"%s\") but not in errors.c's table", r[i].module, next,
                     r[i].name(next));
        /* and nothing else of the range is defined */
        for (int c = next; c > r[i].first - CK_ERR_WIDTH; c--)
            assert_false(ck_err_defined(c));
    }
    assert_int_equal(codes, 64); /* every code of the project's enums today */
}

static void
test_outside_ranges(void **state)
{
    (void)state;
    const int none[] = {1, 42, -1, -99, -100, -251, -300, -551, -600, -651, -700, -801, -30781};
    for (size_t i = 0; i < sizeof none / sizeof none[0]; i++) {
        assert_string_equal(ck_strerror(none[i]), "unknown error code");
        assert_null(ck_err_module(none[i]));
        assert_false(ck_err_defined(none[i]));
    }
    assert_string_equal(ck_strerror(0), "success");
    assert_null(ck_err_module(0));
}

static void
test_clashes_gone(void **state)
{
    (void)state;
    /* WEB_E* had the protocol's values: now each names its own module */
    assert_int_not_equal((int)WEB_EINVAL, (int)MGP_EAGAIN);
    assert_string_equal(ck_err_module(WEB_ENOTOKEN), "web server");
    assert_string_equal(ck_err_module(MGP_EFIELD), "wire protocol");
    assert_string_equal(ck_strerror(WEB_EBIND), web_strerror(WEB_EBIND));
    /* the codes that had no strerror */
    assert_string_equal(mgp_strerror(MGP_EFIELD), "a field out of range");
    assert_false(is_unknown(prv_strerror(PRV_ESOLVER)));
    assert_false(is_unknown(ab_strerror(AB_EDB)));
    /* what manager.c printed for a damaged PROOF record */
    assert_true(is_unknown(pst_strerror(MGP_EFIELD)));
    assert_false(is_unknown(ck_strerror(MGP_EFIELD)));
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ranges_disjoint),
        cmocka_unit_test(test_every_code_named),
        cmocka_unit_test(test_outside_ranges),
        cmocka_unit_test(test_clashes_gone),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
