/*
 * event.h - epoll, poll and select over a mix of kernel fds and stack sockets,
 * and the blocking wait for one stack socket.
 *
 * Every socket knows its loop (stack context: common/stack_loop.h); a wait
 * locks, polls and sleeps on the loops of the sockets it watches, through
 * the table their mode gives them, never on a process-wide lock.
 *
 * The event layer knows sockets, not fds: the POSIX layer owns the fd table
 * and hands in what an fd is (a lepoll for an epoll fd, posix/epoll_fd.c; a
 * lookup function for poll and select).
 *
 * Errors: like the POSIX calls (-1 and errno). Any thread; the loops' locks
 * are taken inside.
 */
#ifndef LSTACK_EVENT_H
#define LSTACK_EVENT_H

#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/epoll.h>
#include <sys/select.h>

/*
 * Run-to-completion: the calling thread polls its sockets' loops while it
 * waits, so the wait loops below are where packets get processed. Kernel fds
 * are waited for through the real epoll/poll with a zero timeout in the
 * loop (and a real sleep in low_power_mode). Run-to-wakeup: the stack
 * thread polls; a waiting thread sleeps in the kernel on its kernel fds and
 * a wake fd (ev_wait_sleeping below). Timeouts are exact (monotonic
 * clock): an idle epoll_wait(..., 100) returns after 100 ms.
 *
 * epoll: an epoll fd that never watched a stack socket is the kernel's. On the
 * first EPOLL_CTL_ADD of a stack socket it gets a lepoll (the POSIX layer
 * records it for the fd): an interest list of stack sockets, with a
 * ready list fed by each item's socket watcher (sock/lsock.h). LT, ET and EPOLLONESHOT as on Linux; the
 * kernel half of a 0.0.0.0 listener is also added to the kernel epoll set.
 */

struct lsock;
struct lepoll;

/* How an application thread waits: one table per stack_thread_mode, which
 * the mode puts in its loops' table (stack_loop_ops.wait).
 *  ev_wait_polling   run-to-completion: the waiting thread polls the loops
 *                    (stack_loop_ops.poll) round after round (event/wait.c);
 *  ev_wait_sleeping  run-to-wakeup: it looks at the sockets, then sleeps in
 *                    the kernel on its kernel fds and its wake fd, which the
 *                    stack threads signal (event/wait_sleep.c). */
struct ev_wait_ops;
extern const struct ev_wait_ops ev_wait_polling;
extern const struct ev_wait_ops ev_wait_sleeping;

/* This process has written to (or closed) a kernel fd: the next round of
 * any run-to-completion wait looks at its kernel fds even if it has stack
 * events and the kernel part is not due yet (a pipe written before
 * epoll_wait is reported with the stack's events, as on Linux). Any
 * thread; one atomic addition. Calls that glibc makes internally (e.g.
 * eventfd_write) are not seen: they wait at most EV_KERNEL_CHECK_US. */
void ev_kernel_written(void);

/* What the POSIX layer, which owns the fd table, tells poll and select of
 * an fd (posix/sock_fd.c sockfd_lookup). Any thread, without a lock.
 *  is_sock  a hint: fd is a stack socket now;
 *  hold     the stack socket behind fd, held (lsock_hold: it stays valid
 *           until the caller's lsock_release, even if another thread closes
 *           fd), or NULL (a kernel fd, or none); *kernel_half tells whether
 *           fd's kernel socket also serves it (the kernel half of a
 *           0.0.0.0 listener). */
struct ev_fd_lookup {
    bool (*is_sock)(int fd);
    struct lsock *(*hold)(int fd, bool *kernel_half);
};

/* ---- epoll: lepolls (the stack half of an epoll fd) ---- */

/* A new lepoll holding one reference, or NULL (ENOMEM). */
struct lepoll *ev_lepoll_new(void);
/* Take / drop a reference (an fd, a dup of it, a waiter inside
 * ev_epoll_pwait; an atomic count: the caller makes sure lep is alive to
 * take one); the last put detaches every item from its socket (under each
 * loop's lock in turn) and frees the lepoll. Without a loop's lock. */
void ev_lepoll_get(struct lepoll *lep);
void ev_lepoll_put(struct lepoll *lep);

/* The argument checks Linux makes before looking at the sets: 0, or -1
 * with errno (EINVAL: unknown op, epfd == fd, EPOLLEXCLUSIVE on MOD;
 * EFAULT: no event for ADD / MOD). */
int ev_epoll_check(int epfd, int op, int fd, const struct epoll_event *ev);

/* epoll_ctl of stack socket s (added as fd; mirrored into the kernel set
 * of epfd too with kernel_half) on lep, after ev_epoll_check. Under the
 * lock of s's loop. 0, or -1 with errno (EEXIST, ENOENT, ENOMEM, or the
 * kernel's for the mirror). */
int ev_epoll_ctl(struct lepoll *lep, int epfd, int op, int fd, struct lsock *s, bool kernel_half,
                 struct epoll_event *ev);

/* epoll_pwait over lep and the kernel set of epfd. The caller holds a
 * reference to lep (so a concurrent close cannot free it) and no loop's
 * lock.
 * mask may be NULL (epoll_wait). timeout_ms < 0: forever. mask is the
 * thread's signal mask for the whole wait; a handler that runs while the
 * loop spins does not end the wait with EINTR (only a signal that arrives
 * during the kernel check does; docs/compat.md). Same for ev_ppoll and
 * ev_pselect. */
int ev_epoll_pwait(struct lepoll *lep, int epfd, struct epoll_event *evs, int max, int timeout_ms,
                   const sigset_t *mask);

/* ---- poll and select ---- */

/* timeout_ms < 0: forever. mask may be NULL. lk tells which fds are
 * stack sockets. */
int ev_ppoll(struct pollfd *fds, nfds_t n, int timeout_ms, const sigset_t *mask, const struct ev_fd_lookup *lk);
int ev_pselect(int nfds, fd_set *r, fd_set *w, fd_set *e, int timeout_ms, const sigset_t *mask,
               const struct ev_fd_lookup *lk);

/* Remove s from every epoll set (called before lsock_close, under the lock
 * of s's loop). */
void ev_forget_sock(struct lsock *s);

/* Block until s (and, with kernel_half, the kernel listener on fd) has one of
 * events (or EPOLLERR/EPOLLHUP), polling the stack meanwhile. timeout_ms < 0:
 * forever. Returns the events seen (> 0), 0 on timeout. The kernel half
 * counts only for EPOLLIN (a connection to accept). Signals do not end the
 * wait (like SA_RESTART). Preserves errno. Called WITHOUT a loop's lock
 * held; s is held (lsock_hold) for the wait. */
uint32_t ev_wait_sock(struct lsock *s, int fd, bool kernel_half, uint32_t events, long timeout_ms);

#endif
