/*
 * frame_filter.h - decide, before lwIP sees it, whether a received Ethernet
 * frame is for this stack.
 *
 * Pure: no DPDK, no lwIP, no state. Any thread.
 * Design: docs/design.md#lstack-filters-frames-before-lwip
 */
#ifndef LSTACK_FRAME_FILTER_H
#define LSTACK_FRAME_FILTER_H

#include <stddef.h>
#include <stdint.h>

/*
 * Owns the rules "what lwIP may see": Ethernet to our MAC or broadcast; ARP
 * for IPv4 over Ethernet; IPv4 with a sane header addressed to us (or a
 * broadcast) carrying ICMP or TCP from an address that can be a peer.
 * A source of our own address or 127/8 must never reach lwIP: its reply
 * would take lwIP's loopback path, which posts to the tcpip thread's
 * mailbox that a raw-API stack never creates, and the process aborts (lstack's
 * own build has no loopback path, LWIP_NETIF_LOOPBACK 0, but such a source
 * is never a peer either). Everything else is dropped and counted by the
 * caller under the returned reason.
 *
 * Checksums: the IPv4 header checksum is checked here (lwIP's own check is
 * off), unless the port already said it is good or bad. With check_tcp set
 * (the stack always sets it: lwIP's own TCP check is off), a TCP segment
 * the port could not vouch for is checked here; a fragment cannot be (its
 * checksum covers the whole datagram): frame_ipv4_fragment tells the
 * caller, which leaves that one to lwIP after reassembly.
 */

enum frame_verdict {
    FRAME_PASS = 0,     /* hand to lwIP */
    FRAME_NOT_OURS,     /* another MAC, another IP, multicast */
    FRAME_MALFORMED,    /* truncated or inconsistent headers */
    FRAME_BAD_CSUM,     /* IPv4 header (or, with check_tcp, TCP) checksum wrong */
    FRAME_UNSUPPORTED,  /* EtherType or IP protocol the stack does not serve */
    FRAME_MARTIAN,      /* IPv4 source that cannot be a peer: ours, 127/8, 0/8,
                           multicast, 240/4, broadcast */
    FRAME_VERDICT_COUNT
};

struct frame_filter {
    uint8_t mac[6];
    uint32_t addr;      /* host_addr, network byte order */
    uint32_t bcast;     /* subnet broadcast, network byte order */
    int check_tcp;      /* lwIP does not check TCP checksums: do it here
                           for segments the port did not check */
};

/* What the port said of a frame's checksums (0: it did not check). */
enum {
    FRAME_HW_IP_GOOD = 1,
    FRAME_HW_IP_BAD = 2,
    FRAME_HW_L4_GOOD = 4,
    FRAME_HW_L4_BAD = 8,
};

/* Build the filter from our MAC and address/mask (network byte order). */
void frame_filter_init(struct frame_filter *f, const uint8_t mac[6], uint32_t addr, uint32_t mask);

/* Classify the frame at data[0..len), with hw the port's FRAME_HW_* flags
 * for it. Reads only within len. */
enum frame_verdict frame_classify_hw(const struct frame_filter *f, const uint8_t *data, size_t len, unsigned hw);

/* frame_classify_hw in two steps, for the stack's round: 1 if the frame
 * is the common case and passes (to our MAC, IPv4 with a 20-byte header,
 * to our own address, not a fragment, TCP with a whole header, every
 * check of the general path made), which the caller may then hand to
 * lwIP's TCP input directly; 0 for anything else, whose verdict is
 * frame_classify_rest's. frame_classify_hw is the one, then the other. */
int frame_common_tcp(const struct frame_filter *f, const uint8_t *data, size_t len, unsigned hw);
enum frame_verdict frame_classify_rest(const struct frame_filter *f, const uint8_t *data, size_t len, unsigned hw);

/* The same for a frame no port checked. */
static inline enum frame_verdict frame_classify(const struct frame_filter *f, const uint8_t *data, size_t len)
{
    return frame_classify_hw(f, data, len, 0);
}

/* 1 if data[0..len), a frame frame_classify_hw passed, carries an IPv4
 * fragment (more fragments follow, or an offset): its TCP checksum, if it
 * is TCP, was not checked here. */
static inline int frame_ipv4_fragment(const uint8_t *data, size_t len)
{
    return len >= 14 + 20 && data[12] == 0x08 && data[13] == 0x00 && ((data[14 + 6] & 0x3f) | data[14 + 7]) != 0;
}

/* Short name of a verdict ("pass", "not_ours", ...). */
const char *frame_verdict_name(enum frame_verdict v);

#endif
