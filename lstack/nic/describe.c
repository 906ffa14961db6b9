/*
 * describe.c - a DPDK port described for `stackctl show nic` (the nic op
 * "describe", see nic.h): driver and device limits, link, queues,
 * offloads (capable and enabled), the port's basic counters, every
 * extended counter the PMD has, and the mbuf pool. DPDK side: never
 * includes an lwIP header; items cross nic.h as plain strings and numbers.
 *
 * Only stable ethdev calls (no ALLOW_EXPERIMENTAL_API): the link is
 * formatted here rather than with rte_eth_link_to_str.
 * Design: docs/design.md#show-nic-is-a-nic-op
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_ethdev.h>
#include <rte_mempool.h>

#include "nic/nic_priv.h"

struct out {
    nic_describe_fn emit;
    void *ctx;
    const char *group;
};

static void text(struct out *o, const char *name, const char *value)
{
    struct nic_item it = {.group = o->group, .name = name, .text = value};
    o->emit(o->ctx, &it);
}

static void num(struct out *o, const char *name, uint64_t value)
{
    struct nic_item it = {.group = o->group, .name = name, .num = value};
    o->emit(o->ctx, &it);
}

/* Names of the offload bits set in mask, comma-separated ("none" if 0). */
static void offloads(struct out *o, const char *name, uint64_t mask, const char *(*bit_name)(uint64_t))
{
    char s[2048] = "";
    size_t used = 0;
    for (int b = 0; b < 64; b++) {
        uint64_t bit = UINT64_C(1) << b;
        if (!(mask & bit) || used >= sizeof(s))
            continue;
        used += (size_t)snprintf(s + used, sizeof(s) - used, "%s%s", used ? "," : "", bit_name(bit));
    }
    text(o, name, mask ? s : "none");
}

static void describe_port(struct out *o, const struct dpdk_nic *n)
{
    struct rte_eth_dev_info info;
    char mac[24];
    const uint8_t *m = n->mac.addr_bytes;
    snprintf(mac, sizeof(mac), "%02x:%02x:%02x:%02x:%02x:%02x", m[0], m[1], m[2], m[3], m[4], m[5]);
    o->group = "port";
    num(o, "port_id", n->port);
    text(o, "name", n->name);
    text(o, "mac", mac);
    uint16_t mtu = 0;
    if (rte_eth_dev_get_mtu(n->port, &mtu) == 0)
        num(o, "mtu", mtu);
    num(o, "socket", (uint64_t)(int64_t)rte_eth_dev_socket_id(n->port));
    int promisc = rte_eth_promiscuous_get(n->port);
    if (promisc >= 0)
        num(o, "promiscuous", (uint64_t)promisc);
    if (rte_eth_dev_info_get(n->port, &info) != 0)
        return;
    text(o, "driver", info.driver_name != NULL ? info.driver_name : "?");
    num(o, "max_rx_queues", info.max_rx_queues);
    num(o, "max_tx_queues", info.max_tx_queues);
    num(o, "max_rx_pktlen", info.max_rx_pktlen);
    o->group = "offloads";
    offloads(o, "rx_capable", info.rx_offload_capa, rte_eth_dev_rx_offload_name);
    offloads(o, "tx_capable", info.tx_offload_capa, rte_eth_dev_tx_offload_name);
    offloads(o, "rx_enabled", n->rx_offloads, rte_eth_dev_rx_offload_name);
    offloads(o, "tx_enabled", n->tx_offloads, rte_eth_dev_tx_offload_name);
}

static void describe_link(struct out *o, const struct dpdk_nic *n)
{
    struct rte_eth_link link;
    o->group = "link";
    if (rte_eth_link_get_nowait(n->port, &link) != 0)
        return;
    /* A port that is not started (a memif client still looking for its
     * server) is down, whatever the driver left in its link. */
    bool up = link.link_status == RTE_ETH_LINK_UP && __atomic_load_n(&n->started, __ATOMIC_ACQUIRE);
    text(o, "status", up ? "up" : "down");
    if (link.link_speed == RTE_ETH_SPEED_NUM_UNKNOWN)
        text(o, "speed_mbps", "unknown");
    else
        num(o, "speed_mbps", link.link_speed);
    text(o, "duplex", link.link_duplex == RTE_ETH_LINK_FULL_DUPLEX ? "full" : "half");
    text(o, "autoneg", link.link_autoneg == RTE_ETH_LINK_AUTONEG ? "on" : "off");
    memif_port_describe(n, o->emit, o->ctx);
}

/* Item "q<i>_<what>". */
static void qnum(struct out *o, unsigned i, const char *what, uint64_t value)
{
    char name[64];
    snprintf(name, sizeof(name), "q%u_%s", i, what);
    num(o, name, value);
}

static const char *steer_kind(enum nic_steer_kind k)
{
    switch (k) {
    case NIC_STEER_ONE:
        return "one-queue";
    case NIC_STEER_TOEPLITZ:
        return "rss-toeplitz";
    case NIC_STEER_OPAQUE:
    default:
        return "port-hash";
    }
}

/* The port's queues: sizes, how flows reach them, and per queue ("qN_"
 * items) what this lstack counted, the port's own per-queue counters and
 * the queue's pool. Another queue's counters are read while its poller
 * runs: each number is a whole 64-bit load, the set of them a snapshot
 * of no single instant. */
static void describe_queues(struct out *o, const struct dpdk_nic *n)
{
    struct rte_eth_rxq_info rxq;
    struct rte_eth_txq_info txq;
    const struct dpdk_queue_set *set = n->set;
    o->group = "queues";
    num(o, "rx_queues", set->nb);
    num(o, "tx_queues", set->nb);
    num(o, "this_queue", n->queue);
    if (rte_eth_rx_queue_info_get(n->port, n->queue, &rxq) == 0)
        num(o, "rx_desc", rxq.nb_desc);
    if (rte_eth_tx_queue_info_get(n->port, n->queue, &txq) == 0)
        num(o, "tx_desc", txq.nb_desc);
    num(o, "rx_burst", n->burst);
    num(o, "tx_batch", NIC_TX_BATCH);
    text(o, "steering", steer_kind(set->steer.kind));
    if (set->steer.kind == NIC_STEER_TOEPLITZ) {
        num(o, "rss_key_len", set->steer.key_len);
        num(o, "reta_size", set->steer.reta_size);
    }
    struct rte_eth_stats es;
    bool have_es = rte_eth_stats_get(n->port, &es) == 0;
    for (unsigned i = 0; i < set->nb; i++) {
        const struct dpdk_nic *q = set->q[i];
        qnum(o, i, "rx_packets", __atomic_load_n(&q->st.rx_packets, __ATOMIC_RELAXED));
        qnum(o, i, "rx_bytes", __atomic_load_n(&q->st.rx_bytes, __ATOMIC_RELAXED));
        qnum(o, i, "tx_packets", __atomic_load_n(&q->st.tx_packets, __ATOMIC_RELAXED));
        qnum(o, i, "tx_bytes", __atomic_load_n(&q->st.tx_bytes, __ATOMIC_RELAXED));
        qnum(o, i, "drop_tx_full", __atomic_load_n(&q->st.drop_tx_full, __ATOMIC_RELAXED));
        qnum(o, i, "drop_tx_nombuf", __atomic_load_n(&q->st.drop_tx_nombuf, __ATOMIC_RELAXED));
        if (have_es && i < RTE_ETHDEV_QUEUE_STAT_CNTRS) {
            qnum(o, i, "port_ipackets", es.q_ipackets[i]);
            qnum(o, i, "port_opackets", es.q_opackets[i]);
            qnum(o, i, "port_errors", es.q_errors[i]);
        }
        qnum(o, i, "node", (uint64_t)(int64_t)q->node);
        qnum(o, i, "pool_free", rte_mempool_avail_count(q->pool));
        qnum(o, i, "pool_size", q->pool->size);
    }
}

static void describe_stats(struct out *o, const struct dpdk_nic *n)
{
    struct rte_eth_stats st;
    o->group = "stats";
    if (rte_eth_stats_get(n->port, &st) == 0) {
        num(o, "ipackets", st.ipackets);
        num(o, "opackets", st.opackets);
        num(o, "ibytes", st.ibytes);
        num(o, "obytes", st.obytes);
        num(o, "imissed", st.imissed);
        num(o, "ierrors", st.ierrors);
        num(o, "oerrors", st.oerrors);
        num(o, "rx_nombuf", st.rx_nombuf);
    }
    o->group = "xstats";
    int count = rte_eth_xstats_get_names(n->port, NULL, 0);
    if (count <= 0)
        return;
    struct rte_eth_xstat_name *names = calloc((size_t)count, sizeof(*names));
    struct rte_eth_xstat *vals = calloc((size_t)count, sizeof(*vals));
    if (names != NULL && vals != NULL && rte_eth_xstats_get_names(n->port, names, (unsigned)count) == count) {
        int got = rte_eth_xstats_get(n->port, vals, (unsigned)count);
        for (int i = 0; i < got && i < count; i++)
            if (vals[i].id < (uint64_t)count)
                num(o, names[vals[i].id].name, vals[i].value);
    }
    free(names);
    free(vals);
}

static void describe_pool(struct out *o, const struct dpdk_nic *n)
{
    o->group = "pool"; /* this queue's (each queue's size and free count: "queues") */
    text(o, "name", n->pool->name);
    num(o, "size", n->pool->size);
    num(o, "cache_size", n->pool->cache_size);
    unsigned avail = rte_mempool_avail_count(n->pool);
    num(o, "free", avail);
    num(o, "in_use", rte_mempool_in_use_count(n->pool));
    num(o, "data_room", n->mbuf_data_room);
}

void dpdk_nic_describe(const struct nic *nic, nic_describe_fn emit, void *ctx)
{
    const struct dpdk_nic *n = dpdk_nic_c(nic);
    struct out o = {.emit = emit, .ctx = ctx};
    describe_port(&o, n);
    describe_link(&o, n);
    describe_queues(&o, n);
    describe_stats(&o, n);
    describe_pool(&o, n);
}
