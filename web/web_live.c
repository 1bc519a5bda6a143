/*
 * web_live.c - the proof browser served from a running manager
 * (`checkers prove --status-port`, web.h: web_live_pages): the pages of
 * web.c with what only the manager knows (its workers, their jobs, jobs
 * a minute, this run's time), which it reads through manager.h
 * (mgr_live_get) on each request. The pages, the JSON and the limits on
 * requests are web.c's; this file only starts, samples and stops them
 * on the manager's calls (manager.h, mgr_pages).
 *
 * OWNS: nothing beyond the web_live the caller keeps.
 * CALLS: web.c (web_start, web_sample, web_free, web_host, web_port)
 * and the manager's public header (mgr_live_get, mgr_read_token); the
 * manager calls back into this file only through the mgr_pages
 * pointers, so that manager/ never links against web/.
 *
 * The pages listen on 127.0.0.1 whatever --listen says for the workers:
 * --status-port HOST:PORT puts them elsewhere, and then they need
 * --status-token-file (web.h, SECURITY). The workers' token is not
 * reused for them: a reader of the proof should not be able to join it
 * as a worker.
 */
#include <stdio.h>
#include <string.h>

#include "manager/manager.h"
#include "manager/protocol.h"
#include "web/web.h"

/* The run's figures for one request (web_opts.run): the manager's own,
 * as web_run is mgr_live. */
static void
run_figures(void *arg, web_run *out)
{
    mgr_live_get(arg, out);
}

/* mgr_pages.start: serve the proof the manager has open. */
static int
live_start(void *arg, const mgr_proof *p)
{
    web_live *l = arg;
    char token[MGP_TOKEN_MAX + 1] = "", err[600];
    if (l->token_file && mgr_read_token(l->token_file, token, sizeof token, err, sizeof err)) {
        fprintf(stderr, "checkers prove: --status-token-file: %s\n", err);
        return -1;
    }
    web_opts o = {.listen = l->listen,
                  .port = l->port,
                  .token = token[0] ? token : NULL,
                  .name = "checkers prove",
                  .state = p->state,
                  .root_checked = -1,
                  .run = run_figures,
                  .run_arg = p->m};
    int rc = web_start(p->base, p->tree, p->store, p->db, &o, &l->w, err, sizeof err);
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
    const char *h = web_host(l->w);
    int v6 = strchr(h, ':') != NULL;
    fprintf(stderr, "checkers prove: status page on http://%s%s%s:%d/ (JSON: /api/status)%s\n",
            v6 ? "[" : "", h, v6 ? "]" : "", web_port(l->w), o.token ? ", with its token" : "");
    web_sample(l->w, 0);
    return 0;
}

/* mgr_pages.sample: a point of this run's charts. */
static void
live_sample(void *arg, double run_s)
{
    web_live *l = arg;
    web_sample(l->w, run_s);
}

/* mgr_pages.stop: the pages end with the run. */
static void
live_stop(void *arg)
{
    web_live *l = arg;
    web_free(l->w);
    l->w = NULL;
}

void
web_live_pages(web_live *l, mgr_pages *out)
{
    l->w = NULL;
    out->start = live_start;
    out->sample = live_sample;
    out->stop = live_stop;
    out->arg = l;
}
