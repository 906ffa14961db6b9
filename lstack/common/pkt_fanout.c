/*
 * pkt_fanout.c - clearing PACKET_FANOUT_FLAG_DEFRAG from the af_packet
 * PMD's fanout request while the stack's EAL starts (see pkt_fanout.h for
 * why and the contract). Called from liblstack.so's and lstackd's
 * setsockopt on the way to libc; one thread-local flag, any thread.
 */
#include "common/pkt_fanout.h"

#include <linux/if_packet.h>
#include <string.h>

#ifndef SOL_PACKET
#define SOL_PACKET 263
#endif

static _Thread_local bool window;

void pkt_fanout_nodefrag(bool on)
{
    window = on;
}

const void *pkt_fanout_fix(int level, int name, const void *val, socklen_t len, int *scratch)
{
    if (level != SOL_PACKET || name != PACKET_FANOUT || !window || val == NULL || len != sizeof(int))
        return val;
    unsigned arg;
    memcpy(&arg, val, sizeof(arg));
    /* The argument is the group id (low 16 bits), mode and flags (high 16);
     * unsigned: the defrag flag shifted lands on an int's sign bit. */
    const unsigned defrag = (unsigned)PACKET_FANOUT_FLAG_DEFRAG << 16;
    if (!(arg & defrag))
        return val;
    arg &= ~defrag;
    memcpy(scratch, &arg, sizeof(arg));
    return scratch;
}
