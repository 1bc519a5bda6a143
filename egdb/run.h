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
 * egrun_report - fills p->slice, p->npieces and p->elapsed from slice s
 * and the run's clock, and passes p to the caller's function, at most
 * four times a second unless force is set. The caller fills the rest.
 */
void egrun_report(egrun_progress *r, egdb_progress *p, const egix_slice *s, int force);

#endif /* EGDB_RUN_H */
