/*
 * steer.c - see steer.h: the Toeplitz hash, the queue of a flow, and a
 * local port whose flow reaches a chosen queue.
 *
 * The hash walks the input a byte at a time with a 64-bit window of the
 * key (the 32 bits used for the current input bit are the window's top
 * half), so it needs no table and no setup: about 100 shifts per 12-byte
 * tuple, cheap next to a connect(). A per-key lookup table (16 KiB for 12
 * input bytes) would make the hash a dozen XORs; rejected until a profile
 * asks for it (the hash runs once per outgoing connection attempt, and
 * about nb_queues times per pick).
 */
#include "nic/steer.h"

#include <arpa/inet.h>
#include <errno.h>
#include <string.h>

uint32_t nic_toeplitz(const uint8_t *key, size_t key_len, const uint8_t *data, size_t len)
{
    uint32_t hash = 0;
    /* window: key bits [i*8, i*8 + 64) for input byte i, zero past the key */
    uint64_t window = 0;
    for (size_t k = 0; k < 8; k++)
        window = window << 8 | (k < key_len ? key[k] : 0);
    for (size_t i = 0; i < len; i++) {
        uint8_t b = data[i];
        for (int bit = 0; bit < 8; bit++) /* branch-free: input bits are random */
            hash ^= (uint32_t)(window >> (32 - bit)) & (0u - ((b >> (7 - bit)) & 1u));
        size_t next = i + 8;
        window = window << 8 | (next < key_len ? key[next] : 0);
    }
    return hash;
}

uint32_t nic_steer_hash_tcp4(const struct nic_steer *s, uint32_t src, uint32_t dst, uint16_t sport, uint16_t dport)
{
    uint8_t in[12];
    memcpy(in, &src, 4);
    memcpy(in + 4, &dst, 4);
    memcpy(in + 8, &sport, 2);
    memcpy(in + 10, &dport, 2);
    return nic_toeplitz(s->key, s->key_len, in, sizeof(in));
}

int nic_steer_queue_tcp4(const struct nic_steer *s, uint32_t src, uint32_t dst, uint16_t sport, uint16_t dport)
{
    switch (s->kind) {
    case NIC_STEER_ONE:
        return 0;
    case NIC_STEER_TOEPLITZ:
        return s->reta[nic_steer_hash_tcp4(s, src, dst, sport, dport) % s->reta_size];
    case NIC_STEER_OPAQUE:
    default:
        return -1;
    }
}

int nic_steer_check(const struct nic_steer *s)
{
    if (s->nb_queues == 0 || s->nb_queues > NIC_STEER_QUEUES_MAX)
        return -EINVAL;
    switch (s->kind) {
    case NIC_STEER_ONE:
        return s->nb_queues == 1 ? 0 : -EINVAL;
    case NIC_STEER_OPAQUE:
        return 0;
    case NIC_STEER_TOEPLITZ:
        if (s->key_len < 16 || s->key_len > NIC_STEER_KEY_MAX || s->reta_size == 0 ||
            s->reta_size > NIC_STEER_RETA_MAX)
            return -EINVAL;
        for (unsigned i = 0; i < s->reta_size; i++)
            if (s->reta[i] >= s->nb_queues)
                return -EINVAL;
        return 0;
    default:
        return -EINVAL;
    }
}

int nic_steer_pick_port(const struct nic_steer *s, uint32_t local, uint32_t remote, uint16_t rport, unsigned queue,
                        uint16_t lo, uint16_t hi, uint32_t start, nic_steer_in_use_fn in_use, void *ctx,
                        bool *steered)
{
    if (lo > hi || queue >= s->nb_queues)
        return -EINVAL;
    uint32_t span = (uint32_t)hi - lo + 1;
    uint32_t off = start % span;
    bool exact = s->kind != NIC_STEER_OPAQUE;
    for (uint32_t k = 0; k < span; k++) {
        uint16_t port = (uint16_t)(lo + (off + k) % span);
        if (s->kind == NIC_STEER_TOEPLITZ) {
            uint16_t be = htons(port);
            /* the reply: remote:rport -> local:port */
            if (nic_steer_queue_tcp4(s, remote, local, rport, be) != (int)queue)
                continue;
        }
        if (in_use != NULL && in_use(ctx, port))
            continue;
        *steered = exact;
        return port;
    }
    return -EADDRNOTAVAIL;
}
