/*
 * test_prover_check.c - the independent proof checker (prover/check.h)
 * on proofs built by hand into temporary stores.
 *
 * Valid proofs are built here by means that share nothing with the
 * checker and rest on the databases' values:
 *   - win proofs of 5-piece positions with the database cut to 4 pieces,
 *     found by a tiny depth-limited AND/OR search that plays into the
 *     4-piece databases (every record is also compared with the 5-piece
 *     database value of its position);
 *   - a draw proof of 2 kings against 2 kings with the database cut to 3
 *     pieces: every position of the closed set gets the record its
 *     4-piece database value justifies, and the set is shown to contain
 *     cycles (a topological sort of it does not finish).
 * The checker must accept them with exact counts (positions, leaves,
 * longest win line). Damaged proofs - a losing move, a missing reply, a
 * weaker bound, a cyclic win proof, an illegal move (written with raw
 * LMDB calls, since pst_put_many refuses it), nothing stored - must be
 * rejected at the right position, and a damaged record or database
 * block must stop the check with PST_ECORRUPT instead of producing a
 * verdict.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <lmdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "egdb/egdb.h"
#include "engine/engine.h"
#include "engine/value.h"
#include "prover/check.h"
#include "prover/store.h"
#include "tests/test_util.h"

/* ---- constants ---------------------------------------------------------- */

#define WIN_MAX_PLIES 7 /* the tiny solver's depth limit */
#define WIN_CASES 12    /* win proofs collected */
#define WIN_TRIES 20000 /* random 5-piece positions tried at most */
#define WIN_DEEP 3      /* a "deep" case: the proof is at least this long */

/* The hand-made shuttle of test_win_cycle: White's lone king can only go
 * 4-8-4 (3, 11, 12 and 15 are blocked), Black's king goes 29-25-29. */
#define SHUTTLE_FEN "B:WK4:B3,11,12,15,K29"

/* ---- types ---------------------------------------------------------------- */

/* A set of positions with an index each (open addressing), for the
 * builders and the cycle test: the test's own, not the checker's. */
typedef struct pset {
    eng_pos *pos;
    int *idx; /* -1: free */
    size_t cap, n;
} pset;

/* A growing list of store records. */
typedef struct items {
    pst_item *v;
    size_t n, cap;
} items;

/* One win proof found by the tiny solver. */
typedef struct wcase {
    eng_pos root;
    int dist;                 /* plies of the shortest forced win, = longest line of the proof */
    items rec;                /* the proof's records */
    uint64_t nint, ndb, nend; /* distinct stored positions, database and terminal leaves */
} wcase;

typedef struct fixture {
    egdb *db5, *db4, *db3; /* the 1-5 piece databases cut to 5, 4 and 3 pieces */
    wcase cases[WIN_CASES];
    int ncases;
} fixture;

/* A temporary store. */
typedef struct tstore {
    char dir[512];
    pst_env *st;
} tstore;

/* ---- helpers: positions and sets ------------------------------------------ */

static int
npieces(const eng_pos *p)
{
    return __builtin_popcount(p->bm | p->wm | p->bk | p->wk);
}

static uint64_t
rng_next(uint64_t *s)
{
    /* xorshift64*: seeded, the same on every machine */
    *s ^= *s >> 12;
    *s ^= *s << 25;
    *s ^= *s >> 27;
    return *s * 2685821657736338717ull;
}

static size_t
pset_hash(const eng_pos *p)
{
    uint64_t h = (uint64_t)p->bm * 0x9E3779B97F4A7C15ull;
    h ^= (uint64_t)p->wm * 0xC2B2AE3D27D4EB4Full;
    h ^= (uint64_t)p->bk * 0x165667B19E3779F9ull;
    h ^= (uint64_t)p->wk * 0x27D4EB2F165667C5ull;
    h ^= (uint64_t)p->stm + 1;
    return (size_t)(h ^ (h >> 31));
}

static size_t
pset_slot(const pset *s, const eng_pos *p)
{
    size_t m = s->cap - 1, i = pset_hash(p) & m;
    while (s->idx[i] >= 0 && !eng_equal(&s->pos[i], p))
        i = (i + 1) & m;
    return i;
}

/* The index of p, or -1. */
static int
pset_find(const pset *s, const eng_pos *p)
{
    return s->cap ? s->idx[pset_slot(s, p)] : -1;
}

/* Adds p (absent) with the next index, which it returns. */
static int
pset_add(pset *s, const eng_pos *p)
{
    if ((s->n + 1) * 2 > s->cap) {
        pset g = {NULL, NULL, s->cap ? s->cap * 2 : 1024, s->n};
        g.pos = malloc(g.cap * sizeof *g.pos);
        g.idx = malloc(g.cap * sizeof *g.idx);
        assert_non_null(g.pos);
        assert_non_null(g.idx);
        for (size_t i = 0; i < g.cap; i++)
            g.idx[i] = -1;
        for (size_t i = 0; i < s->cap; i++)
            if (s->idx[i] >= 0) {
                size_t j = pset_slot(&g, &s->pos[i]);
                g.pos[j] = s->pos[i];
                g.idx[j] = s->idx[i];
            }
        free(s->pos);
        free(s->idx);
        *s = g;
    }
    size_t i = pset_slot(s, p);
    s->pos[i] = *p;
    s->idx[i] = (int)s->n;
    return (int)s->n++;
}

static void
pset_free(pset *s)
{
    free(s->pos);
    free(s->idx);
    memset(s, 0, sizeof *s);
}

static void
items_push(items *l, const pst_item *it)
{
    if (l->n == l->cap) {
        l->cap = l->cap ? l->cap * 2 : 64;
        l->v = realloc(l->v, l->cap * sizeof *l->v);
        assert_non_null(l->v);
    }
    l->v[l->n++] = *it;
}

static pst_record
record(eng_bound b)
{
    pst_record r;
    memset(&r, 0, sizeof r);
    r.bound = b;
    r.win.from = PST_NOMOVE;
    r.draw.from = PST_NOMOVE;
    return r;
}

static eng_pos
fen(const char *s)
{
    eng_pos p;
    char err[256];
    if (eng_parse_fen(s, &p, err, sizeof err) != 0)
        fail_msg("bad FEN %s: %s", s, err);
    return p;
}

static void
fen_of(const eng_pos *p, char *buf)
{
    assert_int_equal(eng_format_fen(p, buf, ENG_FEN_MAX), 0);
}

/* The child of p by the legal move written as text. */
static eng_pos
after(const eng_pos *p, const char *mv, eng_move *m)
{
    eng_move mm;
    eng_pos c;
    char err[512];
    if (eng_parse_move(p, mv, &mm, err, sizeof err) != 0)
        fail_msg("move %s: %s", mv, err);
    eng_make(p, &mm, &c);
    if (m)
        *m = mm;
    return c;
}

/* A database value for the side to move, as an outcome. */
static int
db_outcome(const egdb *db, const eng_pos *p)
{
    int v = egdb_probe(db, p);
    if (v == EGDB_WIN)
        return ENG_WIN;
    if (v == EGDB_LOSS)
        return ENG_LOSS;
    if (v == EGDB_DRAW)
        return ENG_DRAW;
    fail_msg("egdb_probe: %s", egdb_strerror(v));
    return ENG_DRAW;
}

/* ---- helpers: temporary stores -------------------------------------------- */

static void
store_new(tstore *s)
{
    char err[512];
    assert_non_null(test_tmpdir(s->dir, sizeof s->dir, "test_prover_check"));
    if (pst_open(s->dir, 0, &s->st, err, sizeof err) != 0)
        fail_msg("pst_open %s: %s", s->dir, err);
}

static void
store_put(tstore *s, const pst_item *v, size_t n)
{
    char err[512];
    if (pst_put_many(s->st, v, n, err, sizeof err) != 0)
        fail_msg("pst_put_many: %s", err);
}

static void
store_free(tstore *s)
{
    char path[600];
    pst_close(s->st);
    s->st = NULL;
    snprintf(path, sizeof path, "%s/data.mdb", s->dir);
    remove(path);
    snprintf(path, sizeof path, "%s/lock.mdb", s->dir);
    remove(path);
    remove(s->dir);
}

static void
le32(uint8_t *b, uint32_t x)
{
    b[0] = (uint8_t)x;
    b[1] = (uint8_t)(x >> 8);
    b[2] = (uint8_t)(x >> 16);
    b[3] = (uint8_t)(x >> 24);
}

/*
 * raw_put - writes one record with plain LMDB calls, bypassing
 * pst_put_many's checks, as a damaged or forged store would hold it
 * (store.h, KEYS AND FILE FORMAT). r must be in the canonical
 * orientation (Black to move). flip_byte >= 0 flips bits of that value
 * byte after encoding (a damaged record). The store is closed around the
 * write: LMDB forbids opening one environment twice in a process.
 */
static void
raw_put(tstore *s, const eng_pos *canon, const pst_record *r, int flip_byte)
{
    char err[512];
    MDB_env *env;
    MDB_txn *txn;
    MDB_dbi dbi;
    assert_int_equal(canon->stm, ENG_BLACK);
    pst_close(s->st);
    s->st = NULL;
    assert_int_equal(mdb_env_create(&env), 0);
    assert_int_equal(mdb_env_set_maxdbs(env, 8), 0);
    assert_int_equal(mdb_env_set_mapsize(env, (size_t)1 << 30), 0);
    assert_int_equal(mdb_env_open(env, s->dir, MDB_NOTLS, 0644), 0);
    assert_int_equal(mdb_txn_begin(env, NULL, 0, &txn), 0);
    assert_int_equal(mdb_dbi_open(txn, "nodes", 0, &dbi), 0);
    uint8_t key[16], val[32];
    le32(key, canon->bm);
    le32(key + 4, canon->wm);
    le32(key + 8, canon->bk);
    le32(key + 12, canon->wk);
    pst_encode(key, r, val);
    if (flip_byte >= 0)
        val[flip_byte] ^= 0x41;
    MDB_val k = {sizeof key, key}, v = {sizeof val, val};
    assert_int_equal(mdb_put(txn, dbi, &k, &v, 0), 0);
    assert_int_equal(mdb_txn_commit(txn), 0);
    mdb_env_close(env);
    if (pst_open(s->dir, 0, &s->st, err, sizeof err) != 0)
        fail_msg("pst_open again: %s", err);
}

/* Checks root and expects a verdict (no error). */
static pchk_result
check(tstore *s, const egdb *db, const eng_pos *root)
{
    pchk_result r;
    char err[512] = "";
    int rc = pchk_check(s->st, db, root, &r, err, sizeof err);
    if (rc != 0)
        fail_msg("pchk_check: %s (%s)", err, pst_strerror(rc));
    return r;
}

/* Expects an invalid verdict at position `where` whose reason contains
 * every given fragment. */
static void
expect_invalid(const pchk_result *r, const char *where, const char *frag1, const char *frag2)
{
    if (r->status != PCHK_INVALID)
        fail_msg("expected an invalid proof failing at %s, got status %d", where, r->status);
    if (strcmp(r->where, where) != 0)
        fail_msg("failing position %s (%s), expected %s", r->where, r->why, where);
    if (frag1 && !strstr(r->why, frag1))
        fail_msg("reason '%s' lacks '%s'", r->why, frag1);
    if (frag2 && !strstr(r->why, frag2))
        fail_msg("reason '%s' lacks '%s'", r->why, frag2);
}

/* ---- the tiny win solver (test only) -------------------------------------- */

/*
 * A leaf for a win proof of x with the database cut to 4 pieces: no move
 * (lost for the side to move) or at most 4 pieces (the 4-piece database,
 * which plays out captures). *won: whether x wins there.
 */
static int
win_leaf(const egdb *db4, const eng_pos *p, int x, int *won)
{
    if (eng_count_moves(p, ENG_DUPS_MERGE) == 0) {
        *won = p->stm != x;
        return 1;
    }
    if (npieces(p) <= 4) {
        int v = db_outcome(db4, p);
        *won = (p->stm == x ? v : -v) == ENG_WIN;
        return 1;
    }
    return 0;
}

/* Whether x wins from p within d plies, by plain AND/OR search. */
static int
tiny_wins(const egdb *db4, const eng_pos *p, int x, int d)
{
    int won;
    if (win_leaf(db4, p, x, &won))
        return won;
    if (d == 0)
        return 0;
    eng_movelist l;
    int n = eng_generate(p, &l, ENG_DUPS_MERGE);
    for (int i = 0; i < n; i++) {
        eng_pos c;
        eng_make(p, &l.m[i], &c);
        int r = tiny_wins(db4, &c, x, d - 1);
        if (p->stm == x && r)
            return 1;
        if (p->stm != x && !r)
            return 0;
    }
    return p->stm != x;
}

/* The fewest plies in which x forces a win from p (at most maxd), or -1. */
static int
tiny_dist(const egdb *db4, const eng_pos *p, int x, int maxd)
{
    for (int d = 0; d <= maxd; d++)
        if (tiny_wins(db4, p, x, d))
            return d;
    return -1;
}

/*
 * Writes the records of x's win from p in d plies (d = tiny_dist): where
 * x moves, WW with a move to a child won in d - 1 plies (the shortest
 * win, so the proof's lines strictly shorten and it cannot cycle); where
 * the other side moves, LL and every reply, each a child won in at most
 * d - 1 plies. Every record is compared with the 5-piece database.
 */
static void
emit_win(const fixture *f, wcase *w, pset *seen, const eng_pos *p, int x, int d)
{
    int won;
    if (pset_find(seen, p) >= 0)
        return;
    pset_add(seen, p);
    if (win_leaf(f->db4, p, x, &won)) {
        assert_true(won);
        if (eng_count_moves(p, ENG_DUPS_MERGE) == 0)
            w->nend++;
        else
            w->ndb++;
        return;
    }
    assert_true(d >= 1);
    w->nint++;
    pst_item it = {*p, record(p->stm == x ? ENG_WW : ENG_LL)};
    it.rec.length = (uint16_t)d;
    /* the truth: the full database agrees with every record */
    assert_int_equal(db_outcome(f->db5, p), p->stm == x ? ENG_WIN : ENG_LOSS);
    eng_movelist l;
    int n = eng_generate(p, &l, ENG_DUPS_MERGE);
    if (p->stm == x) {
        for (int i = 0; i < n; i++) {
            eng_pos c;
            eng_make(p, &l.m[i], &c);
            if (tiny_wins(f->db4, &c, x, d - 1)) {
                it.rec.win = pst_move_of(&l.m[i]);
                items_push(&w->rec, &it);
                emit_win(f, w, seen, &c, x, d - 1);
                return;
            }
        }
        fail_msg("no winning move at distance %d", d);
    }
    items_push(&w->rec, &it);
    for (int i = 0; i < n; i++) {
        eng_pos c;
        eng_make(p, &l.m[i], &c);
        int dc = tiny_dist(f->db4, &c, x, d - 1);
        assert_true(dc >= 0);
        emit_win(f, w, seen, &c, x, dc);
    }
}

/* A random valid 5-piece position (men off their crowning rows). */
static int
random_five(uint64_t *rng, eng_pos *p)
{
    memset(p, 0, sizeof *p);
    uint32_t used = 0;
    int nb = 2 + (int)(rng_next(rng) % 2); /* 3 against 2: both sides have choices */
    for (int i = 0; i < 5; i++) {
        int black = i < nb, sq;
        do
            sq = (int)(rng_next(rng) % 32);
        while (used & (1u << sq));
        used |= 1u << sq;
        int king = rng_next(rng) % 3 == 0;
        uint32_t b = 1u << sq;
        if (!king && (b & (black ? ENG_ROW7 : ENG_ROW0)))
            king = 1;
        if (black)
            *(king ? &p->bk : &p->bm) |= b;
        else
            *(king ? &p->wk : &p->wm) |= b;
    }
    p->stm = (int)(rng_next(rng) & 1);
    return eng_validate(p, NULL, 0);
}

/*
 * Collects win proofs: random 5-piece positions the 5-piece database
 * calls won for the side to move and the tiny solver wins within
 * WIN_MAX_PLIES; at least half of them deep (the damage tests need inner
 * positions), the shallow ones limited to the other half.
 */
static void
find_win_cases(fixture *f)
{
    uint64_t rng = 0x5EED0C4Eull;
    int want = WIN_CASES, deep = 0;
    for (int t = 0; t < WIN_TRIES && f->ncases < want; t++) {
        eng_pos p;
        if (random_five(&rng, &p) != 0 || eng_count_moves(&p, ENG_DUPS_MERGE) == 0)
            continue;
        if (db_outcome(f->db5, &p) != ENG_WIN)
            continue;
        int d = tiny_dist(f->db4, &p, p.stm, WIN_MAX_PLIES);
        if (d < 1)
            continue;
        /* keep room for the deep cases the damage tests need */
        if (d < WIN_DEEP && f->ncases - deep >= want - want / 2)
            continue;
        wcase *w = &f->cases[f->ncases++];
        memset(w, 0, sizeof *w);
        w->root = p;
        w->dist = d;
        pset seen = {0};
        emit_win(f, w, &seen, &p, p.stm, d);
        pset_free(&seen);
        if (d >= WIN_DEEP)
            deep++;
    }
}

/* A case whose proof is at least WIN_DEEP plies long. */
static const wcase *
deep_case(const fixture *f, int k)
{
    for (int i = 0; i < f->ncases; i++)
        if (f->cases[i].dist >= WIN_DEEP && k-- == 0)
            return &f->cases[i];
    fail_msg("not enough deep win cases");
    return NULL;
}

/* ---- fixture ---------------------------------------------------------------- */

static int
setup(void **state)
{
    const char *dir = test_db_dir();
    char err[512];
    if (!dir)
        return -1;
    fixture *f = calloc(1, sizeof *f);
    if (!f)
        return -1;
    if (egdb_open(dir, 5, (size_t)64 << 20, &f->db5, err, sizeof err) != 0 ||
        egdb_open(dir, 4, (size_t)16 << 20, &f->db4, err, sizeof err) != 0 ||
        egdb_open(dir, 3, (size_t)4 << 20, &f->db3, err, sizeof err) != 0) {
        fprintf(stderr, "egdb_open %s: %s\n", dir, err);
        return -1;
    }
    if (egdb_max_pieces(f->db5) != 5 || egdb_max_pieces(f->db4) != 4 ||
        egdb_max_pieces(f->db3) != 3) {
        fprintf(stderr, "%s: expected the 1-5 piece databases\n", dir);
        return -1;
    }
    /* the win proofs most tests use: a few hundred milliseconds */
    find_win_cases(f);
    *state = f;
    return 0;
}

static int
teardown(void **state)
{
    fixture *f = *state;
    if (!f)
        return 0; /* setup failed */
    for (int i = 0; i < f->ncases; i++)
        free(f->cases[i].rec.v);
    egdb_close(f->db5);
    egdb_close(f->db4);
    egdb_close(f->db3);
    free(f);
    return 0;
}

/* ---- valid win proofs ------------------------------------------------------- */

/*
 * Found by the tiny solver, accepted by the checker with exact figures: a
 * WW root is two proofs over the same positions (the win, and "at least
 * a draw" by the win move, as the record has no draw move), so every
 * count is twice the proof's; the longest line is the shortest forced
 * win, since each move shortens the win by exactly one ply.
 */
static void
test_win_proofs_valid(void **state)
{
    fixture *f = *state;
    assert_int_equal(f->ncases, WIN_CASES);
    for (int i = 0; i < f->ncases; i++) {
        const wcase *w = &f->cases[i];
        tstore s;
        store_new(&s);
        store_put(&s, w->rec.v, w->rec.n);
        pchk_result r = check(&s, f->db4, &w->root);
        char rf[ENG_FEN_MAX];
        fen_of(&w->root, rf);
        if (r.status != PCHK_VALID)
            fail_msg("%s: %s at %s", rf, r.why, r.where);
        assert_int_equal(r.bound, ENG_WW);
        assert_int_equal(r.positions, 2 * w->nint);
        assert_int_equal(r.leaves_db, 2 * w->ndb);
        assert_int_equal(r.leaves_end, 2 * w->nend);
        assert_int_equal(r.longest_win, w->dist);
        store_free(&s);
    }
}

/* The other side of the same proofs: a position where the loser moves
 * (LL) implies "the other side wins" and "at least draws". */
static void
test_loss_root_valid(void **state)
{
    fixture *f = *state;
    int checked = 0;
    for (int i = 0; i < f->ncases; i++) {
        const wcase *w = &f->cases[i];
        tstore s;
        store_new(&s);
        store_put(&s, w->rec.v, w->rec.n);
        for (size_t k = 0; k < w->rec.n; k++) {
            const pst_item *it = &w->rec.v[k];
            if (it->rec.bound != ENG_LL)
                continue;
            pchk_result r = check(&s, f->db4, &it->pos);
            assert_int_equal(r.status, PCHK_VALID);
            assert_int_equal(r.bound, ENG_LL);
            assert_int_equal(r.longest_win, it->rec.length);
            assert_true(r.positions >= 2);
            checked++;
        }
        store_free(&s);
    }
    assert_true(checked >= 1);
}

/* With the whole 5-piece database the roots are leaves: the database
 * decides, the store's records below are not even read; and a record
 * the database contradicts is refused. */
static void
test_database_root(void **state)
{
    fixture *f = *state;
    const wcase *w = &f->cases[0];
    tstore s;
    store_new(&s);
    store_put(&s, w->rec.v, 1); /* the root's record only */
    pchk_result r = check(&s, f->db5, &w->root);
    assert_int_equal(r.status, PCHK_VALID);
    assert_int_equal(r.positions, 0);
    assert_int_equal(r.leaves_db, 2);
    assert_int_equal(r.leaves_end, 0);
    assert_int_equal(r.longest_win, 0);
    /* and with only 4 pieces the same lone record proves nothing */
    if (w->nint > 1) {
        r = check(&s, f->db4, &w->root);
        assert_int_equal(r.status, PCHK_INVALID);
        assert_non_null(strstr(r.why, "no stored proof"));
    }
    store_free(&s);

    /* A record that the database contradicts proves nothing: a drawn
     * 2-v-2 king position stored as a win. */
    eng_pos p = fen("B:WK10,K19:BK1,K3");
    eng_movelist l;
    assert_int_equal(db_outcome(f->db4, &p), ENG_DRAW);
    assert_true(eng_generate(&p, &l, ENG_DUPS_MERGE) > 0);
    pst_item it = {p, record(ENG_WW)};
    it.rec.win = pst_move_of(&l.m[0]);
    store_new(&s);
    store_put(&s, &it, 1);
    r = check(&s, f->db4, &p);
    expect_invalid(&r, "B:WK10,K19:BK1,K3", "database values this position as a draw for Black",
                   NULL);
    store_free(&s);

    /* A proof state whose root the databases hold has no record for it:
     * the database leaf is its proof (pchk_db_root), for `proof check
     * --state` and the frontier's summary alike; beyond the databases
     * nothing changes. */
    pchk_result n = {.status = PCHK_NOTHING};
    assert_int_equal(pchk_db_root(f->db4, &p, &n, NULL, 0), 1);
    assert_int_equal(n.status, PCHK_VALID);
    assert_int_equal(n.bound, ENG_DD);
    assert_int_equal(n.leaves_db, 1);
    pchk_result m = {.status = PCHK_NOTHING};
    assert_int_equal(pchk_db_root(f->db4, &w->root, &m, NULL, 0), eng_pieces(&w->root) <= 4);
    assert_int_equal(pchk_db_root(NULL, &p, &m, NULL, 0), 0);
    pchk_result v = {.status = PCHK_VALID, .bound = ENG_LW};
    assert_int_equal(pchk_db_root(f->db4, &p, &v, NULL, 0), 0); /* a verdict stands */
    assert_int_equal(v.bound, ENG_LW);
}

/* ---- a draw proof with cycles ----------------------------------------------- */

typedef struct draw_set {
    items rec;     /* one record per position of the union of both proofs */
    pset recorded; /* their positions */
    /* per proof (x = Black, White): stored positions and leaves, counted
     * the way the checker walks them */
    uint64_t nint[2], ndb[2], nend[2];
    pset graph;   /* Black's proof: its stored positions, by index */
    int *kid;     /* Black's proof: children (stored ones) of each, CSR */
    size_t *koff; /* offsets into kid, graph.n + 1 */
} draw_set;

/* The record of a position of the 2-v-2 king ending that its database
 * value justifies: DD with a move that keeps the draw; DW (a win is more
 * than the set needs) with a move that keeps at least a draw; LD for a
 * loss. No record claims a win, so no win proof is owed anywhere. */
static pst_item
draw_record(const egdb *db5, const eng_pos *p)
{
    int v = db_outcome(db5, p);
    pst_item it = {*p, record(v == ENG_DRAW ? ENG_DD : v == ENG_WIN ? ENG_DW : ENG_LD)};
    if (v == ENG_LOSS)
        return it;
    eng_movelist l;
    int n = eng_generate(p, &l, ENG_DUPS_MERGE);
    for (int i = 0; i < n; i++) {
        eng_pos c;
        eng_make(p, &l.m[i], &c);
        int cv = -db_outcome(db5, &c);
        if (cv == v || (v == ENG_WIN && cv >= ENG_DRAW)) {
            it.rec.draw = pst_move_of(&l.m[i]);
            return it;
        }
    }
    fail_msg("no move keeps the value");
    return it;
}

static int
draw_leaf(const eng_pos *p)
{
    return eng_count_moves(p, ENG_DUPS_MERGE) == 0 || npieces(p) <= 3;
}

/*
 * The children of a stored position in the proof of x: x's draw move or
 * every legal move of the other side. Records are made for the canonical
 * position (Black to move), as the store keeps them, so that a position
 * and its colour-flipped twin share one record and one move: the move of
 * a White-to-move position is its twin's, played on the twin and flipped
 * back. Returns the number of children.
 */
static int
draw_children(const draw_set *d, const eng_pos *p, int x, eng_pos *kids)
{
    eng_movelist l;
    if (p->stm == x) {
        eng_pos c = eng_canonical(p), cc;
        const pst_item *it = &d->rec.v[pset_find(&d->recorded, &c)];
        eng_move m;
        assert_int_equal(pst_move_find(&c, &it->rec.draw, &m), 0);
        eng_make(&c, &m, &cc);
        kids[0] = p->stm == ENG_BLACK ? cc : eng_flip(&cc);
        return 1;
    }
    int n = eng_generate(p, &l, ENG_DUPS_MERGE);
    for (int i = 0; i < n; i++)
        eng_make(p, &l.m[i], &kids[i]);
    return n;
}

/*
 * Builds the proofs of "x at least draws" for both x from root, breadth
 * first: the closed set of each, the union's records, and Black's proof
 * as a graph for the cycle check.
 */
static void
build_draw_set(const fixture *f, const eng_pos *root, draw_set *d)
{
    memset(d, 0, sizeof *d);
    eng_pos *kids = malloc(ENG_MAX_MOVES * sizeof *kids);
    assert_non_null(kids);
    for (int x = 0; x < 2; x++) {
        pset seen = {0};
        eng_pos *queue = NULL;
        size_t qn = 0, qcap = 0, qh = 0;
        pset_add(&seen, root);
        queue = malloc(sizeof *queue * (qcap = 1024));
        queue[qn++] = *root;
        while (qh < qn) {
            eng_pos p = queue[qh++];
            if (draw_leaf(&p)) {
                int v =
                    eng_count_moves(&p, ENG_DUPS_MERGE) == 0 ? ENG_LOSS : db_outcome(f->db3, &p);
                assert_true((p.stm == x ? v : -v) >= ENG_DRAW);
                if (eng_count_moves(&p, ENG_DUPS_MERGE) == 0)
                    d->nend[x]++;
                else
                    d->ndb[x]++;
                continue;
            }
            d->nint[x]++;
            eng_pos c = eng_canonical(&p);
            if (pset_find(&d->recorded, &c) < 0) {
                pst_item it = draw_record(f->db5, &c);
                pset_add(&d->recorded, &c);
                items_push(&d->rec, &it);
            }
            if (x == ENG_BLACK)
                pset_add(&d->graph, &p); /* indices in BFS order */
            int n = draw_children(d, &p, x, kids);
            for (int i = 0; i < n; i++) {
                if (pset_find(&seen, &kids[i]) >= 0)
                    continue;
                pset_add(&seen, &kids[i]);
                if (qn == qcap)
                    queue = realloc(queue, sizeof *queue * (qcap *= 2));
                queue[qn++] = kids[i];
            }
        }
        free(queue);
        pset_free(&seen);
    }
    /* Black's proof as a graph over its stored positions. */
    size_t n = d->graph.n, ne = 0, cap = n * 4 + 16;
    eng_pos *byidx = malloc(n * sizeof *byidx);
    for (size_t i = 0; i < d->graph.cap; i++)
        if (d->graph.idx[i] >= 0)
            byidx[d->graph.idx[i]] = d->graph.pos[i];
    d->koff = malloc((n + 1) * sizeof *d->koff);
    d->kid = malloc(cap * sizeof *d->kid);
    for (size_t i = 0; i < n; i++) {
        d->koff[i] = ne;
        int k = draw_children(d, &byidx[i], ENG_BLACK, kids);
        for (int j = 0; j < k; j++) {
            int ci = pset_find(&d->graph, &kids[j]);
            if (ci < 0)
                continue; /* a leaf */
            if (ne == cap)
                d->kid = realloc(d->kid, (cap *= 2) * sizeof *d->kid);
            d->kid[ne++] = ci;
        }
    }
    d->koff[n] = ne;
    free(byidx);
    free(kids);
}

static void
draw_set_free(draw_set *d)
{
    free(d->rec.v);
    pset_free(&d->recorded);
    pset_free(&d->graph);
    free(d->kid);
    free(d->koff);
}

/* Kahn's topological sort: the number of positions it cannot order,
 * which is nonzero exactly when the graph has a cycle. */
static size_t
unordered(const draw_set *d)
{
    size_t n = d->graph.n, done = 0, qn = 0;
    int *indeg = calloc(n, sizeof *indeg), *queue = malloc(n * sizeof *queue);
    for (size_t e = 0; e < d->koff[n]; e++)
        indeg[d->kid[e]]++;
    for (size_t i = 0; i < n; i++)
        if (indeg[i] == 0)
            queue[qn++] = (int)i;
    while (done < qn) {
        int i = queue[done++];
        for (size_t e = d->koff[i]; e < d->koff[i + 1]; e++)
            if (--indeg[d->kid[e]] == 0)
                queue[qn++] = d->kid[e];
    }
    free(indeg);
    free(queue);
    return n - done;
}

/*
 * Two kings against two kings, drawn, with the database cut to 3 pieces:
 * the draw is kept only by moving round, so the proof has cycles; both
 * sides' proofs are accepted, with exact counts.
 */
/* The first drawn 2-v-2 king position (Black to move, no capture) of a
 * seeded scan. */
static eng_pos
draw_root(const fixture *f)
{
    eng_pos root;
    uint64_t rng = 0xD2A3ull;
    for (;;) {
        uint32_t used = 0, sq[4];
        for (int i = 0; i < 4; i++) {
            do
                sq[i] = (uint32_t)(rng_next(&rng) % 32);
            while (used & (1u << sq[i]));
            used |= 1u << sq[i];
        }
        root.bm = root.wm = 0;
        root.bk = (1u << sq[0]) | (1u << sq[1]);
        root.wk = (1u << sq[2]) | (1u << sq[3]);
        root.stm = ENG_BLACK;
        if (!eng_has_capture(&root) && db_outcome(f->db5, &root) == ENG_DRAW)
            return root;
    }
}

static void
test_draw_proof_with_cycles(void **state)
{
    fixture *f = *state;
    eng_pos root = draw_root(f);
    draw_set d;
    build_draw_set(f, &root, &d);
    assert_true(d.nint[0] > 100 && d.nint[1] > 100);
    assert_true(unordered(&d) > 0); /* Black's proof has cycles */

    tstore s;
    store_new(&s);
    store_put(&s, d.rec.v, d.rec.n);
    pchk_result r = check(&s, f->db3, &root);
    if (r.status != PCHK_VALID)
        fail_msg("%s at %s", r.why, r.where);
    assert_int_equal(r.bound, ENG_DD);
    assert_int_equal(r.positions, d.nint[0] + d.nint[1]);
    assert_int_equal(r.leaves_db, d.ndb[0] + d.ndb[1]);
    assert_int_equal(r.leaves_end, d.nend[0] + d.nend[1]);
    assert_int_equal(r.longest_win, -1);
    store_free(&s);
    draw_set_free(&d);
}

/* Copies src to dst whole; nonzero on failure. */
static int
copy_file(const char *src, const char *dst)
{
    FILE *in = fopen(src, "rb"), *out = in ? fopen(dst, "wb") : NULL;
    char buf[65536];
    size_t n;
    int rc = in && out ? 0 : -1;
    while (rc == 0 && (n = fread(buf, 1, sizeof buf, in)) > 0)
        if (fwrite(buf, 1, n, out) != n)
            rc = -1;
    if (in)
        fclose(in);
    if (out && fclose(out) != 0)
        rc = -1;
    return rc;
}

/* Flips bits of a file's last byte. */
static void
damage_last_byte(const char *path)
{
    FILE *fp = fopen(path, "r+b");
    assert_non_null(fp);
    assert_int_equal(fseek(fp, -1, SEEK_END), 0);
    int c = fgetc(fp);
    assert_true(c != EOF);
    assert_int_equal(fseek(fp, -1, SEEK_END), 0);
    assert_int_equal(fputc(c ^ 0x5A, fp), c ^ 0x5A);
    assert_int_equal(fclose(fp), 0);
}

/*
 * The 2-v-2 draw proof over a copy of the 1-3 piece databases whose two
 * king-only 3-piece files (2100, 1200: where the ending's captures lead)
 * have a damaged block: the probe of a leaf fails its checksum, and the
 * check stops with PST_ECORRUPT, never a value and never a verdict.
 */
static void
test_damaged_database(void **state)
{
    fixture *f = *state;
    char dir[512], src[1024], dst[1024], err[512] = "";
    const char *db = test_db_dir();
    assert_non_null(test_tmpdir(dir, sizeof dir, "test_prover_check_db"));
    /* every compressed slice of 1-3 pieces: "bkwkbmwm.rr.cwl" */
    DIR *d = opendir(db);
    assert_non_null(d);
    struct dirent *de;
    while ((de = readdir(d)) != NULL) {
        const char *n = de->d_name;
        size_t len = strlen(n);
        if (len < 8 || strcmp(n + len - 4, ".cwl") != 0 ||
            (n[0] - '0') + (n[1] - '0') + (n[2] - '0') + (n[3] - '0') > 3)
            continue;
        snprintf(src, sizeof src, "%s/%s", db, n);
        snprintf(dst, sizeof dst, "%s/%s", dir, n);
        assert_int_equal(copy_file(src, dst), 0);
    }
    closedir(d);
    snprintf(dst, sizeof dst, "%s/2100.00.cwl", dir);
    damage_last_byte(dst);
    snprintf(dst, sizeof dst, "%s/1200.00.cwl", dir);
    damage_last_byte(dst);
    egdb *bad;
    if (egdb_open(dir, 3, (size_t)1 << 20, &bad, err, sizeof err) != 0)
        fail_msg("egdb_open of the damaged copy: %s", err);

    eng_pos root = draw_root(f);
    draw_set ds;
    build_draw_set(f, &root, &ds);
    tstore s;
    store_new(&s);
    store_put(&s, ds.rec.v, ds.rec.n);
    pchk_result r;
    int rc = pchk_check(s.st, bad, &root, &r, err, sizeof err);
    assert_int_equal(rc, PST_ECORRUPT);
    if (!strstr(err, "database probe of"))
        fail_msg("message '%s' does not name the probe", err);
    store_free(&s);
    draw_set_free(&ds);
    egdb_close(bad);

    snprintf(src, sizeof src, "rm -rf '%s'", dir);
    assert_int_equal(system(src), 0);
}

/* ---- damaged proofs ----------------------------------------------------------- */

/* A copy of a case's records, to damage. */
static items
copy_items(const wcase *w)
{
    items c = {malloc(w->rec.n * sizeof(pst_item)), w->rec.n, w->rec.n};
    memcpy(c.v, w->rec.v, w->rec.n * sizeof(pst_item));
    return c;
}

/* The move of x at p, if any, into a database position (at most 4
 * pieces, not terminal) that the opponent wins: its index, or -1. */
static int
losing_move(const fixture *f, const eng_pos *p, const eng_movelist *l)
{
    for (int j = 0; j < l->n; j++) {
        eng_pos c;
        eng_make(p, &l->m[j], &c);
        if (npieces(&c) <= 4 && eng_count_moves(&c, ENG_DUPS_MERGE) > 0 &&
            db_outcome(f->db4, &c) == ENG_WIN)
            return j;
    }
    return -1;
}

/*
 * The winner's stored move replaced by a legal move into a database
 * position lost for the winner: the proof fails at that record, and the
 * reason names the move. The position is one with a choice of captures,
 * one winning and one losing, found by the same seeded scan as the win
 * cases.
 */
static void
test_losing_move(void **state)
{
    fixture *f = *state;
    uint64_t rng = 0x1051ull;
    for (int t = 0; t < WIN_TRIES; t++) {
        eng_pos p;
        eng_movelist l;
        if (random_five(&rng, &p) != 0 || !eng_has_capture(&p) ||
            eng_generate(&p, &l, ENG_DUPS_MERGE) < 2 || db_outcome(f->db5, &p) != ENG_WIN)
            continue;
        int j = losing_move(f, &p, &l);
        int d = tiny_dist(f->db4, &p, p.stm, WIN_MAX_PLIES);
        if (j < 0 || d < 1)
            continue;
        wcase w;
        memset(&w, 0, sizeof w);
        pset seen = {0};
        emit_win(f, &w, &seen, &p, p.stm, d);
        pset_free(&seen);
        /* the proof is valid as built, and the root's record comes first */
        tstore s;
        store_new(&s);
        assert_true(eng_equal(&w.rec.v[0].pos, &p));
        w.rec.v[0].rec.win = pst_move_of(&l.m[j]);
        store_put(&s, w.rec.v, w.rec.n);
        pchk_result r = check(&s, f->db4, &p);
        char where[ENG_FEN_MAX], mv[ENG_MOVE_STR_MAX];
        fen_of(&p, where);
        eng_format_move(&l.m[j], mv, sizeof mv);
        expect_invalid(&r, where, mv, "the database values as a win");
        store_free(&s);
        free(w.rec.v);
        return;
    }
    fail_msg("no position with a winning and a losing capture found");
}

/* One reply of the defender left without a record: the proof fails at
 * the position that reply reaches. */
static void
test_missing_reply(void **state)
{
    fixture *f = *state;
    const wcase *w = deep_case(f, 0);
    int x = w->root.stm;
    /* a stored winner's position other than the root: every such
     * position is reached by a reply */
    for (size_t k = 1; k < w->rec.n; k++) {
        if (w->rec.v[k].pos.stm != x)
            continue;
        items bad = copy_items(w);
        bad.v[k] = bad.v[--bad.n];
        tstore s;
        store_new(&s);
        store_put(&s, bad.v, bad.n);
        pchk_result r = check(&s, f->db4, &w->root);
        char where[ENG_FEN_MAX];
        fen_of(&w->rec.v[k].pos, where);
        expect_invalid(&r, where, "no stored proof", "reached by");
        store_free(&s);
        free(bad.v);
        return;
    }
    fail_msg("the deep case has no inner position of the winner");
}

/* An inner winner's record weakened from WW to DW (its move kept as the
 * draw move): "at least a draw" still holds, the win does not. */
static void
test_weaker_bound(void **state)
{
    fixture *f = *state;
    const wcase *w = deep_case(f, 1);
    int x = w->root.stm;
    for (size_t k = 1; k < w->rec.n; k++) {
        if (w->rec.v[k].pos.stm != x)
            continue;
        items bad = copy_items(w);
        bad.v[k].rec.bound = ENG_DW;
        bad.v[k].rec.draw = bad.v[k].rec.win;
        bad.v[k].rec.win.from = PST_NOMOVE;
        tstore s;
        store_new(&s);
        store_put(&s, bad.v, bad.n);
        pchk_result r = check(&s, f->db4, &w->root);
        char where[ENG_FEN_MAX];
        fen_of(&w->rec.v[k].pos, where);
        expect_invalid(&r, where, "stored bound DW", x == ENG_BLACK ? "Black wins" : "White wins");
        store_free(&s);
        free(bad.v);
        return;
    }
    fail_msg("the deep case has no inner position of the winner");
}

/*
 * A win proof that goes round: Black's king shuttles 29-25-29 while
 * White's only moves are 4-8 and 8-4. Stored as WW / LL records, it is a
 * valid "Black at least draws" proof (cycles are allowed there) but not a
 * win: the checker finds the reply that comes back to the root.
 */
static void
shuttle_records(pst_item it[4], eng_pos pos[4])
{
    eng_move m;
    pos[0] = fen(SHUTTLE_FEN);
    /* the hand analysis of the shuttle, checked by the engine */
    pos[1] = after(&pos[0], "29-25", &m);
    it[0] = (pst_item){pos[0], record(ENG_WW)};
    it[0].rec.win = pst_move_of(&m);
    assert_int_equal(eng_count_moves(&pos[1], ENG_DUPS_MERGE), 1);
    pos[2] = after(&pos[1], "4-8", NULL);
    it[1] = (pst_item){pos[1], record(ENG_LL)};
    pos[3] = after(&pos[2], "25-29", &m);
    it[2] = (pst_item){pos[2], record(ENG_WW)};
    it[2].rec.win = pst_move_of(&m);
    assert_int_equal(eng_count_moves(&pos[3], ENG_DUPS_MERGE), 1);
    eng_pos back = after(&pos[3], "8-4", NULL);
    assert_true(eng_equal(&back, &pos[0]));
    it[3] = (pst_item){pos[3], record(ENG_LL)};
}

static void
test_win_cycle(void **state)
{
    fixture *f = *state;
    pst_item it[4];
    eng_pos pos[4];
    shuttle_records(it, pos);
    tstore s;
    store_new(&s);
    store_put(&s, it, 4);
    pchk_result r = check(&s, f->db4, &pos[0]);
    char where[ENG_FEN_MAX];
    fen_of(&pos[3], where);
    expect_invalid(&r, where, "cycle: reply 8-4 comes back to " SHUTTLE_FEN, "Black wins");
    /* the "at least a draw" proof, checked first, went through */
    assert_int_equal(r.positions, 4 + 4);

    /* The same four positions as "Black at least draws" (DW with the
     * shuttle moves as draw moves, LD where White moves): valid, and
     * true, since White can never leave the shuttle. */
    tstore s2;
    store_new(&s2);
    for (int i = 0; i < 4; i++) {
        it[i].rec.bound = i % 2 == 0 ? ENG_DW : ENG_LD;
        it[i].rec.draw = it[i].rec.win;
        it[i].rec.win.from = PST_NOMOVE;
    }
    store_put(&s2, it, 4);
    r = check(&s2, f->db4, &pos[0]);
    if (r.status != PCHK_VALID)
        fail_msg("%s at %s", r.why, r.where);
    assert_int_equal(r.bound, ENG_DW);
    assert_int_equal(r.longest_win, -1);
    assert_int_equal(r.positions, 4);
    assert_int_equal(r.leaves_db + r.leaves_end, 0);
    /* it needs no leaf, so no database either */
    r = check(&s2, NULL, &pos[0]);
    assert_int_equal(r.status, PCHK_VALID);
    store_free(&s2);
    store_free(&s);
}

/* A stored move that is not legal: pst_put_many refuses it, so it is
 * written with raw LMDB calls; the checker fails at its position. */
static void
test_illegal_move(void **state)
{
    fixture *f = *state;
    pst_item it[4];
    eng_pos pos[4];
    char err[512];
    shuttle_records(it, pos);
    tstore s;
    store_new(&s);
    pst_item bad = it[0];
    bad.rec.win = (pst_move){28, 25, 0}; /* 29-26: not a diagonal step */
    assert_int_equal(pst_put_many(s.st, &bad, 1, err, sizeof err), PST_EINVAL);
    store_put(&s, it + 1, 3);
    raw_put(&s, &pos[0], &bad.rec, -1);
    pchk_result r = check(&s, f->db4, &pos[0]);
    expect_invalid(&r, SHUTTLE_FEN, "stored win move 29-26 is not legal", NULL);
    store_free(&s);
}

static void
test_nothing_stored(void **state)
{
    fixture *f = *state;
    const wcase *w = &f->cases[0];
    tstore s;
    store_new(&s);
    pchk_result r = check(&s, f->db4, &w->root);
    assert_int_equal(r.status, PCHK_NOTHING);
    /* a record for another position does not count */
    store_put(&s, w->rec.v + 1, w->rec.n - 1);
    r = check(&s, f->db4, &w->root);
    assert_int_equal(r.status, PCHK_NOTHING);
    store_free(&s);
}

/* A record whose bytes were altered (its checksum fails) stops the check
 * with PST_ECORRUPT, whether it is the root's or one deep in the proof:
 * never a verdict, and never "no stored proof". */
static void
test_damaged_record(void **state)
{
    fixture *f = *state;
    const wcase *w = deep_case(f, 0);
    assert_true(w->rec.n >= 2);
    for (int which = 0; which < 2; which++) {
        size_t k = which == 0 ? 0 : w->rec.n - 1;
        tstore s;
        store_new(&s);
        store_put(&s, w->rec.v, w->rec.n);
        /* the stored bytes' record, in the canonical orientation */
        eng_pos canon = eng_canonical(&w->rec.v[k].pos);
        pst_record rec;
        assert_int_equal(pst_get(s.st, &canon, &rec), 0);
        raw_put(&s, &canon, &rec, which == 0 ? 1 : 5); /* the bound, a move byte */
        pchk_result r;
        char err[512] = "", where[ENG_FEN_MAX];
        int rc = pchk_check(s.st, f->db4, &w->root, &r, err, sizeof err);
        assert_int_equal(rc, PST_ECORRUPT);
        fen_of(&w->rec.v[k].pos, where);
        if (!strstr(err, where))
            fail_msg("message '%s' does not name %s", err, where);
        store_free(&s);
    }
}

/* ---- main ------------------------------------------------------------------------ */

int
main(void)
{
    const struct CMUnitTest tests[] = {
        /* valid proofs */
        cmocka_unit_test(test_win_proofs_valid),
        cmocka_unit_test(test_loss_root_valid),
        cmocka_unit_test(test_database_root),
        cmocka_unit_test(test_draw_proof_with_cycles),
        /* damaged proofs: a verdict at the right position */
        cmocka_unit_test(test_losing_move),
        cmocka_unit_test(test_missing_reply),
        cmocka_unit_test(test_weaker_bound),
        cmocka_unit_test(test_win_cycle),
        cmocka_unit_test(test_illegal_move),
        cmocka_unit_test(test_nothing_stored),
        /* damaged files: an error, never a verdict */
        cmocka_unit_test(test_damaged_record),
        cmocka_unit_test(test_damaged_database),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
