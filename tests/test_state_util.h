/*
 * test_state_util.h - the fixture generator of the state's old layout
 * (manager/tree.h, THE STATE'S LAYOUT): a state of one environment
 * (<state>/state) written back as the two environments that states had
 * before issue 42 (<state>/tree with "meta", "nodes", "jobs", "hist";
 * <state>/proofs with the store's "meta" and "nodes"), exactly as that
 * code wrote them, so that the upgrade (mt_state_upgrade) can be tested
 * on the layout it meets in the field. Written here with LMDB alone,
 * independently of manager/state_upgrade.c, so that it checks it. Used
 * by test_manager_tree.c and by forge_worker's `old-layout` (the
 * end-to-end suites).
 */
#ifndef TESTS_TEST_STATE_UTIL_H
#define TESTS_TEST_STATE_UTIL_H

#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <lmdb.h>

#include "manager/tree.h"

/* Copies database from of src into a new database to of a new
 * environment in dir (flags: MDB_INTEGERKEY or 0). RETURN 0 or an LMDB
 * code. */
static inline int
test_copy_dbs(MDB_txn *src, const char *dir, const char *const *from, const char *const *to,
              const unsigned *flags, int n)
{
    MDB_env *env = NULL;
    MDB_txn *txn;
    int rc;
    mkdir(dir, 0755);
    if ((rc = mdb_env_create(&env)))
        return rc;
    if ((rc = mdb_env_set_maxdbs(env, 8)) || (rc = mdb_env_set_mapsize(env, (size_t)1 << 34)) ||
        (rc = mdb_env_open(env, dir, 0, 0644)) || (rc = mdb_txn_begin(env, NULL, 0, &txn))) {
        mdb_env_close(env);
        return rc;
    }
    for (int i = 0; i < n && !rc; i++) {
        MDB_dbi a, b;
        MDB_cursor *cur;
        MDB_val k, v;
        if ((rc = mdb_dbi_open(src, from[i], flags[i], &a)) ||
            (rc = mdb_dbi_open(txn, to[i], MDB_CREATE | flags[i], &b)) ||
            (rc = mdb_cursor_open(src, a, &cur)))
            break;
        for (rc = mdb_cursor_get(cur, &k, &v, MDB_FIRST); !rc;
             rc = mdb_cursor_get(cur, &k, &v, MDB_NEXT))
            rc = mdb_put(txn, b, &k, &v, 0) ? -1 : 0;
        mdb_cursor_close(cur);
        rc = rc == MDB_NOTFOUND ? 0 : rc;
    }
    rc = rc ? (mdb_txn_abort(txn), rc) : mdb_txn_commit(txn);
    mdb_env_close(env);
    return rc;
}

/*
 * test_state_split - the state in folder state (one environment) written
 * as the old layout: <state>/tree and <state>/proofs made, then
 * <state>/state removed. The state must not be open. RETURN 0, or
 * nonzero with err.
 */
static inline int
test_state_split(const char *state, char *err, size_t errlen)
{
    static const char *const tnew[] = {MT_DB_META, MT_DB_NODES, MT_DB_JOBS, MT_DB_HIST};
    static const char *const told[] = {"meta", "nodes", "jobs", "hist"};
    static const unsigned tflags[] = {0, 0, MDB_INTEGERKEY, MDB_INTEGERKEY};
    static const char *const snames[] = {"meta", "nodes"};
    static const unsigned sflags[] = {0, 0};
    char dir[4200], tree[4200], proofs[4200], f[4300];
    snprintf(dir, sizeof dir, "%.4000s/%s", state, MT_STATE_DIR);
    snprintf(tree, sizeof tree, "%.4000s/tree", state);
    snprintf(proofs, sizeof proofs, "%.4000s/proofs", state);
    MDB_env *env = NULL;
    MDB_txn *txn;
    int rc = mdb_env_create(&env);
    if (!rc && !(rc = mdb_env_set_maxdbs(env, 8)) &&
        !(rc = mdb_env_set_mapsize(env, (size_t)1 << 34)) &&
        !(rc = mdb_env_open(env, dir, MDB_RDONLY, 0644)) &&
        !(rc = mdb_txn_begin(env, NULL, MDB_RDONLY, &txn))) {
        rc = test_copy_dbs(txn, tree, tnew, told, tflags, 4);
        if (!rc)
            rc = test_copy_dbs(txn, proofs, snames, snames, sflags, 2);
        mdb_txn_abort(txn);
    }
    mdb_env_close(env);
    if (rc) {
        snprintf(err, errlen, "splitting %.300s: %s", dir, mdb_strerror(rc));
        return rc;
    }
    snprintf(f, sizeof f, "%s/data.mdb", dir);
    unlink(f);
    snprintf(f, sizeof f, "%s/lock.mdb", dir);
    unlink(f);
    return rmdir(dir);
}

#endif /* TESTS_TEST_STATE_UTIL_H */
