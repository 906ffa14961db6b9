/*
 * socket_calls.c - socket, bind, listen, accept, accept4, connect, shutdown,
 * getsockopt, setsockopt, getsockname, getpeername: route each call to the
 * fd's ops, or to libc for a kernel fd.
 */
#include <errno.h>
#include <netinet/in.h>

#include "common/pkt_fanout.h"
#include "posix/calls.h"
#include "posix/fd_ops.h"
#include "posix/sock_fd.h"
#include "runtime/runtime.h"

int lstack_socket(int domain, int type, int protocol)
{
    int fd = libc.socket(domain, type, protocol);
    if (fd < 0 || domain != AF_INET || (type & 0xff) != SOCK_STREAM ||
        (protocol != 0 && protocol != IPPROTO_TCP))
        return fd;
    if (rt_state() != RT_READY && !rt_ensure())
        return fd;
    if (sockfd_adopt(fd, type) != 0) {
        int saved = errno;
        libc.close(fd);
        errno = saved;
        return -1;
    }
    return fd;
}

int lstack_bind(int fd, const struct sockaddr *addr, socklen_t len)
{
    struct fd_entry *e = fdt_get(fd);
    if (e == NULL || e->ops->bind == NULL)
        return libc.bind(fd, addr, len);
    return e->ops->bind(e, fd, addr, len);
}

int lstack_listen(int fd, int backlog)
{
    struct fd_entry *e = fdt_get(fd);
    if (e == NULL || e->ops->listen == NULL)
        return libc.listen(fd, backlog);
    return e->ops->listen(e, fd, backlog);
}

int lstack_accept4(int fd, struct sockaddr *addr, socklen_t *len, int flags)
{
    struct fd_entry *e = fdt_get(fd);
    if (e == NULL || e->ops->accept4 == NULL)
        return libc.accept4(fd, addr, len, flags);
    return e->ops->accept4(e, fd, addr, len, flags);
}

int lstack_accept(int fd, struct sockaddr *addr, socklen_t *len)
{
    struct fd_entry *e = fdt_get(fd);
    if (e == NULL || e->ops->accept4 == NULL)
        return libc.accept(fd, addr, len);
    return e->ops->accept4(e, fd, addr, len, 0);
}

int lstack_connect(int fd, const struct sockaddr *addr, socklen_t len)
{
    struct fd_entry *e = fdt_get(fd);
    if (e == NULL || e->ops->connect == NULL)
        return libc.connect(fd, addr, len);
    return e->ops->connect(e, fd, addr, len);
}

int lstack_shutdown(int fd, int how)
{
    struct fd_entry *e = fdt_get(fd);
    if (e == NULL || e->ops->shutdown == NULL)
        return libc.shutdown(fd, how);
    return e->ops->shutdown(e, fd, how);
}

int lstack_getsockopt(int fd, int level, int name, void *val, socklen_t *len)
{
    struct fd_entry *e = fdt_get(fd);
    if (e == NULL || e->ops->getsockopt == NULL)
        return libc.getsockopt(fd, level, name, val, len);
    return e->ops->getsockopt(e, fd, level, name, val, len);
}

int lstack_setsockopt(int fd, int level, int name, const void *val, socklen_t len)
{
    struct fd_entry *e = fdt_get(fd);
    if (e == NULL || e->ops->setsockopt == NULL) {
        int scratch; /* the af_packet PMD's fanout without kernel defrag (common/pkt_fanout.h) */
        return libc.setsockopt(fd, level, name, pkt_fanout_fix(level, name, val, len, &scratch), len);
    }
    return e->ops->setsockopt(e, fd, level, name, val, len);
}

int lstack_getsockname(int fd, struct sockaddr *addr, socklen_t *len)
{
    struct fd_entry *e = fdt_get(fd);
    if (e == NULL || e->ops->getsockname == NULL)
        return libc.getsockname(fd, addr, len);
    return e->ops->getsockname(e, fd, addr, len);
}

int lstack_getpeername(int fd, struct sockaddr *addr, socklen_t *len)
{
    struct fd_entry *e = fdt_get(fd);
    if (e == NULL || e->ops->getpeername == NULL)
        return libc.getpeername(fd, addr, len);
    return e->ops->getpeername(e, fd, addr, len);
}
