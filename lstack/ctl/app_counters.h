/*
 * app_counters.h - what the application asked of the kernel through lstack,
 * counted for `stackctl show stats`: read and write calls on kernel fds
 * (posix/io_calls.c), process-wide (no stack is involved). The calls on
 * stack sockets are counted per stack, on the socket's loop
 * (common/stack_loop.h).
 *
 * A relaxed load and store (no locked add, one cache line): two threads may
 * lose an increment now and then, and the control thread reads it without a
 * lock; both are fine for statistics.
 *
 * Design: docs/design.md#application-counters-are-per-stack-and-not-locked
 */
#ifndef LSTACK_APP_COUNTERS_H
#define LSTACK_APP_COUNTERS_H

#include <stdint.h>

extern uint64_t app_kernel_calls;

static inline void app_count_kernel_call(void)
{
    __atomic_store_n(&app_kernel_calls, __atomic_load_n(&app_kernel_calls, __ATOMIC_RELAXED) + 1,
                     __ATOMIC_RELAXED);
}

#endif
