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
 * renamed into place when whole. The same holds for the scope the header
 * names (the splits some leaf lies in, whether a partial leaf was
 * written), and so for the format version (cert.h, SCOPES AND FORMATS).
 *
 * The check keeps the certificate's own leaves apart from the folder's
 * files: the walk sees the complete databases of the header's scope and
 * the 'B' records' claims, never the partial files directly, and each
 * claim is compared with the one listed .pwl file it names afterwards.
 * Opening the databases with the partial flag would let the walk take a
 * bound from any .pwl file of the folder, listed or not, and so accept a
 * certificate the Python checker (which reads listed files only) refuses.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <nettle/sha2.h>
#include <zlib.h>

#include "egdb/codec.h"
#include "egdb/index.h"
#include "egdb/partial.h"
#include "prover/cert.h"
#include "prover/check.h"
#include "prover/leaf.h"
#include "prover/posmap.h"

/* ---- constants ------------------------------------------------------ */

static const unsigned char cert_magic[7] = {'C', 'K', 'C', 'E', 'R', 'T', 0};

/* Record tags of the body (docs/certificate.md, "Body"): 'B', a leaf of
 * a partial database, exists from format 2 on. */
enum { TAG_SECTION = 'S', TAG_POS = 'P', TAG_LEAF = 'L', TAG_BOUND = 'B', TAG_END = 'E' };

/* The kind of a database file in the header's list (format 2: the byte
 * after the slice name; format 1 has only compressed files, byte 0). */
enum { FILE_CWL = 0, FILE_PWL = 1 };

/* Header byte 33, format 2: the scope's flags. */
#define SCOPE_FLAG_PARTIAL 1

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
    int scope;            /* egdb_scope(db): what the leaves may come from */
    unsigned used_splits; /* splits of dbmax + 1 pieces some leaf lies in */
    eng_pos root;
    goal goals[2];
    int ngoals;
    int cur;          /* the section being written (-1: none yet) */
    pmap leaves;      /* the current section's leaves already written */
    pmap touched;     /* canonical positions whose slices are noted */
    uint8_t *slices;  /* SL_DIM flags: slices the leaves rest on (.cwl) */
    uint8_t *pslices; /* SL_DIM flags: partial slices 'B' leaves rest on (.pwl) */
    zwriter *zw;
    pcert_stats *st;
    int rc; /* first error inside the visitor */
    char *err;
    size_t errlen;
} export_ctx;

/* A leaf record as the check keeps it: the claim and the kind. */
typedef struct leaf_rec {
    int8_t lo, hi;
    uint8_t tag; /* TAG_LEAF or TAG_BOUND */
} leaf_rec;

/*
 * One section of the certificate in memory, for pcert_check. The C check
 * runs the independent checker (check.c) once per section, over that
 * section's records alone: a store-like record per position record (in
 * a section (X, goal) a position with X to move has lo = the goal's
 * value and the kept move, one with the other side to move hi = minus
 * it), and for a 'B' record a record of an admitted store whose bound is
 * the claim (check.h, SOURCES: the walk takes it as a leaf of that
 * value; the claim is compared with the .pwl file afterwards). One walk
 * per section rather than one over merged records keeps a position that
 * is a 'B' leaf in one section and a position record in the other apart.
 */
typedef struct sec_mem {
    pmap map;        /* the section's position records */
    pst_record *rec; /* their records, by the map's index */
    size_t cap;
    pmap lmap;      /* the section's leaf records ('L' and 'B') */
    leaf_rec *leaf; /* by lmap's index */
    eng_pos *lpos;  /* by lmap's index */
    size_t lcap, lpcap;
} sec_mem;

typedef struct cert_mem {
    sec_mem sec[2];
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

/* The slot of a slice in the table of slices seen: one mixed-radix
 * number, digit by digit. */
/* clang-format off */
static size_t
slice_slot(const egix_slice *s)
{
    return ((((((size_t)s->nbk * 13 + (size_t)s->nwk) * 13 + (size_t)s->nbm) * 13 +
              (size_t)s->nwm) * 8 + (size_t)(s->rb + 1)) * 8) + (size_t)(s->rw + 1);
}
/* clang-format on */

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

/*
 * Writes the leaf record of ch for the current section if the leaf rule
 * (prover/leaf.h, with the export's scope) makes it a database leaf there
 * and it is not written in this section yet: 'L' with the complete
 * databases' value, or 'B' with a partial bound that answers the
 * section's goal. A partial bound that leaves the goal open makes ch a
 * position of the proof (on_done writes it); one that answers no cannot
 * occur in a proof the checker accepted. *wrote (may be NULL) says
 * whether a record was written. RETURN 0 or a PST_E* code.
 */
static int
maybe_leaf(export_ctx *c, const eng_pos *ch, int *wrote)
{
    if (wrote)
        *wrote = 0;
    if (!c->db)
        return 0;
    pleaf lf;
    int v = pleaf_of(c->db, c->scope, ch, 0, &lf);
    if (v < 0) {
        char fen[ENG_FEN_MAX];
        eng_format_fen(ch, fen, sizeof fen);
        eng_errf(c->err, c->errlen, "database probe of %s failed: %s", fen, egdb_strerror(v));
        return v == EGDB_ECORRUPT ? PST_ECORRUPT : v == EGDB_ENOMEM ? PST_ENOMEM : PST_EIO;
    }
    if (lf.kind != PLEAF_DB && lf.kind != PLEAF_PARTIAL)
        return 0; /* a position to prove, or one without a move (no record) */
    const goal *g = &c->goals[c->cur];
    eng_question q = {g->x, g->win ? ENG_WIN : ENG_DRAW};
    if (lf.kind == PLEAF_PARTIAL && eng_question_answer(&q, ch->stm, lf.bound) <= 0)
        return 0;
    int added = 0;
    if (pmap_add(&c->leaves, ch, &added) < 0)
        return PST_ENOMEM;
    if (!added)
        return 0;
    unsigned char b[1 + POS_BYTES + 2];
    b[0] = lf.kind == PLEAF_DB ? TAG_LEAF : TAG_BOUND;
    put_pos(b + 1, ch);
    b[1 + POS_BYTES] = (unsigned char)(int8_t)eng_bound_lo(lf.bound);
    b[2 + POS_BYTES] = (unsigned char)(int8_t)eng_bound_hi(lf.bound);
    c->st->leaves++;
    if (lf.kind == PLEAF_DB) {
        /* a leaf of a split: the header names the split (bit a for "a
         * against n - a", a the larger side) */
        int nb = __builtin_popcount(ch->bm | ch->bk), nw = __builtin_popcount(ch->wm | ch->wk);
        if (nb + nw == c->dbmax + 1)
            c->used_splits |= 1u << (nb > nw ? nb : nw);
        int rc = note_slices(c, ch);
        if (rc)
            return rc;
    } else {
        /* A partial bound is one nibble of one file, the slice of the
         * position as Black to move (partial.h): no capture is resolved. */
        eng_pos k = eng_canonical(ch);
        egix_slice s;
        if (egix_slice_of(&k, &s) != 0)
            return PST_EINVAL;
        c->pslices[slice_slot(&s)] = 1;
        c->st->leaves_partial++;
    }
    if (wrote)
        *wrote = 1;
    return zw_put(c->zw, b, sizeof b) ? PST_EIO : 0;
}

/*
 * Opens section k (k == ngoals: none, the body's sections are complete),
 * first writing each section before it that the walk never entered: the
 * checker takes the root itself as a leaf for such a goal (a database
 * root, or a partial bound that answers the goal), so the section is the
 * root's leaf record alone. RETURN 0 or a PST_E* code (err says why).
 */
static int
open_section(export_ctx *c, int k)
{
    while (c->cur < k && c->cur + 1 < c->ngoals) {
        int j = c->cur + 1, wrote = 0;
        if (write_section(c, j) != 0) {
            eng_errf(c->err, c->errlen, "writing the certificate's body: %s", strerror(errno));
            return PST_EIO;
        }
        if (j == k)
            break;
        int rc = maybe_leaf(c, &c->root, &wrote);
        if (rc)
            return rc;
        if (!wrote) {
            eng_errf(c->err, c->errlen,
                     "section %d (%s %s) has no proof: the check never entered it and the root "
                     "is no database leaf for it",
                     j + 1, c->goals[j].x == ENG_BLACK ? "Black" : "White",
                     c->goals[j].win ? "wins" : "at least draws");
            return PST_EINVAL;
        }
    }
    return 0;
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
    if (k != c->cur) {
        int rc = open_section(c, k);
        if (rc) {
            c->rc = rc;
            return 1;
        }
    }

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
        int rc = maybe_leaf(c, &ch, NULL);
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

/* The scope the leaves written use: the complete count, the splits some
 * 'L' leaf lies in, the partial flag when some 'B' leaf was written. */
static int
used_scope(const export_ctx *c)
{
    return EGDB_SCOPE(c->dbmax, c->used_splits) | (c->st->leaves_partial ? EGDB_SCOPE_PARTIAL : 0);
}

/*
 * The header: fixed part, then the file list (docs/certificate.md). Format
 * 1 when the scope is complete piece counts only (every byte as earlier
 * versions wrote it), else format 2 with the scope in bytes 33-35 and the
 * partial files in the list, each after the compressed file of the same
 * slice if there is one (entries in increasing order of their 8 bytes).
 */
static int
write_header(FILE *f, const export_ctx *c, const char *dbdir, const eng_pos *root, eng_bound b,
             uint64_t *nfiles, char *err, size_t errlen)
{
    uint64_t n = 0;
    for (size_t k = 0; k < SL_DIM; k++)
        n += (uint64_t)c->slices[k] + c->pslices[k];
    int scope = used_scope(c);
    unsigned splits = EGDB_SCOPE_SPLITS(scope);
    int partial = (scope & EGDB_SCOPE_PARTIAL) != 0;
    unsigned char h[PCERT_HEADER_FIXED];
    memset(h, 0, sizeof h);
    memcpy(h, cert_magic, sizeof cert_magic);
    h[7] = splits || partial ? PCERT_VERSION : PCERT_VERSION_PLAIN;
    h[8] = 1; /* English checkers, the README's rules */
    h[9] = 1; /* capture routes with the same squares and captures are one move */
    h[10] = (unsigned char)(int8_t)eng_bound_lo(b);
    h[11] = (unsigned char)(int8_t)eng_bound_hi(b);
    h[12] = (unsigned char)c->dbmax;
    h[13] = 1; /* body: zlib */
    h[14] = (unsigned char)c->ngoals;
    put_pos(h + 16, root);
    h[33] = partial ? SCOPE_FLAG_PARTIAL : 0;
    h[34] = (unsigned char)(splits & 0xff);
    h[35] = (unsigned char)(splits >> 8);
    put32(h + 36, (uint32_t)n);
    c->st->version = h[7];
    c->st->scope = scope;
    if (fwrite(h, 1, sizeof h, f) != sizeof h)
        goto io;
    /* Name order: the loops run over the name's characters in order. */
    for (size_t k = 0; k < SL_DIM; k++) {
        for (int kind = FILE_CWL; kind <= FILE_PWL; kind++) {
            if (!(kind == FILE_CWL ? c->slices[k] : c->pslices[k]))
                continue;
            egix_slice s = slot_slice(k);
            char name[EGIX_NAME_MAX], path[4200];
            egix_slice_name(&s, name, sizeof name);
            snprintf(path, sizeof path, "%s/%s.%s", dbdir, name, kind == FILE_CWL ? "cwl" : "pwl");
            unsigned char e[PCERT_FILE_ENTRY];
            uint64_t size;
            memset(e, 0, sizeof e);
            memcpy(e, name, 7);
            e[7] = (unsigned char)kind;
            if (file_digest(path, e + 16, &size) != 0) {
                eng_errf(err, errlen, "%s: %s%s", path, strerror(errno),
                         kind == FILE_CWL ? " (a certificate names compressed database files "
                                            "only: `checkers egdb compress` writes them)"
                                          : "");
                return PST_EIO;
            }
            put64(e + 8, size);
            if (fwrite(e, 1, sizeof e, f) != sizeof e)
                goto io;
        }
    }
    *nfiles = n;
    return 0;
io:
    eng_errf(err, errlen, "writing the certificate's header: %s", strerror(errno));
    return PST_EIO;
}

int
pcert_export(pst_env *st, const egdb *db, const char *dbdir, const eng_pos *root, const char *path,
             pcert_stats *out, char *err, size_t errlen)
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
    c.pslices = calloc(SL_DIM, 1);
    if (!zw || !c.slices || !c.pslices) {
        rc = PST_ENOMEM;
        goto done;
    }
    c.db = db;
    c.dbmax = db ? egdb_max_pieces(db) : 0;
    c.scope = db ? egdb_scope(db) : 0;
    c.root = *root;
    c.cur = -1;
    c.zw = zw;
    c.st = out;
    c.err = err;
    c.errlen = errlen;

    /* The claim: the root's record, or what the databases know of a root
     * they hold (pchk_db_root, which the check applies too). */
    pst_record r;
    pleaf rl = {PLEAF_NONE, ENG_LW};
    int root_leaf = 0;
    if (db && (rc = pleaf_of(db, c.scope, root, 0, &rl)) < 0) {
        eng_errf(err, errlen, "database probe of the root failed: %s", egdb_strerror(rc));
        rc = rc == EGDB_ECORRUPT ? PST_ECORRUPT : PST_EIO;
        goto done;
    }
    rc = pst_get(st, root, &r);
    if (rl.kind == PLEAF_DB || (rl.kind == PLEAF_PARTIAL && rc == PST_ENOTFOUND)) {
        /* the databases cover the root: its value is theirs, whatever
         * the store says (as in the check, check.h); a partial root with
         * nothing stored: its bound */
        r.bound = rl.bound;
        root_leaf = 1;
        rc = 0;
    } else if (rc == PST_ENOTFOUND) {
        eng_errf(err, errlen, "nothing stored for the root: no proof to export");
        rc = PST_EINVAL;
        goto done;
    } else if (rc != 0) {
        eng_errf(err, errlen, "the root's record cannot be read: %s", pst_strerror(rc));
        goto done;
    } else if (rl.kind == PLEAF_PARTIAL && eng_bound_meet(r.bound, rl.bound) == ENG_BOUND_INVALID) {
        /* both cannot hold (as pchk_db_root says): no certificate */
        eng_errf(err, errlen,
                 "the root's stored bound %s and the partial database's bound %s contradict "
                 "each other (a partial file is wrong)",
                 eng_bound_name(r.bound), eng_bound_name(rl.bound));
        rc = PST_ECORRUPT;
        goto done;
    } else if (rl.kind == PLEAF_PARTIAL) {
        /* a partial root with a stored proof: both bounds are true, so
         * the claim is their meet; the goals the partial bound answers
         * are sections of the root's 'B' record alone (open_section) */
        r.bound = eng_bound_meet(r.bound, rl.bound);
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
        if ((rc = open_section(&c, c.ngoals)) != 0)
            goto done;
    } else {
        pchk_result res;
        pchk_visitor vis = {on_done, &c};
        /* pchk_check's own source, the store, with our visitor */
        pchk_source ssrc = {store_get, st, NULL};
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
        if ((rc = open_section(&c, c.ngoals)) != 0)
            goto done;
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
    if ((rc = write_header(fo, &c, dbdir ? dbdir : ".", root, r.bound, &out->files, err, errlen)) !=
        0)
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
    free(c.pslices);
    pmap_free(&c.leaves);
    pmap_free(&c.touched);
    return rc;
}

/* ---- check ------------------------------------------------------------ */

/* Records a verdict of invalid; returns 1 for the caller to pass up.
 * where is NULL for what concerns the file rather than a position (the
 * header, the database files, the structure of the body): "-" then. */
static int bad(pcert_result *out, const eng_pos *where, const char *fmt, ...)
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

/* A section as a checker source: p's position record, or for a 'B'
 * leaf a record of an admitted store carrying its claim (sec_mem). */
static int
mem_get(void *ctx, const eng_pos *p, pst_record *o)
{
    const sec_mem *m = ctx;
    long k = pmap_find(&m->map, p);
    if (k >= 0) {
        *o = m->rec[k];
        return 0;
    }
    k = pmap_find(&m->lmap, p);
    if (k < 0 || m->leaf[k].tag != TAG_BOUND)
        return PST_ENOTFOUND;
    memset(o, 0, sizeof *o);
    o->win.from = o->draw.from = PST_NOMOVE;
    o->bound = eng_bound_make(m->leaf[k].lo, m->leaf[k].hi);
    return PCHK_SRC_ADMITTED;
}

/* Doubles the capacity of the buffer *b of *cap bytes, keeping its
 * contents. When memory runs out it frees the buffer and leaves *b NULL:
 * the two readers below (a file, an inflated body) both take a NULL
 * buffer as "out of memory" and stop. */
static void
grow_double(unsigned char **b, size_t *cap)
{
    unsigned char *nb = realloc(*b, *cap * 2);
    if (!nb) {
        free(*b);
        *b = NULL;
        return;
    }
    *b = nb;
    *cap *= 2;
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
        if (n == cap)
            grow_double(&b, &cap); /* NULL ends the loop */
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
        grow_double(&b, &cap); /* NULL ends the loop */
    }
    size_t rest = z.avail_in;
    inflateEnd(&z);
    if (!b)
        return -1;
    *out = b;
    *olen = n;
    if (zr == Z_STREAM_END && rest == 0)
        return 0;
    *why = zr == Z_STREAM_END   ? "bytes after the end of the compressed body"
           : zr == Z_DATA_ERROR ? "the compressed body is damaged (zlib data error)"
                                : "the file is truncated (the compressed body ends early)";
    return 1;
}

static void
mem_free(cert_mem *m)
{
    for (int i = 0; i < 2; i++) {
        sec_mem *c = &m->sec[i];
        pmap_free(&c->map);
        pmap_free(&c->lmap);
        free(c->rec);
        free(c->leaf);
        free(c->lpos);
    }
}

/* The value a claim lo..hi, for the side to move stm, gives colour x. */
static int
value_for(int x, int stm, int lo, int hi)
{
    return stm == x ? lo : -hi;
}

/* "Black wins" / "White at least draws". */
static const char *
goal_name(const goal *g)
{
    static const char *const names[2][2] = {{"Black at least draws", "Black wins"},
                                            {"White at least draws", "White wins"}};
    return names[g->x == ENG_WHITE][g->win != 0];
}

/*
 * Reads the records of the body into m, one sec_mem per section.
 * Structure errors are verdicts: a record cut short, an unknown tag (or
 * 'B' without the header's partial flag), a position twice in a section,
 * a position record of the scope or without a move, a leaf of the wrong
 * kind for its position or whose claim does not give the section's goal
 * (docs/certificate.md, rules 1, 3 and 5). RETURN 0, 1 (invalid) or -1.
 */
static int
read_body(const unsigned char *b, size_t len, const goal *goals, int ngoals, int scope, cert_mem *m,
          pcert_result *out)
{
    /* A record's length depends on its tag, then (for 'P') on whether X
     * is to move and whether the section is a win: every length check
     * comes before the bytes are read, so a truncated or forged body is
     * a verdict and never a read past the buffer. */
    size_t at = 0;
    int sec = -1, nsec = 0, ended = 0;
    int partial = (scope & EGDB_SCOPE_PARTIAL) != 0;
    while (at < len && !ended) {
        int tag = b[at];
        size_t need = tag == TAG_SECTION                                 ? 3
                      : tag == TAG_LEAF || (tag == TAG_BOUND && partial) ? 1 + POS_BYTES + 2
                      : tag == TAG_END                                   ? 17
                      : tag == TAG_POS                                   ? 1 + POS_BYTES
                                                                         : 0;
        if (need == 0)
            return bad(out, NULL, "body byte %zu: unknown record tag 0x%02x%s", at, tag,
                       tag == TAG_BOUND ? " (a partial leaf, and the header's scope has no "
                                          "partial databases)"
                                        : "");
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
        sec_mem *sm = &m->sec[sec];
        int need_v = g->win ? ENG_WIN : ENG_DRAW;
        if (pmap_find(&sm->map, &p) >= 0 || pmap_find(&sm->lmap, &p) >= 0)
            return bad(out, &p, "the position appears twice in section %d", sec + 1);
        int in_scope = egdb_scope_has(scope, &p);
        if (tag == TAG_LEAF || tag == TAG_BOUND) {
            int lo = (int8_t)b[at + 1 + POS_BYTES], hi = (int8_t)b[at + 2 + POS_BYTES];
            char sc[48];
            egdb_scope_name(scope, sc, sizeof sc);
            if (lo < -1 || hi > 1 || lo > hi || (lo == -1 && hi == 1))
                return bad(out, &p, "leaf record with the bound %d..%d", lo, hi);
            if (tag == TAG_LEAF && !in_scope)
                return bad(out, &p, "%s: a database leaf outside the header's scope %s",
                           goal_name(g), sc);
            if (tag == TAG_BOUND && in_scope)
                return bad(out, &p,
                           "%s: a partial leaf of a position the complete databases of the "
                           "scope %s hold (it must be an 'L' leaf)",
                           goal_name(g), sc);
            if (value_for(g->x, p.stm, lo, hi) < need_v)
                return bad(out, &p, "%s: the leaf claims %s (%s to move), which does not give it",
                           goal_name(g), eng_bound_name(eng_bound_make(lo, hi)),
                           p.stm == ENG_BLACK ? "Black" : "White");
            int added = 0;
            long k = pmap_add(&sm->lmap, &p, &added);
            if (k < 0 || pmap_room((void **)&sm->leaf, &sm->lcap, (size_t)k, sizeof *sm->leaf) ||
                pmap_room((void **)&sm->lpos, &sm->lpcap, (size_t)k, sizeof *sm->lpos))
                return -1;
            sm->leaf[k].lo = (int8_t)lo;
            sm->leaf[k].hi = (int8_t)hi;
            sm->leaf[k].tag = (uint8_t)tag;
            sm->lpos[k] = p;
            out->leaves++;
            out->leaves_partial += tag == TAG_BOUND;
            at += need;
            continue;
        }
        /* a position record */
        size_t rl = need + (p.stm == g->x ? 6 : 0) + (g->win ? 4 : 0);
        if (at + rl > len)
            goto cut;
        if (in_scope)
            return bad(out, &p,
                       "%s: a position record the databases value (%d pieces, in the header's "
                       "scope: it must be a leaf)",
                       goal_name(g), eng_pieces(&p));
        if (eng_count_moves(&p, ENG_DUPS_MERGE) == 0)
            return bad(out, &p,
                       "%s: a position record without a legal move (a terminal position is "
                       "not recorded)",
                       goal_name(g));
        long k = pmap_add(&sm->map, &p, NULL);
        if (k < 0 || pmap_room((void **)&sm->rec, &sm->cap, (size_t)k, sizeof *sm->rec))
            return -1;
        pst_record *r = &sm->rec[k];
        memset(r, 0, sizeof *r);
        r->win.from = r->draw.from = PST_NOMOVE;
        if (p.stm == g->x) {
            const unsigned char *mv = b + at + need;
            pst_move pm = {(uint8_t)(mv[0] - 1), (uint8_t)(mv[1] - 1), get32(mv + 2)};
            if (mv[0] < 1 || mv[0] > 32 || mv[1] < 1 || mv[1] > 32)
                return bad(out, &p, "kept move with square %d or %d out of 1..32", mv[0], mv[1]);
            if (g->win)
                r->win = pm;
            else
                r->draw = pm;
            r->bound = eng_bound_make(need_v, ENG_WIN);
        } else {
            r->bound = eng_bound_make(ENG_LOSS, -need_v);
        }
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

/*
 * The visitor of the C check: at every position whose proof of the
 * section's goal is complete, each child that the complete databases of
 * the scope value must have a leaf record in the section, as rule 5
 * asks (the walk itself takes such a child from the databases, record or
 * not). A failure is recorded in out and stops the walk.
 */
typedef struct leafcheck {
    const sec_mem *sm;
    goal g;
    int scope;
    pcert_result *out;
    int failed;
} leafcheck;

static int
leafcheck_done(void *ctx, const eng_pos *p, int x, int win, uint64_t effort, const pst_move *used,
               int longest)
{
    leafcheck *lc = ctx;
    (void)effort;
    (void)longest;
    if (x != lc->g.x || win != lc->g.win)
        return 0; /* the weaker goal a win's walk checks first */
    eng_movelist l;
    int n = 1;
    if (used->from != PST_NOMOVE) {
        if (pst_move_find(p, used, &l.m[0]) != 0)
            return 0; /* the walk has just found it legal */
    } else {
        n = eng_generate(p, &l, ENG_DUPS_MERGE);
    }
    for (int i = 0; i < n; i++) {
        eng_pos ch;
        eng_make(p, &l.m[i], &ch);
        if (!egdb_scope_has(lc->scope, &ch) || pmap_find(&lc->sm->lmap, &ch) >= 0 ||
            eng_count_moves(&ch, ENG_DUPS_MERGE) == 0)
            continue;
        char fen[ENG_FEN_MAX], mt[ENG_MOVE_STR_MAX];
        eng_format_fen(&ch, fen, sizeof fen);
        if (eng_format_move(&l.m[i], mt, sizeof mt) != 0)
            snprintf(mt, sizeof mt, "?");
        bad(lc->out, p, "%s: %s %s leads to %s, a database position with no leaf record",
            goal_name(&lc->g), used->from != PST_NOMOVE ? "kept move" : "reply", mt, fen);
        lc->failed = 1;
        return 1;
    }
    return 0;
}

/* Whether the header lists slice name with kind (entries: F of 48 bytes). */
static int
listed(const unsigned char *entries, uint32_t nfiles, const char *name, int kind)
{
    for (uint32_t i = 0; i < nfiles; i++) {
        const unsigned char *e = entries + (size_t)i * PCERT_FILE_ENTRY;
        if (memcmp(e, name, 7) == 0 && e[7] == kind)
            return 1;
    }
    return 0;
}

/*
 * The scope a header names (docs/certificate.md, "Header"): format 1 a
 * piece count and zero bytes 33-35; format 2 byte 33 the flags (bit 0:
 * partial databases) and bytes 34-35 the splits of N + 1 pieces (bit a:
 * a against N + 1 - a, a >= (N + 2) / 2). RETURN the scope, or -1.
 */
static int
header_scope(const unsigned char *f)
{
    int n = f[12], version = f[7];
    unsigned flags = f[33], splits = (unsigned)f[34] | (unsigned)f[35] << 8;
    if (n > EGDB_MAX_PIECES)
        return -1;
    if (version == PCERT_VERSION_PLAIN)
        return flags || splits ? -1 : n;
    if (flags & ~(unsigned)SCOPE_FLAG_PARTIAL)
        return -1;
    for (int a = 0; a < 16; a++)
        if (splits >> a & 1u && (n == 0 || a < (n + 2) / 2 || a > n + 1))
            return -1;
    if (n == 0 && flags)
        return -1; /* partial bounds rest on complete databases below them */
    return EGDB_SCOPE(n, splits) | (flags & SCOPE_FLAG_PARTIAL ? EGDB_SCOPE_PARTIAL : 0);
}

int
pcert_check(const char *path, const char *dbdir, size_t cache_bytes, int other_files, eng_pos *root,
            pcert_result *out, char *err, size_t errlen)
{
    size_t len = 0, blen = 0;
    unsigned char *f = NULL, *body = NULL;
    egdb *db = NULL;
    egpt_db *pdb = NULL;
    cert_mem m;
    int rc = 0;
    const char *dir = dbdir ? dbdir : ".";
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
    if (f[7] != PCERT_VERSION_PLAIN && f[7] != PCERT_VERSION) {
        bad(out, NULL, "format version %d; this checker reads versions %d and %d", f[7],
            PCERT_VERSION_PLAIN, PCERT_VERSION);
        goto done;
    }
    out->version = f[7];
    if (len < PCERT_HEADER_FIXED) {
        bad(out, NULL, "the file is truncated (inside the header)");
        goto done;
    }
    get_pos(f + 16, root);
    char msg[160];
    int lo = (int8_t)f[10], hi = (int8_t)f[11];
    if (f[8] != 1 || f[9] != 1) {
        bad(out, NULL, "rules %d, route rule %d: this checker knows rules 1, routes 1", f[8], f[9]);
        goto done;
    }
    int scope = header_scope(f);
    if (f[13] != 1 || eng_validate(root, msg, sizeof msg) != 0 || lo < -1 || hi > 1 || lo > hi ||
        scope < 0 || f[15] != 0) {
        bad(out, NULL, "malformed header (compression, root, claim, piece limit or scope)");
        goto done;
    }
    out->scope = scope;
    int pieces = EGDB_SCOPE_PIECES(scope);
    char scname[48];
    egdb_scope_name(scope, scname, sizeof scname);
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
     * certificate to the files the prover used. A file that cannot be
     * read is no verdict (exit 2), and so is one that differs, unless
     * other_files lets a .cwl file differ (cert.h, FILES THAT DIFFER).
     * A missing file is named with what it is for: a partial database or
     * a split the databases given may not have. */
    const unsigned char *entries = f + PCERT_HEADER_FIXED;
    for (uint32_t i = 0; i < nfiles; i++) {
        const unsigned char *e = entries + (size_t)i * PCERT_FILE_ENTRY;
        char name[8], fp[4200];
        egix_slice s;
        memcpy(name, e, 7);
        name[7] = 0;
        int kind = e[7];
        if (egix_slice_parse(name, &s) != 0 ||
            !(kind == FILE_CWL || (kind == FILE_PWL && (scope & EGDB_SCOPE_PARTIAL)))) {
            bad(out, NULL,
                "database file entry %u: '%.7s' (kind %d) is not a slice name and file kind", i,
                name, kind);
            goto done;
        }
        if (i > 0 && memcmp(e - PCERT_FILE_ENTRY, e, 8) >= 0) {
            bad(out, NULL, "database file entry %u: '%s' is out of order or repeated", i, name);
            goto done;
        }
        unsigned char md[SHA256_DIGEST_SIZE];
        uint64_t size;
        const char *ext = kind == FILE_PWL ? "pwl" : "cwl";
        snprintf(fp, sizeof fp, "%s/%s.%s", dir, name, ext);
        if (file_digest(fp, md, &size) != 0) { /* no verdict without the files */
            int n = s.nbk + s.nwk + s.nbm + s.nwm;
            eng_errf(err, errlen,
                     "database file %s: %s (the certificate rests on the databases %s%s)", fp,
                     strerror(errno), scname,
                     kind == FILE_PWL ? ": this is a partial database file; give the folder "
                                        "that holds the .pwl files"
                     : n > pieces     ? ": this file is of a split of the next piece count"
                                      : "");
            rc = PST_EIO;
            goto done;
        }
        if (size != get64(e + 8) || memcmp(md, e + 16, sizeof md) != 0) {
            if (kind == FILE_PWL) { /* cert.h, FILES THAT DIFFER */
                eng_errf(err, errlen,
                         "partial database file %s: its size or SHA-256 differs from the "
                         "certificate's; no verdict. A partial file's bounds depend on the "
                         "databases it was built over, and no checker can check them from "
                         "the file alone: check with the .pwl files the certificate names",
                         fp);
                rc = PST_EIO;
                goto done;
            }
            if (!other_files) {
                eng_errf(
                    err, errlen,
                    "database file %s: its size or SHA-256 differs from the certificate's "
                    "(not the file it was made with: a rebuilt or recompressed set, or "
                    "damage); no verdict. Check with the files it names, or with "
                    "--other-files against these files' values (`checkers egdb verify` them first)",
                    fp);
                rc = PST_EIO;
                goto done;
            }
            out->files_differ++;
        }
    }
    out->files = nfiles;
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
    if ((ir = read_body(body, blen, goals, ngoals, scope, &m, out)) != 0) {
        rc = ir < 0 ? PST_ENOMEM : 0;
        goto done;
    }

    /* The complete databases of the scope, without the partial flag: the
     * walk takes partial leaves from the 'B' records only (sec_mem), so
     * that it rests on the files the header names and no other. */
    int complete = scope & ~EGDB_SCOPE_PARTIAL;
    if (pieces > 0) {
        rc = egdb_open(dir, complete, cache_bytes, &db, err, errlen);
        if (rc) {
            if (rc == EGDB_EMISSING) {
                size_t l = strlen(err);
                snprintf(err + l, errlen > l ? errlen - l : 0,
                         " (the certificate rests on the databases %s)", scname);
            }
            rc = rc == EGDB_ECORRUPT ? PST_ECORRUPT : rc == EGDB_ENOMEM ? PST_ENOMEM : PST_EIO;
            goto done;
        }
    }
    if (out->leaves_partial) {
        rc = egpt_open(dir, 0, &pdb, err, errlen);
        if (rc) {
            rc = rc == EGDB_ECORRUPT ? PST_ECORRUPT : rc == EGDB_ENOMEM ? PST_ENOMEM : PST_EIO;
            goto done;
        }
    }
    /* The proof: the independent checker over each section's records.
     * It walks from the root, so records no line reaches are not read
     * (the Python checker checks them too; docs/certificate.md). Its
     * complete-database leaves come from the databases, not from the
     * claims: the claims are compared with them after the walk, so that
     * a wrong claim is refused even where the walk would not need it. */
    for (int k = 0; k < ngoals; k++) {
        const goal *g = &goals[k];
        sec_mem *sm = &m.sec[k];
        pchk_result res;
        pchk_source src = {mem_get, sm, NULL};
        leafcheck lc = {sm, *g, complete, out, 0};
        pchk_visitor vis = {leafcheck_done, &lc};
        rc = pchk_check_with(&src, &vis, db, root, &res, err, errlen);
        if (lc.failed) {
            rc = 0;
            goto done;
        }
        if (rc)
            goto done;
        int need_v = g->win ? ENG_WIN : ENG_DRAW;
        if (res.status == PCHK_NOTHING) {
            /* The root is no position record of the section: a terminal
             * root, or an 'L' leaf (a 'B' leaf answers as a record). */
            pleaf lf;
            int v = pleaf_of(db, complete, root, 0, &lf);
            if (v < 0) {
                eng_errf(err, errlen, "database probe of the root failed: %s", egdb_strerror(v));
                rc = v == EGDB_ECORRUPT ? PST_ECORRUPT : PST_EIO;
                goto done;
            }
            if (lf.kind == PLEAF_END) {
                if (value_for(g->x, root->stm, ENG_LOSS, ENG_LOSS) < need_v) {
                    bad(out, root, "%s: %s has no move here", goal_name(g),
                        root->stm == ENG_BLACK ? "Black" : "White");
                    goto done;
                }
            } else if (lf.kind != PLEAF_DB || pmap_find(&sm->lmap, root) < 0) {
                bad(out, root, "%s: the root is neither a position record nor a database leaf",
                    goal_name(g));
                goto done;
            } else if (value_for(g->x, root->stm, eng_bound_lo(lf.bound), eng_bound_hi(lf.bound)) <
                       need_v) {
                bad(out, root, "%s: the databases value the root as %s", goal_name(g),
                    eng_bound_name(lf.bound));
                goto done;
            }
            continue;
        }
        if (res.status == PCHK_INVALID) {
            out->status = PCERT_INVALID;
            snprintf(out->where, sizeof out->where, "%s", res.where);
            snprintf(out->why, sizeof out->why, "%s", res.why);
            goto done;
        }
    }
    /* Every leaf's claim against the file it rests on: the exact value of
     * an 'L' leaf must lie in its claim, the stored bound of a 'B' leaf
     * inside it (the claim may be weaker, never stronger). */
    for (int k = 0; k < ngoals; k++) {
        const sec_mem *sm = &m.sec[k];
        for (size_t i = 0; i < sm->lmap.n; i++) {
            const eng_pos *p = &sm->lpos[i];
            const leaf_rec *lr = &sm->leaf[i];
            eng_bound claim = eng_bound_make(lr->lo, lr->hi);
            if (lr->tag == TAG_LEAF) {
                int v = egdb_probe(db, p);
                if (v < 0) {
                    eng_errf(err, errlen, "database probe failed: %s", egdb_strerror(v));
                    rc = v == EGDB_ECORRUPT ? PST_ECORRUPT : PST_EIO;
                    goto done;
                }
                int o = egdb_outcome(v);
                if (o < lr->lo || o > lr->hi) {
                    bad(out, p, "database leaf claims %s, the database says %s",
                        eng_bound_name(claim), eng_bound_name(eng_bound_exact(o)));
                    goto done;
                }
                continue;
            }
            eng_pos c = eng_canonical(p);
            egix_slice s;
            char name[EGIX_NAME_MAX];
            if ((c.bm | c.bk) == 0 || egix_slice_of(&c, &s) != 0 ||
                egix_slice_name(&s, name, sizeof name) != 0) {
                bad(out, p, "a partial leaf that no partial file holds");
                goto done;
            }
            if (!listed(entries, nfiles, name, FILE_PWL)) {
                bad(out, p, "the partial leaf rests on %s.pwl, which the header does not list",
                    name);
                goto done;
            }
            int b = egpt_probe(pdb, p);
            if (b < 0) {
                eng_errf(err, errlen, "partial database probe of %s.pwl failed: %s", name,
                         egdb_strerror(b));
                rc = b == EGDB_ECORRUPT ? PST_ECORRUPT : PST_EIO;
                goto done;
            }
            if (eng_bound_lo(b) < lr->lo || eng_bound_hi(b) > lr->hi) {
                bad(out, p, "partial leaf claims %s, the partial database %s.pwl says %s",
                    eng_bound_name(claim), name, eng_bound_name((eng_bound)b));
                goto done;
            }
        }
    }

done:
    if (rc == 0 && out->status == PCERT_INVALID && out->files_differ > 0) {
        size_t l = strlen(out->why);
        snprintf(out->why + l, sizeof out->why - l,
                 " (checked against other files: %" PRIu64 " of the %" PRIu64
                 " listed differ from those the certificate was made with)",
                 out->files_differ, out->files);
    }
    egdb_close(db);
    egpt_close(pdb);
    mem_free(&m);
    free(body);
    free(f);
    return rc;
}
