/*
 * tcp_isn.c - initial sequence numbers as RFC 6528 asks: a clock that
 * ticks every 4 microseconds plus a keyed hash of the connection's 4-tuple
 * (SipHash-2-4 under a 128-bit key from getrandom), through lwIP's
 * LWIP_HOOK_TCP_ISN. The keyed hash also signs SYN cookies (syn_cookie.c).
 *
 * Which thread: the stack's owner only.
 */
#include <stdint.h>
#include <sys/random.h>
#include <time.h>

#include "lwip/opt.h"
#include "lwip/ip4_addr.h"
#include "lwip/tcp.h"

#include "port/lwip_hooks.h"
#include "port/lwip_port_priv.h"

/*
 * Why: lwIP's own tcp_next_iss adds its tick count to a static counter, so
 * a peer can predict the next connection's sequence numbers (blind
 * injection), and a new connection on a 4-tuple still in TIME_WAIT does not
 * start above the old one's sequence space (RFC 6191 reuse needs that).
 *
 * TIME_WAIT reuse (patch 0003): when a SYN ends a TIME_WAIT connection,
 * the new connection on that 4-tuple starts at the old one's snd_nxt +
 * 65537, as Linux does, whatever the clock says: the peer may still hold
 * old segments, and a clock-based ISN is only past the old sequence space
 * if the old connection sent less than the clock advanced. The note is
 * used by the next ISN asked for (the same tcp_input call, if the listener
 * takes the SYN) and dropped by any other.
 */

static uint64_t key[2];
static int keyed;

static struct {
    int armed;
    u32_t lip, rip;
    u16_t lport, rport;
    u32_t isn;
} reuse;

void lstack_tcp_tw_reuse(const struct tcp_pcb *tw)
{
    reuse.armed = 1;
    reuse.lip = ip4_addr_get_u32(ip_2_ip4(&tw->local_ip));
    reuse.rip = ip4_addr_get_u32(ip_2_ip4(&tw->remote_ip));
    reuse.lport = tw->local_port;
    reuse.rport = tw->remote_port;
    reuse.isn = tw->snd_nxt + 65535u + 2u;
}

#define ROTL(x, b) (uint64_t)(((x) << (b)) | ((x) >> (64 - (b))))
#define SIPROUND                                                                                              \
    do {                                                                                                      \
        v0 += v1; v1 = ROTL(v1, 13); v1 ^= v0; v0 = ROTL(v0, 32);                                             \
        v2 += v3; v3 = ROTL(v3, 16); v3 ^= v2;                                                                \
        v0 += v3; v3 = ROTL(v3, 21); v3 ^= v0;                                                                \
        v2 += v1; v1 = ROTL(v1, 17); v1 ^= v2; v2 = ROTL(v2, 32);                                             \
    } while (0)

static void key_init(void)
{
    if (keyed)
        return;
    if (getrandom(key, sizeof(key), 0) != sizeof(key)) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        key[0] ^= (uint64_t)ts.tv_nsec * 0x9e3779b97f4a7c15ull;
        key[1] ^= (uint64_t)(uintptr_t)&ts;
    }
    keyed = 1;
}

/* SipHash-2-4 of two 64-bit words (the message is exactly 16 bytes) under
 * this copy's key. */
uint64_t lstack_port_siphash16(uint64_t m0, uint64_t m1)
{
    key_init();
    uint64_t v0 = 0x736f6d6570736575ull ^ key[0], v1 = 0x646f72616e646f6dull ^ key[1];
    uint64_t v2 = 0x6c7967656e657261ull ^ key[0], v3 = 0x7465646279746573ull ^ key[1];
    uint64_t m[3] = {m0, m1, (uint64_t)16 << 56};
    for (int i = 0; i < 3; i++) {
        v3 ^= m[i];
        SIPROUND;
        SIPROUND;
        v0 ^= m[i];
    }
    v2 ^= 0xff;
    SIPROUND;
    SIPROUND;
    SIPROUND;
    SIPROUND;
    return v0 ^ v1 ^ v2 ^ v3;
}

u32_t lstack_tcp_isn(const struct ip4_addr *lip, u16_t lport, const struct ip4_addr *rip, u16_t rport)
{
    if (reuse.armed) {
        reuse.armed = 0;
        if (reuse.lip == ip4_addr_get_u32(lip) && reuse.rip == ip4_addr_get_u32(rip) && reuse.lport == lport &&
            reuse.rport == rport)
            return reuse.isn;
    }
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    uint32_t m = (uint32_t)(((uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec) / 4000u);
    uint64_t f = lstack_port_siphash16((uint64_t)ip4_addr_get_u32(lip) << 32 | ip4_addr_get_u32(rip),
                           (uint64_t)lport << 16 | rport);
    return m + (uint32_t)f;
}
