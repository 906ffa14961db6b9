/*
 * netif.c - the lwIP network interface of a stack, over a DPDK port.
 *
 * Owns the zero-copy rx path (an lwIP custom pbuf stored in the mbuf's
 * private area points at the frame in the mbuf; freeing the pbuf frees the
 * mbuf) and the tx path (lwIP's linkoutput copies the frame into a tx mbuf
 * that the port's tx_flush sends in a batch at the end of the poll round,
 * and fills in its IPv4 and TCP checksums where the port does not;
 * a TCP segment larger than the MTU, which lwIP builds only when the port
 * offers TSO, goes into a chain of mbufs the port cuts into MSS frames).
 * Design: docs/design.md#ethernet-out-without-lwips-arp-layer
 * Design: docs/design.md#transmit-copies-each-segment-once
 */
#include <stdio.h>
#include <string.h>

#include "lwip/etharp.h"
#include "lwip/ip4_addr.h"
#include "lwip/pbuf.h"
#include "lwip/prot/ip.h"
#include "netif/ethernet.h"

#include "common/inet_csum.h"
#include "stack/stack_priv.h"

/*
 * Output has a fast path of its own (netif_ip_output, the netif's output): an
 * IPv4 packet to a plain unicast address whose next hop has a stable ARP
 * entry goes straight into the tx mbuf behind an Ethernet header written
 * there, without lwIP's etharp_output (broadcast, multicast and subnet
 * tests, the gateway choice, the entry's age) and ethernet_output (a
 * pbuf_add_header and the header written into the pbuf) and a second
 * linkoutput call: ~55 instructions a frame (callgrind). The next hop's
 * ARP table index is cached per stack (a few slots by next hop) and each use checks the entry is still stable and still
 * that address (etharp_get_entry), so an entry lwIP updated (a new MAC)
 * is seen at once and one it freed or reused is not used. The slots are
 * emptied once a second (a lwIP timer of the stack), so each next hop in
 * use takes lwIP's own path at least once a second: that path ages the
 * entry and sends the ARP re-request before it expires, as it would with
 * every frame. Everything else (ARP not yet resolved, broadcast,
 * multicast, link-local, TSO segments) is lwIP's etharp_output.
 *
 * Input of a unicast TCP segment to our own address that is not a
 * fragment goes straight to lwIP's tcp_input with the pbuf made at the
 * TCP header (lwip/port/tcp_input_direct.c sets what ip4_input would: the
 * frame filter made its checks; ~120 instructions a segment); any other
 * unicast IPv4 frame goes to ip4_input with the pbuf made at the IPv4 header (ethernet_input's work for such a frame is
 * a pbuf_remove_header; the frame filter checked the rest); ARP and
 * broadcast frames go through ethernet_input. The pbuf is written here
 * (rx_pbuf_init), not by a call into the lwIP copy. A frame the filter's
 * common case passed (frame_common_tcp: IPv4 with a 20-byte header, TCP,
 * to our address, not a fragment) comes through stack_netif_input_tcp,
 * which skips the second look at those headers.
 */

/* Lives in the mbuf's private area; pc must stay first (lwIP casts). */
struct rx_pbuf {
    struct pbuf_custom pc;
    struct stack *s;
    void *handle;
};

size_t stack_nic_priv_size(void)
{
    return sizeof(struct rx_pbuf);
}

void stack_rx_free_flush_some(struct stack *s)
{
    struct nic *nic = s->nic;
    if (nic->ops->pkt_free_bulk != NULL) {
        nic->ops->pkt_free_bulk(nic, s->rx_free, s->rx_free_n);
    } else {
        for (unsigned i = 0; i < s->rx_free_n; i++)
            nic->ops->pkt_free(nic, s->rx_free[i]);
    }
    s->rx_free_n = 0;
}

/* Called by lwIP (this stack's copy, under its lock) when the last
 * reference goes: the frame waits in s->rx_free for the round's end
 * (stack.c) or a full batch, and goes back to the port with the others
 * (on DPDK one rte_pktmbuf_free_bulk, one pool put for the batch instead
 * of one per frame: ~33 instructions a frame less, DPDK's library
 * included). At most STACK_RX_FREE_MAX frames wait. */
static void rx_pbuf_free(struct pbuf *p)
{
    struct rx_pbuf *r = (struct rx_pbuf *)p;
    struct stack *s = r->s;
    s->rx_free[s->rx_free_n++] = r->handle;
    if (s->rx_free_n == STACK_RX_FREE_MAX)
        stack_rx_free_flush_some(s);
}

/* The frame's pbuf, in the frame's own buffer (a PBUF_REF custom pbuf of
 * one part): what lwIP's pbuf_alloced_custom makes, written here (a call
 * into the lwIP copy and its checks, ~25 instructions a frame, for fields
 * that are lwIP's public struct; its only failure, a length past the
 * buffer, cannot happen: len is inside the frame). */
static struct pbuf *rx_pbuf_init(struct rx_pbuf *r, uint8_t *payload, uint16_t len)
{
    struct pbuf *p = &r->pc.pbuf;
    p->next = NULL;
    p->payload = payload;
    p->tot_len = p->len = len;
    p->type_internal = (u8_t)PBUF_REF;
    p->flags = PBUF_FLAG_IS_CUSTOM;
    p->ref = 1;
    p->if_idx = NETIF_NO_INDEX;
    return p;
}

void stack_netif_input(struct stack *s, const struct nic_pkt *pkt)
{
    struct rx_pbuf *r = pkt->priv;
    r->s = s;
    r->handle = pkt->handle;
    r->pc.custom_free_function = rx_pbuf_free;
    /* A unicast IPv4 frame starts at its IPv4 header (the filter passed
     * only frames to our MAC or broadcast, and an IPv4 frame only with a
     * whole IPv4 header); the rest at the Ethernet header, for
     * ethernet_input. */
    uint16_t type;
    memcpy(&type, pkt->data + 12, sizeof(type));
    bool ip = (pkt->data[0] & 1) == 0 && type == PP_HTONS(ETHTYPE_IP);
    if (ip) {
        /* A TCP segment to our own address, not a fragment: straight to
         * tcp_input (lwip/port/tcp_input_direct.c), the pbuf made at the
         * TCP header and as long as the IPv4 header says (no Ethernet
         * padding): the filter has made ip4_input's checks. */
        uint8_t *iph = pkt->data + SIZEOF_ETH_HDR;
        uint32_t dst;
        memcpy(&dst, iph + 16, sizeof(dst));
        if (iph[9] == IP_PROTO_TCP && ((iph[6] & 0x3f) | iph[7]) == 0 &&
            dst == ip4_addr_get_u32(netif_ip4_addr(&s->netif)) && netif_is_up(&s->netif)) {
            uint16_t hlen = (uint16_t)((iph[0] & 0x0f) * 4);
            struct pbuf *p = rx_pbuf_init(r, iph + hlen, (uint16_t)(((uint16_t)iph[2] << 8 | iph[3]) - hlen));
            p->if_idx = netif_get_index(&s->netif);
            s->L.lstack_lwip_tcp_input(p, &s->netif, iph);
            return;
        }
    }
    uint16_t off = ip ? SIZEOF_ETH_HDR : 0;
    struct pbuf *p = rx_pbuf_init(r, pkt->data + off, (uint16_t)(pkt->len - off));
    /* lwIP's own TCP checksum check is on for one kind of frame: an IPv4
     * fragment, whose checksum only the reassembled datagram can be checked
     * against (the frame filter checked every whole segment; lwIP
     * reassembles a datagram inside the input call of its last fragment). */
    bool frag = frame_ipv4_fragment(pkt->data, pkt->len);
    if (frag)
        NETIF_SET_CHECKSUM_CTRL(&s->netif, s->netif.chksum_flags | NETIF_CHECKSUM_CHECK_TCP);
    err_t err;
    if (ip) {
        p->if_idx = netif_get_index(&s->netif); /* as ethernet_input sets it */
        err = s->L.ip4_input(p, &s->netif);
    } else {
        err = s->netif.input(p, &s->netif);
    }
    if (err != ERR_OK) {
        s->st.lwip_input_err++;
        s->L.pbuf_free(p);
    }
    if (frag)
        NETIF_SET_CHECKSUM_CTRL(&s->netif, s->netif.chksum_flags & (u16_t)~NETIF_CHECKSUM_CHECK_TCP);
}

void stack_netif_input_tcp(struct stack *s, const struct nic_pkt *pkt)
{
    uint8_t *iph = pkt->data + SIZEOF_ETH_HDR;
    uint32_t dst;
    memcpy(&dst, iph + 16, sizeof(dst));
    if (dst != ip4_addr_get_u32(netif_ip4_addr(&s->netif)) || !netif_is_up(&s->netif)) {
        stack_netif_input(s, pkt);
        return;
    }
    struct rx_pbuf *r = pkt->priv;
    r->s = s;
    r->handle = pkt->handle;
    r->pc.custom_free_function = rx_pbuf_free;
    /* the header is 20 bytes; as long as the IPv4 total length says (no
     * Ethernet padding), as in stack_netif_input */
    struct pbuf *p = rx_pbuf_init(r, iph + 20, (uint16_t)(((uint16_t)iph[2] << 8 | iph[3]) - 20));
    p->if_idx = netif_get_index(&s->netif);
    s->L.lstack_lwip_tcp_input(p, &s->netif, iph);
}

/* A TSO segment (more than one MSS): into the port's buffers, for the
 * port to cut by the MSS lwIP names while it outputs the segment. */
static err_t linkoutput_tso(struct stack *s, struct pbuf *p, uint16_t mss)
{
    struct nic_iov iov[NIC_TSO_IOV_MAX];
    unsigned n = s->nic->ops->tx_frame_tso(s->nic, p->tot_len, mss, iov, NIC_TSO_IOV_MAX);
    if (n == 0)
        return ERR_MEM;
    uint16_t off = 0;
    for (unsigned i = 0; i < n; i++) {
        s->L.pbuf_copy_partial(p, iov[i].base, (uint16_t)iov[i].len, off);
        off = (uint16_t)(off + iov[i].len);
    }
    s->st.tx_tso++;
    stack_tx_queued(s); /* one frame for the port, as stack_poll counts them */
    return ERR_OK;
}

static err_t linkoutput(struct netif *nif, struct pbuf *p)
{
    struct stack *s = nif->state;
    if (s->caps.tso_max != 0) {
        /* Set while lwIP outputs a segment of more than one MSS (even one
         * within the MTU: the peer's MSS may be smaller); 0 for a frame
         * lwIP queued (for ARP) and sends later: that goes the plain way,
         * is dropped as too long if it is, and TCP sends it again. */
        uint16_t mss = s->L.lstack_lwip_tso_segsz();
        if (mss != 0)
            return linkoutput_tso(s, p, mss);
    }
    uint8_t *buf = s->nic->ops->tx_frame(s->nic, p->tot_len);
    if (buf == NULL)
        return ERR_MEM;
    if (p->next == NULL) /* a TCP segment is one pbuf (LWIP_NETIF_TX_SINGLE_PBUF) */
        memcpy(buf, p->payload, p->len);
    else
        s->L.pbuf_copy_partial(p, buf, p->tot_len, 0);
    /* The port's checksum offload, in software where it has none: lwIP
     * leaves the IPv4 header and TCP checksums to the netif (netif_init_cb),
     * so they are summed once, over the frame as it leaves. */
    if (!s->caps.tx_cksum)
        inet_frame_csum_fill(buf, p->tot_len);
    stack_tx_queued(s); /* the round that follows counts it (stack_poll) */
    return ERR_OK;
}

/* The frame of IPv4 packet p to Ethernet address dst, into a tx mbuf
 * (netif_ip_output's fast path). ERR_MEM: no mbuf (as linkoutput). */
static err_t frame_out(struct stack *s, struct pbuf *p, const struct eth_addr *dst)
{
    uint16_t len = (uint16_t)(SIZEOF_ETH_HDR + p->tot_len);
    uint8_t *buf = s->nic->ops->tx_frame(s->nic, len);
    if (buf == NULL)
        return ERR_MEM;
    memcpy(buf, dst->addr, ETH_HWADDR_LEN);
    memcpy(buf + ETH_HWADDR_LEN, s->netif.hwaddr, ETH_HWADDR_LEN);
    buf[12] = 0x08; /* ETHTYPE_IP */
    buf[13] = 0x00;
    if (p->next == NULL)
        memcpy(buf + SIZEOF_ETH_HDR, p->payload, p->len);
    else
        s->L.pbuf_copy_partial(p, buf + SIZEOF_ETH_HDR, p->tot_len, 0);
    if (!s->caps.tx_cksum) {
        /* lwIP's TCP segment (no IPv4 options, not a fragment, a whole
         * header: what the stack sends most) without the frame checks of
         * inet_frame_csum_fill; anything else (ICMP, fragments) through it */
        uint8_t *ip = buf + SIZEOF_ETH_HDR;
        if (ip[0] == 0x45 && ip[9] == IP_PROTO_TCP && ((ip[6] & 0x3f) | ip[7]) == 0 && p->tot_len >= 40 &&
            ((uint16_t)ip[2] << 8 | ip[3]) == p->tot_len)
            inet_tcp20_csum_fill(ip, p->tot_len);
        else
            inet_frame_csum_fill(buf, len);
    }
    stack_tx_queued(s);
    return ERR_OK;
}

/* The next hop of IPv4 address dst (network byte order) if it is a plain
 * unicast address (the fast path's), else 0: broadcast, multicast, class
 * E, 0.x, link-local and no gateway take lwIP's etharp_output. */
static inline uint32_t fast_hop(const struct stack *s, uint32_t dst)
{
    const uint8_t *b = (const uint8_t *)&dst;
    if (b[0] == 0 || b[0] >= 224 || (b[0] == 169 && b[1] == 254))
        return 0;
    uint32_t mask = ip4_addr_get_u32(netif_ip4_netmask(&s->netif));
    if (((dst ^ ip4_addr_get_u32(netif_ip4_addr(&s->netif))) & mask) == 0)
        return (dst & ~mask) == ~mask ? 0 : dst; /* on the link: the subnet's broadcast is not */
    return ip4_addr_get_u32(netif_ip4_gw(&s->netif));
}

static inline struct stack_arp_fast *fast_slot(struct stack *s, uint32_t hop)
{
    return &s->arp_fast[(hop >> 24) & (STACK_ARP_FAST_SLOTS - 1)]; /* the address's last byte */
}

/* Once a second: every next hop takes lwIP's path once again (ageing,
 * ARP re-requests); re-arms itself. */
static void arp_fast_tick(void *arg)
{
    struct stack *s = arg;
    memset(s->arp_fast, 0, sizeof(s->arp_fast));
    s->L.sys_timeout(1000, arp_fast_tick, s);
}

/* The netif's output (lwIP's ip4_output_if calls it with an IPv4 packet
 * and its destination): see the top of the file. */
static err_t netif_ip_output(struct netif *nif, struct pbuf *p, const ip4_addr_t *ipaddr)
{
    struct stack *s = nif->state;
    uint32_t hop = fast_hop(s, ip4_addr_get_u32(ipaddr));
    struct stack_arp_fast *e = NULL;
    if (hop != 0 && (s->caps.tso_max == 0 || s->L.lstack_lwip_tso_segsz() == 0)) {
        e = fast_slot(s, hop);
        if (e->hop == hop) {
            ip4_addr_t *eip;
            struct netif *enif;
            struct eth_addr *eth;
            if (s->L.etharp_get_entry(e->idx, &eip, &enif, &eth) && ip4_addr_get_u32(eip) == hop && enif == nif)
                return frame_out(s, p, eth);
            e->hop = 0; /* freed or reused: lwIP's path finds it again */
        }
    }
    err_t err = s->L.etharp_output(nif, p, ipaddr);
    if (err == ERR_OK && e != NULL && e->hop == 0) {
        ip4_addr_t h;
        ip4_addr_set_u32(&h, hop);
        struct eth_addr *eth;
        const ip4_addr_t *eip;
        ssize_t i = s->L.etharp_find_addr(nif, &h, &eth, &eip); /* a stable entry's, else -1 */
        if (i >= 0)
            *e = (struct stack_arp_fast){.hop = hop, .idx = (uint32_t)i};
    }
    return err;
}

static err_t netif_init_cb(struct netif *nif)
{
    struct stack *s = nif->state;
    nif->name[0] = 'l';
    nif->name[1] = 's';
    nif->mtu = s->caps.mtu;
    nif->hwaddr_len = 6;
    s->nic->ops->mac(s->nic, nif->hwaddr);
    nif->flags = NETIF_FLAG_BROADCAST | NETIF_FLAG_ETHARP | NETIF_FLAG_ETHERNET;
    nif->output = netif_ip_output;
    nif->linkoutput = linkoutput;
    /* Checksums lwIP computes and checks: ICMP's only. The IPv4 header and
     * TCP checksums of what it sends are the port's, or linkoutput's where
     * the port has no offload (one pass over the frame as it is copied
     * out, instead of lwIP's pseudo-header and header passes); the IPv4
     * header and the TCP checksum of what arrives are checked by the port
     * or the frame filter, but for an IPv4 fragment's, which lwIP checks
     * after reassembly (stack_netif_input). */
    u16_t ck = NETIF_CHECKSUM_ENABLE_ALL & (u16_t)~(NETIF_CHECKSUM_CHECK_IP | NETIF_CHECKSUM_GEN_IP |
                                                     NETIF_CHECKSUM_GEN_TCP | NETIF_CHECKSUM_CHECK_TCP);
    NETIF_SET_CHECKSUM_CTRL(nif, ck);
    return ERR_OK;
}

int stack_netif_open(struct stack *s, const struct lstack_conf *conf, char *err, size_t errlen)
{
    ip4_addr_t addr, mask;
    ip4_addr_set_u32(&addr, conf->host_addr);
    ip4_addr_set_u32(&mask, conf->mask_addr);
    ip4_addr_set_u32(&s->gw, conf->gateway_addr);
    if (s->L.netif_add(&s->netif, &addr, &mask, &s->gw, s, netif_init_cb, s->L.ethernet_input) == NULL) {
        snprintf(err, errlen, "lwIP refused the interface");
        return -1;
    }
    s->L.netif_set_default(&s->netif);
    s->L.netif_set_link_up(&s->netif);
    s->L.netif_set_up(&s->netif); /* sends a gratuitous ARP */
    s->L.etharp_query(&s->netif, &s->gw, NULL);
    memset(s->arp_fast, 0, sizeof(s->arp_fast));
    s->L.sys_timeout(1000, arp_fast_tick, s);
    return 0;
}

void stack_netif_close(struct stack *s)
{
    s->L.sys_untimeout(arp_fast_tick, s);
    s->L.netif_set_down(&s->netif);
    s->L.netif_remove(&s->netif);
    stack_rx_free_flush(s);
}

int stack_gateway_mac(struct stack *s, uint8_t mac[6])
{
    struct eth_addr *eth = NULL;
    const ip4_addr_t *ip = NULL;
    if (s->L.etharp_find_addr(&s->netif, &s->gw, &eth, &ip) >= 0 && eth != NULL) {
        memcpy(mac, eth->addr, 6);
        return 1;
    }
    s->L.etharp_query(&s->netif, &s->gw, NULL);
    return 0;
}
