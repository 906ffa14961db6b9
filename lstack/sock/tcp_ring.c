/*
 * tcp_ring.c - run-to-wakeup's data path: each established connection of a
 * stack with rings (lsock_rings_enable) has a receive ring and a send ring
 * between the application threads and the stack thread, so that reads and
 * writes the rings can answer take no lock and never run lwIP.
 *
 * Threads: lsock_ring_recv / lsock_ring_send: any application thread,
 * without the lock (two threads reading, or writing, the same socket take
 * turns on rx_busy / tx_busy). Everything else: under the stack's lock.
 * Design: docs/design.md#run-to-wakeups-data-rings
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>

#include "sock/lsock_lwip.h"

/*
 * Receive (stack -> application): lwIP's recv callback (ring_on_recv, on
 * the stack thread under the lock) splits the pbuf chain and publishes one
 * slot per pbuf: the pbuf and its payload and length (zero-copy: the bytes
 * stay in the mbuf they arrived in). The application copies out of the
 * slots (lsock_ring_recv) and advances the ring's head; the stack frees
 * the pbufs of the slots the head passed (ring_reclaim) and reopens the
 * window by their bytes. When the ring is full, pbufs wait on the stack's
 * side in the socket's queue (rx_head, the overflow, in order behind the
 * ring) until slots are free.
 *
 * Send (application -> stack): the application copies its bytes into a
 * ring of bytes (lsock_ring_send); the stack moves them into lwIP with
 * tcp_write (copy) and tcp_output (ring_drain_tx). The application may
 * write up to tx_limit, the stack's head plus lwIP's free send buffer
 * (and no more than lwIP's free segment slots take: tx_room), so that
 * what the ring holds always fits lwIP's queue: the bytes buffered
 * are those Linux would (the send buffer, SO_SNDBUF included), and a close
 * or shutdown moves them all into lwIP before the FIN.
 *
 * Doorbell: a call that consumed or produced marks the socket pending
 * (pend, one exchange) and, if it was not yet, pushes it on the stack's
 * list (sock_ring_pend: a lock-free LIFO that the stack thread takes whole
 * with one exchange, so there is no ABA). The stack thread, which polls
 * anyway, sees the list non-empty, takes its lock for a round and services
 * each socket (lsock_service): drain the send ring (the reply carries
 * the ACK), free read pbufs, reopen the window, owe the delayed ACK as
 * tcp_io.c does when the application drained the queue.
 *
 * Readiness: lsock_events reads the rings (tcp_io.c). The stack tells the
 * watchers of every arrival (as without rings); room is told by the stack
 * when it frees room that a writer saw lacking (tx_wanted): the writer
 * sets tx_wanted (below tx_lowat) and then rings the doorbell with a full
 * barrier, and the stack clears pend with one before it reads tail and
 * tx_wanted, so either the stack sees the flag or the writer rings again.
 * Reads and writes that consumed or produced do not tell watchers (the
 * level falls; epoll finds that at its next look, under the lock).
 *
 * What takes the lock (the stack's futex lock, as in the rest of
 * run-to-wakeup): a read that finds the ring empty (EOF, errors, the
 * overflow, -EAGAIN: lsock_ring_recv_locked, which decides as lsock_recv
 * does), a write that finds no room or a socket closed to writes
 * (lsock_ring_send_locked), every control call (socket, bind, listen,
 * accept, connect, shutdown, close, options: under the lock),
 * and each epoll/poll/select look. A socket without rings (listening,
 * connecting, or its rings could not be allocated) is served by the
 * locked path entirely.
 *
 * Memory ordering: see common/spsc.h for the rings. rx_in is stored
 * before the tail that publishes its bytes and rx_out after the reads, so
 * rx_in - rx_out never goes negative for a reader that loads rx_out first.
 * s->ring is stored with release once the rings are ready; the application
 * loads it with acquire.
 */

/* Per connection: 256 pbufs (a 256 KiB window in full segments needs 180)
 * and 64 KiB of bytes to send. */
enum { RING_RX_SLOTS = 256, RING_TX_BYTES = 64 * 1024 };

static inline void relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
}

static inline void turn_take(int *f)
{
    while (__atomic_exchange_n(f, 1, __ATOMIC_ACQUIRE))
        while (__atomic_load_n(f, __ATOMIC_RELAXED))
            relax();
}

static inline void turn_give(int *f)
{
    __atomic_store_n(f, 0, __ATOMIC_RELEASE);
}

static inline struct lsock_ring *ring_of(const struct lsock *s)
{
    return __atomic_load_n(&s->ring, __ATOMIC_ACQUIRE);
}

static size_t iov_total(const struct iovec *iov, int iovcnt)
{
    size_t t = 0;
    for (int i = 0; i < iovcnt; i++)
        t += iov[i].iov_len;
    return t;
}

/* ---- application side (no lock) ---- */

/* Ring the doorbell: s has work for the stack thread. */
static void kick(struct lsock *s)
{
    if (__atomic_exchange_n(&s->pend, 1, __ATOMIC_SEQ_CST))
        return; /* listed already: the stack clears pend before it looks */
    struct lsocks *ss = s->ss;
    struct lsock *head = __atomic_load_n(&ss->pend, __ATOMIC_RELAXED);
    do {
        s->pend_next = head;
    } while (!__atomic_compare_exchange_n(&ss->pend, &head, s, true, __ATOMIC_RELEASE, __ATOMIC_RELAXED));
}

ssize_t lsock_ring_recv(struct lsock *s, const struct iovec *iov, int iovcnt, int flags)
{
    struct lsock_ring *r = ring_of(s);
    if (r == NULL)
        return -EAGAIN;
    turn_take(&r->rx_busy);
    uint32_t left = spsc_avail(&r->rx);
    uint32_t idx = r->rx.head, off = r->rx_off;
    size_t done = 0;
    const struct lsock_rxslot *sl = &r->rx_slot[idx & r->rx.mask];
    for (int i = 0; i < iovcnt && left > 0; i++) {
        char *dst = iov[i].iov_base;
        size_t space = iov[i].iov_len;
        while (space > 0 && left > 0) {
            size_t take = sl->len - off;
            if (take > space)
                take = space;
            memcpy(dst, sl->data + off, take);
            dst += take;
            space -= take;
            done += take;
            off += (uint32_t)take;
            if (off == sl->len) {
                idx++;
                left--;
                off = 0;
                sl = &r->rx_slot[idx & r->rx.mask];
            }
        }
    }
    bool consumed = done > 0 && !(flags & MSG_PEEK);
    if (consumed) {
        r->rx_off = off;
        __atomic_store_n(&r->rx_out, r->rx_out + done, __ATOMIC_RELEASE);
        spsc_consume(&r->rx, idx - r->rx.head); /* the stack may free those pbufs now */
    }
    turn_give(&r->rx_busy);
    if (done == 0)
        return -EAGAIN;
    if (consumed)
        kick(s); /* free the pbufs, reopen the window */
    return (ssize_t)done;
}

ssize_t lsock_ring_send(struct lsock *s, const struct iovec *iov, int iovcnt)
{
    struct lsock_ring *r = ring_of(s);
    if (r == NULL || !__atomic_load_n(&r->tx_open, __ATOMIC_ACQUIRE))
        return -EAGAIN;
    turn_take(&r->tx_busy);
    uint32_t room = lsock_ring_room(r);
    uint32_t done = 0;
    for (int i = 0; i < iovcnt && done < room; i++) {
        size_t n = iov[i].iov_len;
        if (n > room - done)
            n = room - done;
        if (n == 0)
            continue;
        spsc_put_bytes(&r->tx, r->tx_buf, iov[i].iov_base, (uint32_t)n);
        spsc_produce(&r->tx, (uint32_t)n);
        done += (uint32_t)n;
    }
    if (room - done < lsock_ring_lowat(r))
        __atomic_store_n(&r->tx_wanted, 1, __ATOMIC_RELAXED); /* tell me when there is room */
    turn_give(&r->tx_busy);
    kick(s); /* move them into lwIP (or, with none moved, look at the room again) */
    return done > 0 ? (ssize_t)done : -EAGAIN;
}

/* ---- stack side (under the lock) ---- */

void lsock_rings_enable(struct stack *st)
{
    struct lsocks *ss = lsocks_get(st);
    if (ss != NULL)
        ss->rings = true;
}

bool lsock_rings_enabled(const struct stack *st)
{
    const struct lsocks *ss = st != NULL ? lsocks_of(st) : NULL;
    return ss != NULL && ss->rings;
}

bool lsock_pending(const struct stack *st)
{
    const struct lsocks *ss = lsocks_of(st);
    return ss != NULL &&
           (__atomic_load_n(&ss->pend, __ATOMIC_RELAXED) != NULL || __atomic_load_n(&ss->tell, __ATOMIC_RELAXED) != NULL);
}

void lsock_ring_free(struct lsock_ring *r)
{
    if (r == NULL)
        return;
    free(r->rx_slot);
    free(r->tx_buf);
    free(r);
}

/* What the writer may add to the ring: lwIP's free send buffer, and no
 * more than its free segment slots hold (less two: a drain may start a
 * segment short and the ring's wrap splits it in two), so that a close or
 * shutdown can always move the whole ring into lwIP before its FIN; a
 * stalled peer that leaves many small segments unacknowledged fills the
 * slots long before the bytes. */
static uint32_t tx_room(const struct lsock *s)
{
    const struct tcp_pcb *pcb = s->pcb;
    uint32_t room = lsock_snd_room(s);
    uint32_t queued = tcp_sndqueuelen(pcb), limit = s->ss->tcp.snd_queuelen;
    uint32_t slots = queued + 2 < limit ? limit - queued - 2 : 0;
    uint32_t by_slots = slots * (uint32_t)tcp_mss(pcb);
    return by_slots < room ? by_slots : room;
}

static err_t ring_on_recv(void *arg, struct tcp_pcb *pcb, struct pbuf *p, err_t err);
static err_t ring_on_sent(void *arg, struct tcp_pcb *pcb, u16_t len);

void lsock_ring_attach(struct lsock *s)
{
    const struct lwip_api *L = lsock_lwip(s);
    if (s->ring == NULL) {
        int saved = errno; /* lsock.h: errno is preserved */
        struct lsock_ring *r = calloc(1, sizeof(*r));
        struct lsock_rxslot *slots = r != NULL ? malloc(sizeof(*slots) * RING_RX_SLOTS) : NULL;
        char *buf = slots != NULL ? malloc(RING_TX_BYTES) : NULL;
        errno = saved;
        if (buf == NULL) { /* no rings: the locked path serves it */
            free(slots);
            free(r);
            return;
        }
        spsc_init(&r->rx, RING_RX_SLOTS, 0);
        spsc_init(&r->tx, RING_TX_BYTES, 0);
        r->rx_slot = slots;
        r->tx_buf = buf;
        r->tx_limit = tx_room(s);
        uint32_t size = lsock_snd_size(s);
        r->tx_lowat = (size < RING_TX_BYTES ? size : RING_TX_BYTES) / 2;
        r->tx_open = 1;
        __atomic_store_n(&s->ring, r, __ATOMIC_RELEASE);
    }
    L->tcp_recv(s->pcb, ring_on_recv);
    L->tcp_sent(s->pcb, ring_on_sent);
}

/* Publish put filled slots holding bytes bytes. */
static void rx_publish(struct lsock_ring *r, uint32_t put, uint64_t bytes)
{
    if (put == 0)
        return;
    __atomic_store_n(&r->rx_in, r->rx_in + bytes, __ATOMIC_RELEASE);
    spsc_produce(&r->rx, put);
}

/* Slots the stack may fill: behind the ones it has not freed yet. */
static uint32_t rx_room(const struct lsock_ring *r)
{
    return spsc_cap(&r->rx) - (r->rx.tail - r->rx_freed);
}

static void rx_fill(struct lsock_ring *r, uint32_t at, struct pbuf *q)
{
    r->rx_slot[(r->rx.tail + at) & r->rx.mask] = (struct lsock_rxslot){q, q->payload, q->len};
}

/* Move waiting pbufs (the overflow) into free slots. */
static void ring_refill(struct lsock *s)
{
    struct lsock_ring *r = s->ring;
    uint32_t room = rx_room(r), put = 0;
    uint64_t bytes = 0;
    while (s->rx_head != NULL && put < room) {
        struct pbuf *q = s->rx_head;
        s->rx_head = q->next;
        q->next = NULL;
        rx_fill(r, put++, q);
        bytes += q->len;
        s->rx_bytes -= q->len;
    }
    if (s->rx_head == NULL)
        s->rx_tail = NULL;
    rx_publish(r, put, bytes);
}

static err_t ring_on_recv(void *arg, struct tcp_pcb *pcb, struct pbuf *p, err_t err)
{
    struct lsock *s = arg;
    (void)err; /* always ERR_OK in lwIP 2.1 */
    if (s == NULL)
        return ERR_VAL;
    if (p == NULL) {
        lsock_on_fin(s, pcb); /* after every slot published: a reader sees the data first */
        return ERR_OK;
    }
    struct lsock_ring *r = s->ring;
    const struct lwip_api *L = lsock_lwip(s);
    uint32_t room = s->rx_head != NULL ? 0 : rx_room(r), put = 0; /* behind the overflow, if any */
    uint64_t bytes = 0;
    while (p != NULL) {
        struct pbuf *q = p;
        p = q->next;
        q->next = NULL; /* one slot per pbuf, each freed on its own */
        if (q->len == 0) {
            L->pbuf_free(q);
        } else if (put < room) {
            rx_fill(r, put++, q);
            bytes += q->len;
        } else {
            if (s->rx_tail != NULL)
                s->rx_tail->next = q;
            else
                s->rx_head = q;
            s->rx_tail = q;
            s->rx_bytes += q->len;
        }
    }
    rx_publish(r, put, bytes);
    lsock_notify(s, true);
    return ERR_OK;
}

/* Free the pbufs of the slots the application has read. Returns their
 * bytes (the window credit). */
static size_t ring_reclaim(struct lsock *s)
{
    struct lsock_ring *r = s->ring;
    const struct lwip_api *L = lsock_lwip(s);
    uint32_t head = spsc_head_seen(&r->rx);
    size_t credit = 0;
    for (; r->rx_freed != head; r->rx_freed++) {
        const struct lsock_rxslot *sl = &r->rx_slot[r->rx_freed & r->rx.mask];
        credit += sl->len;
        L->pbuf_free(sl->pbuf);
    }
    return credit;
}

/* The send ring's room as lwIP's buffer allows it now, and the watchers
 * told when a writer waits for room that is there. */
static void tx_room_update(struct lsock *s)
{
    struct lsock_ring *r = s->ring;
    if (s->pcb != NULL) {
        __atomic_store_n(&r->tx_limit, r->tx.head + tx_room(s), __ATOMIC_RELEASE);
        uint32_t size = lsock_snd_size(s);
        __atomic_store_n(&r->tx_lowat, (size < spsc_cap(&r->tx) ? size : spsc_cap(&r->tx)) / 2,
                         __ATOMIC_RELAXED);
    }
    if (__atomic_load_n(&r->tx_wanted, __ATOMIC_SEQ_CST) && lsock_ring_room(r) >= lsock_ring_lowat(r)) {
        __atomic_store_n(&r->tx_wanted, 0, __ATOMIC_RELAXED);
        lsock_notify(s, true);
    }
}

/* Move the send ring's bytes into lwIP, as much as it takes. */
static void ring_drain_tx(struct lsock *s)
{
    struct lsock_ring *r = s->ring;
    struct tcp_pcb *pcb = s->pcb;
    uint32_t avail = spsc_avail(&r->tx);
    if (avail > 0 && (pcb == NULL || s->state != LS_CONNECTED || s->shut_wr)) {
        spsc_consume(&r->tx, avail); /* written as the connection ended: lost, as on Linux */
        avail = 0;
    }
    const struct lwip_api *L = lsock_lwip(s);
    bool moved = false;
    while (avail > 0) {
        uint32_t off = r->tx.head & r->tx.mask, n = spsc_cap(&r->tx) - off;
        uint32_t room = lsock_snd_room(s);
        if (n > avail)
            n = avail;
        if (n > room)
            n = room;
        if (n > 0xffff)
            n = 0xffff; /* tcp_write takes 16 bits */
        if (n == 0 || tcp_sndqueuelen(pcb) >= s->ss->tcp.snd_queuelen)
            break;
        u8_t fl = TCP_WRITE_FLAG_COPY | (n < avail ? TCP_WRITE_FLAG_MORE : 0);
        err_t e = L->tcp_write(pcb, r->tx_buf + off, (u16_t)n, fl);
        if (e == ERR_MEM && n > tcp_mss(pcb)) {
            n = tcp_mss(pcb); /* the segment queue limit: try one segment */
            e = L->tcp_write(pcb, r->tx_buf + off, (u16_t)n, fl | TCP_WRITE_FLAG_MORE);
        }
        if (e != ERR_OK)
            break; /* ERR_MEM: the next ACK (ring_on_sent) takes more */
        spsc_consume(&r->tx, n);
        avail -= n;
        moved = true;
    }
    if (moved)
        L->tcp_output(pcb);
    tx_room_update(s);
}

static err_t ring_on_sent(void *arg, struct tcp_pcb *pcb, u16_t len)
{
    struct lsock *s = arg;
    (void)pcb;
    (void)len;
    if (s != NULL && s->ring != NULL)
        ring_drain_tx(s); /* acknowledged bytes made room in lwIP */
    return ERR_OK;
}

static void service_one(struct lsock *s)
{
    ring_drain_tx(s); /* first: the reply carries the ACK */
    size_t credit = ring_reclaim(s);
    if (credit == 0)
        return;
    lsock_rx_credit(s, credit);
    ring_refill(s);
    if (lsock_ring_nread(s) == 0)
        lsock_ack_owe(s); /* drained: as tcp_io.c's lsock_recv does */
}

void lsock_service(struct stack *st)
{
    struct lsocks *ss = lsocks_of(st);
    if (ss == NULL)
        return;
    if (__atomic_load_n(&ss->tell, __ATOMIC_RELAXED) != NULL)
        lsock_tell_take(ss); /* readiness other stacks changed (a listener's copies) */
    struct lsock *s = __atomic_exchange_n(&ss->pend, NULL, __ATOMIC_ACQUIRE);
    while (s != NULL) {
        struct lsock *next = s->pend_next;
        /* A full barrier before reading the rings: a call after it rings again. */
        __atomic_exchange_n(&s->pend, 0, __ATOMIC_SEQ_CST);
        if (s->ring != NULL)
            service_one(s);
        s = next;
    }
}

void lsock_ring_shut_wr(struct lsock *s)
{
    __atomic_store_n(&s->ring->tx_open, 0, __ATOMIC_RELEASE);
    ring_drain_tx(s);
}

size_t lsock_ring_close(struct lsock *s)
{
    __atomic_store_n(&s->ring->tx_open, 0, __ATOMIC_RELEASE);
    ring_drain_tx(s);
    lsock_rx_credit(s, ring_reclaim(s));
    return lsock_ring_nread(s);
}

void lsock_ring_drop(struct lsock *s)
{
    if (__atomic_load_n(&s->pend, __ATOMIC_ACQUIRE))
        lsock_service(s->st); /* off the list before the memory goes */
    struct lsock_ring *r = s->ring;
    const struct lwip_api *L = lsock_lwip(s);
    for (; r->rx_freed != r->rx.tail; r->rx_freed++)
        L->pbuf_free(r->rx_slot[r->rx_freed & r->rx.mask].pbuf);
    r->rx.head = r->rx.tail;
    r->rx_out = r->rx_in; /* nothing left to read */
}

/* ---- the locked path (an application thread under the lock) ---- */

ssize_t lsock_ring_recv_locked(struct lsock *s, const struct iovec *iov, int iovcnt, int flags)
{
    if (s->ring == NULL)
        return lsock_recv(s, iov, iovcnt, flags);
    if (iov_total(iov, iovcnt) == 0)
        return 0;
    ring_refill(s); /* the overflow first: it is older than anything new */
    ssize_t n = lsock_ring_recv(s, iov, iovcnt, flags);
    return n != -EAGAIN ? n : lsock_recv_empty(s);
}

ssize_t lsock_ring_send_locked(struct lsock *s, const struct iovec *iov, int iovcnt, int flags)
{
    if (s->ring == NULL)
        return lsock_send(s, iov, iovcnt, flags);
    ssize_t no = lsock_send_refusal(s);
    if (no != 0)
        return no;
    if (iov_total(iov, iovcnt) == 0)
        return 0;
    return lsock_ring_send(s, iov, iovcnt); /* -EAGAIN: full, tx_wanted set */
}
