/*
 * lsock_priv.h - struct lsock, struct lsocks (the sock layer's state of a
 * stack) and what the sock layer's files share.
 *
 * The files: tcp_sock.c (life cycle, accept / connected / err callbacks),
 * tcp_io.c (data, events, recv / sent callbacks), pcb_opts.c (options ->
 * pcb), errmap.c (err_t -> errno), sockopt.c (setsockopt / getsockopt over
 * the stored options). Those that touch lwIP include sock/lsock_lwip.h (our
 * lwipopts.h lets <netinet/tcp.h> and lwIP's headers share a file); here the
 * pcb and pbufs stay opaque pointers (sockopt.c sees no lwIP type). No
 * other layer includes it: they use lsock.h.
 */
#ifndef LSTACK_LSOCK_PRIV_H
#define LSTACK_LSOCK_PRIV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/spsc.h"
#include "port/lwip_port.h"
#include "sock/lsock.h"

/*
 * State model (mirrors Linux's sk_state / sk_shutdown, see lsock_events):
 *   LS_NEW        no pcb yet (options only stored);
 *   LS_BOUND      pcb bound, lwIP state CLOSED;
 *   LS_LISTEN     listen pcb, accept queue in acc_head;
 *   LS_CONNECTING tcp_connect sent the SYN;
 *   LS_CONNECTED  established (either direction may be shut);
 *   LS_DEAD       the connection (or the attempt) ended: reset, timeout,
 *                 refused, or both FINs exchanged. pcb is NULL; unread data
 *                 stays readable.
 */

struct tcp_pcb;
struct pbuf;

enum lsock_state { LS_NEW, LS_BOUND, LS_LISTEN, LS_CONNECTING, LS_CONNECTED, LS_DEAD };

struct lwip_api;
struct stack_loop;

/* The sock layer's state of one stack (tcp_sock.c makes it at the
 * stack's first socket, or when the runtime gives the stack its context;
 * the stack keeps it as its upper layer's, stack_set_upper, and frees it
 * at stack_close). Under the stack's lock but where said. */
struct lsocks {
    struct stack *st;
    const struct lwip_api *L;  /* the stack's lwIP (stack_lwip) */
    struct lstack_lwip_limits tcp; /* the stack's TCP limits (stack_tcp_limits) */
    uint32_t max;              /* tcp_conn_count */
    int syn_retries;           /* net.ipv4.tcp_syn_retries (TCP_SYNCNT's default) */
    int syn_linear_timeouts;   /* net.ipv4.tcp_syn_linear_timeouts */
    struct stack_loop *loop;   /* the context that runs the stack (lsock_loop); NULL: none told */

    uint32_t count;            /* lsocks counted against max */
    uint64_t changes;          /* lsock_notify calls that told watchers (lsock_changes) */
    uint64_t refused;          /* connections reset when they completed: max were open by then
                                * (lwIP refuses the SYN itself when they are open already) */
    uint64_t opened, accepted, reset, aborted; /* stack_stats conn_* */
    struct lsock *ack_owed;    /* sockets whose delayed ACK lsock_flush_acks sends */
    struct lsock *ack_aged;    /* ... owed since before the last flush: sent by the next */
    /* Connections get run-to-wakeup's rings (tcp_ring.c); the sockets with
     * work for the stack's next round: a lock-free list that any thread
     * pushes to and the round takes whole (lsock_service). */
    bool rings;
    struct lsock *pend;
    /* Sockets whose readiness another stack changed (a listener's copy
     * took a connection for it): a lock-free list (atomic), each with a
     * hold, that this stack's next round takes whole and tells. */
    struct lsock *tell;
};

/* Options as the application set them (Linux units); applied to the pcb
 * when it exists (pcb_opts.c), inherited by accepted sockets. */
struct lsock_opts {
    bool nodelay;
    bool keepalive;
    bool reuseaddr;
    bool reuseport;  /* stored only */
    bool linger_on;
    int linger_s;
    int keep_idle;   /* seconds */
    int keep_intvl;  /* seconds */
    int keep_cnt;
    int rcvbuf;      /* as set (0: never set); getsockopt reports twice this */
    int sndbuf;
    long rcvtimeo_ms;
    long sndtimeo_ms;
    int syncnt;      /* TCP_SYNCNT, 0: not set (the stack's tcp_syn_retries) */
};

struct lsock {
    struct lsocks *ss;         /* the sockets of its stack */
    struct stack *st;          /* that stack (ss->st) */
    struct tcp_pcb *pcb;       /* NULL in LS_NEW and LS_DEAD; never touched after lwIP's err callback */
    enum lsock_state state;
    struct lsock_watcher *watchers; /* told of readiness changes (lsock.h) */
    uint32_t ev_last;          /* events at the last lsock_notify that told the watchers */

    /* Receive queue: lwIP's pbuf chains linked one after the other by us
     * (the last pbuf of a chain points to the next chain's head); tot_len
     * is never used (u16). rx_off bytes of rx_head are consumed already. */
    struct pbuf *rx_head, *rx_tail;
    size_t rx_off;
    size_t rx_bytes;

    bool peer_fin;             /* FIN received (RCV_SHUTDOWN by the peer) */
    bool shut_rd, shut_wr;     /* shutdown() by the application */
    bool ever_connected;       /* reached LS_CONNECTED once */
    bool connect_pending;      /* connect() returned -EINPROGRESS, not yet confirmed */
    bool failed;               /* LS_DEAD by an error (not by an orderly close) */
    int so_error;              /* pending error (positive errno), 0: none */
    bool conn_timer;           /* tcp_connect_timer.c's timer is armed */
    bool conn_rto_set;         /* ... and has set the pcb's SYN RTO */
    uint8_t conn_waits;        /* ... ticks waited for lwIP's retransmission */
    uint32_t conn_t0;          /* ... lwIP's sys_now at tcp_connect */
    uint64_t conn_timer_ms;    /* ... for this many ms after tcp_connect */

    /* On the stack's sock_ack_owed list (see lsock_flush_acks). */
    bool ack_owed;
    struct lsock *ack_next;

    /* Listener: accepted connections not yet taken by lsock_accept. */
    int backlog;
    struct lsock *acc_head, *acc_tail;
    struct lsock *acc_next;    /* link in the listener's queue (or its incoming list) */
    /* Connections its copies on other stacks established (tcp_listen_copy.c):
     * a lock-free list (atomic) that their rounds push to, each under its
     * own stack's lock, and lsock_accept takes whole into the queue. */
    struct lsock *incoming;

    /* A listener's copies on the process's other stacks
     * (tcp_listen_copy.c). The socket the application holds heads the list
     * (copies: rep_next; under its stack's lock); a copy points back
     * (rep_primary, with a reference) and hands its connections there. */
    struct lsock *rep_primary;
    struct lsock *rep_next;
    /* Told from another stack that its readiness changed (a copy's new
     * connection): on its stack's tell list (lsocks.tell, atomic) until
     * that stack's next round tells its watchers. */
    int tell_pend;
    struct lsock *tell_next;

    /* References to the memory (atomic): the owner's (dropped by
     * lsock_close) and those of waits that look at the socket without
     * owning it (lsock_hold); the last lsock_release frees it. closed:
     * lsock_close ran (a dead socket, EPOLLHUP, for the waits left). */
    uint32_t refs;
    bool closed;

    /* The fd the POSIX layer gave it (lsock_set_fd), -1 before; for
     * stackctl show connections. */
    int fd;

    /* Addresses, network byte order, kept after the pcb is gone. */
    uint32_t laddr, raddr;
    uint16_t lport, rport;

    struct lsock_opts o;

    /* SO_RCVBUF on a connection (pcb_opts.c): the window it may announce,
     * and window credit still to be withheld to bring it down there
     * (taken from what the application consumes). 0/0 before the first
     * apply: the stack's tcp_rcv_wnd. */
    uint32_t rcv_cap, rcv_debt;
    /* Window credit the application consumed but lwIP was not given yet
     * (tcp_io.c, rx_consume): less than one MSS; given before anything
     * that compares lwIP's window with its maximum (lsock_rcv_settle). */
    uint32_t rcv_owed;

    /* run-to-wakeup's data rings (tcp_ring.c), NULL in run-to-completion
     * and until the connection is established: set under the lock (release),
     * read by application threads without it (acquire). pend: on the
     * stack's list of sockets the stack thread must service (atomic);
     * pend_next: the link in that list. */
    struct lsock_ring *ring;
    int pend;
    struct lsock *pend_next;
};

/* ---- run-to-wakeup's data rings (tcp_ring.c) ---- */

/* One received pbuf handed to the application: the pbuf (freed by the
 * stack once read) and its bytes, so that the reader needs no lwIP type. */
struct lsock_rxslot {
    void *pbuf;
    const char *data;
    uint32_t len;
};

struct lsock_ring {
    /* Receive: the stack produces slots, the application consumes them,
     * the stack frees the pbufs of consumed slots (rx_freed). */
    struct spsc rx;
    struct lsock_rxslot *rx_slot;
    uint32_t rx_freed;         /* stack: slots before it are freed */
    uint32_t rx_off;           /* application: bytes of the head slot read */
    uint64_t rx_in;            /* stack: bytes published (atomic) */
    uint64_t rx_out;           /* application: bytes consumed (atomic) */
    /* Send: the application produces bytes, the stack moves them into
     * lwIP. tx_limit: the byte index up to which the application may
     * write (the stack's head plus lwIP's free send buffer, so that what
     * the ring holds always fits lwIP's buffer). */
    struct spsc tx;
    char *tx_buf;
    uint32_t tx_limit;         /* stack (atomic) */
    uint32_t tx_lowat;         /* stack: room that makes the socket writable (EPOLLOUT) (atomic) */
    int tx_open;               /* 0: writes take the locked path (error, shutdown, close) (atomic) */
    int tx_wanted;             /* the application saw less than tx_lowat room (atomic) */
    /* Application threads that read (write) the same socket at the same
     * time take turns (a spin flag each: uncontended, one exchange). */
    int rx_busy, tx_busy;
};

/* Readable bytes of a ring socket: published and not consumed, plus those
 * still waiting on the stack's side (rx_bytes, the overflow list). */
static inline size_t lsock_ring_nread(const struct lsock *s)
{
    const struct lsock_ring *r = s->ring;
    uint64_t out = __atomic_load_n(&r->rx_out, __ATOMIC_ACQUIRE);
    return (size_t)(__atomic_load_n(&r->rx_in, __ATOMIC_ACQUIRE) - out) + s->rx_bytes;
}

/* Room the application may write into the send ring now (either side:
 * the application's tail is read atomically). */
static inline uint32_t lsock_ring_room(const struct lsock_ring *r)
{
    uint32_t tail = __atomic_load_n(&r->tx.tail, __ATOMIC_RELAXED);
    uint32_t room = spsc_cap(&r->tx) - (tail - spsc_head_seen(&r->tx));
    int32_t lim = (int32_t)(__atomic_load_n(&r->tx_limit, __ATOMIC_ACQUIRE) - tail);
    if (lim < 0)
        lim = 0;
    return (uint32_t)lim < room ? (uint32_t)lim : room;
}

/* The room that makes a ring socket writable (EPOLLOUT). */
static inline uint32_t lsock_ring_lowat(const struct lsock_ring *r)
{
    return __atomic_load_n(&r->tx_lowat, __ATOMIC_RELAXED);
}

/* Linux's keepalive defaults (also lwIP's: 7200 s, 75 s, 9). */
#define LSOCK_KEEPIDLE_DEFAULT 7200
#define LSOCK_KEEPINTVL_DEFAULT 75
#define LSOCK_KEEPCNT_DEFAULT 9
/* Linux's floors for SO_RCVBUF / SO_SNDBUF (SOCK_MIN_RCVBUF/SNDBUF, after
 * doubling). */
#define LSOCK_RCVBUF_MIN 2304
#define LSOCK_SNDBUF_MIN 4608

/* Linux's net.core.somaxconn default: the largest listen() backlog. */
#define LSOCK_SOMAXCONN 4096

/* TCP state of the pcb, in lwIP's order (pcb_opts.c checks the values). */
enum lsock_tcp_state {
    LSOCK_TCP_CLOSED, LSOCK_TCP_LISTEN, LSOCK_TCP_SYN_SENT, LSOCK_TCP_SYN_RCVD,
    LSOCK_TCP_ESTABLISHED, LSOCK_TCP_FIN_WAIT_1, LSOCK_TCP_FIN_WAIT_2, LSOCK_TCP_CLOSE_WAIT,
    LSOCK_TCP_CLOSING, LSOCK_TCP_LAST_ACK, LSOCK_TCP_TIME_WAIT
};

/* What TCP_INFO reports, read from the pcb without lwIP types. */
struct lsock_tcpinfo {
    enum lsock_tcp_state state;
    uint32_t mss;
    uint32_t rto_us;
    uint32_t rtt_us;        /* smoothed, 0 if not measured */
    uint32_t rttvar_us;
    uint32_t snd_cwnd;      /* segments */
    uint32_t snd_ssthresh;  /* segments */
    uint32_t unacked;       /* segments */
    uint32_t retransmits;
    uint32_t snd_wnd;       /* bytes the peer announced */
    uint32_t rcv_wnd;       /* bytes we announce */
};

/* ---- tcp_io.c ---- */

/* Tell s's watchers if lsock_events(s) differs from the last call's, or
 * always with force (a new arrival: data, FIN, connection, error, so that
 * edge-triggered watchers see each one). */
void lsock_notify(struct lsock *s, bool force);

/* The answer of a read that found nothing queued (EOF, the pending error,
 * -ENOTCONN, -EAGAIN: Linux's order); why a send cannot queue (a negative
 * errno, or 0). Under the lock. */
ssize_t lsock_recv_empty(struct lsock *s);
ssize_t lsock_send_refusal(struct lsock *s);

/* ---- tcp_ring.c (under the stack's lock) ---- */

/* shutdown(SHUT_WR) of a ring socket, before the FIN is queued: move the
 * ring's bytes into lwIP and close the ring to writes. */
void lsock_ring_shut_wr(struct lsock *s);
/* lsock_close of a ring socket, first: the ring's bytes into lwIP, the
 * read ones credited, the ring closed. Returns the bytes left unread. */
size_t lsock_ring_close(struct lsock *s);
/* Before s is released: free the pbufs its ring still holds, and take it
 * off the stack thread's list (servicing the list now, under the lock). */
void lsock_ring_drop(struct lsock *s);
/* Free a ring's memory (NULL: nothing). */
void lsock_ring_free(struct lsock_ring *r);

/* ---- tcp_listen_copy.c ---- */

/* Under the lock of copy's stack (its round): hand c, a connection the
 * copy established, to its listener s (of another stack): pushed on s's
 * incoming list, s told from afar. */
void lsock_listen_copy_hand(struct lsock *s, struct lsock *c);
/* Under s's lock: move s's incoming list to the end of its queue. */
void lsock_incoming_take(struct lsock *s);
/* Any thread: s's readiness changed on another stack's round: s's own
 * stack tells its watchers at its next round (lsock_tell_take). */
void lsock_tell_afar(struct lsock *s);
/* Under ss's stack's lock, each round: tell what lsock_tell_afar listed. */
void lsock_tell_take(struct lsocks *ss);

/* ---- tcp_connect_timer.c ---- */

/* SYNs a connect of s sends again before ETIMEDOUT: TCP_SYNCNT, else the
 * stack's net.ipv4.tcp_syn_retries (read at start). */
int lsock_syncnt(const struct lsock *s);

/* ---- pcb_opts.c (lwIP side) ---- */

/* Push s->o to s->pcb if there is one: SOF_REUSEADDR and SOF_KEEPALIVE on
 * any pcb; TCP_NODELAY and the keepalive timers only on a connection pcb
 * (a listen pcb has no such fields; children get them from s->o). */
void lsock_pcb_apply_opts(struct lsock *s);

/* Effective MSS of the connection, or 0 without one. */
unsigned lsock_pcb_mss(const struct lsock *s);

/* Fill ti from the pcb (state LSOCK_TCP_CLOSED and zeros without one;
 * LSOCK_TCP_LISTEN for a listener). */
void lsock_pcb_info(const struct lsock *s, struct lsock_tcpinfo *ti);

#endif
