/*
 * test_event.h - helpers shared by the event layer's unit tests: TAP
 * checks, a millisecond clock, and what the POSIX wrappers would do around
 * the event layer (close and dup of an fd lstack may own).
 */
#ifndef LSTACK_TEST_EVENT_H
#define LSTACK_TEST_EVENT_H

#include <stdbool.h>
#include <stdint.h>

/* Timing bounds, with room for a loaded 2-core machine (a CI run beside
 * other tests, or under ASan): a wake-up is seen within WAKE_MS of the
 * event (the waits it ends have 1000 ms timeouts, so a missed wake-up
 * still fails), and a timeout ends no more than LATE_MS after it is due
 * (never before). */
#define WAKE_MS 50
#define LATE_MS 50

/* One TAP line; returns cond. */
bool check(bool cond, const char *name);

/* Monotonic ms as a double (sub-ms precision for the diagnostics). */
double now_ms(void);

/* close(fd) / dup(fd) as the wrappers do them (fd ops if owned). */
int fd_close(int fd);
int fd_dup(int fd);

/* Run fn(arg) on a thread after delay_ms. test_since_job waits for it and
 * returns the ms from just before fn ran until the call (the latency of a
 * wait that fn ended, measured from the event, not from the sleep). */
void test_later(int delay_ms, void (*fn)(void *), void *arg);
double test_since_job(void);

/* Print the TAP plan; returns the exit status (0: all passed). */
int test_done(void);

/* Test groups of test_event (fake sockets). */
void test_epoll(void);
void test_poll_select(void);
void test_wake(void);

#endif
