/*
 * ctl_preload.c - the preload as a control-socket host: stack i and its
 * lock are the runtime's context i (its loop), the counters the context
 * keeps of its stack are added to the stack's own. It registers with the
 * runtime (rt_hooks_register, from a constructor): the census of the fds
 * the start opens just before the stacks start, the control socket once
 * they run, and the socket's stop first thing at exit. A control socket
 * that cannot be created is a warning, never a reason to run without the
 * stack; nor is a census of the stack's fds that cannot be taken (fds_stack
 * then counts only the kinds known by what they are).
 * Design: docs/design.md#parts-that-start-and-stop-with-the-stacks-register-hooks
 */
#include <string.h>

#include "common/log.h"
#include "common/stack_loop.h"
#include "ctl/ctl.h"
#include "ctl/ctl_stack_fds.h"
#include "runtime/runtime.h"

static struct ctl_fd_census rt_census;

static struct stack *rt_stack_at(int index)
{
    return rt_state() == RT_READY ? rt_stack_nth(index) : NULL;
}

static void rt_stack_lock(int index)
{
    loop_lock(rt_loop_nth(index));
}

static void rt_stack_unlock(int index)
{
    loop_unlock(rt_loop_nth(index));
}

static const struct ctl_host rt_host = {
    .stack = rt_stack_at,
    .lock = rt_stack_lock,
    .unlock = rt_stack_unlock,
    .stats = rt_stack_stats,
    .census = &rt_census,
};

static void census_warn(int rc)
{
    if (rc != 0)
        LSTACK_WARN("cannot list this process's fds (%s): stackctl's fds_stack will miss some", strerror(-rc));
}

static void ctl_preload_census_begin(void)
{
    census_warn(ctl_census_begin(&rt_census));
}

static void ctl_preload_census_drop(void)
{
    ctl_census_free(&rt_census);
}

static void ctl_preload_start(const struct lstack_conf *conf, const char *conf_path)
{
    char err[512];
    if (rt_census.before != NULL)
        census_warn(ctl_census_end(&rt_census));
    if (ctl_start(&rt_host, conf, conf_path, err, sizeof(err)) != 0)
        LSTACK_WARN("no control socket, stackctl cannot inspect this process: %s", err);
}

static void ctl_preload_stop(void)
{
    ctl_stop();
}

static const struct rt_hooks ctl_hooks = {
    .starting = ctl_preload_census_begin,
    .start_failed = ctl_preload_census_drop,
    .started = ctl_preload_start,
    .stopping = ctl_preload_stop,
};

__attribute__((constructor)) static void ctl_preload_register(void)
{
    rt_hooks_register(&ctl_hooks);
}
