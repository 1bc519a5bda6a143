/*
 * cache.c - lock-free-read CLOCK cache of decoded blocks (interface and
 * design in cache.h).
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "egdb/cache.h"

/* ---- constants -------------------------------------------------------- */

#define NSTRIPES 64 /* counter stripes, one cache line each */
#define EMPTY_BLOCK UINT32_MAX
/* Slot word: bits 0-31 entry number + 1 (0: not held), 32-62 the insertion
 * generation (so a reader never mistakes a reused entry for its own), 63
 * the CLOCK reference bit. */
#define REF (1ull << 63)
#define ENTRY(w) ((uint32_t)(w))
#define TAG(w) ((w) & ~REF)
#define HUGE_PAGE ((size_t)2 << 20)

/* ---- types ------------------------------------------------------------ */

typedef struct stripe {
    _Atomic uint64_t hits, misses;
} __attribute__((aligned(64))) stripe;

struct egca_cache {
    size_t entry_bytes, nentries, hand;
    uint32_t nblocks;
    int resident;                  /* entry i is block i, nothing is evicted (cache.h) */
    _Atomic uint64_t *slots;       /* per block, see ENTRY / TAG / REF */
    uint64_t generation;           /* insertions so far (under the lock) */
    uint32_t *owner;               /* per entry: the block it holds, or EMPTY_BLOCK */
    _Atomic uint64_t *seen;        /* ADMISSION bits, one a block       */
    _Atomic uint64_t first_misses; /* since the bits were last cleared */
    uint8_t *blob;                 /* nentries * entry_bytes, mmap'ed             */
    size_t blob_len;
    pthread_mutex_t lock; /* held by the one writer (a miss) */
    stripe stripes[NSTRIPES];
};

/* ---- helpers ---------------------------------------------------------- */

/* Adds one without a locked instruction (see cache.h on lost counts). */
static inline void
bump(_Atomic uint64_t *x)
{
    atomic_store_explicit(x, atomic_load_explicit(x, memory_order_relaxed) + 1,
                          memory_order_relaxed);
}

/* Picks the CLOCK victim: the first entry from the hand on whose block's
 * slot has no reference bit, clearing the bits it passes. Caller holds
 * the lock. */
static size_t
victim(egca_cache *c)
{
    for (;;) {
        size_t i = c->hand;
        c->hand = i + 1 == c->nentries ? 0 : i + 1;
        uint32_t b = c->owner[i];
        if (b == EMPTY_BLOCK)
            return i;
        uint64_t w = atomic_fetch_and_explicit(&c->slots[b], ~REF, memory_order_relaxed);
        if (!(w & REF))
            return i;
    }
}

/* Decodes a block into the 8-byte aligned buf (or a heap buffer if the
 * entry is larger); returns it, or NULL with *rc set. */
static uint8_t *
decode(const egca_cache *c, uint64_t *stackwords, size_t stackbytes, const egca_source *src,
       void *ctx, int *rc)
{
    uint8_t *buf = c->entry_bytes <= stackbytes ? (uint8_t *)stackwords : malloc(c->entry_bytes);
    if (!buf) {
        *rc = -4; /* EGDB_ENOMEM */
        return NULL;
    }
    *rc = src->fill(ctx, buf);
    if (*rc < 0) {
        if (buf != (uint8_t *)stackwords)
            free(buf);
        return NULL;
    }
    return buf;
}

/*
 * egca_value when every block has its own entry. A decoded value is never
 * 0 (values are 1..3), and fresh anonymous memory is all zeros, so a 0
 * means "not decoded yet": a hit is the one byte read. Each byte of an
 * entry is written once, from 0 to its final value, under the lock; a
 * concurrent reader sees one or the other.
 */
static int
resident_value(egca_cache *c, stripe *st, uint32_t block, uint32_t pos, const egca_source *src,
               void *ctx)
{
    uint8_t *entry = &c->blob[(size_t)block * c->entry_bytes];
    int v =
        (atomic_load_explicit((const _Atomic uint8_t *)&entry[pos >> 2], memory_order_relaxed) >>
         ((pos & 3) * 2)) &
        3;
    if (v) {
        bump(&st->hits);
        return v;
    }
    bump(&st->misses);
    uint64_t stackwords[1024];
    int rc;
    uint8_t *buf = decode(c, stackwords, sizeof stackwords, src, ctx, &rc);
    if (!buf)
        return rc;
    v = (buf[pos >> 2] >> ((pos & 3) * 2)) & 3;
    pthread_mutex_lock(&c->lock);
    if (!(atomic_load_explicit((const _Atomic uint8_t *)entry, memory_order_relaxed) & 3))
        memcpy(entry, buf, c->entry_bytes); /* position 0 of a decoded block is never 0 */
    pthread_mutex_unlock(&c->lock);
    if (buf != (uint8_t *)stackwords)
        free(buf);
    return v;
}

/* ---- functions -------------------------------------------------------- */

egca_cache *
egca_create(size_t bytes, size_t entry_bytes, uint32_t nblocks)
{
    egca_cache *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    size_t n = bytes / (entry_bytes + sizeof(uint32_t));
    if (n == 0)
        n = 1;
    if (nblocks && n >= nblocks) {
        n = nblocks;
        c->resident = 1;
    }
    c->entry_bytes = entry_bytes;
    c->nentries = n;
    c->nblocks = nblocks;
    pthread_mutex_init(&c->lock, NULL);
    c->blob_len = (n * entry_bytes + HUGE_PAGE - 1) / HUGE_PAGE * HUGE_PAGE;
    void *blob =
        mmap(NULL, c->blob_len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    c->slots = calloc(c->resident || !nblocks ? 1 : nblocks, sizeof *c->slots);
    c->owner = malloc((c->resident ? 1 : n) * sizeof *c->owner);
    c->seen = calloc(c->resident ? 1 : ((size_t)nblocks + 63) / 64 + 1, sizeof *c->seen);
    if (blob == MAP_FAILED || !c->slots || !c->owner || !c->seen) {
        if (blob != MAP_FAILED)
            munmap(blob, c->blob_len);
        free(c->slots);
        free(c->owner);
        free(c->seen);
        pthread_mutex_destroy(&c->lock);
        free(c);
        return NULL;
    }
#ifdef MADV_HUGEPAGE
    madvise(blob, c->blob_len, MADV_HUGEPAGE); /* advisory: fine if refused */
#endif
    c->blob = blob;
    for (size_t i = 0; !c->resident && i < n; i++)
        c->owner[i] = EMPTY_BLOCK;
    return c;
}

void
egca_destroy(egca_cache *c)
{
    if (!c)
        return;
    munmap(c->blob, c->blob_len);
    free(c->slots);
    free(c->owner);
    free(c->seen);
    pthread_mutex_destroy(&c->lock);
    free(c);
}

/* ADMISSION (cache.h): whether this miss is the block's first of the
 * window, remembering it. */
static int
first_miss(egca_cache *c, uint32_t block)
{
    uint64_t bit = 1ull << (block & 63);
    if (atomic_fetch_or_explicit(&c->seen[block >> 6], bit, memory_order_relaxed) & bit)
        return 0;
    if (atomic_fetch_add_explicit(&c->first_misses, 1, memory_order_relaxed) + 1 == c->nentries) {
        atomic_store_explicit(&c->first_misses, 0, memory_order_relaxed);
        for (size_t w = 0; w < ((size_t)c->nblocks + 63) / 64; w++)
            atomic_store_explicit(&c->seen[w], 0, memory_order_relaxed);
    }
    return 1;
}

int
egca_value(egca_cache *c, uint32_t block, uint32_t pos, const egca_source *src, void *ctx)
{
    stripe *st = &c->stripes[block & (NSTRIPES - 1)];
    if (c->resident)
        return resident_value(c, st, block, pos, src, ctx);
    _Atomic uint64_t *sp = &c->slots[block];
    uint64_t w = atomic_load_explicit(sp, memory_order_acquire);
    if (ENTRY(w)) {
        /* The slot word is the entry's sequence lock (cache.h): the data
         * byte is good if the slot still names the same entry after it
         * was read. */
        const _Atomic uint8_t *p =
            (const _Atomic uint8_t *)&c->blob[(size_t)(ENTRY(w) - 1) * c->entry_bytes + (pos >> 2)];
        uint8_t byte = atomic_load_explicit(p, memory_order_relaxed);
        atomic_thread_fence(memory_order_acquire);
        uint64_t w2 = atomic_load_explicit(sp, memory_order_relaxed);
        if (TAG(w2) == TAG(w)) {
            if (!(w2 & REF))
                atomic_fetch_or_explicit(sp, REF, memory_order_relaxed);
            bump(&st->hits);
            return (byte >> ((pos & 3) * 2)) & 3;
        }
    }
    bump(&st->misses);
    if (first_miss(c, block))
        return src->one(ctx, pos);

    /* Decode outside the lock: other threads keep probing meanwhile. */
    uint64_t stackwords[1024]; /* 8-byte aligned, as decoders want */
    uint8_t *stackbuf = (uint8_t *)stackwords;
    int rc;
    uint8_t *buf = decode(c, stackwords, sizeof stackwords, src, ctx, &rc);
    if (!buf)
        return rc;
    int v = (buf[pos >> 2] >> ((pos & 3) * 2)) & 3;

    pthread_mutex_lock(&c->lock);
    if (!ENTRY(atomic_load_explicit(sp, memory_order_relaxed))) {
        /* Not inserted by another thread meanwhile. Unlink the victim's
         * block before its data change, publish the new block after. */
        size_t i = victim(c);
        if (c->owner[i] != EMPTY_BLOCK)
            atomic_store_explicit(&c->slots[c->owner[i]], 0, memory_order_relaxed);
        atomic_thread_fence(memory_order_release);
        memcpy(&c->blob[i * c->entry_bytes], buf, c->entry_bytes);
        c->owner[i] = block;
        c->generation = (c->generation + 1) & 0x7fffffffull;
        atomic_store_explicit(sp, REF | c->generation << 32 | ((uint64_t)i + 1),
                              memory_order_release);
    }
    pthread_mutex_unlock(&c->lock);
    if (buf != stackbuf)
        free(buf);
    return v;
}

void
egca_prefetch(const egca_cache *c, uint32_t block, uint32_t pos)
{
    if (c->resident)
        __builtin_prefetch(&c->blob[(size_t)block * c->entry_bytes + (pos >> 2)]);
    else
        __builtin_prefetch(&c->slots[block]);
}

void
egca_counts(const egca_cache *c, uint64_t *hits, uint64_t *misses, size_t *entries)
{
    uint64_t h = 0, m = 0;
    for (int i = 0; i < NSTRIPES; i++) {
        h += atomic_load_explicit(&((egca_cache *)c)->stripes[i].hits, memory_order_relaxed);
        m += atomic_load_explicit(&((egca_cache *)c)->stripes[i].misses, memory_order_relaxed);
    }
    *hits = h;
    *misses = m;
    *entries = c->nentries;
}
