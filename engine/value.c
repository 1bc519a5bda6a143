/*
 * value.c - bounds on game values and seed 000's build-time values
 * (value.h has the manual).
 *
 * Everything here is a lookup in a small constant table. Bounds are
 * coded 0..5 and their algebra is computed once from the definition
 * (lo, hi) -> ... in the tables below, written out so that a reader can
 * check each entry; the build-time max is Table 2 of seed 000 copied
 * cell by cell, deliberately NOT derived from a formula, so that the
 * builder runs on exactly what the paper published and the test suite
 * can compare the transcription with both the paper and the formula it
 * agrees with (componentwise max of the bounds, "u" kept unless the
 * result is WW).
 */
#include "engine/engine.h"
#include "engine/value.h"

/* ---- static data -------------------------------------------------------- */

/* Lower and upper bound of each code (LL LD DD DW WW LW). */
static const int8_t bound_lo[ENG_NBOUNDS] = {ENG_LOSS, ENG_LOSS, ENG_DRAW,
                                             ENG_DRAW, ENG_WIN,  ENG_LOSS};
static const int8_t bound_hi[ENG_NBOUNDS] = {ENG_LOSS, ENG_DRAW, ENG_DRAW,
                                             ENG_WIN,  ENG_WIN,  ENG_WIN};

/* Code of (lo, hi), indexed [lo + 1][hi + 1]; lo > hi is invalid. */
static const uint8_t bound_of[3][3] = {
    /* hi:     L       D                  W      */
    /* lo L */ {ENG_LL, ENG_LD, ENG_LW},
    /* lo D */ {ENG_BOUND_INVALID, ENG_DD, ENG_DW},
    /* lo W */ {ENG_BOUND_INVALID, ENG_BOUND_INVALID, ENG_WW},
};

/* (lo, hi) -> (-hi, -lo). */
static const uint8_t bound_neg[ENG_NBOUNDS] = {
    ENG_WW, /* LL */
    ENG_DW, /* LD */
    ENG_DD, /* DD */
    ENG_LD, /* DW */
    ENG_LL, /* WW */
    ENG_LW  /* LW */
};

static const char *const bound_names[ENG_NBOUNDS] = {"LL", "LD", "DD", "DW", "WW", "LW"};

/*
 * Seed 000, Table 2: "The maximum of each possible combination of states
 * that can be encountered in the process of building partial-information
 * databases". Rows and columns in the paper's order: WW TT LL TW LT LW
 * uLW uTW uTT uLT (the order of enum eng_pval_code). Transcribed row by
 * row; tests/test_value.c asserts every cell against a second, textual
 * transcription of the paper.
 */
#define WW ENG_PV_WW
#define TT ENG_PV_TT
#define LL ENG_PV_LL
#define TW ENG_PV_TW
#define LT ENG_PV_LT
#define LW ENG_PV_LW
#define uLW ENG_PV_ULW
#define uTW ENG_PV_UTW
#define uTT ENG_PV_UTT
#define uLT ENG_PV_ULT
/* clang-format off */
static const uint8_t table2[ENG_NPVALS][ENG_NPVALS] = {
    /*         WW    TT    LL    TW    LT    LW    uLW   uTW   uTT   uLT */
    /* WW  */ {WW,   WW,   WW,   WW,   WW,   WW,   WW,   WW,   WW,   WW},
    /* TT  */ {WW,   TT,   TT,   TW,   TT,   TW,   uTW,  uTW,  uTT,  uTT},
    /* LL  */ {WW,   TT,   LL,   TW,   LT,   LW,   uLW,  uTW,  uTT,  uLT},
    /* TW  */ {WW,   TW,   TW,   TW,   TW,   TW,   uTW,  uTW,  uTW,  uTW},
    /* LT  */ {WW,   TT,   LT,   TW,   LT,   LW,   uLW,  uTW,  uTT,  uLT},
    /* LW  */ {WW,   TW,   LW,   TW,   LW,   LW,   uLW,  uTW,  uTW,  uLW},
    /* uLW */ {WW,   uTW,  uLW,  uTW,  uLW,  uLW,  uLW,  uTW,  uTW,  uLW},
    /* uTW */ {WW,   uTW,  uTW,  uTW,  uTW,  uTW,  uTW,  uTW,  uTW,  uTW},
    /* uTT */ {WW,   uTT,  uTT,  uTW,  uTT,  uTW,  uTW,  uTW,  uTT,  uTT},
    /* uLT */ {WW,   uTT,  uLT,  uTW,  uLT,  uLW,  uLW,  uTW,  uTT,  uLT},
};
/* clang-format on */

/*
 * Negation of the build-time values. The paper defines negation only for
 * the classic values ("the negate operator maps L to W and vice versa,
 * but T and U remain the same", section 2.1), so for the unknowns it is
 * derived from what they mean and checked against the paper's example:
 *   - an unknown stands for "the value the state would take if the
 *     retrograde analysis were to stop" (section 2.3), i.e. decide(u).
 *     Seen from the other side that stopped value is negated, and the
 *     state is still unresolved, so neg(uXY) = u(neg XY). Then
 *     decide(neg(v)) == neg(decide(v)) for all ten values, which is what
 *     makes a stopped iteration consistent between a position and its
 *     parent.
 *   - uTT is the old unknown U, which negation leaves alone (section
 *     2.1): uTT -> uTT, as the formula says.
 *   - Figure 4: in a repetition cycle "the highlighted node ... is
 *     subsequently updated to uTW. In the next step, the parent of this
 *     state ... can now be updated to uLT". The parent's only move in the
 *     cycle leads to the uTW node, so its value max(neg(uTW)) is uLT:
 *     neg(uTW) = uLT, and by the involution neg(uLT) = uTW.
 *   - uLW arises from "one child with a value of uLT and another child
 *     with the value LW"; LW is its own negation, and so is uLW.
 */
static const uint8_t pval_neg[ENG_NPVALS] = {
    LL,  /* WW  */
    TT,  /* TT  */
    WW,  /* LL  */
    LT,  /* TW  */
    TW,  /* LT  */
    LW,  /* LW  */
    uLW, /* uLW */
    uLT, /* uTW */
    uTT, /* uTT */
    uTW  /* uLT */
};

/* decide(): "We decide the final value of an unknown state by converting
 * it to its corresponding known value. So, decide(uLW) = LW, and likewise
 * for other unknown values." Known values are their own decision. */
static const uint8_t pval_decide[ENG_NPVALS] = {
    ENG_WW, /* WW  */
    ENG_DD, /* TT  */
    ENG_LL, /* LL  */
    ENG_DW, /* TW  */
    ENG_LD, /* LT  */
    ENG_LW, /* LW  */
    ENG_LW, /* uLW */
    ENG_DW, /* uTW */
    ENG_DD, /* uTT */
    ENG_LD  /* uLT */
};

/* Bound code -> known build-time value. */
static const uint8_t pval_of_bound[ENG_NBOUNDS] = {
    LL, /* LL */
    LT, /* LD */
    TT, /* DD */
    TW, /* DW */
    WW, /* WW */
    LW  /* LW */
};
#undef WW
#undef TT
#undef LL
#undef TW
#undef LT
#undef LW
#undef uLW
#undef uTW
#undef uTT
#undef uLT

static const char *const pval_names[ENG_NPVALS] = {"WW", "TT",  "LL",  "TW",  "LT",
                                                   "LW", "uLW", "uTW", "uTT", "uLT"};

/* ---- bounds --------------------------------------------------------- */

int
eng_bound_valid(int b)
{
    return b >= 0 && b < ENG_NBOUNDS;
}

eng_bound
eng_bound_make(int lo, int hi)
{
    if (lo < ENG_LOSS || lo > ENG_WIN || hi < ENG_LOSS || hi > ENG_WIN)
        return ENG_BOUND_INVALID;
    return bound_of[lo + 1][hi + 1];
}

eng_bound
eng_bound_exact(int v)
{
    return eng_bound_make(v, v);
}

int
eng_bound_lo(eng_bound b)
{
    return bound_lo[b];
}

int
eng_bound_hi(eng_bound b)
{
    return bound_hi[b];
}

eng_bound
eng_bound_neg(eng_bound b)
{
    return bound_neg[b];
}

eng_bound
eng_bound_max(eng_bound a, eng_bound b)
{
    /* Componentwise (seed 000, section 2.2); the result always satisfies
     * lo <= hi because each component of a and b does. */
    int lo = bound_lo[a] > bound_lo[b] ? bound_lo[a] : bound_lo[b];
    int hi = bound_hi[a] > bound_hi[b] ? bound_hi[a] : bound_hi[b];
    return bound_of[lo + 1][hi + 1];
}

int
eng_question_valid(const eng_question *q)
{
    return q && (q->attacker == ENG_BLACK || q->attacker == ENG_WHITE) &&
           (q->target == ENG_WIN || q->target == ENG_DRAW);
}

int
eng_question_answer(const eng_question *q, int stm, eng_bound b)
{
    eng_bound x = stm == q->attacker ? b : eng_bound_neg(b);
    int lo = eng_bound_lo(x), hi = eng_bound_hi(x);
    if (lo >= q->target)
        return 1;
    return hi < q->target ? -1 : 0;
}

eng_bound
eng_question_bound(const eng_question *q, int stm, int yes)
{
    eng_bound b;
    if (yes)
        b = q->target == ENG_WIN ? ENG_WW : ENG_DW;
    else
        b = q->target == ENG_WIN ? ENG_LD : ENG_LL;
    return stm == q->attacker ? b : eng_bound_neg(b);
}

eng_bound
eng_bound_meet(eng_bound a, eng_bound b)
{
    int lo = bound_lo[a] > bound_lo[b] ? bound_lo[a] : bound_lo[b];
    int hi = bound_hi[a] < bound_hi[b] ? bound_hi[a] : bound_hi[b];
    return lo > hi ? ENG_BOUND_INVALID : bound_of[lo + 1][hi + 1];
}

int
eng_bound_is_exact(eng_bound b)
{
    return b < ENG_NBOUNDS && bound_lo[b] == bound_hi[b];
}

int
eng_bound_contains(eng_bound b, int v)
{
    return b < ENG_NBOUNDS && bound_lo[b] <= v && v <= bound_hi[b];
}

const char *
eng_bound_name(eng_bound b)
{
    return b < ENG_NBOUNDS ? bound_names[b] : "??";
}

/* ---- build-time values ---------------------------------------------- */

eng_pval
eng_pval_max(eng_pval a, eng_pval b)
{
    return table2[a][b];
}

eng_pval
eng_pval_neg(eng_pval v)
{
    return pval_neg[v];
}

int
eng_pval_completed(eng_pval v)
{
    /* "A position is completed once it has a value of WW, TT, LL, LW, TW,
     * or LT" - the first six codes. */
    return v <= ENG_PV_LW;
}

eng_bound
eng_pval_decide(eng_pval v)
{
    return pval_decide[v];
}

eng_pval
eng_pval_of_bound(eng_bound b)
{
    return pval_of_bound[b];
}

const char *
eng_pval_name(eng_pval v)
{
    return v < ENG_NPVALS ? pval_names[v] : "??";
}
