/*
 * index.c - slices, gap-free indices and position counts of the endgame
 * databases. The header (index.h) is the manual: the layout and the
 * build order are explained there, the reasons for each step here.
 */
#include "egdb/index.h"

#include <stdlib.h>
#include <string.h>

#if defined(__BMI2__) || defined(__AVX2__)
#include <immintrin.h>
#endif

/* ---- constants -------------------------------------------------------- */

#define NROWS 8

/*
 * Unindexing looks a black-man rank up in off[] in two levels: a binary
 * search over every BLOCK-th entry (a small array that stays in cache),
 * then one block of BLOCK entries counted in a single pass. 32 entries
 * are 256 bytes, read with independent loads instead of five more
 * dependent steps of binary search.
 */
#define BLOCK 32

/* Pads off[] to whole blocks; above any count (counts stay below 2^63,
 * which the signed 64-bit vector compare needs). */
#define OFF_PAD ((uint64_t)INT64_MAX)

/* Names of counts 0..12 (see SLICE NAMES in index.h). */
static const char count_digits[] = "0123456789abc";

/* ---- types ------------------------------------------------------------ */

/*
 * The index of one slice. Everything the hot path needs is here, laid
 * out so that egix_index touches this struct and one off[] entry.
 */
struct egix_table {
    /* What egix_index reads comes first (one cache line; the table is
     * allocated 64-byte aligned). */
    uint64_t *off;    /* nblack + 1 prefix sums, NULL unless both have men,
                       * padded with OFF_PAD to noff, a multiple of BLOCK  */
    uint64_t bbase;   /* C(4 rb, nbm): colex ranks below miss row rb        */
    uint64_t ckb;     /* C(32 - m, nbk)                                     */
    uint64_t ckw;     /* C(32 - m - nbk, nwk)                               */
    uint32_t wregion; /* White's men squares, in White's frame: rows 0..rw  */
    uint32_t wlead;   /* White's leading row, in White's frame              */
    int nbk, nwk, nbm, nwm;
    int order; /* king order, EGIX_ORDER_* (0: colex, the default)  */
    int kn;    /* squares free of men: 32 - nbm - nwm                */
    /* Gray king orders only: the outer and inner king sets' counts.   */
    uint64_t kouter, kinner;
    int bn; /* squares open to black men: 4 rb + 4 (0 if none)    */
    egix_slice s;
    uint64_t nblack; /* number of black-man sets (1 when Black has none)   */
    uint64_t nmen;   /* number of men placements                           */
    uint64_t size;   /* nmen * ckb * ckw                                   */
    uint64_t noff;   /* entries allocated in off[]                         */
    uint64_t *guide; /* guide[g] = off[g * BLOCK], for the blocks holding  */
    uint64_t nguide; /* the black ranks 0..nblack-1                        */
    uint32_t *bset;  /* bset[br] = the black men of rank br (with off[]):  */
                     /* unindex reads them instead of unranking           */
};

/* ---- static data ---------------------------------------------------- */

/*
 * binom[k][n] = C(n, k) for k <= 12 (a side has at most 12 pieces, so no
 * colex rank ever needs a larger k) and n <= 32. Generated once by a
 * script (math.comb) and kept as a constant so the module has no
 * start-up code and no mutable state; C(32, 12) = 225,792,840 is the
 * largest entry and fits 32 bits. Rows are per k so that the greedy
 * unranking, which scans n downwards for a fixed k, reads contiguously.
 */
static const uint32_t binom[13][33] = {
    /* k = 0 */ {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
                 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1},
    /* k = 1 */ {0,  1,  2,  3,  4,  5,  6,  7,  8,  9,  10, 11, 12, 13, 14, 15, 16,
                 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32},
    /* k = 2 */ {0,   0,   1,   3,   6,   10,  15,  21,  28,  36,  45,
                 55,  66,  78,  91,  105, 120, 136, 153, 171, 190, 210,
                 231, 253, 276, 300, 325, 351, 378, 406, 435, 465, 496},
    /* k = 3 */ {0,    0,    0,    1,    4,    10,   20,   35,   56,   84,   120,
                 165,  220,  286,  364,  455,  560,  680,  816,  969,  1140, 1330,
                 1540, 1771, 2024, 2300, 2600, 2925, 3276, 3654, 4060, 4495, 4960},
    /* k = 4 */ {0,    0,    0,     0,     1,     5,     15,    35,    70,    126,   210,
                 330,  495,  715,   1001,  1365,  1820,  2380,  3060,  3876,  4845,  5985,
                 7315, 8855, 10626, 12650, 14950, 17550, 20475, 23751, 27405, 31465, 35960},
    /* k = 5 */ {0,     0,     0,     0,     0,     1,     6,     21,     56,     126,    252,
                 462,   792,   1287,  2002,  3003,  4368,  6188,  8568,   11628,  15504,  20349,
                 26334, 33649, 42504, 53130, 65780, 80730, 98280, 118755, 142506, 169911, 201376},
    /* k = 6 */ {0,      0,      0,      0,      0,      0,      1,      7,      28,
                 84,     210,    462,    924,    1716,   3003,   5005,   8008,   12376,
                 18564,  27132,  38760,  54264,  74613,  100947, 134596, 177100, 230230,
                 296010, 376740, 475020, 593775, 736281, 906192},
    /* k = 7 */ {0,      0,       0,       0,       0,       0,      0,      1,      8,
                 36,     120,     330,     792,     1716,    3432,   6435,   11440,  19448,
                 31824,  50388,   77520,   116280,  170544,  245157, 346104, 480700, 657800,
                 888030, 1184040, 1560780, 2035800, 2629575, 3365856},
    /* k = 8 */ {0,       0,       0,       0,       0,       0,       0,      0,       1,
                 9,       45,      165,     495,     1287,    3003,    6435,   12870,   24310,
                 43758,   75582,   125970,  203490,  319770,  490314,  735471, 1081575, 1562275,
                 2220075, 3108105, 4292145, 5852925, 7888725, 10518300},
    /* k = 9 */ {0,       0,       0,        0,        0,        0,       0,       0,       0,
                 1,       10,      55,       220,      715,      2002,    5005,    11440,   24310,
                 48620,   92378,   167960,   293930,   497420,   817190,  1307504, 2042975, 3124550,
                 4686825, 6906900, 10015005, 14307150, 20160075, 28048800},
    /* k = 10 */ {0,        0,        0,        0,        0,       0,       0,
                  0,        0,        0,        1,        11,      66,      286,
                  1001,     3003,     8008,     19448,    43758,   92378,   184756,
                  352716,   646646,   1144066,  1961256,  3268760, 5311735, 8436285,
                  13123110, 20030010, 30045015, 44352165, 64512240},
    /* k = 11 */ {0,        0,        0,        0,        0,        0,       0,
                  0,        0,        0,        0,        1,        12,      78,
                  364,      1365,     4368,     12376,    31824,    75582,   167960,
                  352716,   705432,   1352078,  2496144,  4457400,  7726160, 13037895,
                  21474180, 34597290, 54627300, 84672315, 129024480},
    /* k = 12 */ {0,        0,        0,        0,         0,        0,       0,
                  0,        0,        0,        0,         0,        1,       13,
                  91,       455,      1820,     6188,      18564,    50388,   125970,
                  293930,   646646,   1352078,  2704156,   5200300,  9657700, 17383860,
                  30421755, 51895935, 86493225, 141120525, 225792840},
};

/* ---- bit helpers ------------------------------------------------------ */

/* C(n, k) as 64 bits; 0 when k > n (the colex identities rely on it). */
static inline uint64_t
choose(int n, int k)
{
    return binom[k][n];
}

/*
 * The board turned 180 degrees: bit i -> bit 31 - i. This is White's own
 * frame, in which White's men advance towards higher bits just as
 * Black's do, so one ranking scheme serves both colours.
 */
static inline uint32_t
rev32(uint32_t x)
{
    x = __builtin_bswap32(x);
    x = ((x >> 4) & 0x0F0F0F0Fu) | ((x & 0x0F0F0F0Fu) << 4);
    x = ((x >> 2) & 0x33333333u) | ((x & 0x33333333u) << 2);
    x = ((x >> 1) & 0x55555555u) | ((x & 0x55555555u) << 1);
    return x;
}

/*
 * pext/pdep: gather the bits of x selected by mask into the low bits,
 * and scatter them back. BMI2 does each in one instruction; the
 * portable loop gives the same result one mask bit at a time.
 */
static inline uint32_t
pext32(uint32_t x, uint32_t mask)
{
#ifdef __BMI2__
    return _pext_u32(x, mask);
#else
    uint32_t r = 0;
    for (uint32_t bit = 1; mask != 0; bit <<= 1) {
        if (x & mask & (0u - mask))
            r |= bit;
        mask &= mask - 1;
    }
    return r;
#endif
}

static inline uint32_t
pdep32(uint32_t x, uint32_t mask)
{
#ifdef __BMI2__
    return _pdep_u32(x, mask);
#else
    uint32_t r = 0;
    for (uint32_t bit = 1; mask != 0; bit <<= 1) {
        if (x & bit)
            r |= mask & (0u - mask);
        mask &= mask - 1;
    }
    return r;
#endif
}

static inline int
popcount32(uint32_t x)
{
    return __builtin_popcount(x);
}

/* ---- colex ranking -------------------------------------------------- */

/*
 * Colex rank of the set of bits of `set` (at most 12 of them): the j-th
 * lowest bit, at position s, contributes C(s, j). Equivalently the rank
 * of `set` among all masks of the same popcount in numeric order, which
 * is what makes "sets missing the top row" a prefix of the ranks.
 */
static inline uint64_t
colex_rank(uint32_t set)
{
    uint64_t r = 0;
    for (int j = 1; set != 0; j++) {
        r += binom[j][__builtin_ctz(set)];
        set &= set - 1;
    }
    return r;
}

/*
 * How many of row[0..31] are <= r, for a non-decreasing row whose
 * entries and r are below 2^31. With AVX2: four 8-lane compares, their
 * sign masks and one popcount; otherwise a fixed-length loop that the
 * compiler may vectorise. Either way no branch depends on the data.
 */
static inline int
count_le32(const uint32_t *row, uint32_t r)
{
#ifdef __AVX2__
    __m256i v = _mm256_set1_epi32((int)r);
    uint32_t gt = 0;

    for (int i = 0; i < 4; i++) {
        __m256i x = _mm256_loadu_si256((const __m256i *)(const void *)(row + 8 * i));
        gt |= (uint32_t)_mm256_movemask_ps(_mm256_castsi256_ps(_mm256_cmpgt_epi32(x, v)))
              << (8 * i);
    }
    return 32 - popcount32(gt);
#else
    int n = 0;

    for (int i = 0; i < 32; i++)
        n += row[i] <= r;
    return n;
#endif
}

/*
 * The k-subset of 0..31 with colex rank r (k <= 12), greedily from the
 * top: the highest element is the largest c with C(c, k) <= r, and the
 * rest is the (k-1)-subset of rank r - C(c, k), whose elements fall
 * below c by themselves (r - C(c, k) < C(c, k - 1)). Because C(c, j) is
 * non-decreasing in c, that largest c is the number of c in 0..31 with
 * C(c, j) <= r, minus one: count_le32. A scan that stops at the answer
 * reads fewer entries but mispredicts about once per element, which on
 * random indices costs three to five times more (measured). The last
 * element needs no search at all: C(c, 1) = c, so it is r itself.
 */
static inline uint32_t
colex_unrank(uint64_t r, int k)
{
    uint32_t set = 0;
    uint32_t r32 = (uint32_t)r; /* r < C(32, 12) < 2^28 */

    if (k == 0)
        return 0;
    for (int j = k; j >= 2; j--) {
        int c = count_le32(binom[j], r32) - 1;

        set |= 1u << c;
        r32 -= binom[j][c];
    }
    return set | 1u << r32;
}

/* ---- men placements ---------------------------------------------------- */

/*
 * The white squares (White's frame) left free by the black men bm
 * (Black's frame), with F and f0 of index.h, and the first colex rank of
 * the white sets that touch White's leading row. Shared by the table
 * build, egix_index and egix_unindex so all three agree by construction.
 */
static inline uint32_t
white_free(const egix_table *t, uint32_t bm, uint64_t *wbase, uint64_t *wcount)
{
    uint32_t free = t->wregion & ~rev32(bm);
    int nf = popcount32(free);
    int nlead = popcount32(free & t->wlead);

    *wbase = choose(nf - nlead, t->nwm);
    if (wcount != NULL)
        *wcount = choose(nf, t->nwm) - *wbase;
    return free;
}

static inline uint64_t
white_rank(const egix_table *t, uint32_t bm, uint32_t wm)
{
    uint64_t wbase;
    uint32_t free = white_free(t, bm, &wbase, NULL);

    return colex_rank(pext32(rev32(wm), free)) - wbase;
}

static inline uint32_t
white_unrank(const egix_table *t, uint32_t bm, uint64_t wr)
{
    uint64_t wbase;
    uint32_t free = white_free(t, bm, &wbase, NULL);
    uint32_t set = colex_unrank(wr + wbase, t->nwm);

    return rev32(pdep32(set, free));
}

/* How many of the BLOCK entries at off are <= men (see BLOCK). */
static inline int
count_le_block(const uint64_t *off, uint64_t men)
{
#ifdef __AVX2__
    __m256i v = _mm256_set1_epi64x((long long)men);
    uint32_t gt = 0;

    for (int i = 0; i < BLOCK / 4; i++) {
        __m256i x = _mm256_loadu_si256((const __m256i *)(const void *)(off + 4 * i));
        gt |= (uint32_t)_mm256_movemask_pd(_mm256_castsi256_pd(_mm256_cmpgt_epi64(x, v)))
              << (4 * i);
    }
    return BLOCK - popcount32(gt);
#else
    int n = 0;

    for (int i = 0; i < BLOCK; i++)
        n += off[i] <= men;
    return n;
#endif
}

/*
 * The black rank br of a men index: the largest br < nblack with
 * off[br] <= men. off[] is non-decreasing (equal neighbours mean a black
 * set with no room for White) and off[0] = 0, so that br is the one
 * black set whose range [off[br], off[br + 1]) holds men: an empty range
 * is passed over because the next entry, equal to it, also satisfies
 * off <= men and lies further right. First the block: the largest g
 * with guide[g] <= men, by branch-free halving (base[0] <= men stays
 * true while len shrinks to 1); then the count inside it, where
 * off[nblack] = nmen > men and the padding stop the count in time.
 */
static inline uint64_t
find_black(const egix_table *t, uint64_t men)
{
    const uint64_t *base = t->guide;
    uint64_t len = t->nguide, g;

    while (len > 1) {
        uint64_t half = len / 2;

        base = (base[half] <= men) ? base + half : base;
        len -= half;
    }
    g = (uint64_t)(base - t->guide);
    return g * BLOCK + (uint64_t)count_le_block(t->off + g * BLOCK, men) - 1;
}

/*
 * The number of men placements of a slice, by rows. Only rows matter:
 * the regions of both colours and their leading rows are unions of
 * rows, so a placement is counted by choosing how many black (b) and
 * white (w) men each row holds, then which squares: C(4, b) C(4 - b, w).
 * dp[b][w] = placements of b black and w white men on the rows so far.
 * The largest value, C(28,12)^2 < 10^16, fits 64 bits.
 */
static uint64_t
men_count(int nbm, int nwm, int rb, int rw)
{
    uint64_t dp[EGIX_MAX_SIDE + 1][EGIX_MAX_SIDE + 1];
    uint64_t nx[EGIX_MAX_SIDE + 1][EGIX_MAX_SIDE + 1];

    memset(dp, 0, sizeof dp);
    dp[0][0] = 1;
    for (int r = 0; r < NROWS; r++) {
        /* Black men on rows 0..rb, at least one on rb; White's leading
         * row rw is board row 7 - rw, its men on rows 7 - rw..7. */
        int bmax = (nbm > 0 && r <= rb) ? 4 : 0;
        int bmin = (nbm > 0 && r == rb) ? 1 : 0;
        int wopen = (nwm > 0 && r >= NROWS - 1 - rw);
        int wmin = (nwm > 0 && r == NROWS - 1 - rw) ? 1 : 0;

        memset(nx, 0, sizeof nx);
        for (int b = 0; b <= nbm; b++) {
            for (int w = 0; w <= nwm; w++) {
                if (dp[b][w] == 0)
                    continue;
                for (int bb = bmin; bb <= bmax && b + bb <= nbm; bb++) {
                    int wmax = wopen ? 4 - bb : 0;
                    for (int ww = wmin; ww <= wmax && w + ww <= nwm; ww++)
                        nx[b + bb][w + ww] += dp[b][w] * choose(4, bb) * choose(4 - bb, ww);
                }
            }
        }
        memcpy(dp, nx, sizeof dp);
    }
    return dp[nbm][nwm];
}

/* The lowest leading row at which n men fit (n > 0): rows 0..r hold 4r+4. */
static int
min_rank(int n)
{
    return (n + 3) / 4 - 1;
}

/* kings * men with the overflow check the 64-bit index layout needs. */
static int
slice_total(uint64_t nmen, int m, int nbk, int nwk, uint64_t *out)
{
    uint64_t t;

    if (__builtin_mul_overflow(nmen, choose(32 - m, nbk), &t) ||
        __builtin_mul_overflow(t, choose(32 - m - nbk, nwk), &t))
        return EGIX_ERANGE;
    *out = t;
    return 0;
}

static int
side_ok(int kings, int men)
{
    return kings >= 0 && men >= 0 && kings + men <= EGIX_MAX_SIDE;
}

/* ---- slices ------------------------------------------------------------ */

int
egix_slice_of(const eng_pos *p, egix_slice *out)
{
    uint32_t black = p->bm | p->bk, white = p->wm | p->wk;
    int nb = popcount32(black), nw = popcount32(white);

    /* Disjoint masks: the four popcounts add up to the union's. */
    if (popcount32(p->bm) + popcount32(p->bk) != nb ||
        popcount32(p->wm) + popcount32(p->wk) != nw || (black & white) != 0)
        return EGIX_EINVAL;
    /* A man on its crowning row would already be a king. */
    if ((p->bm & ENG_ROW7) != 0 || (p->wm & ENG_ROW0) != 0)
        return EGIX_EINVAL;
    if (nb > EGIX_MAX_SIDE || nw > EGIX_MAX_SIDE)
        return EGIX_EINVAL;

    out->nbk = (int8_t)popcount32(p->bk);
    out->nwk = (int8_t)popcount32(p->wk);
    out->nbm = (int8_t)popcount32(p->bm);
    out->nwm = (int8_t)popcount32(p->wm);
    /* Black's most advanced man is its highest bit; White's its lowest. */
    out->rb = (int8_t)(p->bm != 0 ? (31 - __builtin_clz(p->bm)) / 4 : -1);
    out->rw = (int8_t)(p->wm != 0 ? NROWS - 1 - __builtin_ctz(p->wm) / 4 : -1);
    return 0;
}

int
egix_slice_check(const egix_slice *s)
{
    if (!side_ok(s->nbk, s->nbm) || !side_ok(s->nwk, s->nwm))
        return EGIX_EINVAL;
    if (s->nbm == 0 ? s->rb != -1 : (s->rb < min_rank(s->nbm) || s->rb > 6))
        return EGIX_EINVAL;
    if (s->nwm == 0 ? s->rw != -1 : (s->rw < min_rank(s->nwm) || s->rw > 6))
        return EGIX_EINVAL;
    return 0;
}

int
egix_slice_equal(const egix_slice *a, const egix_slice *b)
{
    return a->nbk == b->nbk && a->nwk == b->nwk && a->nbm == b->nbm && a->nwm == b->nwm &&
           a->rb == b->rb && a->rw == b->rw;
}

egix_slice
egix_twin(const egix_slice *s)
{
    egix_slice t;

    t.nbk = s->nwk;
    t.nwk = s->nbk;
    t.nbm = s->nwm;
    t.nwm = s->nbm;
    t.rb = s->rw;
    t.rw = s->rb;
    return t;
}

int
egix_slice_name(const egix_slice *s, char *buf, size_t buflen)
{
    if (egix_slice_check(s) != 0)
        return EGIX_EINVAL;
    if (buflen < EGIX_NAME_MAX)
        return EGIX_ENOSPACE;
    buf[0] = count_digits[s->nbk];
    buf[1] = count_digits[s->nwk];
    buf[2] = count_digits[s->nbm];
    buf[3] = count_digits[s->nwm];
    buf[4] = '.';
    /* The paper's ranks: row + 1, and 0 (= -1 + 1) for no men. */
    buf[5] = (char)('0' + s->rb + 1);
    buf[6] = (char)('0' + s->rw + 1);
    buf[7] = '\0';
    return 0;
}

int
egix_name_digit(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'c')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'C')
        return c - 'A' + 10;
    return -1;
}

int
egix_slice_parse(const char *name, egix_slice *out)
{
    int v[6];
    static const int pos[6] = {0, 1, 2, 3, 5, 6};
    egix_slice s;

    if (strlen(name) != EGIX_NAME_MAX - 1 || name[4] != '.')
        return EGIX_ENAME;
    for (int i = 0; i < 6; i++) {
        v[i] = egix_name_digit(name[pos[i]]);
        /* Ranks are single decimal digits 0..7. */
        if (v[i] < 0 || (i >= 4 && v[i] > 7))
            return EGIX_ENAME;
    }
    s.nbk = (int8_t)v[0];
    s.nwk = (int8_t)v[1];
    s.nbm = (int8_t)v[2];
    s.nwm = (int8_t)v[3];
    s.rb = (int8_t)(v[4] - 1);
    s.rw = (int8_t)(v[5] - 1);
    if (egix_slice_check(&s) != 0)
        return EGIX_ENAME;
    *out = s;
    return 0;
}

/* ---- counting ------------------------------------------------------------ */

int
egix_size(const egix_slice *s, uint64_t *out)
{
    if (egix_slice_check(s) != 0)
        return EGIX_EINVAL;
    return slice_total(men_count(s->nbm, s->nwm, s->rb, s->rw), s->nbm + s->nwm, s->nbk, s->nwk,
                       out);
}

int
egix_material_size(int nbk, int nwk, int nbm, int nwm, uint64_t *out)
{
    uint64_t total = 0;

    if (!side_ok(nbk, nbm) || !side_ok(nwk, nwm))
        return EGIX_EINVAL;
    /* Every placement has exactly one pair of leading ranks, so the
     * material is the disjoint union of its slices. */
    for (int rb = nbm ? min_rank(nbm) : -1; rb <= (nbm ? 6 : -1); rb++) {
        for (int rw = nwm ? min_rank(nwm) : -1; rw <= (nwm ? 6 : -1); rw++) {
            egix_slice s = {(int8_t)nbk, (int8_t)nwk, (int8_t)nbm,
                            (int8_t)nwm, (int8_t)rb,  (int8_t)rw};
            uint64_t n;
            int rc = egix_size(&s, &n);

            if (rc != 0)
                return rc;
            if (__builtin_add_overflow(total, n, &total))
                return EGIX_ERANGE;
        }
    }
    *out = total;
    return 0;
}

/* Placements with nb black and nw white pieces, over all king/man splits. */
static int
side_count(int nb, int nw, uint64_t *out)
{
    uint64_t total = 0;

    for (int nbk = 0; nbk <= nb; nbk++) {
        for (int nwk = 0; nwk <= nw; nwk++) {
            uint64_t n;
            int rc = egix_material_size(nbk, nwk, nb - nbk, nw - nwk, &n);

            if (rc != 0)
                return rc;
            if (__builtin_add_overflow(total, n, &total))
                return EGIX_ERANGE;
        }
    }
    *out = total;
    return 0;
}

int
egix_count(int npieces, int a, int b, uint64_t *out)
{
    uint64_t total = 0, n;
    int rc;

    if (npieces < 0 || npieces > 2 * EGIX_MAX_SIDE)
        return EGIX_EINVAL;
    if (a == -1 && b == -1) {
        /* Every ordered (black, white) split once: the a-b rows summed. */
        for (int nb = 0; nb <= npieces; nb++) {
            if (nb > EGIX_MAX_SIDE || npieces - nb > EGIX_MAX_SIDE)
                continue;
            if ((rc = side_count(nb, npieces - nb, &n)) != 0)
                return rc;
            if (__builtin_add_overflow(total, n, &total))
                return EGIX_ERANGE;
        }
        *out = total;
        return 0;
    }
    if (a < 0 || b < 0 || a + b != npieces || a > EGIX_MAX_SIDE || b > EGIX_MAX_SIDE)
        return EGIX_EINVAL;
    if ((rc = side_count(a, b, &total)) != 0)
        return rc;
    /* "a-b" counts both colourings; a-a has only one. */
    if (a != b) {
        if ((rc = side_count(b, a, &n)) != 0)
            return rc;
        if (__builtin_add_overflow(total, n, &total))
            return EGIX_ERANGE;
    }
    *out = total;
    return 0;
}

/*
 * Whether a material is the listed member of its pair: Black has more
 * pieces, or as many and more kings, or the material is its own twin.
 */
static int
material_listed(int nbk, int nwk, int nbm, int nwm)
{
    int nb = nbk + nbm, nw = nwk + nwm;

    return nb > nw || (nb == nw && nbk >= nwk);
}

int
egix_slices(int npieces, egix_slice *out, int *pair, size_t cap, size_t *n)
{
    size_t k = 0;
    int npair = 0;

    if (npieces < 1 || npieces > 2 * EGIX_MAX_SIDE)
        return EGIX_EINVAL;
    /* Fewer men first: a promotion only ever leads to one man fewer. */
    for (int m = 0; m <= npieces; m++) {
        int nk = npieces - m;

        for (int nbm = m; nbm >= 0; nbm--) {
            for (int nbk = nk; nbk >= 0; nbk--) {
                int nwm = m - nbm, nwk = nk - nbk;
                int symmetric = (nbk == nwk && nbm == nwm);

                if (!side_ok(nbk, nbm) || !side_ok(nwk, nwm) ||
                    !material_listed(nbk, nwk, nbm, nwm))
                    continue;
                /* Leading ranks by rb + rw descending, then rb
                 * descending: a man move out of a pair raises one rank
                 * and so the sum. -1 (no men) takes part as itself. */
                for (int sum = 12; sum >= -2; sum--) {
                    for (int rb = 6; rb >= -1; rb--) {
                        int rw = sum - rb;
                        egix_slice s = {(int8_t)nbk, (int8_t)nwk, (int8_t)nbm,
                                        (int8_t)nwm, (int8_t)rb,  (int8_t)rw};
                        egix_slice t;
                        uint64_t size;

                        if (rw < -1 || rw > 6 || egix_slice_check(&s) != 0)
                            continue;
                        /* A symmetric material lists (rb, rw) and its
                         * twin (rw, rb) once, from rb >= rw. */
                        if (symmetric && rb < rw)
                            continue;
                        if (egix_size(&s, &size) == 0 && size == 0)
                            continue;
                        t = egix_twin(&s);
                        for (int i = 0; i < (egix_slice_equal(&s, &t) ? 1 : 2); i++) {
                            if (out != NULL && k < cap) {
                                out[k] = i == 0 ? s : t;
                                if (pair != NULL)
                                    pair[k] = npair;
                            }
                            k++;
                        }
                        npair++;
                    }
                }
            }
        }
    }
    *n = k;
    return (out != NULL && k > cap) ? EGIX_ENOSPACE : 0;
}

/* ---- index tables -------------------------------------------------------- */

/*
 * The next mask with the same popcount in numeric (= colex) order
 * (Gosper's hack). Used to walk the black sets of a slice in rank
 * order without unranking each.
 */
static uint32_t
next_combination(uint32_t v)
{
    uint32_t t = v | (v - 1);

    return (t + 1) | (((~t & (0u - ~t)) - 1) >> (__builtin_ctz(v) + 1));
}

int
egix_table_create(const egix_slice *s, egix_table **out)
{
    return egix_table_create_order(s, EGIX_ORDER_COLEX, out);
}

int
egix_table_create_order(const egix_slice *s, int order, egix_table **out)
{
    egix_table *t;
    int rc;

    if (egix_slice_check(s) != 0 || order < 0 || order >= EGIX_NORDERS)
        return EGIX_EINVAL;
    t = aligned_alloc(64, (sizeof *t + 63) / 64 * 64);
    if (t == NULL)
        return EGIX_ENOMEM;
    memset(t, 0, sizeof *t);
    t->s = *s;
    t->nbk = s->nbk;
    t->nwk = s->nwk;
    t->nbm = s->nbm;
    t->nwm = s->nwm;
    t->kn = 32 - s->nbm - s->nwm;
    t->ckb = choose(t->kn, t->nbk);
    t->ckw = choose(t->kn - t->nbk, t->nwk);
    t->order = order;
    if (order == EGIX_ORDER_GRAY_W || order == EGIX_ORDER_GRAY_RW) {
        t->kouter = choose(t->kn, t->nwk);
        t->kinner = choose(t->kn - t->nwk, t->nbk);
    } else {
        t->kouter = t->ckb;
        t->kinner = t->ckw;
    }
    if (s->nbm > 0) {
        t->bn = 4 * s->rb + 4;
        t->bbase = choose(t->bn - 4, s->nbm);
        t->nblack = choose(t->bn, s->nbm) - t->bbase;
    } else {
        t->nblack = 1; /* the empty set */
    }
    if (s->nwm > 0) {
        /* In White's frame its men live on rows 0..rw, leading row rw. */
        t->wregion = (uint32_t)((1ull << (4 * s->rw + 4)) - 1);
        t->wlead = 0xFu << (4 * s->rw);
    }

    if (s->nbm > 0 && s->nwm > 0) {
        /* off[br] = men placements of the black sets ranked before br:
         * walk the black sets in colex order, starting at the first one
         * that touches row rb, and add up how many white sets each
         * leaves room for. */
        uint32_t set = colex_unrank(t->bbase, s->nbm);

        t->noff = (t->nblack + 1 + BLOCK - 1) / BLOCK * BLOCK;
        t->nguide = (t->nblack + BLOCK - 1) / BLOCK;
        t->off = malloc((size_t)t->noff * sizeof *t->off);
        t->guide = malloc((size_t)t->nguide * sizeof *t->guide);
        t->bset = malloc((size_t)t->nblack * sizeof *t->bset);
        if (t->off == NULL || t->guide == NULL || t->bset == NULL) {
            rc = EGIX_ENOMEM;
            goto fail;
        }
        t->off[0] = 0;
        for (uint64_t br = 0; br < t->nblack; br++) {
            uint64_t wbase, wcount;

            (void)white_free(t, set, &wbase, &wcount);
            t->off[br + 1] = t->off[br] + wcount;
            t->bset[br] = set;
            set = next_combination(set);
        }
        t->nmen = t->off[t->nblack];
        for (uint64_t i = t->nblack + 1; i < t->noff; i++)
            t->off[i] = OFF_PAD;
        for (uint64_t g = 0; g < t->nguide; g++)
            t->guide[g] = t->off[g * BLOCK];
    } else if (s->nwm > 0) {
        uint64_t wbase;

        (void)white_free(t, 0, &wbase, &t->nmen);
    } else {
        t->nmen = t->nblack;
    }
    if ((rc = slice_total(t->nmen, 32 - t->kn, t->nbk, t->nwk, &t->size)) != 0)
        goto fail;
    *out = t;
    return 0;

fail:
    egix_table_destroy(t);
    return rc;
}

void
egix_table_destroy(egix_table *t)
{
    if (t == NULL)
        return;
    free(t->off);
    free(t->guide);
    free(t->bset);
    free(t);
}

egix_slice
egix_table_slice(const egix_table *t)
{
    return t->s;
}

uint64_t
egix_table_size(const egix_table *t)
{
    return t->size;
}

size_t
egix_table_bytes(const egix_table *t)
{
    return sizeof *t + (size_t)(t->noff + t->nguide) * sizeof(uint64_t) +
           (t->bset != NULL ? (size_t)t->nblack * sizeof(uint32_t) : 0);
}

/* ---- Gray king orders (see KING ORDERS in index.h) -------------------------- */

/* Row snake: the squares of every odd row in reverse, i.e. each odd
 * nibble of the mask bit-reversed. Its own inverse. */
static inline uint32_t
snake32(uint32_t m)
{
    const uint32_t odd = 0xF0F0F0F0u;
    uint32_t x = m & odd;

    x = ((x & 0x55555555u) << 1) | ((x >> 1) & 0x55555555u);
    x = ((x & 0x33333333u) << 2) | ((x >> 2) & 0x33333333u);
    return (m & ~odd) | x;
}

/*
 * Rank of a k-subset {c1 < ... < ck} in the revolving-door order
 * R(n, k) = R(n-1, k), reversed R(n-1, k-1) + {n-1}, in which
 * consecutive subsets differ by moving one element:
 *   rank = sum over i of (-1)^(k-i) (C(ci + 1, i) - 1).
 */
static inline uint64_t
gray_rank(uint32_t set, int k)
{
    int64_t r = 0;

    for (int i = 1; i <= k; i++) {
        int c = __builtin_ctz(set);
        int64_t term = (int64_t)binom[i][c + 1] - 1;

        r += ((k - i) & 1) ? -term : term;
        set &= set - 1;
    }
    return (uint64_t)r;
}

/* Inverse of gray_rank: the top element is the largest c with
 * C(c, k) <= r, and the rest has rank C(c + 1, k) - 1 - r. */
static inline uint32_t
gray_unrank(uint64_t r, int k)
{
    uint32_t set = 0;
    uint32_t r32 = (uint32_t)r;

    for (int j = k; j >= 1; j--) {
        int c = count_le32(binom[j], r32) - 1;

        set |= 1u << c;
        r32 = binom[j][c + 1] - 1 - r32;
    }
    return set;
}

/* Whether a Gray order numbers the snake squares backwards (_RB, _RW):
 * a subset's elements are then counted from the top, n - 1 - c. */
static inline int
gray_reversed(int order)
{
    return order >= EGIX_ORDER_GRAY_RB;
}

/* gray_rank of the k-subset `set` of 0..n-1 with its elements counted
 * from the top (c -> n - 1 - c), without reversing the mask. */
static inline uint64_t
gray_rank_rev(uint32_t set, int k, int n)
{
    int64_t r = 0;

    for (int i = 1; i <= k; i++) {
        int c = n - 1 - (31 - __builtin_clz(set));
        int64_t term = (int64_t)binom[i][c + 1] - 1;

        r += ((k - i) & 1) ? -term : term;
        set &= ~(0x80000000u >> __builtin_clz(set));
    }
    return (uint64_t)r;
}

/* The king part of the index of p in a Gray order (men = its men part). */
static uint64_t
gray_kings(const egix_table *t, uint64_t men, const eng_pos *p, uint32_t kfree)
{
    int wout = t->order == EGIX_ORDER_GRAY_W || t->order == EGIX_ORDER_GRAY_RW;
    uint32_t outer = wout ? p->wk : p->bk, inner = wout ? p->bk : p->wk;
    int nout = wout ? t->nwk : t->nbk, nin = wout ? t->nbk : t->nwk;
    uint32_t kf = snake32(kfree), ko = snake32(outer);
    uint32_t so = pext32(ko, kf), si = pext32(snake32(inner), kf & ~ko);
    uint64_t a, b;

    if (gray_reversed(t->order)) {
        a = gray_rank_rev(so, nout, t->kn);
        b = gray_rank_rev(si, nin, t->kn - nout);
    } else {
        a = gray_rank(so, nout);
        b = gray_rank(si, nin);
    }
    /* Reflected nesting: a level runs backwards on every other entry. */
    if (men & 1)
        a = t->kouter - 1 - a;
    if (((men & t->kouter) ^ a) & 1)
        b = t->kinner - 1 - b;
    return a * t->kinner + b;
}

/* The k-subset of 0..n-1 of Gray rank r, counted from the top if rev. */
static inline uint32_t
gray_subset(uint64_t r, int k, int n, int rev)
{
    uint32_t set = gray_unrank(r, k);

    return rev && n > 0 ? rev32(set) >> (32 - n) : set;
}

static void
gray_unkings(const egix_table *t, uint64_t men, uint64_t kp, uint32_t kfree, eng_pos *out)
{
    int wout = t->order == EGIX_ORDER_GRAY_W || t->order == EGIX_ORDER_GRAY_RW;
    int nout = wout ? t->nwk : t->nbk, nin = wout ? t->nbk : t->nwk;
    int rev = gray_reversed(t->order);
    uint64_t a = kp / t->kinner, b = kp % t->kinner;
    uint32_t kf = snake32(kfree);

    if (((men & t->kouter) ^ a) & 1)
        b = t->kinner - 1 - b;
    if (men & 1)
        a = t->kouter - 1 - a;
    uint32_t ko = pdep32(gray_subset(a, nout, t->kn, rev), kf);
    uint32_t ki = pdep32(gray_subset(b, nin, t->kn - nout, rev), kf & ~ko);
    out->bk = snake32(wout ? ki : ko);
    out->wk = snake32(wout ? ko : ki);
}

/*
 * gray_unkings for a cursor (egix_seek): c->bkr holds the outer kings'
 * rank before its reflection (kp / kinner) and c->cb their squares in the
 * snake frame, for the men of c. A walk in a Gray order moves one king a
 * step, mostly an inner one: then the outer kings are kept, and neither
 * the division nor their unranking is done again (gray_unkings was 47% of
 * `egdb verify`'s samples on a 7-piece king material, whose compressed
 * pages it walks in their file's order).
 */
static void
cursor_gray_kings(const egix_table *t, egix_cursor *c, uint64_t kp, int same_men)
{
    int wout = t->order == EGIX_ORDER_GRAY_W || t->order == EGIX_ORDER_GRAY_RW;
    int nout = wout ? t->nwk : t->nbk, nin = wout ? t->nbk : t->nwk;
    int rev = gray_reversed(t->order);
    uint32_t kf = snake32(c->kfree), ko;
    uint64_t a, b;

    if (same_men && kp - c->bkr * t->kinner < t->kinner) {
        a = c->bkr;
        b = kp - a * t->kinner;
        ko = c->cb;
    } else {
        a = kp / t->kinner;
        b = kp - a * t->kinner;
        ko = pdep32(gray_subset(c->men & 1 ? t->kouter - 1 - a : a, nout, t->kn, rev), kf);
        c->bkr = a;
        c->cb = ko;
    }
    if (((c->men & t->kouter) ^ a) & 1)
        b = t->kinner - 1 - b;
    uint32_t ki = pdep32(gray_subset(b, nin, t->kn - nout, rev), kf & ~ko);
    c->pos.bk = snake32(wout ? ki : ko);
    c->pos.wk = snake32(wout ? ko : ki);
}

int
egix_table_order(const egix_table *t)
{
    return t->order;
}

/* ---- index and unindex ----------------------------------------------------- */

void
egix_prefetch(const egix_table *t, const eng_pos *p)
{
    if (t->off != NULL)
        __builtin_prefetch(&t->off[colex_rank(p->bm) - t->bbase]);
}

/* The men part of p's index (its men placement's number), as in
 * egix_index. The branch depends on the table alone, so it predicts
 * perfectly: the three cases differ only in which side has men. */
static inline uint64_t
men_rank(const egix_table *t, const eng_pos *p)
{
    if (t->off != NULL)
        return t->off[colex_rank(p->bm) - t->bbase] + white_rank(t, p->bm, p->wm);
    if (t->nwm == 0)
        return colex_rank(p->bm) - t->bbase; /* 0 when Black has no men */
    return white_rank(t, 0, p->wm);
}

/* The king part of p's index in the build order: black kings among the
 * squares free of men, white kings among those left after the black. */
static inline uint64_t
kings_rank(const egix_table *t, const eng_pos *p)
{
    uint32_t kfree = ~(p->bm | p->wm);
    uint64_t bkr = colex_rank(pext32(p->bk, kfree));
    uint64_t wkr = colex_rank(pext32(p->wk, kfree & ~p->bk));

    return bkr * t->ckw + wkr;
}

uint64_t
egix_index(const egix_table *t, const eng_pos *p)
{
    uint64_t men = men_rank(t, p);

    if (t->order != EGIX_ORDER_COLEX)
        return men * (t->ckb * t->ckw) + gray_kings(t, men, p, ~(p->bm | p->wm));
    return men * (t->ckb * t->ckw) + kings_rank(t, p);
}

uint64_t
egix_men_rank(const egix_table *t, const eng_pos *p)
{
    return men_rank(t, p);
}

uint64_t
egix_index_at_men(const egix_table *t, uint64_t men, const eng_pos *p)
{
    if (t->order != EGIX_ORDER_COLEX)
        return men * (t->ckb * t->ckw) + gray_kings(t, men, p, ~(p->bm | p->wm));
    return men * (t->ckb * t->ckw) + kings_rank(t, p);
}

uint64_t
egix_index_men(const egix_table *t, const eng_pos *p)
{
    return men_rank(t, p) * (t->ckb * t->ckw);
}

uint64_t
egix_index_kings(const egix_table *t, const eng_pos *p)
{
    return kings_rank(t, p);
}

/* The men of men placement number `men`: the inverse of men_rank. */
static inline void
men_unrank(const egix_table *t, uint64_t men, uint32_t *bm, uint32_t *wm)
{
    if (t->off != NULL) {
        uint64_t br = find_black(t, men);

        *bm = t->bset[br];
        *wm = white_unrank(t, *bm, men - t->off[br]);
    } else if (t->nwm == 0) {
        *bm = colex_unrank(men + t->bbase, t->nbm);
        *wm = 0;
    } else {
        *bm = 0;
        *wm = white_unrank(t, 0, men);
    }
}

void
egix_unindex(const egix_table *t, uint64_t i, eng_pos *out)
{
    uint64_t wkr = 0, bkr = 0, kp = 0, men;
    uint32_t bm = 0, wm = 0, kfree, bk;

    if (t->order != EGIX_ORDER_COLEX) {
        uint64_t k = t->ckb * t->ckw;

        if (k != 1) {
            kp = i % k;
            i /= k;
        }
    } else {
        /* Peel the mixed-radix digits; skip a division whose radix is 1
         * (no kings of that colour), which is most men-heavy slices. */
        if (t->ckw != 1) {
            wkr = i % t->ckw;
            i /= t->ckw;
        }
        if (t->ckb != 1) {
            bkr = i % t->ckb;
            i /= t->ckb;
        }
    }
    men = i;
    men_unrank(t, men, &bm, &wm);

    kfree = ~(bm | wm);
    out->bm = bm;
    out->wm = wm;
    out->stm = ENG_BLACK;
    if (t->order != EGIX_ORDER_COLEX) {
        gray_unkings(t, men, kp, kfree, out);
        return;
    }
    bk = pdep32(colex_unrank(bkr, t->nbk), kfree);
    out->bk = bk;
    out->wk = pdep32(colex_unrank(wkr, t->nwk), kfree & ~bk);
}

/* ---- cursors (incremental unindexing, see index.h) ------------------------ */

void
egix_cursor_init(egix_cursor *c)
{
    memset(c, 0, sizeof *c);
    c->men = UINT64_MAX;
}

/* Places the kings of ranks c->bkr, c->wkr on the squares c->kfree. */
static inline void
cursor_place_kings(const egix_table *t, egix_cursor *c)
{
    c->cb = colex_unrank(c->bkr, t->nbk);
    c->cw = colex_unrank(c->wkr, t->nwk);
    c->pos.bk = pdep32(c->cb, c->kfree);
    c->pos.wk = pdep32(c->cw, c->kfree & ~c->pos.bk);
}

void
egix_seek(const egix_table *t, egix_cursor *c, uint64_t i)
{
    const uint64_t k = t->ckb * t->ckw;
    uint64_t men = i, kp = 0;
    int same_men = 0;

    c->index = i;
    if (k != 1) {
        /* The builder's second phase seeks the frontier in index order,
         * so most seeks stay in the cursor's men placement: then no
         * 64-bit division (i < c->men * k wraps to a large difference). */
        if (c->men != UINT64_MAX && i - c->men * k < k) {
            men = c->men;
            kp = i - men * k;
        } else {
            men = i / k;
            kp = i - men * k;
        }
    }
    /* The men are reused in every order; in a Gray order the kings are
     * numbered per men placement (its parity reflects them), so they are
     * unranked whole (the men's unranking was 40% of a Gray unindexing,
     * in the check of compressed files, which walks their pages so) */
    if (men != c->men) {
        uint32_t bm, wm;

        if (t->off != NULL) {
            /* Seeks in index order (the builders' later passes, whose
             * marked positions of a men-only slice are each another
             * placement) mostly stay in the black set held: then neither
             * its search in the offsets nor White's free squares. */
            if (men - c->blo >= c->bspan) {
                uint64_t br = find_black(t, men);

                c->blo = t->off[br];
                c->bspan = t->off[br + 1] - c->blo;
                c->bset = t->bset[br];
                c->wfree = white_free(t, c->bset, &c->wbase, NULL);
            }
            bm = c->bset;
            wm = rev32(pdep32(colex_unrank(men - c->blo + c->wbase, t->nwm), c->wfree));
        } else {
            men_unrank(t, men, &bm, &wm);
        }
        c->men = men;
        c->pos.bm = bm;
        c->pos.wm = wm;
        c->pos.stm = ENG_BLACK;
        c->kfree = ~(bm | wm);
    } else {
        same_men = 1;
    }
    if (t->order != EGIX_ORDER_COLEX) {
        cursor_gray_kings(t, c, kp, same_men);
        return;
    }
    /* Within the same men and black kings only the white kings move:
     * neither the division nor the black kings' unranking is needed. */
    if (same_men && kp - c->bkr * t->ckw < t->ckw) {
        uint64_t wkr = kp - c->bkr * t->ckw;
        if (wkr != c->wkr) {
            c->wkr = wkr;
            c->cw = colex_unrank(wkr, t->nwk);
            c->pos.wk = pdep32(c->cw, c->kfree & ~c->pos.bk);
        }
        return;
    }
    c->bkr = t->ckw != 1 ? kp / t->ckw : kp;
    c->wkr = kp - c->bkr * t->ckw;
    cursor_place_kings(t, c);
}

void
egix_next(const egix_table *t, egix_cursor *c)
{
    if (t->order != EGIX_ORDER_COLEX) {
        egix_seek(t, c, c->index + 1);
        return;
    }
    c->index++;
    /* The rank counters say when a set is the last of its kind, so the
     * successor below never has to be checked for running off the
     * squares (Gosper's step of a set that is not the last stays within
     * them, and never overflows 32 bits). */
    if (c->wkr + 1 < t->ckw) {
        c->wkr++;
        c->cw = next_combination(c->cw);
        c->pos.wk = pdep32(c->cw, c->kfree & ~c->pos.bk);
        return;
    }
    if (c->bkr + 1 < t->ckb) {
        c->bkr++;
        c->wkr = 0;
        c->cb = next_combination(c->cb);
        c->cw = (1u << t->nwk) - 1; /* the first set: the lowest squares */
        c->pos.bk = pdep32(c->cb, c->kfree);
        c->pos.wk = pdep32(c->cw, c->kfree & ~c->pos.bk);
        return;
    }
    /* The next men placement: unindex it (kings back to their first sets). */
    egix_seek(t, c, c->index);
}

/* ---- errors ------------------------------------------------------------ */

const char *
egix_strerror(int code)
{
    switch (code) {
    case EGIX_OK:
        return "success";
    case EGIX_EINVAL:
        return "slice or position outside the rules";
    case EGIX_ENOMEM:
        return "out of memory";
    case EGIX_ERANGE:
        return "count does not fit in 64 bits";
    case EGIX_ENOSPACE:
        return "output buffer too small";
    case EGIX_ENAME:
        return "malformed slice name";
    default:
        return "unknown error";
    }
}

int
egix_slices_alloc(int npieces, egix_slice **out, int **pair, size_t *n)
{
    size_t k;
    int rc = egix_slices(npieces, NULL, NULL, 0, &k);
    if (rc != 0)
        return rc;
    egix_slice *sl = malloc((k ? k : 1) * sizeof *sl);
    int *pr = pair ? malloc((k ? k : 1) * sizeof *pr) : NULL;
    if (!sl || (pair && !pr)) {
        free(sl);
        free(pr);
        return EGIX_ENOMEM;
    }
    rc = egix_slices(npieces, sl, pr, k, n);
    if (rc != 0) {
        free(sl);
        free(pr);
        return rc;
    }
    *out = sl;
    if (pair)
        *pair = pr;
    return 0;
}
