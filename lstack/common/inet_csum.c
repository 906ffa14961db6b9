/*
 * inet_csum.c - see inet_csum.h.
 *
 * The sum is taken over native-order 64-bit loads, two per step, each split
 * into its 32-bit halves so that a 64-bit accumulator cannot carry out
 * (RFC 1071: the one's-complement sum of 16-bit words does not depend on
 * the order the words are added in, nor on the byte order they are loaded
 * in, as long as the folded result is swapped back once). Loads go through
 * memcpy: any alignment, one instruction on targets that allow it.
 * Rejected: lwIP's own routine (two bytes per step, with its own alignment
 * dance: 4-5x the instructions on a segment) and vector code (the sums here
 * are headers and small segments: the setup would cost more than it saves).
 */
#include <string.h>

#include "common/inet_csum.h"

/* Sum of the native-order 16-bit words of p[0..len) (a last odd byte is
 * the first byte of a word whose second is 0), not folded.
 * The bulk goes 32 bytes a step as 64-bit words added with their carries
 * counted (an add and an add-with-carry each; 2^64 = 1 modulo 0xffff, so a
 * carry out of bit 63 counts 1), in two chains that do not wait for each
 * other: about half the instructions of splitting each load into its
 * 32-bit halves, which matters where lwIP sums every byte it copies in
 * (LWIP_CHECKSUM_ON_COPY: a 64 KiB reply). */
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
    /* Each partial sum as its two 32-bit halves, each carry as a one: no
     * overflow below 2^60 bytes. */
    uint64_t s = (s0 & 0xffffffffu) + (s0 >> 32) + (s1 & 0xffffffffu) + (s1 >> 32) + c;
    while (len >= 16) {
        uint64_t a, b;
        memcpy(&a, p, 8);
        memcpy(&b, p + 8, 8);
        s += (a & 0xffffffffu) + (a >> 32) + (b & 0xffffffffu) + (b >> 32);
        p += 16;
        len -= 16;
    }
    if (len >= 8) {
        uint64_t a;
        memcpy(&a, p, 8);
        s += (a & 0xffffffffu) + (a >> 32);
        p += 8;
        len -= 8;
    }
    if (len >= 4) {
        uint32_t a;
        memcpy(&a, p, 4);
        s += a;
        p += 4;
        len -= 4;
    }
    if (len >= 2) {
        uint16_t a;
        memcpy(&a, p, 2);
        s += a;
        p += 2;
        len -= 2;
    }
    if (len == 1) {
        uint8_t w[2] = {p[0], 0};
        uint16_t a;
        memcpy(&a, w, 2);
        s += a;
    }
    return s;
}

static uint16_t fold(uint64_t s)
{
    s = (s & 0xffffffffu) + (s >> 32);
    s = (s & 0xffffffffu) + (s >> 32);
    s = (s & 0xffffu) + (s >> 16);
    s = (s & 0xffffu) + (s >> 16);
    return (uint16_t)s;
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

/* Pseudo header (source, destination, protocol 6, TCP length) + segment. */
static uint32_t tcp_sum(const uint8_t *ip, size_t ihl, size_t tot)
{
    uint32_t s = inet_csum_add(0, ip + 12, 8);
    size_t tcplen = tot - ihl;
    s += 6u + (uint32_t)tcplen;
    return inet_csum_add(s, ip + ihl, tcplen);
}

uint16_t inet_tcp_csum(const uint8_t *ip, size_t ihl, size_t tot)
{
    /* The sum with the field as zero: subtract the field's contribution. */
    uint32_t s = tcp_sum(ip, ihl, tot);
    uint32_t field = (uint32_t)ip[ihl + 16] << 8 | ip[ihl + 17];
    s += 0xffffu - field; /* one's-complement subtraction */
    while (s >> 16)
        s = (s & 0xffff) + (s >> 16);
    return (uint16_t)~s;
}

int inet_tcp_verify(const uint8_t *ip, size_t ihl, size_t tot)
{
    return tcp_sum(ip, ihl, tot) == 0xffff;
}

uint16_t inet_ip_csum(const uint8_t *ip, size_t ihl)
{
    uint32_t s = inet_csum_add(0, ip, 10);
    s = inet_csum_add(s, ip + 12, ihl - 12);
    return (uint16_t)~s;
}
