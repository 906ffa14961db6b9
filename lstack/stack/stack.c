/*
 * stack.c - life cycle and poll round of one stack (see stack.h).
 *
 * Owns the order of bring-up (lwIP copy and its configuration, port, netif)
 * and tear-down, and the per-round work: rx burst -> frame filter -> lwIP ->
 * timers -> tx flush, timed by round_acct.h.
 * Design: docs/design.md#lwips-timers-run-in-the-poll-round
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "stack/stack_lwip.h"
#include "stack/stack_priv.h"

/* The port's checksum flags are the filter's (no translation per frame). */
_Static_assert((int)NIC_CKSUM_IP_GOOD == (int)FRAME_HW_IP_GOOD && (int)NIC_CKSUM_IP_BAD == (int)FRAME_HW_IP_BAD &&
                   (int)NIC_CKSUM_L4_GOOD == (int)FRAME_HW_L4_GOOD && (int)NIC_CKSUM_L4_BAD == (int)FRAME_HW_L4_BAD,
               "NIC_CKSUM_* and FRAME_HW_* differ");
/* Every filter verdict but FRAME_PASS has its line in stack_stats.def. */
_Static_assert(FRAME_VERDICT_COUNT == FRAME_MARTIAN + 1, "a new filter verdict needs its drop_ line in stack_stats.def");

/* lwIP's diagnostics and failed asserts (lwip_port.h). */
static void lwip_log(const char *msg)
{
    LSTACK_WARN("lwIP: %s", msg);
}

/* Bytes the lwIP arena of a stack may hand out: every connection's send
 * buffer plus its PCB, segments and headers, and room for the stack's own
 * ARP, ICMP and reassembly. Address space only: pages are used as needed. */
static size_t arena_limit(const struct lstack_conf *conf)
{
    return (size_t)conf->tcp_conn_count * (conf->tcp_snd_buf + conf->tcp_snd_buf / 4 + 16384) + (64u << 20);
}

/* Room for sockets (lstack_lwip_conf.sock_room): lwIP refuses a SYN when
 * there is none, and holds no more half-open connections than there is.
 * The layer above counts its sockets (stack_set_upper); without one, every
 * connection the limit allows. */
static uint32_t sock_room(void *ctx)
{
    const struct stack *s = ctx;
    return s->upper_ops != NULL ? s->upper_ops->room(s->upper) : s->max_socks;
}

/* SYN cookies a round whose burst came back full may send (a SYN past
 * them that would get one is dropped, counted in syn_shed): an eighth of
 * the burst, at least 1. A full burst means the port's receive ring holds
 * more frames than a round takes: under a SYN flood the established
 * connections' segments wait there behind SYNs, and each cookie costs
 * more than the rest of a SYN's way through lwIP (two SipHash rounds, a
 * SYN-ACK built and copied into the tx batch, and its transmission, which
 * on af_packet runs the peer's kernel receive path on this core). With
 * the bound a round of SYNs costs a little more than a lookup each and the
 * ring drains; a round that is not full has no bound (the ring is empty
 * behind it), so only the SYNs beyond what the stack could have answered
 * in time are dropped, and a client whose SYN is dropped retransmits.
 * Measured: docs/reliability.md (SYN floods). */
static uint32_t full_round_cookies(unsigned burst)
{
    return burst >= 16 ? burst / 8 : 1;
}

/* Received frames IPv4 reassembly may hold: a quarter of the mbuf pool
 * (rx is zero-copy: each is an mbuf), at most LSTACK_REASS_MAX_PBUFS, so
 * fragments that never complete cannot starve the port of buffers. */
static uint32_t reass_max_pbufs(uint32_t pool)
{
    uint32_t n = pool / 4;
    if (n > LSTACK_REASS_MAX_PBUFS)
        n = LSTACK_REASS_MAX_PBUFS;
    return n < 2 ? 2 : n;
}

/* The ephemeral port range, Linux's: net.ipv4.ip_local_port_range of the
 * process's network namespace, read once here (a later change is not
 * followed); Linux's default 32768-60999 if it cannot be read or makes no
 * sense. One read at start, never per connect. */
static void local_port_range(uint16_t *lo, uint16_t *hi)
{
    *lo = 32768;
    *hi = 60999;
    FILE *f = fopen("/proc/sys/net/ipv4/ip_local_port_range", "re");
    if (f == NULL)
        return;
    unsigned a = 0, b = 0;
    if (fscanf(f, "%u %u", &a, &b) == 2 && a >= 1 && a <= b && b <= 65535) {
        *lo = (uint16_t)a;
        *hi = (uint16_t)b;
    }
    fclose(f);
}

/* An integer sysctl of the process's namespace (path under /proc/sys), read
 * once at start; def if unreadable or outside lo..hi. */
static int sysctl_int(const char *path, int def, int lo, int hi)
{
    FILE *f = fopen(path, "re");
    if (f == NULL)
        return def;
    int v = 0, n = def;
    if (fscanf(f, "%d", &v) == 1 && v >= lo && v <= hi)
        n = v;
    fclose(f);
    return n;
}

/* Configure this stack's lwIP copy from conf and the port (caps, and its
 * pool of pool mbufs), before lwip_init; caps->tso_max becomes 0 where the
 * stack does not use TSO. Returns 0 or -1 (err). */
static int configure_lwip(struct stack *s, const struct lstack_conf *conf, struct nic_caps *caps,
                          uint32_t pool, char *err, size_t errlen)
{
    uint32_t mss = caps->mtu > 40 ? caps->mtu - 40u : 536u;
    if (mss > LSTACK_TCP_MSS_MAX)
        mss = LSTACK_TCP_MSS_MAX;
    /* TSO where the port cuts TCP frames and fills in their checksums
     * (lwIP then leaves them 0, netif.c) and takes at least two MSS. */
    if (!caps->tx_cksum || caps->tso_max < 2 * mss)
        caps->tso_max = 0;
    struct lstack_lwip_conf lc = {
        .rcv_wnd = conf->tcp_rcv_wnd,
        .snd_buf = conf->tcp_snd_buf,
        .mss = mss,
        .tso_max = caps->tso_max,
        .tso_mss = caps->tso_mss_max,
        .mem_limit = arena_limit(conf),
        .pcb_hint = conf->tcp_conn_count,
        .reass_max_pbufs = reass_max_pbufs(pool),
        .log = lwip_log,
        .sock_room = sock_room,
        .sock_room_ctx = s,
        .cookie_budget = &s->cookie_budget,
    };
    local_port_range(&lc.port_lo, &lc.port_hi);
    s->port_lo = lc.port_lo;
    s->port_hi = lc.port_hi;
    int rc = s->L.lstack_lwip_configure(&lc, &s->tcp);
    if (rc != 0) {
        snprintf(err, errlen, "lwIP refused its configuration (tcp_rcv_wnd %u, tcp_snd_buf %u, MSS %u, arena %zu MiB): %s",
                 lc.rcv_wnd, lc.snd_buf, mss, lc.mem_limit >> 20, strerror(-rc));
        return -1;
    }
    return 0;
}

int stack_open(struct stack **out, const struct lstack_conf *conf, int index, struct nic *nic,
               char *err, size_t errlen)
{
    struct stack *s = calloc(1, sizeof(*s));
    if (s == NULL) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    s->index = index;
    s->burst = conf->nic_read_number;
    s->full_round_cookies = full_round_cookies(s->burst);
    s->cookie_budget = UINT32_MAX; /* no bound before the first round */
    s->max_socks = conf->tcp_conn_count;
    /* how an unanswered SYN is sent again before connect fails with
     * ETIMEDOUT (lstack/sock/tcp_connect_timer.c): net.ipv4.tcp_syn_retries
     * (TCP_SYNCNT's default; Linux's 6 if unreadable, its range 1..127)
     * and tcp_syn_linear_timeouts (Linux 6.6 on: that many more SYNs 1 s
     * apart before the RTO doubles; 0 on kernels without it) */
    s->syn_retries = sysctl_int("/proc/sys/net/ipv4/tcp_syn_retries", 6, 1, 127);
    s->syn_linear_timeouts = sysctl_int("/proc/sys/net/ipv4/tcp_syn_linear_timeouts", 0, 0, 127);
    char tag[32];
    snprintf(tag, sizeof(tag), "lstack-lwip-%d", index);
    if (lwip_load(&s->L, NULL, tag, err, errlen) != 0) {
        free(s);
        return -1;
    }
    struct nic_caps caps;
    nic->ops->caps(nic, &caps);
    if (nic->ops->tx_frame_tso == NULL)
        caps.tso_max = 0;
    struct nic_stats ns;
    nic->ops->get_stats(nic, &ns);
    if (configure_lwip(s, conf, &caps, ns.mbuf_total, err, errlen) != 0) {
        lwip_unload(&s->L);
        free(s);
        return -1;
    }
    s->L.lwip_init();
    s->nic = nic;
    uint8_t mac[6];
    nic->ops->mac(nic, mac);
    frame_filter_init(&s->filter, mac, conf->host_addr, conf->mask_addr);
    s->caps = caps;
    s->filter.check_tcp = 1; /* lwIP's own TCP check is off, but for fragments (netif.c) */
    if (stack_netif_open(s, conf, err, errlen) != 0) {
        lwip_unload(&s->L);
        free(s);
        return -1;
    }
    nic->ops->tx_flush(nic); /* the gratuitous ARP and the gateway query */
    s->tx_counted = s->tx_queued; /* sent by the open, not by a round */
    *out = s;
    return 0;
}

/* The round after the rx burst (n frames in pkts, received at the round's
 * start t0): lwIP's timers, filter, lwIP, tx flush, accounting. Inlined into
 * stack_poll (run-to-completion's round is unchanged) and stack_round. */
static inline __attribute__((always_inline)) unsigned round_body(struct stack *s, struct nic_pkt *pkts,
                                                                 unsigned n)
{
    struct nic *nic = s->nic;
    /* lwIP's timers before this round's frames: a delayed ACK that falls
     * due now is sent only for data that arrived in an earlier round (the
     * application had a round to answer it); run after the frames, a due
     * fast timer would ACK every segment of the burst on its own just
     * before the replies that would have carried the ACKs. */
    s->L.sys_check_timeouts();
    /* the round's SYN cookie budget (full_round_cookies): one store */
    s->cookie_budget = n < s->burst ? UINT32_MAX : s->full_round_cookies;
    if (s->peers != NULL) /* several stacks: frames of another's connections go there */
        n = stack_peers_route(s, pkts, n);
    s->st.polls++;
    if (n > 0)
        s->st.busy_polls++;
    /* A burst of more than one frame: the output each segment owes its
     * connection (an ACK, data the ACKs let out) leaves once, at the end
     * (lstack/stack/lwip/port/tcp_rx_burst.c); one frame has nothing to
     * merge and goes at once. */
    if (n > 1)
        s->L.lstack_lwip_rx_burst_begin();
    /* Filter each frame; lwIP finds a segment's connection in its PCB
     * hash (lstack/stack/lwip/port/pcb_hash.c). */
    for (unsigned i = 0; i < n; i++) {
        /* the common TCP segment: to lwIP's TCP input without a second
         * look at its headers (stack_netif_input_tcp) */
        if (frame_common_tcp(&s->filter, pkts[i].data, pkts[i].len, pkts[i].cksum)) {
            stack_netif_input_tcp(s, &pkts[i]);
            continue;
        }
        enum frame_verdict v = frame_classify_rest(&s->filter, pkts[i].data, pkts[i].len, pkts[i].cksum);
        if (v == FRAME_PASS) {
            stack_netif_input(s, &pkts[i]);
        } else {
            s->st.drop[v]++;
            nic->ops->pkt_free(nic, pkts[i].handle);
        }
    }
    if (n > 1)
        s->L.lstack_lwip_rx_burst_end();
    /* the frames lwIP freed (this round's pure ACKs, what the application
     * read since the last round) back to the port in one go */
    stack_rx_free_flush(s);
    nic->ops->tx_flush(nic);
    /* Frames lwIP queued since the last round: in it, or in the
     * application's socket calls since (they left in this flush). */
    unsigned tx = (unsigned)(s->tx_queued - s->tx_counted);
    s->tx_counted = s->tx_queued;
    round_acct_end(&s->round, &s->st.rounds, n, tx);
    return n;
}

unsigned stack_poll(struct stack *s)
{
    struct nic_pkt pkts[s->burst];
    struct nic *nic = s->nic;
    round_acct_begin(&s->round, &s->st.rounds, round_clock_now());
    unsigned n = s->peers == NULL ? nic->ops->rx_burst(nic, pkts, s->burst) : stack_peers_rx(s, pkts);
    return round_body(s, pkts, n);
}

unsigned stack_burst(const struct stack *s)
{
    return s->burst;
}

unsigned stack_rx(struct stack *s, struct nic_pkt *pkts)
{
    if (s->peers != NULL)
        return stack_peers_rx(s, pkts);
    return s->nic->ops->rx_burst(s->nic, pkts, s->burst);
}

unsigned stack_round(struct stack *s, struct nic_pkt *pkts, unsigned n)
{
    round_acct_begin(&s->round, &s->st.rounds, round_clock_now());
    return round_body(s, pkts, n);
}

bool stack_round_owed(const struct stack *s)
{
    return __atomic_load_n(&s->tx_queued, __ATOMIC_RELAXED) != s->tx_counted ||
           (s->upper_ops != NULL && s->upper_ops->owed(s->upper));
}

void stack_flush_tx(struct stack *s)
{
    s->nic->ops->tx_flush(s->nic);
}

uint32_t stack_next_timer_ms(struct stack *s)
{
    return s->L.sys_timeouts_sleeptime();
}

void stack_get_stats(const struct stack *s, struct stack_stats *st)
{
    *st = s->st;
    struct lstack_lwip_syn_stats syn;
    s->L.lstack_lwip_syn_stats(&syn);
    st->conn_refused = syn.refused;
    st->syn_dropped = syn.dropped;
    st->syn_shed = syn.shed;
    st->syncookies_sent = syn.cookies_sent;
    st->syncookies_recv = syn.cookies_recv;
    st->syncookies_failed = syn.cookies_failed;
    struct lstack_lwip_reass_stats rs;
    s->L.lstack_lwip_reass_stats(&rs);
    st->frag_in = rs.fragments;
    st->frag_reassembled = rs.reassembled;
    st->frag_dropped = rs.dropped;
    st->frag_timeout = rs.timed_out;
    st->frag_evicted = rs.evicted;
    st->frag_mbufs_held = rs.pbufs_waiting;
    st->frag_mbufs_max = rs.pbufs_max;
#if ROUND_CLOCK_TSC
    st->rounds.tsc_hz = s->L.lstack_lwip_tsc_hz();
#else
    st->rounds.tsc_hz = 1000000000u; /* the round clock is CLOCK_MONOTONIC's nanoseconds */
#endif
    s->nic->ops->get_stats(s->nic, &st->nic);
    st->mbuf_in_use = st->nic.mbuf_total - st->nic.mbuf_free;
    stack_peers_stats(s, st);
    if (s->upper_ops != NULL)
        s->upper_ops->stats(s->upper, st); /* the sockets' counters */
}

void stack_describe_nic(const struct stack *s, nic_describe_fn emit, void *ctx)
{
    if (s->nic->ops->describe != NULL)
        s->nic->ops->describe(s->nic, emit, ctx);
}

void stack_mac(const struct stack *s, uint8_t mac[6])
{
    s->nic->ops->mac(s->nic, mac);
}

const char *stack_port_name(const struct stack *s)
{
    return s->nic->ops->name(s->nic);
}

void stack_set_upper(struct stack *s, void *upper, const struct stack_upper_ops *ops)
{
    s->upper = upper;
    s->upper_ops = ops;
}

void *stack_upper(const struct stack *s)
{
    return s->upper;
}

void stack_close(struct stack *s)
{
    if (s == NULL)
        return;
    stack_netif_close(s);
    s->nic->ops->tx_flush(s->nic);
    s->nic->ops->close(s->nic);
    lwip_unload(&s->L);
    if (s->upper_ops != NULL)
        s->upper_ops->free(s->upper);
    free(s);
}

int stack_claim_listen(struct stack *s, uint16_t port, bool on)
{
    if (s->nic->ops->claim_listen == NULL)
        return 0;
    return s->nic->ops->claim_listen(s->nic, ip4_addr_get_u32(netif_ip4_addr(&s->netif)), port, on);
}

/* ---- stack_lwip.h ---- */

const struct lwip_api *stack_lwip(const struct stack *s)
{
    return &s->L;
}

struct netif *stack_netif(struct stack *s)
{
    return &s->netif;
}

const struct lstack_lwip_limits *stack_tcp_limits(const struct stack *s)
{
    return &s->tcp;
}

uint32_t stack_conn_limit(const struct stack *s)
{
    return s->max_socks;
}

int stack_syn_retries(const struct stack *s)
{
    return s->syn_retries;
}

int stack_syn_linear_timeouts(const struct stack *s)
{
    return s->syn_linear_timeouts;
}
