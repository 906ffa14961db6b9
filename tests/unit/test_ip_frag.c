/*
 * test_ip_frag.c - IPv4 fragments through a stack: two stacks
 * back to back on the memory port, A (198.18.0.2) and B (198.18.0.1).
 * Fragments built by hand pose as A and are injected into B's receive
 * queue; a tap on B's port takes B's answers to them (ICMP) off the wire
 * and reassembles them here, so the test also sees that B fragments a
 * large reply (IP_FRAG) within the MTU. A tap on A's port turns A's TCP
 * data segments into fragments for B. Checked: in order, out of order,
 * duplicate and overlapping fragments, a datagram past 65535 bytes, a TCP
 * segment in fragments (and one with a wrong checksum: dropped after
 * reassembly), the bound on frames held (a quarter of the mbuf
 * pool, at most 128: the oldest datagram is evicted) and the age limit (IP_REASS_MAXAGE: a train
 * that never completes is freed after ~15 s, its mbufs back in the pool).
 * No DPDK, no root. TAP output. The age check waits ~16 s of real time.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "common/inet_csum.h"
#include "conf/conf.h"
#include "nic/nic.h"
#include "mem_nic.h"
#include "sock/lsock.h"
#include "stack/stack.h"
#include "pair_conf.h"
#include "pair_pump.h"

#include "tap.h"

#define MTU 1500
#define FRAG_MAX 1480 /* payload bytes of a fragment at MTU 1500 */
#define HELD_MAX 128  /* frames held at most with a pool of 1024: min(1024 / 4, 128) */
#define MAXAGE_S 15   /* IP_REASS_MAXAGE */
#define ICMP_ECHO 8
#define ICMP_ECHOREPLY 0
#define ICMP_TIME_EXCEEDED 11

static struct stack *A, *B;
static struct nic *nic_a, *nic_b;
static uint32_t addr_a, addr_b;
static uint8_t mac_a[6], mac_b[6];

static void put16(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t)(v >> 8);
    p[1] = (uint8_t)v;
}

static uint16_t get16(const uint8_t *p)
{
    return (uint16_t)(p[0] << 8 | p[1]);
}

/* ---- B's ICMP answers, reassembled by the test ---- */
static struct {
    uint8_t data[65536];
    uint8_t have[65536];      /* 1: byte received */
    uint32_t total;           /* payload length, once the last fragment came (0 before) */
    unsigned frames;          /* fragments of the echo reply seen */
    unsigned oversize;        /* frames longer than the MTU allows */
    unsigned time_exceeded;   /* ICMP time exceeded (fragment reassembly) sent by B */
} rep;

static void rep_reset(void)
{
    memset(rep.have, 0, sizeof(rep.have));
    rep.total = 0;
    rep.frames = 0;
    rep.oversize = 0;
}

/* Every byte of the reply present: its ICMP message length, else 0. */
static uint32_t rep_complete(void)
{
    if (rep.total == 0)
        return 0;
    for (uint32_t i = 0; i < rep.total; i++)
        if (!rep.have[i])
            return 0;
    return rep.total;
}

static bool tap_b(void *ctx, const uint8_t *f, uint16_t len)
{
    (void)ctx;
    if (len < 34 || get16(f + 12) != 0x0800 || f[14 + 9] != IPPROTO_ICMP)
        return true;
    const uint8_t *ip = f + 14;
    size_t hl = (size_t)(ip[0] & 0x0f) * 4, tot = get16(ip + 2);
    uint16_t fo = get16(ip + 6);
    uint32_t off = (uint32_t)(fo & 0x1fff) * 8, n = (uint32_t)(tot - hl);
    if (len > 14 + MTU)
        rep.oversize++;
    if (off == 0 && ip[hl] == ICMP_TIME_EXCEEDED) {
        rep.time_exceeded++;
        return false;
    }
    if (off + n > sizeof(rep.data))
        return false;
    memcpy(rep.data + off, ip + hl, n);
    memset(rep.have + off, 1, n);
    if (!(fo & 0x2000))
        rep.total = off + n;
    rep.frames++;
    return false;
}

/* ---- fragments posing as A ---- */

/* Inject one fragment of datagram (id, proto) into B: data is the
 * fragment's payload, off its offset in the datagram's payload (a multiple
 * of 8 unless a test wants otherwise), more the MF flag. */
static int inject_frag(uint16_t id, uint8_t proto, const uint8_t *data, uint32_t off, uint16_t len, bool more)
{
    uint8_t f[14 + 20 + FRAG_MAX];
    if (len > FRAG_MAX)
        return -1;
    memcpy(f, mac_b, 6);
    memcpy(f + 6, mac_a, 6);
    put16(f + 12, 0x0800);
    uint8_t *ip = f + 14;
    memset(ip, 0, 20);
    ip[0] = 0x45;
    put16(ip + 2, (uint16_t)(20 + len));
    put16(ip + 4, id);
    put16(ip + 6, (uint16_t)((more ? 0x2000 : 0) | ((off / 8) & 0x1fff)));
    ip[8] = 64;
    ip[9] = proto;
    memcpy(ip + 12, &addr_a, 4);
    memcpy(ip + 16, &addr_b, 4);
    put16(ip + 10, (uint16_t)~inet_csum_add(0, ip, 20));
    memcpy(ip + 20, data, len);
    return nic_mem_inject(nic_b, f, (uint16_t)(14 + 20 + len));
}

/* An echo request of len bytes in all (header included) into msg. */
static void echo_build(uint8_t *msg, uint32_t len, uint16_t ident, uint16_t seq)
{
    memset(msg, 0, 8);
    msg[0] = ICMP_ECHO;
    put16(msg + 4, ident);
    put16(msg + 6, seq);
    for (uint32_t i = 8; i < len; i++)
        msg[i] = (uint8_t)(i * 7 + seq);
    put16(msg + 2, (uint16_t)~inet_csum_add(0, msg, len));
}

/* Poll both stacks until B's reply is whole (at most 200 rounds). */
static uint32_t pump_reply(void)
{
    for (int i = 0; i < 200 && rep_complete() == 0; i++)
        pair_pump(A, B, 1);
    pair_pump(A, B, 5);
    return rep_complete();
}

/* The reply answers request (len bytes): type 0, same id, seq and data. */
static bool reply_matches(const uint8_t *req, uint32_t len)
{
    return rep_complete() == len && rep.data[0] == ICMP_ECHOREPLY && memcmp(rep.data + 4, req + 4, len - 4) == 0 &&
           (uint16_t)~inet_csum_add(0, rep.data, len) == 0;
}

static void b_stats(struct stack_stats *st)
{
    pair_pump(A, B, 2);
    stack_get_stats(B, st);
}

/* Buffers in use now: injected frames come out of A's buffers (the memory
 * port charges a frame to its sender) and B's replies out of B's. */
static unsigned bufs_in_use(void)
{
    struct stack_stats sa, sb;
    stack_get_stats(A, &sa);
    stack_get_stats(B, &sb);
    return (sa.nic.mbuf_total - sa.nic.mbuf_free) + (sb.nic.mbuf_total - sb.nic.mbuf_free);
}

static unsigned long long d(uint64_t a, uint64_t b)
{
    return (unsigned long long)(b - a);
}

static uint8_t msg[70000];

/* 2000 bytes in two fragments, in order: answered, with a reply that
 * leaves B in fragments no longer than the MTU. */
static void test_in_order(void)
{
    struct stack_stats s0, s1;
    b_stats(&s0);
    rep_reset();
    echo_build(msg, 2008, 1, 1);
    inject_frag(100, IPPROTO_ICMP, msg, 0, FRAG_MAX, true);
    inject_frag(100, IPPROTO_ICMP, msg + FRAG_MAX, FRAG_MAX, 2008 - FRAG_MAX, false);
    uint32_t got = pump_reply();
    checkf(reply_matches(msg, 2008), "in order: 2008-byte echo in 2 fragments answered (reply %u bytes)", got);
    checkf(rep.frames >= 2 && rep.oversize == 0, "in order: B's reply left in %u fragments, none over the MTU",
           rep.frames);
    b_stats(&s1);
    checkf(d(s0.frag_in, s1.frag_in) == 2 && d(s0.frag_reassembled, s1.frag_reassembled) == 1,
           "in order: counted frag_in +%llu, frag_reassembled +%llu", d(s0.frag_in, s1.frag_in),
           d(s0.frag_reassembled, s1.frag_reassembled));
    checkf(s1.frag_mbufs_held == 0 && bufs_in_use() == 0,
           "in order: nothing held afterwards (frag_mbufs_held %llu, buffers in use %u)",
           (unsigned long long)s1.frag_mbufs_held, bufs_in_use());
}

/* 8000 bytes in six fragments, delivered last first, then shuffled. */
static void test_out_of_order(void)
{
    struct stack_stats s0, s1;
    b_stats(&s0);
    rep_reset();
    uint32_t len = 8008;
    echo_build(msg, len, 1, 2);
    static const int order[] = {5, 2, 0, 4, 1, 3};
    for (int k = 0; k < 6; k++) {
        uint32_t off = (uint32_t)order[k] * FRAG_MAX;
        uint32_t n = len - off < FRAG_MAX ? len - off : FRAG_MAX;
        inject_frag(101, IPPROTO_ICMP, msg + off, off, (uint16_t)n, off + n < len);
        pair_pump(A, B, 1);
    }
    uint32_t got = pump_reply();
    checkf(reply_matches(msg, len), "out of order: 8008-byte echo in 6 shuffled fragments answered (reply %u)", got);
    b_stats(&s1);
    checkf(d(s0.frag_reassembled, s1.frag_reassembled) == 1 && d(s0.frag_dropped, s1.frag_dropped) == 0,
           "out of order: one datagram reassembled, nothing dropped");
}

/* The first fragment twice: the copy is dropped and counted, the datagram
 * still completes once. */
static void test_duplicate(void)
{
    struct stack_stats s0, s1;
    b_stats(&s0);
    rep_reset();
    echo_build(msg, 2008, 1, 3);
    inject_frag(102, IPPROTO_ICMP, msg, 0, FRAG_MAX, true);
    inject_frag(102, IPPROTO_ICMP, msg, 0, FRAG_MAX, true);
    pair_pump(A, B, 2);
    inject_frag(102, IPPROTO_ICMP, msg + FRAG_MAX, FRAG_MAX, 2008 - FRAG_MAX, false);
    pump_reply();
    checkf(reply_matches(msg, 2008), "duplicate: the datagram is answered once whole");
    b_stats(&s1);
    checkf(d(s0.frag_dropped, s1.frag_dropped) == 1 && d(s0.frag_reassembled, s1.frag_reassembled) == 1,
           "duplicate: frag_dropped +%llu, frag_reassembled +%llu", d(s0.frag_dropped, s1.frag_dropped),
           d(s0.frag_reassembled, s1.frag_reassembled));
    checkf(bufs_in_use() == 0, "duplicate: every buffer back (%u in use)", bufs_in_use());
}

/* A fragment overlapping one already held (different bytes, as in a
 * Teardrop-style rewrite) is dropped: the answer carries the first data. */
static void test_overlap(void)
{
    struct stack_stats s0, s1;
    b_stats(&s0);
    rep_reset();
    echo_build(msg, 2008, 1, 4);
    inject_frag(103, IPPROTO_ICMP, msg, 0, FRAG_MAX, true);
    uint8_t evil[FRAG_MAX];
    memset(evil, 0xee, sizeof(evil));
    inject_frag(103, IPPROTO_ICMP, evil, 800, 1000, true); /* overlaps [800, 1480) */
    pair_pump(A, B, 2);
    inject_frag(103, IPPROTO_ICMP, msg + FRAG_MAX, FRAG_MAX, 2008 - FRAG_MAX, false);
    pump_reply();
    checkf(reply_matches(msg, 2008), "overlap: the overlapping fragment is ignored, the original data answered");
    b_stats(&s1);
    checkf(d(s0.frag_dropped, s1.frag_dropped) == 1, "overlap: frag_dropped +%llu",
           d(s0.frag_dropped, s1.frag_dropped));
    checkf(bufs_in_use() == 0, "overlap: every buffer back (%u in use)", bufs_in_use());
}

/* A last fragment that would end past 65535 bytes (ping of death) is
 * dropped at once: nothing is held for it. */
static void test_oversized(void)
{
    struct stack_stats s0, s1;
    b_stats(&s0);
    rep_reset();
    memset(msg, 0x55, FRAG_MAX);
    inject_frag(104, IPPROTO_ICMP, msg, 65528, 1000, false); /* ends at 66528 */
    pair_pump(A, B, 3);
    b_stats(&s1);
    checkf(d(s0.frag_dropped, s1.frag_dropped) == 1 && s1.frag_mbufs_held == 0,
           "oversized: a fragment ending at 66528 is dropped (frag_dropped +%llu, held %llu)",
           d(s0.frag_dropped, s1.frag_dropped), (unsigned long long)s1.frag_mbufs_held);
    checkf(bufs_in_use() == 0 && rep.frames == 0, "oversized: no answer, every buffer back");
}

/* ---- a TCP segment in fragments: A's data segments are taken off the
 * wire by a tap on A's port and reach B as three fragments each, last
 * first. */
#define CAP_MAX 64
static struct {
    uint8_t f[CAP_MAX][14 + MTU];
    uint16_t len[CAP_MAX];
    unsigned n;
} cap;

static bool tap_a(void *ctx, const uint8_t *f, uint16_t len)
{
    (void)ctx;
    if (len < 54 || get16(f + 12) != 0x0800 || f[14 + 9] != IPPROTO_TCP)
        return true;
    const uint8_t *ip = f + 14;
    size_t hl = (size_t)(ip[0] & 0x0f) * 4, tot = get16(ip + 2);
    size_t thl = (size_t)(ip[hl + 12] >> 4) * 4;
    if (tot <= hl + thl || cap.n == CAP_MAX)
        return true; /* no payload: an ACK passes whole */
    memcpy(cap.f[cap.n], f, len);
    cap.len[cap.n++] = len;
    return false;
}

/* Send each captured segment to B as 3 fragments (8-byte multiples). */
static unsigned fragment_captured(void)
{
    unsigned sent = 0;
    for (unsigned i = 0; i < cap.n; i++) {
        const uint8_t *ip = cap.f[i] + 14;
        uint16_t id = get16(ip + 4);
        uint32_t n = get16(ip + 2) - 20u;
        uint32_t a = (n / 3) & ~7u, b = (2 * n / 3) & ~7u;
        inject_frag(id, IPPROTO_TCP, ip + 20 + b, b, (uint16_t)(n - b), false);
        inject_frag(id, IPPROTO_TCP, ip + 20, 0, (uint16_t)a, true);
        inject_frag(id, IPPROTO_TCP, ip + 20 + a, a, (uint16_t)(b - a), true);
        sent++;
    }
    cap.n = 0;
    return sent;
}

static void test_tcp(void)
{
    struct lsock *l, *c, *s;
    if (pair_connect(A, B, addr_b, 6379, &l, &c, &s) != 0) {
        check(0, "tcp: connection A -> B");
        return;
    }
    struct stack_stats s0, s1;
    b_stats(&s0);
    nic_mem_set_tap(nic_a, tap_a, NULL);
    static uint8_t out[3000], in[3000];
    for (size_t i = 0; i < sizeof(out); i++)
        out[i] = (uint8_t)(i * 13 + 1);
    struct iovec iov = {out, sizeof(out)};
    ssize_t w = lsock_send(c, &iov, 1, 0);
    size_t got = 0;
    unsigned segs = 0;
    for (int i = 0; i < 400 && got < sizeof(in); i++) {
        stack_poll(A);
        segs += fragment_captured();
        stack_poll(B);
        struct iovec r = {in + got, sizeof(in) - got};
        ssize_t k = lsock_recv(s, &r, 1, 0);
        if (k > 0)
            got += (size_t)k;
    }
    nic_mem_set_tap(nic_a, NULL, NULL);
    checkf(w == (ssize_t)sizeof(out) && got == sizeof(in) && memcmp(in, out, sizeof(in)) == 0,
           "tcp: 3000 bytes sent in %u segments, each in 3 fragments last first: B read %zu bytes, all right",
           segs, got);
    b_stats(&s1);
    checkf(segs > 0 && d(s0.frag_reassembled, s1.frag_reassembled) >= segs,
           "tcp: each segment reassembled (frag_reassembled +%llu for %u segments)",
           d(s0.frag_reassembled, s1.frag_reassembled), segs);
    lsock_close(c);
    lsock_close(s);
    lsock_close(l);
    pair_pump(A, B, 50);
}

/* A TCP segment whose checksum is wrong, in fragments: B's frame filter
 * cannot check a fragment, so lwIP checks the reassembled datagram and
 * drops it; A sends it again after its RTO and B reads the data intact. */
static void test_tcp_bad_csum(void)
{
    struct lsock *l, *c, *s;
    if (pair_connect(A, B, addr_b, 6380, &l, &c, &s) != 0) {
        check(0, "tcp bad checksum: connection A -> B");
        return;
    }
    nic_mem_set_tap(nic_a, tap_a, NULL);
    static uint8_t out[1000], in[1000];
    for (size_t i = 0; i < sizeof(out); i++)
        out[i] = (uint8_t)(i * 7 + 3);
    struct iovec iov = {out, sizeof(out)};
    ssize_t w = lsock_send(c, &iov, 1, 0);
    size_t got = 0;
    unsigned segs = 0, corrupted = 0;
    struct timespec t0, t;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    double waited = 0;
    while (got < sizeof(in) && waited < 10) {
        stack_poll(A);
        if (cap.n > 0 && corrupted == 0) {
            /* one payload byte of the first data segment, past the headers */
            cap.f[0][cap.len[0] - 1] ^= 0x5a;
            corrupted = 1;
        }
        segs += fragment_captured();
        stack_poll(B);
        struct iovec r = {in + got, sizeof(in) - got};
        ssize_t k = lsock_recv(s, &r, 1, 0);
        if (k > 0)
            got += (size_t)k;
        usleep(1000);
        clock_gettime(CLOCK_MONOTONIC, &t);
        waited = (double)(t.tv_sec - t0.tv_sec) + (double)(t.tv_nsec - t0.tv_nsec) / 1e9;
    }
    nic_mem_set_tap(nic_a, NULL, NULL);
    checkf(w == (ssize_t)sizeof(out) && corrupted && segs >= 2 && got == sizeof(in) &&
               memcmp(in, out, sizeof(in)) == 0,
           "tcp bad checksum: a segment corrupted in fragments is dropped, its resend read intact "
           "(%u segments sent, B read %zu bytes%s, %.1f s)",
           segs, got, got == sizeof(in) && memcmp(in, out, sizeof(in)) != 0 ? ", corrupted" : "", waited);
    lsock_close(c);
    lsock_close(s);
    lsock_close(l);
    pair_pump(A, B, 50);
}

/* ---- bounds: frames held, and their age ---- */

/* 200 datagrams that never complete (first fragment only): no more than
 * HELD_MAX frames are held, the oldest datagrams go first; plus one train
 * with its middle fragment missing. After MAXAGE_S all are freed and every
 * mbuf is back. */
static void test_bounds(void)
{
    struct stack_stats s0, s1, s2;
    b_stats(&s0);
    rep_reset();
    rep.time_exceeded = 0;
    echo_build(msg, 4008, 1, 9);
    /* The train: fragments 0 and 2 of 3, never 1. */
    inject_frag(900, IPPROTO_ICMP, msg, 0, FRAG_MAX, true);
    inject_frag(900, IPPROTO_ICMP, msg + 2 * FRAG_MAX, 2 * FRAG_MAX, 4008 - 2 * FRAG_MAX, false);
    pair_pump(A, B, 2);
    b_stats(&s1);
    checkf(s1.frag_mbufs_held == 2 && bufs_in_use() == 2,
           "age: a train missing its middle holds 2 frames (held %llu, buffers in use %u)",
           (unsigned long long)s1.frag_mbufs_held, bufs_in_use());

    for (unsigned i = 0; i < 200; i++) {
        echo_build(msg, 2008, 2, (uint16_t)i);
        inject_frag((uint16_t)(1000 + i), IPPROTO_ICMP, msg, 0, FRAG_MAX, true);
        if (i % 16 == 15)
            pair_pump(A, B, 1);
    }
    b_stats(&s1);
    unsigned in_use = bufs_in_use();
    checkf(s1.frag_mbufs_max == HELD_MAX && s1.frag_mbufs_held == HELD_MAX && in_use == HELD_MAX,
           "bound: after 201 incomplete datagrams %llu frames are held (limit %d), mbufs in use %u",
           (unsigned long long)s1.frag_mbufs_held, HELD_MAX, in_use);
    /* The train (oldest, 2 frames) goes first, then one single each. */
    checkf(d(s0.frag_evicted, s1.frag_evicted) == 201 - HELD_MAX,
           "bound: the oldest datagrams were evicted to make room (frag_evicted +%llu, expected %d)",
           d(s0.frag_evicted, s1.frag_evicted), 201 - HELD_MAX);

    checkf(rep.time_exceeded == 0, "bound: an evicted datagram sends no ICMP time exceeded (%u sent; as Linux)",
           rep.time_exceeded);
    rep.time_exceeded = 0;
    struct timespec t0, t;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    double waited = 0;
    do {
        pair_pump(A, B, 1);
        usleep(2000);
        stack_get_stats(B, &s2);
        clock_gettime(CLOCK_MONOTONIC, &t);
        waited = (double)(t.tv_sec - t0.tv_sec) + (double)(t.tv_nsec - t0.tv_nsec) / 1e9;
    } while (s2.frag_mbufs_held != 0 && waited < MAXAGE_S + 15);
    b_stats(&s2);
    checkf(s2.frag_mbufs_held == 0 && bufs_in_use() == 0,
           "age: everything held is freed after %.1f s, every buffer back (%u in use)", waited, bufs_in_use());
    checkf(waited >= MAXAGE_S - 1, "age: not before the age limit (%.1f s, limit %d s)", waited, MAXAGE_S);
    checkf(d(s1.frag_timeout, s2.frag_timeout) == HELD_MAX,
           "age: counted frag_timeout +%llu (the %d datagrams held)", d(s1.frag_timeout, s2.frag_timeout),
           HELD_MAX);
    checkf(rep.time_exceeded == HELD_MAX, "age: B told the sender of each (ICMP time exceeded, %u sent)",
           rep.time_exceeded);
}

/* A small pool: reassembly holds at most a quarter of it (here 200 / 4 =
 * 50 frames), so fragments that never complete leave the port buffers to
 * receive into. */
static void test_small_pool(const struct lstack_conf *ca, const struct lstack_conf *cb)
{
    struct stack *a0 = A, *b0 = B;
    struct nic *na0 = nic_a, *nb0 = nic_b;
    if (nic_mem_pair(200, (uint16_t)stack_nic_priv_size(), 32, &nic_a, &nic_b) != 0) {
        check(0, "small pool: memory port pair of 200 buffers opens");
        return;
    }
    char err[256];
    A = B = NULL;
    if (stack_open(&A, ca, 0, nic_a, err, sizeof(err)) != 0 || stack_open(&B, cb, 1, nic_b, err, sizeof(err)) != 0) {
        checkf(0, "small pool: stacks open (%s)", err);
        return;
    }
    stack_mac(A, mac_a);
    stack_mac(B, mac_b);
    pair_pump(A, B, 20);
    nic_mem_set_tap(nic_b, tap_b, NULL);
    for (unsigned i = 0; i < 100; i++) {
        echo_build(msg, 2008, 3, (uint16_t)i);
        inject_frag((uint16_t)(3000 + i), IPPROTO_ICMP, msg, 0, FRAG_MAX, true);
        if (i % 16 == 15)
            pair_pump(A, B, 1);
    }
    struct stack_stats st;
    b_stats(&st);
    checkf(st.frag_mbufs_max == 50 && st.frag_mbufs_held == 50 && st.frag_evicted == 50,
           "small pool: 100 incomplete datagrams, at most %llu frames held of a 200-buffer pool (held %llu, "
           "evicted %llu)",
           (unsigned long long)st.frag_mbufs_max, (unsigned long long)st.frag_mbufs_held,
           (unsigned long long)st.frag_evicted);
    rep_reset();
    echo_build(msg, 2008, 3, 999);
    inject_frag(3999, IPPROTO_ICMP, msg, 0, FRAG_MAX, true);
    inject_frag(3999, IPPROTO_ICMP, msg + FRAG_MAX, FRAG_MAX, 2008 - FRAG_MAX, false);
    pump_reply();
    check(reply_matches(msg, 2008), "small pool: a whole datagram still gets through meanwhile");
    stack_close(A);
    stack_close(B);
    A = a0, B = b0, nic_a = na0, nic_b = nb0;
    stack_mac(A, mac_a);
    stack_mac(B, mac_b);
}

int main(void)
{
    struct lstack_conf ca, cb;
    char err[512];
    if (pair_conf(&ca, "198.18.0.2", "198.18.0.1", NULL) != 0 || pair_conf(&cb, "198.18.0.1", "198.18.0.2", NULL) != 0) {
        printf("not ok 1 - configs parse\n1..1\n");
        return 1;
    }
    if (pair_open_ports(&ca, &cb, &A, &B, &nic_a, &nic_b, err, sizeof(err)) != 0) {
        printf("not ok 1 - stacks open: %s\n1..1\n", err);
        return 1;
    }
    addr_a = inet_addr("198.18.0.2");
    addr_b = inet_addr("198.18.0.1");
    stack_mac(A, mac_a);
    stack_mac(B, mac_b);
    pair_pump(A, B, 20); /* ARP both ways */
    nic_mem_set_tap(nic_b, tap_b, NULL);

    test_in_order();
    test_out_of_order();
    test_duplicate();
    test_overlap();
    test_oversized();
    test_tcp();
    test_tcp_bad_csum();
    test_bounds();
    test_small_pool(&ca, &cb);

    nic_mem_set_tap(nic_b, NULL, NULL);
    stack_close(A);
    stack_close(B);
    lstack_conf_free(&ca);
    lstack_conf_free(&cb);
    return tap_done();
}
