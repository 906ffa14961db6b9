/*
 * test_tso.c - TCP segmentation offload: where the port offers TSO, lwIP
 * hands it TCP segments of many MSS and the port cuts them into MSS frames
 * (the memory port plays such a NIC: nic_mem_set_caps with tso_max); where
 * it does not, nothing changes. Two stacks back to back; the memory port's
 * tap counts (and may drop) the frames on the wire. No DPDK, no root.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <time.h>

#include "conf/conf.h"
#include "nic/nic.h"
#include "mem_nic.h"
#include "sock/lsock.h"
#include "stack/stack.h"
#include "pair_conf.h"
#include "pair_pump.h"

#include "tap.h"

#define PORT 7002
#define MSS 1460

/* What one direction of the wire carried (a port's tap). */
struct wire {
    uint64_t frames;       /* every frame */
    uint64_t data_frames;  /* TCP frames with payload */
    uint64_t payload;      /* TCP payload bytes */
    uint64_t over_mss;     /* TCP frames with more than MSS bytes of payload */
    uint64_t over_mtu;     /* frames longer than 1514 bytes */
    uint64_t drop_at;      /* take the data frame of this number off the wire (0: none) */
    uint64_t dropped;
    uint32_t drop_seq;     /* the dropped frame's TCP sequence number */
    uint64_t resent;       /* data frames seen again starting at drop_seq */
    uint32_t max_payload;  /* the largest TCP payload seen */
    uint64_t id_breaks;    /* IPv4 frames whose id is not the previous one's plus 1 */
    uint16_t last_id;
    int id_seen;
};

static struct stack *A, *B;
static struct nic *NA, *NB;
static struct wire WA, WB; /* what A sent, what B sent */
static uint64_t base_a, base_b; /* frames each stack sent before the taps were on (ARP) */

static bool tap(void *ctx, const uint8_t *f, uint16_t len)
{
    struct wire *w = ctx;
    w->frames++;
    if (len > 1514)
        w->over_mtu++;
    if (len < 34 || f[12] != 0x08 || f[13] != 0x00)
        return true;
    const uint8_t *ip = f + 14;
    uint16_t id = (uint16_t)(ip[4] << 8 | ip[5]);
    if (w->id_seen && id != (uint16_t)(w->last_id + 1))
        w->id_breaks++;
    w->id_seen = 1;
    w->last_id = id;
    if (len < 54 || f[23] != 6)
        return true;
    size_t ihl = (size_t)(ip[0] & 0x0f) * 4, tot = (size_t)ip[2] << 8 | ip[3];
    const uint8_t *tcp = ip + ihl;
    size_t doff = (size_t)(tcp[12] >> 4) * 4;
    if (tot < ihl + doff)
        return true;
    size_t pl = tot - ihl - doff;
    if (pl == 0)
        return true;
    uint32_t seq = (uint32_t)tcp[4] << 24 | (uint32_t)tcp[5] << 16 | (uint32_t)tcp[6] << 8 | tcp[7];
    w->data_frames++;
    w->payload += pl;
    if (pl > w->max_payload)
        w->max_payload = (uint32_t)pl;
    if (pl > MSS)
        w->over_mss++;
    if (w->dropped && seq == w->drop_seq)
        w->resent++;
    if (w->drop_at != 0 && w->data_frames == w->drop_at && !w->dropped) {
        w->dropped = 1;
        w->drop_seq = seq;
        return false;
    }
    return true;
}

static void pump(void)
{
    pair_pump(A, B, 1);
}

/* Open the pair on ports offering caps (both), taps on, and connect.
 * Returns 1 with *c (A's) and *s (B's) connected. */
static int open_pair2(const struct nic_caps *caps_a, const struct nic_caps *caps_b, struct lsock **l,
                     struct lsock **c, struct lsock **s, struct lstack_conf *ca, struct lstack_conf *cb)
{
    char err[512];
    if (pair_conf(ca, "198.18.0.2", "198.18.0.1", NULL) != 0 || pair_conf(cb, "198.18.0.1", "198.18.0.2", NULL) != 0)
        return 0;
    if (nic_mem_pair(16384, (uint16_t)stack_nic_priv_size(), 32, &NA, &NB) != 0)
        return 0;
    nic_mem_set_caps(NA, caps_a);
    nic_mem_set_caps(NB, caps_b);
    if (stack_open(&A, ca, 0, NA, err, sizeof(err)) != 0 || stack_open(&B, cb, 1, NB, err, sizeof(err)) != 0) {
        printf("# %s\n", err);
        return 0;
    }
    memset(&WA, 0, sizeof(WA));
    memset(&WB, 0, sizeof(WB));
    struct stack_stats st;
    stack_get_stats(A, &st);
    base_a = st.nic.tx_packets;
    stack_get_stats(B, &st);
    base_b = st.nic.tx_packets;
    nic_mem_set_tap(NA, tap, &WA);
    nic_mem_set_tap(NB, tap, &WB);
    return pair_connect(A, B, htonl(0xc6120001), PORT, l, c, s) == 0;
}

static int open_pair(const struct nic_caps *caps, struct lsock **l, struct lsock **c, struct lsock **s,
                     struct lstack_conf *ca, struct lstack_conf *cb)
{
    return open_pair2(caps, caps, l, c, s, ca, cb);
}

static void close_pair(struct lsock *l, struct lsock *c, struct lsock *s, struct lstack_conf *ca,
                       struct lstack_conf *cb)
{
    lsock_close(c);
    lsock_close(s);
    lsock_close(l);
    for (int i = 0; i < 20; i++)
        pump();
    stack_close(A);
    stack_close(B);
    A = B = NULL;
    lstack_conf_free(ca);
    lstack_conf_free(cb);
}

static unsigned char pattern(size_t i, unsigned salt)
{
    return (unsigned char)(i * 31 + i / 977 + salt);
}

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* Move len bytes of a pattern from w to r, in writes of up to 64 KiB,
 * pumping both stacks (for at most 30 s: a retransmission timer may have
 * to fire); 1 if every byte arrived, in order. */
static int transfer_paced(struct lsock *w, struct lsock *r, size_t len, unsigned salt, unsigned every, size_t chunk)
{
    static unsigned char out[65536], in[65536];
    size_t sent = 0, got = 0;
    int ok = 1;
    double end = now_s() + 30;
    for (long spins = 0; got < len && ((spins & 1023) != 0 || now_s() < end); spins++) {
        if (sent < len) {
            size_t n = len - sent < sizeof(out) ? len - sent : sizeof(out);
            for (size_t i = 0; i < n; i++)
                out[i] = pattern(sent + i, salt);
            struct iovec v = {out, n};
            ssize_t k = lsock_send(w, &v, 1, 0);
            if (k > 0)
                sent += (size_t)k;
        }
        pump();
        if (spins % every != 0)
            continue;
        for (;;) {
            struct iovec v = {in, chunk};
            ssize_t k = lsock_recv(r, &v, 1, 0);
            if (k <= 0)
                break;
            for (ssize_t i = 0; i < k; i++)
                ok &= in[i] == pattern(got + (size_t)i, salt);
            got += (size_t)k;
        }
    }
    return ok && got == len;
}

/* Move len bytes of a pattern from w to r, the reader taking all there is
 * every round; 1 if every byte arrived, in order. */
static int transfer(struct lsock *w, struct lsock *r, size_t len, unsigned salt)
{
    return transfer_paced(w, r, len, salt, 1, 65536);
}

int main(void)
{
    const struct nic_caps tso = {.mtu = 1500, .rx_cksum = true, .tx_cksum = true, .tso_max = 65280};
    const struct nic_caps plain = {.mtu = 1500, .rx_cksum = true, .tx_cksum = true};
    struct lstack_conf ca, cb;
    struct lsock *l, *c, *s;
    struct stack_stats sa, sb;
    struct nic_mem_tso ta, tb;
    struct nic_mem_cksum ka, kb;
    const size_t mb8 = 8u << 20;

    /* 1. TSO on both ports: 8 MiB each way, byte-exact, in far fewer
     * frames from each stack than MSS frames on the wire. */
    check(open_pair(&tso, &l, &c, &s, &ca, &cb), "two stacks on ports offering TSO connect");
    check(transfer(c, s, mb8, 1), "with TSO, 8 MiB from A to B arrive byte-exact");
    check(transfer(s, c, mb8, 2), "with TSO, 8 MiB from B to A arrive byte-exact");
    stack_get_stats(A, &sa);
    stack_get_stats(B, &sb);
    nic_mem_tso_counts(NA, &ta);
    nic_mem_tso_counts(NB, &tb);
    checkf(sa.tx_tso > 0 && sa.tx_tso == ta.frames && sb.tx_tso == tb.frames && tb.frames > 0,
           "each stack handed its port TSO frames (A %llu, B %llu) and the port cut each",
           (unsigned long long)sa.tx_tso, (unsigned long long)sb.tx_tso);
    checkf(WA.data_frames >= mb8 / MSS && WB.data_frames >= mb8 / MSS,
           "the wire carried MSS frames: %llu data frames from A, %llu from B (8 MiB is %zu MSS)",
           (unsigned long long)WA.data_frames, (unsigned long long)WB.data_frames, mb8 / MSS);
    /* Frames without data (ACKs) cross the wire as the stack sent them. */
    uint64_t da = sa.nic.tx_packets - base_a - (WA.frames - WA.data_frames);
    uint64_t db = sb.nic.tx_packets - base_b - (WB.frames - WB.data_frames);
    checkf(da * 8 < WA.data_frames && db * 8 < WB.data_frames,
           "far fewer data frames left each stack than crossed the wire (A: %llu for %llu, B: %llu for %llu)",
           (unsigned long long)da, (unsigned long long)WA.data_frames, (unsigned long long)db,
           (unsigned long long)WB.data_frames);
    checkf(WA.over_mss == 0 && WB.over_mss == 0 && WA.over_mtu == 0 && WB.over_mtu == 0 && ta.bad == 0 &&
               tb.bad == 0,
           "no frame on the wire exceeds the MSS or the MTU (%llu, %llu), none failed to cut",
           (unsigned long long)(WA.over_mss + WB.over_mss), (unsigned long long)(WA.over_mtu + WB.over_mtu));
    nic_mem_cksum_counts(NA, &ka);
    nic_mem_cksum_counts(NB, &kb);
    checkf(ka.bad == 0 && kb.bad == 0 && ka.prefilled == 0 && kb.prefilled == 0,
           "every cut frame's checksums are right (bad %llu, %llu) and lwIP left them to the port",
           (unsigned long long)ka.bad, (unsigned long long)kb.bad);
    checkf(WA.id_breaks == 0 && WB.id_breaks == 0,
           "every frame on the wire has its own IPv4 id, one past the previous (%llu and %llu out of step)",
           (unsigned long long)WA.id_breaks, (unsigned long long)WB.id_breaks);
    checkf(WA.payload - mb8 < 65536 && WB.payload - mb8 < 65536,
           "no data sent twice without a loss (%llu and %llu extra bytes)",
           (unsigned long long)(WA.payload - mb8), (unsigned long long)(WB.payload - mb8));
    close_pair(l, c, s, &ca, &cb);

    /* 2. A cut piece lost in the middle of a TSO frame: the receiver's
     * duplicate ACKs bring a fast retransmit of that MSS, not of the whole
     * 44-MSS segment. */
    check(open_pair(&tso, &l, &c, &s, &ca, &cb), "a new pair on TSO ports connects");
    check(transfer(c, s, 1u << 20, 3), "warm-up: 1 MiB");
    uint64_t before = WA.payload;
    WA.drop_at = WA.data_frames + 300; /* well inside the next MiB */
    check(transfer(c, s, 4u << 20, 4), "with a cut piece lost, 4 MiB still arrive byte-exact");
    uint64_t extra = WA.payload - before - (4u << 20);
    checkf(WA.dropped == 1 && WA.resent >= 1, "the lost piece was taken off the wire and sent again (%llu times)",
           (unsigned long long)WA.resent);
    checkf(extra < 8 * MSS, "only the lost MSS was resent, not its whole segment (%llu bytes resent)",
           (unsigned long long)extra);
    close_pair(l, c, s, &ca, &cb);

    /* 3. The last piece of a transfer lost: no duplicate ACKs follow, the
     * retransmission timer resends it (cut to the congestion window). */
    check(open_pair(&tso, &l, &c, &s, &ca, &cb), "a new pair on TSO ports connects");
    check(transfer(c, s, 1u << 20, 5), "warm-up: 1 MiB");
    WA.drop_at = WA.data_frames + (256u << 10) / MSS + 1; /* the last frame of the next 256 KiB */
    check(transfer(c, s, 256u << 10, 6), "with the last piece lost, 256 KiB arrive byte-exact (RTO)");
    checkf(WA.dropped == 1 && WA.resent >= 1, "the last piece was lost and sent again (%llu times)",
           (unsigned long long)WA.resent);
    close_pair(l, c, s, &ca, &cb);

    /* 3b. A slow reader: B reads 1,000 bytes every 20 rounds, so A's window
     * opens a little at a time (and closes): segments are cut to it. */
    check(open_pair(&tso, &l, &c, &s, &ca, &cb), "a new pair on TSO ports connects");
    check(transfer_paced(c, s, 1u << 20, 10, 20, 1000), "to a slow reader, 1 MiB arrives byte-exact");
    checkf(WA.over_mss == 0, "no frame beyond the MSS (%llu)", (unsigned long long)WA.over_mss);
    close_pair(l, c, s, &ca, &cb);

    /* 3c. A peer with a smaller MSS (its port's MTU 576: MSS 536): the TSO
     * frames are cut by that MSS. */
    const struct nic_caps small = {.mtu = 576, .rx_cksum = true, .tx_cksum = true};
    check(open_pair2(&tso, &small, &l, &c, &s, &ca, &cb), "a TSO stack connects to a peer with MSS 536");
    check(transfer(c, s, 2u << 20, 11), "2 MiB arrive byte-exact at the peer with MSS 536");
    stack_get_stats(A, &sa);
    checkf(sa.tx_tso > 0 && WA.max_payload == 536, "A sent TSO frames (%llu), cut to at most 536 bytes (largest %u)",
           (unsigned long long)sa.tx_tso, WA.max_payload);
    close_pair(l, c, s, &ca, &cb);

    /* 3d. A port that cuts by at most 1,000 bytes (as DPDK's tap PMD cuts
     * 14 bytes short of the MSS): the stack's TSO frames ask for that. */
    struct nic_caps cut1000 = tso;
    cut1000.tso_mss_max = 1000;
    check(open_pair(&cut1000, &l, &c, &s, &ca, &cb), "two stacks on ports that cut by at most 1,000 bytes");
    check(transfer(c, s, 2u << 20, 12), "2 MiB arrive byte-exact");
    stack_get_stats(A, &sa);
    nic_mem_tso_counts(NA, &ta);
    checkf(sa.tx_tso > 0 && sa.nic.drop_tx_toolong == 0 && ta.bad == 0,
           "TSO frames (%llu) went out, none refused by the port (%llu)", (unsigned long long)sa.tx_tso,
           (unsigned long long)sa.nic.drop_tx_toolong);
    close_pair(l, c, s, &ca, &cb);

    /* 4. No TSO offered: lwIP segments by MSS, one frame per segment. */
    check(open_pair(&plain, &l, &c, &s, &ca, &cb), "two stacks on ports without TSO connect");
    check(transfer(c, s, mb8, 7) && transfer(s, c, mb8, 8), "without TSO, 8 MiB each way arrive byte-exact");
    stack_get_stats(A, &sa);
    stack_get_stats(B, &sb);
    nic_mem_tso_counts(NA, &ta);
    nic_mem_tso_counts(NB, &tb);
    checkf(sa.tx_tso == 0 && sb.tx_tso == 0 && ta.frames == 0 && tb.frames == 0, "no TSO frame was made");
    checkf(sa.nic.tx_packets - base_a == WA.frames && sb.nic.tx_packets - base_b == WB.frames,
           "every frame a stack sent crossed the wire as it was (A %llu = %llu, B %llu = %llu)",
           (unsigned long long)(sa.nic.tx_packets - base_a), (unsigned long long)WA.frames,
           (unsigned long long)(sb.nic.tx_packets - base_b), (unsigned long long)WB.frames);
    checkf(WA.data_frames >= mb8 / MSS && WA.data_frames < mb8 / MSS + 64 && WA.over_mss == 0,
           "A's 8 MiB left in %llu frames of at most one MSS", (unsigned long long)WA.data_frames);
    close_pair(l, c, s, &ca, &cb);

    /* 5. TSO offered without checksum offload: the stack does not use it. */
    const struct nic_caps tso_nock = {.mtu = 1500, .tso_max = 65280};
    check(open_pair(&tso_nock, &l, &c, &s, &ca, &cb), "two stacks on ports with TSO but no checksum offload");
    check(transfer(c, s, 1u << 20, 9), "1 MiB arrives byte-exact");
    stack_get_stats(A, &sa);
    checkf(sa.tx_tso == 0 && WA.over_mss == 0, "no TSO frame without checksum offload (%llu)",
           (unsigned long long)sa.tx_tso);
    close_pair(l, c, s, &ca, &cb);
    return tap_done();
}
