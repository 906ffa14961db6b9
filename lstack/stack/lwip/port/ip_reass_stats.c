/*
 * ip_reass_stats.c - counters of IPv4 reassembly in this lwIP copy.
 *
 * lwIP's ip4_frag.c bumps them through LSTACK_REASS_COUNT (patch 0006,
 * lwipopts.h); lstack_lwip_reass_stats hands a copy to the stack, with the
 * number of pbufs the waiting datagrams hold (each one a received frame's
 * mbuf: the part of the port's pool that reassembly takes).
 * The bounds themselves are lwIP's, set in lwipopts.h: at most
 * IP_REASS_MAX_PBUFS pbufs wait (a fragment past that evicts the oldest
 * other datagram, or is dropped), and a datagram still incomplete after
 * IP_REASS_MAXAGE seconds is freed.
 * Design: docs/design.md#reassembly-counters-without-lwip_stats
 * The stack's thread only (like all of the copy).
 */
#include "lwip/ip4_frag.h"

#include "lwip_port.h"

uint64_t lstack_reass_fragments, lstack_reass_reassembled, lstack_reass_dropped;
uint64_t lstack_reass_timed_out, lstack_reass_evicted;

/* ip4_frag.c (patch 0006). */
u16_t lstack_ip_reass_pbufs(void);

void lstack_lwip_reass_stats(struct lstack_lwip_reass_stats *out)
{
    *out = (struct lstack_lwip_reass_stats){
        .fragments = lstack_reass_fragments,
        .reassembled = lstack_reass_reassembled,
        .dropped = lstack_reass_dropped,
        .timed_out = lstack_reass_timed_out,
        .evicted = lstack_reass_evicted,
        .pbufs_waiting = lstack_ip_reass_pbufs(),
        .pbufs_max = IP_REASS_MAX_PBUFS,
    };
}
