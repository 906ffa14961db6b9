/*
 * pcb_opts.c - socket options onto lwIP's pcb, and TCP_INFO's numbers off it.
 *
 * sockopt.c stores what the application sets and calls here to push it to
 * the pcb. Keepalive times are seconds in the socket API and milliseconds in
 * the pcb.
 */
#include "sock/lsock_lwip.h"

/*
 * SO_RCVBUF caps the window a connection announces, from its
 * establishment on (set before connect / on the listener, the ACK of the
 * handshake already announces the cap). Later, lwIP opens the window
 * by the credit tcp_recved gives it (tcp_io.c gives what the application
 * consumed); a lower cap is reached by taking from the window what is not
 * announced yet and withholding the rest from later credits (rcv_debt), so
 * the window converges to the cap without shrinking; a higher cap pays the
 * debt back, then credits the rest.
 */

/* enum lsock_tcp_state mirrors lwIP's enum tcp_state. */
_Static_assert((int)LSOCK_TCP_CLOSED == (int)CLOSED && (int)LSOCK_TCP_LISTEN == (int)LISTEN &&
                   (int)LSOCK_TCP_ESTABLISHED == (int)ESTABLISHED &&
                   (int)LSOCK_TCP_TIME_WAIT == (int)TIME_WAIT,
               "lsock_tcp_state out of step with lwIP");

static void lsock_apply_rcvbuf(struct lsock *s)
{
    struct tcp_pcb *pcb = s->pcb;
    if (s->state != LS_CONNECTED)
        return; /* lwIP sets the window itself during the handshake */
    lsock_rcv_settle(s); /* the arithmetic below assumes lwIP has all credit */
    uint32_t max = s->ss->tcp.rcv_wnd;
    uint32_t want = s->o.rcvbuf > 0 && (uint32_t)s->o.rcvbuf < max ? (uint32_t)s->o.rcvbuf : max;
    if (s->rcv_cap == 0) {
        /* First time, as the connection is established: the handshake
         * announced at most 64 KiB unscaled, no data is owed a larger
         * window yet; the ACK that follows announces the cap. */
        s->rcv_cap = want;
        if (want < pcb->rcv_wnd) {
            /* Data that arrived before accept is credited when read: withhold it. */
            s->rcv_debt = pcb->rcv_wnd < max ? max - pcb->rcv_wnd : 0;
            pcb->rcv_wnd = pcb->rcv_ann_wnd = want;
            pcb->rcv_ann_right_edge = pcb->rcv_nxt + want;
        }
        return;
    }
    uint32_t cur = s->rcv_cap;
    s->rcv_cap = want;
    if (want < cur) {
        /* Never below what is announced already: data the peer may send
         * would be dropped. The rest is withheld from later credits. */
        uint32_t owe = s->rcv_debt + (cur - want);
        uint32_t spare = pcb->rcv_wnd > pcb->rcv_ann_wnd ? pcb->rcv_wnd - pcb->rcv_ann_wnd : 0;
        uint32_t take = owe < spare ? owe : spare;
        pcb->rcv_wnd -= take;
        s->rcv_debt = owe - take;
    } else if (want > cur) {
        uint32_t more = want - cur;
        uint32_t paid = more < s->rcv_debt ? more : s->rcv_debt;
        s->rcv_debt -= paid;
        more -= paid;
        while (more > 0) {
            u16_t chunk = more > 0xffff ? 0xffff : (u16_t)more;
            lsock_lwip(s)->tcp_recved(pcb, chunk);
            more -= chunk;
        }
    }
}

void lsock_pcb_apply_opts(struct lsock *s)
{
    struct tcp_pcb *pcb = s->pcb;
    if (pcb == NULL)
        return;
    /* so_options is common to both pcb kinds (IP_PCB). */
    if (s->o.reuseaddr)
        ip_set_option(pcb, SOF_REUSEADDR);
    else
        ip_reset_option(pcb, SOF_REUSEADDR);
    if (s->o.keepalive)
        ip_set_option(pcb, SOF_KEEPALIVE);
    else
        ip_reset_option(pcb, SOF_KEEPALIVE);
    if (s->state == LS_LISTEN)
        return; /* struct tcp_pcb_listen ends before flags / keep_* */
    if (s->o.nodelay)
        tcp_nagle_disable(pcb);
    else
        tcp_nagle_enable(pcb);
    lsock_apply_rcvbuf(s);
    pcb->keep_idle = (u32_t)s->o.keep_idle * 1000u;
    pcb->keep_intvl = (u32_t)s->o.keep_intvl * 1000u;
    pcb->keep_cnt = (u32_t)s->o.keep_cnt;
    /* the keepalive settings decide when tcp_slowtmr must next look at
     * the pcb (lwIP patch 0017) */
    lsock_lwip(s)->lstack_tcp_tmr_wake(pcb);
}

unsigned lsock_pcb_mss(const struct lsock *s)
{
    if (s->pcb == NULL || s->state == LS_LISTEN)
        return 0;
    return tcp_mss(s->pcb);
}

void lsock_pcb_info(const struct lsock *s, struct lsock_tcpinfo *ti)
{
    *ti = (struct lsock_tcpinfo){.state = LSOCK_TCP_CLOSED};
    if (s->state == LS_LISTEN) {
        ti->state = LSOCK_TCP_LISTEN;
        return;
    }
    const struct tcp_pcb *pcb = s->pcb;
    if (pcb == NULL)
        return;
    ti->state = (enum lsock_tcp_state)pcb->state;
    ti->mss = tcp_mss(pcb);
    /* rto is in slow-timer ticks; sa is 8 x the smoothed RTT in ticks, sv
     * 4 x its deviation (Van Jacobson's fixed point, see lwIP tcp_in.c). */
    ti->rto_us = (uint32_t)pcb->rto * STACK_TCP_TICK_MS * 1000u;
    ti->rtt_us = (uint32_t)(pcb->sa > 0 ? pcb->sa >> 3 : 0) * STACK_TCP_TICK_MS * 1000u;
    ti->rttvar_us = (uint32_t)(pcb->sv > 0 ? pcb->sv >> 2 : 0) * STACK_TCP_TICK_MS * 1000u;
    if (pcb->mss > 0) {
        ti->snd_cwnd = pcb->cwnd / pcb->mss;
        ti->snd_ssthresh = pcb->ssthresh / pcb->mss;
    }
    ti->unacked = lsock_lwip(s)->lstack_tcp_unacked_segs(pcb);
    ti->retransmits = pcb->nrtx;
    ti->snd_wnd = pcb->snd_wnd;
    ti->rcv_wnd = pcb->rcv_ann_wnd;
}
