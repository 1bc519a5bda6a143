/*
 * prove_cmds.c - `checkers prove`, `checkers worker` and `checkers tree`:
 * the proof-tree manager, a solver worker, and a look at a proof's tree
 * (manager/manager.h is the manual).
 *
 * Exit status of `prove` (stable, for scripts):
 *   0  the goal is proved          1  stopped (budget, Ctrl-C): resumable
 *   2  bad usage or input           3  a damaged database, store or tree
 */
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/summary.h"
#include "manager/manager.h"
#include "manager/tree.h"
#include "openings/openings.h"
#include "prover/prover.h"
#include "web/web.h"

/* ---- static data ------------------------------------------------------ */

static const char prove_help[] =
    "usage: checkers prove (--opening \"MOVES\" | --acf N | --fen FEN) --state DIR --db DIR\n"
    "                      [--goal value|win|draw|<=draw|>=draw] [--workers N]\n"
    "                      [--listen HOST:PORT] [--token-file F] [--budget TIME]\n"
    "                      [--status-port [HOST:]P [--status-token-file F]]\n"
    "                      [--seed-line \"MOVES\"] [--pieces N]\n"
    "                      [--job-time S] [--job-max S] [--job-nodes N] [--threshold H]\n"
    "                      [--step D] [--leaf-step D] [--ghi MODE] [--tt MB]\n"
    "                      [--tt-kept MB]\n"
    "                      [--max-proof-records N] [--max-connections N]\n"
    "                      [--no-root-jobs] [--quiet]\n"
    "       checkers prove --state DIR [--db DIR] [--workers N] [...]   (resume)\n"
    "\n"
    "Proves a position with the proof-tree manager: best-first PN-search over the\n"
    "tree below the root, its leaves farmed to solver workers (df-pn with the\n"
    "endgame databases, then alpha-beta). Everything is kept in DIR: stop it at\n"
    "any moment (Ctrl-C, a kill, a power cut) and `checkers prove --state DIR`\n"
    "resumes with nothing proven lost.\n"
    "\n"
    "  --opening MOVES  a line from the start, e.g. \"12-16 24-19 09-13\"\n"
    "  --acf N          ACF three-move ballot N (openings/three-move-ballots.tsv)\n"
    "  --fen FEN        any position\n"
    "  --state DIR      where the proof lives (created; resumed when it exists)\n"
    "  --db DIR         endgame databases (--pieces N: use them up to N pieces;\n"
    "                   default all they have)\n"
    "  --goal G         value (default): the exact value; win: does the side to\n"
    "                   move win; draw: is it a draw; >=draw / <=draw: one bound,\n"
    "                   for the side to move at the root (after three moves,\n"
    "                   White: the published \"<=Draw\" for Black is >=draw)\n"
    "  --workers N      local worker processes to start (default: one per core)\n"
    "  --listen H:P     accept workers at this address (default 127.0.0.1, any\n"
    "                   free port); beyond loopback it needs --token-file\n"
    "  --token-file F   shared secret (first line of F) workers must present;\n"
    "                   default DIR/token, made at the first start (mode 0600):\n"
    "                   give that file to workers on other machines\n"
    "  --max-proof-records N  records one job may send (default 4194304); a\n"
    "                   worker sending more is disconnected\n"
    "  --max-connections N  connections at once (default 4096); more are\n"
    "                   refused, and logged\n"
    "  --budget TIME    stop after TIME (90, 90s, 15m, 2h, 1d); resumable\n"
    "  --status-port P  serve the proof's pages while it runs (`checkers serve`'s\n"
    "                   pages, with the workers and this run's charts) on\n"
    "                   127.0.0.1:P; HOST:P elsewhere, which needs\n"
    "  --status-token-file F  the secret (first line of F) the pages then ask\n"
    "                   for (not the workers' token)\n"
    "  --seed-line M    expand this line first (default: the engine's line)\n"
    "  --job-time S     seconds of a leaf's first job (default 30); each job\n"
    "                   after it gets double, up to --job-max, and then the\n"
    "                   leaf is expanded (default --job-max: 8 first jobs);\n"
    "                   a re-job goes to the worker that had the leaf, whose\n"
    "                   table still holds the work\n"
    "  --no-root-jobs   the root is never a job of its own (by default\n"
    "                   df-pn on the root itself is one way and the tree the\n"
    "                   other: the root's jobs double past --job-max while\n"
    "                   they have had at most twice the others' time, so one\n"
    "                   worker shares its time 2:1 and with two one stays\n"
    "                   on the root; when the root is level, a second worker\n"
    "                   proves the draw's other half there meanwhile); kept\n"
    "                   in the state\n"
    "  --job-nodes N    df-pn positions of a first job at most, doubled the\n"
    "                   same way (default: no limit)\n"
    "  --threshold H    first heuristic threshold h, hundredths of a man (200)\n"
    "  --step D         h grows by D when the root is resolved provisionally\n"
    "                   (200); the answer never rests on a heuristic leaf\n"
    "  --leaf-step D    numbers from the scores: an open leaf's proof or\n"
    "                   disproof number grows by one per D hundredths of a\n"
    "                   man its score lies below or above what the question\n"
    "                   needs (50 was measured: fewer jobs on decided roots,\n"
    "                   but a level draw lost; docs/manager.md); default 0:\n"
    "                   every open leaf counts 1 and 1; this run only, never\n"
    "                   changes an answer\n"
    "  --ghi MODE       the local workers' df-pn under repetition: auto\n"
    "                   (default), optimistic or safe (`checkers solve --help`);\n"
    "                   this run only, never changes an answer\n"
    "  --tt MB          each local worker's df-pn table (default 256, as\n"
    "                   `checkers worker --tt`); this run only\n"
    "  --tt-kept MB     memory for the proven positions that table gives up\n"
    "                   (`checkers worker --tt-kept`); this run only\n"
    "  --quiet          no progress line\n"
    "\n"
    "Nothing a worker sends is written before the checker has proven it: a\n"
    "forged, truncated or oversized proof costs that worker its connection.\n"
    "A settled result is printed only after the checker accepts the root's\n"
    "whole proof; if it does not, the state is damaged (exit 3).\n"
    "\n"
    "Output: first line ROOT<TAB>RESULT (win, loss, draw, >=draw, <=draw,\n"
    "unknown, for the side to move at the root), then the tree, the jobs, the\n"
    "time; when stopped, where the proof stands and the command that continues\n"
    "it. Progress goes to stderr.\n"
    "Exit status: 0 proved, 1 stopped (resumable: the budget, Ctrl-C, a full\n"
    "disk), 2 bad usage or input, 3 a damaged database, store or tree (the\n"
    "file and what is wrong with it named).\n"
    "\n"
    "Examples:\n"
    "  checkers prove --fen 'W:W27,28,30:B14,15,K4' --state /tmp/p --db egdb-data\n"
    "  checkers prove --opening \"12-16 24-19 09-13\" --state proofs/ballot --db egdb-data \\\n"
    "      --goal '>=draw' --budget 2h --status-port 8080\n"
    "  checkers prove --state proofs/ballot --db egdb-data        # resume\n";

static const char worker_help[] =
    "usage: checkers worker --connect HOST:PORT [--token-file F] [--db DIR]\n"
    "                       [--store PATH] [--cache MB] [--tt MB] [--tt-kept MB]\n"
    "                       [--ghi MODE]\n"
    "\n"
    "One solver process for a proof-tree manager (`checkers prove`). It answers\n"
    "jobs (df-pn, then alpha-beta for a score), sends each proof whole to the\n"
    "manager, and reconnects with backoff when the manager restarts or the\n"
    "network drops, resending any result the manager had not acknowledged.\n"
    "Stop it with Ctrl-C or SIGTERM.\n"
    "\n"
    "  --connect H:P   the manager's address (its --listen)\n"
    "  --token-file F  the shared secret, when the manager asks for one\n"
    "  --db DIR        endgame databases (at least the pieces the proof uses)\n"
    "  --store PATH    this worker's proof store, for every proof (default: one\n"
    "                  per host and piece count, kept beside the databases:\n"
    "                  DIR/worker-store-<host>-<N>p, or ./ when DIR is not\n"
    "                  writable; it lasts across jobs and restarts, and the\n"
    "                  workers of one host share it)\n"
    "  --cache MB      database cache (default 512)\n"
    "  --tt MB         df-pn table (default 256); the alpha-beta table gets a\n"
    "                  quarter of it (at least 16 MB)\n"
    "  --tt-kept MB    memory for the proven positions the df-pn table gives up,\n"
    "                  kept for the walk that writes the proof (default 256,\n"
    "                  taken as needed; 0: none)\n"
    "  --ghi MODE      how each job's df-pn treats repetitions: auto (default),\n"
    "                  optimistic or safe, as `checkers solve --ghi`\n"
    "\n"
    "Examples (see the README, \"Workers on other machines\"):\n"
    "  checkers worker --connect 10.0.0.5:7000 --token-file ~/.checkers-token --db egdb-data\n"
    "  for h in node1 node2; do ssh $h checkers worker --connect 10.0.0.5:7000 \\\n"
    "      --token-file .checkers-token --db egdb-data & done\n";

static const char tree_help[] =
    "usage: checkers tree --state DIR [--db DIR] [--depth D] [--pdn]\n"
    "\n"
    "Shows the proof tree of the proof in DIR to depth D (default 2): per node\n"
    "the move, the proven value or bounds, where it comes from (d database,\n"
    "t no move, s a worker's proof, b backed up in the tree), the proof and\n"
    "disproof numbers, the heuristic score, jobs run, and whether a job is in\n"
    "flight. With --pdn, the tree's lines to depth D as PDN games, one per\n"
    "leaf, for a checkers program.\n"
    "Opened while a manager runs, it shows the last committed state.\n";

/* ---- helpers ------------------------------------------------------------ */

/* "90", "90s", "15m", "2h", "1d" -> seconds; -1 on error. */
/* The position after a line of moves from the start (openings.h). */
static int
line_position(const char *cmd, const char *moves, eng_pos *out)
{
    char err[400];
    int n = 0;
    if (ops_play(moves, out, &n, err, sizeof err)) {
        fprintf(stderr, "checkers %s: %s\n", cmd, err);
        return -1;
    }
    if (n == 0) {
        fprintf(stderr, "checkers %s: the opening \"%s\" has no moves\n", cmd, moves);
        return -1;
    }
    return 0;
}

/* The moves of ACF ballot n (openings/openings.h). */
static int
acf_moves(int n, char *out, size_t cap)
{
    static ops_book book;
    char err[600];
    if (ops_load(NULL, &book, err, sizeof err)) {
        fprintf(stderr,
                "checkers prove: --acf: %s (run from the source tree, or set "
                "CHECKERS_OPENINGS to the openings directory)\n",
                err);
        return -1;
    }
    snprintf(out, cap, "%s", book.ballot[n - 1].moves);
    return 0;
}

/* ---- prove ------------------------------------------------------------------ */

int
cli_prove(int argc, char **argv)
{
    const char *opening = NULL, *fen = NULL, *state = NULL, *db = NULL, *listen = NULL;
    const char *token = NULL, *seed = NULL, *status_listen = NULL, *status_token = NULL;
    long acf = 0, workers = -1, status_port = 0, pieces = 0, cache_mb = 512, thr = 200, step = 200,
         job_s = 30, job_max_s = 0;
    long long job_nodes = 0, max_proof = 0, max_conns = 0;
    long leaf_step = 0, tt_mb = 0, tt_kept_mb = -1;
    const char *tt_kept_s = NULL;
    const char *ghi = NULL;
    int goal = MT_GOAL_VALUE, quiet = 0, goal_given = 0, no_root_jobs = 0;
    double budget = 0;
    for (int i = 1; i < argc; i++) {
        const char *o = argv[i];
        int more = i + 1 < argc;
        if (cli_is_help(o)) {
            fputs(prove_help, stdout);
            return CLI_EXIT_OK;
        } else if (!strcmp(o, "--opening") && more) {
            opening = argv[++i];
        } else if (!strcmp(o, "--acf") && more) {
            if ((acf = cli_parse_uint("prove", "--acf", argv[++i], 1, 174)) < 0)
                return CLI_EXIT_USAGE;
        } else if (!strcmp(o, "--fen") && more) {
            fen = argv[++i];
        } else if (!strcmp(o, "--state") && more) {
            state = argv[++i];
        } else if (!strcmp(o, "--db") && more) {
            db = argv[++i];
        } else if (!strcmp(o, "--goal") && more) {
            if ((goal = mt_goal_parse(argv[++i])) < 0) {
                fprintf(stderr,
                        "checkers prove: bad --goal '%s' (value, win, draw, >=draw, "
                        "<=draw)\n",
                        argv[i]);
                return CLI_EXIT_USAGE;
            }
            goal_given = 1;
        } else if (!strcmp(o, "--workers") && more) {
            if ((workers = cli_parse_uint("prove", "--workers", argv[++i], 0, 256)) < 0)
                return CLI_EXIT_USAGE;
        } else if (!strcmp(o, "--listen") && more) {
            listen = argv[++i];
        } else if (!strcmp(o, "--token-file") && more) {
            token = argv[++i];
        } else if (!strcmp(o, "--budget") && more) {
            if ((budget = cli_parse_duration(argv[++i])) < 0) {
                fprintf(stderr, "checkers prove: bad --budget '%s' (90, 90s, 15m, 2h, 1d)\n",
                        argv[i]);
                return CLI_EXIT_USAGE;
            }
        } else if (!strcmp(o, "--status-port") && more) {
            if (strchr(argv[i + 1], ':'))
                status_listen = argv[++i]; /* HOST:PORT, checked when bound */
            else if ((status_port = cli_parse_uint("prove", "--status-port", argv[++i], 1, 65535)) <
                     0)
                return CLI_EXIT_USAGE;
        } else if (!strcmp(o, "--status-token-file") && more) {
            status_token = argv[++i];
        } else if (!strcmp(o, "--seed-line") && more) {
            seed = argv[++i];
        } else if (!strcmp(o, "--pieces") && more) {
            if ((pieces = cli_parse_uint("prove", "--pieces", argv[++i], 0, 10)) < 0)
                return CLI_EXIT_USAGE;
        } else if (!strcmp(o, "--cache") && more) {
            if ((cache_mb = cli_parse_uint("prove", "--cache (MB)", argv[++i], 1, 1000000)) < 0)
                return CLI_EXIT_USAGE;
        } else if (!strcmp(o, "--job-time") && more) {
            if ((job_s = cli_parse_uint("prove", "--job-time", argv[++i], 1, 86400)) < 0)
                return CLI_EXIT_USAGE;
        } else if (!strcmp(o, "--job-max") && more) {
            if ((job_max_s = cli_parse_uint("prove", "--job-max", argv[++i], 1, 86400 * 7)) < 0)
                return CLI_EXIT_USAGE;
        } else if (!strcmp(o, "--max-connections") && more) {
            if ((max_conns = cli_parse_uint("prove", "--max-connections", argv[++i], 1, 1000000L)) <
                0)
                return CLI_EXIT_USAGE;
        } else if (!strcmp(o, "--max-proof-records") && more) {
            if ((max_proof =
                     cli_parse_uint("prove", "--max-proof-records", argv[++i], 1, 1000000000L)) < 0)
                return CLI_EXIT_USAGE;
        } else if (!strcmp(o, "--job-nodes") && more) {
            long v = cli_parse_uint("prove", "--job-nodes", argv[++i], 0, 1000000000000L);
            if (v < 0)
                return CLI_EXIT_USAGE;
            job_nodes = v;
        } else if (!strcmp(o, "--threshold") && more) {
            if ((thr = cli_parse_uint("prove", "--threshold", argv[++i], 0, MT_H_INF)) < 0)
                return CLI_EXIT_USAGE;
        } else if (!strcmp(o, "--step") && more) {
            if ((step = cli_parse_uint("prove", "--step", argv[++i], 1, MT_H_INF)) < 0)
                return CLI_EXIT_USAGE;
        } else if (!strcmp(o, "--leaf-step") && more) {
            if ((leaf_step = cli_parse_uint("prove", "--leaf-step", argv[++i], 0, MT_H_INF)) < 0)
                return CLI_EXIT_USAGE;
        } else if (!strcmp(o, "--ghi") && more) {
            int g;
            if (prv_ghi_parse(ghi = argv[++i], &g) != 0) {
                fprintf(stderr, "checkers prove: bad --ghi '%s' (%s)\n", ghi, PRV_GHI_WORDS);
                return CLI_EXIT_USAGE;
            }
        } else if (!strcmp(o, "--tt-kept") && more) {
            if ((tt_kept_mb = cli_parse_uint("prove", "--tt-kept (MB)", argv[++i], 0, 1000000)) < 0)
                return CLI_EXIT_USAGE;
            tt_kept_s = argv[i];
        } else if (!strcmp(o, "--tt") && more) {
            if ((tt_mb = cli_parse_uint("prove", "--tt (MB)", argv[++i], 1, 1000000)) < 0)
                return CLI_EXIT_USAGE;
        } else if (!strcmp(o, "--quiet")) {
            quiet = 1;
        } else if (!strcmp(o, "--no-root-jobs")) {
            no_root_jobs = 1;
        } else {
            fprintf(stderr, "checkers prove: unknown or incomplete option '%s'\n", o);
            return CLI_EXIT_USAGE;
        }
    }
    if (!state) {
        fprintf(stderr, "checkers prove: needs --state DIR ('checkers prove --help')\n");
        return CLI_EXIT_USAGE;
    }
    int nroots = (opening != NULL) + (acf > 0) + (fen != NULL);
    if (nroots > 1) {
        fprintf(stderr, "checkers prove: give one of --opening, --acf, --fen\n");
        return CLI_EXIT_USAGE;
    }
    mt_create cr;
    memset(&cr, 0, sizeof cr);
    char acf_line[256];
    eng_pos have_root;
    int have_goal, have_pieces;
    char err[512];
    char have_db[PATH_MAX] = "";
    int irc = mt_info_db(state, &have_root, &have_goal, &have_pieces, have_db, sizeof have_db, err,
                         sizeof err);
    if (irc == MT_ECORRUPT || irc == MT_EIO) { /* there is a tree, and it cannot be read */
        fprintf(stderr, "checkers prove: %s\n", err);
        return CLI_EXIT_DAMAGED;
    }
    int exists = irc == 0;
    /* a proof rests on the databases it was begun with: a resume with
     * --pieces of another count would be reported as that count's */
    if (exists && pieces > 0 && have_pieces > 0 && pieces != have_pieces) {
        char have_s[48];
        egdb_scope_name(have_pieces, have_s, sizeof have_s);
        fprintf(stderr,
                "checkers prove: the proof in %s rests on the %s-piece databases, and "
                "--pieces %ld asks for %ld; resume it without --pieces, or give another "
                "--state\n",
                state, have_s, pieces, pieces);
        return CLI_EXIT_USAGE;
    }
    /* a resume needs only the state: the databases are where they were */
    if (exists && !db && have_pieces > 0 && have_db[0])
        db = have_db;
    if (nroots) {
        if (opening && line_position("prove", opening, &cr.root))
            return CLI_EXIT_USAGE;
        if (acf > 0) {
            if (acf_moves((int)acf, acf_line, sizeof acf_line) ||
                line_position("prove", acf_line, &cr.root))
                return CLI_EXIT_USAGE;
        }
        if (fen && cli_parse_fen("prove", fen, &cr.root))
            return CLI_EXIT_USAGE;
        if (exists) {
            if (!eng_equal(&have_root, &cr.root) || (goal_given && goal != have_goal)) {
                /* which of the two differs, and what is stored: the reader
                 * may have mistyped the root, or forgotten the folder */
                char hf[ENG_FEN_MAX], gf[ENG_FEN_MAX];
                eng_format_fen(&have_root, hf, sizeof hf);
                eng_format_fen(&cr.root, gf, sizeof gf);
                if (!eng_equal(&have_root, &cr.root))
                    fprintf(stderr,
                            "checkers prove: %s already holds the proof of %s (goal %s), not "
                            "of the root given, %s; resume it with `checkers prove --state "
                            "%s`, or choose another directory\n",
                            state, hf, mt_goal_name(have_goal), gf, state);
                else
                    fprintf(stderr,
                            "checkers prove: %s already holds the proof of %s with the goal "
                            "%s, not %s; resume it with `checkers prove --state %s`, or "
                            "choose another directory\n",
                            state, hf, mt_goal_name(have_goal), mt_goal_name(goal), state);
                return CLI_EXIT_USAGE;
            }
            nroots = 0; /* the same root: resume */
        }
    } else if (!exists) {
        fprintf(stderr,
                "checkers prove: %s holds no proof to resume: give --opening, --acf "
                "or --fen\n",
                state);
        return CLI_EXIT_USAGE;
    }
    if (nroots) {
        if (!db && pieces > 0) {
            fprintf(stderr, "checkers prove: --pieces needs --db\n");
            return CLI_EXIT_USAGE;
        }
        int dbp = 0;
        egdb *e = NULL;
        if (db) {
            int rc = egdb_open(db, (int)pieces, (size_t)1 << 20, &e, err, sizeof err);
            if (rc) {
                fprintf(stderr, "checkers prove: databases %s: %s\n", db, err);
                return rc == EGDB_ECORRUPT ? CLI_EXIT_DAMAGED : CLI_EXIT_USAGE;
            }
            dbp = egdb_scope(e); /* complete counts and whole splits (egdb.h) */
        }
        /* the root's score, which hints the first question: the search a
         * worker runs for a node, run here once, as the manager runs none
         * (manager/tree.h, SCORES) */
        ab_ctx *ab = NULL;
        ab_new((size_t)16 << 20, &ab); /* without it: the static evaluation */
        cr.root_score = wrk_score(ab, e, dbp, &cr.root, &cr.root_depth);
        ab_free(ab);
        egdb_close(e);
        cr.goal = goal;
        cr.db_pieces = dbp;
        cr.job_ms = (uint32_t)job_s * 1000;
        if (job_max_s && job_max_s < job_s) {
            fprintf(stderr, "checkers prove: --job-max %ld is below --job-time %ld\n", job_max_s,
                    job_s);
            return CLI_EXIT_USAGE;
        }
        cr.job_max_ms = (uint32_t)job_max_s * 1000;
        cr.job_nodes = (uint64_t)job_nodes;
        cr.no_root_jobs = no_root_jobs;
        cr.h0 = (int)thr;
        cr.h_step = (int)step;
        /* a stored seed line for this position (openings seed), unless given */
        static char stored_seed[512];
        if (!seed && (opening || acf > 0) &&
            ops_seed_find(NULL, &cr.root, stored_seed, sizeof stored_seed)) {
            seed = stored_seed;
            if (!quiet)
                fprintf(stderr, "checkers prove: seed line from openings/seeds.tsv: %s\n", seed);
        }
        cr.seed = seed;
        static char db_abs[PATH_MAX];
        if (db && realpath(db, db_abs))
            cr.db_dir = db_abs;
    } else if (have_pieces > 0 && !db) {
        fprintf(stderr,
                "checkers prove: the proof in %s rests on %d-piece databases: give "
                "--db DIR\n",
                state, have_pieces);
        return CLI_EXIT_USAGE;
    }
    if (workers < 0) {
        long n = sysconf(_SC_NPROCESSORS_ONLN);
        workers = n > 0 ? n : 1;
    }
    char exe[PATH_MAX], cont[2 * PATH_MAX];
    cli_self_exe(exe, sizeof exe, argv[0]);
    snprintf(cont, sizeof cont, "checkers prove --state %s%s%s", state, db ? " --db " : "",
             db ? db : "");
    mgr_opts mo = {.state = state,
                   .db_dir = db,
                   .create = nroots ? &cr : NULL,
                   .workers = (int)workers,
                   .listen = listen,
                   .token_file = token,
                   .budget = budget,
                   .exe = exe,
                   .cache_bytes = (size_t)cache_mb << 20,
                   .quiet = quiet,
                   .cmdline = cont,
                   .max_proof = (size_t)max_proof,
                   .max_conns = (int)max_conns,
                   .leaf_step = (int)leaf_step,
                   .ghi = ghi,
                   .tt_mb = (unsigned)tt_mb,
                   .tt_kept = tt_kept_s};
    /* the status pages: the proof browser (web/web.h), which the manager
     * calls through mo.pages without knowing it */
    web_live live = {.listen = status_listen, .port = (int)status_port, .token_file = status_token};
    mgr_pages pages;
    if (status_port > 0 || status_listen) {
        web_live_pages(&live, &pages);
        mo.pages = &pages;
    }
    return mgr_run(&mo);
}

/* ---- worker -------------------------------------------------------------------- */

int
cli_worker(int argc, char **argv)
{
    const char *connect = NULL, *token = NULL, *db = NULL, *store = NULL;
    long cache_mb = 512, tt_mb = 256, tt_kept_mb = 256;
    int local = 0, ghi = PRV_GHI_AUTO;
    for (int i = 1; i < argc; i++) {
        const char *o = argv[i];
        int more = i + 1 < argc;
        if (cli_is_help(o)) {
            fputs(worker_help, stdout);
            return CLI_EXIT_OK;
        } else if (!strcmp(o, "--connect") && more) {
            connect = argv[++i];
        } else if (!strcmp(o, "--token-file") && more) {
            token = argv[++i];
        } else if (!strcmp(o, "--db") && more) {
            db = argv[++i];
        } else if (!strcmp(o, "--store") && more) {
            store = argv[++i];
        } else if (!strcmp(o, "--cache") && more) {
            if ((cache_mb = cli_parse_uint("worker", "--cache (MB)", argv[++i], 1, 1000000)) < 0)
                return CLI_EXIT_USAGE;
        } else if (!strcmp(o, "--tt-kept") && more) {
            if ((tt_kept_mb = cli_parse_uint("worker", "--tt-kept (MB)", argv[++i], 0, 1000000)) <
                0)
                return CLI_EXIT_USAGE;
        } else if (!strcmp(o, "--tt") && more) {
            if ((tt_mb = cli_parse_uint("worker", "--tt (MB)", argv[++i], 1, 1000000)) < 0)
                return CLI_EXIT_USAGE;
        } else if (!strcmp(o, "--ghi") && more) {
            if (prv_ghi_parse(argv[++i], &ghi) != 0) {
                fprintf(stderr, "checkers worker: bad --ghi '%s' (%s)\n", argv[i], PRV_GHI_WORDS);
                return CLI_EXIT_USAGE;
            }
        } else if (!strcmp(o, "--local")) {
            local = 1; /* started by a manager: ends with it */
        } else {
            fprintf(stderr, "checkers worker: unknown or incomplete option '%s'\n", o);
            return CLI_EXIT_USAGE;
        }
    }
    if (!connect) {
        fprintf(stderr, "checkers worker: needs --connect HOST:PORT ('checkers worker --help')\n");
        return CLI_EXIT_USAGE;
    }
    wrk_opts wo = {.connect = connect,
                   .token_file = token,
                   .db_dir = db,
                   .store = store,
                   .cache_bytes = (size_t)cache_mb << 20,
                   .tt_bytes = (size_t)tt_mb << 20,
                   .tt_kept_bytes = (size_t)tt_kept_mb << 20,
                   .ghi = ghi,
                   .die_with_parent = local};
    return wrk_run(&wo);
}

/* ---- tree ------------------------------------------------------------------------ */

typedef struct tree_print {
    int pdn;
    char root_fen[ENG_FEN_MAX];
    char line[64][64];
    int count;
} tree_print;

static int
print_node(const mt_view *v, void *arg)
{
    tree_print *tp = arg;
    if (v->depth < 64)
        snprintf(tp->line[v->depth], sizeof tp->line[0], "%s", v->move);
    if (tp->pdn) {
        if (!v->leaf)
            return 0;
        printf("[Event \"proof tree line %d\"]\n[SetUp \"1\"]\n[FEN \"%s\"]\n[Result \"*\"]\n"
               "[Value \"%s\"]\n\n",
               ++tp->count, tp->root_fen, prv_bound_word(v->bound));
        for (int d = 1; d <= v->depth && d < 64; d++) {
            if (d % 2 == 1)
                printf("%d. ", (d + 1) / 2);
            printf("%s ", tp->line[d]);
        }
        printf("*\n\n");
        return 0;
    }
    char pn[24], dn[24];
    snprintf(pn, sizeof pn, v->pn >= MT_INF ? "inf" : "%" PRIu64, v->pn);
    snprintf(dn, sizeof dn, v->dn >= MT_INF ? "inf" : "%" PRIu64, v->dn);
    printf("%*s%-8s %-7s %c pn %-6s dn %-6s score %6d jobs %u%s\n", 2 * v->depth, "",
           v->depth ? v->move : "root", prv_bound_word(v->bound), v->source, pn, dn, v->score,
           v->jobs, v->in_flight ? " in flight" : "");
    return 0;
}

int
cli_tree(int argc, char **argv)
{
    const char *state = NULL, *db = NULL;
    long depth = 2;
    int pdn = 0;
    for (int i = 1; i < argc; i++) {
        const char *o = argv[i];
        if (cli_is_help(o)) {
            fputs(tree_help, stdout);
            return CLI_EXIT_OK;
        } else if (!strcmp(o, "--state") && i + 1 < argc) {
            state = argv[++i];
        } else if (!strcmp(o, "--db") && i + 1 < argc) {
            db = argv[++i];
        } else if (!strcmp(o, "--depth") && i + 1 < argc) {
            if ((depth = cli_parse_uint("tree", "--depth", argv[++i], 0, 60)) < 0)
                return CLI_EXIT_USAGE;
        } else if (!strcmp(o, "--pdn")) {
            pdn = 1;
        } else {
            fprintf(stderr, "checkers tree: unknown or incomplete option '%s'\n", o);
            return CLI_EXIT_USAGE;
        }
    }
    if (!state) {
        fprintf(stderr, "checkers tree: needs --state DIR\n");
        return CLI_EXIT_USAGE;
    }
    char err[1024];
    cli_state cs;
    int rc = cli_state_open(state, db, (size_t)64 << 20, &cs, err, sizeof err);
    if (rc) {
        fprintf(stderr, "checkers tree: %s\n", err);
        return rc;
    }
    mt_tree *t = cs.t;
    mt_stats s;
    mt_stats_get(t, &s);
    /* a settled root is shown only with its proof checked whole */
    if (mt_done(t) && mt_check_root(t, err, sizeof err)) {
        fprintf(stderr, "checkers tree: the state %s is damaged: %s\n", state, err);
        cli_state_close(&cs);
        return CLI_EXIT_DAMAGED;
    }
    if (!pdn)
        printf("%s\t%s\ngoal %s (%s); %" PRIu64 " positions, %" PRIu64 " expanded, %" PRIu64
               " jobs answered\n",
               s.root_fen, prv_bound_word(s.root_bound), mt_goal_name(s.goal),
               mt_goal_settled(s.goal, s.root_bound) ? "settled" : "open", s.nodes, s.expanded,
               s.jobs_done);
    tree_print tp = {.pdn = pdn};
    snprintf(tp.root_fen, sizeof tp.root_fen, "%s", s.root_fen);
    mt_walk(t, (int)depth, print_node, &tp);
    cli_state_close(&cs);
    return CLI_EXIT_OK;
}
