/*
 * stackctl_conn.c - one conversation's bytes: send the request, read the
 * reply line by line (each read bounded by the --timeout), and turn lines
 * into records for the renderers (see stackctl.h, ctl_proto.h).
 * Design: docs/design.md#stackctl-reads-replies-a-line-at-a-time
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "stackctl.h"

int sc_send(struct sc_conn *c, const char *req, char *err, size_t errlen)
{
    size_t n = strlen(req), off = 0;
    char *line = malloc(n + 2);
    if (line == NULL) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    memcpy(line, req, n);
    line[n++] = '\n';
    while (off < n) {
        ssize_t w = send(c->fd, line + off, n - off, MSG_NOSIGNAL);
        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0) {
            snprintf(err, errlen, "sending the request failed: %s", strerror(errno));
            free(line);
            return -1;
        }
        off += (size_t)w;
    }
    free(line);
    return 0;
}

/* Make room for at least 64 KiB more after len (moving the unread part
 * to the front first). */
static int grow(struct sc_conn *c)
{
    if (c->start > 0) {
        memmove(c->buf, c->buf + c->start, c->len - c->start);
        c->len -= c->start;
        c->start = 0;
    }
    if (c->cap - c->len >= 65536)
        return 0;
    size_t cap = c->cap ? c->cap * 2 : 131072;
    char *b = realloc(c->buf, cap);
    if (b == NULL)
        return -1;
    c->buf = b;
    c->cap = cap;
    return 0;
}

int sc_read_line(struct sc_conn *c, char *err, size_t errlen)
{
    size_t scanned = c->start;
    for (;;) {
        char *nl = c->len > scanned ? memchr(c->buf + scanned, '\n', c->len - scanned) : NULL;
        if (nl != NULL) {
            *nl = '\0';
            c->line = c->buf + c->start;
            c->start = (size_t)(nl - c->buf) + 1;
            return 1;
        }
        if (c->len - c->start > CTL_LINE_MAX) {
            snprintf(err, errlen, "a reply line is longer than the protocol allows (%u bytes)", CTL_LINE_MAX);
            return -1;
        }
        scanned = c->len;
        size_t off = scanned - c->start;
        if (grow(c) != 0) {
            snprintf(err, errlen, "out of memory");
            return -1;
        }
        scanned = c->start + off;
        struct pollfd p = {.fd = c->fd, .events = POLLIN};
        int r = poll(&p, 1, c->timeout_ms);
        if (r < 0 && errno == EINTR)
            continue;
        if (r == 0) {
            snprintf(err, errlen, "no answer within %d ms (--timeout)", c->timeout_ms);
            return -1;
        }
        ssize_t n = r < 0 ? -1 : recv(c->fd, c->buf + c->len, c->cap - c->len - 1, 0);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            snprintf(err, errlen, "reading the reply failed: %s", strerror(errno));
            return -1;
        }
        if (n == 0)
            return 0;
        c->len += (size_t)n;
    }
}

static int conn_next(void *ctx, struct ctl_obj *o, char *err, size_t errlen, int *status)
{
    struct sc_conn *c = ctx;
    char perr[128];
    int r = sc_read_line(c, err, errlen);
    *status = SC_FAIL;
    if (r == 0)
        snprintf(err, errlen, "the process closed the connection before the reply was complete");
    if (r <= 0)
        return -1;
    if (ctl_obj_parse(c->line, o, perr, sizeof(perr)) != 0) {
        snprintf(err, errlen, "malformed reply record: %s", perr);
        return -1;
    }
    const char *type = ctl_obj_str(o, "type");
    if (type == NULL) {
        snprintf(err, errlen, "malformed reply record: no type");
        return -1;
    }
    if (strcmp(type, "error") == 0) {
        const char *why = ctl_obj_str(o, "error");
        snprintf(err, errlen, "%s", why != NULL ? why : "(no reason given)");
        if (why != NULL && strstr(why, "permission denied") != NULL)
            *status = SC_DENIED;
        else if (why != NULL && strstr(why, "protocol version") != NULL)
            *status = SC_PROTO;
        return -1;
    }
    return strcmp(type, "end") == 0 ? 0 : 1;
}

void sc_src_conn(struct sc_src *s, struct sc_conn *c)
{
    s->next = conn_next;
    s->ctx = c;
    s->hello = &c->hello;
}
