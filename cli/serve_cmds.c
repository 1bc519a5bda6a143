/*
 * serve_cmds.c - `checkers serve`: a proof's state directory as web
 * pages (web/web.h is the manual), read-only.
 *
 * Nothing of the state is written: the tree is opened with mt_open_ro,
 * the proof store with PST_RDONLY (both LMDB MDB_RDONLY), the databases
 * read-only as always. LMDB's lock.mdb files are LMDB's shared reader
 * table, not the state: a reader takes a slot there, as every reader
 * does (prover/store.h says the same of the store).
 *
 * Exit status: 0 stopped by a signal, 2 bad usage or input (options, no
 * proof in DIR, an address that cannot be served), 3 a damaged tree,
 * store or database, or a settled root whose proof the checker refuses.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/resource.h>
#include <unistd.h>

#include <event2/event.h>

#include "cli/cli.h"
#include "egdb/egdb.h"
#include "manager/loop.h"
#include "manager/manager.h"
#include "manager/protocol.h"
#include "manager/tree.h"
#include "web/web.h"
#include "prover/check.h"
#include "prover/prover.h"
#include "prover/store.h"

/* ---- static data ------------------------------------------------------ */

static const char serve_help[] =
    "usage: checkers serve --state DIR [--db DIR] [--port P]\n"
    "                      [--listen HOST:PORT --token-file F] [--no-check] [--cache MB]\n"
    "\n"
    "Serves the proof in DIR (`checkers prove --state DIR`) as web pages, read-only:\n"
    "an overview with charts of how the proof went, and a browser of its tree -\n"
    "the board, the line from the root, every move with its child's status (the\n"
    "proven value and whether the checker accepted it, the proof and disproof\n"
    "numbers, the heuristic score, the jobs spent), the move the proof takes -\n"
    "with exports of the line and of the proof below a position as PDN, and of\n"
    "the tree below it as JSON. Nothing in DIR is written. A running proof is\n"
    "served live by its own manager: `checkers prove --status-port P`.\n"
    "\n"
    "  --state DIR     the proof's state directory\n"
    "  --db DIR        its endgame databases (default: where the proof was started\n"
    "                  with them)\n"
    "  --port P        port on 127.0.0.1 (default 8080; 0: any free port)\n"
    "  --listen H:P    serve on this address instead; beyond loopback it needs\n"
    "  --token-file F  the secret (first line of F) every request must give:\n"
    "                  the header `Authorization: Bearer TOKEN`, or once in a\n"
    "                  browser http://HOST:P/?token=TOKEN, which sets a cookie\n"
    "  --no-check      do not run the checker over a settled root's whole proof\n"
    "                  at start (a huge proof: minutes); /api/check?fen= still\n"
    "                  checks any position on demand\n"
    "  --cache MB      database cache (default 64)\n"
    "\n"
    "Pages: / (overview), /tree?fen=FEN (the browser), /api/node?fen=FEN,\n"
    "/api/status, /api/check?fen=FEN, /export/line.pdn, /export/proof.pdn,\n"
    "/export/subtree.json (web/web.h and docs/web.md).\n"
    "Prints `serving http://HOST:PORT/` on stderr once it listens; Ctrl-C stops it.\n"
    "Exit status: 0 stopped, 2 bad usage or input, 3 a damaged state or a root\n"
    "whose proof the checker refuses.\n"
    "\n"
    "Examples:\n"
    "  checkers serve --state proofs/acf-16\n"
    "  checkers serve --state proofs/acf-16 --listen 0.0.0.0:8080 --token-file ~/.view-token\n";

static volatile sig_atomic_t stop_signal;

/* ---- helpers ------------------------------------------------------------ */

static void
on_stop(evutil_socket_t sig, short what, void *arg)
{
    (void)what;
    stop_signal = (sig_atomic_t)sig;
    event_base_loopbreak(arg);
}

/* The pid of a manager that holds DIR/lock, or 0 when none runs. Opens
 * the lock read-only and never creates it. */
static long
running_manager(const char *state)
{
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/lock", state);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    long pid = 0;
    if (flock(fd, LOCK_SH | LOCK_NB) != 0 && errno == EWOULDBLOCK) {
        char buf[32] = "";
        ssize_t n = pread(fd, buf, sizeof buf - 1, 0);
        buf[n > 0 ? n : 0] = 0;
        pid = strtol(buf, NULL, 10);
        if (pid <= 0)
            pid = -1;
    }
    close(fd);
    return pid;
}

/* ---- serve --------------------------------------------------------------------- */

int
cli_serve(int argc, char **argv)
{
    const char *state = NULL, *db_dir = NULL, *listen = NULL, *token_file = NULL;
    long port = 8080, cache_mb = 64;
    int check = 1;
    for (int i = 1; i < argc; i++) {
        const char *o = argv[i];
        int more = i + 1 < argc;
        if (cli_is_help(o)) {
            fputs(serve_help, stdout);
            return CLI_EXIT_OK;
        } else if (!strcmp(o, "--state") && more) {
            state = argv[++i];
        } else if (!strcmp(o, "--db") && more) {
            db_dir = argv[++i];
        } else if (!strcmp(o, "--port") && more) {
            if ((port = cli_parse_uint("serve", "--port", argv[++i], 0, 65535)) < 0)
                return CLI_EXIT_USAGE;
        } else if (!strcmp(o, "--listen") && more) {
            listen = argv[++i];
        } else if (!strcmp(o, "--token-file") && more) {
            token_file = argv[++i];
        } else if (!strcmp(o, "--cache") && more) {
            if ((cache_mb = cli_parse_uint("serve", "--cache (MB)", argv[++i], 1, 1000000)) < 0)
                return CLI_EXIT_USAGE;
        } else if (!strcmp(o, "--no-check")) {
            check = 0;
        } else {
            fprintf(stderr, "checkers serve: unknown or incomplete option '%s'\n", o);
            return CLI_EXIT_USAGE;
        }
    }
    if (!state) {
        fprintf(stderr, "checkers serve: needs --state DIR ('checkers serve --help')\n");
        return CLI_EXIT_USAGE;
    }
    char err[1024], kept_db[PATH_MAX] = "";
    char token[MGP_TOKEN_MAX + 1] = "";
    if (token_file && mgr_read_token(token_file, token, sizeof token, err, sizeof err)) {
        fprintf(stderr, "checkers serve: --token-file: %s\n", err);
        return CLI_EXIT_USAGE;
    }
    eng_pos root;
    int goal, pieces;
    int rc = mt_info_db(state, &root, &goal, &pieces, kept_db, sizeof kept_db, err, sizeof err);
    if (rc) {
        fprintf(stderr, "checkers serve: %s\n", err);
        return rc == MT_ECORRUPT || rc == MT_EIO ? CLI_EXIT_DAMAGED : CLI_EXIT_USAGE;
    }
    if (!db_dir && kept_db[0])
        db_dir = kept_db;
    egdb *db = NULL;
    pst_env *st = NULL;
    mt_tree *t = NULL;
    struct event_base *base = NULL;
    web_server *w = NULL;
    struct event *sigint = NULL, *sigterm = NULL;
    int code = CLI_EXIT_OK;
    if (pieces > 0) {
        if (!db_dir) {
            fprintf(stderr,
                    "checkers serve: the proof in %s rests on %d-piece databases: give "
                    "--db DIR\n",
                    state, pieces);
            return CLI_EXIT_USAGE;
        }
        rc = egdb_open(db_dir, pieces, (size_t)cache_mb << 20, &db, err, sizeof err);
        if (rc) {
            fprintf(stderr, "checkers serve: databases %s: %s\n", db_dir, err);
            return rc == EGDB_ECORRUPT ? CLI_EXIT_DAMAGED : CLI_EXIT_USAGE;
        }
    }
    long mgr_pid = running_manager(state);
    double t0 = cli_now();
    /* the tree and its store, read-only, in the state's one environment */
    rc = mt_open_ro(state, db, &t, err, sizeof err);
    if (!rc)
        st = mt_store(t);
    if (rc) {
        fprintf(stderr, "checkers serve: %s\n", err);
        code = rc == MT_ECORRUPT || rc == MT_ESTORE || rc == MT_EDB ? CLI_EXIT_DAMAGED
                                                                    : CLI_EXIT_USAGE;
        goto out;
    }
    mt_stats s;
    mt_stats_get(t, &s);
    fprintf(stderr, "checkers serve: %s: %llu positions loaded in %.2f s\n", state,
            (unsigned long long)s.nodes, cli_now() - t0);
    /* a settled root is shown only with its whole proof checked (as
     * `checkers tree` does) */
    char check_text[600] = "";
    int checked = -1;
    if (mt_done(t) && check) {
        pchk_result ck;
        double c0 = cli_now();
        rc = pchk_check(st, db, &root, &ck, err, sizeof err);
        double secs = cli_now() - c0;
        if (rc) {
            fprintf(stderr, "checkers serve: the checker cannot run on the root: %s\n", err);
            code = CLI_EXIT_DAMAGED;
            goto out;
        }
        if (ck.status != PCHK_VALID || !mt_goal_settled(goal, ck.bound)) {
            fprintf(stderr,
                    "checkers serve: the state %s is damaged: the settled root's proof fails the "
                    "checker%s%s%s%s\n",
                    state, ck.status == PCHK_INVALID ? " at " : "",
                    ck.status == PCHK_INVALID ? ck.where : "",
                    ck.status == PCHK_INVALID ? ": " : "", ck.status == PCHK_INVALID ? ck.why : "");
            code = CLI_EXIT_DAMAGED;
            goto out;
        }
        checked = 1;
        snprintf(check_text, sizeof check_text,
                 "the checker accepted the root's whole proof (%s: %llu positions, %llu database "
                 "leaves, checked in %.2f s when serve started)",
                 prv_bound_word(ck.bound), (unsigned long long)ck.positions,
                 (unsigned long long)ck.leaves_db, secs);
    } else if (mt_done(t)) {
        snprintf(check_text, sizeof check_text,
                 "not checked whole (serve --no-check); every value shown as admitted was "
                 "checked when it was written");
    } else {
        snprintf(check_text, sizeof check_text,
                 "the root is not settled: every value shown as admitted was checked when it "
                 "was written");
    }
    if (mgr_pid)
        fprintf(stderr,
                "checkers serve: a manager is running on %s (pid %ld): these pages show its last "
                "commit as of now; its --status-port pages follow it live\n",
                state, mgr_pid);
    /* SIGPIPE: blocked for the loop's thread (mgr_loop_run), not ignored
     * for the process (manager/loop.h) */
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
        rl.rlim_cur = rl.rlim_max;
        setrlimit(RLIMIT_NOFILE, &rl);
    }
    base = event_base_new();
    if (!base) {
        fprintf(stderr, "checkers serve: no event loop\n");
        code = CLI_EXIT_FAIL;
        goto out;
    }
    web_opts o = {.listen = listen,
                  .port = (int)port,
                  .token = token[0] ? token : NULL,
                  .name = "checkers serve",
                  .state = state,
                  .root_checked = checked,
                  .check_text = check_text};
    rc = web_start(base, t, st, db, &o, &w, err, sizeof err);
    memset(token, 0, sizeof token);
    if (rc) {
        fprintf(stderr, "checkers serve: %s\n", err);
        code = CLI_EXIT_USAGE;
        goto out;
    }
    sigint = evsignal_new(base, SIGINT, on_stop, base);
    sigterm = evsignal_new(base, SIGTERM, on_stop, base);
    event_add(sigint, NULL);
    event_add(sigterm, NULL);
    const char *h = web_host(w);
    int v6 = strchr(h, ':') != NULL;
    fprintf(stderr,
            "checkers serve: the proof of %s (%s), read-only: serving http://%s%s%s:%d/%s\n",
            s.root_fen, prv_bound_word(s.root_bound), v6 ? "[" : "", h, v6 ? "]" : "", web_port(w),
            o.token ? " (with its token)" : "");
    mgr_loop_run(base);
    fprintf(stderr, "checkers serve: stopped (%s)\n",
            stop_signal == SIGINT    ? "SIGINT"
            : stop_signal == SIGTERM ? "SIGTERM"
                                     : "event loop");
out:
    if (sigint)
        event_free(sigint);
    if (sigterm)
        event_free(sigterm);
    web_free(w);
    if (base)
        event_base_free(base);
    mt_close(t); /* and its store, st */
    egdb_close(db);
    return code;
}
