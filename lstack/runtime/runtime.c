/*
 * runtime.c - the stack lock, the poll round, and the runtime's accessors
 * (see runtime.h).
 * The lock is a futex lock (common/futex_lock.h: a compare-and-swap to take,
 * an exchange to release, sleeping in the kernel when contended).
 * Rejected: a spinlock (a thread blocked in a long lwIP call would make the
 * others burn their CPU), a recursive mutex (lock nesting would hide
 * layering mistakes), and glibc's pthread mutex (its trylock + unlock cost
 * 60 instructions a pair, twice a request and once a poll round).
 */
#include <arpa/inet.h>
#include <time.h>

#include "common/futex_lock.h"
#include "runtime/runtime_priv.h"
#include "sock/lsock.h"
#include "stack/stack.h"

volatile int rt_state_v = RT_PASSIVE;
struct rt rt;

static struct futex_lock stack_mu = FUTEX_LOCK_INIT;
static int stack_mu_waiters; /* threads blocked in rt_lock */

void rt_lock(void)
{
    if (futex_trylock(&stack_mu))
        return;
    __atomic_add_fetch(&stack_mu_waiters, 1, __ATOMIC_RELAXED);
    futex_lock(&stack_mu);
    __atomic_sub_fetch(&stack_mu_waiters, 1, __ATOMIC_RELAXED);
}

bool rt_lock_contended(void)
{
    return __atomic_load_n(&stack_mu_waiters, __ATOMIC_RELAXED) != 0;
}

void rt_unlock(void)
{
    futex_unlock(&stack_mu);
}

unsigned rt_poll(void)
{
    if (rt.stack == NULL)
        return 0;
    lsock_flush_acks(rt.stack); /* ACKs lwIP would delay, now that the app read */
    return stack_poll(rt.stack);
}

struct stack *rt_stack(void)
{
    return rt.stack;
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
