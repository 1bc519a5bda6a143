/*
 * peer.c - what the two ends of a manager's connection share beyond the
 * wire format (protocol.c): the token file both read (manager.h,
 * SECURITY), a peer's text made safe for a log (mgr_printable), and the
 * log line's format (mgr_vlog).
 *
 * OWNS: nothing but these functions (no state).
 * CALLS: libc only. manager.c, worker.c and the status pages (web/)
 * call it; it calls none of them, so that neither end of a connection
 * has to call into the other.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "manager/manager.h"
#include "manager/protocol.h"

/* Every control byte and the backslash as \xNN: a peer's name or message
 * reaches the log, and must not forge a line of it (a newline) or drive
 * a terminal (an escape sequence). The backslash is escaped too, so that
 * a literal "\x0a" in a name cannot pass for an escaped newline. */
void
mgr_printable(const char *in, char *out, size_t cap)
{
    size_t o = 0;
    for (const unsigned char *p = (const unsigned char *)in; *p && o + 5 < cap; p++) {
        if (*p < 0x20 || *p == 0x7f || *p == '\\')
            o += (size_t)snprintf(out + o, cap - o, "\\x%02x", *p);
        else
            out[o++] = (char)*p;
    }
    if (cap)
        out[o < cap ? o : cap - 1] = 0;
}

/* The token file's first line (without its line end): both the manager
 * and its workers read the secret this way, so that a file written by
 * an editor (with a final newline, or CRLF) gives the same token to both. */
int
mgr_read_token(const char *path, char *buf, size_t cap, char *err, size_t errlen)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        snprintf(err, errlen, "token file %s: %s", path, strerror(errno));
        return -1;
    }
    char line[MGP_TOKEN_MAX + 8];
    int ok = fgets(line, sizeof line, f) != NULL;
    fclose(f);
    if (!ok) {
        snprintf(err, errlen, "token file %s is empty", path);
        return -1;
    }
    line[strcspn(line, "\r\n")] = 0;
    if (!line[0] || strlen(line) > MGP_TOKEN_MAX || strlen(line) >= cap) {
        snprintf(err, errlen, "token file %s: the first line must hold 1 to %d characters", path,
                 MGP_TOKEN_MAX);
        return -1;
    }
    snprintf(buf, cap, "%s", line);
    return 0;
}

void
mgr_vlog(const char *clear, const char *who, const char *fmt, va_list ap)
{
    char buf[1024];
    vsnprintf(buf, sizeof buf, fmt, ap);
    time_t t = time(NULL);
    struct tm tm;
    localtime_r(&t, &tm);
    /* one fprintf: a line is written whole even beside another thread's */
    fprintf(stderr, "%s%02d:%02d:%02d %s: %s\n", clear ? clear : "", tm.tm_hour, tm.tm_min,
            tm.tm_sec, who, buf);
}
