/*
 * tcp_syn.c - what a segment to a listener gets, decided before lwIP's
 * tcp_listen_input sees it (LWIP_HOOK_TCP_INPACKET_PCB, lwip_hooks.h).
 * Which thread: the stack's owner only.
 * Design: docs/design.md#a-full-accept-queue-is-checked-at-syn
 */
#include <stdint.h>

#include "lwip/opt.h"
#include "lwip/ip.h"
#include "lwip/tcp.h"
#include "lwip/prot/tcp.h"
#include "lwip/priv/tcp_priv.h"

#include "port/lwip_hooks.h"
#include "port/lwip_port.h"
#include "port/lwip_port_priv.h"
#include "port/syn_cookie.h"

/*
 * A SYN gets:
 *   - a RST (RST|ACK, ack = its sequence number + 1, as a closed port's)
 *     when the stack has no room for another socket (tcp_conn_count
 *     sockets are open): the client's connect fails at once with
 *     ECONNREFUSED, instead of completing a handshake that lstack would
 *     then reset;
 *   - nothing (dropped, counted) when the half-open connections (SYN_RCVD)
 *     already take all the room left for sockets: each will be one when it
 *     completes; the client retransmits;
 *   - a SYN cookie (syn_cookie.c: a SYN-ACK and no state) when the
 *     listener's SYN queue is full: as many half-open connections as its
 *     backlog. Like Linux's tcp_syncookies = 1: under a SYN flood new
 *     clients still connect, established connections keep being served,
 *     and memory stays bounded;
 *   - nothing (dropped, counted in shed) when a cookie is due but the
 *     poll round's cookie budget is spent: the stack gives a round whose
 *     burst came back full (the port's receive ring is backed up) a small
 *     budget, so that a flood's SYNs cost a lookup each rather than a
 *     cookie, a SYN-ACK and its transmission, and the ring, where the
 *     established connections' segments wait behind the SYNs, drains
 *     (stack.c);
 *   - lwIP's own answer otherwise (a SYN-ACK and a SYN_RCVD pcb).
 * An ACK to a listener, while cookies were sent lately, may carry one: a
 * valid cookie makes the connection (or a RST when there is no room);
 * otherwise lwIP answers it with a RST as always.
 * The half-open count is lwIP's: with TCP_LISTEN_BACKLOG a listen pcb's
 * accepts_pending counts its SYN_RCVD pcbs (lwIP takes one off when the
 * handshake completes, before the accept callback, or when the pcb dies).
 * The room comes from the stack through lstack_lwip_conf.sock_room (the
 * library cannot call lstack by symbol: it is dlopen'd RTLD_LOCAL).
 */

static struct {
    uint32_t (*room)(void *ctx);
    void *ctx;
    uint32_t *cookie_budget;
    struct lstack_lwip_syn_stats st;
} G;

void lstack_port_syn_init(uint32_t (*room)(void *ctx), void *ctx, uint32_t *cookie_budget)
{
    G.room = room;
    G.ctx = ctx;
    G.cookie_budget = cookie_budget;
}

/* Take one cookie from the round's budget: 1, or 0 when it is spent. */
static int cookie_take(void)
{
    if (G.cookie_budget == NULL)
        return 1;
    if (*G.cookie_budget == 0)
        return 0;
    (*G.cookie_budget)--;
    return 1;
}

static uint32_t room_left(void)
{
    return G.room != NULL ? G.room(G.ctx) : UINT32_MAX;
}

/* RST|ACK to the segment being input, acknowledging all of it (seq 0: it
 * had no ACK) or with seq = its ackno (it had one), as a closed port. */
static void refuse(struct tcp_pcb *pcb, const struct tcp_hdr *hdr, const struct pbuf *p, u16_t flags)
{
    /* tcp_input has put the header in host order already. */
    u32_t len = (u32_t)p->tot_len + ((flags & TCP_SYN) ? 1u : 0u) + ((flags & TCP_FIN) ? 1u : 0u);
    u32_t seq = (flags & TCP_ACK) ? hdr->ackno : 0;
    tcp_rst(pcb, seq, hdr->seqno + len, ip_current_dest_addr(), ip_current_src_addr(), hdr->dest, hdr->src);
    G.st.refused++;
}

/* A bare SYN. */
static err_t syn_input(struct tcp_pcb *pcb, const struct tcp_hdr *hdr, u16_t optlen, u16_t opt1len,
                       const u8_t *opt2, const struct pbuf *p)
{
    const struct tcp_pcb_listen *l = (const struct tcp_pcb_listen *)pcb;
    uint32_t room = room_left();
    if (room == 0) {
        refuse(pcb, hdr, p, TCP_SYN);
        return ERR_ABRT;
    }
    if (l->accepts_pending >= room) {
        G.st.dropped++;
        return ERR_ABRT;
    }
    if (l->accepts_pending < l->backlog)
        return ERR_OK;
    if (!cookie_take()) {
        G.st.shed++;
        return ERR_ABRT;
    }
    if (lstack_cookie_synack(l, hdr, lstack_cookie_peer_mss(hdr, optlen, opt1len, opt2)) == 0)
        G.st.cookies_sent++;
    else
        G.st.dropped++;
    return ERR_ABRT;
}

/* An ACK (no SYN, no RST) while cookies were sent lately. */
static err_t cookie_ack_input(struct tcp_pcb *pcb, const struct tcp_hdr *hdr, const struct pbuf *p, u16_t flags)
{
    u16_t mss = lstack_cookie_check(hdr);
    if (mss == 0) {
        G.st.cookies_failed++;
        return ERR_OK; /* lwIP resets it */
    }
    if (room_left() == 0) {
        refuse(pcb, hdr, p, flags);
        return ERR_ABRT;
    }
    err_t e = lstack_cookie_open((struct tcp_pcb_listen *)pcb, hdr, mss);
    if (e == ERR_OK)
        G.st.cookies_recv++;
    else if (e == ERR_MEM)
        G.st.dropped++;
    return ERR_ABRT; /* consumed: the pcb is made (its data, if any, comes again) */
}

err_t lstack_tcp_listen_input(struct tcp_pcb *pcb, const struct tcp_hdr *hdr, u16_t optlen, u16_t opt1len,
                              const u8_t *opt2, const struct pbuf *p)
{
    u16_t flags = TCPH_FLAGS(hdr);
    if ((flags & (TCP_SYN | TCP_ACK | TCP_RST)) == TCP_SYN)
        return syn_input(pcb, hdr, optlen, opt1len, opt2, p);
    if ((flags & (TCP_SYN | TCP_ACK | TCP_RST)) == TCP_ACK && lstack_cookie_recent())
        return cookie_ack_input(pcb, hdr, p, flags);
    return ERR_OK; /* lwIP answers an ACK with a RST and ignores a RST */
}

void lstack_lwip_syn_stats(struct lstack_lwip_syn_stats *out)
{
    *out = G.st;
}
