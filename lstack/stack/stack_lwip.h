/*
 * stack_lwip.h - what the lwIP-side layers above a stack (the sockets,
 * lstack/sock/) read of it: its private lwIP's table of calls, its netif,
 * the TCP limits its lwIP was configured with, and the SYN retry counts
 * read at start; and the few of lwIP's TCP internals they use. Includes
 * lwIP headers: for lwIP-side files only. Fixed once stack_open returned;
 * any thread.
 */
#ifndef LSTACK_STACK_LWIP_H
#define LSTACK_STACK_LWIP_H

#include "lwip/netif.h"
#include "lwip/tcp.h"

#include "port/lwip_port.h"
#include "stack/lwip_load.h"
#include "stack/stack.h"

/* lwIP's slow TCP timer tick, in ms: the unit of a pcb's rto, sa, sv. */
#define STACK_TCP_TICK_MS LSTACK_TCP_TICK_MS

/* Have pcb send its ACK at its next output (lwIP's tcp_ack_now). */
static inline void stack_tcp_ack_now(struct tcp_pcb *pcb)
{
    tcp_set_flags(pcb, TF_ACK_NOW);
}

const struct lwip_api *stack_lwip(const struct stack *s);
struct netif *stack_netif(struct stack *s);
const struct lstack_lwip_limits *stack_tcp_limits(const struct stack *s);
/* tcp_conn_count: the most sockets the stack holds. */
uint32_t stack_conn_limit(const struct stack *s);
/* net.ipv4.tcp_syn_retries and tcp_syn_linear_timeouts, read at start. */
int stack_syn_retries(const struct stack *s);
int stack_syn_linear_timeouts(const struct stack *s);

#endif
