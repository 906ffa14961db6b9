/*
 * ctl_stack_fds.h - which of the process's fds the stack holds: the fds_stack and
 * fds_hugepage fields of `stackctl show stats` (see ctl_stack_fds.c for how they
 * are told apart from the application's).
 *
 * Threads: the host takes the census (ctl_census_begin, start the stack,
 * ctl_census_end) on its start-up thread before ctl_start; after that the
 * census is read-only and ctl_stack_fds_count reads it on the control thread.
 * Never called from the data path: a count reads /proc/self/fd.
 */
#ifndef LSTACK_CTL_STACK_FDS_H
#define LSTACK_CTL_STACK_FDS_H

#include <stddef.h>
#include <stdint.h>

/* What readlink says an fd is ("pipe:[123]", "/memfd:seg_0 (deleted)"),
 * cut to this many bytes with its terminating NUL. */
#define CTL_FD_WHAT 96

struct ctl_fd_mark {
    int fd;
    char what[CTL_FD_WHAT];
};

/* The fds that appeared while the stack started. Zero-initialise. */
struct ctl_fd_census {
    int *before;              /* between begin and end: fds open at begin, sorted */
    size_t nbefore;
    struct ctl_fd_mark *marks; /* after end: fds open at end but not at begin, sorted by fd */
    size_t nmarks;
};

/* Note the fds open now. Returns 0, or -errno (the census then stays
 * empty: only the kinds recognised by what they are are counted). */
int ctl_census_begin(struct ctl_fd_census *c);

/* Record the fds opened since ctl_census_begin. Returns 0, or -errno (empty
 * census). A no-op returning -EINVAL without a successful begin. */
int ctl_census_end(struct ctl_fd_census *c);

/* Free what the census holds (it is empty afterwards). */
void ctl_census_free(struct ctl_fd_census *c);

struct ctl_stack_fd_count {
    uint64_t stack;           /* every fd below */
    uint64_t hugepage;        /* fds on hugetlbfs (DPDK's memory) */
};

/* Count the stack's fds now: hugepage fds, lstack's memfds, the census's
 * fds that still show the same thing, and own[0..nown) (the control
 * server's fds). c may be NULL. Returns 0, or -errno (/proc/self/fd
 * cannot be read, e.g. EMFILE at the fd limit). */
int ctl_stack_fds_count(const struct ctl_fd_census *c, const int *own, size_t nown, struct ctl_stack_fd_count *out);

#endif
