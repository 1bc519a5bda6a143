/*
 * collect.c - the records of a proof (collect.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "manager/collect.h"

/* A set of canonical positions (open addressing). */
typedef struct pos_set {
    eng_pos *v;
    uint8_t *used;
    size_t cap, n;
} pos_set;

static size_t
slot_of(const pos_set *s, const eng_pos *c)
{
    uint64_t h = eng_key(c) * 0x9e3779b97f4a7c15ull;
    size_t i = (size_t)(h >> 20) & (s->cap - 1);
    while (s->used[i] && !eng_equal(&s->v[i], c))
        i = (i + 1) & (s->cap - 1);
    return i;
}

/* Adds c; RETURN 1 when new, 0 when present, -1 out of memory. */
static int
set_add(pos_set *s, const eng_pos *c)
{
    if ((s->n + 1) * 2 > s->cap) {
        pos_set ns = {NULL, NULL, s->cap ? s->cap * 2 : 1024, 0};
        ns.v = malloc(ns.cap * sizeof *ns.v);
        ns.used = calloc(ns.cap, 1);
        if (!ns.v || !ns.used) {
            free(ns.v);
            free(ns.used);
            return -1;
        }
        for (size_t i = 0; i < s->cap; i++)
            if (s->used[i]) {
                size_t j = slot_of(&ns, &s->v[i]);
                ns.v[j] = s->v[i];
                ns.used[j] = 1;
                ns.n++;
            }
        free(s->v);
        free(s->used);
        *s = ns;
    }
    size_t i = slot_of(s, c);
    if (s->used[i])
        return 0;
    s->v[i] = *c;
    s->used[i] = 1;
    s->n++;
    return 1;
}

int
mgc_push(mgc_items *out, const pst_item *it)
{
    if (out->n == out->cap) {
        size_t nc = out->cap ? out->cap * 2 : 256;
        pst_item *nv = realloc(out->v, nc * sizeof *nv);
        if (!nv)
            return PST_ENOMEM;
        out->v = nv;
        out->cap = nc;
    }
    out->v[out->n++] = *it;
    return 0;
}

typedef struct frame {
    eng_pos p;
    eng_movelist ml;
    int next; /* next move to follow (-1: the stored move only, done) */
} frame;

/* One proof: colour x wins (win != 0) or at least draws, from root. */
static int
follow(pst_env *st, int db_pieces, const eng_pos *root, int x, int win, pos_set *seen,
       mgc_items *out, char *err, size_t errlen)
{
    size_t cap = 256, top = 0;
    frame *stk = malloc(cap * sizeof *stk);
    if (!stk)
        return PST_ENOMEM;
    int rc = 0;
    eng_pos start = *root;
    int have = 1;
    while (have || top) {
        if (have) {
            have = 0;
            eng_pos p = start;
            eng_movelist ml;
            eng_generate(&p, &ml, ENG_DUPS_MERGE);
            if (ml.n == 0 || eng_pieces(&p) <= db_pieces)
                continue;
            eng_pos c = eng_canonical(&p);
            int a = set_add(seen, &c);
            if (a < 0) {
                rc = PST_ENOMEM;
                break;
            }
            if (a == 0)
                continue;
            pst_record r;
            rc = pst_get(st, &p, &r);
            if (rc) {
                char fen[ENG_FEN_MAX];
                eng_format_fen(&p, fen, sizeof fen);
                snprintf(err, errlen, "%s: the proof needs a record at %s (%s)",
                         x == ENG_BLACK ? "Black" : "White", fen, pst_strerror(rc));
                break;
            }
            pst_item it = {p, r};
            if ((rc = mgc_push(out, &it)))
                break;
            if (top == cap) {
                frame *ns = realloc(stk, cap * 2 * sizeof *ns);
                if (!ns) {
                    rc = PST_ENOMEM;
                    break;
                }
                stk = ns;
                cap *= 2;
            }
            frame *f = &stk[top++];
            f->p = p;
            f->ml = ml;
            f->next = 0;
            if (p.stm == x) {
                const pst_move *pm = win ? &r.win : (r.draw.from != PST_NOMOVE ? &r.draw : &r.win);
                eng_move m;
                if (pm->from == PST_NOMOVE || pst_move_find(&p, pm, &m)) {
                    char fen[ENG_FEN_MAX];
                    eng_format_fen(&p, fen, sizeof fen);
                    snprintf(err, errlen, "%s: the record at %s has no usable move",
                             x == ENG_BLACK ? "Black" : "White", fen);
                    rc = PST_ENOTFOUND;
                    break;
                }
                f->ml.n = 1;
                f->ml.m[0] = m;
            }
        }
        frame *f = &stk[top - 1];
        if (f->next >= f->ml.n) {
            top--;
            continue;
        }
        eng_make(&f->p, &f->ml.m[f->next++], &start);
        have = 1;
    }
    free(stk);
    return rc;
}

int
mgc_collect(pst_env *st, int db_pieces, const eng_pos *root, mgc_items *out, char *err,
            size_t errlen)
{
    pst_record r;
    int rc = pst_get(st, root, &r);
    if (rc == PST_ENOTFOUND)
        return 0;
    if (rc)
        return rc;
    int lo = eng_bound_lo(r.bound), hi = eng_bound_hi(r.bound);
    int s = root->stm, o = !root->stm;
    struct {
        int ok, x, win;
    } goals[4] = {{lo == ENG_WIN, s, 1},
                  {lo >= ENG_DRAW, s, 0},
                  {hi == ENG_LOSS, o, 1},
                  {hi <= ENG_DRAW, o, 0}};
    for (int g = 0; g < 4 && !rc; g++) {
        if (!goals[g].ok)
            continue;
        pos_set seen = {0};
        rc = follow(st, db_pieces, root, goals[g].x, goals[g].win, &seen, out, err, errlen);
        free(seen.v);
        free(seen.used);
    }
    return rc;
}

void
mgc_free(mgc_items *it)
{
    free(it->v);
    it->v = NULL;
    it->n = it->cap = 0;
}
