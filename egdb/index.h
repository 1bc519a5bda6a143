/*
 * index.h - the indexing layer of the endgame databases (egix_).
 *
 * This header is the manual of the index: how the positions of the
 * databases are cut into slices, how each slice numbers its positions
 * 0..size-1 without gaps, in which order slices must be built, and how
 * many positions there are. The builders, compressors and probers of
 * egdb/ all rest on it; nothing here reads or writes files.
 *
 * WHAT IS STORED
 *   A database stores positions with BLACK to move only. A position
 *   with White to move is looked up as its colour-flipped twin
 *   (eng_flip / eng_canonical), which has the same value for its side to
 *   move. So a "position" below is a placement of pieces: black men on
 *   squares 1-28, white men on 5-32, kings anywhere, squares distinct;
 *   the side to move is always Black and the functions ignore p->stm.
 *
 * SLICES (after Lake et al. 1994 and seed 002, section 2)
 *   A slice is a material (nbk, nwk, nbm, nwm: black kings, white kings,
 *   black men, white men) together with the leading rank of each side:
 *     rb = row of Black's most advanced man, counted from Black's back
 *          row: row(sq) = (sq - 1) / 4, so rb = max row of the black men,
 *          0..6; -1 when Black has no men.
 *     rw = the same for White from White's back row: 7 - min row of the
 *          white men, 0..6; -1 when White has no men.
 *   A non-capture move never lowers the mover's leading rank, and a
 *   promotion removes a man, so slices can be built one after the other
 *   (see egix_slices). A slice with men can be empty when the two
 *   sides' men crowd each other out (eight black men filling rows 0-1
 *   leave no room for White's leading man on row 1); egix_size is then 0.
 *
 * SLICE NAMES
 *   egix_slice_name writes "KKMM.RR" in the notation of seed 002
 *   ("bk wk bc wc . br wr"): the four counts nbk, nwk, nbm, nwm, a dot,
 *   then the leading ranks as the paper numbers them, rank = row + 1
 *   (1..7), and 0 for a side without men. Counts 10, 11, 12 are written
 *   'a', 'b', 'c' so every name is exactly 7 characters. Examples:
 *   "3223.77" (3 black kings, 2 white kings, 2 black men and 3 white
 *   men, both leading men one step from crowning), "5500.00", "0041.20".
 *   Names only use [0-9a-c.], so they are safe in file names, and they
 *   sort materials and ranks together.
 *
 * INDEX LAYOUT (why this one)
 *   Within a slice the index is a bijection between its positions and
 *   0..size-1 where size is exactly the number of positions (gap-free:
 *   no "broken" entries for the compressor to guess, every stored value
 *   is a real position, and a slice's size is its position count). It
 *   is built from colex ranks: a k-subset {s1 < ... < sk} of 0..n-1 has
 *   rank C(s1,1) + C(s2,2) + ... + C(sk,k), and colex order is plain
 *   numeric order of the bitmask.
 *     1. Black men live on squares 0..4rb+3 (0-based) with at least one
 *        on row rb. Subsets of those squares that miss row rb are
 *        exactly the colex ranks below C(4rb, nbm), so
 *          br = colex(bm) - C(4rb, nbm),  0 <= br < C(4rb+4,nbm) - C(4rb,nbm).
 *     2. White men are ranked the same way in White's own frame (the
 *        board turned 180 degrees, bit i -> bit 31 - i, so White's
 *        leading row is its highest row), over the squares of rows
 *        0..rw of that frame NOT taken by black men. Those F free
 *        squares are compressed to bits 0..F-1 (pext); the f0 of them on
 *        the leading row are the highest, so
 *          wr = colex(compressed wm) - C(F - f0, nwm).
 *        The number of white sets, C(F,nwm) - C(F-f0,nwm), depends on
 *        where the black men are; a per-slice table off[br] (the number
 *        of men placements of all black sets ranked before br) makes
 *        the men part gap-free:  men = off[br] + wr.
 *     3. Kings go on the 32 - m squares free of men (m = nbm + nwm):
 *        black kings colex-ranked among them (bkr), white kings among
 *        the 32 - m - nbk squares left (wkr). Finally
 *          index = (men * C(32-m, nbk) + bkr) * C(32-m-nbk, nwk) + wkr.
 *   The kings vary fastest, so positions that differ only by king moves
 *   (most of a retrograde pass) stay close in the file; the men, whose
 *   moves change the slice, vary slowest. Indexing costs a few popcounts,
 *   pext and one table addition per piece; unindexing a two-level search
 *   of off[] (when both sides have men; the black set itself is then
 *   read from the table), up to two divisions, and greedy colex
 *   unranking with one branch-free vector count per piece. No
 *   allocation on either path. Measured on the 10-piece slices (AMD
 *   EPYC, BMI2 + AVX2): about 8 ns per egix_index, 30-55 ns per
 *   egix_unindex.
 *
 * KING ORDERS (egix_table_create_order)
 *   The layout above is the build order (EGIX_ORDER_COLEX). A table can
 *   instead number the king placements of each men placement in one of
 *   four Gray orders, used by compressed files (codec.h) because values
 *   change less often when consecutive positions differ by one king
 *   moving to a nearby square. The men part is unchanged:
 *     index = men * C(32-m, nbk) * C(32-m-nbk, nwk) + a * B + b,
 *   a the rank of the outer king set among the squares free of men, b
 *   that of the inner set among the squares left (A and B their counts),
 *   both in revolving-door order (consecutive subsets differ by one
 *   square; rank of {c1 < ... < ck} = sum over i of (-1)^(k-i) *
 *   (C(ci + 1, i) - 1)) over the free squares in a snake order: row by
 *   row with odd rows reversed (ORDER_GRAY_B / _W), or that order
 *   reversed (ORDER_GRAY_RB / _RW). _B: black kings outer, _W: white.
 *   Nesting is reflected: a runs backwards when men is odd, b when
 *   men * A + a is, so the last position of one run of inner sets and
 *   the first of the next are neighbours too. Measured on the 2-6 piece
 *   set (docs/egdb.md): the best of the five orders per slice makes the
 *   compressed files 12% smaller; indexing costs a few ns more.
 *
 * TABLES, MEMORY AND THREADS
 *   egix_index / egix_unindex need an egix_table, built once per slice
 *   by egix_table_create and owned by the caller. When both sides have
 *   men it holds, per black-man set of the slice, its offset (8 bytes)
 *   and its mask (4 bytes), plus a sampled copy of the offsets (1/32):
 *   55,776 sets, 0.7 MB, for 5 black men on rows 0..6; 5.6 million sets,
 *   69 MB, for 9 black men (the 9-vs-1 slices, the largest of 10
 *   pieces); a few bytes when one side has no men. A table is read-only
 *   once created, so any number of threads may index through the same
 *   table concurrently. The module has no mutable global state (its
 *   binomial table is a compile-time constant); all functions are
 *   thread-safe on distinct arguments.
 *
 * COUNTS
 *   egix_size, egix_material_size and egix_count never build tables:
 *   they count the men placements of a slice with a dynamic program over
 *   the eight rows (how many men of each colour sit on each row; the
 *   squares of a row are interchangeable for counting), which is
 *   immediate even for the 10-piece databases. The test suite checks it
 *   against the offset tables, a brute-force enumeration, and the
 *   published figures (seed 002, Tables 1, 2 and 4).
 *
 * ERRORS
 *   Functions that can fail return 0 or a negative EGIX_E* code;
 *   egix_strerror names it. The hot-path functions egix_index and
 *   egix_unindex do not check their arguments (see their PRECONDITION).
 */
#ifndef EGDB_INDEX_H
#define EGDB_INDEX_H

#include <stddef.h>
#include <stdint.h>

#include "engine/engine.h"

/* ---- constants ------------------------------------------------------ */

enum egix_err {
    EGIX_OK = 0,
    EGIX_EINVAL = -151,   /* slice or position outside the rules/limits   */
    EGIX_ENOMEM = -152,   /* allocation failed                            */
    EGIX_ERANGE = -153,   /* a count does not fit in 64 bits              */
    EGIX_ENOSPACE = -154, /* output buffer or array too small             */
    EGIX_ENAME = -155     /* malformed slice name                         */
};

#define EGIX_MAX_SIDE 12 /* pieces per side, as ENG_MAX_PIECES   */
#define EGIX_NAME_MAX 8  /* bytes of a slice name with its NUL   */

/* ---- types ---------------------------------------------------------- */

/*
 * A slice: material and leading ranks (see SLICES). Plain value; two
 * slices are the same slice when all six fields are equal.
 */
typedef struct egix_slice {
    int8_t nbk; /* black kings                                  */
    int8_t nwk; /* white kings                                  */
    int8_t nbm; /* black men                                    */
    int8_t nwm; /* white men                                    */
    int8_t rb;  /* Black's leading row 0..6, -1 iff nbm == 0     */
    int8_t rw;  /* White's leading row 0..6, -1 iff nwm == 0     */
} egix_slice;

/* King orders of a table (see KING ORDERS). */
enum egix_order {
    EGIX_ORDER_COLEX = 0,   /* the build order: colex, black kings outer   */
    EGIX_ORDER_GRAY_B = 1,  /* Gray, row snake, black kings outer          */
    EGIX_ORDER_GRAY_W = 2,  /* Gray, row snake, white kings outer          */
    EGIX_ORDER_GRAY_RB = 3, /* Gray, reversed row snake, black kings outer */
    EGIX_ORDER_GRAY_RW = 4  /* Gray, reversed row snake, white kings outer */
};
#define EGIX_NORDERS 5

/* The index of one slice (opaque): see TABLES, MEMORY AND THREADS. */
typedef struct egix_table egix_table;

/* ---- slices --------------------------------------------------------- */

/*
 * egix_slice_of - the slice a placement belongs to.
 * PARAMETERS
 *   p:   the position; p->stm is ignored (the slice of a White-to-move
 *        position's stored twin is egix_twin of this one).
 *   out: receives the slice.
 * RETURN
 *   0, or EGIX_EINVAL when the masks overlap, a black man stands on
 *   29-32 or a white man on 1-4, or a side has more than 12 pieces.
 * NOTES
 *   A handful of popcounts; cheap enough for every probe.
 */
int egix_slice_of(const eng_pos *p, egix_slice *out);

/*
 * egix_slice_check - whether s is a well-formed slice: counts 0..12 per
 * side, rb == -1 exactly when nbm == 0, otherwise 0 <= rb <= 6 and the
 * nbm men fit on rows 0..rb (nbm <= 4 rb + 4), the same for White.
 * RETURN 0 or EGIX_EINVAL. A well-formed slice may still be empty.
 */
int egix_slice_check(const egix_slice *s);

/* Nonzero when two slices are the same slice. */
int egix_slice_equal(const egix_slice *a, const egix_slice *b);

/*
 * egix_twin - the slice of the colour-flipped positions: nbk<->nwk,
 * nbm<->nwm, rb<->rw. For every p in slice s, eng_flip(p) lies in
 * egix_twin(s); the twin of the twin is s.
 */
egix_slice egix_twin(const egix_slice *s);

/*
 * egix_slice_name - writes the name of s (see SLICE NAMES), always 7
 * characters plus NUL.
 * RETURN 0, EGIX_EINVAL (s malformed) or EGIX_ENOSPACE (buflen <
 * EGIX_NAME_MAX; buf then untouched).
 */
int egix_slice_name(const egix_slice *s, char *buf, size_t buflen);

/*
 * egix_slice_parse - reads a name written by egix_slice_name (exactly
 * seven characters; upper-case 'A'-'C' accepted too).
 * RETURN 0, or EGIX_ENAME when the text is not a name or names a
 * malformed slice (*out is then untouched).
 */
int egix_slice_parse(const char *name, egix_slice *out);

/*
 * egix_name_digit - the count a character of a slice name stands for:
 * '0'-'9' -> 0-9, 'a'-'c' or 'A'-'C' -> 10-12; -1 for any other character.
 * (Materials written "KKMM" use the same digits.)
 */
int egix_name_digit(char c);

/* ---- counting -------------------------------------------------------- */

/*
 * egix_size - the number of positions of a slice, which is also the
 * number of indices of its table. No table is built (row dynamic
 * program, see COUNTS).
 * RETURN 0, EGIX_EINVAL (s malformed) or EGIX_ERANGE (more than
 * 2^64 - 1, possible only far beyond the 10-piece databases).
 */
int egix_size(const egix_slice *s, uint64_t *out);

/*
 * egix_material_size - the number of positions of one material summed
 * over all its leading ranks (Black to move, i.e. placements with these
 * black and white pieces). The 5-vs-5 rows of seed 002's Table 1 add a
 * material and its colour-swapped twin when they differ.
 * RETURN 0, EGIX_EINVAL (a count outside 0..12 or more than 32
 * pieces) or EGIX_ERANGE.
 */
int egix_material_size(int nbk, int nwk, int nbm, int nwm, uint64_t *out);

/*
 * egix_count - the number of placements with a pieces on one side and b
 * on the other, both colourings counted when a != b (the "a-b" rows of
 * seed 002's Table 4). a + b must equal npieces (a redundant check of
 * the caller's intent); pass a = b = -1 for all splits of npieces
 * together (the "pieces" totals).
 * RETURN 0, EGIX_EINVAL or EGIX_ERANGE.
 */
int egix_count(int npieces, int a, int b, uint64_t *out);

/*
 * egix_slices - every non-empty slice of every material with exactly
 * npieces pieces (all splits, both colourings), in an order in which
 * they can be built.
 * PARAMETERS
 *   npieces: 1..24.
 *   out:     receives the slices, or NULL to learn only the count.
 *   pair:    NULL, or receives for each slice its pair number. A slice
 *            and its twin form one pair (they hold the two sides to
 *            move of the same placements, and each side's moves lead
 *            into the other, so they are solved together); pairs are
 *            numbered 0, 1, 2, ... in list order, a pair's members are
 *            adjacent, and a self-twin slice (symmetric material with
 *            rb == rw) is a pair of one.
 *   cap:     room in out and pair (ignored when out is NULL).
 *   n:       receives the number of slices (also when EGIX_ENOSPACE).
 * ORDER (why it is safe)
 *   Let pair P hold placements of material M with leading ranks
 *   (rb, rw) for both sides to move. From P, without a capture:
 *     - a king move or a man move that keeps its side's leading row
 *       stays in P;
 *     - a man move that sets a new leading row raises rb (Black) or rw
 *       (White) and leaves the other rank alone;
 *     - a promotion turns a man into a king: same pieces, one man
 *       fewer (any leading ranks).
 *   Captures lead to fewer pieces, i.e. to earlier databases. So the
 *   list puts materials with fewer men first (m = nbm + nwm ascending),
 *   and within a material pair the leading-rank pairs by rb + rw
 *   descending (then rb descending): every move out of a pair lands in
 *   a pair with fewer men or with a strictly larger rb + rw, both listed
 *   earlier. Pairs with equal m but different materials never depend on
 *   each other. Within a material pair the listed member is the one
 *   whose Black has more pieces, then more kings (seed 002's
 *   "3223/2332"), followed by its twin.
 * RETURN
 *   0, EGIX_EINVAL (npieces out of range) or EGIX_ENOSPACE (cap too
 *   small: nothing is written beyond cap, *n says how many are needed).
 */
int egix_slices(int npieces, egix_slice *out, int *pair, size_t cap, size_t *n);

/*
 * egix_slices_alloc - egix_slices into freshly allocated arrays.
 * PARAMETERS
 *   out:  receives a malloc'ed array of the slices (caller frees).
 *   pair: NULL, or receives a malloc'ed array of pair numbers (caller
 *         frees).
 *   n:    receives the number of slices.
 * RETURN 0, EGIX_EINVAL (npieces out of range) or EGIX_ENOMEM (nothing
 *   is then allocated).
 */
int egix_slices_alloc(int npieces, egix_slice **out, int **pair, size_t *n);

/* ---- index tables ----------------------------------------------------- */

/*
 * egix_table_create - builds the index of one slice.
 * PARAMETERS
 *   s:   a well-formed slice (may be empty: size 0).
 *   out: receives the table, owned by the caller (egix_table_destroy).
 * RETURN
 *   0, EGIX_EINVAL, EGIX_ENOMEM or EGIX_ERANGE.
 * NOTES
 *   Walks every black-man set of the slice once (when both sides have
 *   men) to build the offset table: under a millisecond for the 5-vs-5
 *   slices, about 0.15 s for nine black men.
 */
int egix_table_create(const egix_slice *s, egix_table **out);

/*
 * egix_table_create_order - the same, with the king placements numbered
 * in another order (EGIX_ORDER_*; see KING ORDERS). egix_table_create is
 * this with EGIX_ORDER_COLEX. RETURN as egix_table_create (EGIX_EINVAL
 * also for an unknown order).
 */
int egix_table_create_order(const egix_slice *s, int order, egix_table **out);

/* The king order of a table (EGIX_ORDER_*). */
int egix_table_order(const egix_table *t);

/* Frees a table (NULL is accepted). */
void egix_table_destroy(egix_table *t);

/* The slice of a table. */
egix_slice egix_table_slice(const egix_table *t);

/* The number of indices, equal to egix_size of the slice. */
uint64_t egix_table_size(const egix_table *t);

/* Bytes of memory held by the table (the offset table dominates). */
size_t egix_table_bytes(const egix_table *t);

/*
 * egix_index - the index of a position in its slice's table.
 * PRECONDITION
 *   egix_slice_of(p) is the table's slice (p->stm is ignored). This is
 *   not checked: the hot path of a retrograde build runs it billions of
 *   times. A position outside the slice yields a meaningless number.
 * RETURN
 *   an index in 0..egix_table_size(t) - 1.
 */
uint64_t egix_index(const egix_table *t, const eng_pos *p);

/*
 * egix_prefetch - starts loading the memory egix_index(t, p) will read
 * (the offset-table entry of p's black men), without waiting for it: a
 * caller with several positions to index prefetches them all first, so
 * their cache misses overlap. Same precondition as egix_index.
 */
void egix_prefetch(const egix_table *t, const eng_pos *p);

/*
 * egix_unindex - the position of an index: the inverse of egix_index.
 * PRECONDITION
 *   i < egix_table_size(t) (not checked).
 * PARAMETERS
 *   out: receives the position, with out->stm = ENG_BLACK.
 */
void egix_unindex(const egix_table *t, uint64_t i, eng_pos *out);

/* ---- incremental indexing (the builder's passes) ------------------------- */

/*
 * The builder visits positions whose indices are close together: a pass
 * walks a range of indices in order, and the predecessors of a position
 * differ from it by one piece. In the build order (EGIX_ORDER_COLEX) the
 * index is men * K + kings, K = C(32-m, nbk) * C(32-m-nbk, nwk), with the
 * kings varying fastest, so most steps change only the king part, and
 * the men part (an offset-table search and a white-men unranking) can be
 * kept. The functions below do that. Each agrees exactly with
 * egix_index / egix_unindex (tests/test_egdb_index.c checks the round
 * trips); tables in a Gray order are accepted too: a seek there keeps
 * the men, and the outer kings while they stay, and unranks the rest.
 */

/*
 * A position held together with its index. Fields other than pos and
 * index are the cursor's own; a cursor is a plain value, one per thread.
 */
typedef struct egix_cursor {
    eng_pos pos;    /* the position of index (pos.stm = ENG_BLACK)        */
    uint64_t index; /* its index                                          */
    uint64_t men;   /* men part of index; UINT64_MAX: nothing held yet     */
    uint64_t bkr;   /* rank of the black kings among kfree's squares      */
                    /* (Gray order: the outer kings' rank before reflection) */
    uint64_t wkr;   /* rank of the white kings among the squares left     */
    uint32_t kfree; /* squares free of men                                */
    uint32_t cb;    /* black kings compressed to the squares of kfree     */
                    /* (Gray order: the outer kings on the snake squares)  */
    uint32_t cw;    /* white kings compressed to kfree minus black kings  */
    /* When both sides have men: the black-man set last unranked, so that
     * a seek to another men placement of the same black set unranks the
     * white men only (blo, bspan: its range of men ranks; bspan 0: none). */
    uint64_t blo, bspan, wbase;
    uint32_t bset, wfree;
} egix_cursor;

/*
 * egix_seek - moves cursor c to index i: afterwards c->pos is
 * egix_unindex(t, i) and c->index is i.
 * PARAMETERS
 *   t: the table; c: a cursor used with this table only, or one never
 *   used (see egix_cursor_init); i < egix_table_size(t) (not checked).
 * NOTES
 *   When i has the men part of the index c held (the same men
 *   placement), only the kings are unranked: no offset-table search,
 *   no division beyond one, no white-men unranking. When i is another
 *   men placement of the black men the cursor holds (with men on both
 *   sides), only the white men and the kings are unranked: no search
 *   in the offsets (the builders' later passes seek so). Thread-safe on
 *   distinct cursors.
 */
void egix_seek(const egix_table *t, egix_cursor *c, uint64_t i);

/* egix_cursor_init - empties c, so that the next egix_seek unindexes in
 * full (a cursor must be emptied before its first use or after its table
 * changes). */
void egix_cursor_init(egix_cursor *c);

/*
 * egix_next - moves c to index c->index + 1, which must be below
 * egix_table_size(t) (not checked); c must hold a position (a seek came
 * first).
 * NOTES
 *   In the build order the white kings step to the next set in colex
 *   order (Gosper's successor of their compressed mask and one pdep);
 *   after the last white set the black kings step; after the last
 *   black set the men part changes and the cursor unindexes in full.
 *   A walk over a range therefore costs a few instructions a position.
 */
void egix_next(const egix_table *t, egix_cursor *c);

/*
 * egix_index_men - the index of p with its king part zeroed, i.e. the
 * first index of p's men placement: egix_index(t, p) =
 * egix_index_men(t, p) + egix_index_kings(t, p) in the build order.
 * Same precondition as egix_index; t must be in EGIX_ORDER_COLEX (not
 * checked). A caller that moves kings and keeps the men computes this
 * once and only egix_index_kings per king move.
 */
uint64_t egix_index_men(const egix_table *t, const eng_pos *p);

/*
 * egix_men_rank - the rank of p's men placement (black and white men)
 * among the slice's: the same in every king order of the slice, so a
 * caller that needs p's index in several orders ranks the men once.
 * egix_index_at_men - egix_index(t, p) in t's order, given
 * men = egix_men_rank(u, p) for any table u of the same slice:
 * men * C(kings) + the rank of p's kings in t's order (which in a Gray
 * order depends on men). Same precondition as egix_index.
 */
uint64_t egix_men_rank(const egix_table *t, const eng_pos *p);
uint64_t egix_index_at_men(const egix_table *t, uint64_t men, const eng_pos *p);

/*
 * egix_index_kings - the king part of egix_index(t, p): the ranks of the
 * black kings among the squares free of men and of the white kings
 * among those left, C(32-m-nbk, nwk) * bkr + wkr. Reads only the table's
 * header (no offset table). Same precondition as egix_index_men.
 */
uint64_t egix_index_kings(const egix_table *t, const eng_pos *p);

/* ---- errors ------------------------------------------------------------ */

/* The name of an EGIX_E* code ("unknown error" otherwise). */
const char *egix_strerror(int code);

#endif /* EGDB_INDEX_H */
