/*
 * summary.h - a proof's state directory (`checkers prove --state DIR`)
 * summed up for the reports of `compare` and `frontier`: the tree's
 * numbers, and the verdict of the independent checker (prover/check.h)
 * on the root's record, so that a report never states a value the
 * checker has not accepted.
 */
#ifndef CLI_SUMMARY_H
#define CLI_SUMMARY_H

#include <stddef.h>
#include <stdint.h>

#include "engine/engine.h"
#include "engine/value.h"
#include "egdb/egdb.h"
#include "manager/tree.h"
#include "prover/store.h"

/* A proof's state opened: its databases (to the proof's piece count),
 * its proof store (read-write) and its tree. */
typedef struct cli_state {
    eng_pos root;
    int goal, db_pieces;
    egdb *db; /* NULL when the proof uses none */
    pst_env *st;
    mt_tree *t;
} cli_state;

/* cli_state_open - opens the state in dir with the databases in db_dir
 * (cache_bytes of block cache). RETURN CLI_EXIT_OK; CLI_EXIT_USAGE (no
 * proof there, no db_dir for a proof that needs one) or
 * CLI_EXIT_DAMAGED, with err saying which. */
int cli_state_open(const char *dir, const char *db_dir, size_t cache_bytes, cli_state *out,
                   char *err, size_t errlen);
void cli_state_close(cli_state *s);

typedef struct cli_summary {
    eng_pos root;
    int goal, db_pieces;
    mt_stats s; /* the tree's numbers (mt_stats_get) */
    int depth;  /* the tree's deepest position, plies (mt_max_depth) */
    /* the checker: -1 not run, 0 refused (why), 1 valid */
    int checked;
    eng_bound bound; /* the checked bound for the root's side to move (LW: none) */
    int settled;     /* the goal is settled by the checked bound */
    int longest_win; /* plies, -1: no win proof */
    uint64_t check_positions;
    double check_seconds;
    char why[400];
} cli_summary;

/*
 * cli_summary_get - opens the state in dir (its tree, its proof store
 * and the databases in db_dir to the proof's piece count), reads the
 * numbers, and when check is nonzero runs the checker from the root.
 * Do not run it on a state a manager is working on (the tree is loaded
 * whole, and a backup missing from the store would be written).
 * RETURN CLI_EXIT_OK; CLI_EXIT_USAGE (no proof there, no --db for a
 * proof that needs one) or CLI_EXIT_DAMAGED, with err saying which.
 */
int cli_summary_get(const char *dir, const char *db_dir, int check, cli_summary *out, char *err,
                    size_t errlen);

/* The result in words for the root's side to move: "win", "loss",
 * "draw", ">=draw", "<=draw", or "unresolved". */
const char *cli_summary_word(const cli_summary *s);

/* A proof or disproof number as text: "inf" at MT_INF (saturated), else
 * the number. Returns buf. cli_pn_parse reads either back. */
const char *cli_pn_text(uint64_t v, char *buf, size_t cap);
uint64_t cli_pn_parse(const char *s);

#endif /* CLI_SUMMARY_H */
