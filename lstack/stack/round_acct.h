/*
 * round_acct.h - timing a stack's poll rounds: busy and idle time, frames
 * per round (`stackctl show stats`, lstackd's SIGUSR1, scripts/bench.sh),
 * from one TSC read per round.
 *
 * Which thread: the stack's poller (like stack_poll); pure, no lwIP type.
 * Design: docs/design.md#poll-rounds-are-timed-with-one-tsc-read
 */
#ifndef LSTACK_ROUND_ACCT_H
#define LSTACK_ROUND_ACCT_H

#include <stdbool.h>
#include <stdint.h>

#include "stack/stack.h"

#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#define ROUND_CLOCK_TSC 1
#else
#include <time.h>

/*
 * One clock read per round, at its start: the time from the start of a
 * round to the start of the next round of the same stack is charged to the
 * first one, as busy time if that round moved a frame (received one, or
 * sent one lwIP had queued since the previous round), else as idle time.
 * So busy time is the round's own work (rx burst, frame filter, lwIP input
 * and timers, tx flush) plus whatever the polling thread did before it
 * polled again. In run-to-completion mode that is the application: the
 * round that received a request is charged with the return from
 * epoll_wait, the command, the socket calls that answer it (lwIP's
 * tcp_write / tcp_output run inside them) and the way back into
 * epoll_wait; the next round, which sends the reply, is busy too. Idle
 * time is empty rounds and what follows them: spinning, the wait loop's
 * kernel checks, low-power sleeps. A round that only ran lwIP's timers
 * (a few times a second) counts as idle. The round in progress is not
 * counted yet. It is wall-clock time: a thread the kernel preempts during
 * a busy span is charged for the wait.
 *
 * The clock is the TSC (rdtsc: no system call, no vDSO page), converted to
 * seconds with the rate the lwIP copy's clock measured
 * (lstack_lwip_tsc_hz, port/sys_now.c); without a TSC (not x86) it is
 * CLOCK_MONOTONIC in nanoseconds.
 */
#define ROUND_CLOCK_TSC 0
#endif

/* Ticks of the round clock now. */
static inline uint64_t round_clock_now(void)
{
#if ROUND_CLOCK_TSC
    return __rdtsc();
#else
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
#endif
}

/* The round in progress. Zeroed: no round yet. */
struct round_acct {
    uint64_t start;     /* its first tick (0: none yet) */
    bool busy;          /* it moved a frame */
};

/* A round starts at tick now: charge the previous one up to now. */
static inline void round_acct_begin(struct round_acct *a, struct stack_rounds *r, uint64_t now)
{
    if (a->start != 0 && now > a->start) { /* a TSC behind the last one (another CPU's): not charged */
        uint64_t d = now - a->start;
        if (a->busy)
            r->busy_cycles += d;
        else
            r->idle_cycles += d;
    }
    a->start = now;
    a->busy = false;
}

/* The round received rx frames and sent tx; counts it. */
static inline void round_acct_end(struct round_acct *a, struct stack_rounds *r, unsigned rx, unsigned tx)
{
    a->busy = rx + tx != 0;
    r->busy += a->busy;
    r->rx_frames += rx;
    r->tx_frames += tx;
}

#endif
