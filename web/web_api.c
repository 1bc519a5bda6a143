/*
 * web_api.c - what the proof browser says about positions (web.h is the
 * manual): a position's status, the line from the root, the JSON of
 * /api/node, /api/status, /api/check and /export/subtree.json, and the
 * PDN exports.
 *
 * Everything here reads: the tree through mt_lookup / mt_parents /
 * mt_each (O(1) a position, so a page costs its position's moves, not
 * the tree), the proof store through pst_get, the databases through
 * the leaf rule (prover/leaf.h).
 *
 * OWNS: nothing between requests (each answer is built from the
 *   web_server it is given and freed before it returns).
 * CALLS: web_text.c (escaping) and, read-only, the manager's public
 *   tree.h, the proof store (prover/store.h), the checker
 *   (prover/check.h, for /api/check) and the databases. Called by
 *   web_page.c and web.c; it calls neither.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <event2/buffer.h>

#include "web/web_internal.h"
#include "prover/check.h"
#include "prover/leaf.h"
#include "prover/prover.h"
#include "prover/search.h"

/* ---- constants -------------------------------------------------------- */

#define BFS_MAX 200000     /* positions a search for a line may visit */
#define SUBTREE_MAX 200000 /* nodes of /export/subtree.json */
#define PROOF_PLIES 400    /* the deepest line of a proof export */
#define HISTORY_ROWS 2000  /* rows of /api/status's history at most */

/* ---- types ------------------------------------------------------------ */

/*
 * A set of positions (open addressing, linear probing), for the two
 * searches below that must not visit a position twice: the line up the
 * parents (a transposition is reached by several paths, a cycle by
 * endless ones) and the proof export (each position written once). The
 * tree's own table is not used: those searches also meet positions that
 * are not in the tree (below its leaves). Kept at most half full, so a
 * probe ends quickly; a search that would fill it stops instead of
 * growing it (both have a bound of their own).
 */
typedef struct pos_set {
    eng_pos *v;
    int32_t *aux; /* per entry: a number the user keeps (BFS: the next entry) */
    uint8_t *used;
    size_t cap, n;
} pos_set;

/* ---- small helpers ------------------------------------------------------ */

/* A mix of the four masks and the side to move (the exact position:
 * a position and its colour-flipped twin are different pages). */
static uint64_t
pos_hash(const eng_pos *p)
{
    uint64_t h = (uint64_t)p->bm * 0x9E3779B97F4A7C15ull;
    h ^= ((uint64_t)p->wm + 0x632BE59BD9B4E019ull) * 0xBF58476D1CE4E5B9ull;
    h ^= ((uint64_t)p->bk + 0x94D049BB133111EBull) * 0x94D049BB133111EBull;
    h ^= ((uint64_t)p->wk << 1 | (uint64_t)p->stm) * 0xD6E8FEB86659FD93ull;
    return h ^ h >> 29;
}

static int
set_init(pos_set *s, size_t want)
{
    size_t cap = 64;
    while (cap < want * 2)
        cap *= 2;
    s->v = malloc(cap * sizeof *s->v);
    s->aux = malloc(cap * sizeof *s->aux);
    s->used = calloc(cap, 1);
    s->cap = cap;
    s->n = 0;
    return s->v && s->aux && s->used ? 0 : -1;
}

static void
set_free(pos_set *s)
{
    free(s->v);
    free(s->aux);
    free(s->used);
    memset(s, 0, sizeof *s);
}

/* The slot of p: 1 and *slot when present; 0 and the free slot when not
 * (-1 when the set is full). */
static int
set_find(const pos_set *s, const eng_pos *p, size_t *slot)
{
    size_t i = pos_hash(p) & (s->cap - 1);
    for (size_t k = 0; k < s->cap; k++, i = (i + 1) & (s->cap - 1)) {
        if (!s->used[i]) {
            *slot = i;
            return s->n + 1 < s->cap / 2 ? 0 : -1;
        }
        if (eng_equal(&s->v[i], p)) {
            *slot = i;
            return 1;
        }
    }
    return -1;
}

/* Adds p; RETURN 1 added, 0 present already, -1 full. */
static int
set_add(pos_set *s, const eng_pos *p, int32_t aux)
{
    size_t i;
    int r = set_find(s, p, &i);
    if (r != 0)
        return r == 1 ? 0 : -1;
    s->used[i] = 1;
    s->v[i] = *p;
    s->aux[i] = aux;
    s->n++;
    return 1;
}

/* +1 when bound b (for p's side to move) answers question q yes, -1 no,
 * 0 open (eng_question_answer). The page needs the rule to tell a pn of
 * 0 from a proof: a node whose pn is 0 while its bound does not answer
 * the question is only counted proven, through the threshold h. */
static int
answers(const eng_question *q, const eng_pos *p, eng_bound b)
{
    return eng_question_answer(q, p->stm, b);
}

/* ---- a position's status ---------------------------------------------------- */

void
web_score_text(int score, const char *who, char *buf, size_t cap)
{
    if (ab_score_proven(score)) {
        int plies = AB_WIN - (score > 0 ? score : -score);
        snprintf(buf, cap,
                 "%s for %s, proven by alpha-beta: score %+d = %s%d - %d%s, its lines end "
                 "within %d plies (a database win or loss counts %d)",
                 score > 0 ? "win" : "loss", who, score, score > 0 ? "" : "-(", AB_WIN, plies,
                 score > 0 ? "" : ")", plies, AB_DBPLY);
        return;
    }
    if (score == 0)
        snprintf(buf, cap, "level for %s: heuristic score 0 (hundredths of a man; not a proof)",
                 who);
    else
        snprintf(buf, cap,
                 "%s %s by %.2f men: heuristic score %+d (hundredths of a man; not a proof)", who,
                 score > 0 ? "ahead" : "behind", (score > 0 ? score : -score) / 100.0, score);
}

/*
 * Where a value comes from, in the order the tree itself takes them
 * (tree.c, node_own): no move, then the databases (within the proof's
 * piece count: beyond it the checker takes no database value either),
 * then the proof store. A node of the tree brings its own bound, which
 * also holds what it backed up from its children. The store's record is
 * read for every position that is not a leaf of the rules or the
 * databases: it is what "checked" is judged on (web.h, STATUS) and where
 * the proving move comes from.
 */
void
web_status_of(web_server *w, const eng_pos *p, web_status *s)
{
    memset(s, 0, sizeof *s);
    s->pos = *p;
    s->bound = ENG_LW;
    s->kind = WEB_SRC_NONE, s->source = "none";
    int leaf_kind = 0; /* 'd' database, 't' no move */
    if (mt_lookup(w->tree, p, &s->v) == 0) {
        s->in_tree = 1;
        s->bound = s->v.bound;
        switch (s->v.source) {
        case 'd':
            s->kind = WEB_SRC_DB, s->source = "database", leaf_kind = 'd';
            break;
        case 't':
            s->kind = WEB_SRC_END, s->source = "no move", leaf_kind = 't';
            break;
        case 's':
            s->kind = WEB_SRC_STORE, s->source = "proof store";
            break;
        case 'b':
            s->kind = WEB_SRC_TREE, s->source = "tree";
            break;
        default:
            break;
        }
    } else {
        pleaf lf;
        int v = pleaf_of(w->db, w->db ? w->db_pieces : 0, p, 0, &lf);
        if (v < 0) {
            s->error = 1;
            snprintf(s->why, sizeof s->why, "database probe failed: %s", egdb_strerror(v));
        } else if (lf.kind == PLEAF_END) {
            s->bound = ENG_LL;
            s->kind = WEB_SRC_END, s->source = "no move", leaf_kind = 't';
        } else if (lf.kind == PLEAF_DB) {
            s->bound = lf.bound;
            s->kind = WEB_SRC_DB, s->source = "database", leaf_kind = 'd';
        } else if (lf.kind == PLEAF_PARTIAL) {
            /* a bound: a leaf of the proof only for the questions it
             * answers, so the store is still read below */
            s->bound = lf.bound;
            s->kind = WEB_SRC_PARTIAL, s->source = "partial database";
        }
    }
    if (!leaf_kind) {
        int rc = pst_get(w->store, p, &s->rec);
        if (rc == 0) {
            s->has_record = 1;
            if (!s->in_tree) {
                s->bound = s->rec.bound;
                s->kind = WEB_SRC_STORE, s->source = "proof store";
            }
        } else if (rc != PST_ENOTFOUND) {
            s->error = 1;
            snprintf(s->why, sizeof s->why, "proof store read failed: %s", pst_strerror(rc));
        }
    }
    if (leaf_kind == 'd')
        s->checked = "database";
    else if (leaf_kind == 't')
        s->checked = "no move";
    else if (s->bound == ENG_LW)
        s->checked = "none";
    else if (s->has_record && eng_bound_meet(s->rec.bound, s->bound) == s->rec.bound)
        /* the record claims at least the bound shown: what the page
         * shows rests on an admitted record */
        s->checked = "admitted";
    else
        s->checked = "not written";
    if (s->in_tree) {
        if (!answers(&w->st.q, p, s->bound))
            s->provisional = s->v.pn == 0 ? 1 : s->v.dn == 0 ? -1 : 0;
    }
}

/* The status as a JSON object. */
static void
status_json(struct evbuffer *b, const web_status *s)
{
    char txt[300];
    evbuffer_add_printf(b,
                        "{\"in_tree\":%s,\"value\":\"%s\",\"bound\":\"%s\",\"source\":\"%s\","
                        "\"checked\":\"%s\"",
                        s->in_tree ? "true" : "false", prv_bound_word(s->bound),
                        eng_bound_name(s->bound), s->source, s->checked);
    if (s->error) {
        evbuffer_add_printf(b, ",\"error\":");
        web_json_str(b, s->why);
    }
    if (!s->in_tree) {
        evbuffer_add_printf(b, ",\"pn\":null,\"dn\":null}");
        return;
    }
    const mt_view *v = &s->v;
    evbuffer_add_printf(b, ",\"pn\":");
    web_json_pn(b, v->pn);
    evbuffer_add_printf(b, ",\"dn\":");
    web_json_pn(b, v->dn);
    web_score_text(v->score, web_side(s->pos.stm), txt, sizeof txt);
    evbuffer_add_printf(b, ",\"provisional\":%d,\"score\":%d,\"score_text\":", s->provisional,
                        v->score);
    web_json_str(b, txt);
    evbuffer_add_printf(b,
                        ",\"in_flight\":%s,\"flagged\":%s,\"jobs\":%u,\"job_ms\":%u,"
                        "\"job_nodes\":%" PRIu64 ",\"expanded\":%s,\"children\":%u,"
                        "\"parents\":%u}",
                        v->in_flight ? "true" : "false", v->flagged ? "true" : "false", v->jobs,
                        v->job_ms, v->job_nodes, v->expanded ? "true" : "false", v->children,
                        v->parents);
}

/*
 * The record's move is the one the checker follows (check.h): the win
 * move for a win, else the draw move (a win record may keep only its
 * win move, which then serves the weaker goal too, as the checker
 * takes it). Only a position without a record (a database position, or a
 * backup not yet written) falls back to the first move whose child's
 * bound gives the position's lower bound.
 */
int
web_proving_move(web_server *w, const web_status *s, eng_move *m)
{
    int lo = eng_bound_lo(s->bound);
    if (lo < ENG_DRAW)
        return 0;
    if (s->has_record) {
        const pst_move *pm = lo == ENG_WIN && s->rec.win.from != PST_NOMOVE ? &s->rec.win
                             : s->rec.draw.from != PST_NOMOVE               ? &s->rec.draw
                                                                            : &s->rec.win;
        if (pm->from != PST_NOMOVE && pst_move_find(&s->pos, pm, m) == 0)
            return 1;
    }
    /* no record (a database position, or a backup not written): the
     * first move to a child whose value gives the bound */
    eng_movelist ml;
    eng_generate(&s->pos, &ml, ENG_DUPS_MERGE);
    for (int i = 0; i < ml.n; i++) {
        eng_pos c;
        web_status cs;
        eng_make(&s->pos, &ml.m[i], &c);
        web_status_of(w, &c, &cs);
        if (eng_bound_lo(eng_bound_neg(cs.bound)) >= lo) {
            *m = ml.m[i];
            return 1;
        }
    }
    return 0;
}

/* ---- the line from the root ------------------------------------------------- */

/* The move of a that leads to b, as text; 0 when none does. */
static int
move_between(const eng_pos *a, const eng_pos *b, char *out, size_t cap)
{
    eng_movelist ml;
    eng_generate(a, &ml, ENG_DUPS_MERGE);
    for (int i = 0; i < ml.n; i++) {
        eng_pos c;
        eng_make(a, &ml.m[i], &c);
        if (eng_equal(&c, b)) {
            eng_format_move(&ml.m[i], out, cap);
            return 1;
        }
    }
    return 0;
}

/* Upwards, because a node has few parents (one, unless a transposition
 * joins lines) and many children: the search visits about as many
 * positions as the line is long, where a search down from the root
 * would visit the tree. */
/* The shortest line from the root to p through the parents (a breadth-
 * first search upwards, at most BFS_MAX positions). */
static void
line_by_parents(web_server *w, const eng_pos *root, const eng_pos *p, web_line *line)
{
    pos_set seen;
    eng_pos *queue = malloc(BFS_MAX * sizeof *queue);
    int32_t *next = malloc(BFS_MAX * sizeof *next); /* the child each came from */
    eng_pos *par = malloc(64 * sizeof *par);
    if (!queue || !next || !par || set_init(&seen, BFS_MAX)) {
        free(queue);
        free(next);
        free(par);
        set_free(&seen);
        return;
    }
    size_t head = 0, tail = 0;
    queue[tail] = *p;
    next[tail++] = -1;
    set_add(&seen, p, 0);
    long found = -1;
    while (head < tail && found < 0) {
        size_t i = head++;
        if (eng_equal(&queue[i], root)) {
            found = (long)i;
            break;
        }
        size_t np = mt_parents(w->tree, &queue[i], par, 64);
        for (size_t k = 0; k < np && k < 64 && tail < BFS_MAX; k++)
            if (set_add(&seen, &par[k], 0) == 1) {
                queue[tail] = par[k];
                next[tail++] = (int32_t)i;
            }
    }
    if (found >= 0) {
        int n = 0;
        line->pos[0] = *root;
        for (long i = found; next[i] >= 0 && n < WEB_LINE_MAX; i = next[i]) {
            if (!move_between(&queue[i], &queue[next[i]], line->move[n], sizeof line->move[n]))
                break;
            line->pos[++n] = queue[next[i]];
        }
        line->n = n;
        line->known = eng_equal(&line->pos[n], p);
        if (!line->known)
            line->n = 0;
    }
    free(queue);
    free(next);
    free(par);
    set_free(&seen);
}

/*
 * A line given in the address is the one the reader clicked, and it may
 * leave the tree (below a leaf, into a worker's proof): it is kept when
 * it leads to the position. Every move is parsed against the position
 * it is played from, so a bad one is named with its number; a line that
 * leads elsewhere (an edited address) gives way to the tree's own.
 */
int
web_line_get(web_server *w, const eng_pos *p, const char *text, web_line *line, char *err,
             size_t errlen)
{
    eng_pos root = w->root;
    line->n = 0;
    line->known = 0;
    line->pos[0] = root;
    if (text && *text) {
        char buf[WEB_MAX_URI + 1], *save = NULL;
        snprintf(buf, sizeof buf, "%s", text);
        eng_pos cur = root;
        int n = 0;
        for (char *tok = strtok_r(buf, " ,+", &save); tok; tok = strtok_r(NULL, " ,+", &save)) {
            eng_move m;
            char perr[300];
            if (n >= WEB_LINE_MAX) {
                snprintf(err, errlen, "line: more than %d moves", WEB_LINE_MAX);
                return -1;
            }
            if (eng_parse_move(&cur, tok, &m, perr, sizeof perr)) {
                char c[32];
                snprintf(err, errlen, "line, move %d '%s': %s", n + 1,
                         web_clip(tok, 20, c, sizeof c), perr);
                return -1;
            }
            eng_format_move(&m, line->move[n], sizeof line->move[n]);
            eng_make(&cur, &m, &cur);
            line->pos[++n] = cur;
        }
        if (!p || eng_equal(&cur, p)) {
            line->n = n;
            line->known = 1;
            return 0;
        }
        /* the line leads elsewhere: the one through the tree instead */
    }
    if (!p || eng_equal(p, &root)) {
        line->known = 1;
        return 0;
    }
    line_by_parents(w, &root, p, line);
    return 0;
}

/* web_line_get into a line of its own (malloc'ed: a web_line holds a
 * position and a move a ply, too large for a callback's stack), for the
 * routes that take line=. RETURN 0 and *out (the caller frees it), or the
 * HTTP status with err: 500 out of memory, 400 a bad move in text. */
static int
line_new(web_server *w, const eng_pos *p, const char *text, web_line **out, char *err,
         size_t errlen)
{
    web_line *line = malloc(sizeof *line);
    if (!line) {
        snprintf(err, errlen, "out of memory");
        return 500;
    }
    if (web_line_get(w, p, text, line, err, errlen)) {
        free(line);
        return 400;
    }
    *out = line;
    return 0;
}

/* ---- /api/node ------------------------------------------------------------------ */

static void
squares_json(struct evbuffer *b, uint32_t mask)
{
    evbuffer_add_printf(b, "[");
    int n = 0;
    for (int s = 0; s < 32; s++)
        if (mask >> s & 1)
            evbuffer_add_printf(b, "%s%d", n++ ? "," : "", s + 1);
    evbuffer_add_printf(b, "]");
}

static void
proof_json(web_server *w, struct evbuffer *b, const mt_stats *st)
{
    evbuffer_add_printf(b, "{\"root\":");
    web_json_str(b, st->root_fen);
    evbuffer_add_printf(b,
                        ",\"goal\":\"%s\",\"result\":\"%s\",\"settled\":%s,\"question\":{"
                        "\"attacker\":\"%s\",\"target\":\"%s\"},\"h\":",
                        mt_goal_name(st->goal), prv_bound_word(st->root_bound),
                        mt_goal_settled(st->goal, st->root_bound) ? "true" : "false",
                        st->q.attacker == ENG_BLACK ? "black" : "white",
                        st->q.target == ENG_WIN ? "win" : "draw");
    if (st->h >= MT_H_INF)
        evbuffer_add_printf(b, "null");
    else
        evbuffer_add_printf(b, "%d", st->h);
    evbuffer_add_printf(b, ",\"db_pieces\":%d,\"live\":%s,\"root_checked\":%d,\"check_text\":",
                        st->db_pieces, w->run ? "true" : "false", w->root_checked);
    web_json_str(b, w->check_text);
    evbuffer_add_printf(b, ",\"state\":");
    web_json_str(b, w->state);
    evbuffer_add_printf(b, "}");
}

/*
 * Why a position has no proving move, in words (NULL when it has one):
 * the side to move is the defender of a proven bound (every move of it
 * is refuted), or nothing is proven there yet. Before, every such
 * position said "the side to move is not proving here", also where the
 * side to move is the one the open question is about.
 */
static const char *
proving_note(const web_status *s, int has_pm)
{
    if (has_pm)
        return NULL;
    if (eng_bound_hi(s->bound) <= ENG_DRAW)
        return s->pos.stm == ENG_BLACK ? "none: White proves here, and every Black move is refuted"
                                       : "none: Black proves here, and every White move is refuted";
    if (eng_bound_lo(s->bound) >= ENG_DRAW)
        return "none: the record keeps no move for this bound";
    return "none yet: nothing is proven about this position so far";
}

/* The move of p to follow on the main line: the proving move where the
 * side to move proves; where it defends, the reply whose proof cost the
 * most (its record's effort, else its jobs' time in the tree, else the
 * first): the longest resistance, as a published main line is. 0 where
 * the proof ends (a database or no-move leaf) or nothing is proven. */
static int
main_move(web_server *w, const eng_pos *p, eng_move *out)
{
    web_status s;
    web_status_of(w, p, &s);
    if (s.kind == WEB_SRC_DB || s.kind == WEB_SRC_END)
        return 0;
    if (web_proving_move(w, &s, out))
        return 1;
    if (eng_bound_hi(s.bound) > ENG_DRAW)
        return 0; /* open: no main line goes through it */
    eng_movelist ml;
    eng_generate(p, &ml, ENG_DUPS_MERGE);
    uint64_t best = 0;
    int bi = -1;
    for (int i = 0; i < ml.n; i++) {
        eng_pos c;
        web_status cs;
        eng_make(p, &ml.m[i], &c);
        web_status_of(w, &c, &cs);
        uint64_t e = cs.has_record ? cs.rec.effort + 1 : cs.in_tree ? cs.v.job_ms + 1 : 1;
        if (bi < 0 || e > best)
            best = e, bi = i;
    }
    if (bi < 0)
        return 0;
    *out = ml.m[bi];
    return 1;
}

/* The main line from p as JSON moves (each with the FEN it leads to),
 * at most WEB_MAIN_MAX plies, stopping at a repetition; then why it
 * ended. One status a move and one a reply: a few ms for 200 plies. */
#define WEB_MAIN_MAX 200
static void
main_line_json(web_server *w, const eng_pos *p, struct evbuffer *b)
{
    eng_pos *seen = malloc((WEB_MAIN_MAX + 1) * sizeof *seen);
    evbuffer_add_printf(b, ",\"main_line\":[");
    const char *why = "the proof ends here";
    if (!seen) {
        evbuffer_add_printf(b, "],\"main_line_end\":\"out of memory\"");
        return;
    }
    eng_pos cur = *p;
    int n = 0;
    seen[0] = cur;
    for (;;) {
        eng_move m;
        if (n >= WEB_MAIN_MAX) {
            why = "cut at 200 moves";
            break;
        }
        if (!main_move(w, &cur, &m)) {
            web_status s;
            web_status_of(w, &cur, &s);
            why = s.kind == WEB_SRC_DB    ? "a database position"
                  : s.kind == WEB_SRC_END ? "no move: the game is over"
                  : s.bound == ENG_LW     ? "an open position: nothing proven yet"
                                          : "the proof keeps no move here";
            break;
        }
        char mv[ENG_MOVE_STR_MAX], f[ENG_FEN_MAX];
        eng_format_move(&m, mv, sizeof mv);
        eng_make(&cur, &m, &cur);
        eng_format_fen(&cur, f, sizeof f);
        evbuffer_add_printf(b, "%s{\"move\":", n ? "," : "");
        web_json_str(b, mv);
        evbuffer_add_printf(b, ",\"fen\":");
        web_json_str(b, f);
        evbuffer_add_printf(b, "}");
        seen[++n] = cur;
        int rep = 0;
        for (int i = 0; i < n && !rep; i++)
            rep = eng_equal(&seen[i], &cur);
        if (rep) {
            why = "a repetition";
            break;
        }
    }
    free(seen);
    evbuffer_add_printf(b, "],\"main_line_end\":");
    web_json_str(b, why);
}

/* /api/node's head: the position, its board, the proof, and the line
 * from the root (its moves; the caller closes the list). */
static void
node_head_json(web_server *w, struct evbuffer *b, const eng_pos *p, const char *fen,
               const web_line *line)
{
    evbuffer_add_printf(b, "{\"fen\":");
    web_json_str(b, fen);
    evbuffer_add_printf(b, ",\"side\":\"%s\",\"pieces\":%d,\"root\":%s,\"board\":{\"bm\":",
                        p->stm == ENG_BLACK ? "black" : "white", eng_pieces(p),
                        line->known && line->n == 0 ? "true" : "false");
    squares_json(b, p->bm);
    evbuffer_add_printf(b, ",\"wm\":");
    squares_json(b, p->wm);
    evbuffer_add_printf(b, ",\"bk\":");
    squares_json(b, p->bk);
    evbuffer_add_printf(b, ",\"wk\":");
    squares_json(b, p->wk);
    evbuffer_add_printf(b, "},\"proof\":");
    proof_json(w, b, &w->st);
    evbuffer_add_printf(b, ",\"line\":{\"known\":%s,\"moves\":[", line->known ? "true" : "false");
    for (int i = 0; i < line->n; i++) {
        char f[ENG_FEN_MAX];
        eng_format_fen(&line->pos[i + 1], f, sizeof f);
        evbuffer_add_printf(b, "%s{\"move\":", i ? "," : "");
        web_json_str(b, line->move[i]);
        evbuffer_add_printf(b, ",\"fen\":");
        web_json_str(b, f);
        evbuffer_add_printf(b, "}");
    }
}

/* The proof store's record of s's position as JSON (null without one):
 * its bound and the moves it keeps for a win and for a draw. */
static void
record_json(struct evbuffer *b, const web_status *s)
{
    if (!s->has_record) {
        evbuffer_add_printf(b, "null");
        return;
    }
    char mv[ENG_MOVE_STR_MAX];
    eng_move m;
    evbuffer_add_printf(b, "{\"bound\":\"%s\",\"value\":\"%s\",\"win_move\":",
                        eng_bound_name(s->rec.bound), prv_bound_word(s->rec.bound));
    if (s->rec.win.from != PST_NOMOVE && pst_move_find(&s->pos, &s->rec.win, &m) == 0) {
        eng_format_move(&m, mv, sizeof mv);
        web_json_str(b, mv);
    } else {
        evbuffer_add_printf(b, "null");
    }
    evbuffer_add_printf(b, ",\"draw_move\":");
    if (s->rec.draw.from != PST_NOMOVE && pst_move_find(&s->pos, &s->rec.draw, &m) == 0) {
        eng_format_move(&m, mv, sizeof mv);
        web_json_str(b, mv);
    } else {
        evbuffer_add_printf(b, "null");
    }
    evbuffer_add_printf(b, ",\"effort\":%" PRIu64 "}", s->rec.effort);
}

/* Every legal move of p with its child's status (",\"moves\":[...]");
 * proving: the proving move's text, or NULL. */
static void
moves_json(web_server *w, struct evbuffer *b, const eng_pos *p, const char *proving)
{
    evbuffer_add_printf(b, ",\"moves\":[");
    eng_movelist ml;
    eng_generate(p, &ml, ENG_DUPS_MERGE);
    for (int i = 0; i < ml.n; i++) {
        const eng_move *m = &ml.m[i];
        char mv[ENG_MOVE_STR_MAX], cf[ENG_FEN_MAX];
        eng_pos c;
        web_status cs;
        eng_make(p, m, &c);
        eng_format_move(m, mv, sizeof mv);
        eng_format_fen(&c, cf, sizeof cf);
        web_status_of(w, &c, &cs);
        evbuffer_add_printf(b, "%s{\"move\":", i ? "," : "");
        web_json_str(b, mv);
        evbuffer_add_printf(b, ",\"from\":%d,\"to\":%d,\"path\":[", m->from + 1, m->to + 1);
        for (int j = 0; j < m->njumps; j++)
            evbuffer_add_printf(b, "%s%d", j ? "," : "", m->path[j] + 1);
        evbuffer_add_printf(b, "],\"captures\":");
        squares_json(b, m->captured);
        evbuffer_add_printf(b, ",\"fen\":");
        web_json_str(b, cf);
        evbuffer_add_printf(b, ",\"proving\":%s,\"for_mover\":\"%s\"",
                            proving && !strcmp(mv, proving) ? "true" : "false",
                            prv_bound_word(eng_bound_neg(cs.bound)));
        if (cs.in_tree) { /* the score from the mover's side, explained */
            char txt[300];
            web_score_text(-cs.v.score, web_side(p->stm), txt, sizeof txt);
            evbuffer_add_printf(b, ",\"mover_score\":%d,\"mover_score_text\":", -cs.v.score);
            web_json_str(b, txt);
        }
        evbuffer_add_printf(b, ",\"status\":");
        status_json(b, &cs);
        evbuffer_add_printf(b, "}");
    }
    evbuffer_add_printf(b, "]");
}

/*
 * One position and every legal move with its child's status: all a click
 * needs, and nothing of the rest of the tree. A position is answered when
 * the proof says anything of it (in the tree, a record, within the
 * databases' piece count, or no move at all); any other is a 404, so a
 * mistyped FEN is told apart from an open position.
 */
int
web_api_node(web_server *w, const eng_pos *p, const char *line_text, struct evbuffer *b, char *err,
             size_t errlen)
{
    web_status s;
    web_status_of(w, p, &s);
    char fen[ENG_FEN_MAX];
    eng_format_fen(p, fen, sizeof fen);
    if (!s.in_tree && !s.has_record && s.bound == ENG_LW && !s.error) {
        snprintf(err, errlen,
                 "the position %s is not in this proof: not in its tree, no record in its proof "
                 "store, not covered by its databases",
                 fen);
        return 404;
    }
    web_line *line;
    int hs = line_new(w, p, line_text, &line, err, errlen);
    if (hs)
        return hs;
    node_head_json(w, b, p, fen, line);
    free(line);
    evbuffer_add_printf(b, "]},\"status\":");
    status_json(b, &s);
    evbuffer_add_printf(b, ",\"record\":");
    record_json(b, &s);
    eng_move pm;
    int has_pm = web_proving_move(w, &s, &pm);
    char pmtext[ENG_MOVE_STR_MAX] = "";
    if (has_pm)
        eng_format_move(&pm, pmtext, sizeof pmtext);
    evbuffer_add_printf(b, ",\"proving\":");
    if (has_pm)
        web_json_str(b, pmtext);
    else
        evbuffer_add_printf(b, "null");
    const char *note = proving_note(&s, has_pm);
    if (note) {
        evbuffer_add_printf(b, ",\"proving_note\":");
        web_json_str(b, note);
    }
    main_line_json(w, p, b);
    moves_json(w, b, p, has_pm ? pmtext : NULL);
    evbuffer_add_printf(b, "}\n");
    return 200;
}

/* ---- /api/status -------------------------------------------------------------------- */

typedef struct leaves_arg {
    eng_question q;
    mt_view *hard; /* the hardest open leaves, most job time first */
    size_t nhard, khard;
    mt_view *fly; /* nodes in flight */
    size_t nfly, kfly;
} leaves_arg;

/* Every open leaf has pn = dn = 1 (tree.h, THRESHOLD ITERATION), so pn
 * cannot tell the hard ones: the work they resisted can (job time, then
 * jobs); pn only breaks the last ties. */
static int
harder(const mt_view *a, const mt_view *b)
{
    if (a->job_ms != b->job_ms)
        return a->job_ms > b->job_ms;
    if (a->jobs != b->jobs)
        return a->jobs > b->jobs;
    return a->pn > b->pn;
}

/* One pass over the nodes: those in flight, and the k hardest open
 * leaves by insertion into a sorted array of k (k is 20: a heap would
 * not pay). */
static int
leaves_visit(const mt_view *v, void *arg)
{
    leaves_arg *a = arg;
    if (v->in_flight && a->nfly < a->kfly)
        a->fly[a->nfly++] = *v;
    /* open: not expanded, its bound does not answer the question, and
     * the threshold does not count it either (pn or dn 0, which is
     * also what a score proven by alpha-beta gives) - a leaf past h is
     * decided for the search, not open; an infinite number is a leaf
     * the question cannot go through */
    if (v->expanded || answers(&a->q, &v->pos, v->bound) || v->pn == 0 || v->dn == 0 ||
        v->pn >= MT_INF || v->dn >= MT_INF)
        return 0;
    /* insertion into the k best */
    size_t i = a->nhard < a->khard ? a->nhard++ : a->khard;
    if (i == a->khard) {
        if (!a->khard || !harder(v, &a->hard[a->khard - 1]))
            return 0;
        i = a->khard - 1;
    }
    while (i > 0 && harder(v, &a->hard[i - 1])) {
        a->hard[i] = a->hard[i - 1];
        i--;
    }
    a->hard[i] = *v;
    return 0;
}

size_t
web_leaves(web_server *w, mt_view *hard, size_t khard, size_t *nhard, mt_view *fly, size_t kfly)
{
    /* a settled proof has no open leaf that matters: what is left open
     * below it is off the proof (a settled root answers every question) */
    int settled = mt_goal_settled(w->st.goal, w->st.root_bound);
    leaves_arg a = {w->st.q, hard, 0, settled ? 0 : khard, fly, 0, kfly};
    mt_each(w->tree, leaves_visit, &a);
    *nhard = a.nhard;
    return a.nfly;
}

/* The stored history grows by a row every 10 s of a run (a week: 60,000
 * rows); the JSON keeps at most HISTORY_ROWS, every k-th, counted first. */
typedef struct hist_arg {
    struct evbuffer *b;
    size_t n, every, i;
} hist_arg;

static void
hist_count(double s, uint64_t pn, uint64_t dn, uint64_t nodes, uint64_t jobs, uint64_t proved,
           int bound, void *arg)
{
    (void)s, (void)pn, (void)dn, (void)nodes, (void)jobs, (void)proved, (void)bound;
    ((hist_arg *)arg)->n++;
}

static void
hist_json(double s, uint64_t pn, uint64_t dn, uint64_t nodes, uint64_t jobs, uint64_t proved,
          int bound, void *arg)
{
    hist_arg *a = arg;
    if (a->i++ % a->every)
        return;
    evbuffer_add_printf(a->b, "%s[%.1f,", a->i > 1 ? "," : "", s);
    web_json_pn(a->b, pn);
    evbuffer_add_printf(a->b, ",");
    web_json_pn(a->b, dn);
    evbuffer_add_printf(a->b, ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",\"%s\"]", nodes, jobs, proved,
                        prv_bound_word((eng_bound)bound));
}

static void
view_json(struct evbuffer *b, const mt_view *v)
{
    char fen[ENG_FEN_MAX], txt[300];
    eng_format_fen(&v->pos, fen, sizeof fen);
    evbuffer_add_printf(b, "{\"fen\":");
    web_json_str(b, fen);
    if (v->move[0]) {
        evbuffer_add_printf(b, ",\"move\":");
        web_json_str(b, v->move);
    }
    evbuffer_add_printf(b, ",\"result\":\"%s\",\"pn\":", prv_bound_word(v->bound));
    web_json_pn(b, v->pn);
    evbuffer_add_printf(b, ",\"dn\":");
    web_json_pn(b, v->dn);
    web_score_text(v->score, web_side(v->pos.stm), txt, sizeof txt);
    evbuffer_add_printf(b, ",\"score\":%d,\"score_text\":", v->score);
    web_json_str(b, txt);
    evbuffer_add_printf(b, ",\"jobs\":%u,\"job_ms\":%u,\"in_flight\":%s}", v->jobs, v->job_ms,
                        v->in_flight ? "true" : "false");
}

typedef struct top_arg {
    struct evbuffer *b;
    int n;
} top_arg;

static int
top_visit(const mt_view *v, void *arg)
{
    top_arg *a = arg;
    if (v->depth != 1)
        return 0;
    evbuffer_add_printf(a->b, "%s", a->n++ ? "," : "");
    view_json(a->b, v);
    return 0;
}

int
web_api_status(web_server *w, struct evbuffer *b)
{
    mt_stats st = w->st;
    evbuffer_add_printf(b, "{\"root\":");
    web_json_str(b, st.root_fen);
    evbuffer_add_printf(b, ",\"goal\":\"%s\",\"result\":\"%s\",\"settled\":%s,",
                        mt_goal_name(st.goal), prv_bound_word(st.root_bound),
                        mt_goal_settled(st.goal, st.root_bound) ? "true" : "false");
    evbuffer_add_printf(b, "\"question\":{\"attacker\":\"%s\",\"target\":\"%s\"},",
                        st.q.attacker == ENG_BLACK ? "black" : "white",
                        st.q.target == ENG_WIN ? "win" : "draw");
    evbuffer_add_printf(b, "\"pn\":");
    web_json_pn(b, st.root_pn);
    evbuffer_add_printf(b, ",\"dn\":");
    web_json_pn(b, st.root_dn);
    evbuffer_add_printf(b, ",\"h\":");
    if (st.h >= MT_H_INF)
        evbuffer_add_printf(b, "null");
    else
        evbuffer_add_printf(b, "%d", st.h);
    evbuffer_add_printf(b,
                        ",\"tree\":{\"nodes\":%" PRIu64 ",\"expanded\":%" PRIu64
                        ",\"leaves_proven\":%" PRIu64 ",\"in_flight\":%" PRIu64 "},",
                        st.nodes, st.expanded, st.leaves_proven, st.in_flight);
    const web_run *r = &w->scratch;
    evbuffer_add_printf(b,
                        "\"jobs\":{\"issued\":%" PRIu64 ",\"done\":%" PRIu64 ",\"settled\":%" PRIu64
                        ",\"per_minute\":%.2f,\"budget_ms\":%u},",
                        st.jobs_issued, st.jobs_done, st.jobs_proved, w->run ? r->per_minute : 0.0,
                        st.job_ms);
    evbuffer_add_printf(b, "\"db_pieces\":%d,\"live\":%s,\"root_checked\":%d,\"check_text\":",
                        st.db_pieces, w->run ? "true" : "false", w->root_checked);
    web_json_str(b, w->check_text);
    evbuffer_add_printf(b, ",\"seconds\":{\"run\":%.1f,\"total\":%.1f},\"workers\":[",
                        w->run ? r->run_s : 0.0, st.seconds + (w->run ? r->unsaved_s : 0.0));
    for (size_t i = 0; w->run && i < r->nworkers && i < WEB_MAX_WORKERS; i++) {
        const web_worker *k = &r->workers[i];
        evbuffer_add_printf(b, "%s{\"id\":%u,\"name\":", i ? "," : "", k->id);
        web_json_str(b, k->name);
        evbuffer_add_printf(b, ",\"address\":");
        web_json_str(b, k->addr);
        evbuffer_add_printf(b, ",\"job\":");
        if (k->has_job) {
            char fen[ENG_FEN_MAX];
            eng_format_fen(&k->job_pos, fen, sizeof fen);
            evbuffer_add_printf(b, "%" PRIu64 ",\"job_fen\":", k->job_id);
            web_json_str(b, fen);
            evbuffer_add_printf(b, ",\"job_s\":%.1f,\"job_budget_ms\":%u", k->job_s,
                                k->job_budget_ms);
        } else {
            evbuffer_add_printf(b, "null");
        }
        evbuffer_add_printf(b, ",\"jobs_done\":%" PRIu64 ",\"connected_s\":%.1f}", k->jobs_done,
                            k->connected_s);
    }
    evbuffer_add_printf(b, "],\"workers_connected\":%zu,\"top\":[", w->run ? r->nworkers : 0);
    top_arg ta = {b, 0};
    mt_walk(w->tree, 1, top_visit, &ta);
    mt_view hard[20], fly[64];
    size_t nhard;
    size_t nfly = web_leaves(w, hard, 20, &nhard, fly, 64);
    evbuffer_add_printf(b, "],\"in_flight\":[");
    for (size_t i = 0; i < nfly && i < 64; i++) {
        evbuffer_add_printf(b, "%s", i ? "," : "");
        view_json(b, &fly[i]);
    }
    evbuffer_add_printf(b, "],\"hardest\":[");
    for (size_t i = 0; i < nhard; i++) {
        evbuffer_add_printf(b, "%s", i ? "," : "");
        view_json(b, &hard[i]);
    }
    hist_arg ha = {b, 0, 1, 0};
    mt_history(w->tree, hist_count, &ha);
    ha.every = ha.n > HISTORY_ROWS ? (ha.n + HISTORY_ROWS - 1) / HISTORY_ROWS : 1;
    evbuffer_add_printf(b, "],\"history_rows\":%zu,\"history\":[", ha.n);
    mt_history(w->tree, hist_json, &ha);
    evbuffer_add_printf(b, "]}\n");
    return 200;
}

/* ---- /api/check ----------------------------------------------------------------------- */

/* The independent checker from p, over the store and the databases,
 * trusting nothing: what `checkers proof check` runs. It takes as long
 * as the proof below p is large, in the event loop: a served state only
 * (web.c refuses it on a running manager). */
int
web_api_check(web_server *w, const eng_pos *p, struct evbuffer *b, char *err, size_t errlen)
{
    pchk_result r;
    char cerr[512], fen[ENG_FEN_MAX];
    eng_format_fen(p, fen, sizeof fen);
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    int rc = pchk_check(w->store, w->db, p, &r, cerr, sizeof cerr);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    if (rc) {
        snprintf(err, errlen, "the checker could not run on %s: %s", fen, cerr);
        return 500;
    }
    double secs = (double)(t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) * 1e-9;
    evbuffer_add_printf(b, "{\"fen\":");
    web_json_str(b, fen);
    /* with nothing stored the checker proved nothing: no bound is
     * claimed (its result's bound field is not a value then) */
    evbuffer_add_printf(b, ",\"status\":\"%s\",\"bound\":",
                        r.status == PCHK_VALID     ? "valid"
                        : r.status == PCHK_NOTHING ? "nothing stored"
                                                   : "invalid");
    if (r.status == PCHK_NOTHING)
        evbuffer_add_printf(b, "null,\"value\":null");
    else
        evbuffer_add_printf(b, "\"%s\",\"value\":\"%s\"", eng_bound_name(r.bound),
                            prv_bound_word(r.bound));
    evbuffer_add_printf(b,
                        ",\"positions\":%" PRIu64 ",\"leaves_db\":%" PRIu64
                        ",\"leaves_end\":%" PRIu64 ",\"longest_win\":%d,\"seconds\":%.3f",
                        r.positions, r.leaves_db, r.leaves_end, r.longest_win, secs);
    if (r.status == PCHK_NOTHING) {
        evbuffer_add_printf(b, ",\"why\":");
        web_json_str(b, "the proof store holds no record for this position: nothing is proven "
                        "about it, so there is nothing to check");
    }
    if (r.status == PCHK_INVALID) {
        evbuffer_add_printf(b, ",\"where\":");
        web_json_str(b, r.where);
        evbuffer_add_printf(b, ",\"why\":");
        web_json_str(b, r.why);
    }
    evbuffer_add_printf(b, "}\n");
    return 200;
}

/* ---- PDN exports ------------------------------------------------------------------------ */

/* The Result tag of a position whose value is exact (a win, a loss or
 * a draw for the side to move): "1-0" White wins, "0-1" Black wins,
 * "1/2-1/2" a draw, as the PDN description gives them; "*" for a bound
 * (>=draw, <=draw) or nothing proven, which no game result states. */
static const char *
pdn_result(const eng_pos *p, eng_bound b)
{
    if (b == ENG_DD)
        return "1/2-1/2";
    int white_wins = (b == ENG_WW) == (p->stm == ENG_WHITE);
    if (b == ENG_WW || b == ENG_LL)
        return white_wins ? "1-0" : "0-1";
    return "*";
}

static void
pdn_tags(struct evbuffer *b, const char *event, const char *fen, const char *result)
{
    evbuffer_add_printf(b, "[Event \"%s\"]\n[Site \"checkers proof browser\"]\n", event);
    evbuffer_add_printf(b, "[Black \"?\"]\n[White \"?\"]\n[Result \"%s\"]\n[GameType \"21\"]\n",
                        result);
    evbuffer_add_printf(b, "[SetUp \"1\"]\n[FEN \"%s\"]\n", fen);
}

/* "1. " before Black's move, "1... " before White's where one is needed:
 * at the start of a line from a White-to-move position, at the start of
 * a variation, and where the main line goes on after variations (PDN
 * 3.0 as PGN writes it). ply counts from the exported position;
 * root_white shifts the numbering when White moves first there. */
static void
pdn_number(struct evbuffer *b, int ply, int root_white, int need)
{
    int k = ply + root_white;
    if (k % 2 == 0)
        evbuffer_add_printf(b, "%d. ", k / 2 + 1);
    else if (need)
        evbuffer_add_printf(b, "%d... ", k / 2 + 1);
}

int
web_export_line(web_server *w, const eng_pos *p, const char *line_text, struct evbuffer *b,
                char *err, size_t errlen)
{
    web_line *line;
    int hs = line_new(w, p, line_text, &line, err, errlen);
    if (hs)
        return hs;
    char fen[ENG_FEN_MAX], rootfen[ENG_FEN_MAX];
    eng_format_fen(p, fen, sizeof fen);
    if (!line->known) {
        snprintf(err, errlen,
                 "no line from the root reaches %s: give the moves with line= (the browser keeps "
                 "them)",
                 fen);
        free(line);
        return 404;
    }
    eng_format_fen(&line->pos[0], rootfen, sizeof rootfen);
    pdn_tags(b, "proof browser: a line from the root", rootfen, "*");
    web_status s;
    web_status_of(w, p, &s);
    evbuffer_add_printf(b, "\n");
    int root_white = line->pos[0].stm == ENG_WHITE;
    for (int i = 0; i < line->n; i++) {
        pdn_number(b, i, root_white, i == 0);
        evbuffer_add_printf(b, "%s ", line->move[i]);
    }
    evbuffer_add_printf(b, "{%s to move: %s (%s, checked: %s)} *\n", web_side(p->stm),
                        prv_bound_word(s.bound), s.source, s.checked);
    free(line);
    return 200;
}

/*
 * The proof walk of /export/proof.pdn, which is the checker's walk
 * (check.h) written out: for the claim "x wins" (or "x at least
 * draws"), where x moves, the one move its record keeps; where the
 * other side moves, every reply. It stops where the checker stops: a
 * database position, a position without a move, a position already on
 * the line (a repetition: fine for a draw, impossible in a checked win),
 * and, to keep the file finite, a position already written (a
 * transposition). Depth first, one game per claim.
 */
typedef struct proof_ctx {
    web_server *w;
    struct evbuffer *b;
    int x;   /* the prover's colour */
    int win; /* proving a win (else at least a draw) */
    int root_white;
    long budget; /* moves still to print */
    int cut;     /* the budget ran out somewhere */
    pos_set shown;
    eng_pos path[PROOF_PLIES + 1];
} proof_ctx;

/* What the proof does at p: 0 a leaf (its comment written into note),
 * else the number of moves it plays (into ml: the prover's kept move,
 * or every reply of the defender). */
static int
proof_moves(proof_ctx *c, const eng_pos *p, int ply, eng_movelist *ml, char *note, size_t cap)
{
    for (int i = 0; i < ply; i++)
        if (eng_equal(&c->path[i], p)) {
            snprintf(note, cap, "repetition: back to a position of this line%s",
                     c->win ? "" : " (endless play is a draw)");
            return 0;
        }
    web_status s;
    web_status_of(c->w, p, &s);
    eng_generate(p, ml, ENG_DUPS_MERGE);
    if (ml->n == 0) {
        snprintf(note, cap, "%s has no move and loses", web_side(p->stm));
        return 0;
    }
    if (s.kind == WEB_SRC_DB) {
        snprintf(note, cap, "database: %s for %s", prv_bound_word(s.bound), web_side(p->stm));
        return 0;
    }
    size_t slot;
    if (set_find(&c->shown, p, &slot) == 1) {
        snprintf(note, cap, "transposes to a position shown above");
        return 0;
    }
    if (!s.has_record) {
        snprintf(note, cap, "no record in the proof store: the proof does not continue here");
        return 0;
    }
    if (p->stm != c->x)
        return ml->n; /* the defender: every reply */
    const pst_move *pm = c->win                          ? &s.rec.win
                         : s.rec.draw.from != PST_NOMOVE ? &s.rec.draw
                                                         : &s.rec.win;
    eng_move m;
    if (pm->from == PST_NOMOVE || pst_move_find(p, pm, &m)) {
        snprintf(note, cap, "the record (%s) keeps no move for this proof",
                 eng_bound_name(s.rec.bound));
        return 0;
    }
    ml->m[0] = m;
    ml->n = 1;
    return 1;
}

/* One move at ply, its number first where one is needed. */
static void
proof_move(proof_ctx *c, const eng_move *m, int ply, int need)
{
    char mv[ENG_MOVE_STR_MAX];
    eng_format_move(m, mv, sizeof mv);
    pdn_number(c->b, ply, c->root_white, need);
    evbuffer_add_printf(c->b, "%s ", mv);
    c->budget--;
}

/* The continuation from p (ply plies in): its first move, then each
 * other move as a variation with all that follows it, then what follows
 * the first move. need: a number before the first move even for White
 * (the line starts here, or variations came just before). */
static void
proof_line(proof_ctx *c, const eng_pos *p, int ply, int need)
{
    char note[200];
    if (ply >= PROOF_PLIES || c->budget <= 0) {
        if (!c->cut) /* once, where it stops; the end of the game says more */
            evbuffer_add_printf(c->b, "{...} ");
        c->cut = 1;
        return;
    }
    eng_movelist *ml = malloc(sizeof *ml);
    if (!ml) {
        c->cut = 1;
        return;
    }
    int n = proof_moves(c, p, ply, ml, note, sizeof note);
    if (n == 0) {
        evbuffer_add_printf(c->b, "{%s} ", note);
        free(ml);
        return;
    }
    set_add(&c->shown, p, 0);
    c->path[ply] = *p;
    eng_pos child;
    eng_make(p, &ml->m[0], &child);
    proof_move(c, &ml->m[0], ply, need);
    for (int i = 1; i < n && c->budget > 0; i++) {
        eng_pos alt;
        eng_make(p, &ml->m[i], &alt);
        evbuffer_add_printf(c->b, "( ");
        proof_move(c, &ml->m[i], ply, 1);
        proof_line(c, &alt, ply + 1, 0);
        evbuffer_add_printf(c->b, ") ");
    }
    proof_line(c, &child, ply + 1, n > 1);
    free(ml);
}

int
web_export_proof(web_server *w, const eng_pos *p, long max_moves, struct evbuffer *b, char *err,
                 size_t errlen)
{
    web_status s;
    web_status_of(w, p, &s);
    char fen[ENG_FEN_MAX];
    eng_format_fen(p, fen, sizeof fen);
    int lo = eng_bound_lo(s.bound), hi = eng_bound_hi(s.bound);
    if (s.bound == ENG_LW) {
        snprintf(err, errlen, "nothing is proven about %s: there is no proof to export", fen);
        return 404;
    }
    /* the proofs the bound implies (check.h): the side to move's when
     * lo >= draw, the other side's when hi <= draw */
    struct {
        int x, win;
    } goals[2];
    int ng = 0;
    if (lo >= ENG_DRAW)
        goals[ng].x = p->stm, goals[ng++].win = lo == ENG_WIN;
    if (hi <= ENG_DRAW)
        goals[ng].x = !p->stm, goals[ng++].win = hi == ENG_LOSS;
    proof_ctx *c = calloc(1, sizeof *c);
    if (!c || set_init(&c->shown, (size_t)max_moves + 16)) {
        if (c)
            set_free(&c->shown);
        free(c);
        snprintf(err, errlen, "out of memory");
        return 500;
    }
    c->w = w;
    c->b = b;
    c->root_white = p->stm == ENG_WHITE;
    for (int g = 0; g < ng; g++) {
        char event[160];
        snprintf(event, sizeof event, "proof: %s %s", web_side(goals[g].x),
                 goals[g].win ? "wins" : "at least draws");
        pdn_tags(b, event, fen, pdn_result(p, s.bound));
        evbuffer_add_printf(b,
                            "\n{The proof that %s %s from this position (%s to move), as the "
                            "proof store holds it: where %s moves, the move the record keeps; "
                            "where %s moves, every reply. Each position once.} ",
                            web_side(goals[g].x), goals[g].win ? "wins" : "at least draws",
                            web_side(p->stm), web_side(goals[g].x), web_side(!goals[g].x));
        c->x = goals[g].x;
        c->win = goals[g].win;
        c->budget = max_moves;
        c->shown.n = 0;
        c->cut = 0;
        memset(c->shown.used, 0, c->shown.cap);
        proof_line(c, p, 0, 1);
        if (c->cut)
            evbuffer_add_printf(
                b,
                "{The proof goes on where the comment ... stands: this export stops at %ld "
                "moves (max=, at most 200000), or %d plies deep.} ",
                max_moves, PROOF_PLIES);
        evbuffer_add_printf(b, "%s\n\n", pdn_result(p, s.bound));
    }
    set_free(&c->shown);
    free(c);
    return 200;
}

/* ---- /export/subtree.json ----------------------------------------------------------------- */

typedef struct sub_ctx {
    web_server *w;
    struct evbuffer *b;
    long left; /* nodes still to write */
    int truncated;
    eng_pos path[64];
} sub_ctx;

/* A node and, while depth lasts and it is expanded, its children in
 * move order; a position already on the path is written as a repetition
 * and not entered (the tree may hold cycles). Transpositions are
 * written again under each parent: the export is a tree, as its reader
 * expects, bounded by depth and by SUBTREE_MAX nodes. */
static void
sub_node(sub_ctx *c, const eng_pos *p, const char *move, int depth, int ply)
{
    char fen[ENG_FEN_MAX];
    eng_format_fen(p, fen, sizeof fen);
    evbuffer_add_printf(c->b, "{\"move\":");
    if (move)
        web_json_str(c->b, move);
    else
        evbuffer_add_printf(c->b, "null");
    evbuffer_add_printf(c->b, ",\"fen\":");
    web_json_str(c->b, fen);
    for (int i = 0; i < ply; i++)
        if (eng_equal(&c->path[i], p)) {
            evbuffer_add_printf(c->b, ",\"repetition\":true}");
            return;
        }
    web_status s;
    web_status_of(c->w, p, &s);
    evbuffer_add_printf(c->b, ",\"status\":");
    status_json(c->b, &s);
    c->left--;
    if (!s.in_tree || !s.v.expanded || depth <= 0 || ply >= 63) {
        evbuffer_add_printf(c->b, "}");
        return;
    }
    if (c->left <= 0) {
        c->truncated = 1;
        evbuffer_add_printf(c->b, "}");
        return;
    }
    c->path[ply] = *p;
    evbuffer_add_printf(c->b, ",\"children\":[");
    eng_movelist *ml = malloc(sizeof *ml);
    if (ml) {
        eng_generate(p, ml, ENG_DUPS_MERGE);
        for (int i = 0; i < ml->n; i++) {
            char mv[ENG_MOVE_STR_MAX];
            eng_pos ch;
            eng_make(p, &ml->m[i], &ch);
            eng_format_move(&ml->m[i], mv, sizeof mv);
            evbuffer_add_printf(c->b, "%s", i ? "," : "");
            sub_node(c, &ch, mv, depth - 1, ply + 1);
        }
        free(ml);
    }
    evbuffer_add_printf(c->b, "]}");
}

int
web_export_subtree(web_server *w, const eng_pos *p, int depth, struct evbuffer *b, char *err,
                   size_t errlen)
{
    mt_view v;
    if (mt_lookup(w->tree, p, &v)) {
        char fen[ENG_FEN_MAX];
        eng_format_fen(p, fen, sizeof fen);
        snprintf(err, errlen, "the position %s is not in the proof's tree", fen);
        return 404;
    }
    sub_ctx c = {w, b, SUBTREE_MAX, 0, {{0}}};
    struct evbuffer *body = evbuffer_new();
    if (!body) {
        snprintf(err, errlen, "out of memory");
        return 500;
    }
    c.b = body;
    sub_node(&c, p, NULL, depth, 0);
    evbuffer_add_printf(b, "{\"depth\":%d,\"truncated\":%s,\"nodes\":%ld,\"root\":", depth,
                        c.truncated ? "true" : "false", SUBTREE_MAX - c.left);
    evbuffer_add_buffer(b, body);
    evbuffer_add_printf(b, "}\n");
    evbuffer_free(body);
    return 200;
}
