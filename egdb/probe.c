/*
 * probe.c - opening a database directory and probing it; statistics from
 * the slice headers; error names.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "egdb/cache.h"
#include "egdb/db.h"
#include "egdb/decompress.h"
#include "egdb/egdb.h"
#include "egdb/index.h"
#include "egdb/pipeline.h"
#include "egdb/store.h"

/* ---- types ------------------------------------------------------------ */

/* ---- functions -------------------------------------------------------- */

const char *
egdb_strerror(int code)
{
    switch (code) {
    case EGDB_OK:
        return "success";
    case EGDB_ENOTFOUND:
        return "position not in the database";
    case EGDB_EIO:
        return "input/output error";
    case EGDB_ECORRUPT:
        return "database file is damaged";
    case EGDB_ENOMEM:
        return "out of memory";
    case EGDB_EINVAL:
        return "invalid argument";
    case EGDB_EMISSING:
        return "database file missing";
    case EGDB_EINTERRUPT:
        return "stopped before the end";
    case EGDB_EVERIFY:
        return "a stored value contradicts its successors";
    case EGDB_ECAPTURE:
        return "the side to move has a capture (not probed)";
    case EGDB_EBUSY:
        return "another build or compression is working in the directory";
    default:
        return "unknown error";
    }
}

/* The slices of n pieces (malloc'ed), without pair numbers. */
static int
slices_of(int n, egix_slice **out, size_t *count)
{
    int rc = egix_slices_alloc(n, out, NULL, count);
    return rc == 0 ? 0 : rc == EGIX_ENOMEM ? EGDB_ENOMEM : EGDB_EINVAL;
}

static int
add_compressed(egdb *db, egdc_slice *e)
{
    if (db->ncmp == db->cmp_cap) {
        size_t cap = db->cmp_cap ? 2 * db->cmp_cap : 256;
        egdc_slice **l = realloc(db->cmp_list, cap * sizeof *l);
        if (!l)
            return EGDB_ENOMEM;
        db->cmp_list = l;
        db->cmp_cap = cap;
    }
    if (e->npages > UINT32_MAX - db->nblocks)
        return EGDB_ENOMEM; /* more pages than the cache can number */
    e->block_base = db->nblocks;
    db->nblocks += e->npages;
    db->cmp_list[db->ncmp++] = e;
    size_t key = egst_key(&e->slice);
    if (!db->cmp_mat[key >> 6]) {
        if (db->ncmp_rows + 1 >= UINT16_MAX)
            return EGDB_ENOMEM;
        egdc_slice **rows = realloc(db->cmp_rows, (db->ncmp_rows + 2) * 64 * sizeof *rows);
        if (!rows)
            return EGDB_ENOMEM;
        db->cmp_rows = rows;
        db->ncmp_rows++;
        memset(&rows[db->ncmp_rows * 64], 0, 64 * sizeof *rows);
        db->cmp_mat[key >> 6] = (uint16_t)db->ncmp_rows;
    }
    db->cmp_rows[(size_t)db->cmp_mat[key >> 6] * 64 + (key & 63)] = e;
    return 0;
}

/* Whether every slice of unit u has a file in dir (compressed or 2-bit),
 * without reading them. */
static int
unit_present(const char *dir, const egpl_unit *u, const egix_slice *sl)
{
    for (size_t i = u->begin; i < u->end; i++) {
        char path[4096];
        if (egst_path(dir, &sl[i], path, sizeof path) != 0)
            return 0;
        if (access(path, F_OK) == 0)
            continue;
        size_t len = strlen(path);
        memcpy(path + len - 3, "cwl", 3);
        if (access(path, F_OK) != 0)
            return 0;
    }
    return 1;
}

/*
 * Loads every slice of unit u (a material and its twin, pipeline.h): its
 * compressed file if there is one, else its 2-bit build file. A unit
 * with a slice missing is not loaded at all, so that a probe of a
 * material whose build is unfinished answers "not in the database"
 * rather than a value from some of its slices (whose captures and
 * threats could lead into the missing ones).
 * RETURN 1 (loaded), 0 (incomplete: nothing loaded), or a negative code
 * (a damaged file: an error, never a silent gap).
 */
static int
open_unit(egdb *db, const char *dir, const egpl_unit *u, const egix_slice *sl, char *err,
          size_t errlen)
{
    size_t n = u->end - u->begin;
    egdc_slice **cmp = calloc(n, sizeof *cmp);
    if (!cmp)
        return EGDB_ENOMEM;
    int rc = 1;
    for (size_t i = 0; i < n && rc == 1; i++) {
        int r = egdc_open(dir, &sl[u->begin + i], &cmp[i], err, errlen);
        if (r == 0)
            continue;
        cmp[i] = NULL;
        if (r != EGDB_EMISSING) {
            rc = r;
            break;
        }
        /* A 2-bit file has one checksum for all of it: read it all now,
         * so that a probe never answers from a damaged file. */
        r = egst_add_mapped(&db->reg, dir, &sl[u->begin + i], 1, err, errlen);
        if (r == EGDB_EMISSING)
            rc = 0;
        else if (r != 0)
            rc = r;
    }
    if (rc != 1) {
        for (size_t i = 0; i < n; i++) {
            egdc_close(cmp[i]);
            egst_remove(&db->reg, &sl[u->begin + i]);
        }
        free(cmp);
        return rc;
    }
    for (size_t i = 0; i < n && rc == 1; i++) {
        if (!cmp[i])
            continue;
        int r = add_compressed(db, cmp[i]);
        if (r != 0) {
            for (size_t t = i; t < n; t++)
                egdc_close(cmp[t]);
            rc = r;
        }
    }
    free(cmp);
    return rc;
}

int
egdb_open(const char *dir, int max_pieces, size_t cache_bytes, egdb **out, char *err, size_t errlen)
{
    egdb *db = calloc(1, sizeof *db);
    if (!db)
        return EGDB_ENOMEM;
    if (egst_registry_init(&db->reg) != 0 ||
        !(db->cmp_mat = calloc(EGST_NKEYS / 64, sizeof *db->cmp_mat)) ||
        !(db->cmp_rows = calloc(64, sizeof *db->cmp_rows))) {
        egdb_close(db);
        return EGDB_ENOMEM;
    }
    /* scope: N complete piece counts (0: all there are), and of N + 1
     * pieces the splits asked for (0: every split complete in dir);
     * partial bounds when asked for, or with "all" when dir has them. */
    const int want_partial = max_pieces > 0 && (max_pieces & EGDB_SCOPE_PARTIAL);
    const int may_partial = max_pieces == 0 || want_partial;
    if (max_pieces < 0)
        max_pieces = 0; /* EGDB_OPEN_COMPLETE_ONLY */
    const int want_n = EGDB_SCOPE_PIECES(max_pieces);
    const unsigned want_splits = EGDB_SCOPE_SPLITS(max_pieces);
    int rc = 0, limit = want_n > 0 ? want_n + 1 : EGDB_MAX_PIECES;
    if (limit > EGDB_MAX_PIECES)
        limit = EGDB_MAX_PIECES;
    for (int n = 1; n <= limit && rc == 0; n++) {
        egix_slice *sl;
        size_t k, present = 0;
        if ((rc = slices_of(n, &sl, &k)) != 0)
            break;
        egpl_unit *u;
        size_t nu;
        if ((rc = egpl_units(sl, k, &u, &nu, err, errlen)) != 0) {
            free(sl);
            break;
        }
        /* Which splits of n pieces are whole (every unit's files there):
         * beyond the complete counts only whole splits are loaded, so what
         * a handle covers is a scope (egdb_scope) and the same on every
         * machine that has those files. */
        unsigned whole = 0, seen = 0;
        for (size_t i = 0; i < nu; i++)
            seen |= 1u << u[i].split;
        whole = seen;
        for (size_t i = 0; i < nu; i++)
            if (!unit_present(dir, &u[i], sl))
                whole &= ~(1u << u[i].split);
        const int beyond = db->max_pieces < n - 1 || (want_n > 0 && n > want_n);
        unsigned take = whole;
        if (beyond || whole != seen) {
            /* Not (yet) a complete count: the splits asked for, or all
             * whole ones. */
            take = want_n > 0 && n == want_n + 1 ? want_splits & whole
                   : want_n > 0 && n > want_n    ? 0
                                                 : whole;
            if (db->max_pieces < n - 1)
                take = 0; /* a gap below: nothing more is loaded */
        }
        for (size_t i = 0; i < nu && rc == 0; i++) {
            if (!(take >> u[i].split & 1u))
                continue;
            int r = open_unit(db, dir, &u[i], sl, err, errlen);
            if (r == 1) {
                present += u[i].end - u[i].begin;
            } else if (r < 0) {
                rc = r;
            } else {
                take &= ~(1u << u[i].split); /* vanished since the check */
            }
        }
        free(u);
        free(sl);
        if (rc != 0)
            break;
        if (present == k && db->max_pieces == n - 1) {
            db->max_pieces = n;
        } else if (present > 0 && db->max_pieces == n - 1) {
            db->splits = take;
            break;
        }
        if (present == 0)
            break;
    }
    if (rc == 0 && want_n > 0 &&
        (db->max_pieces < want_n ||
         (want_splits && (db->max_pieces > want_n || (db->splits & want_splits) != want_splits)))) {
        char want[32], have[32];
        egdb_scope_name(max_pieces, want, sizeof want);
        egdb_scope_name(egdb_scope(db), have, sizeof have);
        snprintf(err, errlen, "%s holds the databases %s only, not %s", dir, have, want);
        rc = EGDB_EMISSING;
    }
    if (rc == 0 && db->max_pieces == 0) {
        snprintf(err, errlen, "%s holds no complete database (build one with: checkers egdb build)",
                 dir);
        rc = EGDB_EMISSING;
    }
    if (rc == 0 && may_partial) {
        /* The partial files (partial.h): checked whole here, as .wld
         * files are, so that a probe never answers from a damaged one. */
        char perr[512];
        int pr = egpt_open(dir, 0, &db->partial, perr, sizeof perr);
        if (pr == EGDB_EMISSING && !want_partial) {
            pr = 0;
        } else if (pr == EGDB_EMISSING) {
            char want[48];
            egdb_scope_name(max_pieces, want, sizeof want);
            snprintf(err, errlen,
                     "%s holds no partial database (.pwl files), and the scope %s asks for one: "
                     "what was proved rests on partial bounds; give the directory that holds them",
                     dir, want);
            rc = pr;
        } else if (pr != 0) {
            snprintf(err, errlen, "%s", perr);
            rc = pr;
        }
    }
    if (rc == 0 &&
        !(db->cache = egca_create(cache_bytes, (1u << EGCD_PAGE_SHIFT) / 4, db->nblocks)))
        rc = EGDB_ENOMEM;
    if (rc != 0) {
        egdb_close(db);
        return rc;
    }
    *out = db;
    return 0;
}

void
egdb_close(egdb *db)
{
    if (!db)
        return;
    egst_registry_free(&db->reg);
    for (size_t i = 0; i < db->ncmp; i++)
        egdc_close(db->cmp_list[i]);
    free(db->cmp_list);
    free(db->cmp_mat);
    free(db->cmp_rows);
    egca_destroy(db->cache);
    egpt_close(db->partial);
    free(db);
}

int
egdb_max_pieces(const egdb *db)
{
    return db->max_pieces;
}

int
egdb_scope(const egdb *db)
{
    return EGDB_SCOPE(db->max_pieces, db->splits) | (db->partial ? EGDB_SCOPE_PARTIAL : 0);
}

size_t
egdb_partial_count(const egdb *db, uint64_t *positions)
{
    if (positions)
        *positions = 0;
    return db->partial ? egpt_slice_count(db->partial, positions) : 0;
}

int
egdb_scope_within(int a, int b)
{
    int na = EGDB_SCOPE_PIECES(a), nb = EGDB_SCOPE_PIECES(b);
    /* b takes every position of up to nb pieces: all of a when a stops
     * below nb + 1 pieces; with the same count, a's splits must be b's. */
    if ((a & EGDB_SCOPE_PARTIAL) && !(b & EGDB_SCOPE_PARTIAL))
        return 0;
    if (na != nb)
        return na < nb;
    return (EGDB_SCOPE_SPLITS(a) & ~EGDB_SCOPE_SPLITS(b)) == 0;
}

int
egdb_scope_union(int a, int b)
{
    int na = EGDB_SCOPE_PIECES(a), nb = EGDB_SCOPE_PIECES(b),
        partial = (a | b) & EGDB_SCOPE_PARTIAL;
    if (na != nb) /* the larger count takes every position of the smaller's splits */
        return ((na > nb ? a : b) & ~EGDB_SCOPE_PARTIAL) | partial;
    return EGDB_SCOPE(na, EGDB_SCOPE_SPLITS(a) | EGDB_SCOPE_SPLITS(b)) | partial;
}

int
egdb_scope_name(int scope, char *buf, size_t len)
{
    int n = EGDB_SCOPE_PIECES(scope), w = snprintf(buf, len, "%d", n);
    unsigned sp = EGDB_SCOPE_SPLITS(scope);
    for (int a = EGDB_MAX_PIECES + 1; a >= 0 && w >= 0 && (size_t)w < len; a--)
        if (sp >> a & 1u)
            w += snprintf(buf + w, len - (size_t)w, "%s%dv%d", (sp >> (a + 1)) ? "," : "+", a,
                          n + 1 - a);
    if ((scope & EGDB_SCOPE_PARTIAL) && w >= 0 && (size_t)w < len)
        w += snprintf(buf + w, len - (size_t)w, "+partial");
    return w >= 0 && (size_t)w < len ? 0 : EGDB_EINVAL;
}

int
egdb_covers(const egdb *db, const eng_pos *p)
{
    return egdb_scope_has(egdb_scope(db), p);
}

int
egdb_bound(const egdb *db, int scope, const eng_pos *p, int quiet)
{
    if (egdb_scope_has(scope, p)) {
        int v = quiet ? egdb_probe_quiet(db, p) : egdb_probe(db, p);
        return v > 0 ? (int)eng_bound_exact(egdb_outcome(v)) : v;
    }
    if (!(scope & EGDB_SCOPE_PARTIAL) || !db->partial)
        return EGDB_ENOTFOUND;
    return egpt_probe(db->partial, p);
}

void
egdb_cache_counts(const egdb *db, uint64_t *hits, uint64_t *misses, size_t *blocks)
{
    egca_counts(db->cache, hits, misses, blocks);
}

/*
 * PROBING
 * The value of a valid position. A compressed slice has no value for a
 * capture position (and, if its flags say so, for some threatened ones):
 * play every move and look the results up; the mover wins if one leads to
 * a loss for the opponent, loses if all lead to wins, else draws.
 *
 * A random probe is bound by memory latency (every lookup reads an
 * offset-table entry and a data byte that are rarely in the CPU caches),
 * so the children of a dropped position are looked up together: first
 * each child is classified and the offset entry it needs is prefetched,
 * then each kept child is indexed and its data prefetched, then the
 * values are read, kept children before those needing search. Their
 * misses overlap instead of following one another.
 */

#define BATCH 16 /* children looked up together (more than most positions have) */

enum { NODE_LOST, NODE_RAW, NODE_KEPT, NODE_DROPPED };

typedef struct node {
    eng_pos c;           /* the position, Black to move              */
    const egdc_slice *e; /* its compressed slice (KEPT, DROPPED)     */
    const egst_slice *r; /* or its 2-bit slice (RAW; NULL: absent)   */
    int kind;            /* NODE_* or a negative EGDB_E* code        */
    uint64_t idx;        /* index in e (KEPT, once computed)         */
} node;

static void
node_init(const egdb *db, const eng_pos *p, node *n)
{
    n->c = eng_canonical(p);
    if ((n->c.bm | n->c.bk) == 0) {
        n->kind = NODE_LOST;
        return;
    }
    egix_slice s;
    if (egix_slice_of(&n->c, &s) != 0) {
        n->kind = EGDB_EINVAL;
        return;
    }
    size_t key = egst_key(&s);
    n->e = db->cmp_rows[(size_t)db->cmp_mat[key >> 6] * 64 + (key & 63)];
    if (!n->e) {
        n->r = egst_find(&db->reg, &s);
        n->kind = NODE_RAW;
        return;
    }
    n->kind = egcd_dropped(&n->c, n->e->h.flags) == EGCD_KEPT ? NODE_KEPT : NODE_DROPPED;
}

/* Where a probe failed, for egdb_probe_err (NULL on the fast path): the
 * first compressed slice and index whose block could not be read, or
 * the first position whose slice is not loaded. */
typedef struct probe_diag {
    const egdc_slice *e;
    uint64_t idx;
    int missing;
    eng_pos pos;
} probe_diag;

static int search(const egdb *db, const eng_pos *c, probe_diag *d);

/* The value of a classified node (KEPT nodes with idx computed). */
static int
node_value(const egdb *db, const node *n, probe_diag *d)
{
    int v;
    switch (n->kind) {
    case NODE_LOST:
        return EGDB_LOSS;
    case NODE_RAW:
        if (n->r) {
            /* A built file holds no unknown (0): one whose checksums were
             * made to match around a 0 is damaged, never a loss (callers
             * read 0 as the bound LL, and search as a lost child). */
            v = egst_value(n->r, egix_index(n->r->table, &n->c));
            return v == EGDB_UNKNOWN ? EGDB_ECORRUPT : v;
        }
        if (d && !d->e && !d->missing) {
            d->missing = 1;
            d->pos = n->c;
        }
        return EGDB_ENOTFOUND;
    case NODE_KEPT:
        v = egdc_value(n->e, db->cache, n->idx);
        if (v == EGDB_UNKNOWN)
            v = EGDB_ECORRUPT; /* as a raw file's (above) */
        if (v < 0 && d && !d->e && !d->missing) {
            d->e = n->e;
            d->idx = n->idx;
        }
        return v;
    case NODE_DROPPED:
        return search(db, &n->c, d); /* ends: see egcd_dropped */
    default:
        return n->kind;
    }
}

/* One ply of search from a position whose value was dropped. */
static int
search(const egdb *db, const eng_pos *c, probe_diag *d)
{
    eng_movelist l;
    int n = eng_generate(c, &l, ENG_DUPS_MERGE);
    int best = EGDB_LOSS;
    for (int k0 = 0; k0 < n; k0 += BATCH) {
        int m = n - k0 < BATCH ? n - k0 : BATCH;
        node ch[BATCH];
        for (int i = 0; i < m; i++) {
            eng_pos x;
            eng_make(c, &l.m[k0 + i], &x);
            node_init(db, &x, &ch[i]);
            if (ch[i].kind == NODE_KEPT)
                egix_prefetch(ch[i].e->table, &ch[i].c);
        }
        for (int i = 0; i < m; i++)
            if (ch[i].kind == NODE_KEPT) {
                ch[i].idx = egix_index(ch[i].e->table, &ch[i].c);
                egdc_prefetch(ch[i].e, db->cache, ch[i].idx);
            }
        for (int pass = 0; pass < 2; pass++)
            for (int i = 0; i < m; i++) {
                if ((ch[i].kind == NODE_DROPPED) != (pass == 1))
                    continue;
                int v = node_value(db, &ch[i], d);
                if (v < 0)
                    return v;
                if (v == EGDB_LOSS)
                    return EGDB_WIN;
                if (v == EGDB_DRAW)
                    best = EGDB_DRAW;
            }
    }
    return best;
}

static int
probe_pos(const egdb *db, const eng_pos *p, probe_diag *d)
{
    node n;
    node_init(db, p, &n);
    if (n.kind == NODE_KEPT)
        n.idx = egix_index(n.e->table, &n.c);
    return node_value(db, &n, d);
}

int
egdb_probe(const egdb *db, const eng_pos *p)
{
    if (eng_validate(p, NULL, 0) != 0)
        return EGDB_EINVAL;
    return probe_pos(db, p, NULL);
}

/*
 * The probe again, remembering where it failed; a damaged block is then
 * checked once more (egdc_check_block) to say what is wrong with it. The
 * cache never holds a block that failed, so the second probe reads the
 * same bytes as the first.
 */
int
egdb_probe_err(const egdb *db, const eng_pos *p, char *err, size_t errlen)
{
    char fen[ENG_FEN_MAX];
    if (eng_validate(p, err, errlen) != 0)
        return EGDB_EINVAL;
    probe_diag d;
    memset(&d, 0, sizeof d);
    int v = probe_pos(db, p, &d);
    if (v >= 0)
        return v;
    if (d.e) {
        uint32_t g = (uint32_t)(d.idx >> d.e->h.page_shift), b = d.e->page_block[g];
        char why[400];
        if (egdc_check_block(d.e, b, why, sizeof why) == 0)
            snprintf(why, sizeof why,
                     "data, block %" PRIu32 ": could not be read (%s), though it checks now", b,
                     egdb_strerror(v));
        snprintf(err, errlen, "%s: %s", d.e->path, why);
    } else if (d.missing) {
        egix_slice s;
        char name[EGIX_NAME_MAX] = "?";
        if (egix_slice_of(&d.pos, &s) == 0)
            egix_slice_name(&s, name, sizeof name);
        eng_format_fen(&d.pos, fen, sizeof fen);
        snprintf(err, errlen,
                 "slice %s: no file (.cwl or .wld) in the database directory, needed for %s (%d "
                 "pieces; the directory holds complete databases up to %d)",
                 name, fen, __builtin_popcount(d.pos.bm | d.pos.bk | d.pos.wm | d.pos.wk),
                 db->max_pieces);
    } else {
        snprintf(err, errlen, "%s", egdb_strerror(v));
    }
    return v;
}

int
egdb_probe_quiet(const egdb *db, const eng_pos *p)
{
    if (eng_validate(p, NULL, 0) != 0)
        return EGDB_EINVAL;
    if (eng_has_capture(p))
        return EGDB_ECAPTURE;
    return probe_pos(db, p, NULL);
}

static int
stats_cmp(const void *a, const void *b)
{
    const egdb_slice_stats *x = a, *y = b;
    int px = x->nbk + x->nwk + x->nbm + x->nwm, py = y->nbk + y->nwk + y->nbm + y->nwm;
    if (px != py)
        return px - py;
    return strcmp(x->name, y->name);
}

/* Reads build-log.tsv and fills build_seconds of matching slices (the last
 * line of a slice wins: a rebuilt slice's time replaces the old one). */
static void
stats_times(const char *dir, egdb_slice_stats *st, size_t n)
{
    char path[4096], line[256];
    snprintf(path, sizeof path, "%s/build-log.tsv", dir);
    FILE *f = fopen(path, "r");
    if (!f)
        return;
    while (fgets(line, sizeof line, f)) {
        char name[16];
        unsigned long long pos;
        double sec;
        if (sscanf(line, "%15s %llu %lf", name, &pos, &sec) != 3)
            continue;
        for (size_t i = 0; i < n; i++)
            if (!strcmp(st[i].name, name))
                st[i].build_seconds = sec;
    }
    fclose(f);
}

int
egdb_stats(const char *dir, egdb_slice_stats **out, size_t *n, char *err, size_t errlen)
{
    size_t cap = 256, cnt = 0;
    egdb_slice_stats *st = malloc(cap * sizeof *st);
    if (!st)
        return EGDB_ENOMEM;
    int rc = 0;
    for (int np = 1; np <= EGDB_MAX_PIECES && rc == 0; np++) {
        egix_slice *sl;
        size_t k, present = 0;
        if ((rc = slices_of(np, &sl, &k)) != 0)
            break;
        for (size_t i = 0; i < k; i++) {
            char path[4096];
            egst_header h;
            uint64_t bytes;
            egst_path(dir, &sl[i], path, sizeof path);
            int r = egst_read_header(path, &h, &bytes, err, errlen);
            uint64_t cbytes = 0;
            egdc_slice *ce;
            int cr = egdc_open(dir, &sl[i], &ce, err, errlen);
            if (cr == 0) {
                cbytes = ce->map_len;
                if (r == EGDB_EMISSING) { /* only the compressed file is here */
                    h.positions = ce->h.positions;
                    h.wins = ce->h.wins;
                    h.losses = ce->h.losses;
                    h.draws = ce->h.draws;
                    bytes = 0;
                    r = 0;
                }
                egdc_close(ce);
            } else if (cr != EGDB_EMISSING) {
                rc = cr;
                break;
            }
            if (r == EGDB_EMISSING)
                continue;
            if (r != 0) {
                rc = r;
                break;
            }
            if (cnt == cap) {
                egdb_slice_stats *ns = realloc(st, 2 * cap * sizeof *st);
                if (!ns) {
                    rc = EGDB_ENOMEM;
                    break;
                }
                st = ns;
                cap *= 2;
            }
            egdb_slice_stats *s = &st[cnt++];
            memset(s, 0, sizeof *s);
            egix_slice_name(&sl[i], s->name, sizeof s->name);
            s->nbk = sl[i].nbk;
            s->nwk = sl[i].nwk;
            s->nbm = sl[i].nbm;
            s->nwm = sl[i].nwm;
            s->rb = sl[i].rb;
            s->rw = sl[i].rw;
            s->positions = h.positions;
            s->wins = h.wins;
            s->losses = h.losses;
            s->draws = h.draws;
            s->file_bytes = bytes;
            s->cfile_bytes = cbytes;
            present++;
        }
        free(sl);
        if (present == 0)
            break;
    }
    if (rc != 0) {
        free(st);
        return rc;
    }
    stats_times(dir, st, cnt);
    qsort(st, cnt, sizeof *st, stats_cmp);
    *out = st;
    *n = cnt;
    return 0;
}
