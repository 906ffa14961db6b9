/*
 * pair_pump.h - run two stacks wired back to back (pair_open) until a
 * socket shows an event: what the socket-level unit tests share.
 */
#ifndef LSTACK_TEST_PAIR_PUMP_H
#define LSTACK_TEST_PAIR_PUMP_H

#include <stdint.h>

struct stack;
struct lsock;

/* rounds poll rounds of a, then b. */
void pair_pump(struct stack *a, struct stack *b, int rounds);

/* Poll a and b until s shows one of events (at most 2000 rounds). Returns
 * s's events then. */
uint32_t pair_pump_until(struct stack *a, struct stack *b, struct lsock *s, uint32_t events);

/* A listener on b (0.0.0.0:port, host order), a client on a connected to
 * b_addr (network order) and its accepted peer. Returns 0, or -1 with
 * whatever was made left in *l / *c / *s (NULL otherwise). */
int pair_connect(struct stack *a, struct stack *b, uint32_t b_addr, uint16_t port, struct lsock **l,
                 struct lsock **c, struct lsock **s);

#endif
