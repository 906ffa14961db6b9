/*
 * futex_lock.h - a mutual-exclusion lock on one int and the futex system
 * call: a stack context's lock (runtime/stack_ctx.h) is taken and released several
 * times per request and once per poll round.
 *
 * Not recursive, no owner: unlocking a lock one does not hold is a bug the
 * lock does not detect. Process-private (FUTEX_*_PRIVATE): a forked child
 * has its own copy. Any thread.
 * Design: docs/design.md#futex_lock-is-a-bare-futex-word
 */
#ifndef LSTACK_FUTEX_LOCK_H
#define LSTACK_FUTEX_LOCK_H

#include <stdbool.h>

/*
 * Uncontended, lock is one compare-and-swap and unlock one exchange; a
 * thread that finds the lock held sleeps in the kernel (FUTEX_WAIT) until
 * the holder's unlock wakes one waiter, like a normal pthread mutex, so a
 * thread blocked in a long call never makes the others spin. States: 0 free,
 * 1 held, 2 held and maybe waited for (the unlock of a 2 makes the wake-up
 * call).
 */

struct futex_lock {
    int state; /* 0 free, 1 held, 2 held with possible waiters */
};

#define FUTEX_LOCK_INIT {0}

/* Take the lock if it is free. Returns true if taken. */
static inline bool futex_trylock(struct futex_lock *l)
{
    int free_ = 0;
    return __atomic_compare_exchange_n(&l->state, &free_, 1, false, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED);
}

/* The contended part of futex_lock (futex_lock.c). */
void futex_lock_wait(struct futex_lock *l);
/* The wake-up part of futex_unlock (futex_lock.c). */
void futex_lock_wake(struct futex_lock *l);

/* Take the lock, sleeping while another thread holds it. */
static inline void futex_lock(struct futex_lock *l)
{
    if (!futex_trylock(l))
        futex_lock_wait(l);
}

/* Release the lock (held by the caller); wakes one waiter if any. */
static inline void futex_unlock(struct futex_lock *l)
{
    if (__atomic_exchange_n(&l->state, 0, __ATOMIC_RELEASE) == 2)
        futex_lock_wake(l);
}

#endif
