/*
 * partial_check.c - partial-information bounds against complete
 * databases built later (seed 000's check of its bounds): every bound of
 * the partial files of PARTIAL_DIR whose material the complete databases
 * of COMPLETE_DIR hold must contain the true value, and an exact bound
 * must equal it.
 *
 *   build/bench/partial_check PARTIAL_DIR COMPLETE_DIR [STRIDE]
 *
 * Takes position i of each such partial slice for i = 0, STRIDE,
 * 2 STRIDE, ... (default 1: all), each with Black and with White to move
 * (the White-to-move form lies in the twin slice of both), the bound
 * through egpt_probe and the value through egdb_probe (compressed files
 * and their block cache, 256 MB). Two threads. Prints, by material, the
 * positions checked, the shares of exact, half and unknown bounds, and
 * the violations (the first one's FEN); exit status 1 if any.
 *
 * The use it was written for: the 8-piece men-only 4v4 material 0044
 * built as a partial database before the complete 4v4 split existed
 * (results/partial-9-10.md), checked once the split was built.
 */
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/bench_util.h"
#include "egdb/egdb.h"
#include "egdb/index.h"
#include "egdb/partial.h"
#include "egdb/partial_int.h"
#include "engine/value.h"

/* ---- types -------------------------------------------------------------- */

typedef struct tally {
    uint64_t probes, exact, half, unknown, bad;
} tally;

typedef struct ctx {
    const egpt_db *pdb;
    egdb *cdb;
    const pslice **sl; /* the partial slices checked */
    size_t ns;
    uint64_t stride;
    _Atomic size_t next; /* next slice */
    tally *t;            /* per slice */
    pthread_mutex_t lock;
    char bad[256];
} ctx;

/* ---- helpers ------------------------------------------------------------ */

static int
truth_of(int v)
{
    return v == EGDB_WIN ? ENG_WIN : v == EGDB_LOSS ? ENG_LOSS : v == EGDB_DRAW ? ENG_DRAW : 9;
}

static int
same_material(const egix_slice *a, const egix_slice *b)
{
    return a->nbk == b->nbk && a->nwk == b->nwk && a->nbm == b->nbm && a->nwm == b->nwm;
}

static void *
worker(void *arg)
{
    ctx *c = arg;
    for (;;) {
        size_t s = atomic_fetch_add(&c->next, 1);
        if (s >= c->ns)
            break;
        const pslice *e = c->sl[s];
        tally t = {0};
        for (uint64_t i = 0; i < e->size; i += c->stride) {
            eng_pos p;
            egix_unindex(e->table, i, &p);
            for (int side = 0; side < 2; side++) {
                p.stm = side ? ENG_WHITE : ENG_BLACK;
                int bd = egpt_probe(c->pdb, &p);
                int v = truth_of(egdb_probe(c->cdb, &p));
                t.probes++;
                int ok = eng_bound_valid(bd) && v != 9 && eng_bound_contains((eng_bound)bd, v);
                int ex = ok && eng_bound_is_exact((eng_bound)bd);
                if (ok && ex && eng_bound_lo((eng_bound)bd) != v)
                    ok = 0;
                if (!ok) {
                    t.bad++;
                    pthread_mutex_lock(&c->lock);
                    if (!c->bad[0]) {
                        char fen[ENG_FEN_MAX];
                        eng_format_fen(&p, fen, sizeof fen);
                        snprintf(c->bad, sizeof c->bad, "%s: bound %s, true value %d (probe %d)",
                                 fen, eng_bound_valid(bd) ? eng_bound_name((eng_bound)bd) : "?", v,
                                 bd);
                    }
                    pthread_mutex_unlock(&c->lock);
                    continue;
                }
                if (ex)
                    t.exact++;
                else if (bd == ENG_LW)
                    t.unknown++;
                else
                    t.half++;
            }
        }
        c->t[s] = t;
    }
    return NULL;
}

int
main(int argc, char **argv)
{
    if (argc < 3) { /* `make bench` runs every bench without arguments */
        printf("usage: partial_check PARTIAL_DIR COMPLETE_DIR [STRIDE]; skipped\n");
        return 0;
    }
    uint64_t stride = argc > 3 ? strtoull(argv[3], NULL, 10) : 1;
    if (stride < 1)
        stride = 1;
    bench_machine();
    char err[1024];
    ctx c;
    memset(&c, 0, sizeof c);
    pthread_mutex_init(&c.lock, NULL);
    c.stride = stride;
    egpt_db *pdb;
    if (egpt_open(argv[1], 0, &pdb, err, sizeof err) != 0 ||
        egdb_open(argv[2], EGDB_OPEN_COMPLETE_ONLY, (size_t)256 << 20, &c.cdb, err, sizeof err) !=
            0) {
        fprintf(stderr, "%s\n", err);
        return 1;
    }
    c.pdb = pdb;
    c.sl = malloc(pdb->n * sizeof *c.sl);
    c.t = calloc(pdb->n, sizeof *c.t);
    for (size_t i = 0; i < pdb->n; i++) {
        eng_pos p;
        egix_unindex(pdb->list[i]->table, 0, &p);
        if (egdb_covers(c.cdb, &p))
            c.sl[c.ns++] = pdb->list[i];
    }
    char scope[64];
    egdb_scope_name(egdb_scope(c.cdb), scope, sizeof scope);
    printf("%s: %zu partial slices, %zu of them in the complete databases of %s (scope %s); "
           "every %" PRIu64 "th position, both sides to move\n",
           argv[1], pdb->n, c.ns, argv[2], scope, stride);
    double t0 = bench_now();
    pthread_t th;
    int started = pthread_create(&th, NULL, worker, &c) == 0;
    worker(&c);
    if (started)
        pthread_join(th, NULL);
    /* By material (a slice's first four name characters). */
    tally all = {0};
    for (size_t i = 0; i < c.ns;) {
        tally m = {0};
        size_t j = i;
        for (; j < c.ns && same_material(&c.sl[j]->slice, &c.sl[i]->slice); j++) {
            m.probes += c.t[j].probes;
            m.exact += c.t[j].exact;
            m.half += c.t[j].half;
            m.unknown += c.t[j].unknown;
            m.bad += c.t[j].bad;
        }
        char name[EGIX_NAME_MAX];
        egix_slice_name(&c.sl[i]->slice, name, sizeof name);
        double n = (double)(m.probes ? m.probes : 1);
        printf("material %.4s: %" PRIu64 " probes, exact %.2f%%, half %.2f%%, unknown %.2f%%, "
               "violations %" PRIu64 "\n",
               name, m.probes, 100.0 * m.exact / n, 100.0 * m.half / n, 100.0 * m.unknown / n,
               m.bad);
        all.probes += m.probes;
        all.bad += m.bad;
        i = j;
    }
    printf("%" PRIu64 " probes in %.1f s: %" PRIu64 " bounds not containing the true value or "
           "exact and wrong%s%s\n",
           all.probes, bench_now() - t0, all.bad, c.bad[0] ? "; first: " : "", c.bad);
    egdb_close(c.cdb);
    egpt_close(pdb);
    return all.bad ? 1 : 0;
}
