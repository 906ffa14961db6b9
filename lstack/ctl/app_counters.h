/*
 * app_counters.h - what the application asked of lstack, counted for
 * `stackctl show stats`: process-wide, not per stack (a call is counted
 * before the stack it lands on matters).
 *
 * Each counter is a plain increment at the one place its event happens
 * (named below): no atomics, no lock, one add per call. Two threads may
 * lose an increment now and then, and the control thread reads them
 * without a lock; both are fine for statistics.
 *
 * Design: docs/design.md#application-counters-are-per-process-and-not-atomic
 */
#ifndef LSTACK_APP_COUNTERS_H
#define LSTACK_APP_COUNTERS_H

#include <stdint.h>

struct app_counters {
    uint64_t reads;        /* read-family calls on stack sockets (posix/sock_io.c) */
    uint64_t writes;       /* write-family calls on stack sockets (posix/sock_io.c) */
    uint64_t epoll_waits;  /* epoll_wait/epoll_pwait on sets with stack sockets (event/epoll_wait.c) */
    uint64_t wakeups;      /* ... of those, calls that returned events */
    uint64_t kernel_calls; /* read/write-family calls passed to the kernel (posix/io_calls.c) */
};

extern struct app_counters app_cnt;

#endif
