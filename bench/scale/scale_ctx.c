/*
 * scale_ctx.c - scale.h over the runtime's stack contexts
 * (runtime/stacks.c): the contexts of the process opened over the memory
 * ports as the runtime opens them over a port's queues, each stack's lock
 * and round taken through its loop's operations (run-to-completion's
 * table: the benchmark's threads are the owners).
 */
#include "nic/handover.h"
#include "runtime/runtime_priv.h"
#include "sock/lsock.h"
#include "stack/stack.h"

#include "scale.h"

int scale_open(const struct lstack_conf *c, struct nic **q, int n, char *err, size_t errlen)
{
    return rt_stacks_open(c, q, n, &nic_handover_api, NULL, err, errlen);
}

void scale_close(void)
{
    rt_stacks_close();
}

struct stack *scale_stack(int i)
{
    return rt.stacks[i].stack;
}

void scale_lock(int i)
{
    loop_lock(rt.loops[i]);
}

void scale_unlock(int i)
{
    loop_unlock(rt.loops[i]);
}

unsigned scale_poll(int i)
{
    return rt.loops[i]->ops->poll(rt.loops[i]);
}

void scale_flush(int i)
{
    loop_flush(rt.loops[i]);
}

int scale_sock_new(int i, struct lsock **out)
{
    return lsock_new(rt.stacks[i].stack, out);
}

void scale_lock_counts(int i, uint64_t *cycles, uint64_t *waits)
{
    *cycles = __atomic_load_n(&rt.stacks[i].lock_wait_cycles, __ATOMIC_RELAXED);
    *waits = __atomic_load_n(&rt.stacks[i].lock_waits, __ATOMIC_RELAXED);
}
