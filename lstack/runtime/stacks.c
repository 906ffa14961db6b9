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
#include <stdio.h>

#include "nic/nic.h"
#include "runtime/runtime_priv.h"
#include "sock/lsock.h"
#include "stack/stack.h"

static unsigned next_stack; /* atomic: the next new socket's stack */
/* The stacks as the group of stack_group_join sees them (it keeps the
 * array). */
static struct stack *group[LSTACK_CONF_STACKS_SUPPORTED];

int rt_stacks_open(const struct lstack_conf *c, struct nic **q, int n, const struct nic_handover_api *ho,
                   const struct nic_steer *steer, char *err, size_t errlen)
{
    int i;
    for (i = 0; i < n; i++) {
        struct stack_ctx *sc = &rt.stacks[i];
        *sc = (struct stack_ctx){
            .index = i,
            .cpu = c->num_cpus > i ? c->cpus[i] : -1,
            .queue = (uint16_t)i,
            .nic = q[i],
            .mode = c->stack_thread_mode == LSTACK_MODE_RUN_TO_WAKEUP ? &stack_mode_rtw : &stack_mode_rtc,
        };
        sc->loop = (struct stack_loop){
            .ops = sc->mode->ops,
            .index = (unsigned)i,
            .count = (unsigned)n,
            .all = rt.loops,
            .low_power = c->low_power_mode,
            .can_wake = q[i]->ops->sleep_begin != NULL,
        };
        rt.loops[i] = &sc->loop;
    }
    for (i = 0; i < n; i++) {
        if (stack_open(&rt.stacks[i].stack, c, i, q[i], err, errlen) != 0)
            goto fail;
        group[i] = rt.stacks[i].stack;
        if (lsock_stack_open(group[i], &rt.stacks[i].loop) != 0) {
            snprintf(err, errlen, "out of memory");
            i++;
            goto fail;
        }
    }
    if (n > 1 && stack_group_join(group, (unsigned)n, ho, NULL, steer, err, errlen) != 0)
        goto fail;
    rt.nstacks = n;
    rt.host_addr = c->host_addr;
    return 0;
fail:
    for (int k = 0; k < n; k++) { /* stacks 0..i-1 are open and own their queues */
        if (k < i)
            stack_close(rt.stacks[k].stack);
        else
            q[k]->ops->close(q[k]);
        rt.stacks[k].stack = NULL;
        group[k] = NULL;
    }
    return -1;
}

int rt_stacks_start(const struct lstack_conf *c, char *err, size_t errlen)
{
    for (int i = 0; i < rt.nstacks; i++)
        if (rt.stacks[i].mode->start(&rt.stacks[i], c, err, errlen) != 0)
            return -1;
    return 0;
}

void rt_stacks_stop(void)
{
    for (int i = 0; i < rt.nstacks; i++)
        rt.stacks[i].mode->stop(&rt.stacks[i]);
}

void rt_stacks_close(void)
{
    int n = rt.nstacks;
    rt_lock_all();
    if (n > 1)
        stack_group_leave(group, (unsigned)n);
    for (int i = 0; i < n; i++) {
        stack_close(rt.stacks[i].stack);
        rt.stacks[i].stack = NULL;
        group[i] = NULL;
    }
    rt_unlock_all();
    rt.nstacks = 0;
}

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
    if (rt.nstacks <= 1)
        return 0;
    struct stack_loop *home = lsock_loop(ls);
    struct lsock_spec *sp = NULL;
    loop_lock(home);
    int rc = lsock_listen_spec(ls, &sp);
    loop_unlock(home);
    for (int i = 0; rc == 0 && i < rt.nstacks; i++) {
        struct stack_ctx *c = &rt.stacks[i];
        if (&c->loop == home)
            continue;
        struct lsock *made;
        sctx_lock(c);
        rc = lsock_listen_copy(sp, c->stack, &made);
        sctx_unlock(c);
        if (rc != 0 || made == NULL)
            continue;
        loop_lock(home);
        int at = lsock_listen_copy_attach(ls, made);
        loop_unlock(home);
        if (at != 0) { /* the listener closed meanwhile */
            sctx_lock(c);
            lsock_close(made);
            sctx_unlock(c);
        }
    }
    lsock_spec_free(sp);
    return rc;
}
