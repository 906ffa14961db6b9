/*
 * inet_csum.c - see inet_csum.h.
 */
#include "common/inet_csum.h"

uint32_t inet_csum_add(uint32_t sum, const uint8_t *p, size_t len)
{
    uint64_t s = sum;
    while (len >= 2) {
        s += (uint32_t)p[0] << 8 | p[1];
        p += 2;
        len -= 2;
    }
    if (len == 1)
        s += (uint32_t)p[0] << 8;
    while (s >> 16)
        s = (s & 0xffff) + (s >> 16);
    return (uint32_t)s;
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
