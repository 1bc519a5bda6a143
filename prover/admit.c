/*
 * admit.c - admission of records into a proof store (admit.h).
 *
 * Two maps of positions: the batch (staged records, keyed by the
 * canonical position as the store keys them) and the claims the checker
 * proved (keyed by the exact position, side to move included, because
 * the checker's proofs are of exact positions). The checker walks with
 * a source that answers from the batch first and from the store second,
 * and a visitor that fills the claims; what is written is made from the
 * claims alone.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "prover/admit.h"

#define ADM_MAP_MIN 1024 /* first size of a map (a power of 2) */

/* ---- a map of positions ------------------------------------------------ */

typedef struct adm_entry {
    eng_pos pos;
    uint8_t used;    /* a slot in use */
    uint8_t reached; /* batch: a walk took this record */
    int8_t lo, hi;   /* claims: what is proven for the side to move */
    int32_t longest; /* claims: a win's or loss's longest line */
    pst_record rec;  /* batch: the record, canonical; claims: the moves proven */
} adm_entry;

typedef struct adm_map {
    adm_entry *slot;
    size_t cap, n; /* cap a power of 2, or 0 before the first insertion */
} adm_map;

static size_t
map_hash(const eng_pos *p)
{
    uint64_t h = eng_key(p);
    if (p->stm)
        h ^= 0x9E3779B97F4A7C15ull;
    return (size_t)(h ^ (h >> 29));
}

static int
same_pos(const eng_pos *a, const eng_pos *b)
{
    return a->bm == b->bm && a->wm == b->wm && a->bk == b->bk && a->wk == b->wk && a->stm == b->stm;
}

static adm_entry *
map_find(const adm_map *m, const eng_pos *p)
{
    if (m->cap == 0)
        return NULL;
    size_t mask = m->cap - 1;
    for (size_t i = map_hash(p) & mask;; i = (i + 1) & mask) {
        adm_entry *e = &m->slot[i];
        if (!e->used)
            return NULL;
        if (same_pos(&e->pos, p))
            return e;
    }
}

static int
map_grow(adm_map *m)
{
    size_t cap = m->cap ? m->cap * 2 : ADM_MAP_MIN;
    if (cap < m->cap || cap > SIZE_MAX / sizeof(adm_entry))
        return PST_ENOMEM;
    adm_entry *slot = calloc(cap, sizeof *slot);
    if (!slot)
        return PST_ENOMEM;
    for (size_t i = 0; i < m->cap; i++) {
        if (!m->slot[i].used)
            continue;
        size_t j = map_hash(&m->slot[i].pos) & (cap - 1);
        while (slot[j].used)
            j = (j + 1) & (cap - 1);
        slot[j] = m->slot[i];
    }
    free(m->slot);
    m->slot = slot;
    m->cap = cap;
    return 0;
}

/* The entry of p, added (zeroed but for pos) when missing; NULL when out
 * of memory. Growing moves entries: earlier pointers die here. */
static adm_entry *
map_get(adm_map *m, const eng_pos *p)
{
    adm_entry *e = map_find(m, p);
    if (e)
        return e;
    if ((m->n + 1) * 2 > m->cap && map_grow(m) != 0)
        return NULL;
    size_t i = map_hash(p) & (m->cap - 1);
    while (m->slot[i].used)
        i = (i + 1) & (m->cap - 1);
    e = &m->slot[i];
    memset(e, 0, sizeof *e);
    e->pos = *p;
    e->used = 1;
    m->n++;
    return e;
}

static void
map_free(adm_map *m)
{
    free(m->slot);
    memset(m, 0, sizeof *m);
}

/* ---- helpers ------------------------------------------------------------ */

static void
set_err(char *err, size_t errlen, const char *fmt, ...)
{
    if (!err || errlen == 0)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
}

int
padm_push(padm_items *out, const pst_item *it)
{
    if (out->n == out->cap) {
        size_t cap = out->cap ? out->cap * 2 : 256;
        pst_item *v = realloc(out->v, cap * sizeof *v);
        if (!v)
            return PST_ENOMEM;
        out->v = v;
        out->cap = cap;
    }
    out->v[out->n++] = *it;
    return 0;
}

void
padm_items_free(padm_items *it)
{
    free(it->v);
    memset(it, 0, sizeof *it);
}

/* ---- the walk's source and visitor -------------------------------------- */

typedef struct adm_walk {
    pst_env *st;
    adm_map batch;  /* staged records (canonical positions) */
    adm_map claims; /* what the walks proved (exact positions) */
    int use_batch;  /* admission: the batch first, the store admitted */
    eng_pos contra; /* PADM_ECONTRADICT from walk_get: where, and the two bounds */
    eng_bound contra_stored, contra_staged;
} adm_walk;

static int
walk_get(void *ctx, const eng_pos *p, pst_record *out)
{
    adm_walk *w = ctx;
    if (w->use_batch) {
        eng_pos c = eng_canonical(p);
        adm_entry *e = map_find(&w->batch, &c);
        if (e) {
            e->reached = 1;
            pst_record r = e->rec;
            if (p->stm == ENG_WHITE)
                pst_record_turn(&r);
            /* with what the store already holds: the bounds intersected,
             * the batch's moves first (so that its proof is the one
             * walked), the store's where the batch has none */
            pst_record s;
            int rc = pst_get(w->st, p, &s);
            if (rc == 0) {
                eng_bound m = eng_bound_meet(r.bound, s.bound);
                if (m == ENG_BOUND_INVALID) {
                    w->contra = *p;
                    w->contra_stored = s.bound;
                    w->contra_staged = r.bound;
                    return PADM_ECONTRADICT;
                }
                r.bound = m;
                if (r.win.from == PST_NOMOVE)
                    r.win = s.win;
                if (r.draw.from == PST_NOMOVE)
                    r.draw = s.draw;
            } else if (rc != PST_ENOTFOUND) {
                return rc;
            }
            *out = r;
            return 0;
        }
    }
    int rc = pst_get(w->st, p, out);
    if (rc == 0 && w->use_batch)
        return PCHK_SRC_ADMITTED;
    return rc;
}

/* A proof for x complete at p: the claim it proves, for p's side to move. */
static int
walk_done(void *ctx, const eng_pos *p, int x, int win, const pst_record *rec, const pst_move *used,
          int longest)
{
    adm_walk *w = ctx;
    adm_entry *e = map_find(&w->claims, p);
    if (!e) {
        if (!(e = map_get(&w->claims, p)))
            return 1;
        e->lo = ENG_LOSS;
        e->hi = ENG_WIN;
        e->rec.win.from = PST_NOMOVE;
        e->rec.draw.from = PST_NOMOVE;
    }
    if (rec->effort > e->rec.effort)
        e->rec.effort = rec->effort;
    if (p->stm == x) {
        if (win) {
            e->lo = ENG_WIN;
            e->rec.win = *used;
            e->longest = longest;
        } else {
            if (e->lo < ENG_DRAW)
                e->lo = ENG_DRAW;
            if (e->rec.draw.from == PST_NOMOVE)
                e->rec.draw = *used;
        }
    } else if (win) {
        e->hi = ENG_LOSS;
        e->longest = longest;
    } else if (e->hi > ENG_DRAW) {
        e->hi = ENG_DRAW;
    }
    return 0;
}

/* The claims as records to write. */
static int
emit_claims(const adm_walk *w, padm_items *out)
{
    for (size_t i = 0; i < w->claims.cap; i++) {
        const adm_entry *e = &w->claims.slot[i];
        if (!e->used)
            continue;
        pst_item it;
        memset(&it, 0, sizeof it);
        it.pos = e->pos;
        it.rec.bound = eng_bound_make(e->lo, e->hi);
        it.rec.win = e->lo == ENG_WIN ? e->rec.win : (pst_move){PST_NOMOVE, 0, 0};
        it.rec.draw = e->lo >= ENG_DRAW ? e->rec.draw : (pst_move){PST_NOMOVE, 0, 0};
        it.rec.effort = e->rec.effort;
        int decided = it.rec.bound == ENG_WW || it.rec.bound == ENG_LL;
        it.rec.length = (uint16_t)(decided && e->longest > 0
                                       ? (e->longest > UINT16_MAX ? UINT16_MAX : e->longest)
                                       : 0);
        if (it.rec.bound == ENG_LW)
            continue; /* cannot happen: every claim proves something */
        if (padm_push(out, &it))
            return PST_ENOMEM;
    }
    return 0;
}

static void
walk_free(adm_walk *w)
{
    map_free(&w->batch);
    map_free(&w->claims);
}

/* Runs the checker from root over w, filling the claims. RETURN 0 (valid),
 * PADM_EREFUSED, PST_E*. */
static int
walk_root(adm_walk *w, const egdb *db, const eng_pos *root, pchk_result *ck, char *err,
          size_t errlen)
{
    pchk_source src = {walk_get, w};
    pchk_visitor vis = {walk_done, w};
    char cerr[256] = "";
    int rc = pchk_check_with(&src, &vis, db, root, ck, cerr, sizeof cerr);
    if (rc == PADM_ECONTRADICT) {
        char fen[ENG_FEN_MAX];
        eng_format_fen(&w->contra, fen, sizeof fen);
        set_err(err, errlen, "the record for %s (%s) contradicts the admitted %s", fen,
                eng_bound_name(w->contra_staged), eng_bound_name(w->contra_stored));
        return rc;
    }
    if (rc < 0) {
        set_err(err, errlen, "%s", cerr);
        return rc;
    }
    if (ck->status == PCHK_INVALID) {
        set_err(err, errlen, "the proof fails the checker at %s: %s", ck->where, ck->why);
        return PADM_EREFUSED;
    }
    return 0;
}

/* ---- the public functions ------------------------------------------------ */

int
padm_admit(pst_env *st, const egdb *db, const pst_item *items, size_t n, const eng_pos *roots,
           size_t nroots, int strict, size_t max_items, padm_report *rep, char *err, size_t errlen)
{
    memset(rep, 0, sizeof *rep);
    if (max_items && n > max_items) {
        set_err(err, errlen, "a batch of %zu records, more than the %zu allowed", n, max_items);
        return PADM_ETOOMANY;
    }
    adm_walk w;
    memset(&w, 0, sizeof w);
    w.st = st;
    w.use_batch = 1;
    int rc = 0;
    char fen[ENG_FEN_MAX];
    /* 1. stage: every record checked as the store would, merged by position */
    for (size_t i = 0; i < n; i++) {
        char why[256];
        if (pst_item_check(&items[i], i, why, sizeof why)) {
            set_err(err, errlen, "%s", why);
            rc = PADM_EBADRECORD;
            goto out;
        }
        eng_pos c = eng_canonical(&items[i].pos);
        pst_record r = items[i].rec;
        if (items[i].pos.stm == ENG_WHITE)
            pst_record_turn(&r);
        adm_entry *e = map_find(&w.batch, &c);
        if (!e) {
            if (!(e = map_get(&w.batch, &c))) {
                rc = PST_ENOMEM;
                set_err(err, errlen, "out of memory staging %zu records", n);
                goto out;
            }
            e->rec = r;
        } else if (pst_record_merge(&e->rec, &r, &e->rec)) {
            eng_format_fen(&c, fen, sizeof fen);
            set_err(err, errlen, "two records of the batch for %s contradict each other", fen);
            rc = PADM_ECONTRADICT;
            goto out;
        }
    }
    rep->staged = w.batch.n;
    /* 2. check: every claim of every root's record */
    if (!roots)
        nroots = n;
    for (size_t k = 0; k < nroots; k++) {
        const eng_pos *root = roots ? &roots[k] : &items[k].pos;
        eng_pos c = eng_canonical(root);
        if (!map_find(&w.batch, &c)) {
            eng_format_fen(root, fen, sizeof fen);
            set_err(err, errlen, "the batch holds no record for %s", fen);
            rc = PADM_ENOROOT;
            goto out;
        }
        pchk_result ck;
        if ((rc = walk_root(&w, db, root, &ck, err, errlen)))
            goto out;
        rep->leaves += ck.admitted;
    }
    /* 3. nothing outside the proofs */
    for (size_t i = 0; i < w.batch.cap; i++) {
        const adm_entry *e = &w.batch.slot[i];
        if (!e->used)
            continue;
        if (e->reached) {
            rep->reached++;
        } else if (strict) {
            eng_format_fen(&e->pos, fen, sizeof fen);
            set_err(err, errlen,
                    "the record for %s is part of no proof the batch claims (outside the job)",
                    fen);
            rc = PADM_EOUTSIDE;
            goto out;
        }
    }
    /* 4. write what was proven, in one transaction */
    padm_items wr = {0};
    if ((rc = emit_claims(&w, &wr))) {
        set_err(err, errlen, "out of memory");
        goto out;
    }
    char perr[512];
    rc = pst_put_many(st, wr.v, wr.n, perr, sizeof perr);
    if (rc == 0)
        rep->written = wr.n;
    padm_items_free(&wr);
    if (rc == PST_ECONTRADICT) {
        set_err(err, errlen, "%s", perr);
        rc = PADM_ECONTRADICT;
    } else if (rc) {
        set_err(err, errlen, "%s", perr);
    }
out:
    walk_free(&w);
    return rc;
}

int
padm_collect(pst_env *st, const egdb *db, const eng_pos *root, padm_items *out, char *err,
             size_t errlen)
{
    adm_walk w;
    memset(&w, 0, sizeof w);
    w.st = st;
    pchk_result ck;
    int rc = walk_root(&w, db, root, &ck, err, errlen);
    if (rc == 0 && ck.status == PCHK_VALID && emit_claims(&w, out)) {
        set_err(err, errlen, "out of memory");
        rc = PST_ENOMEM;
    }
    walk_free(&w);
    return rc;
}

const char *
padm_strerror(int code)
{
    switch (code) {
    case PADM_EREFUSED:
        return "a proof fails the checker";
    case PADM_EBADRECORD:
        return "a record the store would refuse";
    case PADM_ECONTRADICT:
        return "records that contradict each other or the store";
    case PADM_EOUTSIDE:
        return "a record outside the claimed proofs";
    case PADM_ENOROOT:
        return "no record for the job's position";
    case PADM_ETOOMANY:
        return "too many records";
    default:
        return pst_strerror(code);
    }
}
