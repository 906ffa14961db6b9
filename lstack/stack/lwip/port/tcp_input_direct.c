/*
 * tcp_input_direct.c - a received unicast TCP segment handed to lwIP's
 * tcp_input without going through ip4_input.
 *
 * Which thread: the stack's owner, under its lock (like all of the copy).
 * Design: docs/design.md#tcp-segments-go-straight-to-tcp_input
 */
#include "lwip/ip.h"
#include "lwip/priv/tcp_priv.h"
#include "lwip/prot/ip4.h"

#include "lwip_port.h"

/*
 * The stack's frame filter (lstack/filter/frame_filter.c) has already
 * checked, for every frame it passes, what ip4_input would check of a
 * unicast TCP segment: the IPv4 version, header length and total length,
 * the header checksum, a destination that is ours, a source that is not
 * broadcast, multicast, loopback or ours. For a segment that is also not
 * a fragment and is addressed to the netif's own address, ip4_input has
 * nothing left to do but set lwIP's "current packet" globals (ip_data),
 * step past the IPv4 header and call tcp_input: about 120 instructions a
 * segment for tests already made (callgrind). Everything else (fragments, ICMP, broadcast, another address of
 * ours) still takes ip4_input (lstack/stack/netif.c decides).
 */

void lstack_lwip_tcp_input(struct pbuf *p, struct netif *inp, const void *iphdr)
{
    const struct ip_hdr *h = (const struct ip_hdr *)iphdr;
    ip_addr_copy_from_ip4(ip_data.current_iphdr_dest, h->dest);
    ip_addr_copy_from_ip4(ip_data.current_iphdr_src, h->src);
    ip_data.current_netif = inp;
    ip_data.current_input_netif = inp;
    ip_data.current_ip4_header = h;
    ip_data.current_ip_header_tot_len = (u16_t)IPH_HL_BYTES(h);
    tcp_input(p, inp);
    /* as ip4_input leaves them */
    ip_data.current_netif = NULL;
    ip_data.current_input_netif = NULL;
    ip_data.current_ip4_header = NULL;
    ip_data.current_ip_header_tot_len = 0;
    ip4_addr_set_any(ip4_current_src_addr());
    ip4_addr_set_any(ip4_current_dest_addr());
}
