/*
 * cache.h - the block cache of the compressed databases (egca_): decoded
 * blocks, evicted least recently used first (by the CLOCK approximation
 * of LRU), shared by all threads.
 *
 * The cache is split into shards by key, each with its own lock and CLOCK
 * hand, so threads probing different blocks rarely wait for each other.
 * All memory is allocated at creation (a fixed number of entries of a
 * fixed size), so a probe never allocates.
 *
 * THREAD SAFETY: every function but create/destroy may be called from any
 * number of threads at once.
 */
#ifndef EGDB_CACHE_H
#define EGDB_CACHE_H

#include <stddef.h>
#include <stdint.h>

typedef struct egca_cache egca_cache;

/* Fills out (entry_bytes) with the decoded block; returns 0 or a negative
 * code, which egca_value passes back. */
typedef int (*egca_fill_fn)(void *ctx, uint8_t *out);

/*
 * egca_create - a cache of about `bytes` bytes of decoded blocks of
 * entry_bytes each (at least one entry per shard).
 * RETURN the cache, or NULL when out of memory.
 */
egca_cache *egca_create(size_t bytes, size_t entry_bytes);

void egca_destroy(egca_cache *c);

/*
 * egca_value - the 2-bit value at position `pos` of block `key`; on a
 * miss the block is decoded by fill(ctx, buffer) and inserted, evicting
 * the least recently used block of its shard.
 * RETURN the value 0..3, or fill's negative code (nothing is inserted).
 */
int egca_value(egca_cache *c, uint64_t key, uint32_t pos, egca_fill_fn fill, void *ctx);

/* Counters since creation. */
void egca_counts(const egca_cache *c, uint64_t *hits, uint64_t *misses, size_t *entries);

#endif /* EGDB_CACHE_H */
