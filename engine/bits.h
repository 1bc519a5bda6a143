/*
 * bits.h - board geometry as mask shifts (internal to the engine module,
 * also used by egdb for fast move-count work).
 *
 * With square n at bit n-1, rows of four alternate between columns
 * 1,3,5,7 (even rows, squares 1-4, 9-12, ...) and 0,2,4,6 (odd rows).
 * A diagonal step is therefore not one uniform shift: "down" (towards
 * higher squares, Black's forward) is +4 or +3 / +5 depending on the row
 * parity, and the masks below remove the squares whose step would leave
 * the board. Each direction is one function; its inverse is the opposite
 * direction, which is what the "who can jump" tests rely on:
 *
 *   down1: even row +4, odd row +3 (not from the first column)
 *   down2: even row +5 (not from the last column), odd row +4
 *   up1  = inverse of down1: odd row -4, even row -3 (not last column)
 *   up2  = inverse of down2: even row -4, odd row -5 (not first column)
 *
 * All functions are pure and work on any set of squares at once.
 */
#ifndef ENGINE_BITS_H
#define ENGINE_BITS_H

#include <stdint.h>

#define BITS_EVEN 0x0F0F0F0Fu /* rows 0,2,4,6 */
#define BITS_ODD 0xF0F0F0F0u  /* rows 1,3,5,7 */
#define BITS_P0 0x11111111u   /* first square of each row */
#define BITS_P3 0x88888888u   /* last square of each row  */

static inline uint32_t
bits_down1(uint32_t x)
{
    return ((x & BITS_EVEN) << 4) | ((x & BITS_ODD & ~BITS_P0) << 3);
}

static inline uint32_t
bits_down2(uint32_t x)
{
    return ((x & BITS_EVEN & ~BITS_P3) << 5) | ((x & BITS_ODD) << 4);
}

static inline uint32_t
bits_up1(uint32_t x)
{
    return ((x & BITS_ODD) >> 4) | ((x & BITS_EVEN & ~BITS_P3) >> 3);
}

static inline uint32_t
bits_up2(uint32_t x)
{
    return ((x & BITS_EVEN) >> 4) | ((x & BITS_ODD & ~BITS_P0) >> 5);
}

/* Squares attacked in one step by any of the pieces in x, per direction
 * index: 0 = down1, 1 = down2, 2 = up1, 3 = up2. */
static inline uint32_t
bits_step(int dir, uint32_t x)
{
    switch (dir) {
    case 0:
        return bits_down1(x);
    case 1:
        return bits_down2(x);
    case 2:
        return bits_up1(x);
    default:
        return bits_up2(x);
    }
}

static inline int
bits_popcount(uint32_t x)
{
    return __builtin_popcount(x);
}

static inline int
bits_lsb(uint32_t x)
{
    return __builtin_ctz(x);
}

/* Reverses the 32 bits: square n <-> square 33 - n (the 180-degree turn). */
static inline uint32_t
bits_reverse(uint32_t x)
{
    x = ((x >> 1) & 0x55555555u) | ((x & 0x55555555u) << 1);
    x = ((x >> 2) & 0x33333333u) | ((x & 0x33333333u) << 2);
    x = ((x >> 4) & 0x0F0F0F0Fu) | ((x & 0x0F0F0F0Fu) << 4);
    return __builtin_bswap32(x);
}

#endif /* ENGINE_BITS_H */
