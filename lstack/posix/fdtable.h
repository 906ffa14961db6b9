/*
 * fdtable.h - which fds lstack owns, and what they are.
 *
 * An fd the table does not know (fdt_get returns NULL) is the kernel's and
 * every call on it goes straight to libc. An fd the table knows is a socket
 * on the stack (posix/sock_fd.c) or an epoll instance that watches stack
 * sockets (posix/epoll_fd.c); its calls go through its fd_ops.
 *
 * The table is an array indexed by fd, sized from RLIMIT_NOFILE's hard
 * limit and mapped lazily (untouched pages cost nothing). Lookups are a
 * bounds check and a load, without a lock; entries are set and cleared
 * under the table's lock (fdt_lock) by the thread that creates or closes
 * the fd (the kernel orders a close before the fd number's reuse; the lock
 * says so to the threads that look).
 */
#ifndef LSTACK_FDTABLE_H
#define LSTACK_FDTABLE_H

#include <stdbool.h>
#include <stddef.h>

struct fd_ops;

struct fd_entry {
    const struct fd_ops *ops; /* NULL: a kernel fd */
    void *obj;                /* the ops' object (refcounted by the ops when dup'ed) */
};

/* The entry for fd, or NULL if the kernel owns it (or fd is out of range). */
struct fd_entry *fdt_get(int fd);

/* Record fd as owned. Returns 0, or -1 with EMFILE if fd is beyond the table. */
int fdt_set(int fd, const struct fd_ops *ops, void *obj);

/* Forget fd (it is the kernel's again). */
void fdt_clear(int fd);

/* The lowest owned fd >= from, or -1. For walks at exit, not for hot paths. */
int fdt_next(int from);

/* The table's lock, for what must not race with an fd's close: taking a
 * reference to the object behind an fd that another thread may be closing
 * (poll and select holding their sockets, epoll_wait its lepoll), against
 * the close that clears the entry and drops the fd's reference (and dup,
 * which adds one). Reads and writes on an fd take none: closing an fd that
 * another thread reads is the application's race, as on Linux. Short holds,
 * never around a stack's lock. */
void fdt_lock(void);
void fdt_unlock(void);

#endif
