/*
 * pkt_fanout.h - keep the kernel from reassembling IPv4 fragments in front
 * of the stack on DPDK's net_af_packet port.
 *
 * Outside the window a PACKET_FANOUT request is left as it is: an
 * application's own packet sockets keep what they asked for.
 *
 * Pure apart from one thread-local flag. Any thread.
 * Design: docs/design.md#ip-fragments-on-af_packet-the-fanout-window
 */
#ifndef LSTACK_PKT_FANOUT_H
#define LSTACK_PKT_FANOUT_H

#include <stdbool.h>
#include <sys/socket.h>

/*
 * DPDK 22.11's af_packet PMD joins each of its packet sockets to a fanout
 * group with PACKET_FANOUT_FLAG_DEFRAG, and no devarg turns that off. The
 * kernel of the port's namespace then reassembles every fragmented IPv4
 * datagram (ip_check_defrag, under that namespace's ipfrag_* limits) before
 * the packet ring sees it, and the ring truncates whatever does not fit its
 * frame (framesz 2048: about 1980 bytes of frame). A 2000-byte ping reached
 * the stack as one truncated frame, which the frame filter rightly calls
 * malformed; a 1600-byte one arrived whole but unfragmented, so lwIP's
 * reassembly, its bounds and its counters were never on the path.
 *
 * The fix: while the stack's EAL is starting (the PMD opens its sockets in
 * its probe, inside rte_eal_init), the process's setsockopt clears
 * PACKET_FANOUT_FLAG_DEFRAG from a PACKET_FANOUT request, so fragments reach
 * the ring (and lwIP) as they are on the wire, as they do on net_af_xdp and
 * on a NIC. liblstack.so's setsockopt (posix/socket_calls.c) and lstackd's
 * (tools/lstackd_sockopt.c) call pkt_fanout_fix on the way to libc.
 */

/* Open (on true) or close the window on the calling thread: the thread that
 * runs the EAL's start. */
void pkt_fanout_nodefrag(bool on);

/* The option value setsockopt(level, name, val, len) should pass to the
 * kernel: val itself, or, for a PACKET_FANOUT request with
 * PACKET_FANOUT_FLAG_DEFRAG made while the window is open on this thread,
 * *scratch holding the same request without that flag. */
const void *pkt_fanout_fix(int level, int name, const void *val, socklen_t len, int *scratch);

#endif
