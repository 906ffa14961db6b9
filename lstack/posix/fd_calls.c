/*
 * fd_calls.c - close, dup, dup2, dup3, fcntl, fcntl64, ioctl.
 *
 * dup of a stack socket makes a second fd for the same socket (a kernel dup
 * of its placeholder, sharing the stack object); the socket closes with its
 * last fd, like Linux. dup2/dup3 onto an owned fd close that fd's object
 * first (the kernel closes the old file silently, so must we).
 */
#include <errno.h>
#include <fcntl.h>

#include "event/event.h"
#include "posix/calls.h"
#include "posix/fd_ops.h"

int lstack_close(int fd)
{
    struct fd_entry *e = fdt_get(fd);
    if (e == NULL || e->ops->close == NULL) {
        int r = libc.close(fd);
        ev_kernel_written(); /* a pipe's reader may see EOF now (event.h) */
        return r;
    }
    return e->ops->close(e, fd);
}

/* newfd was just made by the kernel as a copy of fd: share fd's object. */
static int share(struct fd_entry *e, int fd, int newfd)
{
    if (newfd < 0 || e == NULL || e->ops->dup == NULL)
        return newfd;
    if (e->ops->dup(e, fd, newfd) != 0) {
        int saved = errno;
        libc.close(newfd);
        errno = saved;
        return -1;
    }
    return newfd;
}

int lstack_dup(int fd)
{
    return share(fdt_get(fd), fd, libc.dup(fd));
}

/* dup2/dup3 replace fd2: drop lstack's object behind it first. */
static void release_target(int fd2)
{
    struct fd_entry *e2 = fdt_get(fd2);
    if (e2 != NULL && e2->ops->close != NULL)
        e2->ops->close(e2, fd2); /* also closes the kernel fd; dup2 reopens it */
}

int lstack_dup2(int fd, int fd2)
{
    if (fd == fd2)
        return libc.dup2(fd, fd2);
    struct fd_entry *e = fdt_get(fd);
    if (e == NULL && fdt_get(fd2) == NULL)
        return libc.dup2(fd, fd2);
    release_target(fd2);
    return share(e, fd, libc.dup2(fd, fd2));
}

int lstack_dup3(int fd, int fd2, int flags)
{
    struct fd_entry *e = fdt_get(fd);
    if (fd == fd2 || (e == NULL && fdt_get(fd2) == NULL))
        return libc.dup3(fd, fd2, flags);
    release_target(fd2);
    return share(e, fd, libc.dup3(fd, fd2, flags));
}

int lstack_fcntl(int fd, int cmd, long arg)
{
    struct fd_entry *e = fdt_get(fd);
    if (e == NULL || e->ops->fcntl == NULL)
        return libc.fcntl(fd, cmd, arg);
    return e->ops->fcntl(e, fd, cmd, arg);
}

int lstack_fcntl64(int fd, int cmd, long arg)
{
    struct fd_entry *e = fdt_get(fd);
    if (e == NULL || e->ops->fcntl == NULL)
        return libc.fcntl64(fd, cmd, arg);
    return e->ops->fcntl(e, fd, cmd, arg);
}

int lstack_ioctl(int fd, unsigned long req, long arg)
{
    struct fd_entry *e = fdt_get(fd);
    if (e == NULL || e->ops->ioctl == NULL)
        return libc.ioctl(fd, req, arg);
    return e->ops->ioctl(e, fd, req, (void *)arg);
}
