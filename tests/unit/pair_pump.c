/*
 * pair_pump.c - see pair_pump.h.
 */
#include "pair_pump.h"

#include <errno.h>
#include <netinet/in.h>
#include <sys/epoll.h>

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

int pair_connect(struct stack *a, struct stack *b, uint32_t b_addr, uint16_t port, struct lsock **l,
                 struct lsock **c, struct lsock **s)
{
    *l = *c = *s = NULL;
    if (lsock_new(b, l) != 0 || lsock_bind(*l, htonl(INADDR_ANY), htons(port)) != 0 || lsock_listen(*l, 8) != 0)
        return -1;
    if (lsock_new(a, c) != 0 || lsock_connect(*c, b_addr, htons(port)) != -EINPROGRESS)
        return -1;
    if (!(pair_pump_until(a, b, *c, EPOLLOUT) & EPOLLOUT) || !(pair_pump_until(a, b, *l, EPOLLIN) & EPOLLIN))
        return -1;
    return lsock_accept(*l, s) == 0 ? 0 : -1;
}
