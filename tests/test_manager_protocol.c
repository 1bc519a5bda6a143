/*
 * test_manager_protocol.c - the manager-worker wire protocol codec
 * (manager/protocol.h): every message's layout against bytes written
 * here from the header's description, round trips with extreme values,
 * PROOF frames of real store records in both orientations, mgp_peek on
 * every prefix, the decoder's refusals (each with a message naming the
 * field), a fuzz run of mutated frames, and the token comparison.
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

#include "engine/engine.h"
#include "engine/value.h"
#include "manager/protocol.h"
#include "prover/store.h"
#include "tests/test_store_util.h"
#include "tests/test_util.h"

/* ---- helpers ---------------------------------------------------------- */

/* A store item for p as a solver writes one: a bound, and win / draw
 * moves taken from p's legal moves where the bound allows them. Every
 * third item is a win with both moves, so both kinds are well covered. */
static pst_item
item_random(const eng_pos *p, uint64_t *s)
{
    eng_movelist l;
    int nm = eng_generate(p, &l, ENG_DUPS_MERGE);
    assert_true(nm > 0);
    pst_item it;
    it.pos = *p;
    it.rec.bound = (eng_bound)(rng_next(s) % 3 == 0 ? ENG_WW : rng_next(s) % 5);
    it.rec.win.from = PST_NOMOVE;
    it.rec.draw.from = PST_NOMOVE;
    it.rec.win.to = it.rec.draw.to = 0;
    it.rec.win.captured = it.rec.draw.captured = 0;
    it.rec.effort = rng_next(s);
    it.rec.length = (uint16_t)rng_next(s);
    if (it.rec.bound == ENG_WW)
        it.rec.win = pst_move_of(&l.m[rng_next(s) % (uint64_t)nm]);
    if (it.rec.bound >= ENG_DD && it.rec.bound != ENG_LW &&
        (it.rec.bound == ENG_WW || rng_next(s) % 2))
        it.rec.draw = pst_move_of(&l.m[rng_next(s) % (uint64_t)nm]);
    return it;
}

/* A string of len bytes 1..255 (no NUL), terminated. */
static void
fill_str(char *s, size_t len, uint64_t *rs)
{
    for (size_t i = 0; i < len; i++)
        s[i] = (char)(1 + rng_next(rs) % 255);
    s[len] = '\0';
}

/* ---- a payload builder, from protocol.h's words ----------------------- */

typedef struct pb {
    uint8_t b[4096];
    size_t n;
} pb;

static void
pb_u8(pb *p, uint8_t v)
{
    assert_true(p->n < sizeof p->b);
    p->b[p->n++] = v;
}

static void
pb_le(pb *p, uint64_t v, int bytes)
{
    for (int i = 0; i < bytes; i++)
        pb_u8(p, (uint8_t)(v >> (8 * i)));
}

static void
pb_bytes(pb *p, const void *s, size_t len)
{
    assert_true(p->n + len <= sizeof p->b);
    memcpy(p->b + p->n, s, len);
    p->n += len;
}

static void
pb_str(pb *p, const char *s, size_t len)
{
    pb_le(p, len, 2);
    pb_bytes(p, s, len);
}

static void
pb_pos(pb *p, const eng_pos *q)
{
    pb_le(p, q->bm, 4);
    pb_le(p, q->wm, 4);
    pb_le(p, q->bk, 4);
    pb_le(p, q->wk, 4);
    pb_u8(p, (uint8_t)q->stm);
}

/* A frame of exactly its size on the heap (so that AddressSanitizer sees
 * any read past it): header announcing n, type, then the payload. */
static uint8_t *
frame_make(int type, const uint8_t *payload, size_t n, size_t *len)
{
    uint8_t *f = malloc(MGP_HDR + n + 1);
    assert_non_null(f);
    for (int i = 0; i < 4; i++)
        f[i] = (uint8_t)(n >> (8 * i));
    f[4] = (uint8_t)type;
    if (n)
        memcpy(f + MGP_HDR, payload, n);
    *len = MGP_HDR + n;
    return f;
}

static uint8_t *
frame_of(int type, const pb *p, size_t *len)
{
    return frame_make(type, p->b, p->n, len);
}

/* The payload protocol.h describes for m, written field by field here. */
static void
payload_by_hand(const mgp_msg *m, pb *p)
{
    p->n = 0;
    switch (m->type) {
    case MGP_HELLO:
        pb_le(p, m->u.hello.magic, 4);
        pb_le(p, m->u.hello.version, 2);
        pb_le(p, m->u.hello.db_pieces, 2);
        pb_le(p, m->u.hello.pid, 4);
        pb_str(p, m->u.hello.token, strlen(m->u.hello.token));
        pb_str(p, m->u.hello.name, strlen(m->u.hello.name));
        break;
    case MGP_WELCOME:
        pb_le(p, m->u.welcome.version, 2);
        pb_le(p, m->u.welcome.worker_id, 4);
        pb_le(p, m->u.welcome.heartbeat_ms, 4);
        pb_le(p, m->u.welcome.silence_ms, 4);
        pb_le(p, m->u.welcome.db_pieces, 2);
        break;
    case MGP_REJECT:
        pb_str(p, m->u.reason, strlen(m->u.reason));
        break;
    case MGP_JOB:
        pb_le(p, m->u.job.id, 8);
        pb_pos(p, &m->u.job.pos);
        pb_u8(p, (uint8_t)m->u.job.q.attacker);
        pb_u8(p, m->u.job.q.target == ENG_WIN ? 1 : 2); /* the wire's codes */
        pb_le(p, m->u.job.time_ms, 4);
        pb_le(p, m->u.job.node_limit, 8);
        break;
    case MGP_PROOF:
        pb_le(p, m->u.proof.id, 8);
        pb_le(p, m->u.proof.count, 4);
        pb_bytes(p, m->u.proof.records, (size_t)m->u.proof.count * MGP_PROOF_REC);
        break;
    case MGP_RESULT:
        pb_le(p, m->u.result.id, 8);
        pb_u8(p, m->u.result.bound);
        pb_u8(p, m->u.result.status);
        pb_le(p, m->u.result.records, 4);
        pb_le(p, (uint32_t)m->u.result.score, 4);
        pb_le(p, m->u.result.depth, 2);
        pb_le(p, m->u.result.nodes, 8);
        pb_le(p, m->u.result.ms, 4);
        pb_str(p, m->u.result.message, strlen(m->u.result.message));
        pb_le(p, m->u.result.nscores, 2);
        for (int k = 0; k < m->u.result.nscores; k++)
            pb_le(p, (uint16_t)m->u.result.scores[k], 2);
        break;
    case MGP_ACK:
    case MGP_CANCEL:
        pb_le(p, m->u.id, 8);
        break;
    case MGP_HEARTBEAT:
        pb_le(p, m->u.time, 8);
        break;
    default:
        fail_msg("no layout for type %d", m->type);
    }
}

/* ---- messages --------------------------------------------------------- */

static int
msg_equal(const mgp_msg *a, const mgp_msg *b)
{
    if (a->type != b->type)
        return 0;
    switch (a->type) {
    case MGP_HELLO: {
        const mgp_hello *x = &a->u.hello, *y = &b->u.hello;
        return x->magic == y->magic && x->version == y->version && x->db_pieces == y->db_pieces &&
               x->pid == y->pid && strcmp(x->token, y->token) == 0 && strcmp(x->name, y->name) == 0;
    }
    case MGP_WELCOME: {
        const mgp_welcome *x = &a->u.welcome, *y = &b->u.welcome;
        return x->version == y->version && x->worker_id == y->worker_id &&
               x->heartbeat_ms == y->heartbeat_ms && x->silence_ms == y->silence_ms &&
               x->db_pieces == y->db_pieces;
    }
    case MGP_REJECT:
        return strcmp(a->u.reason, b->u.reason) == 0;
    case MGP_JOB: {
        const mgp_job *x = &a->u.job, *y = &b->u.job;
        return x->id == y->id && eng_equal(&x->pos, &y->pos) && x->q.attacker == y->q.attacker &&
               x->q.target == y->q.target && x->time_ms == y->time_ms &&
               x->node_limit == y->node_limit;
    }
    case MGP_PROOF: {
        const mgp_proof *x = &a->u.proof, *y = &b->u.proof;
        return x->id == y->id && x->count == y->count &&
               memcmp(x->records, y->records, (size_t)x->count * MGP_PROOF_REC) == 0;
    }
    case MGP_RESULT: {
        const mgp_result *x = &a->u.result, *y = &b->u.result;
        return x->id == y->id && x->bound == y->bound && x->status == y->status &&
               x->records == y->records && x->score == y->score && x->depth == y->depth &&
               x->nodes == y->nodes && x->ms == y->ms && strcmp(x->message, y->message) == 0 &&
               x->nscores == y->nscores &&
               memcmp(x->scores, y->scores, x->nscores * sizeof x->scores[0]) == 0;
    }
    case MGP_ACK:
    case MGP_CANCEL:
        return a->u.id == b->u.id;
    case MGP_HEARTBEAT:
        return a->u.time == b->u.time;
    default:
        return 0;
    }
}

/*
 * A sample message of each type. kind 0: the smallest numbers and empty
 * strings; kind 1: the largest numbers and strings of the largest length;
 * kind 2: random numbers and lengths. PROOF records come from recs
 * (count of them), which must outlive the message.
 */
static void
sample_msg(int type, int kind, uint64_t *rs, const eng_pos *pos, const uint8_t *recs,
           uint32_t count, mgp_msg *m)
{
    memset(m, 0, sizeof *m);
    m->type = type;
    uint64_t x = kind == 0 ? 0 : kind == 1 ? UINT64_MAX : rng_next(rs);
    int big = kind == 1;
    switch (type) {
    case MGP_HELLO:
        m->u.hello.magic = MGP_MAGIC;
        m->u.hello.version = MGP_VERSION;
        m->u.hello.db_pieces = (uint16_t)x;
        m->u.hello.pid = (uint32_t)(x >> 7);
        fill_str(m->u.hello.token,
                 kind == 0 ? 0
                 : big     ? MGP_TOKEN_MAX
                           : rng_next(rs) % (MGP_TOKEN_MAX + 1),
                 rs);
        fill_str(m->u.hello.name,
                 kind == 0 ? 0
                 : big     ? MGP_NAME_MAX
                           : rng_next(rs) % (MGP_NAME_MAX + 1),
                 rs);
        break;
    case MGP_WELCOME:
        m->u.welcome.version = (uint16_t)x;
        m->u.welcome.worker_id = (uint32_t)(x >> 3);
        m->u.welcome.heartbeat_ms = (uint32_t)(x >> 11);
        m->u.welcome.silence_ms = (uint32_t)(x >> 17);
        m->u.welcome.db_pieces = (uint16_t)(x >> 23);
        break;
    case MGP_REJECT:
        fill_str(m->u.reason,
                 kind == 0 ? 0
                 : big     ? MGP_REASON_MAX
                           : rng_next(rs) % (MGP_REASON_MAX + 1),
                 rs);
        break;
    case MGP_JOB:
        m->u.job.id = x;
        m->u.job.pos = *pos;
        m->u.job.q.attacker = kind == 0 ? ENG_BLACK : kind == 1 ? ENG_WHITE : (int)(x % 2);
        m->u.job.q.target = kind == 0   ? ENG_WIN
                            : kind == 1 ? ENG_DRAW
                                        : (x % 2 ? ENG_WIN : ENG_DRAW);
        m->u.job.time_ms = (uint32_t)(x >> 5);
        m->u.job.node_limit = x >> (kind == 2 ? 9 : 0);
        break;
    case MGP_PROOF:
        m->u.proof.id = x;
        m->u.proof.count = count;
        m->u.proof.records = recs;
        break;
    case MGP_RESULT:
        m->u.result.id = x;
        m->u.result.bound = (uint8_t)(kind == 0 ? ENG_LL : kind == 1 ? ENG_LW : x % 6);
        m->u.result.status = (uint8_t)(kind == 0 ? MGP_DONE : kind == 1 ? MGP_FAILED : x % 3);
        m->u.result.records = (uint32_t)(x >> 13);
        m->u.result.score = kind == 0 ? INT32_MIN : kind == 1 ? INT32_MAX : (int32_t)(x >> 32);
        m->u.result.depth = (uint16_t)(x >> 23);
        m->u.result.nodes = x >> (kind == 2 ? 3 : 0);
        m->u.result.ms = (uint32_t)(x >> 29);
        fill_str(m->u.result.message,
                 kind == 0 ? 0
                 : big     ? MGP_REASON_MAX
                           : rng_next(rs) % (MGP_REASON_MAX + 1),
                 rs);
        m->u.result.nscores = (uint16_t)(kind == 0 ? 0 : big ? MGP_SCORES_MAX : rng_next(rs) % 41);
        for (int k = 0; k < m->u.result.nscores; k++)
            m->u.result.scores[k] = (int16_t)(k == 0   ? INT16_MIN
                                              : k == 1 ? INT16_MAX
                                                       : rng_next(rs));
        break;
    case MGP_ACK:
    case MGP_CANCEL:
        m->u.id = x;
        break;
    case MGP_HEARTBEAT:
        m->u.time = x;
        break;
    }
}

/* m encoded into a heap frame of exactly its size. */
static uint8_t *
encode_exact(const mgp_msg *m, size_t *len)
{
    size_t max = mgp_encoded_max(m->type, m->type == MGP_PROOF ? m->u.proof.count : 0);
    assert_true(max >= MGP_HDR);
    uint8_t *buf = malloc(max);
    assert_non_null(buf);
    char err[256] = "";
    long n = mgp_encode(m, buf, max, err, sizeof err);
    if (n < 0)
        fail_msg("encoding %s: %s", mgp_type_name(m->type), err);
    assert_true((size_t)n <= max);
    uint8_t *f = malloc((size_t)n);
    assert_non_null(f);
    memcpy(f, buf, (size_t)n);
    free(buf);
    *len = (size_t)n;
    return f;
}

/* Decoding buf is refused with code, and the message contains what. */
static void
expect_refused(const uint8_t *buf, size_t len, int code, const char *what)
{
    mgp_msg m;
    char err[512] = "";
    int rc = mgp_decode(buf, len, &m, err, sizeof err);
    if (rc != code || !strstr(err, what))
        fail_msg("expected code %d with \"%s\", got %d: \"%s\"", code, what, rc, err);
}

/* A frame with the payload's byte at off replaced by v (a copy). */
static uint8_t *
patched(const uint8_t *f, size_t len, size_t off, uint8_t v)
{
    uint8_t *g = malloc(len);
    assert_non_null(g);
    memcpy(g, f, len);
    g[MGP_HDR + off] = v;
    return g;
}

static void
set_le(uint8_t *b, uint64_t v, int bytes)
{
    for (int i = 0; i < bytes; i++)
        b[i] = (uint8_t)(v >> (8 * i));
}

/* Shared material: positions and PROOF records in both orientations. */
typedef struct fixture {
    eng_pos *pos;
    pst_item *items;
    uint8_t *recs; /* n records of MGP_PROOF_REC bytes */
    size_t n;
} fixture;

static void
fixture_make(fixture *fx, size_t n, uint64_t seed)
{
    uint64_t s = seed;
    fx->n = n;
    fx->pos = gen_positions(seed, n, 1);
    fx->items = malloc(n * sizeof *fx->items);
    fx->recs = malloc(n * MGP_PROOF_REC);
    assert_non_null(fx->items);
    assert_non_null(fx->recs);
    for (size_t i = 0; i < n; i++) {
        fx->items[i] = item_random(&fx->pos[i], &s);
        mgp_proof_record(&fx->items[i], fx->recs + i * MGP_PROOF_REC);
    }
}

static void
fixture_free(fixture *fx)
{
    free(fx->pos);
    free(fx->items);
    free(fx->recs);
}

/* ---- layouts and round trips ------------------------------------------ */

static const int all_types[] = {MGP_HELLO,  MGP_WELCOME, MGP_REJECT,    MGP_JOB,   MGP_PROOF,
                                MGP_RESULT, MGP_ACK,     MGP_HEARTBEAT, MGP_CANCEL};
#define NTYPES ((int)(sizeof all_types / sizeof all_types[0]))

static void
test_roundtrip_every_type(void **state)
{
    (void)state;
    fixture fx;
    fixture_make(&fx, 64, 3);
    uint64_t rs = 1;
    for (int t = 0; t < NTYPES; t++) {
        for (int kind = 0; kind < 3; kind++) {
            for (int rep = 0; rep < (kind == 2 ? 50 : 1); rep++) {
                int type = all_types[t];
                uint32_t count = kind == 0 ? 1 : kind == 1 ? 64 : 1 + rng_next(&rs) % 64;
                mgp_msg m, back;
                eng_pos start;
                eng_start(&start);
                sample_msg(type, kind, &rs, kind == 0 ? &start : &fx.pos[rep % 64], fx.recs, count,
                           &m);
                size_t len;
                uint8_t *f = encode_exact(&m, &len);
                /* The bytes protocol.h describes. */
                pb p;
                payload_by_hand(&m, &p);
                assert_int_equal(len, MGP_HDR + p.n);
                assert_int_equal(f[0] | f[1] << 8 | f[2] << 16 | (uint32_t)f[3] << 24, p.n);
                assert_int_equal(f[4], type);
                assert_memory_equal(f + MGP_HDR, p.b, p.n);
                if (kind == 1 && type != MGP_PROOF)
                    assert_int_equal(len, mgp_encoded_max(type, 0));
                assert_true(len <= mgp_encoded_max(type, count));
                /* Back, and again to the same bytes. */
                char err[256] = "";
                assert_int_equal(mgp_peek(f, len, err, sizeof err), (long)len);
                int rc = mgp_decode(f, len, &back, err, sizeof err);
                if (rc != 0)
                    fail_msg("%s kind %d: %s", mgp_type_name(type), kind, err);
                assert_true(msg_equal(&m, &back));
                size_t len2;
                uint8_t *g = encode_exact(&back, &len2);
                assert_int_equal(len2, len);
                assert_memory_equal(f, g, len);
                free(f);
                free(g);
            }
        }
    }
    /* Hand-checked bytes: "CKPW" is the magic as it travels. */
    mgp_msg h;
    sample_msg(MGP_HELLO, 0, &rs, NULL, NULL, 0, &h);
    size_t len;
    uint8_t *f = encode_exact(&h, &len);
    static const uint8_t want[] = {16, 0, 0, 0, 1, 'C', 'K', 'P', 'W', 2, 0,
                                   0,  0, 0, 0, 0, 0,   0,   0,   0,   0};
    assert_int_equal(len, sizeof want);
    assert_memory_equal(f, want, sizeof want);
    free(f);
    fixture_free(&fx);
}

static void
test_encoded_max(void **state)
{
    (void)state;
    assert_int_equal(mgp_encoded_max(MGP_HELLO, 0), 5 + 16 + 256 + 128);
    assert_int_equal(mgp_encoded_max(MGP_WELCOME, 0), 5 + 16);
    assert_int_equal(mgp_encoded_max(MGP_REJECT, 0), 5 + 2 + 512);
    assert_int_equal(mgp_encoded_max(MGP_JOB, 0), 5 + 39);
    assert_int_equal(mgp_encoded_max(MGP_PROOF, 1), 5 + 12 + 48);
    assert_int_equal(mgp_encoded_max(MGP_RESULT, 0), 5 + 36 + 512 + 2 * 256);
    assert_int_equal(mgp_encoded_max(MGP_ACK, 0), 13);
    assert_int_equal(mgp_encoded_max(MGP_HEARTBEAT, 0), 13);
    assert_int_equal(mgp_encoded_max(MGP_CANCEL, 0), 13);
    assert_int_equal(mgp_encoded_max(0, 0), 0);
    assert_int_equal(mgp_encoded_max(42, 0), 0);
    /* The largest PROOF fits the frame limit. */
    assert_true(mgp_encoded_max(MGP_PROOF, MGP_PROOF_CHUNK) <= MGP_HDR + MGP_FRAME_MAX);
}

/*
 * PROOF frames of real store items, half of them with White to move:
 * each record comes back as the canonical position with its moves on the
 * canonical squares, and the items go into a store and read back in the
 * writer's orientation, as the manager will use them.
 */
static void
test_proof_records(void **state)
{
    (void)state;
    fixture fx;
    fixture_make(&fx, MGP_PROOF_CHUNK, 7);
    int white = 0, win = 0, draw = 0;
    for (size_t i = 0; i < fx.n; i++) {
        white += fx.items[i].pos.stm == ENG_WHITE;
        win += fx.items[i].rec.win.from != PST_NOMOVE;
        draw += fx.items[i].rec.draw.from != PST_NOMOVE;
    }
    assert_true(white > MGP_PROOF_CHUNK / 4 && white < 3 * MGP_PROOF_CHUNK / 4);
    assert_true(win > 1000 && draw > 1000);

    uint32_t counts[] = {1, 2, MGP_PROOF_CHUNK};
    for (int c = 0; c < 3; c++) {
        uint32_t count = counts[c];
        /* count 1 with a White-to-move item: the first one. */
        size_t first = 0;
        while (count == 1 && fx.items[first].pos.stm != ENG_WHITE)
            first++;
        mgp_msg m, back;
        memset(&m, 0, sizeof m);
        m.type = MGP_PROOF;
        m.u.proof.id = 0x0123456789ABCDEFull;
        m.u.proof.count = count;
        m.u.proof.records = fx.recs + first * MGP_PROOF_REC;
        size_t len;
        uint8_t *f = encode_exact(&m, &len);
        assert_int_equal(len, MGP_HDR + 12 + (size_t)48 * count);
        char err[256] = "";
        assert_int_equal(mgp_peek(f, len, err, sizeof err), (long)len);
        if (mgp_decode(f, len, &back, err, sizeof err) != 0)
            fail_msg("PROOF of %u: %s", count, err);
        assert_true(msg_equal(&m, &back));
        assert_ptr_equal(back.u.proof.records, f + MGP_HDR + 12);
        for (uint32_t i = 0; i < count; i++) {
            const pst_item *it = &fx.items[first + i];
            pst_item got;
            assert_int_equal(mgp_proof_item(&back.u.proof, i, &got), 0);
            eng_pos c0 = eng_canonical(&it->pos);
            assert_true(eng_equal(&got.pos, &c0));
            pst_record want = it->rec;
            if (it->pos.stm == ENG_WHITE) {
                want.win = move_flip(want.win);
                want.draw = move_flip(want.draw);
            }
            assert_true(rec_equal(&got.rec, &want));
            /* The moves are legal where they now stand. */
            if (got.rec.win.from != PST_NOMOVE)
                assert_int_equal(pst_move_find(&got.pos, &got.rec.win, NULL), 0);
            if (got.rec.draw.from != PST_NOMOVE)
                assert_int_equal(pst_move_find(&got.pos, &got.rec.draw, NULL), 0);
        }
        pst_item none;
        assert_int_equal(mgp_proof_item(&back.u.proof, count, &none), MGP_EFIELD);
        free(f);
    }

    /* Into a store, as the manager commits them; read back in the
     * writer's orientation. */
    enum { NSTORE = 3000 };
    char dir[256], err[512];
    assert_non_null(test_tmpdir(dir, sizeof dir, "mgp-proof"));
    pst_env *s = NULL;
    assert_int_equal(pst_open(dir, 0, &s, err, sizeof err), 0);
    mgp_proof p = {1, NSTORE, fx.recs};
    pst_item *got = malloc(NSTORE * sizeof *got);
    assert_non_null(got);
    for (uint32_t i = 0; i < NSTORE; i++)
        assert_int_equal(mgp_proof_item(&p, i, &got[i]), 0);
    if (pst_put_many(s, got, NSTORE, err, sizeof err) != 0)
        fail_msg("pst_put_many: %s", err);
    for (uint32_t i = 0; i < NSTORE; i++) {
        pst_record r;
        assert_int_equal(pst_get(s, &fx.items[i].pos, &r), 0);
        assert_true(rec_equal(&r, &fx.items[i].rec));
    }
    pst_close(s);
    char path[300];
    snprintf(path, sizeof path, "%s/data.mdb", dir);
    unlink(path);
    snprintf(path, sizeof path, "%s/lock.mdb", dir);
    unlink(path);
    rmdir(dir);
    free(got);
    fixture_free(&fx);
}

/* ---- mgp_peek --------------------------------------------------------- */

static void
test_peek(void **state)
{
    (void)state;
    fixture fx;
    fixture_make(&fx, 4, 9);
    uint64_t rs = 2;
    char err[256];
    for (int t = 0; t < NTYPES; t++) {
        mgp_msg m;
        sample_msg(all_types[t], 1, &rs, &fx.pos[0], fx.recs, 4, &m);
        size_t len;
        uint8_t *f = encode_exact(&m, &len);
        /* Every prefix: more is needed until the frame is whole. */
        for (size_t k = 0; k < len; k++) {
            uint8_t *pre = malloc(k ? k : 1);
            memcpy(pre, f, k);
            err[0] = '\0';
            assert_int_equal(mgp_peek(pre, k, err, sizeof err), MGP_EAGAIN);
            free(pre);
        }
        /* Whole, and with the next frame's bytes behind it. */
        assert_int_equal(mgp_peek(f, len, err, sizeof err), (long)len);
        uint8_t *two = malloc(2 * len);
        memcpy(two, f, len);
        memcpy(two + len, f, len);
        assert_int_equal(mgp_peek(two, 2 * len, err, sizeof err), (long)len);
        free(two);
        free(f);
    }
    assert_int_equal(mgp_peek(NULL, 0, err, sizeof err), MGP_EAGAIN);

    /* Lengths: MGP_FRAME_MAX is allowed (the payload is awaited), one
     * more is refused from the header alone. */
    uint8_t h[MGP_HDR];
    set_le(h, MGP_FRAME_MAX, 4);
    h[4] = MGP_PROOF;
    assert_int_equal(mgp_peek(h, sizeof h, err, sizeof err), MGP_EAGAIN);
    set_le(h, MGP_FRAME_MAX + 1u, 4);
    assert_int_equal(mgp_peek(h, sizeof h, err, sizeof err), MGP_EFRAME);
    assert_non_null(strstr(err, "4194305 bytes, more than the 4194304 allowed"));
    set_le(h, 0xFFFFFFFFu, 4);
    h[4] = MGP_ACK;
    assert_int_equal(mgp_peek(h, sizeof h, err, sizeof err), MGP_EFRAME);
    assert_non_null(strstr(err, "4294967295 bytes"));
    assert_non_null(strstr(err, "ACK"));

    /* Unknown types, refused before their payload arrives. */
    int bad[] = {0, 10, 42, 255};
    for (int i = 0; i < 4; i++) {
        set_le(h, 8, 4);
        h[4] = (uint8_t)bad[i];
        assert_int_equal(mgp_peek(h, sizeof h, err, sizeof err), MGP_EFRAME);
        char want[32];
        snprintf(want, sizeof want, "type %d", bad[i]);
        assert_non_null(strstr(err, want));
        uint8_t full[13] = {8, 0, 0, 0, (uint8_t)bad[i]};
        expect_refused(full, sizeof full, MGP_EFRAME, want);
    }
    fixture_free(&fx);
}

/* ---- refusals --------------------------------------------------------- */

/*
 * Every message cut at every length (the header saying so), the buffer
 * shorter than its header says, and one byte too long: all MGP_EFRAME,
 * with the message's name in the error.
 */
static void
test_decode_sizes(void **state)
{
    (void)state;
    fixture fx;
    fixture_make(&fx, 3, 11);
    uint64_t rs = 4;
    for (int t = 0; t < NTYPES; t++) {
        for (int kind = 0; kind < 2; kind++) {
            mgp_msg m;
            sample_msg(all_types[t], kind, &rs, &fx.pos[0], fx.recs, 3, &m);
            size_t len;
            uint8_t *f = encode_exact(&m, &len);
            const char *name = mgp_type_name(all_types[t]);
            size_t n = len - MGP_HDR;
            for (size_t k = 0; k < n; k++) {
                size_t cl;
                uint8_t *c = frame_make(all_types[t], f + MGP_HDR, k, &cl);
                expect_refused(c, cl, MGP_EFRAME, name);
                /* The same bytes under the original header. */
                set_le(c, n, 4);
                expect_refused(c, cl, MGP_EFRAME, "its header announces");
                free(c);
            }
            uint8_t *longer = malloc(len + 1);
            memcpy(longer, f, len);
            longer[len] = 0;
            set_le(longer, n + 1, 4);
            expect_refused(longer, len + 1, MGP_EFRAME, name);
            free(longer);
            free(f);
        }
    }
    /* Shorter than a header. */
    uint8_t tiny[4] = {0};
    expect_refused(tiny, 4, MGP_EFRAME, "shorter than its 5-byte header");
    /* The exact wording of two size errors. */
    uint8_t w[MGP_HDR + 15] = {15, 0, 0, 0, MGP_WELCOME};
    expect_refused(w, sizeof w, MGP_EFRAME, "WELCOME: payload is 15 bytes, expected 16");
    uint8_t hl[MGP_HDR + 10] = {10, 0, 0, 0, MGP_HELLO, 'C', 'K', 'P', 'W', MGP_VERSION, 0};
    expect_refused(hl, sizeof hl, MGP_EFRAME, "HELLO: payload is 10 bytes, expected at least 16");
    fixture_free(&fx);
}

/* A HELLO of another magic or version decodes (the manager refuses it by
 * name), whatever follows those six bytes. */
static void
test_hello_other_versions(void **state)
{
    (void)state;
    struct {
        uint32_t magic;
        uint16_t version;
    } cases[] = {{MGP_MAGIC, 1},      {MGP_MAGIC, 3},   {MGP_MAGIC, 0},
                 {MGP_MAGIC, 0xFFFF}, {0x20544547u, 2}, {0, 0}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        for (int tail = 0; tail < 3; tail++) {
            pb p = {.n = 0};
            pb_le(&p, cases[i].magic, 4);
            pb_le(&p, cases[i].version, 2);
            if (tail == 1) /* a version 1 body */
                pb_bytes(&p, "\x05\x00\x01\x02\x03\x04\x00\x00\x00\x00", 10);
            if (tail == 2) /* something else: 300 bytes with NULs */
                for (int k = 0; k < 300; k++)
                    pb_u8(&p, (uint8_t)k);
            size_t len;
            uint8_t *f = frame_of(MGP_HELLO, &p, &len);
            mgp_msg m;
            char err[256] = "";
            if (mgp_decode(f, len, &m, err, sizeof err) != 0)
                fail_msg("HELLO magic %08x version %u: %s", cases[i].magic, cases[i].version, err);
            assert_int_equal(m.type, MGP_HELLO);
            assert_int_equal(m.u.hello.magic, cases[i].magic);
            assert_int_equal(m.u.hello.version, cases[i].version);
            assert_int_equal(m.u.hello.db_pieces, 0);
            assert_int_equal(m.u.hello.pid, 0);
            assert_string_equal(m.u.hello.token, "");
            assert_string_equal(m.u.hello.name, "");
            free(f);
        }
    }
    /* Fewer than the six bytes: a bad frame. */
    uint8_t five[MGP_HDR + 5] = {5, 0, 0, 0, MGP_HELLO, 'C', 'K', 'P', 'W', 1};
    expect_refused(five, sizeof five, MGP_EFRAME, "HELLO: payload is 5 bytes, expected at least 6");
    /* The right magic and version: the whole layout is checked. */
    uint8_t v1[MGP_HDR + 8] = {8, 0, 0, 0, MGP_HELLO, 'C', 'K', 'P', 'W', MGP_VERSION, 0, 0, 0};
    expect_refused(v1, sizeof v1, MGP_EFRAME, "HELLO: payload is 8 bytes, expected at least 16");
}

static void
test_decode_fields(void **state)
{
    (void)state;
    fixture fx;
    fixture_make(&fx, 3, 13);
    uint64_t rs = 5;
    mgp_msg m;
    size_t len;
    uint8_t *g;

    /* JOB: positions eng_validate refuses, attacker, goal. */
    sample_msg(MGP_JOB, 2, &rs, &fx.pos[0], NULL, 0, &m);
    uint8_t *job = encode_exact(&m, &len);
    struct {
        uint32_t bm, wm, bk, wk;
        uint8_t stm;
        const char *why;
    } bad_pos[] = {
        {1u << 5, 1u << 5, 0, 0, 0, "square 6 holds two pieces"},
        {1u << 5, 0, 0, 1u << 5, 1, "square 6 holds two pieces"},
        {0, 1u << 20, 1u << 20, 0, 0, "square 21 holds two pieces"},
        {1u << 29, 1u << 10, 0, 0, 0, "black man on square 30"},
        {1u << 3, 1u << 2, 0, 0, 1, "white man on square 3"},
        {0x00001FFFu, 1u << 20, 0, 0, 0, "black has 13 pieces"},
        {1u << 4, 0x0FFF0000u, 0, 1u << 31, 0, "white has 13 pieces"},
        {1u << 4, 1u << 20, 0, 0, 2, "side to move is 2"},
    };
    for (size_t i = 0; i < sizeof bad_pos / sizeof bad_pos[0]; i++) {
        g = patched(job, len, 0, job[MGP_HDR]);
        set_le(g + MGP_HDR + 8, bad_pos[i].bm, 4);
        set_le(g + MGP_HDR + 12, bad_pos[i].wm, 4);
        set_le(g + MGP_HDR + 16, bad_pos[i].bk, 4);
        set_le(g + MGP_HDR + 20, bad_pos[i].wk, 4);
        g[MGP_HDR + 24] = bad_pos[i].stm;
        expect_refused(g, len, MGP_EFIELD, "JOB: position invalid: ");
        expect_refused(g, len, MGP_EFIELD, bad_pos[i].why);
        free(g);
    }
    g = patched(job, len, 25, 2);
    expect_refused(g, len, MGP_EFIELD, "JOB: attacker 2 invalid");
    free(g);
    g = patched(job, len, 26, 0);
    expect_refused(g, len, MGP_EFIELD, "JOB: goal 0 invalid");
    free(g);
    g = patched(job, len, 26, 3);
    expect_refused(g, len, MGP_EFIELD, "JOB: goal 3 invalid");
    free(g);
    free(job);

    /* RESULT: bound and status. */
    sample_msg(MGP_RESULT, 2, &rs, NULL, NULL, 0, &m);
    uint8_t *res = encode_exact(&m, &len);
    g = patched(res, len, 8, 6);
    expect_refused(g, len, MGP_EFIELD, "RESULT: bound 6 invalid");
    free(g);
    g = patched(res, len, 8, 255);
    expect_refused(g, len, MGP_EFIELD, "RESULT: bound 255 invalid");
    free(g);
    g = patched(res, len, 9, 3);
    expect_refused(g, len, MGP_EFIELD, "RESULT: status 3 invalid");
    free(g);
    free(res);

    /* Strings: a NUL inside, and one byte over the limit (with the bytes
     * there, so that only the limit is wrong). */
    struct {
        int type;
        const char *field;
        size_t limit;
    } strs[] = {{MGP_HELLO, "HELLO: token", MGP_TOKEN_MAX},
                {MGP_HELLO, "HELLO: name", MGP_NAME_MAX},
                {MGP_REJECT, "REJECT: reason", MGP_REASON_MAX},
                {MGP_RESULT, "RESULT: message", MGP_REASON_MAX}};
    for (size_t i = 0; i < sizeof strs / sizeof strs[0]; i++) {
        for (int nul = 0; nul < 2; nul++) {
            size_t slen = nul ? 10 : strs[i].limit + 1;
            char s[MGP_REASON_MAX + 2];
            fill_str(s, slen, &rs);
            if (nul)
                s[4] = '\0';
            int is_name = strstr(strs[i].field, "name") != NULL;
            pb p = {.n = 0};
            if (strs[i].type == MGP_HELLO) {
                pb_le(&p, MGP_MAGIC, 4);
                pb_le(&p, MGP_VERSION, 2);
                pb_le(&p, 5, 2);
                pb_le(&p, 1234, 4);
                pb_str(&p, is_name ? "tok" : s, is_name ? 3 : slen);
                pb_str(&p, is_name ? s : "host", is_name ? slen : 4);
            } else if (strs[i].type == MGP_REJECT) {
                pb_str(&p, s, slen);
            } else {
                pb_le(&p, 77, 8);
                pb_u8(&p, ENG_WW);
                pb_u8(&p, MGP_DONE);
                pb_le(&p, 3, 4);
                pb_le(&p, 150, 4);
                pb_le(&p, 20, 2);
                pb_le(&p, 1000, 8);
                pb_le(&p, 12, 4);
                pb_str(&p, s, slen);
                pb_le(&p, 0, 2); /* no child scores */
            }
            size_t fl;
            uint8_t *f = frame_of(strs[i].type, &p, &fl);
            char want[96];
            if (nul)
                snprintf(want, sizeof want, "%s: NUL byte at offset 4 of 10", strs[i].field);
            else
                snprintf(want, sizeof want, "%s: %zu bytes, more than the %zu allowed",
                         strs[i].field, strs[i].limit + 1, strs[i].limit);
            expect_refused(f, fl, MGP_EFIELD, want);
            free(f);
        }
    }
    /* RESULT's child scores: more than allowed, or not the bytes announced. */
    for (int c = 0; c < 3; c++) {
        pb p = {.n = 0};
        pb_le(&p, 77, 8);
        pb_u8(&p, ENG_LW);
        pb_u8(&p, MGP_BUDGET);
        pb_le(&p, 0, 4);
        pb_le(&p, 150, 4);
        pb_le(&p, 20, 2);
        pb_le(&p, 1000, 8);
        pb_le(&p, 12, 4);
        pb_str(&p, "", 0);
        pb_le(&p, c == 0 ? MGP_SCORES_MAX + 1 : 3, 2);
        for (int k = 0; k < (c == 0 ? MGP_SCORES_MAX + 1 : c == 1 ? 2 : 4); k++)
            pb_le(&p, 5, 2);
        size_t fl;
        uint8_t *f = frame_of(MGP_RESULT, &p, &fl);
        if (c == 0)
            expect_refused(f, fl, MGP_EFIELD,
                           "RESULT: 257 child scores, more than the 256 allowed");
        else
            expect_refused(f, fl, MGP_EFRAME,
                           c == 1 ? "RESULT: 3 child scores announced, 4 bytes left for them"
                                  : "RESULT: 3 child scores announced, 8 bytes left for them");
        free(f);
    }
    /* A string running past the payload: a bad frame. */
    {
        pb p = {.n = 0};
        pb_str(&p, "abc", 3);
        set_le(p.b, 4, 2);
        size_t fl;
        uint8_t *f = frame_of(MGP_REJECT, &p, &fl);
        expect_refused(f, fl, MGP_EFRAME, "REJECT: reason: 4 bytes announced");
        free(f);
    }

    /* PROOF: counts out of range (sizes consistent with them), a count
     * its payload does not match. */
    {
        pb p = {.n = 0};
        pb_le(&p, 1, 8);
        pb_le(&p, 0, 4);
        size_t fl;
        uint8_t *f = frame_of(MGP_PROOF, &p, &fl);
        expect_refused(f, fl, MGP_EFIELD, "PROOF: count 0 out of range 1..65536");
        free(f);
        size_t n = 12 + (size_t)48 * (MGP_PROOF_CHUNK + 1);
        uint8_t *big = calloc(1, n);
        set_le(big + 8, MGP_PROOF_CHUNK + 1, 4);
        f = frame_make(MGP_PROOF, big, n, &fl);
        expect_refused(f, fl, MGP_EFIELD, "PROOF: count 65537 out of range 1..65536");
        free(f);
        set_le(big + 8, 0xFFFFFFFFu, 4);
        f = frame_make(MGP_PROOF, big, n, &fl);
        expect_refused(f, fl, MGP_EFRAME, "PROOF: payload is 3145788 bytes, expected");
        free(f);
        free(big);
    }
    /* PROOF: any byte of a record changed (key or value) fails its
     * checksum; the error names the record. */
    sample_msg(MGP_PROOF, 2, &rs, NULL, fx.recs, 3, &m);
    uint8_t *pf = encode_exact(&m, &len);
    for (int b = 0; b < MGP_PROOF_REC; b++) {
        for (int bit = 0; bit < 8; bit += 3) {
            g = patched(pf, len, 12 + 48 + (size_t)b,
                        (uint8_t)(pf[MGP_HDR + 12 + 48 + b] ^ (1u << bit)));
            expect_refused(g, len, MGP_EFIELD, "PROOF: record 1 of 3: the store refuses its value");
            free(g);
        }
    }
    free(pf);
    /* PROOF: a record whose checksum is right but whose key is no
     * position. */
    {
        uint8_t recs[2 * MGP_PROOF_REC];
        memcpy(recs, fx.recs, MGP_PROOF_REC);
        uint8_t *key = recs + MGP_PROOF_REC;
        set_le(key, 1u << 7, 4);
        set_le(key + 4, 1u << 7, 4);
        set_le(key + 8, 0, 4);
        set_le(key + 12, 0, 4);
        pst_record r = {ENG_DD, {PST_NOMOVE, 0, 0}, {PST_NOMOVE, 0, 0}, 9, 0};
        pst_encode(key, &r, key + 16);
        pb p = {.n = 0};
        pb_le(&p, 5, 8);
        pb_le(&p, 2, 4);
        pb_bytes(&p, recs, sizeof recs);
        size_t fl;
        uint8_t *f = frame_of(MGP_PROOF, &p, &fl);
        expect_refused(f, fl, MGP_EFIELD, "PROOF: record 1 of 2: key invalid: square 8 holds two");
        free(f);
        /* The encoder refuses it too. */
        mgp_msg e = {.type = MGP_PROOF};
        e.u.proof.id = 5;
        e.u.proof.count = 2;
        e.u.proof.records = recs;
        uint8_t out[200];
        char err[256];
        assert_int_equal(mgp_encode(&e, out, sizeof out, err, sizeof err), MGP_EFIELD);
        assert_non_null(strstr(err, "PROOF: record 1 of 2: key invalid"));
    }
    fixture_free(&fx);
}

/* The encoder refuses what the decoder would, and a short buffer. */
static void
test_encode_refusals(void **state)
{
    (void)state;
    uint64_t rs = 6;
    uint8_t buf[1024];
    char err[256];
    mgp_msg m;
    eng_pos start;
    eng_start(&start);

    sample_msg(MGP_HELLO, 1, &rs, NULL, NULL, 0, &m);
    memset(m.u.hello.token, 'x', sizeof m.u.hello.token); /* no terminator */
    assert_int_equal(mgp_encode(&m, buf, sizeof buf, err, sizeof err), MGP_EFIELD);
    assert_non_null(strstr(err, "HELLO: token: longer than the 256 bytes allowed"));
    sample_msg(MGP_RESULT, 1, &rs, NULL, NULL, 0, &m);
    memset(m.u.result.message, 'x', sizeof m.u.result.message);
    assert_int_equal(mgp_encode(&m, buf, sizeof buf, err, sizeof err), MGP_EFIELD);
    assert_non_null(strstr(err, "RESULT: message"));
    m.u.result.message[0] = '\0';
    m.u.result.bound = 6;
    assert_int_equal(mgp_encode(&m, buf, sizeof buf, err, sizeof err), MGP_EFIELD);
    assert_non_null(strstr(err, "RESULT: bound 6"));

    sample_msg(MGP_JOB, 0, &rs, &start, NULL, 0, &m);
    m.u.job.pos.wm |= 1u; /* a white man on square 1 */
    assert_int_equal(mgp_encode(&m, buf, sizeof buf, err, sizeof err), MGP_EFIELD);
    assert_non_null(strstr(err, "JOB: position invalid: "));
    m.u.job.pos = start;
    m.u.job.pos.stm = 7;
    assert_int_equal(mgp_encode(&m, buf, sizeof buf, err, sizeof err), MGP_EFIELD);
    m.u.job.pos = start;
    m.u.job.q.target = 3;
    assert_int_equal(mgp_encode(&m, buf, sizeof buf, err, sizeof err), MGP_EFIELD);

    mgp_msg p = {.type = MGP_PROOF};
    p.u.proof.count = 0;
    assert_int_equal(mgp_encode(&p, buf, sizeof buf, err, sizeof err), MGP_EFIELD);
    assert_non_null(strstr(err, "PROOF: count 0"));
    p.u.proof.count = MGP_PROOF_CHUNK + 1;
    assert_int_equal(mgp_encode(&p, buf, sizeof buf, err, sizeof err), MGP_EFIELD);
    p.u.proof.count = 1;
    p.u.proof.records = NULL;
    assert_int_equal(mgp_encode(&p, buf, sizeof buf, err, sizeof err), MGP_EFIELD);

    mgp_msg u = {.type = 10};
    assert_int_equal(mgp_encode(&u, buf, sizeof buf, err, sizeof err), MGP_EFIELD);
    assert_non_null(strstr(err, "type 10"));

    /* Buffer space: exactly enough, one byte short, none. */
    sample_msg(MGP_JOB, 1, &rs, &start, NULL, 0, &m);
    assert_int_equal(mgp_encode(&m, buf, 44, err, sizeof err), 44);
    assert_int_equal(mgp_encode(&m, buf, 43, err, sizeof err), MGP_ENOSPC);
    assert_non_null(strstr(err, "JOB: the frame needs 44 bytes, the buffer holds 43"));
    assert_int_equal(mgp_encode(&m, NULL, 0, err, sizeof err), MGP_ENOSPC);
    /* And a refused decode leaves the message alone. */
    memset(&m, 0x33, sizeof m);
    uint8_t junk[MGP_HDR + 8] = {8, 0, 0, 0, 0};
    assert_int_equal(mgp_decode(junk, sizeof junk, &m, err, sizeof err), MGP_EFRAME);
    assert_int_equal(m.type, 0x33333333);
}

/* ---- the fuzz run ----------------------------------------------------- */

typedef struct corpus {
    uint8_t *f[64];
    size_t len[64];
    int n;
} corpus;

/* One mutated frame from the corpus into out (capacity cap): returns its
 * length. */
static size_t
mutate(const corpus *c, uint64_t *s, uint8_t *out, size_t cap)
{
    int a = (int)(rng_next(s) % (uint64_t)c->n);
    size_t len = c->len[a];
    memcpy(out, c->f[a], len);
    int ops = 1 + (int)(rng_next(s) % 3);
    for (int o = 0; o < ops; o++) {
        switch (rng_next(s) % 9) {
        case 0: /* flip a few bits */
        case 1: {
            int k = 1 + (int)(rng_next(s) % 8);
            for (int i = 0; i < k && len; i++)
                out[rng_next(s) % len] ^= (uint8_t)(1u << (rng_next(s) % 8));
            break;
        }
        case 2: /* random bytes somewhere */
            for (int i = 0; i < 4 && len; i++)
                out[rng_next(s) % len] = (uint8_t)rng_next(s);
            break;
        case 3: /* a payload byte of a field that matters: small values */
            if (len > MGP_HDR)
                out[MGP_HDR + rng_next(s) % (len - MGP_HDR)] = (uint8_t)(rng_next(s) % 8);
            break;
        case 4: /* another length in the header */
            if (len >= 4) {
                uint32_t n = (uint32_t)rng_next(s);
                uint32_t v = rng_next(s) % 2 ? n : (uint32_t)(len - MGP_HDR) + (n % 5) - 2;
                set_le(out, v, 4);
            }
            break;
        case 5: /* truncate, the header following or not */
            if (len) {
                len = (size_t)(rng_next(s) % len);
                if (len >= 4 && rng_next(s) % 2)
                    set_le(out, len - MGP_HDR, 4);
            }
            break;
        case 6: /* grow with random bytes, the header following */
        {
            size_t k = 1 + rng_next(s) % 16;
            if (len + k <= cap) {
                for (size_t i = 0; i < k; i++)
                    out[len + i] = (uint8_t)rng_next(s);
                len += k;
                if (len >= 4)
                    set_le(out, len - MGP_HDR, 4);
            }
            break;
        }
        case 7: /* splice: this frame's head, another frame's tail */
        {
            int b = (int)(rng_next(s) % (uint64_t)c->n);
            size_t cut = len ? rng_next(s) % (len + 1) : 0;
            size_t from = rng_next(s) % (c->len[b] + 1);
            size_t k = c->len[b] - from;
            if (cut + k <= cap) {
                memcpy(out + cut, c->f[b] + from, k);
                len = cut + k;
                if (len >= 4 && rng_next(s) % 2)
                    set_le(out, len - MGP_HDR, 4);
            }
            break;
        }
        case 8: /* another type, or random bytes throughout */
            if (rng_next(s) % 4 == 0) {
                len = rng_next(s) % 64;
                for (size_t i = 0; i < len; i++)
                    out[i] = (uint8_t)rng_next(s);
                if (len >= MGP_HDR && rng_next(s) % 2) {
                    set_le(out, len - MGP_HDR, 4);
                    out[4] = (uint8_t)(1 + rng_next(s) % 9);
                }
            } else if (len > 4) {
                out[4] = (uint8_t)(rng_next(s) % 12);
            }
            break;
        }
    }
    return len;
}

static void
test_fuzz_decode(void **state)
{
    (void)state;
    fixture fx;
    fixture_make(&fx, 8, 17);
    uint64_t rs = 8;
    corpus c = {.n = 0};
    for (int t = 0; t < NTYPES; t++) {
        for (int kind = 0; kind < 4; kind++) {
            mgp_msg m;
            sample_msg(all_types[t], kind == 3 ? 2 : kind, &rs, &fx.pos[kind], fx.recs + kind * 48,
                       1 + (uint32_t)kind, &m);
            c.f[c.n] = encode_exact(&m, &c.len[c.n]);
            c.n++;
        }
    }
    enum { CAP = 2048 };
    uint8_t *work = malloc(CAP);
    assert_non_null(work);
    long rounds = test_sanitized() ? 20000 : 200000;
    long ok = 0, eframe = 0, efield = 0, ok_by_type[MGP_CANCEL + 1] = {0};
    uint64_t s = 0x5EED;
    char err[512];
    for (long i = 0; i < rounds; i++) {
        size_t len = mutate(&c, &s, work, CAP);
        /* A heap copy of exactly len bytes: any read past it is caught. */
        uint8_t *buf = malloc(len ? len : 1);
        assert_non_null(buf);
        memcpy(buf, work, len);
        mgp_msg m;
        err[0] = '\0';
        long pk = mgp_peek(buf, len, err, sizeof err);
        assert_true(pk == MGP_EAGAIN || pk == MGP_EFRAME || (pk >= MGP_HDR && (size_t)pk <= len));
        err[0] = '\0';
        int rc = mgp_decode(buf, len, &m, err, sizeof err);
        if (rc == 0) {
            ok++;
            ok_by_type[m.type]++;
            /* A whole frame, as mgp_peek measures it. */
            assert_int_equal(pk, (long)len);
            /* Re-encoded, it decodes to the same message; and it is the
             * same frame, except for a HELLO of another version (of
             * which only magic and version were read). */
            size_t l2;
            uint8_t *g = encode_exact(&m, &l2);
            mgp_msg back;
            if (mgp_decode(g, l2, &back, err, sizeof err) != 0)
                fail_msg("round %ld: a re-encoded %s does not decode: %s", i, mgp_type_name(m.type),
                         err);
            assert_true(msg_equal(&m, &back));
            int foreign = m.type == MGP_HELLO &&
                          (m.u.hello.magic != MGP_MAGIC || m.u.hello.version != MGP_VERSION);
            if (!foreign) {
                assert_int_equal(l2, len);
                assert_memory_equal(g, buf, len);
            }
            free(g);
        } else {
            assert_true(rc == MGP_EFRAME || rc == MGP_EFIELD);
            eframe += rc == MGP_EFRAME;
            efield += rc == MGP_EFIELD;
            assert_true(err[0] != '\0');
            /* A frame with a known type is named in its error. */
            if (len >= MGP_HDR && buf[4] >= MGP_HELLO && buf[4] <= MGP_CANCEL)
                assert_non_null(strstr(err, mgp_type_name(buf[4])));
        }
        free(buf);
    }
    printf("  (fuzz: %ld frames, %ld decoded, %ld bad frames, %ld bad fields)\n", rounds, ok,
           eframe, efield);
    assert_true(ok > rounds / 50);
    assert_true(eframe > rounds / 4);
    assert_true(efield > rounds / 100);
    for (int t = MGP_HELLO; t <= MGP_CANCEL; t++)
        assert_true(ok_by_type[t] > 0);
    for (int i = 0; i < c.n; i++)
        free(c.f[i]);
    free(work);
    fixture_free(&fx);
}

/* ---- names and tokens ------------------------------------------------- */

static void
test_type_names(void **state)
{
    (void)state;
    static const char *const want[] = {"HELLO",  "WELCOME", "REJECT",    "JOB",   "PROOF",
                                       "RESULT", "ACK",     "HEARTBEAT", "CANCEL"};
    for (int t = MGP_HELLO; t <= MGP_CANCEL; t++)
        assert_string_equal(mgp_type_name(t), want[t - 1]);
    assert_string_equal(mgp_type_name(0), "type 0");
    assert_string_equal(mgp_type_name(42), "type 42");
    assert_string_equal(mgp_type_name(-3), "type -3");
}

static void
test_token_equal(void **state)
{
    (void)state;
    char a[MGP_TOKEN_MAX + 1], b[MGP_TOKEN_MAX + 1];
    uint64_t rs = 10;
    fill_str(a, MGP_TOKEN_MAX, &rs);
    memcpy(b, a, sizeof a);
    assert_true(mgp_token_equal(a, b));
    assert_true(mgp_token_equal("", ""));
    assert_true(mgp_token_equal("s3cret", "s3cret"));
    /* Differences at the first and the last byte. */
    b[0] ^= 1;
    assert_false(mgp_token_equal(a, b));
    b[0] ^= 1;
    b[MGP_TOKEN_MAX - 1] ^= 0x80;
    assert_false(mgp_token_equal(a, b));
    assert_false(mgp_token_equal("s3cret", "s3creT"));
    /* Prefixes both ways, and empty against non-empty. */
    assert_false(mgp_token_equal("s3cret", "s3cre"));
    assert_false(mgp_token_equal("s3cre", "s3cret"));
    assert_false(mgp_token_equal("", "x"));
    assert_false(mgp_token_equal("x", ""));
    memcpy(b, a, sizeof a);
    b[MGP_TOKEN_MAX - 1] = '\0';
    assert_false(mgp_token_equal(a, b));
    assert_false(mgp_token_equal(b, a));
    /* NULL reads as no token. */
    assert_true(mgp_token_equal(NULL, ""));
    assert_false(mgp_token_equal(NULL, "x"));
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_roundtrip_every_type), cmocka_unit_test(test_encoded_max),
        cmocka_unit_test(test_proof_records),        cmocka_unit_test(test_peek),
        cmocka_unit_test(test_decode_sizes),         cmocka_unit_test(test_hello_other_versions),
        cmocka_unit_test(test_decode_fields),        cmocka_unit_test(test_encode_refusals),
        cmocka_unit_test(test_fuzz_decode),          cmocka_unit_test(test_type_names),
        cmocka_unit_test(test_token_equal),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
