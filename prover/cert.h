/*
 * cert.h - portable proof certificates (`checkers proof export` and
 * `checkers proof check --cert`).
 *
 * A certificate is one self-contained file that says what a proof
 * proves and holds everything a checker needs besides the rules and the
 * endgame database files: the closure of the root's proof, position by
 * position, with the move the proving side keeps at each of its
 * positions, the value each database leaf claims, and (for a win) a
 * length at every position that shows the proof ends. The format is
 * written down byte by byte in docs/certificate.md, which is the
 * reference: a checker written by someone else from that page (the one
 * in checker/, Python) must accept exactly what this module writes.
 *
 * WHAT IS EXPORTED
 *   The goals the root's stored bound implies, strongest only (a win
 *   implies "at least a draw"): one section per side that has a claim,
 *   (X, win) or (X, at least a draw). A section holds the positions that
 *   pchk_check_with (check.h) visits for that goal, in the order the walk
 *   finishes them (children before parents), so nothing outside the
 *   closure of the root's proof is written and the file is written as
 *   the walk goes (streaming: memory is the walk's own visited set).
 *   Database leaves are written just before the first position that
 *   reaches them. The header lists the database files the leaves rest
 *   on: the slice of each leaf and, since a compressed file drops the
 *   values of capture and threatened-capture positions (egdb/codec.h),
 *   the slices of every position that resolving a leaf's value may
 *   visit. Each is named with its size and SHA-256.
 *
 * SCOPES AND FORMATS
 *   The leaves follow prover/leaf.h with the database handle's scope
 *   (egdb.h, DATABASE SCOPE): complete piece counts, whole splits of the
 *   next count, partial bounds. A leaf of the complete databases (a
 *   split's included) is an 'L' record with the exact value; a partial
 *   bound that answers its section's goal is a 'B' record with the
 *   stored bound, resting on one .pwl file, which the header lists like
 *   the .cwl files. The header names the scope the leaves actually use
 *   (the complete count, the splits some leaf lies in, the partial flag
 *   when some 'B' record is written), so that a check with smaller
 *   databases fails naming what it lacks. Format 2 is written only when
 *   that scope has splits or partial bounds; a certificate over complete
 *   piece counts stays format 1, byte for byte what earlier versions
 *   wrote, so checkers of format 1 still read it (docs/certificate.md).
 *
 * THE C CHECK OF A CERTIFICATE (pcert_check)
 *   Reads the certificate into memory, checks the header (format version,
 *   rules, the database files' sizes and digests against the files in
 *   dbdir: FILES THAT DIFFER below), then
 *   runs the independent checker (check.h) over each section's records
 *   instead of a store, with the complete databases of the header's
 *   scope: a 'B' record reaches the walk as a record of an admitted
 *   store (check.h, SOURCES), a leaf whose value is its claim, and every
 *   leaf's claim is then compared with the database file it names (a
 *   .pwl bound must lie inside its claim). So the walk takes as leaves
 *   exactly what the certificate lists, as the Python checker does, and
 *   never a .pwl file the header does not name. It is the C side of the
 *   comparison with checker/ (results/certificate.md).
 *
 * FILES THAT DIFFER
 *   A listed file whose size or SHA-256 differs from the header's is not
 *   the file the prover used: the set was rebuilt or recompressed in
 *   another format (the values the same, the bytes not), or the file was
 *   damaged. That says nothing about whether the claim holds, so it is no
 *   verdict (PST_EIO, err names the file and both ways on), never
 *   "invalid". With other_files the check goes on against the values of
 *   the .cwl files given: the checker trusts its own files (`egdb verify`
 *   checks them against their successors; the C reader also checks each
 *   block's XXH3), never the certificate's digests, so a valid verdict
 *   is then as sound as with the prover's own files. result.files_differ
 *   counts them, and a leaf's failure then says that the files differ.
 *   A .pwl file that differs is no verdict even then: its bounds depend
 *   on the databases it was built over, and `egdb verify` does not check
 *   them, so nothing would stand behind a bound read from it.
 *
 * ERRORS
 *   PST_E* codes (store.h): PST_EIO (a file cannot be read or written,
 *   among them a database file the certificate lists, or databases that
 *   do not cover its scope: err names what is missing),
 *   PST_ENOMEM, PST_EINVAL (bad argument, or nothing proven to export),
 *   PST_ECORRUPT (a damaged store record or database block). A
 *   certificate that is malformed or wrong is not an error of
 *   pcert_check: it is its verdict (PCERT_INVALID with the reason).
 *
 * THREAD SAFETY
 *   Each call works on its own memory; the store and database handles may
 *   be shared with other threads.
 */
#ifndef PROVER_CERT_H
#define PROVER_CERT_H

#include <stddef.h>
#include <stdint.h>

#include "egdb/egdb.h"
#include "engine/engine.h"
#include "engine/value.h"
#include "prover/store.h"

/* ---- constants ------------------------------------------------------ */

#define PCERT_VERSION 2       /* the newest format version this module writes and reads */
#define PCERT_VERSION_PLAIN 1 /* written when the scope is complete piece counts only */
#define PCERT_HEADER_FIXED 40 /* bytes of the header before the file list */
#define PCERT_FILE_ENTRY 48   /* bytes of one database file entry */

enum pcert_status {
    PCERT_VALID = 0,  /* the certificate proves its claim */
    PCERT_INVALID = 1 /* it does not: where and why are filled in */
};

/* ---- types ---------------------------------------------------------- */

/* What an export wrote. */
typedef struct pcert_stats {
    eng_bound bound;         /* the claim: the root's bound, for its side to move */
    int sections;            /* goals exported (1 or 2) */
    int db_pieces;           /* the database piece limit written to the header */
    int scope;               /* the scope the header names (egdb.h, DATABASE SCOPE) */
    int version;             /* the format version written (1 or 2) */
    uint64_t positions;      /* position records, all sections */
    uint64_t leaves;         /* database leaf records ('L' and 'B'), all sections */
    uint64_t leaves_partial; /* of which partial-database leaves ('B') */
    uint64_t files;          /* database files listed */
    uint64_t body_raw;       /* bytes of the body before compression */
    uint64_t bytes;          /* bytes of the whole file */
    /* 1 when PST_EINVAL came back because the stored proof fails the
     * independent check (not: nothing stored, no claim). The command
     * line's exit code reads it; before issue 42 it read the message's
     * words. */
    int invalid;
} pcert_stats;

/* The verdict of pcert_check. */
typedef struct pcert_result {
    int status;              /* PCERT_* */
    eng_bound bound;         /* the claim read from the header */
    int version;             /* the format version read (0: header unreadable) */
    int scope;               /* the scope the header names (egdb.h, DATABASE SCOPE) */
    uint64_t positions;      /* position records read */
    uint64_t leaves;         /* database leaf records read ('L' and 'B') */
    uint64_t leaves_partial; /* of which partial-database leaves ('B') */
    uint64_t files;          /* database files the header lists */
    uint64_t files_differ;   /* of which differ from the files given (other_files only) */
    char where[ENG_FEN_MAX]; /* PCERT_INVALID: the first failing position ("-": none) */
    char why[320];           /* PCERT_INVALID: what is wrong */
} pcert_result;

/* ---- functions ------------------------------------------------------ */

/*
 * pcert_export - writes the certificate of the bound st records for root.
 * PARAMETERS
 *   st:     the proven-node store holding the proof.
 *   db:     the databases the proof's leaves rest on (NULL: none; only
 *           terminal leaves). Its scope (egdb_scope) decides the leaves,
 *           as in `proof check` (prover/leaf.h): complete counts, whole
 *           splits of the next, partial bounds where they answer.
 *   dbdir:  the folder of db's files (their digests go in the header).
 *   root:   the position.
 *   path:   the certificate to write. It is written under a temporary
 *           name and renamed when complete: a failed export leaves
 *           nothing at path.
 *   out:    receives what was written.
 * RETURN 0; PST_EINVAL when st holds no valid proof for root (err says
 * why: nothing stored, or the independent check fails, naming the
 * position; out->invalid tells the second from the first); PST_EIO,
 * PST_ENOMEM, PST_ECORRUPT. out is written also on failure.
 * A root that the databases hold (a proof state has no record for such
 * a root) is exported as a certificate whose only record is that leaf,
 * claiming the databases' value (a partial bound: that bound). A root of
 * a partial database with a stored proof claims the stored bound met
 * with the partial one (as pchk_db_root does), the sections the partial
 * bound answers holding the root's 'B' record alone.
 */
int pcert_export(pst_env *st, const egdb *db, const char *dbdir, const eng_pos *root,
                 const char *path, pcert_stats *out, char *err, size_t errlen);

/*
 * pcert_check - checks a certificate with the C checker (see THE C CHECK).
 * PARAMETERS
 *   path:   the certificate.
 *   dbdir:  the folder of the database files it lists (may be NULL when
 *           it lists none); the complete databases are opened to the header's
 *           piece limit with cache_bytes of block cache.
 *   other_files: 0: a listed file whose size or SHA-256 differs is no
 *           verdict (PST_EIO); 1: check against the files given and
 *           count those that differ (FILES THAT DIFFER).
 *   root:   receives the root position read from the header (zeroed
 *           when the header cannot be read).
 *   out:    the verdict.
 * RETURN 0 with out->status set; PST_EIO (the certificate or a database
 * file cannot be read or, without other_files, differs from the listed
 * one, or dbdir does not cover the header's scope: err names the file or
 * the scope missing; no verdict), PST_ENOMEM,
 * PST_ECORRUPT (a damaged database block or partial file).
 */
int pcert_check(const char *path, const char *dbdir, size_t cache_bytes, int other_files,
                eng_pos *root, pcert_result *out, char *err, size_t errlen);

#endif /* PROVER_CERT_H */
