/*
 * event_calls.c - epoll_create, epoll_create1, epoll_ctl, epoll_wait,
 * epoll_pwait, poll, ppoll, __poll_chk, select, pselect: to the epoll fds
 * (epoll_fd.c) and the event layer when stack sockets may be involved, else
 * straight to libc. poll and select tell the event layer which fds are
 * stack sockets with sockfd_lookup.
 */
#include <limits.h>

#include "event/event.h"
#include "posix/calls.h"
#include "posix/epoll_fd.h"
#include "posix/sock_fd.h"
#include "runtime/runtime.h"

int lstack_epoll_create(int size)
{
    return libc.epoll_create(size); /* an epoll fd becomes lstack's when it first watches a stack socket */
}

int lstack_epoll_create1(int flags)
{
    return libc.epoll_create1(flags);
}

int lstack_epoll_ctl(int epfd, int op, int fd, struct epoll_event *ev)
{
    if (rt_state() != RT_READY)
        return libc.epoll_ctl(epfd, op, fd, ev);
    return epfd_ctl(epfd, op, fd, ev);
}

int lstack_epoll_pwait(int epfd, struct epoll_event *evs, int max, int timeout, const sigset_t *mask)
{
    if (rt_state() != RT_READY || fdt_get(epfd) == NULL)
        return libc.epoll_pwait(epfd, evs, max, timeout, mask);
    return epfd_pwait(epfd, evs, max, timeout, mask);
}

int lstack_epoll_wait(int epfd, struct epoll_event *evs, int max, int timeout)
{
    if (rt_state() != RT_READY || fdt_get(epfd) == NULL)
        return libc.epoll_wait(epfd, evs, max, timeout);
    return epfd_pwait(epfd, evs, max, timeout, NULL);
}

/* A timespec/timeval timeout in whole ms, rounded up; -1 for none. */
static int ts_ms(const struct timespec *ts)
{
    if (ts == NULL)
        return -1;
    long long ms = (long long)ts->tv_sec * 1000 + (ts->tv_nsec + 999999) / 1000000;
    return ms > INT_MAX ? INT_MAX : (int)ms;
}

int lstack_poll(struct pollfd *fds, nfds_t n, int timeout)
{
    if (rt_state() != RT_READY)
        return libc.poll(fds, n, timeout);
    return ev_ppoll(fds, n, timeout, NULL, &sockfd_lookup);
}

int lstack_ppoll(struct pollfd *fds, nfds_t n, const struct timespec *ts, const sigset_t *mask)
{
    if (rt_state() != RT_READY)
        return libc.ppoll(fds, n, ts, mask);
    return ev_ppoll(fds, n, ts_ms(ts), mask, &sockfd_lookup);
}

int lstack___poll_chk(struct pollfd *fds, nfds_t n, int timeout, size_t fdslen)
{
    if (rt_state() != RT_READY || fdslen / sizeof(*fds) < n) /* libc reports the overflow */
        return libc.__poll_chk(fds, n, timeout, fdslen);
    return ev_ppoll(fds, n, timeout, NULL, &sockfd_lookup);
}

int lstack_select(int nfds, fd_set *r, fd_set *w, fd_set *e, struct timeval *tv)
{
    if (rt_state() != RT_READY)
        return libc.select(nfds, r, w, e, tv);
    struct timespec ts;
    if (tv != NULL) {
        ts.tv_sec = tv->tv_sec;
        ts.tv_nsec = tv->tv_usec * 1000;
    }
    return ev_pselect(nfds, r, w, e, ts_ms(tv != NULL ? &ts : NULL), NULL, &sockfd_lookup);
}

int lstack_pselect(int nfds, fd_set *r, fd_set *w, fd_set *e, const struct timespec *ts,
                   const sigset_t *mask)
{
    if (rt_state() != RT_READY)
        return libc.pselect(nfds, r, w, e, ts, mask);
    return ev_pselect(nfds, r, w, e, ts_ms(ts), mask, &sockfd_lookup);
}
