/*
 * cert_cmds.c - `checkers proof export` (writes a certificate, prover/cert.h)
 * and `checkers proof check --cert FILE` (the C checker on a certificate).
 * The format is docs/certificate.md; checker/checkcert.py is the second,
 * independent checker of the same files.
 *
 * Exit status (the project's convention, README):
 *   export: 0 written; 1 the stored proof is not valid (nothing written);
 *           2 bad usage or input, nothing stored; 3 a damaged store or
 *           database.
 *   check --cert: 0 valid; 1 invalid (the first failing position and the
 *           reason are printed); 2 bad usage or a file that cannot be
 *           read; 3 a damaged database.
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
#include "prover/cert.h"
#include "prover/store.h"

/* ---- static data ------------------------------------------------------ */

static const char export_help[] =
    "usage: checkers proof export --state DIR [--db DIR] --out FILE\n"
    "       checkers proof export --store PATH --db DIR [--pieces N] --out FILE FEN\n"
    "\n"
    "Writes a portable certificate of the root's proven bound: the closure of\n"
    "its proof (every position, the move the proving side keeps there, every\n"
    "database leaf with its value, a length per position for a win), and in\n"
    "the header the rules, the root, the claim and the SHA-256 of each\n"
    "database file the leaves rest on. The proof is checked first (as by\n"
    "`proof check`); an invalid proof writes nothing. The format is\n"
    "docs/certificate.md; anyone can check the file with\n"
    "`python3 checker/checkcert.py FILE --db DIR` or `checkers proof check --cert FILE`.\n"
    "\n"
    "  --state DIR   a proof of `checkers prove` (root, store and piece count\n"
    "                from the state)\n"
    "  --store PATH  a proof store, with the FEN of its root\n"
    "  --db DIR      the endgame databases (compressed .cwl files, and the\n"
    "                partial .pwl files when the proof rests on them)\n"
    "  --pieces N    the databases' piece limit the proof used (default: all\n"
    "                the folder holds: complete counts, whole splits of the\n"
    "                next count, partial bounds)\n"
    "  --out FILE    the certificate to write\n"
    "\n"
    "Exit status: 0 written, 1 the proof is not valid, 2 bad usage or nothing\n"
    "stored, 3 a damaged store or database.\n"
    "\n"
    "Example:\n"
    "  checkers proof export --state proofs/demo --out demo.cert\n";

/* ---- subcommands -------------------------------------------------------- */

int
cli_proof_export(int argc, char **argv)
{
    static cli_proof_args a; /* static: a state's paths are large */
    int arc = cli_proof_args_read("proof export", export_help, CLI_PROOF_OUT, argc, argv, &a);
    if (arc != CLI_PROOF_GO)
        return arc;
    const char *store = a.store, *dbdir = a.dbdir, *fen = a.fen, *state = a.state, *outp = a.out;
    long pieces = a.pieces;
    if (state && a.ps.scope == 0)
        dbdir = NULL; /* a proof without databases */
    if (!store || !fen || !outp || (!dbdir && !state)) {
        fprintf(stderr, "checkers proof export: needs --out FILE and --state DIR, or --store "
                        "PATH, --db DIR and a FEN\n('checkers proof export --help')\n");
        return CLI_EXIT_USAGE;
    }
    eng_pos root;
    if (cli_parse_fen("proof export", fen, &root) != 0)
        return CLI_EXIT_USAGE;

    char err[600];
    egdb *db = NULL;
    pst_env *st = NULL;
    int status = CLI_EXIT_OK, rc = 0;
    /* The databases of the proof's scope (egdb.h, DATABASE SCOPE): a
     * state's, or --pieces N, or all the folder holds (complete counts,
     * whole splits of the next, partial bounds). The certificate names
     * the part of it that its leaves use (format 2 when that has splits
     * or partial bounds, docs/certificate.md). */
    if (dbdir)
        rc = egdb_open(dbdir, (int)pieces, 256u * 1000000, &db, err, sizeof err);
    if (rc != 0) {
        fprintf(stderr, "checkers proof export: %s (%s)\n", err, ck_strerror(rc));
        return rc == EGDB_ECORRUPT ? CLI_EXIT_DAMAGED : CLI_EXIT_USAGE;
    }
    rc = pst_open(store, PST_RDONLY, &st, err, sizeof err);
    if (rc != 0) {
        fprintf(stderr, "checkers proof export: %s (%s)\n", err, ck_strerror(rc));
        status = rc == PST_ECORRUPT ? CLI_EXIT_DAMAGED : CLI_EXIT_USAGE;
        goto cleanup;
    }
    pcert_stats s;
    double t0 = cli_now();
    rc = pcert_export(st, db, dbdir, &root, outp, &s, err, sizeof err);
    double dt = cli_now() - t0;
    if (rc != 0) {
        fprintf(stderr, "checkers proof export: %s: %s\n", fen, err);
        status = rc == PST_ECORRUPT || rc == PST_EIO ? CLI_EXIT_DAMAGED
                 : rc == PST_EINVAL && s.invalid     ? CLI_EXIT_FAIL
                                                     : CLI_EXIT_USAGE;
        goto cleanup;
    }
    printf("%s\t%s\n", fen, outp);
    printf("claim: %s (for %s to move)\n", eng_bound_name(s.bound),
           root.stm == ENG_BLACK ? "Black" : "White");
    printf("sections: %d\n", s.sections);
    printf("positions: %" PRIu64 "\n", s.positions);
    char scope[48];
    egdb_scope_name(s.scope, scope, sizeof scope);
    printf("format: %d (databases %s)\n", s.version, scope);
    printf("database leaves: %" PRIu64 " (up to %d pieces), of which partial: %" PRIu64 "\n",
           s.leaves, s.db_pieces, s.leaves_partial);
    printf("database files: %" PRIu64 "\n", s.files);
    printf("bytes: %" PRIu64 " (body %" PRIu64 " before compression; %.2f bytes a record)\n",
           s.bytes, s.body_raw,
           s.positions + s.leaves ? (double)s.bytes / (double)(s.positions + s.leaves) : 0.0);
    fprintf(stderr, "exported in %.2f s\n", dt);

cleanup:
    if (st)
        pst_close(st);
    egdb_close(db);
    return status;
}

int
cli_proof_check_cert(int argc, char **argv)
{
    const char *cert = NULL, *dbdir = NULL;
    long cache_mb = 256;
    int other_files = 0;
    for (int i = 1; i < argc; i++) {
        const char *o = argv[i];
        if (!strcmp(o, "--cert") && i + 1 < argc) {
            cert = argv[++i];
        } else if (!strcmp(o, "--other-files")) {
            other_files = 1;
        } else if (!strcmp(o, "--db") && i + 1 < argc) {
            dbdir = argv[++i];
        } else if (!strcmp(o, "--cache") && i + 1 < argc) {
            if ((cache_mb = cli_parse_uint("proof check", "--cache (MB)", argv[++i], 1, 1000000)) <
                0)
                return CLI_EXIT_USAGE;
        } else {
            fprintf(stderr,
                    "checkers proof check --cert: unknown or incomplete argument '%s' "
                    "(takes --cert FILE [--db DIR] [--cache MB] [--other-files])\n",
                    o);
            return CLI_EXIT_USAGE;
        }
    }
    if (!cert) {
        fprintf(stderr, "checkers proof check: --cert needs a FILE\n");
        return CLI_EXIT_USAGE;
    }
    pcert_result res;
    eng_pos root;
    char err[600], fen[ENG_FEN_MAX] = "-";
    double t0 = cli_now();
    int rc = pcert_check(cert, dbdir, (size_t)cache_mb * 1000000, other_files, &root, &res, err,
                         sizeof err);
    if (rc != 0) {
        fprintf(stderr, "checkers proof check: %s: %s\n", cert, err);
        return rc == PST_ECORRUPT ? CLI_EXIT_DAMAGED : CLI_EXIT_USAGE;
    }
    if (root.bm | root.wm | root.bk | root.wk)
        eng_format_fen(&root, fen, sizeof fen);
    printf("%s\t%s\n", cert, res.status == PCERT_VALID ? "valid" : "invalid");
    printf("root: %s\n", fen);
    printf("claim: %s\n", eng_bound_valid(res.bound) ? eng_bound_name(res.bound) : "-");
    if (res.status != PCERT_VALID) {
        printf("failing position: %s\n", res.where);
        printf("reason: %s\n", res.why);
    }
    if (res.version) {
        char scope[48];
        egdb_scope_name(res.scope, scope, sizeof scope);
        printf("format: %d (databases %s)\n", res.version, scope);
    }
    printf("positions: %" PRIu64 "\n", res.positions);
    printf("database leaves: %" PRIu64 " (of which partial: %" PRIu64 ")\n", res.leaves,
           res.leaves_partial);
    if (res.files > 0) {
        printf("database files: %" PRIu64 " listed", res.files);
        if (res.files_differ > 0)
            printf(", %" PRIu64 " of them other than the certificate's (checked against their "
                   "values)",
                   res.files_differ);
        printf("\n");
    }
    fprintf(stderr, "checked in %.2f s\n", cli_now() - t0);
    return res.status == PCERT_VALID ? CLI_EXIT_OK : CLI_EXIT_FAIL;
}
