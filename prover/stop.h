/*
 * stop.h - the searches' stop flag (dfpn_opts.stop, ab_opts.stop,
 * prv_opts.stop): an int that another thread (a worker's event loop, while
 * its solver thread searches) or a signal handler sets, and the search
 * reads every few thousand positions.
 *
 * volatile alone makes the compiler read it each time, but a plain
 * write on one thread and read on another is a data race in C11 (the
 * thread sanitizer reported it on the worker's stop, issue 42). Relaxed
 * atomic loads and stores make it defined and cost what a plain load
 * costs: no ordering is needed, the flag carries no other data.
 */
#ifndef PROVER_STOP_H
#define PROVER_STOP_H

/* Nonzero when stop is set (stop NULL: never). */
static inline int
prv_stopped(volatile int *stop)
{
    return stop && __atomic_load_n(stop, __ATOMIC_RELAXED);
}

/* Sets (v nonzero) or clears the flag. */
static inline void
prv_stop_set(volatile int *stop, int v)
{
    __atomic_store_n(stop, v, __ATOMIC_RELAXED);
}

#endif /* PROVER_STOP_H */
