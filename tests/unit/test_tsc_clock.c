/*
 * test_tsc_clock.c - the TSC-estimated CLOCK_MONOTONIC (common/tsc_clock.c)
 * that lwIP's sys_now and the event layer's wait loop read each poll round:
 * it never goes backwards, it follows CLOCK_MONOTONIC once its ratio is
 * measured (read by read, within 1 ms, over 300 ms of sleeps and spins), and
 * a zeroed clock starts at once.
 */
#include <stdint.h>
#include <time.h>

#include "common/tsc_clock.h"
#include "tap.h"

static void sleep_us(long us)
{
    struct timespec ts = {.tv_sec = us / 1000000, .tv_nsec = (us % 1000000) * 1000};
    nanosleep(&ts, NULL);
}

int main(void)
{
    struct tsc_clock c = {0};
    uint64_t m0 = tsc_clock_mono_ns();
    uint64_t first = tsc_clock_ns(&c);
    uint64_t m1 = tsc_clock_mono_ns();
    checkf(first >= m0 && first <= m1, "a new clock reads CLOCK_MONOTONIC (%llu within [%llu, %llu])",
           (unsigned long long)first, (unsigned long long)m0, (unsigned long long)m1);

    uint64_t prev = first, worst = 0;
    int backwards = 0, reads = 0;
    uint64_t end = m1 + 300000000u;
    while (tsc_clock_mono_ns() < end) {
        uint64_t before = tsc_clock_mono_ns();
        uint64_t v = tsc_clock_ns(&c);
        uint64_t after = tsc_clock_mono_ns();
        if (v < prev)
            backwards++;
        prev = v;
        /* Past the first measurement (10 ms), how far outside [before, after]. */
        if (before > m1 + 20000000u) {
            uint64_t off = v < before ? before - v : v > after ? v - after : 0;
            if (off > worst)
                worst = off;
        }
        reads++;
        if (reads % 64 == 0)
            sleep_us(reads % 128 == 0 ? 2000 : 50);
    }
    checkf(backwards == 0, "it never goes backwards (%d of %d reads did)", backwards, reads);
    checkf(worst < 1000000u, "it stays within 1 ms of CLOCK_MONOTONIC (worst %llu ns over %d reads)",
           (unsigned long long)worst, reads);
    return tap_done();
}
