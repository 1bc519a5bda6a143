/*
 * le.h - little-endian integers in file headers and tables, the same on
 * every host (internal to the egdb module: store.c, codec.c, partial.c,
 * decompress.c).
 */
#ifndef EGDB_LE_H
#define EGDB_LE_H

#include <stdint.h>

#include "egdb/index.h"

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

static inline void
egle_put32(unsigned char *b, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        b[i] = (unsigned char)(v >> (8 * i));
}

static inline uint32_t
egle_get32(const unsigned char *b)
{
    return (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
}

/* A slice as every egdb file header stores it: nbk nwk nbm nwm rb rw, one
 * byte each (the ranks as signed bytes, -1 for a side without men). */
static inline void
egle_put_slice(unsigned char *b, const egix_slice *s)
{
    b[0] = (unsigned char)s->nbk;
    b[1] = (unsigned char)s->nwk;
    b[2] = (unsigned char)s->nbm;
    b[3] = (unsigned char)s->nwm;
    b[4] = (unsigned char)(int8_t)s->rb;
    b[5] = (unsigned char)(int8_t)s->rw;
}

static inline void
egle_get_slice(const unsigned char *b, egix_slice *s)
{
    s->nbk = (int8_t)b[0];
    s->nwk = (int8_t)b[1];
    s->nbm = (int8_t)b[2];
    s->nwm = (int8_t)b[3];
    s->rb = (int8_t)b[4];
    s->rw = (int8_t)b[5];
}

#endif /* EGDB_LE_H */
