/*
 * store.h - the proven-node store: path-independent proof results in LMDB.
 *
 * One LMDB environment (a directory holding data.mdb and lock.mdb) shared
 * by every solver process of a machine. Solvers read it before searching
 * and write the whole proof of every goal they prove into it; the checker
 * (check.h) reads it back and verifies the proofs from scratch.
 *
 * WHAT A RECORD SAYS
 *   A record belongs to one position and says, for its side to move:
 *     bound   what has been proven about the value (engine/value.h: LL, LD,
 *             DD, DW, WW; never LW, which says nothing);
 *     win     when lo == WIN: the move that keeps the win proof;
 *     draw    when lo >= DRAW: the move that keeps the "at least a draw"
 *             proof (a win record may have only the win move; the checker
 *             then uses that move for the weaker goal too);
 *     effort  the search effort (df-pn nodes) behind the record;
 *     length  for a win or loss record: an upper bound on the plies of the
 *             win proof below it (0: unknown); a win proof's child always
 *             has a smaller length, which is how the writer keeps win
 *             proofs acyclic.
 *   No move is stored where the side to move is the defender (hi <= DRAW
 *   or LOSS): the proof covers every reply there.
 *
 * THE INVARIANT
 *   A record is only ever written together with (in the same transaction
 *   as, or after) the records of the whole proof below it. Whatever the
 *   store holds is therefore a set of complete proofs, and `proof check`
 *   can verify any record from scratch.
 *
 * MERGING
 *   Writing a record for a position that already has one intersects the
 *   bounds (lo = max, hi = min). A stored move is never replaced (so that
 *   a proof once written cannot be broken by a later writer); a move is
 *   added where there was none. effort is the larger of the two. length
 *   goes with the win or loss proof it measures: a stored WW or LL keeps
 *   its length, a win or loss that the new record brings brings its
 *   length, and otherwise the first nonzero length is kept. If the
 *   intersection is empty, the new record contradicts a stored proof:
 *   the whole batch is refused with PST_ECONTRADICT, nothing is written,
 *   and the message names the position. That is a bug somewhere, and the
 *   store keeps the evidence.
 *
 * KEYS AND FILE FORMAT (schema 1; little-endian throughout)
 *   Named database "nodes":
 *     key   16 bytes: the canonical position (engine eng_canonical: Black to
 *           move) as four u32: black men, white men, black kings, white
 *           kings. Never a hash: with billions of records a 64-bit
 *           collision would be a silent wrong value.
 *     value 32 bytes:
 *       0      u8  record format (1)
 *       1      u8  bound (eng_bound code 0..4)
 *       2      u8  flags: bit 0 win move present, bit 1 draw move present
 *       3      u8  0
 *       4..9       win move:  from u8, to u8, captured u32 (squares 0-based,
 *                  in the canonical position's orientation)
 *       10..15     draw move: the same
 *       16..23 u64 effort
 *       24..25 u16 length
 *       26..27     0
 *       28..31 u32 XXH32 (seed 0) of the 16 key bytes followed by value
 *                  bytes 0..27: a damaged record is refused, never read as
 *                  a value.
 *     A move is named by (from, to, captured): the engine merges capture
 *     routes with the same three (ENG_DUPS_MERGE), so the triple names
 *     exactly one move of eng_generate.
 *   Named database "meta":
 *     "schema"  the text "checkers-proof-store 1". A store without it, or
 *               with another text, is refused (PST_EVERSION) and left
 *               untouched.
 *     "owner"   the owner label (THE OWNER), when set.
 *     "egdb-scope"  the databases the proofs rest on (THE DATABASES'
 *               SCOPE), when a writer noted them.
 *
 * CONCURRENCY AND CRASHES
 *   LMDB serialises writers across processes and commits atomically: a
 *   writer killed with SIGKILL mid-transaction leaves the last committed
 *   state. Any number of processes may open the same store. The map size
 *   starts at 1 GiB and grows (doubling) on MDB_MAP_FULL; a process that
 *   sees another process's growth (MDB_MAP_RESIZED) adopts it.
 *   The environment variable CHECKERS_PST_MAP_BYTES, read by pst_open,
 *   sets the initial map size in bytes (4096 to 2^46; anything else is
 *   refused with PST_EINVAL): the tests use a small one to make the map
 *   grow with a few thousand records.
 *
 * THREAD SAFETY
 *   A pst_env may be used from several threads of one process (LMDB is
 *   opened with MDB_NOTLS); each call opens its own transaction. It
 *   belongs to the process that opened it: a child of fork() opens its
 *   own (LMDB's rule), and one process opens a store once.
 *
 * ERRORS
 *   0 on success, a negative PST_E* code otherwise; functions with an err
 *   buffer say what and where (the path, the LMDB message, the position).
 *
 * DAMAGED FILES
 *   A damaged file or record is PST_ECORRUPT (or PST_EVERSION when the
 *   damage hides the schema), never a value. LMDB 0.9 trusts its pages
 *   and aborts or faults on some damage; pst_open therefore checks LMDB's
 *   header itself, and sets LMDB's assertion callback; a program that
 *   calls pst_guard_faults also has SIGSEGV and SIGBUS handlers that turn
 *   a fault inside the store's own LMDB calls into PST_ECORRUPT and pass
 *   every other fault on to the handler that was there before (or to the
 *   default action). Once a process has
 *   seen damage in a store, pst_put_many refuses to write to it
 *   (PST_ECORRUPT): the file is evidence. Reads are safe on any damage;
 *   a write into a damaged page that no read has met can still corrupt
 *   the writing process's heap inside LMDB (the file is not changed).
 */
#ifndef PROVER_STORE_H
#define PROVER_STORE_H

#include <stddef.h>
#include <stdint.h>

#include "engine/engine.h"
#include "engine/value.h"

/* ---- constants ------------------------------------------------------ */

enum pst_err {
    PST_OK = 0,
    PST_EIO = -301,         /* the environment cannot be opened or written     */
    PST_EVERSION = -302,    /* not a proof store, or another schema version     */
    PST_ECORRUPT = -303,    /* a damaged file or record (checksum, size, code)  */
    PST_ENOTFOUND = -304,   /* no record for the position                       */
    PST_ECONTRADICT = -305, /* a new record contradicts a stored one            */
    PST_ENOMEM = -306,
    PST_EINVAL = -307,    /* bad argument (invalid position, LW bound, bad move) */
    PST_EREADONLY = -308, /* a write to a store opened read-only                 */
    PST_ENOSPC = -309     /* a write failed on a full disk: nothing written, retry */
};

enum { PST_RDONLY = 1 }; /* pst_open flag: never write (proof check, stats) */

#define PST_SCHEMA "checkers-proof-store 1"
#define PST_NOMOVE 0xFF /* pst_move.from of an absent move */

/* ---- types ---------------------------------------------------------- */

typedef struct pst_env pst_env; /* an open store (opaque) */

/* A move by origin, destination and captured set (0-based squares). */
typedef struct pst_move {
    uint8_t from; /* PST_NOMOVE: no move */
    uint8_t to;
    uint32_t captured;
} pst_move;

typedef struct pst_record {
    eng_bound bound; /* for the side to move of the position it is read for */
    pst_move win;    /* proves "side to move wins"           (or from == PST_NOMOVE) */
    pst_move draw;   /* proves "side to move at least draws" (or from == PST_NOMOVE) */
    uint64_t effort;
    uint16_t length;
} pst_record;

/* One record to write, for a position in any orientation. */
typedef struct pst_item {
    eng_pos pos;
    pst_record rec;
} pst_item;

typedef struct pst_stats {
    uint64_t records;
    uint64_t by_bound[ENG_NBOUNDS]; /* records by bound code */
    uint64_t with_win_move, with_draw_move;
    uint64_t by_pieces[25]; /* records by piece count */
    uint64_t map_bytes;     /* current map size */
    uint64_t used_bytes;    /* pages in use * page size */
} pst_stats;

/* ---- functions ------------------------------------------------------ */

/*
 * pst_open - opens (creating if needed, unless PST_RDONLY) the store in
 * directory path (created if missing).
 * RETURN 0 and *out; PST_EVERSION for a foreign or other-version store,
 * PST_ECORRUPT for a damaged one, PST_EIO otherwise, err saying which and
 * why. Nothing is written to a store that is refused.
 */
int pst_open(const char *path, int flags, pst_env **out, char *err, size_t errlen);

void pst_close(pst_env *env);

/*
 * pst_get - the record of p (in p's orientation: moves are translated to
 * p's squares when p has White to move; the bound is for p's side to
 * move).
 * RETURN 0; PST_ENOTFOUND; PST_ECORRUPT (a record fails its checksum or
 * holds an invalid code: never returned as a value); PST_EINVAL.
 */
int pst_get(pst_env *env, const eng_pos *p, pst_record *out);

/*
 * pst_put_many - writes n records in one transaction, merging each with
 * what is stored (see MERGING). Either every record is written or none.
 * A batch that changes no stored record writes nothing (no transaction).
 * RETURN 0; PST_ECONTRADICT (err names the position and both bounds);
 * PST_EINVAL (an invalid position, a record with bound LW, a move its
 * bound has no use for (a win move needs WW, a draw move lo >= DRAW) or
 * a move that is not legal in its position, named in err);
 * PST_EREADONLY; PST_ECORRUPT (the store is
 * damaged, see DAMAGED FILES); PST_EIO.
 */
int pst_put_many(pst_env *env, const pst_item *items, size_t n, char *err, size_t errlen);

/* pst_stats - counts every record (a full scan). */
int pst_stats_get(pst_env *env, pst_stats *out, char *err, size_t errlen);

/*
 * THE OWNER
 *   A store may carry one owner label: the identity of the proof it
 *   belongs to (the manager writes its tree's id into <state>/proofs).
 *   The label lets the owner tell its own store from a missing, emptied
 *   or swapped one, together with the record count, which only grows:
 *   records are merged, never deleted.
 *
 * pst_owner - the owner label into owner (cap bytes; "" when the store
 * has none) and the number of records (LMDB's entry count: no scan).
 * RETURN 0 or a PST_E* code with err.
 */
#define PST_OWNER_MAX 64
int pst_owner(pst_env *env, char *owner, size_t cap, uint64_t *records, char *err, size_t errlen);

/*
 * pst_owner_set - labels the store with owner (printable, shorter than
 * PST_OWNER_MAX) unless it carries that label already.
 * RETURN 0, PST_ECONTRADICT when it carries another one (err names both),
 * or another PST_E* code with err.
 */
int pst_owner_set(pst_env *env, const char *owner, char *err, size_t errlen);

/*
 * THE DATABASES' SCOPE
 *   Meta key "egdb-scope" (4 bytes, little endian): the union
 *   (egdb_scope_union) of the endgame databases' scopes (egdb/egdb.h:
 *   complete piece counts, splits of the next count, the partial flag)
 *   that the writers of the store's proofs said they used. A proof takes
 *   positions inside its databases as leaves and stores nothing for them,
 *   so a check with smaller databases finds those positions without a
 *   record; with the scope recorded, `proof check` tells that apart from
 *   a proof that is wrong (cli/check_cmds.c). Stores from before stop 58
 *   have no key: scope 0, "not recorded".
 *
 * pst_scope_note - merges scope into the store's recorded one (no write
 * when it adds nothing). RETURN 0 or a PST_E* code with err.
 * pst_scope - the recorded scope into *scope (0: none recorded, or a
 * value of another size, which pst_scope_note leaves as it is: a help
 * this program cannot read is never taken for damage).
 * RETURN 0 or a PST_E* code with err.
 */
int pst_scope_note(pst_env *env, int scope, char *err, size_t errlen);
int pst_scope(pst_env *env, int *scope, char *err, size_t errlen);

/* pst_path - the store's folder, as given to pst_open. */
const char *pst_path(const pst_env *env);

/*
 * pst_foreach - calls fn for every record, in key order, with the
 * canonical position (Black to move) and its record; stops early and
 * returns fn's value when fn returns nonzero. A damaged record stops the
 * scan with PST_ECORRUPT (err names the key), after the records before
 * it. fn runs with no transaction open, so it may call pst_get and
 * pst_put_many; the scan reads in chunks, so with writers at work it is
 * not a snapshot (each record it shows is whole and checked).
 */
int pst_foreach(pst_env *env, int (*fn)(const eng_pos *p, const pst_record *r, void *arg),
                void *arg, char *err, size_t errlen);

/* The move of p that pm names, found among eng_generate(p, MERGE).
 * RETURN 0 and *out, or PST_EINVAL when pm names no legal move. */
int pst_move_find(const eng_pos *p, const pst_move *pm, eng_move *out);

/* The pst_move naming m. */
pst_move pst_move_of(const eng_move *m);

/* Encodes / decodes one record value (32 bytes) for a 16-byte key: the
 * pure functions under pst_get and pst_put_many, exposed for the fuzz
 * test. pst_decode RETURN 0 or PST_ECORRUPT. */
void pst_encode(const uint8_t key[16], const pst_record *r, uint8_t val[32]);
int pst_decode(const uint8_t key[16], const uint8_t *val, size_t len, pst_record *out);

/*
 * pst_item_encode - the 16-byte key and the 32-byte value that
 * pst_put_many writes for it (before any merge with a stored record): the
 * key of its canonical position and its record with the moves turned to
 * the canonical squares when it has White to move. For carrying records
 * between processes (the manager's PROOF messages, manager/protocol.h).
 * No validation: give it what pst_put_many would accept.
 */
void pst_item_encode(const pst_item *it, uint8_t key[16], uint8_t val[32]);

/*
 * pst_item_decode - the inverse of pst_item_encode: out->pos is the
 * canonical position of the key (Black to move), out->rec the record
 * pst_decode reads from val (len bytes), in that orientation. Moves are
 * not checked for legality (pst_put_many does that).
 * RETURN 0; PST_ECORRUPT (pst_decode refuses the value: size, checksum,
 * codes); PST_EINVAL (the key is not a valid position, or a NULL
 * argument). *out is written only on success.
 */
int pst_item_decode(const uint8_t key[16], const uint8_t *val, size_t len, pst_item *out);

/* pst_item_check - the checks pst_put_many makes of one record (item
 * number i, for the message): a valid position, a bound that says
 * something, moves its bound has a use for and that are legal.
 * RETURN 0 or PST_EINVAL with err naming the record and the problem. */
int pst_item_check(const pst_item *it, size_t i, char *err, size_t errlen);

/* pst_record_merge - the MERGING rule on two records of one position in
 * one orientation. RETURN 0 and *out, or PST_ECONTRADICT. */
int pst_record_merge(const pst_record *old, const pst_record *new, pst_record *out);

/* pst_record_turn - a record's moves turned to the colour-flipped twin of
 * its position (the bound, for the side to move, stays). Its own
 * inverse: a White-to-move position's record from the canonical one and
 * back. */
void pst_record_turn(pst_record *r);

/*
 * pst_disk_full - after a write failed (ENOSPC, or the EIO LMDB gives for
 * a short write): is the filesystem of path (nearly) full? Less than
 * PST_FULL_BYTES free counts as full: a commit writes many pages at once.
 * *free_bytes gets what is free. RETURN nonzero when full.
 */
#define PST_FULL_BYTES ((uint64_t)16 << 20)
int pst_disk_full(const char *path, uint64_t *free_bytes);

/*
 * pst_lmdb_check - the checks pst_open makes of an LMDB file before LMDB
 * reads it (its two meta pages: magic, data format, page size, and that
 * the pages they name lie inside the file), for another LMDB environment
 * of the project (the manager's tree): LMDB 0.9 trusts those fields, and
 * a truncated file makes it read past the end (SIGBUS). dir is the
 * environment's directory, for the message.
 * RETURN 0 (also for a missing or empty file: LMDB writes it), or
 * PST_ECORRUPT / PST_EVERSION / PST_EIO with err naming the file and
 * what is wrong.
 */
int pst_lmdb_check(const char *dir, char *err, size_t errlen);

/*
 * pst_lmdb_prepare - makes a full disk an error, not a crash, for an
 * LMDB environment in dir about to be opened for writing (the store's,
 * the manager's tree): the lock file's pages are allocated (LMDB writes
 * into a map of it, and on a full tmpfs an unbacked page is SIGBUS), for
 * maxreaders reader slots when it is new; and a data file that LMDB
 * began and a full disk cut short before its first commit (less than two
 * pages: it never held data) is emptied, so that LMDB writes it again,
 * when no other process has the environment open. Call it before
 * mdb_env_open, in a process that does not have the environment open
 * (store_lmdb.c says why).
 * RETURN 0, PST_ENOSPC (err: the disk is full, nothing lost), PST_EIO.
 */
int pst_lmdb_prepare(const char *dir, unsigned maxreaders, char *err, size_t errlen);

/*
 * pst_lmdb_walk - reads every page of another LMDB environment of the
 * project (the manager's tree), open but not yet read: the free list,
 * the main table, each named table it lists, and every key and value
 * byte, with LMDB's assertions and faults guarded as the store's own
 * reads are (DAMAGED FILES). LMDB has no page checksums: a damaged
 * branch or leaf page is found when a read follows it, and a program
 * that reads its tree page by page at open would otherwise end there,
 * by SIGSEGV, SIGBUS or abort, instead of naming the damage. After the
 * walk passes, every page the tree's data reaches has been read once
 * without a fault. Sets env's assertion callback to the guards'. dir is
 * the environment's directory, for the message.
 * RETURN 0, PST_ECORRUPT with err naming the file, the table and what
 * LMDB met, or PST_EIO (LMDB could not begin a read).
 */
struct MDB_env;
int pst_lmdb_walk(struct MDB_env *env, const char *dir, char *err, size_t errlen);

/*
 * INSIDE A CALLER'S ENVIRONMENT (issue 42: one environment, one
 * transaction)
 *   A store may live inside an LMDB environment that its caller owns
 *   (the manager's state: the proof tree's named databases and the
 *   store's in one data.mdb), so that one write transaction can change
 *   both: a crash then keeps both changes or neither. The store's named
 *   databases keep their names ("nodes", "meta": KEYS AND FILE FORMAT),
 *   so pst_open on such an environment's folder, in a process that does
 *   not have it open already, reads the same store (`store stats`,
 *   `proof check` on a state); the caller's own databases must carry
 *   other names.
 *
 *   The caller creates the environment with MDB_NOTLS (the store pools
 *   read transactions across threads), room for two more named
 *   databases (mdb_env_set_maxdbs); pst_open_in sets the environment's
 *   assertion callback to the store's guards (DAMAGED FILES). The caller
 *   closes the environment after pst_close. The store grows the map on
 *   MDB_MAP_FULL, which LMDB allows only while no transaction of the
 *   process is active: the caller therefore runs its own transactions
 *   through pst_txn_write and pst_txn_read (they hold the store's map
 *   lock), or never runs one while another thread calls the store.
 */
struct MDB_txn;

/*
 * pst_open_in - opens the store inside env, the open LMDB environment of
 * the folder path (for messages, and pst_path). Without PST_RDONLY an
 * environment with no store yet gets one (its two databases, in one
 * write transaction); with it, the store must be there. The header
 * checks of pst_open are the caller's (pst_lmdb_check before
 * mdb_env_open). env stays the caller's: pst_close does not close it.
 * RETURN 0 and *out; PST_EVERSION (another schema, or RDONLY and no
 * store), PST_ECORRUPT, PST_EIO, PST_ENOMEM, PST_EINVAL, with err.
 */
int pst_open_in(struct MDB_env *env, const char *path, int flags, pst_env **out, char *err,
                size_t errlen);

/* A caller's transaction body (pst_txn_write, pst_txn_read): returns 0,
 * an LMDB code (MDB_MAP_FULL makes pst_txn_write grow the map and run it
 * again), or a PST_E* or other negative code of the caller's, with err. */
typedef int (*pst_txn_body)(struct MDB_txn *txn, void *arg, char *err, size_t errlen);

/*
 * pst_txn_write - runs body in one write transaction of the store's
 * environment and commits it: the caller's own writes and the store's
 * (pst_put_many_txn) together, all or nothing. As the store's own
 * writes: guarded (DAMAGED FILES), and run again from the start after
 * the map grew (MDB_MAP_FULL here, MDB_MAP_RESIZED by another process),
 * so body must be repeatable: it reads what it merges inside txn and
 * keeps nothing of a run that did not commit. A body's nonzero return
 * aborts the transaction: nothing of it is written.
 * RETURN 0; body's own negative code (not an LMDB one) as it returned
 * it; PST_EREADONLY; PST_ECORRUPT (damage, or the store broken);
 * PST_ENOSPC; PST_EIO; err says which.
 * Thread-safe (LMDB serialises writers).
 */
int pst_txn_write(pst_env *env, pst_txn_body body, void *arg, char *err, size_t errlen);

/*
 * pst_txn_read - runs body in a read transaction (a snapshot), guarded,
 * with the store's map lock held; body must not call the store (it
 * would wait on the lock it holds when the map grows).
 * RETURN 0, body's nonzero return, or PST_ECORRUPT / PST_EIO with err.
 */
int pst_txn_read(pst_env *env, pst_txn_body body, void *arg, char *err, size_t errlen);

/*
 * pst_put_many_txn - pst_put_many inside txn, a write transaction of
 * pst_txn_write on this store: every record checked, then merged
 * (MERGING) and put; nothing is committed here. Either the whole batch
 * is merged into txn or, on an error, the caller must abort txn (return
 * the code from its body): part of the batch may be in it.
 * RETURN 0; PST_ECONTRADICT, PST_EINVAL (err names the record);
 * PST_EREADONLY; PST_ECORRUPT (a damaged stored record, or a store this
 * process found damaged); PST_ENOMEM; or an LMDB code for the body to
 * return (MDB_MAP_FULL: pst_txn_write grows the map and runs it again).
 */
int pst_put_many_txn(pst_env *env, struct MDB_txn *txn, const pst_item *items, size_t n, char *err,
                     size_t errlen);

/*
 * ONE TRANSACTION (issue 42: a worker's result admitted and the tree's
 * change kept in one commit)
 *   pst_txn_begin opens a write transaction of the store's environment
 *   as the calling thread's SCOPE: until pst_txn_end, every call of that
 *   thread on the store runs inside it. Writes (pst_put_many,
 *   pst_owner_set, pst_txn_write) run in a nested transaction of it (a
 *   failing call takes back only its own writes) and reach the file only
 *   with the scope's commit; reads (pst_get, pst_owner, pst_foreach...)
 *   read inside it and so see its uncommitted writes. Other threads and
 *   processes see the last commit, as ever, and their writes wait for
 *   the scope's end (LMDB has one writer). Inside a scope the map does
 *   not grow: a write that finds it full fails (PST_EIO), and the caller
 *   ends the scope without committing. One scope per store at a time.
 *
 * pst_txn_begin - opens the calling thread's scope.
 * RETURN 0; PST_EINVAL (a scope is open already); PST_EREADONLY;
 * PST_ECORRUPT (the store broken); PST_EIO, with err.
 *
 * pst_txn_end - ends the calling thread's scope: commit nonzero commits
 * everything written in it at once (synced), zero aborts it (nothing of
 * it reaches the file).
 * RETURN 0; PST_EINVAL (no scope of this thread); PST_ECORRUPT,
 * PST_ENOSPC, PST_EIO (the commit failed: nothing of it was written),
 * with err.
 */
int pst_txn_begin(pst_env *env, char *err, size_t errlen);
int pst_txn_end(pst_env *env, int commit, char *err, size_t errlen);

/*
 * pst_guard_faults - turns a fault (SIGSEGV, SIGBUS) inside the store's
 * own LMDB calls into PST_ECORRUPT instead of the end of the process, by
 * installing process-wide handlers that chain to whatever handlers were
 * there for any other fault (DAMAGED FILES). A library does not touch a
 * process's signals, so the store never calls it itself: a program that
 * reads stores it did not write calls it once at its start (the
 * `checkers` program does, in cli/main.c; so do the test suites that
 * damage stores on purpose). The handlers are installed once per process:
 * a later call does nothing. Thread-safe.
 */
void pst_guard_faults(void);

const char *pst_strerror(int code);

#endif /* PROVER_STORE_H */
