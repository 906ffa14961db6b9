/*
 * tcp_connect_timer.c - the Linux timings of an outgoing connect that lwIP
 * does not have: EHOSTUNREACH when the next hop never answers ARP, and
 * ETIMEDOUT after the SYNs TCP_SYNCNT (or tcp_syn_retries) allows, at
 * Linux's time.
 *
 * One lwIP timer (sys_timeout) per connecting socket, armed by lsock_connect
 * and cancelled when the attempt ends either way; it runs inside
 * stack_poll's sys_check_timeouts, under the stack lock.
 * Design: docs/design.md#connect-failures-are-found-by-a-per-connection-timer
 */
#include <errno.h>

#include "lwip/etharp.h"
#include "lwip/timeouts.h"

#include "sock/lsock_lwip.h"

/*
 *  - Linux gives up on a neighbour after 3 unanswered ARP probes 1 s apart
 *    (mcast_solicit 3, retrans_time 1 s) and fails the connects waiting for
 *    it with EHOSTUNREACH, about 3 s after the first SYN. lwIP keeps the SYN
 *    queued on the ARP entry, drops it silently when the entry expires and
 *    retransmits until its SYN limit: ETIMEDOUT after ~20 s. Here, 3 s after
 *    tcp_connect, a connection still in SYN_SENT whose next hop (the peer on
 *    the subnet, else the gateway) has no resolved ARP entry fails with
 *    EHOSTUNREACH.
 *  - Linux sends an unanswered SYN again with an RTO of 1 s, kept at 1 s
 *    for the first L + 1 intervals (L: net.ipv4.tcp_syn_linear_timeouts,
 *    Linux 6.6 on, 4 by default; 0 before) and doubled after each later
 *    one, capped at TCP_RTO_MAX (120 s). It fails the connect with
 *    ETIMEDOUT at the first retransmission time at which it has sent
 *    n + L retransmissions (n: TCP_SYNCNT, else tcp_syn_retries, 6) or at
 *    which (2^(n+1) - 1) s have passed (n <= 6; 127 s + (n - 6) x 120 s
 *    above: tcp_model_timeout). With L = 0: SYNs at 0, 1, 3, 7... s and
 *    ETIMEDOUT at (2^(n+1) - 1) s, 127 s by default; with L = 4 (this
 *    machine's 6.18): SYNs at 0, 1, 2, 3, 4, 5, 7, 11, 19, 35, 67 s and
 *    ETIMEDOUT at 131 s (test_client_sem.sh's syn_times checks them against
 *    the kernel). lwIP sends a SYN every RTO without doubling it (1 s here,
 *    LSTACK_TCP_RTO_INIT_MS) and gives up after its compile-time
 *    TCP_SYNMAXRTX (6: ~6 s). Here, half a second after each of Linux's
 *    retransmission times, the timer sets the pcb's RTO to Linux's next
 *    interval and keeps lwIP's retransmission count under its limit, so
 *    the SYNs leave at Linux's times and the attempt ends at Linux's time.
 */

/* Linux: mcast_solicit (3) probes, retrans_time (1 s) apart. */
#define ARP_FAIL_MS 3000u
/* How long after Linux's time of a retransmission the RTO for the next one
 * is set: lwIP's slow timer has sent it by then (it runs up to one 50 ms
 * tick early, never later), and the next one is seconds away. */
#define SETTLE_MS 500u
/* Linux's TCP_RTO_MAX */
#define RTO_MAX_MS 120000u
/* Linux's TCP_TIMEOUT_FALLBACK (RFC 6298 5.7) */
#define RTO_FALLBACK_MS 3000u

int lsock_syncnt(const struct lsock *s)
{
    return s->o.syncnt != 0 ? s->o.syncnt : s->ss->syn_retries;
}

/* Linux's interval after the k-th transmission of a SYN (k >= 0; 0 is the
 * first SYN) with L linear timeouts: 1 s for k <= L, then doubling, capped
 * at TCP_RTO_MAX. */
static uint64_t syn_gap_ms(int k, int L)
{
    if (k <= L)
        return 1000u;
    int e = k - L;
    return e >= 7 ? RTO_MAX_MS : LWIP_MIN(1000ull << e, (uint64_t)RTO_MAX_MS);
}

/* When Linux sends the k-th transmission of a SYN (k >= 0). */
static uint64_t syn_at_ms(int k, int L)
{
    uint64_t t = 0;
    for (int i = 0; i < k; i++)
        t += syn_gap_ms(i, L);
    return t;
}

/* tcp_model_timeout for n retries: (2^(n+1) - 1) s up to n = 6 (where the
 * doubled RTO reaches TCP_RTO_MAX), 120 s more per retry above. */
static uint64_t model_ms(int n)
{
    if (n <= 6)
        return ((1ull << (n + 1)) - 1u) * 1000u;
    return 127000u + (uint64_t)(n - 6) * RTO_MAX_MS;
}

/* Linux's last: the index k >= 1 of the retransmission time at which it
 * gives up (sends nothing): n + L retransmissions sent, or the model's
 * time passed. */
static int syn_last(int n, int L)
{
    int k = 1;
    while (k - 1 < n + L && syn_at_ms(k, L) < model_ms(n))
        k++;
    return k;
}

/* The pcb's RTO in lwIP ticks for ms (ms <= 121 s fits its s16_t). */
static s16_t rto_ticks(uint64_t ms)
{
    return (s16_t)((ms + STACK_TCP_TICK_MS - 1u) / STACK_TCP_TICK_MS);
}

/* The next hop's ARP entry is resolved. */
static bool next_hop_known(struct lsock *s)
{
    struct netif *nif = stack_netif(s->st);
    uint32_t me = ip4_addr_get_u32(netif_ip4_addr(nif));
    uint32_t mask = ip4_addr_get_u32(netif_ip4_netmask(nif));
    ip4_addr_t hop;
    if ((s->raddr & mask) == (me & mask))
        ip4_addr_set_u32(&hop, s->raddr);
    else
        ip4_addr_copy(hop, *netif_ip4_gw(nif));
    struct eth_addr *eth = NULL;
    const ip4_addr_t *ip = NULL;
    return lsock_lwip(s)->etharp_find_addr(nif, &hop, &eth, &ip) >= 0;
}

/* End the attempt with error e (the pcb in SYN_SENT is freed, nothing is
 * sent), as if lwIP had: the next connect / SO_ERROR reports e. */
static void fail(struct lsock *s, int e)
{
    const struct lwip_api *L = lsock_lwip(s);
    lsock_detach(L, s->pcb);
    L->tcp_close(s->pcb);
    s->pcb = NULL;
    s->state = LS_DEAD;
    s->failed = true;
    s->so_error = e;
    lsock_notify(s, true);
}

static void on_timer(void *arg);

/* Fire at ms after tcp_connect (counted from its start, so that a late
 * firing does not push the later ones back). */
static void arm(struct lsock *s, uint64_t ms)
{
    const struct lwip_api *L = lsock_lwip(s);
    uint64_t now = (uint32_t)(L->sys_now() - s->conn_t0);
    s->conn_timer_ms = ms;
    s->conn_timer = true;
    L->sys_timeout(ms > now ? (u32_t)(ms - now) : 0u, on_timer, s);
}

/* The same event again one lwIP tick later. */
static void rearm_tick(struct lsock *s)
{
    s->conn_timer = true;
    lsock_lwip(s)->sys_timeout(STACK_TCP_TICK_MS, on_timer, s);
}

/* Ticks to wait at most for a retransmission lwIP owes (a stack thread
 * held up), before the RTO is set anyway: 2 s. */
#define WAIT_TICKS_MAX (2000u / STACK_TCP_TICK_MS)

static void on_timer(void *arg)
{
    struct lsock *s = arg;
    s->conn_timer = false;
    if (s->state != LS_CONNECTING || s->pcb == NULL)
        return;
    uint64_t at = s->conn_timer_ms;
    if (at == ARP_FAIL_MS && !next_hop_known(s)) {
        fail(s, EHOSTUNREACH);
        return;
    }
    int n = lsock_syncnt(s), L = s->ss->syn_linear_timeouts;
    int last = syn_last(n, L);
    uint64_t end = syn_at_ms(last, L);
    if (at >= end) {
        fail(s, ETIMEDOUT);
        return;
    }
    /* k: Linux's retransmissions sent by now (settled) */
    int k = 0;
    while (k + 1 < last && syn_at_ms(k + 1, L) + SETTLE_MS <= at)
        k++;
    if (k > 0 && at == syn_at_ms(k, L) + SETTLE_MS) {
        /* lwIP counts its retransmissions in nrtx, set to 0 at the event
         * before (and by tcp_connect): still 0, lwIP has not sent the k-th
         * (its thread was held up): wait for it, a tick at a time. */
        if (s->pcb->nrtx == 0 && s->conn_waits < WAIT_TICKS_MAX) {
            s->conn_waits++;
            rearm_tick(s);
            return;
        }
        s->conn_waits = 0;
        /* Until the next one; after the last, past the end (Linux sends
         * nothing more: the timer fails the attempt at end). A longer RTO
         * makes nothing due sooner, so a pcb parked by lwIP's timer
         * (patch 0017) needs no wake. */
        uint64_t gap = k + 1 < last ? syn_gap_ms(k, L) : end - syn_at_ms(k, L) + 1000u;
        s->pcb->rto = rto_ticks(gap);
        s->conn_rto_set = true;
        /* lwIP's count back to 0, far under its limit (TCP_SYNMAXRTX):
         * lwIP never ends the attempt itself, and an unacceptable ACK in
         * SYN_SENT (lwIP sends the SYN again and counts it) does not bring
         * its limit near. TCP_INFO's tcpi_retransmits reads 0-1 meanwhile. */
        s->pcb->nrtx = 0;
    }
    /* the next event: the ARP check, the next retransmission settled, or the end */
    uint64_t next = end;
    if (at < ARP_FAIL_MS)
        next = ARP_FAIL_MS;
    if (k + 1 < last && syn_at_ms(k + 1, L) + SETTLE_MS < next)
        next = syn_at_ms(k + 1, L) + SETTLE_MS;
    arm(s, next);
}

void lsock_connect_timer_start(struct lsock *s)
{
    lsock_connect_timer_stop(s);
    s->conn_t0 = lsock_lwip(s)->sys_now();
    s->conn_waits = 0;
    s->conn_rto_set = false;
    /* the first event: the first retransmission settled (1.5 s), or the
     * end if there is none (tcp_syn_retries 0: 1 s) */
    int L = s->ss->syn_linear_timeouts;
    uint64_t end = syn_at_ms(syn_last(lsock_syncnt(s), L), L);
    arm(s, LWIP_MIN(syn_at_ms(1, L) + SETTLE_MS, end));
}

void lsock_connect_timer_connected(struct lsock *s, struct tcp_pcb *pcb)
{
    lsock_connect_timer_stop(s);
    if (!s->conn_rto_set)
        return;
    /* The SYN was sent again: no RTT sample (Karn), and the RTO must not
     * stay the SYN's doubled one. RFC 6298 5.7 and Linux
     * (TCP_TIMEOUT_FALLBACK): 3 s until the first sample; the count of
     * retransmissions starts again. tcp_input has woken the pcb (patch
     * 0017), and a shorter RTO is only read at its next visit. */
    pcb->rto = rto_ticks(RTO_FALLBACK_MS);
    pcb->nrtx = 0;
    s->conn_rto_set = false;
}

void lsock_connect_timer_stop(struct lsock *s)
{
    if (!s->conn_timer)
        return;
    s->conn_timer = false;
    lsock_lwip(s)->sys_untimeout(on_timer, s);
}
