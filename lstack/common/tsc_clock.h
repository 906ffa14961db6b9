/*
 * tsc_clock.h - CLOCK_MONOTONIC estimated from the CPU's time-stamp counter:
 * lstack's one TSC clock. The event layer's wait loop (event/wait.c) and
 * run-to-wakeup's stack thread read it once per poll round; each lwIP copy
 * has one of its own for sys_now and the poll-round timings
 * (stack/lwip/port/sys_now.c: this file is compiled into that library too;
 * it includes neither lwIP nor DPDK).
 *
 * A struct tsc_clock belongs to one thread (no lock), except
 * tsc_clock_hz, which any thread may call; zero-initialised is a valid
 * clock. Values never go backwards.
 * Design: docs/design.md#clocks-come-from-the-tsc
 */
#ifndef LSTACK_TSC_CLOCK_H
#define LSTACK_TSC_CLOCK_H

#include <stdint.h>

/*
 * On x86 the TSC is read (no system call, no vDSO page) and scaled by a
 * ratio measured against CLOCK_MONOTONIC, which is read again only about
 * once a second to re-anchor (so a drift of the estimate never accumulates);
 * a measurement reads the clock on both sides of the TSC and is put off when
 * the thread was held up in between (more than 50 us).
 * Elsewhere, and until the first ratio is measured (10 ms after the first
 * read), CLOCK_MONOTONIC is read directly. An estimate may be ahead of
 * CLOCK_MONOTONIC by the drift of one second (a caller that must not be
 * early confirms with tsc_clock_mono_ns).
 */

struct tsc_clock {
    uint64_t a_tsc, a_ns; /* anchor: a TSC reading and the clock's at that moment */
    uint64_t q;           /* ns per tick, 32.32 fixed point (0: not measured yet) */
    uint64_t span;        /* ticks after the anchor the estimate is used for */
    uint64_t last;        /* last value returned */
};

/* Nanoseconds on CLOCK_MONOTONIC's scale (estimated), never less than the
 * previous call's on the same clock. */
uint64_t tsc_clock_ns(struct tsc_clock *c);

/* CLOCK_MONOTONIC itself, in nanoseconds. */
uint64_t tsc_clock_mono_ns(void);

/* TSC ticks per second as clock c measured them, 0 while not measured yet
 * (or without a TSC). Any thread: the rate is read with an atomic load. */
uint64_t tsc_clock_hz(const struct tsc_clock *c);

#endif
