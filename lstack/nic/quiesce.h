/*
 * quiesce.h - keep a port's bursts (the polling thread) and DPDK's
 * interrupt thread (control work: a PMD's disconnect, lstack's reconnect)
 * out of each other's way. DPDK side, no lwIP type.
 *
 * The polling thread brackets each rx/tx burst with quiesce_enter /
 * quiesce_leave. Another thread that is about to change what a burst
 * reads (unmap a shared region, stop and start the port) calls
 * quiesce_pause, which returns once no burst is running and none can start
 * until quiesce_resume. Cost for the poller: two atomic additions and one
 * load per burst, no syscall. Bursts may overlap (run-to-wakeup: the stack
 * thread's rx beside an application thread's full tx batch): in_burst
 * counts them (it was a flag, which the first burst to end cleared while
 * the other still ran).
 */
#ifndef LSTACK_NIC_QUIESCE_H
#define LSTACK_NIC_QUIESCE_H

#include <stdbool.h>
#include <stddef.h>

struct nic_quiesce {
    unsigned in_burst; /* bursts running now (atomic): run-to-wakeup's stack
                        * thread receives while an application thread may
                        * send a full tx batch, so two can overlap */
    unsigned paused;   /* count of threads holding the port paused (atomic) */
};

/* Poller: start a burst. false: the port is paused, skip the burst (and do
 * not call quiesce_leave). */
static inline bool quiesce_enter(struct nic_quiesce *q)
{
    /* The addition is a full barrier: either the pausing thread sees
     * in_burst, or this thread sees paused (and every store the pausing
     * thread made before pausing, e.g. a PMD's "disconnected" flag). */
    __atomic_add_fetch(&q->in_burst, 1, __ATOMIC_SEQ_CST);
    if (__atomic_load_n(&q->paused, __ATOMIC_SEQ_CST) != 0) {
        __atomic_sub_fetch(&q->in_burst, 1, __ATOMIC_RELEASE);
        return false;
    }
    return true;
}

/* Poller: the burst is over. */
static inline void quiesce_leave(struct nic_quiesce *q)
{
    __atomic_sub_fetch(&q->in_burst, 1, __ATOMIC_RELEASE);
}

/* Any thread but the poller: wait until no burst runs on q, and keep new
 * ones from starting until quiesce_resume(q). Pauses nest. */
void quiesce_pause(struct nic_quiesce *q);
void quiesce_resume(struct nic_quiesce *q);

/* A quiesce for a memif port, guarded against DPDK's memif driver
 * unmapping the regions its bursts read: while any guarded port is inside
 * a burst, the driver's munmap (its disconnect, run on the interrupt thread
 * when the peer goes away) waits for the burst to end. Installs the hook
 * into librte_net_memif's GOT on first use. The quiesce comes from a static
 * table (never freed: the interrupt thread may still read one that a
 * closing port gives back). Returns it, or NULL with err set (the hook
 * could not be installed, or more than QUIESCE_MAX ports).
 * quiesce_unguard gives it back. Both: the port's opening/closing thread. */
#define QUIESCE_MAX 32
struct nic_quiesce *quiesce_guard_memif(char *err, size_t errlen);
void quiesce_unguard(struct nic_quiesce *q);

#endif
