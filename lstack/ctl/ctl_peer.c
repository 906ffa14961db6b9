/*
 * ctl_peer.c - one conversation of the control socket (see ctl_peer.h):
 *
 *   accepted -> check the peer -> hello queued -> REQUEST (read one line,
 *   CTL_RECV_TIMEOUT_MS from the accept) -> dispatch -> REPLY (send what
 *   the command wrote; when sent, ask a long command for its next piece;
 *   each send must make progress within CTL_SEND_TIMEOUT_MS) -> closed.
 *
 * A refused peer goes straight to REPLY with one error record. The reply
 * buffer holds whole records; `sent` is how much of it the peer took.
 * The commands are in ctl_cmds.c and ctl_info.c; they only append to the
 * buffer, never touch the socket.
 * Design: docs/design.md#a-request-has-one-deadline-for-the-whole-line
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "common/log.h"
#include "ctl/ctl_peer.h"
#include "ctl/ctl_priv.h"
#include "common/libc.h"

/*
 * Every socket call goes through the libc table: inside liblstack.so,
 * recv()/send()/close() by name are lstack's interposed exports.
 */

#ifndef LSTACK_VERSION
#define LSTACK_VERSION "unknown"
#endif

enum peer_state { PEER_REQUEST, PEER_REPLY };

struct ctl_peer {
    int fd;
    enum peer_state state;
    uint64_t deadline_us;
    size_t in_len;            /* bytes of the request line so far */
    size_t sent;              /* bytes of out.buf the peer took */
    struct ctl_out out;
    char in[CTL_REQ_MAX];
};

/* One error record, the message formatted from fmt and ap. */
static void put_error(struct ctl_buf *b, const char *fmt, va_list ap)
{
    char msg[512];
    vsnprintf(msg, sizeof(msg), fmt, ap);
    ctl_rec_begin(b, "error");
    ctl_rec_str(b, "error", msg);
    ctl_rec_end(b);
}

void ctl_out_error(struct ctl_out *o, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    put_error(&o->buf, fmt, ap);
    va_end(ap);
}

void ctl_peer_refuse(int fd, const char *fmt, ...)
{
    static const char no_memory[] = "{\"type\":\"error\",\"error\":\"out of memory\"}\n";
    struct ctl_buf b;
    ctl_buf_init(&b);
    va_list ap;
    va_start(ap, fmt);
    put_error(&b, fmt, ap);
    va_end(ap);
    const char *line = b.oom || b.p == NULL ? no_memory : b.p;
    while (libc.send(fd, line, strlen(line), MSG_NOSIGNAL | MSG_DONTWAIT) < 0 && errno == EINTR)
        ;
    ctl_buf_free(&b);
}

/* ---- hello ---- */

static void program_name(char *out, size_t len)
{
    snprintf(out, len, "?");
    int fd = open("/proc/self/comm", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return;
    ssize_t n = libc.read(fd, out, len - 1);
    libc.close(fd);
    if (n <= 0)
        return;
    out[n] = '\0';
    out[strcspn(out, "\n")] = '\0';
}

static int count_stacks(void)
{
    int n = 0;
    while (ctl_srv.host->stack(n) != NULL)
        n++;
    return n;
}

static void hello(struct ctl_out *o)
{
    char prog[64];
    program_name(prog, sizeof(prog));
    ctl_rec_begin(&o->buf, "hello");
    ctl_rec_str(&o->buf, "proto", CTL_PROTO_NAME);
    ctl_rec_u64(&o->buf, "version", CTL_PROTO_VERSION);
    ctl_rec_i64(&o->buf, "pid", getpid());
    ctl_rec_str(&o->buf, "prog", prog);
    ctl_rec_u64(&o->buf, "uid", geteuid());
    ctl_rec_str(&o->buf, "lstack", LSTACK_VERSION);
    ctl_rec_i64(&o->buf, "stacks", count_stacks());
    ctl_rec_end(&o->buf);
}

/* Queue the hello, or the refusal of a peer we may not serve. Returns true
 * if the peer may send a request. */
static bool greet(struct ctl_peer *p)
{
    struct ucred cred;
    socklen_t clen = sizeof(cred);
    if (libc.getsockopt(p->fd, SOL_SOCKET, SO_PEERCRED, &cred, &clen) != 0) {
        ctl_out_error(&p->out, "cannot identify the peer (SO_PEERCRED: %s)", strerror(errno));
        return false;
    }
    if (cred.uid != 0 && cred.uid != geteuid()) {
        LSTACK_WARN("ctl: refused a request from uid %u pid %ld (only uid %u or root may ask)", (unsigned)cred.uid,
                    (long)cred.pid, (unsigned)geteuid());
        char who[32] = "root";
        if (geteuid() != 0)
            snprintf(who, sizeof(who), "uid %u or root", (unsigned)geteuid());
        ctl_out_error(&p->out,
                      "permission denied: process %ld runs as uid %u; uid %u may not inspect it (run stackctl as %s)",
                      (long)getpid(), (unsigned)geteuid(), (unsigned)cred.uid, who);
        return false;
    }
    p->out.peer_uid = cred.uid;
    p->out.peer_pid = cred.pid;
    hello(&p->out);
    return true;
}

/* ---- the request ---- */

static const struct {
    const char *name;
    void (*run)(struct ctl_out *o, const struct ctl_obj *req);
} cmds[] = {
    {"connections", ctl_cmd_connections},
    {"stats", ctl_cmd_stats},
    {"nic", ctl_cmd_nic},
    {"config", ctl_cmd_config},
    {"loglevel", ctl_cmd_loglevel},
};

static void dispatch(struct ctl_out *o, const struct ctl_obj *req)
{
    int64_t version = -1;
    if (!ctl_obj_i64(req, "version", &version) || version != CTL_PROTO_VERSION) {
        ctl_out_error(o,
                      "protocol version mismatch: this process (lstack %s) speaks %s version %d, the "
                      "request is version %lld; use the stackctl of the same lstack build",
                      LSTACK_VERSION, CTL_PROTO_NAME, CTL_PROTO_VERSION, (long long)version);
        return;
    }
    const char *cmd = ctl_obj_str(req, "cmd");
    for (size_t i = 0; cmd != NULL && i < sizeof(cmds) / sizeof(cmds[0]); i++) {
        if (strcmp(cmd, cmds[i].name) == 0) {
            LSTACK_DEBUG("ctl: '%s' from uid %u pid %ld", cmd, (unsigned)o->peer_uid, (long)o->peer_pid);
            cmds[i].run(o, req);
            return;
        }
    }
    ctl_out_error(o, "unknown command '%s' (known: connections, stats, nic, config, loglevel)",
                  cmd != NULL ? cmd : "(none)");
}

/* Take what the socket holds of the request line. Returns 1 when the line
 * is complete (NUL-terminated in p->in, newline dropped), 2 when it is too
 * long (an error record is queued), 0 if more is to come, -1 if the peer
 * closed or failed before finishing it. */
static int read_request(struct ctl_peer *p)
{
    for (;;) {
        ssize_t n = libc.recv(p->fd, p->in + p->in_len, sizeof(p->in) - 1 - p->in_len, MSG_DONTWAIT);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            return 0;
        if (n <= 0) {
            LSTACK_DEBUG("ctl: peer pid %ld %s", (long)p->out.peer_pid,
                         n == 0 ? "closed before sending a request" : strerror(errno));
            return -1;
        }
        p->in_len += (size_t)n;
        p->in[p->in_len] = '\0';
        char *nl = memchr(p->in, '\n', p->in_len);
        if (nl != NULL) {
            *nl = '\0';
            return 1;
        }
        if (p->in_len == sizeof(p->in) - 1) {
            ctl_out_error(&p->out, "request longer than the protocol allows (%d bytes)", CTL_REQ_MAX);
            return 2;
        }
    }
}

static void answer(struct ctl_peer *p)
{
    struct ctl_obj req;
    char perr[128];
    if (ctl_obj_parse(p->in, &req, perr, sizeof(perr)) != 0)
        ctl_out_error(&p->out, "malformed request: %s", perr);
    else
        dispatch(&p->out, &req);
}

/* ---- the reply ---- */

/* Send what the socket takes now; once the buffer is empty, ask a long
 * command for its next piece (once per call). Returns 0, or -1 if the peer
 * is gone or the reply could not be built (out of memory). */
static int send_some(struct ctl_peer *p, uint64_t now_us)
{
    bool refilled = false;
    for (;;) {
        if (p->out.buf.oom) {
            LSTACK_WARN("ctl: out of memory building a reply: dropped it");
            return -1;
        }
        if (p->sent == p->out.buf.len) {
            ctl_buf_reset(&p->out.buf);
            p->sent = 0;
            if (p->state != PEER_REPLY || p->out.more == NULL || refilled)
                return 0;
            p->out.more(&p->out);
            refilled = true;
            continue;
        }
        ssize_t n = libc.send(p->fd, p->out.buf.p + p->sent, p->out.buf.len - p->sent, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (n > 0) {
            p->sent += (size_t)n;
            if (p->state == PEER_REPLY)
                p->deadline_us = now_us + CTL_SEND_TIMEOUT_MS * 1000ull;
            continue;
        }
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            return 0;
        LSTACK_DEBUG("ctl: peer pid %ld went away (%s): reply dropped", (long)p->out.peer_pid, strerror(errno));
        return -1;
    }
}

static bool reply_done(const struct ctl_peer *p)
{
    return p->state == PEER_REPLY && p->sent == p->out.buf.len && p->out.more == NULL;
}

/* ---- life cycle ---- */

struct ctl_peer *ctl_peer_open(int fd, uint64_t now_us)
{
    struct ctl_peer *p = malloc(sizeof(*p));
    if (p == NULL)
        return NULL;
    memset(p, 0, offsetof(struct ctl_peer, in));
    p->in[0] = '\0';
    p->fd = fd;
    p->out.peer_pid = -1;
    ctl_buf_init(&p->out.buf);
    if (greet(p)) {
        p->state = PEER_REQUEST;
        p->deadline_us = now_us + CTL_RECV_TIMEOUT_MS * 1000ull;
    } else {
        p->state = PEER_REPLY;
        p->deadline_us = now_us + CTL_SEND_TIMEOUT_MS * 1000ull;
    }
    return p;
}

int ctl_peer_fd(const struct ctl_peer *p)
{
    return p->fd;
}

short ctl_peer_events(const struct ctl_peer *p)
{
    short ev = p->state == PEER_REQUEST ? POLLIN : 0;
    if (p->sent < p->out.buf.len || (p->state == PEER_REPLY && p->out.more != NULL))
        ev |= POLLOUT;
    return ev;
}

uint64_t ctl_peer_deadline(const struct ctl_peer *p)
{
    return p->deadline_us;
}

bool ctl_peer_step(struct ctl_peer *p, short revents, uint64_t now_us)
{
    /* Output first: a peer that sends its request and closes at once still
     * gets the hello before its end of file is read. */
    if ((revents & POLLOUT) && send_some(p, now_us) != 0)
        return false;
    if (p->state == PEER_REQUEST && (revents & (POLLIN | POLLHUP | POLLERR))) {
        int r = read_request(p);
        if (r < 0)
            return false;
        if (r > 0) {
            if (r == 1)
                answer(p);
            p->state = PEER_REPLY;
            p->deadline_us = now_us + CTL_SEND_TIMEOUT_MS * 1000ull;
            if (send_some(p, now_us) != 0) /* at once: the socket is most likely writable */
                return false;
        }
    } else if (p->state == PEER_REPLY && (revents & (POLLHUP | POLLERR)) && !(revents & POLLOUT)) {
        return false; /* gone while we had nothing to send */
    }
    if (reply_done(p))
        return false;
    if (now_us >= p->deadline_us) {
        LSTACK_DEBUG("ctl: peer pid %ld dropped: %s", (long)p->out.peer_pid,
                     p->state == PEER_REQUEST ? "no request in time" : "stopped reading the reply");
        return false;
    }
    return true;
}

void ctl_peer_close(struct ctl_peer *p)
{
    if (p->out.job_free != NULL && p->out.job != NULL)
        p->out.job_free(p->out.job);
    ctl_buf_free(&p->out.buf);
    libc.close(p->fd);
    free(p);
}
