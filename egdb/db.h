/*
 * db.h - the open database handle (struct egdb), shared by probe.c,
 * which opens and probes it, and verify.c, which walks its compressed
 * slices. Internal to the egdb module.
 */
#ifndef EGDB_DB_H
#define EGDB_DB_H

#include <stddef.h>

#include "egdb/cache.h"
#include "egdb/decompress.h"
#include "egdb/store.h"

/*
 * An open database: for each slice either its compressed file (preferred)
 * or its 2-bit build file. Compressed slices drop the values of capture
 * positions (and, by their flags, some threatened ones); egdb_probe
 * resolves those by one ply of search.
 */
struct egdb {
    egst_registry reg;       /* 2-bit slices without a compressed file */
    egdc_slice **cmp_by_key; /* EGST_NKEYS entries                     */
    egdc_slice **cmp_list;   /* in dependency order                    */
    size_t ncmp, cmp_cap;
    egca_cache *cache;
    int max_pieces; /* every slice of 1..max_pieces is loaded */
};

#endif /* EGDB_DB_H */
