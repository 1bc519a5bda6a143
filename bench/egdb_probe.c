/*
 * egdb_probe.c - size and probe speed of the compressed databases (issue
 * 4's targets): the 2-6 piece set in at most 20 MB (130 positions a
 * byte); random probes at most 200 ns with a cache holding the whole set,
 * at most 2 us with a quarter of it.
 *
 * Uses the databases of bench/egdb ($EGDB_BENCH_DIR, default
 * /tmp/checkers-bench-egdb; run `make bench` or bench/egdb first),
 * compresses them if needed, then probes 2,000,000 random positions
 * (uniform over the 2-6 piece positions, either side to move, generated
 * before the clock starts) on one thread.
 *
 * The 2-7 piece set (issue 12: at least 150 positions a byte for the
 * 7-piece files, probes within 2 us with a cache of 1 GB):
 *   EGDB_BENCH_DIR=egdb-data EGDB_BENCH_PIECES=7 EGDB_BENCH_CACHE_MB=1024
 * probes positions uniform over 2-7 pieces through that one cache size
 * (EGDB_BENCH_CACHE_MB replaces the whole-set and quarter caches). Baseline in the same run: the
 * same positions probed in the uncompressed 2-bit build files, in rounds
 * alternating with the cache's (median ratio reported). Also
 * measured in the same run, as the floor any probe of a set this size
 * stands on: one dependent random read of a buffer the size of the
 * decoded set (huge pages where the kernel gives them). The whole-cache
 * figure is split by what the probe has to do (codec.h): a kept value
 * (one lookup), a capture position, a threatened-capture position (a
 * one-ply search each).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "bench/bench_util.h"
#include "egdb/codec.h"
#include "egdb/egdb.h"
#include "egdb/index.h"
#include "egdb/store.h"

/* ---- constants -------------------------------------------------------- */

#define NPROBES 2000000
#define ROUNDS 5 /* alternating rounds of baseline and cache probes */

/* ---- helpers ---------------------------------------------------------- */

static double
run_probes(const egdb *db, const eng_pos *ps, int n, uint64_t *sum)
{
    double t0 = bench_now();
    uint64_t s = 0;
    for (int i = 0; i < n; i++)
        s += (uint64_t)egdb_probe(db, &ps[i]);
    *sum = s;
    return (bench_now() - t0) / n * 1e9;
}

/* ns per probe of the uncompressed baseline. */
static double
run_raw(const egst_registry *raw, const eng_pos *ps, int n, uint64_t *sum)
{
    double t0 = bench_now();
    uint64_t s = 0;
    for (int i = 0; i < n; i++)
        s += (uint64_t)egst_probe(raw, &ps[i]);
    *sum = s;
    return (bench_now() - t0) / n * 1e9;
}

/* ns per dependent random read of a `bytes` buffer (a pointer chase
 * through one random cycle over its cache lines). */
static double
memory_latency(size_t bytes)
{
    size_t lines = bytes / 64;
    uint64_t *buf =
        mmap(NULL, lines * 64, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    uint32_t *order = malloc(lines * sizeof *order);
    if (buf == MAP_FAILED || !order)
        return 0;
#ifdef MADV_HUGEPAGE
    madvise(buf, lines * 64, MADV_HUGEPAGE);
#endif
    uint64_t seed = 42;
    for (size_t i = 0; i < lines; i++)
        order[i] = (uint32_t)i;
    for (size_t i = lines - 1; i > 0; i--) {
        size_t j = bench_rng(&seed) % (i + 1);
        uint32_t t = order[i];
        order[i] = order[j];
        order[j] = t;
    }
    for (size_t i = 0; i < lines; i++)
        buf[(size_t)order[i] * 8] = (uint64_t)order[(i + 1) % lines] * 8;
    free(order);
    const int n = 4000000;
    uint64_t k = 0;
    double t0 = bench_now();
    for (int i = 0; i < n; i++)
        k = buf[k];
    double ns = (bench_now() - t0) / n * 1e9;
    if (k == UINT64_MAX)
        printf("?"); /* keeps the chase */
    munmap(buf, lines * 64);
    return ns;
}

int
main(void)
{
    const char *dir =
        getenv("EGDB_BENCH_DIR") ? getenv("EGDB_BENCH_DIR") : "/tmp/checkers-bench-egdb";
    char err[1024];
    int npieces = getenv("EGDB_BENCH_PIECES") ? atoi(getenv("EGDB_BENCH_PIECES")) : 6;
    long cache_mb = getenv("EGDB_BENCH_CACHE_MB") ? atol(getenv("EGDB_BENCH_CACHE_MB")) : 0;
    if (npieces < 2 || npieces > 8 || cache_mb < 0) {
        fprintf(stderr, "EGDB_BENCH_PIECES must be 2-8 and EGDB_BENCH_CACHE_MB positive\n");
        return 2;
    }
    bench_machine();

    /* Load the 2-bit files: the baseline, and the source of positions. */
    egst_registry raw;
    if (egst_registry_init(&raw) != 0)
        return 1;
    uint64_t total = 0;
    for (int n = 2; n <= npieces; n++) {
        size_t k;
        egix_slices(n, NULL, NULL, 0, &k);
        egix_slice *sl = malloc(k * sizeof *sl);
        egix_slices(n, sl, NULL, k, &k);
        for (size_t i = 0; i < k; i++)
            if (egst_add_mapped(&raw, dir, &sl[i], 0, err, sizeof err) != 0) {
                fprintf(stderr, "%s\n(build the 1-%d piece databases first: build/bench/egdb)\n",
                        err, npieces);
                return 1;
            }
        free(sl);
    }
    /* start[s]: the positions of the slices before s. */
    uint64_t *start = malloc((raw.n + 1) * sizeof *start);
    if (!start)
        return 1;
    for (size_t i = 0; i < raw.n; i++) {
        start[i] = total;
        total += raw.list[i]->size;
    }
    start[raw.n] = total;

    /* Random positions, uniform over all 2-N piece positions. */
    eng_pos *ps = malloc(NPROBES * sizeof *ps);
    int *want = malloc(NPROBES * sizeof *want);
    uint64_t seed = 0x2545F4914F6CDD1Dull;
    for (int i = 0; i < NPROBES; i++) {
        uint64_t r = bench_rng(&seed) % total;
        size_t s = bench_last_le(start, raw.n, r);
        r -= start[s];
        egix_unindex(raw.list[s]->table, r, &ps[i]);
        want[i] = egst_value(raw.list[s], r);
        if (bench_rng(&seed) & 1)
            ps[i] = eng_flip(&ps[i]); /* same value, White to move */
    }
    uint64_t bs = 0;
    double base_ns = run_raw(&raw, ps, NPROBES, &bs);
    printf("baseline: uncompressed 2-bit files, %.0f ns a probe (%.1f MB in memory)\n", base_ns,
           (double)total / 4e6);
    printf("memory: one dependent random read of a %.0f MB buffer takes %.0f ns\n",
           (double)total / 4e6, memory_latency((size_t)(total / 4)));

    egdb_compress_stats cst;
    egdb_compress_opts co = {npieces, 2, 1, NULL, NULL, NULL};
    double tc = bench_now();
    if (egdb_compress(dir, &co, &cst, err, sizeof err) != 0) {
        fprintf(stderr, "compress: %s\n", err);
        return 1;
    }
    if (cst.positions)
        printf("compressed %" PRIu64 " positions in %.1f s (%" PRIu64 " runs)\n", cst.positions,
               bench_now() - tc, cst.runs);

    egdb_slice_stats *st;
    size_t ns;
    if (egdb_stats(dir, &st, &ns, err, sizeof err) != 0) {
        fprintf(stderr, "%s\n", err);
        return 1;
    }
    uint64_t cfile = 0, positions = 0, ctop = 0, ptop = 0;
    for (size_t i = 0; i < ns; i++) {
        int n = st[i].nbk + st[i].nwk + st[i].nbm + st[i].nwm;
        if (n >= 2 && n <= npieces) {
            cfile += st[i].cfile_bytes;
            positions += st[i].positions;
        }
        if (n == npieces) {
            ctop += st[i].cfile_bytes;
            ptop += st[i].positions;
        }
    }
    if (npieces == 6)
        printf("size of the 2-6 piece set: %" PRIu64 " bytes = %.2f MB, %.1f positions a byte "
               "(targets: 20 MB, 130 a byte) -> %s; %.1fx smaller than the 2-bit files\n",
               cfile, (double)cfile / 1e6, (double)positions / (double)cfile,
               cfile <= 20000000 ? "met" : "NOT met", (double)positions / 4.0 / (double)cfile);
    else
        printf("size of the 2-%d piece set: %" PRIu64 " bytes = %.2f MB, %.1f positions a byte; "
               "the %d-piece files alone: %.2f MB, %.1f positions a byte%s\n",
               npieces, cfile, (double)cfile / 1e6, (double)positions / (double)cfile, npieces,
               (double)ctop / 1e6, (double)ptop / (double)(ctop ? ctop : 1),
               npieces == 7
                   ? (ptop >= 150 * ctop ? " (target 150) -> met" : " (target 150) -> NOT met")
                   : "");
    free(st);

    /* Quiet positions (no capture for either side): what a search probes
     * after its capture extensions; each is one lookup. */
    eng_pos *qs = malloc(NPROBES * sizeof *qs);
    int nq = 0;
    for (int i = 0; i < NPROBES; i++) {
        eng_pos o = ps[i];
        o.stm ^= 1;
        if (!eng_has_capture(&ps[i]) && !eng_has_capture(&o))
            qs[nq++] = ps[i];
    }

    /* The same random positions by what a probe of them has to do. */
    static const char *kind_names[3] = {"kept value", "capture", "threatened capture"};
    eng_pos *kinds[3];
    int nk[3] = {0, 0, 0};
    for (int k = 0; k < 3; k++)
        kinds[k] = malloc(NPROBES * sizeof **kinds);
    for (int i = 0; i < NPROBES; i++) {
        eng_pos c = eng_canonical(&ps[i]);
        int k = egcd_dropped(&c, EGCD_FLAG_THREATS);
        kinds[k][nk[k]++] = ps[i];
    }

    size_t whole = (size_t)(total / 4) + (total / 4) / 8; /* decoded blocks + overhead */
    size_t caches[2] = {whole, whole / 4};
    const char *names[2] = {"whole set", "a quarter"};
    int ncaches = 2;
    if (cache_mb > 0) {
        caches[0] = (size_t)cache_mb << 20;
        names[0] = "given size";
        ncaches = 1;
    }
    for (int c = 0; c < ncaches; c++) {
        egdb *db;
        if (egdb_open(dir, npieces, caches[c], &db, err, sizeof err) != 0) {
            fprintf(stderr, "%s\n", err);
            return 1;
        }
        uint64_t sum;
        run_probes(db, ps, NPROBES, &sum); /* warm the cache */
        uint64_t h0, m0;
        size_t blocks;
        egdb_cache_counts(db, &h0, &m0, &blocks);
        /* Rounds alternating with the baseline, so that a drift of the
         * machine's memory latency (seen up to 1.5x within a session) moves
         * both sides of each ratio alike; the median round is reported. */
        double ns_r[ROUNDS], base_r[ROUNDS], ratio[ROUNDS];
        for (int r = 0; r < ROUNDS; r++) {
            base_r[r] = run_raw(&raw, ps, NPROBES, &bs);
            ns_r[r] = run_probes(db, ps, NPROBES, &sum);
            ratio[r] = ns_r[r] / base_r[r];
        }
        uint64_t h1, m1;
        egdb_cache_counts(db, &h1, &m1, &blocks);
        qsort(ns_r, ROUNDS, sizeof *ns_r, bench_cmp_double);
        qsort(base_r, ROUNDS, sizeof *base_r, bench_cmp_double);
        qsort(ratio, ROUNDS, sizeof *ratio, bench_cmp_double);
        double ns_probe = ns_r[ROUNDS / 2];
        int bad = 0;
        for (int i = 0; i < NPROBES; i++)
            bad += egdb_probe(db, &ps[i]) != want[i];
        double target = c == 0 && cache_mb == 0 ? 200.0 : 2000.0;
        printf("cache of the %s (%.0f MB, %zu blocks): %.0f ns a probe (median of %d rounds, "
               "%.0f-%.0f) = %.2fx the baseline (median ratio of rounds, %.2f-%.2fx; baseline "
               "%.0f ns), block hit rate %.1f%% (target %.0f ns) -> %s; wrong values: %d\n",
               names[c], (double)caches[c] / 1e6, blocks, ns_probe, ROUNDS, ns_r[0],
               ns_r[ROUNDS - 1], ratio[ROUNDS / 2], ratio[0], ratio[ROUNDS - 1], base_r[ROUNDS / 2],
               100.0 * (double)(h1 - h0) /
                   (double)((h1 - h0) + (m1 - m0) ? (h1 - h0) + (m1 - m0) : 1),
               target, ns_probe <= target ? "met" : "NOT met", bad);
        base_ns = base_r[ROUNDS / 2];
        run_probes(db, qs, nq, &sum);
        double ns_quiet = run_probes(db, qs, nq, &sum);
        printf("    quiet positions only (%d of them, no capture for either side): %.0f ns a "
               "probe = %.2fx the baseline\n",
               nq, ns_quiet, ns_quiet / base_ns);
        for (int k = 0; c == 0 && cache_mb == 0 && k < 3; k++) {
            run_probes(db, kinds[k], nk[k], &sum);
            double ns_k = run_probes(db, kinds[k], nk[k], &sum);
            printf("    %s (%.1f%% of the positions): %.0f ns a probe\n", kind_names[k],
                   100.0 * nk[k] / NPROBES, ns_k);
        }
        egdb_close(db);
    }
    free(qs);
    for (int k = 0; k < 3; k++)
        free(kinds[k]);
    (void)bs;
    free(ps);
    free(want);
    free(start);
    egst_registry_free(&raw);
    return 0;
}
