/*
 * event.h - epoll, poll and select over a mix of kernel fds and stack sockets,
 * and the blocking wait for one stack socket.
 *
 * Run-to-completion: the calling thread polls the stack (rt_poll) while it
 * waits, so the wait loops below are where packets get processed. Kernel fds
 * are waited for through the real epoll/poll with a zero timeout in the
 * loop (and a real sleep in low_power_mode). Timeouts are exact (monotonic
 * clock): an idle epoll_wait(..., 100) returns after 100 ms.
 *
 * epoll: an epoll fd that never watched a stack socket is the kernel's. On the
 * first EPOLL_CTL_ADD of a stack socket it gets an lepoll (registered in the
 * fd table with epoll_fd_ops): an interest list of stack sockets, with a
 * ready list fed by each item's socket watcher (sock/lsock.h). LT, ET and EPOLLONESHOT as on Linux; the
 * kernel half of a 0.0.0.0 listener is also added to the kernel epoll set.
 *
 * Errors: like the POSIX calls (-1 and errno). Any thread; the stack lock is
 * taken inside.
 */
#ifndef LSTACK_EVENT_H
#define LSTACK_EVENT_H

#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/epoll.h>
#include <sys/select.h>

#include "posix/fd_ops.h"

struct lsock;

extern const struct fd_ops epoll_fd_ops;

int ev_epoll_ctl(int epfd, int op, int fd, struct epoll_event *ev);
/* mask may be NULL (epoll_wait). timeout_ms < 0: forever. mask is the
 * thread's signal mask for the whole wait; a handler that runs while the
 * loop spins does not end the wait with EINTR (only a signal that arrives
 * during the kernel check does; docs/compat.md). Same for ev_ppoll and
 * ev_pselect. */
int ev_epoll_pwait(int epfd, struct epoll_event *evs, int max, int timeout_ms, const sigset_t *mask);

/* timeout_ms < 0: forever. mask may be NULL. */
int ev_ppoll(struct pollfd *fds, nfds_t n, int timeout_ms, const sigset_t *mask);
int ev_pselect(int nfds, fd_set *r, fd_set *w, fd_set *e, int timeout_ms, const sigset_t *mask);

/* Remove s from every epoll set (called before lsock_close, under rt_lock). */
void ev_forget_sock(struct lsock *s);

/* Block until s (and, with kernel_half, the kernel listener on fd) has one of
 * events (or EPOLLERR/EPOLLHUP), polling the stack meanwhile. timeout_ms < 0:
 * forever. Returns the events seen (> 0), 0 on timeout. The kernel half
 * counts only for EPOLLIN (a connection to accept). Signals do not end the
 * wait (like SA_RESTART). Preserves errno. Called WITHOUT the stack lock
 * held. */
uint32_t ev_wait_sock(struct lsock *s, int fd, bool kernel_half, uint32_t events, long timeout_ms);

#endif
