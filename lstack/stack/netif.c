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
 *
 * Rejected for now: zero-copy tx (lwIP's LWIP_NETIF_TX_SINGLE_PBUF build
 * already copies each segment into one RAM pbuf; wrapping that in an
 * external mbuf saves one copy and is a performance-issue item).
 */
#include <stdio.h>
#include <string.h>

#include "lwip/etharp.h"
#include "lwip/ip4_addr.h"
#include "lwip/pbuf.h"
#include "netif/ethernet.h"

#include "common/inet_csum.h"
#include "stack/stack_priv.h"

/* Lives in the mbuf's private area; pc must stay first (lwIP casts). */
struct rx_pbuf {
    struct pbuf_custom pc;
    struct nic *nic;
    void *handle;
};

size_t stack_nic_priv_size(void)
{
    return sizeof(struct rx_pbuf);
}

/* Called by lwIP (this stack's copy) when the last reference goes. */
static void rx_pbuf_free(struct pbuf *p)
{
    struct rx_pbuf *r = (struct rx_pbuf *)p;
    r->nic->ops->pkt_free(r->nic, r->handle);
}

void stack_netif_input(struct stack *s, const struct nic_pkt *pkt)
{
    struct rx_pbuf *r = pkt->priv;
    r->nic = s->nic;
    r->handle = pkt->handle;
    r->pc.custom_free_function = rx_pbuf_free;
    struct pbuf *p = s->L.pbuf_alloced_custom(PBUF_RAW, pkt->len, PBUF_REF, &r->pc, pkt->data, pkt->len);
    if (p == NULL) {
        s->st.lwip_input_err++;
        s->nic->ops->pkt_free(s->nic, pkt->handle);
        return;
    }
    /* lwIP's own TCP checksum check is on for one kind of frame: an IPv4
     * fragment, whose checksum only the reassembled datagram can be checked
     * against (the frame filter checked every whole segment; lwIP
     * reassembles a datagram inside the input call of its last fragment). */
    bool frag = frame_ipv4_fragment(pkt->data, pkt->len);
    if (frag)
        NETIF_SET_CHECKSUM_CTRL(&s->netif, s->netif.chksum_flags | NETIF_CHECKSUM_CHECK_TCP);
    if (s->netif.input(p, &s->netif) != ERR_OK) {
        s->st.lwip_input_err++;
        s->L.pbuf_free(p);
    }
    if (frag)
        NETIF_SET_CHECKSUM_CTRL(&s->netif, s->netif.chksum_flags & (u16_t)~NETIF_CHECKSUM_CHECK_TCP);
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
    s->tx_queued++; /* one frame for the port, as stack_poll counts them */
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
    s->tx_queued++; /* the round that follows counts it (stack_poll) */
    return ERR_OK;
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
    nif->output = s->L.etharp_output;
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
    return 0;
}

void stack_netif_close(struct stack *s)
{
    s->L.netif_set_down(&s->netif);
    s->L.netif_remove(&s->netif);
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
