/*
 * pcb_front.h - put the connections of a receive burst at the front of
 * lwIP's list of active TCP PCBs before lwIP looks them up.
 *
 * Why: Debian's lwIP finds the PCB of every incoming segment by walking
 * tcp_active_pcbs, a singly linked list, and moves the one it found to the
 * front. With many clients served round-robin (redis-benchmark -c 1000) the
 * next segment's PCB is always near the tail, so each segment walks the
 * whole list: 38% of the server's instructions at 1000 connections. Before
 * a burst goes to lwIP, one walk of the list moves the burst's PCBs (found
 * through a small hash table of (remote address, remote port, local port):
 * the stack has one address) to the front; lwIP's own
 * walk then stops within the first few entries. One walk per burst instead
 * of one per segment.
 *
 * Contract: the caller owns the stack (rt_lock) and calls pcb_front_note
 * for each frame of a burst that the frame filter passed, then
 * pcb_front_apply once, then hands the frames to lwIP. No lwIP call runs in
 * between, so the list is not changing under the walk; only ->next links
 * are rewritten, the set of PCBs in the list is unchanged. Segments that
 * cannot have a PCB in the list are not noted (a SYN without ACK, a
 * fragment past the first: its bytes are not ports), so that they do not
 * keep the walk from stopping once every noted connection is found.
 *
 * Rejected: a hash table of our own from 4-tuple to PCB (lwIP would still
 * walk its list: it has no hook for the lookup) and patching lwIP (the
 * brief uses Debian's build as it is).
 */
#ifndef LSTACK_PCB_FRONT_H
#define LSTACK_PCB_FRONT_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

struct tcp_pcb;

enum {
    PCB_FRONT_MAX = 512,        /* distinct connections per burst (nic_read_number's maximum) */
    PCB_FRONT_SLOTS = 1024,     /* open-addressing table, at most half full */
};

struct pcb_front {
    uint32_t gen;               /* a slot is in use when its gen is this */
    unsigned n;                 /* distinct keys noted this burst */
    uint64_t home[PCB_FRONT_SLOTS / 64]; /* bit i: some key hashes to slot i
                                            (the walk's cheap first test) */
    struct pcb_front_slot {
        uint32_t gen;
        uint32_t rip;           /* remote IPv4 address, network order */
        uint16_t rport, lport;  /* host order, as in struct tcp_pcb */
    } slot[PCB_FRONT_SLOTS];
};

/* Start a burst: nothing to do after a burst that noted nothing (an idle
 * poll round); else the table is emptied by moving to a new generation
 * (the struct must start zeroed, e.g. from calloc). */
static inline void pcb_front_reset(struct pcb_front *pf)
{
    if (pf->n == 0 && pf->gen != 0)
        return; /* (gen 0 would make every zeroed slot look in use) */
    pf->n = 0;
    memset(pf->home, 0, sizeof(pf->home));
    if (++pf->gen == 0) { /* wrapped: old stamps could look current */
        for (unsigned i = 0; i < PCB_FRONT_SLOTS; i++)
            pf->slot[i].gen = 0;
        pf->gen = 1;
    }
}

/* Note the connection of an Ethernet frame the filter passed (IPv4 header
 * already checked). Non-TCP frames and keys past PCB_FRONT_MAX are ignored
 * (their lookup just stays lwIP's walk). */
void pcb_front_note(struct pcb_front *pf, const uint8_t *frame, size_t len);

/* Move the PCBs of the noted keys to the front of *head (lwIP's
 * tcp_active_pcbs). Returns how many were moved. With a single noted
 * connection it does nothing: lwIP's own walk to it costs what ours would
 * (most bursts of a busy server hold one or two segments). */
unsigned pcb_front_apply(struct pcb_front *pf, struct tcp_pcb **head);

#endif
