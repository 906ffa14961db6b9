/*
 * seq_watch.c - see seq_watch.h.
 */
#include "seq_watch.h"

#include <string.h>

static uint32_t rd32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

void seq_watch_set(struct seq_watch *w, uint32_t local_addr, uint16_t local_port, uint16_t peer_port)
{
    memset(w, 0, sizeof(*w));
    w->local_addr = local_addr;
    w->local_port = local_port;
    w->peer_port = peer_port;
}

void seq_watch_frame(struct seq_watch *w, const uint8_t *f, size_t len)
{
    if (w->local_addr == 0 || len < 14 + 20 || f[12] != 0x08 || f[13] != 0x00)
        return;
    const uint8_t *ip = f + 14;
    size_t ihl = (size_t)(ip[0] & 0x0f) * 4;
    size_t total = (size_t)(ip[2] << 8 | ip[3]);
    if (ip[9] != 6 || ihl < 20 || total > len - 14 || total < ihl + 20 || memcmp(ip + 12, &w->local_addr, 4) != 0)
        return;
    const uint8_t *tcp = ip + ihl;
    if (memcmp(tcp, &w->local_port, 2) != 0 || memcmp(tcp + 2, &w->peer_port, 2) != 0)
        return;
    size_t doff = (size_t)(tcp[12] >> 4) * 4;
    uint8_t flags = tcp[13];
    if (doff < 20 || doff > total - ihl || (flags & 0x04)) /* RST: no sequence space */
        return;
    uint32_t seq = rd32(tcp + 4);
    uint32_t end = seq + (uint32_t)(total - ihl - doff) + ((flags & 0x02) ? 1 : 0) + ((flags & 0x01) ? 1 : 0);
    if (!w->seen || (int32_t)(end - w->snd_nxt) > 0)
        w->snd_nxt = end;
    if (flags & 0x10)
        w->rcv_nxt = rd32(tcp + 8);
    w->seen = true;
}
