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

#endif
