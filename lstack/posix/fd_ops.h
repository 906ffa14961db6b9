/*
 * fd_ops.h - what an fd owned by lstack can do: one table per kind of fd
 * (a stack socket: posix/sock_fd.c; an epoll instance watching stack
 * sockets: posix/epoll_fd.c).
 *
 * Contract of every op: like the POSIX call (return value, errno), with the
 * entry and the fd number it was called with. Ops set errno themselves;
 * lstack's internal negative-errno results are translated at this boundary.
 * The read family (read, readv, recv, recvfrom, recvmsg, __*_chk) arrives as
 * recvmsg; the write family (write, writev, send, sendto, sendmsg) as sendmsg.
 */
#ifndef LSTACK_FD_OPS_H
#define LSTACK_FD_OPS_H

#include <sys/socket.h>
#include <sys/types.h>

#include "posix/fdtable.h"

/*
 * The exported wrappers (posix/exports.c and friends) look the fd up in the
 * fd table: a kernel fd goes straight to libc (a table for the kernel would
 * add nothing but an indirect call); an owned fd goes to its ops. A NULL op
 * means "the kernel object behind this fd answers": the wrapper calls libc.
 */

struct fd_ops {
    const char *kind;
    ssize_t (*recvmsg)(struct fd_entry *e, int fd, struct msghdr *msg, int flags);
    ssize_t (*sendmsg)(struct fd_entry *e, int fd, const struct msghdr *msg, int flags);
    /* read(2) / write(2): what recvmsg / sendmsg with one entry and flags 0
     * do, without a message header to build and check (most calls of an
     * application are these). NULL: recvmsg / sendmsg are called. */
    ssize_t (*read)(struct fd_entry *e, int fd, void *buf, size_t n);
    ssize_t (*write)(struct fd_entry *e, int fd, const void *buf, size_t n);
    int (*bind)(struct fd_entry *e, int fd, const struct sockaddr *addr, socklen_t len);
    int (*listen)(struct fd_entry *e, int fd, int backlog);
    int (*accept4)(struct fd_entry *e, int fd, struct sockaddr *addr, socklen_t *len, int flags);
    int (*connect)(struct fd_entry *e, int fd, const struct sockaddr *addr, socklen_t len);
    int (*shutdown)(struct fd_entry *e, int fd, int how);
    int (*getsockopt)(struct fd_entry *e, int fd, int level, int name, void *val, socklen_t *len);
    int (*setsockopt)(struct fd_entry *e, int fd, int level, int name, const void *val, socklen_t len);
    int (*getsockname)(struct fd_entry *e, int fd, struct sockaddr *addr, socklen_t *len);
    int (*getpeername)(struct fd_entry *e, int fd, struct sockaddr *addr, socklen_t *len);
    int (*fcntl)(struct fd_entry *e, int fd, int cmd, long arg);
    int (*ioctl)(struct fd_entry *e, int fd, unsigned long req, void *arg);
    /* Drop fd's reference to the object (freeing it with the last one), forget
     * fd in the table, and libc.close(fd). In a forked child: only forget and
     * libc.close, never touch the stack. */
    int (*close)(struct fd_entry *e, int fd);
    /* newfd is a fresh kernel dup of fd (made by the wrapper): share the
     * object with it (take a reference and fdt_set newfd). Returns 0 or -1. */
    int (*dup)(struct fd_entry *e, int fd, int newfd);
};

#endif
