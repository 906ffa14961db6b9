/*
 * ltran_fwd.c - one forwarding round of ltran: a burst from the port is
 * classified (dispatch.c) and put on the clients' rx rings, ARP requests for
 * client addresses are answered and unclaimed SYNs reset in place; then
 * each client's tx ring is drained (dispatch learns connections from it) and
 * everything goes out in one tx batch.
 * Design: docs/design.md#ltran-forwards-mbufs-by-pointer
 */
#include <string.h>

#include <rte_cycles.h>
#include <rte_ethdev.h>
#include <rte_mbuf.h>
#include <rte_ring.h>

#include "ltran.h"

/*
 * Owns the per-frame path: no allocation, no syscall apart from the PMD's
 * own (af_packet's tx does a send()), a copy only for an ARP frame that
 * several clients share an address for. The cost is measured by the TSC:
 * cycles of rounds that moved at least one frame over frames moved
 * (busy_cycles / fwd_frames), like the stack's poll-round counters, and of
 * those the cycles inside the port's bursts (io_cycles) and in the
 * wake-ups of sleeping clients (wake_cycles, low power): busy - io is what
 * ltran adds (a direct lstack pays the port's bursts too); and a log2
 * histogram of that own cost per frame by round (own_hist), whose median
 * a preempted round cannot drag (the mean it can, on a loaded machine).
 * Buffers a client holds carry its tag in hash.usr (set here on delivery,
 * by the client on allocation; cleared by whoever frees one): when a client
 * is gone, ltran_client_reclaim_mbufs walks the pool and frees what it
 * still held (a free buffer's tag is always 0).
 * A frame a client sends to another client's address (the cluster bus of
 * a Redis Cluster, one address per instance) does not leave: it is
 * dispatched like a received one (hairpin; an ARP request or a SYN nobody
 * listens to is answered back to the sender).
 * A client that sleeps (low_power_mode) is woken after its frames are on
 * its ring (ltran_wake.c: a fence and a load per round, a write() only for
 * a sleeper).
 */

#define TX_MAX (LTRAN_BURST * 4)
#define TX_RETRIES 4

struct tx_batch {
    unsigned n;
    struct rte_mbuf *m[TX_MAX];
};

static void tx_flush(struct ltran *l, struct tx_batch *b)
{
    unsigned sent = 0;
    uint64_t t = rte_rdtsc();
    for (int tries = 0; sent < b->n && tries < TX_RETRIES; tries++)
        sent += rte_eth_tx_burst(l->port, 0, b->m + sent, (uint16_t)(b->n - sent));
    l->st.io_cycles += rte_rdtsc() - t;
    l->st.tx_frames += sent;
    for (unsigned i = sent; i < b->n; i++) {
        l->st.drop_tx_full++;
        rte_pktmbuf_free(b->m[i]);
    }
    b->n = 0;
}

static inline void tx_add(struct ltran *l, struct tx_batch *b, struct rte_mbuf *m)
{
    if (b->n == TX_MAX)
        tx_flush(l, b);
    b->m[b->n++] = m;
}

static inline void set_len(struct rte_mbuf *m, size_t len)
{
    m->data_len = (uint16_t)len;
    m->pkt_len = (uint32_t)len;
}

struct stage {
    uint32_t touched;                          /* bit per client with frames staged (n[] valid) */
    uint32_t delivered;                        /* bit per client with frames put on its ring */
    unsigned n[LTRAN_MAX_CLIENTS];
    struct rte_mbuf *m[LTRAN_MAX_CLIENTS][LTRAN_BURST];
};

/* Put what is staged for client id on its rx ring (tagged as held by it). */
static void stage_flush_one(struct ltran *l, struct stage *s, unsigned id)
{
    struct ltran_client *c = &l->cl[id];
    for (unsigned j = 0; j < s->n[id]; j++)
        s->m[id][j]->hash.usr = c->tag; /* held by c from now on */
    unsigned k = rte_ring_sp_enqueue_burst(c->rx, (void **)s->m[id], s->n[id], NULL);
    c->rx_frames += k;
    if (k > 0)
        s->delivered |= 1u << id;
    for (unsigned j = k; j < s->n[id]; j++) {
        c->drop_rx_full++;
        s->m[id][j]->hash.usr = 0;
        rte_pktmbuf_free(s->m[id][j]);
    }
    s->n[id] = 0;
}

/* Everything staged to the rings, then the sleepers among their clients woken. */
static void stage_flush(struct ltran *l, struct stage *s)
{
    while (s->touched != 0) {
        unsigned id = (unsigned)__builtin_ctz(s->touched);
        s->touched &= s->touched - 1;
        stage_flush_one(l, s, id);
    }
    if (s->delivered != 0)
        ltran_wake_clients(l, s->delivered);
    s->delivered = 0;
}

static inline void stage_add(struct ltran *l, struct stage *s, unsigned id, struct rte_mbuf *m)
{
    if (!l->cl[id].used) {
        l->st.drop_unclaimed++;
        rte_pktmbuf_free(m);
        return;
    }
    uint32_t bit = 1u << id;
    if (!(s->touched & bit)) {
        s->touched |= bit;
        s->n[id] = 0;
    } else if (s->n[id] == LTRAN_BURST) {
        stage_flush_one(l, s, id);
    }
    s->m[id][s->n[id]++] = m;
}

/* Classify frame m and stage it for its client(s). from: -1, it came from
 * the port (ARP answers and RSTs go back out of the port); else the client
 * that sent it to another client's address (hairpin: they go back to it). */
static void rx_one(struct ltran *l, struct stage *s, struct tx_batch *tx, struct rte_mbuf *m, int from)
{
    if (m->nb_segs != 1) {
        l->st.drop_other++;
        rte_pktmbuf_free(m);
        return;
    }
    uint8_t *f = rte_pktmbuf_mtod(m, uint8_t *);
    unsigned id = 0;
    uint32_t mask = 0;
    switch (ldisp_rx(&l->disp, f, m->data_len, &id, &mask)) {
    case LDISP_CLIENT:
        stage_add(l, s, id, m);
        return;
    case LDISP_CLIENTS:
        for (unsigned i = 0; i < LTRAN_MAX_CLIENTS; i++) {
            if (!(mask & (1u << i)))
                continue;
            struct rte_mbuf *c = rte_pktmbuf_copy(m, l->pool, 0, UINT32_MAX);
            if (c != NULL)
                stage_add(l, s, i, c);
        }
        rte_pktmbuf_free(m);
        return;
    case LDISP_ARP_ANSWER:
        set_len(m, ldisp_arp_reply(f, m->data_len, l->mac));
        m->ol_flags = 0; /* the rx flags mean nothing on tx */
        l->st.arp_answered++;
        if (from >= 0)
            stage_add(l, s, (unsigned)from, m);
        else
            tx_add(l, tx, m);
        return;
    case LDISP_RST: {
        size_t len = ldisp_rst(f, m->data_len);
        l->st.drop_unclaimed++;
        if (len == 0) {
            rte_pktmbuf_free(m);
            return;
        }
        set_len(m, len);
        m->ol_flags = 0;
        l->st.rst_sent++;
        if (from >= 0)
            stage_add(l, s, (unsigned)from, m);
        else
            tx_add(l, tx, m);
        return;
    }
    case LDISP_DROP_UNCLAIMED:
        l->st.drop_unclaimed++;
        rte_pktmbuf_free(m);
        return;
    case LDISP_DROP_OTHER:
        l->st.drop_other++;
        rte_pktmbuf_free(m);
        return;
    }
}

unsigned ltran_fwd_round(struct ltran *l)
{
    uint64_t t0 = rte_rdtsc();
    uint64_t io0 = l->st.io_cycles + l->st.wake_cycles;
    struct rte_mbuf *rx[LTRAN_BURST];
    struct tx_batch tx;
    tx.n = 0;
    uint16_t n = rte_eth_rx_burst(l->port, 0, rx, LTRAN_BURST);
    unsigned moved = n;
    struct stage s;
    s.touched = s.delivered = 0;
    if (n > 0) {
        l->st.io_cycles += rte_rdtsc() - t0; /* an empty poll's is not busy time */
        l->st.rx_frames += n;
        for (uint16_t i = 0; i < n; i++)
            rx_one(l, &s, &tx, rx[i], -1);
        stage_flush(l, &s);
    }
    for (unsigned id = 0; id < LTRAN_MAX_CLIENTS; id++) {
        struct ltran_client *c = &l->cl[id];
        if (!c->used)
            continue;
        struct rte_mbuf *m[LTRAN_BURST];
        unsigned k = rte_ring_sc_dequeue_burst(c->tx, (void **)m, LTRAN_BURST, NULL);
        c->tx_frames += k;
        moved += k;
        if (k > 0)
            l->reply_until = 0; /* an answer came: back to the idle rule (ltran_idle) */
        for (unsigned j = 0; j < k; j++) {
            m[j]->hash.usr = 0; /* ltran's now */
            const uint8_t *f = rte_pktmbuf_mtod(m[j], const uint8_t *);
            ldisp_tx(&l->disp, id, f, m[j]->data_len);
            if (ldisp_local(&l->disp, f, m[j]->data_len)) {
                l->st.hairpin++;
                m[j]->ol_flags = 0;
                rx_one(l, &s, &tx, m[j], (int)id);
            } else {
                tx_add(l, &tx, m[j]);
            }
        }
    }
    stage_flush(l, &s);
    if (tx.n > 0)
        tx_flush(l, &tx);
    if (moved > 0) {
        uint64_t busy = rte_rdtsc() - t0;
        l->st.fwd_frames += moved;
        l->st.busy_cycles += busy;
        uint64_t own = (busy - (l->st.io_cycles + l->st.wake_cycles - io0)) / moved;
        unsigned b = own ? 63u - (unsigned)__builtin_clzll(own) : 0;
        l->st.own_hist[b < LTRAN_HIST_BUCKETS ? b : LTRAN_HIST_BUCKETS - 1] += moved;
    }
    return moved;
}

void ltran_client_free_rings(struct ltran_client *c)
{
    struct rte_ring *rings[2] = {c->rx, c->tx};
    for (int r = 0; r < 2; r++) {
        if (rings[r] == NULL)
            continue;
        void *m;
        while (rte_ring_dequeue(rings[r], &m) == 0) {
            ((struct rte_mbuf *)m)->hash.usr = 0;
            rte_pktmbuf_free((struct rte_mbuf *)m);
        }
        rte_ring_free(rings[r]);
    }
    c->rx = c->tx = NULL;
}

struct reclaim {
    uint32_t tag;
    unsigned n;
};

static void reclaim_one(struct rte_mempool *mp, void *arg, void *obj, unsigned idx)
{
    (void)mp;
    (void)idx;
    struct reclaim *r = arg;
    struct rte_mbuf *m = obj;
    if (m->hash.usr != r->tag)
        return;
    m->hash.usr = 0;
    rte_pktmbuf_free(m);
    r->n++;
}

unsigned ltran_client_reclaim_mbufs(struct ltran *l, const struct ltran_client *c)
{
    struct reclaim r = {.tag = c->tag};
    if (c->tag != 0)
        rte_mempool_obj_iter(l->pool, reclaim_one, &r);
    return r.n;
}
