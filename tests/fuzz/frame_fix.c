/*
 * frame_fix.c - see frame_fix.h.
 */
#include "frame_fix.h"

#include <string.h>

#define ETH_HLEN 14
#define ETHERTYPE_IPV4 0x0800
#define ETHERTYPE_ARP 0x0806
#define IPPROTO_ICMP_ 1
#define IPPROTO_TCP_ 6

static uint16_t rd16(const uint8_t *p)
{
    return (uint16_t)(p[0] << 8 | p[1]);
}

static uint32_t rd32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static void wr16(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t)(v >> 8);
    p[1] = (uint8_t)v;
}

static void wr32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 24);
    p[1] = (uint8_t)(v >> 16);
    p[2] = (uint8_t)(v >> 8);
    p[3] = (uint8_t)v;
}

size_t frame_rec_next(const uint8_t *in, size_t n, uint8_t *flags, const uint8_t **frame, uint16_t *len)
{
    if (n == 0)
        return 0;
    *flags = in[0];
    size_t want = n >= 3 ? rd16(in + 1) : 0;
    size_t hdr = n >= 3 ? 3 : n;
    if (want > FRAME_FIX_MAX)
        want = FRAME_FIX_MAX;
    if (want > n - hdr)
        want = n - hdr;
    *frame = in + hdr;
    *len = (uint16_t)want;
    return hdr + want;
}

uint16_t frame_csum(const uint8_t *p, size_t len, uint32_t sum)
{
    for (size_t i = 0; i + 1 < len; i += 2)
        sum += rd16(p + i);
    if (len & 1)
        sum += (uint32_t)p[len - 1] << 8;
    while (sum >> 16)
        sum = (sum & 0xffff) + (sum >> 16);
    return (uint16_t)~sum;
}

static void fix_arp(uint8_t *a, size_t len, const struct fix_ctx *c)
{
    /* htype, ptype, hlen, plen, op, sha[6], spa[4], tha[6], tpa[4] */
    if (len < 28)
        return;
    memcpy(a + 8, c->peer_mac, 6);
    memcpy(a + 14, &c->peer_addr, 4);
    memcpy(a + 24, &c->target_addr, 4);
}

/* The TCP or ICMP part of an IPv4 datagram ip[0..len) with header length
 * ihl; l4len is what the datagram says, cut to what the frame holds. */
static void fix_l4(uint8_t *ip, size_t ihl, size_t l4len, uint8_t flags, const struct fix_ctx *c)
{
    uint8_t *l4 = ip + ihl;
    uint8_t proto = ip[9];
    if ((rd16(ip + 6) & 0x1fff) != 0)
        return; /* a later fragment: no L4 header in it */
    int fragment = (rd16(ip + 6) & 0x2000) != 0; /* a first fragment (MF) */
    if (proto == IPPROTO_TCP_ && l4len >= 20) {
        if (flags & FIX_CONN) {
            memcpy(l4, &c->peer_port, 2);
            memcpy(l4 + 2, &c->target_port, 2);
            wr32(l4 + 4, c->rcv_nxt + rd32(l4 + 4));
            wr32(l4 + 8, c->snd_nxt + rd32(l4 + 8));
        }
        if ((flags & FIX_CSUM) && !fragment) {
            uint32_t sum = rd16(ip + 12) + rd16(ip + 14) + rd16(ip + 16) + rd16(ip + 18) + IPPROTO_TCP_ +
                           (uint32_t)l4len;
            wr16(l4 + 16, 0);
            wr16(l4 + 16, frame_csum(l4, l4len, sum));
        }
    } else if (proto == IPPROTO_ICMP_ && l4len >= 4 && (flags & FIX_CSUM) && !fragment) {
        wr16(l4 + 2, 0);
        wr16(l4 + 2, frame_csum(l4, l4len, 0));
    }
}

static void fix_ipv4(uint8_t *ip, size_t len, uint8_t flags, const struct fix_ctx *c)
{
    if (len < 20)
        return;
    size_t ihl = (size_t)(ip[0] & 0x0f) * 4;
    if (flags & FIX_IP) {
        memcpy(ip + 12, &c->peer_addr, 4);
        memcpy(ip + 16, &c->target_addr, 4);
    }
    /* L4 first: its pseudo-header reads the addresses just written. */
    size_t total = rd16(ip + 2);
    if (total > len)
        total = len;
    if (ihl >= 20 && ihl <= total)
        fix_l4(ip, ihl, total - ihl, flags, c);
    if ((flags & FIX_IP) && ihl >= 20 && ihl <= len) {
        wr16(ip + 10, 0);
        wr16(ip + 10, frame_csum(ip, ihl, 0));
    }
}

void frame_fix(uint8_t *f, size_t len, uint8_t flags, const struct fix_ctx *c)
{
    if (len < ETH_HLEN)
        return;
    if (flags & FIX_ETH) {
        memcpy(f, c->target_mac, 6);
        memcpy(f + 6, c->peer_mac, 6);
    }
    uint16_t type = rd16(f + 12);
    if (type == ETHERTYPE_IPV4)
        fix_ipv4(f + ETH_HLEN, len - ETH_HLEN, flags, c);
    else if (type == ETHERTYPE_ARP && (flags & FIX_IP))
        fix_arp(f + ETH_HLEN, len - ETH_HLEN, c);
}
