/*
 * port.c - open a DPDK port for the stacks: choose it, give each of its
 * rx/tx queue pairs (one per stack) a struct nic and an mbuf pool on its
 * stack's NUMA node, configure the queues, start it; and close it again.
 *
 * Owns: port selection (by MAC, or the only port), the pools' places
 * (their layout is pool.c's), the queue set-up and the port's lifetime
 * across its queues. Frame I/O is in io.c, RSS in port_rss.c.
 * Design: docs/design.md#one-mbuf-pool-per-queue-made-at-start
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_lcore.h>

#include "nic/nic_port.h"
#include "nic/nic_priv.h"
#include "nic/nic_queues.h"

static void fmt_mac(const uint8_t *m, char *buf, size_t len)
{
    snprintf(buf, len, "%02x:%02x:%02x:%02x:%02x:%02x", m[0], m[1], m[2], m[3], m[4], m[5]);
}

/* Pick the port: the one whose MAC is p->mac, else the only one. */
static int choose_port(const struct nic_params *p, uint16_t *out, char *err, size_t errlen)
{
    uint16_t count = rte_eth_dev_count_avail();
    if (count == 0) {
        snprintf(err, errlen, "no DPDK port: add one to dpdk_args (e.g. --vdev=net_af_packet0,iface=IF, "
                              "or a PCI device bound to vfio-pci)");
        return -1;
    }
    char seen[512] = "";
    size_t used = 0;
    uint16_t port;
    RTE_ETH_FOREACH_DEV(port) {
        struct rte_ether_addr mac;
        if (rte_eth_macaddr_get(port, &mac) != 0)
            continue;
        if (p->has_mac && memcmp(mac.addr_bytes, p->mac, 6) == 0) {
            *out = port;
            return 0;
        }
        char m[24];
        fmt_mac(mac.addr_bytes, m, sizeof(m));
        if (used < sizeof(seen))
            used += (size_t)snprintf(seen + used, sizeof(seen) - used, "%s%u=%s", used ? ", " : "",
                                     port, m);
    }
    if (!p->has_mac) {
        if (count == 1) {
            RTE_ETH_FOREACH_DEV(port) {
                *out = port;
                return 0;
            }
        }
        snprintf(err, errlen, "%u DPDK ports (%s): set 'devices' to the MAC of the one to use", count,
                 seen);
        return -1;
    }
    char want[24];
    fmt_mac(p->mac, want, sizeof(want));
    snprintf(err, errlen, "no DPDK port has the MAC in 'devices' (%s); ports: %s", want, seen);
    return -1;
}

/* TSO where the port cuts TCP frames and takes them as mbuf chains
 * (MULTI_SEGS), with checksum offload on: a TSO frame is up to 64 KiB in
 * 2 KiB mbufs, and each MSS frame cut from it may span two mbufs or more
 * (nb_mtu_seg_max). Sets conf's offloads and n->tso_frame_max. */
static void tso_setup(struct dpdk_nic *n, const struct rte_eth_dev_info *info, struct rte_eth_conf *conf)
{
    const uint64_t tso = RTE_ETH_TX_OFFLOAD_TCP_TSO | RTE_ETH_TX_OFFLOAD_MULTI_SEGS;
    if ((info->tx_offload_capa & tso) != tso || !(conf->txmode.offloads & RTE_ETH_TX_OFFLOAD_TCP_CKSUM))
        return;
    uint16_t mtu = 0;
    if (rte_eth_dev_get_mtu(n->port, &mtu) != 0 || mtu == 0)
        mtu = RTE_ETHER_MTU;
    unsigned room = n->mbuf_data_room;
    unsigned per_mtu = (mtu + RTE_ETHER_HDR_LEN + room - 1) / room + 1;
    unsigned segs = info->tx_desc_lim.nb_seg_max ? info->tx_desc_lim.nb_seg_max : NIC_TSO_IOV_MAX;
    unsigned mtu_segs = info->tx_desc_lim.nb_mtu_seg_max ? info->tx_desc_lim.nb_mtu_seg_max : per_mtu;
    if (segs > NIC_TSO_IOV_MAX)
        segs = NIC_TSO_IOV_MAX;
    if (segs < 2 || mtu_segs < per_mtu)
        return;
    uint32_t max = segs * room;
    n->tso_frame_max = max < 0xffff ? max : 0xffff;
    /* DPDK's tap PMD cuts in software (librte_gso) and refuses a TSO frame
     * whose MSS plus Ethernet, IPv4 and TCP headers exceeds the MTU (the
     * MTU leaves the Ethernet header out): its MSS is 14 bytes short. */
    if (info->driver_name != NULL && strcmp(info->driver_name, "net_tap") == 0)
        n->tso_mss_max = (uint16_t)(mtu - RTE_ETHER_HDR_LEN - 40);
    conf->txmode.offloads |= tso;
}

/* Configure the port for set->nb queue pairs (RSS where it has it and there
 * are several), each queue's rx ring filled from its own pool. */
static int setup_queues(struct dpdk_queue_set *set, const struct nic_params *p, struct rte_eth_conf *conf,
                        const struct rte_eth_dev_info *info, char *err, size_t errlen)
{
    struct dpdk_nic *n = set->q[0];
    memset(conf, 0, sizeof(*conf));
    /* Checksums go to the port where it can do both IPv4 and TCP (real
     * NICs do; af_packet and af_xdp cannot): the stack then leaves them to
     * it (nic_caps). */
    const uint64_t rx = RTE_ETH_RX_OFFLOAD_IPV4_CKSUM | RTE_ETH_RX_OFFLOAD_TCP_CKSUM;
    const uint64_t tx = RTE_ETH_TX_OFFLOAD_IPV4_CKSUM | RTE_ETH_TX_OFFLOAD_TCP_CKSUM;
    if ((info->rx_offload_capa & rx) == rx)
        conf->rxmode.offloads |= rx;
    if ((info->tx_offload_capa & tx) == tx)
        conf->txmode.offloads |= tx;
    tso_setup(n, info, conf);
    port_rss_configure(n->port, info, set->nb, conf);
    int rc = rte_eth_dev_configure(n->port, (uint16_t)set->nb, (uint16_t)set->nb, conf);
    if (rc != 0) {
        snprintf(err, errlen, "port %u: configure (%u queue pairs) failed: %s", n->port, set->nb, rte_strerror(-rc));
        return -1;
    }
    uint16_t rxd = p->rx_desc, txd = p->tx_desc;
    rc = rte_eth_dev_adjust_nb_rx_tx_desc(n->port, &rxd, &txd);
    if (rc != 0) {
        snprintf(err, errlen, "port %u: queue sizes rx %u tx %u refused: %s", n->port, p->rx_desc,
                 p->tx_desc, rte_strerror(-rc));
        return -1;
    }
    for (unsigned i = 0; i < set->nb; i++) {
        struct dpdk_nic *q = set->q[i];
        q->rx_offloads = conf->rxmode.offloads; /* for stackctl show nic */
        q->tx_offloads = conf->txmode.offloads;
        q->tso_frame_max = n->tso_frame_max;
        q->tso_mss_max = n->tso_mss_max;
        rc = rte_eth_rx_queue_setup(n->port, q->queue, rxd, (unsigned)q->node, NULL, q->pool);
        if (rc != 0) {
            snprintf(err, errlen, "port %u: rx queue %u (%u descriptors) failed: %s", n->port, q->queue, rxd,
                     rte_strerror(-rc));
            return -1;
        }
        rc = rte_eth_tx_queue_setup(n->port, q->queue, txd, (unsigned)q->node, NULL);
        if (rc != 0) {
            snprintf(err, errlen, "port %u: tx queue %u (%u descriptors) failed: %s", n->port, q->queue, txd,
                     rte_strerror(-rc));
            return -1;
        }
    }
    return 0;
}

/* Too many queues for the port: say which devarg gives it more. */
static void too_many_queues(const struct rte_eth_dev_info *info, uint16_t port, unsigned nb, char *err,
                            size_t errlen)
{
    const char *drv = info->driver_name != NULL ? info->driver_name : "?";
    const char *hint = "";
    if (strcmp(drv, "net_af_packet") == 0)
        hint = ": add qpairs=N to its --vdev";
    else if (strcmp(drv, "net_af_xdp") == 0)
        hint = ": add queue_count=N to its --vdev and give the interface N channels (ethtool -L IF combined N)";
    else if (strcmp(drv, "net_memif") == 0)
        hint = ": lstack drives one queue pair per memif port";
    snprintf(err, errlen, "port %u (%s) has %u rx and %u tx queues, %u stacks need %u of each%s", port, drv,
             info->max_rx_queues, info->max_tx_queues, nb, nb, hint);
}

/* Queue i's struct nic and its pool, on the node of p->cpu[i]. */
static int open_queue(struct dpdk_queue_set *set, unsigned i, const struct nic_queues_params *p, uint16_t port,
                      bool af_xdp, char *err, size_t errlen)
{
    struct dpdk_nic *n = calloc(1, sizeof(*n));
    if (n == NULL) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    set->q[i] = n;
    n->set = set;
    n->port = port;
    n->queue = (uint16_t)i;
    n->burst = p->port.burst;
    rte_eth_macaddr_get(port, &n->mac);
    rte_eth_dev_get_name_by_port(port, n->name);
    int node = p->cpu[i] >= 0 ? nic_cpu_node(p->cpu[i]) : -1;
    if (node < 0)
        node = rte_eth_dev_socket_id(port);
    if (node < 0)
        node = (int)rte_socket_id();
    n->node = node;
    char pool_name[RTE_MEMPOOL_NAMESIZE];
    if (set->nb == 1)
        snprintf(pool_name, sizeof(pool_name), "lstack_mbuf_%u", port);
    else
        snprintf(pool_name, sizeof(pool_name), "lstack_mbuf_%u_%u", port, (uint8_t)i); /* i < 64 */
    uint16_t priv = (uint16_t)RTE_ALIGN_CEIL(p->port.priv_size, RTE_MBUF_PRIV_ALIGN);
    /* net_af_xdp maps each queue's pool into the kernel as one umem: see pool.c. */
    n->pool = nic_pool_create(pool_name, p->port.nb_mbufs, p->port.cache_size, priv, node, af_xdp);
    if (n->pool == NULL) {
        unsigned long mb = (unsigned long)p->port.nb_mbufs *
                           (sizeof(struct rte_mbuf) + priv + RTE_MBUF_DEFAULT_BUF_SIZE) >> 20;
        snprintf(err, errlen,
                 "cannot allocate %u mbufs for queue %u (about %lu MB of hugepages on socket %d): %s; "
                 "reserve more hugepages or lower tcp_conn_count x mbuf_count_per_conn",
                 p->port.nb_mbufs, i, mb, node, rte_strerror(rte_errno));
        return -1;
    }
    if (af_xdp && nic_pool_check_umem(n->pool, err, errlen) != 0)
        return -1;
    n->mbuf_data_room = (uint16_t)(rte_pktmbuf_data_room_size(n->pool) - RTE_PKTMBUF_HEADROOM);
    n->st.mbuf_total = p->port.nb_mbufs;
    n->base.ops = &dpdk_nic_ops;
    return 0;
}

static void free_set(struct dpdk_queue_set *set)
{
    if (set->nb > 0 && set->q[0] != NULL)
        memif_port_release(set->q[0]);
    for (unsigned i = 0; i < set->nb; i++) {
        if (set->q[i] == NULL)
            continue;
        if (set->q[i]->pool != NULL && !set->keep_pools)
            rte_mempool_free(set->q[i]->pool);
        free(set->q[i]);
    }
    free(set);
}

/* A memif close given up on ran at last (memif_port_shut): its queue set
 * goes. EAL's interrupt thread. */
static void free_set_late(struct dpdk_nic *n)
{
    free_set(n->set);
}

int nic_dpdk_open_queues(const struct nic_queues_params *p, struct nic **out, struct nic_steer *steer, char *err,
                         size_t errlen)
{
    if (p->port.burst == 0 || p->port.burst > NIC_MAX_BURST) {
        snprintf(err, errlen, "rx burst %u outside 1..%u", p->port.burst, NIC_MAX_BURST);
        return -1;
    }
    if (p->nb_queues == 0 || p->nb_queues > NIC_STEER_QUEUES_MAX) {
        snprintf(err, errlen, "%u queues outside 1..%u", p->nb_queues, NIC_STEER_QUEUES_MAX);
        return -1;
    }
    uint16_t port;
    if (choose_port(&p->port, &port, err, errlen) != 0)
        return -1;
    struct rte_eth_dev_info info;
    int rc = rte_eth_dev_info_get(port, &info);
    if (rc != 0) {
        snprintf(err, errlen, "port %u: no device info: %s", port, rte_strerror(-rc));
        return -1;
    }
    if (p->nb_queues > info.max_rx_queues || p->nb_queues > info.max_tx_queues ||
        (p->nb_queues > 1 && memif_port_is(port))) {
        too_many_queues(&info, port, p->nb_queues, err, errlen);
        return -1;
    }
    struct dpdk_queue_set *set = calloc(1, sizeof(*set));
    if (set == NULL) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    set->nb = p->nb_queues;
    bool af_xdp = info.driver_name != NULL && strcmp(info.driver_name, "net_af_xdp") == 0;
    for (unsigned i = 0; i < set->nb; i++)
        if (open_queue(set, i, p, port, af_xdp, err, errlen) != 0)
            goto fail;
    struct dpdk_nic *n = set->q[0];
    struct rte_eth_conf conf;
    if (setup_queues(set, &p->port, &conf, &info, err, errlen) != 0)
        goto fail;
    if (memif_port_is(n->port) && memif_port_open(n, err, errlen) != 0)
        goto fail;
    rc = rte_eth_dev_start(n->port);
    if (rc == 0) {
        for (unsigned i = 0; i < set->nb; i++)
            set->q[i]->started = 1;
    } else if (!(n->memif && memif_port_start_failed(n, rc))) {
        snprintf(err, errlen, "port %u: start failed: %s", n->port, rte_strerror(-rc));
        goto fail;
    }
    if (n->memif)
        memif_port_wait_link(n);
    if (n->memif && memif_port_watch(n, err, errlen) != 0)
        goto fail;
    port_rss_steer(port, &info, set->nb, &conf, &set->steer);
    if (steer != NULL)
        *steer = set->steer;
    set->keep_pools = p->port.keep_pool;
    set->open = set->nb;
    for (unsigned i = 0; i < set->nb; i++)
        out[i] = &set->q[i]->base;
    return 0;
fail:
    /* A memif port (guarded) is stopped, if started, and closed where the
     * driver's own control work runs, as at close: from its start (and a
     * server's from its probe) that work may be under way on the interrupt
     * thread. Left open, with its queues and pools, when that does not
     * finish (memif_port.c), until the queued close runs. */
    if (set->q[0] != NULL && set->q[0]->memif && memif_port_shut(set->q[0], free_set_late) != 0)
        return -1;
    free_set(set);
    return -1;
}

struct nic *nic_dpdk_open(const struct nic_params *p, char *err, size_t errlen)
{
    struct nic_queues_params qp = {.port = *p, .nb_queues = 1, .cpu = {-1}};
    struct nic *n = NULL;
    return nic_dpdk_open_queues(&qp, &n, NULL, err, errlen) == 0 ? n : NULL;
}

/* A queue is closed once its poller is done with it; the port stops, and
 * its queues and their pools go, when the last queue closes (a started
 * port's rx rings still hold mbufs of every queue's pool). */
void dpdk_nic_close(struct nic *nic)
{
    struct dpdk_nic *n = dpdk_nic(nic);
    struct dpdk_queue_set *set = n->set;
    if (set->nb == 1)
        memif_port_close(n); /* no reconnect from now on (a memif port has one queue) */
    nic->ops->tx_flush(nic);
    if (__atomic_sub_fetch(&set->open, 1, __ATOMIC_ACQ_REL) != 0)
        return;
    struct dpdk_nic *first = set->q[0];
    if (first->memif) {
        /* On the interrupt thread, never beside the driver's disconnect
         * (memif_port.c); a port left open keeps its queues and pools
         * until its queued close runs. */
        if (memif_port_shut(first, free_set_late) != 0)
            return;
    } else {
        if (first->started)
            rte_eth_dev_stop(first->port);
        rte_eth_dev_close(first->port);
    }
    free_set(set);
}

void dpdk_nic_mac(const struct nic *n, uint8_t mac[6])
{
    memcpy(mac, dpdk_nic_c(n)->mac.addr_bytes, 6);
}

const char *dpdk_nic_name(const struct nic *n)
{
    return dpdk_nic_c(n)->name;
}

void nic_dpdk_port_info(const struct nic *nic, struct nic_port_info *out)
{
    const struct dpdk_nic *n = dpdk_nic_c(nic);
    *out = (struct nic_port_info){.port = n->port, .pool = n->pool, .data_room = n->mbuf_data_room};
    memcpy(out->mac, n->mac.addr_bytes, 6);
}
