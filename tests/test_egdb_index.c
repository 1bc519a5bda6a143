/*
 * test_egdb_index.c - the egdb index layer (egdb/index.h).
 *
 * What is checked, and against what:
 *   - every published position count (seed 002 Table 4: 1..10 pieces by
 *     split and in total; Table 1: the 21 rows of 5 vs 5 and their
 *     slice counts; Table 2: the largest 10-piece slices by name);
 *   - egix_size against a brute-force enumeration of every placement of
 *     up to 4 pieces that computes slices with its own code;
 *   - index/unindex round trips over every index of every slice of up to
 *     4 pieces, and over 100,000 seeded-random positions of 5..8 pieces;
 *   - the offset tables against the row-counting egix_size for every
 *     slice of 5..8 pieces and of the 5-vs-5 database;
 *   - the build order of egix_slices against real moves: no non-capture
 *     move leads to a slice listed later;
 *   - egix_twin against eng_flip, slice names, error codes.
 * Under CHECKERS_SANITIZED the exhaustive loops are thinned out; the
 * published counts are always checked.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "egdb/index.h"
#include "engine/engine.h"
#include "tests/test_util.h"

/* ---- constants -------------------------------------------------------- */

/* Slice keys: counts 0..12 in base 13, ranks -1..6 in base 8. */
#define NKEYS (13 * 13 * 13 * 13 * 8 * 8)

/* ---- helpers ------------------------------------------------------------ */

static size_t
slice_key(const egix_slice *s)
{
    return (
        (((((size_t)s->nbk * 13 + (size_t)s->nwk) * 13 + (size_t)s->nbm) * 13 + (size_t)s->nwm) *
             8 +
         (size_t)(s->rb + 1)) *
            8 +
        (size_t)(s->rw + 1));
}

static int
popc(uint32_t x)
{
    return __builtin_popcount(x);
}

static int
npieces_of(const eng_pos *p)
{
    return popc(p->bm | p->wm | p->bk | p->wk);
}

/* splitmix64: a small seeded generator, the same sequence everywhere. */
static uint64_t
rng_next(uint64_t *state)
{
    uint64_t z = (*state += 0x9E3779B97F4A7C15ull);

    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static unsigned
rng_below(uint64_t *state, unsigned n)
{
    return (unsigned)(rng_next(state) % n);
}

/* Tables built on demand and kept for the whole test, by slice key. */
typedef struct table_cache {
    egix_table **t;
} table_cache;

static void
cache_init(table_cache *c)
{
    c->t = calloc(NKEYS, sizeof *c->t);
    assert_non_null(c->t);
}

static void
cache_free(table_cache *c)
{
    for (size_t i = 0; i < NKEYS; i++)
        egix_table_destroy(c->t[i]);
    free(c->t);
}

static const egix_table *
cache_get(table_cache *c, const egix_slice *s)
{
    size_t k = slice_key(s);

    if (c->t[k] == NULL)
        assert_int_equal(egix_table_create(s, &c->t[k]), 0);
    return c->t[k];
}

/*
 * The pair number of every slice of n pieces, by key (-1: not listed).
 * Also checks the structure of the list itself.
 */
static int *
pair_map(int n, egix_slice **list_out, size_t *count_out)
{
    size_t count = 0;
    egix_slice *list;
    int *pair, *map;

    assert_int_equal(egix_slices(n, NULL, NULL, 0, &count), 0);
    assert_true(count > 0);
    list = malloc(count * sizeof *list);
    pair = malloc(count * sizeof *pair);
    map = malloc(NKEYS * sizeof *map);
    assert_non_null(list);
    assert_non_null(pair);
    assert_non_null(map);
    for (size_t i = 0; i < NKEYS; i++)
        map[i] = -1;
    assert_int_equal(egix_slices(n, list, pair, count, &count), 0);
    for (size_t i = 0; i < count; i++) {
        assert_int_equal(map[slice_key(&list[i])], -1); /* listed once */
        map[slice_key(&list[i])] = pair[i];
    }
    if (list_out != NULL)
        *list_out = list;
    else
        free(list);
    *count_out = count;
    free(pair);
    return map;
}

/* ---- published counts ------------------------------------------------- */

/* Seed 002 Table 4 (reference/position-counts.md): split rows. */
static const struct {
    int n, a, b;
    uint64_t count;
} split_counts[] = {
    {1, 1, 0, 120ull},         {2, 2, 0, 3484ull},         {2, 1, 1, 3488ull},
    {3, 3, 0, 65192ull},       {3, 2, 1, 196032ull},       {4, 4, 0, 883458ull},
    {4, 3, 1, 3546384ull},     {4, 2, 2, 2662932ull},      {5, 5, 0, 9237424ull},
    {5, 4, 1, 46409320ull},    {5, 3, 2, 93041488ull},     {6, 6, 0, 77526288ull},
    {6, 5, 1, 467999856ull},   {6, 4, 2, 1174279692ull},   {6, 3, 3, 783806128ull},
    {7, 7, 0, 536417856ull},   {7, 6, 1, 3782903904ull},   {7, 5, 2, 11404950960ull},
    {7, 4, 3, 19055258760ull}, {8, 8, 0, 3118957920ull},   {8, 7, 1, 25172147520ull},
    {8, 6, 2, 88657111920ull}, {8, 5, 3, 177982456720ull}, {8, 4, 4, 111378534401ull},
};

/* Totals by number of pieces, 1..10. */
static const uint64_t total_counts[11] = {
    0,
    120ull,
    6972ull,
    261224ull,
    7092774ull,
    148688232ull,
    2503611964ull,
    34779531480ull,
    406309208481ull,
    4048627642976ull,
    34778882769216ull,
};
#define TOTAL_1_TO_10 39271258813439ull

/* Seed 002 Table 1: 5 vs 5 by kings and men, with the slice counts. */
static const struct {
    int bk, wk, bm, wm;
    uint64_t count;
    int slices;
} five_five[] = {
    {5, 5, 0, 0, 16257084480ull, 1},    {5, 4, 0, 1, 142249489200ull, 7},
    {5, 3, 0, 2, 247789432800ull, 7},   {5, 2, 0, 3, 214750841760ull, 7},
    {5, 1, 0, 4, 92565018000ull, 7},    {5, 0, 0, 5, 15868288800ull, 6},
    {4, 4, 1, 1, 311375610000ull, 28},  {4, 3, 1, 2, 1085553705600ull, 49},
    {4, 2, 1, 3, 941518468800ull, 49},  {4, 1, 1, 4, 406152630000ull, 49},
    {4, 0, 1, 5, 69686136000ull, 42},   {3, 3, 2, 2, 946853107200ull, 28},
    {3, 2, 2, 3, 1643753217600ull, 49}, {3, 1, 2, 4, 709688460000ull, 49},
    {3, 0, 2, 5, 121877184000ull, 42},  {2, 2, 3, 3, 714003388800ull, 28},
    {2, 1, 3, 4, 617101500000ull, 49},  {2, 0, 3, 5, 106080312960ull, 42},
    {1, 1, 4, 4, 133467390552ull, 28},  {1, 0, 4, 5, 45934129104ull, 42},
    {0, 0, 5, 5, 3956576472ull, 21},
};
#define FIVE_FIVE_TOTAL 8586481972128ull
#define FIVE_FIVE_SLICES 630

/* Seed 002 Table 2: the largest 10-piece slices (name, size). */
static const struct {
    const char *name;
    uint64_t size;
} big_slices[] = {
    {"3223.77", 85515674400ull}, {"2332.77", 85515674400ull}, {"2233.76", 73228209600ull},
    {"2233.67", 73228209600ull}, {"3223.67", 71823866400ull}, {"2332.76", 71823866400ull},
    {"3223.76", 59656240800ull}, {"2332.67", 59656240800ull}, {"3322.76", 58741300800ull},
    {"3322.67", 58741300800ull}, {"3223.57", 58132058400ull}, {"2332.75", 58132058400ull},
    {"2134.77", 56491266000ull}, {"1243.77", 56491266000ull}, {"2233.77", 104558625600ull},
    {"3223.66", 50304477600ull}, {"2332.66", 50304477600ull},
};

/* Each "a-b" row of Table 4, 1..8 pieces, exactly. */
static void
test_published_splits(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof split_counts / sizeof split_counts[0]; i++) {
        uint64_t n = 0;

        assert_int_equal(egix_count(split_counts[i].n, split_counts[i].a, split_counts[i].b, &n),
                         0);
        if (n != split_counts[i].count)
            print_error("%d-%d: %llu, published %llu\n", split_counts[i].a, split_counts[i].b,
                        (unsigned long long)n, (unsigned long long)split_counts[i].count);
        assert_true(n == split_counts[i].count);
    }
}

/* The totals by number of pieces, 1..10, and their sum; the rows of a
 * piece count must add up to its total. */
static void
test_published_totals(void **state)
{
    uint64_t sum = 0;

    (void)state;
    for (int n = 1; n <= 10; n++) {
        uint64_t c = 0, bysplit = 0;

        assert_int_equal(egix_count(n, -1, -1, &c), 0);
        assert_true(c == total_counts[n]);
        /* The unordered splits add up to the total. */
        for (int a = n; 2 * a >= n; a--) {
            uint64_t x;

            if (a > EGIX_MAX_SIDE)
                continue;
            assert_int_equal(egix_count(n, a, n - a, &x), 0);
            bysplit += x;
        }
        assert_true(bysplit == c);
        sum += c;
    }
    assert_true(sum == TOTAL_1_TO_10);
}

/* Table 1: each 5-vs-5 row is a material plus its colour-swapped twin;
 * its "slices" column is the number of slice pairs we list for it. */
static void
test_published_five_five(void **state)
{
    uint64_t total = 0, c55 = 0;
    size_t count;
    egix_slice *list;
    int *map = pair_map(10, &list, &count);
    int npairs = 0;

    (void)state;
    for (size_t i = 0; i < sizeof five_five / sizeof five_five[0]; i++) {
        uint64_t a, b = 0;
        int same = five_five[i].bk == five_five[i].wk && five_five[i].bm == five_five[i].wm;
        int pairs_seen = 0, last = -1;

        assert_int_equal(egix_material_size(five_five[i].bk, five_five[i].wk, five_five[i].bm,
                                            five_five[i].wm, &a),
                         0);
        if (!same)
            assert_int_equal(egix_material_size(five_five[i].wk, five_five[i].bk, five_five[i].wm,
                                                five_five[i].bm, &b),
                             0);
        /* The twin has the same number of positions (eng_flip). */
        if (!same)
            assert_true(a == b);
        if (a + b != five_five[i].count)
            print_error("%d%d%d%d: %llu, published %llu\n", five_five[i].bk, five_five[i].wk,
                        five_five[i].bm, five_five[i].wm, (unsigned long long)(a + b),
                        (unsigned long long)five_five[i].count);
        assert_true(a + b == five_five[i].count);
        total += a + b;

        /* The slice counts of Table 1 are our pairs of the material. */
        for (size_t j = 0; j < count; j++) {
            const egix_slice *s = &list[j];
            int mine = (s->nbk == five_five[i].bk && s->nwk == five_five[i].wk &&
                        s->nbm == five_five[i].bm && s->nwm == five_five[i].wm);
            int twin = (s->nbk == five_five[i].wk && s->nwk == five_five[i].bk &&
                        s->nbm == five_five[i].wm && s->nwm == five_five[i].bm);

            if ((mine || twin) && map[slice_key(s)] != last) {
                last = map[slice_key(s)];
                pairs_seen++;
            }
        }
        assert_int_equal(pairs_seen, five_five[i].slices);
        npairs += pairs_seen;
    }
    assert_true(total == FIVE_FIVE_TOTAL);
    assert_int_equal(npairs, FIVE_FIVE_SLICES);
    assert_int_equal(egix_count(10, 5, 5, &c55), 0);
    assert_true(c55 == FIVE_FIVE_TOTAL);
    free(list);
    free(map);
}

/* Table 2: single slices by the paper's own names. They pin down the
 * naming (rank = row + 1) and the leading-rank definition of both
 * colours, since the twins must agree. */
static void
test_published_big_slices(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof big_slices / sizeof big_slices[0]; i++) {
        egix_slice s;
        uint64_t n = 0;
        char name[EGIX_NAME_MAX];

        assert_int_equal(egix_slice_parse(big_slices[i].name, &s), 0);
        assert_int_equal(egix_size(&s, &n), 0);
        assert_true(n == big_slices[i].size);
        assert_int_equal(egix_slice_name(&s, name, sizeof name), 0);
        assert_string_equal(name, big_slices[i].name);
    }
}

/* ---- brute force ------------------------------------------------------- */

/* The slice of a placement, computed square by square (no egix code). */
static egix_slice
slow_slice(uint32_t bm, uint32_t wm, uint32_t bk, uint32_t wk)
{
    egix_slice s = {0, 0, 0, 0, -1, -1};

    for (int sq = 0; sq < 32; sq++) {
        int row = sq / 4;

        if (bk >> sq & 1)
            s.nbk++;
        if (wk >> sq & 1)
            s.nwk++;
        if (bm >> sq & 1) {
            s.nbm++;
            if (row > s.rb)
                s.rb = (int8_t)row;
        }
        if (wm >> sq & 1) {
            s.nwm++;
            if (7 - row > s.rw)
                s.rw = (int8_t)(7 - row);
        }
    }
    return s;
}

/* Every k-subset of the squares in `allowed`, as masks, into out[]. */
static size_t
subsets(int k, uint32_t allowed, uint32_t *out)
{
    size_t n = 0;

    /* Gosper over 32 bits in 64-bit arithmetic, filtered by allowed. */
    if (k == 0) {
        out[0] = 0;
        return 1;
    }
    for (uint64_t v = (1ull << k) - 1; v < (1ull << 32);) {
        uint64_t t = v | (v - 1);

        if (((uint32_t)v & ~allowed) == 0)
            out[n++] = (uint32_t)v;
        v = (t + 1) | (((~t & (0 - ~t)) - 1) >> (__builtin_ctzll(v) + 1));
    }
    return n;
}

/*
 * Every placement of 1..4 pieces, enumerated material by material as
 * plain square sets, tallied by slice_key(slow_slice()). Each listed
 * slice must hold exactly egix_size placements, and the listed slices
 * together must hold all of them (so no non-empty slice is missing).
 */
static void
test_brute_force_small(void **state)
{
    uint64_t *counts = calloc(NKEYS, sizeof *counts);
    uint32_t *sets[4];
    size_t nsets[4];
    static const uint32_t men_b = 0x0FFFFFFFu, men_w = 0xFFFFFFF0u;

    (void)state;
    assert_non_null(counts);
    for (int i = 0; i < 4; i++) {
        sets[i] = malloc(36000 * sizeof *sets[i]);
        assert_non_null(sets[i]);
    }

    for (int n = 1; n <= 4; n++) {
        uint64_t placed = 0, listed = 0, total;
        size_t nlist;
        egix_slice *list;
        int *map = pair_map(n, &list, &nlist);

        /* Every material of n pieces, every placement of it. */
        for (int bk = 0; bk <= n; bk++)
            for (int wk = 0; bk + wk <= n; wk++)
                for (int bm = 0; bk + wk + bm <= n; bm++) {
                    int wm = n - bk - wk - bm;

                    nsets[0] = subsets(bm, men_b, sets[0]);
                    nsets[1] = subsets(wm, men_w, sets[1]);
                    nsets[2] = subsets(bk, 0xFFFFFFFFu, sets[2]);
                    nsets[3] = subsets(wk, 0xFFFFFFFFu, sets[3]);
                    for (size_t a = 0; a < nsets[0]; a++)
                        for (size_t b = 0; b < nsets[1]; b++) {
                            uint32_t m = sets[0][a] | sets[1][b];

                            if (sets[0][a] & sets[1][b])
                                continue;
                            for (size_t c = 0; c < nsets[2]; c++) {
                                if (m & sets[2][c])
                                    continue;
                                for (size_t d = 0; d < nsets[3]; d++) {
                                    egix_slice s;

                                    if ((m | sets[2][c]) & sets[3][d])
                                        continue;
                                    s = slow_slice(sets[0][a], sets[1][b], sets[2][c], sets[3][d]);
                                    counts[slice_key(&s)]++;
                                    placed++;
                                }
                            }
                        }
                }

        /* Each listed slice has exactly the brute-force count... */
        for (size_t i = 0; i < nlist; i++) {
            uint64_t size;

            assert_int_equal(egix_size(&list[i], &size), 0);
            assert_true(size == counts[slice_key(&list[i])]);
            listed += size;
        }
        /* ...and together they hold every placement. */
        assert_true(listed == placed);
        assert_int_equal(egix_count(n, -1, -1, &total), 0);
        assert_true(total == placed);
        free(list);
        free(map);
    }
    for (int i = 0; i < 4; i++)
        free(sets[i]);
    free(counts);
}

/* ---- round trips ------------------------------------------------------- */

/*
 * All non-capture moves of p (Black to move, in pair `pair` of the
 * n-piece list) must lead to a slice whose pair is listed no later.
 */
static void
check_moves_ordered(const eng_pos *p, int n, int pair, const int *map)
{
    eng_movelist list;
    int nm = eng_generate(p, &list, ENG_DUPS_MERGE);

    assert_true(nm >= 0);
    for (int i = 0; i < nm; i++) {
        eng_pos q, twin;
        egix_slice s;

        if (list.m[i].captured != 0)
            continue; /* fewer pieces: an earlier database */
        eng_make(p, &list.m[i], &q);
        assert_int_equal(npieces_of(&q), n);
        twin = eng_canonical(&q);
        assert_int_equal(twin.stm, ENG_BLACK);
        assert_int_equal(egix_slice_of(&twin, &s), 0);
        assert_true(map[slice_key(&s)] >= 0);
        assert_true(map[slice_key(&s)] <= pair);
    }
}

/* A position out of unindex must be a legal placement of slice s. */
static void
check_in_slice(const eng_pos *p, const egix_slice *s)
{
    egix_slice got;

    assert_int_equal(p->stm, ENG_BLACK);
    assert_int_equal(popc(p->bm) + popc(p->wm) + popc(p->bk) + popc(p->wk),
                     popc(p->bm | p->wm | p->bk | p->wk));
    assert_int_equal(eng_validate(p, NULL, 0), 0);
    assert_int_equal(egix_slice_of(p, &got), 0);
    assert_true(egix_slice_equal(&got, s));
}

/*
 * Every index of every slice of 1..4 pieces: unindex gives a legal
 * placement of that slice, index gives the number back, and its
 * non-capture moves respect the build order. Together with the brute
 * force (sizes equal the number of placements) this makes the index a
 * bijection on these slices.
 */
static void
test_roundtrip_small(void **state)
{
    /* Sanitized runs visit every index of up to 3 pieces and a stride
     * through the 4-piece slices. */
    uint64_t stride4 = test_sanitized() ? 97 : 1;

    (void)state;
    for (int n = 1; n <= 4; n++) {
        size_t nlist;
        egix_slice *list;
        int *map = pair_map(n, &list, &nlist);

        for (size_t k = 0; k < nlist; k++) {
            egix_table *t;
            uint64_t size, step = n == 4 ? stride4 : 1;
            egix_slice ts;

            assert_int_equal(egix_size(&list[k], &size), 0);
            assert_int_equal(egix_table_create(&list[k], &t), 0);
            assert_true(egix_table_size(t) == size);
            ts = egix_table_slice(t);
            assert_true(egix_slice_equal(&ts, &list[k]));
            for (uint64_t i = 0; i < size; i += step) {
                eng_pos p;

                egix_unindex(t, i, &p);
                check_in_slice(&p, &list[k]);
                assert_true(egix_index(t, &p) == i);
                check_moves_ordered(&p, n, map[slice_key(&list[k])], map);
            }
            /* The last index too, whatever the stride. */
            {
                eng_pos p;

                egix_unindex(t, size - 1, &p);
                check_in_slice(&p, &list[k]);
                assert_true(egix_index(t, &p) == size - 1);
            }
            egix_table_destroy(t);
        }
        free(list);
        free(map);
    }
}

/*
 * The Gray king orders: every index of every slice of up to 4 pieces and
 * of an eighth of the 5-piece slices with kings on both sides (not under
 * the sanitizers) round-trips in each
 * order, and two consecutive indices with the same men and the same
 * outer king set differ by exactly one inner king moving (the
 * revolving-door property the compressor relies on). The first index of
 * each men placement continues from the last of the previous one's
 * outer set only by reflection, which the round trip covers.
 */
static void
test_gray_orders(void **state)
{
    (void)state;
    int nmax = test_sanitized() ? 4 : 5, five = 0;
    for (int n = 2; n <= nmax; n++) {
        size_t nlist;
        egix_slice *list;
        int *map = pair_map(n, &list, &nlist);
        free(map);
        for (size_t k = 0; k < nlist; k++) {
            const egix_slice *s = &list[k];
            if (n == 5 && (s->nbk == 0 || s->nwk == 0 || ++five % 8 != 1))
                continue; /* every 8th of them: the full set takes 20 s */
            /* The men ranked in the build order give every order's index
             * with its king part (egix_index_at_men, the compressor's). */
            egix_table *tc;
            assert_int_equal(egix_table_create(s, &tc), 0);
            for (int o = EGIX_ORDER_GRAY_B; o < EGIX_NORDERS; o++) {
                egix_table *t;
                uint64_t size;
                assert_int_equal(egix_size(s, &size), 0);
                assert_int_equal(egix_table_create_order(s, o, &t), 0);
                assert_int_equal(egix_table_order(t), o);
                assert_true(egix_table_size(t) == size);
                int wout = o == EGIX_ORDER_GRAY_W || o == EGIX_ORDER_GRAY_RW;
                eng_pos prev = {0, 0, 0, 0, ENG_BLACK};
                for (uint64_t i = 0; i < size; i++) {
                    eng_pos p;
                    egix_unindex(t, i, &p);
                    check_in_slice(&p, s);
                    assert_true(egix_index(t, &p) == i);
                    assert_true(egix_index_at_men(t, egix_men_rank(tc, &p), &p) == i);
                    uint32_t outer = wout ? p.wk : p.bk, inner = wout ? p.bk : p.wk;
                    uint32_t pouter = wout ? prev.wk : prev.bk, pinner = wout ? prev.bk : prev.wk;
                    if (i > 0 && p.bm == prev.bm && p.wm == prev.wm && outer == pouter)
                        assert_int_equal(__builtin_popcount(inner ^ pinner), 2);
                    prev = p;
                }
                egix_table_destroy(t);
            }
            egix_table_destroy(tc);
        }
        free(list);
    }
    egix_table *t;
    egix_slice s0 = {1, 1, 0, 0, -1, -1};
    assert_int_equal(egix_table_create_order(&s0, EGIX_NORDERS, &t), EGIX_EINVAL);
    assert_int_equal(egix_table_create_order(&s0, -1, &t), EGIX_EINVAL);
}

/* A random legal placement of n pieces (Black to move). */
static eng_pos
random_position(uint64_t *rng, int n)
{
    eng_pos p = {0, 0, 0, 0, ENG_BLACK};
    int lo = n > EGIX_MAX_SIDE ? n - EGIX_MAX_SIDE : 0;
    int nb = lo + (int)rng_below(rng, (unsigned)((n < EGIX_MAX_SIDE ? n : EGIX_MAX_SIDE) - lo + 1));

    for (int i = 0; i < n; i++) {
        int black = i < nb;
        /* Men more often than kings: most of the databases are men. */
        int man = rng_below(rng, 3) != 0;
        uint32_t occ = p.bm | p.wm | p.bk | p.wk;

        for (;;) {
            unsigned sq = rng_below(rng, 32);
            uint32_t bit = 1u << sq;

            if (occ & bit)
                continue;
            if (man && black && sq >= 28)
                continue;
            if (man && !black && sq < 4)
                continue;
            if (black)
                *(man ? &p.bm : &p.bk) |= bit;
            else
                *(man ? &p.wm : &p.wk) |= bit;
            break;
        }
    }
    return p;
}

/*
 * Seeded-random positions of 5..8 pieces, too many slices to walk
 * exhaustively: slice_of + index + unindex round trip, the same for the
 * flipped twin in egix_twin(slice), and the build order of the moves.
 */
static void
test_roundtrip_random(void **state)
{
    int npos = test_sanitized() ? 10000 : 100000;
    uint64_t rng = 20240601;
    table_cache cache;
    size_t nlist[9];
    int *maps[9];

    (void)state;
    cache_init(&cache);
    for (int n = 5; n <= 8; n++)
        maps[n] = pair_map(n, NULL, &nlist[n]);
    for (int i = 0; i < npos; i++) {
        int n = 5 + (int)rng_below(&rng, 4);
        eng_pos p = random_position(&rng, n), q, f;
        egix_slice s, fs, tw;
        const egix_table *t;
        uint64_t idx;

        assert_int_equal(egix_slice_of(&p, &s), 0);
        t = cache_get(&cache, &s);
        idx = egix_index(t, &p);
        assert_true(idx < egix_table_size(t));
        egix_unindex(t, idx, &q);
        assert_true(eng_equal(&p, &q));

        /* The flip lands in the twin slice (and round-trips there). */
        f = eng_flip(&p);
        f.stm = ENG_BLACK;
        assert_int_equal(egix_slice_of(&f, &fs), 0);
        tw = egix_twin(&s);
        assert_true(egix_slice_equal(&fs, &tw));
        t = cache_get(&cache, &fs);
        egix_unindex(t, egix_index(t, &f), &q);
        assert_true(eng_equal(&f, &q));

        check_moves_ordered(&p, n, maps[n][slice_key(&s)], maps[n]);
    }
    for (int n = 5; n <= 8; n++)
        free(maps[n]);
    cache_free(&cache);
}

/*
 * The cursor and the split index (index.h, "incremental indexing")
 * against egix_unindex / egix_index: a walk with egix_next from index 0
 * through every index of every slice of up to 4 pieces, and windows of
 * the 5- and 6-piece slices (men changing between kings, the one-side
 * and two-side men tables), seeks that alternate between nearby indices
 * (same men placement: only the kings are unranked) and far ones, and
 * the same on a Gray-order table (no reuse there, still exact).
 */
static void
check_cursor(const egix_table *t, const egix_cursor *c, uint64_t i)
{
    eng_pos want;

    egix_unindex(t, i, &want);
    assert_true(c->index == i);
    assert_true(eng_equal(&c->pos, &want));
    assert_int_equal(c->pos.stm, ENG_BLACK);
    if (egix_table_order(t) == EGIX_ORDER_COLEX)
        assert_true(egix_index_men(t, &want) + egix_index_kings(t, &want) == i);
    assert_true(egix_index_at_men(t, egix_men_rank(t, &want), &want) == i);
}

static void
walk_cursor(const egix_table *t, uint64_t begin, uint64_t len, uint64_t *rng)
{
    uint64_t size = egix_table_size(t);
    egix_cursor c;

    if (size == 0)
        return;
    egix_cursor_init(&c);
    begin %= size;
    egix_seek(t, &c, begin);
    check_cursor(t, &c, begin);
    for (uint64_t i = begin + 1; i < size && i < begin + len; i++) {
        egix_next(t, &c);
        check_cursor(t, &c, i);
    }
    /* Seeks: a step of 0..63 either way (mostly the same men), a step
     * forward of up to 4,095 (another men placement, often of the same
     * black men: the cursor keeps their set), then a jump anywhere. */
    for (int k = 0; k < 200; k++) {
        uint64_t i = c.index, d = rng_below(rng, k % 4 == 2 ? 4096 : 64);

        i = (k % 4 == 3)                    ? rng_next(rng) % size
            : k % 4 == 2                    ? (i + d < size ? i + d : i)
            : (rng_below(rng, 2) && i >= d) ? i - d
                                            : (i + d < size ? i + d : i);
        egix_seek(t, &c, i);
        check_cursor(t, &c, i);
    }
}

static void
test_cursor(void **state)
{
    uint64_t rng = 4242;
    int sanitized = test_sanitized();

    (void)state;
    for (int n = 1; n <= 6; n++) {
        size_t nlist;
        egix_slice *list;
        int *map = pair_map(n, &list, &nlist);

        for (size_t k = 0; k < nlist; k++) {
            egix_table *t, *g;
            /* Every index up to 4 pieces (a stride of slices when
             * sanitized), windows of 20,000 beyond. */
            int whole = n <= 3 || (n == 4 && !sanitized);

            if ((n >= 5 || (n == 4 && sanitized)) && k % (sanitized ? 29 : 7) != 0)
                continue;
            assert_int_equal(egix_table_create(&list[k], &t), 0);
            walk_cursor(t, whole ? 0 : rng_next(&rng), whole ? UINT64_MAX : 20000, &rng);
            if (k % 5 == 0) {
                /* every Gray order (the cursor reuses their men too) */
                for (int o = 1; o < EGIX_NORDERS; o++) {
                    assert_int_equal(egix_table_create_order(&list[k], o, &g), 0);
                    walk_cursor(g, rng_next(&rng), 2000, &rng);
                    egix_table_destroy(g);
                }
            }
            egix_table_destroy(t);
        }
        free(list);
        free(map);
    }
}

/* The offset tables agree with the row-counting sizes everywhere. */
static void
test_table_sizes(void **state)
{
    int nmax = test_sanitized() ? 6 : 8;

    (void)state;
    for (int n = 5; n <= nmax; n++) {
        size_t count;
        egix_slice *list;
        int *map = pair_map(n, &list, &count);

        for (size_t i = 0; i < count; i++) {
            egix_table *t;
            uint64_t size;

            assert_int_equal(egix_size(&list[i], &size), 0);
            assert_int_equal(egix_table_create(&list[i], &t), 0);
            assert_true(egix_table_size(t) == size);
            egix_table_destroy(t);
        }
        free(list);
        free(map);
    }
    /* And for the 5-vs-5 database, the target of the project. */
    if (!test_sanitized()) {
        uint64_t sum = 0;
        size_t count;
        egix_slice *list;
        int *map = pair_map(10, &list, &count);

        for (size_t i = 0; i < count; i++) {
            egix_table *t;
            uint64_t size;

            if (list[i].nbk + list[i].nbm != 5)
                continue;
            assert_int_equal(egix_size(&list[i], &size), 0);
            assert_int_equal(egix_table_create(&list[i], &t), 0);
            assert_true(egix_table_size(t) == size);
            sum += size;
            egix_table_destroy(t);
        }
        assert_true(sum == FIVE_FIVE_TOTAL);
        free(list);
        free(map);
    }
}

/* ---- slice list, names, errors -------------------------------------------- */

/*
 * The structure of egix_slices for 1..10 pieces: well-formed non-empty
 * slices of the right piece count, men never decreasing along the list,
 * pairs numbered in order with twins adjacent, sizes adding up to the
 * total, and the ENOSPACE protocol.
 */
static void
test_slice_list(void **state)
{
    (void)state;
    for (int n = 1; n <= 10; n++) {
        size_t count, k;
        egix_slice *list;
        int *pair;
        uint64_t sum = 0, total;
        int prev_m = -1;

        assert_int_equal(egix_slices(n, NULL, NULL, 0, &count), 0);
        list = malloc(count * sizeof *list);
        pair = malloc(count * sizeof *pair);
        assert_non_null(list);
        assert_non_null(pair);
        /* Too small an array: told so, and how much is needed. */
        assert_int_equal(egix_slices(n, list, pair, count - 1, &k), EGIX_ENOSPACE);
        assert_int_equal(k, count);
        assert_int_equal(egix_slices(n, list, pair, count, &k), 0);

        for (size_t i = 0; i < count; i++) {
            const egix_slice *s = &list[i];
            egix_slice tw = egix_twin(s);
            uint64_t size;
            int m = s->nbm + s->nwm;

            assert_int_equal(egix_slice_check(s), 0);
            assert_int_equal(s->nbk + s->nwk + s->nbm + s->nwm, n);
            assert_int_equal(egix_size(s, &size), 0);
            assert_true(size > 0);
            sum += size;
            /* Fewer men first. */
            assert_true(m >= prev_m);
            prev_m = m;
            /* Pairs: numbered in order, twins adjacent. */
            if (i == 0)
                assert_int_equal(pair[i], 0);
            else
                assert_true(pair[i] == pair[i - 1] || pair[i] == pair[i - 1] + 1);
            if (egix_slice_equal(s, &tw)) {
                assert_true(i == 0 || pair[i - 1] != pair[i]);
                assert_true(i + 1 == count || pair[i + 1] != pair[i]);
            } else if (i + 1 < count && pair[i + 1] == pair[i]) {
                assert_true(egix_slice_equal(&list[i + 1], &tw));
            } else {
                assert_true(i > 0 && pair[i - 1] == pair[i]);
                assert_true(egix_slice_equal(&list[i - 1], &tw));
            }
        }
        /* Every placement (with Black to move) is in exactly one slice. */
        assert_int_equal(egix_count(n, -1, -1, &total), 0);
        assert_true(sum == total);
        free(list);
        free(pair);
    }
    assert_int_equal(egix_slices(0, NULL, NULL, 0, &(size_t){0}), EGIX_EINVAL);
    assert_int_equal(egix_slices(25, NULL, NULL, 0, &(size_t){0}), EGIX_EINVAL);
}

/* Names: the paper's examples, letters for counts above 9, rejection of
 * malformed text, and a round trip for every listed slice. */
static void
test_names(void **state)
{
    egix_slice s, back;
    char buf[EGIX_NAME_MAX];
    static const char *bad[] = {"",        "3223.7",  "3223.778", "3223,77", "3223.87", "3223.07",
                                "d000.00", "3223.-7", "5500.10",  "0041.70", "0041.10"};

    (void)state;
    assert_int_equal(egix_slice_parse("3223.77", &s), 0);
    assert_int_equal(s.nbk, 3);
    assert_int_equal(s.nwk, 2);
    assert_int_equal(s.nbm, 2);
    assert_int_equal(s.nwm, 3);
    assert_int_equal(s.rb, 6);
    assert_int_equal(s.rw, 6);
    assert_int_equal(egix_slice_parse("5500.00", &s), 0);
    assert_int_equal(s.rb, -1);
    assert_int_equal(s.rw, -1);
    /* Counts above 9 are letters; at most 12 pieces a side. */
    assert_int_equal(egix_slice_parse("c0a0.70", &s), EGIX_ENAME);
    s = (egix_slice){2, 0, 10, 0, 6, -1};
    assert_int_equal(egix_slice_name(&s, buf, sizeof buf), 0);
    assert_string_equal(buf, "20a0.70");
    assert_int_equal(egix_slice_parse("20A0.70", &back), 0);
    assert_true(egix_slice_equal(&s, &back));
    assert_int_equal(egix_slice_name(&s, buf, 7), EGIX_ENOSPACE);
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        assert_int_equal(egix_slice_parse(bad[i], &s), EGIX_ENAME);

    /* Every listed slice of up to 10 pieces round-trips its name. */
    for (int n = 1; n <= 10; n++) {
        size_t count;
        egix_slice *list;
        int *map = pair_map(n, &list, &count);

        for (size_t i = 0; i < count; i++) {
            assert_int_equal(egix_slice_name(&list[i], buf, sizeof buf), 0);
            assert_int_equal(strlen(buf), 7);
            assert_int_equal(egix_slice_parse(buf, &back), 0);
            assert_true(egix_slice_equal(&list[i], &back));
        }
        free(list);
        free(map);
    }
}

/* Every error path of the API returns its documented code. */
static void
test_errors(void **state)
{
    egix_slice s;
    egix_table *t = NULL;
    uint64_t n;
    eng_pos p = {0, 0, 0, 0, ENG_BLACK};

    (void)state;
    /* Malformed slices. */
    s = (egix_slice){1, 0, 0, 0, 0, -1}; /* rank without men */
    assert_int_equal(egix_slice_check(&s), EGIX_EINVAL);
    assert_int_equal(egix_size(&s, &n), EGIX_EINVAL);
    assert_int_equal(egix_table_create(&s, &t), EGIX_EINVAL);
    assert_null(t);
    s = (egix_slice){0, 0, 5, 0, 0, -1}; /* 5 men do not fit on row 0 */
    assert_int_equal(egix_slice_check(&s), EGIX_EINVAL);
    s = (egix_slice){0, 0, 1, 0, 7, -1}; /* a man on the crowning row */
    assert_int_equal(egix_slice_check(&s), EGIX_EINVAL);
    s = (egix_slice){10, 0, 3, 0, 6, -1}; /* 13 pieces a side */
    assert_int_equal(egix_slice_check(&s), EGIX_EINVAL);
    s = (egix_slice){0, 0, 0, 1, -1, -1}; /* men without a rank */
    assert_int_equal(egix_slice_check(&s), EGIX_EINVAL);
    /* Counting. */
    assert_int_equal(egix_count(5, 3, 3, &n), EGIX_EINVAL);
    assert_int_equal(egix_count(14, 13, 1, &n), EGIX_EINVAL);
    assert_int_equal(egix_material_size(13, 0, 0, 0, &n), EGIX_EINVAL);
    assert_int_equal(egix_count(0, -1, -1, &n), 0);
    assert_true(n == 1); /* the empty board */
    /* Positions outside the rules. */
    p.bm = 1u << 28; /* black man on 29 */
    assert_int_equal(egix_slice_of(&p, &s), EGIX_EINVAL);
    p.bm = 0;
    p.wm = 1u << 3; /* white man on 4 */
    assert_int_equal(egix_slice_of(&p, &s), EGIX_EINVAL);
    p.wm = 1u << 8;
    p.bk = 1u << 8; /* two pieces on 9 */
    assert_int_equal(egix_slice_of(&p, &s), EGIX_EINVAL);
    p.bk = 0xFFF00000u;
    p.wm = 0;
    p.bm = 1; /* 13 black pieces */
    assert_int_equal(egix_slice_of(&p, &s), EGIX_EINVAL);
    /* Every code has a name. */
    assert_string_not_equal(egix_strerror(0), "unknown error");
    for (int c = EGIX_EINVAL; c >= EGIX_ENAME; c--)
        assert_string_not_equal(egix_strerror(c), "unknown error");
    assert_string_equal(egix_strerror(-99), "unknown error");
    egix_table_destroy(NULL);
}

/* Slices of the flip: egix_twin and eng_flip agree on named examples. */
static void
test_twin(void **state)
{
    eng_pos p = {0, 0, 0, 0, ENG_BLACK}, f;
    egix_slice s, fs, tw, tt;

    (void)state;
    /* Black: men on 6 and 22 (rows 1, 5), king on 1; White: man on 14
     * (row 3 -> rw 4), kings on 30 and 31. */
    p.bm = (1u << 5) | (1u << 21);
    p.bk = 1u << 0;
    p.wm = 1u << 13;
    p.wk = (1u << 29) | (1u << 30);
    assert_int_equal(egix_slice_of(&p, &s), 0);
    assert_int_equal(s.nbk, 1);
    assert_int_equal(s.nwk, 2);
    assert_int_equal(s.nbm, 2);
    assert_int_equal(s.nwm, 1);
    assert_int_equal(s.rb, 5);
    assert_int_equal(s.rw, 4);
    f = eng_flip(&p);
    assert_int_equal(egix_slice_of(&f, &fs), 0);
    tw = egix_twin(&s);
    assert_true(egix_slice_equal(&fs, &tw));
    tt = egix_twin(&tw);
    assert_true(egix_slice_equal(&tt, &s));
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_published_splits),
        cmocka_unit_test(test_published_totals),
        cmocka_unit_test(test_published_five_five),
        cmocka_unit_test(test_published_big_slices),
        cmocka_unit_test(test_slice_list),
        cmocka_unit_test(test_names),
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_twin),
        cmocka_unit_test(test_brute_force_small),
        cmocka_unit_test(test_roundtrip_small),
        cmocka_unit_test(test_gray_orders),
        cmocka_unit_test(test_roundtrip_random),
        cmocka_unit_test(test_cursor),
        cmocka_unit_test(test_table_sizes),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
