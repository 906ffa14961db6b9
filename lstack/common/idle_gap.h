/*
 * idle_gap.h - how long a low-power poller stays awake after its last frame
 * before it sleeps, from how soon frames followed each other lately.
 *
 * Used by lstack's run-to-completion wait loop (event/wait.c, in ns) and by
 * ltran's idle rule (ltran/ltran_wake.c, in TSC cycles): the unit is the
 * caller's, one clock per struct.
 *
 * One struct belongs to one thread (no lock); zero-initialised is valid.
 * Pure: no lwIP, no DPDK.
 * Design: docs/design.md#run-to-completions-idle-decision-measures-the-gap-between-frames
 */
#ifndef LSTACK_IDLE_GAP_H
#define LSTACK_IDLE_GAP_H

#include <stdint.h>

/*
 * Why: a `redis-benchmark -c 1` client sends its next request 0.1-0.3 ms
 * after a reply on a 2-vCPU VM, and a server or an ltran that slept in
 * between would pay a wake-up of its own, 0.1-0.3 ms there, per request.
 *
 * The estimate is a decaying maximum of the gaps between frames that are
 * shorter than `max`: a gap at least as long as the estimate replaces it, a
 * shorter one pulls it down by an eighth of the difference, a gap longer
 * than `max` (the poller was idle: a sleep cost nothing the next frame
 * could have saved) clears it. The window is twice the estimate, at least
 * `base` (the fixed idle time, 50 us) and at most `max` (1 ms, one sleep);
 * it is `base` when the last frame is older than `max` (idle: a wait that
 * starts then does not spin for the old traffic's sake).
 * So a ping-pong whose requests come within the window never sleeps
 * between them (its CPU is spent while the traffic lasts, as without
 * low_power_mode), PINGs a few ms apart keep the 50 us rule, and an idle
 * process spins at most one window after its last frame.
 */

struct idle_gap {
    uint64_t last; /* when the last frame came (0: none yet) */
    uint64_t est;  /* recent short gaps' decaying maximum (0: none) */
};

/* A frame (or a round with frames) came at now; max: the longest gap that
 * counts (a longer one clears the estimate). */
static inline void idle_gap_frame(struct idle_gap *g, uint64_t now, uint64_t max)
{
    if (g->last != 0 && now > g->last) {
        uint64_t gap = now - g->last;
        if (gap > max)
            g->est = 0;
        else if (gap >= g->est)
            g->est = gap;
        else
            g->est -= (g->est - gap) / 8;
    }
    g->last = now;
}

/* How long to stay awake without a frame before sleeping, at now: within
 * [base, max], base when the estimate is empty or the last frame is older
 * than max. */
static inline uint64_t idle_gap_window(const struct idle_gap *g, uint64_t now, uint64_t base, uint64_t max)
{
    if (g->est == 0 || g->last == 0 || now - g->last > max)
        return base;
    uint64_t w = 2 * g->est;
    return w < base ? base : w > max ? max : w;
}

#endif
