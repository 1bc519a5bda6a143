/*
 * store_lmdb.c - what LMDB 0.9 leaves to its caller, for the proven-node
 * store (store_lmdb.h says what each part is for; store.c is the store).
 *
 * Why these are needed at all:
 *   - LMDB returns its own codes and a message without the file; the
 *     store's callers want PST_E* codes and messages that name the path.
 *   - LMDB trusts its file: no page checksums, a header it believes, and
 *     assertions that abort. A proof store is read for months by many
 *     processes; a damaged page must be an error, not the end of every
 *     solver (see "Damage that LMDB does not survive" below).
 *   - LMDB's map is fixed between calls to mdb_env_set_mapsize, which may
 *     only run when no transaction of the process is active; a growing
 *     store shared by processes needs the growth protocol around it.
 *   - Commits are synced (LMDB's default, no MDB_NOSYNC): a proof written
 *     is a proof kept, power loss included. Solvers write at the end of
 *     a goal, not per node, so the cost of a sync is paid rarely.
 */
#include <errno.h>
#include <sys/statvfs.h>
#include <fcntl.h>
#include <inttypes.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "prover/store_lmdb.h"

/* ---- constants -------------------------------------------------------- */

/*
 * The initial map: 1 GiB of address space, not of disk (LMDB only writes
 * the pages it uses). Large enough that a typical run never resizes,
 * small enough to leave room for many processes on a 47-bit address
 * space. CHECKERS_PST_MAP_BYTES overrides it so that the tests can reach
 * MDB_MAP_FULL with a few thousand records.
 */
#define PST_MAP_INITIAL ((size_t)1 << 30)
#define PST_MAP_ENV "CHECKERS_PST_MAP_BYTES"
#define PST_MAP_MIN ((size_t)4096)
#define PST_MAP_MAX ((size_t)1 << 46) /* 64 TiB: beyond this a doubling is a bug */

/* How often a transaction is retried after the map grew (here or in
 * another process); each retry has a larger map, so more than a few in a
 * row means something else is wrong. */
#define PST_RESIZED_TRIES 64

/* The LMDB meta page as mdb.c lays it out (data format 1, 64-bit). See
 * pst_check_header for why we read it ourselves. */
#define LMDB_MAGIC 0xBEEFC0DEu
#define LMDB_DATA_VERSION 1u
#define LMDB_P_META 0x08
#define LMDB_META_END 152 /* bytes of page header + MDB_meta */
#define LMDB_P_INVALID UINT64_MAX

/* The value a jump out of LMDB carries when an assertion failed (signals
 * carry their number). */
#define PST_JUMP_ASSERT 1000

/* ---- types ------------------------------------------------------------ */

/* A guarded stretch of LMDB calls (see pst_guarded). */
typedef struct pst_guard {
    sigjmp_buf jb;
    struct pst_guard *prev;
    char *msg; /* the caller's buffer for LMDB's assertion text */
    size_t msglen;
} pst_guard;

/* One attempt of pst_write, run under pst_guarded. */
typedef struct pst_write_op {
    pst_env *s;
    MDB_txn *txn; /* NULL once committed (commit frees it, even when it fails) */
    pst_txn_fn fn;
    void *arg;
    char *err;
    size_t errlen;
    const char *what; /* the step that failed, for the message */
} pst_write_op;

/* ---- static data ------------------------------------------------------ */

/*
 * WHAT STATE THE GUARDS KEEP, AND WHERE (issue 42: no mutable globals in
 * library code). Everything a store owns is in its pst_env (damaged,
 * broken, the pool). The guards themselves need two things that no
 * argument can carry, because a signal handler is handed no context and
 * LMDB's assertion callback only the MDB_env that every thread shares
 * (and the tree's environment, manager/tree_lmdb.c, uses the same
 * callback without a pst_env):
 *
 *   pst_guard_cur  the innermost guarded stretch of the calling thread.
 *                  The guards themselves are a per-thread chain of
 *                  pst_guard records in the stack frames of pst_guarded
 *                  (the per-thread context); this is only its anchor. It
 *                  is thread-local, never shared, and only ever points
 *                  into a live frame of its own thread.
 *   pst_faults     the SIGSEGV and SIGBUS actions found when the guards'
 *                  handlers were installed, to chain to for faults that
 *                  are not ours. Written once, by pst_fault_install under
 *                  pthread_once, before the handler that reads them is in
 *                  place; read-only from then on: start-up state, as the
 *                  conventions allow. (Before issue 42 a mutex guarded
 *                  them and a second installation could rewrite them
 *                  while a handler on another thread read them.)
 */
static _Thread_local pst_guard *pst_guard_cur;

static struct {
    pthread_once_t once;
    struct sigaction old_segv, old_bus;
} pst_faults = {PTHREAD_ONCE_INIT};

/* ---- errors ----------------------------------------------------------- */

/*
 * An LMDB or system error as a project code. The damage LMDB can see
 * (a page that is not where a tree says, a page of the wrong kind, a
 * header that is not LMDB's) is PST_ECORRUPT; a file from another LMDB
 * data format is PST_EVERSION; the rest is I/O.
 */
int
pst_code_of(int rc)
{
    if (rc == 0 || (rc >= PST_ENOSPC && rc <= PST_EIO))
        return rc; /* already one of ours */
    switch (rc) {
    case MDB_CORRUPTED:
    case MDB_PAGE_NOTFOUND:
    case MDB_INVALID:
        return PST_ECORRUPT;
    case MDB_VERSION_MISMATCH:
        return PST_EVERSION;
    case ENOMEM:
        return PST_ENOMEM;
    default:
        return PST_EIO;
    }
}

int
pst_disk_full(const char *path, uint64_t *free_bytes)
{
    struct statvfs v;
    if (statvfs(path, &v) != 0)
        return 0;
    uint64_t avail = (uint64_t)v.f_bavail * v.f_frsize;
    if (free_bytes)
        *free_bytes = avail;
    return avail < PST_FULL_BYTES;
}

void
pst_set_damaged(pst_env *s, const char *msg)
{
    pthread_mutex_lock(&s->pool_lock);
    if (!s->damaged) {
        s->damaged = 1;
        snprintf(s->damage, sizeof s->damage, "%s", msg);
    }
    pthread_mutex_unlock(&s->pool_lock);
}

int
pst_lmdb_fail(pst_env *s, int rc, const char *what, char *err, size_t errlen)
{
    int code = pst_code_of(rc);
    if (rc >= PST_ENOSPC && rc <= PST_EIO)
        return rc;
    char msg[320];
    uint64_t avail = 0;
    if ((rc == ENOSPC || rc == EIO || rc == EDQUOT) && pst_disk_full(s->path, &avail)) {
        /* not damage: the transaction is lost whole, the file as it was */
        snprintf(msg, sizeof msg,
                 "%s: %s: the disk is full (%" PRIu64 " bytes free): free some space and run "
                 "again, nothing was lost",
                 s->path, what, avail);
        eng_errf(err, errlen, "%s", msg);
        return PST_ENOSPC;
    }
    snprintf(msg, sizeof msg, "%s: %s: %s", s->path, what, mdb_strerror(rc));
    eng_errf(err, errlen, "%s", msg);
    if (code == PST_ECORRUPT)
        pst_set_damaged(s, msg);
    return code;
}

int
pst_broken_fail(pst_env *s, char *err, size_t errlen)
{
    eng_errf(err, errlen,
             "%s: LMDB faulted twice on the damaged file in this process; the store is unusable "
             "until the process exits",
             s->path);
    return PST_ECORRUPT;
}

int
pst_damaged_fail(pst_env *s, const char *what, const char *amsg, char *err, size_t errlen)
{
    char msg[320];
    snprintf(msg, sizeof msg, "%s: damaged file (%s): %s", s->path, what, amsg);
    eng_errf(err, errlen, "%s", msg);
    pst_set_damaged(s, msg);
    return PST_ECORRUPT;
}

/* ---- opening ---------------------------------------------------------- */

/* CHECKERS_PST_MAP_BYTES is read at every pst_open (not cached: no
 * mutable globals), and a bad value is refused rather than ignored, so a
 * test that means to exercise growth cannot silently run with the
 * default. */
int
pst_map_initial(size_t *out, char *err, size_t errlen)
{
    const char *v = getenv(PST_MAP_ENV);
    *out = PST_MAP_INITIAL;
    if (!v || !*v)
        return 0;
    char *end;
    errno = 0;
    unsigned long long n = strtoull(v, &end, 10);
    if (v[0] < '0' || v[0] > '9' || *end != '\0' || errno != 0 || n < PST_MAP_MIN ||
        n > PST_MAP_MAX) {
        eng_errf(err, errlen, "%s='%s': expected a byte count from %zu to %zu", PST_MAP_ENV, v,
                 PST_MAP_MIN, PST_MAP_MAX);
        return PST_EINVAL;
    }
    *out = (size_t)n;
    return 0;
}

/* Sleeps ms milliseconds (the header check's retries). */
static void
pst_nap(long ms)
{
    struct timespec t = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&t, NULL);
}

/*
 * pst_check_header_once - reads LMDB's two meta pages before LMDB does.
 *
 * Why: LMDB 0.9 trusts its meta pages. A damaged page size of 0 makes
 * mdb_env_open divide by zero (SIGFPE), and a last-page number past the
 * end of the file makes it read pages that do not exist (SIGBUS). The
 * store must answer a damaged file with an error, never a crash, so the
 * fields LMDB trusts blindly are checked here first: the magic, the data
 * format, the page size, and that the tree's pages lie inside the file.
 * The layout is mdb.c's (MDB_page header then MDB_meta, data format 1,
 * native byte order, 64-bit fields); on another word size the check is
 * skipped and LMDB's own checks remain.
 *
 * RETURN 0 (including: no file yet, or an empty one: LMDB initialises
 * it), PST_ECORRUPT or PST_EVERSION with err, PST_EIO.
 */
static int
pst_check_header_once(const char *path, const char *file, char *err, size_t errlen)
{
#if SIZE_MAX == UINT64_MAX
    int fd = open(file, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        if (errno == ENOENT)
            return 0;
        eng_errf(err, errlen, "%s: cannot read %s: %s", path, file, strerror(errno));
        return PST_EIO;
    }
    uint8_t m[2][LMDB_META_END];
    uint32_t psize = 0;
    int rc = 0;
    for (int i = 0; i < 2 && rc == 0; i++) {
        off_t off = (off_t)i * psize;
        ssize_t got = pread(fd, m[i], LMDB_META_END, off);
        if (got == 0 && i == 0)
            goto done; /* empty: LMDB writes the meta pages */
        if (got != LMDB_META_END) {
            eng_errf(err, errlen, "%s: %s is too short for LMDB's meta page %d", path, file, i);
            rc = got < 0 ? PST_EIO : PST_ECORRUPT;
            break;
        }
        uint16_t flags;
        uint32_t magic, version, ps;
        memcpy(&flags, m[i] + 10, sizeof flags);
        memcpy(&magic, m[i] + 16, sizeof magic);
        memcpy(&version, m[i] + 20, sizeof version);
        memcpy(&ps, m[i] + 40, sizeof ps);
        if (!(flags & LMDB_P_META) || magic != LMDB_MAGIC) {
            eng_errf(err, errlen, "%s: %s is not an LMDB file (meta page %d has no LMDB magic)",
                     path, file, i);
            rc = PST_ECORRUPT;
        } else if (version != LMDB_DATA_VERSION) {
            eng_errf(err, errlen,
                     "%s: %s has LMDB data format %" PRIu32 " (meta page %d); this build reads "
                     "format %u",
                     path, file, version, i, LMDB_DATA_VERSION);
            rc = PST_EVERSION;
        } else if (ps < 512 || ps > 65536 || (ps & (ps - 1)) != 0 || (i == 1 && ps != psize)) {
            eng_errf(err, errlen, "%s: %s: meta page %d gives a page size of %" PRIu32, path, file,
                     i, ps);
            rc = PST_ECORRUPT;
        }
        psize = ps;
    }
    if (rc == 0) {
        /* LMDB uses the meta page with the larger transaction id. */
        uint64_t t0, t1, last, root[2];
        memcpy(&t0, m[0] + 144, sizeof t0);
        memcpy(&t1, m[1] + 144, sizeof t1);
        /* Commit n writes meta page n % 2, and each commit's id is one
         * more than the last: the two pages hold ids n - 1 and n with
         * the even one on page 0 (or 0 and 0, as LMDB creates them). A
         * damaged id breaks that, and LMDB, which takes the larger id,
         * would fall back to an older state without a word: the records
         * committed since would vanish and the store would look whole. */
        if (!(t0 == 0 && t1 == 0) &&
            !(t0 % 2 == 0 && t1 % 2 == 1 && (t0 > t1 ? t0 - t1 : t1 - t0) == 1)) {
            eng_errf(err, errlen,
                     "%s: %s: the meta pages hold transaction ids %" PRIu64 " and %" PRIu64
                     ", which no sequence of commits leaves: one is damaged, and LMDB would "
                     "fall back to an older state",
                     path, file, t0, t1);
            rc = PST_ECORRUPT;
            goto done;
        }
        const uint8_t *cur = t1 > t0 ? m[1] : m[0];
        memcpy(&last, cur + 136, sizeof last);
        memcpy(&root[0], cur + 80, sizeof root[0]);
        memcpy(&root[1], cur + 128, sizeof root[1]);
        struct stat st;
        if (fstat(fd, &st) != 0) {
            eng_errf(err, errlen, "%s: cannot stat %s: %s", path, file, strerror(errno));
            rc = PST_EIO;
        } else if (last < 1 || last >= (uint64_t)st.st_size / psize) {
            eng_errf(err, errlen,
                     "%s: %s: the meta page says the tree uses %" PRIu64 " pages of %" PRIu32
                     " bytes but the file holds %" PRIu64 " bytes",
                     path, file, last + 1, psize, (uint64_t)st.st_size);
            rc = PST_ECORRUPT;
        } else {
            for (int d = 0; d < 2; d++)
                if (root[d] != LMDB_P_INVALID && (root[d] < 2 || root[d] > last)) {
                    eng_errf(err, errlen,
                             "%s: %s: the meta page puts a tree root at page %" PRIu64
                             ", outside pages 2..%" PRIu64,
                             path, file, root[d], last);
                    rc = PST_ECORRUPT;
                }
        }
    }
done:
    close(fd);
    return rc;
#else
    (void)path;
    (void)file;
    (void)err;
    (void)errlen;
    return 0;
#endif
}

/*
 * pst_lmdb_prepare (store.h) - a full disk at an environment's creation.
 *
 * Why: LMDB makes its lock file with ftruncate (a sparse file) and then
 * writes into its map of it; on a full tmpfs the first such write finds
 * no page to back it and the process dies of SIGBUS, inside
 * mdb_env_open, before any error can be returned. Allocating the lock
 * file's pages first (posix_fallocate) turns that into ENOSPC here. And
 * LMDB writes a new data file's two meta pages in one pwrite: cut short
 * by a full disk, it leaves a file of less than two pages that LMDB
 * (and pst_check_header) then refuse for good, although no commit ever
 * happened in it (the first commit writes pages past the second, so a
 * file of less than two pages never held data). Such a file is emptied,
 * and LMDB writes it again, but only while no other process has the
 * environment open: LMDB's first opener takes the exclusive lock on byte
 * 0 of lock.mdb and keeps a shared one while it runs, so a free
 * exclusive lock means that nobody is creating the file at this moment.
 * The fcntl lock taken here goes with the close of its descriptor, which
 * also drops any lock this process holds on that file: hence "a process
 * that does not have the environment open" (LMDB's own rule).
 *
 * The lock file's size: LMDB 0.9 on 64-bit, 64-byte cache lines: a
 * header of 192 bytes and 64 bytes a reader slot beyond the first.
 */
int
pst_lmdb_prepare(const char *dir, unsigned maxreaders, char *err, size_t errlen)
{
    char lockf[4200], dataf[4200];
    snprintf(lockf, sizeof lockf, "%s/lock.mdb", dir);
    snprintf(dataf, sizeof dataf, "%s/data.mdb", dir);
    int fd = open(lockf, O_RDWR | O_CREAT | O_CLOEXEC, 0664);
    if (fd < 0) {
        int e = errno;
        uint64_t avail = 0;
        if ((e == ENOSPC || e == EDQUOT) && pst_disk_full(dir, &avail)) {
            eng_errf(err, errlen,
                     "%s: the disk is full (%" PRIu64 " bytes free): free some space and run "
                     "again, nothing was lost",
                     dir, avail);
            return PST_ENOSPC;
        }
        eng_errf(err, errlen, "%s: cannot open %s: %s", dir, lockf, strerror(e));
        return PST_EIO;
    }
    struct stat st;
    off_t want = ((off_t)(maxreaders ? maxreaders - 1 : 0) * 64 + 192 + 4095) & ~(off_t)4095;
    int rc = 0;
    if (fstat(fd, &st) != 0) {
        eng_errf(err, errlen, "%s: cannot stat %s: %s", dir, lockf, strerror(errno));
        rc = PST_EIO;
    } else {
        /* an existing lock file keeps its size (LMDB reads its reader
         * count from it): only its pages are backed */
        int e = posix_fallocate(fd, 0, st.st_size > 0 ? st.st_size : want);
        uint64_t avail = 0;
        if (e == ENOSPC || e == EDQUOT) {
            pst_disk_full(dir, &avail);
            eng_errf(err, errlen,
                     "%s: the disk is full (%" PRIu64 " bytes free): free some space and run "
                     "again, nothing was lost",
                     dir, avail);
            rc = PST_ENOSPC;
        }
        /* other errors (a filesystem without fallocate): LMDB as before */
    }
    struct stat ds;
    long os_page = sysconf(_SC_PAGESIZE);
    if (rc == 0 && stat(dataf, &ds) == 0 && ds.st_size > 0 &&
        ds.st_size < 2 * (os_page > 0 ? os_page : 4096)) {
        struct flock fl = {.l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = 0, .l_len = 1};
        if (fcntl(fd, F_SETLK, &fl) == 0 && truncate(dataf, 0) != 0) {
            eng_errf(err, errlen, "%s: cannot empty %s (begun, never written whole): %s", dir,
                     dataf, strerror(errno));
            rc = PST_EIO;
        }
    }
    close(fd);
    return rc;
}

int
pst_check_header(const char *path, const char *file, char *err, size_t errlen)
{
    /* A writer of another process may be rewriting a meta page while we
     * read it, and a store being created may be caught between its
     * creation and its first write: a failure that persists over a few
     * reads 20 ms apart is the file. */
    int rc;
    for (int tries = 0; (rc = pst_check_header_once(path, file, err, errlen)) != 0 && tries < 3;
         tries++)
        pst_nap(20);
    return rc;
}

/* ---- guards ----------------------------------------------------------- */

/*
 * Damage that LMDB does not survive. LMDB 0.9 trusts its pages: it has
 * no page checksums, and a damaged branch or leaf page makes it
 *   - fail one of its assertions, which calls abort() (a leaf where a
 *     branch should be, a node count that does not fit);
 *   - follow a node offset (16 bits, so up to 64 KiB past the page) past
 *     the end of the file, which the map covers: SIGBUS;
 *   - treat a plain node as a duplicate set and write through a NULL
 *     sub-cursor: SIGSEGV.
 * Without a remedy, one damaged page would kill every solver and every
 * `proof check` that reads it. The remedy: every stretch of LMDB calls is
 * run through pst_guarded, which records a jump target for the thread.
 * LMDB's assertion callback (mdb_env_set_assert, called before abort) and
 * a SIGSEGV/SIGBUS handler jump back there, and the stretch returns
 * PST_ASSERTED, which its caller reports as PST_ECORRUPT after aborting
 * the transaction. (An LMDB built with NDEBUG has no assertions; Debian's
 * has them. The faults are guarded either way.)
 *
 * Why this is sound: the interrupted LMDB code held no lock but the
 * writers' mutex of a write transaction, and that transaction is aborted
 * right after the jump (which frees the mutex and discards its dirty
 * pages), so nothing of it reaches the file. A read transaction is
 * aborted rather than pooled. What it cannot do: a damaged page that
 * LMDB copies and then writes into (a write transaction) may overrun the
 * copy on the heap before anything faults; a damaged store should be
 * read (pst_stats_get, `checkers store stats`) before anything writes to
 * it again.
 *
 * The handler is installed by the program (pst_guard_faults, store.h),
 * never by a library call, unless it is in place already, with the
 * actions it found saved: a fault outside a guarded stretch
 * goes to the previous handler, or, if there was none, ends the process
 * exactly as it would have ended. Without it, a fault inside a guarded
 * stretch ends the process as it would without the guards. A
 * fault inside a guarded stretch is taken for damage: those stretches run
 * LMDB's code over the map and our copies out of it, nothing else.
 */
void
pst_on_assert(MDB_env *env, const char *msg)
{
    (void)env;
    pst_guard *g = pst_guard_cur;
    if (!g)
        return; /* LMDB aborts, as it means to */
    if (g->msg && g->msglen)
        snprintf(g->msg, g->msglen, "%s", msg);
    siglongjmp(g->jb, PST_JUMP_ASSERT);
}

static void
pst_on_fault(int sig, siginfo_t *si, void *ctx)
{
    pst_guard *g = pst_guard_cur;
    if (g)
        siglongjmp(g->jb, sig);
    const struct sigaction *old = sig == SIGBUS ? &pst_faults.old_bus : &pst_faults.old_segv;
    if (old->sa_flags & SA_SIGINFO) {
        old->sa_sigaction(sig, si, ctx);
        return;
    }
    if (old->sa_handler != SIG_DFL && old->sa_handler != SIG_IGN) {
        old->sa_handler(sig);
        return;
    }
    /* The default action: put it back and return; the faulting
     * instruction runs again and the process ends with its own signal. */
    struct sigaction dfl;
    memset(&dfl, 0, sizeof dfl);
    dfl.sa_handler = SIG_DFL;
    sigemptyset(&dfl.sa_mask);
    sigaction(sig, &dfl, NULL);
}

/* The once-routine of pst_fault_install: saves what it replaces, then
 * installs (so a handler never reads an action not yet saved). */
static void
pst_fault_install_once(void)
{
    int sigs[2] = {SIGSEGV, SIGBUS};
    struct sigaction *old[2] = {&pst_faults.old_segv, &pst_faults.old_bus};
    for (int i = 0; i < 2; i++) {
        struct sigaction cur;
        if (sigaction(sigs[i], NULL, &cur) != 0 ||
            ((cur.sa_flags & SA_SIGINFO) && cur.sa_sigaction == pst_on_fault))
            continue;
        /* SA_NODEFER: the jump leaves the handler without returning, so
         * the signal must not stay blocked for the thread afterwards. */
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_sigaction = pst_on_fault;
        sa.sa_flags = SA_SIGINFO | SA_NODEFER;
        sigemptyset(&sa.sa_mask);
        *old[i] = cur;
        sigaction(sigs[i], &sa, NULL);
    }
}

void
pst_fault_install(void)
{
    pthread_once(&pst_faults.once, pst_fault_install_once);
}

int
pst_guarded(int (*fn)(void *arg), void *arg, char *msg, size_t msglen)
{
    pst_guard g;
    g.prev = pst_guard_cur;
    g.msg = msg;
    g.msglen = msglen;
    pst_guard_cur = &g;
    int jumped = sigsetjmp(g.jb, 0);
    if (jumped != 0) {
        /* Nothing of g changed after sigsetjmp: reading it is defined. */
        pst_guard_cur = g.prev;
        if (jumped != PST_JUMP_ASSERT && msg && msglen)
            snprintf(msg, msglen, "LMDB %s (%s)",
                     jumped == SIGBUS ? "read past the end of the file"
                                      : "followed a damaged pointer",
                     jumped == SIGBUS ? "SIGBUS" : "SIGSEGV");
        return PST_ASSERTED;
    }
    int rc = fn(arg);
    pst_guard_cur = g.prev;
    return rc;
}

/* ---- the map ---------------------------------------------------------- */

static size_t
pst_map_size(pst_env *s)
{
    MDB_envinfo info;
    mdb_env_info(s->env, &info);
    return info.me_mapsize;
}

/*
 * The map after MDB_MAP_FULL (grow: double) or MDB_MAP_RESIZED (adopt
 * the size another process committed). Called without map_lock held; it
 * takes it exclusively, so no transaction of this process is active, as
 * mdb_env_set_mapsize requires. failed_size is the map size the failing
 * transaction ran with: when another thread has grown the map since, the
 * caller simply retries.
 */
static int
pst_map_adjust(pst_env *s, int rc, size_t failed_size, char *err, size_t errlen)
{
    int ret = 0;
    pthread_rwlock_wrlock(&s->map_lock);
    MDB_envinfo info;
    mdb_env_info(s->env, &info);
    if (rc == MDB_MAP_RESIZED) {
        /* Size 0: LMDB takes the size from the newest meta page. */
        int r = mdb_env_set_mapsize(s->env, 0);
        if (r != 0)
            ret = pst_lmdb_fail(s, r, "adopting the map size of another process", err, errlen);
    } else if (info.me_mapsize == failed_size) {
        if (failed_size >= PST_MAP_MAX) {
            eng_errf(err, errlen, "%s: the map is full at %zu bytes, the most this store grows to",
                     s->path, failed_size);
            ret = PST_EIO;
        } else {
            int r = mdb_env_set_mapsize(s->env, failed_size * 2);
            if (r != 0)
                ret = pst_lmdb_fail(s, r, "growing the map", err, errlen);
        }
    }
    pthread_rwlock_unlock(&s->map_lock);
    return ret;
}

/* ---- transactions ----------------------------------------------------- */

static int
pst_write_once(void *arg)
{
    pst_write_op *op = arg;
    op->what = "writing";
    int rc = op->fn(op->s, op->txn, op->arg, op->err, op->errlen);
    if (rc != 0)
        return rc;
    op->what = "committing";
    rc = mdb_txn_commit(op->txn);
    op->txn = NULL;
    return rc;
}

static int
pst_abort_run(void *arg)
{
    pst_write_op *op = arg;
    MDB_txn *txn = op->txn;
    op->txn = NULL; /* not again, whatever happens */
    mdb_txn_abort(txn);
    return 0;
}

/*
 * pst_write retries the whole transaction after the map grew, so fn must
 * be repeatable: it reads everything it merges inside the transaction,
 * and a retry sees whatever other writers committed in between.
 *
 * Write transactions stay short because pst_put_many validates every
 * record (move generation included) before this starts: LMDB serialises
 * writers of all processes, and a long writer stalls every solver.
 */
int
pst_in_scope(pst_env *s)
{
    return s->scope != NULL && pthread_equal(s->scope_by, pthread_self());
}

/*
 * Inside the thread's scope (store.h, ONE TRANSACTION): fn in a nested
 * transaction of the scope's, so that a failing fn takes back only its
 * own writes, committed into the scope (not to the file). No retry after
 * MDB_MAP_FULL: the map may only grow with no transaction active, and
 * the scope is one; the caller ends the scope without committing.
 */
/* One attempt of a write: a transaction (a child of parent, or top
 * level) begun, fn run in it under the fault guard, the transaction
 * aborted when fn fails (an abort that faults too gives the environment
 * up: pst_env, broken). RETURN 0 (committed), PST_ASSERTED (amsg says
 * where), or fn's or LMDB's code. */
static int
pst_write_attempt(pst_env *s, MDB_txn *parent, pst_write_op *op, char *amsg, size_t alen)
{
    int rc = mdb_txn_begin(s->env, parent, 0, &op->txn);
    if (rc == 0)
        rc = pst_guarded(pst_write_once, op, amsg, alen);
    else
        op->txn = NULL;
    if (op->txn && rc == PST_ASSERTED) {
        /* the transaction LMDB was inside when it faulted may itself be
         * damaged */
        char amsg2[256];
        if (pst_guarded(pst_abort_run, op, amsg2, sizeof amsg2) == PST_ASSERTED)
            atomic_store(&s->broken, 1);
    } else if (op->txn) {
        mdb_txn_abort(op->txn); /* fn failed */
    }
    return rc;
}

static int
pst_write_nested(pst_env *s, pst_txn_fn fn, void *arg, char *err, size_t errlen)
{
    char amsg[256] = "";
    pst_write_op op = {s, NULL, fn, arg, err, errlen, "beginning a nested write transaction"};
    int rc = pst_write_attempt(s, s->scope, &op, amsg, sizeof amsg);
    if (rc == PST_ASSERTED)
        return pst_damaged_fail(s, op.what, amsg, err, errlen);
    return rc == 0 ? 0 : pst_lmdb_fail(s, rc, op.what, err, errlen);
}

int
pst_write(pst_env *s, pst_txn_fn fn, void *arg, char *err, size_t errlen)
{
    if (pst_in_scope(s))
        return pst_write_nested(s, fn, arg, err, errlen);
    for (int tries = 0;; tries++) {
        pthread_rwlock_rdlock(&s->map_lock);
        size_t size = pst_map_size(s);
        char amsg[256] = "";
        pst_write_op op = {s, NULL, fn, arg, err, errlen, "beginning a write transaction"};
        int rc = pst_write_attempt(s, NULL, &op, amsg, sizeof amsg);
        pthread_rwlock_unlock(&s->map_lock);
        if (rc == PST_ASSERTED)
            return pst_damaged_fail(s, op.what, amsg, err, errlen);
        if ((rc == MDB_MAP_FULL || rc == MDB_MAP_RESIZED) && tries < PST_RESIZED_TRIES) {
            int r = pst_map_adjust(s, rc, size, err, errlen);
            if (r != 0)
                return r;
            continue;
        }
        if (rc == 0)
            return 0;
        return pst_lmdb_fail(s, rc, op.what, err, errlen);
    }
}

int
pst_read_begin(pst_env *s, MDB_txn **out)
{
    if (pst_in_scope(s)) { /* the scope's own transaction: it sees its writes */
        *out = s->scope;
        return 0;
    }
    for (int tries = 0;; tries++) {
        pthread_rwlock_rdlock(&s->map_lock);
        size_t size = pst_map_size(s);
        MDB_txn *txn = NULL;
        pthread_mutex_lock(&s->pool_lock);
        if (s->npool > 0)
            txn = s->pool[--s->npool];
        pthread_mutex_unlock(&s->pool_lock);
        int rc;
        if (txn) {
            rc = mdb_txn_renew(txn);
            if (rc != 0)
                mdb_txn_abort(txn);
        } else {
            rc = mdb_txn_begin(s->env, NULL, MDB_RDONLY, &txn);
        }
        if (rc == 0) {
            *out = txn;
            return 0;
        }
        pthread_rwlock_unlock(&s->map_lock);
        if (rc == MDB_MAP_RESIZED && tries < PST_RESIZED_TRIES) {
            int r = pst_map_adjust(s, rc, size, NULL, 0);
            if (r != 0)
                return r;
            continue;
        }
        return rc;
    }
}

void
pst_read_end(pst_env *s, MDB_txn *txn)
{
    if (txn == s->scope && pst_in_scope(s))
        return; /* the scope's: it ends with pst_txn_end */
    mdb_txn_reset(txn);
    pthread_mutex_lock(&s->pool_lock);
    if (s->npool < PST_POOL) {
        s->pool[s->npool++] = txn;
        txn = NULL;
    }
    pthread_mutex_unlock(&s->pool_lock);
    if (txn)
        mdb_txn_abort(txn);
    pthread_rwlock_unlock(&s->map_lock);
}

/* Not pooled: after an assertion or a fault inside it, the transaction's
 * state is not LMDB's to vouch for. */
void
pst_read_fail(pst_env *s, MDB_txn *txn)
{
    if (txn == s->scope && pst_in_scope(s))
        return; /* the scope's: its owner aborts it (pst_txn_end) */
    mdb_txn_abort(txn);
    pthread_rwlock_unlock(&s->map_lock);
}

/* ---- the scope (store.h, ONE TRANSACTION) ------------------------------- */

/* The scope's commit, under pst_guarded. */
static int
pst_commit_run(void *arg)
{
    pst_write_op *op = arg;
    op->what = "committing";
    int rc = mdb_txn_commit(op->txn);
    op->txn = NULL;
    return rc;
}

/*
 * map_lock is held shared from pst_txn_begin to pst_txn_end, as by every
 * transaction of the store, so that no resize runs while the scope is
 * open; the thread's own calls inside it do not take it again (a shared
 * lock taken twice by one thread could wait behind a resizer for ever).
 */
int
pst_txn_begin(pst_env *s, char *err, size_t errlen)
{
    if (!s || pst_in_scope(s)) {
        eng_errf(err, errlen, "pst_txn_begin: no store, or its scope is open already");
        return PST_EINVAL;
    }
    if (s->rdonly) {
        eng_errf(err, errlen, "%s: opened read-only; nothing written", s->path);
        return PST_EREADONLY;
    }
    if (atomic_load_explicit(&s->broken, memory_order_relaxed))
        return pst_broken_fail(s, err, errlen);
    for (int tries = 0;; tries++) {
        pthread_rwlock_rdlock(&s->map_lock);
        size_t size = pst_map_size(s);
        MDB_txn *txn = NULL;
        int rc = mdb_txn_begin(s->env, NULL, 0, &txn);
        if (rc == 0) {
            s->scope_by = pthread_self();
            s->scope = txn;
            return 0;
        }
        pthread_rwlock_unlock(&s->map_lock);
        if (rc == MDB_MAP_RESIZED && tries < PST_RESIZED_TRIES) {
            if ((rc = pst_map_adjust(s, rc, size, err, errlen)) != 0)
                return rc;
            continue;
        }
        return pst_lmdb_fail(s, rc, "beginning a write transaction", err, errlen);
    }
}

int
pst_txn_end(pst_env *s, int commit, char *err, size_t errlen)
{
    if (!s || !pst_in_scope(s)) {
        eng_errf(err, errlen, "pst_txn_end: no scope of this thread is open");
        return PST_EINVAL;
    }
    pst_write_op op = {s, s->scope, NULL, NULL, err, errlen, "committing"};
    s->scope = NULL;
    int rc = 0;
    char amsg[256] = "";
    if (commit)
        rc = pst_guarded(pst_commit_run, &op, amsg, sizeof amsg);
    if (op.txn) {
        char amsg2[256];
        if (pst_guarded(pst_abort_run, &op, amsg2, sizeof amsg2) == PST_ASSERTED)
            atomic_store(&s->broken, 1);
    }
    pthread_rwlock_unlock(&s->map_lock);
    if (rc == PST_ASSERTED)
        return pst_damaged_fail(s, op.what, amsg, err, errlen);
    return rc == 0 ? 0 : pst_lmdb_fail(s, rc, op.what, err, errlen);
}
