/*
 * tcp_io.c - data and readiness of an lsock: the receive queue, recv, send,
 * shutdown, lsock_events, and lwIP's recv / sent callbacks.
 * Contracts in lsock.h: the stack's owner thread under its lock; lwIP's
 * callbacks run inside stack_poll. Received data stays in the NIC's
 * buffers until read (zero-copy rx).
 * Design: docs/design.md#received-pbufs-stay-queued-as-chains-until-read
 */
#include <errno.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>

#include "sock/lsock_lwip.h"

/*
 * Receive: lwIP hands us pbuf chains whose pbufs are NIC buffers (zero-copy
 * rx, stack/netif.c); we link chains one after the other ourselves and free
 * each pbuf as soon as the application has consumed it, so a buffer goes
 * back to the pool at once. The window is reopened (tcp_recved) by what the
 * application consumes, so lwIP's window bounds what a connection holds;
 * credit of less than one MSS is kept back (rcv_owed) until more is read
 * or the connection closes (rx_consume, lsock_rcv_settle).
 *
 * Send: copied into lwIP (TCP_WRITE_FLAG_COPY) up to tcp_sndbuf and the
 * segment queue limit, then one tcp_output per lsock_send.
 *
 * Delayed ACKs: lwIP acknowledges every second segment at once and a lone
 * one from its 250 ms timer; a peer that uses Nagle then waits up to 250 ms
 * to send its next small segment. Linux instead acknowledges when the
 * application has drained such data (tcp_cleanup_rbuf). So a recv that
 * empties the queue while lwIP holds an ACK puts the socket on the stack's
 * owed list, and lsock_flush_acks sends the ACK at the second poll round
 * after the read unless a reply has carried it meanwhile - no extra packet
 * for request / response, on either end: a server answers before its next
 * round, and a client (redis-benchmark) writes its next request after the
 * epoll_wait that follows the read, whose first round would have sent a
 * pure ACK ahead of it (two frames per request from an lstack client).
 * An idle wait runs rounds every microsecond or so, so the ACK is
 * still out in a few of them (Linux's own delayed ACK waits 40 ms or more).
 *
 * Readiness follows Linux's tcp_poll (see lsock_events and lsock.h); every
 * change is reported through lsock_notify.
 *
 * Run-to-wakeup's connections move their data through rings instead
 * (tcp_ring.c); this file's queue then holds only the pbufs waiting for a
 * free slot, and lsock_events / lsock_nread read the rings.
 */

/* Room to report EPOLLOUT: lwIP's own low-water marks (what its netconn
 * layer uses), per stack (lwip_port.h): half the send buffer, and fewer
 * than half the queued segments it allows. */
/* Free send buffer: lwIP's (not tcp_sndbuf(), which clamps to 16 bits for
 * its API; the buffer is tcp_snd_buf), less what SO_SNDBUF takes off. */
static inline uint32_t snd_room(const struct lsock *s)
{
    const struct tcp_pcb *pcb = s->pcb;
    uint32_t size = s->ss->tcp.snd_buf;
    if (s->o.sndbuf > 0 && (uint32_t)s->o.sndbuf * 2 < size) {
        uint32_t cap = (uint32_t)s->o.sndbuf * 2, queued = size - pcb->snd_buf;
        return queued >= cap ? 0 : cap - queued;
    }
    return pcb->snd_buf;
}

/* The size the low-water marks are taken against. */
static inline uint32_t snd_size(const struct lsock *s)
{
    uint32_t size = s->ss->tcp.snd_buf;
    return s->o.sndbuf > 0 && (uint32_t)s->o.sndbuf * 2 < size ? (uint32_t)s->o.sndbuf * 2 : size;
}

static bool writable(const struct lsock *s)
{
    const struct tcp_pcb *pcb = s->pcb;
    if (pcb == NULL)
        return true;
    const struct lstack_lwip_limits *lim = &s->ss->tcp;
    uint32_t lowat = snd_size(s) == lim->snd_buf ? lim->snd_lowat : snd_size(s) / 2;
    return snd_room(s) >= lowat && tcp_sndqueuelen(pcb) < lim->snd_queuelowat;
}

/* lsock_events, inlined into lsock_notify (three calls a request). */
static inline __attribute__((always_inline)) uint32_t events_of(const struct lsock *s)
{
    /* The common case first (an open connection, no SO_SNDBUF, no error,
     * no shutdown): the same bits as the general path below, fewer tests.
     * It runs several times per request (every notify and epoll check). */
    if (s->state == LS_CONNECTED && s->o.sndbuf == 0 && s->so_error == 0 &&
        !(s->peer_fin | s->shut_rd | s->shut_wr) && s->pcb != NULL && s->ring == NULL) {
        const struct lstack_lwip_limits *lim = &s->ss->tcp;
        bool wr = s->pcb->snd_buf >= lim->snd_lowat && tcp_sndqueuelen(s->pcb) < lim->snd_queuelowat;
        return (s->rx_bytes > 0 ? EPOLLIN : 0u) | (wr ? EPOLLOUT : 0u);
    }
    switch (s->state) {
    case LS_LISTEN: /* its queue, and what its copies on other stacks took */
        return s->acc_head != NULL || __atomic_load_n(&s->incoming, __ATOMIC_RELAXED) != NULL ? EPOLLIN : 0;
    case LS_CONNECTING:
        return 0;
    default:
        break;
    }
    bool closed = s->state != LS_CONNECTED; /* Linux's TCP_CLOSE: new, bound, dead */
    bool rd_shut = s->peer_fin || s->shut_rd || s->state == LS_DEAD;
    bool wr_shut = s->shut_wr || s->state == LS_DEAD;
    uint32_t ev = 0;
    if (closed || (rd_shut && wr_shut))
        ev |= EPOLLHUP;
    if (rd_shut)
        ev |= EPOLLIN | EPOLLRDHUP;
    /* A ring socket (run-to-wakeup, tcp_ring.c): what the rings hold. */
    if (s->ring != NULL ? lsock_ring_nread(s) > 0 : s->rx_bytes > 0)
        ev |= EPOLLIN;
    if (wr_shut || (s->ring != NULL ? lsock_ring_room(s->ring) >= lsock_ring_lowat(s->ring) : writable(s)))
        ev |= EPOLLOUT;
    if (s->so_error != 0)
        ev |= EPOLLERR;
    return ev;
}

uint32_t lsock_events(const struct lsock *s)
{
    return events_of(s);
}

uint32_t lsock_events_told(const struct lsock *s)
{
    return s->ev_last;
}

void lsock_notify(struct lsock *s, bool force)
{
    uint32_t ev = events_of(s);
    if (!force && ev == s->ev_last)
        return;
    s->ev_last = ev;
    s->ss->changes++; /* run-to-wakeup's stack thread wakes sleepers on it */
    lsock_watchers_tell(s->watchers);
}

/* Take the pending error (positive errno), like Linux's sock_error. */
static int take_error(struct lsock *s)
{
    int e = s->so_error;
    s->so_error = 0;
    lsock_notify(s, false);
    return e;
}

/* lwIP's pbuf_free of one pbuf (p->next NULL): the common case, a
 * received frame's own pbuf (a custom pbuf of the stack, stack/netif.c)
 * that only the queue holds, is given straight to its free function, as
 * pbuf_free would after dropping the last reference (a call into the lwIP
 * copy and its loop less, ~25 instructions a read); anything else goes to
 * pbuf_free. */
static inline void pbuf_free_one(struct lsock *s, struct pbuf *p)
{
    if (p->ref == 1 && (p->flags & PBUF_FLAG_IS_CUSTOM)) {
        p->ref = 0;
        ((struct pbuf_custom *)p)->custom_free_function(p);
        return;
    }
    lsock_lwip(s)->pbuf_free(p);
}

size_t lsock_rx_drop(struct lsock *s)
{
    size_t n = s->rx_bytes;
    const struct lwip_api *L = lsock_lwip(s);
    while (s->rx_head != NULL) {
        struct pbuf *p = s->rx_head;
        s->rx_head = p->next;
        p->next = NULL;
        L->pbuf_free(p);
    }
    s->rx_tail = NULL;
    s->rx_off = 0;
    s->rx_bytes = 0;
    return n;
}

/* Drop n consumed bytes from the head of the queue, freeing each pbuf
 * (empty ones included) once it is used up, then reopen the window. */
static void rx_credit(struct lsock *s, size_t n);

void lsock_rx_credit(struct lsock *s, size_t n)
{
    rx_credit(s, n);
}

static void rx_consume(struct lsock *s, size_t n)
{
    const struct lwip_api *L = lsock_lwip(s);
    s->rx_bytes -= n;
    size_t left = n;
    while (s->rx_head != NULL) {
        struct pbuf *p = s->rx_head;
        size_t avail = p->len - s->rx_off;
        if (left < avail) {
            s->rx_off += left;
            break;
        }
        left -= avail;
        s->rx_head = p->next;
        s->rx_off = 0;
        p->next = NULL; /* free this pbuf only, not what we linked after it */
        L->pbuf_free(p);
    }
    if (s->rx_head == NULL)
        s->rx_tail = NULL;
    rx_credit(s, n);
}

/* Reopen the window by n bytes the application consumed. */
static void rx_credit(struct lsock *s, size_t n)
{
    const struct lwip_api *L = lsock_lwip(s);
    if (s->pcb == NULL)
        return;
    if (s->rcv_debt > 0) { /* SO_RCVBUF lowered the window (pcb_opts.c) */
        size_t keep = n < s->rcv_debt ? n : s->rcv_debt;
        s->rcv_debt -= (uint32_t)keep;
        n -= keep;
    }
    size_t credit = n;
    /* Credit of less than one MSS waits for more (rcv_owed) while the
     * window is wide (no SO_RCVBUF cap near a few segments): lwIP announces
     * a window only in steps of an MSS anyway (its silly-window avoidance,
     * tcp_update_rcv_ann_wnd), so the peer sees no difference, and a
     * request / response exchange of small messages calls tcp_recved once
     * per MSS read instead of once per read. */
    if (s->rcv_cap == 0 || s->rcv_cap >= 8u * tcp_mss(s->pcb)) {
        n += s->rcv_owed;
        if (n < tcp_mss(s->pcb)) {
            s->rcv_owed = (uint32_t)n;
            return;
        }
        s->rcv_owed = 0;
    }
    while (n > 0) {
        u16_t chunk = n > 0xffff ? 0xffff : (u16_t)n; /* tcp_recved takes 16 bits */
        L->tcp_recved(s->pcb, chunk);
        n -= chunk;
    }
    /* A window capped below lwIP's update threshold (two segments) would
     * reopen silently: announce it. */
    if (credit > 0 && s->rcv_cap != 0 && s->rcv_cap < 4u * tcp_mss(s->pcb)) {
        stack_tcp_ack_now(s->pcb);
        L->tcp_output(s->pcb);
    }
}

void lsock_rcv_settle(struct lsock *s)
{
    uint32_t n = s->rcv_owed;
    s->rcv_owed = 0;
    if (s->pcb == NULL || n == 0)
        return;
    lsock_lwip(s)->tcp_recved(s->pcb, (u16_t)n); /* n < one MSS */
}

/* The application drained s: if lwIP is delaying an ACK, owe it. */
static void ack_owe(struct lsock *s)
{
    if (s->ack_owed || s->pcb == NULL || !(s->pcb->flags & TF_ACK_DELAY))
        return;
    s->ack_owed = true;
    s->ack_next = s->ss->ack_owed;
    __atomic_store_n(&s->ss->ack_owed, s, __ATOMIC_RELAXED); /* the owner's hint reads it without the lock */
}

void lsock_ack_owe(struct lsock *s)
{
    ack_owe(s);
}

/* Take s off the owed list at *head; false if it is not there. */
static bool ack_unlink(struct lsock **head, struct lsock *s)
{
    for (struct lsock **pp = head; *pp != NULL; pp = &(*pp)->ack_next) {
        if (*pp == s) {
            __atomic_store_n(pp, s->ack_next, __ATOMIC_RELAXED); /* may be the list's head: see ack_owe */
            return true;
        }
    }
    return false;
}

void lsock_ack_forget(struct lsock *s)
{
    if (!s->ack_owed)
        return;
    if (!ack_unlink(&s->ss->ack_owed, s))
        ack_unlink(&s->ss->ack_aged, s);
    s->ack_owed = false;
    s->ack_next = NULL;
}

void lsock_flush_acks(struct stack *st)
{
    struct lsocks *ss = lsocks_of(st);
    if (ss == NULL)
        return;
    /* Those owed since the last call wait one more round for a reply. */
    struct lsock *s = ss->ack_aged;
    ss->ack_aged = ss->ack_owed;
    __atomic_store_n(&ss->ack_owed, NULL, __ATOMIC_RELAXED);
    while (s != NULL) {
        struct lsock *next = s->ack_next;
        s->ack_owed = false;
        s->ack_next = NULL;
        /* Still delayed: no reply carried it since the read. */
        if (s->pcb != NULL && (s->pcb->flags & TF_ACK_DELAY)) {
            stack_tcp_ack_now(s->pcb);
            lsock_lwip(s)->tcp_output(s->pcb);
        }
        s = next;
    }
}

/* What a read of an empty queue returns, in Linux's tcp_recvmsg order. */
static ssize_t recv_empty(struct lsock *s)
{
    if (s->peer_fin)
        return 0; /* EOF wins over a later error (SOCK_DONE) */
    if (s->so_error != 0)
        return -take_error(s);
    if (s->shut_rd || s->state == LS_DEAD)
        return 0;
    if (s->state == LS_NEW || s->state == LS_BOUND)
        return -ENOTCONN;
    return -EAGAIN;
}

ssize_t lsock_recv_empty(struct lsock *s)
{
    return recv_empty(s);
}

ssize_t lsock_recv(struct lsock *s, const struct iovec *iov, int iovcnt, int flags)
{
    /* The common case first: one buffer that takes all that is queued,
     * itself in one pbuf (a request). The same steps as below, fewer tests. */
    if (iovcnt == 1 && flags == 0 && s->rx_bytes > 0 && s->state != LS_LISTEN) {
        struct pbuf *p = s->rx_head;
        size_t avail = p->len - s->rx_off;
        if (avail == s->rx_bytes && avail <= iov[0].iov_len && p->next == NULL) {
            memcpy(iov[0].iov_base, (const char *)p->payload + s->rx_off, avail);
            /* rx_consume of the whole queue, its one pbuf */
            s->rx_head = s->rx_tail = NULL;
            s->rx_off = 0;
            s->rx_bytes = 0;
            pbuf_free_one(s, p);
            rx_credit(s, avail);
            ack_owe(s);
            lsock_notify(s, false);
            return (ssize_t)avail;
        }
    }
    if (s->state == LS_LISTEN)
        return -ENOTCONN;
    size_t want = 0;
    for (int i = 0; i < iovcnt; i++)
        want += iov[i].iov_len;
    if (want == 0)
        return 0;
    if (s->rx_bytes == 0)
        return recv_empty(s);
    size_t done = 0;
    const struct pbuf *p = s->rx_head;
    size_t off = s->rx_off;
    for (int i = 0; i < iovcnt && p != NULL; i++) {
        char *dst = iov[i].iov_base;
        size_t space = iov[i].iov_len;
        while (space > 0 && p != NULL) {
            size_t take = p->len - off;
            if (take > space)
                take = space;
            memcpy(dst, (const char *)p->payload + off, take);
            dst += take;
            space -= take;
            done += take;
            off += take;
            if (off == p->len) {
                p = p->next;
                off = 0;
            }
        }
    }
    if (!(flags & MSG_PEEK)) {
        rx_consume(s, done);
        if (s->rx_bytes == 0)
            ack_owe(s);
        lsock_notify(s, false);
    }
    return (ssize_t)done;
}

/* Queue up to len bytes of buf. Returns bytes queued (may be short), 0 when
 * the send buffer or segment queue is full, or a negative errno. */
static ssize_t write_some(struct lsock *s, const char *buf, size_t len, bool more)
{
    const struct lwip_api *L = lsock_lwip(s);
    struct tcp_pcb *pcb = s->pcb;
    size_t done = 0;
    while (done < len) {
        size_t room = snd_room(s);
        if (room == 0 || tcp_sndqueuelen(pcb) >= s->ss->tcp.snd_queuelen)
            break;
        size_t n = len - done;
        if (n > room)
            n = room;
        if (n > 0xffff)
            n = 0xffff; /* tcp_write takes 16 bits */
        u8_t fl = TCP_WRITE_FLAG_COPY;
        if (more || done + n < len)
            fl |= TCP_WRITE_FLAG_MORE; /* no PSH: more is coming */
        err_t e = L->tcp_write(pcb, buf + done, (u16_t)n, fl);
        if (e == ERR_MEM && n > tcp_mss(pcb)) {
            n = tcp_mss(pcb); /* the segment queue limit: try one segment */
            e = L->tcp_write(pcb, buf + done, (u16_t)n, fl | TCP_WRITE_FLAG_MORE);
        }
        if (e == ERR_MEM)
            break;
        if (e != ERR_OK)
            return done > 0 ? (ssize_t)done : lsock_errno(e);
        done += n;
    }
    return (ssize_t)done;
}

/* Why a send cannot queue anything now (a negative errno), or 0. */
static inline ssize_t send_refusal(struct lsock *s)
{
    if (s->so_error != 0)
        return -take_error(s);
    if (s->state == LS_CONNECTING)
        return -EAGAIN;
    if (s->state != LS_CONNECTED || s->shut_wr)
        return -EPIPE; /* Linux: also for a socket that never connected */
    return 0;
}

ssize_t lsock_send_refusal(struct lsock *s)
{
    return send_refusal(s);
}

/* lsock_notify after a write that send_refusal let through (no error, not
 * shut for writing, connected, with its pcb): events_of's common case
 * without the tests that refusal made; lsock_notify when the events
 * changed or the socket is not in that case. */
static inline void notify_after_send(struct lsock *s)
{
    if (s->o.sndbuf == 0 && !(s->peer_fin | s->shut_rd) && s->ring == NULL) {
        const struct lstack_lwip_limits *lim = &s->ss->tcp;
        bool wr = s->pcb->snd_buf >= lim->snd_lowat && tcp_sndqueuelen(s->pcb) < lim->snd_queuelowat;
        if (((s->rx_bytes > 0 ? EPOLLIN : 0u) | (wr ? EPOLLOUT : 0u)) == s->ev_last)
            return;
    }
    lsock_notify(s, false);
}

ssize_t lsock_send(struct lsock *s, const struct iovec *iov, int iovcnt, int flags)
{
    (void)flags; /* MSG_NOSIGNAL / MSG_DONTWAIT / MSG_MORE: the POSIX layer's */
    ssize_t no = send_refusal(s);
    if (no != 0)
        return no;
    /* The common case first: one buffer that fits the send buffer and the
     * segment queue whole, one tcp_write (what write_some would make);
     * anything else, a refusal included, takes the general path below. */
    if (iovcnt == 1) {
        struct tcp_pcb *pcb = s->pcb;
        size_t n = iov[0].iov_len;
        if (n > 0 && n <= 0xffff && n <= snd_room(s) && tcp_sndqueuelen(pcb) < s->ss->tcp.snd_queuelen &&
            lsock_lwip(s)->tcp_write(pcb, iov[0].iov_base, (u16_t)n, TCP_WRITE_FLAG_COPY) == ERR_OK) {
            lsock_lwip(s)->tcp_output(pcb);
            notify_after_send(s);
            return (ssize_t)n;
        }
    }
    size_t total = 0;
    for (int i = 0; i < iovcnt; i++)
        total += iov[i].iov_len;
    if (total == 0)
        return 0;
    size_t done = 0;
    ssize_t rc = 0;
    for (int i = 0; i < iovcnt; i++) {
        if (iov[i].iov_len == 0)
            continue;
        rc = write_some(s, iov[i].iov_base, iov[i].iov_len, done + iov[i].iov_len < total);
        if (rc < 0)
            break;
        done += (size_t)rc;
        if ((size_t)rc < iov[i].iov_len)
            break;
    }
    if (done > 0)
        lsock_lwip(s)->tcp_output(s->pcb);
    lsock_notify(s, false);
    if (done > 0)
        return (ssize_t)done;
    return rc < 0 ? rc : -EAGAIN;
}

int lsock_shutdown(struct lsock *s, int how)
{
    if (how != SHUT_RD && how != SHUT_WR && how != SHUT_RDWR)
        return -EINVAL;
    if (s->state != LS_CONNECTED)
        return -ENOTCONN;
    if (how != SHUT_WR)
        s->shut_rd = true; /* reads return 0 once the queue is empty; data still arrives, like Linux */
    if (how != SHUT_RD && !s->shut_wr) {
        if (s->ring != NULL)
            lsock_ring_shut_wr(s); /* the ring's bytes go before the FIN */
        s->shut_wr = true;
        /* FIN after the queued data. ERR_MEM: lwIP retries from its timer. */
        lsock_lwip(s)->tcp_shutdown(s->pcb, 0, 1);
    }
    lsock_notify(s, false);
    return 0;
}

size_t lsock_nread(const struct lsock *s)
{
    return s->ring != NULL ? lsock_ring_nread(s) : s->rx_bytes;
}

uint32_t lsock_snd_room(const struct lsock *s)
{
    return snd_room(s);
}

uint32_t lsock_snd_size(const struct lsock *s)
{
    return snd_size(s);
}

/* ---- lwIP callbacks ---- */

void lsock_on_fin(struct lsock *s, struct tcp_pcb *pcb)
{
    s->peer_fin = true;
    if (s->shut_wr) {
        /* Both FINs are out: the pcb is in CLOSING or TIME_WAIT, which
         * lwIP ends by itself without calling us (TIME_WAIT pcbs are
         * freed silently), so let go of it now. */
        lsock_detach(lsock_lwip(s), pcb);
        s->pcb = NULL;
        s->state = LS_DEAD;
    }
    lsock_notify(s, true);
}

err_t lsock_on_recv(void *arg, struct tcp_pcb *pcb, struct pbuf *p, err_t err)
{
    struct lsock *s = arg;
    (void)err; /* always ERR_OK in lwIP 2.1 */
    if (s == NULL)
        return ERR_VAL; /* cannot happen: lsock_detach clears the callback with the arg */
    if (p == NULL) {
        lsock_on_fin(s, pcb);
        return ERR_OK;
    }
    size_t n = 0;
    struct pbuf *last = p;
    for (struct pbuf *q = p; q != NULL; q = q->next) {
        n += q->len;
        last = q;
    }
    if (s->rx_tail != NULL) {
        s->rx_tail->next = p;
    } else {
        s->rx_head = p;
        s->rx_off = 0;
    }
    s->rx_tail = last;
    s->rx_bytes += n;
    lsock_notify(s, true);
    return ERR_OK;
}

err_t lsock_on_sent(void *arg, struct tcp_pcb *pcb, u16_t len)
{
    struct lsock *s = arg;
    (void)pcb;
    (void)len;
    /* Acknowledged data only frees send room: it can add EPOLLOUT, nothing
     * else. A socket whose watchers were last told EPOLLOUT has nothing
     * new to tell (every other change is told when it happens). */
    if (s != NULL && !(s->ev_last & EPOLLOUT))
        lsock_notify(s, false); /* only when it became writable */
    return ERR_OK;
}
