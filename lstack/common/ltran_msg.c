/*
 * ltran_msg.c - ltran's message framing (see ltran_msg.h): one buffer of
 * header and body, one sendmsg or recvmsg, the SCM_RIGHTS control block.
 * Built into liblstack_dpdk.so (the client side) and into ltran.
 */
#include <errno.h>
#include <string.h>

#include "common/ltran_msg.h"

ssize_t ltran_msg_send(const struct ltran_io *io, int fd, int flags, uint16_t type, int32_t status,
                       const void *body, uint32_t len, int pass_fd)
{
    uint8_t buf[LTRAN_MSG_MAX];
    struct ltran_hdr h = {.magic = LTRAN_MAGIC, .version = LTRAN_VERSION, .type = type, .status = status, .len = len};
    if (len > sizeof(buf) - sizeof(h)) {
        errno = EMSGSIZE;
        return -1;
    }
    memcpy(buf, &h, sizeof(h));
    if (len > 0)
        memcpy(buf + sizeof(h), body, len);
    struct iovec iov = {.iov_base = buf, .iov_len = sizeof(h) + len};
    union {
        char b[CMSG_SPACE(sizeof(int))];
        struct cmsghdr align;
    } cm;
    struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1};
    if (pass_fd >= 0) {
        memset(&cm, 0, sizeof(cm));
        mh.msg_control = cm.b;
        mh.msg_controllen = sizeof(cm.b);
        struct cmsghdr *c = CMSG_FIRSTHDR(&mh);
        c->cmsg_level = SOL_SOCKET;
        c->cmsg_type = SCM_RIGHTS;
        c->cmsg_len = CMSG_LEN(sizeof(int));
        memcpy(CMSG_DATA(c), &pass_fd, sizeof(int));
    }
    return io->sendmsg(fd, &mh, flags);
}

ssize_t ltran_msg_recv(const struct ltran_io *io, int fd, int flags, void *buf, size_t len, int *passed)
{
    struct iovec iov = {.iov_base = buf, .iov_len = len};
    union {
        char b[CMSG_SPACE(sizeof(int) * 4)];
        struct cmsghdr align;
    } cm;
    struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = cm.b, .msg_controllen = sizeof(cm.b)};
    ssize_t n = io->recvmsg(fd, &mh, flags);
    if (n < 0)
        return n;
    int e = errno;
    for (struct cmsghdr *c = CMSG_FIRSTHDR(&mh); c != NULL; c = CMSG_NXTHDR(&mh, c)) {
        if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS || c->cmsg_len < CMSG_LEN(0))
            continue;
        size_t nfd = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
        for (size_t i = 0; i < nfd; i++) {
            int f;
            memcpy(&f, CMSG_DATA(c) + i * sizeof(int), sizeof(int));
            if (passed != NULL && *passed < 0)
                *passed = f;
            else
                io->close(f);
        }
    }
    errno = e;
    return n;
}

int ltran_msg_header(const void *msg, size_t n, struct ltran_hdr *h)
{
    if (n < sizeof(*h))
        return -1;
    memcpy(h, msg, sizeof(*h));
    return h->magic == LTRAN_MAGIC ? 0 : -1;
}
