/*
 * conform_agent LOCAL_IPV4 - the server-side half of the conformance
 * harness (tests/conformance/conform.py). It runs in the server namespace,
 * once on the kernel and once under the preload (the same binary), and
 * makes the socket calls a scenario names, one per command line read from
 * stdin; each answer is one line on stdout:
 *
 *     r RET ERRNO [KEY=VALUE...]      (ERRNO is a name such as EAGAIN, or 0)
 *
 * Sockets and epoll sets are named by the scenario (s, a, e...): the agent
 * keeps a table NAME -> fd. Data written is a pattern (byte i of a
 * socket's stream is 'A' + i % 26, see conform.py); data read is answered
 * as hex (up to 8 KiB, then only its length).
 *
 * Between commands the agent waits in epoll_wait on a set of its own that
 * holds stdin and every socket it has (edge-triggered, events ignored):
 * under the preload in run-to-completion mode that wait is what polls the
 * stack, as an application's event loop does; on the kernel it just
 * sleeps. The scenario's own epoll sets are separate sets. Before each
 * command one more zero-timeout wait on a set that never has events (the
 * warm listener alone) makes the stack take the frames that arrived
 * before the command, as the kernel has (its softirq ran when the peer
 * sent them, before the peer wrote the command).
 *
 * Commands are in cmd_table below. A bad command answers "r -1 EBADMSG
 * why=..." and the agent goes on. Exits at EOF on stdin (status 0).
 * Single-threaded; a blocking call blocks the command loop (conform.py
 * waits for its answer before it sends the next command).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/sockios.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define MAX_SLOTS 64
#define MAX_ARGS 16
#define READ_MAX (1u << 20)
#define HEX_MAX 8192u

struct slot {
    char name[16];
    int fd;          /* -1: free */
    int is_epoll;
    uint64_t wr_off; /* bytes of pattern written so far (stream offset) */
};

static struct slot slots[MAX_SLOTS];
static int idle_ep = -1;
static int poll_ep = -1; /* the warm listener alone: a wait on it only polls */
static struct in_addr local_ip;
static char out[2 * READ_MAX + 256];
static unsigned char buf[READ_MAX];

static void reply(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(out, sizeof out - 1, fmt, ap);
    va_end(ap);
    if (n < 0)
        return;
    if ((size_t)n > sizeof out - 2)
        n = (int)sizeof out - 2;
    out[n++] = '\n';
    size_t off = 0;
    while (off < (size_t)n) {
        ssize_t w = write(1, out + off, (size_t)n - off);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            exit(1);
        off += (size_t)w;
    }
}

static const char *errname(int e)
{
    if (e == 0)
        return "0";
    const char *n = strerrorname_np(e);
    return n ? n : "E?";
}

/* r RET ERRNO + the rest */
static void result(long ret, int err, const char *extra)
{
    reply("r %ld %s%s%s", ret, ret < 0 ? errname(err) : "0", extra && *extra ? " " : "", extra ? extra : "");
}

static struct slot *find(const char *name)
{
    for (int i = 0; i < MAX_SLOTS; i++)
        if (slots[i].fd >= 0 && strcmp(slots[i].name, name) == 0)
            return &slots[i];
    return NULL;
}

static struct slot *find_fd(int fd)
{
    for (int i = 0; i < MAX_SLOTS; i++)
        if (slots[i].fd == fd)
            return &slots[i];
    return NULL;
}

static struct slot *add_slot(const char *name, int fd, int is_epoll)
{
    struct slot *s = find(name);
    if (!s)
        for (int i = 0; i < MAX_SLOTS && !s; i++)
            if (slots[i].fd < 0)
                s = &slots[i];
    if (!s)
        return NULL;
    snprintf(s->name, sizeof s->name, "%s", name);
    s->fd = fd;
    s->is_epoll = is_epoll;
    s->wr_off = 0;
    return s;
}

/* (Re)register a socket in the idle set: after a call that may have moved
 * it onto the stack (bind, listen, connect, accept). */
static void idle_watch(int fd)
{
    struct epoll_event ev = {.events = EPOLLIN | EPOLLOUT | EPOLLET, .data.fd = fd};
    epoll_ctl(idle_ep, EPOLL_CTL_DEL, fd, NULL);
    epoll_ctl(idle_ep, EPOLL_CTL_ADD, fd, &ev);
}

/* ---- names of constants ---- */

struct named {
    const char *name;
    long value;
};

static const struct named ev_names[] = {
    {"EPOLLIN", EPOLLIN},       {"EPOLLPRI", EPOLLPRI},   {"EPOLLOUT", EPOLLOUT},
    {"EPOLLERR", EPOLLERR},     {"EPOLLHUP", EPOLLHUP},   {"EPOLLRDHUP", EPOLLRDHUP},
    {"EPOLLRDNORM", EPOLLRDNORM}, {"EPOLLRDBAND", EPOLLRDBAND}, {"EPOLLWRNORM", EPOLLWRNORM},
    {"EPOLLWRBAND", EPOLLWRBAND}, {"EPOLLET", EPOLLET},   {"EPOLLONESHOT", (long)EPOLLONESHOT},
    {NULL, 0},
};

static const struct named msg_names[] = {
    {"MSG_PEEK", MSG_PEEK}, {"MSG_OOB", MSG_OOB}, {"MSG_DONTWAIT", MSG_DONTWAIT},
    {"MSG_WAITALL", MSG_WAITALL}, {"MSG_NOSIGNAL", MSG_NOSIGNAL}, {"MSG_MORE", MSG_MORE},
    {"MSG_TRUNC", MSG_TRUNC}, {"0", 0}, {NULL, 0},
};

/* poll's names map to the same bits as epoll's for TCP; kept apart so a
 * scenario reads like the call it makes. */
static const struct named poll_names[] = {
    {"POLLIN", POLLIN},   {"POLLPRI", POLLPRI}, {"POLLOUT", POLLOUT}, {"POLLERR", POLLERR},
    {"POLLHUP", POLLHUP}, {"POLLRDHUP", POLLRDHUP}, {"POLLRDNORM", POLLRDNORM},
    {"POLLRDBAND", POLLRDBAND}, {"POLLWRNORM", POLLWRNORM}, {"POLLWRBAND", POLLWRBAND},
    {"POLLNVAL", POLLNVAL}, {NULL, 0},
};

enum opt_kind { OPT_INT, OPT_LINGER, OPT_TIMEVAL };

struct sockopt_name {
    const char *name;
    int level, opt;
    enum opt_kind kind;
};

static const struct sockopt_name sockopts[] = {
    {"SO_RCVBUF", SOL_SOCKET, SO_RCVBUF, OPT_INT},
    {"SO_SNDBUF", SOL_SOCKET, SO_SNDBUF, OPT_INT},
    {"SO_KEEPALIVE", SOL_SOCKET, SO_KEEPALIVE, OPT_INT},
    {"SO_REUSEADDR", SOL_SOCKET, SO_REUSEADDR, OPT_INT},
    {"SO_REUSEPORT", SOL_SOCKET, SO_REUSEPORT, OPT_INT},
    {"SO_ERROR", SOL_SOCKET, SO_ERROR, OPT_INT},
    {"SO_OOBINLINE", SOL_SOCKET, SO_OOBINLINE, OPT_INT},
    {"SO_LINGER", SOL_SOCKET, SO_LINGER, OPT_LINGER},
    {"SO_RCVTIMEO", SOL_SOCKET, SO_RCVTIMEO, OPT_TIMEVAL},
    {"SO_SNDTIMEO", SOL_SOCKET, SO_SNDTIMEO, OPT_TIMEVAL},
    {"SO_RCVLOWAT", SOL_SOCKET, SO_RCVLOWAT, OPT_INT},
    {"TCP_NODELAY", IPPROTO_TCP, TCP_NODELAY, OPT_INT},
    {"TCP_MAXSEG", IPPROTO_TCP, TCP_MAXSEG, OPT_INT},
    {"TCP_CORK", IPPROTO_TCP, TCP_CORK, OPT_INT},
    {"TCP_KEEPIDLE", IPPROTO_TCP, TCP_KEEPIDLE, OPT_INT},
    {"TCP_KEEPINTVL", IPPROTO_TCP, TCP_KEEPINTVL, OPT_INT},
    {"TCP_KEEPCNT", IPPROTO_TCP, TCP_KEEPCNT, OPT_INT},
    {"TCP_SYNCNT", IPPROTO_TCP, TCP_SYNCNT, OPT_INT},
    {"TCP_LINGER2", IPPROTO_TCP, TCP_LINGER2, OPT_INT},
    {"TCP_DEFER_ACCEPT", IPPROTO_TCP, TCP_DEFER_ACCEPT, OPT_INT},
    {"TCP_QUICKACK", IPPROTO_TCP, TCP_QUICKACK, OPT_INT},
    {"TCP_USER_TIMEOUT", IPPROTO_TCP, TCP_USER_TIMEOUT, OPT_INT},
    {"TCP_NOTSENT_LOWAT", IPPROTO_TCP, TCP_NOTSENT_LOWAT, OPT_INT},
    {"TCP_WINDOW_CLAMP", IPPROTO_TCP, TCP_WINDOW_CLAMP, OPT_INT},
    {NULL, 0, 0, OPT_INT},
};

/* "A|B|C" or a number -> value; -1 with *ok = 0 on an unknown name. */
static long parse_flags(const char *s, const struct named *tab, int *ok)
{
    char tmp[256];
    long v = 0;
    *ok = 1;
    snprintf(tmp, sizeof tmp, "%s", s);
    for (char *save = NULL, *t = strtok_r(tmp, "|", &save); t; t = strtok_r(NULL, "|", &save)) {
        char *end;
        long n = strtol(t, &end, 0);
        if (*end == 0 && end != t) {
            v |= n;
            continue;
        }
        int found = 0;
        for (const struct named *p = tab; p->name; p++)
            if (strcmp(p->name, t) == 0) {
                v |= p->value;
                found = 1;
                break;
            }
        if (!found)
            *ok = 0;
    }
    return v;
}

/* Names of the bits set in v, "|"-joined ("0" if none). */
static void flag_names(long v, const struct named *tab, char *dst, size_t n)
{
    size_t len = 0;
    dst[0] = 0;
    for (const struct named *p = tab; p->name; p++) {
        if (p->value == 0 || (v & p->value) != p->value)
            continue;
        /* EPOLLET / EPOLLONESHOT are never reported */
        if (p->value == EPOLLET || p->value == (long)EPOLLONESHOT)
            continue;
        len += (size_t)snprintf(dst + len, n - len, "%s%s", len ? "|" : "", p->name);
        v &= ~p->value;
        if (len >= n)
            break;
    }
    if (v && len < n)
        len += (size_t)snprintf(dst + len, n - len, "%s0x%lx", len ? "|" : "", v);
    if (!dst[0])
        snprintf(dst, n, "0");
}

static void hexify(const unsigned char *p, size_t n, char *dst)
{
    static const char hx[] = "0123456789abcdef";
    for (size_t i = 0; i < n; i++) {
        dst[2 * i] = hx[p[i] >> 4];
        dst[2 * i + 1] = hx[p[i] & 15];
    }
    dst[2 * n] = 0;
}

static char extra[2 * HEX_MAX + 256];

static void data_extra(ssize_t n)
{
    if (n <= 0) {
        extra[0] = 0;
        return;
    }
    if ((size_t)n <= HEX_MAX) {
        memcpy(extra, "data=", 5);
        hexify(buf, (size_t)n, extra + 5);
    } else {
        extra[0] = 0;
    }
}

/* The pattern of a socket's stream: 'A' + offset % 26. */
static void fill_pattern(struct slot *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        buf[i] = (unsigned char)('A' + (s->wr_off + i) % 26);
}

static int parse_addr(const char *a, const char *p, struct sockaddr_in *sa)
{
    memset(sa, 0, sizeof *sa);
    sa->sin_family = AF_INET;
    sa->sin_port = htons((uint16_t)atoi(p));
    if (strcmp(a, "local") == 0) {
        sa->sin_addr = local_ip;
        return 0;
    }
    return inet_pton(AF_INET, a, &sa->sin_addr) == 1 ? 0 : -1;
}

/* ---- commands: argv[0] is the command ---- */

/* 1 when the command has its n words; else answered, 0. */
static int need_args(int argc, char **argv, int n)
{
    if (argc >= n)
        return 1;
    reply("r -1 EBADMSG why=%s:needs_%d_args", argv[0], n - 1);
    return 0;
}

static struct slot *need_slot(const char *name)
{
    struct slot *s = find(name);
    if (!s)
        reply("r -1 EBADMSG why=no_such_name:%s", name);
    return s;
}

/* The socket a command names in argv[1], once it has its n words; NULL
 * (answered already) when it has fewer or names nothing. */
static struct slot *cmd_slot(int argc, char **argv, int n)
{
    return need_args(argc, argv, n) ? need_slot(argv[1]) : NULL;
}

/* The answer of a call that may have placed the socket (bind, listen,
 * connect): the idle set watches it again first. */
static void placed(struct slot *s, int r, int e)
{
    idle_watch(s->fd);
    result(r, e, NULL);
}

/* The answer of a call that made fd (-1: failed with e), named name. */
static void named(const char *name, int fd, int e, int is_epoll)
{
    if (fd >= 0 && !add_slot(name, fd, is_epoll)) {
        close(fd);
        reply("r -1 EBADMSG why=too_many_names");
        return;
    }
    result(fd < 0 ? -1 : 0, e, NULL);
}

static void c_socket(int argc, char **argv)
{
    if (!need_args(argc, argv, 2))
        return;
    int type = SOCK_STREAM;
    if (argc > 2 && strcmp(argv[2], "nonblock") == 0)
        type |= SOCK_NONBLOCK;
    int fd = socket(AF_INET, type, 0);
    named(argv[1], fd, errno, 0);
}

static void c_bind(int argc, char **argv)
{
    struct slot *s = cmd_slot(argc, argv, 3);
    if (!s)
        return;
    struct sockaddr_in sa;
    if (parse_addr(argc > 3 ? argv[3] : "local", argv[2], &sa) != 0) {
        reply("r -1 EBADMSG why=bad_address");
        return;
    }
    int r = bind(s->fd, (struct sockaddr *)&sa, sizeof sa);
    placed(s, r, errno);
}

static void c_listen(int argc, char **argv)
{
    struct slot *s = cmd_slot(argc, argv, 3);
    if (!s)
        return;
    int r = listen(s->fd, atoi(argv[2]));
    placed(s, r, errno);
}

static void c_accept(int argc, char **argv)
{
    struct slot *s = cmd_slot(argc, argv, 3);
    if (!s)
        return;
    int flags = (argc > 3 && strcmp(argv[3], "nonblock") == 0) ? SOCK_NONBLOCK : 0;
    struct sockaddr_in sa;
    socklen_t sl = sizeof sa;
    int fd = accept4(s->fd, (struct sockaddr *)&sa, &sl, flags);
    int e = errno;
    if (fd >= 0) {
        if (!add_slot(argv[2], fd, 0)) {
            close(fd);
            reply("r -1 EBADMSG why=too_many_names");
            return;
        }
        idle_watch(fd);
        char x[64];
        snprintf(x, sizeof x, "port=%u", ntohs(sa.sin_port));
        result(0, 0, x);
        return;
    }
    result(-1, e, NULL);
}

static void c_connect(int argc, char **argv)
{
    struct slot *s = cmd_slot(argc, argv, 4);
    if (!s)
        return;
    struct sockaddr_in sa;
    if (parse_addr(argv[2], argv[3], &sa) != 0) {
        reply("r -1 EBADMSG why=bad_address");
        return;
    }
    int r = connect(s->fd, (struct sockaddr *)&sa, sizeof sa);
    placed(s, r, errno);
}

/* read / write NAME LEN [FLAGS]: read(2) / write(2), or recv / send with
 * FLAGS (MSG_* names). A write sends the socket's pattern; a read answers
 * with the bytes (data_extra). */
static void c_io(int argc, char **argv, int is_write)
{
    struct slot *s = cmd_slot(argc, argv, 3);
    if (!s)
        return;
    size_t len = (size_t)strtoul(argv[2], NULL, 0);
    int ok = 1;
    int flags = argc > 3 ? (int)parse_flags(argv[3], msg_names, &ok) : -1;
    if (!ok || len > READ_MAX) {
        reply("r -1 EBADMSG why=bad_flags_or_length");
        return;
    }
    ssize_t n;
    if (is_write) {
        fill_pattern(s, len);
        n = flags < 0 ? write(s->fd, buf, len) : send(s->fd, buf, len, flags);
    } else {
        n = flags < 0 ? read(s->fd, buf, len) : recv(s->fd, buf, len, flags);
    }
    int e = errno;
    if (is_write && n > 0)
        s->wr_off += (uint64_t)n;
    if (!is_write)
        data_extra(n);
    result(n, e, is_write ? NULL : extra);
}

static void c_read(int argc, char **argv) { c_io(argc, argv, 0); }
static void c_write(int argc, char **argv) { c_io(argc, argv, 1); }

/* read_bad / write_bad NAME LEN: a buffer pointer that is not mapped
 * (a page reserved PROT_NONE): Linux answers EFAULT. */
static void c_badptr(int argc, char **argv, int is_write)
{
    struct slot *s = cmd_slot(argc, argv, 3);
    if (!s)
        return;
    static void *bad;
    if (!bad)
        bad = mmap(NULL, 1 << 16, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    size_t len = (size_t)strtoul(argv[2], NULL, 0);
    ssize_t n = is_write ? write(s->fd, bad, len) : read(s->fd, bad, len);
    result(n, errno, NULL);
}

static void c_read_bad(int argc, char **argv) { c_badptr(argc, argv, 0); }
static void c_write_bad(int argc, char **argv) { c_badptr(argc, argv, 1); }

static void c_shutdown(int argc, char **argv)
{
    struct slot *s = cmd_slot(argc, argv, 3);
    if (!s)
        return;
    int how = strcmp(argv[2], "SHUT_RD") == 0   ? SHUT_RD
              : strcmp(argv[2], "SHUT_WR") == 0 ? SHUT_WR
                                                : SHUT_RDWR;
    int r = shutdown(s->fd, how);
    result(r, errno, NULL);
}

static void c_close(int argc, char **argv)
{
    struct slot *s = cmd_slot(argc, argv, 2);
    if (!s)
        return;
    if (!s->is_epoll)
        epoll_ctl(idle_ep, EPOLL_CTL_DEL, s->fd, NULL);
    int r = close(s->fd);
    int e = errno;
    s->fd = -1;
    result(r, e, NULL);
}

static const struct sockopt_name *find_opt(const char *n)
{
    for (const struct sockopt_name *o = sockopts; o->name; o++)
        if (strcmp(o->name, n) == 0)
            return o;
    return NULL;
}

/* setsockopt NAME OPT VALUE (SO_LINGER: ONOFF,SECS; timeouts: ms) */
static void c_setsockopt(int argc, char **argv)
{
    struct slot *s = cmd_slot(argc, argv, 4);
    if (!s)
        return;
    const struct sockopt_name *o = find_opt(argv[2]);
    if (!o) {
        reply("r -1 EBADMSG why=unknown_option");
        return;
    }
    int r;
    if (o->kind == OPT_LINGER) {
        struct linger l = {0, 0};
        sscanf(argv[3], "%d,%d", &l.l_onoff, &l.l_linger);
        r = setsockopt(s->fd, o->level, o->opt, &l, sizeof l);
    } else if (o->kind == OPT_TIMEVAL) {
        long ms = strtol(argv[3], NULL, 0);
        struct timeval tv = {ms / 1000, (ms % 1000) * 1000};
        r = setsockopt(s->fd, o->level, o->opt, &tv, sizeof tv);
    } else {
        int v = (int)strtol(argv[3], NULL, 0);
        r = setsockopt(s->fd, o->level, o->opt, &v, sizeof v);
    }
    result(r, errno, NULL);
}

static void c_getsockopt(int argc, char **argv)
{
    struct slot *s = cmd_slot(argc, argv, 3);
    if (!s)
        return;
    const struct sockopt_name *o = find_opt(argv[2]);
    if (!o) {
        reply("r -1 EBADMSG why=unknown_option");
        return;
    }
    char x[64];
    int r, e;
    if (o->kind == OPT_LINGER) {
        struct linger l = {0, 0};
        socklen_t sl = sizeof l;
        r = getsockopt(s->fd, o->level, o->opt, &l, &sl);
        e = errno;
        snprintf(x, sizeof x, "val=%d,%d", l.l_onoff, l.l_linger);
    } else if (o->kind == OPT_TIMEVAL) {
        struct timeval tv = {0, 0};
        socklen_t sl = sizeof tv;
        r = getsockopt(s->fd, o->level, o->opt, &tv, &sl);
        e = errno;
        snprintf(x, sizeof x, "val=%ld", (long)(tv.tv_sec * 1000 + tv.tv_usec / 1000));
    } else {
        int v = 0;
        socklen_t sl = sizeof v;
        r = getsockopt(s->fd, o->level, o->opt, &v, &sl);
        e = errno;
        if (o->opt == SO_ERROR && o->level == SOL_SOCKET && v > 0)
            snprintf(x, sizeof x, "val=%s", errname(v));
        else
            snprintf(x, sizeof x, "val=%d", v);
    }
    result(r, e, r == 0 ? x : NULL);
}

static void c_ioctl(int argc, char **argv)
{
    struct slot *s = cmd_slot(argc, argv, 3);
    if (!s)
        return;
    unsigned long req = strcmp(argv[2], "SIOCINQ") == 0 || strcmp(argv[2], "FIONREAD") == 0 ? SIOCINQ
                        : strcmp(argv[2], "SIOCOUTQ") == 0                               ? SIOCOUTQ
                        : strcmp(argv[2], "SIOCOUTQNSD") == 0                            ? SIOCOUTQNSD
                        : strcmp(argv[2], "SIOCATMARK") == 0                             ? SIOCATMARK
                                                                                         : 0;
    if (!req) {
        reply("r -1 EBADMSG why=unknown_ioctl");
        return;
    }
    int v = -1;
    int r = ioctl(s->fd, req, &v);
    char x[32];
    snprintf(x, sizeof x, "val=%d", v);
    result(r, errno, r == 0 ? x : NULL);
}

static void c_nonblock(int argc, char **argv)
{
    struct slot *s = cmd_slot(argc, argv, 2);
    if (!s)
        return;
    int fl = fcntl(s->fd, F_GETFL);
    int r = fcntl(s->fd, F_SETFL, fl | O_NONBLOCK);
    result(r, errno, NULL);
}

static void c_epoll_create(int argc, char **argv)
{
    if (!need_args(argc, argv, 2))
        return;
    int fd = epoll_create1(0);
    named(argv[1], fd, errno, 1);
}

/* epoll_ctl EP ADD|MOD|DEL NAME EVENTS */
static void c_epoll_ctl(int argc, char **argv)
{
    if (!need_args(argc, argv, 4))
        return;
    struct slot *ep = need_slot(argv[1]), *s = ep ? need_slot(argv[3]) : NULL;
    if (!s)
        return;
    int op = strcmp(argv[2], "ADD") == 0 ? EPOLL_CTL_ADD : strcmp(argv[2], "MOD") == 0 ? EPOLL_CTL_MOD : EPOLL_CTL_DEL;
    int ok = 1;
    struct epoll_event ev = {.events = argc > 4 ? (uint32_t)parse_flags(argv[4], ev_names, &ok) : 0,
                             .data.fd = s->fd};
    if (!ok) {
        reply("r -1 EBADMSG why=bad_events");
        return;
    }
    int r = epoll_ctl(ep->fd, op, s->fd, &ev);
    result(r, errno, NULL);
}

/* epoll_wait EP TIMEOUT_MS -> ev=NAME:EVENTS,NAME:EVENTS */
static void c_epoll_wait(int argc, char **argv)
{
    if (!need_args(argc, argv, 3))
        return;
    struct slot *ep = need_slot(argv[1]);
    if (!ep)
        return;
    struct epoll_event evs[16];
    int n = epoll_wait(ep->fd, evs, 16, atoi(argv[2]));
    int e = errno;
    char x[1024] = "ev=";
    size_t len = 3;
    for (int i = 0; i < n; i++) {
        struct slot *s = find_fd(evs[i].data.fd);
        char names[256];
        flag_names((long)evs[i].events, ev_names, names, sizeof names);
        len += (size_t)snprintf(x + len, sizeof x - len, "%s%s:%s", i ? "," : "", s ? s->name : "?", names);
        if (len >= sizeof x)
            break;
    }
    result(n, e, n > 0 ? x : NULL);
}

/* poll NAME EVENTS TIMEOUT_MS -> revents=... */
static void c_poll(int argc, char **argv)
{
    struct slot *s = cmd_slot(argc, argv, 4);
    if (!s)
        return;
    int ok = 1;
    struct pollfd p = {.fd = s->fd, .events = (short)parse_flags(argv[2], poll_names, &ok)};
    if (!ok) {
        reply("r -1 EBADMSG why=bad_events");
        return;
    }
    int n = poll(&p, 1, atoi(argv[3]));
    int e = errno;
    char names[256], x[300];
    flag_names(p.revents, poll_names, names, sizeof names);
    snprintf(x, sizeof x, "revents=%s", names);
    result(n, e, n >= 0 ? x : NULL);
}

/* ksleep MS: block in a kernel call (nanosleep, not interposed). */
static void c_ksleep(int argc, char **argv)
{
    if (!need_args(argc, argv, 2))
        return;
    long ms = atol(argv[1]);
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
    }
    result(0, 0, NULL);
}

/* reset: abort and forget every socket and set (the end of a scenario). */
static void c_reset(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    int n = 0;
    for (int i = 0; i < MAX_SLOTS; i++) {
        if (slots[i].fd < 0)
            continue;
        if (!slots[i].is_epoll) {
            struct linger l = {1, 0};
            setsockopt(slots[i].fd, SOL_SOCKET, SO_LINGER, &l, sizeof l);
            epoll_ctl(idle_ep, EPOLL_CTL_DEL, slots[i].fd, NULL);
        }
        close(slots[i].fd);
        slots[i].fd = -1;
        n++;
    }
    result(n, 0, NULL);
}

struct cmd {
    const char *name;
    void (*fn)(int argc, char **argv);
};

static const struct cmd cmd_table[] = {
    {"socket", c_socket},         {"bind", c_bind},
    {"listen", c_listen},         {"accept", c_accept},
    {"connect", c_connect},       {"read", c_read},
    {"write", c_write},           {"read_bad", c_read_bad},
    {"write_bad", c_write_bad},   {"shutdown", c_shutdown},
    {"close", c_close},           {"setsockopt", c_setsockopt},
    {"getsockopt", c_getsockopt}, {"ioctl", c_ioctl},
    {"nonblock", c_nonblock},     {"epoll_create", c_epoll_create},
    {"epoll_ctl", c_epoll_ctl},   {"epoll_wait", c_epoll_wait},
    {"poll", c_poll},             {"ksleep", c_ksleep},
    {"reset", c_reset},           {NULL, NULL},
};

static void run_line(char *line)
{
    char *argv[MAX_ARGS];
    int argc = 0;
    for (char *save = NULL, *t = strtok_r(line, " \t", &save); t && argc < MAX_ARGS;
         t = strtok_r(NULL, " \t", &save))
        argv[argc++] = t;
    if (argc == 0) {
        reply("r -1 EBADMSG why=empty");
        return;
    }
    for (const struct cmd *c = cmd_table; c->name; c++)
        if (strcmp(c->name, argv[0]) == 0) {
            errno = 0;
            c->fn(argc, argv);
            return;
        }
    reply("r -1 EBADMSG why=unknown_command:%s", argv[0]);
}

int main(int argc, char **argv)
{
    if (argc != 2 || inet_pton(AF_INET, argv[1], &local_ip) != 1) {
        fprintf(stderr, "usage: conform_agent LOCAL_IPV4\n");
        return 2;
    }
    signal(SIGPIPE, SIG_IGN);
    for (int i = 0; i < MAX_SLOTS; i++)
        slots[i].fd = -1;
    idle_ep = epoll_create1(0);
    struct epoll_event ev = {.events = EPOLLIN, .data.fd = 0};
    if (idle_ep < 0 || epoll_ctl(idle_ep, EPOLL_CTL_ADD, 0, &ev) != 0) {
        perror("conform_agent: epoll");
        return 1;
    }
    fcntl(0, F_SETFL, fcntl(0, F_GETFL) | O_NONBLOCK);
    /* A listener of the agent's own (port 1), so that the stack runs and
     * the idle set holds a stack socket from the start. */
    int warm = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons(1), .sin_addr = local_ip};
    if (warm < 0 || bind(warm, (struct sockaddr *)&sa, sizeof sa) != 0 || listen(warm, 1) != 0) {
        fprintf(stderr, "conform_agent: listener on port 1: %s\n", strerror(errno));
        return 1;
    }
    idle_watch(warm);
    poll_ep = epoll_create1(0);
    struct epoll_event wev = {.events = EPOLLIN, .data.fd = warm};
    if (poll_ep < 0 || epoll_ctl(poll_ep, EPOLL_CTL_ADD, warm, &wev) != 0) {
        perror("conform_agent: epoll");
        return 1;
    }
    reply("ready pid=%d", (int)getpid());

    static char line[4096];
    size_t have = 0;
    for (;;) {
        struct epoll_event evs[8];
        int n = epoll_wait(idle_ep, evs, 8, -1);
        if (n < 0 && errno != EINTR) {
            perror("conform_agent: epoll_wait");
            return 1;
        }
        for (;;) {
            ssize_t r = read(0, line + have, sizeof line - 1 - have);
            if (r == 0)
                return 0;
            if (r < 0)
                break; /* EAGAIN: back to the idle wait */
            have += (size_t)r;
            char *nl;
            while ((nl = memchr(line, '\n', have))) {
                *nl = 0;
                size_t used = (size_t)(nl - line) + 1;
                struct epoll_event pev;
                epoll_wait(poll_ep, &pev, 1, 0); /* take what arrived first */
                run_line(line);
                memmove(line, nl + 1, have - used);
                have -= used;
            }
            if (have == sizeof line - 1)
                have = 0; /* an overlong line: dropped */
        }
    }
}
