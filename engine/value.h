/*
 * value.h - the project's one value type: bounds on a game value.
 *
 * This header is the manual of the value algebra shared by the endgame
 * databases (complete and partial), the prover and the manager
 * (DESIGN.md, "One value type for everything"). It has no dependency on
 * the rest of the engine.
 *
 * OUTCOMES
 *   A game value for the side to move is one of ENG_LOSS < ENG_DRAW <
 *   ENG_WIN (-1, 0, 1). "Draw" is what seed 000 calls a tie (T): neither
 *   side can force a win, so with these rules the game goes on for ever.
 *
 * BOUNDS (eng_bound)
 *   What is known about a position is a pair lo <= hi of outcomes for the
 *   side to move: the true value v satisfies lo <= v <= hi. Six pairs
 *   exist; their names put the lower bound first, as seed 000 (Bjornsson,
 *   Schaeffer, Sturtevant, "Partial Information Endgame Databases",
 *   section 2.2) writes them, with D for the paper's T:
 *     ENG_LL  loss              (exact)        paper LL
 *     ENG_LD  at most a draw                   paper LT
 *     ENG_DD  draw              (exact)        paper TT
 *     ENG_DW  at least a draw                  paper TW
 *     ENG_WW  win               (exact)        paper WW
 *     ENG_LW  nothing known                    paper LW
 *   The codes 0..5 are stable: the partial database files (egdb/partial.h)
 *   store them as they are.
 *
 *   Negation (eng_bound_neg) gives the bound for the other side:
 *   (lo, hi) -> (-hi, -lo); LL <-> WW, LD <-> DW, DD and LW stay.
 *   Max (eng_bound_max) is the value of a choice between two moves for the
 *   side to move: componentwise, max(lo_a, lo_b) and max(hi_a, hi_b).
 *   This is seed 000's Figure 2 ordering: "the lower-bound on the max of
 *   two values is the max of the lower-bounds on these values, and the
 *   upper-bound on the max of two values is the max of the upper-bounds".
 *   It is a partial order: DD and LW are incomparable, max(DD, LW) = DW.
 *   The value of a position is the max over its moves of the negated
 *   values of the positions the moves lead to (negamax).
 *
 * BUILD-TIME VALUES (eng_pval)
 *   While a partial database is being built, seed 000 needs four more
 *   values on top of the six bounds: uLW, uTW, uTT and uLT, "the value a
 *   state would take if the retrograde analysis were to stop without
 *   further updates". uTT is the classic "unknown" of retrograde analysis
 *   (a position that, if nothing else is learnt, is drawn by repetition);
 *   the other three arise when uTT meets partial bounds in a cycle. The
 *   ten values, their max (the paper's Table 2, transcribed cell by cell
 *   in value.c and checked cell by cell by tests/test_value.c), negation,
 *   completed and decide are the eng_pval_* functions below. The paper's
 *   letters are kept for them (T = draw), so that Table 2 can be compared
 *   with the paper by eye.
 *
 * THREAD SAFETY
 *   Every function is a pure function of its arguments over read-only
 *   tables; call it from any thread.
 */
#ifndef ENGINE_VALUE_H
#define ENGINE_VALUE_H

#include <stdint.h>

/* ---- constants ------------------------------------------------------ */

/* Outcomes for the side to move. */
enum eng_outcome { ENG_LOSS = -1, ENG_DRAW = 0, ENG_WIN = 1 };

/* Bound codes (stable: stored in files). */
enum eng_bound_code {
    ENG_LL = 0, /* loss                     */
    ENG_LD = 1, /* loss or draw             */
    ENG_DD = 2, /* draw                     */
    ENG_DW = 3, /* draw or win              */
    ENG_WW = 4, /* win                      */
    ENG_LW = 5  /* loss, draw or win        */
};
#define ENG_NBOUNDS 6
#define ENG_BOUND_INVALID 0xFF /* what eng_bound_make returns for lo > hi */

/*
 * Build-time value codes, in the row/column order of seed 000's Table 2
 * (WW TT LL TW LT LW uLW uTW uTT uLT). The first six are the six bounds
 * ("known" values, "completed"), the last four the unknowns.
 */
enum eng_pval_code {
    ENG_PV_WW = 0,
    ENG_PV_TT = 1,
    ENG_PV_LL = 2,
    ENG_PV_TW = 3,
    ENG_PV_LT = 4,
    ENG_PV_LW = 5,
    ENG_PV_ULW = 6,
    ENG_PV_UTW = 7,
    ENG_PV_UTT = 8, /* the initial value of every position being built */
    ENG_PV_ULT = 9
};
#define ENG_NPVALS 10

/* ---- types ---------------------------------------------------------- */

/* A bound: one of the six ENG_LL..ENG_LW codes. A byte, so arrays of
 * them are cheap and a bound is passed and returned by value. */
typedef uint8_t eng_bound;

/* A build-time value of seed 000: one of the ten ENG_PV_* codes. */
typedef uint8_t eng_pval;

/*
 * A question about a position, the one way the system asks one: does
 * colour `attacker` win (target ENG_WIN), or at least draw (target
 * ENG_DRAW)? The manager's tree asks it of its root and leaves, a job
 * carries it to a worker (the wire has its own byte codes,
 * manager/protocol.h), prv_solve and dfpn_prove answer it. A proof's goal
 * (manager/tree.h: value, win, draw, >=draw, <=draw) is what the
 * questions add up to, not a question.
 */
typedef struct eng_question {
    int attacker; /* ENG_BLACK or ENG_WHITE */
    int target;   /* ENG_WIN or ENG_DRAW */
} eng_question;

/* Nonzero when q is a question (attacker a colour, target WIN or DRAW). */
int eng_question_valid(const eng_question *q);

/*
 * eng_question_answer - what bound b, for the side to move stm, says to
 * question q: +1 yes (every value b allows reaches the target for the
 * attacker), -1 no (none does), 0 open. The one place this rule is
 * written: the searches, the checker, the manager's tree and the proof
 * browser all ask it (a database bound closes a node only for the
 * question it answers: LD answers "does the other side at least draw"
 * yes, and leaves "does it win" open).
 */
int eng_question_answer(const eng_question *q, int stm, eng_bound b);

/*
 * eng_question_bound - the bound, for the side to move stm, that an
 * answer to q proves: yes nonzero for "yes" (the attacker wins: WW for
 * the attacker; at least draws: DW), zero for "no" (the attacker does not
 * win: LD; does not even draw: LL), negated when stm is the defender. It
 * is the weakest bound whose eng_question_answer is that answer.
 */
eng_bound eng_question_bound(const eng_question *q, int stm, int yes);

/* ---- bounds --------------------------------------------------------- */

/*
 * eng_bound_make - the bound lo..hi.
 * PARAMETERS
 *   lo, hi: outcomes (ENG_LOSS, ENG_DRAW, ENG_WIN).
 * RETURN
 *   the bound, or ENG_BOUND_INVALID when lo > hi or either is not an
 *   outcome.
 */
eng_bound eng_bound_make(int lo, int hi);

/* The bound of an exact outcome: ENG_LL, ENG_DD or ENG_WW
 * (ENG_BOUND_INVALID if v is not an outcome). */
eng_bound eng_bound_exact(int v);

/* The lower / upper bound, an outcome. PRECONDITION: b is one of the six
 * codes (not checked: hot path; use eng_bound_valid on input). */
int eng_bound_lo(eng_bound b);
int eng_bound_hi(eng_bound b);

/* Nonzero when b is one of the six bound codes. */
int eng_bound_valid(int b);

/* The bound for the other side to move: (lo, hi) -> (-hi, -lo). An
 * involution: eng_bound_neg(eng_bound_neg(b)) == b. */
eng_bound eng_bound_neg(eng_bound b);

/* The bound of a choice between a and b for the side to move:
 * componentwise max of lo and of hi (commutative, associative, ENG_LL is
 * the identity, ENG_WW absorbs). */
eng_bound eng_bound_max(eng_bound a, eng_bound b);

/* The intersection of a and b: what is known when both hold (max of the
 * lows, min of the highs). ENG_BOUND_INVALID when they are disjoint: the
 * two cannot both be true. The one place the intersection is written
 * (the solver, the tree, the store's merge and admission use it). */
eng_bound eng_bound_meet(eng_bound a, eng_bound b);

/* Nonzero when lo == hi (LL, DD, WW). */
int eng_bound_is_exact(eng_bound b);

/* Nonzero when the exact outcome v lies in b (lo <= v <= hi). */
int eng_bound_contains(eng_bound b, int v);

/* "LL", "LD", "DD", "DW", "WW", "LW", or "??" for an invalid code.
 * Static strings. */
const char *eng_bound_name(eng_bound b);

/* ---- build-time values (seed 000, section 2.3) ---------------------- */

/*
 * eng_pval_max - seed 000's Table 2, exactly as published: the max of two
 * (already negated) child values.
 */
eng_pval eng_pval_max(eng_pval a, eng_pval b);

/*
 * eng_pval_neg - the value for the other side. Known values negate as
 * bounds (LL <-> WW, LT <-> TW, TT and LW stay). Unknowns keep their "u"
 * and negate their bound: uTT -> uTT, uLW -> uLW, uTW <-> uLT (value.c
 * gives the paper's reasons). An involution.
 */
eng_pval eng_pval_neg(eng_pval v);

/* Nonzero when v is "completed" in seed 000's sense: one of WW, TT, LL,
 * LW, TW, LT. A completed position is never re-evaluated. */
int eng_pval_completed(eng_pval v);

/* decide(): the bound an iteration that stops now gives v: the known
 * values map to themselves, uXY to XY ("decide(uLW) = LW, and likewise
 * for other unknown values"). */
eng_bound eng_pval_decide(eng_pval v);

/* The known build-time value of a bound (LL -> LL, LD -> LT, DD -> TT,
 * DW -> TW, WW -> WW, LW -> LW). PRECONDITION: b valid. */
eng_pval eng_pval_of_bound(eng_bound b);

/* "WW", "TT", "LL", "TW", "LT", "LW", "uLW", "uTW", "uTT", "uLT", or "??".
 * Static strings, the paper's spelling. */
const char *eng_pval_name(eng_pval v);

#endif /* ENGINE_VALUE_H */
