/*
 * test_event_epoll.c - epoll over fake stack sockets: epoll_ctl errors like
 * Linux, LT / ET / ONESHOT, MOD / DEL, interest masking, ready-list
 * fairness, kernel fds in the same set (and not starved), kernel halves
 * merged, close / dup / forget, timeout exactness, the rate of kernel
 * checks, the signal mask, low-power sleeping, a forked child's close.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "event/event.h"
#include "posix/epoll_fd.h"
#include "fake_lsock.h"
#include "fake_runtime.h"
#include "posix/fd_ops.h"
#include "posix/fdtable.h"
#include "common/libc.h"
#include "test_event.h"

static int ep_add(int ep, int fd, uint32_t events, uint64_t data)
{
    struct epoll_event ev = {.events = events, .data.u64 = data};
    return epfd_ctl(ep, EPOLL_CTL_ADD, fd, &ev);
}

static int ep_mod(int ep, int fd, uint32_t events, uint64_t data)
{
    struct epoll_event ev = {.events = events, .data.u64 = data};
    return epfd_ctl(ep, EPOLL_CTL_MOD, fd, &ev);
}

static int ep_wait(int ep, struct epoll_event *evs, int max, int timeout)
{
    return epfd_pwait(ep, evs, max, timeout, NULL);
}

static bool is_err(int rc, int err)
{
    return rc == -1 && errno == err;
}

static void t_ctl_errors(void)
{
    struct lsock *s;
    int fd = fake_sock_open(&s, false, NULL);
    int ep = epoll_create1(0), p[2];
    if (pipe(p) != 0)
        return;
    struct epoll_event ev = {.events = EPOLLIN};
    check(is_err(epfd_ctl(ep, EPOLL_CTL_MOD, fd, &ev), ENOENT), "ctl: MOD of a socket never added: ENOENT");
    check(is_err(epfd_ctl(ep, EPOLL_CTL_DEL, fd, NULL), ENOENT), "ctl: DEL of a socket never added: ENOENT");
    check(fdt_get(ep) == NULL, "ctl: a failed MOD leaves the epoll fd the kernel's");
    check(is_err(epfd_ctl(p[0], EPOLL_CTL_ADD, fd, &ev), EINVAL), "ctl: epfd not an epoll fd: EINVAL");
    check(is_err(epfd_ctl(p[0] + 1000, EPOLL_CTL_ADD, fd, &ev), EBADF), "ctl: epfd not open: EBADF");
    check(is_err(epfd_ctl(fd, EPOLL_CTL_ADD, fd, &ev), EINVAL), "ctl: epfd == fd: EINVAL");
    check(is_err(epfd_ctl(ep, EPOLL_CTL_ADD, fd, NULL), EFAULT), "ctl: ADD without an event: EFAULT");
    check(is_err(epfd_ctl(ep, 42, fd, &ev), EINVAL), "ctl: unknown op: EINVAL");
    check(ep_add(ep, fd, EPOLLIN, 1) == 0, "ctl: ADD of a stack socket");
    struct fd_entry *e = fdt_get(ep);
    check(e != NULL && e->ops == &epoll_fd_ops, "ctl: ... gives the epoll fd a lepoll");
    check(is_err(ep_add(ep, fd, EPOLLIN, 1), EEXIST), "ctl: second ADD: EEXIST");
    check(is_err(ep_mod(ep, fd, EPOLLIN | EPOLLEXCLUSIVE, 1), EINVAL), "ctl: MOD with EPOLLEXCLUSIVE: EINVAL");
    check(ep_mod(ep, fd, EPOLLOUT, 2) == 0, "ctl: MOD");
    struct lsock *s2;
    int fd2 = fake_sock_open(&s2, false, NULL);
    static const struct fd_ops sock_like = {.kind = "socket"};
    fdt_set(fd2, &sock_like, s2);
    check(is_err(epfd_ctl(fd2, EPOLL_CTL_ADD, fd, &ev), EINVAL), "ctl: epfd an lstack fd but no epoll: EINVAL");
    fdt_clear(fd2);
    fake_sock_close(fd2, s2);
    check(epfd_ctl(ep, EPOLL_CTL_DEL, fd, NULL) == 0, "ctl: DEL");
    check(is_err(epfd_ctl(ep, EPOLL_CTL_DEL, fd, NULL), ENOENT), "ctl: second DEL: ENOENT");
    /* DEL parks the item (event/epoll.c): invisible but to the next ADD. */
    check(is_err(ep_mod(ep, fd, EPOLLIN, 4), ENOENT), "ctl: MOD after DEL: ENOENT");
    check(ep_add(ep, fd, EPOLLIN, 5) == 0, "ctl: ADD after DEL");
    check(is_err(ep_add(ep, fd, EPOLLIN, 5), EEXIST), "ctl: ... then a second ADD: EEXIST");
    check(epfd_ctl(ep, EPOLL_CTL_DEL, fd, NULL) == 0, "ctl: DEL after that");
    check(ep_add(ep, p[0], EPOLLIN, 3) == 0 && is_err(ep_add(ep, p[0], EPOLLIN, 3), EEXIST),
          "ctl: a kernel fd goes to the kernel set");
    struct epoll_event out[4];
    check(is_err(epfd_pwait(ep, out, 0, 0, NULL), EINVAL), "wait: maxevents 0: EINVAL");
    check(fd_close(ep) == 0 && fdt_get(ep) == NULL, "close forgets the epoll fd");
    close(p[0]);
    close(p[1]);
    fake_sock_close(fd, s);
}

static void t_triggers(void)
{
    struct lsock *s;
    int fd = fake_sock_open(&s, false, NULL);
    int ep = epoll_create1(0);
    struct epoll_event out[4];
    fake_lsock_set(s, EPOLLIN);

    ep_add(ep, fd, EPOLLIN, 7);
    int n = ep_wait(ep, out, 4, 0);
    check(n == 1 && out[0].events == EPOLLIN && out[0].data.u64 == 7, "LT: a ready socket is reported on ADD");
    check(ep_wait(ep, out, 4, 0) == 1, "LT: ... and again while it stays ready");
    fake_lsock_set(s, 0);
    check(ep_wait(ep, out, 4, 0) == 0, "LT: not once it is not");
    fake_lsock_set(s, EPOLLIN | EPOLLOUT);
    ep_mod(ep, fd, EPOLLIN | EPOLLOUT | EPOLLRDNORM, 8);
    n = ep_wait(ep, out, 4, 0);
    check(n == 1 && out[0].events == (EPOLLIN | EPOLLOUT | EPOLLRDNORM) && out[0].data.u64 == 8,
          "LT: MOD changes interest and data (EPOLLRDNORM with EPOLLIN)");
    epfd_ctl(ep, EPOLL_CTL_DEL, fd, NULL);
    check(ep_wait(ep, out, 4, 0) == 0, "DEL: a deleted socket is not reported");
    fake_lsock_set(s, EPOLLIN);
    check(ep_wait(ep, out, 4, 0) == 0, "DEL: ... nor after a change of its readiness");
    fake_lsock_set(s, EPOLLIN | EPOLLOUT);

    ep_add(ep, fd, EPOLLIN | EPOLLET, 9);
    check(ep_wait(ep, out, 4, 0) == 1, "ET: reported once on ADD");
    check(ep_wait(ep, out, 4, 0) == 0, "ET: ... not again without a change");
    fake_lsock_set(s, EPOLLIN | EPOLLOUT);
    check(ep_wait(ep, out, 4, 0) == 1 && out[0].data.u64 == 9, "ET: reported again after a change");
    check(ep_wait(ep, out, 4, 0) == 0, "ET: ... once");
    epfd_ctl(ep, EPOLL_CTL_DEL, fd, NULL);

    ep_add(ep, fd, EPOLLIN | EPOLLONESHOT, 10);
    check(ep_wait(ep, out, 4, 0) == 1, "ONESHOT: reported once");
    fake_lsock_set(s, EPOLLIN);
    check(ep_wait(ep, out, 4, 0) == 0, "ONESHOT: disabled after that, changes or not");
    ep_mod(ep, fd, EPOLLIN | EPOLLONESHOT, 11);
    check(ep_wait(ep, out, 4, 0) == 1 && out[0].data.u64 == 11, "ONESHOT: MOD re-arms it");
    epfd_ctl(ep, EPOLL_CTL_DEL, fd, NULL);

    /* A level-triggered item stays queued after its report; the change
     * that drains it takes it off (its watcher sees the socket's events):
     * the next wait does not check it again. */
    ep_add(ep, fd, EPOLLRDNORM, 13);
    fake_lsock_set(s, EPOLLIN);
    n = ep_wait(ep, out, 4, 0);
    check(n == 1 && out[0].events == EPOLLRDNORM, "LT: EPOLLRDNORM alone is reported (EPOLLIN set)");
    fake_lsock_set(s, 0);
    unsigned long checks = fake_lsock_checks;
    n = ep_wait(ep, out, 4, 0);
    if (!check(n == 0 && fake_lsock_checks == checks, "LT: drained after its report, the item is not checked by the next wait"))
        printf("# %lu checks, %d events\n", fake_lsock_checks - checks, n);
    fake_lsock_set(s, EPOLLIN);
    check(ep_wait(ep, out, 4, 0) == 1, "LT: ... and reported again when data comes");
    fake_lsock_set(s, 0);
    epfd_ctl(ep, EPOLL_CTL_DEL, fd, NULL);

    ep_add(ep, fd, EPOLLOUT, 12);
    fake_lsock_set(s, EPOLLIN);
    check(ep_wait(ep, out, 4, 0) == 0, "mask: EPOLLIN is not reported to an EPOLLOUT watcher");
    fake_lsock_set(s, EPOLLIN | EPOLLERR | EPOLLHUP);
    n = ep_wait(ep, out, 4, 0);
    check(n == 1 && out[0].events == (EPOLLERR | EPOLLHUP), "mask: EPOLLERR and EPOLLHUP always are");
    ep_mod(ep, fd, EPOLLIN | EPOLLRDHUP, 12);
    fake_lsock_set(s, EPOLLIN | EPOLLRDHUP);
    n = ep_wait(ep, out, 4, 0);
    check(n == 1 && out[0].events == (EPOLLIN | EPOLLRDHUP), "mask: EPOLLRDHUP when asked");
    fd_close(ep);
    fake_sock_close(fd, s);
}

static void t_fairness(void)
{
    enum { N = 8 };
    struct lsock *s[N];
    int fd[N], ep = epoll_create1(0);
    for (int i = 0; i < N; i++) {
        fd[i] = fake_sock_open(&s[i], false, NULL);
        fake_lsock_set(s[i], EPOLLIN);
        ep_add(ep, fd[i], EPOLLIN, (uint64_t)i);
    }
    unsigned seen = 0;
    int dups = 0;
    for (int call = 0; call < 3; call++) {
        struct epoll_event out[3];
        int n = ep_wait(ep, out, 3, 0);
        for (int j = 0; j < n; j++) {
            unsigned bit = 1u << out[j].data.u64;
            dups += (seen & bit) != 0 && call < 2;
            seen |= bit;
        }
    }
    check(seen == (1u << N) - 1 && dups == 0, "fairness: 8 LT sockets, maxevents 3: all seen in 3 calls");
    fd_close(ep);
    for (int i = 0; i < N; i++)
        fake_sock_close(fd[i], s[i]);
}

static void write_byte(void *arg)
{
    if (write(*(int *)arg, "x", 1) != 1)
        perror("write");
}

static void set_in(void *arg)
{
    fake_lsock_set(arg, EPOLLIN);
}

static void t_mixed(void)
{
    struct lsock *s;
    int fd = fake_sock_open(&s, false, NULL);
    int ep = epoll_create1(0), p[2];
    if (pipe(p) != 0)
        return;
    ep_add(ep, fd, EPOLLIN, 1);
    ep_add(ep, p[0], EPOLLIN, 2);
    struct epoll_event out[4];
    write_byte(&p[1]);
    double t0 = now_ms();
    int n = ep_wait(ep, out, 4, 1000);
    check(n == 1 && out[0].data.u64 == 2 && now_ms() - t0 < 10, "mixed: a ready pipe is reported at once");
    fake_lsock_set(s, EPOLLIN);
    /* The kernel set was looked at just now: the next calls may return the
     * socket alone, until the kernel check is due (64 us, wait.c). */
    double t1 = now_ms();
    bool both = false;
    while (!both && now_ms() - t1 < WAKE_MS) {
        n = ep_wait(ep, out, 4, 0);
        both = n == 2 && out[0].data.u64 + out[1].data.u64 == 3;
    }
    check(both, "mixed: socket and pipe in one call, once the kernel check is due");

    /* A busy stack filling every slot does not starve the pipe. */
    int got_pipe = 0, calls = 0;
    for (t1 = now_ms(); got_pipe == 0 && now_ms() - t1 < WAKE_MS; calls++)
        got_pipe += ep_wait(ep, out, 1, 0) == 1 && out[0].data.u64 == 2;
    printf("# maxevents 1, ready socket: the pipe reported by call %d\n", calls);
    check(got_pipe == 1, "mixed: maxevents 1 with a ready socket: the pipe gets a turn");

    char c;
    if (read(p[0], &c, 1) != 1)
        perror("read");
    fake_lsock_set(s, 0);
    test_later(20, write_byte, &p[1]);
    n = ep_wait(ep, out, 4, 1000);
    double dt = test_since_job();
    printf("# pipe written: epoll_wait returned %.3f ms later\n", dt);
    check(n == 1 && out[0].data.u64 == 2 && dt < WAKE_MS, "mixed: the kernel fd wakes a waiting epoll_wait");
    if (read(p[0], &c, 1) != 1)
        perror("read");

    test_later(20, set_in, s);
    n = ep_wait(ep, out, 4, 1000);
    dt = test_since_job();
    printf("# socket ready: epoll_wait returned %.3f ms later\n", dt);
    check(n == 1 && out[0].data.u64 == 1 && dt < WAKE_MS, "wake: a socket getting ready wakes epoll_wait");

    int kep = epoll_create1(0);
    struct epoll_event kev = {.events = EPOLLIN, .data.u64 = 5};
    epfd_ctl(kep, EPOLL_CTL_ADD, p[0], &kev);
    write_byte(&p[1]);
    n = epfd_pwait(kep, out, 4, 100, NULL);
    check(n == 1 && out[0].data.u64 == 5 && fdt_get(kep) == NULL, "kernel-only epoll set: straight to the kernel");
    close(kep);
    fd_close(ep);
    close(p[0]);
    close(p[1]);
    fake_sock_close(fd, s);
}

static void t_kernel_half(void)
{
    struct lsock *s;
    uint16_t port = 0;
    int fd = fake_sock_open(&s, true, &port);
    int ep = epoll_create1(0);
    struct epoll_event out[4];
    check(ep_add(ep, fd, EPOLLIN, 5) == 0 && ep_wait(ep, out, 4, 0) == 0, "kernel half: idle listener, nothing");
    int c = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(port), .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    check(connect(c, (struct sockaddr *)&a, sizeof(a)) == 0, "kernel half: a kernel client connects");
    int n = ep_wait(ep, out, 4, 1000);
    check(n == 1 && out[0].events == EPOLLIN && out[0].data.u64 == 5, "kernel half: its connection is reported");
    fake_lsock_set(s, EPOLLIN);
    n = ep_wait(ep, out, 4, 0);
    check(n == 1 && out[0].data.u64 == 5, "kernel half: both halves ready: one event");
    fake_lsock_set(s, 0);
    epfd_ctl(ep, EPOLL_CTL_DEL, fd, NULL);
    check(ep_wait(ep, out, 4, 0) == 0, "kernel half: DEL removes it from the kernel set too");
    close(c);
    fd_close(ep);
    fake_sock_close(fd, s);
}

static void t_lifetime(void)
{
    struct lsock *s, *s2;
    int fd = fake_sock_open(&s, false, NULL), fd2 = fake_sock_open(&s2, false, NULL);
    int ep = epoll_create1(0);
    struct epoll_event out[4];
    ep_add(ep, fd, EPOLLIN, 1);
    int ep2 = fd_dup(ep);
    check(ep2 >= 0 && fdt_get(ep2) != NULL && fdt_get(ep2)->obj == fdt_get(ep)->obj, "dup: the copy shares the lepoll");
    fd_close(ep);
    fake_lsock_set(s, EPOLLIN);
    check(ep_wait(ep2, out, 4, 0) == 1 && fake_lsock_watchers(s) != NULL, "dup: it lives on after the first close");
    fd_close(ep2);
    check(fake_lsock_watchers(s) == NULL, "close: the last close detaches every socket");

    int ea = epoll_create1(0), eb = epoll_create1(0);
    ep_add(ea, fd, EPOLLIN, 1);
    ep_add(eb, fd, EPOLLIN, 1);
    ep_add(ea, fd2, EPOLLIN, 2);
    fake_sock_close(fd, s);
    fake_lsock_set(s2, EPOLLIN);
    int n = ep_wait(ea, out, 4, 0);
    check(n == 1 && out[0].data.u64 == 2 && ep_wait(eb, out, 4, 0) == 0,
          "forget: a closed socket leaves every epoll set");

    fake_child = true;
    struct fd_entry *e = fdt_get(ea), saved = *e;
    e = &saved;
    check(fd_close(ea) == 0 && fdt_get(ea) == NULL && fake_lsock_watchers(s2) != NULL,
          "child: closing an epoll fd only drops its own view");
    fake_child = false;
    /* The "parent" still owns that lepoll: give it an fd again to free it. */
    int again = epoll_create1(0);
    fdt_set(again, &epoll_fd_ops, e->obj);
    fd_close(again);
    check(fake_lsock_watchers(s2) == NULL, "child: the lepoll is left intact for the parent");
    fd_close(eb);
    fake_sock_close(fd2, s2);
}

static int (*real_epoll_wait)(int, struct epoll_event *, int, int);
static unsigned long kernel_checks;

static int counting_epoll_wait(int ep, struct epoll_event *evs, int max, int timeout)
{
    kernel_checks++;
    return real_epoll_wait(ep, evs, max, timeout);
}

static unsigned check_mask(void *arg)
{
    sigset_t cur;
    pthread_sigmask(SIG_SETMASK, NULL, &cur);
    if (sigismember(&cur, SIGUSR1))
        *(bool *)arg = true;
    return 0;
}

static double cpu_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static void t_timing(void)
{
    struct lsock *s;
    int fd = fake_sock_open(&s, false, NULL);
    int ep = epoll_create1(0);
    struct epoll_event out[4];
    ep_add(ep, fd, EPOLLIN, 1);

    unsigned long polls0 = fake_polls;
    double t0 = now_ms();
    int n = ep_wait(ep, out, 4, 0);
    check(n == 0 && fake_polls - polls0 == 1 && now_ms() - t0 < WAKE_MS, "timeout 0: exactly one round");

    real_epoll_wait = libc.epoll_wait;
    libc.epoll_wait = counting_epoll_wait;
    kernel_checks = 0;
    polls0 = fake_polls;
    t0 = now_ms();
    n = ep_wait(ep, out, 4, 100);
    double dt = now_ms() - t0;
    libc.epoll_wait = real_epoll_wait;
    printf("# idle epoll_wait(100): %.3f ms, %lu poll rounds, %lu kernel checks\n", dt, fake_polls - polls0,
           kernel_checks);
    check(n == 0 && dt >= 100 && dt < 100 + LATE_MS, "timeout: idle epoll_wait(100) returns after 100 ms (not LATE_MS later)");
    check(kernel_checks <= 100000 / 64 + 10 && kernel_checks < fake_polls - polls0,
          "idle: the kernel set is checked at most every 64 us, not every round");

    bool masked = false;
    sigset_t mask, cur;
    sigemptyset(&mask);
    sigaddset(&mask, SIGUSR1);
    fake_rt_hook(check_mask, &masked);
    epfd_pwait(ep, out, 4, 5, &mask);
    fake_rt_hook(NULL, NULL);
    pthread_sigmask(SIG_SETMASK, NULL, &cur);
    check(masked && !sigismember(&cur, SIGUSR1), "sigmask: applied during the wait, restored after");

    fake_set_low_power(true);
    double c0 = cpu_ms();
    t0 = now_ms();
    n = ep_wait(ep, out, 4, 100);
    dt = now_ms() - t0;
    double cpu = cpu_ms() - c0;
    printf("# low power idle epoll_wait(100): %.3f ms, %.3f ms CPU\n", dt, cpu);
    check(n == 0 && dt >= 100 && dt < 100 + LATE_MS, "low power: timeout still exact");
    check(cpu < 40, "low power: an idle wait sleeps (CPU well under wall time)");
    test_later(30, set_in, s);
    n = ep_wait(ep, out, 4, 1000);
    dt = test_since_job();
    printf("# low power: socket ready, seen %.3f ms later\n", dt);
    check(n == 1 && dt < WAKE_MS, "low power: a socket getting ready is seen within WAKE_MS");
    fake_set_low_power(false);
    fd_close(ep);
    fake_sock_close(fd, s);
}

/* Every clock_gettime of this binary (lstack's objects are linked in)
 * comes here: counted, then the system call itself. */
static unsigned long clock_reads;

int clock_gettime(clockid_t id, struct timespec *ts)
{
    __atomic_add_fetch(&clock_reads, 1, __ATOMIC_RELAXED);
    return (int)syscall(SYS_clock_gettime, id, ts);
}

/* Issue 11: a set whose every call returns stack events looks at its
 * kernel fds at most every 64 us (not one epoll_wait(0) syscall per call),
 * and a kernel fd in it is still reported within that bound. */
static void t_busy_kernel(void)
{
    struct lsock *s;
    int fd = fake_sock_open(&s, false, NULL);
    int ep = epoll_create1(0), p[2];
    if (pipe(p) != 0)
        return;
    ep_add(ep, fd, EPOLLIN, 1);
    ep_add(ep, p[0], EPOLLIN, 2);
    fake_lsock_set(s, EPOLLIN); /* level-triggered, never drained: busy */
    struct epoll_event out[4];

    real_epoll_wait = libc.epoll_wait;
    libc.epoll_wait = counting_epoll_wait;
    kernel_checks = 0;
    unsigned long calls = 0;
    double t0 = now_ms(), dt;
    while ((dt = now_ms() - t0) < 20) {
        int n = ep_wait(ep, out, 4, -1);
        calls += n == 1 && out[0].data.u64 == 1;
    }
    unsigned long checks = kernel_checks;
    printf("# busy set, 20 ms: %lu calls returned the socket, %lu kernel checks\n", calls, checks);
    check(checks <= (unsigned long)(dt * 1000 / 64) + 10 && checks * 4 < calls,
          "busy: a set returning stack events checks the kernel at most every 64 us, not every call");

    /* A call with a timeout that returns from its first round reads the
     * TSC, not CLOCK_MONOTONIC (the deadline is taken after that round). */
    unsigned long reads0 = __atomic_load_n(&clock_reads, __ATOMIC_RELAXED);
    int got1 = 0;
    for (int i = 0; i < 1000; i++)
        got1 += ep_wait(ep, out, 4, 100) == 1;
    unsigned long reads = __atomic_load_n(&clock_reads, __ATOMIC_RELAXED) - reads0;
    printf("# busy set: 1000 epoll_wait(100) calls, %lu clock_gettime calls\n", reads);
    check(got1 == 1000 && reads < 100, "busy: epoll_wait(timeout) returning at once reads no clock_gettime per call");

    /* The pipe, written while the socket keeps the set busy, is reported
     * by a call within the bound (64 us; WAKE_MS for a loaded machine). */
    bool got = false;
    unsigned long before = 0;
    write_byte(&p[1]);
    t0 = now_ms();
    while (!got && (dt = now_ms() - t0) < 1000) {
        int n = ep_wait(ep, out, 4, -1);
        for (int i = 0; i < n; i++)
            got |= out[i].data.u64 == 2;
        before += !got;
    }
    libc.epoll_wait = real_epoll_wait;
    printf("# busy set: pipe reported %.3f ms after the write, %lu calls before it\n", dt, before);
    check(got && dt < WAKE_MS, "busy: a kernel fd in the busy set is reported within the bound");

    /* A set with nothing from the stack always looks: epoll_wait(0) right
     * after a check still reports a pipe written in between. */
    char c;
    if (read(p[0], &c, 1) != 1)
        perror("read");
    fake_lsock_set(s, 0);
    ep_wait(ep, out, 4, 0);
    write_byte(&p[1]);
    int n = ep_wait(ep, out, 4, 0);
    check(n == 1 && out[0].data.u64 == 2, "busy: epoll_wait(0) with an idle stack reports a pipe written just before");
    fd_close(ep);
    close(p[0]);
    close(p[1]);
    fake_sock_close(fd, s);
}

void test_epoll(void)
{
    t_ctl_errors();
    t_triggers();
    t_fairness();
    t_mixed();
    t_kernel_half();
    t_lifetime();
    t_timing();
    t_busy_kernel();
}
