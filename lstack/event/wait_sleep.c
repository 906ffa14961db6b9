/*
 * wait_sleep.c - run-to-wakeup's wait loop (ev_wait_sleeping): the waiting
 * application thread never polls the NIC (the stack thread does,
 * runtime/mode_rtw.c); it looks at its stack sockets under their loops'
 * locks, looks
 * at its kernel fds without waiting, and when neither has anything sleeps in
 * the kernel (ppoll) on its kernel fds and its wake fd, an eventfd that the
 * stack thread writes once a socket's readiness changed. An idle
 * application therefore uses no CPU, and kernel fds in the same set wake it
 * as they would without lstack.
 * Design: docs/design.md#one-eventfd-per-sleeping-thread
 */
#include <errno.h>
#include <pthread.h>
#include <time.h>

#include "common/libc.h"
#include "common/stack_loop.h"
#include "event/ev_priv.h"
#include "event/event.h"

/*
 * No lost wake-up: on each loop of the process, the thread links itself as
 * a sleeper (the loop's sleep_arm) in the same hold of that loop's lock as
 * its look at the loop's sockets that found nothing; a change is made
 * under that lock too, so it either came before the look (seen) or after
 * the link (that loop's stack thread signals the fd). The thread links
 * itself on every loop of the group, not only those of its sockets: a set
 * may gain a socket of another loop while it sleeps.
 *
 * System calls per sleep: the look that finds nothing goes straight to the
 * ppoll (its kernel fds report a ready one at once, so a zero-timeout
 * kernel look first would ask the same twice); the look after a wake-up
 * that only the wake fd ended asks the kernel part without waiting, one
 * call, as every look that returns does. So a wake-up costs ppoll, the
 * eventfd read and one kernel look.
 *
 * Time: CLOCK_MONOTONIC read once per look (a look is followed by a sleep
 * or a return, never by a spin, so the TSC estimate of wait.c buys
 * nothing here). Signals: the signal mask is set for the whole wait; a
 * signal ends the sleep, and the wait with EINTR unless the source
 * restarts (a blocking socket call).
 */

static uint64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

int ev_block_fds(struct pollfd *fds, nfds_t n, int wake_slot, int timeout_ms)
{
    struct timespec ts = {.tv_sec = timeout_ms / 1000, .tv_nsec = (long)(timeout_ms % 1000) * 1000000L};
    int k = libc.ppoll(fds, n, timeout_ms < 0 ? NULL : &ts, NULL);
    if (k < 0)
        return -errno;
    int rc = 0;
    if (wake_slot >= 0 && (fds[wake_slot].revents & POLLIN)) {
        rc |= EV_BLOCK_WOKEN;
        k--;
    }
    return k > 0 ? rc | EV_BLOCK_KERNEL : rc;
}

/* Unlink the calling thread from the loops of armed (a bit per index). */
static void disarm(struct stack_loop *const *all, uint32_t armed)
{
    for (unsigned i = 0; armed != 0; i++, armed >>= 1) {
        if (!(armed & 1))
            continue;
        all[i]->ops->lock(all[i]);
        all[i]->ops->sleep_disarm(all[i]);
        all[i]->ops->unlock(all[i]);
    }
}

/* One look: every loop of the group in turn, under its lock, unlinking
 * the thread left linked by the previous sleep (if the stack did not
 * signal), looking at the source's sockets of that loop, and, while
 * nothing was found and the caller may sleep, linking the thread as a
 * sleeper in the same hold. Returns the entries found; *fd: the wake fd
 * (-1: not linked everywhere: no sleep on it), *armed: the loops it is
 * linked on. */
static int look_and_arm(const struct ev_source *src, void *ctx, struct stack_loop *const *all, unsigned count,
                        bool may_sleep, int *fd, uint32_t *armed)
{
    struct stack_loop *ls[STACK_LOOP_MAX];
    unsigned nl = src->loops(ctx, ls);
    int n = 0;
    *fd = -1;
    bool linked = may_sleep;
    for (unsigned i = 0; i < count; i++) {
        struct stack_loop *l = all[i];
        l->ops->lock(l);
        if (*armed & (1u << i)) {
            l->ops->sleep_disarm(l);
            *armed &= ~(1u << i);
        }
        if (ev_has_loop(ls, nl, l))
            n = src->stack(ctx, l, n);
        if (n == 0 && linked) {
            int w = l->ops->sleep_arm(l);
            if (w >= 0) {
                *fd = w;
                *armed |= 1u << i;
            } else {
                linked = false; /* out of fds: look again every millisecond */
            }
        }
        l->ops->unlock(l);
    }
    if (!linked || n > 0)
        *fd = -1;
    return n;
}

static int ev_wait_sleep_loop(const struct ev_source *src, void *ctx, long timeout_ms, const sigset_t *mask)
{
    sigset_t saved_mask;
    bool masked = mask != NULL && pthread_sigmask(SIG_SETMASK, mask, &saved_mask) == 0;
    uint64_t deadline = timeout_ms < 0 ? UINT64_MAX : mono_ns() + (uint64_t)timeout_ms * 1000000u;
    struct stack_loop *ls[STACK_LOOP_MAX];
    src->loops(ctx, ls);
    struct stack_loop *const *all = ls[0]->all;
    unsigned count = ls[0]->count;
    int n;
    int err = 0;
    int fd = -1;          /* the wake fd while linked as a sleeper */
    uint32_t armed = 0;   /* the loops it is linked on */
    bool kernel_news = false; /* the last sleep ended for a kernel fd, a signal or the time */

    for (;;) {
        n = look_and_arm(src, ctx, all, count, timeout_ms != 0, &fd, &armed);

        uint64_t now = 0;
        /* Going to sleep on the kernel fds and the wake fd: the sleep
         * itself reports a ready kernel fd (ppoll returns at once), so the
         * zero-timeout look first would be a second syscall for the same
         * answer. Not after a sleep that a kernel fd ended. */
        bool sleep_now = n == 0 && fd >= 0 && !kernel_news;
        if (sleep_now) {
            now = mono_ns();
            sleep_now = now < deadline;
        }
        if (!sleep_now) {
            int total = src->kernel(ctx, n, 0);
            kernel_news = false;
            if (total < 0 && n == 0) {
                err = errno;
                n = -1;
                break;
            }
            if (total >= 0)
                n = total;
            if (n > 0 || timeout_ms == 0)
                break;
            now = mono_ns();
            if (now >= deadline)
                break;
        }
        int left = -1;
        if (deadline != UINT64_MAX) {
            uint64_t ms = (deadline - now + 999999u) / 1000000u; /* round up: never early */
            left = ms > 1000000 ? 1000000 : (int)ms;
        }
        if (fd < 0 && (left < 0 || left > 1))
            left = 1; /* no wake fd (out of fds): look again every millisecond */
        int rc = src->block(ctx, fd, left);
        if (rc > 0 && (rc & EV_BLOCK_WOKEN)) {
            uint64_t v;
            (void)libc.read(fd, &v, sizeof(v)); /* consume the wake-up */
        }
        /* a kernel fd, an error or a signal: look at the kernel part
         * next time round (a timeout ends in that look as well) */
        kernel_news = rc != EV_BLOCK_WOKEN;
        if (rc == -EINTR && !src->restart) {
            err = EINTR;
            n = -1;
            break;
        }
    }
    disarm(all, armed);

    if (masked)
        pthread_sigmask(SIG_SETMASK, &saved_mask, NULL);
    if (n < 0)
        errno = err;
    return n;
}

const struct ev_wait_ops ev_wait_sleeping = {
    .wait = ev_wait_sleep_loop,
};
