/*
 * nic_queues.h - a DPDK port opened with one rx/tx queue pair per stack:
 * each queue is a struct nic of its own, with the ops of
 * nic.h on that queue, its own mbuf pool on the NUMA node of its stack's
 * CPU, its own tx batch and counters; the port spreads received flows
 * over the queues (RSS where it has it, else its own way: nic/steer.h).
 *
 * No DPDK or lwIP type crosses this header. The entry points are exported
 * by liblstack_dpdk.so (the preload finds them with dlsym).
 */
#ifndef LSTACK_NIC_QUEUES_H
#define LSTACK_NIC_QUEUES_H

#include <sched.h>

#include "nic/nic.h"
#include "nic/steer.h"

/*
 * How each test-bed port gets several queues (set in dpdk_args):
 *   net_af_packet  qpairs=N: N packet sockets in one fanout group
 *                  (PACKET_FANOUT_HASH: the kernel's flow hash; opaque)
 *   net_af_xdp     queue_count=N, and the interface must have N channels
 *                  (`ethtool -L IF combined N`; veth has them since Linux
 *                  5.13): on a veth the queue is the one the sending
 *                  kernel chose (opaque)
 *   net_tap        queues follow the port's configuration (the kernel's tun
 *                  picks the queue; opaque)
 *   a NIC with RSS the Toeplitz hash over the key and reta read back from
 *                  the port (NIC_STEER_TOEPLITZ: steerable)
 *   net_memif      one queue pair per port in lstack (refused above 1)
 */

struct nic_queues_params {
    struct nic_params port;   /* as for nic_dpdk_open; nb_mbufs and cache_size are
                                 per queue (each queue has its own pool) */
    unsigned nb_queues;       /* 1..NIC_STEER_QUEUES_MAX: one per stack */
    int cpu[NIC_STEER_QUEUES_MAX]; /* queue i's stack's CPU: its pool and rings go on
                                      that CPU's NUMA node; -1: the port's node */
};

/* Open, configure and start the port chosen by p->port with p->nb_queues
 * rx/tx queue pairs, RSS over IPv4/TCP (and IPv4) where the port reports
 * it and there is more than one queue. out[i] (i < nb_queues) is queue i:
 * rx_burst/tx_frame/tx_flush/get_stats act on that queue only (get_stats'
 * port_imissed and port_rx_nombuf are the port's, the same in every
 * queue); pkt_free of any queue frees any frame of the port. Each out[i]
 * belongs to one thread at a time (its stack's). steer (may be NULL)
 * receives how flows reach the queues (nic/steer.h). Close every queue with
 * ops->close, after every queue's poller has stopped; the port stops and
 * the pools go at the last close. Returns 0, or -1 with a reason in err
 * (too many queues for the port, which devarg gives it more, no memory on
 * a node...). Any thread (after nic_eal_init); nic_dpdk_open(p) is this
 * with one queue. */
NIC_DPDK_EXPORT int nic_dpdk_open_queues(const struct nic_queues_params *p, struct nic **out,
                                         struct nic_steer *steer, char *err, size_t errlen);

/* Make the calling thread (a stack thread that EAL did not start) an EAL
 * thread, so that mempool operations use a per-thread cache (without one,
 * every mbuf allocation and free goes to the pool's shared ring). Call at
 * the start of each stack thread, nic_thread_unregister before it ends.
 * Returns 0, or -1 with a reason in err (no free lcore id: RTE_MAX_LCORE
 * reached). */
NIC_DPDK_EXPORT int nic_thread_register(char *err, size_t errlen);
NIC_DPDK_EXPORT void nic_thread_unregister(void);

/* The NUMA node of CPU cpu (libnuma), -1 if unknown (no NUMA support, a
 * CPU that does not exist). Any thread. */
NIC_DPDK_EXPORT int nic_cpu_node(int cpu);

/* The CPUs an application thread served by the stack on CPU stack_cpu may
 * be bound to under app_bind_numa = 1 (Gazelle's meaning): every CPU of
 * stack_cpu's NUMA node, less those in exclude (app_exclude_cpus; NULL:
 * none). Fills out and returns how many; -EINVAL when stack_cpu's node is
 * unknown (no NUMA support, no such CPU), -ENOENT when exclude leaves none
 * (a configuration error to report, not a set to bind to). Binding is the
 * caller's (pthread_setaffinity_np on the application thread). Any thread. */
NIC_DPDK_EXPORT int nic_app_cpus(int stack_cpu, const cpu_set_t *exclude, cpu_set_t *out);

#endif
