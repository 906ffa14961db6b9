/*
 * stack.h - one userspace TCP/IP stack: a private lwIP on one DPDK port.
 *
 * A stack is polled by exactly one thread (the app thread in
 * run-to-completion mode, or lstackd's loop); none of these functions may be
 * called from two threads at once on the same stack. DPDK's EAL must be up
 * (nic_eal_init) before stack_open.
 *
 * No lwIP or DPDK type crosses this header.
 */
#ifndef LSTACK_STACK_H
#define LSTACK_STACK_H

#include <stdbool.h>
#include <stdint.h>

#include "conf/conf.h"
#include "filter/frame_filter.h"
#include "nic/nic.h"

struct stack;

/* Poll rounds, timed (stack/round_acct.h says what is busy and what the
 * busy time includes). Cycles are round-clock ticks: TSC ticks on x86. */
struct stack_rounds {
    uint64_t busy;          /* rounds that received a frame or sent one lwIP queued */
    uint64_t rx_frames;     /* frames received by rounds */
    uint64_t tx_frames;     /* frames lwIP queued for sending (sent by the next round's flush at the latest) */
    uint64_t busy_cycles;   /* from the start of a busy round to the start of the next round */
    uint64_t idle_cycles;   /* the same from the start of the other rounds */
    uint64_t tsc_hz;        /* round-clock ticks per second (0: not measured yet) */
};

/* A stack's counters: the fields stack_stats.def lists (its STACK_STAT
 * lines, generated here) and those it names inside the parts declared by
 * hand (the port's, the drops by filter verdict, lwIP's SYN counts, the
 * rounds). */
struct stack_stats {
    struct nic_stats nic;
    uint64_t drop[FRAME_VERDICT_COUNT]; /* by frame_filter verdict; [FRAME_PASS] unused */
    uint64_t lwip_input_err;            /* lwIP refused a frame we passed */
    uint64_t syn_dropped;               /* lwIP's: SYN to a listener not answered */
    uint64_t syn_shed;                  /* lwIP's: SYN to a full SYN queue not answered */
    struct stack_rounds rounds;         /* the rounds' time and frames */
#define STACK_STAT(name, kind, help) uint64_t name;
#define STACK_STAT_AT(name, field, kind, help)
#include "stack/stack_stats.def"
#undef STACK_STAT
#undef STACK_STAT_AT
};

/* Bytes each received buffer must reserve for the stack (its priv area):
 * pass it as nic_params.priv_size / nic_mem_pair's priv_size. */
size_t stack_nic_priv_size(void);

/* Bring up stack number index (0-based; its CPU is conf->cpus[index]) on the
 * open port nic: private lwIP copy, netif with the configured address.
 * Starts resolving the gateway. Returns 0 and *out (which then owns nic), or
 * -1 with a reason in err (nic still the caller's). conf is only read during
 * the call. */
int stack_open(struct stack **out, const struct lstack_conf *conf, int index, struct nic *nic,
               char *err, size_t errlen);

/* One round: receive a burst, filter it, feed lwIP, run lwIP's due timers,
 * send what lwIP queued. Returns the frames received (0: nothing arrived).
 * Times the round (stack/round_acct.h): one TSC read. */
unsigned stack_poll(struct stack *s);

/* run-to-wakeup's round, split so that the stack thread takes the stack
 * lock only when there is work (runtime/mode_rtw.c):
 *  stack_rx     without the lock, by the stack's owner only: receive up to
 *               stack_burst(s) frames into pkts; returns how many;
 *  stack_round  under the lock: the rest of a stack_poll round for them (n
 *               may be 0: timers and the tx batch only);
 *  stack_round_owed  without the lock (a hint read racily; the owner takes
 *               the lock on true): application calls queued frames, or the
 *               layer above owes ACKs (stack_upper_ops.owed), since the
 *               last round. */
unsigned stack_burst(const struct stack *s);
unsigned stack_rx(struct stack *s, struct nic_pkt *pkts);
unsigned stack_round(struct stack *s, struct nic_pkt *pkts, unsigned n);
bool stack_round_owed(const struct stack *s);

/* Send what lwIP queued (the tx batch) without a poll round: the owner of
 * a stack that has no round coming soon (stack_ctx.h). */
void stack_flush_tx(struct stack *s);

/* The layer above a stack (its sockets: lstack/sock/) keeps its own state
 * of the stack and tells the stack what it needs of it through a table,
 * as a port tells the stack through nic_ops:
 *  room   sockets that may still open (lwIP refuses a SYN without room);
 *  owed   a hint, read without the lock: the layer has work for the next
 *         round (ACKs owed: stack_round_owed);
 *  stats  add the layer's counters to st (stack_get_stats);
 *  free   the state goes (stack_close).
 * stack_set_upper: once, before any round; stack_upper: the state. The
 * stack's lock, as every call. */
struct stack_upper_ops {
    uint32_t (*room)(void *upper);
    bool (*owed)(const void *upper);
    void (*stats)(const void *upper, struct stack_stats *st);
    void (*free)(void *upper);
};
void stack_set_upper(struct stack *s, void *upper, const struct stack_upper_ops *ops);
void *stack_upper(const struct stack *s);

/* Milliseconds until lwIP's next timer is due (a bound for idle sleeps). */
uint32_t stack_next_timer_ms(struct stack *s);

/* 1 and the MAC if the gateway's ARP entry is resolved; else 0 (and an ARP
 * request for it is sent again). */
int stack_gateway_mac(struct stack *s, uint8_t mac[6]);

void stack_get_stats(const struct stack *s, struct stack_stats *st);

/* Describe the port (`stackctl show nic`): calls emit once per item (see
 * nic_ops.describe); nothing if the port cannot describe itself. */
void stack_describe_nic(const struct stack *s, nic_describe_fn emit, void *ctx);

/* The port's MAC and DPDK name. */
void stack_mac(const struct stack *s, uint8_t mac[6]);
const char *stack_port_name(const struct stack *s);

/* Tell the port that this stack listens (on) or no longer listens on TCP
 * port (network order) of its address: a port shared through ltran sends
 * the SYNs for it here only once claimed. Returns 0 (also for a port that
 * needs no claim), -EADDRINUSE (another process listens there), or another
 * -errno from the port. */
int stack_claim_listen(struct stack *s, uint16_t port, bool on);

/* Several stacks in one process, one per queue of a port
 * (stack_peers.c). stack_group_join makes all[0..n) (n >= 2; the array must
 * outlive the group) a group: each stack's round hands a TCP segment whose
 * connection another stack holds to that stack (through an inbox, made on
 * NUMA node node[i], -1 or node NULL: anywhere, with ho, the handover
 * calls of liblstack_dpdk.so), and gives every stack a copy of each ARP
 * reply. stack_rx and stack_poll then take the stack's inbox before its
 * queue. Every call on any stack of the group, and every round,
 * must be serialised by one lock: a round reads the other stacks' lwIP.
 * steer (may be NULL; kept, must outlive the group) says how the port
 * spreads flows over its queues, all[i] on queue i: with a Toeplitz RSS of
 * n queues, stack_pick_port steers outgoing connections' ports.
 * Before any round; returns 0, or -1 with a reason in err (nothing
 * joined). stack_group_leave undoes it (frames still in an inbox are
 * freed): after every owner stopped, before stack_close. */
struct nic_handover_api;
struct nic_steer;
int stack_group_join(struct stack *const *all, unsigned n, const struct nic_handover_api *ho, const int *node,
                     const struct nic_steer *steer, char *err, size_t errlen);

/* A local port (host order) for a new connection of s to remote:rport
 * (network order): one of s's part of the ephemeral range whose replies
 * the port's RSS puts on s's own queue, past the last one it gave. 0 when
 * there is nothing to steer (s alone, or a port whose hash is not known:
 * lwIP picks the port, and replies that reach another queue are handed
 * over) or no port of the part qualifies. The port may be in use: the
 * caller binds it, and on EADDRINUSE calls again (the search moves on).
 * The stack's lock. */
uint16_t stack_pick_port(struct stack *s, uint32_t remote, uint16_t rport);
void stack_group_leave(struct stack *const *all, unsigned n);

/* One TCP pcb of a stack, as `stackctl show connections` shows it
 * (stack_conns.c). Addresses in network byte order, ports in host order. */
enum { STACK_TCP_LISTEN, STACK_TCP_ACTIVE, STACK_TCP_TIME_WAIT }; /* its list */
struct stack_tcp_view {
    int list;
    int state;              /* lwIP's enum tcp_state */
    uint32_t laddr, raddr;  /* raddr, rport 0 for a listener */
    uint16_t lport, rport;
    /* a connection not in TIME_WAIT or CLOSED (else 0) */
    uint32_t unsent;        /* bytes queued, not sent yet */
    uint32_t unacked;       /* bytes sent, not acknowledged yet */
    uint32_t snd_buf;       /* free send buffer, bytes */
    uint32_t snd_queuelen;  /* pbufs in the send queue */
    uint32_t cwnd, ssthresh, snd_wnd, rcv_wnd; /* bytes */
    uint32_t mss;
    uint32_t rtt_ms, rttvar_ms, rto_ms; /* lwIP measures in ticks of its slow timer */
    uint32_t rexmit;        /* retransmissions of the oldest unacked segment */
    /* The pcb and its callback argument (lwIP gives a SYN_RCVD pcb its
     * listener's): what the layer above tells of its socket (the sock
     * layer's lsock_view_of). */
    const void *pcb, *arg;
};
typedef void (*stack_tcp_fn)(void *ctx, const struct stack_tcp_view *v);

/* Under the stack's lock: fn(ctx, view) for every TCP pcb of s: the
 * listeners, then the active connections, then TIME_WAIT, each list in
 * lwIP's order. fn must not call into s. */
void stack_tcp_walk(struct stack *s, stack_tcp_fn fn, void *ctx);

/* Take the netif down, close the port, unload lwIP. NULL is fine. */
void stack_close(struct stack *s);

#endif
