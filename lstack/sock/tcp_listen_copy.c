/*
 * tcp_listen_copy.c - a listener on every stack of the process:
 * the socket the application holds listens on its own stack, and a copy of
 * it on each other stack (same address, port, backlog and options) takes
 * the SYNs that reach that stack's queue. A copy's established connections
 * join the application's socket's accept queue (tcp_sock.c, on_accept), so
 * accept, EPOLLIN and poll on that one socket see every stack's
 * connections; each connection stays on the stack that accepted it (the
 * stack whose queue its frames reach).
 * Design: docs/design.md#a-listener-has-a-copy-on-every-stack
 */
#include <errno.h>

#include "sock/lsock_lwip.h"

/*
 * The copies are invisible to the POSIX layer: they have no fd of their
 * own (stackctl shows them with the listener's fd), no watcher (readiness
 * is the queue's, on the socket the application holds), and go when that
 * socket closes.
 */

int lsock_listen_copy(struct lsock *s, struct stack *st)
{
    if (s->state != LS_LISTEN || s->rep_primary != NULL || st == s->st)
        return -EINVAL;
    for (struct lsock *c = s->rep_next; c != NULL; c = c->rep_next)
        if (c->st == st)
            return lsock_listen(c, s->backlog); /* listen() again: the new backlog */
    struct lsock *c;
    int rc = lsock_new(st, &c);
    if (rc != 0)
        return rc;
    c->o = s->o; /* SO_REUSEADDR for the bind, and what connections inherit */
    c->fd = s->fd;
    rc = lsock_bind(c, s->laddr, s->lport);
    if (rc == 0)
        rc = lsock_listen(c, s->backlog);
    if (rc != 0) {
        lsock_close(c);
        return rc;
    }
    c->rep_primary = s;
    c->rep_next = s->rep_next;
    s->rep_next = c;
    return 0;
}

void lsock_close_copies(struct lsock *s)
{
    struct lsock *c = s->rep_next;
    s->rep_next = NULL;
    while (c != NULL) {
        struct lsock *next = c->rep_next;
        c->rep_primary = NULL;
        c->rep_next = NULL;
        lsock_close(c); /* its accept queue is empty: connections queued on s */
        c = next;
    }
}
