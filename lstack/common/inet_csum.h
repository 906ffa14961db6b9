/*
 * inet_csum.h - the Internet checksum (RFC 1071) of IPv4 headers and TCP
 * segments, over raw frame bytes: for the frame filter (a received frame
 * the port could not check), the stack's transmit path (the checksums of a
 * frame the port does not fill in, stack/netif.c) and the memory test port
 * (which plays a NIC that computes and checks checksums), and lwIP's own
 * checksums (lwIP's build compiles this file into its library, lwipopts.h).
 *
 * Pure: no state, no DPDK, no lwIP. Any thread.
 */
#ifndef LSTACK_INET_CSUM_H
#define LSTACK_INET_CSUM_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* One's-complement sum of len bytes folded to 16 bits (not inverted),
 * added to sum (a partial sum from a previous call, or 0). Bytes are taken
 * in network order. */
uint32_t inet_csum_add(uint32_t sum, const uint8_t *p, size_t len);

/* The one's-complement sum of the len bytes at p (any alignment) taken as
 * native-order 16-bit words, folded to 16 bits, not inverted: lwIP's
 * LWIP_CHKSUM contract ("host order" sum; lwipopts.h makes it lwIP's
 * checksum routine). On a little-endian host it is the byte swap of
 * inet_csum_add(0, p, len). */
uint16_t inet_csum_native(const void *p, size_t len);

/* The TCP checksum field value of the IPv4 packet at ip (header ihl bytes,
 * total length tot), computed over the pseudo header and the segment with
 * the checksum field taken as it is: a segment whose field is right sums
 * to 0 through inet_tcp_verify. */
uint16_t inet_tcp_csum(const uint8_t *ip, size_t ihl, size_t tot);

/* 1 if the TCP checksum of that IPv4 packet is right. */
int inet_tcp_verify(const uint8_t *ip, size_t ihl, size_t tot);

/* 1 if the IPv4 header at ip (ihl bytes: a multiple of 4, 20-60) sums to
 * 0xffff, its checksum field included (the header is intact); 0 if not.
 * The frame filter's check of every received header: 32-bit loads, the
 * common 20 bytes without a loop. */
int inet_ip_hdr_ok(const uint8_t *ip, size_t ihl);

/* The same for a 20-byte header, inline (the frame filter's common case:
 * no call). The five 32-bit words' sum folded to 16 bits; 0xffff is its
 * own byte swap, so the native-order sum decides alone. */
static inline int inet_ip_hdr20_ok(const uint8_t *ip)
{
    uint32_t w0, w1, w2, w3, w4; /* one load each (an array went through the stack) */
    memcpy(&w0, ip, 4);
    memcpy(&w1, ip + 4, 4);
    memcpy(&w2, ip + 8, 4);
    memcpy(&w3, ip + 12, 4);
    memcpy(&w4, ip + 16, 4);
    uint64_t s = (uint64_t)w0 + w1 + w2 + w3 + w4;           /* < 2^35 */
    s = (s & 0xffffffffu) + (s >> 32);                       /* < 2^32 + 8 */
    s = (s & 0xffffu) + (s >> 16);                           /* < 2^17 */
    s = (s & 0xffffu) + (s >> 16);                           /* <= 0xffff + 1 */
    s = (s & 0xffffu) + (s >> 16);
    return s == 0xffff;
}

/* The IPv4 header checksum field value for the header at ip (ihl bytes),
 * with its checksum field taken as zero. */
uint16_t inet_ip_csum(const uint8_t *ip, size_t ihl);

/* What a NIC's checksum offload does to an outgoing Ethernet frame of len
 * bytes at f: if it carries an IPv4 packet (sane version, header length
 * and total length within len), write its header checksum and, for a whole
 * TCP segment (not a fragment, header within the packet), its TCP checksum
 * over the pseudo header and the segment; whatever the two fields held is
 * replaced. Returns 1 if it was such an IPv4 frame, 0 if the frame is left
 * as it was (ARP, too short, not IPv4). Reads and writes only within len. */
int inet_frame_csum_fill(uint8_t *f, size_t len);

/* The same for what the stack's own output makes most (the caller knows
 * it): the IPv4 packet at ip of tot bytes has a 20-byte header (0x45) and
 * carries a whole TCP segment (not a fragment, tot >= 40). Writes both
 * checksums without inet_frame_csum_fill's checks of the frame. */
void inet_tcp20_csum_fill(uint8_t *ip, size_t tot);

#endif
