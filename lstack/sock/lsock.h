/*
 * lsock.h - a TCP socket on a stack, over lwIP's raw TCP API, as the POSIX
 * layer sees it. No lwIP or DPDK type crosses this header.
 *
 * Non-blocking (blocking, timeouts and errno belong to the POSIX layer):
 * functions return >= 0 or a negative errno (-EAGAIN, -ECONNRESET, ...;
 * lwIP's err_t mapped in sock/errmap.c) and preserve errno.
 * Threads: calls on one stack's sockets are serialised by the caller (the
 * lock of the stack's context: lsock_loop); lwIP callbacks run inside
 * stack_poll under it. Stacks share no lock: no call on one stack's socket
 * touches another stack (a listener's copies reach it through lock-free
 * lists). Without a lock: lsock_ring_recv / lsock_ring_send
 * (run-to-wakeup), lsock_hold / lsock_release, lsock_loop.
 * Memory: the POSIX layer owns an lsock from lsock_new / lsock_accept to
 * lsock_close (lwIP may keep the connection, e.g. in TIME_WAIT, without
 * it); lsock_hold keeps its memory past that.
 */
#ifndef LSTACK_LSOCK_H
#define LSTACK_LSOCK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/uio.h>

struct stack;
struct stack_loop;
struct lsock;

/* Readiness, in epoll bit values (EPOLLIN, EPOLLOUT, EPOLLRDHUP, EPOLLHUP,
 * EPOLLERR), as Linux reports them for a TCP socket:
 *  listener: EPOLLIN when a connection waits to be accepted;
 *  connecting: nothing, then EPOLLOUT when connected, or
 *              EPOLLOUT|EPOLLERR|EPOLLHUP when refused / failed (plus
 *              EPOLLIN|EPOLLRDHUP: Linux reports a failed connect as a
 *              reset; EPOLLERR stays until the error is read);
 *  connected: EPOLLIN when data or EOF is readable, EPOLLRDHUP|EPOLLIN after
 *             the peer's FIN, EPOLLOUT while the send buffer has room,
 *             EPOLLHUP when both directions are shut, EPOLLERR|EPOLLHUP|
 *             EPOLLIN|EPOLLRDHUP|EPOLLOUT after a reset;
 *  new (not listening, not connected): EPOLLOUT|EPOLLHUP, like Linux.
 * EPOLLERR is set while an error is pending (SO_ERROR, or the next
 * recv / send / connect reports it and clears it). EPOLLOUT on a connection
 * means at least half the send buffer (lwIP's TCP_SNDLOWAT) is free.
 * EPOLLRDNORM/EPOLLWRNORM are not reported (the event layer adds them if it
 * wants poll()'s full set). */
uint32_t lsock_events(const struct lsock *s);

/* lsock_events(s) as the socket last told its watchers (computed just
 * before): inside a watcher's changed(), the socket's events now, at no
 * cost. */
uint32_t lsock_events_told(const struct lsock *s);

/* A watcher: whoever wants to hear that a socket's readiness may have
 * changed. The event layer embeds one in each epoll item; the sock layer
 * knows nothing else of epoll. Each socket keeps a list of its watchers
 * (head: *lsock_watchers(s)) and calls every one's changed(w) whenever
 * lsock_events(s) differs from its value at the previous call, and also on
 * every arrival (data, FIN, reset, connection established, connection
 * queued on a listener) even if the events did not change, so
 * edge-triggered watchers see each one, like Linux. changed() runs inside
 * lsock_* calls and inside stack_poll, on the stack's owner thread under
 * its lock: it must not link or unlink watchers, nor call lsock_* functions
 * other than lsock_events, lsock_events_told and lsock_nread; it should
 * only note the item for a later check (it runs several times per segment).
 *
 * Design: docs/design.md#sockets-tell-their-watchers-not-the-event-layer */
struct lsock_watcher {
    void (*changed)(struct lsock_watcher *w);
    struct lsock_watcher *next;
    struct lsock_watcher **pprev;
};

/* Head of the list of s's watchers. */
struct lsock_watcher **lsock_watchers(struct lsock *s);

/* Link w (changed set) at the head of the list *head; unlink it. Under the
 * stack's lock, never from inside a changed() call. */
static inline void lsock_watcher_link(struct lsock_watcher **head, struct lsock_watcher *w)
{
    w->next = *head;
    if (*head != NULL)
        (*head)->pprev = &w->next;
    w->pprev = head;
    *head = w;
}

static inline void lsock_watcher_unlink(struct lsock_watcher *w)
{
    *w->pprev = w->next;
    if (w->next != NULL)
        w->next->pprev = w->pprev;
    w->next = NULL;
    w->pprev = NULL;
}

/* Tell every watcher on the list from w on (the sock layer's signal). */
static inline void lsock_watchers_tell(struct lsock_watcher *w)
{
    for (; w != NULL; w = w->next)
        w->changed(w);
}

/* The sock layer's state of stack st (its sockets, their counters, the
 * ACKs they owe, run-to-wakeup's doorbell list) is the sock layer's own:
 * made at st's first socket, kept by the stack as its upper layer's
 * (stack_set_upper) and freed with it. lsock_stack_open makes it now, and
 * tells st's sockets the context that runs st (loop: lsock_loop): before
 * st's owner starts, so that no round ever sees it appear. Returns 0 or
 * -ENOMEM. */
int lsock_stack_open(struct stack *st, struct stack_loop *loop);

/* The context that runs s's stack: the lock every call on s takes, and
 * how a wait on s polls or sleeps (common/stack_loop.h). Fixed for s's
 * life; any thread. */
struct stack_loop *lsock_loop(const struct lsock *s);

/* How many times a socket of st had its readiness change (each
 * lsock_notify that told watchers): run-to-wakeup's stack thread wakes
 * sleeping application threads when it moved. The stack's lock. */
uint64_t lsock_changes(const struct stack *st);

/* A new, unbound TCP socket on stack st. No lwIP object yet: options set
 * now are applied when bind/listen/connect creates the pcb.
 * -ENOBUFS: tcp_conn_count sockets are open already. -ENOMEM. */
int lsock_new(struct stack *st, struct lsock **out);

/* The stack a socket lives on. */
struct stack *lsock_stack(const struct lsock *s);

/* addr/port in network byte order (port 0: an ephemeral port). addr is the
 * stack's host_addr or INADDR_ANY (the POSIX layer routes other addresses to
 * the kernel; others get -EADDRNOTAVAIL). -EADDRINUSE (without SO_REUSEADDR
 * on both sockets; with it on both, lwIP lets the bind through and listen
 * fails with -EADDRINUSE instead), -EINVAL (already bound). */
int lsock_bind(struct lsock *s, uint32_t addr, uint16_t port);

/* Undo lsock_bind on a socket that is only bound (not listening, not
 * connecting): back to unbound, its port free again. -EINVAL otherwise. */
int lsock_unbind(struct lsock *s);

/* Listen (binds to INADDR_ANY:ephemeral first if unbound). backlog bounds
 * the SYN queue, Linux's way (at most LSOCK_SOMAXCONN, 4096; 0 gives 1):
 * past it a SYN gets a SYN cookie (stack_stats syncookies_*); half-open
 * connections never take more than the room left under tcp_conn_count (a
 * SYN past that is not answered: syn_dropped; the client retransmits).
 * Every established connection is
 * queued until tcp_conn_count sockets are open on the stack; past that, a
 * SYN is answered with a RST (the client's connect fails with
 * ECONNREFUSED; stack_stats conn_refused). Listening again changes the
 * backlog.
 * -EINVAL if connecting / connected, -EADDRINUSE. */
int lsock_listen(struct lsock *s, int backlog);

/* Several stacks in one process: a copy of listener s on every other
 * stack, bound to s's address and port with s's backlog and options, whose
 * established connections join s's accept queue (they live on their own
 * stack: lsock_loop of the accepted socket says which), so accept and
 * readiness on s cover every stack. Made in three steps, each under one
 * stack's lock (tcp_listen_copy.c; runtime/stacks.c drives them):
 *  lsock_listen_spec         under s's lock: what a copy takes, and the
 *                            copies s has (held); -EINVAL (s does not
 *                            listen, or is a copy), -ENOMEM;
 *  lsock_listen_copy         under st's lock: s's copy on st listens again
 *                            (listen() again: the new backlog), or a new
 *                            one is made (*made, to attach); -EINVAL (st is
 *                            s's own stack), -ENOBUFS (tcp_conn_count
 *                            sockets open on st), -EADDRINUSE (st has the
 *                            port in use), -ENOMEM;
 *  lsock_listen_copy_attach  under s's lock: c joins s's copies; -EBADF
 *                            when s was closed meanwhile (the caller then
 *                            closes c, under st's lock);
 *  lsock_spec_free           any thread: the spec's holds released. */
struct lsock_spec;
int lsock_listen_spec(struct lsock *s, struct lsock_spec **out);
int lsock_listen_copy(const struct lsock_spec *sp, struct stack *st, struct lsock **made);
int lsock_listen_copy_attach(struct lsock *s, struct lsock *c);
void lsock_spec_free(struct lsock_spec *sp);

/* After lsock_close(s) of a listener with copies (the caller holds s,
 * lsock_hold, across both): the next socket to close under its own stack's
 * lock (lsock_loop), with lsock_close, before the next call: s's copies,
 * then the connections of other stacks s still queued (reset, as a closed
 * listener's queue is on Linux). NULL: done. Without a lock. */
struct lsock *lsock_close_next(struct lsock *s);

/* Take one connection from the accept queue. -EAGAIN if none; -EINVAL if
 * not listening. The new lsock inherits the listener's options (TCP_NODELAY,
 * keepalive and its timers, SO_LINGER, buffer sizes, timeouts), like Linux.
 * A connection reset while queued is still returned; its first recv reports
 * the reset (like Linux). */
int lsock_accept(struct lsock *s, struct lsock **out);

/* Start connecting. Returns -EINPROGRESS (the result arrives as EPOLLOUT,
 * read it with SO_ERROR), -EISCONN, -EALREADY (still connecting), etc.
 * Like Linux, calling it again after the non-blocking connect finished
 * returns 0 once (then -EISCONN) if it succeeded; if it failed, the pending
 * error once (-ECONNREFUSED, -ETIMEDOUT...; -ECONNABORTED if SO_ERROR
 * already took it), after which the socket can connect anew.
 * Later failures (SO_ERROR / the next connect): -ECONNREFUSED (RST),
 * -EHOSTUNREACH (the next hop's ARP unresolved 3 s after the SYN),
 * -ETIMEDOUT (at Linux's time for TCP_SYNCNT / tcp_syn_retries), see
 * tcp_connect_timer.c. The local port comes from the stack's ephemeral
 * range (the kernel's ip_local_port_range); -EADDRNOTAVAIL when none is
 * free.
 * -ENETUNREACH for 0.0.0.0, 127/8, broadcast, multicast and the stack's own
 * address (lwIP would loop them back through its tcpip thread, which lstack
 * does not run; the POSIX layer sends those to the kernel). */
int lsock_connect(struct lsock *s, uint32_t addr, uint16_t port);

/* Copy received bytes into iov. flags: MSG_PEEK (do not consume),
 * MSG_DONTWAIT and MSG_NOSIGNAL ignored here (the POSIX layer uses them),
 * MSG_WAITALL handled by the POSIX layer. Returns bytes (> 0), 0 at EOF,
 * -EAGAIN when nothing is there yet (also while connecting), -ECONNRESET
 * after a reset (once, after the data that arrived before it; then 0; a
 * reset after the peer's FIN is not reported here: EOF comes first and
 * SO_ERROR holds EPIPE, like Linux), -ETIMEDOUT after a keepalive /
 * retransmission timeout,
 * -ENOTCONN if never connected or listening. After SHUT_RD: 0 once the
 * queue is empty, but data that still arrives is readable (Linux).
 * Consumed bytes reopen the window. A zero-length read returns 0. */
ssize_t lsock_recv(struct lsock *s, const struct iovec *iov, int iovcnt, int flags);

/* Queue bytes from iov and push them out. Returns bytes queued (> 0, may be
 * short), -EAGAIN when the send buffer is full or while connecting, -EPIPE
 * after shutdown(WR), after the connection ended, and on a socket that never
 * connected or listens (all like Linux; the POSIX layer raises SIGPIPE
 * unless MSG_NOSIGNAL). A pending error is returned first, once (so after a
 * reset: -ECONNRESET if nothing read it yet, then -EPIPE). */
ssize_t lsock_send(struct lsock *s, const struct iovec *iov, int iovcnt, int flags);

/* SHUT_RD, SHUT_WR (sends FIN after queued data), SHUT_RDWR. -ENOTCONN if
 * not connected (also while connecting or listening, where Linux would
 * disconnect), -EINVAL for another how. */
int lsock_shutdown(struct lsock *s, int how);

/* Release s. A connection with unread received data, or with SO_LINGER
 * {1, 0}, is reset (RST), like Linux; otherwise it is closed with FIN and
 * lwIP sends what is still queued (SO_LINGER with a timeout does not block:
 * it acts like no linger). A listener's unaccepted connections are reset.
 * The caller removes s from every epoll set first (*lsock_watchers(s) must
 * be NULL). Not from inside a watcher's changed(). */
void lsock_close(struct lsock *s);

/* Keep s's memory alive across a wait that looks at it without owning it
 * (poll and select on it, a blocking call on it) while another thread may
 * close it: lsock_close of a held socket does all a close does (FIN or RST,
 * the socket's room given back; from then on it reports EPOLLHUP, as a
 * closed socket) but frees the memory at the last lsock_release. An atomic
 * count: any thread, with or without the stack's lock, as long as the
 * caller knows s alive when it takes the hold (its fd's entry, a hold
 * already taken); every hold is released exactly once. */
void lsock_hold(struct lsock *s);
void lsock_release(struct lsock *s);

/* Socket options (SOL_SOCKET: SO_ERROR (read and cleared), SO_TYPE,
 * SO_DOMAIN, SO_PROTOCOL, SO_ACCEPTCONN, SO_REUSEADDR, SO_REUSEPORT (stored),
 * SO_KEEPALIVE, SO_RCVBUF, SO_SNDBUF (the window and send buffer of the
 * connection; getsockopt returns twice the value set, like Linux), SO_LINGER, SO_RCVTIMEO/SO_SNDTIMEO (stored, used by
 * the POSIX layer via lsock_timeouts); IPPROTO_TCP: TCP_NODELAY,
 * TCP_KEEPIDLE, TCP_KEEPINTVL, TCP_KEEPCNT, TCP_SYNCNT (1..127, read at
 * connect; unset: the stack's tcp_syn_retries), TCP_MAXSEG (read), TCP_INFO
 * (partially)). Others: -ENOPROTOOPT. Bad length: -EINVAL.
 * Details: values set before the pcb exists are applied when it is created;
 * set on a listener they are inherited by its connections. TCP_KEEPIDLE /
 * TCP_KEEPINTVL take 1..32767 s and TCP_KEEPCNT 1..127, else -EINVAL.
 * TCP_MAXSEG can be set (range-checked) but is ignored: the MSS follows the
 * port's MTU.
 * SO_RCVBUF v caps the announced window at v from the connection's
 * establishment on (later changes converge without shrinking what was
 * announced); SO_SNDBUF v lets at most 2v bytes be queued and unacked;
 * neither exceeds the stack's tcp_rcv_wnd / tcp_snd_buf, which they report
 * before a set.
 * SO_ERROR, SO_TYPE... cannot be set (-ENOPROTOOPT, like Linux). A value
 * read is truncated to *len, which is updated. TCP_INFO fills tcpi_state,
 * retransmits, rto, snd/rcv/adv mss, unacked, rtt, rttvar, snd_cwnd,
 * snd_ssthresh and rcv_space; the rest is 0. */
int lsock_setsockopt(struct lsock *s, int level, int name, const void *val, socklen_t len);
int lsock_getsockopt(struct lsock *s, int level, int name, void *val, socklen_t *len);

/* Receive / send timeouts in ms (0: none) as set by SO_RCVTIMEO/SO_SNDTIMEO. */
void lsock_timeouts(const struct lsock *s, long *rcv_ms, long *snd_ms);

/* Local (peer == false) or remote address, network byte order.
 * -ENOTCONN for the peer of an unconnected socket, also after a reset or a
 * failed connect (like Linux); the local name stays. */
int lsock_name(const struct lsock *s, bool peer, uint32_t *addr, uint16_t *port);

/* Bytes that can be read now (FIONREAD / SIOCINQ). */
size_t lsock_nread(const struct lsock *s);

/* Record the application's fd for s (shown by stackctl; -1 until set). */
void lsock_set_fd(struct lsock *s, int fd);

/* What a collector (stackctl show connections) shows of the socket behind
 * a pcb, beside the pcb's own fields. */
struct lsock_view {
    int fd;            /* the application's fd, -1 if none */
    int backlog;       /* listener: listen()'s backlog */
    unsigned accept_q; /* listener: connections waiting for accept */
    size_t recv_q;     /* bytes received and not read */
};

/* Fill v for the socket that owns pcb and return true, given the pcb and
 * its callback_arg; false when no socket owns it (lwIP gives a SYN_RCVD
 * pcb its listener's arg, and a pcb the application closed has none).
 * Under the stack's lock; reads only. */
bool lsock_view_of(const void *arg, const void *pcb, struct lsock_view *v);

/* True once listen succeeded. */
bool lsock_is_listener(const struct lsock *s);

/* Number of sockets (listeners included) currently counted against
 * tcp_conn_count on st (connections refused because of it: stack_stats
 * conn_refused). An lsock counts from lsock_new (or from its arrival in an
 * accept queue) to lsock_close, whatever happened to its connection. */
unsigned lsock_count(const struct stack *st);

/* Send the ACKs lwIP is still delaying on connections whose received data
 * the application drained before the previous call and did not answer since
 * (a reply carries the ACK itself; one round of grace lets a client's next
 * request, written after the epoll_wait that follows its read, carry it). Without it, lwIP's delayed ACK waits for its
 * 250 ms timer and a peer using Nagle stalls that long on small writes;
 * Linux acknowledges at once in that case. Call once per poll round, before
 * stack_poll, under the stack lock (the context's poll round). */
void lsock_flush_acks(struct stack *st);

/* ---- run-to-wakeup: data through rings (sock/tcp_ring.c) ----
 *
 * With rings enabled on a stack (by the run-to-wakeup mode, before any
 * socket exists), each established connection gets a receive ring (the
 * stack thread publishes received pbufs, the application copies out of
 * them) and a send ring (the application copies its bytes in, the stack
 * thread moves them into lwIP in its round). Reads and writes that the
 * rings can answer take no lock; anything else (nothing to read, no room,
 * an error, EOF, a socket without rings) takes the locked path, where the
 * generic rules above decide. Readiness (lsock_events) follows the rings. */

/* Give connections of st rings from now on. Before any socket exists.
 * lsock_rings_enabled: whether st does (false for NULL). */
void lsock_rings_enable(struct stack *st);
bool lsock_rings_enabled(const struct stack *st);

/* Without the lock, any application thread: copy ring bytes into iov
 * (flags: MSG_PEEK; others ignored) / copy iov into the send ring.
 * Returns bytes (> 0), or -EAGAIN when the rings cannot answer: take the
 * lock and call the _locked variant, which gives the real answer (it also
 * serves a socket without rings, through lsock_recv / lsock_send). */
ssize_t lsock_ring_recv(struct lsock *s, const struct iovec *iov, int iovcnt, int flags);
ssize_t lsock_ring_send(struct lsock *s, const struct iovec *iov, int iovcnt);
ssize_t lsock_ring_recv_locked(struct lsock *s, const struct iovec *iov, int iovcnt, int flags);
ssize_t lsock_ring_send_locked(struct lsock *s, const struct iovec *iov, int iovcnt, int flags);

/* The stack's owner, each round: true if application calls left ring work
 * or another stack changed a socket's readiness (a listener's copy took a
 * connection for it): a racy hint, without the lock; under the lock, do
 * it: move written bytes into lwIP, free read pbufs and reopen windows,
 * tell writers of new room, tell the watchers of what changed from afar. */
bool lsock_pending(const struct stack *st);
void lsock_service(struct stack *st);

#endif
