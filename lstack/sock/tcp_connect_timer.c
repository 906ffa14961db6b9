/*
 * tcp_connect_timer.c - the Linux timings of an outgoing connect that lwIP
 * does not have: EHOSTUNREACH when the next hop never answers ARP, and
 * ETIMEDOUT after the SYNs TCP_SYNCNT (or tcp_syn_retries) allows, at
 * Linux's time.
 *
 *  - Linux gives up on a neighbour after 3 unanswered ARP probes 1 s apart
 *    (mcast_solicit 3, retrans_time 1 s) and fails the connects waiting for
 *    it with EHOSTUNREACH, about 3 s after the first SYN. lwIP keeps the SYN
 *    queued on the ARP entry, drops it silently when the entry expires and
 *    retransmits until its SYN limit: ETIMEDOUT after ~20 s. Here, 3 s after
 *    tcp_connect, a connection still in SYN_SENT whose next hop (the peer on
 *    the subnet, else the gateway) has no resolved ARP entry fails with
 *    EHOSTUNREACH.
 *  - Linux sends an unanswered SYN n + 1 times (n: TCP_SYNCNT, else
 *    net.ipv4.tcp_syn_retries, 6), 1 s apart doubling, and fails the
 *    connect with ETIMEDOUT (2^(n+1) - 1) s after the first: 127 s by
 *    default. lwIP retransmits a SYN every 3 s and gives up after its
 *    compile-time TCP_SYNMAXRTX (6, ~20 s). Here the attempt ends at Linux's
 *    time; until then the timer fires at least every 9 s and clears the
 *    pcb's retransmission count, so lwIP's own limit never comes first.
 *    The SYNs still leave every 3 s, not at Linux's 1, 2, 4... s.
 *
 * One lwIP timer (sys_timeout) per connecting socket, armed by lsock_connect
 * and cancelled when the attempt ends either way; it runs inside
 * stack_poll's sys_check_timeouts, under the stack lock.
 *
 * Rejected: a patch to lwIP's ARP code to report a failed entry to TCP
 * (lwIP has no such path; the check at 3 s gives Linux's result without
 * touching lwIP), and scanning every connecting socket from each poll round
 * (a clock read and a walk per round for an event of seconds).
 */
#include <errno.h>

#include "lwip/etharp.h"
#include "lwip/timeouts.h"

#include "sock/lsock_lwip.h"

/* Linux: mcast_solicit (3) probes, retrans_time (1 s) apart. */
#define ARP_FAIL_MS 3000u
/* Well under lwIP's SYN limit: it aborts on the tick after its 6th
 * retransmission (TCP_SYNMAXRTX, 3 s apart: 17.5-18.5 s after a reset of
 * the count); clearing the count every 9 s keeps it at 4 at most. */
#define KEEP_TRYING_MS 9000u

int lsock_syncnt(const struct lsock *s)
{
    return s->o.syncnt != 0 ? s->o.syncnt : s->st->syn_retries;
}

/* When Linux gives up on a SYN sent n + 1 times: (2^(n+1) - 1) s (n capped
 * at 20: 24 days; Linux's own RTO cap makes large n end sooner). */
static uint64_t syn_give_up_ms(int n)
{
    if (n > 20)
        n = 20;
    return ((1ull << (n + 1)) - 1u) * 1000u;
}

/* The next hop's ARP entry is resolved. */
static bool next_hop_known(struct lsock *s)
{
    struct netif *nif = &s->st->netif;
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

/* Fire again at ms after tcp_connect (now is at). */
static void arm(struct lsock *s, uint64_t at, uint64_t ms)
{
    s->conn_timer_ms = ms;
    s->conn_timer = true;
    lsock_lwip(s)->sys_timeout((u32_t)(ms - at), on_timer, s);
}

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
    uint64_t end = syn_give_up_ms(lsock_syncnt(s));
    if (at >= end) {
        fail(s, ETIMEDOUT);
        return;
    }
    s->pcb->nrtx = 0; /* lwIP's SYN limit is not ours */
    arm(s, at, end - at < KEEP_TRYING_MS ? end : at + KEEP_TRYING_MS);
}

void lsock_connect_timer_start(struct lsock *s)
{
    lsock_connect_timer_stop(s);
    arm(s, 0, ARP_FAIL_MS); /* the earliest end: TCP_SYNCNT 1 gives 3 s too */
}

void lsock_connect_timer_stop(struct lsock *s)
{
    if (!s->conn_timer)
        return;
    s->conn_timer = false;
    lsock_lwip(s)->sys_untimeout(on_timer, s);
}
