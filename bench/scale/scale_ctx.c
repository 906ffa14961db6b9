/*
 * scale_ctx.c - scale.h over the runtime's stack contexts
 * (runtime/stacks.h): the contexts of the process opened over the memory
 * ports as the runtime opens them over a port's queues, each stack's lock
 * and round taken through its loop's operations (run-to-completion's
 * table: the benchmark's threads are the owners), the lock's waits as the
 * context counts them (rt_stack_stats).
 */
#include "common/stack_loop.h"
#include "nic/handover.h"
#include "runtime/runtime.h"
#include "runtime/stacks.h"
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
    return rt_stack_nth(i);
}

void scale_lock(int i)
{
    loop_lock(rt_loop_nth(i));
}

void scale_unlock(int i)
{
    loop_unlock(rt_loop_nth(i));
}

unsigned scale_poll(int i)
{
    struct stack_loop *l = rt_loop_nth(i);
    return l->ops->poll(l);
}

void scale_flush(int i)
{
    loop_flush(rt_loop_nth(i));
}

int scale_sock_new(int i, struct lsock **out)
{
    return lsock_new(rt_stack_nth(i), out);
}

void scale_lock_counts(int i, uint64_t *cycles, uint64_t *waits)
{
    struct stack_stats st;
    scale_lock(i);
    rt_stack_stats(i, &st);
    scale_unlock(i);
    *cycles = st.lock_wait_cycles;
    *waits = st.lock_waits;
}
