/*
 * ctl_conns.c - page through a stack's TCP pcbs (see ctl_conns.h), over
 * the walk the stack layer offers (stack_tcp_walk: each pcb as plain
 * values) and the socket behind each, through the sock layer's
 * lsock_view_of. Neither an lwIP nor a DPDK type is seen here.
 *
 * A pcb's callback_arg is a socket only if it points back at the pcb
 * (lsock_view_of decides): lwIP gives a SYN_RCVD pcb its listener's
 * callback_arg, and a detached pcb (closed by the application, finishing
 * in lwIP) has none.
 */
#include <arpa/inet.h>
#include <stdlib.h>
#include <string.h>

#include "ctl/ctl_conns.h"
#include "sock/lsock.h"
#include "stack/stack.h"

/*
 * A page: one walk keeping the `max` smallest keys after the cursor in a
 * bounded max-heap (O(n log max) per page, no allocation), then sorted,
 * all under the stack's lock.
 */

struct cand {
    uint64_t hi, lo;
    struct stack_tcp_view v;
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

/* The sort key: list, local address, local port | remote address, port. */
static void make_key(struct cand *c)
{
    const struct stack_tcp_view *v = &c->v;
    c->hi = (uint64_t)v->list << 56 | (uint64_t)ntohl(v->laddr) << 16 | v->lport;
    c->lo = (uint64_t)ntohl(v->raddr) << 16 | v->rport;
}

static bool pass(const struct ctl_conn_filter *f, const struct stack_tcp_view *v)
{
    if (f->state >= 0 && f->state != v->state)
        return false;
    return f->port < 0 || f->port == v->lport || (v->list != STACK_TCP_LISTEN && f->port == v->rport);
}

/* One page's walk: the filter, the cursor, the heap. */
struct walk {
    const struct ctl_conn_filter *f;
    const struct ctl_cursor *cur;
    struct cand *h;
    int n, max;
};

static void offer_view(void *ctx, const struct stack_tcp_view *v)
{
    struct walk *w = ctx;
    if (!pass(w->f, v))
        return;
    struct cand c = {.v = *v};
    make_key(&c);
    if (!w->cur->started || key_lt(&(struct cand){.hi = w->cur->hi, .lo = w->cur->lo}, &c))
        offer(w->h, &w->n, w->max, &c);
}

static void read_view(const struct stack_tcp_view *v, struct ctl_conn *c)
{
    memset(c, 0, sizeof(*c));
    c->pcb = *v;
    c->pcb.pcb = c->pcb.arg = NULL; /* no pointer leaves the lock */
    c->listener = v->list == STACK_TCP_LISTEN;
    c->fd = -1;
    struct lsock_view sv;
    if (!lsock_view_of(v->arg, v->pcb, &sv))
        return;
    c->fd = sv.fd;
    if (c->listener) {
        c->backlog = sv.backlog;
        c->accept_q = sv.accept_q;
    } else {
        c->recv_q = sv.recv_q;
    }
}

static int cmp_cand(const void *a, const void *b)
{
    return key_lt(a, b) ? -1 : key_lt(b, a) ? 1 : 0;
}

int ctl_conns_page(struct stack *s, const struct ctl_conn_filter *f, struct ctl_cursor *cur,
                   struct ctl_conn *out, int max)
{
    struct cand heap[max > 0 ? max : 1];
    struct walk w = {.f = f, .cur = cur, .h = heap, .max = max};
    stack_tcp_walk(s, offer_view, &w);
    int n = w.n;
    qsort(heap, (size_t)n, sizeof(heap[0]), cmp_cand);
    for (int i = 0; i < n; i++)
        read_view(&heap[i].v, &out[i]);
    if (n > 0) {
        cur->started = true;
        cur->hi = heap[n - 1].hi;
        cur->lo = heap[n - 1].lo;
    }
    if (n < max)
        cur->done = true;
    return n;
}
