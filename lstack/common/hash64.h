/*
 * hash64.h - a 64-bit value mixed so that every input bit moves about half
 * the output bits (murmur3's 64-bit finalizer): the last step of the
 * 4-tuple hashes of lwIP's PCB hash (stack/lwip/port/pcb_hash.c) and of
 * the stacks' flow directories (stack/flow_dir.c), whose keys are seeded
 * per table so that a peer cannot choose colliding 4-tuples. Pure.
 */
#ifndef LSTACK_HASH64_H
#define LSTACK_HASH64_H

#include <stdint.h>

static inline uint64_t hash64_mix(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ull;
    x ^= x >> 33;
    return x;
}

#endif
