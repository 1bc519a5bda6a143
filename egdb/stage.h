/*
 * stage.h - the stages that follow the build of a unit of slices in a
 * pipelined build (pipeline.h): check the 2-bit files against their
 * successors, compress them, and compare the compressed files with them,
 * so that the 2-bit files can be deleted. Internal to the egdb module;
 * each stage is the same code that `egdb verify` and `egdb compress` run
 * over a whole directory, given a list of slices instead.
 */
/*
 * Each stage takes a stop flag (NULL for none): once it is set, the
 * stage's threads finish the item in hand and the stage returns
 * EGDB_EINTERRUPT with nothing marked, so a unit's stages, which take as
 * long as its build, stop within seconds of a Ctrl-C; the next run does
 * the stage again.
 */
#ifndef EGDB_STAGE_H
#define EGDB_STAGE_H

#include <stddef.h>

#include "egdb/egdb.h"
#include "egdb/store.h"

/*
 * egvf_verify_slices (verify.c) - checks every position of the n loaded
 * 2-bit slices of list against its successors (win iff a move leads to a
 * loss, loss iff every move leads to a win, draw otherwise), looking the
 * successors up in reg, which must hold every slice they can lie in
 * (smaller databases, the unit itself and the slices its promotions and
 * leading-man advances lead to). Progress goes to progress (phase
 * "verify") four times a second when it is not NULL. When done is not
 * NULL, done(i, done_arg) is called once for each slice list[i] every
 * position of which has been checked and found right, as soon as that is
 * so (a stopped check has called it for the slices it finished: the
 * pipeline records them, so that a resumed check skips them). The calls
 * come from the checking threads, one at a time.
 * RETURN 0, EGDB_EVERIFY (err names the first bad slice, index and FEN)
 * or EGDB_EMISSING (a successor's slice is not loaded).
 */
typedef void (*egvf_slice_done_fn)(size_t i, void *done_arg);
int egvf_verify_slices(const egst_registry *reg, const egst_slice *const *list, size_t n,
                       int threads, volatile int *stop, egdb_progress_fn progress, void *arg,
                       egvf_slice_done_fn done, void *done_arg, char *err, size_t errlen);

/*
 * egvf_set_wins_block_min (verify.c) - the slice size (positions) from
 * which the check of 2-bit files reads a won position's successors
 * through its prefetched block rather than one move at a time (default
 * 2^26; see verify_range). For tests, which set 0 to check the block way
 * on small slices; not thread-safe against a running check.
 */
void egvf_set_wins_block_min(uint64_t positions);

/*
 * egcp_compress_slices (compress.c) - writes the compressed file (.cwl,
 * codec.h) of each of the n loaded 2-bit slices of list into dir, as
 * egdb_compress does (same bytes), with o->threads threads, o->threats,
 * o->progress and o->stop; o->npieces is not used. The caller holds the
 * directory's lock.
 * RETURN 0 and the figures in *st, or a negative code with err naming
 * the file.
 */
int egcp_compress_slices(const char *dir, const egst_slice *const *list, size_t n,
                         const egdb_compress_opts *o, egdb_compress_stats *st, char *err,
                         size_t errlen);

/*
 * egcp_set_fault (compress.c) - for tests only: makes every compression
 * that follows go wrong in one way, so that a test sees each of
 * compress_slice's own checks refuse the file (compress.c, check_written,
 * says what those checks prove). Not thread-safe against a running
 * compression.
 *   EGCP_FAULT_NONE      compress as usual (the default);
 *   EGCP_FAULT_CURSOR    the walk's cursor misses one step in the middle of
 *                        each slice of 3 or more positions: refused as "the
 *                        cursor's position ... has another index";
 *   EGCP_FAULT_COLLIDE   the second kept position of a slice with kings
 *                        takes the first one's index in the other king
 *                        orders: refused as "gives index ... to two
 *                        positions";
 *   EGCP_FAULT_READBACK  one kept value of the chosen order is changed
 *                        after the file is written, as if the file held
 *                        another: the read-back refuses it ("the value
 *                        read back differs") and deletes it.
 */
enum { EGCP_FAULT_NONE, EGCP_FAULT_CURSOR, EGCP_FAULT_COLLIDE, EGCP_FAULT_READBACK };
void egcp_set_fault(int fault);

/* egcp_compressed_ok (compress.c) - whether dir holds the compressed
 * file of slice s with a valid header that names s, and as long as that
 * header says (its blocks are not read: a damaged byte inside is found
 * when its block is decoded, or by egdb verify). */
int egcp_compressed_ok(const char *dir, const egix_slice *s);

/*
 * egvf_compare_slices (verify.c) - opens the compressed file of each of
 * the n 2-bit slices of list in dir and checks that it holds exactly
 * their positions, that every block passes its checksum and decodes, and
 * that every position whose value it keeps has the 2-bit file's value.
 * RETURN 0, EGDB_ECORRUPT or EGDB_EMISSING (err names the file and part),
 * or EGDB_EVERIFY (err names the file, index and FEN).
 */
int egvf_compare_slices(const char *dir, const egst_slice *const *list, size_t n, int threads,
                        volatile int *stop, char *err, size_t errlen);

#endif /* EGDB_STAGE_H */
