/*
 * sock_io.c - the read and write families on a stack socket (all arrive as
 * recvmsg / sendmsg, read and write as their own one-entry calls, see
 * fd_ops.h): blocking, timeouts, MSG_DONTWAIT,
 * MSG_WAITALL, MSG_NOSIGNAL and SIGPIPE. The bytes themselves move in the
 * sock layer (lsock_recv / lsock_send); the caller's iovec array is checked
 * and walked by posix/iov.c (up to IOV_MAX entries, like Linux, no copy).
 */
#include <signal.h>
#include <string.h>
#include <sys/epoll.h>

#include "common/stack_loop.h"
#include "event/event.h"
#include "posix/iov.h"
#include "posix/sock_fd_priv.h"
#include "runtime/runtime.h"
#include "sock/lsock.h"

/*
 * A call hands the sock layer one run of entries at a time (iov_cur_next)
 * and goes on to the next run when the previous one was done in full: a
 * non-blocking writev queues as much as fits across all its entries and
 * returns that count, like Linux; a blocking one returns when everything is
 * queued (or its timeout expired, or an error came after some bytes).
 *
 * A call with one entry (read, write, send, recv) first makes its one
 * lsock_recv / lsock_send directly, without the cursor: the checks and the
 * loop cost more than the call itself; it goes on to the loop only when
 * that call left something to do (nothing there yet, a partial write).
 *
 * Frames that a write queues leave at the next poll round: in
 * run-to-completion that is the application's next epoll_wait, so the
 * replies Redis writes in one event-loop turn leave in one burst.
 *
 * Two ways to move the bytes, one per stack_thread_mode, each a constant
 * table (struct sock_data) that the loops below are inlined with, so that
 * its calls are direct: run-to-completion's takes the stack lock around
 * lsock_recv / lsock_send; run-to-wakeup's goes through the socket's
 * rings without the lock (lsock_ring_recv / lsock_ring_send,
 * sock/tcp_ring.c) and takes it only when the rings cannot answer (nothing
 * to read, no room, an error or EOF to report). The fd's ops table
 * (sock_fd_ops or sock_ring_fd_ops, chosen when the socket is made) picks
 * the entry points: no mode is tested per call.
 */

/* How one step of a read or write moves bytes (see the top). recv: with
 * stop, a queue with nothing readable answers -EAGAIN before a pending error
 * is taken (Linux keeps it for the next call). */
struct sock_data {
    ssize_t (*recv)(struct sock_file *sf, const struct iovec *v, int cnt, int flags, bool stop);
    ssize_t (*send)(struct sock_file *sf, const struct iovec *v, int cnt, int flags);
};

static inline ssize_t locked_recv(struct sock_file *sf, const struct iovec *v, int cnt, int flags, bool stop)
{
    struct lsock *s = sf->ls;
    loop_lock(sf->loop);
    ssize_t n = stop && lsock_nread(s) == 0 ? -EAGAIN : lsock_recv(s, v, cnt, flags);
    loop_unlock(sf->loop);
    return n;
}

static inline ssize_t locked_send(struct sock_file *sf, const struct iovec *v, int cnt, int flags)
{
    loop_lock(sf->loop);
    ssize_t n = lsock_send(sf->ls, v, cnt, flags);
    loop_unlock(sf->loop);
    return n;
}

static const struct sock_data sock_data_locked = {.recv = locked_recv, .send = locked_send};

static inline ssize_t ring_recv(struct sock_file *sf, const struct iovec *v, int cnt, int flags, bool stop)
{
    struct lsock *s = sf->ls;
    ssize_t n = lsock_ring_recv(s, v, cnt, flags);
    if (n != -EAGAIN)
        return n;
    loop_lock(sf->loop);
    n = stop && lsock_nread(s) == 0 ? -EAGAIN : lsock_ring_recv_locked(s, v, cnt, flags);
    loop_unlock(sf->loop);
    return n;
}

static inline ssize_t ring_send(struct sock_file *sf, const struct iovec *v, int cnt, int flags)
{
    struct lsock *s = sf->ls;
    ssize_t n = lsock_ring_send(s, v, cnt);
    if (n != -EAGAIN)
        return n;
    loop_lock(sf->loop);
    n = lsock_ring_send_locked(s, v, cnt, flags);
    loop_unlock(sf->loop);
    return n;
}

static const struct sock_data sock_data_rings = {.recv = ring_recv, .send = ring_send};

/* The one-entry call (read, write, send, recv: most calls) that the fast
 * paths below take: a header and an entry io_start would accept, in a
 * process that may use the stack. Returns the entry, or NULL for the
 * general path. */
static inline bool entry_fast(const struct iovec *v)
{
    return v->iov_len != 0 && v->iov_len <= LSTACK_RW_MAX && !rt_is_child();
}

static const struct iovec *one_entry(const struct msghdr *msg)
{
    if (msg == NULL || msg->msg_iovlen != 1 || msg->msg_iov == NULL || !entry_fast(msg->msg_iov))
        return NULL;
    return msg->msg_iov;
}

/* The fast path of recvmsg and read: one lsock_recv of the one entry v1.
 * Returns true with the call's result in *out (bytes, EOF's 0, or -1 with
 * errno), false if nothing was there yet (the loop waits as the socket
 * says). */
static inline __attribute__((always_inline)) bool recv_fast(const struct sock_data *io, struct sock_file *sf,
                                                            const struct iovec *v1, ssize_t *out)
{
    ssize_t n = io->recv(sf, v1, 1, 0, false);
    if (n == -EAGAIN)
        return false;
    *out = n >= 0 ? n : fail_neg(n);
    return true;
}

/* The fast path of sendmsg and write: one lsock_send of the one entry v1.
 * Returns true with the call's result in *out (all of it queued, or -1
 * with errno, SIGPIPE raised unless MSG_NOSIGNAL), false for the loop with
 * what was queued in *first. */
static inline __attribute__((always_inline)) bool send_fast(const struct sock_data *io, struct sock_file *sf,
                                                            const struct iovec *v1, int flags, size_t *first,
                                                            ssize_t *out)
{
    ssize_t n = io->send(sf, v1, 1, flags);
    if ((size_t)n == v1->iov_len) {
        *out = n;
        return true;
    }
    if (n < 0 && n != -EAGAIN) {
        if (n == -EPIPE && !(flags & MSG_NOSIGNAL))
            raise(SIGPIPE);
        *out = fail_neg(n);
        return true;
    }
    *first = n > 0 ? (size_t)n : 0;
    return false;
}

/* Common checks of recvmsg/sendmsg, in Linux's order (the fd, the header,
 * the entry count, the entries). Returns 0 with whether the call may block
 * and a cursor over the caller's array, or -1 with errno. */
static int io_start(const struct sock_file *sf, const struct msghdr *msg, int flags, bool *wait,
                    struct iov_cur *cur)
{
    if (sock_child_refuses())
        return -1;
    if (msg == NULL) {
        errno = EFAULT;
        return -1;
    }
    if (msg->msg_iovlen > LSTACK_IOV_MAX) {
        errno = EMSGSIZE; /* Linux's answer for recvmsg/sendmsg; readv/writev check first (EINVAL) */
        return -1;
    }
    int rc = iov_cur_init(cur, msg->msg_iov, msg->msg_iovlen);
    if (rc != 0)
        return fail_neg(rc);
    *wait = !sf->nonblock && !(flags & MSG_DONTWAIT);
    return 0;
}

static inline __attribute__((always_inline)) ssize_t recvmsg_loop(const struct sock_data *io,
                                                                   struct sock_file *sf, int fd,
                                                                   struct msghdr *msg, int flags);
static inline __attribute__((always_inline)) ssize_t sendmsg_loop(const struct sock_data *io,
                                                                   struct sock_file *sf, int fd,
                                                                   const struct msghdr *msg, int flags,
                                                                   size_t first);

static inline __attribute__((always_inline)) ssize_t recvmsg_with(const struct sock_data *io,
                                                                   struct fd_entry *e, int fd,
                                                                   struct msghdr *msg, int flags)
{
    struct sock_file *sf = sock_file(e);
    loop_count(&sf->loop->app_reads); /* stackctl show stats */
    /* Fast path: one entry, no flags, and data or EOF or an error to
     * report: one lsock_recv, as the loop below would make it. Only "none
     * yet" (nothing consumed, nothing taken) goes on to the loop. */
    const struct iovec *v1 = flags == 0 ? one_entry(msg) : NULL;
    ssize_t r;
    if (v1 != NULL && recv_fast(io, sf, v1, &r)) {
        if (r >= 0) {
            msg->msg_namelen = 0;
            msg->msg_controllen = 0;
            msg->msg_flags = 0;
        }
        return r;
    }
    return recvmsg_loop(io, sf, fd, msg, flags);
}

/* read(2) of a stack socket: recvmsg_with's fast path without a message
 * header to build and check (the one entry is the caller's buffer). */
static inline __attribute__((always_inline)) ssize_t read_with(const struct sock_data *io, struct fd_entry *e,
                                                                int fd, void *buf, size_t len)
{
    struct sock_file *sf = sock_file(e);
    loop_count(&sf->loop->app_reads); /* stackctl show stats */
    struct iovec v = {buf, len};
    ssize_t r;
    if (entry_fast(&v) && recv_fast(io, sf, &v, &r))
        return r;
    struct msghdr msg = {.msg_iov = &v, .msg_iovlen = 1};
    return recvmsg_loop(io, sf, fd, &msg, 0);
}

/* recvmsg after its fast path: the checks, then one lsock_recv per run of
 * the caller's entries, waiting as the socket and flags say. */
static inline __attribute__((always_inline)) ssize_t recvmsg_loop(const struct sock_data *io,
                                                                   struct sock_file *sf, int fd,
                                                                   struct msghdr *msg, int flags)
{
    bool wait;
    struct iov_cur cur;
    if (io_start(sf, msg, flags, &wait, &cur) != 0)
        return -1;
    bool waitall = wait && (flags & MSG_WAITALL) && !(flags & MSG_PEEK);
    size_t got = 0;
    for (;;) {
        struct iovec one;
        int cnt;
        size_t asked;
        const struct iovec *v = iov_cur_next(&cur, &one, &cnt, &asked);
        /* Past some bytes, a call that would not wait for more stops when
         * the queue is empty, before lsock_recv could take a pending error
         * that belongs to the next call (Linux keeps it for that call). */
        ssize_t n = io->recv(sf, v, cnt, flags & ~MSG_WAITALL, got > 0 && !waitall);
        if (n > 0) {
            got += (size_t)n;
            iov_cur_advance(&cur, (size_t)n);
            /* A peek reads from the head again: one run only. */
            if (cur.left == 0 || (flags & MSG_PEEK))
                break;
            if ((size_t)n < asked && !waitall)
                break;
            continue; /* this run is full: the next takes more, or waitall waits */
        }
        if (n == 0 || (n != -EAGAIN && got > 0))
            break; /* EOF, or an error after some bytes: return the bytes */
        if (n != -EAGAIN)
            return fail_neg(n);
        if (got > 0 && !waitall)
            break;
        if (!wait) {
            errno = EAGAIN;
            return -1;
        }
        if (ev_wait_sock(sf->ls, fd, false, EPOLLIN | EPOLLRDHUP, sock_timeout(sf, false)) == 0) {
            if (got > 0)
                break;
            errno = EAGAIN; /* SO_RCVTIMEO expired */
            return -1;
        }
    }
    msg->msg_namelen = 0; /* a connected TCP socket reports no source address */
    msg->msg_controllen = 0;
    msg->msg_flags = 0;
    return (ssize_t)got;
}

ssize_t sock_recvmsg(struct fd_entry *e, int fd, struct msghdr *msg, int flags)
{
    return recvmsg_with(&sock_data_locked, e, fd, msg, flags);
}

ssize_t sock_read(struct fd_entry *e, int fd, void *buf, size_t len)
{
    return read_with(&sock_data_locked, e, fd, buf, len);
}

ssize_t sock_ring_recvmsg(struct fd_entry *e, int fd, struct msghdr *msg, int flags)
{
    return recvmsg_with(&sock_data_rings, e, fd, msg, flags);
}

ssize_t sock_ring_read(struct fd_entry *e, int fd, void *buf, size_t len)
{
    return read_with(&sock_data_rings, e, fd, buf, len);
}

static inline __attribute__((always_inline)) ssize_t sendmsg_with(const struct sock_data *io,
                                                                   struct fd_entry *e, int fd,
                                                                   const struct msghdr *msg, int flags)
{
    struct sock_file *sf = sock_file(e);
    loop_count(&sf->loop->app_writes); /* stackctl show stats */
    /* Fast path: one entry that fits whole, or an error to report: one
     * lsock_send, as the loop below would make it. A partial or empty
     * result goes on to the loop, with what was queued counted as sent. */
    const struct iovec *v1 = one_entry(msg);
    size_t first = 0;
    ssize_t r;
    if (v1 != NULL && send_fast(io, sf, v1, flags, &first, &r))
        return r;
    return sendmsg_loop(io, sf, fd, msg, flags, first);
}

/* write(2) of a stack socket: sendmsg_with's fast path without a message
 * header to build and check. */
static inline __attribute__((always_inline)) ssize_t write_with(const struct sock_data *io, struct fd_entry *e,
                                                                 int fd, const void *buf, size_t len)
{
    struct sock_file *sf = sock_file(e);
    loop_count(&sf->loop->app_writes); /* stackctl show stats */
    struct iovec v = {(void *)buf, len};
    size_t first = 0;
    ssize_t r;
    if (entry_fast(&v) && send_fast(io, sf, &v, 0, &first, &r)) /* write(2): no MSG_NOSIGNAL */
        return r;
    struct msghdr msg = {.msg_iov = &v, .msg_iovlen = 1};
    return sendmsg_loop(io, sf, fd, &msg, 0, first);
}

/* sendmsg after its fast path (first bytes of it queued there): the
 * checks, then lsock_send per run of the caller's entries, waiting as the
 * socket and flags say. */
static inline __attribute__((always_inline)) ssize_t sendmsg_loop(const struct sock_data *io,
                                                                   struct sock_file *sf, int fd,
                                                                   const struct msghdr *msg, int flags,
                                                                   size_t first)
{
    bool wait;
    struct iov_cur cur;
    if (io_start(sf, msg, flags, &wait, &cur) != 0)
        return -1;
    size_t sent = first;
    iov_cur_advance(&cur, first);
    if (first > 0 && !wait)
        return (ssize_t)first; /* the send buffer is full: a partial write, like Linux */
    for (;;) {
        struct iovec one;
        int cnt;
        size_t asked;
        const struct iovec *v = iov_cur_next(&cur, &one, &cnt, &asked);
        ssize_t n = io->send(sf, v, cnt, flags);
        if (n == 0 && asked > 0)
            n = -EAGAIN; /* nothing queued: wait like for a full buffer */
        if (n >= 0) {
            sent += (size_t)n;
            iov_cur_advance(&cur, (size_t)n);
            if (cur.left == 0)
                break; /* all queued (or a zero-length write: its checks only) */
            if ((size_t)n < asked && !wait)
                break; /* the send buffer is full: a partial write, like Linux */
            continue;
        }
        if (n != -EAGAIN && sent > 0)
            break; /* an error after some bytes: return the bytes, no signal (Linux) */
        if (n == -EPIPE && !(flags & MSG_NOSIGNAL))
            raise(SIGPIPE);
        if (n != -EAGAIN)
            return fail_neg(n);
        if (!wait) {
            if (sent > 0)
                break;
            errno = EAGAIN;
            return -1;
        }
        if (ev_wait_sock(sf->ls, fd, false, EPOLLOUT, sock_timeout(sf, true)) == 0) {
            if (sent > 0)
                break;
            errno = EAGAIN; /* SO_SNDTIMEO expired */
            return -1;
        }
    }
    return (ssize_t)sent;
}

ssize_t sock_sendmsg(struct fd_entry *e, int fd, const struct msghdr *msg, int flags)
{
    return sendmsg_with(&sock_data_locked, e, fd, msg, flags);
}

ssize_t sock_write(struct fd_entry *e, int fd, const void *buf, size_t len)
{
    return write_with(&sock_data_locked, e, fd, buf, len);
}

ssize_t sock_ring_sendmsg(struct fd_entry *e, int fd, const struct msghdr *msg, int flags)
{
    return sendmsg_with(&sock_data_rings, e, fd, msg, flags);
}

ssize_t sock_ring_write(struct fd_entry *e, int fd, const void *buf, size_t len)
{
    return write_with(&sock_data_rings, e, fd, buf, len);
}
