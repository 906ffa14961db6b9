/*
 * ctl_path.h - where a process's control socket lives, and its name.
 *
 *   <run dir>/<unix_prefix>lstack.<pid>.sock
 *
 * run dir: $LSTACK_RUN_DIR if set and non-empty, else /var/run/lstack.
 * unix_prefix (lstack.conf) separates instances that share a run dir from
 * different PID namespaces (containers); it may hold letters, digits, '.',
 * '_' and '-'. The pid makes every process's name unique on one host, so
 * stackctl can find a process by its PID without asking it.
 *
 * Pure (no I/O): the server (ctl_server.c) and stackctl share these rules.
 * Design: docs/design.md#one-control-socket-path-per-process
 */
#ifndef LSTACK_CTL_PATH_H
#define LSTACK_CTL_PATH_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#define CTL_RUN_DIR_ENV "LSTACK_RUN_DIR"
#define CTL_RUN_DIR_DEFAULT "/var/run/lstack"
#define CTL_SOCK_STEM "lstack."
#define CTL_SOCK_SUFFIX ".sock"
#define CTL_PREFIX_MAX 64

/* $LSTACK_RUN_DIR or the default; never NULL. */
const char *ctl_run_dir(void);

/* True if prefix is a valid unix_prefix ([A-Za-z0-9._-], at most
 * CTL_PREFIX_MAX - 1 bytes; "" is valid). */
bool ctl_prefix_ok(const char *prefix);

/* Write the socket path into out. Returns 0, or -1 if it does not fit in
 * len or in a sockaddr_un (108 bytes), or prefix is invalid. */
int ctl_sock_path(char *out, size_t len, const char *dir, const char *prefix, pid_t pid);

/* If name (a directory entry) is a control socket name, return true and
 * its prefix (into prefix[CTL_PREFIX_MAX]) and pid. */
bool ctl_sock_name_parse(const char *name, char prefix[CTL_PREFIX_MAX], pid_t *pid);

#endif
