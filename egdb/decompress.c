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
    char version[200];
    unsigned fv = ((const uint8_t *)map)[7];
    snprintf(version, sizeof version,
             "format version %u, this program reads version %d (%s%.40s%s)", fv, EGCD_VERSION,
             fv < EGCD_VERSION ? "an older format: `checkers egdb compress --db "
                               : "a newer program",
             fv < EGCD_VERSION ? dir : "",
             fv < EGCD_VERSION ? "` rewrites it from the build files" : " wrote it");
    if (rc == -1)
        why = "not a compressed slice file (bad magic)";
    else if (rc == -2)
        why = version;
    else if (rc == -3)
        why = "header checksum mismatch";
    else if (!egix_slice_equal(&e->h.slice, s) || egix_size(s, &size) != 0 ||
             size != e->h.positions)
        why = "header names another slice or size";
    else if (e->h.order >= EGIX_NORDERS)
        why = "unknown king order";
    else if (e->h.page_shift < 6 || e->h.page_shift > EGCD_PAGE_SHIFT ||
             ((size + (1u << e->h.page_shift) - 1) >> e->h.page_shift) > UINT32_MAX ||
             e->h.nblocks > ((size + (1u << e->h.page_shift) - 1) >> e->h.page_shift) ||
             (size > 0 && e->h.nblocks == 0))
        why = "impossible block layout";
    else if (e->h.data_bytes > UINT32_MAX || /* offsets are u32; no wrap below */
             (uint64_t)e->map_len !=
                 EGCD_TABLE_OFFSET + egcd_table_bytes(e->h.nblocks) + e->h.data_bytes)
        why = "file size does not match its header (truncated or padded)";
    if (!why) {
        const uint8_t *codes = e->map + EGCD_CODES_OFFSET;
        e->npages = (uint32_t)((size + (1u << e->h.page_shift) - 1) >> e->h.page_shift);
        e->offsets = e->map + EGCD_TABLE_OFFSET;
        e->sums = e->offsets + ((size_t)e->h.nblocks + 1) * 4;
        e->pages = e->sums + (size_t)e->h.nblocks * 4;
        e->data = e->pages + e->h.nblocks;
        if (XXH3_64bits(codes, (size_t)EGCD_NSYM + egcd_table_bytes(e->h.nblocks)) !=
            e->h.table_hash)
            why = "block table checksum mismatch";
        else if (egcd_decoder_init(&e->dec, codes) != 0)
            why = "invalid prefix code";
        else if (egle_get32(e->offsets + (size_t)e->h.nblocks * 4) != e->h.data_bytes)
            why = "block table does not end at the data end";
    }
    if (!why) {
        /* Which block holds each page (the table names pages per block). */
        e->page_block = malloc(((size_t)e->npages + 1) * sizeof *e->page_block);
        e->first_page = malloc(((size_t)e->h.nblocks + 1) * sizeof *e->first_page);
        if (!e->page_block || !e->first_page) {
            egdc_close(e);
            return EGDB_ENOMEM;
        }
        uint64_t g = 0;
        for (uint32_t b = 0; b < e->h.nblocks && !why; b++) {
            uint32_t n = e->pages[b];
            if (n == 0 || g + n > e->npages) {
                why = "block page counts do not add up to the slice";
                break;
            }
            e->first_page[b] = (uint32_t)g;
            for (uint32_t k = 0; k < n; k++)
                e->page_block[g + k] = b;
            g += n;
        }
        if (!why && g != e->npages)
            why = "block page counts do not add up to the slice";
        e->first_page[e->h.nblocks] = (uint32_t)g;
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
    free(e->page_block);
    free(e->first_page);
    free(e);
}

/* The bytes of the block holding page g, after checking them: 0 and
 * *src, *len, *total (positions of the block), *skip (of them before
 * page g), *n (positions of page g); or EGDB_ECORRUPT. */
static int
page_bytes(const egdc_slice *e, uint32_t g, const uint8_t **src, uint32_t *len, uint32_t *total,
           uint32_t *skip, uint32_t *n)
{
    uint32_t b = e->page_block[g];
    uint32_t start = egle_get32(e->offsets + (size_t)b * 4),
             end = egle_get32(e->offsets + (size_t)b * 4 + 4);
    const int sh = e->h.page_shift;
    uint64_t first = (uint64_t)e->first_page[b] << sh, last = (uint64_t)e->first_page[b + 1] << sh,
             at = (uint64_t)g << sh;
    if (last > e->h.positions)
        last = e->h.positions;
    *total = (uint32_t)(last - first);
    *skip = (uint32_t)(at - first);
    *n = (uint32_t)((last - at) < (1ull << sh) ? last - at : 1ull << sh);
    if (end < start || end > e->h.data_bytes)
        return EGDB_ECORRUPT;
    if ((uint32_t)XXH3_64bits(e->data + start, end - start) != egle_get32(e->sums + (size_t)b * 4))
        return EGDB_ECORRUPT;
    *src = e->data + start;
    *len = end - start;
    return 0;
}

int
egdc_decode(const egdc_slice *e, uint32_t g, uint8_t *out)
{
    const uint8_t *src;
    uint32_t len, total, skip, n;
    if (page_bytes(e, g, &src, &len, &total, &skip, &n) != 0 ||
        egcd_decode_page(&e->dec, src, len, total, skip, n, out) != 0)
        return EGDB_ECORRUPT;
    return 0;
}

int
egdc_decode_one(const egdc_slice *e, uint32_t g, uint32_t pos)
{
    const uint8_t *src;
    uint32_t len, total, skip, n;
    if (page_bytes(e, g, &src, &len, &total, &skip, &n) != 0 || pos >= n)
        return EGDB_ECORRUPT;
    int v = egcd_decode_value(&e->dec, src, len, total, skip + pos);
    return v > 0 ? v : EGDB_ECORRUPT;
}

int
egdc_value(const egdc_slice *e, egca_cache *cache, uint64_t i)
{
    fill_ctx f = {e, (uint32_t)(i >> e->h.page_shift)};
    uint32_t pos = (uint32_t)(i & ((1ull << e->h.page_shift) - 1));
    return egca_value(cache, e->block_base + f.block, pos, &source, &f);
}

void
egdc_prefetch(const egdc_slice *e, const egca_cache *cache, uint64_t i)
{
    egca_prefetch(cache, e->block_base + (uint32_t)(i >> e->h.page_shift),
                  (uint32_t)(i & ((1ull << e->h.page_shift) - 1)));
}
