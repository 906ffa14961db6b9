/*
 * scale.h - the stack-context side of the scaling benchmark (scale.c):
 * what the benchmark asks of the runtime's stack contexts, in one small
 * table of calls, so that the same load runs against the contexts of
 * another build of lstack (an earlier commit) with only this side
 * rewritten for that build's API.
 *
 * scale_ctx.c implements it over runtime/stack_ctx.h: one context per
 * stack, each with the lock the runtime gives it. Every call is made by
 * the stack's own benchmark thread, but for scale_open / scale_close (the
 * main thread, no stack thread running).
 */
#ifndef LSTACK_BENCH_SCALE_H
#define LSTACK_BENCH_SCALE_H

#include <stddef.h>
#include <stdint.h>

struct lstack_conf;
struct nic;
struct stack;
struct lsock;

/* Open n stacks (index i on port q[i], conf c) as the runtime does with
 * several stacks (a group: frames of another stack's connections handed
 * over, ARP shared), each with its context. Returns 0 or -1 (err). */
int scale_open(const struct lstack_conf *c, struct nic **q, int n, char *err, size_t errlen);
void scale_close(void);

struct stack *scale_stack(int i);

/* Stack i's lock, as every call into it takes it; the poll round of its
 * owner; the tx batch sent. */
void scale_lock(int i);
void scale_unlock(int i);
unsigned scale_poll(int i);
void scale_flush(int i);

/* A new socket on stack i (under its lock). 0 or -errno. */
int scale_sock_new(int i, struct lsock **out);

/* What the runtime itself counts of waits for stack i's lock (TSC ticks
 * and how many waits), or 0 / 0 where it counts none. */
void scale_lock_counts(int i, uint64_t *cycles, uint64_t *waits);

#endif
