/*
 * handover.h - frames that reached another stack's receive queue, handed to
 * the stack that owns their connection: one inbox (a ring) per stack, and
 * one outbox per stack for what its inboxes could not take yet.
 *
 * Threads: an inbox has many producers (any stack's thread) and one
 * consumer (its owner); an outbox belongs to one stack's thread. No lock,
 * no syscall, no allocation after create.
 * No DPDK type crosses this header (the lwIP side drives the poll round).
 * Design: docs/design.md#frames-move-between-stacks-over-lock-free-rings
 */
#ifndef LSTACK_NIC_HANDOVER_H
#define LSTACK_NIC_HANDOVER_H

#include <stdint.h>

#include "nic/nic.h"

/*
 * A stack's poll round that finds a frame for another stack (steer.h says
 * where a flow lives; on a port whose hash is opaque only the stack's
 * connection table can) calls nic_handover_forward with the frame; the
 * owner's round drains its inbox with nic_handover_take and treats those
 * frames as its own rx burst. A frame is never dropped here: when an inbox
 * is full the frame waits in the sender's outbox (counted: waited), in
 * order behind any earlier frame for the same stack, and the sender
 * retries with nic_handover_retry at the start of each round; while its
 * outbox holds frames it should not take a new rx burst (back-pressure: the
 * frames wait in the NIC's queue, where a port that must drop counts them
 * as its own imissed). The outbox holds one rx burst, so that suffices.
 *
 * A handed-over frame stays the buffer it arrived in (no copy); whoever
 * ends up with it frees it with its origin port's pkt_free (struct
 * nic_handover_frame.origin): on the DPDK port any queue's pkt_free frees
 * any of its mbufs, on the memory port the pair's.
 */

/* What travels through an inbox: the frame as the origin's rx_burst gave
 * it, and the port (queue) whose pkt_free gives its buffer back. */
struct nic_handover_frame {
    struct nic_pkt pkt;
    struct nic *origin;
};

struct nic_handover_stats {
    uint64_t in;        /* inbox: frames taken by its owner */
    uint64_t out;       /* outbox: frames that entered another stack's inbox */
    uint64_t waited;    /* outbox: frames that had to wait (their inbox was full, or
                           earlier frames for it waited) */
    uint32_t waiting;   /* outbox: frames waiting now */
};

struct nic_handover;      /* one stack's inbox */
struct nic_handover_out;  /* one stack's outbox */

/* An inbox of `slots` frames (a power of two, 2..65536), its memory on NUMA
 * node `node` (-1: wherever the caller's thread allocates). NULL with a
 * reason in err. Any thread, before the stacks run. */
struct nic_handover *nic_handover_create(unsigned slots, int node, char *err, size_t errlen);
/* Free an inbox. Frames still in it are freed with their origin's pkt_free
 * (the origins must still be open). No stack may use it any more. */
void nic_handover_free(struct nic_handover *h);
/* Take up to max frames from h into f[] (the owner's thread). Returns the
 * count; the frames are the caller's now. */
unsigned nic_handover_take(struct nic_handover *h, struct nic_handover_frame *f, unsigned max);
/* Frames in h now (any thread; a snapshot). */
unsigned nic_handover_count(const struct nic_handover *h);

/* An outbox for a stack that sends to inboxes[0..nb) (indexed by stack),
 * holding at most `capacity` waiting frames (one rx burst). NULL with a
 * reason in err. inboxes must outlive the outbox. */
struct nic_handover_out *nic_handover_out_create(struct nic_handover *const *inboxes, unsigned nb,
                                                 unsigned capacity, char *err, size_t errlen);
/* Free an outbox; frames still waiting are freed with their origin's
 * pkt_free. */
void nic_handover_out_free(struct nic_handover_out *o);
/* Hand frame f to stack `to`'s inbox, or keep it waiting in o when that is
 * full or earlier frames for `to` still wait (order is kept per stack).
 * Returns 0 (the frame is no longer the caller's), -EINVAL (to out of
 * range: the frame is still the caller's), -ENOBUFS (o holds capacity
 * frames already: the caller should not have taken a new burst; the frame
 * is still the caller's). The outbox's owner thread. */
int nic_handover_forward(struct nic_handover_out *o, unsigned to, const struct nic_handover_frame *f);
/* Move waiting frames into their inboxes, as far as they take them, in
 * order. Returns the frames still waiting (0: take the next rx burst). */
unsigned nic_handover_retry(struct nic_handover_out *o);
/* Counters: inbox h's (in) and outbox o's (out, waited, waiting); either
 * may be NULL. Any thread (snapshot). */
void nic_handover_stats(const struct nic_handover *h, const struct nic_handover_out *o,
                        struct nic_handover_stats *s);

/* The same calls as a table, exported by liblstack_dpdk.so (dlsym
 * "nic_handover_api"): the preload links no DPDK and reaches the ring
 * through it. */
struct nic_handover_api {
    struct nic_handover *(*create)(unsigned slots, int node, char *err, size_t errlen);
    void (*free)(struct nic_handover *h);
    unsigned (*take)(struct nic_handover *h, struct nic_handover_frame *f, unsigned max);
    unsigned (*count)(const struct nic_handover *h);
    struct nic_handover_out *(*out_create)(struct nic_handover *const *inboxes, unsigned nb, unsigned capacity,
                                           char *err, size_t errlen);
    void (*out_free)(struct nic_handover_out *o);
    int (*forward)(struct nic_handover_out *o, unsigned to, const struct nic_handover_frame *f);
    unsigned (*retry)(struct nic_handover_out *o);
    void (*stats)(const struct nic_handover *h, const struct nic_handover_out *o, struct nic_handover_stats *s);
};
NIC_DPDK_EXPORT extern const struct nic_handover_api nic_handover_api;

#endif
