/*
 * syn_cookie.c - SYN cookies (RFC 4987 section 3.6), as Linux's
 * tcp_syncookies = 1 uses them: only when a listener's SYN queue is full.
 *
 * What a cookie connection lacks (as on Linux without timestamps): window
 * scaling (both windows stay below 64 KiB) and SACK; the data of the ACK
 * itself, if any, is dropped (the client sends it again).
 *
 * Which thread: the stack's owner only.
 * Design: docs/design.md#syn-cookies-without-window-scale
 */
#include "port/syn_cookie.h"

#include "lwip/opt.h"
#include "lwip/inet_chksum.h"
#include "lwip/ip.h"
#include "lwip/netif.h"
#include "lwip/pbuf.h"
#include "lwip/sys.h"
#include "lwip/priv/tcp_priv.h"

#include "port/lwip_port_priv.h"

/*
 * The SYN-ACK's sequence number carries what the connection needs later,
 * so a SYN costs no memory: bits 31-27 the period (sys_now >> 16, 65.5 s,
 * modulo 32), bits 26-25 an index into the MSS table (the largest entry at
 * most the peer's MSS, Linux's table), bits 24-0 a keyed hash (SipHash
 * under the copy's secret, tcp_isn.c) of the 4-tuple, the client's ISN,
 * the period and the index. The ACK that completes the handshake
 * acknowledges cookie + 1; a cookie of the current or the previous period
 * whose hash matches opens the connection (lstack_cookie_open): a forged
 * ACK passes with probability 2^-25.
 */

static const u16_t mss_table[4] = {536, 1300, 1440, 1460};

/* sys_now wraps after 2^32 ms: periods count modulo 2^16. */
#define PERIOD(now) ((now) >> 16)
#define PERIOD_MASK 0xffffu
#define HASH_BITS 0x01ffffffu

static u32_t last_sent_period;
static int ever_sent;

static u32_t cookie_hash(const struct tcp_hdr *hdr, u32_t client_isn, u32_t period, u32_t mss_idx)
{
    uint64_t m0 = (uint64_t)ip4_addr_get_u32(ip_2_ip4(ip_current_src_addr())) << 32 |
                  ip4_addr_get_u32(ip_2_ip4(ip_current_dest_addr()));
    uint64_t m1 = (uint64_t)hdr->src << 48 | (uint64_t)hdr->dest << 32 | client_isn;
    uint64_t h = lstack_port_siphash16(m0, m1);
    /* a second round binds the period and the MSS index (and keeps these
     * inputs apart from the ISN hash's, whose second word is below 2^32) */
    return (u32_t)lstack_port_siphash16(h, 0x636f6f6b00000000ull | (uint64_t)period << 2 | mss_idx) & HASH_BITS;
}

static u32_t cookie_make(const struct tcp_hdr *hdr, u32_t client_isn, u32_t period, u32_t mss_idx)
{
    return (period & 31u) << 27 | mss_idx << 25 | cookie_hash(hdr, client_isn, period, mss_idx);
}

/* The byte at index i of the segment's options (split as lwIP passes them). */
static u8_t opt_byte(const struct tcp_hdr *hdr, u16_t opt1len, const u8_t *opt2, u16_t i)
{
    return i < opt1len ? ((const u8_t *)(hdr + 1))[i] : opt2[i - opt1len];
}

u16_t lstack_cookie_peer_mss(const struct tcp_hdr *hdr, u16_t optlen, u16_t opt1len, const u8_t *opt2)
{
    if (opt2 == NULL)
        opt1len = optlen;
    for (u16_t i = 0; i < optlen;) {
        u8_t kind = opt_byte(hdr, opt1len, opt2, i);
        if (kind == LWIP_TCP_OPT_EOL)
            break;
        if (kind == LWIP_TCP_OPT_NOP) {
            i++;
            continue;
        }
        if (i + 1 >= optlen)
            break;
        u8_t len = opt_byte(hdr, opt1len, opt2, (u16_t)(i + 1));
        if (len < 2 || i + len > optlen)
            break;
        if (kind == LWIP_TCP_OPT_MSS && len == LWIP_TCP_OPT_LEN_MSS)
            return (u16_t)(opt_byte(hdr, opt1len, opt2, (u16_t)(i + 2)) << 8 |
                           opt_byte(hdr, opt1len, opt2, (u16_t)(i + 3)));
        i = (u16_t)(i + len);
    }
    return 536;
}

int lstack_cookie_synack(const struct tcp_pcb_listen *l, const struct tcp_hdr *hdr, u16_t peer_mss)
{
    const ip_addr_t *src = ip_current_dest_addr(), *dst = ip_current_src_addr();
    struct netif *netif = ip_route(src, dst);
    if (netif == NULL)
        return -1;
    u32_t idx = 3;
    while (idx > 0 && peer_mss < mss_table[idx])
        idx--;
    u32_t now = sys_now();
    u32_t cookie = cookie_make(hdr, hdr->seqno, PERIOD(now), idx);
    struct pbuf *q = pbuf_alloc(PBUF_IP, TCP_HLEN + LWIP_TCP_OPT_LEN_MSS, PBUF_RAM);
    if (q == NULL)
        return -1;
    struct tcp_hdr *t = (struct tcp_hdr *)q->payload;
    t->src = lwip_htons(hdr->dest);
    t->dest = lwip_htons(hdr->src);
    t->seqno = lwip_htonl(cookie);
    t->ackno = lwip_htonl(hdr->seqno + 1);
    TCPH_HDRLEN_FLAGS_SET(t, (TCP_HLEN + LWIP_TCP_OPT_LEN_MSS) / 4, TCP_SYN | TCP_ACK);
    t->wnd = lwip_htons(TCPWND_MIN16(TCP_WND));
    t->chksum = 0;
    t->urgp = 0;
    u16_t our_mss = tcp_eff_send_mss_netif(TCP_MSS, netif, dst);
    u8_t *o = (u8_t *)(t + 1);
    o[0] = LWIP_TCP_OPT_MSS;
    o[1] = LWIP_TCP_OPT_LEN_MSS;
    o[2] = (u8_t)(our_mss >> 8);
    o[3] = (u8_t)our_mss;
#if CHECKSUM_GEN_TCP
    IF__NETIF_CHECKSUM_ENABLED(netif, NETIF_CHECKSUM_GEN_TCP) {
        t->chksum = ip_chksum_pseudo(q, IP_PROTO_TCP, q->tot_len, src, dst);
    }
#endif
    ip_output_if(q, src, dst, l->ttl, l->tos, IP_PROTO_TCP, netif);
    pbuf_free(q);
    last_sent_period = PERIOD(now);
    ever_sent = 1;
    return 0;
}

int lstack_cookie_recent(void)
{
    return ever_sent && ((PERIOD(sys_now()) - last_sent_period) & PERIOD_MASK) <= 1;
}

u16_t lstack_cookie_check(const struct tcp_hdr *hdr)
{
    u32_t cookie = hdr->ackno - 1, client_isn = hdr->seqno - 1;
    u32_t idx = (cookie >> 25) & 3u;
    u32_t now = PERIOD(sys_now());
    for (u32_t age = 0; age <= 1; age++) {
        u32_t period = (now - age) & PERIOD_MASK;
        if ((period & 31u) == cookie >> 27 && cookie_hash(hdr, client_isn, period, idx) == (cookie & HASH_BITS))
            return mss_table[idx];
    }
    return 0;
}

err_t lstack_cookie_open(struct tcp_pcb_listen *l, const struct tcp_hdr *hdr, u16_t mss)
{
    struct tcp_pcb *n = tcp_alloc(l->prio);
    if (n == NULL)
        return ERR_MEM;
    /* What tcp_listen_input and the SYN_RCVD -> ESTABLISHED step would
     * have set, with the handshake's numbers taken from the ACK. */
    ip_addr_copy(n->local_ip, *ip_current_dest_addr());
    ip_addr_copy(n->remote_ip, *ip_current_src_addr());
    n->local_port = l->local_port;
    n->remote_port = hdr->src;
    n->state = ESTABLISHED;
    n->rcv_nxt = hdr->seqno;
    n->rcv_ann_right_edge = n->rcv_nxt;
    n->snd_nxt = n->lastack = n->snd_lbb = hdr->ackno;
    n->snd_wl1 = hdr->seqno - 1; /* the next segment updates the window */
    n->snd_wl2 = hdr->ackno;
    n->snd_wnd = n->snd_wnd_max = hdr->wnd; /* unscaled: no window scale option was offered */
    n->callback_arg = l->callback_arg;
    n->listener = l;
    n->so_options = l->so_options & SOF_INHERITED;
    n->netif_idx = l->netif_idx;
    n->mss = tcp_eff_send_mss(mss, &n->local_ip, &n->remote_ip);
    /* RFC 5681's initial window, lwIP's LWIP_TCP_CALC_INITIAL_CWND */
    n->cwnd = (tcpwnd_size_t)LWIP_MIN(4u * n->mss, LWIP_MAX(2u * n->mss, 4380u));
    TCP_REG_ACTIVE(n);
    err_t err;
    TCP_EVENT_ACCEPT(l, n, n->callback_arg, ERR_OK, err);
    if (err != ERR_OK) {
        if (err != ERR_ABRT)
            tcp_abort(n);
        return ERR_ABRT;
    }
    return ERR_OK;
}
