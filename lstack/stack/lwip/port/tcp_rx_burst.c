/*
 * tcp_rx_burst.c - the output a received segment owes, sent once per
 * connection at the end of the stack's receive burst (patch 0018).
 *
 * Owns: whether this copy is inside a receive burst (the stack brackets
 * the frames of one rx burst of more than one frame with
 * lstack_lwip_rx_burst_begin/_end), the list of connections whose
 * tcp_output tcp_input left for the burst's end, the cap on how much of a
 * burst's data one ACK covers, and its counters.
 *
 * Every global here exists once per lwIP copy; the stack's thread only.
 * Design: docs/design.md#one-ack-per-receive-burst
 */
#include <stdint.h>

#include "lwip/opt.h"

#include "lwip/priv/tcp_priv.h"
#include "lwip/tcp.h"

#include "port/lwip_hooks.h"
#include "port/lwip_port.h"

/*
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
 * What is not deferred (tcp_output at once, as lwIP does):
 *   - anything outside a burst: bursts of one frame (the stack does not
 *     open a burst for them: small request/response exchanges are exactly
 *     as lwIP alone makes them), the application's calls (window updates of tcp_recved,
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
 * The cap: one ACK covers at most BURST_ACK_BYTES (64 KiB) of a burst's
 * data for a connection. Once the data a connection received in this burst
 * and not yet acknowledged reaches 64 KiB, its owed output goes at once
 * (tcp_output) and the deferral goes on from there. Without it one ACK
 * could cover a whole burst: nic_read_number frames, ~187 KB at 128, up to
 * the receive window (TCP_WND, 256 KiB by default). Why 64 KiB: it is what
 * Linux does with GRO, the peer's own kind of receiver - GRO stops an
 * aggregate at 64 KiB, and TCP acknowledges each aggregate of more than one
 * segment at once, so a Linux receiver sends an ACK at least every 64 KiB
 * of a NAPI poll's data; a Linux sender (the bed's client) meets no
 * stretch ACK longer than it meets from its own kind, and its ACK clock
 * and window advance in steps no coarser. RFC 5681 4.2 (and RFC 1122
 * 4.2.3.2) ask for an ACK every second full segment; like GRO this defers
 * past that within one burst, bounded.
 * What is counted: the connection's data from its first segment in the
 * burst (rcv_nxt before it, noted by lwIP's per-segment hook, lwip_hooks.h:
 * the run of consecutive segments of one connection, the common shape of
 * a burst), or from the ACK the cap or an out-of-order segment sent. A
 * segment received before the burst and not acknowledged yet (lwIP's
 * delayed ACK) is not counted, as GRO does not count it. When a
 * connection's segments are interleaved with another's, the count starts at the run in which it
 * first owed output: at most the one segment lwIP delayed its ACK for
 * is left out. The ACK goes after the segment that reaches 64 KiB, so it
 * covers less than 64 KiB plus one segment of the burst.
 *
 * Freed pcbs: a connection leaves the list when it leaves lwIP's active
 * list (lstack_pcb_hash_del, pcb_hash.c), which every free of an
 * ESTABLISHED pcb goes through (a RST in the same burst, tcp_abort). Its
 * input that did so has already sent what it owed.
 */

/* More connections than a burst has frames cannot owe output in it. */
#define OWED_MAX 256

/* The most of a burst's data one ACK covers (see the top: GRO's 64 KiB). */
#define BURST_ACK_BYTES (64u * 1024u)

u8_t lstack_tcp_in_burst;
struct tcp_pcb *lstack_tcp_burst_run;
u32_t lstack_tcp_burst_run_from;

/* A connection that owes output, and the first of its sequence numbers in
 * this burst that no ACK has covered yet. */
struct owed_pcb {
    struct tcp_pcb *pcb;
    u32_t from;
};

static struct owed_pcb owed[OWED_MAX];
static unsigned n_owed;
static struct lstack_lwip_burst_stats st;

void lstack_lwip_rx_burst_begin(void)
{
    lstack_tcp_in_burst = 1;
    lstack_tcp_burst_run = NULL;
    st.bursts++;
}

void lstack_lwip_rx_burst_end(void)
{
    lstack_tcp_in_burst = 0;
    /* tcp_output neither frees a pcb nor calls tcp_input: the list holds
     * still. An entry may find nothing left to do (a duplicate ACK sent
     * since cleared the flags): the gate tcp_input uses (patch 0016). */
    for (unsigned i = 0; i < n_owed; i++) {
        struct tcp_pcb *pcb = owed[i].pcb;
        if (pcb != NULL && (pcb->unsent != NULL || (pcb->flags & (TF_ACK_NOW | TF_NAGLEMEMERR)))) {
            st.outputs++;
            tcp_output(pcb);
        }
    }
    n_owed = 0;
}

/* The entry of pcb in owed, or NULL. From the end: consecutive segments of
 * one connection find themselves at once. */
static struct owed_pcb *owed_find(const struct tcp_pcb *pcb)
{
    for (unsigned i = n_owed; i > 0; i--)
        if (owed[i - 1].pcb == pcb)
            return &owed[i - 1];
    return NULL;
}

void lstack_tcp_output_owe(struct tcp_pcb *pcb)
{
    struct owed_pcb *e = owed_find(pcb);
    if (e != NULL) {
        st.merged++;
    } else if (n_owed == OWED_MAX) {
        st.overflow++;
        tcp_output(pcb);
        return;
    } else {
        e = &owed[n_owed++];
        e->pcb = pcb;
        /* the hook noted pcb's run for this very segment; anything else
         * (the segment that made the connection ESTABLISHED) counts from
         * here */
        e->from = lstack_tcp_burst_run == pcb ? lstack_tcp_burst_run_from : pcb->rcv_nxt;
        st.owed++;
    }
    /* tcp_input_pcb is NULL here (patch 0018's call site): tcp_output sends */
    if ((u32_t)(pcb->rcv_nxt - e->from) >= BURST_ACK_BYTES) {
        st.capped++;
        tcp_output(pcb);
        e->from = pcb->rcv_nxt;
    }
}

err_t lstack_tcp_burst_out_of_order(struct tcp_pcb *pcb)
{
    /* Before tcp_input_pcb is set: tcp_output sends (it skips only the pcb
     * whose input is being processed). Its entry in owed stays; the end of
     * the burst finds it with nothing left to do, or with what later
     * segments owe, counted for the cap from this ACK. */
    st.flushed++;
    tcp_output(pcb);
    struct owed_pcb *e = owed_find(pcb);
    if (e != NULL)
        e->from = pcb->rcv_nxt;
    lstack_tcp_burst_run_from = pcb->rcv_nxt; /* the hook made pcb the run */
    return ERR_OK;
}

void lstack_tcp_burst_forget(struct tcp_pcb *pcb)
{
    for (unsigned i = 0; i < n_owed; i++)
        if (owed[i].pcb == pcb)
            owed[i].pcb = NULL;
    /* a pcb allocated later in the burst at the same address starts a run
     * of its own */
    if (lstack_tcp_burst_run == pcb)
        lstack_tcp_burst_run = NULL;
}

void lstack_lwip_burst_stats(struct lstack_lwip_burst_stats *out)
{
    *out = st;
}
