/*
 * ctl_preload.h - the preload as a control-socket host (ctl.h): the census
 * of the fds the stack opens while it starts, then the control thread for
 * this process. Called by runtime/init.c, on the thread that starts and
 * stops the stack; a failure is a warning, never a reason to run without
 * the stack.
 */
#ifndef LSTACK_CTL_PRELOAD_H
#define LSTACK_CTL_PRELOAD_H

struct lstack_conf;

/* Note the fds open before the stack starts, so that `stackctl show stats`
 * can tell the stack's fds from the application's (ctl_stack_fds.h). Call just
 * before starting the stack, on the thread that starts it. */
void ctl_preload_census_begin(void);

/* The stack did not start: forget what ctl_preload_census_begin noted. */
void ctl_preload_census_drop(void);

/* Finish the census (the fds opened since ctl_preload_census_begin are the
 * stack's), then serve the control socket for this process; conf is read
 * during the call. A failure is logged as a warning. Call once the stack is
 * up. */
void ctl_preload_start(const struct lstack_conf *conf, const char *conf_path);

/* Stop serving and remove the socket (no-op in a forked child). */
void ctl_preload_stop(void);

#endif
