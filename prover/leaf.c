/*
 * leaf.c - the leaf rule (leaf.h is the manual).
 */
#include "prover/leaf.h"

int
pleaf_of(const egdb *db, int scope, const eng_pos *p, int flags, pleaf *out)
{
    out->kind = PLEAF_NONE;
    out->bound = ENG_LW;
    if (!(flags & PLEAF_MOVES) && eng_count_moves(p, ENG_DUPS_MERGE) == 0) {
        out->kind = PLEAF_END;
        out->bound = ENG_LL;
        return 0;
    }
    if (!db)
        return 0;
    int b = egdb_bound(db, scope, p, flags & PLEAF_QUIET);
    if (b == EGDB_ENOTFOUND || b == EGDB_ECAPTURE)
        return 0;
    if (b < 0)
        return b;
    if (egdb_scope_has(scope, p)) {
        out->kind = PLEAF_DB;
    } else if (b != ENG_LW) {
        out->kind = PLEAF_PARTIAL;
    } else {
        return 0; /* a partial position nothing is known of */
    }
    out->bound = (eng_bound)b;
    return 0;
}

int
pleaf_answer(const pleaf *l, const eng_question *q, int stm)
{
    return l->kind == PLEAF_NONE ? 0 : eng_question_answer(q, stm, l->bound);
}

const char *
pleaf_kind_name(int kind)
{
    switch (kind) {
    case PLEAF_END:
        return "rules";
    case PLEAF_DB:
        return "database";
    case PLEAF_PARTIAL:
        return "partial database";
    default:
        return "none";
    }
}
