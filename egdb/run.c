/*
 * run.c - the parallel loop, clock and progress reports shared by the
 * builders (interface in run.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
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

void
egrun_report_pair(egrun_progress *r, const egrun_tally *t, const char *phase, uint64_t pass,
                  uint64_t resolved, uint64_t positions, const egix_slice *s, int force)
{
    egdb_progress p;
    p.phase = phase;
    p.pair_no = t->pair_no;
    p.pair_count = t->pair_count;
    p.pass = pass;
    p.resolved = resolved;
    p.positions = positions;
    p.done_total = t->done_total;
    p.run_total = t->run_total;
    egrun_report(r, &p, s, force);
}

uint8_t *
egrun_pack_alloc(uint8_t *old, uint64_t positions, unsigned per_byte)
{
    free(old);
    size_t plen = (size_t)((positions + per_byte - 1) / per_byte);
    return calloc(plen ? plen : 1, 1);
}

void
egrun_log(const char *dir, const char *file, const egix_slice *s, const char *fmt, ...)
{
    char path[4096], name[EGIX_NAME_MAX];
    snprintf(path, sizeof path, "%s/%s", dir, file);
    egix_slice_name(s, name, sizeof name);
    FILE *f = fopen(path, "a");
    if (!f)
        return; /* informative only */
    fputs(name, f);
    va_list ap;
    va_start(ap, fmt);
    vfprintf(f, fmt, ap);
    va_end(ap);
    fclose(f);
}

int
egrun_list_slices(int n, egix_slice **sl, int **pair, size_t *count)
{
    int rc = egix_slices_alloc(n, sl, pair, count);
    return rc == 0 ? 0 : rc == EGIX_ENOMEM ? EGDB_ENOMEM : EGDB_EINVAL;
}

int
egrun_lock(const char *dir, char *err, size_t errlen)
{
    if (mkdir(dir, 0755) != 0 && errno != EEXIST) {
        snprintf(err, errlen, "cannot create %s: %s", dir, strerror(errno));
        return EGDB_EIO;
    }
    char path[4200];
    snprintf(path, sizeof path, "%s/.lock", dir);
    int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) {
        snprintf(err, errlen, "cannot open %s: %s", path, strerror(errno));
        return EGDB_EIO;
    }
    if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
        char pid[32] = "";
        ssize_t n = pread(fd, pid, sizeof pid - 1, 0);
        pid[n > 0 ? n : 0] = 0;
        pid[strcspn(pid, "\n")] = 0;
        snprintf(err, errlen,
                 "another build or compression (pid %s) is working in %s; wait for it or stop it",
                 pid[0] ? pid : "?", dir);
        close(fd);
        return errno == EWOULDBLOCK ? EGDB_EBUSY : EGDB_EIO;
    }
    char pid[32];
    int len = snprintf(pid, sizeof pid, "%ld\n", (long)getpid());
    if (ftruncate(fd, 0) != 0 || pwrite(fd, pid, (size_t)len, 0) != len) {
        /* the pid is only for the message */
    }
    return fd;
}

void
egrun_unlock(int fd)
{
    if (fd >= 0)
        close(fd);
}

int
egrun_lock_unit(const char *dir, const char *name, int fds[2], char *err, size_t errlen)
{
    char path[4200];
    fds[0] = fds[1] = -1;
    snprintf(path, sizeof path, "%s/units", dir);
    if ((mkdir(dir, 0755) != 0 && errno != EEXIST) || (mkdir(path, 0755) != 0 && errno != EEXIST)) {
        snprintf(err, errlen, "cannot create %.3000s: %s", path, strerror(errno));
        return EGDB_EIO;
    }
    for (int i = 0; i < 2; i++) {
        if (i == 0)
            snprintf(path, sizeof path, "%s/.lock", dir);
        else
            snprintf(path, sizeof path, "%s/units/%s.lock", dir, name);
        fds[i] = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
        if (fds[i] < 0) {
            snprintf(err, errlen, "cannot open %.3000s: %s", path, strerror(errno));
            break;
        }
        if (flock(fds[i], (i == 0 ? LOCK_SH : LOCK_EX) | LOCK_NB) != 0) {
            int busy = errno == EWOULDBLOCK;
            snprintf(err, errlen,
                     i == 0 ? "a whole build or a compression is working in %.3000s; wait for it"
                            : "unit %.3000s is being built by another task",
                     i == 0 ? dir : name);
            close(fds[i]);
            fds[i] = -1;
            if (fds[0] >= 0)
                close(fds[0]);
            fds[0] = -1;
            return busy ? EGDB_EBUSY : EGDB_EIO;
        }
    }
    if (fds[1] < 0) {
        if (fds[0] >= 0)
            close(fds[0]);
        fds[0] = -1;
        return EGDB_EIO;
    }
    return 0;
}

void
egrun_advise_huge(void *p, size_t len)
{
#ifdef MADV_HUGEPAGE
    const uintptr_t huge = (uintptr_t)2 << 20;
    uintptr_t a = ((uintptr_t)p + huge - 1) & ~(huge - 1);
    uintptr_t e = ((uintptr_t)p + len) & ~(huge - 1);
    if (e > a)
        (void)madvise((void *)a, e - a, MADV_HUGEPAGE);
#else
    (void)p;
    (void)len;
#endif
}
