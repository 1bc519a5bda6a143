/*
 * worker.c - one solver process (manager.h, wrk_run): connects to the
 * manager, answers jobs on a solver thread, sends each proof whole, and
 * reconnects with backoff, resending results the manager did not
 * acknowledge.
 *
 * OWNS: one worker process's state (the wrk struct: its connection,
 *   its event loop, its solver thread, its store and databases).
 * CALLS: protocol.c (frames), peer.c (the token, printable text), the
 *   solvers (prover/: df-pn, alpha-beta, padm_gather) and egdb/.
 *   Never manager.c: the worker knows the manager only by its frames.
 */
#include <errno.h>
#include <limits.h>
#include <inttypes.h>
#include <netdb.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>

#include "egdb/egdb.h"
#include "prover/admit.h"
#include "manager/loop.h"
#include "manager/manager.h"
#include "manager/protocol.h"
#include "prover/prover.h"
#include "prover/search.h"

/* ---- constants -------------------------------------------------------- */

/* The least alpha-beta time of a job (ALPHA-BETA AFTER DF-PN): what
 * `checkers solve` gives its search that orders the queries. */
#define AB_MIN_S 0.2

/* ---- types ------------------------------------------------------------ */

typedef struct wrk {
    const wrk_opts *o;
    struct event_base *base;
    struct bufferevent *bev;
    struct event *tick, *notify, *sigint, *sigterm, *retry;
    int notify_fd[2];
    char host[256], port[16];
    char token[MGP_TOKEN_MAX + 1];
    egdb *db;
    int db_max, db_pieces;
    int st_noted; /* the databases' scope last noted in st (pst_scope_note) */
    pst_env *st;
    int st_pieces; /* the piece count of the default store open (-1: --store) */
    ab_ctx *ab;
    dfpn_ctx *dfpn; /* one df-pn solver and table for the worker's life */
    double backoff, last_rx, last_tx;
    int welcomed, exit_code, stopping;
    uint32_t hb_ms, silence_ms;

    /* the solver thread */
    pthread_t th;
    int busy, have_pending;
    int cancelled; /* the manager cancelled the running job: nothing is sent for it */
    mgp_job job, pending;
    volatile int stop;
    /* its result, owned by the main thread once notified */
    int have_result;
    mgp_result res;
    padm_items items;
    /* THE RECORDS A JOB SENDS: the claims of batches ACKed on this
     * connection, under acked_mu (the solver thread reads them while the
     * loop may take an ACK or a WELCOME). conn_gen counts WELCOMEs;
     * job_gen is the connection a running job came on, res_gen the
     * finished result's: only a result's ACK on the connection its job
     * came on says its records were admitted (a result resent to another
     * manager may be ACKed and dropped: a job not open in its proof). */
    padm_sent *acked;
    pthread_mutex_t acked_mu;
    uint32_t conn_gen, job_gen, res_gen;
    size_t res_gathered;   /* records of the result's batch gathered from the
                              store (beyond the writer's), for the log */
    double res_gather_s;   /* the time job_collect took, for the log */
    uint64_t res_ab_nodes; /* the job's alpha-beta: positions and seconds, */
    double res_ab_s;       /* for the log; -1 s: none (AN EXACT VALUE NEEDS NO SCORE) */
} wrk;

static void reopen_db(wrk *w);

/* ---- helpers ------------------------------------------------------------ */

static double
now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void logf_(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void
logf_(const char *fmt, ...)
{
    char who[32];
    snprintf(who, sizeof who, "worker[%d]", (int)getpid());
    va_list ap;
    va_start(ap, fmt);
    mgr_vlog(NULL, who, fmt, ap);
    va_end(ap);
}

static int
send_msg(wrk *w, const mgp_msg *m)
{
    if (!w->bev)
        return -1;
    uint32_t cnt = m->type == MGP_PROOF ? m->u.proof.count : 0;
    size_t cap = mgp_encoded_max(m->type, cnt);
    uint8_t *buf = malloc(cap);
    if (!buf)
        return -1;
    char err[256];
    long n = mgp_encode(m, buf, cap, err, sizeof err);
    if (n < 0) {
        logf_("cannot encode %s: %s", mgp_type_name(m->type), err);
        free(buf);
        return -1;
    }
    bufferevent_write(w->bev, buf, (size_t)n);
    free(buf);
    w->last_tx = now_s();
    return 0;
}

/* Sends the finished result: its proof in chunks, then RESULT. */
static void
send_result(wrk *w)
{
    if (!w->have_result || !w->welcomed)
        return;
    uint8_t *recs = malloc((size_t)MGP_PROOF_CHUNK * MGP_PROOF_REC);
    if (!recs)
        return;
    for (size_t i = 0; i < w->items.n; i += MGP_PROOF_CHUNK) {
        size_t cnt = w->items.n - i < MGP_PROOF_CHUNK ? w->items.n - i : MGP_PROOF_CHUNK;
        for (size_t j = 0; j < cnt; j++)
            mgp_proof_record(&w->items.v[i + j], recs + j * MGP_PROOF_REC);
        mgp_msg m = {.type = MGP_PROOF};
        m.u.proof.id = w->res.id;
        m.u.proof.count = (uint32_t)cnt;
        m.u.proof.records = recs;
        send_msg(w, &m);
    }
    free(recs);
    mgp_msg m = {.type = MGP_RESULT};
    m.u.result = w->res;
    send_msg(w, &m);
}

/* ---- the solver thread ------------------------------------------------------ */

/* A job's steps, in the order solve_thread takes them; each fills its
 * part of w->res. */

/* df-pn for the job's question, as it came, with 85% of the job's time
 * and its whole node limit (the question is given: no hint orders
 * anything). */
static void
job_dfpn(wrk *w, const mgp_job *j, int dbp, double budget)
{
    mgp_result *r = &w->res;
    prv_opts po = {.db = w->db,
                   .db_pieces = dbp,
                   .store = w->st,
                   .question = &j->q,
                   .time_limit = budget * 0.85 > 0.2 ? budget * 0.85 : 0.2,
                   .node_limit = j->node_limit,
                   .ctx = w->dfpn,
                   .tt_bytes = w->o->tt_bytes,
                   .ghi = w->o->ghi,
                   .stop = &w->stop};
    prv_result pr;
    char err[400] = ""; /* fits in a RESULT's message with its prefix */
    int rc = prv_solve(&j->pos, &po, &pr, err, sizeof err);
    r->nodes += pr.nodes;
    if (rc) {
        r->status = MGP_FAILED;
        snprintf(r->message, sizeof r->message, "solver: %s", err);
    } else {
        r->bound = pr.bound;
        r->status = pr.complete ? MGP_DONE : MGP_BUDGET;
    }
}

/* ALPHA-BETA AFTER DF-PN: a score for the tree (manager/tree.h, LEAF
 * NUMBERS, and the threshold h). It ran first, with 15% of the job's
 * time, whatever df-pn then needed: a king ending `solve` proves in
 * 0.5 s took 5-9 s as a job (issue 41), 4.5 s of it alpha-beta that
 * a settled question does not use. Now it gets 15% of the job's time
 * when df-pn used the job, and in proportion (15 to 85, at least
 * AB_MIN_S, as `solve` gives it) when df-pn ended sooner, never past
 * the job's end (but AB_MIN_S) when a proof's walk overran; with a node
 * limit, 15% of it and of the time as before, so that a job bounded by positions
 * gives the same answer and score on any machine, however loaded
 * (bench/leafnums.sh compares runs so). */
/*
 * AN EXACT VALUE NEEDS NO SCORE. When df-pn's answer gives the position's
 * exact value (a win, a loss or a draw proven, whatever the goal), the
 * tree's node is settled for every question: no threshold, leaf number
 * or next question reads its score again, and a result without one
 * (depth 0) leaves the node's score as it was (tree_graph.c). So no
 * alpha-beta runs, and the proof goes to the manager at once: it ran for
 * 15/85 of df-pn's time, after it, before the result was sent, so a root
 * proved in 33 s was sent 5.8 s later (issue 41: `prove` against `solve`
 * on W:W21,28,K32:BK19,K25; solve's own alpha-beta is 0.2 s, before
 * df-pn, to order its queries). A one-sided answer (at least a draw,
 * at most a draw) still gets its score: the node stays open for the other
 * question.
 */
static void
job_score(wrk *w, const mgp_job *j, int dbp, double budget, double t0)
{
    mgp_result *r = &w->res;
    w->res_ab_nodes = 0;
    w->res_ab_s = -1;
    if (eng_bound_is_exact(r->bound))
        return;
    double used = now_s() - t0, abt = used * 0.15 / 0.85;
    if (abt > budget - used) /* df-pn's proof walk may run past its share */
        abt = budget - used;
    if (j->node_limit) /* the node limit binds, whatever the machine */
        abt = budget * 0.15;
    ab_opts ao = {.db = w->db,
                  .db_pieces = dbp,
                  .time_limit = abt > budget * 0.15 ? budget * 0.15
                                : abt < AB_MIN_S    ? AB_MIN_S
                                                    : abt,
                  .node_limit = j->node_limit ? j->node_limit * 15 / 100 + 1 : 0,
                  .stop = &w->stop};
    ab_result ar;
    double a0 = now_s();
    if (w->ab && ab_search(w->ab, &j->pos, &ao, &ar) == 0) {
        r->score = ar.score;
        r->depth = (uint16_t)ar.depth;
        r->nodes += ar.nodes;
        w->res_ab_nodes = ar.nodes;
        w->res_ab_s = now_s() - a0;
    }
}

/*
 * THE RECORDS A JOB SENDS (prover/admit.h, WHAT A WORKER SENDS). The
 * records df-pn's writer produced for the job, and the stored records
 * that proof rests on which were not ACKed on this connection: the
 * manager's admission is the one check, so nothing here walks the proof
 * again (a checker walk of the whole proof here took seconds a job on a
 * million-record proof, issue 42). A solve that answered without leaving
 * its written proof (cannot happen with a store; kept as a safe path)
 * sends what the checker's walk of the store collects, as before.
 * The acknowledged claims are read on the solver thread while the main
 * thread may add to them only on an ACK of the previous result: solve
 * threads run one at a time, and an ACK for this job cannot come before
 * it is sent, so the two never touch the set at once (see MGP_ACK).
 */
static void
job_collect(wrk *w, const mgp_job *j)
{
    mgp_result *r = &w->res;
    char err[400] = "";
    double t0 = now_s();
    w->items.n = 0;
    w->res_gathered = 0;
    if (r->bound != ENG_LW) {
        const pst_item *wr;
        const eng_pos *rests;
        size_t nwr, nrests;
        int c;
        if (dfpn_last_proof(w->dfpn, &wr, &nwr, &rests, &nrests)) {
            pthread_mutex_lock(&w->acked_mu);
            c = padm_gather(w->st, w->db, &j->pos, r->bound, wr, nwr, rests, nrests, w->acked,
                            &w->items, err, sizeof err);
            pthread_mutex_unlock(&w->acked_mu);
            w->res_gathered = c ? 0 : w->items.n - nwr;
        } else {
            c = padm_collect(w->st, w->db, &j->pos, &w->items, err, sizeof err);
            w->res_gathered = c ? 0 : w->items.n;
        }
        if (c) {
            r->bound = ENG_LW;
            r->status = MGP_FAILED;
            w->items.n = 0;
            snprintf(r->message, sizeof r->message, "collecting the proof: %s", err);
        }
    }
    r->records = (uint32_t)w->items.n;
    w->res_gather_s = now_s() - t0;
}

/* The children's scores, for the manager to give them if it expands the
 * position (protocol.h, RESULT): its event loop runs no search. */
static void
job_child_scores(wrk *w, const mgp_job *j, int dbp)
{
    mgp_result *r = &w->res;
    r->nscores = 0;
    if (r->status == MGP_DONE || !w->ab || prv_stopped(&w->stop))
        return;
    eng_movelist ml;
    int n = eng_generate(&j->pos, &ml, ENG_DUPS_MERGE);
    if (n <= 0 || n > MGP_SCORES_MAX || n > MT_SCORES_MAX)
        return;
    for (int k = 0; k < n; k++) {
        eng_pos c;
        int depth;
        eng_make(&j->pos, &ml.m[k], &c);
        r->scores[k] = (int16_t)wrk_score(w->ab, w->db, dbp, &c, &depth);
    }
    r->nscores = (uint16_t)n;
}

/* One job on the solver thread: df-pn, alpha-beta, the proof gathered,
 * the children's scores; then the main loop is told through the socket
 * pair (w->notify_fd), which sends the result. */
static void *
solve_thread(void *arg)
{
    wrk *w = arg;
    mgp_job j = w->job;
    double t0 = now_s(), budget = j.time_ms / 1000.0;
    mgp_result *r = &w->res;
    memset(r, 0, sizeof *r);
    r->id = j.id;
    r->bound = ENG_LW;
    r->status = MGP_BUDGET;
    int dbp = w->db ? w->db_pieces : 0;
    if (w->st && dbp && w->st_noted != dbp) {
        /* the store says which databases its proofs rest on (store.h,
         * THE DATABASES' SCOPE), so that a check with fewer tells why */
        char e[256];
        if (pst_scope_note(w->st, dbp, e, sizeof e) == 0)
            w->st_noted = dbp;
        else
            logf_("proof store: %s", e);
    }
    job_dfpn(w, &j, dbp, budget);
    job_score(w, &j, dbp, budget, t0);
    job_collect(w, &j);
    job_child_scores(w, &j, dbp);
    r->ms = (uint32_t)((now_s() - t0) * 1000);
    char one = 1;
    /* a socketpair: MSG_NOSIGNAL, so that a loop already gone costs no
     * SIGPIPE (manager/loop.h) */
    if (send(w->notify_fd[1], &one, 1, MSG_NOSIGNAL) < 0) {
        /* the main loop will never learn of it: nothing else to do */
    }
    return NULL;
}

static void
start_job(wrk *w, const mgp_job *j)
{
    if (w->busy) {
        /* the manager moved on (lease over, or cancelled): finish early */
        w->pending = *j;
        w->have_pending = 1;
        prv_stop_set(&w->stop, 1);
        return;
    }
    w->job = *j;
    w->job_gen = w->conn_gen;
    prv_stop_set(&w->stop, 0);
    w->cancelled = 0;
    w->busy = 1;
    char fen[ENG_FEN_MAX];
    eng_format_fen(&j->pos, fen, sizeof fen);
    logf_("job %" PRIu64 ": %s %s %s, %u ms", j->id, fen,
          j->q.attacker == ENG_BLACK ? "Black" : "White",
          j->q.target == ENG_WIN ? "wins?" : "draws?", j->time_ms);
    if (pthread_create(&w->th, NULL, solve_thread, w)) {
        logf_("cannot start the solver thread");
        w->busy = 0;
    }
}

static void
on_notify(evutil_socket_t fd, short what, void *arg)
{
    (void)what;
    wrk *w = arg;
    char buf[16];
    if (read(fd, buf, sizeof buf) <= 0)
        return;
    pthread_join(w->th, NULL);
    w->busy = 0;
    w->have_result = 1;
    w->res_gen = w->job_gen;
    reopen_db(w);
    char ab[96];
    if (w->res_ab_s < 0)
        snprintf(ab, sizeof ab, "no alpha-beta");
    else
        snprintf(ab, sizeof ab, "alpha-beta %" PRIu64 " nodes in %.0f ms", w->res_ab_nodes,
                 w->res_ab_s * 1000);
    logf_("job %" PRIu64 ": %s (%s), %" PRIu64 " nodes, %u ms, %u records (%zu of them "
          "gathered from the store, in %.0f ms), %s%s%s",
          w->res.id, prv_bound_word(w->res.bound),
          w->res.status == MGP_DONE     ? "settled"
          : w->res.status == MGP_BUDGET ? "budget"
                                        : "failed",
          w->res.nodes, w->res.ms, w->res.records, w->res_gathered, w->res_gather_s * 1000, ab,
          w->res.message[0] ? ": " : "", w->res.message);
    /* a job the manager cancelled, or moved on from, is answered with
     * nothing (protocol.h, CANCEL): its lease is over and its records
     * would be dropped */
    if (w->cancelled || (prv_stopped(&w->stop) && w->have_pending)) {
        if (w->cancelled)
            logf_("job %" PRIu64 ": cancelled by the manager, nothing sent", w->res.id);
        w->have_result = 0;
        w->items.n = 0;
    } else {
        send_result(w);
    }
    if (w->have_pending) {
        w->have_pending = 0;
        start_job(w, &w->pending);
    }
}

/* ---- the connection ------------------------------------------------------------ */

static void connect_now(wrk *w);

static void
schedule_retry(wrk *w)
{
    if (w->stopping)
        return;
    if (w->o->once) {
        event_base_loopexit(w->base, NULL);
        return;
    }
    struct timeval tv = {(long)w->backoff, (long)((w->backoff - (long)w->backoff) * 1e6)};
    evtimer_add(w->retry, &tv);
    w->backoff = w->backoff * 2 > 30 ? 30 : w->backoff * 2;
}

static void
drop(wrk *w, const char *why)
{
    if (w->bev) {
        logf_("disconnected from %s:%s: %s", w->host, w->port, why);
        bufferevent_free(w->bev);
        w->bev = NULL;
    }
    w->welcomed = 0;
    schedule_retry(w);
}

/* The databases opened to exactly the proof's piece count: the proof
 * walk and the checker both take every position the open databases cover
 * as a leaf, so a worker with more pieces would write proofs whose leaves
 * the manager's checker cannot value. */
static void
reopen_db(wrk *w)
{
    if (!w->db || w->busy || egdb_scope(w->db) == w->db_pieces)
        return;
    egdb *e;
    char err[512];
    if (egdb_open(w->o->db_dir, w->db_pieces, w->o->cache_bytes, &e, err, sizeof err)) {
        char name[48];
        egdb_scope_name(w->db_pieces, name, sizeof name);
        logf_("cannot open the databases %s: %s", name, err);
        return;
    }
    egdb_close(w->db);
    w->db = e;
}

/*
 * THE DEFAULT STORE
 *   Without --store, a worker's proven-node store lives beside its
 *   databases, one per host and piece count:
 *   <db>/worker-store-<host>-<N>p (./worker-store-<host>-<N>p without
 *   --db, or when the databases' folder cannot be written). So it lasts
 *   across jobs, worker restarts and manager restarts, and the workers of
 *   one host share it (LMDB is made for many processes). The host is in
 *   the name because a databases' folder shared over NFS must not hold
 *   one LMDB file written by several machines. The piece count is in it
 *   because a record proved with N-piece databases may rest on database
 *   leaves that a proof with fewer pieces cannot check: such records
 *   would make its jobs fail. It is opened, or switched, when a WELCOME
 *   names the proof's piece count.
 */
static int
open_default_store(wrk *w)
{
    if (w->st_pieces < 0 || (w->st && w->st_pieces == w->db_pieces) || w->busy)
        return 0;
    char hn[64] = "host", path[PATH_MAX], err[512];
    gethostname(hn, sizeof hn - 1);
    for (char *c = hn; *c; c++)
        if (*c == '/')
            *c = '_';
    pst_env *st = NULL;
    int rc = -1;
    if (w->o->db_dir) {
        snprintf(path, sizeof path, "%s/worker-store-%s-%dp", w->o->db_dir, hn, w->db_pieces);
        rc = pst_open(path, 0, &st, err, sizeof err);
        if (rc)
            logf_("store %s: %s; using the current folder", path, err);
    }
    if (rc) {
        snprintf(path, sizeof path, "worker-store-%s-%dp", hn, w->db_pieces);
        rc = pst_open(path, 0, &st, err, sizeof err);
    }
    if (rc) {
        logf_("store %s: %s", path, err);
        w->exit_code = rc == PST_ECORRUPT || rc == PST_EVERSION ? 3 : 1;
        w->stopping = 1;
        event_base_loopexit(w->base, NULL);
        return -1;
    }
    if (w->st)
        pst_close(w->st);
    w->st = st;
    w->st_noted = 0;
    w->st_pieces = w->db_pieces;
    logf_("proof store %s", path);
    return 0;
}

static void
handle(wrk *w, const mgp_msg *m)
{
    switch (m->type) {
    case MGP_WELCOME:
        w->welcomed = 1;
        w->backoff = 0.5;
        w->hb_ms = m->u.welcome.heartbeat_ms ? m->u.welcome.heartbeat_ms : MGR_HEARTBEAT_MS;
        w->silence_ms = m->u.welcome.silence_ms ? m->u.welcome.silence_ms : MGR_SILENCE_MS;
        w->db_pieces = m->u.welcome.db_pieces;
        /* a new connection: its manager may be another proof's, whose
         * store holds none of the claims ACKed before */
        w->conn_gen++;
        pthread_mutex_lock(&w->acked_mu);
        padm_sent_clear(w->acked);
        pthread_mutex_unlock(&w->acked_mu);
        reopen_db(w);
        if (open_default_store(w))
            break;
        char scope[48];
        egdb_scope_name(w->db_pieces, scope, sizeof scope);
        logf_("connected to %s:%s as worker %u (databases: %s pieces; repetitions: --ghi %s; "
              "df-pn table %zu MB, up to %zu MB more for the proven positions it gives up)",
              w->host, w->port, m->u.welcome.worker_id, scope, prv_ghi_word(w->o->ghi),
              w->o->tt_bytes >> 20, w->o->tt_kept_bytes >> 20);
        send_result(w); /* one the previous manager never acknowledged */
        break;
    case MGP_REJECT: {
        char why[sizeof m->u.reason * 4];
        mgr_printable(m->u.reason, why, sizeof why);
        logf_("refused by the manager: %s", why);
        /* A REJECT answers the HELLO (protocol.h): its version, its token
         * or its databases, none of which a retry changes. So a refusal
         * before WELCOME stops the worker; the decision rests on where it
         * came, never on the reason's words. */
        if (!w->welcomed) {
            w->exit_code = 2;
            w->stopping = 1;
            event_base_loopexit(w->base, NULL);
        }
        break;
    }
    case MGP_JOB:
        start_job(w, &m->u.job);
        break;
    case MGP_ACK:
        if (w->have_result && m->u.id == w->res.id) {
            /* admitted: its records are the manager's now, and a later
             * proof that rests on them need not send them again (a
             * failed set costs only records sent twice) */
            if (w->res_gen == w->conn_gen) {
                pthread_mutex_lock(&w->acked_mu);
                padm_sent_add(w->acked, w->items.v, w->items.n);
                pthread_mutex_unlock(&w->acked_mu);
            }
            w->have_result = 0;
            w->items.n = 0;
        }
        break;
    case MGP_CANCEL:
        if (w->busy && w->job.id == m->u.id) {
            w->cancelled = 1;
            prv_stop_set(&w->stop, 1);
        } else if (w->have_result && w->res.id == m->u.id) {
            w->have_result = 0; /* answered, not yet acknowledged: not resent */
            w->items.n = 0;
        }
        break;
    case MGP_HEARTBEAT:
        break;
    default:
        logf_("unexpected %s from the manager (ignored)", mgp_type_name(m->type));
        break;
    }
}

static void
on_read(struct bufferevent *bev, void *arg)
{
    wrk *w = arg;
    struct evbuffer *in = bufferevent_get_input(bev);
    for (;;) {
        size_t len = evbuffer_get_length(in);
        if (len < MGP_HDR)
            return;
        uint8_t *hdr = evbuffer_pullup(in, MGP_HDR);
        uint32_t plen = (uint32_t)hdr[0] | (uint32_t)hdr[1] << 8 | (uint32_t)hdr[2] << 16 |
                        (uint32_t)hdr[3] << 24;
        char err[256];
        if (plen > MGP_FRAME_MAX) {
            drop(w, "the manager sent an oversized frame");
            return;
        }
        if (len < MGP_HDR + plen)
            return;
        uint8_t *buf = evbuffer_pullup(in, MGP_HDR + plen);
        mgp_msg m;
        if (mgp_decode(buf, MGP_HDR + plen, &m, err, sizeof err)) {
            drop(w, err);
            return;
        }
        w->last_rx = now_s();
        handle(w, &m);
        if (!w->bev)
            return;
        evbuffer_drain(in, MGP_HDR + plen);
    }
}

static void
on_event(struct bufferevent *bev, short what, void *arg)
{
    (void)bev;
    wrk *w = arg;
    if (what & BEV_EVENT_CONNECTED) {
        w->last_rx = now_s();
        mgp_msg m = {.type = MGP_HELLO};
        m.u.hello.magic = MGP_MAGIC;
        m.u.hello.version = MGP_VERSION;
        m.u.hello.db_pieces = (uint16_t)w->db_max;
        m.u.hello.pid = (uint32_t)getpid();
        snprintf(m.u.hello.token, sizeof m.u.hello.token, "%s", w->token);
        char hn[64] = "?";
        gethostname(hn, sizeof hn - 1);
        snprintf(m.u.hello.name, sizeof m.u.hello.name, "%s:%d", hn, (int)getpid());
        send_msg(w, &m);
        return;
    }
    if (what & (BEV_EVENT_EOF | BEV_EVENT_ERROR))
        drop(w, what & BEV_EVENT_EOF ? "closed by the manager"
                                     : evutil_socket_error_to_string(EVUTIL_SOCKET_ERROR()));
}

static void
connect_now(wrk *w)
{
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM}, *ai = NULL;
    int g = getaddrinfo(w->host, w->port, &hints, &ai);
    if (g || !ai) {
        logf_("cannot resolve %s: %s", w->host, gai_strerror(g));
        schedule_retry(w);
        return;
    }
    w->bev = bufferevent_socket_new(w->base, -1, BEV_OPT_CLOSE_ON_FREE);
    bufferevent_setcb(w->bev, on_read, NULL, on_event, w);
    bufferevent_enable(w->bev, EV_READ | EV_WRITE);
    if (bufferevent_socket_connect(w->bev, ai->ai_addr, (int)ai->ai_addrlen)) {
        freeaddrinfo(ai);
        bufferevent_free(w->bev);
        w->bev = NULL;
        schedule_retry(w);
        return;
    }
    freeaddrinfo(ai);
}

static void
on_retry(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    connect_now(arg);
}

static void
on_tick(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    wrk *w = arg;
    if (w->o->die_with_parent && getppid() == 1) {
        w->stopping = 1;
        prv_stop_set(&w->stop, 1);
        event_base_loopexit(w->base, NULL);
        return;
    }
    if (!w->bev || !w->welcomed)
        return;
    double t = now_s();
    if ((t - w->last_rx) * 1000 > w->silence_ms) {
        drop(w, "the manager went silent");
        return;
    }
    if ((t - w->last_tx) * 1000 >= w->hb_ms) {
        mgp_msg m = {.type = MGP_HEARTBEAT};
        m.u.time = (uint64_t)(t * 1000);
        send_msg(w, &m);
    }
}

static void
on_signal(evutil_socket_t sig, short what, void *arg)
{
    (void)what;
    wrk *w = arg;
    logf_("signal %d: stopping", (int)sig);
    w->stopping = 1;
    prv_stop_set(&w->stop, 1);
    event_base_loopexit(w->base, NULL);
}

int
wrk_score(ab_ctx *ab, const egdb *db, int db_pieces, const eng_pos *p, int *depth)
{
    ab_opts so = {.db = db,
                  .db_pieces = db_pieces,
                  .max_depth = MT_SCORE_DEPTH,
                  .node_limit = MT_SCORE_NODES};
    ab_result sr;
    int s;
    if (ab && ab_search(ab, p, &so, &sr) == 0) {
        s = sr.score;
        *depth = sr.depth > 0 ? sr.depth : 1; /* searched: never taken for static */
    } else {
        s = ab_eval(p);
        *depth = 0;
    }
    return s > 32000 ? 32000 : s < -32000 ? -32000 : s;
}

/* The batch and the acknowledged claims (THE RECORDS A JOB SENDS), freed
 * once the solver thread is joined. */
static void
batch_free(wrk *w)
{
    padm_items_free(&w->items);
    padm_sent_free(w->acked);
    pthread_mutex_destroy(&w->acked_mu);
}

int
wrk_run(const wrk_opts *o)
{
    wrk w;
    memset(&w, 0, sizeof w);
    w.o = o;
    w.backoff = 0.5;
    w.hb_ms = MGR_HEARTBEAT_MS;
    w.silence_ms = MGR_SILENCE_MS;
    char err[512];
    if (o->die_with_parent)
        prctl(PR_SET_PDEATHSIG, SIGTERM);
    const char *colon = strrchr(o->connect, ':');
    if (!colon || colon == o->connect || !colon[1] || strlen(colon + 1) >= sizeof w.port ||
        (size_t)(colon - o->connect) >= sizeof w.host) {
        fprintf(stderr, "checkers worker: bad --connect '%s' (expected HOST:PORT)\n", o->connect);
        return 2;
    }
    memcpy(w.host, o->connect, (size_t)(colon - o->connect));
    snprintf(w.port, sizeof w.port, "%s", colon + 1);
    if (w.host[0] == '[' && w.host[strlen(w.host) - 1] == ']') {
        memmove(w.host, w.host + 1, strlen(w.host));
        w.host[strlen(w.host) - 1] = 0;
    }
    if (o->token_file && mgr_read_token(o->token_file, w.token, sizeof w.token, err, sizeof err)) {
        fprintf(stderr, "checkers worker: %s\n", err);
        return 2;
    }
    if (o->db_dir) {
        int rc = egdb_open(o->db_dir, 0, o->cache_bytes, &w.db, err, sizeof err);
        if (rc) {
            fprintf(stderr, "checkers worker: databases %s: %s\n", o->db_dir, err);
            return rc == EGDB_ECORRUPT ? 3 : 2;
        }
        w.db_max = w.db_pieces = egdb_scope(w.db); /* counts and whole splits */
    }
    /* --store: that store, for every proof; else the default, opened at
     * WELCOME (THE DEFAULT STORE) */
    w.st_pieces = 0;
    if (o->store) {
        w.st_pieces = -1;
        int rc = pst_open(o->store, 0, &w.st, err, sizeof err);
        if (rc) {
            fprintf(stderr, "checkers worker: store %s: %s\n", o->store, err);
            egdb_close(w.db);
            return rc == PST_ECORRUPT || rc == PST_EVERSION ? 3 : 1;
        }
    }
    /* the alpha-beta table: a quarter of the df-pn table's size (--tt),
     * at least 16 MB */
    size_t ab_bytes = o->tt_bytes / 4 > ((size_t)16 << 20) ? o->tt_bytes / 4 : (size_t)16 << 20;
    ab_new(ab_bytes, &w.ab);
    if (padm_sent_new(&w.acked) || pthread_mutex_init(&w.acked_mu, NULL)) {
        fprintf(stderr, "checkers worker: out of memory\n");
        return 1;
    }
    if (dfpn_new(o->tt_bytes, &w.dfpn)) {
        fprintf(stderr, "checkers worker: out of memory for a %zu-byte df-pn table\n", o->tt_bytes);
        return 1;
    }
    dfpn_set_kept(w.dfpn, o->tt_kept_bytes);
    if (socketpair(AF_UNIX, SOCK_STREAM, 0, w.notify_fd)) {
        fprintf(stderr, "checkers worker: socketpair: %s\n", strerror(errno));
        return 1;
    }
    /* SIGPIPE is blocked for the loop's thread while it runs, not ignored
     * for the process (mgr_loop_run, manager/loop.h) */
    w.base = event_base_new();
    w.notify = event_new(w.base, w.notify_fd[0], EV_READ | EV_PERSIST, on_notify, &w);
    w.tick = event_new(w.base, -1, EV_PERSIST, on_tick, &w);
    w.retry = evtimer_new(w.base, on_retry, &w);
    w.sigint = evsignal_new(w.base, SIGINT, on_signal, &w);
    w.sigterm = evsignal_new(w.base, SIGTERM, on_signal, &w);
    struct timeval sec = {0, 500000};
    event_add(w.notify, NULL);
    event_add(w.tick, &sec);
    event_add(w.sigint, NULL);
    event_add(w.sigterm, NULL);
    connect_now(&w);
    mgr_loop_run(w.base);
    if (w.busy) {
        prv_stop_set(&w.stop, 1);
        pthread_join(w.th, NULL);
    }
    if (w.bev)
        bufferevent_free(w.bev);
    event_free(w.notify);
    event_free(w.tick);
    event_free(w.retry);
    event_free(w.sigint);
    event_free(w.sigterm);
    event_base_free(w.base);
    close(w.notify_fd[0]);
    close(w.notify_fd[1]);
    batch_free(&w);
    ab_free(w.ab);
    dfpn_free(w.dfpn);
    if (w.st)
        pst_close(w.st);
    egdb_close(w.db);
    return w.exit_code;
}
