/*
 * numa_thread.c - where a stack's memory goes and what its thread is to
 * EAL: the NUMA node of a CPU (libnuma), the CPUs of a stack's node that
 * application threads may use (app_bind_numa, app_exclude_cpus), and
 * registering a stack thread that lstack started (not EAL) as an EAL
 * thread.
 *
 * A thread EAL did not start has no lcore id, and a mempool then has no
 * per-thread cache for it: every mbuf allocation and free of such a thread
 * (the PMD's rx refill included) is a compare-and-swap on the pool's
 * shared ring. rte_thread_register gives it an lcore id (and so a cache)
 * without pinning it (the caller pins its thread to its num_cpus CPU).
 * Design: docs/design.md#stack-threads-are-plain-threads-not-eal-lcores
 */
#include <errno.h>
#include <stdio.h>

#include <numa.h>
#include <rte_errno.h>
#include <rte_lcore.h>

#include "nic/nic_queues.h"

int nic_cpu_node(int cpu)
{
    if (cpu < 0 || numa_available() < 0)
        return -1;
    int node = numa_node_of_cpu(cpu);
    return node >= 0 ? node : -1;
}

int nic_app_cpus(int stack_cpu, const cpu_set_t *exclude, cpu_set_t *out)
{
    CPU_ZERO(out);
    int node = nic_cpu_node(stack_cpu);
    if (node < 0)
        return -EINVAL;
    struct bitmask *cpus = numa_allocate_cpumask();
    if (cpus == NULL)
        return -EINVAL;
    int rc = numa_node_to_cpus(node, cpus);
    int count = 0;
    for (unsigned c = 0; rc == 0 && c < cpus->size && c < CPU_SETSIZE; c++) {
        if (!numa_bitmask_isbitset(cpus, c) || (exclude != NULL && CPU_ISSET(c, exclude)))
            continue;
        CPU_SET(c, out);
        count++;
    }
    numa_free_cpumask(cpus);
    if (rc != 0)
        return -EINVAL;
    return count > 0 ? count : -ENOENT;
}

int nic_thread_register(char *err, size_t errlen)
{
    if (rte_thread_register() != 0) {
        snprintf(err, errlen, "cannot register the thread with DPDK: %s", rte_strerror(rte_errno));
        return -1;
    }
    return 0;
}

void nic_thread_unregister(void)
{
    rte_thread_unregister();
}
