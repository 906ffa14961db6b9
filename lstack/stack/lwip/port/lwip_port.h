/*
 * lwip_port.h - what lstack's lwIP build adds to lwIP, as seen from both
 * sides: the lwIP library (liblstack_lwip.so: lwIP's core plus the files of
 * this folder) and the stack that loads a private copy of it
 * (lstack/stack/lwip_load.c resolves these through lwip_api.def).
 *
 * Each copy of the library has its own values: a stack calls
 * lstack_lwip_configure on its copy once, before lwip_init, and the copy's
 * lwIP then uses them where lwipopts.h names a per-stack value (receive
 * window, send buffer, send queue length) and for its memory arena.
 *
 * Which thread: the stack's owner thread only, like every lwIP call.
 */
#ifndef LSTACK_LWIP_PORT_H
#define LSTACK_LWIP_PORT_H

#include <stddef.h>
#include <stdint.h>

/* Window scale shift every connection offers (lwIP's TCP_RCV_SCALE): the
 * largest receive window is 0xffff << LSTACK_TCP_RCV_SCALE bytes. */
#define LSTACK_TCP_RCV_SCALE 7
#define LSTACK_TCP_WND_MAX (0xffffu << LSTACK_TCP_RCV_SCALE)
/* The largest MSS a connection may use (jumbo frames); the MSS a connection
 * offers and uses is derived from the interface MTU (netif->mtu - 40). */
#define LSTACK_TCP_MSS_MAX 8960
/* The most TCP payload one TSO segment carries (port/tcp_tso.c): its IPv4
 * total length fits 16 bits, and the segment with its headers fits the
 * arena's 64 KiB size class (lwip_mem.c). */
#define LSTACK_TCP_TSO_PAYLOAD_MAX 65280u

struct lstack_lwip_conf {
    uint32_t rcv_wnd;         /* receive window, bytes (<= LSTACK_TCP_WND_MAX) */
    uint32_t snd_buf;         /* send buffer, bytes */
    uint32_t mss;             /* MSS the send queue length is sized for */
    size_t mem_limit;         /* bytes the copy's arena may hand out */
    uint32_t pcb_hint;        /* connections expected (sizes the PCB hash) */
    /* TSO: the most TCP payload the port takes in one frame and cuts into
     * MSS frames (0: no TSO; else at least 2 x mss, capped at
     * LSTACK_TCP_TSO_PAYLOAD_MAX). Only for a port that also fills in the
     * TCP checksums (the netif then leaves them to it). */
    uint32_t tso_max;
    uint32_t tso_mss;         /* TSO: the largest MSS the port cuts by (0: any) */
    /* Received frames IPv4 reassembly may hold at once (each one an mbuf of
     * the port's pool); past it the oldest incomplete datagram is evicted.
     * 0: LSTACK_REASS_MAX_PBUFS. At most 0xffff. */
    uint32_t reass_max_pbufs;
    /* Ephemeral ports (connect, bind to port 0): port_lo..port_hi, both
     * included; 1 <= port_lo <= port_hi (Linux: ip_local_port_range);
     * 0 and 0: Linux's default, 32768-60999. */
    uint16_t port_lo, port_hi;
    /* Where lwIP's diagnostics and failed asserts go (NULL: stderr). */
    void (*log)(const char *msg);
    /* How many more sockets the stack may open now (tcp_conn_count minus
     * those open), asked for each SYN to a listener: 0 refuses it with a
     * RST; half-open connections may take the room there is (tcp_syn.c).
     * NULL: no limit. Called inside lwIP's input, on the owner thread. */
    uint32_t (*sock_room)(void *ctx);
    void *sock_room_ctx;
    /* SYN cookies the listeners may still send in this poll round: the
     * stack sets it before each round's frames and lwIP takes one per
     * cookie; a SYN that would get a cookie while it is 0 is dropped
     * unanswered (lstack_lwip_syn_stats.shed). NULL: no bound. Read and
     * written on the owner thread only. */
    uint32_t *cookie_budget;
};

/* The values this copy's TCP uses, derived from the conf (lwIP's defaults
 * per stack): the sock layer tests writability against these. */
struct lstack_lwip_limits {
    uint32_t rcv_wnd, snd_buf;
    uint32_t snd_queuelen;    /* segments a connection may queue */
    uint32_t snd_lowat;       /* writable again above this much free buffer ... */
    uint32_t snd_queuelowat;  /* ... and below this many queued segments */
};

struct lstack_lwip_mem_stats {
    uint64_t allocs;          /* lwIP allocations served */
    uint64_t frees;
    uint64_t fails;           /* refused: the arena's limit was reached */
    uint64_t in_use;          /* bytes handed out now (size classes included) */
    uint64_t arena_used;      /* bytes of the arena carved into blocks so far */
    uint64_t arena_limit;     /* the arena's size */
};

struct lstack_lwip_hash_stats {
    uint64_t lookups;         /* segments demultiplexed through the hash */
    uint64_t probes;          /* slots looked at by those lookups */
    uint64_t entries;         /* PCBs in the table now (active + TIME_WAIT) */
    uint64_t slots;           /* the table's size */
    uint64_t grows;           /* times it doubled */
};

/* Segments to listeners that lwIP did not handle itself (tcp_syn.c). */
struct lstack_lwip_syn_stats {
    uint64_t refused;         /* answered by a RST: no room for a socket */
    uint64_t dropped;         /* not answered: half-open connections take the room left */
    uint64_t cookies_sent;    /* answered by a SYN cookie: the listener's SYN queue was full */
    uint64_t cookies_recv;    /* connections made from a cookie the ACK returned */
    uint64_t cookies_failed;  /* ACKs to a listener, while cookies were out, that carried none */
    uint64_t shed;            /* not answered: a cookie was due, the round's cookie budget was spent */
};

/* IPv4 reassembly (ip_reass_stats.c, counted by lwIP's ip4_frag.c through
 * patch 0006). */
struct lstack_lwip_reass_stats {
    uint64_t fragments;       /* fragments taken in */
    uint64_t reassembled;     /* datagrams made whole */
    uint64_t dropped;         /* fragments dropped: duplicate, overlapping, past
                                 65535 bytes, with IP options, or no room */
    uint64_t timed_out;       /* datagrams freed incomplete after IP_REASS_MAXAGE s */
    uint64_t evicted;         /* datagrams freed to make room (IP_REASS_MAX_PBUFS) */
    uint64_t pbufs_waiting;   /* pbufs (received frames) held by waiting datagrams now */
    uint64_t pbufs_max;       /* ... and the most they may hold (reass_max_pbufs) */
};

/* Set this copy's values and say what they imply in *out. Returns 0, or
 * -EINVAL (a value out of range) or -ENOMEM (the arena or the PCB table
 * could not be reserved). Before lwip_init, once. */
int lstack_lwip_configure(const struct lstack_lwip_conf *c, struct lstack_lwip_limits *out);

/* Narrow the ephemeral port range to [lo, hi] (lo <= hi, inside the range
 * configured): several stacks of one process take disjoint parts of it, so
 * that two of them never pick the same local port for the same peer
 * (lwIP checks only its own PCBs). Any time after lstack_lwip_configure
 * (tcp_new_port brings its next port into the range); -EINVAL otherwise. */
int lstack_lwip_port_range(uint16_t lo, uint16_t hi);

/* While lwIP hands the netif a frame (its linkoutput, inside tcp_output):
 * the MSS the port is to cut it by, if it is a TSO segment, else 0. */
uint16_t lstack_lwip_tso_segsz(void);

/* A unicast TCP segment to the netif's own address, not a fragment, that
 * the stack's frame filter has checked as ip4_input would (version,
 * lengths, header checksum, addresses): p holds the TCP segment (header
 * and data, exactly the IPv4 total length minus the IPv4 header), iphdr
 * is its IPv4 header. lwIP's tcp_input takes p (it frees it). The stack's
 * thread (tcp_input_direct.c). */
struct pbuf;
struct netif;
void lstack_lwip_tcp_input(struct pbuf *p, struct netif *inp, const void *iphdr);

/* The frames of one receive burst (more than one frame) are handed to
 * lwIP between begin and end: the output their segments owe an
 * established connection leaves once, at end (tcp_rx_burst.c). The
 * stack's thread; no lwIP call but the frames' input in between. */
void lstack_lwip_rx_burst_begin(void);
void lstack_lwip_rx_burst_end(void);

/* What the bursts did (tcp_rx_burst.c). */
struct lstack_lwip_burst_stats {
    uint64_t bursts;          /* bursts of more than one frame */
    uint64_t owed;            /* connections that owed output at a burst's end */
    uint64_t merged;          /* tcp_input outputs taken into one already owed */
    uint64_t outputs;         /* tcp_output calls at bursts' ends */
    uint64_t overflow;        /* outputs sent at once: the list was full */
    uint64_t flushed;         /* owed ACKs sent early: a segment out of order followed */
    uint64_t capped;          /* owed output sent early: 64 KiB of the burst unACKed */
};
void lstack_lwip_burst_stats(struct lstack_lwip_burst_stats *out);

void lstack_lwip_mem_stats(struct lstack_lwip_mem_stats *out);
void lstack_lwip_hash_stats(struct lstack_lwip_hash_stats *out);
void lstack_lwip_syn_stats(struct lstack_lwip_syn_stats *out);
void lstack_lwip_reass_stats(struct lstack_lwip_reass_stats *out);

/* Several stacks (port/reass_route.c): route(ctx, p, ...) is called for a
 * TCP datagram this copy reassembled whose 4-tuple (addresses in network
 * order, ports in host order) has no connection here. It returns nonzero
 * if it gave the datagram to another stack (it copies p; this copy frees
 * p), 0 to let this copy's TCP input have it. NULL (the default): no
 * route. The stack's thread, before traffic. */
struct pbuf;
typedef int (*lstack_reass_route_fn)(void *ctx, const struct pbuf *p, uint32_t local_ip, uint16_t local_port,
                                     uint32_t remote_ip, uint16_t remote_port);
void lstack_lwip_reass_route(lstack_reass_route_fn fn, void *ctx);

/* Several stacks (port/pcb_hash.c): fn(ctx, ..., 1) is called for each
 * connection entering this copy's PCB hash (the active and TIME_WAIT
 * lists), fn(ctx, ..., 0) for each leaving it (addresses in network order,
 * ports in host order), so that the stack can publish the 4-tuples it holds
 * (stack/flow_dir.h). Setting it reports every connection in the hash now.
 * NULL: none (the default). The stack's thread, under its lock. */
typedef void (*lstack_flow_fn)(void *ctx, uint32_t local_ip, uint16_t local_port, uint32_t remote_ip,
                               uint16_t remote_port, int add);
void lstack_lwip_flow_hook(lstack_flow_fn fn, void *ctx);

/* The head of one of this copy's TCP pcb lists (port/tcp_lists.c): the
 * listeners (struct tcp_pcb_listen), the active connections, TIME_WAIT
 * (struct tcp_pcb); NULL when empty. The stack's thread, under its lock. */
enum { LSTACK_TCP_LIST_LISTEN, LSTACK_TCP_LIST_ACTIVE, LSTACK_TCP_LIST_TW };
void *lstack_lwip_tcp_list(int which);
/* Segments pcb has sent and not had acknowledged (port/tcp_lists.c). */
struct tcp_pcb;
uint32_t lstack_tcp_unacked_segs(const struct tcp_pcb *pcb);

/* TSC ticks per second, as this copy's clock (sys_now.c) measured them
 * against CLOCK_MONOTONIC; 0 before the first measurement (about 10 ms
 * after the first sys_now) and where there is no TSC (not x86). Any
 * thread (a racy read of one word). */
uint64_t lstack_lwip_tsc_hz(void);

#endif
