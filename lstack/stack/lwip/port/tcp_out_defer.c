/*
 * tcp_out_defer.c - the output a received segment triggers, run once per
 * connection at the end of a receive burst (patch 0014).
 *
 * Owns: the list of pcbs whose tcp_output tcp_input left for the end of
 * the burst, the burst's begin and end (lstack_lwip_rx_burst_begin/_end,
 * called by the stack around the frames of one rx burst), and forgetting
 * a pcb that is freed meanwhile (tcp_free).
 *
 * Why: lwIP acknowledges every second full segment at once (tcp_ack), and
 * tcp_input runs tcp_output after each segment. A 64 KiB request that
 * arrives as 45 MSS frames in one or two bursts then costs 22 ACK frames,
 * each sent through the port and handled by the peer; deferred to the end
 * of the burst, one ACK (with the latest window) covers the burst, as
 * Linux's GRO does for a NAPI poll. ACKs that arrive in a burst likewise
 * open the window once and tcp_output walks the send queue once.
 *
 * What is not deferred: a pcb not in ESTABLISHED (handshake and closing
 * keep lwIP's timing exactly), a pcb holding out-of-order data (its
 * duplicate ACKs and SACK blocks go out at once, one per segment, for the
 * peer's loss recovery), any output outside a burst (the application's
 * calls, the timers), and pcbs past the list's room (output at once).
 *
 * Rejected: a flag bit in pcb->flags to skip duplicates (patch 0010 and
 * others use the free bits; a duplicate entry only costs a tcp_output
 * that finds nothing to send, and the last entry is checked, which is the
 * common case of consecutive segments of one connection); a walk of the
 * active list at the end of the burst (O(connections) per burst).
 *
 * Every global here exists once per lwIP copy; one thread per copy.
 */
#include <stdint.h>

#include "lwip/opt.h"

#include "lwip/priv/tcp_priv.h"
#include "lwip/tcp.h"

#include "port/lwip_hooks.h"
#include "port/lwip_port.h"

#define DEFER_MAX 128

static struct tcp_pcb *deferred[DEFER_MAX];
static unsigned n_deferred;
static int in_burst;
static struct lstack_lwip_defer_stats st;

void lstack_lwip_rx_burst_begin(void)
{
    in_burst = 1;
}

void lstack_lwip_rx_burst_end(void)
{
    in_burst = 0;
    /* tcp_output sends; it does not free a pcb, nor call back into tcp_input. */
    for (unsigned i = 0; i < n_deferred; i++) {
        if (deferred[i] != NULL) {
            st.outputs++;
            tcp_output(deferred[i]);
        }
    }
    n_deferred = 0;
}

void lstack_tcp_input_output(struct tcp_pcb *pcb)
{
    if (!in_burst || pcb->state != ESTABLISHED || pcb->ooseq != NULL) {
        tcp_output(pcb);
        return;
    }
    if (n_deferred > 0 && deferred[n_deferred - 1] == pcb) {
        st.merged++;
        return;
    }
    if (n_deferred == DEFER_MAX) {
        tcp_output(pcb);
        return;
    }
    deferred[n_deferred++] = pcb;
}

void lstack_tcp_output_forget(struct tcp_pcb *pcb)
{
    for (unsigned i = 0; i < n_deferred; i++)
        if (deferred[i] == pcb)
            deferred[i] = NULL;
}

void lstack_lwip_defer_stats(struct lstack_lwip_defer_stats *out)
{
    *out = st;
}
