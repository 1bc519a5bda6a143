/*
 * decompress.c - opening compressed slices and decoding their blocks.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <xxhash.h>

#include "egdb/decompress.h"
#include "egdb/le.h"
#include "egdb/egdb.h"

/* ---- helpers ---------------------------------------------------------- */

typedef struct fill_ctx {
    const egdc_slice *e;
    uint32_t block;
} fill_ctx;

static int
fill_block(void *ctx, uint8_t *out)
{
    fill_ctx *f = ctx;
    return egdc_decode(f->e, f->block, out);
}

static int
one_value(void *ctx, uint32_t pos)
{
    fill_ctx *f = ctx;
    return egdc_decode_one(f->e, f->block, pos);
}

static const egca_source source = {fill_block, one_value};

/* ---- functions -------------------------------------------------------- */

int
egdc_open(const char *dir, const egix_slice *s, egdc_slice **out, char *err, size_t errlen)
{
    char name[EGIX_NAME_MAX], path[4096];
    egix_slice_name(s, name, sizeof name);
    snprintf(path, sizeof path, "%s/%s.cwl", dir, name);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        return errno == ENOENT ? EGDB_EMISSING : EGDB_EIO;
    }
    struct stat st;
    if (fstat(fd, &st) != 0 || st.st_size < EGCD_TABLE_OFFSET) {
        snprintf(err, errlen, "%s: too short for a compressed slice (%lld bytes)", path,
                 (long long)st.st_size);
        close(fd);
        return EGDB_ECORRUPT;
    }
    void *map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_SHARED, fd, 0);
    close(fd);
    if (map == MAP_FAILED) {
        snprintf(err, errlen, "%s: mmap: %s", path, strerror(errno));
        return EGDB_EIO;
    }
    egdc_slice *e = aligned_alloc(64, (sizeof *e + 63) / 64 * 64); /* hot line first */
    if (e)
        memset(e, 0, sizeof *e);
    if (!e) {
        munmap(map, (size_t)st.st_size);
        return EGDB_ENOMEM;
    }
    e->map = map;
    e->map_len = (size_t)st.st_size;
    e->slice = *s;
    snprintf(e->path, sizeof e->path, "%.250s", path);
    int rc = egcd_header_decode(map, &e->h);
    uint64_t size = 0;
    const char *why = NULL;
    if (rc == -1)
        why = "not a compressed slice file (bad magic)";
    else if (rc == -2)
        why = "unsupported format version";
    else if (rc == -3)
        why = "header checksum mismatch";
    else if (!egix_slice_equal(&e->h.slice, s) || egix_size(s, &size) != 0 ||
             size != e->h.positions)
        why = "header names another slice or size";
    else if (e->h.order >= EGIX_NORDERS)
        why = "unknown king order";
    else if (e->h.block_shift < 6 || e->h.block_shift > EGCD_BLOCK_SHIFT ||
             e->h.nblocks != (uint32_t)((size + (1u << e->h.block_shift) - 1) >> e->h.block_shift))
        why = "impossible block layout";
    else if ((uint64_t)e->map_len !=
             EGCD_TABLE_OFFSET + ((uint64_t)2 * e->h.nblocks + 1) * 4 + e->h.data_bytes)
        why = "file size does not match its header (truncated or padded)";
    if (!why) {
        const uint8_t *codes = e->map + EGCD_CODES_OFFSET;
        e->offsets = e->map + EGCD_TABLE_OFFSET;
        e->sums = e->offsets + ((size_t)e->h.nblocks + 1) * 4;
        e->data = e->sums + (size_t)e->h.nblocks * 4;
        if (XXH3_64bits(codes, (size_t)EGCD_NSYM + ((size_t)2 * e->h.nblocks + 1) * 4) !=
            e->h.table_hash)
            why = "block table checksum mismatch";
        else if (egcd_decoder_init(&e->dec, codes) != 0)
            why = "invalid prefix code";
        else if (egle_get32(e->offsets + (size_t)e->h.nblocks * 4) != e->h.data_bytes)
            why = "block table does not end at the data end";
    }
    if (why) {
        snprintf(err, errlen, "%s: %s", path, why);
        egdc_close(e);
        return EGDB_ECORRUPT;
    }
    if (egix_table_create_order(s, e->h.order, &e->table) != 0) {
        egdc_close(e);
        return EGDB_ENOMEM;
    }
    *out = e;
    return 0;
}

void
egdc_close(egdc_slice *e)
{
    if (!e)
        return;
    if (e->map)
        munmap((void *)e->map, e->map_len);
    egix_table_destroy(e->table);
    free(e);
}

/* Block b's bytes after checking them: 0 and *src, *len, *n (positions),
 * or EGDB_ECORRUPT. */
static int
block_bytes(const egdc_slice *e, uint32_t b, const uint8_t **src, uint32_t *len, uint32_t *n)
{
    uint32_t start = egle_get32(e->offsets + (size_t)b * 4),
             end = egle_get32(e->offsets + (size_t)b * 4 + 4);
    uint64_t bsize = 1ull << e->h.block_shift, first = (uint64_t)b << e->h.block_shift;
    *n = (uint32_t)(e->h.positions - first < bsize ? e->h.positions - first : bsize);
    if (end < start || end > e->h.data_bytes)
        return EGDB_ECORRUPT;
    if ((uint32_t)XXH3_64bits(e->data + start, end - start) != egle_get32(e->sums + (size_t)b * 4))
        return EGDB_ECORRUPT;
    *src = e->data + start;
    *len = end - start;
    return 0;
}

int
egdc_decode(const egdc_slice *e, uint32_t b, uint8_t *out)
{
    const uint8_t *src;
    uint32_t len, n;
    if (block_bytes(e, b, &src, &len, &n) != 0 || egcd_decode_block(&e->dec, src, len, n, out) != 0)
        return EGDB_ECORRUPT;
    return 0;
}

int
egdc_decode_one(const egdc_slice *e, uint32_t b, uint32_t pos)
{
    const uint8_t *src;
    uint32_t len, n;
    if (block_bytes(e, b, &src, &len, &n) != 0 || pos >= n)
        return EGDB_ECORRUPT;
    int v = egcd_decode_value(&e->dec, src, len, n, pos);
    return v > 0 ? v : EGDB_ECORRUPT;
}

int
egdc_value(const egdc_slice *e, egca_cache *cache, uint64_t i)
{
    fill_ctx f = {e, (uint32_t)(i >> e->h.block_shift)};
    uint32_t pos = (uint32_t)(i & ((1ull << e->h.block_shift) - 1));
    return egca_value(cache, e->block_base + f.block, pos, &source, &f);
}

void
egdc_prefetch(const egdc_slice *e, const egca_cache *cache, uint64_t i)
{
    egca_prefetch(cache, e->block_base + (uint32_t)(i >> e->h.block_shift),
                  (uint32_t)(i & ((1ull << e->h.block_shift) - 1)));
}
