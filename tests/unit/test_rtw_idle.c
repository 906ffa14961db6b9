/*
 * test_rtw_idle.c - the idle policy of a run-to-wakeup stack thread
 * (runtime/rtw_idle.h): it yields while yields come back promptly; one
 * late yield (another thread ran a slice) puts it in sleep mode; in sleep
 * mode it tries one yield again after the backoff, which doubles after each
 * late yield up to its maximum and is reset only by a run of prompt ones
 * (RTW_IDLE_PROMPT_RESET in a row). Times in ns.
 */
#include <stdint.h>

#include "runtime/rtw_idle.h"
#include "tap.h"

enum { US = 1000, MS = 1000000 };

static void test_prompt_yields_stay(void)
{
    struct rtw_idle st = {0};
    uint64_t t = 1 * MS;
    for (int i = 0; i < 1000; i++, t += 2 * US) {
        bool s = rtw_idle_sleep(&st, t);
        checkf(!s, "prompt yields: round %d says sleep", i);
        if (s)
            return;
        rtw_idle_yielded(&st, t + 1 * US, 1 * US);
    }
    checkf(!st.sleeping && st.backoff == 0, "after 1000 prompt yields: sleeping %d backoff %llu", st.sleeping,
           (unsigned long long)st.backoff);
}

static void test_late_yield_sleeps(void)
{
    struct rtw_idle st = {0};
    uint64_t t = 10 * MS;
    checkf(!rtw_idle_sleep(&st, t), "first idle round: yield");
    rtw_idle_yielded(&st, t + 4 * MS, 4 * MS); /* another thread ran a tick */
    t += 4 * MS;
    int sleeps = 0;
    while (rtw_idle_sleep(&st, t) && sleeps < 100000) {
        sleeps++;
        t += RTW_IDLE_STEP_NS;
    }
    /* 1 ms of 50 us steps before the probe */
    checkf(sleeps == RTW_IDLE_BACKOFF_MIN_NS / RTW_IDLE_STEP_NS, "steps before the first probe: %d, want %d", sleeps,
           RTW_IDLE_BACKOFF_MIN_NS / RTW_IDLE_STEP_NS);
    checkf(!st.sleeping, "the probe is a yield");
}

static void test_just_under_slow(void)
{
    struct rtw_idle st = {0};
    checkf(!rtw_idle_sleep(&st, 1000), "yield");
    rtw_idle_yielded(&st, 1000 + RTW_IDLE_SLOW_NS - 1, RTW_IDLE_SLOW_NS - 1);
    checkf(!rtw_idle_sleep(&st, 1000 + RTW_IDLE_SLOW_NS), "a yield 1 ns under the slow bound keeps yield mode");
    rtw_idle_yielded(&st, 2000 + RTW_IDLE_SLOW_NS, RTW_IDLE_SLOW_NS);
    checkf(rtw_idle_sleep(&st, 2001 + RTW_IDLE_SLOW_NS), "a yield at the slow bound: sleep mode");
}

static void test_backoff_doubles_and_resets(void)
{
    struct rtw_idle st = {0};
    uint64_t t = 1 * MS;
    uint64_t want = RTW_IDLE_BACKOFF_MIN_NS;
    for (int i = 0; i < 10; i++) {
        rtw_idle_yielded(&st, t, 4 * MS); /* late: the first, then every probe */
        checkf(st.backoff == want, "late yield %d: backoff %llu, want %llu", i, (unsigned long long)st.backoff,
               (unsigned long long)want);
        checkf(rtw_idle_sleep(&st, t + st.backoff - 1), "late yield %d: still sleeping 1 ns before the probe", i);
        t += st.backoff;
        checkf(!rtw_idle_sleep(&st, t), "late yield %d: the probe at the backoff", i);
        if (want < RTW_IDLE_BACKOFF_MAX_NS)
            want *= 2;
    }
    checkf(st.backoff == RTW_IDLE_BACKOFF_MAX_NS, "backoff capped at %llu: %llu",
           (unsigned long long)RTW_IDLE_BACKOFF_MAX_NS, (unsigned long long)st.backoff);
    rtw_idle_yielded(&st, t + 1 * US, 1 * US); /* a prompt probe */
    checkf(!st.sleeping && st.backoff == RTW_IDLE_BACKOFF_MAX_NS, "one prompt probe: yield mode, backoff kept, %llu",
           (unsigned long long)st.backoff);
    rtw_idle_yielded(&st, t + 5 * MS, 4 * MS);
    checkf(st.sleeping && st.backoff == RTW_IDLE_BACKOFF_MAX_NS,
           "prompt then late (a spinner that blocked a moment): backoff %llu, not back to the minimum",
           (unsigned long long)st.backoff);
    t += 5 * MS + st.backoff;
    checkf(!rtw_idle_sleep(&st, t), "the next probe");
    for (int i = 0; i < RTW_IDLE_PROMPT_RESET; i++, t += 2 * US) /* the CPU is free again */
        rtw_idle_yielded(&st, t, 1 * US);
    checkf(!st.sleeping && st.backoff == 0, "%d prompt yields in a row: backoff %llu", RTW_IDLE_PROMPT_RESET,
           (unsigned long long)st.backoff);
    rtw_idle_yielded(&st, t + 5 * MS, 4 * MS);
    checkf(st.backoff == RTW_IDLE_BACKOFF_MIN_NS, "late again: backoff from the minimum, %llu",
           (unsigned long long)st.backoff);
}

int main(void)
{
    test_prompt_yields_stay();
    test_late_yield_sleeps();
    test_just_under_slow();
    test_backoff_doubles_and_resets();
    return tap_done();
}
