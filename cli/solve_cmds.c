/*
 * solve_cmds.c - `checkers solve`: prove the value of a position (or one
 * goal) with df-pn over the endgame databases, writing the proof into the
 * proven-node store.
 */
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "egdb/egdb.h"
#include "prover/prover.h"
#include "prover/search.h"
#include "prover/store.h"

/* ---- static data ------------------------------------------------------ */

static const char solve_help[] =
    "usage: checkers solve --db DIR [--pieces N] [--store PATH] [--goal value|win|draw]\n"
    "                      [--time S] [--nodes N] [--tt MB] [--tt-kept MB] [--cache MB]\n"
    "                      [--ghi auto|optimistic|safe] [--json] FEN\n"
    "\n"
    "Proves the game-theoretic value of a position for its side to move with\n"
    "df-pn search over the endgame databases, and writes the whole proof into\n"
    "the proven-node store (--store), where `checkers proof check` can verify it.\n"
    "\n"
    "  --goal value  the exact value (default): a draw is two proofs, one for\n"
    "                each side; a short alpha-beta search picks the order\n"
    "  --goal win    only whether the side to move wins (win, or <=draw)\n"
    "  --goal draw   only whether it at least draws (>=draw, or loss)\n"
    "  --db DIR      endgame databases; --pieces N uses only those of up to N\n"
    "  --store PATH  proven-node store (LMDB directory, created if missing):\n"
    "                read before searching, and every proof is written to it\n"
    "  --time S, --nodes N   budget for the whole solve (default: none); writing\n"
    "                a proof the search found may search up to half as much again\n"
    "  --tt MB       df-pn table (default 256); --cache MB database cache (default 256)\n"
    "  --tt-kept MB  memory for the proven positions the table gives up, kept for\n"
    "                the walk that writes the proof (default 256, taken as needed;\n"
    "                0: none)\n"
    "  --ghi MODE    repetitions: optimistic searches first as if a\n"
    "                repetition's draw held on every line and keeps the answer\n"
    "                only if its proof closes, else searches again GHI-safe;\n"
    "                safe runs only the GHI-safe search; auto (default) is\n"
    "                optimistic with at most 4 men on the board, else safe\n"
    "                (docs/solver.md); either way only a closed proof counts\n"
    "  --json        one JSON object instead of the text report\n"
    "\n"
    "Output: the first line is FEN<TAB>RESULT, RESULT one of win, loss, draw,\n"
    ">=draw, <=draw, unknown (for the side to move); then the main line of the\n"
    "proof in PDN, the queries run, nodes, time and table use.\n"
    "Exit status: 0 the goal was proved, 1 the budget ran out or Ctrl-C / SIGTERM\n"
    "stopped it (a partial bound may still be printed), 2 bad usage or input, 3 a\n"
    "damaged database or store.\n"
    "\n"
    "Examples:\n"
    "  checkers solve --db egdb-data --store proofs 'B:W18,22,K27:B5,9,K14'\n"
    "  checkers solve --db egdb-data --pieces 4 --goal win --time 30 FEN\n";

static volatile int stop_flag;
static volatile int stop_sig; /* the signal that stopped the search (0: none) */

/* ---- helpers ---------------------------------------------------------- */

static void
on_signal(int sig)
{
    stop_sig = sig;
    stop_flag = 1;
    signal(SIGINT, SIG_DFL);
    signal(SIGTERM, SIG_DFL);
}

typedef struct prog {
    int last_len;
    int q;
} prog;

/* A proof or disproof number as text: "inf" from DFPN_INF on, as the
 * pages, their JSON and `checkers tree` write infinity (before, solve
 * printed 2^30 as if it were a count). */
static const char *
pn_text(uint32_t v, char *buf, size_t cap)
{
    if (v >= DFPN_INF)
        snprintf(buf, cap, "inf");
    else
        snprintf(buf, cap, "%u", v);
    return buf;
}

/* A progress line on a terminal, rewritten in place. */
static void
on_progress(const dfpn_progress *p, void *arg)
{
    prog *ps = arg;
    char line[200];
    double rate = p->seconds > 0 ? (double)p->nodes / p->seconds : 0;
    char a[16], b[16];
    int n = snprintf(line, sizeof line,
                     "\rdf-pn: %" PRIu64 " nodes  %.0f nodes/s  root pn %s dn %s  table %.0f%%"
                     "  gc %" PRIu64 "  %.0fs",
                     p->nodes, rate, pn_text(p->root_pn, a, sizeof a),
                     pn_text(p->root_dn, b, sizeof b), 100 * p->tt_fill, p->gc_runs, p->seconds);
    fprintf(stderr, "%s%*s", line, ps->last_len > n ? ps->last_len - n : 0, "");
    ps->last_len = n;
    fflush(stderr);
}

static const char *
query_name(const eng_question *q)
{
    if (q->target == ENG_WIN)
        return q->attacker == ENG_BLACK ? "Black wins?" : "White wins?";
    return q->attacker == ENG_BLACK ? "Black at least draws?" : "White at least draws?";
}

static const char *
status_name(int s)
{
    return s == DFPN_PROVEN ? "proven" : s == DFPN_DISPROVEN ? "disproven" : "unknown";
}

static void
print_line(FILE *f, const eng_pos *root, const eng_move *pv, int n)
{
    eng_pos p = *root;
    for (int i = 0; i < n; i++) {
        char m[ENG_MOVE_STR_MAX];
        eng_format_move(&pv[i], m, sizeof m);
        if (p.stm == ENG_BLACK || i == 0)
            fprintf(f, "%s%d.%s", i ? " " : "", i / 2 + 1, p.stm == ENG_WHITE ? ".." : "");
        fprintf(f, " %s", m);
        eng_make(&p, &pv[i], &p);
    }
}

/* ---- the command ------------------------------------------------------ */

int
cli_solve(int argc, char **argv)
{
    const char *db_dir = NULL, *store_path = NULL, *fen = NULL, *goal_s = "value", *ghi_s = "auto";
    long pieces = 0, tt_mb = 256, cache_mb = 256, tt_kept_mb = 256;
    double time_s = 0;
    unsigned long long nodes = 0;
    int json = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        int more = i + 1 < argc;
        if (cli_is_help(a)) {
            fputs(solve_help, stdout);
            return CLI_EXIT_OK;
        } else if (!strcmp(a, "--db") && more) {
            db_dir = argv[++i];
        } else if (!strcmp(a, "--store") && more) {
            store_path = argv[++i];
        } else if (!strcmp(a, "--goal") && more) {
            goal_s = argv[++i];
        } else if (!strcmp(a, "--pieces") && more) {
            if ((pieces = cli_parse_uint("solve", "--pieces", argv[++i], 1, 24)) < 0)
                return CLI_EXIT_USAGE;
        } else if (!strcmp(a, "--tt") && more) {
            if ((tt_mb = cli_parse_uint("solve", "--tt", argv[++i], 1, 1 << 20)) < 0)
                return CLI_EXIT_USAGE;
        } else if (!strcmp(a, "--tt-kept") && more) {
            if ((tt_kept_mb = cli_parse_uint("solve", "--tt-kept", argv[++i], 0, 1 << 20)) < 0)
                return CLI_EXIT_USAGE;
        } else if (!strcmp(a, "--cache") && more) {
            if ((cache_mb = cli_parse_uint("solve", "--cache", argv[++i], 0, 1 << 20)) < 0)
                return CLI_EXIT_USAGE;
        } else if (!strcmp(a, "--time") && more) {
            char *end;
            time_s = strtod(argv[++i], &end);
            if (*end || time_s <= 0) {
                fprintf(stderr, "checkers solve: bad --time '%s' (seconds > 0)\n", argv[i]);
                return CLI_EXIT_USAGE;
            }
        } else if (!strcmp(a, "--nodes") && more) {
            char *end;
            nodes = strtoull(argv[++i], &end, 10);
            if (*end || nodes == 0) {
                fprintf(stderr, "checkers solve: bad --nodes '%s' (a positive count)\n", argv[i]);
                return CLI_EXIT_USAGE;
            }
        } else if (!strcmp(a, "--ghi") && more) {
            ghi_s = argv[++i];
        } else if (!strcmp(a, "--json")) {
            json = 1;
        } else if (a[0] == '-' && a[1] == '-') {
            fprintf(stderr, "checkers solve: unknown option or missing value: %s\n%s", a,
                    solve_help);
            return CLI_EXIT_USAGE;
        } else if (!fen) {
            fen = a;
        } else {
            fprintf(stderr, "checkers solve: one FEN only (extra '%s')\n", a);
            return CLI_EXIT_USAGE;
        }
    }
    /* the value, or one question for the side to move */
    int goal = !strcmp(goal_s, "value")  ? 0
               : !strcmp(goal_s, "win")  ? ENG_WIN + 1
               : !strcmp(goal_s, "draw") ? ENG_DRAW + 1
                                         : -1;
    if (goal < 0) {
        fprintf(stderr, "checkers solve: bad --goal '%s' (value, win or draw)\n", goal_s);
        return CLI_EXIT_USAGE;
    }
    int ghi;
    if (prv_ghi_parse(ghi_s, &ghi) != 0) {
        fprintf(stderr, "checkers solve: bad --ghi '%s' (%s)\n", ghi_s, PRV_GHI_WORDS);
        return CLI_EXIT_USAGE;
    }
    if (!db_dir || !fen) {
        fprintf(stderr, "checkers solve: %s\n%s", !fen ? "a FEN is required" : "--db is required",
                solve_help);
        return CLI_EXIT_USAGE;
    }
    eng_pos p;
    if (cli_parse_fen("solve", fen, &p) != 0)
        return CLI_EXIT_USAGE;

    char err[512];
    egdb *db = NULL;
    int rc = egdb_open(db_dir, (int)pieces, (size_t)cache_mb << 20, &db, err, sizeof err);
    if (rc != 0) {
        fprintf(stderr, "checkers solve: %s\n", err);
        return rc == EGDB_ECORRUPT ? CLI_EXIT_DAMAGED : CLI_EXIT_USAGE;
    }
    pst_env *st = NULL;
    if (store_path && (rc = pst_open(store_path, 0, &st, err, sizeof err)) != 0) {
        fprintf(stderr, "checkers solve: %s\n", err);
        egdb_close(db);
        return rc == PST_ECORRUPT || rc == PST_EVERSION ? CLI_EXIT_DAMAGED : CLI_EXIT_FAIL;
    }
    int dbp = egdb_scope(db); /* what it holds: complete counts and whole splits */
    /* The store says which databases its proofs rest on (prover/store.h,
     * THE DATABASES' SCOPE): a check with fewer then says so. */
    if (st && (rc = pst_scope_note(st, dbp, err, sizeof err)) != 0) {
        fprintf(stderr, "checkers solve: %s\n", err);
        pst_close(st);
        egdb_close(db);
        return rc == PST_ECORRUPT ? CLI_EXIT_DAMAGED : CLI_EXIT_FAIL;
    }

    /* A short alpha-beta search orders the value queries (prover.h). */
    int hint = 0;
    if (goal == 0) {
        ab_ctx *ab;
        if (ab_new(16u << 20, &ab) == 0) {
            ab_opts ao = {0};
            ao.db = db;
            ao.db_pieces = dbp;
            ao.time_limit = 0.2;
            ao.stop = &stop_flag;
            ab_result ar;
            if (ab_search(ab, &p, &ao, &ar) == 0)
                hint = prv_hint(ar.score);
            ab_free(ab);
        }
    }

    signal(SIGINT, on_signal);
    signal(SIGTERM, on_signal);
    prog ps = {0, 0};
    prv_opts o = {0};
    o.db = db;
    o.db_pieces = dbp;
    o.store = st;
    eng_question ask = {p.stm, goal - 1};
    o.question = goal ? &ask : NULL;
    o.time_limit = time_s;
    o.node_limit = nodes;
    o.tt_bytes = (size_t)tt_mb << 20;
    o.tt_kept_bytes = (size_t)tt_kept_mb << 20;
    o.hint = hint;
    o.ghi = ghi;
    o.stop = &stop_flag;
    o.progress = isatty(2) && !json ? on_progress : NULL;
    o.progress_arg = &ps;
    prv_result r;
    rc = prv_solve(&p, &o, &r, err, sizeof err);
    /* the progress line, and the "^C" a terminal echoed after it,
     * erased: the answer starts on a clean line */
    if (ps.last_len || (stop_sig && isatty(2)))
        fputs("\r\033[K", stderr);
    char canon[ENG_FEN_MAX];
    eng_format_fen(&p, canon, sizeof canon);
    const char *word = prv_bound_word(r.bound);
    const prv_query *last = r.nq ? &r.q[r.nq - 1] : NULL;
    double nps = r.seconds > 0 ? (double)r.nodes / r.seconds : 0;
    if (json) {
        printf("{\"fen\":\"%s\",\"result\":\"%s\",\"bound\":\"%s\",\"complete\":%s,"
               "\"nodes\":%" PRIu64 ",\"expanded\":%" PRIu64 ",\"seconds\":%.3f,"
               "\"nodes_per_second\":%.0f,\"queries\":[",
               canon, word, eng_bound_name(r.bound), r.complete ? "true" : "false", r.nodes,
               r.expanded, r.seconds, nps);
        for (int i = 0; i < r.nq; i++) {
            const dfpn_result *d = &r.q[i].r;
            char a[16], b[16];
            /* numbers, or "inf" (a string, as the pages' JSON has it) */
            printf("%s{\"query\":\"%s\",\"status\":\"%s\",\"pn\":%s%s%s,\"dn\":%s%s%s,"
                   "\"nodes\":%" PRIu64 ",\"seconds\":%.3f,\"proof_records\":%" PRIu64
                   ",\"proof_length\":%d,\"walk_nodes\":%" PRIu64 ",\"walk_seconds\":%.3f,"
                   "\"refuted_nodes\":%" PRIu64 ",\"refuted_seconds\":%.3f,"
                   "\"refuted_walk_nodes\":%" PRIu64 ",\"refuted_walk_seconds\":%.3f,"
                   "\"table_used\":%" PRIu64 ",\"table_entries\":%" PRIu64 ",\"gc_runs\":%" PRIu64
                   ",\"kept_aside\":%" PRIu64 ",\"kept_back\":%" PRIu64 "}",
                   i ? "," : "", query_name(&r.q[i].q), status_name(d->status),
                   d->pn >= DFPN_INF ? "\"" : "", pn_text(d->pn, a, sizeof a),
                   d->pn >= DFPN_INF ? "\"" : "", d->dn >= DFPN_INF ? "\"" : "",
                   pn_text(d->dn, b, sizeof b), d->dn >= DFPN_INF ? "\"" : "", d->nodes, d->seconds,
                   d->proof_records, d->proof_length, d->walk_nodes, d->walk_seconds,
                   r.q[i].refuted_nodes, r.q[i].refuted_seconds, r.q[i].refuted_walk_nodes,
                   r.q[i].refuted_walk_seconds, d->tt_used, d->tt_entries, d->gc_runs,
                   d->kept_total, d->kept_back);
        }
        printf("]%s%s%s}\n", rc ? ",\"error\":\"" : "", rc ? err : "", rc ? "\"" : "");
    } else {
        printf("%s\t%s\n", canon, word);
        if (last && last->r.pvlen) {
            printf("line: ");
            print_line(stdout, &p, last->r.pv, last->r.pvlen);
            printf("\n");
        }
        for (int i = 0; i < r.nq; i++) {
            const dfpn_result *d = &r.q[i].r;
            char a[16], b[16];
            printf("query %d: %-22s %-9s %" PRIu64 " nodes, %.2fs, root pn %s dn %s", i + 1,
                   query_name(&r.q[i].q), status_name(d->status), d->nodes, d->seconds,
                   pn_text(d->pn, a, sizeof a), pn_text(d->dn, b, sizeof b));
            if (d->proof_records)
                printf(", proof of %" PRIu64 " positions written", d->proof_records);
            if (d->proof_length >= 0)
                printf(", longest win line %d plies", d->proof_length);
            if (d->walk_seconds > 0)
                printf(", of which the walk %" PRIu64 " nodes, %.2fs", d->walk_nodes,
                       d->walk_seconds);
            if (r.q[i].refuted_seconds > 0)
                printf(" (first an optimistic search whose proof could not be closed: %" PRIu64
                       " nodes, %.2fs, of which the walk that refused it %" PRIu64 " nodes, %.2fs)",
                       r.q[i].refuted_nodes, r.q[i].refuted_seconds, r.q[i].refuted_walk_nodes,
                       r.q[i].refuted_walk_seconds);
            printf("\n");
        }
        printf("nodes: %" PRIu64 " (%" PRIu64 " expanded) in %.2fs, %.0f nodes/s\n", r.nodes,
               r.expanded, r.seconds, nps);
        if (last)
            printf("table: %" PRIu64 " of %" PRIu64 " entries in use (%" PRIu64 " MB), %" PRIu64
                   " garbage collections, %" PRIu64
                   " proven positions put aside from full buckets, %" PRIu64 " taken back\n",
                   last->r.tt_used, last->r.tt_entries, last->r.tt_bytes >> 20, last->r.gc_runs,
                   last->r.kept_total, last->r.kept_back);
        /* a budget is named only when one was given: without one, an
         * incomplete answer is the solver's failure, said on stderr */
        if (!r.complete && !rc && stop_sig) /* a Ctrl-C is not a budget */
            printf("%s: %s\n", stop_sig == SIGINT ? "interrupted (Ctrl-C)" : "stopped (SIGTERM)",
                   r.bound == ENG_LW ? "nothing proved" : "only the bound above was proved");
        else if (!r.complete && !rc && (o.time_limit > 0 || o.node_limit || stop_flag))
            printf("budget ran out: %s\n",
                   r.bound == ENG_LW ? "nothing proved" : "only the bound above was proved");
        else if (!r.complete)
            printf("not settled: %s\n",
                   r.bound == ENG_LW ? "nothing proved" : "only the bound above was proved");
    }
    if (rc)
        fprintf(stderr, "checkers solve: %s\n", err);
    if (st)
        pst_close(st);
    egdb_close(db);
    if (rc)
        return r.error == DFPN_EDB || r.error == DFPN_ESTORE ? CLI_EXIT_DAMAGED : CLI_EXIT_FAIL;
    return r.complete ? CLI_EXIT_OK : CLI_EXIT_FAIL;
}
