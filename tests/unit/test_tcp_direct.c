/*
 * test_tcp_direct.c - a unicast TCP segment enters lwIP at tcp_input
 * (stack/netif.c, lwip/port/tcp_input_direct.c), its pbuf as long as the
 * IPv4 header's total length says: a frame padded to Ethernet's 60-byte
 * minimum (as a NIC pads a short frame) carries only its segment's bytes
 * to the application. A's short TCP frames are taken off the wire by a tap
 * and given to B padded with 0xee bytes; B must read exactly what A wrote
 * (a pbuf made from the frame's length would hand B the padding as data,
 * or lwIP would drop the segments as out of sequence). Also: the data
 * arrives whole after the pure ACKs were padded too, and every buffer
 * comes back. No DPDK, no root; TAP output.
 */
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/uio.h>

#include "conf/conf.h"
#include "nic/nic.h"
#include "mem_nic.h"
#include "sock/lsock.h"
#include "stack/stack.h"
#include "pair_conf.h"
#include "pair_pump.h"

#include "tap.h"

#define PORT 7101

static struct nic *peer_b;
static unsigned padded, inject_fail;

/* A's IPv4/TCP frames shorter than 60 bytes: to B padded to 60, instead
 * of as they are. */
static bool tap_a(void *ctx, const uint8_t *f, uint16_t len)
{
    (void)ctx;
    if (len >= 60 || len < 14 + 20 || f[12] != 0x08 || f[13] != 0x00 || f[14 + 9] != IPPROTO_TCP)
        return true;
    uint8_t g[60];
    memcpy(g, f, len);
    memset(g + len, 0xee, sizeof(g) - len);
    if (nic_mem_inject(peer_b, g, sizeof(g)) != 0) {
        inject_fail++;
        return true;
    }
    padded++;
    return false;
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
    peer_b = nb;
    pair_pump(a, b, 10);
    struct lsock *l = NULL, *c = NULL, *s = NULL;
    check(pair_connect(a, b, cb.host_addr, PORT, &l, &c, &s) == 0, "A connects to B");
    if (c != NULL && s != NULL) {
        int one = 1; /* each 1-byte write leaves at once, as its own short frame */
        check(lsock_setsockopt(c, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)) == 0, "TCP_NODELAY on A's socket");
        nic_mem_set_tap(na, tap_a, NULL);
        const char *msg = "abcdefgh";
        char got[64];
        size_t n = 0;
        for (size_t i = 0; i < strlen(msg); i++) {
            struct iovec v = {(void *)(msg + i), 1};
            checkf(lsock_send(c, &v, 1, 0) == 1, "A writes byte %zu", i);
            pair_pump(a, b, 3);
            struct iovec r = {got + n, sizeof(got) - n};
            ssize_t k = lsock_recv(s, &r, 1, 0);
            if (k > 0)
                n += (size_t)k;
        }
        nic_mem_set_tap(na, NULL, NULL);
        checkf(padded >= strlen(msg) && inject_fail == 0, "A's short frames reached B padded to 60 bytes (%u, %u failed)",
               padded, inject_fail);
        checkf(n == strlen(msg) && memcmp(got, msg, n) == 0, "B read exactly A's %zu bytes, no padding (read %zu: %.*s)",
               strlen(msg), n, (int)n, got);
        /* the connection still works both ways after the padded frames */
        char buf[1000];
        memset(buf, 'x', sizeof(buf));
        struct iovec v = {buf, sizeof(buf)};
        check(lsock_send(s, &v, 1, 0) == (ssize_t)sizeof(buf), "B writes 1000 bytes back");
        uint32_t ev = pair_pump_until(a, b, c, EPOLLIN);
        char in[2000];
        struct iovec r = {in, sizeof(in)};
        ssize_t k = (ev & EPOLLIN) ? lsock_recv(c, &r, 1, 0) : -1;
        checkf(k == (ssize_t)sizeof(buf), "A reads B's 1000 bytes (%zd)", k);
    }
    if (s != NULL)
        lsock_close(s);
    if (c != NULL)
        lsock_close(c);
    if (l != NULL)
        lsock_close(l);
    pair_pump(a, b, 20);
    struct stack_stats sb;
    stack_get_stats(b, &sb);
    checkf(sb.nic.mbuf_free == sb.nic.mbuf_total, "B: every receive buffer is back (%llu of %llu free)",
           (unsigned long long)sb.nic.mbuf_free, (unsigned long long)sb.nic.mbuf_total);
    stack_close(a);
    stack_close(b);
    lstack_conf_free(&ca);
    lstack_conf_free(&cb);
    return tap_done();
}
