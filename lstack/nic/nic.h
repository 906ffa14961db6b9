/*
 * nic.h - the stack's view of a network port: a table of operations over an
 * opaque port. Two implementations:
 *   - DPDK (nic/port.c, nic/io.c): one rx/tx queue pair of a port and its
 *     hugepage mbuf pool (a port may have one pair per stack:
 *     nic/nic_queues.h); EAL set-up in nic/eal.c.
 *   - memory (tests/support/mem_nic.h, not in liblstack.so): two ports
 *     wired back to back in one process, for tests that need no DPDK, no
 *     hugepages and no root (like DPDK's ring-backed test PMD).
 * No DPDK or lwIP type crosses this header, so the lwIP side (whose headers
 * clash with rte_ethdev.h) can include it.
 *
 * Threads: a struct nic is used by one thread at a time (its poller).
 * Design: docs/design.md#no-dpdk-type-crosses-nich
 */
#ifndef LSTACK_NIC_H
#define LSTACK_NIC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A received frame. handle owns the buffer until ops->pkt_free(handle).
 * data/len: the whole Ethernet frame. priv: the priv_size bytes asked for at
 * open time, for the caller, valid as long as the buffer is. */
struct nic_pkt {
    void *handle;
    uint8_t *data;
    uint16_t len;
    void *priv;
    uint8_t cksum;      /* NIC_CKSUM_* the port found (0: it did not check) */
};

/* A received frame's checksums as the port checked them (with rx_cksum). */
enum {
    NIC_CKSUM_IP_GOOD = 1,
    NIC_CKSUM_IP_BAD = 2,
    NIC_CKSUM_L4_GOOD = 4,
    NIC_CKSUM_L4_BAD = 8,
};

struct nic_stats {
    uint64_t rx_packets, rx_bytes;   /* frames taken from the rx queue */
    uint64_t tx_packets, tx_bytes;   /* frames accepted by the tx queue */
    uint64_t drop_rx_multiseg;       /* frames larger than one buffer */
    uint64_t drop_tx_nombuf;         /* no buffer for an outgoing frame */
    uint64_t drop_tx_full;           /* tx queue stayed full */
    uint64_t drop_tx_toolong;        /* outgoing frame larger than a buffer */
    uint64_t port_imissed;           /* from the port: rx queue full */
    uint64_t port_rx_nombuf;         /* from the port: no buffer to receive */
    uint64_t tx_burst_cycles;        /* TSC ticks inside the port's tx burst calls
                                        (DPDK ports; an af_xdp kick's system
                                        call and the kernel work it runs on
                                        this core included) */
    uint64_t tx_bursts;              /* tx flushes that had frames (DPDK ports):
                                        one af_xdp kick each; tx_packets over
                                        it is frames per kick */
    uint32_t mbuf_free;              /* buffers available now (caches included) */
    uint32_t mbuf_total;             /* buffers in all */
};

struct nic;

/* What a port offers the stack above it (read once, at stack start). */
struct nic_caps {
    uint16_t mtu;             /* largest IP packet the port sends and receives */
    bool rx_cksum;            /* it checks received IPv4 header and TCP checksums (nic_pkt.cksum) */
    bool tx_cksum;            /* it fills in the IPv4 header and TCP checksums of
                                 what it sends: the stack leaves them 0 */
    uint32_t tso_max;         /* TSO: the most TCP payload it takes in one IPv4/TCP
                                 frame (tx_frame_tso) and cuts into MSS frames,
                                 each with its IPv4 id and length, TCP sequence
                                 and flags, and both checksums fixed up; 0: none */
    uint16_t tso_mss_max;     /* TSO: the largest MSS it cuts by (0: any the MTU takes) */
};

/* One buffer of an outgoing frame that spans several (tx_frame_tso). */
struct nic_iov {
    uint8_t *base;
    uint32_t len;
};
/* The most buffers a TSO frame takes (64 KiB in buffers of 1.5-2 KiB). */
#define NIC_TSO_IOV_MAX 64

/* One item of a port's description (`stackctl show nic`): a group ("port",
 * "link", "queues", "offloads", "stats", "xstats", "pool"), a name, and a
 * text (non-NULL) or else a number. Valid during the callback only. */
struct nic_item {
    const char *group;
    const char *name;
    const char *text;
    uint64_t num;
};
typedef void (*nic_describe_fn)(void *ctx, const struct nic_item *item);

struct nic_ops {
    /* Receive up to max frames (at most the configured burst). Multi-buffer
     * frames are dropped and counted. Returns the count. */
    unsigned (*rx_burst)(struct nic *n, struct nic_pkt *pkts, unsigned max);
    /* Give a received frame's buffer back (any frame of this port). */
    void (*pkt_free)(struct nic *n, void *handle);
    /* The same for handles[0..count) (frames of this port), in one go.
     * NULL: the caller frees them one by one with pkt_free. */
    void (*pkt_free_bulk)(struct nic *n, void *const *handles, unsigned count);
    /* Reserve an outgoing frame of len bytes in the pending tx batch and
     * return where to write it; NULL if no buffer or len is too long
     * (counted). It leaves at the next tx_flush, or when the batch is full. */
    uint8_t *(*tx_frame)(struct nic *n, uint16_t len);
    /* With caps.tso_max: reserve in the pending tx batch an IPv4/TCP frame
     * of len bytes (headers plus at most tso_max payload) that the port
     * cuts into frames of mss payload bytes (TSO). Fills iov[0..n) with
     * where the frame's bytes go, in order (iov[0] holds at least its first
     * 128 bytes: every header), and returns n; 0 if no buffers, or len,
     * mss or max do not fit (counted as drop_tx_nombuf / drop_tx_toolong).
     * The stack leaves the IPv4 and TCP checksums 0. NULL: no TSO. */
    unsigned (*tx_frame_tso)(struct nic *n, uint32_t len, uint16_t mss, struct nic_iov *iov, unsigned max);
    /* Send the pending batch; what the queue will not take after a few tries
     * is freed and counted as drop_tx_full. Returns frames sent. */
    unsigned (*tx_flush)(struct nic *n);
    /* Counters since open plus the buffer pool's current occupancy. */
    void (*get_stats)(const struct nic *n, struct nic_stats *s);
    void (*mac)(const struct nic *n, uint8_t mac[6]);
    const char *(*name)(const struct nic *n);
    /* Stop the port and free its buffers. Frames the caller still holds
     * must have been freed. */
    void (*close)(struct nic *n);
    /* Describe the port: driver, link, queues, offloads, the port's own
     * counters and extended counters, the buffer pool; emit is called once
     * per item. May be called from another thread than the poller's, but
     * never at the same time as another op of n. NULL: nothing to say. */
    void (*describe)(const struct nic *n, nic_describe_fn emit, void *ctx);
    /* What the port offers (MTU); any thread, never at the same time as
     * another op of n. */
    void (*caps)(const struct nic *n, struct nic_caps *c);
    /* A port shared with other processes (ltran): have the SYNs for TCP
     * port `port` of address ip (both network order) delivered here (on),
     * or no longer (off). Returns 0, -EADDRINUSE (another process has it),
     * -ENOTCONN (the sharer is gone). The poller's thread. NULL: a port of
     * this process alone, nothing to claim. */
    int (*claim_listen)(struct nic *n, uint32_t ip, uint16_t port, bool on);
    /* Low power: the caller is about to sleep until a frame comes. Returns
     * an fd that becomes readable (POLLIN) when one does, to poll with its
     * other fds, then sleep_end; -EAGAIN: frames wait already (poll the
     * port, do not sleep; no sleep_end). Any thread, without the stack's
     * lock, concurrently with the poller. NULL (both): the port cannot wake
     * a sleeper. */
    int (*sleep_begin)(struct nic *n);
    /* After a sleep_begin that returned an fd: no longer asleep; consumes
     * the wake-up. */
    void (*sleep_end)(struct nic *n);
};

/* Every implementation's port struct starts with this. */
struct nic {
    const struct nic_ops *ops;
};

/* ---- DPDK ----
 * The three entry points below are what liblstack_dpdk.so exports: the
 * preload loads the DPDK side only when a bound process starts its stack. */
#define NIC_DPDK_EXPORT __attribute__((visibility("default")))

struct nic_params {
    bool has_mac;           /* choose the port with this MAC ... */
    uint8_t mac[6];         /* ... else the only port there is */
    uint32_t nb_mbufs;      /* pool size */
    uint32_t cache_size;    /* per-lcore mempool cache */
    uint16_t priv_size;     /* per-mbuf area for the caller (rx pbuf), <= 256 */
    uint16_t rx_desc;       /* rx queue size */
    uint16_t tx_desc;       /* tx queue size */
    uint16_t burst;         /* rx burst size (nic_read_number) */
    bool keep_pool;         /* ops->close leaves the pool: processes that share it still
                               use it (ltran's secondaries) */
};

/* Initialise DPDK's EAL with argv[0..argc) (argv[0] is a program name),
 * plus the memory options lstack adds when argv does not choose them
 * (nic/eal_args.c: --in-memory --single-file-segments by default); added
 * receives those, space-separated, or "" (for the caller to log, success
 * or not). Once per process: a second call returns -1 with EALREADY. Saves
 * and restores the caller's CPU affinity and signal mask (EAL pins the
 * caller and may block signals). On failure returns -1, errno set, and a
 * reason in err. */
NIC_DPDK_EXPORT int nic_eal_init(int argc, char **argv, char *added, size_t addedlen, char *err, size_t errlen);

/* Release EAL and remove its run-time files (/var/run/dpdk/<prefix>).
 * After this, no DPDK port may be used in this process. */
NIC_DPDK_EXPORT void nic_eal_cleanup(void);

/* At process exit (no thread uses a port any more): nic_eal_cleanup, except
 * that a primary with private memory (--in-memory, --no-huge) only removes
 * its run-time files (eal.c says why). */
NIC_DPDK_EXPORT void nic_eal_exit(void);

/* Open, configure and start the DPDK port chosen by p. Returns NULL with a
 * reason in err (e.g. the MACs of the ports that exist when none matches). */
NIC_DPDK_EXPORT struct nic *nic_dpdk_open(const struct nic_params *p, char *err, size_t errlen);

/* ---- ltran (use_ltran = 1): a port shared through the ltran process ----
 * Connects to ltran's unix socket, learns its DPDK file prefix, starts EAL
 * as a secondary process of ltran with argv plus --proc-type=secondary and
 * --file-prefix (written to added, space-separated), registers ip, and
 * opens the rx/tx rings ltran made for this process. Once per process (it
 * starts EAL). Returns NULL with a reason in err. nic/ltran_nic.c. */
struct nic_ltran_params {
    const char *socket_path;
    uint32_t ip;            /* network order */
    int argc;               /* argv[0] is a program name */
    char **argv;
    uint16_t priv_size;     /* per-mbuf area the caller needs (rx pbuf) */
    uint16_t burst;         /* rx burst (nic_read_number) */
};
NIC_DPDK_EXPORT struct nic *nic_ltran_open(const struct nic_ltran_params *p, char *added, size_t addedlen,
                                           char *err, size_t errlen);

#endif
