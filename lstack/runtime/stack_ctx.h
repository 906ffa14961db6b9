/*
 * stack_ctx.h - one stack and everything that runs it: the loop object
 * the layers above see (struct stack_loop, common/stack_loop.h, first) and
 * what only the runtime sees of it. Runtime-private (runtime/ files and
 * the mode files).
 * Design: docs/design.md#one-lock-per-stack-a-thread-holds-one-at-a-time
 * Design: docs/design.md#the-stack_thread_mode-is-a-table-chosen-once
 */
#ifndef LSTACK_STACK_CTX_H
#define LSTACK_STACK_CTX_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/futex_lock.h"
#include "common/stack_loop.h"
#include "stack/round_acct.h"

/*
 * A context holds one lwIP instance (struct stack), the NIC queue it polls
 * (queue i of the port for stack i: several in run-to-wakeup with several
 * num_cpus CPUs), its own lock (no two contexts share one: their rounds
 * run in parallel), the CPU its owner runs on, the mode that decides who
 * owns it (the table below), and the mode's state (the stack thread and
 * the sleeping application threads of run-to-wakeup).
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
struct nic;

/* What a stack_thread_mode is: one table per mode, chosen at start. */
struct stack_mode {
    const char *name;                 /* as in lstack.conf */
    /* The table the mode gives its contexts' loops (common/stack_loop.h):
     * lock, poll, flush, sleep, and how an application thread waits. */
    const struct stack_loop_ops *ops;
    /* After the stack is open, before RT_READY: start the owner. Returns 0
     * or -1 with a reason in err. The init thread. */
    int (*start)(struct stack_ctx *c, const struct lstack_conf *conf, char *err, size_t errlen);
    /* Before the stack closes: stop the owner (joined on return). No lock held. */
    void (*stop)(struct stack_ctx *c);
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
    struct stack_loop loop;           /* first: what sockets and waits see of the context */
    struct futex_lock mu;             /* every use of the stack, in both modes */
    int mu_waiters;                   /* threads blocked in sctx_lock */
    /* Takes of mu that found it held, and the TSC ticks they waited
     * (stackctl show stats: lock_waits, lock_wait_cycles). Relaxed atomics. */
    uint64_t lock_waits, lock_wait_cycles;
    struct stack *stack;              /* NULL until open */
    struct nic *nic;                  /* its port queue (the low-power wake-up, sleep.c) */
    const struct stack_mode *mode;
    int index;                        /* stack number: its CPU is conf->cpus[index] */
    int cpu;                          /* that CPU (run-to-wakeup pins its thread there) */
    uint16_t queue;                   /* the port queue it polls (0: one queue) */

    /* run-to-wakeup (mode_rtw.c) */
    pthread_t thread;
    bool thread_started;
    int stop;                         /* atomic: the stack thread ends */
    uint64_t seen_changes;            /* lsock_changes at the last wake-up */
    struct rt_sleeper *sleepers;      /* under mu */
    int waking;                       /* atomic: the stack thread is writing wake fds it
                                       * took off sleepers, after unlocking mu */
};

static inline struct stack_ctx *sctx_of(struct stack_loop *l)
{
    return (struct stack_ctx *)l;
}

/* Take c's lock; a take that finds it held is counted and timed (two reads
 * of the rounds' clock, stack/round_acct.h, only then). */
static inline void sctx_lock(struct stack_ctx *c)
{
    if (futex_trylock(&c->mu))
        return;
    uint64_t t0 = round_clock_now();
    __atomic_add_fetch(&c->mu_waiters, 1, __ATOMIC_RELAXED);
    futex_lock(&c->mu);
    __atomic_sub_fetch(&c->mu_waiters, 1, __ATOMIC_RELAXED);
    /* under the lock: read by the control thread without it (relaxed) */
    __atomic_store_n(&c->lock_wait_cycles, c->lock_wait_cycles + (round_clock_now() - t0), __ATOMIC_RELAXED);
    __atomic_store_n(&c->lock_waits, c->lock_waits + 1, __ATOMIC_RELAXED);
}

static inline void sctx_unlock(struct stack_ctx *c)
{
    futex_unlock(&c->mu);
}

static inline bool sctx_contended(struct stack_ctx *c)
{
    return __atomic_load_n(&c->mu_waiters, __ATOMIC_RELAXED) != 0;
}

/* Under the lock: one poll round of c's stack, by its owner (flushes the
 * ACKs the application's reads owe first, and does the work the sockets
 * left for the round). Returns frames received. */
unsigned sctx_poll(struct stack_ctx *c);

/* The loop operations both modes share (runtime.c): the lock, and the
 * low-power wake-up of the context's port (sleep.c). */
void sctx_loop_lock(struct stack_loop *l);
void sctx_loop_unlock(struct stack_loop *l);
bool sctx_loop_contended(struct stack_loop *l);
int sctx_wake_begin(struct stack_loop *l);
void sctx_wake_end(struct stack_loop *l);

#endif
