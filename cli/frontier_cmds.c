/*
 * frontier_cmds.c - `checkers frontier`: how far from the endgame this
 * machine proves. A fixed ladder of positions on the engine's line of
 * each published opening, at 8, 10, ..., 18 pieces (openings/ladder.tsv,
 * made by `frontier ladder`), each proved by the manager and its workers
 * (`checkers prove`, one process per rung, a time budget per rung) and
 * checked by the independent checker; the figures by piece count go to
 * results/frontier.md, .tsv and .svg.
 *
 * THE LEVEL LADDER (--level, --ladder level)
 *   The same machinery on a second ladder (openings/level.tsv): the first
 *   level position (equal men and kings, no capture for the side to move)
 *   with at most 16, 14, 12 and 10 pieces on a deeper search's line. Its
 *   results go to results/level-2-N/ (N: the databases' scope, "7" or
 *   "7+4v4+partial", egdb.h). A level position is proved only when its
 *   value is exact (a draw needs both bounds); a proved bound alone is
 *   reported beside it.
 *   A position that is the rung of several rows (a capture skips a count,
 *   or two openings' lines meet) is proved once: the later rows take the
 *   first one's result, and the figures by pieces count it once.
 *
 * WHY A PROCESS PER RUNG
 *   `prove` is what a user runs: the frontier measures exactly it (its
 *   workers, its leases, its LMDB state), and a rung that crashes or is
 *   killed cannot take the others with it. Each rung's state stays in
 *   DIR/NN-PP, so a later run with a larger budget resumes it.
 *
 * CLIMBING
 *   By default an opening's rungs are tried from the fewest pieces up,
 *   and once one is not proved within its budget the higher ones are
 *   recorded as skipped (unproven): proofs get harder with every two
 *   pieces, and this keeps a run's cost near the frontier. --all tries
 *   every rung.
 */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/summary.h"
#include "egdb/egdb.h"
#include "openings/openings.h"
#include "prover/search.h"

#ifndef CHECKERS_VERSION
#define CHECKERS_VERSION "unknown"
#endif

/* ---- constants and types ---------------------------------------------- */

#define FR_MAX_ROWS (OPS_PUBLISHED * OPS_MAX_RUNGS)

/* The ladders' searches: depth (plies) by default, and the table (fixed,
 * because the table's size changes which entries survive and so the
 * line: the same size on every machine gives the same ladder). */
#define FR_FRONTIER_DEPTH 12
#define FR_LEVEL_DEPTH 16
#define FR_LADDER_TT ((size_t)64 << 20)

static const char frontier_help[] =
    "usage: checkers frontier ladder [--level] --db DIR [--depth D] [--plies N]\n"
    "                                [--pieces P]\n"
    "       checkers frontier run [--ladder frontier|level] --db DIR [--budget T]\n"
    "                             [--job-time S] [--workers N] [--pieces P]\n"
    "                             [--openings LIST] [--rungs LIST] [--all]\n"
    "                             [--untried] [--dir DIR] [--out DIR]\n"
    "       checkers frontier report [--out DIR]\n"
    "\n"
    "How far from the endgame this machine proves.\n"
    "\n"
    "ladder  plays the engine against itself from each of the 19 published\n"
    "        openings (alpha-beta to a fixed depth D with the databases in DIR,\n"
    "        probed up to P pieces, default all they hold; the table cleared\n"
    "        before each move; a line ends after N plies, default 300, or where\n"
    "        a position repeats) and writes the line's rungs with the moves that\n"
    "        reach them. Without --level: openings/ladder.tsv, the first\n"
    "        position with at most 18, 16, 14, 12, 10 and 8 pieces (default D\n"
    "        12). With --level: openings/level.tsv, the first LEVEL position\n"
    "        (as many men and as many kings on each side, and no capture for\n"
    "        the side to move) with at most 16, 14, 12 and 10 pieces (default D\n"
    "        16); a rung the line never reaches has no row, and a comment in\n"
    "        the file says why. The same depth, databases and engine give the\n"
    "        same ladder on any machine.\n"
    "run     proves each rung with `checkers prove --goal value` (the manager\n"
    "        and N local workers, default one per core; jobs of S seconds,\n"
    "        default 5) for at most T (default 60s; 90, 15m, 2h), then runs the\n"
    "        independent checker on it. An opening's rungs go from the fewest\n"
    "        pieces up; after one is not proved, the higher ones are skipped\n"
    "        (--all tries them all). State: DIR/NN-PP (default\n"
    "        proofs/frontier with the 1-6 databases, proofs/frontier-2-M with\n"
    "        the scope M); run again to resume unproved rungs with another\n"
    "        budget (proved ones are kept; --untried runs only rungs never\n"
    "        tried, so that every rung has had the same budget). LIST:\n"
    "        \"1,4,7-9\" (openings) or \"8,10\" (rungs). Writes OUT/frontier.tsv,\n"
    "        frontier.md and frontier.svg (default OUT: results, or\n"
    "        results/frontier-2-M) after every\n"
    "        rung. Ctrl-C stops cleanly (exit 1); the rung in progress resumes\n"
    "        next time. --ladder level runs openings/level.tsv instead (rungs\n"
    "        10-16; default DIR proofs/level, or proofs/level-2-M, default OUT\n"
    "        results/level-2-M, M the databases' scope: 7, or 7+4v4 with the\n"
    "        4v4 split of 8, 7+4v4+partial with bounds too); a position that is\n"
    "        the rung of an earlier row too is proved once, the later rows\n"
    "        taking its result. --pieces P uses the databases of up to P\n"
    "        pieces only (default: all DIR holds), as `prove --pieces` does:\n"
    "        the 2-6 baseline from a folder that holds the 1-7 set.\n"
    "report  rewrites frontier.md and frontier.svg from OUT/frontier.tsv.\n"
    "\n"
    "A rung counts as proved only when the checker accepts the proof of the\n"
    "root and its bound settles the value (win, draw or loss: a draw needs\n"
    "both bounds); a proved bound alone (>=draw, <=draw) is reported apart.\n"
    "Exit status: 0 done, 1 stopped or a rung failed to run, 2 bad usage, 3\n"
    "damaged databases or state.\n"
    "\n"
    "example:\n"
    "  checkers frontier ladder --db egdb-data\n"
    "  checkers frontier run --db egdb-data --budget 60 --rungs 8,10\n"
    "  checkers frontier ladder --level --db egdb-data --depth 16\n"
    "  checkers frontier run --ladder level --db egdb-data --budget 60s --workers 2\n";

typedef struct fr_row {
    int no, rung, pieces;
    char opening[64];
    char fen[ENG_FEN_MAX];
    char status[16]; /* proved, open, skipped, refused, failed, unreached */
    char result[32]; /* the checked result in words */
    char checked[16];
    uint64_t jobs, pn, dn, nodes;
    double seconds, budget;
    int depth, longest_win, db_pieces;
} fr_row;

typedef struct fr_table {
    int kind; /* OPS_LADDER_*: the ladder the rows are rungs of */
    fr_row row[FR_MAX_ROWS];
    int n;
    char runs[8][600]; /* the commands that wrote it, most recent last */
    int nruns;
} fr_table;

static volatile sig_atomic_t fr_stop;

/* ---- helpers ------------------------------------------------------------ */

static void
on_signal(int sig)
{
    (void)sig;
    fr_stop = 1;
}

/* Parses "1,4,7-9" into flags[lo..hi]; RETURN 0 or -1 (message printed). */
static int
parse_list(const char *what, const char *s, int lo, int hi, unsigned char *flags)
{
    memset(flags, 0, (size_t)hi + 1);
    const char *p = s;
    while (*p) {
        char *end;
        long a = strtol(p, &end, 10), b = a;
        if (end == p)
            goto bad;
        p = end;
        if (*p == '-') {
            b = strtol(p + 1, &end, 10);
            if (end == p + 1)
                goto bad;
            p = end;
        }
        if (a < lo || b > hi || a > b)
            goto bad;
        for (long i = a; i <= b; i++)
            flags[i] = 1;
        if (*p == ',')
            p++;
        else if (*p)
            goto bad;
    }
    return 0;
bad:
    fprintf(stderr, "checkers frontier: bad %s '%s' (numbers %d..%d: \"1,4,7-9\")\n", what, s, lo,
            hi);
    return -1;
}

/* mkdir -p: dir and any missing parents. RETURN 0, -1 (errno set). */
static int
make_dirs(const char *dir)
{
    char path[4096];
    snprintf(path, sizeof path, "%s", dir);
    for (char *c = path + 1; *c; c++)
        if (*c == '/') {
            *c = 0;
            if (mkdir(path, 0777) && errno != EEXIST)
                return -1;
            *c = '/';
        }
    return mkdir(path, 0777) && errno != EEXIST ? -1 : 0;
}

static double
median(double *v, int n)
{
    if (n == 0)
        return 0;
    for (int i = 1; i < n; i++)
        for (int j = i; j > 0 && v[j - 1] > v[j]; j--) {
            double t = v[j];
            v[j] = v[j - 1];
            v[j - 1] = t;
        }
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* ---- ladder --------------------------------------------------------------- */

/* Why a line stopped short of its last rung (the level ladder's comments). */
static const char *const stop_why[] = {
    "", "the game is over", "a position repeats, so the line would cycle", "the ply limit"};

/* The engine's line from one opening: each move the first of the
 * principal variation of a search to depth, the table cleared before
 * each search, so that a move depends on its position alone. Writes a row
 * to f at the first position of each rung (see ops_ladder_load_kind) and,
 * for the level kind, a comment for each rung never reached.
 * RETURN 0, or an exit code (message printed). */
static int
ladder_line(FILE *f, int kind, const ops_published *op, egdb *db, int db_pieces, ab_ctx *ab,
            int depth, int max_plies, double t0)
{
    const int *rungs;
    int nrungs = ops_ladder_rungs(kind, &rungs);
    size_t cap = (size_t)max_plies * 16 + 16, used = 0;
    char *line = malloc(cap);
    eng_pos *seen = malloc(((size_t)max_plies + 1) * sizeof *seen);
    if (!line || !seen) {
        free(line);
        free(seen);
        fprintf(stderr, "checkers frontier ladder: out of memory\n");
        return CLI_EXIT_FAIL;
    }
    line[0] = 0;
    eng_pos p = op->pos;
    int next = nrungs - 1, ply = 0, why = 0, rc = 0;
    for (;;) {
        /* the rungs this position is the first of: a position that is the
         * first of a rung is the first of every lower rung it also meets */
        while (next >= 0 && eng_pieces(&p) <= rungs[next] &&
               (kind != OPS_LADDER_LEVEL || ops_level(&p))) {
            char fen[ENG_FEN_MAX];
            eng_format_fen(&p, fen, sizeof fen);
            fprintf(f, "%d\t%s\t%d\t%d\t%d\t%s\t%s\n", op->no, op->moves, rungs[next],
                    eng_pieces(&p), ply, fen, line);
            next--;
        }
        if (next < 0)
            break;
        int rep = 0;
        for (int i = 0; i < ply && !rep; i++)
            rep = eng_equal(&seen[i], &p);
        if (rep) {
            /* the same position gets the same move: a cycle, no new position */
            why = 2;
            break;
        }
        if (ply >= max_plies) {
            why = 3;
            break;
        }
        seen[ply] = p;
        ab_opts o = {.db = db, .db_pieces = db_pieces, .max_depth = depth};
        ab_result r;
        ab_clear(ab);
        if (ab_search(ab, &p, &o, &r)) {
            fprintf(stderr, "checkers frontier ladder: the search failed on opening %d at ply %d\n",
                    op->no, ply);
            rc = CLI_EXIT_DAMAGED;
            break;
        }
        if (r.pvlen == 0) {
            why = 1;
            break;
        }
        char mv[64];
        eng_format_move(&r.pv[0], mv, sizeof mv);
        if (used + strlen(mv) + 2 > cap) {
            char *bigger = realloc(line, 2 * cap);
            if (!bigger) {
                fprintf(stderr, "checkers frontier ladder: out of memory\n");
                rc = CLI_EXIT_FAIL;
                break;
            }
            line = bigger;
            cap *= 2;
        }
        used += (size_t)snprintf(line + used, cap - used, "%s%s", ply ? " " : "", mv);
        eng_pos nx;
        eng_make(&p, &r.pv[0], &nx);
        p = nx;
        ply++;
    }
    if (!rc && next >= 0 && kind == OPS_LADDER_LEVEL) {
        /* no row: say so, with the whole line, so that the gap can be
         * checked by replaying it */
        for (int k = next; k >= 0; k--)
            fprintf(f,
                    "# opening %d: no level position with at most %d pieces: the line stops at "
                    "ply %d with %d pieces (%s)\n",
                    op->no, rungs[k], ply, eng_pieces(&p), stop_why[why]);
        fprintf(f, "# opening %d: the whole line: %s\n", op->no, line);
    }
    if (!rc) {
        printf("opening %2d  %-18s  %3d plies  %2d pieces at the end", op->no, op->moves, ply,
               eng_pieces(&p));
        if (next >= 0)
            printf("  (rung %d not reached: %s)", rungs[next], stop_why[why]);
        printf("  (%.0f s)\n", cli_now() - t0);
        fflush(stdout);
    }
    free(line);
    free(seen);
    return rc;
}

static int
ladder_cmd(int argc, char **argv)
{
    const char *db_dir = NULL;
    int kind = OPS_LADDER_FRONTIER;
    long depth = -1, max_plies = 300, db_pieces = 0;
    for (int i = 2; i < argc; i++) {
        if (cli_is_help(argv[i])) {
            fputs(frontier_help, stdout);
            return CLI_EXIT_OK;
        } else if (!strcmp(argv[i], "--db") && i + 1 < argc) {
            db_dir = argv[++i];
        } else if (!strcmp(argv[i], "--level")) {
            kind = OPS_LADDER_LEVEL;
        } else if (!strcmp(argv[i], "--depth") && i + 1 < argc) {
            if ((depth = cli_parse_uint("frontier ladder", "--depth", argv[++i], 1, 40)) < 0)
                return CLI_EXIT_USAGE;
        } else if (!strcmp(argv[i], "--plies") && i + 1 < argc) {
            if ((max_plies = cli_parse_uint("frontier ladder", "--plies", argv[++i], 1, 2000)) < 0)
                return CLI_EXIT_USAGE;
        } else if (!strcmp(argv[i], "--pieces") && i + 1 < argc) {
            if ((db_pieces = cli_parse_uint("frontier ladder", "--pieces", argv[++i], 2, 32)) < 0)
                return CLI_EXIT_USAGE;
        } else {
            fprintf(stderr, "checkers frontier ladder: unknown or incomplete option '%s'\n",
                    argv[i]);
            return CLI_EXIT_USAGE;
        }
    }
    if (depth < 0)
        depth = kind == OPS_LADDER_LEVEL ? FR_LEVEL_DEPTH : FR_FRONTIER_DEPTH;
    if (!db_dir) {
        fprintf(stderr, "checkers frontier ladder: needs --db DIR (the engine's line probes the "
                        "endgame databases)\n");
        return CLI_EXIT_USAGE;
    }
    static ops_book b;
    char err[1200];
    if (ops_load(NULL, &b, err, sizeof err)) {
        fprintf(stderr, "checkers frontier ladder: %s\n", err);
        return CLI_EXIT_USAGE;
    }
    egdb *db;
    int rc = egdb_open(db_dir, 0, (size_t)256 << 20, &db, err, sizeof err);
    if (rc) {
        fprintf(stderr, "checkers frontier ladder: databases %s: %s\n", db_dir, err);
        return rc == EGDB_ECORRUPT ? CLI_EXIT_DAMAGED : CLI_EXIT_USAGE;
    }
    if (db_pieces == 0 || db_pieces > egdb_max_pieces(db))
        db_pieces = egdb_max_pieces(db);
    ab_ctx *ab;
    if (ab_new(FR_LADDER_TT, &ab)) {
        egdb_close(db);
        return CLI_EXIT_FAIL;
    }
    char path[600], tmp[640];
    snprintf(path, sizeof path, "%s/%s", b.dir, ops_ladder_file(kind));
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    FILE *f = fopen(tmp, "w");
    if (!f) {
        fprintf(stderr, "checkers frontier ladder: cannot write %s: %s\n", tmp, strerror(errno));
        ab_free(ab);
        egdb_close(db);
        return CLI_EXIT_FAIL;
    }
    const char *lv = kind == OPS_LADDER_LEVEL ? " --level" : "";
    fprintf(f,
            "# The %s ladder, written by `checkers frontier ladder%s --db DIR --depth %ld "
            "--plies %ld --pieces %ld`:\n"
            "# for each published opening, the engine's line from the position after it (each "
            "move the\n"
            "# first of the principal variation of an alpha-beta search to depth %ld with the "
            "1-%ld piece\n"
            "# databases and a %zu MB table, cleared before each search; a line ends where a "
            "position\n"
            "# repeats or after %ld plies), and on it ",
            ops_ladder_name(kind), lv, depth, max_plies, db_pieces, depth, db_pieces,
            FR_LADDER_TT >> 20, max_plies);
    if (kind == OPS_LADDER_LEVEL)
        fprintf(f, "the first level position (the same number of men\n"
                   "# and of kings on each side, and no capture for the side to move) with at "
                   "most 16, 14, 12\n"
                   "# and 10 pieces. A rung a line never reaches has no row, and a comment says "
                   "why.\n");
    else
        fprintf(f, "the first position with at most 18, 16, 14, 12, 10\n"
                   "# and 8 pieces.\n");
    fprintf(f,
            "# engine %s.\n"
            "# line: the moves from the opening's position to the rung's (ply of them).\n"
            "no\topening\trung\tpieces\tply\tfen\tline\n",
            CHECKERS_VERSION);
    double t0 = cli_now();
    rc = CLI_EXIT_OK;
    for (int k = 0; k < b.npub && rc == CLI_EXIT_OK; k++)
        rc =
            ladder_line(f, kind, &b.pub[k], db, (int)db_pieces, ab, (int)depth, (int)max_plies, t0);
    ab_free(ab);
    egdb_close(db);
    if (fclose(f) || rc != CLI_EXIT_OK || rename(tmp, path)) {
        if (rc == CLI_EXIT_OK)
            fprintf(stderr, "checkers frontier ladder: cannot write %s\n", path);
        unlink(tmp);
        return rc == CLI_EXIT_OK ? CLI_EXIT_FAIL : rc;
    }
    ops_rung *r;
    int n;
    if (ops_ladder_load_kind(NULL, kind, &r, &n, err, sizeof err)) {
        fprintf(stderr, "checkers frontier ladder: the file written does not read back: %s\n", err);
        return CLI_EXIT_FAIL;
    }
    free(r);
    printf("%s: %d rungs (%.0f s)\n", path, n, cli_now() - t0);
    return CLI_EXIT_OK;
}

/* ---- the table of results ------------------------------------------------- */

static fr_row *
find_row(fr_table *t, int no, int rung)
{
    for (int i = 0; i < t->n; i++)
        if (t->row[i].no == no && t->row[i].rung == rung)
            return &t->row[i];
    return NULL;
}

static int
row_cmp(const void *a, const void *b)
{
    const fr_row *x = a, *y = b;
    return x->no != y->no ? x->no - y->no : x->rung - y->rung;
}

/* Reads OUT/frontier.tsv (missing: empty, of the given kind). Its
 * "# ladder: NAME" line says which ladder its rows are rungs of (none: the
 * frontier ladder, as files written before the level ladder).
 * RETURN 0, -1 (message printed). */
static int
table_load(const char *path, int kind, fr_table *t)
{
    memset(t, 0, sizeof *t);
    t->kind = kind;
    FILE *f = fopen(path, "r");
    if (!f)
        return 0;
    t->kind = OPS_LADDER_FRONTIER;
    char *line = NULL;
    size_t cap = 0;
    int lineno = 0, header = 0, rc = 0;
    const int *rungs;
    int nrungs = ops_ladder_rungs(t->kind, &rungs);
    while (getline(&line, &cap, f) >= 0) {
        lineno++;
        line[strcspn(line, "\r\n")] = 0;
        if (!strncmp(line, "# ladder: ", 10)) {
            int k = 0;
            while (ops_ladder_name(k) && strcmp(ops_ladder_name(k), line + 10))
                k++;
            if (!ops_ladder_name(k) || header || t->n) {
                fprintf(stderr, "checkers frontier: %s, line %d: %s '%s'\n", path, lineno,
                        ops_ladder_name(k) ? "a ladder named after the rows" : "no ladder named",
                        line + 10);
                rc = -1;
                break;
            }
            t->kind = k;
            nrungs = ops_ladder_rungs(t->kind, &rungs);
            continue;
        }
        if (!strncmp(line, "# run: ", 7)) {
            if (t->nruns == 8) {
                memmove(t->runs[0], t->runs[1], sizeof t->runs[0] * 7);
                t->nruns = 7;
            }
            snprintf(t->runs[t->nruns++], sizeof t->runs[0], "%s", line + 7);
            continue;
        }
        if (line[0] == '#' || !line[0])
            continue;
        if (!header++)
            continue;
        char *fld[18];
        int n = 0;
        for (char *s = line, *save = NULL, *tok; n < 18 && (tok = strtok_r(s, "\t", &save));
             s = NULL)
            fld[n++] = tok;
        if (n != 17 || t->n == FR_MAX_ROWS) {
            if (n != 17)
                fprintf(stderr, "checkers frontier: %s, line %d: expected 17 fields, found %d\n",
                        path, lineno, n);
            else
                fprintf(stderr, "checkers frontier: %s, line %d: more than %d rows\n", path, lineno,
                        FR_MAX_ROWS);
            rc = -1;
            break;
        }
        fr_row *r = &t->row[t->n++];
        r->no = atoi(fld[0]);
        snprintf(r->opening, sizeof r->opening, "%s", fld[1]);
        r->rung = atoi(fld[2]);
        r->pieces = atoi(fld[3]);
        snprintf(r->fen, sizeof r->fen, "%s", fld[4]);
        snprintf(r->status, sizeof r->status, "%s", fld[5]);
        snprintf(r->result, sizeof r->result, "%s", fld[6]);
        snprintf(r->checked, sizeof r->checked, "%s", fld[7]);
        r->jobs = strtoull(fld[8], NULL, 10);
        r->seconds = atof(fld[9]);
        r->budget = atof(fld[10]);
        r->pn = cli_pn_parse(fld[11]);
        r->dn = cli_pn_parse(fld[12]);
        r->nodes = strtoull(fld[13], NULL, 10);
        r->depth = atoi(fld[14]);
        r->longest_win = atoi(fld[15]);
        r->db_pieces = atoi(fld[16]);
        int known = 0, twice = 0;
        for (int k = 0; k < nrungs; k++)
            known |= r->rung == rungs[k];
        for (int k = 0; k < t->n - 1; k++)
            twice |= t->row[k].no == r->no && t->row[k].rung == r->rung;
        if (r->no < 1 || r->no > OPS_PUBLISHED || !known || twice) {
            fprintf(stderr, "checkers frontier: %s, line %d: opening %d, rung %d: %s\n", path,
                    lineno, r->no, r->rung, twice ? "a second row for it" : "no such rung");
            rc = -1;
            break;
        }
    }
    free(line);
    fclose(f);
    return rc;
}

static int
table_save(const char *path, fr_table *t)
{
    char tmp[4200];
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    FILE *f = fopen(tmp, "w");
    if (!f) {
        fprintf(stderr, "checkers frontier: cannot write %s: %s\n", tmp, strerror(errno));
        return -1;
    }
    qsort(t->row, (size_t)t->n, sizeof t->row[0], row_cmp);
    fprintf(f,
            "# ladder: %s\n"
            "# The provability frontier, one row per ladder rung (openings/%s), written by "
            "`checkers frontier run`.\n"
            "# status: proved (the checker accepted the root's proof and it settles the "
            "value), open, skipped,\n"
            "# refused (the checker refused it), failed, unreached. seconds: manager time "
            "over all runs;\n"
            "# budget: the time given over all runs; pn dn: the root's numbers for its "
            "open question.\n",
            ops_ladder_name(t->kind), ops_ladder_file(t->kind));
    for (int i = 0; i < t->nruns; i++)
        fprintf(f, "# run: %s\n", t->runs[i]);
    fprintf(f, "no\topening\trung\tpieces\tfen\tstatus\tresult\tchecked\tjobs\tseconds\tbudget\t"
               "pn\tdn\tnodes\tdepth\tlongest_win\tdb_pieces\n");
    for (int i = 0; i < t->n; i++) {
        const fr_row *r = &t->row[i];
        char pn[24], dn[24];
        fprintf(f,
                "%d\t%s\t%d\t%d\t%s\t%s\t%s\t%s\t%" PRIu64 "\t%.1f\t%.0f\t%s\t%s\t%" PRIu64
                "\t%d\t%d\t%d\n",
                r->no, r->opening, r->rung, r->pieces, r->fen, r->status, r->result, r->checked,
                r->jobs, r->seconds, r->budget, cli_pn_text(r->pn, pn, sizeof pn),
                cli_pn_text(r->dn, dn, sizeof dn), r->nodes, r->depth, r->longest_win,
                r->db_pieces);
    }
    if (fclose(f) || rename(tmp, path)) {
        fprintf(stderr, "checkers frontier: cannot write %s\n", path);
        return -1;
    }
    return 0;
}

/* ---- the report ------------------------------------------------------------ */

/* The figures of a group of rows: one rung, or (level ladder) the
 * distinct positions with one count of pieces on the board. */
typedef struct fr_level {
    int pieces;                          /* the rung, or the pieces on the board */
    int rungs, tried, proved;            /* proved: exact value, checked */
    int wins, draws, losses;             /* of the proved */
    int ge, le;                          /* a checked >=draw or <=draw bound only */
    int failed, refused;                 /* prove did not end well; the checker refused */
    uint64_t jobs;                       /* over the tried rows */
    double secs;                         /* the same */
    double med_jobs, med_secs, max_secs; /* of the proved */
} fr_level;

/* Nonzero when the row was run (or took the result of a row that was). */
static int
tried(const fr_row *r)
{
    return strcmp(r->status, "skipped") && strcmp(r->status, "unreached");
}

/* The row that stands for row i's position in the figures by pieces,
 * which count a position once however many rows it is the rung of: the
 * first proved row of that position, else the first tried, else the
 * first (rows in table order). */
static int
position_rep(const fr_table *t, int i)
{
    if (!strcmp(t->row[i].fen, "-"))
        return i;
    int first = -1, first_tried = -1;
    for (int j = 0; j < t->n; j++) {
        const fr_row *r = &t->row[j];
        if (strcmp(r->fen, t->row[i].fen))
            continue;
        if (!strcmp(r->status, "proved"))
            return j;
        if (first < 0)
            first = j;
        if (first_tried < 0 && tried(r))
            first_tried = j;
    }
    return first_tried >= 0 ? first_tried : first;
}

/* Adds row r to group l (proved rows also to the median arrays). */
static void
tally(fr_level *l, const fr_row *r, double *jobs, double *secs, int *n)
{
    l->rungs++;
    if (!strcmp(r->status, "skipped"))
        return;
    l->tried++;
    l->jobs += r->jobs;
    l->secs += r->seconds;
    l->failed += !strcmp(r->status, "failed");
    l->refused += !strcmp(r->status, "refused");
    if (strcmp(r->status, "proved")) {
        /* open with a checked bound: proved one side only */
        l->ge += !strcmp(r->result, ">=draw");
        l->le += !strcmp(r->result, "<=draw");
        return;
    }
    l->proved++;
    l->wins += !strcmp(r->result, "win");
    l->draws += !strcmp(r->result, "draw");
    l->losses += !strcmp(r->result, "loss");
    jobs[*n] = (double)r->jobs;
    secs[*n] = r->seconds;
    if (r->seconds > l->max_secs)
        l->max_secs = r->seconds;
    (*n)++;
}

/* The groups by rung (by_pieces 0: every row, one group per rung of the
 * ladder) or by pieces on the board (by_pieces 1: the distinct positions,
 * one group per count found, fewest first). RETURN the number of groups
 * (at most FR_MAX_GROUPS). */
#define FR_MAX_GROUPS 16
static int
levels(const fr_table *t, int by_pieces, fr_level *lv)
{
    int counts[FR_MAX_GROUPS], ng = 0;
    if (by_pieces) {
        for (int p = 2; p <= 24 && ng < FR_MAX_GROUPS; p++)
            for (int i = 0; i < t->n; i++)
                if (t->row[i].pieces == p && strcmp(t->row[i].status, "unreached")) {
                    counts[ng++] = p;
                    break;
                }
    } else {
        const int *rungs;
        ng = ops_ladder_rungs(t->kind, &rungs);
        memcpy(counts, rungs, (size_t)ng * sizeof *counts);
    }
    for (int k = 0; k < ng; k++) {
        fr_level *l = &lv[k];
        memset(l, 0, sizeof *l);
        l->pieces = counts[k];
        double jobs[FR_MAX_ROWS], secs[FR_MAX_ROWS];
        int n = 0;
        for (int i = 0; i < t->n; i++) {
            const fr_row *r = &t->row[i];
            if ((by_pieces ? r->pieces : r->rung) != l->pieces || !strcmp(r->status, "unreached"))
                continue;
            if (by_pieces && position_rep(t, i) != i)
                continue;
            tally(l, r, jobs, secs, &n);
        }
        l->med_jobs = median(jobs, n);
        l->med_secs = median(secs, n);
    }
    return ng;
}

static void
machine(char *buf, size_t cap)
{
    char model[200] = "unknown CPU";
    FILE *f = fopen("/proc/cpuinfo", "r");
    char line[512];
    while (f && fgets(line, sizeof line, f))
        if (!strncmp(line, "model name", 10)) {
            char *c = strchr(line, ':');
            if (c) {
                snprintf(model, sizeof model, "%s", c + 2);
                model[strcspn(model, "\n")] = 0;
            }
            break;
        }
    if (f)
        fclose(f);
    long mem = sysconf(_SC_PHYS_PAGES) / 1024 * sysconf(_SC_PAGESIZE) / 1024;
    snprintf(buf, cap, "%ld cores (%s), %.0f GiB of memory", sysconf(_SC_NPROCESSORS_ONLN), model,
             (double)mem / 1024);
}

static int
write_svg(const char *path, const fr_table *t, const fr_level *lv, int ng)
{
    FILE *f = fopen(path, "w");
    if (!f) {
        fprintf(stderr, "checkers frontier: cannot write %s: %s\n", path, strerror(errno));
        return -1;
    }
    const int level = t->kind == OPS_LADDER_LEVEL;
    const int bw = 60, gap = 36, x0 = 70, y0 = 40, ph = 240, H = 360;
    const int W = x0 + 40 + (ng > 6 ? ng : 6) * (bw + gap);
    fprintf(f,
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
            "font-family=\"sans-serif\" font-size=\"12\">\n"
            "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n"
            "<text x=\"%d\" y=\"22\" font-size=\"15\">%s</text>\n",
            W, H, x0,
            level ? "Level positions proved exactly (checked), by pieces on the board"
                  : "Ladder rungs proved (checked), by pieces on the board");
    for (int pct = 0; pct <= 100; pct += 25) {
        int y = y0 + ph - ph * pct / 100;
        fprintf(f,
                "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#ddd\"/>"
                "<text x=\"%d\" y=\"%d\" text-anchor=\"end\">%d%%</text>\n",
                x0, y, x0 + ng * (bw + gap), y, x0 - 6, y + 4, pct);
    }
    for (int k = 0; k < ng; k++) {
        const fr_level *l = &lv[k];
        int x = x0 + gap / 2 + k * (bw + gap);
        double frac = l->rungs ? (double)l->proved / l->rungs : 0;
        double bnd = l->rungs ? (double)(l->ge + l->le) / l->rungs : 0;
        double tried = l->rungs ? (double)l->tried / l->rungs : 0;
        int h = (int)(frac * ph + 0.5), hb = (int)(bnd * ph + 0.5), ht = (int)(tried * ph + 0.5);
        fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"#ddd\"/>\n", x,
                y0 + ph - ht, bw, ht);
        if (hb)
            fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"#eb5\"/>\n", x,
                    y0 + ph - h - hb, bw, hb);
        fprintf(f,
                "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"#3a7\"/>\n"
                "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">%d/%d</text>\n"
                "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\" font-size=\"13\">%d</text>\n",
                x, y0 + ph - h, bw, h, x + bw / 2, y0 + ph - h - hb - 5, l->proved, l->rungs,
                x + bw / 2, y0 + ph + 18, l->pieces);
        if (l->proved)
            fprintf(f,
                    "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\" fill=\"#555\">%.0f s</text>\n",
                    x + bw / 2, y0 + ph + 34, l->med_secs);
    }
    fprintf(f,
            "<text x=\"%d\" y=\"%d\">pieces%s</text>\n"
            "<text x=\"%d\" y=\"%d\" fill=\"#555\">green: exact value; amber: one bound only; "
            "median time of an exact one; grey: tried</text>\n"
            "</svg>\n",
            x0 - 60, y0 + ph + 18, level ? "" : " (rung)", x0 - 60, y0 + ph + 50);
    return fclose(f) ? -1 : 0;
}

/* One line of a by-pieces table. */
static void
level_line(FILE *f, const fr_level *l)
{
    fprintf(f, "| %d | %d | %d | %d | %.0f%% | %d / %d / %d | %d / %d | %d | %d / %d | ", l->pieces,
            l->rungs, l->tried, l->proved, l->rungs ? 100.0 * l->proved / l->rungs : 0.0, l->wins,
            l->draws, l->losses, l->ge, l->le,
            l->tried - l->proved - l->ge - l->le - l->failed - l->refused, l->failed, l->refused);
    if (l->proved)
        fprintf(f, "%.0f | %.1f | %.1f | ", l->med_jobs, l->med_secs, l->max_secs);
    else
        fprintf(f, "- | - | - | ");
    fprintf(f, "%" PRIu64 " | %.0f |\n", l->jobs, l->secs);
}

static const char level_head[] =
    "| exact | fraction | win / draw / loss | >=draw / <=draw only | nothing | failed / refused | "
    "median jobs | median time (s) | longest (s) | jobs | time (s) |\n"
    "| ---: | ---: | ---: | ---: | ---: | :---: | :---: | ---: | :---: | ---: | ---: | ---: | "
    "---: | ---: |\n";

/* Writes OUT/frontier.md and OUT/frontier.svg from the table. */
static int
write_report(const char *out, const fr_table *t)
{
    const int level = t->kind == OPS_LADDER_LEVEL;
    fr_level rung[FR_MAX_GROUPS], pc[FR_MAX_GROUPS];
    int nrung = levels(t, 0, rung), npc = levels(t, 1, pc);
    char path[4200];
    snprintf(path, sizeof path, "%s/frontier.svg", out);
    if (level ? write_svg(path, t, pc, npc) : write_svg(path, t, rung, nrung))
        return -1;
    snprintf(path, sizeof path, "%s/frontier.md", out);
    FILE *f = fopen(path, "w");
    if (!f) {
        fprintf(stderr, "checkers frontier: cannot write %s: %s\n", path, strerror(errno));
        return -1;
    }
    char mach[400];
    machine(mach, sizeof mach);
    int dbp = 0;
    for (int i = 0; i < t->n; i++)
        if (t->row[i].db_pieces > dbp)
            dbp = t->row[i].db_pieces;
    char dbname[48]; /* the scope: "7", "7+4v4+partial" (egdb.h) */
    egdb_scope_name(dbp, dbname, sizeof dbname);
    if (level)
        fprintf(f,
                "# Level positions: what this machine proves\n\n"
                "A fixed ladder of level positions (as many men and as many kings on each side, "
                "no capture for\n"
                "the side to move) on a deep search's line of each of the 19 published openings "
                "(`openings/level.tsv`,\n"
                "made by `checkers frontier ladder --level`): the first with at most 16, 14, 12 "
                "and 10 pieces. Each\n"
                "is proved with `checkers prove --goal value` (the manager and its local workers) "
                "within a time\n"
                "budget and then checked by the independent checker (`prover/check.h`, as "
                "`checkers proof check\n"
                "--state` runs it). A position counts as proved only when the checked proof "
                "gives its exact value\n"
                "(a draw needs both bounds: `>=draw` and `<=draw`); a checked bound alone is "
                "counted apart.\n"
                "Rungs above an opening's first unproved one are skipped (counted as not proved) "
                "unless the run\n"
                "says `--all`. A position that is the rung of several rows is proved once.\n\n");
    else
        fprintf(f, "# The provability frontier\n\n"
                   "How far from the endgame this machine proves: a fixed ladder of positions on "
                   "the engine's line of\n"
                   "each of the 19 published openings (`openings/ladder.tsv`, made by `checkers "
                   "frontier ladder`), the\n"
                   "first position with at most 8, 10, ..., 18 pieces, each proved with "
                   "`checkers prove --goal value`\n"
                   "(the manager and its local workers) within a time budget and then checked by "
                   "the independent\n"
                   "checker (`prover/check.h`, as `checkers proof check --state` runs it). A rung "
                   "counts as proved only\n"
                   "when the checker accepts the root's proof and its bound settles the value. "
                   "Rungs above an opening's\n"
                   "first unproved one are skipped (counted as not proved) unless the run says "
                   "`--all`.\n\n");
    fprintf(f,
            "Machine: %s. Databases: 2-%s pieces.\n\n"
            "Written by (most recent last):\n\n",
            mach, dbname);
    for (int i = 0; i < t->nruns; i++)
        fprintf(f, "    %s\n", t->runs[i]);
    fprintf(f, "\n![proved by piece count](frontier.svg)\n\n");
    if (level) {
        fprintf(f, "## By pieces on the board (distinct positions)\n\n"
                   "| pieces | positions | tried ");
        fputs(level_head, f);
        for (int k = 0; k < npc; k++)
            level_line(f, &pc[k]);
        fprintf(f, "\n");
    }
    fprintf(f, "## By %s\n\n| %s | rungs | tried ", level ? "rung" : "piece count",
            level ? "rung" : "pieces");
    fputs(level_head, f);
    for (int k = 0; k < nrung; k++)
        if (rung[k].rungs)
            level_line(f, &rung[k]);
    fprintf(f,
            "\n*Exact*: the checked proof settles the value. *>=draw / <=draw only*: the checker "
            "accepted a\nproof of one bound, and the other was not proved in time. *Nothing*: "
            "tried, and no bound\nproved. *Failed*: `prove` did not end normally (its log is "
            "beside the rung's state);\n*refused*: the checker refused the proof (always a bug). "
            "*Tried*: run, whatever came of it; the\nothers were skipped (a lower rung of their "
            "opening was not proved) and count as not proved,\nso where tried < rungs the "
            "fraction is a lower bound. Times are the manager's wall-clock time\nover all runs "
            "of the rung (the workers run in parallel with it); *jobs* and *time* are totals "
            "over\nthe tried ones, the medians are over the exact ones only.%s\n\n"
            "## Every rung\n\n"
            "| opening | rung | pieces | position | status | result (side to move) | checked | "
            "jobs | time (s) | budget (s) | root pn / dn | tree | depth |\n"
            "| ---: | ---: | ---: | --- | --- | --- | --- | ---: | ---: | ---: | ---: | ---: "
            "| ---: |\n",
            level ? "\nIn the table by rung a position that is the rung of several rows counts "
                    "in each; in the table by\npieces, once."
                  : "");
    for (int i = 0; i < t->n; i++) {
        const fr_row *r = &t->row[i];
        char pn[24], dn[24], same[64] = "";
        for (int j = 0; j < i; j++)
            if (!strcmp(t->row[j].fen, r->fen) && strcmp(r->fen, "-")) {
                snprintf(same, sizeof same, " (position of %d/%d)", t->row[j].no, t->row[j].rung);
                break;
            }
        fprintf(f,
                "| %d | %d | %d | `%s` | %s%s | %s | %s | %" PRIu64 " | %.1f | %.0f | %s / %s | "
                "%" PRIu64 " | %d |\n",
                r->no, r->rung, r->pieces, r->fen, r->status, same, r->result, r->checked, r->jobs,
                r->seconds, r->budget, cli_pn_text(r->pn, pn, sizeof pn),
                cli_pn_text(r->dn, dn, sizeof dn), r->nodes, r->depth);
    }
    return fclose(f) ? -1 : 0;
}

/* ---- run ---------------------------------------------------------------------- */

typedef struct fr_run {
    const char *db, *dir, *out;
    const char *exe;
    double budget;
    long job_s, workers;
    long pieces; /* --pieces: the databases' piece limit (0: all the folder holds) */
} fr_run;

/* Runs `checkers prove` for one rung, its output in DIR/NN-PP.log.
 * RETURN the process's exit status, or -1 if it could not run. */
static int
prove_rung(const fr_run *o, const ops_rung *r, const char *state)
{
    char budget[32], job[32], workers[32], pieces[32], log[4400];
    snprintf(budget, sizeof budget, "%.0f", o->budget);
    snprintf(job, sizeof job, "%ld", o->job_s);
    snprintf(workers, sizeof workers, "%ld", o->workers);
    snprintf(log, sizeof log, "%s.log", state);
    /* --fen and --goal every time: prove resumes a state with the same
     * root and goal, and refuses (exit 2) one that holds another */
    const char *argv[24];
    int n = 0;
    argv[n++] = o->exe;
    argv[n++] = "prove";
    argv[n++] = "--fen";
    argv[n++] = r->fen;
    argv[n++] = "--goal";
    argv[n++] = "value";
    argv[n++] = "--job-time";
    argv[n++] = job;
    argv[n++] = "--state";
    argv[n++] = state;
    argv[n++] = "--db";
    argv[n++] = o->db;
    argv[n++] = "--budget";
    argv[n++] = budget;
    argv[n++] = "--workers";
    argv[n++] = workers;
    if (o->pieces > 0) {
        snprintf(pieces, sizeof pieces, "%ld", o->pieces);
        argv[n++] = "--pieces";
        argv[n++] = pieces;
    }
    argv[n++] = "--quiet";
    argv[n] = NULL;
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0) {
        FILE *lf = fopen(log, "a");
        if (lf) {
            dup2(fileno(lf), 1);
            dup2(fileno(lf), 2);
        }
        execv(o->exe, (char *const *)argv);
        _exit(127);
    }
    int st, told = 0;
    while (waitpid(pid, &st, 0) < 0) {
        if (errno != EINTR)
            return -1;
        if (fr_stop && !told) { /* a SIGTERM to this process alone */
            kill(pid, SIGINT);
            told = 1;
        }
    }
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* Fills row from the rung's state (summary and checker). RETURN 0, or
 * an exit code (message printed). */
static int
summarise(const fr_run *o, const ops_rung *r, const char *state, fr_row *row)
{
    cli_summary s;
    char err[1024];
    int rc = cli_summary_get(state, o->db, 1, &s, err, sizeof err);
    if (rc) {
        fprintf(stderr, "checkers frontier: %s: %s\n", state, err);
        return rc;
    }
    if (!eng_equal(&s.root, &r->pos)) {
        fprintf(stderr, "checkers frontier: %s holds the proof of another position than %s\n",
                state, r->fen);
        return CLI_EXIT_USAGE;
    }
    snprintf(row->result, sizeof row->result, "%s", cli_summary_word(&s));
    snprintf(row->checked, sizeof row->checked, "%s",
             s.checked == 1 ? (s.bound == ENG_LW ? "-" : "valid") : "refused");
    snprintf(row->status, sizeof row->status, "%s",
             s.checked == 0 ? "refused"
             : s.settled    ? "proved"
                            : "open");
    row->jobs = s.s.jobs_done;
    row->seconds = s.s.seconds;
    row->pn = s.s.root_pn;
    row->dn = s.s.root_dn;
    row->nodes = s.s.nodes;
    row->depth = s.depth;
    row->longest_win = s.longest_win;
    row->db_pieces = s.db_pieces;
    return 0;
}

/* The row of the table before row (by opening, then rung) that holds the
 * same position and has been tried; NULL when none. */
static const fr_row *
same_position(const fr_table *t, const fr_row *row)
{
    const fr_row *best = NULL;
    for (int i = 0; i < t->n; i++) {
        const fr_row *r = &t->row[i];
        if (r == row || strcmp(r->fen, row->fen) || row_cmp(r, row) > 0 || !tried(r))
            continue;
        if (!best || row_cmp(r, best) < 0)
            best = r;
    }
    return best;
}

/* Row takes src's result and figures (its own opening, rung and place). */
static void
copy_result(fr_row *row, const fr_row *src)
{
    snprintf(row->status, sizeof row->status, "%s", src->status);
    snprintf(row->result, sizeof row->result, "%s", src->result);
    snprintf(row->checked, sizeof row->checked, "%s", src->checked);
    row->jobs = src->jobs;
    row->pn = src->pn;
    row->dn = src->dn;
    row->nodes = src->nodes;
    row->seconds = src->seconds;
    row->budget = src->budget;
    row->depth = src->depth;
    row->longest_win = src->longest_win;
    row->db_pieces = src->db_pieces;
}

static int
run_cmd(int argc, char **argv)
{
    fr_run o = {.budget = 60, .job_s = 5};
    unsigned char open_sel[OPS_PUBLISHED + 1], rung_sel[25];
    memset(open_sel, 1, sizeof open_sel);
    memset(rung_sel, 1, sizeof rung_sel);
    int all = 0, untried = 0, kind = OPS_LADDER_FRONTIER;
    const char *rungs_arg = NULL;
    long nproc = sysconf(_SC_NPROCESSORS_ONLN);
    o.workers = nproc > 0 ? nproc : 1;
    for (int i = 2; i < argc; i++) {
        const char *a = argv[i];
        int more = i + 1 < argc;
        if (cli_is_help(a)) {
            fputs(frontier_help, stdout);
            return CLI_EXIT_OK;
        } else if (!strcmp(a, "--db") && more) {
            o.db = argv[++i];
        } else if (!strcmp(a, "--ladder") && more) {
            i++;
            for (kind = 0; ops_ladder_name(kind) && strcmp(ops_ladder_name(kind), argv[i]);)
                kind++;
            if (!ops_ladder_name(kind)) {
                fprintf(stderr, "checkers frontier run: no ladder '%s' (frontier, level)\n",
                        argv[i]);
                return CLI_EXIT_USAGE;
            }
        } else if (!strcmp(a, "--dir") && more) {
            o.dir = argv[++i];
        } else if (!strcmp(a, "--out") && more) {
            o.out = argv[++i];
        } else if (!strcmp(a, "--budget") && more) {
            if ((o.budget = cli_parse_duration(argv[++i])) < 1) {
                fprintf(stderr, "checkers frontier run: bad --budget '%s' (90, 90s, 15m, 2h)\n",
                        argv[i]);
                return CLI_EXIT_USAGE;
            }
        } else if (!strcmp(a, "--job-time") && more) {
            if ((o.job_s = cli_parse_uint("frontier run", "--job-time", argv[++i], 1, 86400)) < 0)
                return CLI_EXIT_USAGE;
        } else if (!strcmp(a, "--workers") && more) {
            if ((o.workers = cli_parse_uint("frontier run", "--workers", argv[++i], 1, 256)) < 0)
                return CLI_EXIT_USAGE;
        } else if (!strcmp(a, "--pieces") && more) {
            if ((o.pieces = cli_parse_uint("frontier run", "--pieces", argv[++i], 2, 32)) < 0)
                return CLI_EXIT_USAGE;
        } else if (!strcmp(a, "--openings") && more) {
            if (parse_list("--openings", argv[++i], 1, OPS_PUBLISHED, open_sel))
                return CLI_EXIT_USAGE;
        } else if (!strcmp(a, "--rungs") && more) {
            rungs_arg = argv[++i]; /* read below, once the ladder is known */
        } else if (!strcmp(a, "--all")) {
            all = 1;
        } else if (!strcmp(a, "--untried")) {
            untried = 1;
        } else {
            fprintf(stderr, "checkers frontier run: unknown or incomplete option '%s'\n", a);
            return CLI_EXIT_USAGE;
        }
    }
    const int *rungs;
    const int nrungs = ops_ladder_rungs(kind, &rungs);
    if (rungs_arg) {
        int lo = rungs[0], hi = rungs[nrungs - 1];
        if (parse_list("--rungs", rungs_arg, lo, hi, rung_sel))
            return CLI_EXIT_USAGE;
        int any = 0; /* rungs are even: "8-12" means 8, 10, 12 */
        for (int k = lo; k <= hi; k++)
            any |= rung_sel[k] &= (k % 2 == 0);
        if (!any) {
            fprintf(stderr, "checkers frontier run: no rung in '%s' (%d, %d, ..., %d)\n", rungs_arg,
                    lo, lo + 2, hi);
            return CLI_EXIT_USAGE;
        }
    }
    if (!o.db) {
        fprintf(stderr, "checkers frontier run: needs --db DIR (the endgame databases)\n");
        return CLI_EXIT_USAGE;
    }
    char err[1200];
    ops_rung *lad;
    int nlad;
    if (ops_ladder_load_kind(NULL, kind, &lad, &nlad, err, sizeof err)) {
        fprintf(stderr, "checkers frontier run: %s (make it with `checkers frontier ladder%s`)\n",
                err, kind == OPS_LADDER_LEVEL ? " --level" : "");
        return CLI_EXIT_USAGE;
    }
    static ops_book book;
    if (ops_load(NULL, &book, err, sizeof err)) {
        fprintf(stderr, "checkers frontier run: %s\n", err);
        free(lad);
        return CLI_EXIT_USAGE;
    }
    for (int j = 0; j < nlad; j++)
        if (!eng_equal(&lad[j].start, &book.pub[lad[j].no - 1].pos)) {
            fprintf(stderr,
                    "checkers frontier run: openings/%s: the rung %d of opening %d "
                    "starts from \"%s\", which is not published opening %d (%s)\n",
                    ops_ladder_file(kind), lad[j].rung, lad[j].no, lad[j].opening, lad[j].no,
                    book.pub[lad[j].no - 1].moves);
            free(lad);
            return CLI_EXIT_USAGE;
        }
    egdb *db;
    int dbrc = egdb_open(o.db, (int)o.pieces, (size_t)1 << 20, &db, err, sizeof err);
    if (dbrc) {
        fprintf(stderr, "checkers frontier run: databases %s: %s\n", o.db, err);
        free(lad);
        return dbrc == EGDB_ECORRUPT ? CLI_EXIT_DAMAGED : CLI_EXIT_USAGE;
    }
    /* results and states are kept apart by databases: the same ladder
     * proved with the 2-6 and the 2-7 databases are two baselines, and a
     * rung's state rests on the databases it began with (`prove` refuses
     * another --pieces). The 2-6 frontier keeps its first names
     * (results/, proofs/frontier); the level ladder's results always
     * named their databases. The name is the scope ("7", "7+4v4",
     * "7+4v4+partial"), not the largest complete count: a folder with the
     * 4v4 split or partial files beside 1-7 must not share the 2-7 run's
     * states, which `prove` would refuse (another scope). */
    int scope = egdb_scope(db), maxp = scope == egdb_max_pieces(db) ? scope : 0;
    char sname[48];
    egdb_scope_name(scope, sname, sizeof sname);
    egdb_close(db);
    char out_dir[96], state_dir[96];
    if (kind == OPS_LADDER_LEVEL) {
        snprintf(out_dir, sizeof out_dir, "results/level-2-%s", sname);
        snprintf(state_dir, sizeof state_dir, "proofs/level-2-%s", sname);
        if (maxp == 6)
            snprintf(state_dir, sizeof state_dir, "proofs/level");
    } else {
        snprintf(out_dir, sizeof out_dir, "results/frontier-2-%s", sname);
        snprintf(state_dir, sizeof state_dir, "proofs/frontier-2-%s", sname);
        if (maxp == 6) {
            snprintf(out_dir, sizeof out_dir, "results");
            snprintf(state_dir, sizeof state_dir, "proofs/frontier");
        }
    }
    if (!o.out)
        o.out = out_dir;
    if (!o.dir)
        o.dir = state_dir;
    char exe[4096];
    cli_self_exe(exe, sizeof exe, argv[0]);
    o.exe = exe;
    if (make_dirs(o.dir)) {
        fprintf(stderr, "checkers frontier run: cannot create %s: %s\n", o.dir, strerror(errno));
        free(lad);
        return CLI_EXIT_FAIL;
    }
    if (make_dirs(o.out)) {
        fprintf(stderr, "checkers frontier run: cannot create %s: %s\n", o.out, strerror(errno));
        free(lad);
        return CLI_EXIT_FAIL;
    }
    static fr_table t;
    char tsv[4200];
    snprintf(tsv, sizeof tsv, "%s/frontier.tsv", o.out);
    if (table_load(tsv, kind, &t)) {
        free(lad);
        return CLI_EXIT_USAGE;
    }
    if (t.kind != kind) {
        fprintf(stderr,
                "checkers frontier run: %s holds the results of the %s ladder, not the %s one "
                "(another --out)\n",
                tsv, ops_ladder_name(t.kind), ops_ladder_name(kind));
        free(lad);
        return CLI_EXIT_USAGE;
    }
    /* the command, for the report */
    char cmd[600];
    time_t now = time(NULL);
    size_t used = strftime(cmd, sizeof cmd, "%Y-%m-%d: checkers frontier", gmtime(&now));
    for (int i = 1; i < argc && used < sizeof cmd - 1; i++)
        used += (size_t)snprintf(cmd + used, sizeof cmd - used, " %s", argv[i]);
    if (t.nruns == 8) {
        memmove(t.runs[0], t.runs[1], sizeof t.runs[0] * 7);
        t.nruns = 7;
    }
    snprintf(t.runs[t.nruns++], sizeof t.runs[0], "%s", cmd);

    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);

    int rc = CLI_EXIT_OK;
    double t0 = cli_now();
    for (int no = 1; no <= OPS_PUBLISHED && !fr_stop; no++) {
        if (!open_sel[no])
            continue;
        int blocked = 0;
        for (int k = 0; k < nrungs && !fr_stop; k++) {
            int rung = rungs[k];
            const ops_rung *r = NULL;
            for (int j = 0; j < nlad; j++)
                if (lad[j].no == no && lad[j].rung == rung)
                    r = &lad[j];
            fr_row *row = find_row(&t, no, rung);
            if (row && r && strcmp(row->fen, "-") && strcmp(row->fen, r->fen)) {
                /* the ladder was made again since: that row measured another
                 * position (its state directory holds it; prove refuses to
                 * mix them) */
                printf("opening %2d, rung %2d: the ladder's position changed; the old result "
                       "is dropped\n",
                       no, rung);
                row->jobs = 0;
                row->budget = row->seconds = 0;
                snprintf(row->status, sizeof row->status, "skipped");
            }
            if (!row) {
                if (t.n == FR_MAX_ROWS) {
                    fprintf(stderr, "checkers frontier run: more than %d rows\n", FR_MAX_ROWS);
                    rc = CLI_EXIT_FAIL;
                    fr_stop = 1;
                    break;
                }
                row = &t.row[t.n++];
                memset(row, 0, sizeof *row);
                row->no = no;
                row->rung = rung;
                snprintf(row->opening, sizeof row->opening, "%s", book.pub[no - 1].moves);
                snprintf(row->status, sizeof row->status, "skipped");
                snprintf(row->result, sizeof row->result, "-");
                snprintf(row->checked, sizeof row->checked, "-");
                row->longest_win = -1;
            }
            if (!r) {
                snprintf(row->status, sizeof row->status, "unreached");
                snprintf(row->fen, sizeof row->fen, "-");
                continue;
            }
            row->pieces = r->pieces;
            snprintf(row->fen, sizeof row->fen, "%s", r->fen);
            if (!rung_sel[rung] || !strcmp(row->status, "proved"))
                continue; /* not asked for, or done */
            if (untried && row->budget > 0) {
                blocked |= strcmp(row->status, "proved") != 0;
                continue; /* tried before: keep its budget */
            }
            if (blocked && !all) {
                if (!row->jobs) /* an earlier run's attempt stays as it was */
                    snprintf(row->status, sizeof row->status, "skipped");
                continue;
            }
            const fr_row *earlier = same_position(&t, row);
            if (earlier) {
                /* proved (or tried) already as an earlier row: the same
                 * position, the same proof */
                printf("opening %2d, rung %2d (%d pieces): the position of opening %d, rung %d: "
                       "%s\n",
                       no, rung, r->pieces, earlier->no, earlier->rung, earlier->status);
                copy_result(row, earlier);
                blocked |= strcmp(row->status, "proved") != 0;
                if (table_save(tsv, &t) || write_report(o.out, &t)) {
                    rc = CLI_EXIT_FAIL;
                    fr_stop = 1;
                }
                continue;
            }
            char state[4200];
            snprintf(state, sizeof state, "%s/%02d-%02d", o.dir, no, rung);
            printf("opening %2d, rung %2d (%d pieces): proving for %.0f s ...", no, rung, r->pieces,
                   o.budget);
            fflush(stdout);
            int prc = prove_rung(&o, r, state);
            row->budget += o.budget;
            if (prc == CLI_EXIT_USAGE || prc == CLI_EXIT_DAMAGED) {
                /* the state or the databases: every rung would fail alike */
                printf(" refused (exit %d; see %s.log)\n", prc, state);
                snprintf(row->status, sizeof row->status, "failed");
                rc = prc;
                fr_stop = 1;
            } else if (prc != 0 && prc != 1) {
                printf(" failed (exit %d; see %s.log)\n", prc, state);
                snprintf(row->status, sizeof row->status, "failed");
                rc = CLI_EXIT_FAIL;
                blocked = 1;
            } else {
                int src = summarise(&o, r, state, row);
                if (src) {
                    rc = src;
                    snprintf(row->status, sizeof row->status, "failed");
                    fr_stop = 1;
                } else {
                    printf(" %s: %s, checked %s, %" PRIu64 " jobs, %.1f s\n", row->status,
                           row->result, row->checked, row->jobs, row->seconds);
                    if (!strcmp(row->status, "refused"))
                        rc = CLI_EXIT_FAIL; /* a proof the checker refuses is a bug */
                }
                blocked |= strcmp(row->status, "proved") != 0;
            }
            if (table_save(tsv, &t) || write_report(o.out, &t)) {
                rc = CLI_EXIT_FAIL;
                fr_stop = 1;
            }
            fflush(stdout);
        }
    }
    if (table_save(tsv, &t) || write_report(o.out, &t))
        rc = CLI_EXIT_FAIL;
    free(lad);
    printf("%s/frontier.md written (%.0f s)\n", o.out, cli_now() - t0);
    if (fr_stop && rc == CLI_EXIT_OK) {
        printf("stopped; run the same command again to continue\n");
        return CLI_EXIT_FAIL;
    }
    return rc;
}

static int
report_cmd(int argc, char **argv)
{
    const char *out = "results";
    for (int i = 2; i < argc; i++) {
        if (!strcmp(argv[i], "--out") && i + 1 < argc)
            out = argv[++i];
        else {
            fprintf(stderr, "checkers frontier report: unknown or incomplete option '%s'\n",
                    argv[i]);
            return CLI_EXIT_USAGE;
        }
    }
    static fr_table t;
    char tsv[4200];
    snprintf(tsv, sizeof tsv, "%s/frontier.tsv", out);
    struct stat sb;
    if (stat(tsv, &sb)) {
        fprintf(stderr, "checkers frontier report: no %s (run `checkers frontier run` first)\n",
                tsv);
        return CLI_EXIT_USAGE;
    }
    if (table_load(tsv, OPS_LADDER_FRONTIER, &t))
        return CLI_EXIT_USAGE;
    return write_report(out, &t) ? CLI_EXIT_FAIL : CLI_EXIT_OK;
}

int
cli_frontier(int argc, char **argv)
{
    if (argc < 2 || cli_is_help(argv[1])) {
        fputs(frontier_help, argc < 2 ? stderr : stdout);
        return argc < 2 ? CLI_EXIT_USAGE : CLI_EXIT_OK;
    }
    if (!strcmp(argv[1], "ladder"))
        return ladder_cmd(argc, argv);
    if (!strcmp(argv[1], "run"))
        return run_cmd(argc, argv);
    if (!strcmp(argv[1], "report"))
        return report_cmd(argc, argv);
    fprintf(stderr, "checkers frontier: unknown subcommand '%s' (ladder, run, report)\n", argv[1]);
    return CLI_EXIT_USAGE;
}
