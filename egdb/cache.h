/*
 * cache.h - the block cache of the compressed databases (egca_): decoded
 * blocks, evicted least recently used first (by the CLOCK approximation
 * of LRU), shared by all threads.
 *
 * LAYOUT (why this one)
 *   Blocks are numbered 0..nblocks-1 across the whole database (each
 *   compressed slice owns a contiguous range). A slot table of one u32 a
 *   block says which entry, if any, holds it, so a hit costs one read of
 *   the slot (the table is 8 bytes per block, 8 bits per 1,000 positions
 *   at 8,192-position blocks, small enough to stay in the CPU caches)
 *   and of the one data byte: no hash chain, no lock, no atomic
 *   read-modify-write. A hash table with chains and a lock per
 *   shard cost three dependent cache misses and two atomic operations a
 *   hit (measured: 726 ns against 159 ns for a raw 2-bit lookup). The
 *   decoded data sit in one allocation backed by huge pages where the
 *   kernel allows it (madvise), so a random hit rarely misses the TLB.
 *
 * THREADS
 *   Readers take no lock. The slot word is the entry's sequence lock: it
 *   holds the entry number and a generation that changes on every
 *   insertion. The single writer (holding the cache's mutex, taken only
 *   on a miss) clears the victim's old slot before it overwrites the
 *   entry's data and publishes the new slot after; a reader reads the
 *   slot, the data byte, then the slot again, and if the two slot words
 *   differ treats the read as a miss (the locked path), so it never
 *   returns a value of another block. Decoding happens outside the lock.
 *
 * EVICTION
 *   CLOCK: a hit sets the reference bit of its slot word (only if clear,
 *   so a hot slot is not written on every hit); the hand clears bits
 *   until it finds an entry not used since its last pass.
 *
 * All memory is allocated at creation, so a probe never allocates.
 * The hit and miss counters are per-stripe and not atomic read-modify-
 * write (an atomic increment on every hit costs more than the hit): with
 * several threads probing at once a few increments may be lost.
 */
#ifndef EGDB_CACHE_H
#define EGDB_CACHE_H

#include <stddef.h>
#include <stdint.h>

typedef struct egca_cache egca_cache;

/* Fills out (entry_bytes, 8-byte aligned) with the decoded block; returns
 * 0 or a negative code, which egca_value passes back. */
typedef int (*egca_fill_fn)(void *ctx, uint8_t *out);

/*
 * egca_create - a cache of about `bytes` bytes of decoded blocks of
 * entry_bytes each (at least one entry) for blocks 0..nblocks-1.
 * RETURN the cache, or NULL when out of memory.
 */
egca_cache *egca_create(size_t bytes, size_t entry_bytes, uint32_t nblocks);

void egca_destroy(egca_cache *c);

/*
 * egca_value - the 2-bit value at position `pos` of block `block`
 * (< nblocks); on a miss the block is decoded by fill(ctx, buffer) and
 * inserted, evicting the least recently used entry.
 * RETURN the value 0..3, or fill's negative code (nothing is inserted).
 */
int egca_value(egca_cache *c, uint32_t block, uint32_t pos, egca_fill_fn fill, void *ctx);

/* Starts loading what egca_value(c, block, pos, ...) will read first (the
 * data byte of a resident cache, else the block's slot word). */
void egca_prefetch(const egca_cache *c, uint32_t block, uint32_t pos);

/* Counters since creation (approximate under concurrent probing). */
void egca_counts(const egca_cache *c, uint64_t *hits, uint64_t *misses, size_t *entries);

#endif /* EGDB_CACHE_H */
