/*
 * main.c - the `checkers` command: git-style subcommands over the
 * project's libraries.
 *
 * Exit codes (stable, for scripts):
 *   0  success
 *   1  the work failed (I/O error, a check that did not pass)
 *   2  bad usage or bad input (unknown option, malformed FEN or move)
 *   3  a database file is damaged or missing (egdb verify), damaged or
 *      unreadable (egdb probe), or the proven-node store is damaged
 *      (store, proof check)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "prover/store.h"

/* ---- static data ------------------------------------------------------ */

typedef struct command {
    const char *name;
    int (*run)(int argc, char **argv);
    const char *summary;
} command;

static const command commands[] = {
    {"perft", cli_perft, "count the leaves of the move tree (rules check, speed)"},
    {"show", cli_show, "print a position as a board with its legal moves"},
    {"moves", cli_moves, "list the legal moves of a position and the FEN after each"},
    {"egdb", cli_egdb, "endgame databases: build, probe, stats, verify, count"},
    {"solve", cli_solve, "prove the value of a position (df-pn, databases, proof store)"},
    {"search", cli_search, "alpha-beta search: heuristic score, line, proven win or loss"},
    {"store", cli_store, "the proven-node store (read-only): stats, get, export"},
    {"proof", cli_proof, "proofs in the proven-node store: check (the independent checker)"},
    {"prove", cli_prove, "prove a position or opening: proof-tree manager with solver workers"},
    {"worker", cli_worker, "one solver worker for a `prove` manager (local or remote)"},
    {"openings", cli_openings, "the ACF three-move ballots and the published 19 openings"},
    {"compare", cli_compare, "our proofs of the 19 published openings beside the 2007 table"},
    {"frontier", cli_frontier, "how far from the endgame this machine proves (ladder of rungs)"},
    {"tree", cli_tree, "show a proof's tree (`prove --state DIR`), or its lines as PDN"},
    {"serve", cli_serve, "a proof as web pages: browse its tree, follow its progress (read-only)"},
};

/* ---- functions -------------------------------------------------------- */

static void
usage(FILE *f)
{
    fprintf(f, "usage: checkers <command> [options] [arguments]\n\n"
               "A system that proves English checkers (8x8, American checkers).\n\n"
               "Commands:\n");
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        fprintf(f, "  %-9s %s\n", commands[i].name, commands[i].summary);
    fprintf(f, "\n'checkers <command> --help' describes a command, with examples.\n"
               "Exit status: 0 success, 1 the work failed, 2 bad usage or input,\n"
               "3 a damaged database file (egdb verify, probe) or proof store (store,\n"
               "proof check).\n");
}

int
main(int argc, char **argv)
{
    /* a damaged proof store is an error message, not a crash (store.h) */
    pst_guard_faults();
    if (argc < 2) {
        usage(stderr);
        return CLI_EXIT_USAGE;
    }
    if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
        usage(stdout);
        return CLI_EXIT_OK;
    }
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        if (!strcmp(argv[1], commands[i].name))
            return commands[i].run(argc - 1, argv + 1);
    fprintf(stderr, "checkers: unknown command '%s'\n\n", argv[1]);
    usage(stderr);
    return CLI_EXIT_USAGE;
}
