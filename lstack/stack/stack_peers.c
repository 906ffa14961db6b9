/*
 * stack_peers.c - one stack among several in a process, each on its own
 * queue of one port: which stack a received frame belongs to,
 * the handover of frames that reached the wrong queue, and ARP replies
 * shared with every stack.
 *
 * Threads: no stack touches another's lwIP, so that the rounds of the
 * group run in parallel, each under its own stack's lock: the owner of a
 * 4-tuple is read from the stacks' flow directories (stack/flow_dir.h), a
 * copy for another stack's lwIP goes into its mailbox; the inbox and
 * outbox of the handover are lock-free (one consumer, many producers).
 * Design: docs/design.md#several-stacks-on-one-port-share-arp-and-hand-frames-over
 * Design: docs/design.md#copies-for-another-stacks-lwip-go-to-its-mailbox
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "filter/frame_flow.h"
#include "nic/handover.h"
#include "nic/steer.h"
#include "stack/flow_dir.h"
#include "stack/stack_priv.h"

/*
 * Which stack owns a TCP segment: the one whose connection table (lwIP's
 * PCB hash: active and TIME_WAIT connections) holds its 4-tuple; when none
 * does (a SYN to a listener, which every stack has, or a stray segment)
 * the stack that received it. On a port whose hash we can compute the
 * frames of a connection reach its stack's queue, and the lookup finds it
 * at home; on a port whose hash is opaque (af_packet's fanout, a tap) an
 * outgoing connection's replies, and any flow the port moves (af_packet's
 * rollover), land anywhere: the receiving stack forwards them through the
 * handover (nic/handover.h, reached through liblstack_dpdk.so's
 * nic_handover_api) to the owner's inbox, never drops them. The owner
 * takes its inbox before its own burst, in the same round, and never hands
 * a frame on again (a connection that went in between: its own lwIP
 * answers, as it would a stray segment).
 *
 * Ephemeral ports: each stack's lwIP picks its own local ports, and checks
 * only its own connections; the group splits the range (the kernel's
 * ip_local_port_range) into one disjoint part per stack, or two stacks
 * would connect to one peer from one port (the 4-tuple of two connections:
 * their frames would all go to one of them). On a port whose hash we can
 * compute (RSS with a known key and table: nic/steer.h), an outgoing
 * connection takes a port of its stack's part whose replies the NIC puts
 * on its stack's own queue (stack_pick_port; about one port in n
 * qualifies), so its frames need no handover; on an opaque port lwIP picks
 * its own and the handover carries the replies.
 *
 * ARP: a reply to stack B's request may reach A's queue (a port spreads
 * ARP by its own hash). A gives every other stack a copy (ARP frames are 60
 * bytes) through that stack's mailbox, so each learns every neighbour whose
 * reply any queue received. Requests are not shared: every stack would
 * answer.
 *
 * Which stack holds a 4-tuple: that stack's flow directory (the 4-tuples
 * of its PCB hash, published by its lwIP through a hook, read without its
 * lock). A copy for another stack's lwIP (an ARP reply, a TCP datagram
 * reassembled for its connection) goes into its mailbox: a lock-free list
 * that any stack pushes to and the owner takes whole at the start of its
 * next round, under its own lock.
 */

/* An inbox holds this many frames (several bursts of every other stack). */
#define PEERS_INBOX_SLOTS 1024u

/* A copy for another stack's lwIP, in its mailbox. */
enum { MAIL_ARP, MAIL_TCP4 };
struct peer_mail {
    struct peer_mail *next;
    uint8_t kind;                      /* MAIL_ARP: an ARP reply frame; MAIL_TCP4: an IPv4 datagram */
    uint16_t len;
    uint8_t data[];
};

struct stack_peers {
    struct stack *const *all;          /* the group, indexed by stack number */
    unsigned n;
    unsigned self;                     /* this stack's index in all */
    const struct nic_handover_api *ho;
    struct nic_handover *inbox;        /* this stack's */
    struct nic_handover_out *outbox;   /* to every stack's inbox */
    unsigned from_inbox;               /* frames of the current burst taken from the inbox */
    uint64_t arp_shared;               /* ARP replies copied to the other stacks */
    uint64_t frag_given;               /* reassembled TCP datagrams given to another stack */
    const struct nic_steer *steer;     /* how the port spreads flows (NULL: not known) */
    uint16_t eph_lo, eph_hi;           /* this stack's part of the ephemeral range */
    uint32_t pick_next;                /* where stack_pick_port's next search starts */
    uint64_t ports_steered;            /* local ports stack_pick_port gave out */
    struct flow_dir flows;             /* the 4-tuples this stack holds, for the others */
    struct peer_mail *mail;            /* copies from the others (a lock-free LIFO: atomic) */
};

unsigned stack_peers_rx(struct stack *s, struct nic_pkt *pkts)
{
    struct stack_peers *p = s->peers;
    unsigned waiting = p->ho->retry(p->outbox);
    struct nic_handover_frame f[s->burst];
    unsigned n = p->ho->take(p->inbox, f, s->burst);
    /* Any queue of the port frees any of its buffers (nic/handover.h): the
     * frame is now this stack's like one of its own queue's. */
    for (unsigned i = 0; i < n; i++)
        pkts[i] = f[i].pkt;
    p->from_inbox = n;
    /* Back-pressure: no new burst while frames wait for an inbox (the
     * outbox holds one burst). */
    if (waiting == 0 && n < s->burst)
        n += s->nic->ops->rx_burst(s->nic, pkts + n, s->burst - n);
    return n;
}

/* The stack other than s whose flow directory holds t, or -1. */
static int owner_of(const struct stack_peers *p, const struct frame_flow_tuple *t)
{
    for (unsigned i = 0; i < p->n; i++)
        if (i != p->self && flow_dir_has(&p->all[i]->peers->flows, t))
            return (int)i;
    return -1;
}

/* lwIP's hook: a connection entered or left s's PCB hash. */
static void flow_note(void *ctx, uint32_t local_ip, uint16_t local_port, uint32_t remote_ip, uint16_t remote_port,
                      int add)
{
    struct stack *s = ctx;
    const struct frame_flow_tuple t = {
        .local_ip = local_ip, .remote_ip = remote_ip, .local_port = local_port, .remote_port = remote_port};
    if (add)
        flow_dir_add(&s->peers->flows, &t);
    else
        flow_dir_del(&s->peers->flows, &t);
}

/* Put a copy of data[0..len) into stack to's mailbox. Returns 0, or -1
 * (no memory: counted on the sender as lwIP's refusal). */
static int mail_post(struct stack *s, unsigned to, uint8_t kind, const struct pbuf *p, const uint8_t *data,
                     uint16_t len)
{
    struct peer_mail *m = malloc(sizeof(*m) + len);
    if (m == NULL) {
        s->st.lwip_input_err++;
        return -1;
    }
    m->kind = kind;
    m->len = len;
    if (p != NULL)
        s->L.pbuf_copy_partial(p, m->data, len, 0);
    else
        memcpy(m->data, data, len);
    struct stack_peers *o = s->peers->all[to]->peers;
    struct peer_mail *head = __atomic_load_n(&o->mail, __ATOMIC_RELAXED);
    do {
        m->next = head;
    } while (!__atomic_compare_exchange_n(&o->mail, &head, m, true, __ATOMIC_RELEASE, __ATOMIC_RELAXED));
    return 0;
}

/* Under s's lock, at its round's start: the copies the others sent, in
 * the order they came, into s's lwIP. An ARP reply at its Ethernet input
 * (the reply is for our address, so lwIP learns the sender); a TCP
 * datagram at its IPv4 input with its TCP checksum check on (the checksum
 * of a fragmented segment is checked on the whole datagram, as in
 * stack_netif_input). */
static void mail_take(struct stack *s)
{
    struct stack_peers *p = s->peers;
    if (__atomic_load_n(&p->mail, __ATOMIC_RELAXED) == NULL)
        return;
    struct peer_mail *m = __atomic_exchange_n(&p->mail, NULL, __ATOMIC_ACQUIRE), *fifo = NULL;
    while (m != NULL) { /* LIFO to FIFO */
        struct peer_mail *next = m->next;
        m->next = fifo;
        fifo = m;
        m = next;
    }
    while (fifo != NULL) {
        m = fifo;
        fifo = m->next;
        struct pbuf *q = s->L.pbuf_alloc(PBUF_RAW, m->len, PBUF_RAM);
        if (q == NULL) {
            s->st.lwip_input_err++;
            free(m);
            continue;
        }
        memcpy(q->payload, m->data, m->len); /* PBUF_RAM: one contiguous pbuf */
        err_t e;
        if (m->kind == MAIL_ARP) {
            e = s->netif.input(q, &s->netif);
        } else {
            q->if_idx = netif_get_index(&s->netif); /* as its own input sets it (stack_netif_input) */
            NETIF_SET_CHECKSUM_CTRL(&s->netif, s->netif.chksum_flags | NETIF_CHECKSUM_CHECK_TCP);
            e = s->L.ip4_input(q, &s->netif);
            NETIF_SET_CHECKSUM_CTRL(&s->netif, s->netif.chksum_flags & (u16_t)~NETIF_CHECKSUM_CHECK_TCP);
        }
        if (e != ERR_OK) {
            s->st.lwip_input_err++;
            s->L.pbuf_free(q);
        }
        free(m);
    }
}

static void mail_free(struct stack_peers *p)
{
    struct peer_mail *m = __atomic_exchange_n(&p->mail, NULL, __ATOMIC_ACQUIRE);
    while (m != NULL) {
        struct peer_mail *next = m->next;
        free(m);
        m = next;
    }
}

/* Give every other stack a copy of an ARP reply. */
static void share_arp(struct stack *s, const struct nic_pkt *pkt)
{
    struct stack_peers *p = s->peers;
    for (unsigned i = 0; i < p->n; i++)
        if (i != p->self)
            mail_post(s, i, MAIL_ARP, NULL, pkt->data, pkt->len);
    p->arp_shared++;
}

/* lwIP's route for a TCP datagram s reassembled that has no connection in
 * s (lstack_reass_route_fn, port/lwip_port.h): a copy into the owner's
 * mailbox. Returns 1 if another stack holds the 4-tuple (the datagram is
 * then the owner's, or dropped and counted if there is no memory for it),
 * 0 if none does (s answers it as a stray segment). s's round, under its
 * lock. */
static int reass_route(void *ctx, const struct pbuf *p, uint32_t local_ip, uint16_t local_port, uint32_t remote_ip,
                       uint16_t remote_port)
{
    struct stack *s = ctx;
    struct stack_peers *pe = s->peers;
    const struct frame_flow_tuple t = {
        .local_ip = local_ip, .remote_ip = remote_ip, .local_port = local_port, .remote_port = remote_port};
    int to = owner_of(pe, &t);
    if (to < 0)
        return 0;
    if (mail_post(s, (unsigned)to, MAIL_TCP4, p, NULL, p->tot_len) == 0)
        pe->frag_given++;
    return 1;
}

unsigned stack_peers_route(struct stack *s, struct nic_pkt *pkts, unsigned n)
{
    struct stack_peers *p = s->peers;
    mail_take(s); /* what the others sent since the last round, before this burst */
    unsigned kept = p->from_inbox; /* frames from the inbox are ours */
    for (unsigned i = p->from_inbox; i < n; i++) {
        struct frame_flow_tuple t;
        enum frame_flow_kind k = frame_flow_classify(pkts[i].data, pkts[i].len, &t);
        if (k == FRAME_FLOW_TCP4 &&
            s->L.lstack_pcb_hash_lookup(t.local_ip, t.local_port, t.remote_ip, t.remote_port) == NULL) {
            int to = owner_of(p, &t);
            struct nic_handover_frame f = {.pkt = pkts[i], .origin = s->nic};
            /* -ENOBUFS cannot happen: the burst was taken with an empty
             * outbox, which holds one burst; keep the frame if it did. */
            if (to >= 0 && p->ho->forward(p->outbox, (unsigned)to, &f) == 0)
                continue;
        } else if (k == FRAME_FLOW_ARP_REPLY) {
            share_arp(s, &pkts[i]);
        }
        pkts[kept++] = pkts[i];
    }
    p->from_inbox = 0;
    return kept;
}

int stack_group_join(struct stack *const *all, unsigned n, const struct nic_handover_api *ho, const int *node,
                     const struct nic_steer *steer, char *err, size_t errlen)
{
    struct nic_handover *inbox[n];
    struct stack_peers *peers[n];
    memset(inbox, 0, sizeof(inbox));
    memset(peers, 0, sizeof(peers));
    unsigned i;
    for (i = 0; i < n; i++) {
        inbox[i] = ho->create(PEERS_INBOX_SLOTS, node != NULL ? node[i] : -1, err, errlen);
        if (inbox[i] == NULL)
            goto fail;
    }
    for (i = 0; i < n; i++) {
        peers[i] = calloc(1, sizeof(*peers[i]));
        if (peers[i] == NULL) {
            snprintf(err, errlen, "out of memory");
            goto fail;
        }
        peers[i]->outbox = ho->out_create(inbox, n, all[i]->burst, err, errlen);
        if (peers[i]->outbox == NULL)
            goto fail;
        peers[i]->all = all;
        peers[i]->n = n;
        peers[i]->self = i;
        peers[i]->ho = ho;
        peers[i]->inbox = inbox[i];
        peers[i]->steer = steer != NULL && steer->kind == NIC_STEER_TOEPLITZ && steer->nb_queues == n ? steer : NULL;
        if (flow_dir_init(&peers[i]->flows, all[i]->max_socks) != 0) {
            snprintf(err, errlen, "out of memory");
            goto fail;
        }
    }
    /* Disjoint ephemeral ports: two stacks must never pick the same local
     * port for one peer (the 4-tuple would name two connections). */
    for (i = 0; i < n; i++) {
        uint32_t lo = all[i]->port_lo, span = (uint32_t)all[i]->port_hi - lo + 1;
        uint32_t a = lo + span * i / n, b = lo + span * (i + 1) / n - 1;
        if (span < n || all[i]->L.lstack_lwip_port_range((uint16_t)a, (uint16_t)b) != 0) {
            snprintf(err, errlen, "the ephemeral port range %u-%u cannot be shared by %u stacks", lo,
                     all[i]->port_hi, n);
            goto fail;
        }
        peers[i]->eph_lo = (uint16_t)a;
        peers[i]->eph_hi = (uint16_t)b;
    }
    for (i = 0; i < n; i++) {
        all[i]->peers = peers[i];
        all[i]->L.lstack_lwip_reass_route(reass_route, all[i]);
        all[i]->L.lstack_lwip_flow_hook(flow_note, all[i]);
    }
    return 0;
fail:
    for (i = 0; i < n; i++) {
        if (peers[i] != NULL && peers[i]->outbox != NULL)
            ho->out_free(peers[i]->outbox);
        if (peers[i] != NULL)
            flow_dir_free(&peers[i]->flows);
        free(peers[i]);
    }
    for (i = 0; i < n; i++)
        if (inbox[i] != NULL)
            ho->free(inbox[i]);
    return -1;
}

void stack_group_leave(struct stack *const *all, unsigned n)
{
    /* Outboxes first: their waiting frames go to pkt_free, not to an
     * inbox about to go. */
    for (unsigned i = 0; i < n; i++)
        if (all[i] != NULL && all[i]->peers != NULL)
            all[i]->peers->ho->out_free(all[i]->peers->outbox);
    for (unsigned i = 0; i < n; i++) {
        if (all[i] == NULL || all[i]->peers == NULL)
            continue;
        all[i]->L.lstack_lwip_reass_route(NULL, NULL);
        all[i]->L.lstack_lwip_flow_hook(NULL, NULL);
    }
    for (unsigned i = 0; i < n; i++) {
        if (all[i] == NULL || all[i]->peers == NULL)
            continue;
        all[i]->peers->ho->free(all[i]->peers->inbox);
        mail_free(all[i]->peers);
        flow_dir_free(&all[i]->peers->flows);
        free(all[i]->peers);
        all[i]->peers = NULL;
    }
}

void stack_peers_stats(const struct stack *s, struct stack_stats *st)
{
    const struct stack_peers *p = s->peers;
    if (p == NULL)
        return;
    struct nic_handover_stats hs;
    p->ho->stats(p->inbox, p->outbox, &hs);
    st->handover_in = hs.in;
    st->handover_out = hs.out;
    st->handover_waited = hs.waited;
    st->arp_shared = p->arp_shared;
    st->frag_given = p->frag_given;
    st->ports_steered = p->ports_steered;
}

uint16_t stack_pick_port(struct stack *s, uint32_t remote, uint16_t rport)
{
    struct stack_peers *p = s->peers;
    if (p == NULL || p->steer == NULL)
        return 0;
    bool steered = false;
    int port = nic_steer_pick_port(p->steer, ip4_addr_get_u32(netif_ip4_addr(&s->netif)), remote, rport, p->self, p->eph_lo, p->eph_hi,
                                   p->pick_next, NULL, NULL, &steered);
    if (port <= 0 || !steered)
        return 0;
    p->pick_next = (uint32_t)(port - p->eph_lo) + 1u; /* the next search, and a retry, start past it */
    p->ports_steered++;
    return (uint16_t)port;
}
