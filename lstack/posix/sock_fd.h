/*
 * sock_fd.h - AF_INET stream sockets that may live on the stack: what the
 * event layer needs to know about them.
 *
 * A socket() of AF_INET/SOCK_STREAM in RT_READY creates a kernel socket (its
 * fd number, and the kernel half of a listener bound to 0.0.0.0) plus an
 * lsock. bind/connect decide where it lives: 127.0.0.0/8 and the stack's own
 * address -> kernel only (the lsock is dropped and the fd forgotten);
 * host_addr -> stack only; 0.0.0.0 -> both (a listener there is served on the
 * stack's address and by the kernel on every kernel address).
 */
#ifndef LSTACK_SOCK_FD_H
#define LSTACK_SOCK_FD_H

#include <stdbool.h>

#include "posix/fd_ops.h"

struct lsock;

extern const struct fd_ops sock_fd_ops;
extern const struct fd_ops sock_ring_fd_ops; /* run-to-wakeup: reads and writes through rings */

/* Called by the socket() wrapper: make fd (a fresh kernel AF_INET stream
 * socket) a stack socket if the runtime is ready. Returns 0 (fd owned or
 * left to the kernel) or -1 with errno (fd then closed). */
int sockfd_adopt(int fd, int type_flags);

/* The lsock behind fd, held (lsock_hold: it stays valid, if dead, until the
 * caller's lsock_release, whoever closes fd meanwhile), or NULL if fd is not
 * a stack socket (or in a forked child). *kernel_half is set when the
 * kernel socket behind fd also listens (bound to 0.0.0.0) and must be
 * watched too (through libc on fd itself). Any thread. */
struct lsock *sockfd_hold(int fd, bool *kernel_half);

/* The same for poll and select (event/event.h). */
struct ev_fd_lookup;
extern const struct ev_fd_lookup sockfd_lookup;

/* At exit: close every stack socket the way the kernel closes a dying
 * process's sockets (FIN, or RST when unread data is left), so that peers
 * see the end instead of waiting forever. Not in a forked child. The
 * runtime's stopping hook (registered by sock_fd.c). */
void sockfd_close_all(void);

#endif
