/*
 * io_calls.c - the read family (read, readv, recv, recvfrom, recvmsg and the
 * fortified __read_chk, __recv_chk, __recvfrom_chk) and the write family
 * (write, writev, send, sendto, sendmsg). A kernel fd goes to libc with the
 * caller's exact call; a stack socket gets one recvmsg or sendmsg.
 */
#include <errno.h>
#include <string.h>

#include "ctl/app_counters.h"
#include "event/event.h"
#include "posix/calls.h"
#include "posix/fd_ops.h"
#include "posix/iov.h"

/* A kernel fd was written: tell the wait loop (event.h), errno kept. */
static inline ssize_t kernel_written(ssize_t r)
{
    ev_kernel_written();
    return r;
}

/* The fd's ops if it is owned and has a read/write path. */
static struct fd_entry *owned_io(int fd)
{
    struct fd_entry *e = fdt_get(fd);
    if (e != NULL && e->ops->recvmsg != NULL)
        return e;
    app_count_kernel_call(); /* stackctl show stats (the caller goes to libc) */
    return NULL;
}

static ssize_t recv_iov(struct fd_entry *e, int fd, struct iovec *iov, int cnt, int flags,
                        struct sockaddr *addr, socklen_t *len)
{
    struct msghdr msg;
    memset(&msg, 0, sizeof(msg));
    msg.msg_iov = iov;
    msg.msg_iovlen = (size_t)cnt;
    msg.msg_name = addr;
    msg.msg_namelen = len != NULL ? *len : 0;
    ssize_t n = e->ops->recvmsg(e, fd, &msg, flags);
    if (n >= 0 && len != NULL)
        *len = msg.msg_namelen;
    return n;
}

/* readv / writev: Linux takes 0..IOV_MAX entries and fails others with
 * EINVAL (recvmsg / sendmsg say EMSGSIZE: the sock layer checks those). */
static bool iov_count_ok(int cnt)
{
    if (cnt >= 0 && cnt <= LSTACK_IOV_MAX)
        return true;
    errno = EINVAL;
    return false;
}

static ssize_t send_iov(struct fd_entry *e, int fd, const struct iovec *iov, int cnt, int flags)
{
    struct msghdr msg;
    memset(&msg, 0, sizeof(msg));
    msg.msg_iov = (struct iovec *)iov;
    msg.msg_iovlen = (size_t)cnt;
    return e->ops->sendmsg(e, fd, &msg, flags);
}

ssize_t lstack_read(int fd, void *buf, size_t n)
{
    struct fd_entry *e = owned_io(fd);
    if (e == NULL)
        return libc.read(fd, buf, n);
    if (e->ops->read != NULL)
        return e->ops->read(e, fd, buf, n);
    struct iovec iov = {buf, n};
    return recv_iov(e, fd, &iov, 1, 0, NULL, NULL);
}

ssize_t lstack_readv(int fd, const struct iovec *iov, int cnt)
{
    struct fd_entry *e = owned_io(fd);
    if (e == NULL)
        return libc.readv(fd, iov, cnt);
    if (!iov_count_ok(cnt))
        return -1;
    return recv_iov(e, fd, (struct iovec *)iov, cnt, 0, NULL, NULL);
}

ssize_t lstack_recv(int fd, void *buf, size_t n, int flags)
{
    struct fd_entry *e = owned_io(fd);
    if (e == NULL)
        return libc.recv(fd, buf, n, flags);
    struct iovec iov = {buf, n};
    return recv_iov(e, fd, &iov, 1, flags, NULL, NULL);
}

ssize_t lstack_recvfrom(int fd, void *buf, size_t n, int flags, struct sockaddr *addr, socklen_t *len)
{
    struct fd_entry *e = owned_io(fd);
    if (e == NULL)
        return libc.recvfrom(fd, buf, n, flags, addr, len);
    struct iovec iov = {buf, n};
    return recv_iov(e, fd, &iov, 1, flags, addr, len);
}

ssize_t lstack_recvmsg(int fd, struct msghdr *msg, int flags)
{
    struct fd_entry *e = owned_io(fd);
    if (e == NULL)
        return libc.recvmsg(fd, msg, flags);
    return e->ops->recvmsg(e, fd, msg, flags);
}

ssize_t lstack___read_chk(int fd, void *buf, size_t n, size_t buflen)
{
    struct fd_entry *e = owned_io(fd);
    if (e == NULL || n > buflen) /* libc reports the overflow */
        return libc.__read_chk(fd, buf, n, buflen);
    struct iovec iov = {buf, n};
    return recv_iov(e, fd, &iov, 1, 0, NULL, NULL);
}

ssize_t lstack___recv_chk(int fd, void *buf, size_t n, size_t buflen, int flags)
{
    struct fd_entry *e = owned_io(fd);
    if (e == NULL || n > buflen)
        return libc.__recv_chk(fd, buf, n, buflen, flags);
    struct iovec iov = {buf, n};
    return recv_iov(e, fd, &iov, 1, flags, NULL, NULL);
}

ssize_t lstack___recvfrom_chk(int fd, void *buf, size_t n, size_t buflen, int flags,
                              struct sockaddr *addr, socklen_t *len)
{
    struct fd_entry *e = owned_io(fd);
    if (e == NULL || n > buflen)
        return libc.__recvfrom_chk(fd, buf, n, buflen, flags, addr, len);
    struct iovec iov = {buf, n};
    return recv_iov(e, fd, &iov, 1, flags, addr, len);
}

ssize_t lstack_write(int fd, const void *buf, size_t n)
{
    struct fd_entry *e = owned_io(fd);
    if (e == NULL)
        return kernel_written(libc.write(fd, buf, n));
    if (e->ops->write != NULL)
        return e->ops->write(e, fd, buf, n);
    struct iovec iov = {(void *)buf, n};
    return send_iov(e, fd, &iov, 1, 0);
}

ssize_t lstack_writev(int fd, const struct iovec *iov, int cnt)
{
    struct fd_entry *e = owned_io(fd);
    if (e == NULL)
        return kernel_written(libc.writev(fd, iov, cnt));
    if (!iov_count_ok(cnt))
        return -1;
    return send_iov(e, fd, iov, cnt, 0);
}

ssize_t lstack_send(int fd, const void *buf, size_t n, int flags)
{
    struct fd_entry *e = owned_io(fd);
    if (e == NULL)
        return kernel_written(libc.send(fd, buf, n, flags));
    struct iovec iov = {(void *)buf, n};
    return send_iov(e, fd, &iov, 1, flags);
}

ssize_t lstack_sendto(int fd, const void *buf, size_t n, int flags, const struct sockaddr *addr,
                      socklen_t len)
{
    struct fd_entry *e = owned_io(fd);
    if (e == NULL)
        return kernel_written(libc.sendto(fd, buf, n, flags, addr, len));
    /* A connected TCP socket ignores the address, like Linux. */
    struct iovec iov = {(void *)buf, n};
    return send_iov(e, fd, &iov, 1, flags);
}

ssize_t lstack_sendmsg(int fd, const struct msghdr *msg, int flags)
{
    struct fd_entry *e = owned_io(fd);
    if (e == NULL)
        return kernel_written(libc.sendmsg(fd, msg, flags));
    return e->ops->sendmsg(e, fd, msg, flags);
}
