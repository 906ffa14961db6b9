/*
 * fake_lsock.h - stack sockets without a stack, for the event layer's logic
 * tests (fake_lsock.c): an lsock is a readiness word the test sets, and a
 * watcher list head. Each one is mapped to a real kernel TCP socket fd (as
 * in lstack, where a stack socket keeps a kernel socket under its fd).
 */
#ifndef LSTACK_TEST_FAKE_LSOCK_H
#define LSTACK_TEST_FAKE_LSOCK_H

#include <stdbool.h>
#include <stdint.h>

struct lsock;
struct lsock_watcher;

/* A new fake stack socket on a fresh kernel socket fd (returned). With
 * kernel_half the kernel socket listens on 127.0.0.1 (*port, host order)
 * and is the socket's kernel half. Returns the fd or -1. */
int fake_sock_open(struct lsock **out, bool kernel_half, uint16_t *port);

/* Forget it (ev_forget_sock first, like the POSIX layer) and close the fd. */
void fake_sock_close(int fd, struct lsock *s);

/* Set its readiness and tell the event layer (takes the fake lock). */
void fake_lsock_set(struct lsock *s, uint32_t ev);

/* Calls of lsock_events so far (the event layer's readiness checks). */
extern unsigned long fake_lsock_checks;

/* Head of its watcher list. */
struct lsock_watcher *fake_lsock_watchers(struct lsock *s);

#endif
