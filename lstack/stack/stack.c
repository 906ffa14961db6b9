/*
 * stack.c - life cycle and poll round of one stack (see stack.h).
 *
 * Owns the order of bring-up (lwIP copy, port, netif) and tear-down, and the
 * per-round work: rx burst -> frame filter -> PCB list order -> lwIP -> timers
 * -> tx flush.
 * Rejected: calling lwIP's timers from a separate timer thread (lwIP is not
 * thread-safe without tcpip_init's core lock, and the Debian build's core
 * lock would send the raw API through its tcpip thread).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stack/stack_priv.h"

int stack_open(struct stack **out, const struct lstack_conf *conf, int index, struct nic *nic,
               char *err, size_t errlen)
{
    struct stack *s = calloc(1, sizeof(*s));
    if (s == NULL) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    s->index = index;
    s->burst = conf->nic_read_number;
    s->max_socks = conf->tcp_conn_count;
    char tag[32];
    snprintf(tag, sizeof(tag), "lstack-lwip-%d", index);
    if (lwip_load(&s->L, NULL, tag, err, errlen) != 0) {
        free(s);
        return -1;
    }
    s->L.lwip_init();
    s->nic = nic;
    uint8_t mac[6];
    nic->ops->mac(nic, mac);
    frame_filter_init(&s->filter, mac, conf->host_addr, conf->mask_addr);
    if (stack_netif_open(s, conf, err, errlen) != 0) {
        lwip_unload(&s->L);
        free(s);
        return -1;
    }
    nic->ops->tx_flush(nic); /* the gratuitous ARP and the gateway query */
    *out = s;
    return 0;
}

unsigned stack_poll(struct stack *s)
{
    struct nic_pkt pkts[s->burst];
    struct nic *nic = s->nic;
    unsigned n = nic->ops->rx_burst(nic, pkts, s->burst);
    s->st.polls++;
    if (n > 0)
        s->st.busy_polls++;
    /* Filter the burst, then put its connections at the front of lwIP's
     * PCB list (pcb_front.h), then hand it to lwIP in arrival order. */
    unsigned pass = 0;
    pcb_front_reset(&s->front);
    for (unsigned i = 0; i < n; i++) {
        enum frame_verdict v = frame_classify(&s->filter, pkts[i].data, pkts[i].len);
        if (v == FRAME_PASS) {
            pcb_front_note(&s->front, pkts[i].data, pkts[i].len);
            pkts[pass++] = pkts[i];
        } else {
            s->st.drop[v]++;
            nic->ops->pkt_free(nic, pkts[i].handle);
        }
    }
    pcb_front_apply(&s->front, s->L.tcp_active_pcbs);
    for (unsigned i = 0; i < pass; i++)
        stack_netif_input(s, &pkts[i]);
    s->L.sys_check_timeouts();
    nic->ops->tx_flush(nic);
    return n;
}

uint32_t stack_next_timer_ms(struct stack *s)
{
    return s->L.sys_timeouts_sleeptime();
}

void stack_get_stats(const struct stack *s, struct stack_stats *st)
{
    *st = s->st;
    st->conn_refused = s->sock_refused;
    st->sockets = s->sock_count;
    s->nic->ops->get_stats(s->nic, &st->nic);
}

void stack_describe_nic(const struct stack *s, nic_describe_fn emit, void *ctx)
{
    if (s->nic->ops->describe != NULL)
        s->nic->ops->describe(s->nic, emit, ctx);
}

void stack_mac(const struct stack *s, uint8_t mac[6])
{
    s->nic->ops->mac(s->nic, mac);
}

const char *stack_port_name(const struct stack *s)
{
    return s->nic->ops->name(s->nic);
}

void stack_close(struct stack *s)
{
    if (s == NULL)
        return;
    stack_netif_close(s);
    s->nic->ops->tx_flush(s->nic);
    s->nic->ops->close(s->nic);
    lwip_unload(&s->L);
    free(s);
}
