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
#include "prover/leaf.h"
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

/* pchk_source's hint: the batch's slot for p (the store's tree is
 * left to LMDB). */
static void
walk_prefetch(void *ctx, const eng_pos *p)
{
    adm_walk *w = ctx;
    if (w->use_batch) {
        eng_pos c = eng_canonical(p);
        pmap_prefetch(&w->batch, &c);
    }
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
    pchk_source src = {walk_get, w, walk_prefetch};
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

/* ---- what a worker sends (admit.h, WHAT A WORKER SENDS) ------------------ */

/* The acknowledged claims: a bound by canonical position. A bound for the
 * side to move is the same for a position and its colour-flipped twin
 * (only the moves turn), so one entry serves both, as in the store. */
struct padm_sent {
    pmap map;
    int8_t *bound; /* by the map's index */
    size_t cap;
};

int
padm_sent_new(padm_sent **out)
{
    *out = calloc(1, sizeof **out);
    return *out ? 0 : PST_ENOMEM;
}

void
padm_sent_free(padm_sent *s)
{
    if (!s)
        return;
    pmap_free(&s->map);
    free(s->bound);
    free(s);
}

void
padm_sent_clear(padm_sent *s)
{
    pmap_clear(&s->map);
}

size_t
padm_sent_count(const padm_sent *s)
{
    return s->map.n;
}

int
padm_sent_add(padm_sent *s, const pst_item *items, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        eng_pos c = eng_canonical(&items[i].pos);
        int added;
        long k = pmap_add(&s->map, &c, &added);
        if (k < 0 || pmap_room((void **)&s->bound, &s->cap, (size_t)k, sizeof *s->bound))
            return PST_ENOMEM;
        eng_bound b = items[i].rec.bound;
        if (!added) {
            /* both were admitted, so both hold: they meet (an empty meet
             * cannot happen; the old bound is kept if it does) */
            eng_bound m = eng_bound_meet((eng_bound)s->bound[k], b);
            b = m == ENG_BOUND_INVALID ? (eng_bound)s->bound[k] : m;
        }
        s->bound[k] = (int8_t)b;
    }
    return 0;
}

int
padm_sent_covers(const padm_sent *s, const eng_pos *p, int x, int win)
{
    if (!s)
        return 0;
    eng_pos c = eng_canonical(p);
    long k = pmap_find(&s->map, &c);
    if (k < 0)
        return 0;
    eng_bound b = (eng_bound)s->bound[k];
    /* the checker's rule for an admitted leaf (check.c, open_stored) */
    int x_lo = p->stm == x ? eng_bound_lo(b) : -eng_bound_hi(b);
    return x_lo >= (win ? ENG_WIN : ENG_DRAW);
}

/* The gathering walk over the worker's store: one goal (x wins, or at
 * least draws), the positions taken (exact, as the checker's walk keys
 * them), and the stack of those whose records are still to be read. */
typedef struct gather {
    pst_env *st;
    const egdb *db;
    int x, win;
    const padm_sent *sent;
    pmap seen; /* the writer's positions and every position gathered */
    eng_pos *stack;
    size_t depth, cap;
    padm_items *out;
    char *err;
    size_t errlen;
} gather;

static int
gather_push(gather *g, const eng_pos *p)
{
    if (pmap_room((void **)&g->stack, &g->cap, g->depth, sizeof *g->stack))
        return PST_ENOMEM;
    g->stack[g->depth++] = *p;
    return 0;
}

/* p is a child of a gathered record (or a rest of the writer's): taken
 * when the proof needs its record (not a leaf that answers the goal, not
 * taken before, not acknowledged). RETURN 0, PADM_EREFUSED (a leaf that
 * fails the goal), or a PST_E* code. */
static int
gather_take(gather *g, const eng_pos *p, int force)
{
    pleaf lf;
    int v = pleaf_of(g->db, g->db ? egdb_scope(g->db) : 0, p, 0, &lf);
    if (v) {
        char fen[ENG_FEN_MAX];
        eng_format_fen(p, fen, sizeof fen);
        eng_errf(g->err, g->errlen, "database probe of %s failed: %s", fen, egdb_strerror(v));
        return v == EGDB_ECORRUPT ? PST_ECORRUPT : v == EGDB_ENOMEM ? PST_ENOMEM : PST_EIO;
    }
    eng_question q = {g->x, g->win ? ENG_WIN : ENG_DRAW};
    int ans = lf.kind == PLEAF_NONE ? 0 : pleaf_answer(&lf, &q, p->stm);
    if (ans > 0)
        return 0;
    if (ans < 0) {
        char fen[ENG_FEN_MAX];
        eng_format_fen(p, fen, sizeof fen);
        eng_errf(g->err, g->errlen, "the stored proof reaches %s, a leaf that fails the goal", fen);
        return PADM_EREFUSED;
    }
    if (!force && padm_sent_covers(g->sent, p, g->x, g->win))
        return 0; /* admitted: a leaf of admission's walk */
    int added;
    if (pmap_add(&g->seen, p, &added) < 0)
        return PST_ENOMEM;
    return added ? gather_push(g, p) : 0;
}

/* The record of p (popped from the stack) restricted to the goal, into
 * the batch, and its children taken. RETURN as gather_take. */
static int
gather_one(gather *g, const eng_pos *p)
{
    char fen[ENG_FEN_MAX];
    pst_record r;
    int rc = pst_get(g->st, p, &r);
    if (rc == PST_ENOTFOUND || (rc == 0 && !eng_bound_valid(r.bound))) {
        eng_format_fen(p, fen, sizeof fen);
        eng_errf(g->err, g->errlen, "the proof rests on %s, which the store does not hold", fen);
        return PADM_EREFUSED;
    }
    if (rc) {
        eng_format_fen(p, fen, sizeof fen);
        eng_errf(g->err, g->errlen, "the store's record of %s cannot be read: %s", fen,
                 pst_strerror(rc));
        return rc;
    }
    int need = g->win ? ENG_WIN : ENG_DRAW, mover = p->stm == g->x;
    int x_lo = mover ? eng_bound_lo(r.bound) : -eng_bound_hi(r.bound);
    /* the move the checker will follow (check.c, open_stored): the win
     * move for a win; for a draw the draw move, else a win's move */
    const pst_move *pm = NULL;
    if (mover)
        pm = g->win || r.draw.from == PST_NOMOVE ? &r.win : &r.draw;
    eng_move own;
    if (x_lo < need || (pm && (pm->from == PST_NOMOVE || pst_move_find(p, pm, &own)))) {
        eng_format_fen(p, fen, sizeof fen);
        eng_errf(g->err, g->errlen, "the stored record of %s (%s) does not prove the goal", fen,
                 eng_bound_name(r.bound));
        return PADM_EREFUSED;
    }
    pst_item it;
    memset(&it, 0, sizeof it);
    it.pos = *p;
    it.rec.bound = g->win ? (mover ? ENG_WW : ENG_LL) : (mover ? ENG_DW : ENG_LD);
    it.rec.win.from = it.rec.draw.from = PST_NOMOVE;
    if (pm)
        *(g->win ? &it.rec.win : &it.rec.draw) = *pm;
    it.rec.effort = r.effort;
    it.rec.length = g->win ? r.length : 0;
    if (padm_push(g->out, &it))
        return PST_ENOMEM;
    eng_movelist ml;
    int n = mover ? 1 : eng_generate(p, &ml, ENG_DUPS_MERGE);
    if (mover)
        ml.m[0] = own;
    for (int k = 0; k < n; k++) {
        eng_pos c;
        eng_make(p, &ml.m[k], &c);
        if ((rc = gather_take(g, &c, 0)))
            return rc;
    }
    return 0;
}

int
padm_gather(pst_env *st, const egdb *db, const eng_pos *root, eng_bound claim,
            const pst_item *written, size_t nwritten, const eng_pos *rests, size_t nrests,
            const padm_sent *sent, padm_items *out, char *err, size_t errlen)
{
    gather g;
    memset(&g, 0, sizeof g);
    g.st = st, g.db = db, g.sent = sent, g.out = out, g.err = err, g.errlen = errlen;
    /* the claim's goal: who proves what (prover.h, VALUES AND QUERIES) */
    switch (claim) {
    case ENG_WW:
        g.x = root->stm, g.win = 1;
        break;
    case ENG_LL:
        g.x = !root->stm, g.win = 1;
        break;
    case ENG_DW:
        g.x = root->stm, g.win = 0;
        break;
    case ENG_LD:
        g.x = !root->stm, g.win = 0;
        break;
    default:
        eng_errf(err, errlen, "%s is not one claim", eng_bound_name(claim));
        return PADM_EBADRECORD;
    }
    int rc = 0;
    for (size_t i = 0; i < nwritten; i++)
        if ((rc = padm_push(out, &written[i])))
            goto done;
    /* What the gathering takes is new to the batch: the writer's own
     * positions are not walked again (each of its records already is in
     * the batch, and the store, written since, would lead through them
     * back over the whole proof). The set is made only when some rest
     * needs its record sent. */
    int seeded = 0;
    for (size_t i = 0; i < nrests && rc == 0; i++) {
        int is_root = eng_equal(&rests[i], root);
        int force = is_root && nwritten == 0; /* the root's own record: always sent */
        if (!force && padm_sent_covers(sent, &rests[i], g.x, g.win))
            continue;
        if (!seeded) {
            for (size_t k = 0; k < nwritten; k++)
                if (pmap_add(&g.seen, &written[k].pos, NULL) < 0) {
                    rc = PST_ENOMEM;
                    goto done;
                }
            seeded = 1;
        }
        if ((rc = gather_take(&g, &rests[i], force)))
            goto done;
        while (g.depth && rc == 0) {
            eng_pos p = g.stack[--g.depth];
            rc = gather_one(&g, &p);
        }
    }
done:
    if (rc == PST_ENOMEM)
        eng_errf(err, errlen, "out of memory gathering the proof");
    pmap_free(&g.seen);
    free(g.stack);
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
