/*
 * runtime.c - the runtime's accessors over the per-stack contexts (see
 * runtime.h and runtime/stack_ctx.h): each context's lock and poll round
 * as its loop's operations, the hooks other parts register, and the
 * process-wide facts (host address, forked child).
 *
 * A context's lock is a futex lock (common/futex_lock.h: a compare-and-swap
 * to take, an exchange to release, sleeping in the kernel when contended).
 * Which stack a socket lives on: stacks.c.
 * Design: docs/design.md#the-stack-lock-is-a-futex-lock-not-a-spinlock-or-mutex
 */
#include <arpa/inet.h>
#include <time.h>

#include "runtime/runtime_priv.h"
#include "sock/lsock.h"
#include "stack/stack.h"

volatile int rt_state_v = RT_PASSIVE;
struct rt rt;

const struct rt_hooks *rt_hooks[RT_HOOKS_MAX];
int rt_nhooks;

void rt_hooks_register(const struct rt_hooks *h)
{
    if (rt_nhooks < RT_HOOKS_MAX)
        rt_hooks[rt_nhooks++] = h;
}

void sctx_loop_lock(struct stack_loop *l)
{
    sctx_lock(sctx_of(l));
}

void sctx_loop_unlock(struct stack_loop *l)
{
    sctx_unlock(sctx_of(l));
}

bool sctx_loop_contended(struct stack_loop *l)
{
    return sctx_contended(sctx_of(l));
}

void rt_lock_all(void)
{
    for (int i = 0; i < rt.nstacks; i++)
        sctx_lock(&rt.stacks[i]);
}

void rt_unlock_all(void)
{
    for (int i = rt.nstacks - 1; i >= 0; i--)
        sctx_unlock(&rt.stacks[i]);
}

unsigned sctx_poll(struct stack_ctx *c)
{
    if (c->stack == NULL)
        return 0;
    lsock_flush_acks(c->stack); /* ACKs lwIP would delay, now that the app read */
    if (lsock_pending(c->stack))
        lsock_service(c->stack); /* what the sockets left for the round */
    return stack_poll(c->stack);
}

uint32_t rt_host_addr(void)
{
    return rt.host_addr;
}

bool rt_addr_is_kernel(uint32_t addr)
{
    return (ntohl(addr) >> 24) == 127 || addr == rt.host_addr;
}

bool rt_is_child(void)
{
    return rt.child;
}

uint64_t rt_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}
