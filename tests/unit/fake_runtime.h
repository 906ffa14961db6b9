/*
 * fake_runtime.h - the runtime, socket-lookup and libc pieces the event
 * and POSIX layers call, faked for their unit tests (fake_runtime.c): loops
 * (stack contexts, common/stack_loop.h) that all take one lock and whose
 * poll runs a round of every stack a test registers (plus an optional
 * hook), a table mapping test fds to lsocks, and a libc table of the real
 * glibc calls.
 */
#ifndef LSTACK_TEST_FAKE_RUNTIME_H
#define LSTACK_TEST_FAKE_RUNTIME_H

#include <stdbool.h>

struct lsock;
struct stack;
struct stack_loop;

/* Loop i of the fakes (i < 4): fake_lsock's sockets are on loop 0, a
 * registered stack i's sockets on loop i. */
struct stack_loop *fake_loop(unsigned i);

/* The loops' poll polls these (at most 4) in order; NULL/0 for none. A
 * test of real sockets tells stack i's sockets their loop:
 * lsock_stack_open(stacks[i], fake_loop(i)). */
void fake_rt_stacks(struct stack **stacks, unsigned n);

/* Called inside every poll, under the lock; returns "frames". */
void fake_rt_hook(unsigned (*hook)(void *arg), void *arg);

/* The lock every fake loop takes, and one poll of everything (what a
 * loop's poll does), under it. */
void fake_lock(void);
void fake_unlock(void);
unsigned fake_poll(void);

extern bool fake_child;     /* rt_is_child() */
extern unsigned long fake_polls; /* polls so far */

/* low_power_mode on every fake loop. */
void fake_set_low_power(bool on);

/* The low-power wake-up (the loops' wake_begin / wake_end): fd >= 0 is the
 * fd wake_begin lends (-1: none, can_wake false); with fake_wake_eagain it
 * answers -EAGAIN (frames wait). wake_end reads the fd and, when it held a
 * value, records now - fake_wake_written_ms (set by whoever writes it) in
 * fake_wake_lat_ms. */
#define FAKE_WAKE_LAT 64
void fake_set_wake_fd(int fd);
extern int fake_wake_fd;
extern bool fake_wake_eagain;
extern unsigned long fake_sleeps, fake_sleep_ends;
extern double fake_wake_written_ms;
extern double fake_wake_lat_ms[FAKE_WAKE_LAT];
extern unsigned fake_wake_nlat;

/* sockfd_hold(fd) returns s (and kernel_half) until unmapped. */
void fake_sock_map(int fd, struct lsock *s, bool kernel_half);
void fake_sock_unmap(int fd);

#endif
