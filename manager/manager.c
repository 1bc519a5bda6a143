/*
 * manager.c - the proof-tree manager's event loop (manager.h is the
 * manual): workers connect, receive jobs from the tree, send results,
 * which are committed before they are acknowledged.
 *
 * OWNS: the run (struct mgr, mgr_internal.h): the event loop, the
 *   workers' listener and connections, the local worker processes, the
 *   state directory's lock and token, the run's counters.
 * CALLS: the tree (tree.h: mt_*), the result writer (writer.h: it runs
 *   mt_result_in on its thread), protocol.c (frames), peer.c (the
 *   token file, printable text), the proof store and databases to open
 *   them. The status pages only through mgr_opts.pages (manager.h,
 *   STATUS PAGES): nothing of web/ is linked here, and nothing in
 *   manager/ calls back into this file.
 *
 * mgr_run's steps, in order: run_open (the state), run_start (the loop,
 * the port, the pages, the local workers), the loop itself, then
 * run_wind_down and run_stop.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <malloc.h>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/listener.h>
#include <event2/util.h>

#include "manager/loop.h"
#include "manager/mgr_internal.h"
#include "prover/prover.h"

/* ---- helpers ------------------------------------------------------------ */

static double
mgr_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void mlog(mgr *m, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void
mlog(mgr *m, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    mgr_vlog(m->tty ? "\r\033[K" : NULL, "manager", fmt, ap);
    va_end(ap);
}

/* Jobs answered in the last minute (MGR_RATE_WINDOW). */
static double
mgr_jobs_per_minute(const mgr *m, double now)
{
    unsigned n = m->done_n < 256 ? m->done_n : 256, c = 0;
    for (unsigned i = 0; i < n; i++)
        if (now - m->done_at[i] <= MGR_RATE_WINDOW)
            c++;
    double span = now - m->start < MGR_RATE_WINDOW ? now - m->start : MGR_RATE_WINDOW;
    return span > 1 ? c * 60.0 / span : c * 60.0;
}

/* What the status pages show of the run (manager.h); the tree's own
 * figures they read from the tree. The stored total of seconds is the
 * tree's, which on_tick brings up to date every ten seconds: the pages
 * add unsaved_s to it. */
void
mgr_live_get(const mgr *m, mgr_live *out)
{
    double t = mgr_now();
    out->run_s = t - m->start;
    out->per_minute = mgr_jobs_per_minute(m, t);
    out->nworkers = 0;
    for (const mgr_conn *c = m->conns; c; c = c->next) {
        if (c->welcomed != 1)
            continue;
        if (out->nworkers < MGR_LIVE_WORKERS) {
            mgr_worker_view *k = &out->workers[out->nworkers];
            k->id = c->id;
            snprintf(k->name, sizeof k->name, "%s", c->name);
            snprintf(k->addr, sizeof k->addr, "%s", c->addr);
            k->has_job = c->has_job;
            if (c->has_job) {
                k->job_id = c->job.id;
                k->job_pos = c->job.pos;
                k->job_s = t - c->job_start;
                k->job_budget_ms = c->job.time_ms;
            }
            k->jobs_done = c->jobs_done;
            k->connected_s = t - c->since;
        }
        out->nworkers++;
    }
    out->unsaved_s = t - m->last_save;
}

static int
send_msg(mgr_conn *c, const mgp_msg *msg)
{
    uint8_t buf[2048];
    char err[256];
    long n = mgp_encode(msg, buf, sizeof buf, err, sizeof err);
    if (n < 0) {
        mlog(c->m, "cannot encode %s for %s: %s", mgp_type_name(msg->type), c->name, err);
        return -1;
    }
    bufferevent_write(c->bev, buf, (size_t)n);
    c->last_tx = mgr_now();
    return 0;
}

static void finish(mgr *m, int code, const char *why);
static void local_joined(mgr *m, uint32_t pid);

/* A job back to the pool; a tree that fails doing it stops the run.
 * While a result is on the writer the tree may not change (writer.h):
 * the release waits in m->held for the result to be handed back. */
static void
release(mgr *m, uint64_t id)
{
    if (mw_busy(m->writer)) {
        if (m->nheld == m->held_cap) {
            size_t cap = m->held_cap ? 2 * m->held_cap : 16;
            uint64_t *v = realloc(m->held, cap * sizeof *v);
            if (!v) { /* the jobs stay live: the run's end returns them all */
                mlog(m, "out of memory holding job %" PRIu64 "'s release", id);
                return;
            }
            m->held = v;
            m->held_cap = cap;
        }
        m->held[m->nheld++] = id;
        return;
    }
    char err[512];
    int rc = mt_release(m->tree, id, err, sizeof err);
    if (rc) {
        mlog(m, "the tree failed: %s", err);
        finish(m, rc == MT_ENOSPC ? MGR_STOPPED : MGR_DAMAGED, err);
    }
}

static void
conn_close(mgr_conn *c, const char *why)
{
    mgr *m = c->m;
    if (why)
        mlog(m, "connection %u (%s, %s) closed: %s", c->id, c->name[0] ? c->name : "no HELLO",
             c->addr, why);
    if (c->has_job)
        release(m, c->job.id);
    if (m->wconn == c) /* its result goes on without it: nobody to ACK */
        m->wconn = NULL;
    for (mgr_conn **p = &m->conns; *p; p = &(*p)->next)
        if (*p == c) {
            *p = c->next;
            break;
        }
    size_t held =
        evbuffer_get_length(bufferevent_get_input(c->bev)) + c->proof.cap * sizeof(pst_item);
    bufferevent_free(c->bev);
    padm_items_free(&c->proof);
    free(c);
    m->nconns--;
    if (held > ((size_t)1 << 20))
        malloc_trim(0); /* a large buffer's memory back to the system */
}

/* ---- the proof's state ---------------------------------------------------------- */

static void
progress_line(mgr *m, int final)
{
    mt_stats s;
    mt_stats_get(m->tree, &s);
    double t = mgr_now();
    int workers = 0;
    for (mgr_conn *c = m->conns; c; c = c->next)
        workers += c->welcomed;
    char pn[32], dn[32];
    if (s.root_pn >= MT_INF)
        snprintf(pn, sizeof pn, "inf");
    else
        snprintf(pn, sizeof pn, "%" PRIu64, s.root_pn);
    if (s.root_dn >= MT_INF)
        snprintf(dn, sizeof dn, "inf");
    else
        snprintf(dn, sizeof dn, "%" PRIu64, s.root_dn);
    char h[16];
    if (s.h >= MT_H_INF)
        snprintf(h, sizeof h, "inf");
    else
        snprintf(h, sizeof h, "%d", s.h);
    char line[400];
    snprintf(line, sizeof line,
             "%.0fs root %s | %s %s? pn %s dn %s | tree %" PRIu64 " (%" PRIu64
             " expanded) | leaves proven %" PRIu64 " | jobs %" PRIu64 " done, %" PRIu64
             " in flight | workers %d | %.1f jobs/min | h %s",
             t - m->start, prv_bound_word(s.root_bound),
             s.q.attacker == ENG_BLACK ? "Black" : "White",
             s.q.target == ENG_WIN ? "wins" : "draws", pn, dn, s.nodes, s.expanded, s.leaves_proven,
             s.jobs_done, s.in_flight, workers, mgr_jobs_per_minute(m, t), h);
    if (m->tty && !final)
        fprintf(stderr, "\r\033[K%s", line);
    else /* on a terminal the final line replaces the live one (and a "^C" after it) */
        fprintf(stderr, "%s%s\n", m->tty ? "\r\033[K" : "", line);
    fflush(stderr);
    m->last_progress = t;
}

static void
finish(mgr *m, int code, const char *why)
{
    if (m->finished)
        return;
    m->finished = 1;
    m->exit_code = code;
    snprintf(m->stop_reason, sizeof m->stop_reason, "%s", why);
    event_base_loopexit(m->base, NULL);
}

static void dispatch(mgr *m);

static void
send_job(mgr_conn *c, const mt_job *j)
{
    mgp_msg msg = {.type = MGP_JOB};
    msg.u.job.id = j->id;
    msg.u.job.pos = j->pos;
    msg.u.job.q = j->q;
    msg.u.job.time_ms = j->time_ms;
    msg.u.job.node_limit = j->node_limit;
    if (send_msg(c, &msg)) {
        release(c->m, j->id);
        return;
    }
    c->has_job = 1;
    c->job = *j;
    c->job_start = mgr_now();
}

static void
dispatch(mgr *m)
{
    if (m->finished || mw_busy(m->writer)) /* a pick changes the tree: after the result */
        return;
    for (mgr_conn *c = m->conns; c;) {
        if (c->welcomed != 1 || c->has_job) {
            c = c->next;
            continue;
        }
        mt_job j;
        char err[512];
        double t0 = mgr_now();
        int r = mt_pick(m->tree, &j, err, sizeof err);
        m->handle_seconds += mgr_now() - t0;
        if (r == MT_PICK_JOB) {
            /* a re-job goes to the worker that had the node, when it is
             * free (its table holds the work: tree.h, JOBS); c then picks
             * again */
            mgr_conn *to = c;
            if (j.prefer && j.prefer != c->id)
                for (mgr_conn *x = m->conns; x; x = x->next)
                    if (x->id == j.prefer && x->welcomed == 1 && !x->has_job)
                        to = x;
            mt_given(m->tree, j.id, to->id);
            /* a job never runs past the run's budget: a grown re-job
             * would otherwise be lost at the stop */
            if (m->o->budget > 0) {
                double left = m->o->budget - (mgr_now() - m->start);
                uint32_t cap = left > 1 ? (uint32_t)(left * 1000) : 1000;
                if (j.time_ms > cap)
                    j.time_ms = cap;
            }
            send_job(to, &j);
            if (to == c)
                c = c->next;
            continue;
        }
        if (r == MT_PICK_DONE) {
            finish(m, MGR_PROVED, "proved");
            return;
        }
        if (r < 0) {
            mlog(m, "the tree failed: %s", err);
            finish(m, r == MT_ENOSPC ? MGR_STOPPED : MGR_DAMAGED, err);
            return;
        }
        break; /* MT_PICK_WAIT */
    }
    if (mt_done(m->tree))
        finish(m, MGR_PROVED, "proved");
}

/*
 * UNWANTED JOBS. A result can settle what another worker's job is still
 * searching: a sibling proves the parent, the root's answer moves the
 * tree to its second question while the first question's job runs on,
 * or the run is settled. Such a job's answer would be kept as a fact and
 * nothing more, while its worker could have had work the tree needs. So
 * after each result, every job in flight that the tree no longer wants
 * (mt_job_wanted) is cancelled (CANCEL: the worker stops it, keeps its
 * table, and sends nothing for it) and goes back to the tree, and
 * dispatch gives its worker the next job. A result that crosses the
 * CANCEL is still taken, as a late one after a lease.
 */
static void
cancel_unwanted(mgr *m)
{
    for (mgr_conn *c = m->conns; c; c = c->next) {
        if (!c->has_job || mt_job_wanted(m->tree, c->job.id))
            continue;
        mlog(m, "job %" PRIu64 " on %s: no longer needed (settled elsewhere), cancelled", c->job.id,
             c->name);
        mgp_msg cm = {.type = MGP_CANCEL};
        cm.u.id = c->job.id;
        send_msg(c, &cm);
        c->has_job = 0;
        m->cancelled++;
        release(m, cm.u.id);
        if (m->finished)
            return;
    }
}

/* ---- messages --------------------------------------------------------------------- */

static void
on_hello(mgr_conn *c, const mgp_hello *h)
{
    mgr *m = c->m;
    mgp_msg r = {.type = MGP_REJECT};
    mgr_printable(h->name, c->name, sizeof c->name); /* it reaches the log */
    mt_stats s;
    mt_stats_get(m->tree, &s);
    if (h->magic != MGP_MAGIC || h->version != MGP_VERSION) {
        snprintf(r.u.reason, sizeof r.u.reason,
                 "version %u not supported (this manager speaks %d)%s", h->version, MGP_VERSION,
                 h->magic != MGP_MAGIC ? ", and the magic is wrong" : "");
    } else if (m->need_token && !mgp_token_equal(h->token, m->token)) {
        snprintf(r.u.reason, sizeof r.u.reason, "bad token");
    } else if (!egdb_scope_within(s.db_pieces, h->db_pieces)) {
        char have[48], need[48];
        egdb_scope_name(h->db_pieces, have, sizeof have);
        egdb_scope_name(s.db_pieces, need, sizeof need);
        snprintf(r.u.reason, sizeof r.u.reason,
                 "the worker's databases cover %s pieces, the proof rests on %s", have, need);
    } else {
        c->welcomed = 1;
        mgp_msg w = {.type = MGP_WELCOME};
        w.u.welcome.version = MGP_VERSION;
        w.u.welcome.worker_id = c->id;
        w.u.welcome.heartbeat_ms = MGR_HEARTBEAT_MS;
        w.u.welcome.silence_ms = MGR_SILENCE_MS;
        w.u.welcome.db_pieces = (uint16_t)s.db_pieces;
        send_msg(c, &w);
        mlog(m, "worker %u joined: %s from %s", c->id, c->name, c->addr);
        local_joined(m, h->pid);
        return;
    }
    mlog(m, "refusing %s from %s: %s", c->name[0] ? c->name : "a worker", c->addr, r.u.reason);
    send_msg(c, &r);
    /* close once the REJECT is written */
    bufferevent_disable(c->bev, EV_READ);
    c->welcomed = -1;
}

/*
 * PROOF BOUND (manager.h, ADMISSION)
 *   A job's records are staged in memory until its RESULT, and then
 *   admission checks them, about 100,000-560,000 a second on this
 *   machine. It ran on the event loop until the result writer
 *   (writer.h): 4,194,304 records (the old bound, --max-proof-records'
 *   default) took the manager from 35 to 236 MB and stalled every other
 *   worker for 7.4 s, for a job of 2 s. On the writer the loop goes on,
 *   but the memory is held and every other RESULT waits for the writer
 *   (results are applied one at a time). So a job of budget B ms may send
 *   MGR_PROOF_PER_S * B / 1000 records (at least MGR_PROOF_FLOOR, at
 *   most --max-proof-records):
 *   admission then takes a fifth of the job's time at most, and an honest
 *   df-pn job proves far fewer positions than that. A job not open in
 *   this proof (answered already, or another proof's) has its records
 *   counted for the RESULT's check and dropped unread, as mt_result
 *   would drop them. A job issued before this run has no budget kept:
 *   --max-proof-records alone.
 */
static size_t
proof_bound(const mgr_conn *c, uint64_t id)
{
    size_t cap = c->m->o->max_proof ? c->m->o->max_proof : MGR_PROOF_DEFAULT;
    uint32_t ms = 0;
    if (c->has_job && c->job.id == id)
        ms = c->job.time_ms;
    else if (!mt_job_open(c->m->tree, id, &ms))
        return 0;
    if (ms == 0)
        return cap;
    size_t by_time = (size_t)ms * MGR_PROOF_PER_S / 1000;
    if (by_time < MGR_PROOF_FLOOR)
        by_time = MGR_PROOF_FLOOR;
    return by_time < cap ? by_time : cap;
}

static void
on_proof(mgr_conn *c, const mgp_proof *p)
{
    if (c->proof_id != p->id) {
        c->proof.n = 0;
        c->proof_dropped = 0;
        c->proof_id = p->id;
        c->proof_max = proof_bound(c, p->id);
    }
    if (c->proof_max == 0) { /* not open: counted, not held */
        c->proof_dropped += p->count;
        return;
    }
    size_t max = c->proof_max;
    if (c->proof.n + p->count > max) {
        char why[200];
        snprintf(why, sizeof why,
                 "a proof of more than %zu records (what admission checks in a fifth of the "
                 "job's time, or --max-proof-records)",
                 max);
        conn_close(c, why);
        return;
    }
    for (uint32_t i = 0; i < p->count; i++) {
        pst_item it;
        int rc = mgp_proof_item(p, i, &it);
        if (rc) {
            char why[128];
            snprintf(why, sizeof why, "record %u of a PROOF frame is damaged (%s)", i,
                     mgp_strerror(rc));
            conn_close(c, why);
            return;
        }
        if (padm_push(&c->proof, &it)) {
            conn_close(c, "out of memory for a proof");
            return;
        }
    }
}

/*
 * THE WRITER (writer.h). A RESULT is checked here (its records all came)
 * and given to the writer's thread, which admits, applies and commits it;
 * the loop goes on meanwhile, and result_done finishes the result when
 * the writer hands it back: the ACK, the jobs no longer wanted, the next
 * picks. While the writer is busy the tree does not change on this
 * thread: dispatch waits, a release is held (release), and another
 * connection's RESULT stays unread in its buffer (on_read: the connection
 * is paused) until the writer is free; its heartbeats keep it alive.
 */
static void result_done(void *arg, mw_task *k);
static void on_read(struct bufferevent *bev, void *arg);

/* After a result handed back: the releases held meanwhile, then the
 * jobs no longer wanted, the picks, and the RESULTs left waiting. */
static void
after_result(mgr *m)
{
    for (size_t i = 0; i < m->nheld && !m->finished; i++)
        release(m, m->held[i]);
    m->nheld = 0;
    if (m->finished)
        return;
    if (!mt_done(m->tree))
        cancel_unwanted(m);
    dispatch(m);
    /* one RESULT left waiting at a time: the first read takes the writer
     * again, and the others wait for that one */
    while (!m->finished && !mw_busy(m->writer)) {
        mgr_conn *c = m->conns;
        while (c && !c->paused)
            c = c->next;
        if (!c)
            break;
        c->paused = 0;
        on_read(c->bev, c);
    }
}

static void
on_result(mgr_conn *c, const mgp_result *r)
{
    mgr *m = c->m;
    size_t have = c->proof_id == r->id ? c->proof.n + c->proof_dropped : 0;
    if (have != r->records) {
        char why[160];
        snprintf(why, sizeof why,
                 "job %" PRIu64 ": the result announces %u proof records, %zu arrived", r->id,
                 r->records, have);
        conn_close(c, why); /* a truncated batch: its job goes back to the pool */
        dispatch(m);
        return;
    }
    if (r->status == MGP_FAILED) {
        char why[sizeof r->message * 4];
        mgr_printable(r->message, why, sizeof why);
        mlog(m, "job %" PRIu64 " failed on %s: %s", r->id, c->name, why);
    }
    mt_child_scores(m->tree, r->id, r->scores, r->nscores);
    mw_task *k = &m->wtask;
    memset(k, 0, sizeof *k);
    k->id = r->id;
    k->bound = r->bound;
    k->settled = r->status == MGP_DONE;
    k->score = r->score;
    k->depth = r->depth;
    k->nodes = r->nodes;
    k->ms = r->ms;
    k->max_items = m->o->max_proof;
    /* the records go with the task (the connection may close meanwhile) */
    if (c->proof_id == r->id) {
        k->items = c->proof;
        memset(&c->proof, 0, sizeof c->proof);
    }
    m->wtask_have = have;
    m->wtask_dropped = c->proof_id == r->id ? c->proof_dropped : 0;
    m->wtask_admitted0 = mt_admitted(m->tree);
    c->proof_id = 0;
    c->proof_dropped = 0;
    m->wconn = c;
    snprintf(m->wname, sizeof m->wname, "%s", c->name);
    mw_submit(m->writer, k);
}

/* mw_done_fn: the writer handed the result back (its records are
 * committed, or it was refused and nothing was written). */
static void
result_done(void *arg, mw_task *k)
{
    mgr *m = arg;
    mgr_conn *c = m->wconn;
    m->wconn = NULL;
    int rc = k->rc;
    m->handle_seconds += k->seconds;
    size_t held = k->items.n;
    padm_items_free(&k->items);
    if (held > MGR_PROOF_FLOOR)
        malloc_trim(0); /* a large batch's memory, and admission's, back to the system */
    if (!rc &&
        m->wtask_dropped) /* what mt_result says of a job not open, for the records not held */
        snprintf(k->err, sizeof k->err,
                 "job %" PRIu64 " is not open in this proof: its %zu records are dropped", k->id,
                 m->wtask_have);
    if (rc == MT_EREFUSED) {
        /* a worker whose records are not what it claims is not trusted
         * again on this connection; its job goes back to the pool */
        mlog(m, "job %" PRIu64 " from %s: %s", k->id, m->wname, k->err);
        if (c)
            conn_close(c, "its proof was refused at admission");
        after_result(m);
        return;
    }
    if (rc == MT_ENOSPC) { /* the state is whole: stopped, resumable */
        mlog(m, "job %" PRIu64 ": %s", k->id, k->err);
        finish(m, MGR_STOPPED, k->err);
        return;
    }
    if (rc) {
        mlog(m, "job %" PRIu64 ": the tree failed: %s", k->id, k->err);
        if (m->finished) { /* handed back at the run's end (mw_wait): damage still wins */
            m->exit_code = MGR_DAMAGED;
            snprintf(m->stop_reason, sizeof m->stop_reason, "%s", k->err);
        }
        finish(m, MGR_DAMAGED, k->err);
        return;
    }
    const char *who = m->wname; /* its connection may have closed meanwhile */
    char slow[128] = "";        /* a long one says how long the loop waited for it */
    if (k->seconds >= 0.5) {
        double to = mgr_now() - m->start;
        snprintf(slow, sizeof slow,
                 "; %.1f s on the writer (%.2f-%.2f s of this run), the loop held %.0f ms",
                 k->seconds, to - k->seconds, to, k->parked * 1000);
    }
    if (k->err[0]) /* a job not open in this proof: nothing of it kept */
        mlog(m, "job %" PRIu64 " from %s: %s", k->id, who, k->err);
    else
        mlog(m,
             "job %" PRIu64 " from %s: %s, %" PRIu64 " records admitted (result %" PRIu64
             " of this run)%s",
             k->id, who, prv_bound_word(k->bound), mt_admitted(m->tree) - m->wtask_admitted0,
             m->results_run + 1, slow);
    if (c) {
        mgp_msg ack = {.type = MGP_ACK};
        ack.u.id = k->id;
        send_msg(c, &ack);
        if (c->has_job && c->job.id == k->id)
            c->has_job = 0;
        c->jobs_done++;
    }
    m->results_run++;
    m->done_at[m->done_n++ % 256] = mgr_now();
    after_result(m);
}

static void
handle(mgr_conn *c, const mgp_msg *msg)
{
    if (!c->welcomed) {
        if (msg->type != MGP_HELLO) {
            char why[96];
            snprintf(why, sizeof why, "%s before HELLO", mgp_type_name(msg->type));
            conn_close(c, why);
            return;
        }
        on_hello(c, &msg->u.hello);
        if (c->welcomed == 1)
            dispatch(c->m);
        return;
    }
    switch (msg->type) {
    case MGP_HEARTBEAT:
        break;
    case MGP_PROOF:
        on_proof(c, &msg->u.proof);
        break;
    case MGP_RESULT:
        on_result(c, &msg->u.result);
        break;
    default: {
        char why[96];
        snprintf(why, sizeof why, "unexpected %s from a worker", mgp_type_name(msg->type));
        conn_close(c, why);
    }
    }
}

static void
on_read(struct bufferevent *bev, void *arg)
{
    mgr_conn *c = arg;
    struct evbuffer *in = bufferevent_get_input(bev);
    for (;;) {
        size_t len = evbuffer_get_length(in);
        if (len < MGP_HDR || c->welcomed < 0)
            return;
        uint8_t *hdr = evbuffer_pullup(in, MGP_HDR);
        char err[300];
        long pk = mgp_peek(hdr, MGP_HDR, err, sizeof err);
        if (pk == MGP_EFRAME) {
            conn_close(c, err);
            return;
        }
        uint32_t plen = (uint32_t)hdr[0] | (uint32_t)hdr[1] << 8 | (uint32_t)hdr[2] << 16 |
                        (uint32_t)hdr[3] << 24;
        if (!c->welcomed && plen > MGR_PRE_HELLO_MAX) {
            /* nobody unauthenticated makes the manager hold megabytes */
            char why[128];
            snprintf(why, sizeof why, "a frame of %u bytes before HELLO (at most %d)", plen,
                     MGR_PRE_HELLO_MAX);
            conn_close(c, why);
            return;
        }
        if (len < MGP_HDR + (size_t)plen)
            return;
        uint8_t *buf = evbuffer_pullup(in, MGP_HDR + (ssize_t)plen);
        mgp_msg msg;
        if (mgp_decode(buf, MGP_HDR + plen, &msg, err, sizeof err)) {
            conn_close(c, err);
            return;
        }
        c->last_rx = mgr_now();
        mgr *m = c->m;
        if (msg.type == MGP_RESULT && mw_busy(m->writer)) {
            c->paused = 1; /* THE WRITER: read again once it is free */
            return;
        }
        int still = 0;
        handle(c, &msg);
        for (mgr_conn *x = m->conns; x; x = x->next)
            still |= x == c;
        if (!still || m->finished)
            return;
        evbuffer_drain(in, MGP_HDR + plen);
    }
}

static void
on_write(struct bufferevent *bev, void *arg)
{
    mgr_conn *c = arg;
    if (c->welcomed < 0 && evbuffer_get_length(bufferevent_get_output(bev)) == 0)
        conn_close(c, "refused");
}

static void
on_event(struct bufferevent *bev, short what, void *arg)
{
    (void)bev;
    mgr_conn *c = arg;
    if (what & (BEV_EVENT_EOF | BEV_EVENT_ERROR))
        conn_close(c, what & BEV_EVENT_EOF ? "closed by the worker" : "socket error");
}

static void
on_accept(struct evconnlistener *l, evutil_socket_t fd, struct sockaddr *sa, int salen, void *arg)
{
    (void)l;
    (void)salen;
    mgr *m = arg;
    if (m->nconns >= m->max_conns) {
        /* logged at most once a second, with how many were refused */
        m->refused_conns++;
        double t = mgr_now();
        if (t - m->last_refusal_log >= 1) {
            mlog(m, "refusing connections: %d open already (the cap); %" PRIu64 " refused so far",
                 m->nconns, m->refused_conns);
            m->last_refusal_log = t;
        }
        evutil_closesocket(fd);
        return;
    }
    mgr_conn *c = calloc(1, sizeof *c);
    if (!c) {
        evutil_closesocket(fd);
        return;
    }
    m->nconns++;
    c->m = m;
    c->id = ++m->next_conn_id;
    c->since = c->last_rx = c->last_tx = mgr_now();
    char host[64] = "?";
    int port = 0;
    if (sa->sa_family == AF_INET) {
        struct sockaddr_in *s = (struct sockaddr_in *)sa;
        inet_ntop(AF_INET, &s->sin_addr, host, sizeof host);
        port = ntohs(s->sin_port);
    } else if (sa->sa_family == AF_INET6) {
        struct sockaddr_in6 *s = (struct sockaddr_in6 *)sa;
        inet_ntop(AF_INET6, &s->sin6_addr, host, sizeof host);
        port = ntohs(s->sin6_port);
    }
    snprintf(c->addr, sizeof c->addr, "%s:%d", host, port);
    c->bev = bufferevent_socket_new(m->base, fd, BEV_OPT_CLOSE_ON_FREE);
    bufferevent_setcb(c->bev, on_read, on_write, on_event, c);
    bufferevent_enable(c->bev, EV_READ | EV_WRITE);
    c->next = m->conns;
    m->conns = c;
}

/* ---- local workers ---------------------------------------------------------------------- */

/*
 * LOCAL WORKERS
 *   Each local worker's stderr (and stdout) is a pipe the manager reads:
 *   it appends what comes to DIR/workers/<k>.log and keeps the last line.
 *   A worker that cannot start says why on stderr and exits; on a full
 *   disk its log cannot take that line, so without the pipe the manager
 *   would know only an exit status. A worker that ends before its HELLO
 *   was welcomed failed at start; MGR_START_FAILS such ends in a row (no
 *   local worker joining in between) stop the run with the last one's
 *   words: restarting a worker that cannot start would only wait for
 *   ever. The exit status follows the worker's: 3 a damaged store or
 *   database, 2 bad input, 1 anything else (a full disk among them).
 */

/* Takes n bytes of worker w's output: to its log, and its lines. */
static void
local_take(mgr_local *w, const char *buf, size_t n)
{
    if (w->log >= 0 && write(w->log, buf, n) != (ssize_t)n) {
        /* a full disk: the last line is still kept below */
    }
    for (size_t i = 0; i < n; i++) {
        if (buf[i] != '\n') {
            if (w->len + 1 < sizeof w->line)
                w->line[w->len++] = buf[i];
            continue;
        }
        w->line[w->len] = 0;
        if (w->len && strspn(w->line, " \t\r") < w->len)
            mgr_printable(w->line, w->last, sizeof w->last); /* it reaches the log */
        w->len = 0;
    }
}

/* Reads what worker w wrote until the pipe is empty; at its end (the
 * worker gone) closes it. */
static void
local_read(mgr_local *w)
{
    char buf[4096];
    while (w->out >= 0) {
        ssize_t n = read(w->out, buf, sizeof buf);
        if (n > 0) {
            local_take(w, buf, (size_t)n);
            continue;
        }
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            return;
        /* the end: a line without its newline counts too */
        if (w->len)
            local_take(w, "\n", 1);
        event_free(w->ev);
        w->ev = NULL;
        close(w->out);
        w->out = -1;
    }
}

static void
on_local_out(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    local_read(arg);
}

/* Closes what the manager holds of worker w (its process aside). */
static void
local_close(mgr_local *w)
{
    if (w->ev)
        event_free(w->ev);
    w->ev = NULL;
    if (w->out >= 0)
        close(w->out);
    if (w->log >= 0)
        close(w->log);
    w->out = w->log = -1;
}

/* Waits for worker w to end (it was told to), taking what it writes
 * meanwhile: a full pipe would keep it from ending. */
static void
local_wait(mgr_local *w)
{
    if (w->pid <= 0)
        return;
    while (waitpid(w->pid, NULL, WNOHANG) == 0) {
        struct pollfd pf = {w->out, POLLIN, 0};
        if (w->out < 0 || poll(&pf, 1, 100) < 0)
            waitpid(w->pid, NULL, 0); /* nothing to read: just wait */
        else
            local_read(w);
    }
    local_read(w);
    w->pid = 0;
}

/* Starts local worker k; RETURN 0, or -1 with the reason logged. */
static int
spawn_worker(mgr *m, int k)
{
    const mgr_opts *o = m->o;
    mgr_local *w = &m->local[k];
    char dir[4200], store[4300], logp[4300], conn[64];
    snprintf(dir, sizeof dir, "%s/workers", o->state);
    mkdir(dir, 0755);
    /* one store for every local worker: a proof one finds, the others
     * read (LMDB serves many processes) */
    snprintf(store, sizeof store, "%s/store", dir);
    snprintf(logp, sizeof logp, "%s/%d.log", dir, k);
    snprintf(conn, sizeof conn, "127.0.0.1:%d", m->port);
    local_close(w);
    w->m = m;
    w->k = k;
    w->joined = 0;
    w->len = 0;
    w->last[0] = 0;
    int fds[2];
    if (pipe2(fds, O_CLOEXEC)) {
        mlog(m, "local worker %d: no pipe for its output: %s", k, strerror(errno));
        return -1;
    }
    /* the log may fail to open (a full disk): the pipe still brings the
     * worker's words */
    w->log = open(logp, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        mlog(m, "local worker %d: cannot fork: %s", k, strerror(errno));
        close(fds[0]);
        close(fds[1]);
        return -1;
    }
    if (pid == 0) {
        prctl(PR_SET_PDEATHSIG, SIGTERM);
        mgr_loop_child(); /* a respawn runs in the loop: SIGPIPE is blocked */
        dup2(fds[1], 1);  /* dup2 drops O_CLOEXEC on 1 and 2 */
        dup2(fds[1], 2);
        const char *argv[20];
        char tt[24];
        int a = 0;
        argv[a++] = o->exe;
        argv[a++] = "worker";
        argv[a++] = "--connect";
        argv[a++] = conn;
        argv[a++] = "--store";
        argv[a++] = store;
        argv[a++] = "--local";
        if (o->db_dir) {
            argv[a++] = "--db";
            argv[a++] = o->db_dir;
        }
        if (o->ghi) {
            argv[a++] = "--ghi";
            argv[a++] = o->ghi;
        }
        if (o->tt_mb) {
            snprintf(tt, sizeof tt, "%u", o->tt_mb);
            argv[a++] = "--tt";
            argv[a++] = tt;
        }
        if (o->tt_kept) {
            argv[a++] = "--tt-kept";
            argv[a++] = o->tt_kept;
        }
        argv[a++] = "--token-file";
        argv[a++] = m->token_path;
        argv[a] = NULL;
        execv(o->exe, (char *const *)argv);
        fprintf(stderr, "cannot run %s: %s\n", o->exe, strerror(errno));
        _exit(127);
    }
    close(fds[1]);
    evutil_make_socket_nonblocking(fds[0]);
    w->out = fds[0];
    w->ev = event_new(m->base, w->out, EV_READ | EV_PERSIST, on_local_out, w);
    event_add(w->ev, NULL);
    w->pid = pid;
    return 0;
}

/* A local worker whose HELLO was welcomed has started (LOCAL WORKERS). */
static void
local_joined(mgr *m, uint32_t pid)
{
    for (int k = 0; k < m->nlocal; k++)
        if (m->local[k].pid > 0 && (uint32_t)m->local[k].pid == pid) {
            m->local[k].joined = 1;
            m->start_fails = 0;
        }
}

static void
on_sigchld(evutil_socket_t sig, short what, void *arg)
{
    (void)sig;
    (void)what;
    mgr *m = arg;
    int st;
    pid_t pid;
    while ((pid = waitpid(-1, &st, WNOHANG)) > 0) {
        for (int k = 0; k < m->nlocal; k++) {
            mgr_local *w = &m->local[k];
            if (w->pid != pid)
                continue;
            w->pid = 0;
            local_read(w); /* its last words */
            local_close(w);
            if (m->finished)
                break;
            char how[48];
            if (WIFEXITED(st))
                snprintf(how, sizeof how, "exit status %d", WEXITSTATUS(st));
            else
                snprintf(how, sizeof how, "signal %d", WIFSIGNALED(st) ? WTERMSIG(st) : 0);
            const char *said = w->last[0] ? w->last : "it wrote nothing";
            if (!w->joined) {
                m->start_fails++;
                mlog(m, "local worker %d ended before it joined (%s): %s", k, how, said);
                if (m->start_fails >= MGR_START_FAILS) {
                    char why[sizeof m->stop_reason];
                    int code = WIFEXITED(st) ? WEXITSTATUS(st) : 1;
                    snprintf(why, sizeof why,
                             "local workers could not start (%d ended before joining, none "
                             "joined); the last said: %s",
                             m->start_fails, said);
                    finish(m, code == 3 ? MGR_DAMAGED : code == 2 ? MGR_USAGE : MGR_STOPPED, why);
                    break;
                }
            } else {
                mlog(m, "local worker %d ended (%s): %s", k, how, said);
            }
            if (m->respawns >= 20) {
                mlog(m, "local worker %d not restarted (20 restarts already)", k);
                break;
            }
            m->respawns++;
            mlog(m, "local worker %d: restarting it", k);
            spawn_worker(m, k);
        }
    }
}

/* ---- timers and signals -------------------------------------------------------------------- */

static void
on_tick(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    mgr *m = arg;
    double t = mgr_now();
    mgr_conn *next;
    for (mgr_conn *c = m->conns; c; c = next) {
        next = c->next;
        if (c->paused || c == m->wconn) /* a result waits for the writer: not silent */
            c->last_rx = t;
        if ((t - c->last_rx) * 1000 > MGR_SILENCE_MS) {
            conn_close(c, "silent for too long");
            continue;
        }
        /* a connection that says nothing holds a place the cap counts:
         * HELLO must come soon (a reconnect flood would keep workers out) */
        if (c->welcomed != 1 && (t - c->since) * 1000 > MGR_HELLO_MS) {
            conn_close(c, "no HELLO within " MGR_HELLO_TEXT);
            continue;
        }
        if (c->has_job && c != m->wconn &&
            (t - c->job_start) * 1000 > c->job.time_ms + MGR_LEASE_GRACE_MS) {
            mlog(m, "job %" PRIu64 " on %s: lease expired, back to the pool", c->job.id, c->name);
            mgp_msg cm = {.type = MGP_CANCEL};
            cm.u.id = c->job.id;
            send_msg(c, &cm);
            release(m, c->job.id);
            c->has_job = 0;
        }
        if (c->welcomed == 1 && (t - c->last_tx) * 1000 >= MGR_HEARTBEAT_MS) {
            mgp_msg hb = {.type = MGP_HEARTBEAT};
            hb.u.time = (uint64_t)(t * 1000);
            send_msg(c, &hb);
        }
    }
    if (!m->o->quiet && (m->tty || t - m->last_progress >= 10))
        progress_line(m, 0);
    if (t - m->last_sample >= 10 && !mw_busy(m->writer)) { /* writes: not beside the writer */
        char err[256];
        mt_add_seconds(m->tree, t - m->last_save);
        m->last_save = t;
        mt_sample(m->tree, t - m->start, err, sizeof err);
        if (m->o->pages && m->o->pages->sample)
            m->o->pages->sample(m->o->pages->arg, t - m->start);
        m->last_sample = t;
    }
    if (m->o->budget > 0 && t - m->start >= m->o->budget)
        finish(m, MGR_STOPPED, "the budget ran out");
    dispatch(m);
}

static void
on_signal(evutil_socket_t sig, short what, void *arg)
{
    (void)what;
    mgr *m = arg;
    finish(m, MGR_STOPPED, sig == SIGINT ? "interrupted (SIGINT)" : "terminated (SIGTERM)");
}

/* ---- the run ----------------------------------------------------------------------------------
 */

static int
listen_on(mgr *m)
{
    const char *spec = m->o->listen ? m->o->listen : "127.0.0.1"; /* any free port */
    struct sockaddr_storage ss;
    int sslen = sizeof ss;
    if (evutil_parse_sockaddr_port(spec, (struct sockaddr *)&ss, &sslen)) {
        fprintf(stderr,
                "checkers prove: bad --listen '%s' (expected HOST:PORT, HOST an IP "
                "address)\n",
                spec);
        return -1;
    }
    int loopback = 0;
    if (ss.ss_family == AF_INET)
        loopback = (ntohl(((struct sockaddr_in *)&ss)->sin_addr.s_addr) >> 24) == 127;
    else if (ss.ss_family == AF_INET6)
        loopback = IN6_IS_ADDR_LOOPBACK(&((struct sockaddr_in6 *)&ss)->sin6_addr);
    if (!loopback && !m->o->token_file) {
        fprintf(stderr,
                "checkers prove: listening on %s (beyond loopback) needs --token-file F, a "
                "secret of at least %d characters; the state's own, %s (256 random bits), "
                "will do: copy it to the workers' machines\n",
                spec, MGR_TOKEN_MIN, m->token_path);
        return -1;
    }
    /* a secret for a network must be beyond guessing (manager.h, SECURITY) */
    if (!loopback && strlen(m->token) < MGR_TOKEN_MIN) {
        fprintf(stderr,
                "checkers prove: listening on %s (beyond loopback) needs a token of at least %d "
                "characters (128 random bits); %s holds %zu. Make one with\n"
                "  od -An -N16 -tx1 /dev/urandom | tr -d ' \\n' > %s\n"
                "or give the state's own token, %s/token, made at its first start\n",
                spec, MGR_TOKEN_MIN, m->token_path, strlen(m->token), m->token_path, m->o->state);
        return -1;
    }
    m->need_token = 1; /* loopback too (manager.h, SECURITY) */
    m->listener =
        evconnlistener_new_bind(m->base, on_accept, m, LEV_OPT_CLOSE_ON_FREE | LEV_OPT_REUSEABLE,
                                64, (struct sockaddr *)&ss, sslen);
    if (!m->listener) {
        fprintf(stderr, "checkers prove: cannot listen on %s: %s\n", spec,
                evutil_socket_error_to_string(EVUTIL_SOCKET_ERROR()));
        return -1;
    }
    struct sockaddr_storage got;
    socklen_t gl = sizeof got;
    getsockname(evconnlistener_get_fd(m->listener), (struct sockaddr *)&got, &gl);
    m->port = ntohs(got.ss_family == AF_INET ? ((struct sockaddr_in *)&got)->sin_port
                                             : ((struct sockaddr_in6 *)&got)->sin6_port);
    return 0;
}

/*
 * Prints where the proof stands. RETURN MGR_DAMAGED (nothing printed on
 * stdout) when a settled state read from disk fails the checker, else 0.
 * A root this run settled is printed as admission established it (issue
 * 42: two walks per proof, not four): every record of the state's store
 * was admitted, that is checked whole by the independent checker before
 * it was written (prover/admit.h), and the root settles by such a record
 * or by the tree's backed-up record, itself admitted. So its whole proof
 * is not walked here a third time (that took seconds on a proof of a
 * million records). A root that was settled before this run took any
 * result (a settled state opened again) rests on nothing this run
 * admitted, only on the disk, which may have lost a record since the
 * tree's last save that the open's record count cannot see: that one is
 * checked whole, once (mt_check_root), as before. `proof check --state`
 * stays the from-scratch check a user runs on demand; the last line says
 * which was done.
 */
static int
report(mgr *m)
{
    int walked = mt_done(m->tree) && m->results_run == 0;
    if (walked) {
        char err[1024];
        if (mt_check_root(m->tree, err, sizeof err)) {
            fprintf(stderr, "checkers prove: the state %s is damaged: %s\n", m->o->state, err);
            return MGR_DAMAGED;
        }
    }
    mt_stats s;
    mt_stats_get(m->tree, &s);
    printf("%s\t%s\n", s.root_fen, prv_bound_word(s.root_bound));
    printf("goal: %s (%s)\n", mt_goal_name(s.goal), mt_done(m->tree) ? "settled" : "not settled");
    printf("tree: %" PRIu64 " positions, %" PRIu64 " expanded (%" PRIu64
           " early for idle workers in this run); jobs: %" PRIu64 " answered (%" PRIu64
           " settled) over all runs, %" PRIu64 " in this run\n",
           s.nodes, s.expanded, s.widened, s.jobs_done, s.jobs_proved, m->results_run);
    if (m->cancelled)
        printf("cancelled: %" PRIu64 " jobs in this run, settled elsewhere while in flight\n",
               m->cancelled);
    if (s.other_jobs)
        printf("other question: %" PRIu64 " of those jobs (%.1f s) asked the root's other question"
               " beside the tree's, over all runs\n",
               s.other_jobs, s.other_ms / 1000.0);
    double run = mgr_now() - m->start;
    printf("time: %.1f s this run, %.1f s in all; manager work %.3f s (%.2f ms a job)\n", run,
           s.seconds, m->handle_seconds,
           m->results_run ? m->handle_seconds * 1000 / m->results_run : 0.0);
    if (!mt_done(m->tree)) {
        char pn[32], dn[32];
        snprintf(pn, sizeof pn, s.root_pn >= MT_INF ? "inf" : "%" PRIu64, s.root_pn);
        snprintf(dn, sizeof dn, s.root_dn >= MT_INF ? "inf" : "%" PRIu64, s.root_dn);
        printf("stopped: %s; question %s %s?, root pn %s dn %s, h %d\n", m->stop_reason,
               s.q.attacker == ENG_BLACK ? "Black" : "White",
               s.q.target == ENG_WIN ? "wins" : "draws", pn, dn, s.h);
        printf("continue with: %s\n", m->o->cmdline ? m->o->cmdline : "checkers prove --state DIR");
    } else if (walked) {
        printf("checked: the root's whole proof, by the independent checker; again with: "
               "checkers proof check --state %s\n",
               m->o->state);
    } else {
        printf("checked: the root's proof, each record by the independent checker when it was "
               "admitted; from scratch with: checkers proof check --state %s\n",
               m->o->state);
    }
    fflush(stdout);
    return 0;
}

/* mkdir -p: the state directory and any folder above it that is missing
 * (`make run` writes under proofs/, which a fresh clone does not have).
 * RETURN 0, or -1 with errno. */
/*
 * The state's lock: one manager a state. Two managers on one tree would
 * each take results the other does not see (its counters and jobs), so a
 * second one is refused while the first runs; the lock (flock on
 * <state>/lock, which holds the owner's pid for the message) goes with
 * the process however it ends. RETURN the descriptor to keep open, or -1
 * with err saying why.
 */
static int
state_lock(const char *state, char *err, size_t errlen)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/lock", state);
    int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) {
        eng_errf(err, errlen, "cannot open %s: %s", path, strerror(errno));
        return -1;
    }
    if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
        char pid[32] = "";
        ssize_t n = pread(fd, pid, sizeof pid - 1, 0);
        pid[n > 0 ? n : 0] = 0;
        pid[strcspn(pid, "\n")] = 0;
        eng_errf(err, errlen,
                 "%s is in use by another manager%s%s%s: stop it first (its work is kept), or "
                 "choose another directory",
                 state, pid[0] ? " (pid " : "", pid, pid[0] ? ")" : "");
        close(fd);
        return -1;
    }
    char me[32];
    int len = snprintf(me, sizeof me, "%ld\n", (long)getpid());
    if (ftruncate(fd, 0) != 0 || pwrite(fd, me, (size_t)len, 0) != len) {
        /* the pid is only for the message: the lock holds without it */
    }
    return fd;
}

static int
mkdir_parents(const char *path)
{
    char buf[4096];
    if (snprintf(buf, sizeof buf, "%s", path) >= (int)sizeof buf) {
        errno = ENAMETOOLONG;
        return -1;
    }
    for (char *p = buf + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = 0;
        if (mkdir(buf, 0755) && errno != EEXIST)
            return -1;
        *p = '/';
    }
    if (mkdir(buf, 0755) && errno != EEXIST)
        return -1;
    return 0;
}

/* <state>/token: made once (random, mode 0600), then read by the manager
 * and its local workers (manager.h, SECURITY). Written whole to a
 * temporary name and renamed, so that a kill at any instant leaves either
 * no token (the next start makes one) or a whole one, never an empty
 * file that would refuse every later start. RETURN 0 or -1 (err). */
static int
state_token(const char *state, char *path, size_t cap, char *err, size_t errlen)
{
    char tmp[1000];
    if ((size_t)snprintf(path, cap, "%s/token", state) >= cap ||
        (size_t)snprintf(tmp, sizeof tmp, "%s/token.new", state) >= sizeof tmp) {
        snprintf(err, errlen, "the state directory's name is too long (%zu bytes)", strlen(state));
        return -1;
    }
    if (access(path, F_OK) == 0)
        return 0;
    unsigned char r[32];
    char hex[2 * sizeof r + 2];
    size_t got = 0;
    while (got < sizeof r) {
        ssize_t k = getrandom(r + got, sizeof r - got, 0);
        if (k < 0 && errno != EINTR) {
            snprintf(err, errlen, "no random bytes for %s: %s", path, strerror(errno));
            return -1;
        }
        got += k > 0 ? (size_t)k : 0;
    }
    for (size_t i = 0; i < sizeof r; i++)
        snprintf(hex + 2 * i, 3, "%02x", r[i]);
    hex[2 * sizeof r] = '\n';
    hex[2 * sizeof r + 1] = 0;
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    int ok = fd >= 0 && write(fd, hex, strlen(hex)) == (ssize_t)strlen(hex);
    ok = fd >= 0 && fsync(fd) == 0 && ok;
    if (fd >= 0)
        close(fd);
    if (!ok || rename(tmp, path) != 0) {
        int full = errno == ENOSPC || errno == EDQUOT;
        snprintf(err, errlen, "cannot write %s: %s", path,
                 full ? "the disk is full: free some space and run again, nothing was lost"
                      : strerror(errno));
        unlink(tmp);
        return -1;
    }
    return 0;
}

/*
 * The proof's state opened, step by step: the directory and its lock,
 * the workers' token, the proof store, the databases (exactly the
 * proof's piece count: the checker's leaves, tree.h), the tree. Whatever
 * was opened stays in m (run_close closes it, on success or not).
 * RETURN 0 when all is open, else the mgr_exit code to stop with (never
 * MGR_PROVED), the reason on stderr.
 */
static int
run_open(mgr *m, int *lock_fd)
{
    const mgr_opts *o = m->o;
    char err[1024];
    if (mkdir_parents(o->state)) {
        int full = errno == ENOSPC || errno == EDQUOT;
        fprintf(stderr, "checkers prove: cannot create %s: %s\n", o->state,
                full ? "the disk is full" : strerror(errno));
        return full ? MGR_STOPPED : MGR_USAGE;
    }
    *lock_fd = state_lock(o->state, err, sizeof err);
    if (*lock_fd < 0) {
        fprintf(stderr, "checkers prove: %s\n", err);
        return MGR_USAGE;
    }
    if (o->token_file)
        snprintf(m->token_path, sizeof m->token_path, "%s", o->token_file);
    else if (state_token(o->state, m->token_path, sizeof m->token_path, err, sizeof err)) {
        fprintf(stderr, "checkers prove: %s\n", err);
        return MGR_STOPPED;
    }
    if (mgr_read_token(m->token_path, m->token, sizeof m->token, err, sizeof err)) {
        fprintf(stderr, "checkers prove: %s\n", err);
        return MGR_USAGE;
    }
    int rc;
    if (o->db_dir) {
        int pieces = 0;
        if (o->create) {
            pieces = o->create->db_pieces;
        } else {
            eng_pos r;
            int g;
            int irc = mt_info(o->state, &r, &g, &pieces, err, sizeof err);
            if (irc) {
                fprintf(stderr, "checkers prove: %s\n", err);
                return irc == MT_ECORRUPT || irc == MT_EIO ? MGR_DAMAGED : MGR_USAGE;
            }
        }
        /* exactly the proof's piece count: the checker's leaves (tree.h) */
        rc = egdb_open(o->db_dir, pieces, o->cache_bytes, &m->db, err, sizeof err);
        if (rc) {
            fprintf(stderr, "checkers prove: databases %s: %s\n", o->db_dir, err);
            return rc == EGDB_ECORRUPT ? MGR_DAMAGED : MGR_USAGE;
        }
    }
    if (!o->quiet && o->create)
        fprintf(stderr, "checkers prove: creating the state (the root and its seed line, if one is "
                        "given)...\n");
    /* the tree and the proof store: one environment (tree.h, THE STATE'S
     * LAYOUT), the store the tree's (closed with it) */
    rc = mt_open(o->state, o->create, m->db, &m->tree, err, sizeof err);
    if (!rc)
        m->store = mt_store(m->tree);
    if (rc) {
        fprintf(stderr, "checkers prove: %s\n", err);
        return rc == MT_ECORRUPT || rc == MT_ESTORE || rc == MT_EDB ? MGR_DAMAGED
               : rc == MT_ENOSPC || rc == MT_EIO                    ? MGR_STOPPED
                                                                    : MGR_USAGE;
    }
    if (o->leaf_step > 0 && (rc = mt_set_leaf_step(m->tree, o->leaf_step, err, sizeof err))) {
        fprintf(stderr, "checkers prove: %s\n", err);
        return rc == MT_ENOSPC || rc == MT_EIO ? MGR_STOPPED : MGR_DAMAGED;
    }
    mt_stats s;
    mt_stats_get(m->tree, &s);
    if (m->db && !egdb_scope_within(s.db_pieces, egdb_scope(m->db))) {
        char have[48], need[48];
        egdb_scope_name(egdb_scope(m->db), have, sizeof have);
        egdb_scope_name(s.db_pieces, need, sizeof need);
        fprintf(stderr, "checkers prove: the proof rests on the %s-piece databases; %s covers %s\n",
                need, o->db_dir, have);
        return MGR_USAGE;
    }
    return 0;
}

/*
 * The event loop made ready: descriptors, the workers' port, the status
 * pages (mgr_pages), signals and the tick, the local workers. What is
 * made stays in m for run_stop. RETURN 0, or the mgr_exit code to stop
 * with, the reason on stderr.
 */
static int
run_start(mgr *m)
{
    const mgr_opts *o = m->o;
    /* SIGPIPE: not ignored for the process, but blocked for the loop's
     * thread while it runs (mgr_loop_run, manager/loop.h) */
    /* as many descriptors as the system allows; the connection cap stays
     * below them (the databases, the stores and the log need some) */
    struct rlimit rl;
    m->max_conns = o->max_conns > 0 ? o->max_conns : MGR_MAX_CONNS;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0) {
        if (rl.rlim_cur < rl.rlim_max) {
            rl.rlim_cur = rl.rlim_max;
            setrlimit(RLIMIT_NOFILE, &rl);
            getrlimit(RLIMIT_NOFILE, &rl);
        }
        if (rl.rlim_cur != RLIM_INFINITY && (rlim_t)m->max_conns + 64 > rl.rlim_cur)
            m->max_conns = rl.rlim_cur > 128 ? (int)(rl.rlim_cur - 64) : 64;
    }
    m->base = event_base_new();
    char werr[256];
    if (!m->base || mw_open(&m->writer, m->tree, m->base, result_done, m, werr, sizeof werr)) {
        fprintf(stderr, "checkers prove: %s\n", m->base ? werr : "no event loop");
        return MGR_STOPPED;
    }
    if (listen_on(m))
        return MGR_USAGE;
    mt_stats s;
    mt_stats_get(m->tree, &s);
    mlog(m, "listening on port %d (token in %s); root %s, goal %s", m->port, m->token_path,
         s.root_fen, mt_goal_name(s.goal));
    if (o->pages && o->pages->start) {
        mgr_proof pp = {m, m->base, m->tree, m->store, m->db, o->state};
        if (o->pages->start(o->pages->arg, &pp))
            return MGR_USAGE;
    }
    m->sigint = evsignal_new(m->base, SIGINT, on_signal, m);
    m->sigterm = evsignal_new(m->base, SIGTERM, on_signal, m);
    m->sigchld = evsignal_new(m->base, SIGCHLD, on_sigchld, m);
    m->tick = event_new(m->base, -1, EV_PERSIST, on_tick, m);
    event_add(m->sigint, NULL);
    event_add(m->sigterm, NULL);
    event_add(m->sigchld, NULL);
    struct timeval sec = {1, 0};
    event_add(m->tick, &sec);
    m->nlocal = o->workers < MGR_MAX_LOCAL ? o->workers : MGR_MAX_LOCAL;
    if (m->nlocal && !(m->local = calloc((size_t)m->nlocal, sizeof *m->local))) {
        fprintf(stderr, "checkers prove: out of memory for %d local workers\n", m->nlocal);
        return MGR_STOPPED;
    }
    for (int k = 0; k < m->nlocal; k++)
        m->local[k].out = m->local[k].log = -1;
    for (int k = 0; k < m->nlocal; k++)
        spawn_worker(m, k);
    return 0;
}

/*
 * After the event loop: jobs back to the pool, workers told and
 * stopped, this run's time added to the tree, where the proof stands
 * printed (report). RETURN the run's mgr_exit code.
 */
static int
run_wind_down(mgr *m)
{
    char err[1024];
    int code = m->finished ? m->exit_code : MGR_STOPPED;
    if (!m->finished)
        snprintf(m->stop_reason, sizeof m->stop_reason, "the event loop ended");
    /* a result on the writer is committed (or refused) before the tree
     * returns its jobs: it is not lost to the stop */
    mw_wait(m->writer);
    if (m->finished && m->exit_code != code) /* the result stopped the run */
        code = m->exit_code;
    for (mgr_conn *c = m->conns; c; c = c->next)
        if (c->has_job) {
            mgp_msg cm = {.type = MGP_CANCEL};
            cm.u.id = c->job.id;
            send_msg(c, &cm);
        }
    char rerr[512];
    int rr = mt_release_all(m->tree, rerr, sizeof rerr);
    if (rr) {
        mlog(m, "the tree failed returning its jobs to the pool: %s", rerr);
        if (code == MGR_PROVED || code == MGR_STOPPED) {
            code = rr == MT_ENOSPC ? MGR_STOPPED : MGR_DAMAGED;
            snprintf(m->stop_reason, sizeof m->stop_reason, "%s", rerr);
        }
    }
    for (int k = 0; k < m->nlocal; k++)
        if (m->local[k].pid > 0)
            kill(m->local[k].pid, SIGTERM);
    for (int k = 0; k < m->nlocal; k++)
        local_wait(&m->local[k]);
    double t = mgr_now();
    mt_add_seconds(m->tree, t - m->last_save);
    mt_sample(m->tree, t - m->start, err, sizeof err);
    if (!m->o->quiet)
        progress_line(m, 1);
    if (report(m))
        code = MGR_DAMAGED;
    while (m->conns)
        conn_close(m->conns, NULL);
    return code;
}

/* What run_start made, freed (whatever it got to). */
static void
run_stop(mgr *m)
{
    mw_close(m->writer); /* before the base its event is on */
    m->writer = NULL;
    free(m->held);
    m->held = NULL;
    for (int k = 0; k < m->nlocal && m->local; k++)
        local_close(&m->local[k]);
    free(m->local);
    if (m->o->pages && m->o->pages->stop)
        m->o->pages->stop(m->o->pages->arg);
    if (m->listener)
        evconnlistener_free(m->listener);
    if (m->tick)
        event_free(m->tick);
    if (m->sigint)
        event_free(m->sigint);
    if (m->sigterm)
        event_free(m->sigterm);
    if (m->sigchld)
        event_free(m->sigchld);
    if (m->base)
        event_base_free(m->base);
}

/* The run in its steps: open the state, then (unless the proof is
 * settled already) start the loop, run it, wind down and stop; the
 * state is closed however it went. */
int
mgr_run(const mgr_opts *o)
{
    mgr m;
    memset(&m, 0, sizeof m);
    m.o = o;
    m.tty = isatty(2);
    int lock_fd = -1;
    int code = run_open(&m, &lock_fd);
    if (code == 0) {
        m.start = m.last_progress = m.last_sample = m.last_save = mgr_now();
        if (mt_done(m.tree)) {
            snprintf(m.stop_reason, sizeof m.stop_reason, "proved");
            if (report(&m))
                code = MGR_DAMAGED;
        } else {
            code = run_start(&m);
            if (code == 0) {
                mgr_loop_run(m.base);
                code = run_wind_down(&m);
            }
            run_stop(&m);
        }
    }
    mt_close(m.tree); /* and its store, m.store */
    egdb_close(m.db);
    if (lock_fd >= 0)
        close(lock_fd);
    return code;
}
