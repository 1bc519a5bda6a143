/*
 * notation.c - PDN 3.0 text for positions (FEN) and moves.
 *
 * The parsers are the engine's door for typed and file input, so they
 * reject rather than guess: each error class has its own message, which
 * names the byte offset (0-based) where it was found, and no input of any
 * length or content can make them read out of bounds or overflow an
 * integer. Move text is resolved against eng_generate's own list, so this
 * file knows no rule of movement and cannot disagree with movegen.c.
 *
 * FEN grammar accepted (whitespace allowed between any two tokens):
 *
 *   fen   := side ':' list ':' list [ '.' ]
 *   side  := 'B' | 'W'
 *   list  := colour [ item { ',' item } ]     each colour exactly once
 *   item  := [ 'K' ] square [ '-' square ]    a range applies 'K' to all
 *   square:= digits with value 1..32
 *
 * Errors are reported at the first byte that cannot continue this
 * grammar, or, for a semantic error (a square given twice, a man on its
 * crowning row, too many pieces), at the start of the item that made it.
 */
#include "engine/bits.h"
#include "engine/engine.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* ---- constants ------------------------------------------------------ */

/* Digits are accumulated only while the value is below this bound and
 * then merely consumed: any square past 32 is out of range anyway, and a
 * digit run of any length cannot overflow an int. */
#define NUM_CLAMP 1000
/* At most this many digits of an out-of-range number are echoed back. */
#define NUM_ECHO 10
/* The longest move text: the origin and ENG_MAX_JUMPS landing squares. */
#define MOVE_MAX_SQUARES (ENG_MAX_JUMPS + 1)

/* Characters that may appear somewhere in valid text. Anything else is an
 * "unknown character"; a known one in the wrong place is "unexpected".
 * Lowercase letters are deliberately absent: PDN writes B, W, K. */
#define FEN_ALPHABET "BWK0123456789,-:. \t\r\n"
#define MOVE_ALPHABET "0123456789-x \t\r\n"

/* -Wformat=2 checks our printf-like helpers only when told they are. */
#if defined(__GNUC__)
#define PRINTF_LIKE(f, a) __attribute__((format(printf, f, a)))
#else
#define PRINTF_LIKE(f, a)
#endif

/* ---- types ---------------------------------------------------------- */

/*
 * Append-only text that truncates safely. len counts every character
 * asked for, even past cap, so len >= cap afterwards means "cut short".
 * buf may be NULL (cap 0): messages are then counted, never written.
 */
typedef struct text_buf {
    char *buf;
    size_t cap;
    size_t len;
} text_buf;

/* A FEN being read: the input, the cursor and the caller's message. */
typedef struct fen_parser {
    const char *s;
    size_t i; /* byte offset of the cursor */
    char *err;
    size_t errlen;
} fen_parser;

/* Move text after lexing: 0-based squares and which separator joined them. */
typedef struct move_text {
    int sq[MOVE_MAX_SQUARES];
    int n;
    int capture; /* 1 for 'x', 0 for '-' */
} move_text;

/* ---- static data ---------------------------------------------------- */

/* Indexed by ENG_BLACK / ENG_WHITE. */
static const char *const colour_name[2] = {"black", "white"};
static const char colour_letter[2] = {'B', 'W'};
/* The row on which a man of each colour is crowned, so cannot stand. */
static const uint32_t crown_row[2] = {ENG_ROW7, ENG_ROW0};

/* ---- prototypes ----------------------------------------------------- */

static void tb_init(text_buf *tb, char *buf, size_t cap);
static void tb_printf(text_buf *tb, const char *fmt, ...) PRINTF_LIKE(2, 3);
static int is_space(int c);
static int is_digit(int c);
static int read_number(const char *s, size_t *i);
static int report_unexpected(const char *s, size_t i, const char *alphabet, const char *expected,
                             int code, char *err, size_t errlen);
static int bad_square(const char *s, size_t start, size_t end, int code, char *err, size_t errlen);
static void fen_skip_ws(fen_parser *ps);
static int fen_square(fen_parser *ps, int *sq);
static int fen_item(fen_parser *ps, int colour, eng_pos *pos, uint32_t *occupied);
static int fen_list(fen_parser *ps, int seen[2], eng_pos *pos, uint32_t *occupied);
static void fen_put_squares(text_buf *tb, uint32_t mask, const char *prefix, int *first);
static int move_lex(const char *s, move_text *mt, char *err, size_t errlen);
static int route_matches(const eng_move *m, const move_text *mt);
static int text_names(const eng_move *m, const move_text *mt);
static int same_move(const eng_move *a, const eng_move *b);
static void put_text(text_buf *tb, const move_text *mt);
static void put_moves(text_buf *tb, const eng_movelist *list, const move_text *filter);

/* ---- functions ------------------------------------------------------ */

/* A NULL buffer is given capacity 0 whatever cap says, so the writers
 * below never need to test for it again. */
static void
tb_init(text_buf *tb, char *buf, size_t cap)
{
    tb->buf = buf;
    tb->cap = buf != NULL ? cap : 0;
    tb->len = 0;
    if (tb->cap > 0)
        buf[0] = '\0';
}

static void
tb_printf(text_buf *tb, const char *fmt, ...)
{
    va_list ap;
    char *dst = NULL;
    size_t room = 0;
    int n;

    /* Once full, vsnprintf(NULL, 0) still measures, keeping len exact. */
    if (tb->len < tb->cap) {
        dst = tb->buf + tb->len;
        room = tb->cap - tb->len;
    }
    va_start(ap, fmt);
    n = vsnprintf(dst, room, fmt, ap);
    va_end(ap);
    if (n > 0)
        tb->len += (size_t)n;
}

/* Every message goes through here: the contract lets err be NULL and
 * errlen be 0, and vsnprintf always terminates what it truncates. */
void
eng_errf(char *err, size_t errlen, const char *fmt, ...)
{
    va_list ap;

    if (err == NULL || errlen == 0)
        return;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
}

/* Own versions of isspace/isdigit: <ctype.h> is locale-dependent and
 * undefined for negative char values, and input here is arbitrary bytes. */
static int
is_space(int c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

static int
is_digit(int c)
{
    return c >= '0' && c <= '9';
}

/* Consumes the digit run at s[*i] and returns its value, clamped (see
 * NUM_CLAMP): the caller only needs to know whether it lies in 1..32. */
static int
read_number(const char *s, size_t *i)
{
    int v = 0;

    while (is_digit((unsigned char)s[*i])) {
        if (v < NUM_CLAMP)
            v = v * 10 + (s[*i] - '0');
        (*i)++;
    }
    return v;
}

/*
 * The message for a character the grammar did not want at s[i]: end of
 * input, a byte outside the alphabet, or a known one in the wrong place.
 * Unprintable bytes are shown in hex so the message stays one clean line.
 */
static int
report_unexpected(const char *s, size_t i, const char *alphabet, const char *expected, int code,
                  char *err, size_t errlen)
{
    unsigned char c = (unsigned char)s[i];
    char shown[16];

    if (c == '\0') {
        eng_errf(err, errlen, "expected %s at offset %zu, found end of input", expected, i);
        return code;
    }
    if (c >= 0x20 && c < 0x7f)
        snprintf(shown, sizeof shown, "'%c'", c);
    else
        snprintf(shown, sizeof shown, "byte 0x%02X", (unsigned)c);
    if (strchr(alphabet, c) == NULL)
        eng_errf(err, errlen, "unknown character %s at offset %zu", shown, i);
    else
        eng_errf(err, errlen, "unexpected character %s at offset %zu; expected %s", shown, i,
                 expected);
    return code;
}

/* Digits s[start..end) do not name a square: echo (a bounded prefix of)
 * the text itself, since the clamped value would misquote it. */
static int
bad_square(const char *s, size_t start, size_t end, int code, char *err, size_t errlen)
{
    size_t len = end - start;
    int shown = (int)(len > NUM_ECHO ? NUM_ECHO : len);

    eng_errf(err, errlen, "square %.*s%s out of range 1..32 at offset %zu", shown, s + start,
             len > NUM_ECHO ? "..." : "", start);
    return code;
}

/* The input ends at its NUL, which is not a space, so this never runs
 * past the end. */
static void
fen_skip_ws(fen_parser *ps)
{
    while (is_space((unsigned char)ps->s[ps->i]))
        ps->i++;
}

/* Reads one square number (1..32) at the cursor; *sq is 1-based. */
static int
fen_square(fen_parser *ps, int *sq)
{
    size_t start = ps->i;

    if (!is_digit((unsigned char)ps->s[ps->i]))
        return report_unexpected(ps->s, ps->i, FEN_ALPHABET, "a square number", ENG_EFEN, ps->err,
                                 ps->errlen);
    *sq = read_number(ps->s, &ps->i);
    if (*sq < 1 || *sq > ENG_NSQUARES)
        return bad_square(ps->s, start, ps->i, ENG_EFEN, ps->err, ps->errlen);
    return 0;
}

/*
 * One list item: [K] square or [K] a-b. Every square of a range gets the
 * same checks as a single one, in the order a reader would fix them:
 * already taken, then a man on its crowning row; the piece count is
 * checked once the whole item is placed, and the message says how many.
 */
static int
fen_item(fen_parser *ps, int colour, eng_pos *pos, uint32_t *occupied)
{
    uint32_t *men = colour == ENG_WHITE ? &pos->wm : &pos->bm;
    uint32_t *kings = colour == ENG_WHITE ? &pos->wk : &pos->bk;
    size_t at, num_at;
    int king = 0, lo, hi, sq, n, rc;

    fen_skip_ws(ps);
    at = ps->i;
    if (ps->s[ps->i] == 'K') {
        king = 1;
        ps->i++;
        fen_skip_ws(ps);
    }
    num_at = ps->i;
    if ((rc = fen_square(ps, &lo)) != 0)
        return rc;
    hi = lo;
    fen_skip_ws(ps);
    if (ps->s[ps->i] == '-') {
        ps->i++;
        fen_skip_ws(ps);
        if ((rc = fen_square(ps, &hi)) != 0)
            return rc;
        if (hi < lo) {
            eng_errf(ps->err, ps->errlen, "range %d-%d is reversed at offset %zu", lo, hi, num_at);
            return ENG_EFEN;
        }
    }
    for (sq = lo; sq <= hi; sq++) {
        uint32_t bit = 1u << (sq - 1);

        if (*occupied & bit) {
            eng_errf(ps->err, ps->errlen, "square %d given twice at offset %zu", sq, at);
            return ENG_EFEN;
        }
        if (!king && (bit & crown_row[colour])) {
            eng_errf(ps->err, ps->errlen,
                     "%s man on square %d is on its crowning row at offset %zu",
                     colour_name[colour], sq, at);
            return ENG_EFEN;
        }
        *occupied |= bit;
        *(king ? kings : men) |= bit;
    }
    n = bits_popcount(*men | *kings);
    if (n > ENG_MAX_PIECES) {
        eng_errf(ps->err, ps->errlen,
                 "too many %s pieces: %d after the item at offset %zu; at most %d",
                 colour_name[colour], n, at, ENG_MAX_PIECES);
        return ENG_EFEN;
    }
    return 0;
}

/* A colour letter and its comma-separated items, possibly none. The list
 * ends at the first character after an item that is not ','; the caller
 * decides whether that character may follow. */
static int
fen_list(fen_parser *ps, int seen[2], eng_pos *pos, uint32_t *occupied)
{
    int colour, rc;
    char c;

    fen_skip_ws(ps);
    c = ps->s[ps->i];
    if (c == '\0' || c == '.') {
        eng_errf(ps->err, ps->errlen, "missing colour list at offset %zu", ps->i);
        return ENG_EFEN;
    }
    if (c != 'W' && c != 'B')
        return report_unexpected(ps->s, ps->i, FEN_ALPHABET, "colour 'W' or 'B'", ENG_EFEN, ps->err,
                                 ps->errlen);
    colour = c == 'W' ? ENG_WHITE : ENG_BLACK;
    if (seen[colour]) {
        eng_errf(ps->err, ps->errlen, "colour %c given twice at offset %zu", c, ps->i);
        return ENG_EFEN;
    }
    seen[colour] = 1;
    ps->i++;
    fen_skip_ws(ps);
    c = ps->s[ps->i];
    if (c == ':' || c == '.' || c == '\0')
        return 0; /* an empty list: this side has no pieces */
    for (;;) {
        if ((rc = fen_item(ps, colour, pos, occupied)) != 0)
            return rc;
        fen_skip_ws(ps);
        if (ps->s[ps->i] != ',')
            return 0;
        ps->i++;
    }
}

/*
 * The parse builds a private position and copies it to *out only on
 * success, so a caller's position is never left half-written by bad
 * input. The side to move and its colon are checked by hand here rather
 * than in a helper because their errors ("empty input", "missing ':'")
 * are classes of their own.
 */
int
eng_parse_fen(const char *s, eng_pos *out, char *err, size_t errlen)
{
    fen_parser ps = {s, 0, err, errlen};
    eng_pos pos = {0, 0, 0, 0, ENG_BLACK};
    uint32_t occupied = 0;
    int seen[2] = {0, 0};
    int k, rc;

    eng_errf(err, errlen, "%s", "");
    if (s == NULL) {
        eng_errf(err, errlen, "empty input (NULL string)");
        return ENG_EFEN;
    }
    fen_skip_ws(&ps);
    if (s[ps.i] == '\0') {
        eng_errf(err, errlen, "empty input");
        return ENG_EFEN;
    }
    if (s[ps.i] != 'B' && s[ps.i] != 'W')
        return report_unexpected(s, ps.i, FEN_ALPHABET, "side to move 'B' or 'W'", ENG_EFEN, err,
                                 errlen);
    pos.stm = s[ps.i] == 'W' ? ENG_WHITE : ENG_BLACK;
    ps.i++;
    fen_skip_ws(&ps);
    if (s[ps.i] != ':') {
        /* "Bx" is a stray byte, "BW" or "B" a forgotten colon. */
        if (s[ps.i] != '\0' && strchr(FEN_ALPHABET, s[ps.i]) == NULL)
            return report_unexpected(s, ps.i, FEN_ALPHABET, "':'", ENG_EFEN, err, errlen);
        eng_errf(err, errlen, "missing ':' after side to move at offset %zu", ps.i);
        return ENG_EFEN;
    }
    ps.i++;
    for (k = 0; k < 2; k++) {
        if ((rc = fen_list(&ps, seen, &pos, &occupied)) != 0)
            return rc;
        if (k == 1)
            break;
        fen_skip_ws(&ps);
        if (s[ps.i] == '\0' || s[ps.i] == '.') {
            eng_errf(err, errlen, "missing colour list for %s at offset %zu",
                     colour_name[seen[ENG_WHITE] ? ENG_BLACK : ENG_WHITE], ps.i);
            return ENG_EFEN;
        }
        if (s[ps.i] != ':')
            return report_unexpected(s, ps.i, FEN_ALPHABET, "',' or ':'", ENG_EFEN, err, errlen);
        ps.i++;
    }
    fen_skip_ws(&ps);
    if (s[ps.i] == '.')
        ps.i++;
    fen_skip_ws(&ps);
    if (s[ps.i] != '\0') {
        if (strchr(FEN_ALPHABET, s[ps.i]) == NULL)
            return report_unexpected(s, ps.i, FEN_ALPHABET, "end of input", ENG_EFEN, err, errlen);
        eng_errf(err, errlen, "trailing characters at offset %zu", ps.i);
        return ENG_EFEN;
    }
    /* The checks above cover all of eng_validate's; asking it anyway keeps
     * the parser from ever handing out a position the engine would refuse. */
    if (eng_validate(&pos, err, errlen) != 0)
        return ENG_EFEN;
    if (out != NULL)
        *out = pos;
    return 0;
}

/* Appends the squares of mask in ascending order, 1-based, each after a
 * comma unless it is the first of its list. */
static void
fen_put_squares(text_buf *tb, uint32_t mask, const char *prefix, int *first)
{
    int sq;

    for (sq = 0; sq < ENG_NSQUARES; sq++) {
        if (!(mask & (1u << sq)))
            continue;
        tb_printf(tb, "%s%s%d", *first ? "" : ",", prefix, sq + 1);
        *first = 0;
    }
}

/*
 * The output is the canonical text of the position: no ranges and a
 * fixed order, so two equal positions always print alike and the text
 * can be compared as a string (tests and logs rely on this). The longest
 * output, 24 kings with two-digit squares, is about 100 bytes, hence
 * ENG_FEN_MAX = 128 in the header.
 */
int
eng_format_fen(const eng_pos *p, char *buf, size_t buflen)
{
    /* PDN habit: White's list comes first whatever the side to move. */
    static const int order[2] = {ENG_WHITE, ENG_BLACK};
    text_buf tb;
    int k, first;

    tb_init(&tb, buf, buflen);
    tb_printf(&tb, "%c", colour_letter[p->stm == ENG_WHITE]);
    for (k = 0; k < 2; k++) {
        int c = order[k];

        first = 1;
        tb_printf(&tb, ":%c", colour_letter[c]);
        fen_put_squares(&tb, c == ENG_WHITE ? p->wm : p->bm, "", &first);
        fen_put_squares(&tb, c == ENG_WHITE ? p->wk : p->bk, "K", &first);
    }
    return tb.len < tb.cap ? 0 : ENG_ENOSPACE;
}

/* The full route is written even where "fromxto" would be unambiguous:
 * it is the only form that always parses back to the same move, and
 * what PDN game files record. At most 13 squares of 2 digits plus
 * separators: 39 bytes, well inside ENG_MOVE_STR_MAX. */
int
eng_format_move(const eng_move *m, char *buf, size_t buflen)
{
    text_buf tb;
    int j, n;

    tb_init(&tb, buf, buflen);
    if (m->njumps == 0) {
        tb_printf(&tb, "%d-%d", m->from + 1, m->to + 1);
    } else {
        /* Clamped so a corrupt move cannot make us read past path[]. */
        n = m->njumps > ENG_MAX_JUMPS ? ENG_MAX_JUMPS : m->njumps;
        tb_printf(&tb, "%d", m->from + 1);
        for (j = 0; j < n; j++)
            tb_printf(&tb, "x%d", m->path[j] + 1);
    }
    return tb.len < tb.cap ? 0 : ENG_ENOSPACE;
}

/*
 * Splits move text into squares. Whitespace is allowed only around the
 * whole text. One separator kind per move: "11-15x19" is malformed rather
 * than guessed at, and a plain move names exactly two squares.
 */
static int
move_lex(const char *s, move_text *mt, char *err, size_t errlen)
{
    size_t i = 0, start;
    int sep = 0, v;

    mt->n = 0;
    while (is_space((unsigned char)s[i]))
        i++;
    if (s[i] == '\0') {
        eng_errf(err, errlen, "empty move text");
        return ENG_EMOVE;
    }
    for (;;) {
        start = i;
        if (!is_digit((unsigned char)s[i]))
            return report_unexpected(s, i, MOVE_ALPHABET, "a square number", ENG_EMOVE, err,
                                     errlen);
        v = read_number(s, &i);
        if (v < 1 || v > ENG_NSQUARES)
            return bad_square(s, start, i, ENG_EMOVE, err, errlen);
        if (mt->n == MOVE_MAX_SQUARES) {
            eng_errf(err, errlen, "more than %d squares at offset %zu", MOVE_MAX_SQUARES, start);
            return ENG_EMOVE;
        }
        if (sep == '-' && mt->n == 2) {
            eng_errf(err, errlen, "a plain move names two squares; third square at offset %zu",
                     start);
            return ENG_EMOVE;
        }
        mt->sq[mt->n++] = v - 1;
        if (s[i] != '-' && s[i] != 'x')
            break;
        if (sep != 0 && s[i] != sep) {
            eng_errf(err, errlen, "'-' and 'x' mixed in one move at offset %zu", i);
            return ENG_EMOVE;
        }
        sep = s[i++];
    }
    while (is_space((unsigned char)s[i]))
        i++;
    if (s[i] != '\0')
        return report_unexpected(s, i, MOVE_ALPHABET, "end of move text", ENG_EMOVE, err, errlen);
    if (mt->n < 2) {
        eng_errf(err, errlen, "only one square at offset %zu; a move needs two or more", start);
        return ENG_EMOVE;
    }
    mt->capture = sep == 'x';
    return 0;
}

/*
 * Nonzero when the text's squares are a subsequence of the route (origin,
 * then every landing) that starts at the origin and ends at the last
 * landing. Greedy leftmost matching of the inner squares is exact for
 * subsequences, even on king routes that revisit a square.
 */
static int
route_matches(const eng_move *m, const move_text *mt)
{
    int route[MOVE_MAX_SQUARES];
    int n = 0, j, k = 1, nj = m->njumps > ENG_MAX_JUMPS ? ENG_MAX_JUMPS : m->njumps;

    route[n++] = m->from;
    for (j = 0; j < nj; j++)
        route[n++] = m->path[j];
    if (mt->sq[0] != route[0] || mt->sq[mt->n - 1] != route[n - 1])
        return 0;
    for (j = 1; j < n - 1 && k < mt->n - 1; j++)
        if (route[j] == mt->sq[k])
            k++;
    return k == mt->n - 1;
}

/* '-' names only plain moves and 'x' only captures: text never crosses
 * over, so a plain move typed in a capture position is illegal. */
static int
text_names(const eng_move *m, const move_text *mt)
{
    if (!mt->capture)
        return m->njumps == 0 && m->from == mt->sq[0] && m->to == mt->sq[1];
    return m->njumps > 0 && route_matches(m, mt);
}

/* Routes are the same move when they agree on what the board becomes. */
static int
same_move(const eng_move *a, const eng_move *b)
{
    return a->from == b->from && a->to == b->to && a->captured == b->captured;
}

/* The text as parsed, normalised (no whitespace), for messages. */
static void
put_text(text_buf *tb, const move_text *mt)
{
    int k;

    for (k = 0; k < mt->n; k++)
        tb_printf(tb, "%s%d", k == 0 ? "" : mt->capture ? "x" : "-", mt->sq[k] + 1);
}

/* Lists the moves that filter names (all of them when NULL), one route
 * per distinct move, as eng_format_move writes them. */
static void
put_moves(text_buf *tb, const eng_movelist *list, const move_text *filter)
{
    char text[ENG_MOVE_STR_MAX];
    int i, j, dup;

    for (i = 0; i < list->n; i++) {
        if (filter != NULL && !text_names(&list->m[i], filter))
            continue;
        for (dup = 0, j = 0; j < i && !dup; j++)
            dup = (filter == NULL || text_names(&list->m[j], filter)) &&
                  same_move(&list->m[i], &list->m[j]);
        if (dup || eng_format_move(&list->m[i], text, sizeof text) != 0)
            continue;
        tb_printf(tb, " %s", text);
    }
}

/*
 * Text is lexed first, so malformed text is ENG_EMOVE whatever the
 * position; only well-formed text is compared with the legal moves. The
 * matches are then judged as moves, not routes: several routes with the
 * same origin, destination and captured set are the duplicate king
 * captures of the header, one move, and so never ambiguous.
 */
int
eng_parse_move(const eng_pos *p, const char *s, eng_move *out, char *err, size_t errlen)
{
    /* About 10 KB on the stack: no allocation keeps the call thread-safe
     * and infallible. Every route is kept so short text can be checked
     * against each one, not just the route ENG_DUPS_MERGE would keep. */
    eng_movelist list;
    move_text mt;
    text_buf tb;
    int i, n, rc, first = -1, exact = -1, ambiguous = 0;

    eng_errf(err, errlen, "%s", "");
    if (s == NULL) {
        eng_errf(err, errlen, "empty move text (NULL string)");
        return ENG_EMOVE;
    }
    if ((rc = move_lex(s, &mt, err, errlen)) != 0)
        return rc;
    n = eng_generate(p, &list, ENG_DUPS_KEEP);
    if (n < 0) {
        eng_errf(err, errlen, "position has more than %d moves", ENG_MAX_MOVES);
        return n;
    }
    for (i = 0; i < n; i++) {
        if (!text_names(&list.m[i], &mt))
            continue;
        if (first < 0)
            first = i;
        else if (!same_move(&list.m[first], &list.m[i]))
            ambiguous = 1;
        /* Text as long as the route is the route itself. */
        if (exact < 0 && (!mt.capture || mt.n == list.m[i].njumps + 1))
            exact = i;
    }
    /*
     * A complete route always names its own move, even when some longer
     * king route happens to pass through the same squares in order: the
     * landings fix every captured piece (each is the square jumped over),
     * so a route spelled out in full can only be one move. Without this,
     * eng_format_move's output might fail to parse back.
     */
    if (exact >= 0) {
        first = exact;
        ambiguous = 0;
    }
    tb_init(&tb, err, errlen);
    if (first < 0) {
        tb_printf(&tb, "illegal move ");
        put_text(&tb, &mt);
        if (n == 0) {
            tb_printf(&tb, "; no legal moves (the side to move has lost)");
            return ENG_EILLEGAL;
        }
        if (!mt.capture && list.m[0].njumps > 0)
            tb_printf(&tb, ": captures are compulsory");
        tb_printf(&tb, "; legal moves:");
        put_moves(&tb, &list, NULL);
        return ENG_EILLEGAL;
    }
    if (ambiguous) {
        tb_printf(&tb, "ambiguous move ");
        put_text(&tb, &mt);
        tb_printf(&tb, "; it names:");
        put_moves(&tb, &list, &mt);
        return ENG_EAMBIG;
    }
    if (out != NULL)
        *out = list.m[first];
    return 0;
}

/* Static strings only: callers may keep the pointer and use it from any
 * thread. */
const char *
eng_strerror(int code)
{
    switch (code) {
    case ENG_OK:
        return "success";
    case ENG_EFEN:
        return "malformed FEN";
    case ENG_EMOVE:
        return "malformed move text";
    case ENG_EILLEGAL:
        return "illegal move";
    case ENG_EAMBIG:
        return "ambiguous move";
    case ENG_EOVERFLOW:
        return "too many moves for a move list";
    case ENG_ENOSPACE:
        return "output buffer too small";
    default:
        return "unknown error";
    }
}
