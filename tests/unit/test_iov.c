/*
 * test_iov.c - the iovec cursor of the vectored calls (lstack/posix/iov.c):
 * Linux's checks on the array, the cap on the total, and runs handed out of
 * the caller's own array (no copy). Pure: no stack. TAP output, one
 * behaviour per check, what was seen printed on failure.
 */
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "posix/iov.h"
#include "tap.h"

static char buf[4096];

static void show(const char *what, const struct iovec *v, const struct iovec *base, int n,
                 size_t bytes)
{
    printf("#   %s: entry %td, n %d, bytes %zu\n", what, v - base, n, bytes);
}

static void t_bad_length(void)
{
    struct iovec iov[3] = {{buf, 10}, {buf, (size_t)SSIZE_MAX + 1}, {buf, 1}};
    struct iov_cur c;
    int rc = iov_cur_init(&c, iov, 3);
    if (rc != -EINVAL)
        printf("#   rc %d\n", rc);
    check(rc == -EINVAL, "an entry longer than SSIZE_MAX: -EINVAL");
}

static void t_bad_length_past_cap(void)
{
    struct iovec iov[2] = {{buf, LSTACK_RW_MAX}, {buf, SIZE_MAX}};
    struct iov_cur c;
    int rc = iov_cur_init(&c, iov, 2);
    if (rc != -EINVAL)
        printf("#   rc %d\n", rc);
    check(rc == -EINVAL, "a bad entry after the cap still fails the call (-EINVAL, Linux checks all)");
}

static void t_null_array(void)
{
    struct iov_cur c;
    int bad = iov_cur_init(&c, NULL, 1);
    int empty = iov_cur_init(&c, NULL, 0);
    if (bad != -EFAULT || empty != 0 || c.left != 0)
        printf("#   NULL,1: %d; NULL,0: %d left %zu\n", bad, empty, c.left);
    check(bad == -EFAULT && empty == 0 && c.left == 0, "a NULL array: -EFAULT with entries, nothing to do without");
}

static void t_whole_array_no_copy(void)
{
    static struct iovec iov[LSTACK_IOV_MAX];
    for (int i = 0; i < LSTACK_IOV_MAX; i++)
        iov[i] = (struct iovec){buf + i, 1};
    struct iov_cur c;
    struct iovec one;
    int n = -1;
    size_t bytes = 0;
    int rc = iov_cur_init(&c, iov, LSTACK_IOV_MAX);
    const struct iovec *v = iov_cur_next(&c, &one, &n, &bytes);
    if (rc != 0 || v != iov || n != LSTACK_IOV_MAX || bytes != LSTACK_IOV_MAX)
        show("got", v, iov, n, bytes);
    check(rc == 0 && v == iov && n == LSTACK_IOV_MAX && bytes == LSTACK_IOV_MAX,
          "1024 entries: the first run is the caller's own array, all of it");
}

static void t_partial_entry(void)
{
    struct iovec iov[3] = {{buf, 10}, {buf + 10, 10}, {buf + 20, 10}};
    struct iov_cur c;
    struct iovec one;
    int n;
    size_t bytes;
    iov_cur_init(&c, iov, 3);
    iov_cur_advance(&c, 15);
    const struct iovec *v = iov_cur_next(&c, &one, &n, &bytes);
    bool piece = v == &one && n == 1 && bytes == 5 && one.iov_base == buf + 15 && one.iov_len == 5;
    if (!piece)
        printf("#   after 15: %s, n %d, bytes %zu, base +%td\n", v == &one ? "one" : "array", n, bytes,
               (char *)v->iov_base - buf);
    iov_cur_advance(&c, 5);
    v = iov_cur_next(&c, &one, &n, &bytes);
    bool back = v == iov + 2 && n == 1 && bytes == 10;
    if (!back)
        show("after 20", v, iov, n, bytes);
    check(piece && back, "after a short write mid-entry: that entry's rest alone, then the caller's array again");
}

static void t_empty_entries(void)
{
    struct iovec iov[5] = {{buf, 0}, {NULL, 0}, {buf, 3}, {NULL, 0}, {buf + 3, 2}};
    struct iov_cur c;
    struct iovec one;
    int n;
    size_t bytes;
    iov_cur_init(&c, iov, 5);
    const struct iovec *v = iov_cur_next(&c, &one, &n, &bytes);
    bool first = v == iov + 2 && n == 3 && bytes == 5;
    if (!first)
        show("first", v, iov, n, bytes);
    iov_cur_advance(&c, 3);
    v = iov_cur_next(&c, &one, &n, &bytes);
    bool second = v == iov + 4 && n == 1 && bytes == 2;
    if (!second)
        show("after 3", v, iov, n, bytes);
    check(first && second, "empty entries are stepped over (a run never starts on one)");
}

static void t_cap(void)
{
    struct iovec iov[3] = {{buf, 100}, {buf, (size_t)SSIZE_MAX}, {buf, 7}};
    struct iov_cur c;
    struct iovec one;
    int n;
    size_t bytes;
    int rc = iov_cur_init(&c, iov, 3);
    bool total = rc == 0 && c.left == LSTACK_RW_MAX;
    const struct iovec *v = iov_cur_next(&c, &one, &n, &bytes);
    bool run = v == iov && n == 1 && bytes == 100;
    iov_cur_advance(&c, 100);
    v = iov_cur_next(&c, &one, &n, &bytes);
    bool cut = v == &one && n == 1 && bytes == LSTACK_RW_MAX - 100 && one.iov_len == bytes;
    iov_cur_advance(&c, bytes);
    iov_cur_next(&c, &one, &n, &bytes);
    bool done = c.left == 0 && n == 0 && bytes == 0;
    if (!(total && run && cut && done))
        printf("#   left at start %s, run %d, cut %d, done %d\n", total ? "ok" : "wrong", run, cut, done);
    check(total && run && cut && done,
          "total capped at MAX_RW_COUNT: the crossing entry cut (handed alone), later ones dropped");
}

static void t_nothing(void)
{
    struct iovec iov[2] = {{buf, 0}, {buf, 0}};
    struct iov_cur c;
    struct iovec one;
    int n = -1;
    size_t bytes = 1;
    int rc = iov_cur_init(&c, iov, 2);
    iov_cur_next(&c, &one, &n, &bytes);
    check(rc == 0 && n == 0 && bytes == 0, "only empty entries: a zero-length call (n 0)");
}

/* One entry (the fast path of iov_cur_init): the same checks, cap and walk
 * as an array. */
static void t_one_entry(void)
{
    struct iov_cur c;
    struct iovec bad = {buf, (size_t)SSIZE_MAX + 1};
    check(iov_cur_init(&c, &bad, 1) == -EINVAL, "one entry: a length above SSIZE_MAX is EINVAL");

    struct iovec big = {buf, (size_t)LSTACK_RW_MAX + 100};
    struct iovec one;
    int n;
    size_t bytes;
    int rc = iov_cur_init(&c, &big, 1);
    const struct iovec *v = iov_cur_next(&c, &one, &n, &bytes);
    checkf(rc == 0 && c.left == LSTACK_RW_MAX && v == &one && n == 1 && bytes == LSTACK_RW_MAX &&
               one.iov_base == buf && one.iov_len == LSTACK_RW_MAX,
           "one entry past the cap: handed as a copy cut to LSTACK_RW_MAX (left %zu, n %d, bytes %zu)", c.left, n,
           bytes);

    struct iovec e = {buf, 100};
    rc = iov_cur_init(&c, &e, 1);
    v = iov_cur_next(&c, &one, &n, &bytes);
    check(rc == 0 && v == &e && n == 1 && bytes == 100, "one entry: handed as the caller's own");
    iov_cur_advance(&c, 30);
    v = iov_cur_next(&c, &one, &n, &bytes);
    checkf(v == &one && n == 1 && bytes == 70 && one.iov_base == buf + 30,
           "one entry, 30 bytes done: the rest, 70 bytes from byte 30 (bytes %zu)", bytes);
    iov_cur_advance(&c, 70);
    v = iov_cur_next(&c, &one, &n, &bytes);
    check(c.left == 0 && n == 0 && bytes == 0, "one entry, all done: nothing left");

    struct iovec z = {buf, 0};
    rc = iov_cur_init(&c, &z, 1);
    v = iov_cur_next(&c, &one, &n, &bytes);
    check(rc == 0 && c.left == 0 && n == 0 && bytes == 0, "one empty entry: nothing to do");
}

int main(void)
{
    t_bad_length();
    t_bad_length_past_cap();
    t_null_array();
    t_whole_array_no_copy();
    t_partial_entry();
    t_empty_entries();
    t_cap();
    t_nothing();
    t_one_entry();
    return tap_done();
}
