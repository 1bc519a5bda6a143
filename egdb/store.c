/*
 * store.c - slice files (format in store.h) and the registry of loaded
 * slices.
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

#include "egdb/le.h"

#include "egdb/store.h"

/* ---- constants -------------------------------------------------------- */

static const unsigned char file_magic[8] = {'C', 'K', 'W', 'L', 'D', 0, 0, EGST_VERSION};

/* ---- helpers ---------------------------------------------------------- */

static void
header_encode(const egst_header *h, unsigned char *b)
{
    memset(b, 0, EGST_HEADER_BYTES);
    memcpy(b, file_magic, sizeof file_magic);
    egle_put_slice(b + 8, &h->slice);
    egle_put64(b + 16, h->positions);
    egle_put64(b + 24, h->wins);
    egle_put64(b + 32, h->losses);
    egle_put64(b + 40, h->draws);
    egle_put64(b + 48, h->payload_hash);
    egle_put64(b + 56, XXH3_64bits(b, 56));
}

uint64_t
egst_payload_hash(const uint8_t *packed, uint64_t positions)
{
    return XXH3_64bits(packed, (size_t)((positions + 3) / 4));
}

int
egst_path(const char *dir, const egix_slice *s, char *buf, size_t buflen)
{
    char name[EGIX_NAME_MAX];
    if (egix_slice_name(s, name, sizeof name) != 0)
        return EGDB_EINVAL;
    int n = snprintf(buf, buflen, "%s/%s.wld", dir, name);
    return (n < 0 || (size_t)n >= buflen) ? EGDB_EINVAL : 0;
}

/* ---- reading ---------------------------------------------------------- */

int
egst_read_head(const char *path, void *buf, size_t len, uint64_t *file_bytes, char *err,
               size_t errlen)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        return errno == ENOENT ? EGDB_EMISSING : EGDB_EIO;
    }
    struct stat st;
    int rc = 0;
    if (fstat(fd, &st) != 0) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        rc = EGDB_EIO;
    } else if (pread(fd, buf, len, 0) != (ssize_t)len) {
        snprintf(err, errlen, "%s: file too short for a header (%lld bytes)", path,
                 (long long)st.st_size);
        rc = EGDB_ECORRUPT;
    } else {
        *file_bytes = (uint64_t)st.st_size;
    }
    close(fd);
    return rc;
}

int
egst_read_header(const char *path, egst_header *h, uint64_t *file_bytes, char *err, size_t errlen)
{
    unsigned char b[EGST_HEADER_BYTES];
    uint64_t len;
    int rc = egst_read_head(path, b, sizeof b, &len, err, errlen);
    if (rc != 0)
        return rc;
    if (memcmp(b, file_magic, 7) != 0) {
        snprintf(err, errlen, "%s: header (bytes 0-63): not a slice file (bad magic)", path);
        return EGDB_ECORRUPT;
    }
    if (b[7] != EGST_VERSION) {
        snprintf(err, errlen,
                 "%s: header (bytes 0-63): format version %d, this program reads version %d%s",
                 path, b[7], EGST_VERSION,
                 egle_get64(b + 56) != XXH3_64bits(b, 56)
                     ? "; the header checksum fails too: the version byte may be damaged"
                     : "");
        return EGDB_ECORRUPT;
    }
    if (egle_get64(b + 56) != XXH3_64bits(b, 56)) {
        snprintf(err, errlen, "%s: header (bytes 0-63): checksum mismatch", path);
        return EGDB_ECORRUPT;
    }
    egle_get_slice(b + 8, &h->slice);
    h->positions = egle_get64(b + 16);
    h->wins = egle_get64(b + 24);
    h->losses = egle_get64(b + 32);
    h->draws = egle_get64(b + 40);
    h->payload_hash = egle_get64(b + 48);
    uint64_t size;
    if (egix_slice_check(&h->slice) != 0 || egix_size(&h->slice, &size) != 0 ||
        size != h->positions || h->wins + h->losses + h->draws != h->positions) {
        snprintf(err, errlen, "%s: header (bytes 0-63): describes an impossible slice or counts",
                 path);
        return EGDB_ECORRUPT;
    }
    uint64_t want = EGST_HEADER_BYTES + (h->positions + 3) / 4;
    if (len != want) {
        snprintf(err, errlen, "%s: %llu bytes, expected %llu (truncated or padded)", path,
                 (unsigned long long)len, (unsigned long long)want);
        return EGDB_ECORRUPT;
    }
    if (file_bytes)
        *file_bytes = len;
    return 0;
}

/* ---- registry --------------------------------------------------------- */

static void
slice_free(egst_slice *e)
{
    if (e->map)
        munmap(e->map, e->map_len);
    egix_table_destroy(e->table);
    free(e);
}

int
egst_registry_init(egst_registry *r)
{
    memset(r, 0, sizeof *r);
    r->by_key = calloc(EGST_NKEYS, sizeof *r->by_key);
    return r->by_key ? 0 : EGDB_ENOMEM;
}

void
egst_registry_free(egst_registry *r)
{
    for (size_t i = 0; i < r->n; i++)
        slice_free(r->list[i]);
    free(r->list);
    free(r->by_key);
    memset(r, 0, sizeof *r);
}

int
egst_remove(egst_registry *r, const egix_slice *s)
{
    egst_slice *e = r->by_key[egst_key(s)];
    if (!e)
        return EGDB_EMISSING;
    /* Keep the list in the order slices were added: verify.c and the
     * builders walk it in dependency order. */
    size_t i = 0;
    while (i < r->n && r->list[i] != e)
        i++;
    memmove(&r->list[i], &r->list[i + 1], (r->n - i - 1) * sizeof *r->list);
    r->n--;
    r->by_key[egst_key(s)] = NULL;
    slice_free(e);
    return 0;
}

void
egst_release(const egst_slice *e)
{
    if (e->map)
        madvise(e->map, e->map_len, MADV_DONTNEED);
}

static int
registry_push(egst_registry *r, egst_slice *e)
{
    if (r->n == r->cap) {
        size_t cap = r->cap ? 2 * r->cap : 256;
        egst_slice **l = realloc(r->list, cap * sizeof *l);
        if (!l)
            return EGDB_ENOMEM;
        r->list = l;
        r->cap = cap;
    }
    r->list[r->n++] = e;
    r->by_key[egst_key(&e->slice)] = e;
    return 0;
}

/*
 * 2 MB pages for mapped 2-bit files: off unless egst_set_huge_pages asks.
 * The builder's phase 1 and the check read these files at random places,
 * a TLB miss each with 4 kB pages once a file is larger than the TLB
 * covers (a few MB). This machine's kernel (transparent_hugepage =
 * madvise) maps a file's page cache with 2 MB entries only in a mapping
 * so advised, and only where the cache holds 2 MB folios: those a fault
 * of such a mapping reads in, and those a single large write() made.
 * Measured (stop 54, random reads in blocks of 32, each prefetched, as
 * phase 1 reads):
 *   - one 1 GB file read in from disk by the reads themselves: 14-20 ns a
 *     read advised against 25-38 ns not;
 *   - bench/egdb_pages.c on 80 seven-piece slice files (1.06 GB, the
 *     largest 36 MB), two runs: cached, x1.44 and x1.02 (medians); the
 *     first pass, which reads the files in from disk, x0.52 and x0.48:
 *     each fault then reads 2 MB.
 * So no steady gain on the files of 7 pieces once cached, and first
 * reads twice as slow: off. The 8-piece files (up to hundreds of MB each, GBs read at random
 * by a unit's phase 1) are where it could pay; the bench says so once a
 * folder of them exists.
 */
static int huge_pages = 0; /* egst_set_huge_pages */

void
egst_set_huge_pages(int on)
{
    huge_pages = on;
}

static void
advise_huge(void *map, size_t bytes)
{
#ifdef MADV_HUGEPAGE
    if (huge_pages)
        (void)madvise(map, bytes, MADV_HUGEPAGE);
#else
    (void)map;
    (void)bytes;
#endif
}

int
egst_add_mapped(egst_registry *r, const char *dir, const egix_slice *s, int check_payload,
                char *err, size_t errlen)
{
    char path[4096];
    egst_header h;
    uint64_t bytes;
    if (egst_path(dir, s, path, sizeof path) != 0) {
        snprintf(err, errlen, "database path too long: %s", dir);
        return EGDB_EINVAL;
    }
    int rc = egst_read_header(path, &h, &bytes, err, errlen);
    if (rc != 0)
        return rc;
    if (!egix_slice_equal(&h.slice, s)) {
        snprintf(err, errlen, "%s: header (bytes 0-63): names another slice", path);
        return EGDB_ECORRUPT;
    }
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        return EGDB_EIO;
    }
    void *map = mmap(NULL, (size_t)bytes, PROT_READ, MAP_SHARED, fd, 0);
    close(fd);
    if (map == MAP_FAILED) {
        snprintf(err, errlen, "%s: mmap: %s", path, strerror(errno));
        return EGDB_EIO;
    }
    advise_huge(map, (size_t)bytes);
    const uint8_t *data = (const uint8_t *)map + EGST_HEADER_BYTES;
    if (check_payload && egst_payload_hash(data, h.positions) != h.payload_hash) {
        snprintf(err, errlen, "%s: payload (bytes %d-%llu): checksum mismatch", path,
                 EGST_HEADER_BYTES, (unsigned long long)bytes - 1);
        munmap(map, (size_t)bytes);
        return EGDB_ECORRUPT;
    }
    egst_slice *e = calloc(1, sizeof *e);
    if (!e || egix_table_create(s, &e->table) != 0) {
        free(e);
        munmap(map, (size_t)bytes);
        return EGDB_ENOMEM;
    }
    e->slice = *s;
    e->size = h.positions;
    e->data = data;
    e->map = map;
    e->map_len = (size_t)bytes;
    rc = registry_push(r, e);
    if (rc != 0) {
        egix_table_destroy(e->table);
        munmap(map, (size_t)bytes);
        free(e);
    }
    return rc;
}

egst_ref
egst_locate(const egst_registry *r, const eng_pos *p)
{
    egst_ref ref = {NULL, 0, EGDB_ENOTFOUND};
    eng_pos c = eng_canonical(p);
    /* A side without pieces: the rules answer, no file needed. These are
     * also the only positions of the one-sided materials' files. */
    if ((c.bm | c.bk) == 0) {
        ref.direct = EGDB_LOSS;
        return ref;
    }
    egix_slice s;
    if (egix_slice_of(&c, &s) != 0) {
        ref.direct = EGDB_EINVAL;
        return ref;
    }
    ref.e = egst_find(r, &s);
    if (ref.e) {
        ref.idx = egix_index(ref.e->table, &c);
        __builtin_prefetch(&ref.e->data[ref.idx >> 2]);
    }
    return ref;
}

const egst_slice *
egst_locate_men(const egst_registry *r, const eng_pos *c, uint64_t *men)
{
    egix_slice s;
    if ((c->bm | c->bk) == 0 || egix_slice_of(c, &s) != 0)
        return NULL;
    const egst_slice *e = egst_find(r, &s);
    if (e)
        *men = egix_index_men(e->table, c);
    return e;
}

int
egst_probe(const egst_registry *r, const eng_pos *p)
{
    egst_ref ref = egst_locate(r, p);
    return egst_ref_value(&ref);
}

/* ---- writing ---------------------------------------------------------- */

static int
write_all(int fd, const void *buf, size_t len)
{
    const unsigned char *b = buf;
    while (len > 0) {
        ssize_t w = write(fd, b, len);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        b += w;
        len -= (size_t)w;
    }
    return 0;
}

int
egst_write_tmp(const char *tmp, const void *const *parts, const size_t *lens, int n, char *err,
               size_t errlen)
{
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) {
        snprintf(err, errlen, "%s: %s", tmp, strerror(errno));
        return EGDB_EIO;
    }
    int ok = 1;
    for (int i = 0; ok && i < n; i++)
        ok = write_all(fd, parts[i], lens[i]) == 0;
    if (!ok || fsync(fd) != 0) {
        snprintf(err, errlen, "%s: write: %s", tmp, strerror(errno));
        close(fd);
        unlink(tmp);
        return EGDB_EIO;
    }
    close(fd);
    return 0;
}

int
egst_commit(const char *tmp, const char *path, const char *dir, char *err, size_t errlen)
{
    if (rename(tmp, path) != 0) {
        snprintf(err, errlen, "rename %s: %s", tmp, strerror(errno));
        unlink(tmp);
        return EGDB_EIO;
    }
    int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd >= 0) {
        fsync(dfd);
        close(dfd);
    }
    return 0;
}

int
egst_write(const char *dir, const egst_header *h, const uint8_t *packed, char *err, size_t errlen)
{
    char path[4096], tmp[4200];
    if (egst_path(dir, &h->slice, path, sizeof path) != 0) {
        snprintf(err, errlen, "database path too long: %s", dir);
        return EGDB_EINVAL;
    }
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    unsigned char hb[EGST_HEADER_BYTES];
    egst_header hh = *h;
    hh.payload_hash = egst_payload_hash(packed, h->positions);
    header_encode(&hh, hb);
    size_t plen = (size_t)((h->positions + 3) / 4);

    const void *parts[2] = {hb, packed};
    size_t lens[2] = {sizeof hb, plen};
    int rc = egst_write_tmp(tmp, parts, lens, 2, err, errlen);
    if (rc != 0)
        return rc;

    /* Read the temporary file back and check it before it gets the final
     * name: a file with the final name is complete and correct. */
    egst_header back;
    rc = egst_read_header(tmp, &back, NULL, err, errlen);
    if (rc == 0) {
        int fd = open(tmp, O_RDONLY | O_CLOEXEC);
        void *m = fd >= 0 ? mmap(NULL, sizeof hb + plen, PROT_READ, MAP_SHARED, fd, 0) : MAP_FAILED;
        if (fd >= 0)
            close(fd);
        if (m == MAP_FAILED) {
            snprintf(err, errlen, "%s: read back: %s", tmp, strerror(errno));
            rc = EGDB_EIO;
        } else {
            if (egst_payload_hash((const uint8_t *)m + sizeof hb, h->positions) !=
                hh.payload_hash) {
                snprintf(err, errlen, "%s: read back differs from what was written", tmp);
                rc = EGDB_ECORRUPT;
            }
            munmap(m, sizeof hb + plen);
        }
    }
    if (rc != 0) {
        unlink(tmp);
        return rc;
    }
    return egst_commit(tmp, path, dir, err, errlen);
}

int
egst_file_ok(const char *dir, const egix_slice *s)
{
    char path[4096], err[256];
    egst_header h;
    if (egst_path(dir, s, path, sizeof path) != 0)
        return 0;
    return egst_read_header(path, &h, NULL, err, sizeof err) == 0 && egix_slice_equal(&h.slice, s);
}
