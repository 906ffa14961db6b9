/*
 * sock_ctl.c - options, names, fcntl and ioctl on a stack socket.
 *
 * A socket whose kernel half matters (not placed yet, or bound to 0.0.0.0)
 * gets each option twice: on the kernel socket (which may become the
 * kernel's, and serves 127.0.0.1 for a 0.0.0.0 listener) and on the lsock.
 * The kernel's answer decides the result then, since every option the stack
 * knows the kernel knows too; an option only the kernel knows is fine. A
 * socket that lives only on the stack answers from the lsock alone.
 */
#include <fcntl.h>
#include <sys/ioctl.h>
#include <sys/socket.h>

#include "common/libc.h"
#include "posix/sock_fd_priv.h"
#include "runtime/runtime.h"
#include "sock/lsock.h"

static bool kernel_matters(const struct sock_file *sf)
{
    return !sf->decided || sf->kernel_bound;
}

long sock_timeout(const struct sock_file *sf, bool send)
{
    long rcv = 0, snd = 0;
    loop_lock(sf->loop);
    lsock_timeouts(sf->ls, &rcv, &snd);
    loop_unlock(sf->loop);
    long ms = send ? snd : rcv;
    return ms > 0 ? ms : -1;
}

int sock_setsockopt(struct fd_entry *e, int fd, int level, int name, const void *val, socklen_t len)
{
    struct sock_file *sf = sock_file(e);
    if (sock_child_refuses())
        return -1;
    loop_lock(sf->loop);
    int rc = lsock_setsockopt(sf->ls, level, name, val, len);
    loop_unlock(sf->loop);
    if (kernel_matters(sf)) {
        if (libc.setsockopt(fd, level, name, val, len) != 0)
            return -1;
        return rc < 0 && rc != -ENOPROTOOPT ? fail_neg(rc) : 0;
    }
    return rc < 0 ? fail_neg(rc) : 0;
}

int sock_getsockopt(struct fd_entry *e, int fd, int level, int name, void *val, socklen_t *len)
{
    struct sock_file *sf = sock_file(e);
    if (sock_child_refuses())
        return -1;
    loop_lock(sf->loop);
    int rc = lsock_getsockopt(sf->ls, level, name, val, len);
    loop_unlock(sf->loop);
    if (rc == -ENOPROTOOPT && kernel_matters(sf))
        return libc.getsockopt(fd, level, name, val, len);
    return rc < 0 ? fail_neg(rc) : 0;
}

static int sock_name(struct fd_entry *e, bool peer, struct sockaddr *addr, socklen_t *len)
{
    struct sock_file *sf = sock_file(e);
    if (sock_child_refuses())
        return -1;
    if (addr == NULL || len == NULL) {
        errno = EFAULT;
        return -1;
    }
    uint32_t ip = 0;
    uint16_t port = 0;
    loop_lock(sf->loop);
    int rc = lsock_name(sf->ls, peer, &ip, &port);
    loop_unlock(sf->loop);
    if (rc < 0)
        return fail_neg(rc);
    sock_put_addr(addr, len, ip, port);
    return 0;
}

int sock_getsockname(struct fd_entry *e, int fd, struct sockaddr *addr, socklen_t *len)
{
    (void)fd;
    return sock_name(e, false, addr, len);
}

int sock_getpeername(struct fd_entry *e, int fd, struct sockaddr *addr, socklen_t *len)
{
    (void)fd;
    return sock_name(e, true, addr, len);
}

int sock_fcntl(struct fd_entry *e, int fd, int cmd, long arg)
{
    struct sock_file *sf = sock_file(e);
    switch (cmd) {
    case F_GETFL:
        return O_RDWR | (sf->nonblock ? O_NONBLOCK : 0);
    case F_SETFL:
        sf->nonblock = (arg & O_NONBLOCK) != 0;
        return 0;
    case F_DUPFD:
    case F_DUPFD_CLOEXEC: {
        int nfd = libc.fcntl(fd, cmd, arg);
        if (nfd >= 0 && sock_dup(e, fd, nfd) != 0) {
            libc.close(nfd);
            return -1;
        }
        return nfd;
    }
    default: /* F_GETFD, F_SETFD, ...: the kernel socket's descriptor flags */
        return libc.fcntl(fd, cmd, arg);
    }
}

int sock_ioctl(struct fd_entry *e, int fd, unsigned long req, void *arg)
{
    struct sock_file *sf = sock_file(e);
    switch (req) {
    case FIONBIO:
        if (arg == NULL) {
            errno = EFAULT;
            return -1;
        }
        sf->nonblock = *(const int *)arg != 0;
        return 0;
    case FIONREAD:
        if (sock_child_refuses())
            return -1;
        if (arg == NULL) {
            errno = EFAULT;
            return -1;
        }
        loop_lock(sf->loop);
        *(int *)arg = (int)lsock_nread(sf->ls);
        loop_unlock(sf->loop);
        return 0;
    default:
        return libc.ioctl(fd, req, arg);
    }
}
