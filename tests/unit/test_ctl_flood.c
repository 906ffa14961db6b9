/*
 * test_ctl_flood.c - the control socket under floods and shortage (issue
 * 10): silent clients (they delay no one, and are dropped after the
 * request timeout), more clients than it serves at once, a client that
 * stops reading a big dump, the process out of file descriptors (with the
 * server's spare fd usable, and with the limit below it), and ctl_stop
 * with clients connected. Each check says what it measured. One process,
 * no root: a real stack B (a listener and NCONN connections from stack A
 * over the memory port) reported by the test host as 1 or BIG_STACKS
 * stacks. TAP output.
 *
 * Timing: CPU time of the "lstack-ctl" thread comes from
 * /proc/self/task/<tid>/stat (opened before fds run out); latencies are
 * wall-clock with a wide margin for a loaded 2-core machine.
 */
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "conf/conf.h"
#include "ctl/ctl.h"
#include "sock/lsock.h"
#include "stack/stack.h"
#include "ctl_test_host.h"

#include "tap.h"

#define PORT 6379
#define NCONN 20
#define SILENT 10
#define BIG_STACKS 200  /* x (NCONN + 1) records of ~300 bytes: a ~1.3 MB dump */
#define FLOOD_EXTRA "tcp_conn_count = 64;\nunix_prefix = \"f_\";"

static struct stack *A, *B;

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static void pump(int rounds)
{
    for (int i = 0; i < rounds; i++) {
        stack_poll(A);
        stack_poll(B);
    }
}

/* A listener on B and NCONN connections to it from A, all accepted. */
static int setup_conns(void)
{
    struct lsock *l, *c, *s;
    if (lsock_new(B, &l) != 0 || lsock_bind(l, htonl(INADDR_ANY), htons(PORT)) != 0 || lsock_listen(l, 64) != 0)
        return -1;
    for (int i = 0; i < NCONN; i++) {
        if (lsock_new(A, &c) != 0)
            return -1;
        lsock_connect(c, inet_addr("198.18.0.1"), htons(PORT));
        pump(4);
    }
    pump(20);
    for (int i = 0; i < NCONN; i++)
        if (lsock_accept(l, &s) != 0)
            return -1;
    return 0;
}

/* The first line the server sends on fd, within ms ("" if none). */
static const char *first_line(int fd, int ms)
{
    static char line[1024];
    size_t got = 0;
    double end = now_ms() + ms;
    line[0] = '\0';
    while (got < sizeof(line) - 1 && memchr(line, '\n', got) == NULL) {
        struct pollfd p = {.fd = fd, .events = POLLIN};
        int left = (int)(end - now_ms());
        if (left <= 0 || poll(&p, 1, left) <= 0)
            break;
        ssize_t n = recv(fd, line + got, sizeof(line) - 1 - got, 0);
        if (n <= 0)
            break;
        got += (size_t)n;
        line[got] = '\0';
    }
    return line;
}

/* ms for a `show stats` through stackctl's client code; -1 if it failed. */
static double stats_ms(void)
{
    char err[512];
    int rc;
    double t0 = now_ms();
    char *t = ctl_test_ask("{\"version\":1,\"cmd\":\"stats\"}", sc_show_stats, true, &rc, err, sizeof(err));
    double ms = now_ms() - t0;
    if (rc != SC_OK || t == NULL || strstr(t, "\"conn_accepted\":") == NULL) {
        printf("# stats failed after %.0f ms: %s\n", ms, rc != SC_OK ? err : "no counters");
        ms = -1;
    }
    free(t);
    return ms;
}

/* ---- the control thread's CPU time ---- */

/* /proc/self/task/<tid>/stat of the thread named "lstack-ctl", open; -1. */
static int open_ctl_thread_stat(void)
{
    DIR *d = opendir("/proc/self/task");
    int fd = -1;
    struct dirent *e;
    while (d != NULL && fd < 0 && (e = readdir(d)) != NULL) {
        char path[300], comm[32] = "";
        snprintf(path, sizeof(path), "/proc/self/task/%s/comm", e->d_name);
        int c = open(path, O_RDONLY);
        ssize_t n = c >= 0 ? read(c, comm, sizeof(comm) - 1) : -1;
        if (c >= 0)
            close(c);
        if (n > 0 && strncmp(comm, "lstack-ctl\n", 11) == 0) {
            snprintf(path, sizeof(path), "/proc/self/task/%s/stat", e->d_name);
            fd = open(path, O_RDONLY);
        }
    }
    if (d != NULL)
        closedir(d);
    return fd;
}

/* utime + stime of the thread in ms (fields 14 and 15 of stat); -1. */
static double thread_cpu_ms(int statfd)
{
    char buf[1024];
    ssize_t n = pread(statfd, buf, sizeof(buf) - 1, 0);
    if (n <= 0)
        return -1;
    buf[n] = '\0';
    char *p = strrchr(buf, ')'); /* the name may hold spaces */
    unsigned long long ut, st;
    if (p == NULL || sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &ut, &st) != 2)
        return -1;
    return (double)(ut + st) * 1000.0 / (double)sysconf(_SC_CLK_TCK);
}

/* The control thread's CPU time over ms of wall time. */
static double cpu_over(int statfd, int ms)
{
    double c0 = thread_cpu_ms(statfd);
    usleep((useconds_t)ms * 1000);
    double c1 = thread_cpu_ms(statfd);
    return c0 < 0 || c1 < 0 ? 1e9 : c1 - c0;
}

/* ---- the tests ---- */

/* Ten clients that connect and say nothing do not delay an eleventh. */
static void test_silent_clients(const char *path)
{
    int fd[SILENT];
    for (int i = 0; i < SILENT; i++)
        fd[i] = ctl_test_connect(path);
    double ms = stats_ms();
    printf("# show stats behind %d silent clients: %.1f ms\n", SILENT, ms);
    check(ms >= 0 && ms < 1000, "10 connected, silent clients: a stats request is answered within 1 s");
    for (int i = 0; i < SILENT; i++)
        close(fd[i]);
}

/* A client that says nothing is dropped after the request timeout (2 s). */
static void test_silent_dropped(const char *path)
{
    int fd = ctl_test_connect(path);
    double t0 = now_ms();
    bool hello = strstr(first_line(fd, 2000), "\"type\":\"hello\"") != NULL;
    struct pollfd p = {.fd = fd, .events = 0}; /* POLLHUP only */
    int r = poll(&p, 1, 6000);
    double ms = now_ms() - t0;
    printf("# a silent client was dropped after %.0f ms\n", ms);
    check(hello && r == 1 && (p.revents & POLLHUP) && ms > 1500 && ms < 4500,
          "a client that sends no request is dropped after the 2 s request timeout");
    close(fd);
}

/* Past CTL_MAX_PEERS at once, a client is told the server is busy. */
static void test_busy(const char *path)
{
    int fd[CTL_MAX_PEERS], hellos = 0;
    for (int i = 0; i < CTL_MAX_PEERS; i++) {
        fd[i] = ctl_test_connect(path);
        hellos += strstr(first_line(fd[i], 2000), "\"type\":\"hello\"") != NULL;
    }
    int extra = ctl_test_connect(path);
    const char *line = first_line(extra, 2000);
    printf("# %d hellos; client %d got: %s", hellos, CTL_MAX_PEERS + 1, line);
    check(hellos == CTL_MAX_PEERS && strstr(line, "\"type\":\"error\"") != NULL && strstr(line, "busy") != NULL,
          "a client past the most served at once gets a 'busy' error record, not silence");
    close(extra);
    for (int i = 0; i < CTL_MAX_PEERS; i++)
        close(fd[i]);
    double ms = stats_ms();
    check(ms >= 0 && ms < 1000, "once they close, the next request is served");
}

/* A client that asks for a big dump and reads nothing is dropped after
 * the send timeout; others are served meanwhile. */
static void test_stalled_dump(const char *path)
{
    ctl_test_host_stacks(BIG_STACKS);
    int fd = ctl_test_connect(path);
    const char *req = "{\"version\":1,\"cmd\":\"connections\"}\n";
    double t0 = now_ms();
    if (fd < 0 || write(fd, req, strlen(req)) < 0) {
        check(0, "a client for the big dump");
        return;
    }
    usleep(300 * 1000); /* the server fills the socket and waits */
    double ms = stats_ms();
    printf("# show stats while a client stalls a %d-stack dump: %.1f ms\n", BIG_STACKS, ms);
    check(ms >= 0 && ms < 1000, "a client that stops reading a big dump does not delay a stats request");

    struct pollfd p = {.fd = fd, .events = 0}; /* POLLHUP only: reading would unstall it */
    int r = poll(&p, 1, 15000);
    double dropped = now_ms() - t0;
    size_t got = 0, cap = 8u << 20;
    char *buf = malloc(cap);
    ssize_t n;
    while (buf != NULL && got < cap - 1 && (n = recv(fd, buf + got, cap - 1 - got, MSG_DONTWAIT)) > 0)
        got += (size_t)n;
    bool ended = buf != NULL && (buf[got] = '\0', strstr(buf, "\"type\":\"end\"") != NULL);
    printf("# the stalled client was dropped after %.0f ms with %zu bytes queued (no end record: %s)\n", dropped,
           got, ended ? "no" : "yes");
    check(r == 1 && (p.revents & POLLHUP) && dropped > 4000 && dropped < 10000 && got > 0 && !ended,
          "the stalled client is dropped after the 5 s send timeout, its reply cut short");
    free(buf);
    close(fd);
    ctl_test_host_stacks(1);
}

/* Lower RLIMIT_NOFILE to limit and take every free fd below it (dups of
 * 2). Returns how many were taken; *old gets the limit to restore. */
static int exhaust_fds(rlim_t limit, struct rlimit *old, int *taken, int cap)
{
    getrlimit(RLIMIT_NOFILE, old);
    struct rlimit low = {.rlim_cur = limit, .rlim_max = old->rlim_max};
    setrlimit(RLIMIT_NOFILE, &low);
    int n = 0;
    while (n < cap && (taken[n] = fcntl(2, F_DUPFD_CLOEXEC, 0)) >= 0)
        n++;
    return n;
}

static void restore_fds(const struct rlimit *old, int *taken, int n)
{
    for (int i = 0; i < n; i++)
        close(taken[i]);
    setrlimit(RLIMIT_NOFILE, old);
}

static int highest_fd(void)
{
    DIR *d = opendir("/proc/self/fd");
    int hi = 2;
    struct dirent *e;
    while (d != NULL && (e = readdir(d)) != NULL)
        hi = atoi(e->d_name) > hi ? atoi(e->d_name) : hi;
    if (d != NULL)
        closedir(d);
    return hi;
}

/* Out of fds, the server's spare fd takes the client long enough to say
 * why; the thread does not spin on accept. */
static void test_out_of_fds(const char *path, int statfd)
{
    int cl[2] = {socket(AF_UNIX, SOCK_STREAM, 0), socket(AF_UNIX, SOCK_STREAM, 0)};
    static int taken[4096];
    struct rlimit old;
    int n = exhaust_fds((rlim_t)highest_fd() + 8, &old, taken, 4096);
    int e = dup(2) < 0 ? errno : 0;
    const char *line = "";
    if (ctl_test_connect_fd(cl[0], path) == 0)
        line = first_line(cl[0], 2000);
    static char got[1024];
    snprintf(got, sizeof(got), "%s", line);
    ctl_test_connect_fd(cl[1], path); /* a second one, while still out of fds */
    double cpu = cpu_over(statfd, 1000);
    restore_fds(&old, taken, n);
    printf("# %d fds taken (dup then fails: %s); the client got: %s", n, strerror(e), got);
    printf("# lstack-ctl CPU over 1 s out of fds: %.0f ms\n", cpu);
    check(e == EMFILE && strstr(got, "\"type\":\"error\"") != NULL && strstr(got, "out of file descriptors") != NULL &&
              strstr(got, "RLIMIT_NOFILE") != NULL,
          "out of fds (EMFILE): a client gets an error record 'out of file descriptors ... RLIMIT_NOFILE'");
    check(cpu < 200, "out of fds: the control thread does not spin (under 0.2 s of CPU in 1 s)");
    close(cl[0]);
    close(cl[1]);
    double ms = stats_ms();
    check(ms >= 0 && ms < 1000, "fds back: the next request is served");
}

/* With the limit below every fd the server holds, its spare cannot help:
 * the client waits in the backlog, the thread backs off instead of
 * spinning, and serves the client once fds are back. */
static void test_limit_below_spare(const char *path, int statfd)
{
    int cl = socket(AF_UNIX, SOCK_STREAM, 0);
    static int taken[8];
    struct rlimit old;
    int n = exhaust_fds(3, &old, taken, 8);
    int rc = ctl_test_connect_fd(cl, path);
    double cpu = cpu_over(statfd, 1000);
    restore_fds(&old, taken, n);
    double t0 = now_ms();
    const char *line = first_line(cl, 3000);
    double ms = now_ms() - t0;
    printf("# limit 3: lstack-ctl CPU over 1 s: %.0f ms; after the limit is restored the client got (%.0f ms): %s",
           cpu, ms, line);
    check(rc == 0 && cpu < 200, "limit below the spare fd: the control thread does not spin (under 0.2 s in 1 s)");
    check(strstr(line, "\"type\":\"hello\"") != NULL && ms < 2000,
          "once fds are back, the waiting client is served within 2 s");
    close(cl);
}

/* ctl_stop does not wait for a silent client's timeout. */
static void test_stop_with_clients(const char *path)
{
    int fd = ctl_test_connect(path);
    first_line(fd, 1000);
    double t0 = now_ms();
    ctl_stop();
    double ms = now_ms() - t0;
    struct stat st;
    printf("# ctl_stop with a silent client connected: %.1f ms\n", ms);
    check(ms < 1000 && stat(path, &st) != 0, "ctl_stop with a client connected: prompt, the socket removed");
    close(fd);
}

int main(void)
{
    struct lstack_conf cb;
    char err[512];
    if (ctl_test_pair(FLOOD_EXTRA, &cb, &A, &B) != 0)
        return 1;
    pump(10);
    check(setup_conns() == 0, "a listener and 20 connections on stack B");
    char dir[] = "/tmp/lstack-ctl-flood.XXXXXX";
    if (mkdtemp(dir) == NULL) {
        check(0, "a run dir");
        return tap_done();
    }
    setenv(CTL_RUN_DIR_ENV, dir, 1);
    int rc = ctl_start(ctl_test_host(B, 1), &cb, "ctl.conf", err, sizeof(err));
    check(rc == 0, "ctl_start");
    if (rc != 0) {
        printf("# %s\n", err);
        return tap_done();
    }
    char path[256];
    snprintf(path, sizeof(path), "%s", ctl_socket_path());
    int statfd = open_ctl_thread_stat();
    check(statfd >= 0, "the lstack-ctl thread's /proc stat");

    test_silent_clients(path);
    test_silent_dropped(path);
    test_busy(path);
    test_stalled_dump(path);
    test_out_of_fds(path, statfd);
    test_limit_below_spare(path, statfd);
    test_stop_with_clients(path);
    rmdir(dir);
    lstack_conf_free(&cb);
    return tap_done();
}
