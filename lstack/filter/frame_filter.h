/*
 * frame_filter.h - decide, before lwIP sees it, whether a received Ethernet
 * frame is for this stack.
 *
 * Owns the rules "what lwIP may see": Ethernet to our MAC or broadcast; ARP
 * for IPv4 over Ethernet; IPv4 with a sane header addressed to us (or a
 * broadcast) carrying ICMP or TCP from an address that can be a peer.
 * A source of our own address or 127/8 must never reach lwIP: its reply
 * would take lwIP's loopback path, which posts to the tcpip thread's
 * mailbox that a raw-API stack never creates, and the process aborts. Everything else is dropped and counted by the caller under the
 * returned reason. Nothing is ever forwarded: the Debian lwIP is built with
 * IP_FORWARD, so frames not for us must never reach it.
 *
 * Pure: no DPDK, no lwIP, no state. Any thread.
 * Rejected: letting lwIP drop what is not ours (it would route it, and its
 * drops are not counted with LWIP_STATS off in the Debian build).
 */
#ifndef LSTACK_FRAME_FILTER_H
#define LSTACK_FRAME_FILTER_H

#include <stddef.h>
#include <stdint.h>

enum frame_verdict {
    FRAME_PASS = 0,     /* hand to lwIP */
    FRAME_NOT_OURS,     /* another MAC, another IP, multicast */
    FRAME_MALFORMED,    /* truncated or inconsistent headers */
    FRAME_BAD_CSUM,     /* IPv4 header checksum wrong */
    FRAME_UNSUPPORTED,  /* EtherType or IP protocol the stack does not serve */
    FRAME_MARTIAN,      /* IPv4 source that cannot be a peer: ours, 127/8, 0/8,
                           multicast, 240/4, broadcast */
    FRAME_VERDICT_COUNT
};

struct frame_filter {
    uint8_t mac[6];
    uint32_t addr;      /* host_addr, network byte order */
    uint32_t bcast;     /* subnet broadcast, network byte order */
};

/* Build the filter from our MAC and address/mask (network byte order). */
void frame_filter_init(struct frame_filter *f, const uint8_t mac[6], uint32_t addr, uint32_t mask);

/* Classify the frame at data[0..len). Reads only within len. */
enum frame_verdict frame_classify(const struct frame_filter *f, const uint8_t *data, size_t len);

/* Short name of a verdict ("pass", "not_ours", ...). */
const char *frame_verdict_name(enum frame_verdict v);

#endif
