/*
 * egdb_pages.c - random reads of mapped 2-bit slice files, with and
 * without 2 MB pages (egst_set_huge_pages: MADV_HUGEPAGE on the mapping;
 * store.c), in the same run: the access of the builder's phase 1 and of
 * the check, whose lookups land at random places of files of up to GBs.
 * Off by default: on 7-piece files this bench found no steady gain once
 * cached and first reads from disk twice as slow; run it on a folder of
 * 8-piece 2-bit files to decide for them.
 *
 * EGDB_PAGES_DIR (required) is a folder of 2-bit files (.wld); its own
 * variable, not the other benches' EGDB_BENCH_DIR, since this bench drops
 * the folder's files from the page cache. Without it the bench says so
 * and exits 0, so that `make bench` passes on a machine without a large
 * set. The largest files are taken, up to EGDB_PAGES_MB of them (default
 * 4096; a file larger than what is left is passed over for smaller
 * ones). Those files must not be
 * mapped by another process (a running build): the bench drops them from
 * the page cache before each round (posix_fadvise), which skips pages
 * another process maps. Copy them to a folder of their own first.
 *
 * Each round maps the files twice, the advice off and on (which goes
 * first alternates from round to round), each time after
 * dropping their cache, then reads NREADS random positions twice: the
 * first pass faults the files in from disk (the first reads of a session
 * that resumes a build), the second reads them cached. Reads go in blocks
 * of 32, each position's byte prefetched first, as phase 1 and the check
 * read. The positions are the same in every round. Reported: ns a read,
 * median over the rounds, the ratio, and how much of the files the kernel
 * mapped with 2 MB entries (FilePmdMapped, /proc/self/smaps_rollup).
 */
#include <dirent.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bench/bench_util.h"
#include "egdb/index.h"
#include "egdb/store.h"

#define NREADS 20000000u
#define BLOCK 32
#define ROUNDS 3

typedef struct file {
    egix_slice slice;
    uint64_t bytes;
    char path[600];
} file;

static int
by_size_desc(const void *a, const void *b)
{
    const file *x = a, *y = b;
    return x->bytes < y->bytes ? 1 : x->bytes > y->bytes ? -1 : 0;
}

static uint64_t
rng(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

/* The largest .wld files of dir, up to budget bytes; *n of them. */
static file *
pick_files(const char *dir, uint64_t budget, size_t *n)
{
    DIR *d = opendir(dir);
    if (!d)
        return NULL;
    size_t cap = 1024, k = 0;
    file *fs = malloc(cap * sizeof *fs);
    struct dirent *de;
    while (fs && (de = readdir(d)) != NULL) {
        size_t len = strlen(de->d_name);
        if (len != 11 || strcmp(de->d_name + 7, ".wld") != 0)
            continue;
        char name[8];
        memcpy(name, de->d_name, 7);
        name[7] = 0;
        if (k == cap) {
            file *g = realloc(fs, 2 * cap * sizeof *fs);
            if (!g)
                break;
            fs = g;
            cap *= 2;
        }
        file *f = &fs[k];
        struct stat st;
        snprintf(f->path, sizeof f->path, "%s/%s", dir, de->d_name);
        if (egix_slice_parse(name, &f->slice) != 0 || stat(f->path, &st) != 0)
            continue;
        f->bytes = (uint64_t)st.st_size;
        k++;
    }
    closedir(d);
    if (!fs)
        return NULL;
    qsort(fs, k, sizeof *fs, by_size_desc);
    uint64_t total = 0;
    size_t m = 0;
    for (size_t i = 0; i < k; i++)
        if (total + fs[i].bytes <= budget) {
            total += fs[i].bytes;
            fs[m++] = fs[i];
        }
    *n = m;
    return fs;
}

static void
drop_cache(const file *fs, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        int fd = open(fs[i].path, O_RDONLY | O_CLOEXEC);
        if (fd >= 0) {
            (void)posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
            close(fd);
        }
    }
}

/* Maps the n files of fs into a new registry r, in their order. */
static int
map_all(egst_registry *r, const char *dir, const file *fs, size_t n)
{
    char err[512];
    if (egst_registry_init(r) != 0)
        return -1;
    for (size_t i = 0; i < n; i++)
        if (egst_add_mapped(r, dir, &fs[i].slice, 0, err, sizeof err) != 0) {
            fprintf(stderr, "egdb_pages: %s\n", err);
            return -1;
        }
    return 0;
}

/* kB of file pages this process maps with 2 MB entries. */
static long
pmd_mapped_kb(void)
{
    FILE *f = fopen("/proc/self/smaps_rollup", "r");
    long kb = 0; /* 0 when the kernel does not say */
    char line[256];
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "FilePmdMapped: %ld kB", &kb) == 1)
            break;
    if (f)
        fclose(f);
    return kb;
}

/* One pass of reads; returns ns a read, the values summed into *sum. */
static double
pass(const egst_registry *r, const uint32_t *which, const uint64_t *idx, uint64_t *sum)
{
    double t0 = bench_now();
    uint64_t acc = 0;
    for (uint32_t b = 0; b < NREADS; b += BLOCK) {
        for (uint32_t k = b; k < b + BLOCK; k++)
            __builtin_prefetch(&r->list[which[k]]->data[idx[k] >> 2]);
        for (uint32_t k = b; k < b + BLOCK; k++)
            acc += (uint64_t)egst_value(r->list[which[k]], idx[k]);
    }
    *sum += acc;
    return (bench_now() - t0) * 1e9 / NREADS;
}

static int
cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

int
main(void)
{
    const char *dir = getenv("EGDB_PAGES_DIR");
    if (!dir || !*dir) {
        printf("egdb_pages: set EGDB_PAGES_DIR to a folder of 2-bit files (not mapped by a "
               "running build) to run; skipped\n");
        return 0;
    }
    const char *mb = getenv("EGDB_PAGES_MB");
    uint64_t budget = (uint64_t)(mb ? strtoull(mb, NULL, 10) : 4096) << 20;
    size_t n = 0;
    file *fs = pick_files(dir, budget, &n);
    if (!fs || n == 0) {
        fprintf(stderr, "egdb_pages: no .wld file of %s fits in %" PRIu64 " MB\n", dir,
                budget >> 20);
        free(fs);
        return 1;
    }
    uint64_t total = 0, positions = 0;
    for (size_t i = 0; i < n; i++)
        total += fs[i].bytes;
    char cpu[256];
    bench_cpu_model(cpu, sizeof cpu);
    printf("egdb_pages: %zu files of %s, %.2f GB (largest %.1f MB), %u random reads a pass, "
           "blocks of %d; %s\n",
           n, dir, (double)total / 1e9, (double)fs[0].bytes / 1e6, NREADS, BLOCK, cpu);

    /* The positions: a file in proportion to its size, then an index. */
    egst_registry r;
    if (map_all(&r, dir, fs, n) != 0)
        return 1;
    for (size_t i = 0; i < n; i++)
        positions += r.list[i]->size;
    if (positions == 0) {
        fprintf(stderr, "egdb_pages: the files of %s hold no positions\n", dir);
        return 1;
    }
    uint32_t *which = malloc(NREADS * sizeof *which);
    uint64_t *idx = malloc(NREADS * sizeof *idx);
    if (!which || !idx)
        return 1;
    uint64_t seed = 0x9e3779b97f4a7c15ull;
    for (uint32_t k = 0; k < NREADS; k++) {
        uint64_t x = rng(&seed) % positions;
        uint32_t s = 0;
        while (x >= r.list[s]->size)
            x -= r.list[s++]->size;
        which[k] = s;
        idx[k] = x;
    }
    egst_registry_free(&r);

    double t[2][2][ROUNDS]; /* [advice][cold, warm][round] */
    long pmd[2] = {0, 0};
    uint64_t sum[2] = {0, 0};
    for (int round = 0; round < ROUNDS; round++)
        for (int k = 0; k < 2; k++) {
            const int on = k ^ (round & 1); /* which goes first alternates */
            drop_cache(fs, n);
            egst_set_huge_pages(on);
            if (map_all(&r, dir, fs, n) != 0)
                return 1;
            t[on][0][round] = pass(&r, which, idx, &sum[on]);
            t[on][1][round] = pass(&r, which, idx, &sum[on]);
            pmd[on] = pmd_mapped_kb();
            egst_registry_free(&r);
            printf("  round %d, %s: first pass %.1f ns a read, second %.1f; %ld MB mapped in 2 MB "
                   "pages\n",
                   round + 1, on ? "advised" : "plain  ", t[on][0][round], t[on][1][round],
                   pmd[on] / 1024);
        }
    egst_set_huge_pages(0);
    if (sum[0] != sum[1]) {
        fprintf(stderr, "egdb_pages: the two ways read different values\n");
        return 1;
    }
    for (int on = 0; on < 2; on++)
        for (int w = 0; w < 2; w++)
            qsort(t[on][w], ROUNDS, sizeof(double), cmp_double);
    const int mid = ROUNDS / 2;
    printf("egdb_pages: median ns a read, plain / advised: first pass (from disk) %.1f / %.1f "
           "(x%.2f), second pass (cached) %.1f / %.1f (x%.2f)\n",
           t[0][0][mid], t[1][0][mid], t[0][0][mid] / t[1][0][mid], t[0][1][mid], t[1][1][mid],
           t[0][1][mid] / t[1][1][mid]);
    free(which);
    free(idx);
    free(fs);
    return 0;
}
