/*
 * port_rss.c - RSS on a port opened with several queues, and how flows
 * reach its queues (struct nic_steer, nic/steer.h).
 * Design: docs/design.md#the-ports-own-rss-table-is-read-back-not-written
 */
#include <string.h>

#include <rte_ethdev.h>

#include "nic/nic_priv.h"

/*
 * Configure: with more than one queue and a port that reports IPv4/TCP in
 * flow_type_rss_offloads, RSS mode with the IPv4, IPv4/TCP and IPv4
 * fragment hash types it has, under the port's own key (none is forced:
 * other users of the port may rely on it). A port that reports no RSS
 * (af_packet, af_xdp, memif) gets no mq_mode: it spreads frames over its
 * queues by its own means, or not at all.
 *
 * Steer: after the start, read the key and the redirection table back from
 * the port; both known and IPv4/TCP hashed: NIC_STEER_TOEPLITZ; otherwise
 * NIC_STEER_OPAQUE (several queues) or NIC_STEER_ONE (one). DPDK 22.11's
 * rss_conf has no hash-function field: the port's default function is
 * taken to be Toeplitz, which is every RSS NIC's default (the symmetric and
 * XOR variants are opt-in through rte_flow, which lstack does not use).
 */

#define RSS_TYPES (RTE_ETH_RSS_IPV4 | RTE_ETH_RSS_FRAG_IPV4 | RTE_ETH_RSS_NONFRAG_IPV4_TCP)

void port_rss_configure(uint16_t port, const struct rte_eth_dev_info *info, unsigned nb, struct rte_eth_conf *conf)
{
    (void)port;
    if (nb < 2 || !(info->flow_type_rss_offloads & RTE_ETH_RSS_NONFRAG_IPV4_TCP))
        return;
    conf->rxmode.mq_mode = RTE_ETH_MQ_RX_RSS;
    conf->rx_adv_conf.rss_conf.rss_key = NULL; /* the port's key */
    conf->rx_adv_conf.rss_conf.rss_hf = info->flow_type_rss_offloads & RSS_TYPES;
}

/* The port's key into s (0), or -1. */
static int read_key(uint16_t port, const struct rte_eth_dev_info *info, struct nic_steer *s)
{
    if (info->hash_key_size < 16 || info->hash_key_size > NIC_STEER_KEY_MAX)
        return -1;
    uint8_t key[NIC_STEER_KEY_MAX];
    struct rte_eth_rss_conf rc = {.rss_key = key, .rss_key_len = info->hash_key_size};
    if (rte_eth_dev_rss_hash_conf_get(port, &rc) != 0 || !(rc.rss_hf & RTE_ETH_RSS_NONFRAG_IPV4_TCP))
        return -1;
    memcpy(s->key, key, info->hash_key_size);
    s->key_len = info->hash_key_size;
    return 0;
}

/* The port's redirection table into s (0), or -1. */
static int read_reta(uint16_t port, const struct rte_eth_dev_info *info, struct nic_steer *s)
{
    unsigned size = info->reta_size;
    if (size == 0 || size > NIC_STEER_RETA_MAX || size % RTE_ETH_RETA_GROUP_SIZE != 0)
        return -1;
    struct rte_eth_rss_reta_entry64 reta[NIC_STEER_RETA_MAX / RTE_ETH_RETA_GROUP_SIZE];
    memset(reta, 0, sizeof(reta));
    for (unsigned g = 0; g < size / RTE_ETH_RETA_GROUP_SIZE; g++)
        reta[g].mask = UINT64_MAX;
    if (rte_eth_dev_rss_reta_query(port, reta, (uint16_t)size) != 0)
        return -1;
    for (unsigned i = 0; i < size; i++)
        s->reta[i] = reta[i / RTE_ETH_RETA_GROUP_SIZE].reta[i % RTE_ETH_RETA_GROUP_SIZE];
    s->reta_size = (uint16_t)size;
    return 0;
}

void port_rss_steer(uint16_t port, const struct rte_eth_dev_info *info, unsigned nb, const struct rte_eth_conf *conf,
                    struct nic_steer *steer)
{
    memset(steer, 0, sizeof(*steer));
    steer->nb_queues = (uint16_t)nb;
    steer->kind = nb == 1 ? NIC_STEER_ONE : NIC_STEER_OPAQUE;
    if (nb < 2 || conf->rxmode.mq_mode != RTE_ETH_MQ_RX_RSS)
        return;
    struct nic_steer s = *steer;
    s.kind = NIC_STEER_TOEPLITZ;
    if (read_key(port, info, &s) == 0 && read_reta(port, info, &s) == 0 && nic_steer_check(&s) == 0)
        *steer = s;
}
