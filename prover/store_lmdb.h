/*
 * store_lmdb.h - what LMDB leaves to its caller, for prover/store.c only
 * (internal to the prover module: nothing outside store.c and
 * store_lmdb.c includes it).
 *
 * store.c holds the store's own logic (records, merging, the schema);
 * store_lmdb.c holds what any careful LMDB user needs around LMDB 0.9:
 *   - errors: LMDB's codes as PST_E* codes with messages that name the
 *     path, and the "damaged" mark that stops writing after damage;
 *   - damage: a check of LMDB's header before LMDB reads it, and guards
 *     that turn LMDB's assertions and faults on a damaged file into
 *     errors (pst_guarded);
 *   - the map: the initial size (CHECKERS_PST_MAP_BYTES), doubling on
 *     MDB_MAP_FULL and adopting another process's growth
 *     (MDB_MAP_RESIZED), both with the transaction retried;
 *   - transactions: writes retried across map growth, reads renewed from
 *     a pool.
 *
 * THREAD SAFETY
 *   As store.h: every function may be called from any thread on a shared
 *   pst_env.
 */
#ifndef PROVER_STORE_LMDB_H
#define PROVER_STORE_LMDB_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>

#include <lmdb.h>

#include "prover/store.h"

/* ---- constants ------------------------------------------------------ */

/* Reset read transactions kept per environment for reuse (see pst_env). */
#define PST_POOL 64

/* What pst_guarded returns when LMDB failed an assertion or faulted. Not
 * a PST_E* code and not an LMDB one: it never leaves the store. */
#define PST_ASSERTED (-1000)

/* ---- types ---------------------------------------------------------- */

/*
 * An open store. LMDB wants one MDB_env per process and file; the
 * pst_env wraps it with what LMDB leaves to the caller:
 *
 *   map_lock  mdb_env_set_mapsize may only run when no transaction of the
 *             process is active. Every transaction holds map_lock shared;
 *             a resize (after MDB_MAP_FULL or MDB_MAP_RESIZED) takes it
 *             exclusively. The lock prefers the resizer: with readers
 *             preferred, solver threads calling pst_get in a loop would
 *             starve a resize for ever. That is safe because no thread
 *             ever takes the lock twice: scans call back with no
 *             transaction open.
 *   pool      reset read transactions. With MDB_NOTLS a reset transaction
 *             keeps its reader slot, so renewing it skips the lock-file
 *             mutex that mdb_txn_begin takes: pst_get is on the solvers'
 *             hot path.
 *   damaged   set (with the first message) when this process has seen
 *             any damage in the file, a bad record or a bad page; from
 *             then on pst_put_many refuses to write. LMDB writes into
 *             copies of the pages on its way, and a damaged page can make
 *             it write past them or spread the damage; and whatever
 *             damaged one record may have damaged pages that reads have
 *             not met yet. The file is evidence to keep as it is.
 *   broken    set when LMDB faulted inside a write transaction and
 *             faulted again while the transaction was aborted: LMDB's
 *             state in this process can no longer be trusted, and every
 *             call fails with PST_ECORRUPT without entering LMDB again;
 *             pst_close then leaves the environment as it is (the
 *             writers' mutex is released when the process exits, which
 *             it should do soon).
 *   scope     the write transaction pst_txn_begin opened (store.h, ONE
 *             TRANSACTION): while it is open, every store call of the
 *             thread that opened it runs inside it (writes in a nested
 *             transaction of it, reads in it, so that they see its
 *             writes); other threads see the last commit, as ever.
 *             Written only by that thread, under map_lock held shared
 *             for the scope's whole life (no resize can run meanwhile).
 *   borrowed  env belongs to the caller (store.h, INSIDE A CALLER'S
 *             ENVIRONMENT): its other named databases are not the
 *             store's business, and pst_close leaves env open.
 * pool_lock guards pool and damaged.
 */
struct pst_env {
    MDB_env *env;
    MDB_dbi nodes;
    MDB_dbi meta;
    int rdonly;
    int borrowed; /* env is the caller's (pst_open_in): not closed here */
    char *path;
    pthread_rwlock_t map_lock;
    pthread_mutex_t pool_lock;
    MDB_txn *pool[PST_POOL];
    int npool;
    int damaged;
    char damage[320];
    atomic_int broken;
    MDB_txn *scope;     /* the open write transaction of pst_txn_begin, or NULL */
    pthread_t scope_by; /* the thread that opened it */
};

/* A write transaction body: returns 0, an LMDB code, or a PST_E* code
 * with err written. It may run more than once (see pst_write). */
typedef int (*pst_txn_fn)(pst_env *s, MDB_txn *txn, void *arg, char *err, size_t errlen);

/* ---- errors --------------------------------------------------------- */

/* Messages go into err through eng_errf (engine.h). */

/* An LMDB or errno code as a PST_E* code (a PST_E* code stays). */
int pst_code_of(int rc);

/* Marks s damaged with msg, unless it is already (the first one stays). */
void pst_set_damaged(pst_env *s, const char *msg);

/*
 * pst_lmdb_fail - err = "PATH: what: LMDB's message" for an LMDB or
 * errno code rc (a PST_E* code is returned as it is: its message is
 * written). Marks s damaged when the code says damage.
 * RETURN the PST_E* code.
 */
int pst_lmdb_fail(pst_env *s, int rc, const char *what, char *err, size_t errlen);

/* The error of a guarded stretch that LMDB could not finish
 * (PST_ASSERTED, amsg from pst_guarded): err, the damaged mark,
 * PST_ECORRUPT. */
int pst_damaged_fail(pst_env *s, const char *what, const char *amsg, char *err, size_t errlen);

/* The error of every call once s is broken: PST_ECORRUPT. */
int pst_broken_fail(pst_env *s, char *err, size_t errlen);

/* ---- opening -------------------------------------------------------- */

/* The initial map size: 1 GiB, or CHECKERS_PST_MAP_BYTES (PST_EINVAL
 * with err for a value that is not a byte count in range). */
int pst_map_initial(size_t *out, char *err, size_t errlen);

/*
 * pst_check_header - checks the LMDB header of file (path's data.mdb)
 * before LMDB reads it, retrying a few times 20 ms apart (a writer may be
 * rewriting it, a store may be in creation).
 * RETURN 0 (also for no file or an empty one), PST_ECORRUPT or
 * PST_EVERSION with err, PST_EIO.
 */
int pst_check_header(const char *path, const char *file, char *err, size_t errlen);

/* LMDB's assertion callback (mdb_env_set_assert): jumps back to the
 * running pst_guarded stretch of the thread, if any. */
void pst_on_assert(MDB_env *env, const char *msg);

/* Installs the SIGSEGV and SIGBUS handlers of the guards, chaining to
 * whatever was there, once per process (pthread_once: the actions it
 * saves are written once and then only read; store_lmdb.c, "What state
 * the guards keep"). Called by pst_guard_faults (store.h), which only a
 * program calls: never a library function. */
void pst_fault_install(void);

/*
 * pst_guarded - runs fn(arg) and returns its value, or PST_ASSERTED with
 * what happened in msg when LMDB failed an assertion or faulted inside
 * it. fn must keep whatever its caller needs for cleanup (transaction,
 * cursor) in arg's memory: after the jump only arg is known.
 */
int pst_guarded(int (*fn)(void *arg), void *arg, char *msg, size_t msglen);

/* ---- transactions --------------------------------------------------- */

/*
 * pst_write - runs fn in a write transaction and commits it, guarded,
 * retrying the whole transaction after the map grew (MDB_MAP_FULL) or
 * another process grew it (MDB_MAP_RESIZED).
 * RETURN 0 or a PST_E* code with err.
 */
int pst_write(pst_env *s, pst_txn_fn fn, void *arg, char *err, size_t errlen);

/*
 * pst_read_begin - a live read transaction (renewed from the pool when
 * one is there), with map_lock held shared; adopts another process's map
 * growth first if need be. End it with pst_read_end, or with
 * pst_read_fail after LMDB failed inside it.
 * RETURN 0 or an LMDB code (map_lock not held).
 */
int pst_read_begin(pst_env *s, MDB_txn **out);

/* Resets txn into the pool and releases map_lock. */
void pst_read_end(pst_env *s, MDB_txn *txn);

/* Aborts txn (not pooled) and releases map_lock. */
void pst_read_fail(pst_env *s, MDB_txn *txn);

/* Nonzero when the calling thread has s's scope open (pst_txn_begin). */
int pst_in_scope(pst_env *s);

#endif /* PROVER_STORE_LMDB_H */
