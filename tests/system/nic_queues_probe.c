/*
 * nic_queues_probe.c - a port opened with several queues (nic/port.c's
 * nic_dpdk_open_queues), one polling thread per queue, and the handover
 * between them (nic/handover.c), with no stack above: the system test
 * test_nic_queues.sh sends it flows from the kernel in the client
 * namespace and reads what it prints.
 *
 *   nic_queues_probe SECONDS NQUEUES EAL-ARG...
 */
#include <arpa/inet.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "nic/handover.h"
#include "nic/nic.h"
#include "nic/nic_queues.h"
#include "nic/steer.h"

/*
 * Each queue's thread registers with EAL (nic_thread_register), takes rx
 * bursts from its queue and notes, per IPv4 UDP/TCP flow, which queues
 * saw it. Queue 0's thread plays the stack that owns every flow: the other
 * threads hand each frame they receive to its inbox (through their
 * outboxes: nothing dropped, retried before the next burst), and it takes
 * them. At the end it prints "key value" lines: steering, per queue rx and
 * flows, flows seen on more than one queue, frames handed over and taken,
 * and the describe op's per-queue items (stackctl show nic).
 */

#define MAXQ 8
#define FLOWS 4096

struct flow {
    uint32_t src, dst;
    uint16_t sport, dport;
    uint8_t proto, used;
    uint32_t queues; /* bit per queue that received it */
};

static struct flow flows[FLOWS];
static pthread_mutex_t flows_mu = PTHREAD_MUTEX_INITIALIZER;
static struct nic *q[MAXQ];
static struct nic_handover *inbox[1];
static struct nic_handover_out *outbox[MAXQ];
static unsigned nq;
static volatile int stop;
static uint64_t rx[MAXQ], taken, forward_errors, reg_errors;

static void note_flow(const uint8_t *f, uint16_t len, unsigned queue)
{
    if (len < 14 + 20 + 4 || f[12] != 0x08 || f[13] != 0x00 || (f[14] >> 4) != 4)
        return;
    const uint8_t *ip = f + 14;
    size_t ihl = (size_t)(ip[0] & 0x0f) * 4;
    if ((ip[9] != 6 && ip[9] != 17) || len < 14 + ihl + 4)
        return;
    struct flow k = {.proto = ip[9]};
    memcpy(&k.src, ip + 12, 4);
    memcpy(&k.dst, ip + 16, 4);
    memcpy(&k.sport, ip + ihl, 2);
    memcpy(&k.dport, ip + ihl + 2, 2);
    uint32_t h = (k.src ^ k.dst ^ (uint32_t)k.sport << 16 ^ k.dport ^ k.proto) * 2654435761u;
    pthread_mutex_lock(&flows_mu);
    for (unsigned i = 0; i < FLOWS; i++) {
        struct flow *e = &flows[(h + i) % FLOWS];
        if (!e->used) {
            *e = k;
            e->used = 1;
        }
        if (e->src == k.src && e->dst == k.dst && e->sport == k.sport && e->dport == k.dport && e->proto == k.proto) {
            e->queues |= 1u << queue;
            break;
        }
    }
    pthread_mutex_unlock(&flows_mu);
}

static void *poll_queue(void *arg)
{
    unsigned me = (unsigned)(uintptr_t)arg;
    char err[256];
    if (nic_thread_register(err, sizeof(err)) != 0) {
        fprintf(stderr, "queue %u: %s\n", me, err);
        __atomic_add_fetch(&reg_errors, 1, __ATOMIC_RELAXED);
    }
    struct nic_pkt pk[32];
    struct nic_handover_frame hf[32];
    while (!stop) {
        if (me == 0) {
            unsigned k = nic_handover_take(inbox[0], hf, 32);
            for (unsigned i = 0; i < k; i++) {
                note_flow(hf[i].pkt.data, hf[i].pkt.len, 31); /* bit 31: handed to queue 0's owner */
                hf[i].origin->ops->pkt_free(hf[i].origin, hf[i].pkt.handle);
            }
            taken += k;
        } else if (nic_handover_retry(outbox[me]) > 0) {
            continue; /* back-pressure: no new burst while frames wait */
        }
        unsigned got = q[me]->ops->rx_burst(q[me], pk, 32);
        rx[me] += got;
        for (unsigned i = 0; i < got; i++) {
            note_flow(pk[i].data, pk[i].len, me);
            if (me == 0) {
                q[me]->ops->pkt_free(q[me], pk[i].handle);
                continue;
            }
            struct nic_handover_frame f = {.pkt = pk[i], .origin = q[me]};
            if (nic_handover_forward(outbox[me], 0, &f) != 0) {
                forward_errors++;
                q[me]->ops->pkt_free(q[me], pk[i].handle);
            }
        }
        if (got == 0)
            usleep(100);
    }
    while (me != 0 && nic_handover_retry(outbox[me]) > 0)
        usleep(100);
    nic_thread_unregister();
    return NULL;
}

static void print_item(void *ctx, const struct nic_item *it)
{
    (void)ctx;
    if (strcmp(it->group, "queues") != 0)
        return;
    if (it->text != NULL)
        printf("nic.%s %s\n", it->name, it->text);
    else
        printf("nic.%s %llu\n", it->name, (unsigned long long)it->num);
}

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: %s SECONDS NQUEUES EAL-ARG...\n", argv[0]);
        return 2;
    }
    int secs = atoi(argv[1]);
    nq = (unsigned)atoi(argv[2]);
    if (nq < 1 || nq > MAXQ) {
        fprintf(stderr, "NQUEUES: 1..%d\n", MAXQ);
        return 2;
    }
    char err[512], added[256];
    argv[2] = argv[0];
    if (nic_eal_init(argc - 2, argv + 2, added, sizeof(added), err, sizeof(err)) != 0) {
        fprintf(stderr, "%s\n", err);
        return 1;
    }
    struct nic_queues_params p = {
        .port = {.nb_mbufs = 4096, .cache_size = 64, .rx_desc = 512, .tx_desc = 512, .burst = 32},
        .nb_queues = nq,
    };
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    for (unsigned i = 0; i < nq; i++)
        p.cpu[i] = (int)(i % (unsigned)(ncpu > 0 ? ncpu : 1));
    struct nic_steer steer;
    if (nic_dpdk_open_queues(&p, q, &steer, err, sizeof(err)) != 0) {
        fprintf(stderr, "open: %s\n", err);
        nic_eal_cleanup();
        return 1;
    }
    inbox[0] = nic_handover_create(64, nic_cpu_node(p.cpu[0]), err, sizeof(err));
    for (unsigned i = 1; i < nq && inbox[0] != NULL; i++)
        outbox[i] = nic_handover_out_create(inbox, 1, 32, err, sizeof(err));
    if (inbox[0] == NULL || (nq > 1 && outbox[nq - 1] == NULL)) {
        fprintf(stderr, "handover: %s\n", err);
        return 1;
    }
    printf("steering %s\n", steer.kind == NIC_STEER_ONE ? "one-queue" :
                            steer.kind == NIC_STEER_TOEPLITZ ? "rss-toeplitz" : "port-hash");
    printf("ready\n");
    fflush(stdout);
    pthread_t t[MAXQ];
    for (unsigned i = 0; i < nq; i++)
        pthread_create(&t[i], NULL, poll_queue, (void *)(uintptr_t)i);
    /* sleep() ends early on a signal (net_tap's SIGIO): wait by the clock */
    struct timespec now, end;
    clock_gettime(CLOCK_MONOTONIC, &end);
    end.tv_sec += secs;
    do {
        usleep(10000);
        clock_gettime(CLOCK_MONOTONIC, &now);
    } while (now.tv_sec < end.tv_sec || (now.tv_sec == end.tv_sec && now.tv_nsec < end.tv_nsec));
    stop = 1;
    for (unsigned i = 0; i < nq; i++)
        pthread_join(t[i], NULL);
    /* what queue 0's owner has not taken yet */
    struct nic_handover_frame hf[32];
    unsigned k;
    while ((k = nic_handover_take(inbox[0], hf, 32)) > 0) {
        for (unsigned i = 0; i < k; i++)
            hf[i].origin->ops->pkt_free(hf[i].origin, hf[i].pkt.handle);
        taken += k;
    }
    uint64_t handed = 0, waited = 0;
    for (unsigned i = 1; i < nq; i++) {
        struct nic_handover_stats s;
        nic_handover_stats(NULL, outbox[i], &s);
        handed += s.out;
        waited += s.waited;
    }
    unsigned per_q[MAXQ] = {0}, multi = 0, total = 0, handed_flows = 0;
    for (unsigned i = 0; i < FLOWS; i++) {
        if (!flows[i].used)
            continue;
        uint32_t m = flows[i].queues & ~(1u << 31);
        total++;
        if (flows[i].queues & (1u << 31))
            handed_flows++;
        if (__builtin_popcount(m) > 1)
            multi++;
        for (unsigned j = 0; j < nq; j++)
            if (m & (1u << j))
                per_q[j]++;
    }
    for (unsigned i = 0; i < nq; i++)
        printf("queue%u_rx %llu\nqueue%u_flows %u\n", i, (unsigned long long)rx[i], i, per_q[i]);
    printf("flows %u\nflows_on_several_queues %u\n", total, multi);
    printf("handed_over %llu\nhanded_waited %llu\ntaken_by_owner %llu\nhanded_flows_seen_by_owner %u\n",
           (unsigned long long)handed, (unsigned long long)waited, (unsigned long long)taken, handed_flows);
    printf("forward_errors %llu\nregister_errors %llu\n", (unsigned long long)forward_errors,
           (unsigned long long)reg_errors);
    q[0]->ops->describe(q[0], print_item, NULL);
    for (unsigned i = 1; i < nq; i++)
        nic_handover_out_free(outbox[i]);
    nic_handover_free(inbox[0]);
    for (unsigned i = 0; i < nq; i++)
        q[i]->ops->close(q[i]);
    nic_eal_cleanup();
    printf("closed\n");
    return 0;
}
