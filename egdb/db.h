/*
 * db.h - the open database handle (struct egdb), shared by probe.c,
 * which opens and probes it, and verify.c, which walks its compressed
 * slices. Internal to the egdb module.
 */
#ifndef EGDB_DB_H
#define EGDB_DB_H

#include <stddef.h>
#include <stdint.h>

#include "egdb/cache.h"
#include "egdb/decompress.h"
#include "egdb/partial.h"
#include "egdb/store.h"

/*
 * An open database: for each slice either its compressed file (preferred)
 * or its 2-bit build file. Compressed slices drop the values of capture
 * positions (and, by their flags, some threatened ones); egdb_probe
 * resolves those by one ply of search.
 */
struct egdb {
    egst_registry reg; /* 2-bit slices without a compressed file */
    /* Compressed slice of egst_key k: cmp_rows[cmp_mat[k >> 6] * 64 +
     * (k & 63)] (k >> 6 is the material, k & 63 the leading ranks). Row 0
     * is all NULL, so absent materials need no branch; the two tables
     * are small enough to stay in the CPU caches, unlike one pointer for
     * each of the EGST_NKEYS keys (14.6 MB). */
    uint16_t *cmp_mat;     /* EGST_NKEYS / 64 row numbers, 0 = none   */
    egdc_slice **cmp_rows; /* (ncmp_rows + 1) * 64                     */
    size_t ncmp_rows;
    egdc_slice **cmp_list; /* in dependency order                    */
    size_t ncmp, cmp_cap;
    uint32_t nblocks; /* pages of all compressed slices (the cache's blocks) */
    egca_cache *cache;
    int max_pieces;   /* every slice of 1..max_pieces is loaded */
    unsigned splits;  /* and of max_pieces + 1 pieces these whole splits
                         (bit a: a against max_pieces + 1 - a), egdb_scope */
    egpt_db *partial; /* the directory's partial bounds (EGDB_SCOPE_PARTIAL), or NULL */
};

#endif /* EGDB_DB_H */
