/*
 * memif_abandon: a memif port's close that EAL's interrupt thread does not
 * get to within the closing thread's wait (10 s, lstack/nic/memif_port.c)
 * is left queued there, and EAL's cleanup then leaves EAL up rather than
 * close the port beside that thread.
 *
 *   memif_abandon DIR
 *
 * Exit 0 when all hold, 1 with a reason otherwise. A crash or hang is the
 * test script's to report (test_memif_abandon.sh bounds the run).
 * No hugepages (--no-huge). About 15 s.
 */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <rte_alarm.h>

#include "nic/nic.h"
#include "nic/nic_priv.h" /* memif_port_shut_pending */

/*
 * An lstack port (nic_dpdk_open, net_memif role=server, socket
 * DIR/memif.sock; no peer needed) opens; an alarm of this program keeps the
 * interrupt thread busy for BUSY_S seconds (longer than the wait) while the
 * port closes and nic_eal_cleanup runs (what lstack does after a failed
 * start). Checks, in order, each printed:
 *   1. the close returns after the wait, the interrupt thread still busy
 *      and the port's socket still there (the close was not run here);
 *   2. nic_eal_cleanup returns at once (within 2 s), the interrupt thread
 *      still busy, and leaves the socket. DPDK 22.11's rte_eal_cleanup
 *      would not: its device cleanup has the driver close the port on the
 *      calling thread (refused here only because the port is started:
 *      "Cannot close started device"), then its alarm cleanup waits for the
 *      interrupt thread, which runs the queued close while the cleanup goes
 *      on to unmap EAL's memory (seen with the skip taken out: SIGSEGV);
 *   3. once the interrupt thread is free, the queued close runs: within 5 s
 *      the socket goes and nothing is pending any more (the port's queues
 *      and pools freed there: LeakSanitizer, in CI's ASan pass, finds them
 *      otherwise).
 */

#define BUSY_S 14 /* > the close's 10 s wait, leaving 4 s for nic_eal_cleanup */

static unsigned busy_state; /* 0 not started, 1 running, 2 done */

static void busy_alarm(void *arg)
{
    (void)arg;
    __atomic_store_n(&busy_state, 1, __ATOMIC_SEQ_CST);
    sleep(BUSY_S);
    __atomic_store_n(&busy_state, 2, __ATOMIC_SEQ_CST);
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static unsigned busy(void)
{
    return __atomic_load_n(&busy_state, __ATOMIC_SEQ_CST);
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: memif_abandon DIR\n");
        return 2;
    }
    char sock[512], vdev[600], prefix[64], added[128], err[512];
    snprintf(sock, sizeof(sock), "%s/memif.sock", argv[1]);
    snprintf(vdev, sizeof(vdev), "--vdev=net_memif0,role=server,id=0,socket=%s,socket-abstract=no,mac=02:fe:00:00:0b:02",
             sock);
    snprintf(prefix, sizeof(prefix), "--file-prefix=memifab%d", (int)getpid());
    char *eargv[] = {"memif_abandon", "--no-huge", "--no-shconf", prefix, "-m", "256", "--no-pci", "-l", "0",
                     "--log-level", "pmd.net.memif:error", vdev, NULL};
    if (nic_eal_init((int)(sizeof(eargv) / sizeof(eargv[0])) - 1, eargv, added, sizeof(added), err,
                     sizeof(err)) != 0) {
        printf("memif_abandon: FAIL: %s\n", err);
        return 1;
    }
    struct nic_params p = {.nb_mbufs = 4096, .cache_size = 64, .priv_size = 64, .rx_desc = 1024, .tx_desc = 1024,
                           .burst = 32};
    struct nic *n = nic_dpdk_open(&p, err, sizeof(err));
    if (n == NULL) {
        printf("memif_abandon: FAIL: the port does not open: %s\n", err);
        return 1;
    }
    if (access(sock, F_OK) != 0) {
        printf("memif_abandon: FAIL: no socket %s after the open\n", sock);
        return 1;
    }
    if (rte_eal_alarm_set(1, busy_alarm, NULL) != 0) {
        printf("memif_abandon: FAIL: cannot set an alarm\n");
        return 1;
    }
    for (int i = 0; i < 5000 && busy() == 0; i++)
        usleep(1000);
    if (busy() != 1) {
        printf("memif_abandon: FAIL: the alarm did not start on EAL's interrupt thread within 5 s\n");
        return 1;
    }
    double t0 = now_s();
    n->ops->close(n);
    double waited = now_s() - t0;
    bool there = access(sock, F_OK) == 0;
    unsigned b = busy();
    printf("memif_abandon: 1. close returned after %.1f s, interrupt thread %s, socket %s\n", waited,
           b == 1 ? "busy" : "free", there ? "there" : "gone");
    fflush(stdout);
    if (b != 1) {
        printf("memif_abandon: inconclusive: the interrupt thread was free before the close returned "
               "(this thread descheduled for %d s?)\n", BUSY_S);
        return 0;
    }
    if (!there || waited < 9.0) {
        printf("memif_abandon: FAIL: the close must wait (10 s) for the interrupt thread, then leave the port "
               "open\n");
        return 1;
    }
    t0 = now_s();
    nic_eal_cleanup();
    double took = now_s() - t0;
    there = access(sock, F_OK) == 0;
    b = busy();
    printf("memif_abandon: 2. nic_eal_cleanup done after %.1f s, interrupt thread %s, socket %s\n", took,
           b == 1 ? "busy" : "free", there ? "there" : "gone");
    fflush(stdout);
    if (b == 1 && !there) {
        printf("memif_abandon: FAIL: EAL's cleanup closed the port beside the interrupt thread (the close given "
               "up on is still queued there)\n");
        return 1;
    }
    if (b != 1 && took >= 2.0) {
        printf("memif_abandon: FAIL: EAL's cleanup waited for the interrupt thread: it ran rte_eal_cleanup, "
               "which goes on beside the queued close\n");
        return 1;
    }
    if (b != 1) {
        printf("memif_abandon: inconclusive: the interrupt thread was free before the cleanup returned\n");
        return 0;
    }
    while (busy() != 2)
        usleep(10000);
    double t1 = now_s();
    while ((access(sock, F_OK) == 0 || memif_port_shut_pending()) && now_s() - t1 < 5.0)
        usleep(10000);
    there = access(sock, F_OK) == 0;
    bool pending = memif_port_shut_pending();
    printf("memif_abandon: 3. %.2f s after the interrupt thread was free: socket %s, close %s\n", now_s() - t1,
           there ? "there" : "gone", pending ? "still pending" : "done");
    if (there || pending) {
        printf("memif_abandon: FAIL: the queued close did not run once the interrupt thread was free\n");
        return 1;
    }
    printf("memif_abandon: PASS\n");
    return 0;
}
