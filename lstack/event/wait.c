/*
 * wait.c - run-to-completion's wait loop (ev_wait_polling), shared by
 * epoll_wait, poll, select and the blocking socket calls: deadline, stack
 * polling of the source's loops, each under its lock, the rate-limited
 * kernel check, the low-power sleep, the signal mask; ev_wait, which runs
 * the mode's loop; and ev_wait_sock.
 * Run-to-wakeup's loop is wait_sleep.c.
 * Design: docs/design.md#the-wait-loop-sends-at-the-next-wait-timed-kernel-checks
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>

#include "common/idle_gap.h"
#include "common/tsc_clock.h"
#include "event/ev_priv.h"
#include "event/event.h"
#include "common/libc.h"
#include "common/stack_loop.h"
#include "sock/lsock.h"

/*
 * Run-to-completion: the waiting thread is the one that polls the NIC, so a
 * wait is a loop of poll rounds. Each round: for each loop the source
 * watches, its poll round and the stack check under its lock; then (if
 * due) the kernel check without one. The kernel check
 * is a zero-timeout syscall made at most every EV_KERNEL_CHECK_US, and
 * always before a call would return nothing (epoll_wait(0) on a ready pipe
 * reports it). The due time is kept across calls where the source has a
 * place for it (an epoll set: struct lepoll), so a busy set whose every
 * call returns stack events pays one syscall per EV_KERNEL_CHECK_US, not
 * one per call (one epoll_wait(0) per request on each end of a memif pair
 * otherwise); a kernel fd that gets ready while stack sockets keep
 * the set busy is reported by a call within EV_KERNEL_CHECK_US of its
 * getting ready (of the first call after that, if the application is away
 * longer), not necessarily by the first call after it, the one deviation
 * from Linux, which would report both in one call (a race with the stack's
 * own arrivals all the same). Sources without a place (poll, select, one
 * socket) look on the first round of each call. In low_power_mode,
 * once nothing arrived for EV_IDLE_US, the kernel check blocks for up to
 * 1 ms instead of spinning (an idle stack then costs ~1000 syscalls/s).
 * A port that can wake a sleeper (ltran's: the loop's wake_begin) shortens that:
 * idle EV_WAKE_IDLE_US, then one poll() of the kernel fds and the port's
 * wake-up fd, up to EV_WOKEN_SLEEP_MS, ends as soon as a frame comes for
 * this process (ev_sleep_woken). The idle time grows up to
 * EV_WAKE_SPIN_MAX_US while frames have been coming that close together
 * (common/idle_gap.h, the thread's ev_gap), yielding the CPU in each round
 * past EV_WAKE_IDLE_US: a ping-pong client's next request then finds the
 * server awake (docs/ltran.md#low-power).
 *
 * A wait that starts less than EV_FRESH_NS after the last poll round (the
 * application went from one wait to the next through a few socket calls:
 * read a reply, re-armed its events, waits to write the next request)
 * first sends what those calls queued and looks at the ready list without
 * a round: if something is ready it returns at once, as Linux returns what
 * its ready list holds without looking at the NIC; else it polls as usual.
 * Frames that arrived since the last round then wait for the next call (at
 * most EV_FRESH_NS: a round runs whenever the last is older). This takes a
 * whole round (rx burst, timers, accounting) off a request's way through a
 * client that waits for writability between reading a reply and writing the
 * next request (redis-benchmark), and sends a server's replies before its
 * next rx burst rather than after it.
 *
 * Time is CLOCK_MONOTONIC in nanoseconds, estimated from the TSC per round
 * (common/tsc_clock.c, one clock per thread: a clock_gettime per round was
 * 7.7% of the samples of a perf profile of scenario 6; rt_now_ms is too
 * coarse for the kernel-check rate). The deadline is taken from
 * CLOCK_MONOTONIC itself at the end of the first round (a call that returns
 * from it reads no clock but the TSC: a vDSO clock_gettime per epoll_wait
 * was ~0.1 us of a busy server's request on this VM), and read again to
 * confirm it has passed: a wait never ends before its timeout, and after it
 * by no more than two rounds and the estimate's lag (or a low-power sleep's
 * timer slack).
 *
 * Signal mask: set with pthread_sigmask for the whole wait and restored.
 * Known gap: a signal whose handler runs while we spin does not end the
 * wait with EINTR (only one that arrives inside the kernel check does).
 */

enum {
    EV_FRESH_NS = 4000,        /* a round this recent: a call may answer from the ready list */
    EV_KERNEL_CHECK_US = 64,   /* at most one idle kernel check per this */
    EV_IDLE_US = 2000,         /* low power: idle this long before sleeping */
    EV_SLEEP_MS = 1,           /* low power: one sleep in the kernel check */
    EV_WOKEN_SLEEP_MS = 10,    /* ... one that the port's wake-up fd ends (ev_sleep_woken) */
    EV_WAKE_IDLE_US = 50,      /* low power, a port that wakes us: idle at least this long */
    EV_WAKE_SPIN_MAX_US = 1000, /* ... and at most this long (common/idle_gap.h) */
    EV_WAKE_FDS = 64,          /* kernel fds polled with the wake-up fd (more: timed sleep) */
};

/* The low-power sleep of a port that can end it: poll the kernel part and
 * the port's wake-up fd together, up to woken_ms, then look at the kernel
 * part without waiting; where the wake-up fd cannot be polled (more kernel
 * fds than EV_WAKE_FDS, no fd from the port) a timed sleep of sleep_ms
 * instead. Returns what src->kernel returns. */
static int ev_sleep_woken(const struct ev_source *src, void *ctx, struct stack_loop *l, int n, int sleep_ms,
                          int woken_ms)
{
    struct pollfd fds[EV_WAKE_FDS + 1];
    int k = src->kernel_fds != NULL ? src->kernel_fds(ctx, fds, EV_WAKE_FDS) : -1;
    if (k < 0)
        return src->kernel(ctx, n, sleep_ms);
    int wfd = l->ops->wake_begin(l);
    if (wfd == -EAGAIN)
        return src->kernel(ctx, n, 0); /* frames came meanwhile */
    if (wfd < 0)
        return src->kernel(ctx, n, sleep_ms);
    fds[k] = (struct pollfd){.fd = wfd, .events = POLLIN};
    int r = libc.poll(fds, (nfds_t)k + 1, woken_ms);
    int saved = errno;
    l->ops->wake_end(l);
    if (r < 0 && saved == EINTR && !src->restart && n == 0) {
        errno = EINTR;
        return -1;
    }
    return src->kernel(ctx, n, 0);
}

/* Bumped after each write to, or close of, a kernel fd by this process
 * (posix/: ev_kernel_written); read once per round of a wait. */
static uint64_t ev_kernel_epoch_v;

void ev_kernel_written(void)
{
    __atomic_add_fetch(&ev_kernel_epoch_v, 1, __ATOMIC_RELEASE);
}

/* The waiting thread's clock (initial-exec: liblstack.so is preloaded or
 * linked, never dlopened, so the variable is in the static TLS block). */
static __thread struct tsc_clock ev_clock __attribute__((tls_model("initial-exec")));

/* The waiting thread's recent gaps between frames (low power with a port
 * that wakes us: how long to stay awake before sleeping). */
static __thread struct idle_gap ev_gap __attribute__((tls_model("initial-exec")));

static uint64_t ev_now_ns(void)
{
    return tsc_clock_ns(&ev_clock);
}

/* l's last poll round (of any thread) ended less than EV_FRESH_NS before
 * now (a little either way: the clocks of two threads may differ by their
 * estimates' drift): stack_loop.polled_at, written after each round. */
static bool ev_fresh(const struct stack_loop *l, uint64_t now)
{
    uint64_t at = __atomic_load_n(&l->polled_at, __ATOMIC_RELAXED);
    return at != 0 && (int64_t)(now - at) < EV_FRESH_NS;
}

/* now (an estimate) is past deadline (CLOCK_MONOTONIC), and so is the clock
 * itself (read only then: the estimate may run a little ahead). */
static bool ev_expired(uint64_t now, uint64_t deadline)
{
    return now >= deadline && tsc_clock_mono_ns() >= deadline;
}

/* Let a sibling hyperthread (or a thread waiting for a loop's lock) run. */
static inline void ev_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
}

/* One round of every loop of the group (the waiting thread is their owner:
 * a stack none of its sockets is on takes SYNs for a listener's copy, or
 * frames handed over), each under its own lock: its poll round (or, for a
 * loop of the source on a fresh start, the flush and a look without one if
 * that finds something), and, for the source's loops ls[0..nl), the look
 * at its sockets. Returns the entries found; *frames: the frames the
 * rounds received. */
static int ev_round(const struct ev_source *src, void *ctx, struct stack_loop **ls, unsigned nl, bool fresh,
                    unsigned *frames)
{
    int n = 0;
    unsigned count = nl > 0 ? ls[0]->count : 0;
    for (unsigned i = 0; i < count; i++) {
        struct stack_loop *l = ls[0]->all[i];
        bool mine = ev_has_loop(ls, nl, l);
        int k = n;
        bool polled = false;
        l->ops->lock(l);
        if (mine && fresh && ev_fresh(l, ev_now_ns())) {
            l->ops->flush(l);
            n = src->stack(ctx, l, n);
        }
        if (n == k) {
            *frames += l->ops->poll(l);
            if (mine)
                n = src->stack(ctx, l, n);
            polled = true;
        }
        l->ops->unlock(l);
        if (polled)
            __atomic_store_n(&l->polled_at, ev_now_ns(), __ATOMIC_RELAXED);
        if (l->ops->contended(l))
            sched_yield(); /* let another thread using one of its sockets in */
    }
    return n;
}

static int ev_wait_poll_loop(const struct ev_source *src, void *ctx, long timeout_ms, const sigset_t *mask)
{
    sigset_t saved_mask;
    bool masked = mask != NULL && pthread_sigmask(SIG_SETMASK, mask, &saved_mask) == 0;
    struct stack_loop *ls[STACK_LOOP_MAX];
    unsigned nl = src->loops(ctx, ls);
    bool low_power = nl > 0 && ls[0]->low_power;
    uint64_t now = ev_now_ns();
    /* A timeout > 0 is counted from the end of the first round: a call that
     * returns from its first round (a busy server's, nearly all) reads no
     * clock but the TSC; the others end at most a round late, never early. */
    uint64_t deadline = UINT64_MAX;
    bool deadline_due = timeout_ms > 0;
    struct ev_kernel_due call_due = {.at = now}; /* without a kept one, the first round looks */
    struct ev_kernel_due *kernel_due = src->kernel_due != NULL ? src->kernel_due(ctx) : &call_due;
    uint64_t busy_at = now;  /* when a frame last arrived */
    bool wake = low_power && ls[0]->can_wake;
    const uint64_t base_ns = (wake ? EV_WAKE_IDLE_US : EV_IDLE_US) * 1000u;
    const uint64_t spin_max_ns = EV_WAKE_SPIN_MAX_US * 1000u;
    uint64_t idle_ns = wake ? idle_gap_window(&ev_gap, now, base_ns, spin_max_ns) : base_ns;
    int n;
    /* A loop polled a moment ago (the application went from one wait to
     * the next through a few socket calls): send what those calls queued,
     * and answer from the ready list if it has something, as Linux answers
     * from its ready list without looking at the NIC; only if it has
     * nothing, poll. Rounds still run at least every EV_FRESH_NS while the
     * application keeps calling. The first round of a call only. */
    bool fresh = true;

    for (;;) {
        unsigned frames = 0;
        if (!fresh)
            nl = src->loops(ctx, ls); /* the set may have gained a loop */
        n = ev_round(src, ctx, ls, nl, fresh, &frames);
        fresh = false;

        now = ev_now_ns();
        if (frames > 0) {
            busy_at = now;
            if (wake) {
                idle_gap_frame(&ev_gap, now, spin_max_ns);
                idle_ns = idle_gap_window(&ev_gap, now, base_ns, spin_max_ns);
            }
        }
        bool last = n > 0 || timeout_ms == 0 || ev_expired(now, deadline);
        uint64_t epoch = __atomic_load_n(&ev_kernel_epoch_v, __ATOMIC_ACQUIRE);
        if ((last && n == 0) || now >= __atomic_load_n(&kernel_due->at, __ATOMIC_RELAXED) ||
            epoch != __atomic_load_n(&kernel_due->epoch, __ATOMIC_RELAXED)) {
            int sleep_ms = 0;
            if (!last && low_power && !deadline_due && now - busy_at >= idle_ns && now < deadline &&
                deadline - now >= (uint64_t)EV_SLEEP_MS * 1000000u)
                sleep_ms = EV_SLEEP_MS;
            int total;
            if (sleep_ms > 0 && wake) {
                uint64_t left_ms = deadline == UINT64_MAX ? EV_WOKEN_SLEEP_MS : (deadline - now) / 1000000u;
                int woken_ms = left_ms < EV_WOKEN_SLEEP_MS ? (int)left_ms : EV_WOKEN_SLEEP_MS;
                total = ev_sleep_woken(src, ctx, ls[0], n, sleep_ms, woken_ms);
            } else {
                total = src->kernel(ctx, n, sleep_ms);
            }
            if (total < 0 && n == 0) {
                n = -1;
                break;
            }
            if (total >= 0)
                n = total;
            if (sleep_ms > 0)
                now = ev_now_ns();
            __atomic_store_n(&kernel_due->at, now + EV_KERNEL_CHECK_US * 1000u, __ATOMIC_RELAXED);
            __atomic_store_n(&kernel_due->epoch, epoch, __ATOMIC_RELAXED);
            if (last || n > 0 || ev_expired(now, deadline))
                break;
        } else if (last) {
            break; /* stack events, the kernel not due: it waits its turn */
        }
        if (deadline_due) {
            deadline = tsc_clock_mono_ns() + (uint64_t)timeout_ms * 1000000u;
            deadline_due = false;
        }
        if (idle_ns > base_ns && now - busy_at >= base_ns)
            sched_yield(); /* staying awake for the next frame: the process that sends it may need this CPU */
        else
            ev_relax();
    }

    if (masked) {
        int saved = errno;
        pthread_sigmask(SIG_SETMASK, &saved_mask, NULL);
        errno = saved;
    }
    return n;
}

const struct ev_wait_ops ev_wait_polling = {
    .wait = ev_wait_poll_loop,
};

int ev_wait(const struct ev_source *src, void *ctx, long timeout_ms, const sigset_t *mask)
{
    struct stack_loop *ls[STACK_LOOP_MAX];
    if (src->loops(ctx, ls) == 0) /* no socket on a loop (a set emptied): the kernel part alone */
        return ev_wait_polling.wait(src, ctx, timeout_ms, mask);
    return ls[0]->ops->wait->wait(src, ctx, timeout_ms, mask);
}

/* ---- one socket ---- */

struct sock_wait {
    struct lsock *s;
    int fd;
    bool kernel_half;
    uint32_t events;     /* what the caller waits for (+ EPOLLERR|EPOLLHUP) */
    uint32_t seen;
};

static unsigned sw_loops(void *ctx, struct stack_loop **out)
{
    struct sock_wait *w = ctx;
    out[0] = lsock_loop(w->s);
    return 1;
}

static int sw_stack(void *ctx, struct stack_loop *l, int n)
{
    struct sock_wait *w = ctx;
    (void)l;
    w->seen = lsock_events(w->s) & (w->events | EPOLLERR | EPOLLHUP);
    return n + (w->seen != 0);
}

static int sw_kernel(void *ctx, int n, int timeout_ms)
{
    struct sock_wait *w = ctx;
    if (!w->kernel_half) {
        if (timeout_ms > 0)
            libc.poll(NULL, 0, timeout_ms); /* the low-power sleep */
        return n;
    }
    struct pollfd p = {.fd = w->fd, .events = POLLIN};
    if (libc.poll(&p, 1, timeout_ms) > 0 && (p.revents & POLLIN)) {
        w->seen |= EPOLLIN;
        return 1; /* one socket: ready or not */
    }
    return n; /* EINTR included: a blocking call restarts, like SA_RESTART */
}

static int sw_kernel_fds(void *ctx, struct pollfd *fds, int max)
{
    struct sock_wait *w = ctx;
    if (!w->kernel_half)
        return 0;
    if (max < 1)
        return -1;
    fds[0] = (struct pollfd){.fd = w->fd, .events = POLLIN};
    return 1;
}

static int sw_block(void *ctx, int wake_fd, int timeout_ms)
{
    struct sock_wait *w = ctx;
    struct pollfd p[2];
    nfds_t n = 0;
    if (w->kernel_half)
        p[n++] = (struct pollfd){.fd = w->fd, .events = POLLIN};
    int slot = -1;
    if (wake_fd >= 0) {
        slot = (int)n;
        p[n++] = (struct pollfd){.fd = wake_fd, .events = POLLIN};
    }
    return ev_block_fds(p, n, slot, timeout_ms);
}

static const struct ev_source sock_source = {
    .loops = sw_loops,
    .stack = sw_stack,
    .kernel = sw_kernel,
    .kernel_fds = sw_kernel_fds,
    .block = sw_block,
    .restart = true,
};

uint32_t ev_wait_sock(struct lsock *s, int fd, bool kernel_half, uint32_t events, long timeout_ms)
{
    /* The kernel half is a listener: only its EPOLLIN (a connection) counts. */
    struct sock_wait w = {.s = s, .fd = fd, .kernel_half = kernel_half && (events & EPOLLIN), .events = events};
    int saved = errno;
    lsock_hold(s); /* another thread may close the fd meanwhile */
    int n = ev_wait(&sock_source, &w, timeout_ms, NULL);
    lsock_release(s);
    errno = saved;
    return n > 0 ? w.seen : 0;
}
