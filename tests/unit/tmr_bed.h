/*
 * tmr_bed.h - the bed of the tcp_slowtmr tests (tcp-tmr-quiet,
 * tcp-tmr-states): two private lwIP copies, a (198.18.0.2) and b
 * (198.18.0.1), joined by a netif output that queues each IPv4 packet for
 * the other copy. The test delivers or drops each queued packet and calls
 * each copy's tcp_slowtmr itself, one tick at a time, so every tick is exact
 * (no clock). No DPDK, no root.
 *
 * b plays a small application: a listener that accepts, reads (or, with
 * hold_recv, takes data without opening its window) and closes when the
 * peer's FIN comes if close_on_fin is set. tmr_bed_on_err records the tick
 * of a pcb's removal.
 *
 * Design: docs/design.md#timer-tests-drive-lwips-ticks-themselves
 */
#ifndef LSTACK_TEST_TMR_BED_H
#define LSTACK_TEST_TMR_BED_H

#include <stdint.h>

#include "lwip/priv/tcp_priv.h"
#include "stack/lwip_load.h"

struct tmr_bed;

struct tmr_copy {
    struct lwip_api L;
    struct netif nif;
    u32_t *ticks;                  /* lwIP's tcp_ticks */
    void (*slowtmr)(void);
    void (*fasttmr)(void);
    struct tcp_pcb **active, **tw; /* tcp_active_pcbs, tcp_tw_pcbs */
    struct tmr_bed *bed;
};

#define TMR_BED_QMAX 64
struct tmr_pkt {
    int to; /* 0: a, 1: b */
    uint16_t len;
    uint8_t b[1600];
};

struct tmr_bed {
    struct tmr_copy a, b;
    struct tmr_pkt q[TMR_BED_QMAX]; /* in flight; more than QMAX are lost */
    int qn;
    /* b's application */
    int close_on_fin, hold_recv;
    struct tcp_pcb *accepted; /* the last connection b accepted */
    /* tmr_bed_on_err: the tick of the last removal (-1: none), on err_copy */
    int err_tick;
    struct tmr_copy *err_copy;
};

/* Load both copies (lib: the lwIP library, NULL for this build's; tag names
 * the memfds). Returns 0, or -1 after printing a TAP "Bail out!" line. */
int tmr_bed_open(struct tmr_bed *t, const char *lib, const char *tag);

/* Deliver one packet (a copy of *k: it may be in the queue). */
void tmr_bed_deliver(struct tmr_bed *t, const struct tmr_pkt *k);

/* Deliver everything queued, and what that makes, up to 20 rounds. */
void tmr_bed_pump(struct tmr_bed *t);

/* TCP payload length and flags of a queued packet. */
void tmr_bed_seg(const struct tmr_pkt *k, unsigned *plen, unsigned *flags);

/* A listener on b's port, accepting into t->accepted (NULL if it could not
 * be opened). */
struct tcp_pcb *tmr_bed_listen(struct tmr_bed *t, u16_t port);

/* A connected pair on port: *pa on a, *pb on b (NULL if it did not come
 * up). Both pcbs carry t as their callback argument. */
void tmr_bed_connect(struct tmr_bed *t, struct tcp_pcb **pa, struct tcp_pcb **pb, u16_t port);

/* Watch pcb's removal on c: tmr_bed_on_err becomes its error callback and
 * err_tick is reset. */
void tmr_bed_watch(struct tmr_bed *t, struct tmr_copy *c, struct tcp_pcb *pcb);

/* One tick of c's tcp_slowtmr; what it sent is left in the queue. Returns
 * whether pcb was visited: tcp_slowtmr sets pcb->last_timer to its counter
 * (static in tcp.c), which moves on at every call (a u8: a pcb passed by
 * for a multiple of 256 ticks would look skipped). A pcb the tick may free
 * must be watched (tmr_bed_watch): its removal counts as a visit. */
int tmr_bed_tick(struct tmr_copy *c, struct tcp_pcb *pcb);

/* Whether pcb is on c's active list. */
int tmr_bed_active(const struct tmr_copy *c, const struct tcp_pcb *pcb);

#endif
