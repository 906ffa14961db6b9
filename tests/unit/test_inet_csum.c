/*
 * test_inet_csum.c - the Internet checksum routines (common/inet_csum.c)
 * against a byte-at-a-time reference: every length 0..300 at every start
 * offset 0..7, with and without a carried-in sum, on random bytes and on
 * all-0xff bytes (the most carries); and RFC 1071's worked example.
 * inet_csum_native is lwIP's LWIP_CHKSUM (lwipopts.h): the two stacks of the
 * other tests would agree with each other on a wrong sum, so this test is
 * what ties it to the definition.
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

    /* RFC 1071, 3. Numerical Examples: 00 01 f2 03 f4 f5 f6 f7 sums to ddf2. */
    const uint8_t ex[8] = {0x00, 0x01, 0xf2, 0x03, 0xf4, 0xf5, 0xf6, 0xf7};
    checkf(inet_csum_add(0, ex, 8) == 0xddf2, "RFC 1071's example sums to ddf2 (got %04x)", inet_csum_add(0, ex, 8));
    checkf(inet_csum_native(ex, 8) == htons(0xddf2), "... and to htons(ddf2) in host order");
    return tap_done();
}
