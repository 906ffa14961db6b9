/*
 * test_tcp_requeue.c - what follows a retransmission timeout
 * (docs/reliability.md#loss-recovery): the segments the SACK
 * recovery queued for sending again (the redis-loss hang, lwIP patch
 * 0011), and a lost retransmission with nothing else in flight (the tail
 * loss probe after a timeout, patch 0013; test_probe_after_timeout), and
 * a retransmission after a timeout lost again while later ones are SACKed
 * (patch 0014; test_sack_after_timeout), and a hole with one SACKed
 * segment above it (LSTACK_TCP_DUPTHRESH 1; test_one_sack_lost).
 *
 * No DPDK, no root; the real clock (B's timeout comes after about 1 s). TAP
 * output.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
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
 * Stack B sends to a raw peer (raw_tcp.h: segments built by hand, posing
 * as 198.18.0.2 from a port stack A never uses, injected into B's receive
 * queue; B's answers are taken off the wire by a tap on B's port). The raw
 * peer plays a SACK receiver exactly: it announces MSS 1000 and SACK, acks
 * a warm-up transfer segment by segment until B's window is 40+ segments,
 * then, for a window of 40 segments s0..s39, SACKs s36..s38 only. B's SACK
 * recovery takes s0..s35 as lost; its window after the cut (0.7 of the
 * flight plus the 3 SACKed) takes about 31 of them, the rest (s31..s35)
 * wait on B's unsent queue below the SACKed s36..s38, which stay on
 * unacked. The peer then stays silent until B's retransmission timeout,
 * and acks s0..s30.
 *
 * Without patch 0011 the timeout put unacked (s0..s30, s36..s39) in front
 * of unsent (s31..s35); the ACK freed s0..s30 and left s36 at the head of
 * unsent, 5 segments past the cumulative ACK, which the one-segment window
 * after a timeout never fits: B sent nothing more, and every further
 * timeout requeued the same list (the hang). With it, B sends s31 next.
 */

#define PORT 6390
#define MSS 1000u
#define WIN 40u          /* segments in the window the test loses from */
#define SEEN_MAX 8192

static struct pair_bed bed; /* stack A the client side, B the one under test */
static uint16_t raw_port = 21000; /* the raw peer's port of the current test */

/* B's segments to the raw peer, oldest first (payload not kept). */
static struct {
    uint32_t seq[SEEN_MAX];
    uint16_t len[SEEN_MAX];
    uint8_t flags[SEEN_MAX];
    uint32_t ack[SEEN_MAX];
    unsigned n;
} seen;

static bool tap_b(void *ctx, const uint8_t *frame, uint16_t len)
{
    (void)ctx;
    struct raw_seg g;
    if (raw_tcp_parse(frame, len, &g) != 0 || g.dport != raw_port)
        return true;
    if (seen.n < SEEN_MAX) {
        seen.seq[seen.n] = g.seq;
        seen.len[seen.n] = g.len;
        seen.flags[seen.n] = g.flags;
        seen.ack[seen.n] = g.ack;
        seen.n++;
    }
    return false;
}

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

/* The raw peer's segment to B (no payload: it only receives). */
static void raw_send(uint8_t flags, uint32_t seq, uint32_t ack, uint16_t mss, int sack_perm, unsigned nsack,
                     const uint32_t *l, const uint32_t *r)
{
    struct raw_seg g = {
        .saddr = bed.addr_a, .daddr = bed.addr_b, .sport = raw_port, .dport = PORT, .seq = seq, .ack = ack,
        .flags = flags, .wnd = 65535, .mss = mss, .sack_perm = (uint8_t)sack_perm, .nsack = (uint8_t)nsack,
    };
    for (unsigned i = 0; i < nsack; i++) {
        g.sack_l[i] = l[i];
        g.sack_r[i] = r[i];
    }
    memcpy(g.src_mac, bed.mac_a, 6);
    memcpy(g.dst_mac, bed.mac_b, 6);
    uint8_t frame[RAW_TCP_FRAME_MAX(0)];
    size_t n = raw_tcp_build(frame, sizeof(frame), &g);
    static bool told;
    if ((n == 0 || nic_mem_inject(bed.nb, frame, (uint16_t)n) != 0) && !told) {
        check(0, "raw peer: a frame could not be injected");
        told = true;
    }
}

static uint32_t cwnd_segs(struct lsock *s)
{
    struct tcp_info ti;
    memset(&ti, 0, sizeof(ti));
    socklen_t len = sizeof(ti);
    lsock_getsockopt(s, IPPROTO_TCP, TCP_INFO, &ti, &len);
    return ti.tcpi_snd_cwnd;
}

/* Write n bytes on s (all of them: the send buffer holds them). */
static int write_all(struct lsock *s, size_t n)
{
    static uint8_t buf[256 * 1024];
    size_t done = 0;
    while (done < n) {
        struct iovec v = {buf + done, n - done};
        ssize_t r = lsock_send(s, &v, 1, 0);
        if (r <= 0)
            return -1;
        done += (size_t)r;
    }
    return 0;
}

/* The first data segment B sent at or after index from starting at seq,
 * or -1. */
static int sent_at(unsigned from, uint32_t seq)
{
    for (unsigned i = from; i < seen.n; i++)
        if (seen.len[i] > 0 && seen.seq[i] == seq)
            return (int)i;
    return -1;
}

/* The raw peer's handshake (MSS 1000, SACK permitted) and B's accept.
 * Returns the accepted socket (TCP_NODELAY) or NULL; *b_next_out is B's
 * next sequence number, the peer's is iss + 1. */
static struct lsock *raw_connect(struct lsock *l, uint32_t iss, uint32_t *b_next_out)
{
    unsigned from = seen.n;
    raw_send(TH_SYN, iss, 0, MSS, 1, 0, NULL, NULL);
    pair_pump(bed.a, bed.b, 3);
    int sa = -1;
    for (unsigned i = from; i < seen.n; i++)
        if (seen.flags[i] == (TH_SYN | TH_ACK))
            sa = (int)i;
    check(sa >= 0 && seen.ack[sa] == iss + 1, "B answers the raw peer's SYN (MSS 1000, SACK permitted)");
    if (sa < 0)
        return NULL;
    uint32_t b_next = seen.seq[sa] + 1;
    raw_send(TH_ACK, iss + 1, b_next, 0, 0, 0, NULL, NULL);
    struct lsock *s = NULL;
    check(pair_pump_until(bed.a, bed.b, l, EPOLLIN) & EPOLLIN && lsock_accept(l, &s) == 0, "B accepts the connection");
    if (s == NULL)
        return NULL;
    int one = 1;
    lsock_setsockopt(s, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    *b_next_out = b_next;
    return s;
}

static void test_requeue(struct lsock *l)
{
    const uint32_t iss = 7000, mine = iss + 1;
    uint32_t b_next = 0;
    struct lsock *s = raw_connect(l, iss, &b_next);
    if (s == NULL)
        return;

    /* Warm-up: every segment acked on its own (one MSS more window per
     * ACK in slow start) until the window is WIN - 1 segments, then the
     * rest at once (two more): a window of WIN + 1. */
    uint32_t acked = b_next, end = b_next + 80 * MSS;
    check(write_all(s, 80 * MSS) == 0, "warm-up: B writes 80 segments");
    for (int i = 0; i < 20000 && seq_lt(acked, end); i++) {
        pair_pump(bed.a, bed.b, 1);
        uint32_t top = acked;
        for (unsigned k = 0; k < seen.n; k++)
            if (seen.len[k] > 0 && seq_lt(top, seen.seq[k] + seen.len[k]))
                top = seen.seq[k] + seen.len[k];
        if (!seq_lt(acked, top))
            continue;
        acked = cwnd_segs(s) < WIN - 1 ? acked + MSS : top;
        raw_send(TH_ACK, mine, acked, 0, 0, 0, NULL, NULL);
    }
    pair_pump(bed.a, bed.b, 3);
    uint32_t cw = cwnd_segs(s);
    checkf(seq_lt(acked, end + 1) && !seq_lt(acked, end) && cw >= WIN && cw <= WIN + 3,
           "warm-up: all acked, B's window is %u segments (want %u-%u)", cw, WIN, WIN + 3);
    pair_pump(bed.a, bed.b, 20);

    /* The window: s0..s39, all sent at once. */
    uint32_t s0 = acked;
    unsigned from = seen.n;
    check(write_all(s, WIN * MSS) == 0, "B writes 40 segments");
    pair_pump(bed.a, bed.b, 3);
    unsigned nsent = 0;
    for (unsigned k = from; k < seen.n; k++)
        if (seen.len[k] > 0)
            nsent++;
    checkf(nsent == WIN && sent_at(from, s0 + (WIN - 1) * MSS) >= 0, "... all 40 on the wire (%u data segments)",
           nsent);

    /* SACK s36..s38: s0..s35 are lost; the window after the cut leaves
     * the last few of them queued. */
    uint32_t l36 = s0 + 36 * MSS, r38 = s0 + 39 * MSS;
    from = seen.n;
    raw_send(TH_ACK, mine, s0, 0, 0, 1, &l36, &r38);
    pair_pump(bed.a, bed.b, 3);
    int last_rexmit = -1;
    for (unsigned k = 0; k < 36; k++)
        if (sent_at(from, s0 + k * MSS) >= 0)
            last_rexmit = (int)k;
    checkf(last_rexmit >= 20 && last_rexmit < 35 && sent_at(from, s0 + 35 * MSS) < 0,
           "the SACK recovery resends s0..s%d at once, the rest of s0..s35 waits for the window", last_rexmit);

    /* Silence until B's retransmission timeout (it resends s0). */
    from = seen.n;
    double t0 = now_ms();
    while (sent_at(from, s0) < 0 && now_ms() - t0 < 3000)
        pair_pump(bed.a, bed.b, 1);
    checkf(sent_at(from, s0) >= 0, "B's timeout resends s0 after %.0f ms", now_ms() - t0);

    /* Everything up to the queued ones arrived: ack s0..s(last_rexmit). */
    uint32_t next = s0 + (uint32_t)(last_rexmit + 1) * MSS;
    from = seen.n;
    raw_send(TH_ACK, mine, next, 0, 0, 1, &l36, &r38);
    t0 = now_ms();
    while (sent_at(from, next) < 0 && now_ms() - t0 < 2000)
        pair_pump(bed.a, bed.b, 1);
    checkf(sent_at(from, next) >= 0,
           "B sends s%d, the first segment past the cumulative ACK, next (%u segments sent in %.0f ms)",
           last_rexmit + 1, seen.n - from, now_ms() - t0);

    raw_send(TH_RST, mine, 0, 0, 0, 0, NULL, NULL);
    pair_pump(bed.a, bed.b, 3);
    lsock_close(s);
}

/* raw_connect from the raw peer's port (raw_port becomes it), then a few
 * exchanges of 100 bytes, each acked at once by the peer, so that B
 * measures the RTT (its RTO becomes 250 ms). Returns the accepted socket
 * or NULL; *acked_out is B's next sequence number after the exchanges. */
static struct lsock *raw_connect_measured(struct lsock *l, uint16_t port, uint32_t iss, uint32_t *acked_out)
{
    raw_port = port;
    const uint32_t mine = iss + 1;
    uint32_t b_next = 0;
    struct lsock *s = raw_connect(l, iss, &b_next);
    if (s == NULL)
        return NULL;
    uint32_t acked = b_next;
    for (int i = 0; i < 5; i++) {
        unsigned from = seen.n;
        write_all(s, 100);
        pair_pump(bed.a, bed.b, 3);
        if (sent_at(from, acked) >= 0) {
            acked += 100;
            raw_send(TH_ACK, mine, acked, 0, 0, 0, NULL, NULL);
            pair_pump(bed.a, bed.b, 3);
        }
    }
    *acked_out = acked;
    return s;
}

/* Patch 0013: after a timeout the window is one segment; when that
 * retransmission is lost too, nothing else in flight brings an ACK. The
 * tail loss probe sends it again after 2 slow ticks (50-150 ms); without
 * the patch the next copy waited for the doubled RTO. The peer acks
 * nothing: the copies are the probe's (before the timeout, patch 0010),
 * the timeout's, and the probe's after it. */
static void test_probe_after_timeout(struct lsock *l)
{
    const uint32_t iss = 9000, mine = iss + 1;
    uint32_t acked = 0;
    struct lsock *s = raw_connect_measured(l, 21001, iss, &acked);
    if (s == NULL)
        return;
    /* one segment, never acked: its timeout copy, then the next copy */
    unsigned from = seen.n;
    write_all(s, 100);
    pair_pump(bed.a, bed.b, 3);
    int orig = sent_at(from, acked);
    check(orig >= 0, "B sends one more segment, which the peer never acks");
    double t_sent = now_ms(), t[3] = {0, 0, 0};
    int copies = 0;
    while (orig >= 0 && copies < 3 && now_ms() - t_sent < 8000) {
        unsigned before = seen.n;
        pair_pump(bed.a, bed.b, 1);
        for (unsigned k = before; k < seen.n && copies < 3; k++)
            if (seen.len[k] > 0 && seen.seq[k] == acked && (int)k > orig)
                t[copies++] = now_ms();
    }
    /* copies: the tail loss probe's, the timeout's, then the next one */
    checkf(copies == 3, "the unacked segment is sent again three times (%d copies in 8 s)", copies);
    if (copies == 3)
        checkf(t[2] - t[1] < 300,
               "... the third copy %.0f ms after the timeout's (probe: 50-150 ms; the doubled RTO: 400 ms or "
               "more; the probe came after %.0f ms, the timeout after %.0f ms)",
               t[2] - t[1], t[0] - t_sent, t[1] - t_sent);
    raw_send(TH_RST, mine, 0, 0, 0, 0, NULL, NULL);
    pair_pump(bed.a, bed.b, 3);
    lsock_close(s);
}

/* Patch 0014: SACK during the go-back-N after a timeout. Four segments
 * s0..s3 go unacked until B's timeout resends s0; the peer acks s0 (the
 * window, now two segments, sends s1 and s2), then loses s1 again and
 * SACKs s2. Every segment sent since the timeout above s1 is SACKed, so s1
 * is lost again and goes out at once; without the patch the go-back-N
 * ignored the SACK: s1 waited for the tail loss probe (which sends the
 * last segment, s2) and then the doubled RTO. */
static void test_sack_after_timeout(struct lsock *l)
{
    const uint32_t iss = 11000, mine = iss + 1;
    uint32_t acked = 0;
    struct lsock *s = raw_connect_measured(l, 21002, iss, &acked);
    if (s == NULL)
        return;
    const uint32_t s0 = acked, s1 = s0 + MSS, s2 = s1 + MSS, s3 = s2 + MSS;
    unsigned from = seen.n;
    write_all(s, 4 * MSS);
    pair_pump(bed.a, bed.b, 3);
    check(sent_at(from, s0) >= 0 && sent_at(from, s3) >= 0, "timeout: B sends s0..s3, which the peer does not ack");
    int orig = sent_at(from, s0);
    double t0 = now_ms();
    int rto = -1;
    while (orig >= 0 && rto < 0 && now_ms() - t0 < 3000) {
        pair_pump(bed.a, bed.b, 1);
        for (unsigned k = (unsigned)orig + 1; k < seen.n && rto < 0; k++)
            if (seen.len[k] > 0 && seen.seq[k] == s0)
                rto = (int)k;
    }
    checkf(rto >= 0, "timeout: B's timeout resends s0 after %.0f ms", now_ms() - t0);
    from = seen.n;
    raw_send(TH_ACK, mine, s1, 0, 0, 0, NULL, NULL);
    pair_pump(bed.a, bed.b, 3);
    checkf(sent_at(from, s1) >= 0 && sent_at(from, s2) >= 0 && sent_at(from, s3) < 0,
           "timeout: the ACK of s0 opens the window to two segments: s1 and s2 go out again (%u segments sent)",
           seen.n - from);
    from = seen.n;
    raw_send(TH_ACK, mine, s1, 0, 0, 1, &s2, &s3);
    pair_pump(bed.a, bed.b, 3);
    checkf(sent_at(from, s1) >= 0,
           "timeout: s1 lost again, s2 SACKed: B sends s1 again at once (saw %u segments in 3 rounds; without "
           "patch 0014: none before the tail loss probe)",
           seen.n - from);
    raw_send(TH_RST, mine, 0, 0, 0, 0, NULL, NULL);
    pair_pump(bed.a, bed.b, 3);
    lsock_close(s);
}

/* LSTACK_TCP_DUPTHRESH 1 (lwipopts.h): a hole with one SACKed segment
 * above it. B's window after the short exchanges is a few segments; the
 * first is lost and the peer SACKs the second: B sends s0 again at once.
 * With the threshold at 3 (built with -DLSTACK_TCP_DUPTHRESH=3) one SACK
 * made nothing lost and B sent nothing until the tail loss probe
 * (50-100 ms): the stalls of the corrupt profile of redis-loss. */
static void test_one_sack_lost(struct lsock *l)
{
    const uint32_t iss = 13000, mine = iss + 1;
    uint32_t acked = 0;
    struct lsock *s = raw_connect_measured(l, 21003, iss, &acked);
    if (s == NULL)
        return;
    const uint32_t s0 = acked;
    unsigned from = seen.n;
    write_all(s, 16 * MSS);
    pair_pump(bed.a, bed.b, 3);
    unsigned n0 = 0;
    while (n0 < 16 && sent_at(from, s0 + n0 * MSS) >= 0)
        n0++;
    checkf(n0 >= 3 && n0 < 16, "one SACK: B sends the %u segments its window takes of 16", n0);
    uint32_t l1 = s0 + MSS, r1 = s0 + 2 * MSS;
    from = seen.n;
    raw_send(TH_ACK, mine, s0, 0, 0, 1, &l1, &r1);
    pair_pump(bed.a, bed.b, 3);
    checkf(sent_at(from, s0) >= 0,
           "one SACK: s0 lost, s1 SACKed: B sends s0 again at once (saw %u segments in 3 rounds; with the "
           "threshold at 3: none before the tail loss probe)",
           seen.n - from);
    raw_send(TH_RST, mine, 0, 0, 0, 0, NULL, NULL);
    pair_pump(bed.a, bed.b, 3);
    lsock_close(s);
}

int main(void)
{
    if (pair_bed_open(&bed, NULL, NULL) != 0) {
        check(0, "stacks open");
        return tap_done();
    }
    nic_mem_set_tap(bed.nb, tap_b, NULL);
    pair_pump(bed.a, bed.b, 10);
    struct lsock *l = NULL;
    int rc = lsock_new(bed.b, &l);
    if (rc == 0)
        rc = lsock_bind(l, htonl(INADDR_ANY), htons(PORT));
    if (rc == 0)
        rc = lsock_listen(l, 8);
    check(rc == 0, "listener on B");
    if (rc == 0) {
        test_requeue(l);
        test_probe_after_timeout(l);
        test_sack_after_timeout(l);
        test_one_sack_lost(l);
    }
    if (l)
        lsock_close(l);
    pair_bed_close(&bed);
    return tap_done();
}
