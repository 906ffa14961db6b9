/*
 * test_tcp_tmr_states.c - the timeouts tcp-tmr-quiet leaves out, and the
 * calls that change a pcb's timers from outside tcp_slowtmr, fall due at
 * lwIP's tick while patch 0017 parks pcbs (tcp_slowtmr passes a parked pcb
 * by until the first tick at which one of its timeouts can fall due).
 */
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include "tmr_bed.h"

#include "tap.h"

/*
 * Each scenario runs twice, on two beds (tmr_bed.h): Q, this build's lwIP,
 * and R, a copy of it built with LSTACK_TCP_TMR_REFERENCE, where patch 0017
 * parks no pcb and calls the poll's tcp_output at every visit: tcp_slowtmr
 * visits every pcb at every tick, as lwIP 2.1.3 does. The scenario logs what
 * the pcb under test sends and when it is removed, in ticks (50 ms) from a
 * point of the scenario, everything it sends being lost; the two logs must
 * be equal. Q must also have passed the pcb by for most of the ticks, or the
 * scenario tested nothing. And the key ticks are checked against lwIP's
 * rules, computed here, so that a reference gone wrong too fails as well:
 *  - retransmission (tcp.c tcp_slowtmr): rtime counts the ticks since a
 *    send (tcp_output_segment starts it at 0); the RTO at rtime == rto, after
 *    which rto = TCP_RTO_BASE << tcp_backoff[nrtx] (tcp_backoff: 1, 2, 3, 4,
 *    5, 6, 7, 7...; TCP_RTO_BASE srtt + 4 x rttvar with patch 0009's 200 ms
 *    floor), in every state but SYN-SENT, whose rto stays; removal at the
 *    tick after the TCP_MAXRTX-th (12) timeout (TCP_SYNMAXRTX-th, 6, in
 *    SYN-SENT), with no RST;
 *  - the tail loss probe (patch 0010): the last segment again at rtime ==
 *    max(LSTACK_TCP_TLP_TICKS, 2 x srtt + 1) if that is below rto, in
 *    ESTABLISHED and later states, once per RTO period (patch 0013);
 *  - SYN-RCVD: removal at the first tick with tcp_ticks - tmr >
 *    TCP_SYN_RCVD_TIMEOUT / 50 ms (20 s: 400), tmr being the last segment's
 *    tick; LAST-ACK likewise past 2 x TCP_MSL (60 s: 1200);
 *  - out-of-order data dropped at tcp_ticks - tmr >= 20 s / 50 ms (patch
 *    0012's LSTACK_TCP_OOSEQ_TIMEOUT_MS);
 *  - keepalive: probe n at tcp_ticks - tmr > (keep_idle + n x keep_intvl) /
 *    50 ms, abort with a RST past keep_idle + keep_cnt x keep_intvl;
 *  - tcp_poll: the callback at every pollinterval-th visit (polltmr).
 * Checks 43-44 and 46 guard two faults parking can make: tcp_poll on a
 * parked pcb must wake it (else no poll callback until something else
 * does), and a pcb woken from a callback of the walk itself must get the
 * current tick's count when the walk has yet to reach it (else its
 * retransmissions come a tick late).
 */

#ifndef TMR_REF_LIB
#error "TMR_REF_LIB: the path of the reference lwIP build (tests/unit/meson.build)"
#endif

/* ---- what a pcb did, tick by tick ---- */

#define EV_MAX 48
struct evlog {
    int n;
    struct {
        char what; /* S SYN, F FIN, D data, Z one byte, K no payload, R RST, X removed, O ooseq dropped, P poll */
        int tick;
    } e[EV_MAX];
    int visits, ticks; /* of tcp_slowtmr to the pcb under test */
    int setup;         /* 0: the scenario reached its state */
    /* the pcb's timer fields when the scenario started its clock: for the rules */
    int r0, base, tlp, tmr_off;
};

static void ev(struct evlog *l, char what, int tick)
{
    if (l->n < EV_MAX) {
        l->e[l->n].what = what;
        l->e[l->n].tick = tick;
        l->n++;
    }
}

static int ev_eq(const struct evlog *x, const struct evlog *y)
{
    if (x->n != y->n || x->setup != y->setup)
        return 0;
    for (int i = 0; i < x->n; i++)
        if (x->e[i].what != y->e[i].what || x->e[i].tick != y->e[i].tick)
            return 0;
    return 1;
}

static const char *ev_str(const struct evlog *l, char *buf, size_t len)
{
    size_t o = 0;
    buf[0] = '\0';
    for (int i = 0; i < l->n && o + 16 < len; i++)
        o += (size_t)snprintf(buf + o, len - o, "%s%c%d", i ? " " : "", l->e[i].what, l->e[i].tick);
    if (l->n == 0)
        snprintf(buf, len, "(nothing)");
    return buf;
}

/* The tick of the k-th event of kind what, -1 if none. */
static int ev_at(const struct evlog *l, char what, int k)
{
    for (int i = 0; i < l->n; i++)
        if (l->e[i].what == what && k-- == 0)
            return l->e[i].tick;
    return -1;
}

static char seg_kind(unsigned len, unsigned fl)
{
    if (fl & TCP_RST)
        return 'R';
    if (fl & TCP_SYN)
        return 'S';
    if (fl & TCP_FIN)
        return 'F';
    if (len > 1)
        return 'D';
    return len == 1 ? 'Z' : 'K';
}

/* Tick c up to max times, logging what c sends (all of it lost) at its tick
 * from t0, until pcb is removed (watched: tmr_bed_watch) or, with
 * watch_ooseq, its out-of-order queue is dropped. */
static void run(struct tmr_bed *t, struct tmr_copy *c, struct tcp_pcb *pcb, u32_t t0, int max, int watch_ooseq,
                struct evlog *l)
{
    int to = c == &t->a ? 1 : 0;
    for (int i = 0; i < max; i++) {
        int err0 = t->err_tick;
        l->visits += tmr_bed_tick(c, pcb);
        l->ticks++;
        int rel = (int)(*c->ticks - t0);
        for (int j = 0; j < t->qn; j++) {
            if (t->q[j].to != to)
                continue;
            unsigned len, fl;
            tmr_bed_seg(&t->q[j], &len, &fl);
            ev(l, seg_kind(len, fl), rel);
        }
        t->qn = 0;
        if (t->err_tick != err0) {
            ev(l, 'X', rel);
            return;
        }
        if (watch_ooseq && pcb->ooseq == NULL) {
            ev(l, 'O', rel);
            return;
        }
    }
}

/* The pcb's retransmission parameters, read before its clock starts. */
static void note_rto(struct evlog *l, const struct tcp_pcb *pcb, int with_tlp)
{
    int base = ((pcb->sa >> 3) + pcb->sv);
    if (base < LSTACK_TCP_RTO_MIN_TICKS)
        base = LSTACK_TCP_RTO_MIN_TICKS;
    int tlp = ((pcb->sa >> 3) << 1) + 1;
    if (tlp < LSTACK_TCP_TLP_TICKS)
        tlp = LSTACK_TCP_TLP_TICKS;
    l->r0 = pcb->rto;
    l->base = base;
    l->tlp = with_tlp ? tlp : 0;
}

/* lwIP's rules for one segment (kind what) sent at tick 0 and never
 * acknowledged: its tail loss probes and RTOs up to tick end, and the
 * removal after maxrtx timeouts. backoff: whether timeouts double the rto
 * (not in SYN-SENT). */
static void rule_rexmit(struct evlog *l, char what, int maxrtx, int backoff, int end, const struct evlog *in)
{
    static const int tcp_backoff[13] = {1, 2, 3, 4, 5, 6, 7, 7, 7, 7, 7, 7, 7}; /* lwIP tcp.c */
    int s = 0, rto = in->r0;
    for (int k = 0;; k++) {
        if (k == maxrtx) {
            if (s + 1 <= end)
                ev(l, 'X', s + 1);
            return;
        }
        if (in->tlp > 0 && in->tlp < rto && s + in->tlp <= end)
            ev(l, what, s + in->tlp);
        if (s + rto > end)
            return;
        s += rto;
        ev(l, what, s);
        if (backoff) {
            int r = in->base << tcp_backoff[k < 12 ? k : 12];
            rto = r < 0x7FFF ? r : 0x7FFF;
        }
    }
}

static int poll_tick = -1;
static struct tmr_copy *poll_copy;
static struct evlog *poll_log;
static u32_t poll_t0;
static err_t on_poll(void *arg, struct tcp_pcb *pcb)
{
    (void)arg;
    (void)pcb;
    poll_tick = (int)(*poll_copy->ticks - poll_t0);
    ev(poll_log, 'P', poll_tick);
    return ERR_OK;
}

/* Settle: a few ticks for the pcb to park after the segments of its set-up. */
static void settle(struct tmr_copy *c, struct tcp_pcb *pcb)
{
    for (int i = 0; i < 5; i++)
        tmr_bed_tick(c, pcb);
    c->bed->qn = 0;
}

/* Drop whatever is left of a scenario: pcbs aborted, their RSTs lost. */
static void drop(struct tmr_bed *t, struct tmr_copy *c, struct tcp_pcb *pcb)
{
    if (pcb != NULL)
        c->L.tcp_abort(pcb);
    t->qn = 0;
}

/* ---- the scenarios; each returns in l what the pcb under test did ---- */

/* SYN-RCVD: the SYN arrives, the SYN-ACK and all after it are lost, the
 * peer gives up. Ticks from the SYN's arrival (the pcb's tmr). */
static void sc_syn_rcvd(struct tmr_bed *t, struct evlog *l)
{
    struct tcp_pcb *lp = tmr_bed_listen(t, 7101);
    struct tcp_pcb *c = t->a.L.tcp_new_ip_type(IPADDR_TYPE_V4);
    ip_addr_t dst;
    IP_ADDR4(&dst, 198, 18, 0, 1);
    t->a.L.tcp_connect(c, &dst, 7101, NULL);
    u16_t cport = c->local_port;
    struct tmr_pkt syn = t->q[0];
    int n = t->qn;
    t->qn = 0;
    drop(t, &t->a, c);
    struct tcp_pcb *s = NULL;
    if (n == 1) {
        tmr_bed_deliver(t, &syn);
        t->qn = 0; /* the SYN-ACK is lost */
        for (struct tcp_pcb *p = *t->b.active; p != NULL; p = p->next)
            if (p->state == SYN_RCVD && p->remote_port == cport)
                s = p;
    }
    l->setup = s == NULL;
    if (s != NULL) {
        note_rto(l, s, 0);
        tmr_bed_watch(t, &t->b, s);
        run(t, &t->b, s, s->tmr, 1000, 0, l);
    }
    if (lp != NULL)
        t->b.L.tcp_close(lp);
}

/* LAST-ACK: A closes, B's application closes 5 ticks later; B's FIN and
 * everything after it is lost. Ticks from B's close; tmr_off: from A's FIN
 * (B's tmr) to B's close. */
static void sc_last_ack(struct tmr_bed *t, struct evlog *l)
{
    struct tcp_pcb *a, *b;
    tmr_bed_connect(t, &a, &b, 7102);
    l->setup = 1;
    if (a == NULL || b == NULL)
        return;
    settle(&t->b, b);
    t->close_on_fin = 0;
    t->a.L.tcp_close(a); /* A's pcb is lwIP's now: FIN-WAIT-2 on A, never ticked */
    tmr_bed_pump(t);
    if (b->state != CLOSE_WAIT)
        return;
    settle(&t->b, b); /* B parked in CLOSE-WAIT */
    u32_t tc = *t->b.ticks;
    l->tmr_off = (int)(tc - b->tmr);
    note_rto(l, b, 1);
    tmr_bed_watch(t, &t->b, b);
    t->b.L.tcp_close(b);
    t->qn = 0; /* the FIN is lost */
    if (b->state != LAST_ACK)
        return;
    l->setup = 0;
    run(t, &t->b, b, tc, 3000, 0, l);
}

/* The out-of-order queue: A sends two segments, the first is lost; B holds
 * the second until the timeout drops it. Ticks from its arrival. */
static void sc_ooseq(struct tmr_bed *t, struct evlog *l)
{
    static const char chunk[2 * 1460];
    struct tcp_pcb *a, *b;
    tmr_bed_connect(t, &a, &b, 7103);
    l->setup = 1;
    if (a == NULL || b == NULL)
        return;
    settle(&t->b, b);
    u16_t two = (u16_t)(2 * a->mss <= sizeof(chunk) ? 2 * a->mss : sizeof(chunk));
    t->a.L.tcp_write(a, chunk, two, TCP_WRITE_FLAG_COPY);
    t->a.L.tcp_output(a);
    if (t->qn == 2) {
        struct tmr_pkt second = t->q[1];
        t->qn = 0;
        tmr_bed_deliver(t, &second);
        t->qn = 0; /* B's duplicate ACK is lost */
        if (b->ooseq != NULL) {
            l->setup = 0;
            run(t, &t->b, b, b->tmr, 1000, 1, l);
        }
    }
    drop(t, &t->a, a);
    drop(t, &t->b, b);
}

/* The backoff to the limit: B's reply and every retransmission of it are
 * lost. Ticks from the reply's send. */
static void sc_backoff(struct tmr_bed *t, struct evlog *l)
{
    struct tcp_pcb *a, *b;
    tmr_bed_connect(t, &a, &b, 7104);
    l->setup = 1;
    if (a == NULL || b == NULL)
        return;
    settle(&t->b, b);
    note_rto(l, b, 1);
    tmr_bed_watch(t, &t->b, b);
    u32_t t0 = *t->b.ticks;
    t->b.L.tcp_write(b, "reply", 5, TCP_WRITE_FLAG_COPY);
    t->b.L.tcp_output(b);
    l->setup = t->qn != 1;
    t->qn = 0;
    run(t, &t->b, b, t0, 20000, 0, l);
    drop(t, &t->a, a);
}

/* SYN-SENT: a SYN never answered, to lwIP's SYN limit. Ticks from the send. */
static void sc_syn_sent(struct tmr_bed *t, struct evlog *l)
{
    struct tcp_pcb *c = t->a.L.tcp_new_ip_type(IPADDR_TYPE_V4);
    ip_addr_t dst;
    IP_ADDR4(&dst, 198, 18, 0, 1);
    u32_t t0 = *t->a.ticks;
    tmr_bed_watch(t, &t->a, c);
    t->a.L.tcp_connect(c, &dst, 7105, NULL);
    l->setup = t->qn != 1;
    t->qn = 0;
    note_rto(l, c, 0);
    run(t, &t->a, c, t0, 1000, 0, l);
}

/* The application closes a parked connection (tcp_close): its FIN and
 * every retransmission is lost. Ticks from the close. */
static void sc_app_close(struct tmr_bed *t, struct evlog *l)
{
    struct tcp_pcb *a, *b;
    tmr_bed_connect(t, &a, &b, 7106);
    l->setup = 1;
    if (a == NULL || b == NULL)
        return;
    settle(&t->a, a);
    note_rto(l, a, 1);
    tmr_bed_watch(t, &t->a, a);
    u32_t t0 = *t->a.ticks;
    t->a.L.tcp_close(a);
    l->setup = !(a->state == FIN_WAIT_1 && t->qn == 1);
    t->qn = 0;
    run(t, &t->a, a, t0, 20000, 0, l);
    drop(t, &t->b, b);
}

/* The peer's window update after a zero window (B's application reads:
 * tcp_recved) ends A's persist timer and sends A's waiting data, which is
 * lost. Ticks from the window update. */
static void sc_window_update(struct tmr_bed *t, struct evlog *l)
{
    static const char chunk[1000];
    struct tcp_pcb *a, *b;
    tmr_bed_connect(t, &a, &b, 7107);
    l->setup = 1;
    if (a == NULL || b == NULL)
        return;
    settle(&t->a, a);
    t->hold_recv = 1;
    /* exactly B's window, all acknowledged: the window is 0 */
    for (int r = 0; r < 400 && (a->snd_wnd > 0 || a->unacked != NULL || a->unsent != NULL); r++) {
        if (a->unacked == NULL && a->unsent == NULL) {
            u16_t n = a->snd_wnd < sizeof(chunk) ? (u16_t)a->snd_wnd : (u16_t)sizeof(chunk);
            t->a.L.tcp_write(a, chunk, n, TCP_WRITE_FLAG_COPY);
        }
        t->a.L.tcp_output(a);
        tmr_bed_pump(t);
        t->b.fasttmr(); /* B's delayed ACKs */
        tmr_bed_pump(t);
    }
    t->hold_recv = 0;
    t->a.L.tcp_write(a, chunk, sizeof(chunk), TCP_WRITE_FLAG_COPY);
    t->a.L.tcp_output(a); /* does not fit: the persist timer starts */
    if (a->snd_wnd != 0 || a->persist_backoff == 0) {
        drop(t, &t->a, a);
        return;
    }
    for (int i = 0; i < 10; i++) { /* a zero-window probe (one RTO), lost */
        t->a.slowtmr();
        t->qn = 0;
    }
    t->b.L.tcp_recved(b, 0xFFFF); /* the window update */
    l->setup = t->qn != 1;
    struct tmr_pkt upd = t->q[0];
    t->qn = 0;
    u32_t t0 = *t->a.ticks;
    tmr_bed_deliver(t, &upd); /* A sends the data at once, lost */
    ev(l, t->qn == 1 ? 'D' : '?', 0);
    t->qn = 0;
    note_rto(l, a, 1);
    run(t, &t->a, a, t0, 300, 0, l);
    drop(t, &t->a, a);
    drop(t, &t->b, b);
}

/* A connection the listener accepts after its SYN-RCVD pcb sat parked: the
 * handshake's last ACK comes 30 ticks late; B's first reply is lost. Ticks
 * from the reply's send. */
static void sc_accepted(struct tmr_bed *t, struct evlog *l)
{
    struct tcp_pcb *lp = tmr_bed_listen(t, 7108);
    struct tcp_pcb *c = t->a.L.tcp_new_ip_type(IPADDR_TYPE_V4);
    ip_addr_t dst;
    IP_ADDR4(&dst, 198, 18, 0, 1);
    t->a.L.tcp_connect(c, &dst, 7108, NULL);
    l->setup = 1;
    if (t->qn != 1)
        return;
    struct tmr_pkt syn = t->q[0];
    t->qn = 0;
    tmr_bed_deliver(t, &syn); /* SYN-ACK queued for A */
    if (t->qn != 1)
        return;
    struct tmr_pkt synack = t->q[0];
    t->qn = 0;
    tmr_bed_deliver(t, &synack); /* A's ACK queued for B: held */
    if (t->qn != 1)
        return;
    struct tmr_pkt ack = t->q[0];
    t->qn = 0;
    for (int i = 0; i < 30; i++) { /* B's SYN-ACK again at its RTO, lost */
        t->b.slowtmr();
        t->qn = 0;
    }
    tmr_bed_deliver(t, &ack);
    t->qn = 0;
    struct tcp_pcb *b = t->accepted;
    if (b == NULL || b->state != ESTABLISHED)
        return;
    l->setup = 0;
    settle(&t->b, b);
    note_rto(l, b, 1);
    tmr_bed_watch(t, &t->b, b);
    u32_t t0 = *t->b.ticks;
    t->b.L.tcp_write(b, "hello", 5, TCP_WRITE_FLAG_COPY);
    t->b.L.tcp_output(b);
    t->qn = 0;
    run(t, &t->b, b, t0, 300, 0, l);
    if (t->err_tick < 0)
        drop(t, &t->b, b);
    drop(t, &t->a, c);
    t->b.L.tcp_close(lp);
}

/* The application aborts a parked connection (tcp_abort) next to another
 * parked one whose keepalive then runs out. Ticks from the other's last
 * segment (its tmr). */
static void sc_abort_neighbour(struct tmr_bed *t, struct evlog *l)
{
    struct tcp_pcb *a1, *b1, *a2, *b2;
    tmr_bed_connect(t, &a1, &b1, 7109);
    tmr_bed_connect(t, &a2, &b2, 7110);
    l->setup = 1;
    if (a1 == NULL || a2 == NULL)
        return;
    settle(&t->a, a1);
    ip_set_option(a2, SOF_KEEPALIVE);
    a2->keep_idle = 1000; /* 20 ticks */
    a2->keep_intvl = 500; /* 10 ticks */
    a2->keep_cnt = 3;
    t->a.L.lstack_tcp_tmr_wake(a2); /* as lstack's setsockopt does */
    settle(&t->a, a2);
    t->a.L.tcp_abort(a1);
    l->setup = t->qn != 1; /* its RST */
    t->qn = 0;
    tmr_bed_watch(t, &t->a, a2);
    u32_t t0 = a2->tmr;
    l->tmr_off = (int)(*t->a.ticks - t0);
    run(t, &t->a, a2, t0, 200, 0, l);
    drop(t, &t->b, b1);
    drop(t, &t->b, b2);
}

/* tcp_shutdown(SHUT_WR), then tcp_close 100 ticks after the peer's ACK:
 * FIN-WAIT-2 has no timeout until the close (TF_RXCLOSED), then the
 * removal past 20 s of silence. Ticks from the peer's ACK (the pcb's tmr). */
static void sc_shutdown_close(struct tmr_bed *t, struct evlog *l)
{
    struct tcp_pcb *a, *b;
    tmr_bed_connect(t, &a, &b, 7116);
    l->setup = 1;
    if (a == NULL || b == NULL)
        return;
    settle(&t->a, a);
    t->a.L.tcp_shutdown(a, 0, 1);
    tmr_bed_pump(t); /* FIN, B's ACK: FIN-WAIT-2, no timeout yet */
    if (a->state != FIN_WAIT_2) {
        drop(t, &t->a, a);
        drop(t, &t->b, b);
        return;
    }
    u32_t t0 = a->tmr;
    tmr_bed_watch(t, &t->a, a);
    run(t, &t->a, a, t0, 100, 0, l);
    l->setup = t->err_tick >= 0;
    if (l->setup)
        return;
    t->a.L.tcp_close(a);
    run(t, &t->a, a, t0, 1000, 0, l);
    drop(t, &t->b, b);
}

/* tcp_poll on a parked pcb: the callback every 4 visits. Ticks from the
 * tcp_poll call. */
static void sc_poll(struct tmr_bed *t, struct evlog *l)
{
    void (*tcp_poll)(struct tcp_pcb *, tcp_poll_fn, u8_t) =
        (void (*)(struct tcp_pcb *, tcp_poll_fn, u8_t))dlsym(t->a.L.handle, "tcp_poll");
    struct tcp_pcb *a, *b;
    tmr_bed_connect(t, &a, &b, 7111);
    l->setup = 1;
    if (a == NULL || b == NULL || tcp_poll == NULL)
        return;
    settle(&t->a, a);
    l->setup = 0;
    poll_copy = &t->a;
    poll_log = l;
    poll_t0 = *t->a.ticks;
    tcp_poll(a, on_poll, 4);
    run(t, &t->a, a, poll_t0, 13, 0, l);
    tcp_poll(a, NULL, 0);
    drop(t, &t->a, a);
    drop(t, &t->b, b);
}

/* A callback of tcp_slowtmr's walk writes to a parked pcb: the error
 * callback of a connection whose keepalive ran out sends on another one
 * (lwIP allows it; lstack's own error callback only records the error).
 * The other's data is lost. first: the other connection is opened first,
 * so it comes after the aborted one on the active list (lwIP adds at the
 * head): lwIP's walk visits it after the callback and that visit counts the
 * tick, its probe and RTO come a tick earlier than when it was passed
 * before the callback. That order is lwIP's own, so these two are checked
 * against the reference only. Ticks from the keepalive's abort. */
struct cb_write {
    struct tmr_copy *c;
    struct tcp_pcb *other;
    int tick;
};
static struct cb_write cbw;
static void on_err_write(void *arg, err_t e)
{
    (void)arg;
    (void)e;
    cbw.tick = (int)*cbw.c->ticks;
    cbw.c->L.tcp_write(cbw.other, "late", 4, TCP_WRITE_FLAG_COPY);
    cbw.c->L.tcp_output(cbw.other);
}

static void sc_cb_write(struct tmr_bed *t, struct evlog *l, int first)
{
    struct tcp_pcb *a1, *b1, *a2, *b2, *ka, *other;
    tmr_bed_connect(t, &a1, &b1, first ? 7112 : 7114);
    tmr_bed_connect(t, &a2, &b2, first ? 7113 : 7115);
    l->setup = 1;
    if (a1 == NULL || a2 == NULL)
        return;
    other = first ? a1 : a2;
    ka = first ? a2 : a1;
    ip_set_option(ka, SOF_KEEPALIVE);
    ka->keep_idle = 1000;
    ka->keep_intvl = 500;
    ka->keep_cnt = 1;
    t->a.L.lstack_tcp_tmr_wake(ka);
    settle(&t->a, other);
    cbw = (struct cb_write){.c = &t->a, .other = other, .tick = -1};
    t->a.L.tcp_err(ka, on_err_write);
    for (int i = 0; i < 100 && cbw.tick < 0; i++) {
        t->a.slowtmr();
        t->qn = 0;
    }
    l->setup = cbw.tick < 0;
    note_rto(l, other, 1);
    tmr_bed_watch(t, &t->a, other);
    run(t, &t->a, other, (u32_t)cbw.tick, 60, 0, l);
    drop(t, &t->a, other);
    drop(t, &t->b, b1);
    drop(t, &t->b, b2);
}
static void sc_cb_write_first(struct tmr_bed *t, struct evlog *l)
{
    sc_cb_write(t, l, 1);
}
static void sc_cb_write_second(struct tmr_bed *t, struct evlog *l)
{
    sc_cb_write(t, l, 0);
}

/* ---- both beds, the comparison and the rules ---- */

static struct tmr_bed Q, R;

/* Run sc on both beds and compare. parked: the scenario's pcb has nothing
 * due at most ticks (not so with a poll callback). */
static void both(void (*sc)(struct tmr_bed *, struct evlog *), struct evlog *q, struct evlog *r, const char *name,
                 int parked)
{
    char bq[512], br[512];
    memset(q, 0, sizeof(*q));
    memset(r, 0, sizeof(*r));
    sc(&Q, q);
    sc(&R, r);
    checkf(q->setup == 0 && r->setup == 0, "%s: the scenario reaches its state (this build %d, reference %d)", name,
           q->setup, r->setup);
    checkf(ev_eq(q, r), "%s: every tick is the reference lwIP's (this build: %s; reference: %s)", name,
           ev_str(q, bq, sizeof(bq)), ev_str(r, br, sizeof(br)));
    if (parked)
        checkf(q->visits * 2 < q->ticks, "%s: the pcb was passed by: %d visits in %d ticks (reference: %d in %d)", name,
           q->visits, q->ticks, r->visits, r->ticks);
}

static void rule_check(const struct evlog *q, const struct evlog *want, const char *name)
{
    char bq[512], bw[512];
    checkf(ev_eq(q, want), "%s: the ticks lwIP's rules give (want: %s; saw: %s)", name, ev_str(want, bw, sizeof(bw)),
           ev_str(q, bq, sizeof(bq)));
}

int main(void)
{
    if (tmr_bed_open(&Q, NULL, "tmrs-q") != 0 || tmr_bed_open(&R, TMR_REF_LIB, "tmrs-r") != 0)
        return 1;
    struct evlog q, r, w;

    /* SYN-RCVD: the SYN-ACK at the RTO, doubling; removed past 20 s */
    both(sc_syn_rcvd, &q, &r, "SYN-RCVD", 1);
    memset(&w, 0, sizeof(w));
    int syn_rcvd_end = TCP_SYN_RCVD_TIMEOUT / TCP_SLOW_INTERVAL + 1;
    rule_rexmit(&w, 'S', TCP_MAXRTX, 1, syn_rcvd_end, &q);
    ev(&w, 'X', syn_rcvd_end);
    rule_check(&q, &w, "SYN-RCVD: SYN-ACK again at the RTO and its doublings, removed at tick 401");

    /* LAST-ACK: the FIN's probe and RTOs; removed past 60 s of silence */
    both(sc_last_ack, &q, &r, "LAST-ACK", 1);
    memset(&w, 0, sizeof(w));
    int last_ack_end = (int)(2 * TCP_MSL / TCP_SLOW_INTERVAL + 1) - q.tmr_off;
    rule_rexmit(&w, 'F', TCP_MAXRTX, 1, last_ack_end, &q);
    if (w.n == 0 || w.e[w.n - 1].what != 'X')
        ev(&w, 'X', last_ack_end);
    rule_check(&q, &w, "LAST-ACK: FIN again at the probe and the RTOs, removed 1201 ticks after the peer's FIN");

    /* the out-of-order queue: dropped 20 s after its segment */
    both(sc_ooseq, &q, &r, "out-of-order queue", 1);
    checkf(q.n == 1 && q.e[0].what == 'O' && q.e[0].tick == (int)(LSTACK_TCP_OOSEQ_TIMEOUT_MS / TCP_SLOW_INTERVAL),
           "out-of-order queue: dropped at tick %u (at %d)", LSTACK_TCP_OOSEQ_TIMEOUT_MS / TCP_SLOW_INTERVAL,
           ev_at(&q, 'O', 0));

    /* the backoff: second RTO at r0 + 2 x base, removal after the 12th */
    both(sc_backoff, &q, &r, "backoff", 1);
    memset(&w, 0, sizeof(w));
    rule_rexmit(&w, 'D', TCP_MAXRTX, 1, 1 << 20, &q);
    rule_check(&q, &w, "backoff: probe and RTO per period, RTOs doubling, removed the tick after the 12th");
    checkf(q.tlp < q.r0 && ev_at(&q, 'D', 3) == q.r0 + 2 * q.base,
           "backoff: the second RTO %d ticks after the first (rto %d, base %d; at %d)", 2 * q.base, q.r0, q.base,
           ev_at(&q, 'D', 3));

    /* SYN-SENT: the SYN every rto, removed after the 6th retransmission */
    both(sc_syn_sent, &q, &r, "SYN-SENT", 1);
    memset(&w, 0, sizeof(w));
    rule_rexmit(&w, 'S', TCP_SYNMAXRTX, 0, 1 << 20, &q);
    rule_check(&q, &w, "SYN-SENT: the SYN again every rto, removed the tick after the 6th");

    /* tcp_close on a parked pcb: FIN-WAIT-1's FIN to the limit */
    both(sc_app_close, &q, &r, "tcp_close", 1);
    memset(&w, 0, sizeof(w));
    rule_rexmit(&w, 'F', TCP_MAXRTX, 1, 1 << 20, &q);
    rule_check(&q, &w, "tcp_close: the FIN again at the probe and the RTOs, removed after the 12th");

    /* tcp_recved's window update ends the persist timer: the data's RTO */
    both(sc_window_update, &q, &r, "window update", 1);
    memset(&w, 0, sizeof(w));
    ev(&w, 'D', 0);
    rule_rexmit(&w, 'D', TCP_MAXRTX, 1, 300, &q);
    rule_check(&q, &w, "window update: the data sent at once, again at the probe and the RTOs");

    /* the listener's connection, accepted after a parked SYN-RCVD */
    both(sc_accepted, &q, &r, "accepted", 1);
    memset(&w, 0, sizeof(w));
    rule_rexmit(&w, 'D', TCP_MAXRTX, 1, 300, &q);
    rule_check(&q, &w, "accepted: its first reply again at the probe and the RTOs");

    /* tcp_abort next to a parked pcb: the other's keepalive */
    both(sc_abort_neighbour, &q, &r, "tcp_abort", 1);
    memset(&w, 0, sizeof(w));
    ev(&w, 'K', 21);
    ev(&w, 'K', 31);
    ev(&w, 'K', 41);
    ev(&w, 'R', 51);
    ev(&w, 'X', 51);
    rule_check(&q, &w, "tcp_abort: the neighbour's keepalive probes at 21, 31, 41, its RST at 51");

    /* tcp_shutdown then tcp_close: FIN-WAIT-2's timeout from the close on */
    both(sc_shutdown_close, &q, &r, "tcp_shutdown, tcp_close", 1);
    memset(&w, 0, sizeof(w));
    ev(&w, 'X', TCP_FIN_WAIT_TIMEOUT / TCP_SLOW_INTERVAL + 1);
    rule_check(&q, &w, "tcp_shutdown, tcp_close: removed at tick 401 after the peer's ACK");

    /* tcp_poll on a parked pcb */
    both(sc_poll, &q, &r, "tcp_poll", 0);
    memset(&w, 0, sizeof(w));
    ev(&w, 'P', 4);
    ev(&w, 'P', 8);
    ev(&w, 'P', 12);
    rule_check(&q, &w, "tcp_poll: the callback at ticks 4, 8, 12");
    both(sc_cb_write_first, &q, &r, "write from a callback, opened first", 1);
    both(sc_cb_write_second, &q, &r, "write from a callback, opened second", 1);
    return tap_done();
}
