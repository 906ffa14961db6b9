/*
 * frame_flow.h - what a received frame says about which stack it belongs
 * to, when a process runs several stacks on one port: the
 * IPv4/TCP 4-tuple of a segment (the stack whose connection table holds it
 * owns the frame), or that the frame is an ARP reply (every stack learns
 * it: the reply to stack B's request may reach stack A's queue).
 *
 * Pure: no DPDK, no lwIP, no state. Any thread. It does not check what the
 * frame filter checks (addresses, checksums): a frame it routes is still
 * filtered by the stack that takes it.
 * Design: docs/design.md#flow-ownership-is-a-separate-pure-lookup
 */
#ifndef LSTACK_FRAME_FLOW_H
#define LSTACK_FRAME_FLOW_H

#include <stddef.h>
#include <stdint.h>

enum frame_flow_kind {
    FRAME_FLOW_OTHER = 0, /* anything else: the stack that received it keeps it */
    FRAME_FLOW_TCP4,      /* an IPv4 TCP segment, not a fragment: tuple filled */
    FRAME_FLOW_ARP_REPLY, /* ARP over Ethernet/IPv4, opcode 2 (reply) */
};

/* A segment's addresses as the receiving stack sees them: local is the
 * destination. Addresses in network byte order (as on the wire); ports in
 * host order (as lwIP keeps them in its PCBs). */
struct frame_flow_tuple {
    uint32_t local_ip, remote_ip;
    uint16_t local_port, remote_port;
};

/* Classify the Ethernet frame data[0..len) (VLAN tags are not parsed: the
 * stack takes untagged frames). For FRAME_FLOW_TCP4 fills *t; a truncated
 * header, IPv4 options that run past the frame, or a fragment (MF set or a
 * fragment offset: only the first carries ports, and the stack that
 * reassembles is the one that received them) give FRAME_FLOW_OTHER. */
enum frame_flow_kind frame_flow_classify(const uint8_t *data, size_t len, struct frame_flow_tuple *t);

#endif
