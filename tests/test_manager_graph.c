/*
 * test_manager_graph.c - the proof tree's PN graph (manager/tree_graph.c)
 * on its own: no LMDB, no proof store, no databases (tree_int.h, THE
 * IN-MEMORY TREE). Small graphs are built by hand - a transposition, a
 * node shared by two interior nodes, a cycle - and their proof and
 * disproof numbers, flags, bounds and backed-up records are checked
 * against values worked out by hand in the comments. Jobs are picked with
 * mt_pick and answered with mtd_take (mtg_result), and after every step a whole pass
 * must leave what the incremental update left (mt_check_numbers). Last, a
 * tree of real positions grows in memory for a few hundred jobs with the
 * same check after each. Then the graph on its own, driven by facts
 * (mtg_pick, mtg_result, mtg_expand, mtg_child_scores): what its change
 * set holds for the caller to keep (nodes, jobs, records to back up) and
 * where the workers' scores go (tree_int.h, THE CHANGE SET; tree.h,
 * SCORES).
 *
 * Notation in the comments: a node is "pn/dn"; B nodes have Black to move,
 * W nodes White. Every question here is "does Black win", so B nodes are
 * OR nodes (pn = min, dn = sum) and W nodes AND nodes (pn = sum, dn = min);
 * an open leaf is 1/1 (uniform numbers, but in test_leaf_numbers), a
 * proven node 0/INF, a disproven one INF/0.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "manager/tree_int.h"
#include "tests/test_util.h"

/* ---- constants -------------------------------------------------------- */

#define BIG_BUDGET (1000u * 1024) /* job_max_ms: a leaf's budget grows 10 times */

/* ---- helpers ---------------------------------------------------------- */

/* A call that must succeed: what failed and err are printed if not. */
static void
ok(int rc, const char *what, const char *err)
{
    if (rc)
        fprintf(stderr, "%s: %s\n", what, err);
    assert_int_equal(rc, 0);
}

/* A distinct position for hand-made node k: a black man on bit k (k < 31)
 * and a white king on bit 31; only its side to move matters to the graph. */
static eng_pos
node_pos(int k, int side)
{
    eng_pos p = {.bm = 1u << k, .wk = 1u << 31, .stm = side};
    return p;
}

/* An in-memory tree for goal win, its root (node 0) fen, or when fen is
 * NULL hand-made with Black to move; nothing provisional (h at MT_H_INF).
 * Jobs of 1000 ms whose budget grows to job_max_ms: BIG_BUDGET, and no
 * job makes the graph expand with real moves; 1000, and every job that
 * leaves its leaf open expands it. */
static mt_tree *
mem_tree(int job_max_ms, const char *fen)
{
    eng_pos r = node_pos(0, ENG_BLACK);
    char err[256] = "";
    if (fen)
        ok(eng_parse_fen(fen, &r, err, sizeof err), fen, err);
    mt_create cr = {.root = r,
                    .goal = MT_GOAL_WIN,
                    .job_ms = 1000,
                    .job_max_ms = (uint32_t)job_max_ms,
                    .h0 = MT_H_INF,
                    .h_step = 100,
                    .no_early = !fen}; /* hand-made positions have no real moves */
    mt_tree *t;
    ok(mtg_open_mem(&cr, &t, err, sizeof err), "mtg_open_mem", err);
    assert_null(t->lm);    /* nothing persisted */
    assert_null(t->store); /* no proof store */
    assert_int_equal(t->count, 1);
    assert_int_equal(t->n[0].own, ENG_LW); /* the root has moves */
    assert_int_equal(t->q.attacker, r.stm);
    assert_int_equal(t->q.target, ENG_WIN);
    assert_int_equal(t->leaf_step, 0); /* uniform numbers: every open leaf 1/1 */
    return t;
}

/* Adds hand-made nodes 1, 2, ... after the root, one a letter of sides
 * (the side to move: 'B' or 'W'), so that node k has index k. */
static void
add_nodes(mt_tree *t, const char *sides)
{
    for (int k = 1; sides[k - 1]; k++) {
        eng_pos p = node_pos(k, sides[k - 1] == 'W' ? ENG_WHITE : ENG_BLACK);
        assert_int_equal(mtg_add(t, &p), k);
    }
}

/* Node i gets the children kid[0..n-1] and is expanded. */
static void
kids(mt_tree *t, uint32_t i, const uint32_t *kid, uint16_t n)
{
    assert_int_equal(mtg_set_kids(t, i, kid, n), 0);
    t->n[i].expanded = 1;
}

static void
pass(mt_tree *t)
{
    char err[256] = "";
    ok(mtg_pass(t, err, sizeof err), "mtg_pass", err);
}

/* The incremental update left what a whole pass computes. */
static void
same_as_pass(mt_tree *t)
{
    char err[512] = "";
    ok(mt_check_numbers(t, err, sizeof err), "mt_check_numbers", err);
}

static void
numbers(const mt_tree *t, uint32_t i, uint64_t pn, uint64_t dn, int flagged)
{
    const mt_node *n = &t->n[i];
    if (n->pn != pn || n->dn != dn || n->flagged != flagged)
        fprintf(stderr, "node %u: %llu/%llu flag %d, expected %llu/%llu flag %d\n", i,
                (unsigned long long)n->pn, (unsigned long long)n->dn, n->flagged,
                (unsigned long long)pn, (unsigned long long)dn, flagged);
    assert_true(n->pn == pn && n->dn == dn && n->flagged == flagged);
}

/* Picks a job and checks it is node i's; returns its record. */
static mt_jobrec *
pick(mt_tree *t, uint32_t i)
{
    mt_job j;
    char err[256] = "";
    int rc = mt_pick(t, &j, err, sizeof err);
    if (rc < 0)
        fprintf(stderr, "mt_pick: %s\n", err);
    assert_int_equal(rc, MT_PICK_JOB);
    assert_true(eng_equal(&j.pos, &t->n[i].pos));
    assert_int_equal(j.q.attacker, t->q.attacker);
    assert_int_equal(j.q.target, t->q.target);
    mt_jobrec *r = mtg_job_find(t, j.id);
    assert_non_null(r);
    assert_int_equal(r->node, i);
    assert_int_equal(t->n[i].inflight, 1);
    return r;
}

static void
pick_status(mt_tree *t, int want)
{
    mt_job j;
    char err[256] = "";
    assert_int_equal(mt_pick(t, &j, err, sizeof err), want);
}

/* Answers job j: the store now holds bound for its position (ENG_LW:
 * nothing), with score (depth 1) when score_depth is set. */
static void
answer(mt_tree *t, uint64_t id, eng_bound bound, int score, int score_depth)
{
    char err[256] = "";
    mt_jobrec *j = mtg_job_find(t, id);
    assert_non_null(j);
    mtg_result_fact f = {bound, bound != ENG_LW, score, score_depth, 10, 5, NULL, 0};
    ok(mtd_take(t, j, &f, err, sizeof err), "mtd_take", err);
    assert_null(mtg_job_find(t, id)); /* answered: dropped */
}

/* ---- tests ------------------------------------------------------------ */

/*
 * A transposition: D is a child of both A and B.
 *
 *        R (B)
 *       /     \
 *    A (W)    B (W)
 *    /   \    /   \
 *  C(B)   D(B)    E(B)
 *
 * Three jobs go out (C, D, E, each flagging its way up), then come back:
 * D won for Black, E lost for Black, C won. Numbers, flags and bounds are
 * checked after every step, and that a whole pass agrees.
 */
static void
test_transposition(void **state)
{
    (void)state;
    enum { R, A, B, C, D, E };
    mt_tree *t = mem_tree(BIG_BUDGET, NULL);
    add_nodes(t, "WWBBB");
    kids(t, R, (uint32_t[]){A, B}, 2);
    kids(t, A, (uint32_t[]){C, D}, 2);
    kids(t, B, (uint32_t[]){D, E}, 2);
    pass(t);
    assert_int_equal(t->n[D].npar, 2); /* one node, two parents */
    /* leaves 1/1; A and B (AND) 1+1 = 2 / min(1,1) = 1; R (OR) min(2,2)
     * = 2 / 1+1 = 2 */
    numbers(t, C, 1, 1, 0);
    numbers(t, A, 2, 1, 0);
    numbers(t, B, 2, 1, 0);
    numbers(t, R, 2, 2, 0);
    assert_int_equal(mt_max_depth(t), 2);

    /* 1st pick: R's children tie at 2/1, the first (A) is taken; A (AND)
     * takes the least dn, a tie of C and D: C. C is flagged, A is not (D
     * is still free). Virtual equivalence: no number changes. */
    mt_jobrec *jc = pick(t, C);
    uint64_t idc = jc->id;
    numbers(t, C, 1, 1, 1);
    numbers(t, A, 2, 1, 0);
    numbers(t, R, 2, 2, 0);
    /* 2nd: R -> A -> D (C is flagged). A's open children are all flagged
     * now; B still has E free. */
    uint64_t idd = pick(t, D)->id;
    numbers(t, A, 2, 1, 1);
    numbers(t, B, 2, 1, 0);
    numbers(t, R, 2, 2, 0);
    /* 3rd: R -> B (A is flagged) -> E. Now B is flagged, and so is R. */
    uint64_t ide = pick(t, E)->id;
    numbers(t, B, 2, 1, 1);
    numbers(t, R, 2, 2, 1);
    pick_status(t, MT_PICK_WAIT); /* every candidate in flight */
    same_as_pass(t);

    /* D won for Black: 0/INF. A = C + D = 1+0 / min(1,INF) = 1, flagged
     * (its one open child, C, is in flight); B = 0+1 / min(INF,1) = 1,
     * flagged (E); R = min(1,1) = 1 / 1+1 = 2, flagged. No bound above D
     * changes: A (White to move) still has C. */
    answer(t, idd, ENG_WW, 0, 0);
    assert_int_equal(t->n[D].bound, ENG_WW);
    assert_int_equal(t->n[D].src, SRC_STORE);
    numbers(t, D, 0, MT_INF, 0);
    numbers(t, A, 1, 1, 1);
    numbers(t, B, 1, 1, 1);
    numbers(t, R, 1, 2, 1);
    assert_int_equal(t->n[A].bound, ENG_LW);
    same_as_pass(t);

    /* The check can fail: a wrong number is found and named. */
    t->n[A].pn += 5;
    char err[512] = "";
    assert_int_equal(mt_check_numbers(t, err, sizeof err), MT_ECORRUPT);
    assert_non_null(strstr(err, "1 of 6 nodes differ"));
    numbers(t, A, 1, 1, 1); /* the pass put it right */

    /* E lost for Black: INF/0. B (White to move) takes the better of
     * -WW = LL (to D) and -LL = WW (to E): WW for White, so Black's
     * question is answered no at B: INF/0, unflagged. R = min(1,INF) = 1
     * / 1+0 = 1, flagged (A is its one open child, and A is flagged). */
    answer(t, ide, ENG_LL, 0, 0);
    assert_int_equal(t->n[B].bound, ENG_WW);
    numbers(t, E, MT_INF, 0, 0);
    numbers(t, B, MT_INF, 0, 0);
    numbers(t, R, 1, 1, 1);
    assert_int_equal(t->n[R].bound, ENG_LW);
    pick_status(t, MT_PICK_WAIT);
    same_as_pass(t);

    /* C won for Black: A's children both win for Black, so A = LL for
     * White (0/INF), and R, which moves to A, is WW: 0/INF, the goal is
     * settled. */
    answer(t, idc, ENG_WW, 0, 0);
    assert_int_equal(t->n[A].bound, ENG_LL);
    assert_int_equal(t->n[R].bound, ENG_WW);
    numbers(t, A, 0, MT_INF, 0);
    numbers(t, R, 0, MT_INF, 0);
    assert_true(mt_done(t));
    pick_status(t, MT_PICK_DONE);
    same_as_pass(t);

    /* Backed up: the tree's own records for A, B and R, taken as written
     * (no store here), and nothing for what came from outside. */
    assert_int_equal(t->n[A].recorded, ENG_LL);
    assert_int_equal(t->n[B].recorded, ENG_WW);
    assert_int_equal(t->n[R].recorded, ENG_WW);
    assert_int_equal(t->n[A].src, SRC_BACKUP);
    assert_int_equal(t->n[R].src, SRC_BACKUP);
    mt_stats s;
    mt_stats_get(t, &s);
    assert_true(s.root_bound == ENG_WW && s.nodes == 6 && s.expanded == 3 && s.in_flight == 0);
    assert_true(s.jobs_done == 3 && s.jobs_proved == 3 && s.jobs_issued == 3);
    assert_int_equal(t->fallbacks, 0); /* every update was incremental */
    mt_close(t);
}

/*
 * An interior node shared by two parents, and provisional leaves
 * (threshold iteration, tree.h).
 *
 *            R (B)
 *          /      \
 *       X (W)      Y (W)
 *      /  |  \    /    \
 *  L1(B) L2(B) S(B)    L3(B)
 *             /   \
 *          T1(W)  T2(W)
 *
 * S counts in both X and Y: PN-search over a graph counts a shared
 * subtree twice (the DAG problem), which only steers selection.
 */
static void
test_shared_and_threshold(void **state)
{
    (void)state;
    enum { R, X, Y, L1, L2, S, L3, T1, T2 };
    mt_tree *t = mem_tree(BIG_BUDGET, NULL);
    add_nodes(t, "WWBBBBWW");
    kids(t, R, (uint32_t[]){X, Y}, 2);
    kids(t, X, (uint32_t[]){L1, L2, S}, 3);
    kids(t, Y, (uint32_t[]){S, L3}, 2);
    kids(t, S, (uint32_t[]){T1, T2}, 2);
    pass(t);
    /* S (OR) = min(1,1) = 1 / 1+1 = 2; X (AND) = 1+1+1 = 3 / min(1,1,2)
     * = 1; Y = 1+1 = 2 / min(2,1) = 1; R (OR) = min(3,2) = 2 / 1+1 = 2 */
    numbers(t, S, 1, 2, 0);
    numbers(t, X, 3, 1, 0);
    numbers(t, Y, 2, 1, 0);
    numbers(t, R, 2, 2, 0);
    assert_int_equal(mt_max_depth(t), 3);

    /* h = 100. T1's score for White is -150, +150 for Black: past h,
     * provisionally proven (0/INF); L3's is -150 for Black: provisionally
     * disproven (INF/0). S = min(0,1) = 0 / INF+1 = INF (saturated); X =
     * 1+1+0 = 2 / min(1,1,INF) = 1; Y = 0+INF = INF / min(INF,0) = 0; R =
     * min(2,INF) = 2 / 1+0 = 1. No bound moves: a heuristic is no proof. */
    t->h = 100;
    t->n[T1].score = -150;
    t->n[L3].score = -150;
    pass(t);
    numbers(t, T1, 0, MT_INF, 0);
    numbers(t, L3, MT_INF, 0, 0);
    numbers(t, S, 0, MT_INF, 0);
    numbers(t, X, 2, 1, 0);
    numbers(t, Y, MT_INF, 0, 0);
    numbers(t, R, 2, 1, 0);
    for (uint32_t i = 0; i < t->count; i++)
        assert_int_equal(t->n[i].bound, ENG_LW);

    /* Y is resolved (provisionally): the pick goes R -> X -> L1 (least dn,
     * first of a tie). Its job brings a score of +150 for Black: L1 is
     * provisionally proven, X = 0+1+0 = 1 / min(INF,1,INF) = 1. */
    uint64_t id = pick(t, L1)->id;
    answer(t, id, ENG_LW, 150, 1);
    assert_int_equal(t->n[L1].jobs, 1);
    assert_false(t->n[L1].expanded); /* its budget can still grow */
    numbers(t, L1, 0, MT_INF, 0);
    numbers(t, X, 1, 1, 0);
    numbers(t, R, 1, 1, 0);
    same_as_pass(t);
    /* Then L2, the same: X = 0/INF, and R = min(0,INF) = 0: the root is
     * resolved provisionally. */
    id = pick(t, L2)->id;
    answer(t, id, ENG_LW, 150, 1);
    numbers(t, X, 0, MT_INF, 0);
    numbers(t, R, 0, MT_INF, 0);
    same_as_pass(t);
    assert_false(mt_done(t)); /* numbers never settle the goal */

    /* So the next pick raises h to 200, where no score of 150 counts:
     * every number is back to the first pass's (R 2/2), and R -> Y (pn 2
     * against X's 3) -> L3 (dn 1 against S's 2). */
    pick(t, L3);
    assert_int_equal(t->h, 200);
    numbers(t, X, 3, 1, 0);
    numbers(t, Y, 2, 1, 0);
    numbers(t, R, 2, 2, 0);
    same_as_pass(t);
    assert_int_equal(t->fallbacks, 0);
    mt_close(t);
}

/*
 * LEAF NUMBERS (tree.h): an open leaf's numbers from its score, for the
 * question "does Black win" (a win needs +30): one more per 50.
 *
 *          R (B)
 *       /    |     \
 *    A (W)  B (W)  G (W)
 *    /   \    |
 *  C(B)  D(B) E(B)
 *
 * Scores, each for its side to move: C +130, D -70, E +30, G +80 (White's).
 * C: 130 - 30 = 100 above, dn 1 + 100/50 = 3: 1/3. D: 100 below: 3/1.
 * E: exactly what a win needs: 1/1. G: -80 for Black, 110 below: 3/1.
 * A (AND) = 1+3 = 4 / min(3,1) = 1; B = 1/1; R (OR) = min(4,1,3) = 1 /
 * 1+1+1 = 3.
 */
static void
test_leaf_numbers(void **state)
{
    (void)state;
    enum { R, A, B, G, C, D, E };
    mt_tree *t = mem_tree(BIG_BUDGET, NULL);
    t->leaf_step = MT_LEAF_STEP; /* numbers from the scores, one more per 50 */
    add_nodes(t, "WWWBBB");
    kids(t, R, (uint32_t[]){A, B, G}, 3);
    kids(t, A, (uint32_t[]){C, D}, 2);
    kids(t, B, (uint32_t[]){E}, 1);
    t->n[C].score = 130;
    t->n[D].score = -70;
    t->n[E].score = 30;
    t->n[G].score = 80;
    pass(t);
    numbers(t, C, 1, 3, 0);
    numbers(t, D, 3, 1, 0);
    numbers(t, E, 1, 1, 0);
    numbers(t, G, 3, 1, 0);
    numbers(t, A, 4, 1, 0);
    numbers(t, B, 1, 1, 0);
    numbers(t, R, 1, 3, 0);

    /* The pick follows the numbers: R -> B (pn 1) -> E. Its job leaves E
     * open with a score of -20: 50 below, 2/1; B = 2/1, R = min(4,2,3) =
     * 2 / 3, and the incremental update agrees with a whole pass. */
    uint64_t id = pick(t, E)->id;
    answer(t, id, ENG_LW, -20, 1);
    numbers(t, E, 2, 1, 0);
    numbers(t, B, 2, 1, 0);
    numbers(t, R, 2, 3, 0);
    same_as_pass(t);

    /* Numbers never pass MT_LEAF_MAX: C at +32000 is 1/MT_LEAF_MAX. */
    t->n[C].score = 32000;
    pass(t);
    numbers(t, C, 1, MT_LEAF_MAX, 0);
    numbers(t, A, 1 + 3, 1, 0);

    /* "Does Black at least draw" needs -30: D (-70) is 40 below, 1 + 40/50
     * = 1: 1/1; E (-20) is 10 above: 1/1; C +32000 capped as before. */
    t->q.target = ENG_DRAW;
    pass(t);
    numbers(t, D, 1, 1, 0);
    numbers(t, E, 1, 1, 0);
    numbers(t, C, 1, MT_LEAF_MAX, 0);

    /* A step of 20: D, 40 below, is 1 + 40/20 = 3/1. Uniform (0): every
     * open leaf 1/1, A = 2/1, R = 1/3. */
    char err[256] = "";
    ok(mt_set_leaf_step(t, 20, err, sizeof err), "mt_set_leaf_step", err);
    numbers(t, D, 3, 1, 0);
    ok(mt_set_leaf_step(t, 0, err, sizeof err), "mt_set_leaf_step", err);
    numbers(t, C, 1, 1, 0);
    numbers(t, D, 1, 1, 0);
    numbers(t, A, 2, 1, 0);
    numbers(t, R, 1, 3, 0);
    same_as_pass(t);
    mt_close(t);
}

/*
 * A cycle: P and Q lead to each other (kings can repeat a position).
 *
 *   R (B) -> P (W) -> Q (B) -> P
 *            P (W) -> Z (B)
 *
 * A repetition scores nothing (tree.h, WHY CYCLES CANNOT MAKE A WRONG
 * BOUND); selection does not go round the cycle: Q, whose only child is
 * on the path, is itself the job; and an update through the cycle ends.
 */
static void
test_cycle(void **state)
{
    (void)state;
    enum { R, P, Q, Z };
    mt_tree *t = mem_tree(BIG_BUDGET, NULL);
    add_nodes(t, "WBB");
    kids(t, R, (uint32_t[]){P}, 1);
    kids(t, P, (uint32_t[]){Q, Z}, 2);
    kids(t, Q, (uint32_t[]){P}, 1);
    pass(t);
    assert_true(t->cycles);
    /* The pass reaches P again from Q while P is on its stack, and takes
     * P's numbers as they were (1/1, a new node's): Q = 1/1. Then P (AND)
     * = Q + Z = 2 / 1, and R = 2/1. */
    numbers(t, Q, 1, 1, 0);
    numbers(t, P, 2, 1, 0);
    numbers(t, R, 2, 1, 0);
    assert_int_equal(t->n[P].bound, ENG_LW); /* no draw by repetition */
    assert_int_equal(t->n[Q].bound, ENG_LW);
    assert_int_equal(mt_max_depth(t), 2);

    /* R -> P -> Q (a tie with Z at dn 1, Q first); Q's one child, P, is on
     * the path: Q is the job, though it is expanded. Its flag changes its
     * numbers, and round the cycle they climb (Q's pn is P's, P's is Q's
     * + 1, ...) until the update's budget runs out and one pass settles
     * them (tree.h, NUMBERS AFTER A RESULT). */
    uint64_t fallbacks = t->fallbacks;
    uint64_t idq = pick(t, Q)->id;
    assert_int_equal(t->fallbacks, fallbacks + 1);
    assert_int_equal(t->n[Q].flagged, 1);
    assert_int_equal(t->n[P].flagged, 0); /* Z is still free */
    uint64_t idz = pick(t, Z)->id;
    assert_int_equal(t->n[P].flagged, 1);
    assert_int_equal(t->n[R].flagged, 1);
    pick_status(t, MT_PICK_WAIT);

    /* With a cycle only bounds have one right value: a wrong number is
     * not a difference, a wrong bound is. */
    t->n[Q].pn = 7;
    char err[512] = "";
    assert_int_equal(mt_check_numbers(t, err, sizeof err), 0);
    t->n[Z].bound = ENG_DD;
    assert_int_equal(mt_check_numbers(t, err, sizeof err), MT_ECORRUPT);
    assert_non_null(strstr(err, "1 of 4 nodes differ"));
    assert_int_equal(t->n[Z].bound, ENG_LW);

    /* Z's job proves nothing: it stays an open leaf (its budget grows). */
    answer(t, idz, ENG_LW, 0, 0);
    assert_false(t->n[Z].expanded);
    assert_int_equal(t->n[R].bound, ENG_LW);
    same_as_pass(t);

    /* Q won for Black: P, whose one escape from Q's win is Z, still open,
     * is not lost... */
    answer(t, idq, ENG_WW, 0, 0);
    assert_int_equal(t->n[Q].bound, ENG_WW);
    numbers(t, Q, 0, MT_INF, 0);
    assert_int_equal(t->n[P].bound, ENG_LW);
    /* P = Q + Z = 0+1 = 1 / min(INF,1) = 1; R = 1/1 */
    numbers(t, P, 1, 1, 0);
    numbers(t, R, 1, 1, 0);
    same_as_pass(t);
    /* ...until Z is won for Black too: P = LL, R = WW, through the cycle
     * (P's parents are R and Q) and out. */
    uint64_t id = pick(t, Z)->id;
    answer(t, id, ENG_WW, 0, 0);
    assert_int_equal(t->n[P].bound, ENG_LL);
    assert_int_equal(t->n[R].bound, ENG_WW);
    assert_int_equal(t->n[Q].bound, ENG_WW);
    numbers(t, R, 0, MT_INF, 0);
    assert_true(mt_done(t));
    assert_int_equal(t->n[R].recorded, ENG_WW);
    assert_int_equal(t->n[P].recorded, ENG_LL);
    same_as_pass(t);
    mt_close(t);
}

/*
 * Real moves, in memory: White to move captures Black's last man
 * (22x15), and Black, with no piece, has no move. One job on the root
 * comes back with nothing; with no budget to grow (job_max_ms = job_ms)
 * the root is expanded by its legal moves: one child, lost (no move), so
 * the root is won for White, the side to move.
 */
static void
test_real_capture(void **state)
{
    (void)state;
    mt_tree *t = mem_tree(1000, "W:W22:B18");
    assert_int_equal(t->q.attacker, ENG_WHITE);
    uint64_t id = pick(t, 0)->id;
    answer(t, id, ENG_LW, 0, 0);
    assert_int_equal(t->count, 2);
    assert_int_equal(t->n[0].nkid, 1);
    assert_int_equal(t->n[1].src, SRC_END);
    assert_int_equal(t->n[1].bound, ENG_LL);
    assert_int_equal(t->n[0].bound, ENG_WW);
    numbers(t, 0, 0, MT_INF, 0);
    assert_true(mt_done(t));
    same_as_pass(t);
    mt_close(t);
}

/*
 * A tree of real positions grown in memory: 3 men a side, far from
 * promotion, so no king (and no cycle) appears for many plies and every
 * number must agree with a whole pass. Each job comes back with nothing
 * and expands its leaf; some jobs stay in flight across others, so that
 * flags are tested too.
 */
static void
test_growth(void **state)
{
    (void)state;
    char err[512];
    mt_tree *t = mem_tree(1000, "B:W21,22,23:B9,10,11");
    int jobs = test_sanitized() ? 60 : 300;
    uint64_t held[2] = {0, 0}; /* jobs kept in flight a while */
    uint64_t s = 0x9e3779b97f4a7c15u;
    int done = 0;
    for (int k = 0; k < jobs; k++) {
        mt_job j;
        int rc = mt_pick(t, &j, err, sizeof err);
        assert_true(rc >= 0);
        if (rc == MT_PICK_DONE)
            break;
        if (rc == MT_PICK_WAIT) { /* every leaf in flight: answer one */
            assert_true(held[0] || held[1]);
            int h = held[0] ? 0 : 1;
            answer(t, held[h], ENG_LW, 0, 0);
            held[h] = 0;
        } else if (!held[k % 2] && test_rnd(&s) % 4 == 0) {
            held[k % 2] = j.id;
        } else {
            answer(t, j.id, ENG_LW, 0, 0);
        }
        done++;
        if (mt_check_numbers(t, err, sizeof err)) {
            fprintf(stderr, "after job %d: %s\n", done, err);
            fail();
        }
        assert_false(t->cycles);
    }
    mt_stats st;
    mt_stats_get(t, &st);
    assert_true(st.nodes > (uint64_t)jobs); /* it grew */
    assert_true(st.expanded > 0);
    mt_close(t);
}

/*
 * IDLE WORKERS (tree.h): with the root the only leaf and its job in
 * flight, a second worker asking for work gets one of the root's
 * children (the root is expanded early), not a wait. The root stays a job
 * of its own (THE ROOT'S OWN JOBS): when its job comes back open, the
 * next pick gives it again with double the budget, past the cap, while
 * its jobs have had at most twice the others' time; else a job below it.
 */
static void
test_early_expansion(void **state)
{
    (void)state;
    char err[512];
    mt_tree *t = mem_tree(4000, "B:W21,22,23:B9,10,11");
    mt_job j;
    assert_int_equal(mt_pick(t, &j, err, sizeof err), MT_PICK_JOB);
    assert_true(eng_equal(&j.pos, &t->n[0].pos));
    assert_int_equal(j.time_ms, 1000);
    uint64_t root_job = j.id;
    assert_false(t->n[0].expanded);
    /* a second worker: the root is expanded early, a child is its job */
    assert_int_equal(mt_pick(t, &j, err, sizeof err), MT_PICK_JOB);
    assert_false(eng_equal(&j.pos, &t->n[0].pos));
    assert_int_equal(j.time_ms, 1000);
    assert_true(t->n[0].expanded && t->n[0].early);
    assert_int_equal(t->widened, 1);
    same_as_pass(t);
    uint64_t child_job = j.id;
    /* both come back open: the root again, with 2000 ms */
    answer(t, child_job, ENG_LW, 0, 0);
    answer(t, root_job, ENG_LW, 0, 0);
    same_as_pass(t);
    assert_int_equal(mt_pick(t, &j, err, sizeof err), MT_PICK_JOB);
    assert_true(eng_equal(&j.pos, &t->n[0].pos));
    assert_int_equal(j.time_ms, 2000);
    answer(t, j.id, ENG_LW, 0, 0);
    same_as_pass(t);
    /* the root has had twice the others' time (10 ms against 5 in this
     * tree's answers): still its turn, 4000 ms */
    assert_int_equal(mt_pick(t, &j, err, sizeof err), MT_PICK_JOB);
    assert_true(eng_equal(&j.pos, &t->n[0].pos));
    assert_int_equal(j.time_ms, 4000);
    answer(t, j.id, ENG_LW, 0, 0);
    /* more than twice (15 against 5): a job below it first (THE ROOT'S
     * OWN JOBS) */
    assert_int_equal(mt_pick(t, &j, err, sizeof err), MT_PICK_JOB);
    assert_false(eng_equal(&j.pos, &t->n[0].pos));
    answer(t, j.id, ENG_LW, 0, 0);
    /* then the root's again, doubling past the cap of 4000 ms */
    uint32_t want[] = {8000, 16000, 32000};
    for (int k = 0; k < 3; k++) {
        for (int n = 0; n < 20; n++) {
            assert_int_equal(mt_pick(t, &j, err, sizeof err), MT_PICK_JOB);
            if (eng_equal(&j.pos, &t->n[0].pos))
                break;
            answer(t, j.id, ENG_LW, 0, 0);
        }
        assert_true(eng_equal(&j.pos, &t->n[0].pos));
        assert_int_equal(j.time_ms, want[k]);
        answer(t, j.id, ENG_LW, 0, 0);
        assert_true(t->n[0].early);
        same_as_pass(t);
    }
    same_as_pass(t);
    mt_close(t);
}

/* ---- the change set (tree_int.h, THE CHANGE SET) ---------------------------
 * The graph driven by facts alone (mtg_pick, mtg_result, mtg_expand,
 * mtg_child_scores), and what it leaves for its caller to keep read from
 * t->chg before anything applies it. */

#define FEN3 "B:W21,22,23:B9,10,11" /* Black to move, six moves, no capture */

/* Nothing is waiting in the change set. */
static void
chg_empty(const mt_tree *t)
{
    const mtg_changes *c = &t->chg;
    assert_int_equal(c->nnode + c->nissued + c->nanswered + c->backup.n, 0);
    assert_false(c->state);
}

/* The scores a worker sends for the n children: base + move index. */
static void
kid_scores(int16_t *sc, int n, int base)
{
    for (int m = 0; m < n; m++)
        sc[m] = (int16_t)(base + m);
}

/* Facts for n new children: nothing known of any. */
static void
no_facts(mtg_own *own, int n)
{
    for (int m = 0; m < n; m++)
        own[m] = (mtg_own){ENG_LW, ENG_LW, SRC_NONE};
}

/*
 * A job issued, answered open at its budget's cap with the worker's
 * scores, the children brought as facts (one of them a stored loss for
 * its mover): the change set holds the issued job, then the answered job
 * and the node, then the root and each new child once, and exactly one
 * record to back up - the root's win, whose move is the one to the lost
 * child. The children take the worker's scores.
 */
static void
test_changes_result_expand(void **state)
{
    (void)state;
    char err[512] = "";
    mt_tree *t = mem_tree(1000, FEN3); /* no budget to grow: a result expands */
    const mtg_changes *c = &t->chg;
    chg_empty(t);
    mt_job j;
    uint32_t x;
    assert_int_equal(mtg_pick(t, &j, &x, err, sizeof err), MT_PICK_JOB);
    assert_int_equal(c->nissued, 1);
    assert_int_equal(c->issued[0].id, j.id);
    assert_int_equal(c->issued[0].node, 0);
    assert_true(c->state); /* next_job moved on */
    assert_int_equal(c->nnode + c->backup.n, 0);
    mtg_changes_clear(t); /* as mts_apply leaves it */

    eng_movelist ml;
    int n = eng_generate(&t->n[0].pos, &ml, ENG_DUPS_MERGE);
    assert_int_equal(n, 6);
    int16_t sc[MT_SCORES_MAX];
    kid_scores(sc, n, 100);
    mtg_result_fact f = {ENG_LW, 0, 40, 6, 10, 5, sc, (size_t)n};
    assert_int_equal(mtg_result(t, mtg_job_find(t, j.id), &f, err, sizeof err), MTG_EXPAND);
    assert_null(mtg_job_find(t, j.id));
    assert_int_equal(c->nanswered, 1);
    assert_int_equal(c->answered[0], j.id);
    assert_int_equal(c->nnode, 1); /* its counters and score */
    assert_int_equal(c->node[0], 0);
    assert_int_equal(t->n[0].score, 40);
    assert_int_equal(t->n[0].jobs, 1);
    assert_false(t->n[0].expanded); /* the caller brings the children */
    assert_int_equal(t->count, 1);
    assert_int_equal(t->n[0].nkscore, n); /* kept until then */

    mtg_own own[ENG_MAX_MOVES];
    no_facts(own, n);
    own[2] = (mtg_own){ENG_LL, ENG_LL, SRC_STORE}; /* its mover (White) loses */
    ok(mtg_expand(t, 0, own, n, 0, err, sizeof err), "mtg_expand", err);
    assert_int_equal(t->count, 1 + n);
    assert_int_equal(c->nnode, 1 + n); /* the root and each new child, once */
    for (int m = 0; m < n; m++) {
        const mt_node *k = &t->n[t->n[0].kid[m]];
        assert_int_equal(k->score, 100 + m); /* the worker's, not the manager's */
        assert_int_equal(k->depth, MT_SCORE_DEPTH);
        assert_true(k->dirty);
    }
    assert_null(t->n[0].kscore);
    assert_int_equal(t->n[t->n[0].kid[2]].src, SRC_STORE);
    assert_int_equal(t->n[0].bound, ENG_WW);
    assert_true(mt_done(t));
    /* one record: the root's win, by the move to the lost child (the
     * child's own proof is the store's already) */
    assert_int_equal(c->backup.n, 1);
    assert_true(eng_equal(&c->backup.v[0].pos, &t->n[0].pos));
    assert_int_equal(c->backup.v[0].rec.bound, ENG_WW);
    pst_move w = pst_move_of(&ml.m[2]);
    assert_int_equal(c->backup.v[0].rec.win.from, w.from);
    assert_int_equal(c->backup.v[0].rec.win.to, w.to);
    assert_int_equal(t->n[0].recorded, ENG_WW);
    assert_int_equal(t->n[0].src, SRC_BACKUP);
    /* applied (in memory: nothing written), the set is empty again */
    ok(mts_apply(t, err, sizeof err), "mts_apply", err);
    chg_empty(t);
    for (uint32_t i = 0; i < t->count; i++)
        assert_true(!t->n[i].dirty && !t->n[i].bslot);
    same_as_pass(t);
    mt_close(t);
}

/*
 * A transposition, D below both A and B, proved by a job: the change set
 * names only D among the nodes (bounds are not stored in "nodes"), and
 * backs up exactly the three nodes above it whose bounds D settles, each
 * once; D's own record is the job's, admitted already, so it is not
 * backed up again.
 *
 *      R (B)
 *     /     \
 *   A (W)   B (W)
 *     \     /
 *      D (B)
 */
static void
test_changes_transposition(void **state)
{
    (void)state;
    enum { R, A, B, D };
    char err[512] = "";
    mt_tree *t = mem_tree(BIG_BUDGET, NULL);
    add_nodes(t, "WWB");
    kids(t, R, (uint32_t[]){A, B}, 2);
    kids(t, A, (uint32_t[]){D}, 1);
    kids(t, B, (uint32_t[]){D}, 1);
    pass(t);
    mtg_changes_clear(t);
    const mtg_changes *c = &t->chg;
    mt_job j;
    uint32_t x;
    assert_int_equal(mtg_pick(t, &j, &x, err, sizeof err), MT_PICK_JOB);
    assert_int_equal(c->issued[0].node, D);
    assert_int_equal(mtg_pick(t, &j, &x, err, sizeof err), MT_PICK_WAIT); /* D is the only leaf */
    mtg_changes_clear(t);
    mtg_result_fact f = {ENG_WW, 1, 0, 0, 10, 5, NULL, 0}; /* the store: D won for Black */
    ok(mtg_result(t, mtg_job_find(t, j.id), &f, err, sizeof err), "mtg_result", err);
    assert_int_equal(c->nnode, 1);
    assert_int_equal(c->node[0], D);
    assert_int_equal(t->n[D].recorded, ENG_WW);
    assert_int_equal(c->backup.n, 3);
    int seen[4] = {0, 0, 0, 0};
    for (size_t k = 0; k < c->backup.n; k++) {
        long i = mtg_find(t, &c->backup.v[k].pos);
        assert_true(i == R || i == A || i == B);
        seen[i]++;
        assert_int_equal(c->backup.v[k].rec.bound, i == R ? ENG_WW : ENG_LL);
    }
    assert_true(seen[R] == 1 && seen[A] == 1 && seen[B] == 1);
    assert_true(mt_done(t));
    /* a whole pass finds nothing new to back up */
    uint64_t pushed = c->pushed;
    pass(t);
    assert_int_equal(c->pushed, pushed);
    assert_int_equal(c->backup.n, 3);
    mt_close(t);
}

/*
 * A node's record backed up twice before the set is applied: the set
 * holds its latest only. Two jobs in flight come back one after the
 * other: C at least drawn for Black makes R at least a draw, then E won
 * for Black makes R a win.
 *
 *      R (B)
 *     /     \
 *   A (W)   B (W)
 *    |       |
 *   C (B)   E (B)
 */
static void
test_changes_latest_record(void **state)
{
    (void)state;
    enum { R, A, B, C, E };
    char err[512] = "";
    mt_tree *t = mem_tree(BIG_BUDGET, NULL);
    add_nodes(t, "WWBB");
    kids(t, R, (uint32_t[]){A, B}, 2);
    kids(t, A, (uint32_t[]){C}, 1);
    kids(t, B, (uint32_t[]){E}, 1);
    pass(t);
    mtg_changes_clear(t);
    const mtg_changes *c = &t->chg;
    mt_job jc, je;
    uint32_t x;
    assert_int_equal(mtg_pick(t, &jc, &x, err, sizeof err), MT_PICK_JOB);
    assert_int_equal(mtg_pick(t, &je, &x, err, sizeof err), MT_PICK_JOB);
    assert_int_equal(c->nissued, 2);
    assert_int_equal(c->issued[0].node, C); /* the first of a tie */
    assert_int_equal(c->issued[1].node, E);
    mtg_result_fact f = {ENG_DW, 0, 0, 0, 10, 5, NULL, 0};
    ok(mtg_result(t, mtg_job_find(t, jc.id), &f, err, sizeof err), "mtg_result", err);
    assert_int_equal(t->n[R].bound, ENG_DW);
    size_t before = c->backup.n; /* A and R */
    assert_int_equal(before, 2);
    f.bound = ENG_WW;
    f.settled = 1;
    ok(mtg_result(t, mtg_job_find(t, je.id), &f, err, sizeof err), "mtg_result", err);
    assert_int_equal(t->n[R].bound, ENG_WW);
    assert_int_equal(c->backup.n, 3); /* B added; R's record replaced */
    int rs = 0;
    for (size_t k = 0; k < c->backup.n; k++)
        if (mtg_find(t, &c->backup.v[k].pos) == R) {
            rs++;
            assert_int_equal(c->backup.v[k].rec.bound, ENG_WW);
        }
    assert_int_equal(rs, 1);
    assert_int_equal(c->nanswered, 2);
    mt_close(t);
}

/*
 * SCORES (tree.h): a worker's scores for a node's children are kept with
 * the node across a result that does not expand it, and an early
 * expansion for an idle worker (IDLE WORKERS) gives them to the children.
 */
static void
test_changes_scores_kept(void **state)
{
    (void)state;
    char err[512] = "";
    mt_tree *t = mem_tree(BIG_BUDGET, FEN3); /* the root's budget grows: no expansion */
    eng_movelist ml;
    int n = eng_generate(&t->n[0].pos, &ml, ENG_DUPS_MERGE);
    int16_t sc[MT_SCORES_MAX];
    kid_scores(sc, n, 300);
    mt_job j;
    uint32_t x;
    assert_int_equal(mtg_pick(t, &j, &x, err, sizeof err), MT_PICK_JOB);
    mtg_result_fact f = {ENG_LW, 0, 0, 0, 10, 5, sc, (size_t)n};
    ok(mtg_result(t, mtg_job_find(t, j.id), &f, err, sizeof err), "mtg_result", err);
    assert_false(t->n[0].expanded);
    assert_int_equal(t->n[0].nkscore, n);
    mtg_changes_clear(t);
    /* its next job in flight, a second worker asks: the root is to be
     * expanded early */
    assert_int_equal(mtg_pick(t, &j, &x, err, sizeof err), MT_PICK_JOB);
    assert_int_equal(mtg_pick(t, &j, &x, err, sizeof err), MTG_EXPAND);
    assert_int_equal(x, 0);
    mtg_own own[ENG_MAX_MOVES];
    no_facts(own, n);
    ok(mtg_expand(t, 0, own, n, 1, err, sizeof err), "mtg_expand", err);
    assert_true(t->n[0].early);
    assert_int_equal(t->widened, 1);
    for (int m = 0; m < n; m++) {
        assert_int_equal(t->n[t->n[0].kid[m]].score, 300 + m);
        assert_int_equal(t->n[t->n[0].kid[m]].depth, MT_SCORE_DEPTH);
    }
    same_as_pass(t);
    mt_close(t);
}

/*
 * SCORES (tree.h): an early expansion before any result scores the
 * children statically (depth 0); the root's result then gives each its
 * worker's score (and each enters the change set); later scores do not
 * replace searched ones.
 */
static void
test_changes_scores_early(void **state)
{
    (void)state;
    char err[512] = "";
    mt_tree *t = mem_tree(BIG_BUDGET, FEN3);
    eng_movelist ml;
    int n = eng_generate(&t->n[0].pos, &ml, ENG_DUPS_MERGE);
    mt_job j;
    uint32_t x;
    assert_int_equal(mtg_pick(t, &j, &x, err, sizeof err), MT_PICK_JOB);
    uint64_t root_job = j.id;
    assert_int_equal(mtg_pick(t, &j, &x, err, sizeof err), MTG_EXPAND);
    mtg_own own[ENG_MAX_MOVES];
    no_facts(own, n);
    ok(mtg_expand(t, 0, own, n, 1, err, sizeof err), "mtg_expand", err);
    for (int m = 0; m < n; m++) {
        const mt_node *k = &t->n[t->n[0].kid[m]];
        assert_int_equal(k->score, ab_eval(&k->pos)); /* static: no search */
        assert_int_equal(k->depth, 0);
    }
    mtg_changes_clear(t);
    int16_t sc[MT_SCORES_MAX];
    kid_scores(sc, n, 500);
    mtg_result_fact f = {ENG_LW, 0, 0, 0, 10, 5, sc, (size_t)n};
    ok(mtg_result(t, mtg_job_find(t, root_job), &f, err, sizeof err), "mtg_result", err);
    for (int m = 0; m < n; m++) {
        const mt_node *k = &t->n[t->n[0].kid[m]];
        assert_int_equal(k->score, 500 + m);
        assert_int_equal(k->depth, MT_SCORE_DEPTH);
        assert_true(k->dirty); /* its score is stored with it */
    }
    same_as_pass(t);
    kid_scores(sc, n, 700);
    ok(mtg_child_scores(t, 0, sc, (size_t)n, err, sizeof err), "mtg_child_scores", err);
    for (int m = 0; m < n; m++)
        assert_int_equal(t->n[t->n[0].kid[m]].score, 500 + m);
    mt_close(t);
}

/*
 * A result whose bound contradicts the node's own (the store proved a
 * loss where the databases say win): refused with MT_ESTORE naming it,
 * and the node and the change set are left as they were.
 */
static void
test_changes_contradiction(void **state)
{
    (void)state;
    enum { R, A };
    char err[512] = "";
    mt_tree *t = mem_tree(BIG_BUDGET, NULL);
    add_nodes(t, "W");
    kids(t, R, (uint32_t[]){A}, 1);
    t->n[A].own = t->n[A].bound = ENG_WW;
    t->n[A].src = SRC_DB;
    t->n[A].recorded = ENG_LW;
    pass(t);
    mtg_changes_clear(t);
    mt_jobrec *j = mtg_job_add(t, 77, A, t->q, 1);
    assert_non_null(j);
    mtg_result_fact f = {ENG_LL, 1, 0, 0, 10, 5, NULL, 0};
    assert_int_equal(mtg_result(t, j, &f, err, sizeof err), MT_ESTORE);
    assert_non_null(strstr(err, "contradicts"));
    assert_int_equal(t->n[A].bound, ENG_WW);
    chg_empty(t);
    mt_close(t);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_transposition),
        cmocka_unit_test(test_shared_and_threshold),
        cmocka_unit_test(test_cycle),
        cmocka_unit_test(test_real_capture),
        cmocka_unit_test(test_growth),
        cmocka_unit_test(test_early_expansion),
        cmocka_unit_test(test_leaf_numbers),
        cmocka_unit_test(test_changes_result_expand),
        cmocka_unit_test(test_changes_transposition),
        cmocka_unit_test(test_changes_scores_kept),
        cmocka_unit_test(test_changes_scores_early),
        cmocka_unit_test(test_changes_contradiction),
        cmocka_unit_test(test_changes_latest_record),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
