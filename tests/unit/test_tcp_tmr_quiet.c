/*
 * test_tcp_tmr_quiet.c - tcp_slowtmr passes idle pcbs by, and no timeout
 * moves (lwIP patch 0017). Two private
 * lwIP copies, A (198.18.0.2) and B (198.18.0.1), joined by a packet queue
 * and ticked one tick at a time by the test (tmr_bed.h). TAP output. The
 * other states' timeouts (SYN-RCVD, LAST-ACK, the out-of-order queue, the
 * backoff to the retransmission limit) are tcp-tmr-states'.
 */
#include <stdio.h>
#include <stdlib.h>

#include "tmr_bed.h"

#include "tap.h"

/*
 * Each expected tick is lwIP's own rule, computed from the pcb's fields as
 * an unpatched tcp_slowtmr, which visits every pcb at every tick, would
 * apply it: a keepalive probe at the first tick with tcp_ticks - tmr >
 * (keep_idle + n x keep_intvl) / 50 ms, the abort past keep_idle + cnt x
 * intvl, the tail loss probe at rtime == max(2, 2 x srtt + 1), the
 * retransmission at rtime == rto, the FIN-WAIT-2 removal past 20 s, the
 * TIME-WAIT removal past 60 s, zero-window probes one RTO after the window
 * closed, then after 2, 4, 8... RTOs up to 120 s, the connection given up
 * after the 15th (patch 0019; a pcb in persist is visited at every
 * tick), a SYN's RTO counted from
 * its send however long the pcb sat bound before connect. A pcb
 * the patch skipped whose timeout was lost or came a tick late or early
 * fails the tick check; "skipped" is checked from pcb->last_timer, which
 * tcp_slowtmr sets on each visit.
 */

static struct tmr_bed T;

int main(void)
{
    if (tmr_bed_open(&T, NULL, "tmrq") != 0)
        return 1;
    struct tcp_pcb *a, *b;

    /* ---- keepalive on an idle connection ---- */
    tmr_bed_connect(&T, &a, &b, 7001);
    check(a != NULL && b != NULL && a->state == ESTABLISHED, "a connection comes up");
    if (a == NULL || b == NULL)
        return tap_done();
    for (int i = 0; i < 5; i++) /* idle, no keepalive yet: parked with nothing due */
        T.a.slowtmr();
    checkf((s32_t)(a->lstack_tmr_until - *T.a.ticks) > 1000, "the idle pcb is parked (until tick +%d)",
           (int)(s32_t)(a->lstack_tmr_until - *T.a.ticks));
    ip_set_option(a, SOF_KEEPALIVE);
    a->keep_idle = 1000; /* 20 ticks */
    a->keep_intvl = 500; /* 10 ticks */
    a->keep_cnt = 3;
    T.a.L.lstack_tcp_tmr_wake(a); /* as lstack's setsockopt does */
    tmr_bed_watch(&T, &T.a, a);
    u32_t t0 = a->tmr;
    int probes[4], np = 0, rst = -1, visits = 0, ticks = 0;
    while (T.err_tick < 0 && ticks < 200) {
        visits += tmr_bed_tick(&T.a, a);
        ticks++;
        for (int i = 0; i < T.qn; i++) {
            unsigned len, fl;
            tmr_bed_seg(&T.q[i], &len, &fl);
            if (fl & TCP_RST)
                rst = (int)(*T.a.ticks - t0);
            else if (np < 4)
                probes[np++] = (int)(*T.a.ticks - t0);
        }
        T.qn = 0; /* the peer never answers */
    }
    /* lwIP's rule: probe n (0, 1, 2) at the first tick past (1000 + n x 500) / 50; abort past (1000 + 3 x 500) / 50 */
    checkf(np == 3 && probes[0] == 21 && probes[1] == 31 && probes[2] == 41,
           "keepalive probes at ticks 21, 31, 41 after the last segment (saw %d: %d, %d, %d)", np,
           np > 0 ? probes[0] : -1, np > 1 ? probes[1] : -1, np > 2 ? probes[2] : -1);
    checkf(rst == 51 && T.err_tick >= 0 && (u32_t)T.err_tick - t0 == 51,
           "the connection is aborted with a RST at tick 51 (rst %d, err at %d)", rst,
           T.err_tick >= 0 ? (int)((u32_t)T.err_tick - t0) : -1);
    checkf(visits <= 8, "tcp_slowtmr visited the idle pcb %d times in %d ticks (lwIP: every tick)", visits, ticks);

    /* ---- retransmission: tail loss probe and RTO of a lost reply ---- */
    tmr_bed_connect(&T, &a, &b, 7002);
    check(b != NULL, "a second connection comes up");
    if (b == NULL)
        return tap_done();
    for (int i = 0; i < 5; i++)
        tmr_bed_tick(&T.b, b); /* B's pcb settles into its quiet state */
    u32_t arm = *T.b.ticks;
    T.b.L.tcp_write(b, "reply", 5, TCP_WRITE_FLAG_COPY);
    T.b.L.tcp_output(b);
    T.qn = 0; /* lost */
    int thr = ((b->sa >> 3) << 1) + 1;
    if (thr < LSTACK_TCP_TLP_TICKS)
        thr = LSTACK_TCP_TLP_TICKS;
    int rto = b->rto;
    int sends[4], ns = 0;
    visits = 0;
    for (ticks = 0; ticks < rto + 2; ticks++) {
        visits += tmr_bed_tick(&T.b, b);
        for (int i = 0; i < T.qn; i++) {
            unsigned len, fl;
            tmr_bed_seg(&T.q[i], &len, &fl);
            if (len > 0 && ns < 4)
                sends[ns++] = (int)(*T.b.ticks - arm);
        }
        T.qn = 0;
    }
    checkf(thr < rto && ns >= 2 && sends[0] == thr && sends[1] == rto,
           "the lost segment is sent again at the probe's tick %d and the RTO's %d (saw %d: %d, %d)", thr, rto, ns,
           ns > 0 ? sends[0] : -1, ns > 1 ? sends[1] : -1);
    checkf(visits < rto, "tcp_slowtmr visited the pcb waiting for its ACK %d times in %d ticks", visits, rto + 2);

    /* ---- persist: the peer's window closes with data still to send ---- */
    tmr_bed_connect(&T, &a, &b, 7005);
    check(a != NULL && b != NULL, "a connection for the persist timer comes up");
    if (a == NULL || b == NULL)
        return tap_done();
    for (int i = 0; i < 5; i++)
        tmr_bed_tick(&T.a, a); /* A's pcb settles into its quiet state */
    T.hold_recv = 1;
    static const char chunk[1000];
    /* exactly B's window, all acknowledged: the window is 0 */
    for (int r = 0; r < 400 && (a->snd_wnd > 0 || a->unacked != NULL || a->unsent != NULL); r++) {
        if (a->unacked == NULL && a->unsent == NULL) {
            u16_t n = a->snd_wnd < sizeof(chunk) ? (u16_t)a->snd_wnd : (u16_t)sizeof(chunk);
            T.a.L.tcp_write(a, chunk, n, TCP_WRITE_FLAG_COPY);
        }
        T.a.L.tcp_output(a);
        tmr_bed_pump(&T);
        T.b.fasttmr(); /* B's delayed ACKs */
        tmr_bed_pump(&T);
    }
    checkf(a->snd_wnd == 0 && a->unacked == NULL, "B's window is closed, everything acknowledged (wnd %u)",
           (unsigned)a->snd_wnd);
    T.a.L.tcp_write(a, chunk, sizeof(chunk), TCP_WRITE_FLAG_COPY);
    T.a.L.tcp_output(a); /* does not fit: the persist timer starts */
    T.hold_recv = 0;
    checkf(a->persist_backoff == 1 && a->unsent != NULL, "the window closed with data unsent (backoff %d, wnd %u)",
           a->persist_backoff, (unsigned)a->snd_wnd);
    /* Linux's rule (patch 0019): the first probe one RTO after the window
       closed, the wait doubled after each probe up to 120 s; removal at the
       tick after the 15th probe without an answer. Each probe has no data
       and the sequence number before snd_una; snd_nxt does not move. */
    tmr_bed_watch(&T, &T.a, a);
    u32_t p0 = *T.a.ticks, nxt0 = a->snd_nxt, una0 = a->lastack;
    int zwant[LSTACK_TCP_PERSIST_MAX_PROBES], zwp[LSTACK_TCP_PERSIST_MAX_PROBES], nz = 0, shape_bad = 0;
    int cap = LSTACK_TCP_PERSIST_MAX_MS / TCP_SLOW_INTERVAL, wait = a->rto, at = 0;
    for (int k = 0; k < LSTACK_TCP_PERSIST_MAX_PROBES; k++) {
        at += wait < cap ? wait : cap;
        zwant[k] = at;
        wait *= 2;
    }
    for (ticks = 0; T.err_tick < 0 && ticks < at + 10; ticks++) {
        tmr_bed_tick(&T.a, a);
        /* a is freed once the connection is given up (err_tick set) */
        shape_bad |= T.err_tick < 0 && a->snd_nxt != nxt0;
        for (int i = 0; i < T.qn; i++) {
            unsigned len, fl;
            tmr_bed_seg(&T.q[i], &len, &fl);
            unsigned ihl = (T.q[i].b[0] & 0xf) * 4u;
            const uint8_t *th = T.q[i].b + ihl;
            u32_t seq = ((u32_t)th[4] << 24) | ((u32_t)th[5] << 16) | ((u32_t)th[6] << 8) | th[7];
            if (getenv("TMRQ_DEBUG"))
                fprintf(stderr, "tick %u: A sends %u bytes at %+d\n", *T.a.ticks - p0, len, (int)(seq - una0));
            if (nz < LSTACK_TCP_PERSIST_MAX_PROBES)
                zwp[nz++] = (int)(*T.a.ticks - p0);
            shape_bad |= len != 0 || seq != una0 - 1 || (fl & (TCP_SYN | TCP_FIN | TCP_RST)) != 0;
        }
        T.qn = 0; /* the probes are lost */
    }
    int at_want = nz == LSTACK_TCP_PERSIST_MAX_PROBES;
    for (int k = 0; k < nz && at_want; k++)
        at_want = zwp[k] == zwant[k];
    checkf(at_want, "%d zero-window probes, the first one RTO (%d ticks) after the window closed, the wait doubled "
           "after each up to 120 s (at %d, %d, %d, ... %d; saw %d: %d, %d, %d, ... %d)",
           LSTACK_TCP_PERSIST_MAX_PROBES, zwant[0], zwant[0], zwant[1], zwant[2], zwant[LSTACK_TCP_PERSIST_MAX_PROBES - 1],
           nz, nz > 0 ? zwp[0] : -1, nz > 1 ? zwp[1] : -1, nz > 2 ? zwp[2] : -1, nz > 0 ? zwp[nz - 1] : -1);
    checkf(!shape_bad, "each probe has no data and the sequence number before snd_una; snd_nxt stays");
    checkf(T.err_tick >= 0 && (int)((u32_t)T.err_tick - p0) == at + 1,
           "the connection is given up at the tick after the %dth probe without an answer (%d; at %d)",
           LSTACK_TCP_PERSIST_MAX_PROBES, at + 1, T.err_tick >= 0 ? (int)((u32_t)T.err_tick - p0) : -1);

    /* ---- FIN-WAIT-2: the closed connection the peer never closes ---- */
    tmr_bed_connect(&T, &a, &b, 7003);
    check(a != NULL && b != NULL, "a third connection comes up");
    if (a == NULL || b == NULL)
        return tap_done();
    for (int i = 0; i < 5; i++)
        tmr_bed_tick(&T.a, a);
    tmr_bed_watch(&T, &T.a, a);
    T.a.L.tcp_close(a);
    tmr_bed_pump(&T); /* FIN to B, B's ACK back: A in FIN-WAIT-2, B in CLOSE-WAIT */
    checkf(a->state == FIN_WAIT_2, "A is in FIN-WAIT-2 (state %d, B %d)", a->state, b->state);
    u32_t tf = a->tmr;
    visits = 0;
    for (ticks = 0; T.err_tick < 0 && ticks < 1000; ticks++) {
        visits += tmr_bed_tick(&T.a, a);
        T.qn = 0;
    }
    /* lwIP's rule: removed at the first tick past TCP_FIN_WAIT_TIMEOUT / 50 ms */
    int want = TCP_FIN_WAIT_TIMEOUT / TCP_SLOW_INTERVAL + 1;
    checkf(T.err_tick >= 0 && (int)((u32_t)T.err_tick - tf) == want,
           "the FIN-WAIT-2 pcb is removed at tick %d (at %d)", want,
           T.err_tick >= 0 ? (int)((u32_t)T.err_tick - tf) : -1);
    checkf(visits <= 4, "tcp_slowtmr visited it %d times in %d ticks", visits, ticks);

    /* ---- TIME-WAIT: both sides close, A closed first ---- */
    tmr_bed_connect(&T, &a, &b, 7004);
    check(a != NULL && b != NULL, "a fourth connection comes up");
    if (a == NULL || b == NULL)
        return tap_done();
    for (int i = 0; i < 5; i++)
        tmr_bed_tick(&T.a, a);
    T.close_on_fin = 1;
    T.a.L.tcp_close(a);
    tmr_bed_pump(&T); /* FIN, ACK, B's FIN, A's ACK */
    struct tcp_pcb **tw = T.a.tw;
    int in_tw = 0;
    for (struct tcp_pcb *p = tw != NULL ? *tw : NULL; p != NULL; p = p->next)
        in_tw |= p == a;
    checkf(in_tw && a->state == TIME_WAIT, "A is in TIME-WAIT (state %d)", a->state);
    u32_t tw0 = a->tmr;
    int gone = -1;
    for (ticks = 0; in_tw && gone < 0 && ticks < 2000; ticks++) {
        T.a.slowtmr();
        int still = 0;
        for (struct tcp_pcb *p = *tw; p != NULL; p = p->next)
            still |= p == a;
        if (!still)
            gone = (int)(*T.a.ticks - tw0);
    }
    /* lwIP's rule: removed at the first tick past 2 x TCP_MSL / 50 ms */
    want = 2 * TCP_MSL / TCP_SLOW_INTERVAL + 1;
    checkf(gone == want, "the TIME-WAIT pcb is removed at tick %d (at %d)", want, gone);
    /* no longer than Linux's TIME-WAIT (TCP_TIMEWAIT_LEN, 60 s);
       lwIP's default TCP_MSL gave 120 s */
    checkf(gone > 0 && gone * TCP_SLOW_INTERVAL <= 60000 + TCP_SLOW_INTERVAL,
           "TIME-WAIT lasts %d ms, at most Linux's 60 s", gone * TCP_SLOW_INTERVAL);

    /* ---- a SYN sent long after bind(): its RTO counts from the send ----
       A bound pcb waits on the bound list, which tcp_slowtmr does not walk;
       counting the ticks since its allocation as "passed by" would put
       them on rtime and send the SYN again early. */
    struct tcp_pcb *s = T.a.L.tcp_new_ip_type(IPADDR_TYPE_V4);
    ip_addr_t any4, dst4;
    IP_ADDR4(&any4, 0, 0, 0, 0);
    IP_ADDR4(&dst4, 198, 18, 0, 1);
    T.a.L.tcp_bind(s, &any4, 40001);
    for (int i = 0; i < 60; i++) /* 3 s: well past the initial RTO */
        T.a.slowtmr();
    tmr_bed_watch(&T, &T.a, s);
    T.a.L.tcp_connect(s, &dst4, 7005, NULL);
    T.qn = 0; /* the SYN is lost */
    int syn_rto = s->rto, resent = -1;
    u32_t ts = *T.a.ticks;
    for (ticks = 0; resent < 0 && T.err_tick < 0 && ticks < 200; ticks++) {
        T.a.slowtmr();
        for (int i = 0; i < T.qn; i++) {
            unsigned len, fl;
            tmr_bed_seg(&T.q[i], &len, &fl);
            if ((fl & TCP_SYN) && resent < 0)
                resent = (int)(*T.a.ticks - ts);
        }
        T.qn = 0;
    }
    /* lwIP's rule: rtime set to 0 when the SYN is sent, the RTO at rtime == rto */
    checkf(resent == syn_rto, "a SYN sent 60 ticks after bind is sent again at tick %d, its RTO (at %d)", syn_rto,
           resent);
    if (T.err_tick < 0)
        T.a.L.tcp_abort(s);
    return tap_done();
}
