/*
 * partial.c - partial-information endgame databases: the files, the
 * registry of loaded slices, opening and probing (partial.h has the
 * manual, seed 000 the method, engine/value.h the value algebra). The
 * builder is partial_build.c, the leading-rank report partial_report.c;
 * partial_int.h says what they share and why the builder is apart.
 * Nothing here calls the complete databases' prober (probe.c), which
 * loads partial databases through this file.
 */
#include <dirent.h>
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

#include "egdb/le.h"

#include "egdb/partial_int.h"

/* ---- constants -------------------------------------------------------- */

/* First 8 bytes of a partial slice file; the last byte is the format
 * version, so a future layout is refused by name rather than misread. */
static const unsigned char pwl_magic[8] = {'C', 'K', 'P', 'W', 'L', 0, 0, EGPT_VERSION};

/* ---- paths -------------------------------------------------------------- */

/* "<dir>/<slice name>.pwl" into buf; EGDB_EINVAL when it does not fit. */
int
pwl_path(const char *dir, const egix_slice *s, char *buf, size_t buflen)
{
    char name[EGIX_NAME_MAX];
    if (egix_slice_name(s, name, sizeof name) != 0)
        return EGDB_EINVAL;
    int n = snprintf(buf, buflen, "%s/%s.pwl", dir, name);
    return (n < 0 || (size_t)n >= buflen) ? EGDB_EINVAL : 0;
}

/* ---- file header -------------------------------------------------------- */

/* The 128-byte header of partial.h's FILE FORMAT; reserved bytes zero,
 * the header checksum last so that it covers everything before it. */
void
pwl_header_encode(const egpt_slice_info *h, unsigned char *b)
{
    memset(b, 0, EGPT_HEADER_BYTES);
    memcpy(b, pwl_magic, sizeof pwl_magic);
    egle_put_slice(b + 8, &h->slice);
    egle_put64(b + 16, h->positions);
    for (int k = 0; k < ENG_NBOUNDS; k++)
        egle_put64(b + 24 + 8 * k, h->count[k]);
    egle_put64(b + 72, h->captures);
    egle_put64(b + 80, h->captures_exact);
    egle_put64(b + 88, h->captures_half);
    egle_put64(b + 112, h->payload_hash);
    egle_put64(b + 120, XXH3_64bits(b, 120));
}

/*
 * Decodes and checks a header read from path (file_bytes: the file's
 * size). Every inconsistency is EGDB_ECORRUPT naming the path. The checks
 * go from cheap to specific: magic (is it ours at all), version (can we
 * read it), header checksum (is it intact), then the slice against the
 * index (a slice whose size the index disagrees with would be read with
 * the wrong table), the counts against each other, and the file size
 * against the position count (truncation).
 */
static int
header_decode(const unsigned char *b, uint64_t file_bytes, const char *path, egpt_slice_info *h,
              char *err, size_t errlen)
{
    memset(h, 0, sizeof *h);
    if (memcmp(b, pwl_magic, 7) != 0) {
        snprintf(err, errlen, "%s: not a partial slice file (bad magic)", path);
        return EGDB_ECORRUPT;
    }
    if (b[7] != EGPT_VERSION) {
        snprintf(err, errlen, "%s: format version %d, this program reads version %d", path, b[7],
                 EGPT_VERSION);
        return EGDB_ECORRUPT;
    }
    if (egle_get64(b + 120) != XXH3_64bits(b, 120)) {
        snprintf(err, errlen, "%s: header checksum mismatch", path);
        return EGDB_ECORRUPT;
    }
    egle_get_slice(b + 8, &h->slice);
    h->positions = egle_get64(b + 16);
    uint64_t sum = 0;
    for (int k = 0; k < ENG_NBOUNDS; k++) {
        h->count[k] = egle_get64(b + 24 + 8 * k);
        sum += h->count[k];
    }
    h->captures = egle_get64(b + 72);
    h->captures_exact = egle_get64(b + 80);
    h->captures_half = egle_get64(b + 88);
    h->payload_hash = egle_get64(b + 112);
    uint64_t size;
    if (egix_slice_check(&h->slice) != 0 || egix_size(&h->slice, &size) != 0 ||
        size != h->positions || sum != h->positions || h->captures > h->positions ||
        h->captures_exact + h->captures_half > h->captures) {
        snprintf(err, errlen, "%s: header describes an impossible slice or counts", path);
        return EGDB_ECORRUPT;
    }
    uint64_t want = EGPT_HEADER_BYTES + (h->positions + 1) / 2;
    if (file_bytes != want) {
        snprintf(err, errlen, "%s: %" PRIu64 " bytes, expected %" PRIu64 " (truncated or padded)",
                 path, file_bytes, want);
        return EGDB_ECORRUPT;
    }
    egix_slice_name(&h->slice, h->name, sizeof h->name);
    h->file_bytes = file_bytes;
    return 0;
}

/* Reads and checks the header of a .pwl file (pread of 128 bytes, no
 * mapping: egpt_list calls this for every slice of a directory). */
int
pwl_read_header(const char *path, egpt_slice_info *h, char *err, size_t errlen)
{
    unsigned char b[EGPT_HEADER_BYTES];
    uint64_t len;
    int rc = egst_read_head(path, b, sizeof b, &len, err, errlen);
    return rc != 0 ? rc : header_decode(b, len, path, h, err, errlen);
}

/*
 * count[k] += the nibbles of data[0, bytes) equal to bound code k, for
 * the ENG_NBOUNDS codes; *other += the nibbles that are no code at all.
 * Six compares a byte, summed in 16-bit counters over blocks of 4,096
 * bytes (at most 8,192 nibbles a block), which the compiler turns into
 * vector code that runs at memory speed whatever the data. A histogram
 * indexed by the byte (the first way) waits on its own counter when a
 * value repeats, and a partial file is long runs of one value: it ran at
 * about 0.25 GB/s, and every process that opens a 9- or 10-piece partial
 * set reads gigabytes here.
 */
_Static_assert(ENG_NBOUNDS == 6, "nibble_counts compares with each bound code");
static void
nibble_counts(const uint8_t *data, uint64_t bytes, uint64_t count[ENG_NBOUNDS], uint64_t *other)
{
    while (bytes > 0) {
        size_t m = (size_t)(bytes < 4096 ? bytes : 4096);
        uint16_t a0 = 0, a1 = 0, a2 = 0, a3 = 0, a4 = 0, a5 = 0;
        for (size_t i = 0; i < m; i++) {
            uint8_t lo = data[i] & 0x0F, hi = data[i] >> 4;
            a0 += (uint16_t)((lo == 0) + (hi == 0));
            a1 += (uint16_t)((lo == 1) + (hi == 1));
            a2 += (uint16_t)((lo == 2) + (hi == 2));
            a3 += (uint16_t)((lo == 3) + (hi == 3));
            a4 += (uint16_t)((lo == 4) + (hi == 4));
            a5 += (uint16_t)((lo == 5) + (hi == 5));
        }
        count[0] += a0;
        count[1] += a1;
        count[2] += a2;
        count[3] += a3;
        count[4] += a4;
        count[5] += a5;
        *other += 2 * (uint64_t)m - ((uint64_t)a0 + a1 + a2 + a3 + a4 + a5);
        data += m;
        bytes -= m;
    }
}

/*
 * Checks a payload against its header: checksum, every code a bound, the
 * padding nibble zero, and the per-bound counts. The counts make a
 * damaged file that still hashes right (it cannot, short of a collision)
 * or a header that lies about the contents fail here.
 */
int
pwl_check_payload(const uint8_t *data, const egpt_slice_info *h, const char *path, char *err,
                  size_t errlen)
{
    uint64_t bytes = (h->positions + 1) / 2;
    if (XXH3_64bits(data, (size_t)bytes) != h->payload_hash) {
        snprintf(err, errlen, "%s: payload checksum mismatch", path);
        return EGDB_ECORRUPT;
    }
    uint64_t count[ENG_NBOUNDS] = {0}, other = 0;
    nibble_counts(data, bytes, count, &other);
    if (h->positions & 1)
        count[0]--; /* the padding nibble, which must be zero */
    if ((h->positions & 1) && (data[bytes - 1] >> 4) != 0) {
        snprintf(err, errlen, "%s: nonzero padding after the last position", path);
        return EGDB_ECORRUPT;
    }
    if (other != 0) {
        snprintf(err, errlen, "%s: %" PRIu64 " positions with a code that is no bound (%d-15)",
                 path, other, ENG_NBOUNDS);
        return EGDB_ECORRUPT;
    }
    for (int k = 0; k < ENG_NBOUNDS; k++) {
        if (count[k] != h->count[k]) {
            snprintf(err, errlen, "%s: %" PRIu64 " positions with code %d, header says %" PRIu64,
                     path, count[k], k, h->count[k]);
            return EGDB_ECORRUPT;
        }
    }
    return 0;
}

/* ---- the registry of loaded slices -------------------------------------- */

/* An empty registry. The two key arrays are about 15 MB each but calloc
 * leaves untouched pages unbacked, so a small database costs little. */
int
pwl_db_init(egpt_db *db)
{
    memset(db, 0, sizeof *db);
    if (egst_registry_init(&db->reg) != 0)
        return EGDB_ENOMEM;
    db->by_key = calloc(EGST_NKEYS, sizeof *db->by_key);
    if (!db->by_key) {
        egst_registry_free(&db->reg);
        return EGDB_ENOMEM;
    }
    return 0;
}

/* Unmaps and frees every slice of both kinds. */
void
pwl_db_free(egpt_db *db)
{
    for (size_t i = 0; i < db->n; i++) {
        pslice *e = db->list[i];
        if (e->map)
            munmap(e->map, e->map_len);
        egix_table_destroy(e->table);
        free(e);
    }
    free(db->list);
    free(db->by_key);
    egst_registry_free(&db->reg);
    memset(db, 0, sizeof *db);
}

/* Maps the partial file of s in dir and adds it (check: also the
 * payload). The mapping is read-only and shared: two processes probing
 * the same database share the page cache. */
int
pwl_db_add(egpt_db *db, const char *dir, const egix_slice *s, int check, char *err, size_t errlen)
{
    char path[PATH_MAX_LEN];
    egpt_slice_info h;
    if (pwl_path(dir, s, path, sizeof path) != 0) {
        snprintf(err, errlen, "database path too long: %s", dir);
        return EGDB_EINVAL;
    }
    int rc = pwl_read_header(path, &h, err, errlen);
    if (rc != 0)
        return rc;
    if (!egix_slice_equal(&h.slice, s)) {
        snprintf(err, errlen, "%s: header names another slice (%s)", path, h.name);
        return EGDB_ECORRUPT;
    }
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        return EGDB_EIO;
    }
    void *map = mmap(NULL, (size_t)h.file_bytes, PROT_READ, MAP_SHARED, fd, 0);
    close(fd);
    if (map == MAP_FAILED) {
        snprintf(err, errlen, "%s: mmap: %s", path, strerror(errno));
        return EGDB_EIO;
    }
    const uint8_t *data = (const uint8_t *)map + EGPT_HEADER_BYTES;
    if (check && (rc = pwl_check_payload(data, &h, path, err, errlen)) != 0) {
        munmap(map, (size_t)h.file_bytes);
        return rc;
    }
    pslice *e = calloc(1, sizeof *e);
    if (!e || egix_table_create(s, &e->table) != 0) {
        free(e);
        munmap(map, (size_t)h.file_bytes);
        snprintf(err, errlen, "out of memory loading %s", path);
        return EGDB_ENOMEM;
    }
    e->slice = *s;
    e->size = h.positions;
    e->data = data;
    e->map = map;
    e->map_len = (size_t)h.file_bytes;
    if (db->n == db->cap) {
        size_t cap = db->cap ? 2 * db->cap : 64;
        pslice **l = realloc(db->list, cap * sizeof *l);
        if (!l) {
            egix_table_destroy(e->table);
            munmap(map, (size_t)h.file_bytes);
            free(e);
            return EGDB_ENOMEM;
        }
        db->list = l;
        db->cap = cap;
    }
    db->list[db->n++] = e;
    db->by_key[egst_key(s)] = e;
    db->positions += e->size;
    return 0;
}

/* ---- materials ---------------------------------------------------------- */

int
egpt_parse_materials(const char *text, egpt_material *out, size_t cap, size_t *n, char *err,
                     size_t errlen)
{
    *n = 0;
    size_t off = 0;
    /* One item per round: optional spaces, four count characters, optional
     * spaces, then ',' or the end. Offsets in messages are byte offsets
     * into text. */
    for (;;) {
        while (text[off] == ' ')
            off++;
        int d[4];
        for (int k = 0; k < 4; k++) {
            d[k] = text[off + (size_t)k] ? egix_name_digit(text[off + (size_t)k]) : -1;
            if (d[k] < 0) {
                snprintf(err, errlen,
                         "material at byte %zu of \"%s\": expected four counts KKMM "
                         "(0-9, a-c), e.g. 0033",
                         off, text);
                return EGDB_EINVAL;
            }
        }
        egpt_material m = {(int8_t)d[0], (int8_t)d[1], (int8_t)d[2], (int8_t)d[3]};
        if (!pwl_material_ok(&m)) {
            snprintf(err, errlen,
                     "material %.4s at byte %zu: needs 1..%d pieces and at most 12 a side",
                     text + off, off, EGPT_MAX_PIECES);
            return EGDB_EINVAL;
        }
        if (*n >= cap) {
            snprintf(err, errlen, "more than %zu materials (at byte %zu)", cap, off);
            return EGDB_EINVAL;
        }
        out[(*n)++] = m;
        off += 4;
        while (text[off] == ' ')
            off++;
        if (text[off] == '\0')
            return 0;
        if (text[off] != ',') {
            snprintf(err, errlen, "byte %zu of \"%s\": expected ',' between materials", off, text);
            return EGDB_EINVAL;
        }
        off++;
    }
}

/* ---- probing ------------------------------------------------------------ */

/* qsort order of slice names: sorted names are sorted by material, then
 * by ranks (index.h SLICE NAMES). */
static int
name_cmp(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The slice names ("KKMM.RR") of the files of dir ending in ext (".pwl"
 * or ".wld"), sorted; malloc'ed array of malloc'ed strings. Other files
 * (temporaries "*.pwl.tmp" of an interrupted build, logs, compressed
 * files) are ignored: only an exact "<7-character name><ext>" whose name
 * parses as a slice counts. */
int
pwl_list_names(const char *dir, const char *ext, char ***out, size_t *n, char *err, size_t errlen)
{
    *out = NULL;
    *n = 0;
    DIR *d = opendir(dir);
    if (!d) {
        snprintf(err, errlen, "%s: %s", dir, strerror(errno));
        return errno == ENOENT ? EGDB_EMISSING : EGDB_EIO;
    }
    size_t cap = 0;
    char **v = NULL;
    int rc = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        size_t len = strlen(e->d_name);
        egix_slice s;
        char name[EGIX_NAME_MAX];
        if (len != 11 || strcmp(e->d_name + 7, ext) != 0)
            continue;
        memcpy(name, e->d_name, 7);
        name[7] = '\0';
        if (egix_slice_parse(name, &s) != 0)
            continue;
        if (*n == cap) {
            cap = cap ? 2 * cap : 64;
            char **nv = realloc(v, cap * sizeof *nv);
            if (!nv) {
                rc = EGDB_ENOMEM;
                break;
            }
            v = nv;
        }
        if (!(v[*n] = strdup(name))) {
            rc = EGDB_ENOMEM;
            break;
        }
        (*n)++;
    }
    closedir(d);
    if (rc == 0 && *n > 1)
        qsort(v, *n, sizeof *v, name_cmp);
    *out = v;
    if (rc != 0)
        snprintf(err, errlen, "out of memory listing %s", dir);
    return rc;
}

/* Frees what pwl_list_names returned. */
void
pwl_free_names(char **v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(v[i]);
    free(v);
}

/*
 * Opening reads every partial payload once (checksum, codes, counts):
 * partial databases are small next to the complete ones, and a probe
 * must never return a bound from a damaged file. Complete files are
 * checked the same way (their payload checksum), as egdb_open does.
 */
int
egpt_open(const char *dir, int flags, egpt_db **out, char *err, size_t errlen)
{
    *out = NULL;
    egpt_db *db = malloc(sizeof *db);
    if (!db || pwl_db_init(db) != 0) {
        free(db);
        return EGDB_ENOMEM;
    }
    char **names = NULL;
    size_t n = 0;
    uint8_t *partial_mat = calloc(NMATKEYS, 1);
    int rc = partial_mat ? pwl_list_names(dir, ".pwl", &names, &n, err, errlen) : EGDB_ENOMEM;
    if (rc == 0 && n == 0) {
        snprintf(err, errlen, "%s: no partial slice file (.pwl)", dir);
        rc = EGDB_EMISSING;
    }
    for (size_t i = 0; i < n && rc == 0; i++) {
        egix_slice s;
        egix_slice_parse(names[i], &s);
        partial_mat[pwl_slice_mat_key(&s)] = 1;
        rc = pwl_db_add(db, dir, &s, 1, err, errlen);
    }
    pwl_free_names(names, n);
    names = NULL;
    n = 0;
    if (rc == 0 && (flags & EGPT_OPEN_COMPLETE)) {
        rc = pwl_list_names(dir, ".wld", &names, &n, err, errlen);
        for (size_t i = 0; i < n && rc == 0; i++) {
            egix_slice s;
            egix_slice_parse(names[i], &s);
            if (!partial_mat[pwl_slice_mat_key(&s)])
                rc = egst_add_mapped(&db->reg, dir, &s, 1, err, errlen);
        }
        pwl_free_names(names, n);
    }
    free(partial_mat);
    if (rc != 0) {
        pwl_db_free(db);
        free(db);
        return rc;
    }
    *out = db;
    return 0;
}

void
egpt_close(egpt_db *db)
{
    if (!db)
        return;
    pwl_db_free(db);
    free(db);
}

/* Probing is the builder's lookup on the canonical (Black-to-move) twin,
 * with argument checks: egix_slice_of rejects overlapping masks, men on
 * their crowning row and too many pieces. */
int
egpt_probe(const egpt_db *db, const eng_pos *p)
{
    eng_pos c = eng_canonical(p);
    egix_slice s;
    if ((c.bm | c.bk) == 0)
        return ENG_LL;
    if (egix_slice_of(&c, &s) != 0)
        return EGDB_EINVAL;
    int b = pwl_db_lookup(db, &c, &s);
    return b == -2 ? EGDB_ECORRUPT : b < 0 ? EGDB_ENOTFOUND : b;
}

size_t
egpt_slice_count(const egpt_db *db, uint64_t *positions)
{
    if (positions)
        *positions = db->positions;
    return db->n;
}

/* ---- listing (the report is in partial_report.c) ----------------------- */

int
egpt_list(const char *dir, egpt_slice_info **out, size_t *n, char *err, size_t errlen)
{
    *out = NULL;
    *n = 0;
    char **names;
    size_t k;
    int rc = pwl_list_names(dir, ".pwl", &names, &k, err, errlen);
    if (rc != 0)
        return rc;
    egpt_slice_info *v = k ? calloc(k, sizeof *v) : NULL;
    if (k && !v)
        rc = EGDB_ENOMEM;
    for (size_t i = 0; i < k && rc == 0; i++) {
        char path[PATH_MAX_LEN];
        snprintf(path, sizeof path, "%s/%s.pwl", dir, names[i]);
        rc = pwl_read_header(path, &v[i], err, errlen);
        if (rc == 0 && strcmp(v[i].name, names[i]) != 0) {
            snprintf(err, errlen, "%s: header names another slice (%s)", path, v[i].name);
            rc = EGDB_ECORRUPT;
        }
    }
    pwl_free_names(names, k);
    if (rc != 0) {
        free(v);
        return rc;
    }
    *out = v;
    *n = k;
    return 0;
}
