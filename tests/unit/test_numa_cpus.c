/*
 * test_numa_cpus.c - the NUMA helpers of the DPDK side (nic/numa_thread.c):
 * a CPU's node, and the CPUs application threads of a stack may use under
 * app_bind_numa (its node's CPUs, read here independently from sysfs, less
 * app_exclude_cpus); bad input gets an error, not a set.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nic/nic_queues.h"
#include "tap.h"

/* CPUs listed in /sys/devices/system/node/node<n>/cpulist ("0-3,8"). */
static int sysfs_node_cpus(int node, cpu_set_t *set)
{
    char path[128], buf[4096];
    snprintf(path, sizeof(path), "/sys/devices/system/node/node%d/cpulist", node);
    FILE *f = fopen(path, "r");
    if (f == NULL)
        return -1;
    size_t n = fread(buf, 1, sizeof(buf) - 1, f);
    fclose(f);
    buf[n] = '\0';
    CPU_ZERO(set);
    char *save = NULL;
    for (char *tok = strtok_r(buf, ",\n", &save); tok != NULL; tok = strtok_r(NULL, ",\n", &save)) {
        int a, b;
        if (sscanf(tok, "%d-%d", &a, &b) == 2)
            for (int c = a; c <= b; c++)
                CPU_SET(c, set);
        else if (sscanf(tok, "%d", &a) == 1)
            CPU_SET(a, set);
    }
    return 0;
}

int main(void)
{
    int node = nic_cpu_node(0);
    cpu_set_t want;
    if (node < 0 || sysfs_node_cpus(node, &want) != 0) {
        printf("1..0 # SKIP no NUMA information on this machine\n");
        return 0;
    }
    check(CPU_ISSET(0, &want), "CPU 0's node (from libnuma) lists CPU 0 in sysfs");
    cpu_set_t got;
    int n = nic_app_cpus(0, NULL, &got);
    checkf(n == CPU_COUNT(&want) && CPU_EQUAL(&got, &want), "no exclusions: the node's %d CPUs (%d)",
           CPU_COUNT(&want), n);
    cpu_set_t ex;
    CPU_ZERO(&ex);
    CPU_SET(0, &ex);
    CPU_SET(1000, &ex); /* not a CPU of the machine: ignored */
    n = nic_app_cpus(0, &ex, &got);
    CPU_CLR(0, &want);
    if (CPU_COUNT(&want) > 0)
        checkf(n == CPU_COUNT(&want) && CPU_EQUAL(&got, &want) && !CPU_ISSET(0, &got),
               "app_exclude_cpus 0: the node's CPUs less CPU 0 (%d)", n);
    else
        checkf(n == -ENOENT, "app_exclude_cpus 0 on a one-CPU node: -ENOENT (%d)", n);
    cpu_set_t all;
    CPU_ZERO(&all);
    for (int c = 0; c < CPU_SETSIZE; c++)
        CPU_SET(c, &all);
    checkf(nic_app_cpus(0, &all, &got) == -ENOENT && CPU_COUNT(&got) == 0,
           "every CPU excluded: -ENOENT and an empty set");
    check(nic_app_cpus(-1, NULL, &got) == -EINVAL, "CPU -1: -EINVAL");
    check(nic_app_cpus(CPU_SETSIZE + 5, NULL, &got) == -EINVAL, "a CPU that does not exist: -EINVAL");
    check(nic_cpu_node(-3) == -1, "node of CPU -3: -1");
    return tap_done();
}
