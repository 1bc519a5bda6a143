/*
 * decompress.c - opening compressed slices and decoding their blocks.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
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

/* ---- damage reports --------------------------------------------------- */

/*
 * The parts of a .cwl file, as messages name them (codec.h FILE): each
 * byte belongs to exactly one part and is covered by one checksum, so a
 * changed byte is always found (short of a 2^-32 collision of a block
 * checksum) and named by its part:
 *   header        bytes 0-79, its own checksum (bytes 72-79);
 *   code lengths  bytes 80-143, and the block table after them: one
 *                 checksum for both (header bytes 64-71), so which of
 *                 the two is damaged is found by the checks of
 *                 table_damage below;
 *   data          block b, its own checksum in the block table.
 */

/* Byte ranges of the block table's three arrays. */
static void
table_parts(uint32_t nblocks, size_t *offsets_at, size_t *sums_at, size_t *pages_at,
            size_t *data_at)
{
    *offsets_at = EGCD_TABLE_OFFSET;
    *sums_at = *offsets_at + ((size_t)nblocks + 1) * 4;
    *pages_at = *sums_at + (size_t)nblocks * 4;
    *data_at = *pages_at + nblocks;
}

/*
 * Says which part of the code lengths and block table is damaged, when
 * their common checksum fails (the header, checked first, is intact).
 * What the writer produces is checked part by part, each check catching
 * every one-byte change of its part:
 *   code lengths: a Huffman code is complete (Kraft sum exactly 1, or a
 *     single symbol of length 1), and changing one length changes the
 *     sum;
 *   offsets: start at 0, strictly increase (a block has at least its
 *     first byte) and end at the data size; a change that keeps them in
 *     order moves the boundary between two neighbouring blocks, so those
 *     two, and only those, no longer match their checksums;
 *   page counts: 1..255 each, summing to the slice's pages;
 *   checksums: a changed entry makes its one block mismatch.
 * Damage to more than one byte may be named as one of them.
 */
static void
table_damage(const egdc_slice *e, char *why, size_t len)
{
    const uint8_t *codes = e->map + EGCD_CODES_OFFSET;
    const uint32_t nb = e->h.nblocks;
    size_t offsets_at, sums_at, pages_at, data_at;
    table_parts(nb, &offsets_at, &sums_at, &pages_at, &data_at);
    const char *mismatch = "(the checksum of code lengths and block table fails)";

    uint64_t kraft = 0;
    int used = 0, too_long = 0;
    for (int s = 0; s < EGCD_NSYM; s++) {
        if (codes[s] > EGCD_MAX_BITS)
            too_long = 1;
        else if (codes[s] > 0) {
            kraft += 1ull << (EGCD_MAX_BITS - codes[s]);
            used++;
        }
    }
    if (too_long ||
        !(kraft == 1ull << EGCD_MAX_BITS || (used == 1 && kraft == 1ull << (EGCD_MAX_BITS - 1)))) {
        snprintf(why, len, "code lengths (bytes %d-%d): not a complete prefix code %s",
                 EGCD_CODES_OFFSET, EGCD_TABLE_OFFSET - 1, mismatch);
        return;
    }

    /* Offsets: the first entry out of order is b; the damaged one is b
     * (made smaller) or b - 1 (made larger), whichever leaves its two
     * neighbours in order with room for one byte between them. */
    const uint8_t *off = e->map + offsets_at;
#define OFF(i) ((int64_t)egle_get32(off + (size_t)(i)*4))
    for (uint32_t b = 0; b <= nb; b++) {
        int bad = b == 0 ? OFF(0) != 0 : OFF(b) <= OFF(b - 1);
        if (!bad && b == nb && OFF(b) != (int64_t)e->h.data_bytes)
            bad = 1;
        if (!bad)
            continue;
        uint32_t j = b;
        if (b > 0 && b < nb) {
            int b_fits = OFF(b - 1) + 1 < OFF(b + 1);
            int prev_fits = b - 1 == 0 ? 0 : OFF(b - 2) + 1 < OFF(b);
            /* Both could be: entry b is intact if block b (from entry b
             * to entry b + 1, inside the data area) still matches its
             * checksum. */
            if (b_fits && prev_fits && OFF(b + 1) <= (int64_t)e->h.data_bytes)
                b_fits = (uint32_t)XXH3_64bits(e->map + data_at + OFF(b),
                                               (size_t)(OFF(b + 1) - OFF(b))) !=
                         egle_get32(e->map + sums_at + (size_t)b * 4);
            j = b_fits && !prev_fits ? b : !b_fits && prev_fits ? b - 1 : UINT32_MAX;
        } else if (b == nb && b > 0 && OFF(b) == (int64_t)e->h.data_bytes) {
            j = b - 1; /* the end is right: its predecessor grew */
        }
        if (j != UINT32_MAX)
            snprintf(why, len,
                     "block table, offsets (bytes %zu-%zu): entry %" PRIu32 " (byte %zu) out of "
                     "order %s",
                     offsets_at, sums_at - 1, j, offsets_at + (size_t)j * 4, mismatch);
        else
            snprintf(why, len,
                     "block table, offsets (bytes %zu-%zu): entry %" PRIu32 " or %" PRIu32
                     " (bytes %zu-%zu) out of order %s",
                     offsets_at, sums_at - 1, b - 1, b, offsets_at + (size_t)(b - 1) * 4,
                     offsets_at + (size_t)b * 4 + 3, mismatch);
        return;
    }
#undef OFF

    uint64_t pages = 0;
    int zero = 0;
    for (uint32_t b = 0; b < nb; b++) {
        pages += e->map[pages_at + b];
        zero |= e->map[pages_at + b] == 0;
    }
    if (zero || pages != e->npages) {
        snprintf(why, len,
                 "block table, page counts (bytes %zu-%zu): they add up to %" PRIu64
                 " pages, not the slice's %" PRIu32 "%s %s",
                 pages_at, data_at - 1, pages, e->npages, zero ? ", and a block has none" : "",
                 mismatch);
        return;
    }

    /* The first block, or two neighbouring blocks, whose data no longer
     * match their checksums. */
    uint32_t first = UINT32_MAX, nbad = 0, adjacent = 0;
    for (uint32_t b = 0; b < nb; b++) {
        uint32_t start = egle_get32(off + (size_t)b * 4), end = egle_get32(off + (size_t)b * 4 + 4);
        uint32_t sum = egle_get32(e->map + sums_at + (size_t)b * 4);
        if ((uint32_t)XXH3_64bits(e->map + data_at + start, end - start) == sum)
            continue;
        if (first == UINT32_MAX)
            first = b;
        else if (nbad == 1 && b == first + 1)
            adjacent = 1;
        nbad++;
    }
    if (nbad == 1 || (nbad > 1 && !adjacent)) {
        snprintf(why, len,
                 "block table, block checksums (bytes %zu-%zu): the entry of block %" PRIu32
                 " (byte %zu) does not match the block's data %s",
                 sums_at, pages_at - 1, first, sums_at + (size_t)first * 4, mismatch);
    } else if (nbad > 1) {
        snprintf(why, len,
                 "block table, offsets (bytes %zu-%zu): entry %" PRIu32 " (byte %zu), the "
                 "boundary between blocks %" PRIu32 " and %" PRIu32 ", moved %s",
                 offsets_at, sums_at - 1, first + 1, offsets_at + ((size_t)first + 1) * 4, first,
                 first + 1, mismatch);
    } else {
        snprintf(why, len,
                 "code lengths or block table (bytes %d-%zu): checksum mismatch (every entry "
                 "looks consistent)",
                 EGCD_CODES_OFFSET, data_at - 1);
    }
}

/* ---- functions -------------------------------------------------------- */

int
egdc_open(const char *dir, const egix_slice *s, egdc_slice **out, char *err, size_t errlen)
{
    char name[EGIX_NAME_MAX], path[4096];
    egix_slice_name(s, name, sizeof name);
    snprintf(path, sizeof path, "%s/%s.cwl", dir, name);
    return egdc_open_file(path, dir, s, out, err, errlen);
}

int
egdc_open_file(const char *path, const char *dir, const egix_slice *s, egdc_slice **out, char *err,
               size_t errlen)
{
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
    char version[300], table_why[400];
    unsigned fv = ((const uint8_t *)map)[7];
    /* A version byte that a checksum also disowns is more likely damage
     * than a file of another version: say both. */
    int sum_ok = egle_get64((const uint8_t *)map + 72) == XXH3_64bits(map, 72);
    snprintf(version, sizeof version,
             "header (bytes 0-79): format version %u, this program reads versions %d-%d "
             "(%s%.40s%s)%s",
             fv, EGCD_VERSION_OLDEST, EGCD_VERSION,
             fv < EGCD_VERSION_OLDEST ? "an older format: `checkers egdb compress --db "
                                      : "a newer program",
             fv < EGCD_VERSION_OLDEST ? dir : "",
             fv < EGCD_VERSION_OLDEST ? "` rewrites it from the build files" : " wrote it",
             sum_ok ? "" : "; the header checksum fails too: the version byte may be damaged");
    if (rc == -1)
        why = "header (bytes 0-79): not a compressed slice file (bad magic)";
    else if (rc == -2)
        why = version;
    else if (rc == -3)
        why = "header (bytes 0-79): checksum mismatch";
    else if (!egix_slice_equal(&e->h.slice, s) || egix_size(s, &size) != 0 ||
             size != e->h.positions)
        why = "header (bytes 0-79): names another slice or size";
    else if (e->h.order >= EGIX_NORDERS)
        why = "header (bytes 0-79): unknown king order";
    else if (e->h.page_shift < 6 || e->h.page_shift > EGCD_PAGE_SHIFT ||
             ((size + (1u << e->h.page_shift) - 1) >> e->h.page_shift) > UINT32_MAX ||
             e->h.nblocks > ((size + (1u << e->h.page_shift) - 1) >> e->h.page_shift) ||
             (size > 0 && e->h.nblocks == 0))
        why = "header (bytes 0-79): impossible block layout";
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
            e->h.table_hash) {
            table_damage(e, table_why, sizeof table_why);
            why = table_why;
        } else if (egcd_decoder_init(&e->dec, codes) != 0)
            why = "code lengths (bytes 80-143): invalid prefix code";
        else if (egle_get32(e->offsets + (size_t)e->h.nblocks * 4) != e->h.data_bytes)
            why = "block table: offsets do not end at the data end";
        e->dec.marks = e->h.version >= EGCD_VERSION_MARKS;
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
                why = "block table: page counts do not add up to the slice";
                break;
            }
            e->first_page[b] = (uint32_t)g;
            for (uint32_t k = 0; k < n; k++)
                e->page_block[g + k] = b;
            g += n;
        }
        if (!why && g != e->npages)
            why = "block table: page counts do not add up to the slice";
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

int
egdc_check_block(const egdc_slice *e, uint32_t b, char *why, size_t len)
{
    size_t offsets_at, sums_at, pages_at, data_at;
    table_parts(e->h.nblocks, &offsets_at, &sums_at, &pages_at, &data_at);
    uint32_t start = egle_get32(e->offsets + (size_t)b * 4),
             end = egle_get32(e->offsets + (size_t)b * 4 + 4);
    uint32_t g0 = e->first_page[b], g1 = e->first_page[b + 1] - 1;
    char where[200], pages[64];
    if (g0 == g1)
        snprintf(pages, sizeof pages, "page %" PRIu32, g0);
    else
        snprintf(pages, sizeof pages, "pages %" PRIu32 "-%" PRIu32, g0, g1);
    snprintf(where, sizeof where, "data, block %" PRIu32 " (%s, bytes %zu-%zu)", b, pages,
             data_at + start, data_at + (end > start ? end - 1 : start));
    if (end <= start || end > e->h.data_bytes) {
        snprintf(why, len, "%s: impossible extent in the block table", where);
        return EGDB_ECORRUPT;
    }
    if ((uint32_t)XXH3_64bits(e->data + start, end - start) !=
        egle_get32(e->sums + (size_t)b * 4)) {
        snprintf(why, len, "%s: fails its checksum (block table byte %zu)", where,
                 sums_at + (size_t)b * 4);
        return EGDB_ECORRUPT;
    }
    /* Decoding the block's last page walks every run of the block and
     * checks that they cover exactly its positions. */
    uint64_t buf[(1u << EGCD_PAGE_SHIFT) / 32];
    if (egdc_decode(e, g1, (uint8_t *)buf) != 0) {
        snprintf(why, len, "%s: does not decode to its positions", where);
        return EGDB_ECORRUPT;
    }
    return 0;
}
