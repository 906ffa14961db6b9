/*
 * inet_csum.c - see inet_csum.h.
 *
 * The sum is taken over native-order 64-bit loads, two per step, each split
 * into its 32-bit halves so that a 64-bit accumulator cannot carry out
 * (RFC 1071: the one's-complement sum of 16-bit words does not depend on
 * the order the words are added in, nor on the byte order they are loaded
 * in, as long as the folded result is swapped back once). Loads go through
 * memcpy: any alignment, one instruction on targets that allow it.
 * Design: docs/design.md#one-checksum-routine-of-lstacks-own
 */
#include <string.h>

#include "common/inet_csum.h"

/* Sum of the native-order 16-bit words of p[0..len) (a last odd byte is
 * the first byte of a word whose second is 0), not folded: a value below
 * 2^33 whose fold (below) is the 16-bit sum (a sum of a few such values may
 * be folded as well).
 * The bulk goes 32 bytes a step as 64-bit words added with their carries
 * counted (an add and an add-with-carry each; 2^64 = 1 modulo 0xffff, so a
 * carry out of bit 63 counts 1), in two chains that do not wait for each
 * other: about half the instructions of splitting each load into its
 * 32-bit halves. The tail (under 32 bytes) goes the same way, 16, 8, then
 * the last 0-7 bytes gathered into one word (a 16-bit word counts the same
 * at any even bit offset: 2^16 = 1 modulo 0xffff), so that a small segment
 * (a request, an ACK) costs few steps. */
static uint64_t sum_native(const uint8_t *p, size_t len)
{
    uint64_t s0 = 0, s1 = 0, c = 0;
    while (len >= 32) {
        uint64_t a, b, d, e;
        memcpy(&a, p, 8);
        memcpy(&b, p + 8, 8);
        memcpy(&d, p + 16, 8);
        memcpy(&e, p + 24, 8);
        c += __builtin_add_overflow(s0, a, &s0);
        c += __builtin_add_overflow(s1, b, &s1);
        c += __builtin_add_overflow(s0, d, &s0);
        c += __builtin_add_overflow(s1, e, &s1);
        p += 32;
        len -= 32;
    }
    if (len >= 16) {
        uint64_t a, b;
        memcpy(&a, p, 8);
        memcpy(&b, p + 8, 8);
        c += __builtin_add_overflow(s0, a, &s0);
        c += __builtin_add_overflow(s1, b, &s1);
        p += 16;
        len -= 16;
    }
    if (len >= 8) {
        uint64_t a;
        memcpy(&a, p, 8);
        c += __builtin_add_overflow(s0, a, &s0);
        p += 8;
        len -= 8;
    }
    uint64_t t = 0; /* the last 0-7 bytes: 32 + 16 + 16 bits, no carry out */
    if (len >= 4) {
        uint32_t a;
        memcpy(&a, p, 4);
        t = a;
        p += 4;
        len -= 4;
    }
    if (len >= 2) {
        uint16_t a;
        memcpy(&a, p, 2);
        t += (uint64_t)a << 32;
        p += 2;
        len -= 2;
    }
    if (len == 1) {
        uint8_t w[2] = {p[0], 0};
        uint16_t a;
        memcpy(&a, w, 2);
        t += (uint64_t)a << 48;
    }
    c += __builtin_add_overflow(s0, s1, &s0);
    c += __builtin_add_overflow(s0, t, &s0);
    c = __builtin_add_overflow(s0, c, &s0); /* c < 2^62: at most one more carry */
    s0 += c;                                 /* cannot carry: s0 wrapped to below c */
    return (s0 & 0xffffffffu) + (s0 >> 32);  /* below 2^33: callers add a few */
}

/* The 16-bit one's-complement sum of a value sum_native returns (or any
 * 64-bit sum of native-order words). */
static uint16_t fold(uint64_t s)
{
    uint32_t r;
    uint32_t c = __builtin_add_overflow((uint32_t)s, (uint32_t)(s >> 32), &r);
    r += c; /* end-around carry: after a carry r < 0xffffffff */
    uint16_t q;
    uint16_t c16 = __builtin_add_overflow((uint16_t)r, (uint16_t)(r >> 16), &q);
    return (uint16_t)(q + c16);
}

/* A native-order 16-bit value in network order (a swap on little-endian). */
static uint16_t native_to_net(uint16_t v)
{
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    return __builtin_bswap16(v);
#else
    return v;
#endif
}

uint16_t inet_csum_native(const void *p, size_t len)
{
    return fold(sum_native(p, len));
}

uint32_t inet_csum_add(uint32_t sum, const uint8_t *p, size_t len)
{
    uint32_t s = sum + native_to_net(fold(sum_native(p, len)));
    while (s >> 16)
        s = (s & 0xffff) + (s >> 16);
    return s;
}

static uint32_t load32(const uint8_t *p)
{
    uint32_t v;
    memcpy(&v, p, 4);
    return v;
}

int inet_ip_hdr_ok(const uint8_t *ip, size_t ihl)
{
    /* 0xffff is its own byte swap: the native-order sum decides alone. */
    uint64_t s = (uint64_t)load32(ip) + load32(ip + 4) + load32(ip + 8) + load32(ip + 12) + load32(ip + 16);
    for (size_t i = 20; i + 4 <= ihl; i += 4)
        s += load32(ip + i);
    return fold(s) == 0xffff;
}

/* The pseudo header (source, destination, protocol 6, TCP length) and the
 * segment of the IPv4 packet at ip, as native-order words, not folded. With
 * the usual 20-byte header the addresses and the segment are one run. */
static uint64_t tcp_sum(const uint8_t *ip, size_t ihl, size_t tot)
{
    size_t tcplen = tot - ihl;
    const uint8_t proto_len[4] = {0, 6, (uint8_t)(tcplen >> 8), (uint8_t)tcplen};
    uint64_t s = load32(proto_len);
    if (ihl == 20)
        return s + sum_native(ip + 12, 8 + tcplen);
    return s + sum_native(ip + 12, 8) + sum_native(ip + ihl, tcplen);
}

/* tcp_sum for a 20-byte IPv4 header: the addresses and the segment are
 * one run. */
static uint64_t s_tcp20(const uint8_t *ip, size_t tot)
{
    size_t tcplen = tot - 20;
    const uint8_t proto_len[4] = {0, 6, (uint8_t)(tcplen >> 8), (uint8_t)tcplen};
    return (uint64_t)load32(proto_len) + sum_native(ip + 12, 8 + tcplen);
}

/* The field value (native order, store it with memcpy) that makes the
 * native-order sum s, taken with the field as zero, sum to 0xffff. */
static uint16_t field_of(uint64_t s)
{
    return (uint16_t)~fold(s);
}

static uint16_t load16(const uint8_t *p)
{
    uint16_t v;
    memcpy(&v, p, 2);
    return v;
}

uint16_t inet_tcp_csum(const uint8_t *ip, size_t ihl, size_t tot)
{
    /* The sum with the field as zero: add the field's complement (a
     * one's-complement subtraction of its contribution). */
    uint64_t s = tcp_sum(ip, ihl, tot) + (uint16_t)~load16(ip + ihl + 16);
    return native_to_net(field_of(s));
}

int inet_tcp_verify(const uint8_t *ip, size_t ihl, size_t tot)
{
    /* 0xffff is its own byte swap: the native-order sum decides alone. */
    return fold(tcp_sum(ip, ihl, tot)) == 0xffff;
}

/* The IPv4 header's words less its checksum field, native order. */
static uint64_t ip_sum_less_field(const uint8_t *ip, size_t ihl)
{
    uint64_t s = (uint64_t)load32(ip) + load32(ip + 4) + load16(ip + 8) + load32(ip + 12) + load32(ip + 16);
    for (size_t i = 20; i + 4 <= ihl; i += 4)
        s += load32(ip + i);
    return s;
}

uint16_t inet_ip_csum(const uint8_t *ip, size_t ihl)
{
    return native_to_net(field_of(ip_sum_less_field(ip, ihl)));
}

int inet_frame_csum_fill(uint8_t *f, size_t len)
{
    if (len < 14 + 20 || f[12] != 0x08 || f[13] != 0x00)
        return 0;
    uint8_t *ip = f + 14;
    size_t ihl = (size_t)(ip[0] & 0x0f) * 4;
    size_t tot = (size_t)ip[2] << 8 | ip[3];
    if ((ip[0] >> 4) != 4 || ihl < 20 || tot < ihl || tot > len - 14)
        return 0;
    uint16_t c = field_of(ip_sum_less_field(ip, ihl));
    memcpy(ip + 10, &c, 2);
    /* TCP, a whole datagram (not a fragment), with a whole header. */
    if (ip[9] == 6 && ((ip[6] & 0x3f) | ip[7]) == 0 && tot >= ihl + 20) {
        uint8_t *th = ip + ihl;
        th[16] = th[17] = 0;
        c = field_of(tcp_sum(ip, ihl, tot));
        memcpy(th + 16, &c, 2);
    }
    return 1;
}

void inet_tcp20_csum_fill(uint8_t *ip, size_t tot)
{
    uint16_t c = field_of(ip_sum_less_field(ip, 20)); /* the loop is empty at 20 */
    memcpy(ip + 10, &c, 2);
    ip[20 + 16] = ip[20 + 17] = 0;
    c = field_of(s_tcp20(ip, tot));
    memcpy(ip + 20 + 16, &c, 2);
}
