/*
 * compress.c - turns the built 2-bit slice files (.wld) into the
 * compressed form probed by solvers (.cwl; format in codec.h).
 *
 * Per slice: mark dropped positions (egcd_dropped) as don't-care, lay
 * the values out in each king order (index.h), estimate each layout's
 * coded size and keep the smallest; then cut each block into runs (a
 * don't-care position joins the run in progress, or the first real run
 * of its block), count the run symbols, build the slice's canonical
 * prefix code and write every block. Slices are independent, so threads
 * take whole slices from a shared counter.
 *
 * Choices and the measurements behind them are in docs/egdb.md (block
 * size, what is dropped, the symbol alphabet, the king orders).
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
#include <unistd.h>

#include <xxhash.h>

#include "egdb/codec.h"
#include "egdb/decompress.h"
#include "egdb/egdb.h"
#include "egdb/index.h"
#include "egdb/le.h"
#include "egdb/run.h"
#include "egdb/stage.h"
#include "egdb/store.h"
#include "engine/engine.h"

/* ---- constants -------------------------------------------------------- */

/* Positions between two progress reports of a worker (throttled further
 * to four a second by egrun_report). */
#define PROGRESS_STEP (1u << 16)

/* ---- types ------------------------------------------------------------ */

typedef struct run {
    uint32_t len;
    uint8_t value;
} run;

typedef struct growbuf {
    uint8_t *b;
    size_t n, cap;
} growbuf;

typedef struct bitwriter {
    growbuf *g;
    uint64_t acc;
    int nacc;
} bitwriter;

/* Per-slice figures, summed into egdb_compress_stats. */
typedef struct slice_figures {
    uint64_t bytes, dropped_capture, dropped_threat, runs, code_bits, extra_bits, overhead_bits;
    uint64_t marked_pages;
    int order; /* the king order chosen (EGIX_ORDER_*) */
} slice_figures;

typedef struct compress_job {
    const char *dir;
    const egst_slice *const *list; /* the slices to compress */
    size_t n;
    volatile int *stop; /* NULL, or set to stop after the slices in hand */
    int flags;
    _Atomic size_t next;
    _Atomic int failed;
    pthread_mutex_t sum_lock;
    egdb_compress_stats sum;
    pthread_mutex_t err_lock;
    int rc; /* the code of the first failure (under err_lock) */
    char *err;
    size_t errlen;
    /* Progress: positions whose values have been laid out (the pass over
     * every position that most of a slice's time goes to; what follows
     * takes time in proportion), slices finished. The lock serialises the
     * caller's function; a worker that finds it taken skips its report. */
    egrun_progress prog;
    pthread_mutex_t prog_lock;
    _Atomic uint64_t done;
    _Atomic size_t slices_done;
    uint64_t run_total;
} compress_job;

/* ---- helpers ---------------------------------------------------------- */

/*
 * Passes the run's progress to the caller's function as phase "compress"
 * (egdb.h): at most four times a second (egrun_report), always when
 * force is set. Called by every worker; one reports at a time.
 */
static void
report_progress(compress_job *j, const egix_slice *s, int force)
{
    if (!j->prog.fn)
        return;
    if (force)
        pthread_mutex_lock(&j->prog_lock);
    else if (pthread_mutex_trylock(&j->prog_lock) != 0)
        return;
    egdb_progress p;
    memset(&p, 0, sizeof p);
    p.phase = "compress";
    p.pair_no = atomic_load(&j->slices_done);
    p.pair_count = j->n;
    p.resolved = p.done_total = atomic_load(&j->done);
    p.positions = p.run_total = j->run_total;
    egrun_report(&j->prog, &p, s, force);
    pthread_mutex_unlock(&j->prog_lock);
}

/* The fault a test asked for (stage.h, egcp_set_fault); 0 in use. */
static int test_fault = EGCP_FAULT_NONE;

void
egcp_set_fault(int fault)
{
    test_fault = fault;
}

/* EGCP_FAULT_READBACK: the first kept value of v (2-bit fields, 0 =
 * dropped) becomes another kept value. */
static void
fault_readback(uint8_t *v, uint64_t size)
{
    for (uint64_t i = 0; i < size; i++) {
        unsigned x = v[i >> 2] >> ((i & 3) * 2) & 3u;
        if (x != 0) {
            v[i >> 2] ^= (uint8_t)((x == 1 ? 3u : 1u) << ((i & 3) * 2));
            return;
        }
    }
}

static int
grow(growbuf *g, size_t more)
{
    if (g->n + more <= g->cap)
        return 0;
    size_t cap = g->cap ? g->cap : 4096;
    while (cap < g->n + more)
        cap *= 2;
    uint8_t *nb = realloc(g->b, cap);
    if (!nb)
        return -1;
    g->b = nb;
    g->cap = cap;
    return 0;
}

static int
put_bits(bitwriter *w, uint32_t v, int n)
{
    /* Accumulates up to 32 bits at a time, most significant first. */
    w->acc = (w->acc << n) | (v & ((n < 32 ? (1u << n) : 0u) - 1u));
    w->nacc += n;
    while (w->nacc >= 8) {
        if (grow(w->g, 1) != 0)
            return -1;
        w->g->b[w->g->n++] = (uint8_t)(w->acc >> (w->nacc - 8));
        w->nacc -= 8;
    }
    return 0;
}

static int
flush_bits(bitwriter *w)
{
    if (w->nacc > 0)
        return put_bits(w, 0, 8 - w->nacc);
    return 0;
}

/*
 * Cuts the values of positions [b, end) of v (2 bits a position, 0 =
 * don't care) into runs, don't-care positions joining the run in
 * progress. Writes the block's runs to runs; returns their number.
 */
static size_t
block_runs(const uint8_t *v, uint64_t b, uint64_t end, run *runs)
{
    size_t n = 0;
    uint32_t pending = 0; /* don't-cares before the first real value */
    int cur = 0;
    uint32_t len = 0;
    for (uint64_t i = b; i < end; i++) {
        int x = (v[i >> 2] >> ((i & 3) * 2)) & 3;
        if (x == 0) {
            if (cur)
                len++;
            else
                pending++;
            continue;
        }
        if (cur == 0) {
            cur = x;
            len = pending + 1;
        } else if (x == cur) {
            len++;
        } else {
            runs[n].len = len;
            runs[n].value = (uint8_t)cur;
            n++;
            cur = x;
            len = 1;
        }
    }
    if (cur == 0) { /* the whole block is don't-care */
        cur = EGDB_WIN;
        len = pending;
    }
    runs[n].len = len;
    runs[n].value = (uint8_t)cur;
    return n + 1;
}

/* The predictor seed of a block: the value that predicts its second run. */
static int
block_seed(const run *r, size_t n)
{
    if (n >= 2)
        return r[1].value;
    return r[0].value == EGDB_WIN ? EGDB_LOSS : EGDB_WIN;
}

/* Symbol of run j of a block (j >= 1 uses the prediction). */
static int
run_symbol(const run *r, size_t j, int seed, int *eb, uint32_t *extra)
{
    int bucket = egcd_bucket(r[j].len, eb, extra);
    if (j == 0)
        return bucket;
    int predicted = j >= 2 ? r[j - 2].value : seed;
    return (r[j].value != predicted) * EGCD_NLEN + bucket;
}

/*
 * Writes the EGCD_NMARKS marks of a marked block (codec.h, MARKS) into
 * out: for each, the decoder's state before the run holding position
 * total * k / 4 (k = 1..3), the runs' codes having lengths len.
 */
static void
put_marks(const run *r, size_t nr, int seed, uint32_t total, const uint8_t len[EGCD_NSYM],
          uint8_t *out)
{
    uint64_t bit = 0;
    uint32_t pos = 0;
    int cur = seed, prev = r[0].value; /* the decoder's start (codec.c) */
    int k = 0;
    for (size_t j = 0; j < nr && k < EGCD_NMARKS; j++) {
        while (k < EGCD_NMARKS && egcd_mark_target(total, k) < pos + r[j].len) {
            uint64_t x = bit | (uint64_t)pos << 20 | (uint64_t)cur << 33 | (uint64_t)prev << 35;
            for (int i = 0; i < EGCD_MARK_BYTES; i++)
                out[k * EGCD_MARK_BYTES + i] = (uint8_t)(x >> (8 * i));
            k++;
        }
        int eb;
        uint32_t x;
        bit += len[run_symbol(r, j, seed, &eb, &x)] + (uint64_t)eb;
        pos += r[j].len;
        prev = cur;
        cur = r[j].value;
    }
}

/*
 * Writes tmp ("<path>.tmp") and reads it back: its bytes must be what was
 * meant to be written. The caller then checks its values (check_written)
 * and only then renames it (egst_commit): like every file of the module,
 * a .cwl with its final name is complete and checked. (Before stop 58 it
 * was renamed first, so a kill between the two left a final name whose
 * values no one had read back.)
 */
static int
write_file(const char *tmp, const unsigned char *hdr, const uint8_t *codes, const uint8_t *tb,
           size_t tb_len, const growbuf *data, char *err, size_t errlen)
{
    const void *parts[4] = {hdr, codes, tb, data->b ? (const void *)data->b : (const void *)""};
    size_t lens[4] = {EGCD_HEADER_BYTES, EGCD_NSYM, tb_len, data->n};
    uint64_t want = 0;
    XXH3_state_t *st = XXH3_createState();
    if (st) {
        XXH3_64bits_reset(st);
        for (int i = 0; i < 4; i++)
            XXH3_64bits_update(st, parts[i], lens[i]);
        want = XXH3_64bits_digest(st);
        XXH3_freeState(st);
    }
    int rc = st ? egst_write_tmp(tmp, parts, lens, 4, err, errlen) : EGDB_ENOMEM;
    if (rc != 0)
        return rc;
    size_t total = lens[0] + lens[1] + lens[2] + lens[3];
    int fd = open(tmp, O_RDONLY | O_CLOEXEC);
    void *m = fd >= 0 ? mmap(NULL, total, PROT_READ, MAP_SHARED, fd, 0) : MAP_FAILED;
    if (fd >= 0)
        close(fd);
    if (m == MAP_FAILED) {
        snprintf(err, errlen, "%.300s: read back: %s", tmp, strerror(errno));
        unlink(tmp);
        return EGDB_EIO;
    }
    int same = XXH3_64bits(m, total) == want;
    munmap(m, total);
    if (!same) {
        snprintf(err, errlen, "%.300s: read back differs from what was written", tmp);
        unlink(tmp);
        return EGDB_ECORRUPT;
    }
    return 0;
}

/*
 * The written file read as a prober reads it: opened (header, table,
 * code), every page decoded (each block's checksum checked), and every
 * value it keeps compared with v, the values compress_slice meant to
 * write (2-bit, in the file's king order, 0 where the value was dropped).
 * The caller deletes a file that fails.
 *
 * What this proves, with the checks of compress_slice's walk: every
 * position the walk visits is the one its index names (its index from
 * scratch: egix_men_rank and egix_index_at_men, egix_index with the men
 * ranked apart, as the prober computes it); it is dropped exactly when
 * egcd_dropped says so (the prober's own test: such a position is then
 * resolved by search when probed); a kept one has its 2-bit value in v at
 * the index the prober computes in the file's order, no two sharing an
 * index. So every value a probe reads from the file is the 2-bit file's.
 * What it trusts beyond that: egix_index and egcd_dropped (shared with
 * the prober and checked by tests/test_egdb_index.c and the build tests,
 * which also check egix_index_at_men against egix_index in every order)
 * and the few lines of the walk that apply them. test_compress_faults
 * (tests/test_egdb_compress.c) makes each of these checks fail on purpose
 * (egcp_set_fault, stage.h) and sees the file refused.
 * Why here: the pipeline's compare stage (egvf_compare_slices) re-derived
 * each file's values from the 2-bit file in a second pass, independently
 * of the walk (a cursor in the file's order, an index in the build's, and
 * egcd_dropped where they differ); it took about a quarter of a unit's
 * stages. It still runs on files a stopped run left, and `egdb verify`
 * checks the compressed files' values against their successors.
 */
static int
check_written(const char *tmp, const char *dir, const egix_slice *s, const uint8_t *v,
              uint64_t size, char *err, size_t errlen)
{
    egdc_slice *d = NULL;
    int rc = egdc_open_file(tmp, dir, s, &d, err, errlen);
    if (rc != 0)
        return rc;
    uint64_t words[(1u << EGCD_PAGE_SHIFT) / 32];
    const uint8_t *buf = (const uint8_t *)words;
    uint64_t bad = UINT64_MAX;
    if (d->h.positions != size) {
        snprintf(err, errlen, "%s: holds %" PRIu64 " positions after writing, not %" PRIu64,
                 d->path, d->h.positions, size);
        rc = EGDB_EVERIFY;
    }
    for (uint32_t g = 0; g < d->npages && rc == 0; g++) {
        if (egdc_decode(d, g, (uint8_t *)words) != 0) {
            snprintf(err, errlen, "%s: page %u does not decode after writing", d->path, g);
            rc = EGDB_EVERIFY;
            break;
        }
        uint64_t first = (uint64_t)g << d->h.page_shift;
        uint64_t end =
            first + (1ull << d->h.page_shift) < size ? first + (1ull << d->h.page_shift) : size;
        /* Byte by byte (pages start on a byte): a 2-bit field of v that
         * is not 0 must equal the decoded one. */
        uint64_t nb = (end - first + 3) / 4;
        for (uint64_t b = 0; b < nb; b++) {
            unsigned x = v[(first >> 2) + b], y = buf[b];
            unsigned keep = ((x | x >> 1) & 0x55u) * 3u;
            if (((x ^ y) & keep) == 0)
                continue;
            for (unsigned k = 0; k < 4; k++)
                if ((x ^ y) & keep & 3u << 2 * k) {
                    bad = first + 4 * b + k;
                    break;
                }
            break;
        }
        if (bad != UINT64_MAX) {
            eng_pos p;
            char fen[ENG_FEN_MAX];
            egix_unindex(d->table, bad, &p);
            eng_format_fen(&p, fen, sizeof fen);
            snprintf(err, errlen,
                     "%s: index %" PRIu64 " (%s): the value read back differs from the one "
                     "written",
                     d->path, bad, fen);
            rc = EGDB_EVERIFY;
        }
    }
    egdc_close(d);
    return rc;
}

/*
 * Symbol counts of a slice laid out as v (2-bit values, 0 = don't care),
 * and an estimate of its data bytes with the code those counts give:
 * code and raw bits, plus each block's first byte and half a byte of
 * padding. Close enough to choose between king orders.
 */
static double
layout_cost(const uint8_t *v, uint64_t size, uint32_t npages, run *runs, uint64_t freq[EGCD_NSYM])
{
    const uint32_t psize = 1u << EGCD_PAGE_SHIFT;
    uint64_t extra = 0;
    memset(freq, 0, EGCD_NSYM * sizeof *freq);
    for (uint32_t g = 0; g < npages; g++) {
        uint64_t b = (uint64_t)g * psize, end = b + psize < size ? b + psize : size;
        size_t nr = block_runs(v, b, end, runs);
        int seed = block_seed(runs, nr);
        for (size_t j = 0; j < nr; j++) {
            int eb;
            uint32_t x;
            freq[run_symbol(runs, j, seed, &eb, &x)]++;
            extra += (uint64_t)eb;
        }
    }
    uint8_t len[EGCD_NSYM];
    egcd_code_lengths(freq, len, EGCD_MAX_BITS);
    uint64_t bits = extra;
    for (int k = 0; k < EGCD_NSYM; k++)
        bits += freq[k] * len[k];
    return (double)bits / 8.0 + 1.5 * npages;
}

/* Bits of the nr runs r of a block with seed `seed`, coded with code
 * lengths len (codes and extra bits). */
static uint64_t
runs_bits(const run *r, size_t nr, int seed, const uint8_t len[EGCD_NSYM])
{
    uint64_t bits = 0;
    for (size_t j = 0; j < nr; j++) {
        int eb;
        uint32_t x;
        bits += len[run_symbol(r, j, seed, &eb, &x)] + (uint64_t)eb;
    }
    return bits;
}

/* Bits of the runs of positions [b, end) coded with code lengths len. */
static uint64_t
range_bits(const uint8_t *v, uint64_t b, uint64_t end, run *runs, const uint8_t len[EGCD_NSYM])
{
    size_t nr = block_runs(v, b, end, runs);
    return runs_bits(runs, nr, block_seed(runs, nr), len);
}

/* A kept position of compress_slice's walk waiting for its places in the
 * other king orders. */
#define WALK_BLOCK 64
typedef struct pending {
    uint64_t j[EGIX_NORDERS]; /* its index in each order tried (0: unused) */
    unsigned v;               /* its 2-bit value */
} pending;

/* Writes the n pending values into the orders tried, in walk order. Two
 * kept positions on one index would mix their values, so each index of
 * an order is written at most once (and none past the end). */
static int
place_pending(const egix_slice *s, uint64_t size, const int try[EGIX_NORDERS],
              uint8_t *vals[EGIX_NORDERS], const pending *pend, int n, char *err, size_t errlen)
{
    for (int k = 0; k < n; k++)
        for (int o = 1; o < EGIX_NORDERS; o++) {
            if (!try[o])
                continue;
            uint64_t j = pend[k].j[o];
            if (j >= size || vals[o][j >> 2] >> ((j & 3) * 2) & 3) {
                char name[EGIX_NAME_MAX];
                egix_slice_name(s, name, sizeof name);
                snprintf(err, errlen,
                         "slice %s: king order %d gives index %" PRIu64
                         " to two positions or past the end",
                         name, o, j);
                return EGDB_EVERIFY;
            }
            vals[o][j >> 2] |= (uint8_t)(pend[k].v << ((j & 3) * 2));
        }
    return 0;
}

/*
 * Compresses one loaded slice into <dir>/<name>.cwl: lays its values out
 * in each king order (index.h, KING ORDERS), keeps the order whose runs
 * code smallest, and writes that. job gives dir and flags, and counts
 * the positions laid out for the progress reports.
 */
static int
compress_slice(compress_job *job, const egst_slice *e, const egst_header *wh, slice_figures *fig,
               char *err, size_t errlen)
{
    const char *dir = job->dir;
    const int flags = job->flags;
    const uint32_t psize = 1u << EGCD_PAGE_SHIFT;
    uint32_t npages = (uint32_t)((e->size + psize - 1) / psize), nblocks = 0;
    size_t vbytes = (size_t)((e->size + 3) / 4) + 1;
    /* A block's runs: at most psize for one page; a block of several pages
     * has at most EGCD_BLOCK_BITS of them (a run codes to >= 1 bit, and
     * runs that run on across pages only merge). */
    run *runs = malloc((size_t)(psize > EGCD_BLOCK_BITS ? psize : EGCD_BLOCK_BITS) * sizeof *runs);
    uint8_t *tb = malloc(egcd_table_bytes(npages));
    uint8_t *bpages = malloc((size_t)npages + 1);
    uint8_t *vals[EGIX_NORDERS] = {NULL};
    egix_table *tabs[EGIX_NORDERS] = {NULL};
    uint64_t freq[EGCD_NSYM];
    growbuf data = {NULL, 0, 0};
    int rc = 0, order = 0;
    if (!runs || !tb || !bpages) {
        rc = EGDB_ENOMEM;
        goto out;
    }
    /* Orders worth trying: without kings all five are the build order;
     * with kings of one colour only, which set is "outer" is moot. */
    int try[EGIX_NORDERS] = {1, 0, 0, 0, 0};
    if (e->slice.nbk + e->slice.nwk > 0)
        try[EGIX_ORDER_GRAY_B] = try[EGIX_ORDER_GRAY_RB] = 1;
    if (e->slice.nbk > 0 && e->slice.nwk > 0)
        try[EGIX_ORDER_GRAY_W] = try[EGIX_ORDER_GRAY_RW] = 1;
    for (int o = 0; o < EGIX_NORDERS; o++) {
        if (!try[o])
            continue;
        vals[o] = calloc(vbytes, 1);
        if (!vals[o] || (o > 0 && egix_table_create_order(&e->slice, o, &tabs[o]) != 0)) {
            rc = EGDB_ENOMEM;
            goto out;
        }
        /* The other orders' values are written at random places (a
         * prefetch a position each, see the walk): with 4 kB pages a
         * king unit's walk spent a fifth of its time on those prefetches'
         * page walks (perf of 4300's compression). */
        egrun_advise_huge(vals[o], vbytes);
    }
    /* The values in every order, dropped ones as 0 ("don't care"). The
     * positions come from a cursor walking the indices in order (only
     * the kings are unranked while the men stay), not from unranking
     * each index (egdb/verify.c measured that as 31% of a check). */
    egix_cursor cur;
    egix_cursor_init(&cur);
    uint64_t kept = 0, first_j[EGIX_NORDERS] = {0}; /* first_j: for EGCP_FAULT_COLLIDE */
    pending pend[WALK_BLOCK];
    int npend = 0;
    uint32_t rank_bm = UINT32_MAX, rank_wm = UINT32_MAX; /* the men of `men` (none yet) */
    uint64_t men = 0;
    for (uint64_t i = 0; i < e->size; i++) {
        if ((i & (PROGRESS_STEP - 1)) == PROGRESS_STEP - 1) {
            atomic_fetch_add(&job->done, PROGRESS_STEP);
            report_progress(job, &e->slice, 0);
        }
        if (i == 0)
            egix_seek(e->table, &cur, 0);
        else if (!(test_fault == EGCP_FAULT_CURSOR && e->size >= 3 && i == e->size / 2))
            egix_next(e->table, &cur);
        /* Read in place: a copy of the struct egix_next has just written
         * field by field stalled on store forwarding (20% of the walk). */
        const eng_pos *const p = &cur.pos;
        /* The cursor against the index computed from scratch, so that
         * what decides a position's fate below (dropped or kept, and its
         * place in the other orders) is that index's position: with
         * check_written this is what makes the file's values the 2-bit
         * file's (see there). The index is egix_index with the men ranked
         * apart (egix_men_rank, egix_index_at_men): the men's rank is the
         * same in every king order, so the other orders below add only
         * their king part (a men-heavy unit's compression spent 29% in
         * egix_index), and it is a function of the men alone, found again
         * whenever they differ from the last position's (a men placement
         * spans all its king placements, hundreds in a unit with two
         * kings). */
        if (p->bm != rank_bm || p->wm != rank_wm) {
            rank_bm = p->bm;
            rank_wm = p->wm;
            men = egix_men_rank(e->table, p);
        }
        if (egix_index_at_men(e->table, men, p) != i) {
            char name[EGIX_NAME_MAX];
            egix_slice_name(&e->slice, name, sizeof name);
            snprintf(err, errlen,
                     "slice %s: the cursor's position at index %" PRIu64 " has another index", name,
                     i);
            rc = EGDB_EVERIFY;
            goto out;
        }
        int why = egcd_dropped(p, flags);
        fig->dropped_capture += why == EGCD_CAPTURE;
        fig->dropped_threat += why == EGCD_THREAT;
        if (why != EGCD_KEPT)
            continue;
        unsigned v = (unsigned)egst_value(e, i);
        vals[0][i >> 2] |= (uint8_t)(v << ((i & 3) * 2));
        /* Its place in the other orders, written a block later: in a slice
         * with many kings one men placement spans MBs of an order, so each
         * place is a cache miss, which the block's prefetches overlap. */
        pend[npend].v = v;
        for (int o = 1; o < EGIX_NORDERS; o++) {
            if (!try[o])
                continue;
            uint64_t j = egix_index_at_men(tabs[o], men, p);
            if (test_fault == EGCP_FAULT_COLLIDE) {
                if (kept == 1)
                    j = first_j[o];
                else if (kept == 0)
                    first_j[o] = j;
            }
            pend[npend].j[o] = j;
            if (j < e->size)
                __builtin_prefetch(&vals[o][j >> 2], 1);
        }
        kept++;
        if (++npend == WALK_BLOCK) {
            if ((rc = place_pending(&e->slice, e->size, try, vals, pend, npend, err, errlen)) != 0)
                goto out;
            npend = 0;
        }
    }
    if ((rc = place_pending(&e->slice, e->size, try, vals, pend, npend, err, errlen)) != 0)
        goto out;
    double best = 0;
    uint64_t best_freq[EGCD_NSYM];
    for (int o = 0; o < EGIX_NORDERS; o++) {
        if (!try[o])
            continue;
        double c = layout_cost(vals[o], e->size, npages, runs, freq);
        if (o == 0 || c < best) {
            best = c;
            order = o;
            memcpy(best_freq, freq, sizeof freq);
        }
    }
    fig->order = order;
    const uint8_t *v = vals[order];
    uint8_t len[EGCD_NSYM];
    uint16_t code[EGCD_NSYM];

    /* Pages into blocks, by each page's bits under the one-page code. */
    egcd_code_lengths(best_freq, len, EGCD_MAX_BITS);
    uint64_t acc = 0;
    for (uint32_t g = 0; g < npages; g++) {
        uint64_t b = (uint64_t)g * psize, end = b + psize < e->size ? b + psize : e->size;
        uint64_t bits = range_bits(v, b, end, runs, len);
        if (nblocks > 0 && bpages[nblocks - 1] < EGCD_BLOCK_PAGES &&
            acc + bits <= EGCD_BLOCK_BITS) {
            bpages[nblocks - 1]++;
            acc += bits;
        } else {
            bpages[nblocks++] = 1;
            acc = bits;
        }
    }

    /* The code of the blocks' runs, then the blocks. */
    memset(freq, 0, sizeof freq);
    for (int pass = 0; pass < 2; pass++) {
        if (pass == 1) {
            egcd_code_lengths(freq, len, EGCD_MAX_BITS);
            egcd_codes(len, code);
        }
        uint64_t b = 0;
        for (uint32_t bl = 0; bl < nblocks; bl++) {
            uint64_t end = b + (uint64_t)bpages[bl] * psize;
            if (end > e->size)
                end = e->size;
            size_t nr = block_runs(v, b, end, runs);
            int seed = block_seed(runs, nr);
            const uint32_t btotal = (uint32_t)(end - b);
            b = end;
            if (pass == 0) {
                for (size_t j = 0; j < nr; j++) {
                    int eb;
                    uint32_t x;
                    freq[run_symbol(runs, j, seed, &eb, &x)]++;
                }
                continue;
            }
            egle_put32(tb + (size_t)bl * 4, (uint32_t)data.n);
            size_t block_at = data.n;
            if (grow(&data, 1) != 0) {
                rc = EGDB_ENOMEM;
                goto out;
            }
            /* A one-page block of many bits carries marks (codec.h). */
            const int marked =
                bpages[bl] == 1 && runs_bits(runs, nr, seed, len) > EGCD_MARK_MIN_BITS;
            data.b[data.n++] =
                (uint8_t)(runs[0].value | seed << 2 | (marked ? EGCD_BLOCK_MARKED : 0));
            if (marked) {
                if (grow(&data, EGCD_NMARKS * EGCD_MARK_BYTES) != 0) {
                    rc = EGDB_ENOMEM;
                    goto out;
                }
                put_marks(runs, nr, seed, btotal, len, data.b + data.n);
                data.n += EGCD_NMARKS * EGCD_MARK_BYTES;
                fig->overhead_bits += 8 * EGCD_NMARKS * EGCD_MARK_BYTES;
                fig->marked_pages++;
            }
            size_t block_start = data.n;
            uint64_t block_bits = 0;
            fig->runs += nr;
            bitwriter w = {&data, 0, 0};
            for (size_t j = 0; j < nr; j++) {
                int eb;
                uint32_t x;
                int s = run_symbol(runs, j, seed, &eb, &x);
                if (put_bits(&w, code[s], len[s]) != 0 || (eb && put_bits(&w, x, eb) != 0)) {
                    rc = EGDB_ENOMEM;
                    goto out;
                }
                fig->code_bits += len[s];
                fig->extra_bits += (uint64_t)eb;
                block_bits += (uint64_t)len[s] + (uint64_t)eb;
            }
            if (flush_bits(&w) != 0) {
                rc = EGDB_ENOMEM;
                goto out;
            }
            /* The block's first byte and its padding to a whole byte. */
            fig->overhead_bits += 8 + (data.n - block_start) * 8 - block_bits;
            egle_put32(tb + ((size_t)nblocks + 1 + bl) * 4,
                       (uint32_t)XXH3_64bits(data.b + block_at, data.n - block_at));
            tb[((size_t)nblocks + 1) * 4 + (size_t)nblocks * 4 + bl] = bpages[bl];
        }
    }
    egle_put32(tb + (size_t)nblocks * 4, (uint32_t)data.n);
    if (data.n > UINT32_MAX) {
        snprintf(err, errlen, "slice too large for 32-bit block offsets");
        rc = EGDB_EINVAL;
        goto out;
    }
    const size_t tb_len = (size_t)egcd_table_bytes(nblocks);

    egcd_header h;
    memset(&h, 0, sizeof h);
    h.slice = e->slice;
    h.positions = e->size;
    h.page_shift = EGCD_PAGE_SHIFT;
    h.flags = (uint8_t)flags;
    h.order = (uint8_t)order;
    h.nblocks = nblocks;
    h.data_bytes = data.n;
    h.wins = wh->wins;
    h.losses = wh->losses;
    h.draws = wh->draws;
    {
        XXH3_state_t *st = XXH3_createState();
        if (!st) {
            rc = EGDB_ENOMEM;
            goto out;
        }
        XXH3_64bits_reset(st);
        XXH3_64bits_update(st, len, EGCD_NSYM);
        XXH3_64bits_update(st, tb, tb_len);
        h.table_hash = XXH3_64bits_digest(st);
        XXH3_freeState(st);
    }
    unsigned char hb[EGCD_HEADER_BYTES];
    egcd_header_encode(&h, hb);
    char path[4096], tmp[4200], name[EGIX_NAME_MAX];
    egix_slice_name(&e->slice, name, sizeof name);
    snprintf(path, sizeof path, "%s/%s.cwl", dir, name);
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    rc = write_file(tmp, hb, len, tb, tb_len, &data, err, errlen);
    if (rc == 0 && test_fault == EGCP_FAULT_READBACK)
        fault_readback(vals[order], e->size);
    if (rc == 0 && (rc = check_written(tmp, dir, &e->slice, v, e->size, err, errlen)) != 0)
        unlink(tmp); /* read back wrong: no file under the final name */
    if (rc == 0)
        rc = egst_commit(tmp, path, dir, err, errlen);
    if (rc != 0)
        goto out;
    fig->bytes = EGCD_TABLE_OFFSET + tb_len + data.n;
    fig->overhead_bits += 8 * (EGCD_TABLE_OFFSET + tb_len);
out:
    for (int o = 0; o < EGIX_NORDERS; o++) {
        free(vals[o]);
        egix_table_destroy(tabs[o]);
    }
    free(runs);
    free(tb);
    free(bpages);
    free(data.b);
    return rc;
}

static void *
compress_worker(void *arg)
{
    compress_job *j = arg;
    for (;;) {
        size_t k = atomic_fetch_add(&j->next, 1);
        if (k >= j->n || atomic_load(&j->failed) || (j->stop && *j->stop))
            break;
        const egst_slice *e = j->list[k];
        char path[4096], err[512];
        egst_header wh;
        egst_path(j->dir, &e->slice, path, sizeof path);
        int rc = egst_read_header(path, &wh, NULL, err, sizeof err);
        slice_figures fig;
        memset(&fig, 0, sizeof fig);
        if (rc == 0)
            rc = compress_slice(j, e, &wh, &fig, err, sizeof err);
        if (rc != 0) {
            pthread_mutex_lock(&j->err_lock);
            if (!atomic_exchange(&j->failed, 1)) {
                snprintf(j->err, j->errlen, "%s", err);
                j->rc = rc;
            }
            pthread_mutex_unlock(&j->err_lock);
            break;
        }
        /* The positions not yet counted by compress_slice's reports. */
        atomic_fetch_add(&j->done, e->size % PROGRESS_STEP);
        atomic_fetch_add(&j->slices_done, 1);
        report_progress(j, &e->slice, 0);
        pthread_mutex_lock(&j->sum_lock);
        j->sum.slices++;
        j->sum.positions += e->size;
        j->sum.bytes += fig.bytes;
        j->sum.dropped_capture += fig.dropped_capture;
        j->sum.dropped_threat += fig.dropped_threat;
        j->sum.runs += fig.runs;
        j->sum.code_bits += fig.code_bits;
        j->sum.extra_bits += fig.extra_bits;
        j->sum.overhead_bytes += fig.overhead_bits / 8;
        j->sum.marked_pages += fig.marked_pages;
        j->sum.orders[fig.order]++;
        pthread_mutex_unlock(&j->sum_lock);
    }
    return NULL;
}

int
egcp_compressed_ok(const char *dir, const egix_slice *s)
{
    char path[4096], name[EGIX_NAME_MAX];
    unsigned char hb[EGCD_HEADER_BYTES];
    egix_slice_name(s, name, sizeof name);
    snprintf(path, sizeof path, "%s/%s.cwl", dir, name);
    char err[64];
    uint64_t len;
    egcd_header h;
    /* The length the header implies, too: a file cut short (a copy of
     * the folder interrupted, a full disk) keeps a valid header, and the
     * pipeline, trusting it, deleted the unit's 2-bit files. */
    return egst_read_head(path, hb, sizeof hb, &len, err, sizeof err) == 0 &&
           egcd_header_decode(hb, &h) == 0 && egix_slice_equal(&h.slice, s) &&
           len == EGCD_TABLE_OFFSET + egcd_table_bytes(h.nblocks) + h.data_bytes;
}

/* Compresses the n slices of list (loaded 2-bit files of dir) on
 * o->threads threads, a slice at a time each; the figures go to *st. */
static int
compress_list(const char *dir, const egst_slice *const *list, size_t n, const egdb_compress_opts *o,
              egdb_compress_stats *st, char *err, size_t errlen)
{
    int rc = 0, threads = o->threads;
    volatile int *stop = o->stop;
    compress_job j;
    memset(&j, 0, sizeof j);
    j.dir = dir;
    j.list = list;
    j.n = n;
    j.stop = stop;
    j.flags = o->threats ? EGCD_FLAG_THREATS : 0;
    j.err = err;
    j.errlen = errlen;
    j.prog.fn = o->progress;
    j.prog.arg = o->progress_arg;
    /* The first report after a quarter second, when the rate (and so
     * the ETA) means something. */
    j.prog.t0 = j.prog.last = egrun_now();
    for (size_t i = 0; i < n; i++)
        j.run_total += list[i]->size;
    pthread_mutex_init(&j.err_lock, NULL);
    pthread_mutex_init(&j.sum_lock, NULL);
    pthread_mutex_init(&j.prog_lock, NULL);
    int nt = threads < 1 ? 1 : threads > 64 ? 64 : threads;
    pthread_t tid[64];
    int started = 0;
    for (int t = 1; t < nt; t++)
        if (pthread_create(&tid[started], NULL, compress_worker, &j) == 0)
            started++;
    compress_worker(&j);
    for (int t = 0; t < started; t++)
        pthread_join(tid[t], NULL);
    if (!atomic_load(&j.failed) && !(stop && *stop))
        report_progress(&j, &list[n - 1]->slice, 1);
    pthread_mutex_destroy(&j.err_lock);
    pthread_mutex_destroy(&j.sum_lock);
    pthread_mutex_destroy(&j.prog_lock);
    if (atomic_load(&j.failed))
        rc = j.rc; /* a damaged build file, a failed check, no memory, ... */
    else if (stop && *stop) {
        snprintf(err, errlen, "stopped; run again to resume");
        rc = EGDB_EINTERRUPT;
    }
    *st = j.sum;
    return rc;
}

int
egcp_compress_slices(const char *dir, const egst_slice *const *list, size_t n,
                     const egdb_compress_opts *o, egdb_compress_stats *st, char *err, size_t errlen)
{
    memset(st, 0, sizeof *st);
    return n ? compress_list(dir, list, n, o, st, err, errlen) : 0;
}

static int
compress_locked(const char *dir, const egdb_compress_opts *o, egdb_compress_stats *st, char *err,
                size_t errlen)
{
    egst_registry reg;
    const int npieces = o->npieces;
    memset(st, 0, sizeof *st);
    if (egst_registry_init(&reg) != 0)
        return EGDB_ENOMEM;
    int rc = 0;
    for (int n = 1; n <= npieces && rc == 0; n++) {
        size_t k;
        egix_slices(n, NULL, NULL, 0, &k);
        egix_slice *sl = malloc((k ? k : 1) * sizeof *sl);
        if (!sl) {
            rc = EGDB_ENOMEM;
            break;
        }
        egix_slices(n, sl, NULL, k, &k);
        size_t present = 0;
        for (size_t i = 0; i < k && rc == 0; i++) {
            if (egcp_compressed_ok(dir, &sl[i])) {
                present++;
                continue;
            }
            int r = egst_add_mapped(&reg, dir, &sl[i], 1, err, errlen);
            if (r == 0)
                present++;
            else if (r != EGDB_EMISSING)
                rc = r; /* damaged build file: stop, name it */
        }
        free(sl);
        if (present == 0)
            break; /* nothing built with this many pieces */
    }
    if (rc == 0 && reg.n > 0)
        rc = compress_list(dir, (const egst_slice *const *)reg.list, reg.n, o, st, err, errlen);
    egst_registry_free(&reg);
    return rc;
}

int
egdb_compress(const char *dir, const egdb_compress_opts *o, egdb_compress_stats *st, char *err,
              size_t errlen)
{
    memset(st, 0, sizeof *st);
    int lock = egrun_lock(dir, err, errlen);
    if (lock < 0)
        return lock;
    int rc = compress_locked(dir, o, st, err, errlen);
    egrun_unlock(lock);
    return rc;
}
