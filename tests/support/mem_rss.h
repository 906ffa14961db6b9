/*
 * mem_rss.h - a memory port (nic_mem_pair) split into several receive
 * queues that spread flows as an RSS NIC does, so that tests of several
 * stacks on one port need no DPDK and no hardware.
 *
 * Threads: the queues may be used by different threads at once (one
 * thread per queue): a mutex serialises them over the underlying port (a
 * test port, not a fast path). Frames taken from the underlying port for
 * another queue wait in that queue's list (grown with realloc) until it
 * asks.
 * Design: docs/design.md#the-memory-ports-rss-split-is-a-layer-of-its-own
 */
#ifndef LSTACK_NIC_MEM_RSS_H
#define LSTACK_NIC_MEM_RSS_H

#include "mem_nic.h"
#include "nic/steer.h"

/*
 * Each queue is a struct nic: rx_burst returns the frames the NIC would
 * put on that queue (Toeplitz under Microsoft's RSS key over the IPv4/TCP
 * 4-tuple of an unfragmented segment, over the addresses of any other IPv4
 * packet, queue 0 for everything else: ARP), through a 128-entry reta of
 * i % nq. Each queue batches what it sends in buffers of its own and
 * hands the batch to the underlying port at its tx_flush; stats, caps
 * (less TSO: no tx_frame_tso) and pkt_free are the underlying port's. The
 * split is described by a struct nic_steer of kind NIC_STEER_TOEPLITZ, so nic_steer_queue_tcp4 and
 * nic_steer_pick_port predict it exactly.
 */

/* Split `under` (a port of nic_mem_pair, no other user from now on) into
 * nq (1..NIC_STEER_QUEUES_MAX) queues out[0..nq); steer (may be NULL)
 * receives how flows reach them. Returns 0, or -1 (bad nq, out of memory).
 * Close every queue with ops->close; the last close closes `under`. */
int nic_mem_rss_split(struct nic *under, unsigned nq, struct nic **out, struct nic_steer *steer);

/* Microsoft's 40-byte RSS verification key (the one mem_rss uses). */
extern const uint8_t nic_mem_rss_key[40];

#endif
