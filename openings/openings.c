/*
 * openings.c - the three-move openings (openings.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "openings/openings.h"

int
ops_play_from(const eng_pos *start, const char *moves, eng_pos *out, int *nmoves, char *err,
              size_t errlen)
{
    *out = *start;
    char *buf = strdup(moves), *save = NULL;
    if (!buf) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    int n = 0, rc = 0;
    for (char *t = strtok_r(buf, " \t,", &save); t; t = strtok_r(NULL, " \t,", &save)) {
        eng_move m;
        char perr[200];
        if (eng_parse_move(out, t, &m, perr, sizeof perr)) {
            /* The published table writes captures with '-' ("13-22"): a
             * move that is only legal as a capture is read as one. */
            char alt[32], e2[64];
            snprintf(alt, sizeof alt, "%s", t);
            for (char *c = alt; *c; c++)
                if (*c == '-')
                    *c = 'x';
            if (eng_parse_move(out, alt, &m, e2, sizeof e2)) {
                snprintf(err, errlen, "move %d '%s' of \"%.120s%s\": %s", n + 1, t, moves,
                         strlen(moves) > 120 ? "..." : "", perr);
                rc = -1;
                break;
            }
        }
        eng_pos nx;
        eng_make(out, &m, &nx);
        *out = nx;
        n++;
    }
    free(buf);
    if (nmoves)
        *nmoves = n;
    return rc;
}

int
ops_play(const char *moves, eng_pos *out, int *nmoves, char *err, size_t errlen)
{
    eng_pos start;
    eng_start(&start);
    return ops_play_from(&start, moves, out, nmoves, err, errlen);
}

/* Splits a tab-separated line into at most max fields (in place). */
static int
split(char *line, char **f, int max)
{
    line[strcspn(line, "\r\n")] = 0;
    int n = 0;
    f[n++] = line;
    for (char *p = line; *p && n < max; p++)
        if (*p == '\t') {
            *p = 0;
            f[n++] = p + 1;
        }
    return n;
}

/* Calls fn for each data line (after comments and the header). */
static int
read_tsv(const char *path,
         int (*fn)(char **f, int n, int lineno, void *arg, char *err, size_t errlen), void *arg,
         char *err, size_t errlen)
{
    FILE *fp = fopen(path, "r");
    if (!fp) {
        snprintf(err, errlen, "cannot open %s", path);
        return -1;
    }
    char *line = NULL;
    size_t cap = 0;
    int lineno = 0, header = 0, rc = 0;
    while (!rc && getline(&line, &cap, fp) >= 0) {
        lineno++;
        if (line[0] == '#' || line[0] == '\n')
            continue;
        if (!header) {
            header = 1;
            continue;
        }
        char *f[10];
        int n = split(line, f, 10);
        char e[300];
        if (fn(f, n, lineno, arg, e, sizeof e)) {
            snprintf(err, errlen, "%s, line %d: %s", path, lineno, e);
            rc = -1;
        }
    }
    free(line);
    fclose(fp);
    return rc;
}

/* The position after a three-move opening; -1 (err) when it is not one. */
static int
play_three(const char *moves, eng_pos *out, char *err, size_t errlen)
{
    int nm;
    if (ops_play(moves, out, &nm, err, errlen))
        return -1;
    if (nm != 3) {
        snprintf(err, errlen, "\"%s\" is %d moves, not 3", moves, nm);
        return -1;
    }
    return 0;
}

static int
ballot_line(char **f, int n, int lineno, void *arg, char *err, size_t errlen)
{
    (void)lineno;
    ops_book *b = arg;
    if (n < 3) {
        snprintf(err, errlen, "expected acf, moves, status[, name]");
        return -1;
    }
    if (b->nballot == OPS_BALLOTS) {
        snprintf(err, errlen, "more than %d ballots", OPS_BALLOTS);
        return -1;
    }
    ops_ballot *o = &b->ballot[b->nballot];
    o->acf = atoi(f[0]);
    if (o->acf != b->nballot + 1) {
        snprintf(err, errlen, "ballot number '%s', expected %d", f[0], b->nballot + 1);
        return -1;
    }
    snprintf(o->moves, sizeof o->moves, "%s", f[1]);
    snprintf(o->status, sizeof o->status, "%s", f[2]);
    snprintf(o->name, sizeof o->name, "%s", n > 3 ? f[3] : "");
    if (play_three(o->moves, &o->pos, err, errlen))
        return -1;
    o->published = -1;
    b->nballot++;
    return 0;
}

static int
published_line(char **f, int n, int lineno, void *arg, char *err, size_t errlen)
{
    (void)lineno;
    ops_book *b = arg;
    if (n < 5) {
        snprintf(err, errlen, "expected no, opening, proof, searches, max_ply");
        return -1;
    }
    if (b->npub == OPS_PUBLISHED) {
        snprintf(err, errlen, "more than %d openings", OPS_PUBLISHED);
        return -1;
    }
    ops_published *o = &b->pub[b->npub];
    o->no = atoi(f[0]);
    if (o->no != b->npub + 1) {
        snprintf(err, errlen, "opening number '%s', expected %d", f[0], b->npub + 1);
        return -1;
    }
    snprintf(o->moves, sizeof o->moves, "%s", f[1]);
    snprintf(o->proof, sizeof o->proof, "%s", f[2]);
    o->searches = strtoull(f[3], NULL, 10);
    o->max_ply = atoi(f[4]);
    if (play_three(o->moves, &o->pos, err, errlen))
        return -1;
    o->ballot = -1;
    b->npub++;
    return 0;
}

int
ops_load(const char *dir, ops_book *b, char *err, size_t errlen)
{
    memset(b, 0, sizeof *b);
    if (!dir)
        dir = getenv("CHECKERS_OPENINGS");
    snprintf(b->dir, sizeof b->dir, "%s", dir && *dir ? dir : "openings");
    char path[600];
    snprintf(path, sizeof path, "%s/three-move-ballots.tsv", b->dir);
    if (read_tsv(path, ballot_line, b, err, errlen))
        return -1;
    if (b->nballot != OPS_BALLOTS) {
        snprintf(err, errlen, "%s holds %d ballots, expected %d", path, b->nballot, OPS_BALLOTS);
        return -1;
    }
    snprintf(path, sizeof path, "%s/published-19-openings.tsv", b->dir);
    if (read_tsv(path, published_line, b, err, errlen))
        return -1;
    if (b->npub != OPS_PUBLISHED) {
        snprintf(err, errlen, "%s holds %d openings, expected %d", path, b->npub, OPS_PUBLISHED);
        return -1;
    }
    for (int i = 0; i < b->npub; i++) {
        b->pub[i].ballot = ops_find(b, &b->pub[i].pos);
        for (int j = 0; j < b->nballot; j++)
            if (eng_equal(&b->ballot[j].pos, &b->pub[i].pos))
                b->ballot[j].published = i;
    }
    return 0;
}

int
ops_find(const ops_book *b, const eng_pos *p)
{
    for (int i = 0; i < b->nballot; i++)
        if (eng_equal(&b->ballot[i].pos, p))
            return i;
    return -1;
}

int
ops_transpositions(const ops_book *b, int i, int *out, int max)
{
    int n = 0;
    for (int j = 0; j < b->nballot && n < max; j++)
        if (j != i && eng_equal(&b->ballot[j].pos, &b->ballot[i].pos))
            out[n++] = j;
    return n;
}

typedef struct seed_arg {
    const eng_pos *p;
    char *out;
    size_t cap;
    int found;
} seed_arg;

static int
seed_line(char **f, int n, int lineno, void *arg, char *err, size_t errlen)
{
    (void)lineno;
    seed_arg *a = arg;
    if (n < 3) {
        snprintf(err, errlen, "expected no, opening, seed, ...");
        return -1;
    }
    eng_pos q;
    if (ops_play(f[1], &q, NULL, err, errlen))
        return -1;
    if (eng_equal(&q, a->p)) {
        snprintf(a->out, a->cap, "%s", f[2]);
        a->found = 1;
    }
    return 0;
}

int
ops_seed_find(const char *dir, const eng_pos *p, char *out, size_t cap)
{
    if (!dir)
        dir = getenv("CHECKERS_OPENINGS");
    char path[600], err[1200];
    snprintf(path, sizeof path, "%s/seeds.tsv", dir && *dir ? dir : "openings");
    FILE *fp = fopen(path, "r");
    if (!fp)
        return 0;
    fclose(fp);
    seed_arg a = {p, out, cap, 0};
    if (read_tsv(path, seed_line, &a, err, sizeof err))
        return 0;
    return a.found;
}

/* ---- the published value against ours ----------------------------------- */

int
ops_published_bound(const char *proof, eng_bound *out)
{
    /* Black's value; the side to move (White) gets its negation. */
    static const struct {
        const char *word;
        eng_bound white;
    } map[] = {{"Draw", ENG_DD},
               {"<=Draw", ENG_DW},
               {">=Draw", ENG_LD},
               {"Loss", ENG_WW},
               {"Win", ENG_LL}};
    for (size_t i = 0; i < sizeof map / sizeof map[0]; i++)
        if (!strcmp(proof, map[i].word)) {
            *out = map[i].white;
            return 0;
        }
    return -1;
}

int
ops_verdict(eng_bound published, eng_bound ours)
{
    int plo = eng_bound_lo(published), phi = eng_bound_hi(published);
    int olo = eng_bound_lo(ours), ohi = eng_bound_hi(ours);
    if (olo > phi || ohi < plo)
        return OPS_CONTRADICTS;
    if (olo >= plo && ohi <= phi)
        return OPS_AGREES;
    return OPS_OPEN;
}

/* ---- the ladders ----------------------------------------------------------- */

const int ops_rung_pieces[OPS_RUNGS] = {8, 10, 12, 14, 16, 18};
const int ops_level_pieces[OPS_LEVEL_RUNGS] = {10, 12, 14, 16};

int
ops_ladder_rungs(int kind, const int **pieces)
{
    switch (kind) {
    case OPS_LADDER_FRONTIER:
        *pieces = ops_rung_pieces;
        return OPS_RUNGS;
    case OPS_LADDER_LEVEL:
        *pieces = ops_level_pieces;
        return OPS_LEVEL_RUNGS;
    default:
        *pieces = NULL;
        return 0;
    }
}

const char *
ops_ladder_name(int kind)
{
    return kind == OPS_LADDER_FRONTIER ? "frontier" : kind == OPS_LADDER_LEVEL ? "level" : NULL;
}

const char *
ops_ladder_file(int kind)
{
    return kind == OPS_LADDER_FRONTIER ? "ladder.tsv"
           : kind == OPS_LADDER_LEVEL  ? "level.tsv"
                                       : NULL;
}

int
ops_equal_material(const eng_pos *p)
{
    return __builtin_popcount(p->bm) == __builtin_popcount(p->wm) &&
           __builtin_popcount(p->bk) == __builtin_popcount(p->wk);
}

int
ops_quiet(const eng_pos *p)
{
    return !eng_has_capture(p);
}

int
ops_level(const eng_pos *p)
{
    return ops_equal_material(p) && ops_quiet(p);
}

typedef struct ladder_arg {
    int kind;
    const int *rungs;
    int nrungs;
    ops_rung *r;
    int n, cap;
} ladder_arg;

/* Replays a row's line from the opening's position. For the level kind
 * every position before the last one with at most rung pieces must not
 * be level (the row is the FIRST level position of its rung). RETURN 0,
 * -1 (err). */
static int
ladder_replay(const ladder_arg *a, ops_rung *r, const char *line, char *err, size_t errlen)
{
    r->pos = r->start;
    char *buf = strdup(line), *save = NULL;
    if (!buf) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    int n = 0, rc = 0;
    for (char *t = strtok_r(buf, " \t,", &save); t; t = strtok_r(NULL, " \t,", &save)) {
        if (a->kind == OPS_LADDER_LEVEL && eng_pieces(&r->pos) <= r->rung && ops_level(&r->pos)) {
            snprintf(err, errlen, "ply %d of the line is already level with %d pieces", n,
                     eng_pieces(&r->pos));
            rc = -1;
            break;
        }
        eng_move m;
        char e[200];
        if (eng_parse_move(&r->pos, t, &m, e, sizeof e)) {
            snprintf(err, errlen, "move %d '%s' of the line: %s", n + 1, t, e);
            rc = -1;
            break;
        }
        eng_pos nx;
        eng_make(&r->pos, &m, &nx);
        r->pos = nx;
        n++;
    }
    free(buf);
    if (!rc && n != r->ply) {
        snprintf(err, errlen, "the line (%d plies) does not reach the FEN of the row (ply %d)", n,
                 r->ply);
        rc = -1;
    }
    return rc;
}

static int
ladder_line(char **f, int n, int lineno, void *arg, char *err, size_t errlen)
{
    (void)lineno;
    ladder_arg *a = arg;
    if (n < 7) {
        snprintf(err, errlen, "expected no, opening, rung, pieces, ply, fen, line");
        return -1;
    }
    if (a->n == a->cap) {
        int cap = a->cap ? 2 * a->cap : 128;
        ops_rung *r = realloc(a->r, (size_t)cap * sizeof *r);
        if (!r) {
            snprintf(err, errlen, "out of memory");
            return -1;
        }
        a->r = r;
        a->cap = cap;
    }
    ops_rung *r = &a->r[a->n];
    memset(r, 0, sizeof *r);
    char *end;
    r->no = (int)strtol(f[0], &end, 10);
    if (*end || r->no < 1 || r->no > OPS_PUBLISHED) {
        snprintf(err, errlen, "opening number '%s' (1..%d)", f[0], OPS_PUBLISHED);
        return -1;
    }
    r->rung = (int)strtol(f[2], &end, 10);
    int known = 0;
    for (int i = 0; i < a->nrungs; i++)
        known |= r->rung == a->rungs[i];
    if (*end || !known) {
        snprintf(err, errlen, "rung '%s' (%d, %d, ..., %d)", f[2], a->rungs[0], a->rungs[1],
                 a->rungs[a->nrungs - 1]);
        return -1;
    }
    r->pieces = (int)strtol(f[3], &end, 10);
    if (*end || r->pieces < 2 || r->pieces > r->rung) {
        snprintf(err, errlen, "piece count '%s' (2..%d)", f[3], r->rung);
        return -1;
    }
    r->ply = (int)strtol(f[4], &end, 10);
    if (*end || r->ply < 0) {
        snprintf(err, errlen, "ply '%s'", f[4]);
        return -1;
    }
    char e[180];
    eng_pos fen_pos;
    if (eng_parse_fen(f[5], &fen_pos, e, sizeof e)) {
        snprintf(err, errlen, "FEN '%.100s': %s", f[5], e);
        return -1;
    }
    snprintf(r->fen, sizeof r->fen, "%s", f[5]);
    for (int i = 0; i < a->n; i++)
        if (a->r[i].no == r->no && a->r[i].rung == r->rung) {
            snprintf(err, errlen, "a second row for opening %d, rung %d", r->no, r->rung);
            return -1;
        }
    snprintf(r->opening, sizeof r->opening, "%s", f[1]);
    if (ops_play(f[1], &r->start, NULL, e, sizeof e)) {
        snprintf(err, errlen, "%s", e);
        return -1;
    }
    if (ladder_replay(a, r, f[6], err, errlen))
        return -1;
    if (!eng_equal(&fen_pos, &r->pos)) {
        snprintf(err, errlen, "the line (%d plies) does not reach the FEN of the row", r->ply);
        return -1;
    }
    int pieces = eng_pieces(&r->pos);
    if (pieces != r->pieces) {
        snprintf(err, errlen, "the FEN has %d pieces, the row says %d", pieces, r->pieces);
        return -1;
    }
    if (a->kind == OPS_LADDER_LEVEL && !ops_level(&r->pos)) {
        snprintf(err, errlen, "the position is not level (%s)",
                 ops_equal_material(&r->pos) ? "the side to move has a capture"
                                             : "the material differs");
        return -1;
    }
    a->n++;
    return 0;
}

int
ops_ladder_load_kind(const char *dir, int kind, ops_rung **out, int *n, char *err, size_t errlen)
{
    ladder_arg a = {.kind = kind};
    a.nrungs = ops_ladder_rungs(kind, &a.rungs);
    if (!a.nrungs) {
        snprintf(err, errlen, "no ladder of kind %d", kind);
        return -1;
    }
    if (!dir)
        dir = getenv("CHECKERS_OPENINGS");
    char path[600];
    snprintf(path, sizeof path, "%s/%s", dir && *dir ? dir : "openings", ops_ladder_file(kind));
    if (read_tsv(path, ladder_line, &a, err, errlen)) {
        free(a.r);
        return -1;
    }
    *out = a.r;
    *n = a.n;
    return 0;
}

int
ops_ladder_load(const char *dir, ops_rung **out, int *n, char *err, size_t errlen)
{
    return ops_ladder_load_kind(dir, OPS_LADDER_FRONTIER, out, n, err, errlen);
}
