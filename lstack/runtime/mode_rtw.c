/*
 * mode_rtw.c - stack_thread_mode = "run-to-wakeup": a stack thread per
 * context, pinned to the context's CPU (num_cpus), polls its queue round
 * after round; application threads never poll. When they must wait, they
 * sleep in the kernel on their own wake fd (event/wait_sleep.c), linked on
 * the context as sleepers. After each round the stack thread looks at the
 * stack's count of readiness changes (lsock_changes: lwIP callbacks in
 * the round and the application's own calls since); when it moved, every
 * sleeper's eventfd is written and the list emptied.
 * Design: docs/design.md#run-to-wakeup-a-stack-thread-data-rings-wake-ups-for-sleepers
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/eventfd.h>

#include "common/libc.h"
#include "common/log.h"
#include "common/tsc_clock.h"
#include "conf/conf.h"
#include "event/event.h"
#include "runtime/app_affinity.h"
#include "runtime/runtime_priv.h"
#include "runtime/rtw_idle.h"
#include "runtime/stack_ctx.h"
#include "sock/lsock.h"
#include "stack/stack.h"

/*
 * Data path: rings (sock/tcp_ring.c, enabled here at start). Each
 * established connection has a receive ring (the stack thread publishes
 * the pbufs lwIP hands it; the application copies out of them) and a send
 * ring (the application copies its bytes in; the stack thread moves them
 * into lwIP with tcp_write / tcp_output). A read or write the rings can
 * answer takes no lock and runs no lwIP; it marks the socket pending on a
 * lock-free list, which the stack thread services at the start of its next
 * round (write into lwIP, free read pbufs, reopen the window).
 *
 * Still under the lock (not through a request ring): the control calls
 * (socket, bind, listen, accept, connect, shutdown, close, setsockopt,
 * getsockopt, ioctl), a read that finds its ring empty and a write that
 * finds no room (they decide EOF, errors and -EAGAIN as the locked path
 * does), and each look of epoll_wait / poll / select (the ready lists are
 * kept under the lock). Output they cause waits in the tx batch for the
 * thread's next round.
 *
 * The stack thread receives without the lock (the queue is its own) and
 * takes the lock only for a round with work: frames received, frames or
 * ACKs the application's calls queued (stack_round_owed), sockets whose
 * rings have work (lsock_pending), or lwIP's timers (at least every
 * millisecond). An application call therefore rarely finds the lock held;
 * when it does, it sleeps in the futex and the stack thread waits for it
 * to have had the lock before its next round.
 *
 * The wake fd is an eventfd per application thread, made on its first
 * sleep and closed by a thread-specific destructor when the thread ends
 * (once no stack thread is still writing it: c->waking).
 *
 * Sharing a CPU with the application (num_cpus names a CPU the
 * application's threads run on too: on a 2-CPU machine whose other CPU is
 * the client's, the only choice). The stack thread never blocks, so
 * everything it leaves to the scheduler costs a slice:
 *  - the wake fds are taken off the sleepers under the lock and written
 *    after it (wake_take / wake_unlocked): a woken thread that preempted
 *    the stack thread inside the lock slept in the futex at once, and the
 *    lock's hand-back cost two more switches and a futex wait and wake per
 *    wake-up (measured: 0.46 futex calls per request on the server);
 *  - after writing them it yields (sched_yield), so the woken thread runs
 *    now rather than when the scheduler next preempts a spinning thread
 *    (else a p99 of 4.6 ms, the slice);
 *  - an idle round gives the CPU away instead of pausing when no
 *    application thread is linked as a sleeper (one is awake and may be
 *    runnable here; read without the lock, a hint): a yield while yields
 *    come back promptly, a timed step of 50 us once one came back late
 *    (runtime/rtw_idle.h: a yield to a thread spinning in user space
 *    returns only at the 4 ms tick; the step's timer ends its turn);
 *  - handing the lock to a waiting thread yields (the waiter may be on
 *    this CPU).
 * On a CPU of its own the stack thread pays a sched_yield per wake-up and
 * per idle round while the application is awake (a system call that finds
 * nobody else to run).
 */

/* ---- sleepers ---- */

/* The calling thread as a sleeper of each stack (one node per stack, by
 * its loop's index, all with the thread's one eventfd: rtw_me[0].fd). */
static __thread struct rt_sleeper rtw_me[LSTACK_CONF_STACKS_SUPPORTED] = {{.fd = -1}};
static pthread_key_t rtw_key;
static pthread_once_t rtw_key_once = PTHREAD_ONCE_INIT;

static void sleeper_unlink(struct rt_sleeper *w);

/* Thread end: the thread's eventfd closes once no stack thread may still
 * write it (wake_unlocked writes the fds it took off sleepers after
 * unlocking: the lock orders this look after that take). */
static void rtw_thread_end(void *arg)
{
    struct rt_sleeper *me = arg;
    if (me->fd < 0)
        return;
    for (int i = 0; i < rt.nstacks; i++) {
        struct stack_ctx *c = &rt.stacks[i];
        sctx_lock(c);
        sleeper_unlink(&rtw_me[i]); /* ended inside a sleep (cancelled) */
        sctx_unlock(c);
        while (__atomic_load_n(&c->waking, __ATOMIC_ACQUIRE) != 0)
            sched_yield();
    }
    libc.close(me->fd);
    me->fd = -1;
}

static void rtw_key_make(void)
{
    pthread_key_create(&rtw_key, rtw_thread_end);
}

/* Under the lock: unlink one sleeper. */
static void sleeper_unlink(struct rt_sleeper *w)
{
    if (!w->linked)
        return;
    __atomic_store_n(w->pprev, w->next, __ATOMIC_RELAXED); /* may be c->sleepers: read as a hint */
    if (w->next != NULL)
        w->next->pprev = w->pprev;
    w->linked = false;
}

/* Under the lock: link w on c's sleepers (if not linked yet). */
static void sleeper_link(struct stack_ctx *c, struct rt_sleeper *w)
{
    if (w->linked)
        return;
    w->next = c->sleepers;
    w->pprev = &c->sleepers;
    if (c->sleepers != NULL)
        c->sleepers->pprev = &w->next;
    __atomic_store_n(&c->sleepers, w, __ATOMIC_RELAXED); /* read as a hint without the lock */
    w->linked = true;
}

/* The loop's sleep_arm: under l's lock. */
static int rtw_sleep_arm(struct stack_loop *l)
{
    struct rt_sleeper *me = &rtw_me[0];
    if (me->fd < 0) {
        pthread_once(&rtw_key_once, rtw_key_make);
        int fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
        if (fd < 0)
            return -errno;
        me->fd = fd;
        pthread_setspecific(rtw_key, me);
        /* the thread's first sleep: app_bind_numa (it talks to every stack:
         * stack 0's node, until a thread has a stack of its own) */
        rt_affinity_app_thread(0);
    }
    rtw_me[l->index].fd = me->fd;
    sleeper_link(sctx_of(l), &rtw_me[l->index]);
    return me->fd;
}

/* The loop's sleep_disarm: under l's lock. */
static void rtw_sleep_disarm(struct stack_loop *l)
{
    sleeper_unlink(&rtw_me[l->index]);
}

/* Under the lock: signal and unlink every sleeper. */
static void wake_all(struct stack_ctx *c)
{
    uint64_t one = 1;
    while (c->sleepers != NULL) {
        struct rt_sleeper *w = c->sleepers;
        sleeper_unlink(w);
        (void)libc.write(w->fd, &one, sizeof(one));
    }
}

/* Wake fds taken off the sleepers under the lock, written after it. */
enum { RTW_WAKE_BATCH = 16 };
struct wake_list {
    int n;
    int fd[RTW_WAKE_BATCH];
};

/* Under the lock: unlink every sleeper; the first RTW_WAKE_BATCH fds go
 * into l for wake_unlocked, the rest (rare: many sleeping threads) are
 * written here. Sets c->waking when l is not empty. */
static void wake_take(struct stack_ctx *c, struct wake_list *l)
{
    uint64_t one = 1;
    l->n = 0;
    while (c->sleepers != NULL) {
        struct rt_sleeper *w = c->sleepers;
        sleeper_unlink(w);
        if (l->n < RTW_WAKE_BATCH)
            l->fd[l->n++] = w->fd;
        else
            (void)libc.write(w->fd, &one, sizeof(one));
    }
    if (l->n > 0)
        __atomic_store_n(&c->waking, 1, __ATOMIC_RELAXED); /* published by the unlock */
}

/* After the unlock: write the fds wake_take took. A woken thread that
 * shares the CPU and preempts us finds the lock free (written under it,
 * it woke into the futex: two more switches and a futex wait and wake per
 * wake-up). */
static void wake_unlocked(struct stack_ctx *c, const struct wake_list *l)
{
    uint64_t one = 1;
    for (int i = 0; i < l->n; i++)
        (void)libc.write(l->fd[i], &one, sizeof(one));
    if (l->n > 0)
        __atomic_store_n(&c->waking, 0, __ATOMIC_RELEASE);
}

/* ---- the stack thread ---- */

static inline void relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
}

/* An idle stack thread takes the lock for a round at least this often:
 * lwIP's timers (retransmissions, connect timeouts, TIME_WAIT; its finest
 * timer is 250 ms, lstack's connect timer counts milliseconds). */
enum { RTW_TIMER_ROUND_NS = 1000000 };
/* Yields a stack thread spends, at most, handing the lock to a waiter. */
enum { RTW_HANDOFF_SPINS = 1u << 10 };

/* Idle, no application thread sleeping: give the CPU away, a yield or a
 * timed step of RTW_IDLE_STEP_NS (rtw_idle.h). */
static void idle_give(struct rtw_idle *idle, struct tsc_clock *clk, uint64_t now)
{
    if (rtw_idle_sleep(idle, now)) {
        struct timespec ts = {.tv_sec = 0, .tv_nsec = RTW_IDLE_STEP_NS};
        nanosleep(&ts, NULL);
        return;
    }
    sched_yield();
    uint64_t after = tsc_clock_ns(clk);
    rtw_idle_yielded(idle, after, after - now);
}

static void *stack_thread(void *arg)
{
    struct stack_ctx *c = arg;
    struct stack *s = c->stack;
    struct nic_pkt pkts[stack_burst(s)];
    struct tsc_clock clk = {0};
    uint64_t due = 0; /* the next round owed to lwIP's timers */
    struct rtw_idle idle = {0};
    while (!__atomic_load_n(&c->stop, __ATOMIC_ACQUIRE)) {
        /* The queue is the thread's own: receive without the lock, and
         * take it only for work, so that application threads' calls
         * rarely find it held. */
        unsigned n = stack_rx(s, pkts);
        uint64_t now = tsc_clock_ns(&clk);
        if (n == 0 && now < due && !stack_round_owed(s) && !lsock_pending(s)) {
            /* Nobody sleeping: an application thread is awake, maybe
             * runnable on this CPU; let it run rather than spin (a hint,
             * read without the lock). */
            if (__atomic_load_n(&c->sleepers, __ATOMIC_RELAXED) == NULL)
                idle_give(&idle, &clk, now);
            else
                relax();
            continue;
        }
        struct wake_list wl = {0};
        sctx_lock(c);
        lsock_flush_acks(s); /* ACKs lwIP would delay, now that the app read */
        lsock_service(s); /* bytes written into lwIP, read pbufs freed (tcp_ring.c) */
        stack_round(s, pkts, n);
        uint64_t ch = lsock_changes(s);
        if (ch != c->seen_changes) {
            c->seen_changes = ch;
            if (c->sleepers != NULL)
                wake_take(c, &wl);
        }
        sctx_unlock(c);
        if (wl.n > 0) {
            wake_unlocked(c, &wl);
            /* A woken thread on this CPU runs now, not when the
             * scheduler's slice of this thread ends. */
            sched_yield();
        }
        due = now + RTW_TIMER_ROUND_NS;
        /* A waiting application thread gets the lock before the next
         * round takes it again (it sleeps in the futex until woken). */
        for (unsigned i = 0; i < RTW_HANDOFF_SPINS && sctx_contended(c); i++)
            sched_yield(); /* the waiter may be on this CPU: spinning would keep it off */
    }
    return NULL;
}

static int rtw_start(struct stack_ctx *c, const struct lstack_conf *conf, char *err, size_t errlen)
{
    (void)conf;
    /* Sockets move their data through rings (sock/tcp_ring.c). */
    lsock_rings_enable(c->stack);
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    if (c->cpu >= 0 && c->cpu < CPU_SETSIZE) {
        cpu_set_t set;
        CPU_ZERO(&set);
        CPU_SET(c->cpu, &set);
        pthread_attr_setaffinity_np(&attr, sizeof(set), &set);
    }
    c->stop = 0;
    c->seen_changes = lsock_changes(c->stack);
    /* The thread starts with every signal blocked: the application's
     * handlers run on its own threads. */
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    int rc = pthread_create(&c->thread, &attr, stack_thread, c);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    pthread_attr_destroy(&attr);
    if (rc != 0) {
        snprintf(err, errlen, "cannot start the stack thread of stack %d on CPU %d: %s", c->index, c->cpu,
                 strerror(rc));
        return -1;
    }
    char name[16];
    snprintf(name, sizeof(name), "lstack-stack%d", c->index);
    pthread_setname_np(c->thread, name);
    c->thread_started = true;
    return 0;
}

static void rtw_stop(struct stack_ctx *c)
{
    if (!c->thread_started)
        return;
    __atomic_store_n(&c->stop, 1, __ATOMIC_RELEASE);
    pthread_join(c->thread, NULL);
    c->thread_started = false;
    sctx_lock(c);
    wake_all(c); /* nobody polls from here on: let sleepers look again */
    sctx_unlock(c);
}

static void rtw_flush(struct stack_loop *l)
{
    (void)l; /* the stack thread's next round sends the batch */
}

static const struct stack_loop_ops rtw_ops = {
    .lock = sctx_loop_lock,
    .unlock = sctx_loop_unlock,
    .contended = sctx_loop_contended,
    .flush = rtw_flush,
    .sleep_arm = rtw_sleep_arm,
    .sleep_disarm = rtw_sleep_disarm,
    .wake_begin = sctx_wake_begin,
    .wake_end = sctx_wake_end,
    .wait = &ev_wait_sleeping,
};

const struct stack_mode stack_mode_rtw = {
    .name = "run-to-wakeup",
    .ops = &rtw_ops,
    .start = rtw_start,
    .stop = rtw_stop,
};
