/*
 * store_cmds.c - `checkers store ...`: read the proven-node store
 * (prover/store.h): stats, get, export. Every subcommand opens the store
 * read-only, so it can run beside the solvers that write it.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "errors/errors.h"
#include "engine/value.h"
#include "prover/store.h"

/* ---- static data ------------------------------------------------------ */

static const char store_help[] =
    "usage: checkers store <stats|get|export> --store PATH [options] [FEN...]\n"
    "\n"
    "The proven-node store: what the solvers have proven, one record a\n"
    "position (kept for Black to move; a White-to-move position is read\n"
    "through its colour-flipped twin). Opened read-only.\n"
    "\n"
    "  stats  --store PATH [--json]\n"
    "         records by bound (LL LD DD DW WW, for the side to move) and by\n"
    "         piece count, records with a win move and with a draw move, the\n"
    "         map size and the bytes in use\n"
    "  get    --store PATH FEN...\n"
    "         for each position: FEN<TAB>bound<TAB>win move<TAB>draw move\n"
    "         <TAB>effort<TAB>length, moves in PDN for the position as given\n"
    "         ('-': none); exit status 1 if a position has no record\n"
    "  export --store PATH\n"
    "         every record, one line each, in key order: canonical FEN, bound,\n"
    "         win move, draw move, effort, length (tab separated)\n"
    "\n"
    "Exit status: 0 success, 1 failed (no store, another schema, no record),\n"
    "2 bad usage or input, 3 a damaged store (the message names the record or\n"
    "the file).\n"
    "\n"
    "Examples:\n"
    "  checkers store stats --store proofs\n"
    "  checkers store stats --store proofs --json\n"
    "  checkers store get --store proofs 'B:W18,24,27,28,K10,K15:B12,16,20,K22,K25,K29'\n"
    "  checkers store export --store proofs | sort -k2 | head\n";

/* ---- helpers ---------------------------------------------------------- */

typedef struct store_args {
    const char *path;
    int json;
    char **rest;
    int nrest;
} store_args;

static int
parse_args(const char *sub, int argc, char **argv, store_args *a, int *help)
{
    memset(a, 0, sizeof *a);
    a->rest = argv;
    *help = 0;
    for (int i = 1; i < argc; i++) {
        const char *o = argv[i];
        if (cli_is_help(o)) {
            *help = 1;
            return 0;
        } else if (!strcmp(o, "--store") && i + 1 < argc) {
            a->path = argv[++i];
        } else if (!strcmp(o, "--json")) {
            a->json = 1;
        } else if (o[0] == '-' && o[1] == '-') {
            fprintf(stderr, "checkers store %s: unknown or incomplete option '%s'\n", sub, o);
            return -1;
        } else {
            a->rest[a->nrest++] = argv[i];
        }
    }
    return 0;
}

/* The exit status for a store error: damage is 3, the rest 1. */
static int
exit_of(int rc)
{
    return rc == PST_ECORRUPT ? CLI_EXIT_DAMAGED : CLI_EXIT_FAIL;
}

static int
open_store(const char *sub, const store_args *a, pst_env **out)
{
    char err[512];
    int rc = pst_open(a->path, PST_RDONLY, out, err, sizeof err);
    if (rc != 0) {
        fprintf(stderr, "checkers store %s: %s\n", sub, err);
        return exit_of(rc);
    }
    return CLI_EXIT_OK;
}

/*
 * A stored move in PDN for position p, or "-" for none. A stored move
 * that names no legal move cannot come from pst_put_many (it checks every
 * move); it is reported as damage: returns nonzero.
 */
static int
move_text(const eng_pos *p, const pst_move *pm, char *buf, size_t len)
{
    if (pm->from == PST_NOMOVE) {
        snprintf(buf, len, "-");
        return 0;
    }
    eng_move m;
    if (pst_move_find(p, pm, &m) != 0) {
        snprintf(buf, len, "?%d-%d", pm->from + 1, pm->to + 1);
        return -1;
    }
    eng_format_move(&m, buf, len);
    return 0;
}

/* One record as a line: FEN, bound, win, draw, effort, length. */
static int
print_record(const char *fen, const eng_pos *p, const pst_record *r)
{
    char win[ENG_MOVE_STR_MAX], draw[ENG_MOVE_STR_MAX];
    int bad = move_text(p, &r->win, win, sizeof win);
    bad |= move_text(p, &r->draw, draw, sizeof draw);
    printf("%s\t%s\t%s\t%s\t%" PRIu64 "\t%u\n", fen, eng_bound_name(r->bound), win, draw, r->effort,
           (unsigned)r->length);
    if (bad)
        fprintf(stderr, "checkers store: %s: a stored move is not legal in the position\n", fen);
    return bad;
}

/* A byte count for people: "28672 (28.0 KiB)". */
static void
print_bytes(const char *label, uint64_t n)
{
    const char *unit = "KiB";
    double v = (double)n / 1024.0;
    if (n >= (uint64_t)1 << 30) {
        unit = "GiB";
        v = (double)n / (1024.0 * 1048576.0);
    } else if (n >= (uint64_t)1 << 20) {
        unit = "MiB";
        v = (double)n / 1048576.0;
    }
    printf("%-11s %" PRIu64 " (%.1f %s)\n", label, n, v, unit);
}

/* A JSON string (the store path). */
static void
json_string(const char *s)
{
    putchar('"');
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            printf("\\%c", c);
        else if (c < 0x20)
            printf("\\u%04x", c);
        else
            putchar(c);
    }
    putchar('"');
}

/* ---- subcommands -------------------------------------------------------- */

static int
store_stats_cmd(const store_args *a)
{
    pst_env *s;
    int status = open_store("stats", a, &s);
    if (status != CLI_EXIT_OK)
        return status;
    char err[512];
    pst_stats st;
    int rc = pst_stats_get(s, &st, err, sizeof err);
    pst_close(s);
    if (rc != 0) {
        fprintf(stderr, "checkers store stats: %s\n", err);
        return exit_of(rc);
    }
    static const eng_bound bounds[5] = {ENG_LL, ENG_LD, ENG_DD, ENG_DW, ENG_WW};
    if (a->json) {
        printf("{\"store\":");
        json_string(a->path);
        printf(",\"schema\":\"%s\",\"records\":%" PRIu64 ",\"by_bound\":{", PST_SCHEMA, st.records);
        for (int i = 0; i < 5; i++)
            printf("%s\"%s\":%" PRIu64, i ? "," : "", eng_bound_name(bounds[i]),
                   st.by_bound[bounds[i]]);
        printf("},\"with_win_move\":%" PRIu64 ",\"with_draw_move\":%" PRIu64 ",\"by_pieces\":[",
               st.with_win_move, st.with_draw_move);
        for (int k = 0; k < 25; k++)
            printf("%s%" PRIu64, k ? "," : "", st.by_pieces[k]);
        printf("],\"map_bytes\":%" PRIu64 ",\"used_bytes\":%" PRIu64 "}\n", st.map_bytes,
               st.used_bytes);
        return CLI_EXIT_OK;
    }
    printf("store       %s (%s)\n", a->path, PST_SCHEMA);
    printf("records     %" PRIu64 "\n", st.records);
    for (int i = 0; i < 5; i++)
        printf("  %s        %" PRIu64 "\n", eng_bound_name(bounds[i]), st.by_bound[bounds[i]]);
    printf("win move    %" PRIu64 "\n", st.with_win_move);
    printf("draw move   %" PRIu64 "\n", st.with_draw_move);
    if (st.records > 0) {
        printf("by pieces\n");
        for (int k = 0; k < 25; k++)
            if (st.by_pieces[k])
                printf("  %-9d %" PRIu64 "\n", k, st.by_pieces[k]);
    }
    print_bytes("map bytes", st.map_bytes);
    print_bytes("used bytes", st.used_bytes);
    printf("(bounds for the side to move; positions kept with Black to move)\n");
    return CLI_EXIT_OK;
}

static int
store_get_cmd(const store_args *a)
{
    if (a->nrest == 0) {
        fprintf(stderr, "checkers store get: needs --store PATH and at least one FEN\n");
        return CLI_EXIT_USAGE;
    }
    /* FENs are checked before the store is opened: bad input is 2 even
     * when the store is missing. */
    eng_pos *ps = calloc((size_t)a->nrest, sizeof *ps);
    if (!ps) {
        fprintf(stderr, "checkers store get: out of memory\n");
        return CLI_EXIT_FAIL;
    }
    for (int i = 0; i < a->nrest; i++)
        if (cli_parse_fen("store get", a->rest[i], &ps[i]) != 0) {
            free(ps);
            return CLI_EXIT_USAGE;
        }
    pst_env *s;
    int status = open_store("get", a, &s);
    if (status != CLI_EXIT_OK) {
        free(ps);
        return status;
    }
    for (int i = 0; i < a->nrest; i++) {
        pst_record r;
        int rc = pst_get(s, &ps[i], &r);
        if (rc == PST_ENOTFOUND) {
            fprintf(stderr, "checkers store get: %s: no record\n", a->rest[i]);
            if (status == CLI_EXIT_OK)
                status = CLI_EXIT_FAIL;
        } else if (rc != 0) {
            fprintf(stderr, "checkers store get: %s: %s\n", a->rest[i], ck_strerror(rc));
            status = exit_of(rc) > status ? exit_of(rc) : status;
        } else if (print_record(a->rest[i], &ps[i], &r) != 0) {
            status = CLI_EXIT_DAMAGED;
        }
    }
    pst_close(s);
    free(ps);
    return status;
}

typedef struct export_state {
    uint64_t lines;
    int bad_moves;
} export_state;

static int
export_one(const eng_pos *p, const pst_record *r, void *arg)
{
    export_state *es = arg;
    char fen[ENG_FEN_MAX];
    eng_format_fen(p, fen, sizeof fen);
    es->bad_moves += print_record(fen, p, r) != 0;
    es->lines++;
    /* Stop when stdout fails (a closed pipe, a full disk). */
    return ferror(stdout) ? 1 : 0;
}

static int
store_export_cmd(const store_args *a)
{
    pst_env *s;
    int status = open_store("export", a, &s);
    if (status != CLI_EXIT_OK)
        return status;
    char err[512];
    export_state es = {0, 0};
    int rc = pst_foreach(s, export_one, &es, err, sizeof err);
    pst_close(s);
    if (fflush(stdout) != 0 || rc == 1) {
        fprintf(stderr,
                "checkers store export: writing the output failed after %" PRIu64 " records\n",
                es.lines);
        return CLI_EXIT_FAIL;
    }
    if (rc != 0) {
        fprintf(stderr, "checkers store export: %s (after %" PRIu64 " records)\n", err, es.lines);
        return exit_of(rc);
    }
    return es.bad_moves ? CLI_EXIT_DAMAGED : CLI_EXIT_OK;
}

int
cli_store(int argc, char **argv)
{
    if (argc < 2 || cli_is_help(argv[1])) {
        fputs(store_help, argc < 2 ? stderr : stdout);
        return argc < 2 ? CLI_EXIT_USAGE : CLI_EXIT_OK;
    }
    const char *sub = argv[1];
    store_args a;
    int help;
    if (parse_args(sub, argc - 1, argv + 1, &a, &help) != 0)
        return CLI_EXIT_USAGE;
    if (help) {
        fputs(store_help, stdout);
        return CLI_EXIT_OK;
    }
    int known = !strcmp(sub, "stats") || !strcmp(sub, "get") || !strcmp(sub, "export");
    if (!known) {
        fprintf(stderr, "checkers store: unknown subcommand '%s'\n%s", sub, store_help);
        return CLI_EXIT_USAGE;
    }
    if (!a.path) {
        fprintf(stderr, "checkers store %s: needs --store PATH\n", sub);
        return CLI_EXIT_USAGE;
    }
    if (a.json && strcmp(sub, "stats") != 0) {
        fprintf(stderr, "checkers store %s: --json is for stats only\n", sub);
        return CLI_EXIT_USAGE;
    }
    if (strcmp(sub, "get") != 0 && a.nrest > 0) {
        fprintf(stderr, "checkers store %s: unexpected argument '%s'\n", sub, a.rest[0]);
        return CLI_EXIT_USAGE;
    }
    if (!strcmp(sub, "stats"))
        return store_stats_cmd(&a);
    if (!strcmp(sub, "get"))
        return store_get_cmd(&a);
    return store_export_cmd(&a);
}
