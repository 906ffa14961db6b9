/*
 * test_inet_csum.c - the Internet checksum routines (common/inet_csum.c)
 * against a byte-at-a-time reference: every length 0..300 at every start
 * offset 0..7, with and without a carried-in sum, on random bytes and on
 * all-0xff bytes (the most carries); and RFC 1071's worked example.
 * inet_csum_native is lwIP's LWIP_CHKSUM (lwipopts.h): the two stacks of the
 * other tests would agree with each other on a wrong sum, so this test is
 * what ties it to the definition. The same for the TCP and IPv4 header
 * fields the stack fills in on a port without checksum offload
 * (inet_frame_csum_fill) and the filter's TCP check.
 */
#include <arpa/inet.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/inet_csum.h"
#include "tap.h"

/* RFC 1071: 16-bit big-endian words, a last odd byte padded with 0,
 * end-around carry, not inverted. */
static uint32_t ref_add(uint32_t sum, const uint8_t *p, size_t len)
{
    uint64_t s = sum;
    for (size_t i = 0; i < len; i++)
        s += (i & 1) ? p[i] : (uint32_t)p[i] << 8;
    while (s >> 16)
        s = (s & 0xffff) + (s >> 16);
    return (uint32_t)s;
}

/* Segment-sized and larger sums (the 32-byte steps with their carries,
 * many times over): lengths around 1460, 9000 and 65535 at offsets 0..7,
 * random bytes and all 0xff. */
static void large(void)
{
    static uint8_t big[65536 + 8];
    static const size_t lens[] = {1460, 1461, 8999, 9000, 65504, 65535};
    int bad = 0;
    for (int pass = 0; pass < 2; pass++) {
        for (size_t i = 0; i < sizeof(big); i++)
            big[i] = pass ? 0xff : (uint8_t)rand();
        for (size_t off = 0; off < 8; off++)
            for (size_t k = 0; k < sizeof(lens) / sizeof(lens[0]); k++) {
                const uint8_t *p = big + off;
                uint32_t want = ref_add(0, p, lens[k]);
                bad += inet_csum_native(p, lens[k]) != htons((uint16_t)want);
                bad += inet_csum_add(0x1234, p, lens[k]) != ref_add(0x1234, p, lens[k]);
            }
    }
    checkf(bad == 0, "sums of 1460 to 65535 bytes match the reference (%d wrong)", bad);
}

static void sweep(const char *what, const uint8_t *buf)
{
    int bad_add = 0, bad_native = 0, bad_carry = 0;
    for (size_t off = 0; off < 8; off++) {
        for (size_t len = 0; len <= 300; len++) {
            const uint8_t *p = buf + off;
            uint32_t want = ref_add(0, p, len);
            if (inet_csum_add(0, p, len) != want)
                bad_add++;
            if (inet_csum_native(p, len) != htons((uint16_t)want))
                bad_native++;
            if (inet_csum_add(0xfffe, p, len) != ref_add(0xfffe, p, len))
                bad_carry++;
        }
    }
    checkf(bad_add == 0, "%s: inet_csum_add equals the reference at every length and offset (%d differ)", what, bad_add);
    checkf(bad_native == 0, "%s: inet_csum_native is the reference in host order (lwIP's contract) (%d differ)", what,
           bad_native);
    checkf(bad_carry == 0, "%s: a carried-in sum is added with end-around carry (%d differ)", what, bad_carry);
}

/* The reference TCP checksum field of the IPv4 packet at ip: pseudo header
 * and segment with the field as zero, inverted. */
static uint16_t ref_tcp_field(const uint8_t *ip, size_t ihl, size_t tot)
{
    uint8_t ph[12];
    memcpy(ph, ip + 12, 8);
    ph[8] = 0;
    ph[9] = 6;
    ph[10] = (uint8_t)((tot - ihl) >> 8);
    ph[11] = (uint8_t)(tot - ihl);
    uint32_t s = ref_add(0, ph, 12);
    s = ref_add(s, ip + ihl, 16);
    s = ref_add(s, ip + ihl + 18, tot - ihl - 18);
    return (uint16_t)~s;
}

/* An Ethernet frame at f with a random IPv4 packet (header ihl bytes,
 * total tot) carrying proto, both checksum fields garbage. */
static void rand_frame(uint8_t *f, size_t ihl, size_t tot, uint8_t proto, uint16_t frag)
{
    for (size_t i = 0; i < 14 + tot; i++)
        f[i] = (uint8_t)rand();
    f[12] = 0x08;
    f[13] = 0x00;
    uint8_t *ip = f + 14;
    ip[0] = (uint8_t)(0x40 | ihl / 4);
    ip[2] = (uint8_t)(tot >> 8);
    ip[3] = (uint8_t)tot;
    ip[6] = (uint8_t)(frag >> 8);
    ip[7] = (uint8_t)frag;
    ip[9] = proto;
}

/* inet_frame_csum_fill (the stack's software checksum offload),
 * inet_tcp_csum and inet_tcp_verify against the reference: TCP segments of
 * 20-300 bytes behind headers of 20-60 bytes at 8 offsets. */
static void frames(void)
{
    static uint8_t buf[14 + 60 + 300 + 8];
    int bad_ip = 0, bad_tcp = 0, bad_csum = 0, bad_verify = 0, bad_flip = 0;
    srand(793);
    for (size_t ihl = 20; ihl <= 60; ihl += 8)
        for (size_t tcplen = 20; tcplen <= 300; tcplen += 7)
            for (size_t off = 0; off < 8; off++) {
                uint8_t *f = buf + off, *ip = f + 14;
                size_t tot = ihl + tcplen;
                rand_frame(f, ihl, tot, 6, 0x4000); /* DF: whole */
                int r = inet_frame_csum_fill(f, 14 + tot + (off & 1)); /* padding after the packet */
                uint8_t h[60];
                memcpy(h, ip, ihl);
                h[10] = h[11] = 0;
                uint16_t ipf = (uint16_t)~ref_add(0, h, ihl);
                bad_ip += r != 1 || (uint16_t)(ip[10] << 8 | ip[11]) != ipf;
                bad_tcp += (uint16_t)(ip[ihl + 16] << 8 | ip[ihl + 17]) != ref_tcp_field(ip, ihl, tot);
                bad_csum += inet_tcp_csum(ip, ihl, tot) != ref_tcp_field(ip, ihl, tot) ||
                            inet_ip_csum(ip, ihl) != ipf;
                bad_verify += !inet_tcp_verify(ip, ihl, tot);
                size_t bit = (size_t)rand() % (tcplen * 8);
                ip[ihl + bit / 8] ^= (uint8_t)(1u << (bit % 8));
                bad_flip += inet_tcp_verify(ip, ihl, tot);
            }
    checkf(bad_ip == 0, "inet_frame_csum_fill: the IPv4 header checksum is the reference's (%d wrong)", bad_ip);
    checkf(bad_tcp == 0, "inet_frame_csum_fill: the TCP checksum is the reference's (%d wrong)", bad_tcp);
    checkf(bad_csum == 0, "inet_tcp_csum and inet_ip_csum give the reference's fields (%d wrong)", bad_csum);
    checkf(bad_verify == 0, "inet_tcp_verify accepts every filled-in segment (%d refused)", bad_verify);
    checkf(bad_flip == 0, "inet_tcp_verify refuses a segment with one bit flipped (%d accepted)", bad_flip);

    /* inet_tcp20_csum_fill (the stack's output of its own segments): the
     * reference's two fields, segments of 20-300 bytes at 8 offsets, the
     * fields holding random bytes before. */
    int bad20 = 0;
    for (size_t tcplen = 20; tcplen <= 300; tcplen += 7)
        for (size_t off = 0; off < 8; off++) {
            uint8_t *f = buf + off, *ip = f + 14;
            size_t tot = 20 + tcplen;
            rand_frame(f, 20, tot, 6, 0x4000);
            inet_tcp20_csum_fill(ip, tot);
            uint8_t h[20];
            memcpy(h, ip, 20);
            h[10] = h[11] = 0;
            bad20 += (uint16_t)(ip[10] << 8 | ip[11]) != (uint16_t)~ref_add(0, h, 20) ||
                     (uint16_t)(ip[36] << 8 | ip[37]) != ref_tcp_field(ip, 20, tot);
        }
    checkf(bad20 == 0, "inet_tcp20_csum_fill: both fields are the reference's (%d wrong)", bad20);

    /* A fragment: its header is summed, its TCP field is not touched. */
    uint8_t *f = buf, *ip = f + 14;
    rand_frame(f, 20, 120, 6, 0x2000); /* MF */
    uint8_t th16 = ip[20 + 16], th17 = ip[20 + 17];
    int r = inet_frame_csum_fill(f, 14 + 120);
    checkf(r == 1 && inet_ip_hdr_ok(ip, 20) && ip[36] == th16 && ip[37] == th17,
           "a fragment gets its header checksum, its TCP bytes stay (returned %d)", r);
    /* ICMP: the header only. */
    rand_frame(f, 20, 64, 1, 0);
    uint8_t before[64];
    memcpy(before, ip + 20, 64 - 20);
    r = inet_frame_csum_fill(f, 14 + 64);
    checkf(r == 1 && inet_ip_hdr_ok(ip, 20) && memcmp(before, ip + 20, 64 - 20) == 0,
           "ICMP gets its header checksum, its own bytes stay");
    /* Not IPv4, or a total length past the frame: left as it was. */
    rand_frame(f, 20, 64, 6, 0);
    f[12] = 0x08;
    f[13] = 0x06; /* ARP */
    uint8_t copy[14 + 64];
    memcpy(copy, f, sizeof(copy));
    r = inet_frame_csum_fill(f, sizeof(copy));
    checkf(r == 0 && memcmp(copy, f, sizeof(copy)) == 0, "an ARP frame is left as it was");
    rand_frame(f, 20, 64, 6, 0);
    memcpy(copy, f, sizeof(copy));
    r = inet_frame_csum_fill(f, 14 + 63);
    checkf(r == 0 && memcmp(copy, f, sizeof(copy)) == 0, "an IPv4 total length past the frame: left as it was");
}

int main(void)
{
    static uint8_t buf[320];
    srand(1071);
    for (size_t i = 0; i < sizeof(buf); i++)
        buf[i] = (uint8_t)rand();
    sweep("random bytes", buf);
    memset(buf, 0xff, sizeof(buf));
    sweep("all 0xff", buf);
    large();
    frames();

    /* inet_ip_hdr_ok against the reference: headers of 20-60 bytes at
     * every offset, with the right field, then with one bit flipped. */
    int bad_ok = 0, bad_flip = 0;
    srand(791);
    for (size_t ihl = 20; ihl <= 60; ihl += 4) {
        for (size_t off = 0; off < 8; off++) {
            uint8_t *h = buf + off;
            for (size_t i = 0; i < ihl; i++)
                h[i] = (uint8_t)rand();
            h[10] = h[11] = 0;
            uint16_t f = (uint16_t)~ref_add(0, h, ihl);
            h[10] = (uint8_t)(f >> 8);
            h[11] = (uint8_t)f;
            if (!inet_ip_hdr_ok(h, ihl))
                bad_ok++;
            size_t bit = (size_t)rand() % (ihl * 8);
            h[bit / 8] ^= (uint8_t)(1u << (bit % 8));
            if (inet_ip_hdr_ok(h, ihl))
                bad_flip++;
        }
    }
    checkf(bad_ok == 0, "inet_ip_hdr_ok accepts every intact header of 20-60 bytes (%d refused)", bad_ok);
    checkf(bad_flip == 0, "inet_ip_hdr_ok refuses a header with one bit flipped (%d accepted)", bad_flip);

    /* inet_ip_hdr20_ok (inline, 20 bytes) against the reference: intact
     * headers at 8 offsets, each with every one of its 160 bits flipped in
     * turn, and the all-zero and all-0xff headers. */
    int bad20_ok = 0, bad20_flip = 0;
    srand(792);
    for (int round = 0; round < 64; round++) {
        uint8_t *h = buf + (round & 7);
        for (size_t i = 0; i < 20; i++)
            h[i] = round == 0 ? 0xff : (uint8_t)rand();
        h[10] = h[11] = 0;
        uint16_t f = (uint16_t)~ref_add(0, h, 20);
        h[10] = (uint8_t)(f >> 8);
        h[11] = (uint8_t)f;
        if (inet_ip_hdr20_ok(h) != (ref_add(0, h, 20) == 0xffff))
            bad20_ok++;
        for (size_t bit = 0; bit < 160; bit++) {
            h[bit / 8] ^= (uint8_t)(1u << (bit % 8));
            if (inet_ip_hdr20_ok(h) != (ref_add(0, h, 20) == 0xffff))
                bad20_flip++;
            h[bit / 8] ^= (uint8_t)(1u << (bit % 8));
        }
    }
    memset(buf, 0, 20);
    checkf(!inet_ip_hdr20_ok(buf), "inet_ip_hdr20_ok refuses an all-zero header");
    checkf(bad20_ok == 0 && bad20_flip == 0,
           "inet_ip_hdr20_ok agrees with the reference on 64 headers and their one-bit flips (%d / %d differ)",
           bad20_ok, bad20_flip);

    /* RFC 1071, 3. Numerical Examples: 00 01 f2 03 f4 f5 f6 f7 sums to ddf2. */
    const uint8_t ex[8] = {0x00, 0x01, 0xf2, 0x03, 0xf4, 0xf5, 0xf6, 0xf7};
    checkf(inet_csum_add(0, ex, 8) == 0xddf2, "RFC 1071's example sums to ddf2 (got %04x)", inet_csum_add(0, ex, 8));
    checkf(inet_csum_native(ex, 8) == htons(0xddf2), "... and to htons(ddf2) in host order");
    return tap_done();
}
