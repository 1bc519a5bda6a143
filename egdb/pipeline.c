/*
 * pipeline.c - units, their stages and drops (pipeline.h), and the cost
 * of a build said before it starts (egdb_estimate, egdb.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>
#include <xxhash.h>

#include "egdb/codec.h"
#include "egdb/pipeline.h"
#include "egdb/run.h"
#include "egdb/stage.h"

/* ---- constants -------------------------------------------------------- */

#define MARK_MAGIC "checkers egdb unit 1"
#define VERIFIED_MAGIC "checkers egdb unit verified 1"
#define CHECKING_MAGIC "checkers egdb unit checking 1"

/*
 * Rates of this project's 2-core machine, in positions a second on 2
 * threads: the build (both phases and the writes), the check of the 2-bit
 * files against their successors, the compression, and the comparison of
 * the compressed files with the 2-bit ones. The build and the comparison
 * are the 7-piece set's (docs/egdb.md, "Seven pieces"; the comparison
 * measured with `egdb verify`'s comparison step, which also probes one
 * position in 64). The check and the compression are the 4v4 split's last
 * five units and the compression of 2123, measured in one run with the
 * machine otherwise idle (stop 50: the check 14.45 G positions in 685 s,
 * 21.1 M a second, with the index cursor of stop 47; the compression 30.5 G
 * in 1,858 s, 16.4 M). The build rate varies most by material: those
 * five men-heavy units built at about 16 M a second, the king-heavy 2222
 * at 5.2 M; the 7-piece rate is kept as the cautious one. Estimates scale
 * them by threads / 2; bigger slices build somewhat slower a position
 * (seed 002 and KingsRow's author report it). The check ran slower on
 * the king-heavy units of 5v3 (10.9-12.2 M: 4310, 5201), whose kings
 * have more successors; the check now prefetches them in blocks
 * (verify.c), x1.48 on the 7-piece unit 4300 (18.5 s against 12.5 s,
 * median of three interleaved pipelined builds), so the cautious figure
 * for what is left is about 16 M. Compression now checks its walk and
 * reads each file back (compress.c, check_written): about 20% more on the
 * king unit 4300 (3311, men-heavier, compressed at 32 M with the
 * read-back), so 14.0 M; the separate comparison from the 2-bit files
 * (28.3 M on 4v4) runs only for files a stopped run left, which the
 * estimate ignores.
 */
#define RATE_BUILD 5.49e6
#define RATE_VERIFY 16.0e6
#define RATE_COMPRESS 14.0e6
/* Compressed bytes a position, for the disk estimate: the 7-piece set
 * came to 161.9 positions a byte, the 4v4 split of 8 pieces to 40.5 (its
 * runs are short: balanced material, 39% draws); 40 is the cautious
 * figure for the splits still to build. */
#define EST_POS_PER_BYTE 40.0

/* ---- units ------------------------------------------------------------ */

/* The material key of a material or of its twin, whichever is smaller:
 * equal for the two members of a unit. */
static unsigned
unit_key(int nbk, int nwk, int nbm, int nwm)
{
    unsigned a = (unsigned)(((nbk * 13 + nwk) * 13 + nbm) * 13 + nwm);
    unsigned b = (unsigned)(((nwk * 13 + nbk) * 13 + nwm) * 13 + nbm);
    return a < b ? a : b;
}

int
egpl_units(const egix_slice *sl, size_t k, egpl_unit **out, size_t *n, char *err, size_t errlen)
{
    *out = NULL;
    *n = 0;
    egpl_unit *u = malloc((k ? k : 1) * sizeof *u);
    if (!u)
        return EGDB_ENOMEM;
    size_t nu = 0;
    for (size_t i = 0; i < k;) {
        unsigned key = unit_key(sl[i].nbk, sl[i].nwk, sl[i].nbm, sl[i].nwm);
        size_t j = i;
        uint64_t pos = 0;
        while (j < k && unit_key(sl[j].nbk, sl[j].nwk, sl[j].nbm, sl[j].nwm) == key) {
            uint64_t sz = 0;
            egix_size(&sl[j], &sz);
            pos += sz;
            j++;
        }
        /* A unit met again later would mean the list interleaves units,
         * and dropping one as soon as its dependants are done would then
         * be unsafe. */
        for (size_t t = 0; t < nu; t++) {
            if (unit_key(u[t].nbk, u[t].nwk, u[t].nbm, u[t].nwm) == key) {
                char name[EGIX_NAME_MAX];
                egix_slice_name(&sl[i], name, sizeof name);
                snprintf(err, errlen,
                         "slice %s: its material's slices are not adjacent in the "
                         "build order",
                         name);
                free(u);
                return EGDB_EINVAL;
            }
        }
        egpl_unit *x = &u[nu++];
        memset(x, 0, sizeof *x);
        x->nbk = sl[i].nbk;
        x->nwk = sl[i].nwk;
        x->nbm = sl[i].nbm;
        x->nwm = sl[i].nwm;
        x->begin = i;
        x->end = j;
        x->positions = pos;
        int bside = x->nbk + x->nbm, wside = x->nwk + x->nwm;
        x->split = bside > wside ? bside : wside;
        i = j;
    }
    *out = u;
    *n = nu;
    return 0;
}

int
egpl_needs(const egpl_unit *a, const egpl_unit *b)
{
    unsigned kb = unit_key(b->nbk, b->nwk, b->nbm, b->nwm);
    /* A black man crowned, or a white one; the twin of a promotes into
     * the twins of these, which have the same unit key. */
    return (a->nbm > 0 && unit_key(a->nbk + 1, a->nwk, a->nbm - 1, a->nwm) == kb) ||
           (a->nwm > 0 && unit_key(a->nbk, a->nwk + 1, a->nbm, a->nwm - 1) == kb);
}

int
egpl_selected(const egdb_build_opts *o, const egpl_unit *u)
{
    return (!o->splits || (o->splits >> u->split & 1u)) && (!o->unit || egpl_unit_is(u, o->unit));
}

int
egpl_unit_is(const egpl_unit *u, const char *name)
{
    if (strlen(name) != 4)
        return 0;
    int c[4];
    for (int i = 0; i < 4; i++)
        if ((c[i] = egix_name_digit(name[i])) < 0)
            return 0;
    return unit_key(c[0], c[1], c[2], c[3]) == unit_key(u->nbk, u->nwk, u->nbm, u->nwm);
}

void
egpl_unit_name(const egpl_unit *u, char buf[EGPL_NAME_MAX])
{
    static const char digit[] = "0123456789abc";
    buf[0] = digit[u->nbk];
    buf[1] = digit[u->nwk];
    buf[2] = digit[u->nbm];
    buf[3] = digit[u->nwm];
    buf[4] = '\0';
}

int
egpl_parse_splits(const char *s, int npieces, unsigned *mask, char *err, size_t errlen)
{
    *mask = 0;
    if (!strcmp(s, "all")) {
        for (int a = (npieces + 1) / 2; a <= npieces; a++)
            *mask |= 1u << a;
        return 0;
    }
    const char *p = s;
    while (*p) {
        int a, b, used = 0;
        if (sscanf(p, "%dv%d%n", &a, &b, &used) != 2 || a < 0 || b < 0 || a + b != npieces) {
            snprintf(err, errlen,
                     "'%.40s': expected splits like 4v4,5v3 whose sides add up to %d pieces, or "
                     "all",
                     p, npieces);
            return EGDB_EINVAL;
        }
        *mask |= 1u << (a > b ? a : b);
        p += used;
        if (*p == ',')
            p++;
        else if (*p) {
            snprintf(err, errlen, "'%.40s': splits are separated by commas", p);
            return EGDB_EINVAL;
        }
    }
    if (!*mask) {
        snprintf(err, errlen, "no split given");
        return EGDB_EINVAL;
    }
    return 0;
}

/* ---- marks ------------------------------------------------------------- */

static int
mark_path(const char *dir, const egpl_unit *u, char *buf, size_t len)
{
    char name[EGPL_NAME_MAX];
    egpl_unit_name(u, name);
    return snprintf(buf, len, "%s/units/%s.done", dir, name) < (int)len ? 0 : EGDB_EINVAL;
}

int
egpl_staged(const char *dir, const egpl_unit *u, const egix_slice *sl)
{
    char path[4096], line[128];
    if (mark_path(dir, u, path, sizeof path) != 0)
        return 0;
    FILE *f = fopen(path, "r");
    if (!f)
        return 0;
    int ok = fgets(line, sizeof line, f) && !strncmp(line, MARK_MAGIC, strlen(MARK_MAGIC));
    fclose(f);
    for (size_t i = u->begin; ok && i < u->end; i++)
        ok = egcp_compressed_ok(dir, &sl[i]);
    return ok;
}

/* Writes text to path, a file of "<dir>/units" (made if missing):
 * atomically, a temporary file, fsync, rename (the marks of RESUMING). */
static int
write_unit_file(const char *dir, const char *path, const char *text, size_t n, char *err,
                size_t errlen)
{
    char sub[4096], tmp[4200];
    snprintf(sub, sizeof sub, "%s/units", dir);
    if (mkdir(sub, 0755) != 0 && errno != EEXIST) {
        snprintf(err, errlen, "cannot create %.600s: %s", sub, strerror(errno));
        return EGDB_EIO;
    }
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    const void *parts[1] = {text};
    size_t lens[1] = {n};
    int rc = egst_write_tmp(tmp, parts, lens, 1, err, errlen);
    return rc == 0 ? egst_commit(tmp, path, sub, err, errlen) : rc;
}

/* Writes the unit's mark: what was staged, one line a slice (the counts
 * from the 2-bit headers), for a reader of the directory. */
static int
write_mark(const char *dir, const egpl_unit *u, const egix_slice *sl, char *err, size_t errlen)
{
    char path[4096], name[EGPL_NAME_MAX];
    if (mark_path(dir, u, path, sizeof path) != 0) {
        snprintf(err, errlen, "database path too long: %s", dir);
        return EGDB_EINVAL;
    }
    egpl_unit_name(u, name);
    size_t cap = 128 + (u->end - u->begin) * 128, n = 0;
    char *text = malloc(cap);
    if (!text)
        return EGDB_ENOMEM;
    n += (size_t)snprintf(text + n, cap - n, "%s\nunit %s slices %zu positions %" PRIu64 "\n",
                          MARK_MAGIC, name, u->end - u->begin, u->positions);
    for (size_t i = u->begin; i < u->end; i++) {
        char spath[4096], sname[EGIX_NAME_MAX];
        egst_header h;
        egst_path(dir, &sl[i], spath, sizeof spath);
        egix_slice_name(&sl[i], sname, sizeof sname);
        int rc = egst_read_header(spath, &h, NULL, err, errlen);
        if (rc != 0) {
            free(text);
            return rc;
        }
        n += (size_t)snprintf(text + n, cap - n,
                              "%s\t%" PRIu64 "\t%" PRIu64 "\t%" PRIu64 "\t%" PRIu64 "\n", sname,
                              h.positions, h.wins, h.losses, h.draws);
    }
    int rc = write_unit_file(dir, path, text, n, err, errlen);
    free(text);
    return rc;
}

/* ---- the verified mark (pipeline.h, RESUMING) ---------------------------- */

/* "<dir>/units/<KKMM>.<suffix>" of unit u into buf. */
static int
unit_path(const char *dir, const egpl_unit *u, const char *suffix, char *buf, size_t len)
{
    char name[EGPL_NAME_MAX];
    egpl_unit_name(u, name);
    return snprintf(buf, len, "%s/units/%s.%s", dir, name, suffix) < (int)len ? 0 : EGDB_EINVAL;
}

static int
verified_path(const char *dir, const egpl_unit *u, char *buf, size_t len)
{
    return unit_path(dir, u, "verified", buf, len);
}

/* XXH3-64 of the whole file at path, and its size. */
static int
file_digest(const char *path, uint64_t *digest, uint64_t *size, char *err, size_t errlen)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        snprintf(err, errlen, "cannot open %.600s: %s", path, strerror(errno));
        return errno == ENOENT ? EGDB_EMISSING : EGDB_EIO;
    }
    XXH3_state_t *st = XXH3_createState();
    size_t cap = (size_t)8 << 20;
    unsigned char *buf = malloc(cap);
    int rc = 0;
    if (!st || !buf) {
        rc = EGDB_ENOMEM;
        goto out;
    }
    XXH3_64bits_reset(st);
    *size = 0;
    for (;;) {
        ssize_t got = read(fd, buf, cap);
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0) {
            snprintf(err, errlen, "cannot read %.600s: %s", path, strerror(errno));
            rc = EGDB_EIO;
            goto out;
        }
        if (got == 0)
            break;
        XXH3_64bits_update(st, buf, (size_t)got);
        *size += (uint64_t)got;
    }
    *digest = XXH3_64bits_digest(st);
out:
    free(buf);
    if (st)
        XXH3_freeState(st);
    close(fd);
    return rc;
}

/* The mark's text for unit u as its 2-bit files are now: the magic, the
 * unit, then "<slice>\t<bytes>\t<XXH3-64 in hex>" a slice. */
static int
verified_text(const char *dir, const egpl_unit *u, const egix_slice *sl, char **out, size_t *len,
              char *err, size_t errlen)
{
    char name[EGPL_NAME_MAX];
    egpl_unit_name(u, name);
    size_t cap = 128 + (u->end - u->begin) * 96, n = 0;
    char *text = malloc(cap);
    if (!text)
        return EGDB_ENOMEM;
    n += (size_t)snprintf(text + n, cap - n, "%s\nunit %s slices %zu\n", VERIFIED_MAGIC, name,
                          u->end - u->begin);
    for (size_t i = u->begin; i < u->end; i++) {
        char spath[4096], sname[EGIX_NAME_MAX];
        uint64_t d = 0, size = 0;
        egst_path(dir, &sl[i], spath, sizeof spath);
        egix_slice_name(&sl[i], sname, sizeof sname);
        int rc = file_digest(spath, &d, &size, err, errlen);
        if (rc != 0) {
            free(text);
            return rc;
        }
        n += (size_t)snprintf(text + n, cap - n, "%s\t%" PRIu64 "\t%016" PRIx64 "\n", sname, size,
                              d);
    }
    *out = text;
    *len = n;
    return 0;
}

/* Written once the unit's 2-bit files pass the check (stage 1): text is
 * verified_text's, taken before the check. */
static int
write_verified(const char *dir, const egpl_unit *u, const char *text, size_t n, char *err,
               size_t errlen)
{
    char path[4096];
    if (verified_path(dir, u, path, sizeof path) != 0) {
        snprintf(err, errlen, "database path too long: %s", dir);
        return EGDB_EINVAL;
    }
    return write_unit_file(dir, path, text, n, err, errlen);
}

/* 1 when the unit's mark of an earlier run is there and every 2-bit file
 * has the bytes it had when it passed; 0 otherwise (no mark, another
 * text, a file changed or unreadable: the check runs again). */
static int
verified_before(const char *dir, const egpl_unit *u, const egix_slice *sl)
{
    char path[4096], why[512];
    if (verified_path(dir, u, path, sizeof path) != 0)
        return 0;
    FILE *f = fopen(path, "r");
    if (!f)
        return 0;
    size_t cap = 128 + (u->end - u->begin) * 96;
    char *mark = malloc(cap + 1);
    size_t got = mark ? fread(mark, 1, cap + 1, f) : 0;
    fclose(f);
    if (!mark || got > cap) {
        free(mark);
        return 0;
    }
    char *text = NULL;
    size_t n = 0;
    int same = verified_text(dir, u, sl, &text, &n, why, sizeof why) == 0;
    if (same) {
        same = n == got && !memcmp(text, mark, n);
        free(text);
    }
    free(mark);
    return same;
}

/* Tells progress (when not NULL) that `done` of unit u's positions were
 * checked in an earlier run; `how` ends the line ("2-bit files: ..."). */
static void
report_checked_before(egdb_progress_fn progress, void *arg, const egpl_unit *u,
                      const egix_slice *sl, uint64_t done, const char *how)
{
    if (!progress)
        return;
    /* static: a progress callback may keep the name it was given (the
     * command line's compares it with the next); one build runs in a
     * process */
    static char msg[200];
    snprintf(msg, sizeof msg, "2-bit files: %s", how);
    egdb_progress pr = {.slice = msg,
                        .phase = "verify",
                        .npieces = sl[u->begin].nbk + sl[u->begin].nwk + sl[u->begin].nbm +
                                   sl[u->begin].nwm,
                        .resolved = done,
                        .positions = u->positions,
                        .done_total = done,
                        .run_total = u->positions};
    progress(&pr, arg);
}

/*
 * The check's progress within a unit (pipeline.h, RESUMING):
 * "<dir>/units/<KKMM>.checking" holds CHECKING_MAGIC, the unit's
 * verified_text (each 2-bit file's size and digest when the check began)
 * and the line "checked", written atomically before the check starts;
 * then the name of each slice whose every position the check found
 * right, appended as each is finished. A run that finds the file with
 * the same text skips the slices it names: their check is a pure function
 * of the unit's bytes, which the text pins, and of smaller units' files,
 * never rewritten. A torn last line (power lost during an append) names
 * no slice and is ignored.
 */
typedef struct checking {
    int fd;                          /* the .checking file, for appends; -1 when it failed */
    const egst_slice *const *slices; /* the slices being checked, by list index */
} checking;

static int
checking_path(const char *dir, const egpl_unit *u, char *buf, size_t len)
{
    return unit_path(dir, u, "checking", buf, len);
}

/* Marks in done[] (the unit's slices, u->begin-based) the slices that
 * the complete lines of buf[at..got) name, each once; a torn last line
 * (no newline) names none. RETURN how many it marked. */
static long
mark_checked(const char *buf, size_t at, size_t got, const egpl_unit *u, const egix_slice *sl,
             unsigned char *done)
{
    const size_t n = u->end - u->begin;
    long found = 0;
    while (at < got) {
        const char *nl = memchr(buf + at, '\n', got - at);
        if (!nl)
            break;
        size_t len = (size_t)(nl - (buf + at));
        for (size_t i = 0; i < n && len == EGIX_NAME_MAX - 1; i++) {
            char sname[EGIX_NAME_MAX];
            egix_slice_name(&sl[u->begin + i], sname, sizeof sname);
            if (!done[i] && !memcmp(sname, buf + at, len)) {
                done[i] = 1;
                found++;
                break;
            }
        }
        at += len + 1;
    }
    return found;
}

/* The slices of unit u that its record of the check (units/KKMM.checking)
 * names as checked: mark_checked on the lines after its "checked" line,
 * as checking_read reads them, without matching the record's text
 * against the 2-bit files. -1 when there is no record. */
static long
checking_count(const char *dir, const egpl_unit *u, const egix_slice *sl)
{
    char path[4096];
    if (checking_path(dir, u, path, sizeof path) != 0)
        return -1;
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    /* the magic, the unit's line and a line a slice (verified_text: a
     * name, a size and a digest), "checked", then a name a slice */
    const size_t n = u->end - u->begin, cap = 256 + n * (64 + EGIX_NAME_MAX + 1);
    char *buf = malloc(cap + 1);
    unsigned char *done = calloc(n ? n : 1, 1);
    size_t got = buf ? fread(buf, 1, cap, f) : 0;
    fclose(f);
    long found = 0;
    if (buf && done) {
        buf[got] = '\0';
        const char *head = strstr(buf, "\nchecked\n");
        if (head)
            found =
                mark_checked(buf, (size_t)(head - buf) + strlen("\nchecked\n"), got, u, sl, done);
    }
    free(buf);
    free(done);
    return found;
}

int
egpl_unit_state(const char *dir, const egpl_unit *u, const egix_slice *sl, size_t *count)
{
    const size_t total = u->end - u->begin;
    size_t n = 0, compressed = 0;
    for (size_t i = u->begin; i < u->end; i++) {
        const int cwl = egcp_compressed_ok(dir, &sl[i]);
        compressed += (size_t)cwl;
        n += egst_file_ok(dir, &sl[i]) || cwl;
    }
    size_t dummy;
    if (!count)
        count = &dummy;
    *count = n;
    if (n < total)
        return n == 0 ? EGPL_NONE : EGPL_STARTED;
    if (egpl_staged(dir, u, sl))
        return EGPL_DONE;
    char path[4096];
    struct stat st;
    if (verified_path(dir, u, path, sizeof path) == 0 && stat(path, &st) == 0) {
        *count = compressed;
        return compressed < total ? EGPL_COMPRESSING : EGPL_COMPRESSED;
    }
    long checked = checking_count(dir, u, sl);
    if (checked >= 0) {
        *count = (size_t)checked;
        return EGPL_CHECKING;
    }
    return EGPL_BUILT;
}

/* egvf_verify_slices' slice_done: one line, one write (the record is a
 * help, never a need: a failed append costs a check again, nothing
 * else). */
static void
checking_append(size_t i, void *arg)
{
    checking *c = arg;
    char line[EGIX_NAME_MAX + 1];
    egix_slice_name(&c->slices[i]->slice, line, EGIX_NAME_MAX);
    size_t n = strlen(line);
    line[n++] = '\n';
    if (c->fd >= 0 && write(c->fd, line, n) != (ssize_t)n) {
        close(c->fd);
        c->fd = -1;
    }
}

/* Marks in done[] (the unit's slices, u->begin-based) those an earlier
 * run's .checking file names, when its text is `text`; returns how many.
 * Otherwise (no file, another text) writes a fresh one and returns 0;
 * -1 when it cannot be written (the check then runs without a record). */
static long
checking_read(const char *dir, const egpl_unit *u, const egix_slice *sl, const char *text,
              size_t tlen, unsigned char *done)
{
    char path[4096], why[512];
    if (checking_path(dir, u, path, sizeof path) != 0)
        return -1;
    size_t n = u->end - u->begin;
    size_t hlen = strlen(CHECKING_MAGIC) + 1 + tlen + strlen("checked\n");
    char *head = malloc(hlen + 1);
    if (!head)
        return -1;
    snprintf(head, hlen + 1, "%s\n%.*schecked\n", CHECKING_MAGIC, (int)tlen, text);
    long found = 0;
    FILE *f = fopen(path, "r");
    size_t cap = hlen + n * (EGIX_NAME_MAX + 1);
    char *old = f ? malloc(cap + 1) : NULL;
    size_t got = old ? fread(old, 1, cap + 1, f) : 0;
    if (f)
        fclose(f);
    if (old && got <= cap && got >= hlen && !memcmp(old, head, hlen)) {
        found = mark_checked(old, hlen, got, u, sl, done);
    } else if (write_unit_file(dir, path, head, hlen, why, sizeof why) != 0) {
        found = -1;
    }
    free(old);
    free(head);
    return found;
}

/*
 * Stage 1 of unit u when no mark says it passed: the check of the slices
 * an earlier run's .checking file does not name, recording each slice
 * as it is finished; when all pass, the mark (.verified) replaces the
 * record. *checked: the positions checked by this run.
 */
static int
check_unit(const char *dir, const egst_registry *reg, const egpl_unit *u, const egix_slice *sl,
           const egst_slice **list, int threads, volatile int *stop, egdb_progress_fn progress,
           void *arg, uint64_t *checked, char *err, size_t errlen)
{
    size_t n = u->end - u->begin;
    char *text = NULL;
    size_t tlen = 0;
    int rc = verified_text(dir, u, sl, &text, &tlen, err, errlen);
    if (rc != 0)
        return rc;
    unsigned char *done = calloc(n ? n : 1, 1);
    /* the slices not checked in an earlier run (the record names those) */
    const egst_slice **unchecked = malloc((n ? n : 1) * sizeof *unchecked);
    if (!done || !unchecked) {
        rc = EGDB_ENOMEM;
        goto out;
    }
    long reused = checking_read(dir, u, sl, text, tlen, done);
    size_t m = 0;
    uint64_t reused_positions = 0;
    for (size_t i = 0; i < n; i++) {
        if (done[i]) {
            reused_positions += list[i]->size;
            continue;
        }
        unchecked[m++] = list[i];
    }
    if (reused > 0) {
        char name[EGPL_NAME_MAX], how[160];
        egpl_unit_name(u, name);
        snprintf(how, sizeof how,
                 "%ld of %zu slices (%" PRIu64 " positions) checked in an earlier run "
                 "(units/%s.checking), the same bytes",
                 reused, n, reused_positions, name);
        report_checked_before(progress, arg, u, sl, reused_positions, how);
    }
    char path[4096];
    checking c = {.fd = -1, .slices = unchecked}; /* no record open yet */
    if (reused >= 0 && checking_path(dir, u, path, sizeof path) == 0)
        c.fd = open(path, O_WRONLY | O_APPEND | O_CLOEXEC);
    *checked = u->positions - reused_positions;
    rc = egvf_verify_slices(reg, unchecked, m, threads, stop, progress, arg, checking_append, &c,
                            err, errlen);
    if (c.fd >= 0)
        close(c.fd);
    if (rc == 0)
        rc = write_verified(dir, u, text, tlen, err, errlen);
    if (rc == 0 && checking_path(dir, u, path, sizeof path) == 0)
        unlink(path); /* the mark says more */
out:
    free(text);
    free(done);
    free(unchecked);
    return rc;
}

/* ---- stages and drops -------------------------------------------------- */

/*
 * Appends "KKMM<TAB>stage<TAB>positions<TAB>seconds<TAB>threads" to
 * DIR/units/stages.tsv when a stage of a unit ends (informative, as
 * build-log.tsv is for the slice pairs: a split's whole time is the two
 * files' sum). A check reused from an earlier run is logged with 0
 * seconds and the stage "verify-reused".
 */
static void
log_stage(const char *dir, const char *name, const char *stage, uint64_t positions, double seconds,
          int threads)
{
    char path[4096];
    if (snprintf(path, sizeof path, "%s/units/stages.tsv", dir) >= (int)sizeof path)
        return;
    FILE *f = fopen(path, "a");
    if (!f)
        return; /* informative only */
    fprintf(f, "%s\t%s\t%" PRIu64 "\t%.1f\t%d\n", name, stage, positions, seconds, threads);
    fclose(f);
}

int
egpl_stage(const char *dir, const egst_registry *reg, const egpl_unit *u, const egix_slice *sl,
           int threads, int threats, volatile int *stop, egdb_progress_fn progress, void *arg,
           char *err, size_t errlen)
{
    size_t n = u->end - u->begin;
    /* one allocation, three lists: the unit's n slices, the compress
     * stage's (those without a compressed file, at most n) and the
     * compare stage's (those with one before this run's compress) */
    const egst_slice **list = malloc((n ? 3 * n : 1) * sizeof *list), **uncompressed = list + n,
                     **kept = list + 2 * n;
    size_t nkept = 0;
    if (!list)
        return EGDB_ENOMEM;
    char name[EGPL_NAME_MAX], why[1024];
    egpl_unit_name(u, name);
    int rc = 0, loaded = 1;
    for (size_t i = 0; i < n && rc == 0; i++) {
        list[i] = egst_find(reg, &sl[u->begin + i]);
        if (!list[i]) {
            loaded = 0;
            char sname[EGIX_NAME_MAX];
            egix_slice_name(&sl[u->begin + i], sname, sizeof sname);
            snprintf(err, errlen, "unit %s: slice %s is not loaded", name, sname);
            rc = EGDB_EMISSING;
        }
    }
    const char *stage = "verify";
    double t0 = egrun_now();
    if (rc == 0 && verified_before(dir, u, sl)) {
        log_stage(dir, name, "verify-reused", u->positions, 0.0, threads);
        /* the check passed in an earlier run on these very bytes */
        char how[120];
        snprintf(how, sizeof how, "checked in an earlier run (units/%s.verified), the same bytes",
                 name);
        report_checked_before(progress, arg, u, sl, u->positions, how);
    } else if (rc == 0) {
        uint64_t checked = 0;
        rc = check_unit(dir, reg, u, sl, list, threads, stop, progress, arg, &checked, why,
                        sizeof why);
        if (rc == 0)
            log_stage(dir, name, "verify", checked, egrun_now() - t0, threads);
    }
    if (rc == 0) {
        /* Only the slices without a compressed file: a run stopped in this
         * stage kept the files it finished (each written whole, then
         * renamed). A file compressed here was read back, decoded and
         * compared with the values it was made from (compress.c,
         * check_written); one found already there is compared with its
         * 2-bit file in stage 3, before the mark. */
        stage = "compress";
        size_t nt = 0;
        for (size_t i = 0; i < n; i++)
            if (!egcp_compressed_ok(dir, &sl[u->begin + i]))
                uncompressed[nt++] = list[i];
            else
                kept[nkept++] = list[i];
        egdb_compress_opts co = {0, threads, threats, progress, arg, stop};
        egdb_compress_stats st;
        uint64_t to_compress = 0; /* positions of the slices compressed here */
        for (size_t i = 0; i < nt; i++)
            to_compress += uncompressed[i]->size;
        t0 = egrun_now();
        if (nt > 0)
            rc = egcp_compress_slices(dir, uncompressed, nt, &co, &st, why, sizeof why);
        if (rc == 0 && nt > 0)
            log_stage(dir, name, "compress", to_compress, egrun_now() - t0, threads);
    }
    if (rc == 0 && nkept > 0) {
        stage = "compare";
        uint64_t to_compare = 0;
        for (size_t i = 0; i < nkept; i++)
            to_compare += kept[i]->size;
        t0 = egrun_now();
        rc = egvf_compare_slices(dir, kept, nkept, threads, stop, why, sizeof why);
        if (rc == 0)
            log_stage(dir, name, "compare", to_compare, egrun_now() - t0, threads);
    }
    if (rc == 0) {
        stage = "mark";
        rc = write_mark(dir, u, sl, why, sizeof why);
    }
    if (rc == EGDB_EINTERRUPT)
        snprintf(err, errlen,
                 "stopped in unit %s's %s stage; finished slices are kept, run again "
                 "to resume",
                 name, stage);
    else if (rc != 0 && loaded) /* else err says which slice is not loaded */
        snprintf(err, errlen, "unit %s, %s: %s", name, stage, why);
    free(list);
    return rc;
}

int
egpl_drop(const char *dir, egst_registry *reg, const egpl_unit *u, const egix_slice *sl, char *err,
          size_t errlen)
{
    for (size_t i = u->begin; i < u->end; i++) {
        char path[4096];
        egst_remove(reg, &sl[i]); /* EGDB_EMISSING: it was not mapped */
        egst_path(dir, &sl[i], path, sizeof path);
        if (unlink(path) != 0 && errno != ENOENT) {
            snprintf(err, errlen, "cannot delete %s: %s", path, strerror(errno));
            return EGDB_EIO;
        }
    }
    /* The deletions reach the disk before anything that counts on them. */
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd >= 0) {
        fsync(fd);
        close(fd);
    }
    return 0;
}

/* ---- the cost of a build ---------------------------------------------- */

static uint64_t
raw_bytes(uint64_t positions)
{
    return EGST_HEADER_BYTES + (positions + 3) / 4;
}

/* The cost of the top piece count of a pipelined or split build: units
 * in order, each adding its 2-bit files until nothing needs them. */
static void
estimate_units(const char *dir, const egix_slice *sl, egpl_unit *u, size_t nu,
               const egdb_build_opts *o, egdb_cost *e, uint64_t base, uint64_t *peak)
{
    uint64_t live = 0, cwl = 0, cwl_end = 0; /* cwl_end: without the pipeline */
    e->units_chosen = 0;
    for (size_t i = 0; i < nu; i++) {
        u[i].selected = egpl_selected(o, &u[i]);
        e->units_chosen += (size_t)u[i].selected;
        u[i].staged = o->pipeline && u[i].selected && egpl_staged(dir, &u[i], sl);
        u[i].dropped = 0;
    }
    for (size_t i = 0; i < nu; i++) {
        if (!u[i].selected)
            continue;
        int left = 0;
        u[i].est_bytes = 0;
        for (size_t s = u[i].begin; s < u[i].end; s++) {
            uint64_t sz = 0;
            egix_size(&sl[s], &sz);
            if (!u[i].staged && !egst_file_ok(dir, &sl[s])) {
                left = 1;
                e->positions += sz;
                e->slices++;
                u[i].est_bytes += raw_bytes(sz);
            }
        }
        live += u[i].est_bytes;
        if (u[i].staged)
            continue;
        /* a unit still to stage is work even when its pairs are all
         * built: a run stopped in its stages (a cluster task's, or the
         * last unit of a build) was told "nothing to do" and left it
         * without its mark */
        if (left || o->pipeline)
            e->units++;
        if (base + live + cwl > *peak)
            *peak = base + live + cwl;
        if (!o->pipeline) {
            /* Compressed at the end (the command's last step; a unit task
             * leaves it to the cluster build's last job), with every 2-bit
             * file still there: that is the peak. The estimate left these
             * files out before stop 58. */
            for (size_t s = u[i].begin; s < u[i].end && !o->unit; s++) {
                uint64_t sz = 0;
                egix_size(&sl[s], &sz);
                if (!egcp_compressed_ok(dir, &sl[s])) {
                    cwl_end += (uint64_t)((double)sz / EST_POS_PER_BYTE);
                    e->stage_positions_compress += sz;
                }
            }
            continue;
        }
        e->stage_positions += u[i].positions;
        cwl += (uint64_t)((double)u[i].positions / EST_POS_PER_BYTE);
        u[i].staged = 1;
        if (base + live + cwl > *peak)
            *peak = base + live + cwl;
        /* Drops that this unit's staging allows (its own included); a
         * cluster task (o->unit) deletes nothing (build.c), so its files
         * stay to the end. */
        for (size_t v = 0; v <= i && !o->unit; v++) {
            if (!u[v].selected || u[v].dropped || !u[v].staged)
                continue;
            int needed = 0;
            for (size_t w = v + 1; w < nu && !needed; w++)
                needed = u[w].selected && !u[w].staged && egpl_needs(&u[w], &u[v]);
            if (!needed) {
                u[v].dropped = 1;
                live -= u[v].est_bytes;
            }
        }
        if (live > e->memory_mapped_peak)
            e->memory_mapped_peak = live;
    }
    if (base + live + cwl + cwl_end > *peak)
        *peak = base + live + cwl + cwl_end;
    e->disk_end = live + cwl + cwl_end; /* the files below (base) are added by the caller */
}

int
egdb_estimate(const char *dir, const egdb_build_opts *o, egdb_cost *e, char *err, size_t errlen)
{
    memset(e, 0, sizeof *e);
    if (o->npieces < 1 || o->npieces > EGDB_MAX_PIECES) {
        snprintf(err, errlen, "pieces must be 1..%d", EGDB_MAX_PIECES);
        return EGDB_EINVAL;
    }
    uint64_t added = 0, peak = 0, mapped_lower = 0;
    for (int n = 1; n <= o->npieces; n++) {
        egix_slice *sl;
        int *pair;
        size_t k;
        int rc = egix_slices_alloc(n, &sl, &pair, &k);
        if (rc != 0)
            return rc == EGIX_ENOMEM ? EGDB_ENOMEM : EGDB_EINVAL;
        /* Working memory: 2 bytes a position of a slice pair. */
        for (size_t i = 0; i < k;) {
            size_t j = i;
            uint64_t pos = 0;
            for (; j < k && pair[j] == pair[i]; j++) {
                uint64_t sz = 0;
                egix_size(&sl[j], &sz);
                pos += sz;
            }
            int bs = sl[i].nbk + sl[i].nbm, ws = sl[i].nwk + sl[i].nwm;
            int chosen = n < o->npieces || !o->splits || (o->splits >> (bs > ws ? bs : ws) & 1u);
            if (n == o->npieces && o->unit) {
                egpl_unit one = {sl[i].nbk, sl[i].nwk, sl[i].nbm, sl[i].nwm, 0, 0,
                                 0,         0,         0,         0,         0, 0};
                chosen = egpl_unit_is(&one, o->unit);
            }
            if (chosen && 2 * pos > e->memory_pair)
                e->memory_pair = 2 * pos;
            i = j;
        }
        free(pair);
        if (n == o->npieces && (o->pipeline || o->splits || o->unit)) {
            egpl_unit *u;
            size_t nu;
            rc = egpl_units(sl, k, &u, &nu, err, errlen);
            if (rc != 0) {
                free(sl);
                return rc;
            }
            estimate_units(dir, sl, u, nu, o, e, added, &peak);
            free(u);
            if (o->unit && e->units_chosen != 1) {
                snprintf(err, errlen,
                         "no unit %.8s among the %d-piece materials (see: checkers "
                         "egdb units --pieces %d)",
                         o->unit, n, n);
                free(sl);
                return EGDB_EINVAL;
            }
        } else {
            /* Kept whole: every file stays, compressed at the end. */
            for (size_t i = 0; i < k; i++) {
                uint64_t sz = 0;
                egix_size(&sl[i], &sz);
                if (n < o->npieces)
                    mapped_lower += raw_bytes(sz);
                if (egst_file_ok(dir, &sl[i])) {
                    /* Built, but compressed only at the end of a run (the
                     * command's last step): one that stopped before then
                     * left it to compress. Stop 55's resumed 1-7 build
                     * announced 0.05 h of compression for its last slices
                     * and then compressed all 37.4 G positions. A unit
                     * task leaves that to the cluster build's last job. */
                    if (!o->unit && !egcp_compressed_ok(dir, &sl[i])) {
                        e->stage_positions_compress += sz;
                        added += (uint64_t)((double)sz / EST_POS_PER_BYTE);
                    }
                    continue;
                }
                e->positions += sz;
                e->slices++;
                added += raw_bytes(sz) + (uint64_t)((double)sz / EST_POS_PER_BYTE);
                e->stage_positions_compress += sz;
            }
            if (n == o->npieces) {
                e->memory_mapped_peak = mapped_lower;
                for (size_t i = 0; i < k; i++) {
                    uint64_t sz = 0;
                    egix_size(&sl[i], &sz);
                    e->memory_mapped_peak += raw_bytes(sz);
                }
            }
            if (added > peak)
                peak = added;
            e->disk_end = added;
        }
        free(sl);
    }
    if (o->pipeline || o->splits || o->unit) {
        e->memory_mapped_peak += mapped_lower;
        e->disk_end += added;
    }
    e->disk_peak = peak;
    double scale = (o->threads > 0 ? o->threads : 1) / 2.0;
    e->seconds_build = (double)e->positions / (RATE_BUILD * scale);
    e->seconds_stages =
        (double)e->stage_positions * (1.0 / RATE_VERIFY + 1.0 / RATE_COMPRESS) / scale +
        (double)e->stage_positions_compress / (RATE_COMPRESS * scale);
    struct statvfs fs;
    char probe_dir[4096];
    snprintf(probe_dir, sizeof probe_dir, "%s", dir);
    /* The directory may not exist yet: ask about the nearest parent. */
    while (statvfs(probe_dir, &fs) != 0) {
        char *slash = strrchr(probe_dir, '/');
        if (!slash || slash == probe_dir) {
            snprintf(probe_dir, sizeof probe_dir, "%s", slash == probe_dir ? "/" : ".");
            if (statvfs(probe_dir, &fs) != 0)
                memset(&fs, 0, sizeof fs);
            break;
        }
        *slash = '\0';
    }
    e->disk_free = (uint64_t)fs.f_bavail * (uint64_t)fs.f_frsize;
    return 0;
}
