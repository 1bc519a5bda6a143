/*
 * admit.h - admission: nothing enters a proof store unchecked.
 *
 * A proof store of the manager (<state>/proofs) holds only ADMITTED
 * records: records whose every claim the checker (check.h) verified
 * before they were written. Records from anywhere else - a worker's
 * batch, the tree's own backed-up records - are first STAGED: held in
 * memory, never written. Admission then checks them and writes, in one
 * transaction, only what the checker proved.
 *
 * THE CHECK
 *   For each root the caller names (a job's position; each backed-up
 *   record), every proof its staged record claims is walked by the
 *   checker (pchk_check_with) over the staged records, backed by the
 *   store: a position with a staged record is taken from the batch and
 *   its proof walked; a position without one but with a stored record is
 *   a leaf with the stored bound (admitted, so checked whole before); a
 *   position with neither fails, as in `proof check`. One failed proof
 *   refuses the whole batch: nothing of it is written.
 *
 * WHAT IS WRITTEN
 *   For every staged position the walks reached, its record RESTRICTED to
 *   the claims the walks proved there (the visitor, check.h): a DD record
 *   reached only on the proof that its side to move at least draws is
 *   written as DW, with the move that proof took. So a record in the
 *   store never claims more than was checked, and the store's records
 *   can be trusted as leaves by the next admission. A win's length is the
 *   checker's longest line below the position.
 *
 * STRICT BATCHES (a worker's)
 *   A worker sends the records its proof writer produced for the job and
 *   the stored records that proof rests on which the manager has not
 *   admitted yet (padm_gather), each restricted to the claim the proof
 *   needs of it: every record of an honest batch is on the proof's walk
 *   and is reached again here. A record no walk reached lies outside the
 *   job: with strict set, the batch is refused (PADM_EOUTSIDE).
 *
 * ERRORS
 *   Admission's codes (PADM_E*, from -100 down) are apart from the store's
 *   (PST_E*, which pass through for a store or database that fails);
 *   padm_strerror names either. A refused batch is PADM_EREFUSED (a proof
 *   fails the checker), PADM_EBADRECORD (a record the store would not
 *   take: an illegal move, a bound that says nothing), PADM_ECONTRADICT
 *   (two records of the batch, or a record and the store, cannot both be
 *   true), PADM_EOUTSIDE or PADM_ENOROOT (no record for a root); err
 *   names the position and why.
 */
#ifndef PROVER_ADMIT_H
#define PROVER_ADMIT_H

#include <stddef.h>
#include <stdint.h>

#include "egdb/egdb.h"
#include "engine/engine.h"
#include "prover/check.h"
#include "prover/store.h"

enum padm_err {
    PADM_EREFUSED = -351,    /* a claimed proof fails the checker            */
    PADM_EBADRECORD = -352,  /* a record the store would refuse               */
    PADM_ECONTRADICT = -353, /* records that contradict each other or the store */
    PADM_EOUTSIDE = -354,    /* strict: a record no proof of the roots reaches */
    PADM_ENOROOT = -355,     /* a root without a staged record                */
    PADM_ETOOMANY = -356     /* more records than the batch may hold          */
};

/* Nonzero when rc is admission's refusal of a batch (a PADM_E* code), as
 * against a failure of the store or the databases (PST_E*). */
static inline int
padm_refused(int rc)
{
    return rc <= PADM_EREFUSED && rc >= PADM_ETOOMANY;
}

/* A growing array of records (what a worker sends, what a pass backs up). */
typedef struct padm_items {
    pst_item *v;
    size_t n, cap;
} padm_items;

/* Appends one item. RETURN 0 or PST_ENOMEM. */
int padm_push(padm_items *out, const pst_item *it);
void padm_items_free(padm_items *it);

/* The index of the first record of p in it (p in either orientation: the
 * store keeps one record for a position and its colour-flipped twin), or
 * -1. */
long padm_index(const padm_items *it, const eng_pos *p);

/* What one admission did. */
typedef struct padm_report {
    size_t staged;   /* distinct positions in the batch */
    size_t written;  /* records written (restricted) */
    size_t reached;  /* staged positions some walk reached */
    uint64_t leaves; /* walks' leaves taken from the admitted store */
} padm_report;

/*
 * padm_admit - checks the n records of items as proofs of the roots and
 * writes what is proven into st (see the top). items may hold a position
 * more than once (merged, store.h's rule). db: the databases the proofs'
 * leaves rest on (may be NULL). roots NULL: every record is a root (the
 * tree's backed-up records). max_items: refuse a batch of more (0: no
 * limit). A staged position the store already holds is walked with the
 * two records merged: bounds intersected (empty: PADM_ECONTRADICT), the
 * batch's moves first and the store's where the batch has none.
 * RETURN 0 (every root's claims proven, rep filled); a PADM_E* code (the
 * batch refused, nothing written, err says why); a PST_E* code (the store
 * or the databases failed: nothing written).
 */
int padm_admit(pst_env *st, const egdb *db, const pst_item *items, size_t n, const eng_pos *roots,
               size_t nroots, int strict, size_t max_items, padm_report *rep, char *err,
               size_t errlen);

/*
 * padm_collect - the records of root's whole proof in a store (what a
 * worker sent before padm_gather, and still sends when its solver left no
 * written proof): every proof its store's record for root claims, checked
 * over st trusting nothing, and
 * each record reached restricted to what was proven (as padm_admit would
 * write it). Appended to out. RETURN 0 (nothing appended when st has no
 * record for root); PADM_EREFUSED (the store's proof fails the checker:
 * err names where); a PST_E* code.
 */
int padm_collect(pst_env *st, const egdb *db, const eng_pos *root, padm_items *out, char *err,
                 size_t errlen);

/*
 * WHAT A WORKER SENDS (padm_gather, padm_sent)
 *   Admission is the one independent check: the worker does not walk its
 *   proof with the checker first (it did until issue 42: a second walk of
 *   every proof, seconds for a proof of a million records). Its batch is
 *   made from what it already has:
 *     - the records its proof writer produced for the job (the df-pn
 *       walk's, dfpn_last_proof), each a claim of the job's answer;
 *     - for every position that proof took as a leaf because the worker's
 *       store already held a record implying the goal (dfpn_last_proof's
 *       rests): nothing, when a record for that claim was sent on this
 *       connection and ACKed (the manager committed its admission before
 *       the ACK: its store holds it, and admission takes it as an
 *       admitted leaf); else that stored record and, through the store,
 *       every stored record its proof rests on that was not ACKed, each
 *       restricted to the claim (records a walk cut short kept, or of a
 *       job that failed, was cancelled or refused, were never admitted:
 *       they go now).
 *   The positions an ACKed batch claimed are kept in a padm_sent set.
 *   Only the proof's own walk is sent: admission's walk from the job's
 *   position follows the same moves into the same records, so it reaches
 *   every one of them (STRICT BATCHES).
 */
typedef struct padm_sent padm_sent;

/* padm_sent_new - an empty set of acknowledged claims. RETURN 0 and *out,
 * or PST_ENOMEM. */
int padm_sent_new(padm_sent **out);
/* padm_sent_free - frees s (NULL: nothing). */
void padm_sent_free(padm_sent *s);
/* padm_sent_clear - forgets every claim (a new connection: its manager
 * may hold another proof's store), keeping the memory. */
void padm_sent_clear(padm_sent *s);
/* padm_sent_add - the n records of items were admitted (their batch was
 * ACKed): each position's bound is met with what s holds for it.
 * RETURN 0, or PST_ENOMEM (s holds what was added before). */
int padm_sent_add(padm_sent *s, const pst_item *items, size_t n);
/* padm_sent_count - the positions s holds. */
size_t padm_sent_count(const padm_sent *s);
/* padm_sent_covers - 1 when s holds for p (either orientation) a bound
 * that implies that colour x wins (win 1) or at least draws (win 0), as
 * an admitted leaf must (check.h, SOURCES); else 0. */
int padm_sent_covers(const padm_sent *s, const eng_pos *p, int x, int win);

/*
 * padm_gather - a worker's batch for the job at root (WHAT A WORKER
 * SENDS), appended to out.
 * PARAMETERS
 *   st, db: the worker's store and databases (the leaf rule's, as the
 *       writer used them);
 *   claim: the bound the job proved for root's side to move, one claim
 *       (WW, LL, DW or LD): the goal of every record of the proof;
 *   written, nwritten: the writer's records (sent as they are);
 *   rests, nrests: the positions the writer took as stored leaves;
 *   sent: the acknowledged claims (may be NULL: none).
 *   The root's record is always sent (the manager wants the job's claim
 *   in the batch), even when sent covers it.
 * RETURN 0; PADM_EREFUSED (a stored record the proof rests on does not
 * prove the claim: err names where); PADM_EBADRECORD (claim is not one
 * claim); a PST_E* code (the store, the databases or memory failed). On
 * error out may hold part of the batch: the caller sends nothing.
 */
int padm_gather(pst_env *st, const egdb *db, const eng_pos *root, eng_bound claim,
                const pst_item *written, size_t nwritten, const eng_pos *rests, size_t nrests,
                const padm_sent *sent, padm_items *out, char *err, size_t errlen);

/* The message of a PADM_E* or PST_E* code. */
const char *padm_strerror(int code);

#endif /* PROVER_ADMIT_H */
