/*
 * summary.c - a proof's state directory summed up (summary.h).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/summary.h"
#include "egdb/egdb.h"
#include "prover/check.h"
#include "prover/prover.h"
#include "prover/store.h"

int
cli_state_open(const char *dir, const char *db_dir, size_t cache_bytes, cli_state *out, char *err,
               size_t errlen)
{
    memset(out, 0, sizeof *out);
    char e[512];
    char kept_db[480];
    int rc = mt_info_db(dir, &out->root, &out->goal, &out->db_pieces, kept_db, sizeof kept_db, e,
                        sizeof e);
    if (rc) {
        snprintf(err, errlen, "%s", e);
        return rc == MT_ECORRUPT || rc == MT_EIO ? CLI_EXIT_DAMAGED : CLI_EXIT_USAGE;
    }
    if (!db_dir && kept_db[0])
        db_dir = kept_db; /* where the proof was started with them */
    if (out->db_pieces > 0) {
        if (!db_dir) {
            char name[48];
            egdb_scope_name(out->db_pieces, name, sizeof name);
            snprintf(err, errlen, "the proof in %s rests on the %s-piece databases: give --db", dir,
                     name);
            return CLI_EXIT_USAGE;
        }
        rc = egdb_open(db_dir, out->db_pieces, cache_bytes, &out->db, e, sizeof e);
        if (rc) {
            snprintf(err, errlen, "databases %s: %s", db_dir, e);
            return rc == EGDB_ECORRUPT ? CLI_EXIT_DAMAGED : CLI_EXIT_USAGE;
        }
    }
    /* the tree and its store: one environment (manager/tree.h, THE
     * STATE'S LAYOUT), the store the tree's */
    rc = mt_open(dir, NULL, out->db, &out->t, e, sizeof e);
    if (!rc)
        out->st = mt_store(out->t);
    if (rc) {
        snprintf(err, errlen, "%s", e);
        cli_state_close(out);
        return rc == MT_ECORRUPT || rc == MT_ESTORE || rc == MT_EDB ? CLI_EXIT_DAMAGED
                                                                    : CLI_EXIT_USAGE;
    }
    return CLI_EXIT_OK;
}

void
cli_state_close(cli_state *s)
{
    if (s->t)
        mt_close(s->t); /* and its store, s->st */
    egdb_close(s->db);
    memset(s, 0, sizeof *s);
}

int
cli_summary_get(const char *dir, const char *db_dir, int check, cli_summary *out, char *err,
                size_t errlen)
{
    memset(out, 0, sizeof *out);
    out->checked = -1;
    out->bound = ENG_LW;
    out->longest_win = -1;
    cli_state cs;
    int status = cli_state_open(dir, db_dir, (size_t)256 << 20, &cs, err, errlen);
    if (status)
        return status;
    out->root = cs.root;
    out->goal = cs.goal;
    out->db_pieces = cs.db_pieces;
    mt_stats_get(cs.t, &out->s);
    out->depth = mt_max_depth(cs.t);
    /* the tree stays open through the check: its store (cs.st) lives in
     * the tree's environment and closes with it */
    if (check) {
        pchk_result res;
        char e[512];
        double t0 = cli_now();
        int rc = pchk_check(cs.st, cs.db, &out->root, &res, e, sizeof e);
        if (rc == 0) { /* a root the databases hold: as `proof check --state` */
            int drc = pchk_db_root(cs.db, &out->root, &res, e, sizeof e);
            if (drc < 0)
                rc = drc;
        }
        out->check_seconds = cli_now() - t0;
        if (rc) {
            snprintf(err, errlen, "the checker could not run on %s: %s", dir, e);
            status = rc == PST_ECORRUPT || rc == PST_EIO ? CLI_EXIT_DAMAGED : CLI_EXIT_FAIL;
        } else if (res.status == PCHK_NOTHING) {
            out->checked = 1; /* nothing claimed, nothing to refuse */
        } else if (res.status == PCHK_VALID) {
            out->checked = 1;
            out->bound = res.bound;
            out->longest_win = res.longest_win;
        } else {
            out->checked = 0;
            snprintf(out->why, sizeof out->why, "at %s: %s", res.where, res.why);
        }
        out->check_positions = res.positions;
        out->settled = out->checked == 1 && mt_goal_settled(out->goal, out->bound);
    }
    cli_state_close(&cs);
    return status;
}

const char *
cli_summary_word(const cli_summary *s)
{
    if (s->checked == 0)
        return "refused by the checker";
    eng_bound b = s->checked == 1 ? s->bound : s->s.root_bound;
    return b == ENG_LW ? "unresolved" : prv_bound_word(b);
}

const char *
cli_pn_text(uint64_t v, char *buf, size_t cap)
{
    if (v >= MT_INF)
        snprintf(buf, cap, "inf");
    else
        snprintf(buf, cap, "%" PRIu64, v);
    return buf;
}

uint64_t
cli_pn_parse(const char *s)
{
    return !strcmp(s, "inf") ? MT_INF : strtoull(s, NULL, 10);
}
