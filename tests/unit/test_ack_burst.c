/*
 * test_ack_burst.c - one ACK per connection per receive burst (lwIP patch
 * 0018, lstack/stack/lwip/port/tcp_rx_burst.c), and the ACKs TCP's rules
 * ask for still sent.
 *
 * No DPDK, no root. TAP output.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/uio.h>
#include <time.h>

#include "conf/conf.h"
#include "nic/nic.h"
#include "mem_nic.h"
#include "sock/lsock.h"
#include "stack/stack.h"
#include "pair_bed.h"
#include "pair_pump.h"
#include "raw_tcp.h"

#include "tap.h"

/*
 * Two stacks back to back on the memory port, A (198.18.0.2) and B
 * (198.18.0.1, bursts of 32 frames; 128 in test 8), plus a raw peer:
 * segments built by hand (raw_tcp.h), posing as A from ports A never uses, injected into B's
 * receive queue so that the test decides what one burst of B holds; B's
 * answers to those ports are recorded by a tap and go no further. One
 * behaviour per test:
 *   1. 20 in-order segments in one burst: exactly one pure ACK, for all
 *      of them (lwIP alone: 10);
 *   2. bursts of one segment: as lwIP alone (the first delayed, the
 *      second ACKed at once);
 *   3. a lone segment: the delayed-ACK timer still ACKs it;
 *   4. a burst with a gap: the ACK for the in-order part, then one
 *      duplicate ACK per out-of-order segment (what the peer's fast
 *      retransmit counts); the burst that fills the gap is ACKed to its end;
 *   5. data and a RST of one connection in one burst: nothing sent for the
 *      freed connection at the burst's end;
 *   6. 64 KiB between A and B (45 segments): at most one pure ACK from B a
 *      round, far fewer than one per two segments, the data whole;
 *   7. reading it: B's window update still goes out;
 *   8. the cap: a burst of 128 full segments (187 KB) is ACKed every 64 KiB
 *      of it, as Linux's GRO would, and at its end: three ACKs, at 45, 90
 *      and 128 segments (without the cap: one, at 128).
 */

#define PORT 7100
#define PAIR_PORT 7101
#define RAW_LO 20000 /* the raw peer's ports: [RAW_LO, RAW_HI) */
#define RAW_HI 30000
#define SEEN_MAX 4096
#define MSS 1460
#define BURST 32      /* B's bursts: the memory port's, B's nic_read_number is BIG_BURST */
#define BIG_BURST 128 /* test 8's burst: nic_read_number's default */
#define ACK_CAP 65536 /* the most of a burst's data one ACK covers (tcp_rx_burst.c) */

static struct pair_bed bed; /* stack A the client side, B the one under test */

/* What B sent to the raw peer, oldest first; and its pure ACKs to A. */
static struct {
    struct raw_seg seg[SEEN_MAX]; /* data pointers cleared: frames are gone */
    unsigned n;
} seen;
static struct {
    unsigned pure_acks, data;
    uint16_t wnd_min, wnd_last; /* raw window field of B's pure ACKs */
} to_a;

static bool tap_b(void *ctx, const uint8_t *frame, uint16_t len)
{
    (void)ctx;
    struct raw_seg g;
    if (raw_tcp_parse(frame, len, &g) != 0)
        return true;
    if (g.dport >= RAW_LO && g.dport < RAW_HI) {
        g.data = NULL;
        if (seen.n < SEEN_MAX)
            seen.seg[seen.n++] = g;
        return false;
    }
    if (g.len > 0) {
        to_a.data++;
    } else if (g.flags == TH_ACK) {
        to_a.pure_acks++;
        to_a.wnd_last = g.wnd;
        if (g.wnd < to_a.wnd_min)
            to_a.wnd_min = g.wnd;
    }
    return true;
}

/* Send g (ports, numbers, flags, options, data) from the raw peer to B. */
static void raw_xmit(struct raw_seg *g)
{
    g->saddr = bed.addr_a;
    g->daddr = bed.addr_b;
    g->dport = PORT;
    g->wnd = 65535;
    memcpy(g->src_mac, bed.mac_a, 6);
    memcpy(g->dst_mac, bed.mac_b, 6);
    uint8_t frame[RAW_TCP_FRAME_MAX(MSS)];
    size_t n = raw_tcp_build(frame, sizeof(frame), g);
    static bool told;
    if ((n == 0 || nic_mem_inject(bed.nb, frame, (uint16_t)n) != 0) && !told) {
        check(0, "raw peer: a frame could not be injected");
        told = true;
    }
}

static void raw_send(uint16_t sport, uint8_t flags, uint32_t seq, uint32_t ack, uint16_t mss, const void *data,
                     uint16_t len)
{
    struct raw_seg g = {.sport = sport, .seq = seq, .ack = ack, .flags = flags, .mss = mss, .data = data, .len = len};
    raw_xmit(&g);
}

/* The raw peer's connection: its port, its next sequence number, B's. */
struct raw_conn {
    uint16_t port;
    uint32_t seq, b_next;
    struct lsock *s; /* B's accepted socket */
};

static uint8_t payload[MSS];

/* Data segment k (0-based) of c, counted from c->seq, MSS bytes. */
static void raw_data(const struct raw_conn *c, unsigned k)
{
    raw_send(c->port, TH_ACK, c->seq + k * MSS, c->b_next, 0, payload, MSS);
}

/* One poll round of B alone. Returns the frames it received; *acks the
 * pure ACKs it sent to port in that round, *last_ack the ACK number of the
 * last one. */
static unsigned poll_b(uint16_t port, unsigned *acks, uint32_t *last_ack, uint32_t *acknos, unsigned room)
{
    unsigned from = seen.n;
    unsigned rx = stack_poll(bed.b);
    *acks = 0;
    for (unsigned i = from; i < seen.n; i++) {
        const struct raw_seg *g = &seen.seg[i];
        if (g->dport != port || g->flags != TH_ACK || g->len != 0)
            continue;
        if (acknos != NULL && *acks < room)
            acknos[*acks] = g->ack;
        (*acks)++;
        *last_ack = g->ack;
    }
    return rx;
}

/* The raw peer connects from port; ws: its SYN offers window scaling (B's
 * whole receive window, 256 KiB, instead of 64 KiB). */
static int raw_open(struct lsock *l, uint16_t port, bool ws, struct raw_conn *c)
{
    c->port = port;
    c->seq = 1000000u * port;
    c->s = NULL;
    unsigned from = seen.n;
    struct raw_seg syn = {.sport = port, .seq = c->seq, .flags = TH_SYN, .mss = MSS, .ws_on = ws, .ws_shift = 7};
    raw_xmit(&syn);
    pair_pump(bed.a, bed.b, 3);
    const struct raw_seg *sa = NULL;
    for (unsigned i = from; i < seen.n; i++)
        if (seen.seg[i].dport == port && seen.seg[i].flags == (TH_SYN | TH_ACK))
            sa = &seen.seg[i];
    if (sa == NULL || sa->ack != c->seq + 1)
        return -1;
    c->seq++;
    c->b_next = sa->seq + 1;
    raw_send(port, TH_ACK, c->seq, c->b_next, 0, NULL, 0);
    pair_pump(bed.a, bed.b, 3);
    if (!(pair_pump_until(bed.a, bed.b, l, EPOLLIN) & EPOLLIN) || lsock_accept(l, &c->s) != 0)
        return -1;
    return 0;
}

/* 1. */
static void test_burst_one_ack(struct raw_conn *c)
{
    for (unsigned k = 0; k < 20; k++)
        raw_data(c, k);
    unsigned acks = 0;
    uint32_t last = 0;
    unsigned rx = poll_b(c->port, &acks, &last, NULL, 0);
    uint32_t end = c->seq + 20 * MSS;
    checkf(rx == 20 && acks == 1 && last == end,
           "20 segments in one burst: one pure ACK for all (saw %u frames in, %u ACKs, last ack %+d from the end)",
           rx, acks, (int)(last - end));
    c->seq = end;
}

/* 2. */
static void test_single_frame_bursts(struct raw_conn *c)
{
    unsigned a1 = 0, a2 = 0;
    uint32_t last = 0;
    raw_data(c, 0);
    unsigned rx1 = poll_b(c->port, &a1, &last, NULL, 0);
    raw_data(c, 1);
    unsigned rx2 = poll_b(c->port, &a2, &last, NULL, 0);
    uint32_t end = c->seq + 2 * MSS;
    checkf(rx1 == 1 && a1 == 0 && rx2 == 1 && a2 == 1 && last == end,
           "bursts of one segment as lwIP alone: the first ACK delayed, the second ACKed at once "
           "(saw %u then %u ACKs, last ack %+d from the end)",
           a1, a2, (int)(last - end));
    c->seq = end;
}

/* 3. */
static void test_delayed_ack_timer(struct raw_conn *c)
{
    raw_data(c, 0);
    uint32_t end = c->seq + MSS, last = 0;
    unsigned acks = 0, first = 0;
    poll_b(c->port, &first, &last, NULL, 0);
    struct timespec t0, t;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    double ms = 0;
    while (acks == 0 && ms < 2000) {
        struct timespec nap = {0, 1000000};
        nanosleep(&nap, NULL);
        poll_b(c->port, &acks, &last, NULL, 0);
        clock_gettime(CLOCK_MONOTONIC, &t);
        ms = (double)(t.tv_sec - t0.tv_sec) * 1e3 + (double)(t.tv_nsec - t0.tv_nsec) / 1e6;
    }
    checkf(first == 0 && acks == 1 && last == end,
           "a lone segment: no ACK in its round, the delayed-ACK timer ACKs it (%u then %u ACKs after %.0f ms, "
           "ack %+d from the end)",
           first, acks, ms, (int)(last - end));
    c->seq = end;
}

/* 4. */
static void test_gap_dupacks(struct raw_conn *c)
{
    /* 0, 1 in order; 2 missing; 3, 4, 5 beyond the gap: one burst */
    raw_data(c, 0);
    raw_data(c, 1);
    raw_data(c, 3);
    raw_data(c, 4);
    raw_data(c, 5);
    uint32_t gap = c->seq + 2 * MSS, last = 0, acknos[8] = {0};
    unsigned acks = 0;
    unsigned rx = poll_b(c->port, &acks, &last, acknos, 8);
    unsigned at_gap = 0;
    for (unsigned i = 0; i < acks && i < 8; i++)
        at_gap += acknos[i] == gap;
    checkf(rx == 5 && acks == 4 && at_gap == 4,
           "a burst with a gap: the ACK for the in-order part, then one duplicate per out-of-order segment "
           "(saw %u ACKs, %u of them at the gap; lwIP alone: 4 and 4)",
           acks, at_gap);

    /* the missing segment and one more: ACKed up to the end */
    raw_data(c, 2);
    raw_data(c, 6);
    uint32_t end = c->seq + 7 * MSS;
    rx = poll_b(c->port, &acks, &last, NULL, 0);
    checkf(rx == 2 && acks >= 1 && last == end,
           "the burst that fills the gap is ACKed to its end in its round (saw %u ACKs, last %+d from the end)",
           acks, (int)(last - end));
    c->seq = end;
}

/* 5. */
static void test_rst_in_burst(struct raw_conn *c)
{
    raw_data(c, 0);
    raw_data(c, 1);
    raw_send(c->port, TH_RST | TH_ACK, c->seq + 2 * MSS, c->b_next, 0, NULL, 0);
    unsigned from = seen.n;
    stack_poll(bed.b);
    unsigned sent = 0;
    for (unsigned i = from; i < seen.n; i++)
        sent += seen.seg[i].dport == c->port;
    uint32_t ev = lsock_events(c->s);
    checkf(sent == 0 && (ev & EPOLLERR || ev & EPOLLHUP),
           "data and a RST in one burst: nothing sent for the freed connection (saw %u frames, events %#x)", sent, ev);
}

/* 8. */
static void test_burst_cap(struct raw_conn *c)
{
    /* What the cap asks for: an ACK after the segment that brings the
     * burst's unACKed data to ACK_CAP, counting again from there, and
     * one at the burst's end for the rest (two segments or more). */
    uint32_t want[8];
    unsigned nwant = 0;
    for (unsigned k = 1, from = 0; k <= BIG_BURST && nwant < 8; k++) {
        if ((k - from) * MSS >= ACK_CAP || (k == BIG_BURST && k - from >= 2)) {
            want[nwant++] = c->seq + k * MSS;
            from = k;
        }
    }
    nic_mem_set_burst(bed.nb, BIG_BURST);
    for (unsigned k = 0; k < BIG_BURST; k++)
        raw_data(c, k);
    uint32_t last = 0, acknos[8] = {0};
    unsigned acks = 0;
    unsigned rx = poll_b(c->port, &acks, &last, acknos, 8);
    nic_mem_set_burst(bed.nb, BURST);
    bool right = rx == BIG_BURST && acks == nwant;
    char saw[160] = "", *at = saw;
    for (unsigned i = 0; i < acks && i < 8; i++) {
        right = right && acknos[i] == want[i];
        at += snprintf(at, (size_t)(saw + sizeof(saw) - at), " %+.2f", (double)(acknos[i] - c->seq) / MSS);
    }
    checkf(right,
           "%u full segments in one burst: an ACK every 64 KiB of it and at its end (%u frames in; ACKs at "
           "segment%s; want %u ACKs, at %u, %u, ... segments; without the cap: one)",
           BIG_BURST, rx, acks ? saw : " (none)", nwant, nwant ? (want[0] - c->seq) / MSS : 0,
           nwant > 1 ? (want[1] - c->seq) / MSS : 0);
    c->seq += BIG_BURST * MSS;
}

/* 6 and 7. */
static void test_pair_bulk(void)
{
    struct lsock *l = NULL, *c = NULL, *s = NULL;
    if (pair_connect(bed.a, bed.b, bed.addr_b, PAIR_PORT, &l, &c, &s) != 0) {
        check(0, "A connects to B");
        return;
    }
    static char out[65536], in[65536];
    /* warm-up: A's congestion window grows past 64 KiB (no Nagle: the
     * last partial segment of each write goes at once) */
    int one = 1;
    check(lsock_setsockopt(c, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)) == 0, "TCP_NODELAY on A's socket");
    size_t moved = 0, sent = 0;
    for (int spins = 0; moved < 4 * sizeof(out) && spins < 200000; spins++) {
        if (sent < 4 * sizeof(out)) {
            size_t at = sent % sizeof(out);
            struct iovec w = {out + at, sizeof(out) - at};
            ssize_t k = lsock_send(c, &w, 1, 0);
            if (k > 0)
                sent += (size_t)k;
        }
        pair_pump(bed.a, bed.b, 1);
        struct iovec r = {in, sizeof(in)};
        ssize_t k = lsock_recv(s, &r, 1, 0);
        if (k > 0)
            moved += (size_t)k;
    }
    checkf(moved == 4 * sizeof(out), "warm-up: 256 KiB from A to B (moved %zu)", moved);

    /* a delayed ACK the warm-up left falls due (at most 500 ms, RFC 1122)
     * before the count starts */
    for (int i = 0; i < 600; i++) {
        struct timespec nap = {0, 1000000};
        nanosleep(&nap, NULL);
        pair_pump(bed.a, bed.b, 1);
    }
    for (size_t i = 0; i < sizeof(out); i++)
        out[i] = (char)(i * 7 + 3);
    struct iovec v = {out, sizeof(out)};
    check(lsock_send(c, &v, 1, 0) == (ssize_t)sizeof(out), "64 KiB taken by one send");
    to_a.pure_acks = 0;
    to_a.wnd_min = 0xffff;
    unsigned max_round = 0, rounds = 0, frames = 0;
    for (int i = 0; i < 400 && lsock_nread(s) < sizeof(out); i++) {
        stack_poll(bed.a);
        unsigned before = to_a.pure_acks;
        frames += stack_poll(bed.b);
        if (to_a.pure_acks - before > max_round)
            max_round = to_a.pure_acks - before;
        rounds++;
    }
    checkf(lsock_nread(s) == sizeof(out) && max_round <= 1 && to_a.pure_acks * 4 <= frames,
           "64 KiB in %u frames over %u rounds: at most one pure ACK a round (most %u), %u in all "
           "(lwIP alone: one per two segments)",
           frames, rounds, max_round, to_a.pure_acks);

    size_t got = 0;
    bool same = true;
    for (;;) {
        struct iovec r = {in, sizeof(in)};
        ssize_t k = lsock_recv(s, &r, 1, 0);
        if (k <= 0)
            break;
        same = same && memcmp(in, out + got, (size_t)k) == 0;
        got += (size_t)k;
    }
    check(got == sizeof(out) && same, "the 64 KiB read back whole and in order");

    /* 7: the read reopened 64 KiB of window: B says so */
    uint16_t before = to_a.wnd_min;
    unsigned acks0 = to_a.pure_acks;
    for (int i = 0; i < 3 && to_a.pure_acks == acks0; i++)
        pair_pump(bed.a, bed.b, 1);
    checkf(to_a.pure_acks > acks0 && to_a.wnd_last > before,
           "reading it sends a window update (%u pure ACKs, window field %u after the read, %u at its lowest)",
           to_a.pure_acks - acks0, to_a.wnd_last, before);
    lsock_close(c);
    lsock_close(s);
    lsock_close(l);
}

int main(void)
{
    for (size_t i = 0; i < sizeof(payload); i++)
        payload[i] = (uint8_t)i;
    /* B reads up to BIG_BURST frames a round; its port hands it BURST
       (but in test 8) */
    if (pair_bed_open(&bed, "tcp_conn_count = 16;", "tcp_conn_count = 16; nic_read_number = 128;") != 0) {
        check(0, "stacks open");
        return tap_done();
    }
    nic_mem_set_tap(bed.nb, tap_b, NULL);
    nic_mem_set_burst(bed.nb, BURST);
    pair_pump(bed.a, bed.b, 10);

    struct lsock *l = NULL;
    check(lsock_new(bed.b, &l) == 0 && lsock_bind(l, htonl(INADDR_ANY), htons(PORT)) == 0 && lsock_listen(l, 16) == 0,
          "listener on B");
    struct raw_conn c1 = {0}, c2 = {0}, c3 = {0}, c4 = {0};
    if (raw_open(l, RAW_LO + 1, false, &c1) == 0) {
        test_burst_one_ack(&c1);
        test_single_frame_bursts(&c1);
        test_delayed_ack_timer(&c1);
    } else {
        check(0, "raw connection 1");
    }
    if (raw_open(l, RAW_LO + 2, false, &c2) == 0)
        test_gap_dupacks(&c2);
    else
        check(0, "raw connection 2");
    if (raw_open(l, RAW_LO + 3, false, &c3) == 0)
        test_rst_in_burst(&c3);
    else
        check(0, "raw connection 3");
    if (raw_open(l, RAW_LO + 4, true, &c4) == 0)
        test_burst_cap(&c4);
    else
        check(0, "raw connection 4");
    test_pair_bulk();

    /* the accepted sockets are the test's (a RST may have ended the
       connection under one; the socket is still there to close) */
    struct raw_conn *cs[] = {&c1, &c2, &c3, &c4};
    for (size_t i = 0; i < 4; i++)
        if (cs[i]->s != NULL)
            lsock_close(cs[i]->s);
    lsock_close(l);
    pair_bed_close(&bed);
    return tap_done();
}
