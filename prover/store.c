/*
 * store.c - the proven-node store in LMDB (format and contract in
 * store.h).
 *
 * The file has five parts: the record codec (pure functions: keys,
 * values, checksums, the colour flip of moves), the LMDB plumbing
 * (transactions that survive map growth, and guards that turn LMDB's
 * reactions to a damaged file into errors), opening (the header and
 * schema checks), writing (validation, merging) and reading (get, scans,
 * statistics).
 *
 * Why LMDB, and why this way:
 *   - Copy-on-write B-tree with one atomic meta-page switch per commit: a
 *     writer killed at any instant leaves the last committed state, which
 *     is what THE INVARIANT of store.h needs (a proof is written whole or
 *     not at all).
 *   - Readers never block writers, and many solver processes share one
 *     file through the OS page cache.
 *   - The map is a window on the file, not the file: it starts at 1 GiB
 *     of address space (no disk) and doubles when a write finds it full.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <lmdb.h>
#include <xxhash.h>

#include "prover/store.h"

/* ---- constants -------------------------------------------------------- */

#define PST_FORMAT 1 /* value byte 0: the record format of schema 1 */
#define PST_KEY_BYTES 16
#define PST_VAL_BYTES 32
#define PST_SUM_BYTES 28 /* value bytes under the checksum (key bytes too) */

/* Flags byte of a record. */
#define PST_FLAG_WIN 0x01
#define PST_FLAG_DRAW 0x02

/*
 * The initial map: 1 GiB of address space, not of disk (LMDB only writes
 * the pages it uses). Large enough that a typical run never resizes,
 * small enough to leave room for many processes on a 47-bit address
 * space. CHECKERS_PST_MAP_BYTES overrides it so that the tests can reach
 * MDB_MAP_FULL with a few thousand records.
 */
#define PST_MAP_INITIAL ((size_t)1 << 30)
#define PST_MAP_ENV "CHECKERS_PST_MAP_BYTES"
#define PST_MAP_MIN ((size_t)4096)
#define PST_MAP_MAX ((size_t)1 << 46) /* 64 TiB: beyond this a doubling is a bug */

/*
 * Reader slots in lock.mdb, shared by every process of the machine. LMDB's
 * default (126) is low for many solver processes with several threads
 * each; a slot costs 64 bytes of lock file.
 */
#define PST_MAX_READERS 1022

/* Reset read transactions kept per environment for reuse (see pst_env). */
#define PST_POOL 64

/* Records copied out of LMDB per read transaction of a scan. */
#define PST_SCAN_CHUNK 4096

/* How often a transaction start is retried after another process grew
 * the map (MDB_MAP_RESIZED); each retry adopts the new size, so more
 * than a few in a row means something else is wrong. */
#define PST_RESIZED_TRIES 64

/* The LMDB meta page as mdb.c lays it out (data format 1, 64-bit). See
 * pst_check_header for why we read it ourselves. */
#define LMDB_MAGIC 0xBEEFC0DEu
#define LMDB_DATA_VERSION 1u
#define LMDB_P_META 0x08
#define LMDB_META_END 152 /* bytes of page header + MDB_meta */
#define LMDB_P_INVALID UINT64_MAX

/* What the schema check found. */
enum { PST_SCHEMA_OK = 0, PST_SCHEMA_EMPTY = 1 };

/* What pst_guarded returns when LMDB failed an assertion or faulted. Not
 * a PST_E* code and not an LMDB one: it never leaves this file. */
#define PST_ASSERTED (-1000)

/* The value a jump out of LMDB carries when an assertion failed (signals
 * carry their number). */
#define PST_JUMP_ASSERT 1000

/* ---- types ------------------------------------------------------------ */

/*
 * An open store. LMDB wants one MDB_env per process and file; the
 * pst_env wraps it with what LMDB leaves to the caller:
 *
 *   map_lock  mdb_env_set_mapsize may only run when no transaction of the
 *             process is active. Every transaction holds map_lock shared;
 *             a resize (after MDB_MAP_FULL or MDB_MAP_RESIZED) takes it
 *             exclusively. The lock prefers the resizer: with readers
 *             preferred, solver threads calling pst_get in a loop would
 *             starve a resize for ever. That is safe because no thread
 *             ever takes the lock twice: scans call back with no
 *             transaction open.
 *   pool      reset read transactions. With MDB_NOTLS a reset transaction
 *             keeps its reader slot, so renewing it skips the lock-file
 *             mutex that mdb_txn_begin takes: pst_get is on the solvers'
 *             hot path.
 *   damaged   set (with the first message) when this process has seen
 *             any damage in the file, a bad record or a bad page; from
 *             then on pst_put_many refuses to write. LMDB writes into
 *             copies of the pages on its way, and a damaged page can make
 *             it write past them or spread the damage; and whatever
 *             damaged one record may have damaged pages that reads have
 *             not met yet. The file is evidence to keep as it is.
 *   broken    set when LMDB faulted inside a write transaction and
 *             faulted again while the transaction was aborted: LMDB's
 *             state in this process can no longer be trusted, and every
 *             call fails with PST_ECORRUPT without entering LMDB again;
 *             pst_close then leaves the environment as it is (the
 *             writers' mutex is released when the process exits, which
 *             it should do soon).
 * pool_lock guards pool and damaged.
 */
struct pst_env {
    MDB_env *env;
    MDB_dbi nodes;
    MDB_dbi meta;
    int rdonly;
    char *path;
    pthread_rwlock_t map_lock;
    pthread_mutex_t pool_lock;
    MDB_txn *pool[PST_POOL];
    int npool;
    int damaged;
    char damage[320];
    atomic_int broken;
};

/* A write transaction body: returns 0, an LMDB code, or a PST_E* code
 * with err written. */
typedef int (*pst_txn_fn)(pst_env *s, MDB_txn *txn, void *arg, char *err, size_t errlen);

/* A scan callback: a canonical position and its checked record. */
typedef int (*pst_scan_fn)(const eng_pos *p, const pst_record *r, void *arg);

/* One record of a batch after validation: its key and its record in the
 * canonical orientation. */
typedef struct pst_norm {
    uint8_t key[PST_KEY_BYTES];
    pst_record rec;
} pst_norm;

typedef struct pst_batch {
    const pst_item *items;
    const pst_norm *norm;
    size_t n;
    size_t changed; /* records whose stored value the batch changes */
} pst_batch;

/* One attempt of pst_write, run under pst_guarded. */
typedef struct pst_write_op {
    pst_env *s;
    MDB_txn *txn; /* NULL once committed (commit frees it, even when it fails) */
    pst_txn_fn fn;
    void *arg;
    char *err;
    size_t errlen;
    const char *what; /* the step that failed, for the message */
} pst_write_op;

/* pst_schema in a read transaction, under pst_guarded. */
typedef struct pst_schema_op {
    pst_env *s;
    MDB_txn *txn;
    char *err;
    size_t errlen;
} pst_schema_op;

/* The read pass of pst_put_many, under pst_guarded. */
typedef struct pst_precheck_op {
    pst_env *s;
    MDB_txn *txn;
    pst_batch *b;
    char *err;
    size_t errlen;
} pst_precheck_op;

/* The lookup under pst_get, run under pst_guarded. */
typedef struct pst_get_op {
    MDB_txn *txn;
    MDB_dbi dbi;
    const uint8_t *key;
    uint8_t val[PST_VAL_BYTES];
    size_t len;
} pst_get_op;

/* One raw record copied out of a read transaction by a scan. */
typedef struct pst_raw {
    uint8_t key[PST_KEY_BYTES];
    uint8_t val[PST_VAL_BYTES];
} pst_raw;

/* One chunk of a scan, copied out of one read transaction under
 * pst_guarded. */
typedef struct pst_chunk_op {
    pst_env *s;
    MDB_txn *txn;
    MDB_cursor *cur; /* closed by the caller, also after an assertion */
    pst_raw *buf;
    size_t n;
    const uint8_t *after; /* resume after this key (NULL: from the first) */
    int done;             /* the last record has been read */
    char *err;
    size_t errlen;
} pst_chunk_op;

/* A guarded stretch of LMDB calls (see pst_guarded). */
typedef struct pst_guard {
    sigjmp_buf jb;
    struct pst_guard *prev;
    char *msg; /* the caller's buffer for LMDB's assertion text */
    size_t msglen;
} pst_guard;

/* ---- static data ------------------------------------------------------ */

/*
 * The innermost guarded stretch of the calling thread. Thread-local
 * because neither the LMDB assertion callback (it gets the environment,
 * which every thread shares) nor a signal handler can be handed a
 * context; it only ever points into a live stack frame of its own
 * thread. With the saved signal actions below, it is the only mutable
 * state of this file outside a pst_env.
 */
static _Thread_local pst_guard *pst_guard_cur;

/* The SIGSEGV and SIGBUS actions found when the store last installed its
 * own, to chain to for faults that are not ours; pst_fault_lock
 * serialises installations. */
static pthread_mutex_t pst_fault_lock = PTHREAD_MUTEX_INITIALIZER;
static struct sigaction pst_old_segv, pst_old_bus;

/* ---- prototypes ------------------------------------------------------- */

static void pst_errf(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* ---- small helpers ---------------------------------------------------- */

static void
pst_errf(char *err, size_t errlen, const char *fmt, ...)
{
    if (!err || errlen == 0)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
}

/* Little-endian field access: the file format is the same on every
 * machine, whatever its byte order. */
static void
pst_put16(uint8_t *b, uint16_t v)
{
    b[0] = (uint8_t)v;
    b[1] = (uint8_t)(v >> 8);
}

static void
pst_put32(uint8_t *b, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        b[i] = (uint8_t)(v >> (8 * i));
}

static void
pst_put64(uint8_t *b, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        b[i] = (uint8_t)(v >> (8 * i));
}

static uint16_t
pst_get16(const uint8_t *b)
{
    return (uint16_t)(b[0] | (b[1] << 8));
}

static uint32_t
pst_get32(const uint8_t *b)
{
    return (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
}

static uint64_t
pst_get64(const uint8_t *b)
{
    return (uint64_t)pst_get32(b) | (uint64_t)pst_get32(b + 4) << 32;
}

/* Bit i -> bit 31 - i: the square map of the colour flip (square n ->
 * 33 - n, eng_flip in engine/board.c), applied to a captured set. */
static uint32_t
pst_rev32(uint32_t x)
{
    x = (x >> 1 & 0x55555555u) | (x & 0x55555555u) << 1;
    x = (x >> 2 & 0x33333333u) | (x & 0x33333333u) << 2;
    x = (x >> 4 & 0x0F0F0F0Fu) | (x & 0x0F0F0F0Fu) << 4;
    x = (x >> 8 & 0x00FF00FFu) | (x & 0x00FF00FFu) << 8;
    return x >> 16 | x << 16;
}

/* A move of a position seen from its flipped twin: the same move on the
 * rotated board. An involution, so it maps both ways. */
static pst_move
pst_move_flip(pst_move m)
{
    if (m.from == PST_NOMOVE)
        return m;
    pst_move f = {(uint8_t)(31 - m.from), (uint8_t)(31 - m.to), pst_rev32(m.captured)};
    return f;
}

static void
pst_move_clear(pst_move *m)
{
    m->from = PST_NOMOVE;
    m->to = 0;
    m->captured = 0;
}

/* The key of a canonical position: its four masks, little-endian, in the
 * order store.h gives. Keys sort by memcmp, which is all LMDB needs. */
static void
pst_key_of(const eng_pos *c, uint8_t key[PST_KEY_BYTES])
{
    pst_put32(key, c->bm);
    pst_put32(key + 4, c->wm);
    pst_put32(key + 8, c->bk);
    pst_put32(key + 12, c->wk);
}

static eng_pos
pst_pos_of_key(const uint8_t key[PST_KEY_BYTES])
{
    eng_pos p = {pst_get32(key), pst_get32(key + 4), pst_get32(key + 8), pst_get32(key + 12),
                 ENG_BLACK};
    return p;
}

/* A position for a message: its FEN. */
static void
pst_fen(const eng_pos *p, char *buf, size_t len)
{
    if (eng_format_fen(p, buf, len) != 0)
        snprintf(buf, len, "(unprintable position)");
}

/* A move for a message: PDN squares (1-based) and the captured set. */
static void
pst_move_text(const pst_move *m, char *buf, size_t len)
{
    snprintf(buf, len, "from %d to %d capturing 0x%08" PRIx32, m->from + 1, m->to + 1, m->captured);
}

static int
pst_popcount(uint32_t x)
{
    return __builtin_popcount(x);
}

/* ---- the record codec ------------------------------------------------- */

static void
pst_move_put(uint8_t *b, const pst_move *m)
{
    /* An absent move is six zero bytes with its flag clear, so that two
     * encodings of the same record are byte-identical (the writer skips
     * records that a merge leaves unchanged by comparing values). */
    if (m->from == PST_NOMOVE) {
        memset(b, 0, 6);
        return;
    }
    b[0] = m->from;
    b[1] = m->to;
    pst_put32(b + 2, m->captured);
}

static uint32_t
pst_checksum(const uint8_t key[PST_KEY_BYTES], const uint8_t *val)
{
    /* The key is summed with the value so that a record moved under
     * another key (a damaged branch page, a bad copy) fails its check
     * instead of answering for the wrong position. */
    uint8_t buf[PST_KEY_BYTES + PST_SUM_BYTES];
    memcpy(buf, key, PST_KEY_BYTES);
    memcpy(buf + PST_KEY_BYTES, val, PST_SUM_BYTES);
    return XXH32(buf, sizeof buf, 0);
}

void
pst_encode(const uint8_t key[16], const pst_record *r, uint8_t val[32])
{
    memset(val, 0, PST_VAL_BYTES);
    val[0] = PST_FORMAT;
    val[1] = r->bound;
    val[2] = (uint8_t)((r->win.from != PST_NOMOVE ? PST_FLAG_WIN : 0) |
                       (r->draw.from != PST_NOMOVE ? PST_FLAG_DRAW : 0));
    pst_move_put(val + 4, &r->win);
    pst_move_put(val + 10, &r->draw);
    pst_put64(val + 16, r->effort);
    pst_put16(val + 24, r->length);
    pst_put32(val + 28, pst_checksum(key, val));
}

/* One stored move: present (flag set) with both squares on the board, or
 * absent and all zero. */
static const char *
pst_move_get(const uint8_t *b, int present, pst_move *m)
{
    if (!present) {
        for (int i = 0; i < 6; i++)
            if (b[i] != 0)
                return "an absent move with nonzero bytes";
        pst_move_clear(m);
        return NULL;
    }
    if (b[0] >= ENG_NSQUARES || b[1] >= ENG_NSQUARES)
        return "a move square off the board";
    m->from = b[0];
    m->to = b[1];
    m->captured = pst_get32(b + 2);
    return NULL;
}

/*
 * The decoder under pst_decode, pst_get and the scans; *why says what is
 * wrong for the messages. The checksum comes first: everything after it
 * checks what a writer of this file could have written, so a record that
 * passes its checksum and fails these is a writer's bug or a forgery,
 * never line noise. Every rule here is one pst_put_many enforces.
 */
static int
pst_decode_why(const uint8_t key[PST_KEY_BYTES], const uint8_t *val, size_t len, pst_record *out,
               const char **why)
{
    *why = NULL;
    if (len != PST_VAL_BYTES) {
        *why = "the value is not 32 bytes";
        return PST_ECORRUPT;
    }
    if (pst_get32(val + 28) != pst_checksum(key, val)) {
        *why = "checksum mismatch";
        return PST_ECORRUPT;
    }
    if (val[0] != PST_FORMAT) {
        *why = "unknown record format";
        return PST_ECORRUPT;
    }
    uint8_t bound = val[1], flags = val[2];
    if (bound > ENG_WW) {
        *why = "bound code not in 0..4";
        return PST_ECORRUPT;
    }
    if ((flags & ~(PST_FLAG_WIN | PST_FLAG_DRAW)) || val[3] != 0 || val[26] != 0 || val[27] != 0) {
        *why = "reserved bits set";
        return PST_ECORRUPT;
    }
    int lo = eng_bound_lo(bound);
    if (((flags & PST_FLAG_WIN) && lo != ENG_WIN) || ((flags & PST_FLAG_DRAW) && lo < ENG_DRAW)) {
        *why = "a move where the bound gives the side to move nothing to prove";
        return PST_ECORRUPT;
    }
    pst_record r;
    if ((*why = pst_move_get(val + 4, flags & PST_FLAG_WIN, &r.win)) != NULL ||
        (*why = pst_move_get(val + 10, flags & PST_FLAG_DRAW, &r.draw)) != NULL)
        return PST_ECORRUPT;
    r.bound = bound;
    r.effort = pst_get64(val + 16);
    r.length = pst_get16(val + 24);
    *out = r;
    return 0;
}

int
pst_decode(const uint8_t key[16], const uint8_t *val, size_t len, pst_record *out)
{
    const char *why;
    if (!key || (!val && len > 0) || !out)
        return PST_ECORRUPT;
    return pst_decode_why(key, val, len, out, &why);
}

/* ---- moves ------------------------------------------------------------ */

int
pst_move_find(const eng_pos *p, const pst_move *pm, eng_move *out)
{
    /* (from, to, captured) names one move of the merged list: the engine
     * merges exactly the routes that share all three (ENG_DUPS_MERGE). */
    if (!p || !pm || pm->from >= ENG_NSQUARES || pm->to >= ENG_NSQUARES)
        return PST_EINVAL;
    eng_movelist l;
    int n = eng_generate(p, &l, ENG_DUPS_MERGE);
    if (n < 0)
        return PST_EINVAL;
    for (int i = 0; i < n; i++) {
        const eng_move *m = &l.m[i];
        if (m->from == pm->from && m->to == pm->to && m->captured == pm->captured) {
            if (out)
                *out = *m;
            return 0;
        }
    }
    return PST_EINVAL;
}

pst_move
pst_move_of(const eng_move *m)
{
    pst_move pm = {m->from, m->to, m->captured};
    return pm;
}

/* ---- LMDB plumbing ---------------------------------------------------- */

/*
 * An LMDB or system error as a project code. The damage LMDB can see
 * (a page that is not where a tree says, a page of the wrong kind, a
 * header that is not LMDB's) is PST_ECORRUPT; a file from another LMDB
 * data format is PST_EVERSION; the rest is I/O.
 */
static int
pst_code_of(int rc)
{
    if (rc >= PST_EREADONLY && rc <= 0)
        return rc; /* already one of ours */
    switch (rc) {
    case MDB_CORRUPTED:
    case MDB_PAGE_NOTFOUND:
    case MDB_INVALID:
        return PST_ECORRUPT;
    case MDB_VERSION_MISMATCH:
        return PST_EVERSION;
    case ENOMEM:
        return PST_ENOMEM;
    default:
        return PST_EIO;
    }
}

/* Records the first sign of a damaged file structure (see pst_env). */
static void
pst_set_damaged(pst_env *s, const char *msg)
{
    pthread_mutex_lock(&s->pool_lock);
    if (!s->damaged) {
        s->damaged = 1;
        snprintf(s->damage, sizeof s->damage, "%s", msg);
    }
    pthread_mutex_unlock(&s->pool_lock);
}

/* Writes "PATH: what: LMDB's message" for an LMDB or errno code (not for
 * our own codes, whose message the caller has written). */
static int
pst_lmdb_fail(pst_env *s, int rc, const char *what, char *err, size_t errlen)
{
    int code = pst_code_of(rc);
    if (rc >= PST_EREADONLY && rc < 0)
        return rc;
    char msg[320];
    snprintf(msg, sizeof msg, "%s: %s: %s", s->path, what, mdb_strerror(rc));
    pst_errf(err, errlen, "%s", msg);
    if (code == PST_ECORRUPT)
        pst_set_damaged(s, msg);
    return code;
}

/* The answer of every call once the environment is broken. */
static int
pst_broken_fail(pst_env *s, char *err, size_t errlen)
{
    pst_errf(err, errlen,
             "%s: LMDB faulted twice on the damaged file in this process; the store is unusable "
             "until the process exits",
             s->path);
    return PST_ECORRUPT;
}

/* A guarded stretch that LMDB could not finish (PST_ASSERTED): the
 * message, the damaged mark, PST_ECORRUPT. */
static int
pst_damaged_fail(pst_env *s, const char *what, const char *amsg, char *err, size_t errlen)
{
    char msg[320];
    snprintf(msg, sizeof msg, "%s: damaged file (%s): %s", s->path, what, amsg);
    pst_errf(err, errlen, "%s", msg);
    pst_set_damaged(s, msg);
    return PST_ECORRUPT;
}

/*
 * The initial map size: 1 GiB, or CHECKERS_PST_MAP_BYTES. The variable is
 * read at every pst_open (not cached: no mutable globals) and a bad value
 * is refused rather than ignored, so a test that means to exercise growth
 * cannot silently run with the default.
 */
static int
pst_map_initial(size_t *out, char *err, size_t errlen)
{
    const char *v = getenv(PST_MAP_ENV);
    *out = PST_MAP_INITIAL;
    if (!v || !*v)
        return 0;
    char *end;
    errno = 0;
    unsigned long long n = strtoull(v, &end, 10);
    if (v[0] < '0' || v[0] > '9' || *end != '\0' || errno != 0 || n < PST_MAP_MIN ||
        n > PST_MAP_MAX) {
        pst_errf(err, errlen, "%s='%s': expected a byte count from %zu to %zu", PST_MAP_ENV, v,
                 PST_MAP_MIN, PST_MAP_MAX);
        return PST_EINVAL;
    }
    *out = (size_t)n;
    return 0;
}

/*
 * pst_check_header - reads LMDB's two meta pages before LMDB does.
 *
 * Why: LMDB 0.9 trusts its meta pages. A damaged page size of 0 makes
 * mdb_env_open divide by zero (SIGFPE), and a last-page number past the
 * end of the file makes it read pages that do not exist (SIGBUS). The
 * store must answer a damaged file with an error, never a crash, so the
 * fields LMDB trusts blindly are checked here first: the magic, the data
 * format, the page size, and that the tree's pages lie inside the file.
 * The layout is mdb.c's (MDB_page header then MDB_meta, data format 1,
 * native byte order, 64-bit fields); on another word size the check is
 * skipped and LMDB's own checks remain.
 *
 * A writer of another process may be rewriting a meta page while we read
 * it, and a store being created may be caught between its creation and
 * its first write; the caller retries before calling a file damaged.
 * RETURN 0 (including: no file yet, or an empty one: LMDB initialises
 * it), PST_ECORRUPT or PST_EVERSION with err, PST_EIO.
 */
static int
pst_check_header(const char *path, const char *file, char *err, size_t errlen)
{
#if SIZE_MAX == UINT64_MAX
    int fd = open(file, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        if (errno == ENOENT)
            return 0;
        pst_errf(err, errlen, "%s: cannot read %s: %s", path, file, strerror(errno));
        return PST_EIO;
    }
    uint8_t m[2][LMDB_META_END];
    uint32_t psize = 0;
    int rc = 0;
    for (int i = 0; i < 2 && rc == 0; i++) {
        off_t off = (off_t)i * psize;
        ssize_t got = pread(fd, m[i], LMDB_META_END, off);
        if (got == 0 && i == 0)
            goto done; /* empty: LMDB writes the meta pages */
        if (got != LMDB_META_END) {
            pst_errf(err, errlen, "%s: %s is too short for LMDB's meta page %d", path, file, i);
            rc = got < 0 ? PST_EIO : PST_ECORRUPT;
            break;
        }
        uint16_t flags;
        uint32_t magic, version, ps;
        memcpy(&flags, m[i] + 10, sizeof flags);
        memcpy(&magic, m[i] + 16, sizeof magic);
        memcpy(&version, m[i] + 20, sizeof version);
        memcpy(&ps, m[i] + 40, sizeof ps);
        if (!(flags & LMDB_P_META) || magic != LMDB_MAGIC) {
            pst_errf(err, errlen, "%s: %s is not an LMDB file (meta page %d has no LMDB magic)",
                     path, file, i);
            rc = PST_ECORRUPT;
        } else if (version != LMDB_DATA_VERSION) {
            pst_errf(err, errlen,
                     "%s: %s has LMDB data format %" PRIu32 " (meta page %d); this build reads "
                     "format %u",
                     path, file, version, i, LMDB_DATA_VERSION);
            rc = PST_EVERSION;
        } else if (ps < 512 || ps > 65536 || (ps & (ps - 1)) != 0 || (i == 1 && ps != psize)) {
            pst_errf(err, errlen, "%s: %s: meta page %d gives a page size of %" PRIu32, path, file,
                     i, ps);
            rc = PST_ECORRUPT;
        }
        psize = ps;
    }
    if (rc == 0) {
        /* LMDB uses the meta page with the larger transaction id. */
        uint64_t t0, t1, last, root[2];
        memcpy(&t0, m[0] + 144, sizeof t0);
        memcpy(&t1, m[1] + 144, sizeof t1);
        const uint8_t *cur = t1 > t0 ? m[1] : m[0];
        memcpy(&last, cur + 136, sizeof last);
        memcpy(&root[0], cur + 80, sizeof root[0]);
        memcpy(&root[1], cur + 128, sizeof root[1]);
        struct stat st;
        if (fstat(fd, &st) != 0) {
            pst_errf(err, errlen, "%s: cannot stat %s: %s", path, file, strerror(errno));
            rc = PST_EIO;
        } else if (last < 1 || last >= (uint64_t)st.st_size / psize) {
            pst_errf(err, errlen,
                     "%s: %s: the meta page says the tree uses %" PRIu64 " pages of %" PRIu32
                     " bytes but the file holds %" PRIu64 " bytes",
                     path, file, last + 1, psize, (uint64_t)st.st_size);
            rc = PST_ECORRUPT;
        } else {
            for (int d = 0; d < 2; d++)
                if (root[d] != LMDB_P_INVALID && (root[d] < 2 || root[d] > last)) {
                    pst_errf(err, errlen,
                             "%s: %s: the meta page puts a tree root at page %" PRIu64
                             ", outside pages 2..%" PRIu64,
                             path, file, root[d], last);
                    rc = PST_ECORRUPT;
                }
        }
    }
done:
    close(fd);
    return rc;
#else
    (void)path;
    (void)file;
    (void)err;
    (void)errlen;
    return 0;
#endif
}

/*
 * Damage that LMDB does not survive. LMDB 0.9 trusts its pages: it has
 * no page checksums, and a damaged branch or leaf page makes it
 *   - fail one of its assertions, which calls abort() (a leaf where a
 *     branch should be, a node count that does not fit);
 *   - follow a node offset (16 bits, so up to 64 KiB past the page) past
 *     the end of the file, which the map covers: SIGBUS;
 *   - treat a plain node as a duplicate set and write through a NULL
 *     sub-cursor: SIGSEGV.
 * Without a remedy, one damaged page would kill every solver and every
 * `proof check` that reads it. The remedy: every stretch of LMDB calls is
 * run through pst_guarded, which records a jump target for the thread.
 * LMDB's assertion callback (mdb_env_set_assert, called before abort) and
 * a SIGSEGV/SIGBUS handler jump back there, and the stretch returns
 * PST_ASSERTED, which its caller reports as PST_ECORRUPT after aborting
 * the transaction.
 *
 * Why this is sound: the interrupted LMDB code held no lock but the
 * writers' mutex of a write transaction, and that transaction is aborted
 * right after the jump (which frees the mutex and discards its dirty
 * pages), so nothing of it reaches the file. A read transaction is
 * aborted rather than pooled. What it cannot do: a damaged page that
 * LMDB copies and then writes into (a write transaction) may overrun the
 * copy on the heap before anything faults; a damaged store should be
 * read (pst_stats_get, `checkers store stats`) before anything writes to
 * it again.
 *
 * The handler is installed by pst_open, unless it is in place already,
 * with the actions it found saved: a fault outside a guarded stretch
 * goes to the previous handler, or, if there was none, ends the process
 * exactly as it would have ended. (Checking at every open puts it back
 * when a program, or a test harness, installed its own since.) A fault inside a guarded
 * stretch is taken for damage: those stretches run LMDB's code over the
 * map and our copies out of it, nothing else.
 */
static void
pst_on_assert(MDB_env *env, const char *msg)
{
    (void)env;
    pst_guard *g = pst_guard_cur;
    if (!g)
        return; /* LMDB aborts, as it means to */
    if (g->msg && g->msglen)
        snprintf(g->msg, g->msglen, "%s", msg);
    siglongjmp(g->jb, PST_JUMP_ASSERT);
}

static void
pst_on_fault(int sig, siginfo_t *si, void *ctx)
{
    pst_guard *g = pst_guard_cur;
    if (g)
        siglongjmp(g->jb, sig);
    const struct sigaction *old = sig == SIGBUS ? &pst_old_bus : &pst_old_segv;
    if (old->sa_flags & SA_SIGINFO) {
        old->sa_sigaction(sig, si, ctx);
        return;
    }
    if (old->sa_handler != SIG_DFL && old->sa_handler != SIG_IGN) {
        old->sa_handler(sig);
        return;
    }
    /* The default action: put it back and return; the faulting
     * instruction runs again and the process ends with its own signal. */
    struct sigaction dfl;
    memset(&dfl, 0, sizeof dfl);
    dfl.sa_handler = SIG_DFL;
    sigemptyset(&dfl.sa_mask);
    sigaction(sig, &dfl, NULL);
}

static void
pst_fault_install(void)
{
    pthread_mutex_lock(&pst_fault_lock);
    int sigs[2] = {SIGSEGV, SIGBUS};
    struct sigaction *old[2] = {&pst_old_segv, &pst_old_bus};
    for (int i = 0; i < 2; i++) {
        struct sigaction cur;
        if (sigaction(sigs[i], NULL, &cur) != 0 ||
            ((cur.sa_flags & SA_SIGINFO) && cur.sa_sigaction == pst_on_fault))
            continue;
        /* SA_NODEFER: the jump leaves the handler without returning, so
         * the signal must not stay blocked for the thread afterwards. */
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_sigaction = pst_on_fault;
        sa.sa_flags = SA_SIGINFO | SA_NODEFER;
        sigemptyset(&sa.sa_mask);
        *old[i] = cur;
        sigaction(sigs[i], &sa, NULL);
    }
    pthread_mutex_unlock(&pst_fault_lock);
}

/*
 * pst_guarded - runs fn(arg), returning its value, or PST_ASSERTED with
 * what happened in msg when LMDB failed an assertion or faulted inside
 * it. fn must keep whatever the caller needs for cleanup (transaction,
 * cursor) in arg's memory, not in its own locals: after the jump only arg
 * is known.
 */
static int
pst_guarded(int (*fn)(void *arg), void *arg, char *msg, size_t msglen)
{
    pst_guard g;
    g.prev = pst_guard_cur;
    g.msg = msg;
    g.msglen = msglen;
    pst_guard_cur = &g;
    int jumped = sigsetjmp(g.jb, 0);
    if (jumped != 0) {
        /* Nothing of g changed after sigsetjmp: reading it is defined. */
        pst_guard_cur = g.prev;
        if (jumped != PST_JUMP_ASSERT && msg && msglen)
            snprintf(msg, msglen, "LMDB %s (%s)",
                     jumped == SIGBUS ? "read past the end of the file"
                                      : "followed a damaged pointer",
                     jumped == SIGBUS ? "SIGBUS" : "SIGSEGV");
        return PST_ASSERTED;
    }
    int rc = fn(arg);
    pst_guard_cur = g.prev;
    return rc;
}

/* Sleeps ms milliseconds (the header check's retries). */
static void
pst_nap(long ms)
{
    struct timespec t = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&t, NULL);
}

/*
 * The map after MDB_MAP_FULL (grow: double) or MDB_MAP_RESIZED (adopt
 * the size another process committed). Called without map_lock held; it
 * takes it exclusively, so no transaction of this process is active, as
 * mdb_env_set_mapsize requires. failed_size is the map size the failing
 * transaction ran with: when another thread has grown the map since, the
 * caller simply retries.
 */
static int
pst_map_adjust(pst_env *s, int rc, size_t failed_size, char *err, size_t errlen)
{
    int ret = 0;
    pthread_rwlock_wrlock(&s->map_lock);
    MDB_envinfo info;
    mdb_env_info(s->env, &info);
    if (rc == MDB_MAP_RESIZED) {
        /* Size 0: LMDB takes the size from the newest meta page. */
        int r = mdb_env_set_mapsize(s->env, 0);
        if (r != 0)
            ret = pst_lmdb_fail(s, r, "adopting the map size of another process", err, errlen);
    } else if (info.me_mapsize == failed_size) {
        if (failed_size >= PST_MAP_MAX) {
            pst_errf(err, errlen, "%s: the map is full at %zu bytes, the most this store grows to",
                     s->path, failed_size);
            ret = PST_EIO;
        } else {
            int r = mdb_env_set_mapsize(s->env, failed_size * 2);
            if (r != 0)
                ret = pst_lmdb_fail(s, r, "growing the map", err, errlen);
        }
    }
    pthread_rwlock_unlock(&s->map_lock);
    return ret;
}

static size_t
pst_map_size(pst_env *s)
{
    MDB_envinfo info;
    mdb_env_info(s->env, &info);
    return info.me_mapsize;
}

/*
 * pst_write - runs fn in a write transaction and commits it, retrying the
 * whole transaction after the map grew. fn must therefore be repeatable:
 * it reads everything it merges inside the transaction, so a retry sees
 * whatever other writers committed in between.
 *
 * Write transactions stay short because pst_put_many validates every
 * record (move generation included) before this starts: LMDB serialises
 * writers of all processes, and a long writer stalls every solver.
 */
static int
pst_write_once(void *arg)
{
    pst_write_op *op = arg;
    op->what = "writing";
    int rc = op->fn(op->s, op->txn, op->arg, op->err, op->errlen);
    if (rc != 0)
        return rc;
    op->what = "committing";
    rc = mdb_txn_commit(op->txn);
    op->txn = NULL;
    return rc;
}

static int
pst_abort_run(void *arg)
{
    pst_write_op *op = arg;
    MDB_txn *txn = op->txn;
    op->txn = NULL; /* not again, whatever happens */
    mdb_txn_abort(txn);
    return 0;
}

static int
pst_write(pst_env *s, pst_txn_fn fn, void *arg, char *err, size_t errlen)
{
    for (int tries = 0;; tries++) {
        pthread_rwlock_rdlock(&s->map_lock);
        size_t size = pst_map_size(s);
        char amsg[256] = "";
        pst_write_op op = {s, NULL, fn, arg, err, errlen, "beginning a write transaction"};
        int rc = mdb_txn_begin(s->env, NULL, 0, &op.txn);
        if (rc == 0)
            rc = pst_guarded(pst_write_once, &op, amsg, sizeof amsg);
        else
            op.txn = NULL;
        if (op.txn && rc == PST_ASSERTED) {
            /* The transaction LMDB was inside when it faulted may itself
             * be damaged; if aborting it faults too, the environment is
             * given up (see pst_env: broken). */
            char amsg2[256];
            if (pst_guarded(pst_abort_run, &op, amsg2, sizeof amsg2) == PST_ASSERTED)
                atomic_store(&s->broken, 1);
        } else if (op.txn) {
            mdb_txn_abort(op.txn); /* fn failed */
        }
        pthread_rwlock_unlock(&s->map_lock);
        if (rc == PST_ASSERTED)
            return pst_damaged_fail(s, op.what, amsg, err, errlen);
        if ((rc == MDB_MAP_FULL || rc == MDB_MAP_RESIZED) && tries < PST_RESIZED_TRIES) {
            int r = pst_map_adjust(s, rc, size, err, errlen);
            if (r != 0)
                return r;
            continue;
        }
        if (rc == 0)
            return 0;
        return pst_lmdb_fail(s, rc, op.what, err, errlen);
    }
}

/*
 * Read transactions. pst_read_begin returns with map_lock held shared and
 * a live read transaction (renewed from the pool when one is there);
 * pst_read_end resets it, returns it to the pool and releases the lock.
 */
static int
pst_read_begin(pst_env *s, MDB_txn **out)
{
    for (int tries = 0;; tries++) {
        pthread_rwlock_rdlock(&s->map_lock);
        size_t size = pst_map_size(s);
        MDB_txn *txn = NULL;
        pthread_mutex_lock(&s->pool_lock);
        if (s->npool > 0)
            txn = s->pool[--s->npool];
        pthread_mutex_unlock(&s->pool_lock);
        int rc;
        if (txn) {
            rc = mdb_txn_renew(txn);
            if (rc != 0)
                mdb_txn_abort(txn);
        } else {
            rc = mdb_txn_begin(s->env, NULL, MDB_RDONLY, &txn);
        }
        if (rc == 0) {
            *out = txn;
            return 0;
        }
        pthread_rwlock_unlock(&s->map_lock);
        if (rc == MDB_MAP_RESIZED && tries < PST_RESIZED_TRIES) {
            int r = pst_map_adjust(s, rc, size, NULL, 0);
            if (r != 0)
                return r;
            continue;
        }
        return rc;
    }
}

/* The end of a read transaction that failed inside LMDB: it is not
 * pooled, since its state after an assertion is not LMDB's to vouch for. */
static void
pst_read_fail(pst_env *s, MDB_txn *txn)
{
    mdb_txn_abort(txn);
    pthread_rwlock_unlock(&s->map_lock);
}

static void
pst_read_end(pst_env *s, MDB_txn *txn)
{
    mdb_txn_reset(txn);
    pthread_mutex_lock(&s->pool_lock);
    if (s->npool < PST_POOL) {
        s->pool[s->npool++] = txn;
        txn = NULL;
    }
    pthread_mutex_unlock(&s->pool_lock);
    if (txn)
        mdb_txn_abort(txn);
    pthread_rwlock_unlock(&s->map_lock);
}

/* ---- opening: the schema check ---------------------------------------- */

/* Printable copy of a stored schema text for a message. */
static void
pst_printable(const MDB_val *v, char *buf, size_t len)
{
    size_t n = 0;
    const unsigned char *b = v->mv_data;
    for (size_t i = 0; i < v->mv_size && n + 5 < len && i < 60; i++) {
        if (b[i] >= 0x20 && b[i] < 0x7F)
            buf[n++] = (char)b[i];
        else
            n += (size_t)snprintf(buf + n, len - n, "\\x%02x", b[i]);
    }
    buf[n] = '\0';
}

/*
 * pst_schema - what txn sees of the schema: PST_SCHEMA_OK (this schema;
 * the "meta" and "nodes" handles opened), PST_SCHEMA_EMPTY (an LMDB
 * environment with nothing in it: a store a process began to create and
 * did not finish, or one being created now), or an error: PST_EVERSION
 * for a store of another schema or something that is not a store at all.
 * Only reads; the same check runs in the read transaction of pst_open
 * and again in the write transaction that creates a store, because
 * another process may have created it in between.
 */
static int
pst_schema(pst_env *s, MDB_txn *txn, char *err, size_t errlen)
{
    MDB_dbi main_dbi, meta, nodes;
    int rc = mdb_dbi_open(txn, "meta", 0, &meta);
    if (rc == MDB_NOTFOUND) {
        MDB_stat st;
        if ((rc = mdb_dbi_open(txn, NULL, 0, &main_dbi)) != 0 ||
            (rc = mdb_stat(txn, main_dbi, &st)) != 0)
            return pst_lmdb_fail(s, rc, "reading the main database", err, errlen);
        if (st.ms_entries == 0)
            return PST_SCHEMA_EMPTY;
        pst_errf(err, errlen,
                 "%s: not a proof store (or a damaged one): the LMDB environment has %zu entries "
                 "but no 'meta' database (expected schema \"%s\"); it is left as it is",
                 s->path, st.ms_entries, PST_SCHEMA);
        return PST_EVERSION;
    }
    if (rc == MDB_INCOMPATIBLE) {
        pst_errf(err, errlen,
                 "%s: not a proof store: 'meta' is not a plain database (expected schema \"%s\")",
                 s->path, PST_SCHEMA);
        return PST_EVERSION;
    }
    if (rc != 0)
        return pst_lmdb_fail(s, rc, "opening the meta database", err, errlen);
    MDB_val k = {6, (void *)"schema"}, v;
    rc = mdb_get(txn, meta, &k, &v);
    if (rc == MDB_NOTFOUND) {
        pst_errf(err, errlen, "%s: not a proof store: no schema record (expected \"%s\")", s->path,
                 PST_SCHEMA);
        return PST_EVERSION;
    }
    if (rc != 0)
        return pst_lmdb_fail(s, rc, "reading the schema record", err, errlen);
    if (v.mv_size != strlen(PST_SCHEMA) || memcmp(v.mv_data, PST_SCHEMA, v.mv_size) != 0) {
        char text[256];
        pst_printable(&v, text, sizeof text);
        pst_errf(err, errlen,
                 "%s: schema \"%s\", this program reads \"%s\"; the store is left as it is",
                 s->path, text, PST_SCHEMA);
        return PST_EVERSION;
    }
    rc = mdb_dbi_open(txn, "nodes", 0, &nodes);
    if (rc == MDB_NOTFOUND || rc == MDB_INCOMPATIBLE) {
        /* The store is created in one transaction with both databases:
         * a schema without its nodes is damage, not another version. */
        pst_errf(err, errlen, "%s: damaged store: schema \"%s\" but no 'nodes' database", s->path,
                 PST_SCHEMA);
        return PST_ECORRUPT;
    }
    if (rc != 0)
        return pst_lmdb_fail(s, rc, "opening the nodes database", err, errlen);
    s->meta = meta;
    s->nodes = nodes;
    return PST_SCHEMA_OK;
}

static int
pst_schema_run(void *arg)
{
    pst_schema_op *op = arg;
    return pst_schema(op->s, op->txn, op->err, op->errlen);
}

/* The write transaction that makes an empty environment a store. */
static int
pst_create_txn(pst_env *s, MDB_txn *txn, void *arg, char *err, size_t errlen)
{
    (void)arg;
    int rc = pst_schema(s, txn, err, errlen);
    if (rc != PST_SCHEMA_EMPTY)
        return rc; /* created meanwhile by another process, or refused */
    MDB_dbi meta, nodes;
    MDB_val k = {6, (void *)"schema"}, v = {strlen(PST_SCHEMA), (void *)PST_SCHEMA};
    if ((rc = mdb_dbi_open(txn, "meta", MDB_CREATE, &meta)) != 0 ||
        (rc = mdb_put(txn, meta, &k, &v, 0)) != 0 ||
        (rc = mdb_dbi_open(txn, "nodes", MDB_CREATE, &nodes)) != 0)
        return rc;
    s->meta = meta;
    s->nodes = nodes;
    return 0;
}

int
pst_open(const char *path, int flags, pst_env **out, char *err, size_t errlen)
{
    if (!path || !out) {
        pst_errf(err, errlen, "pst_open: no path or no result pointer");
        return PST_EINVAL;
    }
    *out = NULL;
    size_t map;
    int rc = pst_map_initial(&map, err, errlen);
    if (rc != 0)
        return rc;
    int rdonly = (flags & PST_RDONLY) != 0;

    pst_env *s = calloc(1, sizeof *s);
    size_t plen = strlen(path);
    char *file = malloc(plen + sizeof "/data.mdb");
    if (s)
        s->path = strdup(path);
    if (!s || !file || !s->path) {
        if (s)
            free(s->path);
        free(s);
        free(file);
        pst_errf(err, errlen, "%s: out of memory", path);
        return PST_ENOMEM;
    }
    memcpy(file, path, plen);
    memcpy(file + plen, "/data.mdb", sizeof "/data.mdb");
    s->rdonly = rdonly;
    pthread_rwlockattr_t attr;
    pthread_rwlockattr_init(&attr);
    pthread_rwlockattr_setkind_np(&attr, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
    pthread_rwlock_init(&s->map_lock, &attr);
    pthread_rwlockattr_destroy(&attr);
    pthread_mutex_init(&s->pool_lock, NULL);

    /* Read-only: the store must exist, and nothing is created (LMDB would
     * otherwise leave a lock.mdb in a directory that holds no store). */
    struct stat st;
    if (rdonly && stat(file, &st) != 0) {
        pst_errf(err, errlen, "%s: no proof store here (%s: %s)", path, file, strerror(errno));
        rc = PST_EIO;
        goto fail;
    }
    if (!rdonly && mkdir(path, 0775) != 0 && errno != EEXIST) {
        pst_errf(err, errlen, "%s: cannot create the store directory: %s", path, strerror(errno));
        rc = PST_EIO;
        goto fail;
    }
    /* The header check, retried: a failure that persists over a few
     * reads 20 ms apart is the file, not a concurrent writer. */
    for (int tries = 0; (rc = pst_check_header(path, file, err, errlen)) != 0 && tries < 3; tries++)
        pst_nap(20);
    if (rc != 0)
        goto fail;

    pst_fault_install();

    /*
     * MDB_NOTLS: transactions are not tied to threads, so one pst_env
     * serves every thread and read transactions can be pooled. The
     * explicit map size also bounds what a read-only process maps,
     * whatever a (possibly damaged) meta page claims.
     */
    if ((rc = mdb_env_create(&s->env)) != 0 ||
        (rc = mdb_env_set_assert(s->env, pst_on_assert)) != 0 ||
        (rc = mdb_env_set_maxdbs(s->env, 4)) != 0 ||
        (rc = mdb_env_set_maxreaders(s->env, PST_MAX_READERS)) != 0 ||
        (rc = mdb_env_set_mapsize(s->env, map)) != 0) {
        rc = pst_lmdb_fail(s, rc, "creating the LMDB environment", err, errlen);
        goto fail;
    }
    rc = mdb_env_open(s->env, path, MDB_NOTLS | (rdonly ? MDB_RDONLY : 0), 0664);
    if (rc != 0) {
        rc = pst_lmdb_fail(s, rc, "opening the LMDB environment", err, errlen);
        goto fail;
    }
    /* Free the reader slots of processes that died holding one (a solver
     * killed mid-read): a stale slot pins old pages and the file grows. */
    int dead;
    mdb_reader_check(s->env, &dead);

    /*
     * The schema check reads only. Nothing is written to a store until it
     * has passed, so a foreign or other-version store is left exactly as
     * it was (LMDB itself writes data.mdb only when it is empty, and
     * lock.mdb is not part of the store).
     */
    pst_schema_op op = {s, NULL, err, errlen};
    if ((rc = pst_read_begin(s, &op.txn)) != 0) {
        rc = pst_lmdb_fail(s, rc, "beginning a read transaction", err, errlen);
        goto fail;
    }
    char amsg[256] = "";
    int schema = pst_guarded(pst_schema_run, &op, amsg, sizeof amsg);
    /* Committing a read transaction keeps the database handles it opened
     * for the environment's later transactions. */
    rc = schema == PST_SCHEMA_OK ? mdb_txn_commit(op.txn) : (mdb_txn_abort(op.txn), 0);
    pthread_rwlock_unlock(&s->map_lock);
    if (schema == PST_ASSERTED) {
        rc = pst_damaged_fail(s, "reading the schema", amsg, err, errlen);
        goto fail;
    }
    if (rc != 0) {
        rc = pst_lmdb_fail(s, rc, "reading the schema", err, errlen);
        goto fail;
    }
    if (schema == PST_SCHEMA_EMPTY) {
        if (rdonly) {
            pst_errf(err, errlen,
                     "%s: not a proof store yet: an empty LMDB environment (its creation did not "
                     "finish; opening it for writing completes it)",
                     path);
            rc = PST_EVERSION;
            goto fail;
        }
        if ((rc = pst_write(s, pst_create_txn, NULL, err, errlen)) != 0)
            goto fail;
    } else if (schema != PST_SCHEMA_OK) {
        rc = schema;
        goto fail;
    }
    free(file);
    *out = s;
    return 0;

fail:
    free(file);
    pst_close(s);
    return rc;
}

void
pst_close(pst_env *s)
{
    if (!s)
        return;
    if (atomic_load(&s->broken)) {
        /* LMDB's state may be damaged: touching it again could crash.
         * The environment is leaked; the process is expected to exit. */
        free(s->path);
        free(s);
        return;
    }
    for (int i = 0; i < s->npool; i++)
        mdb_txn_abort(s->pool[i]);
    if (s->env)
        mdb_env_close(s->env);
    pthread_rwlock_destroy(&s->map_lock);
    pthread_mutex_destroy(&s->pool_lock);
    free(s->path);
    free(s);
}

/* ---- writing ---------------------------------------------------------- */

/*
 * Checks one record as its writer gave it, in the writer's orientation.
 * The rules are store.h's: a bound that says something (never LW), no
 * move where the side to move is the defender (win needs lo == WIN, draw
 * lo >= DRAW), and every stored move legal in the position. Legality is
 * checked here, once, rather than by every reader, because a proof
 * through an illegal move is no proof and the checker must not have to
 * distrust the store's moves for being malformed.
 */
static int
pst_validate_item(const pst_item *it, size_t i, pst_norm *out, char *err, size_t errlen)
{
    char why[160], fen[ENG_FEN_MAX];
    if (eng_validate(&it->pos, why, sizeof why) != 0) {
        pst_errf(err, errlen, "item %zu: not a valid position: %s", i, why);
        return PST_EINVAL;
    }
    pst_fen(&it->pos, fen, sizeof fen);
    const pst_record *r = &it->rec;
    if (!eng_bound_valid(r->bound) || r->bound == ENG_LW) {
        pst_errf(err, errlen, "item %zu (%s): bound %s (%d) is not stored: only LL LD DD DW WW", i,
                 fen, eng_bound_name(r->bound), r->bound);
        return PST_EINVAL;
    }
    int lo = eng_bound_lo(r->bound);
    const pst_move *mv[2] = {&r->win, &r->draw};
    static const char *const name[2] = {"win", "draw"};
    for (int k = 0; k < 2; k++) {
        if (mv[k]->from == PST_NOMOVE)
            continue;
        char mt[64];
        pst_move_text(mv[k], mt, sizeof mt);
        if ((k == 0 && lo != ENG_WIN) || (k == 1 && lo < ENG_DRAW)) {
            pst_errf(err, errlen,
                     "item %zu (%s): a %s move (%s) with bound %s: the side to move has no %s to "
                     "prove",
                     i, fen, name[k], mt, eng_bound_name(r->bound), k == 0 ? "win" : "draw");
            return PST_EINVAL;
        }
        if (pst_move_find(&it->pos, mv[k], NULL) != 0) {
            pst_errf(err, errlen, "item %zu (%s): the %s move (%s) is not a legal move here", i,
                     fen, name[k], mt);
            return PST_EINVAL;
        }
    }
    /* The canonical orientation: the twin with Black to move; the bound
     * is for the side to move and stays, the moves turn with the board. */
    eng_pos c = eng_canonical(&it->pos);
    pst_key_of(&c, out->key);
    out->rec = *r;
    if (it->pos.stm == ENG_WHITE) {
        out->rec.win = pst_move_flip(r->win);
        out->rec.draw = pst_move_flip(r->draw);
    }
    if (out->rec.win.from == PST_NOMOVE)
        pst_move_clear(&out->rec.win);
    if (out->rec.draw.from == PST_NOMOVE)
        pst_move_clear(&out->rec.draw);
    return 0;
}

/*
 * pst_merge - store.h's MERGING rule, plus the one it leaves to us:
 *   bounds      intersected; empty -> PST_ECONTRADICT.
 *   moves       the stored one stays; a new one fills an absent slot. The
 *               input check guarantees a new move suits the new bound,
 *               and the merged lo is at least the new lo, so it suits the
 *               merged bound too.
 *   effort      the larger.
 *   length      goes with the win proof it measures. If the stored record
 *               already proved a win or a loss, its proof is the one kept
 *               (its move is never replaced) and so is its length; if the
 *               win or loss comes with the new record, so does the
 *               length. Otherwise (no win or loss proven) the first
 *               nonzero length is kept, like a move.
 */
static int
pst_merge(const pst_record *old, const pst_record *new, pst_record *out)
{
    int lo = eng_bound_lo(old->bound) > eng_bound_lo(new->bound) ? eng_bound_lo(old->bound)
                                                                 : eng_bound_lo(new->bound);
    int hi = eng_bound_hi(old->bound) < eng_bound_hi(new->bound) ? eng_bound_hi(old->bound)
                                                                 : eng_bound_hi(new->bound);
    if (lo > hi)
        return PST_ECONTRADICT;
    pst_record m;
    m.bound = eng_bound_make(lo, hi);
    m.win = old->win.from != PST_NOMOVE ? old->win : new->win;
    m.draw = old->draw.from != PST_NOMOVE ? old->draw : new->draw;
    m.effort = old->effort > new->effort ? old->effort : new->effort;
    int old_decided = old->bound == ENG_WW || old->bound == ENG_LL;
    int now_decided = m.bound == ENG_WW || m.bound == ENG_LL;
    if (old_decided)
        m.length = old->length;
    else if (now_decided)
        m.length = new->length;
    else
        m.length = old->length != 0 ? old->length : new->length;
    *out = m;
    return 0;
}

/*
 * pst_merge_batch - merges every record of the batch with what txn sees.
 * Records are merged in the order given, so a position that comes twice
 * in one batch is merged twice (and contradicts itself if its two records
 * do). With write set, a changed value is put (an unchanged one is not
 * rewritten: that would copy its page for nothing); without, the changes
 * are only counted.
 */
static int
pst_merge_batch(pst_env *s, MDB_txn *txn, pst_batch *b, int write, char *err, size_t errlen)
{
    b->changed = 0;
    for (size_t i = 0; i < b->n; i++) {
        const pst_norm *nr = &b->norm[i];
        MDB_val k = {PST_KEY_BYTES, (void *)nr->key}, v;
        uint8_t val[PST_VAL_BYTES];
        pst_record merged = nr->rec;
        int rc = mdb_get(txn, s->nodes, &k, &v);
        if (rc == 0) {
            pst_record old;
            const char *why;
            char fen[ENG_FEN_MAX];
            if (pst_decode_why(nr->key, v.mv_data, v.mv_size, &old, &why) != 0) {
                /* Never merge into a damaged record: the new record would
                 * bury the evidence under a fresh checksum. */
                eng_pos c = pst_pos_of_key(nr->key);
                char msg[320];
                pst_fen(&c, fen, sizeof fen);
                snprintf(msg, sizeof msg, "%s: the stored record of %s is damaged (%s)", s->path,
                         fen, why);
                pst_errf(err, errlen, "%s", msg);
                pst_set_damaged(s, msg);
                return PST_ECORRUPT;
            }
            if (pst_merge(&old, &nr->rec, &merged) != 0) {
                pst_fen(&b->items[i].pos, fen, sizeof fen);
                pst_errf(err, errlen,
                         "item %zu (%s): bound %s contradicts the stored %s (bounds for the side "
                         "to move); nothing of the batch was written",
                         i, fen, eng_bound_name(nr->rec.bound), eng_bound_name(old.bound));
                return PST_ECONTRADICT;
            }
            pst_encode(nr->key, &merged, val);
            if (memcmp(v.mv_data, val, PST_VAL_BYTES) == 0)
                continue;
        } else if (rc == MDB_NOTFOUND) {
            pst_encode(nr->key, &merged, val);
        } else {
            return rc;
        }
        b->changed++;
        if (!write)
            continue;
        v.mv_size = PST_VAL_BYTES;
        v.mv_data = val;
        if ((rc = mdb_put(txn, s->nodes, &k, &v, 0)) != 0)
            return rc;
    }
    return 0;
}

static int
pst_put_txn(pst_env *s, MDB_txn *txn, void *arg, char *err, size_t errlen)
{
    return pst_merge_batch(s, txn, arg, 1, err, errlen);
}

static int
pst_precheck_run(void *arg)
{
    pst_precheck_op *op = arg;
    return pst_merge_batch(op->s, op->txn, op->b, 0, op->err, op->errlen);
}

/*
 * pst_precheck - the batch merged in a read transaction first, without
 * writing. Why:
 *   - a batch that changes nothing (a solver writing again a proof that
 *     is already stored, which is common) costs no write transaction: no
 *     writers' lock, no disk sync;
 *   - a contradicting batch is refused without taking the writers' lock;
 *   - the pages the write will copy and change are first walked by a
 *     guarded read, so a damaged page on the way is reported before LMDB
 *     writes into a copy of it (see the notes on damage above).
 * The write transaction merges again: other writers may commit between
 * the two.
 */
static int
pst_precheck(pst_env *s, pst_batch *b, char *err, size_t errlen)
{
    pst_precheck_op op = {s, NULL, b, err, errlen};
    int rc = pst_read_begin(s, &op.txn);
    if (rc != 0)
        return pst_lmdb_fail(s, rc, "beginning a read transaction", err, errlen);
    char amsg[256] = "";
    rc = pst_guarded(pst_precheck_run, &op, amsg, sizeof amsg);
    if (rc == PST_ASSERTED) {
        pst_read_fail(s, op.txn);
        return pst_damaged_fail(s, "reading the stored records", amsg, err, errlen);
    }
    pst_read_end(s, op.txn);
    return rc == 0 ? 0 : pst_lmdb_fail(s, rc, "reading the stored records", err, errlen);
}

int
pst_put_many(pst_env *s, const pst_item *items, size_t n, char *err, size_t errlen)
{
    if (!s || (!items && n > 0)) {
        pst_errf(err, errlen, "pst_put_many: no store or no items");
        return PST_EINVAL;
    }
    if (s->rdonly) {
        pst_errf(err, errlen, "%s: opened read-only; nothing written", s->path);
        return PST_EREADONLY;
    }
    if (n == 0)
        return 0;
    if (atomic_load_explicit(&s->broken, memory_order_relaxed))
        return pst_broken_fail(s, err, errlen);
    pthread_mutex_lock(&s->pool_lock);
    int damaged = s->damaged;
    if (damaged)
        pst_errf(err, errlen, "writing refused: this process found the store damaged: %s",
                 s->damage);
    pthread_mutex_unlock(&s->pool_lock);
    if (damaged)
        return PST_ECORRUPT;
    pst_norm *norm = malloc(n * sizeof *norm);
    if (!norm) {
        pst_errf(err, errlen, "%s: out of memory for a batch of %zu records", s->path, n);
        return PST_ENOMEM;
    }
    /* Every record is checked before the transaction begins: an invalid
     * one refuses the batch without taking the writers' lock. */
    int rc = 0;
    for (size_t i = 0; i < n && rc == 0; i++)
        rc = pst_validate_item(&items[i], i, &norm[i], err, errlen);
    pst_batch b = {items, norm, n, 0};
    if (rc == 0)
        rc = pst_precheck(s, &b, err, errlen);
    if (rc == 0 && b.changed > 0)
        rc = pst_write(s, pst_put_txn, &b, err, errlen);
    free(norm);
    return rc;
}

/* ---- reading ---------------------------------------------------------- */

static int
pst_get_run(void *arg)
{
    pst_get_op *op = arg;
    MDB_val k = {PST_KEY_BYTES, (void *)op->key}, v;
    int rc = mdb_get(op->txn, op->dbi, &k, &v);
    if (rc == 0) {
        /* Copied out before the transaction ends: the map may move. Only
         * 32 bytes are read, whatever size a damaged node claims. */
        op->len = v.mv_size;
        memcpy(op->val, v.mv_data, v.mv_size < PST_VAL_BYTES ? v.mv_size : PST_VAL_BYTES);
    }
    return rc;
}

int
pst_get(pst_env *s, const eng_pos *p, pst_record *out)
{
    if (!s || !p || !out || eng_validate(p, NULL, 0) != 0)
        return PST_EINVAL;
    if (atomic_load_explicit(&s->broken, memory_order_relaxed))
        return PST_ECORRUPT;
    eng_pos c = eng_canonical(p);
    uint8_t key[PST_KEY_BYTES];
    pst_key_of(&c, key);
    pst_get_op op;
    op.dbi = s->nodes;
    op.key = key;
    op.len = 0;
    int rc = pst_read_begin(s, &op.txn);
    if (rc != 0)
        return pst_lmdb_fail(s, rc, "beginning a read transaction", NULL, 0);
    char amsg[256];
    rc = pst_guarded(pst_get_run, &op, amsg, sizeof amsg);
    if (rc == PST_ASSERTED) {
        pst_read_fail(s, op.txn);
        return pst_damaged_fail(s, "looking up a record", amsg, NULL, 0);
    }
    pst_read_end(s, op.txn);
    if (rc == MDB_NOTFOUND)
        return PST_ENOTFOUND;
    if (rc != 0)
        return pst_lmdb_fail(s, rc, "looking up a record", NULL, 0);
    pst_record r;
    const char *why;
    if (pst_decode_why(key, op.val, op.len, &r, &why) != 0) {
        char msg[320], fen[ENG_FEN_MAX];
        pst_fen(&c, fen, sizeof fen);
        snprintf(msg, sizeof msg, "%s: damaged record %s: %s", s->path, fen, why);
        pst_set_damaged(s, msg);
        return PST_ECORRUPT;
    }
    if (p->stm == ENG_WHITE) {
        r.win = pst_move_flip(r.win);
        r.draw = pst_move_flip(r.draw);
    }
    *out = r;
    return 0;
}

/*
 * Names a damaged record for a message: its FEN when the key is a
 * position, its bytes otherwise.
 */
static void
pst_name_key(const uint8_t *key, size_t klen, char *buf, size_t len)
{
    char hex[2 * PST_KEY_BYTES + 1] = "";
    for (size_t i = 0; i < klen && i < PST_KEY_BYTES; i++)
        snprintf(hex + 2 * i, sizeof hex - 2 * i, "%02x", key[i]);
    eng_pos c;
    if (klen == PST_KEY_BYTES && (c = pst_pos_of_key(key), eng_validate(&c, NULL, 0) == 0)) {
        char fen[ENG_FEN_MAX];
        pst_fen(&c, fen, sizeof fen);
        snprintf(buf, len, "%s (key %s)", fen, hex);
    } else if (klen == PST_KEY_BYTES) {
        snprintf(buf, len, "(key %s)", hex);
    } else {
        snprintf(buf, len, "(a %zu-byte key%s%s)", klen, klen ? " " : "", hex);
    }
}

static int
pst_chunk_run(void *arg)
{
    pst_chunk_op *op = arg;
    int rc = mdb_cursor_open(op->txn, op->s->nodes, &op->cur);
    if (rc != 0)
        return rc;
    MDB_val k = {PST_KEY_BYTES, (void *)op->after}, v;
    rc = mdb_cursor_get(op->cur, &k, &v, op->after ? MDB_SET_RANGE : MDB_FIRST);
    if (rc == 0 && op->after && k.mv_size == PST_KEY_BYTES &&
        memcmp(k.mv_data, op->after, PST_KEY_BYTES) == 0)
        rc = mdb_cursor_get(op->cur, &k, &v, MDB_NEXT);
    while (rc == 0 && op->n < PST_SCAN_CHUNK) {
        if (k.mv_size != PST_KEY_BYTES || v.mv_size != PST_VAL_BYTES) {
            char name[160];
            pst_name_key(k.mv_data, k.mv_size, name, sizeof name);
            char msg[320];
            snprintf(msg, sizeof msg, "%s: damaged record %s: a %zu-byte key and %zu-byte value",
                     op->s->path, name, k.mv_size, v.mv_size);
            pst_errf(op->err, op->errlen, "%s", msg);
            pst_set_damaged(op->s, msg);
            return PST_ECORRUPT;
        }
        memcpy(op->buf[op->n].key, k.mv_data, PST_KEY_BYTES);
        memcpy(op->buf[op->n].val, v.mv_data, PST_VAL_BYTES);
        op->n++;
        rc = mdb_cursor_get(op->cur, &k, &v, MDB_NEXT);
    }
    if (rc == MDB_NOTFOUND) {
        op->done = 1;
        rc = 0;
    }
    return rc;
}

/*
 * pst_scan - every record in key order, in chunks: each chunk is copied
 * out of one read transaction, and fn runs with no transaction open.
 * Why chunks: a read transaction held for a whole scan of a large store
 * pins every page the writers free meanwhile (the file grows), and holds
 * map_lock, so this process could not grow its map. The price is that a
 * scan concurrent with writers is not a snapshot; each record it shows is
 * whole and checked. The records before a damaged one are delivered: a
 * scan reports how far it got.
 */
static int
pst_scan(pst_env *s, pst_scan_fn fn, void *arg, char *err, size_t errlen)
{
    if (atomic_load_explicit(&s->broken, memory_order_relaxed))
        return pst_broken_fail(s, err, errlen);
    pst_raw *buf = malloc(PST_SCAN_CHUNK * sizeof *buf);
    if (!buf) {
        pst_errf(err, errlen, "%s: out of memory for a scan", s->path);
        return PST_ENOMEM;
    }
    uint8_t last[PST_KEY_BYTES];
    int have_last = 0, rc = 0, done = 0;
    while (!done && rc == 0) {
        pst_chunk_op op = {s, NULL, NULL, buf, 0, have_last ? last : NULL, 0, err, errlen};
        if ((rc = pst_read_begin(s, &op.txn)) != 0) {
            rc = pst_lmdb_fail(s, rc, "beginning a read transaction", err, errlen);
            break;
        }
        char amsg[256] = "";
        rc = pst_guarded(pst_chunk_run, &op, amsg, sizeof amsg);
        if (op.cur)
            mdb_cursor_close(op.cur);
        if (rc == PST_ASSERTED) {
            pst_read_fail(s, op.txn);
            rc = pst_damaged_fail(s, "reading the records", amsg, err, errlen);
        } else {
            pst_read_end(s, op.txn);
            if (rc != 0 && rc != PST_ECORRUPT)
                rc = pst_lmdb_fail(s, rc, "reading the nodes database", err, errlen);
        }
        done = op.done;
        for (size_t i = 0; i < op.n; i++) {
            pst_record r;
            const char *why;
            eng_pos c = pst_pos_of_key(buf[i].key);
            int dr = pst_decode_why(buf[i].key, buf[i].val, PST_VAL_BYTES, &r, &why);
            if (dr == 0 && eng_validate(&c, NULL, 0) != 0) {
                dr = PST_ECORRUPT;
                why = "the key is not a position";
            }
            if (dr != 0) {
                /* Earlier in key order than a chunk-level error: this is
                 * the one to report. */
                char name[160];
                pst_name_key(buf[i].key, PST_KEY_BYTES, name, sizeof name);
                char msg[320];
                snprintf(msg, sizeof msg, "%s: damaged record %s: %s", s->path, name, why);
                pst_errf(err, errlen, "%s", msg);
                pst_set_damaged(s, msg);
                rc = PST_ECORRUPT;
                break;
            }
            int fr = fn(&c, &r, arg);
            if (fr != 0) {
                free(buf);
                return fr;
            }
        }
        if (op.n > 0)
            memcpy(last, buf[op.n - 1].key, PST_KEY_BYTES);
        have_last = 1;
    }
    free(buf);
    return rc;
}

int
pst_foreach(pst_env *s, int (*fn)(const eng_pos *p, const pst_record *r, void *arg), void *arg,
            char *err, size_t errlen)
{
    if (!s || !fn) {
        pst_errf(err, errlen, "pst_foreach: no store or no function");
        return PST_EINVAL;
    }
    return pst_scan(s, fn, arg, err, errlen);
}

static int
pst_count_one(const eng_pos *p, const pst_record *r, void *arg)
{
    pst_stats *st = arg;
    st->records++;
    st->by_bound[r->bound]++;
    st->with_win_move += r->win.from != PST_NOMOVE;
    st->with_draw_move += r->draw.from != PST_NOMOVE;
    st->by_pieces[pst_popcount(p->bm | p->wm | p->bk | p->wk)]++;
    return 0;
}

int
pst_stats_get(pst_env *s, pst_stats *out, char *err, size_t errlen)
{
    if (!s || !out) {
        pst_errf(err, errlen, "pst_stats_get: no store or no result");
        return PST_EINVAL;
    }
    pst_stats st;
    memset(&st, 0, sizeof st);
    int rc = pst_scan(s, pst_count_one, &st, err, errlen);
    if (rc != 0)
        return rc;
    /* Sizes after the scan: the scan may have adopted a larger map. */
    MDB_envinfo info;
    MDB_stat es;
    pthread_rwlock_rdlock(&s->map_lock);
    mdb_env_info(s->env, &info);
    mdb_env_stat(s->env, &es);
    pthread_rwlock_unlock(&s->map_lock);
    st.map_bytes = info.me_mapsize;
    st.used_bytes = ((uint64_t)info.me_last_pgno + 1) * es.ms_psize;
    *out = st;
    return 0;
}

const char *
pst_strerror(int code)
{
    switch (code) {
    case PST_OK:
        return "success";
    case PST_EIO:
        return "the store cannot be opened or written";
    case PST_EVERSION:
        return "not a proof store, or another schema version";
    case PST_ECORRUPT:
        return "damaged store file or record";
    case PST_ENOTFOUND:
        return "no record for the position";
    case PST_ECONTRADICT:
        return "a new record contradicts a stored one";
    case PST_ENOMEM:
        return "out of memory";
    case PST_EINVAL:
        return "invalid argument";
    case PST_EREADONLY:
        return "the store is open read-only";
    default:
        return "unknown store error";
    }
}
