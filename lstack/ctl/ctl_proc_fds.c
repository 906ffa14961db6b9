/*
 * ctl_proc_fds.c - fds open in the process and its limit (see ctl_proc_fds.h).
 *
 * The count is the size stat() reports for /proc/self/fd (Linux 6.2 and
 * later: the number of open fds, no fd needed, constant time); 0 there
 * means an older kernel, and the directory is walked instead.
 * Design: docs/design.md#open-fds-are-counted-when-asked
 */
#include <dirent.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/stat.h>

#include "ctl/ctl_proc_fds.h"
#include "ctl/ctl_proto.h"

long ctl_proc_fds_open(void)
{
    struct stat st;
    if (stat("/proc/self/fd", &st) != 0)
        return -1;
    if (st.st_size > 0)
        return (long)st.st_size;
    DIR *d = opendir("/proc/self/fd");
    if (d == NULL)
        return -1;
    long n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL)
        n += e->d_name[0] != '.';
    closedir(d);
    return n - 1; /* the directory's own fd */
}

long ctl_proc_fds_limit(void)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY)
        return -1;
    return (long)rl.rlim_cur;
}

void ctl_put_process_fds(struct ctl_buf *b)
{
    ctl_rec_i64(b, "fds_open", ctl_proc_fds_open());
    ctl_rec_i64(b, "fds_limit", ctl_proc_fds_limit());
}
