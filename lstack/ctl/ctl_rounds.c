/*
 * ctl_rounds.c - the poll-round counters' meaning (see ctl_rounds.h): the
 * difference of two readings and the rates and shares stackctl and
 * lstackd print (busy %, frames per busy round, cycles per frame). Pure
 * arithmetic; NAN where the counters cannot tell.
 */
#include <math.h>

#include "ctl/ctl_rounds.h"

static uint64_t sub(uint64_t a, uint64_t b)
{
    return b >= a ? b - a : 0;
}

void ctl_rounds_diff(const struct ctl_rounds *a, const struct ctl_rounds *b, struct ctl_rounds *out)
{
    out->rounds = sub(a->rounds, b->rounds);
    out->busy = sub(a->busy, b->busy);
    out->rx_frames = sub(a->rx_frames, b->rx_frames);
    out->tx_frames = sub(a->tx_frames, b->tx_frames);
    out->busy_cycles = sub(a->busy_cycles, b->busy_cycles);
    out->idle_cycles = sub(a->idle_cycles, b->idle_cycles);
    out->tsc_hz = b->tsc_hz;
    out->lock_waits = sub(a->lock_waits, b->lock_waits);
    out->lock_wait_cycles = sub(a->lock_wait_cycles, b->lock_wait_cycles);
}

void ctl_rounds_derive(const struct ctl_rounds *c, double elapsed_s, unsigned stacks, struct ctl_rounds_view *r)
{
    double cyc = (double)c->busy_cycles + (double)c->idle_cycles;
    double frames = (double)c->rx_frames + (double)c->tx_frames;
    double hz = (double)c->tsc_hz;
    r->busy_pct = cyc > 0 ? 100.0 * (double)c->busy_cycles / cyc : NAN;
    r->frames_per_busy_round = c->busy > 0 ? frames / (double)c->busy : NAN;
    r->cycles_per_frame = frames > 0 ? (double)c->busy_cycles / frames : NAN;
    r->busy_us = hz > 0 ? (double)c->busy_cycles * 1e6 / hz : NAN;
    r->idle_us = hz > 0 ? (double)c->idle_cycles * 1e6 / hz : NAN;
    r->lock_wait_us = hz > 0 ? (double)c->lock_wait_cycles * 1e6 / hz : NAN;
    r->lock_wait_pct = cyc > 0 ? 100.0 * (double)c->lock_wait_cycles / cyc : NAN;
    if (elapsed_s <= 0 && hz > 0 && cyc > 0)
        elapsed_s = cyc / hz / (stacks > 0 ? stacks : 1);
    r->rounds_per_s = elapsed_s > 0 ? (double)c->rounds / elapsed_s : NAN;
}
