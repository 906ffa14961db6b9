/*
 * iov.c - Linux's checks on a vectored call's iovec array, and the cursor
 * that walks it without copying it. Contracts and rejected designs in iov.h.
 */
#include "posix/iov.h"

#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <string.h>
#include <sys/types.h>

/* Usable bytes of entry i: its length, or less for the entry the cap cut. */
static size_t entry_len(const struct iov_cur *c, size_t i)
{
    return i + 1 == c->cnt ? c->last_len : c->iov[i].iov_len;
}

int iov_cur_init(struct iov_cur *c, const struct iovec *iov, size_t cnt)
{
    /* One entry (read, write, send, recv: most calls): the general path's
     * result without its loops. */
    if (cnt == 1 && iov != NULL) {
        size_t len = iov[0].iov_len;
        if (len > (size_t)SSIZE_MAX)
            return -EINVAL;
        c->iov = iov;
        c->cnt = 1;
        c->last_len = c->left = len > LSTACK_RW_MAX ? LSTACK_RW_MAX : len;
        c->idx = 0;
        c->off = 0;
        return 0;
    }
    memset(c, 0, sizeof(*c));
    c->iov = iov;
    if (cnt > 0 && iov == NULL)
        return -EFAULT;
    /* Every length first, like Linux: one bad entry fails the call even if
     * the cap would have dropped it. */
    for (size_t i = 0; i < cnt; i++)
        if (iov[i].iov_len > (size_t)SSIZE_MAX)
            return -EINVAL;
    size_t total = 0;
    c->cnt = cnt;
    c->last_len = cnt > 0 ? iov[cnt - 1].iov_len : 0;
    for (size_t i = 0; i < cnt; i++) {
        if (iov[i].iov_len > LSTACK_RW_MAX - total) {
            c->cnt = i + 1;
            c->last_len = LSTACK_RW_MAX - total;
            total = LSTACK_RW_MAX;
            break;
        }
        total += iov[i].iov_len;
    }
    c->left = total;
    iov_cur_advance(c, 0); /* step over leading empty entries */
    return 0;
}

const struct iovec *iov_cur_next(const struct iov_cur *c, struct iovec *one, int *n,
                                 size_t *bytes)
{
    if (c->left == 0) {
        *n = 0;
        *bytes = 0;
        return c->iov;
    }
    size_t len = entry_len(c, c->idx);
    if (c->off > 0 || len < c->iov[c->idx].iov_len) {
        one->iov_base = (char *)c->iov[c->idx].iov_base + c->off;
        one->iov_len = len - c->off;
        *n = 1;
        *bytes = one->iov_len;
        return one;
    }
    size_t end = c->cnt;
    size_t run = c->left;
    if (c->last_len < c->iov[c->cnt - 1].iov_len) { /* the cut entry comes on its own */
        end--;
        run -= c->last_len;
    }
    *n = (int)(end - c->idx);
    *bytes = run;
    return c->iov + c->idx;
}

void iov_cur_advance(struct iov_cur *c, size_t done)
{
    if (done > c->left)
        done = c->left;
    c->left -= done;
    /* Move past what is done and past empty entries, so that the cursor
     * always rests on an entry with bytes left (or left is 0). */
    while (c->left > 0 && c->idx < c->cnt) {
        size_t room = entry_len(c, c->idx) - c->off;
        if (room > done) {
            c->off += done;
            return;
        }
        done -= room;
        c->idx++;
        c->off = 0;
    }
}
