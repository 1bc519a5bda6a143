/*
 * decompress.h - compressed slices opened for probing (egdc_): mapping a
 * .cwl file, checking it, and reading one position's value through the
 * block cache. Format in codec.h.
 *
 * THREAD SAFETY: an opened slice is read-only; egdc_value may be called
 * from any number of threads (the cache is thread-safe).
 */
#ifndef EGDB_DECOMPRESS_H
#define EGDB_DECOMPRESS_H

#include <stddef.h>
#include <stdint.h>

#include "egdb/cache.h"
#include "egdb/codec.h"
#include "egdb/index.h"

typedef struct egdc_slice {
    /* What every probe reads comes first, in the struct's first cache
     * line; the decoding tables (4 KB) last. */
    egix_table *table;
    uint32_t block_base; /* number of its first page in the cache (egca_) */
    egcd_header h;
    uint32_t npages;      /* pages of 2^h.page_shift positions          */
    uint32_t *page_block; /* npages: the file block holding each page   */
    uint32_t *first_page; /* nblocks + 1: each block's first page       */
    egix_slice slice;
    const uint8_t *map; /* the whole file */
    size_t map_len;
    const uint8_t *offsets; /* nblocks + 1 little-endian u32 */
    const uint8_t *sums;    /* nblocks little-endian u32     */
    const uint8_t *pages;   /* nblocks page counts           */
    const uint8_t *data;
    char path[256];
    egcd_decoder dec;
} egdc_slice;

/*
 * egdc_open - maps and checks "<dir>/<name>.cwl" of slice s: header,
 * version, table checksum, sizes, code, page counts. Block checksums are
 * checked when a page of the block is decoded (or by egdc_check_block).
 * A damaged file is reported with the part that is damaged: "header
 * (bytes 0-79): ...", "code lengths (bytes 80-143): ...", "block table,
 * offsets / block checksums / page counts (bytes ..): ..." (the code
 * lengths and the block table share one checksum; which of them a
 * one-byte change hit is found by checking what the writer makes, see
 * decompress.c).
 * The caller sets block_base before probing through a cache.
 * RETURN 0 and *out (egdc_close), EGDB_EMISSING, EGDB_EIO or
 * EGDB_ECORRUPT with err naming the file and the problem.
 */
int egdc_open(const char *dir, const egix_slice *s, egdc_slice **out, char *err, size_t errlen);

/* egdc_open_file - egdc_open of the file at path (the compressor checks
 * its "<name>.cwl.tmp" so before renaming it); dir only words messages. */
int egdc_open_file(const char *path, const char *dir, const egix_slice *s, egdc_slice **out,
                   char *err, size_t errlen);

void egdc_close(egdc_slice *e);

/*
 * egdc_value - the stored value of index i (in the file's king order,
 * e->table; meaningless for a position whose value was dropped: the
 * caller resolves captures first).
 * RETURN 1..3, or EGDB_ECORRUPT when the block holding it fails its
 * checksum or does not decode.
 */
int egdc_value(const egdc_slice *e, egca_cache *cache, uint64_t i);

/*
 * egdc_decode_one - the value of position pos of page g, decoding only
 * up to it, after checking its block's checksum.
 * RETURN 1..3, or EGDB_ECORRUPT.
 */
int egdc_decode_one(const egdc_slice *e, uint32_t g, uint32_t pos);

/*
 * egdc_check_block - checks file block b (< e->h.nblocks): its checksum,
 * then that its runs decode to exactly its positions.
 * RETURN 0, or EGDB_ECORRUPT with why naming the part: "data, block b
 * (pages .., bytes ..): fails its checksum (block table byte ..)" or
 * "... does not decode to its positions". Thread-safe.
 */
int egdc_check_block(const egdc_slice *e, uint32_t b, char *why, size_t len);

/* Starts loading what egdc_value(e, cache, i) will read first. */
void egdc_prefetch(const egdc_slice *e, const egca_cache *cache, uint64_t i);

/*
 * egdc_decode - decodes page g into out ((page positions + 3) / 4 bytes,
 * 8-byte aligned, whole 64-bit words) after checking its block's
 * checksum.
 * RETURN 0 or EGDB_ECORRUPT.
 */
int egdc_decode(const egdc_slice *e, uint32_t g, uint8_t *out);

#endif /* EGDB_DECOMPRESS_H */
