/*
 * iov.h - the caller's iovec array of a vectored call on a stack socket
 * (readv, writev, recvmsg, sendmsg, and the one-buffer calls as one entry):
 * Linux's checks on it, and a cursor that walks it without copying it.
 *
 * Pure: no lwIP, no lock, no errno. Any thread.
 * Design: docs/design.md#iovec-arrays-are-walked-in-place
 */
#ifndef LSTACK_IOV_H
#define LSTACK_IOV_H

#include <stddef.h>
#include <sys/uio.h>

/*
 * Linux (6.x, measured: docs/reliability.md#vectored-io):
 *  - readv / writev with a count below 0 or above UIO_MAXIOV (1024, glibc's
 *    IOV_MAX): EINVAL; recvmsg / sendmsg with msg_iovlen above it: EMSGSIZE
 *    (the callers check the count, each with its errno);
 *  - an entry whose length is negative as an ssize_t: EINVAL, before any
 *    byte moves;
 *  - the total is capped at MAX_RW_COUNT (INT_MAX rounded down to a page):
 *    the entry that crosses it is shortened, the ones after it ignored.
 * A NULL array with a non-zero count is EFAULT (other bad addresses are not
 * detected: the copy would fault, where Linux returns EFAULT).
 *
 * The cursor hands the sock layer runs of the caller's own entries; only an
 * entry that is partly done (a short write or read before it) or shortened by
 * the cap is handed as a single entry of its own, so no call copies the array
 * and none keeps an IOV_MAX-sized array on its stack.
 */

#define LSTACK_IOV_MAX 1024          /* Linux's UIO_MAXIOV */
#define LSTACK_RW_MAX 0x7ffff000UL   /* Linux's MAX_RW_COUNT (4 KiB pages) */

/* Where a call is in the caller's array. Fields are read-only outside iov.c
 * except through the functions below; left is for the callers to read. */
struct iov_cur {
    const struct iovec *iov; /* the caller's array (borrowed) */
    size_t cnt;              /* entries in play: those after the cap dropped */
    size_t last_len;         /* usable bytes of iov[cnt - 1] (shortened by the cap) */
    size_t idx;              /* current entry */
    size_t off;              /* bytes of iov[idx] already done */
    size_t left;             /* bytes still to do, <= LSTACK_RW_MAX */
};

/* Check iov[0..cnt) (cnt already within LSTACK_IOV_MAX) and start c at its
 * first byte. Returns 0, -EINVAL (an iov_len above SSIZE_MAX) or -EFAULT
 * (iov NULL, cnt > 0). */
int iov_cur_init(struct iov_cur *c, const struct iovec *iov, size_t cnt);

/* The next run to hand to lsock_send / lsock_recv: returns the entries to
 * pass (either the caller's, from the cursor on, or one, filled here with
 * the rest of a partly done or shortened entry), their count in *n and their
 * bytes in *bytes. With nothing left: *n = 0, *bytes = 0. Does not move c. */
const struct iovec *iov_cur_next(const struct iov_cur *c, struct iovec *one, int *n,
                                 size_t *bytes);

/* Mark done bytes as done (at most the *bytes of the last iov_cur_next). */
void iov_cur_advance(struct iov_cur *c, size_t done);

#endif
