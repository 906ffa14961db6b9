/*
 * stack_ctx.h - one stack and everything that runs it: the per-stack
 * context that replaced the process singleton (rt.stack, one process-wide
 * stack lock). Runtime-private (runtime/ files and the mode files).
 * Design: docs/design.md#the-stack_thread_mode-is-a-table-chosen-once
 */
#ifndef LSTACK_STACK_CTX_H
#define LSTACK_STACK_CTX_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/futex_lock.h"

/*
 * A context holds one lwIP instance (struct stack), the NIC queue it polls
 * (queue i of the port for stack i: several in run-to-wakeup with several
 * num_cpus CPUs, whose contexts then share one lock, see lock_of), its
 * lock, the CPU its owner runs on, the mode that decides who owns it (the
 * table below), and the mode's state (the stack thread and the sleeping
 * application threads of run-to-wakeup).
 *
 * Owner: the only thread that may poll the context's queue.
 *  run-to-completion  whichever application thread holds the lock and is
 *                     in a wait (event/wait.c's polling loop);
 *  run-to-wakeup      the context's stack thread (runtime/mode_rtw.c), from
 *                     start until stop; at exit, once it is stopped, the
 *                     exiting thread polls the last FINs out (init.c).
 * Application threads call into the stack (lsock_*) under the lock in both
 * modes, except run-to-wakeup's reads and writes, which go through the
 * sockets' rings without it (sock/tcp_ring.c); they never poll in
 * run-to-wakeup.
 */

struct stack;
struct stack_ctx;
struct lstack_conf;
struct ev_wait_ops;

/* What a stack_thread_mode is: one table per mode, chosen at start. */
struct stack_mode {
    const char *name;                 /* as in lstack.conf */
    /* How an application thread waits (epoll_wait, poll, select, a
     * blocking socket call): event/event.h. */
    const struct ev_wait_ops *wait;
    /* After the stack is open, before RT_READY: start the owner. Returns 0
     * or -1 with a reason in err. The init thread. */
    int (*start)(struct stack_ctx *c, const struct lstack_conf *conf, char *err, size_t errlen);
    /* Before the stack closes: stop the owner (joined on return). No lock held. */
    void (*stop)(struct stack_ctx *c);
    /* Under the lock, after a call that queued frames that should leave
     * now (connect's SYN, shutdown's and close's FIN or RST): never a poll
     * round. */
    void (*flush)(struct stack_ctx *c);
};

extern const struct stack_mode stack_mode_rtc; /* runtime/mode_rtc.c */
extern const struct stack_mode stack_mode_rtw; /* runtime/mode_rtw.c */

/* A thread of run-to-wakeup sleeping until its stack has news
 * (runtime/mode_rtw.c). Linked on its context under the lock. */
struct rt_sleeper {
    int fd;                           /* the thread's eventfd, or -1 */
    bool linked;
    struct rt_sleeper *next, **pprev;
};

struct stack_ctx {
    struct futex_lock mu;             /* every use of the stack, in both modes */
    int mu_waiters;                   /* threads blocked in sctx_lock */
    /* The context whose mu this one takes: NULL (itself) with one stack;
     * with several, every context's is stack 0's (one lock for the
     * group: a round reads the other stacks' lwIP, stack/stack.h's
     * stack_group_join, and readiness reaches epoll sets shared by
     * sockets of every stack). */
    struct stack_ctx *lock_of;
    struct stack *stack;              /* NULL until open */
    const struct stack_mode *mode;
    int index;                        /* stack number: its CPU is conf->cpus[index] */
    int cpu;                          /* that CPU (run-to-wakeup pins its thread there) */
    uint16_t queue;                   /* the port queue it polls (0: one queue) */

    /* run-to-wakeup (mode_rtw.c) */
    pthread_t thread;
    bool thread_started;
    int stop;                         /* atomic: the stack thread ends */
    uint64_t seen_changes;            /* stack_sock_changes at the last wake-up */
    struct rt_sleeper *sleepers;      /* under mu */
    int waking;                       /* atomic: the stack thread is writing wake fds it
                                       * took off sleepers, after unlocking mu */
};

static inline struct stack_ctx *sctx_locker(struct stack_ctx *c)
{
    return c->lock_of != NULL ? c->lock_of : c;
}

static inline void sctx_lock(struct stack_ctx *c)
{
    c = sctx_locker(c);
    if (futex_trylock(&c->mu))
        return;
    __atomic_add_fetch(&c->mu_waiters, 1, __ATOMIC_RELAXED);
    futex_lock(&c->mu);
    __atomic_sub_fetch(&c->mu_waiters, 1, __ATOMIC_RELAXED);
}

static inline void sctx_unlock(struct stack_ctx *c)
{
    c = sctx_locker(c);
    futex_unlock(&c->mu);
}

static inline bool sctx_contended(struct stack_ctx *c)
{
    c = sctx_locker(c);
    return __atomic_load_n(&c->mu_waiters, __ATOMIC_RELAXED) != 0;
}

/* Under the lock: one poll round of c's stack, by its owner (flushes the
 * ACKs the application's reads owe first). Returns frames received. */
unsigned sctx_poll(struct stack_ctx *c);

#endif
