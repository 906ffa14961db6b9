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

/* The low-power wake-up (rt_can_wake / rt_sleep_begin / rt_sleep_end):
 * fake_wake_fd >= 0 is the fd sleep_begin lends (-1: none); with
 * fake_wake_eagain it answers -EAGAIN (frames wait). sleep_end reads the fd
 * and, when it held a value, records now - fake_wake_written_ms (set by
 * whoever writes it) in fake_wake_lat_ms. */
#define FAKE_WAKE_LAT 64
extern int fake_wake_fd;
extern bool fake_wake_eagain;
extern unsigned long fake_sleeps, fake_sleep_ends;
extern double fake_wake_written_ms;
extern double fake_wake_lat_ms[FAKE_WAKE_LAT];
extern unsigned fake_wake_nlat;

/* sockfd_lsock(fd) returns s (and kernel_half) until unmapped. */
void fake_sock_map(int fd, struct lsock *s, bool kernel_half);
void fake_sock_unmap(int fd);

#endif
