/*
 * runtime.h - the preload's process-wide state: is this process bound, are
 * the stacks up, which stack a new socket goes to, the hooks of the parts
 * that start and stop with them, fork. Each stack's lock, poll and sleep
 * are its context's (common/stack_loop.h), reached through its sockets.
 *
 * Threads: rt_state is a plain read (any thread). Everything that touches a
 * stack (lsock_*, stack_*) runs under the lock of that stack's context,
 * which every socket knows (lsock_loop, common/stack_loop.h), except
 * run-to-wakeup's ring reads and writes (lsock_ring_recv / _send).
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

/* In RT_READY: a new AF_INET socket on the stack whose turn it is (with
 * several stacks, runtime/stacks.c, each call gives the next one in
 * turn), made under that stack's lock, its fd recorded (lsock_set_fd).
 * Returns 0 or lsock_new's -errno. Any thread. */
struct lsock;
int rt_sock_new(int fd, struct lsock **out);

/* How many stacks run (RT_READY; 0 before), and stack i of them (NULL out
 * of range), and its loop (its context: common/stack_loop.h). Any thread;
 * the stack itself under its loop's lock. */
int rt_stack_count(void);
struct stack *rt_stack_nth(int i);
struct stack_loop *rt_loop_nth(int i);

/* Under stack i's lock (its loop's): its counters (stack_get_stats) and
 * those its context keeps: the application's calls on its sockets, the
 * waits for its lock. */
struct stack_stats;
void rt_stack_stats(int i, struct stack_stats *st);

/* After lsock_listen(ls) succeeded, without a lock: the same listener on
 * every other stack (lsock_listen_copy), or their backlog updated after
 * listen() again; it takes one stack's lock at a time. Returns 0 or
 * lsock_listen_copy's -errno (ls listens on the stacks done so far).
 * Nothing to do with one stack. */
int rt_listen_everywhere(struct lsock *ls);

/* host_addr (network byte order). Only in RT_READY. */
uint32_t rt_host_addr(void);

/* True if addr (network byte order) must be served by the kernel even in
 * RT_READY: 127.0.0.0/8, and the stack's own address (lwIP's loopback path
 * aborts the process, so traffic to ourselves goes through the kernel). */
bool rt_addr_is_kernel(uint32_t addr);

/* True in a child forked from a bound process. */
bool rt_is_child(void);

/* What other parts of the preload do when the stack starts and stops,
 * registered (from their constructors) rather than called by the runtime,
 * which knows none of them: the control socket (ctl/ctl_preload.c), the
 * sockets still open at exit (posix/sock_fd.c). Each member may be NULL.
 *  starting      just before the stack starts, on the thread that starts it;
 *  start_failed  it did not start;
 *  started       it runs (before RT_READY is published; conf and its path
 *                are read during the call only);
 *  stopping      at exit, before the stacks stop (in the reverse order of
 *                registration). */
struct lstack_conf;
struct rt_hooks {
    void (*starting)(void);
    void (*start_failed)(void);
    void (*started)(const struct lstack_conf *conf, const char *conf_path);
    void (*stopping)(void);
};
/* Register h (kept; at most RT_HOOKS_MAX). Before rt_ensure. */
#define RT_HOOKS_MAX 4
void rt_hooks_register(const struct rt_hooks *h);

/* Monotonic milliseconds (cheap: vDSO coarse clock is not enough for exact
 * epoll timeouts, so this is CLOCK_MONOTONIC). */
uint64_t rt_now_ms(void);

#endif
