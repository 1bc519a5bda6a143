/*
 * le.h - little-endian integers in file headers and tables, the same on
 * every host (internal to the egdb module: store.c, codec.c, partial.c,
 * decompress.c).
 */
#ifndef EGDB_LE_H
#define EGDB_LE_H

#include <stdint.h>

static inline void
egle_put64(unsigned char *b, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        b[i] = (unsigned char)(v >> (8 * i));
}

static inline uint64_t
egle_get64(const unsigned char *b)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = (v << 8) | b[i];
    return v;
}

static inline uint32_t
egle_get32(const unsigned char *b)
{
    return (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
}

#endif /* EGDB_LE_H */
