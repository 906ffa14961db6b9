/*
 * sleep.c - the low-power sleep's wake-up source: a port that can wake a
 * sleeping waiter (ltran's: nic_ops.sleep_begin/sleep_end, an eventfd that
 * ltran writes when it puts frames on this process's rx ring) lends the
 * wait loop (event/wait.c) an fd to poll with the kernel fds. Ports without
 * one (a direct DPDK port: no interrupts on the vdevs) keep the timed sleep.
 *
 * Owns only the choice of port and the child rule: a forked child never
 * sleeps on its parent's wake-up (it would clear the parent's word).
 * Design: docs/design.md#the-low-power-wake-up-goes-through-the-runtime
 */
#include <errno.h>

#include "nic/nic.h"
#include "runtime/runtime_priv.h"

bool rt_can_wake(void)
{
    const struct nic *n = rt.nic;
    return n != NULL && !rt.child && n->ops->sleep_begin != NULL;
}

int rt_sleep_begin(void)
{
    struct nic *n = rt.nic;
    if (n == NULL || rt.child || n->ops->sleep_begin == NULL)
        return -ENOTSUP;
    return n->ops->sleep_begin(n);
}

void rt_sleep_end(void)
{
    struct nic *n = rt.nic;
    if (n != NULL && !rt.child && n->ops->sleep_end != NULL)
        n->ops->sleep_end(n);
}
