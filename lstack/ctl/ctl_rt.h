/*
 * ctl_rt.h - the control socket of the preload (see ctl.h, ctl_rt.c).
 */
#ifndef LSTACK_CTL_RT_H
#define LSTACK_CTL_RT_H

struct lstack_conf;

/* Note the fds open before the stack starts, so that `stackctl show stats`
 * can tell the stack's fds from the application's (ctl_stack_fds.h). Call just
 * before starting the stack, on the thread that starts it. */
void ctl_rt_census_begin(void);

/* The stack did not start: forget what ctl_rt_census_begin noted. */
void ctl_rt_census_drop(void);

/* Finish the census (the fds opened since ctl_rt_census_begin are the
 * stack's), then serve the control socket for this process; conf is read
 * during the call. A failure is logged as a warning. Call once the stack is
 * up. */
void ctl_rt_start(const struct lstack_conf *conf, const char *conf_path);

/* Stop serving and remove the socket (no-op in a forked child). */
void ctl_rt_stop(void);

#endif
