/*
 * quiesce.c - pausing a port's bursts from another thread, and the guard
 * of DPDK's memif driver's region unmapping (see quiesce.h): the driver
 * unmaps its shared regions on EAL's interrupt thread, with no lock against
 * the thread that polls the queues, so its munmap waits here until no
 * registered port is inside a burst.
 * Design: docs/design.md#bursts-and-a-memif-unmap-are-kept-apart-by-a-quiesce-count
 */
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <sys/mman.h>

#include "nic/got_hook.h"
#include "nic/quiesce.h"

/*
 * The crash this exists for: redis-server under lstack on net_memif died
 * with SIGSEGV inside librte_net_memif's rx burst when its peer exited.
 * DPDK 22.11's memif handles its control socket on EAL's interrupt thread;
 * when the peer closes it (exit, kill -9) that thread runs the driver's
 * disconnect, which clears the "connected" flag and then munmaps the shared
 * regions (rings and packet buffers) and frees their descriptors, with no
 * synchronisation with the thread polling the queues. A burst that passed
 * the flag check just before reads the rings after they are gone.
 *
 * The fix: the driver's munmap goes through quiesce_munmap (its GOT slot,
 * nic/got_hook.c), which waits until no registered port is inside a burst
 * before unmapping. The driver cleared its flag before calling munmap and
 * the poller sets in_burst with a full barrier before the driver's burst
 * reads that flag, so a burst either saw the flag cleared (it touches no
 * region) or is waited for. Bursts started after the wait see the flag.
 */

static void wait_no_burst(struct nic_quiesce *q)
{
    while (__atomic_load_n(&q->in_burst, __ATOMIC_SEQ_CST) != 0)
        sched_yield(); /* a burst lasts microseconds, unless its thread is preempted */
}

void quiesce_pause(struct nic_quiesce *q)
{
    __atomic_add_fetch(&q->paused, 1, __ATOMIC_SEQ_CST);
    wait_no_burst(q);
}

void quiesce_resume(struct nic_quiesce *q)
{
    __atomic_sub_fetch(&q->paused, 1, __ATOMIC_SEQ_CST);
}

/* The quiesces of guarded ports, and which are in use. Process-wide by
 * nature: the hook is one GOT slot of one library. */
static struct nic_quiesce table[QUIESCE_MAX];
static unsigned used[QUIESCE_MAX]; /* atomic: read by quiesce_munmap */
static pthread_mutex_t guard_lock = PTHREAD_MUTEX_INITIALIZER;
static int (*real_munmap)(void *, size_t);

static int quiesce_munmap(void *addr, size_t len)
{
    /* Orders the caller's earlier stores (the driver's flag) before the
     * loads of in_burst below. */
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    for (int i = 0; i < QUIESCE_MAX; i++)
        if (__atomic_load_n(&used[i], __ATOMIC_ACQUIRE))
            wait_no_burst(&table[i]);
    return real_munmap(addr, len);
}

struct nic_quiesce *quiesce_guard_memif(char *err, size_t errlen)
{
    struct nic_quiesce *q = NULL;
    pthread_mutex_lock(&guard_lock);
    if (real_munmap == NULL) {
        void *orig = NULL;
        int rc = got_hook("librte_net_memif.so", "munmap", (void *)quiesce_munmap, &orig, err, errlen);
        if (rc == 0 && orig == NULL)
            snprintf(err, errlen, "librte_net_memif's munmap is hooked already, by someone else");
        else if (rc == 0)
            real_munmap = (int (*)(void *, size_t))orig;
    }
    if (real_munmap != NULL) {
        for (int i = 0; i < QUIESCE_MAX && q == NULL; i++) {
            if (!used[i]) {
                q = &table[i];
                __atomic_store_n(&q->in_burst, 0, __ATOMIC_RELAXED);
                __atomic_store_n(&q->paused, 0, __ATOMIC_RELAXED);
                __atomic_store_n(&used[i], 1, __ATOMIC_RELEASE);
            }
        }
        if (q == NULL)
            snprintf(err, errlen, "more than %d memif ports", QUIESCE_MAX);
    }
    pthread_mutex_unlock(&guard_lock);
    return q;
}

void quiesce_unguard(struct nic_quiesce *q)
{
    pthread_mutex_lock(&guard_lock);
    for (int i = 0; i < QUIESCE_MAX; i++)
        if (&table[i] == q)
            __atomic_store_n(&used[i], 0, __ATOMIC_RELEASE);
    pthread_mutex_unlock(&guard_lock);
}
