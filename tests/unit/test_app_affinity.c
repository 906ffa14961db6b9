/*
 * test_app_affinity.c - where application threads run (runtime/
 * app_affinity.c): the plan computed from the conf (with a fake
 * NUMA topology: nic_app_cpus is tested on its own in test_numa_cpus.c),
 * and the affinity actually set, read back with sched_getaffinity: the
 * main thread pinned by main_thread_affinity, a thread bound at its first
 * sleep by app_bind_numa, the main thread left pinned, a refused binding
 * reported and harmless. CPUs are taken from this process's own affinity,
 * so the test runs on any machine (one with a single CPU skips what needs
 * two).
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "conf/conf.h"
#include "conf/conf_values.h"
#include "runtime/app_affinity.h"
#include "tap.h"

/* Fake topology: one node holding CPUs 0..fake_node_last; exclude taken out. */
static int fake_node_last = 7;
static int fake_calls;

static int fake_app_cpus(int stack_cpu, const cpu_set_t *exclude, cpu_set_t *out)
{
    fake_calls++;
    CPU_ZERO(out);
    if (stack_cpu < 0 || stack_cpu > fake_node_last)
        return -EINVAL;
    for (int c = 0; c <= fake_node_last; c++)
        if (exclude == NULL || !CPU_ISSET(c, exclude))
            CPU_SET(c, out);
    return CPU_COUNT(out) > 0 ? CPU_COUNT(out) : -ENOENT;
}

static void conf_with(struct lstack_conf *c, int stack_cpu, bool rtw, bool bind, const char *exclude,
                      bool pin_main)
{
    char why[128];
    lstack_conf_defaults(c);
    c->num_cpus = 1;
    c->cpus[0] = stack_cpu;
    c->stack_thread_mode = rtw ? LSTACK_MODE_RUN_TO_WAKEUP : LSTACK_MODE_RUN_TO_COMPLETION;
    c->app_bind_numa = bind;
    c->main_thread_affinity = pin_main;
    if (lstack_parse_cpumask(exclude, 0, 1023, &c->app_exclude_cpus, why, sizeof(why)) != 0)
        printf("# bad exclude list in the test: %s\n", why);
}

static void plan_tests(void)
{
    struct lstack_conf c;
    struct rt_affinity_plan p;
    char err[512] = "";

    conf_with(&c, 2, true, true, "1,3", false);
    fake_calls = 0;
    int rc = rt_affinity_plan(&c, fake_app_cpus, &p, err, sizeof(err));
    checkf(rc == 0 && p.bind_app && !p.pin_main && p.nstacks == 1, "plan: bind, no pin, 1 stack (rc %d: %s)", rc, err);
    checkf(CPU_COUNT(&p.app_cpus[0]) == 6 && !CPU_ISSET(1, &p.app_cpus[0]) && !CPU_ISSET(3, &p.app_cpus[0]) &&
               CPU_ISSET(2, &p.app_cpus[0]),
           "plan: stack 0's set is the node less 1 and 3 (%d CPUs)", CPU_COUNT(&p.app_cpus[0]));

    conf_with(&c, 2, true, false, "", true);
    fake_calls = 0;
    rc = rt_affinity_plan(&c, fake_app_cpus, &p, err, sizeof(err));
    checkf(rc == 0 && !p.bind_app && p.pin_main && CPU_COUNT(&p.main_cpus) == 1 && CPU_ISSET(2, &p.main_cpus) &&
               fake_calls == 0,
           "plan: main_thread_affinity alone pins to num_cpus {2}, no topology asked (calls %d)", fake_calls);

    conf_with(&c, 2, false, true, "", false);
    rc = rt_affinity_plan(&c, fake_app_cpus, &p, err, sizeof(err));
    check(rc == 0 && !p.bind_app, "plan: app_bind_numa with run-to-completion binds nothing (the parser refuses it)");

    conf_with(&c, 2, true, true, "0-7", false);
    err[0] = '\0';
    rc = rt_affinity_plan(&c, fake_app_cpus, &p, err, sizeof(err));
    checkf(rc == -1 && strstr(err, "app_exclude_cpus \"0-7\" leaves no CPU") != NULL &&
               strstr(err, "stack 0 (CPU 2)") != NULL,
           "plan: an exclude list that empties the node fails, naming the key, list and stack: %s", err);

    conf_with(&c, 9, true, true, "", false);
    err[0] = '\0';
    rc = rt_affinity_plan(&c, fake_app_cpus, &p, err, sizeof(err));
    checkf(rc == -1 && strstr(err, "NUMA node of stack 0's CPU 9 is unknown") != NULL,
           "plan: a stack CPU with no known node fails: %s", err);
}

struct probe {
    int stack;
    int rc;
    cpu_set_t after;
};

static void *first_sleep(void *arg)
{
    struct probe *pr = arg;
    pr->rc = rt_affinity_app_thread(pr->stack);
    sched_getaffinity(0, sizeof(pr->after), &pr->after);
    return NULL;
}

static struct probe run_thread(int stack)
{
    struct probe pr = {.stack = stack};
    pthread_t t;
    CPU_ZERO(&pr.after);
    pthread_create(&t, NULL, first_sleep, &pr);
    pthread_join(t, NULL);
    return pr;
}

/* The CPUs this process may use: the first two, a and b (-1 if none). */
static void two_cpus(const cpu_set_t *allowed, int *a, int *b)
{
    *a = *b = -1;
    for (int c = 0; c < CPU_SETSIZE; c++) {
        if (!CPU_ISSET(c, allowed))
            continue;
        if (*a < 0)
            *a = c;
        else if (*b < 0)
            *b = c;
    }
}

static void apply_tests(void)
{
    cpu_set_t orig, got;
    sched_getaffinity(getpid(), sizeof(orig), &orig);
    int a, b;
    two_cpus(&orig, &a, &b);
    if (b < 0) {
        printf("# SKIP the affinity checks: this process may use one CPU only\n");
        return;
    }
    fake_node_last = b > a ? b : a;
    struct lstack_conf c;
    struct rt_affinity_plan p;
    char err[512] = "", ex[16];

    /* app_bind_numa, app_exclude_cpus = b: a thread's first sleep binds it
     * to the node less b; the main thread (not pinned) too. */
    snprintf(ex, sizeof(ex), "%d", b);
    conf_with(&c, b, true, true, ex, false);
    int rc = rt_affinity_plan(&c, fake_app_cpus, &p, err, sizeof(err));
    rc = rc == 0 ? rt_affinity_start(&p, err, sizeof(err)) : rc;
    checkf(rc == 0, "start with app_bind_numa (%s)", err);
    struct probe pr = run_thread(0);
    checkf(pr.rc == 0 && CPU_EQUAL(&pr.after, &p.app_cpus[0]) && !CPU_ISSET(b, &pr.after) &&
               CPU_ISSET(a, &pr.after),
           "a thread's first sleep: sched_getaffinity shows the node less CPU %d (%d CPUs, rc %d)", b,
           CPU_COUNT(&pr.after), pr.rc);
    pr = run_thread(1);
    checkf(pr.rc == 0 && CPU_EQUAL(&pr.after, &orig), "a stack index with no set: the thread keeps its affinity");
    rt_affinity_stop();
    pr = run_thread(0);
    checkf(pr.rc == 0 && CPU_EQUAL(&pr.after, &orig), "after stop: nothing is bound");

    /* main_thread_affinity: the main thread pinned to num_cpus = {b},
     * whichever thread starts; a later first sleep of the main thread
     * leaves it there, another thread is still bound. */
    conf_with(&c, b, true, true, "", true);
    rc = rt_affinity_plan(&c, fake_app_cpus, &p, err, sizeof(err));
    rc = rc == 0 ? rt_affinity_start(&p, err, sizeof(err)) : rc;
    sched_getaffinity(getpid(), sizeof(got), &got);
    checkf(rc == 0 && CPU_COUNT(&got) == 1 && CPU_ISSET(b, &got),
           "main_thread_affinity: sched_getaffinity(main) is {%d} (%d CPUs, rc %d %s)", b, CPU_COUNT(&got), rc, err);
    rc = rt_affinity_app_thread(0);
    sched_getaffinity(0, sizeof(got), &got);
    checkf(rc == 0 && CPU_COUNT(&got) == 1 && CPU_ISSET(b, &got),
           "the pinned main thread's first sleep leaves it on {%d}", b);
    pr = run_thread(0);
    checkf(pr.rc == 0 && CPU_EQUAL(&pr.after, &p.app_cpus[0]) && CPU_COUNT(&pr.after) >= 2,
           "another thread's first sleep: bound to the node (%d CPUs)", CPU_COUNT(&pr.after));
    rt_affinity_stop();
    sched_setaffinity(getpid(), sizeof(orig), &orig);

    /* A set the kernel refuses (no CPU of it exists): -EINVAL, affinity kept. */
    memset(&p, 0, sizeof(p));
    p.bind_app = true;
    p.nstacks = 1;
    CPU_ZERO(&p.app_cpus[0]);
    CPU_SET(CPU_SETSIZE - 1, &p.app_cpus[0]);
    rc = rt_affinity_start(&p, err, sizeof(err));
    pr = run_thread(0);
    checkf(rc == 0 && pr.rc == -EINVAL && CPU_EQUAL(&pr.after, &orig),
           "a refused binding: -EINVAL, the thread keeps its affinity (rc %d)", pr.rc);
    rt_affinity_stop();

    /* main_thread_affinity to a CPU that does not exist: start fails and says so. */
    memset(&p, 0, sizeof(p));
    p.pin_main = true;
    CPU_SET(CPU_SETSIZE - 1, &p.main_cpus);
    err[0] = '\0';
    rc = rt_affinity_start(&p, err, sizeof(err));
    sched_getaffinity(getpid(), sizeof(got), &got);
    checkf(rc == -1 && strstr(err, "cannot pin the main thread to CPUs 1023") != NULL && CPU_EQUAL(&got, &orig),
           "a pin the kernel refuses fails the start, main thread unchanged: %s", err);
}

int main(void)
{
    plan_tests();
    apply_tests();
    return tap_done();
}
