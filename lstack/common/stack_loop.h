/*
 * stack_loop.h - a stack context as the layers above the runtime see it:
 * the loop object (libuv's uv_loop_t, a Seastar reactor) that owns one
 * stack, with the table of operations its mode gives it (as nic_ops does
 * for ports). Every socket knows its loop (sock/lsock.h lsock_loop); the
 * POSIX and event layers lock, flush, poll and sleep on the loop of the
 * sockets they hold, never on a process-wide one.
 *
 * The runtime makes one per stack (runtime/stack_ctx.h embeds it first)
 * and fills the table from stack_thread_mode (runtime/mode_rtc.c,
 * mode_rtw.c). Loops of one process form a group (all[0..count)): a wait
 * that sleeps links itself on each (run-to-wakeup), and a wait on sockets
 * of several stacks looks at each loop in turn.
 * Design: docs/design.md#the-event-layer-sees-a-stack-as-a-loop-object
 */
#ifndef LSTACK_STACK_LOOP_H
#define LSTACK_STACK_LOOP_H

#include <stdbool.h>
#include <stdint.h>

/*
 * Locking: l->ops->lock serialises every use of l's stack (its lwIP, its
 * sockets, their readiness lists); the lwIP callbacks of l's stack run
 * under it. A thread holds at most one loop's lock at a time (the runtime
 * alone takes them all, in index order, around fork). Run-to-wakeup's ring
 * reads and writes take none (sock/tcp_ring.c).
 */

struct stack_loop;
struct ev_wait_ops;

/* The most loops (stacks) of one process. */
#define STACK_LOOP_MAX 8

struct stack_loop_ops {
    /* The loop's lock: not recursive; contended: another thread waits in
     * lock (a spinning poller yields then). */
    void (*lock)(struct stack_loop *l);
    void (*unlock)(struct stack_loop *l);
    bool (*contended)(struct stack_loop *l);
    /* Under the lock, by the loop's owner only (run-to-completion's
     * waiting thread): one poll round; returns frames received. NULL when
     * the mode's own thread polls (run-to-wakeup). */
    unsigned (*poll)(struct stack_loop *l);
    /* Under the lock, after a call that queued frames that should leave now
     * (connect, shutdown, close): never a poll round. */
    void (*flush)(struct stack_loop *l);
    /* Run-to-wakeup's sleep (NULL in run-to-completion). sleep_arm, under
     * the lock, right after the caller found nothing ready: links the
     * calling thread as a sleeper of l and returns its wake fd (an eventfd,
     * the thread's own, readable once l's stack thread saw a readiness
     * change since), or -errno. sleep_disarm, under the lock: unlinks it. */
    int (*sleep_arm)(struct stack_loop *l);
    void (*sleep_disarm)(struct stack_loop *l);
    /* Low power, on a loop whose port can wake a sleeper (can_wake:
     * ltran's): wake_begin, without the lock, returns an fd to poll
     * (POLLIN) with the kernel fds, after which wake_end; -EAGAIN: frames
     * wait (do not sleep); -ENOTSUP: no wake-up (sleep the timed way). */
    int (*wake_begin)(struct stack_loop *l);
    void (*wake_end)(struct stack_loop *l);
    /* How an application thread waits on sockets of this loop (event/:
     * ev_wait_polling, ev_wait_sleeping). */
    const struct ev_wait_ops *wait;
};

struct stack_loop {
    const struct stack_loop_ops *ops;
    unsigned index;                   /* in the group */
    unsigned count;                   /* loops in the group */
    struct stack_loop *const *all;    /* the group, by index */
    bool low_power;                   /* low_power_mode: idle waits may sleep */
    bool can_wake;                    /* its port can end a low-power sleep (wake_begin) */
    /* The event layer's: when the last poll round of this loop ended, on
     * the polling thread's clock (run-to-completion's fresh start,
     * event/wait.c). Relaxed atomics. */
    uint64_t polled_at;
    /* What the application asked of this loop's sockets (stackctl show
     * stats): reads and writes (posix/sock_io.c), epoll_waits and those
     * that returned events (event/epoll_wait.c, counted on the loop of the
     * set's first stack). A relaxed load and store, no locked add: a lost
     * increment now and then is fine for statistics. */
    uint64_t app_reads, app_writes, app_epoll_waits, app_wakeups;
};

/* One more of a statistic counter (see struct stack_loop): relaxed, not
 * a locked add. */
static inline void loop_count(uint64_t *c)
{
    __atomic_store_n(c, __atomic_load_n(c, __ATOMIC_RELAXED) + 1, __ATOMIC_RELAXED);
}

static inline void loop_lock(struct stack_loop *l)
{
    l->ops->lock(l);
}

static inline void loop_unlock(struct stack_loop *l)
{
    l->ops->unlock(l);
}

static inline void loop_flush(struct stack_loop *l)
{
    l->ops->flush(l);
}

#endif
