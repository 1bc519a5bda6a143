/*
 * test_egdb_compress.c - the compressed databases against the 2-bit build
 * files they come from, and their handling of damage.
 *
 *   - every position of the 1-4 piece databases (both sides to move), and
 *     a seeded sample of 5-piece positions, probes to the same value
 *     through the compressed files (capture and threatened-capture
 *     positions resolved by search) as in the build files, with and
 *     without threatened-capture dropping;
 *   - two threads probing at once get the right values, both with a cache
 *     of three blocks (evictions racing the lock-free reads) and with one
 *     holding every block (first decodes racing each other);
 *   - decoding one position (up to its run only, from the last mark
 *     before it) gives, for every position of every block of the 4-piece
 *     slices, the value that decoding the whole block gives; a mark
 *     changed in any field makes its block fail to decode, and blocks
 *     without marks decode as a format-3 file's;
 *   - the prefix-code builder gives a complete code within the length
 *     limit for skewed frequencies;
 *   - a flipped byte in a block: probes that need it return
 *     EGDB_ECORRUPT (never a value) and egdb_verify names file and block,
 *     also when the block is the slice's last (whose damage verify once
 *     reported as a wrong value of a position probing into it); a byte
 *     changed in each part of a file (header, code lengths, the block
 *     table's offsets, checksums and page counts, data) is named by its
 *     part;
 *     a truncated file and a wrong version make egdb_open fail naming the
 *     file;
 *   - a compressed file that decodes cleanly but holds one wrong value is
 *     found by egdb_verify, against the build file and, without build
 *     files, against the successors;
 *   - each of the compression's own checks refuses a fault made on
 *     purpose (a cursor one step behind, two positions on one index of
 *     another king order, a file whose values differ from those meant),
 *     names the slice, and leaves no compressed file of it.
 * The build files come from egdb_build, itself checked against an
 * independent solver in test_egdb_build.c.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <string.h>
#include <unistd.h>

#include "egdb/codec.h"
#include "egdb/decompress.h"
#include "egdb/egdb.h"
#include "egdb/index.h"
#include "egdb/le.h"
#include "egdb/stage.h" /* egcp_set_fault */
#include "egdb/store.h"
#include "tests/test_util.h"

/* ---- fixture ----------------------------------------------------------- */

typedef struct fixture {
    char dir[256];    /* build files + compressed files (threats dropped)  */
    char dir_nt[256]; /* the same without threat dropping               */
    int pieces;
} fixture;

static uint64_t
rng(uint64_t *s)
{
    *s ^= *s >> 12;
    *s ^= *s << 25;
    *s ^= *s >> 27;
    return *s * 2685821657736338717ull;
}

static int
run(const char *cmd)
{
    return system(cmd);
}

static int
setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    f->pieces = test_sanitized() ? 4 : 5;
    if (!test_tmpdir(f->dir, sizeof f->dir, "test_egdb_compress") ||
        !test_tmpdir(f->dir_nt, sizeof f->dir_nt, "test_egdb_compress_nt"))
        return -1;
    char err[512];
    egdb_build_stats bs;
    egdb_build_opts bo = {f->pieces, 2, NULL, NULL, NULL, 0, 0, 0, NULL};
    if (egdb_build(f->dir, &bo, &bs, err, sizeof err) != 0) {
        fprintf(stderr, "build: %s\n", err);
        return -1;
    }
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "cp %s/*.wld %s/", f->dir, f->dir_nt);
    if (run(cmd) != 0)
        return -1;
    egdb_compress_stats cs;
    egdb_compress_opts co = {f->pieces, 2, 1, NULL, NULL, NULL};
    if (egdb_compress(f->dir, &co, &cs, err, sizeof err) != 0) {
        fprintf(stderr, "compress: %s\n", err);
        return -1;
    }
    co.threats = 0;
    if (egdb_compress(f->dir_nt, &co, &cs, err, sizeof err) != 0) {
        fprintf(stderr, "compress: %s\n", err);
        return -1;
    }
    *state = f;
    return 0;
}

static int
teardown(void **state)
{
    fixture *f = *state;
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "rm -rf %s %s", f->dir, f->dir_nt);
    run(cmd);
    free(f);
    return 0;
}

/* Loads the build files of 1..n pieces of dir into r. */
static void
load_raw(egst_registry *r, const char *dir, int n)
{
    char err[512];
    assert_int_equal(egst_registry_init(r), 0);
    for (int p = 1; p <= n; p++) {
        size_t k;
        egix_slices(p, NULL, NULL, 0, &k);
        egix_slice *sl = malloc(k * sizeof *sl);
        egix_slices(p, sl, NULL, k, &k);
        for (size_t i = 0; i < k; i++)
            assert_int_equal(egst_add_mapped(r, dir, &sl[i], 0, err, sizeof err), 0);
        free(sl);
    }
}

/* Every position of the slices with up to `upto` pieces, both sides to
 * move, then `samples` random positions of the rest. */
static void
compare_all(const char *dir, int pieces, int upto, int samples)
{
    egst_registry raw;
    load_raw(&raw, dir, pieces);
    egdb *db;
    char err[512];
    assert_int_equal(egdb_open(dir, pieces, (size_t)64 << 20, &db, err, sizeof err), 0);
    uint64_t compared = 0, big_total = 0;
    for (size_t s = 0; s < raw.n; s++) {
        const egst_slice *e = raw.list[s];
        int n = e->slice.nbk + e->slice.nwk + e->slice.nbm + e->slice.nwm;
        if (n > upto) {
            big_total += e->size;
            continue;
        }
        for (uint64_t i = 0; i < e->size; i++) {
            eng_pos p;
            egix_unindex(e->table, i, &p);
            int want = egst_value(e, i);
            assert_int_equal(egdb_probe(db, &p), want);
            eng_pos f = eng_flip(&p);
            assert_int_equal(egdb_probe(db, &f), want);
            compared += 2;
        }
    }
    uint64_t seed = 0x123456789ull;
    for (int k = 0; k < samples && big_total > 0; k++) {
        uint64_t r = rng(&seed) % big_total;
        for (size_t s = 0; s < raw.n; s++) {
            const egst_slice *e = raw.list[s];
            int n = e->slice.nbk + e->slice.nwk + e->slice.nbm + e->slice.nwm;
            if (n <= upto)
                continue;
            if (r >= e->size) {
                r -= e->size;
                continue;
            }
            eng_pos p;
            egix_unindex(e->table, r, &p);
            if (rng(&seed) & 1)
                p = eng_flip(&p);
            assert_int_equal(egdb_probe(db, &p), egst_value(e, r));
            compared++;
            break;
        }
    }
    printf("  %s: %llu probes equal to the build files\n", dir, (unsigned long long)compared);
    egdb_close(db);
    egst_registry_free(&raw);
}

/* ---- tests -------------------------------------------------------------- */

static void
test_compressed_equals_raw(void **state)
{
    fixture *f = *state;
    compare_all(f->dir, f->pieces, 4, test_sanitized() ? 0 : 200000);
}

static void
test_compressed_equals_raw_no_threats(void **state)
{
    fixture *f = *state;
    compare_all(f->dir_nt, f->pieces, test_sanitized() ? 3 : 4, test_sanitized() ? 0 : 50000);
}

static void
test_small_cache_same_values(void **state)
{
    /* A cache of a few blocks: constant eviction, same answers. */
    fixture *f = *state;
    egst_registry raw;
    load_raw(&raw, f->dir, 4);
    egdb *db;
    char err[512];
    assert_int_equal(egdb_open(f->dir, 4, 64 * 4200, &db, err, sizeof err), 0);
    uint64_t seed = 99;
    for (int k = 0; k < 100000; k++) {
        const egst_slice *e = raw.list[rng(&seed) % raw.n];
        uint64_t i = rng(&seed) % e->size;
        eng_pos p;
        egix_unindex(e->table, i, &p);
        assert_int_equal(egdb_probe(db, &p), egst_value(e, i));
    }
    uint64_t h, m;
    size_t blocks;
    egdb_cache_counts(db, &h, &m, &blocks);
    assert_true(m > 1000); /* it really evicted */
    egdb_close(db);
    egst_registry_free(&raw);
}

typedef struct worker {
    const egdb *db;
    const egst_registry *raw;
    uint64_t seed;
    int probes, wrong;
} worker;

static void *
worker_main(void *arg)
{
    worker *w = arg;
    for (int k = 0; k < w->probes; k++) {
        const egst_slice *e = w->raw->list[rng(&w->seed) % w->raw->n];
        uint64_t i = rng(&w->seed) % e->size;
        eng_pos p;
        egix_unindex(e->table, i, &p);
        w->wrong += egdb_probe(w->db, &p) != egst_value(e, i);
    }
    return NULL;
}

static void
test_threads_same_values(void **state)
{
    fixture *f = *state;
    egst_registry raw;
    load_raw(&raw, f->dir, 4);
    size_t caches[2] = {3 * 2100, (size_t)64 << 20}; /* three blocks; all */
    for (int c = 0; c < 2; c++) {
        egdb *db;
        char err[512];
        assert_int_equal(egdb_open(f->dir, 4, caches[c], &db, err, sizeof err), 0);
        worker w[2];
        pthread_t t[2];
        for (int k = 0; k < 2; k++) {
            w[k] = (worker){db, &raw, 1000u + (uint64_t)k, test_sanitized() ? 20000 : 100000, 0};
            assert_int_equal(pthread_create(&t[k], NULL, worker_main, &w[k]), 0);
        }
        for (int k = 0; k < 2; k++) {
            pthread_join(t[k], NULL);
            assert_int_equal(w[k].wrong, 0);
        }
        uint64_t h, m;
        size_t blocks;
        egdb_cache_counts(db, &h, &m, &blocks);
        if (c == 0)
            assert_true(blocks == 3 && m > 10000); /* it really evicted */
        egdb_close(db);
    }
    egst_registry_free(&raw);
}

/* The slices of n pieces (*k of them), to free. */
static egix_slice *
slices_of(int n, size_t *k)
{
    egix_slices(n, NULL, NULL, 0, k);
    egix_slice *sl = malloc(*k * sizeof *sl);
    assert_non_null(sl);
    egix_slices(n, sl, NULL, *k, k);
    return sl;
}

/* The bytes of block b of e. */
static const uint8_t *
block_at(const egdc_slice *e, uint32_t b, size_t *len)
{
    uint32_t start = egle_get32(e->offsets + (size_t)b * 4),
             end = egle_get32(e->offsets + (size_t)b * 4 + 4);
    *len = end - start;
    return e->data + start;
}

static void
test_decode_one_equals_block(void **state)
{
    fixture *f = *state;
    size_t k;
    egix_slice *sl = slices_of(4, &k);
    uint64_t words[1u << (EGCD_PAGE_SHIFT - 5)], checked = 0;
    uint32_t multi = 0;  /* pages in blocks of several pages */
    uint32_t marked = 0; /* pages whose block carries marks */
    for (size_t i = 0; i < k; i++) {
        egdc_slice *e;
        char err[512];
        assert_int_equal(egdc_open(f->dir, &sl[i], &e, err, sizeof err), 0);
        for (uint32_t b = 0; b < e->npages; b++) {
            assert_int_equal(egdc_decode(e, b, (uint8_t *)words), 0);
            multi += e->pages[e->page_block[b]] > 1;
            {
                size_t blen;
                marked += (block_at(e, e->page_block[b], &blen)[0] & EGCD_BLOCK_MARKED) != 0;
            }
            uint64_t first = (uint64_t)b << e->h.page_shift;
            uint64_t n = e->h.positions - first < (1ull << e->h.page_shift)
                             ? e->h.positions - first
                             : 1ull << e->h.page_shift;
            for (uint32_t pos = 0; pos < n; pos++, checked++)
                if (egdc_decode_one(e, b, pos) != (int)((words[pos >> 5] >> (pos & 31) * 2) & 3))
                    fail_msg("slice %zu block %u position %u", i, b, pos);
            assert_int_equal(egdc_decode_one(e, b, (uint32_t)n), EGDB_ECORRUPT);
        }
        egdc_close(e);
    }
    assert_true(checked > 7000000); /* every 4-piece position */
    assert_true(multi > 100);       /* pages decoded from the middle of a block */
    assert_true(marked > 100);      /* walks started at a mark (codec.h, MARKS) */
    free(sl);
}

/*
 * Marks (format 4): a whole decode checks every mark, so a mark changed
 * in any field (its block checksum aside) makes the block fail to decode
 * rather than send a later probe astray unseen by `egdb verify`; a file
 * of format 3 (no marks) still decodes, and a block claiming marks in it
 * does not.
 */
static void
test_marks(void **state)
{
    fixture *f = *state;
    size_t k;
    egix_slice *sl = slices_of(4, &k);
    uint64_t words[1u << (EGCD_PAGE_SHIFT - 5)], want[1u << (EGCD_PAGE_SHIFT - 5)];
    int tried = 0, plain = 0;
    for (size_t i = 0; i < k && (tried < 20 || plain < 20); i++) {
        egdc_slice *e;
        char err[512];
        assert_int_equal(egdc_open(f->dir, &sl[i], &e, err, sizeof err), 0);
        assert_int_equal(e->h.version, EGCD_VERSION);
        assert_true(e->dec.marks);
        for (uint32_t b = 0; b < e->h.nblocks; b++) {
            size_t len;
            const uint8_t *src = block_at(e, b, &len);
            uint32_t g = e->first_page[b];
            uint64_t first = (uint64_t)g << e->h.page_shift;
            uint32_t total = (uint32_t)(e->h.positions - first < (1ull << e->h.page_shift)
                                            ? e->h.positions - first
                                            : 1ull << e->h.page_shift);
            egcd_decoder v3 = e->dec;
            v3.marks = 0;
            if (!(src[0] & EGCD_BLOCK_MARKED)) {
                /* as a format-3 file would hold it */
                if (e->pages[b] == 1 && plain < 20) {
                    assert_int_equal(
                        egcd_decode_page(&v3, src, len, total, 0, total, (uint8_t *)words), 0);
                    assert_int_equal(
                        egcd_decode_page(&e->dec, src, len, total, 0, total, (uint8_t *)want), 0);
                    assert_memory_equal(words, want, ((size_t)total + 3) / 4);
                    plain++;
                }
                continue;
            }
            if (tried >= 20)
                continue;
            tried++;
            assert_int_equal(egcd_decode_page(&e->dec, src, len, total, 0, total, (uint8_t *)want),
                             0);
            assert_int_equal(egcd_decode_page(&v3, src, len, total, 0, total, (uint8_t *)words),
                             -1);
            uint8_t *copy = malloc(len);
            /* each field of each mark: bit offset (bits 0-19), first
             * position (20-32), the two predictor values (33-36), the
             * spare bits (37-39) */
            const int bits[] = {0, 5, 19, 20, 25, 32, 33, 34, 35, 36, 37, 39};
            for (int m = 0; m < EGCD_NMARKS; m++)
                for (size_t j = 0; j < sizeof bits / sizeof *bits; j++) {
                    memcpy(copy, src, len);
                    copy[1 + m * EGCD_MARK_BYTES + bits[j] / 8] ^= (uint8_t)(1u << bits[j] % 8);
                    if (egcd_decode_page(&e->dec, copy, len, total, 0, total, (uint8_t *)words) !=
                        -1)
                        fail_msg("slice %zu block %u: mark %d bit %d changed, still decodes", i, b,
                                 m, bits[j]);
                }
            free(copy);
        }
        egdc_close(e);
    }
    assert_int_equal(tried, 20);
    assert_int_equal(plain, 20);
    free(sl);
}

static void
test_code_lengths(void **state)
{
    (void)state;
    /* Fibonacci-like frequencies force a deep Huffman tree: the limit
     * must hold and the code stay complete (Kraft sum exactly 1). */
    uint64_t freq[EGCD_NSYM];
    uint64_t a = 1, b = 1;
    for (int s = 0; s < EGCD_NSYM; s++) {
        freq[s] = a;
        uint64_t c = a + b;
        a = b;
        b = c > (1ull << 50) ? (1ull << 50) : c;
    }
    uint8_t len[EGCD_NSYM];
    egcd_code_lengths(freq, len, EGCD_MAX_BITS);
    uint64_t kraft = 0;
    for (int s = 0; s < EGCD_NSYM; s++) {
        assert_true(len[s] >= 1 && len[s] <= EGCD_MAX_BITS);
        kraft += 1ull << (EGCD_MAX_BITS - len[s]);
    }
    assert_int_equal(kraft, 1ull << EGCD_MAX_BITS);
    egcd_decoder d;
    assert_int_equal(egcd_decoder_init(&d, len), 0);
    /* An over-full code is refused. */
    memset(len, 1, sizeof len);
    assert_int_equal(egcd_decoder_init(&d, len), -1);
}

/* Copies the directory, returns the copy's path in out. */
static void
copy_dir(const char *from, char *out, size_t outlen)
{
    assert_non_null(test_tmpdir(out, outlen, "test_egdb_compress_copy"));
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "cp %s/* %s/", from, out);
    assert_int_equal(run(cmd), 0);
}

static void
test_damaged_block(void **state)
{
    fixture *f = *state;
    char d[256], err[1024], path[512], cmd[1024];
    copy_dir(f->dir, d, sizeof d);
    /* Remove the build files: the compressed ones must stand alone. */
    snprintf(cmd, sizeof cmd, "rm -f %s/*.wld", d);
    assert_int_equal(run(cmd), 0);
    /* Damage the data area of 2200.00 (two kings each): flip a byte in
     * its first block. */
    snprintf(path, sizeof path, "%s/2200.00.cwl", d);
    FILE *fp = fopen(path, "r+b");
    assert_non_null(fp);
    unsigned char hdr[EGCD_HEADER_BYTES];
    assert_int_equal(fread(hdr, 1, sizeof hdr, fp), sizeof hdr);
    egcd_header h;
    assert_int_equal(egcd_header_decode(hdr, &h), 0);
    long data_at = (long)(EGCD_TABLE_OFFSET + egcd_table_bytes(h.nblocks));
    fseek(fp, data_at + 5, SEEK_SET);
    int c = fgetc(fp);
    fseek(fp, data_at + 5, SEEK_SET);
    fputc(c ^ 0x10, fp);
    fclose(fp);

    egdb *db;
    assert_int_equal(egdb_open(d, 4, (size_t)16 << 20, &db, err, sizeof err), 0);
    /* Every position of block 0 that keeps its value must now fail. */
    egix_table *t;
    egix_slice s = h.slice;
    assert_int_equal(egix_table_create_order(&s, h.order, &t), 0);
    int corrupt = 0, values = 0;
    for (uint64_t i = 0; i < (1u << h.page_shift) && i < h.positions; i++) {
        eng_pos p;
        egix_unindex(t, i, &p);
        if (egcd_dropped(&p, h.flags) != EGCD_KEPT)
            continue;
        int v = egdb_probe(db, &p);
        if (v == EGDB_ECORRUPT)
            corrupt++;
        else
            values++;
    }
    assert_true(corrupt > 0);
    assert_int_equal(values, 0);
    egix_table_destroy(t);
    egdb_close(db);
    assert_int_equal(egdb_verify(d, 2, NULL, NULL, err, sizeof err), EGDB_ECORRUPT);
    assert_non_null(strstr(err, "2200.00.cwl"));
    assert_non_null(strstr(err, "block 0"));
    snprintf(cmd, sizeof cmd, "rm -rf %s", d);
    run(cmd);
}

/* Changes byte `at` of path to its value xor x. */
static void
flip_byte(const char *path, long at, int x)
{
    FILE *fp = fopen(path, "r+b");
    assert_non_null(fp);
    fseek(fp, at, SEEK_SET);
    int c = fgetc(fp);
    assert_true(c >= 0);
    fseek(fp, at, SEEK_SET);
    fputc(c ^ x, fp);
    fclose(fp);
}

/* The header of a .cwl file. */
static void
read_cwl_header(const char *path, egcd_header *h)
{
    FILE *fp = fopen(path, "rb");
    assert_non_null(fp);
    unsigned char hdr[EGCD_HEADER_BYTES];
    assert_int_equal(fread(hdr, 1, sizeof hdr, fp), sizeof hdr);
    fclose(fp);
    assert_int_equal(egcd_header_decode(hdr, h), 0);
}

/*
 * The fault a user found: a byte changed in the LAST block of 2200.00.
 * Positions of the slice's twin and earlier blocks have successors in
 * that block, and the verifier used to take the lookup's error code for
 * a value and report one of them as contradicting its successors
 * (EGDB_EVERIFY, exit 1). Now every block is checked before any value,
 * and the damaged block is what is reported; a probe of a position in
 * it names the same file, block and part.
 */
static void
test_damaged_last_block(void **state)
{
    fixture *f = *state;
    char d[256], err[1024], path[512], cmd[1024], want[64];
    copy_dir(f->dir, d, sizeof d);
    snprintf(cmd, sizeof cmd, "rm -f %s/*.wld", d);
    assert_int_equal(run(cmd), 0);
    snprintf(path, sizeof path, "%s/2200.00.cwl", d);
    egcd_header h;
    read_cwl_header(path, &h);
    assert_true(h.nblocks > 2);
    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    flip_byte(path, (long)st.st_size - 3, 0x20);

    assert_int_equal(egdb_verify(d, 2, NULL, NULL, err, sizeof err), EGDB_ECORRUPT);
    printf("# last block damaged: %s\n", err);
    snprintf(want, sizeof want, "2200.00.cwl: data, block %" PRIu32 " ", h.nblocks - 1);
    assert_non_null(strstr(err, want));
    assert_non_null(strstr(err, "fails its checksum"));

    /* The last kept position of the slice is in the last block. */
    egdb *db;
    assert_int_equal(egdb_open(d, 4, (size_t)16 << 20, &db, err, sizeof err), 0);
    egix_table *t;
    assert_int_equal(egix_table_create_order(&h.slice, h.order, &t), 0);
    uint64_t i = h.positions;
    eng_pos p;
    do {
        assert_true(i > 0);
        egix_unindex(t, --i, &p);
    } while (egcd_dropped(&p, h.flags) != EGCD_KEPT);
    err[0] = '\0';
    assert_int_equal(egdb_probe_err(db, &p, err, sizeof err), EGDB_ECORRUPT);
    assert_non_null(strstr(err, want));
    assert_int_equal(egdb_probe(db, &p), EGDB_ECORRUPT);
    egix_table_destroy(t);
    egdb_close(db);
    snprintf(cmd, sizeof cmd, "rm -rf %s", d);
    run(cmd);
}

/*
 * One byte changed in each part of a .cwl file: egdb_open (or, for the
 * data, the block check) names the part. Offsets are relative to the
 * part's start; a table offset entry is changed in its low byte by 1, so
 * the entries stay in order and only the two blocks around it stop
 * matching their checksums.
 */
static void
test_damaged_parts(void **state)
{
    fixture *f = *state;
    char d[256], err[1024], path[512], cmd[1024];
    copy_dir(f->dir, d, sizeof d);
    snprintf(cmd, sizeof cmd, "rm -f %s/*.wld", d);
    assert_int_equal(run(cmd), 0);
    snprintf(path, sizeof path, "%s/2200.00.cwl", d);
    egcd_header h;
    read_cwl_header(path, &h);
    const long offsets_at = EGCD_TABLE_OFFSET, sums_at = offsets_at + 4 * ((long)h.nblocks + 1),
               pages_at = sums_at + 4 * (long)h.nblocks, data_at = pages_at + (long)h.nblocks;
    const struct {
        long at;
        int x;
        const char *part;
    } cases[] = {
        {2, 0x01, "header (bytes 0-79): not a compressed slice file"},
        {20, 0x01, "header (bytes 0-79): checksum mismatch"},
        {75, 0x80, "header (bytes 0-79): checksum mismatch"},
        {EGCD_CODES_OFFSET + 3, 0x01, "code lengths (bytes 80-143)"},
        {offsets_at + 4 * 2, 0x01, "block table, offsets"},
        {offsets_at + 4 * 2 + 3, 0x01, "block table, offsets"},
        {sums_at + 4 * 1 + 2, 0x01, "block table, block checksums"},
        {pages_at + 1, 0x01, "block table, page counts"},
    };
    egdb *db;
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        snprintf(cmd, sizeof cmd, "cp %s/2200.00.cwl %s/", f->dir, d);
        assert_int_equal(run(cmd), 0);
        flip_byte(path, cases[k].at, cases[k].x);
        err[0] = '\0';
        assert_int_equal(egdb_open(d, 0, 1 << 20, &db, err, sizeof err), EGDB_ECORRUPT);
        printf("# byte %ld: %s\n", cases[k].at, err);
        assert_non_null(strstr(err, "2200.00.cwl"));
        assert_non_null(strstr(err, cases[k].part));
        assert_int_equal(egdb_verify(d, 2, NULL, NULL, err, sizeof err), EGDB_ECORRUPT);
        assert_non_null(strstr(err, cases[k].part));
    }
    /* Entry 2 of the offsets, and of the checksums, named exactly. */
    snprintf(cmd, sizeof cmd, "cp %s/2200.00.cwl %s/", f->dir, d);
    assert_int_equal(run(cmd), 0);
    flip_byte(path, offsets_at + 4 * 2, 0x01);
    assert_int_equal(egdb_open(d, 0, 1 << 20, &db, err, sizeof err), EGDB_ECORRUPT);
    assert_non_null(strstr(err, "entry 2 "));
    /* The data: found by the block check, naming the block. */
    snprintf(cmd, sizeof cmd, "cp %s/2200.00.cwl %s/", f->dir, d);
    assert_int_equal(run(cmd), 0);
    flip_byte(path, data_at + 1, 0x01);
    assert_int_equal(egdb_verify(d, 2, NULL, NULL, err, sizeof err), EGDB_ECORRUPT);
    assert_non_null(strstr(err, "2200.00.cwl: data, block 0 "));
    snprintf(cmd, sizeof cmd, "rm -rf %s", d);
    run(cmd);
}

static void
test_truncated_and_version(void **state)
{
    fixture *f = *state;
    char d[256], err[1024], path[512], cmd[1024];
    copy_dir(f->dir, d, sizeof d);
    snprintf(path, sizeof path, "%s/1110.40.cwl", d);
    assert_int_equal(truncate(path, 100), 0);
    egdb *db;
    assert_int_equal(egdb_open(d, 0, 1 << 20, &db, err, sizeof err), EGDB_ECORRUPT);
    assert_non_null(strstr(err, "1110.40.cwl"));
    /* Wrong version byte. */
    snprintf(cmd, sizeof cmd, "cp %s/1110.40.cwl %s/", f->dir, d);
    assert_int_equal(run(cmd), 0);
    FILE *fp = fopen(path, "r+b");
    assert_non_null(fp);
    fseek(fp, 7, SEEK_SET);
    fputc(EGCD_VERSION + 1, fp);
    fclose(fp);
    assert_int_equal(egdb_open(d, 0, 1 << 20, &db, err, sizeof err), EGDB_ECORRUPT);
    assert_non_null(strstr(err, "version"));
    snprintf(cmd, sizeof cmd, "rm -rf %s", d);
    run(cmd);
}

/* Rewrites the header of <d>/2200.00.cwl with its checksum recomputed, as
 * a hostile file would be (checksums find damage, not forgery). */
static void
forge_header(const char *d, uint8_t page_shift, uint32_t nblocks, uint64_t data_bytes)
{
    char path[512];
    snprintf(path, sizeof path, "%s/2200.00.cwl", d);
    FILE *fp = fopen(path, "r+b");
    assert_non_null(fp);
    unsigned char hb[EGCD_HEADER_BYTES];
    assert_int_equal(fread(hb, 1, sizeof hb, fp), sizeof hb);
    egcd_header h;
    assert_int_equal(egcd_header_decode(hb, &h), 0);
    h.page_shift = page_shift;
    h.nblocks = nblocks;
    h.data_bytes = data_bytes;
    egcd_header_encode(&h, hb);
    fseek(fp, 0, SEEK_SET);
    assert_int_equal(fwrite(hb, 1, sizeof hb, fp), sizeof hb);
    fclose(fp);
}

/*
 * Header fields that are consistent with each other and with the header
 * checksum but not with the file: the open fails naming the file, and
 * reads nothing outside it (a data size chosen so that the size check
 * wraps around 2^64 once made it hash past the end of the mapping).
 */
static void
test_forged_header(void **state)
{
    fixture *f = *state;
    char d[256], err[1024], path[512], cmd[1024];
    copy_dir(f->dir, d, sizeof d);
    snprintf(path, sizeof path, "%s/2200.00.cwl", d);
    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    uint64_t len = (uint64_t)st.st_size;
    egdb *db;
    /* Table and data sizes that add up to the file's size modulo 2^64. */
    uint32_t nb = 3000;
    forge_header(d, 6, nb, len - EGCD_TABLE_OFFSET - egcd_table_bytes(nb));
    assert_int_equal(egdb_open(d, 0, 1 << 20, &db, err, sizeof err), EGDB_ECORRUPT);
    assert_non_null(strstr(err, "file size does not match its header"));
    assert_non_null(strstr(err, "2200.00.cwl"));
    /* More blocks than pages. */
    snprintf(cmd, sizeof cmd, "cp %s/2200.00.cwl %s/", f->dir, d);
    assert_int_equal(run(cmd), 0);
    forge_header(d, EGCD_PAGE_SHIFT, 1000, 0);
    assert_int_equal(egdb_open(d, 0, 1 << 20, &db, err, sizeof err), EGDB_ECORRUPT);
    assert_non_null(strstr(err, "2200.00.cwl"));
    snprintf(cmd, sizeof cmd, "rm -rf %s", d);
    run(cmd);
}

static void
test_verify_compressed(void **state)
{
    fixture *f = *state;
    char err[1024];
    assert_int_equal(egdb_verify(f->dir, 2, NULL, NULL, err, sizeof err), 0);
}

/*
 * A compressed file that decodes cleanly but holds one wrong value: made
 * by compressing 2200.00 from a build file with one kept value changed,
 * then putting the right build file back. egdb_verify must find it
 * against the verified build file when that is there, and against the
 * successors when the build files are gone.
 */
static void
test_verify_wrong_value(void **state)
{
    fixture *f = *state;
    char d[256], err[1024], cmd[1024];
    copy_dir(f->dir, d, sizeof d);
    egix_slice s;
    assert_int_equal(egix_slice_parse("2200.00", &s), 0);
    egst_registry r;
    assert_int_equal(egst_registry_init(&r), 0);
    assert_int_equal(egst_add_mapped(&r, d, &s, 1, err, sizeof err), 0);
    const egst_slice *e = egst_find(&r, &s);
    /* A kept position in the middle of the slice. */
    uint64_t i;
    eng_pos p;
    for (i = e->size / 2; i < e->size; i++) {
        egix_unindex(e->table, i, &p);
        if (egcd_dropped(&p, EGCD_FLAG_THREATS) == EGCD_KEPT)
            break;
    }
    assert_true(i < e->size);
    size_t bytes = (size_t)((e->size + 3) / 4);
    uint8_t *packed = malloc(bytes);
    assert_non_null(packed);
    memcpy(packed, e->data, bytes);
    int v = egst_value(e, i), nv = v == EGDB_DRAW ? EGDB_WIN : EGDB_DRAW;
    packed[i >> 2] =
        (uint8_t)((packed[i >> 2] & ~(3u << ((i & 3) * 2))) | (unsigned)nv << ((i & 3) * 2));
    egst_header h;
    memset(&h, 0, sizeof h);
    h.slice = s;
    h.positions = e->size;
    for (uint64_t k = 0; k < e->size; k++) {
        int x = (packed[k >> 2] >> ((k & 3) * 2)) & 3;
        h.wins += x == EGDB_WIN;
        h.losses += x == EGDB_LOSS;
        h.draws += x == EGDB_DRAW;
    }
    egst_registry_free(&r);
    assert_int_equal(egst_write(d, &h, packed, err, sizeof err), 0);
    free(packed);
    snprintf(cmd, sizeof cmd, "rm %s/2200.00.cwl", d);
    assert_int_equal(run(cmd), 0);
    egdb_compress_stats cs;
    egdb_compress_opts co = {f->pieces, 2, 1, NULL, NULL, NULL};
    assert_int_equal(egdb_compress(d, &co, &cs, err, sizeof err), 0);
    assert_int_equal(cs.slices, 1);
    snprintf(cmd, sizeof cmd, "cp %s/2200.00.wld %s/", f->dir, d);
    assert_int_equal(run(cmd), 0);

    /* Against the build file: the position itself (or a dropped one whose
     * search reads it), named with both values. */
    assert_int_equal(egdb_verify(d, 2, NULL, NULL, err, sizeof err), EGDB_EVERIFY);
    printf("# %s\n", err);
    assert_non_null(strstr(err, "slice 2200.00 (compressed)"));
    assert_non_null(strstr(err, "the verified 2-bit file says"));
    /* Against the successors. */
    snprintf(cmd, sizeof cmd, "rm -f %s/*.wld", d);
    assert_int_equal(run(cmd), 0);
    assert_int_equal(egdb_verify(d, 2, NULL, NULL, err, sizeof err), EGDB_EVERIFY);
    printf("# %s\n", err);
    assert_non_null(strstr(err, "successors say"));
    snprintf(cmd, sizeof cmd, "rm -rf %s", d);
    run(cmd);
}

/*
 * The compression's own checks (compress.c, check_written), each made to
 * fail by a fault of egcp_set_fault on the 3-piece build files, one
 * thread, so that the first slice it hurts stops the run: the error names
 * that slice, no .cwl file of it is left (nor any temporary file), and
 * without the fault the same folder compresses.
 */
static void
test_compress_faults(void **state)
{
    (void)state;
    char d[256], err[1024], cmd[1024];
    assert_true(test_tmpdir(d, sizeof d, "test_egdb_compress_fault"));
    egdb_build_stats bs;
    egdb_build_opts bo = {3, 2, NULL, NULL, NULL, 0, 0, 0, NULL};
    assert_int_equal(egdb_build(d, &bo, &bs, err, sizeof err), 0);
    static const struct {
        int fault;
        const char *says;
    } cases[] = {
        {EGCP_FAULT_CURSOR, "the cursor's position at index"},
        {EGCP_FAULT_COLLIDE, "to two positions or past the end"},
        {EGCP_FAULT_READBACK, "the value read back differs from the one written"},
    };
    egdb_compress_stats cs;
    egdb_compress_opts co = {3, 1, 1, NULL, NULL, NULL};
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
        egcp_set_fault(cases[k].fault);
        err[0] = 0;
        int rc = egdb_compress(d, &co, &cs, err, sizeof err);
        egcp_set_fault(EGCP_FAULT_NONE);
        printf("# fault %d: %s\n", cases[k].fault, err);
        assert_int_equal(rc, EGDB_EVERIFY);
        assert_non_null(strstr(err, cases[k].says));
        /* The slice named: "slice NAME: ..." or "DIR/NAME.cwl: ...". */
        char name[EGIX_NAME_MAX] = "";
        const char *at = strncmp(err, "slice ", 6) == 0 ? err + 6 : strrchr(err, '/');
        assert_non_null(at);
        if (*at == '/')
            at++;
        size_t n = strcspn(at, ":.");
        n += at[n] == '.' ? 1 + strcspn(at + n + 1, ":.") : 0; /* KKMM.RR */
        assert_true(n > 0 && n < sizeof name);
        memcpy(name, at, n);
        name[n] = 0;
        egix_slice s;
        assert_int_equal(egix_slice_parse(name, &s), 0);
        char path[512];
        struct stat st;
        snprintf(path, sizeof path, "%s/%s.cwl", d, name);
        assert_int_not_equal(stat(path, &st), 0);
        snprintf(cmd, sizeof cmd, "ls %s | grep '\\.tmp$'", d);
        if (run(cmd) == 0)
            fail_msg("a temporary file left in %s", d);
    }
    assert_int_equal(egdb_compress(d, &co, &cs, err, sizeof err), 0);
    assert_int_equal(egdb_verify(d, 3, NULL, NULL, err, sizeof err), 0);
    snprintf(cmd, sizeof cmd, "rm -rf %s", d);
    run(cmd);
}

/* The progress function of test_compress_stop: asks the run to stop at
 * its first report, and keeps how many slices were finished then. */
typedef struct stop_probe {
    volatile int stop;
    size_t reports, done_at_stop;
} stop_probe;

static void
stop_at_first_report(const egdb_progress *p, void *arg)
{
    stop_probe *sp = arg;
    if (sp->reports++ == 0) {
        sp->done_at_stop = p->pair_no;
        sp->stop = 1;
    }
}

/*
 * A compression asked to stop (as the command's SIGINT handler does) ends
 * after the slices in hand with EGDB_EINTERRUPT, keeps the files it
 * finished and no temporary file; run again, it compresses only the
 * slices left, and every file is byte-identical to the fixture's
 * uninterrupted run. One thread on the fixture's build files: the first
 * report comes a quarter second into a run of several seconds.
 */
static void
test_compress_stop(void **state)
{
    fixture *f = *state;
    char d[256], err[512], cmd[1024];
    assert_true(test_tmpdir(d, sizeof d, "test_egdb_compress_stop"));
    snprintf(cmd, sizeof cmd, "cp %s/*.wld %s/", f->dir, d);
    assert_int_equal(run(cmd), 0);
    stop_probe sp;
    memset(&sp, 0, sizeof sp);
    egdb_compress_stats cs, cs2;
    egdb_compress_opts co = {f->pieces, 1, 1, stop_at_first_report, &sp, &sp.stop};
    int rc = egdb_compress(d, &co, &cs, err, sizeof err);
    printf("# stopped: %s; %" PRIu64 " slices compressed, %zu done at the request\n", err,
           cs.slices, sp.done_at_stop);
    assert_int_equal(rc, EGDB_EINTERRUPT);
    assert_non_null(strstr(err, "run again to resume"));
    /* The slice in hand when the flag was set is finished, no other. */
    assert_true(cs.slices >= sp.done_at_stop && cs.slices <= sp.done_at_stop + 1);
    assert_true(cs.slices > 0);
    snprintf(cmd, sizeof cmd, "test $(ls %s | grep -c '\\.cwl$') -eq %" PRIu64, d, cs.slices);
    assert_int_equal(run(cmd), 0);
    snprintf(cmd, sizeof cmd, "ls %s | grep -q '\\.tmp$'", d);
    if (run(cmd) == 0)
        fail_msg("a temporary file left in %s", d);
    egdb_compress_opts again = {f->pieces, 2, 1, NULL, NULL, NULL};
    assert_int_equal(egdb_compress(d, &again, &cs2, err, sizeof err), 0);
    assert_true(cs2.slices > 0);
    snprintf(cmd, sizeof cmd, "test $(ls %s | grep -c '\\.cwl$') -eq %" PRIu64, d,
             cs.slices + cs2.slices);
    assert_int_equal(run(cmd), 0);
    snprintf(cmd, sizeof cmd,
             "cd %s && n=0; for c in *.cwl; do cmp -s $c %s/$c || n=$((n+1)); done; "
             "test $n -eq 0 && test $(ls | grep -c '\\.cwl$') -eq $(ls %s | grep -c '\\.cwl$')",
             d, f->dir, f->dir);
    assert_int_equal(run(cmd), 0);
    snprintf(cmd, sizeof cmd, "rm -rf %s", d);
    run(cmd);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_code_lengths),
        cmocka_unit_test(test_decode_one_equals_block),
        cmocka_unit_test(test_marks),
        cmocka_unit_test(test_compressed_equals_raw),
        cmocka_unit_test(test_compressed_equals_raw_no_threats),
        cmocka_unit_test(test_small_cache_same_values),
        cmocka_unit_test(test_threads_same_values),
        cmocka_unit_test(test_verify_compressed),
        cmocka_unit_test(test_verify_wrong_value),
        cmocka_unit_test(test_damaged_block),
        cmocka_unit_test(test_damaged_last_block),
        cmocka_unit_test(test_damaged_parts),
        cmocka_unit_test(test_truncated_and_version),
        cmocka_unit_test(test_forged_header),
        cmocka_unit_test(test_compress_faults),
        cmocka_unit_test(test_compress_stop),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
