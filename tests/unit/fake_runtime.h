/*
 * fake_runtime.h - the runtime, socket-lookup and libc pieces the event
 * layer calls, faked for its unit tests (fake_runtime.c): a stack lock,
 * rt_poll over the stacks a test registers (plus an optional hook), a table
 * mapping test fds to lsocks, and a libc table of the real glibc calls.
 */
#ifndef LSTACK_TEST_FAKE_RUNTIME_H
#define LSTACK_TEST_FAKE_RUNTIME_H

#include <stdbool.h>

struct lsock;
struct stack;

/* rt_poll polls these (at most 4) in order; NULL/0 for none. */
void fake_rt_stacks(struct stack **stacks, unsigned n);

/* Called inside every rt_poll, under the lock; returns "frames". */
void fake_rt_hook(unsigned (*hook)(void *arg), void *arg);

extern bool fake_low_power; /* rt_low_power() */
extern bool fake_child;     /* rt_is_child() */
extern unsigned long fake_polls; /* rt_poll calls so far */

/* sockfd_lsock(fd) returns s (and kernel_half) until unmapped. */
void fake_sock_map(int fd, struct lsock *s, bool kernel_half);
void fake_sock_unmap(int fd);

#endif
