/*
 * bench_util.h - what every benchmark prints around its figures: the
 * machine it ran on and a monotonic clock. Header-only so each bench/
 * program stays a single file.
 */
#ifndef BENCH_BENCH_UTIL_H
#define BENCH_BENCH_UTIL_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static inline double
bench_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* The CPU model from /proc/cpuinfo ("unknown CPU" if it cannot be read). */
static inline void
bench_cpu_model(char *model, size_t len)
{
    snprintf(model, len, "unknown CPU");
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (!f)
        return;
    char line[512];
    while (fgets(line, sizeof line, f))
        if (!strncmp(line, "model name", 10)) {
            char *c = strchr(line, ':');
            if (c) {
                snprintf(model, len, "%s", c + 2);
                model[strcspn(model, "\n")] = '\0';
            }
            break;
        }
    fclose(f);
}

/* One line naming the CPU model and the number of online cores. */
static inline void
bench_machine(void)
{
    char model[256];
    bench_cpu_model(model, sizeof model);
    printf("machine: %s, %ld cores online\n", model, sysconf(_SC_NPROCESSORS_ONLN));
}

/* qsort's comparison of doubles, ascending. */
static inline int
bench_cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* xorshift64*: the benches' reproducible random numbers (state nonzero). */
static inline uint64_t
bench_rng(uint64_t *s)
{
    *s ^= *s >> 12;
    *s ^= *s << 25;
    *s ^= *s >> 27;
    return *s * 2685821657736338717ull;
}

/* The last i in [0, n) with start[i] <= r, for start[] ascending and
 * start[0] <= r: the slice holding overall position r when start[i] is
 * the number of positions before slice i. */
static inline size_t
bench_last_le(const uint64_t *start, size_t n, uint64_t r)
{
    size_t lo = 0, hi = n;
    while (hi - lo > 1) {
        size_t mid = lo + (hi - lo) / 2;
        if (start[mid] <= r)
            lo = mid;
        else
            hi = mid;
    }
    return lo;
}

/* Removes a benchmark's temporary proven-node store: LMDB's two files and
 * the folder. */
static inline void
bench_remove_store(const char *dir)
{
    char f[600];
    snprintf(f, sizeof f, "%s/data.mdb", dir);
    unlink(f);
    snprintf(f, sizeof f, "%s/lock.mdb", dir);
    unlink(f);
    rmdir(dir);
}

#endif /* BENCH_BENCH_UTIL_H */
