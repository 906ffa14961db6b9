/*
 * select.c - select/pselect over a mix of stack sockets and kernel fds, by
 * way of ev_ppoll.
 *
 * A call whose sets hold no stack socket goes straight to the kernel. The
 * others become a pollfd array (on the C stack: at most FD_SETSIZE fds) and
 * the result is mapped back the way Linux's select maps poll bits:
 * readable = POLLIN|POLLRDNORM|POLLRDBAND|POLLHUP|POLLERR, writable =
 * POLLOUT|POLLWRNORM|POLLWRBAND|POLLERR, exceptional = POLLPRI. A kernel fd
 * that poll reports as POLLNVAL makes the call fail with EBADF, like Linux.
 *
 * Design: docs/design.md#select-is-poll-underneath
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#include "event/ev_priv.h"
#include "event/event.h"
#include "common/libc.h"

enum {
    SEL_IN = POLLIN | POLLRDNORM | POLLRDBAND | POLLHUP | POLLERR,
    SEL_OUT = POLLOUT | POLLWRNORM | POLLWRBAND | POLLERR,
    SEL_EX = POLLPRI,
};

static bool in_set(const fd_set *s, int fd)
{
    return s != NULL && FD_ISSET(fd, s);
}

/* Build the pollfd array for the fds in any set. Returns how many, and
 * whether one of them is a stack socket in *stack. */
static int sel_build(int nfds, fd_set *r, fd_set *w, fd_set *e, struct pollfd *pfds, bool *stack,
                     const struct ev_fd_lookup *lk)
{
    int np = 0;
    *stack = false;
    for (int fd = 0; fd < nfds; fd++) {
        short events = (short)((in_set(r, fd) ? POLLIN : 0) | (in_set(w, fd) ? POLLOUT : 0) |
                               (in_set(e, fd) ? POLLPRI : 0));
        if (events == 0)
            continue;
        pfds[np++] = (struct pollfd){.fd = fd, .events = events};
        if (!*stack && lk->is_sock(fd))
            *stack = true;
    }
    return np;
}

/* Write the result back into the sets. Returns the number of bits set, or
 * -1 with EBADF if an fd was not open. */
static int sel_result(const struct pollfd *pfds, int np, fd_set *r, fd_set *w, fd_set *e)
{
    for (int i = 0; i < np; i++)
        if (pfds[i].revents & POLLNVAL) {
            errno = EBADF;
            return -1;
        }
    int count = 0;
    for (int i = 0; i < np; i++) {
        int fd = pfds[i].fd;
        short rev = pfds[i].revents;
        if (in_set(r, fd) && !(rev & SEL_IN)) {
            FD_CLR(fd, r);
        } else if (in_set(r, fd)) {
            count++;
        }
        if (in_set(w, fd) && !(rev & SEL_OUT)) {
            FD_CLR(fd, w);
        } else if (in_set(w, fd)) {
            count++;
        }
        if (in_set(e, fd) && !(rev & SEL_EX)) {
            FD_CLR(fd, e);
        } else if (in_set(e, fd)) {
            count++;
        }
    }
    return count;
}

static uint64_t sel_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

int ev_pselect(int nfds, fd_set *r, fd_set *w, fd_set *e, int timeout_ms, const sigset_t *mask,
               const struct ev_fd_lookup *lk)
{
    struct pollfd pfds[FD_SETSIZE];
    bool stack = false;
    int np = 0;
    if (nfds > 0 && nfds <= FD_SETSIZE)
        np = sel_build(nfds, r, w, e, pfds, &stack, lk);
    if (!stack) {
        struct timespec ts = {.tv_sec = timeout_ms / 1000, .tv_nsec = (long)(timeout_ms % 1000) * 1000000L};
        return libc.pselect(nfds, r, w, e, timeout_ms < 0 ? NULL : &ts, mask);
    }

    /* Poll reports POLLERR/POLLHUP even for an fd only in the except set:
     * such a result sets no bit, so wait on until a bit or the deadline. */
    uint64_t deadline = timeout_ms < 0 ? UINT64_MAX : sel_now_ns() + (uint64_t)timeout_ms * 1000000u;
    int left = timeout_ms;
    for (;;) {
        int rc = ev_ppoll(pfds, (nfds_t)np, left, mask, lk);
        if (rc < 0)
            return -1;
        if (rc > 0) {
            fd_set r0, w0, e0; /* sel_result clears bits: keep the request */
            if (r != NULL)
                r0 = *r;
            if (w != NULL)
                w0 = *w;
            if (e != NULL)
                e0 = *e;
            int count = sel_result(pfds, np, r, w, e);
            if (count != 0)
                return count;
            if (r != NULL)
                *r = r0;
            if (w != NULL)
                *w = w0;
            if (e != NULL)
                *e = e0;
        }
        uint64_t now = sel_now_ns();
        if (timeout_ms >= 0 && now >= deadline)
            break;
        if (timeout_ms >= 0)
            left = (int)((deadline - now + 999999) / 1000000); /* round up */
    }
    if (r != NULL)
        FD_ZERO(r);
    if (w != NULL)
        FD_ZERO(w);
    if (e != NULL)
        FD_ZERO(e);
    return 0;
}
