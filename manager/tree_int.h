/*
 * tree_int.h - inside the proof tree (tree.h is the manual): the three
 * parts the tree is made of, the types they share and the calls between
 * them. Only manager/tree_*.c and the graph's unit tests include this
 * header; everything else goes through tree.h.
 *
 * THE PARTS (each calls only the parts listed before it)
 *   tree_graph.c  the PN graph, PURE: goals and questions, the node
 *                 table, expansion (children and parents), evaluation
 *                 (bounds, proof and disproof numbers, flags), the pass
 *                 and the incremental update, the numbers check, picking
 *                 jobs, what a result does to the graph, the tree's
 *                 backed-up records, stats, walks and lookups. It takes
 *                 FACTS in (a result's bound and counters, the own bounds
 *                 of a node's new children, a worker's scores for a
 *                 node's children, the root's own bound) and leaves what
 *                 must be kept in its CHANGE SET (below). No I/O, no
 *                 LMDB, no store, no databases, no clock, no alpha-beta:
 *                 the only evaluation it runs is ab_eval, the static
 *                 evaluation (a pure function of the position), for a
 *                 node no worker has scored yet.
 *   tree_proof.c  where the tree meets the proof store and the databases:
 *                 a position's own bound (no move, databases, store), the
 *                 facts of a node's new children (mtp_expand) and the seed
 *                 line, the admission of the tree's backed-up records and
 *                 of a worker's result, the check of the settled root
 *                 (mt_check_root). Calls the graph.
 *   tree_lmdb.c   persistence: the tree's own LMDB environment
 *                 (<state>/tree): meta, the node and job encodings, the
 *                 write of a change set in one transaction (mts_apply),
 *                 open, create and load (mt_open_ro too, and the guard
 *                 against damaged files), the tie between the tree and
 *                 its proof store (STORE AND TREE), the history samples,
 *                 mt_info*, mt_store_check. Calls the graph and the proof
 *                 part.
 *   tree.c        the driver: the calls of tree.h that change the tree
 *                 (mt_pick, mt_result, mt_release*, mt_child_scores,
 *                 mt_set_leaf_step, mt_check_numbers): each gives the
 *                 graph its facts, brings the children it asks for, and
 *                 applies the change set it leaves. Calls all three.
 *
 * THE CHANGE SET (mtg_changes, t->chg)
 *   Every call into the graph that changes it appends to t->chg what the
 *   caller must keep: the nodes whose stored fields changed (each once:
 *   mt_node.dirty), the jobs issued (to "jobs") and answered (dropped
 *   from "jobs"), the records to back up (each node once, its latest:
 *   mt_node.bslot), and whether the counters, question or h changed
 *   (meta). Jobs to cancel are not in it: which jobs in flight a change
 *   left unwanted is a pure question the manager asks of the graph after
 *   every result (mt_job_wanted, manager.c UNWANTED JOBS). The driver
 *   applies it with mts_apply: the tree's writes in one
 *   transaction, then the backed-up records admitted into the store
 *   (mtp_admit_backups), then the set is emptied. A node is taken as
 *   recorded when its record enters the set: if the set is not applied
 *   (a full disk, a refusal), the run stops, and the next open reads the
 *   records back from the store.
 *   A graph call that needs a node's children (a job at its cap left the
 *   leaf open; an idle worker and every leaf in flight) does not make
 *   them: mtg_result and mtg_pick say which node (MTG_EXPAND), and the
 *   driver brings the children's facts (mtp_expand -> mtg_expand).
 *
 * WHY THE SPLIT IS WHERE IT IS
 *   The graph carries the invariants that are easy to break and hard to
 *   see broken (numbers after an update equal a pass, flags, cycles), so
 *   it is the part unit-tested on its own, on graphs built by hand: it
 *   must run with no file, no store and no databases. Persistence is
 *   where disks fill and files are damaged; it knows the node's bytes and
 *   nothing of PN-search. The proof part is every place a bound enters
 *   the tree from outside or leaves it for the store: what can be trusted
 *   is decided there and nowhere else.
 *   The proof part stays in manager/ rather than prover/: it reads and
 *   writes the tree's nodes (own, recorded, src) around admission, and
 *   prover/ is built before manager/ and sees none of its types. What
 *   checks records as proofs, the same for every caller (a worker's
 *   batch, the tree's backups, `proof check`), is prover/admit.c and
 *   prover/check.c already.
 *
 * THE IN-MEMORY TREE (tests)
 *   mtg_open_mem makes a tree with no LMDB environment, no proof store
 *   and no databases: mts_apply keeps nothing, a node's own bound comes
 *   only from having no move (a loss), and backed-up records are taken
 *   as recorded without admission (there is no store to write them to).
 *   Everything else is the code a real tree runs. The graph's unit tests
 *   (tests/test_manager_graph.c) build graphs on it by hand (mtg_add,
 *   mtg_set_kids, the node fields), feed it facts (mtg_result,
 *   mtg_expand, mtg_child_scores, mtg_pick) and read its change set;
 *   the driver's mt_pick and mtd_take run the same graph with the
 *   in-memory mts_apply (mt_result admits records: it needs a store).
 *
 * THREADS
 *   None: a tree is used by one thread (the manager's event loop).
 */
#ifndef MANAGER_TREE_INT_H
#define MANAGER_TREE_INT_H

#include <stddef.h>
#include <stdint.h>

#include "manager/tree.h"
#include "prover/admit.h"
#include "prover/search.h"

/* ---- constants ------------------------------------------------------ */

#define MT_KEY 17 /* a node's key: its exact position (pos_key) */

/* Where a node's own bound comes from (mt_view.source). */
/* SRC_PARTIAL: own is a partial database's bound (prover/leaf.h); unlike
 * SRC_DB the node may still be expanded and proven, since the bound
 * answers only some questions. */
enum {
    SRC_NONE = '-',
    SRC_DB = 'd',
    SRC_END = 't',
    SRC_STORE = 's',
    SRC_BACKUP = 'b',
    SRC_PARTIAL = 'p'
};

/* ---- types ---------------------------------------------------------- */

typedef struct mt_node {
    eng_pos pos;
    uint32_t *kid; /* children, in eng_generate (merged) order */
    uint32_t *par; /* parents (every node that has it as a child) */
    uint32_t npar, cappar;
    uint16_t nkid;
    uint8_t expanded, inflight, flagged, onstack, onpath, queued, src;
    uint8_t early;      /* expanded while a job on it was in flight: its own jobs
                           go on, growing, until the cap (tree.h, IDLE WORKERS;
                           not persisted) */
    eng_bound own;      /* from proofs outside the tree */
    eng_bound bound;    /* own intersected with the backup */
    eng_bound recorded; /* what the store holds for it (LW: nothing) */
    int16_t score;
    uint16_t depth;
    uint32_t jobs, job_ms, seq, epoch;
    uint32_t worker;  /* who had its last job (mt_given; not persisted) */
    int16_t *kscore;  /* a worker's scores for its children, kept until it is
                         expanded (mtg_child_scores; not persisted: the next
                         result that leaves it open brings them again) */
    uint16_t nkscore; /* how many (its number of moves), 0: none */
    uint8_t dirty;    /* in the change set's nodes (THE CHANGE SET) */
    uint32_t bslot;   /* its record's place in the change set's backups + 1 */
    uint64_t won_at;  /* when its bound became a win or a loss (WIN MOVES) */
    uint64_t job_nodes, pn, dn;
} mt_node;

typedef struct mt_jobrec {
    uint64_t id;
    uint32_t node;
    eng_question q;
    int live;    /* in flight in this run */
    uint32_t ms; /* its time budget (0: issued before this run) */
    int other;   /* the root's other question (tree.h, THE ROOT'S OTHER
                    QUESTION): it leaves the root's own flags and counters */
} mt_jobrec;

/* What the graph leaves for its caller to keep (THE CHANGE SET). */
typedef struct mtg_changes {
    uint32_t *node; /* nodes whose stored fields changed ("nodes") */
    size_t nnode, capnode;
    mt_jobrec *issued; /* jobs issued (to "jobs") */
    size_t nissued, capissued;
    uint64_t *answered; /* jobs answered (dropped from "jobs") */
    size_t nanswered, capanswered;
    padm_items backup; /* records to back up, admitted (mtp_admit_backups) */
    uint64_t pushed;   /* records entered, over the set's life (the pass's rounds) */
    int state;         /* the counters, question or h changed (meta) */
    int oom;           /* memory ran out while it was filled: MT_ENOMEM */
} mtg_changes;

/* A position's own bound from outside the tree (tree.h, WHAT IS PROVEN):
 * a fact the graph takes for a new node (mtp_own_of computes it). */
typedef struct mtg_own {
    eng_bound own;      /* ENG_LW: nothing known */
    eng_bound recorded; /* what the store holds for it (ENG_LW: nothing) */
    uint8_t src;        /* SRC_* */
} mtg_own;

/* mtg_result and mtg_pick: the graph needs node *expand's children. */
#define MTG_EXPAND 3

/* The tree's LMDB environment and tables (tree_lmdb.c). */
typedef struct mts_env mts_env;

struct mt_tree {
    mts_env *lm; /* persistence (tree_lmdb.c) */
    char dir[4096];
    const egdb *db;
    pst_env *store;

    mt_node *n;
    uint32_t count, cap;
    uint32_t *slot; /* open addressing: node index + 1, 0 empty */
    uint32_t nslot;

    mt_jobrec *job;
    size_t njob, capjob;

    /* the children's scores a worker sent with job kid_job (mt_child_scores:
     * the driver's, until the result is admitted; then they are the
     * graph's fact, mtg_result) */
    int16_t kid_scores[MT_SCORES_MAX];
    uint32_t nkid_scores;
    uint64_t kid_job;

    /* the incremental update (UPDATES) */
    uint32_t *wq, *touched;
    size_t nwq, capwq, ntouched, captouched;
    uint64_t updates, fallbacks; /* incremental updates, and those that fell back to a pass */
    uint64_t widened;            /* leaves expanded early for idle workers (this run) */
    uint64_t all_job_ms;         /* milliseconds of every answered job, all nodes
                                    (the root's turn: tree.h, THE ROOT'S OWN JOBS) */
    int no_early;                /* mt_create.no_early */
    int leaf_step;               /* tree.h, LEAF NUMBERS: <= 0 uniform (the
                                    default), else the step (mt_set_leaf_step;
                                    not kept) */
    int no_root_jobs;            /* mt_create.no_root_jobs (kept) */
    uint32_t oq_jobs, oq_worker; /* the root's other question (tree.h, THE ROOT'S
                                    OTHER QUESTION): its jobs answered (kept) and the
                                    worker that had the last one (this run) */
    uint64_t oq_ms;              /* and their milliseconds (kept) */

    /* parameters and state (meta) */
    eng_pos root;
    int root_score, root_depth; /* mt_create's (the root's score at creation) */
    int goal, db_pieces, h, h0, h_step;
    uint32_t job_ms, job_max_ms;
    uint64_t job_nodes, next_job, first_job, jobs_done, jobs_proved, hist_n;
    eng_question q;
    double seconds;
    char seed[256];

    uint32_t epoch;
    uint64_t stamp; /* the clock of won_at */
    int cycles;     /* a pass met a node on its stack */
    int contradict; /* a pass found own and backup disjoint */
    char contra_fen[ENG_FEN_MAX];
    mtg_changes chg;           /* what the graph changed, to keep (THE CHANGE SET) */
    uint64_t admitted;         /* workers' records admitted since the tree was opened */
    int unadmitted;            /* a schema 1 tree (MT_SCHEMA_UNADMITTED): not resumed */
    char owner[PST_OWNER_MAX]; /* the proof's id, also the store's owner label */
    uint64_t records;          /* the store's records when the tree was last saved */
    char db_dir[480];          /* the databases' folder at creation (absolute; "" none) */
    int rdonly;                /* opened by mt_open_ro: nothing is ever written */
};

/* ---- little-endian bytes (the LMDB records, the node table's hash) --- */

static inline void
put32(uint8_t *b, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        b[i] = (uint8_t)(v >> (8 * i));
}

static inline uint32_t
get32(const uint8_t *b)
{
    return (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
}

static inline void
put64(uint8_t *b, uint64_t v)
{
    put32(b, (uint32_t)v);
    put32(b + 4, (uint32_t)(v >> 32));
}

static inline uint64_t
get64(const uint8_t *b)
{
    return (uint64_t)get32(b) | (uint64_t)get32(b + 4) << 32;
}

/* A node's key: its exact position in MT_KEY bytes (u32 bm, wm, bk, wk,
 * u8 side to move), as "nodes" and "jobs" store it (tree.h). */
static inline void
pos_key(const eng_pos *p, uint8_t k[MT_KEY])
{
    put32(k, p->bm);
    put32(k + 4, p->wm);
    put32(k + 8, p->bk);
    put32(k + 12, p->wk);
    k[16] = (uint8_t)p->stm;
}

/* ---- the graph (tree_graph.c): pure ----------------------------------- */

/* The node of p, or -1. */
long mtg_find(const mt_tree *t, const eng_pos *p);

/* Appends a node for p (not yet in the table): its own bound is nothing
 * and its numbers 1 until mtg_set_own and an evaluation fill them.
 * RETURN its index, or MT_ENOMEM. */
long mtg_add(mt_tree *t, const eng_pos *p);

/* Node i's own bound is the fact o (an opened tree's nodes: tree_lmdb.c). */
void mtg_set_own(mt_tree *t, uint32_t i, const mtg_own *o);

/*
 * mtg_link - links node i's children, the legal moves in eng_generate
 * (merged) order, creating the missing ones: own[m] is the fact of move
 * m's position when the graph does not hold it (ignored otherwise; n
 * must be the number of moves). A new child's score is the worker's for
 * it (kept with i, mtg_child_scores) or else the static evaluation. The
 * node and its new children enter the change set only when a child was
 * new and i already expanded (an opened tree whose stop lost children).
 * RETURN 0, MT_EINVAL (n is not i's number of moves) or MT_ENOMEM.
 */
int mtg_link(mt_tree *t, uint32_t i, const mtg_own *own, int n);

/*
 * mtg_expand - the fact "these are node i's children": mtg_link, i marked
 * expanded (and early: IDLE WORKERS in tree.h, when early), i and its new
 * children into the change set, and the nodes above i updated. A node
 * already expanded is left as it is. RETURN 0 or MT_E* with err.
 */
int mtg_expand(mt_tree *t, uint32_t i, const mtg_own *own, int n, int early, char *err,
               size_t errlen);

/*
 * mtg_child_scores - the fact "a worker scored node i's children so"
 * (n scores in move order, each for its own side to move, at
 * MT_SCORE_DEPTH): kept with i until it is expanded, when its new
 * children take them; when i is expanded already (an early node), each
 * child with no searched score yet (depth 0: the static evaluation)
 * takes its own now, and the nodes above it are updated. A count that
 * is not i's number of moves is ignored. RETURN 0 or MT_E* with err.
 */
int mtg_child_scores(mt_tree *t, uint32_t i, const int16_t *scores, size_t n, char *err,
                     size_t errlen);

/* The tree's parameters from create (root, goal, budgets, h, seed,
 * db_dir); the nodes and job ids are the caller's. */
void mtg_params(mt_tree *t, const mt_create *create);

/* Adds the root (node 0) with its own bound o, its creator's score (or
 * the static one), and the first question. RETURN 0 or MT_ENOMEM. */
int mtg_root(mt_tree *t, const mtg_own *o);

/* Marks the root early (tree.h, THE ROOT'S OWN JOBS) when it is expanded
 * and root jobs are on, and sums the answered jobs' time; before the
 * first pass of an opened tree. */
void mtg_root_early(mt_tree *t);

/* One pass over the whole graph (bounds, numbers, flags); the backed-up
 * records it finds go to the change set. RETURN 0, or MT_ESTORE when
 * a backed-up bound contradicts a node's own (a bug; err names it). */
int mtg_pass(mt_tree *t, char *err, size_t errlen);

/* The numbers check (mt_check_numbers, tree.h) on the graph alone. */
int mtg_check_numbers(mt_tree *t, char *err, size_t errlen);

/* The cap of a node's budget when the proof does not set one. */
uint32_t mtg_job_max_default(uint32_t job_ms);

/* The job of id, or NULL. */
mt_jobrec *mtg_job_find(mt_tree *t, uint64_t id);

/* Appends a job record. RETURN it, or NULL when memory runs out. */
mt_jobrec *mtg_job_add(mt_tree *t, uint64_t id, uint32_t node, eng_question q, int live);

/*
 * mtg_pick - mt_pick on the graph: the next job into *job (issued: in
 * the change set), MT_PICK_WAIT, MT_PICK_DONE, or MTG_EXPAND with *expand
 * the in-flight leaf to expand early for an idle worker (IDLE WORKERS in
 * tree.h): the caller brings its children (mtg_expand, early) and asks
 * again. RETURN one of those, or MT_E* with err.
 */
int mtg_pick(mt_tree *t, mt_job *job, uint32_t *expand, char *err, size_t errlen);

/* The facts of one answered job (mtg_result). */
typedef struct mtg_result_fact {
    eng_bound bound;     /* what the store now holds for the job's position
                            (ENG_LW: nothing) */
    int settled;         /* the job answered its question */
    int score, depth;    /* the position's own score, and its depth (0: none) */
    uint64_t nodes;      /* df-pn positions the job searched */
    uint32_t ms;         /* its time */
    const int16_t *kids; /* the worker's scores for the children, or NULL */
    size_t nkids;
} mtg_result_fact;

/*
 * mtg_result - what an admitted result does to the graph: the bound meets
 * the node's own, the counters move on, the worker's scores are kept
 * with the node (mtg_child_scores), the job is dropped (answered, in the
 * change set), the node and the counters enter the change set, and the
 * nodes above it are updated. When the job left the
 * node open at its budget's cap, the node is to be expanded first:
 * RETURN MTG_EXPAND (nothing updated yet) and the caller brings its
 * children (mtg_expand), whose update is the result's. j is dropped.
 * RETURN 0, MTG_EXPAND; MT_ESTORE (bound contradicts the node's own: err
 * names it); other MT_E*.
 */
int mtg_result(mt_tree *t, mt_jobrec *j, const mtg_result_fact *f, char *err, size_t errlen);

/* mt_release and mt_release_all on the graph (their passes' records in
 * the change set). */
int mtg_release(mt_tree *t, uint64_t id, char *err, size_t errlen);
int mtg_release_all(mt_tree *t, char *err, size_t errlen);

/* The change set emptied (after mts_apply, or dropped): the nodes' marks
 * cleared, its memory kept for the next. */
void mtg_changes_clear(mt_tree *t);

/* Frees the graph and t (not the environment: mt_close). */
void mtg_free(mt_tree *t);

/*
 * mtg_open_mem - for tests: the tree of create (root, goal, budgets, h)
 * in memory only (THE IN-MEMORY TREE): its root added and evaluated,
 * nothing written anywhere. Closed with mt_close.
 * RETURN 0, or MT_E* with err.
 */
int mtg_open_mem(const mt_create *create, mt_tree **out, char *err, size_t errlen);

/* mtg_set_kids - for tests: node i's children are the n nodes kid (copied),
 * in that order, and i becomes a parent of each; the caller marks i
 * expanded. RETURN 0 or MT_ENOMEM. */
int mtg_set_kids(mt_tree *t, uint32_t i, const uint32_t *kid, uint16_t n);

/* ---- the proof store (tree_proof.c) ------------------------------------ */

/* Position p's own bound from outside the tree into *o: no move,
 * databases, store (neither in the in-memory tree). RETURN 0; MT_EDB or
 * MT_ESTORE with err. */
int mtp_own_of(mt_tree *t, const eng_pos *p, mtg_own *o, char *err, size_t errlen);

/* Node i expanded (early: tree.h, IDLE WORKERS): its new children's facts
 * gathered and given to the graph (mtg_expand). RETURN 0 or MT_E*. */
int mtp_expand(mt_tree *t, uint32_t i, int early, char *err, size_t errlen);

/* Node i's children linked again at open (mtg_link), the facts of those
 * missing after a crash gathered. RETURN 0 or MT_E*. */
int mtp_link(mt_tree *t, uint32_t i, char *err, size_t errlen);

/* Expands the seed line, the given moves (parsed on the tree's positions)
 * or, with none, the root alone: the manager runs no search for a line
 * of its own (tree.h, THE SEED LINE). RETURN 0 or MT_E* with err. */
int mtp_seed(mt_tree *t, const char *seed, char *err, size_t errlen);

/*
 * mtp_admit_result - the first half of mt_result (tree.h): the records
 * of job j's result admitted (prover/admit.h) as the proof of its
 * position, nothing written unless they prove what *bound claims; *bound
 * is then what the store holds for the position (the graph's fact), and
 * *written the records admission wrote (the caller counts them in
 * t->admitted with the graph step: this half only reads the tree, so
 * that it may run beside a thread that reads it, tree.h, mt_result_in).
 * RETURN 0; MT_EREFUSED (err says why: not to be trusted); MT_ESTORE;
 * MT_ENOSPC.
 */
int mtp_admit_result(mt_tree *t, const mt_jobrec *j, eng_bound *bound, const pst_item *items,
                     size_t n, size_t max_items, uint64_t *written, char *err, size_t errlen);

/* Admits the change set's backed-up records (each its own root) into
 * the store; a read-only tree writes nothing. RETURN 0; MT_ESTORE (a
 * refusal: a bug, err says which); MT_ENOSPC. */
int mtp_admit_backups(mt_tree *t, char *err, size_t errlen);

/* ---- persistence (tree_lmdb.c) ---------------------------------------- */

/* mts_apply - keeps the change set: the nodes, jobs and meta it names in
 * one write transaction, committed, then its backed-up records admitted
 * (mtp_admit_backups); the set is emptied. A read-only tree or the
 * in-memory one writes nothing (the store part still runs in memory).
 * RETURN 0; MT_ENOMEM (the set was not whole); MT_ENOSPC (a full disk,
 * nothing lost) or MT_EIO, with err; MT_ESTORE. */
int mts_apply(mt_tree *t, char *err, size_t errlen);

/*
 * mts_begin, mts_end - a result's ONE TRANSACTION (tree.c, mt_result):
 * between them, every write of the tree and of its store (admission, the
 * change set, the backed-up records) goes into one write transaction of
 * the state's environment (the store's scope, prover/store.h, ONE
 * TRANSACTION), and reads see it; mts_end commits it (commit nonzero) or
 * drops it whole. The in-memory and read-only trees do nothing.
 * RETURN 0; MT_EIO, MT_ENOSPC (nothing of it written), MT_ECORRUPT, with
 * err.
 */
int mts_begin(mt_tree *t, char *err, size_t errlen);
int mts_end(mt_tree *t, int commit, char *err, size_t errlen);

/* ---- the driver (tree.c) ------------------------------------------------ */

/* mtd_take - an admitted result given to the graph (mtg_result), the
 * children it asks for brought, the change set applied: mt_result's
 * second half, which the in-memory tree's tests call directly.
 * RETURN 0 or MT_E* with err. */
int mtd_take(mt_tree *t, mt_jobrec *j, const mtg_result_fact *f, char *err, size_t errlen);

#endif /* MANAGER_TREE_INT_H */
