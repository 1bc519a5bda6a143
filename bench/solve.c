/*
 * solve.c - the solvers' benchmark: a fixed, seeded suite of 7-14 piece
 * positions reached by play from the three-move ballots, each solved with
 * the endgame databases (2-6 pieces where built) and a time limit:
 *   - the fraction df-pn proves (exact value, and at least one bound) by
 *     piece count, the median time, and df-pn positions a second;
 *   - alpha-beta with the same time on the same positions (the fraction it
 *     proves: wins and losses only, by construction);
 *   - every df-pn proof written to a temporary store and checked by the
 *     independent checker (check.h), and every df-pn value compared with
 *     alpha-beta's proven results: the count of wrong answers must be 0
 *     (a root the databases hold has no proof tree: df-pn's answer is
 *     compared with a probe instead);
 *   - as the same-run baseline, the speed of plain move generation
 *     (perft's positions a second from the start position), so that the
 *     solver's rate reads as a fraction of what generating and making the
 *     moves alone costs.
 *
 * How the suite is made: for piece count n and index k, ballot number
 * (n * 7 + k * 13) % 174 + 1 is played, then both sides play on by a
 * depth-4 alpha-beta search, choosing at random (seed n, k) among the
 * moves within 0.15 men of the best, until exactly n pieces are left; a
 * position is kept only if the sides are at most one piece apart (a
 * capture that jumps past n, or a lopsided game, restarts with the next
 * seed), so the suite holds the contested endings a proof meets rather
 * than easy wins. Deterministic for a given engine and evaluation; the
 * play probes at most SUITE_DB_PIECES pieces whatever databases are
 * there, so the 2-6 and 2-7 runs solve the same positions (probing
 * 7-piece values changes the moves chosen, and so the suite).
 *
 * Settings (environment): SOLVE_BENCH_DB (default egdb-data),
 * SOLVE_BENCH_TIME seconds a position (default 10; the target
 * uses 30), SOLVE_BENCH_PER positions per piece count (default 4),
 * SOLVE_BENCH_MIN / SOLVE_BENCH_MAX piece counts (default 7 / 14).
 * Exit status 1 when any answer is wrong or a proof fails its check.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/bench_util.h"
#include "egdb/egdb.h"
#include "engine/bits.h"
#include "engine/engine.h"
#include "prover/check.h"
#include "prover/prover.h"
#include "prover/search.h"
#include "prover/store.h"

/* ---- constants -------------------------------------------------------- */

#define MAXPOS 512
#define BALLOTS "../shared/reference/three-move-ballots.tsv"
/* The largest databases the suite's play probes (see the top). */
#define SUITE_DB_PIECES 6

/* ---- types ------------------------------------------------------------ */

typedef struct row {
    eng_pos p;
    int n;
    eng_bound dfpn;
    int complete, checked;
    double dfpn_s, ab_s;
    uint64_t nodes;
    int ab_proven; /* AB_PROVEN_WIN / LOSS / 0 */
} row;

/* ---- functions -------------------------------------------------------- */

static uint64_t
rnd(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

static int
pieces(const eng_pos *p)
{
    return bits_popcount(p->bm | p->wm | p->bk | p->wk);
}

/* The moves of ballot number `no` (1-174), or NULL. */
static int
ballot(int no, char *moves, size_t len)
{
    FILE *f = fopen(BALLOTS, "r");
    if (!f)
        return -1;
    char line[256];
    int rc = -1;
    while (fgets(line, sizeof line, f)) {
        if (line[0] == '#' || strncmp(line, "acf", 3) == 0)
            continue;
        char *tab = strchr(line, '\t');
        if (!tab || atoi(line) != no)
            continue;
        char *end = strchr(tab + 1, '\t');
        if (end)
            *end = '\0';
        snprintf(moves, len, "%s", tab + 1);
        rc = 0;
        break;
    }
    fclose(f);
    return rc;
}

/* A position with exactly n pieces by play from ballot b (see the top). */
static int
make_position(ab_ctx *ab, const egdb *db, int n, int k, eng_pos *out)
{
    for (int attempt = 0; attempt < 200; attempt++) {
        uint64_t s =
            0x9E3779B97F4A7C15ull ^ ((uint64_t)n << 32) ^ ((uint64_t)k << 8) ^ (uint64_t)attempt;
        int no = (n * 7 + k * 13 + attempt) % 174 + 1;
        char moves[64], *save = NULL;
        if (ballot(no, moves, sizeof moves) != 0)
            return -1;
        eng_pos p;
        eng_start(&p);
        int ok = 1;
        for (char *t = strtok_r(moves, " ", &save); t && ok; t = strtok_r(NULL, " ", &save)) {
            eng_move m;
            if (eng_parse_move(&p, t, &m, NULL, 0) != 0)
                ok = 0;
            else
                eng_make(&p, &m, &p);
        }
        for (int ply = 0; ok && ply < 300 && pieces(&p) > n; ply++) {
            eng_movelist l;
            int nm = eng_generate(&p, &l, ENG_DUPS_MERGE);
            if (nm <= 0)
                break;
            int sc[ENG_MAX_MOVES], best = -AB_WIN - 1;
            for (int i = 0; i < nm; i++) {
                eng_pos c;
                eng_make(&p, &l.m[i], &c);
                ab_opts o = {0};
                o.db = db;
                o.db_pieces = SUITE_DB_PIECES;
                o.max_depth = 4;
                ab_result r;
                sc[i] = ab_search(ab, &c, &o, &r) == 0 ? -r.score : -AB_WIN;
                if (sc[i] > best)
                    best = sc[i];
            }
            int cand[ENG_MAX_MOVES], nc = 0;
            for (int i = 0; i < nm; i++)
                if (sc[i] >= best - 15)
                    cand[nc++] = i;
            eng_make(&p, &l.m[cand[rnd(&s) % (uint64_t)nc]], &p);
        }
        int diff = bits_popcount(p.bm | p.bk) - bits_popcount(p.wm | p.wk);
        if (ok && pieces(&p) == n && diff >= -1 && diff <= 1 &&
            eng_count_moves(&p, ENG_DUPS_MERGE) > 0) {
            *out = p;
            return 0;
        }
    }
    return -1;
}

int
main(void)
{
    const char *dbdir = getenv("SOLVE_BENCH_DB") ? getenv("SOLVE_BENCH_DB") : "egdb-data";
    double tlim = getenv("SOLVE_BENCH_TIME") ? atof(getenv("SOLVE_BENCH_TIME")) : 10;
    int per = getenv("SOLVE_BENCH_PER") ? atoi(getenv("SOLVE_BENCH_PER")) : 4;
    int nmin = getenv("SOLVE_BENCH_MIN") ? atoi(getenv("SOLVE_BENCH_MIN")) : 7;
    int nmax = getenv("SOLVE_BENCH_MAX") ? atoi(getenv("SOLVE_BENCH_MAX")) : 14;
    char cpu[128], err[512];
    bench_cpu_model(cpu, sizeof cpu);
    egdb *db;
    if (egdb_open(dbdir, 0, 512u << 20, &db, err, sizeof err) != 0) {
        printf("solve bench: skipped: no databases in %s (%s); build them with\n"
               "  bin/checkers egdb build --pieces 6 --dir %s\n",
               dbdir, err, dbdir);
        return 0;
    }
    int dbp = egdb_max_pieces(db);
    /* the proofs go to a store of their own under $TMPDIR, removed at the end */
    const char *tmpdir = getenv("TMPDIR") && *getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
    char tmp[512];
    snprintf(tmp, sizeof tmp, "%s/checkers-bench-solve.XXXXXX", tmpdir);
    pst_env *st = NULL;
    ab_ctx *ab = NULL;
    if (!mkdtemp(tmp)) {
        printf("solve bench: cannot make a directory %s\n", tmp);
        egdb_close(db);
        return 1;
    }
    if (pst_open(tmp, 0, &st, err, sizeof err) != 0 || ab_new(64u << 20, &ab) != 0) {
        printf("solve bench: %s\n", st ? "out of memory for the alpha-beta table" : err);
        if (st)
            pst_close(st);
        bench_remove_store(tmp);
        egdb_close(db);
        return 1;
    }

    /* the same-run baseline: move generation and making, from the start */
    eng_pos start;
    eng_start(&start);
    double t0 = bench_now();
    uint64_t leaves = eng_perft(&start, 11, ENG_DUPS_MERGE);
    double base = (double)leaves / (bench_now() - t0);

    printf("solve bench: %s, 2 cores; databases of up to %d pieces; %.0f s a position\n", cpu, dbp,
           tlim);
    static row rows[MAXPOS];
    int nr = 0, wrong = 0, badproof = 0;
    uint64_t tot_nodes = 0;
    double tot_dfpn = 0;
    for (int n = nmin; n <= nmax; n++)
        for (int k = 0; k < per && nr < MAXPOS; k++) {
            row *r = &rows[nr];
            if (make_position(ab, db, n, k, &r->p) != 0)
                continue;
            r->n = n;
            nr++;
            char fen[ENG_FEN_MAX];
            eng_format_fen(&r->p, fen, sizeof fen);
            /* alpha-beta, the same time */
            ab_clear(ab);
            ab_opts ao = {0};
            ao.db = db;
            ao.db_pieces = dbp;
            ao.time_limit = tlim;
            ab_result ar;
            double a0 = bench_now();
            ab_search(ab, &r->p, &ao, &ar);
            r->ab_s = bench_now() - a0;
            r->ab_proven = ar.proven;
            /* df-pn */
            prv_opts o = {0};
            o.db = db;
            o.db_pieces = dbp;
            o.store = st;
            o.question = NULL; /* the value */
            o.time_limit = tlim;
            o.tt_bytes = 256u << 20;
            o.hint = prv_hint(ar.score);
            prv_result pr;
            int rc = prv_solve(&r->p, &o, &pr, err, sizeof err);
            r->dfpn = pr.bound;
            r->complete = pr.complete;
            r->dfpn_s = pr.seconds;
            r->nodes = pr.nodes;
            tot_nodes += pr.nodes;
            tot_dfpn += pr.seconds;
            if (rc != 0)
                printf("  solver error on %s: %s\n", fen, err);
            /* checks: the proof, and agreement with alpha-beta's proofs */
            r->checked = -1;
            if (pr.bound != ENG_LW && n <= dbp) {
                /* The root is a database position: df-pn answers from the
                 * database and stores nothing, so there is no proof tree
                 * to check; its answer is checked against a probe. */
                int v = egdb_probe(db, &r->p);
                r->checked = v > 0 && pr.bound == eng_bound_exact(egdb_outcome(v));
                if (!r->checked) {
                    badproof++;
                    printf("  DATABASE DISAGREES: %s: df-pn %s, database %d\n", fen,
                           prv_bound_word(pr.bound), v);
                }
            } else if (pr.bound != ENG_LW) {
                pchk_result cr;
                r->checked =
                    pchk_check(st, db, &r->p, &cr, err, sizeof err) == 0 && cr.status == PCHK_VALID;
                if (!r->checked) {
                    badproof++;
                    printf("  PROOF FAILS its check: %s: %s at %s\n", fen, cr.why, cr.where);
                }
            }
            int abv = ar.proven == AB_PROVEN_WIN    ? ENG_WIN
                      : ar.proven == AB_PROVEN_LOSS ? ENG_LOSS
                                                    : 2;
            if (abv != 2 && pr.bound != ENG_LW && !eng_bound_contains(pr.bound, abv)) {
                wrong++;
                printf("  WRONG: %s: df-pn %s, alpha-beta proves %s\n", fen,
                       prv_bound_word(pr.bound), abv > 0 ? "win" : "loss");
            }
            printf("  %2d pieces  %-44s df-pn %-7s %6.2fs %10" PRIu64 " nodes  alpha-beta %s\n", n,
                   fen, prv_bound_word(pr.bound), pr.seconds, pr.nodes,
                   ar.proven ? (ar.proven > 0 ? "proven win" : "proven loss") : "heuristic");
            fflush(stdout);
        }

    printf("\n| pieces | positions | df-pn exact | df-pn bound | median df-pn s | alpha-beta "
           "proven |\n|---:|---:|---:|---:|---:|---:|\n");
    for (int n = nmin; n <= nmax; n++) {
        int cnt = 0, ex = 0, bd = 0, abp = 0;
        double ts[MAXPOS];
        for (int i = 0; i < nr; i++)
            if (rows[i].n == n) {
                ts[cnt++] = rows[i].dfpn_s;
                ex += eng_bound_is_exact(rows[i].dfpn);
                bd += rows[i].dfpn != ENG_LW;
                abp += rows[i].ab_proven != 0;
            }
        if (!cnt)
            continue;
        qsort(ts, (size_t)cnt, sizeof ts[0], bench_cmp_double);
        printf("| %d | %d | %d (%.0f%%) | %d | %.2f | %d |\n", n, cnt, ex, 100.0 * ex / cnt, bd,
               ts[cnt / 2], abp);
    }
    double rate = tot_dfpn > 0 ? (double)tot_nodes / tot_dfpn : 0;
    printf("\ndf-pn: %" PRIu64 " positions valued in %.1f s: %.2f M a second (one core)\n",
           tot_nodes, tot_dfpn, rate / 1e6);
    printf("baseline, same run: move generation and making (perft 11, merged captures): %.1f M "
           "leaves a second; df-pn runs at %.3f of it\n",
           base / 1e6, rate / base);
    printf("wrong answers: %d; proofs failing the checker: %d\n", wrong, badproof);
    ab_free(ab);
    pst_close(st);
    egdb_close(db);
    bench_remove_store(tmp);
    return wrong || badproof ? 1 : 0;
}
