/*
 * sleep.c - the low-power sleep's wake-up source of a context: a port that
 * can wake a sleeping waiter (ltran's: nic_ops.sleep_begin/sleep_end, an
 * eventfd that ltran writes when it puts frames on this process's rx ring)
 * lends the wait loop (event/wait.c) an fd to poll with the kernel fds,
 * through the loop's wake_begin / wake_end. Ports without one (a direct
 * DPDK port: no interrupts on the vdevs) keep the timed sleep
 * (stack_loop.can_wake false).
 *
 * A forked child never sleeps on its parent's wake-up (it would clear the
 * parent's word): it never reaches a loop (runtime.h: RT_PASSIVE).
 * Design: docs/design.md#the-low-power-wake-up-goes-through-the-runtime
 */
#include <errno.h>

#include "nic/nic.h"
#include "runtime/stack_ctx.h"

int sctx_wake_begin(struct stack_loop *l)
{
    struct nic *n = sctx_of(l)->nic;
    if (n == NULL || n->ops->sleep_begin == NULL)
        return -ENOTSUP;
    return n->ops->sleep_begin(n);
}

void sctx_wake_end(struct stack_loop *l)
{
    struct nic *n = sctx_of(l)->nic;
    if (n != NULL && n->ops->sleep_end != NULL)
        n->ops->sleep_end(n);
}
