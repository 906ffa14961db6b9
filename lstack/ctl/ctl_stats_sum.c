/*
 * ctl_stats_sum.c - the "total" of several stacks' statistics (what each
 * field means when summed: ctl_stats_sum.h). Apart from ctl_cmds.c so that
 * a unit test can check the sum without a control socket.
 */
#include "ctl/ctl_stats_sum.h"

void ctl_stats_sum(struct stack_stats *total, const struct stack_stats *x)
{
    const struct nic_stats *a = &x->nic;
    struct nic_stats *t = &total->nic;
    t->rx_packets += a->rx_packets;
    t->rx_bytes += a->rx_bytes;
    t->tx_packets += a->tx_packets;
    t->tx_bytes += a->tx_bytes;
    t->drop_rx_multiseg += a->drop_rx_multiseg;
    t->drop_tx_nombuf += a->drop_tx_nombuf;
    t->drop_tx_full += a->drop_tx_full;
    t->drop_tx_toolong += a->drop_tx_toolong;
    t->tx_burst_cycles += a->tx_burst_cycles;
    t->tx_bursts += a->tx_bursts;
    if (a->port_imissed > t->port_imissed)
        t->port_imissed = a->port_imissed; /* the port's: once, not per queue */
    if (a->port_rx_nombuf > t->port_rx_nombuf)
        t->port_rx_nombuf = a->port_rx_nombuf;
    t->mbuf_free += a->mbuf_free;
    t->mbuf_total += a->mbuf_total;
    for (int v = 0; v < FRAME_VERDICT_COUNT; v++)
        total->drop[v] += x->drop[v];
    total->lwip_input_err += x->lwip_input_err;
    total->tx_tso += x->tx_tso;
    total->polls += x->polls;
    total->busy_polls += x->busy_polls;
    total->rounds.busy += x->rounds.busy;
    total->rounds.rx_frames += x->rounds.rx_frames;
    total->rounds.tx_frames += x->rounds.tx_frames;
    total->rounds.busy_cycles += x->rounds.busy_cycles; /* one TSC for all stacks */
    total->rounds.idle_cycles += x->rounds.idle_cycles;
    if (x->rounds.tsc_hz > total->rounds.tsc_hz)
        total->rounds.tsc_hz = x->rounds.tsc_hz; /* a rate, not a count: the stacks' (measured alike) */
    total->conn_opened += x->conn_opened;
    total->conn_accepted += x->conn_accepted;
    total->conn_refused += x->conn_refused;
    total->syn_dropped += x->syn_dropped;
    total->syncookies_sent += x->syncookies_sent;
    total->syncookies_recv += x->syncookies_recv;
    total->syncookies_failed += x->syncookies_failed;
    total->conn_reset += x->conn_reset;
    total->conn_aborted += x->conn_aborted;
    total->sockets += x->sockets;
    total->frag_in += x->frag_in;
    total->frag_reassembled += x->frag_reassembled;
    total->frag_dropped += x->frag_dropped;
    total->frag_timeout += x->frag_timeout;
    total->frag_evicted += x->frag_evicted;
    total->frag_mbufs_held += x->frag_mbufs_held;
    total->frag_mbufs_max += x->frag_mbufs_max;
    total->handover_in += x->handover_in;
    total->handover_out += x->handover_out;
    total->handover_waited += x->handover_waited;
    total->arp_shared += x->arp_shared;
    total->frag_given += x->frag_given;
    total->ports_steered += x->ports_steered;
}
