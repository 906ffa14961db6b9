/*
 * fork.c - fork() of a bound process.
 *
 * The child shares the parent's hugepage memory and NIC queues: it must
 * never touch DPDK or lwIP. A child forked after the stack started becomes
 * passive (every call goes to libc; its copies of stack fds only drop their
 * own view when closed). A child forked before (daemonize) stays as it was
 * and may start the stack itself.
 */
#include <sys/types.h>
#include <unistd.h>

#include "common/libc.h"
#include "runtime/runtime_priv.h"

pid_t lstack_fork(void);

pid_t lstack_fork(void)
{
    int before = rt_state_v;
    /* Nobody may be inside lwIP while the address space is copied. */
    if (before == RT_READY)
        rt_lock_all();
    pid_t pid = libc.fork();
    if (before == RT_READY)
        rt_unlock_all(); /* the child's copies of the locks are released too, never used */
    if (pid == 0 && before != RT_UNINIT && before != RT_PASSIVE) {
        rt.child = true;
        rt_state_v = RT_PASSIVE;
    }
    return pid;
}
