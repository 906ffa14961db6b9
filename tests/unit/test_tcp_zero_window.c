/*
 * test_tcp_zero_window.c - both windows shut: the peer's receive window is
 * zero while our send buffer is full, and the peer's data (and its
 * retransmissions) goes on arriving. Every segment the peer sends must be
 * acknowledged in a way the peer accepts, the zero-window probes included
 * (lwIP patches 0019, 0026).
 *
 * Stack B (198.18.0.1) of the pair bed under test, against a raw peer posing
 * as A from ports A never uses (raw_tcp.h; B's frames to those ports are
 * taken by a tap and go no further). The peer is a pipelining Redis client
 * on Linux: it writes without reading, so its receive buffer (64 KiB here)
 * fills with B's replies and its window falls to zero. It judges each
 * segment of B as Linux 6.17 and later do (tcp_sequence): a segment that
 * starts past the window's right edge, or ends past it while the receiver
 * holds unread data, is dropped with its ACK field unread, and answered
 * with a duplicate ACK; so is an old one (ending before the last window
 * update's rcv_nxt); the others are taken. It retransmits what B has not
 * acknowledged from an RTO (200 ms, doubled at each timeout, reset by
 * progress), going back to its first unacknowledged byte.
 *
 * Run twice: on a clean path, and with loss (every fifth of the peer's
 * segments lost the first time it is sent, every fourth pure ACK of B
 * lost). Each run:
 *   1. B's application writes until its send buffer is full; the peer takes
 *      64 KiB of it, acknowledges it and announces a zero window;
 *   2. B probes the window: a segment without data at snd_una - 1, which the
 *      peer answers (lwIP's probe carried a byte past the window and moved
 *      snd_nxt past it);
 *   3. the peer writes 200 KB to B, whose application reads it all: every
 *      byte is acknowledged, in a way the peer accepts, within 8 s (the
 *      stall: none ever was), and no segment of B starts or ends past the
 *      peer's zero window;
 *   4. B's application stops reading, the peer writes 64 KiB more, then B's
 *      application reads it: B announces the reopened window at once, in
 *      an ACK the peer accepts, though its own data still waits;
 *   5. B goes on probing the window while it stays shut, without data;
 *   6. the peer reads what it holds and reopens its window: B's waiting data
 *      and the rest of its 600 KB arrive whole and in order.
 * Then once more with the window shrunk (run_shrunk): the peer reads 4 KiB,
 * drops the segment B sends into that window (no receive memory, Linux's
 * sk_drops) and shuts its window, so B's snd_nxt is past the edge while the
 * peer's 200 KB arrive: every byte must be acknowledged in pure ACKs the
 * peer takes (sequence number inside the window: lwIP patch 0026).
 * No DPDK, no root. TAP output. About 5 s.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdbool.h>
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

#define PORT 7300
#define RAW_LO 21000 /* the raw peer's ports: [RAW_LO, RAW_HI) */
#define RAW_HI 22000
#define MSS 1460
#define PEER_WS 7               /* the peer's window scale (Linux's with a 6 MB buffer: 7) */
#define PEER_BUF (64u * 1024u)  /* the peer's receive buffer: what it holds unread */
#define PEER_DATA (200u * 1000u) /* what the peer writes in step 3 */
#define PEER_MORE PEER_BUF       /* and in step 4 */
#define B_TOTAL (600u * 1000u)   /* what B's application writes in all */
#define RTO0_MS 200.0
#define QMAX 512

static struct pair_bed bed;

/* B's segments to the raw ports since the peer last looked, data copied. */
static struct {
    struct raw_seg seg[QMAX];
    uint8_t data[QMAX][MSS];
    unsigned n, lost;
} q;

static bool tap_b(void *ctx, const uint8_t *frame, uint16_t len)
{
    (void)ctx;
    struct raw_seg g;
    if (raw_tcp_parse(frame, len, &g) != 0 || g.dport < RAW_LO || g.dport >= RAW_HI)
        return true;
    if (q.n == QMAX || g.len > MSS) {
        q.lost++;
        return false;
    }
    if (g.len > 0)
        memcpy(q.data[q.n], g.data, g.len);
    g.data = q.data[q.n];
    q.seg[q.n++] = g;
    return false;
}

static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

static uint8_t b_byte(uint32_t k) { return (uint8_t)(k * 13u + 5u); }
static uint8_t p_byte(uint32_t k) { return (uint8_t)(k * 7u + 1u); }

static bool seq_lt(uint32_t a, uint32_t b) { return (int32_t)(a - b) < 0; }
static bool seq_gt(uint32_t a, uint32_t b) { return (int32_t)(a - b) > 0; }

/* The raw peer: a Linux client that writes without reading. */
struct peer {
    uint16_t port;
    bool lossy;
    struct lsock *s; /* B's accepted socket */
    /* receiving B's data */
    uint32_t irs;      /* B's initial sequence number */
    uint32_t rcv_nxt;  /* next byte of B's it expects */
    uint32_t rcv_wup;  /* rcv_nxt when it last announced a window */
    uint32_t edge;     /* the right edge it announced last (never moved left, as Linux's) */
    uint32_t unread;   /* B's bytes it holds unread */
    bool lose_acks;    /* a lossy path loses every fourth pure ACK of B */
    bool reading;      /* its application reads (step 6) */
    bool ack_owed;
    uint8_t b_ws;      /* B's window scale */
    uint32_t got;      /* B's bytes received in order, checked */
    bool got_bad;
    /* sending its own data */
    uint32_t iss, snd_una, snd_nxt, snd_max, snd_end; /* relative: 0 = iss + 1 */
    uint32_t b_wnd;                                   /* B's window, bytes */
    double rto_ms, rto_at;
    unsigned rexmits;
    /* what B did */
    bool drop_data;       /* drop B's next data segment for want of memory, and shrink the window to zero */
    bool shrunk;          /* the window was shrunk: the edge may move left */
    unsigned past_window; /* B's segments starting or ending past the peer's window (dropped) */
    unsigned acks_past;   /* of those, pure ACKs (no data, no FIN) */
    unsigned old_seq;     /* B's segments ending before rcv_wup (dropped, answered) */
    unsigned probes, probes_data; /* zero-window probes of B; those carrying data */
    double probe_at[16];
    unsigned b_pure_acks;
    uint16_t b_wnd_field; /* the window field of B's last segment the peer took */
};

/* The window the peer announces now (the field, scaled), as Linux's
 * tcp_select_window: its free buffer in whole units of the scale, but never
 * less than what is left of the window it announced last (rounded up to a
 * unit): the right edge does not move left. Moves rcv_wup and the edge. */
static uint16_t peer_announce(struct peer *p)
{
    uint32_t unit = 1u << PEER_WS, free = p->unread < PEER_BUF ? PEER_BUF - p->unread : 0;
    uint32_t cur = seq_gt(p->edge, p->rcv_nxt) ? p->edge - p->rcv_nxt : 0;
    uint32_t win = free & ~(unit - 1);
    if (win < cur && !p->shrunk)
        win = (cur + unit - 1) & ~(unit - 1);
    p->edge = p->rcv_nxt + win;
    p->rcv_wup = p->rcv_nxt;
    return (uint16_t)(win >> PEER_WS);
}

static void peer_xmit(struct peer *p, uint8_t flags, uint32_t seq, const void *data, uint16_t len)
{
    struct raw_seg g = {.sport = p->port, .dport = PORT, .seq = seq, .ack = p->rcv_nxt, .flags = flags, .len = len,
                        .data = data};
    g.saddr = bed.addr_a;
    g.daddr = bed.addr_b;
    memcpy(g.src_mac, bed.mac_a, 6);
    memcpy(g.dst_mac, bed.mac_b, 6);
    if (flags & TH_SYN) {
        g.wnd = 65535;
        g.mss = MSS;
        g.ws_on = 1;
        g.ws_shift = PEER_WS;
        g.sack_perm = 1;
    } else {
        g.wnd = peer_announce(p);
    }
    uint8_t frame[RAW_TCP_FRAME_MAX(MSS)];
    size_t n = raw_tcp_build(frame, sizeof(frame), &g);
    static bool told;
    if ((n == 0 || nic_mem_inject(bed.nb, frame, (uint16_t)n) != 0) && !told) {
        check(0, "raw peer: a frame could not be injected");
        told = true;
    }
}

/* One of B's segments, judged as a Linux receiver judges it. */
static void peer_take(struct peer *p, const struct raw_seg *g, double now)
{
    uint32_t seq = g->seq, end = g->seq + g->len + ((g->flags & TH_FIN) ? 1u : 0u);
    if (g->flags & TH_RST)
        return;
    if (g->len == 0 && seq == p->rcv_nxt - 1u && !(g->flags & TH_FIN)) {
        if (p->probes < 16)
            p->probe_at[p->probes] = now;
        p->probes++;
    } else if (g->len > 0 && seq == p->rcv_nxt && p->edge == p->rcv_nxt) {
        /* lwIP's probe: one byte at the edge of a zero window */
        if (g->len == 1 && p->probes < 16)
            p->probe_at[p->probes] = now;
        p->probes += g->len == 1;
        p->probes_data += g->len == 1;
    }
    if (seq_lt(end, p->rcv_wup)) {
        p->old_seq++;
        p->ack_owed = true; /* tcp_send_dupack */
        return;
    }
    if (seq_gt(end, p->edge) && (seq_gt(seq, p->edge) || p->unread > 0)) {
        p->past_window++;
        p->acks_past += g->len == 0 && !(g->flags & TH_FIN);
        p->ack_owed = true;
        return;
    }
    if (p->drop_data && g->len > 0 && seq == p->rcv_nxt) {
        /* no memory for it (Linux's sk_drops): dropped, the window shut */
        p->drop_data = false;
        p->shrunk = true;
        p->unread = PEER_BUF;
        p->ack_owed = true;
        return;
    }
    /* accepted: the ACK field, then the data */
    uint32_t ack = g->ack - (p->iss + 1u);
    if (seq_gt(ack, p->snd_una) && !seq_gt(ack, p->snd_max)) {
        p->snd_una = ack;
        if (seq_lt(p->snd_nxt, p->snd_una))
            p->snd_nxt = p->snd_una;
        p->rto_ms = RTO0_MS;
        p->rto_at = now + p->rto_ms;
    }
    if (g->flags & TH_ACK) {
        p->b_wnd = (uint32_t)g->wnd << p->b_ws;
        p->b_wnd_field = g->wnd;
    }
    if (g->len == 0) {
        if (!(g->flags & TH_FIN))
            p->b_pure_acks++;
        return;
    }
    p->ack_owed = true;
    if (seq != p->rcv_nxt)
        return; /* out of order or repeated: a duplicate ACK */
    uint32_t room = seq_gt(p->edge, p->rcv_nxt) ? p->edge - p->rcv_nxt : 0;
    uint32_t take = g->len < room ? g->len : room;
    for (uint32_t i = 0; i < take; i++)
        if (g->data[i] != b_byte(p->got + i))
            p->got_bad = true;
    p->got += take;
    p->rcv_nxt += take;
    if (!p->reading)
        p->unread += take;
}

/* The peer's send side: new data up to B's window; its RTO. */
static void peer_send(struct peer *p, double now)
{
    static uint8_t buf[MSS];
    if (p->snd_una != p->snd_max && now >= p->rto_at) {
        p->snd_nxt = p->snd_una; /* go back to the first unacknowledged byte */
        p->rto_ms *= 2;
        p->rto_at = now + p->rto_ms;
        p->rexmits++;
    }
    for (int k = 0; k < 64 && seq_lt(p->snd_nxt, p->snd_end); k++) {
        uint32_t wnd_end = p->snd_una + p->b_wnd;
        if (!seq_lt(p->snd_nxt, wnd_end))
            break;
        uint32_t n = p->snd_end - p->snd_nxt;
        if (n > MSS)
            n = MSS;
        if (n > wnd_end - p->snd_nxt)
            n = wnd_end - p->snd_nxt;
        for (uint32_t i = 0; i < n; i++)
            buf[i] = p_byte(p->snd_nxt + i);
        bool first = !seq_lt(p->snd_nxt, p->snd_max);
        bool lose = p->lossy && first && (p->snd_nxt / MSS) % 5 == 2;
        if (p->snd_una == p->snd_max)
            p->rto_at = now + p->rto_ms;
        if (!lose) {
            peer_xmit(p, TH_ACK | TH_PUSH, p->iss + 1u + p->snd_nxt, buf, (uint16_t)n);
            p->ack_owed = false; /* the data segment carried the ACK */
        }
        p->snd_nxt += n;
        if (seq_gt(p->snd_nxt, p->snd_max))
            p->snd_max = p->snd_nxt;
    }
}

/* B's application: reads (and checks) what there is if reading; writes
 * while there is room, up to B_TOTAL. */
static uint32_t b_read_total, b_written;
static bool b_read_bad;
static void b_app(struct peer *p, bool reading)
{
    static uint8_t buf[65536];
    if (reading) {
        for (;;) {
            struct iovec r = {buf, sizeof(buf)};
            ssize_t k = lsock_recv(p->s, &r, 1, 0);
            if (k <= 0)
                break;
            for (ssize_t i = 0; i < k; i++)
                if (buf[i] != p_byte(b_read_total + (uint32_t)i))
                    b_read_bad = true;
            b_read_total += (uint32_t)k;
        }
    }
    while (b_written < B_TOTAL) {
        uint32_t n = B_TOTAL - b_written;
        if (n > sizeof(buf))
            n = sizeof(buf);
        for (uint32_t i = 0; i < n; i++)
            buf[i] = b_byte(b_written + i);
        struct iovec w = {buf, n};
        ssize_t k = lsock_send(p->s, &w, 1, 0);
        if (k <= 0)
            break;
        b_written += (uint32_t)k;
    }
}

/* One round: B polls; the peer judges what B sent (some of B's pure ACKs
 * lost on a lossy path), answers, sends; B's application runs. */
static unsigned b_acks_seen;
static void round_trip(struct peer *p, bool b_reads)
{
    double now = now_ms();
    stack_poll(bed.b);
    for (unsigned i = 0; i < q.n; i++) {
        const struct raw_seg *g = &q.seg[i];
        if (g->sport != PORT || g->dport != p->port)
            continue;
        if (p->lose_acks && g->len == 0 && !(g->flags & (TH_SYN | TH_FIN | TH_RST)) && ++b_acks_seen % 4 == 0)
            continue; /* lost on the way */
        peer_take(p, g, now);
    }
    q.n = 0;
    peer_send(p, now);
    if (p->ack_owed) {
        peer_xmit(p, TH_ACK, p->iss + 1u + p->snd_nxt, NULL, 0);
        p->ack_owed = false;
    }
    b_app(p, b_reads);
    struct timespec nap = {0, 200000};
    nanosleep(&nap, NULL);
}

static int peer_open(struct lsock *l, struct peer *p)
{
    p->iss = 3000000u * p->port;
    p->rto_ms = RTO0_MS;
    q.n = 0;
    peer_xmit(p, TH_SYN, p->iss, NULL, 0);
    pair_pump(bed.a, bed.b, 3);
    const struct raw_seg *sa = NULL;
    for (unsigned i = 0; i < q.n; i++)
        if (q.seg[i].dport == p->port && q.seg[i].flags == (TH_SYN | TH_ACK))
            sa = &q.seg[i];
    if (sa == NULL || sa->ack != p->iss + 1 || sa->wscale < 0)
        return -1;
    p->irs = sa->seq;
    p->rcv_nxt = p->rcv_wup = sa->seq + 1;
    p->edge = p->rcv_nxt;
    p->b_ws = (uint8_t)sa->wscale;
    p->b_wnd = sa->wnd; /* a SYN's window is not scaled */
    q.n = 0;
    peer_xmit(p, TH_ACK, p->iss + 1, NULL, 0);
    pair_pump(bed.a, bed.b, 3);
    q.n = 0;
    if (!(pair_pump_until(bed.a, bed.b, l, EPOLLIN) & EPOLLIN) || lsock_accept(l, &p->s) != 0)
        return -1;
    return 0;
}

/* The peer connects; B's replies fill the peer's buffer: its window zero,
 * B's send buffer full (step 1's state). False if the connection failed. */
static bool fill(struct lsock *l, struct peer *p, const char *how)
{
    b_read_total = b_written = 0;
    b_read_bad = false;
    if (peer_open(l, p) != 0) {
        checkf(0, "%s: the raw peer's connection comes up", how);
        return false;
    }
    double t0 = now_ms();
    while (now_ms() - t0 < 3000 && !(p->edge == p->rcv_nxt && p->unread > 0))
        round_trip(p, true);
    for (int i = 0; i < 5; i++)
        round_trip(p, true); /* the zero window reaches B */
    return true;
}

/* The end: the peer resets the connection, B's application closes. */
static void finish(struct peer *p)
{
    peer_xmit(p, TH_RST | TH_ACK, p->iss + 1u + p->snd_nxt, NULL, 0);
    stack_poll(bed.b);
    q.n = 0;
    lsock_close(p->s);
}

static void run(struct lsock *l, uint16_t port, bool lossy)
{
    const char *how = lossy ? "lossy path" : "clean path";
    struct peer P = {.port = port, .lossy = lossy, .lose_acks = lossy};
    struct peer *p = &P;

    /* 1. B's replies fill the peer's buffer: window zero, B's send buffer full */
    if (!fill(l, p, how))
        return;
    double t0;
    uint32_t wrote = b_written;
    b_app(p, true);
    checkf(p->unread + 128 > PEER_BUF && p->edge == p->rcv_nxt && b_written == wrote && b_written < B_TOTAL &&
               !(lsock_events(p->s) & EPOLLOUT),
           "%s: the peer holds %u bytes of B's unread, its window zero; B's send buffer is full (%u written, "
           "a write takes nothing more)",
           how, p->unread, b_written);

    /* 2. B probes the closed window */
    t0 = now_ms();
    while (now_ms() - t0 < 3000 && p->probes == 0)
        round_trip(p, true);
    checkf(p->probes >= 1 && p->probes_data == 0 && p->past_window == 0,
           "%s: B probes the zero window after %.0f ms with a segment without data at snd_una - 1, which the peer "
           "answers (%u probes, %u of them a byte past the window; %u segments dropped as past the window)",
           how, p->probes ? p->probe_at[0] - t0 : -1.0, p->probes, p->probes_data, p->past_window);

    /* 3. the peer's requests, B reading them all */
    p->snd_end = PEER_DATA;
    t0 = now_ms();
    while (now_ms() - t0 < 8000 && (p->snd_una != p->snd_end || b_read_total != PEER_DATA))
        round_trip(p, true);
    double took = now_ms() - t0;
    checkf(p->snd_una == p->snd_end,
           "%s: all %u bytes the peer wrote acknowledged in ACKs it takes, in %.0f ms (bound 8 s; acknowledged "
           "%u; the peer sent %u retransmissions)",
           how, PEER_DATA, took, p->snd_una, p->rexmits);
    checkf(p->past_window == 0,
           "%s: no segment of B starts or ends past the peer's zero window (%u did: dropped unread by the peer)",
           how, p->past_window);
    checkf(b_read_total == PEER_DATA && !b_read_bad, "%s: B's application read the %u bytes whole and in order (%u)",
           how, PEER_DATA, b_read_total);

    /* 4. B's window fills, then B's application reads: a window update */
    p->snd_end = PEER_DATA + PEER_MORE;
    t0 = now_ms();
    while (now_ms() - t0 < 8000 && p->snd_una != p->snd_end)
        round_trip(p, false);
    uint16_t before = p->b_wnd_field;
    unsigned acks0 = p->b_pure_acks, past0 = p->past_window;
    p->lose_acks = false; /* the update is not resent if lost (nor is Linux's) */
    round_trip(p, true); /* the read */
    for (int i = 0; i < 3 && p->b_pure_acks == acks0; i++)
        round_trip(p, true);
    p->lose_acks = lossy;
    checkf(p->snd_una == p->snd_end && b_read_total == PEER_DATA + PEER_MORE && p->b_pure_acks > acks0 &&
               p->b_wnd_field > before && p->past_window == past0,
           "%s: B's application reads %u bytes: B announces its reopened window at once, in an ACK the peer takes "
           "(window field %u before, %u after; %u pure ACKs taken, %u dropped as past the window)",
           how, PEER_MORE, before, p->b_wnd_field, p->b_pure_acks - acks0, p->past_window - past0);

    /* 5. the window still shut: B goes on probing, without data */
    t0 = now_ms();
    unsigned probes0 = p->probes;
    while (now_ms() - t0 < 4000 && p->probes < probes0 + 2)
        round_trip(p, true);
    checkf(p->probes >= probes0 + 2 && p->probes_data == 0 && p->past_window == 0,
           "%s: B goes on probing the shut window, every probe without data (%u probes in %.0f ms since the "
           "first; %u with data, %u segments dropped as past the window)",
           how, p->probes, p->probes ? now_ms() - p->probe_at[0] : 0.0, p->probes_data, p->past_window);

    /* 6. the peer reads what it holds: its window reopens */
    p->reading = true;
    p->unread = 0;
    p->ack_owed = true; /* its window update */
    t0 = now_ms();
    while (now_ms() - t0 < 8000 && p->got != B_TOTAL)
        round_trip(p, true);
    checkf(p->got == B_TOTAL && !p->got_bad && b_written == B_TOTAL,
           "%s: the peer's window reopens: B's %u bytes arrive whole and in order (%u in %.0f ms)", how, B_TOTAL,
           p->got, now_ms() - t0);

    finish(p);
}

/* Data B sent inside the peer's window is dropped by the peer (no receive
 * memory) and the window shut after it: B's snd_nxt is past the edge while
 * the peer's data arrives. B's pure ACKs must carry a sequence number
 * inside the window (lwIP patch 0026), else the peer drops them all. */
static void run_shrunk(struct lsock *l, uint16_t port)
{
    const char *how = "window shrunk";
    struct peer P = {.port = port};
    struct peer *p = &P;
    if (!fill(l, p, how))
        return;

    /* the peer's application reads 4 KiB; B fills that window; the peer
       drops that segment and shuts its window */
    uint32_t got0 = p->got;
    p->unread -= 4096;
    p->drop_data = true;
    p->ack_owed = true;
    double t0 = now_ms();
    while (now_ms() - t0 < 3000 && p->drop_data)
        round_trip(p, true);
    for (int i = 0; i < 5; i++)
        round_trip(p, true);
    checkf(!p->drop_data && p->shrunk && p->got == got0,
           "%s: B sends into the reopened window; the peer drops that segment and shuts its window (%s)", how,
           p->drop_data ? "B sent nothing" : "done");

    p->snd_end = PEER_DATA;
    t0 = now_ms();
    while (now_ms() - t0 < 8000 && (p->snd_una != p->snd_end || b_read_total != PEER_DATA))
        round_trip(p, true);
    checkf(p->snd_una == p->snd_end && p->acks_past == 0,
           "%s: all %u bytes the peer wrote acknowledged in ACKs it takes, in %.0f ms (bound 8 s; acknowledged "
           "%u; %u pure ACKs of B dropped as past the window; the peer sent %u retransmissions)",
           how, PEER_DATA, now_ms() - t0, p->snd_una, p->acks_past, p->rexmits);

    p->reading = true;
    p->unread = 0;
    p->ack_owed = true;
    t0 = now_ms();
    while (now_ms() - t0 < 8000 && p->got != B_TOTAL)
        round_trip(p, true);
    checkf(p->got == B_TOTAL && !p->got_bad && b_written == B_TOTAL,
           "%s: the peer's window reopens: B's %u bytes arrive whole and in order, the dropped segment sent again "
           "(%u in %.0f ms)", how, B_TOTAL, p->got, now_ms() - t0);
    finish(p);
}

int main(void)
{
    if (pair_bed_open(&bed, "tcp_conn_count = 16;", "tcp_conn_count = 16;") != 0) {
        check(0, "stacks open");
        return tap_done();
    }
    nic_mem_set_tap(bed.nb, tap_b, NULL);
    pair_pump(bed.a, bed.b, 10);

    struct lsock *l = NULL;
    check(lsock_new(bed.b, &l) == 0 && lsock_bind(l, htonl(INADDR_ANY), htons(PORT)) == 0 && lsock_listen(l, 16) == 0,
          "listener on B");
    run(l, RAW_LO + 1, false);
    run(l, RAW_LO + 2, true);
    run_shrunk(l, RAW_LO + 3);
    checkf(q.lost == 0, "the tap kept every segment of B (%u lost)", q.lost);
    lsock_close(l);
    pair_bed_close(&bed);
    return tap_done();
}
