/* sem_util.c - helpers shared by sem_server and sem_client. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "sem.h"

const char *sem_side = "?";
const char *sem_cur = "?";
const char *sem_step = "start";
char sem_why[768];

void sem_failf(const char *fmt, ...)
{
    if (sem_why[0])
        return; /* keep the first failure */
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(sem_why, sizeof sem_why, fmt, ap);
    va_end(ap);
}

void sem_info(const char *fmt, ...)
{
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    printf("# %s %s: %s\n", sem_side, sem_cur, buf);
    fflush(stdout);
}

const char *en(int e)
{
    static char buf[4][24];
    static int i;
    if (e == 0)
        return "0";
    const char *n = strerrorname_np(e);
    if (n)
        return n;
    i = (i + 1) % 4;
    snprintf(buf[i], sizeof buf[i], "errno %d", e);
    return buf[i];
}

double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

void sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
        ;
}

int send_str(int fd, const char *s)
{
    size_t n = strlen(s), off = 0;
    while (off < n) {
        ssize_t r = write(fd, s + off, n - off);
        if (r < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        off += (size_t)r;
    }
    return 0;
}

int send_fmt(int fd, const char *fmt, ...)
{
    char buf[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    return send_str(fd, buf);
}

int recv_line(int fd, char *buf, size_t n)
{
    size_t len = 0;
    for (;;) {
        char ch;
        ssize_t r = read(fd, &ch, 1);
        if (r < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        if (r == 0) {
            buf[len] = 0;
            if (len == 0)
                return 0;
            errno = EPIPE; /* EOF inside a line */
            return -1;
        }
        if (ch == '\n') {
            buf[len] = 0;
            return (int)len;
        }
        if (len + 1 >= n) {
            buf[len] = 0;
            errno = EMSGSIZE;
            return -1;
        }
        buf[len++] = ch;
    }
}

int expect_line(int fd, const char *want)
{
    char buf[256];
    int r = recv_line(fd, buf, sizeof buf);
    if (r < 0) {
        sem_failf("waiting for line '%s': read failed: %s", want, en(errno));
        return 1;
    }
    if (r == 0) {
        sem_failf("waiting for line '%s': got EOF", want);
        return 1;
    }
    if (strcmp(buf, want) != 0) {
        sem_failf("waiting for line '%s': got '%s'", want, buf);
        return 1;
    }
    return 0;
}

int client_expect_eof(int c)
{
    long got = 0;
    REQ(wait_eof(c, &got) == 0, "waiting for the server to close: %s after %ld bytes", en(errno), got);
    return 0;
}

int wait_eof(int fd, long *got)
{
    char buf[65536];
    long total = 0;
    for (;;) {
        ssize_t r = read(fd, buf, sizeof buf);
        if (r < 0) {
            if (errno == EINTR)
                continue;
            if (got)
                *got = total;
            return -1;
        }
        if (r == 0)
            break;
        total += r;
    }
    if (got)
        *got = total;
    return 0;
}

int wait_fd(int fd, short events, int timeout_ms)
{
    struct pollfd p = {.fd = fd, .events = events};
    int r;
    do
        r = poll(&p, 1, timeout_ms);
    while (r < 0 && errno == EINTR);
    if (r <= 0)
        return r;
    return p.revents;
}

const char *evs_str(uint32_t ev)
{
    static char buf[4][128];
    static int i;
    i = (i + 1) % 4;
    char *b = buf[i];
    b[0] = 0;
    static const struct {
        uint32_t bit;
        const char *name;
    } names[] = {{EPOLLIN, "IN"},     {EPOLLPRI, "PRI"},     {EPOLLOUT, "OUT"},       {EPOLLERR, "ERR"},
                 {EPOLLHUP, "HUP"},   {EPOLLRDHUP, "RDHUP"}, {EPOLLRDNORM, "RDNORM"}, {EPOLLRDBAND, "RDBAND"},
                 {EPOLLWRNORM, "WRNORM"}, {EPOLLWRBAND, "WRBAND"}, {EPOLLMSG, "MSG"}};
    for (size_t k = 0; k < sizeof names / sizeof names[0]; k++) {
        if (ev & names[k].bit) {
            if (b[0])
                strcat(b, "|");
            strcat(b, names[k].name);
            ev &= ~names[k].bit;
        }
    }
    if (ev) {
        char x[24];
        snprintf(x, sizeof x, "%s0x%x", b[0] ? "|" : "", ev);
        strcat(b, x);
    }
    if (!b[0])
        strcpy(b, "none");
    return b;
}

const char *pevs_str(short ev)
{
    /* POLL* and EPOLL* share their values for these bits */
    return evs_str((uint16_t)ev);
}

const char *sin_str(const struct sockaddr_in *sa)
{
    static char buf[2][64];
    static int i;
    i ^= 1;
    char a[INET_ADDRSTRLEN];
    inet_ntop(AF_INET, &sa->sin_addr, a, sizeof a);
    snprintf(buf[i], sizeof buf[i], "%s:%u", a, ntohs(sa->sin_port));
    return buf[i];
}

void set_timeouts(int fd, int ms)
{
    struct timeval tv = {ms / 1000, (ms % 1000) * 1000};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
}

int connect_to(const char *host, int port)
{
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    if (inet_pton(AF_INET, host, &sa.sin_addr) != 1) {
        errno = EINVAL;
        return -1;
    }
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -1;
    set_timeouts(fd, 10000);
    if (connect(fd, (struct sockaddr *)&sa, sizeof sa) < 0) {
        int e = errno;
        close(fd);
        errno = e;
        return -1;
    }
    return fd;
}

void close_rst(int fd)
{
    struct linger lg = {1, 0};
    setsockopt(fd, SOL_SOCKET, SO_LINGER, &lg, sizeof lg);
    close(fd);
}
