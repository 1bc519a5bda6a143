/*
 * openings_cmds.c - `checkers openings list|show`: the 174 ACF three-move
 * ballots and the 19 openings of the published proof (openings/openings.h).
 *
 * Exit status: 0 success, 2 bad usage or input (an unknown ballot, an
 * illegal move), 1 the data files cannot be read.
 */
#include <ctype.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "egdb/egdb.h"
#include "openings/openings.h"
#include "prover/search.h"

#ifndef CHECKERS_VERSION
#define CHECKERS_VERSION "unknown"
#endif

static const char openings_help[] =
    "usage: checkers openings list [--published] [--status crossboard|mailplay|barred]\n"
    "       checkers openings show N|\"MOVES\"\n"
    "       checkers openings seed P|all|\"MOVES\" [--db DIR] [--time S]\n"
    "\n"
    "The 174 ACF three-move ballots (openings/three-move-ballots.tsv) and the 19\n"
    "openings whose values the 2007 proof published (openings/published-19-\n"
    "openings.tsv). Positions are compared, not move texts: ballots that reach\n"
    "the same position by another move order are listed as transpositions.\n"
    "\n"
    "list   one line per ballot: number, moves, status, published value (for\n"
    "       Black, who moved first) or -, transpositions; --published: only the\n"
    "       ballots whose position the published table lists\n"
    "show   the board after the moves (a ballot number or any move sequence),\n"
    "       its ACF number, transpositions, and the published value, searches\n"
    "       and longest line when the table has it\n"
    "seed   a seed line for the manager: the principal variation of an\n"
    "       alpha-beta search (--time S seconds, default 60, with the databases)\n"
    "       from the position after published opening P (1..19), all 19, or\n"
    "       any moves; written to openings/seeds.tsv with its depth, time,\n"
    "       score and the engine's version. `prove --opening/--acf` uses it.\n"
    "The data directory is $CHECKERS_OPENINGS, else ./openings.\n"
    "\n"
    "Examples:\n"
    "  checkers openings list --published\n"
    "  checkers openings show 16\n"
    "  checkers openings show \"12-16 24-19 10-15\"\n";

static int
load(ops_book *b)
{
    char err[600];
    if (ops_load(NULL, b, err, sizeof err)) {
        fprintf(stderr, "checkers openings: %s\n", err);
        return -1;
    }
    return 0;
}

static void
print_transpositions(const ops_book *b, int i)
{
    int t[OPS_BALLOTS], n = ops_transpositions(b, i, t, OPS_BALLOTS);
    if (!n) {
        printf("-");
        return;
    }
    for (int k = 0; k < n; k++)
        printf("%s%d", k ? "," : "", b->ballot[t[k]].acf);
}

static int
list_cmd(int argc, char **argv)
{
    int published = 0;
    const char *status = NULL;
    for (int i = 2; i < argc; i++) {
        if (!strcmp(argv[i], "--published"))
            published = 1;
        else if (!strcmp(argv[i], "--status") && i + 1 < argc)
            status = argv[++i];
        else {
            fprintf(stderr, "checkers openings list: unknown or incomplete option '%s'\n", argv[i]);
            return CLI_EXIT_USAGE;
        }
    }
    if (status && strcmp(status, "crossboard") && strcmp(status, "mailplay") &&
        strcmp(status, "barred")) {
        fprintf(stderr,
                "checkers openings list: bad --status '%s' (crossboard, mailplay, "
                "barred)\n",
                status);
        return CLI_EXIT_USAGE;
    }
    static ops_book b;
    if (load(&b))
        return CLI_EXIT_FAIL;
    for (int i = 0; i < b.nballot; i++) {
        const ops_ballot *o = &b.ballot[i];
        if ((published && o->published < 0) || (status && strcmp(status, o->status)))
            continue;
        printf("%d\t%s\t%s\t%s\t", o->acf, o->moves, o->status,
               o->published >= 0 ? b.pub[o->published].proof : "-");
        print_transpositions(&b, i);
        printf("\t%s\n", o->name);
    }
    if (published)
        for (int k = 0; k < b.npub; k++)
            if (b.pub[k].ballot < 0)
                printf("# published opening %d, %s (%s for Black), reaches no ballot's position\n",
                       b.pub[k].no, b.pub[k].moves, b.pub[k].proof);
    return CLI_EXIT_OK;
}

static int
show_cmd(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "checkers openings show: one ballot number or move sequence\n");
        return CLI_EXIT_USAGE;
    }
    static ops_book b;
    if (load(&b))
        return CLI_EXIT_FAIL;
    const char *arg = argv[2];
    eng_pos p;
    char moves[128];
    char *end;
    long n = strtol(arg, &end, 10);
    if (*arg && !*end) {
        if (n < 1 || n > b.nballot) {
            fprintf(stderr, "checkers openings show: no ballot %s (1 to %d)\n", arg, b.nballot);
            return CLI_EXIT_USAGE;
        }
        p = b.ballot[n - 1].pos;
        snprintf(moves, sizeof moves, "%s", b.ballot[n - 1].moves);
    } else {
        char err[300];
        if (ops_play(arg, &p, NULL, err, sizeof err)) {
            fprintf(stderr, "checkers openings show: %s\n", err);
            return CLI_EXIT_USAGE;
        }
        snprintf(moves, sizeof moves, "%s", arg);
    }
    char fen[ENG_FEN_MAX];
    eng_format_fen(&p, fen, sizeof fen);
    printf("%s\t%s\n", moves, fen);
    int i = ops_find(&b, &p);
    if (i >= 0) {
        const ops_ballot *o = &b.ballot[i];
        printf("ACF ballot %d (%s)%s%s\n", o->acf, o->status, o->name[0] ? ": " : "", o->name);
        int t[OPS_BALLOTS], nt = ops_transpositions(&b, i, t, OPS_BALLOTS);
        for (int k = 0; k < nt; k++)
            printf("transposition: ballot %d, %s\n", b.ballot[t[k]].acf, b.ballot[t[k]].moves);
    } else {
        printf("not an ACF ballot position\n");
    }
    int shown = 0;
    for (int k = 0; k < b.npub; k++)
        if (eng_equal(&b.pub[k].pos, &p)) {
            const ops_published *q = &b.pub[k];
            printf("published (2007 proof, opening %d, %s): %s for Black; %" PRIu64
                   " searches; longest line %d plies\n",
                   q->no, q->moves, q->proof, q->searches, q->max_ply);
            shown = 1;
        }
    if (!shown)
        printf("published: not among the 19 openings of the 2007 proof\n");
    printf("\n");
    cli_board(&p);
    return CLI_EXIT_OK;
}

/* Rewrites seeds.tsv with the line of opening `moves` replaced or added. */
static int
seed_store(const ops_book *b, int no, const char *moves, const char *line, const ab_result *r)
{
    char path[600], tmp[620];
    snprintf(path, sizeof path, "%s/seeds.tsv", b->dir);
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    FILE *in = fopen(path, "r"), *out = fopen(tmp, "w");
    if (!out) {
        fprintf(stderr, "checkers openings seed: cannot write %s\n", tmp);
        if (in)
            fclose(in);
        return -1;
    }
    eng_pos want;
    char err[300];
    ops_play(moves, &want, NULL, err, sizeof err);
    if (!in)
        fprintf(out,
                "# Seed lines for the proof-tree manager, written by `checkers openings seed`:\n"
                "# the principal variation of an alpha-beta search (prover/search.h) with\n"
                "# the endgame databases, from the position after the opening (White to move).\n"
                "# depth: last completed iteration; score: for White, hundredths of a man.\n"
                "no\topening\tseed\tdepth\tseconds\tscore\tengine\n");
    char buf[1024];
    int header = 0;
    while (in && fgets(buf, sizeof buf, in)) {
        if (buf[0] == '#' || !header) {
            header |= buf[0] != '#';
            fputs(buf, out);
            continue;
        }
        char copy[1024];
        snprintf(copy, sizeof copy, "%s", buf);
        char *t1 = strchr(copy, '\t'), *t2 = t1 ? strchr(t1 + 1, '\t') : NULL;
        eng_pos q;
        if (t1 && t2) {
            *t2 = 0;
            if (!ops_play(t1 + 1, &q, NULL, err, sizeof err) && eng_equal(&q, &want))
                continue; /* replaced below */
        }
        fputs(buf, out);
    }
    if (in)
        fclose(in);
    fprintf(out, "%d\t%s\t%s\t%d\t%.1f\t%d\t%s\n", no, moves, line, r->depth, r->seconds, r->score,
            CHECKERS_VERSION);
    fclose(out);
    return rename(tmp, path);
}

static int
seed_cmd(int argc, char **argv)
{
    const char *what = NULL, *db_dir = NULL;
    double secs = 60;
    for (int i = 2; i < argc; i++) {
        if (!strcmp(argv[i], "--db") && i + 1 < argc)
            db_dir = argv[++i];
        else if (!strcmp(argv[i], "--time") && i + 1 < argc) {
            long v = cli_parse_uint("openings seed", "--time", argv[++i], 1, 86400);
            if (v < 0)
                return CLI_EXIT_USAGE;
            secs = (double)v;
        } else if (argv[i][0] == '-' && argv[i][1] && !isdigit((unsigned char)argv[i][1])) {
            fprintf(stderr, "checkers openings seed: unknown or incomplete option '%s'\n", argv[i]);
            return CLI_EXIT_USAGE;
        } else
            what = argv[i];
    }
    if (!what) {
        fprintf(stderr, "checkers openings seed: which opening (1..19, all, or moves)?\n");
        return CLI_EXIT_USAGE;
    }
    static ops_book b;
    if (load(&b))
        return CLI_EXIT_FAIL;
    int first = 0, last = -1;
    char *end;
    long n = strtol(what, &end, 10);
    if (!strcmp(what, "all"))
        first = 0, last = b.npub - 1;
    else if (*what && !*end) {
        if (n < 1 || n > b.npub) {
            fprintf(stderr, "checkers openings seed: no published opening %s (1..%d)\n", what,
                    b.npub);
            return CLI_EXIT_USAGE;
        }
        first = last = (int)n - 1;
    }
    egdb *db = NULL;
    char err[512];
    if (db_dir && egdb_open(db_dir, 0, (size_t)256 << 20, &db, err, sizeof err)) {
        fprintf(stderr, "checkers openings seed: databases %s: %s\n", db_dir, err);
        return CLI_EXIT_USAGE;
    }
    ab_ctx *ab;
    if (ab_new((size_t)256 << 20, &ab)) {
        egdb_close(db);
        return CLI_EXIT_FAIL;
    }
    int rc = CLI_EXIT_OK;
    for (int k = first; k <= (last < 0 ? 0 : last); k++) {
        const char *moves = last < 0 ? what : b.pub[k].moves;
        int no = last < 0 ? 0 : b.pub[k].no;
        eng_pos p;
        if (ops_play(moves, &p, NULL, err, sizeof err)) {
            fprintf(stderr, "checkers openings seed: %s\n", err);
            rc = CLI_EXIT_USAGE;
            break;
        }
        ab_opts o = {.db = db, .time_limit = secs};
        ab_result r;
        ab_clear(ab);
        if (ab_search(ab, &p, &o, &r)) {
            fprintf(stderr, "checkers openings seed: the search failed on %s\n", moves);
            rc = CLI_EXIT_FAIL;
            break;
        }
        char line[512] = "";
        size_t used = 0;
        for (int i = 0; i < r.pvlen && used < sizeof line - 16; i++) {
            char mv[32];
            eng_format_move(&r.pv[i], mv, sizeof mv);
            used += (size_t)snprintf(line + used, sizeof line - used, "%s%s", i ? " " : "", mv);
        }
        printf("%d\t%s\t%s\tdepth %d\t%.1f s\tscore %d\n", no, moves, line, r.depth, r.seconds,
               r.score);
        fflush(stdout);
        if (seed_store(&b, no, moves, line, &r)) {
            rc = CLI_EXIT_FAIL;
            break;
        }
    }
    ab_free(ab);
    egdb_close(db);
    return rc;
}

int
cli_openings(int argc, char **argv)
{
    if (argc < 2 || cli_is_help(argv[1])) {
        fputs(openings_help, argc < 2 ? stderr : stdout);
        return argc < 2 ? CLI_EXIT_USAGE : CLI_EXIT_OK;
    }
    if (!strcmp(argv[1], "list"))
        return list_cmd(argc, argv);
    if (!strcmp(argv[1], "show"))
        return show_cmd(argc, argv);
    if (!strcmp(argv[1], "seed"))
        return seed_cmd(argc, argv);
    fprintf(stderr, "checkers openings: unknown subcommand '%s' (list, show)\n", argv[1]);
    return CLI_EXIT_USAGE;
}
