/*
 * frame_fix.h - the input format of the frame fuzz target (fuzz_frames.c)
 * and the fix-ups that keep mutated frames deliverable.
 *
 * Pure: no stack, no I/O.
 * Design: docs/design.md#the-frame-fuzzers-input-is-plain-records
 */
#ifndef LSTACK_FUZZ_FRAME_FIX_H
#define LSTACK_FUZZ_FRAME_FIX_H

#include <stddef.h>
#include <stdint.h>

/*
 * An input is a sequence of records, each
 *     flags (1 byte) | length (2 bytes, big-endian) | frame (length bytes)
 * (a last record shorter than its length takes what is left; a length over
 * FRAME_FIX_MAX is cut there). The flags say which fields of the frame the
 * harness overwrites before the frame goes to the stack, so that random
 * bytes get past the Ethernet, IPv4 and checksum gates and reach ARP, ICMP,
 * IP reassembly and TCP:
 *   FIX_ETH   destination MAC: the target's; source MAC: the peer's;
 *   FIX_IP    IPv4: source the peer's address, destination the target's,
 *             header checksum recomputed (IHL as given, if it fits);
 *             ARP: sender the peer (MAC and address), target address ours;
 *   FIX_CONN  TCP: the established connection's ports; seq and ack become
 *             offsets from the target's rcv_nxt and snd_nxt (as the target
 *             last sent them), so in-window segments are easy to reach;
 *   FIX_CSUM  TCP or ICMP checksum recomputed over the datagram (not for a
 *             fragment: its checksum covers bytes that are not in it).
 * Two flags are for the harness, not the frame: REC_POLL polls the stacks
 * after this frame (frames without it share a receive burst) and REC_SEND
 * has the target's application write to the connection after it.
 */

#define FRAME_FIX_MAX 1536 /* the memory port's largest frame */

enum {
    FIX_ETH = 0x01,
    FIX_IP = 0x02,
    FIX_CONN = 0x04,
    FIX_CSUM = 0x08,
    REC_POLL = 0x10,
    REC_SEND = 0x20,
};

/* What the fix-ups write. Addresses and ports in network byte order,
 * sequence numbers in host order. */
struct fix_ctx {
    uint8_t target_mac[6], peer_mac[6];
    uint32_t target_addr, peer_addr;
    uint16_t target_port, peer_port;   /* the established connection */
    uint32_t rcv_nxt, snd_nxt;         /* the target's, as last sent */
};

/* One record of in[0..n). Returns the bytes it takes (0 when n is 0), with
 * *flags, *frame (pointing into in) and *len set. */
size_t frame_rec_next(const uint8_t *in, size_t n, uint8_t *flags, const uint8_t **frame, uint16_t *len);

/* Apply the FIX_* flags to the frame f[0..len) in place. Touches only
 * fields that lie within len. */
void frame_fix(uint8_t *f, size_t len, uint8_t flags, const struct fix_ctx *c);

/* The Internet checksum (RFC 1071) of p[0..len) added to sum (a partial
 * 32-bit sum, e.g. of a pseudo-header), folded and complemented. */
uint16_t frame_csum(const uint8_t *p, size_t len, uint32_t sum);

#endif
