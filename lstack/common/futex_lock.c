/*
 * futex_lock.c - the sleeping halves of futex_lock (see futex_lock.h): the
 * FUTEX_WAIT of a thread that found the lock held and the FUTEX_WAKE of an
 * unlock that saw waiters. The uncontended paths are inline in the header.
 * Any thread; process-private futexes.
 */
#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common/futex_lock.h"

void futex_lock_wait(struct futex_lock *l)
{
    /* Mark the lock as waited for; sleep while it stays held (a state that
     * changed before the wait makes FUTEX_WAIT return at once). Whoever
     * takes it from here leaves it at 2: the next unlock wakes the others. */
    int c = __atomic_exchange_n(&l->state, 2, __ATOMIC_ACQUIRE);
    while (c != 0) {
        syscall(SYS_futex, &l->state, FUTEX_WAIT_PRIVATE, 2, NULL, NULL, 0);
        c = __atomic_exchange_n(&l->state, 2, __ATOMIC_ACQUIRE);
    }
}

void futex_lock_wake(struct futex_lock *l)
{
    syscall(SYS_futex, &l->state, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}
