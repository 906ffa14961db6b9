/*
 * tcp_sock.c - life cycle of an lsock over lwIP's raw TCP API: new, bind,
 * listen, accept, connect, close, and the lwIP callbacks that move a socket
 * between states (accept, connected, err). Data and readiness: tcp_io.c.
 *
 * Ownership: the POSIX layer owns an lsock from lsock_new / lsock_accept to
 * lsock_close; a listener owns the lsocks in its accept queue. A pcb refers
 * to its lsock (tcp_arg) until lsock_close detaches it, or until lwIP's err
 * callback, after which lwIP has freed the pcb and s->pcb is NULL.
 * Design: docs/design.md#the-connection-limit-counts-sockets-and-refuses-at-syn
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdlib.h>

#include "sock/lsock_lwip.h"

/*
 * tcp_conn_count: every lsock counts from creation (lsock_new, or lwIP's
 * accept callback) to lsock_close, listeners and unaccepted connections
 * included: each may hold received buffers, and the mbuf pool is sized as
 * tcp_conn_count x mbuf_count_per_conn. Past the limit lsock_new fails with
 * -ENOBUFS, and lwIP answers a SYN to a listener with a RST (the stack's
 * sock_room callback, lstack/stack/lwip/port/tcp_syn.c, counted as
 * refused); a half-open connection takes room too, so a connection reaches
 * on_accept without room only in a race (a socket opened while it was
 * half-open, or two listeners' half-open ones): it is reset there, counted
 * as refused as well.
 */

/* ---- small helpers ---- */

static uint32_t ip4_u32(const ip_addr_t *a)
{
    return ip4_addr_get_u32(ip_2_ip4(a));
}

static uint32_t host_addr(struct stack *st)
{
    return ip4_addr_get_u32(netif_ip4_addr(stack_netif(st)));
}

void lsock_save_addrs(struct lsock *s, const struct tcp_pcb *pcb)
{
    s->laddr = ip4_u32(&pcb->local_ip);
    s->lport = htons(pcb->local_port);
    s->raddr = ip4_u32(&pcb->remote_ip);
    s->rport = htons(pcb->remote_port);
}

static void on_err(void *arg, err_t err);

void lsock_attach(struct lsock *s, struct tcp_pcb *pcb)
{
    const struct lwip_api *L = lsock_lwip(s);
    L->tcp_arg(pcb, s);
    L->tcp_recv(pcb, lsock_on_recv);
    L->tcp_sent(pcb, lsock_on_sent);
    L->tcp_err(pcb, on_err);
    s->rcv_owed = 0; /* credit belongs to the pcb it was owed to */
}

void lsock_detach(const struct lwip_api *L, struct tcp_pcb *pcb)
{
    L->tcp_arg(pcb, NULL);
    L->tcp_recv(pcb, NULL);
    L->tcp_sent(pcb, NULL);
    L->tcp_err(pcb, NULL);
}

static void opts_default(struct lsock_opts *o)
{
    *o = (struct lsock_opts){
        .keep_idle = LSOCK_KEEPIDLE_DEFAULT,
        .keep_intvl = LSOCK_KEEPINTVL_DEFAULT,
        .keep_cnt = LSOCK_KEEPCNT_DEFAULT,
    };
}

/* Create s's pcb (state CLOSED), wired to s, with s's options. */
static int make_pcb(struct lsock *s)
{
    int saved = errno; /* lwIP's malloc may set it; lsock.h promises to keep it */
    struct tcp_pcb *pcb = lsock_lwip(s)->tcp_new_ip_type(IPADDR_TYPE_V4);
    errno = saved;
    if (pcb == NULL)
        return -ENOMEM;
    s->pcb = pcb;
    lsock_attach(s, pcb);
    lsock_pcb_apply_opts(s);
    return 0;
}

/* Free a pcb in lwIP state CLOSED (tcp_close frees it at once) and go back
 * to LS_NEW. */
static void drop_closed_pcb(struct lsock *s)
{
    const struct lwip_api *L = lsock_lwip(s);
    lsock_detach(L, s->pcb);
    L->tcp_close(s->pcb);
    s->pcb = NULL;
    s->state = LS_NEW;
    s->laddr = 0;
    s->lport = 0;
}

/* The memory of an lsock and of its rings. */
static void sock_mem_free(struct lsock *s)
{
    lsock_ring_free(s->ring);
    free(s);
}

/* Release an lsock whose pcb is already gone or detached: what it holds of
 * the stack now; a held one (lsock_hold) stays as a dead socket until its
 * last release. */
static void lsock_free(struct lsock *s)
{
    lsock_ack_forget(s);
    if (s->ring != NULL)
        lsock_ring_drop(s); /* its pbufs, and off the stack thread's list */
    lsock_rx_drop(s);
    s->ss->count--;
    s->closed = true;
    s->state = LS_DEAD;
    if (s->rep_primary != NULL) { /* a listener's copy: no more connections for it */
        lsock_release(s->rep_primary);
        s->rep_primary = NULL;
    }
    lsock_release(s); /* the owner's reference */
}

void lsock_hold(struct lsock *s)
{
    __atomic_add_fetch(&s->refs, 1, __ATOMIC_RELAXED);
}

void lsock_release(struct lsock *s)
{
    if (__atomic_sub_fetch(&s->refs, 1, __ATOMIC_ACQ_REL) == 0)
        sock_mem_free(s);
}

/* Reset an unaccepted connection (its listener is closing). */
static void abort_child(struct lsock *c)
{
    if (c->pcb != NULL) {
        const struct lwip_api *L = lsock_lwip(c);
        lsock_detach(L, c->pcb);
        c->ss->aborted++;
        L->tcp_abort(c->pcb);
        c->pcb = NULL;
    }
    lsock_free(c);
}

/* ---- lwIP callbacks ---- */

/* The connection ended inside lwIP; the pcb is freed already. */
static void on_err(void *arg, err_t err)
{
    struct lsock *s = arg;
    if (s == NULL)
        return;
    int e;
    if (err == ERR_CLSD)
        e = 0; /* orderly: both FINs exchanged while we still held the pcb */
    else if (err == ERR_RST)
        e = s->state == LS_CONNECTING ? ECONNREFUSED : s->peer_fin ? EPIPE : ECONNRESET;
    else if (err == ERR_ABRT)
        e = ETIMEDOUT; /* lwIP's timers: SYN / retransmission / keepalive gave up */
    else
        e = -lsock_errno(err);
    lsock_connect_timer_stop(s);
    if (s->ring != NULL)
        __atomic_store_n(&s->ring->tx_open, 0, __ATOMIC_RELEASE); /* writes see the error */
    if (err == ERR_RST)
        s->ss->reset++; /* stackctl show stats */
    s->pcb = NULL;
    s->state = LS_DEAD;
    s->failed = e != 0;
    s->so_error = e;
    lsock_notify(s, true);
}

static err_t on_connected(void *arg, struct tcp_pcb *pcb, err_t err)
{
    struct lsock *s = arg;
    (void)err; /* always ERR_OK in lwIP 2.1 */
    if (s == NULL)
        return ERR_OK;
    lsock_connect_timer_connected(s, pcb);
    s->state = LS_CONNECTED;
    s->ever_connected = true;
    s->ss->opened++;
    lsock_save_addrs(s, pcb);
    lsock_pcb_apply_opts(s); /* SO_RCVBUF: the window, now that it is established */
    if (s->ss->rings)
        lsock_ring_attach(s); /* run-to-wakeup: data through the rings from now on */
    lsock_notify(s, true);
    return ERR_OK;
}

/* A connection to listener arg is established (lwIP calls this on the
 * handshake's last ACK). Returning ERR_ABRT after tcp_abort refuses it. */
static err_t on_accept(void *arg, struct tcp_pcb *pcb, err_t err)
{
    struct lsock *ls = arg;
    if (pcb == NULL || err != ERR_OK || ls == NULL)
        return ERR_VAL; /* lwIP aborts pcb */
    struct lsocks *ss = ls->ss;
    struct lsock *c = NULL;
    if (ss->count < ss->max)
        c = calloc(1, sizeof(*c));
    else
        ss->refused++;
    if (c == NULL) {
        ss->L->tcp_abort(pcb); /* no err callback: a new pcb has none yet */
        return ERR_ABRT;
    }
    ss->count++;
    ss->accepted++;
    c->refs = 1;
    c->ss = ss;
    c->st = ss->st;
    c->fd = -1;
    c->o = ls->o; /* Linux clones the listener's options into the child */
    c->pcb = pcb;
    c->state = LS_CONNECTED;
    c->ever_connected = true;
    lsock_attach(c, pcb);
    lsock_pcb_apply_opts(c);
    lsock_save_addrs(c, pcb);
    if (ss->rings)
        lsock_ring_attach(c); /* run-to-wakeup: data through the rings */
    c->ev_last = lsock_events(c);
    if (ls->rep_primary != NULL) {
        /* A copy of a listener of another stack (tcp_listen_copy.c): the
         * connection goes to that listener's queue, from afar. */
        lsock_listen_copy_hand(ls->rep_primary, c);
        return ERR_OK;
    }
    if (ls->acc_tail != NULL)
        ls->acc_tail->acc_next = c;
    else
        ls->acc_head = c;
    ls->acc_tail = c;
    lsock_notify(ls, true);
    return ERR_OK;
}

/* ---- the sockets of one stack ---- */

static uint32_t socks_room(void *upper)
{
    const struct lsocks *ss = upper;
    return ss->count < ss->max ? ss->max - ss->count : 0;
}

static bool socks_owed(const void *upper)
{
    const struct lsocks *ss = upper;
    return __atomic_load_n(&ss->ack_owed, __ATOMIC_RELAXED) != NULL;
}

static void socks_stats(const void *upper, struct stack_stats *st)
{
    const struct lsocks *ss = upper;
    st->sockets = ss->count;
    st->conn_opened = ss->opened;
    st->conn_accepted = ss->accepted;
    st->conn_refused += ss->refused;
    st->conn_reset = ss->reset;
    st->conn_aborted = ss->aborted;
}

static const struct stack_upper_ops socks_ops = {
    .room = socks_room,
    .owed = socks_owed,
    .stats = socks_stats,
    .free = free,
};

struct lsocks *lsocks_get(struct stack *st)
{
    struct lsocks *ss = lsocks_of(st);
    if (ss != NULL)
        return ss;
    int saved = errno;
    ss = calloc(1, sizeof(*ss));
    errno = saved;
    if (ss == NULL)
        return NULL;
    ss->st = st;
    ss->L = stack_lwip(st);
    ss->tcp = *stack_tcp_limits(st);
    ss->max = stack_conn_limit(st);
    ss->syn_retries = stack_syn_retries(st);
    ss->syn_linear_timeouts = stack_syn_linear_timeouts(st);
    stack_set_upper(st, ss, &socks_ops);
    return ss;
}

int lsock_stack_open(struct stack *st, struct stack_loop *loop)
{
    struct lsocks *ss = lsocks_get(st);
    if (ss == NULL)
        return -ENOMEM;
    ss->loop = loop;
    return 0;
}

struct stack_loop *lsock_loop(const struct lsock *s)
{
    return s->ss->loop;
}

uint64_t lsock_changes(const struct stack *st)
{
    const struct lsocks *ss = lsocks_of(st);
    return ss != NULL ? ss->changes : 0;
}

/* ---- API ---- */

unsigned lsock_count(const struct stack *st)
{
    const struct lsocks *ss = lsocks_of(st);
    return ss != NULL ? ss->count : 0;
}

struct stack *lsock_stack(const struct lsock *s)
{
    return s->st;
}

struct lsock_watcher **lsock_watchers(struct lsock *s)
{
    return &s->watchers;
}

bool lsock_view_of(const void *arg, const void *pcb, struct lsock_view *v)
{
    const struct lsock *s = arg;
    if (s == NULL || (const void *)s->pcb != pcb)
        return false;
    *v = (struct lsock_view){.fd = s->fd, .backlog = s->backlog, .recv_q = s->state == LS_LISTEN ? 0 : lsock_nread(s)};
    for (const struct lsock *q = s->acc_head; q != NULL; q = q->acc_next)
        v->accept_q++;
    return true;
}

void lsock_set_fd(struct lsock *s, int fd)
{
    s->fd = fd;
}

bool lsock_is_listener(const struct lsock *s)
{
    return s->state == LS_LISTEN;
}

int lsock_new(struct stack *st, struct lsock **out)
{
    struct lsocks *ss = lsocks_get(st);
    if (ss == NULL)
        return -ENOMEM;
    if (ss->count >= ss->max)
        return -ENOBUFS;
    int saved = errno;
    struct lsock *s = calloc(1, sizeof(*s));
    errno = saved;
    if (s == NULL)
        return -ENOMEM;
    s->refs = 1;
    s->ss = ss;
    s->st = st;
    s->state = LS_NEW;
    s->fd = -1;
    opts_default(&s->o);
    s->ev_last = lsock_events(s);
    ss->count++;
    *out = s;
    return 0;
}

int lsock_bind(struct lsock *s, uint32_t addr, uint16_t port)
{
    if (s->state != LS_NEW)
        return -EINVAL;
    if (addr != htonl(INADDR_ANY) && addr != host_addr(s->st))
        return -EADDRNOTAVAIL;
    int rc = make_pcb(s);
    if (rc != 0)
        return rc;
    ip_addr_t ip = IPADDR4_INIT(addr);
    err_t e = lsock_lwip(s)->tcp_bind(s->pcb, &ip, ntohs(port));
    if (e != ERR_OK) {
        drop_closed_pcb(s);
        return e == ERR_BUF ? -EADDRINUSE : lsock_errno(e); /* ERR_BUF: no ephemeral port left */
    }
    s->state = LS_BOUND;
    lsock_save_addrs(s, s->pcb);
    return 0;
}

int lsock_unbind(struct lsock *s)
{
    if (s->state != LS_BOUND)
        return -EINVAL;
    drop_closed_pcb(s);
    return 0;
}

/* The SYN queue a listen() backlog gives, as Linux sizes it: at most
 * somaxconn (a negative backlog, as unsigned, gets that too), at least 1. */
static uint16_t syn_queue_len(int backlog)
{
    unsigned b = (unsigned)backlog;
    if (b > LSOCK_SOMAXCONN)
        b = LSOCK_SOMAXCONN;
    return (uint16_t)(b != 0 ? b : 1);
}

int lsock_listen(struct lsock *s, int backlog)
{
    if (s->state == LS_LISTEN) {
        s->backlog = backlog; /* Linux lets listen() change the backlog */
        ((struct tcp_pcb_listen *)s->pcb)->backlog = syn_queue_len(backlog);
        return 0;
    }
    if (s->state == LS_NEW) {
        int rc = lsock_bind(s, htonl(INADDR_ANY), 0);
        if (rc != 0)
            return rc;
    }
    if (s->state != LS_BOUND)
        return -EINVAL;
    /* A shared port (ltran) must send this listener's SYNs here: claimed
     * first, so that a refusal (another process listens there) leaves the
     * socket bound, as a failed listen does. */
    int claim = stack_claim_listen(s->st, htons(s->pcb->local_port), true);
    if (claim != 0)
        return claim;
    err_t e = ERR_OK;
    int saved = errno;
    /* lwIP's argument is 8-bit; the queue length is set below (patch 0004
     * made the field 16-bit). */
    struct tcp_pcb *lpcb = lsock_lwip(s)->tcp_listen_with_backlog_and_err(s->pcb, 0xff, &e);
    errno = saved;
    if (lpcb == NULL) {
        stack_claim_listen(s->st, htons(s->pcb->local_port), false);
        return lsock_errno(e != ERR_OK ? e : ERR_MEM); /* s->pcb is still the bound pcb */
    }
    /* lwIP freed the old pcb and copied arg and so_options to lpcb. */
    s->pcb = lpcb;
    s->state = LS_LISTEN;
    s->backlog = backlog;
    ((struct tcp_pcb_listen *)lpcb)->backlog = syn_queue_len(backlog);
    lsock_lwip(s)->tcp_arg(lpcb, s);
    lsock_lwip(s)->tcp_accept(lpcb, on_accept);
    lsock_notify(s, false);
    return 0;
}

int lsock_accept(struct lsock *s, struct lsock **out)
{
    if (s->state != LS_LISTEN)
        return -EINVAL;
    if (s->acc_head == NULL)
        lsock_incoming_take(s); /* what its copies on other stacks took */
    struct lsock *c = s->acc_head;
    if (c == NULL)
        return -EAGAIN;
    s->acc_head = c->acc_next;
    if (s->acc_head == NULL)
        s->acc_tail = NULL;
    c->acc_next = NULL;
    *out = c;
    lsock_notify(s, false);
    return 0;
}

/* Addresses lwIP must never send to: they would go through its loopback
 * path (which needs the tcpip thread lstack does not run) or nowhere. The
 * POSIX layer sends 0.0.0.0, 127/8 and the stack's own address to the
 * kernel before they get here. */
static bool dest_ok(const struct lsock *s, uint32_t addr)
{
    uint32_t h = ntohl(addr);
    return h != INADDR_ANY && (h >> 24) != 127 && h != INADDR_BROADCAST && (h >> 28) != 0xe &&
           addr != host_addr(s->st);
}

/* A connect attempt that failed asynchronously: report it once, like Linux
 * (the pending error, else ECONNABORTED), and make s connectable again. */
static int connect_failed(struct lsock *s)
{
    int e = s->so_error != 0 ? s->so_error : ECONNABORTED;
    s->state = LS_NEW;
    s->so_error = 0;
    s->peer_fin = s->shut_rd = s->shut_wr = false;
    s->failed = false;
    s->connect_pending = false;
    s->laddr = s->raddr = 0;
    s->lport = s->rport = 0;
    lsock_notify(s, false);
    return -e;
}

int lsock_connect(struct lsock *s, uint32_t addr, uint16_t port)
{
    switch (s->state) {
    case LS_CONNECTING:
        return -EALREADY;
    case LS_CONNECTED:
        if (s->connect_pending) { /* the non-blocking connect completed: say so once */
            s->connect_pending = false;
            return 0;
        }
        return -EISCONN;
    case LS_LISTEN:
        return -EISCONN;
    case LS_DEAD:
        return s->ever_connected ? -EISCONN : connect_failed(s);
    case LS_NEW:
    case LS_BOUND:
        break;
    }
    if (!dest_ok(s, addr))
        return -ENETUNREACH;
    bool created = false;
    if (s->state == LS_NEW) {
        int rc = make_pcb(s);
        if (rc != 0)
            return rc;
        created = true;
    }
    if (created) {
        /* Several stacks on an RSS port: a local port whose replies reach
         * this stack's queue (stack_pick_port), else lwIP's own choice. A
         * port some other connection holds is skipped (lwIP's tcp_bind
         * checks, as its own choice does). */
        const ip_addr_t any = IPADDR4_INIT(0); /* lwIP's own ip_addr_any is in each stack's copy */
        for (int tries = 0; tries < 16; tries++) {
            uint16_t lp = stack_pick_port(s->st, addr, port);
            if (lp == 0 || lsock_lwip(s)->tcp_bind(s->pcb, &any, lp) == ERR_OK)
                break;
        }
    }
    ip_addr_t ip = IPADDR4_INIT(addr);
    err_t e = lsock_lwip(s)->tcp_connect(s->pcb, &ip, ntohs(port), on_connected);
    if (e != ERR_OK) {
        if (created)
            drop_closed_pcb(s);
        return e == ERR_BUF ? -EADDRNOTAVAIL : lsock_errno(e); /* ERR_BUF: no local port */
    }
    s->state = LS_CONNECTING;
    s->connect_pending = true;
    lsock_save_addrs(s, s->pcb);
    lsock_connect_timer_start(s);
    lsock_notify(s, false);
    return -EINPROGRESS;
}

void lsock_close(struct lsock *s)
{
    if (s == NULL)
        return;
    const struct lwip_api *L = lsock_lwip(s);
    /* A ring socket: its written bytes into lwIP, its read ones credited. */
    size_t unread = s->ring != NULL ? lsock_ring_close(s) : s->rx_bytes;
    lsock_rcv_settle(s); /* a whole window: tcp_close sends a FIN, not a RST */
    struct tcp_pcb *pcb = s->pcb;
    s->pcb = NULL;
    switch (s->state) {
    case LS_LISTEN: {
        stack_claim_listen(s->st, htons(pcb->local_port), false);
        /* Its unaccepted connections are reset; those of another stack
         * (its copies') and its copies are left to lsock_close_next, each
         * to be closed under its own stack's lock. */
        struct lsock *c = s->acc_head, *elsewhere = NULL, *tail = NULL;
        while (c != NULL) {
            struct lsock *next = c->acc_next;
            c->acc_next = NULL;
            if (c->ss == s->ss) {
                abort_child(c);
            } else {
                if (tail != NULL)
                    tail->acc_next = c;
                else
                    elsewhere = c;
                tail = c;
            }
            c = next;
        }
        s->acc_head = elsewhere;
        s->acc_tail = tail;
        L->tcp_arg(pcb, NULL);
        L->tcp_close(pcb); /* a listen pcb is freed at once */
        break;
    }
    case LS_BOUND:
    case LS_CONNECTING:
        lsock_connect_timer_stop(s);
        lsock_detach(L, pcb);
        L->tcp_close(pcb); /* CLOSED / SYN_SENT: freed at once, nothing sent */
        break;
    case LS_CONNECTED:
        if (pcb == NULL)
            break;
        lsock_detach(L, pcb);
        if (unread > 0 || (s->o.linger_on && s->o.linger_s == 0)) {
            s->ss->aborted++;
            L->tcp_abort(pcb); /* RST, like Linux */
        } else if (L->tcp_close(pcb) != ERR_OK) {
            s->ss->aborted++;
            L->tcp_abort(pcb); /* no memory for the FIN */
        }
        break;
    case LS_NEW:
    case LS_DEAD:
        break;
    }
    lsock_free(s);
}

int lsock_name(const struct lsock *s, bool peer, uint32_t *addr, uint16_t *port)
{
    if (!peer) {
        *addr = s->laddr;
        *port = s->lport;
        return 0;
    }
    bool has_peer = s->state == LS_CONNECTED || (s->state == LS_DEAD && s->ever_connected && !s->failed);
    if (!has_peer)
        return -ENOTCONN;
    *addr = s->raddr;
    *port = s->rport;
    return 0;
}
