/*
 * ctl_rounds.h - what the poll-round counters of a stack mean, as VPP's
 * `show runtime` puts it: busy share, frames per busy round, cycles per
 * frame, rounds per second, busy time; and the time threads waited for the
 * stack's lock (its context's counters). Pure arithmetic on the counters a
 * stats reply carries (docs/stackctl.md), shared by stackctl (one reading,
 * or the difference of two with -r) and lstackd's SIGUSR1 report, so both
 * say the same thing.
 *
 * What busy means and what its time includes: lstack/stack/round_acct.h.
 * Design: docs/design.md#round-ratios-are-computed-by-the-reader
 */
#ifndef LSTACK_CTL_ROUNDS_H
#define LSTACK_CTL_ROUNDS_H

#include <stdint.h>

/* The counters, named as in the stats records. */
struct ctl_rounds {
    uint64_t rounds;         /* "polls" */
    uint64_t busy;           /* "rounds_busy" */
    uint64_t rx_frames;      /* "rounds_rx_frames" */
    uint64_t tx_frames;      /* "rounds_tx_frames" */
    uint64_t busy_cycles;    /* "rounds_busy_cycles" */
    uint64_t idle_cycles;    /* "rounds_idle_cycles" */
    uint64_t tsc_hz;         /* "tsc_hz" (a rate, not a counter) */
    uint64_t lock_waits;     /* "lock_waits" */
    uint64_t lock_wait_cycles; /* "lock_wait_cycles" */
};

/* What they mean. NAN where the counters cannot tell (no round timed yet,
 * no busy round, no frame, TSC rate not measured yet). */
struct ctl_rounds_view {
    double busy_pct;               /* busy cycles in % of busy + idle */
    double frames_per_busy_round;  /* frames received and sent per busy round */
    double cycles_per_frame;       /* busy cycles per frame received or sent */
    double rounds_per_s;           /* rounds per second */
    double busy_us, idle_us;       /* busy and idle time, microseconds */
    double lock_wait_us;           /* time threads waited for the stack's lock, microseconds */
    double lock_wait_pct;          /* ... in % of the rounds' time (busy + idle) */
};

/* b - a, counter by counter (tsc_hz: b's); a counter that went back (a
 * process restarted) gives 0. */
void ctl_rounds_diff(const struct ctl_rounds *a, const struct ctl_rounds *b, struct ctl_rounds *out);

/* Derive r from the counters c of one span. elapsed_s: the span's length,
 * for rounds_per_s; 0 to take it from the counters' own time, (busy +
 * idle cycles) / tsc_hz / stacks (stacks: how many stacks c adds up, at
 * least 1). */
void ctl_rounds_derive(const struct ctl_rounds *c, double elapsed_s, unsigned stacks, struct ctl_rounds_view *r);

#endif
