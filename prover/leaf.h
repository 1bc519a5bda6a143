/*
 * leaf.h - the leaf rule: what the rules and the databases know of a
 * position, written once for every walker (the df-pn search and its proof
 * writer, alpha-beta, the independent checker, the manager's tree and the
 * proof browser).
 *
 * THE RULE
 *   1. A position whose side to move has no legal move is lost for it
 *      (the rules): PLEAF_END, bound LL.
 *   2. A position that the proof's database scope takes (egdb_scope_has:
 *      its complete piece counts and whole splits of the next) has the
 *      database's exact value: PLEAF_DB, bound LL, DD or WW.
 *   3. With EGDB_SCOPE_PARTIAL in the scope, a position of a partial
 *      database (egdb/partial.h, seed 000) has its stored bound:
 *      PLEAF_PARTIAL, one of LL..DW. Such a bound is a leaf only for the
 *      question it answers (eng_question_answer): LD for the side to
 *      move answers "does the other side at least draw" yes and leaves
 *      "does it win" open, and then the position is searched like any
 *      other. A partial bound LW (nothing known) is no leaf at all.
 *   Anything else is PLEAF_NONE: a position to search or to find a
 *   stored proof for.
 *
 * Why one function: the rule was written six times (the checker, the
 * proof writer, df-pn, the tree twice, the browser), and a rule a walker
 * applies differently is a proof one accepts and another refuses. The
 * checker keeps its independence from the solver by what it trusts (the
 * rules, the databases, the bytes of the store), not by a second copy of
 * "what a database position is".
 *
 * ERRORS
 *   pleaf_of returns 0, or the database's negative EGDB_E* code when a
 *   probe failed (a damaged block: never a value; egdb_strerror names
 *   it). The caller turns it into its own module's code.
 *
 * THREAD SAFETY
 *   Pure but for the database probe, which is safe from any thread.
 */
#ifndef PROVER_LEAF_H
#define PROVER_LEAF_H

#include "egdb/egdb.h"
#include "engine/engine.h"
#include "engine/value.h"

enum pleaf_kind {
    PLEAF_NONE = 0,   /* not a leaf: search it, or find its stored proof */
    PLEAF_END = 1,    /* no legal move: lost                             */
    PLEAF_DB = 2,     /* the complete databases' exact value             */
    PLEAF_PARTIAL = 3 /* a partial database's bound                      */
};

typedef struct pleaf {
    int kind;        /* PLEAF_* */
    eng_bound bound; /* for p's side to move; ENG_LW with PLEAF_NONE */
} pleaf;

/* pleaf_of flags. */
#define PLEAF_QUIET                                                                                \
    1 /* ask the complete databases as egdb_probe_quiet: a                                         \
         capture position of a compressed slice is then                                            \
         PLEAF_NONE (the search plays its captures) */
#define PLEAF_MOVES                                                                                \
    2 /* the caller knows p has a legal move (it counted                                           \
         them already): rule 1 is skipped */

/*
 * pleaf_of - THE RULE above for p, with the databases db (may be NULL:
 * only rule 1) and the proof's scope (a database scope, egdb.h).
 * RETURN 0 with *out filled, or a negative EGDB_E* code (*out is then
 * PLEAF_NONE).
 */
int pleaf_of(const egdb *db, int scope, const eng_pos *p, int flags, pleaf *out);

/*
 * pleaf_answer - +1 when the leaf answers q yes, -1 no, 0 when it is no
 * leaf for q (PLEAF_NONE, or a partial bound that leaves q open): then
 * the position must be searched or proven like any other.
 */
int pleaf_answer(const pleaf *l, const eng_question *q, int stm);

/* "rules", "database", "partial database" or "none". */
const char *pleaf_kind_name(int kind);

#endif /* PROVER_LEAF_H */
