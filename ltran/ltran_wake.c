/*
 * ltran_wake.c - low_power_mode on ltran's side (docs/ltran.md#low-power):
 * the wake zone (a memzone with one word per client and one for ltran,
 * struct ltran_wake_zone of common/ltran_proto.h), waking the clients that
 * sleep on their eventfd when frames went on their rx ring, and ltran's own
 * idle sleep.
 * Design: docs/design.md#ltrans-idle-decision-and-its-clients-wake-ups
 */
#include <errno.h>
#include <poll.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#include <rte_ethdev.h>

#include <rte_cycles.h>
#include <rte_errno.h>
#include <rte_memzone.h>
#include <rte_ring.h>

#include "ltran.h"

/*
 * ltran's sleep: after LTRAN_IDLE_US without a frame moved (up to
 * LTRAN_SPIN_MAX_US while frames have been coming that close together,
 * common/idle_gap.h, yielding meanwhile: a -c 1 ping-pong's next request
 * then finds ltran awake), it sleeps in one ppoll() on its eventfd (written by a client that put frames on its tx
 * ring while ltran's word is set, lstack/nic/ltran_nic.c) and, where the
 * port is af_packet on a kernel interface, the port's doorbell
 * (ltran_doorbell.c: readable when a frame comes) and the control socket's
 * fds (a request, a new peer or a closed one: ltran_ctl_pollfds), up to
 * LTRAN_BELL_SLEEP_US (100 ms; each of those ends it, nothing else needs
 * ltran, and the bound only caps a wake-up that was lost). Without a
 * doorbell (a PCI port, af_xdp) the sleep is timed: LTRAN_SLEEP_MIN_US at first, doubling up to
 * LTRAN_SLEEP_MAX_US while idle, and a frame from the port waits for its
 * end (that bound is the latency ltran adds). The timer slack of the
 * process is set to 1 us so that a short sleep is short.
 *
 * Waiting for an answer: after ltran woke a sleeping client it stays awake
 * until a client puts frames on its tx ring, up to LTRAN_REPLY_WAIT_US,
 * yielding its CPU in every empty round meanwhile (sched_yield). A request
 * to a sleeping server then costs two wake-ups (ltran by the port, the
 * server by ltran), not three (ltran again by the server's answer). The
 * yield matters: the kernel tends to wake the server on the CPU of its
 * waker, and a spinning ltran there delayed the answer by its whole wait
 * (spaced PINGs' median 0.5 -> 1.2 ms without it, on a quiet 2-vCPU VM).
 */

#define LTRAN_IDLE_US 50
#define LTRAN_SLEEP_MIN_US 10
#define LTRAN_SLEEP_MAX_US 100
#define LTRAN_BELL_SLEEP_US 100000
#define LTRAN_REPLY_WAIT_US 1000
#define LTRAN_SPIN_MAX_US 1000

int ltran_wake_init(struct ltran *l, char *err, size_t errlen)
{
    const struct rte_memzone *z =
        rte_memzone_reserve(LTRAN_WAKE_ZONE, sizeof(struct ltran_wake_zone), SOCKET_ID_ANY, 0);
    if (z == NULL) {
        snprintf(err, errlen, "memzone %s: %s", LTRAN_WAKE_ZONE, rte_strerror(rte_errno));
        return -1;
    }
    l->zone = z->addr;
    memset(l->zone, 0, sizeof(*l->zone));
    uint64_t us = rte_get_tsc_hz() / 1000000;
    l->idle_cycles = us * LTRAN_IDLE_US;
    l->reply_cycles = us * LTRAN_REPLY_WAIT_US;
    l->spin_max_cycles = us * LTRAN_SPIN_MAX_US;
    l->sleep_ns = LTRAN_SLEEP_MIN_US * 1000;
    l->wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (l->wake_fd < 0) {
        snprintf(err, errlen, "eventfd: %s", strerror(errno));
        return -1;
    }
    l->doorbell = -1;
    if (l->conf.low_power) {
        prctl(PR_SET_TIMERSLACK, 1000UL, 0, 0, 0);
        struct rte_eth_dev_info info;
        /* Only af_packet's frames pass the kernel's packet taps (af_xdp's are
         * redirected before them): the doorbell would not ring for others. */
        int rc = rte_eth_dev_info_get(l->port, &info) == 0 && info.driver_name != NULL &&
                         strcmp(info.driver_name, "net_af_packet") == 0
                     ? ltran_doorbell_open(info.if_index)
                     : -ENODEV;
        if (rc >= 0)
            l->doorbell = rc;
        fprintf(stderr, "ltran: low power: %s\n",
                rc >= 0 ? "the port's interface rings ltran awake (a packet socket on it while ltran sleeps)"
                        : "no doorbell on this port (not af_packet): timed sleeps of 10-100 us");
    }
    return 0;
}

void ltran_wake_clients(struct ltran *l, uint32_t mask)
{
    __atomic_thread_fence(__ATOMIC_SEQ_CST); /* the rings' tails before the words */
    while (mask != 0) {
        unsigned id = (unsigned)__builtin_ctz(mask);
        mask &= mask - 1;
        struct ltran_client *c = &l->cl[id];
        uint32_t *w = &l->zone->client[id].sleeping;
        if (c->wake_fd < 0 || __atomic_load_n(w, __ATOMIC_RELAXED) == 0 ||
            __atomic_exchange_n(w, 0, __ATOMIC_ACQ_REL) == 0)
            continue;
        uint64_t one = 1;
        uint64_t t = rte_rdtsc();
        ssize_t r = write(c->wake_fd, &one, sizeof(one));
        l->st.wake_cycles += rte_rdtsc() - t;
        if (r == (ssize_t)sizeof(one)) {
            c->wakeups++;
            l->st.wakeups_sent++;
            l->reply_until = t + l->reply_cycles;
        }
    }
}

/* True if a client has frames on its tx ring. */
static bool tx_pending(const struct ltran *l)
{
    for (unsigned id = 0; id < LTRAN_MAX_CLIENTS; id++)
        if (l->cl[id].used && rte_ring_count(l->cl[id].tx) != 0)
            return true;
    return false;
}

void ltran_idle(struct ltran *l, unsigned moved, uint64_t now)
{
    if (moved != 0) {
        l->busy_at = now;
        l->sleep_ns = LTRAN_SLEEP_MIN_US * 1000;
        idle_gap_frame(&l->gap, now, l->spin_max_cycles);
        return;
    }
    if (!l->conf.low_power || now - l->busy_at < l->idle_cycles)
        return;
    if (now < l->reply_until ||
        now - l->busy_at < idle_gap_window(&l->gap, now, l->idle_cycles, l->spin_max_cycles)) {
        sched_yield(); /* the client we woke, or the next frame's sender, may be queued on this CPU */
        return;
    }
    uint32_t *w = &l->zone->ltran.sleeping;
    __atomic_store_n(w, 1, __ATOMIC_RELAXED);
    __atomic_thread_fence(__ATOMIC_SEQ_CST); /* the word before the rings (clients: ring, then word) */
    if (tx_pending(l)) {
        __atomic_store_n(w, 0, __ATOMIC_RELAXED);
        return;
    }
    bool bell = l->doorbell >= 0 && ltran_doorbell_arm(l->doorbell) == 0;
    if (bell && ltran_fwd_round(l) != 0) { /* came before the arming */
        ltran_doorbell_disarm(l->doorbell);
        __atomic_store_n(w, 0, __ATOMIC_RELAXED);
        l->busy_at = now;
        return;
    }
    struct pollfd pf[2 + LTRAN_MAX_PEERS + 1] = {{.fd = l->wake_fd, .events = POLLIN},
                                                 {.fd = bell ? l->doorbell : -1, .events = POLLIN}};
    int n = 2;
    if (bell) /* a timed sleep is short anyway: the loop polls the socket after it */
        n += ltran_ctl_pollfds(l, pf + 2, LTRAN_MAX_PEERS + 1);
    long ns = bell ? LTRAN_BELL_SLEEP_US * 1000L : (long)l->sleep_ns;
    struct timespec ts = {.tv_sec = ns / 1000000000L, .tv_nsec = ns % 1000000000L};
    ppoll(pf, (nfds_t)n, &ts, NULL);
    for (int k = 2; k < n; k++)
        if (pf[k].revents != 0) {
            l->next_ctl = 0; /* the loop serves the control socket at once */
            break;
        }
    __atomic_store_n(w, 0, __ATOMIC_RELAXED);
    l->st.sleeps++;
    if (pf[0].revents & POLLIN) {
        uint64_t v;
        if (read(l->wake_fd, &v, sizeof(v)) < 0 && errno != EAGAIN)
            fprintf(stderr, "ltran: reading its wake-up eventfd: %s\n", strerror(errno));
        l->st.woken_by_client++;
    }
    if (bell) {
        if (pf[1].revents & POLLIN)
            l->st.woken_by_port++;
        ltran_doorbell_disarm(l->doorbell);
    } else if (!(pf[0].revents & POLLIN) && l->sleep_ns < LTRAN_SLEEP_MAX_US * 1000) {
        l->sleep_ns *= 2;
    }
}
