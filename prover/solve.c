/*
 * solve.c - prv_solve: goals as df-pn queries (prover.h, VALUES AND
 * QUERIES).
 */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "prover/prover.h"

/* ---- functions -------------------------------------------------------- */

static double
now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

const char *
prv_bound_word(eng_bound b)
{
    switch (b) {
    case ENG_WW:
        return "win";
    case ENG_LL:
        return "loss";
    case ENG_DD:
        return "draw";
    case ENG_DW:
        return ">=draw";
    case ENG_LD:
        return "<=draw";
    default:
        return "unknown";
    }
}

int
prv_ghi_optimistic(const eng_pos *p, int ghi)
{
    if (ghi == PRV_GHI_AUTO)
        return __builtin_popcount(p->bm | p->wm) <= PRV_GHI_AUTO_MEN;
    return ghi == PRV_GHI_OPTIMISTIC;
}

static const char *const ghi_words[] = {
    [PRV_GHI_AUTO] = "auto", [PRV_GHI_OPTIMISTIC] = "optimistic", [PRV_GHI_SAFE] = "safe"};

const char *
prv_ghi_word(int ghi)
{
    return ghi >= 0 && ghi <= PRV_GHI_SAFE ? ghi_words[ghi] : "?";
}

int
prv_ghi_parse(const char *word, int *ghi)
{
    for (int g = 0; g <= PRV_GHI_SAFE; g++) {
        if (!strcmp(word, ghi_words[g])) {
            *ghi = g;
            return 0;
        }
    }
    return -1;
}

/*
 * The bound for the side to move of p that a query's answer proves
 * (eng_question_bound); nothing for a query left open.
 */
static eng_bound
bound_of(const eng_pos *p, const eng_question *q, int status)
{
    if (status != DFPN_PROVEN && status != DFPN_DISPROVEN)
        return ENG_LW;
    return eng_question_bound(q, p->stm, status == DFPN_PROVEN);
}

int
prv_hint(int ab_score)
{
    return ab_score > PRV_HINT_MARGIN ? 1 : ab_score < -PRV_HINT_MARGIN ? -1 : 0;
}

const char *
prv_strerror(int code)
{
    switch (code) {
    case PRV_OK:
        return "success";
    case PRV_ENOMEM:
        return "out of memory";
    case PRV_EINVAL:
        return "invalid position or question";
    case PRV_ESOLVER:
        return "the search failed (database, store or proof)";
    default:
        return "unknown solve error";
    }
}

int
prv_solve(const eng_pos *p, const prv_opts *o, prv_result *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    out->bound = ENG_LW;
    if (eng_validate(p, err, errlen) != 0 || (o->question && !eng_question_valid(o->question)))
        return PRV_EINVAL;
    dfpn_ctx *c = o->ctx;
    if (!c && dfpn_new(o->tt_bytes, &c) != 0) {
        snprintf(err, errlen, "out of memory for a %zu-byte table", o->tt_bytes);
        return PRV_ENOMEM;
    }
    if (!o->ctx)
        dfpn_set_kept(c, o->tt_kept_bytes);
    double t0 = now();
    int stm = p->stm, opp = !p->stm;
    /* the first query: a question is asked for the side to move (the
     * other side's question is its dual: "does the opponent win" is "does
     * the side to move not draw"); a value starts where the hint points */
    eng_question ask;
    if (o->question) {
        const eng_question *qq = o->question;
        ask.attacker = stm;
        ask.target =
            qq->attacker == stm ? qq->target : (qq->target == ENG_WIN ? ENG_DRAW : ENG_WIN);
    } else if (o->hint > 0) {
        ask = (eng_question){stm, ENG_WIN};
    } else if (o->hint < 0) {
        ask = (eng_question){opp, ENG_WIN};
    } else {
        ask = (eng_question){stm, ENG_DRAW};
    }
    int optimistic = prv_ghi_optimistic(p, o->ghi);
    int rc = 0;
    for (;;) {
        dfpn_opts d = {0};
        d.db = o->db;
        d.db_pieces = o->db_pieces;
        d.store = o->store;
        d.write_proof = o->store != NULL; /* a proof is written only where it is kept */
        d.stop = o->stop;
        d.progress = o->progress;
        d.progress_arg = o->progress_arg;
        d.first_depth = o->first_depth;
        if (o->time_limit > 0) {
            d.time_limit = o->time_limit - (now() - t0);
            if (d.time_limit <= 0.01)
                break;
        }
        if (o->node_limit) {
            if (out->nodes >= o->node_limit)
                break;
            d.node_limit = o->node_limit - out->nodes;
        }
        prv_query *q = &out->q[out->nq++];
        q->q = ask;
        /* optimistic first where o->ghi says so (prv_ghi_optimistic):
         * fast where cycles abound, and its answer stands only as a
         * closed certificate; if refuted, the GHI-safe search runs with
         * what is left of the budget */
        d.optimistic = optimistic;
        rc = dfpn_prove(c, p, &ask, &d, &q->r, err, errlen);
        out->nodes += q->r.nodes;
        out->expanded += q->r.expanded;
        if (rc == 0 && q->r.refuted) {
            out->refuted++;
            q->refuted_seconds = q->r.seconds;
            q->refuted_nodes = q->r.nodes;
            q->refuted_walk_seconds = q->r.walk_seconds;
            q->refuted_walk_nodes = q->r.walk_nodes;
            d.optimistic = 0;
            if (d.time_limit > 0)
                d.time_limit -= q->r.seconds;
            if (d.node_limit)
                d.node_limit = d.node_limit > q->r.nodes ? d.node_limit - q->r.nodes : 1;
            if (d.time_limit >= 0) {
                rc = dfpn_prove(c, p, &ask, &d, &q->r, err, errlen);
                out->nodes += q->r.nodes;
                out->expanded += q->r.expanded;
            }
        }
        /* An answer whose proof could not be written is not a result:
         * the walk is what certifies df-pn's answers, and it has caught
         * wrong ones (a table fault, since mended). The bound stays what
         * the earlier queries proved; the error says where the walk
         * stopped. */
        eng_bound b = rc == DFPN_EPROOF ? ENG_LW : bound_of(p, &ask, q->r.status);
        out->bound = eng_bound_meet(out->bound, b);
        if (rc != 0 || q->r.status == DFPN_UNKNOWN)
            break;
        if (o->question || eng_bound_is_exact(out->bound) || out->nq == PRV_MAXQ)
            break;
        /* the second query of a value solve settles what the first left */
        if (out->bound == ENG_LD) /* stm does not win: does stm draw? */
            ask = (eng_question){stm, ENG_DRAW};
        else if (out->bound == ENG_DW) /* stm does not lose: does opp draw? */
            ask = (eng_question){opp, ENG_DRAW};
        else
            break;
    }
    if (c != o->ctx)
        dfpn_free(c);
    out->seconds = now() - t0;
    /* one query settles a one-goal solve; a value needs an exact bound */
    out->complete = !o->question ? eng_bound_is_exact(out->bound) : out->bound != ENG_LW;
    out->error = rc;
    return rc ? PRV_ESOLVER : 0;
}
