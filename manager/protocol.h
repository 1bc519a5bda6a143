/*
 * protocol.h - the wire protocol between the proof-tree manager and its
 * solver workers: framing, messages, and the pure encoder and decoder
 * under both ends (manager.c, worker.c). No I/O here: every function
 * works on memory, so the decoder can be fuzzed in the test suite.
 *
 * TRANSPORT
 *   One TCP connection per worker, opened by the worker. Both ends use
 *   libevent bufferevents. The manager listens on loopback unless told
 *   otherwise (--listen); beyond loopback a shared token is required.
 *
 * FRAMES (little-endian throughout)
 *   0..3  u32  payload length n (0 .. MGP_FRAME_MAX)
 *   4     u8   message type (MGP_*)
 *   5..   n    payload bytes, laid out per message below
 *   A frame announcing more than MGP_FRAME_MAX bytes, an unknown type, a
 *   payload shorter or longer than its message's layout, or a field out
 *   of range (an invalid position, bound or goal; a string too long or
 *   with a NUL byte) is a protocol error: the receiver closes that one
 *   connection and logs the decoder's message. A reader waits for
 *   MGP_HDR bytes, checks the length, then waits for the whole payload.
 *
 * FIELD TYPES
 *   str   u16 length L then L bytes (no NUL, L <= the field's limit)
 *   pos   17 bytes: u32 black men, u32 white men, u32 black kings,
 *         u32 white kings (bit i = square i+1), u8 side to move (0 Black,
 *         1 White); it must pass eng_validate
 *
 * MESSAGES
 *   HELLO (worker -> manager, first frame on a connection)
 *     u32 magic MGP_MAGIC, u16 version MGP_VERSION, u16 db_pieces (what
 *     the worker's databases cover, as a database scope, egdb.h: bits
 *     0-3 the complete piece counts, bits 4-13 the whole splits of the
 *     next count; a plain piece count as before), u32 pid,
 *     str token (<= MGP_TOKEN_MAX; empty when none), str name (<=
 *     MGP_NAME_MAX: host and pid, for logs and the status page).
 *     The version is the field after the magic, so that any later
 *     version can still be recognised and refused by name. The decoder
 *     checks neither: a HELLO of another magic or version decodes with
 *     only those two fields set (the rest zero; the rest of its payload,
 *     which that version may lay out otherwise, is not read), so that
 *     the manager can refuse it (VERSIONING) instead of dropping the
 *     connection over a layout it does not know.
 *   WELCOME (manager -> worker, the reply to a good HELLO)
 *     u16 version, u32 worker id, u32 heartbeat_ms (how often each side
 *     sends HEARTBEAT), u32 silence_ms (silence after which a connection
 *     is dropped), u16 db_pieces (the database scope the proof rests on,
 *     as in HELLO: the worker opens its databases to exactly it, so that
 *     its leaves are the manager's).
 *   REJECT (manager -> worker, then the manager closes)
 *     str reason (<= MGP_REASON_MAX): "version 2 not supported (this
 *     manager speaks 1)", "bad token", ... A REJECT only ever answers a
 *     HELLO (its version, its token or its databases: nothing a retry
 *     changes), so a worker refused before WELCOME stops (exit 2). The
 *     reason is for people: no decision is taken from its words.
 *   JOB (manager -> worker)
 *     u64 job id (unique for the life of a state directory), pos
 *     position, u8 attacker (0 Black, 1 White), u8 goal (MGP_GOAL_WIN:
 *     does the attacker win; MGP_GOAL_DRAW: does it at least draw), u32
 *     time_ms (the budget for alpha-beta and df-pn together), u64
 *     node_limit (df-pn positions, 0: none).
 *   PROOF (worker -> manager, zero or more, before the job's RESULT)
 *     u64 job id, u32 count (1 .. MGP_PROOF_CHUNK), count records of 48
 *     bytes each: the 16-byte canonical key and the 32-byte value of the
 *     proven-node store (prover/store.h, KEYS AND FILE FORMAT), so each
 *     record carries its own checksum and is decoded by pst_decode.
 *     Together the job's PROOF frames hold the whole proof of its result
 *     below the job's position: every stored record the checker
 *     (prover/check.h) would visit, the job's own position included,
 *     except records of batches this manager ACKed on this connection
 *     (the manager's store holds them: admission takes them as admitted
 *     leaves; prover/admit.h, WHAT A WORKER SENDS).
 *   RESULT (worker -> manager)
 *     u64 job id, u8 bound (engine/value.h code for the job position's
 *     side to move; LW when nothing was proved), u8 status (MGP_DONE: the
 *     goal was settled; MGP_BUDGET: the budget ran out; MGP_FAILED: the
 *     solver failed, see message), u32 records (how many PROOF records
 *     were sent: the manager refuses a result whose count differs), i32
 *     score (the alpha-beta score for the side to move, hundredths of a
 *     man, search.h's scale), u16 depth (of that score), u64 nodes, u32
 *     ms (wall time), str message (<= MGP_REASON_MAX; empty on success),
 *     u16 n (<= MGP_SCORES_MAX) then n i16: the alpha-beta scores of the
 *     job position's children, in eng_generate (merged) order, each for
 *     its own side to move, when the job left its position open (0
 *     otherwise): the manager gives them to the children if it expands
 *     the node, so that it never runs alpha-beta itself (version 2).
 *   ACK (manager -> worker)
 *     u64 job id: the result and its proof are committed to the state
 *     directory (or the job was answered already: then it was by this
 *     result, sent before; a result for a job of another proof is ACKed
 *     and dropped, which is why a worker trusts only the ACK of a result
 *     sent on the connection its job came on, and forgets every ACK at a
 *     new connection). Until it sees ACK, a worker keeps the result and sends
 *     it again after a reconnect. Results are idempotent: the manager
 *     merges a bound with what it knows, so a late or repeated result
 *     changes nothing it should not.
 *   HEARTBEAT (either way)
 *     u64 sender's monotonic milliseconds (informational).
 *   CANCEL (manager -> worker)
 *     u64 job id: the job is no longer the worker's (its lease ran out
 *     and it went back to the pool, or the manager is stopping); the
 *     worker stops it and sends nothing for it (tests/e2e_admission.sh
 *     checks both ends).
 *
 * VERSIONING
 *   MGP_VERSION changes with any change to a layout above. A manager
 *   answers a HELLO of another version (or another magic) with REJECT
 *   naming both versions and closes. So that every version understands
 *   that exchange, the frame header, the codes of HELLO and REJECT,
 *   HELLO's first six bytes (magic, version) and REJECT's layout never
 *   change.
 */
#ifndef MANAGER_PROTOCOL_H
#define MANAGER_PROTOCOL_H

#include <stddef.h>
#include <stdint.h>

#include "engine/engine.h"
#include "engine/value.h"
#include "prover/store.h"

/* ---- constants ------------------------------------------------------ */

#define MGP_MAGIC 0x57504b43u    /* "CKPW" read as little-endian bytes */
#define MGP_VERSION 2            /* 2: RESULT carries the children's scores */
#define MGP_SCORES_MAX 256       /* child scores in a RESULT at most */
#define MGP_HDR 5                /* u32 length + u8 type */
#define MGP_FRAME_MAX (4u << 20) /* largest payload accepted: 4 MiB */
#define MGP_PROOF_CHUNK 65536    /* records in one PROOF frame at most */
#define MGP_PROOF_REC 48         /* bytes per PROOF record */
#define MGP_TOKEN_MAX 256
#define MGP_NAME_MAX 128
#define MGP_REASON_MAX 512

enum mgp_type {
    MGP_HELLO = 1,
    MGP_WELCOME = 2,
    MGP_REJECT = 3,
    MGP_JOB = 4,
    MGP_PROOF = 5,
    MGP_RESULT = 6,
    MGP_ACK = 7,
    MGP_HEARTBEAT = 8,
    MGP_CANCEL = 9
};

/* A question's target on the wire (JOB); in memory it is an
 * eng_question (engine/value.h) like everywhere else. */
enum mgp_goal { MGP_GOAL_WIN = 1, MGP_GOAL_DRAW = 2 };
enum mgp_status { MGP_DONE = 0, MGP_BUDGET = 1, MGP_FAILED = 2 };

/* Error codes (all negative, the protocol's range -701.., errors/errors.h;
 * mgp_strerror names them). */
enum mgp_err {
    MGP_OK = 0,
    MGP_EAGAIN = -701, /* not enough bytes yet for a whole frame */
    MGP_EFRAME = -702, /* a bad frame: oversized, unknown type, wrong size  */
    MGP_EFIELD = -703, /* a field out of range (position, bound, string...) */
    MGP_ENOSPC = -704  /* the output buffer is too small (encoder)          */
};

/* ---- types ---------------------------------------------------------- */

typedef struct mgp_hello {
    uint32_t magic;
    uint16_t version;
    uint16_t db_pieces;
    uint32_t pid;
    char token[MGP_TOKEN_MAX + 1];
    char name[MGP_NAME_MAX + 1];
} mgp_hello;

typedef struct mgp_welcome {
    uint16_t version;
    uint32_t worker_id;
    uint32_t heartbeat_ms, silence_ms;
    uint16_t db_pieces;
} mgp_welcome;

typedef struct mgp_job {
    uint64_t id;
    eng_pos pos;
    eng_question q; /* on the wire: u8 attacker, u8 MGP_GOAL_* of its target */
    uint32_t time_ms;
    uint64_t node_limit;
} mgp_job;

/* A PROOF frame decoded: records point into the frame's payload (48
 * bytes each, already checked with pst_decode by the decoder). */
typedef struct mgp_proof {
    uint64_t id;
    uint32_t count;
    const uint8_t *records;
} mgp_proof;

typedef struct mgp_result {
    uint64_t id;
    uint8_t bound;  /* eng_bound */
    uint8_t status; /* MGP_DONE, MGP_BUDGET, MGP_FAILED */
    uint32_t records;
    int32_t score;
    uint16_t depth;
    uint64_t nodes;
    uint32_t ms;
    char message[MGP_REASON_MAX + 1];
    uint16_t nscores; /* the children's scores (RESULT above), 0: none */
    int16_t scores[MGP_SCORES_MAX];
} mgp_result;

/* Any decoded message. */
typedef struct mgp_msg {
    int type; /* MGP_* */
    union {
        mgp_hello hello;
        mgp_welcome welcome;
        char reason[MGP_REASON_MAX + 1]; /* REJECT */
        mgp_job job;
        mgp_proof proof;
        mgp_result result;
        uint64_t id;   /* ACK, CANCEL */
        uint64_t time; /* HEARTBEAT */
    } u;
} mgp_msg;

/* ---- functions ------------------------------------------------------ */

/*
 * mgp_peek - looks at the first len bytes of a stream. RETURN the whole
 * frame's size (MGP_HDR + payload) when a whole frame is there;
 * MGP_EAGAIN when more bytes are needed (fewer than MGP_HDR, or the
 * payload incomplete); MGP_EFRAME when the header announces more than
 * MGP_FRAME_MAX bytes or an unknown type (err says which).
 */
long mgp_peek(const uint8_t *buf, size_t len, char *err, size_t errlen);

/*
 * mgp_decode - decodes one whole frame (buf, len: exactly what mgp_peek
 * measured). A PROOF message's records point into buf, which must
 * outlive it. Magic and version are not checked (HELLO above).
 * RETURN 0; MGP_EFRAME or MGP_EFIELD with err naming the
 * message, the field and what is wrong with it; *out is written only on
 * success. Never reads outside buf[0..len).
 */
int mgp_decode(const uint8_t *buf, size_t len, mgp_msg *out, char *err, size_t errlen);

/*
 * mgp_encode - writes m as one frame into buf (capacity cap). For
 * PROOF, m->u.proof.records holds count * MGP_PROOF_REC bytes.
 * RETURN the frame's size; MGP_ENOSPC; MGP_EFIELD (m is not encodable:
 * a string too long, a count out of range, an invalid position).
 */
long mgp_encode(const mgp_msg *m, uint8_t *buf, size_t cap, char *err, size_t errlen);

/* The largest frame mgp_encode can produce for a message of this type
 * (PROOF: for count records). */
size_t mgp_encoded_max(int type, uint32_t count);

/* The record i of a decoded PROOF as a store item (position and record):
 * the key is a canonical position (Black to move). RETURN 0 or
 * MGP_EFIELD (cannot happen for a frame mgp_decode accepted). */
int mgp_proof_item(const mgp_proof *p, uint32_t i, pst_item *out);

/* Writes the 48-byte PROOF record of a store item (any orientation). */
void mgp_proof_record(const pst_item *it, uint8_t out[MGP_PROOF_REC]);

/* Names: "HELLO", ...; "type 42" style for unknown ones (static buffer
 * per thread). */
const char *mgp_type_name(int type);

/* mgp_strerror - a static message for an MGP_E* code (0: "success"),
 * "unknown protocol error" for any other. Thread-safe. Added with issue
 * 42: the codes had no names, and manager.c printed an MGP_EFIELD with
 * the store's pst_strerror ("unknown store error"). */
const char *mgp_strerror(int code);

/* Compares two tokens in time independent of where they differ (and of
 * the secret's contents); lengths are compared too. Nonzero when equal. */
int mgp_token_equal(const char *a, const char *b);

#endif /* MANAGER_PROTOCOL_H */
