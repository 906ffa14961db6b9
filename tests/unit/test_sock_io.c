/*
 * test_sock_io.c - the read and write families of a stack socket as the
 * application calls them (lstack_readv / lstack_writev / lstack_recvmsg /
 * lstack_sendmsg in posix/io_calls.c, then posix/sock_io.c and iov.c), over
 * a real connection between two stacks on the memory port: up to IOV_MAX
 * entries, Linux's errno past it and for bad lengths, partial non-blocking
 * writes, blocking calls that resume inside an entry. The runtime is
 * fake_runtime.c (fake_poll polls both stacks, plus a hook that plays the
 * peer); the fd table and the event layer are real. TAP output.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <limits.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include "conf/conf.h"
#include "fake_runtime.h"
#include "pair_conf.h"
#include "posix/calls.h"
#include "posix/fdtable.h"
#include "posix/iov.h"
#include "posix/sock_fd_priv.h"
#include "runtime/runtime.h"
#include "sock/lsock.h"
#include "stack/stack.h"
#include "tap.h"

enum { PORT = 6379, BIG = 1024 * 1024, ENTRY = 1024 };

/* sock_fd.c's pieces that sock_io.c calls: never a forked child here, and a
 * timeout on every blocking call so that a bug fails instead of hanging. */
bool sock_child_refuses(void)
{
    return false;
}

long sock_timeout(const struct sock_file *sf, bool send)
{
    (void)sf;
    (void)send;
    return 10000;
}

static const struct fd_ops test_ops = {
    .kind = "test stack socket",
    .recvmsg = sock_recvmsg,
    .sendmsg = sock_sendmsg,
};

static struct stack *stacks[2];
static struct sock_file files[2]; /* [0]: client on A, [1]: accepted on B */
static int fds[2];
static unsigned char *out_buf, *in_buf;

static unsigned char pattern(size_t i)
{
    return (unsigned char)(i * 131 + i / 509);
}

/* Poll both stacks until the server side holds n unread bytes (or ~2 s). */
static size_t pump_until_nread(size_t n)
{
    size_t have = 0;
    for (int i = 0; i < 4000; i++) {
        fake_lock();
        fake_poll();
        have = lsock_nread(files[1].ls);
        fake_unlock();
        if (have >= n)
            break;
    }
    return have;
}

/* Read and drop everything the server side holds, after letting it come. */
static size_t drain_server(void)
{
    size_t total = 0;
    for (int round = 0; round < 200; round++) {
        fake_lock();
        fake_poll();
        for (;;) {
            struct iovec v = {in_buf, BIG};
            ssize_t n = lsock_recv(files[1].ls, &v, 1, 0);
            if (n <= 0)
                break;
            total += (size_t)n;
        }
        fake_unlock();
    }
    return total;
}

/* Connect A -> B and register both ends as stack-socket fds. */
static int open_pair(uint32_t b_addr)
{
    struct lsock *l = NULL, *c = NULL, *s = NULL;
    fake_lock();
    int rc = lsock_new(stacks[1], &l);
    rc = rc == 0 ? lsock_bind(l, b_addr, htons(PORT)) : rc;
    rc = rc == 0 ? lsock_listen(l, 4) : rc;
    rc = rc == 0 ? lsock_new(stacks[0], &c) : rc;
    rc = rc == 0 ? lsock_connect(c, b_addr, htons(PORT)) : rc;
    fake_unlock();
    if (rc != -EINPROGRESS)
        return -1;
    for (int i = 0; i < 2000 && s == NULL; i++) {
        fake_lock();
        fake_poll();
        if (lsock_accept(l, &s) != 0)
            s = NULL;
        fake_unlock();
    }
    if (s == NULL)
        return -1;
    for (int i = 0; i < 100; i++) { /* the client sees the handshake done */
        fake_lock();
        fake_poll();
        fake_unlock();
    }
    struct lsock *ls[2] = {c, s};
    for (int i = 0; i < 2; i++) {
        int one = 1;
        lsock_setsockopt(ls[i], IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
        files[i] = (struct sock_file){.refs = 1, .ls = ls[i], .loop = lsock_loop(ls[i]), .decided = true};
        fds[i] = socket(AF_INET, SOCK_STREAM, 0);
        fake_sock_map(fds[i], ls[i], false);
        if (fdt_set(fds[i], &test_ops, &files[i]) != 0)
            return -1;
    }
    return 0;
}

/* n entries of len bytes each over buf, with the pattern from offset 0. */
static void fill_entries(struct iovec *iov, int n, size_t len, unsigned char *buf, bool set)
{
    for (int i = 0; i < n; i++) {
        iov[i].iov_base = buf + (size_t)i * len;
        iov[i].iov_len = len;
    }
    if (set)
        for (size_t i = 0; i < (size_t)n * len; i++)
            buf[i] = pattern(i);
}

static bool same_as_pattern(const unsigned char *buf, size_t n, size_t *first_bad)
{
    for (size_t i = 0; i < n; i++) {
        if (buf[i] != pattern(i)) {
            *first_bad = i;
            return false;
        }
    }
    return true;
}

static struct iovec iov[LSTACK_IOV_MAX + 1];

static void t_writev_max(void)
{
    fill_entries(iov, LSTACK_IOV_MAX, 1, out_buf, true);
    ssize_t n = lstack_writev(fds[0], iov, LSTACK_IOV_MAX);
    if (n != LSTACK_IOV_MAX)
        printf("#   writev returned %zd (%s)\n", n, n < 0 ? strerror(errno) : "short");
    check(n == LSTACK_IOV_MAX, "writev of 1024 one-byte entries queues all 1024 bytes");
}

static void t_readv_max(void)
{
    size_t have = pump_until_nread(LSTACK_IOV_MAX);
    memset(in_buf, 0, LSTACK_IOV_MAX);
    fill_entries(iov, LSTACK_IOV_MAX, 1, in_buf, false);
    ssize_t n = lstack_readv(fds[1], iov, LSTACK_IOV_MAX);
    size_t bad = 0;
    bool same = n == LSTACK_IOV_MAX && same_as_pattern(in_buf, LSTACK_IOV_MAX, &bad);
    if (!same)
        printf("#   %zu bytes queued, readv returned %zd (%s), first bad byte %zu\n", have, n,
               n < 0 ? strerror(errno) : "-", bad);
    check(same, "readv into 1024 one-byte entries reads them back byte for byte");
}

static void t_msg_max(void)
{
    fill_entries(iov, LSTACK_IOV_MAX, 1, out_buf, true);
    struct msghdr m = {.msg_iov = iov, .msg_iovlen = LSTACK_IOV_MAX};
    ssize_t sent = lstack_sendmsg(fds[0], &m, 0);
    pump_until_nread(LSTACK_IOV_MAX);
    memset(in_buf, 0, LSTACK_IOV_MAX);
    fill_entries(iov, LSTACK_IOV_MAX, 1, in_buf, false);
    ssize_t got = lstack_recvmsg(fds[1], &m, 0);
    size_t bad = 0;
    bool same = got == LSTACK_IOV_MAX && same_as_pattern(in_buf, LSTACK_IOV_MAX, &bad);
    if (sent != LSTACK_IOV_MAX || !same)
        printf("#   sendmsg %zd, recvmsg %zd (%s), first bad byte %zu\n", sent, got, strerror(errno), bad);
    check(sent == LSTACK_IOV_MAX && same, "sendmsg / recvmsg with 1024 entries: all bytes, byte for byte");
}

/* A call that must fail with want and move no byte. */
static void expect_refused(ssize_t n, int err, int want, const char *what)
{
    size_t later = drain_server();
    if (n != -1 || err != want || later != 0)
        printf("#   returned %zd, errno %s (want %s), %zu bytes reached the peer\n", n, strerror(err),
               strerror(want), later);
    check(n == -1 && err == want && later == 0, what);
}

static void t_writev_over_max(void)
{
    fill_entries(iov, LSTACK_IOV_MAX + 1, 1, out_buf, true);
    ssize_t n = lstack_writev(fds[0], iov, LSTACK_IOV_MAX + 1);
    expect_refused(n, errno, EINVAL, "writev of 1025 entries: EINVAL, nothing sent (Linux)");
}

static void t_writev_negative(void)
{
    ssize_t n = lstack_writev(fds[0], iov, -1);
    expect_refused(n, errno, EINVAL, "writev with a count of -1: EINVAL");
}

static void t_sendmsg_over_max(void)
{
    fill_entries(iov, LSTACK_IOV_MAX + 1, 1, out_buf, true);
    struct msghdr m = {.msg_iov = iov, .msg_iovlen = LSTACK_IOV_MAX + 1};
    ssize_t n = lstack_sendmsg(fds[0], &m, 0);
    expect_refused(n, errno, EMSGSIZE, "sendmsg of 1025 entries: EMSGSIZE, nothing sent (Linux)");
}

static void t_bad_length(void)
{
    struct iovec v[2] = {{out_buf, 10}, {out_buf, (size_t)SSIZE_MAX + 1}};
    ssize_t n = lstack_writev(fds[0], v, 2);
    expect_refused(n, errno, EINVAL,
                   "writev with an entry longer than SSIZE_MAX: EINVAL, not even the first entry sent");
}

static void t_read_over_max(void)
{
    struct iovec v = {in_buf, 1};
    ssize_t one = lstack_writev(fds[0], &v, 1); /* something to read, so only the count can fail */
    pump_until_nread(1);
    fill_entries(iov, LSTACK_IOV_MAX + 1, 1, in_buf, false);
    ssize_t rv = lstack_readv(fds[1], iov, LSTACK_IOV_MAX + 1);
    int rv_err = errno;
    struct msghdr m = {.msg_iov = iov, .msg_iovlen = LSTACK_IOV_MAX + 1};
    ssize_t rm = lstack_recvmsg(fds[1], &m, 0);
    int rm_err = errno;
    size_t left = pump_until_nread(1);
    if (rv != -1 || rv_err != EINVAL || rm != -1 || rm_err != EMSGSIZE || left != 1)
        printf("#   write %zd; readv %zd %s; recvmsg %zd %s; %zu byte(s) still queued\n", one, rv,
               strerror(rv_err), rm, strerror(rm_err), left);
    check(rv == -1 && rv_err == EINVAL && rm == -1 && rm_err == EMSGSIZE && left == 1,
          "1025 entries: readv EINVAL, recvmsg EMSGSIZE, the queued byte stays");
    drain_server();
}

static void t_null_array(void)
{
    ssize_t bad = lstack_writev(fds[0], NULL, 1);
    int err = errno;
    ssize_t none = lstack_writev(fds[0], NULL, 0);
    if (bad != -1 || err != EFAULT || none != 0)
        printf("#   writev(NULL, 1) %zd %s; writev(NULL, 0) %zd\n", bad, strerror(err), none);
    check(bad == -1 && err == EFAULT && none == 0, "writev: NULL array with one entry EFAULT, with none 0");
}

/* Non-blocking: one writev of 1 MiB in 1024 entries queues what fits
 * across entries and returns that; the next one finds the buffer full. */
static void t_nonblock_partial(void)
{
    fill_entries(iov, LSTACK_IOV_MAX, ENTRY, out_buf, true);
    files[0].nonblock = true;
    ssize_t n = lstack_writev(fds[0], iov, LSTACK_IOV_MAX);
    ssize_t again = lstack_writev(fds[0], iov, LSTACK_IOV_MAX);
    int again_err = errno;
    files[0].nonblock = false;
    size_t got = 0;
    for (int round = 0; round < 400; round++) {
        fake_lock();
        fake_poll();
        struct iovec v = {in_buf + got, BIG - got};
        ssize_t r = lsock_recv(files[1].ls, &v, 1, 0);
        fake_unlock();
        if (r > 0)
            got += (size_t)r;
    }
    size_t bad = 0;
    bool same = n > 0 && got == (size_t)n && same_as_pattern(in_buf, got, &bad);
    printf("# non-blocking writev of 1 MiB in 1024 entries: %zd bytes (%zd entries and %zd bytes)\n", n,
           n / ENTRY, n % ENTRY);
    if (!(n > ENTRY && n < BIG && again == -1 && again_err == EAGAIN && same))
        printf("#   first %zd, second %zd %s, peer got %zu, first bad byte %zu\n", n, again, strerror(again_err),
               got, bad);
    check(n > ENTRY && n < BIG && again == -1 && again_err == EAGAIN && same,
          "non-blocking writev: a partial count across entries, then EAGAIN; the peer gets exactly those bytes");
}

/* The peer, inside fake_poll: reads what arrived (mode 0) or writes the
 * pattern in 3000-byte steps (mode 1). */
struct peer {
    int mode;
    size_t done;
};

static unsigned peer_hook(void *arg)
{
    struct peer *p = arg;
    if (p->done >= BIG)
        return 0;
    if (p->mode == 0) {
        struct iovec v = {in_buf + p->done, BIG - p->done};
        ssize_t n = lsock_recv(files[1].ls, &v, 1, 0);
        if (n > 0)
            p->done += (size_t)n;
    } else {
        size_t step = BIG - p->done < 3000 ? BIG - p->done : 3000;
        struct iovec v = {out_buf + p->done, step};
        ssize_t n = lsock_send(files[1].ls, &v, 1, 0);
        if (n > 0)
            p->done += (size_t)n;
    }
    return 0;
}

/* Blocking: 1 MiB in 1024 entries; lwIP's send buffer fills again and
 * again, mostly inside an entry, and the call resumes there each time. */
static void t_blocking_resume(void)
{
    fill_entries(iov, LSTACK_IOV_MAX, ENTRY, out_buf, true);
    memset(in_buf, 0, BIG);
    struct peer p = {.mode = 0};
    fake_rt_hook(peer_hook, &p);
    ssize_t n = lstack_writev(fds[0], iov, LSTACK_IOV_MAX);
    for (int i = 0; i < 2000 && p.done < BIG; i++) {
        fake_lock();
        fake_poll();
        fake_unlock();
    }
    fake_rt_hook(NULL, NULL);
    size_t bad = 0;
    bool same = n == BIG && p.done == BIG && same_as_pattern(in_buf, BIG, &bad);
    if (!same)
        printf("#   writev %zd (%s), peer got %zu, first bad byte %zu\n", n, n < 0 ? strerror(errno) : "-", p.done,
               bad);
    check(same, "blocking writev of 1 MiB in 1024 entries: all of it, in order, byte for byte");
}

/* One-entry write() and read() (sock_io.c's fast path, then its loop): a
 * non-blocking write of 1 MiB queues what fits and returns that count, the
 * next one EAGAIN; a blocking one resumes after each partial queueing until
 * all of it is sent; read() returns what arrived. */
static void t_one_entry_write_read(void)
{
    for (size_t i = 0; i < BIG; i++)
        out_buf[i] = pattern(i);
    files[0].nonblock = true;
    ssize_t n = lstack_write(fds[0], out_buf, BIG);
    ssize_t again = lstack_write(fds[0], out_buf + (n > 0 ? n : 0), BIG);
    int again_err = errno;
    files[0].nonblock = false;
    memset(in_buf, 0, BIG);
    size_t got = 0;
    for (int round = 0; round < 400 && n > 0 && got < (size_t)n; round++) {
        fake_lock();
        fake_poll();
        fake_unlock();
        ssize_t r = lstack_read(fds[1], in_buf + got, BIG - got);
        if (r > 0)
            got += (size_t)r;
    }
    size_t bad = 0;
    bool same = n > 0 && got == (size_t)n && same_as_pattern(in_buf, got, &bad);
    if (!(n > 0 && n < BIG && again == -1 && again_err == EAGAIN && same))
        printf("#   first %zd, second %zd %s, read back %zu, first bad byte %zu\n", n, again, strerror(again_err),
               got, bad);
    check(n > 0 && n < BIG && again == -1 && again_err == EAGAIN && same,
          "non-blocking write() of 1 MiB: a partial count, then EAGAIN; read() gets exactly those bytes");

    memset(in_buf, 0, BIG);
    struct peer p = {.mode = 0};
    fake_rt_hook(peer_hook, &p);
    n = lstack_write(fds[0], out_buf, BIG);
    for (int i = 0; i < 2000 && p.done < BIG; i++) {
        fake_lock();
        fake_poll();
        fake_unlock();
    }
    fake_rt_hook(NULL, NULL);
    same = n == BIG && p.done == BIG && same_as_pattern(in_buf, BIG, &bad);
    if (!same)
        printf("#   write %zd (%s), peer got %zu, first bad byte %zu\n", n, n < 0 ? strerror(errno) : "-", p.done, bad);
    check(same, "blocking write() of 1 MiB: all of it, in order, byte for byte");
}

static void t_waitall_resume(void)
{
    for (size_t i = 0; i < BIG; i++)
        out_buf[i] = pattern(i);
    memset(in_buf, 0, BIG);
    fill_entries(iov, LSTACK_IOV_MAX, ENTRY, in_buf, false);
    struct peer p = {.mode = 1};
    fake_rt_hook(peer_hook, &p);
    struct msghdr m = {.msg_iov = iov, .msg_iovlen = LSTACK_IOV_MAX};
    ssize_t n = lstack_recvmsg(fds[0], &m, MSG_WAITALL);
    fake_rt_hook(NULL, NULL);
    size_t bad = 0;
    bool same = n == BIG && same_as_pattern(in_buf, BIG, &bad);
    if (!same)
        printf("#   recvmsg %zd (%s), peer sent %zu, first bad byte %zu\n", n, n < 0 ? strerror(errno) : "-", p.done,
               bad);
    check(same, "recvmsg(MSG_WAITALL) into 1024 entries, data in 3000-byte pieces: 1 MiB byte for byte");
}

int main(void)
{
    struct lstack_conf ca, cb;
    char err[512];
    setvbuf(stdout, NULL, _IOLBF, 0); /* the lines so far survive a crash */
    /* A's send buffer well below the 1 MiB the partial-write check sends. */
    if (pair_conf(&ca, "198.18.0.2", "198.18.0.1", "tcp_conn_count = 8;\ntcp_snd_buf = 131072;") != 0 ||
        pair_conf(&cb, "198.18.0.1", "198.18.0.2", "tcp_conn_count = 8;") != 0) {
        check(0, "configs parse");
        return tap_done();
    }
    if (pair_open(&ca, &cb, &stacks[0], &stacks[1], err, sizeof(err)) != 0) {
        printf("# %s\n", err);
        check(0, "stacks open");
        return tap_done();
    }
    fake_rt_stacks(stacks, 2);
    lsock_stack_open(stacks[0], fake_loop(0));
    lsock_stack_open(stacks[1], fake_loop(1));
    out_buf = malloc(BIG + LSTACK_IOV_MAX);
    in_buf = malloc(BIG + LSTACK_IOV_MAX);
    if (out_buf == NULL || in_buf == NULL || open_pair(cb.host_addr) != 0) {
        check(0, "a connection between the two stacks");
        return tap_done();
    }
    t_writev_max();
    t_readv_max();
    t_msg_max();
    t_writev_over_max();
    t_writev_negative();
    t_sendmsg_over_max();
    t_bad_length();
    t_read_over_max();
    t_null_array();
    t_nonblock_partial();
    t_blocking_resume();
    t_waitall_resume();
    t_one_entry_write_read();
    free(out_buf);
    free(in_buf);
    lstack_conf_free(&ca);
    lstack_conf_free(&cb);
    return tap_done();
}
