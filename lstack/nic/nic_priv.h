/*
 * nic_priv.h - struct dpdk_nic, shared by the DPDK-side files (port.c, io.c).
 * Includes DPDK headers: never include from lwIP-side files.
 */
#ifndef LSTACK_NIC_PRIV_H
#define LSTACK_NIC_PRIV_H

#include <stdbool.h>

#include <rte_ethdev.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>

#include "nic/nic.h"

#define NIC_TX_BATCH 64
#define NIC_MAX_BURST 512

extern const struct nic_ops dpdk_nic_ops;

/* port.c */
void dpdk_nic_close(struct nic *n);
void dpdk_nic_mac(const struct nic *n, uint8_t mac[6]);
const char *dpdk_nic_name(const struct nic *n);

/* pool.c: the port's mbuf pool of n mbufs with priv bytes of private
 * area each; dense: one virtually contiguous area with no gaps (for
 * net_af_xdp, see pool.c), else objects never straddle a page. NULL with
 * rte_errno set. */
struct rte_mempool *nic_pool_create(const char *name, unsigned n, unsigned cache, uint16_t priv, int socket,
                                    bool dense);
/* pool.c: 0 if every chunk of mp lies within populated_size x object size
 * bytes of its first chunk's start (what net_af_xdp registers as its
 * umem); else -1 with the reason in err. */
int nic_pool_check_umem(const struct rte_mempool *mp, char *err, size_t errlen);

/* describe.c: the "describe" op (stackctl show nic). */
void dpdk_nic_describe(const struct nic *n, nic_describe_fn emit, void *ctx);

static inline struct dpdk_nic *dpdk_nic(struct nic *n)
{
    return (struct dpdk_nic *)n;
}

static inline const struct dpdk_nic *dpdk_nic_c(const struct nic *n)
{
    return (const struct dpdk_nic *)n;
}

struct dpdk_nic {
    struct nic base;          /* first: ops */
    uint16_t port;
    uint16_t burst;
    uint16_t mbuf_data_room;  /* bytes a single mbuf can carry */
    struct rte_mempool *pool;
    struct rte_ether_addr mac;
    char name[RTE_ETH_NAME_MAX_LEN];

    uint16_t tx_count;
    struct rte_mbuf *tx_batch[NIC_TX_BATCH];
    uint16_t tx_len[NIC_TX_BATCH]; /* lengths: the PMD may free a sent mbuf at once */

    struct nic_stats st;      /* pool fields filled on demand */
    uint64_t rx_offloads, tx_offloads; /* enabled at configure time (describe.c) */
    uint32_t tso_frame_max;   /* with TSO: the longest frame, in at most NIC_TSO_IOV_MAX mbufs */
    uint16_t tso_mss_max;     /* with TSO: the largest MSS the PMD cuts by (0: any) */
};

#endif
