/*
 * mem_nic.h - the memory port: two struct nic wired back to back in one
 * process, so that two stacks (two private lwIP copies) talk TCP with no
 * DPDK, no hugepages and no root. A test port (tests/support, linked into
 * the unit tests and the fuzz targets, never into liblstack.so): frames are
 * malloc'd. One thread per port at a time, like any struct nic; returns
 * are 0 or -1 as each function says.
 */
#ifndef LSTACK_TEST_MEM_NIC_H
#define LSTACK_TEST_MEM_NIC_H

#include <stdbool.h>
#include <stdint.h>

#include "nic/nic.h"

/* Two ports wired to each other: what one sends, the other receives, in
 * order, after its tx_flush. Each holds at most nb_bufs frames in flight
 * (queued + held by the receiver). macs are 02:00:00:00:00:01 and :02.
 * Returns 0, or -1 (out of memory). Close each with ops->close. */
int nic_mem_pair(uint32_t nb_bufs, uint16_t priv_size, uint16_t burst, struct nic **a, struct nic **b);

/* Make memory port n offer caps (before a stack opens on it), playing the
 * NIC: with tx_cksum it fills in the checksums of what it sends, with
 * rx_cksum it checks those of what it delivers and flags each frame, with
 * tso_max it takes TSO frames (tx_frame_tso) and cuts them into MSS
 * frames at tx_flush, before the tap sees them.
 * What it did, for tests: frames whose checksums it filled, of those the
 * ones that came with a non-zero IPv4 or TCP checksum already (the stack
 * computed what it should have left), and received frames it found bad. */
struct nic_mem_cksum {
    uint64_t filled, prefilled, bad;
};
void nic_mem_set_caps(struct nic *n, const struct nic_caps *caps);
void nic_mem_cksum_counts(const struct nic *n, struct nic_mem_cksum *out);
/* What memory port n's TSO did: frames it took, frames it cut them into,
 * frames it could not cut (not IPv4/TCP, headers beyond the first buffer,
 * an MSS frame longer than a buffer: dropped). */
struct nic_mem_tso {
    uint64_t frames, pieces, bad;
};
void nic_mem_tso_counts(const struct nic *n, struct nic_mem_tso *out);

/* Test hooks of a memory port n (a port of nic_mem_pair, nothing else).
 * The tap sees every frame n sends, at its tx_flush, before the peer does:
 * it returns true to let the frame through, false to take it off the wire
 * (freed, not counted as a drop). fn NULL removes it. */
typedef bool (*nic_mem_tap_fn)(void *ctx, const uint8_t *frame, uint16_t len);
void nic_mem_set_tap(struct nic *n, nic_mem_tap_fn fn, void *ctx);
/* Queue a copy of frame for n to receive, as if its peer had sent it (it
 * counts against the peer's buffers). Returns 0, or -1 (longer than a
 * buffer, the peer's buffers all in use, out of memory). */
int nic_mem_inject(struct nic *n, const uint8_t *frame, uint16_t len);
/* The most frames one rx_burst of either port of n's pair returns from now
 * on (nic_mem_pair's burst; 0: 32). */
void nic_mem_set_burst(struct nic *n, uint16_t burst);
/* Add count frame buffers to the pair's free list now (as a pool is
 * allocated up front), so that sending and cutting frames later needs no
 * malloc while fewer are in use. Returns 0, or -1 (out of memory). */
int nic_mem_prealloc(struct nic *n, uint32_t count);

#endif
