/*
 * ctl_test_host.h - what the control-server tests (test_ctl_server.c,
 * test_ctl_flood.c) share: a host for ctl_start whose stacks are one real
 * stack reported under 1..N indexes (N big makes a big dump), and the two
 * ways to talk to the server: stackctl's own client code, and raw lines.
 */
#ifndef LSTACK_TEST_CTL_HOST_H
#define LSTACK_TEST_CTL_HOST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "ctl/ctl.h"
#include "stackctl.h"

struct lstack_conf;
struct stack;

/* Stacks A (198.18.0.2) and B (198.18.0.1) back to back on the memory
 * port, both configured with the extra lines; B's config is left in *cb
 * (for ctl_start). Returns 0, or -1 after printing a failed TAP plan. */
int ctl_test_pair(const char *extra, struct lstack_conf *cb, struct stack **a, struct stack **b);

/* The host: its stack(i) is s for i < nstacks, else NULL; lock and unlock
 * take one mutex. */
const struct ctl_host *ctl_test_host(struct stack *s, int nstacks);

/* Change how many stacks the host reports (any thread). */
void ctl_test_host_stacks(int nstacks);

typedef int (*ctl_test_render)(struct sc_src *, bool, FILE *, char *, size_t);

/* stackctl's path to this process: find its socket, connect, send req,
 * render with fn. Returns the rendered text (malloc'ed, may be NULL) and
 * the stackctl exit status in *rc (the reason in err when not SC_OK). */
char *ctl_test_ask(const char *req, ctl_test_render fn, bool json, int *rc, char *err, size_t errlen);

/* A raw conversation on path: send line, shut the sending side, return
 * every byte the server sends until it closes (a static buffer of 8 KiB,
 * "" if the connection failed). */
char *ctl_test_raw(const char *path, const char *line);

/* A client connected to path, nothing sent: its fd, or -1. */
int ctl_test_connect(const char *path);

/* Connect the unix stream socket fd to path (no new fd needed). Returns 0,
 * or -1 (errno set; path too long: errno untouched). */
int ctl_test_connect_fd(int fd, const char *path);

#endif
