/*
 * memif_port.c - what a net_memif port (two processes on one host joined
 * by shared memory) needs beyond any DPDK port: surviving its peer, and
 * finding it again.
 * Design: docs/design.md#memif-reconnects-and-closes-on-the-interrupt-thread
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_alarm.h>
#include <rte_cycles.h>
#include <rte_dev.h>
#include <rte_devargs.h>
#include <rte_ethdev.h>
#include <rte_interrupts.h>

#include "nic/nic_priv.h"
#include "nic/quiesce.h"

/*
 * Owns, for a memif port:
 *   - the burst guard (nic/quiesce.c): the driver's disconnect, which runs
 *     on EAL's interrupt thread when the peer goes away, cannot unmap the
 *     rings under a burst;
 *   - the link watch: a periodic EAL alarm (so it runs on the interrupt
 *     thread, serialised with the driver's own control work) that notices
 *     link up and down, counts and reports them (`stackctl show nic`,
 *     group "link") and says so on stderr;
 *   - reconnecting a role=client port: DPDK 22.11's memif client tries its
 *     server once, in rte_eth_dev_start, and never again. A client whose
 *     server is not there yet (start order must not matter) or went away
 *     is stopped and started again from the alarm, at most once per
 *     MEMIF_RETRY_MS, with the port's bursts paused around it (stop and
 *     start swap the queue functions a burst calls). A role=server port
 *     needs nothing: the driver keeps listening and takes the next client.
 * While the link is down, bursts find nothing to receive and frames sent
 * are dropped (counted as drop_tx_full, and as tx_dropped_link_down here);
 * TCP retransmits once the peer is back.
 *
 *   - stopping and closing the port (memif_port_shut), on the interrupt
 *     thread too, the closing thread waiting for it: the driver's
 *     disconnect when the peer goes away runs there, and the driver's stop
 *     (the same disconnect) and close touch, with no lock, what that
 *     disconnect walks and frees: the shared regions, their fds, the queues,
 *     the device's private data. Run side by side, both threads read a
 *     region before either cleared it, and both unmapped it, closed its fd
 *     and rte_free'd it: the second munmap removes whatever was mapped at
 *     that address since. Seen with ftrace of mmap/munmap/signals:
 *     memif-race's survivor closed its port just as its peer's last
 *     connection was SIGKILLed; under ASan, LeakSanitizer's tracer, started
 *     at exit with a stack mapped where the region had been, died of
 *     SIGSEGV when the interrupt thread's munmap took that stack, and exit
 *     waited for it forever (CI: 1 run in 13; here 5 in 541 with 4 cycles).
 *     The same path closes a port whose open failed after the driver could
 *     have begun work on the interrupt thread (port.c's failure path);
 *   - what an abandoned close leaves: when the interrupt thread has not
 *     closed the port within MEMIF_SHUT_WAIT_MS, the closing thread gives up
 *     (a host stuck forever in its exit or in a failed start is worse than
 *     a port left open) and the alarm stays queued, to close the port
 *     whenever that thread comes to it, and then free what the closing
 *     thread had to leave allocated (the caller's late function: the
 *     port's queues and pools). Until it has, rte_eal_cleanup must
 *     not run (memif_port_shut_pending, checked by eal.c). DPDK 22.11's
 *     has the driver close every vdev port on the calling thread (beside
 *     the driver's work: the race the hand-off exists to avoid; refused
 *     only while the port is started), then its alarm cleanup waits for the
 *     interrupt thread, which runs the queued close while the cleanup goes
 *     on to unmap EAL's memory (memif-abandon with the check taken out:
 *     "Cannot close started device", then SIGSEGV). EAL is left up instead,
 *     with a warning; the kernel reclaims it at exit.
 */

#define MEMIF_WATCH_US 100000 /* link watch period */
#define MEMIF_RETRY_MS 1000   /* a client's reconnect attempts, at most this often */
#define MEMIF_LINK_WAIT_MS 2000 /* a client that reached its server: wait this long for the link at open */
#define MEMIF_SHUT_WAIT_MS 10000 /* the closing thread waits this long for the interrupt thread's close */

static bool devargs_role_client(const struct rte_eth_dev_info *info)
{
    const struct rte_devargs *da = info->device != NULL ? rte_dev_devargs(info->device) : NULL;
    if (da == NULL || da->args == NULL)
        return false;
    const char *p = da->args;
    while ((p = strstr(p, "role=")) != NULL) {
        if ((p == da->args || p[-1] == ',') && strncmp(p + 5, "client", 6) == 0 &&
            (p[11] == '\0' || p[11] == ','))
            return true;
        p += 5;
    }
    return false;
}

bool memif_port_is(uint16_t port)
{
    struct rte_eth_dev_info info;
    return rte_eth_dev_info_get(port, &info) == 0 && info.driver_name != NULL &&
           strcmp(info.driver_name, "net_memif") == 0;
}

static uint64_t now_ms(void)
{
    return rte_get_tsc_cycles() / (rte_get_tsc_hz() / 1000);
}

static bool link_up(const struct dpdk_nic *n)
{
    struct rte_eth_link link;
    return __atomic_load_n(&n->started, __ATOMIC_ACQUIRE) && rte_eth_link_get_nowait(n->port, &link) == 0 &&
           link.link_status == RTE_ETH_LINK_UP;
}

/* Stop (if started) and start the port again, bursts paused meanwhile.
 * Interrupt thread (alarm) only. */
static void reconnect(struct dpdk_nic *n)
{
    quiesce_pause(n->quiesce);
    if (__atomic_load_n(&n->started, __ATOMIC_ACQUIRE))
        rte_eth_dev_stop(n->port);
    int rc = rte_eth_dev_start(n->port);
    __atomic_store_n(&n->started, rc == 0, __ATOMIC_RELEASE);
    quiesce_resume(n->quiesce);
    __atomic_add_fetch(&n->link.reconnects, 1, __ATOMIC_RELAXED);
}

static void watch(void *arg)
{
    struct dpdk_nic *n = arg;
    if (__atomic_load_n(&n->link.closing, __ATOMIC_ACQUIRE))
        return;
    bool up = link_up(n);
    uint64_t now = now_ms();
    if (up != n->link.was_up) {
        n->link.was_up = up;
        __atomic_add_fetch(up ? &n->link.up_events : &n->link.down_events, 1, __ATOMIC_RELAXED);
        fprintf(stderr, "lstack: info: %s: link %s%s\n", n->name, up ? "up" : "down",
                up ? "" : (n->link.client ? " (memif server gone; reconnecting)" : " (memif client gone)"));
        if (!up)
            n->link.last_try_ms = now; /* give the driver's own disconnect time to finish */
    }
    if (!up && n->link.client && now - n->link.last_try_ms >= MEMIF_RETRY_MS) {
        n->link.last_try_ms = now;
        reconnect(n);
    }
    rte_eal_alarm_set(MEMIF_WATCH_US, watch, n);
}

int memif_port_open(struct dpdk_nic *n, char *err, size_t errlen)
{
    struct rte_eth_dev_info info;
    if (rte_eth_dev_info_get(n->port, &info) != 0) {
        snprintf(err, errlen, "port %u: no device info", n->port);
        return -1;
    }
    char why[256];
    n->quiesce = quiesce_guard_memif(why, sizeof(why));
    if (n->quiesce == NULL) {
        snprintf(err, errlen, "port %u (net_memif): cannot guard its bursts against the driver's disconnect: %s",
                 n->port, why);
        return -1;
    }
    n->memif = true;
    n->link.client = devargs_role_client(&info);
    n->link.last_try_ms = now_ms();
    return 0;
}

bool memif_port_start_failed(struct dpdk_nic *n, int rc)
{
    if (!n->link.client)
        return false;
    fprintf(stderr, "lstack: info: %s: memif server not reachable yet (%s); trying again every %d ms\n", n->name,
            rte_strerror(-rc), MEMIF_RETRY_MS);
    return true;
}

void memif_port_wait_link(struct dpdk_nic *n)
{
    if (!n->link.client || !n->started)
        return;
    /* The start connected the control socket; the handshake runs on the
     * interrupt thread and takes milliseconds. Without this wait the
     * stack's first frames (gratuitous ARP, the application's first SYN)
     * would be dropped and TCP would retry only after its initial RTO. */
    uint64_t end = now_ms() + MEMIF_LINK_WAIT_MS;
    while (!link_up(n) && now_ms() < end)
        rte_delay_us_sleep(1000);
}

int memif_port_watch(struct dpdk_nic *n, char *err, size_t errlen)
{
    int rc = rte_eal_alarm_set(MEMIF_WATCH_US, watch, n);
    if (rc != 0) {
        snprintf(err, errlen, "port %u: cannot start the link watch: %s", n->port, rte_strerror(-rc));
        return -1;
    }
    return 0;
}

void memif_port_close(struct dpdk_nic *n)
{
    if (!n->memif)
        return;
    __atomic_store_n(&n->link.closing, true, __ATOMIC_RELEASE);
    rte_eal_alarm_cancel(watch, n); /* waits for a running one */
}

/* A close handed to the interrupt thread. state (atomic): SHUT_PENDING
 * until one side moves it on; the closing thread frees it once DONE, the
 * alarm frees it when it finds it ABANDONED (the closing thread gave up,
 * and left n and its set allocated). */
enum { SHUT_PENDING, SHUT_DONE, SHUT_ABANDONED };
struct shut {
    struct dpdk_nic *n;
    void (*late)(struct dpdk_nic *n);
    unsigned state;
};

/* Abandoned closes whose alarm has not finished (atomic). */
static unsigned shut_abandoned;

static void stop_close(struct dpdk_nic *n)
{
    if (__atomic_load_n(&n->started, __ATOMIC_ACQUIRE))
        rte_eth_dev_stop(n->port);
    __atomic_store_n(&n->started, 0, __ATOMIC_RELEASE);
    rte_eth_dev_close(n->port);
}

/* Interrupt thread (alarm). */
static void shut_alarm(void *arg)
{
    struct shut *s = arg;
    stop_close(s->n);
    unsigned expect = SHUT_PENDING;
    if (!__atomic_compare_exchange_n(&s->state, &expect, SHUT_DONE, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
        fprintf(stderr, "lstack: info: %s: closed at last on EAL's interrupt thread\n", s->n->name);
        if (s->late != NULL)
            s->late(s->n); /* frees n */
        free(s); /* abandoned */
        __atomic_sub_fetch(&shut_abandoned, 1, __ATOMIC_RELEASE);
    }
}

int memif_port_shut(struct dpdk_nic *n, void (*late)(struct dpdk_nic *n))
{
    if (rte_thread_is_intr()) { /* already where the driver's control work runs */
        stop_close(n);
        return 0;
    }
    struct shut *s = malloc(sizeof(*s));
    int rc = s != NULL ? 0 : -ENOMEM;
    if (s != NULL) {
        *s = (struct shut){.n = n, .late = late, .state = SHUT_PENDING};
        rc = rte_eal_alarm_set(1, shut_alarm, s);
    }
    if (rc != 0) {
        /* No alarm: closing here is the old behaviour, racy but bounded. */
        fprintf(stderr, "lstack: warning: %s: cannot hand the close to EAL's interrupt thread (%s); closing here\n",
                n->name, rte_strerror(-rc));
        free(s);
        stop_close(n);
        return 0;
    }
    uint64_t end = now_ms() + MEMIF_SHUT_WAIT_MS;
    while (__atomic_load_n(&s->state, __ATOMIC_ACQUIRE) == SHUT_PENDING && now_ms() < end)
        rte_delay_us_sleep(1000);
    unsigned expect = SHUT_PENDING;
    /* counted first: the alarm may finish, and uncount it, as soon as the
     * state says ABANDONED */
    __atomic_add_fetch(&shut_abandoned, 1, __ATOMIC_ACQ_REL);
    if (__atomic_compare_exchange_n(&s->state, &expect, SHUT_ABANDONED, false, __ATOMIC_ACQ_REL,
                                    __ATOMIC_ACQUIRE)) {
        fprintf(stderr,
                "lstack: warning: %s: EAL's interrupt thread did not close the port within %d ms; "
                "leaving it open (its close stays queued there; EAL is not cleaned up before it has run)\n",
                n->name, MEMIF_SHUT_WAIT_MS);
        return -ETIMEDOUT;
    }
    __atomic_sub_fetch(&shut_abandoned, 1, __ATOMIC_RELEASE);
    free(s);
    return 0;
}

bool memif_port_shut_pending(void)
{
    return __atomic_load_n(&shut_abandoned, __ATOMIC_ACQUIRE) != 0;
}

void memif_port_release(struct dpdk_nic *n)
{
    if (n->quiesce != NULL)
        quiesce_unguard(n->quiesce);
    n->quiesce = NULL;
}

void memif_port_describe(const struct dpdk_nic *n, nic_describe_fn emit, void *ctx)
{
    if (!n->memif)
        return;
    struct nic_item it = {.group = "link"};
    it.name = "memif_role";
    it.text = n->link.client ? "client" : "server";
    emit(ctx, &it);
    it.text = NULL;
    it.name = "up_events";
    it.num = __atomic_load_n(&n->link.up_events, __ATOMIC_RELAXED);
    emit(ctx, &it);
    it.name = "down_events";
    it.num = __atomic_load_n(&n->link.down_events, __ATOMIC_RELAXED);
    emit(ctx, &it);
    it.name = "reconnects";
    it.num = __atomic_load_n(&n->link.reconnects, __ATOMIC_RELAXED);
    emit(ctx, &it);
    it.name = "tx_dropped_link_down";
    it.num = n->link.tx_dropped;
    emit(ctx, &it);
}
