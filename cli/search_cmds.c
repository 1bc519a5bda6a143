/*
 * search_cmds.c - `checkers search`: the alpha-beta solver on one
 * position, with the endgame databases at its leaves.
 */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "egdb/egdb.h"
#include "prover/search.h"

/* ---- constants -------------------------------------------------------- */

/* The transposition table: 64 MB holds two million entries, more than a
 * few seconds of search fills, and fits beside the 1-6 piece databases on
 * a small machine. */
#define SEARCH_TT_BYTES ((size_t)64 << 20)

/* Seconds of search when neither --depth nor --time is given. */
#define SEARCH_DEFAULT_TIME 5.0

/* ---- static data ------------------------------------------------------ */

static const char search_help[] =
    "usage: checkers search [--db DIR] [--pieces N] [--depth D] [--time S]\n"
    "                       [--cache MB] FEN\n"
    "\n"
    "Searches a position with iterative-deepening alpha-beta, probing the\n"
    "endgame databases at every quiet position they cover. The score is for\n"
    "the side to move, in hundredths of a man; a proven win or loss means every\n"
    "line of the searched tree ends in a database or terminal value (a proven\n"
    "score is 30000 less the plies to the proof's end, a database value counting\n"
    "as 100 plies). Draws are never reported as proven.\n"
    "\n"
    "  --db DIR     endgame databases (built by `checkers egdb build`); without\n"
    "               it the search has only the rules and the evaluation\n"
    "  --pieces N   probe only positions with at most N pieces (default: all\n"
    "               the database has)\n"
    "  --depth D    nominal depth in plies (captures and single replies extend)\n"
    "  --time S     seconds (decimals allowed); default 5 when neither --depth\n"
    "               nor --time is given. With both, whichever comes first\n"
    "  --cache MB   memory for decoded database blocks (default 256)\n"
    "\n"
    "Output (stdout): FEN<TAB>SCORE<TAB>proven win|proven loss|heuristic, then\n"
    "the depth reached, the principal variation in PDN, nodes, time, nodes per\n"
    "second and database probes, one per line. The progress of each iteration\n"
    "goes to stderr when it is a terminal. Ctrl-C ends the search with the last\n"
    "completed iteration.\n"
    "\n"
    "Exit status: 0 searched, 1 the search failed (a database could not be\n"
    "opened or read), 2 bad usage or a bad FEN.\n"
    "\n"
    "Examples:\n"
    "  checkers search --depth 12 'B:W21-32:B1-12'\n"
    "  checkers search --db egdb-data --time 2 'W:WK3,K7:BK10,15'\n"
    "  checkers search --db egdb-data --pieces 4 --depth 10 'B:W18,K27:B10,K15,K22'\n";

/* Set by SIGINT: the search returns its last completed iteration. */
static volatile int search_stop;

/* ---- helpers ---------------------------------------------------------- */

static void
search_on_signal(int sig)
{
    (void)sig;
    search_stop = 1;
    signal(SIGINT, SIG_DFL); /* a second Ctrl-C kills at once */
}

/* Reads seconds: a positive decimal number of at most a day. */
static int
search_parse_seconds(const char *s, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (end == s || *end != '\0' || errno != 0 || !(v > 0) || v > 86400) {
        fprintf(stderr,
                "checkers search: bad --time '%s': expected seconds, a number above 0 and at "
                "most 86400\n",
                s);
        return -1;
    }
    *out = v;
    return 0;
}

static const char *
search_verdict(int proven)
{
    return proven == AB_PROVEN_WIN    ? "proven win"
           : proven == AB_PROVEN_LOSS ? "proven loss"
                                      : "heuristic";
}

/* Writes the line as PDN moves separated by spaces. */
static void
search_print_pv(FILE *f, const ab_result *r)
{
    for (int i = 0; i < r->pvlen; i++) {
        char mv[ENG_MOVE_STR_MAX];
        eng_format_move(&r->pv[i], mv, sizeof mv);
        fprintf(f, "%s%s", i ? " " : "", mv);
    }
}

/* One line a completed iteration, for a person watching a terminal. */
static void
search_progress(const ab_result *r, void *arg)
{
    (void)arg;
    fprintf(stderr, "depth %3d  score %6d  %-11s  %8.2fs  %12" PRIu64 " nodes  ", r->depth,
            r->score, search_verdict(r->proven), r->seconds, r->nodes);
    search_print_pv(stderr, r);
    fputc('\n', stderr);
}

/* ---- functions -------------------------------------------------------- */

int
cli_search(int argc, char **argv)
{
    const char *dir = NULL, *fen = NULL;
    long pieces = 0, depth = 0, cache_mb = 256;
    double seconds = 0;
    for (int i = 1; i < argc; i++) {
        const char *o = argv[i];
        if (cli_is_help(o)) {
            fputs(search_help, stdout);
            return CLI_EXIT_OK;
        }
        int has_value = i + 1 < argc;
        if (!strcmp(o, "--db") || !strcmp(o, "--pieces") || !strcmp(o, "--depth") ||
            !strcmp(o, "--time") || !strcmp(o, "--cache")) {
            if (!has_value) {
                fprintf(stderr, "checkers search: %s needs a value\n", o);
                return CLI_EXIT_USAGE;
            }
            const char *v = argv[++i];
            if (!strcmp(o, "--db"))
                dir = v;
            else if (!strcmp(o, "--pieces")) {
                if ((pieces = cli_parse_uint("search", "--pieces", v, 1, EGDB_MAX_PIECES)) < 0)
                    return CLI_EXIT_USAGE;
            } else if (!strcmp(o, "--depth")) {
                if ((depth = cli_parse_uint("search", "--depth", v, 1, 200)) < 0)
                    return CLI_EXIT_USAGE;
            } else if (!strcmp(o, "--time")) {
                if (search_parse_seconds(v, &seconds) != 0)
                    return CLI_EXIT_USAGE;
            } else if ((cache_mb = cli_parse_uint("search", "--cache (MB)", v, 1, 1000000)) < 0) {
                return CLI_EXIT_USAGE;
            }
        } else if (o[0] == '-' && o[1] == '-') {
            fprintf(stderr, "checkers search: unknown option '%s'\n%s", o, search_help);
            return CLI_EXIT_USAGE;
        } else if (fen) {
            fprintf(stderr, "checkers search: one FEN only (got '%s' and '%s')\n", fen, o);
            return CLI_EXIT_USAGE;
        } else {
            fen = o;
        }
    }
    if (!fen) {
        fprintf(stderr, "checkers search: needs a FEN\n%s", search_help);
        return CLI_EXIT_USAGE;
    }
    if (pieces && !dir) {
        fprintf(stderr, "checkers search: --pieces needs --db DIR\n");
        return CLI_EXIT_USAGE;
    }
    eng_pos p;
    if (cli_parse_fen("search", fen, &p) != 0)
        return CLI_EXIT_USAGE;
    if (depth == 0 && seconds == 0)
        seconds = SEARCH_DEFAULT_TIME;

    int status = CLI_EXIT_FAIL;
    egdb *db = NULL;
    ab_ctx *ctx = NULL;
    char err[512];
    if (dir) {
        /* egdb_open refuses a --pieces the directory does not hold whole,
         * naming what it has. */
        int rc = egdb_open(dir, (int)pieces, (size_t)cache_mb * 1000000, &db, err, sizeof err);
        if (rc != 0) {
            fprintf(stderr, "checkers search: %s\n", err);
            goto cleanup;
        }
    }
    if (ab_new(SEARCH_TT_BYTES, &ctx) != 0) {
        fprintf(stderr, "checkers search: out of memory for the transposition table\n");
        goto cleanup;
    }

    ab_opts opts = {
        .db = db, .db_pieces = (int)pieces, .time_limit = seconds, .stop = &search_stop};
    ab_result r;
    if (isatty(STDERR_FILENO))
        opts.progress = search_progress;
    opts.max_depth = (int)depth;
    signal(SIGINT, search_on_signal);
    int rc = ab_search(ctx, &p, &opts, &r);
    signal(SIGINT, SIG_DFL);
    if (rc != 0) {
        fprintf(stderr, "checkers search: %s\n", ab_strerror(rc));
        goto cleanup;
    }

    printf("%s\t%d\t%s\n", fen, r.score, search_verdict(r.proven));
    printf("depth: %d\n", r.depth);
    printf("pv: ");
    search_print_pv(stdout, &r);
    printf("\n");
    printf("nodes: %" PRIu64 "\n", r.nodes);
    printf("time: %.3f s\n", r.seconds);
    printf("nodes/s: %.0f\n", r.seconds > 0 ? (double)r.nodes / r.seconds : 0.0);
    printf("db probes: %" PRIu64 "\n", r.db_probes);
    status = CLI_EXIT_OK;

cleanup:
    ab_free(ctx);
    if (db)
        egdb_close(db);
    return status;
}
