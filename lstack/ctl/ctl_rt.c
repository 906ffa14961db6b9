/*
 * ctl_rt.c - the preload as a control-socket host: the stack lock is
 * rt_lock, the stacks are the runtime's. Called from runtime/init.c (start
 * at the end of a successful rt_ensure, stop first thing in rt_shutdown).
 * A control socket that cannot be created is a warning, never a reason to
 * run without the stack.
 */
#include "common/log.h"
#include "ctl/ctl.h"
#include "ctl/ctl_rt.h"
#include "runtime/runtime.h"

static struct stack *rt_stack_at(int index)
{
    return index == 0 && rt_state() == RT_READY ? rt_stack() : NULL;
}

static const struct ctl_host rt_host = {
    .lock = rt_lock,
    .unlock = rt_unlock,
    .stack = rt_stack_at,
};

void ctl_rt_start(const struct lstack_conf *conf, const char *conf_path)
{
    char err[512];
    if (ctl_start(&rt_host, conf, conf_path, err, sizeof(err)) != 0)
        LSTACK_WARN("no control socket, stackctl cannot inspect this process: %s", err);
}

void ctl_rt_stop(void)
{
    ctl_stop();
}
