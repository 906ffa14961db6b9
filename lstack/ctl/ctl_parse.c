/*
 * ctl_parse.c - the reading half of the control protocol: one flat JSON
 * object per line, parsed in place (see ctl_proto.h).
 *
 * In place: the write position w never passes the read position r. Every
 * token is preceded by at least one structural character that is consumed
 * without being written ('{', ',' or ':'); a string shrinks by at least its
 * closing quote (which pays for its NUL) and an escape never decodes longer
 * than it is written; a bare token (number, true, false, null) grows by its
 * NUL, paid for by the ':' before it. A check before each bare-token copy
 * keeps that promise even for input this reasoning missed.
 *
 * Design: docs/design.md#the-reply-parser-points-into-the-line
 */
#include "ctl/ctl_proto.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct parser {
    char *r;          /* next character to read */
    char *w;          /* next byte to write */
    char *err;
    size_t errlen;
};

static int fail(struct parser *p, const char *what)
{
    snprintf(p->err, p->errlen, "%s", what);
    return -1;
}

static void skip_ws(struct parser *p)
{
    while (*p->r == ' ' || *p->r == '\t' || *p->r == '\r' || *p->r == '\n')
        p->r++;
}

static int hex4(const char *s, unsigned *out)
{
    unsigned v = 0;
    for (int i = 0; i < 4; i++) {
        char c = s[i];
        v <<= 4;
        if (c >= '0' && c <= '9')
            v |= (unsigned)(c - '0');
        else if (c >= 'a' && c <= 'f')
            v |= (unsigned)(c - 'a' + 10);
        else if (c >= 'A' && c <= 'F')
            v |= (unsigned)(c - 'A' + 10);
        else
            return -1;
    }
    *out = v;
    return 0;
}

/* Append code point cp as UTF-8 (at most 4 bytes; its escape was >= 6). */
static void put_utf8(struct parser *p, unsigned cp)
{
    if (cp < 0x80) {
        *p->w++ = (char)cp;
    } else if (cp < 0x800) {
        *p->w++ = (char)(0xc0 | (cp >> 6));
        *p->w++ = (char)(0x80 | (cp & 0x3f));
    } else if (cp < 0x10000) {
        *p->w++ = (char)(0xe0 | (cp >> 12));
        *p->w++ = (char)(0x80 | ((cp >> 6) & 0x3f));
        *p->w++ = (char)(0x80 | (cp & 0x3f));
    } else {
        *p->w++ = (char)(0xf0 | (cp >> 18));
        *p->w++ = (char)(0x80 | ((cp >> 12) & 0x3f));
        *p->w++ = (char)(0x80 | ((cp >> 6) & 0x3f));
        *p->w++ = (char)(0x80 | (cp & 0x3f));
    }
}

/* \uXXXX (p->r after the 'u'), with a surrogate pair as one code point. */
static int unicode_escape(struct parser *p)
{
    unsigned cp, lo;
    if (hex4(p->r, &cp) != 0)
        return fail(p, "bad \\u escape");
    p->r += 4;
    if (cp >= 0xd800 && cp <= 0xdbff && p->r[0] == '\\' && p->r[1] == 'u' && hex4(p->r + 2, &lo) == 0 &&
        lo >= 0xdc00 && lo <= 0xdfff) {
        p->r += 6;
        cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
    }
    if (cp == 0)
        return fail(p, "NUL in a string");
    put_utf8(p, cp);
    return 0;
}

/* A string at p->r (on its opening quote). Returns the decoded text. */
static const char *parse_string(struct parser *p)
{
    p->r++;
    char *out = p->w;
    for (;;) {
        char c = *p->r++;
        if (c == '\0') {
            fail(p, "unterminated string");
            return NULL;
        }
        if (c == '"')
            break;
        if ((unsigned char)c < 0x20) {
            fail(p, "control character in a string");
            return NULL;
        }
        if (c != '\\') {
            *p->w++ = c;
            continue;
        }
        char e = *p->r++;
        switch (e) {
        case '"':
        case '\\':
        case '/':
            *p->w++ = e;
            break;
        case 'b':
            *p->w++ = '\b';
            break;
        case 'f':
            *p->w++ = '\f';
            break;
        case 'n':
            *p->w++ = '\n';
            break;
        case 'r':
            *p->w++ = '\r';
            break;
        case 't':
            *p->w++ = '\t';
            break;
        case 'u':
            if (unicode_escape(p) != 0)
                return NULL;
            break;
        default:
            fail(p, "bad escape in a string");
            return NULL;
        }
    }
    *p->w++ = '\0';
    return out;
}

/* A number, true, false or null at p->r: copied to w with its NUL. */
static const char *parse_bare(struct parser *p, enum ctl_kind *kind)
{
    const char *s = p->r;
    size_t n = 0;
    if (strncmp(s, "true", 4) == 0 || strncmp(s, "false", 5) == 0) {
        *kind = CTL_BOOL;
        n = s[0] == 't' ? 4 : 5;
    } else if (strncmp(s, "null", 4) == 0) {
        *kind = CTL_NULL;
        n = 4;
    } else {
        *kind = CTL_NUM;
        if (s[n] == '-')
            n++;
        size_t digits = n;
        while (s[n] >= '0' && s[n] <= '9')
            n++;
        if (n == digits) {
            fail(p, *s == '{' || *s == '[' ? "nested value (records are flat objects)" : "bad value");
            return NULL;
        }
        if (s[n] == '.') {
            n++;
            while (s[n] >= '0' && s[n] <= '9')
                n++;
        }
        if (s[n] == 'e' || s[n] == 'E') {
            n++;
            if (s[n] == '+' || s[n] == '-')
                n++;
            while (s[n] >= '0' && s[n] <= '9')
                n++;
        }
    }
    if (p->w + n + 1 > p->r + n) { /* cannot happen, see the top comment */
        fail(p, "internal: in-place parse would overrun");
        return NULL;
    }
    char *out = p->w;
    memmove(out, s, n);
    out[n] = '\0';
    p->w += n + 1;
    p->r += n;
    return out;
}

int ctl_obj_parse(char *line, struct ctl_obj *o, char *err, size_t errlen)
{
    struct parser p = {.r = line, .w = line, .err = err, .errlen = errlen};
    o->n = 0;
    skip_ws(&p);
    if (*p.r != '{')
        return fail(&p, "not a JSON object");
    p.r++;
    skip_ws(&p);
    if (*p.r == '}') {
        p.r++;
    } else {
        for (;;) {
            if (*p.r != '"')
                return fail(&p, "expected a quoted key");
            if (o->n == CTL_OBJ_MAX_FIELDS)
                return fail(&p, "too many fields");
            struct ctl_field *f = &o->f[o->n];
            f->key = parse_string(&p);
            if (f->key == NULL)
                return -1;
            skip_ws(&p);
            if (*p.r != ':')
                return fail(&p, "expected ':' after a key");
            p.r++;
            skip_ws(&p);
            if (*p.r == '"') {
                f->kind = CTL_STR;
                f->val = parse_string(&p);
            } else {
                f->val = parse_bare(&p, &f->kind);
            }
            if (f->val == NULL)
                return -1;
            o->n++;
            skip_ws(&p);
            if (*p.r == ',') {
                p.r++;
                skip_ws(&p);
                continue;
            }
            if (*p.r == '}') {
                p.r++;
                break;
            }
            return fail(&p, "expected ',' or '}'");
        }
    }
    skip_ws(&p);
    if (*p.r != '\0')
        return fail(&p, "text after the object");
    return 0;
}

const struct ctl_field *ctl_obj_get(const struct ctl_obj *o, const char *key)
{
    for (int i = 0; i < o->n; i++)
        if (strcmp(o->f[i].key, key) == 0)
            return &o->f[i];
    return NULL;
}

const char *ctl_obj_str(const struct ctl_obj *o, const char *key)
{
    const struct ctl_field *f = ctl_obj_get(o, key);
    return f != NULL && f->kind == CTL_STR ? f->val : NULL;
}

/* The field's text if it is a whole number (no fraction, no exponent). */
static const char *whole(const struct ctl_obj *o, const char *key)
{
    const struct ctl_field *f = ctl_obj_get(o, key);
    if (f == NULL || f->kind != CTL_NUM || strpbrk(f->val, ".eE") != NULL)
        return NULL;
    return f->val;
}

bool ctl_obj_u64(const struct ctl_obj *o, const char *key, uint64_t *out)
{
    const char *s = whole(o, key);
    if (s == NULL || s[0] == '-')
        return false;
    errno = 0;
    char *end;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno != 0 || *end != '\0')
        return false;
    *out = v;
    return true;
}

bool ctl_obj_i64(const struct ctl_obj *o, const char *key, int64_t *out)
{
    const char *s = whole(o, key);
    if (s == NULL)
        return false;
    errno = 0;
    char *end;
    long long v = strtoll(s, &end, 10);
    if (errno != 0 || *end != '\0')
        return false;
    *out = v;
    return true;
}
