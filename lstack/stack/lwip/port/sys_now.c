/*
 * sys_now.c - lwIP's clock (sys_now, milliseconds) for lstack's build.
 *
 * lwIP asks for the time on every sys_check_timeouts, i.e. every poll
 * round. On x86 the answer comes from the TSC: the time-stamp counter is
 * read (no system call, no vDSO page) and scaled by a ratio measured
 * against CLOCK_MONOTONIC, which is read again only about once a second to
 * re-anchor (so a drift of the estimate never accumulates). Each
 * measurement pairs a TSC read with two clock reads around it, and is put
 * off when the thread was held up between them (pair_now). Elsewhere, and
 * until the first ratio is measured, CLOCK_MONOTONIC is read directly. The
 * result never goes backwards.
 *
 * The ratio is also what the stack converts its poll-round timings with
 * (lstack_lwip_tsc_hz, lwip_port.h; stack/round_acct.h): one TSC rate per
 * copy, measured once, no second calibration.
 *
 * Design: docs/design.md#lwips-clock-is-the-tsc
 * Which thread: the stack's owner only.
 */
#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "lwip/opt.h"
#include "lwip/sys.h"

#include "port/lwip_port.h"

#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#define HAVE_TSC 1
#else
#define HAVE_TSC 0
#endif

static uint64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

#if HAVE_TSC
static struct {
    uint64_t a_tsc, a_ns;     /* anchor: a TSC reading and the clock's at that moment */
    uint64_t q;               /* ns per tick, 32.32 fixed point (0: not measured yet) */
    uint64_t span;            /* ticks after the anchor the estimate is used for */
    u32_t last;               /* last value returned */
} C;

#define MEASURE_MIN_NS 10000000u /* a ratio from at least 10 ms */
#define REANCHOR_NS 1000000000u

static u32_t monotonic(uint64_t ns)
{
    u32_t ms = (u32_t)(ns / 1000000u);
    if ((int32_t)(ms - C.last) < 0)
        ms = C.last; /* a re-anchor found the estimate ahead: hold */
    C.last = ms;
    return ms;
}

#define PAIR_MAX_NS 50000u     /* the clock reads around a TSC read at most this far apart */

/* A TSC reading and the clock's at the same moment (*ns: halfway between
 * two clock reads around the TSC's). false if the thread was held up in
 * between (preempted, an interrupt): the pair is then too loose to measure
 * a ratio with (a 4 ms preemption would skew a 10 ms measurement by 40%). */
static bool pair_now(uint64_t *tsc, uint64_t *ns)
{
    uint64_t a = mono_ns();
    *tsc = __rdtsc();
    uint64_t b = mono_ns();
    *ns = a + (b - a) / 2;
    return b - a <= PAIR_MAX_NS;
}

u32_t sys_now(void)
{
    uint64_t t = __rdtsc();
    uint64_t d = t - C.a_tsc;
    if (C.q != 0 && d < C.span)
        return monotonic(C.a_ns + (uint64_t)(((unsigned __int128)d * C.q) >> 32));
    uint64_t ns;
    if (!pair_now(&t, &ns))
        return monotonic(ns); /* the clock's answer; measure on a later call */
    d = t - C.a_tsc;
    if (C.a_tsc == 0) {
        C.a_tsc = t;
        C.a_ns = ns;
    } else if (ns - C.a_ns >= MEASURE_MIN_NS && d > 0) {
        uint64_t q = (uint64_t)((((unsigned __int128)(ns - C.a_ns)) << 32) / d);
        __atomic_store_n(&C.q, q, __ATOMIC_RELAXED); /* lstack_lwip_tsc_hz may read it elsewhere */
        C.span = q != 0 ? (uint64_t)(((unsigned __int128)REANCHOR_NS << 32) / q) : 0;
        C.a_tsc = t;
        C.a_ns = ns;
    }
    return monotonic(ns);
}

uint64_t lstack_lwip_tsc_hz(void)
{
    /* A plain read of a word the owner thread writes about once a second:
     * another thread (the control server, under the stack lock) may read it. */
    uint64_t q = __atomic_load_n(&C.q, __ATOMIC_RELAXED);
    return q != 0 ? (uint64_t)(((unsigned __int128)1000000000u << 32) / q) : 0;
}
#else
u32_t sys_now(void)
{
    return (u32_t)(mono_ns() / 1000000u);
}

uint64_t lstack_lwip_tsc_hz(void)
{
    return 0;
}
#endif
