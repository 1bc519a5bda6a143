/*
 * test_store_util.h - helpers the suites that handle proof-store records
 * share (test_prover_store.c, test_manager_protocol.c): written here
 * independently of prover/store.c, so that they check it. Include it
 * after <cmocka.h> (gen_positions asserts).
 */
#ifndef TESTS_TEST_STORE_UTIL_H
#define TESTS_TEST_STORE_UTIL_H

#include <stdint.h>
#include <stdlib.h>

#include "engine/engine.h"
#include "prover/store.h"

static inline uint64_t
rng_next(uint64_t *s)
{
    /* xorshift64*: small, seeded, the same on every machine. */
    *s ^= *s >> 12;
    *s ^= *s << 25;
    *s ^= *s >> 27;
    return *s * 2685821657736338717ull;
}

/*
 * want distinct positions (distinct up to the colour flip) met in seeded
 * random games from the start position, in the orientation play reached
 * them (so about half have White to move). need_moves: only positions
 * with a legal move.
 */
static inline eng_pos *
gen_positions(uint64_t seed, size_t want, int need_moves)
{
    size_t cap = 1;
    while (cap < 4 * want)
        cap <<= 1;
    eng_pos *out = malloc(want * sizeof *out);
    eng_pos *set = calloc(cap, sizeof *set);
    unsigned char *used = calloc(cap, 1);
    assert_non_null(out);
    assert_non_null(set);
    assert_non_null(used);
    uint64_t s = seed * 2 + 1;
    size_t n = 0;
    while (n < want) {
        eng_pos p;
        eng_start(&p);
        for (int ply = 0; ply < 150 && n < want; ply++) {
            eng_movelist l;
            int nm = eng_generate(&p, &l, ENG_DUPS_MERGE);
            if (!need_moves || nm > 0) {
                eng_pos c = eng_canonical(&p);
                size_t h = (size_t)eng_key(&p) & (cap - 1);
                while (used[h] && !eng_equal(&set[h], &c))
                    h = (h + 1) & (cap - 1);
                if (!used[h]) {
                    used[h] = 1;
                    set[h] = c;
                    out[n++] = p;
                }
            }
            if (nm <= 0)
                break;
            eng_make(&p, &l.m[rng_next(&s) % (uint64_t)nm], &p);
        }
    }
    free(set);
    free(used);
    return out;
}

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
