/*
 * tsc_clock.h - CLOCK_MONOTONIC, estimated from the CPU's time-stamp counter,
 * for the event layer's wait loop (event/wait.c), which reads the time once
 * per poll round. The same scheme as lwIP's sys_now (port/sys_now.c, which
 * also checks each measurement against a held-up thread and shares its rate
 * with the stack's round accounting; it stays in the library: lwIP's copy
 * and this one are separate clocks).
 *
 * On x86 the TSC is read (no system call, no vDSO page) and scaled by a
 * ratio measured against CLOCK_MONOTONIC, which is read again only about
 * once a second to re-anchor (so a drift of the estimate never accumulates);
 * a measurement reads the clock on both sides of the TSC and is put off when
 * the thread was held up in between (more than 50 us).
 * Elsewhere, and until the first ratio is measured (10 ms after the first
 * read), CLOCK_MONOTONIC is read directly. The values a clock returns never
 * go backwards; an estimate may be ahead of CLOCK_MONOTONIC by the drift
 * of one second (a caller that must not be early confirms with
 * tsc_clock_mono_ns).
 *
 * Design: docs/design.md#clocks-come-from-the-tsc
 *
 * A struct tsc_clock belongs to one thread (no lock); zero-initialised is a
 * valid clock. Pure: no lwIP, no DPDK.
 */
#ifndef LSTACK_TSC_CLOCK_H
#define LSTACK_TSC_CLOCK_H

#include <stdint.h>

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

#endif
