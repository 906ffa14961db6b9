/*
 * sock_fd_priv.h - struct sock_file, shared by the files that implement
 * sock_fd_ops: sock_fd.c (life cycle and routing: socket, bind, listen,
 * accept, connect, close, dup), sock_io.c (the read and write families),
 * sock_ctl.c (options, names, fcntl, ioctl).
 */
#ifndef LSTACK_SOCK_FD_PRIV_H
#define LSTACK_SOCK_FD_PRIV_H

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>

#include "common/stack_loop.h"
#include "posix/sock_fd.h"

/* One per socket, shared by its dup'ed fds. */
struct sock_file {
    int refs;             /* fds that refer to it (under the fd table's lock: fdt_lock) */
    struct lsock *ls;     /* the stack socket */
    struct stack_loop *loop; /* its loop (lsock_loop): every call on it takes its lock */
    bool decided;         /* bind/listen/connect placed it (on the stack, or both) */
    bool kernel_bound;    /* the kernel socket behind the fd is bound to 0.0.0.0 */
    bool kernel_half;     /* ... and listens: accept and events look there too */
    bool nonblock;        /* O_NONBLOCK as the application set it */
};

static inline struct sock_file *sock_file(struct fd_entry *e)
{
    return (struct sock_file *)e->obj;
}

/* Set errno from a negative lsock result and return -1. */
static inline int fail_neg(long rc)
{
    errno = (int)-rc;
    return -1;
}

/* In a forked child a stack socket cannot be used: EBADF (only close works). */
bool sock_child_refuses(void);

/* Write ip:port into a caller's sockaddr like the kernel: copy at most *len
 * bytes, set *len to the full size. addr may be NULL. */
void sock_put_addr(struct sockaddr *addr, socklen_t *len, uint32_t ip, uint16_t port);

/* Timeout (ms, -1: none) of a blocking receive (send == false) or send,
 * from SO_RCVTIMEO / SO_SNDTIMEO. */
long sock_timeout(const struct sock_file *sf, bool send);

/* sock_io.c, sock_ctl.c: the ops they implement. */
ssize_t sock_recvmsg(struct fd_entry *e, int fd, struct msghdr *msg, int flags);
/* read(2) / write(2): sock_recvmsg / sock_sendmsg of one entry, flags 0,
 * without the message header (fd_ops.h read / write). */
ssize_t sock_read(struct fd_entry *e, int fd, void *buf, size_t len);
ssize_t sock_write(struct fd_entry *e, int fd, const void *buf, size_t len);
ssize_t sock_ring_read(struct fd_entry *e, int fd, void *buf, size_t len);
ssize_t sock_ring_write(struct fd_entry *e, int fd, const void *buf, size_t len);
ssize_t sock_sendmsg(struct fd_entry *e, int fd, const struct msghdr *msg, int flags);
/* run-to-wakeup's: through the socket's rings (sock_io.c). */
ssize_t sock_ring_recvmsg(struct fd_entry *e, int fd, struct msghdr *msg, int flags);
ssize_t sock_ring_sendmsg(struct fd_entry *e, int fd, const struct msghdr *msg, int flags);
int sock_getsockopt(struct fd_entry *e, int fd, int level, int name, void *val, socklen_t *len);
int sock_setsockopt(struct fd_entry *e, int fd, int level, int name, const void *val, socklen_t len);
int sock_getsockname(struct fd_entry *e, int fd, struct sockaddr *addr, socklen_t *len);
int sock_getpeername(struct fd_entry *e, int fd, struct sockaddr *addr, socklen_t *len);
int sock_fcntl(struct fd_entry *e, int fd, int cmd, long arg);
int sock_ioctl(struct fd_entry *e, int fd, unsigned long req, void *arg);
int sock_dup(struct fd_entry *e, int fd, int newfd);

#endif
