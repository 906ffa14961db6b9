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
#include "nic/quiesce.h"
#include "nic/steer.h"

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

struct dpdk_nic;

/* The queues of one port opened by nic_dpdk_open_queues (port.c): each is
 * a struct dpdk_nic; the set frees them all, and their pools, when the
 * last is closed (a started port's rx queues still hold their pools). */
struct dpdk_queue_set {
    unsigned nb;              /* queues */
    bool keep_pools;          /* nic_params.keep_pool: the pools outlive the close */
    unsigned open;            /* atomic: queues not closed yet */
    struct nic_steer steer;   /* how flows reach the queues (steer.h) */
    struct dpdk_nic *q[NIC_STEER_QUEUES_MAX];
};

/* port_rss.c: the RSS configuration for nb queues where the port has it
 * (sets conf's mq_mode and rss_conf); after the start, how flows reach the
 * queues (steer). */
void port_rss_configure(uint16_t port, const struct rte_eth_dev_info *info, unsigned nb, struct rte_eth_conf *conf);
void port_rss_steer(uint16_t port, const struct rte_eth_dev_info *info, unsigned nb, const struct rte_eth_conf *conf,
                    struct nic_steer *steer);

/* memif_port.c: a net_memif port's guard, link watch and reconnects.
 * memif_port_is: the port's driver is net_memif. memif_port_open: guard
 * its bursts (before the port starts); -1 with err set. A failed
 * rte_eth_dev_start (rc < 0) of a memif port: memif_port_start_failed
 * says whether to carry on with the link down (a client whose server is not
 * there yet) and says so on stderr. memif_port_wait_link: a client that
 * reached its server waits (2 s at most) for the link to come up before
 * the stack sends anything. memif_port_watch: start the link watch
 * (after the start); -1 with err set. memif_port_close: stop the watch
 * (before the port stops); memif_port_shut: stop (if started) and close
 * the port on EAL's interrupt thread, serialised with the driver's own
 * disconnect, and wait for it (10 s at most); 0 once closed, -ETIMEDOUT
 * when the wait ran out (the port is left open: its queues and pools must
 * not be freed; the close stays queued on the interrupt thread, and once it
 * has run there, late(n), if not NULL, frees them there). Closing
 * thread (the last queue's poller, or the opening thread after a failed
 * open). memif_port_shut_pending: a close given up on has not run yet
 * (rte_eal_cleanup must not run: it would close the port off the interrupt
 * thread and unmap memory the queued close uses); any thread.
 * memif_port_release: give the guard back (after it closed).
 * memif_port_describe: the "link" items of a memif port. */
bool memif_port_is(uint16_t port);
int memif_port_open(struct dpdk_nic *n, char *err, size_t errlen);
bool memif_port_start_failed(struct dpdk_nic *n, int rc);
int memif_port_watch(struct dpdk_nic *n, char *err, size_t errlen);
void memif_port_wait_link(struct dpdk_nic *n);
void memif_port_close(struct dpdk_nic *n);
int memif_port_shut(struct dpdk_nic *n, void (*late)(struct dpdk_nic *n));
bool memif_port_shut_pending(void);
void memif_port_release(struct dpdk_nic *n);
void memif_port_describe(const struct dpdk_nic *n, nic_describe_fn emit, void *ctx);

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
    uint16_t queue;           /* the rx/tx queue pair this struct nic drives */
    int node;                 /* NUMA node of its pool */
    struct dpdk_queue_set *set; /* the port's queues (one for nic_dpdk_open) */
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

    /* Bursts run only while started (atomic: a memif client's reconnect
     * stops and starts the port from the interrupt thread). quiesce: NULL
     * but for memif ports (nic/quiesce.h). */
    unsigned started;
    struct nic_quiesce *quiesce;
    bool memif;
    struct {                  /* memif_port.c; written by its alarm unless said */
        bool client;          /* role=client: reconnects */
        bool was_up;
        bool closing;         /* atomic: the alarm stops re-arming */
        uint64_t last_try_ms;
        uint64_t up_events, down_events, reconnects; /* atomic */
        uint64_t tx_dropped;  /* poller: frames dropped while the link was down */
    } link;
};

#endif
