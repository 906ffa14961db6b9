/*
 * lsock_lwip.h - what the lwIP-side files of the sock layer share (see
 * lsock_priv.h for the split). Includes lwIP headers: never include it from
 * a file that needs <netinet/tcp.h>.
 *
 * Every lwIP function is called through the stack's table, lsock_lwip(s)-><fn>
 * (lstack/stack/lwip_api.def); macros on pcb fields (tcp_sndbuf,
 * tcp_nagle_disable, ip_set_option, ...) are used directly.
 */
#ifndef LSTACK_LSOCK_LWIP_H
#define LSTACK_LSOCK_LWIP_H

#include "lwip/ip_addr.h"
#include "lwip/pbuf.h"
#include "lwip/tcp.h"

#include "sock/lsock_priv.h"
#include "stack/stack_lwip.h"

/* The stack's lwIP table. */
static inline const struct lwip_api *lsock_lwip(const struct lsock *s)
{
    return s->ss->L;
}

/* The sock layer's state of stack st, or NULL before its first socket. */
static inline struct lsocks *lsocks_of(const struct stack *st)
{
    return stack_upper(st);
}

/* The same, made at the first call for st (tcp_sock.c): NULL if out of
 * memory. */
struct lsocks *lsocks_get(struct stack *st);

/* ---- errmap.c ---- */

/* lwIP err_t -> negative errno (the one table). ERR_OK -> 0. */
int lsock_errno(err_t err);

/* ---- tcp_sock.c ---- */

/* Point pcb's callbacks (and arg) at s. */
void lsock_attach(struct lsock *s, struct tcp_pcb *pcb);

/* Make pcb forget its lsock: no callback of ours runs for it any more
 * (lwIP then discards received data itself, tcp_recv_null). Not for a
 * listen pcb. */
void lsock_detach(const struct lwip_api *L, struct tcp_pcb *pcb);

/* Remember pcb's local and remote address/port in s. */
void lsock_save_addrs(struct lsock *s, const struct tcp_pcb *pcb);

/* ---- tcp_connect_timer.c ---- */

/* Arm the timer of a connect attempt (s in LS_CONNECTING, right after
 * tcp_connect): EHOSTUNREACH at 3 s if the next hop's ARP is unresolved,
 * ETIMEDOUT at Linux's time for TCP_SYNCNT. */
void lsock_connect_timer_start(struct lsock *s);

/* Cancel it (the attempt ended: failed, closed). Idempotent. */
void lsock_connect_timer_stop(struct lsock *s);

/* The attempt ended connected (lwIP's connected callback, pcb is s's):
 * cancel the timer, and if it had set a SYN RTO, put the pcb's RTO to 3 s
 * (RFC 6298 5.7, as Linux) and its retransmission count to 0. */
void lsock_connect_timer_connected(struct lsock *s, struct tcp_pcb *pcb);

/* ---- tcp_io.c ---- */

/* lwIP callbacks for a connection pcb (arg is the lsock, or NULL). */
err_t lsock_on_recv(void *arg, struct tcp_pcb *pcb, struct pbuf *p, err_t err);
err_t lsock_on_sent(void *arg, struct tcp_pcb *pcb, u16_t len);

/* Free every queued received pbuf (their NIC buffers go back). Returns the
 * unread byte count that was dropped. No window update. */
size_t lsock_rx_drop(struct lsock *s);

/* Give lwIP the window credit s still owes it (rcv_owed), so that its
 * window is whole again where lwIP compares it with the maximum (tcp_close
 * sends a RST for a connection whose window is not) or where SO_RCVBUF
 * moves it. No-op without a pcb or credit. */
void lsock_rcv_settle(struct lsock *s);

/* Take s off the stack's list of owed ACKs (before freeing it). */
void lsock_ack_forget(struct lsock *s);

/* For the rings (tcp_ring.c), what tcp_io.c does for the queue: reopen the
 * window by n consumed bytes; owe the ACK lwIP delays once the application
 * drained s; free send buffer and its size (SO_SNDBUF counted); the peer's
 * FIN. */
void lsock_rx_credit(struct lsock *s, size_t n);
void lsock_ack_owe(struct lsock *s);
uint32_t lsock_snd_room(const struct lsock *s);
uint32_t lsock_snd_size(const struct lsock *s);
void lsock_on_fin(struct lsock *s, struct tcp_pcb *pcb);

/* ---- tcp_ring.c (stack side, under the stack's lock) ---- */

/* Give an established connection of a stack with rings (st->sock_rings)
 * its rings and their lwIP callbacks. Without memory s stays without rings
 * (its calls take the locked path). */
void lsock_ring_attach(struct lsock *s);

#endif
