/*
 * engine.h - the rules of English checkers (8x8 "American" checkers).
 *
 * This header is the manual of the engine module: positions, move
 * generation, copy-make, keys, colour flip, perft and PDN notation.
 * Every other module of the project rests on it.
 *
 * BOARD
 *   Squares are numbered 1..32 in the standard way. Inside the engine
 *   square n is bit (n - 1) of a 32-bit mask. Rows of four: squares 1-4
 *   are Black's back row, 29-32 White's. Black starts on 1..12, White
 *   on 21..32, and Black moves first. Black men move towards higher
 *   numbers, White men towards lower numbers.
 *
 *   Geometry (row r = (n-1)/4 from Black's side, p = (n-1)%4):
 *     even rows (r = 0,2,4,6) hold columns 1,3,5,7; odd rows 0,2,4,6.
 *   So square 4 and square 29 are corners, 5 and 28 edge squares.
 *
 * RULES (as the project proves them)
 *   - Men move one square diagonally forward, kings one square in any
 *     diagonal direction (no flying kings).
 *   - Captures are compulsory. A jump sequence must be taken to its end;
 *     the side may choose freely among capture sequences (no majority
 *     rule). A piece may not jump the same piece twice. The jumping
 *     piece's origin square is empty during its own sequence.
 *   - A man that reaches the far row is crowned and its move ends there,
 *     even in the middle of a capture sequence.
 *   - A side with no legal move (including no pieces) loses.
 *
 * DUPLICATE CAPTURES
 *   A king can capture the same set of pieces and end on the same square
 *   by different routes. Published perft figures count each route
 *   (ENG_DUPS_KEEP). Search and databases treat them as one move
 *   (ENG_DUPS_MERGE): the first route found is kept, for its notation.
 *
 * ERRORS
 *   Functions that can fail return int: 0 on success, a negative ENG_E*
 *   code otherwise; eng_strerror() names the code. Parsers also write a
 *   human-readable message that says what and where into a caller buffer.
 *
 * VALUES
 *   The game-value type shared by the databases, solvers and manager
 *   (bounds LL..WW and LW, their negation and max, and the build-time
 *   unknowns of seed 000) has its own header, engine/value.h.
 *
 * THREAD SAFETY
 *   The module has no mutable global state: its only tables are built at
 *   compile time. Every function is safe to call from several threads on
 *   distinct arguments.
 */
#ifndef ENGINE_ENGINE_H
#define ENGINE_ENGINE_H

#include <stddef.h>
#include <stdint.h>

/* ---- constants ------------------------------------------------------ */

enum { ENG_BLACK = 0, ENG_WHITE = 1 };

enum eng_dups {
    ENG_DUPS_MERGE = 0, /* one move per (from, to, captured set)   */
    ENG_DUPS_KEEP = 1   /* one move per route, as published perft  */
};

#define ENG_NSQUARES 32
#define ENG_MAX_JUMPS 12  /* at most 12 pieces can be captured       */
#define ENG_MAX_MOVES 512 /* capacity of eng_movelist                */
#define ENG_MAX_PIECES 12 /* per side                                */

/*
 * ONE ERROR SPACE. Every module's error codes are negative and lie in a
 * range of their own (the engine's: -101..-150), so that a code passed
 * up through another module still says where it came from, and no two
 * mean different things. The table of all the ranges, and ck_strerror,
 * which names a code of any module, are in errors/errors.h (one place
 * since issue 42; this comment used to hold the list). Each module has
 * its own ..._strerror. No decision is taken from an error's text.
 */
/* Error codes (all negative). */
enum eng_err {
    ENG_OK = 0,
    ENG_EFEN = -101,      /* malformed FEN                                 */
    ENG_EMOVE = -102,     /* malformed move text                           */
    ENG_EILLEGAL = -103,  /* well-formed move that is not legal here       */
    ENG_EAMBIG = -104,    /* move text matches several different moves     */
    ENG_EOVERFLOW = -105, /* more moves than ENG_MAX_MOVES                 */
    ENG_ENOSPACE = -106   /* output buffer too small                       */
};

/* Rows as masks. Black crowns on row 7 (29-32), White on row 0 (1-4). */
#define ENG_ROW0 0x0000000Fu
#define ENG_ROW7 0xF0000000u

/* ---- types ---------------------------------------------------------- */

/*
 * A position: four disjoint 32-bit masks and the side to move. Men and
 * kings are kept apart (bm holds Black's men only, bk Black's kings).
 * Positions are plain values: copy them freely.
 */
typedef struct eng_pos {
    uint32_t bm; /* black men  */
    uint32_t wm; /* white men  */
    uint32_t bk; /* black kings */
    uint32_t wk; /* white kings */
    int stm;     /* ENG_BLACK or ENG_WHITE: the side to move */
} eng_pos;

/*
 * A move. Squares are 0-based bit indices (square number - 1).
 * For a capture, path[0..njumps-1] are the landing squares of each jump
 * (path[njumps-1] == to) and captured is the mask of captured pieces.
 * For a plain move njumps == 0 and captured == 0.
 */
typedef struct eng_move {
    uint32_t captured;
    uint8_t from;
    uint8_t to;
    uint8_t njumps;
    uint8_t path[ENG_MAX_JUMPS];
} eng_move;

typedef struct eng_movelist {
    int n;
    eng_move m[ENG_MAX_MOVES];
} eng_movelist;

/* ---- positions ------------------------------------------------------ */

/* Sets *p to the initial position: Black on 1-12, White on 21-32, Black
 * to move. */
void eng_start(eng_pos *p);

/*
 * eng_flip - the colour-flipped twin of a position.
 * Swaps the colours, rotates the board 180 degrees (square n -> 33 - n)
 * and swaps the side to move. The twin has the same game value for its
 * side to move. eng_flip(eng_flip(p)) == p.
 */
eng_pos eng_flip(const eng_pos *p);

/*
 * eng_canonical - the representative with Black to move: p itself when
 * Black moves, its flipped twin otherwise.
 */
eng_pos eng_canonical(const eng_pos *p);

/*
 * eng_key - 64-bit key of a position: XXH3-64 of the canonical position
 * packed as four little-endian 32-bit masks (bm, wm, bk, wk). A
 * position and its colour-flipped twin share a key, which is what a
 * store of values-for-the-side-to-move wants.
 */
uint64_t eng_key(const eng_pos *p);

/* Nonzero when two positions are identical (masks and side to move). */
int eng_equal(const eng_pos *a, const eng_pos *b);

/* The number of pieces (men and kings of both sides) on the board. */
int eng_pieces(const eng_pos *p);

/*
 * eng_validate - checks that a position is one the rules can reach a
 * state of: disjoint masks, no black man on 29-32, no white man on 1-4,
 * at most 12 pieces a side, stm 0 or 1. Returns 0 or ENG_EFEN and then
 * writes the reason to err (if err is not NULL).
 */
int eng_validate(const eng_pos *p, char *err, size_t errlen);

/* ---- move generation ------------------------------------------------ */

/*
 * eng_generate - all legal moves of p into *list.
 * PARAMETERS
 *   dups: ENG_DUPS_MERGE or ENG_DUPS_KEEP (see DUPLICATE CAPTURES).
 * RETURN
 *   the number of moves (also list->n), or ENG_EOVERFLOW when more than
 *   ENG_MAX_MOVES would be produced (list then holds the first ones).
 *   When captures exist, only captures are returned. Order is
 *   deterministic: by origin square, then by direction of first jump.
 */
int eng_generate(const eng_pos *p, eng_movelist *list, int dups);

/*
 * eng_count_moves - the number of legal moves of p, the same number
 * eng_generate would return, but without building a list (the bulk
 * count of perft's last ply). Never overflows.
 */
uint64_t eng_count_moves(const eng_pos *p, int dups);

/* Nonzero when the side to move has a capture (so must capture). */
int eng_has_capture(const eng_pos *p);

/*
 * eng_make - the position after move m (which must come from
 * eng_generate on p). Copy-make: p is not changed; p and out may alias.
 */
void eng_make(const eng_pos *p, const eng_move *m, eng_pos *out);

/* ---- perft ---------------------------------------------------------- */

/*
 * eng_perft - number of leaves of the legal-move tree of depth `depth`
 * below p (depth 0 -> 1). Counts the last ply in bulk.
 */
uint64_t eng_perft(const eng_pos *p, int depth, int dups);

/* ---- notation (PDN 3.0) --------------------------------------------- */

/*
 * eng_errf - the message of an error, printf style, into err (errlen
 * bytes, always terminated; nothing when err is NULL or errlen 0). Every
 * module's err/errlen pair is filled through it.
 */
void eng_errf(char *err, size_t errlen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/*
 * eng_parse_fen - reads a PDN 3.0 FEN such as
 *   B:W18,24,27,28,K10,K15:B12,16,20,K22,K25,K29
 * Ranges ("W21-32", "K1-4") and a trailing dot are accepted, spaces
 * around tokens are ignored, the two colour lists may come in either
 * order, and an empty list ("B:W:B1") is a side with no pieces.
 * RETURN
 *   0, or ENG_EFEN with a message in err that names the problem and the
 *   byte offset: an unknown character, a square out of range, a square
 *   given twice, a man on the row where it would be crowned, more than
 *   12 pieces a side, a missing part.
 */
int eng_parse_fen(const char *s, eng_pos *out, char *err, size_t errlen);

/*
 * eng_format_fen - writes p as FEN: side, the White list then the Black
 * list, men ascending then kings ascending, no ranges. Output parses back
 * to the same position. Returns 0 or ENG_ENOSPACE (buffer of 128 bytes
 * is always enough).
 */
int eng_format_fen(const eng_pos *p, char *buf, size_t buflen);

#define ENG_FEN_MAX 128
#define ENG_MOVE_STR_MAX 64

/*
 * eng_format_move - writes a move in PDN: "11-15" for a plain move, the
 * whole route "15x24x31" for a capture. Returns 0 or ENG_ENOSPACE
 * (ENG_MOVE_STR_MAX bytes always suffice).
 */
int eng_format_move(const eng_move *m, char *buf, size_t buflen);

/*
 * eng_parse_move - finds the legal move of p that the text names.
 * "11-15" names a plain move; "15x24x31" a capture by its route; any
 * shorter list of its squares in order ("15x31", the origin and the
 * destination) names it too when it is unambiguous, i.e. every matching
 * route captures the same pieces. A text that spells out one complete
 * route exactly names that route, even if a longer route passes through
 * the same squares (so eng_format_move's output always parses back).
 * Only lowercase 'x'; whitespace only around the whole text.
 * RETURN
 *   0 and *out, or ENG_EMOVE (malformed text: the message names the
 *   offset), ENG_EILLEGAL (no legal move matches: the message lists the
 *   legal moves), ENG_EAMBIG (several different moves match: the
 *   message lists them) or ENG_EOVERFLOW (more legal routes than
 *   ENG_MAX_MOVES; not seen in any reachable position).
 */
int eng_parse_move(const eng_pos *p, const char *s, eng_move *out, char *err, size_t errlen);

/* The name of an ENG_E* code. */
const char *eng_strerror(int code);

#endif /* ENGINE_ENGINE_H */
