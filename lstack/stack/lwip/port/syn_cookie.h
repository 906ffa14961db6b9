/*
 * syn_cookie.h - SYN cookies for lstack's lwIP (syn_cookie.c), used by the
 * listener's SYN gate (tcp_syn.c) when a listener's SYN queue is full.
 * Inside the library only; lwIP's input thread (the stack's owner).
 */
#ifndef LSTACK_LWIP_SYN_COOKIE_H
#define LSTACK_LWIP_SYN_COOKIE_H

#include "lwip/tcp.h"
#include "lwip/prot/tcp.h"

/* The MSS option of the SYN being input (hdr and its options as
 * LWIP_HOOK_TCP_INPACKET_PCB passes them), or 536 (RFC 9293's default)
 * without one. */
u16_t lstack_cookie_peer_mss(const struct tcp_hdr *hdr, u16_t optlen, u16_t opt1len, const u8_t *opt2);

/* Answer the SYN being input (to listener l) with a SYN-ACK whose sequence
 * number is a cookie: no pcb, no state; our MSS option only (no window
 * scale, no SACK: a cookie has no room for them). 0, or -1 if no pbuf. */
int lstack_cookie_synack(const struct tcp_pcb_listen *l, const struct tcp_hdr *hdr, u16_t peer_mss);

/* Whether a cookie was sent in the last two periods (one period is 65.5 s
 * of sys_now): only then is an ACK to a listener checked for one. */
int lstack_cookie_recent(void);

/* The MSS a cookie carried, if the ACK being input (no SYN, no RST)
 * acknowledges a cookie of ours of this 4-tuple and the current or the
 * previous period; 0 if it does not. */
u16_t lstack_cookie_check(const struct tcp_hdr *hdr);

/* Make the connection that ACK completes: an ESTABLISHED pcb on the active
 * list, then listener l's accept callback. ERR_OK; ERR_MEM (no pcb: the
 * client retransmits); ERR_ABRT (the accept callback refused it; the pcb
 * is gone). Any data in the ACK is not delivered (the client sends it
 * again). */
err_t lstack_cookie_open(struct tcp_pcb_listen *l, const struct tcp_hdr *hdr, u16_t mss);

#endif
