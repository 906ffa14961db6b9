/*
 * runtime.c - the runtime's accessors over the per-stack contexts (see
 * runtime.h and runtime/stack_ctx.h).
 *
 * rt_lock is stack 0's context's lock: with several stacks (run-to-wakeup
 * only) every context takes that one (stack_ctx.h, lock_of). rt_poll is
 * stack 0's round: run-to-completion runs one stack. Which stack a socket
 * lives on: stacks.c. The lock is a
 * futex lock (common/futex_lock.h: a compare-and-swap to take, an exchange
 * to release, sleeping in the kernel when contended).
 * Design: docs/design.md#the-stack-lock-is-a-futex-lock-not-a-spinlock-or-mutex
 */
#include <arpa/inet.h>
#include <time.h>

#include "runtime/runtime_priv.h"
#include "sock/lsock.h"
#include "stack/stack.h"

volatile int rt_state_v = RT_PASSIVE;
struct rt rt;

void rt_lock(void)
{
    sctx_lock(&rt.stacks[0]);
}

bool rt_lock_contended(void)
{
    return sctx_contended(&rt.stacks[0]);
}

void rt_unlock(void)
{
    sctx_unlock(&rt.stacks[0]);
}

unsigned sctx_poll(struct stack_ctx *c)
{
    if (c->stack == NULL)
        return 0;
    lsock_flush_acks(c->stack); /* ACKs lwIP would delay, now that the app read */
    return stack_poll(c->stack);
}

unsigned rt_poll(void)
{
    return sctx_poll(&rt.stacks[0]);
}

void rt_flush(void)
{
    struct stack_ctx *c = &rt.stacks[0];
    if (c->stack != NULL)
        c->mode->flush(c);
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

bool rt_low_power(void)
{
    return rt.low_power;
}

uint64_t rt_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}
