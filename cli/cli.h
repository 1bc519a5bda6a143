/*
 * cli.h - subcommands of the `checkers` program. Each takes the argument
 * vector starting at its own name (argv[0] is "perft", "show", ...) and
 * returns the process exit status.
 */
#ifndef CLI_CLI_H
#define CLI_CLI_H

#include "engine/engine.h"

enum { CLI_EXIT_OK = 0, CLI_EXIT_FAIL = 1, CLI_EXIT_USAGE = 2, CLI_EXIT_DAMAGED = 3 };

int cli_perft(int argc, char **argv);
int cli_show(int argc, char **argv);
int cli_moves(int argc, char **argv);
int cli_egdb(int argc, char **argv);
int cli_solve(int argc, char **argv);
int cli_search(int argc, char **argv);
int cli_store(int argc, char **argv);
int cli_proof(int argc, char **argv);
/* `proof export` and `proof check --cert` (cert_cmds.c). */
int cli_proof_export(int argc, char **argv);

/* What a proof's state gives the commands that read its proof (proof check,
 * proof export, check_cmds.c). */
typedef struct cli_proof_state {
    char store[4200];      /* "<state>/state": the store inside the state */
    char fen[ENG_FEN_MAX]; /* the root                                  */
    int goal;              /* MT_GOAL_* of manager/tree.h               */
    int scope;             /* database scope the proof rests on (egdb.h; 0: none) */
    char db[480];          /* the databases it was begun with, or ""    */
} cli_proof_state;

/*
 * cli_proof_state_read - reads the tree of state for `checkers CMD`.
 * others: nonzero when --store, --pieces or a FEN was given too (refused:
 * the state says them).
 * RETURN CLI_EXIT_OK and *out, or the exit status after a message on
 * stderr (CLI_EXIT_DAMAGED for a tree that cannot be read).
 */
int cli_proof_state_read(const char *cmd, const char *state, int others, cli_proof_state *out);

/* What `proof check` and `proof export` are given (check_cmds.c):
 * --store PATH, --db DIR, --state DIR, --pieces N, a FEN, and the
 * options only one of them takes (CLI_PROOF_OUT, CLI_PROOF_CACHE). */
typedef struct cli_proof_args {
    const char *store, *dbdir, *fen, *state, *out;
    long pieces;        /* 0: not given */
    long cache_mb;      /* 256 unless given */
    cli_proof_state ps; /* with --state: what the state says */
} cli_proof_args;

enum {
    CLI_PROOF_OUT = 1,   /* --out FILE (proof export) */
    CLI_PROOF_CACHE = 2, /* --cache MB (proof check)  */
    CLI_PROOF_GO = -1    /* cli_proof_args_read: the command goes on */
};

/*
 * cli_proof_args_read - reads the options of `checkers proof CMD` (cmd:
 * "proof check" or "proof export"), those of opts among them; --help
 * prints help to stdout. With --state, the store, the root and the piece
 * count come from the state (in a->ps; given too, they are refused), and
 * so do the databases unless --db is given: each command then decides
 * what a state without databases means.
 * RETURN CLI_PROOF_GO with *a filled, or the exit status to return at
 * once (CLI_EXIT_OK after the help, else after a message on stderr).
 * Not thread-safe (a command-line helper).
 */
int cli_proof_args_read(const char *cmd, const char *help, unsigned opts, int argc, char **argv,
                        cli_proof_args *a);
int cli_proof_check_cert(int argc, char **argv);
int cli_prove(int argc, char **argv);
int cli_worker(int argc, char **argv);
int cli_tree(int argc, char **argv);
int cli_serve(int argc, char **argv);
int cli_openings(int argc, char **argv);
int cli_frontier(int argc, char **argv);
int cli_compare(int argc, char **argv);

/* Prints p as a board (row 1 at the top; b/w men, B/W kings) with the
 * square numbers beside it. */
void cli_board(const eng_pos *p);

/* Seconds from a monotonic clock. */
double cli_now(void);

/* Nonzero when argv[i] is --help or -h. */
int cli_is_help(const char *arg);

/*
 * cli_parse_uint - reads a decimal unsigned number in [lo, hi] from s;
 * on error prints "checkers <cmd>: bad <what> '<s>'..." and returns -1.
 */
long cli_parse_uint(const char *cmd, const char *what, const char *s, long lo, long hi);

/* A duration: seconds ("90", "90s"), "15m", "2h" or "1d"; -1 if not. */
double cli_parse_duration(const char *s);

/* The path of this program (for the processes it starts), from
 * /proc/self/exe, else argv0. */
void cli_self_exe(char *buf, size_t cap, const char *argv0);

/* Parses a FEN or prints the parser's message naming the problem. */
int cli_parse_fen(const char *cmd, const char *fen, eng_pos *out);

#endif /* CLI_CLI_H */
