/*
 * partial_verify.c - egpt_verify (partial.h): every stored bound of the
 * partial files of a folder against the bounds of its moves.
 *
 * A position's value is the best of its moves' values negated, so with
 * true bounds on its successors (exact values of the complete databases,
 * the partial files' bounds, "unknown" for a move into no database) the
 * position's value lies in W = max over moves of -bound(successor), and
 * in LL when it has no move. A stored bound is justified when it holds W
 * (stored lo <= W's lo and stored hi >= W's hi); one that claims more
 * than its moves give is an error. The builder writes exactly W at its
 * fixed point, and a later, larger complete set only narrows W, so a file
 * built over fewer databases still passes. Like the complete files'
 * check (verify.c), this is local: bounds that support each other around
 * a cycle are not caught, which the builder's own fixed point and the
 * tests' independent retrograde analysis (tests/test_egdb_partial.c)
 * answer for.
 */
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "egdb/db.h"
#include "egdb/partial.h"
#include "egdb/run.h"

typedef struct pv_job {
    const egdb *db; /* complete and partial (db->partial: the stored bounds) */
    int scope;
    const egpt_slice_info *info;
    size_t n;
    atomic_size_t next;
    atomic_int failed;
    atomic_uint_fast64_t done, skipped;
    uint64_t total;
    pthread_mutex_t lock; /* err and progress */
    char *err;
    size_t errlen;
    int rc;
    egdb_progress_fn progress;
    void *arg;
    double t0;
} pv_job;

static void
pv_fail(pv_job *j, int rc, const char *msg)
{
    pthread_mutex_lock(&j->lock);
    if (j->rc == 0) {
        j->rc = rc;
        snprintf(j->err, j->errlen, "%s", msg);
    }
    atomic_store(&j->failed, 1);
    pthread_mutex_unlock(&j->lock);
}

/* The bound of a successor: exact from the complete databases, the
 * partial files', LW for a move into no database; < 0 on a probe error. */
static int
pv_child(const pv_job *j, const eng_pos *c)
{
    int b = egdb_bound(j->db, j->scope, c, 0);
    return b == EGDB_ENOTFOUND ? (int)ENG_LW : b;
}

/* Checks slice k; 0 or a failure recorded in j. */
static int
pv_slice(pv_job *j, size_t k)
{
    const egpt_slice_info *si = &j->info[k];
    egix_table *t;
    if (egix_table_create(&si->slice, &t) != 0) {
        pv_fail(j, EGDB_ENOMEM, "out of memory");
        return -1;
    }
    uint64_t size = egix_table_size(t), i = 0;
    char msg[512];
    int rc = 0;
    egix_cursor cur;
    egix_cursor_init(&cur);
    egix_seek(t, &cur, 0);
    if (egdb_scope_has(j->scope, &cur.pos)) {
        /* a complete file answers for the slice: its bounds are never read */
        atomic_fetch_add(&j->skipped, size);
        i = size;
    }
    for (; i < size && rc == 0; i++) {
        if ((i & 0xffff) == 0 && atomic_load(&j->failed))
            break;
        if (i > 0)
            egix_next(t, &cur);
        eng_pos p = cur.pos;
        p.stm = ENG_BLACK; /* every stored position: Black to move (partial.h) */
        int s = egpt_probe(j->db->partial, &p);
        eng_movelist l;
        int n = eng_generate(&p, &l, ENG_DUPS_MERGE), b = 0;
        eng_bound w = ENG_LL; /* no move: lost; LL is max's identity */
        for (int m = 0; m < n && b >= 0; m++) {
            eng_pos c;
            eng_make(&p, &l.m[m], &c);
            b = pv_child(j, &c);
            if (b >= 0)
                w = eng_bound_max(w, eng_bound_neg((eng_bound)b));
        }
        char fen[ENG_FEN_MAX];
        if (s < 0 || b < 0) {
            eng_format_fen(&p, fen, sizeof fen);
            snprintf(msg, sizeof msg, "slice %s, index %" PRIu64 " (%s): a probe failed: %s",
                     si->name, i, fen, egdb_strerror(s < 0 ? s : b));
            rc = (s < 0 ? s : b) == EGDB_ECORRUPT ? EGDB_ECORRUPT : EGDB_EIO;
        } else if (!eng_bound_valid(s) || eng_bound_meet((eng_bound)s, w) != w) {
            eng_format_fen(&p, fen, sizeof fen);
            snprintf(msg, sizeof msg,
                     "slice %s, index %" PRIu64 " (%s): stored %s, but its moves give only %s",
                     si->name, i, fen, eng_bound_valid(s) ? eng_bound_name((eng_bound)s) : "?",
                     eng_bound_name(w));
            rc = EGDB_EVERIFY;
        }
    }
    egix_table_destroy(t);
    if (rc != 0) {
        pv_fail(j, rc, msg);
        return -1;
    }
    uint64_t done = atomic_fetch_add(&j->done, si->positions) + si->positions;
    if (j->progress) {
        pthread_mutex_lock(&j->lock);
        egdb_progress pr = {.slice = "partial files", /* the step (cli: a line a tenth) */
                            .phase = "verify",
                            .npieces =
                                si->slice.nbk + si->slice.nwk + si->slice.nbm + si->slice.nwm,
                            .pair_no = k + 1,
                            .pair_count = j->n,
                            .resolved = done,
                            .positions = j->total,
                            .done_total = done,
                            .run_total = j->total,
                            .elapsed = egrun_now() - j->t0};
        j->progress(&pr, j->arg);
        pthread_mutex_unlock(&j->lock);
    }
    return 0;
}

static void *
pv_worker(void *arg)
{
    pv_job *j = arg;
    for (;;) {
        size_t k = atomic_fetch_add(&j->next, 1);
        if (k >= j->n || atomic_load(&j->failed) || pv_slice(j, k) != 0)
            break;
    }
    return NULL;
}

int
egpt_verify(const char *dir, int threads, egdb_progress_fn progress, void *arg,
            egpt_verify_stats *st, char *err, size_t errlen)
{
    memset(st, 0, sizeof *st);
    egpt_slice_info *info = NULL;
    size_t n = 0;
    int rc = egpt_list(dir, &info, &n, err, errlen);
    if (rc != 0)
        return rc;
    if (n == 0) {
        snprintf(err, errlen, "%s holds no partial database file (.pwl)", dir);
        free(info);
        return EGDB_EMISSING;
    }
    egdb *db = NULL;
    if ((rc = egdb_open(dir, 0, (size_t)256 << 20, &db, err, errlen)) != 0) {
        free(info);
        return rc;
    }
    /* the handle's own partial files (db.h): loaded and checked once */
    if (!db->partial) {
        snprintf(err, errlen, "%s: its partial files were not loaded", dir);
        egdb_close(db);
        free(info);
        return EGDB_EMISSING;
    }
    pv_job j;
    memset(&j, 0, sizeof j);
    j.db = db;
    j.scope = egdb_scope(db);
    j.info = info;
    j.n = n;
    j.err = err;
    j.errlen = errlen;
    j.progress = progress;
    j.arg = arg;
    j.t0 = egrun_now();
    for (size_t k = 0; k < n; k++)
        j.total += info[k].positions;
    pthread_mutex_init(&j.lock, NULL);
    if (threads < 1)
        threads = 1;
    if (threads > 64)
        threads = 64;
    pthread_t tid[64];
    int started = 0;
    for (; started < threads; started++)
        if (pthread_create(&tid[started], NULL, pv_worker, &j) != 0)
            break;
    if (started == 0)
        pv_worker(&j);
    for (int i = 0; i < started; i++)
        pthread_join(tid[i], NULL);
    pthread_mutex_destroy(&j.lock);
    st->slices = n;
    st->skipped = atomic_load(&j.skipped);
    st->positions = atomic_load(&j.done) - st->skipped;
    st->seconds = egrun_now() - j.t0;
    rc = j.rc;
    egdb_close(db);
    free(info);
    return rc;
}
