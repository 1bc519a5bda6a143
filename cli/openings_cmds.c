/*
 * openings_cmds.c - `checkers openings list|show`: the 174 ACF three-move
 * ballots and the 19 openings of the published proof (openings/openings.h).
 *
 * Exit status: 0 success, 2 bad usage or input (an unknown ballot, an
 * illegal move), 1 the data files cannot be read.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "openings/openings.h"

static const char openings_help[] =
    "usage: checkers openings list [--published] [--status crossboard|mailplay|barred]\n"
    "       checkers openings show N|\"MOVES\"\n"
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
        if (eng_equal(&b.pub[k].pos, &p) && b.pub[k].pos.stm == p.stm) {
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
    fprintf(stderr, "checkers openings: unknown subcommand '%s' (list, show)\n", argv[1]);
    return CLI_EXIT_USAGE;
}
