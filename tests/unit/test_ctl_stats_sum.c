/*
 * test_ctl_stats_sum.c - the "total" column of `stackctl show stats`
 * (lstack/ctl/ctl_stats_sum.c): what adds up over stacks and what is read
 * once. One behaviour per test, no stack, no root. TAP output.
 */
#include <stdio.h>
#include <string.h>

#include "ctl/ctl_stats_sum.h"
#include "tap.h"

static void expect_u64(const char *name, uint64_t got, uint64_t want)
{
    check(got == want, name);
    if (got != want)
        printf("#   got %llu, expected %llu\n", (unsigned long long)got, (unsigned long long)want);
}

/* Two stacks on one port: each queue reports the port's imissed and
 * rx_nombuf whole (nic/nic_queues.h). */
static void port_counters_once(void)
{
    struct stack_stats total, a, b;
    memset(&total, 0, sizeof(total));
    memset(&a, 0, sizeof(a));
    memset(&b, 0, sizeof(b));
    a.nic.port_imissed = b.nic.port_imissed = 7;
    a.nic.port_rx_nombuf = 3;
    b.nic.port_rx_nombuf = 4; /* read a moment later: the port counted one more */
    ctl_stats_sum(&total, &a);
    ctl_stats_sum(&total, &b);
    expect_u64("two queues of one port: port_imissed is the port's, not twice", total.nic.port_imissed, 7);
    expect_u64("two queues of one port: port_rx_nombuf is the latest reading", total.nic.port_rx_nombuf, 4);
}

static void per_stack_counters_add(void)
{
    struct stack_stats total, a, b;
    memset(&total, 0, sizeof(total));
    memset(&a, 0, sizeof(a));
    memset(&b, 0, sizeof(b));
    a.nic.rx_packets = 10;
    b.nic.rx_packets = 5;
    a.sockets = 2;
    b.sockets = 3;
    a.nic.mbuf_total = b.nic.mbuf_total = 100; /* a pool per queue */
    a.rounds.tsc_hz = b.rounds.tsc_hz = 2000000000;
    a.nic.tx_bursts = 4;
    b.nic.tx_bursts = 6;
    ctl_stats_sum(&total, &a);
    ctl_stats_sum(&total, &b);
    expect_u64("rx_packets add over stacks", total.nic.rx_packets, 15);
    expect_u64("sockets add over stacks", total.sockets, 5);
    expect_u64("mbuf_total adds (one pool per queue)", total.nic.mbuf_total, 200);
    expect_u64("tx_bursts add over stacks", total.nic.tx_bursts, 10);
    expect_u64("tsc_hz is the clock's, not a sum", total.rounds.tsc_hz, 2000000000);
}

int main(void)
{
    port_counters_once();
    per_stack_counters_add();
    return tap_done();
}
