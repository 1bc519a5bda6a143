/*
 * egdb_partial.c - the 3-vs-3 partial-information experiment at full
 * scale (seed 000's validation on 6 pieces), with its timings.
 *
 * WHAT IT DOES
 *   1. Requires the complete 1-6 piece databases in $EGDB_BENCH_DIR
 *      (default /tmp/checkers-bench-egdb, made by bench/egdb).
 *   2. Partial build: a fresh directory ($EGDB_PARTIAL_DIR, default
 *      /tmp/checkers-bench-partial-3v3) gets symbolic links to the 1-5
 *      piece .wld files only, and egpt_build builds the 6-piece 3-vs-3
 *      materials with at most one king - 0033, 1023, 0132 ("KKMM": black
 *      kings, white kings, black men, white men) - as a partial database.
 *      Every move to a second king (1122, 2013, 0231, ...) has no database
 *      and counts as LW.
 *   3. Baseline in the same run: the exact builder (egdb_build) on the
 *      SAME slices, in a directory linking every 1-6 piece file except
 *      those three materials, so that it has every successor.
 *   4. Check: every position of the partial slices, Black to move and
 *      White to move, against the complete database: the bound must
 *      contain the true value and an exact bound must equal it. Any
 *      violation fails the benchmark.
 *   5. Writes results/partial-3v3.md (relative to the working directory,
 *      run from the repository root; $EGDB_PARTIAL_RESULTS overrides):
 *      what was built and checked, the figures, and the leading-rank
 *      tables in the manner of seed 000's Tables 3-5 (egpt_report).
 *      The partial directory is then removed ($EGDB_PARTIAL_KEEP=1 keeps
 *      it); the complete databases are only read.
 *   It also compares the work with what seed 000's Table 1 loop would do
 *   (a full pass over every position per iteration): the sum over pairs
 *   of passes x positions, against the re-evaluations actually made.
 */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bench/bench_util.h"
#include "egdb/egdb.h"
#include "egdb/index.h"
#include "egdb/partial.h"
#include "egdb/store.h"
#include "engine/value.h"

/* ---- constants -------------------------------------------------------- */

#define NMAT 3
#define CHUNK 65536
#define MAX_THREADS 16

/* ---- types ------------------------------------------------------------ */

/* Per material (of the stored slices iterated): bounds found, true
 * values, and violations. Each check thread fills its own copy and adds it
 * under the lock at the end, so the hot loop shares nothing. */
typedef struct mat_tally {
    uint64_t probes, count[ENG_NBOUNDS], bad_contain, bad_exact;
    uint64_t truth[3];          /* loss, draw, win */
    uint64_t exact_by_truth[3]; /* of which stored exactly */
} mat_tally;

/* The check: every position of every partial slice, in chunks handed out
 * by an atomic counter (slices in egix_slices order, chunk0[s] = first
 * chunk of slice s). */
typedef struct check_ctx {
    const egpt_db *pdb;
    const egst_registry *full;
    egix_slice *sl;
    egix_table **tab;
    int *mat; /* material number of each slice */
    uint64_t *chunk0;
    size_t ns;
    uint64_t nchunks;
    _Atomic uint64_t next;
    pthread_mutex_t lock;
    mat_tally tally[NMAT];
    char first_bad[256];
} check_ctx;

/* ---- static data ------------------------------------------------------ */

static const egpt_material mats[NMAT] = {{0, 0, 3, 3}, {1, 0, 2, 3}, {0, 1, 3, 2}};
static const char *const mat_names[NMAT] = {"0033", "1023", "0132"};

/* ---- helpers ---------------------------------------------------------- */

/* The number of s's material among mats[], or -1. */
static int
mat_of(const egix_slice *s)
{
    for (int i = 0; i < NMAT; i++)
        if (s->nbk == mats[i].nbk && s->nwk == mats[i].nwk && s->nbm == mats[i].nbm &&
            s->nwm == mats[i].nwm)
            return i;
    return -1;
}

/* system() with a message on failure (directory set-up only). */
static int
run(const char *cmd)
{
    int rc = system(cmd);
    if (rc != 0)
        fprintf(stderr, "command failed (%d): %s\n", rc, cmd);
    return rc;
}

/* Links every .wld of src with at most maxp pieces, except the chosen
 * materials when skip_chosen, into dst. Returns the number linked. */
static long
link_files(const char *src, const char *dst, int maxp, int skip_chosen)
{
    DIR *d = opendir(src);
    if (!d)
        return -1;
    long n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        egix_slice s;
        char name[EGIX_NAME_MAX], a[4200], b[4200];
        if (strlen(e->d_name) != 11 || strcmp(e->d_name + 7, ".wld") != 0)
            continue;
        memcpy(name, e->d_name, 7);
        name[7] = '\0';
        if (egix_slice_parse(name, &s) != 0)
            continue;
        if (s.nbk + s.nwk + s.nbm + s.nwm > maxp || (skip_chosen && mat_of(&s) >= 0))
            continue;
        snprintf(a, sizeof a, "%s/%s", src, e->d_name);
        snprintf(b, sizeof b, "%s/%s", dst, e->d_name);
        if (symlink(a, b) != 0) {
            fprintf(stderr, "symlink %s: %s\n", b, strerror(errno));
            closedir(d);
            return -1;
        }
        n++;
    }
    closedir(d);
    return n;
}

/* An egdb value (EGDB_WIN/LOSS/DRAW) as an outcome; 9 for anything else
 * (a missing complete slice), which the check counts as a violation. */
static int
truth_of(int v)
{
    return v == EGDB_WIN ? ENG_WIN : v == EGDB_LOSS ? ENG_LOSS : v == EGDB_DRAW ? ENG_DRAW : 9;
}

/* One check thread (the main thread runs one too). The complete values
 * come from the 2-bit files through egst_probe, the bounds through the
 * public egpt_probe: both turn a White-to-move position into its twin,
 * each with its own code. */
static void *
check_worker(void *arg)
{
    check_ctx *c = arg;
    mat_tally local[NMAT];
    memset(local, 0, sizeof local);
    char bad[256] = "";
    size_t s = 0;
    for (;;) {
        uint64_t k = atomic_fetch_add(&c->next, 1);
        if (k >= c->nchunks)
            break;
        while (s + 1 < c->ns && c->chunk0[s + 1] <= k)
            s++;
        uint64_t size = egix_table_size(c->tab[s]);
        uint64_t b = (k - c->chunk0[s]) * CHUNK, e = b + CHUNK < size ? b + CHUNK : size;
        mat_tally *t = &local[c->mat[s]];
        for (uint64_t i = b; i < e; i++) {
            eng_pos p;
            egix_unindex(c->tab[s], i, &p);
            /* Both sides to move: the White-to-move form lies in the twin
             * slice of both databases. */
            for (int side = 0; side < 2; side++) {
                p.stm = side ? ENG_WHITE : ENG_BLACK;
                int bd = egpt_probe(c->pdb, &p);
                int v = truth_of(egst_probe(c->full, &p));
                t->probes++;
                if (!eng_bound_valid(bd) || v == 9) {
                    t->bad_contain++;
                    continue;
                }
                int ok = eng_bound_contains((eng_bound)bd, v);
                int ex = eng_bound_is_exact((eng_bound)bd);
                t->bad_contain += !ok;
                t->bad_exact += ex && eng_bound_lo((eng_bound)bd) != v;
                /* The shares count each position once: as stored, Black to
                 * move (the White-to-move probe is the same position as
                 * the twin slice stores it, read through the flip). */
                if (side == 0) {
                    t->count[bd]++;
                    t->truth[v + 1]++;
                    t->exact_by_truth[v + 1] += ex;
                }
                if ((!ok || (ex && eng_bound_lo((eng_bound)bd) != v)) && !bad[0]) {
                    char fen[ENG_FEN_MAX];
                    eng_format_fen(&p, fen, sizeof fen);
                    snprintf(bad, sizeof bad, "%s: bound %s, true %d", fen,
                             eng_bound_name((eng_bound)bd), v);
                }
            }
        }
    }
    pthread_mutex_lock(&c->lock);
    for (int m = 0; m < NMAT; m++) {
        mat_tally *d = &c->tally[m], *l = &local[m];
        d->probes += l->probes;
        d->bad_contain += l->bad_contain;
        d->bad_exact += l->bad_exact;
        for (int k = 0; k < ENG_NBOUNDS; k++)
            d->count[k] += l->count[k];
        for (int k = 0; k < 3; k++) {
            d->truth[k] += l->truth[k];
            d->exact_by_truth[k] += l->exact_by_truth[k];
        }
    }
    if (bad[0] && !c->first_bad[0])
        snprintf(c->first_bad, sizeof c->first_bad, "%s", bad);
    pthread_mutex_unlock(&c->lock);
    return NULL;
}

/* Sum over pairs of passes x positions, from the partial build log: the
 * position evaluations of seed 000's Table 1 loop, which rescans every
 * position of the pair in every pass. */
static uint64_t
table1_evaluations(const char *dir, uint64_t *pairs)
{
    char path[4200], line[256];
    snprintf(path, sizeof path, "%s/partial-log.tsv", dir);
    FILE *f = fopen(path, "r");
    uint64_t sum = 0;
    *pairs = 0;
    if (!f)
        return 0;
    while (fgets(line, sizeof line, f)) {
        char name[16];
        unsigned long long pos, passes, evals;
        double sec;
        int th;
        if (sscanf(line, "%15s %llu %llu %llu %lf %d", name, &pos, &passes, &evals, &sec, &th) ==
            6) {
            sum += (uint64_t)pos * (uint64_t)passes;
            (*pairs)++;
        }
    }
    fclose(f);
    return sum;
}

/* a in percent of b (0 when b is 0). */
static double
pc(uint64_t a, uint64_t b)
{
    return b ? 100.0 * (double)a / (double)b : 0.0;
}

/* The score of one table cell (material mats[m], Black to move with
 * leading rows rb, rw) over its non-capture positions, from the slice
 * header, as egpt_report computes it; -1 if the slice is absent. */
static double
cell_score(const char *dir, int m, int rb, int rw)
{
    egpt_slice_info *v;
    size_t n;
    char err[512];
    double score = -1.0;
    if (egpt_list(dir, &v, &n, err, sizeof err) != 0)
        return score;
    for (size_t i = 0; i < n; i++) {
        const egix_slice *s = &v[i].slice;
        if (mat_of(s) != m || s->rb != rb || s->rw != rw)
            continue;
        uint64_t nc = v[i].positions - v[i].captures;
        uint64_t ex = v[i].count[ENG_LL] + v[i].count[ENG_DD] + v[i].count[ENG_WW];
        uint64_t hf = v[i].count[ENG_LD] + v[i].count[ENG_DW];
        if (nc)
            score = 100.0 *
                    ((double)(ex - v[i].captures_exact) + 0.5 * (double)(hf - v[i].captures_half)) /
                    (double)nc;
    }
    free(v);
    return score;
}

/* One status line on a terminal (the build takes tens of seconds). */
static void
progress(const egdb_progress *p, void *arg)
{
    (void)arg;
    fprintf(stderr, "\r  %s %-10s pair %zu/%zu pass %" PRIu64 "   ", p->slice, p->phase, p->pair_no,
            p->pair_count, p->pass);
}

int
main(void)
{
    const char *full =
        getenv("EGDB_BENCH_DIR") ? getenv("EGDB_BENCH_DIR") : "/tmp/checkers-bench-egdb";
    const char *pdir =
        getenv("EGDB_PARTIAL_DIR") ? getenv("EGDB_PARTIAL_DIR") : "/tmp/checkers-bench-partial-3v3";
    const char *results =
        getenv("EGDB_PARTIAL_RESULTS") ? getenv("EGDB_PARTIAL_RESULTS") : "results/partial-3v3.md";
    int threads = (int)sysconf(_SC_NPROCESSORS_ONLN);
    if (threads < 1)
        threads = 1;
    if (threads > MAX_THREADS)
        threads = MAX_THREADS;
    char err[1024], cmd[8600], edir[4200], load[64] = "unknown";
    bench_machine();
    /* Timings are only comparable on an idle machine: say how busy it was. */
    FILE *lf = fopen("/proc/loadavg", "r");
    if (lf) {
        double l1, l5, l15;
        if (fscanf(lf, "%lf %lf %lf", &l1, &l5, &l15) == 3)
            snprintf(load, sizeof load, "%.2f %.2f %.2f", l1, l5, l15);
        fclose(lf);
    }
    printf("load average at start: %s\n", load);

    /* 1. The complete databases must be there. */
    egdb_build_opts plan_opts = {6, 2, NULL, NULL, NULL, 0, 0, 0, NULL};
    egdb_cost cost;
    size_t slices_left = 0;
    if (egdb_estimate(full, &plan_opts, &cost, err, sizeof err) != 0 ||
        (slices_left = cost.slices) != 0) {
        fprintf(stderr,
                "egdb_partial: the complete 1-6 piece databases are not all in %s (%zu slice "
                "files missing or damaged%s%s).\nBuild them first with build/bench/egdb (or "
                "`checkers egdb build` into that directory), or point EGDB_BENCH_DIR at them.\n",
                full, slices_left, err[0] ? ": " : "", err[0] ? err : "");
        return 2;
    }
    printf("complete databases: %s (1-6 pieces)\n", full);

    /* 2. Partial build with 1-5 pieces available. */
    snprintf(cmd, sizeof cmd, "rm -rf '%s' && mkdir -p '%s'", pdir, pdir);
    if (run(cmd) != 0)
        return 1;
    long linked = link_files(full, pdir, 5, 0);
    if (linked <= 0) {
        fprintf(stderr, "cannot link the 1-5 piece files into %s\n", pdir);
        return 1;
    }
    printf("partial directory: %s (%ld complete 1-5 piece slices linked)\n", pdir, linked);
    /* The build proper. Its time excludes loading and checking the 2,223
     * linked 1-5 piece files (t_partial includes them). */
    egpt_stats st;
    egpt_opts po = {mats, NMAT, threads, isatty(2) ? progress : NULL, NULL, NULL};
    double t0 = bench_now();
    int rc = egpt_build(pdir, &po, &st, err, sizeof err);
    double t_partial = bench_now() - t0;
    if (isatty(2))
        fprintf(stderr, "\n");
    if (rc != 0) {
        fprintf(stderr, "partial build failed: %s\n", err);
        return 1;
    }
    double build_s = st.seconds_first + st.seconds_passes + st.seconds_write;
    uint64_t t1pairs, t1evals = table1_evaluations(pdir, &t1pairs);
    double first_rate = (double)st.positions / st.seconds_first; /* evaluations per second */
    printf("partial build of 0033+1023+0132: %" PRIu64 " positions, %zu pairs, %.1f s (%.1f s "
           "with loading the 1-5 piece files) on %d threads\n"
           "    first pass (lookups): %.1f s; later passes: %.1f s, %" PRIu64
           " re-evaluations (%.2f per position); write: %.1f s\n"
           "    passes per pair: %.1f on average, %" PRIu64 " at most; %" PRIu64
           " moves into no database (LW)\n",
           st.positions, st.pairs_built, build_s, t_partial, threads, st.seconds_first,
           st.seconds_passes, st.evaluations, (double)st.evaluations / (double)st.positions,
           st.seconds_write, (double)st.passes_total / (double)st.pairs_built, st.passes_max,
           st.exits_unavailable);
    printf("    seed 000's Table 1 loop would evaluate %" PRIu64 " positions (every position "
           "every pass), %.1fx the %" PRIu64 " evaluations made here (first pass + later); at "
           "the first pass's rate that is about %.0f s of passes instead of %.1f s\n",
           t1evals, (double)t1evals / (double)(st.positions + st.evaluations),
           st.positions + st.evaluations, (double)t1evals / first_rate,
           st.seconds_first + st.seconds_passes);

    /* 3. Baseline: the exact builder on the same slices, every successor
     * available. */
    snprintf(edir, sizeof edir, "%s-exact", pdir);
    snprintf(cmd, sizeof cmd, "rm -rf '%s' && mkdir -p '%s'", edir, edir);
    if (run(cmd) != 0)
        return 1;
    if (link_files(full, edir, 6, 1) <= 0)
        return 1;
    egdb_build_stats es;
    egdb_build_opts eo = {6, threads, NULL, NULL, NULL, 0, 0, 0, NULL};
    if (egdb_build(edir, &eo, &es, err, sizeof err) != 0) {
        fprintf(stderr, "baseline exact build failed: %s\n", err);
        return 1;
    }
    /* The exact build's own phases, without mapping the kept files. */
    double exact_s = es.seconds_phase1 + es.seconds_phase2 + es.seconds_write;
    printf("baseline, exact builder on the same slices with every successor available: %" PRIu64
           " positions, %.1f s -> partial / exact time = %.2f\n",
           es.positions, exact_s, build_s / exact_s);
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", edir);
    run(cmd);

    /* 4. Check every position against the complete database. */
    /* The complete 6-piece slices of the three materials are mapped from
     * the full directory (payload checked), the partial ones opened
     * through the public API. */
    check_ctx c;
    memset(&c, 0, sizeof c);
    pthread_mutex_init(&c.lock, NULL);
    egpt_db *pdb;
    egst_registry reg;
    if (egpt_open(pdir, 0, &pdb, err, sizeof err) != 0 || egst_registry_init(&reg) != 0) {
        fprintf(stderr, "open partial: %s\n", err);
        return 1;
    }
    size_t k6;
    egix_slices(6, NULL, NULL, 0, &k6);
    c.sl = malloc(k6 * sizeof *c.sl);
    c.tab = calloc(k6, sizeof *c.tab);
    c.mat = calloc(k6, sizeof *c.mat);
    c.chunk0 = calloc(k6 + 1, sizeof *c.chunk0);
    egix_slices(6, c.sl, NULL, k6, &k6);
    for (size_t i = 0; i < k6; i++) {
        int m = mat_of(&c.sl[i]);
        if (m < 0)
            continue;
        if (egst_add_mapped(&reg, full, &c.sl[i], 1, err, sizeof err) != 0) {
            fprintf(stderr, "complete slice: %s\n", err);
            return 1;
        }
        c.sl[c.ns] = c.sl[i];
        c.mat[c.ns] = m;
        c.tab[c.ns] = reg.list[reg.n - 1]->table;
        c.chunk0[c.ns + 1] = c.chunk0[c.ns] + (egix_table_size(c.tab[c.ns]) + CHUNK - 1) / CHUNK;
        c.ns++;
    }
    c.nchunks = c.chunk0[c.ns];
    c.pdb = pdb;
    c.full = &reg;
    atomic_init(&c.next, 0);
    t0 = bench_now();
    pthread_t tid[MAX_THREADS];
    for (int t = 1; t < threads; t++)
        pthread_create(&tid[t], NULL, check_worker, &c);
    check_worker(&c);
    for (int t = 1; t < threads; t++)
        pthread_join(tid[t], NULL);
    double t_check = bench_now() - t0;
    mat_tally all;
    memset(&all, 0, sizeof all);
    uint64_t npos[NMAT + 1] = {0};
    for (int m = 0; m < NMAT; m++) {
        all.probes += c.tally[m].probes;
        all.bad_contain += c.tally[m].bad_contain;
        all.bad_exact += c.tally[m].bad_exact;
        for (int k = 0; k < ENG_NBOUNDS; k++) {
            all.count[k] += c.tally[m].count[k];
            npos[m] += c.tally[m].count[k];
            npos[NMAT] += c.tally[m].count[k];
        }
        for (int k = 0; k < 3; k++) {
            all.truth[k] += c.tally[m].truth[k];
            all.exact_by_truth[k] += c.tally[m].exact_by_truth[k];
        }
    }
    printf("check against the complete 6-piece database: %zu slices, %" PRIu64
           " probes (every placement, both sides to move) in %.1f s: %" PRIu64
           " bounds not containing the true value, %" PRIu64 " wrong exact values%s%s\n",
           c.ns, all.probes, t_check, all.bad_contain, all.bad_exact,
           c.first_bad[0] ? "; first: " : "", c.first_bad);
    for (int m = 0; m <= NMAT; m++) {
        const mat_tally *t = m < NMAT ? &c.tally[m] : &all;
        uint64_t ex = t->count[ENG_LL] + t->count[ENG_DD] + t->count[ENG_WW];
        uint64_t hf = t->count[ENG_LD] + t->count[ENG_DW];
        uint64_t np = npos[m];
        printf("    %-4s %9" PRIu64 " positions: exact %5.1f%%, half %5.1f%%, unknown %5.1f%%; "
               "true values L/D/W %4.1f/%4.1f/%4.1f%%, of which exact %4.1f/%4.1f/%4.1f%%\n",
               m < NMAT ? mat_names[m] : "all", np, pc(ex, np), pc(hf, np),
               pc(t->count[ENG_LW], np), pc(t->truth[0], np), pc(t->truth[1], np),
               pc(t->truth[2], np), pc(t->exact_by_truth[0], t->truth[0]),
               pc(t->exact_by_truth[1], t->truth[1]), pc(t->exact_by_truth[2], t->truth[2]));
    }
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    double peak_gb = (double)ru.ru_maxrss * 1024.0 / 1e9;
    printf("peak memory %.2f GB\n", peak_gb);

    /* 5. The results file (its directory made if missing). */
    char rdir[4200];
    snprintf(rdir, sizeof rdir, "%s", results);
    char *slash = strrchr(rdir, '/');
    if (slash && slash != rdir) {
        *slash = '\0';
        mkdir(rdir, 0755);
    }
    FILE *out = fopen(results, "w");
    if (!out) {
        fprintf(stderr, "cannot write %s: %s (run from the repository root)\n", results,
                strerror(errno));
    } else {
        char model[256];
        bench_cpu_model(model, sizeof model);
        fprintf(out,
                "# Partial-information database: 6-piece 3 vs 3, at most one king\n\n"
                "Written by `bench/egdb_partial` (egdb/partial.h; method of seed 000, "
                "Bjornsson, Schaeffer and Sturtevant, *Partial Information Endgame "
                "Databases*).\n\n"
                "## What was built\n\n"
                "The 6-piece materials with three pieces a side and at most one king - 0033 "
                "(three men each), 1023 (Black: a king and two men; White: three men) and its "
                "colour swap 0132 (\"KKMM\" = black kings, white kings, black men, white men) "
                "- were built as a partial database with only the complete 1-5 piece "
                "databases available. Every move that makes a second king (to 1122, 2013, "
                "0231, ...) leads to a database that does not exist and counts as LW; "
                "captures lead into the complete 5-piece databases and are exact. The build "
                "is seed 000's value iteration with Table 2's max and the draw-by-repetition "
                "unknowns uLW/uTW/uTT/uLT, re-evaluating only the predecessors of changed "
                "positions. Stored values are the bounds LL, LD, DD, DW, WW, LW.\n\n"
                "## How it was checked\n\n"
                "Every stored position, with Black and with White to move (%" PRIu64
                " probes), was compared with the complete 6-piece database built by the exact "
                "builder: **%" PRIu64 " bounds did not contain the true value and %" PRIu64
                " exact bounds differed from it** (both must be 0). The 4-piece version of the "
                "experiment (tests/test_egdb_partial.c) also checks that each bound is exactly "
                "what two plain retrograde analyses give.\n\n"
                "## Figures\n\n"
                "Machine: %s, %ld cores online; %d threads; load average at start %s (the "
                "times are wall times on a machine shared with other work).\n\n"
                "| | |\n|---|---|\n"
                "| positions (Black to move as stored = every placement with either side to "
                "move) | %" PRIu64 " |\n"
                "| slice pairs | %zu |\n"
                "| partial build time | %.1f s (first pass %.1f s, later passes %.1f s, write "
                "%.1f s) |\n"
                "| exact builder on the same slices, all successors available (same run) | "
                "%.1f s (ratio %.2f) |\n"
                "| passes per pair | %.1f average, %" PRIu64 " at most |\n"
                "| re-evaluations after the first pass | %" PRIu64 " (%.2f per position) |\n"
                "| evaluations of seed 000's Table 1 loop (all positions every pass) | %" PRIu64
                " (%.1fx) |\n"
                "| moves into no database (LW) | %" PRIu64 " |\n"
                "| check time | %.1f s |\n\n",
                all.probes, all.bad_contain, all.bad_exact, model, sysconf(_SC_NPROCESSORS_ONLN),
                threads, load, st.positions, st.pairs_built, build_s, st.seconds_first,
                st.seconds_passes, st.seconds_write, exact_s, build_s / exact_s,
                (double)st.passes_total / (double)st.pairs_built, st.passes_max, st.evaluations,
                (double)st.evaluations / (double)st.positions, t1evals,
                (double)t1evals / (double)(st.positions + st.evaluations), st.exits_unavailable,
                t_check);
        fprintf(out, "Per material, each position once (the material is that of the side to "
                     "move, stored with Black to move; 1023 to move is 0132 with White to "
                     "move), with the true values from the complete database:\n\n"
                     "| material (side to move first) | positions | exact %% | half (LD/DW) %% "
                     "| unknown (LW) %% | true L/D/W %% | exact among true L/D/W %% |\n"
                     "|---|---:|---:|---:|---:|---|---|\n");
        for (int m = 0; m <= NMAT; m++) {
            const mat_tally *t = m < NMAT ? &c.tally[m] : &all;
            uint64_t ex = t->count[ENG_LL] + t->count[ENG_DD] + t->count[ENG_WW];
            uint64_t hf = t->count[ENG_LD] + t->count[ENG_DW];
            uint64_t np = npos[m];
            fprintf(out,
                    "| %s | %" PRIu64 " | %.1f | %.1f | %.1f | %.1f / %.1f / %.1f | "
                    "%.1f / %.1f / %.1f |\n",
                    m < NMAT ? mat_names[m] : "all", np, pc(ex, np), pc(hf, np),
                    pc(t->count[ENG_LW], np), pc(t->truth[0], np), pc(t->truth[1], np),
                    pc(t->truth[2], np), pc(t->exact_by_truth[0], t->truth[0]),
                    pc(t->exact_by_truth[1], t->truth[1]), pc(t->exact_by_truth[2], t->truth[2]));
        }
        fprintf(out,
                "\n## Resolved share by leading ranks (as seed 000's Tables 3-5)\n\n"
                "How to read them: one table per material of the side to move (Black in the "
                "stored form), so each position is counted once, with its side to move: the "
                "1023 table is \"king and two men to move against three men\", the 0132 table "
                "\"three men to move against king and two men\" (the paper's Tables 4 and 5 are "
                "split the same way, by which side is to move); 0033 is its own twin, and its "
                "White-to-move positions appear with the ranks swapped. Like the paper, the "
                "cells count non-capture positions only (a capture position takes its value "
                "from the complete 5-piece databases and is always exact here) and score exact "
                "values 1, LD/DW 0.5, LW 0.\n\n"
                "What they show: with a king already on the board the pattern is the paper's: "
                "the boundary, where a leading man is about to make a second king for which no "
                "database exists, is the least resolved (1023 to move, 7/7: %.0f%%), and the "
                "far-back ranks the best (1023, 1/1: %.0f%%; the side with the king wins "
                "before any man crowns). Men only (0033) is different from seed 000's 5 vs 5 "
                "(Table 3, 100%% at 2/2): with three men a side there is room to run past each "
                "other, so from the back ranks nearly every line ends in a second promotion "
                "before an exchange (0033, 1/1: %.0f%%, 2/2: %.0f%%), while a side about to "
                "crown against men far back is mostly resolved (0033, 7/1: %.0f%%). The most "
                "passes one pair needed was %" PRIu64 " (the paper reports up to 36 for 5 vs "
                "5).\n\n",
                cell_score(pdir, 1, 6, 6), cell_score(pdir, 1, 0, 0), cell_score(pdir, 0, 0, 0),
                cell_score(pdir, 0, 1, 1), cell_score(pdir, 0, 6, 0), st.passes_max);
        if (egpt_report(pdir, out, EGPT_REPORT_MARKDOWN, err, sizeof err) != 0)
            fprintf(stderr, "report: %s\n", err);
        fclose(out);
        printf("results written to %s\n", results);
    }
    egpt_close(pdb);
    egst_registry_free(&reg);
    /* The partial database is a temporary of this run unless asked for
     * (EGDB_PARTIAL_KEEP=1 keeps it, e.g. to try `checkers egdb stats`). */
    if (!getenv("EGDB_PARTIAL_KEEP")) {
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", pdir);
        run(cmd);
    } else {
        printf("partial database kept in %s\n", pdir);
    }
    free(c.sl);
    free(c.tab);
    free(c.mat);
    free(c.chunk0);
    return (all.bad_contain || all.bad_exact) ? 1 : 0;
}
