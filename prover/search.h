/*
 * search.h - the heuristic alpha-beta solver and the evaluation.
 *
 * The first of the two solvers of seed 003 (section 3.3): an iterative-
 * deepening alpha-beta search with the endgame databases at its leaves.
 * It returns a heuristic score that steers proofs (the manager's
 * threshold iteration, seed lines), and a proven win or loss when the
 * whole tree behind the score rests on terminal and database values.
 *
 * SCORES (for the side to move, in hundredths of a man)
 *   |score| <= AB_HEUR_MAX      heuristic: the evaluation at the leaves
 *   score >= AB_WIN - AB_MAXPLY  proven win  (AB_WIN - plies to the proof's end)
 *   score <= -AB_WIN + AB_MAXPLY proven loss
 *   A terminal (no move) is lost at its ply; a database win or loss
 *   counts as won or lost AB_DBPLY plies after the leaf (the database
 *   knows the value, not the distance), so nearer terminal wins are
 *   preferred. Heuristic scores are clamped to +-AB_HEUR_MAX, far below
 *   the proven range, so a proven score can only come from a subtree whose
 *   every leaf is a terminal or database win for the side that wins (the
 *   minimax of the depth-limited tree is in the proven range only then).
 *   Draws are never reported as proven (a database draw scores 0, like a
 *   heuristic equality): proving draws is df-pn's job.
 *
 * ALGORITHM
 *   Principal variation search with iterative deepening, aspiration
 *   windows off (the proven range makes windows jumpy), a transposition
 *   table of 16-byte-keyed entries checked against the full position,
 *   captures extended (a position with a capture is never a leaf: the
 *   quiescence search plays captures until the side to move has none; a
 *   single legal move costs no depth), killer and history move ordering,
 *   late quiet moves reduced by a ply off the principal variation, and
 *   database probes at every quiet node below the root with at most the
 *   database's piece count. A position repeated on the current line
 *   scores 0 (a draw) and is not stored in the table. Its ancestors' table
 *   entries may carry values the 0 influenced (heuristic scores are
 *   path-dependent there, as in any alpha-beta program); proven scores are
 *   not: a 0 is never in the proven range, so replacing any leaf by it can
 *   hide a proof but never make one (ab.c, WHY A PROVEN SCORE IS A PROOF).
 *
 * EVALUATION (ab_eval; the weights are in eval.c with their reasons)
 *   material (men and kings, with a trade-down bonus for the side ahead),
 *   back-rank guard, centre control, tempo (advancement balanced by
 *   development), mobility, and runaway men (a man with a free path to
 *   the king row).
 *
 * THREAD SAFETY
 *   An ab_ctx belongs to one thread; ab_eval is pure.
 */
#ifndef PROVER_SEARCH_H
#define PROVER_SEARCH_H

#include <stddef.h>
#include <stdint.h>

#include "egdb/egdb.h"
#include "prover/stop.h"
#include "engine/engine.h"

/* ---- constants ------------------------------------------------------ */

#define AB_WIN 30000
#define AB_MAXPLY 512
#define AB_DBPLY 100 /* plies a database win is assumed to take */
#define AB_HEUR_MAX 10000
#define AB_MAXPV 128

/* Error codes (all negative, the alpha-beta range -451.., errors/errors.h;
 * ab_strerror names them). */
enum ab_err {
    AB_OK = 0,
    AB_ENOMEM = -451, /* out of memory */
    AB_EINVAL = -452, /* arguments the search refuses (ab_search) */
    AB_EDB = -453     /* a database probe failed: a damaged block */
};

/* ab_result.proven */
enum { AB_HEURISTIC = 0, AB_PROVEN_WIN = 1, AB_PROVEN_LOSS = -1 };

/* ---- types ---------------------------------------------------------- */

typedef struct ab_ctx ab_ctx; /* a search context with its table (opaque) */

typedef struct ab_result {
    int score;  /* for the side to move of the root, see SCORES */
    int proven; /* AB_PROVEN_WIN, AB_PROVEN_LOSS or AB_HEURISTIC */
    int depth;  /* last completed iteration */
    int pvlen;
    eng_move pv[AB_MAXPV];
    uint64_t nodes; /* positions searched (interior, leaves and quiescence) */
    uint64_t db_probes;
    double seconds;
} ab_result;

typedef struct ab_opts {
    const egdb *db;      /* may be NULL: no database */
    int db_pieces;       /* probe quiet positions this database scope takes
                            (egdb.h: a piece count, or a count and splits of the
                            next; <= 0 or more than egdb_scope(db): all it has) */
    int max_depth;       /* nominal depth in plies (0: no limit but time) */
    double time_limit;   /* seconds, 0: none (then max_depth must be > 0) */
    uint64_t node_limit; /* 0: none */
    volatile int *stop;  /* set nonzero to stop (may be NULL) */
    /* Called after every completed iteration with the result so far (its
     * nodes, probes and seconds count the whole search until then); may be
     * NULL. Runs on the searching thread; it must not call ab_* on the
     * same context. */
    void (*progress)(const ab_result *r, void *arg);
    void *progress_arg;
} ab_opts;

/* ---- functions ------------------------------------------------------ */

/* ab_new - a context with a transposition table of about tt_bytes (at
 * least 1 MB is used; the largest power-of-two number of 128-byte
 * buckets that fits), plus about 5.3 MB of per-ply work space (move
 * lists of 400 plies). RETURN 0 and *out, or AB_ENOMEM. */
int ab_new(size_t tt_bytes, ab_ctx **out);
void ab_free(ab_ctx *c);

/* Forgets everything the table holds (between unrelated searches). */
void ab_clear(ab_ctx *c);

/*
 * ab_search - iterative deepening from p until max_depth, the time or
 * node limit, *stop, or a proven score (a proof does not improve with
 * depth); the result is that of the last completed iteration (depth 1
 * always completes). With a time limit, no iteration is started after
 * half of it is spent (it would not finish). The root is searched even
 * when the database knows it, so the result always has a move when one
 * exists; pv is that iteration's line, lengthened from the table and
 * checked move by move against eng_generate.
 * RETURN 0; AB_EINVAL (invalid position, no limit given: max_depth,
 * time_limit and node_limit all 0, or a negative one); AB_EDB (a
 * database probe failed: a damaged block; never scored as a value).
 */
int ab_search(ab_ctx *c, const eng_pos *p, const ab_opts *o, ab_result *out);

/* ab_eval - the static evaluation of p for its side to move, within
 * +-AB_HEUR_MAX. Pure. */
int ab_eval(const eng_pos *p);

/* ab_strerror - a static message for an AB_E* code (0: "success"),
 * "unknown search error" for any other. Thread-safe. (Issue 42: every
 * module's codes have names; `checkers search` prints them.) */
const char *ab_strerror(int code);

/* Nonzero when score is in the proven range. */
int ab_score_proven(int score);

#endif /* PROVER_SEARCH_H */
