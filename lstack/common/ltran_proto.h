/*
 * ltran_proto.h - the messages of ltran's unix socket (SOCK_SEQPACKET: one
 * message per packet), spoken by lstack processes (lstack/nic/ltran_nic.c),
 * by stackctl (tools/stackctl_ltran.c) and by ltran (ltran/ltran_ctl.c).
 *
 * Every message starts with struct ltran_hdr: a magic, a version and a
 * type; a peer that sees another version gets a reply with status
 * -EPROTONOSUPPORT carrying ltran's version, and is closed. Fields are fixed
 * size, host byte order (both ends are on the same host) except addresses
 * and ports, which are in network order as on the wire.
 * Design: docs/design.md#ltrans-messages-are-versioned-binary-frames
 */
#ifndef LSTACK_LTRAN_PROTO_H
#define LSTACK_LTRAN_PROTO_H

#include <stdint.h>

/*
 * Sequence of an lstack process: HELLO (ltran says its DPDK file prefix and
 * port, the client then starts EAL as a secondary process), REGISTER (its
 * address; ltran creates its rx and tx rings), then LISTEN for each
 * listener. The socket stays open for the process's lifetime: ltran sees the
 * process end when it closes (exit or kill -9), the process sees ltran end
 * the same way.
 *
 * Low power (docs/ltran.md#low-power): REGISTER may carry an eventfd
 * (SCM_RIGHTS; flags LTRAN_REG_WAKE_FD). A client about to sleep sets its
 * word in the wake zone (a memzone of ltran, struct ltran_wake_zone) and
 * polls the eventfd with its kernel fds; ltran, after it put frames on that
 * client's rx ring, sees the word and writes the eventfd (one syscall per
 * wake-up, none while the client polls). REGISTER's reply carries ltran's
 * own eventfd (SCM_RIGHTS): ltran sets its word of the zone and polls it
 * when it sleeps; a client that put frames on its tx ring while the word is
 * set writes it. Both sides: store the word, full fence, look at the ring
 * (the sleeper) / put on the ring, full fence, load the word (the waker):
 * no lost wake-up.
 */

#define LTRAN_MAGIC 0x4c54524eu /* "LTRN" */
#define LTRAN_VERSION 2 /* 2: the wake-up zone, REGISTER may carry an eventfd */
#define LTRAN_NAME_MAX 32
#define LTRAN_MAX_CLIENTS 32
#define LTRAN_LISTEN_SHOWN 16 /* listeners per client in a STATS reply */
#define LTRAN_HIST_BUCKETS 32

enum ltran_msg_type {
    LTRAN_HELLO = 1,     /* client -> ltran: no body; reply: ltran_hello_reply */
    LTRAN_REGISTER = 2,  /* ltran_register; reply: ltran_register_reply */
    LTRAN_LISTEN = 3,    /* ltran_listen; reply: no body, status 0 or -EADDRINUSE/-ENOSPC */
    LTRAN_STATS = 4,     /* no body; reply: ltran_stats + nclients x ltran_client_info */
};

struct ltran_hdr {
    uint32_t magic;
    uint16_t version;
    uint16_t type;
    int32_t status;      /* replies: 0 or -errno */
    uint32_t len;        /* body bytes after this header */
};

struct ltran_hello_reply {
    char file_prefix[LTRAN_NAME_MAX]; /* DPDK --file-prefix of ltran */
    char pool[LTRAN_NAME_MAX];        /* mbuf pool to allocate tx frames from */
    uint8_t mac[6];                   /* the port's MAC: every client's */
    uint16_t mtu;
    uint16_t data_room;               /* bytes one mbuf carries */
    uint16_t pool_ops_index;          /* the pool's mempool ops, as ltran numbers them ... */
    char pool_ops[LTRAN_NAME_MAX];    /* ... and their name: a client must number them alike */
};

#define LTRAN_REG_WAKE_FD 1u         /* an eventfd rides along (SCM_RIGHTS): wake me with it */

struct ltran_register {
    uint32_t ip;                      /* network order */
    int32_t pid;
    char name[LTRAN_NAME_MAX];        /* program name, for stackctl */
    uint32_t flags;                   /* LTRAN_REG_* */
    uint32_t pad;
};

struct ltran_register_reply {
    uint32_t id;                      /* client slot */
    uint32_t tag;                     /* the client writes it in mbuf hash.usr of every buffer it
                                         holds (allocated, or received) and 0 before it frees one:
                                         ltran frees what a client gone still held */
    char rx_ring[LTRAN_NAME_MAX];     /* ltran -> client */
    char tx_ring[LTRAN_NAME_MAX];     /* client -> ltran */
    char wake_zone[LTRAN_NAME_MAX];   /* memzone holding struct ltran_wake_zone */
    uint32_t wake;                    /* 1: ltran took the eventfd and will use it, and ltran's
                                         own eventfd rides along (SCM_RIGHTS) */
    uint32_t pad;
};

/* The wake-up words, in ltran's memory (one cache line each). A word is 1
 * while its owner sleeps or is about to; whoever wakes it sets it to 0. */
struct ltran_wake_word {
    uint32_t sleeping;
    uint8_t pad[60];
};
struct ltran_wake_zone {
    struct ltran_wake_word client[LTRAN_MAX_CLIENTS]; /* by client id: poll()s its eventfd */
    struct ltran_wake_word ltran;                     /* ltran: polls its eventfd */
};

struct ltran_listen {
    uint32_t ip;                      /* network order; must be the registered one */
    uint16_t port;                    /* network order */
    uint8_t on;                       /* 1 claim, 0 release */
    uint8_t pad;
};

struct ltran_stats {
    uint64_t rx_frames;               /* taken from the port */
    uint64_t tx_frames;               /* sent on the port */
    uint64_t fwd_frames;              /* frames forwarded (both directions) */
    uint64_t busy_cycles;             /* TSC cycles of rounds that moved a frame */
    uint64_t io_cycles;               /* of those, inside the port's rx/tx burst (the PMD; af_packet's
                                         tx is a send() that runs the peer's kernel stack) */
    uint64_t wake_cycles;             /* of those, in the eventfd writes that wake sleeping clients */
    uint64_t tsc_hz;
    /* Frames by the cycles per frame ltran spent on its own (busy minus the
     * port's bursts) in their round: own_hist[i] counts frames of rounds with
     * [2^i, 2^(i+1)) cycles per frame (busy minus io and wake). A median robust to the rounds a loaded
     * machine preempts (they inflate busy_cycles / fwd_frames). */
    uint64_t own_hist[LTRAN_HIST_BUCKETS];
    uint64_t drop_unclaimed;          /* frames no client claims */
    uint64_t rst_sent;                /* of those, SYNs answered with a RST */
    uint64_t arp_answered;            /* ARP requests for a client address answered */
    uint64_t drop_tx_full;            /* port tx queue full */
    uint64_t drop_other;              /* not IPv4/ARP, malformed, multi-segment */
    uint64_t conns;                   /* 4-tuples in the dispatch table */
    uint64_t wakeups_sent;            /* eventfd writes to sleeping clients */
    uint64_t sleeps;                  /* ltran's idle sleeps (low_power_mode) */
    uint64_t woken_by_client;         /* of those, ended by a client's frames (its eventfd write) */
    uint64_t woken_by_port;           /* ended by a frame on the port (the doorbell) */
    uint64_t hairpin;                 /* frames from a client to another client's address */
    uint32_t mbuf_free, mbuf_total;
    uint32_t nclients;
    uint32_t pad;
};

struct ltran_client_info {
    uint32_t id;
    int32_t pid;
    uint32_t ip;
    char name[LTRAN_NAME_MAX];
    uint64_t rx_frames;               /* delivered to its rx ring */
    uint64_t tx_frames;               /* taken from its tx ring */
    uint64_t drop_rx_full;            /* its rx ring was full */
    uint32_t rx_ring_depth, tx_ring_depth;
    uint32_t conns;                   /* 4-tuples it owns */
    uint32_t nlisten;                 /* listeners it has (the first LTRAN_LISTEN_SHOWN below) */
    uint16_t listen_port[LTRAN_LISTEN_SHOWN]; /* network order */
};

#endif
