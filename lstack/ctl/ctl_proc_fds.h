/*
 * ctl_proc_fds.h - the process's file descriptors as the control socket reports
 * them: how many are open and the limit (RLIMIT_NOFILE). Read by `show
 * stats` (the "app" record) and by the server's out-of-fds answer.
 * Control thread only (any thread could call; nothing is cached).
 */
#ifndef LSTACK_CTL_PROC_FDS_H
#define LSTACK_CTL_PROC_FDS_H

struct ctl_buf;

/* fds open in the process now, or -1 if it cannot be told. Costs one
 * stat() on Linux >= 6.2 (the size of /proc/self/fd); older kernels: a
 * walk of /proc/self/fd, which needs an fd itself (-1 when out of fds). */
long ctl_proc_fds_open(void);

/* The soft RLIMIT_NOFILE: a new fd must be below it. -1 if unlimited or
 * unknown. */
long ctl_proc_fds_limit(void);

/* Add "fds_open" and "fds_limit" (-1: unknown) to the record being written
 * to b (between ctl_rec_begin and ctl_rec_end). */
void ctl_put_process_fds(struct ctl_buf *b);

#endif
