/*
 * rtw_idle.h - what an idle run-to-wakeup stack thread does with its CPU
 * while no application thread sleeps in lstack (mode_rtw.c): yield it, or
 * sleep a short timed step.
 *
 * One struct per stack thread (no lock); zero-initialised is valid and
 * starts in yield mode. Times in ns from one clock. Pure: no lwIP, no DPDK,
 * no system call.
 * Design: docs/design.md#run-to-wakeups-idle-stack-thread-yields-then-takes-timed-steps
 */
#ifndef LSTACK_RTW_IDLE_H
#define LSTACK_RTW_IDLE_H

#include <stdbool.h>
#include <stdint.h>

/*
 * The stack thread never blocks on the NIC (the vdevs have no rx interrupt).
 * While an application thread sleeps in epoll_wait/poll/select it spins, so
 * that a frame wakes that thread at once. While none sleeps, an application
 * thread is awake and may want this CPU (num_cpus shared with the
 * application: on a 2-CPU bed the only choice), and the stack thread gives
 * the CPU away:
 *  - **yield** (sched_yield) while yields come back at once: nobody else
 *    wanted the CPU, and the thread polls again with no delay;
 *  - **sleep** (a timed step of `step` ns) once a yield came back late (at
 *    least `slow` ns: another thread ran a slice). A yield to a thread that
 *    spins in user space (Redis's I/O threads wait for work, and its main
 *    thread for them, in busy loops) returns only when the scheduler's tick
 *    preempts it: 4 ms on this kernel (HZ=250), the stack thread absent
 *    all that time. A timed step bounds the absence to the step: its
 *    timer's interrupt ends the spinner's turn, and the scheduler picks
 *    again at every step, not at every tick (Redis io-threads on one CPU:
 *    the kernel server's event loop takes four ticks, 16 ms, per round of
 *    its 50 clients; docs/performance.md).
 *  - Back to yields after a probe: in sleep mode, one yield is tried again
 *    after `backoff` ns (1 ms, doubled after each late yield up to 256
 *    ms), so a CPU that became free is polled without steps again, and a
 *    contended one pays one slice per probe. The backoff goes back to its
 *    minimum only after a run of prompt yields (64 in a row): a prompt
 *    probe alone proves little (the spinner may have just blocked), and
 *    resetting on it made the thread alternate a 1 ms sleep, a prompt
 *    probe and a 4 ms late yield (scenario 7 at 2,100 req/s, against
 *    20,000 with steps only).
 */

enum {
    RTW_IDLE_STEP_NS = 50000,        /* one timed step */
    RTW_IDLE_SLOW_NS = 100000,       /* a yield this late: another thread ran */
    RTW_IDLE_BACKOFF_MIN_NS = 1000000,
    RTW_IDLE_BACKOFF_MAX_NS = 256000000,
    RTW_IDLE_PROMPT_RESET = 64,      /* prompt yields in a row that reset the backoff */
};

struct rtw_idle {
    bool sleeping;      /* sleep mode: timed steps instead of yields */
    uint64_t probe_at;  /* in sleep mode: when to try a yield again */
    uint64_t backoff;   /* the current probe interval (0: none yet) */
    unsigned prompt;    /* prompt yields in a row since the last late one */
};

/* At now, idle: true to sleep a step, false to yield (and then call
 * rtw_idle_yielded with the yield's duration). */
static inline bool rtw_idle_sleep(struct rtw_idle *st, uint64_t now)
{
    if (st->sleeping && now >= st->probe_at)
        st->sleeping = false; /* probe: one yield */
    return st->sleeping;
}

/* A yield that started at now - took and returned at now took `took` ns. */
static inline void rtw_idle_yielded(struct rtw_idle *st, uint64_t now, uint64_t took)
{
    if (took < RTW_IDLE_SLOW_NS) {
        if (++st->prompt >= RTW_IDLE_PROMPT_RESET)
            st->backoff = 0;
        return;
    }
    st->prompt = 0;
    if (st->backoff == 0)
        st->backoff = RTW_IDLE_BACKOFF_MIN_NS;
    else if (st->backoff < RTW_IDLE_BACKOFF_MAX_NS)
        st->backoff *= 2;
    st->sleeping = true;
    st->probe_at = now + st->backoff;
}

#endif
