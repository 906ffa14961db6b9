/*
 * test_tcp_tmr_quiet.c - tcp_slowtmr passes idle pcbs by, and no timeout
 * moves (lwIP patch 0017, docs/performance.md "Seventh pass"). Two private
 * lwIP copies, A (198.18.0.2) and B (198.18.0.1), joined by a netif output
 * that queues each IPv4 packet for the other copy; the test delivers or
 * drops each, and calls tcp_slowtmr itself, one tick at a time, so every
 * tick is exact (no clock). No DPDK, no root. TAP output.
 *
 * Each expected tick is lwIP's own rule, computed from the pcb's fields as
 * an unpatched tcp_slowtmr, which visits every pcb at every tick, would
 * apply it: a keepalive probe at the first tick with tcp_ticks - tmr >
 * (keep_idle + n x keep_intvl) / 50 ms, the abort past keep_idle + cnt x
 * intvl, the tail loss probe at rtime == max(2, 2 x srtt + 1), the
 * retransmission at rtime == rto, the FIN-WAIT-2 removal past 20 s, the
 * TIME-WAIT removal past 60 s, zero-window probes after 3, 6, 12 ticks (a
 * pcb with unsent data is visited at every tick), a SYN's RTO counted from
 * its send however long the pcb sat bound before connect. A pcb
 * the patch skipped whose timeout was lost or came a tick late or early
 * fails the tick check; "skipped" is checked from pcb->last_timer, which
 * tcp_slowtmr sets on each visit.
 */
#include <arpa/inet.h>
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lwip/priv/tcp_priv.h"
#include "stack/lwip_load.h"

#include "tap.h"

struct copy {
    struct lwip_api L;
    struct netif nif;
    u32_t *ticks;
    void (*slowtmr)(void);
    int id;
};
static struct copy A, B;

/* packets in flight: to[] the copy, one queue */
#define QMAX 64
static struct pkt {
    int to;
    uint16_t len;
    uint8_t b[1600];
} q[QMAX];
static int qn;

static err_t out_fn(struct netif *nif, struct pbuf *p, const ip4_addr_t *dst)
{
    (void)dst;
    struct copy *c = nif->state;
    if (qn < QMAX && p->tot_len <= sizeof(q[0].b)) {
        q[qn].to = c == &A ? 1 : 0;
        q[qn].len = c->L.pbuf_copy_partial(p, q[qn].b, p->tot_len, 0);
        qn++;
    }
    return ERR_OK;
}

static err_t nif_init(struct netif *nif)
{
    nif->mtu = 1500;
    nif->output = out_fn;
    nif->flags = NETIF_FLAG_UP | NETIF_FLAG_LINK_UP;
    /* lstack fills the sums in its netif output, which this one is not:
       nothing is summed, nothing is checked */
    NETIF_SET_CHECKSUM_CTRL(nif, 0);
    return ERR_OK;
}

static void deliver(const struct pkt *k)
{
    struct copy *c = k->to == 1 ? &B : &A;
    struct pbuf *p = c->L.pbuf_alloc(PBUF_RAW, k->len, PBUF_RAM);
    if (p == NULL)
        return;
    memcpy(p->payload, k->b, k->len);
    c->L.ip4_input(p, &c->nif);
}

/* Deliver everything queued (and what that makes), up to n rounds. */
static void pump(void)
{
    for (int r = 0; r < 20 && qn > 0; r++) {
        struct pkt copyq[QMAX];
        int n = qn;
        memcpy(copyq, q, sizeof(q[0]) * (size_t)n);
        qn = 0;
        for (int i = 0; i < n; i++)
            deliver(&copyq[i]);
    }
}

/* What one packet from the queue is: TCP payload length and flags. */
static void seg_info(const struct pkt *k, unsigned *plen, unsigned *flags)
{
    unsigned ihl = (k->b[0] & 0xf) * 4u;
    unsigned tot = ((unsigned)k->b[2] << 8) | k->b[3];
    unsigned thl = (k->b[ihl + 12] >> 4) * 4u;
    *plen = tot - ihl - thl;
    *flags = k->b[ihl + 13];
}

static void copy_open(struct copy *c, int id, uint8_t last)
{
    char err[256];
    c->id = id;
    if (lwip_load(&c->L, NULL, id ? "tmrq-b" : "tmrq-a", err, sizeof(err)) != 0) {
        printf("Bail out! lwip_load: %s\n", err);
        exit(1);
    }
    struct lstack_lwip_conf cf = {.rcv_wnd = 65535, .snd_buf = 65536, .mss = 1460, .mem_limit = 8u << 20,
                                  .pcb_hint = 10};
    struct lstack_lwip_limits lim;
    c->L.lstack_lwip_configure(&cf, &lim);
    c->L.lwip_init();
    ip4_addr_t addr, mask, gw;
    IP4_ADDR(&addr, 198, 18, 0, last);
    IP4_ADDR(&mask, 255, 255, 255, 0);
    IP4_ADDR(&gw, 198, 18, 0, 254);
    c->L.netif_add(&c->nif, &addr, &mask, &gw, c, nif_init, c->L.ip4_input);
    c->L.netif_set_default(&c->nif);
    c->ticks = dlsym(c->L.handle, "tcp_ticks");
    c->slowtmr = (void (*)(void))dlsym(c->L.handle, "tcp_slowtmr");
}

/* B's application: reads everything (or, with hold_recv, takes it without
 * opening the window again), closes only when told (close_on_fin). */
static int close_on_fin, hold_recv;
static err_t on_recv(void *arg, struct tcp_pcb *pcb, struct pbuf *p, err_t e)
{
    (void)arg;
    (void)e;
    if (p == NULL) {
        if (close_on_fin)
            B.L.tcp_close(pcb);
        return ERR_OK;
    }
    if (!hold_recv)
        B.L.tcp_recved(pcb, p->tot_len);
    B.L.pbuf_free(p);
    return ERR_OK;
}

static struct tcp_pcb *accepted;
static err_t on_accept(void *arg, struct tcp_pcb *pcb, err_t e)
{
    (void)arg;
    (void)e;
    accepted = pcb;
    B.L.tcp_recv(pcb, on_recv);
    return ERR_OK;
}

static err_t on_connected(void *arg, struct tcp_pcb *pcb, err_t e)
{
    (void)arg;
    (void)pcb;
    (void)e;
    return ERR_OK;
}

static int err_tick = -1;
static struct copy *err_copy;
static void on_err(void *arg, err_t e)
{
    (void)arg;
    (void)e;
    err_tick = (int)*err_copy->ticks;
}

/* A connected pair: *pa on A, *pb on B. */
static void connect_pair(struct tcp_pcb **pa, struct tcp_pcb **pb, u16_t port)
{
    struct tcp_pcb *l = B.L.tcp_new_ip_type(IPADDR_TYPE_V4);
    ip_addr_t any;
    IP_ADDR4(&any, 0, 0, 0, 0);
    B.L.tcp_bind(l, &any, port);
    err_t le;
    l = B.L.tcp_listen_with_backlog_and_err(l, 4, &le);
    B.L.tcp_accept(l, on_accept);
    accepted = NULL;
    struct tcp_pcb *c = A.L.tcp_new_ip_type(IPADDR_TYPE_V4);
    ip_addr_t dst;
    IP_ADDR4(&dst, 198, 18, 0, 1);
    err_t ce = A.L.tcp_connect(c, &dst, port, on_connected);
    if (getenv("TMRQ_DEBUG"))
        fprintf(stderr, "connect %d, queued %d\n", ce, qn);
    pump();
    if (getenv("TMRQ_DEBUG"))
        fprintf(stderr, "after pump: A state %d, accepted %p, queued %d\n", c->state, (void *)accepted, qn);
    *pa = c;
    *pb = accepted;
}

/* One tick of c's tcp_slowtmr; the packets it sent are left in q. Returns
 * whether pcb was visited: tcp_slowtmr sets pcb->last_timer to its counter
 * (static in tcp.c), which moves on at every call (a u8: a pcb passed by
 * for a multiple of 256 ticks would look skipped; no case here is). Not
 * for a pcb the tick may free unless its error callback is on_err. */
static int tick(struct copy *c, struct tcp_pcb *pcb)
{
    u8_t before = pcb->last_timer;
    int err_before = err_tick;
    c->slowtmr();
    if (err_tick != err_before)
        return 1; /* removed (on_err): visited, and freed */
    return pcb->last_timer != before;
}

int main(void)
{
    copy_open(&A, 0, 2);
    copy_open(&B, 1, 1);
    struct tcp_pcb *a, *b;

    /* ---- keepalive on an idle connection ---- */
    connect_pair(&a, &b, 7001);
    check(a != NULL && b != NULL && a->state == ESTABLISHED, "a connection comes up");
    if (a == NULL || b == NULL)
        return tap_done();
    for (int i = 0; i < 5; i++) /* idle, no keepalive yet: parked with nothing due */
        A.slowtmr();
    checkf((s32_t)(a->lstack_tmr_until - *A.ticks) > 1000, "the idle pcb is parked (until tick +%d)",
           (int)(s32_t)(a->lstack_tmr_until - *A.ticks));
    ip_set_option(a, SOF_KEEPALIVE);
    a->keep_idle = 1000; /* 20 ticks */
    a->keep_intvl = 500; /* 10 ticks */
    a->keep_cnt = 3;
    A.L.lstack_tcp_tmr_wake(a); /* as lstack's setsockopt does */
    err_copy = &A;
    err_tick = -1;
    A.L.tcp_err(a, on_err);
    u32_t t0 = a->tmr;
    int probes[4], np = 0, rst = -1, visits = 0, ticks = 0;
    while (err_tick < 0 && ticks < 200) {
        visits += tick(&A, a);
        ticks++;
        for (int i = 0; i < qn; i++) {
            unsigned len, fl;
            seg_info(&q[i], &len, &fl);
            if (fl & TCP_RST)
                rst = (int)(*A.ticks - t0);
            else if (np < 4)
                probes[np++] = (int)(*A.ticks - t0);
        }
        qn = 0; /* the peer never answers */
    }
    /* lwIP's rule: probe n (0, 1, 2) at the first tick past (1000 + n x 500) / 50; abort past (1000 + 3 x 500) / 50 */
    checkf(np == 3 && probes[0] == 21 && probes[1] == 31 && probes[2] == 41,
           "keepalive probes at ticks 21, 31, 41 after the last segment (saw %d: %d, %d, %d)", np,
           np > 0 ? probes[0] : -1, np > 1 ? probes[1] : -1, np > 2 ? probes[2] : -1);
    checkf(rst == 51 && err_tick >= 0 && (u32_t)err_tick - t0 == 51,
           "the connection is aborted with a RST at tick 51 (rst %d, err at %d)", rst,
           err_tick >= 0 ? (int)((u32_t)err_tick - t0) : -1);
    checkf(visits <= 8, "tcp_slowtmr visited the idle pcb %d times in %d ticks (lwIP: every tick)", visits, ticks);

    /* ---- retransmission: tail loss probe and RTO of a lost reply ---- */
    connect_pair(&a, &b, 7002);
    check(b != NULL, "a second connection comes up");
    if (b == NULL)
        return tap_done();
    for (int i = 0; i < 5; i++)
        tick(&B, b); /* B's pcb settles into its quiet state */
    u32_t arm = *B.ticks;
    B.L.tcp_write(b, "reply", 5, TCP_WRITE_FLAG_COPY);
    B.L.tcp_output(b);
    qn = 0; /* lost */
    int thr = ((b->sa >> 3) << 1) + 1;
    if (thr < LSTACK_TCP_TLP_TICKS)
        thr = LSTACK_TCP_TLP_TICKS;
    int rto = b->rto;
    int sends[4], ns = 0;
    visits = 0;
    for (ticks = 0; ticks < rto + 2; ticks++) {
        visits += tick(&B, b);
        for (int i = 0; i < qn; i++) {
            unsigned len, fl;
            seg_info(&q[i], &len, &fl);
            if (len > 0 && ns < 4)
                sends[ns++] = (int)(*B.ticks - arm);
        }
        qn = 0;
    }
    checkf(thr < rto && ns >= 2 && sends[0] == thr && sends[1] == rto,
           "the lost segment is sent again at the probe's tick %d and the RTO's %d (saw %d: %d, %d)", thr, rto, ns,
           ns > 0 ? sends[0] : -1, ns > 1 ? sends[1] : -1);
    checkf(visits < rto, "tcp_slowtmr visited the pcb waiting for its ACK %d times in %d ticks", visits, rto + 2);

    /* ---- persist: the peer's window closes with data still to send ---- */
    connect_pair(&a, &b, 7005);
    check(a != NULL && b != NULL, "a connection for the persist timer comes up");
    if (a == NULL || b == NULL)
        return tap_done();
    for (int i = 0; i < 5; i++)
        tick(&A, a); /* A's pcb settles into its quiet state */
    hold_recv = 1;
    void (*fasttmr_b)(void) = (void (*)(void))dlsym(B.L.handle, "tcp_fasttmr");
    static const char chunk[1000];
    /* exactly B's window, all acknowledged: the window is 0 */
    for (int r = 0; r < 400 && (a->snd_wnd > 0 || a->unacked != NULL || a->unsent != NULL); r++) {
        if (a->unacked == NULL && a->unsent == NULL) {
            u16_t n = a->snd_wnd < sizeof(chunk) ? (u16_t)a->snd_wnd : (u16_t)sizeof(chunk);
            A.L.tcp_write(a, chunk, n, TCP_WRITE_FLAG_COPY);
        }
        A.L.tcp_output(a);
        pump();
        fasttmr_b(); /* B's delayed ACKs */
        pump();
    }
    checkf(a->snd_wnd == 0 && a->unacked == NULL, "B's window is closed, everything acknowledged (wnd %u)",
           (unsigned)a->snd_wnd);
    A.L.tcp_write(a, chunk, sizeof(chunk), TCP_WRITE_FLAG_COPY);
    A.L.tcp_output(a); /* does not fit: the persist timer starts */
    hold_recv = 0;
    checkf(a->persist_backoff == 1 && a->unsent != NULL, "the window closed with data unsent (backoff %d, wnd %u)",
           a->persist_backoff, (unsigned)a->snd_wnd);
    u32_t p0 = *A.ticks;
    int zwp[3], nz = 0;
    for (ticks = 0; ticks < 25; ticks++) {
        tick(&A, a);
        for (int i = 0; i < qn; i++) {
            unsigned len, fl;
            seg_info(&q[i], &len, &fl);
            if (getenv("TMRQ_DEBUG"))
                fprintf(stderr, "tick %u: A sends %u bytes, wnd %u\n", *A.ticks - p0, len, (unsigned)a->snd_wnd);
            if (len == 1 && nz < 3)
                zwp[nz++] = (int)(*A.ticks - p0);
        }
        qn = 0; /* the probes are lost */
    }
    /* lwIP's rule: a probe when persist_cnt, counted at every tick, reaches
       tcp_persist_backoff[] = 3, 6, 12 ticks */
    checkf(nz == 3 && zwp[0] == 3 && zwp[1] == 9 && zwp[2] == 21,
           "zero-window probes at ticks 3, 9, 21 after the window closed (saw %d: %d, %d, %d)", nz,
           nz > 0 ? zwp[0] : -1, nz > 1 ? zwp[1] : -1, nz > 2 ? zwp[2] : -1);

    /* ---- FIN-WAIT-2: the closed connection the peer never closes ---- */
    connect_pair(&a, &b, 7003);
    check(a != NULL && b != NULL, "a third connection comes up");
    if (a == NULL || b == NULL)
        return tap_done();
    for (int i = 0; i < 5; i++)
        tick(&A, a);
    err_tick = -1;
    A.L.tcp_err(a, on_err);
    A.L.tcp_close(a);
    pump(); /* FIN to B, B's ACK back: A in FIN-WAIT-2, B in CLOSE-WAIT */
    checkf(a->state == FIN_WAIT_2, "A is in FIN-WAIT-2 (state %d, B %d)", a->state, b->state);
    u32_t tf = a->tmr;
    visits = 0;
    for (ticks = 0; err_tick < 0 && ticks < 1000; ticks++) {
        visits += tick(&A, a);
        qn = 0;
    }
    /* lwIP's rule: removed at the first tick past TCP_FIN_WAIT_TIMEOUT / 50 ms */
    int want = TCP_FIN_WAIT_TIMEOUT / TCP_SLOW_INTERVAL + 1;
    checkf(err_tick >= 0 && (int)((u32_t)err_tick - tf) == want,
           "the FIN-WAIT-2 pcb is removed at tick %d (at %d)", want,
           err_tick >= 0 ? (int)((u32_t)err_tick - tf) : -1);
    checkf(visits <= 4, "tcp_slowtmr visited it %d times in %d ticks", visits, ticks);

    /* ---- TIME-WAIT: both sides close, A closed first ---- */
    connect_pair(&a, &b, 7004);
    check(a != NULL && b != NULL, "a fourth connection comes up");
    if (a == NULL || b == NULL)
        return tap_done();
    for (int i = 0; i < 5; i++)
        tick(&A, a);
    close_on_fin = 1;
    A.L.tcp_close(a);
    pump(); /* FIN, ACK, B's FIN, A's ACK */
    struct tcp_pcb **tw = dlsym(A.L.handle, "tcp_tw_pcbs");
    int in_tw = 0;
    for (struct tcp_pcb *p = tw != NULL ? *tw : NULL; p != NULL; p = p->next)
        in_tw |= p == a;
    checkf(in_tw && a->state == TIME_WAIT, "A is in TIME-WAIT (state %d)", a->state);
    u32_t tw0 = a->tmr;
    int gone = -1;
    for (ticks = 0; in_tw && gone < 0 && ticks < 2000; ticks++) {
        A.slowtmr();
        int still = 0;
        for (struct tcp_pcb *p = *tw; p != NULL; p = p->next)
            still |= p == a;
        if (!still)
            gone = (int)(*A.ticks - tw0);
    }
    /* lwIP's rule: removed at the first tick past 2 x TCP_MSL / 50 ms */
    want = 2 * TCP_MSL / TCP_SLOW_INTERVAL + 1;
    checkf(gone == want, "the TIME-WAIT pcb is removed at tick %d (at %d)", want, gone);

    /* ---- a SYN sent long after bind(): its RTO counts from the send ----
       A bound pcb waits on the bound list, which tcp_slowtmr does not walk;
       counting the ticks since its allocation as "passed by" would put
       them on rtime and send the SYN again early (review of patch 0017). */
    struct tcp_pcb *s = A.L.tcp_new_ip_type(IPADDR_TYPE_V4);
    ip_addr_t any4, dst4;
    IP_ADDR4(&any4, 0, 0, 0, 0);
    IP_ADDR4(&dst4, 198, 18, 0, 1);
    A.L.tcp_bind(s, &any4, 40001);
    for (int i = 0; i < 60; i++) /* 3 s: well past the initial RTO */
        A.slowtmr();
    err_copy = &A;
    err_tick = -1;
    A.L.tcp_err(s, on_err);
    A.L.tcp_connect(s, &dst4, 7005, on_connected);
    qn = 0; /* the SYN is lost */
    int syn_rto = s->rto, resent = -1;
    u32_t ts = *A.ticks;
    for (ticks = 0; resent < 0 && err_tick < 0 && ticks < 200; ticks++) {
        A.slowtmr();
        for (int i = 0; i < qn; i++) {
            unsigned len, fl;
            seg_info(&q[i], &len, &fl);
            if ((fl & TCP_SYN) && resent < 0)
                resent = (int)(*A.ticks - ts);
        }
        qn = 0;
    }
    /* lwIP's rule: rtime set to 0 when the SYN is sent, the RTO at rtime == rto */
    checkf(resent == syn_rto, "a SYN sent 60 ticks after bind is sent again at tick %d, its RTO (at %d)", syn_rto,
           resent);
    if (err_tick < 0)
        A.L.tcp_abort(s);
    return tap_done();
}
