/*
 * test_frame_flow.c - which stack a frame belongs to, as a process with
 * several stacks sees it (filter/frame_flow.h): a TCP segment's 4-tuple
 * from the receiver's side, ARP replies, and what is left to the stack that
 * received it. Frames are built byte by byte; no DPDK, no lwIP. TAP output.
 */
#include <arpa/inet.h>
#include <string.h>

#include "filter/frame_flow.h"
#include "tap.h"

static uint8_t frame[128];

static void put16(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t)(v >> 8);
    p[1] = (uint8_t)v;
}

/* Ethernet + IPv4 (ihl words) + TCP ports from 10.0.0.2:40000 to
 * 10.0.0.1:6379; returns the frame's length. */
static size_t tcp_frame(unsigned ihl, uint16_t frag)
{
    memset(frame, 0, sizeof(frame));
    put16(frame + 12, 0x0800);
    uint8_t *ip = frame + 14;
    ip[0] = (uint8_t)(0x40 | ihl);
    put16(ip + 6, frag);
    ip[9] = 6;
    uint32_t src = inet_addr("10.0.0.2"), dst = inet_addr("10.0.0.1");
    memcpy(ip + 12, &src, 4);
    memcpy(ip + 16, &dst, 4);
    uint8_t *tcp = ip + ihl * 4;
    put16(tcp, 40000);
    put16(tcp + 2, 6379);
    return 14 + ihl * 4 + 20;
}

static size_t arp_frame(uint16_t op)
{
    memset(frame, 0, sizeof(frame));
    put16(frame + 12, 0x0806);
    uint8_t *a = frame + 14;
    put16(a, 1);
    put16(a + 2, 0x0800);
    a[4] = 6;
    a[5] = 4;
    put16(a + 6, op);
    return 14 + 28;
}

static void t_tcp_tuple(void)
{
    struct frame_flow_tuple t = {0};
    enum frame_flow_kind k = frame_flow_classify(frame, tcp_frame(5, 0x4000 /* DF */), &t);
    checkf(k == FRAME_FLOW_TCP4, "TCP segment classified TCP4 (got %d)", (int)k);
    checkf(t.local_ip == inet_addr("10.0.0.1") && t.remote_ip == inet_addr("10.0.0.2"),
           "local is the destination, remote the source, network order (local %08x remote %08x)", t.local_ip,
           t.remote_ip);
    checkf(t.local_port == 6379 && t.remote_port == 40000, "ports in host order (local %u remote %u)",
           t.local_port, t.remote_port);
}

static void t_ip_options(void)
{
    struct frame_flow_tuple t = {0};
    enum frame_flow_kind k = frame_flow_classify(frame, tcp_frame(6, 0), &t);
    checkf(k == FRAME_FLOW_TCP4 && t.local_port == 6379 && t.remote_port == 40000,
           "ports found past IPv4 options (kind %d, local %u, remote %u)", (int)k, t.local_port, t.remote_port);
}

static void t_fragments(void)
{
    struct frame_flow_tuple t;
    size_t len = tcp_frame(5, 0x2000); /* MF: the first fragment */
    checkf(frame_flow_classify(frame, len, &t) == FRAME_FLOW_OTHER, "first fragment (MF) left to the receiver");
    len = tcp_frame(5, 0x0010); /* offset 128 */
    checkf(frame_flow_classify(frame, len, &t) == FRAME_FLOW_OTHER, "later fragment left to the receiver");
}

static void t_truncated(void)
{
    struct frame_flow_tuple t;
    tcp_frame(5, 0);
    checkf(frame_flow_classify(frame, 14 + 20 + 3, &t) == FRAME_FLOW_OTHER, "ports cut short: other");
    checkf(frame_flow_classify(frame, 13, &t) == FRAME_FLOW_OTHER, "shorter than Ethernet: other");
    tcp_frame(15, 0); /* 60 bytes of IPv4 header: past the 58 given below */
    checkf(frame_flow_classify(frame, 14 + 58, &t) == FRAME_FLOW_OTHER, "options past the frame: other");
}

static void t_not_tcp(void)
{
    struct frame_flow_tuple t;
    size_t len = tcp_frame(5, 0);
    frame[14 + 9] = 1; /* ICMP */
    checkf(frame_flow_classify(frame, len, &t) == FRAME_FLOW_OTHER, "ICMP left to the receiver");
}

static void t_arp(void)
{
    struct frame_flow_tuple t;
    checkf(frame_flow_classify(frame, arp_frame(2), &t) == FRAME_FLOW_ARP_REPLY, "ARP reply classified");
    checkf(frame_flow_classify(frame, arp_frame(1), &t) == FRAME_FLOW_OTHER, "ARP request left to the receiver");
    size_t len = arp_frame(2);
    frame[14 + 4] = 8; /* not Ethernet's 6-byte addresses */
    checkf(frame_flow_classify(frame, len, &t) == FRAME_FLOW_OTHER, "ARP of another hardware: other");
    checkf(frame_flow_classify(frame, 14 + 27, &t) == FRAME_FLOW_OTHER, "short ARP: other");
}

int main(void)
{
    t_tcp_tuple();
    t_ip_options();
    t_fragments();
    t_truncated();
    t_not_tcp();
    t_arp();
    return tap_done();
}
