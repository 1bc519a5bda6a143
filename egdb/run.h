/*
 * run.h - what the two builders (build.c, exact; partial.c, bounds) share
 * to run a slice pair (egrun_): a parallel loop over the positions (or
 * any units) of a pair's two members, a monotonic clock, and throttled
 * progress reports in the form of egdb_progress. Internal to egdb.
 */
#ifndef EGDB_RUN_H
#define EGDB_RUN_H

#include <stddef.h>
#include <stdint.h>

#include "egdb/egdb.h"
#include "egdb/index.h"
#include "engine/bits.h"

/* ---- constants ------------------------------------------------------ */

#define EGRUN_PAR_MIN 4096 /* less work than this runs on the calling thread */
#define EGRUN_MAX_THREADS 64

/* ---- types ---------------------------------------------------------- */

/* fn(ctx, member, begin, end): one chunk of units of member 0 or 1. */
typedef void (*egrun_range_fn)(void *ctx, int member, uint64_t begin, uint64_t end);

/* Progress of one run: the caller's function, and when it last spoke. */
typedef struct egrun_progress {
    egdb_progress_fn fn; /* may be NULL: reports are then dropped */
    void *arg;
    double t0, last;
} egrun_progress;

/* Where a builder's run stands, for its progress reports: the pair being
 * built (pair_no, from 1) of the pair_count to build, and the positions
 * of the pairs finished (done_total) of all it builds (run_total). */
typedef struct egrun_tally {
    size_t pair_no, pair_count;
    uint64_t done_total, run_total;
} egrun_tally;

/* ---- functions ------------------------------------------------------ */

/* Seconds from a monotonic clock. */
double egrun_now(void);

/*
 * egrun_lock - takes the writer's lock of database directory dir
 * (created if missing): an flock on dir/.lock, which holds the owner's
 * pid. Builds and compressions write the same files, and two at once in
 * one directory would waste each other's work. The lock goes with the process, so a
 * killed build never leaves it held. RETURN a descriptor for
 * egrun_unlock, or EGDB_EBUSY (err names the other pid) / EGDB_EIO.
 */
int egrun_lock(const char *dir, char *err, size_t errlen);
void egrun_unlock(int fd);

/*
 * egrun_lock_unit - the locks of a build of one unit (a cluster task,
 * egdb_build_opts.unit): dir/.lock shared, so that unit builds run side by
 * side but never beside a whole build or a compression (which take it
 * exclusively), and dir/units/<name>.lock exclusively, so that one unit is
 * built once at a time. RETURN 0 and the two descriptors (egrun_unlock
 * each), or EGDB_EBUSY (err says who holds what) / EGDB_EIO.
 */
int egrun_lock_unit(const char *dir, const char *name, int fds[2], char *err, size_t errlen);

/* Pieces of a slice. */
static inline int
egrun_slice_pieces(const egix_slice *s)
{
    return s->nbk + s->nwk + s->nbm + s->nwm;
}

/*
 * egrun_list_slices - the slices of n pieces with their pair numbers, in
 * the egix_slices build order (egix_slices_alloc with the egdb codes).
 * RETURN 0 and *sl, *pair (malloc'ed, the caller frees both), *count;
 * EGDB_ENOMEM, or EGDB_EINVAL for a piece count egix does not list.
 */
int egrun_list_slices(int n, egix_slice **sl, int **pair, size_t *count);

/*
 * Un-moves of the backward passes. Both builders work on the flipped twin
 * xf of a position, where the side that moved last is Black, and find the
 * predecessors inside the pair by moving one black piece back. The
 * partial builder calls these; the exact builder's phase 2 writes the
 * same loops out (measured faster there, build.c says by how much).
 *
 * egrun_king_unmoves - for kings bk and empty squares empty, the masks
 * (origin | destination of the king's last step) to toggle in xf.bk, one
 * per king and direction with an empty square behind it. RETURN how many
 * were written to out (at most 4 a king).
 *
 * egrun_man_unmoves - for men bm, the men masks of the predecessors where
 * one man stepped back (up1/up2, towards Black's back row) and Black's
 * leading row is unchanged: an un-move that lowers it leads to another
 * slice, which is built later and looks this one up. A man on the
 * crowning row cannot be one (it would be a king). RETURN how many were
 * written to out (at most 2 a man).
 *
 * Inline: they sit in the builders' hot loops.
 */
static inline int
egrun_king_unmoves(uint32_t bk, uint32_t empty, uint32_t out[4 * ENG_MAX_PIECES])
{
    int n = 0;
    for (uint32_t ks = bk; ks; ks &= ks - 1) {
        uint32_t b1 = ks & (0u - ks);
        for (int dir = 0; dir < 4; dir++) {
            uint32_t f = bits_step(dir, b1) & empty;
            if (f)
                out[n++] = b1 | f;
        }
    }
    return n;
}

static inline int
egrun_man_unmoves(uint32_t bm, uint32_t empty, uint32_t out[2 * ENG_MAX_PIECES])
{
    const int lead_row = bm ? (31 - __builtin_clz(bm)) >> 2 : -1;
    int n = 0;
    for (uint32_t ms = bm; ms; ms &= ms - 1) {
        uint32_t b1 = ms & (0u - ms);
        for (int dir = 2; dir < 4; dir++) {
            uint32_t f = bits_step(dir, b1) & empty;
            if (!f)
                continue;
            uint32_t nm = bm ^ b1 ^ f;
            if (((31 - __builtin_clz(nm)) >> 2) == lead_row)
                out[n++] = nm;
        }
    }
    return n;
}

/*
 * egrun_par_for - runs fn over units 0..units[m]-1 of members m = 0 and
 * (when nmem == 2) 1, in chunks of `chunk` units handed out from a shared
 * counter, on `threads` threads, the calling thread being one of them.
 * Threads are started per call: a pass costs milliseconds at least,
 * start-up microseconds, and no pool has to outlive an error path.
 * `work` (any measure of the call's size) below EGRUN_PAR_MIN runs on the
 * calling thread alone.
 */
void egrun_par_for(void *ctx, egrun_range_fn fn, int nmem, const uint64_t units[2], uint64_t chunk,
                   uint64_t work, int threads);

/*
 * egrun_advise_huge - asks for transparent huge pages (2 MB) for the
 * whole 2 MB pages inside [p, p + len): a builder's working array read
 * and written at random, where with 4 kB pages nearly every access also
 * misses the TLB (the builders' and the compression's profiles put most
 * of such loops' time on their prefetches, waiting for page walks). This
 * machine's kernel gives them on request only (transparent_hugepage =
 * madvise), and only to pages not yet touched: call it before the first
 * write (calloc's large blocks are fresh mappings). A hint only: its
 * failure changes nothing.
 */
void egrun_advise_huge(void *p, size_t len);

/*
 * egrun_report - fills p->slice, p->npieces and p->elapsed from slice s
 * and the run's clock, and passes p to the caller's function, at most
 * four times a second unless force is set. The caller fills the rest.
 */
void egrun_report(egrun_progress *r, egdb_progress *p, const egix_slice *s, int force);

/*
 * egrun_pack_alloc - the zeroed buffer a builder packs one slice's values
 * into before writing it, `per_byte` positions a byte (4 for the 2-bit
 * files, 2 for the 4-bit partial ones), at least one byte; old, the
 * previous member's buffer (or NULL), is freed first. RETURN the buffer
 * (the caller frees it), or NULL when memory runs out.
 */
uint8_t *egrun_pack_alloc(uint8_t *old, uint64_t positions, unsigned per_byte);

/*
 * egrun_report_pair - egrun_report for a builder at work on a pair whose
 * first slice is s and which holds `positions` positions: the phase, the
 * pass and the positions resolved so far, with the run's place in t.
 */
void egrun_report_pair(egrun_progress *r, const egrun_tally *t, const char *phase, uint64_t pass,
                       uint64_t resolved, uint64_t positions, const egix_slice *s, int force);

/*
 * egrun_log - appends one line to the builder's log dir/file (created if
 * missing): the name of slice s, then what fmt and its arguments print
 * (tab-separated fields and the newline). Timings live there, not in the
 * database files, which must not depend on the run. The log is
 * informative only: a file that cannot be opened is passed over, and a
 * build goes on without it.
 */
void egrun_log(const char *dir, const char *file, const egix_slice *s, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

#endif /* EGDB_RUN_H */
