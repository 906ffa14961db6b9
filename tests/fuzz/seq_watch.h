/*
 * seq_watch.h - what a stack sends on one TCP connection, learnt from its
 * frames: its rcv_nxt (the ack of its last segment) and snd_nxt (the end of
 * the furthest segment it sent), for the frame fuzz target's FIX_CONN
 * fix-up. Fed from the memory port's tap (nic_mem_set_tap).
 *
 * Pure. Learnt from frames rather than read from lwIP's PCB: no lwIP type
 * crosses stack.h, and the harness must survive changes of the lwIP build.
 */
#ifndef LSTACK_FUZZ_SEQ_WATCH_H
#define LSTACK_FUZZ_SEQ_WATCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct seq_watch {
    /* The watched connection (network byte order); local_addr 0: none. */
    uint32_t local_addr;
    uint16_t local_port, peer_port;
    /* Learnt (host order); valid once seen. */
    bool seen;
    uint32_t rcv_nxt, snd_nxt;
};

/* Watch local_addr:local_port <-> *:peer_port (network byte order);
 * forgets what was learnt. local_addr 0 watches nothing. */
void seq_watch_set(struct seq_watch *w, uint32_t local_addr, uint16_t local_port, uint16_t peer_port);

/* Learn from the Ethernet frame f[0..len) the stack sent, if it is a
 * segment of the watched connection. */
void seq_watch_frame(struct seq_watch *w, const uint8_t *f, size_t len);

#endif
