/*
 * epoll_fd.h - epoll fds as the POSIX layer sees them: which epoll fd has a
 * stack half (a lepoll, recorded in the fd table with epoll_fd_ops),
 * epoll_ctl and epoll_wait at the fd level. The event layer (event/) does
 * the rest knowing only sockets and lepolls.
 *
 * Errors: like the POSIX calls (-1 and errno). Any thread; the stack lock
 * is taken inside. In a forked child every call goes to the kernel.
 */
#ifndef LSTACK_EPOLL_FD_H
#define LSTACK_EPOLL_FD_H

#include <signal.h>
#include <sys/epoll.h>

#include "posix/fd_ops.h"

extern const struct fd_ops epoll_fd_ops;

/* epoll_ctl: a stack socket goes to the epoll fd's lepoll (created on its
 * first EPOLL_CTL_ADD), anything else to the kernel's set. */
int epfd_ctl(int epfd, int op, int fd, struct epoll_event *ev);

/* epoll_pwait (mask may be NULL: epoll_wait): with a lepoll, the event
 * layer's wait over both halves; without, the kernel's. */
int epfd_pwait(int epfd, struct epoll_event *evs, int max, int timeout_ms, const sigset_t *mask);

#endif
