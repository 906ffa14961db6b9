/*
 * conf_report.h - text written into callers' fixed buffers: the parser's
 * error report (lines, "..." when full) and an snprintf-like builder.
 *
 * Internal to the conf library.
 */
#ifndef LSTACK_CONF_REPORT_H
#define LSTACK_CONF_REPORT_H

#include <stdbool.h>
#include <stddef.h>

struct conf_report {
    char *buf;   /* caller's buffer, may be NULL if len is 0 */
    size_t len;
    size_t used; /* bytes written, NUL excluded */
    bool full;   /* a line did not fit: buf ends with "..." */
    int count;   /* problems reported, including those that did not fit */
};

/* Start an empty report into buf (NUL-terminated at once if len > 0). */
void conf_report_init(struct conf_report *r, char *buf, size_t len);

/* Append one line (no newline in fmt; lines are separated by '\n', the
 * last one has none). Once a line does not fit, buf ends with "..." and
 * later lines are only counted. */
void conf_report_add(struct conf_report *r, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Copy s into buf for display inside '...': control characters become '?',
 * and a text longer than 64 bytes is cut with "...". Returns buf. */
const char *conf_report_show(const char *s, char *buf, size_t len);

/* snprintf-like text builder: appends while there is room, and keeps
 * counting the length needed past the end. buf may be NULL if len is 0. */
struct conf_text {
    char *buf;
    size_t len;
    size_t need; /* length of the full text, NUL excluded */
};

/* Append printf-style text to t (always NUL-terminated if len > 0). */
void conf_text_add(struct conf_text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
