/*
 * openings.h - the three-move openings: the 174 ACF ballots and the 19
 * openings of the published 2007 proof, read from the data files of this
 * folder, with the position each reaches and the transpositions between
 * them (several move orders reach one position, and the published table
 * lists positions some ballots reach by another order).
 *
 * DATA FILES (tab-separated, '#' lines are comments, the first other line
 * a header)
 *   three-move-ballots.tsv     acf, moves, status, name
 *   published-19-openings.tsv  no, opening, proof, searches, max_ply
 * Both say where they come from in their comments. The directory is
 * $CHECKERS_OPENINGS when set, else "openings" (the source tree).
 *
 * THREAD SAFETY
 *   An ops_book is read-only after ops_load.
 */
#ifndef OPENINGS_OPENINGS_H
#define OPENINGS_OPENINGS_H

#include <stddef.h>
#include <stdint.h>

#include "engine/engine.h"
#include "engine/value.h"

#define OPS_BALLOTS 174
#define OPS_PUBLISHED 19

typedef struct ops_ballot {
    int acf;         /* ACF number, 1..174 */
    char moves[64];  /* as in the file, e.g. "9-13 21-17 5-9" */
    char status[16]; /* crossboard, mailplay, barred */
    char name[64];   /* may be empty */
    eng_pos pos;     /* after the three moves (White to move) */
    int published;   /* index into ops_book.pub of the same position, -1 */
} ops_ballot;

typedef struct ops_published {
    int no; /* 1..19 */
    char moves[64];
    char proof[16]; /* "Draw", "<=Draw", "Loss": for Black, who moved first */
    uint64_t searches;
    int max_ply;
    eng_pos pos;
    int ballot; /* index into ops_book.ballot of the same position, -1 */
} ops_published;

typedef struct ops_book {
    ops_ballot ballot[OPS_BALLOTS];
    int nballot;
    ops_published pub[OPS_PUBLISHED];
    int npub;
    char dir[512];
} ops_book;

/* ops_load - reads both files from dir (NULL: the default above) and
 * plays every line from the start. RETURN 0, or -1 with err naming the
 * file, the line and the problem (a move that is not legal, a count that
 * is not 174 or 19). */
int ops_load(const char *dir, ops_book *b, char *err, size_t errlen);

/* ops_play - the position after a line of moves from the start ("12-16
 * 24-19 10-15", separators: spaces, commas). RETURN 0, or -1 with err
 * naming the move. */
int ops_play(const char *moves, eng_pos *out, int *nmoves, char *err, size_t errlen);

/* ops_play_from - the same from position start (any length of line). */
int ops_play_from(const eng_pos *start, const char *moves, eng_pos *out, int *nmoves, char *err,
                  size_t errlen);

/* ops_find - the ballot whose position is p (-1 when none). */
int ops_find(const ops_book *b, const eng_pos *p);

/*
 * SEED LINES (seeds.tsv in the same directory, written by `checkers
 * openings seed`): no, opening, seed line (from the position after the
 * opening), depth, seconds, score (for White, to move), engine. The
 * manager expands a seed line first, so that its first jobs go deep.
 * ops_seed_find - the seed line stored for position p, written to out;
 * RETURN 1 when found, 0 when not (or no file).
 */
int ops_seed_find(const char *dir, const eng_pos *p, char *out, size_t cap);

/* ops_transpositions - indices of the other ballots reaching the same
 * position as ballot i; returns how many were written (at most max). */
int ops_transpositions(const ops_book *b, int i, int *out, int max);

/*
 * THE PUBLISHED VALUE AGAINST OURS
 * The table's values are for Black, who moved first; after three moves
 * White is to move, and the proofs here are for the side to move.
 * ops_published_bound - the published word ("Draw", "<=Draw", "Loss",
 * "Win", ">=Draw") as a bound for the side to move after the opening
 * (Black's "<=Draw" is White's >=draw, DW). RETURN 0, -1 for another word.
 * ops_verdict - ours (a bound for the side to move) against published
 * (the same side): OPS_CONTRADICTS when no value satisfies both (a proof
 * here says the published value is wrong, or ours is), OPS_AGREES when
 * ours settles at least what the table claims (ours within published),
 * OPS_OPEN otherwise (nothing proven yet, or a bound that fits both).
 */
enum ops_verdict_code { OPS_OPEN = 0, OPS_AGREES = 1, OPS_CONTRADICTS = 2 };
int ops_published_bound(const char *proof, eng_bound *out);
int ops_verdict(eng_bound published, eng_bound ours);

/*
 * THE LADDERS (written by `checkers frontier ladder`): for each published
 * opening, positions on the engine's line from the opening's position,
 * one per rung (a nominal piece count). Columns: no, opening, rung,
 * pieces (on the board, at most rung: a capture can skip a count), ply
 * (from the opening's position), fen, line (the moves from the opening's
 * position). Two kinds:
 *   OPS_LADDER_FRONTIER  ladder.tsv: the line of fixed-depth self-play;
 *                        each rung the line's first position with at
 *                        most 18, 16, 14, 12, 10 and 8 pieces.
 *   OPS_LADDER_LEVEL     level.tsv: the line of a deeper search; each rung
 *                        the line's first LEVEL position (ops_level) with
 *                        at most 16, 14, 12 and 10 pieces. A line that
 *                        never reaches one has no row for that rung (the
 *                        file says so in a comment).
 */
enum ops_ladder_kind { OPS_LADDER_FRONTIER = 0, OPS_LADDER_LEVEL = 1 };

#define OPS_RUNGS 6
extern const int ops_rung_pieces[OPS_RUNGS]; /* 8, 10, ..., 18 */
#define OPS_LEVEL_RUNGS 4
extern const int ops_level_pieces[OPS_LEVEL_RUNGS]; /* 10, 12, 14, 16 */
#define OPS_MAX_RUNGS 6                             /* the larger of the two */

typedef struct ops_rung {
    int no;     /* published opening, 1..19 */
    int rung;   /* nominal piece count */
    int pieces; /* on the board */
    int ply;    /* plies from the opening's position */
    char opening[64];
    eng_pos start; /* the opening's position */
    eng_pos pos;
    char fen[ENG_FEN_MAX];
} ops_rung;

/* ops_ladder_rungs - the rungs of a kind, fewest pieces first: *pieces
 * points to a static array. RETURN how many (0 for an unknown kind). */
int ops_ladder_rungs(int kind, const int **pieces);

/* ops_ladder_name - "frontier" or "level" (NULL for an unknown kind);
 * ops_ladder_file - the data file's name, "ladder.tsv" or "level.tsv". */
const char *ops_ladder_name(int kind);
const char *ops_ladder_file(int kind);

/*
 * ops_equal_material - nonzero when both sides have as many men as each
 * other and as many kings as each other.
 * ops_quiet - nonzero when the side to move has no capture (the rules
 * force captures, so such a position is one a static look can value:
 * the same sense the databases and the searches give "quiet").
 * ops_level - both: a level position. Pure; p must be valid.
 */
int ops_equal_material(const eng_pos *p);
int ops_quiet(const eng_pos *p);
int ops_level(const eng_pos *p);

/*
 * ops_ladder_load_kind - reads the ladder of the given kind from dir
 * (NULL: $CHECKERS_OPENINGS, else "openings"), replaying every line and
 * checking that it reaches its FEN and piece count, and that no
 * (opening, rung) comes twice. For the level kind it also checks that
 * the position is level and that no earlier position of the line with at
 * most rung pieces is. RETURN 0 with *out (free() it) and *n; -1 with err
 * naming the file, line and problem.
 * ops_ladder_load - the same for OPS_LADDER_FRONTIER.
 */
int ops_ladder_load_kind(const char *dir, int kind, ops_rung **out, int *n, char *err,
                         size_t errlen);
int ops_ladder_load(const char *dir, ops_rung **out, int *n, char *err, size_t errlen);

#endif /* OPENINGS_OPENINGS_H */
