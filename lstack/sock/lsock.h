/*
 * lsock.h - a TCP socket on a stack, over lwIP's raw TCP API, as the POSIX
 * layer sees it. No lwIP or DPDK type crosses this header.
 *
 * Every function here is non-blocking: blocking, timeouts and errno belong
 * to the POSIX layer. Functions return >= 0 on success and a negative errno
 * value on failure (-EAGAIN, -ECONNRESET, ...), translated from lwIP's err_t
 * in one table (sock/errmap.c). They preserve errno.
 *
 * Threads: all calls on sockets of one stack must be serialised by the
 * caller (the runtime's stack lock); the lwIP callbacks run inside
 * stack_poll, under the same lock.
 *
 * Memory: an lsock is owned by the POSIX layer from lsock_new/lsock_accept
 * until lsock_close, which releases it (the lwIP connection may live on in
 * lwIP, e.g. in TIME_WAIT, but no longer refers to the lsock).
 */
#ifndef LSTACK_LSOCK_H
#define LSTACK_LSOCK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/uio.h>

struct stack;
struct lsock;
struct epitem; /* owned by the event layer */

/* Readiness, in epoll bit values (EPOLLIN, EPOLLOUT, EPOLLRDHUP, EPOLLHUP,
 * EPOLLERR), as Linux reports them for a TCP socket:
 *  listener: EPOLLIN when a connection waits to be accepted;
 *  connecting: nothing, then EPOLLOUT when connected, or
 *              EPOLLOUT|EPOLLERR|EPOLLHUP when refused / failed;
 *  connected: EPOLLIN when data or EOF is readable, EPOLLRDHUP|EPOLLIN after
 *             the peer's FIN, EPOLLOUT while the send buffer has room,
 *             EPOLLHUP when both directions are shut, EPOLLERR|EPOLLHUP|
 *             EPOLLIN|EPOLLRDHUP|EPOLLOUT after a reset;
 *  new (not listening, not connected): EPOLLOUT|EPOLLHUP, like Linux. */
uint32_t lsock_events(const struct lsock *s);

/* Called by the sock layer (inside lwIP callbacks or calls) whenever the
 * readiness of s may have changed. Implemented by the event layer
 * (event/epoll.c), which finds the epoll items watching s through
 * *lsock_watchers(s). */
void lsock_changed(struct lsock *s);

/* Head of the list of epoll items watching s (the event layer's list). */
struct epitem **lsock_watchers(struct lsock *s);

/* A new, unbound TCP socket on stack st. No lwIP object yet: options set
 * now are applied when bind/listen/connect creates the pcb.
 * -ENOBUFS: tcp_conn_count sockets are open already. -ENOMEM. */
int lsock_new(struct stack *st, struct lsock **out);

/* The stack a socket lives on. */
struct stack *lsock_stack(const struct lsock *s);

/* addr/port in network byte order. addr is the stack's host_addr or
 * INADDR_ANY (the POSIX layer routes other addresses to the kernel).
 * -EADDRINUSE, -EINVAL (already bound). */
int lsock_bind(struct lsock *s, uint32_t addr, uint16_t port);

/* Listen (binds to INADDR_ANY:ephemeral first if unbound). backlog is
 * recorded (Linux caps it; lstack does not drop over it, see docs/compat.md).
 * -EINVAL if connected. */
int lsock_listen(struct lsock *s, int backlog);

/* Take one connection from the accept queue. -EAGAIN if none; -EINVAL if
 * not listening. The new lsock inherits TCP_NODELAY and keepalive options
 * from the listener, like Linux. */
int lsock_accept(struct lsock *s, struct lsock **out);

/* Start connecting. Returns -EINPROGRESS (the result arrives as EPOLLOUT,
 * read it with SO_ERROR), -EISCONN, -EALREADY, -ECONNREFUSED etc. */
int lsock_connect(struct lsock *s, uint32_t addr, uint16_t port);

/* Copy received bytes into iov. flags: MSG_PEEK (do not consume),
 * MSG_DONTWAIT and MSG_NOSIGNAL ignored here (the POSIX layer uses them),
 * MSG_WAITALL handled by the POSIX layer. Returns bytes (> 0), 0 at EOF,
 * -EAGAIN when nothing is there yet, -ECONNRESET after a reset (once; then
 * 0), -ENOTCONN if never connected. Consumed bytes reopen the window. */
ssize_t lsock_recv(struct lsock *s, const struct iovec *iov, int iovcnt, int flags);

/* Queue bytes from iov and push them out. Returns bytes queued (> 0, may be
 * short), -EAGAIN when the send buffer is full, -EPIPE after shutdown(WR) or
 * once the peer reset (the POSIX layer raises SIGPIPE unless MSG_NOSIGNAL),
 * -ENOTCONN. */
ssize_t lsock_send(struct lsock *s, const struct iovec *iov, int iovcnt, int flags);

/* SHUT_RD, SHUT_WR (sends FIN), SHUT_RDWR. -ENOTCONN if not connected. */
int lsock_shutdown(struct lsock *s, int how);

/* Release s. A connection with unread received data, or with SO_LINGER
 * {1, 0}, is reset (RST), like Linux; otherwise it is closed with FIN.
 * A listener's unaccepted connections are reset. The caller removes s from
 * every epoll set first (*lsock_watchers(s) must be NULL). */
void lsock_close(struct lsock *s);

/* Socket options (SOL_SOCKET: SO_ERROR (read and cleared), SO_TYPE,
 * SO_DOMAIN, SO_PROTOCOL, SO_ACCEPTCONN, SO_REUSEADDR, SO_REUSEPORT (stored),
 * SO_KEEPALIVE, SO_RCVBUF, SO_SNDBUF (stored; getsockopt returns twice the
 * value set, like Linux), SO_LINGER, SO_RCVTIMEO/SO_SNDTIMEO (stored, used by
 * the POSIX layer via lsock_timeouts); IPPROTO_TCP: TCP_NODELAY,
 * TCP_KEEPIDLE, TCP_KEEPINTVL, TCP_KEEPCNT, TCP_MAXSEG (read), TCP_INFO
 * (partially)). Others: -ENOPROTOOPT. Bad length: -EINVAL. */
int lsock_setsockopt(struct lsock *s, int level, int name, const void *val, socklen_t len);
int lsock_getsockopt(struct lsock *s, int level, int name, void *val, socklen_t *len);

/* Receive / send timeouts in ms (0: none) as set by SO_RCVTIMEO/SO_SNDTIMEO. */
void lsock_timeouts(const struct lsock *s, long *rcv_ms, long *snd_ms);

/* Local (peer == false) or remote address, network byte order.
 * -ENOTCONN for the peer of an unconnected socket. */
int lsock_name(const struct lsock *s, bool peer, uint32_t *addr, uint16_t *port);

/* Bytes that can be read now (FIONREAD / SIOCINQ). */
size_t lsock_nread(const struct lsock *s);

/* True once listen succeeded. */
bool lsock_is_listener(const struct lsock *s);

/* Number of sockets (listeners included) currently counted against
 * tcp_conn_count on st, and connections refused because of it. */
unsigned lsock_count(const struct stack *st);
uint64_t lsock_refused(const struct stack *st);

#endif
