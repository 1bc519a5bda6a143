/*
 * store.c - the proven-node store in LMDB (format and contract in
 * store.h).
 *
 * The file has four parts: the record codec (pure functions: keys,
 * values, checksums, the colour flip of moves), opening (the schema
 * check), writing (validation, merging) and reading (get, scans,
 * statistics). What LMDB leaves to its caller (errors, map growth,
 * transactions, guards against a damaged file) is in store_lmdb.c.
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
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <lmdb.h>
#include <xxhash.h>

#include "egdb/egdb.h"
#include "prover/store.h"
#include "prover/store_lmdb.h"

/* ---- constants -------------------------------------------------------- */

#define PST_FORMAT 1 /* value byte 0: the record format of schema 1 */
#define PST_KEY_BYTES 16
#define PST_VAL_BYTES 32
#define PST_SUM_BYTES 28 /* value bytes under the checksum (key bytes too) */

/* Flags byte of a record. */
#define PST_FLAG_WIN 0x01
#define PST_FLAG_DRAW 0x02

/*
 * Reader slots in lock.mdb, shared by every process of the machine. LMDB's
 * default (126) is low for many solver processes with several threads
 * each; a slot costs 64 bytes of lock file.
 */
#define PST_MAX_READERS 1022

/* Records copied out of LMDB per read transaction of a scan. */
#define PST_SCAN_CHUNK 4096

/* What the schema check found. */
enum { PST_SCHEMA_OK = 0, PST_SCHEMA_EMPTY = 1 };

/* ---- types ------------------------------------------------------------ */

/* A scan callback: a canonical position and its checked record. */
typedef int (*pst_scan_fn)(const eng_pos *p, const pst_record *r, void *arg);

/* One record of a batch after validation: its key and its record in the
 * canonical orientation. */
typedef struct pst_norm {
    uint8_t key[PST_KEY_BYTES];
    pst_record rec;
    size_t i; /* the item's place in the caller's batch (its messages) */
} pst_norm;

typedef struct pst_batch {
    const pst_item *items;
    const pst_norm *norm;
    size_t n;
    size_t changed; /* records whose stored value the batch changes */
} pst_batch;

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

/* ---- small helpers ---------------------------------------------------- */

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

/*
 * The value layout is store.h's, byte for byte, written field by field in
 * little-endian order rather than as a C struct, so the file does not
 * depend on the compiler's padding or the machine's byte order. Reserved
 * bytes are zero and checked on reading: a later format can give them a
 * meaning and be told apart.
 */
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

/* The public decoder takes any length and any bytes (the fuzz test
 * drives it); only the reason is dropped. */
int
pst_decode(const uint8_t key[16], const uint8_t *val, size_t len, pst_record *out)
{
    const char *why;
    if (!key || (!val && len > 0) || !out)
        return PST_ECORRUPT;
    return pst_decode_why(key, val, len, out, &why);
}

/*
 * pst_norm_of - an item (any orientation) as it is stored: the key of its
 * canonical position and its record in the canonical orientation. The
 * canonical position is the twin with Black to move; the bound is for
 * the side to move and stays, the moves turn with the board. Absent
 * moves are cleared so that equal records encode to equal bytes.
 */
static void
pst_norm_of(const pst_item *it, pst_norm *out)
{
    eng_pos c = eng_canonical(&it->pos);
    pst_key_of(&c, out->key);
    out->rec = it->rec;
    if (it->pos.stm == ENG_WHITE) {
        out->rec.win = pst_move_flip(it->rec.win);
        out->rec.draw = pst_move_flip(it->rec.draw);
    }
    if (out->rec.win.from == PST_NOMOVE)
        pst_move_clear(&out->rec.win);
    if (out->rec.draw.from == PST_NOMOVE)
        pst_move_clear(&out->rec.draw);
}

/* The key and value pst_put_many would write for it (before merging),
 * for the manager's wire protocol. No validation: see store.h. */
void
pst_item_encode(const pst_item *it, uint8_t key[16], uint8_t val[32])
{
    pst_norm nr;
    pst_norm_of(it, &nr);
    memcpy(key, nr.key, PST_KEY_BYTES);
    pst_encode(nr.key, &nr.rec, val);
}

/* The checksum and codes first (a damaged record is damage, whatever its
 * key says), then the key as a position: a key that passes its checksum
 * and is no position was written by something that is not this store. */
int
pst_item_decode(const uint8_t key[16], const uint8_t *val, size_t len, pst_item *out)
{
    pst_record r;
    if (!key || !out)
        return PST_EINVAL;
    int rc = pst_decode(key, val, len, &r);
    if (rc != 0)
        return rc;
    eng_pos c = pst_pos_of_key(key);
    if (eng_validate(&c, NULL, 0) != 0)
        return PST_EINVAL;
    out->pos = c;
    out->rec = r;
    return 0;
}

/* ---- moves ------------------------------------------------------------ */

/*
 * A stored move is three numbers, not a route: the route is found again
 * by generating the position's moves. That keeps records at 32 bytes and
 * makes a stored move that is not legal impossible to act on: it names
 * nothing.
 */
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
    if (rc == MDB_NOTFOUND && s->borrowed)
        return PST_SCHEMA_EMPTY; /* the caller's databases are not a store's */
    if (rc == MDB_NOTFOUND) {
        MDB_stat st;
        if ((rc = mdb_dbi_open(txn, NULL, 0, &main_dbi)) != 0 ||
            (rc = mdb_stat(txn, main_dbi, &st)) != 0)
            return pst_lmdb_fail(s, rc, "reading the main database", err, errlen);
        if (st.ms_entries == 0)
            return PST_SCHEMA_EMPTY;
        eng_errf(err, errlen,
                 "%s: not a proof store (or a damaged one): the LMDB environment has %zu entries "
                 "but no 'meta' database (expected schema \"%s\"); it is left as it is",
                 s->path, st.ms_entries, PST_SCHEMA);
        return PST_EVERSION;
    }
    if (rc == MDB_INCOMPATIBLE) {
        eng_errf(err, errlen,
                 "%s: not a proof store: 'meta' is not a plain database (expected schema \"%s\")",
                 s->path, PST_SCHEMA);
        return PST_EVERSION;
    }
    if (rc != 0)
        return pst_lmdb_fail(s, rc, "opening the meta database", err, errlen);
    MDB_val k = {6, (void *)"schema"}, v;
    rc = mdb_get(txn, meta, &k, &v);
    if (rc == MDB_NOTFOUND) {
        eng_errf(err, errlen, "%s: not a proof store: no schema record (expected \"%s\")", s->path,
                 PST_SCHEMA);
        return PST_EVERSION;
    }
    if (rc != 0)
        return pst_lmdb_fail(s, rc, "reading the schema record", err, errlen);
    if (v.mv_size != strlen(PST_SCHEMA) || memcmp(v.mv_data, PST_SCHEMA, v.mv_size) != 0) {
        char text[256];
        pst_printable(&v, text, sizeof text);
        eng_errf(err, errlen,
                 "%s: schema \"%s\", this program reads \"%s\"; the store is left as it is",
                 s->path, text, PST_SCHEMA);
        return PST_EVERSION;
    }
    rc = mdb_dbi_open(txn, "nodes", 0, &nodes);
    if (rc == MDB_NOTFOUND || rc == MDB_INCOMPATIBLE) {
        /* The store is created in one transaction with both databases:
         * a schema without its nodes is damage, not another version. */
        eng_errf(err, errlen, "%s: damaged store: schema \"%s\" but no 'nodes' database", s->path,
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

/* A pst_env for path with nothing open yet (its locks made). RETURN it,
 * or NULL when memory runs out. */
static pst_env *
pst_env_new(const char *path, int rdonly)
{
    pst_env *s = calloc(1, sizeof *s);
    if (!s || !(s->path = strdup(path))) {
        free(s);
        return NULL;
    }
    s->rdonly = rdonly;
    pthread_rwlockattr_t attr;
    pthread_rwlockattr_init(&attr);
    pthread_rwlockattr_setkind_np(&attr, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
    pthread_rwlock_init(&s->map_lock, &attr);
    pthread_rwlockattr_destroy(&attr);
    pthread_mutex_init(&s->pool_lock, NULL);
    return s;
}

/*
 * pst_schema_load - the store's two databases in s->env found (their
 * schema checked in a read transaction) or, for a writer, created in an
 * environment that has none yet. The read comes first: a foreign or
 * other-version store is refused without a write (LMDB itself writes
 * data.mdb only when it is empty, and lock.mdb is not part of the
 * store). RETURN 0 or a PST_E* code with err.
 */
static int
pst_schema_load(pst_env *s, char *err, size_t errlen)
{
    pst_schema_op op = {s, NULL, err, errlen};
    int rc = pst_read_begin(s, &op.txn);
    if (rc != 0)
        return pst_lmdb_fail(s, rc, "beginning a read transaction", err, errlen);
    char amsg[256] = "";
    int schema = pst_guarded(pst_schema_run, &op, amsg, sizeof amsg);
    /* Committing a read transaction keeps the database handles it opened
     * for the environment's later transactions. */
    rc = schema == PST_SCHEMA_OK ? mdb_txn_commit(op.txn) : (mdb_txn_abort(op.txn), 0);
    pthread_rwlock_unlock(&s->map_lock);
    if (schema == PST_ASSERTED)
        return pst_damaged_fail(s, "reading the schema", amsg, err, errlen);
    if (rc != 0)
        return pst_lmdb_fail(s, rc, "reading the schema", err, errlen);
    if (schema == PST_SCHEMA_EMPTY) {
        if (s->rdonly) {
            eng_errf(err, errlen,
                     "%s: not a proof store yet: an empty LMDB environment (its creation did not "
                     "finish; opening it for writing completes it)",
                     s->path);
            return PST_EVERSION;
        }
        return pst_write(s, pst_create_txn, NULL, err, errlen);
    }
    return schema == PST_SCHEMA_OK ? 0 : schema;
}

/*
 * The order matters: everything that can refuse the store without
 * touching it (the path, LMDB's header, the schema in a read transaction)
 * comes before the only write, the creation of an empty store.
 */
int
pst_open(const char *path, int flags, pst_env **out, char *err, size_t errlen)
{
    if (!path || !out) {
        eng_errf(err, errlen, "pst_open: no path or no result pointer");
        return PST_EINVAL;
    }
    *out = NULL;
    size_t map;
    int rc = pst_map_initial(&map, err, errlen);
    if (rc != 0)
        return rc;
    int rdonly = (flags & PST_RDONLY) != 0;

    pst_env *s = pst_env_new(path, rdonly);
    size_t plen = strlen(path);
    char *file = malloc(plen + sizeof "/data.mdb");
    if (!s || !file) {
        pst_close(s);
        free(file);
        eng_errf(err, errlen, "%s: out of memory", path);
        return PST_ENOMEM;
    }
    memcpy(file, path, plen);
    memcpy(file + plen, "/data.mdb", sizeof "/data.mdb");

    /* Read-only: the store must exist, and nothing is created (LMDB would
     * otherwise leave a lock.mdb in a directory that holds no store). */
    struct stat st;
    if (rdonly && stat(file, &st) != 0) {
        eng_errf(err, errlen, "%s: no proof store here (%s: %s)", path, file, strerror(errno));
        rc = PST_EIO;
        goto fail;
    }
    if (!rdonly && mkdir(path, 0775) != 0 && errno != EEXIST) {
        eng_errf(err, errlen, "%s: cannot create the store directory: %s", path, strerror(errno));
        rc = PST_EIO;
        goto fail;
    }
    /* a full disk: an error, not SIGBUS or a file refused for good */
    if (!rdonly && (rc = pst_lmdb_prepare(path, PST_MAX_READERS, err, errlen)) != 0)
        goto fail;
    /* LMDB's header, checked before LMDB reads it (store_lmdb.c says
     * why). */
    if ((rc = pst_check_header(path, file, err, errlen)) != 0)
        goto fail;

    /*
     * MDB_NOTLS: transactions are not tied to threads, so one pst_env
     * serves every thread and read transactions can be pooled. The
     * explicit map size also bounds what a read-only process maps,
     * whatever a (possibly damaged) meta page claims. Eight databases:
     * a state's folder (manager/tree.h, PERSISTENCE) holds the tree's
     * beside the store's, and `store stats` may open it.
     */
    if ((rc = mdb_env_create(&s->env)) != 0 ||
        (rc = mdb_env_set_assert(s->env, pst_on_assert)) != 0 ||
        (rc = mdb_env_set_maxdbs(s->env, 8)) != 0 ||
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
    if ((rc = pst_schema_load(s, err, errlen)) != 0)
        goto fail;
    free(file);
    *out = s;
    return 0;

fail:
    free(file);
    pst_close(s);
    return rc;
}

/*
 * pst_open_in (store.h, INSIDE A CALLER'S ENVIRONMENT): the same schema
 * check and creation as pst_open, in an environment the caller opened.
 */
int
pst_open_in(MDB_env *env, const char *path, int flags, pst_env **out, char *err, size_t errlen)
{
    if (!env || !path || !out) {
        eng_errf(err, errlen, "pst_open_in: no environment, no path or no result pointer");
        return PST_EINVAL;
    }
    *out = NULL;
    pst_env *s = pst_env_new(path, (flags & PST_RDONLY) != 0);
    if (!s) {
        eng_errf(err, errlen, "%s: out of memory", path);
        return PST_ENOMEM;
    }
    s->env = env;
    s->borrowed = 1;
    mdb_env_set_assert(env, pst_on_assert);
    int rc = pst_schema_load(s, err, errlen);
    if (rc != 0) {
        pst_close(s);
        return rc;
    }
    *out = s;
    return 0;
}

/* Pooled read transactions hold reader slots: they are given back before
 * the environment closes (LMDB's rule: transactions first). */
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
    if (s->env && !s->borrowed)
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
    /* the position's and the moves' texts are written only for an error:
     * formatting them for every item was a tenth of admission's time */
    char why[160], fen[ENG_FEN_MAX];
    if (eng_validate(&it->pos, why, sizeof why) != 0) {
        eng_errf(err, errlen, "item %zu: not a valid position: %s", i, why);
        return PST_EINVAL;
    }
    const pst_record *r = &it->rec;
    if (!eng_bound_valid(r->bound) || r->bound == ENG_LW) {
        pst_fen(&it->pos, fen, sizeof fen);
        eng_errf(err, errlen, "item %zu (%s): bound %s (%d) is not stored: only LL LD DD DW WW", i,
                 fen, eng_bound_name(r->bound), r->bound);
        return PST_EINVAL;
    }
    int lo = eng_bound_lo(r->bound);
    const pst_move *mv[2] = {&r->win, &r->draw};
    static const char *const name[2] = {"win", "draw"};
    for (int k = 0; k < 2; k++) {
        if (mv[k]->from == PST_NOMOVE)
            continue;
        int unsuited = (k == 0 && lo != ENG_WIN) || (k == 1 && lo < ENG_DRAW);
        if (!unsuited && pst_move_find(&it->pos, mv[k], NULL) == 0)
            continue; /* a legal move that suits the bound */
        char mt[64];
        pst_fen(&it->pos, fen, sizeof fen);
        pst_move_text(mv[k], mt, sizeof mt);
        if (unsuited)
            eng_errf(err, errlen,
                     "item %zu (%s): a %s move (%s) with bound %s: the side to move has no %s to "
                     "prove",
                     i, fen, name[k], mt, eng_bound_name(r->bound), k == 0 ? "win" : "draw");
        else
            eng_errf(err, errlen, "item %zu (%s): the %s move (%s) is not a legal move here", i,
                     fen, name[k], mt);
        return PST_EINVAL;
    }
    pst_norm_of(it, out);
    return 0;
}

/*
 * pst_merge - store.h's MERGING rule, with its reasons:
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
    pst_record m;
    m.bound = eng_bound_meet(old->bound, new->bound);
    if (m.bound == ENG_BOUND_INVALID)
        return PST_ECONTRADICT;
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

int
pst_record_merge(const pst_record *old, const pst_record *new, pst_record *out)
{
    return pst_merge(old, new, out);
}

int
pst_item_check(const pst_item *it, size_t i, char *err, size_t errlen)
{
    pst_norm nr;
    return pst_validate_item(it, i, &nr, err, errlen);
}

void
pst_record_turn(pst_record *r)
{
    r->win = pst_move_flip(r->win);
    r->draw = pst_move_flip(r->draw);
}

/*
 * pst_merge_batch - merges every record of the batch with what txn sees.
 * Records are merged in the batch's key order (ties in the order given:
 * pst_validate_all), so a position that comes twice in one batch is
 * merged twice (and contradicts itself if its two records do). With
 * write set, a changed value is put (an unchanged one is not rewritten:
 * that would copy its page for nothing); without, the changes are only
 * counted.
 */
static int pst_merge_run(pst_env *s, MDB_cursor *cur, pst_batch *b, int write, char *err,
                         size_t errlen);

static int
pst_merge_batch(pst_env *s, MDB_txn *txn, pst_batch *b, int write, char *err, size_t errlen)
{
    b->changed = 0;
    MDB_cursor *cur;
    int rc = mdb_cursor_open(txn, s->nodes, &cur);
    if (rc != 0)
        return rc;
    rc = pst_merge_run(s, cur, b, write, err, errlen);
    mdb_cursor_close(cur);
    return rc;
}

/* pst_merge_batch's loop, on one cursor, in the batch's key order
 * (pst_validate_all: see KEY ORDER there). */
static int
pst_merge_run(pst_env *s, MDB_cursor *cur, pst_batch *b, int write, char *err, size_t errlen)
{
    for (size_t j = 0; j < b->n; j++) {
        const pst_norm *nr = &b->norm[j];
        size_t i = nr->i;
        MDB_val k = {PST_KEY_BYTES, (void *)nr->key}, v;
        uint8_t val[PST_VAL_BYTES];
        pst_record merged = nr->rec;
        int found = 1;
        int rc = mdb_cursor_get(cur, &k, &v, MDB_SET_KEY);
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
                eng_errf(err, errlen, "%s", msg);
                pst_set_damaged(s, msg);
                return PST_ECORRUPT;
            }
            if (pst_merge(&old, &nr->rec, &merged) != 0) {
                pst_fen(&b->items[i].pos, fen, sizeof fen);
                eng_errf(err, errlen,
                         "item %zu (%s): bound %s contradicts the stored %s (bounds for the side "
                         "to move); nothing of the batch was written",
                         i, fen, eng_bound_name(nr->rec.bound), eng_bound_name(old.bound));
                return PST_ECONTRADICT;
            }
            pst_encode(nr->key, &merged, val);
            if (memcmp(v.mv_data, val, PST_VAL_BYTES) == 0)
                continue;
        } else if (rc == MDB_NOTFOUND) {
            found = 0;
            pst_encode(nr->key, &merged, val);
        } else {
            return rc;
        }
        b->changed++;
        if (!write)
            continue;
        /* in place where the key is (same size), else inserted; the
         * cursor stays where the next key of the sorted batch is near */
        MDB_val nk = {PST_KEY_BYTES, (void *)nr->key};
        v.mv_size = PST_VAL_BYTES;
        v.mv_data = val;
        if ((rc = mdb_cursor_put(cur, &nk, &v, found ? MDB_CURRENT : 0)) != 0)
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

/*
 * Three stages, cheapest first: every record is checked on its own
 * (position, bound, moves: no LMDB at all), then merged in a read
 * transaction (pst_precheck: no writers' lock), and only a batch that
 * changes something opens a write transaction, which merges again.
 */
/* Whether s takes writes at all: not read-only, not broken, not found
 * damaged by this process (store.h, DAMAGED FILES). RETURN 0 or the
 * PST_E* code with err. */
static int
pst_write_refused(pst_env *s, char *err, size_t errlen)
{
    if (s->rdonly) {
        eng_errf(err, errlen, "%s: opened read-only; nothing written", s->path);
        return PST_EREADONLY;
    }
    if (atomic_load_explicit(&s->broken, memory_order_relaxed))
        return pst_broken_fail(s, err, errlen);
    pthread_mutex_lock(&s->pool_lock);
    int damaged = s->damaged;
    if (damaged)
        eng_errf(err, errlen, "writing refused: this process found the store damaged: %s",
                 s->damage);
    pthread_mutex_unlock(&s->pool_lock);
    return damaged ? PST_ECORRUPT : 0;
}

/* pst_validate_all's order: the key's bytes (LMDB's own order for the
 * "nodes" table), then the place in the batch. */
static int
pst_norm_cmp(const void *a, const void *b)
{
    const pst_norm *x = a, *y = b;
    int c = memcmp(x->key, y->key, PST_KEY_BYTES);
    if (c)
        return c;
    return x->i < y->i ? -1 : x->i > y->i;
}

/* Every record of items checked and normalised into a new array *out
 * (the caller frees it), sorted by key. RETURN 0, PST_EINVAL or
 * PST_ENOMEM with err. */
static int
pst_validate_all(pst_env *s, const pst_item *items, size_t n, pst_norm **out, char *err,
                 size_t errlen)
{
    pst_norm *norm = malloc((n ? n : 1) * sizeof *norm);
    if (!norm) {
        eng_errf(err, errlen, "%s: out of memory for a batch of %zu records", s->path, n);
        return PST_ENOMEM;
    }
    int rc = 0;
    for (size_t i = 0; i < n && rc == 0; i++) {
        rc = pst_validate_item(&items[i], i, &norm[i], err, errlen);
        norm[i].i = i;
    }
    if (rc != 0) {
        free(norm);
        return rc;
    }
    /* KEY ORDER. The batch is merged in the store's key order, on one
     * cursor: consecutive keys fall on the same leaf page, which LMDB's
     * cursor finds without descending the tree again, and a write
     * transaction's dirty-page list is searched once a page instead of
     * once a level a record. A worker's proof of 1.5 M records in its
     * order of discovery took 3.15 s to put (three lookups a record, each
     * a descent searching that list), 1.0 s in key order (bench/admit.c
     * measures the whole admission). Ties keep the batch's order, so the
     * merge's result is the same (test_batch_merges_as_one_at_a_time). */
    qsort(norm, n, sizeof *norm, pst_norm_cmp);
    *out = norm;
    return 0;
}

int
pst_put_many(pst_env *s, const pst_item *items, size_t n, char *err, size_t errlen)
{
    if (!s || (!items && n > 0)) {
        eng_errf(err, errlen, "pst_put_many: no store or no items");
        return PST_EINVAL;
    }
    if (s->rdonly) {
        eng_errf(err, errlen, "%s: opened read-only; nothing written", s->path);
        return PST_EREADONLY;
    }
    if (n == 0)
        return 0;
    int rc = pst_write_refused(s, err, errlen);
    if (rc != 0)
        return rc;
    /* Every record is checked before the transaction begins: an invalid
     * one refuses the batch without taking the writers' lock. */
    pst_norm *norm = NULL;
    if ((rc = pst_validate_all(s, items, n, &norm, err, errlen)) != 0)
        return rc;
    pst_batch b = {items, norm, n, 0};
    if (rc == 0)
        rc = pst_precheck(s, &b, err, errlen);
    if (rc == 0 && b.changed > 0)
        rc = pst_write(s, pst_put_txn, &b, err, errlen);
    free(norm);
    return rc;
}

/* ---- a caller's transactions (store.h, INSIDE A CALLER'S ENVIRONMENT) -- */

/* What pst_txn_write and pst_txn_read carry through pst_write's and
 * pst_guarded's callbacks. */
typedef struct pst_body_op {
    pst_txn_body body;
    void *arg;
    MDB_txn *txn;
    int own; /* the body's own code (not an LMDB one), kept apart */
    char *err;
    size_t errlen;
} pst_body_op;

/*
 * The caller's body inside pst_write. pst_write takes any nonzero return
 * for an LMDB code or a PST_E* one and turns it into a PST_E* code; a
 * caller's own code (its refusal of a worker's proof, say) must come
 * back as it was, so it is kept in op->own and reported as PST_EINVAL,
 * which pst_write passes on untouched.
 */
static int
pst_body_write(pst_env *s, MDB_txn *txn, void *arg, char *err, size_t errlen)
{
    (void)s;
    pst_body_op *op = arg;
    op->own = 0;
    int rc = op->body(txn, op->arg, err, errlen);
    int lmdb = rc >= MDB_KEYEXIST && rc <= MDB_LAST_ERRCODE;
    if (rc < 0 && !lmdb && !(rc >= PST_ENOSPC && rc <= PST_EIO)) {
        op->own = rc;
        return PST_EINVAL;
    }
    return rc;
}

int
pst_txn_write(pst_env *s, pst_txn_body body, void *arg, char *err, size_t errlen)
{
    if (!s || !body) {
        eng_errf(err, errlen, "pst_txn_write: no store or no body");
        return PST_EINVAL;
    }
    int rc = pst_write_refused(s, err, errlen);
    if (rc != 0)
        return rc;
    pst_body_op op = {body, arg, NULL, 0, err, errlen};
    rc = pst_write(s, pst_body_write, &op, err, errlen);
    return op.own != 0 && rc == PST_EINVAL ? op.own : rc;
}

static int
pst_body_read(void *arg)
{
    pst_body_op *op = arg;
    return op->body(op->txn, op->arg, op->err, op->errlen);
}

int
pst_txn_read(pst_env *s, pst_txn_body body, void *arg, char *err, size_t errlen)
{
    if (atomic_load_explicit(&s->broken, memory_order_relaxed))
        return pst_broken_fail(s, err, errlen);
    pst_body_op op = {body, arg, NULL, 0, err, errlen};
    int rc = pst_read_begin(s, &op.txn);
    if (rc != 0)
        return pst_lmdb_fail(s, rc, "beginning a read transaction", err, errlen);
    char amsg[256] = "";
    rc = pst_guarded(pst_body_read, &op, amsg, sizeof amsg);
    if (rc == PST_ASSERTED) {
        pst_read_fail(s, op.txn);
        return pst_damaged_fail(s, "reading", amsg, err, errlen);
    }
    pst_read_end(s, op.txn);
    return rc;
}

/*
 * pst_put_many_txn: the checks of pst_put_many, then the merge straight
 * into the caller's transaction. No read-only precheck: the caller's
 * transaction holds the writers' lock already, and a batch that changes
 * nothing costs no page copy (pst_merge_batch writes only what changes).
 * The records are checked again on every run of a repeated body; the
 * checks are what the store promises, and a repeat is rare (a map that
 * grew).
 */
int
pst_put_many_txn(pst_env *s, MDB_txn *txn, const pst_item *items, size_t n, char *err,
                 size_t errlen)
{
    if (!s || !txn || (!items && n > 0)) {
        eng_errf(err, errlen, "pst_put_many_txn: no store, no transaction or no items");
        return PST_EINVAL;
    }
    int rc = pst_write_refused(s, err, errlen);
    if (rc != 0 || n == 0)
        return rc;
    pst_norm *norm = NULL;
    if ((rc = pst_validate_all(s, items, n, &norm, err, errlen)) != 0)
        return rc;
    pst_batch b = {items, norm, n, 0};
    rc = pst_merge_batch(s, txn, &b, 1, err, errlen);
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

/*
 * The hot path of the solvers: one pooled read transaction, one lookup,
 * 32 bytes copied out, then the checks (checksum, codes) outside any
 * lock. The record is stored for the canonical position; only the moves
 * need turning for a White-to-move caller, the bound is for the side to
 * move either way.
 */
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

/* Sizes are checked before anything is copied: a damaged node may claim
 * any size, and only 16 + 32 bytes are ever read from the map. */
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
            eng_errf(op->err, op->errlen, "%s", msg);
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
        eng_errf(err, errlen, "%s: out of memory for a scan", s->path);
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
                eng_errf(err, errlen, "%s", msg);
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
        eng_errf(err, errlen, "pst_foreach: no store or no function");
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

/*
 * A full scan rather than counters kept beside the records: counters
 * would be one more thing for every writer of every process to keep
 * exact across crashes, and the scan also checks every record.
 */
int
pst_stats_get(pst_env *s, pst_stats *out, char *err, size_t errlen)
{
    if (!s || !out) {
        eng_errf(err, errlen, "pst_stats_get: no store or no result");
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

/* ---- the owner --------------------------------------------------------- */

/* pst_owner's reads, under pst_guarded. */
typedef struct pst_owner_op {
    pst_env *s;
    MDB_txn *txn;
    char label[PST_OWNER_MAX];
    int has;
    uint64_t records;
} pst_owner_op;

static const MDB_val pst_owner_key = {5, (void *)"owner"};

static int
pst_owner_run(void *arg)
{
    pst_owner_op *op = arg;
    MDB_val k = pst_owner_key, v;
    int rc = mdb_get(op->txn, op->s->meta, &k, &v);
    if (rc == 0) {
        if (v.mv_size == 0 || v.mv_size >= sizeof op->label)
            return MDB_CORRUPTED;
        memcpy(op->label, v.mv_data, v.mv_size);
        op->label[v.mv_size] = 0;
        op->has = 1;
    } else if (rc != MDB_NOTFOUND) {
        return rc;
    }
    MDB_stat st;
    if ((rc = mdb_stat(op->txn, op->s->nodes, &st)) != 0)
        return rc;
    op->records = st.ms_entries;
    return 0;
}

int
pst_owner(pst_env *s, char *owner, size_t cap, uint64_t *records, char *err, size_t errlen)
{
    if (atomic_load_explicit(&s->broken, memory_order_relaxed))
        return pst_broken_fail(s, err, errlen);
    pst_owner_op op = {.s = s};
    int rc = pst_read_begin(s, &op.txn);
    if (rc != 0)
        return pst_lmdb_fail(s, rc, "beginning a read transaction", err, errlen);
    char amsg[256];
    rc = pst_guarded(pst_owner_run, &op, amsg, sizeof amsg);
    if (rc == PST_ASSERTED) {
        pst_read_fail(s, op.txn);
        return pst_damaged_fail(s, "reading the owner label", amsg, err, errlen);
    }
    pst_read_end(s, op.txn);
    if (rc == MDB_CORRUPTED) {
        eng_errf(err, errlen, "%s: damaged store: the owner label is malformed", s->path);
        return PST_ECORRUPT;
    }
    if (rc != 0)
        return pst_lmdb_fail(s, rc, "reading the owner label", err, errlen);
    snprintf(owner, cap, "%s", op.has ? op.label : "");
    *records = op.records;
    return 0;
}

static int
pst_owner_put(pst_env *s, MDB_txn *txn, void *arg, char *err, size_t errlen)
{
    const char *label = arg;
    MDB_val k = pst_owner_key, v;
    int rc = mdb_get(txn, s->meta, &k, &v);
    if (rc == 0) {
        if (v.mv_size == strlen(label) && !memcmp(v.mv_data, label, v.mv_size))
            return 0;
        char had[PST_OWNER_MAX];
        size_t n = v.mv_size < sizeof had - 1 ? v.mv_size : sizeof had - 1;
        memcpy(had, v.mv_data, n);
        had[n] = 0;
        eng_errf(err, errlen, "%s belongs to proof '%s', not to '%s'", s->path, had, label);
        return PST_ECONTRADICT;
    }
    if (rc != MDB_NOTFOUND)
        return rc;
    v.mv_size = strlen(label);
    v.mv_data = (void *)label;
    return mdb_put(txn, s->meta, &k, &v, 0);
}

int
pst_owner_set(pst_env *s, const char *owner, char *err, size_t errlen)
{
    size_t n = strlen(owner);
    if (n == 0 || n >= PST_OWNER_MAX) {
        eng_errf(err, errlen, "an owner label has 1 to %d bytes", PST_OWNER_MAX - 1);
        return PST_EINVAL;
    }
    if (s->rdonly) {
        eng_errf(err, errlen, "%s is open read-only", s->path);
        return PST_EREADONLY;
    }
    return pst_write(s, pst_owner_put, (void *)owner, err, errlen);
}

static const MDB_val pst_scope_key = {10, (void *)"egdb-scope"};

/* The recorded scope of the store (THE DATABASES' SCOPE) in txn: 0 when
 * none, and when the value is not 4 bytes (a later format, or damage):
 * then it is a help this program cannot read, never a reason to take the
 * store for damaged (LMDB damage would stop every writer); *foreign is
 * set so that it is not overwritten. */
static int
pst_scope_get(pst_env *s, MDB_txn *txn, int *scope, int *foreign)
{
    MDB_val k = pst_scope_key, v;
    int rc = mdb_get(txn, s->meta, &k, &v);
    *scope = 0;
    *foreign = 0;
    if (rc == MDB_NOTFOUND)
        return 0;
    if (rc != 0)
        return rc;
    if (v.mv_size != 4) {
        *foreign = 1;
        return 0;
    }
    *scope = (int)pst_get32(v.mv_data);
    return 0;
}

static int
pst_scope_put(pst_env *s, MDB_txn *txn, void *arg, char *err, size_t errlen)
{
    (void)err;
    (void)errlen;
    int old, foreign, rc = pst_scope_get(s, txn, &old, &foreign);
    if (rc != 0)
        return rc;
    uint32_t u = (uint32_t)egdb_scope_union(old, *(const int *)arg);
    if (foreign || (int)u == old)
        return 0;
    uint8_t b[4];
    pst_put32(b, u);
    MDB_val k = pst_scope_key, v = {4, b};
    return mdb_put(txn, s->meta, &k, &v, 0);
}

int
pst_scope_note(pst_env *s, int scope, char *err, size_t errlen)
{
    int rc = pst_write_refused(s, err, errlen);
    if (rc != 0)
        return rc;
    return pst_write(s, pst_scope_put, &scope, err, errlen);
}

typedef struct pst_scope_op {
    pst_env *s;
    int scope;
} pst_scope_op;

static int
pst_scope_body(MDB_txn *txn, void *arg, char *err, size_t errlen)
{
    (void)err;
    (void)errlen;
    pst_scope_op *op = arg;
    int foreign;
    return pst_scope_get(op->s, txn, &op->scope, &foreign);
}

int
pst_scope(pst_env *s, int *scope, char *err, size_t errlen)
{
    *scope = 0;
    pst_scope_op op = {.s = s};
    int rc = pst_txn_read(s, pst_scope_body, &op, err, errlen);
    if (rc != 0 && !(rc >= PST_ENOSPC && rc <= PST_EIO)) /* the body's LMDB code */
        return pst_lmdb_fail(s, rc, "reading the databases' scope", err, errlen);
    if (rc != 0)
        return rc;
    *scope = op.scope;
    return 0;
}

const char *
pst_path(const pst_env *s)
{
    return s->path;
}

int
pst_lmdb_check(const char *dir, char *err, size_t errlen)
{
    char file[4200];
    snprintf(file, sizeof file, "%s/data.mdb", dir);
    return pst_check_header(dir, file, err, errlen);
}

/* pst_lmdb_walk's state: in memory the guard keeps across a jump, so that
 * the transaction can be aborted after one (pst_guarded). */
typedef struct lmdb_walk {
    MDB_env *env;
    MDB_txn *txn;
    MDB_cursor *cur;
    MDB_cursor *outer; /* the main table's cursor while a named table is read */
    char table[160];   /* the table being read, for the message */
    int lmdb_rc;       /* an LMDB error met on the way */
    uint64_t sum;      /* every byte read, so that none is skipped */
} lmdb_walk;

/* Reads every record of table dbi (one cursor pass over its pages). */
static int
walk_table(lmdb_walk *w, MDB_dbi dbi)
{
    int rc = mdb_cursor_open(w->txn, dbi, &w->cur);
    if (rc)
        return w->lmdb_rc = rc;
    MDB_val k, v;
    for (rc = mdb_cursor_get(w->cur, &k, &v, MDB_FIRST); !rc;
         rc = mdb_cursor_get(w->cur, &k, &v, MDB_NEXT))
        w->sum += XXH3_64bits(k.mv_data, k.mv_size) ^ XXH3_64bits(v.mv_data, v.mv_size);
    mdb_cursor_close(w->cur);
    w->cur = NULL;
    return rc == MDB_NOTFOUND ? 0 : (w->lmdb_rc = rc);
}

static int
walk_all(void *arg)
{
    lmdb_walk *w = arg;
    int rc = mdb_txn_begin(w->env, NULL, MDB_RDONLY, &w->txn);
    if (rc) {
        w->txn = NULL;
        return w->lmdb_rc = rc;
    }
    /* the free list (table 0) and the main table (1), which names the others */
    snprintf(w->table, sizeof w->table, "the free-page list");
    if ((rc = walk_table(w, 0)))
        return rc;
    snprintf(w->table, sizeof w->table, "the table of tables");
    if ((rc = walk_table(w, 1)))
        return rc;
    if ((rc = mdb_cursor_open(w->txn, 1, &w->cur)))
        return w->lmdb_rc = rc;
    MDB_val k, v;
    for (rc = mdb_cursor_get(w->cur, &k, &v, MDB_FIRST); !rc;
         rc = mdb_cursor_get(w->cur, &k, &v, MDB_NEXT)) {
        char name[128];
        if (k.mv_size == 0 || k.mv_size >= sizeof name || memchr(k.mv_data, 0, k.mv_size))
            continue; /* not a table name this project writes */
        memcpy(name, k.mv_data, k.mv_size);
        name[k.mv_size] = 0;
        MDB_dbi dbi;
        int o = mdb_dbi_open(w->txn, name, 0, &dbi);
        if (o == MDB_INCOMPATIBLE || o == MDB_NOTFOUND)
            continue; /* a plain record of the main table */
        if (o)
            return w->lmdb_rc = o;
        /* the main table's cursor stays open: walk this table with its own */
        w->outer = w->cur;
        w->cur = NULL;
        snprintf(w->table, sizeof w->table, "table '%s'", name);
        o = walk_table(w, dbi);
        w->cur = w->outer;
        w->outer = NULL;
        if (o)
            return o;
    }
    mdb_cursor_close(w->cur);
    w->cur = NULL;
    return rc == MDB_NOTFOUND ? 0 : (w->lmdb_rc = rc);
}

int
pst_lmdb_walk(MDB_env *env, const char *dir, char *err, size_t errlen)
{
    mdb_env_set_assert(env, pst_on_assert);
    lmdb_walk w = {.env = env};
    char msg[256] = "";
    int rc = pst_guarded(walk_all, &w, msg, sizeof msg);
    /* cursors of a read transaction are closed by hand, before its end */
    if (w.cur)
        mdb_cursor_close(w.cur);
    if (w.outer)
        mdb_cursor_close(w.outer);
    if (w.txn)
        mdb_txn_abort(w.txn);
    if (rc == PST_ASSERTED) {
        eng_errf(err, errlen, "%s/data.mdb: reading %s, %s", dir, w.table, msg);
        return PST_ECORRUPT;
    }
    if (rc == MDB_CORRUPTED || rc == MDB_PAGE_NOTFOUND || rc == MDB_INCOMPATIBLE ||
        rc == MDB_BAD_TXN) {
        eng_errf(err, errlen, "%s/data.mdb: reading %s, %s", dir, w.table, mdb_strerror(rc));
        return PST_ECORRUPT;
    }
    if (rc) {
        eng_errf(err, errlen, "%s/data.mdb: cannot read %s: %s", dir, w.table, mdb_strerror(rc));
        return PST_EIO;
    }
    return 0;
}

void
pst_guard_faults(void)
{
    pst_fault_install();
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
    case PST_ENOSPC:
        return "the disk is full";
    case PST_EREADONLY:
        return "the store is open read-only";
    default:
        return "unknown store error";
    }
}
