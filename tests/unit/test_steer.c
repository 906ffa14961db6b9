/*
 * test_steer.c - flow steering (nic/steer.c): the Toeplitz hash against
 * Microsoft's RSS verification values (the 40-byte key of its "Verifying
 * the RSS Hash Calculation" page, IPv4 and IPv4/TCP inputs), a second
 * opinion from DPDK's rte_softrss on random tuples and another key, the
 * queue a flow reaches through the reta, and the source-port chooser:
 * every port it returns brings the replies back to the queue asked for,
 * it skips ports in use, says when none is left, and falls back without
 * steering on a port whose hash is not ours to compute.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <rte_thash.h>

#include "nic/steer.h"
#include "tap.h"

static const uint8_t ms_key[40] = {
    0x6d, 0x5a, 0x56, 0xda, 0x25, 0x5b, 0x0e, 0xc2, 0x41, 0x67, 0x25, 0x3d, 0x43, 0xa3,
    0x8f, 0xb0, 0xd0, 0xca, 0x2b, 0xcb, 0xae, 0x7b, 0x30, 0xb4, 0x77, 0xcb, 0x2d, 0xa3,
    0x80, 0x30, 0xf2, 0x0c, 0x6a, 0x42, 0xb7, 0x3b, 0xbe, 0xac, 0x01, 0xfa,
};

struct vec {
    const char *dst;
    uint16_t dport;
    const char *src;
    uint16_t sport;
    uint32_t ipv4, tcp4;
};

/* Microsoft's table: destination, source, IPv4 hash, IPv4 with TCP hash. */
static const struct vec ms_vecs[] = {
    {"161.142.100.80", 1766, "66.9.149.187", 2794, 0x323e8fc2, 0x51ccc178},
    {"65.69.140.83", 4739, "199.92.111.2", 14230, 0xd718262a, 0xc626b0ea},
    {"12.22.207.184", 38024, "24.19.198.95", 12898, 0xd2d0a5de, 0x5c2b394a},
    {"209.142.163.6", 2217, "38.27.205.30", 48228, 0x82989176, 0xafc7327f},
    {"202.188.127.2", 1303, "153.39.163.191", 44251, 0x5d1809c5, 0x10e828a2},
};

static uint32_t ip(const char *s)
{
    struct in_addr a;
    inet_pton(AF_INET, s, &a);
    return a.s_addr;
}

static void toeplitz_vectors(void)
{
    struct nic_steer s = {.kind = NIC_STEER_TOEPLITZ, .nb_queues = 1, .key_len = sizeof(ms_key), .reta_size = 1};
    memcpy(s.key, ms_key, sizeof(ms_key));
    for (size_t i = 0; i < sizeof(ms_vecs) / sizeof(ms_vecs[0]); i++) {
        const struct vec *v = &ms_vecs[i];
        uint32_t src = ip(v->src), dst = ip(v->dst);
        uint8_t in[8];
        memcpy(in, &src, 4);
        memcpy(in + 4, &dst, 4);
        uint32_t h4 = nic_toeplitz(ms_key, sizeof(ms_key), in, sizeof(in));
        checkf(h4 == v->ipv4, "IPv4 %s -> %s: 0x%08x (Microsoft: 0x%08x)", v->src, v->dst, h4, v->ipv4);
        uint32_t ht = nic_steer_hash_tcp4(&s, src, dst, htons(v->sport), htons(v->dport));
        checkf(ht == v->tcp4, "IPv4/TCP %s:%u -> %s:%u: 0x%08x (Microsoft: 0x%08x)", v->src, v->sport, v->dst,
               v->dport, ht, v->tcp4);
    }
}

/* DPDK's software RSS agrees on random tuples, under Microsoft's key and
 * under a random 52-byte key. */
static void toeplitz_softrss(void)
{
    uint8_t key[52];
    srand(12);
    for (size_t i = 0; i < sizeof(key); i++)
        key[i] = (uint8_t)rand();
    const uint8_t *keys[2] = {ms_key, key};
    size_t lens[2] = {sizeof(ms_key), sizeof(key)};
    for (int k = 0; k < 2; k++) {
        struct nic_steer s = {.kind = NIC_STEER_TOEPLITZ, .nb_queues = 1, .key_len = (uint16_t)lens[k], .reta_size = 1};
        memcpy(s.key, keys[k], lens[k]);
        int bad = 0;
        for (int t = 0; t < 10000; t++) {
            uint32_t src = (uint32_t)rand() ^ (uint32_t)rand() << 16, dst = (uint32_t)rand() ^ (uint32_t)rand() << 16;
            uint16_t sp = (uint16_t)rand(), dp = (uint16_t)rand();
            uint32_t tuple[3] = {ntohl(src), ntohl(dst), (uint32_t)ntohs(sp) << 16 | ntohs(dp)};
            uint32_t want = rte_softrss(tuple, 3, keys[k]);
            if (nic_steer_hash_tcp4(&s, src, dst, sp, dp) != want)
                bad++;
        }
        checkf(bad == 0, "key %d: 10000 random IPv4/TCP tuples hash as DPDK's rte_softrss does (%d differ)", k, bad);
    }
}

static void fill_reta(struct nic_steer *s, uint16_t nq, uint16_t size)
{
    s->kind = NIC_STEER_TOEPLITZ;
    s->nb_queues = nq;
    s->key_len = sizeof(ms_key);
    memcpy(s->key, ms_key, sizeof(ms_key));
    s->reta_size = size;
    for (uint16_t i = 0; i < size; i++)
        s->reta[i] = (uint16_t)(i % nq);
}

static void queue_of_flow(void)
{
    static struct nic_steer s;
    fill_reta(&s, 4, 128);
    check(nic_steer_check(&s) == 0, "a 4-queue, 128-entry reta checks");
    /* vector 1's hash 0x51ccc178: entry 0x78 = 120, queue 120 % 4 = 0 */
    const struct vec *v = &ms_vecs[0];
    int q = nic_steer_queue_tcp4(&s, ip(v->src), ip(v->dst), htons(v->sport), htons(v->dport));
    checkf(q == (int)((0x51ccc178u % 128) % 4), "the queue is reta[hash %% reta_size] (%d)", q);
    s.reta[0x51ccc178u % 128] = 3;
    q = nic_steer_queue_tcp4(&s, ip(v->src), ip(v->dst), htons(v->sport), htons(v->dport));
    check(q == 3, "changing that reta entry moves the flow");
    /* flows spread: 4000 source ports reach every queue, none with less than a sixth */
    fill_reta(&s, 4, 128);
    unsigned per[4] = {0};
    for (uint16_t p = 30000; p < 34000; p++)
        per[nic_steer_queue_tcp4(&s, ip("10.0.0.2"), ip("10.0.0.1"), htons(p), htons(6379))]++;
    checkf(per[0] > 666 && per[1] > 666 && per[2] > 666 && per[3] > 666,
           "4000 flows spread over 4 queues (%u %u %u %u)", per[0], per[1], per[2], per[3]);

    struct nic_steer one = {.kind = NIC_STEER_ONE, .nb_queues = 1};
    check(nic_steer_check(&one) == 0 && nic_steer_queue_tcp4(&one, 1, 2, 3, 4) == 0, "one queue: every flow on 0");
    struct nic_steer opq = {.kind = NIC_STEER_OPAQUE, .nb_queues = 2};
    check(nic_steer_check(&opq) == 0 && nic_steer_queue_tcp4(&opq, 1, 2, 3, 4) == -1,
          "opaque hash (af_packet fanout): the queue is unknown (-1)");
    s.reta[5] = 4;
    check(nic_steer_check(&s) == -EINVAL, "a reta entry past the queues is refused");
    fill_reta(&s, 4, 128);
    s.key_len = 12;
    check(nic_steer_check(&s) == -EINVAL, "a key shorter than the input plus 4 bytes is refused");
    struct nic_steer bad = {.kind = NIC_STEER_ONE, .nb_queues = 2};
    check(nic_steer_check(&bad) == -EINVAL, "kind ONE with 2 queues is refused");
}

struct used {
    uint16_t lo, hi;   /* ports [lo, hi] in use */
    unsigned calls;
};

static bool in_use(void *ctx, uint16_t port)
{
    struct used *u = ctx;
    u->calls++;
    return port >= u->lo && port <= u->hi;
}

static void pick_port(void)
{
    static struct nic_steer s;
    fill_reta(&s, 4, 128);
    uint32_t local = ip("198.18.0.2"), remote = ip("198.18.0.1");
    uint16_t rport = htons(6379);
    int wrong = 0, fails = 0;
    for (unsigned q = 0; q < 4; q++)
        for (uint32_t start = 0; start < 200; start++) {
            bool steered = false;
            int p = nic_steer_pick_port(&s, local, remote, rport, q, 32768, 60999, start * 7919, NULL, NULL, &steered);
            if (p < 0 || !steered) {
                fails++;
                continue;
            }
            if (nic_steer_queue_tcp4(&s, remote, local, rport, htons((uint16_t)p)) != (int)q)
                wrong++;
        }
    checkf(fails == 0 && wrong == 0, "800 picks: each port's replies reach the queue asked for (%d failed, %d wrong)",
           fails, wrong);

    struct used u = {.lo = 40000, .hi = 40999};
    bool steered;
    int p = nic_steer_pick_port(&s, local, remote, rport, 2, 40000, 41999, 0, in_use, &u, &steered);
    checkf(p > 40999 && p <= 41999 && steered, "ports in use are skipped (%d)", p);
    u = (struct used){.lo = 40000, .hi = 41999};
    p = nic_steer_pick_port(&s, local, remote, rport, 2, 40000, 41999, 0, in_use, &u, &steered);
    checkf(p == -EADDRNOTAVAIL, "no free steered port: -EADDRNOTAVAIL (%d)", p);
    /* a range with no port that reaches queue 3 */
    int none = -1;
    for (uint16_t a = 20000; a < 20100 && none < 0; a++)
        if (nic_steer_queue_tcp4(&s, remote, local, rport, htons(a)) != 3)
            none = a;
    p = nic_steer_pick_port(&s, local, remote, rport, 3, (uint16_t)none, (uint16_t)none, 0, NULL, NULL, &steered);
    checkf(p == -EADDRNOTAVAIL, "a range whose only port reaches another queue: -EADDRNOTAVAIL (%d)", p);
    check(nic_steer_pick_port(&s, local, remote, rport, 4, 1, 2, 0, NULL, NULL, &steered) == -EINVAL,
          "a queue past the port's: -EINVAL");
    check(nic_steer_pick_port(&s, local, remote, rport, 0, 2, 1, 0, NULL, NULL, &steered) == -EINVAL,
          "lo > hi: -EINVAL");

    struct nic_steer opq = {.kind = NIC_STEER_OPAQUE, .nb_queues = 2};
    u = (struct used){.lo = 50000, .hi = 50004};
    p = nic_steer_pick_port(&opq, local, remote, rport, 1, 50000, 50010, 2, in_use, &u, &steered);
    checkf(p == 50005 && !steered, "opaque hash: the first free port from start, not steered (%d)", p);
    struct nic_steer one = {.kind = NIC_STEER_ONE, .nb_queues = 1};
    p = nic_steer_pick_port(&one, local, remote, rport, 0, 50000, 50010, 3, NULL, NULL, &steered);
    checkf(p == 50003 && steered, "one queue: the port at start, steered (%d)", p);
}

static double now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

/* What a hash and a pick cost (printed, not asserted: timing is noisy here). */
static void cost(void)
{
    static struct nic_steer s;
    fill_reta(&s, 4, 128);
    volatile uint32_t sink = 0;
    double t0 = now_ns();
    for (uint32_t i = 0; i < 1000000; i++)
        sink ^= nic_steer_hash_tcp4(&s, i, 0x0a000001, (uint16_t)i, 6379);
    double t1 = now_ns();
    bool steered;
    for (uint32_t i = 0; i < 10000; i++)
        sink ^= (uint32_t)nic_steer_pick_port(&s, 0x0200a8c0, 0x0100a8c0, htons(6379), i % 4, 32768, 60999,
                                               i * 7919, NULL, NULL, &steered);
    double t2 = now_ns();
    printf("# cost: %.1f ns per IPv4/TCP Toeplitz hash, %.1f ns per steered pick over 4 queues\n",
           (t1 - t0) / 1e6, (t2 - t1) / 1e4);
}

int main(void)
{
    toeplitz_vectors();
    toeplitz_softrss();
    queue_of_flow();
    pick_port();
    cost();
    return tap_done();
}
