/*
 * conf_report.c - text into callers' buffers: the parser's error report
 * (one line per problem, cut with "..." when full) and the snprintf-like
 * builder used for formatting. Contracts in conf_report.h.
 */
#include "conf/conf_report.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

void conf_report_init(struct conf_report *r, char *buf, size_t len)
{
    r->buf = buf;
    r->len = buf != NULL ? len : 0;
    r->used = 0;
    r->full = false;
    r->count = 0;
    if (r->len > 0)
        r->buf[0] = '\0';
}

/* Mark the report full: end the buffer with "..." (as much as fits). */
static void cut(struct conf_report *r)
{
    static const char dots[] = "...";
    size_t keep;

    r->full = true;
    if (r->len == 0)
        return;
    keep = r->len - 1; /* room for the NUL */
    if (keep >= sizeof(dots) - 1)
        keep -= sizeof(dots) - 1;
    else
        keep = 0;
    if (r->used > keep)
        r->used = keep;
    for (size_t i = 0; i < sizeof(dots) - 1 && r->used + 1 < r->len; i++)
        r->buf[r->used++] = dots[i];
    r->buf[r->used] = '\0';
}

void conf_report_add(struct conf_report *r, const char *fmt, ...)
{
    char line[1024];
    va_list ap;
    size_t n, sep;
    int rc;

    r->count++;
    if (r->full)
        return;
    va_start(ap, fmt);
    rc = vsnprintf(line, sizeof(line), fmt, ap);
    va_end(ap);
    if (rc < 0)
        return;
    n = strlen(line);
    sep = r->used > 0 ? 1 : 0;
    if ((size_t)rc >= sizeof(line) || r->used + sep + n + 1 > r->len) {
        /* Keep what fits of this line, then mark the cut. */
        if (r->used + sep < r->len) {
            size_t room = r->len - 1 - r->used - sep;

            if (sep)
                r->buf[r->used++] = '\n';
            if (n > room)
                n = room;
            memcpy(r->buf + r->used, line, n);
            r->used += n;
            r->buf[r->used] = '\0';
        }
        cut(r);
        return;
    }
    if (sep)
        r->buf[r->used++] = '\n';
    memcpy(r->buf + r->used, line, n + 1);
    r->used += n;
}

const char *conf_report_show(const char *s, char *buf, size_t len)
{
    enum { SHOWN = 64 };
    size_t o = 0;
    size_t i;

    if (len == 0)
        return buf;
    for (i = 0; s[i] != '\0' && i < SHOWN && o + 1 < len; i++) {
        unsigned char c = (unsigned char)s[i];

        buf[o++] = (c < 0x20 || c == 0x7f) ? '?' : (char)c;
    }
    if (s[i] != '\0') {
        for (int d = 0; d < 3 && o + 1 < len; d++)
            buf[o++] = '.';
    }
    buf[o] = '\0';
    return buf;
}

void conf_text_add(struct conf_text *t, const char *fmt, ...)
{
    va_list ap;
    size_t room = t->need < t->len ? t->len - t->need : 0;
    int n;

    va_start(ap, fmt);
    n = vsnprintf(room > 0 ? t->buf + t->need : NULL, room, fmt, ap);
    va_end(ap);
    if (n > 0)
        t->need += (size_t)n;
}
