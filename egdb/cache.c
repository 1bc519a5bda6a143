/*
 * cache.c - sharded CLOCK (approximate LRU) cache of decoded blocks (interface in cache.h).
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "egdb/cache.h"

/* ---- constants -------------------------------------------------------- */

#define NSHARDS 64
#define EMPTY_KEY UINT64_MAX

/* ---- types ------------------------------------------------------------ */

typedef struct entry {
    uint64_t key;
    struct entry *chain; /* hash chain */
    uint8_t *data;
    uint8_t referenced; /* CLOCK bit: used since the hand last passed */
} entry;

/*
 * Each shard evicts by CLOCK, the usual approximation of least recently
 * used: a hit only sets its entry's bit (in the cache line it reads
 * anyway) instead of relinking a list, which on random probes costs two
 * or three extra cache misses; the hand clears bits until it finds an
 * entry not used since its last pass.
 */
typedef struct shard {
    pthread_mutex_t lock;
    entry **buckets;
    size_t nbuckets;
    entry *entries; /* per_shard entries of this shard */
    size_t hand;
} __attribute__((aligned(64))) shard;

struct egca_cache {
    size_t entry_bytes, per_shard;
    shard shards[NSHARDS];
    entry *entries;
    uint8_t *blob;
    _Atomic uint64_t hits, misses;
};

/* ---- helpers ---------------------------------------------------------- */

static uint64_t
mix(uint64_t k)
{
    k ^= k >> 33;
    k *= 0xff51afd7ed558ccdull;
    k ^= k >> 33;
    return k;
}

static entry **
find_slot(shard *s, uint64_t key)
{
    entry **pp = &s->buckets[mix(key) % s->nbuckets];
    while (*pp && (*pp)->key != key)
        pp = &(*pp)->chain;
    return pp;
}

/* ---- functions -------------------------------------------------------- */

egca_cache *
egca_create(size_t bytes, size_t entry_bytes)
{
    egca_cache *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    size_t total = bytes / (entry_bytes + sizeof(entry) + 2 * sizeof(entry *));
    c->per_shard = total / NSHARDS ? total / NSHARDS : 1;
    c->entry_bytes = entry_bytes;
    size_t n = c->per_shard * NSHARDS;
    c->entries = calloc(n, sizeof *c->entries);
    c->blob = malloc(n * entry_bytes);
    if (!c->entries || !c->blob) {
        free(c->entries);
        free(c->blob);
        free(c);
        return NULL;
    }
    for (int i = 0; i < NSHARDS; i++) {
        shard *s = &c->shards[i];
        pthread_mutex_init(&s->lock, NULL);
        s->nbuckets = 2 * c->per_shard + 1;
        s->buckets = calloc(s->nbuckets, sizeof *s->buckets);
        if (!s->buckets) {
            egca_destroy(c);
            return NULL;
        }
        s->entries = &c->entries[(size_t)i * c->per_shard];
        for (size_t k = 0; k < c->per_shard; k++) {
            entry *e = &s->entries[k];
            e->key = EMPTY_KEY;
            e->data = c->blob + ((size_t)i * c->per_shard + k) * entry_bytes;
        }
    }
    return c;
}

void
egca_destroy(egca_cache *c)
{
    if (!c)
        return;
    for (int i = 0; i < NSHARDS; i++) {
        pthread_mutex_destroy(&c->shards[i].lock);
        free(c->shards[i].buckets);
    }
    free(c->entries);
    free(c->blob);
    free(c);
}

int
egca_value(egca_cache *c, uint64_t key, uint32_t pos, egca_fill_fn fill, void *ctx)
{
    shard *s = &c->shards[mix(key) & (NSHARDS - 1)];
    pthread_mutex_lock(&s->lock);
    entry *e = *find_slot(s, key);
    if (e) {
        int v = (e->data[pos >> 2] >> ((pos & 3) * 2)) & 3;
        e->referenced = 1;
        pthread_mutex_unlock(&s->lock);
        atomic_fetch_add_explicit(&c->hits, 1, memory_order_relaxed);
        return v;
    }
    pthread_mutex_unlock(&s->lock);
    atomic_fetch_add_explicit(&c->misses, 1, memory_order_relaxed);

    /* Decode outside the lock: other threads keep probing meanwhile. */
    uint64_t stackwords[1024]; /* 8-byte aligned, as decoders want */
    uint8_t *stackbuf = (uint8_t *)stackwords;
    uint8_t *buf = c->entry_bytes <= sizeof stackwords ? stackbuf : malloc(c->entry_bytes);
    if (!buf)
        return -4; /* EGDB_ENOMEM */
    int rc = fill(ctx, buf);
    if (rc < 0) {
        if (buf != stackbuf)
            free(buf);
        return rc;
    }
    int v = (buf[pos >> 2] >> ((pos & 3) * 2)) & 3;
    pthread_mutex_lock(&s->lock);
    if (*find_slot(s, key) == NULL) {
        entry *victim;
        for (;;) {
            victim = &s->entries[s->hand];
            s->hand = s->hand + 1 == c->per_shard ? 0 : s->hand + 1;
            if (!victim->referenced)
                break;
            victim->referenced = 0;
        }
        if (victim->key != EMPTY_KEY) {
            entry **pp = find_slot(s, victim->key);
            *pp = victim->chain;
        }
        victim->key = key;
        victim->referenced = 1;
        memcpy(victim->data, buf, c->entry_bytes);
        entry **slot = find_slot(s, key);
        victim->chain = NULL;
        *slot = victim;
    }
    pthread_mutex_unlock(&s->lock);
    if (buf != stackbuf)
        free(buf);
    return v;
}

void
egca_counts(const egca_cache *c, uint64_t *hits, uint64_t *misses, size_t *entries)
{
    *hits = atomic_load(&((egca_cache *)c)->hits);
    *misses = atomic_load(&((egca_cache *)c)->misses);
    *entries = c->per_shard * NSHARDS;
}
