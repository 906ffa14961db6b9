/*
 * lwip_port_priv.h - what the files of lstack's lwIP port share inside the
 * library (lwip_port.c calls the others' set-up from lstack_lwip_configure).
 */
#ifndef LSTACK_LWIP_PORT_PRIV_H
#define LSTACK_LWIP_PORT_PRIV_H

#include <stddef.h>
#include <stdint.h>

/* lwip_mem.c: reserve the arena (limit bytes of address space; pages are
 * used as blocks are first carved). 0 or -ENOMEM/-EINVAL. */
int lstack_port_mem_init(size_t limit);

/* pcb_hash.c: size the table for about hint connections, with seed.
 * 0 or -ENOMEM. */
int lstack_port_hash_init(uint32_t hint, uint32_t seed);

/* tcp_isn.c: SipHash-2-4 of 16 bytes under the copy's secret key (from
 * getrandom on first use). */
uint64_t lstack_port_siphash16(uint64_t m0, uint64_t m1);

/* tcp_syn.c: where the stack's room for sockets comes from (NULL: none). */
void lstack_port_syn_init(uint32_t (*room)(void *ctx), void *ctx);

/* tcp_tso.c: the most TCP payload of a TSO segment (0: no TSO). */
extern uint32_t lstack_tcp_tso_max;
/* tcp_tso.c: the largest MSS the port cuts a TSO segment by (0: any). */
extern uint32_t lstack_tcp_tso_mss;

#endif
