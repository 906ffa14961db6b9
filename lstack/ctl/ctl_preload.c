/*
 * ctl_preload.c - the preload as a control-socket host: the stack lock is
 * rt_lock, the stacks are the runtime's. Called from runtime/init.c (start
 * at the end of a successful rt_ensure, stop first thing in rt_shutdown).
 * A control socket that cannot be created is a warning, never a reason to
 * run without the stack; nor is a census of the stack's fds that cannot be
 * taken (fds_stack then counts only the kinds known by what they are).
 */
#include <string.h>

#include "common/log.h"
#include "ctl/ctl.h"
#include "ctl/ctl_stack_fds.h"
#include "ctl/ctl_preload.h"
#include "runtime/runtime.h"

static struct ctl_fd_census rt_census;

static struct stack *rt_stack_at(int index)
{
    return rt_state() == RT_READY ? rt_stack_nth(index) : NULL;
}

static const struct ctl_host rt_host = {
    .lock = rt_lock,
    .unlock = rt_unlock,
    .stack = rt_stack_at,
    .census = &rt_census,
};

static void census_warn(int rc)
{
    if (rc != 0)
        LSTACK_WARN("cannot list this process's fds (%s): stackctl's fds_stack will miss some", strerror(-rc));
}

void ctl_preload_census_begin(void)
{
    census_warn(ctl_census_begin(&rt_census));
}

void ctl_preload_census_drop(void)
{
    ctl_census_free(&rt_census);
}

void ctl_preload_start(const struct lstack_conf *conf, const char *conf_path)
{
    char err[512];
    if (rt_census.before != NULL)
        census_warn(ctl_census_end(&rt_census));
    if (ctl_start(&rt_host, conf, conf_path, err, sizeof(err)) != 0)
        LSTACK_WARN("no control socket, stackctl cannot inspect this process: %s", err);
}

void ctl_preload_stop(void)
{
    ctl_stop();
}
