/*
 * test_store_util.h - helpers the suites that handle proof-store records
 * share (test_prover_store.c, test_manager_protocol.c): written here
 * independently of prover/store.c, so that they check it.
 */
#ifndef TESTS_TEST_STORE_UTIL_H
#define TESTS_TEST_STORE_UTIL_H

#include <stdint.h>

#include "prover/store.h"

/* The move on the rotated board (square i -> 31 - i). */
static inline pst_move
move_flip(pst_move m)
{
    if (m.from == PST_NOMOVE)
        return m;
    uint32_t c = 0;
    for (int i = 0; i < 32; i++)
        if (m.captured >> i & 1)
            c |= 1u << (31 - i);
    pst_move f = {(uint8_t)(31 - m.from), (uint8_t)(31 - m.to), c};
    return f;
}

static inline int
move_equal(const pst_move *a, const pst_move *b)
{
    if (a->from == PST_NOMOVE || b->from == PST_NOMOVE)
        return a->from == b->from;
    return a->from == b->from && a->to == b->to && a->captured == b->captured;
}

static inline int
rec_equal(const pst_record *a, const pst_record *b)
{
    return a->bound == b->bound && move_equal(&a->win, &b->win) && move_equal(&a->draw, &b->draw) &&
           a->effort == b->effort && a->length == b->length;
}

#endif /* TESTS_TEST_STORE_UTIL_H */
