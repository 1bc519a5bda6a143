/*
 * partial_int.h - what the partial databases' reader (partial.c) and
 * builder (partial_build.c) share: the loaded-slice registry, the file
 * header's helpers and the slice-name listing. Not a public header
 * (partial.h is the manual).
 *
 * Why two files: the reader is what egdb_open loads next to the complete
 * databases (probe.c), so it must not call the prober; the builder reads
 * its exits through the prober when the complete set is kept compressed.
 * With the builder apart, probe.c -> partial.c and partial_build.c ->
 * {partial.c, probe.c} have no cycle.
 */
#ifndef EGDB_PARTIAL_INT_H
#define EGDB_PARTIAL_INT_H

#include <stddef.h>
#include <stdint.h>

#include "egdb/index.h"
#include "egdb/partial.h"
#include "egdb/store.h"

/* Materials by dense key: counts 0..12 for each of the four piece kinds. */
#define NMATKEYS (13 * 13 * 13 * 13)
#define PATH_MAX_LEN 4096

/* Complete-file values (enum egdb_value) as bounds; 0 never appears in a
 * finished file and would mean nothing known. */
static const uint8_t bound_of_egdb[4] = {ENG_LW, ENG_WW, ENG_LL, ENG_DD};

/* A loaded partial slice: a read-only map of its file and its index
 * table (the same table the builder used, so index i means the same
 * position in both). */
typedef struct pslice {
    egix_slice slice;
    egix_table *table;
    uint64_t size;
    const uint8_t *data; /* 4-bit codes, see partial.h */
    void *map;
    size_t map_len;
} pslice;

/* Partial and complete slices by dense slice key (store.h egst_key).
 * The same structure serves the builder (successor lookups) and
 * egpt_open (probing): a slice is found in O(1) whichever kind it is. A
 * material is never loaded as both (the builder skips the .wld files of
 * the chosen materials, egpt_open those of materials with .pwl files). */
struct egpt_db {
    egst_registry reg; /* complete .wld slices */
    pslice **by_key;   /* EGST_NKEYS entries   */
    pslice **list;
    size_t n, cap;
    uint64_t positions;
};

/* Dense key of a material (for the chosen-material flags). */
static inline int
pwl_mat_key(int nbk, int nwk, int nbm, int nwm)
{
    return ((nbk * 13 + nwk) * 13 + nbm) * 13 + nwm;
}

static inline int
pwl_slice_mat_key(const egix_slice *s)
{
    return pwl_mat_key(s->nbk, s->nwk, s->nbm, s->nwm);
}

/* The 4-bit code of index i. */
static inline int
pwl_nibble_get(const uint8_t *data, uint64_t i)
{
    return (data[i >> 1] >> ((i & 1) * 4)) & 0x0F;
}

/* Whether a material is acceptable (see egpt_parse_materials): at most
 * 12 pieces a side like the index, at most EGPT_MAX_PIECES in all
 * (bounds at 9 and 10 pieces rest on complete sets of up to 8). */
static inline int
pwl_material_ok(const egpt_material *m)
{
    int b = m->nbk + m->nbm, wp = m->nwk + m->nwm;
    return m->nbk >= 0 && m->nwk >= 0 && m->nbm >= 0 && m->nwm >= 0 && b <= EGIX_MAX_SIDE &&
           wp <= EGIX_MAX_SIDE && b + wp >= 1 && b + wp <= EGPT_MAX_PIECES;
}

/* "<dir>/<slice name>.pwl" into buf; EGDB_EINVAL when it does not fit. */
int pwl_path(const char *dir, const egix_slice *s, char *buf, size_t buflen);

/* The 128-byte header of partial.h's FILE FORMAT into b. */
void pwl_header_encode(const egpt_slice_info *h, unsigned char *b);

/* Reads and checks the header of path (EGDB_ECORRUPT / EGDB_EIO naming it). */
int pwl_read_header(const char *path, egpt_slice_info *h, char *err, size_t errlen);

/* Checks a payload against its header: checksum, codes and counts. */
int pwl_check_payload(const uint8_t *data, const egpt_slice_info *h, const char *path, char *err,
                      size_t errlen);

/* An empty registry / frees every slice of both kinds. */
int pwl_db_init(egpt_db *db);
void pwl_db_free(egpt_db *db);

/* Maps the partial file of s in dir and adds it (check: the payload too). */
int pwl_db_add(egpt_db *db, const char *dir, const egix_slice *s, int check, char *err,
               size_t errlen);

/* The slice names of the files of dir ending in ext, sorted (malloc'ed). */
int pwl_list_names(const char *dir, const char *ext, char ***out, size_t *n, char *err,
                   size_t errlen);
void pwl_free_names(char **v, size_t n);

/*
 * Where the bound of a Black-to-move position lies in the loaded slices
 * (pwl_db_locate), so that a builder can find the places of many
 * successors, prefetch them, and read them afterwards (pwl_ref_bound):
 * reads at random places of large files are the first pass's misses.
 */
enum { PWL_REF_DIRECT, PWL_REF_PARTIAL, PWL_REF_COMPLETE };
typedef struct pwl_ref {
    int kind;            /* PWL_REF_*                                    */
    int direct;          /* DIRECT: the bound (>= 0), or -1: not loaded  */
    const uint8_t *data; /* PARTIAL: the slice's 4-bit codes             */
    const egst_slice *x; /* COMPLETE: the slice                          */
    uint64_t idx;        /* PARTIAL / COMPLETE: the index in the slice    */
} pwl_ref;

/*
 * pwl_db_locate - the place of c's bound (c a valid placement, as the
 * builder's successors always are); *s receives the slice. A side to
 * move without pieces is lost by the rules (no file holds these, as in
 * egst_probe); a slice loaded neither as partial nor as complete gives
 * DIRECT -1.
 */
static inline pwl_ref
pwl_db_locate(const egpt_db *db, const eng_pos *c, egix_slice *s)
{
    if ((c->bm | c->bk) == 0)
        return (pwl_ref){.kind = PWL_REF_DIRECT, .direct = ENG_LL};
    egix_slice_of(c, s);
    size_t k = egst_key(s);
    const pslice *e = db->by_key[k];
    if (e)
        return (pwl_ref){.kind = PWL_REF_PARTIAL, .data = e->data, .idx = egix_index(e->table, c)};
    const egst_slice *x = db->reg.by_key[k];
    if (x)
        return (pwl_ref){.kind = PWL_REF_COMPLETE, .x = x, .idx = egix_index(x->table, c)};
    return (pwl_ref){.kind = PWL_REF_DIRECT, .direct = -1};
}

/* Asks for the byte of r's bound ahead of pwl_ref_bound. */
static inline void
pwl_ref_prefetch(const pwl_ref *r)
{
    if (r->kind == PWL_REF_PARTIAL)
        __builtin_prefetch(&r->data[r->idx >> 1]);
    else if (r->kind == PWL_REF_COMPLETE)
        __builtin_prefetch(&r->x->data[r->idx >> 2]);
}

/* The bound at r: >= 0, or -1 (not loaded). */
static inline int
pwl_ref_bound(const pwl_ref *r)
{
    switch (r->kind) {
    case PWL_REF_PARTIAL:
        return pwl_nibble_get(r->data, r->idx);
    case PWL_REF_COMPLETE:
        return bound_of_egdb[egst_value(r->x, r->idx)];
    default:
        return r->direct;
    }
}

/*
 * The bound of a Black-to-move position c from the loaded slices: >= 0,
 * or -1 when its slice is loaded neither as partial nor as complete.
 * *s receives the slice. c must be a valid placement (the builder's
 * successors always are).
 */
static inline int
pwl_db_lookup(const egpt_db *db, const eng_pos *c, egix_slice *s)
{
    pwl_ref r = pwl_db_locate(db, c, s);
    return pwl_ref_bound(&r);
}

#endif /* EGDB_PARTIAL_INT_H */
