/*
 * codec.h - the compressed slice format (egcd_): run symbols, the prefix
 * code, bit I/O and the file layout shared by compress.c (writer) and
 * decompress.c (reader).
 *
 * WHAT IS DROPPED (egcd_dropped)
 *   A position whose side to move has a capture keeps no value: the
 *   prober plays its captures and looks the results up (they have fewer
 *   pieces, so this always ends). With EGCD_FLAG_THREATS (the default),
 *   so does a position where the opponent threatens a capture and every
 *   move leads to a capture position or to one threatening nothing, as
 *   seed 002 drops threatened captures; the restriction keeps resolving
 *   it to one ply that never loops. A dropped slot takes whatever value
 *   continues the current run ("don't care"), which is what makes runs
 *   long: about 45% of the 6-piece positions are dropped.
 *
 * POSITION ORDER
 *   The file stores a slice's positions in one of the king orders of
 *   index.h (KING ORDERS), named in the header: the compressor tries
 *   each and keeps the smallest (docs/egdb.md has the figures). Probers
 *   index through a table created with that order.
 *
 * RUNS AND PREDICTION (seed 002, section 3.3)
 *   A block's values are cut into maximal runs (value, length); two
 *   neighbouring runs differ, so the next run's value is one of the two
 *   values other than the current one. It is predicted to be the value of
 *   the run before the current one, which is right most of the time; a
 *   miss means the third value. Each run is then one symbol:
 *     symbol = miss * EGCD_NLEN + bucket(length)
 *   Lengths 1..15 are buckets 0..14 with no extra bits; bucket 15 + k
 *   holds lengths [16 * 2^k, 32 * 2^k) and is followed by 4 + k raw bits.
 *   (The paper codes exact lengths up to 10,000 with one global code; the
 *   buckets keep the alphabet at 64 symbols so each slice carries its own
 *   canonical code in 64 bytes, and decoding tables stay small.)
 *
 * PREFIX CODE
 *   Canonical Huffman per slice, lengths limited to EGCD_MAX_BITS, bits
 *   written most significant first. Decoding uses a 2^EGCD_FAST_BITS
 *   table for short codes and the canonical first-code walk for the rest.
 *
 * PAGES AND BLOCKS
 *   A slice's positions are cut into pages of 2^page_shift positions
 *   (8,192): the unit a probe decodes and the block cache holds (its
 *   "blocks", cache.h). Pages are grouped into the file's blocks: a block
 *   is either one page, or up to 255 consecutive pages whose runs, coded
 *   page by page, would take at most EGCD_BLOCK_BITS bits in all. Without
 *   the grouping 61% of the 2-6 piece pages were a block of at most 4
 *   bytes (one value throughout) carrying 9 bytes of table and header;
 *   grouped, a uniform stretch costs one block and its runs run on across
 *   pages. A miss decodes from its block's start to the page it wants,
 *   which the bound keeps short. A block starts on a byte boundary with
 *   one byte: bits 0-1 the value of its first run, bits 2-3 the
 *   predictor's "run before" (chosen so the second run is predicted
 *   right). Runs never cross a block. Each block has its own checksum, so
 *   damage is found and named per block.
 *
 * MARKS (format 4)
 *   A probe that misses the cache decodes its page's runs from the start
 *   up to its position: half a page on average, hundreds of runs in the
 *   8-piece files (40 positions a byte), and the largest single cost of
 *   a probe there (docs/egdb.md). So a one-page block whose runs take
 *   more than EGCD_MARK_MIN_BITS bits sets bit 4 (EGCD_BLOCK_MARKED) of
 *   its first byte, and EGCD_NMARKS marks follow that byte, before the
 *   runs. Mark k (1..3) is the decoder's state before the run holding
 *   position total * k / 4 of the block, 5 bytes little endian: bits
 *   0-19 the bit offset of that run's code from the start of the runs,
 *   20-32 the run's first position, 33-34 the value of the run before it
 *   ("cur" of the predictor), 35-36 the value before that ("prev"), 37-39
 *   zero (egcd_mark_target gives the positions). A probe starts at the
 *   last mark at or before its position: a quarter of the walk. A whole decode (a page kept by the
 * cache, `egdb verify`) checks every mark against the state it reaches, so a mark that lies is
 * found like other damage. Pages below the bound (most of the 7-piece set's: 162 positions a byte)
 * carry none.
 *
 * FILE "<dir>/<slice name>.cwl" (little endian)
 *     0  magic "CKCWL\0\0" + version byte
 *     8  nbk nwk nbm nwm (u8), rb rw (i8), flags (u8), order (u8)
 *    16  positions (u64)
 *    24  page_shift (u8), three zero bytes, nblocks (u32)
 *    32  data_bytes (u64): size of the data area
 *    40  wins, 48 losses, 56 draws (u64): of all positions, as built
 *    64  XXH3-64 of the code lengths and the block table
 *    72  XXH3-64 of bytes 0..71
 *    80  code lengths: EGCD_NSYM bytes
 *   144  block table: nblocks + 1 u32 offsets into the data area, then
 *        nblocks u32 block checksums (low 32 bits of XXH3-64 of the
 *        block), then nblocks u8 page counts (1..255, summing to the
 *        slice's pages)
 *   then the data area.
 *
 * DAMAGE
 *   Every byte of a file is covered by exactly one checksum: the
 *   header's (bytes 0-71, stored at 72; bytes 72-79 cover themselves),
 *   the one of the code lengths and block table (stored at 64, so the
 *   header's covers it too), or its block's (data bytes; the offsets
 *   leave no byte between blocks). Bytes with no meaning (the three
 *   zero bytes at 25, the padding bits ending a block) are covered like
 *   the rest, so a changed byte is always found: at open for the header,
 *   code lengths and block table, when its block is first decoded for
 *   the data (egdb_verify checks every block first). Messages name the
 *   part: "header (bytes 0-79)", "code lengths (bytes 80-143)", "block
 *   table, offsets / block checksums / page counts (bytes ..)" (which
 *   array of the shared checksum a one-byte change hit is found from what
 *   the writer makes, decompress.c), "data, block b (page ..)". Only a
 *   collision of a block's 32-bit checksum (2^-32 a damaged block) goes
 *   unseen; a block then still has to decode to exactly its positions.
 */
#ifndef EGDB_CODEC_H
#define EGDB_CODEC_H

#include <stddef.h>
#include <stdint.h>

#include "egdb/index.h"
#include "engine/engine.h"

/* ---- constants ------------------------------------------------------ */

/* Format 4 added marks (MARKS, above); files of format 3, which have
 * none, are still read. */
#define EGCD_VERSION 4
#define EGCD_VERSION_OLDEST 3
#define EGCD_VERSION_MARKS 4 /* the first format whose blocks may carry marks */
#define EGCD_NLEN 32
#define EGCD_NSYM (2 * EGCD_NLEN)
#define EGCD_MAX_BITS 15
#define EGCD_FAST_BITS 10
#define EGCD_HEADER_BYTES 80
#define EGCD_CODES_OFFSET 80
#define EGCD_TABLE_OFFSET (EGCD_CODES_OFFSET + EGCD_NSYM)
/* Positions a page, as a power of two: what the compressor writes and
 * the largest a reader accepts (cache entries are sized for it). */
#define EGCD_PAGE_SHIFT 13
/* Pages are grouped into one block while their runs, coded page by
 * page, take at most this many bits (docs/egdb.md: 64 bytes). */
#define EGCD_BLOCK_BITS 512
#define EGCD_BLOCK_PAGES 255 /* at most, so a count fits a byte */
/* Marks (format 4): a one-page block whose runs code to more than
 * EGCD_MARK_MIN_BITS bits carries EGCD_NMARKS marks of EGCD_MARK_BYTES. */
#define EGCD_MARK_MIN_BITS 512
#define EGCD_NMARKS 3
#define EGCD_MARK_BYTES 5
#define EGCD_BLOCK_MARKED 16 /* bit 4 of a block's first byte */
/* A mark's fields: 13 bits for a position of a page, 20 for a bit offset
 * (a page's runs take at most 15 bits a position, codes and extra bits
 * together: 122,880 bits). */
_Static_assert(EGCD_PAGE_SHIFT <= 13, "a mark's position field has 13 bits");
_Static_assert(((uint64_t)EGCD_MAX_BITS << EGCD_PAGE_SHIFT) < (1u << 20),
               "a mark's bit offset field has 20 bits");
/* A run fits the last length bucket (15 + 16: lengths below 2^21). */
_Static_assert(((uint64_t)EGCD_BLOCK_PAGES << EGCD_PAGE_SHIFT) < (1u << 21),
               "a block's positions must fit the run-length buckets");

/* Bytes of the block table of nblocks blocks. */
static inline uint64_t
egcd_table_bytes(uint64_t nblocks)
{
    return (nblocks + 1) * 4 + nblocks * 4 + nblocks;
}

/* Header flags. */
#define EGCD_FLAG_THREATS 1 /* threatened-capture positions dropped too */

/* What egcd_dropped says of a position. */
enum { EGCD_KEPT = 0, EGCD_CAPTURE = 1, EGCD_THREAT = 2 };

/* ---- types ---------------------------------------------------------- */

typedef struct egcd_header {
    uint8_t version; /* EGCD_VERSION_OLDEST..EGCD_VERSION */
    egix_slice slice;
    uint8_t flags;
    uint8_t order; /* king order of the positions (EGIX_ORDER_*) */
    uint64_t positions;
    uint8_t page_shift;
    uint32_t nblocks; /* file blocks, not pages */
    uint64_t data_bytes;
    uint64_t wins, losses, draws;
    uint64_t table_hash;
} egcd_header;

/* Canonical decoding tables of one slice's code. */
typedef struct egcd_decoder {
    /* Short codes decoded in one lookup: bit 31 valid, bits 0-3 code
     * length, bit 4 miss, bits 5-9 extra bits, bits 10-30 the bucket's
     * smallest run length; 0 = a code longer than EGCD_FAST_BITS. */
    uint32_t fast[1 << EGCD_FAST_BITS];
    uint16_t first_code[EGCD_MAX_BITS + 2];
    uint16_t first_index[EGCD_MAX_BITS + 2];
    uint16_t count[EGCD_MAX_BITS + 2];
    uint8_t sorted[EGCD_NSYM]; /* symbols by (length, symbol) */
    uint8_t marks;             /* the file's blocks may carry marks (format >= 4) */
} egcd_decoder;

/* ---- marks ---------------------------------------------------------- */

/* The position mark k (0-based) names in a block of total positions: the
 * writer records the state before the run holding it, the reader picks
 * the last mark at or before its position by it. */
static inline uint32_t
egcd_mark_target(uint32_t total, int k)
{
    return (uint32_t)(((uint64_t)total * (uint64_t)(k + 1)) / (EGCD_NMARKS + 1));
}

/* ---- run lengths ----------------------------------------------------- */

/* Bucket of a run length >= 1, and its extra bits. */
static inline int
egcd_bucket(uint32_t len, int *extra_bits, uint32_t *extra)
{
    if (len < 16) {
        *extra_bits = 0;
        *extra = 0;
        return (int)len - 1;
    }
    int k = 31 - __builtin_clz(len) - 4; /* len in [16 * 2^k, 32 * 2^k) */
    *extra_bits = 4 + k;
    *extra = len - (16u << k);
    return 15 + k;
}

/* Smallest length of a bucket, and its extra bit count. */
static inline uint32_t
egcd_bucket_base(int bucket, int *extra_bits)
{
    if (bucket < 15) {
        *extra_bits = 0;
        return (uint32_t)bucket + 1;
    }
    *extra_bits = 4 + (bucket - 15);
    return 16u << (bucket - 15);
}

/* ---- functions (codec.c) -------------------------------------------- */

/*
 * egcd_dropped - whether the value of p (Black to move) is dropped from a
 * file with the given flags, and why. A capture position (the side to
 * move must capture) is always dropped. With EGCD_FLAG_THREATS, so is a
 * position where the opponent threatens a capture and every move leads
 * to a position that is either a capture position or threatens nothing:
 * its value then comes from one ply of search whose children are capture
 * positions (fewer pieces after the capture) or kept values, so resolving
 * it never loops.
 */
int egcd_dropped(const eng_pos *p, int flags);

/*
 * egcd_code_lengths - length-limited Huffman code lengths (1..max_bits,
 * 0 for unused symbols) for the given symbol frequencies. A single used
 * symbol gets length 1.
 */
void egcd_code_lengths(const uint64_t freq[EGCD_NSYM], uint8_t len[EGCD_NSYM], int max_bits);

/* Canonical codes from lengths: code[s] (right-aligned, len[s] bits). */
void egcd_codes(const uint8_t len[EGCD_NSYM], uint16_t code[EGCD_NSYM]);

/*
 * egcd_decoder_init - decoding tables from code lengths.
 * RETURN 0, or -1 when the lengths are not a valid prefix code (a
 * damaged file).
 */
int egcd_decoder_init(egcd_decoder *d, const uint8_t len[EGCD_NSYM]);

/* Encodes / decodes the fixed header (bytes 0..79). encode writes
 * EGCD_VERSION; decode accepts EGCD_VERSION_OLDEST..EGCD_VERSION and
 * returns 0 or -1 (bad magic), -2 (version), -3 (header checksum). */
void egcd_header_encode(const egcd_header *h, unsigned char b[EGCD_HEADER_BYTES]);
int egcd_header_decode(const unsigned char b[EGCD_HEADER_BYTES], egcd_header *h);

/*
 * egcd_decode_page - decodes positions [skip, skip + n) of one block into
 * 2-bit values.
 * PARAMETERS
 *   src, len: the block's bytes; total: positions in the block;
 *   skip, n:  the window (a page), skip + n <= total;
 *   out: 8-byte aligned, room for (n + 31) / 32 64-bit words; the first
 *        (n + 3) / 4 bytes receive the values.
 * RETURN 0, or -1 when the data does not decode to the window (or, for a
 * window that ends the block, to exactly total positions).
 */
int egcd_decode_page(const egcd_decoder *d, const uint8_t *src, size_t len, uint32_t total,
                     uint32_t skip, uint32_t n, uint8_t *out);

/*
 * egcd_decode_value - the value of position pos (< total) of a block,
 * decoding only the runs up to it and writing nothing: for a probe that
 * will not keep the page (cache.h).
 * RETURN 1..3, or -1 when the data do not decode that far. Damage past
 * pos is not seen: callers check the block's checksum first.
 */
int egcd_decode_value(const egcd_decoder *d, const uint8_t *src, size_t len, uint32_t total,
                      uint32_t pos);

#endif /* EGDB_CODEC_H */
