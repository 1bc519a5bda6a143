/*
 * verify.c - checks a database directory: every file's header and
 * checksum, then every position against its successors (seed 002's
 * verification phase): a win must have a move to a lost position, a loss
 * must have only moves to won positions (or none), a draw neither.
 *
 * The check is independent of how the builder reached its values: it
 * reads only the files and the rules. It cannot tell a draw from a win
 * that nobody found (a cycle of draws is self-consistent); that is what
 * the independent solver of the test suite is for.
 */
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "egdb/codec.h"
#include "egdb/db.h"
#include "egdb/decompress.h"
#include "egdb/egdb.h"
#include "egdb/index.h"
#include "egdb/partial.h"
#include "egdb/run.h"
#include "egdb/stage.h"
#include "egdb/store.h"

/* ---- constants -------------------------------------------------------- */

#define CHUNK 16384
/* One position in VERIFY_SAMPLE of a compressed slice compared with its
 * 2-bit file is also checked through the prober (see step 2 below). */
#define VERIFY_SAMPLE 64

/* ---- types ------------------------------------------------------------ */

/* The work of all threads in each of the checks below: items (chunks of
 * positions, blocks or pages) of every slice, numbered across the slices
 * in their order, so small slices do not leave a thread idle. Threads
 * take them in increasing order (take_item). A bad finding is recorded as
 * (slice number << 40 | index); the smallest wins, so the report does
 * not depend on the threads' timing. */
typedef struct work_items {
    uint64_t *start; /* per slice: number of its first item            */
    size_t nslices;
    uint64_t nitems;
    volatile int *stop; /* NULL, or set to stop early (pipeline)          */
    _Atomic uint64_t next;
    _Atomic uint64_t first_bad; /* slice << 40 | index, or UINT64_MAX    */
} work_items;

/* The 2-bit check: items are chunks of CHUNK positions, the slices in
 * dependency order. */
typedef struct verify_ctx {
    const egst_registry *reg;      /* every slice a successor may lie in */
    const egst_slice *const *list; /* the slices to check, in order      */
    work_items q;
    _Atomic uint64_t done; /* positions checked */
    /* Per slice, its chunks not yet checked and found right; the one that
     * takes it to 0 calls slice_done (egvf_verify_slices), under lock. */
    _Atomic uint64_t *left;
    egvf_slice_done_fn slice_done;
    void *slice_done_arg;
    pthread_mutex_t done_lock;
} verify_ctx;

/* What the calling thread reports while workers run (run_threads). */
typedef struct reporter {
    egdb_progress_fn fn;
    void *arg;
    const char *what; /* "2-bit files" or "compressed files" */
    int npieces;
    _Atomic uint64_t *done; /* positions checked so far            */
    uint64_t total;
} reporter;

typedef struct counted {
    void *(*fn)(void *);
    void *arg;
    _Atomic int *finished; /* workers that have returned */
} counted;

/* ---- functions -------------------------------------------------------- */

/* Starts (or starts again) a pass over the items of q: none taken, no
 * finding. */
static void
items_begin(work_items *q)
{
    atomic_store(&q->next, 0);
    atomic_store(&q->first_bad, UINT64_MAX);
}

/* The materials a run checks (egdb_verify_only): none given, every one. */
typedef struct vfilter {
    const egpt_material *m;
    size_t n;
} vfilter;

/* Whether slice s is of a material of f or of its colour twin. */
static int
wanted(const vfilter *f, const egix_slice *s)
{
    if (!f || f->n == 0)
        return 1;
    for (size_t i = 0; i < f->n; i++) {
        const egpt_material *m = &f->m[i];
        if ((s->nbk == m->nbk && s->nwk == m->nwk && s->nbm == m->nbm && s->nwm == m->nwm) ||
            (s->nbk == m->nwk && s->nwk == m->nbk && s->nbm == m->nwm && s->nwm == m->nbm))
            return 1;
    }
    return 0;
}

/* Takes the next item of q for a worker: *s its slice, found from the
 * worker's previous one (which is why *s starts at 0 and the items go in
 * increasing order), *off its number within the slice. RETURN 0 when
 * none is left or q->stop is set. */
static int
take_item(work_items *q, size_t *s, uint64_t *off)
{
    uint64_t k = atomic_fetch_add(&q->next, 1);
    if (k >= q->nitems || (q->stop && *q->stop))
        return 0;
    while (*s + 1 < q->nslices && q->start[*s + 1] <= k)
        (*s)++;
    *off = k - q->start[*s];
    return 1;
}

/* Records key as bad if it is the smallest so far. */
static void
record_bad(_Atomic uint64_t *first_bad, uint64_t key)
{
    uint64_t cur = atomic_load(first_bad);
    while (key < cur && !atomic_compare_exchange_weak(first_bad, &cur, key))
        ;
}

static void *
counted_worker(void *a)
{
    counted *w = a;
    w->fn(w->arg);
    atomic_fetch_add(w->finished, 1);
    return NULL;
}

/* Runs fn on up to `threads` threads. With a reporter, the calling thread
 * reports progress four times a second until every worker has returned
 * (a worker may stop early, when a bad position has been found). */
static void
run_threads(void *(*fn)(void *), void *arg, int threads, const reporter *rep)
{
    int nt = threads < 1 ? 1 : threads > 64 ? 64 : threads;
    pthread_t tid[64];
    _Atomic int finished;
    atomic_init(&finished, 0);
    counted w = {fn, arg, &finished};
    int started = 0;
    /* Without a reporter the calling thread is one of the workers. Workers
     * take items until none is left, so the threads that did start do all
     * the work. */
    for (int t = rep ? 0 : 1; t < nt; t++)
        if (pthread_create(&tid[started], NULL, counted_worker, &w) == 0)
            started++;
    if (!rep || started == 0) {
        fn(arg);
    } else {
        struct timespec t0, t, nap = {0, 250000000};
        clock_gettime(CLOCK_MONOTONIC, &t0);
        while (atomic_load(&finished) < started) {
            nanosleep(&nap, NULL);
            clock_gettime(CLOCK_MONOTONIC, &t);
            egdb_progress pr;
            memset(&pr, 0, sizeof pr);
            pr.slice = rep->what;
            pr.phase = "verify";
            pr.npieces = rep->npieces;
            pr.resolved = atomic_load(rep->done);
            pr.positions = rep->total;
            pr.done_total = pr.resolved;
            pr.run_total = rep->total;
            pr.elapsed = (double)(t.tv_sec - t0.tv_sec) + (double)(t.tv_nsec - t0.tv_nsec) * 1e-9;
            rep->fn(&pr, rep->arg);
        }
    }
    for (int t = 0; t < started; t++)
        pthread_join(tid[t], NULL);
}

/* A source of successor values: the 2-bit registry or an open database. */
typedef int (*probe_fn)(const void *src, const eng_pos *p);

static int
probe_raw(const void *src, const eng_pos *p)
{
    return egst_probe(src, p);
}

static int
probe_db(const void *src, const eng_pos *p)
{
    return egdb_probe(src, p);
}

/* One successor's value v, in move order: the answer it settles (an
 * error code, or a win when v is a loss: later moves are not read), or
 * 0 to read on, clearing *all_win unless v is a win. */
static inline int
successor_settles(int v, int *all_win)
{
    if (v < 0)
        return v;
    if (v == EGDB_LOSS)
        return EGDB_WIN;
    if (v != EGDB_WIN)
        *all_win = 0;
    return 0;
}

/* The value the successors of p imply: a win if a move leads to a loss,
 * a loss if every move leads to a win (or there is none), else a draw.
 * A successor that cannot be read (a damaged block, a missing slice)
 * before the value is settled makes the answer that error code: it is
 * never taken for a value (a negative code once counted as "not a win",
 * and a damaged block then showed up as a wrong value of some other
 * position). */
static int
expected_value(probe_fn probe, const void *src, const eng_pos *p)
{
    eng_movelist l;
    int n = eng_generate(p, &l, ENG_DUPS_MERGE);
    int all_win = 1;
    for (int k = 0; k < n; k++) {
        eng_pos c;
        eng_make(p, &l.m[k], &c);
        int r = successor_settles(probe(src, &c), &all_win);
        if (r)
            return r;
    }
    return all_win ? EGDB_LOSS : EGDB_DRAW;
}

/* The first successor of p whose lookup fails: its move in *mv and the
 * position in *c. RETURN the lookup's code, or 0 if none fails. */
static int
failed_successor(probe_fn probe, const void *src, const eng_pos *p, char mv[ENG_MOVE_STR_MAX],
                 eng_pos *c)
{
    eng_movelist l;
    int n = eng_generate(p, &l, ENG_DUPS_MERGE);
    for (int k = 0; k < n; k++) {
        eng_make(p, &l.m[k], c);
        int v = probe(src, c);
        if (v < 0) {
            eng_format_move(&l.m[k], mv, ENG_MOVE_STR_MAX);
            return v;
        }
    }
    return 0;
}

/* The value the located successors r[0..n) imply, read in move order
 * with expected_value's rules and early exit (the same answer, error
 * codes included). */
static int
refs_value(const egst_ref *r, int n)
{
    int all_win = 1;
    for (int k = 0; k < n; k++) {
        int v = successor_settles(egst_ref_value(&r[k]), &all_win);
        if (v)
            return v;
    }
    return all_win ? EGDB_LOSS : EGDB_DRAW;
}

/*
 * Checks positions b..end of slice e. Each successor is a read at a
 * random place of a file of up to GBs (an 8-piece pair), so, much as the
 * builder's phase 1 does (build.c), the positions go in blocks of
 * VF_BLOCK: first the successors of the block are located and their
 * bytes prefetched, then the values are read and compared, in index
 * order. In a small slice a position stored as a win is the exception:
 * its successors are read only up to its first lost one
 * (expected_value), and locating the rest up front cost more than the
 * prefetch saved (the 1-5 set, in the CPU caches: x1.37-1.6 the time), so
 * it is checked one move at a time. In a slice of at least wins_block_min
 * positions (16 MB of 2-bit file, beyond the caches) its successors'
 * reads are misses, which one move at a time pays one after the other: a
 * perf of the 4v4 build's check put 17% of it in those probes. There a
 * win goes through the block too: on the 7-piece unit 4300 (two slices of
 * 117.8 M positions, pipelined, six rounds alternating) the check took
 * 12.5-18.0 s (median 15.5) one move at a time and 13.5-14.5 s (median
 * 13.8) through the block. Both ways give expected_value's answer, error
 * codes included (refs_value stops where it does).
 * RETURN the first bad index, or end.
 */
#define VF_BLOCK 32
#define VF_REFS (VF_BLOCK * 40)

static uint64_t wins_block_min = (uint64_t)1 << 26;

void
egvf_set_wins_block_min(uint64_t positions)
{
    wins_block_min = positions;
}

static uint64_t
verify_range(const egst_registry *reg, const egst_slice *e, uint64_t b, uint64_t end,
             egst_ref *refs)
{
    /* A cursor walks the indices in order: only the kings are unranked
     * while the men stay (egix_next). egix_unindex on each index was 31%
     * of a check's time (perf, the 1-5 set). */
    egix_cursor cur;
    egix_cursor_init(&cur);
    if (b < end)
        egix_seek(e->table, &cur, b);
    const int wins_one_by_one = e->size < wins_block_min;
    int first[VF_BLOCK + 1];
    eng_pos wins[VF_BLOCK];
    for (uint64_t b0 = b; b0 < end;) {
        int nitems = 0, nrefs = 0;
        while (b0 + (uint64_t)nitems < end && nitems < VF_BLOCK &&
               nrefs <= VF_REFS - ENG_MAX_MOVES) {
            if (b0 + (uint64_t)nitems != b)
                egix_next(e->table, &cur);
            first[nitems] = nrefs;
            if (wins_one_by_one && egst_value(e, b0 + (uint64_t)nitems) == EGDB_WIN) {
                wins[nitems++] = cur.pos;
                continue;
            }
            eng_movelist l;
            int n = eng_generate(&cur.pos, &l, ENG_DUPS_MERGE);
            /* A king's quiet move keeps the men, so the successors of the
             * king moves share a slice and the men part of their index
             * (found at the first of them); each adds its king part, as
             * the builder's phase 2 indexes un-moves. Other moves, and a
             * side left without pieces, go through egst_locate. */
            const uint32_t kings = cur.pos.stm == ENG_BLACK ? cur.pos.bk : cur.pos.wk;
            const egst_slice *ke = NULL;
            uint64_t kmen = 0;
            int kstate = 0; /* 0: not yet, 1: ke and kmen set, -1: egst_locate */
            for (int k = 0; k < n; k++) {
                eng_pos c;
                eng_make(&cur.pos, &l.m[k], &c);
                if (l.m[k].njumps == 0 && (kings >> l.m[k].from & 1u) && kstate >= 0) {
                    const eng_pos f = eng_canonical(&c);
                    if (kstate == 0)
                        kstate = (ke = egst_locate_men(reg, &f, &kmen)) != NULL ? 1 : -1;
                    if (kstate == 1) {
                        const uint64_t idx = kmen + egix_index_kings(ke->table, &f);
                        __builtin_prefetch(&ke->data[idx >> 2]);
                        refs[nrefs++] = (egst_ref){.e = ke, .idx = idx, .direct = 0};
                        continue;
                    }
                }
                refs[nrefs++] = egst_locate(reg, &c);
            }
            nitems++;
        }
        first[nitems] = nrefs;
        for (int t = 0; t < nitems; t++) {
            uint64_t i = b0 + (uint64_t)t;
            int stored = egst_value(e, i);
            int want = wins_one_by_one && stored == EGDB_WIN
                           ? expected_value(probe_raw, reg, &wins[t])
                           : refs_value(refs + first[t], first[t + 1] - first[t]);
            if (want < 0 || stored != want)
                return i;
        }
        b0 += (uint64_t)nitems;
    }
    return end;
}

static void *
verify_worker(void *arg)
{
    verify_ctx *c = arg;
    size_t s = 0;
    uint64_t chunk;
    egst_ref refs[VF_REFS]; /* 30 kB */
    while (take_item(&c->q, &s, &chunk)) {
        const egst_slice *e = c->list[s];
        uint64_t b = chunk * CHUNK, end = b + CHUNK;
        if (end > e->size)
            end = e->size;
        if (((uint64_t)s << 40 | b) > atomic_load(&c->q.first_bad))
            break; /* a bad position before this chunk was found already */
        uint64_t bad = verify_range(c->reg, e, b, end, refs);
        if (bad < end)
            record_bad(&c->q.first_bad, (uint64_t)s << 40 | bad);
        else if (c->left && atomic_fetch_sub(&c->left[s], 1) == 1) {
            pthread_mutex_lock(&c->done_lock);
            c->slice_done(s, c->slice_done_arg);
            pthread_mutex_unlock(&c->done_lock);
        }
        atomic_fetch_add(&c->done, end - b);
    }
    return NULL;
}

static const char *
value_name(int v)
{
    return v == EGDB_WIN ? "win" : v == EGDB_LOSS ? "loss" : v == EGDB_DRAW ? "draw" : "unknown";
}

/* Checks every position of the n slices of list against its successors,
 * looked up in reg (which holds the listed slices too); the first bad
 * position in list order is reported. */
static int
check_list(const egst_registry *reg, const egst_slice *const *list, size_t n, int maxn, int threads,
           volatile int *stop, egdb_progress_fn progress, void *arg, egvf_slice_done_fn done,
           void *done_arg, char *err, size_t errlen)
{
    int rc = 0;
    verify_ctx c;
    memset(&c, 0, sizeof c);
    c.reg = reg;
    c.list = list;
    c.q.stop = stop;
    c.q.nslices = n;
    c.q.start = malloc((n + 1) * sizeof *c.q.start);
    if (!c.q.start)
        rc = EGDB_ENOMEM;
    if (rc == 0 && done) {
        c.left = malloc((n ? n : 1) * sizeof *c.left);
        if (!c.left)
            rc = EGDB_ENOMEM;
        c.slice_done = done;
        c.slice_done_arg = done_arg;
        pthread_mutex_init(&c.done_lock, NULL);
    }
    uint64_t total = 0;
    for (size_t s = 0; rc == 0 && s < n; s++) {
        c.q.start[s] = c.q.nitems;
        uint64_t chunks = (list[s]->size + CHUNK - 1) / CHUNK;
        c.q.nitems += chunks;
        total += list[s]->size;
        if (c.left) {
            atomic_init(&c.left[s], chunks);
            if (chunks == 0)
                done(s, done_arg); /* an empty slice: nothing to check */
        }
    }
    if (rc == 0) {
        items_begin(&c.q);
        atomic_init(&c.done, 0);
        reporter rep = {progress, arg, "2-bit files", maxn, &c.done, total};
        run_threads(verify_worker, &c, threads, progress ? &rep : NULL);
        uint64_t bad = atomic_load(&c.q.first_bad);
        if (bad != UINT64_MAX) {
            const egst_slice *e = list[bad >> 40];
            uint64_t i = bad & ((1ull << 40) - 1);
            eng_pos p;
            char fen[ENG_FEN_MAX], name[EGIX_NAME_MAX];
            egix_unindex(e->table, i, &p);
            eng_format_fen(&p, fen, sizeof fen);
            egix_slice_name(&e->slice, name, sizeof name);
            int want = expected_value(probe_raw, reg, &p);
            if (want < 0) {
                /* Every file was checked when loaded: a successor whose
                 * slice is not there (a database missing a slice). */
                char mv[ENG_MOVE_STR_MAX], cfen[ENG_FEN_MAX];
                eng_pos cp;
                failed_successor(probe_raw, reg, &p, mv, &cp);
                eng_format_fen(&cp, cfen, sizeof cfen);
                snprintf(err, errlen,
                         "slice %s, index %" PRIu64 " (%s): its successor after %s (%s) cannot "
                         "be looked up: %s",
                         name, i, fen, mv, cfen, egdb_strerror(want));
                rc = want == EGDB_ENOTFOUND ? EGDB_EMISSING : want;
            } else {
                snprintf(err, errlen,
                         "slice %s, index %" PRIu64 " (%s): stored %s, successors say %s", name, i,
                         fen, value_name(egst_value(e, i)), value_name(want));
                rc = EGDB_EVERIFY;
            }
        }
    }
    free(c.q.start);
    if (c.left) {
        pthread_mutex_destroy(&c.done_lock);
        free(c.left);
    }
    return rc;
}

/* Whether dir holds a 2-bit or compressed file of some n-piece slice. */
static int
any_files(const char *dir, int n)
{
    egix_slice *sl;
    size_t k;
    if (egix_slices_alloc(n, &sl, NULL, &k) != 0)
        return 0;
    int found = 0;
    for (size_t i = 0; i < k && !found; i++) {
        char path[4096];
        if (egst_path(dir, &sl[i], path, sizeof path) != 0)
            break;
        found = access(path, F_OK) == 0;
        size_t len = strlen(path);
        memcpy(path + len - 3, "cwl", 3);
        found |= access(path, F_OK) == 0;
    }
    free(sl);
    return found;
}

/* Verifies every 2-bit file of dir against its successors. The files
 * stay mapped in *reg (the caller's, which it frees), so that the compressed
 * files can then be compared with them. */
static int
verify_raw(const char *dir, const vfilter *f, int threads, egdb_progress_fn progress, void *arg,
           char *err, size_t errlen, egst_registry *reg, size_t *nchecked)
{
    int rc = 0;
    /* Load (and checksum) everything first, smallest databases first. */
    int maxn = 0;
    for (int n = 1; n <= EGDB_MAX_PIECES && rc == 0; n++) {
        size_t k, present = 0;
        if (egix_slices(n, NULL, NULL, 0, &k) != 0)
            break;
        egix_slice *sl = malloc(k * sizeof *sl);
        if (!sl) {
            rc = EGDB_ENOMEM;
            break;
        }
        egix_slices(n, sl, NULL, k, &k);
        for (size_t i = 0; i < k && rc == 0; i++) {
            int r = egst_add_mapped(reg, dir, &sl[i], 1, err, errlen);
            if (r == 0)
                present++;
            else if (r != EGDB_EMISSING)
                rc = r;
        }
        if (rc == 0 && present > 0 && present < k) {
            /* A piece count built unit by unit (some splits of it, or a
             * pipelined build whose units lose their 2-bit files once
             * compressed, pipeline.h): its 2-bit files were checked by
             * the build's stages, and its compressed files are checked
             * below against their successors. What is checked here is
             * the complete piece counts under it. */
            for (size_t i = 0; i < k; i++)
                egst_remove(reg, &sl[i]);
            if (n < EGDB_MAX_PIECES && any_files(dir, n + 1)) {
                snprintf(err, errlen,
                         "%s: the %d-piece database is incomplete (%zu of %zu 2-bit files) but "
                         "%d-piece files are there",
                         dir, n, present, k, n + 1);
                rc = EGDB_EMISSING;
            }
            present = 0;
        }
        free(sl);
        if (present == 0)
            break;
        maxn = n;
    }
    if (rc == 0 && maxn == 0) {
        snprintf(err, errlen, "%s: no database files", dir);
        rc = EGDB_EMISSING;
    }
    if (rc == 0) {
        /* Every file stays loaded (successors lie anywhere); only the
         * wanted ones are checked. */
        const egst_slice **list = malloc((reg->n ? reg->n : 1) * sizeof *list);
        size_t n = 0;
        if (!list)
            return EGDB_ENOMEM;
        for (size_t i = 0; i < reg->n; i++)
            if (wanted(f, &reg->list[i]->slice))
                list[n++] = reg->list[i];
        *nchecked = n;
        rc = check_list(reg, list, n, maxn, threads, NULL, progress, arg, NULL, NULL, err, errlen);
        free(list);
    }
    return rc;
}

int
egvf_verify_slices(const egst_registry *reg, const egst_slice *const *list, size_t n, int threads,
                   volatile int *stop, egdb_progress_fn progress, void *arg,
                   egvf_slice_done_fn done, void *done_arg, char *err, size_t errlen)
{
    int maxn = 0;
    for (size_t i = 0; i < n; i++)
        if (egrun_slice_pieces(&list[i]->slice) > maxn)
            maxn = egrun_slice_pieces(&list[i]->slice);
    int rc =
        check_list(reg, list, n, maxn, threads, stop, progress, arg, done, done_arg, err, errlen);
    if (rc == 0 && stop && *stop) {
        snprintf(err, errlen, "stopped; run again to resume");
        rc = EGDB_EINTERRUPT;
    }
    return rc;
}

/* ---- compressed files ------------------------------------------------- */

/*
 * Seed 002's verification on the compressed form, in two steps:
 *   1. every block of every file: its checksum, and that its runs decode
 *      to exactly its positions (egdc_check_block). The first damaged
 *      block in slice order is reported, whatever the threads' timing.
 *      This comes first because the second step reads other slices'
 *      blocks: a damaged block must be reported as itself, not as a
 *      wrong value of some position whose successor lies in it.
 *   2. every position that kept its value, in one of two ways:
 *      - when the slice's 2-bit file is there (verify_raw has just
 *        checked it against the rules), against it: the position is
 *        found through the compressed file's own table (its king order)
 *        and indexed again through the build order, so a fault of the
 *        layout shows as well as one of the coding. One position in
 *        VERIFY_SAMPLE is also checked through the prober: a kept value
 *        against its successors, a dropped one (resolved by search)
 *        against the 2-bit file. This costs a decode and a comparison a
 *        position instead of a move generation and a probe a move, which
 *        through a cache of a small part of the 7-piece set is what made
 *        this step the longest of the verification;
 *      - otherwise, against its successors probed through the same
 *        compressed databases (so values resolved by search are checked
 *        too, indirectly).
 *      The first bad position in slice order is reported; a successor
 *      that cannot be read is an error with its own message, never a
 *      value.
 * Work items are blocks (step 1) and pages (step 2) of all slices.
 */
typedef struct cverify_ctx {
    const egdb *db;
    const egst_registry *raw; /* the verified 2-bit files (may be empty) */
    work_items q;             /* blocks (step 1), pages (step 2) of every
                                 compressed slice; first_bad: slice << 40 |
                                 block (step 1) or position index (step 2) */
    _Atomic uint64_t done;    /* step 2: positions checked             */
} cverify_ctx;

/* The positions [*first, *end) of page g of compressed slice e (slice
 * number s of q), decoded into buf (one page, 2 bits a position), for
 * step 2 and the pipeline's comparison. RETURN 1 to check them; 0 when
 * the page does not decode (recorded bad in q: on to the next item); -1
 * when a bad finding before the page is recorded already (the worker
 * stops: nothing it could find would be reported). */
static int
page_item(work_items *q, size_t s, const egdc_slice *e, uint32_t g, uint8_t *buf, uint64_t *first,
          uint64_t *end)
{
    *first = (uint64_t)g << e->h.page_shift;
    *end = *first + (1ull << e->h.page_shift);
    if (*end > e->h.positions)
        *end = e->h.positions;
    if (((uint64_t)s << 40 | *first) > atomic_load(&q->first_bad))
        return -1;
    if (egdc_decode(e, g, buf) != 0) { /* step 1 passed: not expected */
        record_bad(&q->first_bad, (uint64_t)s << 40 | *first);
        return 0;
    }
    return 1;
}

/* The stored value of the position at offset o of a decoded page. */
static int
page_value(const uint8_t *buf, uint64_t o)
{
    return (buf[o >> 2] >> ((o & 3) * 2)) & 3;
}

/* Step 1: one work item a file block. */
static void *
cblocks_worker(void *arg)
{
    cverify_ctx *c = arg;
    size_t s = 0;
    uint64_t b;
    while (take_item(&c->q, &s, &b)) {
        uint64_t key = (uint64_t)s << 40 | b;
        if (key > atomic_load(&c->q.first_bad))
            break;
        char why[8];
        if (egdc_check_block(c->db->cmp_list[s], (uint32_t)b, why, sizeof why) != 0)
            record_bad(&c->q.first_bad, key);
    }
    return NULL;
}

/* Step 2 without a 2-bit file: position p (index i of e), stored value
 * `stored`, against its successors (a dropped value is not checked). */
static int
position_ok(const egdb *db, const egdc_slice *e, const eng_pos *p, int stored)
{
    if (egcd_dropped(p, e->h.flags) != EGCD_KEPT)
        return 1;
    int want = expected_value(probe_db, db, p);
    return want >= 0 && stored == want;
}

/* The index in the 2-bit file r of position i of e, and the position if
 * it had to be found (*have). */
static uint64_t
raw_index(const egdc_slice *e, const egst_slice *r, uint64_t i, eng_pos *p, int *have)
{
    *have = 0;
    if (e->h.order == EGIX_ORDER_COLEX)
        return i;
    egix_unindex(e->table, i, p);
    *have = 1;
    return egix_index(r->table, p);
}

/* Step 2 with the verified 2-bit file r of the same slice (see above):
 * position p, index i of e. */
static int
position_ok_raw(const egdb *db, const egdc_slice *e, const egst_slice *r, uint64_t i,
                const eng_pos *p, int stored)
{
    uint64_t j = e->h.order == EGIX_ORDER_COLEX ? i : egix_index(r->table, p);
    int w = egst_value(r, j);
    int sample = i % VERIFY_SAMPLE == 0;
    if (stored == w && !sample)
        return 1;
    if (egcd_dropped(p, e->h.flags) != EGCD_KEPT)
        return !sample || egdb_probe(db, p) == w;
    return stored == w && (!sample || expected_value(probe_db, db, p) == w);
}

/* Step 2: one work item a page. */
static void *
cverify_worker(void *arg)
{
    cverify_ctx *c = arg;
    size_t s = 0;
    uint64_t words[(1u << EGCD_PAGE_SHIFT) / 32]; /* one page (egdc_open's limit) */
    uint8_t *buf = (uint8_t *)words;
    uint64_t g, first, end;
    while (take_item(&c->q, &s, &g)) {
        const egdc_slice *e = c->db->cmp_list[s];
        int go = page_item(&c->q, s, e, (uint32_t)g, buf, &first, &end);
        if (go < 0)
            break;
        if (go == 0)
            continue;
        const egst_slice *r = c->raw ? egst_find(c->raw, &e->slice) : NULL;
        /* the page's positions from a cursor (verify_worker's reason; in
         * a Gray order it reuses the men, egix_seek) */
        egix_cursor cur;
        egix_cursor_init(&cur);
        if (first < end)
            egix_seek(e->table, &cur, first);
        for (uint64_t i = first; i < end; i++) {
            if (i > first)
                egix_next(e->table, &cur);
            int stored = page_value(buf, i - first);
            if (r ? !position_ok_raw(c->db, e, r, i, &cur.pos, stored)
                  : !position_ok(c->db, e, &cur.pos, stored)) {
                record_bad(&c->q.first_bad, (uint64_t)s << 40 | i);
                break;
            }
        }
        atomic_fetch_add(&c->done, end - first);
    }
    return NULL;
}

/* The error message of position i of compressed slice e (the first bad
 * one of step 2), and its code. */
static int
report_position(const egdb *db, const egst_registry *raw, const egdc_slice *e, uint64_t i,
                char *err, size_t errlen)
{
    eng_pos p;
    char fen[ENG_FEN_MAX], name[EGIX_NAME_MAX];
    egix_slice_name(&e->slice, name, sizeof name);
    egix_unindex(e->table, i, &p);
    eng_format_fen(&p, fen, sizeof fen);
    uint64_t first = i >> e->h.page_shift << e->h.page_shift;
    uint64_t buf[(1u << EGCD_PAGE_SHIFT) / 32];
    int stored = egdc_decode(e, (uint32_t)(i >> e->h.page_shift), (uint8_t *)buf) == 0
                     ? (((const uint8_t *)buf)[(i - first) >> 2] >> (((i - first) & 3) * 2)) & 3
                     : 0;
    const egst_slice *r = raw ? egst_find(raw, &e->slice) : NULL;
    if (r) {
        eng_pos q;
        int have;
        int w = egst_value(r, raw_index(e, r, i, &q, &have));
        if (egcd_dropped(&p, e->h.flags) != EGCD_KEPT) {
            int v = egdb_probe(db, &p);
            if (v >= 0) {
                snprintf(err, errlen,
                         "slice %s (compressed), index %" PRIu64
                         " (%s): dropped, resolved by search as %s, the verified 2-bit file "
                         "says %s",
                         name, i, fen, value_name(v), value_name(w));
                return EGDB_EVERIFY;
            }
        } else if (stored != w) {
            snprintf(err, errlen,
                     "slice %s (compressed), index %" PRIu64
                     " (%s): stored %s, the verified 2-bit file says %s",
                     name, i, fen, value_name(stored), value_name(w));
            return EGDB_EVERIFY;
        }
    }
    int want = expected_value(probe_db, db, &p);
    if (want < 0) {
        char mv[ENG_MOVE_STR_MAX], cfen[ENG_FEN_MAX], why[700];
        eng_pos cp;
        int rc = failed_successor(probe_db, db, &p, mv, &cp);
        eng_format_fen(&cp, cfen, sizeof cfen);
        if (rc == 0 || egdb_probe_err(db, &cp, why, sizeof why) >= 0)
            snprintf(why, sizeof why, "%s", egdb_strerror(want));
        snprintf(err, errlen,
                 "%.400s (looking up the successor %s after %s of %s, slice %s index %" PRIu64 ")",
                 why, cfen, mv, fen, name, i);
        return want == EGDB_ENOTFOUND ? EGDB_EMISSING : want;
    }
    snprintf(err, errlen,
             "slice %s (compressed), index %" PRIu64 " (%s): stored %s, successors say %s", name, i,
             fen, value_name(stored), value_name(want));
    return EGDB_EVERIFY;
}

static int
verify_compressed(const char *dir, const vfilter *f, int threads, const egst_registry *raw,
                  egdb_progress_fn progress, void *arg, char *err, size_t errlen, int *found)
{
    egdb *db;
    *found = 0;
    int rc = egdb_open(dir, EGDB_OPEN_COMPLETE_ONLY, (size_t)256 << 20, &db, err, errlen);
    if (rc != 0)
        return rc;
    if (db->ncmp == 0) {
        egdb_close(db);
        return 0;
    }
    *found = 1;
    cverify_ctx c;
    memset(&c, 0, sizeof c);
    c.db = db;
    c.raw = raw;
    c.q.nslices = db->ncmp;
    c.q.start = malloc((db->ncmp + 1) * sizeof *c.q.start);
    if (!c.q.start) {
        egdb_close(db);
        return EGDB_ENOMEM;
    }

    /* Step 1: every block (of the wanted slices: the others have no
     * items, and stay loaded for their positions' successors). */
    size_t nwanted = 0;
    for (size_t s = 0; s < db->ncmp; s++) {
        c.q.start[s] = c.q.nitems;
        if (wanted(f, &db->cmp_list[s]->slice)) {
            c.q.nitems += db->cmp_list[s]->h.nblocks;
            nwanted++;
        }
    }
    *found = nwanted > 0;
    items_begin(&c.q);
    run_threads(cblocks_worker, &c, threads, NULL);
    uint64_t bad = atomic_load(&c.q.first_bad);
    if (bad != UINT64_MAX) {
        const egdc_slice *e = db->cmp_list[bad >> 40];
        char why[400];
        uint32_t blk = (uint32_t)(bad & ((1ull << 40) - 1));
        egdc_check_block(e, blk, why, sizeof why);
        /* The block's first position that keeps its value (a capture or
         * threatened position is answered by a search, not from the
         * block), so that a user can probe it and see it refused too. */
        char fen[ENG_FEN_MAX] = "";
        for (uint32_t g = 0; g < e->npages && !fen[0]; g++) {
            if (e->page_block[g] != blk)
                continue;
            uint64_t i = (uint64_t)g << e->h.page_shift, end = i + (1ull << e->h.page_shift);
            for (; i < end && i < e->h.positions; i++) {
                eng_pos p;
                egix_unindex(e->table, i, &p);
                if (egcd_dropped(&p, e->h.flags) == EGCD_KEPT) {
                    eng_format_fen(&p, fen, sizeof fen);
                    break;
                }
            }
        }
        snprintf(err, errlen, "%s: %s%s%s", e->path, why, fen[0] ? "; a position it holds: " : "",
                 fen);
        rc = EGDB_ECORRUPT;
    }

    /* Step 2: every position, page by page. */
    if (rc == 0) {
        c.q.nitems = 0;
        uint64_t total = 0;
        for (size_t s = 0; s < db->ncmp; s++) {
            c.q.start[s] = c.q.nitems;
            if (wanted(f, &db->cmp_list[s]->slice)) {
                c.q.nitems += db->cmp_list[s]->npages;
                total += db->cmp_list[s]->h.positions;
            }
        }
        items_begin(&c.q);
        atomic_init(&c.done, 0);
        reporter rep = {progress, arg, "compressed files", db->max_pieces, &c.done, total};
        run_threads(cverify_worker, &c, threads, progress ? &rep : NULL);
        bad = atomic_load(&c.q.first_bad);
    }
    if (rc == 0 && bad != UINT64_MAX) {
        const egdc_slice *e = db->cmp_list[bad >> 40];
        uint64_t i = bad & ((1ull << 40) - 1);
        uint32_t g = (uint32_t)(i >> e->h.page_shift);
        uint64_t page[(1u << EGCD_PAGE_SHIFT) / 32];
        if (egdc_decode(e, g, (uint8_t *)page) != 0) {
            snprintf(err, errlen,
                     "%s: data, block %" PRIu32 " (page %" PRIu32 ", positions %" PRIu64
                     "..): does not decode",
                     e->path, e->page_block[g], g, i);
            rc = EGDB_ECORRUPT;
        } else {
            rc = report_position(db, raw, e, i, err, errlen);
        }
    }
    free(c.q.start);
    egdb_close(db);
    return rc;
}

int
egdb_verify(const char *dir, int threads, egdb_progress_fn progress, void *arg, char *err,
            size_t errlen)
{
    return egdb_verify_only(dir, NULL, 0, threads, progress, arg, err, errlen);
}

int
egdb_verify_only(const char *dir, const egpt_material *only, size_t nonly, int threads,
                 egdb_progress_fn progress, void *arg, char *err, size_t errlen)
{
    /* The 2-bit build files first (if any), then the compressed files (if
     * any): both forms are what later work reads. The compressed files
     * are compared with the 2-bit files when these are all there and have
     * passed (step 2 above). */
    const vfilter f = {only, only ? nonly : 0};
    egst_registry raw;
    if (egst_registry_init(&raw) != 0)
        return EGDB_ENOMEM;
    size_t nraw = 0;
    int rc = verify_raw(dir, &f, threads, progress, arg, err, errlen, &raw, &nraw);
    int raw_missing = rc == EGDB_EMISSING;
    if (rc != 0 && !raw_missing) {
        egst_registry_free(&raw);
        return rc;
    }
    int found;
    char err2[1024];
    int rc2 = verify_compressed(dir, &f, threads, rc == 0 ? &raw : NULL, progress, arg, err2,
                                sizeof err2, &found);
    egst_registry_free(&raw);
    if (rc2 != 0 && !(rc2 == EGDB_EMISSING && !raw_missing)) {
        snprintf(err, errlen, "%s", err2);
        return rc2;
    }
    if (raw_missing && !found)
        return rc;
    if (f.n > 0 && !found && nraw == 0) {
        snprintf(err, errlen,
                 "%s: holds no slice of the materials asked for (beyond the complete piece "
                 "counts, only whole splits are read)",
                 dir);
        return EGDB_EMISSING;
    }
    return 0;
}

/* ---- a compressed file against its 2-bit file (pipelined builds) ------ */

/*
 * What the pipeline (pipeline.h) checks before it deletes a 2-bit file:
 * that the compressed file written from it holds the same value for every
 * position it kept. Each page of each file is decoded (which checks its
 * block's checksum) and compared, position by position, through the
 * file's own king order and the build order, as step 2 of
 * verify_compressed does; a dropped position (a capture or threatened
 * capture, resolved by search when probed) holds no value and is skipped.
 * Work items are pages of all the files; the first bad one in list order
 * is reported.
 */
typedef struct compare_ctx {
    const egst_slice *const *raw;
    egdc_slice **cmp;
    work_items q; /* pages; first_bad: slice << 40 | position index */
} compare_ctx;

static void *
compare_worker(void *arg)
{
    compare_ctx *c = arg;
    size_t s = 0;
    uint64_t words[(1u << EGCD_PAGE_SHIFT) / 32];
    uint8_t *buf = (uint8_t *)words;
    uint64_t g, first, end;
    while (take_item(&c->q, &s, &g)) {
        const egdc_slice *e = c->cmp[s];
        int go = page_item(&c->q, s, e, (uint32_t)g, buf, &first, &end);
        if (go < 0)
            break;
        if (go == 0)
            continue;
        /* Position i of e agrees with the 2-bit file r when their values
         * are equal, or when e dropped it (a capture or threat position
         * keeps no value). In the build's order the index is the same in
         * both; in another, the page's positions come from a cursor in
         * e's order and are indexed in r. */
        const egst_slice *r = c->raw[s];
        int colex = e->h.order == EGIX_ORDER_COLEX;
        egix_cursor cur;
        egix_cursor_init(&cur);
        if (!colex && first < end)
            egix_seek(e->table, &cur, first);
        for (uint64_t i = first; i < end; i++) {
            if (!colex && i > first)
                egix_next(e->table, &cur);
            uint64_t j = colex ? i : egix_index(r->table, &cur.pos);
            if (egst_value(r, j) == page_value(buf, i - first))
                continue;
            eng_pos p = cur.pos;
            if (colex)
                egix_unindex(e->table, i, &p);
            if (egcd_dropped(&p, e->h.flags) == EGCD_KEPT) {
                record_bad(&c->q.first_bad, (uint64_t)s << 40 | i);
                break;
            }
        }
    }
    return NULL;
}

int
egvf_compare_slices(const char *dir, const egst_slice *const *list, size_t n, int threads,
                    volatile int *stop, char *err, size_t errlen)
{
    compare_ctx c;
    memset(&c, 0, sizeof c);
    c.q.stop = stop;
    c.raw = list;
    c.q.nslices = n;
    c.cmp = calloc(n ? n : 1, sizeof *c.cmp);
    c.q.start = malloc((n + 1) * sizeof *c.q.start);
    int rc = c.cmp && c.q.start ? 0 : EGDB_ENOMEM;
    for (size_t s = 0; s < n && rc == 0; s++) {
        rc = egdc_open(dir, &list[s]->slice, &c.cmp[s], err, errlen);
        if (rc == 0 && c.cmp[s]->h.positions != list[s]->size) {
            snprintf(err, errlen, "%s: holds %" PRIu64 " positions, its 2-bit file %" PRIu64,
                     c.cmp[s]->path, c.cmp[s]->h.positions, list[s]->size);
            rc = EGDB_ECORRUPT;
        }
        if (rc == 0) {
            c.q.start[s] = c.q.nitems;
            c.q.nitems += c.cmp[s]->npages;
        }
    }
    if (rc == 0) {
        items_begin(&c.q);
        run_threads(compare_worker, &c, threads, NULL);
        uint64_t bad = atomic_load(&c.q.first_bad);
        if (bad != UINT64_MAX) {
            const egdc_slice *e = c.cmp[bad >> 40];
            uint64_t i = bad & ((1ull << 40) - 1);
            char why[400];
            uint32_t b = e->page_block[i >> e->h.page_shift];
            if (egdc_check_block(e, b, why, sizeof why) != 0) {
                snprintf(err, errlen, "%s: %s", e->path, why);
                rc = EGDB_ECORRUPT;
            } else {
                eng_pos p;
                char fen[ENG_FEN_MAX];
                egix_unindex(e->table, i, &p);
                eng_format_fen(&p, fen, sizeof fen);
                snprintf(err, errlen,
                         "%s: index %" PRIu64 " (%s): the compressed value differs from the "
                         "2-bit file's",
                         e->path, i, fen);
                rc = EGDB_EVERIFY;
            }
        }
    }
    if (rc == 0 && stop && *stop) {
        snprintf(err, errlen, "stopped; run again to resume");
        rc = EGDB_EINTERRUPT;
    }
    for (size_t s = 0; s < n && c.cmp; s++)
        egdc_close(c.cmp[s]);
    free(c.cmp);
    free(c.q.start);
    return rc;
}
