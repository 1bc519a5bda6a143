/*
 * manager.h - the proof-tree manager and its solver workers: the manual
 * of the manager module.
 *
 * THE PIECES (seed 003, sections 3.2-3.4: Chinook's manager and solvers)
 *   tree.h      the proof tree: best-first PN-search over the positions
 *               below the root, bounds backed up into the proof store,
 *               threshold iteration, jobs in flight; all in LMDB.
 *   protocol.h  the wire protocol, message by message.
 *   manager.c   mgr_run: the event loop (libevent) that listens for
 *               workers, hands out jobs, takes results, keeps leases and
 *               heartbeats and shows progress. Its status pages are not
 *               its own: a module above it (web/, the proof browser)
 *               serves them through mgr_pages, reading the run's own
 *               figures with mgr_live_get (STATUS PAGES below).
 *   peer.c      what both ends of a connection share: the token file
 *               (mgr_read_token) and a peer's text made safe for a log
 *               (mgr_printable).
 *   worker.c    wrk_run: one solver process. It connects, says HELLO,
 *               and answers jobs: df-pn (prover.h) for the job's goal
 *               with 85% of the budget, then alpha-beta (a heuristic score
 *               for the tree) with 15% of it, or less when df-pn ended
 *               sooner (worker.c, ALPHA-BETA AFTER DF-PN), and none when
 *               df-pn proved the exact value (AN EXACT VALUE NEEDS NO
 *               SCORE). Its proof
 *               is written to its own store, and the records the writer
 *               produced, with the stored records they rest on that the
 *               manager has not ACKed, are sent (padm_gather,
 *               prover/admit.h, WHAT A WORKER SENDS) to the manager,
 *               which admits them (ADMISSION): the one check, so that the
 *               state directory holds every proof it relies on, each one
 *               checked.
 *
 * STATE DIRECTORY (--state DIR)
 *   DIR/state    one LMDB environment (tree.h, THE STATE'S LAYOUT): the
 *                tree (tree.h, PERSISTENCE) and the proof store
 *                (prover/store.h): every admitted worker proof and every
 *                backed-up tree node, nothing unchecked; `proof check
 *                --state DIR` checks the root's record here. A state of
 *                the old layout (DIR/tree and DIR/proofs) is upgraded
 *                into it when it is opened.
 *   DIR/token    the workers' shared secret (SECURITY), mode 0600
 *   DIR/workers  the local workers' logs and their one shared store (store/)
 *   A worker's result is committed to the store (and the tree) before it
 *   is acknowledged. Kill the manager at any moment: `checkers prove
 *   --state DIR` resumes, and no proven node is lost (bounds are read
 *   back from the store).
 *
 * GOALS (--goal)
 *   value   the exact value (two questions; a draw needs both bounds);
 *   win     does the side to move win (settled by win, or <=draw);
 *   draw    is it a draw (both bounds, or the proof that one side wins);
 *   >=draw  does the side to move at least draw;
 *   <=draw  does the side to move at most draw (the published table's
 *           "<=Draw" openings need only this one).
 *
 * LEASES, HEARTBEATS, FAILURES
 *   Each side sends HEARTBEAT every MGR_HEARTBEAT_MS; a connection silent
 *   for MGR_SILENCE_MS is closed, and one that has not said HELLO within
 *   MGR_HELLO_MS (it holds a place under --max-connections). A job's
 *   lease is its time budget plus
 *   MGR_LEASE_GRACE_MS: past it, the job goes back to the pool (a late
 *   result is still taken: results are facts). A connection closed for
 *   any reason returns its job to the pool. A malformed, oversized or
 *   unexpected frame, a wrong token or version closes that connection
 *   with a logged reason (the token itself is never logged); the manager
 *   goes on. Workers reconnect with backoff (0.5 s doubling to 30 s) and
 *   resend a result the manager did not acknowledge.
 *
 * SECURITY
 *   Every connection must give the token, loopback too: on a shared
 *   machine any local user can reach the loopback port. Without
 *   --token-file the manager makes a random one (32 bytes from
 *   getrandom, in hex) at the first start and keeps it in <state>/token,
 *   mode 0600, where its local workers read it; give that file to remote
 *   workers. By default the manager listens on 127.0.0.1 only;
 *   --listen HOST:PORT on any other address needs --token-file (a secret
 *   chosen for the network on purpose) of at least MGR_TOKEN_MIN
 *   characters: 32 hex digits are 128 random bits, beyond guessing over
 *   a network (a short one is refused, exit 2; <state>/token, made by
 *   the first start, qualifies). The file's first line is the shared
 *   secret, compared in constant time.
 *
 * ADMISSION
 *   A worker's records are checked before anything of them is written
 *   (prover/admit.h, through mt_result): a batch that is forged, claims
 *   more than it proves, holds records outside its job, is truncated or
 *   has more than --max-proof-records records costs the worker its
 *   connection (logged with its name) and its job goes back to the pool;
 *   the proof never pays for it. A job may send at most what admission
 *   checks in a fraction of the job's own time (MGR_PROOF_PER_S records a
 *   second of its budget, at least MGR_PROOF_FLOOR; admission checks
 *   about 560,000 a second here), so that a flood of records neither
 *   stalls the event loop for longer than the job ran nor holds memory
 *   the size of --max-proof-records; the records of a job not open in
 *   the proof (answered, or of another proof) are counted, never held. A
 *   batch's memory goes back to the system once it is handled.
 *
 * STATUS PAGES
 *   The manager knows nothing of HTTP. mgr_opts.pages, when set, is a
 *   set of calls it makes from its event loop: start once the proof is
 *   open (with the loop, the tree, the store and the databases, in a
 *   mgr_proof), sample every ten seconds, stop at the end. What only the
 *   run knows (its workers, their jobs, jobs a minute, this run's time)
 *   the pages read with mgr_live_get on each request. `checkers prove
 *   --status-port` fills them in from web/web.h (web_live_pages), so
 *   that the dependency points one way: web/ above manager/.
 *
 * THREAD SAFETY
 *   mgr_run and wrk_run each own their process's event loop; the worker
 *   solves on a second thread and hands results back through a socket
 *   pair. The mgr_pages calls and mgr_live_get run on the manager's
 *   event loop thread only.
 */
#ifndef MANAGER_MANAGER_H
#define MANAGER_MANAGER_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include "egdb/egdb.h"
#include "engine/engine.h"
#include "manager/tree.h"
#include "prover/search.h"
#include "prover/store.h"

struct event_base;

/* ---- constants ------------------------------------------------------ */

#define MGR_HEARTBEAT_MS 2000
#define MGR_SILENCE_MS 15000
#define MGR_LEASE_GRACE_MS 30000
#define MGR_HELLO_MS 5000 /* a connection must say HELLO within this */
#define MGR_HELLO_TEXT "5 s"

#define MGR_TOKEN_MIN 32    /* characters of a token beyond loopback (SECURITY) */
#define MGR_LIVE_WORKERS 64 /* workers described by mgr_live_get (all are counted) */

enum mgr_exit { MGR_PROVED = 0, MGR_STOPPED = 1, MGR_USAGE = 2, MGR_DAMAGED = 3 };

/* ---- types ---------------------------------------------------------- */

typedef struct mgr_opts {
    const char *state;             /* state directory */
    const char *db_dir;            /* databases (NULL: none) */
    const mt_create *create;       /* a new proof, or NULL to resume */
    int workers;                   /* local workers to start */
    const char *listen;            /* HOST:PORT, NULL: 127.0.0.1 on any free port */
    const char *token_file;        /* NULL: <state>/token, made at the first start */
    double budget;                 /* seconds for this run, 0: none */
    const struct mgr_pages *pages; /* the status pages (STATUS PAGES), or NULL */
    const char *exe;               /* this program, for local workers */
    size_t cache_bytes;            /* database cache */
    int quiet;                     /* no progress line */
    const char *cmdline;           /* how to continue (printed at a stop) */
    size_t max_proof;              /* records one job may send (0: MGR_PROOF_DEFAULT) */
    int max_conns;                 /* connections at once (0: MGR_MAX_CONNS); more are
                                      refused, logged once a second */
    int leaf_step;                 /* mt_set_leaf_step's step for this run (0: the
                                      default, uniform leaf numbers) */
    const char *ghi;               /* the local workers' --ghi word (prv_ghi_parse);
                                      NULL: their default */
    unsigned tt_mb;                /* the local workers' df-pn table (--tt MB);
                                      0: their default */
    const char *tt_kept;           /* memory for the proven positions their table
                                      gives up (--tt-kept MB, as given); NULL:
                                      their default */
} mgr_opts;

/* Records one job may send unless --max-proof-records says otherwise: a
 * 30 s job of df-pn proves a few hundred thousand positions at most; a
 * batch is staged in memory (about 50 bytes a record) before admission. */
#define MGR_PROOF_DEFAULT ((size_t)4 << 20)
/* A job's records at most, besides --max-proof-records: MGR_PROOF_FLOOR,
 * or MGR_PROOF_PER_S a second of the job's time budget, whichever is
 * more (manager.c, PROOF BOUND). */
#define MGR_PROOF_FLOOR ((size_t)1 << 16)
#define MGR_PROOF_PER_S ((size_t)100000)

/* ---- the status pages' side (STATUS PAGES) ---------------------------- */

typedef struct mgr mgr; /* a running manager (mgr_run's; opaque) */

/* One connected worker, as mgr_live_get describes it. */
typedef struct mgr_worker_view {
    uint32_t id;
    char name[136]; /* as it said in HELLO, made printable (mgr_printable) */
    char addr[80];
    int has_job;
    uint64_t job_id;
    eng_pos job_pos;        /* the job's position (a leaf in flight) */
    double job_s;           /* seconds it has run */
    uint32_t job_budget_ms; /* its budget */
    uint64_t jobs_done;
    double connected_s;
} mgr_worker_view;

/* What only a running manager knows, beside the tree's own figures. */
typedef struct mgr_live {
    double run_s;                              /* seconds of this run */
    double unsaved_s;                          /* seconds not yet added to the tree's total */
    double per_minute;                         /* jobs answered in the last minute */
    size_t nworkers;                           /* workers connected (all of them) */
    mgr_worker_view workers[MGR_LIVE_WORKERS]; /* the first of them */
} mgr_live;

/* The proof a running manager has open, handed to mgr_pages.start. All
 * of it belongs to the manager and lives until mgr_pages.stop; it is
 * read from the event loop's thread only. */
typedef struct mgr_proof {
    mgr *m;                  /* for mgr_live_get */
    struct event_base *base; /* the manager's event loop: the pages run in it */
    mt_tree *tree;
    pst_env *store;
    const egdb *db; /* NULL: a proof without databases */
    const char *state;
} mgr_proof;

/* The calls a running manager makes to its status pages, all from its
 * event loop. start: once the proof is open and the workers' port
 * listens; RETURN 0, or -1 after saying why on stderr (the run then
 * stops with MGR_USAGE). sample: every ten seconds, with this run's
 * seconds. stop: once at the end, whether start succeeded or not (NULL
 * members are not called). */
typedef struct mgr_pages {
    int (*start)(void *arg, const mgr_proof *p);
    void (*sample)(void *arg, double run_s);
    void (*stop)(void *arg);
    void *arg;
} mgr_pages;

typedef struct wrk_opts {
    const char *connect;          /* HOST:PORT */
    const char *token_file;       /* may be NULL */
    const char *db_dir;           /* may be NULL (only terminal leaves) */
    const char *store;            /* the worker's store directory; NULL: one per host and
                                   * piece count beside the databases (worker.c,
                                   * THE DEFAULT STORE) */
    size_t cache_bytes, tt_bytes; /* tt_bytes: the df-pn table; the alpha-beta table
                                   * gets a quarter (at least 16 MB) */
    size_t tt_kept_bytes;         /* memory for the proven positions the df-pn
                                   * table gives up (dfpn_set_kept); 0: none */
    int ghi;                      /* prv_opts.ghi of every job (PRV_GHI_*) */
    int die_with_parent;          /* local worker: exit when the manager dies */
    int once;                     /* exit after the first disconnection (tests) */
} wrk_opts;

/* ---- functions ------------------------------------------------------ */

/*
 * mgr_run - runs (or resumes) the proof in o->state until the goal is
 * settled, the budget runs out, or SIGINT/SIGTERM. Prints the progress
 * line on stderr (a terminal: in place; otherwise one line every ten
 * seconds) and, on stdout, first `ROOT<TAB>RESULT` (RESULT as `checkers
 * solve` prints it), then where the proof stands.
 * RETURN an mgr_exit code: MGR_PROVED, MGR_STOPPED (budget or signal;
 * the state is whole), MGR_USAGE (bad options: message on stderr),
 * MGR_DAMAGED (a damaged database, store or tree).
 * SIGPIPE: blocked for the calling thread while the event loop runs
 * (manager/loop.h); the process's disposition is left alone (it was set
 * to SIG_IGN for the whole process before issue 42). Same for wrk_run.
 */
int mgr_run(const mgr_opts *o);

/*
 * mgr_live_get - a running manager's own figures into *out: this run's
 * time, jobs a minute, the workers connected and their jobs (the first
 * MGR_LIVE_WORKERS of them; nworkers counts all). For the status pages
 * (mgr_pages); call it from the manager's event loop only, as those are.
 */
void mgr_live_get(const mgr *m, mgr_live *out);

/* wrk_run - one worker, until SIGINT/SIGTERM (or a fatal refusal:
 * version or token). RETURN a process exit code. */
int wrk_run(const wrk_opts *o);

/*
 * wrk_score - the heuristic score a worker gives a position for the tree
 * (manager/tree.h, SCORES): alpha-beta to MT_SCORE_DEPTH plies and at
 * most MT_SCORE_NODES nodes on ab (databases db of scope db_pieces, may
 * be NULL), the static evaluation when the search fails. The workers
 * score the children of a job's position with it (protocol.h, RESULT),
 * and `checkers prove` the root of a new proof, once, before the manager
 * runs (mt_create.root_score): the manager runs no search of its own.
 * RETURN the score (search.h's scale, for p's side to move, clamped to
 * +-32000) and *depth its depth (0: the static evaluation). ab belongs
 * to the calling thread.
 */
int wrk_score(ab_ctx *ab, const egdb *db, int db_pieces, const eng_pos *p, int *depth);

/* mgr_printable - in with every control byte (and the backslash) written
 * as \xNN, cut to fit cap: for anything a peer sent that reaches a log,
 * so that a name cannot forge a log line or send escape codes to a
 * terminal. */
void mgr_printable(const char *in, char *out, size_t cap);

/* mgr_vlog - one line of a run's log on stderr: "HH:MM:SS who: message",
 * local time; clear (may be NULL) is written first (the manager's
 * "\r\033[K" over its live progress line on a terminal). The manager's
 * and the worker's logs are the one format. */
void mgr_vlog(const char *clear, const char *who, const char *fmt, va_list ap)
    __attribute__((format(printf, 3, 0)));

/* Reads the first line of a token file into buf (without the newline).
 * RETURN 0, or -1 with err saying why (missing, empty, too long). */
int mgr_read_token(const char *path, char *buf, size_t cap, char *err, size_t errlen);

#endif /* MANAGER_MANAGER_H */
