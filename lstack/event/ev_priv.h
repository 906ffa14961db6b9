/*
 * ev_priv.h - what the files of the event layer share: the intrusive list,
 * the epoll objects (struct lepoll, struct epitem), the shared wait loop, and
 * the mapping of a socket's readiness to poll/epoll bits.
 *
 * Locking: a lepoll keeps one part per loop (stack context) whose sockets
 * it watches; a part, and the epitems on it, are read and written under
 * that loop's lock (the sockets' watchers run inside the loop's rounds and
 * calls, under the same lock), so that stacks never share a lock for
 * readiness: an epoll_wait looks at each part in turn. refs, nkernel_half,
 * loops[], kernel_owed and kernel_due are atomics.
 */
#ifndef LSTACK_EV_PRIV_H
#define LSTACK_EV_PRIV_H

#include <signal.h>
#include <poll.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/epoll.h>

#include "common/stack_loop.h"
#include "sock/lsock.h"

/* ---- a circular doubly-linked list with a head node ---- */

struct ev_link {
    struct ev_link *prev, *next;
};

static inline void ev_list_init(struct ev_link *h)
{
    h->prev = h->next = h;
}

static inline bool ev_list_empty(const struct ev_link *h)
{
    return h->next == h;
}

/* Insert l before h (at the tail of the list h heads). */
static inline void ev_list_append(struct ev_link *h, struct ev_link *l)
{
    l->prev = h->prev;
    l->next = h;
    h->prev->next = l;
    h->prev = l;
}

/* Unlink l; it then forms a list of its own. */
static inline void ev_list_del(struct ev_link *l)
{
    l->prev->next = l->next;
    l->next->prev = l->prev;
    l->prev = l->next = l;
}

/* ---- epoll objects ---- */

/* One stack socket in one lepoll's interest list. */
struct epitem {
    struct lepoll *ep;
    unsigned part;           /* its socket's loop (ep->part[part]) */
    struct lsock *sock;
    int fd;                  /* the fd it was added as (the key, with ep) */
    uint32_t events;         /* interest, incl. EPOLLET / EPOLLONESHOT */
    uint32_t told_mask;      /* the lsock_events bits it reports (epoll.c set_interest) */
    epoll_data_t data;
    bool ready;              /* on ep's ready list */
    bool disabled;           /* EPOLLONESHOT fired; re-armed by EPOLL_CTL_MOD */
    bool parked;             /* deleted (EPOLL_CTL_DEL), kept for the next ADD (epoll.c) */
    bool kernel_half;        /* fd was mirrored into the kernel epoll set at ADD */
    struct lsock_watcher w;  /* on the socket's watcher list (sock/lsock.h) */
    struct ev_link in_interest;
    struct ev_link in_ready;
};

/* The stack half of an epoll instance. The kernel epoll fd it belongs to
 * carries the kernel half (kernel fds, kernel halves of 0.0.0.0 listeners). */
/* When a kernel part is next due: at (ev_clock ns), or as soon as this
 * process has written to or closed a kernel fd since the last look (epoch:
 * ev_kernel_epoch's value then), so that a pipe this process (any thread)
 * wrote before an epoll_wait is reported by it with the stack events, as
 * on Linux. Relaxed atomics. */
struct ev_kernel_due {
    uint64_t at;
    uint64_t epoch;
};

/* The items of one loop's sockets, under that loop's lock. */
struct lepoll_part {
    struct ev_link interest; /* epitem.in_interest */
    struct ev_link ready;    /* epitem.in_ready: maybe ready, to be checked */
    unsigned nready;
};

struct lepoll {
    unsigned refs;           /* fds sharing it (dup) + waiters inside epoll_wait (atomic) */
    /* The loops whose sockets it ever watched (set once, at the first ADD
     * of a socket of that loop; atomic), and their parts. */
    struct stack_loop *loops[STACK_LOOP_MAX];
    struct lepoll_part part[STACK_LOOP_MAX];
    unsigned nkernel_half;   /* items mirrored into the kernel set (atomic) */
    /* The last epoll_wait filled every slot from the stack without looking
     * at the kernel set: the next one reserves a slot for the kernel. Read
     * and written outside the lock (a hint: relaxed atomics). */
    bool kernel_owed;
    /* When the kernel set is next due to be looked at (ev_clock ns, see
     * ev_source.kernel_due): kept across calls, so that a busy set pays one
     * kernel check per EV_KERNEL_CHECK_US, not one per call. Relaxed atomics
     * (a hint shared by the threads waiting on this set). */
    struct ev_kernel_due kernel_due;
};

static inline struct epitem *ev_item_of_ready(struct ev_link *l)
{
    return (struct epitem *)((char *)l - offsetof(struct epitem, in_ready));
}

static inline struct epitem *ev_item_of_interest(struct ev_link *l)
{
    return (struct epitem *)((char *)l - offsetof(struct epitem, in_interest));
}

/* epoll.c. Under its loop's lock: put it on its part's ready list (if not
 * there) / take it off (if there). */
void ev_ready_add(struct epitem *it);
void ev_ready_del(struct epitem *it);

/* ---- readiness bits ---- */

/* A socket's readiness (lsock_events) with the bits Linux adds for a TCP
 * socket: EPOLLRDNORM with EPOLLIN, EPOLLWRNORM with EPOLLOUT. Poll and
 * epoll bits have the same values on Linux (checked in poll.c). */
static inline uint32_t ev_sock_bits(uint32_t ev)
{
    if (ev & EPOLLIN)
        ev |= EPOLLRDNORM;
    if (ev & EPOLLOUT)
        ev |= EPOLLWRNORM;
    return ev;
}

/* ---- the shared wait loop (wait.c) ---- */


/* What one wait call watches: a stack part, on one or more loops, and a
 * kernel part.
 *  loops:  the loops whose sockets the wait looks at, into out (at most
 *          STACK_LOOP_MAX); called at the start of every round (a set may
 *          gain a loop meanwhile), before the looks.
 *  stack:  under l's lock (run-to-completion: right after l's poll round):
 *          look at the sockets of loop l, record what is ready after the n
 *          entries the round found so far, return the new total (>= n).
 *          Each round starts afresh (n = 0 at its first loop).
 *  kernel: without a lock: look at the kernel fds, waiting up to
 *          timeout_ms (0 except for low-power sleeps); n is what the stack
 *          part just found. Returns the new total (>= n), or -1 with errno
 *          (only worth reporting when n == 0).
 *  kernel_due: optional: where the kernel part's next due time (struct
 *          ev_kernel_due) is kept across calls; NULL: every
 *          call starts due (its first round looks at the kernel). Called
 *          once per wait.
 *  kernel_fds: the kernel part as pollfds (at most max), for a low-power
 *          sleep that a port can end (the loop's wake_begin: the wait
 *          polls them with the port's wake-up fd, then calls kernel with
 *          timeout 0). Returns the count, or -1 if more than max (then the
 *          sleep is the timed one). NULL: same as -1.
 *  block:  run-to-wakeup only, without a lock: sleep until a kernel fd of
 *          the set or wake_fd (-1: none) is readable, a signal, or
 *          timeout_ms (-1: no limit); the loop then asks stack and kernel
 *          again. Returns EV_BLOCK_WOKEN if wake_fd was readable, ORed
 *          with EV_BLOCK_KERNEL if a kernel fd was, 0 (the time), or
 *          -errno (EINTR).
 *  restart: a signal does not end the wait (a blocking socket call, as
 *          with SA_RESTART); else it ends it with EINTR (epoll, poll). */
struct ev_source {
    unsigned (*loops)(void *ctx, struct stack_loop **out);
    int (*stack)(void *ctx, struct stack_loop *l, int n);
    int (*kernel)(void *ctx, int n, int timeout_ms);
    struct ev_kernel_due *(*kernel_due)(void *ctx);
    int (*kernel_fds)(void *ctx, struct pollfd *fds, int max);
    int (*block)(void *ctx, int wake_fd, int timeout_ms);
    bool restart;
};

/* Is l one of ls[0..n)? (a wait's loops: a few) */
static inline bool ev_has_loop(struct stack_loop *const *ls, unsigned n, const struct stack_loop *l)
{
    for (unsigned i = 0; i < n; i++)
        if (ls[i] == l)
            return true;
    return false;
}

/* The mode's wait loop (event.h: ev_wait_polling, ev_wait_sleeping). */
struct ev_wait_ops {
    int (*wait)(const struct ev_source *src, void *ctx, long timeout_ms, const sigset_t *mask);
};

/* Wait until src has something (returns the count > 0), the timeout
 * passes (0; timeout_ms < 0: never, 0: exactly one round), or the kernel
 * part fails (-1, errno). mask (may be NULL) is the thread's signal mask
 * during the wait. The wait is the mode's of src's loops (their
 * stack_loop_ops.wait); run-to-completion polls the loops meanwhile; the
 * kernel part is consulted at most every EV_KERNEL_CHECK_US (kept across
 * calls where src->kernel_due says where), and always before a call
 * returns nothing: a round that returns stack events skips it unless it is
 * due. Called without a loop's lock. */
int ev_wait(const struct ev_source *src, void *ctx, long timeout_ms, const sigset_t *mask);

/* What ev_block_fds / ev_source.block report (bits). */
enum { EV_BLOCK_WOKEN = 1, EV_BLOCK_KERNEL = 2 };

/* Sleep in the kernel on fds (n of them, the last one may be the wake fd:
 * wake_slot, or -1) for at most timeout_ms (-1: no limit). Returns
 * EV_BLOCK_WOKEN if the wake slot was readable, ORed with EV_BLOCK_KERNEL
 * if another fd had events, 0 if none (the time), or -errno. wait_sleep.c. */
int ev_block_fds(struct pollfd *fds, nfds_t n, int wake_slot, int timeout_ms);

#endif
