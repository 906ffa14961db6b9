/*
 * tcp_tso.c - TCP segments larger than the MSS, for a port that cuts them
 * into MSS frames itself (TSO): what patch 0008 calls from lwIP's TCP.
 *
 * Owns: how large a segment tcp_write builds (many whole MSS, at most
 * LSTACK_TCP_TSO_PAYLOAD_MAX), when a large segment is cut to the window,
 * the acked front of a segment acked in part, fast retransmit of one MSS
 * of a large segment, and telling ip4 and the netif that a frame is a TSO
 * frame (lstack_tso_segsz, lstack_lwip_tso_segsz).
 *
 * Every global here exists once per lwIP copy; one thread per copy.
 * Design: docs/design.md#tso-large-lwip-segments-split-on-retransmit
 */
#include <stdint.h>
#include <string.h>

#include "lwip/opt.h"

#include "lwip/netif.h"
#include "lwip/priv/tcp_priv.h"
#include "lwip/tcp.h"

#include "port/lwip_hooks.h"
#include "port/lwip_port.h"
#include "port/lwip_port_priv.h"

/*
 * What stays lwIP's: the MSS announced and used (pcb->mss, from the MTU),
 * the congestion window and its growth per ACK (bytes, at most 2 MSS per
 * ACK in slow start), RTO and its backoff, the send buffer and queue
 * accounting. A segment is one pbuf (LWIP_NETIF_TX_SINGLE_PBUF), so its
 * front can be trimmed in place.
 *
 * Cutting a segment (tcp_split_unsent_seg) copies the part after the cut;
 * so a segment that does not fit the window waits while data is in flight
 * (its ACKs will open the window), unless the window takes at least half of
 * it, much as Linux defers a TSO frame (tcp_tso_should_defer). With nothing
 * in flight it is cut at once: nothing else would make the window grow.
 */

uint32_t lstack_tcp_tso_max;
uint32_t lstack_tcp_tso_mss;
u16_t lstack_tso_segsz;
u16_t lstack_tso_pieces = 1;

static int tso_on(const struct tcp_pcb *pcb)
{
    return lstack_tcp_tso_max != 0 && pcb->mss != 0;
}

/* The size the port cuts pcb's TSO segments into: its MSS, or less where
 * the port cuts by less (the segments then hold whole units of that). */
static u32_t tso_unit(const struct tcp_pcb *pcb)
{
    return lstack_tcp_tso_mss != 0 && lstack_tcp_tso_mss < pcb->mss ? lstack_tcp_tso_mss : pcb->mss;
}

u16_t lstack_tcp_seg_max_tso(const struct tcp_pcb *pcb)
{
    if (!tso_on(pcb))
        return pcb->mss;
    u32_t unit = tso_unit(pcb), n = lstack_tcp_tso_max / unit;
    return n > 1 && n * unit > pcb->mss ? (u16_t)(n * unit) : pcb->mss;
}

u16_t lstack_tcp_seg_alloc_tso(const struct tcp_pcb *pcb, u16_t length, u16_t max_length)
{
    if (!tso_on(pcb))
        return max_length; /* lwIP's own choice with LWIP_NETIF_TX_SINGLE_PBUF */
    u32_t unit = tso_unit(pcb);
    u32_t want = ((u32_t)length + unit - 1) / unit * unit;
    if (want < pcb->mss)
        want = pcb->mss;
    return (u16_t)LWIP_MIN(want, (u32_t)max_length);
}

void lstack_tcp_tso_fit_tso(struct tcp_pcb *pcb, u32_t wnd)
{
    struct tcp_seg *seg = pcb->unsent;
    if (seg == NULL || !tso_on(pcb) || seg->len <= pcb->mss)
        return;
    /* Bytes before the segment still in flight (negative: a few acked
     * bytes are still at its front, see trim_head). */
    int64_t off = (int32_t)(lwip_ntohl(seg->tcphdr->seqno) - pcb->lastack);
    int64_t room = (int64_t)wnd - off; /* of this segment, what the window takes */
    if (room >= (int64_t)seg->len || room < (int64_t)pcb->mss)
        return; /* it fits; or less than one MSS: lwIP's rules (wait, persist) */
    if (pcb->unacked != NULL && room < (int64_t)seg->len / 2)
        return; /* in-flight ACKs will open the window: wait, no copy */
    u16_t split = (u16_t)(room / pcb->mss * pcb->mss);
    if (tcp_split_unsent_seg(pcb, split) != ERR_OK && pcb->unacked == NULL && pcb->persist_backoff == 0) {
        /* No memory for the cut and nothing in flight to bring an ACK:
         * the persist timer tries again (tcp_slowtmr splits, then outputs). */
        pcb->persist_cnt = 0;
        pcb->persist_backoff = 1;
        pcb->persist_probe = 0;
    }
}

/* Trim the acked front of seg (acked up to ackno, not whole) in place: the
 * TCP header moves up over acked data. Returns the bytes trimmed. */
static u32_t trim_head(struct tcp_seg *seg, u32_t ackno)
{
    if (seg == NULL)
        return 0;
    u32_t seqno = lwip_ntohl(seg->tcphdr->seqno);
    if (!TCP_SEQ_LT(seqno, ackno))
        return 0;
    u32_t k = (ackno - seqno) & ~3u; /* the header stays 4-byte aligned */
    if (k == 0 || k >= seg->len || seg->p->next != NULL || seg->p->ref != 1 ||
        (TCPH_FLAGS(seg->tcphdr) & TCP_SYN))
        return 0;
#if TCP_CHECKSUM_ON_COPY
    /* The data's running checksum no longer covers the segment. lwIP needs
     * it only where it computes TCP checksums: there the segment stays
     * whole (correct, if a few acked bytes are sent again). */
    if (seg->flags & TF_SEG_DATA_CHECKSUMMED) {
        IF__NETIF_CHECKSUM_ENABLED(netif_default, NETIF_CHECKSUM_GEN_TCP) {
            return 0;
        }
        seg->flags &= (u8_t)~TF_SEG_DATA_CHECKSUMMED;
        seg->chksum = 0;
        seg->chksum_swapped = 0;
    }
#endif
    u16_t hlen = TCPH_HDRLEN_BYTES(seg->tcphdr);
    u8_t *end = (u8_t *)seg->p->payload + seg->p->len; /* oversize room past it stays */
    u8_t *hdr = (u8_t *)seg->tcphdr + k;
    memmove(hdr, seg->tcphdr, hlen);
    seg->tcphdr = (struct tcp_hdr *)(void *)hdr;
    seg->tcphdr->seqno = lwip_htonl(seqno + k);
    seg->len = (u16_t)(seg->len - k);
    seg->p->payload = hdr;
    seg->p->len = seg->p->tot_len = (u16_t)(end - hdr);
    return k;
}

u32_t lstack_tcp_tso_trim_tso(struct tcp_pcb *pcb, u32_t ackno)
{
    if (!tso_on(pcb))
        return 0;
    /* After an RTO, sent data is on unsent; after a fast retransmit the
     * resent MSS heads unsent and the rest heads unacked. */
    return trim_head(pcb->unacked, ackno) + trim_head(pcb->unsent, ackno);
}

void lstack_tcp_tso_rexmit_tso(struct tcp_pcb *pcb, struct tcp_seg *seg)
{
    if (!tso_on(pcb) || seg != pcb->unsent || seg->len <= pcb->mss)
        return;
    /* One MSS past what was acked (a few acked bytes may lead it). */
    int64_t acked = (int32_t)(pcb->lastack - lwip_ntohl(seg->tcphdr->seqno));
    int64_t split = (int64_t)pcb->mss + (acked > 0 ? acked : 0);
    if (split >= (int64_t)seg->len || tcp_split_unsent_seg(pcb, (u16_t)split) != ERR_OK)
        return; /* then the segment is resent whole */
    struct tcp_seg *rest = seg->next;
    seg->next = rest->next;
    rest->next = pcb->unacked; /* sent before and lower than any unacked */
    pcb->unacked = rest;
}

void lstack_tcp_tso_out_tso(const struct tcp_pcb *pcb, const struct tcp_seg *seg)
{
    if (pcb == NULL || !tso_on(pcb) || seg->len <= pcb->mss) {
        lstack_tso_segsz = 0;
        lstack_tso_pieces = 1;
        return;
    }
    u32_t unit = tso_unit(pcb);
    lstack_tso_segsz = (u16_t)unit;
    lstack_tso_pieces = (u16_t)((seg->len + unit - 1u) / unit);
}

uint16_t lstack_lwip_tso_segsz(void)
{
    return lstack_tso_segsz;
}
