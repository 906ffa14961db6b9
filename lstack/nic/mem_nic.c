/*
 * mem_nic.c - two ports wired back to back in memory (see nic.h).
 *
 * Owns: a pair of ports that exchange frames through in-process queues, so
 * that two stacks (two private lwIP copies) can talk TCP to each other in a
 * unit test with no DPDK, no hugepages and no root. Frames are malloc'd:
 * this is a test port, not a fast path.
 *
 * Each port has a budget of nb_bufs frames: a frame counts against the port
 * that sent it until the receiver frees it, like an mbuf against its pool.
 * The pair is freed when both ports are closed.
 *
 * Tests may watch the wire (nic_mem_set_tap: every frame a port sends, with
 * the power to take it off the wire) and play a peer of their own
 * (nic_mem_inject: a frame appears in a port's receive queue).
 *
 * For the sanitizers (common/sanitizer.h): a frame's bytes past its length,
 * and a whole released frame (data and the caller's priv area) in the spare
 * list, are poisoned, so ASan reports a read past a received frame or a use
 * of a freed one as it would for heap memory (a recycled fixed-size buffer
 * hides both otherwise). And the frame starts MEM_IP_ALIGN bytes after a
 * 16-byte boundary, so its IPv4 header is aligned (Linux's NET_IP_ALIGN):
 * lwIP's reassembly keeps a pbuf pointer inside the IP header of a queued
 * fragment, and LeakSanitizer follows aligned pointers only.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/inet_csum.h"
#include "common/sanitizer.h"
#include "nic/nic.h"

#define MEM_FRAME_MAX 1536
#define MEM_TX_BATCH 64
#define MEM_IP_ALIGN 2 /* after the 14-byte Ethernet header the IP header is 16-aligned */

struct mem_pair;

struct mem_pkt {
    struct mem_pkt *next;
    struct mem_pair *pair;
    int owner;        /* side whose budget it uses */
    uint16_t len;
    _Alignas(16) uint8_t ip_align[MEM_IP_ALIGN];
    uint8_t data[MEM_FRAME_MAX];
    _Alignas(16) uint8_t priv[]; /* priv_size bytes for the caller */
};

struct mem_port {
    struct nic base;  /* first: ops */
    struct mem_pair *pair;
    int side;
    int open;
    uint8_t mac[6];
    char name[16];
    struct mem_pkt *rx_head, *rx_tail;   /* frames the peer sent us */
    struct mem_pkt *tx_head, *tx_tail;   /* our pending batch */
    unsigned tx_count;
    uint32_t used;                       /* frames counted against us */
    struct nic_stats st;
    struct nic_caps caps;                /* what it plays (nic_mem_set_caps) */
    struct nic_mem_cksum ck;
    nic_mem_tap_fn tap;                  /* sees what we send (tests) */
    void *tap_ctx;
};

struct mem_pair {
    struct mem_port port[2];
    struct mem_pkt *spare;       /* released frames, reused before allocating
                                    (like a pool: no malloc per frame) */
    uint32_t nb_bufs;
    uint16_t priv_size;
    uint16_t burst;
};

static struct mem_port *mem_port(struct nic *n)
{
    return (struct mem_port *)n;
}

static const struct mem_port *mem_port_c(const struct nic *n)
{
    return (const struct mem_port *)n;
}

static void pkt_release(struct mem_pkt *p)
{
    struct mem_pair *pair = p->pair;
    pair->port[p->owner].used--;
    p->next = pair->spare;
    pair->spare = p;
    LSTACK_POISON(p->data, MEM_FRAME_MAX);
    LSTACK_POISON(p->priv, pair->priv_size);
}

/* The IPv4 packet of an Ethernet frame, or NULL; its header length. */
static uint8_t *ipv4_of(uint8_t *f, uint16_t len, size_t *ihl, size_t *tot)
{
    if (len < 34 || f[12] != 0x08 || f[13] != 0x00)
        return NULL;
    uint8_t *ip = f + 14;
    *ihl = (size_t)(ip[0] & 0x0f) * 4;
    *tot = (size_t)ip[2] << 8 | ip[3];
    if ((ip[0] >> 4) != 4 || *ihl < 20 || *tot < *ihl || *tot > (size_t)len - 14)
        return NULL;
    return ip;
}

/* A whole (unfragmented) TCP segment of ip? */
static int whole_tcp(const uint8_t *ip, size_t ihl, size_t tot)
{
    return ip[9] == 6 && (((size_t)ip[6] << 8 | ip[7]) & 0x3fff) == 0 && tot >= ihl + 20;
}

/* Play a NIC that checks checksums: NIC_CKSUM_* for the frame. */
static uint8_t hw_check(struct mem_port *m, uint8_t *f, uint16_t len)
{
    size_t ihl, tot;
    uint8_t *ip = ipv4_of(f, len, &ihl, &tot);
    if (ip == NULL)
        return 0;
    uint8_t fl = inet_csum_add(0, ip, ihl) == 0xffff ? NIC_CKSUM_IP_GOOD : NIC_CKSUM_IP_BAD;
    if (whole_tcp(ip, ihl, tot))
        fl |= inet_tcp_verify(ip, ihl, tot) ? NIC_CKSUM_L4_GOOD : NIC_CKSUM_L4_BAD;
    if (fl & (NIC_CKSUM_IP_BAD | NIC_CKSUM_L4_BAD))
        m->ck.bad++;
    return fl;
}

/* Play a NIC that fills in checksums on send. */
static void hw_fill(struct mem_port *m, uint8_t *f, uint16_t len)
{
    size_t ihl, tot;
    uint8_t *ip = ipv4_of(f, len, &ihl, &tot);
    if (ip == NULL)
        return;
    if (ip[10] != 0 || ip[11] != 0 || (whole_tcp(ip, ihl, tot) && (ip[ihl + 16] != 0 || ip[ihl + 17] != 0)))
        m->ck.prefilled++;
    uint16_t c = inet_ip_csum(ip, ihl);
    ip[10] = (uint8_t)(c >> 8);
    ip[11] = (uint8_t)c;
    if (whole_tcp(ip, ihl, tot)) {
        ip[ihl + 16] = ip[ihl + 17] = 0;
        c = inet_tcp_csum(ip, ihl, tot);
        ip[ihl + 16] = (uint8_t)(c >> 8);
        ip[ihl + 17] = (uint8_t)c;
    }
    m->ck.filled++;
}

/* A new frame of len bytes counted against owner, appended to the list
 * *head / *tail. NULL if out of memory. */
static struct mem_pkt *pkt_new(struct mem_port *owner, uint16_t len, struct mem_pkt **head, struct mem_pkt **tail)
{
    struct mem_pkt *p = owner->pair->spare; /* a released frame first: no malloc per frame */
    if (p != NULL) {
        owner->pair->spare = p->next;
        p->next = NULL;
    } else {
        p = calloc(1, sizeof(*p) + owner->pair->priv_size);
        if (p == NULL)
            return NULL;
    }
    p->pair = owner->pair;
    p->owner = owner->side;
    p->len = len;
    LSTACK_UNPOISON(p->data, len);
    LSTACK_POISON(p->data + len, MEM_FRAME_MAX - len);
    LSTACK_UNPOISON(p->priv, owner->pair->priv_size);
    owner->used++;
    if (*tail != NULL)
        (*tail)->next = p;
    else
        *head = p;
    *tail = p;
    return p;
}

static unsigned mem_rx_burst(struct nic *n, struct nic_pkt *pkts, unsigned max)
{
    struct mem_port *m = mem_port(n);
    unsigned got = 0;
    if (max > m->pair->burst)
        max = m->pair->burst;
    while (got < max && m->rx_head != NULL) {
        struct mem_pkt *p = m->rx_head;
        m->rx_head = p->next;
        if (m->rx_head == NULL)
            m->rx_tail = NULL;
        p->next = NULL;
        m->st.rx_packets++;
        m->st.rx_bytes += p->len;
        pkts[got].handle = p;
        pkts[got].data = p->data;
        pkts[got].len = p->len;
        pkts[got].priv = p->priv;
        pkts[got].cksum = m->caps.rx_cksum ? hw_check(m, p->data, p->len) : 0;
        got++;
    }
    return got;
}

static void mem_pkt_free(struct nic *n, void *handle)
{
    (void)n;
    pkt_release(handle);
}

/* Show each frame of the pending batch to the tap; unlink and free those it
 * takes off the wire. */
static void tap_batch(struct mem_port *m)
{
    struct mem_pkt **link = &m->tx_head;
    m->tx_tail = NULL;
    while (*link != NULL) {
        struct mem_pkt *p = *link;
        if (m->tap(m->tap_ctx, p->data, p->len)) {
            m->tx_tail = p;
            link = &p->next;
        } else {
            *link = p->next;
            pkt_release(p);
        }
    }
}

static unsigned mem_tx_flush(struct nic *n)
{
    struct mem_port *m = mem_port(n);
    struct mem_port *peer = &m->pair->port[1 - m->side];
    unsigned sent = m->tx_count;
    if (m->tx_head == NULL)
        return 0;
    if (!peer->open) { /* cable unplugged: the frames are lost */
        while (m->tx_head != NULL) {
            struct mem_pkt *p = m->tx_head;
            m->tx_head = p->next;
            m->st.drop_tx_full++;
            pkt_release(p);
        }
        m->tx_tail = NULL;
        m->tx_count = 0;
        return 0;
    }
    for (struct mem_pkt *p = m->tx_head; p != NULL; p = p->next) {
        m->st.tx_packets++;
        m->st.tx_bytes += p->len;
        if (m->caps.tx_cksum)
            hw_fill(m, p->data, p->len);
    }
    if (m->tap != NULL)
        tap_batch(m);
    if (m->tx_head != NULL) {
        if (peer->rx_tail != NULL)
            peer->rx_tail->next = m->tx_head;
        else
            peer->rx_head = m->tx_head;
        peer->rx_tail = m->tx_tail;
    }
    m->tx_head = m->tx_tail = NULL;
    m->tx_count = 0;
    return sent;
}

static uint8_t *mem_tx_frame(struct nic *n, uint16_t len)
{
    struct mem_port *m = mem_port(n);
    if (len > MEM_FRAME_MAX) {
        m->st.drop_tx_toolong++;
        return NULL;
    }
    if (m->tx_count == MEM_TX_BATCH)
        mem_tx_flush(n);
    if (m->used >= m->pair->nb_bufs) {
        m->st.drop_tx_nombuf++;
        return NULL;
    }
    struct mem_pkt *p = pkt_new(m, len, &m->tx_head, &m->tx_tail);
    if (p == NULL) {
        m->st.drop_tx_nombuf++;
        return NULL;
    }
    m->tx_count++;
    return p->data;
}

static void mem_get_stats(const struct nic *n, struct nic_stats *s)
{
    const struct mem_port *m = mem_port_c(n);
    *s = m->st;
    s->mbuf_total = m->pair->nb_bufs;
    s->mbuf_free = m->pair->nb_bufs - m->used;
}

static void mem_mac(const struct nic *n, uint8_t mac[6])
{
    memcpy(mac, mem_port_c(n)->mac, 6);
}

static const char *mem_name(const struct nic *n)
{
    return mem_port_c(n)->name;
}

static void free_list(struct mem_pkt *p)
{
    while (p != NULL) {
        struct mem_pkt *next = p->next;
        pkt_release(p);
        p = next;
    }
}

static void mem_close(struct nic *n)
{
    struct mem_port *m = mem_port(n);
    struct mem_pair *pair = m->pair;
    free_list(m->rx_head);
    free_list(m->tx_head);
    m->rx_head = m->rx_tail = m->tx_head = m->tx_tail = NULL;
    m->open = 0;
    if (!pair->port[0].open && !pair->port[1].open) {
        while (pair->spare != NULL) {
            struct mem_pkt *p = pair->spare;
            pair->spare = p->next;
            free(p);
        }
        free(pair);
    }
}

static void mem_caps(const struct nic *n, struct nic_caps *c)
{
    *c = mem_port_c(n)->caps;
}

void nic_mem_set_caps(struct nic *n, const struct nic_caps *caps)
{
    mem_port(n)->caps = *caps;
}

void nic_mem_cksum_counts(const struct nic *n, struct nic_mem_cksum *out)
{
    *out = mem_port_c(n)->ck;
}

static const struct nic_ops mem_nic_ops = {
    .rx_burst = mem_rx_burst,
    .pkt_free = mem_pkt_free,
    .tx_frame = mem_tx_frame,
    .tx_flush = mem_tx_flush,
    .get_stats = mem_get_stats,
    .mac = mem_mac,
    .name = mem_name,
    .close = mem_close,
    .caps = mem_caps,
};

int nic_mem_pair(uint32_t nb_bufs, uint16_t priv_size, uint16_t burst, struct nic **a, struct nic **b)
{
    struct mem_pair *pair = calloc(1, sizeof(*pair));
    if (pair == NULL)
        return -1;
    pair->nb_bufs = nb_bufs;
    pair->priv_size = (uint16_t)((priv_size + 15u) & ~15u);
    pair->burst = burst ? burst : 32;
    for (int i = 0; i < 2; i++) {
        struct mem_port *m = &pair->port[i];
        m->base.ops = &mem_nic_ops;
        m->pair = pair;
        m->side = i;
        m->open = 1;
        uint8_t mac[6] = {0x02, 0, 0, 0, 0, (uint8_t)(i + 1)};
        memcpy(m->mac, mac, 6);
        snprintf(m->name, sizeof(m->name), "mem%d", i);
        m->caps = (struct nic_caps){.mtu = 1500};
    }
    *a = &pair->port[0].base;
    *b = &pair->port[1].base;
    return 0;
}

void nic_mem_set_tap(struct nic *n, nic_mem_tap_fn fn, void *ctx)
{
    struct mem_port *m = mem_port(n);
    m->tap = fn;
    m->tap_ctx = ctx;
}

int nic_mem_inject(struct nic *n, const uint8_t *frame, uint16_t len)
{
    struct mem_port *m = mem_port(n);
    struct mem_port *peer = &m->pair->port[1 - m->side];
    if (len > MEM_FRAME_MAX || peer->used >= m->pair->nb_bufs)
        return -1;
    struct mem_pkt *p = pkt_new(peer, len, &m->rx_head, &m->rx_tail);
    if (p == NULL)
        return -1;
    memcpy(p->data, frame, len);
    return 0;
}
