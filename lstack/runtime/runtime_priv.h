/*
 * runtime_priv.h - state shared by the runtime's files (gate.c, init.c,
 * runtime.c, fork.c). Not for other parts of lstack: they use runtime.h.
 */
#ifndef LSTACK_RUNTIME_PRIV_H
#define LSTACK_RUNTIME_PRIV_H

#include <sched.h>
#include <stdbool.h>
#include <stdint.h>

#include "conf/conf_keys.h"
#include "runtime/runtime.h"
#include "runtime/stack_ctx.h"
#include "runtime/stacks.h"

struct rt {
    /* The stacks (runtime/stack_ctx.h): stacks[0..nstacks), one per
     * num_cpus CPU in run-to-wakeup (at most LSTACK_CONF_STACKS_SUPPORTED),
     * one otherwise; each lsock belongs to one (runtime/stacks.c). */
    struct stack_ctx stacks[LSTACK_CONF_STACKS_SUPPORTED];
    struct stack_loop *loops[LSTACK_CONF_STACKS_SUPPORTED]; /* &stacks[i].loop: their group */
    int nstacks;              /* RT_READY: how many are open */
    uint32_t host_addr;       /* network byte order */
    bool child;               /* forked from a process whose stack had started */
};

_Static_assert(LSTACK_CONF_STACKS_SUPPORTED <= STACK_LOOP_MAX, "a loop per stack");

/* Every context's lock, in index order, and back (fork: nobody may be
 * inside a stack while the address space is copied). The one place a
 * thread holds two contexts' locks. */
void rt_lock_all(void);
void rt_unlock_all(void);

/* The hooks registered (rt_hooks_register), for init.c. */
extern const struct rt_hooks *rt_hooks[RT_HOOKS_MAX];
extern int rt_nhooks;

extern struct rt rt;

/* gate.c: true if this process is the one GAZELLE_BIND_PROCNAME names. */
bool rt_gate_bound(void);

/* dpdk_load.c: the DPDK side, loaded from liblstack_dpdk.so on first use so
 * that a process that is not bound never loads DPDK. */
struct nic;
struct nic_params;
struct nic_ltran_params;
struct nic_queues_params;
struct nic_steer;
struct nic_handover_api;
struct dpdk_calls {
    int (*eal_init)(int argc, char **argv, char *added, size_t addedlen, char *err, size_t errlen);
    void (*eal_cleanup)(void);
    void (*eal_exit)(void);  /* at process exit: nic_eal_exit */
    struct nic *(*open)(const struct nic_params *p, char *err, size_t errlen);
    /* use_ltran = 1: EAL as ltran's secondary and its rings (nic.h). */
    struct nic *(*ltran_open)(const struct nic_ltran_params *p, char *added, size_t addedlen, char *err,
                              size_t errlen);
    /* app_bind_numa: a stack CPU's node less app_exclude_cpus (nic_app_cpus). */
    int (*app_cpus)(int stack_cpu, const cpu_set_t *exclude, cpu_set_t *out);
    /* several stacks: the port with a queue pair per stack
     * (nic/nic_queues.h), and the frame handover's calls (nic/handover.h). */
    int (*open_queues)(const struct nic_queues_params *p, struct nic **out, struct nic_steer *steer, char *err,
                       size_t errlen);
    const struct nic_handover_api *handover;
};
int dpdk_load(struct dpdk_calls *d, char *err, size_t errlen);

#endif
