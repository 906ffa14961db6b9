/*
 * lwipopts.h - lstack's configuration of lwIP 2.1.3 (built by
 * lstack/stack/lwip/meson.build from Debian's lwip source package).
 *
 * lwIP here is a raw-API TCP/IPv4 stack driven by one thread: NO_SYS, no
 * tcpip thread, no netconn or socket API (lstack's own sock layer is the
 * socket API), one netif per copy (each stack loads a private copy of the
 * library, lwip_load.c). Every choice below says why.
 */
#ifndef LSTACK_LWIPOPTS_H
#define LSTACK_LWIPOPTS_H

/*
 * Per-stack values. lwIP reads its window and buffer sizes from macros; in
 * the library (LSTACK_LWIP_CORE) those macros name variables of the copy,
 * set by lstack_lwip_configure (lwip_port.h) from lstack.conf before
 * lwip_init. They are written `(var ? var : default)`: C code sees the
 * variable; lwIP's #if sanity checks, where an identifier counts as 0, see
 * the compile-time default (so the checks still check the defaults). Code
 * outside the library must not use them (it gets an undeclared identifier
 * that says so): the sock layer reads the stack's own copy of the values.
 */

/* glibc's <netinet/tcp.h> defines TCP_MSS (a socket option, 512) as well;
 * include it first and let lwIP's meaning win, so one file may include both
 * (the guard keeps a later include from redefining it). */
#include <netinet/tcp.h>
#undef TCP_MSS

#include "port/lwip_port.h"

/* ---- platform ---- */
#define NO_SYS 1
#define SYS_LIGHTWEIGHT_PROT 0     /* one thread per copy */
#define LWIP_NETCONN 0
#define LWIP_SOCKET 0
#define LWIP_TIMERS 1
#define LWIP_SUPPORT_CUSTOM_PBUF 1 /* received frames stay in their mbufs (stack/netif.c) */
#define LWIP_SINGLE_NETIF 1        /* one port per stack: no route lookup */
#define LWIP_HOOK_FILENAME "port/lwip_hooks.h"

/* ---- memory: lwIP's heap and pools come from the copy's arena ----
 * (port/lwip_mem.c: size classes carved from one reservation sized from
 * tcp_conn_count and the buffer keys; no libc malloc on the data path). */
#define MEM_LIBC_MALLOC 1
#define MEMP_MEM_MALLOC 1
#define MEM_ALIGNMENT 8
#define mem_clib_malloc lstack_lwip_malloc
#define mem_clib_free lstack_lwip_free
#define mem_clib_calloc lstack_lwip_calloc
#ifdef LSTACK_LWIP_CORE
#include <stddef.h>
void *lstack_lwip_malloc(size_t size);
void *lstack_lwip_calloc(size_t n, size_t size);
void lstack_lwip_free(void *p);
#endif

/* ---- protocols: what the stack serves ---- */
#define LWIP_IPV4 1
#define LWIP_IPV6 0
#define LWIP_ARP 1
#define LWIP_ETHERNET 1
#define LWIP_ICMP 1
#define LWIP_RAW 0
#define LWIP_UDP 0
#define LWIP_IGMP 0
#define LWIP_DHCP 0
#define LWIP_AUTOIP 0
#define LWIP_DNS 0
#define IP_FORWARD 0               /* nothing that is not ours is ever routed */
#define LWIP_NETIF_LOOPBACK 0      /* no loopback path (it needs a tcpip thread) */
#define LWIP_HAVE_LOOPIF 0
#define ARP_QUEUEING 1
#define ARP_TABLE_SIZE 64
#define ETHARP_SUPPORT_STATIC_ENTRIES 0

/* Fragments: reassembled with bounded memory and age, and large replies
 * (ICMP) fragmented on the way out. At most IP_REASS_MAX_PBUFS received
 * frames (mbufs of the port's pool, zero-copy) wait for the rest of their
 * datagram: a fragment past that evicts the oldest other datagram (Linux's
 * ipfrag_high_thresh, 4 MiB, evicts too); a datagram incomplete after
 * IP_REASS_MAXAGE s is freed (ip_reass_tmr runs each second; Linux's
 * ipfrag_time is 30 s). Overlapping and duplicate fragments are dropped,
 * as is a datagram past 65535 bytes. docs/reliability.md#ip-fragments. */
#define IP_REASSEMBLY 1
#define IP_FRAG 1
#define IP_REASS_MAXAGE 15
#define IP_REASS_CHECK_OVERLAP 1
#define IP_REASS_FREE_OLDEST 1
/* The frames held: per stack, a quarter of its mbuf pool up to 128
 * (stack.c; lstack_lwip_conf.reass_max_pbufs). */
#define LSTACK_REASS_MAX_PBUFS 128u
#ifdef LSTACK_LWIP_CORE
#include <stdint.h>
extern uint32_t lstack_ip_reass_max_pbufs;
#define IP_REASS_MAX_PBUFS (lstack_ip_reass_max_pbufs ? lstack_ip_reass_max_pbufs : LSTACK_REASS_MAX_PBUFS)
/* Counters (patch 0006, port/ip_reass_stats.c). */
extern uint64_t lstack_reass_fragments, lstack_reass_reassembled, lstack_reass_dropped;
extern uint64_t lstack_reass_timed_out, lstack_reass_evicted;
#define LSTACK_REASS_COUNT(what) (lstack_reass_##what++)
#else
#define IP_REASS_MAX_PBUFS LSTACK_REASS_MAX_PBUFS
#endif

/* ---- checksums: lwIP computes and checks ICMP's only (stack/netif.c) ----
 * The IPv4 header and TCP checksums of what lwIP sends are filled in by the
 * port's offload, or in software by the netif's linkoutput as the frame is
 * copied out (common/inet_csum.c inet_frame_csum_fill: one pass over the
 * frame, where lwIP summed the payload at tcp_write, the pseudo header and
 * TCP header at output and the IPv4 header apart); the IPv4 header and TCP
 * checksums of what arrives are checked by the port or the frame filter.
 * lwIP's TCP check stays compiled in, switched on per netif only while an
 * IPv4 fragment is input (its datagram is checked after reassembly). */
#define LWIP_CHECKSUM_CTRL_PER_NETIF 1
#define CHECKSUM_GEN_IP 0
#define CHECKSUM_GEN_TCP 0
#define CHECKSUM_GEN_ICMP 1
#define CHECKSUM_CHECK_IP 1
#define CHECKSUM_CHECK_TCP 1
#define CHECKSUM_CHECK_ICMP 1
#define LWIP_CHECKSUM_ON_COPY 0    /* no payload sum at tcp_write: linkoutput sums the frame */
/* The sums lwIP does compute: lstack's routine (common/inet_csum.c, 16
 * bytes a step; lwIP's own takes 2), compiled into the library. */
#include "common/inet_csum.h"
#define LWIP_CHKSUM(p, len) inet_csum_native((p), (size_t)(len))

/* ---- TCP ---- */
#define LWIP_TCP 1
#define LWIP_CALLBACK_API 1
#define LWIP_TCP_KEEPALIVE 1
#define SO_REUSE 1
#define TCP_QUEUE_OOSEQ 1
#define LWIP_TCP_SACK_OUT 1        /* tell the peer what arrived out of order */
#define LWIP_TCP_MAX_SACK_NUM 4
#define LWIP_WND_SCALE 1
#define TCP_RCV_SCALE LSTACK_TCP_RCV_SCALE
#define TCP_CALCULATE_EFF_SEND_MSS 1 /* the MSS follows netif->mtu */
#define TCP_MSS LSTACK_TCP_MSS_MAX
#define TCP_OVERSIZE 1460          /* how far a copy-in allocation may be oversized */
#define LWIP_NETIF_TX_SINGLE_PBUF 1 /* a segment is one contiguous buffer */
#define TCP_MSL 30000UL            /* TIME_WAIT lasts 2 x MSL = 60 s, as Linux */
/* Retransmission timers (patch 0009, docs/reliability.md#loss-recovery):
 * lwIP counts RTT and RTO in ticks of its slow timer (2 x TCP_TMR_INTERVAL).
 * lwIP's 250 ms timer made that 500 ms ticks, an RTO of 1-3 s on a LAN and
 * delayed ACKs of up to 250 ms; a 25 ms timer gives 50 ms ticks and delayed
 * ACKs of at most 25 ms (Linux: 40 ms). The RTO is SRTT + 4 x RTTVAR
 * (RFC 6298) with Linux's 200 ms floor, and starts at 1 s (RFC 6298 2.1).
 * Cost: tcp_slowtmr runs 20 times a second instead of twice (it visits
 * only the pcbs that can have something due: LSTACK_TCP_TMR_QUIET below).
 * Every other lwIP timeout is in milliseconds and scales with the tick
 * (the zero-window probes' backoff: LSTACK_TCP_PERSIST_MAX_MS below). */
#define TCP_TMR_INTERVAL 25
#define LSTACK_TCP_TICK_MS (2 * TCP_TMR_INTERVAL) /* that tick: lwIP's TCP_SLOW_INTERVAL */
#define LSTACK_TCP_RTO_MIN_MS 200
#define LSTACK_TCP_RTO_INIT_MS 1000
/* Loss recovery of the sender (patch 0010, docs/reliability.md): the
 * peer's SACK blocks mark what arrived; a segment with LSTACK_TCP_DUPTHRESH
 * SACKed segments above it is sent again at once (RFC 6675), partial ACKs
 * keep the recovery going (RFC 6582), and D-SACKs that show a recovery was
 * caused by reordering undo it and double the connection's threshold, up
 * to LSTACK_TCP_DUPTHRESH_MAX (Linux adapts tp->reordering likewise). */
#define LSTACK_TCP_SACK_RECOVERY 1
/* The threshold starts at 1: a segment with one SACKed segment above it
 * (sent after it) is lost, as Linux's RACK with its reordering window at
 * zero while a connection has shown no reordering; the first D-SACK undo
 * raises it to 2, then 4... (with 3, a hole in a 4-5 segment
 * window waited for the tail loss probe or the RTO; docs/reliability.md,
 * "The corrupt profile on a quieter machine"). */
#ifndef LSTACK_TCP_DUPTHRESH
#define LSTACK_TCP_DUPTHRESH 1
#endif
#define LSTACK_TCP_DUPTHRESH_MAX 16
/* ... and a tail loss probe after 2 slow ticks (50-100 ms) without an ACK. */
#define LSTACK_TCP_TLP_TICKS 2
/* ... also during the go-back-N after a timeout (patch 0013): a lost
 * retransmission with nothing else in flight waits 100 ms, not the doubled
 * RTO. */
#ifndef LSTACK_TCP_TLP_IN_RTO
#define LSTACK_TCP_TLP_IN_RTO 1
#endif
/* A timeout requeues the segments for the go-back-N in sequence order
 * (patch 0011: segments waiting on unsent to be sent again no longer end
 * up behind higher ones, which could stall a connection for good). */
#ifndef LSTACK_TCP_REQUEUE_SORTED
#define LSTACK_TCP_REQUEUE_SORTED 1
#endif
/* SACK blocks keep marking segments during the go-back-N after a timeout,
 * and a segment sent since the timeout is sent again at once when
 * LSTACK_TCP_DUPTHRESH segments sent after it are SACKed (patch 0014), not
 * at the probe or the doubled RTO. */
#ifndef LSTACK_TCP_SACK_IN_RTO
#define LSTACK_TCP_SACK_IN_RTO 1
#endif
/* Out-of-order data is dropped after 20 s without an incoming segment
 * (patch 0012); lwIP's 6 x RTO was 1.5 s with the RTO above, shorter than
 * a peer's backoff after its repair of a hole is lost twice. */
#define LSTACK_TCP_OOSEQ_TIMEOUT_MS 20000u
/* Zero-window probes as Linux's (patch 0019): a segment without data at
 * snd_una - 1, which every receiver answers with its window (lwIP's carried
 * a byte past the window, which a Linux receiver holding unread data
 * drops, and moved snd_nxt past it, which made every later ACK
 * unacceptable to the peer). The first probe one RTO after the window
 * closed, the wait doubled after each, at most 120 s (Linux's
 * tcp_probe0_when, TCP_RTO_MAX); given up after 15 probes in a row without
 * an answer (Linux's tcp_retries2). A pure ACK's sequence number stays
 * inside the peer's window even when data sent earlier is past it
 * (patch 0026, Linux's tcp_acceptable_seq). */
#define LSTACK_TCP_PERSIST_MAX_MS 120000u
#define LSTACK_TCP_PERSIST_MAX_PROBES 15
/* tcp_slowtmr passes by the pcbs that have nothing due before a tick it
 * computes (patch 0017): its walk costs one comparison per idle pcb, not
 * lwIP's checks and a tcp_output call, and no timeout moves. */
#define LSTACK_TCP_TMR_QUIET 1 /* lstack_tcp_tmr_wake is part of lwip_api.def: not optional */
/* A peer's MSS option below 48 is raised to 48 (patch 0002; Linux's
 * tcp_min_snd_mss): MSS 1 would turn a write into 1-byte segments. */
#define LSTACK_TCP_MIN_SND_MSS 48
/* As Linux (patches 0020-0025, tests/conformance): a RST that answers a
 * segment with ACK is a bare RST from that ACK, window 0; an ACK of data
 * not yet sent drops its segment; an option of the wrong length is
 * skipped, not the end of the options, and MSS 0 is no MSS; data over the
 * peer's FIN resets the connection; after the peer's FIN a RST at the
 * FIN's sequence number is taken; a segment without ACK is dropped. */
#define LSTACK_TCP_RST_ANSWER 1
#define LSTACK_TCP_ACK_UNSENT_DROP 1
#define LSTACK_TCP_OPT_SKIP_BAD_LEN 1
#define LSTACK_TCP_DATA_PAST_FIN 1
#define LSTACK_TCP_RST_AT_FIN 1
#define LSTACK_TCP_NO_ACK_DROP 1
/* A SYN beyond a TIME_WAIT connection's rcv_nxt opens a new connection
 * on that 4-tuple (patch 0003; RFC 6191, Linux's TCP_TW_SYN). */
#define LSTACK_TCP_TW_REUSE 1
/* A listen pcb counts its half-open (SYN_RCVD) connections in
 * accepts_pending and answers no SYN past its backlog: the SYN queue
 * (port/tcp_syn.c counts what it drops, and refuses a SYN with a RST when
 * the stack has no room for another socket). */
#define TCP_LISTEN_BACKLOG 1
/* ... up to listen()'s backlog capped at 4096 (lstack/sock/tcp_sock.c):
 * the backlog fields are 16-bit (patch 0004). */
#define LSTACK_TCP_BACKLOG_U16 1
#define LWIP_DISABLE_TCP_SANITY_CHECKS 1 /* they compare per-stack values */
/* One output (so one ACK) per connection per receive burst of more than
 * one frame: patch 0018 and port/tcp_rx_burst.c. */
#define LSTACK_TCP_OUTPUT_BURST 1
/* Segments of many MSS where the stack's port cuts them (TSO): patch 0008
 * and port/tcp_tso.c; off at run time unless lstack_lwip_conf.tso_max is
 * set (the port offers TSO and checksum offload). */
#define LSTACK_TCP_TSO 1

#define LSTACK_TCP_WND_DEFAULT (256u * 1024u)
#define LSTACK_TCP_SND_BUF_DEFAULT (256u * 1024u)
#ifdef LSTACK_LWIP_CORE
#include <stdint.h>
/* port/lwip_port.c; set by lstack_lwip_configure, never 0: they start at
 * the defaults below (lwip_port.c's initializers), and configure only
 * stores values it checked to be positive. So each use is one load (they
 * were "value ? value : default", a test on every use: tcp_write,
 * tcp_receive and the window updates read them per segment). */
extern uint32_t lstack_tcp_wnd, lstack_tcp_snd_buf, lstack_tcp_snd_queuelen;
extern uint32_t lstack_tcp_sndlowat, lstack_tcp_sndqueuelowat, lstack_tcp_ooseq_max;
#define LSTACK_TCP_SND_QUEUELEN_DEFAULT 1024u
#define LSTACK_TCP_SNDLOWAT_DEFAULT 8192u
#define LSTACK_TCP_SNDQUEUELOWAT_DEFAULT 512u
#define LSTACK_TCP_OOSEQ_MAX_DEFAULT 256u
/* lwIP's init.c checks TCP_WND and TCP_SND_QUEUELEN in #if, where a
 * variable's name counts 0: LSTACK_PP_DEFAULT(d) is d there (lstack_c_one,
 * an enum constant, is an unknown name to #if: 0) and 0 in C (1 - 1), so
 * the #if sees the default and the code the variable alone. */
enum { lstack_c_one = 1 };
#define LSTACK_PP_DEFAULT(d) ((1u - lstack_c_one) * (d))
#define TCP_WND (lstack_tcp_wnd + LSTACK_PP_DEFAULT(LSTACK_TCP_WND_DEFAULT))
#define TCP_SND_BUF (lstack_tcp_snd_buf + LSTACK_PP_DEFAULT(LSTACK_TCP_SND_BUF_DEFAULT))
#define TCP_SND_QUEUELEN (lstack_tcp_snd_queuelen + LSTACK_PP_DEFAULT(LSTACK_TCP_SND_QUEUELEN_DEFAULT))
#define TCP_SNDLOWAT (lstack_tcp_sndlowat + LSTACK_PP_DEFAULT(LSTACK_TCP_SNDLOWAT_DEFAULT))
#define TCP_SNDQUEUELOWAT (lstack_tcp_sndqueuelowat + LSTACK_PP_DEFAULT(LSTACK_TCP_SNDQUEUELOWAT_DEFAULT))
/* When tcp_recved sends a window update at once (used there only, where
 * pcb is the connection): lwIP's TCP_WND/4 or 4 x TCP_MSS would be 35 KiB
 * with the jumbo TCP_MSS cap; two real segments keep the sender moving. */
#define TCP_WND_UPDATE_THRESHOLD LWIP_MIN(TCP_WND / 4, 2u * (u32_t)pcb->mss)
#define TCP_OOSEQ_MAX_BYTES TCP_WND
#define TCP_OOSEQ_MAX_PBUFS (lstack_tcp_ooseq_max + LSTACK_PP_DEFAULT(LSTACK_TCP_OOSEQ_MAX_DEFAULT))
#else
#define TCP_WND TCP_WND_is_per_stack_see_struct_stack_tcp
#define TCP_SND_BUF TCP_SND_BUF_is_per_stack_see_struct_stack_tcp
#define TCP_SND_QUEUELEN TCP_SND_QUEUELEN_is_per_stack_see_struct_stack_tcp
#define TCP_SNDLOWAT TCP_SNDLOWAT_is_per_stack_see_struct_stack_tcp
#define TCP_SNDQUEUELOWAT TCP_SNDQUEUELOWAT_is_per_stack_see_struct_stack_tcp
#endif

/* Ephemeral ports: the copy's range, Linux's net.ipv4.ip_local_port_range
 * as the stack read it at start (patch 0007 makes the range a run-time
 * value; END is the range's last port). */
#define LSTACK_TCP_PORT_RANGE 1
#ifdef LSTACK_LWIP_CORE
extern uint16_t lstack_tcp_port_lo, lstack_tcp_port_hi;
#define TCP_LOCAL_PORT_RANGE_START lstack_tcp_port_lo
#define TCP_LOCAL_PORT_RANGE_END lstack_tcp_port_hi
#define TCP_ENSURE_LOCAL_PORT_RANGE(port) \
    ((u16_t)(lstack_tcp_port_lo + (u32_t)(port) % ((u32_t)lstack_tcp_port_hi - lstack_tcp_port_lo + 1u)))
#endif

/* ---- demultiplexing: a hash of the 4-tuple (port/pcb_hash.c, patch 0001) ---- */
#define LSTACK_TCP_PCB_HASH 1

/* ---- statistics: lstack counts for itself (stackctl) ---- */
#define LWIP_STATS 0

#endif
