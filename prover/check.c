/*
 * check.c - the independent proof checker (check.h).
 *
 * The whole module is one idea: a proof that "X at least draws" or "X
 * wins" from a position is a set of positions closed under play, and the
 * store holds enough to rebuild that set move by move. This file rebuilds
 * it with a plain depth-first walk and checks every position on the way:
 *
 *   - a position with no legal move, or one the database covers, is a
 *     leaf: its value for X must reach the goal (at least a draw, or a
 *     win);
 *   - any other position needs a store record that implies the goal;
 *     where X moves, the record's move is the only child (so it must be
 *     legal); where the other side moves, every legal move is a child;
 *   - for a win goal the walk also fails when a line comes back to a
 *     position still on the walk's stack: a win proof must end.
 *
 * Nothing else is trusted. In particular the checker never reads proof
 * numbers, lengths or efforts, and never reasons about the path that led
 * to a position: every rule above depends on the position alone, which
 * is what makes the result a certificate (DESIGN.md, "Proofs are
 * certificates"). The walk keeps its own stack and visited set instead
 * of recursing, because draw proofs are graphs whose depth-first lines can
 * be as long as the proof is large.
 *
 * Why the walk is sound:
 *   draw goal: every position reached is checked exactly once (the
 *     visited set), and a position is only accepted when all its children
 *     are reached too. When the walk ends without a failure, the set of
 *     positions it reached is closed under X's stored moves and all of
 *     the other side's moves, and every leaf in it is at least a draw for
 *     X. Whatever the other side does, X can stay inside the set, so the
 *     game either ends in a leaf or goes on for ever: at least a draw.
 *   win goal: the same closed set, and it has no cycle, because a
 *     depth-first search of a directed graph meets a back edge (a child
 *     still on the stack) exactly when the graph reachable from its root
 *     has a cycle. In a finite acyclic closed set every line ends, and
 *     it ends in a leaf won for X.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "prover/check.h"
#include "prover/leaf.h"
#include "prover/posmap.h"

/* ---- constants ------------------------------------------------------ */

/* States of a position in the visited set. */
enum { VIS_OPEN = 1, VIS_DONE = 2 };

/* What enter() did with a position. */
enum { ENTER_DONE = 0, ENTER_PUSHED = 3 }; /* apart from PCHK_INVALID (1) */

/* open_stored's answer for a record of an admitted store (apart from 0,
 * PCHK_INVALID and the negative codes). */
enum { OPEN_ADMITTED = 4 };

#define CHK_STACK_MIN 256 /* first size of the walk's stack */

/* ---- types ---------------------------------------------------------- */

/*
 * The visited set: positions keyed by the whole position (posmap.h), the
 * side to move included, since a position and its colour-flipped twin
 * are different positions of a proof for X even though the store keeps
 * one record for both; each with its state in the walk.
 */
typedef struct vis_entry {
    uint8_t state;   /* VIS_* */
    int32_t longest; /* win goal, VIS_DONE: plies of the longest line below */
} vis_entry;

typedef struct vis_set {
    pmap map;
    vis_entry *info; /* by the map's index */
    size_t cap;
} vis_set;

/*
 * One stored position on the walk's stack. Its children are named by
 * index and made again when needed (the defender's moves are generated
 * anew for each child) so that a frame stays small even when the stack is
 * millions of positions deep.
 */
typedef struct chk_frame {
    eng_pos pos;
    eng_move own;    /* X moves here: its stored move, the only child */
    int own_move;    /* 1: X moves here; 0: every legal move is a child */
    uint64_t effort; /* the record's effort (for the visitor) */
    int nkids;
    int next;    /* the next child to enter */
    int longest; /* win goal: longest line below the children done so far */
    uint32_t vk; /* its entry in the visited set (indices never move) */
} chk_frame;

/* One proof being checked: goal, visited set, stack and the caller's out. */
typedef struct chk_walk {
    const pchk_source *src;
    const pchk_visitor *vis;
    const egdb *db;
    int x;   /* the colour whose goal it is */
    int win; /* 1: "X wins"; 0: "X at least draws" */
    vis_set set;
    chk_frame *stack;
    size_t depth, cap;
    pchk_result *out;
    char *err;
    size_t errlen;
} chk_walk;

/* ---- helpers -------------------------------------------------------- */

static const char *
colour_name(int c)
{
    return c == ENG_BLACK ? "Black" : "White";
}

/* The goal's outcome for X (ENG_DRAW or ENG_WIN). */
static int
goal_need(const chk_walk *w)
{
    return w->win ? ENG_WIN : ENG_DRAW;
}

/* Records a failed proof: the position where it fails and why, prefixed
 * with the goal ("Black wins: ..."). Returns PCHK_INVALID for the caller
 * to pass up. */
static int
fail(chk_walk *w, const eng_pos *where, const char *fmt, ...)
{
    char reason[200];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(reason, sizeof reason, fmt, ap);
    va_end(ap);
    w->out->status = PCHK_INVALID;
    if (eng_format_fen(where, w->out->where, sizeof w->out->where) != 0)
        snprintf(w->out->where, sizeof w->out->where, "?");
    snprintf(w->out->why, sizeof w->out->why, "%s %s: %s", colour_name(w->x),
             w->win ? "wins" : "at least draws", reason);
    return PCHK_INVALID;
}

/* A stored move by its three numbers (1-based squares), for messages
 * about moves that may not be legal and so cannot be formatted as PDN. */
static void
pst_move_text(const pst_move *m, char *buf, size_t len)
{
    if (m->captured)
        snprintf(buf, len, "%dx%d (capturing mask 0x%08x)", m->from + 1, m->to + 1,
                 (unsigned)m->captured);
    else
        snprintf(buf, len, "%d-%d", m->from + 1, m->to + 1);
}

static void
move_text(const eng_move *m, char *buf, size_t len)
{
    if (eng_format_move(m, buf, len) != 0)
        snprintf(buf, len, "?");
}

/* "; reached by M" for a failure's message ("" at the root). Written
 * only when a message is: formatting the move of every position entered
 * was a tenth of admission's time (perf, issue 42). */
static void
via_of(const eng_move *m, char *buf, size_t len)
{
    buf[0] = 0;
    if (m) {
        char mv[ENG_MOVE_STR_MAX];
        move_text(m, mv, sizeof mv);
        snprintf(buf, len, "; reached by %s", mv);
    }
}

/* ---- the visited set ------------------------------------------------ */

/* The entry of p, or NULL when p has not been visited. */
static vis_entry *
vis_find(vis_set *s, const eng_pos *p)
{
    long k = pmap_find(&s->map, p);
    return k < 0 ? NULL : &s->info[k];
}

/* Adds p (not yet in the set) in the given state; NULL when out of
 * memory. Growing moves entries: pointers from earlier calls die here
 * (an entry's index, *k, does not move). */
static vis_entry *
vis_add(vis_set *s, const eng_pos *p, int state, uint32_t *k_out)
{
    long k = pmap_add(&s->map, p, NULL);
    if (k < 0 || pmap_room((void **)&s->info, &s->cap, (size_t)k, sizeof *s->info))
        return NULL;
    s->info[k].state = (uint8_t)state;
    s->info[k].longest = 0;
    if (k_out)
        *k_out = (uint32_t)k;
    return &s->info[k];
}

/* Empties the set for the next proof, keeping its memory. */
static void
vis_clear(vis_set *s)
{
    pmap_clear(&s->map);
}

static void
vis_free(vis_set *s)
{
    pmap_free(&s->map);
    free(s->info);
}

/* ---- positions ------------------------------------------------------ */

/*
 * leaf_value - the leaf rule (prover/leaf.h) for p, with the scope of the
 * databases given (egdb_scope: complete counts, whole splits, partial
 * bounds). egdb_probe plays out captures itself; EGDB_ENOTFOUND there
 * means the database cannot value it after all, and the position is then
 * treated as any other (it needs a stored proof), which can only reject
 * more. Any other probe error stops the check: a damaged database never
 * becomes a value.
 * RETURN 0 with *lf, or a negative PST_E* code (the database's own code
 * is named in err).
 */
static int
leaf_value(chk_walk *w, const eng_pos *p, pleaf *lf)
{
    int v = pleaf_of(w->db, w->db ? egdb_scope(w->db) : 0, p, 0, lf);
    if (v == 0)
        return 0;
    char fen[ENG_FEN_MAX];
    eng_format_fen(p, fen, sizeof fen);
    eng_errf(w->err, w->errlen, "database probe of %s failed: %s", fen, egdb_strerror(v));
    /* One namespace for the caller (check.h): damaged is damaged,
     * whichever file it is in. */
    if (v == EGDB_ECORRUPT)
        return PST_ECORRUPT;
    return v == EGDB_ENOMEM ? PST_ENOMEM : PST_EIO;
}

/*
 * open_stored - reads p's record and fills the frame f for it: the record
 * must imply the goal, and where X moves, the stored move must be legal.
 *   X to move:          lo >= goal (a draw or a win) and a move stored:
 *                       the win move for a win goal; for a draw goal the
 *                       draw move, or the win move of a win record that
 *                       has none (store.h).
 *   the other to move:  hi <= -goal (it cannot do better than lose, or
 *                       than draw); no move is needed, every reply is
 *                       a child.
 * RETURN 0; PCHK_INVALID (the failure is recorded); a negative PST_E*
 * code when the record cannot be read.
 */
static int
open_stored(chk_walk *w, const eng_pos *p, const eng_move *m, chk_frame *f)
{
    char via[ENG_MOVE_STR_MAX + 32];
    pst_record r;
    int rc = w->src->get(w->src->ctx, p, &r);
    int admitted = rc == PCHK_SRC_ADMITTED;
    if (admitted)
        rc = 0;
    if (rc == PST_ENOTFOUND) {
        /* A proof made with larger databases takes their positions as
         * leaves and stores nothing for them: say so rather than leave the
         * reader to guess why a proof that was accepted is refused. */
        int n = __builtin_popcount(p->bm | p->wm | p->bk | p->wk);
        char hint[256] = "";
        if (w->db && n == egdb_max_pieces(w->db) + 1 && !egdb_covers(w->db, p)) {
            char scope[48];
            egdb_scope_name(egdb_scope(w->db), scope, sizeof scope);
            snprintf(hint, sizeof hint,
                     "; the databases given cover %s pieces: if the proof was made with %d-piece "
                     "or partial "
                     "databases, check it with them",
                     scope, n);
        }
        via_of(m, via, sizeof via);
        return fail(w, p, "no stored proof for this position (%s to move)%s%s", colour_name(p->stm),
                    via, hint);
    }
    if (rc != 0) {
        char fen[ENG_FEN_MAX];
        eng_format_fen(p, fen, sizeof fen);
        eng_errf(w->err, w->errlen, "store record of %s cannot be read: %s", fen, pst_strerror(rc));
        return rc;
    }
    if (!eng_bound_valid(r.bound)) {
        /* pst_get promises never to return this; a checker does not take
         * promises for granted. */
        char fen[ENG_FEN_MAX];
        eng_format_fen(p, fen, sizeof fen);
        eng_errf(w->err, w->errlen, "store record of %s has bound code %d", fen, (int)r.bound);
        return PST_ECORRUPT;
    }
    int need = goal_need(w);
    int lo = eng_bound_lo(r.bound), hi = eng_bound_hi(r.bound);
    memset(f, 0, sizeof *f);
    f->pos = *p;
    f->effort = r.effort;
    if (admitted) {
        /* a record of an admitted store: its proof was checked whole when
         * it was admitted (check.h, SOURCES); a win's line below it is
         * its record's */
        f->longest = r.length;
        int vx_lo = p->stm == w->x ? lo : -hi;
        if (vx_lo < need) {
            via_of(m, via, sizeof via);
            return fail(w, p, "the admitted bound %s (%s to move) does not imply it%s",
                        eng_bound_name(r.bound), colour_name(p->stm), via);
        }
        w->out->admitted++;
        return OPEN_ADMITTED;
    }
    if (p->stm == w->x) {
        if (lo < need) {
            via_of(m, via, sizeof via);
            return fail(w, p, "stored bound %s (%s to move) does not imply it%s",
                        eng_bound_name(r.bound), colour_name(p->stm), via);
        }
        const pst_move *pm;
        const char *which;
        if (w->win) {
            pm = &r.win;
            which = "win";
        } else if (r.draw.from != PST_NOMOVE) {
            pm = &r.draw;
            which = "draw";
        } else if (lo == ENG_WIN) {
            pm = &r.win;
            which = "win";
        } else {
            return fail(w, p, "stored bound %s but no draw move", eng_bound_name(r.bound));
        }
        if (pm->from == PST_NOMOVE)
            return fail(w, p, "stored bound %s but no %s move", eng_bound_name(r.bound), which);
        if (pst_move_find(p, pm, &f->own) != 0) {
            char mt[64];
            pst_move_text(pm, mt, sizeof mt);
            return fail(w, p, "stored %s move %s is not legal here", which, mt);
        }
        f->own_move = 1;
        f->nkids = 1;
    } else {
        if (hi > -need) {
            via_of(m, via, sizeof via);
            return fail(w, p, "stored bound %s (%s to move) does not imply it%s",
                        eng_bound_name(r.bound), colour_name(p->stm), via);
        }
        eng_movelist list;
        int n = eng_generate(p, &list, ENG_DUPS_MERGE);
        if (n < 0) {
            char fen[ENG_FEN_MAX];
            eng_format_fen(p, fen, sizeof fen);
            eng_errf(w->err, w->errlen, "%s has more than %d moves", fen, ENG_MAX_MOVES);
            return PST_EINVAL;
        }
        f->nkids = n; /* > 0: leaf_value has ruled out a position without moves */
        /* MEMORY. Each child is looked up in the visited set and in the
         * source, and in a proof of a million positions each lookup is a
         * miss of the caches; here all of them start loading at once
         * (with each frame's visited index, below: admission's walk of
         * a proof of 1.5 M records took 3.0-3.8 s, 4.4-4.7 s before;
         * bench/admit.c). */
        for (int i = 0; i < n; i++) {
            eng_pos c;
            eng_make(p, &list.m[i], &c);
            pmap_prefetch(&w->set.map, &c);
            if (w->src->prefetch)
                w->src->prefetch(w->src->ctx, &c);
        }
    }
    w->out->positions++;
    return 0;
}

/* The k-th child move of frame f. */
static void
frame_move(const chk_frame *f, int k, eng_move *m)
{
    if (f->own_move) {
        *m = f->own;
        return;
    }
    eng_movelist list;
    eng_generate(&f->pos, &list, ENG_DUPS_MERGE);
    *m = list.m[k];
}

static int
stack_push(chk_walk *w, chk_frame **f)
{
    if (w->depth == w->cap) {
        size_t cap = w->cap ? w->cap * 2 : CHK_STACK_MIN;
        if (cap > SIZE_MAX / sizeof(chk_frame))
            return PST_ENOMEM;
        chk_frame *s = realloc(w->stack, cap * sizeof *s);
        if (!s)
            return PST_ENOMEM;
        w->stack = s;
        w->cap = cap;
    }
    *f = &w->stack[w->depth++];
    return 0;
}

/*
 * enter - takes position p into the proof: p is reached from the stored
 * position `from` by move m (both NULL for the root).
 * RETURN
 *   ENTER_DONE with *longest: p needs nothing more (a leaf that reaches
 *     the goal, or a position visited before; for a win goal, one fully
 *     checked);
 *   ENTER_PUSHED: p is a stored position whose record implies the goal;
 *     its frame is on top of the stack and its children come next;
 *   PCHK_INVALID: the proof fails here (recorded in out);
 *   a negative code: the check cannot go on (err says why).
 */
static int
enter(chk_walk *w, const eng_pos *from, const eng_move *m, const eng_pos *p, int *longest)
{
    /* the move's text only for a failure's message (via_of) */
    char mv[ENG_MOVE_STR_MAX] = "";
    const char *kind_of_move = m ? (from->stm == w->x ? "move" : "reply") : "";

    vis_entry *e = vis_find(&w->set, p);
    if (e) {
        /* A draw proof may come back to any position: staying inside the
         * set for ever is a draw. A win proof may join a line already
         * proven, but not one still open: that line would never end. */
        if (w->win && e->state == VIS_OPEN) {
            char fen[ENG_FEN_MAX];
            eng_format_fen(p, fen, sizeof fen);
            move_text(m, mv, sizeof mv);
            return fail(w, from,
                        "cycle: %s %s comes back to %s, which is still on the line "
                        "being checked (a win must end)",
                        kind_of_move, mv, fen);
        }
        *longest = e->longest;
        return ENTER_DONE;
    }

    pleaf lf;
    int rc = leaf_value(w, p, &lf);
    if (rc < 0)
        return rc;
    eng_question q = {w->x, goal_need(w)};
    int ans = pleaf_answer(&lf, &q, p->stm);
    if (ans < 0) {
        /* The leaf's bound, for its side to move, falls short of the goal. */
        const char *word = lf.kind == PLEAF_DB ? (lf.bound == ENG_WW   ? "a win"
                                                  : lf.bound == ENG_LL ? "a loss"
                                                                       : "a draw")
                                               : eng_bound_name(lf.bound);
        const char *by = lf.kind == PLEAF_PARTIAL ? "partial database bounds" : "database values";
        if (!m && lf.kind == PLEAF_END)
            return fail(w, p, "%s has no move here (a loss for %s)", colour_name(p->stm),
                        colour_name(p->stm));
        if (!m)
            return fail(w, p,
                        "the %s this position as %s for %s (the database, not the store, "
                        "decides its value)",
                        by, word, colour_name(p->stm));
        move_text(m, mv, sizeof mv);
        if (lf.kind == PLEAF_END)
            return fail(w, from, "%s %s leaves %s without a move (a loss for %s)", kind_of_move, mv,
                        colour_name(p->stm), colour_name(p->stm));
        return fail(w, from, "%s %s leads to a position the %s as %s for %s", kind_of_move, mv, by,
                    word, colour_name(p->stm));
    }
    if (ans > 0) {
        if (lf.kind == PLEAF_END)
            w->out->leaves_end++;
        else if (lf.kind == PLEAF_PARTIAL)
            w->out->leaves_partial++;
        else
            w->out->leaves_db++;
        /* Leaves go into the set too, so that each is probed once. */
        if (!vis_add(&w->set, p, VIS_DONE, NULL))
            goto nomem;
        *longest = 0;
        return ENTER_DONE;
    }

    chk_frame nf, *f;
    rc = open_stored(w, p, m, &nf);
    if (rc == OPEN_ADMITTED) {
        /* a leaf of this walk; a win's line below it is its record's */
        vis_entry *ne = vis_add(&w->set, p, VIS_DONE, NULL);
        if (!ne)
            goto nomem;
        *longest = w->win ? nf.longest : 0;
        ne->longest = *longest;
        return ENTER_DONE;
    }
    if (rc != 0)
        return rc;
    if (stack_push(w, &f) != 0 || !vis_add(&w->set, p, VIS_OPEN, &nf.vk))
        goto nomem;
    *f = nf;
    return ENTER_PUSHED;

nomem:
    eng_errf(w->err, w->errlen, "out of memory after %zu positions", w->set.map.n);
    return PST_ENOMEM;
}

/*
 * walk_goal - checks one proof from root (see the top of the file).
 * Longest lines: a leaf's line is 0 plies, a stored position's is one
 * more than its longest child's, computed when the position leaves the
 * stack; in an acyclic proof this is the longest path to a leaf.
 * RETURN 0 (valid), PCHK_INVALID or a negative code.
 */
static int
walk_goal(chk_walk *w, const eng_pos *root, int *longest)
{
    int len = 0;
    vis_clear(&w->set);
    w->depth = 0;
    int rc = enter(w, NULL, NULL, root, &len);
    if (rc == PCHK_INVALID || rc < 0)
        return rc;
    *longest = len;
    while (w->depth > 0) {
        chk_frame *f = &w->stack[w->depth - 1];
        if (f->next < f->nkids) {
            eng_move m;
            eng_pos here = f->pos, child;
            frame_move(f, f->next++, &m);
            eng_make(&here, &m, &child);
            /* enter may grow the stack: f is not used across the call */
            rc = enter(w, &here, &m, &child, &len);
            if (rc == PCHK_INVALID || rc < 0)
                return rc;
            if (rc == ENTER_DONE) {
                f = &w->stack[w->depth - 1];
                if (len + 1 > f->longest)
                    f->longest = len + 1;
            }
            continue;
        }
        /* Every child is proven: so is this position. */
        vis_entry *e = &w->set.info[f->vk];
        e->state = VIS_DONE;
        e->longest = f->longest;
        len = f->longest;
        if (w->vis) {
            pst_move used = f->own_move ? pst_move_of(&f->own) : (pst_move){PST_NOMOVE, 0, 0};
            if (w->vis->done(w->vis->ctx, &f->pos, w->x, w->win, f->effort, &used, f->longest)) {
                eng_errf(w->err, w->errlen, "out of memory collecting the proof");
                return PST_ENOMEM;
            }
        }
        w->depth--;
        if (w->depth > 0) {
            f = &w->stack[w->depth - 1];
            if (len + 1 > f->longest)
                f->longest = len + 1;
        } else {
            *longest = len;
        }
    }
    return 0;
}

/* ---- the public function -------------------------------------------- */

/* The plain source: the store itself, nothing trusted. */
static int
store_get(void *ctx, const eng_pos *p, pst_record *out)
{
    return pst_get(ctx, p, out);
}

int
pchk_check(pst_env *st, const egdb *db, const eng_pos *root, pchk_result *out, char *err,
           size_t errlen)
{
    pchk_source src = {store_get, st, NULL};
    return pchk_check_with(&src, NULL, db, root, out, err, errlen);
}

int
pchk_db_root(const egdb *db, const eng_pos *root, pchk_result *out, char *err, size_t errlen)
{
    pleaf lf;
    if (!db || (out->status != PCHK_NOTHING && out->status != PCHK_VALID))
        return 0;
    int v = pleaf_of(db, egdb_scope(db), root, 0, &lf);
    if (v < 0) {
        /* a damaged block is damage, not "nothing stored" */
        char fen[ENG_FEN_MAX];
        eng_format_fen(root, fen, sizeof fen);
        eng_errf(err, errlen, "database probe of the root %s failed: %s", fen, egdb_strerror(v));
        return v == EGDB_ECORRUPT ? PST_ECORRUPT : v == EGDB_ENOMEM ? PST_ENOMEM : PST_EIO;
    }
    if (lf.kind == PLEAF_NONE || (lf.kind == PLEAF_END && !egdb_covers(db, root)))
        return 0; /* (a covered root without a move: the database's leaf, as before) */
    if (out->status == PCHK_VALID) {
        /* a root of a partial database: its bound is known beside its
         * record (both are true, so they meet) */
        if (lf.kind != PLEAF_PARTIAL)
            return 0;
        eng_bound m = eng_bound_meet(out->bound, lf.bound);
        if (m == ENG_BOUND_INVALID) {
            /* both cannot hold: a partial file is wrong, and the proof
             * may rest on its other bounds: no verdict */
            char fen[ENG_FEN_MAX];
            eng_format_fen(root, fen, sizeof fen);
            eng_errf(err, errlen,
                     "the root %s: the proof's bound %s and the partial database's bound %s "
                     "contradict each other (a partial file is wrong)",
                     fen, eng_bound_name(out->bound), eng_bound_name(lf.bound));
            return PST_ECORRUPT;
        }
        if (m == out->bound)
            return 0;
        out->bound = m;
        out->leaves_partial++;
        return 1;
    }
    out->status = PCHK_VALID;
    out->bound = lf.bound;
    out->positions = 1;
    if (lf.kind == PLEAF_PARTIAL)
        out->leaves_partial = 1;
    else
        out->leaves_db = 1;
    out->longest_win = -1;
    return 1;
}

int
pchk_check_with(const pchk_source *src, const pchk_visitor *vis, const egdb *db,
                const eng_pos *root, pchk_result *out, char *err, size_t errlen)
{
    char msg[200];
    memset(out, 0, sizeof *out);
    out->status = PCHK_VALID;
    out->longest_win = -1;
    if (eng_validate(root, msg, sizeof msg) != 0) {
        eng_errf(err, errlen, "not a position: %s", msg);
        return PST_EINVAL;
    }
    pst_record r;
    int rc = src->get(src->ctx, root, &r);
    if (rc == PCHK_SRC_ADMITTED)
        rc = 0;
    if (rc == PST_ENOTFOUND) {
        out->status = PCHK_NOTHING;
        return 0;
    }
    if (rc != 0) {
        char fen[ENG_FEN_MAX];
        eng_format_fen(root, fen, sizeof fen);
        eng_errf(err, errlen, "store record of %s cannot be read: %s", fen, pst_strerror(rc));
        return rc;
    }
    if (!eng_bound_valid(r.bound)) {
        eng_errf(err, errlen, "store record of the root has bound code %d", (int)r.bound);
        return PST_ECORRUPT;
    }
    out->bound = r.bound;

    /* The proofs the bound implies, for the root's side to move s and
     * the other side o (check.h). */
    int s = root->stm, o = !root->stm;
    int lo = eng_bound_lo(r.bound), hi = eng_bound_hi(r.bound);
    struct {
        int x, win;
    } goals[4];
    int ngoals = 0;
    if (lo >= ENG_DRAW) {
        goals[ngoals].x = s;
        goals[ngoals++].win = 0;
    }
    if (lo == ENG_WIN) {
        goals[ngoals].x = s;
        goals[ngoals++].win = 1;
    }
    if (hi <= ENG_DRAW) {
        goals[ngoals].x = o;
        goals[ngoals++].win = 0;
    }
    if (hi == ENG_LOSS) {
        goals[ngoals].x = o;
        goals[ngoals++].win = 1;
    }
    if (ngoals == 0) {
        /* LW: the store never writes it (store.h); a record that claims
         * nothing is not a proof of anything. */
        out->status = PCHK_INVALID;
        eng_format_fen(root, out->where, sizeof out->where);
        snprintf(out->why, sizeof out->why, "stored bound %s claims nothing (not a proof)",
                 eng_bound_name(r.bound));
        return 0;
    }

    chk_walk w;
    memset(&w, 0, sizeof w);
    w.src = src;
    w.vis = vis;
    w.db = db;
    w.out = out;
    w.err = err;
    w.errlen = errlen;

    rc = 0;
    for (int i = 0; i < ngoals && rc == 0; i++) {
        int len = 0;
        w.x = goals[i].x;
        w.win = goals[i].win;
        rc = walk_goal(&w, root, &len);
        if (rc == 0 && w.win && len > out->longest_win)
            out->longest_win = len;
    }
    vis_free(&w.set);
    free(w.stack);
    if (rc == PCHK_INVALID)
        return 0;
    return rc;
}
