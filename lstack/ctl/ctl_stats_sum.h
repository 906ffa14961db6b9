/*
 * ctl_stats_sum.h - the "total" column of `stackctl show stats`: several
 * stacks' statistics summed into one.
 */
#ifndef LSTACK_CTL_STATS_SUM_H
#define LSTACK_CTL_STATS_SUM_H

#include "stack/stack.h"

/* total += x, field by field. Counters and per-stack gauges add; what every
 * stack reads from the same place is taken once, not summed:
 *  - tsc_hz (a rate, the same clock for all stacks): the largest reading;
 *  - port_imissed, port_rx_nombuf: the port's own counters, which every
 *    queue of the port reports whole (nic/nic_queues.h): the largest
 *    reading, so that two stacks on one port do not count each drop twice.
 * Pure; any thread. total starts zeroed. */
void ctl_stats_sum(struct stack_stats *total, const struct stack_stats *x);

#endif
