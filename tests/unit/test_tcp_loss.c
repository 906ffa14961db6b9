/*
 * test_tcp_loss.c - loss recovery of the sender (lwIP patches
 * 0009 and 0010, docs/reliability.md#loss-recovery): two stacks back to
 * back on the memory port, A (198.18.0.2) sending to B (198.18.0.1), with a
 * tap on A's port that takes chosen data segments off the wire (their first
 * transmission only) and counts retransmissions. No DPDK, no root; the
 * clock is the real one (sys_now), so each check bounds a time with a wide
 * margin on either side of what the change makes of it. TAP output.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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
 * What each check would see without the change:
 *   - a lost single-segment reply: lwIP's 500 ms timer and an RTO still
 *     near its 3 s start repaired it after 2 s; the tail loss probe sends
 *     it again after 50-150 ms (bound: 1 s, for a loaded machine);
 *   - two holes in a window of 12 segments: lwIP's Reno fast retransmit
 *     repaired the first and left the second to the RTO (seconds); the
 *     SACK recovery sends both at once, without a timeout, and nothing else
 *     twice;
 *   - duplicated data segments: the receiver's duplicate ACKs counted
 *     toward lwIP's three dupacks, a spurious retransmission and a halved
 *     window; a SACK peer's duplicate ACKs without SACK blocks report no
 *     hole, and are ignored now.
 */

#define PORT 6380
#define MAX_DROPS 4

static struct pair_bed bed; /* stack A the sender, B the receiver */

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static int seq_lt(uint32_t a, uint32_t b)
{
    return (int32_t)(a - b) < 0;
}

/* The network duplicating A's data segments: dup_data extra copies of
 * each go to B, which answers each copy with a duplicate ACK. */
static int dup_data;
static unsigned data_duplicated;
static void duplicate(const uint8_t *frame, uint16_t len)
{
    for (int i = 0; i < dup_data; i++)
        if (nic_mem_inject(bed.nb, frame, len) == 0)
            data_duplicated++;
}

/* What A put on the wire towards B (data segments only). */
static struct {
    uint32_t drop_seq[MAX_DROPS]; /* take these off the wire, once each */
    int ndrop, dropped;
    unsigned data, rexmit; /* data segments sent; of those, below the highest sent */
    uint32_t high;         /* end of the highest data sent */
    int have_high;
    uint32_t first_seq; /* the first data sequence number seen since wire_reset */
    int have_first;
    uint32_t hold_seq;      /* take every transmission of this one off the wire... */
    double hold_until_ms;   /* ... until then (0: none) */
    unsigned held, rexmit_other; /* its copies taken off; other segments sent again */
} wire;

static void wire_reset(void)
{
    memset(&wire, 0, sizeof(wire));
}

static bool tap_a(void *ctx, const uint8_t *frame, uint16_t len)
{
    (void)ctx;
    struct raw_seg g;
    if (raw_tcp_parse(frame, len, &g) != 0 || g.len == 0)
        return true;
    wire.data++;
    if (!wire.have_first) {
        wire.first_seq = g.seq;
        wire.have_first = 1;
    }
    duplicate(frame, len);
    if (wire.hold_until_ms > 0 && g.seq == wire.hold_seq && now_ms() < wire.hold_until_ms) {
        wire.held++;
        if (wire.have_high && seq_lt(g.seq, wire.high))
            wire.rexmit++;
        return false;
    }
    if (wire.have_high && seq_lt(g.seq, wire.high)) {
        wire.rexmit++;
        if (g.seq != wire.hold_seq)
            wire.rexmit_other++;
    } else {
        wire.high = g.seq + g.len;
        wire.have_high = 1;
        for (int i = 0; i < wire.ndrop; i++) {
            if (g.seq == wire.drop_seq[i]) {
                wire.dropped++;
                return false;
            }
        }
    }
    return true;
}

/* Send n bytes from c (on A) and read them at s (on B), polling both stacks
 * until all arrived or limit_ms passed. Returns the milliseconds it took,
 * or -1 (bytes missing or different). */
static double transfer(struct lsock *c, struct lsock *s, size_t n, double limit_ms)
{
    static uint8_t out[1 << 20], in[1 << 16];
    if (n > sizeof(out))
        return -1;
    for (size_t i = 0; i < n; i++)
        out[i] = (uint8_t)(i * 7 + (i >> 8));
    size_t sent = 0, got = 0;
    double t0 = now_ms();
    while (got < n && now_ms() - t0 < limit_ms) {
        if (sent < n) {
            struct iovec v = {out + sent, n - sent};
            ssize_t r = lsock_send(c, &v, 1, 0);
            if (r > 0)
                sent += (size_t)r;
            else if (r != -EAGAIN)
                return -1;
        }
        pair_pump(bed.a, bed.b, 1);
        for (;;) {
            struct iovec v = {in, sizeof(in)};
            ssize_t r = lsock_recv(s, &v, 1, 0);
            if (r == -EAGAIN)
                break;
            if (r <= 0 || got + (size_t)r > n || memcmp(in, out + got, (size_t)r) != 0)
                return -1;
            got += (size_t)r;
        }
    }
    return got == n ? now_ms() - t0 : -1;
}

static struct tcp_info info(struct lsock *c)
{
    struct tcp_info ti;
    memset(&ti, 0, sizeof(ti));
    socklen_t len = sizeof(ti);
    lsock_getsockopt(c, IPPROTO_TCP, TCP_INFO, &ti, &len);
    return ti;
}

/* A reply of one segment whose first transmission is lost. */
static void test_tail_loss(struct lsock *c, struct lsock *s)
{
    /* a few exchanges first: the RTT is measured, as on any live connection */
    for (int i = 0; i < 5; i++)
        transfer(c, s, 100, 1000);
    struct tcp_info ti = info(c);
    checkf(ti.tcpi_rto >= 200000 && ti.tcpi_rto <= 400000,
           "RTO after a few exchanges on a fast path: %u us (200 ms floor, RFC 6298 first sample)", ti.tcpi_rto);
    wire_reset();
    wire.ndrop = 1;
    /* the next data segment A sends: the sequence is the connection's */
    uint32_t una = 0;
    {
        /* learn the next sequence number: send one byte and look */
        transfer(c, s, 1, 1000);
        una = wire.high;
    }
    wire_reset();
    wire.drop_seq[0] = una;
    wire.ndrop = 1;
    double ms = transfer(c, s, 500, 5000);
    checkf(wire.dropped == 1 && ms >= 0, "a lost one-segment reply arrives (in %.0f ms)", ms);
    checkf(ms >= 0 && ms < 1000, "... within 1 s (tail loss probe: 50-150 ms; lwIP's own RTO: 2-3 s): %.0f ms",
           ms);
    checkf(wire.rexmit == 1, "... sent again exactly once (%u retransmissions)", wire.rexmit);
}

/* Two segments of one window lost, the second with only two behind it:
 * Reno repairs the first on three dupacks, ends its recovery on the partial
 * ACK and leaves the second to the RTO; the SACK recovery sends both. */
static void test_two_holes(struct lsock *c, struct lsock *s)
{
    /* a window to lose from: slow start opens it */
    double warm = transfer(c, s, 512 * 1024, 10000);
    check(warm >= 0, "512 KiB warm-up transfer");
    uint32_t mss = info(c).tcpi_snd_mss;
    wire_reset();
    transfer(c, s, 1, 1000);
    uint32_t next = wire.high;
    wire_reset();
    wire.drop_seq[0] = next + 3 * mss;
    wire.drop_seq[1] = next + 9 * mss;
    wire.ndrop = 2;
    struct tcp_info before = info(c);
    double ms = transfer(c, s, 12 * mss, 5000);
    struct tcp_info after = info(c);
    checkf(wire.dropped == 2 && ms >= 0, "12 segments with the 4th and 10th lost arrive intact (in %.1f ms, cwnd %u)",
           ms, before.tcpi_snd_cwnd);
    checkf(ms >= 0 && ms < 150, "... without a timeout (< 150 ms; Reno: the second hole waits the RTO): %.1f ms", ms);
    checkf(wire.rexmit == 2, "... exactly the two lost segments sent again (%u retransmissions)", wire.rexmit);
    checkf(after.tcpi_snd_cwnd >= 4, "... the window afterwards: %u segments", after.tcpi_snd_cwnd);
}

/* Every data segment duplicated three times by the network: B answers
 * each copy with a duplicate ACK (three in a row: lwIP's fast retransmit
 * threshold). Nothing is lost, so nothing may be sent twice. */
static void test_dup_data(struct lsock *c, struct lsock *s)
{
    transfer(c, s, 256 * 1024, 10000);
    struct tcp_info before = info(c);
    wire_reset();
    dup_data = 3;
    data_duplicated = 0;
    double ms = transfer(c, s, 256 * 1024, 10000);
    dup_data = 0;
    struct tcp_info after = info(c);
    checkf(ms >= 0 && data_duplicated > 100, "256 KiB with every segment duplicated 3x (%u copies) arrive intact",
           data_duplicated);
    checkf(wire.rexmit == 0, "... nothing is sent twice (%u retransmissions)", wire.rexmit);
    checkf(after.tcpi_snd_cwnd >= before.tcpi_snd_cwnd,
           "... the window does not shrink (%u -> %u segments)", before.tcpi_snd_cwnd, after.tcpi_snd_cwnd);
}

/* One segment of a window lost again and again for 2 s (the sender's
 * backoff), everything after it arrived: the receiver keeps what it holds
 * out of order until the hole is filled. With lwIP's 6 x RTO it dropped
 * that data after 1.2-1.5 s of silence (patch 0009's short RTO; patch 0012
 * makes it a fixed 20 s), and the sender, its SACK marks cleared by the
 * fourth timeout, sent the whole window again behind the hole. */
static void test_long_hole(struct lsock *c, struct lsock *s)
{
    /* B measures its RTT (its RTO is what the old timeout scaled) */
    for (int i = 0; i < 5; i++)
        transfer(s, c, 100, 1000);
    struct tcp_info tb = info(s);
    transfer(c, s, 256 * 1024, 10000);
    uint32_t mss = info(c).tcpi_snd_mss;
    wire_reset();
    transfer(c, s, 1, 1000);
    uint32_t next = wire.high;
    wire_reset();
    wire.hold_seq = next + 2 * mss;
    wire.hold_until_ms = now_ms() + 2000;
    double ms = transfer(c, s, 24 * mss, 15000);
    checkf(ms >= 0 && wire.held >= 2, "24 segments, the 3rd lost for 2 s (%u copies lost), arrive intact in %.0f ms",
           wire.held, ms);
    checkf(wire.rexmit_other <= 2,
           "... the receiver kept the 21 segments after the hole (RTO %u us): %u other segments sent again",
           tb.tcpi_rto, wire.rexmit_other);
}

int main(void)
{
    if (pair_bed_open(&bed, NULL, NULL) != 0) {
        check(0, "stacks open");
        return tap_done();
    }
    nic_mem_set_tap(bed.na, tap_a, NULL);
    struct lsock *l = NULL, *c = NULL, *s = NULL;
    int rc = pair_connect(bed.a, bed.b, bed.addr_b, PORT, &l, &c, &s);
    check(rc == 0, "A connected to B");
    if (rc == 0) {
        test_tail_loss(c, s);
        test_dup_data(c, s);
        test_two_holes(c, s);
        test_long_hole(c, s);
    }
    if (c)
        lsock_close(c);
    if (s)
        lsock_close(s);
    if (l)
        lsock_close(l);
    pair_bed_close(&bed);
    return tap_done();
}
