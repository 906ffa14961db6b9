/*
 * epoll_wait.c - epoll_wait / epoll_pwait on an epoll fd with a lepoll: the
 * ready-list walk (LT, ET, ONESHOT, fairness) and the kernel half of the set.
 * Design: docs/design.md#epoll_wait-reports-from-the-ready-list-after-the-round
 */
#include <errno.h>
#include <limits.h>

#include "event/ev_priv.h"
#include "event/event.h"
#include "common/libc.h"
#include "common/stack_loop.h"
#include "sock/lsock.h"

/*
 * The walk (a part of the set at a time, under that part's loop's lock,
 * after its poll round) takes each queued item off the head of the part's
 * ready list, computes its readiness, and reports it if any
 * interest bit (or EPOLLERR/EPOLLHUP) is set. A level-triggered item that
 * reported goes back to the TAIL of the list, so with a small maxevents the
 * items behind it get their turn on the next call (Linux does the same in
 * ep_send_events). An edge-triggered item leaves the list until
 * its watcher queues it again; a one-shot item is disabled until
 * EPOLL_CTL_MOD; an item with nothing to report leaves the list.
 *
 * The kernel set (kernel fds, kernel halves of 0.0.0.0 listeners) fills the
 * slots left after the stack events, when it is due (wait.c: at most every
 * EV_KERNEL_CHECK_US, the due time kept in the lepoll across calls, and
 * always before a call returns nothing). When the stack filled every slot
 * and the kernel set could not be looked at, the next call reserves one slot
 * for it and makes it due at once, so kernel fds are never starved by a
 * busy stack.
 *
 * A 0.0.0.0 listener is in both sets; when both halves report in one call,
 * the two events (same epoll_data) are merged into one.
 */

struct ep_wait {
    struct lepoll *lep;
    int epfd;
    struct epoll_event *evs;
    int max;
    int limit;           /* this round's slots for stack events (one less when the kernel is owed) */
    bool merge;          /* the set holds kernel halves: merge duplicates */
};

/* Under the part's loop's lock: report up to limit ready items into evs.
 * Out of line: ep_stack calls it only when the ready list has items (an
 * idle round's empty look stays a few instructions). */
static __attribute__((noinline)) int ep_collect(struct lepoll_part *p, struct epoll_event *evs, int limit)
{
    int n = 0;
    unsigned todo = p->nready;
    while (todo-- > 0 && n < limit) {
        struct epitem *it = ev_item_of_ready(p->ready.next);
        ev_ready_del(it);
        uint32_t ev = ev_sock_bits(lsock_events(it->sock)) & (it->events | EPOLLERR | EPOLLHUP);
        if (ev == 0)
            continue;
        evs[n].events = ev;
        evs[n].data = it->data;
        n++;
        if (it->events & EPOLLONESHOT)
            it->disabled = true;
        else if (!(it->events & EPOLLET))
            ev_ready_add(it); /* level-triggered: stays, at the tail */
    }
    return n;
}

/* The loops of the set's parts; the start of a round: the slots the
 * stack may fill this round. */
static unsigned ep_loops(void *ctx, struct stack_loop **out)
{
    struct ep_wait *w = ctx;
    unsigned n = 0;
    for (unsigned i = 0; i < STACK_LOOP_MAX; i++) {
        struct stack_loop *l = __atomic_load_n(&w->lep->loops[i], __ATOMIC_ACQUIRE);
        if (l != NULL)
            out[n++] = l;
    }
    w->limit = w->max;
    if (__atomic_load_n(&w->lep->kernel_owed, __ATOMIC_RELAXED)) {
        w->limit--; /* may be 0: the kernel set goes first this round */
        __atomic_store_n(&w->lep->kernel_due.at, 0, __ATOMIC_RELAXED); /* and now */
    }
    w->merge = __atomic_load_n(&w->lep->nkernel_half, __ATOMIC_RELAXED) > 0;
    return n;
}

static int ep_stack(void *ctx, struct stack_loop *l, int n)
{
    struct ep_wait *w = ctx;
    struct lepoll_part *p = &w->lep->part[l->index];
    return p->nready == 0 || n >= w->limit ? n : n + ep_collect(p, w->evs + n, w->limit - n);
}

/* Fold kernel events evs[n..n+k) whose data equals a stack event's into it
 * (the two halves of one 0.0.0.0 listener). Returns the new k. */
static int ep_merge(struct epoll_event *evs, int n, int k)
{
    for (int j = n; j < n + k;) {
        int i = 0;
        while (i < n && evs[i].data.u64 != evs[j].data.u64)
            i++;
        if (i == n) {
            j++;
            continue;
        }
        evs[i].events |= evs[j].events;
        evs[j] = evs[n + k - 1];
        k--;
    }
    return k;
}

static int ep_kernel(void *ctx, int n, int timeout_ms)
{
    struct ep_wait *w = ctx;
    if (n >= w->max) {
        __atomic_store_n(&w->lep->kernel_owed, true, __ATOMIC_RELAXED);
        return n;
    }
    __atomic_store_n(&w->lep->kernel_owed, false, __ATOMIC_RELAXED);
    int k = libc.epoll_wait(w->epfd, w->evs + n, w->max - n, timeout_ms);
    if (k < 0)
        return n > 0 ? n : -1;
    if (k > 0 && n > 0 && w->merge)
        k = ep_merge(w->evs, n, k);
    return n + k;
}

static struct ev_kernel_due *ep_kernel_due(void *ctx)
{
    struct ep_wait *w = ctx;
    return &w->lep->kernel_due;
}

static int ep_kernel_fds(void *ctx, struct pollfd *fds, int max)
{
    struct ep_wait *w = ctx;
    if (max < 1)
        return -1;
    fds[0] = (struct pollfd){.fd = w->epfd, .events = POLLIN}; /* the kernel epoll set itself */
    return 1;
}

/* run-to-wakeup: the kernel epoll fd is readable when its set has an
 * event; sleep on it and the wake fd. */
static int ep_block(void *ctx, int wake_fd, int timeout_ms)
{
    struct ep_wait *w = ctx;
    struct pollfd p[2] = {{.fd = w->epfd, .events = POLLIN}, {.fd = wake_fd, .events = POLLIN}};
    return ev_block_fds(p, wake_fd >= 0 ? 2 : 1, wake_fd >= 0 ? 1 : -1, timeout_ms);
}

static const struct ev_source ep_source = {
    .loops = ep_loops,
    .stack = ep_stack,
    .kernel = ep_kernel,
    .kernel_due = ep_kernel_due,
    .kernel_fds = ep_kernel_fds,
    .block = ep_block,
};

int ev_epoll_pwait(struct lepoll *lep, int epfd, struct epoll_event *evs, int max, int timeout_ms,
                   const sigset_t *mask)
{
    int rc = -1;
    if (max <= 0 || max > (int)(INT_MAX / sizeof(struct epoll_event))) {
        errno = EINVAL;
    } else if (evs == NULL) {
        errno = EFAULT;
    } else {
        struct ep_wait w = {.lep = lep, .epfd = epfd, .evs = evs, .max = max};
        rc = ev_wait(&ep_source, &w, timeout_ms, mask);
        for (unsigned i = 0; i < STACK_LOOP_MAX; i++) {
            struct stack_loop *l = __atomic_load_n(&lep->loops[i], __ATOMIC_ACQUIRE);
            if (l == NULL)
                continue;
            loop_count(&l->app_epoll_waits); /* on the loop of the set's first stack (stackctl show stats) */
            if (rc > 0)
                loop_count(&l->app_wakeups);
            break;
        }
    }
    return rc;
}
