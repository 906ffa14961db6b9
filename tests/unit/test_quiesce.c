/*
 * test_quiesce.c - nic/quiesce.h with overlapping bursts: in
 * run-to-wakeup the stack thread receives without the stack lock while an
 * application thread may send a full tx batch, so two bursts of one port can
 * run at once. quiesce_pause must wait for both (in_burst was a flag: the
 * first burst to end cleared it, and a pause, e.g. memif's unmap, went ahead
 * while the other burst still ran). TAP.
 */
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <unistd.h>

#include "nic/quiesce.h"

static int fails, count;
static struct nic_quiesce q;
static int paused; /* atomic: quiesce_pause returned */

static void check(bool ok, const char *what)
{
    printf("%s %d - %s\n", ok ? "ok" : "not ok", ++count, what);
    fails += !ok;
}

static void *pauser(void *arg)
{
    (void)arg;
    quiesce_pause(&q);
    __atomic_store_n(&paused, 1, __ATOMIC_RELEASE);
    return NULL;
}

int main(void)
{
    check(quiesce_enter(&q), "burst 1 enters");
    check(quiesce_enter(&q), "burst 2 enters while 1 runs");
    quiesce_leave(&q); /* burst 2 ends first */
    pthread_t t;
    pthread_create(&t, NULL, pauser, NULL);
    usleep(100000);
    check(!__atomic_load_n(&paused, __ATOMIC_ACQUIRE), "a pause waits while burst 1 still runs");
    quiesce_leave(&q);
    pthread_join(t, NULL);
    check(__atomic_load_n(&paused, __ATOMIC_ACQUIRE), "the pause returns once burst 1 ends too");
    check(!quiesce_enter(&q), "no burst starts while paused");
    quiesce_resume(&q);
    check(quiesce_enter(&q), "a burst starts after the resume");
    quiesce_leave(&q);
    printf("1..%d\n", count);
    return fails != 0;
}
