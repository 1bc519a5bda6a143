/*
 * web.h - the proof browser: HTML pages and a JSON API over HTTP
 * (libevent's evhttp), for people who read a proof or follow one that
 * runs. `checkers serve --state DIR` serves a proof's state directory
 * read-only; `checkers prove --status-port` serves the same pages from
 * the running manager, with its workers and this run's charts besides.
 * docs/web.md tells why it is built this way, with measurements.
 *
 * ROUTES (GET and HEAD only; every other method gets 405)
 *   /                     the overview: the root, goal, result and
 *                         whether the checker accepted it, the question,
 *                         the root's numbers and the threshold h; SVG
 *                         charts over time; the root's moves; the leaves
 *                         in flight and the hardest open leaves, as links;
 *                         the workers. A running proof's page reloads
 *                         itself every 10 s.
 *   /tree?fen=F&line=L    the browser: the board, the line from the root
 *                         as clickable moves, every legal move with its
 *                         child's status, the proving move highlighted.
 *                         Moves load on demand from /api/node; back,
 *                         forward and the arrow keys work. F defaults to
 *                         the root; L (moves from the root, separated by
 *                         commas or spaces) is optional: without it the
 *                         shortest line in the tree is shown.
 *   /api/node?fen=F&line=L   one position and its moves as JSON (below)
 *   /api/status           the proof as JSON (also at /status.json)
 *   /api/check?fen=F      runs the independent checker (prover/check.h)
 *                         from F over the proof store, now: only on a
 *                         served state (a running manager answers 403,
 *                         as the check would stop its event loop)
 *   /export/line.pdn?fen=F&line=L   the line as a PDN game (SetUp, FEN);
 *                         the exports are text/plain, shown by a browser
 *   /export/proof.pdn?fen=F&max=N   the proof below F as a PDN game tree
 *                         with variations (CheckerBoard reads it): where
 *                         the prover moves, the move its record keeps;
 *                         where the defender moves, every reply; each
 *                         position once (a transposition is a comment),
 *                         at most N moves (default 5,000, at most 200,000)
 *   /export/subtree.json?fen=F&depth=D   the tree below F as nested JSON,
 *                         D plies (default 2, at most 12), at most
 *                         200,000 nodes ("truncated": true past them)
 *
 * JSON (docs/web.md has an example of each)
 *   Proof and disproof numbers are numbers, or the string "inf" for
 *   infinity. A position's status: "value" (for its side to move: win,
 *   loss, draw, >=draw, <=draw, unknown), "bound" (LL..LW), "source"
 *   (database, no move, proof store, tree, none), "checked" (how the
 *   checker stands to the value: see STATUS), pn, dn, "provisional"
 *   (+1/-1 when pn or dn is 0 only because the heuristic score is past
 *   h, else 0: the question's, for the attacker, whoever moves at the
 *   position), score and "score_text" (the score explained), in_flight,
 *   jobs, job_ms, job_nodes, expanded, children, parents.
 *   /api/node adds "proving" (the move the proof takes, or null, with
 *   "proving_note" saying why: the other side proves there, or nothing
 *   is proven yet) and "main_line": the moves from the position to the
 *   proof's end (the proving move where the side to move proves, else
 *   the reply whose proof cost the most), each with its FEN, at most 200,
 *   and "main_line_end" (why it ends: a database position, no move, an
 *   open position, a repetition). /api/check with no record for the
 *   position: "status" "nothing stored", "bound" and "value" null.
 *   An error is {"error": {"code", "reason", "message"}} on the /api/
 *   routes and the JSON export; an HTML page with links back on the
 *   others.
 *
 * STATUS: WHAT "CHECKED" SAYS
 *   "database" and "no move" are the checker's own leaves; "admitted":
 *   the proof store's record for the position was proven by the checker
 *   before it was written (prover/admit.h), so the value rests on a
 *   checked proof; "not written": a bound the tree backed up from its
 *   children whose record is not yet in the store (a read-only view of a
 *   state stopped between the two commits; the next `prove` writes it);
 *   "none": nothing is proven. A served state whose root is settled is
 *   checked whole when serve starts (as `checkers tree` does), and
 *   /api/check checks any position on demand.
 *
 * SECURITY
 *   The pages only read: the tree is opened with mt_open_ro and the
 *   store with PST_RDONLY by `serve`. The server binds to 127.0.0.1
 *   unless told otherwise; on any other address it needs a token of at
 *   least WEB_TOKEN_MIN characters, 128 random bits in hex (web_start
 *   refuses to start without one, or with a shorter one). With a token, every
 *   request must carry it: "Authorization: Bearer TOKEN", or the cookie
 *   that a visit to any page with ?token=TOKEN sets (HttpOnly,
 *   SameSite=Strict; the answer is a redirect to the same page without
 *   the token, so that it leaves the address bar; the cookie holds a
 *   keyed hash of the token, never the token: web/hmac.h). A
 *   request without it
 *   gets 401 and a small form that asks for it. Tokens are compared in
 *   constant time and never logged. Plain HTTP carries the token in clear:
 *   beyond a trusted network, reach the page through an SSH tunnel.
 *
 * LIMITS
 *   A request line and headers of at most WEB_MAX_HEADER_BYTES together
 *   (more: 413 from evhttp, and the connection is closed: a slow or huge
 *   header line never holds more than that), at most WEB_MAX_HEADERS
 *   headers (431), a URI of at most WEB_MAX_URI bytes (414), no body;
 *   a connection idle for WEB_TIMEOUT_S seconds is closed. Bad input
 *   (a FEN that does not parse, a move that is not legal, a position
 *   the proof does not hold, a malformed query, a %00 anywhere in the
 *   query) gets 400 or 404 with a message that names what was wrong and
 *   where; input echoed in it is cut with "…".
 *
 * THREAD SAFETY
 *   Everything runs in the caller's event loop (one struct event_base);
 *   the tree, store and databases are read from that thread only.
 */
#ifndef WEB_WEB_H
#define WEB_WEB_H

#include <stddef.h>
#include <stdint.h>

#include "egdb/egdb.h"
#include "engine/engine.h"
#include "manager/manager.h"
#include "manager/tree.h"
#include "prover/store.h"

struct event_base;

/* ---- constants ------------------------------------------------------ */

#define WEB_MAX_HEADER_BYTES 8192 /* request line and headers together */
#define WEB_MAX_HEADERS 64
#define WEB_MAX_URI 4096
#define WEB_TIMEOUT_S 10
#define WEB_MAX_WORKERS MGR_LIVE_WORKERS /* workers listed on the page (all are counted) */
#define WEB_TOKEN_MIN 32                 /* characters of a token beyond loopback (SECURITY) */

/* Error codes (all negative; web_strerror names them). They lie in the
 * web server's own range, -751.. (errors/errors.h lists every module's
 * range): they were -701..-704 until issue 42, the protocol's MGP_E*
 * codes, so that a code passed up could not say which it was. */
enum web_err {
    WEB_OK = 0,
    WEB_EINVAL = -751,   /* a bad address or option */
    WEB_ENOTOKEN = -752, /* an address beyond loopback without a token, or a short one */
    WEB_EBIND = -753,    /* the address cannot be bound */
    WEB_ENOMEM = -754    /* out of memory */
};

/* ---- types ---------------------------------------------------------- */

typedef struct web_server web_server;

/* One worker of a running manager, as the page shows it, and a running
 * manager's figures, filled by web_opts.run on each request: the
 * manager's own description of them (manager.h, mgr_live_get). */
typedef mgr_worker_view web_worker;
typedef mgr_live web_run;

typedef struct web_opts {
    const char *listen; /* "HOST:PORT" (HOST an IP address); NULL: 127.0.0.1 */
    int port;           /* with listen NULL: the port (0: any free one) */
    const char *token;  /* the secret every request must give; NULL: none,
                           which only a loopback address allows */
    const char *name;   /* the program, for messages ("checkers serve") */
    const char *state;  /* the state directory, shown on the pages */
    /* what the checker said of the root's whole proof at start: -1 not
     * run, 0 refused, 1 valid; check_text says it in words */
    int root_checked;
    const char *check_text;
    /* a running manager: its figures (called on each request) */
    void (*run)(void *arg, web_run *out);
    void *run_arg;
} web_opts;

/* ---- functions ------------------------------------------------------ */

/*
 * web_start - serves the pages of tree (with its store and databases,
 * which must outlive the server) in base's event loop.
 * PARAMETERS
 *   tree, store: the proof (read from base's thread only); db may be
 *   NULL when the proof uses no databases. o is copied.
 * RETURN 0 and *out; WEB_EINVAL (bad address), WEB_ENOTOKEN (beyond
 * loopback without a token), WEB_EBIND, WEB_ENOMEM, with err saying
 * which and where.
 */
int web_start(struct event_base *base, mt_tree *tree, pst_env *store, const egdb *db,
              const web_opts *o, web_server **out, char *err, size_t errlen);

/* The port the server listens on, and its address as text ("127.0.0.1"). */
int web_port(const web_server *w);
const char *web_host(const web_server *w);

/* web_sample - a running manager calls it every few seconds: this
 * run's workers, h and jobs a minute go into the charts (kept in
 * memory, thinned to at most 2,048 samples). */
void web_sample(web_server *w, double run_s);

/* Stops serving and frees everything (NULL is fine). */
void web_free(web_server *w);

/* ---- the pages of a running manager (web_live.c) ------------------------ */

/* `checkers prove --status-port`'s options, and the server once started. */
typedef struct web_live {
    const char *listen;     /* HOST:PORT, or NULL: 127.0.0.1:port */
    int port;               /* with listen NULL */
    const char *token_file; /* the pages' token (needed beyond loopback; not the
                               workers': a reader of the proof should not be able
                               to join it as a worker) */
    web_server *w;          /* set while the manager serves the pages */
} web_live;

/*
 * web_live_pages - fills *out with the calls (manager.h, mgr_pages) that
 * serve l's pages from a running manager: the proof browser of this
 * header, with the run's workers and charts besides (read through
 * mgr_live_get). l must outlive the run; messages go to stderr as
 * "checkers prove: ...". Event-loop thread only, as the manager calls it.
 */
void web_live_pages(web_live *l, mgr_pages *out);

const char *web_strerror(int code);

#endif /* WEB_WEB_H */
