/*
 * ltran.h - the ltran daemon's context, shared by its files:
 *   ltran_main.c  start-up, the loop, shut-down
 *   ltran_eal.c   EAL as a primary that allows secondaries; its files removed at exit
 *   ltran_ctl.c   the unix socket: registration, listeners, stats, clients going away
 *   ltran_fwd.c   one forwarding round: port -> dispatch -> client rings, rings -> port
 *   ltran_wake.c  low_power_mode: the wake zone, waking sleeping clients, ltran's idle sleep
 *   ltran_doorbell.c  low_power_mode: a frame on the port's kernel interface wakes ltran
 *   dispatch.c    the dispatch table (pure)
 *   ltran_conf.c  ltran.conf (pure)
 * One thread does everything (the loop); no locks.
 */
#ifndef LTRAN_H
#define LTRAN_H

#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>

#include "common/idle_gap.h"
#include "common/ltran_proto.h"
#include "dispatch.h"
#include "ltran_conf.h"

struct rte_ring;
struct rte_mempool;
struct nic;

#define LTRAN_MAX_PEERS 64
#define LTRAN_BURST 32
#define LTRAN_PRIV_SIZE 128 /* mbuf private bytes: at least an lstack client's rx pbuf */

struct ltran_client {
    bool used;
    int peer;                  /* index in peers[] of its socket */
    uint32_t ip;               /* network order */
    int32_t pid;
    char name[LTRAN_NAME_MAX];
    struct rte_ring *rx, *tx;
    uint32_t tag;              /* mbuf hash.usr of the buffers it holds (never 0) */
    uint64_t rx_frames, tx_frames, drop_rx_full;
    int wake_fd;               /* its eventfd (low power wake-up), -1: none */
    uint64_t wakeups;
};

struct ltran_peer {
    int fd;                    /* -1: free */
    int client;                /* -1: not registered (yet, or stackctl) */
};

struct ltran {
    struct ltran_conf conf;
    struct ldisp disp;
    struct nic *nic;           /* the port (lstack's DPDK port code) */
    uint16_t port;
    struct rte_mempool *pool;
    uint8_t mac[6];
    uint16_t mtu, data_room;
    int listen_fd;
    struct ltran_peer peers[LTRAN_MAX_PEERS];
    struct ltran_client cl[LTRAN_MAX_CLIENTS];
    uint32_t gen[LTRAN_MAX_CLIENTS];  /* registrations per slot: tags differ */
    struct ltran_stats st;
    uint64_t ctl_cycles, next_ctl; /* control socket checked every ctl_cycles */
    struct ltran_wake_zone *zone;  /* ltran_wake.c */
    uint64_t busy_at, idle_cycles, sleep_ns;
    struct idle_gap gap;           /* low power: recent gaps between frames, in cycles */
    uint64_t spin_max_cycles;      /* the longest idle window (common/idle_gap.h) */
    uint64_t reply_until, reply_cycles; /* low power: stay awake for a woken client's answer */
    int wake_fd;                   /* eventfd clients write to wake ltran (given at REGISTER) */
    int doorbell;                  /* ltran_doorbell.c socket, -1: none */
    volatile sig_atomic_t *stop;
};

/* ltran_eal.c */
int ltran_eal_init(const struct ltran_conf *c, char *err, size_t errlen);
/* rte_eal_cleanup, then remove the run directory and the hugepage files of
 * file_prefix (secondaries still running keep their mappings). */
void ltran_eal_cleanup(const char *file_prefix);

/* ltran_ctl.c */
int ltran_ctl_open(struct ltran *l, char *err, size_t errlen);
/* Accept, serve requests, notice closed peers (one poll(), no wait). */
void ltran_ctl_poll(struct ltran *l);
/* Fill pf[0..max) with the control socket's fds (the listener, then each
 * peer), POLLIN; returns how many. For a sleep that a request should end
 * (ltran_wake.c); the loop's thread only. */
int ltran_ctl_pollfds(const struct ltran *l, struct pollfd *pf, int max);
/* At exit: close every socket (clients see ltran go) and the listener;
 * rings and registrations are left as they are (clients may still use them). */
void ltran_ctl_close(struct ltran *l);

/* ltran_wake.c */
#define LTRAN_WAKE_ZONE "ltran_wake"
int ltran_wake_init(struct ltran *l, char *err, size_t errlen);
/* After frames went on the rx rings of the clients in mask: write the
 * eventfd of each that sleeps. */
void ltran_wake_clients(struct ltran *l, uint32_t mask);
/* After a round that moved `moved` frames, at TSC now: in low_power_mode,
 * sleep if idle long enough (a client's tx ends the sleep). */
void ltran_idle(struct ltran *l, unsigned moved, uint64_t now);

/* ltran_doorbell.c: a packet socket on interface if_index that becomes
 * readable, once armed, when a frame comes; returns it, or -errno (if_index
 * 0: -ENODEV). Disarm also empties it. */
int ltran_doorbell_open(unsigned if_index);
int ltran_doorbell_arm(int fd);
void ltran_doorbell_disarm(int fd);

/* ltran_fwd.c: one round; returns frames moved. */
unsigned ltran_fwd_round(struct ltran *l);
/* Free a client's rings and what they hold. */
void ltran_client_free_rings(struct ltran_client *c);
/* Free every mbuf of the pool still tagged as held by client c (gone).
 * Returns how many. */
unsigned ltran_client_reclaim_mbufs(struct ltran *l, const struct ltran_client *c);

#endif
