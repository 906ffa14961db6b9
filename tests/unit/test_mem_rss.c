/*
 * test_mem_rss.c - the memory port split into RSS queues (tests/support/mem_rss.c),
 * the way a test of several stacks on one port uses it with the steering
 * and handover modules: every IPv4/TCP flow lands on the queue
 * nic_steer_queue_tcp4 predicts, ARP on queue 0; a source port chosen by
 * nic_steer_pick_port brings the reply to the chosen queue; frames that
 * reached the wrong queue are handed over (nic/handover.c) and their
 * buffers go back to the port; each queue sends its own batch.
 */
#include <arpa/inet.h>
#include <string.h>

#include "nic/handover.h"
#include "mem_rss.h"
#include "nic/nic.h"
#include "nic/steer.h"
#include "tap.h"

static uint32_t ip(const char *s)
{
    struct in_addr a;
    inet_pton(AF_INET, s, &a);
    return a.s_addr;
}

/* An Ethernet/IPv4/TCP frame (checksums not filled: no filter here). */
static uint16_t tcp_frame(uint8_t *f, const uint8_t dmac[6], uint32_t src, uint32_t dst, uint16_t sport,
                          uint16_t dport)
{
    memset(f, 0, 54);
    memcpy(f, dmac, 6);
    f[6] = 0x02;
    f[11] = 0x01;
    f[12] = 0x08;
    f[14] = 0x45;
    f[17] = 40;
    f[22] = 64;
    f[23] = 6;
    memcpy(f + 26, &src, 4);
    memcpy(f + 30, &dst, 4);
    memcpy(f + 34, &sport, 2);
    memcpy(f + 36, &dport, 2);
    f[46] = 0x50;
    f[47] = 0x02; /* SYN */
    return 54;
}

/* The queue a frame arrives on: poll every queue (-1: none got it). */
static int arrival(struct nic **q, unsigned nq, struct nic_pkt *pkt)
{
    for (unsigned i = 0; i < nq; i++)
        if (q[i]->ops->rx_burst(q[i], pkt, 1) == 1)
            return (int)i;
    return -1;
}

int main(void)
{
    struct nic *a, *b, *q[2];
    struct nic_steer st;
    check(nic_mem_pair(64, 64, 32, &a, &b) == 0, "a memory pair of 64 buffers each");
    uint8_t bmac[6];
    b->ops->mac(b, bmac);
    check(nic_mem_rss_split(b, 2, q, &st) == 0 && st.kind == NIC_STEER_TOEPLITZ && nic_steer_check(&st) == 0,
          "b split into 2 RSS queues, steering Toeplitz");
    uint32_t peer = ip("198.18.0.1"), me = ip("198.18.0.2");

    uint8_t f[128];
    int wrong = 0, on[2] = {0, 0};
    for (uint16_t p = 0; p < 200; p++) {
        uint16_t sport = htons((uint16_t)(40000 + p)), dport = htons(6379);
        nic_mem_inject(b, f, tcp_frame(f, bmac, peer, me, sport, dport));
        struct nic_pkt pk;
        int got = arrival(q, 2, &pk);
        if (got < 0 || got != nic_steer_queue_tcp4(&st, peer, me, sport, dport))
            wrong++;
        if (got >= 0) {
            on[got]++;
            q[got]->ops->pkt_free(q[got], pk.handle);
        }
    }
    checkf(wrong == 0 && on[0] > 50 && on[1] > 50, "200 flows: each on the queue steer predicts (%d, %d; %d wrong)",
           on[0], on[1], wrong);

    uint8_t arp[60] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02, 0, 0, 0, 0, 1, 0x08, 0x06};
    nic_mem_inject(b, arp, sizeof(arp));
    struct nic_pkt pk;
    int got = arrival(q, 2, &pk);
    check(got == 0, "ARP lands on queue 0");
    if (got >= 0)
        q[got]->ops->pkt_free(q[got], pk.handle);

    for (unsigned want = 0; want < 2; want++) {
        bool steered = false;
        int port = nic_steer_pick_port(&st, me, peer, htons(6379), want, 32768, 60999, 12345 + want, NULL, NULL,
                                       &steered);
        nic_mem_inject(b, f, tcp_frame(f, bmac, peer, me, htons(6379), htons((uint16_t)port)));
        got = arrival(q, 2, &pk);
        checkf(port > 0 && steered && got == (int)want, "a source port picked for queue %u (%d): the reply lands there",
               want, port);
        if (got >= 0)
            q[got]->ops->pkt_free(q[got], pk.handle);
    }

    /* Stack 1 owns every flow: frames of queue 0 are handed over. */
    char err[256];
    struct nic_handover *in[2] = {nic_handover_create(16, -1, err, sizeof(err)),
                                  nic_handover_create(16, -1, err, sizeof(err))};
    struct nic_handover_out *out0 = nic_handover_out_create(in, 2, 32, err, sizeof(err));
    unsigned handed = 0, own = 0, taken = 0;
    for (int round = 0; round < 2; round++) {
        for (uint16_t p = 0; p < 64; p++)
            nic_mem_inject(b, f, tcp_frame(f, bmac, peer, me, htons((uint16_t)(50000 + p)), htons(6379)));
        struct nic_pkt pkts[64];
        unsigned k = q[0]->ops->rx_burst(q[0], pkts, 64);
        for (unsigned i = 0; i < k; i++) {
            struct nic_handover_frame hf = {.pkt = pkts[i], .origin = q[0]};
            if (nic_handover_forward(out0, 1, &hf) == 0)
                handed++;
        }
        for (;;) {
            unsigned n1 = q[1]->ops->rx_burst(q[1], pkts, 64);
            for (unsigned i = 0; i < n1; i++)
                q[1]->ops->pkt_free(q[1], pkts[i].handle);
            own += n1;
            struct nic_handover_frame hf[16];
            unsigned t = nic_handover_take(in[1], hf, 16);
            for (unsigned i = 0; i < t; i++)
                hf[i].origin->ops->pkt_free(hf[i].origin, hf[i].pkt.handle);
            taken += t;
            if (n1 == 0 && t == 0 && nic_handover_retry(out0) == 0 && nic_handover_count(in[1]) == 0)
                break;
        }
    }
    checkf(handed + own == 128 && taken == handed,
           "128 frames in two rounds of 64 (all of the 64 buffers): %u handed from queue 0 to stack 1, "
           "%u taken, %u on queue 1: every buffer came back (the second round got buffers)",
           handed, taken, own);
    nic_handover_out_free(out0);
    nic_handover_free(in[0]);
    nic_handover_free(in[1]);

    /* each queue sends its own batch */
    uint8_t *w1 = q[1]->ops->tx_frame(q[1], 60);
    uint8_t *w0 = q[0]->ops->tx_frame(q[0], 60);
    memset(w1, 0x11, 60);
    memset(w0, 0x22, 60);
    q[0]->ops->tx_flush(q[0]);
    struct nic_pkt ap[4];
    unsigned n = a->ops->rx_burst(a, ap, 4);
    check(n == 1 && ap[0].data[0] == 0x22, "queue 0's flush sends queue 0's frame only");
    for (unsigned i = 0; i < n; i++)
        a->ops->pkt_free(a, ap[i].handle);
    q[1]->ops->tx_flush(q[1]);
    n = a->ops->rx_burst(a, ap, 4);
    check(n == 1 && ap[0].data[0] == 0x11, "queue 1's flush sends queue 1's");
    for (unsigned i = 0; i < n; i++)
        a->ops->pkt_free(a, ap[i].handle);
    struct nic_caps caps;
    q[0]->ops->caps(q[0], &caps);
    check(caps.tso_max == 0 && q[0]->ops->tx_frame_tso == NULL, "no TSO on a split port");

    q[0]->ops->close(q[0]);
    q[1]->ops->close(q[1]);
    a->ops->close(a);
    return tap_done();
}
