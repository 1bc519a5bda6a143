/*
 * egdb_cmds.c - `checkers egdb ...`: build, probe, stats, verify, count.
 */
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "errors/errors.h"
#include "egdb/egdb.h"
#include "egdb/index.h"
#include "egdb/partial.h"
#include "egdb/pipeline.h"
#include "engine/value.h"

/* ---- static data ------------------------------------------------------ */

static const char egdb_help[] =
    "usage: checkers egdb <build|probe|stats|verify|count|units> [options]\n"
    "\n"
    "Endgame databases: the exact value (win, loss, draw for the side to move)\n"
    "of every position with few pieces, built by retrograde analysis.\n"
    "\n"
    "  build  --pieces N --dir DIR [--threads T] [--memory GB] [--no-threats]\n"
    "         build every database with up to N pieces into DIR, then its\n"
    "         compressed form (see compress). Ctrl-C or a kill stops it; run it\n"
    "         again to resume (finished slices are kept).\n"
    "  build  --pieces N --split S --dir DIR [--pipeline | --keep-build-files]\n"
    "         the top piece count's splits S only (\"4v4,5v3\"; all smaller\n"
    "         databases first). --pipeline (the default for 8 pieces) builds\n"
    "         it a unit (a material and its twin) at a time: each verified,\n"
    "         compressed, compared, and its 2-bit files deleted once no unit\n"
    "         still to build reads them. The cost (time, peak disk, memory) is\n"
    "         said first; a build the free disk cannot hold is refused.\n"
    "         --estimate: say the cost and whether the disk holds it (exit 1\n"
    "         when it does not), and build nothing\n"
    "  build  --pieces N --unit KKMM --dir DIR [--pipeline]\n"
    "         one unit, as a task of a cluster build (docs/slurm.md): the\n"
    "         smaller databases and the units it promotes into must be there\n"
    "  units  --pieces N [--split S] [--dir DIR]\n"
    "         the units of N pieces in build order: pieces, men, KKMM, slices,\n"
    "         positions (units with as many men never depend on each other);\n"
    "         with --dir, where each stands in DIR (-, started K/N, built,\n"
    "         checking K/N, compressing K/N, compressed, done) and a summary\n"
    "         of the build so far\n"
    "  build  --only MATERIALS --dir DIR [--threads T]\n"
    "         build only these materials (\"KKMM\" = black kings, white kings,\n"
    "         black men, white men, comma-separated, twins implied) as a\n"
    "         partial-information database: moves into databases that are not\n"
    "         in DIR count as unknown, and values are bounds (LL LD DD DW WW LW)\n"
    "         --memory: refuse to start if the largest slice pair needs more;\n"
    "         warn if the finished databases will not stay in memory too\n"
    "  compress --db DIR [--pieces N] [--threads T] [--no-threats]\n"
    "         write the compressed form (.cwl) of every built slice that lacks\n"
    "         one (build does this at its end); probing prefers it. Capture\n"
    "         positions, and unless --no-threats threatened-capture positions,\n"
    "         keep no value and are resolved by a small search when probed.\n"
    "         Ctrl-C stops it after the slices in hand; run it again to resume\n"
    "  probe  --db DIR [--moves] [--cache MB] FEN...\n"
    "         print FEN<TAB>win|loss|draw for the side to move; --moves adds the\n"
    "         value of each legal move (for the side that makes it); exit status\n"
    "         3: a database file it needs is damaged (file, block and part named)\n"
    "  stats  --db DIR [--json]\n"
    "         positions, wins, losses, draws, build time and file size by material\n"
    "  verify --db DIR [--threads T] [--only MATERIALS]\n"
    "         check every file's checksum and every position against its moves;\n"
    "         exit status 1: a wrong value (the first bad slice and position are\n"
    "         named), 3: a damaged or missing file (file and block named).\n"
    "         --only: the positions of these materials only (\"KKMM,...\", twins\n"
    "         implied); every file is still loaded and its checksum read\n"
    "  verify --db DIR --partial [--threads T]\n"
    "         check every bound of the partial files (.pwl) against its moves:\n"
    "         a bound that claims more than the moves give is a wrong value\n"
    "  count  --pieces N\n"
    "         the number of positions by piece split, from the index itself\n"
    "\n"
    "Examples:\n"
    "  checkers egdb build --pieces 5 --dir egdb-data\n"
    "  checkers egdb build --only 0033,1023 --dir egdb-data   # after 1-5 pieces\n"
    "  checkers egdb probe --db egdb-data 'W:WK3:BK10,K14'\n"
    "  checkers egdb verify --db egdb-data\n"
    "  checkers egdb count --pieces 8\n"
    "  checkers egdb build --pieces 8 --split 4v4 --dir egdb-data   # after 1-7 pieces\n";

/* Set by SIGINT/SIGTERM: the build stops after the slice pair in hand. */
static volatile sig_atomic_t stop_requested;
static volatile int stop_flag;

/* ---- helpers ---------------------------------------------------------- */

static void
on_signal(int sig)
{
    (void)sig;
    stop_requested = 1;
    stop_flag = 1;
    /* A second signal kills at once: the default action comes back. */
    signal(SIGINT, SIG_DFL);
    signal(SIGTERM, SIG_DFL);
}

/* From here on, SIGINT and SIGTERM set stop_flag (on_signal): the long
 * commands stop after the work in hand and say how to resume. */
static void
catch_stop_signals(void)
{
    signal(SIGINT, on_signal);
    signal(SIGTERM, on_signal);
}

static void
human_count(uint64_t n, char *buf, size_t len)
{
    if (n >= 1000000000ull)
        snprintf(buf, len, "%.2fG", (double)n / 1e9);
    else if (n >= 1000000ull)
        snprintf(buf, len, "%.1fM", (double)n / 1e6);
    else if (n >= 1000ull)
        snprintf(buf, len, "%.1fk", (double)n / 1e3);
    else
        snprintf(buf, len, "%" PRIu64, n);
}

/* Bytes as "12.3 GB", "45.6 MB" or "789 kB". */
static void
human_bytes(uint64_t n, char *buf, size_t len)
{
    if (n >= 1000000000ull)
        snprintf(buf, len, "%.1f GB", (double)n / 1e9);
    else if (n >= 1000000ull)
        snprintf(buf, len, "%.1f MB", (double)n / 1e6);
    else
        snprintf(buf, len, "%.0f kB", (double)n / 1e3);
}

typedef struct progress_state {
    int tty;
    int last_len;
    int tenths;       /* compress, verify: tenths of the run already logged (not a tty) */
    const char *what; /* verify: the step being logged ("2-bit files", ...) */
    char phase[32];   /* the phase of the last call: a new one starts its tenths afresh */
    uint64_t done;    /* done_total of the last call: less means a new run of it */
} progress_state;

/* Progress on a terminal: one line rewritten in place. Otherwise: one log
 * line per finished slice pair (build), per tenth of the run (compress). */
static void
on_progress(const egdb_progress *p, void *arg)
{
    progress_state *ps = arg;
    double frac = p->run_total ? (double)p->done_total / (double)p->run_total : 0.0;
    double rate = p->elapsed > 0 ? (double)p->done_total / p->elapsed : 0.0;
    double eta = rate > 0 ? (double)(p->run_total - p->done_total) / rate : 0.0;
    char res[32], pos[32], r[32];
    human_count(p->resolved, res, sizeof res);
    human_count(p->positions, pos, sizeof pos);
    human_count((uint64_t)rate, r, sizeof r);
    /* A pipelined build runs verify and compress once a unit: each run of
     * a phase logs its own tenths (they were logged for the first unit
     * only, and an 8-piece unit then ran for an hour without a line) */
    if (strcmp(ps->phase, p->phase) || p->done_total < ps->done) {
        snprintf(ps->phase, sizeof ps->phase, "%s", p->phase);
        ps->tenths = 0;
    }
    ps->done = p->done_total;
    if (!strcmp(p->phase, "verify")) {
        /* One line per step (the 2-bit files, then the compressed ones). */
        if (!ps->what || strcmp(ps->what, p->slice)) {
            if (ps->tty && ps->what)
                fprintf(stderr, "\n");
            ps->what = p->slice;
            ps->tenths = 0;
            ps->last_len = 0;
        }
        if (ps->tty) {
            char line[256];
            int n = snprintf(line, sizeof line,
                             "\rverify %s  %s/%s positions  %5.1f%%  %s pos/s  ETA %.0fs", p->slice,
                             res, pos, 100.0 * frac, r, eta);
            fprintf(stderr, "%s%*s", line, ps->last_len > n ? ps->last_len - n : 0, "");
            ps->last_len = n;
            fflush(stderr);
        } else if ((int)(10.0 * frac) > ps->tenths) {
            /* the tenth crossed, not the fraction rounded: 99.6% printed as
             * "(100%)" made two 100% lines for one unit */
            ps->tenths = (int)(10.0 * frac);
            fprintf(stderr, "verify %s: %s of %s positions (%d%%), %.1fs elapsed, ETA %.0fs\n",
                    p->slice, res, pos, 10 * ps->tenths, p->elapsed, eta);
        }
        return;
    }
    if (!strcmp(p->phase, "compress")) {
        /* Slices instead of pairs, positions compressed instead of
         * resolved; the rest as the build's line. */
        if (ps->tty) {
            char line[256];
            int n = snprintf(line, sizeof line,
                             "\r%d pieces  slice %zu/%zu  %s  compress  %s/%s positions  %5.1f%%  "
                             "%s pos/s  ETA %.0fs",
                             p->npieces, p->pair_no, p->pair_count, p->slice, res, pos,
                             100.0 * frac, r, eta);
            fprintf(stderr, "%s%*s", line, ps->last_len > n ? ps->last_len - n : 0, "");
            ps->last_len = n;
            fflush(stderr);
        } else if ((int)(10.0 * frac) > ps->tenths) {
            ps->tenths = (int)(10.0 * frac);
            fprintf(stderr,
                    "compress %s slice %zu/%zu: %s of %s positions; total %.1f%%, %.1fs elapsed, "
                    "ETA %.0fs\n",
                    p->slice, p->pair_no, p->pair_count, res, pos, 10.0 * ps->tenths, p->elapsed,
                    eta); /* the tenth crossed (as verify's) */
        }
        return;
    }
    if (ps->tty) {
        char line[256], ph[64];
        if (p->pass)
            snprintf(ph, sizeof ph, "%s pass %" PRIu64, p->phase, p->pass);
        else
            snprintf(ph, sizeof ph, "%s", p->phase);
        int n = snprintf(line, sizeof line,
                         "\r%d pieces  pair %zu/%zu  %s  %s  %s/%s resolved  %5.1f%%  %s pos/s  "
                         "ETA %.0fs",
                         p->npieces, p->pair_no, p->pair_count, p->slice, ph, res, pos,
                         100.0 * frac, r, eta);
        fprintf(stderr, "%s%*s", line, ps->last_len > n ? ps->last_len - n : 0, "");
        ps->last_len = n;
        fflush(stderr);
    } else if (!strcmp(p->phase, "write")) {
        /* A log of an hours-long build says how long is left, from this
         * run's positions a second so far (a pipelined build's elapsed
         * time includes its units' stages); none before 1% is done, when
         * the small slices' rate says little. */
        char left[80] = "";
        if (frac >= 0.01 && frac < 1.0) {
            if (eta >= 5400)
                snprintf(left, sizeof left, ", about %.1f h left to build at this run's rate",
                         eta / 3600);
            else if (eta >= 90)
                snprintf(left, sizeof left, ", about %.0f min left to build at this run's rate",
                         eta / 60);
            else
                snprintf(left, sizeof left, ", about %.0f s left to build at this run's rate", eta);
        }
        fprintf(stderr,
                "%s %s pair %zu/%zu: %" PRIu64 " positions; total %.1f%%, %.1fs elapsed%s\n",
                p->phase, p->slice, p->pair_no, p->pair_count, p->positions, 100.0 * frac,
                p->elapsed, left);
    }
}

/* The exit status of a failed database read: 3 when a file is damaged or
 * unreadable (main.c), else 1. */
static int
damaged_exit(int rc)
{
    return rc == EGDB_ECORRUPT || rc == EGDB_EIO ? CLI_EXIT_DAMAGED : CLI_EXIT_FAIL;
}

/* Option parsing shared by the subcommands. */
typedef struct egdb_args {
    const char *dir;
    long pieces, threads;
    double memory_gb; /* 0: no limit */
    size_t cache_mb;
    int no_threats;
    const char *only;  /* materials of a partial build */
    const char *split; /* build: splits of the top piece count */
    const char *unit;  /* build: one unit (a cluster task) */
    int pipeline;      /* build: 1 --pipeline, 0 --keep-build-files, -1 default */
    int moves, json;
    int estimate; /* build: say the cost, build nothing */
    int partial;  /* verify: the partial files' bounds */
    char **rest;
    int nrest;
} egdb_args;

static int
parse_args(const char *sub, int argc, char **argv, egdb_args *a, int *help)
{
    memset(a, 0, sizeof *a);
    a->pieces = -1;
    a->cache_mb = 256;
    a->pipeline = -1;
    a->threads = sysconf(_SC_NPROCESSORS_ONLN) > 0 ? sysconf(_SC_NPROCESSORS_ONLN) : 1;
    a->rest = argv;
    *help = 0;
    for (int i = 1; i < argc; i++) {
        const char *o = argv[i];
        if (cli_is_help(o)) {
            *help = 1;
            return 0;
        } else if ((!strcmp(o, "--dir") || !strcmp(o, "--db")) && i + 1 < argc) {
            a->dir = argv[++i];
        } else if (!strcmp(o, "--pieces") && i + 1 < argc) {
            if ((a->pieces = cli_parse_uint(sub, "--pieces", argv[++i], 1, EGDB_MAX_PIECES)) < 0)
                return -1;
        } else if (!strcmp(o, "--threads") && i + 1 < argc) {
            if ((a->threads = cli_parse_uint(sub, "--threads", argv[++i], 1, 64)) < 0)
                return -1;
        } else if (!strcmp(o, "--memory") && i + 1 < argc) {
            char *end;
            a->memory_gb = strtod(argv[++i], &end);
            if (*end != '\0' || !(a->memory_gb > 0) || a->memory_gb > 1e6) {
                fprintf(stderr, "checkers egdb %s: bad --memory '%s': expected gigabytes > 0\n",
                        sub, argv[i]);
                return -1;
            }
        } else if (!strcmp(o, "--cache") && i + 1 < argc) {
            long mb = cli_parse_uint(sub, "--cache (MB)", argv[++i], 1, 1000000);
            if (mb < 0)
                return -1;
            a->cache_mb = (size_t)mb;
        } else if (!strcmp(o, "--split") && i + 1 < argc) {
            a->split = argv[++i];
        } else if (!strcmp(o, "--unit") && i + 1 < argc) {
            a->unit = argv[++i];
        } else if (!strcmp(o, "--pipeline")) {
            a->pipeline = 1;
        } else if (!strcmp(o, "--keep-build-files")) {
            a->pipeline = 0;
        } else if (!strcmp(o, "--estimate")) {
            a->estimate = 1;
        } else if (!strcmp(o, "--partial")) {
            a->partial = 1;
        } else if (!strcmp(o, "--only") && i + 1 < argc) {
            a->only = argv[++i];
        } else if (!strcmp(o, "--no-threats")) {
            a->no_threats = 1;
        } else if (!strcmp(o, "--moves")) {
            a->moves = 1;
        } else if (!strcmp(o, "--json")) {
            a->json = 1;
        } else if (o[0] == '-' && o[1] != '\0' && !(o[1] >= '0' && o[1] <= '9')) {
            fprintf(stderr, "checkers egdb %s: unknown or incomplete option '%s'\n", sub, o);
            return -1;
        } else {
            a->rest[a->nrest++] = argv[i];
        }
    }
    return 0;
}

/* ---- subcommands -------------------------------------------------------- */

static int
egdb_partial_build_cmd(const egdb_args *a)
{
    char err[512];
    egpt_material mats[EGPT_MAX_MATERIALS];
    size_t n;
    if (egpt_parse_materials(a->only, mats, EGPT_MAX_MATERIALS, &n, err, sizeof err) != 0) {
        fprintf(stderr, "checkers egdb build: bad --only: %s\n", err);
        return CLI_EXIT_USAGE;
    }
    progress_state ps = {.tty = isatty(2)};
    egpt_opts o = {mats, n, (int)a->threads, on_progress, &ps, &stop_flag};
    egpt_stats st;
    catch_stop_signals();
    int rc = egpt_build(a->dir, &o, &st, err, sizeof err);
    if (ps.tty)
        fprintf(stderr, "\n");
    if (rc != 0) {
        fprintf(stderr, "checkers egdb build: %s (%s)\n", err, ck_strerror(rc));
        return CLI_EXIT_FAIL;
    }
    uint64_t exact = st.count[ENG_LL] + st.count[ENG_DD] + st.count[ENG_WW];
    uint64_t half = st.count[ENG_LD] + st.count[ENG_DW];
    double pos = st.positions ? (double)st.positions : 1.0;
    printf("partial database: %" PRIu64 " positions built; exact %.1f%%, half-bounds %.1f%%, "
           "unknown (LW) %.1f%%; %" PRIu64 " moves led into no database\n"
           "  first pass %.1f s, later passes %.1f s (%" PRIu64 " at most for one pair), write "
           "%.1f s\n"
           "  'checkers egdb stats --db %s' shows the resolved share by leading ranks\n",
           st.positions, 100.0 * (double)exact / pos, 100.0 * (double)half / pos,
           100.0 * (double)st.count[ENG_LW] / pos, st.exits_unavailable, st.seconds_first,
           st.seconds_passes, st.passes_max, st.seconds_write, a->dir);
    return CLI_EXIT_OK;
}

static int
egdb_build_cmd(const egdb_args *a)
{
    if (a->only && a->estimate) {
        fprintf(stderr, "checkers egdb build: --estimate is for the complete databases; a "
                        "partial build (--only) says its positions when it starts\n");
        return CLI_EXIT_USAGE;
    }
    if (a->only && a->dir)
        return egdb_partial_build_cmd(a);
    if (a->pieces < 1 || !a->dir) {
        fprintf(stderr, "checkers egdb build: needs --pieces N and --dir DIR\n");
        return CLI_EXIT_USAGE;
    }
    char err[512];
    /* Eight pieces do not fit this machine's disk as 2-bit files: they are
     * built unit by unit and each unit's 2-bit files go once nothing reads
     * them (docs/egdb.md, "Eight pieces"). Smaller sets keep them: the
     * next piece count's build reads them. */
    egdb_build_opts o = {(int)a->pieces,
                         (int)a->threads,
                         on_progress,
                         NULL,
                         &stop_flag,
                         0,
                         a->pipeline >= 0 ? a->pipeline : a->pieces >= 8,
                         a->no_threats,
                         a->unit};
    if (a->split && egpl_parse_splits(a->split, (int)a->pieces, &o.splits, err, sizeof err) != 0) {
        fprintf(stderr, "checkers egdb build: bad --split: %s\n", err);
        return CLI_EXIT_USAGE;
    }
    egdb_cost c;
    int rc = egdb_estimate(a->dir, &o, &c, err, sizeof err);
    if (rc != 0) {
        fprintf(stderr, "checkers egdb build: %s\n", err);
        return rc == EGDB_EINVAL ? CLI_EXIT_USAGE : CLI_EXIT_FAIL;
    }
    uint64_t left = c.positions;
    if (a->estimate && left == 0 && c.units == 0) {
        printf("%s: estimate only: nothing to build%s\n", a->dir,
               c.stage_positions_compress ? " (some built slices still to compress)" : "");
        return CLI_EXIT_OK;
    }
    if (a->unit && left == 0 && c.units == 0) {
        printf("%s: unit %s of %ld pieces is built%s; nothing to do\n", a->dir, a->unit, a->pieces,
               o.pipeline ? " and staged" : "");
        return CLI_EXIT_OK;
    }
    if (left == 0 && c.units == 0) {
        /* Built before; a run stopped during compression resumes it here. */
        egdb_compress_stats cst;
        progress_state ps = {.tty = isatty(2)};
        egdb_compress_opts co = {(int)a->pieces, (int)a->threads, !a->no_threats, on_progress, &ps,
                                 &stop_flag};
        catch_stop_signals();
        rc = egdb_compress(a->dir, &co, &cst, err, sizeof err);
        if (ps.tty && ps.last_len)
            fprintf(stderr, "\n");
        if (rc == EGDB_EINTERRUPT) {
            fprintf(stderr, "checkers egdb build: compress: %s\n", err);
            return CLI_EXIT_FAIL;
        }
        if (rc != 0) {
            fprintf(stderr, "checkers egdb build: compress: %s (%s)\n", err, ck_strerror(rc));
            return CLI_EXIT_FAIL;
        }
        if (cst.positions == 0)
            printf("%s: the 1-%ld piece databases%s%s are complete; nothing to do\n", a->dir,
                   a->pieces, a->split ? " of splits " : "", a->split ? a->split : "");
        else
            printf("%s: databases were complete; compressed the %" PRIu64 " slices that were "
                   "not yet\n",
                   a->dir, cst.slices);
        return CLI_EXIT_OK;
    }
    char dpeak[32], dend[32], dfree[32], mpair[32], mmapped[32], dmargin[32];
    /* A build that fills the disk stops with an error half way; say so
     * before it starts (a margin of 5% and 16 MB for the temporary files
     * and the estimate's error). */
    uint64_t margin = c.disk_peak / 20 + (16u << 20);
    human_bytes(c.disk_peak, dpeak, sizeof dpeak);
    human_bytes(c.disk_end, dend, sizeof dend);
    human_bytes(c.disk_free, dfree, sizeof dfree);
    human_bytes(c.memory_pair, mpair, sizeof mpair);
    human_bytes(c.memory_mapped_peak, mmapped, sizeof mmapped);
    human_bytes(margin, dmargin, sizeof dmargin);
    char what[64];
    if (a->unit)
        snprintf(what, sizeof what, "unit %.8s of %ld pieces", a->unit, a->pieces);
    else
        snprintf(what, sizeof what, "1-%ld pieces", a->pieces);
    fprintf(stderr,
            "building %s%s%s into %s: %zu slices, %" PRIu64 " positions to compute%s\n"
            "  time:   about %.2f h (build %.2f h, %s %.2f h) on %ld threads, at the rates "
            "measured on 2 cores (7 pieces; the stages on 4v4)\n"
            "  disk:   %s more at the peak, %s at the end; %s free\n"
            "  memory: %s for the largest slice pair + up to %s of 2-bit files mapped "
            "(page cache)\n",
            what, a->split ? ", splits " : "", a->split ? a->split : "", a->dir, c.slices, left,
            o.pipeline ? "; each material verified, compressed and its 2-bit files deleted "
                         "when no longer read"
                       : "",
            (c.seconds_build + c.seconds_stages) / 3600, c.seconds_build / 3600,
            o.pipeline ? "verify, compress, compare" : "compress", c.seconds_stages / 3600,
            a->threads, dpeak, dend, dfree, mpair, mmapped);
    if (c.disk_peak + margin > c.disk_free) {
        fprintf(stderr,
                "checkers egdb build: not enough free disk in %s: the build needs about %s at its "
                "peak (plus %s of margin) and %s are free; free some space, or choose fewer "
                "splits (--split 4v4)\n",
                a->dir, dpeak, dmargin, dfree);
        return CLI_EXIT_FAIL;
    }
    size_t pair_bytes = (size_t)c.memory_pair, resident = (size_t)c.memory_mapped_peak;
    if (a->memory_gb > 0) {
        double budget = a->memory_gb * 1e9;
        if ((double)pair_bytes > budget) {
            fprintf(stderr,
                    "checkers egdb build: the largest slice pair needs %.2f GB of working memory, "
                    "more than --memory %.2f GB\n",
                    (double)pair_bytes / 1e9, a->memory_gb);
            return CLI_EXIT_FAIL;
        }
        if ((double)(pair_bytes + resident) > budget)
            fprintf(stderr,
                    "warning: the finished databases (%.2f GB) and the largest pair do not fit in "
                    "--memory %.2f GB together; finished slices will be read back from disk as "
                    "needed (slower)\n",
                    (double)resident / 1e9, a->memory_gb);
    }
    if (a->estimate) {
        printf("%s: estimate only, nothing built: %" PRIu64 " positions to compute, about %.2f h, "
               "%s more disk at the peak (%s free)\n",
               a->dir, left, (c.seconds_build + c.seconds_stages) / 3600, dpeak, dfree);
        return CLI_EXIT_OK;
    }
    progress_state ps = {.tty = isatty(2)};
    o.progress_arg = &ps;
    egdb_build_stats st;
    catch_stop_signals();
    rc = egdb_build(a->dir, &o, &st, err, sizeof err);
    if (ps.tty)
        fprintf(stderr, "\n");
    if (rc == EGDB_EINTERRUPT) {
        fprintf(stderr, "checkers egdb build: %s\n", err);
        return CLI_EXIT_FAIL;
    }
    if (rc != 0) {
        fprintf(stderr, "checkers egdb build: %s (%s)\n", err, ck_strerror(rc));
        /* a damaged file is exit 3, as for every command (README) */
        return rc == EGDB_ECORRUPT ? CLI_EXIT_DAMAGED : CLI_EXIT_FAIL;
    }
    if (a->unit) {
        /* A cluster task: the build's last job compresses what is left. */
        printf("unit %s: built %zu slices (%zu kept), %" PRIu64 " positions in %.1f s%s\n", a->unit,
               st.slices_built, st.slices_kept, st.positions, st.seconds_total,
               st.units_staged ? "; verified, compressed and compared" : "");
        return CLI_EXIT_OK;
    }
    /* The compressed form is what solvers probe: write it now (slices that
     * already have it are skipped, so this is resumable too). */
    egdb_compress_stats cst;
    progress_state cps = {.tty = ps.tty};
    egdb_compress_opts co = {(int)a->pieces, (int)a->threads, !a->no_threats, on_progress,
                             &cps,           &stop_flag};
    double tc = cli_now();
    rc = egdb_compress(a->dir, &co, &cst, err, sizeof err);
    if (cps.tty && cps.last_len)
        fprintf(stderr, "\n");
    if (rc == EGDB_EINTERRUPT) {
        fprintf(stderr, "checkers egdb build: compress: %s\n", err);
        return CLI_EXIT_FAIL;
    }
    if (rc != 0) {
        fprintf(stderr, "checkers egdb build: compress: %s (%s)\n", err, ck_strerror(rc));
        return CLI_EXIT_FAIL;
    }
    double pc = st.seconds_phase1 > 0 ? (double)st.positions / st.seconds_phase1 : 0;
    double pn = st.seconds_phase2 > 0 ? (double)st.by_propagation / st.seconds_phase2 : 0;
    printf("built %zu slices (%zu kept from an earlier run), %" PRIu64 " positions in %.1f s "
           "on %d threads\n"
           "  captures+lookups: %.1f s, %" PRIu64 " by captures, %" PRIu64 " by lookups, "
           "%.2f M positions/s per thread\n"
           "  non-captures:     %.1f s, %" PRIu64 " resolved, %.2f M/s per thread\n"
           "  write:            %.1f s; largest pair used %.1f MB\n",
           st.slices_built, st.slices_kept, st.positions, st.seconds_total, st.threads,
           st.seconds_phase1, st.by_capture, st.by_lookup, pc / 1e6 / st.threads, st.seconds_phase2,
           st.by_propagation, pn / 1e6 / st.threads, st.seconds_write,
           (double)st.peak_pair_bytes / 1e6);
    if (cst.positions)
        printf("  compress:         %.1f s, %" PRIu64 " positions into %" PRIu64
               " bytes (%.1f positions a byte)\n",
               cli_now() - tc, cst.positions, cst.bytes,
               (double)cst.positions / (double)(cst.bytes ? cst.bytes : 1));
    return CLI_EXIT_OK;
}

static int
egdb_compress_cmd(const egdb_args *a)
{
    if (!a->dir) {
        fprintf(stderr, "checkers egdb compress: needs --db DIR\n");
        return CLI_EXIT_USAGE;
    }
    char err[512];
    egdb_compress_stats st;
    progress_state ps = {.tty = isatty(2)};
    egdb_compress_opts o = {a->pieces > 0 ? (int)a->pieces : EGDB_MAX_PIECES,
                            (int)a->threads,
                            !a->no_threats,
                            on_progress,
                            &ps,
                            &stop_flag};
    double t0 = cli_now();
    catch_stop_signals();
    int rc = egdb_compress(a->dir, &o, &st, err, sizeof err);
    if (ps.tty && ps.last_len)
        fprintf(stderr, "\n");
    if (rc == EGDB_EINTERRUPT) {
        fprintf(stderr, "checkers egdb compress: %s\n", err);
        return CLI_EXIT_FAIL;
    }
    if (rc != 0) {
        fprintf(stderr, "checkers egdb compress: %s (%s)\n", err, ck_strerror(rc));
        return CLI_EXIT_FAIL;
    }
    if (st.positions == 0) {
        printf("%s: every slice already has its compressed file\n", a->dir);
        return CLI_EXIT_OK;
    }
    double pb = (double)st.positions / (double)(st.bytes ? st.bytes : 1);
    printf("compressed %" PRIu64 " slices, %" PRIu64 " positions into %" PRIu64
           " bytes (%.1f positions a byte) in %.1f s\n"
           "  values dropped: %.1f%% capture positions, %.1f%% threatened-capture positions\n"
           "  %" PRIu64 " runs (%.0f positions a run): %.2f MB of prefix codes, %.2f MB of "
           "length bits, %.2f MB of headers, tables and block padding\n",
           st.slices, st.positions, st.bytes, pb, cli_now() - t0,
           100.0 * (double)st.dropped_capture / (double)st.positions,
           100.0 * (double)st.dropped_threat / (double)st.positions, st.runs,
           (double)st.positions / (double)(st.runs ? st.runs : 1), (double)st.code_bits / 8e6,
           (double)st.extra_bits / 8e6, (double)st.overhead_bytes / 1e6);
    printf("  pages with marks (a probe's walk starts at the last one before it): %" PRIu64 "\n",
           st.marked_pages);
    printf("  king order kept by slices: colex %" PRIu64 ", gray %" PRIu64 " / %" PRIu64
           " (row snake, black / white kings outer), reversed gray %" PRIu64 " / %" PRIu64 "\n",
           st.orders[0], st.orders[1], st.orders[2], st.orders[3], st.orders[4]);
    return CLI_EXIT_OK;
}

static const char *
value_word(int v)
{
    return v == EGDB_WIN ? "win" : v == EGDB_LOSS ? "loss" : v == EGDB_DRAW ? "draw" : "?";
}

static int
egdb_probe_cmd(const egdb_args *a)
{
    if (!a->dir || a->nrest == 0) {
        fprintf(stderr, "checkers egdb probe: needs --db DIR and at least one FEN\n");
        return CLI_EXIT_USAGE;
    }
    char err[512], perr[512];
    egdb *db;
    int rc = egdb_open(a->dir, 0, a->cache_mb * 1000000, &db, err, sizeof err);
    if (rc != 0) {
        fprintf(stderr, "checkers egdb probe: %s (%s)\n", err, ck_strerror(rc));
        return damaged_exit(rc);
    }
    /* A partial-information database in the same directory answers the
     * positions the exact ones do not have, with a bound. */
    egpt_db *pdb = NULL;
    int prc = egpt_open(a->dir, 0, &pdb, perr, sizeof perr);
    if (prc != 0 && prc != EGDB_EMISSING) {
        fprintf(stderr, "checkers egdb probe: %s (%s)\n", perr, ck_strerror(prc));
        egdb_close(db);
        return damaged_exit(prc);
    }
    /* The worst outcome sets the exit status: a damaged file (3) over a
     * failed probe (1) over a bad FEN (2). */
    int status = CLI_EXIT_OK;
    for (int i = 0; i < a->nrest; i++) {
        eng_pos p;
        if (cli_parse_fen("egdb probe", a->rest[i], &p) != 0) {
            if (status == CLI_EXIT_OK)
                status = CLI_EXIT_USAGE;
            continue;
        }
        int v = egdb_probe_err(db, &p, err, sizeof err);
        if (v == EGDB_ENOTFOUND && pdb) {
            int b = egpt_probe(pdb, &p);
            if (b >= 0) {
                printf("%s\t%s\n", a->rest[i], eng_bound_name((eng_bound)b));
                continue;
            }
        }
        if (v < 0) {
            if (v == EGDB_ENOTFOUND)
                fprintf(stderr, "checkers egdb probe: %s: %s (database has up to %d pieces)\n",
                        a->rest[i], ck_strerror(v), egdb_max_pieces(db));
            else
                fprintf(stderr, "checkers egdb probe: %s: %s (%s)\n", a->rest[i], err,
                        ck_strerror(v));
            if (status != CLI_EXIT_DAMAGED)
                status = damaged_exit(v);
            continue;
        }
        printf("%s\t%s", a->rest[i], value_word(v));
        if (a->moves) {
            eng_movelist l;
            int n = eng_generate(&p, &l, ENG_DUPS_MERGE);
            for (int k = 0; k < n; k++) {
                eng_pos c;
                char mv[ENG_MOVE_STR_MAX];
                eng_make(&p, &l.m[k], &c);
                eng_format_move(&l.m[k], mv, sizeof mv);
                int cv = egdb_probe_err(db, &c, err, sizeof err);
                /* The child's value is for the opponent; the mover's is its
                 * negation. */
                int mvv = cv == EGDB_WIN ? EGDB_LOSS : cv == EGDB_LOSS ? EGDB_WIN : cv;
                printf("\t%s=%s", mv, cv < 0 ? ck_strerror(cv) : value_word(mvv));
                if (cv < 0) {
                    fprintf(stderr, "checkers egdb probe: %s after %s: %s (%s)\n", a->rest[i], mv,
                            err, ck_strerror(cv));
                    if (status != CLI_EXIT_DAMAGED)
                        status = damaged_exit(cv);
                }
            }
        }
        printf("\n");
    }
    egpt_close(pdb);
    egdb_close(db);
    return status;
}

static int
egdb_stats_cmd(const egdb_args *a)
{
    if (!a->dir) {
        fprintf(stderr, "checkers egdb stats: needs --db DIR\n");
        return CLI_EXIT_USAGE;
    }
    char err[512];
    egdb_slice_stats *st;
    size_t n;
    if (egdb_stats(a->dir, &st, &n, err, sizeof err) != 0) {
        fprintf(stderr, "checkers egdb stats: %s\n", err);
        return CLI_EXIT_FAIL;
    }
    /* Aggregate slices by material (the leading ranks summed). */
    typedef struct agg {
        int nbk, nwk, nbm, nwm, slices;
        uint64_t pos, w, l, d, bytes, cbytes;
        double sec;
    } agg;
    agg *m = calloc(n ? n : 1, sizeof *m), tot;
    size_t nm = 0;
    memset(&tot, 0, sizeof tot);
    for (size_t i = 0; i < n; i++) {
        size_t j = 0;
        while (j < nm && !(m[j].nbk == st[i].nbk && m[j].nwk == st[i].nwk &&
                           m[j].nbm == st[i].nbm && m[j].nwm == st[i].nwm))
            j++;
        if (j == nm) {
            m[nm].nbk = st[i].nbk;
            m[nm].nwk = st[i].nwk;
            m[nm].nbm = st[i].nbm;
            m[nm].nwm = st[i].nwm;
            nm++;
        }
        m[j].slices++;
        m[j].pos += st[i].positions;
        m[j].w += st[i].wins;
        m[j].l += st[i].losses;
        m[j].d += st[i].draws;
        m[j].bytes += st[i].file_bytes;
        m[j].cbytes += st[i].cfile_bytes;
        m[j].sec += st[i].build_seconds;
        tot.slices++;
        tot.pos += st[i].positions;
        tot.w += st[i].wins;
        tot.l += st[i].losses;
        tot.d += st[i].draws;
        tot.bytes += st[i].file_bytes;
        tot.cbytes += st[i].cfile_bytes;
        tot.sec += st[i].build_seconds;
    }
    if (a->json) {
        printf("{\"materials\":[");
        for (size_t j = 0; j < nm; j++)
            printf("%s{\"bk\":%d,\"wk\":%d,\"bm\":%d,\"wm\":%d,\"slices\":%d,\"positions\":%" PRIu64
                   ",\"wins\":%" PRIu64 ",\"losses\":%" PRIu64 ",\"draws\":%" PRIu64
                   ",\"seconds\":%.3f,\"bytes\":%" PRIu64 ",\"compressed_bytes\":%" PRIu64 "}",
                   j ? "," : "", m[j].nbk, m[j].nwk, m[j].nbm, m[j].nwm, m[j].slices, m[j].pos,
                   m[j].w, m[j].l, m[j].d, m[j].sec, m[j].bytes, m[j].cbytes);
        printf("],\"total\":{\"slices\":%d,\"positions\":%" PRIu64 ",\"wins\":%" PRIu64
               ",\"losses\":%" PRIu64 ",\"draws\":%" PRIu64 ",\"seconds\":%.3f,\"bytes\":%" PRIu64
               ",\"compressed_bytes\":%" PRIu64 "}}\n",
               tot.slices, tot.pos, tot.w, tot.l, tot.d, tot.sec, tot.bytes, tot.cbytes);
    } else {
        printf("%-8s %6s %14s %14s %14s %14s %9s %12s %11s %8s\n", "bkwkbmwm", "slices",
               "positions", "wins", "losses", "draws", "seconds", "2-bit bytes", "compressed",
               "pos/byte");
        for (size_t j = 0; j <= nm; j++) {
            const agg *x = j < nm ? &m[j] : &tot;
            char label[16];
            if (j < nm)
                snprintf(label, sizeof label, "%d%d%d%d", x->nbk, x->nwk, x->nbm, x->nwm);
            else
                snprintf(label, sizeof label, "total");
            printf("%-8s %6d %14" PRIu64 " %14" PRIu64 " %14" PRIu64 " %14" PRIu64
                   " %9.2f %12" PRIu64 " %11" PRIu64 " %8.1f\n",
                   label, x->slices, x->pos, x->w, x->l, x->d, x->sec, x->bytes, x->cbytes,
                   x->cbytes ? (double)x->pos / (double)x->cbytes : 0.0);
        }
        printf("(values for the side to move, Black to move stored; materials are bk wk bm wm)\n");
    }
    free(m);
    free(st);
    /* Partial-information slices: resolved share by leading ranks. */
    egpt_slice_info *pi;
    size_t np;
    if (egpt_list(a->dir, &pi, &np, err, sizeof err) != 0) {
        fprintf(stderr, "checkers egdb stats: %s\n", err);
        return CLI_EXIT_FAIL;
    }
    free(pi);
    if (np > 0) {
        if (!a->json)
            printf("\npartial-information slices: %zu\n", np);
        if (egpt_report(a->dir, stdout, a->json ? EGPT_REPORT_JSON : EGPT_REPORT_TEXT, err,
                        sizeof err) != 0) {
            fprintf(stderr, "checkers egdb stats: %s\n", err);
            return CLI_EXIT_FAIL;
        }
    }
    return CLI_EXIT_OK;
}

static int
egdb_verify_cmd(const egdb_args *a)
{
    if (!a->dir) {
        fprintf(stderr, "checkers egdb verify: needs --db DIR\n");
        return CLI_EXIT_USAGE;
    }
    char err[1024];
    egpt_material mats[EGPT_MAX_MATERIALS];
    size_t n = 0;
    if (a->only &&
        egpt_parse_materials(a->only, mats, EGPT_MAX_MATERIALS, &n, err, sizeof err) != 0) {
        fprintf(stderr, "checkers egdb verify: bad --only: %s\n", err);
        return CLI_EXIT_USAGE;
    }
    progress_state ps = {.tty = isatty(2)};
    double t0 = cli_now();
    if (a->partial) {
        if (a->only) {
            fprintf(stderr, "checkers egdb verify: --partial checks every partial file; "
                            "--only is for the complete ones\n");
            return CLI_EXIT_USAGE;
        }
        egpt_verify_stats vs;
        int prc = egpt_verify(a->dir, (int)a->threads, on_progress, &ps, &vs, err, sizeof err);
        if (ps.tty)
            fprintf(stderr, "\n");
        if (prc != 0) {
            fprintf(stderr, "checkers egdb verify: FAILED: %s (%s)\n", err, ck_strerror(prc));
            /* as the complete files' check: 1 a wrong bound, 3 a file
             * damaged or missing (no .pwl at all included) */
            return prc == EGDB_EVERIFY || prc == EGDB_ENOMEM ? CLI_EXIT_FAIL : CLI_EXIT_DAMAGED;
        }
        printf("%s: %zu partial slices, every bound of %" PRIu64 " positions held by its moves "
               "(%" PRIu64 " positions a complete file covers, not read) (%.1f s)\n",
               a->dir, vs.slices, vs.positions, vs.skipped, vs.seconds);
        return CLI_EXIT_OK;
    }
    int rc = egdb_verify_only(a->dir, n ? mats : NULL, n, (int)a->threads, on_progress, &ps, err,
                              sizeof err);
    if (ps.tty)
        fprintf(stderr, "\n");
    if (rc != 0) {
        fprintf(stderr, "checkers egdb verify: FAILED: %s (%s)\n", err, ck_strerror(rc));
        /* 1: a stored value is wrong (or no memory); 3: a file is damaged,
         * missing or unreadable (checksums, sizes, headers). */
        return rc == EGDB_EVERIFY || rc == EGDB_ENOMEM ? CLI_EXIT_FAIL : CLI_EXIT_DAMAGED;
    }
    if (n)
        printf("%s: every file's checksum read, and every position of %s (colour twins too) "
               "verified (%.1f s)\n",
               a->dir, a->only, cli_now() - t0);
    else
        printf("%s: every file's checksum and every position's value verified (%.1f s)\n", a->dir,
               cli_now() - t0);
    return CLI_EXIT_OK;
}

/* The units of N pieces (a material and its twin, egdb/pipeline.h) in
 * build order, with their men and position counts: the work list of a
 * cluster build (scripts/slurm-egdb.sh). Units with the same men count
 * never depend on each other. */
static int
egdb_units_cmd(const egdb_args *a)
{
    if (a->pieces < 1) {
        fprintf(stderr, "checkers egdb units: needs --pieces N\n");
        return CLI_EXIT_USAGE;
    }
    char err[256];
    unsigned splits = 0;
    if (a->split && egpl_parse_splits(a->split, (int)a->pieces, &splits, err, sizeof err) != 0) {
        fprintf(stderr, "checkers egdb units: bad --split: %s\n", err);
        return CLI_EXIT_USAGE;
    }
    egix_slice *sl;
    size_t k, nu;
    egpl_unit *u;
    if (egix_slices_alloc((int)a->pieces, &sl, NULL, &k) != 0)
        return CLI_EXIT_FAIL;
    if (egpl_units(sl, k, &u, &nu, err, sizeof err) != 0) {
        fprintf(stderr, "checkers egdb units: %s\n", err);
        free(sl);
        return CLI_EXIT_FAIL;
    }
    /* With --dir, where each unit stands there (a sixth column) and a
     * summary on stderr: what a build of many hours has done so far. */
    static const char *const state_name[] = {"-",           "started",    "built", "checking",
                                             "compressing", "compressed", "done"};
    size_t units = 0, done = 0;
    uint64_t positions = 0, positions_done = 0;
    for (size_t i = 0; i < nu; i++) {
        if (splits && !(splits >> u[i].split & 1u))
            continue;
        char name[EGPL_NAME_MAX];
        egpl_unit_name(&u[i], name);
        printf("%ld\t%d\t%s\t%zu\t%" PRIu64, a->pieces, u[i].nbm + u[i].nwm, name,
               u[i].end - u[i].begin, u[i].positions);
        if (a->dir) {
            size_t count = 0;
            int st = egpl_unit_state(a->dir, &u[i], sl, &count);
            if (st == EGPL_STARTED || st == EGPL_CHECKING || st == EGPL_COMPRESSING)
                printf("\t%s %zu/%zu", state_name[st], count, u[i].end - u[i].begin);
            else
                printf("\t%s", state_name[st]);
            units++;
            positions += u[i].positions;
            if (st == EGPL_DONE) {
                done++;
                positions_done += u[i].positions;
            }
        }
        printf("\n");
    }
    if (a->dir)
        fprintf(stderr, "%s: %zu of %zu units done, %.2f G of %.2f G positions (%.1f%%)\n", a->dir,
                done, units, (double)positions_done / 1e9, (double)positions / 1e9,
                positions ? 100.0 * (double)positions_done / (double)positions : 0.0);
    free(u);
    free(sl);
    return CLI_EXIT_OK;
}

static int
egdb_count_cmd(const egdb_args *a)
{
    if (a->pieces < 1) {
        fprintf(stderr, "checkers egdb count: needs --pieces N\n");
        return CLI_EXIT_USAGE;
    }
    printf("%-7s %-6s %20s\n", "pieces", "split", "positions");
    for (int n = 1; n <= a->pieces; n++) {
        for (int x = n; x >= (n + 1) / 2; x--) {
            uint64_t c;
            if (egix_count(n, x, n - x, &c) != 0)
                return CLI_EXIT_FAIL;
            printf("%-7d %d-%-4d %20" PRIu64 "\n", n, x, n - x, c);
        }
        uint64_t t;
        if (egix_count(n, -1, -1, &t) != 0)
            return CLI_EXIT_FAIL;
        printf("%-7d %-6s %20" PRIu64 "\n", n, "all", t);
    }
    return CLI_EXIT_OK;
}

int
cli_egdb(int argc, char **argv)
{
    if (argc < 2 || cli_is_help(argv[1])) {
        fputs(egdb_help, argc < 2 ? stderr : stdout);
        return argc < 2 ? CLI_EXIT_USAGE : CLI_EXIT_OK;
    }
    const char *sub = argv[1];
    egdb_args a;
    int help;
    if (parse_args(sub, argc - 1, argv + 1, &a, &help) != 0)
        return CLI_EXIT_USAGE;
    if (help) {
        fputs(egdb_help, stdout);
        return CLI_EXIT_OK;
    }
    if (!strcmp(sub, "build"))
        return egdb_build_cmd(&a);
    if (!strcmp(sub, "probe"))
        return egdb_probe_cmd(&a);
    if (!strcmp(sub, "compress"))
        return egdb_compress_cmd(&a);
    if (!strcmp(sub, "stats"))
        return egdb_stats_cmd(&a);
    if (!strcmp(sub, "verify"))
        return egdb_verify_cmd(&a);
    if (!strcmp(sub, "count"))
        return egdb_count_cmd(&a);
    if (!strcmp(sub, "units"))
        return egdb_units_cmd(&a);
    fprintf(stderr, "checkers egdb: unknown subcommand '%s'\n%s", sub, egdb_help);
    return CLI_EXIT_USAGE;
}
