/*
 * egdb_check.c - the speed of the check of 2-bit files against their
 * successors (egvf_verify_slices, verify.c: the 8-piece pipeline's first
 * stage, and `egdb verify`), on chosen slices of a folder.
 *
 * EGDB_CHECK_DIR (required) is a folder of 2-bit files (.wld): the
 * slices to check and every slice their moves lead to (symbolic or hard
 * links to a build's files will do; nothing is written). Without it the
 * bench says so and exits 0, so that `make bench` passes on a machine
 * without a large set.
 * EGDB_CHECK_SLICES: the slices to check, by name, comma-separated
 * ("3311.51,3311.42"); default the largest file of the folder.
 * EGDB_CHECK_THREADS (default 2), EGDB_CHECK_ROUNDS (default 3).
 * EGDB_CHECK_HUGE=1: the checked slices are read from a copy in memory
 * with 2 MB pages instead of their mapped files (4 kB pages), to see
 * what page walks cost the check (docs/egdb.md, "Build speed", stop 57).
 *
 * Every .wld file of the folder is mapped (its checksum not read), then
 * the slices are checked ROUNDS times; the first round also reads them
 * in from disk when they are not cached. Reported: seconds and millions
 * of positions a second, each round and the median. A baseline: build
 * this bench in a copy of the tree before a change, and run both
 * binaries in turn on the same folder (the long build paused).
 */
#include <dirent.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "bench/bench_util.h"
#include "egdb/index.h"
#include "egdb/stage.h"
#include "egdb/store.h"

#define MAX_ROUNDS 15

/* Maps every .wld file of dir into r. RETURN the number, or -1. */
static long
map_dir(egst_registry *r, const char *dir)
{
    DIR *d = opendir(dir);
    if (!d) {
        perror(dir);
        return -1;
    }
    long n = 0;
    struct dirent *de;
    char err[512];
    while ((de = readdir(d)) != NULL) {
        size_t len = strlen(de->d_name);
        if (len != EGIX_NAME_MAX - 1 + 4 || strcmp(de->d_name + len - 4, ".wld") != 0)
            continue;
        char name[EGIX_NAME_MAX];
        egix_slice s;
        memcpy(name, de->d_name, len - 4);
        name[len - 4] = '\0';
        if (egix_slice_parse(name, &s) != 0)
            continue;
        if (egst_add_mapped(r, dir, &s, 0, err, sizeof err) != 0) {
            fprintf(stderr, "egdb_check: %s\n", err);
            closedir(d);
            return -1;
        }
        n++;
    }
    closedir(d);
    return n;
}

/* EGDB_CHECK_HUGE: the checked slices' values copied into memory with 2
 * MB pages (MADV_HUGEPAGE), in place of their 4 kB-page file mappings.
 * A bench-only swap of the registry's data pointers (the registry is this
 * program's own and is read-only to the check); the mappings stay for
 * egst_registry_free. Says how much the kernel gave as 2 MB pages. */
static int
copy_huge(const egst_slice **list, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        const size_t huge = (size_t)2 << 20, len = (size_t)((list[i]->size + 3) / 4),
                     bytes = (len / huge + 1) * huge;
        uint8_t *m = aligned_alloc(huge, bytes);
        if (!m) {
            fprintf(stderr, "egdb_check: EGDB_CHECK_HUGE: out of memory\n");
            return -1;
        }
        (void)madvise(m, bytes, MADV_HUGEPAGE);
        memcpy(m, list[i]->data, len);
        ((egst_slice *)list[i])->data = m; /* leaked at exit, with the copy */
    }
    FILE *f = fopen("/proc/self/smaps_rollup", "r");
    char line[256];
    long kb = 0;
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "AnonHugePages: %ld kB", &kb) == 1)
            break;
    if (f)
        fclose(f);
    printf("  EGDB_CHECK_HUGE: the checked slices copied to memory, %ld MB of it in 2 MB pages\n",
           kb >> 10);
    return 0;
}

int
main(void)
{
    const char *dir = getenv("EGDB_CHECK_DIR");
    if (!dir || !*dir) {
        printf("egdb_check: set EGDB_CHECK_DIR to a folder of 2-bit files (the slices to check "
               "and those their moves reach) to run; skipped\n");
        return 0;
    }
    const char *th = getenv("EGDB_CHECK_THREADS"), *ro = getenv("EGDB_CHECK_ROUNDS");
    int threads = th ? atoi(th) : 2, rounds = ro ? atoi(ro) : 3;
    if (threads < 1 || rounds < 1 || rounds > MAX_ROUNDS) {
        fprintf(stderr, "egdb_check: EGDB_CHECK_THREADS must be >= 1, EGDB_CHECK_ROUNDS 1..%d\n",
                MAX_ROUNDS);
        return 1;
    }
    egst_registry r;
    if (egst_registry_init(&r) != 0)
        return 1;
    double t0 = bench_now();
    long mapped = map_dir(&r, dir);
    if (mapped <= 0) {
        fprintf(stderr, "egdb_check: no 2-bit file could be mapped from %s\n", dir);
        return 1;
    }
    double t_map = bench_now() - t0;

    /* The slices to check. */
    const egst_slice **list = malloc(r.n * sizeof *list);
    size_t n = 0;
    uint64_t positions = 0;
    const char *names = getenv("EGDB_CHECK_SLICES");
    if (!list)
        return 1;
    if (names && *names) {
        char *copy = strdup(names), *save = NULL;
        for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
            egix_slice s;
            const egst_slice *e = egix_slice_parse(tok, &s) == 0 ? egst_find(&r, &s) : NULL;
            if (!e) {
                fprintf(stderr, "egdb_check: EGDB_CHECK_SLICES: %s is not a slice of %s\n", tok,
                        dir);
                return 1;
            }
            list[n++] = e;
        }
        free(copy);
    } else {
        for (size_t i = 0; i < r.n; i++)
            if (n == 0 || r.list[i]->size > list[0]->size)
                list[0] = r.list[i], n = 1;
    }
    for (size_t i = 0; i < n; i++)
        positions += list[i]->size;
    char cpu[256], first[EGIX_NAME_MAX];
    bench_cpu_model(cpu, sizeof cpu);
    egix_slice_name(&list[0]->slice, first, sizeof first);
    printf("egdb_check: %ld files of %s mapped in %.1f s; checking %zu slices (%s%s), %.3f G "
           "positions, %d threads; %s\n",
           mapped, dir, t_map, n, first, n > 1 ? ", ..." : "", (double)positions / 1e9, threads,
           cpu);

    if (getenv("EGDB_CHECK_HUGE") && copy_huge(list, n) != 0)
        return 1;
    double secs[MAX_ROUNDS];
    for (int k = 0; k < rounds; k++) {
        char err[1024];
        double t = bench_now();
        int rc =
            egvf_verify_slices(&r, list, n, threads, NULL, NULL, NULL, NULL, NULL, err, sizeof err);
        secs[k] = bench_now() - t;
        if (rc != 0) {
            fprintf(stderr, "egdb_check: the check failed: %s\n", err);
            return 1;
        }
        printf("  round %d: %.2f s, %.2f M positions a second\n", k + 1, secs[k],
               (double)positions / secs[k] / 1e6);
    }
    qsort(secs, (size_t)rounds, sizeof *secs, bench_cmp_double);
    double med = secs[rounds / 2];
    printf("egdb_check: median %.2f s, %.2f M positions a second\n", med,
           (double)positions / med / 1e6);
    free(list);
    egst_registry_free(&r);
    return 0;
}
