/*
 * steer.h - flow steering over a port's receive queues: which queue (and so
 * which stack) an IPv4/TCP flow's frames reach, and a local port for an
 * outgoing connection whose replies reach a chosen queue.
 *
 * Pure: no DPDK and no lwIP type, no allocation, no global state, so both
 * the DPDK side (nic/port_rss.c fills a struct nic_steer from the port)
 * and the lwIP side (the stack that picks a source port) include it.
 * Design: docs/design.md#flow-steering-computes-the-ports-toeplitz-hash
 */
#ifndef LSTACK_NIC_STEER_H
#define LSTACK_NIC_STEER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * How a port spreads flows (enum nic_steer_kind):
 *  - NIC_STEER_ONE: one queue; every flow lands on queue 0.
 *  - NIC_STEER_TOEPLITZ: the port computes the Toeplitz hash (Microsoft's
 *    RSS) of the IPv4/TCP 4-tuple under a key we know, and takes the queue
 *    from its redirection table (reta) at the hash's low bits. Then
 *    nic_steer_queue is exact and nic_steer_pick_port returns a port whose
 *    replies come back to the chosen queue.
 *  - NIC_STEER_OPAQUE: the port spreads flows by a hash we cannot compute:
 *    net_af_packet's fanout group (PACKET_FANOUT_HASH: the kernel's
 *    skb_get_hash, keyed with a secret of the kernel's), net_af_xdp on a
 *    veth (the queue is the one the sending kernel's XPS/skb_tx_hash
 *    chose). The documented fallback: nic_steer_queue returns -1 (unknown),
 *    nic_steer_pick_port returns a free port without steering (*steered =
 *    false), and frames that reach another stack's queue are handed over
 *    (nic/handover.h). Correct, one ring hop more per frame of such a flow.
 *
 * Byte order: addresses and ports as they are on the wire (network order)
 * everywhere in this header, except the port range and the result of
 * nic_steer_pick_port, which are host order (as lwIP's port numbers are).
 */

#define NIC_STEER_KEY_MAX 64    /* bytes: 40 on most NICs, 52 on some */
#define NIC_STEER_RETA_MAX 512  /* entries: 128 or 512 on most NICs */
#define NIC_STEER_QUEUES_MAX 64 /* queues (stacks) per port */

enum nic_steer_kind {
    NIC_STEER_ONE = 0,
    NIC_STEER_TOEPLITZ = 1,
    NIC_STEER_OPAQUE = 2,
};

struct nic_steer {
    enum nic_steer_kind kind;
    uint16_t nb_queues;          /* 1..NIC_STEER_QUEUES_MAX */
    uint16_t key_len;            /* TOEPLITZ: bytes of key, >= 12 + 4 */
    uint16_t reta_size;          /* TOEPLITZ: entries of reta, 1..NIC_STEER_RETA_MAX */
    uint8_t key[NIC_STEER_KEY_MAX];
    uint16_t reta[NIC_STEER_RETA_MAX]; /* queue of each entry, < nb_queues */
};

/* The Toeplitz hash of data[0..len) under key[0..key_len): for each bit of
 * the input, most significant first, set in the input, the 32 key bits
 * starting at that bit's position are XORed into the result. Needs
 * key_len >= len + 4 (bits past the key read as 0). Any thread. */
uint32_t nic_toeplitz(const uint8_t *key, size_t key_len, const uint8_t *data, size_t len);

/* The hash an RSS port computes for an IPv4/TCP frame from src:sport to
 * dst:dport (network order): Toeplitz over src, dst, sport, dport. */
uint32_t nic_steer_hash_tcp4(const struct nic_steer *s, uint32_t src, uint32_t dst, uint16_t sport, uint16_t dport);

/* The queue a frame from src:sport to dst:dport reaches: 0 for
 * NIC_STEER_ONE, reta[hash % reta_size] for TOEPLITZ, -1 (unknown) for
 * OPAQUE. */
int nic_steer_queue_tcp4(const struct nic_steer *s, uint32_t src, uint32_t dst, uint16_t sport, uint16_t dport);

/* 0 if s is usable: kind known, nb_queues in range, for TOEPLITZ a key of
 * at least 16 bytes (12 bytes of input + 4) and a reta whose entries are
 * all < nb_queues; else -EINVAL. */
int nic_steer_check(const struct nic_steer *s);

/* Is local port `port` (host order) taken for a connection from local to
 * remote:rport? The caller's table (lwIP's PCB lists of the stack). */
typedef bool (*nic_steer_in_use_fn)(void *ctx, uint16_t port);

/* A local port in [lo, hi] (host order, lo <= hi) for a connection from
 * local to remote:rport (network order) whose incoming frames (remote:rport
 * -> local:port) reach queue `queue`, and that in_use says is free. The
 * search starts at lo + start % (hi - lo + 1) and wraps, so callers spread
 * their ports by passing a changing start (a counter, a random number).
 * Returns the port (host order) with *steered = true (for ONE every free
 * port: all flows reach queue 0); for OPAQUE, whose queue cannot be
 * known, the first free port from start with *steered = false; -EINVAL
 * for lo > hi or queue >= nb_queues; -EADDRNOTAVAIL when no port of the
 * range is both free and steered to queue (for TOEPLITZ about 1 port in
 * nb_queues qualifies). Pure but for in_use; any thread. */
int nic_steer_pick_port(const struct nic_steer *s, uint32_t local, uint32_t remote, uint16_t rport, unsigned queue,
                        uint16_t lo, uint16_t hi, uint32_t start, nic_steer_in_use_fn in_use, void *ctx,
                        bool *steered);

#endif
