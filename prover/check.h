/*
 * check.h - the independent proof checker (`checkers proof check`).
 *
 * Verifies from scratch that the proven-node store (store.h) holds a
 * complete proof of the bound it records for a position. It trusts only
 * the rules (engine/engine.h), the endgame databases (egdb_probe) and the
 * bytes of the store; it shares no code with the df-pn solver, uses no
 * proof numbers and no path reasoning. What it checks is DESIGN.md's
 * "Proofs are certificates":
 *
 *   "X at least draws" from position p (X a colour) is a set S of stored
 *   positions, closed under play: at every position of S where X moves,
 *   its stored move (the draw move, or the win move of a win record)
 *   leads into S or to a database or terminal value at least a draw for
 *   X; where the other side moves, every legal move does. A position is
 *   in S when its record implies the goal (X to move: lo >= DRAW and a
 *   move is stored; the other side to move: hi <= DRAW). Cycles are
 *   allowed: endless play is a draw.
 *
 *   "X wins" is the same with "a win" in place of "at least a draw",
 *   and the set must also be acyclic: every line ends in a won database
 *   or terminal position. The checker walks it depth first and fails on
 *   a line that comes back to a position still on it.
 *
 *   A record's bound is checked as the proofs it implies: lo >= DRAW is
 *   "the side to move at least draws", lo == WIN "the side to move
 *   wins", hi <= DRAW "the other side at least draws", hi == LOSS "the
 *   other side wins". DD is two proofs, one for each side.
 *
 *   Leaves (the rule of prover/leaf.h): a position with no legal move is
 *   lost for its side to move; a position the database covers
 *   (egdb_covers: up to egdb_max_pieces pieces and the whole splits of
 *   the next count it loaded) has the database's value, whatever the
 *   store says about it; a position of a partial database loaded with it
 *   (EGDB_SCOPE_PARTIAL) is a leaf only for a goal its bound answers: a
 *   bound that answers it yes is a leaf, one that answers no fails the
 *   proof, one that leaves it open needs a stored proof like any other.
 *   The result counts the leaves of each kind, so that a reader sees what
 *   a proof rests on.
 *
 * SOURCES AND VISITORS (pchk_check_with)
 *   The records may come from any source, not only a store: admission
 *   (admit.h) checks a worker's records before they are written, over
 *   the records themselves backed by a store whose every record was
 *   admitted. Such a source answers PCHK_SRC_ADMITTED for a record of
 *   the admitted store: the walk then takes the position as a leaf whose
 *   value is the record's bound, and does not walk its proof again (it
 *   was checked whole when it was admitted). pchk_check's own source,
 *   the store, never answers so: `proof check` trusts nothing. A
 *   visitor hears of every position whose proof for a goal is complete
 *   (depth first, children before parents); when the whole check is
 *   valid, every claim it heard of is proven. That is how a worker
 *   gathers the records to send, and how admission knows what it may
 *   write: one walker, no second copy of the rules.
 *
 * THREAD SAFETY
 *   One call works on its own memory; the store and database handles may
 *   be shared with other threads.
 */
#ifndef PROVER_CHECK_H
#define PROVER_CHECK_H

#include <stddef.h>
#include <stdint.h>

#include "egdb/egdb.h"
#include "engine/engine.h"
#include "engine/value.h"
#include "prover/store.h"

/* ---- constants ------------------------------------------------------ */

enum pchk_status {
    PCHK_VALID = 0,   /* every proof the record implies is complete */
    PCHK_INVALID = 1, /* a proof fails: where and why are filled in */
    PCHK_NOTHING = 2  /* the store has no record for the position */
};

/* ---- types ---------------------------------------------------------- */

/*
 * where / why of an invalid proof: where is the position at which the
 * first failure is found - a position whose record is missing, too weak
 * for the goal or names an illegal move, or a stored position whose move
 * (or reply) leads to a leaf short of the goal or, in a win proof, back
 * to a position still on the line being checked. why starts with the
 * goal ("Black wins: ...") and names the move or the bound involved.
 */
typedef struct pchk_result {
    int status;              /* PCHK_* */
    eng_bound bound;         /* the bound recorded for the root's side to move */
    uint64_t positions;      /* stored positions visited (all proofs) */
    uint64_t admitted;       /* leaves taken from an admitted store (pchk_check_with) */
    uint64_t leaves_db;      /* leaves valued by the complete databases */
    uint64_t leaves_partial; /* leaves whose partial-database bound answers
                                the goal (prover/leaf.h) */
    uint64_t leaves_end;     /* leaves with no legal move */
    int longest_win;         /* plies of the longest line of a win proof (-1: none) */
    char where[ENG_FEN_MAX]; /* PCHK_INVALID: the first position that fails */
    char why[256];           /* PCHK_INVALID: what is wrong there */
} pchk_result;

/* A source's answer for a record of an admitted store (SOURCES). */
enum { PCHK_SRC_ADMITTED = 1 };

/*
 * Where the checker reads records. get fills *out with the record of p in
 * p's orientation (as pst_get does) and returns 0, PCHK_SRC_ADMITTED (a
 * record of an admitted store), PST_ENOTFOUND, or a negative PST_E* code.
 * prefetch (may be NULL) is a hint that get(p) comes soon: the checker
 * gives it every child of a position whose replies are all children
 * (admission's batch map starts loading its slot; see check.c, MEMORY).
 */
typedef struct pchk_source {
    int (*get)(void *ctx, const eng_pos *p, pst_record *out);
    void *ctx;
    void (*prefetch)(void *ctx, const eng_pos *p);
} pchk_source;

/*
 * done is called when the proof that colour x wins (win 1) or at least
 * draws (win 0) is complete at the stored position p: effort is the
 * effort of the record the source gave for p, used the move the proof took (x to move; from
 * == PST_NOMOVE where the other side moves and every reply was a child),
 * longest the plies of the longest line below p (win proofs). Nonzero
 * stops the check with PST_ENOMEM.
 */
typedef struct pchk_visitor {
    int (*done)(void *ctx, const eng_pos *p, int x, int win, uint64_t effort, const pst_move *used,
                int longest);
    void *ctx;
} pchk_visitor;

/* ---- functions ------------------------------------------------------ */

/*
 * pchk_check - checks every proof the store's record for root implies.
 * PARAMETERS
 *   db: the databases the proof's leaves rest on (may be NULL: only
 *       terminal leaves count). Pass the same piece limit the solver used
 *       or a larger one; a larger one can only accept more.
 * RETURN 0 with out->status set; a negative PST_E* code when the check
 * could not run, err saying which record or database probe failed and
 * why: PST_ECORRUPT (a damaged store record or database block),
 * PST_EIO (another database error: a file unreadable or missing),
 * PST_ENOMEM, PST_EINVAL (root is not a valid position). Database
 * errors come back as PST_E* codes: one kind of code for the caller to
 * read (engine.h, ONE ERROR SPACE).
 */
int pchk_check(pst_env *st, const egdb *db, const eng_pos *root, pchk_result *out, char *err,
               size_t errlen);

/*
 * pchk_db_root - a proof state whose root the databases hold has no
 * record for it: that database leaf is its whole proof. When out says
 * PCHK_NOTHING and db covers root, out becomes PCHK_VALID with the
 * database's value (one position, one database leaf); a root of a
 * partial database (prover/leaf.h) becomes PCHK_VALID with its bound
 * when nothing is stored, and a VALID result meets its bound with that
 * bound (what the root's record proves and what the partial database
 * knows are both true). RETURN 1 when out changed, 0 otherwise; with err,
 * PST_ECORRUPT when the root's probe finds a damaged block or the two
 * bounds contradict each other (a partial file is wrong: no verdict),
 * PST_EIO or PST_ENOMEM when the probe fails otherwise. Callers: `proof
 * check --state`, the manager's root check and the frontier's summary,
 * which must agree.
 */
int pchk_db_root(const egdb *db, const eng_pos *root, pchk_result *out, char *err, size_t errlen);

/*
 * pchk_check_with - pchk_check over the records of src, telling vis (may
 * be NULL) of every position whose proof is complete (SOURCES). The same
 * rules, results and codes as pchk_check.
 */
int pchk_check_with(const pchk_source *src, const pchk_visitor *vis, const egdb *db,
                    const eng_pos *root, pchk_result *out, char *err, size_t errlen);

#endif /* PROVER_CHECK_H */
