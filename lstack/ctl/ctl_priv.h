/*
 * ctl_priv.h - what the control server's files share: the reply stream and
 * the commands. ctl_server.c owns the thread, the socket and the
 * conversation; ctl_cmds.c the commands that read stacks (connections,
 * stats, nic); ctl_info.c those that do not (config, loglevel).
 */
#ifndef LSTACK_CTL_PRIV_H
#define LSTACK_CTL_PRIV_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "ctl/ctl.h"
#include "ctl/ctl_proto.h"

/* A reply being written to the client: records accumulate in buf and
 * leave at ctl_out_flush (after each page, never under the lock). */
struct ctl_out {
    int fd;
    struct ctl_buf buf;
    bool failed;              /* the client went away or stalled: stop working */
};

/* Send what buf holds. Returns 0, or -1 (and failed is set) if the client
 * does not take it within the send timeout. */
int ctl_out_flush(struct ctl_out *o);

/* Append an error record and mark the reply finished with it. */
void ctl_out_error(struct ctl_out *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* State the commands read. */
struct ctl_server_state {
    const struct ctl_host *host;
    char *conf_text;          /* lstack_conf_format of the config in effect */
    char conf_path[4096];
    uid_t peer_uid;           /* of the current request */
    pid_t peer_pid;
};

extern struct ctl_server_state ctl_srv;

/* The control server's own long-lived fds (socket, wake pipe: every fd it
 * keeps open between requests, so that fds_stack counts them) into
 * out[0..max); returns how many. Control thread. */
size_t ctl_server_fds(int *out, size_t max);

/* Microseconds on the monotonic clock. */
uint64_t ctl_now_us(void);

/* Each command appends its records and a final "end" (or "error") record
 * to o; the caller flushes. req is the parsed request. */
void ctl_cmd_connections(struct ctl_out *o, const struct ctl_obj *req);
void ctl_cmd_stats(struct ctl_out *o, const struct ctl_obj *req);
void ctl_cmd_nic(struct ctl_out *o, const struct ctl_obj *req);
void ctl_cmd_config(struct ctl_out *o, const struct ctl_obj *req);
void ctl_cmd_loglevel(struct ctl_out *o, const struct ctl_obj *req);

#endif
