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
#include "prover/posmap.h"

/* A staged record (by the batch map's index). */
typedef struct adm_staged {
    pst_record rec;  /* canonical orientation */
    uint8_t reached; /* a walk took this record */
} adm_staged;

/* What the walks proved at one exact position (by the claims map's index). */
typedef struct adm_claim {
    int8_t lo, hi;   /* for the side to move */
    int32_t longest; /* a win's or loss's longest line */
    pst_move win, draw;
    uint64_t effort;
} adm_claim;

/* ---- helpers ------------------------------------------------------------ */

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

long
padm_index(const padm_items *it, const eng_pos *p)
{
    eng_pos c = eng_canonical(p);
    for (size_t i = 0; i < it->n; i++) {
        eng_pos k = eng_canonical(&it->v[i].pos);
        if (k.bm == c.bm && k.wm == c.wm && k.bk == c.bk && k.wk == c.wk)
            return (long)i;
    }
    return -1;
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
    pmap batch; /* staged records, by canonical position */
    adm_staged *staged;
    size_t staged_cap;
    pmap claims; /* what the walks proved, by exact position */
    adm_claim *claim;
    size_t claim_cap;
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
        long k = pmap_find(&w->batch, &c);
        if (k >= 0) {
            adm_staged *e = &w->staged[k];
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
walk_done(void *ctx, const eng_pos *p, int x, int win, uint64_t effort, const pst_move *used,
          int longest)
{
    adm_walk *w = ctx;
    int added;
    long k = pmap_add(&w->claims, p, &added);
    if (k < 0 || pmap_room((void **)&w->claim, &w->claim_cap, (size_t)k, sizeof *w->claim))
        return 1;
    adm_claim *e = &w->claim[k];
    if (added) {
        memset(e, 0, sizeof *e);
        e->lo = ENG_LOSS;
        e->hi = ENG_WIN;
        e->win.from = PST_NOMOVE;
        e->draw.from = PST_NOMOVE;
    }
    if (effort > e->effort)
        e->effort = effort;
    if (p->stm == x) {
        if (win) {
            e->lo = ENG_WIN;
            e->win = *used;
            e->longest = longest;
        } else {
            if (e->lo < ENG_DRAW)
                e->lo = ENG_DRAW;
            if (e->draw.from == PST_NOMOVE)
                e->draw = *used;
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
typedef struct emit_arg {
    const adm_walk *w;
    padm_items *out;
    int failed;
} emit_arg;

static void
emit_one(const eng_pos *p, uint32_t k, void *arg)
{
    emit_arg *a = arg;
    const adm_claim *e = &a->w->claim[k];
    pst_item it;
    memset(&it, 0, sizeof it);
    it.pos = *p;
    it.rec.bound = eng_bound_make(e->lo, e->hi);
    it.rec.win = e->lo == ENG_WIN ? e->win : (pst_move){PST_NOMOVE, 0, 0};
    it.rec.draw = e->lo >= ENG_DRAW ? e->draw : (pst_move){PST_NOMOVE, 0, 0};
    it.rec.effort = e->effort;
    int decided = it.rec.bound == ENG_WW || it.rec.bound == ENG_LL;
    it.rec.length =
        (uint16_t)(decided && e->longest > 0 ? (e->longest > UINT16_MAX ? UINT16_MAX : e->longest)
                                             : 0);
    if (it.rec.bound != ENG_LW && padm_push(a->out, &it)) /* LW cannot happen */
        a->failed = 1;
}

static int
emit_claims(const adm_walk *w, padm_items *out)
{
    emit_arg a = {w, out, 0};
    pmap_each(&w->claims, emit_one, &a);
    return a.failed ? PST_ENOMEM : 0;
}

static void
walk_free(adm_walk *w)
{
    pmap_free(&w->batch);
    pmap_free(&w->claims);
    free(w->staged);
    free(w->claim);
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
        eng_errf(err, errlen, "the record for %s (%s) contradicts the admitted %s", fen,
                 eng_bound_name(w->contra_staged), eng_bound_name(w->contra_stored));
        return rc;
    }
    if (rc < 0) {
        eng_errf(err, errlen, "%s", cerr);
        return rc;
    }
    if (ck->status == PCHK_INVALID) {
        eng_errf(err, errlen, "the proof fails the checker at %s: %s", ck->where, ck->why);
        return PADM_EREFUSED;
    }
    return 0;
}

/* The first staged position no walk reached (pmap_each). */
typedef struct outside_arg {
    const adm_walk *w;
    const eng_pos *pos;
    eng_pos at;
} outside_arg;

static void
first_outside(const eng_pos *p, uint32_t k, void *arg)
{
    outside_arg *a = arg;
    if (!a->pos && !a->w->staged[k].reached) {
        a->at = *p;
        a->pos = &a->at;
    }
}

/* ---- the public functions ------------------------------------------------ */

int
padm_admit(pst_env *st, const egdb *db, const pst_item *items, size_t n, const eng_pos *roots,
           size_t nroots, int strict, size_t max_items, padm_report *rep, char *err, size_t errlen)
{
    memset(rep, 0, sizeof *rep);
    if (max_items && n > max_items) {
        eng_errf(err, errlen, "a batch of %zu records, more than the %zu allowed", n, max_items);
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
            eng_errf(err, errlen, "%s", why);
            rc = PADM_EBADRECORD;
            goto out;
        }
        eng_pos c = eng_canonical(&items[i].pos);
        pst_record r = items[i].rec;
        if (items[i].pos.stm == ENG_WHITE)
            pst_record_turn(&r);
        int added;
        long k = pmap_add(&w.batch, &c, &added);
        if (k < 0 || pmap_room((void **)&w.staged, &w.staged_cap, (size_t)k, sizeof *w.staged)) {
            rc = PST_ENOMEM;
            eng_errf(err, errlen, "out of memory staging %zu records", n);
            goto out;
        }
        adm_staged *e = &w.staged[k];
        if (added) {
            e->rec = r;
            e->reached = 0;
        } else if (pst_record_merge(&e->rec, &r, &e->rec)) {
            eng_format_fen(&c, fen, sizeof fen);
            eng_errf(err, errlen, "two records of the batch for %s contradict each other", fen);
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
        if (pmap_find(&w.batch, &c) < 0) {
            eng_format_fen(root, fen, sizeof fen);
            eng_errf(err, errlen, "the batch holds no record for %s", fen);
            rc = PADM_ENOROOT;
            goto out;
        }
        pchk_result ck;
        if ((rc = walk_root(&w, db, root, &ck, err, errlen)))
            goto out;
        rep->leaves += ck.admitted;
    }
    /* 3. nothing outside the proofs */
    for (size_t k = 0; k < w.batch.n; k++)
        rep->reached += w.staged[k].reached;
    if (strict && rep->reached < w.batch.n) {
        outside_arg oa = {.w = &w};
        pmap_each(&w.batch, first_outside, &oa);
        eng_format_fen(oa.pos, fen, sizeof fen);
        eng_errf(err, errlen,
                 "the record for %s is part of no proof the batch claims (outside the job)", fen);
        rc = PADM_EOUTSIDE;
        goto out;
    }
    /* 4. write what was proven, in one transaction */
    padm_items wr = {0};
    if ((rc = emit_claims(&w, &wr))) {
        eng_errf(err, errlen, "out of memory");
        goto out;
    }
    char perr[512];
    rc = pst_put_many(st, wr.v, wr.n, perr, sizeof perr);
    if (rc == 0)
        rep->written = wr.n;
    padm_items_free(&wr);
    if (rc == PST_ECONTRADICT) {
        eng_errf(err, errlen, "%s", perr);
        rc = PADM_ECONTRADICT;
    } else if (rc) {
        eng_errf(err, errlen, "%s", perr);
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
        eng_errf(err, errlen, "out of memory");
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
