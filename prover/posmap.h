/*
 * posmap.h - a set of exact positions (side to move included), each with
 * a small index: the checker's visited set and admission's maps of
 * records and claims (check.c, admit.c) are one of these plus arrays of
 * their own, indexed by it.
 *
 * Open addressing with linear probing, at most half full, keyed by the
 * whole position (never a hash alone: two positions are the same only
 * when all five fields are). Indices are given in order of insertion,
 * 0, 1, 2, ...; they never change when the table grows, so a caller's
 * arrays indexed by them stay valid. A position and its colour-flipped
 * twin are different keys.
 *
 * THREAD SAFETY: none; one map belongs to one walk.
 */
#ifndef PROVER_POSMAP_H
#define PROVER_POSMAP_H

#include <stddef.h>
#include <stdint.h>

#include "engine/engine.h"

typedef struct pmap_slot {
    uint32_t bm, wm, bk, wk;
    uint32_t idx; /* UINT32_MAX: a free slot */
    uint8_t stm;
} pmap_slot;

typedef struct pmap {
    pmap_slot *slot;
    size_t cap; /* a power of 2, or 0 before the first insertion */
    size_t n;   /* positions held; the next index */
} pmap;

/* The index of p, or -1 when p is not in the map. */
long pmap_find(const pmap *m, const eng_pos *p);

/* A hint that p is looked up soon: the processor starts loading its
 * first slot (a large map's lookup is mostly that one miss). */
void pmap_prefetch(const pmap *m, const eng_pos *p);

/* The index of p, added (with index m->n) when missing, *added saying
 * which (may be NULL). RETURN -1 when out of memory. */
long pmap_add(pmap *m, const eng_pos *p, int *added);

/* The position of every slot in use, by index: fn(p, idx, arg). */
void pmap_each(const pmap *m, void (*fn)(const eng_pos *p, uint32_t idx, void *arg), void *arg);

/* pmap_room - makes room for index k in a caller's array (*v, *cap
 * elements of sz bytes) indexed by the map, doubling it as needed.
 * RETURN 0, or -1 when out of memory (*v untouched). */
int pmap_room(void **v, size_t *cap, size_t k, size_t sz);

/* Empties the map, keeping its memory. */
void pmap_clear(pmap *m);

void pmap_free(pmap *m);

#endif /* PROVER_POSMAP_H */
