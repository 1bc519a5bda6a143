/*
 * prover.h - the solvers: the manual of the prover module.
 *
 * Given a position and a goal, prove it, or say honestly that the budget
 * ran out (seed 003, sections 3.2-3.4: Chinook's two solvers). The module
 * has four parts, each with its own header:
 *   search.h  alpha-beta with the databases: a heuristic score, proven
 *             when the whole tree behind it rests on terminal and
 *             database values; it orders df-pn's queries and will steer
 *             the manager;
 *   dfpn.h    df-pn for one goal at a time, GHI-safe, writing whole
 *             proofs into the store;
 *   store.h   the proven-node store (LMDB), shared by every solver
 *             process of a machine;
 *   check.h   the independent checker of what the store holds.
 * This header adds prv_solve, which turns goals into df-pn queries, and
 * writes down the reasoning the parts share.
 *
 * VALUES AND QUERIES
 *   A result is a bound (engine/value.h) on the value for the side to
 *   move. One df-pn query asks whether a colour A wins (goal WIN) or at
 *   least draws (goal DRAW). Either answer is a proof: "A does not win" is
 *   "the other side at least draws", "A does not draw" is "the other side
 *   wins". So:
 *     goal win    one query, (stm, WIN):   WW, or LD;
 *     goal draw   one query, (stm, DRAW):  DW, or LL;
 *     goal value  two queries. Which first depends on a short alpha-beta
 *                 search: likely win: (stm, WIN) then, if disproven,
 *                 (stm, DRAW); likely loss: (opponent, WIN) then
 *                 (opponent, DRAW); otherwise (stm, DRAW) then, if
 *                 proven, (opponent, DRAW). Each pair settles the value:
 *                 a draw is always two proofs, one for each side.
 *   When the budget runs out after the first query, the result is the
 *   bound that query gave (>=draw or <=draw), not an exact value.
 *
 * REPETITIONS AND GHI (graph history interaction)
 *   The game as proved: a side with no move loses; a game that goes on
 *   for ever is a draw. In the search a position that repeats on the
 *   current line is scored a draw: good for the side that only has to
 *   avoid losing (the SAFETY side of the query: the defender of a WIN
 *   query, the attacker of a DRAW query), bad for the side that has to
 *   win (the REACH side).
 *
 *   Why a win never depends on the line. A success of the reach side is a
 *   win: at a node where it moves one child must be won, where the other
 *   side moves every child; its leaves are positions without a move for
 *   the loser, database wins, and stored wins, never repetitions. By
 *   induction on the order in which results are found, every such result
 *   is a true property of the position alone, whatever line led to it.
 *   Such results go into the transposition table and may be reused
 *   anywhere.
 *
 *   Why a safety result may depend on the line, and what is done about
 *   it (Kishimoto and Mueller's approach: mark path-dependent results and
 *   do not reuse them on other lines). A safety success may rest on a
 *   repetition of a position that is on the current line above the node.
 *   Every safety result carries rep_up: how many plies above the node the
 *   highest repeated position it rests on is (for a chosen child, the
 *   child's rep_up less one; where every child is needed, the largest
 *   less one; a repetition leaf k plies below its twin has rep_up k).
 *     rep_up <= 0: every repetition it rests on is of the node itself or
 *       of positions below it: a cycle that closes inside its own proof.
 *       The result holds whatever line leads to the node: it goes into
 *       the transposition table, and may be written to the store.
 *     rep_up > 0: it rests on the line above. It goes into a separate
 *       path-dependent table with the positions it rests on (up to three,
 *       compared in full), and is used only on a line that holds all of
 *       them above the node (only positions since the last man move or
 *       capture can recur: men never move back, pieces never come back).
 *       More positions on a line can only help the safety side, so the
 *       result holds on every such line. A result resting on more than
 *       three positions is stored nowhere: the search hands it to the
 *       caller on the line that found it. It never enters the
 *       transposition table, and never the store; no result rests on a
 *       hash.
 *   The root has nothing above it, so its result always has rep_up <= 0.
 *   Why this is sound at the root: a safety proof is a finite tree whose
 *   leaves are true safety values (terminal, database, store, table) or
 *   repetitions of a position on its own branch. The safety side follows
 *   the tree and, at a repetition, plays on as from the earlier
 *   occurrence; every play then either reaches a true leaf or stays in
 *   the tree for ever, which is a draw. Only path-independent results
 *   are reused across lines, so no proof leans on a line that was not
 *   played.
 *   Optimistic first. Keeping path-dependent results apart is what makes
 *   the search sound, and it is also what makes it slow where cycles
 *   abound: in king endings every line is a long walk that avoids
 *   repeating, and a result that rests on one line's positions is proven
 *   again on every other line (a lone king against a lone king was not
 *   proven in 3 million nodes). So in endings (at most PRV_GHI_AUTO_MEN
 *   men; prv_opts.ghi chooses otherwise) prv_solve runs each query first
 *   with dfpn_opts.optimistic: path-dependent safety results go into the
 *   transposition table as if they held everywhere, which can be wrong
 *   (the test suite shows positions where it is). Such an answer is not
 *   trusted: it stands only if the proof walk below (WRITING A PROOF)
 *   closes it into a set of positions closed under play, which is a
 *   certificate whatever search produced it, and which `proof check`
 *   verifies again. If the walk cannot close it, the query runs again
 *   GHI-safe with what is left of the budget. Wins are never affected:
 *   no win rests on a repetition. With more men on the board the
 *   optimistic answer was refused on most level positions measured, after
 *   40-140 s, where the GHI-safe search alone answered in 11-24 s; there
 *   the GHI-safe search runs alone (docs/solver.md, "By the position").
 *   Endless re-expansion (a node whose children's numbers come from its
 *   own ancestors and so never pass its thresholds) is prevented by
 *   Kishimoto's threshold controlling algorithm: when a child was first
 *   seen at a shallower depth, children get thresholds above their
 *   current numbers, so every call expands at least one new position.
 *
 * WRITING A PROOF (what dfpn_prove writes into the store)
 *   After a query is answered, its proof is walked from the root: where
 *   the proving side moves, one move that keeps the proof; where the other
 *   side moves, every reply. Leaves are exactly the checker's: no legal
 *   move, a position the databases cover, a position whose stored record
 *   already implies the goal. Every position of the walk becomes one
 *   record (for the proving side to move: WW with its win move, or DW with
 *   its draw move; for the other side: LL or LD), and all of them are
 *   written in one transaction, so the store never holds a record without
 *   the rest of its proof. `proof check` (check.h) then verifies the
 *   result from scratch.
 *   A win proof must be acyclic, and the table's facts, each true, need
 *   not hold one: entries freed by the table's replacement are proved
 *   again later through whatever the table then holds, so their supports
 *   can run in circles. So a win is walked as a graph of candidates closed
 *   from the leaves up, as a retrograde analysis does (a position is won
 *   when one move, or every reply, reaches a leaf or a won position; its
 *   length is one more), and only won positions are written, each with a
 *   move to a position of smaller length: acyclic by construction. Where
 *   the candidates wait on one another in circles, a position among them
 *   is searched again with the circle blocked; a position whose children
 *   the table lost is searched again as a root (dfpn_walk.c, WRITING A
 *   WIN). A draw proof is closed under play and may contain cycles, so it
 *   needs no order: it is walked as a graph of candidates too, and the
 *   largest closed set in it is kept (a position stands until a reply
 *   fails it or its candidates run out; a failure goes up at once), the
 *   table's draws serving only as guides, since they may rest on a
 *   repetition of the line they were found on (the path-dependent
 *   table's draws too, after the facts: SUCCESSES ON A LINE GUIDE THE
 *   WALK); a position the tables do not know is searched again as a
 *   root (WRITING A DRAW).
 *   A win walk cut short by its time writes what it closed: every won
 *   position of its graph is a whole proof, and the next walk of the
 *   query takes them as leaves, so a long proof is written over several
 *   runs (a worker's re-jobs) instead of from the root each time
 *   (dfpn_walk.c, A WIN WALK CUT SHORT KEEPS WHAT IT CLOSED).
 *
 * THREAD SAFETY
 *   prv_solve uses its own contexts; the database and store handles may be
 *   shared between threads and processes.
 */
#ifndef PROVER_PROVER_H
#define PROVER_PROVER_H

#include <stddef.h>
#include <stdint.h>

#include "egdb/egdb.h"
#include "engine/engine.h"
#include "engine/value.h"
#include "prover/dfpn.h"
#include "prover/store.h"

/* ---- constants ------------------------------------------------------ */

/* Error codes (all negative, the solve range -501.., errors/errors.h;
 * prv_strerror names them). */
enum prv_err {
    PRV_OK = 0,
    PRV_ENOMEM = -501, /* out of memory (the df-pn table) */
    PRV_EINVAL = -502, /* an invalid position or question */
    PRV_ESOLVER = -503 /* the search failed: database, store or proof writing (err says which) */
};

#define PRV_MAXQ 2 /* queries a solve runs at most */

/* prv_opts.ghi: the order of the two searches a query may run (CORRECTNESS
 * UNDER REPETITION, "Optimistic first"). Either way only a closed
 * certificate is an answer; the order decides only the time. */
enum prv_ghi {
    PRV_GHI_AUTO = 0,       /* by the position (the default): optimistic first
                               with at most PRV_GHI_AUTO_MEN men on the board,
                               GHI-safe only with more (docs/solver.md, "By the
                               position") */
    PRV_GHI_OPTIMISTIC = 1, /* optimistic first, GHI-safe after a refusal */
    PRV_GHI_SAFE = 2        /* GHI-safe only */
};
#define PRV_GHI_AUTO_MEN 4

/* ---- types ---------------------------------------------------------- */

typedef struct prv_opts {
    const egdb *db;
    int db_pieces;
    pst_env *store;               /* may be NULL: nothing is read or written */
    const eng_question *question; /* the question to answer; NULL: the value
                                     (two questions at most, chosen by hint) */
    double time_limit;            /* seconds for the whole solve, 0: none */
    uint64_t node_limit;          /* df-pn positions for the whole solve, 0: none */
    dfpn_ctx *ctx;                /* the caller's df-pn solver and table (kept across
                                     solves: a worker allocates it once); NULL: a
                                     table of tt_bytes for this solve alone */
    size_t tt_bytes;              /* df-pn table when ctx is NULL */
    size_t tt_kept_bytes;         /* with ctx NULL: memory for the proven positions
                                     the table gives up (dfpn_set_kept); 0: none */
    int first_depth;              /* dfpn_opts.first_depth (0: the default) */
    int hint;                     /* expected outcome for the side to move (-1, 0, 1),
                                     e.g. from ab_search; orders the value queries */
    int ghi;                      /* how each query treats repetitions: PRV_GHI_* */
    volatile int *stop;
    void (*progress)(const dfpn_progress *p, void *arg);
    void *progress_arg;
} prv_opts;

typedef struct prv_query {
    eng_question q; /* as dfpn_prove took it */
    dfpn_result r;
    double refuted_seconds; /* an optimistic answer refused first: the time
                               of that search and its walk (0: none) */
    uint64_t refuted_nodes;
    double refuted_walk_seconds; /* of those: the walk's that refused it */
    uint64_t refuted_walk_nodes;
} prv_query;

typedef struct prv_result {
    eng_bound bound; /* what was proved for the side to move (LW: nothing) */
    int complete;    /* the goal asked for was settled */
    int nq;          /* queries run */
    prv_query q[PRV_MAXQ];
    uint64_t nodes, expanded;
    int refuted; /* optimistic answers the walk refuted (then re-searched) */
    int error;   /* with PRV_ESOLVER: the DFPN_E* code (DFPN_EDB, DFPN_ESTORE,
                    DFPN_EPROOF, DFPN_ENOMEM) */
    double seconds;
} prv_result;

/* ---- functions ------------------------------------------------------ */

/*
 * prv_solve - answers o->question about p, or proves p's value when it is
 * NULL (VALUES AND QUERIES).
 * RETURN 0 with out filled (out->complete says whether the budget
 * sufficed); PRV_EINVAL; PRV_ENOMEM; PRV_ESOLVER (a database, store or
 * proof-writing failure: err says which; out->bound then holds only what
 * was proved before it).
 */
int prv_solve(const eng_pos *p, const prv_opts *o, prv_result *out, char *err, size_t errlen);

/* prv_strerror - a static message for a PRV_E* code (0: "success"),
 * "unknown solve error" for any other. Thread-safe. (Issue 42: every
 * module's codes have names.) */
const char *prv_strerror(int code);

/* prv_hint - prv_opts.hint from an alpha-beta score (search.h) for the
 * side to move: 1 beyond +PRV_HINT_MARGIN, -1 below -PRV_HINT_MARGIN,
 * else 0 (a draw is the likeliest). */
#define PRV_HINT_MARGIN 60 /* hundredths of a man */
int prv_hint(int ab_score);

/* The bound as `checkers solve` prints it: win, loss, draw, >=draw,
 * <=draw, unknown. Static strings. */
const char *prv_bound_word(eng_bound b);

/* prv_ghi_parse - a prv_opts.ghi from its word (PRV_GHI_WORDS, as the
 * command line and the benches take it). 0, or -1 for an unknown word. */
#define PRV_GHI_WORDS "auto, optimistic or safe"
int prv_ghi_parse(const char *word, int *ghi);
/* prv_ghi_word - the word of a prv_opts.ghi (a static string). */
const char *prv_ghi_word(int ghi);

/* prv_ghi_optimistic - nonzero when a query on p under prv_opts.ghi runs
 * the optimistic search first (PRV_GHI_AUTO: at most PRV_GHI_AUTO_MEN men
 * on the board). */
int prv_ghi_optimistic(const eng_pos *p, int ghi);

#endif /* PROVER_PROVER_H */
