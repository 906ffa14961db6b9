/*
 * lwip_hooks.h - lwIP's hook header for lstack's build (LWIP_HOOK_FILENAME).
 *
 * The PCB hash: lwIP's TCP input finds a segment's connection by walking
 * its active and TIME_WAIT lists, O(connections) per segment. Patch 0001
 * (lstack/stack/lwip/patches/) calls these where PCBs enter and leave those
 * two lists and where tcp_input looks one up; port/pcb_hash.c keeps an
 * open-addressing table of the 4-tuple. Only lwIP's core includes this.
 *
 * The ISN hook and the TIME_WAIT reuse of patch 0003: port/tcp_isn.c.
 * The listener's SYN gate (room for a socket, SYN queue, SYN cookies):
 * port/tcp_syn.c and port/syn_cookie.c.
 */
#ifndef LSTACK_LWIP_HOOKS_H
#define LSTACK_LWIP_HOOKS_H

#if LSTACK_TCP_PCB_HASH
struct tcp_pcb;
/* The PCB of the active or TIME_WAIT list whose 4-tuple is this segment's
 * (addresses in network order, ports in host order), or NULL. */
struct tcp_pcb *lstack_pcb_hash_lookup(u32_t local_ip, u16_t local_port, u32_t remote_ip, u16_t remote_port);
/* pcb just entered the active or TIME_WAIT list / is about to leave it. */
void lstack_pcb_hash_add(struct tcp_pcb *pcb);
void lstack_pcb_hash_del(struct tcp_pcb *pcb);
#endif

/* RFC 6528 initial sequence numbers (port/tcp_isn.c). */
struct ip4_addr;
u32_t lstack_tcp_isn(const struct ip4_addr *lip, u16_t lport, const struct ip4_addr *rip, u16_t rport);
/* Patch 0003: a SYN ends TIME_WAIT pcb tw; the next ISN asked for, if for
 * tw's 4-tuple, is tw's snd_nxt + 65537 (Linux's choice), so that the new
 * connection's sequence space starts past the old one's. */
struct tcp_pcb;
void lstack_tcp_tw_reuse(const struct tcp_pcb *tw);
#define LWIP_HOOK_TCP_ISN(lip, lport, rip, rport) lstack_tcp_isn((lip), (lport), (rip), (rport))


/* What a segment to a listener gets (port/tcp_syn.c): ERR_OK lets lwIP
 * answer it; anything else drops it (after a RST, a SYN cookie or a new
 * connection, if one was made). */
struct tcp_hdr;
struct pbuf;
err_t lstack_tcp_listen_input(struct tcp_pcb *pcb, const struct tcp_hdr *hdr, u16_t optlen, u16_t opt1len,
                              const u8_t *opt2, const struct pbuf *p);
#define LWIP_HOOK_TCP_INPACKET_PCB(pcb, hdr, optlen, opt1len, opt2, p) \
    ((pcb)->state == LISTEN ? lstack_tcp_listen_input((pcb), (hdr), (optlen), (opt1len), (opt2), (p)) : ERR_OK)

#endif
