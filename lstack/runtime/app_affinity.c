/*
 * app_affinity.c - where application threads run (lstack.conf's
 * main_thread_affinity, app_bind_numa and app_exclude_cpus, with Gazelle's
 * meaning). Contracts in app_affinity.h.
 * Design: docs/design.md#application-threads-are-bound-at-their-first-sleep
 */
#include "runtime/app_affinity.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common/log.h"
#include "conf/conf.h"
#include "conf/conf_values.h"

/*
 * Owns: the plan (which CPUs the main thread and each stack's application
 * threads get), computed once at start from the conf and the NUMA topology
 * (nic_app_cpus, through a function pointer so that the plan is testable
 * without DPDK or libnuma), and the two places it is applied:
 *  - main_thread_affinity = 1: at start, the main thread (thread id ==
 *    process id, whichever thread starts the stack) is pinned to the stack
 *    CPUs (num_cpus). EAL saves and restores the affinity of the thread that
 *    initialises it (nic/eal.c), so the pin is made after the stack is up.
 *  - app_bind_numa = 1 (run-to-wakeup only; the parser rejects it with
 *    run-to-completion): a thread that waits on a stack (epoll_wait, poll,
 *    select, a blocking socket call) is bound at its first sleep to the
 *    CPUs of that stack's NUMA node less app_exclude_cpus (Gazelle binds its
 *    application's epoll and poll threads the same way). The main thread is
 *    left alone when main_thread_affinity pinned it.
 */

/* Written by the init thread before RT_READY (no application thread sleeps
 * on a stack before then), read by application threads afterwards. */
static struct rt_affinity_plan plan;
static int plan_on; /* atomic: plan is valid */
static int warned;  /* atomic: a refused binding was logged */

void rt_affinity_exclude_set(const struct lstack_conf *c, cpu_set_t *out)
{
    CPU_ZERO(out);
    for (int cpu = 0; cpu < CPU_SETSIZE && cpu < LSTACK_CONF_CPU_WORDS * 64; cpu++)
        if (lstack_cpu_mask_has(&c->app_exclude_cpus, cpu))
            CPU_SET(cpu, out);
}

/* set as a CPU list ("0-3,7") into buf. */
static const char *set_text(const cpu_set_t *set, char *buf, size_t len)
{
    struct lstack_cpu_mask m;

    memset(&m, 0, sizeof(m));
    for (int cpu = 0; cpu < CPU_SETSIZE && cpu < LSTACK_CONF_CPU_WORDS * 64; cpu++)
        if (CPU_ISSET(cpu, set))
            m.bits[cpu / 64] |= (uint64_t)1 << (cpu % 64);
    lstack_cpu_mask_format(&m, buf, len);
    return buf;
}

int rt_affinity_plan(const struct lstack_conf *c, rt_app_cpus_fn app_cpus,
                     struct rt_affinity_plan *p, char *err, size_t errlen)
{
    char ex[256];

    memset(p, 0, sizeof(*p));
    CPU_ZERO(&p->main_cpus);
    p->nstacks = c->num_cpus < LSTACK_CONF_STACKS_SUPPORTED ? c->num_cpus
                                                            : LSTACK_CONF_STACKS_SUPPORTED;
    p->pin_main = c->main_thread_affinity;
    for (int i = 0; i < c->num_cpus && i < LSTACK_CONF_MAX_CPUS; i++)
        if (c->cpus[i] >= 0 && c->cpus[i] < CPU_SETSIZE)
            CPU_SET(c->cpus[i], &p->main_cpus);
    if (p->pin_main && CPU_COUNT(&p->main_cpus) == 0) {
        snprintf(err, errlen, "main_thread_affinity = 1: num_cpus names no CPU to pin the main thread to");
        return -1;
    }
    p->bind_app = c->app_bind_numa && c->stack_thread_mode == LSTACK_MODE_RUN_TO_WAKEUP;
    if (!p->bind_app)
        return 0;
    cpu_set_t exclude;
    rt_affinity_exclude_set(c, &exclude);
    set_text(&exclude, ex, sizeof(ex));
    for (int i = 0; i < p->nstacks; i++) {
        int n = app_cpus(c->cpus[i], &exclude, &p->app_cpus[i]);
        if (n == -ENOENT) {
            snprintf(err, errlen,
                     "app_bind_numa = 1: app_exclude_cpus \"%s\" leaves no CPU of the NUMA node of "
                     "stack %d (CPU %d) for application threads",
                     ex, i, c->cpus[i]);
            return -1;
        }
        if (n <= 0) {
            snprintf(err, errlen,
                     "app_bind_numa = 1: the NUMA node of stack %d's CPU %d is unknown (no NUMA "
                     "support in this kernel, or no such CPU)",
                     i, c->cpus[i]);
            return -1;
        }
    }
    return 0;
}

int rt_affinity_start(const struct rt_affinity_plan *p, char *err, size_t errlen)
{
    char cpus[256];

    if (p->pin_main && sched_setaffinity(getpid(), sizeof(p->main_cpus), &p->main_cpus) != 0) {
        snprintf(err, errlen, "main_thread_affinity = 1: cannot pin the main thread to CPUs %s: %s",
                 set_text(&p->main_cpus, cpus, sizeof(cpus)), strerror(errno));
        return -1;
    }
    plan = *p;
    __atomic_store_n(&plan_on, 1, __ATOMIC_RELEASE);
    if (p->pin_main)
        LSTACK_INFO("main_thread_affinity: main thread pinned to CPUs %s",
                    set_text(&p->main_cpus, cpus, sizeof(cpus)));
    for (int i = 0; p->bind_app && i < p->nstacks; i++)
        LSTACK_INFO("app_bind_numa: threads waiting on stack %d are bound to CPUs %s", i,
                    set_text(&p->app_cpus[i], cpus, sizeof(cpus)));
    return 0;
}

void rt_affinity_stop(void)
{
    __atomic_store_n(&plan_on, 0, __ATOMIC_RELEASE);
}

int rt_affinity_app_thread(int stack)
{
    if (!__atomic_load_n(&plan_on, __ATOMIC_ACQUIRE) || !plan.bind_app || stack < 0 ||
        stack >= plan.nstacks)
        return 0;
    if (plan.pin_main && syscall(SYS_gettid) == getpid())
        return 0;
    if (sched_setaffinity(0, sizeof(plan.app_cpus[stack]), &plan.app_cpus[stack]) == 0)
        return 0;
    int e = errno;
    if (__atomic_exchange_n(&warned, 1, __ATOMIC_RELAXED) == 0) {
        char cpus[256];
        LSTACK_WARN("app_bind_numa: cannot bind a thread waiting on stack %d to CPUs %s: %s "
                    "(it keeps its affinity; said once)",
                    stack, set_text(&plan.app_cpus[stack], cpus, sizeof(cpus)), strerror(e));
    }
    return -e;
}
