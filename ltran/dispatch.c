/*
 * dispatch.c - ltran's dispatch table and frame classification (see
 * dispatch.h for the design and what was rejected). Pure.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/inet_csum.h"
#include "dispatch.h"

#define ETH_HLEN 14
#define ETYPE_IPV4 0x0800
#define ETYPE_ARP 0x0806
#define TCP_FIN 0x01
#define TCP_SYN 0x02
#define TCP_RST 0x04
#define TCP_ACK 0x10

static inline uint16_t rd16(const uint8_t *p)
{
    return (uint16_t)(p[0] << 8 | p[1]);
}

static inline uint32_t rd32n(const uint8_t *p) /* as stored: network order kept */
{
    uint32_t v;
    memcpy(&v, p, 4);
    return v;
}

static inline uint16_t rd16n(const uint8_t *p)
{
    uint16_t v;
    memcpy(&v, p, 2);
    return v;
}

int ldisp_init(struct ldisp *d, uint32_t cap)
{
    memset(d, 0, sizeof(*d));
    uint32_t c = 64;
    while (c < cap && c < (1u << 30))
        c <<= 1;
    d->conn = calloc(c, sizeof(*d->conn));
    if (d->conn == NULL)
        return -ENOMEM;
    d->cap = c;
    return 0;
}

void ldisp_free(struct ldisp *d)
{
    free(d->conn);
    d->conn = NULL;
}

static inline uint32_t conn_hash(uint32_t lip, uint16_t lport, uint32_t rip, uint16_t rport)
{
    uint64_t k = ((uint64_t)lip << 32 | rip) ^ ((uint64_t)lport << 16 | rport) * 0x9e3779b97f4a7c15ull;
    k ^= k >> 29;
    k *= 0xbf58476d1ce4e5b9ull;
    k ^= k >> 32;
    return (uint32_t)k;
}

/* Slot of the 4-tuple, or -1. */
static long conn_find(const struct ldisp *d, uint32_t lip, uint16_t lport, uint32_t rip, uint16_t rport)
{
    uint32_t mask = d->cap - 1;
    uint32_t i = conn_hash(lip, lport, rip, rport) & mask;
    for (uint32_t n = 0; n < d->cap; n++, i = (i + 1) & mask) {
        const struct ldisp_conn *c = &d->conn[i];
        if (c->state == 0)
            return -1;
        if (c->state == 1 && c->lip == lip && c->rip == rip && c->lport == lport && c->rport == rport)
            return (long)i;
    }
    return -1;
}

int ldisp_conn_owner(const struct ldisp *d, uint32_t lip, uint16_t lport, uint32_t rip, uint16_t rport)
{
    long i = conn_find(d, lip, lport, rip, rport);
    return i < 0 ? -1 : d->conn[i].id;
}

/* Rebuild the table without its deleted slots (in place, through a copy). */
static void conn_rehash(struct ldisp *d)
{
    struct ldisp_conn *old = malloc(sizeof(*old) * d->cap);
    if (old == NULL)
        return; /* keep the tombstones; lookups stay right */
    memcpy(old, d->conn, sizeof(*old) * d->cap);
    memset(d->conn, 0, sizeof(*old) * d->cap);
    uint32_t mask = d->cap - 1;
    for (uint32_t k = 0; k < d->cap; k++) {
        if (old[k].state != 1)
            continue;
        uint32_t i = conn_hash(old[k].lip, old[k].lport, old[k].rip, old[k].rport) & mask;
        while (d->conn[i].state != 0)
            i = (i + 1) & mask;
        d->conn[i] = old[k];
    }
    d->deleted = 0;
    free(old);
}

static void conn_claim(struct ldisp *d, unsigned id, uint32_t lip, uint16_t lport, uint32_t rip, uint16_t rport)
{
    long at = conn_find(d, lip, lport, rip, rport);
    if (at >= 0) {
        struct ldisp_conn *c = &d->conn[at];
        if (c->id != id) { /* the 4-tuple is reused by another client */
            d->owned[c->id]--;
            d->owned[id]++;
            c->id = (uint8_t)id;
        }
        return;
    }
    /* Keep a quarter free: probes stay short. */
    if ((uint64_t)(d->used + d->deleted + 1) * 4 > (uint64_t)d->cap * 3) {
        if (d->deleted > 0)
            conn_rehash(d);
        if ((uint64_t)(d->used + d->deleted + 1) * 4 > (uint64_t)d->cap * 3) {
            d->learn_full++;
            return;
        }
    }
    uint32_t mask = d->cap - 1;
    uint32_t i = conn_hash(lip, lport, rip, rport) & mask;
    while (d->conn[i].state == 1)
        i = (i + 1) & mask;
    if (d->conn[i].state == 2)
        d->deleted--;
    d->conn[i] = (struct ldisp_conn){.lip = lip, .rip = rip, .lport = lport, .rport = rport, .state = 1,
                                     .id = (uint8_t)id};
    d->used++;
    d->owned[id]++;
}

static void conn_release_slot(struct ldisp *d, uint32_t i)
{
    d->owned[d->conn[i].id]--;
    d->conn[i].state = 2;
    d->used--;
    d->deleted++;
}

/* The last byte of an address (network order: its fourth octet). */
static inline unsigned addr_octet(uint32_t ip)
{
    return ((const uint8_t *)&ip)[3];
}

/* addr_filter: a bit per last octet of the registered addresses, so that
 * ldisp_local answers "no" for a frame to a peer without a scan. */
static void filter_rebuild(struct ldisp *d)
{
    memset(d->addr_filter, 0, sizeof(d->addr_filter));
    for (unsigned i = 0; i < LDISP_MAX_CLIENTS; i++)
        if (d->ip[i] != 0)
            d->addr_filter[addr_octet(d->ip[i]) / 64] |= 1ull << (addr_octet(d->ip[i]) % 64);
}

void ldisp_client_add(struct ldisp *d, unsigned id, uint32_t ip)
{
    if (id < LDISP_MAX_CLIENTS) {
        d->ip[id] = ip;
        filter_rebuild(d);
    }
}

void ldisp_client_remove(struct ldisp *d, unsigned id)
{
    if (id >= LDISP_MAX_CLIENTS)
        return;
    d->ip[id] = 0;
    filter_rebuild(d);
    for (unsigned i = 0; i < d->nlis; i++)
        if (d->lis[i].used && d->lis[i].id == id)
            d->lis[i].used = 0;
    if (d->owned[id] > 0)
        for (uint32_t i = 0; i < d->cap; i++)
            if (d->conn[i].state == 1 && d->conn[i].id == id)
                conn_release_slot(d, i);
    if (d->deleted > d->cap / 4)
        conn_rehash(d);
}

static int listen_find(const struct ldisp *d, uint32_t ip, uint16_t port)
{
    for (unsigned i = 0; i < d->nlis; i++)
        if (d->lis[i].used && d->lis[i].port == port && d->lis[i].ip == ip)
            return (int)i;
    return -1;
}

int ldisp_listen(struct ldisp *d, unsigned id, uint32_t ip, uint16_t port, bool on)
{
    if (id >= LDISP_MAX_CLIENTS || d->ip[id] == 0 || ip != d->ip[id])
        return -EINVAL;
    int at = listen_find(d, ip, port);
    if (!on) {
        if (at >= 0 && d->lis[at].id == id)
            d->lis[at].used = 0;
        return 0;
    }
    if (at >= 0)
        return d->lis[at].id == id ? 0 : -EADDRINUSE;
    for (unsigned i = 0; i < LDISP_MAX_LISTEN; i++) {
        if (d->lis[i].used)
            continue;
        d->lis[i] = (struct ldisp_listen){.ip = ip, .port = port, .used = 1, .id = (uint8_t)id};
        if (i >= d->nlis)
            d->nlis = i + 1;
        return 0;
    }
    return -ENOSPC;
}

unsigned ldisp_listeners(const struct ldisp *d, unsigned id, uint16_t *ports, unsigned max)
{
    unsigned n = 0;
    for (unsigned i = 0; i < d->nlis; i++) {
        if (!d->lis[i].used || d->lis[i].id != id)
            continue;
        if (n < max)
            ports[n] = d->lis[i].port;
        n++;
    }
    return n;
}

/* First client with address ip, or -1. */
static int client_of_ip(const struct ldisp *d, uint32_t ip)
{
    for (unsigned i = 0; i < LDISP_MAX_CLIENTS; i++)
        if (d->ip[i] == ip)
            return (int)i;
    return -1;
}

bool ldisp_local(const struct ldisp *d, const uint8_t *f, size_t len)
{
    if (len < ETH_HLEN + 20)
        return false;
    uint16_t et = rd16(f + 12);
    uint32_t to;
    if (et == ETYPE_IPV4 && (f[ETH_HLEN] >> 4) == 4)
        to = rd32n(f + ETH_HLEN + 16);
    else if (et == ETYPE_ARP && len >= ETH_HLEN + 28 && rd16(f + 20) == 1)
        to = rd32n(f + 38);
    else
        return false;
    if (!(d->addr_filter[addr_octet(to) / 64] & (1ull << (addr_octet(to) % 64))))
        return false;
    return to != 0 && client_of_ip(d, to) >= 0;
}

static enum ldisp_verdict rx_arp(const struct ldisp *d, const uint8_t *f, size_t len, uint32_t *mask)
{
    if (len < ETH_HLEN + 28 || rd16(f + 14) != 1 || rd16(f + 16) != ETYPE_IPV4 || f[18] != 6 || f[19] != 4)
        return LDISP_DROP_OTHER;
    uint32_t tpa = rd32n(f + 38);
    if (tpa == 0)
        return LDISP_DROP_UNCLAIMED;
    uint32_t m = 0;
    for (unsigned i = 0; i < LDISP_MAX_CLIENTS; i++)
        if (d->ip[i] == tpa)
            m |= 1u << i;
    if (m == 0)
        return LDISP_DROP_UNCLAIMED;
    if (rd16(f + 20) == 1) /* request */
        return LDISP_ARP_ANSWER;
    *mask = m;
    return LDISP_CLIENTS;
}

enum ldisp_verdict ldisp_rx(const struct ldisp *d, const uint8_t *f, size_t len, unsigned *id, uint32_t *mask)
{
    if (len < ETH_HLEN)
        return LDISP_DROP_OTHER;
    uint16_t et = rd16(f + 12);
    if (et == ETYPE_ARP)
        return rx_arp(d, f, len, mask);
    if (et != ETYPE_IPV4 || len < ETH_HLEN + 20)
        return LDISP_DROP_OTHER;
    const uint8_t *ip = f + ETH_HLEN;
    size_t ihl = (size_t)(ip[0] & 0x0f) * 4;
    if ((ip[0] >> 4) != 4 || ihl < 20 || len < ETH_HLEN + ihl)
        return LDISP_DROP_OTHER;
    uint32_t dst = rd32n(ip + 16), src = rd32n(ip + 12);
    bool first_frag = (rd16(ip + 6) & 0x1fff) == 0;
    if (ip[9] == 6 && first_frag && len >= ETH_HLEN + ihl + 20) {
        const uint8_t *t = ip + ihl;
        uint16_t sport = rd16n(t), dport = rd16n(t + 2);
        uint8_t fl = t[13];
        if (!((fl & TCP_SYN) && !(fl & TCP_ACK))) {
            long at = conn_find(d, dst, dport, src, sport);
            if (at >= 0) {
                *id = d->conn[at].id;
                return LDISP_CLIENT;
            }
        }
        int l = listen_find(d, dst, dport);
        if (l >= 0) {
            *id = d->lis[l].id;
            return LDISP_CLIENT;
        }
        if ((fl & (TCP_SYN | TCP_ACK | TCP_RST)) == TCP_SYN && client_of_ip(d, dst) >= 0)
            return LDISP_RST;
        return LDISP_DROP_UNCLAIMED;
    }
    int c = client_of_ip(d, dst);
    if (c < 0 || dst == 0)
        return LDISP_DROP_UNCLAIMED;
    *id = (unsigned)c;
    return LDISP_CLIENT;
}

void ldisp_tx(struct ldisp *d, unsigned id, const uint8_t *f, size_t len)
{
    if (id >= LDISP_MAX_CLIENTS || len < ETH_HLEN + 20 + 20 || rd16(f + 12) != ETYPE_IPV4)
        return;
    const uint8_t *ip = f + ETH_HLEN;
    size_t ihl = (size_t)(ip[0] & 0x0f) * 4;
    if (ip[9] != 6 || ihl < 20 || len < ETH_HLEN + ihl + 20 || (rd16(ip + 6) & 0x1fff) != 0)
        return;
    const uint8_t *t = ip + ihl;
    uint8_t fl = t[13];
    if (!(fl & (TCP_SYN | TCP_RST)))
        return; /* the common case: nothing to learn */
    uint32_t src = rd32n(ip + 12), dst = rd32n(ip + 16);
    uint16_t sport = rd16n(t), dport = rd16n(t + 2);
    if (fl & TCP_RST) {
        long at = conn_find(d, src, sport, dst, dport);
        if (at >= 0 && d->conn[at].id == id)
            conn_release_slot(d, (uint32_t)at);
        return;
    }
    conn_claim(d, id, src, sport, dst, dport);
}

size_t ldisp_arp_reply(uint8_t *f, size_t len, const uint8_t mac[6])
{
    (void)len;
    uint8_t spa[4], sha[6];
    memcpy(sha, f + 22, 6);
    memcpy(spa, f + 28, 4);
    memcpy(f, sha, 6);         /* eth dst: the asker */
    memcpy(f + 6, mac, 6);     /* eth src */
    f[20] = 0;                 /* op: reply */
    f[21] = 2;
    memcpy(f + 28, f + 38, 4); /* spa: the address asked for */
    memcpy(f + 22, mac, 6);    /* sha */
    memcpy(f + 32, sha, 6);    /* tha */
    memcpy(f + 38, spa, 4);    /* tpa */
    return ETH_HLEN + 28;
}

size_t ldisp_rst(uint8_t *f, size_t len)
{
    if (len < ETH_HLEN + 20 || rd16(f + 12) != ETYPE_IPV4)
        return 0;
    uint8_t *ip = f + ETH_HLEN;
    size_t ihl = (size_t)(ip[0] & 0x0f) * 4;
    size_t tot = rd16(ip + 2);
    if (ip[9] != 6 || ihl < 20 || len < ETH_HLEN + ihl + 20 || tot < ihl + 20 || len < ETH_HLEN + tot)
        return 0;
    uint8_t *t = ip + ihl;
    if ((t[13] & (TCP_SYN | TCP_ACK | TCP_RST)) != TCP_SYN)
        return 0;
    /* The SYN's sequence number and length (a SYN counts one, and its data). */
    size_t toff = (size_t)(t[12] >> 4) * 4;
    uint32_t seq = (uint32_t)rd16(t + 4) << 16 | rd16(t + 6);
    uint32_t ack = seq + 1 + (uint32_t)(tot > ihl + toff ? tot - ihl - toff : 0) + ((t[13] & TCP_FIN) ? 1 : 0);
    uint8_t tmp[6];
    memcpy(tmp, f, 6);
    memcpy(f, f + 6, 6);
    memcpy(f + 6, tmp, 6);
    uint8_t th[20];
    memcpy(th, t, 20);
    /* IPv4 header without options. */
    uint8_t *nip = f + ETH_HLEN;
    uint8_t src[4], dst[4];
    memcpy(src, ip + 12, 4);
    memcpy(dst, ip + 16, 4);
    memset(nip, 0, 20);
    nip[0] = 0x45;
    nip[3] = 40;
    nip[6] = 0x40; /* DF */
    nip[8] = 64;
    nip[9] = 6;
    memcpy(nip + 12, dst, 4);
    memcpy(nip + 16, src, 4);
    uint16_t ic = inet_ip_csum(nip, 20);
    nip[10] = (uint8_t)(ic >> 8);
    nip[11] = (uint8_t)ic;
    uint8_t *nt = nip + 20;
    memset(nt, 0, 20);
    memcpy(nt, th + 2, 2); /* sport = their dport */
    memcpy(nt + 2, th, 2);
    nt[8] = (uint8_t)(ack >> 24);
    nt[9] = (uint8_t)(ack >> 16);
    nt[10] = (uint8_t)(ack >> 8);
    nt[11] = (uint8_t)ack;
    nt[12] = 5 << 4;
    nt[13] = TCP_RST | TCP_ACK;
    uint16_t tc = inet_tcp_csum(nip, 20, 40);
    nt[16] = (uint8_t)(tc >> 8);
    nt[17] = (uint8_t)tc;
    return ETH_HLEN + 40;
}
