/*
 * stack_priv.h - struct stack, shared by the lwIP-side files of a stack
 * (stack.c: life cycle and poll loop; netif.c: the lwIP netif over a nic).
 * Includes lwIP headers: never include from DPDK-side files.
 */
#ifndef LSTACK_STACK_PRIV_H
#define LSTACK_STACK_PRIV_H

#include "lwip/netif.h"

#include "port/lwip_port.h"
#include "stack/lwip_load.h"
#include "stack/round_acct.h"
#include "stack/stack.h"

#define STACK_ARP_FAST_SLOTS 8u /* a power of two */
#define STACK_RX_FREE_MAX 32u

struct stack {
    struct lwip_api L;         /* this stack's private lwIP */
    struct netif netif;
    struct nic *nic;
    struct frame_filter filter;
    ip4_addr_t gw;
    /* The output fast path's next hops (netif.c netif_ip_output): ARP table
     * indexes by next hop, emptied every second (hop 0: empty). */
    struct stack_arp_fast {
        uint32_t hop;          /* next hop, network byte order */
        uint32_t idx;          /* its lwIP ARP table entry */
    } arp_fast[STACK_ARP_FAST_SLOTS];
    /* Received frames lwIP has freed, given back to the port together
     * (netif.c rx_pbuf_free, stack_rx_free_flush). */
    void *rx_free[STACK_RX_FREE_MAX];
    unsigned rx_free_n;
    unsigned burst;
    struct nic_caps caps;      /* what the port offers: MTU, checksums (netif.c) */
    int index;
    struct stack_stats st;     /* nic part filled on demand */
    struct round_acct round;   /* the poll round in progress */
    uint64_t tx_queued;        /* frames linkoutput put in the tx batch (netif.c) */
    uint64_t tx_counted;       /* ... of those, the ones a round has counted */
    uint32_t max_socks;        /* tcp_conn_count (the room without a layer above) */
    struct lstack_lwip_limits tcp; /* this stack's window and buffer sizes */
    int syn_retries;           /* net.ipv4.tcp_syn_retries, read at start (TCP_SYNCNT's default) */
    int syn_linear_timeouts;   /* net.ipv4.tcp_syn_linear_timeouts, read at start (0: none) */
    /* SYN cookies lwIP may still send in this round (lstack_lwip_conf.cookie_budget):
     * set by each round, full_round_cookies when its burst came back full */
    uint32_t cookie_budget;
    uint32_t full_round_cookies;
    uint16_t port_lo, port_hi; /* the ephemeral port range read at start (net.ipv4.ip_local_port_range) */

    /* The layer above (the sockets of this stack, lstack/sock/): its
     * state, owned by it, and its operations (stack_set_upper). */
    void *upper;
    const struct stack_upper_ops *upper_ops;

    /* the other stacks of the process (stack_peers.c); NULL
     * while this is the only one. */
    struct stack_peers *peers;
};

/* One more frame in the tx batch (linkoutput, under the lock): a relaxed
 * atomic store, as stack_round_owed reads it without the lock. */
static inline void stack_tx_queued(struct stack *s)
{
    __atomic_store_n(&s->tx_queued, s->tx_queued + 1, __ATOMIC_RELAXED);
}

/* netif.c */
/* Add and bring up the lwIP netif over s->nic. Returns 0 or -1 (err). */
int stack_netif_open(struct stack *s, const struct lstack_conf *conf, char *err, size_t errlen);
/* Hand a received frame to lwIP without copying; lwIP owns it afterwards. */
void stack_netif_input(struct stack *s, const struct nic_pkt *pkt);
/* The same for a frame frame_common_tcp passed (IPv4 with a 20-byte
 * header, TCP, not a fragment, to the filter's address): straight to
 * lwIP's TCP input without looking at its headers again; stack_netif_input
 * if the netif is down or its address is not the filter's. */
void stack_netif_input_tcp(struct stack *s, const struct nic_pkt *pkt);
void stack_netif_close(struct stack *s);
/* Give the received frames lwIP freed since the last call back to the
 * port (under the stack's lock, as every lwIP call). */
void stack_rx_free_flush_some(struct stack *s);
static inline void stack_rx_free_flush(struct stack *s)
{
    if (s->rx_free_n != 0)
        stack_rx_free_flush_some(s);
}

/* stack_peers.c (only with several stacks: s->peers != NULL) */
/* Without the lock, by s's owner: move waiting frames to their inboxes,
 * take s's inbox, then (when nothing waits) a NIC burst, into pkts (at
 * most s->burst). Returns how many; the first s->peers->from_inbox of them
 * came through the inbox (they are never handed on again). */
unsigned stack_peers_rx(struct stack *s, struct nic_pkt *pkts);
/* Under the lock, before the filter: hand frames of pkts[0..n) whose
 * connection lives on another stack to that stack, share ARP replies with
 * every stack; compacts pkts to the frames s keeps and returns how many. */
unsigned stack_peers_route(struct stack *s, struct nic_pkt *pkts, unsigned n);
/* The group's counters of s into st (zeros without a group). */
void stack_peers_stats(const struct stack *s, struct stack_stats *st);

#endif
