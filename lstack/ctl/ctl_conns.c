/*
 * ctl_conns.c - page through a stack's TCP pcbs (see ctl_conns.h). lwIP
 * side: reads struct tcp_pcb, and the socket behind it through the sock
 * layer's lsock_view_of; never includes a DPDK header.
 *
 * A pcb's callback_arg is a socket only if it points back at the pcb
 * (lsock_view_of decides): lwIP gives a SYN_RCVD pcb its listener's
 * callback_arg, and a detached pcb (closed by the application, finishing
 * in lwIP) has none.
 */
#include <arpa/inet.h>
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

#include "lwip/priv/tcp_priv.h" /* TCP_SLOW_INTERVAL */
#include "lwip/tcp.h"

#include "ctl/ctl_conns.h"
#include "sock/lsock.h"
#include "stack/stack_priv.h"

/*
 * The pcb lists are globals of the stack's private lwIP copy, found with
 * dlsym on its handle (lwIP exports them; one lookup for the three
 * lists). A page: one walk of the lists keeping the `max`
 * smallest keys after the cursor in a bounded max-heap (O(n log max) per
 * page, no allocation), then the chosen pcbs are read, still under the
 * lock, in key order.
 */

enum { LIST_LISTEN, LIST_ACTIVE, LIST_TW, LIST_COUNT };

struct cand {
    uint64_t hi, lo;
    void *pcb;
};

static bool key_lt(const struct cand *a, const struct cand *b)
{
    return a->hi < b->hi || (a->hi == b->hi && a->lo < b->lo);
}

/* Max-heap on the key: the root is the largest kept candidate. */
static void sift_down(struct cand *h, int n, int i)
{
    for (;;) {
        int l = 2 * i + 1, r = l + 1, m = i;
        if (l < n && key_lt(&h[m], &h[l]))
            m = l;
        if (r < n && key_lt(&h[m], &h[r]))
            m = r;
        if (m == i)
            return;
        struct cand t = h[i];
        h[i] = h[m];
        h[m] = t;
        i = m;
    }
}

static void sift_up(struct cand *h, int i)
{
    while (i > 0) {
        int parent = (i - 1) / 2;
        if (!key_lt(&h[parent], &h[i]))
            return;
        struct cand t = h[i];
        h[i] = h[parent];
        h[parent] = t;
        i = parent;
    }
}

/* Keep c if it is among the max smallest so far. */
static void offer(struct cand *h, int *n, int max, const struct cand *c)
{
    if (*n < max) {
        h[*n] = *c;
        sift_up(h, (*n)++);
    } else if (key_lt(c, &h[0])) {
        h[0] = *c;
        sift_down(h, *n, 0);
    }
}

static uint32_t ip_u32(const ip_addr_t *a)
{
    return ip4_addr_get_u32(ip_2_ip4(a));
}

/* The sort key: list, local address, local port | remote address, port. */
static void make_key(struct cand *c, int list, uint32_t laddr, uint16_t lport, uint32_t raddr, uint16_t rport)
{
    c->hi = (uint64_t)list << 56 | (uint64_t)ntohl(laddr) << 16 | lport;
    c->lo = (uint64_t)ntohl(raddr) << 16 | rport;
}

static bool pass(const struct ctl_conn_filter *f, int state, uint16_t lport, uint16_t rport)
{
    if (f->state >= 0 && f->state != state)
        return false;
    return f->port < 0 || f->port == lport || f->port == rport;
}

static void *lwip_global(struct stack *s, const char *name)
{
    return dlsym(s->L.handle, name);
}

static void read_listener(const struct tcp_pcb_listen *lp, struct ctl_conn *c)
{
    c->listener = true;
    c->state = LISTEN;
    c->laddr = ip_u32(&lp->local_ip);
    c->lport = htons(lp->local_port);
    struct lsock_view v;
    if (!lsock_view_of(lp->callback_arg, lp, &v))
        return;
    c->fd = v.fd;
    c->backlog = v.backlog;
    c->accept_q = v.accept_q;
}

static void read_conn(const struct tcp_pcb *p, struct ctl_conn *c)
{
    c->state = p->state;
    c->laddr = ip_u32(&p->local_ip);
    c->lport = htons(p->local_port);
    c->raddr = ip_u32(&p->remote_ip);
    c->rport = htons(p->remote_port);
    struct lsock_view v;
    if (lsock_view_of(p->callback_arg, p, &v)) {
        c->fd = v.fd;
        c->recv_q = v.recv_q;
    }
    if (p->state == TIME_WAIT || p->state == CLOSED)
        return; /* nothing in flight; the sender fields are stale */
    /* Sequence arithmetic (O(1), no segment walk): snd_lbb is the next byte
     * the application's writes will take, lastack the oldest unacked. */
    uint32_t queued = p->snd_lbb - p->lastack;
    uint32_t sent = p->snd_nxt - p->lastack;
    c->unacked = sent < queued ? sent : queued;
    c->unsent = queued - c->unacked;
    c->snd_buf = p->snd_buf;
    c->snd_queuelen = p->snd_queuelen;
    c->cwnd = p->cwnd;
    c->ssthresh = p->ssthresh;
    c->snd_wnd = p->snd_wnd;
    c->rcv_wnd = p->rcv_wnd;
    c->mss = p->mss;
    c->rtt_ms = (uint32_t)(p->sa > 0 ? p->sa >> 3 : 0) * TCP_SLOW_INTERVAL;
    c->rttvar_ms = (uint32_t)(p->sv > 0 ? p->sv >> 2 : 0) * TCP_SLOW_INTERVAL;
    c->rto_ms = (uint32_t)(p->rto > 0 ? p->rto : 0) * TCP_SLOW_INTERVAL;
    c->rexmit = p->nrtx;
}

/* Offer every pcb of one list that passes f and lies after the cursor. */
static void walk(int list, void *head, const struct ctl_conn_filter *f, const struct ctl_cursor *cur,
                 struct cand *h, int *n, int max)
{
    struct cand c;
    if (list == LIST_LISTEN) {
        for (struct tcp_pcb_listen *lp = head; lp != NULL; lp = lp->next) {
            if (!pass(f, LISTEN, lp->local_port, 0))
                continue;
            make_key(&c, list, ip_u32(&lp->local_ip), lp->local_port, 0, 0);
            c.pcb = lp;
            if (!cur->started || key_lt(&(struct cand){cur->hi, cur->lo, NULL}, &c))
                offer(h, n, max, &c);
        }
        return;
    }
    for (struct tcp_pcb *p = head; p != NULL; p = p->next) {
        if (!pass(f, p->state, p->local_port, p->remote_port))
            continue;
        make_key(&c, list, ip_u32(&p->local_ip), p->local_port, ip_u32(&p->remote_ip), p->remote_port);
        c.pcb = p;
        if (!cur->started || key_lt(&(struct cand){cur->hi, cur->lo, NULL}, &c))
            offer(h, n, max, &c);
    }
}

static int cmp_cand(const void *a, const void *b)
{
    return key_lt(a, b) ? -1 : key_lt(b, a) ? 1 : 0;
}

int ctl_conns_page(struct stack *s, const struct ctl_conn_filter *f, struct ctl_cursor *cur,
                   struct ctl_conn *out, int max)
{
    static const char *const names[LIST_COUNT] = {"tcp_listen_pcbs", "tcp_active_pcbs", "tcp_tw_pcbs"};
    struct cand heap[max > 0 ? max : 1];
    int n = 0;
    int first = cur->started ? (int)(cur->hi >> 56) : 0;
    for (int list = first; list < LIST_COUNT && n < max; list++) {
        void **head = lwip_global(s, names[list]);
        if (head == NULL) {
            cur->done = true;
            return -1;
        }
        walk(list, *head, f, cur, heap, &n, max);
    }
    qsort(heap, (size_t)n, sizeof(heap[0]), cmp_cand);
    for (int i = 0; i < n; i++) {
        struct ctl_conn *c = &out[i];
        memset(c, 0, sizeof(*c));
        c->fd = -1;
        if ((int)(heap[i].hi >> 56) == LIST_LISTEN)
            read_listener(heap[i].pcb, c);
        else
            read_conn(heap[i].pcb, c);
    }
    if (n > 0) {
        cur->started = true;
        cur->hi = heap[n - 1].hi;
        cur->lo = heap[n - 1].lo;
    }
    if (n < max)
        cur->done = true;
    return n;
}
