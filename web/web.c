/*
 * web.c - the proof browser's server (web.h is the manual): the address
 * and its token, the limits on requests, authentication, and the routes.
 * The pages themselves are in web_page.c, the positions, JSON and
 * exports in web_api.c.
 *
 * OWNS: the web_server (web_internal.h): the evhttp server, the token,
 *   the charts' samples of a running manager, the figures read for a
 *   request (web_refresh).
 * CALLS: the layers below it (web_internal.h, THE LAYERS): web_page.c,
 *   web_api.c, web_text.c, hmac.c; the tree through tree.h (mt_stats_get)
 *   and a running manager's figures through web_opts.run. Called by
 *   web_live.c and by `checkers serve` (cli/serve_cmds.c).
 *
 * Why evhttp's limits and not a parser of our own: evhttp counts the
 * request line and the headers against max_headers_size while it reads
 * them, so an endless header line is cut at that size (the buffer never
 * grows past it) and the connection is closed with 413; what is left to
 * check here (the number of headers, the URI's length, the query) is
 * checked before any work is done for the request.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/queue.h>
#include <sys/socket.h>
#include <time.h>

#include <event2/buffer.h>
#include <event2/event.h>
#include <event2/http.h>
#include <event2/keyvalq_struct.h>
#include <event2/util.h>

#include "web/hmac.h"
#include "web/web_internal.h"

/* ---- constants -------------------------------------------------------- */

#define COOKIE "checkers_token"

/* The query parameters each route takes (anything else is a 400: a
 * misspelt parameter should not be silently ignored). */
static const char *const P_NONE[] = {NULL};
static const char *const P_FEN[] = {"fen", NULL};
static const char *const P_FEN_LINE[] = {"fen", "line", NULL};
static const char *const P_FEN_MAX[] = {"fen", "max", NULL};
static const char *const P_FEN_DEPTH[] = {"fen", "depth", NULL};

/* ---- authentication ---------------------------------------------------------- */

/* Equal strings, in a time that does not depend on where they differ:
 * every byte of the offered token is compared (against the secret's,
 * cycled when it is shorter), and a difference in length counts as one,
 * so that timing tells an attacker neither a matching prefix nor
 * (beyond the offered token's own length) the secret's length. */
static int
same_secret(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    unsigned diff = (unsigned)(la ^ lb);
    for (size_t i = 0; i < la; i++)
        diff |= (unsigned char)a[i] ^ (unsigned char)(lb ? b[i % lb] : 0);
    return diff == 0;
}

/* What the cookie carries: not the token, but HMAC-SHA-256(token, a
 * fixed label), in hex (hmac.h says why): a cookie that leaks lets a
 * browser in, and nothing else - it is no token, neither the page's
 * (Bearer) nor, when one file serves both, the workers'. It is compared
 * in constant time like the token. */
static void
cookie_of(const char *token, char *out, size_t cap)
{
    static const char label[] = "checkers status page cookie 1";
    uint8_t mac[WEB_SHA256_BYTES];
    web_hmac_sha256(token, strlen(token), label, sizeof label - 1, mac);
    size_t o = 0;
    for (size_t i = 0; i < sizeof mac && o + 3 <= cap; i++, o += 2)
        snprintf(out + o, 3, "%02x", mac[i]);
    out[o < cap ? o : cap - 1] = 0;
}

/* The cookie's value in a Cookie header ("a=1; checkers_token=ab; b=2"),
 * copied into out; 0 when there is none. */
static int
cookie_value(const char *hdr, char *out, size_t cap)
{
    const char *p = hdr;
    size_t nlen = strlen(COOKIE);
    while (p && *p) {
        while (*p == ' ' || *p == ';')
            p++;
        if (!strncmp(p, COOKIE, nlen) && p[nlen] == '=') {
            p += nlen + 1;
            size_t n = strcspn(p, ";");
            if (n >= cap)
                return 0;
            memcpy(out, p, n);
            out[n] = 0;
            return 1;
        }
        p = strchr(p, ';');
    }
    return 0;
}

/* Does the request carry the token (header or cookie)? The header is
 * for scripts, the cookie for browsers; a token in the query is taken
 * only to set the cookie (login_redirect), never as the request's own
 * credential, so that addresses with it do not spread. */
static int
authorized(const web_server *w, struct evkeyvalq *in)
{
    const char *a = evhttp_find_header(in, "Authorization");
    if (a && !strncasecmp(a, "Bearer ", 7))
        return same_secret(a + 7, w->token);
    const char *c = evhttp_find_header(in, "Cookie");
    char got[2 * sizeof w->token + 1], want[2 * sizeof w->token + 1];
    if (c && cookie_value(c, got, sizeof got)) {
        cookie_of(w->token, want, sizeof want);
        return same_secret(got, want);
    }
    return 0;
}

/* ---- replies ------------------------------------------------------------------- */

/* Every answer: its type, and what keeps the page to itself - a policy
 * that allows only its own inline script and style and requests to
 * itself (nothing from elsewhere can run in it, nor can it be framed),
 * no guessing of types, no referrer (a FEN and a line would leave with
 * every link), and no caching (a running proof's pages change). */
static void
security_headers(struct evhttp_request *req, const char *type)
{
    struct evkeyvalq *h = evhttp_request_get_output_headers(req);
    evhttp_add_header(h, "Content-Type", type);
    /* nothing from elsewhere: the pages carry their own script and style */
    evhttp_add_header(h, "Content-Security-Policy",
                      "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; "
                      "img-src 'self' data:; connect-src 'self'; form-action 'self'; "
                      "frame-ancestors 'none'");
    evhttp_add_header(h, "X-Content-Type-Options", "nosniff");
    evhttp_add_header(h, "Referrer-Policy", "no-referrer");
    evhttp_add_header(h, "Cache-Control", "no-store");
}

/* The reason phrase of a status (the reply's and the error page's). */
static const char *
reason_of(int code)
{
    switch (code) {
    case 200:
        return "OK";
    case 303:
        return "See Other";
    case 400:
        return "Bad Request";
    case 401:
        return "Unauthorized";
    case 403:
        return "Forbidden";
    case 404:
        return "Not Found";
    case 405:
        return "Method Not Allowed";
    case 414:
        return "URI Too Long";
    case 431:
        return "Request Header Fields Too Large";
    case 500:
        return "Internal Server Error";
    default:
        return "Error";
    }
}

static void
reply(struct evhttp_request *req, int code, const char *type, struct evbuffer *body)
{
    security_headers(req, type);
    const char *why = reason_of(code);
    evhttp_send_reply(req, code, why, body);
}

/*
 * An error in the form its reader takes: JSON for the API and the JSON
 * export ({"error": {"code", "reason", "message"}}), which a script
 * parses as it parses the answer it wanted; an HTML page for everything
 * a browser opens (pages and PDN exports), with the message, a way back
 * and links to the overview and the root. Before, every error was plain
 * text, which the page's own script could only show raw.
 */
static void
reply_error(web_server *w, struct evhttp_request *req, int code, const char *msg)
{
    struct evbuffer *b = evbuffer_new();
    if (!b) {
        evhttp_send_error(req, 500, NULL);
        return;
    }
    const struct evhttp_uri *u = evhttp_request_get_evhttp_uri(req);
    const char *path = u ? evhttp_uri_get_path(u) : NULL;
    size_t pl = path ? strlen(path) : 0;
    int json = path && (!strncmp(path, "/api/", 5) || !strcmp(path, "/status.json") ||
                        (pl >= 5 && !strcmp(path + pl - 5, ".json")));
    if (json) {
        evbuffer_add_printf(b, "{\"error\":{\"code\":%d,\"reason\":\"%s\",\"message\":", code,
                            reason_of(code));
        web_json_str(b, msg);
        evbuffer_add_printf(b, "}}\n");
        reply(req, code, "application/json", b);
    } else {
        web_page_error(b, w->name, code, reason_of(code), msg);
        reply(req, code, "text/html; charset=utf-8", b);
    }
    evbuffer_free(b);
}

/* ---- routes ------------------------------------------------------------------------ */

typedef enum route_id {
    R_OVERVIEW,
    R_TREE,
    R_NODE,
    R_STATUS,
    R_CHECK,
    R_LINE_PDN,
    R_PROOF_PDN,
    R_SUBTREE
} route_id;

static const struct route {
    const char *path;
    route_id id;
    const char *const *params;
} routes[] = {{"/", R_OVERVIEW, P_NONE},
              {"/index.html", R_OVERVIEW, P_NONE},
              {"/tree", R_TREE, P_FEN_LINE},
              {"/api/node", R_NODE, P_FEN_LINE},
              {"/api/status", R_STATUS, P_NONE},
              {"/status.json", R_STATUS, P_NONE},
              {"/api/check", R_CHECK, P_FEN},
              {"/export/line.pdn", R_LINE_PDN, P_FEN_LINE},
              {"/export/proof.pdn", R_PROOF_PDN, P_FEN_MAX},
              {"/export/subtree.json", R_SUBTREE, P_FEN_DEPTH}};

/* A number parameter in [lo, hi]; def when absent. -1 when bad (err
 * names the parameter, what it held and the range): a bad number is
 * refused, not clamped, so that a typo is seen. */
static long
num_param(struct evkeyvalq *q, const char *name, long def, long lo, long hi, char *err,
          size_t errlen)
{
    const char *s = evhttp_find_header(q, name);
    if (!s)
        return def;
    char *end;
    long v = strtol(s, &end, 10);
    if (!*s || *end || v < lo || v > hi) {
        char c[48];
        snprintf(err, errlen, "%s='%s' is not a number from %ld to %ld", name,
                 web_clip(s, 40, c, sizeof c), lo, hi);
        return -1;
    }
    return v;
}

/* The redirect that follows ?token=: the same page, without the token
 * in its address, with the cookie set. 303, so that the browser asks
 * again with GET; the other parameters are written back as they came. */
static void
login_redirect(web_server *w, struct evhttp_request *req, const char *path, struct evkeyvalq *q)
{
    struct evbuffer *loc = evbuffer_new();
    struct evbuffer *b = evbuffer_new();
    if (!loc || !b) {
        evbuffer_free(loc);
        evbuffer_free(b);
        evhttp_send_error(req, 500, NULL);
        return;
    }
    evbuffer_add_printf(loc, "%s", path);
    int n = 0;
    for (struct evkeyval *kv = q->tqh_first; kv; kv = kv->next.tqe_next) {
        if (!strcmp(kv->key, "token"))
            continue;
        evbuffer_add_printf(loc, "%c", n++ ? '&' : '?');
        web_url(loc, kv->key);
        evbuffer_add_printf(loc, "=");
        web_url(loc, kv->value);
    }
    evbuffer_add(loc, "", 1);
    char hex[2 * sizeof w->token + 1], cookie[2 * sizeof w->token + 100];
    cookie_of(w->token, hex, sizeof hex);
    snprintf(cookie, sizeof cookie, COOKIE "=%s; Path=/; HttpOnly; SameSite=Strict", hex);
    struct evkeyvalq *h = evhttp_request_get_output_headers(req);
    evhttp_add_header(h, "Set-Cookie", cookie);
    evhttp_add_header(h, "Location", (const char *)evbuffer_pullup(loc, -1));
    evbuffer_add_printf(b, "signed in\n");
    reply(req, 303, "text/plain; charset=utf-8", b);
    evbuffer_free(loc);
    evbuffer_free(b);
}

/*
 * The position a route is about: ?fen= when given; else, for the routes
 * that take one, the end of ?line= played from the root; else the root.
 * Then the route's body; an error anywhere is the plain-text answer of
 * reply_error with the message that names what was wrong.
 */
static void
serve_route(web_server *w, struct evhttp_request *req, const struct route *r, struct evkeyvalq *q)
{
    char err[600] = "";
    int code = 200;
    const char *type = "application/json";
    struct evbuffer *b = evbuffer_new();
    if (!b) {
        evhttp_send_error(req, 500, NULL);
        return;
    }
    /* the position: ?fen=, else the root */
    eng_pos p;
    const char *fen = evhttp_find_header(q, "fen");
    const char *line = evhttp_find_header(q, "line");
    if (fen) {
        char perr[300];
        if (eng_parse_fen(fen, &p, perr, sizeof perr)) {
            char c[128];
            snprintf(err, sizeof err, "fen='%s': %s", web_clip(fen, 120, c, sizeof c), perr);
            code = 400;
        }
    } else if (line && (r->id == R_TREE || r->id == R_NODE || r->id == R_LINE_PDN)) {
        /* a line alone: the position it leads to */
        web_line *wl = malloc(sizeof *wl);
        if (!wl) {
            code = 500;
            snprintf(err, sizeof err, "out of memory");
        } else if (web_line_get(w, NULL, line, wl, err, sizeof err)) {
            code = 400;
        } else {
            p = wl->pos[wl->n];
        }
        free(wl);
    } else {
        p = w->root;
    }
    if (code == 200) {
        switch (r->id) {
        case R_OVERVIEW:
            type = "text/html; charset=utf-8";
            web_page_overview(w, b);
            break;
        case R_TREE: {
            struct evbuffer *j = evbuffer_new();
            code = j ? web_api_node(w, &p, line, j, err, sizeof err) : 500;
            if (code == 200) {
                evbuffer_add(j, "", 1);
                type = "text/html; charset=utf-8";
                web_page_tree(w, b, &p, (const char *)evbuffer_pullup(j, -1));
            }
            evbuffer_free(j);
            break;
        }
        case R_NODE:
            code = web_api_node(w, &p, line, b, err, sizeof err);
            break;
        case R_STATUS:
            code = web_api_status(w, b);
            break;
        case R_CHECK:
            if (w->run) {
                code = 403;
                snprintf(err, sizeof err,
                         "a running manager does not run the checker for a page (it would stop "
                         "its event loop): use `checkers proof check --state %.300s`, or "
                         "`checkers serve` once it stops",
                         w->state);
            } else {
                code = web_api_check(w, &p, b, err, sizeof err);
            }
            break;
        case R_LINE_PDN:
            type = "text/plain; charset=utf-8"; /* shown, not downloaded */
            code = web_export_line(w, &p, line, b, err, sizeof err);
            break;
        case R_PROOF_PDN: {
            type = "text/plain; charset=utf-8";
            long max = num_param(q, "max", 5000, 1, 200000, err, sizeof err);
            code = max < 0 ? 400 : web_export_proof(w, &p, max, b, err, sizeof err);
            break;
        }
        case R_SUBTREE: {
            long d = num_param(q, "depth", 2, 0, 12, err, sizeof err);
            code = d < 0 ? 400 : web_export_subtree(w, &p, (int)d, b, err, sizeof err);
            break;
        }
        }
    }
    if (code == 200) {
        if (r->id == R_LINE_PDN || r->id == R_PROOF_PDN) {
            struct evkeyvalq *h = evhttp_request_get_output_headers(req);
            evhttp_add_header(h, "Content-Disposition",
                              r->id == R_LINE_PDN ? "inline; filename=\"line.pdn\""
                                                  : "inline; filename=\"proof.pdn\"");
        }
        reply(req, 200, type, b);
    } else {
        reply_error(w, req, code, err[0] ? err : "failed");
    }
    evbuffer_free(b);
}

/* The request's form, checked before anything else is done for it: the
 * method, the number of headers, the URI's length, the query (a %00 in
 * it, then its form), parsed into q (which the caller clears). *path is
 * the request's path ("/" when empty). RETURN 0, or -1 when the request
 * has been answered with an error. */
static int
request_form(web_server *w, struct evhttp_request *req, const char **path, struct evkeyvalq *q)
{
    enum evhttp_cmd_type cmd = evhttp_request_get_command(req);
    if (cmd != EVHTTP_REQ_GET && cmd != EVHTTP_REQ_HEAD) {
        evhttp_add_header(evhttp_request_get_output_headers(req), "Allow", "GET, HEAD");
        reply_error(w, req, 405, "the pages are read-only: GET and HEAD only");
        return -1;
    }
    struct evkeyvalq *in = evhttp_request_get_input_headers(req);
    int nh = 0;
    for (struct evkeyval *kv = in->tqh_first; kv; kv = kv->next.tqe_next)
        nh++;
    if (nh > WEB_MAX_HEADERS) {
        char msg[120];
        snprintf(msg, sizeof msg, "%d headers: at most %d are read", nh, WEB_MAX_HEADERS);
        reply_error(w, req, 431, msg);
        return -1;
    }
    const char *uri = evhttp_request_get_uri(req);
    if (strlen(uri) > WEB_MAX_URI) {
        char msg[120];
        snprintf(msg, sizeof msg, "a URI of %zu bytes: at most %d", strlen(uri), WEB_MAX_URI);
        reply_error(w, req, 414, msg);
        return -1;
    }
    const struct evhttp_uri *u = evhttp_request_get_evhttp_uri(req);
    const char *query = u ? evhttp_uri_get_query(u) : NULL;
    *path = u ? evhttp_uri_get_path(u) : NULL;
    if (!*path || !**path)
        *path = "/";
    /* a %00 would be decoded into a NUL that ends the value early: the
     * rest of the parameter would be dropped unseen (fen=B:W1%00junk
     * read as B:W1), so it is refused before the query is parsed */
    if (query && strstr(query, "%00")) {
        char msg[200], c[88];
        snprintf(msg, sizeof msg, "query '%s': a NUL byte (%%00) in a parameter",
                 web_clip(query, 80, c, sizeof c));
        reply_error(w, req, 400, msg);
        return -1;
    }
    if (query && evhttp_parse_query_str(query, q)) {
        char msg[200], c[88];
        snprintf(msg, sizeof msg,
                 "malformed query '%s': expected name=value pairs separated by '&'",
                 web_clip(query, 80, c, sizeof c));
        reply_error(w, req, 400, msg);
        return -1;
    }
    return 0;
}

/* The token, where one is needed: a ?token= that matches is answered
 * with the cookie and a redirect (login_redirect); a request without the
 * header or the cookie gets 401 and the form that asks for it. RETURN 0
 * when the request may go on, -1 when it has been answered. */
static int
request_auth(web_server *w, struct evhttp_request *req, const char *path, struct evkeyvalq *q)
{
    if (!w->need_token)
        return 0;
    const char *t = evhttp_find_header(q, "token");
    if (t && same_secret(t, w->token)) {
        login_redirect(w, req, path, q);
        return -1;
    }
    if (authorized(w, evhttp_request_get_input_headers(req)))
        return 0;
    struct evbuffer *b = evbuffer_new();
    if (b) {
        web_page_login(b, path);
        evhttp_add_header(evhttp_request_get_output_headers(req), "WWW-Authenticate",
                          "Bearer realm=\"checkers\"");
        reply(req, 401, "text/html; charset=utf-8", b);
        evbuffer_free(b);
    } else {
        evhttp_send_error(req, 500, NULL);
    }
    return -1;
}

/* The route of path, with its parameters checked (a misspelt one is a
 * 400, not ignored). RETURN the route, or NULL when the request has
 * been answered (404 or 400). */
static const struct route *
request_route(web_server *w, struct evhttp_request *req, const char *path, struct evkeyvalq *q)
{
    const struct route *r = NULL;
    for (size_t i = 0; i < sizeof routes / sizeof routes[0]; i++)
        if (!strcmp(path, routes[i].path))
            r = &routes[i];
    if (!r) {
        char msg[300], c[88];
        snprintf(msg, sizeof msg,
                 "no page '%s' (pages: /, /tree, /api/node, /api/status, /api/check, "
                 "/export/line.pdn, /export/proof.pdn, /export/subtree.json)",
                 web_clip(path, 80, c, sizeof c));
        reply_error(w, req, 404, msg);
        return NULL;
    }
    for (struct evkeyval *kv = q->tqh_first; kv; kv = kv->next.tqe_next) {
        int ok = !strcmp(kv->key, "token") && w->need_token;
        for (const char *const *p = r->params; *p && !ok; p++)
            ok = !strcmp(kv->key, *p);
        if (!ok) {
            char msg[300], c[48];
            int off = snprintf(msg, sizeof msg, "%s takes no parameter '%s' (it takes:", path,
                               web_clip(kv->key, 40, c, sizeof c));
            for (const char *const *p = r->params; *p && off < (int)sizeof msg - 40; p++)
                off += snprintf(msg + off, sizeof msg - (size_t)off, " %s", *p);
            snprintf(msg + off, sizeof msg - (size_t)off, "%s)", r->params[0] ? "" : " none");
            reply_error(w, req, 400, msg);
            return NULL;
        }
    }
    return r;
}

/*
 * Every request, in an order that does the least work for the worst
 * input: the method, the number of headers, the URI's length, the
 * query's form (request_form), then the token (request_auth: before
 * anything of the proof is read or told, even which pages exist), then
 * the route and its parameters (request_route). evhttp has already
 * refused what is too long to read (WEB_MAX_HEADER_BYTES).
 */
static void
on_request(struct evhttp_request *req, void *arg)
{
    web_server *w = arg;
    const char *path = "/";
    struct evkeyvalq q;
    TAILQ_INIT(&q);
    const struct route *r = NULL;
    if (request_form(w, req, &path, &q) == 0 && request_auth(w, req, path, &q) == 0 &&
        (r = request_route(w, req, path, &q)) != NULL) {
        web_refresh(w);
        serve_route(w, req, r, &q);
    }
    evhttp_clear_headers(&q);
}

/* ---- the server ---------------------------------------------------------------------- */

/*
 * The address is parsed before anything is made, so that an address
 * beyond loopback without a token is refused before a socket exists:
 * there is no moment at which the pages are open to the network. The
 * address is an IP address (as --listen takes it for the workers): a
 * name could resolve to several, some of them not loopback. RETURN 0
 * and *ss; WEB_EINVAL or WEB_ENOTOKEN with err saying why.
 */
static int
parse_address(const web_opts *o, struct sockaddr_storage *ss, char *err, size_t errlen)
{
    const char *spec = o->listen;
    char def[64];
    if (!spec) {
        snprintf(def, sizeof def, "127.0.0.1:%d", o->port);
        spec = def;
    }
    int sslen = sizeof *ss;
    /* libevent refuses port 0 ("any free port"): parsed as port 1, then 0 */
    char any[160];
    size_t sl = strlen(spec);
    int port0 = sl >= 2 && sl < sizeof any && !strcmp(spec + sl - 2, ":0");
    if (port0) {
        snprintf(any, sizeof any, "%.*s:1", (int)(sl - 2), spec);
    }
    if (evutil_parse_sockaddr_port(port0 ? any : spec, (struct sockaddr *)ss, &sslen)) {
        eng_errf(err, errlen, "bad address '%s' (expected HOST:PORT, HOST an IP address)", spec);
        return WEB_EINVAL;
    }
    if (port0 && ss->ss_family == AF_INET6)
        ((struct sockaddr_in6 *)ss)->sin6_port = 0;
    else if (port0)
        ((struct sockaddr_in *)ss)->sin_port = 0;
    int loopback = 0;
    if (ss->ss_family == AF_INET)
        loopback = (ntohl(((struct sockaddr_in *)ss)->sin_addr.s_addr) >> 24) == 127;
    else if (ss->ss_family == AF_INET6)
        loopback = IN6_IS_ADDR_LOOPBACK(&((struct sockaddr_in6 *)ss)->sin6_addr);
    if (!loopback && (!o->token || !o->token[0])) {
        eng_errf(err, errlen,
                 "serving the pages on %s (beyond loopback) needs a token (--token-file): anyone "
                 "on the network could read the proof otherwise",
                 spec);
        return WEB_ENOTOKEN;
    }
    if (!loopback && strlen(o->token) < WEB_TOKEN_MIN) {
        eng_errf(err, errlen,
                 "serving the pages on %s (beyond loopback) needs a token of at least %d "
                 "characters (128 random bits; this one has %zu): make one with "
                 "`od -An -N16 -tx1 /dev/urandom | tr -d ' \\n' > FILE`",
                 spec, WEB_TOKEN_MIN, strlen(o->token));
        return WEB_ENOTOKEN;
    }
    return 0;
}

/* The server's own copy of o (its texts, token and callbacks). RETURN
 * 0, or WEB_EINVAL (a token too long) / WEB_ENOMEM with err set. */
static int
copy_opts(web_server *w, const web_opts *o, char *err, size_t errlen)
{
    snprintf(w->name, sizeof w->name, "%s", o->name ? o->name : "checkers");
    snprintf(w->state, sizeof w->state, "%s", o->state ? o->state : "");
    if (o->token && o->token[0]) {
        if (strlen(o->token) >= sizeof w->token) {
            eng_errf(err, errlen, "the token is longer than %zu bytes", sizeof w->token - 1);
            return WEB_EINVAL;
        }
        snprintf(w->token, sizeof w->token, "%s", o->token);
        w->need_token = 1;
    }
    w->root_checked = o->root_checked;
    snprintf(w->check_text, sizeof w->check_text, "%s", o->check_text ? o->check_text : "");
    w->run = o->run;
    w->run_arg = o->run_arg;
    if (o->run && !(w->pts = calloc(WEB_SAMPLES_MAX, sizeof *w->pts)))
        return WEB_ENOMEM;
    return 0;
}

/* evhttp on ss, with the limits of web.h (LIMITS) set before the socket
 * is bound; w->host and w->port say where it listens (the port the
 * system chose for port 0). spec names the address in a message.
 * RETURN 0, or WEB_ENOMEM / WEB_EBIND with err set. */
static int
bind_http(web_server *w, const struct sockaddr_storage *ss, const char *spec, char *err,
          size_t errlen)
{
    char host[INET6_ADDRSTRLEN];
    int port;
    if (ss->ss_family == AF_INET6) {
        evutil_inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)ss)->sin6_addr, host,
                         sizeof host);
        port = ntohs(((const struct sockaddr_in6 *)ss)->sin6_port);
    } else {
        evutil_inet_ntop(AF_INET, &((const struct sockaddr_in *)ss)->sin_addr, host, sizeof host);
        port = ntohs(((const struct sockaddr_in *)ss)->sin_port);
    }
    snprintf(w->host, sizeof w->host, "%s", host);
    w->http = evhttp_new(w->base);
    if (!w->http)
        return WEB_ENOMEM;
    /* every method reaches on_request, which answers 405 to all but GET
     * and HEAD (evhttp's own refusal is a 501, a server error) */
    evhttp_set_allowed_methods(w->http, EVHTTP_REQ_GET | EVHTTP_REQ_HEAD | EVHTTP_REQ_POST |
                                            EVHTTP_REQ_PUT | EVHTTP_REQ_DELETE |
                                            EVHTTP_REQ_OPTIONS | EVHTTP_REQ_TRACE |
                                            EVHTTP_REQ_CONNECT | EVHTTP_REQ_PATCH);
    evhttp_set_max_headers_size(w->http, WEB_MAX_HEADER_BYTES);
    evhttp_set_max_body_size(w->http, 0);
    evhttp_set_timeout(w->http, WEB_TIMEOUT_S);
    evhttp_set_gencb(w->http, on_request, w);
    struct evhttp_bound_socket *bs = evhttp_bind_socket_with_handle(w->http, host, (uint16_t)port);
    if (!bs) {
        eng_errf(err, errlen, "cannot serve the pages on %s: %s", spec,
                 evutil_socket_error_to_string(EVUTIL_SOCKET_ERROR()));
        return WEB_EBIND;
    }
    struct sockaddr_storage got;
    socklen_t gl = sizeof got;
    if (getsockname(evhttp_bound_socket_get_fd(bs), (struct sockaddr *)&got, &gl) == 0)
        port = ntohs(got.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&got)->sin6_port
                                               : ((struct sockaddr_in *)&got)->sin_port);
    w->port = port;
    return 0;
}

/* In three steps: the address (parse_address, which refuses before any
 * socket exists), the server's copy of the options, the socket. */
int
web_start(struct event_base *base, mt_tree *tree, pst_env *store, const egdb *db, const web_opts *o,
          web_server **out, char *err, size_t errlen)
{
    *out = NULL;
    struct sockaddr_storage ss;
    int rc = parse_address(o, &ss, err, errlen);
    if (rc)
        return rc;
    web_server *w = calloc(1, sizeof *w);
    if (!w)
        return WEB_ENOMEM;
    w->base = base;
    w->tree = tree;
    w->store = store;
    w->db = db;
    mt_stats st;
    mt_stats_get(tree, &st);
    w->db_pieces = db ? st.db_pieces : 0;
    char spec[160];
    if (o->listen)
        snprintf(spec, sizeof spec, "%s", o->listen);
    else
        snprintf(spec, sizeof spec, "127.0.0.1:%d", o->port);
    if ((rc = copy_opts(w, o, err, errlen)) || (rc = bind_http(w, &ss, spec, err, errlen))) {
        web_free(w);
        return rc;
    }
    web_refresh(w); /* the figures read now, not on the first request */
    *out = w;
    return 0;
}

/* Seconds from the monotonic clock. */
static double
web_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/*
 * The tree's figures cost a pass over every node (mt_stats_get counts
 * them): about 20 ms at a million nodes, a hundred times what a page of
 * one position costs. A served state never changes, so they are read
 * once; a running proof's are read again at most once a second (a page
 * may then show h or the question a second late).
 */
void
web_refresh(web_server *w)
{
    double now = web_now();
    if (!w->st_at || (w->run && now - w->st_at >= 1.0)) {
        mt_stats_get(w->tree, &w->st);
        eng_parse_fen(w->st.root_fen, &w->root, NULL, 0);
        w->st_at = now;
    }
    memset(&w->scratch, 0, sizeof w->scratch);
    if (w->run)
        w->run(w->run_arg, &w->scratch);
}

int
web_port(const web_server *w)
{
    return w->port;
}

const char *
web_host(const web_server *w)
{
    return w->host;
}

/* The samples live in memory for this run only: the tree's stored
 * history (tree.h, "hist") has no room for workers or h. */
void
web_sample(web_server *w, double run_s)
{
    if (!w || !w->pts || !w->run)
        return;
    if (w->npts == WEB_SAMPLES_MAX) { /* every other one: the chart keeps its span */
        for (size_t i = 0; i < WEB_SAMPLES_MAX / 2; i++)
            w->pts[i] = w->pts[2 * i];
        w->npts = WEB_SAMPLES_MAX / 2;
    }
    w->st_at = 0; /* fresh figures for the sample */
    web_refresh(w);
    web_point *p = &w->pts[w->npts++];
    p->t = run_s;
    p->workers = (double)w->scratch.nworkers;
    p->h = w->st.h >= MT_H_INF ? -1 : w->st.h;
    p->per_minute = w->scratch.per_minute;
    p->in_flight = (double)w->st.in_flight;
}

void
web_free(web_server *w)
{
    if (!w)
        return;
    if (w->http)
        evhttp_free(w->http);
    free(w->pts);
    free(w->ops);
    free(w);
}

const char *
web_strerror(int code)
{
    switch (code) {
    case WEB_OK:
        return "ok";
    case WEB_EINVAL:
        return "bad address or option";
    case WEB_ENOTOKEN:
        return "a token is needed beyond loopback";
    case WEB_EBIND:
        return "the address cannot be bound";
    case WEB_ENOMEM:
        return "out of memory";
    default:
        return "unknown error";
    }
}
