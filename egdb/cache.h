/*
 * cache.h - the block cache of the compressed databases (egca_): decoded
 * blocks, evicted least recently used first (by the CLOCK approximation
 * of LRU), shared by all threads. A "block" of this cache is a page of
 * a compressed slice (codec.h, PAGES AND BLOCKS: 8,192 positions, decoded
 * from its file block, which may hold several pages).
 *
 * LAYOUT (why this one)
 *   Blocks are numbered 0..nblocks-1 across the whole database (each
 *   compressed slice owns a contiguous range). A slot table of one u64 a
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
 * ADMISSION
 *   A cache smaller than the set admits a block on its second miss within
 *   a window, not its first (the "doorkeeper" of TinyLFU, Einziger et
 *   al.): a block missed once is answered by decoding the runs up to the
 *   position only (half a block on average, nothing written), and a bit
 *   remembers it; the bits are cleared after as many first misses as the
 *   cache has entries. Uniformly random probing touches most blocks of
 *   the largest slices once in a long while: keeping them would evict
 *   the blocks of the small databases that capture resolution reads over
 *   and over, and decoding them whole costs twice the partial decode.
 *   A cache that holds every block admits on the first miss.
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

/* Where a missing block comes from. fill decodes the whole block into
 * out (entry_bytes, 8-byte aligned); one decodes the value of position
 * pos only. Each returns 0 / the value 1..3, or a negative code, which
 * egca_value passes back. */
typedef struct egca_source {
    int (*fill)(void *ctx, uint8_t *out);
    int (*one)(void *ctx, uint32_t pos);
} egca_source;

/*
 * egca_create - a cache of about `bytes` bytes of decoded blocks of
 * entry_bytes each (at least one entry) for blocks 0..nblocks-1.
 * RETURN the cache, or NULL when out of memory.
 */
egca_cache *egca_create(size_t bytes, size_t entry_bytes, uint32_t nblocks);

void egca_destroy(egca_cache *c);

/*
 * egca_value - the 2-bit value at position `pos` of block `block`
 * (< nblocks). On a miss (see ADMISSION) either the block is decoded by
 * src->fill and inserted, evicting the least recently used entry, or
 * only the value is decoded by src->one.
 * RETURN the value 0..3, or the source's negative code (nothing is
 * inserted).
 */
int egca_value(egca_cache *c, uint32_t block, uint32_t pos, const egca_source *src, void *ctx);

/* Starts loading what egca_value(c, block, pos, ...) will read first (the
 * data byte of a resident cache, else the block's slot word). */
void egca_prefetch(const egca_cache *c, uint32_t block, uint32_t pos);

/* Counters since creation (approximate under concurrent probing). */
void egca_counts(const egca_cache *c, uint64_t *hits, uint64_t *misses, size_t *entries);

#endif /* EGDB_CACHE_H */
