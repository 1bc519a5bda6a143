/*
 * run.c - the parallel loop, clock and progress reports shared by the
 * builders (interface in run.h).
 */
#include <pthread.h>
#include <stdatomic.h>
#include <time.h>

#include "egdb/run.h"

/* ---- types ------------------------------------------------------------ */

typedef struct par_ctx {
    void *ctx;
    egrun_range_fn fn;
    _Atomic uint64_t next; /* next chunk number */
    uint64_t chunk, units[2], chunks0, chunks_total;
} par_ctx;

/* ---- functions -------------------------------------------------------- */

double
egrun_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* One thread of a loop: takes chunk numbers until none is left. */
static void *
par_worker(void *arg)
{
    par_ctx *c = arg;
    for (;;) {
        uint64_t k = atomic_fetch_add(&c->next, 1);
        if (k >= c->chunks_total)
            break;
        int m = k < c->chunks0 ? 0 : 1;
        uint64_t b = (m ? k - c->chunks0 : k) * c->chunk, e = b + c->chunk;
        if (e > c->units[m])
            e = c->units[m];
        c->fn(c->ctx, m, b, e);
    }
    return NULL;
}

void
egrun_par_for(void *ctx, egrun_range_fn fn, int nmem, const uint64_t units[2], uint64_t chunk,
              uint64_t work, int threads)
{
    par_ctx c;
    c.ctx = ctx;
    c.fn = fn;
    atomic_init(&c.next, 0);
    c.chunk = chunk ? chunk : 1;
    c.units[0] = units[0];
    c.units[1] = nmem == 2 ? units[1] : 0;
    c.chunks0 = (c.units[0] + c.chunk - 1) / c.chunk;
    c.chunks_total = c.chunks0 + (c.units[1] + c.chunk - 1) / c.chunk;
    /* Thread start-up costs more than a small pair's whole pass. */
    if (work < EGRUN_PAR_MIN)
        threads = 1;
    if (threads > (int)c.chunks_total)
        threads = (int)c.chunks_total;
    if (threads > EGRUN_MAX_THREADS)
        threads = EGRUN_MAX_THREADS;
    pthread_t tid[EGRUN_MAX_THREADS];
    int started = 0;
    for (int t = 1; t < threads; t++)
        if (pthread_create(&tid[started], NULL, par_worker, &c) == 0)
            started++;
    par_worker(&c);
    for (int t = 0; t < started; t++)
        pthread_join(tid[t], NULL);
}

void
egrun_report(egrun_progress *r, egdb_progress *p, const egix_slice *s, int force)
{
    if (!r->fn)
        return;
    double t = egrun_now();
    if (!force && t - r->last < 0.25)
        return;
    r->last = t;
    char name[EGIX_NAME_MAX];
    egix_slice_name(s, name, sizeof name);
    p->slice = name;
    p->npieces = egrun_slice_pieces(s);
    p->elapsed = t - r->t0;
    r->fn(p, r->arg);
}
