/*
 * epoll.c - the stack half of epoll instances: lepoll objects, their
 * interest and ready lists, epoll_ctl, the epoll fd's ops (close, dup), and
 * each item's watcher (what the sock layer calls), ev_forget_sock.
 * epoll_wait is in epoll_wait.c.
 *
 * An epoll fd stays a kernel epoll instance. The first EPOLL_CTL_ADD of a
 * stack socket gives it a lepoll (recorded in the fd table with
 * epoll_fd_ops): kernel fds keep going to the kernel set, stack sockets to
 * the lepoll. Each epitem sits on three lists: its socket's watchers (so a
 * readiness change finds it in O(watchers)), its lepoll's interest list (so
 * close can detach them all) and, while it may be ready, its lepoll's ready
 * list. A watcher's changed() only queues its item: readiness is computed by the
 * waiter, once per item per wait, like Linux's ep_poll_callback /
 * ep_send_events split.
 *
 * Rejected:
 *  - a private eventfd or kernel epoll per socket to make stack readiness
 *    visible to the kernel (a syscall per readiness change on the hot path);
 *  - finding an item by scanning the interest list or by a hash on fd: a
 *    socket has one watcher in practice, so its watcher list is the index;
 *  - computing readiness in changed() (it runs inside lwIP callbacks,
 *    several times per segment).
 */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>

#include "event/ev_priv.h"
#include "event/event.h"
#include "posix/fdtable.h"
#include "posix/libc.h"
#include "posix/sock_fd.h"
#include "runtime/runtime.h"
#include "sock/lsock.h"

/* ---- lists (under rt_lock) ---- */

void ev_ready_add(struct epitem *it)
{
    if (it->ready)
        return;
    it->ready = true;
    it->ep->nready++;
    ev_list_append(&it->ep->ready, &it->in_ready);
}

void ev_ready_del(struct epitem *it)
{
    if (!it->ready)
        return;
    it->ready = false;
    it->ep->nready--;
    ev_list_del(&it->in_ready);
}

static struct epitem *item_of_watcher(struct lsock_watcher *w)
{
    return (struct epitem *)((char *)w - offsetof(struct epitem, w));
}

/* The item's watcher, called by the sock layer under rt_lock (inside
 * rt_poll or an lsock call): queue the item, if armed, for a check by the
 * waiter. */
static void item_changed(struct lsock_watcher *w)
{
    struct epitem *it = item_of_watcher(w);
    if (!it->disabled)
        ev_ready_add(it);
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
        it->ep->nkernel_half--;
    free(it);
}

/* The item of lep watching s as fd, or NULL. */
static struct epitem *item_find(struct lepoll *lep, struct lsock *s, int fd)
{
    for (struct lsock_watcher *w = *lsock_watchers(s); w != NULL; w = w->next) {
        struct epitem *it = item_of_watcher(w);
        if (it->ep == lep && it->fd == fd)
            return it;
    }
    return NULL;
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

static struct lepoll *lepoll_new(void)
{
    struct lepoll *lep = calloc(1, sizeof(*lep));
    if (lep == NULL)
        return NULL;
    lep->refs = 1;
    ev_list_init(&lep->interest);
    ev_list_init(&lep->ready);
    return lep;
}

/* Under rt_lock: drop a reference; the last one detaches every item from
 * its socket and frees the lepoll. The kernel set needs nothing: it dies
 * with the kernel epoll file. */
static void lepoll_put(struct lepoll *lep)
{
    if (--lep->refs > 0)
        return;
    while (!ev_list_empty(&lep->interest))
        item_free(ev_item_of_interest(lep->interest.next));
    free(lep);
}

/* Under rt_lock: the lepoll recorded for epfd; NULL with *not_epoll set if
 * epfd is owned by lstack but is no epoll (a stack socket). */
static struct lepoll *lepoll_lookup(int epfd, bool *not_epoll)
{
    struct fd_entry *e = fdt_get(epfd);
    *not_epoll = e != NULL && e->ops != &epoll_fd_ops;
    return e != NULL && e->ops == &epoll_fd_ops ? e->obj : NULL;
}

struct lepoll *ev_lepoll_hold(int epfd)
{
    bool not_epoll;
    rt_lock();
    struct lepoll *lep = lepoll_lookup(epfd, &not_epoll);
    if (lep != NULL)
        lep->refs++;
    rt_unlock();
    return lep;
}

void ev_lepoll_release(struct lepoll *lep)
{
    rt_lock();
    lepoll_put(lep);
    rt_unlock();
}

/* Under rt_lock: the lepoll for epfd, created if create and epfd is a
 * kernel epoll fd without one. fd is the stack socket being operated on (a
 * real kernel socket): a DEL of it on the kernel set validates epfd like
 * Linux (EBADF: not an fd, EINVAL: not an epoll fd) and is a no-op, since
 * the kernel set holds fd only when it was mirrored, which needs a lepoll.
 * Returns NULL with errno (ENOENT: valid epoll fd, no lepoll, !create). */
static struct lepoll *lepoll_for(int epfd, int fd, bool create)
{
    bool not_epoll;
    struct lepoll *lep = lepoll_lookup(epfd, &not_epoll);
    if (lep != NULL)
        return lep;
    if (not_epoll) {
        errno = EINVAL;
        return NULL;
    }
    if (libc.epoll_ctl(epfd, EPOLL_CTL_DEL, fd, NULL) != 0 && errno != ENOENT)
        return NULL;
    if (!create) {
        errno = ENOENT;
        return NULL;
    }
    lep = lepoll_new();
    if (lep == NULL) {
        errno = ENOMEM;
        return NULL;
    }
    if (fdt_set(epfd, &epoll_fd_ops, lep) != 0) {
        free(lep);
        return NULL;
    }
    return lep;
}

/* ---- epoll_ctl ---- */

static int ctl_add(struct lepoll *lep, int epfd, int fd, struct lsock *s, bool kernel_half,
                   struct epoll_event *ev)
{
    if (item_find(lep, s, fd) != NULL) {
        errno = EEXIST;
        return -1;
    }
    struct epitem *it = calloc(1, sizeof(*it));
    if (it == NULL) {
        errno = ENOMEM;
        return -1;
    }
    if (kernel_half && libc.epoll_ctl(epfd, EPOLL_CTL_ADD, fd, ev) != 0) {
        free(it);
        return -1;
    }
    it->ep = lep;
    it->sock = s;
    it->fd = fd;
    it->events = ev->events;
    it->data = ev->data;
    it->kernel_half = kernel_half;
    if (kernel_half)
        lep->nkernel_half++;
    watcher_link(it);
    ev_list_append(&lep->interest, &it->in_interest);
    ev_list_init(&it->in_ready);
    ev_ready_add(it); /* initial check: reported by the next wait if ready */
    return 0;
}

static int ctl_mod(struct epitem *it, int epfd, int fd, struct epoll_event *ev)
{
    if (it->kernel_half && libc.epoll_ctl(epfd, EPOLL_CTL_MOD, fd, ev) != 0)
        return -1;
    it->events = ev->events;
    it->data = ev->data;
    it->disabled = false;
    ev_ready_add(it);
    return 0;
}

static int ctl_del(struct epitem *it, int epfd, int fd)
{
    if (it->kernel_half)
        libc.epoll_ctl(epfd, EPOLL_CTL_DEL, fd, NULL); /* may be gone already */
    item_free(it);
    return 0;
}

/* Argument checks Linux makes before looking at the sets. */
static int ctl_check(int epfd, int op, int fd, const struct epoll_event *ev)
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

int ev_epoll_ctl(int epfd, int op, int fd, struct epoll_event *ev)
{
    bool kernel_half = false;
    struct lsock *s = rt_is_child() ? NULL : sockfd_lsock(fd, &kernel_half);
    if (s == NULL)
        return libc.epoll_ctl(epfd, op, fd, ev);
    if (ctl_check(epfd, op, fd, ev) != 0)
        return -1;

    rt_lock();
    int rc = -1;
    struct lepoll *lep = lepoll_for(epfd, fd, op == EPOLL_CTL_ADD);
    if (lep != NULL && op == EPOLL_CTL_ADD) {
        rc = ctl_add(lep, epfd, fd, s, kernel_half, ev);
    } else if (lep != NULL) {
        struct epitem *it = item_find(lep, s, fd);
        if (it == NULL)
            errno = ENOENT;
        else if (op == EPOLL_CTL_MOD)
            rc = ctl_mod(it, epfd, fd, ev);
        else
            rc = ctl_del(it, epfd, fd);
    }
    int saved = errno;
    rt_unlock();
    errno = saved;
    return rc;
}

/* ---- the epoll fd's ops ---- */

static int epoll_fd_close(struct fd_entry *e, int fd)
{
    if (rt_is_child()) {
        /* The lepoll and the sockets are the parent's: only drop the view. */
        fdt_clear(fd);
        return libc.close(fd);
    }
    rt_lock();
    struct lepoll *lep = e->obj;
    fdt_clear(fd);
    if (lep != NULL)
        lepoll_put(lep);
    rt_unlock();
    return libc.close(fd);
}

static int epoll_fd_dup(struct fd_entry *e, int fd, int newfd)
{
    (void)fd;
    rt_lock();
    struct lepoll *lep = e->obj;
    lep->refs++;
    int rc = fdt_set(newfd, &epoll_fd_ops, lep);
    int saved = errno;
    if (rc != 0)
        lep->refs--;
    rt_unlock();
    errno = saved;
    return rc;
}

const struct fd_ops epoll_fd_ops = {
    .kind = "epoll",
    .close = epoll_fd_close,
    .dup = epoll_fd_dup,
};
