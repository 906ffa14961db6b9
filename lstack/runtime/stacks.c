/*
 * stacks.c - which stack a socket lives on when the process runs several
 * (issue 12: run-to-wakeup with several num_cpus CPUs, one stack per CPU
 * and port queue): a new socket goes to each stack in turn, and a
 * listener is copied onto every stack (sock/tcp_listen_copy.c) so that a
 * connection is accepted by the stack whose queue its frames reach.
 *
 * An outgoing connection keeps the stack its socket was created on; the
 * port puts its replies on whichever queue it hashes them to, and a reply
 * on another stack's queue is handed over (stack/stack_peers.c).
 * Rejected: the calling thread's CPU as the choice (application threads
 * move between CPUs, and Redis makes its sockets on one thread: every
 * connection would land on one stack); a stack per socket chosen at
 * connect (the lsock, and its options, exist from socket() on).
 */
#include "runtime/runtime_priv.h"
#include "sock/lsock.h"
#include "stack/stack.h"

static unsigned next_stack; /* atomic: the next new socket's stack */

int rt_sock_new(int fd, struct lsock **out)
{
    unsigned i = rt.nstacks <= 1 ? 0 : __atomic_fetch_add(&next_stack, 1, __ATOMIC_RELAXED) % (unsigned)rt.nstacks;
    struct stack_ctx *c = &rt.stacks[i];
    sctx_lock(c);
    int rc = lsock_new(c->stack, out);
    if (rc == 0)
        lsock_set_fd(*out, fd); /* stackctl shows it */
    sctx_unlock(c);
    return rc;
}

int rt_stack_count(void)
{
    return rt.nstacks;
}

struct stack *rt_stack_nth(int i)
{
    return i >= 0 && i < rt.nstacks ? rt.stacks[i].stack : NULL;
}

struct stack_loop *rt_loop_nth(int i)
{
    return i >= 0 && i < rt.nstacks ? &rt.stacks[i].loop : NULL;
}

void rt_stack_stats(int i, struct stack_stats *st)
{
    struct stack_ctx *c = &rt.stacks[i];
    stack_get_stats(c->stack, st);
    st->app_reads = __atomic_load_n(&c->loop.app_reads, __ATOMIC_RELAXED);
    st->app_writes = __atomic_load_n(&c->loop.app_writes, __ATOMIC_RELAXED);
    st->app_epoll_waits = __atomic_load_n(&c->loop.app_epoll_waits, __ATOMIC_RELAXED);
    st->app_wakeups = __atomic_load_n(&c->loop.app_wakeups, __ATOMIC_RELAXED);
    st->lock_waits = __atomic_load_n(&c->lock_waits, __ATOMIC_RELAXED);
    st->lock_wait_cycles = __atomic_load_n(&c->lock_wait_cycles, __ATOMIC_RELAXED);
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
