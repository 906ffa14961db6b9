/*
 * test_lsock.c - the socket layer (lstack/sock/) over two real stacks wired
 * back to back through the memory port: A (198.18.0.2) is the client side,
 * B (198.18.0.1) the server side, each the other's gateway. No DPDK, no
 * root. TAP output; one behaviour per check.
 *
 * Readiness signals are seen through watchers (lsock.h) that count calls.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

#include "conf/conf.h"
#include "nic/nic.h"
#include "sock/lsock.h"
#include "stack/stack.h"
#include "pair_conf.h"
#include "pair_pump.h"

#define B_MAX_SOCKS 6 /* B's tcp_conn_count: small, to test the limit */
#define PORT 6379

#include "tap.h"

static struct stack *A, *B;
static uint32_t addr_a, addr_b;

/* A counting watcher: what the event layer would link to a socket. */
struct counter {
    struct lsock_watcher w; /* first: the watcher is the counter */
    unsigned calls;
};

static void count_call(struct lsock_watcher *w)
{
    ((struct counter *)w)->calls++;
}

static void watch(struct lsock *s, struct counter *k)
{
    *k = (struct counter){.w.changed = count_call};
    lsock_watcher_link(lsock_watchers(s), &k->w);
}



static void pump(int rounds)
{
    pair_pump(A, B, rounds);
}

/* Poll both stacks until s shows one of events (at most ~2000 rounds). */
static uint32_t pump_until(struct lsock *s, uint32_t events)
{
    return pair_pump_until(A, B, s, events);
}

static ssize_t send_str(struct lsock *s, const char *str)
{
    struct iovec v = {(void *)str, strlen(str)};
    return lsock_send(s, &v, 1, 0);
}

static ssize_t recv_buf(struct lsock *s, void *buf, size_t len, int flags)
{
    struct iovec v = {buf, len};
    return lsock_recv(s, &v, 1, flags);
}

static int get_int(struct lsock *s, int level, int name)
{
    int v = -12345;
    socklen_t len = sizeof(v);
    int rc = lsock_getsockopt(s, level, name, &v, &len);
    return rc < 0 ? rc : v;
}

static int set_int(struct lsock *s, int level, int name, int v)
{
    return lsock_setsockopt(s, level, name, &v, sizeof(v));
}

/* A listener on B:PORT (0.0.0.0). */
static struct lsock *listener(void)
{
    struct lsock *l = NULL;
    if (lsock_new(B, &l) != 0)
        return NULL;
    set_int(l, SOL_SOCKET, SO_REUSEADDR, 1);
    if (lsock_bind(l, htonl(INADDR_ANY), htons(PORT)) != 0 || lsock_listen(l, 128) != 0) {
        lsock_close(l);
        return NULL;
    }
    return l;
}

/* Connect a client on A to the listener l and accept it on B. */
static int pair_with_bufs(struct lsock *l, int rcvbuf, int sndbuf, struct lsock **c, struct lsock **srv);

static int connect_pair(struct lsock *l, struct lsock **c, struct lsock **srv)
{
    return pair_with_bufs(l, 0, 0, c, srv);
}

static void test_new_socket(void)
{
    struct lsock *s = NULL;
    char buf[8];
    check(lsock_new(A, &s) == 0, "lsock_new on A");
    check(lsock_events(s) == (EPOLLOUT | EPOLLHUP), "new socket: EPOLLOUT|EPOLLHUP, like Linux");
    check(recv_buf(s, buf, sizeof(buf), 0) == -ENOTCONN, "recv on a new socket: -ENOTCONN");
    check(send_str(s, "x") == -EPIPE, "send on a new socket: -EPIPE, like Linux");
    check(lsock_shutdown(s, SHUT_WR) == -ENOTCONN, "shutdown on a new socket: -ENOTCONN");
    uint32_t ad;
    uint16_t po;
    check(lsock_name(s, true, &ad, &po) == -ENOTCONN, "no peer name on a new socket");
    check(get_int(s, SOL_SOCKET, SO_TYPE) == SOCK_STREAM && get_int(s, SOL_SOCKET, SO_DOMAIN) == AF_INET &&
              get_int(s, SOL_SOCKET, SO_PROTOCOL) == IPPROTO_TCP,
          "SO_TYPE / SO_DOMAIN / SO_PROTOCOL");
    check(lsock_bind(s, addr_b, htons(1234)) == -EADDRNOTAVAIL, "bind to another host's address: -EADDRNOTAVAIL");
    check(lsock_bind(s, addr_a, 0) == 0, "bind to the stack's address, ephemeral port");
    check(lsock_name(s, false, &ad, &po) == 0 && ad == addr_a && po != 0, "bound name: host address, a port");
    check(lsock_bind(s, addr_a, 0) == -EINVAL, "second bind: -EINVAL");
    check(lsock_connect(s, htonl(0x7f000001), htons(80)) == -ENETUNREACH, "connect to 127.0.0.1 refused (kernel's)");
    errno = EXDEV;
    struct lsock *t = NULL;
    if (lsock_new(A, &t) == 0) {
        lsock_listen(t, 5);
        lsock_close(t);
    }
    check(errno == EXDEV, "errno preserved");
    lsock_close(s);
    check(lsock_count(A) == 0, "closed sockets no longer counted");
}

static void test_options(struct lsock *c)
{
    check(set_int(c, IPPROTO_TCP, TCP_NODELAY, 1) == 0 && get_int(c, IPPROTO_TCP, TCP_NODELAY) == 1,
          "TCP_NODELAY round trip");
    check(set_int(c, SOL_SOCKET, SO_KEEPALIVE, 1) == 0 && get_int(c, SOL_SOCKET, SO_KEEPALIVE) == 1,
          "SO_KEEPALIVE round trip");
    check(set_int(c, IPPROTO_TCP, TCP_KEEPIDLE, 30) == 0 && set_int(c, IPPROTO_TCP, TCP_KEEPINTVL, 5) == 0 &&
              set_int(c, IPPROTO_TCP, TCP_KEEPCNT, 3) == 0 && get_int(c, IPPROTO_TCP, TCP_KEEPIDLE) == 30 &&
              get_int(c, IPPROTO_TCP, TCP_KEEPINTVL) == 5 && get_int(c, IPPROTO_TCP, TCP_KEEPCNT) == 3,
          "TCP_KEEPIDLE / KEEPINTVL / KEEPCNT round trip");
    check(set_int(c, IPPROTO_TCP, TCP_KEEPIDLE, 0) == -EINVAL, "TCP_KEEPIDLE 0: -EINVAL");
    char small = 1;
    check(lsock_setsockopt(c, IPPROTO_TCP, TCP_NODELAY, &small, 1) == -EINVAL, "short option value: -EINVAL");
    check(set_int(c, IPPROTO_TCP, TCP_CORK, 1) == -ENOPROTOOPT, "unknown option: -ENOPROTOOPT");
    check(set_int(c, SOL_SOCKET, SO_RCVBUF, 10000) == 0 && get_int(c, SOL_SOCKET, SO_RCVBUF) == 20000,
          "SO_RCVBUF reads back doubled");
    check(get_int(c, IPPROTO_TCP, TCP_MAXSEG) == 1460, "TCP_MAXSEG of a connection: 1460");
    struct timeval tv = {1, 500000};
    long rcv = 0, snd = -1;
    check(lsock_setsockopt(c, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) == 0, "SO_RCVTIMEO set");
    lsock_timeouts(c, &rcv, &snd);
    check(rcv == 1500 && snd == 0, "lsock_timeouts: 1500 ms receive, no send timeout");
    struct tcp_info ti;
    socklen_t len = sizeof(ti);
    check(lsock_getsockopt(c, IPPROTO_TCP, TCP_INFO, &ti, &len) == 0 && ti.tcpi_state == TCP_ESTABLISHED &&
              ti.tcpi_snd_mss == 1460,
          "TCP_INFO: established, mss 1460");
}

static void test_connect_accept(struct lsock *l, struct lsock **cp, struct lsock **sp)
{
    struct lsock *c = NULL, *s = NULL;
    char buf[16];
    check(lsock_events(l) == 0, "idle listener: no events");
    check(lsock_is_listener(l) && get_int(l, SOL_SOCKET, SO_ACCEPTCONN) == 1, "listener: SO_ACCEPTCONN");
    check(lsock_accept(l, &s) == -EAGAIN, "accept with nothing queued: -EAGAIN");
    struct lsock *d = NULL;
    check(lsock_new(B, &d) == 0 && lsock_bind(d, htonl(INADDR_ANY), htons(PORT)) == -EADDRINUSE,
          "bind to a listening port: -EADDRINUSE");
    check(set_int(d, SOL_SOCKET, SO_REUSEADDR, 1) == 0 && lsock_bind(d, htonl(INADDR_ANY), htons(PORT)) == 0 &&
              lsock_listen(d, 1) == -EADDRINUSE,
          "with SO_REUSEADDR on both: bind passes, listen -EADDRINUSE");
    lsock_close(d);
    check(lsock_new(A, &c) == 0, "client socket");
    check(lsock_connect(c, addr_b, htons(PORT)) == -EINPROGRESS, "connect: -EINPROGRESS");
    check(lsock_events(c) == 0, "connecting socket: no events");
    check(lsock_connect(c, addr_b, htons(PORT)) == -EALREADY, "connect again while connecting: -EALREADY");
    check(recv_buf(c, buf, sizeof(buf), 0) == -EAGAIN, "recv while connecting: -EAGAIN");
    struct counter kc;
    watch(c, &kc);
    check((pump_until(c, EPOLLOUT) & (EPOLLOUT | EPOLLERR)) == EPOLLOUT, "connected: EPOLLOUT");
    check(kc.calls > 0, "the connecting socket's watcher is told on connect");
    lsock_watcher_unlink(&kc.w);
    check(lsock_connect(c, addr_b, htons(PORT)) == 0, "connect after completion: 0 (once)");
    check(lsock_connect(c, addr_b, htons(PORT)) == -EISCONN, "then -EISCONN");
    check(pump_until(l, EPOLLIN) == EPOLLIN, "listener: EPOLLIN with a connection queued");
    check(lsock_accept(l, &s) == 0, "accept");
    check(lsock_events(l) == 0, "listener idle again after accept");
    check(lsock_events(s) == EPOLLOUT, "accepted socket: EPOLLOUT only");
    uint32_t la, pa, sla, spa;
    uint16_t lp, pp, slp, spp;
    check(lsock_name(c, false, &la, &lp) == 0 && la == addr_a && lp != 0, "client local name: A, ephemeral port");
    check(lsock_name(c, true, &pa, &pp) == 0 && pa == addr_b && pp == htons(PORT), "client peer name: B:6379");
    check(lsock_name(s, false, &sla, &slp) == 0 && sla == addr_b && slp == htons(PORT),
          "server local name: B:6379");
    check(lsock_name(s, true, &spa, &spp) == 0 && spa == addr_a && spp == lp, "server peer name: the client");
    *cp = c;
    *sp = s;
}

static void test_small_data(struct lsock *c, struct lsock *s)
{
    char buf[16] = {0};
    check(send_str(c, "hello") == 5, "send 5 bytes");
    struct counter ks1, ks2;
    watch(s, &ks1);
    watch(s, &ks2);
    check(pump_until(s, EPOLLIN) == (EPOLLIN | EPOLLOUT), "server readable");
    check(ks1.calls > 0 && ks2.calls == ks1.calls, "data: both watchers of the receiver told, as often");
    check(lsock_nread(s) == 5, "FIONREAD: 5");
    check(recv_buf(s, buf, 3, MSG_PEEK) == 3 && memcmp(buf, "hel", 3) == 0, "MSG_PEEK reads 3");
    check(lsock_nread(s) == 5, "MSG_PEEK consumes nothing");
    char x[2], y[8];
    struct iovec v[2] = {{x, 2}, {y, 8}};
    check(lsock_recv(s, v, 2, 0) == 5 && memcmp(x, "he", 2) == 0 && memcmp(y, "llo", 3) == 0,
          "recv into two iovecs");
    check(lsock_nread(s) == 0 && recv_buf(s, buf, sizeof(buf), 0) == -EAGAIN, "queue empty: -EAGAIN");
    lsock_watcher_unlink(&ks2.w);
    unsigned before1 = ks1.calls;
    check(send_str(c, "x") == 1 && pump_until(s, EPOLLIN) != 0 && ks1.calls > before1 && ks2.calls == before1,
          "an unlinked watcher is told no more");
    check(recv_buf(s, buf, sizeof(buf), 0) == 1 && buf[0] == 'x', "the next byte");
    lsock_watcher_unlink(&ks1.w);
    check(*lsock_watchers(s) == NULL, "both unlinked: the list is empty");
    check(lsock_events(s) == EPOLLOUT, "server not readable after draining");
    check(send_str(s, "world") == 5, "reply 5 bytes");
    pump_until(c, EPOLLIN);
    check(recv_buf(c, buf, sizeof(buf), 0) == 5 && memcmp(buf, "world", 5) == 0, "client reads the reply");
}

static unsigned char pattern(size_t i, int dir)
{
    return (unsigned char)(i * 7 + i / 251 + (unsigned)dir * 13);
}

/* 1 MB each way at once, respecting -EAGAIN, checked byte for byte. */
static void test_bulk(struct lsock *c, struct lsock *s)
{
    enum { N = 1 << 20 };
    unsigned char *in[2] = {malloc(N), malloc(N)};
    struct lsock *tx[2] = {c, s}, *rx[2] = {s, c};
    size_t sent[2] = {0, 0}, got[2] = {0, 0};
    int eagain = 0, eagain_no_out = 1;
    for (int round = 0; round < 200000 && (got[0] < N || got[1] < N); round++) {
        for (int d = 0; d < 2; d++) {
            unsigned char chunk[20000];
            while (sent[d] < N) { /* fill the send buffer */
                size_t n = N - sent[d] < sizeof(chunk) ? N - sent[d] : sizeof(chunk);
                for (size_t i = 0; i < n; i++)
                    chunk[i] = pattern(sent[d] + i, d);
                struct iovec v = {chunk, n};
                ssize_t r = lsock_send(tx[d], &v, 1, 0);
                if (r <= 0) {
                    eagain += r == -EAGAIN;
                    if (lsock_events(tx[d]) & EPOLLOUT)
                        eagain_no_out = 0;
                    break;
                }
                sent[d] += (size_t)r;
            }
            ssize_t r = recv_buf(rx[d], in[d] + got[d], N - got[d], 0);
            if (r > 0)
                got[d] += (size_t)r;
        }
        pump(1);
    }
    int same = got[0] == N && got[1] == N;
    for (size_t i = 0; same && i < N; i++)
        same = in[0][i] == pattern(i, 0) && in[1][i] == pattern(i, 1);
    check(got[0] == N && got[1] == N, "1 MB arrived each way");
    check(same, "1 MB each way byte for byte");
    check(eagain > 0, "send returned -EAGAIN when the send buffer was full");
    check(eagain_no_out, "no EPOLLOUT while send returns -EAGAIN");
    check(lsock_nread(c) == 0 && lsock_nread(s) == 0, "nothing left unread");
    free(in[0]);
    free(in[1]);
}

static void test_eof(struct lsock *c, struct lsock *s)
{
    char buf[16];
    check(lsock_shutdown(s, SHUT_WR) == 0, "server shutdown(SHUT_WR)");
    check(send_str(s, "x") == -EPIPE, "send after SHUT_WR: -EPIPE");
    uint32_t ev = pump_until(c, EPOLLRDHUP);
    check(ev == (EPOLLIN | EPOLLRDHUP | EPOLLOUT), "client after peer FIN: EPOLLIN|EPOLLRDHUP|EPOLLOUT");
    check(recv_buf(c, buf, sizeof(buf), 0) == 0, "client reads EOF (0)");
    check(send_str(c, "late") == 4, "half-closed: client still sends");
    pump_until(s, EPOLLIN);
    check(recv_buf(s, buf, sizeof(buf), 0) == 4 && memcmp(buf, "late", 4) == 0, "server reads after its SHUT_WR");
    check(lsock_shutdown(c, SHUT_WR) == 0, "client shutdown(SHUT_WR)");
    ev = pump_until(s, EPOLLRDHUP);
    check(recv_buf(s, buf, sizeof(buf), 0) == 0, "server reads EOF");
    pump(20);
    check((lsock_events(s) & EPOLLHUP) && (lsock_events(c) & EPOLLHUP), "both sides: EPOLLHUP after both FINs");
    check(get_int(c, SOL_SOCKET, SO_ERROR) == 0 && get_int(s, SOL_SOCKET, SO_ERROR) == 0, "orderly close: no error");
    lsock_close(c);
    lsock_close(s);
}

static void test_reset(struct lsock *l)
{
    struct lsock *c, *s;
    char buf[16];
    check(connect_pair(l, &c, &s) == 0, "second connection");
    check(lsock_shutdown(c, SHUT_RD) == 0 && (lsock_events(c) & (EPOLLIN | EPOLLRDHUP)) == (EPOLLIN | EPOLLRDHUP) &&
              recv_buf(c, buf, sizeof(buf), 0) == 0,
          "SHUT_RD: EPOLLIN|EPOLLRDHUP and EOF at once");
    send_str(s, "late");
    pump(20);
    check(recv_buf(c, buf, sizeof(buf), 0) == 4, "data arriving after SHUT_RD is still readable, like Linux");
    send_str(c, "unread");
    pump_until(s, EPOLLIN);
    lsock_close(s); /* unread data: RST */
    uint32_t ev = pump_until(c, EPOLLERR);
    check(ev == (EPOLLIN | EPOLLOUT | EPOLLRDHUP | EPOLLERR | EPOLLHUP), "reset peer: IN|OUT|RDHUP|ERR|HUP");
    check(recv_buf(c, buf, sizeof(buf), 0) == -ECONNRESET, "close with unread data: peer reads -ECONNRESET");
    check(recv_buf(c, buf, sizeof(buf), 0) == 0, "then 0");
    check(send_str(c, "x") == -EPIPE, "send after reset: -EPIPE");
    check(!(lsock_events(c) & EPOLLERR), "EPOLLERR gone once the error was read");
    uint32_t ad;
    uint16_t po;
    check(lsock_name(c, true, &ad, &po) == -ENOTCONN, "no peer name after a reset");
    lsock_close(c);

    check(connect_pair(l, &c, &s) == 0, "third connection");
    struct linger lg = {1, 0};
    check(lsock_setsockopt(s, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg)) == 0, "SO_LINGER {1, 0}");
    lsock_close(s);
    pump_until(c, EPOLLERR);
    check(send_str(c, "x") == -ECONNRESET, "SO_LINGER {1,0} close resets: peer's send -ECONNRESET");
    check(send_str(c, "x") == -EPIPE, "then -EPIPE");
    lsock_close(c);

    check(connect_pair(l, &c, &s) == 0, "fourth connection");
    lsock_shutdown(s, SHUT_WR);
    pump_until(c, EPOLLRDHUP);
    check(lsock_setsockopt(s, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg)) == 0, "FIN, then SO_LINGER {1, 0} close");
    lsock_close(s);
    pump_until(c, EPOLLERR);
    check(recv_buf(c, buf, sizeof(buf), 0) == 0, "reset after FIN: recv still 0 (EOF first, like Linux)");
    check(get_int(c, SOL_SOCKET, SO_ERROR) == EPIPE, "reset after FIN: SO_ERROR EPIPE, like Linux");
    lsock_close(c);
}

/* lwIP delays the ACK of a lone segment up to 250 ms; a Nagle sender
 * waits for it. lsock_flush_acks sends it once the data was read. */
static void test_delayed_ack(struct lsock *l)
{
    struct lsock *c, *s;
    char buf[8];
    struct stack_stats before, after;
    check(connect_pair(l, &c, &s) == 0, "connection with Nagle on");
    send_str(c, "a");
    pump_until(s, EPOLLIN);
    check(recv_buf(s, buf, sizeof(buf), 0) == 1, "first small write read");
    send_str(c, "b");
    pump(5);
    check(lsock_nread(s) == 0, "Nagle holds the second small write until the first is acked");
    lsock_flush_acks(B);
    pump(5);
    check(lsock_nread(s) == 0, "lsock_flush_acks: the first round after the read leaves the ACK to a reply");
    lsock_flush_acks(B);
    pump(5);
    check(lsock_nread(s) == 1, "lsock_flush_acks: the second sends the owed ACK: it releases the write");
    recv_buf(s, buf, sizeof(buf), 0);
    lsock_flush_acks(B);
    pump(1);
    lsock_flush_acks(B);
    pump(5);
    send_str(c, "q");
    pump_until(s, EPOLLIN);
    check(recv_buf(s, buf, sizeof(buf), 0) == 1, "request read");
    send_str(s, "r"); /* the reply carries the ACK */
    pump(1);
    stack_get_stats(B, &before);
    lsock_flush_acks(B);
    pump(2);
    stack_get_stats(B, &after);
    check(after.nic.tx_packets == before.nic.tx_packets, "no extra ACK when a reply carried it");

    /* A client's next request, written after one more round (the epoll_wait
     * that follows its read of the reply), carries the ACK of the reply:
     * one frame, not a pure ACK and then the request. */
    pump_until(c, EPOLLIN);
    stack_get_stats(A, &before);
    check(recv_buf(c, buf, sizeof(buf), 0) == 1, "client: reply read");
    lsock_flush_acks(A); /* the round of the client's next epoll_wait */
    pump(1);
    send_str(c, "n");
    lsock_flush_acks(A);
    pump(1);
    lsock_flush_acks(A);
    pump(2);
    stack_get_stats(A, &after);
    printf("# client: %llu frames sent for read reply, round, request\n",
           (unsigned long long)(after.nic.tx_packets - before.nic.tx_packets));
    check(after.nic.tx_packets - before.nic.tx_packets == 1, "client: the next request carries the ACK of the reply (one frame)");
    lsock_close(c);
    lsock_close(s);
}

/* A delayed ACK falling due in the round a request arrives in is not sent
 * on its own: lwIP's timers run before the round's frames (stack_poll),
 * so the reply made after the round carries the ACK. */
static void test_timer_before_rx(struct lsock *l)
{
    struct lsock *c, *s;
    char buf[8];
    struct stack_stats before, after;
    check(connect_pair(l, &c, &s) == 0 && set_int(c, IPPROTO_TCP, TCP_NODELAY, 1) == 0,
          "connection for a request in a timer's round");
    pump(20);
    send_str(c, "q");
    stack_poll(A); /* the request leaves A */
    usleep(60 * 1000); /* B's 25 ms TCP timer is due */
    stack_get_stats(B, &before);
    stack_poll(B); /* the request arrives; B's timers run in this round */
    ssize_t got = recv_buf(s, buf, sizeof(buf), 0);
    send_str(s, "r");
    stack_poll(B); /* the reply leaves */
    stack_get_stats(B, &after);
    check(got == 1, "the request arrived in one round");
    checkf(after.nic.tx_packets - before.nic.tx_packets == 1,
           "one frame out, the reply with the ACK: no ACK of its own from the timer due that round (%llu)",
           (unsigned long long)(after.nic.tx_packets - before.nic.tx_packets));
    lsock_close(c);
    lsock_close(s);
    pump(20);
}

/* Window credit below one MSS waits in the lsock (tcp_io.c, rcv_owed):
 * a connection still closes with a FIN after small reads (lwIP sends a RST
 * for one whose window is not whole), and reads of 100 bytes keep a
 * transfer of twice the window going. */
static void test_rcv_credit(struct lsock *l)
{
    struct lsock *c, *s;
    char buf[100];
    check(connect_pair(l, &c, &s) == 0 && set_int(c, IPPROTO_TCP, TCP_NODELAY, 1) == 0,
          "connection for small reads");
    int got = 0;
    for (int i = 0; i < 10; i++) {
        send_str(c, "0123456789");
        pump_until(s, EPOLLIN);
        ssize_t r = recv_buf(s, buf, sizeof(buf), 0);
        got += r > 0 ? (int)r : 0;
    }
    check(got == 100, "ten 10-byte messages read one by one");
    lsock_close(s);
    pump_until(c, EPOLLRDHUP | EPOLLERR);
    check(recv_buf(c, buf, sizeof(buf), 0) == 0 && get_int(c, SOL_SOCKET, SO_ERROR) == 0,
          "close after reads of less than an MSS: the peer reads EOF, not a reset");
    lsock_close(c);

    enum { N = 600 * 1024 };
    check(connect_pair(l, &c, &s) == 0, "connection for a transfer read 100 bytes at a time");
    static char chunk[16384];
    size_t sent = 0, recvd = 0;
    for (int round = 0; round < 100000 && recvd < N; round++) {
        if (sent < N) {
            struct iovec v = {chunk, N - sent < sizeof(chunk) ? N - sent : sizeof(chunk)};
            ssize_t r = lsock_send(c, &v, 1, 0);
            sent += r > 0 ? (size_t)r : 0;
        }
        ssize_t r;
        while ((r = recv_buf(s, buf, sizeof(buf), 0)) > 0)
            recvd += (size_t)r;
        pump(1);
    }
    check(recvd == N, "600 KiB (over twice the window) arrived through 100-byte reads");
    lsock_close(c);
    lsock_close(s);
    pump(20);
}

/* Write to w as long as it takes data (w's peer does not read), pumping. */
static size_t fill(struct lsock *w)
{
    static char chunk[16384];
    size_t total = 0;
    for (int round = 0; round < 2000; round++) {
        struct iovec v = {chunk, sizeof(chunk)};
        ssize_t r = lsock_send(w, &v, 1, 0);
        if (r > 0)
            total += (size_t)r;
        pump(1);
    }
    return total;
}

/* A connection from a client on A whose SO_RCVBUF / SO_SNDBUF are set
 * before connect (0: left alone), accepted on l. */
static int pair_with_bufs(struct lsock *l, int rcvbuf, int sndbuf, struct lsock **c, struct lsock **srv)
{
    *c = *srv = NULL;
    if (lsock_new(A, c) != 0)
        return -1;
    if ((rcvbuf && set_int(*c, SOL_SOCKET, SO_RCVBUF, rcvbuf) != 0) ||
        (sndbuf && set_int(*c, SOL_SOCKET, SO_SNDBUF, sndbuf) != 0))
        return -1;
    if (lsock_connect(*c, addr_b, htons(PORT)) != -EINPROGRESS)
        return -1;
    pump_until(*c, EPOLLOUT);
    pump_until(l, EPOLLIN);
    return lsock_accept(l, srv);
}

/* SO_RCVBUF / SO_SNDBUF change what a connection holds, as on Linux. */
static void test_bufsizes(struct lsock *l)
{
    struct lsock *c, *s;
    check(pair_with_bufs(l, 0, 0, &c, &s) == 0, "a connection with default buffers");
    checkf(get_int(c, SOL_SOCKET, SO_RCVBUF) == 262144 && get_int(c, SOL_SOCKET, SO_SNDBUF) == 262144,
           "before a set, SO_RCVBUF / SO_SNDBUF report the stack's window and buffer (%d / %d)",
           get_int(c, SOL_SOCKET, SO_RCVBUF), get_int(c, SOL_SOCKET, SO_SNDBUF));
    size_t big = fill(s);
    checkf(big >= 262144 + 200000, "by default the peer takes a 256 KiB window plus the send buffer (%zu bytes)", big);
    lsock_close(c);
    lsock_close(s);
    pump(20);

    check(pair_with_bufs(l, 8192, 0, &c, &s) == 0, "a client with SO_RCVBUF 8192");
    size_t n = fill(s);
    int unread = (int)lsock_nread(c);
    checkf(unread >= 8192 - 1460 && unread <= 8192 && n <= (size_t)unread + 262144,
           "a receiver with SO_RCVBUF 8192 holds about 8 KiB unread (%d bytes; the sender queued %zu)", unread, n);
    lsock_close(c);
    lsock_close(s);
    pump(20);

    check(pair_with_bufs(l, 8192, 0, &c, &s) == 0 && set_int(s, SOL_SOCKET, SO_SNDBUF, 16384) == 0,
          "a client with SO_RCVBUF 8192, the server's SO_SNDBUF 16384");
    checkf(get_int(s, SOL_SOCKET, SO_SNDBUF) == 32768, "SO_SNDBUF 16384 reads back doubled (%d)",
           get_int(s, SOL_SOCKET, SO_SNDBUF));
    n = fill(s);
    checkf(n >= 32768 && n <= 32768 + 8192 + 2 * 1460,
           "a sender with SO_SNDBUF 16384 queues at most the doubled value beyond the peer's window (%zu bytes)", n);
    lsock_close(c);
    lsock_close(s);
    pump(20);
}

static void test_refused(void)
{
    struct lsock *c;
    check(lsock_new(A, &c) == 0 && lsock_connect(c, addr_b, htons(1)) == -EINPROGRESS, "connect to a closed port");
    uint32_t ev = pump_until(c, EPOLLERR);
    check((ev & (EPOLLOUT | EPOLLERR | EPOLLHUP)) == (EPOLLOUT | EPOLLERR | EPOLLHUP), "refused: EPOLLOUT|EPOLLERR|EPOLLHUP");
    check(get_int(c, SOL_SOCKET, SO_ERROR) == ECONNREFUSED, "SO_ERROR: ECONNREFUSED");
    check(get_int(c, SOL_SOCKET, SO_ERROR) == 0, "SO_ERROR cleared by reading it");
    check(!(lsock_events(c) & EPOLLERR), "no EPOLLERR after SO_ERROR was read");
    check(lsock_connect(c, addr_b, htons(1)) == -ECONNABORTED, "connect after that: -ECONNABORTED, like Linux");
    check(lsock_events(c) == (EPOLLOUT | EPOLLHUP), "then a fresh socket again");
    lsock_close(c);
}

static void test_limit(struct lsock *l)
{
    struct lsock *c[B_MAX_SOCKS], *s[B_MAX_SOCKS];
    int n = 0;
    set_int(l, IPPROTO_TCP, TCP_NODELAY, 1);
    set_int(l, SOL_SOCKET, SO_KEEPALIVE, 1);
    set_int(l, IPPROTO_TCP, TCP_KEEPIDLE, 33);
    while (lsock_count(B) < B_MAX_SOCKS && n < B_MAX_SOCKS && connect_pair(l, &c[n], &s[n]) == 0)
        n++;
    check(n > 0 && get_int(s[0], IPPROTO_TCP, TCP_NODELAY) == 1 && get_int(s[0], SOL_SOCKET, SO_KEEPALIVE) == 1 &&
              get_int(s[0], IPPROTO_TCP, TCP_KEEPIDLE) == 33,
          "accepted socket inherits TCP_NODELAY and keepalive from the listener");
    check(lsock_count(B) == B_MAX_SOCKS, "B holds tcp_conn_count sockets (listener included)");
    struct lsock *extra = NULL;
    check(lsock_new(B, &extra) == -ENOBUFS, "lsock_new past tcp_conn_count: -ENOBUFS");
    struct lsock *x, *xs = NULL;
    check(lsock_new(A, &x) == 0 && lsock_connect(x, addr_b, htons(PORT)) == -EINPROGRESS, "one connection too many");
    struct stack_stats sb;
    pump_until(x, EPOLLERR);
    check(get_int(x, SOL_SOCKET, SO_ERROR) == ECONNREFUSED, "it is refused at its SYN");
    stack_get_stats(B, &sb);
    check(sb.conn_refused == 1, "counted as refused");
    check(lsock_accept(l, &xs) == -EAGAIN, "nothing to accept");
    lsock_close(x);
    lsock_close(s[n - 1]);
    lsock_close(c[n - 1]);
    n--;
    check(connect_pair(l, &c[n], &s[n]) == 0, "after a close the listener accepts again");
    n++;
    for (int i = 0; i < n; i++) {
        lsock_close(c[i]);
        lsock_close(s[i]);
    }
}

static void test_listener_close(struct lsock *l)
{
    struct lsock *c;
    check(lsock_new(A, &c) == 0 && lsock_connect(c, addr_b, htons(PORT)) == -EINPROGRESS, "connect, never accepted");
    pump_until(l, EPOLLIN);
    lsock_close(l);
    check(lsock_count(B) == 0, "listener close frees its unaccepted connections");
    pump_until(c, EPOLLERR);
    check(get_int(c, SOL_SOCKET, SO_ERROR) == ECONNRESET, "which are reset");
    lsock_close(c);
}

int main(void)
{
    struct lstack_conf ca, cb;
    char err[512];
    char b_extra[64];
    snprintf(b_extra, sizeof(b_extra), "tcp_conn_count = %d;", B_MAX_SOCKS);
    if (pair_conf(&ca, "198.18.0.2", "198.18.0.1", "tcp_conn_count = 64;") != 0 || pair_conf(&cb, "198.18.0.1", "198.18.0.2", b_extra) != 0) {
        printf("not ok 1 - configs parse\n1..1\n");
        return 1;
    }
    addr_a = ca.host_addr;
    addr_b = cb.host_addr;
    if (pair_open(&ca, &cb, &A, &B, err, sizeof(err)) != 0) {
        printf("not ok 1 - stacks open\n# %s\n1..1\n", err);
        return 1;
    }
    pump(10);

    test_new_socket();
    struct lsock *l = listener(), *c = NULL, *s = NULL;
    check(l != NULL, "listener on B:6379");
    if (l == NULL) {
        printf("1..%d\n", tap_count);
        return 1;
    }
    test_connect_accept(l, &c, &s);
    test_options(c);
    test_small_data(c, s);
    test_bulk(c, s);
    test_eof(c, s);
    test_reset(l);
    test_delayed_ack(l);
    test_rcv_credit(l);
    test_timer_before_rx(l);
    test_bufsizes(l);
    test_refused();
    test_limit(l);
    test_listener_close(l);

    pump(300);
    struct stack_stats sa, sb;
    stack_get_stats(A, &sa);
    stack_get_stats(B, &sb);
    check(lsock_count(A) == 0 && lsock_count(B) == 0, "no socket left counted");
    check(sa.nic.mbuf_free == sa.nic.mbuf_total && sb.nic.mbuf_free == sb.nic.mbuf_total,
          "every buffer is back after all sockets closed");
    printf("# A: %u/%u buffers free, B: %u/%u\n", sa.nic.mbuf_free, sa.nic.mbuf_total, sb.nic.mbuf_free,
           sb.nic.mbuf_total);
    stack_close(A);
    stack_close(B);
    lstack_conf_free(&ca);
    lstack_conf_free(&cb);
    return tap_done();
}
