/*
 * posmap.c - a set of exact positions with indices (posmap.h).
 */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "prover/posmap.h"

#define PMAP_MIN 4096 /* first size (a power of 2) */

/* The engine's key is the same for a position and its twin (it keys the
 * canonical position); the side to move tells the twins apart. Slots are
 * always compared on the whole position, so the hash only has to spread. */
static size_t
pmap_hash(const eng_pos *p)
{
    uint64_t h = eng_key(p);
    if (p->stm)
        h ^= 0x9E3779B97F4A7C15ull;
    return (size_t)(h ^ (h >> 29));
}

static int
pmap_same(const pmap_slot *s, const eng_pos *p)
{
    return s->bm == p->bm && s->wm == p->wm && s->bk == p->bk && s->wk == p->wk &&
           s->stm == (uint8_t)p->stm;
}

static eng_pos
pmap_pos(const pmap_slot *s)
{
    eng_pos p = {s->bm, s->wm, s->bk, s->wk, s->stm};
    return p;
}

static void
pmap_empty(pmap_slot *slot, size_t cap)
{
    for (size_t i = 0; i < cap; i++)
        slot[i].idx = UINT32_MAX;
}

long
pmap_find(const pmap *m, const eng_pos *p)
{
    if (m->cap == 0)
        return -1;
    size_t mask = m->cap - 1;
    for (size_t i = pmap_hash(p) & mask;; i = (i + 1) & mask) {
        const pmap_slot *s = &m->slot[i];
        if (s->idx == UINT32_MAX)
            return -1;
        if (pmap_same(s, p))
            return (long)s->idx;
    }
}

/* HUGE PAGES. A lookup in a large map is one random load, and in a map
 * of millions of positions (admission of a worker's proof, the checker's
 * visited set) its time is mostly that load's misses, of the caches and
 * of the TLB: 88% of pmap_find's samples sat on the first slot's load
 * (bench/admit.c, a proof of 1.5 M records, a 96 MB table). A table of
 * 2 MB or more is aligned to 2 MB and asks the kernel for transparent
 * huge pages, which spare the TLB's misses (a hint: without them it
 * works as before). */
#define PMAP_HUGE ((size_t)2 << 20)

static void *
pmap_alloc(size_t bytes)
{
    if (bytes < PMAP_HUGE)
        return malloc(bytes);
    void *v = NULL;
    if (posix_memalign(&v, PMAP_HUGE, bytes) != 0)
        return NULL;
    (void)madvise(v, bytes, MADV_HUGEPAGE);
    return v;
}

void
pmap_prefetch(const pmap *m, const eng_pos *p)
{
    if (m->cap)
        __builtin_prefetch(&m->slot[pmap_hash(p) & (m->cap - 1)]);
}

static int
pmap_grow(pmap *m)
{
    size_t cap = m->cap ? m->cap * 2 : PMAP_MIN;
    if (cap < m->cap || cap > SIZE_MAX / sizeof(pmap_slot))
        return -1;
    pmap_slot *slot = pmap_alloc(cap * sizeof *slot);
    if (!slot)
        return -1;
    pmap_empty(slot, cap);
    for (size_t i = 0; i < m->cap; i++) {
        if (m->slot[i].idx == UINT32_MAX)
            continue;
        eng_pos p = pmap_pos(&m->slot[i]);
        size_t j = pmap_hash(&p) & (cap - 1);
        while (slot[j].idx != UINT32_MAX)
            j = (j + 1) & (cap - 1);
        slot[j] = m->slot[i];
    }
    free(m->slot);
    m->slot = slot;
    m->cap = cap;
    return 0;
}

long
pmap_add(pmap *m, const eng_pos *p, int *added)
{
    long k = pmap_find(m, p);
    if (added)
        *added = k < 0;
    if (k >= 0)
        return k;
    if (m->n >= UINT32_MAX - 1 || ((m->n + 1) * 2 > m->cap && pmap_grow(m) != 0))
        return -1;
    size_t mask = m->cap - 1, i = pmap_hash(p) & mask;
    while (m->slot[i].idx != UINT32_MAX)
        i = (i + 1) & mask;
    pmap_slot *s = &m->slot[i];
    s->bm = p->bm;
    s->wm = p->wm;
    s->bk = p->bk;
    s->wk = p->wk;
    s->stm = (uint8_t)p->stm;
    s->idx = (uint32_t)m->n++;
    return (long)s->idx;
}

void
pmap_each(const pmap *m, void (*fn)(const eng_pos *p, uint32_t idx, void *arg), void *arg)
{
    for (size_t i = 0; i < m->cap; i++)
        if (m->slot[i].idx != UINT32_MAX) {
            eng_pos p = pmap_pos(&m->slot[i]);
            fn(&p, m->slot[i].idx, arg);
        }
}

int
pmap_room(void **v, size_t *cap, size_t k, size_t sz)
{
    if (k < *cap)
        return 0;
    size_t c = *cap ? *cap * 2 : 1024;
    while (c <= k)
        c *= 2;
    if (c > SIZE_MAX / sz)
        return -1;
    void *n = realloc(*v, c * sz);
    if (!n)
        return -1;
    *v = n;
    *cap = c;
    return 0;
}

void
pmap_clear(pmap *m)
{
    if (m->cap)
        pmap_empty(m->slot, m->cap);
    m->n = 0;
}

void
pmap_free(pmap *m)
{
    free(m->slot);
    memset(m, 0, sizeof *m);
}
