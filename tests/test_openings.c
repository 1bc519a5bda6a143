/*
 * test_openings.c - the openings module's comparison rules and the
 * frontier ladder (openings/openings.h).
 *
 * WHAT IS CHECKED
 *   - the published words as bounds for White: each word, and unknown
 *     words refused;
 *   - ops_verdict on all 36 pairs of bounds against a second definition
 *     written here from sets of outcomes (contradiction: no common
 *     outcome; agreement: ours a subset of the published set), and the
 *     cases the comparison report relies on, by name;
 *   - ops_play_from continues ops_play (one line split in two);
 *   - the ladder loader: a good file, then one bad field at a time (each
 *     refused with the file and line named);
 *   - the shipped openings/ladder.tsv: 6 rungs for each of the 19
 *     openings, and each rung is the FIRST position of its opening's line
 *     with at most that many pieces (replayed here move by move).
 *   - "level" (ops_equal_material, ops_quiet, ops_level) on positions
 *     written out by hand;
 *   - the level ladder loader: good rows, then a row that is not level, a
 *     row with an earlier level position on its line, a rung outside
 *     10-16;
 *   - the shipped openings/level.tsv, replayed move by move with the
 *     rules engine and checked here without the openings module's own
 *     predicates: each row reaches its FEN, has its piece count, as many
 *     men and kings on each side, no capture for the side to move (no
 *     legal move is a capture), is the FIRST such position of its line
 *     with at most rung pieces, and every rung missing from an opening is
 *     said missing in a comment of the file. No search is run: the ladder
 *     is data.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "openings/openings.h"
#include "tests/test_util.h"

static unsigned
outcomes(eng_bound b)
{
    unsigned m = 0;
    for (int v = eng_bound_lo(b); v <= eng_bound_hi(b); v++)
        m |= 1u << (v + 1);
    return m;
}

static void
test_published_bound(void **state)
{
    (void)state;
    eng_bound b;
    assert_int_equal(ops_published_bound("Draw", &b), 0);
    assert_int_equal(b, ENG_DD);
    /* Black at most draws: White, to move, at least draws */
    assert_int_equal(ops_published_bound("<=Draw", &b), 0);
    assert_int_equal(b, ENG_DW);
    /* Black loses: White wins */
    assert_int_equal(ops_published_bound("Loss", &b), 0);
    assert_int_equal(b, ENG_WW);
    assert_int_equal(ops_published_bound("Win", &b), 0);
    assert_int_equal(b, ENG_LL);
    assert_int_equal(ops_published_bound(">=Draw", &b), 0);
    assert_int_equal(b, ENG_LD);
    assert_int_equal(ops_published_bound("draw", &b), -1);
    assert_int_equal(ops_published_bound("", &b), -1);
}

static void
test_verdict(void **state)
{
    (void)state;
    for (eng_bound p = 0; p < ENG_NBOUNDS; p++)
        for (eng_bound o = 0; o < ENG_NBOUNDS; o++) {
            unsigned mp = outcomes(p), mo = outcomes(o);
            int want = !(mp & mo) ? OPS_CONTRADICTS : (mo & ~mp) == 0u ? OPS_AGREES : OPS_OPEN;
            assert_int_equal(ops_verdict(p, o), want);
        }
    /* the report's cases: a published draw and a proven win for White */
    assert_int_equal(ops_verdict(ENG_DD, ENG_WW), OPS_CONTRADICTS);
    /* published <=Draw for Black (DW): White proven to lose contradicts */
    assert_int_equal(ops_verdict(ENG_DW, ENG_LL), OPS_CONTRADICTS);
    /* ... a White win or >=draw agrees, a <=draw for White is open */
    assert_int_equal(ops_verdict(ENG_DW, ENG_WW), OPS_AGREES);
    assert_int_equal(ops_verdict(ENG_DW, ENG_DW), OPS_AGREES);
    assert_int_equal(ops_verdict(ENG_DW, ENG_LD), OPS_OPEN);
    /* nothing proven is never a contradiction */
    for (eng_bound p = 0; p < ENG_NBOUNDS; p++)
        assert_int_not_equal(ops_verdict(p, ENG_LW), OPS_CONTRADICTS);
}

static void
test_play_from(void **state)
{
    (void)state;
    char err[300];
    eng_pos a, b, mid;
    int n1, n2;
    assert_int_equal(ops_play("11-15 23-19 8-11 22-17 9-13", &a, &n1, err, sizeof err), 0);
    assert_int_equal(ops_play("11-15 23-19", &mid, NULL, err, sizeof err), 0);
    assert_int_equal(ops_play_from(&mid, "8-11 22-17 9-13", &b, &n2, err, sizeof err), 0);
    assert_int_equal(n1, 5);
    assert_int_equal(n2, 3);
    assert_true(eng_equal(&a, &b));
    assert_int_equal(ops_play_from(&mid, "8-11 22-99", &b, NULL, err, sizeof err), -1);
    assert_non_null(strstr(err, "move 2"));
}

/* Writes dir/ladder.tsv with a header and the given data line. */
static void
write_ladder(const char *dir, const char *row)
{
    char path[600];
    snprintf(path, sizeof path, "%s/ladder.tsv", dir);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fprintf(f, "# test\nno\topening\trung\tpieces\tply\tfen\tline\n%s\n", row);
    fclose(f);
}

static void
test_ladder_load(void **state)
{
    (void)state;
    char dir[512];
    assert_non_null(test_tmpdir(dir, sizeof dir, "test_openings"));
    char err[1200];
    ops_rung *r = NULL;
    int n = 0;
    /* 9-13 22-17 13-22, then 26x17 5-9: 23 pieces, Black... White to move */
    eng_pos p;
    assert_int_equal(ops_play("9-13 22-17 13-22 26x17 5-9", &p, NULL, err, sizeof err), 0);
    char fen[ENG_FEN_MAX], row[1024];
    eng_format_fen(&p, fen, sizeof fen);
    snprintf(row, sizeof row, "1\t09-13 22-17 13-22\t18\t%d\t2\t%s\t26x17 5-9", eng_pieces(&p),
             fen);
    /* a nominal rung of 18 with 23 pieces is refused; make it honest */
    write_ladder(dir, row);
    assert_int_equal(ops_ladder_load(dir, &r, &n, err, sizeof err), -1);
    assert_non_null(strstr(err, "line 3"));
    assert_non_null(strstr(err, "piece count"));
    free(r);
    /* a good row: the position after 13-22 26x17 has 23 pieces; use a
     * made-up low rung by a longer line */
    const char *line = "26x17 5-9 17-14 9x18 23x14 10x17 21x14 12-16 27-23 16-19 23x16 11x20x27 "
                       "32x23";
    assert_int_equal(ops_play("9-13 22-17 13-22", &p, NULL, err, sizeof err), 0);
    eng_pos q;
    int nm;
    assert_int_equal(ops_play_from(&p, line, &q, &nm, err, sizeof err), 0);
    eng_format_fen(&q, fen, sizeof fen);
    snprintf(row, sizeof row, "1\t09-13 22-17 13-22\t14\t%d\t%d\t%s\t%s", eng_pieces(&q), nm, fen,
             line);
    write_ladder(dir, row);
    assert_int_equal(ops_ladder_load(dir, &r, &n, err, sizeof err), 0);
    assert_int_equal(n, 1);
    assert_int_equal(r[0].no, 1);
    assert_int_equal(r[0].rung, 14);
    assert_int_equal(r[0].pieces, 14);
    assert_int_equal(r[0].ply, 13);
    assert_true(eng_equal(&r[0].pos, &q));
    free(r);
    r = NULL;
    /* one bad field at a time */
    /* no, opening, rung, pieces, ply; what the error says */
    const char *bad[][6] = {
        {"20", "09-13 22-17 13-22", "14", "14", "13", "opening number"},
        {"1", "09-13 22-17 13-22", "13", "14", "13", "rung"},
        {"1", "09-13 22-17 13-22", "14", "13", "13", "pieces"},
        {"1", "09-13 22-17 13-22", "14", "14", "12", "does not reach"},
        {"1", "09-13 22-17 13-99", "14", "14", "13", "move"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        snprintf(row, sizeof row, "%s\t%s\t%s\t%s\t%s\t%s\t%s", bad[i][0], bad[i][1], bad[i][2],
                 bad[i][3], bad[i][4], fen, line);
        write_ladder(dir, row);
        assert_int_equal(ops_ladder_load(dir, &r, &n, err, sizeof err), -1);
        assert_non_null(strstr(err, "ladder.tsv, line 3"));
        if (!strstr(err, bad[i][5]))
            fail_msg("row %zu: '%s' does not say '%s'", i, err, bad[i][5]);
        free(r);
        r = NULL;
    }
    /* the same rung twice */
    snprintf(row, sizeof row,
             "1\t09-13 22-17 13-22\t14\t%d\t%d\t%s\t%s\n1\t09-13 22-17 13-22\t14\t%d\t%d\t%s\t%s",
             eng_pieces(&q), nm, fen, line, eng_pieces(&q), nm, fen, line);
    write_ladder(dir, row);
    assert_int_equal(ops_ladder_load(dir, &r, &n, err, sizeof err), -1);
    assert_non_null(strstr(err, "line 4: a second row for opening 1, rung 14"));
    /* a malformed FEN */
    snprintf(row, sizeof row, "1\t09-13 22-17 13-22\t14\t14\t13\tW:W99\t%s", line);
    write_ladder(dir, row);
    assert_int_equal(ops_ladder_load(dir, &r, &n, err, sizeof err), -1);
    assert_non_null(strstr(err, "FEN"));
    free(r);
    char path[600];
    snprintf(path, sizeof path, "%s/ladder.tsv", dir);
    unlink(path);
    assert_int_equal(ops_ladder_load(dir, &r, &n, err, sizeof err), -1);
    assert_non_null(strstr(err, "cannot open"));
    rmdir(dir);
}

static void
test_shipped_ladder(void **state)
{
    (void)state;
    char err[1200];
    ops_rung *r;
    int n;
    if (ops_ladder_load("openings", &r, &n, err, sizeof err))
        fail_msg("%s", err);
    assert_int_equal(n, OPS_PUBLISHED * OPS_RUNGS);
    static ops_book b;
    assert_int_equal(ops_load("openings", &b, err, sizeof err), 0);
    /* the lines themselves: read them again from the file */
    FILE *f = fopen("openings/ladder.tsv", "r");
    assert_non_null(f);
    char *line = NULL;
    size_t cap = 0;
    int rows = 0, header = 0;
    while (getline(&line, &cap, f) >= 0) {
        if (line[0] == '#' || !header++)
            continue;
        line[strcspn(line, "\n")] = 0;
        char *fld[7], *save = NULL, *s = line;
        int k = 0;
        for (char *t; k < 7 && (t = strtok_r(s, "\t", &save)); s = NULL)
            fld[k++] = t;
        int no = atoi(fld[0]), rung = atoi(fld[2]), ply = atoi(fld[4]);
        char *mv_line = k == 7 ? fld[6] : "";
        /* every position before the rung's has more than rung pieces */
        eng_pos p = b.pub[no - 1].pos;
        char *mv, *save2 = NULL;
        int done = 0;
        char *copy = strdup(mv_line);
        for (mv = strtok_r(copy, " ", &save2); mv; mv = strtok_r(NULL, " ", &save2)) {
            assert_true(eng_pieces(&p) > rung);
            eng_move m;
            assert_int_equal(eng_parse_move(&p, mv, &m, err, sizeof err), 0);
            eng_pos nx;
            eng_make(&p, &m, &nx);
            p = nx;
            done++;
        }
        free(copy);
        assert_int_equal(done, ply);
        assert_true(eng_pieces(&p) <= rung);
        assert_true(eng_equal(&p, &r[rows].pos));
        rows++;
    }
    free(line);
    fclose(f);
    assert_int_equal(rows, n);
    for (int no = 1; no <= OPS_PUBLISHED; no++) {
        int have = 0;
        unsigned rungs = 0;
        for (int i = 0; i < n; i++)
            if (r[i].no == no) {
                have++;
                rungs |= 1u << r[i].rung;
                assert_true(eng_equal(&r[i].start, &b.pub[no - 1].pos));
            }
        assert_int_equal(have, OPS_RUNGS);
        for (int k = 0; k < OPS_RUNGS; k++)
            assert_true(rungs & (1u << ops_rung_pieces[k]));
    }
    free(r);
}

/* ---- the level ladder ------------------------------------------------------ */

static void
test_level_predicates(void **state)
{
    (void)state;
    eng_pos p;
    char err[200];
    /* the start: 12 men a side, Black to move, no capture */
    assert_int_equal(eng_parse_fen("B:W21-32:B1-12", &p, err, sizeof err), 0);
    assert_true(ops_equal_material(&p));
    assert_true(ops_quiet(&p));
    assert_true(ops_level(&p));
    /* two men and a king each, but White (to move) must take 15 */
    assert_int_equal(eng_parse_fen("W:W19,30,K3:B15,1,K32", &p, err, sizeof err), 0);
    assert_true(ops_equal_material(&p));
    assert_false(ops_quiet(&p));
    assert_false(ops_level(&p));
    /* the same count of pieces, another split: a king against a man */
    assert_int_equal(eng_parse_fen("B:W30,K3:B1,5", &p, err, sizeof err), 0);
    assert_false(ops_equal_material(&p));
    assert_true(ops_quiet(&p));
    assert_false(ops_level(&p));
    /* a man up */
    assert_int_equal(eng_parse_fen("B:W30,31:B1,2,3", &p, err, sizeof err), 0);
    assert_false(ops_level(&p));
    assert_int_equal(ops_ladder_file(OPS_LADDER_LEVEL)[0], 'l');
    const int *rungs;
    assert_int_equal(ops_ladder_rungs(OPS_LADDER_LEVEL, &rungs), OPS_LEVEL_RUNGS);
    assert_int_equal(rungs[0], 10);
    assert_int_equal(rungs[OPS_LEVEL_RUNGS - 1], 16);
    assert_int_equal(ops_ladder_rungs(7, &rungs), 0);
}

/* Writes dir/level.tsv with a header and the given data lines. */
static void
write_level(const char *dir, const char *rows)
{
    char path[600];
    snprintf(path, sizeof path, "%s/level.tsv", dir);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fprintf(f, "# test\nno\topening\trung\tpieces\tply\tfen\tline\n%s\n", rows);
    fclose(f);
}

/* Opening 4 (09-13 23-18 05-09): a line whose first level position with
 * at most 16 pieces has 12 (a combination takes 20 pieces to 13 and an
 * exchange to 12), then after three more plies 10. */
static const char level_line12[] =
    "24-19 11-16 18-15 16x23 26x19 7-11 31-26 11x18 22x15 9-14 26-22 14-18 28-24 3-7 24-20 7-11 "
    "20-16 11x20 27-24 20x27 32x23x14x7 2x11x18 22x15";

static void
test_level_load(void **state)
{
    (void)state;
    char dir[512];
    assert_non_null(test_tmpdir(dir, sizeof dir, "test_openings_level"));
    char err[1200], rows[4096], fen12[ENG_FEN_MAX], fen10[ENG_FEN_MAX], fen13[ENG_FEN_MAX];
    eng_pos start, p;
    int nm;
    assert_int_equal(ops_play("9-13 23-18 5-9", &start, NULL, err, sizeof err), 0);
    assert_int_equal(ops_play_from(&start, level_line12, &p, &nm, err, sizeof err), 0);
    assert_int_equal(nm, 23);
    assert_int_equal(eng_pieces(&p), 12);
    eng_format_fen(&p, fen12, sizeof fen12);
    char line10[1024], line13[1024];
    snprintf(line10, sizeof line10, "%s 8-11 15x8 4x11", level_line12);
    assert_int_equal(ops_play_from(&start, line10, &p, &nm, err, sizeof err), 0);
    assert_int_equal(eng_pieces(&p), 10);
    eng_format_fen(&p, fen10, sizeof fen10);
    /* the position before 22x15: 13 pieces, a man up for White */
    snprintf(line13, sizeof line13, "%.*s", (int)(strrchr(level_line12, ' ') - level_line12),
             level_line12);
    assert_int_equal(ops_play_from(&start, line13, &p, &nm, err, sizeof err), 0);
    assert_int_equal(eng_pieces(&p), 13);
    eng_format_fen(&p, fen13, sizeof fen13);

    /* good: the same position is the rung of 16, 14 and 12; 10 after it */
    ops_rung *r = NULL;
    int n = 0;
    snprintf(rows, sizeof rows,
             "4\t09-13 23-18 05-09\t16\t12\t23\t%s\t%s\n"
             "4\t09-13 23-18 05-09\t12\t12\t23\t%s\t%s\n"
             "4\t09-13 23-18 05-09\t10\t10\t26\t%s\t%s",
             fen12, level_line12, fen12, level_line12, fen10, line10);
    write_level(dir, rows);
    if (ops_ladder_load_kind(dir, OPS_LADDER_LEVEL, &r, &n, err, sizeof err))
        fail_msg("%s", err);
    assert_int_equal(n, 3);
    assert_int_equal(r[1].rung, 12);
    assert_int_equal(r[2].pieces, 10);
    assert_true(ops_level(&r[2].pos));
    free(r);
    r = NULL;

    /* the 10-piece position as the rung of 12: the 12-piece one came first */
    snprintf(rows, sizeof rows, "4\t09-13 23-18 05-09\t12\t10\t26\t%s\t%s", fen10, line10);
    write_level(dir, rows);
    assert_int_equal(ops_ladder_load_kind(dir, OPS_LADDER_LEVEL, &r, &n, err, sizeof err), -1);
    assert_non_null(strstr(err, "level.tsv, line 3"));
    if (!strstr(err, "ply 23 of the line is already level with 12 pieces"))
        fail_msg("'%s'", err);
    free(r);
    r = NULL;

    /* 13 pieces, a man up: not level */
    snprintf(rows, sizeof rows, "4\t09-13 23-18 05-09\t14\t13\t22\t%s\t%s", fen13, line13);
    write_level(dir, rows);
    assert_int_equal(ops_ladder_load_kind(dir, OPS_LADDER_LEVEL, &r, &n, err, sizeof err), -1);
    if (!strstr(err, "not level (the material differs)"))
        fail_msg("'%s'", err);
    free(r);
    r = NULL;
    /* the frontier ladder takes that row (it asks for no level) */
    snprintf(rows, sizeof rows, "4\t09-13 23-18 05-09\t14\t13\t22\t%s\t%s", fen13, line13);
    write_ladder(dir, rows);
    if (ops_ladder_load(dir, &r, &n, err, sizeof err))
        fail_msg("%s", err);
    free(r);
    r = NULL;

    /* a rung of the frontier ladder that the level one has not */
    snprintf(rows, sizeof rows, "4\t09-13 23-18 05-09\t18\t12\t23\t%s\t%s", fen12, level_line12);
    write_level(dir, rows);
    assert_int_equal(ops_ladder_load_kind(dir, OPS_LADDER_LEVEL, &r, &n, err, sizeof err), -1);
    if (!strstr(err, "rung '18' (10, 12, ..., 16)"))
        fail_msg("'%s'", err);
    free(r);
    r = NULL;

    char path[600];
    snprintf(path, sizeof path, "%s/level.tsv", dir);
    unlink(path);
    snprintf(path, sizeof path, "%s/ladder.tsv", dir);
    unlink(path);
    rmdir(dir);
}

/* Men and kings of each side, counted here from the masks. */
static int
level_here(const eng_pos *p)
{
    if (__builtin_popcount(p->bm) != __builtin_popcount(p->wm) ||
        __builtin_popcount(p->bk) != __builtin_popcount(p->wk))
        return 0;
    /* quiet: no legal move takes a piece */
    eng_movelist ml;
    int nm = eng_generate(p, &ml, ENG_DUPS_KEEP);
    for (int i = 0; i < nm; i++)
        if (ml.m[i].captured)
            return 0;
    return 1;
}

static void
test_shipped_level(void **state)
{
    (void)state;
    char err[1200];
    ops_rung *r;
    int n;
    if (ops_ladder_load_kind("openings", OPS_LADDER_LEVEL, &r, &n, err, sizeof err))
        fail_msg("%s", err);
    static ops_book b;
    assert_int_equal(ops_load("openings", &b, err, sizeof err), 0);
    FILE *f = fopen("openings/level.tsv", "r");
    assert_non_null(f);
    char *line = NULL;
    size_t cap = 0;
    int rows = 0, header = 0;
    /* rungs present (bit rung) and said missing in a comment, by opening */
    unsigned have[OPS_PUBLISHED + 1] = {0}, missing[OPS_PUBLISHED + 1] = {0};
    while (getline(&line, &cap, f) >= 0) {
        line[strcspn(line, "\n")] = 0;
        int cno, crung;
        if (sscanf(line, "# opening %d: no level position with at most %d pieces", &cno, &crung) ==
            2) {
            assert_true(cno >= 1 && cno <= OPS_PUBLISHED);
            missing[cno] |= 1u << crung;
            continue;
        }
        if (line[0] == '#' || !header++)
            continue;
        char *fld[7], *save = NULL, *s = line;
        int k = 0;
        for (char *t; k < 7 && (t = strtok_r(s, "\t", &save)); s = NULL)
            fld[k++] = t;
        assert_true(k >= 6);
        int no = atoi(fld[0]), rung = atoi(fld[2]), pieces = atoi(fld[3]), ply = atoi(fld[4]);
        assert_true(no >= 1 && no <= OPS_PUBLISHED);
        assert_true(rung == 10 || rung == 12 || rung == 14 || rung == 16);
        assert_false(have[no] & (1u << rung));
        have[no] |= 1u << rung;
        eng_pos p = b.pub[no - 1].pos;
        char *copy = strdup(k == 7 ? fld[6] : ""), *save2 = NULL;
        int done = 0;
        for (char *mv = strtok_r(copy, " ", &save2); mv; mv = strtok_r(NULL, " ", &save2)) {
            /* no earlier position of the line is a level one of the rung */
            if (eng_pieces(&p) <= rung && level_here(&p))
                fail_msg("opening %d, rung %d: ply %d is level already", no, rung, done);
            eng_move m;
            if (eng_parse_move(&p, mv, &m, err, sizeof err))
                fail_msg("opening %d, rung %d, ply %d '%s': %s", no, rung, done, mv, err);
            eng_pos nx;
            eng_make(&p, &m, &nx);
            p = nx;
            done++;
        }
        free(copy);
        assert_int_equal(done, ply);
        char fen[ENG_FEN_MAX];
        eng_format_fen(&p, fen, sizeof fen);
        assert_string_equal(fen, fld[5]);
        assert_int_equal(eng_pieces(&p), pieces);
        assert_true(pieces <= rung);
        assert_int_equal(pieces % 2, 0);
        if (!level_here(&p))
            fail_msg("opening %d, rung %d: %s is not level", no, rung, fen);
        assert_true(eng_equal(&p, &r[rows].pos));
        rows++;
    }
    free(line);
    fclose(f);
    assert_int_equal(rows, n);
    /* every rung of every opening: a row, or a comment saying why not */
    for (int no = 1; no <= OPS_PUBLISHED; no++)
        for (int rung = 10; rung <= 16; rung += 2) {
            int h = (have[no] >> rung) & 1, m = (missing[no] >> rung) & 1;
            if (h + m != 1)
                fail_msg("opening %d, rung %d: %s", no, rung,
                         h ? "a row and a comment" : "neither a row nor a comment");
        }
    free(r);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_published_bound), cmocka_unit_test(test_verdict),
        cmocka_unit_test(test_play_from),       cmocka_unit_test(test_ladder_load),
        cmocka_unit_test(test_shipped_ladder),  cmocka_unit_test(test_level_predicates),
        cmocka_unit_test(test_level_load),      cmocka_unit_test(test_shipped_level),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
