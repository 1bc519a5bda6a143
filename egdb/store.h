/*
 * store.h - slice files and the registry of loaded slices (egst_).
 *
 * Internal layer of the egdb module, shared by the builder (build.c), the
 * verifier (verify.c) and the prober (probe.c).
 *
 * SLICE FILE FORMAT ("<dir>/<slice name>.wld", e.g. "2110.40.wld")
 *   A 64-byte header, then the payload: one 2-bit value per position in
 *   index order (index.h), four to a byte, position i in bits 2(i%4)..
 *   2(i%4)+1 of byte i/4; values as enum egdb_value (1 win, 2 loss,
 *   3 draw; 0 never appears in a finished file). All integers little
 *   endian:
 *     0  magic "CKWLD\0\0\1" (8 bytes; the last byte is the version)
 *     8  nbk, nwk, nbm, nwm (1 byte each), rb, rw (signed, 1 byte each)
 *    14  two zero bytes
 *    16  positions (u64)
 *    24  wins, 32 losses, 40 draws (u64 each)
 *    48  XXH3-64 of the payload (u64)
 *    56  XXH3-64 of header bytes 0..55 (u64)
 *   Every byte is covered by a checksum (the payload's, which the
 *   header's covers in turn; the zero bytes and the padding bits of the
 *   last payload byte too), so a changed byte is always found when the
 *   file is loaded with its payload checked (egdb_open, egdb_verify,
 *   builds); messages name the part, "header (bytes 0-63)" or "payload
 *   (bytes 64-..)".
 *   Nothing in a file depends on when or how fast it was built, so a
 *   resumed build writes byte-identical files; timings go to the build
 *   log "<dir>/build-log.tsv" instead.
 *
 *   Why 2 bits and no compression here: this is the working form the
 *   builder needs at random access speed (seed 002's 2-bit format);
 *   compressed files are a separate, later form.
 *
 * WRITING
 *   egst_write writes "<name>.wld.tmp", fsyncs it, reads it back and
 *   checks its checksum, then renames it into place and fsyncs the
 *   directory: a file with the final name is always complete.
 *
 * REGISTRY
 *   An egst_registry maps each slice to its loaded data (a read-only
 *   memory map of its file, or a buffer being built) and its index
 *   table, in O(1) by a dense key of the slice. After it is filled it is
 *   read-only and may be used from any number of threads.
 */
#ifndef EGDB_STORE_H
#define EGDB_STORE_H

#include <stddef.h>
#include <stdint.h>

#include "egdb/egdb.h"
#include "egdb/index.h"
#include "engine/engine.h"

/* ---- constants ------------------------------------------------------ */

#define EGST_HEADER_BYTES 64
#define EGST_VERSION 1
/* Dense slice key: counts 0..12 (13 values), ranks -1..6 (8 values). */
#define EGST_NKEYS (13u * 13u * 13u * 13u * 8u * 8u)

/* ---- types ---------------------------------------------------------- */

typedef struct egst_header {
    egix_slice slice;
    uint64_t positions;
    uint64_t wins, losses, draws;
    uint64_t payload_hash;
} egst_header;

/* One slice with its values. */
typedef struct egst_slice {
    egix_slice slice;
    egix_table *table;   /* owned by the registry                   */
    uint64_t size;       /* positions                               */
    const uint8_t *data; /* 2-bit packed values                     */
    void *map;           /* the file mapping (NULL if not mapped)    */
    size_t map_len;
} egst_slice;

typedef struct egst_registry {
    egst_slice **by_key; /* EGST_NKEYS entries, NULL when absent     */
    egst_slice **list;   /* every slice added, for cleanup           */
    size_t n, cap;
} egst_registry;

/* ---- registry ------------------------------------------------------- */

/* Dense key of a well-formed slice. */
static inline size_t
egst_key(const egix_slice *s)
{
    return (
        (((((size_t)s->nbk * 13 + (size_t)s->nwk) * 13 + (size_t)s->nbm) * 13 + (size_t)s->nwm) *
             8 +
         (size_t)(s->rb + 1)) *
            8 +
        (size_t)(s->rw + 1));
}

/* Initialises an empty registry. RETURN 0 or EGDB_ENOMEM. */
int egst_registry_init(egst_registry *r);

/* Unmaps and frees every slice and the registry's arrays. */
void egst_registry_free(egst_registry *r);

/* The loaded slice s, or NULL. */
static inline const egst_slice *
egst_find(const egst_registry *r, const egix_slice *s)
{
    return r->by_key[egst_key(s)];
}

/*
 * egst_add_mapped - maps the file of slice s in dir and adds it.
 * check_payload nonzero also checks the payload checksum (reads it all).
 * RETURN 0, EGDB_EMISSING (no file), EGDB_EIO, EGDB_ECORRUPT (err says
 * what), EGDB_ENOMEM.
 */
int egst_add_mapped(egst_registry *r, const char *dir, const egix_slice *s, int check_payload,
                    char *err, size_t errlen);

/*
 * egst_set_huge_pages - whether egst_add_mapped asks the kernel for 2 MB
 * pages for the files it maps from now on (MADV_HUGEPAGE). Off by
 * default: measured on 7-piece files it gained nothing and made first
 * reads from disk twice as slow (store.c says how it was measured).
 * bench/egdb_pages.c compares both ways in one run.
 */
void egst_set_huge_pages(int on);

/*
 * egst_remove - unmaps slice s and takes it out of the registry (the
 * 8-piece pipeline drops a material's 2-bit files once nothing still to
 * be built reads them, pipeline.h). The order of the other slices in
 * r->list is kept. Not thread-safe: no probe may run meanwhile.
 * RETURN 0, or EGDB_EMISSING when s is not loaded.
 */
int egst_remove(egst_registry *r, const egix_slice *s);

/*
 * egst_release - tells the kernel that the mapped file of e will not be
 * read for a while: its pages leave the process's resident set (they
 * stay in the page cache while memory allows, and a later read maps them
 * back). The 8-piece pipeline keeps the files of units that later units
 * need mapped, but only the current unit's own and those it reads need to
 * be resident (pipeline.h).
 */
void egst_release(const egst_slice *e);

/* The value of index i of a loaded slice. */
static inline int
egst_value(const egst_slice *e, uint64_t i)
{
    return (e->data[i >> 2] >> ((i & 3) * 2)) & 3;
}

/*
 * egst_ref - where the value of a position is: in slice e at index idx,
 * or (e NULL) the answer itself in direct, as egst_probe would give it
 * without a file (EGDB_LOSS for a side with no pieces, EGDB_EINVAL,
 * EGDB_ENOTFOUND). Callers that read many values at random places (the
 * builder's phase 1, the check) locate a block of them first, each
 * locate prefetching its byte, then read them: the loads overlap instead
 * of waiting one after the other.
 */
typedef struct egst_ref {
    const egst_slice *e;
    uint64_t idx;
    int direct;
} egst_ref;

/* The reference of position p (any side to move), its byte prefetched. */
egst_ref egst_locate(const egst_registry *r, const eng_pos *p);

/*
 * egst_locate_men - for canonical position c (Black to move, as
 * eng_canonical gives it): its loaded slice, and in *men the men part of
 * its index (egix_index_men). Both are those of every position that
 * differs from c by its kings only, which is found at
 * *men + egix_index_kings(slice->table, q): a side's king moves, located
 * once for all of them (the check of 2-bit files, verify.c).
 * RETURN the slice, or NULL when c has a side without pieces or its slice
 * is not loaded (egst_locate answers those).
 */
const egst_slice *egst_locate_men(const egst_registry *r, const eng_pos *c, uint64_t *men);

/* The value a reference points at: egst_probe's answer. */
static inline int
egst_ref_value(const egst_ref *r)
{
    return r->e ? egst_value(r->e, r->idx) : r->direct;
}

/*
 * egst_probe - the value of any position from the loaded slices: the
 * position is turned to Black to move, its slice found and its value
 * read. A side with no pieces is answered from the rules.
 * RETURN EGDB_WIN / EGDB_LOSS / EGDB_DRAW, or EGDB_ENOTFOUND when the
 * slice is not loaded. Thread-safe on a filled registry.
 */
int egst_probe(const egst_registry *r, const eng_pos *p);

/* ---- files ---------------------------------------------------------- */

/* "<dir>/<name>.wld" into buf. RETURN 0 or EGDB_EINVAL (too long). */
int egst_path(const char *dir, const egix_slice *s, char *buf, size_t buflen);

/*
 * egst_read_head - reads the first len bytes of a file (a header) without
 * mapping it, for the module's three file formats.
 * RETURN 0 and *file_bytes (the file's size), EGDB_EMISSING (no such file),
 * EGDB_EIO, or EGDB_ECORRUPT (shorter than len); err names the file.
 */
int egst_read_head(const char *path, void *buf, size_t len, uint64_t *file_bytes, char *err,
                   size_t errlen);

/*
 * egst_read_header - reads and checks the header of a slice file (magic,
 * version, header checksum, file size against the position count, slice
 * against egix_size).
 * RETURN 0, EGDB_EMISSING, EGDB_EIO or EGDB_ECORRUPT (err says what).
 */
int egst_read_header(const char *path, egst_header *h, uint64_t *file_bytes, char *err,
                     size_t errlen);

/*
 * egst_write - writes a finished slice (see WRITING).
 * PARAMETERS
 *   packed: the 2-bit payload, (positions + 3) / 4 bytes.
 * RETURN 0, EGDB_EIO or EGDB_ECORRUPT (the read-back did not match).
 */
int egst_write(const char *dir, const egst_header *h, const uint8_t *packed, char *err,
               size_t errlen);

/*
 * egst_write_tmp - creates (or truncates) the file tmp, writes the n
 * buffers parts[i] of lens[i] bytes in order and fsyncs it. Shared by
 * every writer of the module (build, partial and compressed files), which
 * then check the temporary file their own way and call egst_commit.
 * RETURN 0, or EGDB_EIO with err naming the file (tmp is then removed).
 */
int egst_write_tmp(const char *tmp, const void *const *parts, const size_t *lens, int n, char *err,
                   size_t errlen);

/*
 * egst_commit - renames the checked temporary file to its final name and
 * fsyncs the directory, so a file with the final name is complete even
 * after a power loss. RETURN 0 or EGDB_EIO (tmp is then removed).
 */
int egst_commit(const char *tmp, const char *path, const char *dir, char *err, size_t errlen);

/* Whether dir holds the 2-bit file of slice s with a valid header that
 * names s (its payload is not read). */
int egst_file_ok(const char *dir, const egix_slice *s);

/* XXH3-64 of the payload of n positions. */
uint64_t egst_payload_hash(const uint8_t *packed, uint64_t positions);

#endif /* EGDB_STORE_H */
