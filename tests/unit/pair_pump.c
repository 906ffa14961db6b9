/*
 * pair_pump.c - see pair_pump.h.
 */
#include "pair_pump.h"

#include "sock/lsock.h"
#include "stack/stack.h"

void pair_pump(struct stack *a, struct stack *b, int rounds)
{
    for (int i = 0; i < rounds; i++) {
        stack_poll(a);
        stack_poll(b);
    }
}

uint32_t pair_pump_until(struct stack *a, struct stack *b, struct lsock *s, uint32_t events)
{
    for (int i = 0; i < 2000; i++) {
        uint32_t ev = lsock_events(s);
        if (ev & events)
            return ev;
        pair_pump(a, b, 1);
    }
    return lsock_events(s);
}
