/*
 * check_cmds.c - `checkers proof ...`: commands on the proven-node store.
 * For now one: `proof check`, the independent checker of prover/check.h.
 *
 * Exit status of `proof check` (for scripts, stable):
 *   0  valid: every proof the stored bound implies is complete
 *   1  invalid: a proof fails (the position and the reason are printed)
 *   2  nothing stored for the FEN, or bad usage or input (options, FEN,
 *      a path that is not a store or database)
 *   3  a damaged store record or database file (the check could not run,
 *      or, with --state, a record of the state's store outside the root's
 *      proof fails its checksum: the first line still gives the verdict)
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "errors/errors.h"
#include "egdb/egdb.h"
#include "engine/value.h"
#include "manager/tree.h"
#include "prover/check.h"
#include "prover/store.h"

/* ---- static data ------------------------------------------------------ */

static const char proof_help[] =
    "usage: checkers proof check --store PATH --db DIR [--pieces N] [--cache MB] FEN\n"
    "       checkers proof check --state DIR [--db DIR] [--cache MB]\n"
    "       checkers proof check --cert FILE [--db DIR] [--other-files]   (a certificate)\n"
    "       checkers proof export ...   (writes a certificate: proof export --help)\n"
    "\n"
    "Checks from scratch that the proven-node store holds a complete proof of\n"
    "the bound it records for FEN, trusting only the rules, the endgame\n"
    "databases and the store's bytes (no proof numbers, no search).\n"
    "\n"
    "A bound is checked as the proofs it implies: \"at least a draw\" for a side\n"
    "is a set of stored positions closed under play (its stored moves, all the\n"
    "opponent's moves; cycles allowed), \"a win\" the same set without cycles.\n"
    "A position with no move is lost; a position the database covers has the\n"
    "database's value.\n"
    "\n"
    "  --store PATH  the proof store (opened read-only)\n"
    "  --state DIR   a proof of `checkers prove`: checks its root's record in\n"
    "                DIR/state's store, with the databases' piece count the proof\n"
    "                used: the manager's tree and every worker's proof must\n"
    "                form one closed proof of the root's result\n"
    "  --db DIR      the endgame databases the proof's leaves rest on\n"
    "  --pieces N    use the databases only up to N pieces: pass the limit the\n"
    "                solver used (a larger one can only accept more)\n"
    "  --cache MB    memory for decoded database blocks (default 256)\n"
    "  --other-files (with --cert) a listed database file whose size or SHA-256\n"
    "                differs from the certificate's is no verdict (exit 2) unless\n"
    "                this is given: then the leaves are checked against the values\n"
    "                of the .cwl files in DIR (a rebuilt or recompressed set) and the\n"
    "                output counts the files that differ (a .pwl file must match)\n"
    "\n"
    "Output: FEN<TAB>valid|invalid|nothing stored, then the bound and the\n"
    "proofs checked, the positions visited, the leaves, the longest win line;\n"
    "for an invalid proof, the first position that fails and why. With\n"
    "--state, every record of the state's store is then read too: a line\n"
    "'store: damaged (...)' names the first that fails its checksum, and the\n"
    "exit status is 3 even when the root's proof (the first line) is valid.\n"
    "Exit status: 0 valid, 1 invalid, 2 nothing stored or bad usage/input,\n"
    "3 a damaged store or database.\n"
    "\n"
    "Examples:\n"
    "  checkers proof check --store proofs --db egdb-data 'B:W18,K26:BK10,K14'\n"
    "  checkers proof check --store proofs --db egdb-data --pieces 6 \\\n"
    "      'W:W21,22,23,25,26,27,28,29,30,31,32:B1,2,3,4,5,6,7,8,9,10,11,15'\n";

/* ---- helpers ---------------------------------------------------------- */

/* "draw: Black at least draws and White at least draws": the bound in
 * words, then the proofs it implies, in the order pchk_check checks them. */
static void
bound_text(eng_bound b, int stm, char *buf, size_t len)
{
    static const char *const word[ENG_NBOUNDS] = {
        "loss", "at most a draw", "draw", "at least a draw", "win", "nothing"};
    const char *s = stm == ENG_BLACK ? "Black" : "White";
    const char *o = stm == ENG_BLACK ? "White" : "Black";
    const char *parts[4];
    int n = 0;
    if (!eng_bound_valid(b)) {
        snprintf(buf, len, "bound code %d", (int)b);
        return;
    }
    int lo = eng_bound_lo(b), hi = eng_bound_hi(b);
    char p[4][32];
    if (lo >= ENG_DRAW)
        snprintf(p[n], sizeof p[n], "%s at least draws", s), parts[n] = p[n], n++;
    if (lo == ENG_WIN)
        snprintf(p[n], sizeof p[n], "%s wins", s), parts[n] = p[n], n++;
    if (hi <= ENG_DRAW)
        snprintf(p[n], sizeof p[n], "%s at least draws", o), parts[n] = p[n], n++;
    if (hi == ENG_LOSS)
        snprintf(p[n], sizeof p[n], "%s wins", o), parts[n] = p[n], n++;
    int off = snprintf(buf, len, "%s (%s for %s to move):", word[b], eng_bound_name(b), s);
    for (int i = 0; i < n && off > 0 && (size_t)off < len; i++)
        off += snprintf(buf + off, len - (size_t)off, "%s %s", i ? " and" : "", parts[i]);
    if (n == 0 && off > 0 && (size_t)off < len)
        snprintf(buf + off, len - (size_t)off, " no proof");
}

/* Exit status for a store error: damaged (3) or not a usable store (2). */
static int
store_exit(int rc)
{
    return rc == PST_ECORRUPT ? CLI_EXIT_DAMAGED : CLI_EXIT_USAGE;
}

/* Exit status for a database that cannot be opened: a damaged file (3),
 * otherwise a path that holds no usable database (2; egdb_open says
 * EGDB_EMISSING for a directory without the complete set asked for). */
static int
db_exit(int rc)
{
    return rc == EGDB_ECORRUPT ? CLI_EXIT_DAMAGED : CLI_EXIT_USAGE;
}

/* ---- subcommands -------------------------------------------------------- */

int
cli_proof_state_read(const char *cmd, const char *state, int others, cli_proof_state *out)
{
    char terr[512];
    eng_pos r;
    if (others) {
        fprintf(stderr,
                "checkers %s: --state takes the store, the root and the piece count "
                "from the proof; give no --store, --pieces or FEN\n",
                cmd);
        return CLI_EXIT_USAGE;
    }
    int trc =
        mt_info_db(state, &r, &out->goal, &out->scope, out->db, sizeof out->db, terr, sizeof terr);
    if (trc) {
        fprintf(stderr, "checkers %s: %s\n", cmd, terr);
        return trc == MT_ECORRUPT || trc == MT_EIO ? CLI_EXIT_DAMAGED : CLI_EXIT_USAGE;
    }
    /* the store inside the state's one environment (manager/tree.h, THE
     * STATE'S LAYOUT), readable as any store */
    snprintf(out->store, sizeof out->store, "%.4100s/%s", state, MT_STATE_DIR);
    eng_format_fen(&r, out->fen, sizeof out->fen);
    return CLI_EXIT_OK;
}

int
cli_proof_args_read(const char *cmd, const char *help, unsigned opts, int argc, char **argv,
                    cli_proof_args *a)
{
    memset(a, 0, sizeof *a);
    a->cache_mb = 256;
    for (int i = 1; i < argc; i++) {
        const char *o = argv[i];
        if (cli_is_help(o)) {
            fputs(help, stdout);
            return CLI_EXIT_OK;
        } else if (!strcmp(o, "--store") && i + 1 < argc) {
            a->store = argv[++i];
        } else if (!strcmp(o, "--db") && i + 1 < argc) {
            a->dbdir = argv[++i];
        } else if (!strcmp(o, "--state") && i + 1 < argc) {
            a->state = argv[++i];
        } else if ((opts & CLI_PROOF_OUT) && !strcmp(o, "--out") && i + 1 < argc) {
            a->out = argv[++i];
        } else if (!strcmp(o, "--pieces") && i + 1 < argc) {
            if ((a->pieces = cli_parse_uint(cmd, "--pieces", argv[++i], 1, EGDB_MAX_PIECES)) < 0)
                return CLI_EXIT_USAGE;
        } else if ((opts & CLI_PROOF_CACHE) && !strcmp(o, "--cache") && i + 1 < argc) {
            if ((a->cache_mb = cli_parse_uint(cmd, "--cache (MB)", argv[++i], 1, 1000000)) < 0)
                return CLI_EXIT_USAGE;
        } else if (o[0] == '-' && o[1] != '\0') {
            fprintf(stderr, "checkers %s: unknown or incomplete option '%s'\n", cmd, o);
            return CLI_EXIT_USAGE;
        } else if (!a->fen) {
            a->fen = o;
        } else {
            fprintf(stderr, "checkers %s: one FEN only ('%s' is a second)\n", cmd, o);
            return CLI_EXIT_USAGE;
        }
    }
    if (a->state) {
        int src = cli_proof_state_read(cmd, a->state, a->store || a->fen || a->pieces, &a->ps);
        if (src != CLI_EXIT_OK)
            return src;
        if (!a->dbdir && a->ps.db[0])
            a->dbdir = a->ps.db;
        a->store = a->ps.store;
        a->fen = a->ps.fen;
        a->pieces = a->ps.scope;
    }
    return CLI_PROOF_GO;
}

/*
 * Whether an invalid check failed for want of databases: the failing
 * position has no record, the store's proofs rest on databases (their
 * scope recorded in the store, prover/store.h) that the folder given does
 * not hold, and they would take that position (a complete count or split,
 * or a partial bound, beyond what the folder holds). A proof stores
 * nothing for its database leaves, so with fewer databases such a leaf
 * reads as a missing proof. The reason goes to why. A store with no scope
 * recorded (written before stop 58) keeps the plain verdict and the
 * checker's hint.
 */
static int
beyond_folder(pst_env *st, const egdb *db, const pchk_result *res, char *why, size_t len)
{
    int have = db ? egdb_scope(db) : 0, used = 0;
    char e[256];
    eng_pos p;
    pst_record r;
    if (pst_scope(st, &used, e, sizeof e) != 0 || used == 0 || egdb_scope_within(used, have))
        return 0;
    if (eng_parse_fen(res->where, &p, e, sizeof e) != 0 || pst_get(st, &p, &r) != PST_ENOTFOUND)
        return 0;
    if (egdb_scope_has(have, &p) || !(egdb_scope_has(used, &p) || (used & EGDB_SCOPE_PARTIAL)))
        return 0;
    char u[48], h[48] = "none";
    egdb_scope_name(used, u, sizeof u);
    if (db)
        egdb_scope_name(have, h, sizeof h);
    snprintf(why, len,
             "no stored proof here, and the writers of this store's proofs used the %s databases "
             "(recorded in the store), which would take it as a leaf; the folder given holds %s: "
             "check with those databases for a verdict",
             u, h);
    return 1;
}

static int
proof_check_cmd(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) /* a certificate: cert_cmds.c */
        if (!strcmp(argv[i], "--cert"))
            return cli_proof_check_cert(argc, argv);
    static cli_proof_args a; /* static: a state's paths are large */
    int arc = cli_proof_args_read("proof check", proof_help, CLI_PROOF_CACHE, argc, argv, &a);
    if (arc != CLI_PROOF_GO)
        return arc;
    const char *store = a.store, *dbdir = a.dbdir, *fen = a.fen, *state = a.state;
    long pieces = a.pieces, cache_mb = a.cache_mb;
    int state_goal = state ? a.ps.goal : 0;
    if (state && a.ps.scope == 0 && !dbdir)
        dbdir = ""; /* a proof without databases */
    if (!store || !dbdir || !fen) {
        fprintf(stderr, "checkers proof check: needs --store PATH, --db DIR and a FEN\n"
                        "('checkers proof check --help' has examples)\n");
        return CLI_EXIT_USAGE;
    }
    eng_pos root;
    if (cli_parse_fen("proof check", fen, &root) != 0)
        return CLI_EXIT_USAGE;

    char err[512];
    egdb *db = NULL;
    pst_env *st = NULL;
    mt_tree *stt = NULL; /* --state: the state, opened for its store */
    int status;
    int rc = 0;
    if (dbdir[0] || !state)
        rc = egdb_open(dbdir, (int)pieces, (size_t)cache_mb * 1000000, &db, err, sizeof err);
    if (rc != 0) {
        fprintf(stderr, "checkers proof check: %s (%s)\n", err, ck_strerror(rc));
        return db_exit(rc);
    }
    if (state) {
        /* the state's store, whole: not missing, emptied or swapped; it
         * is the tree's, in the tree's environment (opened once) */
        if ((rc = mt_open_store(state, &stt, err, sizeof err)) != 0) {
            fprintf(stderr, "checkers proof check: %s\n", err);
            status = rc == MT_ECORRUPT || rc == MT_EIO || rc == MT_ESTORE ? CLI_EXIT_DAMAGED
                                                                          : CLI_EXIT_USAGE;
            goto cleanup;
        }
        st = mt_store(stt);
    } else if ((rc = pst_open(store, PST_RDONLY, &st, err, sizeof err)) != 0) {
        fprintf(stderr, "checkers proof check: %s (%s)\n", err, ck_strerror(rc));
        status = store_exit(rc);
        goto cleanup;
    }

    pchk_result res;
    double t0 = cli_now();
    rc = pchk_check(st, db, &root, &res, err, sizeof err);
    if (rc != 0) {
        /* The check could not run: a damaged record or database block is
         * never a verdict. */
        fprintf(stderr, "checkers proof check: %s: %s\n", fen, err);
        status = rc == PST_ECORRUPT || rc == PST_EIO ? CLI_EXIT_DAMAGED : CLI_EXIT_FAIL;
        goto cleanup;
    }
    /* a state whose root the databases hold: that leaf is its proof */
    if (state && (rc = pchk_db_root(db, &root, &res, err, sizeof err)) < 0) {
        fprintf(stderr, "checkers proof check: %s: %s\n", fen, err);
        status = rc == PST_ECORRUPT || rc == PST_EIO ? CLI_EXIT_DAMAGED : CLI_EXIT_FAIL;
        goto cleanup;
    }
    if (res.status == PCHK_NOTHING) {
        printf("%s\tnothing stored\n", fen);
        status = CLI_EXIT_USAGE;
        goto cleanup;
    }
    if (res.status == PCHK_INVALID && beyond_folder(st, db, &res, err, sizeof err)) {
        /* Not a verdict: the proof rests on databases the folder lacks. */
        printf("%s\tcannot check\n", fen);
        printf("failing position: %s\n", res.where);
        printf("reason: %s\n", err);
        status = CLI_EXIT_USAGE;
        goto cleanup;
    }
    char bt[256];
    bound_text(res.bound, root.stm, bt, sizeof bt);
    printf("%s\t%s\n", fen, res.status == PCHK_VALID ? "valid" : "invalid");
    printf("bound: %s\n", bt);
    if (state && res.status == PCHK_VALID)
        printf("goal %s: %s by the checked bound\n", mt_goal_name(state_goal),
               mt_goal_settled(state_goal, res.bound) ? "settled" : "not settled");
    else if (state)
        printf("goal %s: not settled (the proof is invalid)\n", mt_goal_name(state_goal));
    if (res.status == PCHK_INVALID) {
        printf("failing position: %s\n", res.where);
        printf("reason: %s\n", res.why);
    }
    printf("positions visited: %" PRIu64 "\n", res.positions);
    char scope[48] = "0";
    if (db)
        egdb_scope_name(egdb_scope(db), scope, sizeof scope);
    printf("database leaves: %" PRIu64 " (up to %s pieces%s)\n", res.leaves_db, scope,
           db && EGDB_SCOPE_SPLITS(egdb_scope(db)) ? ": the splits after + are of the next count"
                                                   : "");
    if (db && (egdb_scope(db) & EGDB_SCOPE_PARTIAL))
        printf("partial-database leaves: %" PRIu64 " (bounds that answer the goal where they "
               "stand; prover/leaf.h)\n",
               res.leaves_partial);
    printf("terminal leaves: %" PRIu64 "\n", res.leaves_end);
    if (res.status != PCHK_VALID)
        printf("longest win line: - (the check stopped at the failure)\n");
    else if (res.longest_win >= 0)
        printf("longest win line: %d plies\n", res.longest_win);
    else
        printf("longest win line: none (no win proof)\n");
    status = res.status == PCHK_VALID ? CLI_EXIT_OK : CLI_EXIT_FAIL;
    if (state) {
        /* The state's store is the proof's and nothing else's: a record
         * that fails its checksum is damage even where the root's proof
         * does not reach (a node the tree proved and later left aside, a
         * worker's record below it). The check above said whether the
         * root's proof is whole; the scan says whether the store is (exit
         * 3 when it is not, as `store stats` on it). */
        pst_stats ss;
        char serr[512];
        int src = pst_stats_get(st, &ss, serr, sizeof serr);
        if (src != 0) {
            printf("store: damaged (%s); the root's proof above is %s\n", serr,
                   res.status == PCHK_VALID ? "whole: it does not rest on the damage" : "invalid");
            fprintf(stderr, "checkers proof check: the state's proof store is damaged: %s\n", serr);
            status = CLI_EXIT_DAMAGED;
        } else {
            printf("store: %" PRIu64 " records, every one whole\n", ss.records);
        }
    }
    fprintf(stderr, "checked in %.2f s\n", cli_now() - t0);

cleanup:
    if (stt)
        mt_close(stt); /* and its store, st */
    else if (st)
        pst_close(st);
    egdb_close(db);
    return status;
}

int
cli_proof(int argc, char **argv)
{
    if (argc < 2 || cli_is_help(argv[1])) {
        fputs(proof_help, argc < 2 ? stderr : stdout);
        return argc < 2 ? CLI_EXIT_USAGE : CLI_EXIT_OK;
    }
    if (!strcmp(argv[1], "check"))
        return proof_check_cmd(argc - 1, argv + 1);
    if (!strcmp(argv[1], "export"))
        return cli_proof_export(argc - 1, argv + 1);
    fprintf(stderr, "checkers proof: unknown subcommand '%s' (known: check, export)\n", argv[1]);
    return CLI_EXIT_USAGE;
}
