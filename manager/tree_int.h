/*
 * tree_int.h - inside the proof tree (tree.h is the manual): the three
 * parts the tree is made of, the types they share and the calls between
 * them. Only manager/tree_*.c and the graph's unit tests include this
 * header; everything else goes through tree.h.
 *
 * THE PARTS
 *   tree_graph.c  the PN graph, in memory and with no I/O: goals and
 *                 questions, the node table, expansion (children and
 *                 parents), the manager's heuristic scores, node
 *                 evaluation (bounds, proof and disproof numbers, flags),
 *                 the pass and the incremental update, the numbers check,
 *                 picking jobs, what a result does to the graph, stats,
 *                 walks and lookups. It includes no LMDB and reads no
 *                 store: what it must keep it hands to the persistence
 *                 part (mts_*), what rests on a proof it asks of the
 *                 proof part (mtp_*).
 *   tree_lmdb.c   persistence: the tree's own LMDB environment
 *                 (<state>/tree): meta, the node and job encodings, write
 *                 transactions, open, create and load (mt_open_ro too,
 *                 and the guard against damaged files), the tie between
 *                 the tree and its proof store (STORE AND TREE), the
 *                 history samples, mt_info*, mt_store_check.
 *   tree_proof.c  where the tree meets the proof store: a node's own bound
 *                 (no move, databases, store), the records the tree backs
 *                 up and their admission, the admission of a worker's
 *                 result before the graph takes it (mt_result), and the
 *                 check of the settled root (mt_check_root).
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
 *   and no databases: the mts_* writes keep nothing, a node's own bound
 *   comes only from having no move (a loss), and backed-up records are
 *   taken as recorded without admission (there is no store to write them
 *   to). Everything else is the code a real tree runs. The graph's unit
 *   tests (tests/test_manager_graph.c) build graphs on it by hand
 *   (mtg_add, mtg_set_kids, the node fields) and drive them with mt_pick
 *   and mtg_result (mt_result admits records: it needs a store).
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
    uint32_t worker; /* who had its last job (mt_given; not persisted) */
    uint64_t won_at; /* when its bound became a win or a loss (WIN MOVES) */
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

/* The tree's LMDB environment and tables (tree_lmdb.c). */
typedef struct mts_env mts_env;

struct mt_tree {
    mts_env *lm; /* persistence (tree_lmdb.c) */
    char dir[4096];
    const egdb *db;
    pst_env *store;
    ab_ctx *ab;

    mt_node *n;
    uint32_t count, cap;
    uint32_t *slot; /* open addressing: node index + 1, 0 empty */
    uint32_t nslot;

    mt_jobrec *job;
    size_t njob, capjob;

    /* the children's scores a worker sent with job kid_job (mt_child_scores) */
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
    int goal, db_pieces, h, h0, h_step;
    uint32_t job_ms, job_max_ms, score_nodes;
    uint64_t job_nodes, next_job, first_job, jobs_done, jobs_proved, hist_n;
    eng_question q;
    double seconds;
    char seed[256];

    uint32_t epoch;
    uint64_t stamp; /* the clock of won_at */
    int cycles;     /* a pass met a node on its stack */
    int contradict; /* a pass found own and backup disjoint */
    char contra_fen[ENG_FEN_MAX];
    padm_items items;          /* backed-up records of a pass */
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

/* ---- the graph (tree_graph.c) --------------------------------------- */

/* The node of p, or -1. */
long mtg_find(const mt_tree *t, const eng_pos *p);

/* Appends a node for p (not yet in the table): its own bound is nothing
 * and its numbers 1 until mtp_own and an evaluation fill them.
 * RETURN its index, or MT_ENOMEM. */
long mtg_add(mt_tree *t, const eng_pos *p);

/* Links node i's children, the legal moves (creating the missing ones,
 * with their own bounds and scores); persists nothing. RETURN 0 or MT_E*
 * with err. */
int mtg_link(mt_tree *t, uint32_t i, char *err, size_t errlen);

/* The tree's parameters from create (root, goal, budgets, h, seed,
 * db_dir); the nodes and job ids are the caller's. */
void mtg_params(mt_tree *t, const mt_create *create);

/* Adds the root (node 0) with its own bound and score, and the first
 * question. RETURN 0 or MT_E* with err. */
int mtg_root(mt_tree *t, char *err, size_t errlen);

/* Expands the seed line: the given moves, else the engine's line
 * (expansions are persisted). RETURN 0 or MT_E* with err. */
int mtg_seed(mt_tree *t, const char *seed, char *err, size_t errlen);

/* Marks the root early (tree.h, THE ROOT'S OWN JOBS) when it is expanded
 * and root jobs are on, and sums the answered jobs' time; before the
 * first pass of an opened tree. */
void mtg_root_early(mt_tree *t);

/* One pass over the whole graph (bounds, numbers, flags), then the
 * backed-up records admitted (mtp_admit_backups). RETURN 0 or MT_E*. */
int mtg_pass(mt_tree *t, char *err, size_t errlen);

/* The cap of a node's budget when the proof does not set one. */
uint32_t mtg_job_max_default(uint32_t job_ms);

/* The job of id, or NULL. */
mt_jobrec *mtg_job_find(mt_tree *t, uint64_t id);

/* Appends a job record. RETURN it, or NULL when memory runs out. */
mt_jobrec *mtg_job_add(mt_tree *t, uint64_t id, uint32_t node, eng_question q, int live);

/*
 * mtg_result - what an admitted result does to the graph: bound (what the
 * store now holds for the job's position, ENG_LW for nothing) meets the
 * node's own, the counters move on, the node is expanded when the job
 * left it open at its budget's cap, the node and the counters are
 * persisted, and the nodes above it are updated. j is dropped.
 * RETURN 0; MT_ESTORE (bound contradicts the node's own: err names it);
 * other MT_E*.
 */
int mtg_result(mt_tree *t, mt_jobrec *j, eng_bound bound, int settled, int score, int depth,
               uint64_t nodes, uint32_t ms, char *err, size_t errlen);

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

/* ---- persistence (tree_lmdb.c) ---------------------------------------- */

/* Each writes in one transaction and commits; RETURN 0, MT_ENOSPC (a
 * full disk, nothing lost) or MT_EIO, with err. */

/* Node i expanded: it and the nodes from first_new on (its new children). */
int mts_expanded(mt_tree *t, uint32_t i, uint32_t first_new, char *err, size_t errlen);

/* Job j issued (kept in "jobs" until answered), with the counters. */
int mts_job(mt_tree *t, const mt_jobrec *j, char *err, size_t errlen);

/* Job id answered: its record dropped, node i and the counters written. */
int mts_result(mt_tree *t, uint32_t i, uint64_t id, char *err, size_t errlen);

/* The counters and the question. */
int mts_state(mt_tree *t, char *err, size_t errlen);

/* ---- the proof store (tree_proof.c) ------------------------------------ */

/* Node n's own bound from outside the tree: no move, databases, store.
 * RETURN 0; MT_EDB or MT_ESTORE with err. */
int mtp_own(mt_tree *t, mt_node *n, char *err, size_t errlen);

/* Queues node n's backed-up record (t->items) when its bound is new to
 * the store. */
void mtp_backup_push(mt_tree *t, mt_node *n);

/* Admits the queued records (each its own root) and notes them as
 * recorded; refuses to go on when the pass found a contradiction.
 * RETURN 0; MT_ESTORE (a contradiction or a refusal: a bug, err says
 * which); MT_ENOSPC. */
int mtp_admit_backups(mt_tree *t, char *err, size_t errlen);

#endif /* MANAGER_TREE_INT_H */
