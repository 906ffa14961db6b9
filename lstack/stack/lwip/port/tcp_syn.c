/*
 * tcp_syn.c - what a SYN to a listener gets, decided before lwIP's
 * tcp_listen_input sees it (LWIP_HOOK_TCP_INPACKET_PCB, lwip_hooks.h):
 *   - a RST (RST|ACK, ack = its sequence number + 1, as a closed port's)
 *     when the stack has no room for another socket (tcp_conn_count
 *     sockets are open): the client's connect fails at once with
 *     ECONNREFUSED, instead of completing a handshake that lstack would
 *     then reset;
 *   - nothing (dropped, counted) when the listener's SYN queue is full:
 *     as many half-open connections (SYN_RCVD) as its backlog, or as the
 *     stack's room for sockets (each will be one when it completes). Like
 *     Linux's full SYN queue without cookies: the client retransmits its
 *     SYN, and established connections keep being served meanwhile;
 *   - lwIP's own answer otherwise (a SYN-ACK and a SYN_RCVD pcb).
 * The half-open count is lwIP's: with TCP_LISTEN_BACKLOG a listen pcb's
 * accepts_pending counts its SYN_RCVD pcbs (lwIP takes one off when the
 * handshake completes, before the accept callback, or when the pcb dies).
 * The room comes from the stack through lstack_lwip_conf.sock_room (the
 * library cannot call lstack by symbol: it is dlopen'd RTLD_LOCAL).
 *
 * Rejected: checking the room in lstack's accept callback only (the
 * handshake has completed by then: the client sees its connect succeed and
 * then a reset); SYN cookies (lwIP would need a pcb made from a bare ACK
 * through code tcp_listen_input keeps static; see docs/reliability.md).
 * Which thread: the stack's owner only.
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

static struct {
    uint32_t (*room)(void *ctx);
    void *ctx;
    struct lstack_lwip_syn_stats st;
} G;

void lstack_port_syn_init(uint32_t (*room)(void *ctx), void *ctx)
{
    G.room = room;
    G.ctx = ctx;
}

err_t lstack_tcp_listen_input(struct tcp_pcb *pcb, const struct tcp_hdr *hdr, const struct pbuf *p)
{
    u16_t flags = TCPH_FLAGS(hdr);
    if ((flags & (TCP_SYN | TCP_ACK | TCP_RST)) != TCP_SYN)
        return ERR_OK; /* lwIP answers an ACK with a RST and ignores a RST */
    const struct tcp_pcb_listen *l = (const struct tcp_pcb_listen *)pcb;
    uint32_t room = G.room != NULL ? G.room(G.ctx) : UINT32_MAX;
    if (room == 0) {
        /* tcp_input has put the header in host order already. */
        u32_t len = (u32_t)p->tot_len + 1u + ((flags & TCP_FIN) ? 1u : 0u);
        tcp_rst(pcb, 0, hdr->seqno + len, ip_current_dest_addr(), ip_current_src_addr(), hdr->dest, hdr->src);
        G.st.refused++;
        return ERR_ABRT;
    }
    if (l->accepts_pending >= l->backlog || l->accepts_pending >= room) {
        G.st.dropped++;
        return ERR_ABRT;
    }
    return ERR_OK;
}

void lstack_lwip_syn_stats(struct lstack_lwip_syn_stats *out)
{
    *out = G.st;
}
