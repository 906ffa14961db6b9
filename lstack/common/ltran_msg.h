/*
 * ltran_msg.h - the framing of ltran's socket messages, written once for
 * both ends (lstack/nic/ltran_nic.c and ltran/ltran_ctl.c): a struct
 * ltran_hdr and a body in one SOCK_SEQPACKET message, with at most one fd
 * passed along (SCM_RIGHTS). What the messages mean: ltran_proto.h.
 *
 * The socket calls come from the caller's struct ltran_io: inside a process
 * under the preload the plain libc names are lstack's own exports, so
 * ltran_nic.c passes raw system calls. Pure otherwise: no DPDK, no lwIP, no
 * state. Any thread. Returns follow each call: a length or -1 with errno.
 */
#ifndef LSTACK_LTRAN_MSG_H
#define LSTACK_LTRAN_MSG_H

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/types.h>

#include "common/ltran_proto.h"

struct ltran_io {
    ssize_t (*sendmsg)(int fd, const struct msghdr *mh, int flags);
    ssize_t (*recvmsg)(int fd, struct msghdr *mh, int flags);
    int (*close)(int fd);
};

/* The longest message: the STATS reply with every client. */
#define LTRAN_MSG_MAX                                                                                  \
    (sizeof(struct ltran_hdr) + sizeof(struct ltran_stats) + LTRAN_MAX_CLIENTS * sizeof(struct ltran_client_info))

/* Send one message: a header of this version (type, status, len) and len
 * bytes of body, with fd pass_fd (>= 0) passed along. Returns what sendmsg
 * returns; -1 with errno EMSGSIZE when the message is longer than
 * LTRAN_MSG_MAX. */
ssize_t ltran_msg_send(const struct ltran_io *io, int fd, int flags, uint16_t type, int32_t status,
                       const void *body, uint32_t len, int pass_fd);

/* Receive one message into buf (len bytes at most). An fd that came with it
 * goes to *passed when passed is not NULL and *passed < 0; any other is
 * closed (a message carries one at most). Returns what recvmsg returns. */
ssize_t ltran_msg_recv(const struct ltran_io *io, int fd, int flags, void *buf, size_t len, int *passed);

/* The header of a received message of n bytes: 0, or -1 when n is shorter
 * than a header or the magic is not LTRAN_MAGIC. The body is the n -
 * sizeof(*h) bytes after it. */
int ltran_msg_header(const void *msg, size_t n, struct ltran_hdr *h);

#endif
