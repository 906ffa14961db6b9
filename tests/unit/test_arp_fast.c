/*
 * test_arp_fast.c - the output fast path (stack/netif.c netif_ip_output):
 * a connection's segments leave with the next hop's MAC as lwIP's ARP
 * table holds it now. Stack A's segments to B are watched on A's port (a
 * tap); B then announces a new MAC (an ARP reply to A, injected into A's
 * receive queue), and A's next segment must go to that MAC, in the same
 * second (before the fast path's once-a-second refresh), so a MAC kept in
 * the fast path's slot instead of read from the ARP entry fails it. Also:
 * every buffer comes back (the batched rx frees). No DPDK, no root; TAP
 * output.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <string.h>
#include <sys/uio.h>

#include "conf/conf.h"
#include "nic/nic.h"
#include "mem_nic.h"
#include "sock/lsock.h"
#include "stack/stack.h"
#include "pair_conf.h"
#include "pair_pump.h"

#include "tap.h"

#define PORT 7100

static const uint8_t new_mac[6] = {0x02, 0x11, 0x22, 0x33, 0x44, 0x55};
static uint8_t last_dst[6];
static unsigned tcp_frames;

/* A's IPv4/TCP frames: note the destination MAC; those to new_mac leave
 * the wire (B would not take them: not its MAC on the memory port). */
static bool tap_a(void *ctx, const uint8_t *f, uint16_t len)
{
    (void)ctx;
    if (len < 14 + 20 || f[12] != 0x08 || f[13] != 0x00 || f[14 + 9] != IPPROTO_TCP)
        return true;
    memcpy(last_dst, f, 6);
    tcp_frames++;
    return memcmp(f, new_mac, 6) != 0;
}

/* An ARP reply from ip_b at mac to A (ip_a at mac_a), both addresses in
 * network order. Returns its length. */
static uint16_t arp_reply(uint8_t *f, const uint8_t *mac, uint32_t ip_b, const uint8_t *mac_a, uint32_t ip_a)
{
    memset(f, 0, 60);
    memcpy(f, mac_a, 6);
    memcpy(f + 6, mac, 6);
    f[12] = 0x08, f[13] = 0x06;                    /* ARP */
    f[14] = 0x00, f[15] = 0x01;                    /* Ethernet */
    f[16] = 0x08, f[17] = 0x00;                    /* IPv4 */
    f[18] = 6, f[19] = 4;
    f[20] = 0x00, f[21] = 0x02;                    /* reply */
    memcpy(f + 22, mac, 6);
    memcpy(f + 28, &ip_b, 4);
    memcpy(f + 32, mac_a, 6);
    memcpy(f + 38, &ip_a, 4);
    return 60;
}

static void send_some(struct lsock *c, struct lsock *s, struct stack *a, struct stack *b)
{
    char buf[100] = "fast path";
    struct iovec v = {buf, sizeof(buf)};
    checkf(lsock_send(c, &v, 1, 0) == (ssize_t)sizeof(buf), "A queues %zu bytes", sizeof(buf));
    pair_pump(a, b, 4);
    char in[256];
    struct iovec r = {in, sizeof(in)};
    (void)lsock_recv(s, &r, 1, 0); /* what reached B (nothing after the MAC change) */
}

int main(void)
{
    struct lstack_conf ca, cb;
    char err[512];
    struct stack *a = NULL, *b = NULL;
    struct nic *na = NULL, *nb = NULL;
    if (pair_conf(&ca, "198.18.0.2", "198.18.0.1", NULL) != 0 ||
        pair_conf(&cb, "198.18.0.1", "198.18.0.2", NULL) != 0) {
        check(0, "configs parse");
        return tap_done();
    }
    if (pair_open_ports(&ca, &cb, &a, &b, &na, &nb, err, sizeof(err)) != 0) {
        printf("# %s\n", err);
        check(0, "stacks open");
        return tap_done();
    }
    uint8_t mac_a[6], mac_b[6];
    stack_mac(a, mac_a);
    stack_mac(b, mac_b);
    pair_pump(a, b, 10);
    struct lsock *l = NULL, *c = NULL, *s = NULL;
    check(pair_connect(a, b, cb.host_addr, PORT, &l, &c, &s) == 0, "A connects to B");
    if (c != NULL && s != NULL) {
        int one = 1; /* each write leaves at once (no Nagle wait for B's delayed ACK) */
        check(lsock_setsockopt(c, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)) == 0, "TCP_NODELAY on A's socket");
        nic_mem_set_tap(na, tap_a, NULL);
        for (int i = 0; i < 3; i++)
            send_some(c, s, a, b);
        checkf(tcp_frames >= 3 && memcmp(last_dst, mac_b, 6) == 0,
               "A's segments go to B's MAC (%u frames, last to %02x:..:%02x)", tcp_frames, last_dst[0],
               last_dst[5]);

        uint8_t f[60];
        uint16_t n = arp_reply(f, new_mac, cb.host_addr, mac_a, ca.host_addr);
        check(nic_mem_inject(na, f, n) == 0, "B's new MAC announced to A");
        pair_pump(a, b, 1);
        unsigned before = tcp_frames;
        char buf[100] = "after";
        struct iovec v = {buf, sizeof(buf)};
        check(lsock_send(c, &v, 1, 0) == (ssize_t)sizeof(buf), "A queues after the change");
        pair_pump(a, b, 1);
        checkf(tcp_frames > before && memcmp(last_dst, new_mac, 6) == 0,
               "A's next segment goes to the new MAC (%u frames since, last to %02x:%02x:%02x:%02x:%02x:%02x)",
               tcp_frames - before, last_dst[0], last_dst[1], last_dst[2], last_dst[3], last_dst[4],
               last_dst[5]);
        nic_mem_set_tap(na, NULL, NULL);
    }
    if (s != NULL)
        lsock_close(s);
    if (c != NULL)
        lsock_close(c);
    if (l != NULL)
        lsock_close(l);
    pair_pump(a, b, 20);
    struct stack_stats sa, sb;
    stack_get_stats(a, &sa);
    stack_get_stats(b, &sb);
    checkf(sb.nic.mbuf_free == sb.nic.mbuf_total,
           "B: every receive buffer is back after its rounds (%llu of %llu free)",
           (unsigned long long)sb.nic.mbuf_free, (unsigned long long)sb.nic.mbuf_total);
    stack_close(a);
    stack_close(b);
    lstack_conf_free(&ca);
    lstack_conf_free(&cb);
    return tap_done();
}
