/*
 * tmr_bed.c - two lwIP copies joined by a packet queue, ticked by the test
 * (tmr_bed.h).
 */
#include "tmr_bed.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static err_t out_fn(struct netif *nif, struct pbuf *p, const ip4_addr_t *dst)
{
    (void)dst;
    struct tmr_copy *c = nif->state;
    struct tmr_bed *t = c->bed;
    if (t->qn < TMR_BED_QMAX && p->tot_len <= sizeof(t->q[0].b)) {
        struct tmr_pkt *k = &t->q[t->qn++];
        k->to = c == &t->a ? 1 : 0;
        k->len = c->L.pbuf_copy_partial(p, k->b, p->tot_len, 0);
    }
    return ERR_OK;
}

static err_t nif_init(struct netif *nif)
{
    nif->mtu = 1500;
    nif->output = out_fn;
    nif->flags = NETIF_FLAG_UP | NETIF_FLAG_LINK_UP;
    /* lstack fills the sums in its netif output, which this one is not:
       nothing is summed, nothing is checked */
    NETIF_SET_CHECKSUM_CTRL(nif, 0);
    return ERR_OK;
}

static int copy_open(struct tmr_bed *t, struct tmr_copy *c, const char *lib, const char *tag, uint8_t last)
{
    char err[256];
    c->bed = t;
    if (lwip_load(&c->L, lib, tag, err, sizeof(err)) != 0) {
        printf("Bail out! lwip_load %s: %s\n", lib != NULL ? lib : "(this build's)", err);
        return -1;
    }
    struct lstack_lwip_conf cf = {.rcv_wnd = 65535, .snd_buf = 65536, .mss = 1460, .mem_limit = 8u << 20,
                                  .pcb_hint = 10};
    struct lstack_lwip_limits lim;
    c->L.lstack_lwip_configure(&cf, &lim);
    c->L.lwip_init();
    ip4_addr_t addr, mask, gw;
    IP4_ADDR(&addr, 198, 18, 0, last);
    IP4_ADDR(&mask, 255, 255, 255, 0);
    IP4_ADDR(&gw, 198, 18, 0, 254);
    c->L.netif_add(&c->nif, &addr, &mask, &gw, c, nif_init, c->L.ip4_input);
    c->L.netif_set_default(&c->nif);
    c->ticks = dlsym(c->L.handle, "tcp_ticks");
    c->slowtmr = (void (*)(void))dlsym(c->L.handle, "tcp_slowtmr");
    c->fasttmr = (void (*)(void))dlsym(c->L.handle, "tcp_fasttmr");
    c->active = dlsym(c->L.handle, "tcp_active_pcbs");
    c->tw = dlsym(c->L.handle, "tcp_tw_pcbs");
    if (c->ticks == NULL || c->slowtmr == NULL || c->fasttmr == NULL || c->active == NULL || c->tw == NULL) {
        printf("Bail out! %s: lwIP's timer symbols not found\n", tag);
        return -1;
    }
    return 0;
}

int tmr_bed_open(struct tmr_bed *t, const char *lib, const char *tag)
{
    char ta[64], tb[64];
    memset(t, 0, sizeof(*t));
    t->err_tick = -1;
    snprintf(ta, sizeof(ta), "%s-a", tag);
    snprintf(tb, sizeof(tb), "%s-b", tag);
    if (copy_open(t, &t->a, lib, ta, 2) != 0 || copy_open(t, &t->b, lib, tb, 1) != 0)
        return -1;
    return 0;
}

void tmr_bed_deliver(struct tmr_bed *t, const struct tmr_pkt *k)
{
    struct tmr_copy *c = k->to == 1 ? &t->b : &t->a;
    struct pbuf *p = c->L.pbuf_alloc(PBUF_RAW, k->len, PBUF_RAM);
    if (p == NULL)
        return;
    memcpy(p->payload, k->b, k->len);
    c->L.ip4_input(p, &c->nif);
}

void tmr_bed_pump(struct tmr_bed *t)
{
    static struct tmr_pkt copyq[TMR_BED_QMAX];
    for (int r = 0; r < 20 && t->qn > 0; r++) {
        int n = t->qn;
        memcpy(copyq, t->q, sizeof(t->q[0]) * (size_t)n);
        t->qn = 0;
        for (int i = 0; i < n; i++)
            tmr_bed_deliver(t, &copyq[i]);
    }
}

void tmr_bed_seg(const struct tmr_pkt *k, unsigned *plen, unsigned *flags)
{
    unsigned ihl = (k->b[0] & 0xf) * 4u;
    unsigned tot = ((unsigned)k->b[2] << 8) | k->b[3];
    unsigned thl = (k->b[ihl + 12] >> 4) * 4u;
    *plen = tot - ihl - thl;
    *flags = k->b[ihl + 13];
}

static err_t on_recv(void *arg, struct tcp_pcb *pcb, struct pbuf *p, err_t e)
{
    struct tmr_bed *t = arg;
    (void)e;
    if (p == NULL) {
        if (t->close_on_fin)
            t->b.L.tcp_close(pcb);
        return ERR_OK;
    }
    if (!t->hold_recv)
        t->b.L.tcp_recved(pcb, p->tot_len);
    t->b.L.pbuf_free(p);
    return ERR_OK;
}

static err_t on_accept(void *arg, struct tcp_pcb *pcb, err_t e)
{
    struct tmr_bed *t = arg;
    (void)e;
    t->accepted = pcb;
    t->b.L.tcp_recv(pcb, on_recv);
    return ERR_OK;
}

static err_t on_connected(void *arg, struct tcp_pcb *pcb, err_t e)
{
    (void)arg;
    (void)pcb;
    (void)e;
    return ERR_OK;
}

struct tcp_pcb *tmr_bed_listen(struct tmr_bed *t, u16_t port)
{
    struct tcp_pcb *l = t->b.L.tcp_new_ip_type(IPADDR_TYPE_V4);
    ip_addr_t any;
    IP_ADDR4(&any, 0, 0, 0, 0);
    if (l == NULL || t->b.L.tcp_bind(l, &any, port) != ERR_OK)
        return NULL;
    err_t le;
    l = t->b.L.tcp_listen_with_backlog_and_err(l, 4, &le);
    if (l == NULL)
        return NULL;
    t->b.L.tcp_arg(l, t);
    t->b.L.tcp_accept(l, on_accept);
    t->accepted = NULL;
    return l;
}

void tmr_bed_connect(struct tmr_bed *t, struct tcp_pcb **pa, struct tcp_pcb **pb, u16_t port)
{
    ip_addr_t dst;
    IP_ADDR4(&dst, 198, 18, 0, 1);
    tmr_bed_listen(t, port);
    struct tcp_pcb *c = t->a.L.tcp_new_ip_type(IPADDR_TYPE_V4);
    t->a.L.tcp_arg(c, t);
    err_t ce = t->a.L.tcp_connect(c, &dst, port, on_connected);
    if (getenv("TMRQ_DEBUG"))
        fprintf(stderr, "connect %d, queued %d\n", ce, t->qn);
    tmr_bed_pump(t);
    *pa = c->state == ESTABLISHED ? c : NULL;
    *pb = t->accepted;
}

static void on_err(void *arg, err_t e)
{
    struct tmr_bed *t = arg;
    (void)e;
    t->err_tick = (int)*t->err_copy->ticks;
}

void tmr_bed_watch(struct tmr_bed *t, struct tmr_copy *c, struct tcp_pcb *pcb)
{
    t->err_copy = c;
    t->err_tick = -1;
    c->L.tcp_arg(pcb, t);
    c->L.tcp_err(pcb, on_err);
}

int tmr_bed_tick(struct tmr_copy *c, struct tcp_pcb *pcb)
{
    u8_t before = pcb->last_timer;
    int err_before = c->bed->err_tick;
    c->slowtmr();
    if (c->bed->err_tick != err_before)
        return 1; /* removed (on_err): visited, and freed */
    return pcb->last_timer != before;
}

int tmr_bed_active(const struct tmr_copy *c, const struct tcp_pcb *pcb)
{
    for (const struct tcp_pcb *p = *c->active; p != NULL; p = p->next)
        if (p == pcb)
            return 1;
    return 0;
}
