/*
 * partial_build.c - the builder of the partial-information databases
 * (partial.h has the manual and the algorithm, seed 000 the method; the
 * files and the registry are partial.c, partial_int.h says what the two
 * share).
 *
 * Working memory of a pair: one byte per position, for both members:
 *   bits 0-3  the current build-time value (eng_pval, Table 2's codes);
 *   bits 4-7  the max over the position's moves that LEAVE the pair of
 *             the negated successor values (a completed eng_pval, found
 *             once in the first pass), or EXT_CAPTURE for a capture
 *             position (whose value is completed in the first pass; the
 *             mark is kept for the capture counts of the file header).
 * plus two bitmaps per member (1 bit a position): the positions to
 * re-evaluate in the current pass and in the next. 1.25 bytes a
 * position in all; the files hold 4 bits.
 *
 * Why the exits are kept in the byte: a re-evaluation then only
 * regenerates the moves that stay in the pair and reads their current
 * values; the lookups in other slices (index computation and a random
 * read of another file) are done once per position, not once per pass.
 *
 * Why dirty bitmaps rather than a list: a position is marked by each
 * successor that changes (up to a dozen), and a bit makes the repeats
 * free; a pass walks the bitmap words, skipping empty ones at 64
 * positions a load, and the threads split it by word ranges so that each
 * position is evaluated by exactly one thread (its value byte has a
 * single writer, which is why relaxed atomics suffice).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <xxhash.h>

#include "egdb/partial_int.h"
#include "egdb/run.h"
#include "engine/bits.h"

/* ---- constants -------------------------------------------------------- */

/* The working byte of a position (see the file comment). */
#define VAL_MASK 0x0Fu    /* current eng_pval                        */
#define EXT_SHIFT 4       /* exits' max in the high nibble           */
#define EXT_CAPTURE 0x0Fu /* exit nibble of a capture position       */

/* The block cache of the complete databases read compressed (exits of a
 * partial build over a pipelined 8-piece set). */
#define PARTIAL_CDB_CACHE ((size_t)1 << 30)

/* Work items handed to the threads. Chunks small enough that both cores
 * stay busy to the end of a small pair, big enough that the shared
 * counter stays cold; a pass item covers 8,192 positions like a first
 * pass item, but most of its words are usually empty. */
#define CHUNK_POS 8192  /* positions per first-pass work item      */
#define CHUNK_WORDS 128 /* bitmap words (x64 positions) per item   */

/* ---- types ------------------------------------------------------------ */

/* The pair being built: one or two members (a self-twin slice, symmetric
 * material with equal ranks, is a pair of one), their working bytes and
 * dirty bitmaps, and counters the threads add to. */
typedef struct pair_work {
    int nmem;
    egix_slice slice[2];
    egix_table *tab[2];
    uint64_t size[2], words[2];
    _Atomic uint8_t *val[2];
    _Atomic uint64_t *dirty[2][2]; /* [parity][member] */
    int parity;                    /* bitmaps read by the current pass */
    const egpt_db *db;
    const uint8_t *chosen; /* NMATKEYS flags: materials being built */
    const egdb *cdb;       /* complete databases kept compressed only, or NULL */
    _Atomic uint64_t changed, marks, evaluations, completed, captures, exits;
    _Atomic int missing;
    _Atomic int damaged; /* a compressed block read for an exit failed */
    _Atomic int nomem;   /* a thread's buffers could not be allocated  */
} pair_work;

/* One build run: options, the loaded slices, the chosen materials, and
 * progress bookkeeping. Heap-allocated (the material flags and the
 * registry make it too big for a comfortable stack frame). */
typedef struct run_state {
    const char *dir;
    const egpt_opts *opts;
    egpt_stats *stats;
    egpt_db db;
    egdb *cdb; /* the complete databases kept only compressed (a
                  pipelined 8-piece set), read through the prober; NULL
                  when every exit has a .wld file or none exists      */
    uint8_t chosen[NMATKEYS];
    egrun_progress prog;
    egrun_tally tally;
    int compressed_only; /* load_complete: an exact successor slice is
                            kept only compressed, to be read through
                            the prober (cdb)                        */
} run_state;

/* ---- the iteration ------------------------------------------------------ */

/*
 * Why re-evaluating only marked positions reaches the paper's fixed point.
 * Invariant at the start of every pass: a position that is not marked and
 * not completed has value = max over its moves of neg(successor value)
 * for the CURRENT successor values. It holds after the first pass, which
 * computed each value with the moves inside the pair at uTT and marked
 * the predecessors of every position that did not stay uTT. It is kept
 * by a pass because a position it evaluates gets exactly that max from
 * what it reads, and any successor that changes afterwards (in the same
 * pass, on the other thread, or later) marks it for the next pass. So
 * when a pass changes nothing, no position is marked and every position
 * is at the fixed point. A completed position needs no re-evaluation: its
 * successors are all completed (final) or one of them already gives WW.
 *
 * Why it terminates quickly: by Table 2's structure (componentwise max
 * with an "unknown" flag, tests/test_value.c), a bound component only
 * leaves "draw" for loss or win once and never returns (a component that
 * reached loss or win did so from final information), and completion is
 * final; so a position changes at most three times, and the work is a few
 * evaluations per move of the pair, not passes x positions.
 *
 * Why in-place values and two threads do not change the result: the
 * fixed point reached from the all-uTT start is unique (the numeric parts
 * are two ordinary retrograde analyses, whose win/loss labels are sound
 * at every step and complete at any fixed point), so neither the order of
 * evaluation nor which thread sees which value first matters; only the
 * number of passes can vary between runs.
 */

/* The member holding the successors and predecessors of member m's
 * positions inside the pair: a move turns Black-to-move into
 * White-to-move, stored as the twin. */
static inline int
other_member(const pair_work *w, int m)
{
    return w->nmem == 2 ? 1 - m : 0;
}

/* A move of p (Black to move, member with Black leading row lead_row)
 * stays in the pair: a king move, or a man move that neither crowns nor
 * sets a new leading row (index.h, egix_slices ORDER). */
static inline int
move_stays(const eng_pos *p, const eng_move *mv, int lead_row)
{
    int to_row = mv->to >> 2;
    return (p->bk & (1u << mv->from)) || (to_row < 7 && to_row <= lead_row);
}

/* What one call of first_range or pass_range counts, kept by the
 * calling thread and added to the pair's atomics once at its end
 * (add_counts): an atomic add a counter a chunk, not one a position. */
typedef struct range_counts {
    uint64_t captures, exits, completed, marks, changed, evaluations;
} range_counts;

static void
add_counts(pair_work *w, const range_counts *n)
{
    atomic_fetch_add(&w->captures, n->captures);
    atomic_fetch_add(&w->exits, n->exits);
    atomic_fetch_add(&w->changed, n->changed);
    atomic_fetch_add(&w->evaluations, n->evaluations);
    atomic_fetch_add(&w->completed, n->completed);
    atomic_fetch_add(&w->marks, n->marks);
}

/*
 * Marks waiting to be set. A mark lands on a random byte of the other
 * member (is the predecessor completed?) and a random word of its
 * bitmap: two cache misses, and the OR is a locked instruction, which
 * lets no later load start before it. Marked one at a time, a profile
 * of the 7-piece 0043 build put 27% of the time in marking, most of it
 * on those two accesses. So the predecessors of several positions are
 * indexed first and both places prefetched, then the marks are set
 * (build.c batches its updates the same way). Marks are read by the
 * next pass, so when they land within this one changes nothing; a
 * predecessor completed in between is skipped either way.
 */
#define MARK_BATCH 512
#define MARK_MAX (4 * ENG_MAX_PIECES) /* un-moves of one position: 4 a piece */

typedef struct mark_batch {
    int n;
    uint64_t j[MARK_BATCH]; /* predecessor index in the other member */
} mark_batch;

/* Sets the waiting marks in dst (a bitmap of member pm), counting the
 * bits that were not set yet, and empties the batch. */
static void
flush_marks(pair_work *w, int pm, _Atomic uint64_t *dst, mark_batch *mb, range_counts *n)
{
    for (int k = 0; k < mb->n; k++) {
        const uint64_t j = mb->j[k];
        /* A racing update of this byte is harmless: if it is completing
         * the position, a stray mark costs one skipped evaluation; if it
         * is not, the mark is needed anyway. */
        uint8_t b = atomic_load_explicit(&w->val[pm][j], memory_order_relaxed);
        if (eng_pval_completed((eng_pval)(b & VAL_MASK)))
            continue;
        /* Bit already set by another successor: counted once. Most
         * predecessors are marked by several successors, so the bit is
         * read first: the locked OR, which stalls later loads, only for a
         * bit still clear (two threads racing there are still told apart
         * by the OR's old value). */
        uint64_t bit = (uint64_t)1 << (j & 63);
        if (atomic_load_explicit(&dst[j >> 6], memory_order_relaxed) & bit)
            continue;
        uint64_t old = atomic_fetch_or_explicit(&dst[j >> 6], bit, memory_order_relaxed);
        n->marks += !(old & bit);
    }
    mb->n = 0;
}

static inline void
queue_mark(pair_work *w, int pm, _Atomic uint64_t *dst, mark_batch *mb, uint64_t j)
{
    __builtin_prefetch((const void *)&w->val[pm][j]);
    __builtin_prefetch((const void *)&dst[j >> 6], 1);
    mb->j[mb->n++] = j;
}

/*
 * Queues the marks of the predecessors inside the pair of position x
 * (member m), for bitmap `dst` of the other member; flush_marks skips
 * those that are completed. As in build.c: White moved last in x, so
 * work on xf = flip(x), where the pieces that moved are Black's and
 * White is to move; a predecessor's stored form is xf with one black
 * piece moved back, Black to move. Kings un-move in any direction; men
 * only backwards (towards lower squares) and only when Black's leading
 * row stays the same - an un-move that changes it, or un-crowns a king,
 * leads to a slice with other ranks or material, which depends on this
 * pair, not the reverse. Predecessors with a capture are marked too
 * (their move to x is not legal, captures being compulsory), but they
 * are completed in the first pass and skipped. A king un-move keeps the
 * men, so their part of the index is computed once (egix_index_men) and
 * each un-move adds its king part.
 */
static void
queue_preds(pair_work *w, int m, const eng_pos *x, _Atomic uint64_t *dst, mark_batch *mb,
            range_counts *n)
{
    const int pm = other_member(w, m);
    const egix_table *ptab = w->tab[pm];
    if (mb->n > MARK_BATCH - MARK_MAX)
        flush_marks(w, pm, dst, mb, n);
    eng_pos xf = eng_flip(x);
    xf.stm = ENG_BLACK;
    const uint32_t empty = ~(xf.bm | xf.wm | xf.bk | xf.wk);
    uint32_t un[4 * ENG_MAX_PIECES];
    /* Kings: any diagonal step to an empty square (run.h). */
    int nu = egrun_king_unmoves(xf.bk, empty, un);
    if (nu > 0) {
        const uint64_t men_base = egix_index_men(ptab, &xf);
        for (int k = 0; k < nu; k++) {
            eng_pos q = xf;
            q.bk ^= un[k];
            queue_mark(w, pm, dst, mb, men_base + egix_index_kings(ptab, &q));
        }
    }
    /* Men: one step back, keeping Black's leading row (run.h). */
    nu = egrun_man_unmoves(xf.bm, empty, un);
    for (int k = 0; k < nu; k++) {
        eng_pos q = xf;
        q.bm = un[k];
        queue_mark(w, pm, dst, mb, egix_index(ptab, &q));
    }
}

/* Stores byte b, of value v, for position i (p) of member m, counts it
 * when v is completed, and with `mark` queues the marks of its
 * predecessors for the next pass. Only the calling thread writes this
 * byte in this pass (its index or bitmap word is in the thread's chunk),
 * which is why a relaxed store suffices. */
static void
settle(pair_work *w, int m, uint64_t i, const eng_pos *p, uint8_t b, eng_pval v, int mark,
       _Atomic uint64_t *dst, mark_batch *mb, range_counts *n)
{
    atomic_store_explicit(&w->val[m][i], b, memory_order_relaxed);
    n->completed += eng_pval_completed(v) ? 1 : 0;
    if (mark)
        queue_preds(w, m, p, dst, mb, n);
}

#define BLK_POS 64    /* positions of a block, in both kinds of pass     */
#define BLK_REFS 4096 /* successor references of a block                 */

/* The per-call buffers of first_range and pass_range: too much for a
 * thread's stack. NULL (and w->nomem set) when out of memory: the pair
 * then fails with EGDB_ENOMEM. */
typedef struct range_bufs {
    mark_batch marks;
    union {
        struct {
            pwl_ref refs[BLK_REFS]; /* exits of a block                  */
            eng_pos succ[BLK_REFS]; /* the exit positions themselves      */
        } first;
        uint64_t inner[BLK_REFS]; /* later passes: successor indices in the pair */
    } u;
} range_bufs;

static range_bufs *
bufs_alloc(pair_work *w)
{
    range_bufs *r = malloc(sizeof *r);
    if (!r)
        atomic_store(&w->nomem, 1);
    else
        r->marks.n = 0;
    return r;
}

/*
 * The bound of an exit that no loaded slice holds (pwl_db_locate gave
 * -1): for a material that is not being built and is complete only as
 * compressed files, its exact value through the prober (which resolves
 * a capture position by playing its captures); otherwise LW, "we have no
 * information about their values" (seed 000, 2.3) - unless the slice is
 * one being built, which the build order must have loaded (w->missing).
 * A damaged compressed block is an error, never LW (w->damaged; the pair
 * is thrown away).
 */
static int
exit_unknown(pair_work *w, const eng_pos *c, range_counts *cnt)
{
    egix_slice s;
    egix_slice_of(c, &s);
    const int chosen = w->chosen[pwl_slice_mat_key(&s)];
    if (w->cdb && !chosen && egdb_covers(w->cdb, c)) {
        int v = egdb_probe(w->cdb, c);
        if (v > 0)
            return bound_of_egdb[v];
        if (v == EGDB_ECORRUPT || v == EGDB_EIO) {
            atomic_store(&w->damaged, 1);
            return ENG_LW;
        }
    }
    if (chosen)
        atomic_store(&w->missing, 1);
    cnt->exits++;
    return ENG_LW;
}

/* One position of a first-pass block. */
typedef struct fp_item {
    int kind;        /* FP_NONE (no move), FP_CAPTURE or FP_QUIET       */
    unsigned inside; /* quiet: the moves that stay in the pair         */
    int ref0, nref;  /* its exits' references, in move order           */
} fp_item;

enum { FP_NONE, FP_CAPTURE, FP_QUIET };

/*
 * First pass over positions [begin, end) of member m: the value of the
 * paper's first pass from the all-uTT start, with every move leaving the
 * pair looked up once (see the file comment). A range is walked with a
 * cursor (only the kings are unranked from one position to the next)
 * in blocks of BLK_POS positions: first every position's moves are
 * generated and the places of its exits found and prefetched (they lie
 * at random places of finished files), then the bounds are read in move
 * order with the same early stop at a sure win, so the values and the
 * counts are those of one position at a time.
 */
static void
first_range(void *ctx, int m, uint64_t begin, uint64_t end)
{
    pair_work *w = ctx;
    const int lead_row = w->slice[m].rb;
    const int pm = other_member(w, m);
    _Atomic uint64_t *dst = w->dirty[0][pm];
    range_counts cnt = {0};
    range_bufs *rb = bufs_alloc(w);
    if (!rb)
        return;
    fp_item items[BLK_POS];
    eng_pos pos[BLK_POS];
    egix_cursor cur;
    egix_cursor_init(&cur);
    if (begin < end)
        egix_seek(w->tab[m], &cur, begin);
    for (uint64_t b0 = begin; b0 < end;) {
        int nitems = 0, nrefs = 0;
        while (b0 + (uint64_t)nitems < end && nitems < BLK_POS &&
               nrefs <= BLK_REFS - ENG_MAX_MOVES) {
            if (b0 + (uint64_t)nitems != begin)
                egix_next(w->tab[m], &cur);
            const eng_pos *p = &cur.pos;
            fp_item *it = &items[nitems];
            pos[nitems++] = *p;
            /* Duplicate capture routes are one move (ENG_DUPS_MERGE), as
             * in every database of the project; they would not change a
             * max. */
            eng_movelist l;
            int n = eng_generate(p, &l, ENG_DUPS_MERGE);
            it->ref0 = nrefs;
            it->inside = 0;
            if (n == 0) {
                it->kind = FP_NONE;
                it->nref = 0;
                continue;
            }
            /* Captures are compulsory, so eng_generate returned only
             * captures or only non-captures. Every capture leaves the
             * pair (fewer pieces). A non-capture either stays (counted,
             * valued later) or leaves by a promotion or a new leading
             * row (looked up). */
            const int capture = l.m[0].njumps > 0;
            it->kind = capture ? FP_CAPTURE : FP_QUIET;
            for (int k = 0; k < n; k++) {
                if (!capture && move_stays(p, &l.m[k], lead_row)) {
                    it->inside++;
                    continue;
                }
                eng_pos c;
                egix_slice s;
                eng_make(p, &l.m[k], &c);
                rb->u.first.succ[nrefs] = eng_flip(&c);
                rb->u.first.refs[nrefs] = pwl_db_locate(w->db, &rb->u.first.succ[nrefs], &s);
                pwl_ref_prefetch(&rb->u.first.refs[nrefs]);
                nrefs++;
            }
            it->nref = nrefs - it->ref0;
        }
        for (int t = 0; t < nitems; t++) {
            const fp_item *it = &items[t];
            eng_pval v, ext = ENG_PV_LL; /* LL: the identity of Table 2's max */
            unsigned byte_ext;
            if (it->kind == FP_NONE) {
                v = ENG_PV_LL; /* no move: lost */
                byte_ext = 0;
            } else {
                /* Nothing can beat WW: the bounds are read up to the
                 * first sure win. */
                for (int k = it->ref0; k < it->ref0 + it->nref && ext != ENG_PV_WW; k++) {
                    int b = pwl_ref_bound(&rb->u.first.refs[k]);
                    if (b < 0)
                        b = exit_unknown(w, &rb->u.first.succ[k], &cnt);
                    ext = eng_pval_max(ext, eng_pval_neg(eng_pval_of_bound((eng_bound)b)));
                }
                if (it->kind == FP_CAPTURE) {
                    /* A capture position is completed right here, exact
                     * when the smaller databases are complete. */
                    v = ext;
                    byte_ext = EXT_CAPTURE;
                    cnt.captures++;
                } else {
                    /* Moves inside the pair are uTT now, and neg(uTT) =
                     * uTT; with a win among the exits the value is WW
                     * whatever they are. */
                    v = it->inside ? eng_pval_max(ext, ENG_PV_UTT) : ext;
                    byte_ext = ext;
                }
            }
            /* The predecessors assumed uTT for this position. */
            settle(w, m, b0 + (uint64_t)t, &pos[t], (uint8_t)(v | byte_ext << EXT_SHIFT), v,
                   v != ENG_PV_UTT, dst, &rb->marks, &cnt);
        }
        b0 += (uint64_t)nitems;
    }
    flush_marks(w, pm, dst, &rb->marks, &cnt);
    free(rb);
    add_counts(w, &cnt);
}

/* One position of a later pass's block. */
typedef struct ps_item {
    uint64_t i;     /* its index in member m                         */
    uint8_t b;      /* its byte when the pass reached it             */
    int ref0, nref; /* its moves inside the pair: rb->u.inner[ref0..]  */
    eng_pos p;
} ps_item;

/* Evaluates a block: each position gets max(exits, max over its moves
 * inside the pair of neg(current value)); a change queues the marks of
 * its predecessors for the next pass. */
static void
pass_block(pair_work *w, int m, const ps_item *items, int nitems, range_bufs *rb,
           _Atomic uint64_t *nxt, range_counts *cnt)
{
    const int pm = other_member(w, m);
    for (int t = 0; t < nitems; t++) {
        const ps_item *it = &items[t];
        const eng_pval v = (eng_pval)(it->b & VAL_MASK);
        eng_pval r = (eng_pval)(it->b >> EXT_SHIFT);
        for (int k = it->ref0; k < it->ref0 + it->nref && r != ENG_PV_WW; k++) {
            uint8_t cb = atomic_load_explicit(&w->val[pm][rb->u.inner[k]], memory_order_relaxed);
            r = eng_pval_max(r, eng_pval_neg((eng_pval)(cb & VAL_MASK)));
        }
        if (r == v)
            continue; /* nothing new: the predecessors stay as they are */
        /* The exit nibble is kept. */
        cnt->changed++;
        settle(w, m, it->i, &it->p, (uint8_t)((it->b & ~VAL_MASK) | r), r, 1, nxt, &rb->marks, cnt);
    }
}

/*
 * One later pass over bitmap words [begin, end) of member m: each marked
 * position that is not completed is re-evaluated (pass_block). Marked
 * positions come in index order: a cursor unranks them (only the kings
 * when the men stay), and they are taken in blocks of BLK_POS, whose
 * successors inside the pair are indexed and prefetched before any is
 * read. A king move keeps the men, so its successors share the men part
 * of their index. Values are read and written in place, so a block may
 * see values of the same pass, as any iteration order allows (see the
 * proof above).
 */
static void
pass_range(void *ctx, int m, uint64_t begin, uint64_t end)
{
    pair_work *w = ctx;
    const int lead_row = w->slice[m].rb;
    const int pm = other_member(w, m);
    const egix_table *ptab = w->tab[pm];
    _Atomic uint64_t *cur_map = w->dirty[w->parity][m];
    _Atomic uint64_t *nxt = w->dirty[w->parity ^ 1][pm];
    range_counts cnt = {0};
    range_bufs *rb = NULL; /* allocated at the first position to evaluate:
                              in late passes most ranges have none */
    ps_item items[BLK_POS];
    int nitems = 0, nrefs = 0;
    egix_cursor cur;
    egix_cursor_init(&cur);
    for (uint64_t k = begin; k < end; k++) {
        uint64_t bits = atomic_load_explicit(&cur_map[k], memory_order_relaxed);
        if (!bits)
            continue;
        /* Only this thread touches word k of the current bitmap (marks go
         * to the other parity), so it is cleared for the pass after next. */
        atomic_store_explicit(&cur_map[k], 0, memory_order_relaxed);
        for (; bits; bits &= bits - 1) {
            uint64_t i = (k << 6) | (uint64_t)__builtin_ctzll(bits);
            uint8_t b = atomic_load_explicit(&w->val[m][i], memory_order_relaxed);
            if (eng_pval_completed((eng_pval)(b & VAL_MASK)))
                continue;
            cnt.evaluations++;
            if (!rb && !(rb = bufs_alloc(w)))
                return; /* the pair fails (w->nomem) */
            if (nitems == BLK_POS || nrefs > BLK_REFS - ENG_MAX_MOVES) {
                pass_block(w, m, items, nitems, rb, nxt, &cnt);
                nitems = nrefs = 0;
            }
            egix_seek(w->tab[m], &cur, i);
            ps_item *it = &items[nitems++];
            it->i = i;
            it->b = b;
            it->p = cur.pos;
            it->ref0 = nrefs;
            eng_movelist l;
            int n = eng_generate(&it->p, &l, ENG_DUPS_MERGE);
            uint64_t men_base = 0;
            int have_men = 0;
            for (int t = 0; t < n; t++) {
                if (!move_stays(&it->p, &l.m[t], lead_row))
                    continue; /* an exit, already in the byte */
                eng_pos c, cf;
                eng_make(&it->p, &l.m[t], &c);
                cf = eng_flip(&c);
                uint64_t j;
                if (it->p.bk & (1u << l.m[t].from)) {
                    if (!have_men) {
                        men_base = egix_index_men(ptab, &cf);
                        have_men = 1;
                    }
                    j = men_base + egix_index_kings(ptab, &cf);
                } else {
                    j = egix_index(ptab, &cf);
                }
                __builtin_prefetch((const void *)&w->val[pm][j]);
                rb->u.inner[nrefs++] = j;
            }
            it->nref = nrefs - it->ref0;
        }
    }
    if (rb) {
        pass_block(w, m, items, nitems, rb, nxt, &cnt);
        flush_marks(w, pm, nxt, &rb->marks, &cnt);
        free(rb);
    }
    add_counts(w, &cnt);
}

/* ---- writing ------------------------------------------------------------ */

/*
 * Writes a finished slice: "<name>.pwl.tmp", fsync, read back and check
 * (header and payload, counts included), rename, fsync the directory. A
 * file with the final name is always complete.
 */
static int
write_slice(const char *dir, egpt_slice_info *h, const uint8_t *packed, char *err, size_t errlen)
{
    char path[PATH_MAX_LEN], tmp[PATH_MAX_LEN + 8];
    if (pwl_path(dir, &h->slice, path, sizeof path) != 0) {
        snprintf(err, errlen, "database path too long: %s", dir);
        return EGDB_EINVAL;
    }
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    size_t plen = (size_t)((h->positions + 1) / 2);
    h->payload_hash = XXH3_64bits(packed, plen);
    unsigned char hb[EGPT_HEADER_BYTES];
    pwl_header_encode(h, hb);

    const void *parts[2] = {hb, packed};
    size_t lens[2] = {sizeof hb, plen};
    int rc = egst_write_tmp(tmp, parts, lens, 2, err, errlen);
    if (rc != 0)
        return rc;

    egpt_slice_info back;
    rc = pwl_read_header(tmp, &back, err, errlen);
    if (rc == 0) {
        int fd = open(tmp, O_RDONLY | O_CLOEXEC);
        void *mp =
            fd >= 0 ? mmap(NULL, sizeof hb + plen, PROT_READ, MAP_SHARED, fd, 0) : MAP_FAILED;
        if (fd >= 0)
            close(fd);
        if (mp == MAP_FAILED) {
            snprintf(err, errlen, "%s: read back: %s", tmp, strerror(errno));
            rc = EGDB_EIO;
        } else {
            rc = pwl_check_payload((const uint8_t *)mp + sizeof hb, &back, tmp, err, errlen);
            munmap(mp, sizeof hb + plen);
        }
    }
    if (rc != 0) {
        unlink(tmp);
        return rc;
    }
    return egst_commit(tmp, path, dir, err, errlen);
}

/* ---- build driver ------------------------------------------------------- */

/* Calls the caller's progress function at most four times a second
 * (always when force is set): the egdb_progress of the exact builder, so
 * one command-line printer serves both builders. */
static void
report_progress(run_state *rs, const pair_work *w, const char *phase, uint64_t pass,
                uint64_t resolved, int force)
{
    egrun_report_pair(&rs->prog, &rs->tally, phase, pass, resolved,
                      w->size[0] + (w->nmem == 2 ? w->size[1] : 0), &w->slice[0], force);
}

/* One line per pair in "<dir>/partial-log.tsv": slice, positions, passes,
 * re-evaluations, seconds, threads (run-dependent, so not in the files). */
static void
log_pair(const char *dir, const egix_slice *s, uint64_t positions, uint64_t passes, uint64_t evals,
         double seconds, int threads)
{
    egrun_log(dir, "partial-log.tsv", s, "\t%" PRIu64 "\t%" PRIu64 "\t%" PRIu64 "\t%.3f\t%d\n",
              positions, passes, evals, seconds, threads);
}

/*
 * Builds one pair, writes its files and loads them.
 * Memory: one byte and two bits per position (value + exits, two dirty
 * bitmaps), for the 3-vs-3 pairs at most 1.25 x 11 million bytes. The
 * order of work:
 *   1. every byte set to uTT (the paper's initial value);
 *   2. the first pass (both cores over index ranges);
 *   3. later passes until one marks nothing, alternating the two bitmap
 *      parities (a pass reads one and writes the other);
 *   4. decide() on every byte, packing and counting; the files are
 *      written, read back, renamed, then mapped for the later pairs.
 */
static int
build_pair(run_state *rs, const egix_slice *members, int nmem, char *err, size_t errlen)
{
    pair_work w;
    memset(&w, 0, sizeof w);
    w.nmem = nmem;
    w.db = &rs->db;
    w.chosen = rs->chosen;
    w.cdb = rs->cdb;
    int rc = 0, threads = rs->opts->threads;
    uint8_t *packed = NULL;
    double t_start = egrun_now();
    for (int m = 0; m < nmem; m++) {
        w.slice[m] = members[m];
        if (egix_table_create(&members[m], &w.tab[m]) != 0) {
            snprintf(err, errlen, "out of memory for an index table");
            rc = EGDB_ENOMEM;
            goto out;
        }
        w.size[m] = egix_table_size(w.tab[m]);
        w.words[m] = (w.size[m] + 63) / 64;
        w.val[m] = malloc(w.size[m] ? w.size[m] : 1);
        for (int par = 0; par < 2; par++)
            w.dirty[par][m] = calloc(w.words[m] ? w.words[m] : 1, sizeof(uint64_t));
        if (!w.val[m] || !w.dirty[0][m] || !w.dirty[1][m]) {
            snprintf(err, errlen, "out of memory for a pair of %" PRIu64 " positions",
                     w.size[0] + w.size[1]);
            rc = EGDB_ENOMEM;
            goto out;
        }
        egrun_advise_huge((void *)w.val[m], w.size[m]);
        for (int par = 0; par < 2; par++)
            egrun_advise_huge((void *)w.dirty[par][m], w.words[m] * sizeof(uint64_t));
        /* Everything starts at uTT (seed 000: "the initialized unknown
         * value is now uTT"): what the first pass reads for a position it
         * has not reached yet. No thread runs yet, and an atomic byte is
         * a byte. */
        memset((void *)w.val[m], ENG_PV_UTT, w.size[m]);
    }
    uint64_t positions = w.size[0] + (nmem == 2 ? w.size[1] : 0);
    size_t pair_bytes = (size_t)positions + (size_t)(w.words[0] + w.words[1]) * 16;
    if (pair_bytes > rs->stats->peak_pair_bytes)
        rs->stats->peak_pair_bytes = pair_bytes;

    /* First pass. */
    double t1 = egrun_now();
    report_progress(rs, &w, "first pass", 1, 0, 1);
    /* Marks of the first pass go to the parity-0 bitmaps, which the
     * second pass reads. */
    egrun_par_for(&w, first_range, w.nmem, w.size, CHUNK_POS, positions, threads);
    double t2 = egrun_now();
    rs->stats->seconds_first += t2 - t1;
    if (atomic_load(&w.nomem)) {
        snprintf(err, errlen, "out of memory for the first pass's buffers");
        rc = EGDB_ENOMEM;
        goto out;
    }
    if (atomic_load(&w.missing)) {
        char name[EGIX_NAME_MAX];
        egix_slice_name(&w.slice[0], name, sizeof name);
        snprintf(err, errlen, "slice %s: a successor lies in a chosen slice that is not built",
                 name);
        rc = EGDB_EMISSING;
        goto out;
    }
    if (atomic_load(&w.damaged)) {
        char name[EGIX_NAME_MAX];
        egix_slice_name(&w.slice[0], name, sizeof name);
        snprintf(err, errlen,
                 "slice %s: a compressed database file a successor lies in is damaged (egdb "
                 "verify --db %.3000s names it)",
                 name, rs->dir);
        rc = EGDB_ECORRUPT;
        goto out;
    }

    /* Later passes, until one changes nothing (then nothing is marked).
     * The marks counter of the previous pass (or of the first pass) says
     * whether the bitmap to be read holds anything. */
    uint64_t passes = 1;
    w.parity = 0;
    while (atomic_load(&w.marks) != 0) {
        atomic_store(&w.marks, 0);
        atomic_store(&w.changed, 0);
        egrun_par_for(&w, pass_range, w.nmem, w.words, CHUNK_WORDS, positions, threads);
        if (atomic_load(&w.nomem)) {
            /* A range was skipped, its marks unread: the pair is not
             * at its fixed point. */
            snprintf(err, errlen, "out of memory for a pass's buffers");
            rc = EGDB_ENOMEM;
            goto out;
        }
        passes++;
        w.parity ^= 1;
        report_progress(rs, &w, "passes", passes, atomic_load(&w.completed), 0);
    }
    double t3 = egrun_now();
    rs->stats->seconds_passes += t3 - t2;

    /* decide(), pack, count, write, load. */
    report_progress(rs, &w, "write", passes, positions, 1);
    for (int m = 0; m < nmem; m++) {
        packed = egrun_pack_alloc(packed, w.size[m], 2);
        if (!packed) {
            rc = EGDB_ENOMEM;
            goto out;
        }
        egpt_slice_info h;
        memset(&h, 0, sizeof h);
        h.slice = w.slice[m];
        h.positions = w.size[m];
        for (uint64_t i = 0; i < w.size[m]; i++) {
            /* decide(): "remaining positions with unknown values" become
             * their bound; uTT, a draw by repetition, becomes DD. */
            uint8_t b = atomic_load_explicit(&w.val[m][i], memory_order_relaxed);
            eng_bound d = eng_pval_decide((eng_pval)(b & VAL_MASK));
            h.count[d]++;
            if ((b >> EXT_SHIFT) == EXT_CAPTURE) {
                h.captures++;
                h.captures_exact += eng_bound_is_exact(d) ? 1 : 0;
                h.captures_half += (d == ENG_LD || d == ENG_DW) ? 1 : 0;
            }
            packed[i >> 1] |= (uint8_t)(d << ((i & 1) * 4));
        }
        if ((rc = write_slice(rs->dir, &h, packed, err, errlen)) != 0)
            goto out;
        for (int k = 0; k < ENG_NBOUNDS; k++)
            rs->stats->count[k] += h.count[k];
        rs->stats->capture_positions += h.captures;
    }
    /* What later pairs read is what is on disk. */
    for (int m = 0; m < nmem; m++)
        if ((rc = pwl_db_add(&rs->db, rs->dir, &w.slice[m], 0, err, errlen)) != 0)
            goto out;
    double t4 = egrun_now();
    rs->stats->seconds_write += t4 - t3;
    uint64_t evals = atomic_load(&w.evaluations);
    log_pair(rs->dir, &w.slice[0], positions, passes, evals, t4 - t_start, threads);
    rs->stats->positions += positions;
    rs->stats->exits_unavailable += atomic_load(&w.exits);
    rs->stats->evaluations += evals;
    rs->stats->passes_total += passes;
    if (passes > rs->stats->passes_max)
        rs->stats->passes_max = passes;
    rs->stats->pairs_built++;
    rs->stats->slices_built += (size_t)nmem;
    rs->tally.done_total += positions;
out:
    for (int m = 0; m < 2; m++) {
        free((void *)w.val[m]);
        free((void *)w.dirty[0][m]);
        free((void *)w.dirty[1][m]);
        egix_table_destroy(w.tab[m]);
    }
    free(packed);
    return rc;
}

/* Whether the partial file of s is complete (header check only: the
 * payload is checked when the kept pair is loaded, which fails the build
 * loudly rather than silently rebuilding over a damaged file). */
static int
pair_file_ok(const char *dir, const egix_slice *s)
{
    char path[PATH_MAX_LEN], err[256];
    egpt_slice_info h;
    if (pwl_path(dir, s, path, sizeof path) != 0)
        return 0;
    return pwl_read_header(path, &h, err, sizeof err) == 0 && egix_slice_equal(&h.slice, s);
}

/* What is done to one pair of slices (members, nmem of them) in a walk
 * over the pairs: loading its exact files (load_exact_pair), counting it
 * for the progress reports (count_pair) or building it (make_pair). */
typedef int (*pair_step)(run_state *rs, const egix_slice *members, int nmem, char *err,
                         size_t errlen);

/* Calls step on every pair of slices of n pieces whose material is
 * chosen (chosen 1) or is not (chosen 0), in egix_slices order, until
 * one fails. RETURN 0 or the first error. */
static int
each_pair(run_state *rs, int n, int chosen, pair_step step, char *err, size_t errlen)
{
    egix_slice *sl;
    int *pair;
    size_t k;
    int rc = egrun_list_slices(n, &sl, &pair, &k);
    if (rc != 0)
        return rc;
    for (size_t i = 0; i < k && rc == 0;) {
        size_t j = i;
        while (j < k && pair[j] == pair[i])
            j++;
        if (!rs->chosen[pwl_slice_mat_key(&sl[i])] == !chosen)
            rc = step(rs, &sl[i], (int)(j - i), err, errlen);
        i = j;
    }
    free(sl);
    free(pair);
    return rc;
}

/* The exact successors in the members of a pair that is not being built
 * (load_complete): each .wld file there is mapped, its payload checked; an
 * absent one is not loaded (its positions count as LW), but noted in
 * rs->compressed_only when it is kept compressed. */
static int
load_exact_pair(run_state *rs, const egix_slice *members, int nmem, char *err, size_t errlen)
{
    for (int t = 0; t < nmem; t++) {
        char path[PATH_MAX_LEN];
        struct stat st;
        if (egst_path(rs->dir, &members[t], path, sizeof path) != 0)
            continue;
        if (stat(path, &st) != 0) {
            /* Absent: its positions count as LW, unless it is kept
             * compressed only (load_complete). */
            size_t len = strlen(path);
            memcpy(path + len - 3, "cwl", 3);
            rs->compressed_only |= stat(path, &st) == 0;
            continue;
        }
        /* Check the payload: nothing built here may rest on a damaged
         * file. */
        int rc = egst_add_mapped(&rs->db.reg, rs->dir, &members[t], 1, err, errlen);
        if (rc != 0)
            return rc;
        rs->stats->complete_slices++;
    }
    return 0;
}

/*
 * Loads the complete .wld slices of every piece count up to nmax whose
 * material is not being built: the exact successors. Slices are looked
 * for by name in egix_slices order rather than by listing the directory,
 * so a stray file cannot slip in; absent ones are simply not loaded and
 * count as LW. Same-count materials that are not chosen are loaded too:
 * if, say, 1122 was built completely, promotions into it are exact.
 */
static int
load_complete(run_state *rs, int nmax, char *err, size_t errlen)
{
    if (nmax > EGDB_MAX_PIECES)
        nmax = EGDB_MAX_PIECES; /* no complete database has more pieces */
    for (int n = 1; n <= nmax; n++) {
        int rc = each_pair(rs, n, 0, load_exact_pair, err, errlen);
        if (rc != 0)
            return rc;
    }
    /* What is kept only compressed (a pipelined build deletes the 2-bit
     * files): read through the prober. A directory without a complete
     * database has nothing to offer here; a damaged file is an error. */
    if (!rs->compressed_only)
        return 0;
    /* Complete files only: the partial files of this directory are the
     * build's own output, some of them not written yet. */
    int rc = egdb_open(rs->dir, EGDB_OPEN_COMPLETE_ONLY, PARTIAL_CDB_CACHE, &rs->cdb, err, errlen);
    if (rc == EGDB_EMISSING) {
        rs->cdb = NULL;
        rc = 0;
    }
    if (rc == 0)
        rs->stats->compressed_exits = 1;
    return rc;
}

/* Counts a pair still to build (a member without its complete file) into
 * the run's tally. Never fails. */
static int
count_pair(run_state *rs, const egix_slice *members, int nmem, char *err, size_t errlen)
{
    (void)err;
    (void)errlen;
    int done = 1;
    uint64_t pos = 0;
    for (int t = 0; t < nmem; t++) {
        uint64_t sz = 0;
        egix_size(&members[t], &sz);
        pos += sz;
        done &= pair_file_ok(rs->dir, &members[t]);
    }
    if (!done) {
        rs->tally.pair_count++;
        rs->tally.run_total += pos;
    }
    return 0;
}

/* Loads a pair kept from an earlier run (payload checked), or builds it
 * unless the caller asked the build to stop. */
static int
make_pair(run_state *rs, const egix_slice *members, int nmem, char *err, size_t errlen)
{
    int done = 1, rc = 0;
    for (int t = 0; t < nmem; t++)
        done &= pair_file_ok(rs->dir, &members[t]);
    if (done) {
        for (int t = 0; t < nmem && rc == 0; t++)
            rc = pwl_db_add(&rs->db, rs->dir, &members[t], 1, err, errlen);
        rs->stats->slices_kept += (size_t)nmem;
        return rc;
    }
    if (rs->opts->stop && *rs->opts->stop) {
        snprintf(err, errlen, "stopped; finished slices are kept, run again to resume");
        return EGDB_EINTERRUPT;
    }
    rs->tally.pair_no++;
    return build_pair(rs, members, nmem, err, errlen);
}

static int partial_locked(const char *dir, const egpt_opts *opts, egpt_stats *stats, char *err,
                          size_t errlen);

int
egpt_build(const char *dir, const egpt_opts *opts, egpt_stats *stats, char *err, size_t errlen)
{
    int lock = egrun_lock(dir, err, errlen);
    if (lock < 0)
        return lock;
    int rc = partial_locked(dir, opts, stats, err, errlen);
    egrun_unlock(lock);
    return rc;
}

static int
partial_locked(const char *dir, const egpt_opts *opts, egpt_stats *stats, char *err, size_t errlen)
{
    run_state *rs = calloc(1, sizeof *rs);
    if (!rs)
        return EGDB_ENOMEM;
    memset(stats, 0, sizeof *stats);
    int rc = 0, counts_used[EGPT_MAX_PIECES + 1] = {0}, nmax = 0;
    rs->dir = dir;
    rs->opts = opts;
    rs->stats = stats;
    rs->prog.fn = opts->progress;
    rs->prog.arg = opts->progress_arg;
    rs->prog.t0 = egrun_now();
    stats->threads = opts->threads;
    if (opts->threads < 1 || !opts->materials || opts->nmaterials < 1 ||
        opts->nmaterials > EGPT_MAX_MATERIALS) {
        snprintf(err, errlen, "threads must be at least 1 and 1..%d materials given",
                 EGPT_MAX_MATERIALS);
        free(rs);
        return EGDB_EINVAL;
    }
    for (size_t i = 0; i < opts->nmaterials; i++) {
        const egpt_material *m = &opts->materials[i];
        if (!pwl_material_ok(m)) {
            snprintf(err, errlen, "material %zu (%d,%d,%d,%d) is not 1..%d pieces, 12 a side", i,
                     m->nbk, m->nwk, m->nbm, m->nwm, EGPT_MAX_PIECES);
            free(rs);
            return EGDB_EINVAL;
        }
        /* A material and its colour-swapped twin are one pair of slices. */
        rs->chosen[pwl_mat_key(m->nbk, m->nwk, m->nbm, m->nwm)] = 1;
        rs->chosen[pwl_mat_key(m->nwk, m->nbk, m->nwm, m->nbm)] = 1;
        int n = m->nbk + m->nwk + m->nbm + m->nwm;
        counts_used[n] = 1;
        if (n > nmax)
            nmax = n;
    }
    if (mkdir(dir, 0755) != 0 && errno != EEXIST) {
        snprintf(err, errlen, "cannot create %s: %s", dir, strerror(errno));
        free(rs);
        return EGDB_EIO;
    }
    if ((rc = pwl_db_init(&rs->db)) != 0) {
        free(rs);
        return rc;
    }
    if ((rc = load_complete(rs, nmax, err, errlen)) != 0)
        goto out;

    /* What is left to do, for progress. */
    for (int n = 1; n <= nmax; n++)
        if (counts_used[n] && (rc = each_pair(rs, n, 1, count_pair, err, errlen)) != 0)
            goto out;

    /* Build in egix_slices order restricted to the chosen materials: every
     * move out of a pair lands in fewer pieces or in a pair listed
     * earlier, so whatever of it is chosen is loaded by then. */
    for (int n = 1; n <= nmax && rc == 0; n++)
        if (counts_used[n])
            rc = each_pair(rs, n, 1, make_pair, err, errlen);
out:
    stats->seconds_total = egrun_now() - rs->prog.t0;
    pwl_db_free(&rs->db);
    egdb_close(rs->cdb);
    free(rs);
    return rc;
}
