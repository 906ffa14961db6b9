/*
 * test_tcp_guard.c - TCP under odd input, floods and reuse:
 * two stacks back to back on the memory port, A (198.18.0.2) the client,
 * B (198.18.0.1) the server, plus a raw peer: segments built by hand
 * (raw_tcp.h) that pose as A from ports A never uses and are injected into
 * B's receive queue; B's answers to those ports are taken off the wire by a
 * tap and recorded, so A never sees them. No DPDK, no root. TAP output.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <time.h>
#include <unistd.h>

#include "conf/conf.h"
#include "nic/nic.h"
#include "mem_nic.h"
#include "sock/lsock.h"
#include "stack/stack.h"
#include "pair_conf.h"
#include "pair_pump.h"
#include "raw_tcp.h"

#include "tap.h"

#define PORT 6379
#define RAW_LO 20000 /* the raw peer's ports: [RAW_LO, RAW_HI) */
#define RAW_HI 30000
#define SEEN_MAX 4096
#define B_MAX_SOCKS 8 /* B's tcp_conn_count (first bed) */
#define B_BURST 32    /* B's nic_read_number (the floods' bed): the memory port's burst */

static struct stack *A, *B;
static struct nic *nic_a, *nic_b;
static uint32_t addr_a, addr_b;
static uint8_t mac_a[6], mac_b[6];

/* What B sent to the raw peer, oldest first. */
static struct {
    struct raw_seg seg[SEEN_MAX]; /* data pointers cleared: frames are gone */
    unsigned n;
} seen;

/* Tap on B's port: frames for the raw peer's ports are recorded and go no
 * further; everything else goes to A. */
static bool tap_b(void *ctx, const uint8_t *frame, uint16_t len)
{
    (void)ctx;
    struct raw_seg g;
    if (raw_tcp_parse(frame, len, &g) != 0 || g.dport < RAW_LO || g.dport >= RAW_HI)
        return true;
    g.data = NULL;
    if (seen.n < SEEN_MAX)
        seen.seg[seen.n++] = g;
    return false;
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

/* Poll both stacks until B received nothing in a round (at most 1000). */
static void drain(void)
{
    for (int i = 0; i < 1000; i++) {
        stack_poll(A);
        if (stack_poll(B) == 0)
            return;
    }
}

/* Send one segment from the raw peer's port to B:dport (a failure to
 * inject is reported once per run: the memory port's buffers ran out). */
static void raw_send(uint16_t sport, uint16_t dport, uint8_t flags, uint32_t seq, uint32_t ack, uint16_t mss,
                     const void *data, uint16_t len)
{
    struct raw_seg g = {
        .saddr = addr_a, .daddr = addr_b, .sport = sport, .dport = dport,
        .seq = seq, .ack = ack, .flags = flags, .wnd = 65535, .mss = mss, .data = data, .len = len,
    };
    memcpy(g.src_mac, mac_a, 6);
    memcpy(g.dst_mac, mac_b, 6);
    uint8_t frame[RAW_TCP_FRAME_MAX(1460)];
    size_t n = raw_tcp_build(frame, sizeof(frame), &g);
    static bool told;
    if ((n == 0 || nic_mem_inject(nic_b, frame, (uint16_t)n) != 0) && !told) {
        check(0, "raw peer: a frame could not be injected");
        told = true;
    }
}

/* The last segment B sent to the raw peer's port (with all of flags, if
 * non-zero) since seen.n was from, or NULL. */
static const struct raw_seg *seen_last(unsigned from, uint16_t port, uint8_t flags)
{
    for (unsigned i = seen.n; i > from; i--) {
        const struct raw_seg *g = &seen.seg[i - 1];
        if (g->dport == port && (g->flags & flags) == flags)
            return g;
    }
    return NULL;
}

static int set_int(struct lsock *s, int level, int name, int v)
{
    return lsock_setsockopt(s, level, name, &v, sizeof(v));
}

static int get_int(struct lsock *s, int level, int name)
{
    int v = -12345;
    socklen_t len = sizeof(v);
    int rc = lsock_getsockopt(s, level, name, &v, &len);
    return rc < 0 ? rc : v;
}

/* A listener on B:port with this backlog. */
static struct lsock *listener(uint16_t port, int backlog)
{
    struct lsock *l = NULL;
    if (lsock_new(B, &l) != 0)
        return NULL;
    set_int(l, SOL_SOCKET, SO_REUSEADDR, 1);
    if (lsock_bind(l, htonl(INADDR_ANY), htons(port)) != 0 || lsock_listen(l, backlog) != 0) {
        lsock_close(l);
        return NULL;
    }
    return l;
}

/* The raw peer's handshake from sport with this MSS option: SYN, B's
 * SYN-ACK, our ACK. Returns B's initial sequence number + 1 (its next
 * sequence number), or 0 if no SYN-ACK came; our next is seq + 1. */
static uint32_t raw_handshake(uint16_t sport, uint16_t dport, uint32_t seq, uint16_t mss)
{
    unsigned from = seen.n;
    raw_send(sport, dport, TH_SYN, seq, 0, mss, NULL, 0);
    pump(3);
    const struct raw_seg *sa = seen_last(from, sport, TH_SYN | TH_ACK);
    if (sa == NULL || sa->ack != seq + 1)
        return 0;
    uint32_t b_next = sa->seq + 1;
    raw_send(sport, dport, TH_ACK, seq + 1, b_next, 0, NULL, 0);
    pump(3);
    return b_next;
}

/* ---- 1. a peer's MSS option below 48 ---- */

static void test_tiny_mss(struct lsock *l)
{
    const uint16_t sport = RAW_LO + 1;
    uint32_t b_next = raw_handshake(sport, PORT, 1000, 1);
    check(b_next != 0, "tiny MSS: B answers a SYN with MSS option 1");
    struct lsock *s = NULL;
    check(pump_until(l, EPOLLIN) == EPOLLIN && lsock_accept(l, &s) == 0, "tiny MSS: the connection is accepted");
    if (s == NULL)
        return;
    checkf(get_int(s, IPPROTO_TCP, TCP_MAXSEG) == 48, "tiny MSS: TCP_MAXSEG is 48 (Linux's tcp_min_snd_mss), saw %d",
           get_int(s, IPPROTO_TCP, TCP_MAXSEG));
    static char big[4096];
    memset(big, 'x', sizeof(big));
    unsigned from = seen.n;
    struct iovec v = {big, sizeof(big)};
    check(lsock_send(s, &v, 1, 0) > 0, "tiny MSS: a 4 KiB write is queued");
    pump(5);
    unsigned segs = 0, smallest = 0xffff, largest = 0;
    for (unsigned i = from; i < seen.n; i++) {
        const struct raw_seg *g = &seen.seg[i];
        if (g->dport != sport || g->len == 0)
            continue;
        segs++;
        if (g->len < smallest)
            smallest = g->len;
        if (g->len > largest)
            largest = g->len;
    }
    checkf(segs > 0 && smallest >= 48 && largest <= 48,
           "tiny MSS: data segments on the wire carry 48 bytes (saw %u segments, %u..%u bytes)", segs,
           segs ? smallest : 0, largest);
    raw_send(sport, PORT, TH_RST, 1001, 0, 0, NULL, 0);
    pump(3);
    lsock_close(s);
}

/* ---- 2. a SYN for a connection in TIME_WAIT (RFC 6191) ---- */

/* The raw peer's view: B closed first and holds the 4-tuple in TIME_WAIT;
 * an old duplicate SYN still gets TIME_WAIT's ACK, a SYN beyond the old
 * connection opens a new one whose sequence space starts past the old. */
static void test_tw_reuse_raw(struct lsock *l)
{
    const uint16_t sport = RAW_LO + 2;
    uint32_t b_next = raw_handshake(sport, PORT, 5000, 1460);
    struct lsock *s = NULL;
    check(b_next != 0 && pump_until(l, EPOLLIN) == EPOLLIN && lsock_accept(l, &s) == 0,
          "TIME_WAIT: raw peer connected");
    if (s == NULL)
        return;
    unsigned from = seen.n;
    lsock_close(s); /* B closes first */
    pump(3);
    check(seen_last(from, sport, TH_FIN) != NULL, "TIME_WAIT: B sent its FIN");
    from = seen.n;
    raw_send(sport, PORT, TH_FIN | TH_ACK, 5001, b_next + 1, 0, NULL, 0);
    pump(3);
    const struct raw_seg *g = seen_last(from, sport, TH_ACK);
    check(g != NULL && g->ack == 5002, "TIME_WAIT: B acknowledged our FIN");
    uint32_t old_snd_nxt = b_next + 1;

    from = seen.n;
    raw_send(sport, PORT, TH_SYN, 5001 - 100, 0, 1460, NULL, 0);
    pump(3);
    g = seen_last(from, sport, 0);
    checkf(g != NULL && g->flags == TH_ACK && g->ack == 5002,
           "TIME_WAIT: an old SYN (before rcv_nxt) gets the TIME_WAIT ACK (saw flags %#x ack %u)",
           g ? g->flags : 0, g ? g->ack : 0);

    from = seen.n;
    const uint32_t seq = 5002 + 1000000;
    raw_send(sport, PORT, TH_SYN, seq, 0, 1460, NULL, 0);
    pump(3);
    g = seen_last(from, sport, 0);
    checkf(g != NULL && g->flags == (TH_SYN | TH_ACK) && g->ack == seq + 1,
           "TIME_WAIT: a SYN beyond rcv_nxt opens a new connection (saw flags %#x ack %u)", g ? g->flags : 0,
           g ? g->ack : 0);
    if (g == NULL || g->flags != (TH_SYN | TH_ACK))
        return;
    checkf((int32_t)(g->seq - old_snd_nxt) > 65535,
           "TIME_WAIT: the new ISN starts past the old connection's sequence space (%u after its snd_nxt)",
           g->seq - old_snd_nxt);
    raw_send(sport, PORT, TH_ACK, seq + 1, g->seq + 1, 0, NULL, 0);
    pump(3);
    s = NULL;
    check(pump_until(l, EPOLLIN) == EPOLLIN && lsock_accept(l, &s) == 0, "TIME_WAIT: the new connection is accepted");
    raw_send(sport, PORT, TH_RST, seq + 1, 0, 0, NULL, 0);
    pump(3);
    lsock_close(s);
}

/* Two stacks: B closes first, A connects again from the same port at once. */
static void test_tw_reuse_lsock(struct lsock *l)
{
    const uint16_t cport = 41000;
    struct lsock *c = NULL, *s = NULL;
    char buf[16];
    struct iovec hello = {"hello", 5}, in = {buf, sizeof(buf)};
    check(lsock_new(A, &c) == 0 && set_int(c, SOL_SOCKET, SO_REUSEADDR, 1) == 0 &&
              lsock_bind(c, addr_a, htons(cport)) == 0 && lsock_connect(c, addr_b, htons(PORT)) == -EINPROGRESS,
          "TIME_WAIT reuse: A connects from port 41000");
    pump_until(c, EPOLLOUT);
    check(pump_until(l, EPOLLIN) == EPOLLIN && lsock_accept(l, &s) == 0 && lsock_send(c, &hello, 1, 0) == 5,
          "TIME_WAIT reuse: accepted, 5 bytes sent");
    pump_until(s, EPOLLIN);
    check(s != NULL && lsock_recv(s, &in, 1, 0) == 5, "TIME_WAIT reuse: B read them");
    lsock_close(s); /* B closes first: B will hold TIME_WAIT */
    pump_until(c, EPOLLRDHUP);
    check(lsock_recv(c, &in, 1, 0) == 0, "TIME_WAIT reuse: A sees B's FIN");
    lsock_close(c);
    pump(20);
    /* A new connection's ISN grows with a 4 us clock (RFC 6528): let it
     * pass the 7 sequence numbers the old connection used. */
    usleep(2000);
    c = s = NULL;
    check(lsock_new(A, &c) == 0 && set_int(c, SOL_SOCKET, SO_REUSEADDR, 1) == 0 &&
              lsock_bind(c, addr_a, htons(cport)) == 0 && lsock_connect(c, addr_b, htons(PORT)) == -EINPROGRESS,
          "TIME_WAIT reuse: A connects from port 41000 again");
    int rounds = 0;
    while (rounds < 200 && !(lsock_events(c) & (EPOLLOUT | EPOLLERR))) {
        pump(1);
        rounds++;
    }
    int e = get_int(c, SOL_SOCKET, SO_ERROR);
    checkf((lsock_events(c) & (EPOLLOUT | EPOLLERR)) == EPOLLOUT && e == 0,
           "TIME_WAIT reuse: it connects at once (%d rounds, SO_ERROR %d)", rounds, e);
    check(pump_until(l, EPOLLIN) == EPOLLIN && lsock_accept(l, &s) == 0, "TIME_WAIT reuse: B accepts it");
    if (s != NULL && lsock_send(c, &hello, 1, 0) == 5) {
        pump_until(s, EPOLLIN);
        check(lsock_recv(s, &in, 1, 0) == 5, "TIME_WAIT reuse: data flows on the new connection");
    }
    lsock_close(c);
    lsock_close(s);
    pump(20);
}

/* ---- 3. past tcp_conn_count: refused at the SYN ---- */

/* Connect a client on A to B:PORT and accept it on B. */
static int connect_pair(struct lsock *l, struct lsock **c, struct lsock **srv)
{
    *c = *srv = NULL;
    if (lsock_new(A, c) != 0 || lsock_connect(*c, addr_b, htons(PORT)) != -EINPROGRESS)
        return -1;
    pump_until(*c, EPOLLOUT);
    pump_until(l, EPOLLIN);
    return lsock_accept(l, srv);
}

static void b_stats(struct stack_stats *st)
{
    stack_get_stats(B, st);
}

static void test_conn_limit(struct lsock *l)
{
    struct lsock *c[B_MAX_SOCKS], *s[B_MAX_SOCKS];
    int n = 0;
    while (lsock_count(B) < B_MAX_SOCKS - 1 && n < B_MAX_SOCKS && connect_pair(l, &c[n], &s[n]) == 0)
        n++;
    checkf(lsock_count(B) == B_MAX_SOCKS - 1, "limit: B holds %u of %d sockets (one left)", lsock_count(B),
           B_MAX_SOCKS);
    struct stack_stats st0, st1;
    b_stats(&st0);

    /* The last room goes to a half-open connection ... */
    const uint16_t p1 = RAW_LO + 10, p2 = RAW_LO + 11, p3 = RAW_LO + 12;
    unsigned from = seen.n;
    raw_send(p1, PORT, TH_SYN, 7000, 0, 1460, NULL, 0);
    pump(3);
    const struct raw_seg *g = seen_last(from, p1, 0);
    check(g != NULL && g->flags == (TH_SYN | TH_ACK), "limit: a SYN for the last room gets a SYN-ACK");
    uint32_t b_next = g != NULL ? g->seq + 1 : 0;
    /* ... so the next SYN finds none left while that one is pending: not
     * answered (it may fit when the client retries). */
    from = seen.n;
    raw_send(p2, PORT, TH_SYN, 8000, 0, 1460, NULL, 0);
    pump(3);
    g = seen_last(from, p2, 0);
    checkf(g == NULL, "limit: a SYN while the last room is half-open is not answered (saw flags %#x)", g ? g->flags : 0);
    b_stats(&st1);
    checkf(st1.syn_dropped == st0.syn_dropped + 1, "limit: counted as syn_dropped (%llu -> %llu)",
           (unsigned long long)st0.syn_dropped, (unsigned long long)st1.syn_dropped);

    /* The half-open one completes: B is full. */
    raw_send(p1, PORT, TH_ACK, 7001, b_next, 0, NULL, 0);
    pump(3);
    struct lsock *rs = NULL;
    check(pump_until(l, EPOLLIN) == EPOLLIN && lsock_accept(l, &rs) == 0 && lsock_count(B) == B_MAX_SOCKS,
          "limit: the half-open connection completes and is accepted: B is full");

    /* A full stack refuses a SYN at once, with a RST. */
    b_stats(&st0);
    from = seen.n;
    raw_send(p3, PORT, TH_SYN, 9000, 0, 1460, NULL, 0);
    pump(3);
    g = seen_last(from, p3, 0);
    checkf(g != NULL && g->flags == (TH_RST | TH_ACK) && g->ack == 9001,
           "limit: a SYN to a full stack gets RST|ACK, ack = its seq + 1 (saw flags %#x ack %u)", g ? g->flags : 0,
           g ? g->ack : 0);
    struct lsock *x = NULL, *xs = NULL;
    check(lsock_new(A, &x) == 0 && lsock_connect(x, addr_b, htons(PORT)) == -EINPROGRESS, "limit: one connection too many");
    pump_until(x, EPOLLERR);
    int e = get_int(x, SOL_SOCKET, SO_ERROR);
    checkf(e == ECONNREFUSED, "limit: its connect is refused (SO_ERROR %d, %s)", e, strerror(e));
    b_stats(&st1);
    checkf(st1.conn_refused == st0.conn_refused + 2 && st1.conn_accepted == st0.conn_accepted,
           "limit: both counted as conn_refused, none accepted (refused %llu -> %llu, accepted %llu -> %llu)",
           (unsigned long long)st0.conn_refused, (unsigned long long)st1.conn_refused,
           (unsigned long long)st0.conn_accepted, (unsigned long long)st1.conn_accepted);
    check(lsock_accept(l, &xs) == -EAGAIN, "limit: nothing to accept");
    lsock_close(x);

    /* A close makes room again. */
    raw_send(p1, PORT, TH_RST, 7001, 0, 0, NULL, 0);
    pump(3);
    lsock_close(rs);
    check(connect_pair(l, &x, &xs) == 0, "limit: after a close a new connection is accepted");
    lsock_close(x);
    lsock_close(xs);
    for (int i = 0; i < n; i++) {
        lsock_close(c[i]);
        lsock_close(s[i]);
    }
    pump(20);
}

/* ---- 4. SYN floods: each listener's SYN queue is bounded, then cookies ---- */

/* Send SYNs from n raw ports starting at port0 to B:dport, in batches of
 * batch frames that B drains in between (the memory port holds 1024
 * frames). Returns the SYN-ACKs seen; the last one for port0 + n - 1 in
 * *last, if not NULL. */
static unsigned raw_syn_batches(uint16_t port0, unsigned n, uint16_t dport, struct raw_seg *last, unsigned batch)
{
    unsigned synacks = 0;
    for (unsigned done = 0; done < n;) {
        unsigned from = seen.n;
        for (unsigned k = 0; k < batch && done < n; k++, done++)
            raw_send((uint16_t)(port0 + done), dport, TH_SYN, 100000u + done, 0, 1460, NULL, 0);
        drain();
        for (unsigned i = from; i < seen.n; i++) {
            const struct raw_seg *g = &seen.seg[i];
            if (g->dport < port0 || g->dport >= port0 + n || g->flags != (TH_SYN | TH_ACK))
                continue;
            synacks++;
            if (last != NULL && g->dport == port0 + n - 1)
                *last = *g;
        }
        seen.n = from; /* the flood's answers are counted, not kept */
    }
    return synacks;
}

/* raw_syn_batches in batches B's rounds take whole (fewer than its
 * nic_read_number, B_BURST): no round's burst comes back full, so no SYN
 * cookie budget applies (test_cookie_budget has the full rounds). */
static unsigned raw_syn_flood(uint16_t port0, unsigned n, uint16_t dport, struct raw_seg *last)
{
    return raw_syn_batches(port0, n, dport, last, B_BURST - 1);
}

/* Reset the half-open connections of raw_syn_flood(port0, n). */
static void raw_flood_reset(uint16_t port0, unsigned n, uint16_t dport)
{
    for (unsigned done = 0; done < n;) {
        for (unsigned k = 0; k < 256 && done < n; k++, done++)
            raw_send((uint16_t)(port0 + done), dport, TH_RST, 100000u + done + 1, 0, 0, NULL, 0);
        drain();
    }
}

static unsigned long long delta(uint64_t a, uint64_t b)
{
    return (unsigned long long)(b - a);
}

/* A full SYN queue answers with SYN cookies: the flood costs no state, a
 * new client still gets in, an established one is still served. */
static void test_syn_cookies(void)
{
    const uint16_t fport = PORT + 1, port0 = RAW_LO + 100;
    struct lsock *l = listener(PORT, 128), *fl = listener(fport, 4);
    struct lsock *c = NULL, *s = NULL;
    check(l != NULL && fl != NULL && connect_pair(l, &c, &s) == 0, "flood: an established connection on B:6379");
    if (fl == NULL || s == NULL)
        return;
    struct stack_stats st0, st1;
    b_stats(&st0);
    struct raw_seg last = {0};
    unsigned synacks = raw_syn_flood(port0, 50, fport, &last);
    b_stats(&st1);
    checkf(synacks == 50, "flood: 50 SYNs to a listener with backlog 4 are all answered (saw %u SYN-ACKs)", synacks);
    checkf(delta(st0.syncookies_sent, st1.syncookies_sent) == 46 && st1.syn_dropped == st0.syn_dropped,
           "flood: 4 half-open connections, 46 SYN cookies, none dropped (cookies %llu, drop_syn %llu)",
           delta(st0.syncookies_sent, st1.syncookies_sent), delta(st0.syn_dropped, st1.syn_dropped));
    checkf(last.mss == 1460 && last.wscale == -1, "flood: a cookie SYN-ACK offers MSS 1460, no window scale (saw %u, %d)",
           last.mss, last.wscale);

    char buf[8];
    struct iovec ping = {"ping", 4}, in = {buf, sizeof(buf)};
    ssize_t got = -1;
    if (lsock_send(c, &ping, 1, 0) == 4 && (pump_until(s, EPOLLIN) & EPOLLIN))
        got = lsock_recv(s, &in, 1, 0);
    checkf(got == 4, "flood: the established connection is still served (read %zd)", got);

    /* A client during the flood gets in through a cookie. */
    b_stats(&st0);
    struct lsock *x = NULL, *xs = NULL;
    check(lsock_new(A, &x) == 0 && lsock_connect(x, addr_b, htons(fport)) == -EINPROGRESS &&
              (pump_until(x, EPOLLOUT) & (EPOLLOUT | EPOLLERR)) == EPOLLOUT &&
              pump_until(fl, EPOLLIN) == EPOLLIN && lsock_accept(fl, &xs) == 0,
          "flood: a new client connects and is accepted while the SYN queue is full");
    b_stats(&st1);
    checkf(delta(st0.syncookies_recv, st1.syncookies_recv) == 1, "flood: through a SYN cookie (syncookies_recv +%llu)",
           delta(st0.syncookies_recv, st1.syncookies_recv));
    if (xs != NULL) {
        /* 256 KiB each way: more than a 64 KiB window (a cookie connection
         * has no window scaling) in flight, so the windows must move. */
        static char big[256 * 1024], back[256 * 1024];
        for (size_t i = 0; i < sizeof(big); i++)
            big[i] = (char)(i * 7 + 3);
        size_t sent = 0, recvd = 0;
        for (int r = 0; r < 20000 && recvd < sizeof(big); r++) {
            if (sent < sizeof(big)) {
                struct iovec v = {big + sent, sizeof(big) - sent};
                ssize_t n = lsock_send(xs, &v, 1, 0);
                if (n > 0)
                    sent += (size_t)n;
            }
            pump(1);
            struct iovec v = {back + recvd, sizeof(back) - recvd};
            ssize_t n = lsock_recv(x, &v, 1, 0);
            if (n > 0)
                recvd += (size_t)n;
        }
        checkf(recvd == sizeof(big) && memcmp(big, back, sizeof(big)) == 0,
               "flood: 256 KiB cross the cookie connection intact (%zu bytes)", recvd);
        got = -1;
        if (lsock_send(x, &ping, 1, 0) == 4 && (pump_until(xs, EPOLLIN) & EPOLLIN))
            got = lsock_recv(xs, &in, 1, 0);
        checkf(got == 4, "flood: and the other way (read %zd)", got);
    }
    lsock_close(x);
    lsock_close(xs);

    /* The raw peer completes its last cookie; a forged one is reset. */
    b_stats(&st0);
    const uint16_t lastport = (uint16_t)(port0 + 49);
    raw_send(lastport, fport, TH_ACK, 100000u + 49 + 1, last.seq + 1, 0, NULL, 0);
    drain();
    xs = NULL;
    check(last.flags != 0 && pump_until(fl, EPOLLIN) == EPOLLIN && lsock_accept(fl, &xs) == 0,
          "flood: the raw peer's ACK of its cookie makes a connection");
    raw_send(lastport, fport, TH_RST, 100000u + 49 + 1, 0, 0, NULL, 0);
    lsock_close(xs);
    unsigned from = seen.n;
    const uint16_t forger = (uint16_t)(port0 + 48);
    raw_send(forger, fport, TH_ACK, 100000u + 48 + 1, last.seq + 1, 0, NULL, 0);
    drain();
    const struct raw_seg *g = seen_last(from, forger, 0);
    b_stats(&st1);
    checkf(g != NULL && (g->flags & TH_RST) && lsock_accept(fl, &xs) == -EAGAIN,
           "flood: an ACK with another connection's cookie is reset, nothing accepted (saw flags %#x)",
           g ? g->flags : 0);
    checkf(delta(st0.syncookies_failed, st1.syncookies_failed) == 1 &&
               delta(st0.syncookies_recv, st1.syncookies_recv) == 1,
           "flood: counted: syncookies_recv +%llu, syncookies_failed +%llu",
           delta(st0.syncookies_recv, st1.syncookies_recv), delta(st0.syncookies_failed, st1.syncookies_failed));
    raw_flood_reset(port0, 50, fport);

    /* The SYN queue's length: listen(0) queues one, like Linux's minimum;
     * backlogs past 255 hold (lwIP's were 8-bit), up to 4096 (somaxconn). */
    static const struct {
        int backlog;
        unsigned syns, queued;
    } q[] = {{0, 3, 1}, {300, 310, 300}, {100000, 4200, 4096}};
    for (size_t i = 0; i < sizeof(q) / sizeof(q[0]); i++) {
        lsock_close(fl);
        fl = listener(fport, q[i].backlog);
        b_stats(&st0);
        synacks = fl != NULL ? raw_syn_flood(port0, q[i].syns, fport, NULL) : 0;
        b_stats(&st1);
        unsigned long long cookies = delta(st0.syncookies_sent, st1.syncookies_sent);
        checkf(synacks == q[i].syns && cookies == q[i].syns - q[i].queued,
               "flood: backlog %d queues %u half-open connections (saw %u SYN-ACKs, %llu of them cookies)",
               q[i].backlog, q[i].queued, synacks, cookies);
        raw_flood_reset(port0, q[i].syns, fport);
    }
    /* listen() again changes the queue's length, as on Linux. */
    b_stats(&st0);
    synacks = lsock_listen(fl, 2) == 0 ? raw_syn_flood(port0, 5, fport, NULL) : 0;
    b_stats(&st1);
    checkf(synacks == 5 && delta(st0.syncookies_sent, st1.syncookies_sent) == 3,
           "flood: listen(2) on the listener shortens its queue to 2 (saw %u SYN-ACKs, %llu cookies)", synacks,
           delta(st0.syncookies_sent, st1.syncookies_sent));
    raw_flood_reset(port0, 5, fport);
    lsock_close(fl);
    lsock_close(c);
    lsock_close(s);
    lsock_close(l);
    pump(20);
}

/* A round whose burst comes back full (the port's receive queue holds more
 * than a round takes, as under a SYN flood) sends at most B_BURST / 8 SYN
 * cookies; the SYNs past them are dropped unanswered and counted in
 * syn_shed, so that the queue drains fast. Rounds that are not full have
 * no bound. */
static void test_cookie_budget(void)
{
    const uint16_t fport = PORT + 2, port0 = RAW_LO + 3000;
    const unsigned n = 4 * B_BURST, queued = 4, budget = B_BURST / 8;
    struct lsock *fl = listener(fport, (int)queued);
    check(fl != NULL, "budget: a listener with backlog 4");
    if (fl == NULL)
        return;
    struct stack_stats st0, st1;
    b_stats(&st0);
    unsigned synacks = raw_syn_batches(port0, n, fport, NULL, n); /* n frames queued at once: 4 full rounds */
    b_stats(&st1);
    unsigned long long cookies = delta(st0.syncookies_sent, st1.syncookies_sent);
    unsigned long long shed = delta(st0.syn_shed, st1.syn_shed);
    checkf(synacks == queued + 4 * budget && cookies == 4 * budget && shed == n - queued - 4 * budget &&
               st1.syn_dropped == st0.syn_dropped,
           "budget: %u SYNs in 4 full rounds of %u: %u half-open, %u cookies (%u a round), the rest shed "
           "(saw %u SYN-ACKs, %llu cookies, syn_shed %llu, drop_syn +%llu)",
           n, B_BURST, queued, 4 * budget, budget, synacks, cookies, shed, delta(st0.syn_dropped, st1.syn_dropped));
    raw_flood_reset(port0, n, fport);
    /* The same SYNs in rounds that are not full: every one answered. */
    b_stats(&st0);
    synacks = raw_syn_flood(port0, n, fport, NULL);
    b_stats(&st1);
    checkf(synacks == n && delta(st0.syn_shed, st1.syn_shed) == 0,
           "budget: %u SYNs in rounds that are not full: all answered (saw %u SYN-ACKs, syn_shed +%llu)", n, synacks,
           delta(st0.syn_shed, st1.syn_shed));
    raw_flood_reset(port0, n, fport);
    lsock_close(fl);
    pump(20);
}

/* Open stacks A and B (B with tcp_conn_count b_socks) on a new memory port
 * pair, with the raw peer's tap on B's port. Returns 0 or -1 (reported). */
static int bed_open(struct lstack_conf *ca, struct lstack_conf *cb, int b_socks)
{
    char err[512], b_extra[64];
    snprintf(b_extra, sizeof(b_extra), "tcp_conn_count = %d; nic_read_number = %d;", b_socks, B_BURST);
    if (pair_conf(ca, "198.18.0.2", "198.18.0.1", "tcp_conn_count = 64;") != 0 ||
        pair_conf(cb, "198.18.0.1", "198.18.0.2", b_extra) != 0) {
        check(0, "configs parse");
        return -1;
    }
    addr_a = ca->host_addr;
    addr_b = cb->host_addr;
    if (pair_open_ports(ca, cb, &A, &B, &nic_a, &nic_b, err, sizeof(err)) != 0) {
        printf("# %s\n", err);
        check(0, "stacks open");
        return -1;
    }
    stack_mac(A, mac_a);
    stack_mac(B, mac_b);
    nic_mem_set_tap(nic_b, tap_b, NULL);
    seen.n = 0;
    pump(10);
    return 0;
}

static void bed_close(struct lstack_conf *ca, struct lstack_conf *cb)
{
    pump(50);
    stack_close(A);
    stack_close(B);
    lstack_conf_free(ca);
    lstack_conf_free(cb);
}

int main(void)
{
    struct lstack_conf ca, cb;
    if (bed_open(&ca, &cb, B_MAX_SOCKS) != 0)
        return tap_done();
    struct lsock *l = listener(PORT, 128);
    check(l != NULL, "listener on B:6379");
    if (l == NULL)
        return tap_done();
    test_tiny_mss(l);
    test_tw_reuse_raw(l);
    test_tw_reuse_lsock(l);
    test_conn_limit(l);
    lsock_close(l);
    bed_close(&ca, &cb);

    /* Room for the floods: tcp_conn_count must not be what bounds them. */
    if (bed_open(&ca, &cb, 4200) != 0)
        return tap_done();
    test_syn_cookies();
    test_cookie_budget();
    bed_close(&ca, &cb);
    return tap_done();
}
