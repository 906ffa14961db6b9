/*
 * test_cksum_offload.c - checksums follow the port: where it offers
 * checksum offload the stack leaves IPv4 and TCP checksums to it (lwIP's
 * CHECKSUM_GEN/CHECK per netif), and where it does not, the stack computes
 * them as a frame leaves (the netif's linkoutput) and checks them as one
 * arrives (the frame filter). Two stacks back to back over memory ports that play a NIC
 * with checksum offload (nic_mem_set_caps). No DPDK, no root.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

#include "conf/conf.h"
#include "filter/frame_filter.h"
#include "nic/nic.h"
#include "mem_nic.h"
#include "sock/lsock.h"
#include "stack/stack.h"
#include "pair_conf.h"
#include "pair_pump.h"

#include "tap.h"

#define PORT 7001

static struct stack *A, *B;

static void pump(void)
{
    pair_pump(A, B, 1);
}

/* Open the two stacks on ports offering caps_a / caps_b, connect A to B
 * and move 256 KiB from A to B. Returns 1 if every byte arrived intact. */
static int run(const struct nic_caps *caps_a, const struct nic_caps *caps_b, struct nic **na, struct nic **nb)
{
    struct lstack_conf ca, cb;
    char err[512];
    if (pair_conf(&ca, "198.18.0.2", "198.18.0.1", NULL) != 0 || pair_conf(&cb, "198.18.0.1", "198.18.0.2", NULL) != 0)
        return 0;
    if (nic_mem_pair(2048, (uint16_t)stack_nic_priv_size(), 32, na, nb) != 0)
        return 0;
    nic_mem_set_caps(*na, caps_a);
    nic_mem_set_caps(*nb, caps_b);
    if (stack_open(&A, &ca, 0, *na, err, sizeof(err)) != 0 || stack_open(&B, &cb, 1, *nb, err, sizeof(err)) != 0) {
        printf("# %s\n", err);
        return 0;
    }
    struct lsock *l = NULL, *c = NULL, *s = NULL;
    int ok = pair_connect(A, B, htonl(0xc6120001), PORT, &l, &c, &s) == 0;
    enum { N = 256 * 1024 };
    static unsigned char out[N], in[N];
    for (size_t i = 0; i < N; i++)
        out[i] = (unsigned char)(i * 31 + i / 977);
    size_t sent = 0, got = 0;
    for (int spins = 0; ok && got < N && spins < 200000; spins++) {
        if (sent < N) {
            struct iovec v = {out + sent, N - sent};
            ssize_t k = lsock_send(c, &v, 1, 0);
            if (k > 0)
                sent += (size_t)k;
        }
        pump();
        struct iovec v = {in + got, N - got};
        ssize_t k = lsock_recv(s, &v, 1, 0);
        if (k > 0)
            got += (size_t)k;
    }
    ok = ok && got == N && memcmp(in, out, N) == 0;
    lsock_close(c);
    lsock_close(s);
    lsock_close(l);
    for (int i = 0; i < 20; i++)
        pump();
    lstack_conf_free(&ca);
    lstack_conf_free(&cb);
    return ok;
}

/* ---- a segment with a wrong TCP checksum, no offload on either port ---- */

static struct {
    uint8_t f[2048];
    uint16_t len;
    int taken;
} bad;

/* On A's port: the first TCP frame with data is taken off the wire and kept. */
static bool take_first_data(void *ctx, const uint8_t *f, uint16_t len)
{
    (void)ctx;
    if (bad.taken || len <= 14 + 20 + 20 || len > sizeof(bad.f) || f[12] != 0x08 || f[13] != 0x00 || f[14 + 9] != 6)
        return true;
    size_t ihl = (size_t)(f[14] & 0x0f) * 4, thl = (size_t)(f[14 + ihl + 12] >> 4) * 4;
    size_t tot = (size_t)f[16] << 8 | f[17];
    if (tot <= ihl + thl)
        return true; /* no data */
    memcpy(bad.f, f, len);
    bad.len = len;
    bad.taken = 1;
    return false;
}

/* A sends 100 bytes; the segment reaches B with one payload byte changed:
 * B's frame filter drops it (bad_csum), A sends it again after its RTO and
 * B reads the data intact. */
static void bad_tcp_csum(void)
{
    struct lstack_conf ca, cb;
    char err[512];
    struct nic *na, *nb;
    const struct nic_caps plain = {.mtu = 1500};
    if (pair_conf(&ca, "198.18.0.2", "198.18.0.1", NULL) != 0 || pair_conf(&cb, "198.18.0.1", "198.18.0.2", NULL) != 0 ||
        nic_mem_pair(2048, (uint16_t)stack_nic_priv_size(), 32, &na, &nb) != 0) {
        check(0, "bad checksum: stacks configured");
        return;
    }
    nic_mem_set_caps(na, &plain);
    nic_mem_set_caps(nb, &plain);
    if (stack_open(&A, &ca, 0, na, err, sizeof(err)) != 0 || stack_open(&B, &cb, 1, nb, err, sizeof(err)) != 0) {
        checkf(0, "bad checksum: stacks open (%s)", err);
        return;
    }
    struct lsock *l = NULL, *c = NULL, *s = NULL;
    int ok = pair_connect(A, B, htonl(0xc6120001), PORT + 1, &l, &c, &s) == 0;
    struct stack_stats s0, s1;
    stack_get_stats(B, &s0);
    nic_mem_set_tap(na, take_first_data, NULL);
    static unsigned char out[100], in[100];
    for (size_t i = 0; i < sizeof(out); i++)
        out[i] = (unsigned char)(i * 5 + 1);
    struct iovec v = {out, sizeof(out)};
    ok = ok && lsock_send(c, &v, 1, 0) == (ssize_t)sizeof(out);
    pump();
    int injected = 0;
    if (bad.taken) {
        bad.f[bad.len - 1] ^= 0x01; /* the last payload byte */
        injected = nic_mem_inject(nb, bad.f, bad.len) == 0;
    }
    size_t got = 0;
    for (int i = 0; ok && got < sizeof(in) && i < 5000; i++) {
        pump();
        struct iovec r = {in + got, sizeof(in) - got};
        ssize_t k = lsock_recv(s, &r, 1, 0);
        if (k > 0)
            got += (size_t)k;
        usleep(1000);
    }
    stack_get_stats(B, &s1);
    nic_mem_set_tap(na, NULL, NULL);
    unsigned long long dropped = (unsigned long long)(s1.drop[FRAME_BAD_CSUM] - s0.drop[FRAME_BAD_CSUM]);
    checkf(ok && injected && dropped == 1 && got == sizeof(in) && memcmp(in, out, sizeof(in)) == 0,
           "no offload: a segment with a wrong TCP checksum is dropped before lwIP (bad_csum +%llu), its resend "
           "read intact (%zu bytes%s)",
           dropped, got, got == sizeof(in) && memcmp(in, out, sizeof(in)) != 0 ? ", corrupted" : "");
    lsock_close(c);
    lsock_close(s);
    lsock_close(l);
    for (int i = 0; i < 20; i++)
        pump();
    lstack_conf_free(&ca);
    lstack_conf_free(&cb);
}

static void close_pair(void)
{
    stack_close(A);
    stack_close(B);
    A = B = NULL;
}

int main(void)
{
    struct nic *na, *nb;
    struct nic_mem_cksum ka, kb;
    const struct nic_caps plain = {.mtu = 1500};
    const struct nic_caps offload = {.mtu = 1500, .rx_cksum = true, .tx_cksum = true};
    const struct nic_caps rx_only = {.mtu = 1500, .rx_cksum = true};

    /* Both ports offload: the stacks leave every checksum to them. */
    check(run(&offload, &offload, &na, &nb), "with checksum offload on both ports, 256 KiB arrive intact");
    nic_mem_cksum_counts(na, &ka);
    nic_mem_cksum_counts(nb, &kb);
    checkf(ka.filled > 100 && kb.filled > 10, "the ports filled in the checksums (A %llu frames, B %llu)",
           (unsigned long long)ka.filled, (unsigned long long)kb.filled);
    checkf(ka.prefilled == 0 && kb.prefilled == 0,
           "lwIP left IPv4 and TCP checksums to the port (%llu and %llu frames came computed)",
           (unsigned long long)ka.prefilled, (unsigned long long)kb.prefilled);
    checkf(ka.bad == 0 && kb.bad == 0, "no frame arrived with a bad checksum (%llu, %llu)",
           (unsigned long long)ka.bad, (unsigned long long)kb.bad);
    close_pair();

    /* A's port has no offload, B's checks received checksums: the stack
     * on A computes them, and computes them right. */
    check(run(&plain, &rx_only, &na, &nb), "without tx offload on A, 256 KiB arrive intact at B (rx offload)");
    nic_mem_cksum_counts(nb, &kb);
    nic_mem_cksum_counts(na, &ka);
    checkf(kb.bad == 0 && ka.filled == 0, "the stack's own checksums are right (B's port found %llu bad)",
           (unsigned long long)kb.bad);
    close_pair();

    /* Offload on A only: B's lwIP checks what A's port filled in. */
    check(run(&offload, &plain, &na, &nb), "with offload on A only, B's lwIP accepts what A's port filled in");
    close_pair();

    bad_tcp_csum();
    close_pair();
    return tap_done();
}
