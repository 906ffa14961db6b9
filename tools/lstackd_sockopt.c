/*
 * lstackd_sockopt.c - lstackd's setsockopt: libc's, except that a
 * PACKET_FANOUT request made while lstackd starts the EAL loses
 * PACKET_FANOUT_FLAG_DEFRAG (common/pkt_fanout.h says why).
 *
 * The executable exports this symbol (tools/meson.build), so the af_packet
 * PMD, which the EAL loads as a plugin, binds to it ahead of libc's; under
 * LD_PRELOAD liblstack.so's setsockopt does the same job.
 * Design: docs/design.md#lstackd-sets-its-one-socket-option-without-the-posix-layer
 */
#include <sys/socket.h>

#include "common/pkt_fanout.h"
#include "common/libc.h"

__attribute__((visibility("default"))) int setsockopt(int fd, int level, int name, const void *val, socklen_t len)
{
    int scratch;
    return libc.setsockopt(fd, level, name, pkt_fanout_fix(level, name, val, len, &scratch), len);
}
