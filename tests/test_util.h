/*
 * test_util.h - helpers the test suites share (header-only: each suite is
 * one program).
 */
#ifndef TESTS_TEST_UTIL_H
#define TESTS_TEST_UTIL_H

#include <stdio.h>
#include <stdlib.h>

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

#endif /* TESTS_TEST_UTIL_H */
