/*
 * epoll_fd.c - see epoll_fd.h. Owns the link between an epoll fd and its
 * lepoll: the fd table entry (epoll_fd_ops: close drops the fd's reference,
 * dup shares the lepoll), the lookup of a socket fd's lsock, and the
 * creation of a lepoll on the first EPOLL_CTL_ADD of a stack socket.
 *
 * An epoll fd stays a kernel epoll instance; a lepoll is its stack half.
 *
 * Design: docs/design.md#epoll-fds-belong-to-the-posix-layer
 */
#include <errno.h>
#include <stdbool.h>

#include "common/libc.h"
#include "common/stack_loop.h"
#include "event/event.h"
#include "posix/epoll_fd.h"
#include "posix/fdtable.h"
#include "posix/sock_fd.h"
#include "runtime/runtime.h"
#include "sock/lsock.h"

/* Under the fd table's lock: the lepoll recorded for epfd; NULL with
 * *not_epoll set if epfd is owned by lstack but is no epoll (a stack
 * socket). */
static struct lepoll *lepoll_lookup(int epfd, bool *not_epoll)
{
    struct fd_entry *e = fdt_get(epfd);
    *not_epoll = e != NULL && e->ops != &epoll_fd_ops;
    return e != NULL && e->ops == &epoll_fd_ops ? e->obj : NULL;
}

/* Under the fd table's lock: the lepoll for epfd, created if create and
 * epfd is a kernel epoll fd without one, with a reference for the caller.
 * fd is the stack socket being operated on (a real kernel socket): a DEL of
 * it on the kernel set validates epfd like Linux (EBADF: not an fd, EINVAL:
 * not an epoll fd) and is a no-op, since the kernel set holds fd only when
 * it was mirrored, which needs a lepoll. Returns NULL with errno (ENOENT:
 * valid epoll fd, no lepoll, !create). */
static struct lepoll *lepoll_for(int epfd, int fd, bool create)
{
    bool not_epoll;
    struct lepoll *lep = lepoll_lookup(epfd, &not_epoll);
    if (lep != NULL) {
        ev_lepoll_get(lep);
        return lep;
    }
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
    lep = ev_lepoll_new();
    if (lep == NULL) {
        errno = ENOMEM;
        return NULL;
    }
    if (fdt_set(epfd, &epoll_fd_ops, lep) != 0) {
        ev_lepoll_put(lep);
        return NULL;
    }
    ev_lepoll_get(lep); /* the caller's; the fd holds the first */
    return lep;
}

int epfd_ctl(int epfd, int op, int fd, struct epoll_event *ev)
{
    bool kernel_half = false;
    struct lsock *s = sockfd_hold(fd, &kernel_half);
    if (s == NULL)
        return libc.epoll_ctl(epfd, op, fd, ev);
    int rc = -1;
    if (ev_epoll_check(epfd, op, fd, ev) == 0) {
        fdt_lock();
        struct lepoll *lep = lepoll_for(epfd, fd, op == EPOLL_CTL_ADD);
        fdt_unlock();
        if (lep != NULL) {
            struct stack_loop *l = lsock_loop(s);
            loop_lock(l);
            rc = ev_epoll_ctl(lep, epfd, op, fd, s, kernel_half, ev);
            int saved = errno;
            loop_unlock(l);
            ev_lepoll_put(lep);
            errno = saved;
        }
    }
    int saved = errno;
    lsock_release(s);
    errno = saved;
    return rc;
}

int epfd_pwait(int epfd, struct epoll_event *evs, int max, int timeout_ms, const sigset_t *mask)
{
    struct fd_entry *e = fdt_get(epfd); /* lock-free first look */
    if (e == NULL || e->ops != &epoll_fd_ops || rt_is_child())
        return libc.epoll_pwait(epfd, evs, max, timeout_ms, mask);
    bool not_epoll;
    fdt_lock();
    struct lepoll *lep = lepoll_lookup(epfd, &not_epoll);
    if (lep != NULL)
        ev_lepoll_get(lep);
    fdt_unlock();
    if (lep == NULL)
        return libc.epoll_pwait(epfd, evs, max, timeout_ms, mask);
    int rc = ev_epoll_pwait(lep, epfd, evs, max, timeout_ms, mask);
    int saved = errno;
    ev_lepoll_put(lep);
    errno = saved;
    return rc;
}

/* ---- the epoll fd's ops ---- */

static int epoll_fd_close(struct fd_entry *e, int fd)
{
    fdt_lock();
    struct lepoll *lep = e->obj;
    fdt_clear(fd);
    fdt_unlock();
    /* In a forked child the lepoll and the sockets are the parent's: only
     * drop the view. */
    if (lep != NULL && !rt_is_child())
        ev_lepoll_put(lep);
    return libc.close(fd);
}

static int epoll_fd_dup(struct fd_entry *e, int fd, int newfd)
{
    (void)fd;
    fdt_lock();
    struct lepoll *lep = e->obj;
    ev_lepoll_get(lep);
    int rc = fdt_set(newfd, &epoll_fd_ops, lep);
    int saved = errno;
    fdt_unlock();
    if (rc != 0)
        ev_lepoll_put(lep);
    errno = saved;
    return rc;
}

const struct fd_ops epoll_fd_ops = {
    .kind = "epoll",
    .close = epoll_fd_close,
    .dup = epoll_fd_dup,
};
