/*
 * engine_cmds.c - the rules subcommands: perft, show, moves; and the
 * small helpers every subcommand shares.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"
#include "errors/errors.h"

/* ---- helpers ---------------------------------------------------------- */

double
cli_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

double
cli_parse_duration(const char *s)
{
    char *end;
    double v = strtod(s, &end);
    if (end == s || v < 0)
        return -1;
    if (!*end || !strcmp(end, "s"))
        return v;
    if (!strcmp(end, "m"))
        return v * 60;
    if (!strcmp(end, "h"))
        return v * 3600;
    if (!strcmp(end, "d"))
        return v * 86400;
    return -1;
}

void
cli_self_exe(char *buf, size_t cap, const char *argv0)
{
    ssize_t n = readlink("/proc/self/exe", buf, cap - 1);
    if (n > 0) {
        buf[n] = 0;
        return;
    }
    snprintf(buf, cap, "%s", argv0);
}

int
cli_is_help(const char *arg)
{
    return !strcmp(arg, "--help") || !strcmp(arg, "-h");
}

long
cli_parse_uint(const char *cmd, const char *what, const char *s, long lo, long hi)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (s[0] < '0' || s[0] > '9' || *end != '\0' || errno != 0 || v < lo || v > hi) {
        fprintf(stderr, "checkers %s: bad %s '%s': expected a whole number from %ld to %ld\n", cmd,
                what, s, lo, hi);
        return -1;
    }
    return v;
}

int
cli_parse_fen(const char *cmd, const char *fen, eng_pos *out)
{
    char err[256];
    if (eng_parse_fen(fen, out, err, sizeof err) != 0) {
        fprintf(stderr, "checkers %s: bad FEN \"%s\": %s\n", cmd, fen, err);
        return -1;
    }
    return 0;
}

/* ---- perft -------------------------------------------------------------- */

static const char perft_help[] =
    "usage: checkers perft [--fen FEN] [--divide] [--unique] DEPTH\n"
    "\n"
    "Counts the leaves of the legal-move tree DEPTH plies deep (perft), the\n"
    "standard check of a move generator against published figures.\n"
    "\n"
    "  --fen FEN   start from this position (PDN FEN) instead of the initial one\n"
    "  --divide    print the count below each legal move, then the total\n"
    "  --unique    merge capture routes that take the same pieces and end on\n"
    "              the same square (as search does); by default every route\n"
    "              counts, as in the published tables\n"
    "\n"
    "The count goes to stdout, the time and leaves per second to stderr.\n"
    "\n"
    "Examples:\n"
    "  checkers perft 10                 # 18391564\n"
    "  checkers perft --unique 12        # 388617999\n"
    "  checkers perft --divide --fen 'W:W21-32:B1-12' 3\n";

int
cli_perft(int argc, char **argv)
{
    const char *fen = NULL;
    int divide = 0, dups = ENG_DUPS_KEEP;
    long depth = -1;
    for (int i = 1; i < argc; i++) {
        if (cli_is_help(argv[i])) {
            fputs(perft_help, stdout);
            return CLI_EXIT_OK;
        } else if (!strcmp(argv[i], "--fen") && i + 1 < argc) {
            fen = argv[++i];
        } else if (!strcmp(argv[i], "--divide")) {
            divide = 1;
        } else if (!strcmp(argv[i], "--unique")) {
            dups = ENG_DUPS_MERGE;
        } else if (argv[i][0] == '-' && argv[i][1] != '\0') {
            fprintf(stderr, "checkers perft: unknown option '%s'\n%s", argv[i], perft_help);
            return CLI_EXIT_USAGE;
        } else if (depth < 0) {
            depth = cli_parse_uint("perft", "depth", argv[i], 0, 40);
            if (depth < 0)
                return CLI_EXIT_USAGE;
        } else {
            fprintf(stderr, "checkers perft: unexpected argument '%s'\n", argv[i]);
            return CLI_EXIT_USAGE;
        }
    }
    if (depth < 0) {
        fprintf(stderr, "checkers perft: missing DEPTH\n%s", perft_help);
        return CLI_EXIT_USAGE;
    }
    eng_pos p;
    if (fen == NULL)
        eng_start(&p);
    else if (cli_parse_fen("perft", fen, &p) != 0)
        return CLI_EXIT_USAGE;

    double t0 = cli_now();
    uint64_t total = 0;
    if (divide && depth > 0) {
        eng_movelist l;
        int n = eng_generate(&p, &l, dups);
        if (n < 0) {
            fprintf(stderr, "checkers perft: %s\n", ck_strerror(n));
            return CLI_EXIT_FAIL;
        }
        for (int i = 0; i < n; i++) {
            eng_pos c;
            char mv[ENG_MOVE_STR_MAX];
            eng_make(&p, &l.m[i], &c);
            uint64_t k = eng_perft(&c, (int)depth - 1, dups);
            eng_format_move(&l.m[i], mv, sizeof mv);
            printf("%s\t%" PRIu64 "\n", mv, k);
            total += k;
        }
        printf("total\t%" PRIu64 "\n", total);
    } else {
        total = eng_perft(&p, (int)depth, dups);
        printf("%" PRIu64 "\n", total);
    }
    double dt = cli_now() - t0;
    fprintf(stderr, "perft %ld: %" PRIu64 " leaves in %.3f s, %.1f million leaves/s (%s)\n", depth,
            total, dt, dt > 0 ? (double)total / dt / 1e6 : 0.0,
            dups == ENG_DUPS_KEEP ? "every capture route" : "routes merged");
    return CLI_EXIT_OK;
}

/* ---- show / moves ------------------------------------------------------- */

static const char show_help[] =
    "usage: checkers show FEN\n"
    "\n"
    "Prints the position as a board (Black's side at the top, squares 1-4 on\n"
    "the top row; b/w men, B/W kings) with the square numbers beside it, and\n"
    "its legal moves in PDN.\n"
    "\n"
    "Example:\n"
    "  checkers show 'B:W18,24,27,28,K10,K15:B12,16,20,K22,K25,K29'\n";

static const char moves_help[] =
    "usage: checkers moves FEN\n"
    "\n"
    "Lists the legal moves, one a line: the move in PDN, a tab, the FEN after\n"
    "it. Capture routes that take the same pieces to the same square are one\n"
    "move. No output when the side to move has no move (it has lost).\n"
    "\n"
    "Example:\n"
    "  checkers moves 'W:W21-32:B1-12'\n";

/* Reads the single FEN argument of show/moves; returns -1 on bad usage. */
static int
one_fen_arg(const char *cmd, const char *help, int argc, char **argv, eng_pos *p, int *done)
{
    *done = 0;
    if (argc == 2 && cli_is_help(argv[1])) {
        fputs(help, stdout);
        *done = 1;
        return 0;
    }
    if (argc != 2) {
        fprintf(stderr, "checkers %s: expected one FEN argument\n%s", cmd, help);
        return -1;
    }
    return cli_parse_fen(cmd, argv[1], p);
}

void
cli_board(const eng_pos *pp)
{
    eng_pos p = *pp;
    for (int r = 0; r < 8; r++) {
        char line[64], nums[64];
        int lp = 0, np = 0;
        for (int c = 0; c < 8; c++) {
            /* Even rows hold columns 1,3,5,7; odd rows 0,2,4,6. */
            int dark = (r % 2 == 0) ? (c % 2 == 1) : (c % 2 == 0);
            if (!dark) {
                lp += snprintf(line + lp, sizeof line - (size_t)lp, "  ");
                continue;
            }
            int s = r * 4 + c / 2;
            uint32_t b = 1u << s;
            char ch = (p.bm & b)   ? 'b'
                      : (p.wm & b) ? 'w'
                      : (p.bk & b) ? 'B'
                      : (p.wk & b) ? 'W'
                                   : '.';
            lp += snprintf(line + lp, sizeof line - (size_t)lp, " %c", ch);
            np += snprintf(nums + np, sizeof nums - (size_t)np, " %2d", s + 1);
        }
        printf("%s    %s\n", line, nums);
    }
}

int
cli_show(int argc, char **argv)
{
    eng_pos p;
    int done;
    if (one_fen_arg("show", show_help, argc, argv, &p, &done) != 0)
        return CLI_EXIT_USAGE;
    if (done)
        return CLI_EXIT_OK;
    cli_board(&p);
    char fen[ENG_FEN_MAX];
    eng_format_fen(&p, fen, sizeof fen);
    printf("\n%s to move   %s\n", p.stm == ENG_BLACK ? "Black" : "White", fen);
    eng_movelist l;
    int n = eng_generate(&p, &l, ENG_DUPS_MERGE);
    if (n < 0) {
        fprintf(stderr, "checkers show: %s\n", ck_strerror(n));
        return CLI_EXIT_FAIL;
    }
    if (n == 0) {
        printf("no legal move: %s loses\n", p.stm == ENG_BLACK ? "Black" : "White");
        return CLI_EXIT_OK;
    }
    printf("%d legal move%s%s:", n, n == 1 ? "" : "s",
           l.m[0].njumps ? " (capture compulsory)" : "");
    for (int i = 0; i < n; i++) {
        char mv[ENG_MOVE_STR_MAX];
        eng_format_move(&l.m[i], mv, sizeof mv);
        printf(" %s", mv);
    }
    printf("\n");
    return CLI_EXIT_OK;
}

int
cli_moves(int argc, char **argv)
{
    eng_pos p;
    int done;
    if (one_fen_arg("moves", moves_help, argc, argv, &p, &done) != 0)
        return CLI_EXIT_USAGE;
    if (done)
        return CLI_EXIT_OK;
    eng_movelist l;
    int n = eng_generate(&p, &l, ENG_DUPS_MERGE);
    if (n < 0) {
        fprintf(stderr, "checkers moves: %s\n", ck_strerror(n));
        return CLI_EXIT_FAIL;
    }
    for (int i = 0; i < n; i++) {
        char mv[ENG_MOVE_STR_MAX], fen[ENG_FEN_MAX];
        eng_pos c;
        eng_make(&p, &l.m[i], &c);
        eng_format_move(&l.m[i], mv, sizeof mv);
        eng_format_fen(&c, fen, sizeof fen);
        printf("%s\t%s\n", mv, fen);
    }
    return CLI_EXIT_OK;
}
