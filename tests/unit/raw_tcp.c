/*
 * raw_tcp.c - see raw_tcp.h.
 */
#include "raw_tcp.h"

#include <string.h>

static void put16(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t)(v >> 8);
    p[1] = (uint8_t)v;
}

static void put32(uint8_t *p, uint32_t v)
{
    put16(p, (uint16_t)(v >> 16));
    put16(p + 2, (uint16_t)v);
}

static uint16_t get16(const uint8_t *p)
{
    return (uint16_t)(p[0] << 8 | p[1]);
}

static uint32_t get32(const uint8_t *p)
{
    return (uint32_t)get16(p) << 16 | get16(p + 2);
}

/* One's complement sum of len bytes, added to sum (not folded). */
static uint32_t sum16(uint32_t sum, const uint8_t *p, size_t len)
{
    for (size_t i = 0; i + 1 < len; i += 2)
        sum += get16(p + i);
    if (len & 1)
        sum += (uint32_t)p[len - 1] << 8;
    return sum;
}

static uint16_t fold(uint32_t sum)
{
    while (sum >> 16)
        sum = (sum & 0xffff) + (sum >> 16);
    return (uint16_t)~sum;
}

size_t raw_tcp_build(uint8_t *frame, size_t cap, const struct raw_seg *seg)
{
    size_t thl = 20 + (seg->mss != 0 ? 4u : 0u) + (seg->sack_perm ? 4u : 0u) + (seg->ws_on ? 4u : 0u) +
                 (seg->nsack ? 4u + 8u * seg->nsack : 0u);
    size_t total = 14 + 20 + thl + seg->len;
    if (total > cap || thl > 60 || seg->nsack > RAW_TCP_SACK_MAX)
        return 0;
    memset(frame, 0, total);
    memcpy(frame, seg->dst_mac, 6);
    memcpy(frame + 6, seg->src_mac, 6);
    put16(frame + 12, 0x0800);
    uint8_t *ip = frame + 14;
    ip[0] = 0x45;
    put16(ip + 2, (uint16_t)(20 + thl + seg->len));
    ip[6] = 0x40; /* DF */
    ip[8] = 64;
    ip[9] = 6;
    memcpy(ip + 12, &seg->saddr, 4);
    memcpy(ip + 16, &seg->daddr, 4);
    put16(ip + 10, fold(sum16(0, ip, 20)));
    uint8_t *th = ip + 20;
    put16(th, seg->sport);
    put16(th + 2, seg->dport);
    put32(th + 4, seg->seq);
    put32(th + 8, seg->ack);
    th[12] = (uint8_t)((thl / 4) << 4);
    th[13] = seg->flags;
    put16(th + 14, seg->wnd);
    size_t o = 20;
    if (seg->mss != 0) {
        th[o] = 2; /* kind MSS */
        th[o + 1] = 4;
        put16(th + o + 2, seg->mss);
        o += 4;
    }
    if (seg->sack_perm) {
        th[o] = th[o + 1] = 1; /* NOP NOP, kind SACK-permitted */
        th[o + 2] = 4;
        th[o + 3] = 2;
        o += 4;
    }
    if (seg->ws_on) {
        th[o] = 1; /* NOP, kind window scale */
        th[o + 1] = 3;
        th[o + 2] = 3;
        th[o + 3] = seg->ws_shift;
        o += 4;
    }
    if (seg->nsack) {
        th[o] = th[o + 1] = 1; /* NOP NOP, kind SACK */
        th[o + 2] = 5;
        th[o + 3] = (uint8_t)(2 + 8 * seg->nsack);
        o += 4;
        for (unsigned i = 0; i < seg->nsack; i++, o += 8) {
            put32(th + o, seg->sack_l[i]);
            put32(th + o + 4, seg->sack_r[i]);
        }
    }
    if (seg->len > 0)
        memcpy(th + thl, seg->data, seg->len);
    /* pseudo header: addresses, protocol, TCP length */
    uint32_t sum = sum16(0, ip + 12, 8) + 6 + (uint32_t)(thl + seg->len);
    put16(th + 16, fold(sum16(sum, th, thl + seg->len)));
    return total;
}

int raw_tcp_parse(const uint8_t *frame, size_t len, struct raw_seg *seg)
{
    if (len < 14 + 20 + 20 || get16(frame + 12) != 0x0800)
        return -1;
    const uint8_t *ip = frame + 14;
    size_t ihl = (size_t)(ip[0] & 0xf) * 4;
    size_t ip_len = get16(ip + 2);
    if ((ip[0] >> 4) != 4 || ip[9] != 6 || ihl < 20 || ip_len < ihl + 20 || 14 + ip_len > len)
        return -1;
    const uint8_t *th = ip + ihl;
    size_t thl = (size_t)(th[12] >> 4) * 4;
    if (thl < 20 || ihl + thl > ip_len)
        return -1;
    memset(seg, 0, sizeof(*seg));
    memcpy(seg->dst_mac, frame, 6);
    memcpy(seg->src_mac, frame + 6, 6);
    memcpy(&seg->saddr, ip + 12, 4);
    memcpy(&seg->daddr, ip + 16, 4);
    seg->sport = get16(th);
    seg->dport = get16(th + 2);
    seg->seq = get32(th + 4);
    seg->ack = get32(th + 8);
    seg->flags = th[13];
    seg->wnd = get16(th + 14);
    seg->wscale = -1;
    for (size_t i = 20; i < thl;) {
        uint8_t kind = th[i];
        if (kind == 0)
            break;
        if (kind == 1) {
            i++;
            continue;
        }
        if (i + 1 >= thl || th[i + 1] < 2 || i + th[i + 1] > thl)
            break;
        if (kind == 2 && th[i + 1] == 4)
            seg->mss = get16(th + i + 2);
        if (kind == 3 && th[i + 1] == 3)
            seg->wscale = th[i + 2];
        i += th[i + 1];
    }
    seg->data = th + thl;
    seg->len = (uint16_t)(ip_len - ihl - thl);
    return 0;
}
