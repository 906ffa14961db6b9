/*
 * test_idle_gap.c - the low-power idle window of common/idle_gap.h (lstack's
 * wait loop and ltran's idle rule): a steady ping-pong widens it to twice
 * its gap, bounded by max; a gap longer than max (the poller was idle)
 * brings it back to base; a last frame older than max gives base whatever
 * the estimate; shorter gaps pull the estimate down slowly, one long-ish
 * gap pushes it up at once; the first frame gives no estimate. Units are
 * the caller's: microseconds here.
 */
#include <stdint.h>

#include "common/idle_gap.h"
#include "tap.h"

enum { BASE = 50, MAX = 1000 };

/* Frames every gap us from t, n of them; returns the time of the last. */
static uint64_t frames(struct idle_gap *g, uint64_t t, uint64_t gap, int n)
{
    for (int i = 0; i < n; i++, t += gap)
        idle_gap_frame(g, t, MAX);
    return t - gap;
}

static void test_first_frame(void)
{
    struct idle_gap g = {0};
    checkf(idle_gap_window(&g, 1000, BASE, MAX) == BASE, "no frame yet: window %llu",
           (unsigned long long)idle_gap_window(&g, 1000, BASE, MAX));
    idle_gap_frame(&g, 1000, MAX);
    checkf(g.est == 0 && idle_gap_window(&g, 1010, BASE, MAX) == BASE, "one frame: est %llu window %llu",
           (unsigned long long)g.est, (unsigned long long)idle_gap_window(&g, 1010, BASE, MAX));
}

static void test_ping_pong(void)
{
    struct idle_gap g = {0};
    uint64_t t = frames(&g, 1000, 200, 20);
    uint64_t w = idle_gap_window(&g, t + 10, BASE, MAX);
    checkf(w == 400, "frames every 200 us: window %llu (twice the gap)", (unsigned long long)w);
    struct idle_gap h = {0};
    t = frames(&h, 1000, 700, 5);
    w = idle_gap_window(&h, t + 10, BASE, MAX);
    checkf(w == MAX, "frames every 700 us: window %llu (max)", (unsigned long long)w);
    struct idle_gap k = {0};
    t = frames(&k, 1000, 10, 5);
    w = idle_gap_window(&k, t + 1, BASE, MAX);
    checkf(w == BASE, "frames every 10 us: window %llu (base)", (unsigned long long)w);
}

static void test_idle_clears(void)
{
    struct idle_gap g = {0};
    uint64_t t = frames(&g, 1000, 200, 10);
    idle_gap_frame(&g, t + 5000, MAX);
    checkf(g.est == 0 && idle_gap_window(&g, t + 5010, BASE, MAX) == BASE,
           "a 5 ms gap: est %llu, window %llu (base)", (unsigned long long)g.est,
           (unsigned long long)idle_gap_window(&g, t + 5010, BASE, MAX));
    struct idle_gap h = {0};
    t = frames(&h, 1000, 200, 10);
    uint64_t w = idle_gap_window(&h, t + MAX + 1, BASE, MAX);
    checkf(w == BASE, "last frame older than max: window %llu (base)", (unsigned long long)w);
}

static void test_decay(void)
{
    struct idle_gap g = {0};
    uint64_t t = frames(&g, 1000, 400, 5);
    t = frames(&g, t + 100, 100, 2);
    checkf(g.est > 300 && g.est < 400, "two 100 us gaps after 400 us ones: est %llu (pulled down a little)",
           (unsigned long long)g.est);
    t = frames(&g, t + 100, 100, 60);
    checkf(g.est < 110, "sixty more: est %llu (close to 100)", (unsigned long long)g.est);
    idle_gap_frame(&g, t + 300, MAX);
    checkf(g.est == 300, "one 300 us gap: est %llu (at once)", (unsigned long long)g.est);
}

int main(void)
{
    test_first_frame();
    test_ping_pong();
    test_idle_clears();
    test_decay();
    return tap_done();
}
