/*
 * tcp_listen_copy.c - a listener on every stack of the process: the socket
 * the application holds listens on its own stack, and a copy of it on each
 * other stack (same address, port, backlog and options) takes the SYNs
 * that reach that stack's queue; each connection stays on the stack that
 * accepted it (the stack whose queue its frames reach: lsock_loop of the
 * accepted socket says which). Each stack runs under its own lock, so a
 * copy and the listener it copies never touch each other's stack.
 * Design: docs/design.md#a-listener-has-a-copy-on-every-stack
 * Design: docs/design.md#a-listeners-copies-hand-their-connections-over-through-a-lock-free-list
 */
#include <errno.h>
#include <stdlib.h>

#include "sock/lsock_lwip.h"

/*
 *  - a copy's established connection (tcp_sock.c, on_accept, under the
 *    copy's stack's lock) is pushed on the listener's incoming list (a
 *    lock-free list), and the listener is told from afar (lsock_tell_afar:
 *    its own stack's next round tells its watchers, under its lock);
 *    lsock_accept takes the list into the queue, so accept, EPOLLIN and
 *    poll on that one socket see every stack's connections;
 *  - the copies are made in three steps, each under one stack's lock
 *    (runtime/stacks.c rt_listen_everywhere): what a copy takes, read from
 *    the listener (lsock_listen_spec); the copy made on its stack
 *    (lsock_listen_copy); the copy linked into the listener's list
 *    (lsock_listen_copy_attach);
 *  - closing the listener leaves its copies and the connections of other
 *    stacks it still queues to be closed each under its own stack's lock:
 *    lsock_close_next hands them out one at a time.
 *
 * The copies are invisible to the POSIX layer: they have no fd of their
 * own (stackctl shows them with the listener's fd), no watcher (readiness
 * is the listener's), and go when the listener closes.
 */

struct lsock_spec {
    struct lsock *s;           /* the listener, held */
    uint32_t laddr;
    uint16_t lport;
    int backlog;
    int fd;
    struct lsock_opts o;
    struct lsock *copy[8];     /* its copies, held */
    int ncopies;
};

int lsock_listen_spec(struct lsock *s, struct lsock_spec **out)
{
    if (s->state != LS_LISTEN || s->rep_primary != NULL)
        return -EINVAL;
    struct lsock_spec *sp = calloc(1, sizeof(*sp));
    if (sp == NULL)
        return -ENOMEM;
    *sp = (struct lsock_spec){.s = s, .laddr = s->laddr, .lport = s->lport, .backlog = s->backlog, .fd = s->fd, .o = s->o};
    lsock_hold(s);
    for (struct lsock *c = s->rep_next; c != NULL && sp->ncopies < (int)(sizeof(sp->copy) / sizeof(sp->copy[0]));
         c = c->rep_next) {
        lsock_hold(c);
        sp->copy[sp->ncopies++] = c;
    }
    *out = sp;
    return 0;
}

void lsock_spec_free(struct lsock_spec *sp)
{
    if (sp == NULL)
        return;
    for (int i = 0; i < sp->ncopies; i++)
        lsock_release(sp->copy[i]);
    lsock_release(sp->s);
    free(sp);
}

int lsock_listen_copy(const struct lsock_spec *sp, struct stack *st, struct lsock **made)
{
    *made = NULL;
    if (st == sp->s->st)
        return -EINVAL;
    for (int i = 0; i < sp->ncopies; i++) {
        struct lsock *c = sp->copy[i];
        if (c->st == st)
            return c->closed ? 0 : lsock_listen(c, sp->backlog); /* listen() again: the new backlog */
    }
    struct lsock *c;
    int rc = lsock_new(st, &c);
    if (rc != 0)
        return rc;
    c->o = sp->o; /* SO_REUSEADDR for the bind, and what connections inherit */
    c->fd = sp->fd;
    rc = lsock_bind(c, sp->laddr, sp->lport);
    if (rc == 0)
        rc = lsock_listen(c, sp->backlog);
    if (rc != 0) {
        lsock_close(c);
        return rc;
    }
    lsock_hold(sp->s); /* released when the copy closes (tcp_sock.c lsock_free) */
    c->rep_primary = sp->s;
    *made = c;
    return 0;
}

int lsock_listen_copy_attach(struct lsock *s, struct lsock *c)
{
    if (s->state != LS_LISTEN)
        return -EBADF; /* closed meanwhile: the caller closes c */
    c->rep_next = s->rep_next;
    s->rep_next = c;
    return 0;
}

void lsock_listen_copy_hand(struct lsock *s, struct lsock *c)
{
    struct lsock *head = __atomic_load_n(&s->incoming, __ATOMIC_RELAXED);
    do {
        c->acc_next = head;
    } while (!__atomic_compare_exchange_n(&s->incoming, &head, c, true, __ATOMIC_RELEASE, __ATOMIC_RELAXED));
    lsock_tell_afar(s);
}

void lsock_incoming_take(struct lsock *s)
{
    if (__atomic_load_n(&s->incoming, __ATOMIC_RELAXED) == NULL)
        return;
    struct lsock *c = __atomic_exchange_n(&s->incoming, NULL, __ATOMIC_ACQUIRE), *fifo = NULL;
    while (c != NULL) { /* LIFO to FIFO */
        struct lsock *next = c->acc_next;
        c->acc_next = fifo;
        fifo = c;
        c = next;
    }
    while (fifo != NULL) {
        c = fifo;
        fifo = c->acc_next;
        c->acc_next = NULL;
        if (s->acc_tail != NULL)
            s->acc_tail->acc_next = c;
        else
            s->acc_head = c;
        s->acc_tail = c;
    }
}

void lsock_tell_afar(struct lsock *s)
{
    if (__atomic_exchange_n(&s->tell_pend, 1, __ATOMIC_ACQ_REL))
        return; /* told already: its stack's round has not looked yet */
    lsock_hold(s); /* the list's; released once told */
    struct lsocks *ss = s->ss;
    struct lsock *head = __atomic_load_n(&ss->tell, __ATOMIC_RELAXED);
    do {
        s->tell_next = head;
    } while (!__atomic_compare_exchange_n(&ss->tell, &head, s, true, __ATOMIC_RELEASE, __ATOMIC_RELAXED));
}

void lsock_tell_take(struct lsocks *ss)
{
    struct lsock *s = __atomic_exchange_n(&ss->tell, NULL, __ATOMIC_ACQUIRE);
    while (s != NULL) {
        struct lsock *next = s->tell_next;
        __atomic_store_n(&s->tell_pend, 0, __ATOMIC_RELEASE);
        if (!s->closed)
            lsock_notify(s, true);
        lsock_release(s);
        s = next;
    }
}

struct lsock *lsock_close_next(struct lsock *s)
{
    struct lsock *c = s->rep_next; /* the copies first: no connection comes after them */
    if (c != NULL) {
        s->rep_next = c->rep_next;
        c->rep_next = NULL;
        return c;
    }
    if (s->acc_head == NULL)
        lsock_incoming_take(s);
    c = s->acc_head;
    if (c == NULL)
        return NULL;
    s->acc_head = c->acc_next;
    if (s->acc_head == NULL)
        s->acc_tail = NULL;
    c->acc_next = NULL;
    c->o.linger_on = true; /* an unaccepted connection of a closed listener: reset, as on Linux */
    c->o.linger_s = 0;
    return c;
}
