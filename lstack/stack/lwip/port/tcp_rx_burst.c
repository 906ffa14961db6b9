/*
 * tcp_rx_burst.c - the output a received segment owes, sent once per
 * connection at the end of the stack's receive burst (patch 0018).
 *
 * Owns: whether this copy is inside a receive burst (the stack brackets
 * the frames of one rx burst of more than one frame with
 * lstack_lwip_rx_burst_begin/_end), the list of connections whose
 * tcp_output tcp_input left for the burst's end, and its counters.
 *
 * Why: lwIP acknowledges every second full segment at once (tcp_ack sets
 * TF_ACK_NOW) and tcp_input runs tcp_output after each segment. A 64 KiB
 * request arriving as 45 MSS frames then costs ~22 pure ACK frames, and
 * on the af_xdp/veth bed every one is a sendto() whose skb build and the
 * peer's TCP receive run on the stack's CPU (docs/performance.md,
 * scenario 6). Left to the burst's end, one ACK (with the latest window)
 * covers what the burst brought, as Linux's GRO makes one skb, and so one
 * ACK, of the segments of a NAPI poll. ACKs that arrive in one burst
 * likewise let tcp_output walk the send queue once.
 *
 * What is not deferred (tcp_output at once, as before):
 *   - anything outside a burst: bursts of one frame (the stack does not
 *     open a burst for them: small request/response exchanges are exactly
 *     as before), the application's calls (window updates of tcp_recved,
 *     writes), lwIP's timers (the delayed ACK of tcp_fasttmr);
 *   - a connection not in ESTABLISHED (handshake, closing);
 *   - a connection holding out-of-order data;
 *   - duplicate ACKs. lwIP sends the ACK for an out-of-order segment from
 *     tcp_receive itself (tcp_send_empty_ack, with its SACK blocks), one
 *     per segment, and the peer's fast retransmit counts them. One thing
 *     would merge them: an ACK for in-order data owed since earlier in the
 *     burst. Without the deferral it had left before the out-of-order
 *     segment came; deferred, the first duplicate would carry it, advance
 *     the peer's snd_una and not count as a duplicate. So a segment that is
 *     not the next in order, arriving while an ACK is owed (TF_ACK_NOW),
 *     sends that ACK first (lstack_tcp_burst_out_of_order, from lwIP's
 *     per-segment hook, lwip_hooks.h): the peer sees the same ACKs, in the
 *     same order, as without the deferral;
 *   - a connection past the list's room.
 * A segment that fills the whole gap (ooseq empties) is acknowledged at
 * the burst's end, with what followed it in the burst: later in the same
 * poll round, never after a wait (RFC 5681 4.2 asks for an immediate ACK;
 * GRO gives the same merge).
 *
 * Freed pcbs: a connection leaves the list when it leaves lwIP's active
 * list (lstack_pcb_hash_del, pcb_hash.c), which every free of an
 * ESTABLISHED pcb goes through (a RST in the same burst, tcp_abort). Its
 * input that did so has already sent what it owed.
 *
 * Rejected: a flag bit in pcb->flags against duplicates (the free bits are
 * taken by other patches; the list is at most a burst long and searched
 * from its end, where consecutive segments of one connection find
 * themselves); walking the active list at the burst's end (O(connections)
 * per burst); deferring in a burst of one frame (nothing to merge: the
 * list's bookkeeping would be pure cost on every small request).
 *
 * Every global here exists once per lwIP copy; the stack's thread only.
 */
#include <stdint.h>

#include "lwip/opt.h"

#include "lwip/priv/tcp_priv.h"
#include "lwip/tcp.h"

#include "port/lwip_hooks.h"
#include "port/lwip_port.h"

/* More connections than a burst has frames cannot owe output in it. */
#define OWED_MAX 256

u8_t lstack_tcp_in_burst;

static struct tcp_pcb *owed[OWED_MAX];
static unsigned n_owed;
static struct lstack_lwip_burst_stats st;

void lstack_lwip_rx_burst_begin(void)
{
    lstack_tcp_in_burst = 1;
    st.bursts++;
}

void lstack_lwip_rx_burst_end(void)
{
    lstack_tcp_in_burst = 0;
    /* tcp_output neither frees a pcb nor calls tcp_input: the list holds
     * still. An entry may find nothing left to do (a duplicate ACK sent
     * since cleared the flags): the gate tcp_input uses (patch 0016). */
    for (unsigned i = 0; i < n_owed; i++) {
        struct tcp_pcb *pcb = owed[i];
        if (pcb != NULL && (pcb->unsent != NULL || (pcb->flags & (TF_ACK_NOW | TF_NAGLEMEMERR)))) {
            st.outputs++;
            tcp_output(pcb);
        }
    }
    n_owed = 0;
}

void lstack_tcp_output_owe(struct tcp_pcb *pcb)
{
    for (unsigned i = n_owed; i > 0; i--) {
        if (owed[i - 1] == pcb) {
            st.merged++;
            return;
        }
    }
    if (n_owed == OWED_MAX) {
        st.overflow++;
        tcp_output(pcb);
        return;
    }
    owed[n_owed++] = pcb;
    st.owed++;
}

err_t lstack_tcp_burst_out_of_order(struct tcp_pcb *pcb)
{
    /* Before tcp_input_pcb is set: tcp_output sends (it skips only the pcb
     * whose input is being processed). Its entry in owed stays; the end of
     * the burst finds it with nothing left to do, or with what later
     * segments owe. */
    st.flushed++;
    tcp_output(pcb);
    return ERR_OK;
}

void lstack_tcp_burst_forget(struct tcp_pcb *pcb)
{
    for (unsigned i = 0; i < n_owed; i++)
        if (owed[i] == pcb)
            owed[i] = NULL;
}

void lstack_lwip_burst_stats(struct lstack_lwip_burst_stats *out)
{
    *out = st;
}
