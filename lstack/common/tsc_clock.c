/*
 * tsc_clock.c - the TSC clock (see tsc_clock.h): a ratio of TSC ticks to
 * CLOCK_MONOTONIC nanoseconds, measured from reads paired around a TSC
 * read, re-anchored about once a second. Built into liblstack.so and into
 * each lwIP copy (liblstack_lwip.so); pure, no lwIP, no DPDK.
 * Design: docs/design.md#clocks-come-from-the-tsc
 */
#include <stdbool.h>
#include <time.h>

#include "common/tsc_clock.h"

#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#define HAVE_TSC 1
#else
#define HAVE_TSC 0
#endif

#define MEASURE_MIN_NS 10000000u /* a ratio from at least 10 ms */
#define REANCHOR_NS 1000000000u

uint64_t tsc_clock_mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static uint64_t hold(struct tsc_clock *c, uint64_t ns)
{
    if (ns < c->last)
        ns = c->last; /* a re-anchor found the estimate ahead: hold */
    c->last = ns;
    return ns;
}

#if HAVE_TSC
#define PAIR_MAX_NS 50000u /* the clock reads around a TSC read at most this far apart */

/* A TSC reading (*tsc) and the clock's at the same moment (*ns, halfway
 * between two clock reads around it). false if the thread was held up in
 * between (preempted, an interrupt): such a pair would skew the ratio (a
 * 4 ms preemption inside the first 10 ms measurement: 40%), so it is used
 * for its time only, and the measurement waits for a later call. */
static bool pair_now(uint64_t *tsc, uint64_t *ns)
{
    uint64_t a = tsc_clock_mono_ns();
    *tsc = __rdtsc();
    uint64_t b = tsc_clock_mono_ns();
    *ns = a + (b - a) / 2;
    return b - a <= PAIR_MAX_NS;
}

uint64_t tsc_clock_ns(struct tsc_clock *c)
{
    uint64_t t = __rdtsc();
    uint64_t d = t - c->a_tsc;
    if (c->q != 0 && d < c->span)
        return hold(c, c->a_ns + (uint64_t)(((unsigned __int128)d * c->q) >> 32));
    uint64_t ns;
    if (!pair_now(&t, &ns))
        return hold(c, ns);
    d = t - c->a_tsc;
    if (c->a_tsc == 0) {
        c->a_tsc = t;
        c->a_ns = ns;
    } else if (ns - c->a_ns >= MEASURE_MIN_NS && d > 0) {
        uint64_t q = (uint64_t)((((unsigned __int128)(ns - c->a_ns)) << 32) / d);
        __atomic_store_n(&c->q, q, __ATOMIC_RELAXED); /* tsc_clock_hz may read it elsewhere */
        c->span = q != 0 ? (uint64_t)(((unsigned __int128)REANCHOR_NS << 32) / q) : 0;
        c->a_tsc = t;
        c->a_ns = ns;
    }
    return hold(c, ns);
}
#else
uint64_t tsc_clock_ns(struct tsc_clock *c)
{
    return hold(c, tsc_clock_mono_ns());
}
#endif

uint64_t tsc_clock_hz(const struct tsc_clock *c)
{
    /* The owner thread writes q about once a second; another thread (the
     * control server, under the stack lock) may read it. */
    uint64_t q = __atomic_load_n(&c->q, __ATOMIC_RELAXED);
    return q != 0 ? (uint64_t)(((unsigned __int128)1000000000u << 32) / q) : 0;
}
