/*
 * web_internal.h - what the proof browser's files share. Not a public
 * interface: web.h is the manual.
 *
 * THE LAYERS (each file calls only those below it; tests/deps_check.sh
 * fails the build's tests on a call upwards)
 *   web_live.c  the pages of a running manager (manager.h, mgr_pages)
 *   web.c       the server: address, token and cookie, limits, routes
 *   web_page.c  the HTML pages and their SVG charts
 *   web_api.c   positions and their status, lines, the JSON answers and
 *               the exports
 *   web_text.c  escaping for JSON, HTML and URLs; words for numbers
 *   hmac.c      HMAC-SHA-256, for the cookie (web.c)
 * Below them all: the manager's public headers (manager/tree.h for the
 * tree, manager/manager.h for a running manager), prover/ and egdb/.
 */
#ifndef WEB_WEB_INTERNAL_H
#define WEB_WEB_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "web/web.h"
#include "openings/openings.h"

struct evbuffer;
struct evhttp;

/* ---- constants ------------------------------------------------------ */

#define WEB_SAMPLES_MAX 2048 /* this run's samples kept for the charts */
#define WEB_LINE_MAX 512     /* plies of a line from the root */

/* ---- types ---------------------------------------------------------- */

/* One sample of a running manager (web_sample). */
typedef struct web_point {
    double t; /* seconds of this run */
    double workers, h, per_minute, in_flight;
} web_point;

struct web_server {
    struct event_base *base;
    struct evhttp *http;
    mt_tree *tree;
    pst_env *store;
    const egdb *db;
    int db_pieces; /* the proof's piece count (the databases' leaves) */
    char name[64];
    char state[1024];
    char host[128];
    int port;
    char token[512];
    int need_token;
    int root_checked;
    char check_text[600];
    void (*run)(void *arg, web_run *out);
    void *run_arg;
    web_point *pts;
    size_t npts;
    web_run scratch; /* filled by run() for one request */
    mt_stats st;     /* the tree's figures (web_refresh) */
    double st_at;    /* when they were read (0: never) */
    eng_pos root;
    ops_book *ops; /* the 19 published openings, read at the first /tree (NULL: unread or
                      not found: the page then offers none) */
    int ops_tried;
};

/* A position's status, as the pages and the JSON show it. */
/* Where a position's shown bound comes from (web_status.kind). */
enum web_src {
    WEB_SRC_NONE = 0,
    WEB_SRC_DB,     /* a complete database: a leaf of every proof */
    WEB_SRC_END,    /* no move: the side to move has lost */
    WEB_SRC_STORE,  /* the proof store's admitted record */
    WEB_SRC_TREE,   /* the tree's backed-up bound */
    WEB_SRC_PARTIAL /* a partial database's bound */
};

typedef struct web_status {
    eng_pos pos;
    int in_tree;
    mt_view v;           /* in_tree: the node */
    eng_bound bound;     /* for the side to move */
    int kind;            /* where the bound comes from (WEB_SRC_*): what the code
                            branches on; source is its word for the pages */
    const char *source;  /* "database", "no move", "proof store", "tree",
                            "partial database", "none" */
    const char *checked; /* "database", "no move", "admitted", "not written", "none" */
    int has_record;
    pst_record rec;  /* the store's record (has_record) */
    int provisional; /* +1 / -1: pn or dn is 0 only through the score and h */
    int error;       /* a database or store read failed (message in why) */
    char why[200];
} web_status;

/* A line from the root: the moves and the positions after each. */
typedef struct web_line {
    int n;
    int known; /* 0: no line from the root reaches the position */
    char move[WEB_LINE_MAX][ENG_MOVE_STR_MAX];
    eng_pos pos[WEB_LINE_MAX + 1]; /* pos[0] the root, pos[n] the position */
} web_line;

/* ---- functions: text (web_text.c, the lowest layer) --------------------- */

/* A JSON string (quotes, backslashes and control bytes escaped). */
void web_json_str(struct evbuffer *b, const char *s);
/* A proof or disproof number: the number, or "inf" at MT_INF. */
void web_json_pn(struct evbuffer *b, uint64_t v);
/* Text for HTML (& < > " ' escaped). */
void web_html(struct evbuffer *b, const char *s);
/* A query value for a URL (everything but [A-Za-z0-9-_.~:,] as %XX). */
void web_url(struct evbuffer *b, const char *s);
/* s cut to at most max bytes with "…" where it was cut, in buf (cap at
 * least max + 4); returns buf. For input echoed in a message. */
const char *web_clip(const char *s, size_t max, char *buf, size_t cap);

/* "Black" or "White". */
const char *web_side(int stm);
/* "inf" or the number. */
const char *web_pn_text(uint64_t v, char *buf, size_t cap);

/* ---- functions: positions and the API (web_api.c, above the text) ------ */

/* The status of p (in the tree or not). */
void web_status_of(web_server *w, const eng_pos *p, web_status *s);
/* A score of search.h's scale for who ("Black"), explained: "Black ahead
 * by 1.25 men: heuristic score +125 ...", "win for Black, proven by
 * alpha-beta: ...". */
void web_score_text(int score, const char *who, char *buf, size_t cap);
/* The move the proof takes at s's position (record, else database):
 * 1 and *m, or 0 where the side to move is not the prover. */
int web_proving_move(web_server *w, const web_status *s, eng_move *m);

/* The hardest open leaves (most job time first) into hard (at most
 * khard, *nhard of them) and the nodes in flight into fly (at most
 * kfly); RETURN how many are in flight. O(nodes). */
size_t web_leaves(web_server *w, mt_view *hard, size_t khard, size_t *nhard, mt_view *fly,
                  size_t kfly);

/*
 * web_line_get - the line from the root to p: the moves in text (commas
 * or spaces between them) when they play from the root to p, else the
 * shortest line through the tree's parents. RETURN 0 (line->known says
 * whether one was found); -1 with err naming the bad move.
 */
int web_line_get(web_server *w, const eng_pos *p, const char *text, web_line *line, char *err,
                 size_t errlen);

/* The routes' bodies; each returns the HTTP status and on an error
 * writes the message into err. */
int web_api_node(web_server *w, const eng_pos *p, const char *line, struct evbuffer *b, char *err,
                 size_t errlen);
int web_api_status(web_server *w, struct evbuffer *b);
int web_api_check(web_server *w, const eng_pos *p, struct evbuffer *b, char *err, size_t errlen);
int web_export_line(web_server *w, const eng_pos *p, const char *line, struct evbuffer *b,
                    char *err, size_t errlen);
int web_export_proof(web_server *w, const eng_pos *p, long max_moves, struct evbuffer *b, char *err,
                     size_t errlen);
int web_export_subtree(web_server *w, const eng_pos *p, int depth, struct evbuffer *b, char *err,
                       size_t errlen);

/* ---- functions: pages (web_page.c, above the API) ------------------------ */

void web_page_overview(web_server *w, struct evbuffer *b);
/* The browser; node_json is /api/node's answer for the first position. */
void web_page_tree(web_server *w, struct evbuffer *b, const eng_pos *p, const char *node_json);
/* The 401 page: a form that asks for the token. */
void web_page_login(struct evbuffer *b, const char *path);
/* An error as a page: its title, the message (escaped), a way back
 * and links to the overview and the root's page. */
void web_page_error(struct evbuffer *b, const char *name, int code, const char *reason,
                    const char *msg);

/* ---- functions: the server (web.c, the top) ----------------------------- */

/* Reads the tree's figures (w->st, w->root: once for a served state, at
 * most once a second for a running one) and the run's, for one request. */
void web_refresh(web_server *w);

#endif /* WEB_WEB_INTERNAL_H */
