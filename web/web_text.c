/*
 * web_text.c - the proof browser's text: escaping for JSON, HTML and
 * URLs, input cut for echoing, and the words a number or a side is shown
 * with (web_internal.h).
 *
 * OWNS: nothing (pure functions on their arguments).
 * CALLS: libevent's evbuffer and libc only. It is the lowest layer of
 * web/: the server (web.c), the pages (web_page.c) and the API
 * (web_api.c) all write through it, and it calls none of them.
 *
 * Every piece of text that reaches a page or a JSON answer from outside
 * (a FEN, a move, a worker's name, a path) goes through one of these
 * escapes: a name such as "</script>" must stay text wherever it lands.
 */
#include <ctype.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <event2/buffer.h>

#include "web/web_internal.h"

/* ---- JSON -------------------------------------------------------------- */

/* Quotes and backslashes escaped, control bytes as \u00XX; bytes from
 * 0x80 up pass as they are (the pages are UTF-8). */
void
web_json_str(struct evbuffer *b, const char *s)
{
    evbuffer_add(b, "\"", 1);
    for (; *s; s++) {
        unsigned char ch = (unsigned char)*s;
        if (ch == '"' || ch == '\\')
            evbuffer_add_printf(b, "\\%c", ch);
        else if (ch < 0x20)
            evbuffer_add_printf(b, "\\u%04x", ch);
        else
            evbuffer_add(b, s, 1);
    }
    evbuffer_add(b, "\"", 1);
}

/* Infinity has no JSON number: it is the string "inf" (web.h, JSON). */
void
web_json_pn(struct evbuffer *b, uint64_t v)
{
    if (v >= MT_INF)
        evbuffer_add_printf(b, "\"inf\"");
    else
        evbuffer_add_printf(b, "%llu", (unsigned long long)v);
}

/* ---- HTML and URLs ------------------------------------------------------- */

/* The five characters that can end a text or an attribute value (both
 * quote styles are escaped: the pages use single quotes in attributes). */
void
web_html(struct evbuffer *b, const char *s)
{
    for (; *s; s++) {
        switch (*s) {
        case '&':
            evbuffer_add_printf(b, "&amp;");
            break;
        case '<':
            evbuffer_add_printf(b, "&lt;");
            break;
        case '>':
            evbuffer_add_printf(b, "&gt;");
            break;
        case '"':
            evbuffer_add_printf(b, "&quot;");
            break;
        case '\'':
            evbuffer_add_printf(b, "&#39;");
            break;
        default:
            evbuffer_add(b, s, 1);
        }
    }
}

/* A query value: the unreserved characters, and ':' and ',' which a FEN
 * and a line are full of and which a query may hold as they are (so that
 * an address stays readable); everything else as %XX. */
void
web_url(struct evbuffer *b, const char *s)
{
    for (; *s; s++) {
        unsigned char ch = (unsigned char)*s;
        if (isalnum(ch) || strchr("-_.~:,", ch))
            evbuffer_add(b, s, 1);
        else
            evbuffer_add_printf(b, "%%%02X", ch);
    }
}

/* Echoed input, cut to at most max bytes: "…" marks a cut, so that a
 * reader never takes a prefix for the whole (nor a cut for a typo). The
 * cut falls before a UTF-8 continuation byte's lead, never inside a
 * character. */
const char *
web_clip(const char *s, size_t max, char *buf, size_t cap)
{
    size_t n = strlen(s);
    if (n <= max && n < cap) {
        snprintf(buf, cap, "%s", s);
        return buf;
    }
    size_t k = max < cap - 4 ? max : cap - 4; /* room for "…" (3 bytes) and NUL */
    while (k > 0 && ((unsigned char)s[k] & 0xC0) == 0x80)
        k--;
    snprintf(buf, cap, "%.*s\u2026", (int)k, s);
    return buf;
}

/* ---- words --------------------------------------------------------------- */

const char *
web_pn_text(uint64_t v, char *buf, size_t cap)
{
    if (v >= MT_INF)
        snprintf(buf, cap, "inf");
    else
        snprintf(buf, cap, "%" PRIu64, v);
    return buf;
}

const char *
web_side(int stm)
{
    return stm == ENG_BLACK ? "Black" : "White";
}
