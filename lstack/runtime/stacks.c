/*
 * stacks.c - which stack a socket lives on when the process runs several
 * (run-to-wakeup with several num_cpus CPUs, one stack per CPU
 * and port queue): a new socket goes to each stack in turn, and a
 * listener is copied onto every stack (sock/tcp_listen_copy.c) so that a
 * connection is accepted by the stack whose queue its frames reach.
 *
 * An outgoing connection keeps the stack its socket was created on; the
 * port puts its replies on whichever queue it hashes them to, and a reply
 * on another stack's queue is handed over (stack/stack_peers.c).
 * Design: docs/design.md#a-sockets-stack-is-chosen-at-socket
 */
#include "runtime/runtime_priv.h"
#include "sock/lsock.h"

static unsigned next_stack; /* under rt_lock */

struct stack *rt_stack(void)
{
    if (rt.nstacks <= 1)
        return rt.stacks[0].stack;
    unsigned i = next_stack++ % (unsigned)rt.nstacks;
    return rt.stacks[i].stack;
}

int rt_stack_count(void)
{
    return rt.nstacks;
}

struct stack *rt_stack_nth(int i)
{
    return i >= 0 && i < rt.nstacks ? rt.stacks[i].stack : NULL;
}

int rt_listen_everywhere(struct lsock *ls)
{
    for (int i = 0; i < rt.nstacks; i++) {
        struct stack *st = rt.stacks[i].stack;
        if (st == lsock_stack(ls))
            continue;
        int rc = lsock_listen_copy(ls, st);
        if (rc != 0)
            return rc;
    }
    return 0;
}
