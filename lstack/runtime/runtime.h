/*
 * runtime.h - the preload's process-wide state: is this process bound, is the
 * stack up, the stack lock, the poll driver, fork.
 *
 * Threads: rt_state is a plain read (any thread). Everything that touches a
 * stack (lsock_*, stack_*, rt_poll) runs under rt_lock(), the lock of the
 * stacks' contexts (runtime/stack_ctx.h: stack 0's, which every stack of
 * the process shares), except run-to-wakeup's ring reads and writes
 * (lsock_ring_recv / _send).
 */
#ifndef LSTACK_RUNTIME_H
#define LSTACK_RUNTIME_H

#include <stdbool.h>
#include <stdint.h>

/*
 * States:
 *   RT_PASSIVE  not bound (GAZELLE_BIND_PROCNAME is not this executable), or
 *               init failed with init_fail = "kernel", or a forked child:
 *               every call goes to libc.
 *   RT_UNINIT   bound, stack not started yet (it starts on the first AF_INET
 *               stream socket(): lazily, so `daemonize yes` forks first).
 *   RT_INIT     starting: calls from any thread go to libc (EAL's threads).
 *   RT_READY    the stack runs; AF_INET stream sockets may live on it.
 * A forked child is RT_PASSIVE with rt_is_child() true: it never touches
 * DPDK or lwIP; closing an inherited stack fd only drops its own view.
 */

struct stack;

enum rt_state { RT_PASSIVE = 0, RT_UNINIT, RT_INIT, RT_READY };

extern volatile int rt_state_v;

static inline enum rt_state rt_state(void)
{
    return (enum rt_state)rt_state_v;
}

/* Start the stack if this process is bound and it has not started yet.
 * Returns true if the stack is ready. On failure logs why (stderr + syslog),
 * then per init_fail either returns false for good (RT_PASSIVE) or stops the
 * process with that message. Any thread; concurrent callers wait. */
bool rt_ensure(void);

/* The stack lock: serialises every use of a stack. Not recursive. */
void rt_lock(void);
void rt_unlock(void);

/* True while another thread waits in rt_lock: a spinning poller yields then,
 * or it would take the lock again before the waiter wakes up. */
bool rt_lock_contended(void);

/* Under rt_lock, by the stack's owner only (run-to-completion's waiting
 * thread; runtime/stack_ctx.h): one poll round of every stack (rx, lwIP,
 * timers, tx). Returns frames received. Never called in run-to-wakeup, where
 * the stack thread polls. */
unsigned rt_poll(void);

/* Under rt_lock, after a call that queued frames which should leave now
 * (connect, shutdown, close): run-to-completion sends the stack's tx batch;
 * run-to-wakeup leaves it to the stack thread's next round. Never a poll
 * round: nothing but the owner polls a queue. */
void rt_flush(void);

/* run-to-wakeup (runtime/mode_rtw.c), for the event layer's sleeping wait.
 * rt_sleep_arm, under rt_lock, right after the caller found nothing ready:
 * links the calling thread as a sleeper of the stack and returns its wake
 * fd (an eventfd, the thread's own, readable once the stack thread has
 * seen a socket's readiness change since), or -errno. rt_sleep_disarm,
 * under rt_lock: unlinks it (if still linked). rt_sleep_drain, without the
 * lock: consumes the fd's count after it was readable. */
int rt_sleep_arm(void);
void rt_sleep_disarm(void);
void rt_sleep_drain(int fd);

/* Under rt_lock, in RT_READY: the stack a new AF_INET socket is created
 * on. With several stacks (runtime/stacks.c) each call gives the next one
 * in turn. */
struct stack *rt_stack(void);

/* How many stacks run (RT_READY; 0 before), and stack i of them (NULL out
 * of range). Any thread; the stack itself under rt_lock. */
int rt_stack_count(void);
struct stack *rt_stack_nth(int i);

/* Under rt_lock, after lsock_listen(ls) succeeded: the same listener on
 * every other stack (lsock_listen_copy), or their backlog updated after
 * listen() again. Returns 0 or lsock_listen_copy's -errno (ls listens on
 * the stacks done so far). Nothing to do with one stack. */
struct lsock;
int rt_listen_everywhere(struct lsock *ls);

/* host_addr (network byte order). Only in RT_READY. */
uint32_t rt_host_addr(void);

/* True if addr (network byte order) must be served by the kernel even in
 * RT_READY: 127.0.0.0/8, and the stack's own address (lwIP's loopback path
 * aborts the process, so traffic to ourselves goes through the kernel). */
bool rt_addr_is_kernel(uint32_t addr);

/* True in a child forked from a bound process. */
bool rt_is_child(void);

/* low_power_mode from the config (the wait loops may sleep when idle). */
bool rt_low_power(void);

/* Low-power sleep with a wake-up (runtime/sleep.c). rt_can_wake: the port
 * can wake a sleeping waiter (ltran's). rt_sleep_begin: about to sleep;
 * returns an fd to poll (POLLIN) with the kernel fds, after which
 * rt_sleep_end must be called; -EAGAIN: frames are waiting (do not sleep);
 * -ENOTSUP: no wake-up (sleep the timed way). Any thread, without rt_lock. */
bool rt_can_wake(void);
int rt_sleep_begin(void);
void rt_sleep_end(void);

/* Monotonic milliseconds (cheap: vDSO coarse clock is not enough for exact
 * epoll timeouts, so this is CLOCK_MONOTONIC). */
uint64_t rt_now_ms(void);

#endif
