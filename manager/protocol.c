/*
 * protocol.c - the manager-worker wire protocol: framing, the encoder and
 * the decoder (layouts and limits in protocol.h, which is the contract).
 *
 * Why it is written this way:
 *   - Pure functions on memory. The decoder is what a peer's bytes meet
 *     first, so it is the part a fuzz test drives (tests/
 *     test_manager_protocol.c) without sockets, under AddressSanitizer.
 *   - Fields are packed byte by byte, little-endian, never by casting a
 *     C struct onto the buffer: the wire does not depend on the
 *     compiler's padding, the machine's byte order or the buffer's
 *     alignment.
 *   - Every read is bounded by the payload length, checked before the
 *     read: a frame is refused for its size before any field is looked
 *     at (MGP_EFRAME), and only then are its fields checked (MGP_EFIELD).
 *   - One field checker (mgp_check) serves both directions: whatever
 *     mgp_encode accepts, mgp_decode accepts, so a sender finds its own
 *     bad message before the peer drops the connection for it.
 *   - The encoding is canonical: each message has exactly one frame
 *     (strings carry their exact length, nothing is padded), so a frame
 *     that decodes re-encodes to the same bytes. The one exception is a
 *     HELLO of another magic or version, of which only those two fields
 *     are read (see mgp_decode_hello).
 *
 * OWNS: nothing but pure functions on memory (no state, thread-safe).
 * CALLS: libc only. manager.c and worker.c call it; it is the lowest
 *   layer of manager/ besides peer.c.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "manager/protocol.h"

/* ---- constants -------------------------------------------------------- */

#define MGP_POS_BYTES 17 /* pos: four u32 masks and the side to move */
#define MGP_STR_HDR 2    /* str: its u16 length */

/* Payload sizes (bytes), from protocol.h's layouts. */
#define MGP_HELLO_HEAD 6                                    /* magic, version */
#define MGP_HELLO_FIXED 12                                  /* ... db_pieces, pid */
#define MGP_HELLO_MIN (MGP_HELLO_FIXED + 2 * MGP_STR_HDR)   /* two empty strings */
#define MGP_WELCOME_LEN 16                                  /* version .. db_pieces */
#define MGP_REJECT_MIN MGP_STR_HDR                          /* an empty reason */
#define MGP_JOB_LEN (8 + MGP_POS_BYTES + 1 + 1 + 4 + 8)     /* 39 */
#define MGP_PROOF_HEAD 12                                   /* id, count */
#define MGP_RESULT_FIXED (8 + 1 + 1 + 4 + 4 + 2 + 8 + 4)    /* 32 */
#define MGP_RESULT_MIN (MGP_RESULT_FIXED + MGP_STR_HDR + 2) /* an empty message, no scores */
#define MGP_ID_LEN 8                                        /* ACK, HEARTBEAT, CANCEL */
#define MGP_REC_KEY 16                                      /* a PROOF record's key */
#define MGP_REC_VAL (MGP_PROOF_REC - MGP_REC_KEY)           /* and its value */

/* ---- types ------------------------------------------------------------ */

/* A payload being read: the bytes, their count and the next offset. The
 * decoders check the room for each field before reading it. */
typedef struct mgp_rd {
    const uint8_t *b;
    size_t n;
    size_t off;
    const char *msg; /* the message's name, for errors */
} mgp_rd;

/* ---- small helpers ---------------------------------------------------- */

static void
mgp_put16(uint8_t *b, uint16_t v)
{
    b[0] = (uint8_t)v;
    b[1] = (uint8_t)(v >> 8);
}

static void
mgp_put32(uint8_t *b, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        b[i] = (uint8_t)(v >> (8 * i));
}

static void
mgp_put64(uint8_t *b, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        b[i] = (uint8_t)(v >> (8 * i));
}

static uint16_t
mgp_get16(const uint8_t *b)
{
    return (uint16_t)(b[0] | (b[1] << 8));
}

static uint32_t
mgp_get32(const uint8_t *b)
{
    return (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
}

static uint64_t
mgp_get64(const uint8_t *b)
{
    return (uint64_t)mgp_get32(b) | (uint64_t)mgp_get32(b + 4) << 32;
}

/* Whether type is one of the nine messages. */
static int
mgp_type_known(uint32_t type)
{
    return type >= MGP_HELLO && type <= MGP_CANCEL;
}

/* The position of a 16-byte store key (four u32 masks, store.h), Black to
 * move: only to name what is wrong with a key in a message. */
static eng_pos
mgp_pos_of_key(const uint8_t *key)
{
    eng_pos p = {mgp_get32(key), mgp_get32(key + 4), mgp_get32(key + 8), mgp_get32(key + 12),
                 ENG_BLACK};
    return p;
}

/* ---- field checks (both directions) ----------------------------------- */

/* A string field of a message struct: NUL-terminated within its limit. */
static int
mgp_check_str(const char *msg, const char *field, const char *s, size_t limit, char *err,
              size_t errlen)
{
    if (strnlen(s, limit + 1) > limit) {
        eng_errf(err, errlen, "%s: %s: longer than the %zu bytes allowed", msg, field, limit);
        return MGP_EFIELD;
    }
    return 0;
}

/*
 * One PROOF record: a store value that pst_decode accepts for a key that
 * is a position. The reason pst_decode refuses a value is not public (a
 * damaged record is damage); a key that is no position is named by
 * eng_validate's reason.
 */
static int
mgp_check_record(const uint8_t *rec, uint32_t i, uint32_t count, char *err, size_t errlen)
{
    pst_item it;
    int rc = pst_item_decode(rec, rec + MGP_REC_KEY, MGP_REC_VAL, &it);
    if (rc == PST_ECORRUPT) {
        eng_errf(err, errlen,
                 "PROOF: record %" PRIu32 " of %" PRIu32
                 ": the store refuses its value (checksum, record format or codes)",
                 i, count);
        return MGP_EFIELD;
    }
    if (rc != 0) {
        char why[160] = "not a position";
        eng_pos c = mgp_pos_of_key(rec);
        eng_validate(&c, why, sizeof why);
        eng_errf(err, errlen, "PROOF: record %" PRIu32 " of %" PRIu32 ": key invalid: %s", i, count,
                 why);
        return MGP_EFIELD;
    }
    return 0;
}

/*
 * mgp_check - the field rules of protocol.h, on a message struct: the
 * same for a message about to be encoded and one just decoded. Sizes are
 * not its business (the encoder computes them, the decoder has checked
 * them).
 */
static int
mgp_check(const mgp_msg *m, char *err, size_t errlen)
{
    char why[160];
    int rc;
    switch (m->type) {
    case MGP_HELLO: {
        const mgp_hello *h = &m->u.hello;
        if ((rc = mgp_check_str("HELLO", "token", h->token, MGP_TOKEN_MAX, err, errlen)) ||
            (rc = mgp_check_str("HELLO", "name", h->name, MGP_NAME_MAX, err, errlen)))
            return rc;
        return 0;
    }
    case MGP_REJECT:
        return mgp_check_str("REJECT", "reason", m->u.reason, MGP_REASON_MAX, err, errlen);
    case MGP_JOB: {
        const mgp_job *j = &m->u.job;
        if (eng_validate(&j->pos, why, sizeof why) != 0) {
            eng_errf(err, errlen, "JOB: position invalid: %s", why);
            return MGP_EFIELD;
        }
        if (j->q.attacker != ENG_BLACK && j->q.attacker != ENG_WHITE) {
            eng_errf(err, errlen, "JOB: attacker %d invalid: 0 (Black) or 1 (White)",
                     j->q.attacker);
            return MGP_EFIELD;
        }
        if (j->q.target != ENG_WIN && j->q.target != ENG_DRAW) {
            eng_errf(err, errlen, "JOB: target %d invalid: ENG_WIN or ENG_DRAW", j->q.target);
            return MGP_EFIELD;
        }
        return 0;
    }
    case MGP_PROOF: {
        const mgp_proof *p = &m->u.proof;
        if (p->count < 1 || p->count > MGP_PROOF_CHUNK) {
            eng_errf(err, errlen, "PROOF: count %" PRIu32 " out of range 1..%d", p->count,
                     MGP_PROOF_CHUNK);
            return MGP_EFIELD;
        }
        if (!p->records) {
            eng_errf(err, errlen, "PROOF: records missing (NULL) for count %" PRIu32, p->count);
            return MGP_EFIELD;
        }
        for (uint32_t i = 0; i < p->count; i++)
            if ((rc = mgp_check_record(p->records + (size_t)i * MGP_PROOF_REC, i, p->count, err,
                                       errlen)) != 0)
                return rc;
        return 0;
    }
    case MGP_RESULT: {
        const mgp_result *r = &m->u.result;
        if (!eng_bound_valid(r->bound)) {
            eng_errf(err, errlen, "RESULT: bound %u invalid: a bound code 0..5",
                     (unsigned)r->bound);
            return MGP_EFIELD;
        }
        if (r->status > MGP_FAILED) {
            eng_errf(err, errlen, "RESULT: status %u invalid: 0 (done), 1 (budget) or 2 (failed)",
                     (unsigned)r->status);
            return MGP_EFIELD;
        }
        if (r->nscores > MGP_SCORES_MAX) {
            eng_errf(err, errlen, "RESULT: %u child scores, more than the %d allowed",
                     (unsigned)r->nscores, MGP_SCORES_MAX);
            return MGP_EFIELD;
        }
        return mgp_check_str("RESULT", "message", r->message, MGP_REASON_MAX, err, errlen);
    }
    case MGP_WELCOME:
    case MGP_ACK:
    case MGP_HEARTBEAT:
    case MGP_CANCEL:
        return 0; /* every value of their fields is valid */
    default:
        eng_errf(err, errlen, "%s: unknown message type", mgp_type_name(m->type));
        return MGP_EFIELD;
    }
}

/* ---- decoding --------------------------------------------------------- */

/* A fixed-size payload: exactly want bytes. */
static int
mgp_rd_exact(const mgp_rd *r, size_t want, char *err, size_t errlen)
{
    if (r->n != want) {
        eng_errf(err, errlen, "%s: payload is %zu bytes, expected %zu", r->msg, r->n, want);
        return MGP_EFRAME;
    }
    return 0;
}

/* A variable payload: at least its fixed part. */
static int
mgp_rd_min(const mgp_rd *r, size_t want, char *err, size_t errlen)
{
    if (r->n < want) {
        eng_errf(err, errlen, "%s: payload is %zu bytes, expected at least %zu", r->msg, r->n,
                 want);
        return MGP_EFRAME;
    }
    return 0;
}

/* The end of a variable payload: nothing may follow the last field. */
static int
mgp_rd_end(const mgp_rd *r, char *err, size_t errlen)
{
    if (r->off != r->n) {
        eng_errf(err, errlen, "%s: payload is %zu bytes, %zu more than its fields use", r->msg,
                 r->n, r->n - r->off);
        return MGP_EFRAME;
    }
    return 0;
}

/* Fixed-width fields. The callers have checked the room (mgp_rd_exact,
 * mgp_rd_min, or the string's own check). */
static uint8_t
mgp_rd8(mgp_rd *r)
{
    return r->b[r->off++];
}

static uint16_t
mgp_rd16(mgp_rd *r)
{
    uint16_t v = mgp_get16(r->b + r->off);
    r->off += 2;
    return v;
}

static uint32_t
mgp_rd32(mgp_rd *r)
{
    uint32_t v = mgp_get32(r->b + r->off);
    r->off += 4;
    return v;
}

static uint64_t
mgp_rd64(mgp_rd *r)
{
    uint64_t v = mgp_get64(r->b + r->off);
    r->off += 8;
    return v;
}

static eng_pos
mgp_rd_pos(mgp_rd *r)
{
    eng_pos p;
    p.bm = mgp_rd32(r);
    p.wm = mgp_rd32(r);
    p.bk = mgp_rd32(r);
    p.wk = mgp_rd32(r);
    p.stm = mgp_rd8(r);
    return p;
}

/*
 * A str field into out (capacity limit + 1). after: the bytes of fixed
 * fields that must still follow it. The limit is checked before the
 * room, so a string announced too long is MGP_EFIELD whether or not its
 * bytes came; a string that runs past the payload (or into the fields
 * after it) is MGP_EFRAME; a NUL byte inside is MGP_EFIELD (the C string
 * would silently lose its tail).
 */
static int
mgp_rd_str(mgp_rd *r, const char *field, size_t limit, size_t after, char *out, char *err,
           size_t errlen)
{
    /* The callers' minimum sizes already leave room for the length; the
     * check stays so that this function is safe on its own. */
    if (r->n - r->off < MGP_STR_HDR) {
        eng_errf(err, errlen, "%s: %s: its length runs past the payload end", r->msg, field);
        return MGP_EFRAME;
    }
    size_t len = mgp_rd16(r);
    if (len > limit) {
        eng_errf(err, errlen, "%s: %s: %zu bytes, more than the %zu allowed", r->msg, field, len,
                 limit);
        return MGP_EFIELD;
    }
    size_t left = r->n - r->off;
    if (left < after || left - after < len) {
        eng_errf(err, errlen, "%s: %s: %zu bytes announced, the payload has %zu left for it",
                 r->msg, field, len, left >= after ? left - after : 0);
        return MGP_EFRAME;
    }
    const uint8_t *s = r->b + r->off;
    const uint8_t *nul = memchr(s, 0, len);
    if (nul) {
        eng_errf(err, errlen, "%s: %s: NUL byte at offset %zu of %zu", r->msg, field,
                 (size_t)(nul - s), len);
        return MGP_EFIELD;
    }
    memcpy(out, s, len);
    out[len] = '\0';
    r->off += len;
    return 0;
}

/*
 * HELLO. Magic and version come first and are read before anything else:
 * a HELLO of another magic or version is returned with only those two
 * fields set (the rest zero), without reading the rest of its payload,
 * whose layout that version may have changed. The manager then refuses
 * it by name (protocol.h, VERSIONING); refusing it here as a bad frame
 * would close the connection with no REJECT, and the worker would retry
 * for ever.
 */
static int
mgp_decode_hello(mgp_rd *r, mgp_hello *h, char *err, size_t errlen)
{
    int rc;
    if ((rc = mgp_rd_min(r, MGP_HELLO_HEAD, err, errlen)) != 0)
        return rc;
    h->magic = mgp_rd32(r);
    h->version = mgp_rd16(r);
    if (h->magic != MGP_MAGIC || h->version != MGP_VERSION)
        return 0;
    if ((rc = mgp_rd_min(r, MGP_HELLO_MIN, err, errlen)) != 0)
        return rc;
    h->db_pieces = mgp_rd16(r);
    h->pid = mgp_rd32(r);
    if ((rc = mgp_rd_str(r, "token", MGP_TOKEN_MAX, MGP_STR_HDR, h->token, err, errlen)) != 0 ||
        (rc = mgp_rd_str(r, "name", MGP_NAME_MAX, 0, h->name, err, errlen)) != 0)
        return rc;
    return mgp_rd_end(r, err, errlen);
}

static int
mgp_decode_proof(mgp_rd *r, mgp_proof *p, char *err, size_t errlen)
{
    int rc;
    if ((rc = mgp_rd_min(r, MGP_PROOF_HEAD, err, errlen)) != 0)
        return rc;
    p->id = mgp_rd64(r);
    p->count = mgp_rd32(r);
    /* In 64 bits: a count near 2^32 must not wrap into a plausible size. */
    uint64_t want = MGP_PROOF_HEAD + (uint64_t)p->count * MGP_PROOF_REC;
    if (r->n != want) {
        eng_errf(err, errlen,
                 "PROOF: payload is %zu bytes, expected %" PRIu64 " for count %" PRIu32
                 " (12 + 48 per record)",
                 r->n, want, p->count);
        return MGP_EFRAME;
    }
    p->records = r->b + r->off; /* checked record by record in mgp_check */
    return 0;
}

static int
mgp_decode_result(mgp_rd *r, mgp_result *res, char *err, size_t errlen)
{
    int rc;
    if ((rc = mgp_rd_min(r, MGP_RESULT_MIN, err, errlen)) != 0)
        return rc;
    res->id = mgp_rd64(r);
    res->bound = mgp_rd8(r);
    res->status = mgp_rd8(r);
    res->records = mgp_rd32(r);
    res->score = (int32_t)mgp_rd32(r);
    res->depth = mgp_rd16(r);
    res->nodes = mgp_rd64(r);
    res->ms = mgp_rd32(r);
    if ((rc = mgp_rd_str(r, "message", MGP_REASON_MAX, 2, res->message, err, errlen)) != 0)
        return rc;
    res->nscores = mgp_rd16(r);
    if (res->nscores > MGP_SCORES_MAX) {
        eng_errf(err, errlen, "RESULT: %u child scores, more than the %d allowed",
                 (unsigned)res->nscores, MGP_SCORES_MAX);
        return MGP_EFIELD;
    }
    if (r->n - r->off != (size_t)res->nscores * 2) {
        eng_errf(err, errlen, "RESULT: %u child scores announced, %zu bytes left for them",
                 (unsigned)res->nscores, r->n - r->off);
        return MGP_EFRAME;
    }
    for (uint16_t k = 0; k < res->nscores; k++)
        res->scores[k] = (int16_t)mgp_rd16(r);
    return mgp_rd_end(r, err, errlen);
}

/* The payload of a frame whose header has been checked: its shape first
 * (MGP_EFRAME), then its fields (mgp_check, MGP_EFIELD). */
static int
mgp_decode_payload(mgp_rd *r, mgp_msg *m, char *err, size_t errlen)
{
    int rc = 0;
    switch (m->type) {
    case MGP_HELLO:
        rc = mgp_decode_hello(r, &m->u.hello, err, errlen);
        break;
    case MGP_WELCOME:
        if ((rc = mgp_rd_exact(r, MGP_WELCOME_LEN, err, errlen)) != 0)
            return rc;
        m->u.welcome.version = mgp_rd16(r);
        m->u.welcome.worker_id = mgp_rd32(r);
        m->u.welcome.heartbeat_ms = mgp_rd32(r);
        m->u.welcome.silence_ms = mgp_rd32(r);
        m->u.welcome.db_pieces = mgp_rd16(r);
        break;
    case MGP_REJECT:
        if ((rc = mgp_rd_min(r, MGP_REJECT_MIN, err, errlen)) != 0 ||
            (rc = mgp_rd_str(r, "reason", MGP_REASON_MAX, 0, m->u.reason, err, errlen)) != 0)
            return rc;
        rc = mgp_rd_end(r, err, errlen);
        break;
    case MGP_JOB:
        if ((rc = mgp_rd_exact(r, MGP_JOB_LEN, err, errlen)) != 0)
            return rc;
        m->u.job.id = mgp_rd64(r);
        m->u.job.pos = mgp_rd_pos(r);
        m->u.job.q.attacker = mgp_rd8(r);
        uint8_t g = mgp_rd8(r); /* the wire's code of the target */
        if (g != MGP_GOAL_WIN && g != MGP_GOAL_DRAW) {
            eng_errf(err, errlen, "JOB: goal %u invalid: 1 (win) or 2 (draw)", (unsigned)g);
            return MGP_EFIELD;
        }
        m->u.job.q.target = g == MGP_GOAL_WIN ? ENG_WIN : ENG_DRAW;
        m->u.job.time_ms = mgp_rd32(r);
        m->u.job.node_limit = mgp_rd64(r);
        break;
    case MGP_PROOF:
        rc = mgp_decode_proof(r, &m->u.proof, err, errlen);
        break;
    case MGP_RESULT:
        rc = mgp_decode_result(r, &m->u.result, err, errlen);
        break;
    case MGP_ACK:
    case MGP_CANCEL:
        if ((rc = mgp_rd_exact(r, MGP_ID_LEN, err, errlen)) != 0)
            return rc;
        m->u.id = mgp_rd64(r);
        break;
    case MGP_HEARTBEAT:
        if ((rc = mgp_rd_exact(r, MGP_ID_LEN, err, errlen)) != 0)
            return rc;
        m->u.time = mgp_rd64(r);
        break;
    default: /* the caller has checked the type */
        eng_errf(err, errlen, "%s: unknown message type", mgp_type_name(m->type));
        return MGP_EFRAME;
    }
    if (rc != 0)
        return rc;
    return mgp_check(m, err, errlen);
}

/*
 * The header alone: the length against MGP_FRAME_MAX and the type. Both
 * are checked as soon as the five bytes are there, so that a reader
 * never waits for (or buffers) a payload it will refuse anyway.
 */
static int
mgp_header(const uint8_t *buf, uint32_t *n, uint8_t *type, char *err, size_t errlen)
{
    *n = mgp_get32(buf);
    *type = buf[4];
    if (*n > MGP_FRAME_MAX) {
        eng_errf(err, errlen, "frame (%s) announces %" PRIu32 " bytes, more than the %u allowed",
                 mgp_type_name(*type), *n, MGP_FRAME_MAX);
        return MGP_EFRAME;
    }
    if (!mgp_type_known(*type)) {
        eng_errf(err, errlen, "frame of unknown message type %u (%" PRIu32 " bytes)",
                 (unsigned)*type, *n);
        return MGP_EFRAME;
    }
    return 0;
}

long
mgp_peek(const uint8_t *buf, size_t len, char *err, size_t errlen)
{
    if (!buf || len < MGP_HDR)
        return MGP_EAGAIN;
    uint32_t n;
    uint8_t type;
    int rc = mgp_header(buf, &n, &type, err, errlen);
    if (rc != 0)
        return rc;
    if (len - MGP_HDR < n)
        return MGP_EAGAIN;
    return (long)(MGP_HDR + (size_t)n);
}

/* Decoded into a local message and copied out only when whole and
 * valid: a refused frame leaves *out as it was. */
int
mgp_decode(const uint8_t *buf, size_t len, mgp_msg *out, char *err, size_t errlen)
{
    if (!buf || !out) {
        eng_errf(err, errlen, "mgp_decode: no buffer or no message");
        return MGP_EFRAME;
    }
    if (len < MGP_HDR) {
        eng_errf(err, errlen, "frame is %zu bytes, shorter than its %d-byte header", len, MGP_HDR);
        return MGP_EFRAME;
    }
    uint32_t n;
    uint8_t type;
    int rc = mgp_header(buf, &n, &type, err, errlen);
    if (rc != 0)
        return rc;
    if (len - MGP_HDR != n) {
        eng_errf(err, errlen, "%s: frame is %zu bytes, its header announces %" PRIu32 " + %d",
                 mgp_type_name(type), len, n, MGP_HDR);
        return MGP_EFRAME;
    }
    mgp_msg m;
    memset(&m, 0, sizeof m);
    m.type = type;
    mgp_rd r = {buf + MGP_HDR, n, 0, mgp_type_name(type)};
    if ((rc = mgp_decode_payload(&r, &m, err, errlen)) != 0)
        return rc;
    *out = m;
    return 0;
}

/* ---- encoding --------------------------------------------------------- */

static uint8_t *
mgp_wr_str(uint8_t *b, const char *s, size_t len)
{
    mgp_put16(b, (uint16_t)len); /* len <= MGP_REASON_MAX, checked */
    memcpy(b + MGP_STR_HDR, s, len);
    return b + MGP_STR_HDR + len;
}

static uint8_t *
mgp_wr_pos(uint8_t *b, const eng_pos *p)
{
    mgp_put32(b, p->bm);
    mgp_put32(b + 4, p->wm);
    mgp_put32(b + 8, p->bk);
    mgp_put32(b + 12, p->wk);
    b[16] = (uint8_t)p->stm; /* 0 or 1: validated */
    return b + MGP_POS_BYTES;
}

/* The payload size of a message that mgp_check accepted. */
static size_t
mgp_payload_size(const mgp_msg *m)
{
    switch (m->type) {
    case MGP_HELLO:
        return MGP_HELLO_MIN + strlen(m->u.hello.token) + strlen(m->u.hello.name);
    case MGP_WELCOME:
        return MGP_WELCOME_LEN;
    case MGP_REJECT:
        return MGP_REJECT_MIN + strlen(m->u.reason);
    case MGP_JOB:
        return MGP_JOB_LEN;
    case MGP_PROOF:
        return MGP_PROOF_HEAD + (size_t)m->u.proof.count * MGP_PROOF_REC;
    case MGP_RESULT:
        return MGP_RESULT_MIN + strlen(m->u.result.message) + 2 * (size_t)m->u.result.nscores;
    default: /* ACK, HEARTBEAT, CANCEL */
        return MGP_ID_LEN;
    }
}

long
mgp_encode(const mgp_msg *m, uint8_t *buf, size_t cap, char *err, size_t errlen)
{
    if (!m) {
        eng_errf(err, errlen, "mgp_encode: no message");
        return MGP_EFIELD;
    }
    int rc = mgp_check(m, err, errlen);
    if (rc != 0)
        return rc;
    size_t n = mgp_payload_size(m);
    if (!buf || cap < MGP_HDR + n) {
        eng_errf(err, errlen, "%s: the frame needs %zu bytes, the buffer holds %zu",
                 mgp_type_name(m->type), MGP_HDR + n, buf ? cap : 0);
        return MGP_ENOSPC;
    }
    mgp_put32(buf, (uint32_t)n);
    buf[4] = (uint8_t)m->type;
    uint8_t *b = buf + MGP_HDR;
    switch (m->type) {
    case MGP_HELLO: {
        const mgp_hello *h = &m->u.hello;
        mgp_put32(b, h->magic);
        mgp_put16(b + 4, h->version);
        mgp_put16(b + 6, h->db_pieces);
        mgp_put32(b + 8, h->pid);
        b = mgp_wr_str(b + MGP_HELLO_FIXED, h->token, strlen(h->token));
        b = mgp_wr_str(b, h->name, strlen(h->name));
        break;
    }
    case MGP_WELCOME: {
        const mgp_welcome *w = &m->u.welcome;
        mgp_put16(b, w->version);
        mgp_put32(b + 2, w->worker_id);
        mgp_put32(b + 6, w->heartbeat_ms);
        mgp_put32(b + 10, w->silence_ms);
        mgp_put16(b + 14, w->db_pieces);
        b += MGP_WELCOME_LEN;
        break;
    }
    case MGP_REJECT:
        b = mgp_wr_str(b, m->u.reason, strlen(m->u.reason));
        break;
    case MGP_JOB: {
        const mgp_job *j = &m->u.job;
        mgp_put64(b, j->id);
        b = mgp_wr_pos(b + 8, &j->pos);
        b[0] = (uint8_t)j->q.attacker;
        b[1] = j->q.target == ENG_WIN ? MGP_GOAL_WIN : MGP_GOAL_DRAW;
        mgp_put32(b + 2, j->time_ms);
        mgp_put64(b + 6, j->node_limit);
        b += 14;
        break;
    }
    case MGP_PROOF: {
        const mgp_proof *p = &m->u.proof;
        mgp_put64(b, p->id);
        mgp_put32(b + 8, p->count);
        memcpy(b + MGP_PROOF_HEAD, p->records, (size_t)p->count * MGP_PROOF_REC);
        b += MGP_PROOF_HEAD + (size_t)p->count * MGP_PROOF_REC;
        break;
    }
    case MGP_RESULT: {
        const mgp_result *r = &m->u.result;
        mgp_put64(b, r->id);
        b[8] = r->bound;
        b[9] = r->status;
        mgp_put32(b + 10, r->records);
        mgp_put32(b + 14, (uint32_t)r->score);
        mgp_put16(b + 18, r->depth);
        mgp_put64(b + 20, r->nodes);
        mgp_put32(b + 28, r->ms);
        b = mgp_wr_str(b + MGP_RESULT_FIXED, r->message, strlen(r->message));
        mgp_put16(b, r->nscores);
        b += 2;
        for (uint16_t k = 0; k < r->nscores; k++, b += 2)
            mgp_put16(b, (uint16_t)r->scores[k]);
        break;
    }
    case MGP_ACK:
    case MGP_CANCEL:
        mgp_put64(b, m->u.id);
        b += MGP_ID_LEN;
        break;
    case MGP_HEARTBEAT:
        mgp_put64(b, m->u.time);
        b += MGP_ID_LEN;
        break;
    }
    /* The layout and the size computed above agree. */
    if ((size_t)(b - buf) != MGP_HDR + n) {
        eng_errf(err, errlen, "%s: internal error: wrote %zu bytes of a %zu-byte frame",
                 mgp_type_name(m->type), (size_t)(b - buf), MGP_HDR + n);
        return MGP_EFIELD;
    }
    return (long)(MGP_HDR + n);
}

size_t
mgp_encoded_max(int type, uint32_t count)
{
    switch (type) {
    case MGP_HELLO:
        return MGP_HDR + MGP_HELLO_MIN + MGP_TOKEN_MAX + MGP_NAME_MAX;
    case MGP_WELCOME:
        return MGP_HDR + MGP_WELCOME_LEN;
    case MGP_REJECT:
        return MGP_HDR + MGP_REJECT_MIN + MGP_REASON_MAX;
    case MGP_JOB:
        return MGP_HDR + MGP_JOB_LEN;
    case MGP_PROOF:
        return MGP_HDR + MGP_PROOF_HEAD + (size_t)count * MGP_PROOF_REC;
    case MGP_RESULT:
        return MGP_HDR + MGP_RESULT_MIN + MGP_REASON_MAX + 2 * MGP_SCORES_MAX;
    case MGP_ACK:
    case MGP_HEARTBEAT:
    case MGP_CANCEL:
        return MGP_HDR + MGP_ID_LEN;
    default:
        return 0;
    }
}

/* ---- PROOF records ---------------------------------------------------- */

int
mgp_proof_item(const mgp_proof *p, uint32_t i, pst_item *out)
{
    if (!p || !out || !p->records || i >= p->count)
        return MGP_EFIELD;
    const uint8_t *rec = p->records + (size_t)i * MGP_PROOF_REC;
    return pst_item_decode(rec, rec + MGP_REC_KEY, MGP_REC_VAL, out) == 0 ? 0 : MGP_EFIELD;
}

void
mgp_proof_record(const pst_item *it, uint8_t out[MGP_PROOF_REC])
{
    pst_item_encode(it, out, out + MGP_REC_KEY);
}

/* ---- names and tokens ------------------------------------------------- */

const char *
mgp_type_name(int type)
{
    static const char *const names[] = {NULL,    "HELLO",  "WELCOME", "REJECT",    "JOB",
                                        "PROOF", "RESULT", "ACK",     "HEARTBEAT", "CANCEL"};
    if (type >= MGP_HELLO && type <= MGP_CANCEL)
        return names[type];
    /* One buffer per thread (protocol.h): two threads naming unknown
     * types do not overwrite each other's text. */
    static _Thread_local char buf[24];
    snprintf(buf, sizeof buf, "type %d", type);
    return buf;
}

/*
 * The time depends on the two lengths only: every byte up to the longer
 * length is compared (a string shorter than that reads as its own NUL
 * repeated, which stays inside it), differences are ORed together with
 * no branch on them, and the lengths are folded in the same way. A peer
 * guessing the token learns nothing from how long a refusal took but
 * the lengths, which the token's limit bounds anyway.
 */
int
mgp_token_equal(const char *a, const char *b)
{
    if (!a)
        a = "";
    if (!b)
        b = "";
    size_t la = strlen(a), lb = strlen(b);
    size_t n = la > lb ? la : lb;
    size_t diff = la ^ lb;
    for (size_t i = 0; i < n; i++) {
        unsigned char ca = (unsigned char)a[i < la ? i : la];
        unsigned char cb = (unsigned char)b[i < lb ? i : lb];
        diff |= (size_t)(ca ^ cb);
    }
    return diff == 0;
}

const char *
mgp_strerror(int code)
{
    switch (code) {
    case MGP_OK:
        return "success";
    case MGP_EAGAIN:
        return "not enough bytes yet for a whole frame";
    case MGP_EFRAME:
        return "a bad frame (oversized, of no known type, or of the wrong size)";
    case MGP_EFIELD:
        return "a field out of range";
    case MGP_ENOSPC:
        return "the output buffer is too small";
    default:
        return "unknown protocol error";
    }
}
