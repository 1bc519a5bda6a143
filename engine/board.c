/*
 * board.c - positions as values: the start position, the colour flip,
 * the canonical form, keys and validation.
 */
#include <stdio.h>
#include <string.h>

#include <xxhash.h>
#if defined(__GFNI__) && defined(__SSSE3__)
#include <immintrin.h>
#endif

#include "engine/bits.h"
#include "engine/engine.h"

/* ---- functions -------------------------------------------------------- */

void
eng_start(eng_pos *p)
{
    p->bm = 0x00000FFFu; /* squares 1-12  */
    p->wm = 0xFFF00000u; /* squares 21-32 */
    p->bk = 0;
    p->wk = 0;
    p->stm = ENG_BLACK;
}

/*
 * The 180-degree turn maps square n to 33 - n, i.e. bit i to bit 31 - i,
 * which is a plain bit reversal. Black's men moved towards higher squares;
 * after the turn the same men move towards lower squares, which is White's
 * direction, so swapping the colours gives a position of the same game.
 */
eng_pos
eng_flip(const eng_pos *p)
{
#if defined(__GFNI__) && defined(__SSSE3__)
    /* The four masks are 16 contiguous bytes: one affine transform
     * reverses the bits of every byte, one byte shuffle reverses the bytes
     * of each mask and swaps the colours (bm <-> wm, bk <-> wk). This is a
     * hot path of the database builder (every successor is flipped). */
    __m128i v = _mm_loadu_si128((const __m128i *)(const void *)p);
    v = _mm_gf2p8affine_epi64_epi8(v, _mm_set1_epi64x(0x8040201008040201ll), 0);
    v = _mm_shuffle_epi8(v, _mm_setr_epi8(7, 6, 5, 4, 3, 2, 1, 0, 15, 14, 13, 12, 11, 10, 9, 8));
    eng_pos f;
    _mm_storeu_si128((__m128i *)(void *)&f, v);
    f.stm = p->stm ^ 1;
    return f;
#else
    eng_pos f;
    f.bm = bits_reverse(p->wm);
    f.wm = bits_reverse(p->bm);
    f.bk = bits_reverse(p->wk);
    f.wk = bits_reverse(p->bk);
    f.stm = p->stm ^ 1;
    return f;
#endif
}

eng_pos
eng_canonical(const eng_pos *p)
{
    return p->stm == ENG_BLACK ? *p : eng_flip(p);
}

/*
 * The key hashes the canonical form, so a position and its twin share
 * it; the masks are packed little-endian so keys are the same on every
 * machine (they are stored in LMDB files and compared across runs).
 */
uint64_t
eng_key(const eng_pos *p)
{
    eng_pos c = eng_canonical(p);
    uint32_t m[4] = {c.bm, c.wm, c.bk, c.wk};
    unsigned char buf[16];
    for (int i = 0; i < 4; i++) {
        buf[4 * i + 0] = (unsigned char)(m[i]);
        buf[4 * i + 1] = (unsigned char)(m[i] >> 8);
        buf[4 * i + 2] = (unsigned char)(m[i] >> 16);
        buf[4 * i + 3] = (unsigned char)(m[i] >> 24);
    }
    return XXH3_64bits(buf, sizeof buf);
}

int
eng_equal(const eng_pos *a, const eng_pos *b)
{
    return a->bm == b->bm && a->wm == b->wm && a->bk == b->bk && a->wk == b->wk && a->stm == b->stm;
}

int
eng_pieces(const eng_pos *p)
{
    return bits_popcount(p->bm | p->wm | p->bk | p->wk);
}

int
eng_validate(const eng_pos *p, char *err, size_t errlen)
{
    char dummy[1];
    if (err == NULL) {
        err = dummy;
        errlen = sizeof dummy;
    }
    if (p->stm != ENG_BLACK && p->stm != ENG_WHITE) {
        snprintf(err, errlen, "side to move is %d, not black (0) or white (1)", p->stm);
        return ENG_EFEN;
    }
    const uint32_t m[4] = {p->bm, p->wm, p->bk, p->wk};
    for (int i = 0; i < 4; i++)
        for (int j = i + 1; j < 4; j++)
            if (m[i] & m[j]) {
                snprintf(err, errlen, "square %d holds two pieces", bits_lsb(m[i] & m[j]) + 1);
                return ENG_EFEN;
            }
    if (p->bm & ENG_ROW7) {
        snprintf(err, errlen, "black man on square %d, its crowning row",
                 bits_lsb(p->bm & ENG_ROW7) + 1);
        return ENG_EFEN;
    }
    if (p->wm & ENG_ROW0) {
        snprintf(err, errlen, "white man on square %d, its crowning row",
                 bits_lsb(p->wm & ENG_ROW0) + 1);
        return ENG_EFEN;
    }
    int nb = bits_popcount(p->bm | p->bk), nw = bits_popcount(p->wm | p->wk);
    if (nb > ENG_MAX_PIECES || nw > ENG_MAX_PIECES) {
        snprintf(err, errlen, "%s has %d pieces; at most %d",
                 nb > ENG_MAX_PIECES ? "black" : "white", nb > ENG_MAX_PIECES ? nb : nw,
                 ENG_MAX_PIECES);
        return ENG_EFEN;
    }
    return 0;
}
