/*
 * test_tcp_connect_rto.c - the RTO a connection starts with after a
 * connect whose SYNs were lost (lstack/sock/tcp_connect_timer.c): 3 s
 * and no retransmission counted, as Linux. Two stacks on an in-memory wire
 * in real time, about 15-20 s; TAP output.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "nic/nic.h"
#include "mem_nic.h"
#include "sock/lsock.h"
#include "sock/lsock_priv.h"
#include "pair_bed.h"
#include "pair_pump.h"
#include "raw_tcp.h"

/*
 * The connect timer stretches the pcb's RTO to Linux's doubled SYN
 * intervals. Once the SYN-ACK comes, the connection must not keep that RTO
 * (else, after 7.7 s of lost SYNs, the first lost data segment is sent
 * again 4 s later, then 64 s): as Linux (RFC 6298 5.7,
 * TCP_TIMEOUT_FALLBACK), 3 s and no retransmissions counted until an RTT
 * sample. Two lwIP stacks on one in-memory wire (pair_bed), driven in real
 * time: the client's SYNs are dropped for 7.7 s (several retransmissions
 * whatever the host's tcp_syn_linear_timeouts), then its first data
 * segment and the tail loss probe that repeats it are dropped. Checks:
 * after the connect TCP_INFO's RTO is 3 s and its retransmissions 0; the data goes out again 2.5-3.8 s after
 * its first copy (lwIP's 50 ms tick, a loaded machine; the bug gave 4 s or
 * more). About 15-20 s.
 */

static struct pair_bed bed;
static double t0;
static int drop_syn = 1, drop_data = 0, data_seen = 0, syns = 0;
static double data_t[4];

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* frames the client (stack a) sends: drop its SYNs, then its data */
static bool tap_a(void *ctx, const uint8_t *frame, uint16_t len)
{
    (void)ctx;
    struct raw_seg g;
    if (raw_tcp_parse(frame, len, &g) != 0)
        return true;
    if ((g.flags & 0x02) && !(g.flags & 0x10)) {
        syns++;
        printf("# SYN at %.0f ms%s\n", now() - t0, drop_syn ? " (dropped)" : "");
        return !drop_syn;
    }
    if (g.len > 0) {
        if (data_seen < 4)
            data_t[data_seen] = now() - t0;
        data_seen++;
        printf("# data (%u bytes) at %.0f ms%s\n", g.len, now() - t0, drop_data ? " (dropped)" : "");
        if (drop_data) {
            drop_data--;
            return false;
        }
    }
    return true;
}

int main(void)
{
    int failed = 0;
    if (pair_bed_open(&bed, "tcp_conn_count = 16;", "tcp_conn_count = 16;") != 0) {
        printf("FAIL: pair_bed_open\n");
        return 1;
    }
    nic_mem_set_tap(bed.na, tap_a, NULL);
    pair_pump(bed.a, bed.b, 10);
    struct lsock *l = NULL, *c = NULL;
    if (lsock_new(bed.b, &l) || lsock_bind(l, htonl(INADDR_ANY), htons(7000)) || lsock_listen(l, 4)) {
        printf("FAIL: listener on stack b\n");
        return 1;
    }
    t0 = now();
    if (lsock_new(bed.a, &c) || lsock_connect(c, bed.addr_b, htons(7000)) != -EINPROGRESS) {
        printf("FAIL: connect from stack a\n");
        return 1;
    }
    struct lsock_tcpinfo ti;
    while (now() - t0 < 40000) {
        if (drop_syn && now() - t0 > 7700)
            drop_syn = 0;
        pair_pump(bed.a, bed.b, 1);
        usleep(500);
        lsock_pcb_info(c, &ti);
        if (ti.state == LSOCK_TCP_ESTABLISHED)
            break;
    }
    lsock_pcb_info(c, &ti);
    printf("# connected at %.0f ms after %d SYNs: rto %u us, retransmits %u\n", now() - t0, syns, ti.rto_us,
           ti.retransmits);
    if (ti.state != LSOCK_TCP_ESTABLISHED) {
        printf("FAIL: not connected after 40 s (%d SYNs)\n", syns);
        return 1;
    }
    if (syns < 4) {
        printf("FAIL: %d SYNs before the connect, want 4 or more (the check needs retransmitted SYNs)\n", syns);
        failed++;
    }
    if (ti.rto_us != 3000000u || ti.retransmits != 0) {
        printf("FAIL: after the connect rto %u us retransmits %u, want 3000000 us (RFC 6298 5.7) and 0\n", ti.rto_us,
               ti.retransmits);
        failed++;
    } else {
        printf("ok 1 - after the connect: rto 3 s, retransmits 0\n");
    }
    pair_pump(bed.a, bed.b, 20);
    drop_data = 2; /* the segment and its tail loss probe */
    double ts = now();
    char buf[100] = "x";
    struct iovec iov = {buf, sizeof buf};
    ssize_t n = lsock_send(c, &iov, 1, 0);
    while (data_seen < 3 && now() - ts < 20000) {
        pair_pump(bed.a, bed.b, 1);
        usleep(500);
    }
    double gap = data_seen > 2 ? data_t[2] - data_t[0] : -1;
    printf("# send %zd: data at %.0f ms, its probe at %.0f ms, the RTO's copy at %.0f ms: %.0f ms later\n", n,
           data_t[0], data_seen > 1 ? data_t[1] : -1, data_seen > 2 ? data_t[2] : -1, gap);
    if (gap < 2500 || gap > 3800) {
        printf("FAIL: the lost data segment was sent again by its RTO %.0f ms after it, want 3000 (2500-3800)\n", gap);
        failed++;
    } else {
        printf("ok 2 - the lost data segment sent again by its RTO %.0f ms later\n", gap);
    }
    lsock_close(c);
    lsock_close(l);
    pair_pump(bed.a, bed.b, 20);
    pair_bed_close(&bed);
    return failed ? 1 : 0;
}
