/*
 * sock_fd.c - the life of an AF_INET stream socket that may live on the
 * stack: adoption at socket(), routing at bind/listen/connect, accept,
 * shutdown, close, dup. See sock_fd.h for the routing rules.
 *
 * Every stack socket keeps a real kernel socket under its fd number: it
 * reserves the number (no clash with the kernel's fds), makes fstat, F_GETFD
 * and close-on-exec behave, and is the kernel half of a listener bound to
 * 0.0.0.0 (so `redis-cli -h 127.0.0.1` works while the stack serves the
 * stack's address).
 *
 * Design: docs/design.md#sockets-are-routed-at-bindconnect-over-a-real-kernel-socket
 */
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>

#include "common/log.h"
#include "event/event.h"
#include "common/libc.h"
#include "posix/sock_fd_priv.h"
#include "runtime/runtime.h"
#include "sock/lsock.h"

bool sock_child_refuses(void)
{
    if (!rt_is_child())
        return false;
    errno = EBADF;
    return true;
}

void sock_put_addr(struct sockaddr *addr, socklen_t *len, uint32_t ip, uint16_t port)
{
    if (addr == NULL || len == NULL)
        return;
    struct sockaddr_in sin;
    memset(&sin, 0, sizeof(sin));
    sin.sin_family = AF_INET;
    sin.sin_addr.s_addr = ip;
    sin.sin_port = port;
    socklen_t n = *len < (socklen_t)sizeof(sin) ? *len : (socklen_t)sizeof(sin);
    memcpy(addr, &sin, n);
    *len = sizeof(sin);
}

static struct sock_file *sock_file_new(struct lsock *ls, bool nonblock, bool decided)
{
    struct sock_file *sf = calloc(1, sizeof(*sf));
    if (sf == NULL)
        return NULL;
    sf->refs = 1;
    sf->ls = ls;
    sf->loop = lsock_loop(ls);
    sf->nonblock = nonblock;
    sf->decided = decided;
    return sf;
}

/* Close ls, under its loop's lock (its epoll items first); then, each
 * under its own loop's lock, what a listener leaves on other stacks (its
 * copies, their connections it still queued). */
static void close_lsock(struct stack_loop *l, struct lsock *ls)
{
    lsock_hold(ls);
    loop_lock(l);
    ev_forget_sock(ls);
    lsock_close(ls);
    loop_flush(l); /* the FIN or RST leaves now (no poll round) */
    loop_unlock(l);
    for (struct lsock *o; (o = lsock_close_next(ls)) != NULL;) {
        struct stack_loop *ol = lsock_loop(o);
        loop_lock(ol);
        lsock_close(o);
        loop_flush(ol);
        loop_unlock(ol);
    }
    lsock_release(ls);
}

/* Release the stack side of sf and free it. */
static void sock_file_free(struct sock_file *sf)
{
    if (!rt_is_child())
        close_lsock(sf->loop, sf->ls);
    free(sf);
}

/* The ops the fd of stack socket ls gets: with rings on its stack
 * (run-to-wakeup), reads and writes go through them. */
static const struct fd_ops *sock_ops_new(const struct lsock *ls)
{
    return lsock_rings_enabled(lsock_stack(ls)) ? &sock_ring_fd_ops : &sock_fd_ops;
}

static bool is_sock_ops(const struct fd_ops *ops)
{
    return ops == &sock_fd_ops || ops == &sock_ring_fd_ops;
}

/* Record fd as stack socket sf, under the fd table's lock. 0 or -1. */
static int fd_record(int fd, struct sock_file *sf)
{
    fdt_lock();
    int rc = fdt_set(fd, sock_ops_new(sf->ls), sf);
    int saved = errno;
    fdt_unlock();
    errno = saved;
    return rc;
}

int sockfd_adopt(int fd, int type_flags)
{
    struct lsock *ls = NULL;
    int rc = rt_sock_new(fd, &ls);
    if (rc < 0)
        return fail_neg(rc);
    struct sock_file *sf = sock_file_new(ls, (type_flags & SOCK_NONBLOCK) != 0, false);
    if (sf == NULL || fd_record(fd, sf) != 0) {
        int saved = sf == NULL ? ENOMEM : errno;
        close_lsock(lsock_loop(ls), ls);
        free(sf);
        errno = saved;
        return -1;
    }
    return 0;
}

static bool sockfd_is_sock(int fd)
{
    const struct fd_entry *e = fdt_get(fd);
    return !rt_is_child() && e != NULL && is_sock_ops(__atomic_load_n(&e->ops, __ATOMIC_ACQUIRE));
}

struct lsock *sockfd_hold(int fd, bool *kernel_half)
{
    if (rt_is_child())
        return NULL;
    struct lsock *ls = NULL;
    fdt_lock();
    struct fd_entry *e = fdt_get(fd);
    if (e != NULL && is_sock_ops(e->ops)) {
        struct sock_file *sf = sock_file(e);
        *kernel_half = sf->kernel_half;
        ls = sf->ls;
        lsock_hold(ls); /* before a close can drop the fd's reference: it clears the entry under the lock */
    }
    fdt_unlock();
    return ls;
}

const struct ev_fd_lookup sockfd_lookup = {.is_sock = sockfd_is_sock, .hold = sockfd_hold};

/* The socket turns out to be the kernel's (loopback, own address, another
 * family): forget the stack side; the kernel socket under fd carries on with
 * the application's O_NONBLOCK. Only for a socket no other fd shares. */
static int to_kernel(struct fd_entry *e, int fd)
{
    struct sock_file *sf = sock_file(e);
    if (sf->refs != 1 || sf->kernel_half || (sf->decided && !sf->kernel_bound)) {
        errno = EOPNOTSUPP; /* a dup'ed, listening or stack-placed socket cannot move */
        return -1;
    }
    int fl = libc.fcntl(fd, F_GETFL, 0);
    if (fl >= 0)
        libc.fcntl(fd, F_SETFL, sf->nonblock ? fl | O_NONBLOCK : fl & ~O_NONBLOCK);
    fdt_lock();
    fdt_clear(fd);
    fdt_unlock();
    sock_file_free(sf);
    return 0;
}

/* The IPv4 address of a sockaddr, or -1 (errno) if it is not AF_INET. */
static int sin_of(const struct sockaddr *addr, socklen_t len, struct sockaddr_in *out)
{
    if (addr == NULL || len < (socklen_t)sizeof(struct sockaddr_in)) {
        errno = EINVAL;
        return -1;
    }
    memcpy(out, addr, sizeof(*out));
    if (out->sin_family != AF_INET) {
        errno = EAFNOSUPPORT;
        return -1;
    }
    return 0;
}

/* bind(0.0.0.0:0): a port free on both sides. The stack picks it (its
 * ephemeral range is the kernel's, stack.c) and the kernel socket takes
 * the same; if the kernel holds that one, the stack picks its next.
 * Returns 0 or -1 (errno). Design:
 * docs/design.md#bind-to-port-0-takes-a-port-free-on-both-sides */
static int bind_any_ephemeral(struct sock_file *sf, int fd, struct sockaddr_in sin)
{
    for (unsigned tries = 0; tries <= 65535; tries++) {
        uint32_t ip = 0;
        uint16_t port = 0;
        loop_lock(sf->loop);
        int rc = lsock_bind(sf->ls, sin.sin_addr.s_addr, 0);
        if (rc == 0)
            lsock_name(sf->ls, false, &ip, &port);
        loop_unlock(sf->loop);
        if (rc < 0)
            return fail_neg(rc);
        sin.sin_port = port;
        if (libc.bind(fd, (struct sockaddr *)&sin, sizeof(sin)) == 0) {
            sf->kernel_bound = true;
            sf->decided = true;
            return 0;
        }
        int saved = errno;
        loop_lock(sf->loop);
        lsock_unbind(sf->ls);
        loop_unlock(sf->loop);
        if (saved != EADDRINUSE) {
            errno = saved;
            return -1;
        }
    }
    errno = EADDRINUSE;
    return -1;
}

static int sock_bind(struct fd_entry *e, int fd, const struct sockaddr *addr, socklen_t len)
{
    struct sock_file *sf = sock_file(e);
    struct sockaddr_in sin;
    if (sock_child_refuses())
        return -1;
    if (sin_of(addr, len, &sin) != 0)
        return sf->decided || to_kernel(e, fd) != 0 ? -1 : libc.bind(fd, addr, len);
    uint32_t a = sin.sin_addr.s_addr;
    uint16_t port = sin.sin_port;
    if (a != INADDR_ANY && a != rt_host_addr()) { /* 127/8 or another kernel address */
        if (to_kernel(e, fd) != 0)
            return -1;
        return libc.bind(fd, addr, len);
    }
    if (a == INADDR_ANY && port == 0)
        return bind_any_ephemeral(sf, fd, sin);
    if (a == INADDR_ANY) { /* both: the kernel takes the port first */
        if (libc.bind(fd, addr, len) != 0)
            return -1;
        sf->kernel_bound = true;
    }
    loop_lock(sf->loop);
    int rc = lsock_bind(sf->ls, a, port);
    loop_unlock(sf->loop);
    if (rc < 0)
        return fail_neg(rc);
    sf->decided = true;
    return 0;
}

static int sock_listen(struct fd_entry *e, int fd, int backlog)
{
    struct sock_file *sf = sock_file(e);
    if (sock_child_refuses())
        return -1;
    if (!sf->decided) { /* Linux binds an unbound listener to 0.0.0.0:ephemeral */
        struct sockaddr_in any = {.sin_family = AF_INET};
        if (sock_bind(e, fd, (struct sockaddr *)&any, sizeof(any)) != 0)
            return -1;
    }
    if (sf->kernel_bound && !sf->kernel_half) {
        if (libc.listen(fd, backlog) != 0)
            return -1;
        int fl = libc.fcntl(fd, F_GETFL, 0);
        libc.fcntl(fd, F_SETFL, fl | O_NONBLOCK); /* accept looks there without blocking */
        sf->kernel_half = true;
    }
    loop_lock(sf->loop);
    int rc = lsock_listen(sf->ls, backlog);
    loop_unlock(sf->loop);
    if (rc == 0)
        rc = rt_listen_everywhere(sf->ls); /* every stack takes SYNs */
    return rc < 0 ? fail_neg(rc) : 0;
}

/* A new fd for a connection accepted on the stack. Returns it or -1. */
static int adopt_accepted(struct lsock *nls, struct sockaddr *addr, socklen_t *len, int flags)
{
    int nfd = libc.socket(AF_INET, SOCK_STREAM | (flags & SOCK_CLOEXEC), 0);
    struct sock_file *nsf = nfd >= 0 ? sock_file_new(nls, (flags & SOCK_NONBLOCK) != 0, true) : NULL;
    if (nsf == NULL || fd_record(nfd, nsf) != 0) {
        int saved = errno;
        if (nfd >= 0)
            libc.close(nfd);
        free(nsf);
        close_lsock(lsock_loop(nls), nls); /* the peer sees a reset */
        errno = saved;
        return -1;
    }
    uint32_t ip = 0;
    uint16_t port = 0;
    loop_lock(nsf->loop);
    lsock_set_fd(nls, nfd); /* stackctl shows it */
    lsock_name(nls, true, &ip, &port);
    loop_unlock(nsf->loop);
    sock_put_addr(addr, len, ip, port);
    return nfd;
}

static int sock_accept4(struct fd_entry *e, int fd, struct sockaddr *addr, socklen_t *len, int flags)
{
    struct sock_file *sf = sock_file(e);
    if (sock_child_refuses())
        return -1;
    if (flags & ~(SOCK_NONBLOCK | SOCK_CLOEXEC)) {
        errno = EINVAL;
        return -1;
    }
    for (;;) {
        struct lsock *nls = NULL;
        loop_lock(sf->loop);
        int rc = lsock_accept(sf->ls, &nls);
        loop_unlock(sf->loop);
        if (rc == 0)
            return adopt_accepted(nls, addr, len, flags);
        if (rc != -EAGAIN)
            return fail_neg(rc);
        if (sf->kernel_half) {
            int kfd = libc.accept4(fd, addr, len, flags);
            if (kfd >= 0 || (errno != EAGAIN && errno != EWOULDBLOCK))
                return kfd;
        }
        if (sf->nonblock) {
            errno = EAGAIN;
            return -1;
        }
        if (ev_wait_sock(sf->ls, fd, sf->kernel_half, EPOLLIN, sock_timeout(sf, false)) == 0) {
            errno = EAGAIN;
            return -1;
        }
    }
}

static int sock_connect(struct fd_entry *e, int fd, const struct sockaddr *addr, socklen_t len)
{
    struct sock_file *sf = sock_file(e);
    struct sockaddr_in sin;
    if (sock_child_refuses())
        return -1;
    if (sin_of(addr, len, &sin) != 0 || rt_addr_is_kernel(sin.sin_addr.s_addr)) {
        if (to_kernel(e, fd) != 0)
            return -1;
        return libc.connect(fd, addr, len);
    }
    loop_lock(sf->loop);
    int rc = lsock_connect(sf->ls, sin.sin_addr.s_addr, sin.sin_port);
    loop_flush(sf->loop); /* the SYN leaves now */
    loop_unlock(sf->loop);
    sf->decided = true;
    if (rc != -EINPROGRESS)
        return rc < 0 ? fail_neg(rc) : 0;
    if (sf->nonblock) {
        errno = EINPROGRESS;
        return -1;
    }
    /* Blocking: wait, then ask lsock_connect for the outcome, as Linux's
     * connect does after its wait: 0 (and EISCONN from then on), or the
     * error, which it takes and after which the socket may connect anew.
     * SO_SNDTIMEO ends the wait with EINPROGRESS; the attempt goes on. */
    long tmo = sock_timeout(sf, true);
    for (;;) {
        if (ev_wait_sock(sf->ls, fd, false, EPOLLOUT, tmo) == 0) {
            errno = EINPROGRESS;
            return -1;
        }
        loop_lock(sf->loop);
        rc = lsock_connect(sf->ls, sin.sin_addr.s_addr, sin.sin_port);
        loop_unlock(sf->loop);
        if (rc != -EALREADY)
            return rc < 0 ? fail_neg(rc) : 0;
    }
}

static int sock_shutdown(struct fd_entry *e, int fd, int how)
{
    struct sock_file *sf = sock_file(e);
    if (sock_child_refuses())
        return -1;
    if (sf->kernel_half)
        libc.shutdown(fd, how);
    loop_lock(sf->loop);
    int rc = lsock_shutdown(sf->ls, how);
    loop_flush(sf->loop); /* the FIN leaves now */
    loop_unlock(sf->loop);
    return rc < 0 ? fail_neg(rc) : 0;
}

static int sock_close(struct fd_entry *e, int fd)
{
    struct sock_file *sf = sock_file(e);
    fdt_lock();
    fdt_clear(fd);
    bool last = --sf->refs == 0;
    fdt_unlock();
    if (last)
        sock_file_free(sf);
    return libc.close(fd);
}

void sockfd_close_all(void)
{
    for (int fd = fdt_next(0); fd >= 0; fd = fdt_next(fd + 1)) {
        struct fd_entry *e = fdt_get(fd);
        if (e != NULL && is_sock_ops(e->ops))
            sock_close(e, fd);
    }
}

/* At exit, before the stacks stop: close what is still open (FIN or RST,
 * as the kernel closes a dying process's sockets). */
static const struct rt_hooks sock_hooks = {.stopping = sockfd_close_all};

__attribute__((constructor)) static void sock_hooks_register(void)
{
    rt_hooks_register(&sock_hooks);
}

int sock_dup(struct fd_entry *e, int fd, int newfd)
{
    (void)fd;
    struct sock_file *sf = sock_file(e);
    fdt_lock();
    int rc = fdt_set(newfd, e->ops, sf);
    if (rc == 0)
        sf->refs++;
    fdt_unlock();
    return rc;
}

/* The ops of a stack socket but for the read and write families. */
#define SOCK_FD_OPS_COMMON                                                                             \
    .kind = "stack socket", .bind = sock_bind, .listen = sock_listen, .accept4 = sock_accept4,       \
    .connect = sock_connect, .shutdown = sock_shutdown, .getsockopt = sock_getsockopt,               \
    .setsockopt = sock_setsockopt, .getsockname = sock_getsockname, .getpeername = sock_getpeername, \
    .fcntl = sock_fcntl, .ioctl = sock_ioctl, .close = sock_close, .dup = sock_dup

const struct fd_ops sock_fd_ops = {
    SOCK_FD_OPS_COMMON,
    .recvmsg = sock_recvmsg,
    .sendmsg = sock_sendmsg,
    .read = sock_read,
    .write = sock_write,
};

/* run-to-wakeup: reads and writes through the socket's rings. */
const struct fd_ops sock_ring_fd_ops = {
    SOCK_FD_OPS_COMMON,
    .recvmsg = sock_ring_recvmsg,
    .sendmsg = sock_ring_sendmsg,
    .read = sock_ring_read,
    .write = sock_ring_write,
};
