/*
 * collect.h - the records of a proof, gathered from a proof store so that
 * a worker can send them to the manager (protocol.h, PROOF).
 *
 * From a root, every proof its record implies is followed exactly as the
 * checker (prover/check.h) follows it: where the proving side moves, its
 * stored move (the draw move, or the win move of a win record); where
 * the other side moves, every reply; leaves are positions with no move
 * and positions of at most db_pieces pieces (the databases). Each stored
 * position met is one record. A position without the record its proof
 * needs is an error: the store holds no complete proof (which the
 * store's invariant rules out, so it names a bug or damage).
 */
#ifndef MANAGER_COLLECT_H
#define MANAGER_COLLECT_H

#include <stddef.h>

#include "engine/engine.h"
#include "prover/store.h"

typedef struct mgc_items {
    pst_item *v;
    size_t n, cap;
} mgc_items;

/*
 * mgc_collect - appends to out the records of every proof the store's
 * record for root implies. RETURN 0 (nothing appended when the store has
 * no record for root); PST_ENOTFOUND (a proof is incomplete: err names
 * the position), PST_ECORRUPT, PST_ENOMEM.
 */
int mgc_collect(pst_env *st, int db_pieces, const eng_pos *root, mgc_items *out, char *err,
                size_t errlen);

/* Appends one item. RETURN 0 or PST_ENOMEM. */
int mgc_push(mgc_items *out, const pst_item *it);

void mgc_free(mgc_items *it);

#endif /* MANAGER_COLLECT_H */
