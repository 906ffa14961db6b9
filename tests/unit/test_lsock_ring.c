/*
 * test_lsock_ring.c - run-to-wakeup's data rings (sock/tcp_ring.c) over two
 * real stacks on the memory port: A (198.18.0.2) is a plain client, B
 * (198.18.0.1) has rings enabled, as the run-to-wakeup mode enables them.
 * The test plays both B's application (lsock_ring_recv / lsock_ring_send,
 * and their _locked fallbacks) and B's stack thread (lsock_service
 * before each poll round of B), on one thread. TAP output.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>

#include "conf/conf.h"
#include "sock/lsock.h"
#include "stack/stack.h"
#include "pair_conf.h"
#include "pair_pump.h"
#include "tap.h"

#define PORT 6390

static struct stack *A, *B;
static uint32_t addr_b;

/* One round of each stack, B's rings serviced first (the stack thread). */
static void pump(int rounds)
{
    for (int i = 0; i < rounds; i++) {
        lsock_service(B);
        pair_pump(A, B, 1);
    }
}

struct counter {
    struct lsock_watcher w;
    unsigned calls;
};

static void count_call(struct lsock_watcher *w)
{
    ((struct counter *)w)->calls++;
}

/* B's application reading: the rings, then the locked path. */
static ssize_t b_read(struct lsock *s, void *buf, size_t len)
{
    struct iovec v = {buf, len};
    ssize_t n = lsock_ring_recv(s, &v, 1, 0);
    return n != -EAGAIN ? n : lsock_ring_recv_locked(s, &v, 1, 0);
}

static ssize_t b_write(struct lsock *s, const void *buf, size_t len)
{
    struct iovec v = {(void *)buf, len};
    ssize_t n = lsock_ring_send(s, &v, 1);
    return n != -EAGAIN ? n : lsock_ring_send_locked(s, &v, 1, 0);
}

static ssize_t a_send(struct lsock *s, const void *buf, size_t len)
{
    struct iovec v = {(void *)buf, len};
    return lsock_send(s, &v, 1, 0);
}

static ssize_t a_recv(struct lsock *s, void *buf, size_t len)
{
    struct iovec v = {buf, len};
    return lsock_recv(s, &v, 1, 0);
}

static int connect_pair(struct lsock **l, struct lsock **c, struct lsock **s)
{
    *l = *c = *s = NULL;
    if (lsock_new(B, l) != 0 || lsock_bind(*l, htonl(INADDR_ANY), htons(PORT)) != 0 || lsock_listen(*l, 8) != 0)
        return -1;
    if (lsock_new(A, c) != 0 || lsock_connect(*c, addr_b, htons(PORT)) != -EINPROGRESS)
        return -1;
    for (int i = 0; i < 2000 && !(lsock_events(*l) & EPOLLIN); i++)
        pump(1);
    return lsock_accept(*l, s) == 0 ? 0 : -1;
}

/* A request in, a reply out, through the rings. */
static void test_request_reply(struct lsock *c, struct lsock *s)
{
    char buf[64];
    check(a_send(c, "hello", 5) == 5, "A sends a request");
    int i;
    for (i = 0; i < 2000 && !(lsock_events(s) & EPOLLIN); i++)
        pump(1);
    checkf(lsock_events(s) & EPOLLIN, "B's ring socket reports EPOLLIN (events %#x)", lsock_events(s));
    struct iovec v = {buf, sizeof(buf)};
    ssize_t n = lsock_ring_recv(s, &v, 1, MSG_PEEK);
    checkf(n == 5 && lsock_nread(s) == 5, "MSG_PEEK through the ring: %zd, %zu still readable", n, lsock_nread(s));
    n = lsock_ring_recv(s, &v, 1, 0);
    checkf(n == 5 && memcmp(buf, "hello", 5) == 0, "read without the lock: %zd bytes", n);
    checkf(!(lsock_events(s) & EPOLLIN) && lsock_nread(s) == 0, "drained: no EPOLLIN (events %#x)",
           lsock_events(s));
    n = lsock_ring_recv(s, &v, 1, 0);
    checkf(n == -EAGAIN, "an empty ring answers -EAGAIN (take the lock): %zd", n);
    checkf(lsock_ring_recv_locked(s, &v, 1, 0) == -EAGAIN, "the locked path too: nothing there yet");
    checkf(lsock_ring_send(s, &(struct iovec){"world", 5}, 1) == 5, "write without the lock");
    for (i = 0; i < 2000 && !(lsock_events(c) & EPOLLIN); i++)
        pump(1);
    n = a_recv(c, buf, sizeof(buf));
    checkf(n == 5 && memcmp(buf, "world", 5) == 0, "A receives the reply the stack moved into lwIP: %zd", n);
}

/* Many small segments: more than the ring's slots wait on the stack's side
 * and come out in order. */
static void test_overflow(struct lsock *c, struct lsock *s)
{
    int one = 1;
    lsock_setsockopt(c, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    enum { SEGS = 600 };
    for (int i = 0; i < SEGS; i++) {
        char b = (char)(i * 13);
        a_send(c, &b, 1);
        pump(1);
    }
    pump(20);
    checkf(lsock_nread(s) == SEGS, "%d one-byte segments readable: %zu", SEGS, lsock_nread(s));
    char buf[SEGS + 10];
    size_t got = 0;
    for (int k = 0; k < 100 && got < SEGS; k++) {
        ssize_t n = b_read(s, buf + got, sizeof(buf) - got);
        if (n > 0)
            got += (size_t)n;
        pump(1);
    }
    int bad = 0;
    for (size_t i = 0; i < got; i++)
        if (buf[i] != (char)(i * 13))
            bad++;
    checkf(got == SEGS && bad == 0, "past the ring's 256 slots: %zu bytes read, %d out of order", got, bad);
}

/* A large transfer each way, bytes counted and checked. */
enum { BULK = 1 << 20 };

static void test_bulk_in(struct lsock *c, struct lsock *s)
{
    static char out[BULK], in[BULK];
    for (size_t i = 0; i < BULK; i++)
        out[i] = (char)(i * 7 + 3);
    size_t sent = 0, got = 0;
    for (int k = 0; k < 100000 && got < BULK; k++) {
        if (sent < BULK) {
            ssize_t n = a_send(c, out + sent, BULK - sent < 5000 ? BULK - sent : 5000);
            if (n > 0)
                sent += (size_t)n;
        }
        ssize_t n = b_read(s, in + got, (size_t)(k % 3000) + 1);
        if (n > 0)
            got += (size_t)n;
        pump(1);
    }
    checkf(got == BULK && memcmp(in, out, BULK) == 0, "1 MiB A -> B read through the ring in pieces: %zu bytes, %s",
           got, got == BULK && memcmp(in, out, BULK) == 0 ? "in order" : "not what was sent");
}

static void test_bulk_out(struct lsock *c, struct lsock *s)
{
    static char out[BULK], in[BULK];
    for (size_t i = 0; i < BULK; i++)
        out[i] = (char)(i * 11 + 5);
    size_t sent = 0, got = 0;
    /* A does not read: B's writes fill lwIP's buffer, then the ring's room
     * (bounded by it) runs out. */
    ssize_t n = 0;
    for (int r = 0; r < 5000 && sent < BULK; r++) {
        n = b_write(s, out + sent, 20000);
        if (n == -EAGAIN)
            break;
        if (n > 0)
            sent += (size_t)n;
        pump(1);
    }
    checkf(n == -EAGAIN && !(lsock_events(s) & EPOLLOUT), "a peer that does not read: B's write gives -EAGAIN "
           "after %zu bytes, no EPOLLOUT (events %#x)", sent, lsock_events(s));
    struct counter k = {.w.changed = count_call};
    lsock_watcher_link(lsock_watchers(s), &k.w);
    for (int i = 0; i < 2000 && !(lsock_events(s) & EPOLLOUT); i++) {
        ssize_t m = a_recv(c, in + got, BULK - got);
        if (m > 0)
            got += (size_t)m;
        pump(1);
    }
    checkf((lsock_events(s) & EPOLLOUT) && k.calls > 0, "A reads: EPOLLOUT again, watcher told %u times", k.calls);
    lsock_watcher_unlink(&k.w);
    for (int r = 0; r < 200000 && got < BULK; r++) {
        if (sent < BULK) {
            n = b_write(s, out + sent, BULK - sent < 20000 ? BULK - sent : 20000);
            if (n > 0)
                sent += (size_t)n;
        }
        ssize_t m = a_recv(c, in + got, BULK - got);
        if (m > 0)
            got += (size_t)m;
        pump(1);
    }
    checkf(got == BULK && memcmp(in, out, BULK) == 0, "1 MiB B -> A written through the ring: %zu bytes, %s", got,
           got == BULK && memcmp(in, out, BULK) == 0 ? "in order" : "not what was sent");
}

static void test_eof(struct lsock *c, struct lsock *s)
{
    char buf[8];
    check(a_send(c, "end", 3) == 3 && lsock_shutdown(c, SHUT_WR) == 0, "A sends and shuts down");
    for (int i = 0; i < 2000 && !(lsock_events(s) & EPOLLRDHUP); i++)
        pump(1);
    ssize_t n = b_read(s, buf, sizeof(buf));
    checkf(n == 3 && memcmp(buf, "end", 3) == 0, "B reads the data before the FIN: %zd", n);
    n = b_read(s, buf, sizeof(buf));
    checkf(n == 0, "then EOF (through the locked path): %zd", n);
    check(b_write(s, "bye", 3) == 3, "B can still write after the peer's FIN");
    lsock_close(s); /* the ring's bytes go before B's FIN */
    for (int i = 0; i < 2000 && !(lsock_events(c) & EPOLLIN); i++)
        pump(1);
    n = a_recv(c, buf, sizeof(buf));
    checkf(n == 3 && memcmp(buf, "bye", 3) == 0, "bytes written just before close arrive: %zd", n);
    for (int i = 0; i < 2000 && !(lsock_events(c) & EPOLLHUP); i++)
        pump(1);
    checkf(a_recv(c, buf, sizeof(buf)) == 0, "then B's FIN");
    lsock_close(c);
}

int main(void)
{
    struct lstack_conf ca, cb;
    char err[512];
    if (pair_conf(&ca, "198.18.0.2", "198.18.0.1", "tcp_conn_count = 16;") != 0 ||
        pair_conf(&cb, "198.18.0.1", "198.18.0.2", "tcp_conn_count = 16;") != 0) {
        printf("not ok 1 - configs parse\n1..1\n");
        return 1;
    }
    addr_b = cb.host_addr;
    if (pair_open(&ca, &cb, &A, &B, err, sizeof(err)) != 0) {
        printf("not ok 1 - stacks open\n# %s\n1..1\n", err);
        return 1;
    }
    lsock_rings_enable(B);
    pump(10);
    struct lsock *l, *c, *s;
    int rc = connect_pair(&l, &c, &s);
    check(rc == 0, "A connects to B's listener, B accepts");
    if (rc != 0)
        return tap_done();
    test_request_reply(c, s);
    test_overflow(c, s);
    test_bulk_in(c, s);
    test_bulk_out(c, s);
    test_eof(c, s);
    lsock_close(l);
    pump(300);
    struct stack_stats sa, sb;
    stack_get_stats(A, &sa);
    stack_get_stats(B, &sb);
    checkf(sb.nic.mbuf_free == sb.nic.mbuf_total && sa.nic.mbuf_free == sa.nic.mbuf_total,
           "every buffer is back: A %u/%u, B %u/%u", sa.nic.mbuf_free, sa.nic.mbuf_total, sb.nic.mbuf_free,
           sb.nic.mbuf_total);
    stack_close(A);
    stack_close(B);
    lstack_conf_free(&ca);
    lstack_conf_free(&cb);
    return tap_done();
}
