/*
 * status.c - the manager's status page (--status-port): libevent's
 * evhttp serving
 *   /status.json  the proof's state as JSON (README, "Status page");
 *   /             a small HTML page: the root's numbers, the top of the
 *                 tree, the workers, and an SVG chart of proof progress.
 * It binds to the address the manager listens on (loopback by default).
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>
#include <event2/event.h>
#include <event2/http.h>
#include <event2/keyvalq_struct.h>

#include "manager/mgr_internal.h"
#include "prover/prover.h"

/* ---- JSON --------------------------------------------------------------- */

static void
json_num(struct evbuffer *b, uint64_t v)
{
    if (v >= MT_INF)
        evbuffer_add_printf(b, "null");
    else
        evbuffer_add_printf(b, "%" PRIu64, v);
}

/* Strings here are FENs, moves, host names: escape quotes, backslashes
 * and control bytes anyway. */
static void
json_str(struct evbuffer *b, const char *s)
{
    evbuffer_add(b, "\"", 1);
    for (; *s; s++) {
        unsigned char ch = (unsigned char)*s;
        if (ch == '"' || ch == '\\')
            evbuffer_add_printf(b, "\\%c", ch);
        else if (ch < 0x20)
            evbuffer_add_printf(b, "\\u%04x", ch);
        else
            evbuffer_add(b, s, 1);
    }
    evbuffer_add(b, "\"", 1);
}

typedef struct top_arg {
    struct evbuffer *b;
    int n;
    int html;
} top_arg;

static int
top_node(const mt_view *v, void *arg)
{
    top_arg *a = arg;
    if (v->depth == 0)
        return 0;
    if (a->html) {
        evbuffer_add_printf(a->b, "<tr><td>%s</td><td>%s</td><td>", v->move,
                            prv_bound_word(v->bound));
        json_num(a->b, v->pn);
        evbuffer_add_printf(a->b, "</td><td>");
        json_num(a->b, v->dn);
        evbuffer_add_printf(a->b, "</td><td>%d</td><td>%u</td><td>%s</td></tr>\n", v->score,
                            v->jobs, v->in_flight ? "yes" : "");
        return 0;
    }
    evbuffer_add_printf(a->b, "%s{\"move\":", a->n++ ? "," : "");
    json_str(a->b, v->move);
    evbuffer_add_printf(a->b, ",\"result\":\"%s\",\"pn\":", prv_bound_word(v->bound));
    json_num(a->b, v->pn);
    evbuffer_add_printf(a->b, ",\"dn\":");
    json_num(a->b, v->dn);
    evbuffer_add_printf(a->b, ",\"score\":%d,\"jobs\":%u,\"in_flight\":%s}", v->score, v->jobs,
                        v->in_flight ? "true" : "false");
    return 0;
}

typedef struct hist_arg {
    struct evbuffer *b;
    int n;
    double tmax;
    uint64_t nmax;
    double xs[2048], pn[2048], dn[2048], proved[2048];
    int cnt;
} hist_arg;

static void
hist_row(double s, uint64_t pn, uint64_t dn, uint64_t nodes, uint64_t jobs, uint64_t proved,
         int bound, void *arg)
{
    hist_arg *a = arg;
    if (a->b) {
        evbuffer_add_printf(a->b, "%s[%.1f,", a->n++ ? "," : "", s);
        json_num(a->b, pn);
        evbuffer_add_printf(a->b, ",");
        json_num(a->b, dn);
        evbuffer_add_printf(a->b, ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",\"%s\"]", nodes, jobs,
                            proved, prv_bound_word((eng_bound)bound));
    }
    /* for the chart: keep every sample while there is room, then every other */
    if (a->cnt == 2048) {
        for (int i = 0; i < 1024; i++) {
            a->xs[i] = a->xs[2 * i];
            a->pn[i] = a->pn[2 * i];
            a->dn[i] = a->dn[2 * i];
            a->proved[i] = a->proved[2 * i];
        }
        a->cnt = 1024;
    }
    a->xs[a->cnt] = a->tmax + s; /* samples of later runs continue the axis */
    a->pn[a->cnt] = pn >= MT_INF ? -1 : (double)pn;
    a->dn[a->cnt] = dn >= MT_INF ? -1 : (double)dn;
    a->proved[a->cnt] = (double)proved;
    a->cnt++;
    (void)jobs;
}

static void
status_json(mgr *m, struct evbuffer *b)
{
    mt_stats s;
    mt_stats_get(m->tree, &s);
    double t = mgr_now();
    evbuffer_add_printf(b, "{\"root\":");
    json_str(b, s.root_fen);
    evbuffer_add_printf(b, ",\"goal\":\"%s\",\"result\":\"%s\",\"settled\":%s,",
                        mt_goal_name(s.goal), prv_bound_word(s.root_bound),
                        mt_done(m->tree) ? "true" : "false");
    evbuffer_add_printf(b, "\"question\":{\"attacker\":\"%s\",\"target\":\"%s\"},",
                        s.q.attacker == ENG_BLACK ? "black" : "white",
                        s.q.target == ENG_WIN ? "win" : "draw");
    evbuffer_add_printf(b, "\"pn\":");
    json_num(b, s.root_pn);
    evbuffer_add_printf(b, ",\"dn\":");
    json_num(b, s.root_dn);
    evbuffer_add_printf(b, ",\"h\":");
    if (s.h >= MT_H_INF)
        evbuffer_add_printf(b, "null");
    else
        evbuffer_add_printf(b, "%d", s.h);
    evbuffer_add_printf(b,
                        ",\"tree\":{\"nodes\":%" PRIu64 ",\"expanded\":%" PRIu64
                        ",\"leaves_proven\":%" PRIu64 ",\"in_flight\":%" PRIu64 "},",
                        s.nodes, s.expanded, s.leaves_proven, s.in_flight);
    evbuffer_add_printf(b,
                        "\"jobs\":{\"issued\":%" PRIu64 ",\"done\":%" PRIu64 ",\"settled\":%" PRIu64
                        ",\"per_minute\":%.2f,\"budget_ms\":%u},",
                        s.jobs_issued, s.jobs_done, s.jobs_proved, mgr_jobs_per_minute(m, t),
                        s.job_ms);
    evbuffer_add_printf(b, "\"db_pieces\":%d,\"seconds\":{\"run\":%.1f,\"total\":%.1f},",
                        s.db_pieces, t - m->start, s.seconds + (t - m->last_save));
    evbuffer_add_printf(b, "\"workers\":[");
    int n = 0;
    for (mgr_conn *c = m->conns; c; c = c->next) {
        if (c->welcomed != 1)
            continue;
        evbuffer_add_printf(b, "%s{\"id\":%u,\"name\":", n++ ? "," : "", c->id);
        json_str(b, c->name);
        evbuffer_add_printf(b, ",\"address\":");
        json_str(b, c->addr);
        evbuffer_add_printf(b, ",\"job\":");
        if (c->has_job)
            evbuffer_add_printf(b, "%" PRIu64, c->job.id);
        else
            evbuffer_add_printf(b, "null");
        evbuffer_add_printf(b, ",\"jobs_done\":%" PRIu64 ",\"connected_s\":%.1f}", c->jobs_done,
                            t - c->since);
    }
    evbuffer_add_printf(b, "],\"top\":[");
    top_arg ta = {b, 0, 0};
    mt_walk(m->tree, 1, top_node, &ta);
    evbuffer_add_printf(b, "],\"history\":[");
    static hist_arg ha;
    memset(&ha, 0, sizeof ha);
    ha.b = b;
    mt_history(m->tree, hist_row, &ha);
    evbuffer_add_printf(b, "]}\n");
}

/* ---- HTML and the chart -------------------------------------------------------- */

static void
chart(mgr *m, struct evbuffer *b)
{
    static hist_arg ha;
    memset(&ha, 0, sizeof ha);
    mt_history(m->tree, hist_row, &ha);
    const int W = 640, H = 240, L = 50, B = 24;
    evbuffer_add_printf(b,
                        "<svg xmlns='http://www.w3.org/2000/svg' width='%d' height='%d' "
                        "style='background:#fff;border:1px solid #ccc'>\n",
                        W, H);
    if (ha.cnt < 2) {
        evbuffer_add_printf(b, "<text x='20' y='120'>the chart appears after two samples "
                               "(one every 10 s)</text></svg>\n");
        return;
    }
    double tmax = ha.xs[ha.cnt - 1] > 0 ? ha.xs[ha.cnt - 1] : 1, vmax = 1;
    for (int i = 0; i < ha.cnt; i++) {
        vmax = ha.pn[i] > vmax ? ha.pn[i] : vmax;
        vmax = ha.dn[i] > vmax ? ha.dn[i] : vmax;
        vmax = ha.proved[i] > vmax ? ha.proved[i] : vmax;
    }
    double lmax = log10(vmax + 1);
    const char *names[3] = {"root proof number", "root disproof number", "jobs settled"};
    const char *colors[3] = {"#c0392b", "#2471a3", "#229954"};
    for (int k = 0; k < 3; k++) {
        double *v = k == 0 ? ha.pn : k == 1 ? ha.dn : ha.proved;
        evbuffer_add_printf(b, "<polyline fill='none' stroke='%s' stroke-width='1.5' points='",
                            colors[k]);
        for (int i = 0; i < ha.cnt; i++) {
            if (v[i] < 0)
                continue;
            double x = L + (W - L - 10) * ha.xs[i] / tmax;
            double y = (H - B) - (H - B - 10) * log10(v[i] + 1) / (lmax > 0 ? lmax : 1);
            evbuffer_add_printf(b, "%.1f,%.1f ", x, y);
        }
        evbuffer_add_printf(b, "'/>\n<text x='%d' y='%d' fill='%s' font-size='12'>%s</text>\n",
                            L + 10, 16 + 14 * k, colors[k], names[k]);
    }
    evbuffer_add_printf(b,
                        "<line x1='%d' y1='%d' x2='%d' y2='%d' stroke='#000'/>"
                        "<line x1='%d' y1='10' x2='%d' y2='%d' stroke='#000'/>"
                        "<text x='%d' y='%d' font-size='11'>0</text>"
                        "<text x='%d' y='%d' font-size='11' text-anchor='end'>%.0f s</text>"
                        "<text x='4' y='14' font-size='11'>%.0f</text>"
                        "<text x='4' y='%d' font-size='11'>(log)</text></svg>\n",
                        L, H - B, W - 10, H - B, L, L, H - B, L, H - 8, W - 10, H - 8, tmax, vmax,
                        H - B);
}

static void
status_html(mgr *m, struct evbuffer *b)
{
    mt_stats s;
    mt_stats_get(m->tree, &s);
    double t = mgr_now();
    evbuffer_add_printf(b, "<!doctype html><html><head><meta charset='utf-8'>"
                           "<meta http-equiv='refresh' content='5'><title>checkers prove</title>"
                           "<style>body{font-family:sans-serif;margin:1.5em}td,th{padding:2px 8px;"
                           "text-align:right}th{background:#eee}</style></head><body>\n");
    evbuffer_add_printf(b, "<h1>Proof of <code>%s</code></h1>\n", s.root_fen);
    evbuffer_add_printf(b,
                        "<p>goal <b>%s</b>: result so far <b>%s</b>%s; question: does %s %s?"
                        " root pn ",
                        mt_goal_name(s.goal), prv_bound_word(s.root_bound),
                        mt_done(m->tree) ? " (settled)" : "",
                        s.q.attacker == ENG_BLACK ? "Black" : "White",
                        s.q.target == ENG_WIN ? "win" : "at least draw");
    json_num(b, s.root_pn);
    evbuffer_add_printf(b, ", dn ");
    json_num(b, s.root_dn);
    evbuffer_add_printf(b, ", threshold h %s.</p>\n", s.h >= MT_H_INF ? "none (final)" : "");
    evbuffer_add_printf(b,
                        "<p>tree %" PRIu64 " positions (%" PRIu64
                        " expanded), leaves proven %" PRIu64 ", jobs %" PRIu64 " done (%" PRIu64
                        " settled), %" PRIu64
                        " in flight, %.1f jobs a minute; this run %.0f s.</p>\n",
                        s.nodes, s.expanded, s.leaves_proven, s.jobs_done, s.jobs_proved,
                        s.in_flight, mgr_jobs_per_minute(m, t), t - m->start);
    evbuffer_add_printf(b, "<h2>Progress</h2>\n");
    chart(m, b);
    evbuffer_add_printf(b, "<h2>Top of the tree</h2><table><tr><th>move</th><th>result</th>"
                           "<th>pn</th><th>dn</th><th>score</th><th>jobs</th><th>in flight</th>"
                           "</tr>\n");
    top_arg ta = {b, 0, 1};
    mt_walk(m->tree, 1, top_node, &ta);
    evbuffer_add_printf(b, "</table><h2>Workers</h2><table><tr><th>id</th><th>name</th>"
                           "<th>address</th><th>job</th><th>jobs done</th></tr>\n");
    for (mgr_conn *c = m->conns; c; c = c->next) {
        if (c->welcomed != 1)
            continue;
        char *name = evhttp_htmlescape(c->name);
        evbuffer_add_printf(b, "<tr><td>%u</td><td>%s</td><td>%s</td><td>", c->id, name ? name : "",
                            c->addr);
        free(name);
        if (c->has_job)
            evbuffer_add_printf(b, "%" PRIu64, c->job.id);
        evbuffer_add_printf(b, "</td><td>%" PRIu64 "</td></tr>\n", c->jobs_done);
    }
    evbuffer_add_printf(b, "</table><p><a href='/status.json'>status.json</a></p></body></html>\n");
}

static void
on_request(struct evhttp_request *req, void *arg)
{
    mgr *m = arg;
    const char *uri = evhttp_request_get_uri(req);
    struct evbuffer *b = evbuffer_new();
    struct evkeyvalq *h = evhttp_request_get_output_headers(req);
    if (!strcmp(uri, "/status.json")) {
        status_json(m, b);
        evhttp_add_header(h, "Content-Type", "application/json");
        evhttp_send_reply(req, 200, "OK", b);
    } else if (!strcmp(uri, "/") || !strcmp(uri, "/index.html")) {
        status_html(m, b);
        evhttp_add_header(h, "Content-Type", "text/html; charset=utf-8");
        evhttp_send_reply(req, 200, "OK", b);
    } else {
        evbuffer_add_printf(b, "not found\n");
        evhttp_send_reply(req, 404, "Not Found", b);
    }
    evbuffer_free(b);
}

int
mgr_status_start(mgr *m)
{
    m->http = evhttp_new(m->base);
    if (!m->http)
        return -1;
    const char *host = "127.0.0.1";
    char hbuf[128];
    if (m->o->listen) {
        snprintf(hbuf, sizeof hbuf, "%s", m->o->listen);
        char *colon = strrchr(hbuf, ':');
        if (colon)
            *colon = 0;
        if (hbuf[0] == '[') {
            memmove(hbuf, hbuf + 1, strlen(hbuf));
            hbuf[strlen(hbuf) - 1] = 0;
        }
        host = hbuf;
    }
    evhttp_set_allowed_methods(m->http, EVHTTP_REQ_GET);
    evhttp_set_gencb(m->http, on_request, m);
    if (evhttp_bind_socket(m->http, host, (uint16_t)m->o->status_port)) {
        fprintf(stderr, "checkers prove: cannot serve the status page on %s:%d\n", host,
                m->o->status_port);
        return -1;
    }
    fprintf(stderr, "checkers prove: status page on http://%s:%d/ (JSON: /status.json)\n", host,
            m->o->status_port);
    return 0;
}
