/*
 * tree.h - the proof tree of the manager: best-first PN-search over the
 * positions below a root, kept in LMDB so that a proof survives any stop.
 * manager.h tells how the pieces fit; this header says what the tree
 * holds and why its answers can be trusted; tree_int.h says how its code
 * is split (the pure PN graph and its change set, its side of admission,
 * its persistence, and the driver that applies the graph's changes).
 *
 * NODES AND TRANSPOSITIONS
 *   A node is a position (the exact position, side to move included). A
 *   position reached by two lines is one node with two parents: merging
 *   transpositions means a subtree is proved once. The tree is therefore
 *   a graph, and with kings it may hold cycles.
 *
 * WHAT IS PROVEN (bounds, engine/value.h)
 *   Every node has a bound for its side to move, from three sources:
 *     own     a proof that exists outside the tree: the position has no
 *             move (a loss), the databases cover it (their value), or
 *             the proof store holds a record for it (a worker's proof, or
 *             an earlier backup, see below);
 *     backup  for an expanded node, the negamax of its children's bounds
 *             (eng_bound_max over the negated bounds);
 *     bound   own intersected with backup.
 *   When a node's bound becomes stronger than its record in the store, the
 *   tree writes the record: the bound, and the move to a child that
 *   proves it (for a win, a child whose bound is a loss; for at least a
 *   draw, a child at most a draw). Every child such a record relies on
 *   already has its own record (or is a database or terminal leaf), so
 *   the store keeps its invariant (store.h): a record only with the whole
 *   proof below it. `proof check --state` runs the independent checker
 *   (prover/check.h) from the root over these records: the tree's proof
 *   and the workers' proofs are one certificate.
 *
 * WHY CYCLES CANNOT MAKE A WRONG BOUND
 *   A bound only ever comes from bounds established earlier (children's,
 *   or proofs); a bound resting on a node still being computed (a cycle)
 *   uses that node's earlier bound. By induction on the order in which
 *   bounds are established, a win at a node is a finite strategy whose
 *   every line reaches an earlier-won position, and ends in a proof; the
 *   tree never scores a repetition as a draw. A draw that needs a
 *   repetition is left to the workers, whose df-pn proves it GHI-safe
 *   (prover/prover.h). So a repetition in the tree counts only on its
 *   own path, in the search: selection never descends into a position
 *   already on its path, and a node whose only unresolved children are
 *   on the path becomes a job itself.
 *
 * QUESTIONS AND PROOF NUMBERS
 *   The search answers one binary question at a time: "does colour X win"
 *   or "does X at least draw" (eng_question). A node is proven when its
 *   bound implies the answer yes, disproven when it implies no. Proof and
 *   disproof numbers (Allis) are computed from the leaves up: X to move is
 *   an OR node (pn = min, dn = sum over the children), the other side to
 *   move an AND node.
 *
 * NUMBERS AFTER A RESULT
 *   After a result (or a released job) only the changed node and the
 *   nodes above it are evaluated again: each node whose bound, numbers or
 *   flag changed queues all its parents (a transposition has several),
 *   so a job costs the manager what its ancestors cost, not the tree.
 *   Cycles can make numbers climb round and round: past a budget of
 *   evaluations the update falls back to one depth-first pass over the
 *   whole graph (a node met again while it is still on the pass's stack
 *   gives its previous numbers), which also runs at open, when the
 *   question or h changes, and in the tests as a check of the updates
 *   (mt_check_numbers). `make bench` reports the cost per job.
 *
 * THRESHOLD ITERATION (seed 003, section 3.4)
 *   A leaf whose heuristic score for X exceeds h counts as provisionally
 *   proven, one below -h provisionally disproven; the others get the
 *   LEAF NUMBERS (1 and 1 by default). When the root is resolved
 *   provisionally, h rises by its step and the numbers are recomputed;
 *   past MT_H_INF nothing is provisional. The
 *   answer is only ever read from the root's bound, never from numbers:
 *   it cannot rest on a heuristic leaf.
 *
 * LEAF NUMBERS (issue 21: initial numbers from the evaluation)
 *   By default every open leaf inside the threshold counts pn = dn = 1
 *   (Chinook's uniform numbers: an AND node's proof number is then its
 *   count of open children). With a step (mt_set_leaf_step, `prove
 *   --leaf-step D`) the numbers come from the leaf's heuristic score sx
 *   for X instead, as df-pn's new positions' do (prover/dfpn.c, INITIAL
 *   NUMBERS): the further sx lies below what the question needs
 *   (MT_LEAF_NEED: +30 for a win, -30 for at least a draw), the larger
 *   its proof number, one more per step hundredths of a man; the further
 *   above, the larger its disproof number; the other number is 1, and
 *   neither passes MT_LEAF_MAX. Numbers never decide a bound, so either
 *   way only the order of the work changes, never an answer.
 *   Not the default: on ten roots of 8-12 pieces proved by the tree
 *   alone (bench/leafnums.sh, jobs bounded by positions, so the same
 *   from run to run), a step of 50 took 42% fewer jobs on the seven both
 *   settled within 300 s, but left open two that the uniform numbers
 *   settle, one of them the only level draw of the set; 100 lost the
 *   same two (docs/manager.md, "Leaf numbers"). Not kept in the state:
 *   numbers are not stored, every open computes them afresh.
 *
 * JOBS IN FLIGHT (virtual equivalence plus flagging)
 *   A leaf given to a worker keeps its numbers (virtual equivalence: the
 *   job is assumed to change nothing) and is flagged; a node whose
 *   unresolved children are all flagged is flagged; selection passes
 *   flagged nodes by, so the next pick goes to the next most-proving
 *   leaf. The job-level PN-search study (Wu et al. 2013) found this the
 *   best of the policies it measured.
 *
 * JOBS: GROWING BUDGETS, THE SAME WORKER AGAIN
 *   A node's first job gets job_ms (and job_nodes); each job after it
 *   gets double the one before, up to job_max_ms. A leaf whose job left
 *   it open stays a leaf while its budget can still grow, so the next pick
 *   (its numbers have not changed) gives it a longer job; once a job at
 *   the cap has left it open, it is expanded. Chinook worked the same
 *   way: a short search first, then a long one, then the tree grows. The
 *   manager gives a node's job to the worker that had its last one
 *   (mt_job.prefer) when that worker is free: its df-pn table still holds
 *   the unanswered query, which goes on where it stopped
 *   (prover/dfpn.h, THE TABLE).
 *
 * IDLE WORKERS: EXPANDING A LEAF EARLY
 *   When a worker asks for work and every open leaf is in flight (at the
 *   start of every proof, with the root the only leaf), the in-flight
 *   leaf at the end of the most-proving line, flags ignored, is expanded
 *   at once and marked early: it stays a job of its own (a node whose own
 *   job is free is not flagged, and selection stops there), its jobs go
 *   on growing to the cap on the worker that had it, and its children
 *   are work for the others. When a job at the cap leaves it open it is a
 *   plain interior node. So with two workers the root's own df-pn runs
 *   as long as one `solve` would while the other worker grows the tree,
 *   instead of the second worker waiting for the root's jobs to reach
 *   the cap. Its children get the scores its earlier jobs brought, when
 *   it had one, else the static evaluation until its job's result
 *   brings theirs (SCORES). The mark is not persisted: any early node
 *   but the root is an interior node after a restart.
 *
 * SCORES: THE MANAGER RUNS NO SEARCH
 *   A node's heuristic score (search.h's scale, for its side to move)
 *   orders the work - THRESHOLD ITERATION, LEAF NUMBERS, the first
 *   question's hint - and never decides a bound. The workers compute
 *   them: a job's result carries the alpha-beta score of its position,
 *   and, when it leaves the position open, the scores of its children
 *   (protocol.h, RESULT; MT_SCORE_DEPTH plies, MT_SCORE_NODES nodes,
 *   wrk_score). The children's scores are kept with the node
 *   (mt_child_scores) until it is expanded, when each new child takes
 *   its own and keeps it ("nodes" stores it with its depth); when the
 *   node is expanded already (early, below), each child that has only
 *   the static evaluation takes the worker's. A node no worker has
 *   scored gets the static evaluation (ab_eval, a pure function; depth
 *   0). The root's score is its creator's (mt_create.root_score): the
 *   first question is asked before any job. Before, the manager ran a
 *   6-ply alpha-beta in its event loop for every node no worker had
 *   scored (0.7 ms a child) and for a second at the root for the seed
 *   line. The kept scores are not persisted: after a restart, the next
 *   result that leaves the node open brings them again.
 *
 * THE SEED LINE
 *   A seed line given at creation (`prove --seed`, or openings/seeds.tsv,
 *   which `checkers openings seed` searches outside the manager) is
 *   expanded move by move. Without one, only the root is expanded: its
 *   own jobs (below) are the workers' search of it, and their results
 *   score its children. Before, the manager searched the root for a
 *   second and expanded up to 16 plies of its principal variation.
 *
 * THE ROOT'S OWN JOBS: A PORTFOLIO OF ONE SEARCH AND THE TREE
 *   The root, which the seed line expands before any job, is early from
 *   the start: df-pn on the root itself, as one `solve` runs it, is one
 *   of two ways to the proof; the tree is the other, and which one is
 *   faster is not known in advance. So the root's own jobs double
 *   without the cap for as long as the root is open, and the root's
 *   next job is given only while the root's own jobs have had at most
 *   twice the time of all the other jobs (or when every other open
 *   line is in flight). With one worker, the root's df-pn and the tree
 *   share its time about 2:1; with two or more, the worker that had
 *   the root's job gets it again at once (its table holds the search)
 *   and the others grow the tree, whose proofs the root's search reads
 *   from the shared store. Before, the root's own jobs were capped like
 *   any leaf's (8 times the first): with one worker and 5 s jobs the
 *   root's df-pn stopped for good after 75 s, whatever the budget. On 9
 *   roots of 8-12 pieces (bench/scaling.sh) two workers took 0.79 times
 *   the speed of one with the cap, and 1.41 times with the portfolio
 *   (docs/manager.md). An opened tree marks its root again.
 *   `--no-root-jobs` (kept in the state) turns the root's own jobs off.
 *
 * THE ROOT'S OTHER QUESTION: BOTH HALVES OF A DRAW AT ONCE
 *   A value or a draw is two questions ("does X at least draw", then
 *   "does the other side at least draw"; or "does X win", then "does X
 *   at least draw"), and a level position's draw needs both answers. The
 *   tree works one question at a time, and so did the root's own jobs,
 *   so with two workers the second question began only when the first
 *   was answered, as in one `solve`. Now, while the root's own job is in
 *   flight on one worker and the root's bound leaves both questions
 *   open, a worker that asks for work can be given the other question,
 *   at the root, as a series of its own: its budget doubles from the
 *   first job's without the cap, its next job goes to the worker that had
 *   the last (whose table holds that search), and its jobs are given
 *   while they have had at most twice the time of the tree's jobs (those
 *   in flight at their budgets), or whenever there is no other work.
 *   One job of it at a time; one worker alone never gets it (the root's
 *   job is never in flight when that worker asks). Its jobs leave the
 *   root's own flags and counters alone (mt_jobrec.other) and count as
 *   others' time for the root's turn. When the first question is
 *   answered and the tree moves to the second, a job of it in flight
 *   becomes the root's own. What it proves is admitted like any job's
 *   proof: the root's bound, which answers the questions, comes only
 *   from admitted records. Its jobs answered and their time are kept
 *   (meta "other_question"), and so is the mark on a job in flight
 *   ("jobs"), so that after a restart the series goes on at the budget
 *   it had reached and shares the workers by the time it has had in all
 *   (when it began again at the first budget, with the tree's time of
 *   every run against its own of this run, it took the second worker
 *   whenever the root's job was in flight), and a job of it answered
 *   late still counts as its own. Only the worker it prefers is not
 *   kept: the workers of a new run are new.
 *
 * PERSISTENCE (LMDB, directory <state>/state: THE STATE'S LAYOUT below;
 * the names here are those of the old layout's <state>/tree, "tree."
 * before each in the new one)
 *   Named databases, little-endian:
 *     "meta"  text keys and values: schema "checkers-proof-tree 2", root
 *             FEN, goal, parameters, the databases' folder (db_dir), the
 *             question, h, counters; and "check", 16 hex digits: XXH64
 *             over every other entry (key and value, in key order),
 *             rewritten by every write transaction and verified at open,
 *             so that a meta entry damaged, added or removed is damage
 *             (MT_ECORRUPT) and not a missing --db or a swapped store (a
 *             tree written before the check is read as it is).
 *     "nodes" key: 17 bytes, the exact position (u32 bm, wm, bk, wk, u8
 *             side to move); value 32 bytes: u8 format 1, u8 flags (bit 0
 *             expanded), i16 score, u16 score depth, u16 0, u32 jobs, u32
 *             job milliseconds, u64 job nodes, u32 creation order, u32
 *             XXH32 of the key and value bytes 0..27.
 *     "jobs"  key: u64 job id; value: 17-byte position, u8 attacker, u8
 *             goal, u8 1 when the root's other question's (a tree made
 *             before has no such byte): every job issued and not yet
 *             answered, so that a result arriving after a restart is
 *             still understood.
 *     "hist"  key: u64 sample number; value: the root's numbers over time
 *             (f64 seconds, u64 pn, u64 dn, u64 nodes, u64 jobs done,
 *             u64 jobs proved, u8 root bound), for the progress chart.
 *   Bounds are not stored here: they are the store's records, read back
 *   at open. An expansion writes the node and all its children in one
 *   transaction. Children are not stored as lists: they are the legal
 *   moves, generated again at open.
 *
 * THE STATE'S LAYOUT (issue 42: one environment, one transaction)
 *   Until issue 42 a state held two LMDB environments, <state>/tree (the
 *   databases above) and <state>/proofs (the proof store, prover/
 *   store.h), and nothing in LMDB tied them together: a result's
 *   admission and the tree's change took transactions in both, and a
 *   crash between them kept one without the other (tree_lmdb.c, STORE
 *   AND TREE, checks the tie at open). The layout the state moves to is
 *   ONE environment, <state>/MT_STATE_DIR, holding the tree's four
 *   databases under the names MT_DB_META, MT_DB_NODES, MT_DB_JOBS and
 *   MT_DB_HIST (same keys and values as above) and the store's two under
 *   their own names ("meta", "nodes": store.h, KEYS AND FILE FORMAT), so
 *   that one write transaction can admit a result and keep the tree's
 *   change, and `store stats --store <state>/state` reads the store as
 *   any other. mt_state_upgrade moves a state of the old layout into it.
 *   Every call that opens a state (mt_open, mt_open_ro, mt_open_store,
 *   mt_info*) upgrades a state of the old layout first.
 */
#ifndef MANAGER_TREE_H
#define MANAGER_TREE_H

#include <stddef.h>
#include <stdint.h>

#include "egdb/egdb.h"
#include "engine/engine.h"
#include "engine/value.h"
#include "prover/store.h"

/* ---- constants ------------------------------------------------------ */

/* Schema 2: every record of <state>/proofs was admitted (prover/admit.h).
 * Schema 1 trees took workers' records unchecked: refused (MT_EOLD). */
#define MT_SCHEMA "checkers-proof-tree 2"
#define MT_SCHEMA_UNADMITTED "checkers-proof-tree 1"
#define MT_STATE_DIR "state"   /* THE STATE'S LAYOUT: the one environment's folder */
#define MT_DB_META "tree.meta" /* and the tree's databases in it */
#define MT_DB_NODES "tree.nodes"
#define MT_DB_JOBS "tree.jobs"
#define MT_DB_HIST "tree.hist"
#define MT_INF ((uint64_t)1 << 40) /* proof-number infinity (saturating) */
#define MT_H_INF 10001             /* h at or past this: nothing provisional */
#define MT_JOB_GROW 8              /* default cap of a node's budget: 8 first jobs */
#define MT_SCORE_DEPTH 6           /* plies of a new node's heuristic score */
#define MT_SCORE_NODES 4000        /* and its alpha-beta node cap */
#define MT_SCORES_MAX 256          /* children's scores one result may bring */
#define MT_LEAF_STEP 50            /* LEAF NUMBERS: the step measured (not the default) */
#define MT_LEAF_NEED 30            /* what a win needs (-30: at least a draw) */
#define MT_LEAF_MAX 64             /* a leaf's numbers at most */

enum mt_err {
    MT_OK = 0,
    MT_EIO = -601,
    MT_ECORRUPT = -602,
    MT_ENOMEM = -603,
    MT_EINVAL = -604,
    MT_ESTORE = -605,
    MT_EDB = -606,
    MT_EREFUSED = -607, /* a worker's result refused at admission (prover/admit.h) */
    MT_EOLD = -608,     /* a tree of schema 1, written before admission */
    MT_ENOSPC = -609    /* a write failed on a full disk: nothing lost, resumable */
};

/* Goals of a proof (manager.h, "Goals"). */
enum mt_goal {
    MT_GOAL_VALUE = 0,
    MT_GOAL_WIN = 1,
    MT_GOAL_DRAW = 2,
    MT_GOAL_GE_DRAW = 3,
    MT_GOAL_LE_DRAW = 4
};

/* mt_pick's answers. */
enum mt_pick_status { MT_PICK_JOB = 0, MT_PICK_WAIT = 1, MT_PICK_DONE = 2 };

/* ---- types ---------------------------------------------------------- */

typedef struct mt_tree mt_tree;

/* What a new proof starts from (mt_open with create != NULL). */
typedef struct mt_create {
    eng_pos root;
    int goal;            /* MT_GOAL_* */
    int db_pieces;       /* the database scope the proof rests on (egdb.h: a
                            piece count, or one and splits of the next) */
    uint32_t job_ms;     /* budget of a node's first job */
    uint32_t job_max_ms; /* the cap of a node's growing budget (JOBS); below
                            job_ms: job_ms * MT_JOB_GROW */
    uint64_t job_nodes;  /* df-pn node limit of a first job (0: none) */
    int root_score;      /* the root's heuristic score for its side to move,
                            from a search its creator ran (wrk_score in
                            manager.h: `checkers prove` runs it once); it
                            hints the first question (SCORES) */
    int root_depth;      /* that search's depth; 0: none was run, the root
                            gets the static evaluation */
    int h0, h_step;      /* threshold start and step (hundredths of a man) */
    const char *seed;    /* seed line as move text ("12-16 24-19"), may be NULL */
    const char *db_dir;  /* the databases' folder, absolute (kept: a resume needs
                            only the state directory); may be NULL */
    int no_root_jobs;    /* 1: the root is never a job of its own (IDLE
                            WORKERS); kept */
    int no_early;        /* 1: an idle worker waits instead of a leaf being
                            expanded early (IDLE WORKERS; the tests' hand-made
                            graphs, whose positions are not real); not kept */
} mt_create;

/* A job picked by mt_pick. */
typedef struct mt_job {
    uint64_t id;
    eng_pos pos;
    eng_question q; /* what the job asks of pos */
    uint32_t time_ms;
    uint64_t node_limit;
    uint32_t prefer; /* the worker that had this node's last job (mt_given),
                        0: none: its table still holds that job's work */
} mt_job;

/* The tree's state, for progress lines, the status page and `tree`. */
typedef struct mt_stats {
    eng_bound root_bound;
    eng_question q;
    int goal;
    uint64_t root_pn, root_dn;
    uint64_t nodes, expanded, leaves_proven, in_flight;
    uint64_t jobs_done, jobs_proved, jobs_issued;
    uint64_t widened;              /* leaves expanded early for idle workers, this run */
    uint64_t other_jobs, other_ms; /* the root's other question (THE ROOT'S OTHER
                                      QUESTION): its jobs answered and their
                                      milliseconds, over all runs */
    int h;
    int db_pieces;
    uint32_t job_ms, job_max_ms;
    uint64_t job_nodes;
    double seconds; /* manager time spent on this proof, over all runs */
    char root_fen[ENG_FEN_MAX];
    char seed[256];
} mt_stats;

/* One node as mt_walk shows it. */
typedef struct mt_view {
    eng_pos pos;
    int depth;     /* plies below the root on the walk */
    char move[64]; /* the move that led here ("" at the root) */
    eng_bound bound;
    int leaf;   /* 0 interior, 1 leaf */
    int source; /* 'd' database, 't' no move, 's' proof store, 'b' backup, '-' none */
    int score, in_flight, flagged;
    uint64_t pn, dn;
    uint32_t jobs;
    int expanded;       /* its children are in the tree */
    uint32_t children;  /* how many (its legal moves, once expanded) */
    uint32_t parents;   /* nodes that have it as a child (transpositions: > 1) */
    uint32_t job_ms;    /* milliseconds of jobs spent on it, over all runs */
    uint64_t job_nodes; /* df-pn positions of those jobs */
} mt_view;

/* ---- functions ------------------------------------------------------ */

/*
 * mt_open - opens the tree of the state in folder state (its one
 * environment <state>/state: THE STATE'S LAYOUT; a state of the old
 * layout is upgraded first, mt_state_upgrade), creating it when create
 * is non-NULL (refused if one exists: MT_EINVAL "already holds a
 * proof"), resuming it otherwise (MT_EINVAL when there is none). The
 * proof store is opened inside the same environment (mt_store). db (may
 * be NULL only when db_pieces is 0) must outlive the tree. On resume, every node's bound is read
 * back from the store and the databases, and backed-up records missing from the store (a stop
 * between a result and its backup) are written.
 * RETURN 0; MT_E* with err naming the file and the problem.
 */
int mt_open(const char *state, const mt_create *create, const egdb *db, mt_tree **out, char *err,
            size_t errlen);

/* mt_close - closes the tree, its store (mt_store) and their environment. */
void mt_close(mt_tree *t);

/* mt_store - the tree's proof store, inside its environment: owned by
 * the tree (closed by mt_close, never by pst_close); read-only for a tree
 * of mt_open_ro or mt_open_store. NULL for the in-memory tree. */
pst_env *mt_store(const mt_tree *t);

/*
 * mt_open_store - the state in folder state opened for its proof store
 * alone (`proof check --state`, `proof export --state`): the tree's meta
 * read and checked, no node loaded, the store (mt_store) read-only and
 * checked to be the tree's, whole: the owner label the tree was made
 * with, and at least the records it saw at its last save (tree_lmdb.c,
 * STORE AND TREE; a store not yet labelled passes). Only mt_store and
 * mt_close may be called on the result.
 * RETURN 0 and *out; MT_ECORRUPT with err naming what is wrong, or
 * another MT_E* code with err.
 */
int mt_open_store(const char *state, mt_tree **out, char *err, size_t errlen);

/*
 * mt_state_upgrade - moves the state in folder state from the layout of
 * two environments (<state>/tree, <state>/proofs) into one
 * (<state>/MT_STATE_DIR: THE STATE'S LAYOUT), every entry of both copied
 * byte for byte in one write transaction into <state>/state.tmp, which
 * is synced and then renamed; the old folders are removed only after the
 * rename. A SIGKILL at any point loses nothing: the next call throws
 * away an unfinished copy and makes it again, or removes what the
 * interrupted one left of the old layout (state_upgrade.c says why).
 * The caller holds the state's lock (no manager runs on it). Needs the
 * store's fault guards (pst_guard_faults) for a damaged old file to be
 * refused rather than crash. The environment variable
 * CHECKERS_UPGRADE_KILL=STEP (copied, synced, renamed, removed-tree)
 * kills the process with SIGKILL at that step: for the tests.
 * RETURN 1 (upgraded, or an interrupted upgrade finished), 0 (nothing
 * of the old layout there: a state of the new layout, or none), or
 * MT_ECORRUPT (a damaged old state, or a tree without its store: left
 * as it is), MT_ENOSPC, MT_EIO, with err.
 */
int mt_state_upgrade(const char *state, char *err, size_t errlen);

/* mt_info - the root, goal and database piece count of the proof in the
 * state in folder state, without loading the tree, and without writing (LMDB
 * opened MDB_RDONLY). RETURN 0 or MT_E*. */
int mt_info(const char *state, eng_pos *root, int *goal, int *db_pieces, char *err, size_t errlen);

/* mt_info_db - mt_info, and the databases' folder the proof was started
 * with into db_dir (cap bytes; "" when none was kept). */
int mt_info_db(const char *state, eng_pos *root, int *goal, int *db_pieces, char *db_dir,
               size_t cap, char *err, size_t errlen);

/* The root's bound and whether the goal is settled. */
int mt_done(const mt_tree *t);

/*
 * mt_pick - the next job: the most-proving leaf not in flight, marked in
 * flight and persisted in "jobs". Raises h when the root is resolved
 * provisionally, moves to the next question when one is answered.
 * RETURN MT_PICK_JOB (*job filled), MT_PICK_WAIT (every candidate is in
 * flight), MT_PICK_DONE (the goal is settled), or a negative MT_E*.
 */
int mt_pick(mt_tree *t, mt_job *job, char *err, size_t errlen);

/*
 * mt_result - a worker's answer to job id: the bound it claims for the
 * job's position and items (n), the records of its proof. Nothing is
 * written before admission (prover/admit.h) has checked the records as
 * the proof of the job's position over the store's admitted records.
 * ONE TRANSACTION PER RESULT (issue 42): what is proven, the node's
 * bound, score and job counters, an expansion of the node when the job
 * left it unresolved, the job answered and the backed-up records
 * (admitted too) are written in ONE write transaction of the state's
 * environment, committed before mt_result returns (so before the
 * manager's ACK): a crash keeps all of it or none, never the admitted
 * records without the tree's change. CHECKERS_RESULT_KILL=admitted kills
 * the process (SIGKILL) between the admission and the rest, for the
 * tests. After a failure other than a refusal the graph in memory may be
 * ahead of the file: the caller stops (a resume reads the file). A result for a job that is not
 * open is not checked and none of its records is kept (err says so; RETURN 0). RETURN 0;
 * MT_EREFUSED (the claim is not what the records prove, or admission refused them - forged, outside
 * the job, more than max_items (0: no limit) - nothing written, err says why: the worker is not to
 * be trusted); MT_ESTORE (the store failed or a proof contradicts the tree: damage or a bug); other
 * MT_E*.
 */
int mt_result(mt_tree *t, uint64_t id, eng_bound bound, int settled, int score, int depth,
              uint64_t nodes, uint32_t ms, const pst_item *items, size_t n, size_t max_items,
              char *err, size_t errlen);

/*
 * mt_result_in - mt_result, fenced for a caller that runs it on a thread
 * of its own while another thread reads the tree (manager/writer.h: the
 * manager's event loop keeps serving workers and the status pages while a
 * large proof is admitted). Admission, the long part, only reads the
 * graph; the graph step changes it. So fence->enter(fence->arg) is called
 * once admission has passed and before the graph changes, and returns
 * when the readers are kept out; fence->leave(fence->arg) when the graph
 * step is done, before the commit (which touches only the file). A
 * refused or failed admission calls neither. The caller's other threads
 * must not change the tree (no mt_pick, mt_release, mt_sample ...) while
 * mt_result_in runs, and read it only outside enter..leave. fence NULL:
 * exactly mt_result. RETURN as mt_result.
 */
typedef struct mt_fence {
    void (*enter)(void *arg);
    void (*leave)(void *arg);
    void *arg;
} mt_fence;

int mt_result_in(mt_tree *t, const mt_fence *fence, uint64_t id, eng_bound bound, int settled,
                 int score, int depth, uint64_t nodes, uint32_t ms, const pst_item *items, size_t n,
                 size_t max_items, char *err, size_t errlen);

/* mt_release - a job will not be answered (its worker is gone): the
 * node returns to the pool. The job stays in "jobs" for a late result.
 * RETURN 0, or the MT_E* of the pass that recomputes the flags (err
 * says why: the store refused a backed-up record). */
int mt_release(mt_tree *t, uint64_t id, char *err, size_t errlen);

/* mt_release_all - every job in flight returns to the pool.
 * RETURN 0, or an MT_E* code with err when the pass over the tree that
 * follows fails (the run is ending: the caller reports it). */
int mt_release_all(mt_tree *t, char *err, size_t errlen);

/* mt_child_scores - the scores (search.h's scale, each for its own side
 * to move) of the children of job id's position, in eng_generate (merged)
 * order, as the worker computed them (MT_SCORE_DEPTH, MT_SCORE_NODES):
 * given before mt_result, and kept with the node once that result is
 * admitted (SCORES): the children take them when the node is expanded,
 * or at once when it is expanded already. Without them (or with a count
 * that is not the number of moves) a new child gets the static
 * evaluation. */
void mt_child_scores(mt_tree *t, uint64_t id, const int16_t *scores, size_t n);

/* mt_given - job id went to worker (a number the caller chooses, not 0):
 * the node's next job will name it in mt_job.prefer. */
void mt_given(mt_tree *t, uint64_t id, uint32_t worker);

/* mt_job_wanted - is job id still worth its worker's time? Not when the
 * run is settled, when the job's own question is answered at its node,
 * when the tree has gone on to another question (a job of the first
 * question at the root or a leaf, after the root answered it), or when
 * its node is settled or below no line of open nodes from the root (a
 * sibling's result settled every parent). The root's other question is
 * wanted while it is open at the root. The manager cancels a job that is
 * not (CANCEL, manager.c: UNWANTED JOBS) and gives its worker another. */
int mt_job_wanted(const mt_tree *t, uint64_t id);

/* mt_job_open - is job id open in this proof (its result would be
 * admitted, not dropped)? RETURN 1 with *ms its time budget (0: issued
 * before this run, when budgets were not kept), or 0. */
int mt_job_open(const mt_tree *t, uint64_t id, uint32_t *ms);

void mt_stats_get(const mt_tree *t, mt_stats *out);

/*
 * mt_check_root - the independent checker (prover/check.h) over the whole
 * proof of the root, trusting nothing: what a settled result is printed
 * on. RETURN 0 (valid, and its bound settles the goal); MT_ECORRUPT (the
 * state is damaged: err names the position that fails and why);
 * MT_ESTORE (the check could not run: a damaged record or database).
 */
int mt_check_root(mt_tree *t, char *err, size_t errlen);

/*
 * mt_set_leaf_step - LEAF NUMBERS for this run: step > 0 numbers from the
 * scores, one more per step hundredths of a man; step <= 0 the uniform
 * numbers (every open leaf pn = dn = 1), the default of every tree opened.
 * Recomputes every node's numbers (one whole pass).
 * RETURN 0 or MT_E* (a write of the pass).
 */
int mt_set_leaf_step(mt_tree *t, int step, char *err, size_t errlen);

/* mt_check_numbers - for tests: runs a whole pass and compares every
 * node's bound, numbers and flag with what the incremental updates left
 * (only bounds when the graph has a cycle: numbers then have no one
 * right value).
 * RETURN 0 when they agree; MT_ECORRUPT with err naming the first node
 * that differs; other MT_E* from the pass. */
int mt_check_numbers(mt_tree *t, char *err, size_t errlen);

/* Workers' records admitted (written) since the tree was opened. */
uint64_t mt_admitted(const mt_tree *t);

/* mt_max_depth - the deepest position of the tree, in plies from the
 * root by its shortest path (a breadth-first walk of the graph). */
int mt_max_depth(const mt_tree *t);

/* mt_sample - appends the root's numbers to "hist" (progress chart). */
int mt_sample(mt_tree *t, double seconds, char *err, size_t errlen);

/* The samples of "hist", oldest first: calls fn for each. */
int mt_history(mt_tree *t,
               void (*fn)(double s, uint64_t pn, uint64_t dn, uint64_t nodes, uint64_t jobs,
                          uint64_t proved, int bound, void *arg),
               void *arg);

/* Adds manager seconds to the stored total (persisted). */
int mt_add_seconds(mt_tree *t, double s);

/*
 * mt_walk - the tree from the root, depth first, to max_depth plies,
 * children in order of the current search's preference; fn returns
 * nonzero to stop. Each node is shown once per walk line; a node already
 * on the line is shown as a leaf (a repetition).
 */
void mt_walk(const mt_tree *t, int max_depth, int (*fn)(const mt_view *v, void *arg), void *arg);

/*
 * READ-ONLY ACCESS (the proof browser: web/web.h, `checkers serve`)
 *
 * mt_open_ro - opens the tree of the state in folder state for reading
 * only: LMDB is opened MDB_RDONLY, and nothing is ever written, to the
 * tree or to its store (mt_store: opened PST_RDONLY inside the same
 * environment; a state of the old layout is upgraded first, the one
 * write a reader makes, mt_state_upgrade). The tree is loaded and its numbers
 * computed as mt_open does, so every node shows what `checkers tree`
 * shows; a backed-up bound stronger than its record (a stop between a
 * result and its backup) is shown but not written. A manager may run on
 * the same state (LMDB readers never block it): the tree is a snapshot
 * of its last commit. Only the reading functions may be called on it
 * (not mt_pick, mt_result, mt_release*, mt_sample, mt_add_seconds).
 * RETURN 0; MT_E* with err naming the file and the problem (MT_EOLD for
 * a schema 1 tree).
 */
int mt_open_ro(const char *state, const egdb *db, mt_tree **out, char *err, size_t errlen);

/* mt_lookup - the node of position p (exact, side to move included)
 * into *out (depth 0, no move). RETURN 0, or MT_EINVAL when p is not in
 * the tree. O(1). */
int mt_lookup(const mt_tree *t, const eng_pos *p, mt_view *out);

/* mt_parents - the positions of p's parents, at most cap of them into
 * out. RETURN how many parents p has (0: the root, or not in the tree). */
size_t mt_parents(const mt_tree *t, const eng_pos *p, eng_pos *out, size_t cap);

/* mt_each - every node, in creation order (the root first); fn returns
 * nonzero to stop. O(nodes). */
void mt_each(const mt_tree *t, int (*fn)(const mt_view *v, void *arg), void *arg);

/* Names of goals: "value", "win", "draw", ">=draw", "<=draw"; parse
 * returns -1 for an unknown name. */
const char *mt_goal_name(int goal);
int mt_goal_parse(const char *s);

/* Whether a bound settles a goal. */
int mt_goal_settled(int goal, eng_bound b);

const char *mt_strerror(int code);

#endif /* MANAGER_TREE_H */
