/*
 * ctl_proto.c - the writing half of the control protocol: a growable text
 * buffer and the record writer (see ctl_proto.h). The reading half is
 * ctl_parse.c.
 * Design: docs/design.md#reply-lines-grow-as-needed
 */
#include "ctl/ctl_proto.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void ctl_buf_init(struct ctl_buf *b)
{
    memset(b, 0, sizeof(*b));
}

void ctl_buf_free(struct ctl_buf *b)
{
    free(b->p);
    ctl_buf_init(b);
}

void ctl_buf_reset(struct ctl_buf *b)
{
    b->len = 0;
    if (b->p != NULL)
        b->p[0] = '\0';
}

/* Make room for n more bytes plus the NUL. false if that failed. */
static bool reserve(struct ctl_buf *b, size_t n)
{
    if (b->oom)
        return false;
    if (b->len + n + 1 <= b->cap)
        return true;
    size_t cap = b->cap ? b->cap : 256;
    while (cap < b->len + n + 1)
        cap *= 2;
    char *p = realloc(b->p, cap);
    if (p == NULL) {
        b->oom = true;
        return false;
    }
    b->p = p;
    b->cap = cap;
    return true;
}

void ctl_buf_add(struct ctl_buf *b, const char *s, size_t n)
{
    if (!reserve(b, n))
        return;
    memcpy(b->p + b->len, s, n);
    b->len += n;
    b->p[b->len] = '\0';
}

void ctl_buf_puts(struct ctl_buf *b, const char *s)
{
    ctl_buf_add(b, s, strlen(s));
}

void ctl_buf_printf(struct ctl_buf *b, const char *fmt, ...)
{
    char small[256];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(small, sizeof(small), fmt, ap);
    va_end(ap);
    if (n < 0)
        return;
    if ((size_t)n < sizeof(small)) {
        ctl_buf_add(b, small, (size_t)n);
        return;
    }
    if (!reserve(b, (size_t)n))
        return;
    va_start(ap, fmt);
    vsnprintf(b->p + b->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
}

void ctl_json_str(struct ctl_buf *b, const char *s)
{
    if (s == NULL) {
        ctl_buf_puts(b, "null");
        return;
    }
    ctl_buf_add(b, "\"", 1);
    const char *run = s; /* start of the bytes copied as they are */
    for (const unsigned char *p = (const unsigned char *)s; *p != '\0'; p++) {
        const char *esc = NULL;
        char u[8];
        switch (*p) {
        case '"':
            esc = "\\\"";
            break;
        case '\\':
            esc = "\\\\";
            break;
        case '\n':
            esc = "\\n";
            break;
        case '\r':
            esc = "\\r";
            break;
        case '\t':
            esc = "\\t";
            break;
        default:
            if (*p < 0x20 || *p == 0x7f) {
                snprintf(u, sizeof(u), "\\u%04x", *p);
                esc = u;
            }
            break;
        }
        if (esc == NULL)
            continue;
        ctl_buf_add(b, run, (size_t)((const char *)p - run));
        ctl_buf_puts(b, esc);
        run = (const char *)p + 1;
    }
    ctl_buf_puts(b, run);
    ctl_buf_add(b, "\"", 1);
}

void ctl_rec_begin(struct ctl_buf *b, const char *type)
{
    ctl_buf_puts(b, "{\"type\":");
    ctl_json_str(b, type);
}

static void key(struct ctl_buf *b, const char *k)
{
    ctl_buf_add(b, ",", 1);
    ctl_json_str(b, k);
    ctl_buf_add(b, ":", 1);
}

void ctl_rec_str(struct ctl_buf *b, const char *k, const char *val)
{
    key(b, k);
    ctl_json_str(b, val);
}

void ctl_rec_u64(struct ctl_buf *b, const char *k, uint64_t val)
{
    key(b, k);
    ctl_buf_printf(b, "%" PRIu64, val);
}

void ctl_rec_i64(struct ctl_buf *b, const char *k, int64_t val)
{
    key(b, k);
    ctl_buf_printf(b, "%" PRId64, val);
}

void ctl_rec_bool(struct ctl_buf *b, const char *k, bool val)
{
    key(b, k);
    ctl_buf_puts(b, val ? "true" : "false");
}

void ctl_rec_end(struct ctl_buf *b)
{
    ctl_buf_add(b, "}\n", 2);
}

void ctl_field_json(struct ctl_buf *b, const struct ctl_field *f)
{
    if (f->kind == CTL_STR)
        ctl_json_str(b, f->val);
    else
        ctl_buf_puts(b, f->val);
}

void ctl_obj_json(struct ctl_buf *b, const struct ctl_obj *o, const char *const *skip)
{
    ctl_buf_add(b, "{", 1);
    bool first = true;
    for (int i = 0; i < o->n; i++) {
        bool skipped = false;
        for (const char *const *s = skip; s != NULL && *s != NULL; s++)
            skipped = skipped || strcmp(*s, o->f[i].key) == 0;
        if (skipped)
            continue;
        if (!first)
            ctl_buf_add(b, ",", 1);
        first = false;
        ctl_json_str(b, o->f[i].key);
        ctl_buf_add(b, ":", 1);
        ctl_field_json(b, &o->f[i]);
    }
    ctl_buf_add(b, "}", 1);
}
