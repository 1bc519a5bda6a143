/*
 * pipeline.h - building a piece count material by material, within the
 * disk it has (egpl_). Internal to the egdb module; used by build.c.
 *
 * WHY
 *   The builder reads the values of moves that leave the slice pair in
 *   hand (promotions, a leading man's advance) from 2-bit files of the
 *   same piece count built earlier, memory-mapped. Kept until the end,
 *   the 8-piece files would take 101.6 GB (docs/egdb.md, "Eight pieces"),
 *   more than a machine of 70 GB of free disk holds. But a promotion
 *   only ever leads to a material with one man fewer and one king more of
 *   the same side, so once every material that promotes into a material
 *   is built, its 2-bit files are read by nobody: they can go, and what
 *   stays is their compressed form (about 160 positions a byte).
 *
 * UNITS
 *   The unit of the pipeline is a material together with its
 *   colour-flipped twin: all the slices of both, which egix_slices lists
 *   next to each other (each slice pair holds a slice of each). A unit U
 *   NEEDS a unit V when a promotion of U leads into V: V's material (or
 *   its twin) is U's with one black man made a king, or one white man.
 *   Promotions keep the number of pieces on each side, so the units of a
 *   split (a side with a pieces against one with b: "4v4", "5v3" with
 *   "3v5") need only units of the same split and smaller databases. A
 *   build can therefore be restricted to some splits of its top piece
 *   count (4 against 4 first, where play goes).
 *
 * STAGES OF A UNIT (egpl_stage), after its last slice pair is built
 *   1. verify: every position of its 2-bit files against its successors
 *      (stage.h, the check of `egdb verify`), while every file a
 *      successor can lie in is still there; when it passes,
 *      "<dir>/units/<KKMM>.verified" is written (atomically) with each
 *      slice's size and the XXH3-64 of its whole 2-bit file. A run that
 *      finds that mark, and every file with the same size and digest,
 *      does not check again: the check is a pure function of those bytes
 *      (and of the files of smaller units, staged and never rewritten).
 *      Why: a stop in stage 2 or 3 lost the whole check, 22 minutes for
 *      a unit of 6.7 G positions on 2 cores, where the digests take
 *      seconds. Within the check, "<dir>/units/<KKMM>.checking" holds
 *      the same text as the mark would (the digests when the check
 *      began), the line "checked", then each slice's name as the check
 *      finds all its positions right; a run that finds it with the text
 *      of the files as they are checks only the slices it does not
 *      name (a stop in the check of an 8-piece unit lost up to half an
 *      hour). The mark replaces it;
 *   2. compress: its .cwl files (the same bytes as `egdb compress`),
 *      each read back, decoded and compared with the values it was made
 *      from (compress.c, check_written); those a stopped run finished
 *      are kept;
 *   3. compare: every value each kept .cwl (one this run did not write)
 *      keeps against the 2-bit file;
 *   4. mark: "<dir>/units/<KKMM>.done" is written (atomically: temporary
 *      file, fsync, rename) listing the unit's slices and their counts.
 *   A unit is STAGED when its mark is there and every one of its slices
 *   has a compressed file with a valid header.
 * DROPS (egpl_drop)
 *   A staged unit's 2-bit files are unmapped and deleted once every unit
 *   of the build that needs it is staged. Later work reads it from its
 *   compressed files (egdb_open, the block cache).
 *
 * RESUMING
 *   Everything a build writes is written to a temporary name and renamed
 *   when complete, and every stage is a pure function of the 2-bit
 *   files, so a build stopped at any moment (Ctrl-C, kill, power loss, or
 *   the directory copied to another machine) resumes at the slice pair or
 *   the stage where it stopped and writes the same bytes as a build that
 *   never stopped: a unit that is not staged is built (its finished pairs
 *   kept) and staged again; a staged unit whose dependants are all staged
 *   loses any 2-bit files left over; a staged unit still needed has its
 *   2-bit files mapped again (they were not dropped, by the rule above).
 */
#ifndef EGDB_PIPELINE_H
#define EGDB_PIPELINE_H

#include <stddef.h>
#include <stdint.h>

#include "egdb/egdb.h"
#include "egdb/index.h"
#include "egdb/store.h"

/* ---- constants ------------------------------------------------------ */

#define EGPL_NAME_MAX 5 /* "KKMM" and its NUL */

/* ---- types ---------------------------------------------------------- */

/* A material and its twin, and where their slices are in the list of
 * their piece count (egix_slices order). */
typedef struct egpl_unit {
    int nbk, nwk, nbm, nwm; /* the listed member's material       */
    size_t begin, end;      /* its slices: list[begin .. end)      */
    uint64_t positions;     /* of all its slices                   */
    int split;              /* pieces of the larger side (4 in 4v4, 5 in 5v3 and 3v5) */
    /* Used by a build: */
    int selected;       /* in this build's splits                 */
    int staged;         /* built, verified, compressed, compared  */
    int dropped;        /* its 2-bit files are gone               */
    uint64_t est_bytes; /* egdb_estimate: 2-bit bytes this run adds */
} egpl_unit;

/* ---- functions ------------------------------------------------------ */

/*
 * egpl_units - groups the k slices of one piece count, in egix_slices
 * order, into units.
 * RETURN 0 and *out (malloc'ed, caller frees) with *n units in list
 * order; EGDB_ENOMEM; EGDB_EINVAL when a unit's slices are not adjacent
 * (the list order would then be broken; err says where).
 */
int egpl_units(const egix_slice *sl, size_t k, egpl_unit **out, size_t *n, char *err,
               size_t errlen);

/* Whether a promotion of unit a leads into unit b. */
int egpl_needs(const egpl_unit *a, const egpl_unit *b);

/* Whether a build with options o builds unit u: its split is among
 * o->splits (all when 0) and, with o->unit, it is that unit. */
int egpl_selected(const egdb_build_opts *o, const egpl_unit *u);

/* Whether "KKMM" names unit u (either of its two materials). */
int egpl_unit_is(const egpl_unit *u, const char *name);

/* "KKMM" of the unit's listed material (counts as in slice names). */
void egpl_unit_name(const egpl_unit *u, char buf[EGPL_NAME_MAX]);

/*
 * egpl_parse_splits - "4v4,5v3" into a mask of larger-side counts (bit
 * a for "avb" and "bva") for databases of npieces pieces; "all" is every
 * split. RETURN 0, or EGDB_EINVAL with err naming the bad part.
 */
int egpl_parse_splits(const char *s, int npieces, unsigned *mask, char *err, size_t errlen);

/* Whether unit u (slices sl[u->begin .. u->end)) is staged in dir. */
int egpl_staged(const char *dir, const egpl_unit *u, const egix_slice *sl);

/* Where unit u stands in dir (egpl_unit_state), for `egdb units --dir`,
 * in the order a build takes a unit through. */
enum {
    EGPL_NONE,        /* none of its slices built                          */
    EGPL_STARTED,     /* some of its slices built                          */
    EGPL_BUILT,       /* every slice built (2-bit or compressed), no stage  */
    EGPL_CHECKING,    /* its check under way (a record of the check)        */
    EGPL_COMPRESSING, /* checked, some slices compressed (maybe none)       */
    EGPL_COMPRESSED,  /* checked and every slice compressed, not marked     */
    EGPL_DONE         /* staged: checked, compressed, compared and marked   */
};

/*
 * egpl_unit_state - EGPL_DONE when egpl_staged. Otherwise by how many of
 * the unit's slices dir holds, as a 2-bit file with a valid header
 * (egst_file_ok) or a valid compressed one: none, some (*count: how many)
 * or all; when all, by its stage records (units/KKMM.checking,
 * units/KKMM.verified, RESUMING above): checking (*count: the slices the
 * record names as checked), compressing (*count: the slices with a valid
 * compressed file) or compressed. count may be NULL. A look at the files
 * only: nothing is read beyond their headers and the records, so it
 * answers at once beside a running build. The records are not matched
 * against the 2-bit files' digests here (the build does that, reading
 * them all): a stale record shows as its stage until the build replaces
 * it.
 */
int egpl_unit_state(const char *dir, const egpl_unit *u, const egix_slice *sl, size_t *count);

/*
 * egpl_stage - stages 1-4 above for unit u, whose 2-bit files are
 * loaded in reg with every file their successors can lie in.
 * PARAMETERS
 *   threads, threats: as for egdb_compress.
 *   stop:             NULL, or a flag that stops the stage in hand.
 *   progress, arg:    phases "verify" and "compress" (egdb_progress).
 * RETURN 0; EGDB_EINTERRUPT when stopped; or a negative code with err
 * naming the stage, the file and, for a wrong value, the position
 * (nothing is marked then).
 */
int egpl_stage(const char *dir, const egst_registry *reg, const egpl_unit *u, const egix_slice *sl,
               int threads, int threats, volatile int *stop, egdb_progress_fn progress, void *arg,
               char *err, size_t errlen);

/*
 * egpl_drop - unmaps unit u's 2-bit files (if loaded in reg) and deletes
 * them, then fsyncs dir. The caller has checked that u is staged and that
 * no unit still to be built needs it. RETURN 0 or EGDB_EIO.
 */
int egpl_drop(const char *dir, egst_registry *reg, const egpl_unit *u, const egix_slice *sl,
              char *err, size_t errlen);

#endif /* EGDB_PIPELINE_H */
