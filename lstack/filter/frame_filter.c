/*
 * frame_filter.c - see frame_filter.h.
 * Headers are read byte by byte (no casts to packed structs), so the code has
 * no alignment or aliasing assumptions and no dependency on system headers
 * that clash between DPDK and lwIP.
 */
#include "filter/frame_filter.h"

#include <string.h>

#include "common/inet_csum.h"

#define ETH_HLEN 14
#define ETHERTYPE_IPV4 0x0800
#define ETHERTYPE_ARP 0x0806
#define ARP_LEN 28
#define IPV4_MIN_HLEN 20
#define IPPROTO_ICMP_NUM 1
#define IPPROTO_TCP_NUM 6

static const uint8_t mac_bcast[6] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff};

static uint16_t rd16(const uint8_t *p)
{
    return (uint16_t)(p[0] << 8 | p[1]);
}

void frame_filter_init(struct frame_filter *f, const uint8_t mac[6], uint32_t addr, uint32_t mask)
{
    memcpy(f->mac, mac, 6);
    f->addr = addr;
    f->bcast = addr | ~mask;
    f->check_tcp = 0;
}

static enum frame_verdict classify_arp(const uint8_t *a, size_t len)
{
    if (len < ARP_LEN)
        return FRAME_MALFORMED;
    /* hardware Ethernet (1), protocol IPv4, 6-byte MAC, 4-byte address */
    if (rd16(a) != 1 || rd16(a + 2) != ETHERTYPE_IPV4 || a[4] != 6 || a[5] != 4)
        return FRAME_UNSUPPORTED;
    uint16_t op = rd16(a + 6);
    if (op != 1 && op != 2)
        return FRAME_MALFORMED;
    return FRAME_PASS;
}


/* src (network byte order) cannot be a peer's address. */
static int martian_source(const struct frame_filter *f, uint32_t src)
{
    const uint8_t *b = (const uint8_t *)&src;
    /* 0/8 and 224/3 in one unsigned compare (0 - 1 wraps to 255); the
     * limited broadcast 255.255.255.255 is in 224/3 */
    return src == f->addr || src == f->bcast || b[0] == 127 || (uint8_t)(b[0] - 1) >= 223;
}

static enum frame_verdict classify_ipv4(const struct frame_filter *f, const uint8_t *ip, size_t len, unsigned hw)
{
    if (len < IPV4_MIN_HLEN)
        return FRAME_MALFORMED;
    if ((ip[0] >> 4) != 4)
        return FRAME_MALFORMED;
    size_t hlen = (size_t)(ip[0] & 0x0f) * 4;
    if (hlen < IPV4_MIN_HLEN || hlen > len)
        return FRAME_MALFORMED;
    size_t tot = rd16(ip + 2);
    if (tot < hlen || tot > len) /* shorter is Ethernet padding: lwIP trims it */
        return FRAME_MALFORMED;
    if (hw & FRAME_HW_IP_BAD)
        return FRAME_BAD_CSUM;
    if (!(hw & FRAME_HW_IP_GOOD) && !inet_ip_hdr_ok(ip, hlen))
        return FRAME_BAD_CSUM;
    uint32_t dst;
    memcpy(&dst, ip + 16, 4); /* network byte order, like f->addr */
    if (dst != f->addr && dst != f->bcast && dst != 0xffffffffu)
        return FRAME_NOT_OURS;
    /* Only what the stack serves reaches lwIP (the build has no UDP). */
    uint32_t src;
    memcpy(&src, ip + 12, 4);
    if (martian_source(f, src))
        return FRAME_MARTIAN;
    if (ip[9] != IPPROTO_ICMP_NUM && ip[9] != IPPROTO_TCP_NUM)
        return FRAME_UNSUPPORTED;
    if (ip[9] == IPPROTO_TCP_NUM && f->check_tcp) {
        uint16_t frag = rd16(ip + 6);
        if (hw & FRAME_HW_L4_BAD)
            return FRAME_BAD_CSUM;
        /* A fragment's checksum covers the whole datagram: fragments
         * pass, and lwIP checks the datagram after reassembly (the stack
         * turns lwIP's check on for them, frame_ipv4_fragment). */
        if (!(hw & FRAME_HW_L4_GOOD) && (frag & 0x3fff) == 0) {
            if (tot < hlen + 20)
                return FRAME_MALFORMED;
            if (!inet_tcp_verify(ip, hlen, tot))
                return FRAME_BAD_CSUM;
        }
    }
    return FRAME_PASS;
}

/* frame_common_tcp (frame_filter.h): the common case, decided with fewer tests: a frame to our MAC carrying
 * IPv4 with a 20-byte header, to our own address, not a fragment, TCP with
 * at least a whole header. 1 if such a frame passes (every check of the
 * general path below made: lengths, IPv4 header checksum, source, TCP
 * checksum); 0 for anything else, which the general path then classifies
 * (so every verdict but a pass still comes from one place). Two 32-bit and
 * 16-bit compares instead of memcmp, no switch, no calls but the two
 * checksums: ~40 instructions a frame less. */
int frame_common_tcp(const struct frame_filter *f, const uint8_t *data, size_t len, unsigned hw)
{
    if (len < ETH_HLEN + IPV4_MIN_HLEN + 20 || (hw & (FRAME_HW_IP_BAD | FRAME_HW_L4_BAD)) != 0)
        return 0;
    uint32_t d0, m0;
    uint16_t d1, m1;
    memcpy(&d0, data, 4);
    memcpy(&d1, data + 4, 2);
    memcpy(&m0, f->mac, 4);
    memcpy(&m1, f->mac + 4, 2);
    const uint8_t *ip = data + ETH_HLEN;
    /* EtherType 0x0800, then version 4 with a 20-byte header */
    if (((d0 ^ m0) | (uint32_t)(d1 ^ m1)) != 0 || data[12] != 0x08 || data[13] != 0x00 || ip[0] != 0x45 ||
        ip[9] != IPPROTO_TCP_NUM || ((ip[6] & 0x3f) | ip[7]) != 0)
        return 0;
    size_t tot = rd16(ip + 2);
    if (tot < IPV4_MIN_HLEN + 20 || tot > len - ETH_HLEN)
        return 0;
    uint32_t dst, src;
    memcpy(&dst, ip + 16, 4);
    memcpy(&src, ip + 12, 4);
    if (dst != f->addr || martian_source(f, src))
        return 0;
    if (!(hw & FRAME_HW_IP_GOOD) && !inet_ip_hdr20_ok(ip))
        return 0;
    if (f->check_tcp && !(hw & FRAME_HW_L4_GOOD) && !inet_tcp_verify(ip, IPV4_MIN_HLEN, tot))
        return 0;
    return 1;
}

/* Every frame frame_common_tcp did not pass: a function of its own, so
 * that the common case's call saves no registers for it. */
enum frame_verdict frame_classify_rest(const struct frame_filter *f, const uint8_t *data, size_t len, unsigned hw)
{
    if (len < ETH_HLEN)
        return FRAME_MALFORMED;
    if (memcmp(data, f->mac, 6) != 0 && memcmp(data, mac_bcast, 6) != 0)
        return FRAME_NOT_OURS;
    switch (rd16(data + 12)) {
    case ETHERTYPE_ARP:
        return classify_arp(data + ETH_HLEN, len - ETH_HLEN);
    case ETHERTYPE_IPV4:
        return classify_ipv4(f, data + ETH_HLEN, len - ETH_HLEN, hw);
    default:
        return FRAME_UNSUPPORTED;
    }
}

enum frame_verdict frame_classify_hw(const struct frame_filter *f, const uint8_t *data, size_t len, unsigned hw)
{
    if (frame_common_tcp(f, data, len, hw))
        return FRAME_PASS;
    return frame_classify_rest(f, data, len, hw);
}

const char *frame_verdict_name(enum frame_verdict v)
{
    static const char *const names[FRAME_VERDICT_COUNT] = {
        [FRAME_PASS] = "pass",
        [FRAME_NOT_OURS] = "not_ours",
        [FRAME_MALFORMED] = "malformed",
        [FRAME_BAD_CSUM] = "bad_csum",
        [FRAME_UNSUPPORTED] = "unsupported",
        [FRAME_MARTIAN] = "martian",
    };
    return (unsigned)v < FRAME_VERDICT_COUNT ? names[v] : "?";
}
