/*
 * endings.c - endgame test sets whose values come from a computation
 * independent of the search: `checkers solve`'s solver (prv_solve) on
 * positions the databases hold, given FEWER pieces of databases than the
 * positions have, and its answers compared with the full databases'
 * values (retrograde analysis, built and verified apart from any search).
 *
 * The sets (issue 21's "endgame test sets"; test sets from other programs
 * cannot be fetched here, so this machine's own verified databases give
 * the values instead):
 *   kings  long king endings: 5 and 6 pieces, each side 2-4 of them,
 *          mostly kings (a piece is a man with probability 1/4), no
 *          capture for the side to move; solved with only the 2-4 piece
 *          databases, ENDINGS_TIME_KINGS seconds each (default 20, the
 *          issue's target: 95% exact, 0 wrong);
 *   seven  7 pieces, the sides at most one piece apart, a third of the
 *          pieces kings, no capture for the side to move; solved with the
 *          2-6 databases, ENDINGS_TIME_SEVEN seconds each (default 30, the
 *          issue's target for 7-10 pieces: 80%, 0 wrong); skipped when
 *          the databases lack 7 pieces.
 * Positions are drawn by a seeded generator (seed from the set, the piece
 * count and the index), so every run solves the same ones. They are
 * random, not chosen hard: the fraction proved is the fraction of such
 * endings, not of a published "hard" list.
 *
 * For each position: a 0.2 s alpha-beta search orders the value queries,
 * as `checkers solve` does; df-pn gets the time limit and a table of
 * ENDINGS_TT MB (default 256, `solve`'s default);
 * the proof is written to a store of its own and checked by the
 * independent checker against the same, smaller databases; the answer
 * is compared with the full databases' value. Same-run baseline: the same
 * solver capped at 300,000 df-pn positions (the test suite's cap, about a
 * third of a second), so the table reads as "what the time buys".
 * "Ended early" counts answers that are not exact although the solver
 * stopped before 90% of its time: a search that gives up with budget
 * left (it found one, docs/solver.md "The depth cut's marker").
 *
 * Settings (environment): ENDINGS_DB (default egdb-data), ENDINGS_PER
 * positions per piece count (default 5; the figures in results/ use 20),
 * ENDINGS_SETS (default "kings,seven"), ENDINGS_TIME_KINGS,
 * ENDINGS_TIME_SEVEN, ENDINGS_GHI (the solver's order of searches under
 * repetition, prv_opts.ghi: auto, optimistic, safe; default auto),
 * ENDINGS_TT (the df-pn table in MB, default 256). Exit
 * status 1 when any answer is wrong or a proof fails its check.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench/bench_util.h"
#include "egdb/egdb.h"
#include "engine/bits.h"
#include "engine/engine.h"
#include "prover/check.h"
#include "prover/prover.h"
#include "prover/search.h"
#include "prover/store.h"

/* ---- constants -------------------------------------------------------- */

#define MAXROWS 1024
#define BASE_NODES 300000

/* ---- types ------------------------------------------------------------ */

typedef struct set_def {
    const char *name;
    int nmin, nmax;  /* piece counts */
    int db_pieces;   /* databases the solver is given */
    int man_in;      /* a piece is a man with probability 1/man_in */
    int max_diff;    /* the sides at most this many pieces apart */
    const char *env; /* its time setting */
    double tdef;     /* its default time */
} set_def;

typedef struct row {
    const set_def *set;
    int n;
    int truth; /* the full databases' value for the side to move */
    eng_bound got, base;
    double seconds;
    uint64_t nodes;
    int checked; /* 1 valid, 0 refused, -1 nothing to check */
    int early;   /* not exact, yet ended before 90% of its time */
} row;

static const set_def SETS[] = {
    {"kings", 5, 6, 4, 4, 2, "ENDINGS_TIME_KINGS", 20},
    {"seven", 7, 7, 6, 3, 1, "ENDINGS_TIME_SEVEN", 30},
};

/* ---- functions -------------------------------------------------------- */

static uint64_t
rnd(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

/* A random legal position of set d with n pieces, quiet and with a move
 * for the side to move, each side at least two pieces (see the top). */
static eng_pos
make_position(const set_def *d, int n, uint64_t *s)
{
    for (;;) {
        eng_pos p = {0, 0, 0, 0, (int)(rnd(s) & 1)};
        int nb = 2 + (int)(rnd(s) % (uint64_t)(n - 3)); /* 2 .. n-2 */
        uint32_t occ = 0;
        for (int i = 0; i < n; i++) {
            int sq;
            do
                sq = (int)(rnd(s) % 32);
            while (occ >> sq & 1);
            occ |= 1u << sq;
            int black = i < nb, king = rnd(s) % (uint64_t)d->man_in != 0;
            uint32_t b = 1u << sq;
            if (black && !king && (b & ENG_ROW7))
                king = 1;
            if (!black && !king && (b & ENG_ROW0))
                king = 1;
            if (black)
                *(king ? &p.bk : &p.bm) |= b;
            else
                *(king ? &p.wk : &p.wm) |= b;
        }
        int diff = nb - (n - nb);
        if (diff < -d->max_diff || diff > d->max_diff || eng_validate(&p, NULL, 0) != 0)
            continue;
        eng_movelist l;
        if (eng_generate(&p, &l, ENG_DUPS_MERGE) <= 0 || l.m[0].captured)
            continue;
        return p;
    }
}

static int g_ghi = PRV_GHI_AUTO; /* ENDINGS_GHI */
static size_t g_tt_mb = 256;     /* ENDINGS_TT */

/* Solves r's position (pos) as the top says and fills r. Returns 0, or -1
 * when the run cannot go on (a store or solver failure, printed). */
static int
solve_one(const eng_pos *pos, const egdb *small, double tlim, const char *tmpdir, row *r)
{
    char err[512], dir[512];
    snprintf(dir, sizeof dir, "%s/checkers-bench-endings.XXXXXX", tmpdir);
    if (!mkdtemp(dir)) {
        printf("endings bench: cannot make a directory %s\n", dir);
        return -1;
    }
    pst_env *st = NULL;
    if (pst_open(dir, 0, &st, err, sizeof err) != 0) {
        printf("endings bench: %s\n", err);
        bench_remove_store(dir);
        return -1;
    }
    int hint = 0;
    ab_ctx *ab;
    if (ab_new(16u << 20, &ab) == 0) {
        ab_opts ao = {0};
        ao.db = small;
        ao.db_pieces = r->set->db_pieces;
        ao.time_limit = 0.2;
        ab_result ar;
        if (ab_search(ab, pos, &ao, &ar) == 0)
            hint = prv_hint(ar.score);
        ab_free(ab);
    }
    prv_opts o = {0};
    o.db = small;
    o.db_pieces = r->set->db_pieces;
    o.time_limit = tlim;
    o.tt_bytes = g_tt_mb << 20;
    o.hint = hint;
    o.ghi = g_ghi;
    prv_result pr;
    /* the baseline: the same solver, 300,000 positions, no store */
    o.node_limit = BASE_NODES;
    int rc = prv_solve(pos, &o, &pr, err, sizeof err);
    r->base = rc == 0 ? pr.bound : ENG_LW;
    /* the measured run: the time limit, proofs to the store */
    o.node_limit = 0;
    o.time_limit = tlim;
    o.store = st;
    rc = prv_solve(pos, &o, &pr, err, sizeof err);
    if (rc != 0)
        printf("  solver error: %s\n", err);
    r->got = pr.bound;
    r->seconds = pr.seconds;
    r->nodes = pr.nodes;
    r->early = !eng_bound_is_exact(pr.bound) && pr.seconds < 0.9 * tlim;
    r->checked = -1;
    if (pr.bound != ENG_LW) {
        pchk_result cr;
        r->checked =
            pchk_check(st, small, pos, &cr, err, sizeof err) == 0 && cr.status == PCHK_VALID;
        if (!r->checked)
            printf("  PROOF FAILS its check: %s at %s\n", cr.why, cr.where);
    }
    pst_close(st);
    bench_remove_store(dir);
    return 0;
}

int
main(void)
{
    const char *dbdir = getenv("ENDINGS_DB") ? getenv("ENDINGS_DB") : "egdb-data";
    int per = getenv("ENDINGS_PER") ? atoi(getenv("ENDINGS_PER")) : 5;
    const char *sets = getenv("ENDINGS_SETS") ? getenv("ENDINGS_SETS") : "kings,seven";
    const char *ghi = getenv("ENDINGS_GHI") ? getenv("ENDINGS_GHI") : "auto";
    if (prv_ghi_parse(ghi, &g_ghi) != 0) {
        printf("endings bench: bad ENDINGS_GHI '%s' (%s)\n", ghi, PRV_GHI_WORDS);
        return 2;
    }
    if (getenv("ENDINGS_TT")) {
        long mb = atol(getenv("ENDINGS_TT"));
        if (mb < 1 || mb > 65536) {
            printf("endings bench: bad ENDINGS_TT '%s' (MB, 1..65536)\n", getenv("ENDINGS_TT"));
            return 2;
        }
        g_tt_mb = (size_t)mb;
    }
    const char *tmpdir = getenv("TMPDIR") && *getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
    char cpu[128], err[512];
    bench_cpu_model(cpu, sizeof cpu);
    egdb *full;
    if (egdb_open(dbdir, 0, 1024u << 20, &full, err, sizeof err) != 0) {
        printf("endings bench: skipped: no databases in %s (%s); build them with\n"
               "  make egdb\n",
               dbdir, err);
        return 0;
    }
    int have = egdb_max_pieces(full);
    printf("endings bench: %s, %ld cores; full databases of up to %d pieces in %s\n", cpu,
           sysconf(_SC_NPROCESSORS_ONLN), have, dbdir);
    static row rows[MAXROWS];
    int nr = 0, wrong = 0, refused = 0;
    uint64_t tot_nodes = 0;
    double tot_s = 0;
    for (size_t si = 0; si < sizeof SETS / sizeof SETS[0]; si++) {
        const set_def *d = &SETS[si];
        if (!strstr(sets, d->name))
            continue;
        if (have < d->nmax) {
            printf("set %s: skipped: its values need the %d-piece databases\n", d->name, d->nmax);
            continue;
        }
        double tlim = getenv(d->env) ? atof(getenv(d->env)) : d->tdef;
        egdb *small;
        if (egdb_open(dbdir, d->db_pieces, 512u << 20, &small, err, sizeof err) != 0) {
            printf("endings bench: %s\n", err);
            egdb_close(full);
            return 1;
        }
        printf("set %s: %d-%d pieces, solved with the 2-%d databases, %.0f s each\n", d->name,
               d->nmin, d->nmax, d->db_pieces, tlim);
        for (int n = d->nmin; n <= d->nmax; n++)
            for (int k = 0; k < per && nr < MAXROWS; k++) {
                uint64_t s = 0x2545F4914F6CDD1Dull ^ ((uint64_t)(si + 1) << 40) ^
                             ((uint64_t)n << 32) ^ (uint64_t)(k + 1);
                eng_pos p = make_position(d, n, &s);
                row *r = &rows[nr];
                r->set = d;
                r->n = n;
                int v = egdb_probe(full, &p);
                if (v <= 0) {
                    printf("endings bench: the databases cannot value a %d-piece position\n", n);
                    egdb_close(small);
                    egdb_close(full);
                    return 1;
                }
                r->truth = egdb_outcome(v);
                if (solve_one(&p, small, tlim, tmpdir, r) != 0) {
                    egdb_close(small);
                    egdb_close(full);
                    return 1;
                }
                nr++;
                tot_nodes += r->nodes;
                tot_s += r->seconds;
                char fen[ENG_FEN_MAX];
                eng_format_fen(&p, fen, sizeof fen);
                int bad =
                    !eng_bound_contains(r->got, r->truth) || !eng_bound_contains(r->base, r->truth);
                wrong += bad;
                refused += r->checked == 0;
                printf("  %s %d  %-40s %-5s  %-7s %6.2fs %11" PRIu64 " nodes  (%s at %dk)%s\n",
                       d->name, n, fen,
                       r->truth > 0   ? "win"
                       : r->truth < 0 ? "loss"
                                      : "draw",
                       prv_bound_word(r->got), r->seconds, r->nodes, prv_bound_word(r->base),
                       BASE_NODES / 1000, bad ? "  WRONG" : "");
                fflush(stdout);
            }
        egdb_close(small);
    }

    printf(
        "\n| set | pieces | positions | exact | exact at %dk nodes (baseline) | one bound "
        "only | median s | ended early | wrong | proofs refused |\n|---|---:|---:|---:|---:|---:|"
        "---:|---:|---:|---:|\n",
        BASE_NODES / 1000);
    for (size_t si = 0; si < sizeof SETS / sizeof SETS[0]; si++)
        for (int n = SETS[si].nmin; n <= SETS[si].nmax; n++) {
            int cnt = 0, ex = 0, exb = 0, bd = 0, wr = 0, rf = 0, ea = 0;
            double ts[MAXROWS];
            for (int i = 0; i < nr; i++) {
                const row *r = &rows[i];
                if (r->set != &SETS[si] || r->n != n)
                    continue;
                ts[cnt++] = r->seconds;
                ex += eng_bound_is_exact(r->got);
                exb += eng_bound_is_exact(r->base);
                bd += r->got != ENG_LW && !eng_bound_is_exact(r->got);
                wr +=
                    !eng_bound_contains(r->got, r->truth) || !eng_bound_contains(r->base, r->truth);
                rf += r->checked == 0;
                ea += r->early;
            }
            if (!cnt)
                continue;
            qsort(ts, (size_t)cnt, sizeof ts[0], bench_cmp_double);
            printf("| %s | %d | %d | %d (%.0f%%) | %d (%.0f%%) | %d | %.2f | %d | %d | %d |\n",
                   SETS[si].name, n, cnt, ex, 100.0 * ex / cnt, exb, 100.0 * exb / cnt, bd,
                   ts[cnt / 2], ea, wr, rf);
        }
    printf("\ndf-pn: %" PRIu64 " positions valued in %.1f s (%.2f M a second, one core)\n",
           tot_nodes, tot_s, tot_s > 0 ? (double)tot_nodes / tot_s / 1e6 : 0);
    printf("wrong answers: %d; proofs refused by the checker: %d\n", wrong, refused);
    egdb_close(full);
    return wrong || refused ? 1 : 0;
}
