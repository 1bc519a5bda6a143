/*
 * test_util.h - helpers the test suites share (header-only: each suite is
 * one program).
 */
#ifndef TESTS_TEST_UTIL_H
#define TESTS_TEST_UTIL_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "engine/engine.h"

/*
 * Whether the suite runs under the sanitizers (`make test-san` sets
 * CHECKERS_SANITIZED): the slowest exhaustive checks are then thinned out.
 */
static inline int
test_sanitized(void)
{
    return getenv("CHECKERS_SANITIZED") != NULL;
}

/*
 * test_tmpdir - creates a fresh directory "<TMPDIR or /tmp>/<name>.<6 random
 * characters>" (mkdtemp fills in the last six) and writes its path to out.
 * RETURN out, or NULL when it cannot be made (out then holds the attempted
 * template, for the message).
 */
static inline char *
test_tmpdir(char *out, size_t outlen, const char *name)
{
    const char *tmp = getenv("TMPDIR");
    snprintf(out, outlen, "%s/%s.XXXXXX", tmp && *tmp ? tmp : "/tmp", name);
    return mkdtemp(out);
}

/*
 * test_db_dir - the directory of the 1-5 piece databases the solver suites
 * share: $CHECKERS_TEST_DB, which `make test-unit` / `make test-san` set
 * after building it (`make testdata`). NULL, with a message, when unset.
 */
static inline const char *
test_db_dir(void)
{
    const char *d = getenv("CHECKERS_TEST_DB");
    if (!d || !*d) {
        fprintf(stderr, "CHECKERS_TEST_DB is not set: run the suite through "
                        "`make test-unit` (which builds the 1-5 piece databases)\n");
        return NULL;
    }
    return d;
}

/* xorshift64: the suites' reproducible random numbers (*s nonzero). */
static inline uint64_t
test_rnd(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

/* A random valid position with n >= 2 pieces, both sides represented, a
 * third of them kings (men on their promotion row become kings). */
static inline eng_pos
test_random_pos(uint64_t *s, int n)
{
    for (;;) {
        eng_pos p = {0, 0, 0, 0, (int)(test_rnd(s) & 1)};
        uint32_t occ = 0;
        int nb = 1 + (int)(test_rnd(s) % (uint64_t)(n - 1));
        for (int i = 0; i < n; i++) {
            int sq;
            do
                sq = (int)(test_rnd(s) % 32);
            while (occ >> sq & 1);
            occ |= 1u << sq;
            int black = i < nb, king = (test_rnd(s) % 3) == 0;
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

#endif /* TESTS_TEST_UTIL_H */
