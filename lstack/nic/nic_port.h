/*
 * nic_port.h - what a process that drives a port itself beside nic_ops
 * (ltran: bursts straight on the port, its pool shared with other
 * processes) reads of a port nic_dpdk_open opened. DPDK side: DPDK types
 * cross this header; never include it from lwIP-side files.
 */
#ifndef LSTACK_NIC_PORT_H
#define LSTACK_NIC_PORT_H

#include <stdint.h>

#include <rte_mempool.h>

#include "nic/nic.h"

struct nic_port_info {
    uint16_t port;              /* DPDK's port id (queue 0 is n's) */
    struct rte_mempool *pool;   /* n's mbuf pool */
    uint16_t data_room;         /* bytes one of its mbufs carries */
    uint8_t mac[6];
};

/* n: a port of nic_dpdk_open. Any thread. */
void nic_dpdk_port_info(const struct nic *n, struct nic_port_info *out);

#endif
