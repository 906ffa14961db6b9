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
 * TSO (segments of many MSS for a port that cuts them, patch 0008):
 * port/tcp_tso.c.
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
/* And for an ESTABLISHED connection's segment inside a receive burst
 * (patch 0018, port/tcp_rx_burst.c):
 *   - a new run of segments of one connection is noted with the connection's
 *     rcv_nxt before it (where the burst's data for the ACK cap starts to
 *     count; lstack_tcp_burst_run, _run_from);
 *   - an ACK owed since an earlier segment of the burst (TF_ACK_NOW) goes out
 *     first when this segment is not the next in order, so that the
 *     duplicate ACK lwIP sends for it stays a duplicate (without the
 *     deferral, that ACK had left already). */
#define LWIP_HOOK_TCP_INPACKET_PCB(pcb, hdr, optlen, opt1len, opt2, p)                                \
    ((pcb)->state == LISTEN                                                                          \
         ? lstack_tcp_listen_input((pcb), (hdr), (optlen), (opt1len), (opt2), (p))                   \
         : (lstack_tcp_in_burst && (pcb)->state == ESTABLISHED)                                      \
               ? ((void)((pcb) != lstack_tcp_burst_run                                               \
                             ? (lstack_tcp_burst_run = (pcb), lstack_tcp_burst_run_from = (pcb)->rcv_nxt) \
                             : 0),                                                                   \
                  (((pcb)->flags & TF_ACK_NOW) && (hdr)->seqno != (pcb)->rcv_nxt)                    \
                      ? lstack_tcp_burst_out_of_order(pcb)                                           \
                      : ERR_OK)                                                                      \
               : ERR_OK)

/* Patch 0015: a datagram ip4_reass made whole, before lwIP's protocol
 * input; nonzero: taken (given to another stack, p freed). port/reass_route.c. */
struct netif;
int lstack_ip4_reassembled(struct pbuf *p, struct netif *inp);
#define LSTACK_HOOK_IP4_REASSEMBLED(p, inp) lstack_ip4_reassembled((p), (inp))

/* Patch 0018: the tcp_output tcp_input runs after a segment (when patch
 * 0016's gate finds work), left for the end of the stack's receive burst
 * for an ESTABLISHED connection without out-of-order data, once per
 * connection (port/tcp_rx_burst.c) - and at once whenever 64 KiB of the
 * burst's data for it is unACKed (the cap); outside a burst, at once as
 * before. */
struct tcp_pcb;
extern u8_t lstack_tcp_in_burst;
/* The connection whose run of segments the burst is in (NULL: none yet, or
 * it was freed), and its rcv_nxt before the run. */
extern struct tcp_pcb *lstack_tcp_burst_run;
extern u32_t lstack_tcp_burst_run_from;
void lstack_tcp_output_owe(struct tcp_pcb *pcb);
/* A segment of pcb's that is not the next in order, while an ACK is owed:
 * the ACK now (tcp_output). Returns ERR_OK (the segment goes on). */
err_t lstack_tcp_burst_out_of_order(struct tcp_pcb *pcb);
/* pcb leaves the active list (pcb_hash.c): no output owed to it stays. */
void lstack_tcp_burst_forget(struct tcp_pcb *pcb);
#define LSTACK_TCP_INPUT_OUTPUT(pcb)                                                         \
    ((lstack_tcp_in_burst && (pcb)->state == ESTABLISHED && (pcb)->ooseq == NULL)           \
         ? lstack_tcp_output_owe(pcb)                                                        \
         : (void)tcp_output(pcb))

#if LSTACK_TCP_TSO
/* TCP segments larger than the MSS for a port that cuts them (TSO;
 * port/tcp_tso.c, patch 0008). Every one leaves lwIP as it was when the
 * copy was configured without TSO (lstack_lwip_conf.tso_max 0). */
struct tcp_seg;
/* The hooks below are macros: the port's TSO size (lstack_tcp_tso_max, 0
 * without TSO) is tested inline, and the functions (tcp_tso.c, *_tso) are
 * called only with TSO on. Without TSO every hook gives lwIP's own value
 * or does nothing; four calls a request less in scenario 1 (~30
 * instructions under callgrind). */
extern u32_t lstack_tcp_tso_max;
/* The largest segment tcp_write builds for pcb: with TSO the most whole
 * MSS that fit one TSO frame, else the MSS. */
u16_t lstack_tcp_seg_max_tso(const struct tcp_pcb *pcb);
#define lstack_tcp_seg_max(pcb) (lstack_tcp_tso_max == 0 ? (pcb)->mss : lstack_tcp_seg_max_tso(pcb))
/* Bytes to allocate for a new segment of length bytes (options included),
 * at most max_length: up to the next whole MSS with TSO, else max_length. */
u16_t lstack_tcp_seg_alloc_tso(const struct tcp_pcb *pcb, u16_t length, u16_t max_length);
#define lstack_tcp_seg_alloc(pcb, length, max_length) \
    (lstack_tcp_tso_max == 0 ? (max_length) : lstack_tcp_seg_alloc_tso((pcb), (length), (max_length)))
/* tcp_output: cut the head of pcb->unsent to what the window wnd takes,
 * in whole MSS, when it is larger than one MSS and does not fit. */
void lstack_tcp_tso_fit_tso(struct tcp_pcb *pcb, u32_t wnd);
#define lstack_tcp_tso_fit(pcb, wnd) (lstack_tcp_tso_max == 0 ? (void)0 : lstack_tcp_tso_fit_tso((pcb), (wnd)))
/* tcp_receive, after the acked segments are freed: trim the acked front
 * of a head segment acked in part. Returns the bytes trimmed (acked). */
u32_t lstack_tcp_tso_trim_tso(struct tcp_pcb *pcb, u32_t ackno);
#define lstack_tcp_tso_trim(pcb, ackno) (lstack_tcp_tso_max == 0 ? 0u : lstack_tcp_tso_trim_tso((pcb), (ackno)))
/* tcp_rexmit: seg, the first unacked segment, was moved to pcb->unsent;
 * keep one MSS of it there and put the rest back on pcb->unacked. */
void lstack_tcp_tso_rexmit_tso(struct tcp_pcb *pcb, struct tcp_seg *seg);
#define lstack_tcp_tso_rexmit(pcb, seg) (lstack_tcp_tso_max == 0 ? (void)0 : lstack_tcp_tso_rexmit_tso((pcb), (seg)))
/* Around ip_output_if of a data segment (NULL, NULL after it): while set,
 * lstack_tso_segsz is the MSS the port cuts the frame by (0: not a TSO
 * frame) and lstack_tso_pieces the frames it makes (ip4: IP ids). Without
 * TSO they keep their first values, 0 and 1, and the hook does nothing. */
void lstack_tcp_tso_out_tso(const struct tcp_pcb *pcb, const struct tcp_seg *seg);
#define lstack_tcp_tso_out(pcb, seg) (lstack_tcp_tso_max == 0 ? (void)0 : lstack_tcp_tso_out_tso((pcb), (seg)))
extern u16_t lstack_tso_segsz, lstack_tso_pieces;
#endif

#endif
