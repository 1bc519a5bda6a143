/*
 * test_web.c - the proof browser's reading side (web/web.h,
 * tree.h's READ-ONLY ACCESS), in-process:
 *   - a tree opened with mt_open_ro shows every node exactly as the tree
 *     that wrote it (bound, numbers, score, jobs, children, parents), and
 *     opening it writes nothing: data.mdb is byte for byte the same;
 *   - the line from the root through the parents is a shortest one;
 *   - the proof of a position exported as PDN replays move by move with
 *     the rules, every "database" comment is the database's value there,
 *     and at every position where the defender moves, every reply is in
 *     it (a proof, not a line);
 *   - scores are explained in words, exactly.
 * Needs the 1-5 piece test databases (CHECKERS_TEST_DB).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>
#include <event2/event.h>

#include "egdb/egdb.h"
#include "web/hmac.h"
#include "manager/tree.h"
#include "web/web.h"
#include "web/web_internal.h"
#include "prover/admit.h"
#include "prover/prover.h"
#include "prover/store.h"
#include "tests/test_util.h"

/* ---- helpers ------------------------------------------------------------ */

static int
rm_rf(const char *d)
{
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", d);
    return system(cmd);
}

/* The bytes of a file, malloc'd; *n its size. */
static unsigned char *
slurp(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *b = malloc((size_t)len + 1);
    *n = fread(b, 1, (size_t)len, f);
    fclose(f);
    return b;
}

typedef struct views {
    mt_view *v;
    size_t n, cap;
} views;

static int
keep_view(const mt_view *v, void *arg)
{
    views *a = arg;
    if (a->n == a->cap) {
        a->cap = a->cap ? 2 * a->cap : 1024;
        a->v = realloc(a->v, a->cap * sizeof *a->v);
    }
    a->v[a->n++] = *v;
    return 0;
}

/* ---- a read-only tree is the tree ------------------------------------------- */

/* The start position's tree in the state tdir (its store returned in
 * *st) after jobs results that leave every leaf open: each expands (the
 * root's own jobs off: they would take two thirds of them). */
static mt_tree *
start_tree(const char *tdir, int jobs, pst_env **st)
{
    char err[512];
    mt_create cr = {.goal = MT_GOAL_VALUE,
                    .job_ms = 1000,
                    .job_max_ms = 1000,
                    .h0 = 200,
                    .h_step = 200,
                    .no_root_jobs = 1};
    eng_start(&cr.root);
    mt_tree *t;
    assert_int_equal(mt_open(tdir, &cr, NULL, &t, err, sizeof err), 0);
    *st = mt_store(t);
    for (int k = 0; k < jobs; k++) {
        mt_job j;
        assert_int_equal(mt_pick(t, &j, err, sizeof err), MT_PICK_JOB);
        assert_int_equal(mt_result(t, j.id, ENG_LW, 0, 0, 0, 7, 9, NULL, 0, 0, err, sizeof err), 0);
    }
    return t;
}

static void
test_open_ro_same_tree(void **state)
{
    (void)state;
    char dir[256], tdir[300], dm[320], err[512];
    assert_non_null(test_tmpdir(dir, sizeof dir, "web"));
    snprintf(tdir, sizeof tdir, "%s", dir); /* the state: one environment */
    snprintf(dm, sizeof dm, "%s/state/data.mdb", tdir);
    pst_env *st;
    mt_tree *t = start_tree(tdir, 100, &st);
    views rw = {0};
    mt_each(t, keep_view, &rw);
    assert_true(rw.n > 500);
    mt_close(t); /* and its store */

    size_t n0, n1;
    unsigned char *before = slurp(dm, &n0);
    assert_non_null(before);
    assert_int_equal(mt_open_ro(tdir, NULL, &t, err, sizeof err), 0);
    st = mt_store(t);
    views ro = {0};
    mt_each(t, keep_view, &ro);
    assert_int_equal(ro.n, rw.n);
    for (size_t i = 0; i < rw.n; i++) {
        mt_view v;
        assert_int_equal(mt_lookup(t, &rw.v[i].pos, &v), 0);
        const mt_view *a = &rw.v[i];
        assert_int_equal(v.bound, a->bound);
        assert_int_equal(v.pn, a->pn);
        assert_int_equal(v.dn, a->dn);
        assert_int_equal(v.score, a->score);
        assert_int_equal(v.jobs, a->jobs);
        assert_int_equal(v.job_ms, a->job_ms);
        assert_int_equal(v.job_nodes, a->job_nodes);
        assert_int_equal(v.expanded, a->expanded);
        assert_int_equal(v.children, a->children);
        assert_int_equal(v.parents, a->parents);
        /* each child lists it among its parents */
        if (!v.expanded)
            continue;
        eng_movelist ml;
        eng_generate(&v.pos, &ml, ENG_DUPS_MERGE);
        assert_int_equal((uint32_t)ml.n, v.children);
        for (int m = 0; m < ml.n; m++) {
            eng_pos c, par[64];
            eng_make(&v.pos, &ml.m[m], &c);
            size_t np = mt_parents(t, &c, par, 64);
            int found = 0;
            for (size_t k = 0; k < np && k < 64; k++)
                found |= eng_equal(&par[k], &v.pos);
            assert_true(found);
        }
    }
    /* a position outside the tree */
    eng_pos far;
    assert_int_equal(eng_parse_fen("B:W21,22:B1", &far, NULL, 0), 0);
    mt_view v;
    assert_int_equal(mt_lookup(t, &far, &v), MT_EINVAL);
    assert_int_equal(mt_parents(t, &far, NULL, 0), 0);
    mt_close(t); /* and its store */
    unsigned char *after = slurp(dm, &n1);
    assert_int_equal(n0, n1);
    assert_memory_equal(before, after, n0);
    free(before);
    free(after);
    free(rw.v);
    free(ro.v);
    rm_rf(dir);
}

/* ---- the line from the root --------------------------------------------------- */

/* The plies from the root to p, going down through the tree (breadth
 * first over expanded nodes); -1 when unreachable. */
static int
depth_down(mt_tree *t, const eng_pos *root, const eng_pos *p)
{
    size_t cap = 1 << 16, head = 0, tail = 0;
    eng_pos *q = malloc(cap * sizeof *q);
    int *d = malloc(cap * sizeof *d);
    q[tail] = *root;
    d[tail++] = 0;
    int found = -1;
    while (head < tail && found < 0) {
        eng_pos x = q[head];
        int dx = d[head++];
        if (eng_equal(&x, p)) {
            found = dx;
            break;
        }
        mt_view v;
        if (mt_lookup(t, &x, &v) || !v.expanded)
            continue;
        eng_movelist ml;
        eng_generate(&x, &ml, ENG_DUPS_MERGE);
        for (int m = 0; m < ml.n && tail < cap; m++) {
            eng_make(&x, &ml.m[m], &q[tail]);
            d[tail++] = dx + 1;
        }
    }
    free(q);
    free(d);
    return found;
}

typedef struct pick_arg {
    eng_pos pos[8];
    int n;
} pick_arg;

static int
pick_leaves(const mt_view *v, void *arg)
{
    pick_arg *a = arg;
    if (!v->expanded && a->n < 8 && v->pos.bm % 7 == 3)
        a->pos[a->n++] = v->pos;
    return 0;
}

static void
test_line_is_shortest(void **state)
{
    (void)state;
    char dir[256], tdir[300], err[512];
    assert_non_null(test_tmpdir(dir, sizeof dir, "webline"));
    snprintf(tdir, sizeof tdir, "%s", dir); /* the state: one environment */
    pst_env *st;
    mt_tree *t = start_tree(tdir, 60, &st);
    eng_pos start;
    eng_start(&start);
    struct event_base *base = event_base_new();
    web_server *w;
    web_opts o = {.port = 0, .name = "test", .root_checked = -1};
    assert_int_equal(web_start(base, t, st, NULL, &o, &w, err, sizeof err), 0);
    web_refresh(w);
    pick_arg pa = {.n = 0};
    mt_each(t, pick_leaves, &pa);
    assert_true(pa.n >= 3);
    web_line *line = malloc(sizeof *line);
    for (int i = 0; i < pa.n; i++) {
        assert_int_equal(web_line_get(w, &pa.pos[i], NULL, line, err, sizeof err), 0);
        assert_true(line->known);
        assert_int_equal(line->n, depth_down(t, &start, &pa.pos[i]));
        /* the moves replay to it */
        eng_pos cur = start;
        for (int k = 0; k < line->n; k++) {
            eng_move m;
            assert_int_equal(eng_parse_move(&cur, line->move[k], &m, NULL, 0), 0);
            eng_make(&cur, &m, &cur);
        }
        assert_true(eng_equal(&cur, &pa.pos[i]));
    }
    /* a line given as text is taken as it is; a bad move is named */
    assert_int_equal(web_line_get(w, NULL, "11-15,23-19 8-11", line, err, sizeof err), 0);
    assert_int_equal(line->n, 3);
    assert_string_equal(line->move[2], "8-11");
    assert_int_equal(web_line_get(w, NULL, "11-15,23-18,11-16", line, err, sizeof err), -1);
    assert_non_null(strstr(err, "move 3 '11-16'"));
    free(line);
    web_free(w);
    event_base_free(base);
    mt_close(t); /* and its store */
    rm_rf(dir);
}

/* The body of an evbuffer as a string (NUL added). */
static const char *
body_of(struct evbuffer *b)
{
    evbuffer_add(b, "", 1);
    return (const char *)evbuffer_pullup(b, -1);
}

/* ---- the proof as PDN ------------------------------------------------------------- */

/* Moves seen from each position, to check that the defender's replies
 * are all there. */
typedef struct seen {
    eng_pos pos[4096];
    uint32_t moves[4096][8]; /* a bit per move index (up to 256 moves) */
    int n;
} seen;

static void
seen_add(seen *s, const eng_pos *p, int idx)
{
    int i = 0;
    while (i < s->n && !eng_equal(&s->pos[i], p))
        i++;
    if (i == s->n) {
        assert_true(s->n < 4096);
        s->pos[s->n] = *p;
        memset(s->moves[s->n], 0, sizeof s->moves[0]);
        s->n++;
    }
    s->moves[i][idx / 32] |= 1u << (idx % 32);
}

/* Replays a PDN game (the tags already skipped) from root: every move
 * legal; every "database: V for S" comment the database's value at the
 * position it follows. RETURN the moves played. */
static int
replay(const char *text, const eng_pos *root, const egdb *db, seen *s, int defender)
{
    eng_pos stack_cur[512], stack_prev[512];
    int sp = 0, moves = 0;
    eng_pos cur = *root, prev = *root;
    const char *p = text;
    while (*p) {
        if (*p == '{') {
            const char *e = strchr(p, '}');
            assert_non_null(e);
            char note[300];
            snprintf(note, sizeof note, "%.*s", (int)(e - p - 1), p + 1);
            char val[16], side[16];
            if (sscanf(note, "database: %15s for %15s", val, side) == 2) {
                int v = egdb_probe(db, &cur);
                assert_true(v >= 0);
                assert_string_equal(val, prv_bound_word(eng_bound_exact(egdb_outcome(v))));
                assert_string_equal(side, cur.stm == ENG_BLACK ? "Black" : "White");
            }
            p = e + 1;
        } else if (*p == '(') {
            assert_true(sp < 512);
            stack_cur[sp] = cur;
            stack_prev[sp++] = prev;
            cur = prev; /* an alternative to the last move */
            p++;
        } else if (*p == ')') {
            assert_true(sp > 0);
            cur = stack_cur[--sp];
            prev = stack_prev[sp];
            p++;
        } else if (*p == ' ' || *p == '\n' || *p == '*') {
            p++;
        } else {
            char tok[64];
            int len = 0;
            while (p[len] && !strchr(" \n(){}", p[len]) && len < 63)
                len++;
            snprintf(tok, sizeof tok, "%.*s", len, p);
            p += len;
            if (strchr(tok, '.')) /* a move number */
                continue;
            if (!strcmp(tok, "1-0") || !strcmp(tok, "0-1") || !strcmp(tok, "1/2-1/2"))
                continue; /* the game's result */
            eng_move m;
            char err[300];
            if (eng_parse_move(&cur, tok, &m, err, sizeof err))
                fail_msg("move '%s' at move %d: %s", tok, moves + 1, err);
            if (cur.stm == defender) {
                eng_movelist ml;
                eng_generate(&cur, &ml, ENG_DUPS_MERGE);
                for (int i = 0; i < ml.n; i++)
                    if (ml.m[i].from == m.from && ml.m[i].to == m.to &&
                        ml.m[i].captured == m.captured)
                        seen_add(s, &cur, i);
            }
            prev = cur;
            eng_make(&cur, &m, &cur);
            moves++;
        }
    }
    assert_int_equal(sp, 0);
    return moves;
}

static void
test_proof_pdn_replays(void **state)
{
    (void)state;
    const char *d = test_db_dir();
    assert_non_null(d);
    char dir[256], tdir[300], err[512];
    egdb *db4, *full;
    assert_int_equal(egdb_open(d, 4, (size_t)32 << 20, &db4, err, sizeof err), 0);
    assert_int_equal(egdb_open(d, 0, (size_t)32 << 20, &full, err, sizeof err), 0);
    assert_non_null(test_tmpdir(dir, sizeof dir, "webpdn"));
    snprintf(tdir, sizeof tdir, "%s", dir); /* the state: one environment */
    pst_env *st;
    /* a 5-piece win, proved through the tree as a worker proves it: df-pn
     * over the 4-piece databases into the worker's store, the proof
     * gathered (padm_collect) and admitted into the state's store */
    eng_pos root;
    assert_int_equal(eng_parse_fen("W:W30,31,K19:B9,K12", &root, NULL, 0), 0);
    mt_create cr = {.root = root,
                    .goal = MT_GOAL_VALUE,
                    .db_pieces = 4,
                    .job_ms = 1000,
                    .h0 = 200,
                    .h_step = 200,
                    .seed = "31-26"};
    mt_tree *t;
    assert_int_equal(mt_open(tdir, &cr, db4, &t, err, sizeof err), 0);
    st = mt_store(t);
    char wdir[320];
    snprintf(wdir, sizeof wdir, "%s/worker", dir);
    pst_env *wst;
    assert_int_equal(pst_open(wdir, 0, &wst, err, sizeof err), 0);
    for (int k = 0; k < 20 && !mt_done(t); k++) {
        mt_job j;
        assert_int_equal(mt_pick(t, &j, err, sizeof err), MT_PICK_JOB);
        prv_opts po = {.db = db4,
                       .db_pieces = 4,
                       .store = wst,
                       .question = &j.q,
                       .tt_bytes = (size_t)16 << 20};
        prv_result r;
        assert_int_equal(prv_solve(&j.pos, &po, &r, err, sizeof err), 0);
        padm_items items = {0};
        if (r.bound != ENG_LW)
            assert_int_equal(padm_collect(wst, db4, &j.pos, &items, err, sizeof err), 0);
        assert_int_equal(mt_result(t, j.id, r.bound, r.complete, 0, 0, r.nodes, 1, items.v, items.n,
                                   0, err, sizeof err),
                         0);
        padm_items_free(&items);
    }
    pst_close(wst);
    assert_true(mt_done(t));
    mt_close(t); /* and its store */
    assert_int_equal(mt_open_ro(tdir, db4, &t, err, sizeof err), 0);
    st = mt_store(t);
    struct event_base *base = event_base_new();
    web_server *w;
    web_opts o = {.port = 0, .name = "test", .root_checked = -1};
    assert_int_equal(web_start(base, t, st, db4, &o, &w, err, sizeof err), 0);
    web_refresh(w);
    struct evbuffer *b = evbuffer_new();
    assert_int_equal(web_export_proof(w, &root, 200000, b, err, sizeof err), 200);
    evbuffer_add(b, "", 1);
    const char *pdn = (const char *)evbuffer_pullup(b, -1);
    assert_non_null(strstr(pdn, "[Event \"proof: White wins\"]"));
    assert_non_null(strstr(pdn, "[FEN \"W:W30,31,K19:B9,K12\"]"));
    assert_null(strstr(pdn, "this export stops"));
    assert_null(strstr(pdn, "no record"));
    const char *body = strstr(pdn, "\n\n");
    assert_non_null(body);
    seen *s = calloc(1, sizeof *s);
    int moves = replay(body, &root, full, s, ENG_BLACK);
    assert_true(moves > 10);
    /* every position where Black (the defender) moved: every reply */
    for (int i = 0; i < s->n; i++) {
        eng_movelist ml;
        eng_generate(&s->pos[i], &ml, ENG_DUPS_MERGE);
        for (int m = 0; m < ml.n; m++)
            assert_true(s->moves[i][m / 32] >> (m % 32) & 1);
    }
    /* the same export cut short says where */
    evbuffer_drain(b, evbuffer_get_length(b));
    assert_int_equal(web_export_proof(w, &root, 5, b, err, sizeof err), 200);
    evbuffer_add(b, "", 1);
    assert_non_null(strstr((const char *)evbuffer_pullup(b, -1), "this export stops at 5 moves"));
    /* a settled proof's PDN says who wins (White, to move: 1-0), not "*" */
    pdn = (const char *)evbuffer_pullup(b, -1);
    assert_non_null(strstr(pdn, "[Result \"1-0\"]"));
    assert_null(strstr(pdn, "[Result \"*\"]"));
    /* a settled proof has no open leaf to list */
    mt_view hard[20], fly[8];
    size_t nhard = 99;
    web_leaves(w, hard, 20, &nhard, fly, 8);
    assert_int_equal(nhard, 0);
    /* the checker on a position with nothing stored claims no value */
    eng_pos none;
    assert_int_equal(eng_parse_fen("B:W21,22:B1", &none, NULL, 0), 0);
    evbuffer_drain(b, evbuffer_get_length(b));
    assert_int_equal(web_api_check(w, &none, b, err, sizeof err), 200);
    const char *chk = body_of(b);
    assert_non_null(strstr(chk, "\"status\":\"nothing stored\",\"bound\":null,\"value\":null"));
    assert_null(strstr(chk, "loss"));
    /* the root (White proves): its proving move, and a main line that
     * plays to a database leaf; a Black position after it: no proving
     * move, because White proves there */
    evbuffer_drain(b, evbuffer_get_length(b));
    assert_int_equal(web_api_node(w, &root, NULL, b, err, sizeof err), 200);
    const char *node = body_of(b);
    assert_null(strstr(node, "\"proving\":null"));
    assert_non_null(strstr(node, "\"main_line\":[{\"move\":"));
    assert_non_null(strstr(node, "\"main_line_end\":\"a database position\""));
    eng_pos after;
    eng_move first;
    web_status rs;
    web_status_of(w, &root, &rs);
    assert_int_equal(web_proving_move(w, &rs, &first), 1);
    eng_make(&root, &first, &after);
    evbuffer_drain(b, evbuffer_get_length(b));
    assert_int_equal(web_api_node(w, &after, NULL, b, err, sizeof err), 200);
    assert_non_null(strstr(body_of(b), "\"proving_note\":\"none: White proves here, and every "
                                       "Black move is refuted\""));
    free(s);
    evbuffer_free(b);
    web_free(w);
    event_base_free(base);
    mt_close(t); /* and its store */
    egdb_close(db4);
    egdb_close(full);
    rm_rf(dir);
}

/* ---- labels that must not say the opposite ----------------------------------------------- */

/*
 * Issue 41, part 5: a leaf counted provisionally by the threshold (its
 * dn 0 because the attacker's score is below -h) is "counted disproven"
 * for the attacker, whoever moves at the page; the hardest open leaves
 * leave it out; a position where nothing is proven yet says so rather
 * than that its side to move is not proving. The start position, two
 * jobs answered with scores past h (re-jobs allowed, so the leaves stay
 * leaves): one below -h for the attacker, one above.
 */
static void
test_provisional_labels(void **state)
{
    (void)state;
    char dir[256], tdir[300], err[512];
    assert_non_null(test_tmpdir(dir, sizeof dir, "weblabels"));
    snprintf(tdir, sizeof tdir, "%s", dir); /* the state: one environment */
    pst_env *st;
    mt_create cr = {.goal = MT_GOAL_VALUE,
                    .job_ms = 1000,
                    .job_max_ms = 8000,
                    .h0 = 200,
                    .h_step = 200,
                    .no_root_jobs = 1};
    eng_start(&cr.root);
    mt_tree *t;
    assert_int_equal(mt_open(tdir, &cr, NULL, &t, err, sizeof err), 0);
    st = mt_store(t);
    eng_pos leaf[2];
    for (int k = 0; k < 2; k++) {
        mt_job j;
        assert_int_equal(mt_pick(t, &j, err, sizeof err), MT_PICK_JOB);
        leaf[k] = j.pos;
        /* k 0: the attacker 5 men behind (dn 0); k 1: 5 men ahead (pn 0) */
        int for_attacker = k == 0 ? -500 : 500;
        int score = j.pos.stm == j.q.attacker ? for_attacker : -for_attacker;
        assert_int_equal(mt_result(t, j.id, ENG_LW, 0, score, 6, 7, 9, NULL, 0, 0, err, sizeof err),
                         0);
    }
    struct event_base *base = event_base_new();
    web_server *w;
    web_opts o = {.port = 0, .name = "test", .root_checked = -1};
    assert_int_equal(web_start(base, t, st, NULL, &o, &w, err, sizeof err), 0);
    web_refresh(w);
    const char *att = w->st.q.attacker == ENG_BLACK ? "Black" : "White";
    eng_pos root;
    eng_start(&root);
    for (int k = 0; k < 2; k++) {
        web_status s;
        web_status_of(w, &leaf[k], &s);
        assert_int_equal(s.provisional, k == 0 ? -1 : 1); /* the question's, as web.h says */
        /* the root's moves on the overview: the move to the leaf, its value cell */
        eng_movelist ml;
        eng_generate(&root, &ml, ENG_DUPS_MERGE);
        char mv[ENG_MOVE_STR_MAX] = "";
        for (int i = 0; i < ml.n; i++) {
            eng_pos c;
            eng_make(&root, &ml.m[i], &c);
            if (eng_equal(&c, &leaf[k]))
                eng_format_move(&ml.m[i], mv, sizeof mv);
        }
        if (!mv[0])
            continue; /* a leaf deeper than the root's moves: the JSON check below holds */
        struct evbuffer *b = evbuffer_new();
        web_page_overview(w, b);
        char want[300];
        snprintf(want, sizeof want, ">%s</a></td><td class='l'>open: counted %s for %s (%s's score",
                 mv, k == 0 ? "disproven" : "proven", att, att);
        const char *html = body_of(b);
        if (!strstr(html, want))
            fail_msg("the overview has no '%s'", want);
        evbuffer_free(b);
    }
    /* the hardest open leaves: neither of the two (decided for the search) */
    mt_view hard[20], fly[8];
    size_t nhard;
    web_leaves(w, hard, 20, &nhard, fly, 8);
    assert_true(nhard > 0);
    for (size_t i = 0; i < nhard; i++) {
        assert_false(eng_equal(&hard[i].pos, &leaf[0]));
        assert_false(eng_equal(&hard[i].pos, &leaf[1]));
        assert_true(hard[i].pn != 0 && hard[i].dn != 0);
    }
    /* the root: nothing proven, so no proving move - and it says why */
    struct evbuffer *b = evbuffer_new();
    assert_int_equal(web_api_node(w, &root, NULL, b, err, sizeof err), 200);
    const char *json = body_of(b);
    assert_non_null(
        strstr(json, "\"proving\":null,\"proving_note\":\"none yet: nothing is proven"));
    assert_null(strstr(json, "not proving here"));
    /* the overview offers no PDN of a proof that does not exist */
    evbuffer_drain(b, evbuffer_get_length(b));
    web_page_overview(w, b);
    const char *html = body_of(b);
    assert_null(strstr(html, "href='/export/proof.pdn'"));
    /* the charts: a second series dashed, so that a line on another stays seen */
    assert_non_null(strstr(html, "stroke-dasharray='7 4'"));
    /* no sentence cut off: the threshold's explanation ends */
    assert_non_null(strstr(html, "h rises when the root is decided only provisionally, so that "
                                 "no answer rests on a score"));
    evbuffer_free(b);
    web_free(w);
    event_base_free(base);
    mt_close(t); /* and its store */
    rm_rf(dir);
}

/* ---- scores in words --------------------------------------------------------------- */

static void
test_score_text(void **state)
{
    (void)state;
    char buf[300];
    web_score_text(125, "Black", buf, sizeof buf);
    assert_string_equal(buf, "Black ahead by 1.25 men: heuristic score +125 (hundredths of a "
                             "man; not a proof)");
    web_score_text(-40, "White", buf, sizeof buf);
    assert_string_equal(buf, "White behind by 0.40 men: heuristic score -40 (hundredths of a "
                             "man; not a proof)");
    web_score_text(0, "White", buf, sizeof buf);
    assert_string_equal(buf, "level for White: heuristic score 0 (hundredths of a man; not a "
                             "proof)");
    web_score_text(29879, "White", buf, sizeof buf);
    assert_string_equal(buf, "win for White, proven by alpha-beta: score +29879 = 30000 - 121, "
                             "its lines end within 121 plies (a database win or loss counts "
                             "100)");
    web_score_text(-29891, "Black", buf, sizeof buf);
    assert_string_equal(buf, "loss for Black, proven by alpha-beta: score -29891 = -(30000 - "
                             "109), its lines end within 109 plies (a database win or loss "
                             "counts 100)");
}

/* The status page's cookie rests on HMAC-SHA-256 (web/hmac.h): the
 * standards' vectors. FIPS 180-4's examples ("abc", and the 448-bit
 * message that pads into a second block), a million 'a's (many blocks),
 * and RFC 4231's test cases 1, 2 and 6 (a key longer than a block). */
static void
hex32(const uint8_t d[WEB_SHA256_BYTES], char out[65])
{
    for (int i = 0; i < WEB_SHA256_BYTES; i++)
        snprintf(out + 2 * i, 3, "%02x", d[i]);
}

static void
test_hmac_vectors(void **state)
{
    (void)state;
    uint8_t d[WEB_SHA256_BYTES];
    char h[65];
    web_sha256("abc", 3, d);
    hex32(d, h);
    assert_string_equal(h, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    const char *m2 = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
    web_sha256(m2, strlen(m2), d);
    hex32(d, h);
    assert_string_equal(h, "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
    char *mil = malloc(1000000);
    assert_non_null(mil);
    memset(mil, 'a', 1000000);
    web_sha256(mil, 1000000, d);
    free(mil);
    hex32(d, h);
    assert_string_equal(h, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
    uint8_t k1[20];
    memset(k1, 0x0b, sizeof k1);
    web_hmac_sha256(k1, sizeof k1, "Hi There", 8, d);
    hex32(d, h);
    assert_string_equal(h, "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7");
    const char *m = "what do ya want for nothing?";
    web_hmac_sha256("Jefe", 4, m, strlen(m), d);
    hex32(d, h);
    assert_string_equal(h, "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
    uint8_t k6[131];
    memset(k6, 0xaa, sizeof k6);
    m = "Test Using Larger Than Block-Size Key - Hash Key First";
    web_hmac_sha256(k6, sizeof k6, m, strlen(m), d);
    hex32(d, h);
    assert_string_equal(h, "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54");
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_score_text),       cmocka_unit_test(test_open_ro_same_tree),
        cmocka_unit_test(test_line_is_shortest), cmocka_unit_test(test_proof_pdn_replays),
        cmocka_unit_test(test_hmac_vectors),     cmocka_unit_test(test_provisional_labels),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
