/*
 * dfpn_table.c - the df-pn solver's memory: the transposition table (a
 * fact or open numbers a position), the path-dependent table, and the
 * unanswered queries a later one may resume (dfpn_internal.h says how the
 * solver's parts fit).
 */
#include <stdlib.h>
#include <string.h>

#include "engine/value.h"
#include "prover/dfpn_internal.h"

/* ---- the transposition table ------------------------------------------ */

/*
 * THE TABLE ACROSS QUERIES
 * A worker keeps one table for its whole life (prv_opts.ctx), so that a
 * job learns from the jobs before it. Each query is a generation; what an
 * entry holds decides how long it is believed:
 *   a final entry is a fact about its position, a bound for the side to
 *   move (the attacker wins, the defender at least draws, ...), true
 *   whatever question or line led to it (prover.h: reach results never
 *   rest on a repetition; safety results enter the table only when they
 *   rest on no line above them). Every later query reads it in its own
 *   terms, as it reads the store: "White wins" answers both "does White
 *   win" and "does Black draw". Facts about one position from different
 *   queries are merged into one bound (eng_bound_meet). A fact found by
 *   an optimistic search (dfpn_opts.optimistic) may rest on a line it
 *   was not proven on: it is marked F_LOOSE and only its own query reads
 *   it (and that query resumed): loose facts carried to other queries
 *   made optimistic answers the walk could not close, and re-searches
 *   that cost a hundred times the work (bench/rejobs.c, first version).
 *   an open entry (numbers) means something only for its query's root,
 *   question and depth round: it is live in its own generation and round.
 *   When a query stops unanswered (its budget ran out), its root,
 *   question, generation and round are remembered (NSUSP of them); the
 *   same query asked again (a re-job of the same leaf) resumes at that
 *   round, with that generation's open entries live again until its
 *   first new round.
 * Entries are aged, not cleared: the garbage collector and the bucket's
 * replacement weigh an entry's effort halved for each generation since it
 * was last used, so old work gives way to new, and proofs stay longest.
 * Only when the 8-bit generation wraps are open entries swept (a stale
 * generation must never look current) and the path-dependent table
 * cleared.
 */

/* An open entry still live: of this query's round (or of the query it
 * resumes, until its first new round). */
static int
open_live(const dfpn_ctx *c, const tt_entry *e)
{
    unsigned r = (unsigned)e->flags >> ROUND_SHIFT;
    if (e->gen == c->gen)
        return r == ((unsigned)c->round & 31);
    return c->resumed && e->gen == c->rgen && c->round == c->rround &&
           r == ((unsigned)c->rround & 31);
}

/* A slot that holds nothing worth keeping. */
static int
dead(const dfpn_ctx *c, const tt_entry *e)
{
    if (!(e->flags & F_USED))
        return 1;
    return !(e->flags & F_FINAL) && !open_live(c, e);
}

static int
same_entry_pos(const tt_entry *e, const eng_pos *p)
{
    return (e->flags & F_WHITE) == (p->stm ? F_WHITE : 0) && e->bm == p->bm && e->wm == p->wm &&
           e->bk == p->bk && e->wk == p->wk;
}

static eng_bound
entry_bound(const tt_entry *e)
{
    return (eng_bound)(((unsigned)e->flags >> BOUND_SHIFT) & 7);
}

/* What a final entry says to this query: 1 the attacker succeeds, 0 the
 * defender does, -1 nothing (or a loose fact of another query). */
static int
fact_answer(const dfpn_ctx *c, const tt_entry *e)
{
    if ((e->flags & F_LOOSE) &&
        (!c->loose || (e->gen != c->gen && !(c->resumed && e->gen == c->rgen))))
        return -1;
    int stm = (e->flags & F_WHITE) ? ENG_WHITE : ENG_BLACK;
    eng_question q = {c->attacker, c->goal == DFPN_WIN ? ENG_WIN : ENG_DRAW};
    int a = eng_question_answer(&q, stm, entry_bound(e));
    return a > 0 ? 1 : a < 0 ? 0 : -1;
}

/* The fact a final result of this query states, as a bound for p's side
 * to move. */
static eng_bound
fact_of(const dfpn_ctx *c, const eng_pos *p, int attacker_success)
{
    eng_bound b;
    if (attacker_success)
        b = c->goal == DFPN_WIN ? ENG_WW : ENG_DW;
    else
        b = c->goal == DFPN_WIN ? ENG_LD : ENG_LL;
    return p->stm == c->attacker ? b : eng_bound_neg(b);
}

void
dfpn_tt_find(dfpn_ctx *c, const eng_pos *p, uint64_t key, look *l)
{
    tt_entry *b = &c->tt[(key & (c->nbuckets - 1)) * BUCKET];
    l->fin = l->open = NULL;
    for (int i = 0; i < BUCKET; i++) {
        tt_entry *e = &b[i];
        if (!(e->flags & F_USED) || !same_entry_pos(e, p))
            continue;
        if (e->flags & F_FINAL) {
            int a = fact_answer(c, e);
            if (a >= 0 && !l->fin) {
                l->fin = e;
                l->att_won = a;
                l->len = (uint16_t)e->pn;
                e->gen = c->gen; /* used again: young again */
            }
        } else if (open_live(c, e)) {
            l->open = e;
        }
    }
}

static int
cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* What an entry is worth keeping: its effort (a final one counts
 * DFPN_FINAL_BONUS more), halved for each generation since its last use. */
static uint64_t
entry_score(const dfpn_ctx *c, const tt_entry *e)
{
    uint64_t s = (uint64_t)e->work + ((e->flags & F_FINAL) ? DFPN_FINAL_BONUS : 0);
    unsigned age = (uint8_t)(c->gen - e->gen);
    return age >= 40 ? 0 : s >> age;
}

/*
 * GARBAGE COLLECTION (small-tree GC)
 * Frees every entry whose score (entry_score: effort, the bonus of a
 * final entry, aged) is below the median of a sample, and every dead one.
 * Entries that cost little to recompute, or that no recent query used,
 * go; proofs and big subtrees stay. Freeing an entry loses only
 * information, never correctness: a missing child is valued afresh.
 */
static void
tt_gc(dfpn_ctx *c)
{
    size_t n = c->nbuckets * BUCKET;
    uint64_t *s = malloc(GC_SAMPLE * sizeof *s);
    if (!s)
        return; /* bucket replacement still bounds the table */
    size_t k = 0;
    uint64_t x = 0x243F6A8885A308D3ull ^ c->gc_runs;
    for (int tries = 0; k < GC_SAMPLE && tries < 4 * GC_SAMPLE; tries++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        const tt_entry *e = &c->tt[x % n];
        if (!dead(c, e))
            s[k++] = entry_score(c, e);
    }
    qsort(s, k, sizeof *s, cmp_u64); /* 16k numbers, once a collection */
    uint64_t median = k ? s[k / 2] : 0;
    free(s);
    size_t kept = 0; /* recounted: dead entries are freed unseen */
    for (size_t i = 0; i < n; i++) {
        tt_entry *e = &c->tt[i];
        if (dead(c, e) || entry_score(c, e) <= median)
            e->flags = 0;
        else
            kept++;
    }
    c->used = kept;
    c->gc_runs++;
}

/*
 * A FACT GIVEN UP IS KEPT ASIDE (dfpn_set_kept)
 * A strict fact that a full bucket gives up (A STRICT FACT GIVES WAY
 * LAST: all four were strict facts) is copied into a second table, open
 * addressing by key, which doubles as it fills, up to its ceiling; at the
 * ceiling and three quarters full it is emptied and starts again (the
 * facts are then only lost, as without it). Only the walks read it
 * (dfpn_tt_find_kept): on a miss in the table, a kept fact that answers
 * is put back (dfpn_tt_put, which merges it with what the table holds)
 * and found. The search never reads it, so its lookups stay one bucket
 * of the table.
 * Why: a proof is written by a walk that follows the table's strict
 * facts (dfpn_walk.c), and every fact lost is searched again there. The
 * losses come from full buckets long before the table fills: `solve
 * --store` on W:W21,28,K32:BK19,K25 (2-4 databases, 256 MB) never
 * collected (65% of the table in use at the end) and its walk still
 * searched 11.4 M positions again. A larger table keeps them too (the
 * walk then searches a few thousand), but costs the search itself on
 * every position: on the ten-piece B:W12,18,21,22,25,32:B3,6,10,11,15,20
 * (60 M positions, 2-7 databases) 1024 MB took 12.1 s and a table that
 * doubled to 1024 MB as it lost facts 16.1 s, against 9.6 s at 256 MB
 * (docs/solver.md, "Facts kept aside"). What the collector frees is not
 * kept: it frees what cost least to find (below the median effort).
 */
static eng_pos
entry_pos(const tt_entry *e)
{
    eng_pos p = {e->bm, e->wm, e->bk, e->wk, (e->flags & F_WHITE) ? ENG_WHITE : ENG_BLACK};
    return p;
}

static uint64_t
entry_key(const tt_entry *e)
{
    eng_pos p = entry_pos(e);
    return eng_key(&p);
}

/* Puts e into the kept table t of cap slots (a power of two); the slot
 * of the same position is overwritten (both are true: the newer stays).
 * RETURN 1 when a slot was taken. */
static int
kept_insert(tt_entry *t, size_t cap, const tt_entry *e, uint64_t key)
{
    const eng_pos pos = entry_pos(e);
    for (size_t i = key & (cap - 1);; i = (i + 1) & (cap - 1)) {
        if (!(t[i].flags & F_USED)) {
            t[i] = *e;
            return 1;
        }
        if (same_entry_pos(&t[i], &pos)) {
            t[i] = *e;
            return 0;
        }
    }
}

static void
kept_put(dfpn_ctx *c, const tt_entry *e)
{
    if (!c->kmax)
        return;
    if ((c->nkept + 1) * 4 > c->kcap * 3) {
        size_t cap = c->kcap ? c->kcap * 2 : KEPT_MIN;
        if (cap > c->kmax) { /* at the ceiling: start again */
            memset(c->kept, 0, c->kcap * sizeof *c->kept);
            c->nkept = 0;
        } else {
            tt_entry *t = dfpn_table_alloc(cap * sizeof *t);
            if (!t) {
                c->kmax = 0; /* no memory: keep nothing more, read what is kept */
                return;
            }
            for (size_t i = 0; i < c->kcap; i++)
                if (c->kept[i].flags & F_USED)
                    kept_insert(t, cap, &c->kept[i], entry_key(&c->kept[i]));
            dfpn_table_free(c->kept, c->kcap * sizeof *c->kept);
            c->kept = t;
            c->kcap = cap;
        }
    }
    c->nkept += (size_t)kept_insert(c->kept, c->kcap, e, entry_key(e));
    c->kept_total++;
}

void
dfpn_tt_find_kept(dfpn_ctx *c, const eng_pos *p, uint64_t key, look *l)
{
    dfpn_tt_find(c, p, key, l);
    if (l->fin || !c->nkept)
        return;
    for (size_t i = key & (c->kcap - 1); c->kept[i].flags & F_USED; i = (i + 1) & (c->kcap - 1)) {
        const tt_entry *k = &c->kept[i];
        if (!same_entry_pos(k, p))
            continue;
        int a = fact_answer(c, k);
        if (a < 0)
            return;
        uint32_t len = k->pn;
        uint64_t work = k->work;
        int depth = k->min_depth;
        c->kept_back++;
        /* back into the table (which may put another fact aside: k is
         * not read after this) */
        dfpn_tt_put(c, p, key, a ? 0 : DFPN_INF, a ? DFPN_INF : 0,
                    (uint16_t)(len > UINT16_MAX ? UINT16_MAX : len), work, depth, 0);
        dfpn_tt_find(c, p, key, l);
        return;
    }
}

/*
 * A STRICT FACT GIVES WAY LAST. A bucket's replacement takes a dead
 * entry, else an open entry or a loose fact (the least worth keeping by
 * entry_score), and a strict fact (final, not F_LOOSE) only when all four
 * are strict facts. Why: a proof is written by a walk that follows the
 * table's strict facts (dfpn_walk.c, WRITING A WIN), and each one replaced
 * is searched again there, one position at a time. An open entry's work
 * can pass DFPN_FINAL_BONUS near a root, and a loose fact (an optimistic
 * query's draw) carries the bonus too, so by score alone they displaced
 * wins. Measured (`solve --store`, the 2-4 databases, 256 MB) on
 * W:W21,28,K32:BK19,K25: the optimistic search and the walk that refused
 * it replaced 149,425 and 160,372 strict facts, and the walk that wrote
 * the proof after the GHI-safe search valued 25.6 M positions in 40 s;
 * with this rule 39,972 and 75,244, and the walk 11.4 M positions in
 * 17.5 s (docs/solver.md, "A proof that takes long to write"). The
 * garbage collector is unchanged (it frees below the median score, and
 * a fact's bonus already keeps most facts there).
 */
static int
strict_fact(const tt_entry *e)
{
    return (e->flags & (F_FINAL | F_LOOSE)) == F_FINAL;
}

/* A slot of the key's bucket for a new entry: a dead one, else the one
 * least worth keeping (A STRICT FACT GIVES WAY LAST). */
static tt_entry *
tt_slot(dfpn_ctx *c, uint64_t key)
{
    if (c->used * 4 >= c->nbuckets * BUCKET * 3)
        tt_gc(c);
    tt_entry *b = &c->tt[(key & (c->nbuckets - 1)) * BUCKET], *v = NULL;
    for (int i = 0; i < BUCKET; i++) {
        if (dead(c, &b[i])) {
            if (b[i].flags & F_USED)
                c->used--; /* counted while it lived */
            b[i].flags = 0;
            v = &b[i];
            break;
        }
        if (!v || strict_fact(v) > strict_fact(&b[i]) ||
            (strict_fact(v) == strict_fact(&b[i]) && entry_score(c, &b[i]) < entry_score(c, v)))
            v = &b[i];
    }
    if (strict_fact(v))
        kept_put(c, v); /* A FACT GIVEN UP IS KEPT ASIDE */
    if (!(v->flags & F_USED))
        c->used++;
    v->flags = 0;
    v->work = 0;
    return v;
}

static void
tt_fill(dfpn_ctx *c, tt_entry *e, const eng_pos *p, int depth)
{
    e->bm = p->bm, e->wm = p->wm, e->bk = p->bk, e->wk = p->wk;
    e->flags = (uint8_t)(F_USED | (p->stm ? F_WHITE : 0));
    e->gen = c->gen;
    e->work = 0;
    e->min_depth = (uint16_t)depth;
}

static void
add_work(tt_entry *e, uint64_t work)
{
    uint64_t w = (uint64_t)e->work + work;
    e->work = w > UINT32_MAX ? UINT32_MAX : (uint32_t)w;
}

/*
 * Writes what is known of p: open numbers, or (pn or dn 0) a final
 * result, with the length of its proof, as a fact (loose: from an
 * optimistic search, on the safety side). work is added to the entry's
 * effort.
 */
void
dfpn_tt_put(dfpn_ctx *c, const eng_pos *p, uint64_t key, uint32_t pn, uint32_t dn, uint16_t len,
            uint64_t work, int depth, int loose)
{
    tt_entry *b = &c->tt[(key & (c->nbuckets - 1)) * BUCKET];
    tt_entry *open = NULL, *fact = NULL, *answer = NULL;
    uint8_t lf = loose ? F_LOOSE : 0;
    for (int i = 0; i < BUCKET; i++) {
        tt_entry *e = &b[i];
        if (!(e->flags & F_USED) || !same_entry_pos(e, p))
            continue;
        if (!(e->flags & F_FINAL)) {
            if (open_live(c, e))
                open = e;
            continue;
        }
        if ((e->flags & F_LOOSE) == lf)
            fact = e;
        if (fact_answer(c, e) >= 0)
            answer = e;
    }
    if (!is_final(pn, dn)) {
        if (answer)
            return; /* a fact is never overwritten by numbers */
        if (!open) {
            open = tt_slot(c, key);
            tt_fill(c, open, p, depth);
            open->flags |= (uint8_t)((c->round & 31) << ROUND_SHIFT);
        }
        open->gen = c->gen;
        open->pn = pn, open->dn = dn;
        add_work(open, work);
        if (depth < open->min_depth)
            open->min_depth = (uint16_t)depth;
        return;
    }
    eng_bound f = fact_of(c, p, pn == 0);
    if (loose && answer && !(answer->flags & F_LOOSE) && fact_answer(c, answer) == (pn == 0))
        fact = answer; /* a true fact says it already: it only gains the effort */
    /* the length of a win or loss; a store leaf's length 0 is kept as 1
     * (the walk only compares lengths) */
    uint32_t l = len ? len : 1;
    if (fact) {
        if (fact != answer || !loose) {
            /* a loose fact of another query is replaced, not merged */
            int stale = (fact->flags & F_LOOSE) && fact->gen != c->gen &&
                        !(c->resumed && fact->gen == c->rgen);
            eng_bound m = stale ? f : eng_bound_meet(entry_bound(fact), f);
            /* disjoint facts: only loose ones can be (a strict fact is
             * true); the newer stands */
            if (m == ENG_BOUND_INVALID)
                m = f;
            if (stale || eng_bound_is_exact(f)) /* a new win or loss brings its length */
                fact->pn = l;
            fact->flags = (uint8_t)((fact->flags & (F_USED | F_WHITE | F_FINAL | F_LOOSE)) |
                                    (m << BOUND_SHIFT));
        }
        fact->gen = c->gen;
        add_work(fact, work);
        if (open) { /* its numbers are over: the fact holds the effort */
            add_work(fact, open->work);
            open->flags = 0;
            c->used--;
        }
        return;
    }
    tt_entry *e = open;
    if (!e) {
        e = tt_slot(c, key);
        tt_fill(c, e, p, depth);
    }
    e->flags = (uint8_t)(F_USED | (p->stm ? F_WHITE : 0) | F_FINAL | lf | (f << BOUND_SHIFT));
    e->gen = c->gen;
    e->pn = l;
    e->dn = 0;
    add_work(e, work);
}

/* A new generation. Entries are kept (THE TABLE ACROSS QUERIES); when
 * the counter wraps, open entries and the path-dependent table go, so
 * that no stale generation ever looks current. */
void
dfpn_new_generation(dfpn_ctx *c)
{
    memset(c->pbits, 0, PT_BITS / 8); /* every path-dependent entry is now stale */
    if (++c->gen != 0)
        return;
    size_t n = c->nbuckets * BUCKET, kept = 0;
    for (size_t i = 0; i < n; i++) {
        tt_entry *e = &c->tt[i];
        if (!(e->flags & F_FINAL))
            e->flags = 0;
        else {
            e->gen = 1;
            kept++;
        }
    }
    c->used = kept;
    memset(c->pt, 0, c->npt * sizeof *c->pt);
    memset(c->ptag, 0, c->npt * sizeof *c->ptag);
    memset(c->susp, 0, sizeof c->susp);
    c->gen = 2;
}

/* ---- the path-dependent table ------------------------------------------ */

/* The first way of key's bucket in the entries and in the tags. */
static size_t
pt_bucket(const dfpn_ctx *c, uint64_t key)
{
    return key & ((c->npt - 1) & ~(size_t)(PT_WAYS - 1));
}

/* Nonzero when q is on the line above ply (plies seg..ply-1); *at is the
 * nearest such ply. */
static int
on_line(const dfpn_ctx *c, int seg, int ply, const eng_pos *q, int *at)
{
    for (int a = ply - 1; a >= seg; a--)
        if (same_pos(&c->path[a], q)) {
            *at = a;
            return 1;
        }
    return 0;
}

/*
 * dfpn_pt_get - a path-dependent result for p at ply that holds on the current
 * line, whose reversible segment starts at seg; *rep_up is recomputed for
 * this line.
 */
const pt_entry *
dfpn_pt_get(dfpn_ctx *c, const eng_pos *p, uint64_t key, int seg, int ply, int *rep_up)
{
    uint32_t bit = pt_bit(key);
    if (!(c->pbits[bit / 64] >> (bit % 64) & 1)) /* nothing stored under it */
        return NULL;
    size_t at0 = pt_bucket(c, key);
    const uint32_t *t = &c->ptag[at0], want = pt_tag(key, c->gen);
    for (int i = 0; i < PT_WAYS; i++) {
        if (t[i] != want) /* the tag filters; the position decides */
            continue;
        const pt_entry *e = &c->pt[at0 + i];
        if (!e->used || e->gen != c->gen || !same_pos(&e->pos, p))
            continue;
        int ok = 1, up = 0, at;
        for (int k = 0; k < e->d.n && ok; k++) {
            ok = on_line(c, seg, ply, &e->d.p[k], &at);
            if (ok && ply - at > up)
                up = ply - at;
        }
        if (ok) {
            *rep_up = up;
            return e;
        }
    }
    return NULL;
}

int
dfpn_pt_says(dfpn_ctx *c, const eng_pos *p, uint64_t key, int att_won)
{
    uint32_t bit = pt_bit(key);
    if (!(c->pbits[bit / 64] >> (bit % 64) & 1))
        return 0;
    size_t at0 = pt_bucket(c, key);
    const uint32_t *t = &c->ptag[at0], want = pt_tag(key, c->gen);
    for (int i = 0; i < PT_WAYS; i++) {
        const pt_entry *e = &c->pt[at0 + i];
        if (t[i] == want && e->used && e->gen == c->gen && e->attacker_won == att_won &&
            same_pos(&e->pos, p))
            return 1;
    }
    return 0;
}

void
dfpn_pt_put(dfpn_ctx *c, const eng_pos *p, uint64_t key, int att_won, const deps *d, int len)
{
    size_t at0 = pt_bucket(c, key);
    pt_entry *b = &c->pt[at0];
    uint32_t *t = &c->ptag[at0];
    int w = 0;
    for (int i = 0; i < PT_WAYS; i++) /* a free way, else the first */
        if (!b[i].used || b[i].gen != c->gen) {
            w = i;
            break;
        }
    if (w == 0 && b[0].used && b[0].gen == c->gen) { /* all taken: shift out the oldest */
        memmove(&b[0], &b[1], (PT_WAYS - 1) * sizeof *b);
        memmove(&t[0], &t[1], (PT_WAYS - 1) * sizeof *t);
        w = PT_WAYS - 1;
    }
    pt_entry *e = &b[w];
    t[w] = pt_tag(key, c->gen);
    uint32_t bit = pt_bit(key);
    c->pbits[bit / 64] |= (uint64_t)1 << (bit % 64);
    e->pos = *p;
    e->d = *d;
    e->used = 1;
    e->gen = c->gen;
    e->attacker_won = (uint8_t)att_won;
    e->len = (uint16_t)len;
}

/* ---- unanswered queries ----------------------------------------------- */

/* The remembered unanswered query this one repeats, if any: it goes on
 * at the round it stopped in, its open entries live again (THE TABLE
 * ACROSS QUERIES). */
void
dfpn_resume(dfpn_ctx *c, const eng_pos *root)
{
    c->resumed = 0;
    for (int i = 0; i < NSUSP; i++) {
        susp *s = &c->susp[i];
        if (s->used && same_pos(&s->root, root) && s->attacker == c->attacker &&
            s->goal == c->goal && s->loose == c->loose) {
            c->resumed = 1;
            c->rgen = s->gen;
            c->rround = s->round;
            c->round = s->round;
            c->maxply = s->maxply;
            s->used = 0;
            return;
        }
    }
}

/* Remembers this unanswered query in place of the oldest one. */
void
dfpn_suspend(dfpn_ctx *c, const eng_pos *root)
{
    susp *v = &c->susp[0];
    for (int i = 0; i < NSUSP; i++) {
        susp *s = &c->susp[i];
        if (!s->used) {
            v = s;
            break;
        }
        if ((uint8_t)(c->gen - s->gen) > (uint8_t)(c->gen - v->gen))
            v = s;
    }
    v->used = 1;
    v->root = *root;
    v->attacker = (uint8_t)c->attacker;
    v->goal = (uint8_t)c->goal;
    v->loose = (uint8_t)c->loose;
    v->gen = c->gen;
    v->round = (uint8_t)c->round;
    v->maxply = (uint16_t)c->maxply;
}
