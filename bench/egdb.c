/*
 * egdb.c - endgame database build and verification speed (issue 3's
 * targets): the complete 2-6 piece databases built and verified in at
 * most 15 minutes of wall time on 2 cores with at most 4 GB of memory.
 *
 * Baseline measured in the same run: the 1-5 piece databases built on
 * one thread. Then 1-5 pieces on all threads (the threading speed-up),
 * then the rest of 1-N (N = $EGDB_BENCH_PIECES, default 6) on all threads
 * reusing the 1-5 piece files, then egdb_verify over everything. Each
 * phase prints positions resolved per second per thread, and the run
 * ends with the projection for 7 pieces from the measured rates.
 *
 * Files go to $EGDB_BENCH_DIR (default /tmp/checkers-bench-egdb), which
 * is removed first and kept afterwards (it is a usable database).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "bench/bench_util.h"
#include "egdb/egdb.h"
#include "egdb/index.h"

/* ---- helpers ---------------------------------------------------------- */

static void
print_stats(const char *what, const egdb_build_stats *s)
{
    double t = s->threads;
    printf("%s: %" PRIu64 " positions in %.1f s on %d thread(s) = %.2f M positions/s\n", what,
           s->positions, s->seconds_total, s->threads,
           (double)s->positions / s->seconds_total / 1e6);
    printf("    phase 1 captures+lookups: %6.1f s, %.2f M positions/s per thread "
           "(%" PRIu64 " by captures, %" PRIu64 " by lookups)\n",
           s->seconds_phase1, (double)s->positions / s->seconds_phase1 / 1e6 / t, s->by_capture,
           s->by_lookup);
    printf("    phase 2 non-captures:     %6.1f s, %.2f M resolved/s per thread (%" PRIu64
           " resolved)\n",
           s->seconds_phase2, (double)s->by_propagation / s->seconds_phase2 / 1e6 / t,
           s->by_propagation);
    printf("    write (pack, check, fsync): %4.1f s; largest pair %.1f MB\n", s->seconds_write,
           (double)s->peak_pair_bytes / 1e6);
}

static int
run_build(const char *dir, int pieces, int threads, egdb_build_stats *st)
{
    char err[512];
    egdb_build_opts o = {pieces, threads, NULL, NULL, NULL, 0, 0, 0, NULL};
    int rc = egdb_build(dir, &o, st, err, sizeof err);
    if (rc != 0)
        fprintf(stderr, "build failed: %s\n", err);
    return rc;
}

static int
clear_dir(const char *dir)
{
    char cmd[4200];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    return system(cmd);
}

int
main(void)
{
    const char *dir =
        getenv("EGDB_BENCH_DIR") ? getenv("EGDB_BENCH_DIR") : "/tmp/checkers-bench-egdb";
    int pieces = getenv("EGDB_BENCH_PIECES") ? atoi(getenv("EGDB_BENCH_PIECES")) : 6;
    int threads = (int)sysconf(_SC_NPROCESSORS_ONLN);
    if (pieces < 5 || pieces > 7)
        pieces = 6;
    if (threads < 1)
        threads = 1;
    bench_machine();
    printf("database directory: %s\n", dir);

    /* Baseline: 1-5 pieces, one thread. */
    egdb_build_stats base, par5, rest;
    clear_dir(dir);
    if (run_build(dir, 5, 1, &base) != 0)
        return 1;
    print_stats("baseline 1-5 pieces, 1 thread", &base);

    clear_dir(dir);
    double t0 = bench_now();
    if (run_build(dir, 5, threads, &par5) != 0)
        return 1;
    print_stats("1-5 pieces, all threads", &par5);
    printf("    speed-up over the 1-thread baseline: %.2fx\n",
           base.seconds_total / par5.seconds_total);

    if (run_build(dir, pieces, threads, &rest) != 0)
        return 1;
    char what[64];
    snprintf(what, sizeof what, "%d pieces (1-5 kept), all threads", pieces);
    print_stats(what, &rest);
    double tb = bench_now() - t0;
    double rate = (double)(par5.positions + rest.positions) / tb;
    printf("    rate over the whole build: %.2f M positions/s = %.2fx the 1-thread 1-5 baseline\n",
           rate / 1e6, rate / ((double)base.positions / base.seconds_total));

    char err[1024];
    double tv0 = bench_now();
    int rc = egdb_verify(dir, threads, NULL, NULL, err, sizeof err);
    double tv = bench_now() - tv0;
    if (rc != 0) {
        fprintf(stderr, "verify FAILED: %s\n", err);
        return 1;
    }
    uint64_t total = par5.positions + rest.positions;
    printf("verify 1-%d pieces: %.1f s, %.2f M positions/s per thread\n", pieces, tv,
           (double)total / tv / 1e6 / threads);

    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    double peak_gb = (double)ru.ru_maxrss * 1024.0 / 1e9;
    printf("build + verify of 1-%d pieces: %.1f s wall (target for 2-6: 900 s) -> %s; "
           "peak memory %.2f GB (target 4 GB) -> %s\n",
           pieces, tb + tv, (pieces == 6 && tb + tv <= 900.0) ? "met" : "see figure", peak_gb,
           peak_gb <= 4.0 ? "met" : "NOT met");

    /* Projection for 7 pieces from the measured whole-build rate. */
    uint64_t n7;
    egix_count(7, -1, -1, &n7);
    double build7 = (double)n7 / rate, verify7 = (double)n7 / ((double)total / tv);
    uint64_t n6 = 0;
    for (int n = 1; n <= 6; n++) {
        uint64_t c;
        egix_count(n, -1, -1, &c);
        n6 += c;
    }
    egdb_build_opts po = {7, 2, NULL, NULL, NULL, 0, 0, 0, NULL};
    egdb_cost cost;
    egdb_estimate("/nonexistent-checkers-plan", &po, &cost, err, sizeof err);
    uint64_t pair_bytes = cost.memory_pair, resident = cost.memory_mapped_peak;
    printf("projection for 7 pieces (%" PRIu64 " positions) at the measured rates: build %.0f s "
           "(%.1f h), verify %.0f s; memory: %.1f GB of databases at 2 bits a position "
           "(1-%d: %.1f GB) + %.1f GB for the largest 7-piece slice pair\n",
           n7, build7, build7 / 3600.0, verify7, (double)resident / 1e9, pieces,
           (double)n6 / 4.0 / 1e9, (double)pair_bytes / 1e9);
    return 0;
}
