/*
 * status.c - the manager's pages (--status-port): the proof browser of
 * web.h served from the running manager, with what only the manager
 * knows (its workers, their jobs, jobs a minute, this run's time) handed
 * to the pages through web_opts.run. The pages, the JSON and the limits
 * on requests are web.c's; this file only fills in the run's figures.
 *
 * The pages listen on 127.0.0.1 whatever --listen says for the workers:
 * --status-port HOST:PORT puts them elsewhere, and then they need
 * --status-token-file (web.h, SECURITY). The workers' token is not
 * reused for them: a reader of the proof should not be able to join it
 * as a worker.
 */
#include <stdio.h>
#include <string.h>

#include "manager/mgr_internal.h"
#include "manager/web.h"

/* The run's figures for one request (web_opts.run). */
static void
run_figures(void *arg, web_run *out)
{
    mgr *m = arg;
    double t = mgr_now();
    out->run_s = t - m->start;
    out->per_minute = mgr_jobs_per_minute(m, t);
    out->nworkers = 0;
    for (mgr_conn *c = m->conns; c; c = c->next) {
        if (c->welcomed != 1)
            continue;
        if (out->nworkers < WEB_MAX_WORKERS) {
            web_worker *k = &out->workers[out->nworkers];
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
    /* the stored total is the tree's (web.c reads it at most once a
     * second: mt_stats_get passes over every node) */
    out->unsaved_s = t - m->last_save;
}

int
mgr_status_start(mgr *m)
{
    char token[MGP_TOKEN_MAX + 1] = "", err[600];
    if (m->o->status_token_file &&
        mgr_read_token(m->o->status_token_file, token, sizeof token, err, sizeof err)) {
        fprintf(stderr, "checkers prove: --status-token-file: %s\n", err);
        return -1;
    }
    web_opts o = {.listen = m->o->status_listen,
                  .port = m->o->status_port,
                  .token = token[0] ? token : NULL,
                  .name = "checkers prove",
                  .state = m->o->state,
                  .root_checked = -1,
                  .run = run_figures,
                  .run_arg = m};
    int rc = web_start(m->base, m->tree, m->store, m->db, &o, &m->web, err, sizeof err);
    memset(token, 0, sizeof token);
    if (rc == WEB_ENOTOKEN && !o.token) { /* web.c names serve's option */
        fprintf(stderr,
                "checkers prove: the status page on %s (beyond loopback) needs "
                "--status-token-file F (the secret the pages ask for, at least %d characters; "
                "not the workers' token): anyone on the network could read the proof otherwise\n",
                o.listen, WEB_TOKEN_MIN);
        return -1;
    }
    if (rc) {
        fprintf(stderr, "checkers prove: status page: %s\n", err);
        return -1;
    }
    const char *h = web_host(m->web);
    int v6 = strchr(h, ':') != NULL;
    fprintf(stderr, "checkers prove: status page on http://%s%s%s:%d/ (JSON: /api/status)%s\n",
            v6 ? "[" : "", h, v6 ? "]" : "", web_port(m->web), o.token ? ", with its token" : "");
    web_sample(m->web, 0);
    return 0;
}
