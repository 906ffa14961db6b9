/*
 * stack_conns.c - a stack's TCP pcbs as plain values (stack_tcp_walk,
 * stack.h): what the control socket shows of each (ctl/ctl_conns.c pages
 * and sorts them), read under the stack's lock from the heads of its
 * private lwIP's lists (lstack_lwip_tcp_list). lwIP side: reads struct
 * tcp_pcb; no lwIP type leaves this file.
 */
#include <string.h>

#include "stack/stack_lwip.h"
#include "lwip/tcp.h"

#include "stack/stack_priv.h"

static uint32_t ip_u32(const ip_addr_t *a)
{
    return ip4_addr_get_u32(ip_2_ip4(a));
}

static void view_conn(const struct tcp_pcb *p, int list, struct stack_tcp_view *v)
{
    memset(v, 0, sizeof(*v));
    v->list = list;
    v->state = p->state;
    v->laddr = ip_u32(&p->local_ip);
    v->lport = p->local_port;
    v->raddr = ip_u32(&p->remote_ip);
    v->rport = p->remote_port;
    v->pcb = p;
    v->arg = p->callback_arg;
    if (p->state == TIME_WAIT || p->state == CLOSED)
        return; /* nothing in flight; the sender fields are stale */
    /* Sequence arithmetic (O(1), no segment walk): snd_lbb is the next byte
     * the application's writes will take, lastack the oldest unacked. */
    uint32_t queued = p->snd_lbb - p->lastack;
    uint32_t sent = p->snd_nxt - p->lastack;
    v->unacked = sent < queued ? sent : queued;
    v->unsent = queued - v->unacked;
    v->snd_buf = p->snd_buf;
    v->snd_queuelen = p->snd_queuelen;
    v->cwnd = p->cwnd;
    v->ssthresh = p->ssthresh;
    v->snd_wnd = p->snd_wnd;
    v->rcv_wnd = p->rcv_wnd;
    v->mss = p->mss;
    v->rtt_ms = (uint32_t)(p->sa > 0 ? p->sa >> 3 : 0) * STACK_TCP_TICK_MS;
    v->rttvar_ms = (uint32_t)(p->sv > 0 ? p->sv >> 2 : 0) * STACK_TCP_TICK_MS;
    v->rto_ms = (uint32_t)(p->rto > 0 ? p->rto : 0) * STACK_TCP_TICK_MS;
    v->rexmit = p->nrtx;
}

void stack_tcp_walk(struct stack *s, stack_tcp_fn fn, void *ctx)
{
    struct stack_tcp_view v;
    for (const struct tcp_pcb_listen *lp = s->L.lstack_lwip_tcp_list(LSTACK_TCP_LIST_LISTEN); lp != NULL;
         lp = lp->next) {
        memset(&v, 0, sizeof(v));
        v.list = STACK_TCP_LISTEN;
        v.state = LISTEN;
        v.laddr = ip_u32(&lp->local_ip);
        v.lport = lp->local_port;
        v.pcb = lp;
        v.arg = lp->callback_arg;
        fn(ctx, &v);
    }
    static const int lists[] = {LSTACK_TCP_LIST_ACTIVE, LSTACK_TCP_LIST_TW};
    for (int i = 0; i < 2; i++) {
        for (const struct tcp_pcb *p = s->L.lstack_lwip_tcp_list(lists[i]); p != NULL; p = p->next) {
            view_conn(p, i == 0 ? STACK_TCP_ACTIVE : STACK_TCP_TIME_WAIT, &v);
            fn(ctx, &v);
        }
    }
}
