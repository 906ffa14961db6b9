/*
 * test_rounds_overlap.c - two stacks of one process run their poll rounds
 * at the same time: the runtime's contexts (runtime/stacks.h) in
 * run-to-wakeup, one stack thread per stack pinned to CPUs 0 and 1, each
 * stack on a memory port wrapped by a probe whose tx flush (inside the
 * round, under the stack's own lock) marks its stack as in a round for
 * 200 us. The test passes when a round of one stack saw the other inside
 * its round too (with one lock for both, never); it also checks that each
 * probe ran under its own context's lock. Needs 2 CPUs (skipped with
 * fewer); gives the rounds up to 5 s to meet on a loaded machine. TAP.
 */
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "conf/conf.h"
#include "nic/handover.h"
#include "mem_nic.h"
#include "nic/nic.h"
#include "runtime/runtime_priv.h"
#include "stack/stack.h"
#include "pair_conf.h"
#include "tap.h"

/* ---- the probe: a memory port whose tx flush lingers in the round ---- */

struct probe {
    struct nic base;
    struct nic *under;
    int index;
    unsigned long rounds; /* tx flushes (atomic) */
};

static struct probe probes[2];
static int in_round;           /* stacks inside a probe's flush now (atomic) */
static unsigned long overlaps; /* flushes that saw the other stack inside its own (atomic) */
static unsigned long unlocked; /* flushes that ran without their context's lock (atomic) */
static int started;            /* the stack threads run: flushes are theirs (not stack_open's) */

static struct nic *under(struct nic *n)
{
    return ((struct probe *)n)->under;
}

static const struct nic *under_c(const struct nic *n)
{
    return ((const struct probe *)n)->under;
}

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static unsigned probe_tx_flush(struct nic *n)
{
    struct probe *p = (struct probe *)n;
    if (!__atomic_load_n(&started, __ATOMIC_ACQUIRE))
        return under(n)->ops->tx_flush(under(n)); /* stack_open's gratuitous ARP */
    if (__atomic_load_n(&rt.stacks[p->index].mu.state, __ATOMIC_RELAXED) == 0)
        __atomic_add_fetch(&unlocked, 1, __ATOMIC_RELAXED);
    __atomic_add_fetch(&p->rounds, 1, __ATOMIC_RELAXED);
    bool seen = __atomic_add_fetch(&in_round, 1, __ATOMIC_ACQ_REL) > 1;
    for (uint64_t end = now_ns() + 200000; !seen && now_ns() < end;)
        seen = __atomic_load_n(&in_round, __ATOMIC_ACQUIRE) > 1;
    if (seen)
        __atomic_add_fetch(&overlaps, 1, __ATOMIC_RELAXED);
    __atomic_sub_fetch(&in_round, 1, __ATOMIC_ACQ_REL);
    return under(n)->ops->tx_flush(under(n));
}

static unsigned probe_rx_burst(struct nic *n, struct nic_pkt *pkts, unsigned max)
{
    return under(n)->ops->rx_burst(under(n), pkts, max);
}

static void probe_pkt_free(struct nic *n, void *h)
{
    under(n)->ops->pkt_free(under(n), h);
}

static uint8_t *probe_tx_frame(struct nic *n, uint16_t len)
{
    return under(n)->ops->tx_frame(under(n), len);
}

static void probe_get_stats(const struct nic *n, struct nic_stats *s)
{
    under_c(n)->ops->get_stats(under_c(n), s);
}

static void probe_mac(const struct nic *n, uint8_t mac[6])
{
    under_c(n)->ops->mac(under_c(n), mac);
}

static const char *probe_name(const struct nic *n)
{
    return under_c(n)->ops->name(under_c(n));
}

static void probe_close(struct nic *n)
{
    under(n)->ops->close(under(n));
}

static void probe_caps(const struct nic *n, struct nic_caps *c)
{
    under_c(n)->ops->caps(under_c(n), c);
}

static const struct nic_ops probe_ops = {
    .rx_burst = probe_rx_burst,
    .pkt_free = probe_pkt_free,
    .tx_frame = probe_tx_frame,
    .tx_flush = probe_tx_flush,
    .get_stats = probe_get_stats,
    .mac = probe_mac,
    .name = probe_name,
    .close = probe_close,
    .caps = probe_caps,
};

int main(void)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (sysconf(_SC_NPROCESSORS_ONLN) < 2) {
        printf("1..0 # SKIP rounds in parallel need 2 CPUs\n");
        return 0;
    }
    struct lstack_conf c;
    char err[512];
    if (pair_conf(&c, "198.18.0.2", "198.18.0.1",
                  "stack_thread_mode = \"run-to-wakeup\";\nnum_cpus = \"0,1\";\ntcp_conn_count = 8;") != 0) {
        check(0, "config parses");
        return tap_done();
    }
    struct nic *q[2], *far[2];
    for (int i = 0; i < 2; i++) {
        if (nic_mem_pair(256, (uint16_t)stack_nic_priv_size(), 32, &probes[i].under, &far[i]) != 0) {
            check(0, "memory ports open");
            return tap_done();
        }
        probes[i].base.ops = &probe_ops;
        probes[i].index = i;
        q[i] = &probes[i].base;
    }
    int rc = rt_stacks_open(&c, q, 2, &nic_handover_api, NULL, err, sizeof(err));
    checkf(rc == 0, "two stacks open as the runtime's contexts (%s)", rc == 0 ? "ok" : err);
    if (rc != 0)
        return tap_done();
    __atomic_store_n(&started, 1, __ATOMIC_RELEASE);
    rc = rt_stacks_start(&c, err, sizeof(err));
    checkf(rc == 0, "their stack threads start on CPUs 0 and 1 (%s)", rc == 0 ? "ok" : err);
    uint64_t t0 = now_ns();
    while (rc == 0 && __atomic_load_n(&overlaps, __ATOMIC_RELAXED) < 10 && now_ns() - t0 < 5000000000u)
        usleep(10000);
    double secs = (double)(now_ns() - t0) / 1e9;
    unsigned long r0 = __atomic_load_n(&probes[0].rounds, __ATOMIC_RELAXED);
    unsigned long r1 = __atomic_load_n(&probes[1].rounds, __ATOMIC_RELAXED);
    unsigned long ov = __atomic_load_n(&overlaps, __ATOMIC_RELAXED);
    rt_stacks_stop();
    checkf(r0 > 0 && r1 > 0, "both stacks ran rounds (%lu and %lu in %.2f s)", r0, r1, secs);
    checkf(ov >= 10, "a round of one stack saw the other in its round: %lu times in %.2f s", ov, secs);
    checkf(__atomic_load_n(&unlocked, __ATOMIC_RELAXED) == 0,
           "every round ran under its own context's lock (%lu did not)", unlocked);
    rt_stacks_close();
    for (int i = 0; i < 2; i++)
        far[i]->ops->close(far[i]);
    lstack_conf_free(&c);
    return tap_done();
}
