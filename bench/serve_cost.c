/*
 * serve_cost.c - what the proof browser (web/web.h) costs on a large
 * tree: the time `checkers serve` takes to open it, and the time to
 * answer the requests that open its pages, over HTTP on loopback.
 *
 * The tree is the proof tree of the start position grown by the
 * manager's own selection, every job unresolved so that each expands
 * its leaf (as bench/tree_cost.c makes it; new nodes get the static
 * evaluation: the manager runs no search), to SERVE_BENCH_MAX nodes
 * (default 1,000,000). It is
 * closed, then opened read-only as `serve` opens it, and served.
 *
 * Timed (each request SERVE_BENCH_REPS times, default 20; the median):
 *   GET /tree            the browser's page for the root: the page and
 *                        the root's moves (what opens it)
 *   GET /api/node?fen=   one deep position's moves (a click)
 *   GET /                the overview (its charts and the leaf lists
 *                        scan the tree: O(nodes))
 * Baseline, in the same run: the whole tree as JSON, node by node (what
 * a page that did not load positions on demand would have to send
 * before it showed anything), built in memory without HTTP.
 *
 * The state lives in SERVE_BENCH_DIR (default /dev/shm when it exists);
 * SERVE_BENCH_KEEP=1 keeps it (its path is printed) for `checkers serve`,
 * and SERVE_BENCH_STATE=DIR measures a state kept before instead of
 * growing one.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <event2/buffer.h>
#include <event2/event.h>
#include <event2/http.h>

#include "bench/bench_util.h"
#include "engine/engine.h"
#include "manager/tree.h"
#include "web/web.h"
#include "prover/store.h"

/* ---- types -------------------------------------------------------------- */

typedef struct fetch {
    struct event_base *base;
    int code;
    size_t bytes;
} fetch;

typedef struct deep_arg {
    eng_pos pos;
    uint64_t seq, want; /* the want-th leaf met (a deep one, late in creation) */
} deep_arg;

/* ---- functions ---------------------------------------------------------- */

static int
env_int(const char *name, int def)
{
    const char *s = getenv(name);
    return s && atoi(s) > 0 ? atoi(s) : def;
}

static long
rss_kb(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long kb = -1;
    while (f && fgets(line, sizeof line, f))
        if (!strncmp(line, "VmRSS:", 6))
            kb = strtol(line + 6, NULL, 10);
    if (f)
        fclose(f);
    return kb;
}

static void
on_done(struct evhttp_request *req, void *arg)
{
    fetch *f = arg;
    f->code = req ? evhttp_request_get_response_code(req) : -1;
    f->bytes = req ? evbuffer_get_length(evhttp_request_get_input_buffer(req)) : 0;
    event_base_loopbreak(f->base);
}

/* One GET over a new connection, in base's loop; RETURN its seconds. */
static double
get(struct event_base *base, int port, const char *uri, fetch *f)
{
    double t0 = bench_now();
    struct evhttp_connection *c = evhttp_connection_base_new(base, NULL, "127.0.0.1", port);
    struct evhttp_request *r = evhttp_request_new(on_done, f);
    f->base = base;
    f->code = 0;
    evhttp_add_header(evhttp_request_get_output_headers(r), "Host", "127.0.0.1");
    evhttp_make_request(c, r, EVHTTP_REQ_GET, uri);
    event_base_dispatch(base);
    double s = bench_now() - t0;
    evhttp_connection_free(c);
    return s;
}

static double
median_get(struct event_base *base, int port, const char *uri, int reps, fetch *f)
{
    double *v = malloc((size_t)reps * sizeof *v);
    for (int i = 0; i < reps; i++)
        v[i] = get(base, port, uri, f);
    qsort(v, (size_t)reps, sizeof *v, bench_cmp_double);
    double m = v[reps / 2];
    free(v);
    return m;
}

static int
deep_leaf(const mt_view *v, void *arg)
{
    deep_arg *a = arg;
    if (!v->expanded && ++a->seq == a->want)
        a->pos = v->pos;
    return 0;
}

/* The baseline: every node as JSON (its position and numbers). */
static int
node_json(const mt_view *v, void *arg)
{
    struct evbuffer *b = arg;
    char fen[ENG_FEN_MAX];
    eng_format_fen(&v->pos, fen, sizeof fen);
    evbuffer_add_printf(b,
                        "{\"fen\":\"%s\",\"bound\":%d,\"pn\":%" PRIu64 ",\"dn\":%" PRIu64
                        ",\"score\":%d,\"jobs\":%u,\"children\":%u},",
                        fen, v->bound, v->pn, v->dn, v->score, v->jobs, v->children);
    return 0;
}

int
main(void)
{
    struct stat sb;
    const char *base_dir = getenv("SERVE_BENCH_DIR");
    if (!base_dir)
        base_dir = stat("/dev/shm", &sb) == 0 ? "/dev/shm" : "/tmp";
    int reps = env_int("SERVE_BENCH_REPS", 20);
    long max_nodes = env_int("SERVE_BENCH_MAX", 1000000);
    int keep = env_int("SERVE_BENCH_KEEP", 0);
    char dir[512], err[512];
    const char *again = getenv("SERVE_BENCH_STATE");
    if (again)
        snprintf(dir, sizeof dir, "%s", again);
    else
        snprintf(dir, sizeof dir, "%s/serve_cost.XXXXXX", base_dir);
    if (!again && !mkdtemp(dir)) {
        fprintf(stderr, "serve_cost: cannot make a folder in %s\n", base_dir);
        return 1;
    }
    pst_env *st; /* the tree's store (manager/tree.h, mt_store) */
    mt_create cr = {.goal = MT_GOAL_VALUE,
                    .job_ms = 30000,
                    .job_max_ms = 30000, /* every unresolved job expands its leaf */
                    .h0 = 200,
                    .h_step = 200};
    eng_start(&cr.root);
    mt_tree *t;
    if (mt_open(dir, again ? NULL : &cr, NULL, &t, err, sizeof err)) {
        fprintf(stderr, "serve_cost: %s\n", err);
        return 1;
    }
    /* grow (a kept state: to max_nodes, when it has fewer) */
    double g0 = bench_now();
    mt_stats ms;
    int rc = 0;
    for (long jobs = 0;; jobs++) {
        if (jobs % 1000 == 0) {
            mt_stats_get(t, &ms);
            if ((long)ms.nodes >= max_nodes)
                break;
        }
        mt_job j;
        int r = mt_pick(t, &j, err, sizeof err);
        if (r != MT_PICK_JOB) {
            if (r < 0) {
                fprintf(stderr, "serve_cost: pick: %s\n", err);
                rc = 1;
            }
            break;
        }
        if (mt_result(t, j.id, ENG_LW, 0, 0, 0, 1, 1, NULL, 0, 0, err, sizeof err)) {
            fprintf(stderr, "serve_cost: result: %s\n", err);
            rc = 1;
            break;
        }
    }
    mt_stats_get(t, &ms);
    double grow_s = bench_now() - g0;
    mt_close(t);
    if (rc)
        return rc;

    /* open it as `serve` does */
    long rss0 = rss_kb();
    double o0 = bench_now();
    if (mt_open_ro(dir, NULL, &t, err, sizeof err)) {
        fprintf(stderr, "serve_cost: %s\n", err);
        return 1;
    }
    st = mt_store(t);
    double open_s = bench_now() - o0;
    long rss1 = rss_kb();
    deep_arg da = {.want = 0};
    mt_each(t, deep_leaf, &da); /* count the leaves, then take the last one */
    da.want = da.seq;
    da.seq = 0;
    mt_each(t, deep_leaf, &da);
    char fen[ENG_FEN_MAX], uri[400];
    eng_format_fen(&da.pos, fen, sizeof fen);

    struct event_base *base = event_base_new();
    web_server *w;
    web_opts o = {.port = 0, .name = "serve_cost", .state = dir, .root_checked = -1};
    if (!base || web_start(base, t, st, NULL, &o, &w, err, sizeof err)) {
        fprintf(stderr, "serve_cost: %s\n", err);
        return 1;
    }
    int port = web_port(w);
    bench_machine();
    if (again)
        printf("the proof tree of the start position, %" PRIu64 " nodes (%" PRIu64
               " expanded), kept in %s\n",
               ms.nodes, ms.expanded, dir);
    else
        printf("the proof tree of the start position, %" PRIu64 " nodes (%" PRIu64
               " expanded), grown in %.0f s; state on %s\n",
               ms.nodes, ms.expanded, grow_s, base_dir);
    printf("opened read-only as `checkers serve` opens it: %.2f s, %.0f MB more memory\n", open_s,
           (rss1 - rss0) / 1024.0);
    fetch f;
    printf("%-44s %10s %10s %6s\n", "request (median of reps)", "ms", "bytes", "status");
    double tree_ms = median_get(base, port, "/tree", reps, &f) * 1000;
    printf("%-44s %10.2f %10zu %6d\n", "GET /tree (the root's page)", tree_ms, f.bytes, f.code);
    size_t tree_bytes = f.bytes;
    double api_ms = median_get(base, port, "/api/node", reps, &f) * 1000;
    printf("%-44s %10.2f %10zu %6d\n", "GET /api/node (the root's moves)", api_ms, f.bytes, f.code);
    snprintf(uri, sizeof uri, "/api/node?fen=%s", fen);
    double deep_ms = median_get(base, port, uri, reps, &f) * 1000;
    printf("%-44s %10.2f %10zu %6d\n", "GET /api/node?fen=(the last leaf made)", deep_ms, f.bytes,
           f.code);
    double over_ms = median_get(base, port, "/", reps < 5 ? reps : 5, &f) * 1000;
    printf("%-44s %10.2f %10zu %6d\n", "GET / (the overview: scans the tree)", over_ms, f.bytes,
           f.code);
    /* the baseline: the whole tree as JSON, in memory */
    struct evbuffer *all = evbuffer_new();
    double b0 = bench_now();
    mt_each(t, node_json, all);
    double all_ms = (bench_now() - b0) * 1000;
    printf("%-44s %10.2f %10zu %6s\n", "baseline: the whole tree as JSON (no HTTP)", all_ms,
           evbuffer_get_length(all), "-");
    printf("the root's page costs 1/%.0f of the baseline's time and 1/%.0f of its bytes\n",
           all_ms / tree_ms, (double)evbuffer_get_length(all) / (double)tree_bytes);
    evbuffer_free(all);
    web_free(w);
    event_base_free(base);
    mt_close(t);
    if (keep || again) {
        printf("state kept in %s (checkers serve --state %s)\n", dir, dir);
    } else {
        char cmd[700];
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
        if (system(cmd) != 0)
            fprintf(stderr, "serve_cost: could not remove %s\n", dir);
    }
    return 0;
}
