/*
 * raw_tcp.h - TCP/IPv4 segments in Ethernet frames, built and parsed by
 * hand, for unit tests that play a TCP peer lwIP would never be (a SYN
 * with an odd option, a SYN flood, a segment for a TIME_WAIT connection)
 * over the memory port (nic_mem_inject / nic_mem_set_tap).
 *
 * Addresses are in network byte order, ports and numbers in host order.
 * Checksums (IPv4 header, TCP) are computed on build and not checked on
 * parse (lwIP checks what it receives; what it sends is what we test).
 */
#ifndef LSTACK_TEST_RAW_TCP_H
#define LSTACK_TEST_RAW_TCP_H

#include <stddef.h>
#include <stdint.h>
#include <netinet/tcp.h> /* TH_SYN, TH_ACK, ... */

struct raw_seg {
    uint8_t src_mac[6], dst_mac[6];
    uint32_t saddr, daddr;
    uint16_t sport, dport;
    uint32_t seq, ack;
    uint8_t flags;            /* TH_* */
    uint16_t wnd;             /* as on the wire (unscaled) */
    uint16_t mss;             /* MSS option; 0: none */
    int wscale;               /* window scale option (parse only); -1: none */
    const uint8_t *data;      /* payload (parse: points into the frame) */
    uint16_t len;
    /* build only: a SACK-permitted option (RFC 2018; for a SYN), and nsack
     * SACK blocks [sack_l[i], sack_r[i]) (at most RAW_TCP_SACK_MAX) */
    uint8_t sack_perm, nsack;
    uint32_t sack_l[4], sack_r[4];
    /* build only: a window scale option (RFC 7323; for a SYN) of shift
     * ws_shift when ws_on */
    uint8_t ws_on, ws_shift;
};

#define RAW_TCP_SACK_MAX 4

/* Largest frame raw_tcp_build writes for a payload of len bytes. */
#define RAW_TCP_FRAME_MAX(len) (14 + 20 + 60 + (len))

/* Write seg as an Ethernet frame into frame (cap bytes). Returns the frame
 * length, or 0 if it does not fit (or its options exceed 40 bytes). */
size_t raw_tcp_build(uint8_t *frame, size_t cap, const struct raw_seg *seg);

/* Fill seg from frame if it is TCP over IPv4 (options: MSS, window scale).
 * Returns 0,
 * or -1 for anything else (ARP, a truncated header). */
int raw_tcp_parse(const uint8_t *frame, size_t len, struct raw_seg *seg);

#endif
