/*
 * ctl.h - the control socket of a process that runs lstack: what stackctl
 * talks to (protocol: ctl_proto.h; socket name: ctl_path.h; user guide:
 * docs/stackctl.md).
 *
 * Two hosts: the preload (ctl_preload.c, whose hooks the runtime calls when
 * the stacks have started and before they stop) and lstackd. Every socket
 * call of the server goes through the libc table (common/libc.h): inside
 * liblstack.so the plain names are lstack's own interposed exports.
 * Design: docs/design.md#the-control-socket-has-a-thread-of-its-own
 */
#ifndef LSTACK_CTL_H
#define LSTACK_CTL_H

#include <stddef.h>

/*
 * One thread ("lstack-ctl") accepts on a unix stream socket (mode 0600,
 * peers checked with SO_PEERCRED: same uid or root) and serves one request
 * per connection, up to CTL_MAX_PEERS connections at once from one poll
 * loop (ctl_server.c), each with its own deadlines (ctl_peer.h): a silent
 * or stalled client holds only its own slot. A client it cannot serve
 * (too many at once, the process out of fds) gets an error record saying
 * why, never silence. It touches a stack only under that stack's lock, and
 * for a bounded piece of work per hold (at most CTL_PAGE connections), so
 * a dump of 20,000 connections never stalls the data path for more than a
 * few milliseconds at a time.
 *
 * fds: the listener, a wake-up pipe, one spare fd kept for answering when
 * the process is out of fds, and one per connection being served.
 *
 * fork: the thread does not exist in a child; a child never removes the
 * parent's socket and closes its copies of the server's fds (pthread_atfork).
 */

struct stack;
struct lstack_conf;
struct ctl_fd_census;

/* Connections read per lock hold. */
#define CTL_PAGE 256

/* Control connections served at once; one more is told "busy". */
#define CTL_MAX_PEERS 32

/* What the server needs from its host. The functions are called from the
 * control thread. */
struct stack_stats;
struct ctl_host {
    struct stack *(*stack)(int index); /* stack index, NULL past the last; any time */
    void (*lock)(int index);     /* serialises every use of stack index: its context's lock */
    void (*unlock)(int index);
    /* Under lock(index): the stack's counters and those the host keeps of
     * it (its context's lock, the application's calls); NULL:
     * stack_get_stats alone. */
    void (*stats)(int index, struct stack_stats *st);
    /* The fds that appeared while the stack started (ctl_stack_fds.h), complete
     * before ctl_start and read-only after; NULL if none was taken. */
    const struct ctl_fd_census *census;
};

/* Create the socket for this process (run dir and conf->unix_prefix, see
 * ctl_path.h) and start the control thread. conf and conf_path are read
 * during the call only (the effective config is kept as text for `show
 * config`). host must stay valid until ctl_stop. Returns 0, or -1 with a
 * reason in err (the process then simply has no control socket). Once per
 * process. */
int ctl_start(const struct ctl_host *host, const struct lstack_conf *conf, const char *conf_path, char *err,
              size_t errlen);

/* Stop the thread (connections being served are closed at once: a
 * client sees its reply cut short), close and remove the socket. Idempotent; a no-op when not started and in a child
 * forked after ctl_start. */
void ctl_stop(void);

/* The socket path while serving, else NULL. */
const char *ctl_socket_path(void);

#endif
