/*
 * cert.c - writing and checking proof certificates (cert.h; the format
 * is docs/certificate.md).
 *
 * Export does not walk the proof itself: it runs the independent checker
 * (check.c) over the store with a visitor, and writes each position the
 * moment the checker has found its proof complete. So a certificate holds
 * exactly what `proof check` accepted, in the checker's own order
 * (children before parents), and an invalid proof exports nothing.
 *
 * The body is deflated with zlib: Python's standard library reads it, so
 * the second checker needs nothing else, and at the measured sizes
 * (results/certificate.md) a stronger compressor would save little. The
 * database files are named by SHA-256 (nettle), which Python's hashlib
 * also computes; the files' own XXH3 checksums are not available there.
 *
 * The body is written to a temporary file first because the header must
 * list the database files the leaves rest on, which is known only at the
 * end of the walk; the final file is the header followed by that body,
 * renamed into place when whole.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <nettle/sha2.h>
#include <zlib.h>

#include "egdb/codec.h"
#include "egdb/index.h"
#include "prover/cert.h"
#include "prover/check.h"
#include "prover/posmap.h"

/* ---- constants ------------------------------------------------------ */

static const unsigned char cert_magic[7] = {'C', 'K', 'C', 'E', 'R', 'T', 0};

/* Record tags of the body (docs/certificate.md, "Body"). */
enum { TAG_SECTION = 'S', TAG_POS = 'P', TAG_LEAF = 'L', TAG_END = 'E' };

#define POS_BYTES 17   /* four u32 masks and the side to move */
#define ZBUF (1 << 16) /* deflate / file copy buffers */

/* Dimensions of the table of slices seen: counts 0..12, ranks -1..6. */
#define SL_DIM (13 * 13 * 13 * 13 * 8 * 8)

/* ---- types ---------------------------------------------------------- */

/* The body's deflate stream into a temporary file. */
typedef struct zwriter {
    FILE *f;
    z_stream z;
    int live; /* deflateInit done */
    unsigned char in[ZBUF], out[ZBUF];
    size_t n;     /* bytes waiting in `in` */
    uint64_t raw; /* bytes given to the stream */
    int failed;   /* a write failed */
} zwriter;

/* One goal of a certificate: X and whether the goal is a win. */
typedef struct goal {
    int x, win;
} goal;

typedef struct export_ctx {
    const egdb *db;
    int dbmax;
    goal goals[2];
    int ngoals;
    int cur; /* the section being written (-1: none yet) */
    pmap leaves;  /* the current section's leaves already written */
    pmap touched; /* canonical positions whose slices are noted */
    uint8_t *slices; /* SL_DIM flags: slices the leaves rest on */
    zwriter *zw;
    pcert_stats *st;
    int rc; /* first error inside the visitor */
    char *err;
    size_t errlen;
} export_ctx;

/*
 * The certificate in memory, for pcert_check. The C check reuses the
 * independent checker (check.c), which reads one store-like record per
 * position; a certificate has one record per position and section, so
 * the sections' records of a position are merged into one: in a section
 * (X, goal) a position with X to move raises lo to the goal's value and
 * supplies the win or draw move, a position with the other side to move
 * lowers hi to minus that value. A record of both sections of a draw
 * claim becomes DD with its draw move, exactly what a store would hold;
 * contradicting sections (lo > hi) are a verdict, not a record.
 */
typedef struct cert_mem {
    pmap map;            /* every position record, all sections */
    pst_record *rec;     /* merged records, by the map's index */
    uint8_t *secmask;    /* sections a position appeared in, by index */
    size_t cap, seccap;
    eng_pos *leaf;       /* database leaf records, all sections */
    int8_t (*claim)[2];  /* their claimed lo, hi */
    size_t nleaf, leafcap;
} cert_mem;

/* ---- little-endian helpers ------------------------------------------ */

static void
put32(unsigned char *b, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        b[i] = (unsigned char)(v >> (8 * i));
}

static void
put64(unsigned char *b, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        b[i] = (unsigned char)(v >> (8 * i));
}

static uint32_t
get32(const unsigned char *b)
{
    return (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
}

static uint64_t
get64(const unsigned char *b)
{
    return (uint64_t)get32(b) | (uint64_t)get32(b + 4) << 32;
}

/* A position as the format writes it: bm, wm, bk, wk, side to move. */
static void
put_pos(unsigned char *b, const eng_pos *p)
{
    put32(b, p->bm);
    put32(b + 4, p->wm);
    put32(b + 8, p->bk);
    put32(b + 12, p->wk);
    b[16] = (unsigned char)p->stm;
}

static void
get_pos(const unsigned char *b, eng_pos *p)
{
    p->bm = get32(b);
    p->wm = get32(b + 4);
    p->bk = get32(b + 8);
    p->wk = get32(b + 12);
    p->stm = b[16];
}

/* ---- the body writer -------------------------------------------------- */

static int
zw_flush(zwriter *w, int finish)
{
    w->z.next_in = w->in;
    w->z.avail_in = (uInt)w->n;
    int zr;
    do {
        w->z.next_out = w->out;
        w->z.avail_out = ZBUF;
        zr = deflate(&w->z, finish ? Z_FINISH : Z_NO_FLUSH);
        if (zr == Z_STREAM_ERROR) { /* never with a live stream; no endless loop either */
            w->failed = 1;
            break;
        }
        size_t have = ZBUF - w->z.avail_out;
        if (have && fwrite(w->out, 1, have, w->f) != have)
            w->failed = 1;
    } while (w->z.avail_out == 0 || (finish && zr != Z_STREAM_END));
    w->n = 0;
    return w->failed ? -1 : 0;
}

static int
zw_put(zwriter *w, const unsigned char *b, size_t len)
{
    w->raw += len;
    if (w->n + len > ZBUF && zw_flush(w, 0) != 0)
        return -1;
    memcpy(w->in + w->n, b, len);
    w->n += len;
    return 0;
}

/* ---- goals ------------------------------------------------------------ */

/* The strongest goals a bound implies for the root's side to move s:
 * at most one per side (cert.h, WHAT IS EXPORTED), the side to move's
 * first. Writer and checker both derive the sections from the claim, so
 * a header whose claim and sections disagree is refused. */
static int
claim_goals(eng_bound b, int s, goal g[2])
{
    int lo = eng_bound_lo(b), hi = eng_bound_hi(b), n = 0;
    if (lo >= ENG_DRAW)
        g[n].x = s, g[n++].win = lo == ENG_WIN;
    if (hi <= ENG_DRAW)
        g[n].x = !s, g[n++].win = hi == ENG_LOSS;
    return n;
}

/* ---- database files the leaves rest on -------------------------------- */

static size_t
slice_slot(const egix_slice *s)
{
    return ((((((size_t)s->nbk * 13 + (size_t)s->nwk) * 13 + (size_t)s->nbm) * 13 +
              (size_t)s->nwm) * 8 + (size_t)(s->rb + 1)) * 8) + (size_t)(s->rw + 1);
}

static egix_slice
slot_slice(size_t k)
{
    egix_slice s;
    s.rw = (int8_t)(k % 8) - 1, k /= 8;
    s.rb = (int8_t)(k % 8) - 1, k /= 8;
    s.nwm = (int8_t)(k % 13), k /= 13;
    s.nbm = (int8_t)(k % 13), k /= 13;
    s.nwk = (int8_t)(k % 13), k /= 13;
    s.nbk = (int8_t)k;
    return s;
}

/*
 * Notes the slices a probe of p may read: p's own (as Black to move, the
 * way files store it), and when a compressed file drops p's value (a
 * capture, or a threatened capture with EGCD_FLAG_THREATS, the widest
 * rule), those of its children, recursively. The recursion ends for the
 * reasons egcd_dropped gives; each canonical position is expanded once.
 */
static int
note_slices(export_ctx *c, const eng_pos *p)
{
    eng_pos q = eng_canonical(p);
    if ((q.bm | q.bk) == 0)
        return 0; /* no black piece: a loss by the rules, no file read */
    int added = 0;
    if (pmap_add(&c->touched, &q, &added) < 0)
        return PST_ENOMEM;
    if (!added)
        return 0;
    egix_slice s;
    if (egix_slice_of(&q, &s) != 0)
        return PST_EINVAL;
    c->slices[slice_slot(&s)] = 1;
    if (egcd_dropped(&q, EGCD_FLAG_THREATS) == EGCD_KEPT)
        return 0;
    eng_movelist l;
    int n = eng_generate(&q, &l, ENG_DUPS_MERGE);
    for (int k = 0; k < n; k++) {
        eng_pos ch;
        eng_make(&q, &l.m[k], &ch);
        int rc = note_slices(c, &ch);
        if (rc)
            return rc;
    }
    return 0;
}

/* SHA-256 and size of a file; 0, or -1 with errno set. SHA-256 rather
 * than the XXH3 the database files use inside: a digest that names a file
 * must resist a forger, and every language's standard library has it. */
static int
file_digest(const char *path, unsigned char md[SHA256_DIGEST_SIZE], uint64_t *size)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return -1;
    struct sha256_ctx h;
    sha256_init(&h);
    unsigned char buf[ZBUF];
    size_t n;
    *size = 0;
    while ((n = fread(buf, 1, sizeof buf, f)) > 0) {
        sha256_update(&h, n, buf);
        *size += n;
    }
    int bad = ferror(f);
    fclose(f);
    if (bad) {
        errno = EIO;
        return -1;
    }
    sha256_digest(&h, SHA256_DIGEST_SIZE, md);
    return 0;
}

/* ---- export: the visitor ------------------------------------------------ */

static int
write_section(export_ctx *c, int k)
{
    unsigned char b[3] = {TAG_SECTION, (unsigned char)c->goals[k].x,
                          (unsigned char)c->goals[k].win};
    c->cur = k;
    pmap_clear(&c->leaves);
    c->st->sections++;
    return zw_put(c->zw, b, sizeof b);
}

/* Writes the leaf record of child ch if it is a database leaf not yet
 * written in this section. */
static int
maybe_leaf(export_ctx *c, const eng_pos *ch)
{
    if (!c->db || eng_pieces(ch) > c->dbmax || eng_count_moves(ch, ENG_DUPS_MERGE) == 0)
        return 0;
    int added = 0;
    if (pmap_add(&c->leaves, ch, &added) < 0)
        return PST_ENOMEM;
    if (!added)
        return 0;
    int v = egdb_probe(c->db, ch);
    if (v < 0) {
        char fen[ENG_FEN_MAX];
        eng_format_fen(ch, fen, sizeof fen);
        eng_errf(c->err, c->errlen, "database probe of %s failed: %s", fen, egdb_strerror(v));
        return v == EGDB_ECORRUPT ? PST_ECORRUPT : v == EGDB_ENOMEM ? PST_ENOMEM : PST_EIO;
    }
    int o = egdb_outcome(v);
    unsigned char b[1 + POS_BYTES + 2];
    b[0] = TAG_LEAF;
    put_pos(b + 1, ch);
    b[1 + POS_BYTES] = (unsigned char)(int8_t)o;
    b[2 + POS_BYTES] = (unsigned char)(int8_t)o;
    c->st->leaves++;
    int rc = note_slices(c, ch);
    if (rc)
        return rc;
    return zw_put(c->zw, b, sizeof b) ? PST_EIO : 0;
}

/*
 * The visitor (check.h, SOURCES AND VISITORS): the checker calls it once
 * per position and goal, when every child of the position is proven, so
 * the position's record can be written at once and the certificate needs
 * no second walk. Children come before parents; a leaf is written just
 * before the first position that reaches it, which is what lets a checker
 * that reads in file order name the leaf itself when its claim is wrong.
 * The checker also walks goals weaker than the claim's (a win record's
 * "at least a draw" first): those calls are ignored, since the stronger
 * section implies them.
 */
static int
on_done(void *ctx, const eng_pos *p, int x, int win, uint64_t effort, const pst_move *used,
        int longest)
{
    export_ctx *c = ctx;
    (void)effort;
    int k = -1;
    for (int i = 0; i < c->ngoals; i++)
        if (c->goals[i].x == x && c->goals[i].win == win)
            k = i;
    if (k < 0)
        return 0; /* a weaker goal the check also walks (a win's draw) */
    if (k != c->cur && write_section(c, k) != 0)
        goto io;

    /* The children: the kept move's, or every reply's. */
    eng_movelist l;
    int n;
    if (used->from != PST_NOMOVE) {
        if (pst_move_find(p, used, &l.m[0]) != 0) {
            c->rc = PST_EINVAL; /* the checker has just found it legal */
            return 1;
        }
        n = 1;
    } else {
        n = eng_generate(p, &l, ENG_DUPS_MERGE);
    }
    for (int i = 0; i < n; i++) {
        eng_pos ch;
        eng_make(p, &l.m[i], &ch);
        int rc = maybe_leaf(c, &ch);
        if (rc) {
            c->rc = rc;
            return 1;
        }
    }

    /* 'P', the position, the kept move where X moves (squares written
     * 1-based, as people number them), a win's length: the plies of the
     * longest line below, which falls along every move inside the proof
     * and so shows it acyclic to a checker that does not search. */
    unsigned char b[1 + POS_BYTES + 6 + 4];
    size_t len = 1 + POS_BYTES;
    b[0] = TAG_POS;
    put_pos(b + 1, p);
    if (p->stm == x) {
        b[len] = (unsigned char)(used->from + 1);
        b[len + 1] = (unsigned char)(used->to + 1);
        put32(b + len + 2, used->captured);
        len += 6;
    }
    if (win) {
        put32(b + len, (uint32_t)longest);
        len += 4;
    }
    c->st->positions++;
    if (zw_put(c->zw, b, len) == 0)
        return 0;
io:
    c->rc = PST_EIO;
    eng_errf(c->err, c->errlen, "writing the certificate's body: %s", strerror(errno));
    return 1;
}

/* ---- export --------------------------------------------------------------- */

/* The store as a checker source, as pchk_check uses it: nothing trusted. */
static int
store_get(void *ctx, const eng_pos *p, pst_record *o)
{
    return pst_get(ctx, p, o);
}

/* The header: fixed part, then the file list (docs/certificate.md). */
static int
write_header(FILE *f, const export_ctx *c, const char *dbdir, const eng_pos *root, eng_bound b,
             uint64_t *nfiles, char *err, size_t errlen)
{
    uint64_t n = 0;
    for (size_t k = 0; k < SL_DIM; k++)
        n += c->slices[k];
    unsigned char h[PCERT_HEADER_FIXED];
    memset(h, 0, sizeof h);
    memcpy(h, cert_magic, sizeof cert_magic);
    h[7] = PCERT_VERSION;
    h[8] = 1; /* English checkers, the README's rules */
    h[9] = 1; /* capture routes with the same squares and captures are one move */
    h[10] = (unsigned char)(int8_t)eng_bound_lo(b);
    h[11] = (unsigned char)(int8_t)eng_bound_hi(b);
    h[12] = (unsigned char)c->dbmax;
    h[13] = 1; /* body: zlib */
    h[14] = (unsigned char)c->ngoals;
    put_pos(h + 16, root);
    put32(h + 36, (uint32_t)n);
    if (fwrite(h, 1, sizeof h, f) != sizeof h)
        goto io;
    /* Name order: the loops run over the name's characters in order. */
    for (size_t k = 0; k < SL_DIM; k++) {
        if (!c->slices[k])
            continue;
        egix_slice s = slot_slice(k);
        char name[EGIX_NAME_MAX], path[4200];
        egix_slice_name(&s, name, sizeof name);
        snprintf(path, sizeof path, "%s/%s.cwl", dbdir, name);
        unsigned char e[PCERT_FILE_ENTRY];
        uint64_t size;
        memset(e, 0, sizeof e);
        memcpy(e, name, 7);
        if (file_digest(path, e + 16, &size) != 0) {
            eng_errf(err, errlen,
                     "%s: %s (a certificate names compressed database files only: "
                     "`checkers egdb compress` writes them)",
                     path, strerror(errno));
            return PST_EIO;
        }
        put64(e + 8, size);
        if (fwrite(e, 1, sizeof e, f) != sizeof e)
            goto io;
    }
    *nfiles = n;
    return 0;
io:
    eng_errf(err, errlen, "writing the certificate's header: %s", strerror(errno));
    return PST_EIO;
}

int
pcert_export(pst_env *st, const egdb *db, const char *dbdir, const eng_pos *root,
             const char *path, pcert_stats *out, char *err, size_t errlen)
{
    char body[4300], tmp[4300];
    int rc = 0;
    FILE *fo = NULL;
    zwriter *zw = calloc(1, sizeof *zw);
    export_ctx c;
    memset(&c, 0, sizeof c);
    memset(out, 0, sizeof *out);
    snprintf(body, sizeof body, "%s.body.tmp", path);
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    c.slices = calloc(SL_DIM, 1);
    if (!zw || !c.slices) {
        rc = PST_ENOMEM;
        goto done;
    }
    c.db = db;
    c.dbmax = db ? egdb_max_pieces(db) : 0;
    c.cur = -1;
    c.zw = zw;
    c.st = out;
    c.err = err;
    c.errlen = errlen;

    /* The claim: the root's record, or the database's value of a root
     * it holds (pchk_db_root). */
    pst_record r;
    int root_leaf = 0;
    rc = pst_get(st, root, &r);
    if (db && eng_pieces(root) <= c.dbmax && eng_count_moves(root, ENG_DUPS_MERGE) > 0) {
        /* the databases cover the root: its value is theirs, whatever
         * the store says (as in the check, check.h) */
        int v = egdb_probe(db, root);
        if (v < 0) {
            eng_errf(err, errlen, "database probe of the root failed: %s", egdb_strerror(v));
            rc = v == EGDB_ECORRUPT ? PST_ECORRUPT : PST_EIO;
            goto done;
        }
        r.bound = eng_bound_exact(egdb_outcome(v));
        root_leaf = 1;
    } else if (rc == PST_ENOTFOUND) {
        eng_errf(err, errlen, "nothing stored for the root: no proof to export");
        rc = PST_EINVAL;
        goto done;
    } else if (rc != 0) {
        eng_errf(err, errlen, "the root's record cannot be read: %s", pst_strerror(rc));
        goto done;
    }
    out->bound = r.bound;
    out->db_pieces = c.dbmax;
    c.ngoals = claim_goals(r.bound, root->stm, c.goals);
    if (c.ngoals == 0) {
        eng_errf(err, errlen, "the root's bound %s claims nothing", eng_bound_name(r.bound));
        rc = PST_EINVAL;
        goto done;
    }

    zw->f = fopen(body, "wb");
    if (!zw->f || deflateInit(&zw->z, Z_DEFAULT_COMPRESSION) != Z_OK) {
        eng_errf(err, errlen, "%s: %s", body, strerror(errno));
        rc = PST_EIO;
        goto done;
    }
    zw->live = 1;

    if (root_leaf) {
        /* Each section is the root's leaf record alone. */
        for (int k = 0; k < c.ngoals && rc == 0; k++) {
            if (write_section(&c, k) != 0 || (rc = maybe_leaf(&c, root)) != 0)
                rc = rc ? rc : PST_EIO;
        }
        if (rc)
            goto done;
    } else {
        pchk_result res;
        pchk_visitor vis = {on_done, &c};
        /* pchk_check's own source, the store, with our visitor */
        pchk_source ssrc = {store_get, st};
        rc = pchk_check_with(&ssrc, &vis, db, root, &res, err, errlen);
        if (c.rc) {
            rc = c.rc;
            goto done;
        }
        if (rc)
            goto done;
        if (res.status != PCHK_VALID) {
            eng_errf(err, errlen, "the stored proof is not valid, nothing exported: at %s: %s",
                     res.where, res.why);
            out->invalid = 1;
            rc = PST_EINVAL;
            goto done;
        }
    }
    unsigned char e[17] = {TAG_END};
    put64(e + 1, out->positions);
    put64(e + 9, out->leaves);
    if (zw_put(zw, e, sizeof e) != 0 || zw_flush(zw, 1) != 0 || fflush(zw->f) != 0) {
        eng_errf(err, errlen, "%s: %s", body, strerror(errno));
        rc = PST_EIO;
        goto done;
    }
    out->body_raw = zw->raw;

    /* The file: header, then the body copied after it. */
    fo = fopen(tmp, "wb");
    if (!fo) {
        eng_errf(err, errlen, "%s: %s", tmp, strerror(errno));
        rc = PST_EIO;
        goto done;
    }
    if ((rc = write_header(fo, &c, dbdir ? dbdir : ".", root, r.bound, &out->files, err,
                           errlen)) != 0)
        goto done;
    rewind(zw->f);
    fclose(zw->f);
    zw->f = fopen(body, "rb");
    size_t n;
    while (zw->f && (n = fread(zw->in, 1, ZBUF, zw->f)) > 0)
        if (fwrite(zw->in, 1, n, fo) != n)
            break;
    if (!zw->f || ferror(zw->f) || fflush(fo) != 0 || ferror(fo)) {
        eng_errf(err, errlen, "%s: %s", tmp, strerror(errno));
        rc = PST_EIO;
        goto done;
    }
    out->bytes = (uint64_t)ftell(fo);
    if (fclose(fo) != 0) {
        fo = NULL;
        eng_errf(err, errlen, "%s: %s", tmp, strerror(errno));
        rc = PST_EIO;
        goto done;
    }
    fo = NULL;
    if (rename(tmp, path) != 0) {
        eng_errf(err, errlen, "renaming %s to %s: %s", tmp, path, strerror(errno));
        rc = PST_EIO;
    }

done:
    if (fo)
        fclose(fo);
    if (zw) {
        if (zw->live)
            deflateEnd(&zw->z);
        if (zw->f)
            fclose(zw->f);
    }
    remove(body);
    if (rc)
        remove(tmp);
    free(zw);
    free(c.slices);
    pmap_free(&c.leaves);
    pmap_free(&c.touched);
    return rc;
}

/* ---- check ------------------------------------------------------------ */

/* Records a verdict of invalid; returns 1 for the caller to pass up.
 * where is NULL for what concerns the file rather than a position (the
 * header, the database files, the structure of the body): "-" then. */
static int
bad(pcert_result *out, const eng_pos *where, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int
bad(pcert_result *out, const eng_pos *where, const char *fmt, ...)
{
    va_list ap;
    out->status = PCERT_INVALID;
    if (!where || eng_format_fen(where, out->where, sizeof out->where) != 0)
        snprintf(out->where, sizeof out->where, "-");
    va_start(ap, fmt);
    vsnprintf(out->why, sizeof out->why, fmt, ap);
    va_end(ap);
    return 1;
}

/* The certificate as a checker source: the merged record of p. */
static int
mem_get(void *ctx, const eng_pos *p, pst_record *o)
{
    const cert_mem *m = ctx;
    long k = pmap_find(&m->map, p);
    if (k < 0)
        return PST_ENOTFOUND;
    *o = m->rec[k];
    return 0;
}

/* Reads a whole file; NULL with errno set. */
static unsigned char *
read_all(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    size_t cap = 1 << 20, n = 0, r;
    unsigned char *b = malloc(cap);
    while (b && (r = fread(b + n, 1, cap - n, f)) > 0) {
        n += r;
        if (n == cap) {
            unsigned char *nb = realloc(b, cap * 2);
            if (!nb) {
                free(b);
                b = NULL;
                break;
            }
            b = nb;
            cap *= 2;
        }
    }
    if (b && ferror(f)) {
        free(b);
        b = NULL;
        errno = EIO;
    }
    fclose(f);
    *len = n;
    return b;
}

/* Inflates the body; 0, 1 (truncated or damaged: *why says), -1 memory. */
static int
inflate_all(const unsigned char *src, size_t len, unsigned char **out, size_t *olen,
            const char **why)
{
    z_stream z;
    memset(&z, 0, sizeof z);
    if (inflateInit(&z) != Z_OK)
        return -1;
    size_t cap = len * 4 + 4096, n = 0;
    unsigned char *b = malloc(cap);
    z.next_in = (unsigned char *)src;
    z.avail_in = (uInt)len;
    int zr = Z_OK;
    while (b) {
        z.next_out = b + n;
        z.avail_out = (uInt)(cap - n);
        zr = inflate(&z, Z_NO_FLUSH);
        n = cap - z.avail_out;
        if (zr == Z_STREAM_END || (zr != Z_OK && zr != Z_BUF_ERROR))
            break;
        if (z.avail_out != 0) /* input used up before the stream's end */
            break;
        unsigned char *nb = realloc(b, cap * 2);
        if (!nb) {
            free(b);
            b = NULL;
            break;
        }
        b = nb;
        cap *= 2;
    }
    size_t rest = z.avail_in;
    inflateEnd(&z);
    if (!b)
        return -1;
    *out = b;
    *olen = n;
    if (zr == Z_STREAM_END && rest == 0)
        return 0;
    *why = zr == Z_STREAM_END ? "bytes after the end of the compressed body"
           : zr == Z_DATA_ERROR ? "the compressed body is damaged (zlib data error)"
                                : "the file is truncated (the compressed body ends early)";
    return 1;
}

static void
mem_free(cert_mem *m)
{
    pmap_free(&m->map);
    free(m->rec);
    free(m->secmask);
    free(m->leaf);
    free(m->claim);
}

/*
 * Reads the records of the body into m. Structure errors (a record cut
 * short, an unknown tag, a duplicate, a move at the defender's position,
 * contradicting claims) are verdicts. RETURN 0, 1 (invalid) or -1.
 */
static int
read_body(const unsigned char *b, size_t len, const goal *goals, int ngoals, cert_mem *m,
          pcert_result *out)
{
    /* A record's length depends on its tag, then (for 'P') on whether X
     * is to move and whether the section is a win: every length check
     * comes before the bytes are read, so a truncated or forged body is
     * a verdict and never a read past the buffer. */
    size_t at = 0;
    int sec = -1, nsec = 0, ended = 0;
    while (at < len && !ended) {
        int tag = b[at];
        size_t need = tag == TAG_SECTION ? 3 : tag == TAG_LEAF ? 1 + POS_BYTES + 2
                      : tag == TAG_END   ? 17
                      : tag == TAG_POS   ? 1 + POS_BYTES
                                         : 0;
        if (need == 0)
            return bad(out, NULL, "body byte %zu: unknown record tag 0x%02x", at, tag);
        if (at + need > len)
            goto cut;
        if (tag == TAG_SECTION) {
            if (nsec >= ngoals || b[at + 1] != goals[nsec].x || b[at + 2] != goals[nsec].win)
                return bad(out, NULL,
                           "body byte %zu: section %d is not the goal the header's claim "
                           "implies",
                           at, nsec + 1);
            sec = nsec++;
            at += 3;
            continue;
        }
        if (tag == TAG_END) {
            if (get64(b + at + 1) != out->positions || get64(b + at + 9) != out->leaves)
                return bad(out, NULL, "end record: counts do not match the records read");
            at += 17;
            ended = 1;
            continue;
        }
        if (sec < 0)
            return bad(out, NULL, "body byte %zu: a record before the first section", at);
        eng_pos p;
        get_pos(b + at + 1, &p);
        char msg[160];
        if (eng_validate(&p, msg, sizeof msg) != 0)
            return bad(out, NULL, "body byte %zu: not a position: %s", at, msg);
        const goal *g = &goals[sec];
        if (tag == TAG_LEAF) {
            int lo = (int8_t)b[at + 1 + POS_BYTES], hi = (int8_t)b[at + 2 + POS_BYTES];
            if (lo < -1 || hi > 1 || lo > hi)
                return bad(out, &p, "leaf record with the bound %d..%d", lo, hi);
            if (pmap_room((void **)&m->leaf, &m->leafcap, m->nleaf, sizeof *m->leaf) ||
                !(m->claim = realloc(m->claim, m->leafcap * sizeof *m->claim)))
                return -1;
            m->leaf[m->nleaf] = p;
            m->claim[m->nleaf][0] = (int8_t)lo;
            m->claim[m->nleaf][1] = (int8_t)hi;
            m->nleaf++;
            out->leaves++;
            at += need;
            continue;
        }
        /* a position record */
        size_t rl = need + (p.stm == g->x ? 6 : 0) + (g->win ? 4 : 0);
        if (at + rl > len)
            goto cut;
        int added = 0;
        long k = pmap_add(&m->map, &p, &added);
        if (k < 0 || pmap_room((void **)&m->rec, &m->cap, (size_t)k, sizeof *m->rec) ||
            pmap_room((void **)&m->secmask, &m->seccap, (size_t)k, 1))
            return -1;
        pst_record *r = &m->rec[k];
        if (added) {
            memset(r, 0, sizeof *r);
            r->win.from = r->draw.from = PST_NOMOVE;
            r->bound = eng_bound_make(ENG_LOSS, ENG_WIN);
            m->secmask[k] = 0;
        }
        if (m->secmask[k] & (1u << sec))
            return bad(out, &p, "the position appears twice in section %d", sec + 1);
        m->secmask[k] |= (uint8_t)(1u << sec);
        int lo = eng_bound_lo(r->bound), hi = eng_bound_hi(r->bound);
        int v = g->win ? ENG_WIN : ENG_DRAW;
        if (p.stm == g->x) {
            const unsigned char *mv = b + at + need;
            pst_move pm = {(uint8_t)(mv[0] - 1), (uint8_t)(mv[1] - 1), get32(mv + 2)};
            if (mv[0] < 1 || mv[0] > 32 || mv[1] < 1 || mv[1] > 32)
                return bad(out, &p, "kept move with square %d or %d out of 1..32", mv[0],
                           mv[1]);
            if (g->win)
                r->win = pm;
            else
                r->draw = pm;
            lo = lo > v ? lo : v;
        } else {
            hi = hi < -v ? hi : -v;
        }
        if (lo > hi)
            return bad(out, &p, "the sections claim contradicting values here");
        r->bound = eng_bound_make(lo, hi);
        out->positions++;
        at += rl;
    }
    if (!ended)
        goto cut;
    if (at != len)
        return bad(out, NULL, "%zu bytes after the end record", len - at);
    if (nsec != ngoals)
        return bad(out, NULL, "the body has %d sections, the claim implies %d", nsec, ngoals);
    return 0;
cut:
    return bad(out, NULL, "the file is truncated (the body stops inside a record)");
}

int
pcert_check(const char *path, const char *dbdir, size_t cache_bytes, eng_pos *root,
            pcert_result *out, char *err, size_t errlen)
{
    size_t len = 0, blen = 0;
    unsigned char *f = NULL, *body = NULL;
    egdb *db = NULL;
    cert_mem m;
    int rc = 0;
    memset(&m, 0, sizeof m);
    memset(out, 0, sizeof *out);
    memset(root, 0, sizeof *root);
    out->status = PCERT_VALID;
    snprintf(out->where, sizeof out->where, "-");

    if (!(f = read_all(path, &len))) {
        eng_errf(err, errlen, "%s: %s", path, strerror(errno));
        return errno == ENOMEM ? PST_ENOMEM : PST_EIO;
    }
    /* The header (docs/certificate.md, "Header"). The version is checked
     * before anything else that could differ between versions, so that a
     * certificate of another version is named as such, not as damage. */
    if (len < 8 || memcmp(f, cert_magic, 7) != 0) {
        bad(out, NULL, "not a certificate (bad magic in bytes 0-6)");
        goto done;
    }
    if (f[7] != PCERT_VERSION) {
        bad(out, NULL, "format version %d; this checker reads version %d", f[7], PCERT_VERSION);
        goto done;
    }
    if (len < PCERT_HEADER_FIXED) {
        bad(out, NULL, "the file is truncated (inside the header)");
        goto done;
    }
    get_pos(f + 16, root);
    char msg[160];
    int lo = (int8_t)f[10], hi = (int8_t)f[11], pieces = f[12];
    if (f[8] != 1 || f[9] != 1) {
        bad(out, NULL, "rules %d, route rule %d: this checker knows rules 1, routes 1", f[8],
            f[9]);
        goto done;
    }
    if (f[13] != 1 || eng_validate(root, msg, sizeof msg) != 0 || lo < -1 || hi > 1 || lo > hi ||
        pieces > EGDB_MAX_PIECES || f[15] != 0) {
        bad(out, NULL, "malformed header (compression, root, claim or piece limit)");
        goto done;
    }
    out->bound = eng_bound_make(lo, hi);
    goal goals[2];
    int ngoals = claim_goals(out->bound, root->stm, goals);
    if (ngoals == 0 || f[14] != ngoals) {
        bad(out, root, "the claim %s implies %d sections, the header says %d",
            eng_bound_name(out->bound), ngoals, f[14]);
        goto done;
    }
    uint32_t nfiles = get32(f + 36);
    size_t hend = PCERT_HEADER_FIXED + (size_t)nfiles * PCERT_FILE_ENTRY;
    if (nfiles > 100000 || hend > len) {
        bad(out, NULL, "the file is truncated (inside the list of database files)");
        goto done;
    }
    /* Every listed file, whole, before any probe: the digests tie the
     * certificate to the files the prover used, and a file that cannot
     * be read is no verdict (exit 2), unlike one that differs (invalid). */
    for (uint32_t i = 0; i < nfiles; i++) {
        const unsigned char *e = f + PCERT_HEADER_FIXED + (size_t)i * PCERT_FILE_ENTRY;
        char name[8], fp[4200];
        egix_slice s;
        memcpy(name, e, 7);
        name[7] = 0;
        if (egix_slice_parse(name, &s) != 0 || e[7] != 0) {
            bad(out, NULL, "database file entry %u: '%.7s' is not a slice name", i, name);
            goto done;
        }
        unsigned char md[SHA256_DIGEST_SIZE];
        uint64_t size;
        snprintf(fp, sizeof fp, "%s/%s.cwl", dbdir ? dbdir : ".", name);
        if (file_digest(fp, md, &size) != 0) { /* no verdict without the files */
            eng_errf(err, errlen, "database file %s: %s", fp, strerror(errno));
            rc = PST_EIO;
            goto done;
        }
        if (size != get64(e + 8) || memcmp(md, e + 16, sizeof md) != 0) {
            bad(out, NULL,
                "database file %s.cwl: its SHA-256 does not match the header's digest (not "
                "the file the certificate was made with)",
                name);
            goto done;
        }
    }
    const char *why = NULL;
    int ir = inflate_all(f + hend, len - hend, &body, &blen, &why);
    if (ir < 0) {
        rc = PST_ENOMEM;
        goto done;
    }
    if (ir > 0) {
        bad(out, NULL, "%s", why);
        goto done;
    }
    if ((ir = read_body(body, blen, goals, ngoals, &m, out)) != 0) {
        rc = ir < 0 ? PST_ENOMEM : 0;
        goto done;
    }

    if (pieces > 0) {
        rc = egdb_open(dbdir ? dbdir : ".", pieces, cache_bytes, &db, err, errlen);
        if (rc) {
            rc = rc == EGDB_ECORRUPT ? PST_ECORRUPT : rc == EGDB_ENOMEM ? PST_ENOMEM : PST_EIO;
            goto done;
        }
    }
    /* The proof: the independent checker over the certificate's records.
     * It walks from the root, so records no line reaches are not read
     * (the Python checker checks them too; docs/certificate.md). Its
     * database leaves come from the databases, not from the claims: the
     * claims are compared with them after the walk, so that a wrong
     * claim is refused even where the walk would not need it. */
    pchk_result res;
    pchk_source src = {mem_get, &m};
    rc = pchk_check_with(&src, NULL, db, root, &res, err, errlen);
    if (rc)
        goto done;
    if (res.status == PCHK_NOTHING && eng_count_moves(root, ENG_DUPS_MERGE) == 0) {
        /* a root without a move: lost by the rules, no record needed */
        res.status = PCHK_VALID;
        res.bound = eng_bound_exact(ENG_LOSS);
    }
    if (res.status == PCHK_NOTHING && !pchk_db_root(db, root, &res)) {
        bad(out, root, "the root is neither a position record nor a database leaf");
        goto done;
    }
    if (res.status == PCHK_INVALID) {
        out->status = PCERT_INVALID;
        snprintf(out->where, sizeof out->where, "%s", res.where);
        snprintf(out->why, sizeof out->why, "%s", res.why);
        goto done;
    }
    int rlo = eng_bound_lo(res.bound), rhi = eng_bound_hi(res.bound);
    if (rlo < lo || rhi > hi) {
        bad(out, root, "the records prove %s, not the claimed %s", eng_bound_name(res.bound),
            eng_bound_name(out->bound));
        goto done;
    }
    /* Every database leaf's claim against the database. */
    for (size_t i = 0; i < m.nleaf; i++) {
        const eng_pos *p = &m.leaf[i];
        if (!db || eng_pieces(p) > pieces) {
            bad(out, p, "a database leaf with more pieces than the header's limit %d", pieces);
            goto done;
        }
        int v = egdb_probe(db, p);
        if (v < 0) {
            eng_errf(err, errlen, "database probe failed: %s", egdb_strerror(v));
            rc = v == EGDB_ECORRUPT ? PST_ECORRUPT : PST_EIO;
            goto done;
        }
        int o = egdb_outcome(v);
        if (o < m.claim[i][0] || o > m.claim[i][1]) {
            bad(out, p, "database leaf claims %s, the database says %s",
                eng_bound_name(eng_bound_make(m.claim[i][0], m.claim[i][1])),
                eng_bound_name(eng_bound_exact(o)));
            goto done;
        }
    }

done:
    egdb_close(db);
    mem_free(&m);
    free(body);
    free(f);
    return rc;
}
