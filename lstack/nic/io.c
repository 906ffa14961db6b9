/*
 * io.c - frame I/O on an open DPDK port: rx burst, batched tx, counters,
 * and the port's operations table.
 *
 * Owns the per-packet path on the DPDK side. No allocation and no syscall
 * here apart from what the PMD itself does (af_packet's tx does a send()).
 * One thread per port (the stack's poller).
 */
#include <string.h>

#include <rte_ethdev.h>
#include <rte_mbuf.h>

#include "nic/nic_priv.h"

#define TX_RETRIES 4

static unsigned dpdk_rx_burst(struct nic *nic, struct nic_pkt *pkts, unsigned max)
{
    struct dpdk_nic *n = dpdk_nic(nic);
    struct rte_mbuf *m[NIC_MAX_BURST];
    if (max > n->burst)
        max = n->burst;
    uint16_t got = rte_eth_rx_burst(n->port, 0, m, (uint16_t)max);
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
        out++;
    }
    return out;
}

static void dpdk_pkt_free(struct nic *nic, void *handle)
{
    (void)nic;
    rte_pktmbuf_free((struct rte_mbuf *)handle);
}

static unsigned dpdk_tx_flush(struct nic *nic)
{
    struct dpdk_nic *n = dpdk_nic(nic);
    unsigned sent = 0;
    for (int tries = 0; sent < n->tx_count && tries < TX_RETRIES; tries++)
        sent += rte_eth_tx_burst(n->port, 0, n->tx_batch + sent, (uint16_t)(n->tx_count - sent));
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
    *c = (struct nic_caps){.mtu = mtu};
}

const struct nic_ops dpdk_nic_ops = {
    .rx_burst = dpdk_rx_burst,
    .pkt_free = dpdk_pkt_free,
    .tx_frame = dpdk_tx_frame,
    .tx_flush = dpdk_tx_flush,
    .get_stats = dpdk_get_stats,
    .mac = dpdk_nic_mac,
    .name = dpdk_nic_name,
    .close = dpdk_nic_close,
    .describe = dpdk_nic_describe,
    .caps = dpdk_caps,
};
