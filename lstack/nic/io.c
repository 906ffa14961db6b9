/*
 * io.c - frame I/O on an open DPDK port: rx burst, batched tx, counters,
 * and the port's operations table.
 *
 * Owns the per-packet path on the DPDK side. No allocation and no syscall
 * here apart from what the PMD itself does (af_packet's tx does a send()).
 * One thread per port (the stack's poller).
 */
#include <string.h>

#include <rte_cycles.h>
#include <rte_ethdev.h>
#include <rte_ip.h>
#include <rte_mbuf.h>
#include <rte_tcp.h>

#include "nic/nic_priv.h"

#define TX_RETRIES 4

/* The port's checksum verdict of a received frame (NIC_CKSUM_*). A memif
 * frame was copied by the CPU from the peer process's memory on this host:
 * nothing on the way can change it, so it counts as checked, as Linux
 * trusts what comes over loopback (and dpdk_caps says rx_cksum). */
static inline uint8_t rx_cksum_flags(const struct dpdk_nic *n, const struct rte_mbuf *m)
{
    if (n->memif)
        return NIC_CKSUM_IP_GOOD | NIC_CKSUM_L4_GOOD;
    if (!(n->rx_offloads & RTE_ETH_RX_OFFLOAD_TCP_CKSUM))
        return 0;
    uint8_t f = 0;
    uint64_t ip = m->ol_flags & RTE_MBUF_F_RX_IP_CKSUM_MASK, l4 = m->ol_flags & RTE_MBUF_F_RX_L4_CKSUM_MASK;
    if (ip == RTE_MBUF_F_RX_IP_CKSUM_GOOD)
        f |= NIC_CKSUM_IP_GOOD;
    else if (ip == RTE_MBUF_F_RX_IP_CKSUM_BAD)
        f |= NIC_CKSUM_IP_BAD;
    if (l4 == RTE_MBUF_F_RX_L4_CKSUM_GOOD)
        f |= NIC_CKSUM_L4_GOOD;
    else if (l4 == RTE_MBUF_F_RX_L4_CKSUM_BAD)
        f |= NIC_CKSUM_L4_BAD;
    return f;
}

/* With checksum offload: ask the port to fill in the IPv4 header and TCP
 * checksums of an outgoing IPv4 frame (the stack left them 0); the TCP
 * field must hold the pseudo-header sum. Other frames are left as they are. */
static void tx_cksum_prepare(struct rte_mbuf *m)
{
    if (m->data_len < sizeof(struct rte_ether_hdr) + sizeof(struct rte_ipv4_hdr))
        return;
    struct rte_ether_hdr *eth = rte_pktmbuf_mtod(m, struct rte_ether_hdr *);
    if (eth->ether_type != rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4))
        return;
    struct rte_ipv4_hdr *ip = (struct rte_ipv4_hdr *)(eth + 1);
    size_t ihl = (size_t)(ip->version_ihl & 0x0f) * 4;
    m->l2_len = sizeof(*eth);
    m->l3_len = (uint16_t)ihl;
    /* With RTE_MBUF_F_TX_TCP_SEG (a TSO frame) the pseudo-header sum below
     * leaves the length out, as the port wants. */
    m->ol_flags |= RTE_MBUF_F_TX_IPV4 | RTE_MBUF_F_TX_IP_CKSUM;
    ip->hdr_checksum = 0;
    if (ip->next_proto_id == IPPROTO_TCP && (rte_be_to_cpu_16(ip->fragment_offset) & 0x3fff) == 0 &&
        m->data_len >= sizeof(*eth) + ihl + sizeof(struct rte_tcp_hdr)) {
        struct rte_tcp_hdr *tcp = (struct rte_tcp_hdr *)((uint8_t *)ip + ihl);
        m->l4_len = (uint16_t)((tcp->data_off >> 4) * 4);
        m->ol_flags |= RTE_MBUF_F_TX_TCP_CKSUM;
        tcp->cksum = rte_ipv4_phdr_cksum(ip, m->ol_flags);
    }
}

static unsigned dpdk_rx_burst(struct nic *nic, struct nic_pkt *pkts, unsigned max)
{
    struct dpdk_nic *n = dpdk_nic(nic);
    struct rte_mbuf *m[NIC_MAX_BURST];
    if (max > n->burst)
        max = n->burst;
    uint16_t got;
    if (n->quiesce == NULL) {
        got = rte_eth_rx_burst(n->port, n->queue, m, (uint16_t)max);
    } else {
        if (!quiesce_enter(n->quiesce))
            return 0;
        got = __atomic_load_n(&n->started, __ATOMIC_RELAXED) ? rte_eth_rx_burst(n->port, n->queue, m, (uint16_t)max) : 0;
        quiesce_leave(n->quiesce);
    }
    unsigned out = 0;
    for (uint16_t i = 0; i < got; i++) {
        n->st.rx_packets++;
        n->st.rx_bytes += m[i]->pkt_len;
        if (m[i]->nb_segs != 1) {
            n->st.drop_rx_multiseg++;
            rte_pktmbuf_free(m[i]);
            continue;
        }
        pkts[out].handle = m[i];
        pkts[out].data = rte_pktmbuf_mtod(m[i], uint8_t *);
        pkts[out].len = m[i]->data_len;
        pkts[out].priv = rte_mbuf_to_priv(m[i]);
        pkts[out].cksum = rx_cksum_flags(n, m[i]);
        out++;
    }
    return out;
}

static void dpdk_pkt_free(struct nic *nic, void *handle)
{
    (void)nic;
    rte_pktmbuf_free((struct rte_mbuf *)handle);
}

/* Received frames given back together (the stack batches the frees of a
 * round, stack/netif.c): rte_pktmbuf_free_bulk returns them to their pool
 * in one put instead of one put per frame. */
static void dpdk_pkt_free_bulk(struct nic *nic, void *const *handles, unsigned count)
{
    (void)nic;
    rte_pktmbuf_free_bulk((struct rte_mbuf **)(uintptr_t)handles, count);
}

/* dpdk_tx_flush with frames queued (out of line: the empty test below is
 * made every poll round, and inlined into it this function's prologue ran
 * before the test). */
static __attribute__((noinline)) unsigned tx_flush_batch(struct dpdk_nic *n)
{
    unsigned sent = 0;
    if (n->tx_offloads & RTE_ETH_TX_OFFLOAD_TCP_CKSUM)
        for (unsigned i = 0; i < n->tx_count; i++)
            tx_cksum_prepare(n->tx_batch[i]);
    uint64_t t0 = rte_rdtsc();
    if (n->quiesce == NULL) {
        for (int tries = 0; sent < n->tx_count && tries < TX_RETRIES; tries++)
            sent += rte_eth_tx_burst(n->port, n->queue, n->tx_batch + sent, (uint16_t)(n->tx_count - sent));
    } else if (quiesce_enter(n->quiesce)) {
        if (__atomic_load_n(&n->started, __ATOMIC_RELAXED))
            for (int tries = 0; sent < n->tx_count && tries < TX_RETRIES; tries++)
                sent += rte_eth_tx_burst(n->port, n->queue, n->tx_batch + sent, (uint16_t)(n->tx_count - sent));
        quiesce_leave(n->quiesce);
    }
    /* Issue 11: the time inside the tx burst. On af_xdp it holds the kick
     * (sendto) and what the kernel does in it on this core: over a veth,
     * the peer namespace's receive path, a kernel client's cost, not the
     * server's. One rdtsc pair per flush that had frames (busy rounds only). */
    n->st.tx_burst_cycles += rte_rdtsc() - t0;
    n->st.tx_bursts++;
    if (n->memif && sent < n->tx_count && !__atomic_load_n(&n->link.was_up, __ATOMIC_RELAXED))
        n->link.tx_dropped += n->tx_count - sent;
    for (unsigned i = 0; i < sent; i++) {
        n->st.tx_packets++;
        n->st.tx_bytes += n->tx_len[i];
    }
    for (unsigned i = sent; i < n->tx_count; i++) {
        n->st.drop_tx_full++;
        rte_pktmbuf_free(n->tx_batch[i]);
    }
    n->tx_count = 0;
    return sent;
}

static unsigned dpdk_tx_flush(struct nic *nic)
{
    struct dpdk_nic *n = dpdk_nic(nic);
    return n->tx_count == 0 ? 0 : tx_flush_batch(n);
}

static uint8_t *dpdk_tx_frame(struct nic *nic, uint16_t len)
{
    struct dpdk_nic *n = dpdk_nic(nic);
    if (len > n->mbuf_data_room) {
        n->st.drop_tx_toolong++;
        return NULL;
    }
    if (n->tx_count == NIC_TX_BATCH)
        dpdk_tx_flush(nic);
    struct rte_mbuf *m = rte_pktmbuf_alloc(n->pool);
    if (m == NULL) {
        n->st.drop_tx_nombuf++;
        return NULL;
    }
    uint8_t *data = (uint8_t *)rte_pktmbuf_append(m, len);
    n->tx_len[n->tx_count] = len;
    n->tx_batch[n->tx_count++] = m;
    return data;
}

/* A TSO frame: a chain of mbufs the port cuts into frames of mss payload
 * bytes (RTE_MBUF_F_TX_TCP_SEG; tx_cksum_prepare fills in the header
 * lengths and checksum flags at tx_flush, when the headers are written). */
static unsigned dpdk_tx_frame_tso(struct nic *nic, uint32_t len, uint16_t mss, struct nic_iov *iov, unsigned max)
{
    struct dpdk_nic *n = dpdk_nic(nic);
    unsigned room = n->mbuf_data_room;
    unsigned need = (len + room - 1) / room;
    if (n->tso_frame_max == 0 || mss == 0 || len > n->tso_frame_max || need > max || need > NIC_TSO_IOV_MAX) {
        n->st.drop_tx_toolong++;
        return 0;
    }
    if (n->tx_count == NIC_TX_BATCH)
        dpdk_tx_flush(nic);
    struct rte_mbuf *seg[NIC_TSO_IOV_MAX];
    if (rte_pktmbuf_alloc_bulk(n->pool, seg, need) != 0) {
        n->st.drop_tx_nombuf++;
        return 0;
    }
    uint32_t left = len;
    for (unsigned i = 0; i < need; i++) {
        uint16_t k = (uint16_t)(left < room ? left : room);
        iov[i] = (struct nic_iov){(uint8_t *)rte_pktmbuf_append(seg[i], k), k};
        left -= k;
        if (i > 0)
            seg[i - 1]->next = seg[i];
    }
    struct rte_mbuf *head = seg[0];
    head->nb_segs = (uint16_t)need;
    head->pkt_len = len;
    head->ol_flags |= RTE_MBUF_F_TX_TCP_SEG;
    head->tso_segsz = mss;
    n->tx_len[n->tx_count] = (uint16_t)len;
    n->tx_batch[n->tx_count++] = head;
    return need;
}

static void dpdk_get_stats(const struct nic *nic, struct nic_stats *s)
{
    const struct dpdk_nic *n = dpdk_nic_c(nic);
    *s = n->st;
    struct rte_eth_stats es;
    if (rte_eth_stats_get(n->port, &es) == 0) {
        s->port_imissed = es.imissed;
        s->port_rx_nombuf = es.rx_nombuf;
    }
    s->mbuf_free = rte_mempool_avail_count(n->pool);
    s->mbuf_total = n->pool->size;
}

static void dpdk_caps(const struct nic *base, struct nic_caps *c)
{
    const struct dpdk_nic *n = dpdk_nic_c(base);
    uint16_t mtu = 0;
    if (rte_eth_dev_get_mtu(n->port, &mtu) != 0 || mtu == 0)
        mtu = RTE_ETHER_MTU;
    /* A frame must also fit one mbuf (multi-segment frames are dropped). */
    if (mtu > n->mbuf_data_room - RTE_ETHER_HDR_LEN)
        mtu = (uint16_t)(n->mbuf_data_room - RTE_ETHER_HDR_LEN);
    *c = (struct nic_caps){
        .mtu = mtu,
        /* memif: the stack checks no received checksum (rx_cksum_flags) */
        .rx_cksum = (n->rx_offloads & RTE_ETH_RX_OFFLOAD_TCP_CKSUM) != 0 || n->memif,
        .tx_cksum = (n->tx_offloads & RTE_ETH_TX_OFFLOAD_TCP_CKSUM) != 0,
        /* the frame less its largest headers (Ethernet, IPv4 and TCP with options) */
        .tso_max = n->tso_frame_max > 134 ? n->tso_frame_max - 134 : 0,
        .tso_mss_max = n->tso_mss_max,
    };
}

const struct nic_ops dpdk_nic_ops = {
    .rx_burst = dpdk_rx_burst,
    .pkt_free = dpdk_pkt_free,
    .pkt_free_bulk = dpdk_pkt_free_bulk,
    .tx_frame = dpdk_tx_frame,
    .tx_frame_tso = dpdk_tx_frame_tso,
    .tx_flush = dpdk_tx_flush,
    .get_stats = dpdk_get_stats,
    .mac = dpdk_nic_mac,
    .name = dpdk_nic_name,
    .close = dpdk_nic_close,
    .describe = dpdk_nic_describe,
    .caps = dpdk_caps,
};
