/*
 * sock_io.c - the read and write families on a stack socket (all arrive as
 * recvmsg / sendmsg, see fd_ops.h): blocking, timeouts, MSG_DONTWAIT,
 * MSG_WAITALL, MSG_NOSIGNAL and SIGPIPE. The bytes themselves move in the
 * sock layer (lsock_recv / lsock_send).
 *
 * Frames that a write queues leave at the next poll round: in
 * run-to-completion that is the application's next epoll_wait, so the
 * replies Redis writes in one event-loop turn leave in one burst.
 */
#include <signal.h>
#include <string.h>
#include <sys/epoll.h>

#include "ctl/app_counters.h"
#include "event/event.h"
#include "posix/sock_fd_priv.h"
#include "runtime/runtime.h"
#include "sock/lsock.h"

#define IOV_MAX_LOCAL 64

static size_t iov_total(const struct iovec *iov, size_t cnt)
{
    size_t n = 0;
    for (size_t i = 0; i < cnt; i++)
        n += iov[i].iov_len;
    return n;
}

/* Copy iov into out, skipping the first skip bytes. Returns the new count. */
static int iov_advance(const struct iovec *iov, int cnt, size_t skip, struct iovec *out)
{
    int n = 0;
    for (int i = 0; i < cnt && n < IOV_MAX_LOCAL; i++) {
        if (skip >= iov[i].iov_len) {
            skip -= iov[i].iov_len;
            continue;
        }
        out[n].iov_base = (char *)iov[i].iov_base + skip;
        out[n].iov_len = iov[i].iov_len - skip;
        skip = 0;
        n++;
    }
    return n;
}

/* Common checks of recvmsg/sendmsg. Returns 0 and whether the call may
 * block, or -1 with errno. */
static int io_start(const struct sock_file *sf, const struct msghdr *msg, int flags, bool *wait)
{
    if (sock_child_refuses())
        return -1;
    if (msg->msg_iovlen > IOV_MAX_LOCAL) {
        errno = EMSGSIZE;
        return -1;
    }
    *wait = !sf->nonblock && !(flags & MSG_DONTWAIT);
    return 0;
}

ssize_t sock_recvmsg(struct fd_entry *e, int fd, struct msghdr *msg, int flags)
{
    struct sock_file *sf = sock_file(e);
    app_cnt.reads++; /* issue 4: stackctl show stats */
    bool wait;
    if (io_start(sf, msg, flags, &wait) != 0)
        return -1;
    size_t want = iov_total(msg->msg_iov, msg->msg_iovlen);
    size_t got = 0;
    struct iovec rest[IOV_MAX_LOCAL];
    for (;;) {
        int cnt = iov_advance(msg->msg_iov, (int)msg->msg_iovlen, got, rest);
        rt_lock();
        ssize_t n = lsock_recv(sf->ls, rest, cnt, flags & ~MSG_WAITALL);
        rt_unlock();
        if (n > 0) {
            got += (size_t)n;
            if (!(flags & MSG_WAITALL) || !wait || got == want || (flags & MSG_PEEK))
                break;
            continue;
        }
        if (n == 0 || (n != -EAGAIN && got > 0))
            break; /* EOF, or an error after some bytes: return the bytes */
        if (n != -EAGAIN)
            return fail_neg(n);
        if (!wait) {
            if (got > 0)
                break;
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

ssize_t sock_sendmsg(struct fd_entry *e, int fd, const struct msghdr *msg, int flags)
{
    struct sock_file *sf = sock_file(e);
    app_cnt.writes++; /* issue 4: stackctl show stats */
    bool wait;
    if (io_start(sf, msg, flags, &wait) != 0)
        return -1;
    size_t want = iov_total(msg->msg_iov, msg->msg_iovlen);
    size_t sent = 0;
    struct iovec rest[IOV_MAX_LOCAL];
    while (sent < want || want == 0) {
        int cnt = iov_advance(msg->msg_iov, (int)msg->msg_iovlen, sent, rest);
        rt_lock();
        ssize_t n = lsock_send(sf->ls, rest, cnt, flags);
        rt_unlock();
        if (n == 0 && want > 0)
            n = -EAGAIN; /* nothing queued: wait like for a full buffer */
        if (n >= 0) {
            sent += (size_t)n;
            if (want == 0 || !wait)
                break;
            continue;
        }
        if (n == -EPIPE && !(flags & MSG_NOSIGNAL))
            raise(SIGPIPE);
        if (n != -EAGAIN)
            return sent > 0 ? (ssize_t)sent : fail_neg(n);
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
