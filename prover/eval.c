/*
 * eval.c - the static evaluation of the alpha-beta solver (ab_eval).
 *
 * The evaluation only steers the search: a proven score never rests on
 * it (search.h, SCORES), so a weight that is wrong costs nodes, never a
 * wrong proof. What it must be is cheap (it runs at every quiet leaf),
 * bounded (within +-AB_HEUR_MAX, far below the proven range) and exactly
 * colour-symmetric: a position and its colour-flipped twin (eng_flip) are
 * the same game, and the transposition table, the databases and the proof
 * store all treat them as one, so their scores must be equal.
 *
 * HOW SYMMETRY IS MADE EXACT
 *   Every term is computed for one side at a time in that side's own
 *   frame: its men move towards higher bit numbers, its back row is bits
 *   0-3 and its crowning row bits 28-31. Black's pieces are already in
 *   that frame; White's are brought into it by the 180-degree turn
 *   (bits_reverse, square n -> 33 - n). The score is side(Black) -
 *   side(White) plus terms that are odd functions of the material
 *   difference, negated when White is to move. Flipping a position swaps
 *   the two side computations and the side to move, so the result is the
 *   same integer, with no rounding that could differ (all arithmetic is on
 *   integers and each rounded quantity is computed per side, or is an odd
 *   function rounded towards zero).
 *
 * UNITS
 *   Hundredths of a man, for the side to move, as search.h says.
 */
#include "engine/bits.h"
#include "prover/search.h"

/* ---- constants -------------------------------------------------------- */

/* A man is the unit. */
#define EV_MAN 100

/* A king is worth more than a man (it moves both ways, cannot be blocked
 * against the back row and is what endgames are won with); checkers
 * programs put it at 1.3-1.4 men. It grows as the board empties: with few
 * pieces a king's reach decides everything, while in a crowded middle game
 * it has little room. So 130 with 24 pieces, rising linearly to 140 with
 * 2 pieces. */
#define EV_KING_BASE 130
#define EV_KING_ENDGAME_EXTRA 10

/* Trading down when ahead: one man up with 20 pieces is an edge, one man
 * up with 4 pieces is usually a win, because the defender has nothing left
 * to build a blockade or a counter-threat with. The bonus is the material
 * difference times (24 - pieces) / EV_TRADE_DIV: a man up with 4 pieces on
 * the board adds 41, with 20 pieces 8. It makes the side ahead prefer
 * even exchanges and the side behind avoid them. */
#define EV_TRADE_DIV 48

/* Back-rank guard: while the opponent still has men, each of our men on
 * our back row stops crownings on the squares it covers. The two squares
 * of the "bridge" (Black's 1 and 3, White's 32 and 30) together guard the
 * whole row against a single man, which is why players keep them longest;
 * the pair earns a bonus on top of the per-man one. */
#define EV_BACK_MAN 8
#define EV_BRIDGE 12
#define EV_BRIDGE_MASK 0x00000005u /* bits 0 and 2: squares 1 and 3 */

/* Centre control: the four central squares (14, 15, 18, 19) are where a
 * man splits the opponent's position and where a king reaches every part
 * of the board soonest. The set is its own 180-degree turn, so it reads
 * the same in both frames. */
#define EV_CENTRE_MASK 0x00066000u /* bits 13, 14, 17, 18 */
#define EV_CENTRE_MAN 5
#define EV_CENTRE_KING 8

/* Tempo: the sum of the rows our men have advanced. Early on, running
 * ahead leaves holes behind and gives up the back row, and the side with
 * fewer moves in hand usually runs out of safe moves first; late on,
 * advanced men are the ones that crown. So the weight per row is
 * (EV_TEMPO_PIVOT - pieces) / EV_TEMPO_DIV: -2 per row with 24 pieces,
 * 0 at 16, +3 with 4 pieces. */
#define EV_TEMPO_PIVOT 16
#define EV_TEMPO_DIV 4

/* Mobility: each plain move available. Blocked pieces are the usual way
 * positions are lost without material changing hands, and a side with no
 * move loses outright; two hundredths a move keeps the term below a man
 * even in open king endings (16 king moves = 32). */
#define EV_MOBILITY 2

/* Runaway men: a man whose whole forward cone is empty while the opponent
 * has no king is as good as crowned (see runaway() for why nothing can
 * stop it). It is worth the king's extra value, less EV_RUNAWAY_STEP per
 * move it still needs, since those moves are tempo the opponent uses
 * elsewhere. */
#define EV_RUNAWAY_STEP 3

/* Rows as masks in a side's own frame. */
#define EV_ROW0 0x0000000Fu
#define EV_ROW7 0xF0000000u

/* ---- types ------------------------------------------------------------ */

/* One side's pieces in its own frame (see HOW SYMMETRY IS MADE EXACT). */
typedef struct ev_side {
    uint32_t men, kings;         /* ours                           */
    uint32_t opp_men, opp_kings; /* the opponent's, in our frame   */
} ev_side;

/* ---- functions -------------------------------------------------------- */

/* The value of a king when `pieces` are on the board (2..24). */
static int
ev_king_value(int pieces)
{
    return EV_KING_BASE + (24 - pieces) * EV_KING_ENDGAME_EXTRA / 22;
}

/* The rows our men have advanced, summed: row r (bits 4r..4r+3) counts r.
 * Seven popcounts of the men above each row boundary add up to it. */
static int
ev_advancement(uint32_t men)
{
    int n = 0;
    for (int r = 1; r < 8; r++)
        n += bits_popcount(men & (0xFFFFFFFFu << (4 * r)));
    return n;
}

/* Plain moves of a side in its own frame: men step "down", kings both
 * ways. Captures are not counted: at a leaf the side to move has none,
 * and the opponent's are the next ply's business. */
static int
ev_mobility(const ev_side *s)
{
    uint32_t empty = ~(s->men | s->kings | s->opp_men | s->opp_kings);
    uint32_t fwd = s->men | s->kings;
    return bits_popcount(bits_down1(fwd) & empty) + bits_popcount(bits_down2(fwd) & empty) +
           bits_popcount(bits_up1(s->kings) & empty) + bits_popcount(bits_up2(s->kings) & empty);
}

/*
 * ev_runaway - the bonus for our men that nothing can stop from crowning.
 *
 * A man at row r, column c is counted when every square of its forward
 * cone (rows r+1..7, columns within the row distance) is empty and the
 * opponent has no king. Why nothing can stop it then:
 *   - The opponent's men move towards our back row. One outside the cone
 *     at row R has |column distance| > R - r; a step lowers R by one and
 *     changes the column by one, so it stays outside: no opponent man
 *     ever enters the cone.
 *   - A man can only be captured by a piece diagonally ahead of it, and
 *     that square is inside the cone; men capture forward only, so our
 *     man is never forced off its path either.
 *   - With no opponent king, nothing else moves backwards into the cone.
 * Our own pieces may enter the cone later, but only by our choice. The
 * estimate is conservative: men that win the race some other way are not
 * counted. The cone is built by repeated forward steps, at most 7 shifts.
 */
static int
ev_runaway(const ev_side *s, int king_value)
{
    if (s->opp_kings)
        return 0;
    uint32_t occupied = s->men | s->kings | s->opp_men | s->opp_kings;
    int bonus = 0;
    for (uint32_t m = s->men; m; m &= m - 1) {
        uint32_t front = 1u << bits_lsb(m), cone = 0;
        while (front) {
            front = bits_down1(front) | bits_down2(front);
            cone |= front;
        }
        if (cone & occupied)
            continue;
        int moves = 7 - bits_lsb(m) / 4;
        int b = king_value - EV_MAN - EV_RUNAWAY_STEP * moves;
        bonus += b > 0 ? b : 0;
    }
    return bonus;
}

/* Everything that belongs to one side, in its own frame, except material
 * (which the caller needs whole for the trade-down term). */
static int
ev_side_terms(const ev_side *s, int pieces, int king_value)
{
    int v = 0;

    if (s->opp_men) {
        v += EV_BACK_MAN * bits_popcount(s->men & EV_ROW0);
        if ((s->men & EV_BRIDGE_MASK) == EV_BRIDGE_MASK)
            v += EV_BRIDGE;
    }

    v += EV_CENTRE_MAN * bits_popcount(s->men & EV_CENTRE_MASK);
    v += EV_CENTRE_KING * bits_popcount(s->kings & EV_CENTRE_MASK);

    v += ev_advancement(s->men) * (EV_TEMPO_PIVOT - pieces) / EV_TEMPO_DIV;

    v += EV_MOBILITY * ev_mobility(s);

    v += ev_runaway(s, king_value);
    return v;
}

int
ab_eval(const eng_pos *p)
{
    int pieces = bits_popcount(p->bm | p->wm | p->bk | p->wk);
    if (pieces == 0)
        return 0; /* not a position the rules reach; keep the function total */
    int kv = ev_king_value(pieces < 2 ? 2 : pieces);

    ev_side black = {p->bm, p->bk, p->wm, p->wk};
    ev_side white = {bits_reverse(p->wm), bits_reverse(p->wk), bits_reverse(p->bm),
                     bits_reverse(p->bk)};

    int mat_b = EV_MAN * bits_popcount(p->bm) + kv * bits_popcount(p->bk);
    int mat_w = EV_MAN * bits_popcount(p->wm) + kv * bits_popcount(p->wk);
    int diff = mat_b - mat_w;

    /* Odd in diff and rounded towards zero, so exactly antisymmetric. */
    int trade = diff * (24 - pieces) / EV_TRADE_DIV;

    int v = diff + trade + ev_side_terms(&black, pieces, kv) - ev_side_terms(&white, pieces, kv);
    if (p->stm == ENG_WHITE)
        v = -v;
    if (v > AB_HEUR_MAX)
        v = AB_HEUR_MAX;
    if (v < -AB_HEUR_MAX)
        v = -AB_HEUR_MAX;
    return v;
}
