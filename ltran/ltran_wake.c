/*
 * ltran_wake.c - low_power_mode on ltran's side (docs/ltran.md#low-power):
 * the wake zone (a memzone with one word per client and one for ltran,
 * struct ltran_wake_zone of common/ltran_proto.h), waking the clients that
 * sleep on their eventfd when frames went on their rx ring, and ltran's own
 * idle sleep.
 *
 * ltran's sleep: after LTRAN_IDLE_US without a frame moved, it sleeps in a
 * futex wait on its word, LTRAN_SLEEP_MIN_US at first, doubling up to
 * LTRAN_SLEEP_MAX_US while idle. A client that puts frames on its tx ring
 * ends the wait at once (futex wake, lstack/nic/ltran_nic.c); a frame from
 * the port waits for the wait's end (no rx interrupt on the vdevs, nor on
 * af_packet's ring: the bound of that wait is the latency ltran adds).
 * The timer slack of the process is set to 1 us so that a short wait is
 * short.
 * Rejected: a sleep after a count of empty rounds (the time it stands for
 * depends on the machine and its load; the TSC says how long); a blocking
 * poll() on the port (DPDK gives no fd for af_packet or af_xdp queues);
 * a thread per client to wake it (a write() from the loop costs less).
 */
#include <errno.h>
#include <linux/futex.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <rte_cycles.h>
#include <rte_errno.h>
#include <rte_memzone.h>
#include <rte_ring.h>

#include "ltran.h"

#define LTRAN_IDLE_US 200
#define LTRAN_SLEEP_MIN_US 10
#define LTRAN_SLEEP_MAX_US 100

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
    l->sleep_ns = LTRAN_SLEEP_MIN_US * 1000;
    if (l->conf.low_power)
        prctl(PR_SET_TIMERSLACK, 1000UL, 0, 0, 0);
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
        if (write(c->wake_fd, &one, sizeof(one)) == (ssize_t)sizeof(one)) {
            c->wakeups++;
            l->st.wakeups_sent++;
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
        return;
    }
    if (!l->conf.low_power || now - l->busy_at < l->idle_cycles)
        return;
    uint32_t *w = &l->zone->ltran.sleeping;
    __atomic_store_n(w, 1, __ATOMIC_RELAXED);
    __atomic_thread_fence(__ATOMIC_SEQ_CST); /* the word before the rings (clients: ring, then word) */
    if (tx_pending(l)) {
        __atomic_store_n(w, 0, __ATOMIC_RELAXED);
        return;
    }
    struct timespec ts = {.tv_nsec = (long)l->sleep_ns};
    syscall(SYS_futex, w, FUTEX_WAIT, 1, &ts, NULL, 0);
    l->st.sleeps++;
    if (__atomic_exchange_n(w, 0, __ATOMIC_ACQ_REL) == 0)
        l->st.woken_by_client++; /* a client cleared it: its frames wait */
    else if (l->sleep_ns < LTRAN_SLEEP_MAX_US * 1000)
        l->sleep_ns *= 2;
}
