/*
 * test_event_poll.c - poll, select and the blocking socket wait over fake
 * stack sockets: the kernel-only fast path, mixed arrays, revents like
 * Linux, kernel halves, wake-ups, timeouts, large arrays; select's bits and
 * EBADF; ev_wait_sock.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <unistd.h>

#include "event/event.h"
#include "posix/sock_fd.h"
#include "fake_lsock.h"
#include "fake_runtime.h"
#include "test_event.h"

static void write_byte(void *arg)
{
    if (write(*(int *)arg, "x", 1) != 1)
        perror("write");
}

static void set_in(void *arg)
{
    fake_lsock_set(arg, EPOLLIN);
}

static int connect_loopback(uint16_t port)
{
    int c = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(port), .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    if (connect(c, (struct sockaddr *)&a, sizeof(a)) != 0)
        perror("connect");
    return c;
}

static void t_poll(void)
{
    int p[2];
    if (pipe(p) != 0)
        return;
    struct pollfd k[1] = {{.fd = p[0], .events = POLLIN}};
    unsigned long polls0 = fake_polls;
    double t0 = now_ms();
    int n = ev_ppoll(k, 1, 50, NULL, &sockfd_lookup);
    double dt = now_ms() - t0;
    check(n == 0 && dt >= 50 && dt < 50 + LATE_MS && fake_polls == polls0, "poll: no stack socket: the kernel waits, no poll round");

    struct lsock *s;
    int fd = fake_sock_open(&s, false, NULL);
    struct pollfd f[3] = {{.fd = fd, .events = POLLIN | POLLOUT}, {.fd = -1, .events = POLLIN, .revents = 7},
                          {.fd = p[0], .events = POLLIN}};
    fake_lsock_set(s, EPOLLIN);
    write_byte(&p[1]);
    n = ev_ppoll(f, 3, 1000, NULL, &sockfd_lookup);
    check(n == 2 && f[0].revents == POLLIN && f[1].revents == 0 && f[2].revents == POLLIN,
          "poll: socket and pipe ready, negative fd ignored");
    char c;
    if (read(p[0], &c, 1) != 1)
        perror("read");

    fake_lsock_set(s, EPOLLIN | EPOLLRDHUP | EPOLLHUP);
    f[0].events = POLLRDNORM | POLLRDHUP;
    n = ev_ppoll(f, 3, 0, NULL, &sockfd_lookup);
    check(n == 1 && f[0].revents == (POLLRDNORM | POLLRDHUP | POLLHUP),
          "poll: POLLRDNORM and POLLRDHUP when asked, POLLHUP always");

    fake_lsock_set(s, 0);
    f[0].events = POLLIN;
    t0 = now_ms();
    n = ev_ppoll(f, 3, 100, NULL, &sockfd_lookup);
    dt = now_ms() - t0;
    printf("# idle poll(100) with a stack socket: %.3f ms\n", dt);
    check(n == 0 && dt >= 100 && dt < 100 + LATE_MS, "poll: idle poll(100) returns after 100 ms (not LATE_MS later)");

    test_later(20, write_byte, &p[1]);
    n = ev_ppoll(f, 3, 1000, NULL, &sockfd_lookup);
    dt = test_since_job();
    check(n == 1 && f[2].revents == POLLIN && dt < WAKE_MS, "poll: a pipe written meanwhile wakes it");
    if (read(p[0], &c, 1) != 1)
        perror("read");

    test_later(20, set_in, s);
    n = ev_ppoll(f, 3, 1000, NULL, &sockfd_lookup);
    dt = test_since_job();
    check(n == 1 && f[0].revents == POLLIN && dt < WAKE_MS, "poll: a socket getting ready wakes it");

    enum { BIG = 40 };
    struct pollfd big[BIG];
    for (int i = 0; i < BIG; i++)
        big[i] = (struct pollfd){.fd = i % 2 ? fd : p[1], .events = POLLOUT};
    fake_lsock_set(s, EPOLLOUT);
    n = ev_ppoll(big, BIG, 0, NULL, &sockfd_lookup);
    check(n == BIG && big[BIG - 1].revents == POLLOUT && big[BIG - 2].revents == POLLOUT,
          "poll: 40 entries (scratch on the heap), duplicates counted each");

    uint16_t port;
    struct lsock *ls;
    int lfd = fake_sock_open(&ls, true, &port);
    struct pollfd l = {.fd = lfd, .events = POLLIN};
    check(ev_ppoll(&l, 1, 0, NULL, &sockfd_lookup) == 0, "poll: kernel half idle");
    int cl = connect_loopback(port);
    n = ev_ppoll(&l, 1, 1000, NULL, &sockfd_lookup);
    check(n == 1 && l.revents == POLLIN, "poll: kernel half's connection is seen");
    close(cl);
    fake_sock_close(lfd, ls);
    fake_sock_close(fd, s);
    close(p[0]);
    close(p[1]);
}

static void t_select(void)
{
    int p[2];
    if (pipe(p) != 0)
        return;
    struct lsock *s, *s2;
    int fd = fake_sock_open(&s, false, NULL), fd2 = fake_sock_open(&s2, false, NULL);
    int nfds = (fd > fd2 ? fd : fd2) + 1;
    if (p[1] >= nfds)
        nfds = p[1] + 1;
    fd_set r, w, e;
    FD_ZERO(&r);
    FD_ZERO(&w);
    FD_ZERO(&e);
    FD_SET(p[0], &r);
    double t0 = now_ms();
    int n = ev_pselect(nfds, &r, NULL, NULL, 30, NULL, &sockfd_lookup);
    double dt = now_ms() - t0;
    check(n == 0 && !FD_ISSET(p[0], &r) && dt >= 30 && dt < 30 + LATE_MS, "select: no stack socket: the kernel's select");

    fake_lsock_set(s, EPOLLIN | EPOLLOUT);
    FD_SET(fd, &r);
    FD_SET(fd2, &r);
    FD_SET(p[0], &r);
    FD_SET(p[1], &w);
    FD_SET(fd, &e);
    n = ev_pselect(nfds, &r, &w, &e, 1000, NULL, &sockfd_lookup);
    check(n == 2 && FD_ISSET(fd, &r) && !FD_ISSET(fd2, &r) && !FD_ISSET(p[0], &r) && FD_ISSET(p[1], &w) &&
              !FD_ISSET(fd, &e),
          "select: readable socket and writable pipe set, the others cleared");

    fake_lsock_set(s, 0);
    FD_ZERO(&r);
    FD_ZERO(&w);
    FD_SET(fd, &r);
    FD_SET(fd2, &w);
    t0 = now_ms();
    n = ev_pselect(nfds, &r, &w, NULL, 50, NULL, &sockfd_lookup);
    dt = now_ms() - t0;
    check(n == 0 && !FD_ISSET(fd, &r) && !FD_ISSET(fd2, &w) && dt >= 50 && dt < 50 + LATE_MS,
          "select: idle stack sockets: 0 after the timeout, sets cleared");

    fake_lsock_set(s2, EPOLLHUP);
    FD_ZERO(&e);
    FD_SET(fd2, &e);
    FD_SET(fd, &r);
    t0 = now_ms();
    n = ev_pselect(nfds, &r, NULL, &e, 40, NULL, &sockfd_lookup);
    dt = now_ms() - t0;
    printf("# select n=%d dt=%.3f\n", n, dt);
    check(n == 0 && dt >= 40 && dt < 40 + LATE_MS, "select: a hang-up is no exceptional condition");

    int bad = p[1] + 10;
    nfds = bad + 1 > nfds ? bad + 1 : nfds;
    FD_ZERO(&r);
    FD_SET(fd, &r);
    FD_SET(bad, &r);
    check(ev_pselect(nfds, &r, NULL, NULL, 0, NULL, &sockfd_lookup) == -1 && errno == EBADF, "select: a closed fd: EBADF");
    fake_sock_close(fd, s);
    fake_sock_close(fd2, s2);
    close(p[0]);
    close(p[1]);
}

static void t_wait_sock(void)
{
    struct lsock *s;
    int fd = fake_sock_open(&s, false, NULL);
    fake_lsock_set(s, EPOLLOUT);
    check(ev_wait_sock(s, fd, false, EPOLLOUT, -1) == EPOLLOUT, "wait_sock: ready now");
    double t0 = now_ms();
    uint32_t ev = ev_wait_sock(s, fd, false, EPOLLIN, 30);
    double dt = now_ms() - t0;
    printf("# wait_sock ev=%x dt=%.3f\n", ev, dt);
    check(ev == 0 && dt >= 30 && dt < 30 + LATE_MS, "wait_sock: timeout after 30 ms (not LATE_MS later)");
    test_later(20, set_in, s);
    ev = ev_wait_sock(s, fd, false, EPOLLIN, -1);
    dt = test_since_job();
    check(ev == EPOLLIN && dt < WAKE_MS, "wait_sock: woken when the socket gets ready");
    fake_lsock_set(s, EPOLLERR);
    check(ev_wait_sock(s, fd, false, EPOLLIN, 0) == EPOLLERR, "wait_sock: EPOLLERR ends any wait");
    fake_sock_close(fd, s);

    uint16_t port;
    fd = fake_sock_open(&s, true, &port);
    int c = connect_loopback(port);
    check(ev_wait_sock(s, fd, true, EPOLLIN, 1000) == EPOLLIN, "wait_sock: kernel half's connection");
    close(c);
    fake_sock_close(fd, s);
}

void test_poll_select(void)
{
    t_poll();
    t_select();
    t_wait_sock();
}
