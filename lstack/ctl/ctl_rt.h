/*
 * ctl_rt.h - the control socket of the preload (see ctl.h, ctl_rt.c).
 */
#ifndef LSTACK_CTL_RT_H
#define LSTACK_CTL_RT_H

struct lstack_conf;

/* Serve the control socket for this process; conf is read during the call.
 * A failure is logged as a warning. Call once the stack is up. */
void ctl_rt_start(const struct lstack_conf *conf, const char *conf_path);

/* Stop serving and remove the socket (no-op in a forked child). */
void ctl_rt_stop(void);

#endif
