/*
 * test_frame_filter.c - the rules for what lwIP may see, one behaviour per
 * test. Frames are built byte by byte here; no DPDK, no lwIP. TAP output.
 */
#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>

#include "common/inet_csum.h"
#include "filter/frame_filter.h"

static const uint8_t our_mac[6] = {0x02, 0, 0, 0, 0, 0x02};
static const uint8_t other_mac[6] = {0x02, 0, 0, 0, 0, 0x09};
static const uint8_t bcast_mac[6] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff};

static struct frame_filter flt;
static uint8_t frame[1514];
#include "tap.h"

static void put16(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t)(v >> 8);
    p[1] = (uint8_t)v;
}

static void eth(const uint8_t *dst, uint16_t type)
{
    memset(frame, 0, sizeof(frame));
    memcpy(frame, dst, 6);
    memcpy(frame + 6, other_mac, 6);
    put16(frame + 12, type);
}

static void ipv4_csum(uint8_t *ip, size_t hlen)
{
    put16(ip + 10, 0);
    uint32_t sum = 0;
    for (size_t i = 0; i < hlen; i += 2)
        sum += (uint32_t)(ip[i] << 8 | ip[i + 1]);
    while (sum >> 16)
        sum = (sum & 0xffff) + (sum >> 16);
    put16(ip + 10, (uint16_t)~sum);
}

/* Ethernet + a 20-byte IPv4 header to dst carrying payload bytes; returns frame length. */
static size_t ipv4(const uint8_t *dmac, const char *dst, size_t payload)
{
    eth(dmac, 0x0800);
    uint8_t *ip = frame + 14;
    ip[0] = 0x45;
    put16(ip + 2, (uint16_t)(20 + payload));
    ip[8] = 64;
    ip[9] = 6;
    inet_pton(AF_INET, "198.18.0.1", ip + 12);
    inet_pton(AF_INET, dst, ip + 16);
    ipv4_csum(ip, 20);
    return 14 + 20 + payload;
}

static size_t arp(const uint8_t *dmac, uint16_t op)
{
    eth(dmac, 0x0806);
    uint8_t *a = frame + 14;
    put16(a, 1);
    put16(a + 2, 0x0800);
    a[4] = 6;
    a[5] = 4;
    put16(a + 6, op);
    return 14 + 28;
}

static enum frame_verdict run(size_t len);

/* A TCP segment to us (20-byte header, payload bytes) with a right
 * checksum; returns the frame length. */
static size_t tcp_seg(size_t payload)
{
    size_t len = ipv4(our_mac, "198.18.0.2", 20 + payload);
    uint8_t *ip = frame + 14, *t = ip + 20;
    memset(t, 0, 20 + payload);
    put16(t, 40000);
    put16(t + 2, 6379);
    t[12] = 5 << 4;
    t[13] = 0x10;
    for (size_t i = 0; i < payload; i++)
        t[20 + i] = (uint8_t)i;
    put16(t + 16, inet_tcp_csum(ip, 20, 40 + payload));
    return len;
}

static void test_hw_flags(void)
{
    size_t len = tcp_seg(100);
    check(frame_classify_hw(&flt, frame, len, FRAME_HW_IP_BAD) == FRAME_BAD_CSUM,
          "the port's bad IPv4 checksum verdict drops the frame");
    frame[14 + 10] ^= 0xff; /* break the IPv4 header checksum */
    check(run(len) == FRAME_BAD_CSUM, "a wrong IPv4 header checksum is caught without the port");
    check(frame_classify_hw(&flt, frame, len, FRAME_HW_IP_GOOD) == FRAME_PASS,
          "the port's good IPv4 verdict is trusted (no second check)");
    len = tcp_seg(100);
    frame[14 + 20 + 30] ^= 1; /* corrupt the payload: TCP checksum now wrong */
    check(run(len) == FRAME_PASS, "without check_tcp the TCP checksum is lwIP's to check");
    flt.check_tcp = 1;
    check(run(len) == FRAME_BAD_CSUM, "with check_tcp, a segment the port did not check is checked here");
    check(frame_classify_hw(&flt, frame, len, FRAME_HW_L4_BAD) == FRAME_BAD_CSUM,
          "the port's bad TCP verdict drops the segment");
    check(frame_classify_hw(&flt, frame, len, FRAME_HW_IP_GOOD | FRAME_HW_L4_GOOD) == FRAME_PASS,
          "the port's good TCP verdict is trusted");
    len = tcp_seg(100);
    check(run(len) == FRAME_PASS, "with check_tcp, a right TCP checksum passes");
    len = tcp_seg(101);
    check(run(len) == FRAME_PASS, "an odd-length segment's checksum is right too");
    len = tcp_seg(100);
    frame[14 + 20 + 30] ^= 1;
    frame[14 + 6] = 0x20; /* more fragments: the checksum covers the datagram */
    ipv4_csum(frame + 14, 20);
    check(run(len) == FRAME_PASS, "with check_tcp, a first fragment passes unchecked (lwIP checks the datagram)");
    frame[14 + 6] = 0;
    ipv4_csum(frame + 14, 20);
    check(run(len) == FRAME_BAD_CSUM, "with check_tcp, the same segment whole is caught");
    check(run(len - 1) == FRAME_MALFORMED, "a segment cut short of its IPv4 total length is malformed");
    flt.check_tcp = 0;
}

/* The common-case check (frame_common_tcp, the stack's round) is a
 * shortcut of the general path: every frame it passes must pass the
 * general path too (frame_classify_rest, the one place every other verdict
 * comes from). Each byte of a good segment's headers changed in four ways,
 * with the IPv4 checksum left as it is and made right again, at three
 * lengths, under the port's checksum verdicts and with check_tcp on and
 * off. */
static void test_common_agrees(void)
{
    static const unsigned hws[] = {0, FRAME_HW_IP_GOOD, FRAME_HW_IP_GOOD | FRAME_HW_L4_GOOD, FRAME_HW_IP_BAD,
                                   FRAME_HW_L4_BAD};
    unsigned tried = 0, passed = 0, wrong = 0;
    for (int ct = 0; ct < 2; ct++) {
        flt.check_tcp = (uint8_t)ct;
        for (size_t pos = 0; pos < 14 + 20 + 20; pos++) {
            for (int how = 0; how < 8; how++) {
                size_t len = tcp_seg(100);
                uint8_t v = frame[pos];
                static const uint8_t flips[4] = {0x01, 0x80, 0xff, 0x10};
                frame[pos] = how % 4 == 2 ? (uint8_t)(v == 0 ? 0xff : 0) : (uint8_t)(v ^ flips[how % 4]);
                if (how >= 4 && pos >= 14 && pos < 14 + 20)
                    ipv4_csum(frame + 14, 20);
                const size_t lens[3] = {len, len - 1, len + 6};
                for (size_t l = 0; l < 3; l++)
                    for (size_t h = 0; h < sizeof(hws) / sizeof(hws[0]); h++) {
                        tried++;
                        if (!frame_common_tcp(&flt, frame, lens[l], hws[h]))
                            continue;
                        passed++;
                        enum frame_verdict r = frame_classify_rest(&flt, frame, lens[l], hws[h]);
                        if (r != FRAME_PASS && wrong++ == 0)
                            printf("# byte %zu changed (way %d), length %zu, hw 0x%x, check_tcp %d: the common "
                                   "case passes it, the general path says %s\n",
                                   pos, how, lens[l], hws[h], ct, frame_verdict_name(r));
                    }
            }
        }
    }
    flt.check_tcp = 0;
    printf("# common case: %u of %u changed frames passed, %u of them not by the general path\n", passed, tried,
           wrong);
    check(wrong == 0, "every frame the common-case check passes, the general path passes too");
    check(passed > 0 && passed < tried, "the changed frames include some the common case passes and some it does not");
}

static enum frame_verdict run(size_t len)
{
    return frame_classify(&flt, frame, len);
}

int main(void)
{
    uint32_t addr, mask;
    inet_pton(AF_INET, "198.18.0.2", &addr);
    inet_pton(AF_INET, "255.255.255.0", &mask);
    frame_filter_init(&flt, our_mac, addr, mask);

    check(run(ipv4(our_mac, "198.18.0.2", 20)) == FRAME_PASS, "IPv4 to our MAC and address passes");
    check(run(ipv4(bcast_mac, "198.18.0.255", 8)) == FRAME_PASS, "IPv4 subnet broadcast passes");
    check(run(ipv4(bcast_mac, "255.255.255.255", 8)) == FRAME_PASS, "IPv4 limited broadcast passes");
    check(run(ipv4(our_mac, "198.18.0.7", 20)) == FRAME_NOT_OURS, "IPv4 to another address is not ours (never forwarded)");
    check(run(ipv4(other_mac, "198.18.0.2", 20)) == FRAME_NOT_OURS, "frame to another MAC is not ours");
    check(run(ipv4(our_mac, "224.0.0.1", 8)) == FRAME_NOT_OURS, "IPv4 multicast is not ours");
    check(run(arp(bcast_mac, 1)) == FRAME_PASS, "broadcast ARP request passes");
    check(run(arp(our_mac, 2)) == FRAME_PASS, "ARP reply to us passes");
    check(run(arp(our_mac, 9)) == FRAME_MALFORMED, "ARP with an unknown opcode is malformed");
    check(run(arp(our_mac, 1) - 1) == FRAME_MALFORMED, "truncated ARP is malformed");
    arp(our_mac, 1);
    frame[14 + 4] = 8;
    check(run(42) == FRAME_UNSUPPORTED, "ARP with a non-Ethernet address length is unsupported");

    check(run(13) == FRAME_MALFORMED, "frame shorter than an Ethernet header is malformed");
    check(run(0) == FRAME_MALFORMED, "empty frame is malformed");
    eth(our_mac, 0x86dd);
    check(run(60) == FRAME_UNSUPPORTED, "IPv6 is unsupported");
    eth(our_mac, 0x8100);
    check(run(60) == FRAME_UNSUPPORTED, "VLAN-tagged frame is unsupported");

    size_t len = ipv4(our_mac, "198.18.0.2", 20);
    check(run(14 + 19) == FRAME_MALFORMED, "truncated IPv4 header is malformed");
    frame[14] = 0x44;
    ipv4_csum(frame + 14, 20);
    check(run(len) == FRAME_MALFORMED, "IHL below 5 is malformed");
    ipv4(our_mac, "198.18.0.2", 20);
    frame[14] = 0x4f;
    check(run(len) == FRAME_MALFORMED, "IHL longer than the frame is malformed");
    ipv4(our_mac, "198.18.0.2", 20);
    frame[14] = 0x65;
    check(run(len) == FRAME_MALFORMED, "IP version 6 in an IPv4 EtherType is malformed");
    ipv4(our_mac, "198.18.0.2", 20);
    put16(frame + 16, 200);
    ipv4_csum(frame + 14, 20);
    check(run(len) == FRAME_MALFORMED, "IPv4 total length beyond the frame is malformed");
    put16(frame + 16, 10);
    ipv4_csum(frame + 14, 20);
    check(run(len) == FRAME_MALFORMED, "IPv4 total length below the header is malformed");
    ipv4(our_mac, "198.18.0.2", 20);
    check(run(len + 6) == FRAME_PASS, "Ethernet padding after the IPv4 packet is fine");
    frame[14 + 8] ^= 0x01;
    check(run(len) == FRAME_BAD_CSUM, "IPv4 header checksum mismatch is a bad checksum");

    ipv4(our_mac, "198.18.0.2", 20);
    frame[14 + 9] = 17;
    ipv4_csum(frame + 14, 20);
    check(run(len) == FRAME_UNSUPPORTED, "UDP is unsupported (udp_enable = 0)");
    frame[14 + 9] = 136;
    ipv4_csum(frame + 14, 20);
    check(run(len) == FRAME_UNSUPPORTED, "UDP-Lite is unsupported (lwIP's aborts on bad coverage)");
    frame[14 + 9] = 2;
    ipv4_csum(frame + 14, 20);
    check(run(len) == FRAME_UNSUPPORTED, "IGMP is unsupported");
    frame[14 + 9] = 1;
    ipv4_csum(frame + 14, 20);
    check(run(len) == FRAME_PASS, "ICMP passes");

    static const char *const martians[] = {"198.18.0.2", "127.0.0.1", "0.0.0.0", "224.0.0.5",
                                           "240.0.0.1", "255.255.255.255", "198.18.0.255"};
    for (size_t i = 0; i < sizeof(martians) / sizeof(martians[0]); i++) {
        char name[96];
        ipv4(our_mac, "198.18.0.2", 20);
        inet_pton(AF_INET, martians[i], frame + 14 + 12);
        ipv4_csum(frame + 14, 20);
        snprintf(name, sizeof(name), "source %s is martian (its reply would loop back)", martians[i]);
        check(run(len) == FRAME_MARTIAN, name);
    }

    check(strcmp(frame_verdict_name(FRAME_NOT_OURS), "not_ours") == 0, "verdicts have names");
    test_hw_flags();
    test_common_agrees();
    return tap_done();
}
