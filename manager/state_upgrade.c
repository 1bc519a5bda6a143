/*
 * state_upgrade.c - a proof's state moved from the two-environment
 * layout (<state>/tree and <state>/proofs, before issue 42) into one
 * LMDB environment (<state>/state), safely under SIGKILL (tree.h, THE
 * STATE'S LAYOUT, is the manual).
 *
 * OWNS: the upgrade's steps and the folders it makes and removes
 * (<state>/state.tmp, the rename to <state>/state, the removal of the
 * old two).
 * CALLS: LMDB, and the proof store's checks of an LMDB file (prover/
 * store.h: pst_lmdb_check, pst_lmdb_walk). Nothing of the tree's own
 * files: the upgrade copies bytes, it never reads them as nodes.
 *
 * WHY A COPY AND A RENAME
 *   The two old environments cannot be merged in place: each is one
 *   data.mdb with its own free list and meta pages. So the upgrade
 *   writes a new environment beside them, in a folder of its own
 *   (state.tmp), in ONE write transaction (LMDB commits it whole or not
 *   at all, synced), syncs the folder, and only then renames it to
 *   "state": rename(2) within one folder is atomic, so at every instant
 *   the state is either the old layout whole (with perhaps a state.tmp
 *   beside it, which a rerun throws away and writes again) or the new
 *   one whole (with perhaps the old folders beside it, which a rerun
 *   removes). A SIGKILL at any point therefore loses nothing, and the
 *   next call finishes the work: the steps are named below, and a test
 *   hook (CHECKERS_UPGRADE_KILL=STEP) kills the process with SIGKILL at
 *   a chosen one, so that the test waits on that event, not on time.
 *
 * WHAT IS COPIED
 *   Every entry of the tree's four databases ("meta", "nodes", "jobs",
 *   "hist") under the new names ("tree.meta", ...), and every entry of
 *   the store's two ("meta", "nodes") under their own names, byte for
 *   byte: the tree's meta checksum, the nodes' and records' checksums,
 *   the owner label and the record count all stay true. Both sources are
 *   first read page by page under the store's guards (pst_lmdb_walk): a
 *   damaged old state is refused as damage (MT_ECORRUPT) and left as it
 *   is, never half copied. After the commit, each new database's entry
 *   count is compared with its source's.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <lmdb.h>

#include "manager/tree.h"
#include "prover/store.h"

/* ---- constants -------------------------------------------------------- */

/* The new environment's map: address space, not disk (the tree's). */
#define UPG_MAP_BYTES ((size_t)1 << 36)

/* The test hook (WHY A COPY AND A RENAME). */
#define UPG_KILL_ENV "CHECKERS_UPGRADE_KILL"

/* ---- types ------------------------------------------------------------ */

/* One database to copy: its name in its source, its name in the new
 * environment, and its flags (the integer keys of "jobs" and "hist"). */
typedef struct upg_db {
    const char *from, *to;
    unsigned flags;
} upg_db;

/* ---- static data ------------------------------------------------------ */

static const upg_db upg_tree_dbs[] = {
    {"meta", MT_DB_META, 0},
    {"nodes", MT_DB_NODES, 0},
    {"jobs", MT_DB_JOBS, MDB_INTEGERKEY},
    {"hist", MT_DB_HIST, MDB_INTEGERKEY},
};

static const upg_db upg_store_dbs[] = {
    {"meta", "meta", 0},
    {"nodes", "nodes", 0},
};

/* ---- small helpers ---------------------------------------------------- */

/* The test hook: a SIGKILL at the step named by CHECKERS_UPGRADE_KILL
 * (a real kill, not an exit: nothing is flushed or closed). */
static void
upg_step(const char *step)
{
    const char *k = getenv(UPG_KILL_ENV);
    if (k && !strcmp(k, step))
        raise(SIGKILL);
}

/* Whether dir/data.mdb exists. */
static int
upg_has_env(const char *dir)
{
    char f[4300];
    struct stat sb;
    snprintf(f, sizeof f, "%s/data.mdb", dir);
    return stat(f, &sb) == 0;
}

/* fsync of a folder, so that a rename or removal in it is durable. */
static int
upg_sync_dir(const char *dir)
{
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    int rc = fsync(fd);
    close(fd);
    return rc;
}

/* Removes an environment's folder: its files (LMDB's two, nothing else
 * is expected there) and the folder. Missing is fine. RETURN 0, or -1
 * with errno. */
static int
upg_remove_env(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return errno == ENOENT ? 0 : -1;
    struct dirent *e;
    char f[4600];
    while ((e = readdir(d)) != NULL) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        snprintf(f, sizeof f, "%s/%s", dir, e->d_name);
        if (unlink(f) != 0 && errno != ENOENT) {
            closedir(d);
            return -1;
        }
    }
    closedir(d);
    return rmdir(dir) != 0 && errno != ENOENT ? -1 : 0;
}

/* ---- the copy --------------------------------------------------------- */

/*
 * Opens the old environment in dir read-only, after LMDB's header is
 * checked, and reads every page of it under the guards (a damaged file
 * is MT_ECORRUPT here, not a fault in the copy). RETURN 0 and *out, or
 * MT_E* with err.
 */
static int
upg_open_old(const char *dir, MDB_env **out, char *err, size_t errlen)
{
    char why[600];
    int rc = pst_lmdb_check(dir, why, sizeof why);
    if (rc) {
        eng_errf(err, errlen, "upgrading the state: %s is damaged: %s", dir, why);
        return rc == PST_EIO ? MT_EIO : MT_ECORRUPT;
    }
    MDB_env *env;
    if ((rc = mdb_env_create(&env)) != 0) {
        eng_errf(err, errlen, "upgrading the state: %s: %s", dir, mdb_strerror(rc));
        return MT_EIO;
    }
    if ((rc = mdb_env_set_maxdbs(env, 8)) || (rc = mdb_env_set_mapsize(env, UPG_MAP_BYTES)) ||
        (rc = mdb_env_open(env, dir, MDB_RDONLY | MDB_NOTLS, 0644))) {
        eng_errf(err, errlen, "upgrading the state: cannot open %s: %s", dir, mdb_strerror(rc));
        mdb_env_close(env);
        return MT_EIO;
    }
    if ((rc = pst_lmdb_walk(env, dir, why, sizeof why)) != 0) {
        eng_errf(err, errlen, "upgrading the state: %s is damaged: %s", dir, why);
        mdb_env_close(env);
        return rc == PST_EIO ? MT_EIO : MT_ECORRUPT;
    }
    *out = env;
    return 0;
}

/*
 * Copies the n databases of dbs from src (a read transaction) into dst
 * (the new environment's write transaction), in key order with
 * MDB_APPEND (the pages are filled once, never split), counting the
 * entries of each into count[]. A database missing in the source is
 * created empty (a store that was never written to). RETURN 0 or an
 * LMDB code.
 */
static int
upg_copy(MDB_txn *src, MDB_txn *dst, const upg_db *dbs, size_t n, size_t *count)
{
    for (size_t i = 0; i < n; i++) {
        MDB_dbi from, to;
        count[i] = 0;
        int rc = mdb_dbi_open(dst, dbs[i].to, MDB_CREATE | dbs[i].flags, &to);
        if (rc)
            return rc;
        rc = mdb_dbi_open(src, dbs[i].from, dbs[i].flags, &from);
        if (rc == MDB_NOTFOUND)
            continue;
        if (rc)
            return rc;
        MDB_cursor *cur;
        if ((rc = mdb_cursor_open(src, from, &cur)))
            return rc;
        MDB_val k, v;
        for (rc = mdb_cursor_get(cur, &k, &v, MDB_FIRST); !rc;
             rc = mdb_cursor_get(cur, &k, &v, MDB_NEXT)) {
            if ((rc = mdb_put(dst, to, &k, &v, MDB_APPEND)))
                break;
            count[i]++;
        }
        mdb_cursor_close(cur);
        if (rc != MDB_NOTFOUND)
            return rc;
    }
    return 0;
}

/* After the commit: each new database holds as many entries as were
 * copied into it. RETURN 0, or -1 (a short copy). */
static int
upg_counted(MDB_env *env, const upg_db *dbs, size_t n, const size_t *count)
{
    MDB_txn *txn;
    if (mdb_txn_begin(env, NULL, MDB_RDONLY, &txn))
        return -1;
    int bad = 0;
    for (size_t i = 0; i < n && !bad; i++) {
        MDB_dbi dbi;
        MDB_stat st;
        bad = mdb_dbi_open(txn, dbs[i].to, dbs[i].flags, &dbi) || mdb_stat(txn, dbi, &st) ||
              st.ms_entries != count[i];
    }
    mdb_txn_abort(txn);
    return bad ? -1 : 0;
}

/* The two old environments, opened read-only, and the new one, open for
 * writing in tmp: one write transaction copies both, committed (synced:
 * LMDB's default), the counts compared. RETURN 0 or MT_E* with err. */
static int
upg_write_new(const char *tree, const char *proofs, const char *tmp, char *err, size_t errlen)
{
    MDB_env *te = NULL, *pe = NULL, *ne = NULL;
    MDB_txn *tt = NULL, *pt = NULL, *nt = NULL;
    size_t tcount[4], pcount[2];
    int rc = upg_open_old(tree, &te, err, errlen);
    if (!rc)
        rc = upg_open_old(proofs, &pe, err, errlen);
    if (rc)
        goto out;
    int lrc = 0;
    errno = 0;
    if (mkdir(tmp, 0755) != 0 || (lrc = mdb_env_create(&ne)) || (lrc = mdb_env_set_maxdbs(ne, 8)) ||
        (lrc = mdb_env_set_mapsize(ne, UPG_MAP_BYTES)) ||
        (lrc = mdb_env_open(ne, tmp, MDB_NOTLS, 0644)) ||
        (lrc = mdb_txn_begin(te, NULL, MDB_RDONLY, &tt)) ||
        (lrc = mdb_txn_begin(pe, NULL, MDB_RDONLY, &pt)) ||
        (lrc = mdb_txn_begin(ne, NULL, 0, &nt)) ||
        (lrc = upg_copy(tt, nt, upg_tree_dbs, 4, tcount)) ||
        (lrc = upg_copy(pt, nt, upg_store_dbs, 2, pcount))) {
        eng_errf(err, errlen, "upgrading the state: cannot write %s: %s", tmp,
                 errno && !ne ? strerror(errno) : mdb_strerror(lrc));
        rc = MT_EIO;
        goto out;
    }
    upg_step("copied"); /* the copy made, not committed */
    lrc = mdb_txn_commit(nt);
    nt = NULL;
    if (lrc) {
        eng_errf(err, errlen, "upgrading the state: cannot commit %s: %s", tmp, mdb_strerror(lrc));
        rc = lrc == ENOSPC ? MT_ENOSPC : MT_EIO;
        goto out;
    }
    if (upg_counted(ne, upg_tree_dbs, 4, tcount) || upg_counted(ne, upg_store_dbs, 2, pcount)) {
        eng_errf(err, errlen, "upgrading the state: %s does not hold what was copied", tmp);
        rc = MT_EIO;
    }
out:
    if (nt)
        mdb_txn_abort(nt);
    if (tt)
        mdb_txn_abort(tt);
    if (pt)
        mdb_txn_abort(pt);
    if (ne)
        mdb_env_close(ne);
    if (te)
        mdb_env_close(te);
    if (pe)
        mdb_env_close(pe);
    return rc;
}

/* ---- the steps -------------------------------------------------------- */

/* The old folders removed once the new environment is in place (also
 * the end of an upgrade a kill interrupted after its rename). */
static int
upg_finish(const char *state, const char *tree, const char *proofs, const char *tmp, char *err,
           size_t errlen)
{
    int had = upg_has_env(tree) || upg_has_env(proofs);
    if (upg_remove_env(tree) || (upg_step("removed-tree"), upg_remove_env(proofs)) ||
        upg_remove_env(tmp)) {
        eng_errf(err, errlen, "upgrading the state %s: cannot remove the old layout: %s", state,
                 strerror(errno));
        return MT_EIO;
    }
    upg_sync_dir(state);
    return had;
}

int
mt_state_upgrade(const char *state, char *err, size_t errlen)
{
    char tree[4200], proofs[4200], tmp[4200], dst[4200];
    snprintf(tree, sizeof tree, "%.4096s/tree", state);
    snprintf(proofs, sizeof proofs, "%.4096s/proofs", state);
    snprintf(tmp, sizeof tmp, "%.4096s/%s.tmp", state, MT_STATE_DIR);
    snprintf(dst, sizeof dst, "%.4096s/%s", state, MT_STATE_DIR);
    if (upg_has_env(dst)) /* renamed already: only the old folders may be left */
        return upg_finish(state, tree, proofs, tmp, err, errlen);
    if (!upg_has_env(tree)) {
        if (upg_remove_env(tmp) == 0) /* a copy begun from nothing: nothing lost */
            return 0;
        eng_errf(err, errlen, "cannot remove %s: %s", tmp, strerror(errno));
        return MT_EIO;
    }
    if (!upg_has_env(proofs)) {
        eng_errf(err, errlen,
                 "the proof store %s is missing or empty, but the tree %s is there: the state "
                 "is damaged and is not upgraded",
                 proofs, tree);
        return MT_ECORRUPT;
    }
    /* a copy that a kill interrupted before its rename: written again */
    if (upg_remove_env(tmp)) {
        eng_errf(err, errlen, "cannot remove %s: %s", tmp, strerror(errno));
        return MT_EIO;
    }
    int rc = upg_write_new(tree, proofs, tmp, err, errlen);
    if (rc) {
        upg_remove_env(tmp); /* the old layout stays as it was */
        return rc;
    }
    if (upg_sync_dir(tmp) || upg_sync_dir(state)) {
        eng_errf(err, errlen, "upgrading the state: cannot sync %s: %s", tmp, strerror(errno));
        return MT_EIO;
    }
    upg_step("synced");
    if (rename(tmp, dst) != 0) {
        eng_errf(err, errlen, "upgrading the state: cannot rename %s to %s: %s", tmp, dst,
                 strerror(errno));
        return MT_EIO;
    }
    upg_sync_dir(state);
    upg_step("renamed");
    rc = upg_finish(state, tree, proofs, tmp, err, errlen);
    return rc < 0 ? rc : 1;
}
