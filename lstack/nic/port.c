/*
 * port.c - open one DPDK port for a stack: choose it, size its mbuf pool,
 * configure one rx and one tx queue, start it; and close it again.
 *
 * Owns: port selection (by MAC, or the only port), the mbuf pool's place
 * (its layout is pool.c's) and the queue set-up. Frame I/O is in io.c.
 * Rejected: one pool per queue (a stack has one rx/tx queue pair) and
 * allocating the pool lazily (a missing hugepage reservation must fail at
 * start-up with a clear message, not at the first burst of traffic).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_lcore.h>

#include "nic/nic_priv.h"

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

static int setup_queues(struct dpdk_nic *n, const struct nic_params *p, int socket, char *err, size_t errlen)
{
    struct rte_eth_conf conf;
    memset(&conf, 0, sizeof(conf));
    /* Checksums go to the port where it can do both IPv4 and TCP (real
     * NICs do; af_packet and af_xdp cannot): the stack then leaves them to
     * it (nic_caps). */
    struct rte_eth_dev_info info;
    if (rte_eth_dev_info_get(n->port, &info) == 0) {
        const uint64_t rx = RTE_ETH_RX_OFFLOAD_IPV4_CKSUM | RTE_ETH_RX_OFFLOAD_TCP_CKSUM;
        const uint64_t tx = RTE_ETH_TX_OFFLOAD_IPV4_CKSUM | RTE_ETH_TX_OFFLOAD_TCP_CKSUM;
        if ((info.rx_offload_capa & rx) == rx)
            conf.rxmode.offloads |= rx;
        if ((info.tx_offload_capa & tx) == tx)
            conf.txmode.offloads |= tx;
        tso_setup(n, &info, &conf);
    }
    int rc = rte_eth_dev_configure(n->port, 1, 1, &conf);
    if (rc != 0) {
        snprintf(err, errlen, "port %u: configure failed: %s", n->port, rte_strerror(-rc));
        return -1;
    }
    n->rx_offloads = conf.rxmode.offloads; /* for stackctl show nic */
    n->tx_offloads = conf.txmode.offloads;
    uint16_t rxd = p->rx_desc, txd = p->tx_desc;
    rc = rte_eth_dev_adjust_nb_rx_tx_desc(n->port, &rxd, &txd);
    if (rc != 0) {
        snprintf(err, errlen, "port %u: queue sizes rx %u tx %u refused: %s", n->port, p->rx_desc,
                 p->tx_desc, rte_strerror(-rc));
        return -1;
    }
    rc = rte_eth_rx_queue_setup(n->port, 0, rxd, (unsigned)socket, NULL, n->pool);
    if (rc != 0) {
        snprintf(err, errlen, "port %u: rx queue (%u descriptors) failed: %s", n->port, rxd,
                 rte_strerror(-rc));
        return -1;
    }
    rc = rte_eth_tx_queue_setup(n->port, 0, txd, (unsigned)socket, NULL);
    if (rc != 0) {
        snprintf(err, errlen, "port %u: tx queue (%u descriptors) failed: %s", n->port, txd,
                 rte_strerror(-rc));
        return -1;
    }
    return 0;
}

struct nic *nic_dpdk_open(const struct nic_params *p, char *err, size_t errlen)
{
    if (p->burst == 0 || p->burst > NIC_MAX_BURST) {
        snprintf(err, errlen, "rx burst %u outside 1..%u", p->burst, NIC_MAX_BURST);
        return NULL;
    }
    struct dpdk_nic *n = calloc(1, sizeof(*n));
    if (n == NULL) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    if (choose_port(p, &n->port, err, errlen) != 0)
        goto fail;
    n->burst = p->burst;
    rte_eth_macaddr_get(n->port, &n->mac);
    rte_eth_dev_get_name_by_port(n->port, n->name);

    int socket = rte_eth_dev_socket_id(n->port);
    if (socket < 0)
        socket = (int)rte_socket_id();
    char pool_name[RTE_MEMPOOL_NAMESIZE];
    snprintf(pool_name, sizeof(pool_name), "lstack_mbuf_%u", n->port);
    uint16_t priv = (uint16_t)RTE_ALIGN_CEIL(p->priv_size, RTE_MBUF_PRIV_ALIGN);
    /* net_af_xdp maps the pool into the kernel as one umem: see pool.c. */
    struct rte_eth_dev_info info;
    bool af_xdp = rte_eth_dev_info_get(n->port, &info) == 0 && info.driver_name != NULL &&
                  strcmp(info.driver_name, "net_af_xdp") == 0;
    n->pool = nic_pool_create(pool_name, p->nb_mbufs, p->cache_size, priv, socket, af_xdp);
    if (n->pool == NULL) {
        unsigned long mb = (unsigned long)p->nb_mbufs *
                           (sizeof(struct rte_mbuf) + priv + RTE_MBUF_DEFAULT_BUF_SIZE) >> 20;
        snprintf(err, errlen,
                 "cannot allocate %u mbufs (about %lu MB of hugepages on socket %d): %s; "
                 "reserve more hugepages or lower tcp_conn_count x mbuf_count_per_conn",
                 p->nb_mbufs, mb, socket, rte_strerror(rte_errno));
        goto fail;
    }
    if (af_xdp && nic_pool_check_umem(n->pool, err, errlen) != 0)
        goto fail;
    n->mbuf_data_room = (uint16_t)(rte_pktmbuf_data_room_size(n->pool) - RTE_PKTMBUF_HEADROOM);
    if (setup_queues(n, p, socket, err, errlen) != 0)
        goto fail;
    if (memif_port_is(n->port) && memif_port_open(n, err, errlen) != 0)
        goto fail;
    int rc = rte_eth_dev_start(n->port);
    if (rc == 0) {
        n->started = 1;
    } else if (!(n->memif && memif_port_start_failed(n, rc))) {
        snprintf(err, errlen, "port %u: start failed: %s", n->port, rte_strerror(-rc));
        goto fail;
    }
    if (n->memif)
        memif_port_wait_link(n);
    if (n->memif && memif_port_watch(n, err, errlen) != 0) {
        if (n->started)
            rte_eth_dev_stop(n->port);
        goto fail;
    }
    n->st.mbuf_total = p->nb_mbufs;
    n->base.ops = &dpdk_nic_ops;
    return &n->base;
fail:
    memif_port_release(n);
    if (n->pool != NULL)
        rte_mempool_free(n->pool);
    free(n);
    return NULL;
}

void dpdk_nic_close(struct nic *nic)
{
    struct dpdk_nic *n = dpdk_nic(nic);
    memif_port_close(n); /* no reconnect from now on */
    nic->ops->tx_flush(nic);
    if (n->started)
        rte_eth_dev_stop(n->port);
    rte_eth_dev_close(n->port);
    memif_port_release(n);
    rte_mempool_free(n->pool);
    free(n);
}

void dpdk_nic_mac(const struct nic *n, uint8_t mac[6])
{
    memcpy(mac, dpdk_nic_c(n)->mac.addr_bytes, 6);
}

const char *dpdk_nic_name(const struct nic *n)
{
    return dpdk_nic_c(n)->name;
}
