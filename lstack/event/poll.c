/*
 * poll.c - poll/ppoll over a mix of stack sockets and kernel fds.
 *
 * Revents follow Linux for a TCP socket: POLLIN|POLLRDNORM when readable,
 * POLLOUT|POLLWRNORM when writable, POLLRDHUP, and POLLERR/POLLHUP whether
 * asked for or not; a negative fd gets revents 0.
 * Design: docs/design.md#poll-splits-stack-and-kernel-fds
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "event/ev_priv.h"
#include "event/event.h"
#include "common/libc.h"
#include "common/stack_loop.h"
#include "sock/lsock.h"

/*
 * The array is split once per call: stack sockets (their revents come from
 * lsock_events, each round) and kernel fds (a copy polled by the kernel
 * with a zero timeout, rate-limited by the shared wait loop). A 0.0.0.0
 * listener is in both parts and gets the union. A call without any stack
 * socket goes straight to the kernel with its own timeout: that is most
 * poll calls (a forked child's, libraries' own fds) and they pay nothing.
 *
 * Scratch space for the split lives on the C stack for small arrays and is
 * malloc'ed (once per call) beyond EV_POLL_SMALL entries.
 */

_Static_assert(POLLIN == EPOLLIN && POLLOUT == EPOLLOUT && POLLERR == EPOLLERR &&
                   POLLHUP == EPOLLHUP && POLLRDHUP == EPOLLRDHUP && POLLRDNORM == EPOLLRDNORM &&
                   POLLWRNORM == EPOLLWRNORM && POLLPRI == EPOLLPRI,
               "poll and epoll bits differ");

enum { EV_POLL_SMALL = 32 };

struct poll_sock {
    nfds_t idx;          /* in the caller's array */
    struct lsock *s;     /* held for the call (ev_fd_lookup.hold) */
    struct stack_loop *l; /* its loop */
};

struct poll_wait {
    struct pollfd *fds;
    struct poll_sock *socks;
    nfds_t nsocks;
    struct stack_loop *loops[STACK_LOOP_MAX]; /* the sockets' loops */
    unsigned nloops;
    struct pollfd *kfds; /* the kernel part, a copy */
    nfds_t *kidx;        /* kfds[j] is fds[kidx[j]] */
    nfds_t nk;
};

static unsigned pw_loops(void *ctx, struct stack_loop **out)
{
    struct poll_wait *w = ctx;
    for (unsigned i = 0; i < w->nloops; i++)
        out[i] = w->loops[i];
    return w->nloops;
}

/* Under l's lock: the revents of l's sockets. */
static int pw_stack(void *ctx, struct stack_loop *l, int n)
{
    struct poll_wait *w = ctx;
    for (nfds_t i = 0; i < w->nsocks; i++) {
        if (w->socks[i].l != l)
            continue;
        struct pollfd *p = &w->fds[w->socks[i].idx];
        uint32_t ev = ev_sock_bits(lsock_events(w->socks[i].s));
        p->revents = (short)(ev & ((uint16_t)p->events | POLLERR | POLLHUP));
        n += p->revents != 0;
    }
    return n;
}

static int pw_kernel(void *ctx, int n, int timeout_ms)
{
    struct poll_wait *w = ctx;
    if (w->nk == 0 && timeout_ms == 0)
        return n;
    int k = libc.poll(w->kfds, w->nk, timeout_ms);
    if (k < 0)
        return n > 0 ? n : -1;
    for (nfds_t j = 0; j < w->nk && k > 0; j++) {
        short rev = w->kfds[j].revents;
        if (rev == 0)
            continue;
        k--;
        struct pollfd *p = &w->fds[w->kidx[j]];
        n += p->revents == 0;
        p->revents |= rev;
    }
    return n;
}

static int pw_kernel_fds(void *ctx, struct pollfd *fds, int max)
{
    struct poll_wait *w = ctx;
    if (w->nk > (nfds_t)max)
        return -1;
    for (nfds_t j = 0; j < w->nk; j++)
        fds[j] = (struct pollfd){.fd = w->kfds[j].fd, .events = w->kfds[j].events};
    return (int)w->nk;
}

/* run-to-wakeup: sleep on the kernel part and the wake fd, which takes
 * the slot after it (the scratch arrays have one more). */
static int pw_block(void *ctx, int wake_fd, int timeout_ms)
{
    struct poll_wait *w = ctx;
    nfds_t n = w->nk;
    int slot = -1;
    if (wake_fd >= 0) {
        slot = (int)n;
        w->kfds[n++] = (struct pollfd){.fd = wake_fd, .events = POLLIN};
    }
    return ev_block_fds(w->kfds, n, slot, timeout_ms);
}

static const struct ev_source poll_source = {
    .loops = pw_loops,
    .stack = pw_stack,
    .kernel = pw_kernel,
    .kernel_fds = pw_kernel_fds,
    .block = pw_block,
};

/* The loop of a socket of the wait, among w->loops (added if new). */
static struct stack_loop *pw_loop(struct poll_wait *w, struct lsock *s)
{
    struct stack_loop *l = lsock_loop(s);
    for (unsigned i = 0; i < w->nloops; i++)
        if (w->loops[i] == l)
            return l;
    w->loops[w->nloops++] = l;
    return l;
}

/* Split fds into w (scratch arrays already set, sized n), holding each
 * stack socket. Returns the number of stack sockets. */
static nfds_t pw_split(struct poll_wait *w, struct pollfd *fds, nfds_t n, const struct ev_fd_lookup *lk)
{
    w->fds = fds;
    w->nsocks = 0;
    w->nloops = 0;
    w->nk = 0;
    for (nfds_t i = 0; i < n; i++) {
        fds[i].revents = 0;
        if (fds[i].fd < 0)
            continue;
        bool kernel_half = false;
        struct lsock *s = lk->hold(fds[i].fd, &kernel_half);
        if (s != NULL)
            w->socks[w->nsocks++] = (struct poll_sock){.idx = i, .s = s, .l = pw_loop(w, s)};
        if (s == NULL || kernel_half) {
            w->kfds[w->nk] = (struct pollfd){.fd = fds[i].fd, .events = fds[i].events};
            w->kidx[w->nk++] = i;
        }
    }
    return w->nsocks;
}

/* True if some fd of fds is a stack socket (the cheap pre-check). */
static bool any_stack_sock(const struct pollfd *fds, nfds_t n, const struct ev_fd_lookup *lk)
{
    for (nfds_t i = 0; i < n; i++)
        if (fds[i].fd >= 0 && lk->is_sock(fds[i].fd))
            return true;
    return false;
}

static int kernel_ppoll(struct pollfd *fds, nfds_t n, int timeout_ms, const sigset_t *mask)
{
    struct timespec ts = {.tv_sec = timeout_ms / 1000, .tv_nsec = (long)(timeout_ms % 1000) * 1000000L};
    return libc.ppoll(fds, n, timeout_ms < 0 ? NULL : &ts, mask);
}

int ev_ppoll(struct pollfd *fds, nfds_t n, int timeout_ms, const sigset_t *mask, const struct ev_fd_lookup *lk)
{
    if (fds == NULL || !any_stack_sock(fds, n, lk))
        return kernel_ppoll(fds, n, timeout_ms, mask);

    /* kfds has one slot more than fds: pw_block's wake fd. */
    struct poll_sock small_socks[EV_POLL_SMALL];
    struct pollfd small_kfds[EV_POLL_SMALL + 1];
    nfds_t small_kidx[EV_POLL_SMALL];
    struct poll_wait w = {.socks = small_socks, .kfds = small_kfds, .kidx = small_kidx};
    void *heap = NULL;
    if (n > EV_POLL_SMALL) {
        size_t each = sizeof(struct poll_sock) + sizeof(struct pollfd) + sizeof(nfds_t);
        if (n >= SIZE_MAX / each) {
            errno = EINVAL;
            return -1;
        }
        heap = malloc((n + 1) * each);
        if (heap == NULL) {
            errno = ENOMEM;
            return -1;
        }
        w.socks = heap;
        w.kfds = (struct pollfd *)(w.socks + n);
        w.kidx = (nfds_t *)(w.kfds + n + 1);
    }
    /* The sockets are held for the wait: another thread may close one. */
    pw_split(&w, fds, n, lk);
    int rc = w.nsocks > 0 ? ev_wait(&poll_source, &w, timeout_ms, mask) : kernel_ppoll(fds, n, timeout_ms, mask);
    int saved = errno;
    for (nfds_t i = 0; i < w.nsocks; i++)
        lsock_release(w.socks[i].s);
    free(heap);
    errno = saved;
    return rc;
}
