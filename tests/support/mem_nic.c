/*
 * mem_nic.c - two ports wired back to back in memory (see mem_nic.h).
 *
 * Owns: a pair of ports that exchange frames through in-process queues, so
 * that two stacks (two private lwIP copies) can talk TCP to each other in a
 * unit test with no DPDK, no hugepages and no root. Frames are malloc'd:
 * this is a test port, not a fast path.
 *
 * Each port has a budget of nb_bufs frames: a frame counts against the port
 * that sent it until the receiver frees it, like an mbuf against its pool.
 * The pair is freed when both ports are closed.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/inet_csum.h"
#include "common/sanitizer.h"
#include "mem_nic.h"

/*
 * Tests may watch the wire (nic_mem_set_tap: every frame a port sends, with
 * the power to take it off the wire) and play a peer of their own
 * (nic_mem_inject: a frame appears in a port's receive queue).
 *
 * A port may play a NIC's offloads (nic_mem_set_caps): checksums, and TSO:
 * a TSO frame is held in a chain of frame buffers (as an mbuf chain would
 * be) and cut at tx_flush into MSS frames with their own IPv4 id, length
 * and checksum and TCP sequence, flags and checksum; the tap and the peer
 * see only those, as on a wire.
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

#define MEM_FRAME_MAX 1536
#define MEM_TX_BATCH 64
#define MEM_IP_ALIGN 2 /* after the 14-byte Ethernet header the IP header is 16-aligned */

struct mem_pair;

struct mem_pkt {
    struct mem_pkt *next;
    struct mem_pkt *more;  /* a TSO frame's next buffer (NULL: last, or not TSO) */
    struct mem_pair *pair;
    int owner;        /* side whose budget it uses */
    uint16_t len;     /* bytes in this buffer */
    uint16_t tso_mss; /* a TSO frame's first buffer: cut by this MSS at tx_flush */
    uint32_t tot_len; /* ... and the frame's length over all its buffers */
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
    struct nic_mem_tso tso;
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

/* Release p (and the rest of its TSO frame). */
static void pkt_release(struct mem_pkt *p)
{
    while (p != NULL) {
        struct mem_pkt *more = p->more;
        struct mem_pair *pair = p->pair;
        pair->port[p->owner].used--;
        p->more = NULL;
        p->next = pair->spare;
        pair->spare = p;
        LSTACK_POISON(p->data, MEM_FRAME_MAX);
        LSTACK_POISON(p->priv, pair->priv_size);
        p = more;
    }
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
    inet_frame_csum_fill(f, len);
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
    p->more = NULL;
    p->tso_mss = 0;
    p->tot_len = len;
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

/* Copy len bytes from offset off of the TSO frame f (its buffers) to dst. */
static void frame_copy(const struct mem_pkt *f, uint32_t off, uint8_t *dst, uint32_t len)
{
    while (f != NULL && off >= f->len) {
        off -= f->len;
        f = f->more;
    }
    while (len > 0 && f != NULL) {
        uint32_t k = f->len - off < len ? f->len - off : len;
        memcpy(dst, f->data + off, k);
        dst += k;
        len -= k;
        off = 0;
        f = f->more;
    }
}

static uint16_t get16(const uint8_t *b)
{
    return (uint16_t)(b[0] << 8 | b[1]);
}

static void put16(uint8_t *b, uint32_t v)
{
    b[0] = (uint8_t)(v >> 8);
    b[1] = (uint8_t)v;
}

/* Play a NIC's TSO: cut the TSO frame f into frames of f->tso_mss payload
 * bytes, appended to *head / *tail, each with its IPv4 id (the frame's plus
 * its index) and total length, TCP sequence number, FIN and PSH only on the
 * last and CWR only on the first, and both checksums filled in. Returns the
 * frames made, 0 if f cannot be cut (counted as bad; nothing appended). */
static unsigned tso_cut(struct mem_port *m, const struct mem_pkt *f, struct mem_pkt **head, struct mem_pkt **tail)
{
    const uint8_t *h = f->data;
    if (f->len < 34 || h[12] != 0x08 || h[13] != 0x00 || (h[14] >> 4) != 4 || h[23] != 6)
        goto bad;
    size_t ihl = (size_t)(h[14] & 0x0f) * 4;
    if (ihl < 20 || 14 + ihl + 20 > f->len)
        goto bad;
    const uint8_t *tcp = h + 14 + ihl;
    size_t hdr = 14 + ihl + (size_t)(tcp[12] >> 4) * 4;
    uint32_t mss = f->tso_mss;
    if (hdr > f->len || hdr > f->tot_len || hdr + mss > MEM_FRAME_MAX)
        goto bad;
    if (h[24] != 0 || h[25] != 0 || tcp[16] != 0 || tcp[17] != 0)
        m->ck.prefilled++; /* the stack should have left them to the port */
    uint32_t payload = f->tot_len - (uint32_t)hdr;
    unsigned count = payload == 0 ? 1 : (payload + mss - 1) / mss;
    uint32_t seq = (uint32_t)tcp[4] << 24 | (uint32_t)tcp[5] << 16 | (uint32_t)tcp[6] << 8 | tcp[7];
    uint16_t id = get16(h + 18);
    struct mem_pkt *first = NULL, *last = NULL;
    for (unsigned i = 0; i < count; i++) {
        uint32_t plen = payload - i * mss < mss ? payload - i * mss : mss;
        struct mem_pkt *q = pkt_new(m, (uint16_t)(hdr + plen), &first, &last);
        if (q == NULL) {
            while (first != NULL) {
                struct mem_pkt *next = first->next;
                pkt_release(first);
                first = next;
            }
            goto bad;
        }
        memcpy(q->data, h, hdr);
        frame_copy(f, (uint32_t)hdr + i * mss, q->data + hdr, plen);
        uint8_t *ip = q->data + 14, *t = ip + ihl;
        put16(ip + 2, (uint32_t)(hdr - 14 + plen));
        put16(ip + 4, (uint16_t)(id + i));
        uint32_t s = seq + i * mss;
        t[4] = (uint8_t)(s >> 24);
        t[5] = (uint8_t)(s >> 16);
        t[6] = (uint8_t)(s >> 8);
        t[7] = (uint8_t)s;
        if (i + 1 < count)
            t[13] &= (uint8_t)~0x09; /* FIN, PSH: the last frame's */
        if (i > 0)
            t[13] &= (uint8_t)~0x80; /* CWR: the first frame's */
        ip[10] = ip[11] = t[16] = t[17] = 0;
        hw_fill(m, q->data, q->len);
    }
    if (*tail != NULL)
        (*tail)->next = first;
    else
        *head = first;
    *tail = last;
    m->tso.frames++;
    m->tso.pieces += count;
    return count;
bad:
    m->tso.bad++;
    return 0;
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
    /* The frames the stack handed over; a TSO frame is cut here. */
    struct mem_pkt *head = NULL, *tail = NULL;
    while (m->tx_head != NULL) {
        struct mem_pkt *p = m->tx_head;
        m->tx_head = p->next;
        p->next = NULL;
        m->st.tx_packets++;
        m->st.tx_bytes += p->tot_len;
        if (p->tso_mss != 0) {
            tso_cut(m, p, &head, &tail);
            pkt_release(p);
            continue;
        }
        if (m->caps.tx_cksum)
            hw_fill(m, p->data, p->len);
        if (tail != NULL)
            tail->next = p;
        else
            head = p;
        tail = p;
    }
    m->tx_head = head;
    m->tx_tail = tail;
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

static unsigned mem_tx_frame_tso(struct nic *n, uint32_t len, uint16_t mss, struct nic_iov *iov, unsigned max)
{
    struct mem_port *m = mem_port(n);
    unsigned need = (len + MEM_FRAME_MAX - 1) / MEM_FRAME_MAX;
    if (m->caps.tso_max == 0 || mss == 0 || (m->caps.tso_mss_max != 0 && mss > m->caps.tso_mss_max) ||
        len > m->caps.tso_max + 14u + 120u || len > 0xffff || need > max) {
        m->st.drop_tx_toolong++;
        return 0;
    }
    if (m->tx_count == MEM_TX_BATCH)
        mem_tx_flush(n);
    if (m->used + need > m->pair->nb_bufs) {
        m->st.drop_tx_nombuf++;
        return 0;
    }
    struct mem_pkt *first = NULL, *last = NULL;
    uint32_t left = len;
    for (unsigned i = 0; i < need; i++) {
        uint16_t k = (uint16_t)(left < MEM_FRAME_MAX ? left : MEM_FRAME_MAX);
        struct mem_pkt *p = pkt_new(m, k, &first, &last);
        if (p == NULL) {
            while (first != NULL) {
                struct mem_pkt *next = first->next;
                pkt_release(first);
                first = next;
            }
            m->st.drop_tx_nombuf++;
            return 0;
        }
        iov[i] = (struct nic_iov){p->data, k};
        left -= k;
    }
    for (struct mem_pkt *p = first; p != NULL; p = p->next) /* next links -> the frame's buffers */
        p->more = p->next;
    first->next = NULL;
    first->tso_mss = mss;
    first->tot_len = len;
    if (m->tx_tail != NULL)
        m->tx_tail->next = first;
    else
        m->tx_head = first;
    m->tx_tail = first;
    m->tx_count++;
    return need;
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

void nic_mem_tso_counts(const struct nic *n, struct nic_mem_tso *out)
{
    *out = mem_port_c(n)->tso;
}

static const struct nic_ops mem_nic_ops = {
    .rx_burst = mem_rx_burst,
    .pkt_free = mem_pkt_free,
    .tx_frame = mem_tx_frame,
    .tx_frame_tso = mem_tx_frame_tso,
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

int nic_mem_prealloc(struct nic *n, uint32_t count)
{
    struct mem_pair *pair = mem_port(n)->pair;
    for (uint32_t i = 0; i < count; i++) {
        struct mem_pkt *p = calloc(1, sizeof(*p) + pair->priv_size);
        if (p == NULL)
            return -1;
        p->next = pair->spare;
        pair->spare = p;
        LSTACK_POISON(p->data, MEM_FRAME_MAX);
        LSTACK_POISON(p->priv, pair->priv_size);
    }
    return 0;
}

void nic_mem_set_tap(struct nic *n, nic_mem_tap_fn fn, void *ctx)
{
    struct mem_port *m = mem_port(n);
    m->tap = fn;
    m->tap_ctx = ctx;
}

void nic_mem_set_burst(struct nic *n, uint16_t burst)
{
    mem_port(n)->pair->burst = burst ? burst : 32;
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
