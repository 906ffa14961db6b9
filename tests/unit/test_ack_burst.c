/*
 * test_ack_burst.c - the output a received segment triggers runs once per
 * connection at the end of the receive burst (lwIP patch 0014,
 * lstack/stack/lwip/port/tcp_out_defer.c).
 *
 * Two stacks back to back over the memory port (bursts of 32 frames). The
 * test polls them one round at a time and watches, with the ports' taps,
 * every frame each stack sends:
 *   - 64 KiB sent at once on a warmed-up connection (45 segments, two
 *     receive bursts): the receiver sends at most one pure ACK per poll
 *     round, and far fewer than lwIP's one per two segments;
 *   - the data arrives whole and in order, and the sender's send buffer
 *     empties (the coalesced ACKs cover everything);
 *   - data and a RST of the same connection in one burst: the connection is
 *     freed inside the burst, and nothing is sent for it at the burst's end
 *     (no frame from a freed pcb), the receiver's socket sees the reset;
 *   - a small request/reply exchange still works (one segment per burst:
 *     lwIP's delayed ACK as before, the reply carries the ACK).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/uio.h>

#include "nic/nic.h"
#include "sock/lsock.h"
#include "stack/stack.h"
#include "pair_conf.h"
#include "pair_pump.h"

#include "tap.h"

#define PORT 7100

struct wire {
    unsigned data;      /* TCP frames with payload */
    unsigned pure_acks; /* TCP frames without payload, flags ACK only */
    unsigned rst;       /* TCP frames with RST */
    unsigned other;
};

static struct wire wire_a, wire_b; /* what A / B sent */

static bool count_frame(void *ctx, const uint8_t *f, uint16_t len)
{
    struct wire *w = ctx;
    if (len < 14 + 20 + 20 || f[12] != 0x08 || f[13] != 0x00 || f[14 + 9] != IPPROTO_TCP) {
        w->other++;
        return true;
    }
    unsigned ihl = (unsigned)(f[14] & 0x0f) * 4, tot = (unsigned)f[16] << 8 | f[17];
    const uint8_t *tcp = f + 14 + ihl;
    unsigned doff = (unsigned)(tcp[12] >> 4) * 4, flags = tcp[13];
    unsigned payload = tot - ihl - doff;
    if (flags & 0x04)
        w->rst++;
    else if (payload > 0)
        w->data++;
    else if (flags == 0x10)
        w->pure_acks++;
    else
        w->other++;
    return true;
}

static struct stack *A, *B;

/* Move len bytes from w to r, reading as it goes (a warm-up: the sender's
 * congestion window grows). Returns bytes read. */
static size_t transfer(struct lsock *w, struct lsock *r, size_t len)
{
    static char out[65536], in[65536];
    size_t sent = 0, got = 0;
    for (int spins = 0; got < len && spins < 200000; spins++) {
        if (sent < len) {
            struct iovec v = {out, len - sent < sizeof(out) ? len - sent : sizeof(out)};
            ssize_t k = lsock_send(w, &v, 1, 0);
            if (k > 0)
                sent += (size_t)k;
        }
        pair_pump(A, B, 1);
        for (;;) {
            struct iovec v = {in, sizeof(in)};
            ssize_t k = lsock_recv(r, &v, 1, 0);
            if (k <= 0)
                break;
            got += (size_t)k;
        }
    }
    return got;
}

/* 64 KiB from c to s in one send; B (s's stack) is polled alone after each
 * round of A and its pure ACKs counted per round; s reads nothing until
 * all of it arrived. */
static void test_bulk_acks(struct lsock *c, struct lsock *s)
{
    static char out[65536], in[65536];
    for (size_t i = 0; i < sizeof(out); i++)
        out[i] = (char)(i * 7 + 3);
    struct iovec v = {out, sizeof(out)};
    check(lsock_send(c, &v, 1, 0) == (ssize_t)sizeof(out), "64 KiB taken by one send");

    unsigned max_acks_round = 0, max_rx_round = 0, rounds = 0, acks0 = wire_b.pure_acks, data0 = wire_a.data;
    for (int i = 0; i < 200 && lsock_nread(s) < sizeof(out); i++) {
        stack_poll(A);
        unsigned before = wire_b.pure_acks;
        unsigned rx = stack_poll(B);
        unsigned acks = wire_b.pure_acks - before;
        if (acks > max_acks_round)
            max_acks_round = acks;
        if (rx > max_rx_round)
            max_rx_round = rx;
        rounds++;
    }
    unsigned data = wire_a.data - data0, acks = wire_b.pure_acks - acks0;
    printf("# 64 KiB: %u data frames from A, %u pure ACKs from B in %u rounds; largest burst %u frames, "
           "most ACKs in a round %u\n",
           data, acks, rounds, max_rx_round, max_acks_round);
    check(lsock_nread(s) == sizeof(out), "all 64 KiB arrived");
    checkf(max_rx_round >= 4, "a receive burst held several segments (%u)", max_rx_round);
    checkf(max_acks_round <= 1, "at most one pure ACK per receive burst (most in a round: %u)", max_acks_round);
    checkf(data >= 45 && acks * 4 <= data, "ACKs far fewer than one per two segments (%u for %u)", acks, data);

    size_t got = 0;
    int same = 1;
    for (;;) {
        struct iovec r = {in, sizeof(in)};
        ssize_t k = lsock_recv(s, &r, 1, 0);
        if (k <= 0)
            break;
        same &= memcmp(in, out + got, (size_t)k) == 0;
        got += (size_t)k;
    }
    check(got == sizeof(out) && same, "the data arrived whole and in order");
    /* The coalesced ACKs acknowledge everything: c's send buffer empties. */
    for (int i = 0; i < 200 && !(lsock_events(c) & EPOLLOUT); i++)
        pair_pump(A, B, 1);
    pair_pump(A, B, 20);
    struct iovec small = {out, 1}, r = {in, sizeof(in)};
    ssize_t k = lsock_send(c, &small, 1, 0);
    for (int i = 0; i < 50 && !(lsock_events(s) & EPOLLIN); i++)
        pair_pump(A, B, 1);
    ssize_t k2 = lsock_recv(s, &r, 1, 0);
    /* A one-byte answer carries B's ACK of it (else A's Nagle would hold
     * the next small request for lwIP's delayed ACK, change or not). */
    ssize_t k3 = lsock_send(s, &small, 1, 0);
    for (int i = 0; i < 50 && !(lsock_events(c) & EPOLLIN); i++)
        pair_pump(A, B, 1);
    r.iov_len = sizeof(in);
    ssize_t k4 = lsock_recv(c, &r, 1, 0);
    checkf(k == 1 && k2 == 1 && in[0] == out[0] && k3 == 1 && k4 == 1, "the sender can send again (%zd, %zd, %zd, %zd)",
           k, k2, k3, k4);
}

/* n request/reply rounds of small messages. Returns the rounds done. */
static int ping_pong(struct lsock *c, struct lsock *s, int n)
{
    static const char req[] = "*1\r\n$4\r\nPING\r\n", rep[] = "+PONG\r\n";
    char buf[64];
    for (int i = 0; i < n; i++) {
        struct iovec q = {(void *)req, sizeof(req) - 1}, p = {(void *)rep, sizeof(rep) - 1};
        if (lsock_send(c, &q, 1, 0) != (ssize_t)q.iov_len || !(pair_pump_until(A, B, s, EPOLLIN) & EPOLLIN))
            return i;
        struct iovec b = {buf, sizeof(buf)};
        if (lsock_recv(s, &b, 1, 0) != (ssize_t)q.iov_len || lsock_send(s, &p, 1, 0) != (ssize_t)p.iov_len ||
            !(pair_pump_until(A, B, c, EPOLLIN) & EPOLLIN))
            return i;
        b.iov_len = sizeof(buf);
        if (lsock_recv(c, &b, 1, 0) != (ssize_t)p.iov_len)
            return i;
    }
    return n;
}

/* Ten full segments and then a RST of the same connection reach B in one
 * burst: B's pcb is freed inside the burst, after two of its segments had
 * asked for an ACK. Nothing may leave B for it afterwards. */
static void test_reset_in_burst(struct lsock *l)
{
    struct lsock *c = NULL, *s = NULL;
    int ok = lsock_new(A, &c) == 0 && lsock_connect(c, htonl(0xc6120001), htons(PORT)) == -EINPROGRESS &&
             (pair_pump_until(A, B, c, EPOLLOUT) & EPOLLOUT) && (pair_pump_until(A, B, l, EPOLLIN) & EPOLLIN) &&
             lsock_accept(l, &s) == 0;
    check(ok, "a second connection");
    if (!ok)
        return;
    /* Warm up so that ten segments leave in one round. */
    check(transfer(c, s, 1u << 20) == 1u << 20, "1 MiB warm-up on it");
    pair_pump(A, B, 20);

    static char out[14600];
    memset(out, 'r', sizeof(out));
    struct iovec v = {out, sizeof(out)};
    check(lsock_send(c, &v, 1, 0) == (ssize_t)sizeof(out), "ten segments queued");
    unsigned data0 = wire_a.data;
    stack_poll(A); /* the ten segments leave A; B has not polled */
    checkf(wire_a.data - data0 == 10, "ten data frames on the wire (%u)", wire_a.data - data0);
    struct linger lg = {1, 0};
    check(lsock_setsockopt(c, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg)) == 0, "SO_LINGER {1, 0}");
    unsigned rst0 = wire_a.rst;
    lsock_close(c);
    stack_poll(A); /* the RST leaves A */
    check(wire_a.rst - rst0 == 1, "A reset the connection");

    struct wire before = wire_b;
    unsigned rx = stack_poll(B);
    checkf(rx == 11, "B took the ten segments and the RST in one burst (%u frames)", rx);
    check(wire_b.pure_acks == before.pure_acks && wire_b.data == before.data && wire_b.rst == before.rst &&
              wire_b.other == before.other,
          "B sent nothing for the connection freed inside the burst");
    pair_pump(A, B, 5);
    char in[64];
    struct iovec r = {in, sizeof(in)};
    ssize_t k;
    size_t got = 0;
    while ((k = lsock_recv(s, &r, 1, 0)) > 0)
        got += (size_t)k;
    checkf(k == -ECONNRESET, "B's socket sees the reset (%zd after %zu bytes)", k, got);
    lsock_close(s);
}

int main(void)
{
    struct lstack_conf ca, cb;
    struct nic *na, *nb;
    char err[512] = "";
    if (pair_conf(&ca, "198.18.0.2", "198.18.0.1", "tcp_conn_count = 16;") != 0 ||
        pair_conf(&cb, "198.18.0.1", "198.18.0.2", "tcp_conn_count = 16;") != 0 ||
        pair_open_ports(&ca, &cb, &A, &B, &na, &nb, err, sizeof(err)) != 0) {
        printf("# %s\n", err);
        check(0, "two stacks open");
        return tap_done();
    }
    nic_mem_set_tap(na, count_frame, &wire_a);
    nic_mem_set_tap(nb, count_frame, &wire_b);

    struct lsock *l = NULL, *c = NULL, *s = NULL;
    int ok = pair_connect(A, B, htonl(0xc6120001), PORT, &l, &c, &s) == 0;
    check(ok, "a connection between the stacks");
    if (!ok)
        return tap_done();
    check(transfer(c, s, 4u << 20) == 4u << 20, "4 MiB warm-up");
    pair_pump(A, B, 20);

    test_bulk_acks(c, s);
    int pp = ping_pong(c, s, 200);
    checkf(pp == 200, "200 small request/reply exchanges (%d done)", pp);
    test_reset_in_burst(l);

    lsock_close(c);
    lsock_close(s);
    lsock_close(l);
    pair_pump(A, B, 10);
    nic_mem_set_tap(na, NULL, NULL);
    nic_mem_set_tap(nb, NULL, NULL);
    stack_close(A);
    stack_close(B);
    return tap_done();
}
