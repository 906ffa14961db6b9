/*
 * garbage_tx: send malformed and unexpected Ethernet frames at a stack under test.
 *
 *   garbage_tx IFNAME DST_MAC SRC_IP DST_IP COUNT SEED [PAUSE_US_PER_64]
 *
 * IFNAME   interface to send on (the client end of the test bed's veth pair)
 * DST_MAC  MAC of the stack under test
 * SRC_IP   address the "legitimate" peer uses (the test bed's client address)
 * DST_IP   address of the stack under test
 * COUNT    number of frames to attempt
 * SEED     PRNG seed; the same seed always produces the same frames
 * PAUSE_US_PER_64  optional pause (microseconds) after every 64 frames
 */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <linux/if_packet.h>
#include <net/ethernet.h>
#include <net/if.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

/*
 * To narrow a failure down, the environment can restrict the classes:
 *   GARBAGE_TX_ONLY=name,name   only these classes (names as printed)
 *   GARBAGE_TX_SKIP=name,name   all classes but these
 * The remaining classes are still used round-robin, deterministically.
 *
 * Frames are built round-robin from the classes below; the variant inside a
 * class is drawn from the seeded PRNG. Only addresses of the RFC 2544 (IPv4)
 * and RFC 5180 (IPv6) benchmark ranges, link-local and locally administered
 * MACs are used in structured frames, so nothing here is routable anywhere.
 * Most frames that are malformed in one field have correct checksums, so that
 * they get past the checksum checks and reach the code that should reject the
 * malformed field.
 *
 * A frame shorter than an Ethernet header cannot be sent through AF_PACKET
 * (the kernel answers EINVAL); such attempts are counted as "rejected".
 * When the kernel answers ENOBUFS the frame is retried after a short pause,
 * and the retry is counted.
 */

#define FRAME_MAX 1514 /* Ethernet header + 1500; VLAN frames stay within it too */
#define ETH_HDR 14
#define ETHT_IPV4 0x0800
#define ETHT_ARP 0x0806
#define ETHT_VLAN 0x8100
#define ETHT_QINQ 0x88a8
#define ETHT_IPV6 0x86dd

#define PROTO_ICMP 1
#define PROTO_IGMP 2
#define PROTO_TCP 6
#define PROTO_UDP 17
#define PROTO_UDPLITE 136

#define TCP_FIN 0x01
#define TCP_SYN 0x02
#define TCP_RST 0x04
#define TCP_PSH 0x08
#define TCP_ACK 0x10
#define TCP_URG 0x20

enum frame_class {
    C_RANDOM,
    C_ETH_TRUNC,
    C_IP_TRUNC,
    C_IP_BAD_IHL,
    C_IP_BAD_LEN,
    C_IP_BAD_CSUM,
    C_IP_FRAG,
    C_IP_PROTO,
    C_TCP,
    C_UDP,
    C_ICMP,
    C_ARP,
    C_OTHER_DST,
    C_VLAN,
    C_IPV6,
    C_COUNT
};

static const char *const class_names[C_COUNT] = {
    [C_RANDOM] = "random_bytes",   [C_ETH_TRUNC] = "eth_truncated", [C_IP_TRUNC] = "ipv4_hdr_truncated",
    [C_IP_BAD_IHL] = "ipv4_bad_ihl", [C_IP_BAD_LEN] = "ipv4_bad_totlen", [C_IP_BAD_CSUM] = "ipv4_bad_csum_ver",
    [C_IP_FRAG] = "ipv4_fragments", [C_IP_PROTO] = "ipv4_other_proto", [C_TCP] = "tcp_bad",
    [C_UDP] = "udp_bad",           [C_ICMP] = "icmp_bad",         [C_ARP] = "arp_bad",
    [C_OTHER_DST] = "other_dst",   [C_VLAN] = "vlan_tagged",      [C_IPV6] = "ipv6_garbage",
};

/* ------------------------------------------------------------------------- */
/* deterministic PRNG: xorshift64*, seeded through splitmix64                */

static uint64_t rng_state;

static void rng_seed(uint64_t seed)
{
    uint64_t z = seed + 0x9e3779b97f4a7c15ULL;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    z ^= z >> 31;
    rng_state = z ? z : 0x2545f4914f6cdd1dULL;
}

static uint64_t rnd(void)
{
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return rng_state * 0x2545f4914f6cdd1dULL;
}

/* uniform-ish integer in [lo, hi] */
static uint32_t rnd_range(uint32_t lo, uint32_t hi)
{
    if (hi <= lo)
        return lo;
    return lo + (uint32_t)(rnd() % ((uint64_t)hi - lo + 1));
}

static int chance(unsigned percent)
{
    return rnd() % 100 < percent;
}

static void rnd_bytes(uint8_t *p, size_t n)
{
    while (n > 0) {
        uint64_t r = rnd();
        size_t k = n < 8 ? n : 8;
        memcpy(p, &r, k);
        p += k;
        n -= k;
    }
}

/* ------------------------------------------------------------------------- */
/* byte helpers                                                              */

static void put16(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t)(v >> 8);
    p[1] = (uint8_t)v;
}

static void put32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 24);
    p[1] = (uint8_t)(v >> 16);
    p[2] = (uint8_t)(v >> 8);
    p[3] = (uint8_t)v;
}

static uint32_t sum16(const uint8_t *p, size_t n, uint32_t s)
{
    while (n > 1) {
        s += (uint32_t)p[0] << 8 | p[1];
        p += 2;
        n -= 2;
    }
    if (n)
        s += (uint32_t)p[0] << 8;
    return s;
}

static uint16_t fold(uint32_t s)
{
    while (s >> 16)
        s = (s & 0xffff) + (s >> 16);
    return (uint16_t)~s;
}

/* ------------------------------------------------------------------------- */
/* addresses                                                                 */

struct ctx {
    uint8_t dst_mac[6]; /* the stack */
    uint8_t own_mac[6]; /* our interface */
    uint32_t src_ip;    /* host order */
    uint32_t dst_ip;    /* host order */
};

static const uint8_t mac_bcast[6] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff};

/* random locally administered unicast MAC */
static void rnd_mac(uint8_t *m)
{
    rnd_bytes(m, 6);
    m[0] = (uint8_t)((m[0] & 0xfc) | 0x02);
}

/* an address in 198.18.0.0/24 that is neither the peer nor the stack */
static uint32_t other_ip_subnet(const struct ctx *c)
{
    uint32_t base = c->dst_ip & 0xffffff00u, ip;
    do {
        ip = base | rnd_range(3, 254);
    } while (ip == c->src_ip || ip == c->dst_ip);
    return ip;
}

/* an address elsewhere in the benchmark range 198.18.0.0/15 */
static uint32_t other_ip_far(void)
{
    return 0xc6120000u | rnd_range(0x0100, 0x1fffe); /* 198.18.1.0 .. 198.19.255.254 */
}

/* ------------------------------------------------------------------------- */
/* header builders; each returns the number of bytes written                 */

static size_t eth(uint8_t *f, const uint8_t *dst, const uint8_t *src, uint16_t type)
{
    memcpy(f, dst, 6);
    memcpy(f + 6, src, 6);
    put16(f + 12, type);
    return ETH_HDR;
}

/* IPv4 header of ihl*4 bytes (options filled with NOPs), checksum correct */
static size_t ip4(uint8_t *p, unsigned ihl, uint16_t totlen, uint16_t frag, uint8_t proto, uint32_t src,
                  uint32_t dst)
{
    size_t hl = (size_t)ihl * 4;
    p[0] = (uint8_t)(0x40 | (ihl & 0x0f));
    p[1] = 0;
    put16(p + 2, totlen);
    put16(p + 4, (uint16_t)rnd());
    put16(p + 6, frag);
    p[8] = (uint8_t)rnd_range(16, 255);
    p[9] = proto;
    put16(p + 10, 0);
    put32(p + 12, src);
    put32(p + 16, dst);
    if (hl > 20)
        memset(p + 20, 1, hl - 20);
    put16(p + 10, fold(sum16(p, hl < 20 ? 20 : hl, 0)));
    return hl < 20 ? 20 : hl;
}

static void ip4_recsum(uint8_t *p)
{
    size_t hl = (size_t)(p[0] & 0x0f) * 4;
    if (hl < 20)
        hl = 20;
    put16(p + 10, 0);
    put16(p + 10, fold(sum16(p, hl, 0)));
}

/* TCP/UDP/ICMP-style checksum at offset csum_off inside the l4 bytes */
static void l4_csum(uint8_t *l4, size_t len, size_t csum_off, uint8_t proto, uint32_t src, uint32_t dst,
                    int pseudo)
{
    uint32_t s = 0;
    uint8_t ph[12];
    put16(l4 + csum_off, 0);
    if (pseudo) {
        put32(ph, src);
        put32(ph + 4, dst);
        ph[8] = 0;
        ph[9] = proto;
        put16(ph + 10, (uint16_t)len);
        s = sum16(ph, sizeof ph, 0);
    }
    uint16_t c = fold(sum16(l4, len, s));
    if (proto == PROTO_UDP && c == 0)
        c = 0xffff;
    put16(l4 + csum_off, c);
}

static size_t tcp_hdr(uint8_t *p, uint16_t sport, uint16_t dport, unsigned doff, uint8_t flags)
{
    put16(p, sport);
    put16(p + 2, dport);
    put32(p + 4, (uint32_t)rnd());
    put32(p + 8, (uint32_t)rnd());
    p[12] = (uint8_t)((doff & 0x0f) << 4);
    p[13] = flags;
    put16(p + 14, (uint16_t)rnd());
    put16(p + 16, 0);
    put16(p + 18, (flags & TCP_URG) ? (uint16_t)rnd() : 0);
    return 20;
}

static uint16_t rnd_port(void)
{
    static const uint16_t common[] = {6379, 80, 22, 7, 9, 0, 65535, 1};
    if (chance(25))
        return common[rnd() % (sizeof common / sizeof common[0])];
    return (uint16_t)rnd();
}

static size_t rnd_payload_len(size_t room)
{
    size_t n;
    if (chance(70))
        n = rnd_range(0, 64);
    else
        n = rnd_range(0, 1472);
    return n > room ? room : n;
}

/* ------------------------------------------------------------------------- */
/* frame classes                                                             */

static size_t mk_random(const struct ctx *c, uint8_t *f)
{
    size_t len;
    if (chance(12))
        len = rnd_range(1, ETH_HDR - 1); /* the kernel refuses these: counted as rejected */
    else
        len = rnd_range(ETH_HDR, FRAME_MAX);
    rnd_bytes(f, len);
    if (len >= 6) {
        unsigned v = (unsigned)(rnd() % 3);
        if (v == 0)
            memcpy(f, c->dst_mac, 6);
        else if (v == 1)
            memcpy(f, mac_bcast, 6);
    }
    if (len >= ETH_HDR && chance(50)) {
        static const uint16_t types[] = {ETHT_IPV4, ETHT_ARP, ETHT_IPV6, ETHT_VLAN};
        put16(f + 12, types[rnd() % 4]);
    }
    return len;
}

static size_t mk_eth_trunc(const struct ctx *c, uint8_t *f)
{
    static const uint16_t types[] = {ETHT_IPV4, ETHT_ARP, ETHT_IPV6, ETHT_VLAN, ETHT_QINQ, 0x0000, 0x05dc, 0xffff};
    uint16_t t = chance(80) ? types[rnd() % 8] : (uint16_t)rnd();
    size_t n = eth(f, chance(80) ? c->dst_mac : mac_bcast, c->own_mac, t);
    size_t extra = rnd_range(0, 3);
    rnd_bytes(f + n, extra);
    return n + extra;
}

static size_t mk_ip_trunc(const struct ctx *c, uint8_t *f)
{
    size_t n = eth(f, c->dst_mac, c->own_mac, ETHT_IPV4);
    ip4(f + n, 5, (uint16_t)rnd_range(20, 1500), 0, PROTO_UDP, c->src_ip, c->dst_ip);
    return n + rnd_range(1, 19);
}

static size_t mk_ip_bad_ihl(const struct ctx *c, uint8_t *f)
{
    size_t n = eth(f, c->dst_mac, c->own_mac, ETHT_IPV4);
    uint8_t *ip = f + n;
    size_t pl = rnd_range(8, 64);
    switch (rnd() % 3) {
    case 0: { /* IHL < 5 */
        unsigned ihl = rnd_range(0, 4);
        ip4(ip, 5, (uint16_t)(20 + pl), 0, PROTO_UDP, c->src_ip, c->dst_ip);
        ip[0] = (uint8_t)(0x40 | ihl);
        ip4_recsum(ip);
        rnd_bytes(ip + 20, pl);
        return n + 20 + pl;
    }
    case 1: { /* IHL beyond the end of the frame */
        unsigned ihl = rnd_range(6, 15);
        size_t have = rnd_range(20, ihl * 4 - 1);
        ip4(ip, ihl, (uint16_t)(ihl * 4 + pl), 0, PROTO_UDP, c->src_ip, c->dst_ip);
        return n + have;
    }
    default: { /* IHL > 5 with garbage options, otherwise consistent */
        unsigned ihl = rnd_range(6, 15);
        size_t hl = ihl * 4;
        uint8_t proto = chance(50) ? PROTO_UDP : PROTO_ICMP;
        ip4(ip, ihl, (uint16_t)(hl + pl), 0, proto, c->src_ip, c->dst_ip);
        rnd_bytes(ip + 20, hl - 20);
        if (chance(50)) { /* option with a length of 0 or past the header */
            ip[20] = (uint8_t)rnd_range(2, 255);
            ip[21] = chance(50) ? 0 : 255;
        }
        ip4_recsum(ip);
        rnd_bytes(ip + hl, pl);
        return n + hl + pl;
    }
    }
}

static size_t mk_ip_bad_len(const struct ctx *c, uint8_t *f)
{
    size_t n = eth(f, c->dst_mac, c->own_mac, ETHT_IPV4);
    uint8_t *ip = f + n;
    size_t pl = rnd_payload_len(1480);
    static const uint8_t protos[] = {PROTO_UDP, PROTO_TCP, PROTO_ICMP};
    uint8_t proto = protos[rnd() % 3];
    uint16_t tl;
    switch (rnd() % 4) {
    case 0: /* larger than the frame */
        tl = (uint16_t)rnd_range((uint32_t)(20 + pl + 1), 65535);
        break;
    case 1: /* smaller than the header */
        tl = (uint16_t)rnd_range(0, 19);
        break;
    case 2: /* smaller than the frame: trailing bytes */
        tl = (uint16_t)rnd_range(20, (uint32_t)(20 + pl));
        break;
    default:
        tl = chance(50) ? 65535 : 0;
        break;
    }
    ip4(ip, 5, tl, 0, proto, c->src_ip, c->dst_ip);
    rnd_bytes(ip + 20, pl);
    return n + 20 + pl;
}

static size_t mk_ip_bad_csum(const struct ctx *c, uint8_t *f)
{
    size_t n = eth(f, c->dst_mac, c->own_mac, ETHT_IPV4);
    uint8_t *ip = f + n;
    size_t pl = rnd_range(8, 200);
    uint8_t proto = chance(50) ? PROTO_ICMP : PROTO_UDP;
    ip4(ip, 5, (uint16_t)(20 + pl), 0, proto, c->src_ip, c->dst_ip);
    rnd_bytes(ip + 20, pl);
    if (proto == PROTO_ICMP) { /* an echo request that would be answered but for the header */
        ip[20] = 8;
        ip[21] = 0;
        l4_csum(ip + 20, pl, 2, proto, c->src_ip, c->dst_ip, 0);
    }
    if (chance(60)) {
        uint16_t good = (uint16_t)(ip[10] << 8 | ip[11]);
        uint16_t bad = (uint16_t)(good ^ (uint16_t)rnd_range(1, 0xffff));
        put16(ip + 10, bad);
    } else { /* version other than 4, checksum correct */
        unsigned v;
        do
            v = rnd_range(0, 15);
        while (v == 4);
        ip[0] = (uint8_t)(v << 4 | 5);
        ip4_recsum(ip);
    }
    return n + 20 + pl;
}

static size_t mk_ip_frag(const struct ctx *c, uint8_t *f)
{
    size_t n = eth(f, c->dst_mac, c->own_mac, ETHT_IPV4);
    uint8_t *ip = f + n;
    static const uint8_t protos[] = {PROTO_UDP, PROTO_TCP, PROTO_ICMP, 0xfe};
    uint8_t proto = protos[rnd() % 4];
    size_t pl = (size_t)rnd_range(0, 184) * 8; /* fragment data is a multiple of 8 */
    uint16_t off = 0, flags = 0;
    switch (rnd() % 6) {
    case 0: /* first fragment: MF, offset 0 */
        flags = 0x2000;
        break;
    case 1: /* middle fragment */
        flags = 0x2000;
        off = (uint16_t)rnd_range(1, 400);
        break;
    case 2: /* last fragment */
        off = (uint16_t)rnd_range(1, 400);
        break;
    case 3: /* reaches past 64 KiB */
        flags = chance(50) ? 0x2000 : 0;
        off = (uint16_t)rnd_range(8000, 8191);
        break;
    case 4: /* DF and MF together, odd payload length */
        flags = 0x6000;
        off = (uint16_t)rnd_range(0, 100);
        pl = rnd_range(1, 300);
        break;
    default: /* reserved bit set */
        flags = (uint16_t)(0x8000 | (chance(50) ? 0x2000 : 0));
        off = (uint16_t)rnd_range(0, 100);
        break;
    }
    if (pl == 0 && chance(50))
        pl = 8;
    ip4(ip, 5, (uint16_t)(20 + pl), (uint16_t)(flags | off), proto, c->src_ip, c->dst_ip);
    /* a handful of IDs, so that some fragments meet and overlap */
    put16(ip + 4, (uint16_t)rnd_range(0x4c00, 0x4c07));
    ip4_recsum(ip);
    rnd_bytes(ip + 20, pl);
    return n + 20 + pl;
}

static size_t mk_ip_proto(const struct ctx *c, uint8_t *f)
{
    size_t n = eth(f, c->dst_mac, c->own_mac, ETHT_IPV4);
    uint8_t *ip = f + n;
    size_t pl = rnd_range(0, 64);
    uint8_t proto;
    switch (rnd() % 3) {
    case 0: /* IGMP: truncated or with a bad checksum or an unknown type */
        proto = PROTO_IGMP;
        rnd_bytes(ip + 20, pl);
        if (pl >= 8) {
            ip[20] = chance(50) ? 0x11 : (uint8_t)rnd();
            l4_csum(ip + 20, pl, 2, proto, 0, 0, 0);
            if (chance(50))
                ip[22] ^= 0x5a;
        }
        break;
    case 1: /* UDP-Lite with bad checksum coverage */
        proto = PROTO_UDPLITE;
        if (pl < 8)
            pl = 8;
        rnd_bytes(ip + 20, pl);
        put16(ip + 24, chance(50) ? (uint16_t)rnd_range(1, 7) : (uint16_t)rnd_range((uint32_t)pl + 1, 65535));
        l4_csum(ip + 20, pl, 6, proto, c->src_ip, c->dst_ip, 1);
        break;
    default: /* unknown protocol number */
        proto = (uint8_t)rnd_range(139, 255);
        rnd_bytes(ip + 20, pl);
        break;
    }
    ip4(ip, 5, (uint16_t)(20 + pl), 0, proto, c->src_ip, c->dst_ip);
    return n + 20 + pl;
}

static size_t mk_tcp(const struct ctx *c, uint8_t *f)
{
    size_t n = eth(f, c->dst_mac, c->own_mac, ETHT_IPV4);
    uint8_t *ip = f + n, *t = ip + 20;
    size_t seg, pl;
    static const uint8_t flag_sets[] = {
        TCP_SYN,           TCP_SYN | TCP_FIN, TCP_SYN | TCP_RST, TCP_FIN | TCP_RST,         0x3f, 0x00, TCP_RST,
        TCP_RST | TCP_ACK, TCP_FIN,           TCP_ACK,           TCP_ACK | TCP_PSH,         0xff, 0xc2,
        TCP_URG | TCP_ACK, TCP_SYN | TCP_ACK, TCP_FIN | TCP_PSH | TCP_URG,
    };
    uint8_t flags = chance(80) ? flag_sets[rnd() % sizeof flag_sets] : (uint8_t)rnd();
    unsigned doff = 5; /* value of the data offset field */
    size_t hl = 20;    /* header bytes actually present */
    int bad_sum = 0;
    switch (rnd() % 5) {
    case 0: /* header truncated */
        seg = rnd_range(0, 19);
        tcp_hdr(t, rnd_port(), rnd_port(), 5, flags);
        ip4(ip, 5, (uint16_t)(20 + seg), 0, PROTO_TCP, c->src_ip, c->dst_ip);
        return n + 20 + seg;
    case 1: /* bad checksum */
        bad_sum = 1;
        pl = rnd_payload_len(1460);
        break;
    case 2: /* data offset < 5, or pointing past the end of the segment */
        pl = rnd_range(0, 36);
        if (chance(50))
            doff = chance(50) ? 0 : rnd_range(1, 4);
        else
            doff = rnd_range((unsigned)(5 + pl / 4 + 1), 15);
        break;
    case 3: /* options garbage: kinds with lengths 0, 1 or past the header */
        doff = rnd_range(6, 15);
        hl = (size_t)doff * 4;
        pl = rnd_range(0, 32);
        break;
    default: /* random flag combinations, checksum correct */
        pl = rnd_payload_len(200);
        break;
    }
    tcp_hdr(t, rnd_port(), rnd_port(), doff, flags);
    if (hl > 20) {
        static const uint8_t kinds[] = {2, 3, 4, 5, 8, 0, 1, 254, 255};
        rnd_bytes(t + 20, hl - 20);
        for (size_t o = 20; o + 1 < hl; o += 4) {
            t[o] = kinds[rnd() % sizeof kinds];
            t[o + 1] = (uint8_t)(chance(50) ? rnd_range(0, 1) : rnd_range(40, 255));
        }
    }
    seg = hl + pl;
    rnd_bytes(t + hl, pl);
    ip4(ip, 5, (uint16_t)(20 + seg), 0, PROTO_TCP, c->src_ip, c->dst_ip);
    l4_csum(t, seg, 16, PROTO_TCP, c->src_ip, c->dst_ip, 1);
    if (bad_sum)
        t[16] ^= (uint8_t)rnd_range(1, 255);
    return n + 20 + seg;
}

static size_t mk_udp(const struct ctx *c, uint8_t *f)
{
    size_t n = eth(f, c->dst_mac, c->own_mac, ETHT_IPV4);
    uint8_t *ip = f + n, *u = ip + 20;
    size_t pl = rnd_payload_len(1472), seg = 8 + pl;
    uint16_t ulen = (uint16_t)seg;
    int bad_sum = 0, zero_sum = 0;
    switch (rnd() % 5) {
    case 0: /* header truncated */
        seg = rnd_range(0, 7);
        rnd_bytes(u, seg);
        ip4(ip, 5, (uint16_t)(20 + seg), 0, PROTO_UDP, c->src_ip, c->dst_ip);
        return n + 20 + seg;
    case 1: /* length beyond the datagram */
        ulen = (uint16_t)rnd_range((uint32_t)seg + 1, 65535);
        break;
    case 2: /* length below the header size */
        ulen = (uint16_t)rnd_range(0, 7);
        break;
    case 3: /* bad checksum */
        bad_sum = 1;
        break;
    default: /* shorter than the datagram, no checksum */
        ulen = (uint16_t)rnd_range(8, (uint32_t)seg);
        zero_sum = 1;
        break;
    }
    put16(u, rnd_port());
    put16(u + 2, rnd_port());
    put16(u + 4, ulen);
    rnd_bytes(u + 8, pl);
    l4_csum(u, seg, 6, PROTO_UDP, c->src_ip, c->dst_ip, 1);
    if (bad_sum)
        u[6] ^= (uint8_t)rnd_range(1, 255);
    if (zero_sum)
        put16(u + 6, 0);
    ip4(ip, 5, (uint16_t)(20 + seg), 0, PROTO_UDP, c->src_ip, c->dst_ip);
    return n + 20 + seg;
}

static size_t mk_icmp(const struct ctx *c, uint8_t *f)
{
    size_t n = eth(f, c->dst_mac, c->own_mac, ETHT_IPV4);
    uint8_t *ip = f + n, *m = ip + 20;
    size_t seg = 8 + rnd_payload_len(1472);
    static const uint8_t types[] = {8, 0, 3, 4, 5, 11, 12, 13, 14, 17, 18, 255};
    switch (rnd() % 3) {
    case 0: /* truncated below the 8-byte header */
        seg = rnd_range(0, 7);
        rnd_bytes(m, seg);
        if (seg > 0)
            m[0] = 8;
        break;
    case 1: /* echo request with a bad checksum */
        rnd_bytes(m, seg);
        m[0] = 8;
        m[1] = (uint8_t)(chance(80) ? 0 : rnd());
        l4_csum(m, seg, 2, PROTO_ICMP, 0, 0, 0);
        m[3] ^= (uint8_t)rnd_range(1, 255);
        break;
    default: /* odd types/codes with a correct checksum (redirects, errors quoting garbage) */
        rnd_bytes(m, seg);
        m[0] = chance(80) ? types[rnd() % sizeof types] : (uint8_t)rnd();
        m[1] = (uint8_t)rnd_range(0, 16);
        if (m[0] == 8) /* never a well-formed echo request */
            m[0] = 42;
        l4_csum(m, seg, 2, PROTO_ICMP, 0, 0, 0);
        break;
    }
    ip4(ip, 5, (uint16_t)(20 + seg), 0, PROTO_ICMP, c->src_ip, c->dst_ip);
    return n + 20 + seg;
}

static size_t mk_arp(const struct ctx *c, uint8_t *f)
{
    uint8_t smac[6];
    /* never claim the peer's or the stack's address: that would be spoofing,
       a different test, and would break the peer's traffic afterwards */
    uint32_t sip = other_ip_subnet(c);
    rnd_mac(smac);
    size_t n = eth(f, chance(50) ? mac_bcast : c->dst_mac, smac, ETHT_ARP);
    uint8_t *a = f + n;
    put16(a, 1);
    put16(a + 2, ETHT_IPV4);
    a[4] = 6;
    a[5] = 4;
    put16(a + 6, 1);
    memcpy(a + 8, smac, 6);
    put32(a + 14, sip);
    memset(a + 18, 0, 6);
    put32(a + 24, c->dst_ip);
    size_t len = 28;
    switch (rnd() % 6) {
    case 0:
        put16(a, (uint16_t)rnd_range(2, 65535)); /* hardware type */
        break;
    case 1:
        put16(a + 2, (uint16_t)(chance(50) ? ETHT_IPV6 : rnd())); /* protocol type */
        break;
    case 2:
        do
            a[4] = (uint8_t)rnd(); /* hardware length */
        while (a[4] == 6);
        break;
    case 3:
        do
            a[5] = (uint8_t)rnd(); /* protocol length */
        while (a[5] == 4);
        break;
    case 4:
        put16(a + 6, chance(50) ? 0 : (uint16_t)rnd_range(3, 65535)); /* opcode */
        break;
    default:
        len = rnd_range(0, 27); /* truncated */
        break;
    }
    return n + len;
}

static size_t mk_other_dst(const struct ctx *c, uint8_t *f)
{
    uint8_t dmac[6], smac[6];
    uint32_t sip = c->src_ip, dip = c->dst_ip;
    memcpy(dmac, c->dst_mac, 6);
    memcpy(smac, c->own_mac, 6);
    switch (rnd() % 7) {
    case 0: /* broadcast MAC, our IP */
        memcpy(dmac, mac_bcast, 6);
        break;
    case 1: /* another unicast MAC, our IP */
        rnd_mac(dmac);
        break;
    case 2: /* our MAC, another IP in the subnet (needs forwarding, TTL 1) */
        dip = other_ip_subnet(c);
        break;
    case 3: /* our MAC, an IP outside the subnet */
        dip = other_ip_far();
        break;
    case 4: /* subnet / limited broadcast */
        memcpy(dmac, mac_bcast, 6);
        dip = chance(50) ? (c->dst_ip | 0xffu) : 0xffffffffu;
        break;
    case 5: { /* multicast */
        uint32_t g = 0xe0000000u | rnd_range(1, 0x7fffff);
        dip = g;
        dmac[0] = 0x01;
        dmac[1] = 0x00;
        dmac[2] = 0x5e;
        dmac[3] = (uint8_t)((g >> 16) & 0x7f);
        dmac[4] = (uint8_t)(g >> 8);
        dmac[5] = (uint8_t)g;
        break;
    }
    default: { /* martian sources, from an unknown MAC */
        static const uint32_t martians[] = {0x00000000u, 0xffffffffu, 0x7f000001u, 0xe0000001u};
        rnd_mac(smac);
        sip = martians[rnd() % 4];
        if (chance(25))
            sip = c->dst_ip; /* the stack's own address */
        break;
    }
    }
    size_t n = eth(f, dmac, smac, ETHT_IPV4);
    uint8_t *ip = f + n, *l4 = ip + 20;
    size_t seg;
    uint8_t proto;
    switch (rnd() % 3) {
    case 0:
        proto = PROTO_UDP;
        seg = 8 + rnd_range(0, 64);
        put16(l4, rnd_port());
        put16(l4 + 2, rnd_port());
        put16(l4 + 4, (uint16_t)seg);
        rnd_bytes(l4 + 8, seg - 8);
        l4_csum(l4, seg, 6, proto, sip, dip, 1);
        break;
    case 1:
        proto = PROTO_ICMP;
        seg = 8 + rnd_range(0, 64);
        rnd_bytes(l4, seg);
        l4[0] = 8;
        l4[1] = 0;
        l4_csum(l4, seg, 2, proto, 0, 0, 0);
        break;
    default:
        proto = PROTO_TCP;
        seg = 20;
        tcp_hdr(l4, rnd_port(), rnd_port(), 5, TCP_SYN);
        l4_csum(l4, seg, 16, proto, sip, dip, 1);
        break;
    }
    ip4(ip, 5, (uint16_t)(20 + seg), 0, proto, sip, dip);
    ip[8] = 1; /* TTL 1: nothing of this goes further than one hop */
    ip4_recsum(ip);
    return n + 20 + seg;
}

static size_t mk_vlan(const struct ctx *c, uint8_t *f)
{
    size_t n = 12;
    memcpy(f, chance(70) ? c->dst_mac : mac_bcast, 6);
    memcpy(f + 6, c->own_mac, 6);
    if (chance(25)) { /* QinQ outer tag */
        put16(f + n, ETHT_QINQ);
        put16(f + n + 2, (uint16_t)rnd());
        n += 4;
    }
    put16(f + n, ETHT_VLAN);
    put16(f + n + 2, (uint16_t)(chance(30) ? 0 : rnd_range(0, 0xffff))); /* priority tag / any VID */
    n += 4;
    switch (rnd() % 4) {
    case 0: /* tag and nothing more */
        return n + rnd_range(0, 1);
    case 1: { /* ARP request for the stack inside the tag */
        uint8_t smac[6];
        rnd_mac(smac);
        put16(f + n, ETHT_ARP);
        uint8_t *a = f + n + 2;
        put16(a, 1);
        put16(a + 2, ETHT_IPV4);
        a[4] = 6;
        a[5] = 4;
        put16(a + 6, 1);
        memcpy(a + 8, smac, 6);
        put32(a + 14, other_ip_subnet(c));
        memset(a + 18, 0, 6);
        put32(a + 24, c->dst_ip);
        return n + 2 + 28;
    }
    case 2: { /* UDP to the stack inside the tag */
        size_t seg = 8 + rnd_range(0, 64);
        put16(f + n, ETHT_IPV4);
        uint8_t *ip = f + n + 2, *u = ip + 20;
        put16(u, rnd_port());
        put16(u + 2, rnd_port());
        put16(u + 4, (uint16_t)seg);
        rnd_bytes(u + 8, seg - 8);
        l4_csum(u, seg, 6, PROTO_UDP, c->src_ip, c->dst_ip, 1);
        ip4(ip, 5, (uint16_t)(20 + seg), 0, PROTO_UDP, c->src_ip, c->dst_ip);
        return n + 2 + 20 + seg;
    }
    default: { /* random inner type and bytes */
        size_t pl = rnd_range(0, 200);
        put16(f + n, (uint16_t)rnd());
        rnd_bytes(f + n + 2, pl);
        return n + 2 + pl;
    }
    }
}

static void ip6_addr(uint8_t *a, int link_local)
{
    memset(a, 0, 16);
    if (link_local) {
        a[0] = 0xfe;
        a[1] = 0x80;
    } else { /* 2001:2::/48, the IPv6 benchmark range */
        a[0] = 0x20;
        a[1] = 0x01;
        a[2] = 0x00;
        a[3] = 0x02;
    }
    rnd_bytes(a + 8, 8);
}

static size_t mk_ipv6(const struct ctx *c, uint8_t *f)
{
    static const uint8_t mac_all_nodes[6] = {0x33, 0x33, 0, 0, 0, 1};
    size_t n = eth(f, chance(50) ? c->dst_mac : mac_all_nodes, c->own_mac, ETHT_IPV6);
    uint8_t *h = f + n;
    size_t pl = rnd_range(0, 256);
    h[0] = 0x60;
    h[1] = 0;
    h[2] = 0;
    h[3] = 0;
    put16(h + 4, (uint16_t)pl);
    h[6] = 58; /* ICMPv6 */
    h[7] = 255;
    ip6_addr(h + 8, chance(50));
    ip6_addr(h + 24, chance(50));
    rnd_bytes(h + 40, pl);
    switch (rnd() % 5) {
    case 0: /* truncated header */
        return n + rnd_range(0, 39);
    case 1: /* wrong version */
        h[0] = (uint8_t)(rnd_range(0, 15) << 4);
        if (h[0] == 0x60)
            h[0] = 0x40;
        break;
    case 2: /* payload length mismatch */
        put16(h + 4, (uint16_t)(chance(50) ? rnd_range((uint32_t)pl + 1, 65535) : 0));
        break;
    case 3: /* extension header chain with bad lengths */
        h[6] = chance(50) ? 0 /* hop-by-hop */ : (uint8_t)(chance(50) ? 44 /* fragment */ : 60);
        if (pl >= 2) {
            h[40] = (uint8_t)rnd();
            h[41] = (uint8_t)rnd();
        }
        break;
    default: /* ICMPv6 with a random type; checksum left as garbage */
        if (pl >= 4) {
            h[40] = (uint8_t)(chance(50) ? rnd_range(128, 137) : rnd());
            h[41] = 0;
        }
        break;
    }
    return n + 40 + pl;
}

typedef size_t (*builder_fn)(const struct ctx *, uint8_t *);

static const builder_fn builders[C_COUNT] = {
    [C_RANDOM] = mk_random,         [C_ETH_TRUNC] = mk_eth_trunc, [C_IP_TRUNC] = mk_ip_trunc,
    [C_IP_BAD_IHL] = mk_ip_bad_ihl, [C_IP_BAD_LEN] = mk_ip_bad_len, [C_IP_BAD_CSUM] = mk_ip_bad_csum,
    [C_IP_FRAG] = mk_ip_frag,       [C_IP_PROTO] = mk_ip_proto,   [C_TCP] = mk_tcp,
    [C_UDP] = mk_udp,               [C_ICMP] = mk_icmp,           [C_ARP] = mk_arp,
    [C_OTHER_DST] = mk_other_dst,   [C_VLAN] = mk_vlan,           [C_IPV6] = mk_ipv6,
};

/* ------------------------------------------------------------------------- */

static int parse_mac(const char *s, uint8_t *m)
{
    unsigned v[6];
    char tail;
    if (sscanf(s, "%x:%x:%x:%x:%x:%x%c", &v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &tail) != 6)
        return -1;
    for (int i = 0; i < 6; i++) {
        if (v[i] > 0xff)
            return -1;
        m[i] = (uint8_t)v[i];
    }
    return 0;
}

static int parse_ip(const char *s, uint32_t *ip)
{
    struct in_addr a;
    if (inet_pton(AF_INET, s, &a) != 1)
        return -1;
    *ip = ntohl(a.s_addr);
    return 0;
}

static int parse_u64(const char *s, uint64_t *v)
{
    char *end;
    errno = 0;
    unsigned long long x = strtoull(s, &end, 0);
    if (errno || end == s || *end || s[0] == '-')
        return -1;
    *v = x;
    return 0;
}

/* is name in the comma-separated list? */
static int in_list(const char *list, const char *name)
{
    size_t n = strlen(name);
    for (const char *p = list; p && *p;) {
        const char *e = strchr(p, ',');
        size_t l = e ? (size_t)(e - p) : strlen(p);
        if (l == n && strncmp(p, name, n) == 0)
            return 1;
        p = e ? e + 1 : NULL;
    }
    return 0;
}

static void usage(void)
{
    fprintf(stderr, "usage: garbage_tx IFNAME DST_MAC SRC_IP DST_IP COUNT SEED [PAUSE_US_PER_64]\n");
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
    struct ctx c;
    uint64_t count, seed, pause_us = 0;
    if (argc != 7 && argc != 8) {
        usage();
        return 2;
    }
    if (parse_mac(argv[2], c.dst_mac) || parse_ip(argv[3], &c.src_ip) || parse_ip(argv[4], &c.dst_ip) ||
        parse_u64(argv[5], &count) || parse_u64(argv[6], &seed) || (argc == 8 && parse_u64(argv[7], &pause_us))) {
        usage();
        return 2;
    }
    unsigned ifindex = if_nametoindex(argv[1]);
    if (ifindex == 0) {
        fprintf(stderr, "garbage_tx: interface %s: %s\n", argv[1], strerror(errno));
        return 1;
    }
    /* protocol 0: this socket sends only and never receives */
    int fd = socket(AF_PACKET, SOCK_RAW, 0);
    if (fd < 0) {
        fprintf(stderr, "garbage_tx: socket(AF_PACKET): %s\n", strerror(errno));
        return 1;
    }
    struct ifreq ifr;
    memset(&ifr, 0, sizeof ifr);
    snprintf(ifr.ifr_name, sizeof ifr.ifr_name, "%s", argv[1]);
    if (ioctl(fd, SIOCGIFHWADDR, &ifr) < 0) {
        fprintf(stderr, "garbage_tx: SIOCGIFHWADDR %s: %s\n", argv[1], strerror(errno));
        return 1;
    }
    memcpy(c.own_mac, ifr.ifr_hwaddr.sa_data, 6);
    struct sockaddr_ll sll;
    memset(&sll, 0, sizeof sll);
    sll.sll_family = AF_PACKET;
    sll.sll_protocol = 0;
    sll.sll_ifindex = (int)ifindex;
    if (bind(fd, (struct sockaddr *)&sll, sizeof sll) < 0) {
        fprintf(stderr, "garbage_tx: bind %s: %s\n", argv[1], strerror(errno));
        return 1;
    }

    unsigned enabled[C_COUNT], n_enabled = 0;
    const char *only = getenv("GARBAGE_TX_ONLY"), *skip = getenv("GARBAGE_TX_SKIP");
    for (unsigned k = 0; k < C_COUNT; k++) {
        if (only && *only && !in_list(only, class_names[k]))
            continue;
        if (skip && *skip && in_list(skip, class_names[k]))
            continue;
        enabled[n_enabled++] = k;
    }
    if (n_enabled == 0) {
        fprintf(stderr, "garbage_tx: GARBAGE_TX_ONLY/GARBAGE_TX_SKIP leave no class\n");
        return 2;
    }

    rng_seed(seed);
    static uint8_t frame[2048];
    uint64_t sent[C_COUNT] = {0}, rejected[C_COUNT] = {0}, bytes = 0, retries = 0;
    double t0 = now_s();

    for (uint64_t i = 0; i < count; i++) {
        unsigned cls = enabled[i % n_enabled];
        memset(frame, 0, sizeof frame);
        size_t len = builders[cls](&c, frame);
        if (len > FRAME_MAX) {
            fprintf(stderr, "garbage_tx: internal error: class %s built %zu bytes\n", class_names[cls], len);
            return 1;
        }
        unsigned tries = 0;
        for (;;) {
            ssize_t r = send(fd, frame, len, 0);
            if (r == (ssize_t)len) {
                sent[cls]++;
                bytes += len;
                break;
            }
            if (r >= 0) {
                fprintf(stderr, "garbage_tx: short send %zd of %zu\n", r, len);
                return 1;
            }
            if (errno == EINTR)
                continue;
            if (errno == ENOBUFS || errno == EAGAIN) {
                retries++;
                if (++tries > 100000) {
                    fprintf(stderr, "garbage_tx: interface stays congested (ENOBUFS), giving up\n");
                    return 1;
                }
                usleep(tries < 10 ? 20 : 200);
                continue;
            }
            if (errno == EINVAL && len < ETH_HDR) {
                rejected[cls]++;
                break;
            }
            fprintf(stderr, "garbage_tx: send (class %s, %zu bytes): %s\n", class_names[cls], len, strerror(errno));
            return 1;
        }
        if (pause_us && (i & 63) == 63)
            usleep((useconds_t)pause_us);
    }
    double dt = now_s() - t0;

    uint64_t tot_sent = 0, tot_rej = 0;
    printf("garbage_tx: if=%s dst_mac=%s src=%s dst=%s count=%" PRIu64 " seed=%" PRIu64 "\n", argv[1], argv[2],
           argv[3], argv[4], count, seed);
    for (unsigned k = 0; k < C_COUNT; k++) {
        if (sent[k] == 0 && rejected[k] == 0)
            continue;
        printf("  %-20s sent %8" PRIu64 "  rejected_by_kernel %6" PRIu64 "\n", class_names[k], sent[k], rejected[k]);
        tot_sent += sent[k];
        tot_rej += rejected[k];
    }
    printf("garbage_tx: total sent=%" PRIu64 " rejected_by_kernel=%" PRIu64 " bytes=%" PRIu64
           " enobufs_retries=%" PRIu64 " elapsed=%.2fs\n",
           tot_sent, tot_rej, bytes, retries, dt);
    close(fd);
    return 0;
}
