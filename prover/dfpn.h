/*
 * dfpn.h - depth-first proof-number search (Nagai) for one goal at a time.
 *
 * A query is a root position and a question (engine/value.h,
 * eng_question): target ENG_WIN asks "does the attacker win?", target
 * ENG_DRAW "does the attacker at least draw?". The answer is PROVEN, DISPROVEN or UNKNOWN (the
 * budget ran out). A disproof is itself a proof for the other side: "the attacker does not win" is
 * "the defender at least draws", and "the attacker does not draw" is "the defender wins". prover.h
 * explains how two queries give an exact value, how repetitions are handled (GHI) and why no proof
 * rests on a line that was not played; this header is the interface.
 *
 * THE SEARCH IN ONE PARAGRAPH
 *   Attacker nodes are OR nodes, defender nodes AND nodes. A child is
 *   valued, without expanding it, by (in this order) the transposition
 *   table's path-independent results, a repetition on the current line,
 *   no legal move (lost), the databases (quiet positions only: a position
 *   with a capture is searched, never probed), the proven-node store, the
 *   path-dependent table, and finally initial numbers from its mobility
 *   (pn 1, dn = moves at OR nodes; the reverse at AND nodes). Child
 *   thresholds use the 1+epsilon trick (Pawlewicz and Lew): the best
 *   child may search until its number passes the second best's times
 *   1+epsilon. Numbers saturate at DFPN_INF (2^30, far below UINT32_MAX).
 *   Kishimoto's threshold controlling algorithm (TCA, AAAI 2010) guards
 *   against endless re-expansion where the graph has cycles.
 *
 * THE TABLE
 *   Buckets of four 32-byte entries, each holding the full position
 *   (four masks and the side to move: a hit is confirmed against it, so a
 *   hash collision can never become a proof), pn, dn, the search effort
 *   behind the entry, the shallowest depth it was seen at (for TCA) and,
 *   for a final entry, the length of its proof. A full bucket replaces its
 *   entry with the least effort; proven and disproven entries count
 *   DFPN_FINAL_BONUS more. When three quarters of the entries are in use,
 *   a garbage collection samples the effort of 16,384 entries and frees
 *   every entry below the median (small-tree GC, as KomoringHeights does).
 *   The table lasts across queries (a worker keeps one for its life): a
 *   final entry is kept as a fact about its position (a bound, read by
 *   every later query in its own terms); open numbers serve only their own
 *   query, and the same query asked again after its budget ran out (a
 *   re-job) resumes with them. Efforts are halved for each query since an
 *   entry was last used, so old work gives way (dfpn_table.c, THE TABLE ACROSS
 *   QUERIES).
 *
 * THREAD SAFETY
 *   A dfpn_ctx belongs to one thread. The database and store handles in
 *   dfpn_opts may be shared.
 */
#ifndef PROVER_DFPN_H
#define PROVER_DFPN_H

#include <stddef.h>
#include <stdint.h>

#include "egdb/egdb.h"
#include "engine/engine.h"
#include "prover/stop.h"
#include "prover/store.h"

/* ---- constants ------------------------------------------------------ */

#define DFPN_INF (1u << 30) /* proof numbers saturate here */
#define DFPN_MAXPLY 1000    /* deeper lines are left open (never proven) */
#define DFPN_FINAL_BONUS (1u << 20)

enum dfpn_status { DFPN_DISPROVEN = -1, DFPN_UNKNOWN = 0, DFPN_PROVEN = 1 };

enum dfpn_err {
    DFPN_OK = 0,
    DFPN_ENOMEM = -401,
    DFPN_EINVAL = -402,
    DFPN_EDB = -403,    /* a database probe failed (damaged block): no value used */
    DFPN_ESTORE = -404, /* the store could not be read or written */
    DFPN_EPROOF = -405  /* the proof could not be written whole (err says where) */
};

/* ---- types ---------------------------------------------------------- */

typedef struct dfpn_ctx dfpn_ctx; /* a solver with its table (opaque) */

typedef struct dfpn_progress {
    uint64_t nodes;    /* positions valued so far in this query */
    uint64_t expanded; /* positions expanded (moves generated)  */
    double seconds;
    uint32_t root_pn, root_dn;
    double tt_fill; /* fraction of table entries in use */
    uint64_t gc_runs;
} dfpn_progress;

typedef struct dfpn_opts {
    const egdb *db;      /* may be NULL */
    int db_pieces;       /* quiet positions this database scope takes are probed
                            (egdb.h DATABASE SCOPE; a plain piece count is one) */
    pst_env *store;      /* may be NULL: then nothing is read or written */
    int write_proof;     /* nonzero: write the whole proof into store */
    double time_limit;   /* seconds, 0: none */
    uint64_t node_limit; /* positions valued, 0: none */
    double epsilon;      /* the 1+epsilon trick; 0 means the default 0.25 */
    int first_depth;     /* the first depth round's limit in plies (dfpn.c,
                            DEPTH LIMIT), 2 to DFPN_MAXPLY; 0 means the
                            default, 96. Tests whose positions were found
                            with another schedule pin it (the search's
                            order decides which answers an optimistic or
                            naive search reaches). A resumed query goes on
                            with the schedule it started with */
    volatile int *stop;  /* set nonzero to stop (may be NULL) */
    void (*progress)(const dfpn_progress *p, void *arg); /* about twice a second */
    void *progress_arg;
    int optimistic;              /* keep path-dependent safety results in the table as
                                    if they held on every line (fast in king endings,
                                    where a plain GHI-safe search re-proves the same
                                    cycles on every line, but possibly wrong); such a
                                    result stands only if the proof walk closes it into
                                    a certificate (prover.h, WRITING A PROOF), which is
                                    then checked like any other. Otherwise status is
                                    UNKNOWN and refuted is set: run the query again
                                    without this switch. Reach-side results (wins) are
                                    never affected. A query refuted before on this
                                    context is not searched again: refuted is set at
                                    once (dfpn.c, A REFUTED QUERY...) */
    int ghi_naive;               /* TESTS ONLY: keep path-dependent results in the
                                    transposition table as if they held on every line
                                    (the classic GHI bug), so that a test can show a
                                    position where that gives a wrong answer. Never set
                                    it with a store: dfpn_prove refuses (DFPN_EINVAL). */
    uint64_t walk_max_positions; /* TESTS ONLY: a proof's walk that has taken this
                                    many positions is cut short, as its time
                                    running out cuts it (0: no cap): the clock's
                                    deterministic stand-in for a test */
} dfpn_opts;

typedef struct dfpn_result {
    int status;        /* DFPN_PROVEN / DFPN_DISPROVEN / DFPN_UNKNOWN */
    uint32_t pn, dn;   /* the root's numbers at the end */
    uint64_t nodes;    /* positions valued (every child looked at counts) */
    uint64_t expanded; /* positions expanded */
    uint64_t db_probes;
    uint64_t store_hits;
    uint64_t gc_runs;
    uint64_t tt_used, tt_entries;
    uint64_t kept_total;    /* strict facts the table gave up in full buckets
                               and kept aside (dfpn_set_kept), over the
                               context's life */
    uint64_t kept_back;     /* of them, taken back by a proof's walk */
    uint64_t tt_bytes;      /* the table's size at the end */
    uint64_t proof_records; /* records written to the store (write_proof) */
    uint64_t kept_records;  /* a win proof's walk cut short (DFPN_EPROOF): records
                               of the positions it had closed, written to the
                               store all the same, each a whole proof; the next
                               walk of the query takes them as leaves */
    uint64_t researched;    /* positions re-searched while writing the proof */
    uint64_t walk_nodes;    /* of nodes: those the walk valued (writing the proof,
                               or verifying an optimistic answer) */
    double walk_seconds;    /* of seconds: the walk's */
    int proof_length;       /* plies of the longest line of a win proof (-1: n/a) */
    int refuted;            /* optimistic: a safety result the walk could not close
                               (now, or in an earlier run of the same query on
                               this context: then nothing was searched) */
    int resumed;            /* went on from the same query's earlier, unanswered run */
    double seconds;
    int pvlen; /* the proof's main line from the root */
    eng_move pv[128];
} dfpn_result;

/* ---- functions ------------------------------------------------------ */

/* dfpn_new - a solver with a table of about tt_bytes (at least 1 MB).
 * RETURN 0 and *out, or DFPN_ENOMEM. */
int dfpn_new(size_t tt_bytes, dfpn_ctx **out);
void dfpn_free(dfpn_ctx *c);

/*
 * dfpn_set_kept - keeps the proven positions (strict facts) that the
 * table gives up in full buckets aside, in up to max_bytes more memory
 * (taken as they come), where the walks that write and verify proofs
 * find them again; the search itself does not read them (dfpn_table.c,
 * A FACT GIVEN UP IS KEPT ASIDE). 0 (the default): nothing is kept.
 */
void dfpn_set_kept(dfpn_ctx *c, size_t max_bytes);

/*
 * dfpn_prove - runs one query from root until it is answered or the
 * budget runs out. What earlier queries on the same context proved is
 * kept as facts in the table, what they wrote reaches it through the
 * store; an unanswered query asked again resumes where it stopped (THE
 * TABLE above).
 * With o->store and o->write_proof, an answered query writes its whole
 * proof (prover.h, WRITING A PROOF) in one transaction before returning.
 * RETURN 0 with out filled; DFPN_EINVAL (invalid position or question),
 * DFPN_EDB, DFPN_ESTORE, or DFPN_EPROOF (out holds df-pn's answer, but
 * its proof could not be written, so nothing certifies it: prv_solve
 * does not count it as proved; err says where and why).
 */
int dfpn_prove(dfpn_ctx *c, const eng_pos *root, const eng_question *q, const dfpn_opts *o,
               dfpn_result *out, char *err, size_t errlen);

/*
 * dfpn_last_proof - what the last dfpn_prove on c wrote, for a worker to
 * send (manager/worker.c: THE RECORDS A JOB SENDS) without walking the
 * proof again: its records (*items, the proof's positions each once,
 * with the claim of the query's answer and, where the proving side
 * moves, the move the proof takes) and the positions whose STORE records
 * the proof rests on (*rests: children of those records, or the root
 * itself, that the walk took as leaves because the store's record already
 * implied the goal; a position may come more than once; database and
 * terminal leaves are not listed). Both arrays belong to c and live until
 * its next dfpn_prove.
 * RETURN 1 when that query was answered and its whole proof written
 * (o->write_proof with a store; no items and one rest when the root
 * itself was a stored leaf, nothing at all when it was a database or
 * terminal leaf); 0 otherwise (no answer, a walk cut short - what it kept
 * is not listed - or nothing written): then both are empty.
 * Not thread-safe with a dfpn_prove running on c.
 */
int dfpn_last_proof(const dfpn_ctx *c, const pst_item **items, size_t *nitems,
                    const eng_pos **rests, size_t *nrests);

const char *dfpn_strerror(int code);

#endif /* PROVER_DFPN_H */
