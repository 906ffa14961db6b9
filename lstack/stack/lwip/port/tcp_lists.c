/*
 * tcp_lists.c - the heads of this copy's TCP pcb lists (listeners, active
 * connections, TIME_WAIT), for the stack's walk of its connections
 * (stack/stack_conns.c): the lists are lwIP's globals, private to each
 * loaded copy; and a pcb's unacknowledged segments (TCP_INFO). lwIP's
 * internal types stay in here. The stack's thread, under its lock.
 */
#include "lwip/priv/tcp_priv.h"

#include "port/lwip_port.h"

void *lstack_lwip_tcp_list(int which)
{
    switch (which) {
    case LSTACK_TCP_LIST_LISTEN:
        return tcp_listen_pcbs.pcbs;
    case LSTACK_TCP_LIST_ACTIVE:
        return tcp_active_pcbs;
    case LSTACK_TCP_LIST_TW:
        return tcp_tw_pcbs;
    default:
        return NULL;
    }
}

uint32_t lstack_tcp_unacked_segs(const struct tcp_pcb *pcb)
{
    uint32_t n = 0;
    for (const struct tcp_seg *seg = pcb->unacked; seg != NULL; seg = seg->next)
        n++;
    return n;
}

_Static_assert(LSTACK_TCP_TICK_MS == TCP_SLOW_INTERVAL, "lwipopts.h's tick is lwIP's slow timer's");
