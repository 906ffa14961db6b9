/*
 * app_affinity.h - where application threads run: the lstack.conf keys
 * main_thread_affinity, app_bind_numa and app_exclude_cpus
 * (runtime/app_affinity.c). Runtime-private: init.c computes the plan and
 * pins the main thread at start; the run-to-wakeup wait (mode_rtw.c) binds
 * a thread at its first sleep.
 */
#ifndef LSTACK_APP_AFFINITY_H
#define LSTACK_APP_AFFINITY_H

#include <sched.h>
#include <stdbool.h>
#include <stddef.h>

#include "conf/conf_keys.h"

struct lstack_conf;

/* The CPUs an application thread of the stack on CPU stack_cpu may use:
 * stack_cpu's NUMA node less *exclude. Fills *out; returns the count,
 * -EINVAL (node unknown) or -ENOENT (none left). nic_app_cpus
 * (nic/nic_queues.h) in the preload; a fake in the unit tests. */
typedef int (*rt_app_cpus_fn)(int stack_cpu, const cpu_set_t *exclude, cpu_set_t *out);

/* What the keys ask for, computed once from the conf. */
struct rt_affinity_plan {
    bool pin_main;                 /* main_thread_affinity = 1 */
    cpu_set_t main_cpus;           /* ...to these: every CPU of num_cpus */
    bool bind_app;                 /* app_bind_numa = 1 (run-to-wakeup) */
    int nstacks;                   /* stacks with a set below */
    cpu_set_t app_cpus[LSTACK_CONF_STACKS_SUPPORTED]; /* by stack index */
};

/* app_exclude_cpus as a cpu_set_t (CPU ids past CPU_SETSIZE dropped: the
 * parser stops at 1023 anyway). Pure. */
void rt_affinity_exclude_set(const struct lstack_conf *c, cpu_set_t *out);

/* The plan for conf c. app_cpus is called (only with app_bind_numa = 1)
 * for each stack's CPU. Returns 0, or -1 with one line in err naming the
 * key and the CPUs (app_exclude_cpus leaves no CPU of a stack's node; the
 * node of a stack CPU is unknown). Pure but for app_cpus. Any thread. */
int rt_affinity_plan(const struct lstack_conf *c, rt_app_cpus_fn app_cpus,
                     struct rt_affinity_plan *p, char *err, size_t errlen);

/* Keep *p as the process's plan, and with pin_main pin the main thread
 * (the thread whose id is the process id, whichever thread calls) to
 * main_cpus. Returns 0, or -1 with the kernel's refusal in err (the main
 * thread is then unchanged). The init thread, before RT_READY. */
int rt_affinity_start(const struct rt_affinity_plan *p, char *err, size_t errlen);

/* Forget the plan (stack stopped or start failed): later first sleeps bind
 * nothing. The init thread. */
void rt_affinity_stop(void);

/* The calling application thread is about to sleep on stack `stack` for
 * the first time: with app_bind_numa = 1, bind it to that stack's set (not
 * the main thread when main_thread_affinity pinned it). Returns 0 (bound,
 * or nothing to do) or a negative errno from sched_setaffinity, which is
 * also logged once per process (the thread keeps its affinity; its calls
 * work the same). Any application thread; call once per thread. */
int rt_affinity_app_thread(int stack);

#endif
