/*
 * verify.c - checks a database directory: every file's header and
 * checksum, then every position against its successors (seed 002's
 * verification phase): a win must have a move to a lost position, a loss
 * must have only moves to won positions (or none), a draw neither.
 *
 * The check is independent of how the builder reached its values: it
 * reads only the files and the rules. It cannot tell a draw from a win
 * that nobody found (a cycle of draws is self-consistent); that is what
 * the independent solver of the test suite is for.
 */
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "egdb/egdb.h"
#include "egdb/index.h"
#include "egdb/store.h"

/* ---- constants -------------------------------------------------------- */

#define CHUNK 16384

/* ---- types ------------------------------------------------------------ */

typedef struct verify_ctx {
    const egst_registry *reg;
    const egst_slice *e;
    _Atomic uint64_t next;
    uint64_t nchunks;
    _Atomic uint64_t first_bad; /* smallest bad index found, or UINT64_MAX */
    int bad_stored, bad_expected;
} verify_ctx;

/* ---- functions -------------------------------------------------------- */

/* The value the successors of p (Black to move) imply. */
static int
expected_value(const egst_registry *reg, const eng_pos *p)
{
    eng_movelist l;
    int n = eng_generate(p, &l, ENG_DUPS_MERGE);
    if (n <= 0)
        return EGDB_LOSS;
    int all_win = 1;
    for (int k = 0; k < n; k++) {
        eng_pos c;
        eng_make(p, &l.m[k], &c);
        int v = egst_probe(reg, &c);
        if (v == EGDB_LOSS)
            return EGDB_WIN;
        if (v != EGDB_WIN)
            all_win = 0;
    }
    return all_win ? EGDB_LOSS : EGDB_DRAW;
}

static void *
verify_worker(void *arg)
{
    verify_ctx *c = arg;
    for (;;) {
        uint64_t k = atomic_fetch_add(&c->next, 1);
        if (k >= c->nchunks)
            break;
        uint64_t b = k * CHUNK, e = b + CHUNK;
        if (e > c->e->size)
            e = c->e->size;
        if (b > atomic_load(&c->first_bad))
            break;
        for (uint64_t i = b; i < e; i++) {
            eng_pos p;
            egix_unindex(c->e->table, i, &p);
            int stored = egst_value(c->e, i), want = expected_value(c->reg, &p);
            if (stored != want) {
                /* Keep the smallest bad index, so the report is the same
                 * whatever the threads' timing. */
                uint64_t cur = atomic_load(&c->first_bad);
                while (i < cur && !atomic_compare_exchange_weak(&c->first_bad, &cur, i))
                    ;
                break;
            }
        }
    }
    return NULL;
}

static const char *
value_name(int v)
{
    return v == EGDB_WIN ? "win" : v == EGDB_LOSS ? "loss" : v == EGDB_DRAW ? "draw" : "unknown";
}

int
egdb_verify(const char *dir, int threads, egdb_progress_fn progress, void *arg, char *err,
            size_t errlen)
{
    egst_registry reg;
    if (egst_registry_init(&reg) != 0)
        return EGDB_ENOMEM;
    int rc = 0;
    uint64_t done = 0;
    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    /* Load (and checksum) everything first, smallest databases first. */
    int maxn = 0;
    for (int n = 1; n <= EGDB_MAX_PIECES && rc == 0; n++) {
        size_t k, present = 0;
        if (egix_slices(n, NULL, NULL, 0, &k) != 0)
            break;
        egix_slice *sl = malloc(k * sizeof *sl);
        if (!sl) {
            rc = EGDB_ENOMEM;
            break;
        }
        egix_slices(n, sl, NULL, k, &k);
        for (size_t i = 0; i < k && rc == 0; i++) {
            int r = egst_add_mapped(&reg, dir, &sl[i], 1, err, errlen);
            if (r == 0)
                present++;
            else if (r != EGDB_EMISSING)
                rc = r;
        }
        free(sl);
        if (rc == 0 && present > 0 && present < k) {
            snprintf(err, errlen, "%s: the %d-piece database is incomplete (%zu of %zu slices)",
                     dir, n, present, k);
            rc = EGDB_EMISSING;
        }
        if (present == 0)
            break;
        maxn = n;
    }
    if (rc == 0 && maxn == 0) {
        snprintf(err, errlen, "%s: no database files", dir);
        rc = EGDB_EMISSING;
    }
    uint64_t total = 0;
    for (size_t s = 0; s < reg.n; s++)
        total += reg.list[s]->size;
    for (size_t s = 0; s < reg.n && rc == 0; s++) {
        const egst_slice *e = reg.list[s];
        verify_ctx c;
        c.reg = &reg;
        c.e = e;
        atomic_init(&c.next, 0);
        atomic_init(&c.first_bad, UINT64_MAX);
        c.nchunks = (e->size + CHUNK - 1) / CHUNK;
        int nt = threads < 1 ? 1 : threads > 64 ? 64 : threads;
        if ((uint64_t)nt > c.nchunks)
            nt = (int)(c.nchunks ? c.nchunks : 1);
        pthread_t tid[64];
        int started = 0;
        for (int t = 1; t < nt; t++)
            if (pthread_create(&tid[started], NULL, verify_worker, &c) == 0)
                started++;
        verify_worker(&c);
        for (int t = 0; t < started; t++)
            pthread_join(tid[t], NULL);
        char name[EGIX_NAME_MAX];
        egix_slice_name(&e->slice, name, sizeof name);
        uint64_t bad = atomic_load(&c.first_bad);
        if (bad != UINT64_MAX) {
            eng_pos p;
            char fen[ENG_FEN_MAX];
            egix_unindex(e->table, bad, &p);
            eng_format_fen(&p, fen, sizeof fen);
            snprintf(err, errlen,
                     "slice %s, index %" PRIu64 " (%s): stored %s, successors say %s", name, bad,
                     fen, value_name(egst_value(e, bad)), value_name(expected_value(&reg, &p)));
            rc = EGDB_EVERIFY;
            break;
        }
        done += e->size;
        if (progress) {
            struct timespec t;
            clock_gettime(CLOCK_MONOTONIC, &t);
            egdb_progress pr;
            memset(&pr, 0, sizeof pr);
            pr.slice = name;
            pr.phase = "verify";
            pr.npieces = e->slice.nbk + e->slice.nwk + e->slice.nbm + e->slice.nwm;
            pr.pair_no = s + 1;
            pr.pair_count = reg.n;
            pr.resolved = e->size;
            pr.positions = e->size;
            pr.done_total = done;
            pr.todo_total = total;
            pr.elapsed = (double)(t.tv_sec - t0.tv_sec) + (double)(t.tv_nsec - t0.tv_nsec) * 1e-9;
            progress(&pr, arg);
        }
    }
    egst_registry_free(&reg);
    return rc;
}
