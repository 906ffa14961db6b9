/*
 * stacks.h - the process's stack contexts over ports already open: what
 * the runtime's start does once the DPDK side has opened the port's
 * queues (init.c), and what a test or a benchmark does over memory ports
 * to run the same contexts (their locks, their modes, their group)
 * without DPDK. The stacks and their loops are then rt_stack_nth /
 * rt_loop_nth (runtime.h).
 */
#ifndef LSTACK_RUNTIME_STACKS_H
#define LSTACK_RUNTIME_STACKS_H

#include <stddef.h>

struct lstack_conf;

/* rt_stacks_open  n stacks of conf c, stack i on port queue q[i] (owned by
 *                 it from then on), each with its context: its own lock,
 *                 loop i of the group, the mode of c's stack_thread_mode;
 *                 with several, a group (stack_group_join: frames handed
 *                 over through ho, flows spread as steer says, may be
 *                 NULL). Returns 0, or -1 with a reason in err (the queues
 *                 closed).
 * rt_stacks_start  each context's owner starts (run-to-wakeup: its stack
 *                 thread). 0, or -1 (err); those started keep running until
 *                 rt_stacks_stop.
 * rt_stacks_stop   the owners stop (joined).
 * rt_stacks_close  after the stop: the group left, the stacks closed (under
 *                 every lock), none left.
 * The init thread (and the tests and benchmark that run contexts over
 * memory ports). */
struct nic;
struct nic_handover_api;
struct nic_steer;
int rt_stacks_open(const struct lstack_conf *c, struct nic **q, int n, const struct nic_handover_api *ho,
                   const struct nic_steer *steer, char *err, size_t errlen);
int rt_stacks_start(const struct lstack_conf *c, char *err, size_t errlen);
void rt_stacks_stop(void);
void rt_stacks_close(void);

#endif
