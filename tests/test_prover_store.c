/*
 * test_prover_store.c - the proven-node store (prover/store.h): records
 * read back in both orientations, the merge rules, refusals (LW bounds,
 * illegal moves, contradictions, other schemas, damaged files and
 * records), crashes of writers (SIGKILL mid-transaction), two writing
 * processes, map growth, and a fuzz of the record decoder.
 *
 * Child processes report through exit codes and pipes, never through
 * cmocka's asserts (which belong to the parent's test runner).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <lmdb.h>
#include <xxhash.h>

#include "engine/engine.h"
#include "engine/value.h"
#include "egdb/egdb.h"
#include "prover/store.h"
#include "tests/test_store_util.h"
#include "tests/test_util.h"

/* ---- helpers ---------------------------------------------------------- */

static pst_move
no_move(void)
{
    pst_move m = {PST_NOMOVE, 0, 0};
    return m;
}

static pst_record
rec_make(eng_bound b, uint64_t effort, uint16_t length)
{
    pst_record r;
    r.bound = b;
    r.win = no_move();
    r.draw = no_move();
    r.effort = effort;
    r.length = length;
    return r;
}

/* A random valid record for p: moves only where the bound allows them. */
static pst_record
rec_random(const eng_pos *p, uint64_t *s)
{
    eng_movelist l;
    int nm = eng_generate(p, &l, ENG_DUPS_MERGE);
    pst_record r = rec_make((eng_bound)(rng_next(s) % 5), rng_next(s), (uint16_t)rng_next(s));
    if (nm > 0 && r.bound == ENG_WW)
        r.win = pst_move_of(&l.m[rng_next(s) % (uint64_t)nm]);
    if (nm > 0 && r.bound >= ENG_DD && rng_next(s) % 2)
        r.draw = pst_move_of(&l.m[rng_next(s) % (uint64_t)nm]);
    return r;
}

static pst_item
item_make(const eng_pos *p, pst_record r)
{
    pst_item it;
    it.pos = *p;
    it.rec = r;
    return it;
}

static void
new_store_dir(char *buf, size_t len, const char *name)
{
    assert_non_null(test_tmpdir(buf, len, name));
}

static void
rm_store(const char *dir)
{
    char f[600];
    snprintf(f, sizeof f, "%s/data.mdb", dir);
    unlink(f);
    snprintf(f, sizeof f, "%s/lock.mdb", dir);
    unlink(f);
    rmdir(dir);
}

static pst_env *
open_rw(const char *dir)
{
    pst_env *s = NULL;
    char err[512] = "";
    int rc = pst_open(dir, 0, &s, err, sizeof err);
    if (rc != 0)
        fprintf(stderr, "pst_open %s: %s\n", dir, err);
    assert_int_equal(rc, 0);
    return s;
}

static int
put_items(pst_env *s, const pst_item *it, size_t n, char *err, size_t errlen)
{
    int rc = pst_put_many(s, it, n, err, errlen);
    if (rc != 0 && rc != PST_ECONTRADICT && rc != PST_EINVAL)
        fprintf(stderr, "pst_put_many: %s (%s)\n", err, pst_strerror(rc));
    return rc;
}

/* XXH64 of a whole file, or 0 when it cannot be read. */
static uint64_t
file_hash(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return 0;
    XXH64_state_t *st = XXH64_createState();
    XXH64_reset(st, 0);
    char buf[65536];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, f)) > 0)
        XXH64_update(st, buf, n);
    fclose(f);
    uint64_t h = XXH64_digest(st);
    XXH64_freeState(st);
    return h;
}

static unsigned char *
read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *b = malloc((size_t)n + 1);
    assert_non_null(b);
    assert_int_equal(fread(b, 1, (size_t)n, f), (size_t)n);
    fclose(f);
    *len = (size_t)n;
    return b;
}

static void
write_file(const char *path, const unsigned char *b, size_t len)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(b, 1, len, f), len);
    assert_int_equal(fclose(f), 0);
}

/* The 16-byte key of a position, as store.h lays it out. */
static void
key_of(const eng_pos *p, uint8_t key[16])
{
    eng_pos c = eng_canonical(p);
    uint32_t m[4] = {c.bm, c.wm, c.bk, c.wk};
    for (int i = 0; i < 4; i++)
        for (int b = 0; b < 4; b++)
            key[4 * i + b] = (uint8_t)(m[i] >> (8 * b));
}

/* A raw LMDB environment on a directory, for writing what pst_put_many
 * never would. */
static MDB_env *
raw_open(const char *dir)
{
    MDB_env *env;
    assert_int_equal(mdb_env_create(&env), 0);
    assert_int_equal(mdb_env_set_maxdbs(env, 4), 0);
    assert_int_equal(mdb_env_set_mapsize(env, (size_t)1 << 24), 0);
    assert_int_equal(mdb_env_open(env, dir, 0, 0664), 0);
    return env;
}

static void
raw_put(MDB_env *env, const char *db, const void *k, size_t klen, const void *v, size_t vlen)
{
    MDB_txn *txn;
    MDB_dbi dbi;
    assert_int_equal(mdb_txn_begin(env, NULL, 0, &txn), 0);
    assert_int_equal(mdb_dbi_open(txn, db, MDB_CREATE, &dbi), 0);
    MDB_val kv = {klen, (void *)k}, vv = {vlen, (void *)v};
    assert_int_equal(mdb_put(txn, dbi, &kv, &vv, 0), 0);
    assert_int_equal(mdb_txn_commit(txn), 0);
}

/* Waits for a child; nonzero unless it exited with status 0. */
static int
child_failed(pid_t pid, const char *what)
{
    int st;
    if (waitpid(pid, &st, 0) != pid) {
        fprintf(stderr, "%s: waitpid failed\n", what);
        return 1;
    }
    if (WIFSIGNALED(st)) {
        fprintf(stderr, "%s: killed by signal %d\n", what, WTERMSIG(st));
        return 1;
    }
    if (WEXITSTATUS(st) != 0) {
        fprintf(stderr, "%s: exit status %d\n", what, WEXITSTATUS(st));
        return 1;
    }
    return 0;
}

static void
nap_ms(long ms)
{
    struct timespec t = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&t, NULL);
}

/* ---- the codec and moves ---------------------------------------------- */

static void
test_encode_decode_roundtrip(void **state)
{
    (void)state;
    uint64_t s = 7;
    eng_pos *ps = gen_positions(11, 300, 0);
    for (int i = 0; i < 300; i++) {
        uint8_t key[16], val[32];
        eng_pos c = eng_canonical(&ps[i]);
        key_of(&c, key);
        pst_record r = rec_random(&c, &s), back;
        pst_encode(key, &r, val);
        assert_int_equal(val[0], 1);
        assert_int_equal(val[1], r.bound);
        assert_int_equal(pst_decode(key, val, 32, &back), 0);
        assert_true(rec_equal(&r, &back));
        /* The checksum is XXH32 (seed 0) of the key and bytes 0..27. */
        uint8_t buf[44];
        memcpy(buf, key, 16);
        memcpy(buf + 16, val, 28);
        uint32_t sum = XXH32(buf, sizeof buf, 0);
        assert_int_equal(val[28] | val[29] << 8 | val[30] << 16 | (uint32_t)val[31] << 24, sum);
        /* Wrong lengths. */
        assert_int_equal(pst_decode(key, val, 31, &back), PST_ECORRUPT);
        assert_int_equal(pst_decode(key, val, 0, &back), PST_ECORRUPT);
    }
    free(ps);

    /* Records with a valid checksum but contents no writer writes. */
    uint8_t key[16] = {1, 2, 3}, val[32];
    pst_record r = rec_make(ENG_DW, 5, 0), back;
    r.draw.from = 8;
    r.draw.to = 12;
    struct {
        int byte;
        uint8_t value;
    } bad[] = {
        {0, 2},    /* record format 2 */
        {1, 5},    /* LW */
        {1, 9},    /* no bound */
        {2, 0x04}, /* unknown flag */
        {2, 0x03}, /* a win move with DW */
        {3, 1},    /* reserved byte */
        {10, 32},  /* draw move from off the board */
        {26, 1},   /* reserved byte */
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        pst_encode(key, &r, val);
        val[bad[i].byte] = bad[i].value;
        uint8_t buf[44];
        memcpy(buf, key, 16);
        memcpy(buf + 16, val, 28);
        uint32_t sum = XXH32(buf, sizeof buf, 0);
        for (int b = 0; b < 4; b++)
            val[28 + b] = (uint8_t)(sum >> (8 * b));
        assert_int_equal(pst_decode(key, val, 32, &back), PST_ECORRUPT);
    }
    /* A draw move with LD. */
    r.bound = ENG_LD;
    pst_encode(key, &r, val);
    assert_int_equal(pst_decode(key, val, 32, &back), PST_ECORRUPT);
}

static void
test_move_find_roundtrip(void **state)
{
    (void)state;
    eng_pos *ps = gen_positions(3, 400, 1);
    long moves = 0, captures = 0;
    for (int i = 0; i < 400; i++) {
        eng_movelist l, fl;
        int n = eng_generate(&ps[i], &l, ENG_DUPS_MERGE);
        eng_pos f = eng_flip(&ps[i]);
        assert_int_equal(eng_generate(&f, &fl, ENG_DUPS_MERGE), n);
        for (int k = 0; k < n; k++) {
            pst_move pm = pst_move_of(&l.m[k]);
            assert_int_equal(pm.from, l.m[k].from);
            assert_int_equal(pm.to, l.m[k].to);
            assert_int_equal(pm.captured, l.m[k].captured);
            eng_move back;
            assert_int_equal(pst_move_find(&ps[i], &pm, &back), 0);
            assert_int_equal(back.from, l.m[k].from);
            assert_int_equal(back.to, l.m[k].to);
            assert_int_equal(back.captured, l.m[k].captured);
            assert_int_equal(back.njumps, l.m[k].njumps);
            assert_memory_equal(back.path, l.m[k].path, back.njumps);
            /* The same move on the flipped board names a move of the twin. */
            pst_move fm = move_flip(pm);
            eng_move fb;
            assert_int_equal(pst_move_find(&f, &fm, &fb), 0);
            assert_int_equal(fb.njumps, l.m[k].njumps);
            moves++;
            captures += l.m[k].captured != 0;
        }
        /* A move to an occupied or unreachable square names nothing. */
        pst_move bad = {l.m[0].from, l.m[0].from, 0};
        assert_int_equal(pst_move_find(&ps[i], &bad, NULL), PST_EINVAL);
        pst_move off = {40, 1, 0};
        assert_int_equal(pst_move_find(&ps[i], &off, NULL), PST_EINVAL);
    }
    assert_true(moves > 2000);
    assert_true(captures > 50);
    free(ps);
}

static void
test_fuzz_decode(void **state)
{
    (void)state;
    uint64_t s = 99;
    int rounds = test_sanitized() ? 20000 : 200000;
    uint8_t key[16], val[64];
    pst_record r;
    for (int i = 0; i < rounds; i++) {
        size_t len = (size_t)(rng_next(&s) % 65);
        for (int b = 0; b < 16; b++)
            key[b] = (uint8_t)rng_next(&s);
        for (size_t b = 0; b < len; b++)
            val[b] = (uint8_t)rng_next(&s);
        r.bound = 0xEE;
        int rc = pst_decode(key, val, len, &r);
        assert_true(rc == 0 || rc == PST_ECORRUPT);
        if (rc == 0)
            assert_true(r.bound <= ENG_WW);
    }
    /* Every single-byte change of a valid record, in the value or in the
     * key, is caught: both are under the checksum. */
    eng_pos *ps = gen_positions(21, 200, 1);
    for (int i = 0; i < 200; i++) {
        key_of(&ps[i], key);
        eng_pos c = eng_canonical(&ps[i]);
        pst_record rec = rec_random(&c, &s);
        uint8_t good[32];
        pst_encode(key, &rec, good);
        for (int b = 0; b < 48; b++) {
            for (int t = 0; t < 4; t++) {
                uint8_t k2[16], v2[32], x = (uint8_t)(1 + rng_next(&s) % 255);
                memcpy(k2, key, 16);
                memcpy(v2, good, 32);
                if (b < 32)
                    v2[b] ^= x;
                else
                    k2[b - 32] ^= x;
                assert_int_equal(pst_decode(k2, v2, 32, &r), PST_ECORRUPT);
            }
        }
    }
    free(ps);
}

/*
 * pst_item_encode / pst_item_decode: items in both orientations turn into
 * the canonical key and value, the same ones pst_put_many stores (read
 * back through a store), and come back as the canonical position with the
 * moves on its squares.
 */
static void
test_item_codec(void **state)
{
    (void)state;
    enum { N = 400 };
    char dir[256], err[512];
    eng_pos *ps = gen_positions(31, N, 1);
    pst_item *items = malloc(N * sizeof *items);
    assert_non_null(items);
    uint64_t s = 5;
    int white = 0, flipped_moves = 0;
    for (int i = 0; i < N; i++) {
        items[i] = item_make(&ps[i], rec_random(&ps[i], &s));
        white += ps[i].stm == ENG_WHITE;
    }
    assert_true(white > 50 && white < N - 50);
    new_store_dir(dir, sizeof dir, "pst-item");
    pst_env *st = open_rw(dir);
    assert_int_equal(put_items(st, items, N, err, sizeof err), 0);
    for (int i = 0; i < N; i++) {
        const pst_item *it = &items[i];
        uint8_t key[16], want_key[16], val[32], again_key[16], again_val[32];
        pst_item_encode(it, key, val);
        key_of(&it->pos, want_key);
        assert_memory_equal(key, want_key, 16);
        pst_item back;
        assert_int_equal(pst_item_decode(key, val, 32, &back), 0);
        eng_pos c = eng_canonical(&it->pos);
        assert_true(eng_equal(&back.pos, &c));
        pst_record want = it->rec;
        if (it->pos.stm == ENG_WHITE) {
            want.win = move_flip(want.win);
            want.draw = move_flip(want.draw);
            flipped_moves += want.win.from != PST_NOMOVE || want.draw.from != PST_NOMOVE;
        }
        assert_true(rec_equal(&back.rec, &want));
        if (back.rec.win.from != PST_NOMOVE)
            assert_int_equal(pst_move_find(&back.pos, &back.rec.win, NULL), 0);
        if (back.rec.draw.from != PST_NOMOVE)
            assert_int_equal(pst_move_find(&back.pos, &back.rec.draw, NULL), 0);
        /* What the store holds for the position is this record. */
        pst_record stored;
        assert_int_equal(pst_get(st, &c, &stored), 0);
        assert_true(rec_equal(&stored, &back.rec));
        /* The canonical item encodes to the same bytes, and so does the
         * twin of the original (the other orientation). */
        pst_item_encode(&back, again_key, again_val);
        assert_memory_equal(again_key, key, 16);
        assert_memory_equal(again_val, val, 32);
        pst_item twin = *it;
        twin.pos = eng_flip(&it->pos);
        twin.rec.win = move_flip(it->rec.win);
        twin.rec.draw = move_flip(it->rec.draw);
        pst_item_encode(&twin, again_key, again_val);
        assert_memory_equal(again_key, key, 16);
        assert_memory_equal(again_val, val, 32);
        /* Refusals: a damaged value or key, a wrong length. */
        uint8_t bad[32], badkey[16];
        memcpy(bad, val, 32);
        bad[i % 32] ^= 0x10;
        assert_int_equal(pst_item_decode(key, bad, 32, &back), PST_ECORRUPT);
        memcpy(badkey, key, 16);
        badkey[i % 16] ^= 0x01;
        assert_int_equal(pst_item_decode(badkey, val, 32, &back), PST_ECORRUPT);
        assert_int_equal(pst_item_decode(key, val, 31, &back), PST_ECORRUPT);
    }
    assert_true(flipped_moves > 10);
    pst_close(st);
    rm_store(dir);

    /* A key that is no position, with a valid checksum: PST_EINVAL, and
     * *out untouched. */
    eng_pos overlap = {1u, 1u, 0, 0, ENG_BLACK};
    uint8_t key[16], val[32];
    key_of(&overlap, key);
    pst_record r = rec_make(ENG_DD, 1, 0);
    pst_encode(key, &r, val);
    pst_item out;
    memset(&out, 0x5A, sizeof out);
    assert_int_equal(pst_item_decode(key, val, 32, &out), PST_EINVAL);
    assert_int_equal(out.rec.effort, 0x5A5A5A5A5A5A5A5Aull);
    free(items);
    free(ps);
}

/* ---- reading and writing ---------------------------------------------- */

static void
test_roundtrip_orientations(void **state)
{
    (void)state;
    char dir[256], err[512];
    new_store_dir(dir, sizeof dir, "pst-rt");
    pst_env *s = open_rw(dir);
    enum { N = 600 };
    eng_pos *ps = gen_positions(5, N, 1);
    pst_item *items = malloc(N * sizeof *items);
    uint64_t rs = 17;
    int white = 0;
    for (int i = 0; i < N; i++) {
        items[i] = item_make(&ps[i], rec_random(&ps[i], &rs));
        white += ps[i].stm == ENG_WHITE;
    }
    assert_true(white > 100 && white < N - 100);
    assert_int_equal(put_items(s, items, N, err, sizeof err), 0);

    for (int i = 0; i < N; i++) {
        pst_record r;
        /* In the writer's own orientation: the same record, moves in its
         * own squares. */
        assert_int_equal(pst_get(s, &ps[i], &r), 0);
        assert_true(rec_equal(&r, &items[i].rec));
        if (r.win.from != PST_NOMOVE)
            assert_int_equal(pst_move_find(&ps[i], &r.win, NULL), 0);
        if (r.draw.from != PST_NOMOVE)
            assert_int_equal(pst_move_find(&ps[i], &r.draw, NULL), 0);
        /* Through the twin: the bound is unchanged (it is for the side to
         * move), the moves turn with the board. */
        eng_pos f = eng_flip(&ps[i]);
        assert_int_equal(pst_get(s, &f, &r), 0);
        assert_int_equal(r.bound, items[i].rec.bound);
        pst_move fw = move_flip(items[i].rec.win), fd = move_flip(items[i].rec.draw);
        assert_true(move_equal(&r.win, &fw));
        assert_true(move_equal(&r.draw, &fd));
        assert_int_equal(r.effort, items[i].rec.effort);
        if (r.draw.from != PST_NOMOVE)
            assert_int_equal(pst_move_find(&f, &r.draw, NULL), 0);
    }

    /* A hand-checked White-to-move case: 22-18 is square 21 -> 17
     * (0-based); stored canonically as 10 -> 14, read back as 21 -> 17. */
    eng_pos w;
    assert_int_equal(eng_parse_fen("W:W22:B3", &w, err, sizeof err), 0);
    pst_record rw = rec_make(ENG_DW, 3, 0);
    rw.draw.from = 21;
    rw.draw.to = 17;
    pst_item iw = item_make(&w, rw);
    assert_int_equal(put_items(s, &iw, 1, err, sizeof err), 0);
    pst_record back;
    assert_int_equal(pst_get(s, &w, &back), 0);
    assert_int_equal(back.draw.from, 21);
    assert_int_equal(back.draw.to, 17);
    eng_pos b = eng_flip(&w);
    assert_int_equal(pst_get(s, &b, &back), 0);
    assert_int_equal(back.draw.from, 10);
    assert_int_equal(back.draw.to, 14);
    assert_int_equal(back.bound, ENG_DW);

    /* A position never written. */
    eng_pos none;
    assert_int_equal(eng_parse_fen("B:W32:B1", &none, err, sizeof err), 0);
    assert_int_equal(pst_get(s, &none, &back), PST_ENOTFOUND);
    /* An invalid position is refused, not looked up. */
    eng_pos bad = {1u, 1u, 0, 0, ENG_BLACK};
    assert_int_equal(pst_get(s, &bad, &back), PST_EINVAL);

    pst_close(s);
    /* And again after reopening, read-only. */
    pst_env *ro = NULL;
    assert_int_equal(pst_open(dir, PST_RDONLY, &ro, err, sizeof err), 0);
    for (int i = 0; i < N; i += 7) {
        pst_record r;
        assert_int_equal(pst_get(ro, &ps[i], &r), 0);
        assert_true(rec_equal(&r, &items[i].rec));
    }
    assert_int_equal(pst_put_many(ro, items, 1, err, sizeof err), PST_EREADONLY);
    pst_close(ro);
    free(items);
    free(ps);
    rm_store(dir);
}

typedef struct collect {
    pst_item *items;
    size_t n, cap;
    int sorted;
    int last_set;
    uint8_t last[16];
} collect;

static int
collect_one(const eng_pos *p, const pst_record *r, void *arg)
{
    collect *c = arg;
    uint8_t key[16];
    key_of(p, key);
    /* Key order, Black to move. */
    if (p->stm != ENG_BLACK || (c->last_set && memcmp(c->last, key, 16) >= 0))
        c->sorted = 0;
    memcpy(c->last, key, 16);
    c->last_set = 1;
    if (c->n == c->cap) {
        c->cap = c->cap ? 2 * c->cap : 256;
        c->items = realloc(c->items, c->cap * sizeof *c->items);
    }
    c->items[c->n++] = item_make(p, *r);
    return 0;
}

static int
stop_at_ten(const eng_pos *p, const pst_record *r, void *arg)
{
    (void)p;
    (void)r;
    int *n = arg;
    return ++*n == 10 ? 42 : 0;
}

static void
test_stats_and_foreach(void **state)
{
    (void)state;
    char dir[256], err[512];
    new_store_dir(dir, sizeof dir, "pst-stats");
    pst_env *s = open_rw(dir);
    pst_stats st;
    assert_int_equal(pst_stats_get(s, &st, err, sizeof err), 0);
    assert_int_equal(st.records, 0);
    assert_int_equal(st.map_bytes, (uint64_t)1 << 30);
    assert_true(st.used_bytes > 0 && st.used_bytes < 65536);

    /* More than one scan chunk (4096) of records. */
    enum { N = 9000 };
    eng_pos *ps = gen_positions(8, N, 1);
    pst_item *items = malloc(N * sizeof *items);
    uint64_t rs = 5, by_bound[5] = {0}, wins = 0, draws = 0, by_pieces[25] = {0};
    for (int i = 0; i < N; i++) {
        items[i] = item_make(&ps[i], rec_random(&ps[i], &rs));
        by_bound[items[i].rec.bound]++;
        wins += items[i].rec.win.from != PST_NOMOVE;
        draws += items[i].rec.draw.from != PST_NOMOVE;
        by_pieces[__builtin_popcount(ps[i].bm | ps[i].wm | ps[i].bk | ps[i].wk)]++;
    }
    assert_int_equal(put_items(s, items, N, err, sizeof err), 0);
    assert_int_equal(pst_stats_get(s, &st, err, sizeof err), 0);
    assert_int_equal(st.records, N);
    for (int b = 0; b < 5; b++)
        assert_int_equal(st.by_bound[b], by_bound[b]);
    assert_int_equal(st.by_bound[ENG_LW], 0);
    assert_int_equal(st.with_win_move, wins);
    assert_int_equal(st.with_draw_move, draws);
    for (int k = 0; k < 25; k++)
        assert_int_equal(st.by_pieces[k], by_pieces[k]);
    assert_true(st.used_bytes > (uint64_t)N * 48 && st.used_bytes <= st.map_bytes);

    collect c = {NULL, 0, 0, 1, 0, {0}};
    assert_int_equal(pst_foreach(s, collect_one, &c, err, sizeof err), 0);
    assert_int_equal(c.n, N);
    assert_true(c.sorted);
    for (size_t i = 0; i < c.n; i++) {
        /* Every record seen is the one written, in canonical squares. */
        pst_record r;
        assert_int_equal(pst_get(s, &c.items[i].pos, &r), 0);
        assert_true(rec_equal(&r, &c.items[i].rec));
    }
    int seen = 0;
    assert_int_equal(pst_foreach(s, stop_at_ten, &seen, err, sizeof err), 42);
    assert_int_equal(seen, 10);
    free(c.items);
    free(items);
    free(ps);
    pst_close(s);
    rm_store(dir);
}

/* ---- merging and refusals --------------------------------------------- */

static void
test_merge_rules(void **state)
{
    (void)state;
    char dir[256], err[512];
    new_store_dir(dir, sizeof dir, "pst-merge");
    pst_env *s = open_rw(dir);
    eng_pos *ps = gen_positions(13, 8, 1);
    eng_movelist l;
    pst_record r;

    /* DW with a draw move, then LD: DD, the move kept, effort the max. */
    int n = eng_generate(&ps[0], &l, ENG_DUPS_MERGE);
    assert_true(n >= 1);
    pst_record dw = rec_make(ENG_DW, 100, 0);
    dw.draw = pst_move_of(&l.m[0]);
    pst_item it = item_make(&ps[0], dw);
    assert_int_equal(put_items(s, &it, 1, err, sizeof err), 0);
    it = item_make(&ps[0], rec_make(ENG_LD, 50, 0));
    assert_int_equal(put_items(s, &it, 1, err, sizeof err), 0);
    assert_int_equal(pst_get(s, &ps[0], &r), 0);
    assert_int_equal(r.bound, ENG_DD);
    assert_true(move_equal(&r.draw, &dw.draw));
    assert_int_equal(r.effort, 100);

    /* The same merge written through the twin. */
    eng_pos f1 = eng_flip(&ps[1]);
    n = eng_generate(&f1, &l, ENG_DUPS_MERGE);
    pst_record dw1 = rec_make(ENG_DW, 1, 0);
    dw1.draw = pst_move_of(&l.m[n - 1]);
    it = item_make(&f1, dw1);
    assert_int_equal(put_items(s, &it, 1, err, sizeof err), 0);
    it = item_make(&ps[1], rec_make(ENG_LD, 2, 0));
    assert_int_equal(put_items(s, &it, 1, err, sizeof err), 0);
    assert_int_equal(pst_get(s, &f1, &r), 0);
    assert_int_equal(r.bound, ENG_DD);
    assert_true(move_equal(&r.draw, &dw1.draw));
    assert_int_equal(r.effort, 2);

    /* First writer wins a move slot; an empty slot is filled. */
    n = eng_generate(&ps[2], &l, ENG_DUPS_MERGE);
    assert_true(n >= 2);
    pst_record a = rec_make(ENG_DW, 5, 0);
    a.draw = pst_move_of(&l.m[0]);
    it = item_make(&ps[2], a);
    assert_int_equal(put_items(s, &it, 1, err, sizeof err), 0);
    pst_record b = rec_make(ENG_WW, 3, 9);
    b.win = pst_move_of(&l.m[1]);
    b.draw = pst_move_of(&l.m[1]);
    it = item_make(&ps[2], b);
    assert_int_equal(put_items(s, &it, 1, err, sizeof err), 0);
    assert_int_equal(pst_get(s, &ps[2], &r), 0);
    assert_int_equal(r.bound, ENG_WW);
    assert_true(move_equal(&r.draw, &a.draw)); /* kept */
    assert_true(move_equal(&r.win, &b.win));   /* added */
    assert_int_equal(r.effort, 5);
    assert_int_equal(r.length, 9); /* the win and its length came together */
    /* A second win record: the win move and its length stay. */
    pst_record c = rec_make(ENG_WW, 7, 4);
    c.win = pst_move_of(&l.m[0]);
    it = item_make(&ps[2], c);
    assert_int_equal(put_items(s, &it, 1, err, sizeof err), 0);
    assert_int_equal(pst_get(s, &ps[2], &r), 0);
    assert_true(move_equal(&r.win, &b.win));
    assert_int_equal(r.length, 9);
    assert_int_equal(r.effort, 7);

    /* A loss: LD then LL brings the loss and its length. */
    it = item_make(&ps[3], rec_make(ENG_LD, 1, 0));
    assert_int_equal(put_items(s, &it, 1, err, sizeof err), 0);
    it = item_make(&ps[3], rec_make(ENG_LL, 1, 12));
    assert_int_equal(put_items(s, &it, 1, err, sizeof err), 0);
    assert_int_equal(pst_get(s, &ps[3], &r), 0);
    assert_int_equal(r.bound, ENG_LL);
    assert_int_equal(r.length, 12);
    /* Writing the same record again changes nothing. */
    assert_int_equal(put_items(s, &it, 1, err, sizeof err), 0);
    assert_int_equal(pst_get(s, &ps[3], &r), 0);
    assert_int_equal(r.bound, ENG_LL);

    /* Two records for one position in one batch merge in order. */
    pst_item two[2] = {item_make(&ps[4], rec_make(ENG_DW, 1, 0)),
                       item_make(&ps[4], rec_make(ENG_LD, 1, 0))};
    assert_int_equal(put_items(s, two, 2, err, sizeof err), 0);
    assert_int_equal(pst_get(s, &ps[4], &r), 0);
    assert_int_equal(r.bound, ENG_DD);
    free(ps);
    pst_close(s);
    rm_store(dir);
}

/*
 * A batch is merged in the store's key order (store.c, KEY ORDER), not
 * in the order given: the result must be what putting its records one
 * at a time, in the order given, leaves. 3,000 records over 600
 * positions in a shuffled order, each position several times, with
 * bounds that agree (each holds the position's one value) and moves
 * where they may be (the first move given takes a slot): every stored
 * record must be the same both ways, byte for byte.
 */
static void
test_batch_merges_as_one_at_a_time(void **state)
{
    (void)state;
    char da[256], db[256], err[512];
    new_store_dir(da, sizeof da, "pst-order-a");
    new_store_dir(db, sizeof db, "pst-order-b");
    pst_env *a = open_rw(da), *b = open_rw(db);
    enum { NPOS = 600, NREC = 3000 };
    eng_pos *ps = gen_positions(77, NPOS, 1);
    static const eng_bound of_win[] = {ENG_WW, ENG_DW}, of_draw[] = {ENG_DD, ENG_DW, ENG_LD},
                           of_loss[] = {ENG_LL, ENG_LD};
    pst_item *items = malloc(NREC * sizeof *items);
    assert_non_null(items);
    uint64_t seed = 4747;
    for (size_t i = 0; i < NREC; i++) {
        size_t k = i < NPOS ? i : (size_t)(rng_next(&seed) % NPOS);
        /* half of them through the twin (Black and White swapped) */
        eng_pos q = rng_next(&seed) % 2 ? ps[k] : eng_flip(&ps[k]);
        int value = (int)(k % 3); /* 0 win, 1 draw, 2 loss, for the side to move */
        eng_bound bd = value == 0   ? of_win[rng_next(&seed) % 2]
                       : value == 1 ? of_draw[rng_next(&seed) % 3]
                                    : of_loss[rng_next(&seed) % 2];
        pst_record r = rec_make(bd, rng_next(&seed) % 1000, (uint16_t)(rng_next(&seed) % 50));
        eng_movelist l;
        int nm = eng_generate(&q, &l, ENG_DUPS_MERGE);
        if (nm > 0 && bd == ENG_WW)
            r.win = pst_move_of(&l.m[rng_next(&seed) % (uint64_t)nm]);
        if (nm > 0 && eng_bound_lo(bd) >= ENG_DRAW && rng_next(&seed) % 2)
            r.draw = pst_move_of(&l.m[rng_next(&seed) % (uint64_t)nm]);
        items[i] = item_make(&q, r);
    }
    /* shuffled (the first NPOS, one for each position, move too) */
    for (size_t i = NREC - 1; i > 0; i--) {
        size_t j = (size_t)(rng_next(&seed) % (i + 1));
        pst_item t = items[i];
        items[i] = items[j];
        items[j] = t;
    }
    assert_int_equal(put_items(a, items, NREC, err, sizeof err), 0);
    for (size_t i = 0; i < NREC; i++)
        assert_int_equal(put_items(b, &items[i], 1, err, sizeof err), 0);
    for (size_t k = 0; k < NPOS; k++) {
        pst_record ra, rb;
        assert_int_equal(pst_get(a, &ps[k], &ra), 0);
        assert_int_equal(pst_get(b, &ps[k], &rb), 0);
        uint8_t ka[16], va[32], kb[16], vb[32];
        pst_item ia = item_make(&ps[k], ra), ib = item_make(&ps[k], rb);
        pst_item_encode(&ia, ka, va);
        pst_item_encode(&ib, kb, vb);
        assert_memory_equal(va, vb, sizeof va);
    }
    free(items);
    free(ps);
    pst_close(a);
    pst_close(b);
    rm_store(da);
    rm_store(db);
}

static void
test_contradiction_refuses_batch(void **state)
{
    (void)state;
    char dir[256], err[512] = "";
    new_store_dir(dir, sizeof dir, "pst-contra");
    pst_env *s = open_rw(dir);
    eng_pos *ps = gen_positions(17, 6, 1);
    eng_movelist l;
    eng_generate(&ps[0], &l, ENG_DUPS_MERGE);
    pst_record ww = rec_make(ENG_WW, 1, 3);
    ww.win = pst_move_of(&l.m[0]);
    pst_item it = item_make(&ps[0], ww);
    assert_int_equal(put_items(s, &it, 1, err, sizeof err), 0);

    /* Valid records around the contradicting one, one of them a merge
     * into the stored record's twin: none may be written. */
    eng_pos f0 = eng_flip(&ps[0]);
    pst_item batch[5] = {
        item_make(&ps[1], rec_make(ENG_DD, 1, 0)), item_make(&ps[2], rec_make(ENG_LL, 1, 0)),
        item_make(&f0, rec_make(ENG_LL, 9, 0)), /* WW stored: contradiction */
        item_make(&ps[3], rec_make(ENG_LD, 1, 0)), item_make(&ps[4], rec_make(ENG_DW, 1, 0)),
    };
    assert_int_equal(pst_put_many(s, batch, 5, err, sizeof err), PST_ECONTRADICT);
    char fen[ENG_FEN_MAX];
    eng_format_fen(&f0, fen, sizeof fen);
    assert_non_null(strstr(err, fen));
    assert_non_null(strstr(err, "WW"));
    assert_non_null(strstr(err, "LL"));
    pst_record r;
    for (int i = 1; i <= 4; i++)
        assert_int_equal(pst_get(s, &ps[i], &r), PST_ENOTFOUND);
    assert_int_equal(pst_get(s, &ps[0], &r), 0);
    assert_true(rec_equal(&r, &ww));

    /* LD against WW contradicts too; DW does not. */
    it = item_make(&ps[0], rec_make(ENG_LD, 1, 0));
    assert_int_equal(pst_put_many(s, &it, 1, err, sizeof err), PST_ECONTRADICT);
    it = item_make(&ps[0], rec_make(ENG_DW, 1, 0));
    assert_int_equal(pst_put_many(s, &it, 1, err, sizeof err), 0);
    /* A batch that contradicts itself. */
    pst_item self[2] = {item_make(&ps[5], rec_make(ENG_WW, 1, 0)),
                        item_make(&ps[5], rec_make(ENG_LD, 1, 0))};
    assert_int_equal(pst_put_many(s, self, 2, err, sizeof err), PST_ECONTRADICT);
    assert_int_equal(pst_get(s, &ps[5], &r), PST_ENOTFOUND);
    free(ps);
    pst_close(s);
    rm_store(dir);
}

static void
test_invalid_records(void **state)
{
    (void)state;
    char dir[256], err[512] = "";
    new_store_dir(dir, sizeof dir, "pst-inval");
    pst_env *s = open_rw(dir);
    eng_pos p;
    assert_int_equal(eng_parse_fen("B:W18:B11,15", &p, err, sizeof err), 0);
    pst_item ok = item_make(&p, rec_make(ENG_DD, 1, 0));
    eng_pos q;
    assert_int_equal(eng_parse_fen("W:W23:B9", &q, err, sizeof err), 0);

    /* LW says nothing: refused, and the valid record before it too. */
    pst_item b1[2] = {ok, item_make(&q, rec_make(ENG_LW, 1, 0))};
    assert_int_equal(pst_put_many(s, b1, 2, err, sizeof err), PST_EINVAL);
    assert_non_null(strstr(err, "LW"));
    assert_non_null(strstr(err, "W:W23:B9"));
    pst_record r;
    assert_int_equal(pst_get(s, &p, &r), PST_ENOTFOUND);
    pst_item bad_code = item_make(&q, rec_make((eng_bound)7, 1, 0));
    assert_int_equal(pst_put_many(s, &bad_code, 1, err, sizeof err), PST_EINVAL);

    /* An illegal move: Black must capture 15x22, so 15-19 is no move. */
    pst_record rm = rec_make(ENG_WW, 1, 0);
    rm.win.from = 14; /* square 15 */
    rm.win.to = 18;   /* square 19 */
    rm.win.captured = 0;
    pst_item b2[2] = {ok, item_make(&p, rm)};
    assert_int_equal(pst_put_many(s, b2, 2, err, sizeof err), PST_EINVAL);
    assert_non_null(strstr(err, "B:W18:B11,15"));
    assert_non_null(strstr(err, "from 15 to 19"));
    assert_int_equal(pst_get(s, &p, &r), PST_ENOTFOUND);
    /* The legal capture is accepted. */
    rm.win.to = 21; /* square 22 */
    rm.win.captured = 1u << 17;
    pst_item good = item_make(&p, rm);
    assert_int_equal(pst_put_many(s, &good, 1, err, sizeof err), 0);

    /* A move where the side to move is the defender. */
    pst_record rd = rec_make(ENG_LD, 1, 0);
    rd.draw = rm.win;
    pst_item b3 = item_make(&p, rd);
    assert_int_equal(pst_put_many(s, &b3, 1, err, sizeof err), PST_EINVAL);
    pst_record rwin = rec_make(ENG_DW, 1, 0);
    rwin.win = rm.win;
    b3 = item_make(&p, rwin);
    assert_int_equal(pst_put_many(s, &b3, 1, err, sizeof err), PST_EINVAL);
    /* A position that is no position. */
    eng_pos bad = {1u << 30, 0, 0, 0, ENG_BLACK};
    pst_item b4 = item_make(&bad, rec_make(ENG_DD, 1, 0));
    assert_int_equal(pst_put_many(s, &b4, 1, err, sizeof err), PST_EINVAL);
    assert_int_equal(pst_put_many(s, NULL, 3, err, sizeof err), PST_EINVAL);
    assert_int_equal(pst_put_many(s, NULL, 0, err, sizeof err), 0);
    pst_close(s);
    rm_store(dir);
}

/* ---- foreign stores ---------------------------------------------------- */

static void
check_refused(const char *dir, const char *needle)
{
    char file[600], err[512] = "";
    snprintf(file, sizeof file, "%s/data.mdb", dir);
    uint64_t before = file_hash(file);
    assert_true(before != 0);
    pst_env *s = NULL;
    assert_int_equal(pst_open(dir, 0, &s, err, sizeof err), PST_EVERSION);
    assert_null(s);
    assert_non_null(strstr(err, dir));
    if (needle)
        assert_non_null(strstr(err, needle));
    assert_int_equal(file_hash(file), before);
    assert_int_equal(pst_open(dir, PST_RDONLY, &s, err, sizeof err), PST_EVERSION);
    assert_int_equal(file_hash(file), before);
}

static void
test_other_versions_refused(void **state)
{
    (void)state;
    char dir[256], err[512];
    eng_pos p;
    eng_start(&p);
    uint8_t key[16], val[32];
    key_of(&p, key);
    pst_record r = rec_make(ENG_DD, 1, 0);
    pst_encode(key, &r, val);

    /* Schema 999. */
    new_store_dir(dir, sizeof dir, "pst-v999");
    MDB_env *env = raw_open(dir);
    raw_put(env, "meta", "schema", 6, "checkers-proof-store 999", 24);
    raw_put(env, "nodes", key, 16, val, 32);
    mdb_env_close(env);
    check_refused(dir, "checkers-proof-store 999");
    rm_store(dir);

    /* No meta database at all: an LMDB environment with other data. */
    new_store_dir(dir, sizeof dir, "pst-nometa");
    env = raw_open(dir);
    raw_put(env, "nodes", key, 16, val, 32);
    mdb_env_close(env);
    check_refused(dir, "meta");
    rm_store(dir);

    /* A meta database without the schema record. */
    new_store_dir(dir, sizeof dir, "pst-noschema");
    env = raw_open(dir);
    raw_put(env, "meta", "created", 7, "yesterday", 9);
    mdb_env_close(env);
    check_refused(dir, "schema");
    rm_store(dir);

    /* An empty LMDB environment (a creation that did not finish) is not
     * refused: opening it for writing makes it a store. */
    new_store_dir(dir, sizeof dir, "pst-empty");
    env = raw_open(dir);
    mdb_env_close(env);
    pst_env *s = NULL;
    assert_int_equal(pst_open(dir, PST_RDONLY, &s, err, sizeof err), PST_EVERSION);
    s = open_rw(dir);
    pst_item it = item_make(&p, r);
    assert_int_equal(pst_put_many(s, &it, 1, err, sizeof err), 0);
    pst_close(s);
    env = raw_open(dir);
    MDB_txn *txn;
    MDB_dbi meta;
    MDB_val k = {6, "schema"}, v;
    assert_int_equal(mdb_txn_begin(env, NULL, MDB_RDONLY, &txn), 0);
    assert_int_equal(mdb_dbi_open(txn, "meta", 0, &meta), 0);
    assert_int_equal(mdb_get(txn, meta, &k, &v), 0);
    assert_int_equal(v.mv_size, strlen(PST_SCHEMA));
    assert_memory_equal(v.mv_data, PST_SCHEMA, v.mv_size);
    mdb_txn_abort(txn);
    mdb_env_close(env);
    rm_store(dir);

    /* A file that is not LMDB at all. */
    new_store_dir(dir, sizeof dir, "pst-notlmdb");
    char file[600];
    snprintf(file, sizeof file, "%s/data.mdb", dir);
    unsigned char junk[8192];
    memset(junk, 'x', sizeof junk);
    write_file(file, junk, sizeof junk);
    assert_int_equal(pst_open(dir, 0, &s, err, sizeof err), PST_ECORRUPT);
    assert_non_null(strstr(err, "not an LMDB file"));
    snprintf(file, sizeof file, "%s/data.mdb", dir);
    size_t len;
    unsigned char *b = read_file(file, &len);
    assert_int_equal(len, sizeof junk);
    assert_memory_equal(b, junk, len);
    free(b);
    rm_store(dir);
}

static void
test_open_errors(void **state)
{
    (void)state;
    char dir[256], path[600], err[512] = "";
    new_store_dir(dir, sizeof dir, "pst-missing");
    snprintf(path, sizeof path, "%s/nothing", dir);
    pst_env *s = NULL;
    /* Read-only: no store, no directory made, a message naming the path. */
    assert_int_equal(pst_open(path, PST_RDONLY, &s, err, sizeof err), PST_EIO);
    assert_null(s);
    assert_non_null(strstr(err, path));
    struct stat st;
    assert_int_not_equal(stat(path, &st), 0);
    /* Read-only on an existing directory without a store leaves it
     * empty (no lock file). */
    assert_int_equal(pst_open(dir, PST_RDONLY, &s, err, sizeof err), PST_EIO);
    char lock[600];
    snprintf(lock, sizeof lock, "%s/lock.mdb", dir);
    assert_int_not_equal(stat(lock, &st), 0);
    /* Writing: a missing parent directory is an error, not a crash. */
    snprintf(path, sizeof path, "%s/no/such/dir", dir);
    assert_int_equal(pst_open(path, 0, &s, err, sizeof err), PST_EIO);
    assert_non_null(strstr(err, path));
    /* A map size variable that is not a number is refused by name. */
    setenv("CHECKERS_PST_MAP_BYTES", "64k", 1);
    assert_int_equal(pst_open(dir, 0, &s, err, sizeof err), PST_EINVAL);
    assert_non_null(strstr(err, "CHECKERS_PST_MAP_BYTES"));
    unsetenv("CHECKERS_PST_MAP_BYTES");
    assert_string_equal(pst_strerror(PST_ECONTRADICT), "a new record contradicts a stored one");
    rmdir(dir);
}

/* ---- damaged records and files ---------------------------------------- */

static int
count_records(const eng_pos *p, const pst_record *r, void *arg)
{
    (void)p;
    (void)r;
    ++*(int *)arg;
    return 0;
}

static void
test_damaged_records(void **state)
{
    (void)state;
    char dir[256], err[512] = "";
    new_store_dir(dir, sizeof dir, "pst-damrec");
    pst_env *s = open_rw(dir);
    eng_pos *ps = gen_positions(23, 50, 1);
    pst_item items[50];
    uint64_t rs = 3;
    for (int i = 0; i < 50; i++)
        items[i] = item_make(&ps[i], rec_random(&ps[i], &rs));
    assert_int_equal(put_items(s, items, 50, err, sizeof err), 0);
    pst_close(s);

    /* One value byte altered (the effort), written straight into LMDB. */
    uint8_t key[16], val[32];
    eng_pos c = eng_canonical(&ps[7]);
    key_of(&c, key);
    pst_record cr = items[7].rec;
    if (ps[7].stm == ENG_WHITE) {
        cr.win = move_flip(cr.win);
        cr.draw = move_flip(cr.draw);
    }
    pst_encode(key, &cr, val);
    val[17] ^= 0x10;
    MDB_env *env = raw_open(dir);
    raw_put(env, "nodes", key, 16, val, 32);
    mdb_env_close(env);
    s = open_rw(dir);
    pst_record r;
    assert_int_equal(pst_get(s, &ps[7], &r), PST_ECORRUPT);
    assert_int_equal(pst_get(s, &c, &r), PST_ECORRUPT);
    assert_int_equal(pst_get(s, &ps[8], &r), 0); /* the others are fine */
    int n = 0;
    assert_int_equal(pst_foreach(s, count_records, &n, err, sizeof err), PST_ECORRUPT);
    char fen[ENG_FEN_MAX];
    eng_format_fen(&c, fen, sizeof fen);
    assert_non_null(strstr(err, fen));
    assert_non_null(strstr(err, "checksum"));
    pst_stats st;
    assert_int_equal(pst_stats_get(s, &st, err, sizeof err), PST_ECORRUPT);
    /* A write that merges into the damaged record is refused, and does
     * not cover the damage with a fresh checksum. */
    pst_item again = items[7];
    assert_int_equal(pst_put_many(s, &again, 1, err, sizeof err), PST_ECORRUPT);
    assert_non_null(strstr(err, "damaged"));
    assert_int_equal(pst_get(s, &ps[7], &r), PST_ECORRUPT);
    pst_close(s);

    /* A value of the wrong size, and a key of the wrong size. */
    env = raw_open(dir);
    pst_encode(key, &cr, val);
    raw_put(env, "nodes", key, 16, val, 31);
    raw_put(env, "nodes", key, 15, val, 32);
    mdb_env_close(env);
    s = open_rw(dir);
    assert_int_equal(pst_get(s, &ps[7], &r), PST_ECORRUPT);
    n = 0;
    assert_int_equal(pst_foreach(s, count_records, &n, err, sizeof err), PST_ECORRUPT);
    assert_non_null(strstr(err, "15-byte key"));
    pst_close(s);

    /* A checksum-valid record with an invalid bound code. */
    env = raw_open(dir);
    pst_encode(key, &cr, val);
    val[1] = 5;
    val[2] = 0;
    memset(val + 4, 0, 12);
    uint8_t buf[44];
    memcpy(buf, key, 16);
    memcpy(buf + 16, val, 28);
    uint32_t sum = XXH32(buf, 44, 0);
    for (int b = 0; b < 4; b++)
        val[28 + b] = (uint8_t)(sum >> (8 * b));
    raw_put(env, "nodes", key, 16, val, 32);
    mdb_env_close(env);
    s = open_rw(dir);
    assert_int_equal(pst_get(s, &ps[7], &r), PST_ECORRUPT);
    pst_close(s);
    free(ps);
    rm_store(dir);
}

/*
 * What a reader of a damaged copy saw, sent from a child process (LMDB
 * may misbehave on a damaged file: a crash must fail the test, not end
 * the suite).
 */
typedef struct damage_report {
    int open_rc;
    int get_ok, get_err, get_wrong, get_noerrmsg;
    int foreach_rc, foreach_seen, foreach_wrong;
    int put_rc;
    char err[300];
} damage_report;

typedef struct expect_ctx {
    const pst_item *items;
    int n;
    damage_report *rep;
} expect_ctx;

static int
expect_cmp(const void *a, const void *b)
{
    uint8_t ka[16], kb[16];
    key_of(&((const pst_item *)a)->pos, ka);
    key_of(&((const pst_item *)b)->pos, kb);
    return memcmp(ka, kb, 16);
}

/* The expected record of a canonical position (items sorted by key, in
 * canonical orientation), or NULL. */
static const pst_item *
expect_find(const expect_ctx *x, const eng_pos *p)
{
    pst_item k = item_make(p, rec_make(ENG_DD, 0, 0));
    return bsearch(&k, x->items, (size_t)x->n, sizeof k, expect_cmp);
}

static int
expect_one(const eng_pos *p, const pst_record *r, void *arg)
{
    expect_ctx *x = arg;
    const pst_item *e = expect_find(x, p);
    x->rep->foreach_seen++;
    if (!e || !rec_equal(&e->rec, r))
        x->rep->foreach_wrong++;
    return 0;
}

/* Child: reads the whole damaged store, then tries one write. */
static void
damage_child(const char *dir, const expect_ctx *x0, int wfd)
{
    damage_report rep;
    memset(&rep, 0, sizeof rep);
    expect_ctx x = *x0;
    x.rep = &rep;
    alarm(30); /* a hang is a failure too */
    /* the guards on top of cmocka's own handlers, which a running test has */
    pst_guard_faults();
    pst_env *s = NULL;
    rep.open_rc = pst_open(dir, 0, &s, rep.err, sizeof rep.err);
    if (rep.open_rc == 0) {
        for (int i = 0; i < x.n; i++) {
            pst_record r;
            int rc = pst_get(s, &x.items[i].pos, &r);
            if (rc == 0) {
                rep.get_ok++;
                if (!rec_equal(&r, &x.items[i].rec))
                    rep.get_wrong++;
            } else if (rc != PST_ENOTFOUND) {
                rep.get_err++;
            }
        }
        char err[300] = "";
        rep.foreach_rc = pst_foreach(s, expect_one, &x, err, sizeof err);
        if (rep.foreach_rc != 0) {
            snprintf(rep.err, sizeof rep.err, "%s", err);
            if (!err[0])
                rep.get_noerrmsg++;
        }
        /* Writing into a damaged file may fail; it must not crash. */
        pst_item it = x.items[0];
        rep.put_rc = pst_put_many(s, &it, 1, err, sizeof err);
        pst_close(s);
    } else if (!rep.err[0]) {
        rep.get_noerrmsg++;
    }
    if (write(wfd, &rep, sizeof rep) != (ssize_t)sizeof rep)
        _exit(3);
    _exit(0);
}

/* Copies the reference data.mdb into a fresh directory, damages it with
 * fn (which returns the length to keep) and runs a reader over it in a
 * child. */
static void
run_damaged(const char *name, const unsigned char *orig, size_t len, size_t psize,
            size_t (*fn)(unsigned char *b, size_t len, size_t psize, void *arg), void *arg,
            const expect_ctx *x, damage_report *rep)
{
    char dir[256], file[600];
    new_store_dir(dir, sizeof dir, "pst-damfile");
    snprintf(file, sizeof file, "%s/data.mdb", dir);
    unsigned char *b = malloc(len);
    memcpy(b, orig, len);
    size_t blen = fn(b, len, psize, arg); /* the length to keep */
    write_file(file, b, blen);
    free(b);
    int fds[2];
    assert_int_equal(pipe(fds), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        close(fds[0]);
        damage_child(dir, x, fds[1]);
    }
    close(fds[1]);
    memset(rep, 0, sizeof *rep);
    ssize_t got = read(fds[0], rep, sizeof *rep);
    close(fds[0]);
    int failed = child_failed(pid, name);
    if (failed || got != (ssize_t)sizeof *rep)
        fprintf(stderr, "damage '%s': the reader crashed or hung\n", name);
    assert_false(failed);
    assert_int_equal(got, sizeof *rep);
    if (getenv("PST_TEST_VERBOSE"))
        fprintf(stderr, "  %-24s open %d, get %d ok %d errors, foreach %d (%d seen): %s\n", name,
                rep->open_rc, rep->get_ok, rep->get_err, rep->foreach_rc, rep->foreach_seen,
                rep->err);
    /* Never a wrong record, never an error without a message. */
    assert_int_equal(rep->get_wrong, 0);
    assert_int_equal(rep->foreach_wrong, 0);
    assert_int_equal(rep->get_noerrmsg, 0);
    if (rep->open_rc != 0)
        assert_true(rep->open_rc == PST_ECORRUPT || rep->open_rc == PST_EVERSION ||
                    rep->open_rc == PST_EIO);
    rm_store(dir);
}

/* Damage kinds: arg is a byte offset (or page number) as needed. */
static size_t
dmg_meta_magic(unsigned char *b, size_t len, size_t psize, void *arg)
{
    (void)len;
    (void)psize;
    (void)arg;
    b[16] ^= 0xFF; /* meta page 0: mm_magic */
    return len;
}

static size_t
dmg_meta_psize(unsigned char *b, size_t len, size_t psize, void *arg)
{
    (void)len;
    (void)psize;
    (void)arg;
    memset(b + 40, 0, 4); /* meta page 0: the page size */
    return len;
}

static size_t
dmg_meta_lastpg(unsigned char *b, size_t len, size_t psize, void *arg)
{
    (void)len;
    (void)arg;
    for (int m = 0; m < 2; m++)
        memset(b + m * psize + 136, 0x7F, 8); /* both metas: mm_last_pg */
    return len;
}

static size_t
dmg_meta_root(unsigned char *b, size_t len, size_t psize, void *arg)
{
    /* arg: the page number to point the main tree at (both metas). */
    (void)len;
    uint64_t root = *(const uint64_t *)arg;
    for (int m = 0; m < 2; m++)
        memcpy(b + m * psize + 128, &root, 8);
    return len;
}

static size_t
dmg_page(unsigned char *b, size_t len, size_t psize, void *arg)
{
    /* arg: 0 zeros, 1 0xFF, 2 random bytes, over the middle page. */
    size_t pg = (len / psize) / 2;
    int kind = (int)(intptr_t)arg;
    uint64_t s = 77;
    for (size_t i = 0; i < psize; i++)
        b[pg * psize + i] = kind == 0 ? 0 : kind == 1 ? 0xFF : (unsigned char)rng_next(&s);
    return len;
}

static size_t
dmg_truncate(unsigned char *b, size_t len, size_t psize, void *arg)
{
    (void)b;
    (void)psize;
    (void)arg;
    return len / 2;
}

typedef struct dmg_bytes {
    const uint8_t *pat; /* key and value of one record, 48 bytes */
    int at;             /* which byte of the 48 to damage */
    int hits;
} dmg_bytes;

static size_t
dmg_record(unsigned char *b, size_t len, size_t psize, void *arg)
{
    (void)psize;
    dmg_bytes *d = arg;
    d->hits = 0;
    for (size_t i = 0; i + 48 <= len; i++)
        if (memcmp(b + i, d->pat, 48) == 0) {
            b[i + (size_t)d->at] ^= 0x5A;
            d->hits++;
        }
    return len;
}

/*
 * Node-level damage of LMDB's leaf format (mdb.c: a node is data size
 * u16 lo, u16 hi, flags u16, key size u16, then the key and the data; a
 * page is an 8-byte page number, u16 pad, u16 flags, u16 lower, u16
 * upper, then the node offsets). These make an unguarded LMDB 0.9 crash.
 */
static size_t
dmg_node_dupdata(unsigned char *b, size_t len, size_t psize, void *arg)
{
    /* The node of one record marked as a set of duplicates (F_DUPDATA):
     * LMDB then writes through its NULL sub-cursor (SIGSEGV). */
    (void)psize;
    dmg_bytes *d = arg;
    d->hits = 0;
    for (size_t i = 8; i + 48 <= len; i++)
        if (memcmp(b + i, d->pat, 48) == 0) {
            b[i - 4] |= 0x04;
            d->hits++;
        }
    return len;
}

static size_t
dmg_node_offset(unsigned char *b, size_t len, size_t psize, void *arg)
{
    /* The first node offset of the last leaf page that holds one of our
     * records, pointed 65520 bytes on: past the end of the file, which
     * the map covers (SIGBUS). */
    dmg_bytes *d = arg;
    d->hits = 0;
    for (size_t pg = len / psize; pg-- > 2;) {
        const unsigned char *P = b + pg * psize;
        uint16_t flags, ksize;
        memcpy(&flags, P + 10, 2);
        if (flags != 0x02)
            continue; /* not a leaf */
        uint16_t first;
        memcpy(&first, P + 16, 2);
        if ((size_t)first + 8 + 16 > psize)
            continue;
        memcpy(&ksize, P + first + 6, 2);
        if (ksize != 16)
            continue; /* a leaf of the main or meta database */
        uint16_t far = 65520;
        memcpy(b + pg * psize + 16, &far, 2);
        d->hits = (int)pg;
        return len;
    }
    return len;
}

typedef struct dmg_random {
    uint64_t seed;
} dmg_random;

static size_t
dmg_random_bytes(unsigned char *b, size_t len, size_t psize, void *arg)
{
    dmg_random *d = arg;
    uint64_t s = d->seed;
    for (int k = 0; k < 8; k++) {
        size_t off = 2 * psize + (size_t)(rng_next(&s) % (len - 2 * psize));
        b[off] = (unsigned char)rng_next(&s);
    }
    return len;
}

/*
 * The owner label and record count (store.h, THE OWNER): unlabelled and
 * empty at first; labelled once; another label refused; the count is
 * LMDB's entry count and survives a reopen. And the meta pages' ids:
 * commit n writes page n % 2, so the two hold n - 1 and n; a damaged id
 * in the newest page, which would make LMDB fall back to an older state
 * without a word, is refused at open.
 */
/*
 * The databases' scope (store.h, THE DATABASES' SCOPE): none at first; each
 * note merges into the union (egdb_scope_union: the larger piece count
 * takes the smaller's splits, splits of one count add up, the partial flag
 * stays); survives a reopen; refused read-only.
 */
static void
test_databases_scope(void **state)
{
    (void)state;
    assert_int_equal(egdb_scope_union(5, 4), 5);
    assert_int_equal(egdb_scope_union(EGDB_SCOPE(4, 1u << 4), 5), 5);
    assert_int_equal(egdb_scope_union(EGDB_SCOPE(7, 1u << 4), EGDB_SCOPE(7, 1u << 5)),
                     EGDB_SCOPE(7, (1u << 4) | (1u << 5)));
    assert_int_equal(egdb_scope_union(6 | EGDB_SCOPE_PARTIAL, EGDB_SCOPE(7, 1u << 4)),
                     EGDB_SCOPE(7, 1u << 4) | EGDB_SCOPE_PARTIAL);
    for (int a = 0; a < 3; a++)
        for (int b = 0; b < 3; b++) {
            const int sc[3] = {4, EGDB_SCOPE(4, 1u << 3) | EGDB_SCOPE_PARTIAL,
                               EGDB_SCOPE(4, 1u << 4)};
            int u = egdb_scope_union(sc[a], sc[b]);
            assert_true(egdb_scope_within(sc[a], u) && egdb_scope_within(sc[b], u));
            assert_int_equal(u, egdb_scope_union(sc[b], sc[a]));
        }

    char dir[256], err[512];
    int sc = -1;
    new_store_dir(dir, sizeof dir, "pst-scope");
    pst_env *s = open_rw(dir);
    assert_int_equal(pst_scope(s, &sc, err, sizeof err), 0);
    assert_int_equal(sc, 0);
    assert_int_equal(pst_scope_note(s, 5, err, sizeof err), 0);
    assert_int_equal(pst_scope_note(s, 4, err, sizeof err), 0); /* within: no change */
    assert_int_equal(pst_scope(s, &sc, err, sizeof err), 0);
    assert_int_equal(sc, 5);
    assert_int_equal(
        pst_scope_note(s, EGDB_SCOPE(5, 1u << 4) | EGDB_SCOPE_PARTIAL, err, sizeof err), 0);
    pst_close(s);
    s = NULL;
    assert_int_equal(pst_open(dir, PST_RDONLY, &s, err, sizeof err), 0);
    assert_int_equal(pst_scope(s, &sc, err, sizeof err), 0);
    assert_int_equal(sc, EGDB_SCOPE(5, 1u << 4) | EGDB_SCOPE_PARTIAL);
    assert_int_equal(pst_scope_note(s, 6, err, sizeof err), PST_EREADONLY);
    pst_close(s);

    /* A value of another size (a later format): read as "not recorded",
     * left as it is, and never taken for damage: records are still
     * written. */
    MDB_env *env = raw_open(dir);
    const unsigned char eight[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    raw_put(env, "meta", "egdb-scope", 10, eight, sizeof eight);
    mdb_env_close(env);
    s = open_rw(dir);
    assert_int_equal(pst_scope(s, &sc, err, sizeof err), 0);
    assert_int_equal(sc, 0);
    assert_int_equal(pst_scope_note(s, 7, err, sizeof err), 0);
    eng_pos *ps = gen_positions(5, 1, 1);
    uint64_t rs = 5;
    pst_item it = item_make(&ps[0], rec_random(&ps[0], &rs));
    assert_int_equal(put_items(s, &it, 1, err, sizeof err), 0);
    free(ps);
    pst_close(s);
    env = raw_open(dir);
    MDB_txn *txn;
    MDB_dbi meta;
    MDB_val k = {10, "egdb-scope"}, v;
    assert_int_equal(mdb_txn_begin(env, NULL, MDB_RDONLY, &txn), 0);
    assert_int_equal(mdb_dbi_open(txn, "meta", 0, &meta), 0);
    assert_int_equal(mdb_get(txn, meta, &k, &v), 0);
    assert_int_equal(v.mv_size, sizeof eight);
    mdb_txn_abort(txn);
    mdb_env_close(env);
}

static void
test_owner_and_meta_ids(void **state)
{
    (void)state;
    char dir[256], file[600], err[512], label[PST_OWNER_MAX];
    uint64_t n = 99;
    new_store_dir(dir, sizeof dir, "pst-owner");
    pst_env *s = open_rw(dir);
    assert_int_equal(pst_owner(s, label, sizeof label, &n, err, sizeof err), 0);
    assert_string_equal(label, "");
    assert_int_equal(n, 0);
    assert_int_equal(pst_owner_set(s, "tree-0123", err, sizeof err), 0);
    assert_int_equal(pst_owner_set(s, "tree-0123", err, sizeof err), 0); /* the same: fine */
    assert_int_equal(pst_owner_set(s, "tree-4567", err, sizeof err), PST_ECONTRADICT);
    assert_non_null(strstr(err, "tree-0123"));
    assert_int_equal(pst_owner_set(s, "", err, sizeof err), PST_EINVAL);
    eng_pos *ps = gen_positions(7, 40, 1);
    uint64_t rs = 3;
    for (int c = 0; c < 8; c++) { /* eight commits of five records */
        pst_item it[5];
        for (int i = 0; i < 5; i++)
            it[i] = item_make(&ps[5 * c + i], rec_random(&ps[5 * c + i], &rs));
        assert_int_equal(put_items(s, it, 5, err, sizeof err), 0);
    }
    pst_close(s);
    s = NULL;
    assert_int_equal(pst_open(dir, PST_RDONLY, &s, err, sizeof err), 0);
    assert_int_equal(pst_owner(s, label, sizeof label, &n, err, sizeof err), 0);
    assert_string_equal(label, "tree-0123");
    pst_stats st;
    assert_int_equal(pst_stats_get(s, &st, err, sizeof err), 0);
    assert_int_equal(n, st.records);
    assert_true(n >= 35); /* canonical duplicates merge */
    assert_int_equal(pst_owner_set(s, "tree-0123", err, sizeof err), PST_EREADONLY);
    pst_close(s);

    snprintf(file, sizeof file, "%s/data.mdb", dir);
    size_t len;
    unsigned char *orig = read_file(file, &len);
    uint32_t psize;
    memcpy(&psize, orig + 40, 4);
    uint64_t t[2];
    memcpy(&t[0], orig + 144, 8);
    memcpy(&t[1], orig + psize + 144, 8);
    assert_int_equal(t[0] % 2, 0);
    assert_int_equal(t[1] % 2, 1);
    assert_true(t[0] + 1 == t[1] || t[1] + 1 == t[0]);
    int newest = t[1] > t[0];
    assert_true(t[newest] >= 6);
    /* the newest page's id lowered by 4 (its parity kept): LMDB would
     * take the older page */
    uint64_t low = t[newest] - 4;
    memcpy(orig + (size_t)newest * psize + 144, &low, 8);
    write_file(file, orig, len);
    s = NULL;
    assert_int_equal(pst_open(dir, PST_RDONLY, &s, err, sizeof err), PST_ECORRUPT);
    assert_null(s);
    assert_non_null(strstr(err, "no sequence of commits"));
    free(orig);
    free(ps);
    rm_store(dir);
}

static void
test_damaged_file(void **state)
{
    (void)state;
    char dir[256], file[600], err[512];
    new_store_dir(dir, sizeof dir, "pst-damref");
    pst_env *s = open_rw(dir);
    enum { N = 3000 };
    eng_pos *ps = gen_positions(31, N, 1);
    pst_item *items = malloc(N * sizeof *items);
    uint64_t rs = 9;
    for (int i = 0; i < N; i++) {
        /* Expected records are kept canonical (what pst_foreach shows). */
        eng_pos c = eng_canonical(&ps[i]);
        items[i] = item_make(&c, rec_random(&c, &rs));
    }
    /* One commit: every page but the metas is part of the live tree. */
    assert_int_equal(put_items(s, items, N, err, sizeof err), 0);
    pst_close(s);
    qsort(items, N, sizeof *items, expect_cmp);
    snprintf(file, sizeof file, "%s/data.mdb", dir);
    size_t len;
    unsigned char *orig = read_file(file, &len);
    uint32_t psize32;
    memcpy(&psize32, orig + 40, 4);
    size_t psize = psize32;
    assert_true(psize >= 512 && len >= 20 * psize);
    expect_ctx x = {items, N, NULL};
    damage_report rep;

    /* The header page: refused at open, with a message. */
    run_damaged("meta magic", orig, len, psize, dmg_meta_magic, NULL, &x, &rep);
    assert_int_equal(rep.open_rc, PST_ECORRUPT);
    assert_non_null(strstr(rep.err, "LMDB"));
    run_damaged("meta page size", orig, len, psize, dmg_meta_psize, NULL, &x, &rep);
    assert_int_equal(rep.open_rc, PST_ECORRUPT);
    assert_non_null(strstr(rep.err, "page size"));
    run_damaged("meta last page", orig, len, psize, dmg_meta_lastpg, NULL, &x, &rep);
    assert_int_equal(rep.open_rc, PST_ECORRUPT);
    uint64_t root = len / psize + 5; /* past the end of the file */
    run_damaged("meta root past the end", orig, len, psize, dmg_meta_root, &root, &x, &rep);
    assert_int_equal(rep.open_rc, PST_ECORRUPT);
    /* A root on another page of the file: a page of the wrong kind, or an
     * older tree (the reader then finds fewer records, never wrong ones). */
    for (root = 2; root < 6; root++)
        run_damaged("meta root moved", orig, len, psize, dmg_meta_root, &root, &x, &rep);
    run_damaged("truncated", orig, len, psize, dmg_truncate, NULL, &x, &rep);
    assert_int_not_equal(rep.open_rc, 0);

    /* The middle of the file: a page of zeros, of 0xFF, of noise. Every
     * page is live, so the damage must be seen. */
    for (intptr_t kind = 0; kind < 3; kind++) {
        run_damaged("middle page", orig, len, psize, dmg_page, (void *)kind, &x, &rep);
        assert_true(rep.open_rc != 0 || rep.get_err > 0 || rep.foreach_rc != 0);
        if (rep.open_rc == 0) {
            assert_true(rep.get_ok < N);
            assert_true(rep.foreach_rc != 0 && rep.err[0] != '\0');
        }
    }

    /* A record page: the value bytes, then the key bytes, of one record
     * (every copy of them in the file). */
    const pst_item *victim = &items[N / 3];
    uint8_t pat[48];
    key_of(&victim->pos, pat);
    pst_encode(pat, &victim->rec, pat + 16);
    dmg_bytes d = {pat, 16 + 20, 0};
    run_damaged("record value", orig, len, psize, dmg_record, &d, &x, &rep);
    assert_true(d.hits >= 1);
    assert_int_equal(rep.open_rc, 0);
    assert_int_equal(rep.get_err, 1);
    assert_int_equal(rep.get_ok, N - 1);
    assert_int_equal(rep.foreach_rc, PST_ECORRUPT);
    char fen[ENG_FEN_MAX];
    eng_format_fen(&victim->pos, fen, sizeof fen);
    assert_non_null(strstr(rep.err, fen));
    d.at = 15; /* the last key byte: the key keeps its place in the order */
    run_damaged("record key", orig, len, psize, dmg_record, &d, &x, &rep);
    assert_true(d.hits >= 1);
    assert_int_equal(rep.open_rc, 0);
    assert_int_equal(rep.get_ok, N - 1);
    assert_int_equal(rep.foreach_rc, PST_ECORRUPT);
    assert_non_null(strstr(rep.err, "checksum"));

    /* Damage that makes LMDB itself fault: reported, never a crash. */
    run_damaged("node flags", orig, len, psize, dmg_node_dupdata, &d, &x, &rep);
    assert_true(d.hits >= 1);
    assert_int_equal(rep.open_rc, 0);
    assert_int_equal(rep.get_ok, N - 1);
    assert_int_equal(rep.get_err, 1);
    assert_int_equal(rep.foreach_rc, PST_ECORRUPT);
    assert_non_null(strstr(rep.err, "SIGSEGV"));
    assert_int_equal(rep.put_rc, PST_ECORRUPT); /* no writing after damage */
    run_damaged("node offset", orig, len, psize, dmg_node_offset, &d, &x, &rep);
    assert_true(d.hits > 2);
    /* The damaged offset points past the end of the file. */
    assert_true((size_t)d.hits * psize + 65520 >= len);
    assert_int_equal(rep.open_rc, 0);
    assert_true(rep.get_err >= 1);
    assert_int_equal(rep.foreach_rc, PST_ECORRUPT);
    assert_non_null(strstr(rep.err, "SIGBUS"));

    /* Scattered single bytes past the metas. */
    int seeds = test_sanitized() ? 4 : 12;
    for (int k = 0; k < seeds; k++) {
        dmg_random dr = {1000u + (uint64_t)k};
        run_damaged("random bytes", orig, len, psize, dmg_random_bytes, &dr, &x, &rep);
    }
    free(orig);
    free(items);
    free(ps);
    rm_store(dir);
}

/* ---- crashes and concurrency ------------------------------------------ */

/*
 * The SIGKILL test's batches: round r, batch k holds KB_SIZE positions
 * of its own (disjoint from every other batch), each written with effort
 * = the batch's number; its last record is the marker (length 1).
 */
enum { KB_ROUNDS = 4, KB_BATCHES = 30, KB_SIZE = 400 };

static pst_item
kill_item(const eng_pos *pool, int round, int k, int j)
{
    int batch = round * KB_BATCHES + k;
    const eng_pos *p = &pool[(size_t)batch * KB_SIZE + (size_t)j];
    return item_make(
        p, rec_make((eng_bound)(batch % 5), (uint64_t)batch + 1, (uint16_t)(j == KB_SIZE - 1)));
}

static void
kill_writer(const char *dir, const eng_pos *pool, int round)
{
    pst_item *b = malloc(KB_SIZE * sizeof *b);
    char err[512];
    pst_env *s = NULL;
    if (!b || pst_open(dir, 0, &s, err, sizeof err) != 0)
        _exit(2);
    for (int k = 0; k < KB_BATCHES; k++) {
        for (int j = 0; j < KB_SIZE; j++)
            b[j] = kill_item(pool, round, k, j);
        if (pst_put_many(s, b, KB_SIZE, err, sizeof err) != 0)
            _exit(3);
    }
    pst_close(s);
    _exit(0);
}

static void
test_sigkill_mid_transaction(void **state)
{
    (void)state;
    char dir[256], err[512];
    new_store_dir(dir, sizeof dir, "pst-kill");
    eng_pos *pool = gen_positions(41, (size_t)KB_ROUNDS * KB_BATCHES * KB_SIZE, 0);
    uint64_t rs = (uint64_t)time(NULL) | 1;
    int partial_rounds = 0;
    for (int round = 0; round < KB_ROUNDS; round++) {
        pid_t pid = fork();
        assert_true(pid >= 0);
        if (pid == 0)
            kill_writer(dir, pool, round);
        /* The first kill comes early (maybe before the store exists),
         * the others somewhere in the run. */
        nap_ms(round == 0 ? 1 + (long)(rng_next(&rs) % 5) : 5 + (long)(rng_next(&rs) % 120));
        kill(pid, SIGKILL);
        int st;
        assert_int_equal(waitpid(pid, &st, 0), pid);
        assert_true((WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL) ||
                    (WIFEXITED(st) && WEXITSTATUS(st) == 0));

        /* Reopen as a restarted solver would: every batch of every round
         * so far is all there or not there at all, and a round's batches
         * committed in order. */
        pst_env *s = NULL;
        int rc = pst_open(dir, 0, &s, err, sizeof err);
        if (rc != 0)
            fprintf(stderr, "reopen after SIGKILL: %s\n", err);
        assert_int_equal(rc, 0);
        for (int r = 0; r <= round; r++) {
            int committed = 0, gap = 0;
            for (int k = 0; k < KB_BATCHES; k++) {
                int present = 0;
                for (int j = 0; j < KB_SIZE; j++) {
                    pst_item want = kill_item(pool, r, k, j);
                    pst_record got;
                    int g = pst_get(s, &want.pos, &got);
                    assert_true(g == 0 || g == PST_ENOTFOUND);
                    if (g == 0) {
                        assert_true(rec_equal(&got, &want.rec));
                        present++;
                    }
                }
                assert_true(present == 0 || present == KB_SIZE);
                if (present) {
                    assert_false(gap);
                    committed++;
                } else {
                    gap = 1;
                }
            }
            if (r == round && committed > 0 && committed < KB_BATCHES)
                partial_rounds++;
        }
        pst_close(s);
    }
    /* Not an assertion on timing: how many kills landed mid-run. */
    fprintf(stderr, "  (kills that landed mid-run: %d of %d)\n", partial_rounds, KB_ROUNDS);
    free(pool);
    rm_store(dir);
}

/* Two writers: A writes DW with a draw move for [0, 2N/3), B writes LD
 * for [N/3, N) through the twins; the middle third merges to DD. */
enum { TW_N = 3000, TW_BATCH = 100 };

static pst_item
two_item(const eng_pos *pool, int who, int i)
{
    if (who == 0) {
        eng_movelist l;
        int n = eng_generate(&pool[i], &l, ENG_DUPS_MERGE);
        pst_record r = rec_make(ENG_DW, 10, 0);
        r.draw = pst_move_of(&l.m[i % n]);
        return item_make(&pool[i], r);
    }
    eng_pos f = eng_flip(&pool[i]);
    return item_make(&f, rec_make(ENG_LD, 20, 0));
}

static void
two_writer(const char *dir, const eng_pos *pool, int who)
{
    /* A small map in both: they grow it under each other's feet. */
    setenv("CHECKERS_PST_MAP_BYTES", "65536", 1);
    char err[512];
    pst_env *s = NULL;
    if (pst_open(dir, 0, &s, err, sizeof err) != 0) {
        fprintf(stderr, "writer %d: %s\n", who, err);
        _exit(2);
    }
    int lo = who == 0 ? 0 : TW_N / 3, hi = who == 0 ? 2 * TW_N / 3 : TW_N;
    pst_item b[TW_BATCH];
    for (int i = lo; i < hi; i += TW_BATCH) {
        int n = 0;
        for (int j = i; j < hi && n < TW_BATCH; j++)
            b[n++] = two_item(pool, who, j);
        if (pst_put_many(s, b, (size_t)n, err, sizeof err) != 0) {
            fprintf(stderr, "writer %d: %s\n", who, err);
            _exit(3);
        }
    }
    pst_close(s);
    _exit(0);
}

static void
test_two_writers(void **state)
{
    (void)state;
    char dir[256], err[512];
    new_store_dir(dir, sizeof dir, "pst-two");
    eng_pos *pool = gen_positions(51, TW_N, 1);
    pid_t pid[2];
    for (int w = 0; w < 2; w++) {
        pid[w] = fork();
        assert_true(pid[w] >= 0);
        if (pid[w] == 0)
            two_writer(dir, pool, w);
    }
    int failed = child_failed(pid[0], "writer 0");
    failed |= child_failed(pid[1], "writer 1");
    assert_false(failed);
    pst_env *s = NULL;
    assert_int_equal(pst_open(dir, PST_RDONLY, &s, err, sizeof err), 0);
    for (int i = 0; i < TW_N; i++) {
        pst_record r;
        assert_int_equal(pst_get(s, &pool[i], &r), 0);
        pst_item a = two_item(pool, 0, i);
        if (i < TW_N / 3) {
            assert_true(rec_equal(&r, &a.rec));
        } else if (i < 2 * TW_N / 3) {
            assert_int_equal(r.bound, ENG_DD);
            assert_true(move_equal(&r.draw, &a.rec.draw));
            assert_int_equal(r.effort, 20);
        } else {
            pst_record want = rec_make(ENG_LD, 20, 0);
            assert_true(rec_equal(&r, &want));
        }
    }
    pst_stats st;
    assert_int_equal(pst_stats_get(s, &st, err, sizeof err), 0);
    assert_int_equal(st.records, TW_N);
    assert_int_equal(st.by_bound[ENG_DD], 2 * TW_N / 3 - TW_N / 3);
    pst_close(s);
    free(pool);
    rm_store(dir);
}

/* ---- the map ----------------------------------------------------------- */

static void
test_map_growth(void **state)
{
    (void)state;
    char dir[256], err[512];
    new_store_dir(dir, sizeof dir, "pst-grow");
    setenv("CHECKERS_PST_MAP_BYTES", "65536", 1);
    pst_env *s = open_rw(dir);
    pst_stats st;
    assert_int_equal(pst_stats_get(s, &st, err, sizeof err), 0);
    assert_int_equal(st.map_bytes, 65536);

    enum { N = 4000 };
    eng_pos *ps = gen_positions(61, N, 1);
    pst_item *items = malloc(N * sizeof *items);
    uint64_t rs = 1;
    for (int i = 0; i < N; i++)
        items[i] = item_make(&ps[i], rec_random(&ps[i], &rs));
    /* Small batches, then one batch bigger than the map has room for. */
    for (int i = 0; i < 1000; i += 100)
        assert_int_equal(put_items(s, items + i, 100, err, sizeof err), 0);
    assert_int_equal(put_items(s, items + 1000, N - 1000, err, sizeof err), 0);
    assert_int_equal(pst_stats_get(s, &st, err, sizeof err), 0);
    assert_int_equal(st.records, N);
    assert_true(st.map_bytes >= 8 * 65536);
    assert_true(st.used_bytes <= st.map_bytes);
    /* Doubling from 64 KiB: a power of two. */
    assert_int_equal(st.map_bytes & (st.map_bytes - 1), 0);
    for (int i = 0; i < N; i++) {
        pst_record r;
        assert_int_equal(pst_get(s, &ps[i], &r), 0);
        assert_true(rec_equal(&r, &items[i].rec));
    }
    pst_close(s);
    unsetenv("CHECKERS_PST_MAP_BYTES");
    free(items);
    free(ps);
    rm_store(dir);
}

/* Another process grows the map while this one holds the store open with
 * a small one: the next transaction here sees MDB_MAP_RESIZED. */
static void
test_map_resized_by_other(void **state)
{
    (void)state;
    char dir[256], err[512];
    new_store_dir(dir, sizeof dir, "pst-resized");
    setenv("CHECKERS_PST_MAP_BYTES", "65536", 1);
    pst_env *s = open_rw(dir);
    enum { N = 3000 };
    eng_pos *ps = gen_positions(71, N + 10, 1);
    pst_item *items = malloc((N + 10) * sizeof *items);
    uint64_t rs = 2;
    for (int i = 0; i < N + 10; i++)
        items[i] = item_make(&ps[i], rec_random(&ps[i], &rs));
    assert_int_equal(put_items(s, items, 10, err, sizeof err), 0);
    pst_record r;
    assert_int_equal(pst_get(s, &ps[0], &r), 0); /* leaves a pooled reader */

    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        pst_env *c = NULL;
        if (pst_open(dir, 0, &c, err, sizeof err) != 0 ||
            pst_put_many(c, items + 10, N, err, sizeof err) != 0)
            _exit(2);
        pst_close(c);
        _exit(0);
    }
    assert_false(child_failed(pid, "grower"));
    for (int i = 0; i < N + 10; i++) {
        assert_int_equal(pst_get(s, &ps[i], &r), 0);
        assert_true(rec_equal(&r, &items[i].rec));
    }
    pst_item more = item_make(&ps[5], rec_make(items[5].rec.bound, 1, 0));
    assert_int_equal(put_items(s, &more, 1, err, sizeof err), 0);
    pst_stats st;
    assert_int_equal(pst_stats_get(s, &st, err, sizeof err), 0);
    assert_int_equal(st.records, N + 10);
    assert_true(st.map_bytes > 65536);
    pst_close(s);
    unsetenv("CHECKERS_PST_MAP_BYTES");
    free(items);
    free(ps);
    rm_store(dir);
}

/* ---- threads ----------------------------------------------------------- */

/* Threads of one process sharing one pst_env: each writes its own
 * positions in small batches and reads everyone's, while the map grows
 * from 64 KiB under them (resizes wait for every transaction). */
enum { TH_N = 4, TH_EACH = 1500, TH_BATCH = 50 };

typedef struct thread_ctx {
    pst_env *s;
    const pst_item *items; /* TH_N * TH_EACH, thread t owns [t*TH_EACH, ...) */
    int t;
    int failures;
} thread_ctx;

static void *
thread_main(void *arg)
{
    thread_ctx *c = arg;
    uint64_t rs = 100 + (uint64_t)c->t;
    char err[512];
    for (int i = 0; i < TH_EACH; i += TH_BATCH) {
        const pst_item *mine = c->items + (size_t)c->t * TH_EACH + i;
        if (pst_put_many(c->s, mine, TH_BATCH, err, sizeof err) != 0) {
            fprintf(stderr, "thread %d: %s\n", c->t, err);
            c->failures++;
            return NULL;
        }
        /* Everything this thread wrote is there; others' records are
         * there or not yet, and never different. */
        for (int k = 0; k < 40; k++) {
            int own = k % 2 == 0;
            size_t j = own ? (size_t)c->t * TH_EACH + rng_next(&rs) % (uint64_t)(i + TH_BATCH)
                           : rng_next(&rs) % (TH_N * TH_EACH);
            pst_record r;
            int rc = pst_get(c->s, &c->items[j].pos, &r);
            if ((rc == 0 && !rec_equal(&r, &c->items[j].rec)) || (own && rc != 0) ||
                (rc != 0 && rc != PST_ENOTFOUND))
                c->failures++;
        }
    }
    return NULL;
}

static void
test_threads_share_one_env(void **state)
{
    (void)state;
    char dir[256], err[512];
    new_store_dir(dir, sizeof dir, "pst-threads");
    setenv("CHECKERS_PST_MAP_BYTES", "65536", 1);
    pst_env *s = open_rw(dir);
    unsetenv("CHECKERS_PST_MAP_BYTES");
    eng_pos *ps = gen_positions(81, TH_N * TH_EACH, 1);
    pst_item *items = malloc(TH_N * TH_EACH * sizeof *items);
    uint64_t rs = 4;
    for (int i = 0; i < TH_N * TH_EACH; i++)
        items[i] = item_make(&ps[i], rec_random(&ps[i], &rs));
    pthread_t th[TH_N];
    thread_ctx ctx[TH_N];
    for (int t = 0; t < TH_N; t++) {
        ctx[t] = (thread_ctx){s, items, t, 0};
        assert_int_equal(pthread_create(&th[t], NULL, thread_main, &ctx[t]), 0);
    }
    for (int t = 0; t < TH_N; t++) {
        assert_int_equal(pthread_join(th[t], NULL), 0);
        assert_int_equal(ctx[t].failures, 0);
    }
    pst_stats st;
    assert_int_equal(pst_stats_get(s, &st, err, sizeof err), 0);
    assert_int_equal(st.records, TH_N * TH_EACH);
    assert_true(st.map_bytes > 65536);
    for (int i = 0; i < TH_N * TH_EACH; i++) {
        pst_record r;
        assert_int_equal(pst_get(s, &ps[i], &r), 0);
        assert_true(rec_equal(&r, &items[i].rec));
    }
    pst_close(s);
    free(items);
    free(ps);
    rm_store(dir);
}

/* ---- a store inside a caller's environment ------------------------------ */

/* The caller's side of one transaction: its own record "k" = "v" in its
 * database "other", and a batch of the store's. */
typedef struct in_txn_arg {
    pst_env *s;
    MDB_dbi other;
    const pst_item *items;
    size_t n;
    int fail; /* the body refuses at the end: nothing of it may stay */
    int runs;
} in_txn_arg;

#define IN_REFUSED (-4242) /* a caller's own code: comes back as it is */

static int
in_txn_body(MDB_txn *txn, void *arg, char *err, size_t errlen)
{
    in_txn_arg *a = arg;
    a->runs++;
    MDB_val k = {1, (void *)"k"}, v = {1, (void *)"v"};
    int rc = mdb_put(txn, a->other, &k, &v, 0);
    if (rc == 0)
        rc = pst_put_many_txn(a->s, txn, a->items, a->n, err, errlen);
    return rc == 0 && a->fail ? IN_REFUSED : rc;
}

/* Whether the caller's record is there (a read through the store). */
static int
in_read_body(MDB_txn *txn, void *arg, char *err, size_t errlen)
{
    (void)err;
    (void)errlen;
    in_txn_arg *a = arg;
    MDB_val k = {1, (void *)"k"}, v;
    int rc = mdb_get(txn, a->other, &k, &v);
    return rc == MDB_NOTFOUND ? 1 : rc;
}

static MDB_env *
caller_env(const char *dir, MDB_dbi *other)
{
    MDB_env *env;
    MDB_txn *txn;
    assert_int_equal(mdb_env_create(&env), 0);
    assert_int_equal(mdb_env_set_maxdbs(env, 8), 0);
    assert_int_equal(mdb_env_set_mapsize(env, (size_t)1 << 24), 0);
    assert_int_equal(mdb_env_open(env, dir, MDB_NOTLS, 0644), 0);
    assert_int_equal(mdb_txn_begin(env, NULL, 0, &txn), 0);
    assert_int_equal(mdb_dbi_open(txn, "other", MDB_CREATE, other), 0);
    assert_int_equal(mdb_txn_commit(txn), 0);
    return env;
}

/*
 * A store opened inside a caller's environment (issue 42): created there
 * beside the caller's own database; one pst_txn_write commits the
 * caller's record and the store's batch together, or, when the body
 * refuses or the batch contradicts, neither; the caller's own code comes
 * back as it was; after the caller closes everything, pst_open on the
 * folder reads the same store, and pst_open_in read-only on an
 * environment without a store refuses it.
 */
static void
test_store_inside_callers_env(void **state)
{
    (void)state;
    char dir[256], dir2[256], err[512];
    new_store_dir(dir, sizeof dir, "pst-in");
    new_store_dir(dir2, sizeof dir2, "pst-in-none");
    MDB_dbi other;
    MDB_env *env = caller_env(dir, &other);
    pst_env *s = NULL;
    assert_int_equal(pst_open_in(env, dir, 0, &s, err, sizeof err), 0);
    assert_string_equal(pst_path(s), dir);

    eng_pos *ps = gen_positions(91, 40, 1);
    pst_item items[40];
    uint64_t rs = 7;
    for (int i = 0; i < 40; i++)
        items[i] = item_make(&ps[i], rec_random(&ps[i], &rs));
    items[0].rec = rec_make(ENG_LL, 5, 3);
    in_txn_arg a = {s, other, items, 20, 1, 0};
    /* refused by the body: neither the caller's record nor the batch */
    assert_int_equal(pst_txn_write(s, in_txn_body, &a, err, sizeof err), IN_REFUSED);
    assert_int_equal(pst_txn_read(s, in_read_body, &a, err, sizeof err), 1);
    pst_record r;
    assert_int_equal(pst_get(s, &ps[0], &r), PST_ENOTFOUND);
    /* committed: both */
    a.fail = 0;
    assert_int_equal(pst_txn_write(s, in_txn_body, &a, err, sizeof err), 0);
    assert_int_equal(pst_txn_read(s, in_read_body, &a, err, sizeof err), 0);
    for (int i = 0; i < 20; i++) {
        assert_int_equal(pst_get(s, &ps[i], &r), 0);
        assert_true(rec_equal(&r, &items[i].rec));
    }
    /* a batch that contradicts a stored record: the store's code, nothing
     * of the transaction written (the caller's record deleted first) */
    pst_item bad[2] = {items[20], items[0]};
    bad[1].rec = rec_make(ENG_DD, 1, 0);
    MDB_txn *txn;
    MDB_val k = {1, (void *)"k"};
    assert_int_equal(mdb_txn_begin(env, NULL, 0, &txn), 0);
    assert_int_equal(mdb_del(txn, other, &k, NULL), 0);
    assert_int_equal(mdb_txn_commit(txn), 0);
    in_txn_arg b = {s, other, bad, 2, 0, 0};
    assert_int_equal(pst_txn_write(s, in_txn_body, &b, err, sizeof err), PST_ECONTRADICT);
    assert_int_equal(pst_txn_read(s, in_read_body, &a, err, sizeof err), 1);
    assert_int_equal(pst_get(s, &ps[20], &r), PST_ENOTFOUND);
    /* pst_put_many on the borrowed environment, too */
    assert_int_equal(pst_put_many(s, items + 30, 10, err, sizeof err), 0);
    pst_stats st;
    assert_int_equal(pst_stats_get(s, &st, err, sizeof err), 0);
    uint64_t want = st.records;
    pst_close(s);
    mdb_env_close(env); /* the caller's: still open after pst_close */

    /* the same folder through pst_open: the same store */
    pst_env *s2 = NULL;
    assert_int_equal(pst_open(dir, PST_RDONLY, &s2, err, sizeof err), 0);
    assert_int_equal(pst_stats_get(s2, &st, err, sizeof err), 0);
    assert_int_equal(st.records, want);
    assert_int_equal(pst_get(s2, &ps[35], &r), 0);
    assert_true(rec_equal(&r, &items[35].rec));
    assert_int_equal(pst_put_many(s2, items, 1, err, sizeof err), PST_EREADONLY);
    pst_close(s2);

    /* read-only inside an environment that has no store: refused */
    MDB_dbi o2;
    MDB_env *env2 = caller_env(dir2, &o2);
    s2 = NULL;
    assert_int_equal(pst_open_in(env2, dir2, PST_RDONLY, &s2, err, sizeof err), PST_EVERSION);
    assert_null(s2);
    mdb_env_close(env2);
    free(ps);
    rm_store(dir);
    rm_store(dir2);
}

/*
 * The scope (store.h, ONE TRANSACTION): inside it the thread's writes
 * (pst_put_many, pst_txn_write, pst_owner_set) and reads (pst_get,
 * pst_owner, pst_stats_get) share one write transaction: the reads see
 * the writes, a write that fails takes back only its own, and nothing
 * reaches the file before pst_txn_end commits; ended without a commit,
 * nothing of it stays. A second scope, or an end with none, is refused.
 */
static void
test_scope_one_transaction(void **state)
{
    (void)state;
    char dir[256], err[512], label[PST_OWNER_MAX];
    new_store_dir(dir, sizeof dir, "pst-scope");
    pst_env *s = open_rw(dir);
    eng_pos *ps = gen_positions(93, 30, 1);
    pst_item items[30];
    uint64_t rs = 9, recs;
    for (int i = 0; i < 30; i++)
        items[i] = item_make(&ps[i], rec_random(&ps[i], &rs));
    items[0].rec = rec_make(ENG_LL, 5, 3);
    pst_record r;
    for (int commit = 0; commit < 2; commit++) {
        assert_int_equal(pst_txn_begin(s, err, sizeof err), 0);
        assert_int_equal(pst_txn_begin(s, err, sizeof err), PST_EINVAL);
        assert_int_equal(pst_put_many(s, items, 10, err, sizeof err), 0);
        assert_int_equal(pst_get(s, &ps[3], &r), 0); /* seen inside */
        assert_true(rec_equal(&r, &items[3].rec));
        /* a batch that fails takes back its own writes only */
        pst_item bad[2] = {items[10], items[0]};
        bad[1].rec = rec_make(ENG_DD, 1, 0);
        assert_int_equal(pst_put_many(s, bad, 2, err, sizeof err), PST_ECONTRADICT);
        assert_int_equal(pst_get(s, &ps[10], &r), PST_ENOTFOUND);
        assert_int_equal(pst_owner_set(s, "scope-test", err, sizeof err), 0);
        assert_int_equal(pst_owner(s, label, sizeof label, &recs, err, sizeof err), 0);
        assert_true(recs == 10 && !strcmp(label, "scope-test"));
        assert_int_equal(pst_txn_end(s, commit, err, sizeof err), 0);
        assert_int_equal(pst_txn_end(s, commit, err, sizeof err), PST_EINVAL);
        assert_int_equal(pst_owner(s, label, sizeof label, &recs, err, sizeof err), 0);
        if (!commit) { /* dropped whole */
            assert_true(recs == 0 && label[0] == 0);
            assert_int_equal(pst_get(s, &ps[3], &r), PST_ENOTFOUND);
        } else { /* kept whole */
            assert_true(recs == 10 && !strcmp(label, "scope-test"));
            assert_int_equal(pst_get(s, &ps[3], &r), 0);
        }
    }
    pst_close(s);
    /* what the commit kept is in the file */
    s = open_rw(dir);
    assert_int_equal(pst_get(s, &ps[9], &r), 0);
    assert_true(rec_equal(&r, &items[9].rec));
    pst_close(s);
    free(ps);
    rm_store(dir);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_encode_decode_roundtrip),
        cmocka_unit_test(test_move_find_roundtrip),
        cmocka_unit_test(test_fuzz_decode),
        cmocka_unit_test(test_item_codec),
        cmocka_unit_test(test_roundtrip_orientations),
        cmocka_unit_test(test_stats_and_foreach),
        cmocka_unit_test(test_merge_rules),
        cmocka_unit_test(test_batch_merges_as_one_at_a_time),
        cmocka_unit_test(test_contradiction_refuses_batch),
        cmocka_unit_test(test_invalid_records),
        cmocka_unit_test(test_other_versions_refused),
        cmocka_unit_test(test_open_errors),
        cmocka_unit_test(test_damaged_records),
        cmocka_unit_test(test_owner_and_meta_ids),
        cmocka_unit_test(test_damaged_file),
        cmocka_unit_test(test_sigkill_mid_transaction),
        cmocka_unit_test(test_two_writers),
        cmocka_unit_test(test_map_growth),
        cmocka_unit_test(test_map_resized_by_other),
        cmocka_unit_test(test_threads_share_one_env),
        cmocka_unit_test(test_store_inside_callers_env),
        cmocka_unit_test(test_scope_one_transaction),
        cmocka_unit_test(test_databases_scope),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
