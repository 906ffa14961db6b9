/*
 * memif_race: a net_memif peer that comes and goes while lstack's port
 * polls, as fast as it can, to catch the driver unmapping its rings under
 * a burst (redis-server under lstack on net_memif would die with SIGSEGV
 * in librte_net_memif's rx burst when its peer exited).
 *
 *   memif_race DIR CYCLES
 */
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <rte_alarm.h>
#include <rte_eal.h>
#include <rte_ethdev.h>
#include <rte_mbuf.h>

#include "nic/nic.h"

/*
 * Forks before any DPDK call. The child is the peer, a plain DPDK program
 * (role=client): CYCLES times it starts its port (connects), sends frames
 * for a few milliseconds, then stops the port (a clean disconnect), eight
 * times per process; or, every fourth cycle, forks a grandchild that
 * connects and is killed with SIGKILL mid-stream (the peer crashes). The parent is the survivor:
 * an lstack port (nic_dpdk_open, role=server, what redis-server under the
 * preload uses) polled in a tight loop (rx burst, free, tx flush of a few
 * frames) until the child is done.
 * Then the parent closes its port while an alarm of its own keeps EAL's
 * interrupt thread busy for 300 ms: the close must wait for that thread
 * (the driver's disconnect runs there; see lstack/nic/memif_port.c).
 * Socket: DIR/memif.sock. Exit 0 when the parent is alive at the end and
 * received frames, at least half of the peer's clean connections came
 * up, and the close waited; 1 with a reason otherwise; a crash of the
 * parent is a crash of this program. The end phase prints each step
 * ("memif_race: survivor: ..."), flushed, for the script's bound on it.
 * No hugepages (--no-huge). Run by test_memif_race.sh.
 */

static const uint8_t mac_srv[6] = {0x02, 0xfe, 0, 0, 0x0a, 0x02};

/* EAL file prefixes of this run: "$MEMIF_RACE_PREFIX" (the test script's,
 * so it can remove EAL's run-time directories a SIGKILLed peer leaves) or
 * "memifrace", then the pid. */
static const char *race_prefix = "memifrace";

static void eal_args(char *buf, size_t len, const char *dir, const char *role, const char *mac)
{
    snprintf(buf, len, "--vdev=net_memif0,role=%s,id=0,socket=%s/memif.sock,socket-abstract=no,mac=%s", role,
             dir, mac);
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Send frames to the server for ms milliseconds once the link is up (2 s
 * at most for it to come up). Returns whether it came up. */
static bool stream(uint16_t port, struct rte_mempool *mp, int ms)
{
    double end = now_s() + 2.0, up_end = 0;
    while (now_s() < end) {
        struct rte_eth_link link;
        if (rte_eth_link_get_nowait(port, &link) == 0 && link.link_status == RTE_ETH_LINK_UP && up_end == 0) {
            up_end = now_s() + ms / 1000.0;
            end = up_end;
        }
        if (up_end == 0)
            continue;
        struct rte_mbuf *m[32];
        unsigned k = 0;
        for (; k < 32; k++) {
            m[k] = rte_pktmbuf_alloc(mp);
            if (m[k] == NULL)
                break;
            uint8_t *d = (uint8_t *)rte_pktmbuf_append(m[k], 1500);
            memset(d, 0, 1500);
            memcpy(d, mac_srv, 6); /* to the server's MAC; ethertype 0: the stack never sees it */
        }
        uint16_t sent = rte_eth_tx_burst(port, 0, m, (uint16_t)k);
        for (unsigned i = sent; i < k; i++)
            rte_pktmbuf_free(m[i]);
    }
    return up_end != 0;
}

static int peer_setup(const char *dir, struct rte_mempool **mp)
{
    char vdev[512];
    eal_args(vdev, sizeof(vdev), dir, "client", "02:fe:00:00:0a:01");
    char prefix[64];
    snprintf(prefix, sizeof(prefix), "--file-prefix=%s%d", race_prefix, (int)getpid());
    char *argv[] = {"memif_race-peer", "--no-huge", "--no-shconf", prefix, "-m", "128", "--no-pci", "-l", "0",
                    "--log-level", "pmd.net.memif:error", vdev, NULL};
    if (rte_eal_init((int)(sizeof(argv) / sizeof(argv[0])) - 1, argv) < 0)
        return -1;
    *mp = rte_pktmbuf_pool_create("peer", 4096, 64, 0, RTE_MBUF_DEFAULT_BUF_SIZE, (int)rte_socket_id());
    if (*mp == NULL)
        return -1;
    struct rte_eth_conf conf;
    memset(&conf, 0, sizeof(conf));
    if (rte_eth_dev_configure(0, 1, 1, &conf) != 0 || rte_eth_rx_queue_setup(0, 0, 1024, 0, NULL, *mp) != 0 ||
        rte_eth_tx_queue_setup(0, 0, 1024, 0, NULL) != 0)
        return -1;
    return 0;
}

/* The peer: CYCLES connect / stream / disconnect, every fourth a crash.
 * Fails when fewer than half of the clean cycles' connections came up. */
static int peer(const char *dir, int cycles)
{
    int clean = 0, up = 0;
    for (int c = 0; c < cycles; c++) {
        if (c % 4 == 3) {
            /* A crashing peer: its own process, SIGKILLed mid-stream. */
            pid_t g = fork();
            if (g == 0) {
                struct rte_mempool *mp;
                if (peer_setup(dir, &mp) != 0)
                    _exit(3);
                for (int t = 0; t < 100 && rte_eth_dev_start(0) != 0; t++)
                    usleep(10000);
                stream(0, mp, 1000000); /* until killed */
                _exit(0);
            }
            usleep(400000 + (unsigned)(rand() % 200000)); /* EAL init, connect, then some streaming */
            kill(g, SIGKILL);
            waitpid(g, NULL, 0);
            continue;
        }
        pid_t g = fork();
        if (g == 0) {
            struct rte_mempool *mp;
            if (peer_setup(dir, &mp) != 0)
                _exit(3);
            int ups = 0;
            for (int r = 0; r < 8; r++) { /* eight connects per process: stop and start */
                int t = 0;
                while (rte_eth_dev_start(0) != 0 && t++ < 100)
                    usleep(10000);
                ups += stream(0, mp, 5 + rand() % 20);
                rte_eth_dev_stop(0);
            }
            rte_eth_dev_close(0);
            rte_eal_cleanup();
            _exit(10 + ups);
        }
        int st = 0;
        waitpid(g, &st, 0);
        if (!WIFEXITED(st) || WEXITSTATUS(st) < 10) {
            fprintf(stderr, "memif_race: peer cycle %d failed (status %d)\n", c, st);
            return 1;
        }
        clean += 8;
        up += WEXITSTATUS(st) - 10;
    }
    printf("memif_race: peer: %d of %d clean connections came up\n", up, clean);
    fflush(stdout);
    return up * 2 >= clean ? 0 : 1;
}

/* The close check: an alarm keeps EAL's interrupt thread busy (as the
 * driver's disconnect of a peer that just went away does) while the port
 * closes. state: 0 not started, 1 running, 2 done with the port's socket
 * file still there (the close waited), 3 done with it gone (the close ran
 * beside the interrupt thread's work). */
static unsigned busy_state;
static char busy_sock[512];

static void busy_alarm(void *arg)
{
    (void)arg;
    __atomic_store_n(&busy_state, 1, __ATOMIC_SEQ_CST);
    usleep(300000);
    bool there = access(busy_sock, F_OK) == 0; /* the driver's close removes it */
    __atomic_store_n(&busy_state, there ? 2 : 3, __ATOMIC_SEQ_CST);
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: memif_race DIR CYCLES\n");
        return 2;
    }
    const char *dir = argv[1];
    if (getenv("MEMIF_RACE_PREFIX") != NULL)
        race_prefix = getenv("MEMIF_RACE_PREFIX");
    int cycles = atoi(argv[2]);
    pid_t child = fork();
    if (child < 0)
        return 1;
    if (child == 0) {
        usleep(300000); /* let the server listen first */
        _exit(peer(dir, cycles));
    }

    char vdev[512], added[128], err[512];
    eal_args(vdev, sizeof(vdev), dir, "server", "02:fe:00:00:0a:02");
    char prefix[64];
    snprintf(prefix, sizeof(prefix), "--file-prefix=%s%d", race_prefix, (int)getpid());
    char *eargv[] = {"memif_race", "--no-huge", "--no-shconf", prefix, "-m", "256", "--no-pci", "-l", "1",
                     "--log-level", "pmd.net.memif:error", vdev, NULL};
    if (nic_eal_init((int)(sizeof(eargv) / sizeof(eargv[0])) - 1, eargv, added, sizeof(added), err,
                     sizeof(err)) != 0) {
        fprintf(stderr, "memif_race: %s\n", err);
        kill(child, SIGKILL);
        return 1;
    }
    struct nic_params p = {.has_mac = true, .nb_mbufs = 8192, .cache_size = 64, .priv_size = 64,
                           .rx_desc = 1024, .tx_desc = 1024, .burst = 32};
    memcpy(p.mac, mac_srv, 6);
    struct nic *n = nic_dpdk_open(&p, err, sizeof(err));
    if (n == NULL) {
        fprintf(stderr, "memif_race: %s\n", err);
        kill(child, SIGKILL);
        return 1;
    }
    uint64_t rx = 0, loops = 0;
    int st = 0;
    for (;;) {
        struct nic_pkt pkts[32];
        unsigned got = n->ops->rx_burst(n, pkts, 32);
        rx += got;
        for (unsigned i = 0; i < got; i++)
            n->ops->pkt_free(n, pkts[i].handle);
        if ((loops & 7) == 0) { /* and some tx, so that the tx burst races too */
            uint8_t *f = n->ops->tx_frame(n, 64);
            if (f != NULL)
                memset(f, 0xff, 64);
            n->ops->tx_flush(n);
        }
        if ((++loops & 0xfff) == 0 && waitpid(child, &st, WNOHANG) == child)
            break;
    }
    /* The end phase, phase by phase: the test script bounds it and, when
     * it overstays, names the last phase printed here. */
    printf("memif_race: survivor: closing the port (the peer ended, status %d)\n", st);
    fflush(stdout);
    /* The close must never run beside the interrupt thread's work on the
     * port: the driver's disconnect of the peer's last, SIGKILLed,
     * connection may still be running there, and the two unmapped the same
     * region twice (the second munmap took whatever had been mapped there
     * since, here LeakSanitizer's tracer stack: a hang at exit
     * under ASan). Keep that thread busy for 300 ms and close meanwhile. */
    snprintf(busy_sock, sizeof(busy_sock), "%s/memif.sock", dir);
    bool busy_ok = rte_eal_alarm_set(1, busy_alarm, NULL) == 0;
    for (int i = 0; busy_ok && i < 5000 && __atomic_load_n(&busy_state, __ATOMIC_SEQ_CST) == 0; i++)
        usleep(1000);
    unsigned busy_before = __atomic_load_n(&busy_state, __ATOMIC_SEQ_CST);
    n->ops->close(n);
    unsigned busy_after = __atomic_load_n(&busy_state, __ATOMIC_SEQ_CST);
    printf("memif_race: survivor: port closed\n");
    fflush(stdout);
    nic_eal_exit(); /* what lstack does at exit */
    printf("memif_race: %d peer cycles, %llu frames received, %llu poll loops\n", cycles, (unsigned long long)rx,
           (unsigned long long)loops);
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
        printf("memif_race: FAIL: the peer failed (status %d)\n", st);
        return 1;
    }
    if (rx == 0) {
        printf("memif_race: FAIL: no frame received\n");
        return 1;
    }
    if (!busy_ok || busy_before == 0) {
        printf("memif_race: FAIL: the close check's alarm did not start on EAL's interrupt thread within 5 s\n");
        return 1;
    }
    if (busy_before != 1) { /* this thread was descheduled for the alarm's whole 300 ms */
        printf("memif_race: close check inconclusive: the alarm had ended before the close began\n");
        return 0;
    }
    if (busy_after != 2) {
        printf("memif_race: FAIL: the port was closed while EAL's interrupt thread was busy (%s): its close "
               "must run there, after the driver's own control work\n",
               busy_after == 1 ? "the close returned before that thread's work ended"
                               : "the driver had removed the port's socket before that thread's work ended");
        return 1;
    }
    return 0;
}
