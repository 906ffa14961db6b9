/*
 * epoll.c - the stack half of epoll instances: lepoll objects, their
 * interest and ready lists, epoll_ctl on them, each item's watcher (what
 * the sock layer calls), ev_forget_sock. epoll_wait is in epoll_wait.c.
 * Design: docs/design.md#stack-readiness-reaches-epoll-through-watchers
 */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>

#include "event/ev_priv.h"
#include "event/event.h"
#include "common/libc.h"
#include "common/stack_loop.h"
#include "sock/lsock.h"

/*
 * An epoll fd stays a kernel epoll instance. The first EPOLL_CTL_ADD of a
 * stack socket gives it a lepoll (the POSIX layer records which epoll fd has
 * which: posix/epoll_fd.c): kernel fds keep going to the kernel set, stack
 * sockets to the lepoll. A lepoll has a part per loop (stack context) whose
 * sockets it watches, under that loop's lock: stacks share no lock for the
 * readiness of one set. Each epitem sits on three lists: its socket's
 * watchers (so a readiness change finds it in O(watchers)), its part's
 * interest list (so close can detach them all) and, while it may be ready,
 * its part's ready list. A watcher's changed() only queues its item: readiness is computed by the
 * waiter, once per item per wait, like Linux's ep_poll_callback /
 * ep_send_events split.
 *
 * EPOLL_CTL_DEL parks the item instead of freeing it: it stays on its
 * socket's watcher list and its lepoll's interest list, disabled, off the
 * ready list, invisible to every other op; the next ADD of the same fd to
 * the same lepoll takes it back. Clients that re-arm by DEL + ADD (Redis's
 * ae: redis-benchmark deletes and adds its socket's event twice per
 * request) then pay no allocation and no list work for it. A
 * parked item is freed with its socket (ev_forget_sock) or its lepoll.
 */

/* ---- lists (under the item's loop's lock) ---- */

void ev_ready_add(struct epitem *it)
{
    if (it->ready)
        return;
    struct lepoll_part *p = &it->ep->part[it->part];
    it->ready = true;
    p->nready++;
    ev_list_append(&p->ready, &it->in_ready);
}

void ev_ready_del(struct epitem *it)
{
    if (!it->ready)
        return;
    it->ready = false;
    it->ep->part[it->part].nready--;
    ev_list_del(&it->in_ready);
}

static struct epitem *item_of_watcher(struct lsock_watcher *w)
{
    return (struct epitem *)((char *)w - offsetof(struct epitem, w));
}

/* The item's watcher, called by the sock layer under its loop's lock
 * (inside a round or an lsock call): queue the item, if armed, for a check by the
 * waiter; or, when the socket now has none of the events it reports (its
 * events were computed just before, lsock_events_told), take it off the
 * ready list, as the waiter's check would: a level-triggered item that
 * reported EPOLLIN stays queued after its report, and the read that
 * drains it would otherwise cost the next wait a check for nothing. */
static void item_changed(struct lsock_watcher *w)
{
    struct epitem *it = item_of_watcher(w);
    if (it->disabled)
        return;
    if (lsock_events_told(it->sock) & it->told_mask)
        ev_ready_add(it);
    else
        ev_ready_del(it);
}

/* The item's interest (epoll_ctl's events), and the socket events that
 * make it report (told_mask: lsock_events bits, before ev_sock_bits adds
 * EPOLLRDNORM / EPOLLWRNORM). */
static void set_interest(struct epitem *it, uint32_t events)
{
    it->events = events;
    it->told_mask = events | EPOLLERR | EPOLLHUP;
    if (events & EPOLLRDNORM)
        it->told_mask |= EPOLLIN;
    if (events & EPOLLWRNORM)
        it->told_mask |= EPOLLOUT;
}

static void watcher_link(struct epitem *it)
{
    it->w.changed = item_changed;
    lsock_watcher_link(lsock_watchers(it->sock), &it->w);
}

/* Detach it from its socket and its lepoll, and free it. */
static void item_free(struct epitem *it)
{
    lsock_watcher_unlink(&it->w);
    ev_ready_del(it);
    ev_list_del(&it->in_interest);
    if (it->kernel_half)
        __atomic_sub_fetch(&it->ep->nkernel_half, 1, __ATOMIC_RELAXED);
    free(it);
}

/* The item of lep watching s as fd (parked or not), or NULL. */
static struct epitem *item_find(struct lepoll *lep, struct lsock *s, int fd)
{
    for (struct lsock_watcher *w = *lsock_watchers(s); w != NULL; w = w->next) {
        struct epitem *it = item_of_watcher(w);
        if (it->ep == lep && it->fd == fd)
            return it;
    }
    return NULL;
}

/* Set it's interest from ev and queue it for its initial check. */
static void item_arm(struct epitem *it, const struct epoll_event *ev)
{
    set_interest(it, ev->events);
    it->data = ev->data;
    it->disabled = false;
    ev_ready_add(it); /* reported by the next wait if ready */
}

/* ---- sockets that go away ---- */

/* Linux drops a socket from every epoll set when its last fd closes; the
 * POSIX layer calls this then. A kernel half needs no DEL: the kernel does
 * the same when the kernel socket under the fd is closed right after. */
void ev_forget_sock(struct lsock *s)
{
    struct lsock_watcher **head = lsock_watchers(s);
    while (*head != NULL)
        item_free(item_of_watcher(*head));
}

/* ---- lepoll life cycle ---- */

struct lepoll *ev_lepoll_new(void)
{
    struct lepoll *lep = calloc(1, sizeof(*lep));
    if (lep == NULL)
        return NULL;
    lep->refs = 1;
    for (unsigned i = 0; i < STACK_LOOP_MAX; i++) {
        ev_list_init(&lep->part[i].interest);
        ev_list_init(&lep->part[i].ready);
    }
    return lep;
}

void ev_lepoll_get(struct lepoll *lep)
{
    __atomic_add_fetch(&lep->refs, 1, __ATOMIC_RELAXED);
}

/* The last reference detaches every item from its socket, a part at a
 * time under its loop's lock, and frees the lepoll. The kernel set needs
 * nothing: it dies with the kernel epoll file. */
void ev_lepoll_put(struct lepoll *lep)
{
    if (__atomic_sub_fetch(&lep->refs, 1, __ATOMIC_ACQ_REL) > 0)
        return;
    for (unsigned i = 0; i < STACK_LOOP_MAX; i++) {
        struct stack_loop *l = __atomic_load_n(&lep->loops[i], __ATOMIC_ACQUIRE);
        if (l == NULL)
            continue;
        struct lepoll_part *p = &lep->part[i];
        l->ops->lock(l);
        while (!ev_list_empty(&p->interest))
            item_free(ev_item_of_interest(p->interest.next));
        l->ops->unlock(l);
    }
    free(lep);
}

/* ---- epoll_ctl ---- */

static int ctl_add(struct lepoll *lep, int epfd, int fd, struct lsock *s, bool kernel_half,
                   struct epoll_event *ev)
{
    struct epitem *it = item_find(lep, s, fd);
    if (it != NULL && !it->parked) {
        errno = EEXIST;
        return -1;
    }
    if (kernel_half && libc.epoll_ctl(epfd, EPOLL_CTL_ADD, fd, ev) != 0)
        return -1;
    if (it != NULL) { /* deleted before: take it back */
        it->parked = false;
        it->kernel_half = kernel_half;
    } else {
        it = calloc(1, sizeof(*it));
        if (it == NULL) {
            if (kernel_half)
                libc.epoll_ctl(epfd, EPOLL_CTL_DEL, fd, NULL);
            errno = ENOMEM;
            return -1;
        }
        struct stack_loop *l = lsock_loop(s);
        it->ep = lep;
        it->part = l->index;
        it->sock = s;
        it->fd = fd;
        it->kernel_half = kernel_half;
        watcher_link(it);
        ev_list_append(&lep->part[it->part].interest, &it->in_interest);
        ev_list_init(&it->in_ready);
        if (__atomic_load_n(&lep->loops[it->part], __ATOMIC_RELAXED) == NULL)
            __atomic_store_n(&lep->loops[it->part], l, __ATOMIC_RELEASE); /* epoll_wait looks there from now on */
    }
    if (kernel_half)
        __atomic_add_fetch(&lep->nkernel_half, 1, __ATOMIC_RELAXED);
    item_arm(it, ev);
    return 0;
}

static int ctl_mod(struct epitem *it, int epfd, int fd, struct epoll_event *ev)
{
    if (it->kernel_half && libc.epoll_ctl(epfd, EPOLL_CTL_MOD, fd, ev) != 0)
        return -1;
    item_arm(it, ev);
    return 0;
}

/* Park it (see the top of this file): disabled, off the ready list, out
 * of the kernel set. */
static int ctl_del(struct epitem *it, int epfd, int fd)
{
    if (it->kernel_half) {
        libc.epoll_ctl(epfd, EPOLL_CTL_DEL, fd, NULL); /* may be gone already */
        __atomic_sub_fetch(&it->ep->nkernel_half, 1, __ATOMIC_RELAXED);
        it->kernel_half = false;
    }
    ev_ready_del(it);
    it->disabled = true;
    it->parked = true;
    return 0;
}

int ev_epoll_check(int epfd, int op, int fd, const struct epoll_event *ev)
{
    if (op != EPOLL_CTL_ADD && op != EPOLL_CTL_MOD && op != EPOLL_CTL_DEL) {
        errno = EINVAL;
        return -1;
    }
    if (op != EPOLL_CTL_DEL && ev == NULL) {
        errno = EFAULT;
        return -1;
    }
    if (epfd == fd || (op == EPOLL_CTL_MOD && (ev->events & EPOLLEXCLUSIVE))) {
        errno = EINVAL;
        return -1;
    }
    return 0;
}

int ev_epoll_ctl(struct lepoll *lep, int epfd, int op, int fd, struct lsock *s, bool kernel_half,
                 struct epoll_event *ev)
{
    if (op == EPOLL_CTL_ADD)
        return ctl_add(lep, epfd, fd, s, kernel_half, ev);
    struct epitem *it = item_find(lep, s, fd);
    if (it == NULL || it->parked) {
        errno = ENOENT;
        return -1;
    }
    return op == EPOLL_CTL_MOD ? ctl_mod(it, epfd, fd, ev) : ctl_del(it, epfd, fd);
}
