/*
 * ctl_priv.h - what the control server's files share: the reply stream and
 * the commands. ctl_server.c owns the thread, the socket and the poll
 * loop; ctl_peer.c one conversation; ctl_cmds.c the commands that read
 * stacks (connections, stats, nic); ctl_info.c those that do not (config,
 * loglevel); ctl_proc_fds.c the process's fd count and limit.
 */
#ifndef LSTACK_CTL_PRIV_H
#define LSTACK_CTL_PRIV_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "ctl/ctl.h"
#include "ctl/ctl_proto.h"

/* A reply being written to a peer. Commands append whole records to buf;
 * the server sends them (never under the lock, never blocking the thread).
 * A reply too long to build at once (a dump of every connection) is built
 * in pieces: the command sets more (and job, job_free); the server calls
 * more(o) again each time buf has been sent, until more is NULL. Each call
 * appends one piece (at most one lock hold). job_free(job), if set, is
 * called when the conversation ends, finished or cut short. */
struct ctl_out {
    struct ctl_buf buf;
    uid_t peer_uid;           /* who asked (SO_PEERCRED) */
    pid_t peer_pid;
    void (*more)(struct ctl_out *o);
    void *job;
    void (*job_free)(void *job);
};

/* Append an error record: the reply ends with it (the command then sets
 * no more). */
void ctl_out_error(struct ctl_out *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* State the commands read. */
struct ctl_server_state {
    const struct ctl_host *host;
    char *conf_text;          /* lstack_conf_format of the config in effect */
    char conf_path[4096];
};

extern struct ctl_server_state ctl_srv;

/* The control server's own long-lived fds (socket, wake pipe: every fd it
 * keeps open between requests, so that fds_stack counts them) into
 * out[0..max); returns how many. Control thread. */
size_t ctl_server_fds(int *out, size_t max);

/* Microseconds on the monotonic clock. */
uint64_t ctl_now_us(void);

/* Each command appends its records and a final "end" (or "error") record
 * to o, or its first piece and sets o->more. req is the parsed request
 * (valid during the call only). */
void ctl_cmd_connections(struct ctl_out *o, const struct ctl_obj *req);
void ctl_cmd_stats(struct ctl_out *o, const struct ctl_obj *req);
void ctl_cmd_nic(struct ctl_out *o, const struct ctl_obj *req);
void ctl_cmd_config(struct ctl_out *o, const struct ctl_obj *req);
void ctl_cmd_loglevel(struct ctl_out *o, const struct ctl_obj *req);

#endif
