/*
 * test_notation.c - cmocka suite for engine/notation.c: FEN parsing and
 * formatting, move text both ways, error classes and messages, and a
 * fuzz loop that feeds the FEN parser arbitrary bytes.
 *
 * Expected masks are written by hand (square n is bit n - 1) so the
 * tests do not lean on the code they check. Random positions come from
 * seeded random play, so every run sees the same positions.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/engine.h"

/* ---- constants ------------------------------------------------------ */

#define NRANDOM 300        /* positions reached by random play */
#define MAX_GAME_PLIES 160 /* a game this long is cut, to vary the openings */
#define NFUZZ 100000
#define FUZZ_MAX 256 /* longest fuzz string, NUL included */

#define SQ(n) (1u << ((n)-1))

/* ---- types ---------------------------------------------------------- */

/* xorshift32: tiny, seedable and the same on every platform. */
typedef struct rng {
    uint32_t s;
} rng;

/* An input that must fail and a substring only its message contains. */
typedef struct fen_case {
    const char *text;
    const char *expect;
} fen_case;

/* ---- static data ---------------------------------------------------- */

static const char example_fen[] = "B:W18,24,27,28,K10,K15:B12,16,20,K22,K25,K29";

/* Canonical FEN strings: formatting their parse must give them back. */
static const char *const canonical_fens[] = {
    "B:W18,24,27,28,K10,K15:B12,16,20,K22,K25,K29",
    "W:W21,22,23,24,25,26,27,28,29,30,31,32:B1,2,3,4,5,6,7,8,9,10,11,12",
    "B:W:B",
    "W:WK1,K2,K3,K4:B",
    "B:W5:BK29,K32",
    "W:W5,6,K30:B27,28,K3",
    "B:WK32:BK1",
};

/* One input per error class, each with a substring no other class uses. */
static const fen_case fen_errors[] = {
    {"", "empty input"},
    {"b:W1:B5", "unknown character 'b' at offset 0"},
    {"B:W6 7:B5", "unexpected character '7' at offset 5"},
    {"K:W5:B1", "expected side to move"},
    {"B:WK", "expected a square number at offset 4, found end of input"},
    {"B:12:B1", "expected colour 'W' or 'B'"},
    {"B:W33:B5", "square 33 out of range 1..32 at offset 3"},
    {"B:W12:B12", "square 12 given twice at offset 7"},
    {"B:W18:B30", "black man on square 30 is on its crowning row at offset 7"},
    {"B:W5-17:B1", "too many white pieces: 13"},
    {"B W1:B5", "missing ':' after side to move at offset 2"},
    {"B:W5:W6", "colour W given twice at offset 5"},
    {"B:W5", "missing colour list for black at offset 4"},
    {"B:W20-10:B1", "range 20-10 is reversed at offset 3"},
    {"B:W5:B1..", "trailing characters at offset 8"},
};

/* Other failures that must still be ENG_EFEN with a pointed message. */
static const fen_case fen_more_errors[] = {
    {"   \t ", "empty input"},
    {"B:W0:B5", "square 0 out of range"},
    {"B:W3:B5", "white man on square 3 is on its crowning row"},
    {"B:W5:B1:W6", "trailing characters at offset 7"},
    {"B:", "missing colour list at offset 2"},
    {"B", "missing ':' after side to move at offset 1"},
    {"B:W5,:B1", "unexpected character ':' at offset 5; expected a square number"},
    {"B:W99999999999999999999999999:B1", "square 9999999999... out of range"},
    {"B:W5:B1\x01", "unknown character byte 0x01 at offset 7"},
    {"B:w5:B1", "unknown character 'w'"},
    {"B:W5:Bk1", "unknown character 'k'"},
    {"B:W1-:B5", "expected a square number"},
    {"B:W5-K6:B1", "expected a square number"},
    {"B:K1-4:W30", "expected colour 'W' or 'B'"},
    {"W:BK1-4,29-32:W30", "black man on square 29"},
    {"B:W1-1000000000000:B9", "out of range"},
};

/* ---- prototypes ----------------------------------------------------- */

static uint32_t rng_next(rng *r);
static int random_positions(eng_pos *out, int n);
static void assert_fen_ok(const char *s, eng_pos *out);
static void assert_roundtrip(const eng_pos *p);
static void fuzz_string(rng *r, char *buf, const char *const *pool, int npool);
static void assert_move(const eng_pos *p, const char *text, int from, int to, uint32_t captured);
static void assert_move_fails(const eng_pos *p, const char *text, int code, const char *expect);
static void test_example_fen(void **state);
static void test_ranges_and_spaces(void **state);
static void test_canonical_roundtrip(void **state);
static void test_random_roundtrip(void **state);
static void test_fen_errors(void **state);
static void test_fen_err_buffer(void **state);
static void test_fen_fuzz(void **state);
static void test_format_fen_space(void **state);
static void test_format_move(void **state);
static void test_move_roundtrip(void **state);
static void test_move_short_form(void **state);
static void test_move_ambiguous(void **state);
static void test_move_king_cycle(void **state);
static void test_move_illegal(void **state);
static void test_move_malformed(void **state);
static void test_strerror(void **state);

/* ---- functions ------------------------------------------------------ */

static uint32_t
rng_next(rng *r)
{
    uint32_t x = r->s;

    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    r->s = x;
    return x;
}

/*
 * n positions reached by random play from the start (the start itself
 * first). A finished or overlong game restarts from the initial position,
 * so the sample holds openings, middle games and king endings.
 */
static int
random_positions(eng_pos *out, int n)
{
    rng r = {0x2545F491u};
    eng_movelist list;
    eng_pos p;
    int k = 0, ply = 0, nm;

    eng_start(&p);
    while (k < n) {
        out[k++] = p;
        nm = eng_generate(&p, &list, ENG_DUPS_MERGE);
        assert_true(nm >= 0);
        if (nm == 0 || ply >= MAX_GAME_PLIES) {
            eng_start(&p);
            ply = 0;
            continue;
        }
        eng_make(&p, &list.m[rng_next(&r) % (uint32_t)nm], &p);
        ply++;
    }
    return k;
}

static void
assert_fen_ok(const char *s, eng_pos *out)
{
    char err[128] = "untouched";
    int rc = eng_parse_fen(s, out, err, sizeof err);

    if (rc != 0)
        print_error("parse of \"%s\" failed: %s\n", s, err);
    assert_int_equal(rc, 0);
}

/* format then parse gives the same position, and the text is canonical
 * (formatting the parsed text again gives the same string). */
static void
assert_roundtrip(const eng_pos *p)
{
    char a[ENG_FEN_MAX], b[ENG_FEN_MAX];
    eng_pos q;

    assert_int_equal(eng_format_fen(p, a, sizeof a), 0);
    assert_fen_ok(a, &q);
    assert_true(eng_equal(p, &q));
    assert_int_equal(eng_format_fen(&q, b, sizeof b), 0);
    assert_string_equal(a, b);
}

/*
 * One fuzz input in buf: mostly valid FEN from the pool with a few
 * mutations (these reach deep into the grammar), sometimes text from the
 * FEN alphabet, sometimes arbitrary bytes, sometimes long digit runs.
 */
static void
fuzz_string(rng *r, char *buf, const char *const *pool, int npool)
{
    static const char alpha[] = "BWK0123456789,-:. bwkx\t";
    size_t len, i, cap = FUZZ_MAX - 1;
    int mode = (int)(rng_next(r) % 8), k, nmut;

    if (mode == 0) {
        len = rng_next(r) % 64;
        for (i = 0; i < len; i++)
            buf[i] = alpha[rng_next(r) % (sizeof alpha - 1)];
        buf[len] = '\0';
        return;
    }
    if (mode == 1) {
        len = rng_next(r) % 64;
        for (i = 0; i < len; i++)
            buf[i] = (char)(1 + rng_next(r) % 255); /* any byte but NUL */
        buf[len] = '\0';
        return;
    }
    snprintf(buf, FUZZ_MAX, "%s", pool[rng_next(r) % (uint32_t)npool]);
    len = strlen(buf);
    nmut = 1 + (int)(rng_next(r) % 4);
    for (k = 0; k < nmut; k++) {
        uint32_t what = rng_next(r) % 6;
        size_t at = len > 0 ? rng_next(r) % len : 0;
        char c = (rng_next(r) % 4 == 0) ? (char)(1 + rng_next(r) % 255)
                                        : alpha[rng_next(r) % (sizeof alpha - 1)];

        if (what == 0 && len > 0) { /* replace */
            buf[at] = c;
        } else if (what == 1 && len < cap) { /* insert */
            memmove(buf + at + 1, buf + at, len - at + 1);
            buf[at] = c;
            len++;
        } else if (what == 2 && len > 0) { /* delete */
            memmove(buf + at, buf + at + 1, len - at);
            len--;
        } else if (what == 3) { /* truncate */
            buf[at] = '\0';
            len = at;
        } else if (what == 4) { /* a long run of digits: overflow bait */
            size_t run = 1 + rng_next(r) % 40;
            for (; run > 0 && len < cap; run--) {
                memmove(buf + at + 1, buf + at, len - at + 1);
                buf[at] = (char)('0' + rng_next(r) % 10);
                len++;
            }
        } else if (len > 0) { /* swap two bytes */
            size_t other = rng_next(r) % len;
            char t = buf[at];
            buf[at] = buf[other];
            buf[other] = t;
        }
    }
}

static void
assert_move(const eng_pos *p, const char *text, int from, int to, uint32_t captured)
{
    char err[512] = "";
    eng_move m;
    int rc = eng_parse_move(p, text, &m, err, sizeof err);

    if (rc != 0)
        print_error("move \"%s\": %s\n", text, err);
    assert_int_equal(rc, 0);
    assert_int_equal(m.from, from - 1);
    assert_int_equal(m.to, to - 1);
    assert_int_equal(m.captured, captured);
}

static void
assert_move_fails(const eng_pos *p, const char *text, int code, const char *expect)
{
    char err[512] = "";
    eng_move m;
    int rc = eng_parse_move(p, text, &m, err, sizeof err);

    if (rc != code || strstr(err, expect) == NULL)
        print_error("move \"%s\": rc %d, message \"%s\"; wanted %d and \"%s\"\n", text, rc, err,
                    code, expect);
    assert_int_equal(rc, code);
    assert_non_null(strstr(err, expect));
}

static void
test_example_fen(void **state)
{
    eng_pos p;
    char out[ENG_FEN_MAX];

    (void)state;
    assert_fen_ok(example_fen, &p);
    /* White men 18,24,27,28 are bits 17,23,26,27; kings 10,15 bits 9,14.
     * Black men 12,16,20 are bits 11,15,19; kings 22,25,29 bits 21,24,28. */
    assert_int_equal(p.wm, 0x0C820000u);
    assert_int_equal(p.wk, 0x00004200u);
    assert_int_equal(p.bm, 0x00088800u);
    assert_int_equal(p.bk, 0x11200000u);
    assert_int_equal(p.stm, ENG_BLACK);
    assert_int_equal(p.wm, SQ(18) | SQ(24) | SQ(27) | SQ(28));
    assert_int_equal(p.bk, SQ(22) | SQ(25) | SQ(29));
    assert_int_equal(eng_format_fen(&p, out, sizeof out), 0);
    assert_string_equal(out, example_fen);
}

static void
test_ranges_and_spaces(void **state)
{
    eng_pos p, start, q;

    (void)state;
    eng_start(&start);
    assert_fen_ok("B:W21-32:B1-12", &p);
    assert_true(eng_equal(&p, &start));
    assert_fen_ok("B:B1-12:W21-32.", &p); /* either order, trailing dot */
    assert_true(eng_equal(&p, &start));
    assert_fen_ok("  B : W 21 - 32 : B 1-4 , 5 - 12 .  ", &p);
    assert_true(eng_equal(&p, &start));
    assert_fen_ok("W:WK1-4,5:B", &p);
    assert_int_equal(p.wk, 0x0000000Fu);
    assert_int_equal(p.wm, SQ(5));
    assert_int_equal(p.bm | p.bk, 0);
    assert_int_equal(p.stm, ENG_WHITE);
    assert_fen_ok("B:W:B1", &p); /* an empty list is a side without pieces */
    assert_int_equal(p.wm | p.wk, 0);
    assert_int_equal(p.bm, SQ(1));
    assert_fen_ok("B:W7-7:B008", &q); /* one-square range, leading zeros */
    assert_int_equal(q.wm, SQ(7));
    assert_int_equal(q.bm, SQ(8));
}

static void
test_canonical_roundtrip(void **state)
{
    size_t i;
    eng_pos p;
    char out[ENG_FEN_MAX];

    (void)state;
    for (i = 0; i < sizeof canonical_fens / sizeof canonical_fens[0]; i++) {
        assert_fen_ok(canonical_fens[i], &p);
        assert_int_equal(eng_format_fen(&p, out, sizeof out), 0);
        assert_string_equal(out, canonical_fens[i]);
        assert_roundtrip(&p);
    }
}

static void
test_random_roundtrip(void **state)
{
    static eng_pos pos[NRANDOM];
    int i, n = random_positions(pos, NRANDOM);

    (void)state;
    for (i = 0; i < n; i++) {
        eng_pos f = eng_flip(&pos[i]);

        assert_roundtrip(&pos[i]);
        assert_roundtrip(&f);
    }
}

/* Each class fails with ENG_EFEN and its own message; no two alike. */
static void
test_fen_errors(void **state)
{
    enum { N = sizeof fen_errors / sizeof fen_errors[0] };
    char msg[N][160];
    size_t i, j;
    eng_pos p;

    (void)state;
    for (i = 0; i < N; i++) {
        int rc = eng_parse_fen(fen_errors[i].text, &p, msg[i], sizeof msg[i]);

        if (rc != ENG_EFEN || strstr(msg[i], fen_errors[i].expect) == NULL)
            print_error("\"%s\": rc %d \"%s\"\n", fen_errors[i].text, rc, msg[i]);
        assert_int_equal(rc, ENG_EFEN);
        assert_non_null(strstr(msg[i], fen_errors[i].expect));
        /* The substring of every other class is absent from this one. */
        for (j = 0; j < N; j++)
            if (j != i)
                assert_null(strstr(msg[i], fen_errors[j].expect));
    }
    for (i = 0; i < sizeof fen_more_errors / sizeof fen_more_errors[0]; i++) {
        char err[160] = "";
        int rc = eng_parse_fen(fen_more_errors[i].text, &p, err, sizeof err);

        if (rc != ENG_EFEN || strstr(err, fen_more_errors[i].expect) == NULL)
            print_error("\"%s\": rc %d \"%s\"\n", fen_more_errors[i].text, rc, err);
        assert_int_equal(rc, ENG_EFEN);
        assert_non_null(strstr(err, fen_more_errors[i].expect));
    }
}

/* Tiny, zero-sized and absent message buffers are all safe. */
static void
test_fen_err_buffer(void **state)
{
    char small[8];
    char none[1] = {'z'};
    eng_pos p;

    (void)state;
    memset(small, 'z', sizeof small);
    assert_int_equal(eng_parse_fen("B:W33:B1", &p, small, sizeof small), ENG_EFEN);
    assert_int_equal(strlen(small), sizeof small - 1);
    assert_int_equal(eng_parse_fen("B:W33:B1", &p, none, 0), ENG_EFEN);
    assert_int_equal(none[0], 'z');
    assert_int_equal(eng_parse_fen("B:W33:B1", &p, NULL, 99), ENG_EFEN);
    assert_int_equal(eng_parse_fen(NULL, &p, small, sizeof small), ENG_EFEN);
    assert_int_equal(eng_parse_fen("B:W5:B1", &p, NULL, 0), 0);
}

/* Never a crash; success only with a valid position; failure always says
 * why. Run under ASan/UBSan by `make test` for out-of-bounds reads. */
static void
test_fen_fuzz(void **state)
{
    static eng_pos pos[NRANDOM];
    static char fens[NRANDOM + 2][ENG_FEN_MAX];
    const char *pool[NRANDOM + 2];
    char buf[FUZZ_MAX], err[96];
    rng r = {0x9E3779B9u};
    int i, n = random_positions(pos, NRANDOM), ok = 0;

    (void)state;
    for (i = 0; i < n; i++) {
        assert_int_equal(eng_format_fen(&pos[i], fens[i], sizeof fens[i]), 0);
        pool[i] = fens[i];
    }
    pool[n] = example_fen;
    pool[n + 1] = "  W : B 1-4 , K 5 - 8 : W K21-24,29 . ";
    for (i = 0; i < NFUZZ; i++) {
        eng_pos p;
        int rc;

        fuzz_string(&r, buf, pool, n + 2);
        err[0] = '\0';
        rc = eng_parse_fen(buf, &p, err, sizeof err);
        if (rc == 0) {
            assert_int_equal(eng_validate(&p, NULL, 0), 0);
            assert_roundtrip(&p);
            ok++;
        } else {
            if (rc != ENG_EFEN || err[0] == '\0')
                print_error("input \"%s\": rc %d, message \"%s\"\n", buf, rc, err);
            assert_int_equal(rc, ENG_EFEN);
            assert_true(err[0] != '\0');
        }
    }
    /* The mutations must leave some inputs valid, or the success path of
     * the parser went untested. */
    assert_true(ok > NFUZZ / 100);
}

static void
test_format_fen_space(void **state)
{
    eng_pos p;
    char buf[ENG_FEN_MAX];
    size_t len;

    (void)state;
    assert_fen_ok(example_fen, &p);
    len = strlen(example_fen);
    assert_int_equal(eng_format_fen(&p, buf, len + 1), 0);
    assert_string_equal(buf, example_fen);
    assert_int_equal(eng_format_fen(&p, buf, len), ENG_ENOSPACE);
    assert_int_equal(strlen(buf), len - 1); /* cut short but terminated */
    assert_int_equal(eng_format_fen(&p, buf, 0), ENG_ENOSPACE);
    assert_int_equal(eng_format_fen(&p, NULL, 0), ENG_ENOSPACE);
    /* The worst case: 24 pieces, all two-digit kings where possible. */
    assert_fen_ok("W:WK21-32:BK9-20", &p);
    assert_int_equal(eng_format_fen(&p, buf, sizeof buf), 0);
    assert_string_equal(buf, "W:WK21,K22,K23,K24,K25,K26,K27,K28,K29,K30,K31,K32"
                             ":BK9,K10,K11,K12,K13,K14,K15,K16,K17,K18,K19,K20");
}

static void
test_format_move(void **state)
{
    eng_move plain = {0, 10, 14, 0, {0}};
    eng_move jump = {SQ(20) | SQ(28), 14, 30, 2, {23, 30}};
    char buf[ENG_MOVE_STR_MAX];

    (void)state;
    assert_int_equal(eng_format_move(&plain, buf, sizeof buf), 0);
    assert_string_equal(buf, "11-15");
    assert_int_equal(eng_format_move(&jump, buf, sizeof buf), 0);
    assert_string_equal(buf, "15x24x31");
    assert_int_equal(eng_format_move(&jump, buf, 9), 0);
    assert_int_equal(eng_format_move(&jump, buf, 8), ENG_ENOSPACE);
    assert_string_equal(buf, "15x24x3");
    assert_int_equal(eng_format_move(&plain, NULL, 0), ENG_ENOSPACE);
}

/* Every legal move of every sampled position formats and parses back,
 * in full and by its origin and destination alone when that names it
 * unambiguously. */
static void
test_move_roundtrip(void **state)
{
    static eng_pos pos[NRANDOM];
    eng_movelist list;
    char text[ENG_MOVE_STR_MAX], err[4096];
    int i, j, k, n = random_positions(pos, NRANDOM), checked = 0;

    (void)state;
    for (i = 0; i < n; i++) {
        int nm = eng_generate(&pos[i], &list, ENG_DUPS_MERGE);

        assert_true(nm >= 0);
        for (j = 0; j < nm; j++) {
            const eng_move *m = &list.m[j];
            eng_move back;
            int rc, unique = 1;

            assert_int_equal(eng_format_move(m, text, sizeof text), 0);
            rc = eng_parse_move(&pos[i], text, &back, err, sizeof err);
            if (rc != 0)
                print_error("\"%s\": %s\n", text, err);
            assert_int_equal(rc, 0);
            assert_int_equal(back.from, m->from);
            assert_int_equal(back.to, m->to);
            assert_int_equal(back.captured, m->captured);
            checked++;
            if (m->njumps < 2)
                continue;
            /* The short form "fromxto" is unique exactly when no other
             * merged move shares from and to. */
            for (k = 0; k < nm; k++)
                if (k != j && list.m[k].from == m->from && list.m[k].to == m->to)
                    unique = 0;
            snprintf(text, sizeof text, "%dx%d", m->from + 1, m->to + 1);
            rc = eng_parse_move(&pos[i], text, &back, err, sizeof err);
            assert_int_equal(rc, unique ? 0 : ENG_EAMBIG);
            if (unique)
                assert_int_equal(back.captured, m->captured);
        }
    }
    assert_true(checked > NRANDOM);
}

/* Black man on 9 jumps 14 and 23: 9x18x27, also written 9x27. */
static void
test_move_short_form(void **state)
{
    eng_pos p;

    (void)state;
    assert_fen_ok("B:W14,23:B9", &p);
    assert_move(&p, "9x18x27", 9, 27, SQ(14) | SQ(23));
    assert_move(&p, "9x27", 9, 27, SQ(14) | SQ(23));
    assert_move(&p, "  9x27\n", 9, 27, SQ(14) | SQ(23));
    /* A prefix of the route stops short of where the move ends. */
    assert_move_fails(&p, "9x18", ENG_EILLEGAL, "illegal move 9x18; legal moves: 9x18x27");
    assert_move_fails(&p, "9-13", ENG_EILLEGAL, "captures are compulsory");
    assert_move_fails(&p, "9x23x27", ENG_EILLEGAL, "illegal move 9x23x27");
}

/*
 * Black man on 2 (row 0, column 3) with white men on 6, 7 (row 1,
 * columns 2, 4) and 14, 15 (row 3, columns 2, 4). It can jump 6 to 9
 * then 14 to 18, or 7 to 11 then 15 to 18; from 18 (row 4, column 3)
 * squares 22 and 23 are empty so both routes stop there. Same origin and
 * destination, different captures: "2x18" is ambiguous.
 */
static void
test_move_ambiguous(void **state)
{
    eng_pos p;
    eng_movelist list;

    (void)state;
    assert_fen_ok("B:W6,7,14,15:B2", &p);
    assert_int_equal(eng_generate(&p, &list, ENG_DUPS_KEEP), 2);
    assert_move_fails(&p, "2x18", ENG_EAMBIG, "ambiguous move 2x18");
    assert_move_fails(&p, "2x18", ENG_EAMBIG, " 2x9x18");
    assert_move_fails(&p, "2x18", ENG_EAMBIG, " 2x11x18");
    assert_move(&p, "2x9x18", 2, 18, SQ(6) | SQ(14));
    assert_move(&p, "2x11x18", 2, 18, SQ(7) | SQ(15));
    assert_move_fails(&p, "2x9", ENG_EILLEGAL, "legal moves: 2x");
}

/*
 * White king on 10 (row 2, column 3), black men on 14, 15, 22, 23 around
 * it. The king jumps the square of four either way round and comes back
 * to 10 (its origin is empty during its own jump): 10x19x26x17x10 and
 * 10x17x26x19x10 capture the same pieces, so they are one move and any
 * short form of it is not ambiguous.
 */
static void
test_move_king_cycle(void **state)
{
    eng_pos p;
    eng_movelist list;
    const uint32_t all = SQ(14) | SQ(15) | SQ(22) | SQ(23);

    (void)state;
    assert_fen_ok("W:WK10:B14,15,22,23", &p);
    assert_int_equal(eng_generate(&p, &list, ENG_DUPS_KEEP), 2);
    assert_int_equal(eng_generate(&p, &list, ENG_DUPS_MERGE), 1);
    assert_move(&p, "10x10", 10, 10, all);
    assert_move(&p, "10x26x10", 10, 10, all);
    assert_move(&p, "10x19x10", 10, 10, all);
    assert_move(&p, "10x17x26x19x10", 10, 10, all);
    assert_move(&p, "10x19x26x17x10", 10, 10, all);
    assert_move_fails(&p, "10x19x17x26x10", ENG_EILLEGAL, "illegal move");
}

static void
test_move_illegal(void **state)
{
    eng_pos p;
    static const char *const start_moves[] = {" 9-13",  " 9-14",  " 10-14", " 10-15",
                                              " 11-15", " 11-16", " 12-16"};
    char err[256];
    eng_move m;
    size_t i;

    (void)state;
    eng_start(&p);
    assert_move(&p, "11-16", 11, 16, 0);
    assert_int_equal(eng_parse_move(&p, "9-15", &m, err, sizeof err), ENG_EILLEGAL);
    assert_non_null(strstr(err, "illegal move 9-15; legal moves:"));
    for (i = 0; i < sizeof start_moves / sizeof start_moves[0]; i++)
        assert_non_null(strstr(err, start_moves[i]));
    assert_null(strstr(err, "compulsory"));
    assert_move_fails(&p, "22-18", ENG_EILLEGAL, "legal moves: ");
    assert_move_fails(&p, "15x24", ENG_EILLEGAL, "illegal move 15x24");
    /* A short message buffer is cut, not overrun. */
    assert_int_equal(eng_parse_move(&p, "9-15", &m, err, 10), ENG_EILLEGAL);
    assert_int_equal(strlen(err), 9);
    assert_int_equal(eng_parse_move(&p, "9-15", &m, NULL, 0), ENG_EILLEGAL);
    /* No pieces, no moves: the message says so. */
    assert_fen_ok("B:W5:B", &p);
    assert_move_fails(&p, "9-13", ENG_EILLEGAL, "no legal moves");
}

static void
test_move_malformed(void **state)
{
    static const fen_case bad[] = {
        {"", "empty move text"},
        {"  \t", "empty move text"},
        {"11", "only one square at offset 0"},
        {"11-", "expected a square number at offset 3, found end of input"},
        {"11-15x19", "'-' and 'x' mixed in one move at offset 5"},
        {"1x2-3", "'-' and 'x' mixed"},
        {"11-15-19", "a plain move names two squares; third square at offset 6"},
        {"11-33", "square 33 out of range 1..32 at offset 3"},
        {"0-4", "square 0 out of range"},
        {"a-b", "unknown character 'a' at offset 0"},
        {"11X15", "unknown character 'X' at offset 2"},
        {"11--15", "unexpected character '-' at offset 3"},
        {"11-15 16", "unexpected character '1' at offset 6; expected end of move text"},
        {"11 - 15", "unexpected character '-' at offset 3; expected end of move text"},
        {"99999999999999999999999-1", "square 9999999999... out of range"},
        {"1x2x3x4x5x6x7x8x9x10x11x12x13x14", "more than 13 squares at offset 30"},
    };
    eng_pos p;
    eng_move m;
    size_t i;

    (void)state;
    eng_start(&p);
    for (i = 0; i < sizeof bad / sizeof bad[0]; i++)
        assert_move_fails(&p, bad[i].text, ENG_EMOVE, bad[i].expect);
    assert_int_equal(eng_parse_move(&p, NULL, &m, NULL, 0), ENG_EMOVE);
}

static void
test_strerror(void **state)
{
    static const int codes[] = {ENG_OK,     ENG_EFEN,      ENG_EMOVE,   ENG_EILLEGAL,
                                ENG_EAMBIG, ENG_EOVERFLOW, ENG_ENOSPACE};
    size_t i, j, n = sizeof codes / sizeof codes[0];

    (void)state;
    for (i = 0; i < n; i++) {
        assert_non_null(eng_strerror(codes[i]));
        assert_string_not_equal(eng_strerror(codes[i]), "unknown error");
        for (j = 0; j < i; j++)
            assert_string_not_equal(eng_strerror(codes[i]), eng_strerror(codes[j]));
    }
    assert_string_equal(eng_strerror(-99), "unknown error");
    assert_string_equal(eng_strerror(7), "unknown error");
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_example_fen),
        cmocka_unit_test(test_ranges_and_spaces),
        cmocka_unit_test(test_canonical_roundtrip),
        cmocka_unit_test(test_random_roundtrip),
        cmocka_unit_test(test_fen_errors),
        cmocka_unit_test(test_fen_err_buffer),
        cmocka_unit_test(test_fen_fuzz),
        cmocka_unit_test(test_format_fen_space),
        cmocka_unit_test(test_format_move),
        cmocka_unit_test(test_move_roundtrip),
        cmocka_unit_test(test_move_short_form),
        cmocka_unit_test(test_move_ambiguous),
        cmocka_unit_test(test_move_king_cycle),
        cmocka_unit_test(test_move_illegal),
        cmocka_unit_test(test_move_malformed),
        cmocka_unit_test(test_strerror),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
