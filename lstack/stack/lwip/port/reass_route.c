/*
 * reass_route.c - where a TCP datagram this lwIP copy reassembled goes
 * when the process runs several stacks: to the stack that owns its
 * 4-tuple (lwIP calls lstack_ip4_reassembled, patch 0015).
 *
 * The stack's thread only (like all of the copy).
 * Design: docs/design.md#reassembled-tcp-is-routed-to-its-stack-after-reassembly
 */
#include "lwip/opt.h"
#include "lwip/ip4.h"
#include "lwip/pbuf.h"
#include "lwip/prot/ip.h"
#include "lwip/prot/ip4.h"
#include "lwip/tcp.h"

#include "port/lwip_hooks.h"
#include "port/lwip_port.h"

/*
 * An RSS NIC, and the kernel's flow dissector behind af_packet and tap,
 * hash an IPv4 fragment on its addresses only (a non-first fragment
 * carries no ports), so the fragments of a TCP segment reach the queue of
 * that hash, which need not be the queue of the segment's connection. The
 * stack that received them reassembles the datagram; lwIP then calls
 * lstack_ip4_reassembled (patch 0015, LSTACK_HOOK_IP4_REASSEMBLED) before
 * its TCP input. If this copy has the connection, or the stack set no
 * route (a stack alone), lwIP goes on; otherwise the route (the
 * stack's, stack/stack_peers.c) gives the datagram to the stack that owns
 * the 4-tuple, and this copy frees its own.
 */

static lstack_reass_route_fn route;
static void *route_ctx;

void lstack_lwip_reass_route(lstack_reass_route_fn fn, void *ctx)
{
    route = fn;
    route_ctx = ctx;
}

int lstack_ip4_reassembled(struct pbuf *p, struct netif *inp)
{
    (void)inp;
    if (route == NULL)
        return 0;
    const struct ip_hdr *ip = (const struct ip_hdr *)p->payload;
    if (IPH_PROTO(ip) != IP_PROTO_TCP)
        return 0;
    u16_t hl = (u16_t)IPH_HL_BYTES(ip);
    u8_t ports[4];
    if (pbuf_copy_partial(p, ports, sizeof(ports), hl) != sizeof(ports))
        return 0; /* too short for TCP: lwIP's input drops it */
    u16_t sport = (u16_t)(ports[0] << 8 | ports[1]), dport = (u16_t)(ports[2] << 8 | ports[3]);
    u32_t local = ip4_addr_get_u32(&ip->dest), remote = ip4_addr_get_u32(&ip->src);
#if LSTACK_TCP_PCB_HASH
    if (lstack_pcb_hash_lookup(local, dport, remote, sport) != NULL)
        return 0; /* this copy's connection */
#endif
    if (!route(route_ctx, p, local, dport, remote, sport))
        return 0;
    pbuf_free(p);
    return 1;
}
