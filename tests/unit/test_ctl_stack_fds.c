/*
 * test_ctl_stack_fds.c - which fds the stack holds (lstack/ctl/ctl_stack_fds.c: the
 * fds_stack and fds_hugepage fields of `stackctl show stats`), one
 * behaviour per test, on this process's own fds. No root. TAP output.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <unistd.h>

#include "ctl/ctl_stack_fds.h"
#include "tap.h"

static uint64_t stack_fds(const struct ctl_fd_census *c, const int *own, size_t nown)
{
    struct ctl_stack_fd_count n;
    if (ctl_stack_fds_count(c, own, nown, &n) != 0)
        return (uint64_t)-1;
    return n.stack;
}

/* One check of a count: prints both figures when it fails. */
static void expect_count(const char *name, uint64_t got, uint64_t want)
{
    check(got == want, name);
    if (got != want)
        printf("#   counted %llu, expected %llu\n", (unsigned long long)got, (unsigned long long)want);
}

static void census_counts_what_start_opened(void)
{
    struct ctl_fd_census c = {0};
    int p[2], efd;
    check(ctl_census_begin(&c) == 0, "census: begin lists the fds");
    if (pipe(p) != 0 || (efd = eventfd(0, 0)) < 0) {
        check(0, "census: pipe and eventfd");
        return;
    }
    check(ctl_census_end(&c) == 0, "census: end lists the new fds");
    expect_count("census: a pipe and an eventfd opened between begin and end count", stack_fds(&c, NULL, 0), 3);
    int later = eventfd(0, 0);
    expect_count("census: an fd opened after end does not count", stack_fds(&c, NULL, 0), 3);
    close(later);
    close(p[0]);
    close(p[1]);
    close(efd);
    ctl_census_free(&c);
}

static void census_forgets_reused_number(void)
{
    struct ctl_fd_census c = {0};
    ctl_census_begin(&c);
    int p[2];
    if (pipe(p) != 0) {
        check(0, "reuse: pipe");
        return;
    }
    ctl_census_end(&c);
    int q[2];
    close(p[0]);
    if (pipe(q) != 0) { /* the lowest free number: p[0]'s, now another pipe */
        check(0, "reuse: second pipe");
        return;
    }
    check(q[0] == p[0], "reuse: the closed number was handed out again");
    expect_count("reuse: a census fd closed and its number reused by another object no longer counts",
                 stack_fds(&c, NULL, 0), 1);
    close(q[0]);
    close(q[1]);
    close(p[1]);
    ctl_census_free(&c);
}

static void lstack_memfd_counts_by_name(void)
{
    int ours = memfd_create("lstack-test", MFD_CLOEXEC);
    int theirs = memfd_create("app-test", MFD_CLOEXEC);
    expect_count("memfd: lstack's memfd counts without a census, another memfd does not", stack_fds(NULL, NULL, 0),
                 1);
    close(ours);
    close(theirs);
}

static void own_fds_count(void)
{
    int p[2];
    if (pipe(p) != 0) {
        check(0, "own: pipe");
        return;
    }
    expect_count("own: the control server's fds count (and only those given)", stack_fds(NULL, p, 1), 1);
    close(p[0]);
    close(p[1]);
}

static void hugepage_memfd_counts(void)
{
    int fd = memfd_create("seg_0", MFD_CLOEXEC | MFD_HUGETLB);
    if (fd < 0) {
        printf("ok %d - # SKIP hugepage: memfd_create(MFD_HUGETLB): %s\n", ++tap_count, strerror(errno));
        return;
    }
    struct ctl_stack_fd_count n;
    int rc = ctl_stack_fds_count(NULL, NULL, 0, &n);
    check(rc == 0 && n.hugepage == 1 && n.stack == 1, "hugepage: a hugetlbfs memfd counts, as stack and hugepage");
    if (rc != 0 || n.hugepage != 1 || n.stack != 1)
        printf("#   rc %d, stack %llu, hugepage %llu\n", rc, (unsigned long long)n.stack,
               (unsigned long long)n.hugepage);
    close(fd);
}

static void end_without_begin(void)
{
    struct ctl_fd_census c = {0};
    check(ctl_census_end(&c) == -EINVAL && c.nmarks == 0, "census: end without begin is -EINVAL, census empty");
}

int main(void)
{
    expect_count("nothing of this test process is the stack's", stack_fds(NULL, NULL, 0), 0);
    census_counts_what_start_opened();
    census_forgets_reused_number();
    lstack_memfd_counts_by_name();
    own_fds_count();
    hugepage_memfd_counts();
    end_without_begin();
    return tap_done();
}
