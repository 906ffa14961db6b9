/*
 * lwip_port.c - the per-copy values lwipopts.h names, and lwIP's platform
 * hooks (diagnostics, asserts, random numbers) for lstack's lwIP build.
 *
 * Compiled into liblstack_lwip.so: every global here exists once per
 * loaded copy, so each stack has its own. lstack_lwip_configure is the one
 * entry the stack calls before lwip_init (lwip_port.h).
 *
 * Design: docs/design.md#lwips-values-are-pushed-in-not-read-from-lstackconf
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/random.h>

#include "lwip/opt.h"
#include "lwip/arch.h"

#include "port/lwip_port.h"
#include "port/lwip_port_priv.h"

/* lwipopts.h reads these as lwIP's TCP_WND etc.: never 0 (the defaults
 * until lstack_lwip_configure stores its checked, positive values). */
uint32_t lstack_tcp_wnd = LSTACK_TCP_WND_DEFAULT, lstack_tcp_snd_buf = LSTACK_TCP_SND_BUF_DEFAULT;
uint32_t lstack_tcp_snd_queuelen = LSTACK_TCP_SND_QUEUELEN_DEFAULT;
uint32_t lstack_tcp_sndlowat = LSTACK_TCP_SNDLOWAT_DEFAULT, lstack_tcp_sndqueuelowat = LSTACK_TCP_SNDQUEUELOWAT_DEFAULT;
uint32_t lstack_tcp_ooseq_max = LSTACK_TCP_OOSEQ_MAX_DEFAULT;
uint32_t lstack_ip_reass_max_pbufs;
uint16_t lstack_tcp_port_lo = 32768, lstack_tcp_port_hi = 60999;

static void (*port_log)(const char *msg);
static uint64_t rand_state;

int lstack_lwip_port_range(uint16_t lo, uint16_t hi)
{
    if (lo == 0 || lo > hi || lo < lstack_tcp_port_lo || hi > lstack_tcp_port_hi)
        return -EINVAL;
    lstack_tcp_port_lo = lo;
    lstack_tcp_port_hi = hi;
    return 0;
}

int lstack_lwip_configure(const struct lstack_lwip_conf *c, struct lstack_lwip_limits *out)
{
    if (c->rcv_wnd < c->mss || c->rcv_wnd > LSTACK_TCP_WND_MAX || (c->rcv_wnd >> LSTACK_TCP_RCV_SCALE) == 0)
        return -EINVAL;
    if (c->mss < 64 || c->mss > LSTACK_TCP_MSS_MAX || c->snd_buf < 2 * c->mss)
        return -EINVAL;
    /* lwIP's own defaults, per stack: a segment per MSS of the buffer, four
     * times over (small writes), the low-water marks at half. */
    uint32_t queuelen = (4 * (uint64_t)c->snd_buf + c->mss - 1) / c->mss;
    if (queuelen > 0xfff0)
        return -EINVAL; /* lwIP counts queued segments in 16 bits */
    if (c->tso_max != 0 && c->tso_max < 2 * c->mss)
        return -EINVAL;
    if (c->port_lo != 0 || c->port_hi != 0) {
        if (c->port_lo == 0 || c->port_lo > c->port_hi)
            return -EINVAL;
        lstack_tcp_port_lo = c->port_lo;
        lstack_tcp_port_hi = c->port_hi;
    }
    port_log = c->log;
    lstack_tcp_tso_max = c->tso_max < LSTACK_TCP_TSO_PAYLOAD_MAX ? c->tso_max : LSTACK_TCP_TSO_PAYLOAD_MAX;
    lstack_tcp_tso_mss = c->tso_mss;
    lstack_tcp_wnd = c->rcv_wnd;
    lstack_tcp_snd_buf = c->snd_buf;
    lstack_tcp_snd_queuelen = queuelen;
    uint32_t lowat = c->snd_buf / 2;
    if (lowat < 2 * c->mss + 1)
        lowat = 2 * c->mss + 1;
    if (lowat > c->snd_buf - 1)
        lowat = c->snd_buf - 1;
    lstack_tcp_sndlowat = lowat;
    lstack_tcp_sndqueuelowat = queuelen / 2 > 5 ? queuelen / 2 : 5;
    /* Out-of-order data is held in the NIC buffers it arrived in: at most a
     * window's worth, in at most a window's worth of full segments. */
    uint32_t ooseq = c->rcv_wnd / c->mss + 1;
    lstack_tcp_ooseq_max = ooseq > 0xffff ? 0xffff : ooseq;
    if (c->reass_max_pbufs > 0xffff)
        return -EINVAL; /* lwIP counts them in 16 bits */
    lstack_ip_reass_max_pbufs = c->reass_max_pbufs;
    if (getrandom(&rand_state, sizeof(rand_state), 0) != sizeof(rand_state) || rand_state == 0)
        rand_state = 0x9e3779b97f4a7c15ull ^ (uint64_t)(uintptr_t)&rand_state;
    int rc = lstack_port_mem_init(c->mem_limit);
    if (rc != 0)
        return rc;
    rc = lstack_port_hash_init(c->pcb_hint, lstack_lwip_rand());
    if (rc != 0)
        return rc;
    lstack_port_syn_init(c->sock_room, c->sock_room_ctx, c->cookie_budget);
    *out = (struct lstack_lwip_limits){
        .rcv_wnd = lstack_tcp_wnd,
        .snd_buf = lstack_tcp_snd_buf,
        .snd_queuelen = lstack_tcp_snd_queuelen,
        .snd_lowat = lstack_tcp_sndlowat,
        .snd_queuelowat = lstack_tcp_sndqueuelowat,
    };
    return 0;
}

static void port_emit(const char *msg)
{
    if (port_log != NULL)
        port_log(msg);
    else
        fprintf(stderr, "lstack: lwIP: %s\n", msg);
}

void lstack_lwip_diag(const char *fmt, ...)
{
    char buf[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    port_emit(buf);
}

void lstack_lwip_assert_fail(const char *msg, const char *file, int line)
{
    char buf[384];
    snprintf(buf, sizeof(buf), "assertion \"%s\" failed at %s:%d: lwIP's state is broken, aborting", msg, file,
             line);
    port_emit(buf);
    abort();
}

/* xorshift64*: ports, ISN secrets and hash seeds need no crypto strength
 * per call; the seed comes from getrandom. */
uint32_t lstack_lwip_rand(void)
{
    uint64_t x = rand_state;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    rand_state = x;
    return (uint32_t)((x * 0x2545f4914f6cdd1dull) >> 32);
}
