/*
 * test_stack_group.c - several stacks of one process on one port
 * (stack_group_join and lsock_listen_copy): a server of two stacks, each on
 * one queue of a memory port split the way an RSS NIC splits it
 * (tests/support/mem_rss.h), and a client stack on the other end of the wire.
 *
 * No DPDK port, no root. TAP output.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>

#include "conf/conf.h"
#include "nic/handover.h"
#include "mem_rss.h"
#include "nic/steer.h"
#include "nic/nic.h"
#include "sock/lsock.h"
#include "stack/stack.h"
#include "pair_conf.h"

#include "tap.h"

/*
 *  - ARP replies reach queue 0 only: the stack of queue 1 learns the client
 *    from the copy the stack of queue 0 gives it;
 *  - a listener with a copy on the other stack: connections are accepted on
 *    both stacks, through the one listener, bytes exact;
 *  - connections the server makes from ports bound by hand: replies that
 *    reach the other stack's queue are handed over, none dropped;
 *  - connections the server makes without a bind: each gets a port whose
 *    replies the split puts on its own stack's queue (nothing handed over);
 *  - TCP segments in IPv4 fragments (hashed on their addresses only, so
 *    all reach one queue): the stack that reassembles one gives it to the
 *    stack whose connection it is, which reads it; nothing is reset;
 *  - every buffer comes back.
 */

#define NCONN 16

static struct stack *cli, *srv[2];

/* One round of every stack: the server's the way run-to-wakeup's stack
 * thread runs them (stack_rx takes the inbox, then the queue; the sockets'
 * work first: what the other stack told them from afar). */
static void pump(int rounds)
{
    struct nic_pkt pkts[64];
    for (int r = 0; r < rounds; r++) {
        stack_poll(cli);
        for (int i = 0; i < 2; i++) {
            unsigned n = stack_rx(srv[i], pkts);
            lsock_service(srv[i]);
            stack_round(srv[i], pkts, n);
        }
    }
}

/* Pump until every socket of s[0..n) shows one of events (at most 3000
 * rounds); returns how many do. */
static int pump_until(struct lsock **s, int n, uint32_t events)
{
    int ready = 0;
    for (int r = 0; r < 3000; r++) {
        ready = 0;
        for (int i = 0; i < n; i++)
            ready += (lsock_events(s[i]) & events) != 0;
        if (ready == n)
            break;
        pump(1);
    }
    return ready;
}

static ssize_t put(struct lsock *s, const char *text)
{
    struct iovec v = {.iov_base = (void *)text, .iov_len = strlen(text)};
    return lsock_send(s, &v, 1, 0);
}

static ssize_t get(struct lsock *s, char *buf, size_t len)
{
    struct iovec v = {.iov_base = buf, .iov_len = len - 1};
    ssize_t n = lsock_recv(s, &v, 1, 0);
    buf[n > 0 ? n : 0] = '\0';
    return n;
}

/* Each client sends "ping i", each server socket answers "pong i" with the
 * i it read: returns how many pairs came through byte-exact. */
static int exchange(struct lsock **c, struct lsock **s, int n)
{
    for (int i = 0; i < n; i++) {
        char m[32];
        snprintf(m, sizeof(m), "ping %d", i);
        put(c[i], m);
    }
    pump_until(s, n, EPOLLIN);
    for (int i = 0; i < n; i++) {
        char m[32], r[40];
        get(s[i], m, sizeof(m));
        snprintf(r, sizeof(r), "pong %s", m + 5);
        put(s[i], r);
    }
    pump_until(c, n, EPOLLIN);
    int good = 0;
    for (int i = 0; i < n; i++) {
        char r[40], want[32];
        get(c[i], r, sizeof(r));
        snprintf(want, sizeof(want), "pong %d", i);
        good += strcmp(r, want) == 0;
        if (strcmp(r, want) != 0)
            printf("# pair %d: got '%s', want '%s'\n", i, r, want);
    }
    return good;
}

/* ---- TCP segments in fragments: the client's data segments are taken
 * off the wire by a tap on its port and reach the server's port as two
 * IPv4 fragments each, the last first (the split puts them on the queue of
 * the addresses' hash). */
#define CAP_MAX 16
static struct {
    uint8_t f[CAP_MAX][1514];
    uint16_t len[CAP_MAX];
    unsigned n;
} cap;
static struct nic *srv_port, *na_port;

static uint16_t rd16(const uint8_t *p)
{
    return (uint16_t)(p[0] << 8 | p[1]);
}

static bool tap_cli(void *ctx, const uint8_t *f, uint16_t len)
{
    (void)ctx;
    if (len < 54 || rd16(f + 12) != 0x0800 || f[14 + 9] != IPPROTO_TCP)
        return true;
    const uint8_t *ip = f + 14;
    size_t hl = (size_t)(ip[0] & 0x0f) * 4, tot = rd16(ip + 2), thl = (size_t)(ip[hl + 12] >> 4) * 4;
    if (tot <= hl + thl + 8 || cap.n == CAP_MAX || len > sizeof(cap.f[0]))
        return true; /* an ACK, or too short to cut: passes whole */
    memcpy(cap.f[cap.n], f, len);
    cap.len[cap.n++] = len;
    return false;
}

/* One fragment of the captured frame f: payload bytes [off, off + n) of
 * its IPv4 datagram, MF set if more. */
static int inject_frag(const uint8_t *f, uint32_t off, uint32_t n, bool more)
{
    uint8_t g[1514];
    const uint8_t *ip = f + 14;
    memcpy(g, f, 14 + 20);
    uint8_t *gip = g + 14;
    gip[2] = (uint8_t)((20 + n) >> 8);
    gip[3] = (uint8_t)(20 + n);
    uint16_t fo = (uint16_t)((more ? 0x2000 : 0) | (off / 8));
    gip[6] = (uint8_t)(fo >> 8);
    gip[7] = (uint8_t)fo;
    gip[10] = gip[11] = 0;
    uint32_t sum = 0;
    for (int i = 0; i < 20; i += 2)
        sum += rd16(gip + i);
    while (sum >> 16)
        sum = (sum & 0xffff) + (sum >> 16);
    gip[10] = (uint8_t)(~sum >> 8);
    gip[11] = (uint8_t)~sum;
    memcpy(gip + 20, ip + 20 + off, n);
    return nic_mem_inject(srv_port, g, (uint16_t)(14 + 20 + n));
}

/* Send each captured segment (no IP options: lwIP sends none) to the
 * server as two fragments, the last first. */
static unsigned fragment_captured(void)
{
    unsigned sent = 0;
    for (unsigned i = 0; i < cap.n; i++) {
        const uint8_t *ip = cap.f[i] + 14;
        uint32_t n = rd16(ip + 2) - 20u, a = (n / 2) & ~7u;
        sent += inject_frag(cap.f[i], a, n - a, false) == 0 && inject_frag(cap.f[i], 0, a, true) == 0;
    }
    cap.n = 0;
    return sent;
}

/* Client socket c sends text to server socket s in fragments; true if s
 * read it whole and both are still connected. */
static bool frag_send(struct lsock *c, struct lsock *s, const char *text, unsigned *segs)
{
    nic_mem_set_tap(na_port, tap_cli, NULL);
    put(c, text);
    char buf[128];
    size_t got = 0, want = strlen(text);
    for (int r = 0; r < 300 && got < want; r++) {
        stack_poll(cli);
        *segs += fragment_captured();
        struct nic_pkt pkts[64];
        for (int i = 0; i < 2; i++) {
            unsigned n = stack_rx(srv[i], pkts);
            stack_round(srv[i], pkts, n);
        }
        struct iovec v = {.iov_base = buf + got, .iov_len = sizeof(buf) - 1 - got};
        ssize_t k = lsock_recv(s, &v, 1, 0);
        if (k > 0)
            got += (size_t)k;
    }
    nic_mem_set_tap(na_port, NULL, NULL);
    /* the server answers (its ACK rides on the answer: with the ACK
     * delayed, the client's next small segment would wait for it) */
    char ans[8];
    ssize_t an = 0;
    if (got == want && put(s, "ok") == 2)
        for (int r = 0; r < 3000 && an <= 0; r++) {
            pump(1);
            an = get(c, ans, sizeof(ans));
        }
    buf[got] = '\0';
    if (got != want || strcmp(buf, text) != 0)
        printf("# read '%s' (%zu bytes), want '%s'\n", buf, got, text);
    if (got == want && (an != 2 || strcmp(ans, "ok") != 0))
        printf("# the client read %zd bytes of the answer\n", an);
    return got == want && strcmp(buf, text) == 0 && an == 2 && strcmp(ans, "ok") == 0 &&
           !(lsock_events(c) & (EPOLLERR | EPOLLHUP)) &&
           !(lsock_events(s) & (EPOLLERR | EPOLLHUP));
}

int main(void)
{
    struct lstack_conf cc, cs;
    char err[512];
    if (pair_conf(&cc, "198.18.0.2", "198.18.0.1", NULL) != 0 || pair_conf(&cs, "198.18.0.1", "198.18.0.2", NULL) != 0) {
        printf("not ok 1 - configs parse\n1..1\n");
        return 1;
    }
    uint32_t srv_ip = inet_addr("198.18.0.1"), cli_ip = inet_addr("198.18.0.2");
    struct nic *na, *nb, *q[2];
    check(nic_mem_pair(1024, (uint16_t)stack_nic_priv_size(), 32, &na, &nb) == 0, "memory port pair opens");
    na_port = na;
    srv_port = nb;
    struct nic_steer steer;
    check(nic_mem_rss_split(nb, 2, q, &steer) == 0, "the server's port split into 2 RSS queues");
    check(stack_open(&cli, &cc, 2, na, err, sizeof(err)) == 0, "client stack opens");
    bool opened = cli != NULL;
    for (int i = 0; i < 2; i++) {
        int rc = stack_open(&srv[i], &cs, i, q[i], err, sizeof(err));
        checkf(rc == 0, "server stack %d opens on queue %d", i, i);
        opened &= rc == 0;
    }
    if (!opened) {
        printf("# %s\n", err);
        return tap_done();
    }
    int rc = stack_group_join(srv, 2, &nic_handover_api, NULL, &steer, err, sizeof(err));
    checkf(rc == 0, "the two server stacks form a group (%s)", rc == 0 ? "ok" : err);

    /* ARP: both server stacks asked for the client at open; replies land
     * on queue 0. */
    pump(20);
    uint8_t mac[6], cmac[6];
    stack_mac(cli, cmac);
    check(stack_gateway_mac(srv[0], mac) == 1 && memcmp(mac, cmac, 6) == 0, "stack 0 resolved the client");
    check(stack_gateway_mac(srv[1], mac) == 1 && memcmp(mac, cmac, 6) == 0,
          "stack 1 resolved the client from a reply that reached stack 0's queue");
    struct stack_stats st0, st1;
    stack_get_stats(srv[0], &st0);
    checkf(st0.arp_shared > 0, "stack 0 shared ARP replies (%llu)", (unsigned long long)st0.arp_shared);

    /* A listener on stack 0 with a copy on stack 1. */
    struct lsock *l = NULL;
    rc = lsock_new(srv[0], &l);
    if (rc == 0)
        rc = lsock_bind(l, htonl(INADDR_ANY), htons(6379));
    if (rc == 0)
        rc = lsock_listen(l, 64);
    check(rc == 0, "listener on stack 0");
    /* The runtime's three steps (runtime/stacks.c), one stack's lock each. */
    struct lsock_spec *sp = NULL;
    struct lsock *copy = NULL;
    rc = lsock_listen_spec(l, &sp);
    if (rc == 0)
        rc = lsock_listen_copy(sp, srv[1], &copy);
    if (rc == 0 && copy != NULL)
        rc = lsock_listen_copy_attach(l, copy);
    checkf(rc == 0 && copy != NULL, "its copy on stack 1 (%d)", rc);
    checkf(lsock_listen_copy(sp, srv[0], &copy) == -EINVAL, "no copy on the listener's own stack");
    lsock_spec_free(sp);

    struct lsock *c[NCONN], *s[NCONN];
    int started = 0;
    for (int i = 0; i < NCONN; i++)
        started += lsock_new(cli, &c[i]) == 0 && lsock_connect(c[i], srv_ip, htons(6379)) == -EINPROGRESS;
    checkf(started == NCONN, "%d connects started", started);
    int up = pump_until(c, NCONN, EPOLLOUT);
    checkf(up == NCONN, "%d of %d client connections established", up, NCONN);
    int on[2] = {0, 0}, acc = 0;
    for (int i = 0; i < NCONN; i++) {
        if (lsock_accept(l, &s[i]) != 0) {
            printf("# accept %d: nothing\n", i);
            break;
        }
        acc++;
        on[lsock_stack(s[i]) == srv[1]]++;
    }
    checkf(acc == NCONN && on[0] > 0 && on[1] > 0,
           "the one listener accepted %d connections: %d on stack 0, %d on stack 1", acc, on[0], on[1]);
    check(!(lsock_events(l) & EPOLLIN), "listener not readable once its queue (both stacks') is empty");
    if (acc == NCONN)
        checkf(exchange(c, s, NCONN) == NCONN, "%d accepted pairs exchange bytes exactly", NCONN);

    /* Segments in fragments to a connection of each stack: all reach the
     * queue of the addresses' hash; one of the two is another stack's. */
    if (acc == NCONN) {
        struct stack_stats f0[2], f1[2];
        stack_get_stats(srv[0], &f0[0]);
        stack_get_stats(srv[1], &f0[1]);
        for (int k = 0; k < 2; k++) {
            /* a server socket on stack k, and its client by port (the
             * accept order is the handshakes', not the connects') */
            int i = 0, j = NCONN;
            while (i < NCONN && lsock_stack(s[i]) != srv[k])
                i++;
            uint32_t a;
            uint16_t rport, lport;
            if (i < NCONN && lsock_name(s[i], true, &a, &rport) == 0)
                for (j = 0; j < NCONN; j++)
                    if (lsock_name(c[j], false, &a, &lport) == 0 && lport == rport)
                        break;
            unsigned segs = 0;
            char text[64];
            snprintf(text, sizeof(text), "a segment in fragments for stack %d's connection", k);
            bool ok = i < NCONN && j < NCONN && frag_send(c[j], s[i], text, &segs);
            checkf(ok && segs > 0, "fragments: %u segment(s) in 2 fragments each to stack %d's connection %d: read whole, "
                   "nothing reset", segs, k, i);
        }
        stack_get_stats(srv[0], &f1[0]);
        stack_get_stats(srv[1], &f1[1]);
        uint64_t given = f1[0].frag_given - f0[0].frag_given + f1[1].frag_given - f0[1].frag_given;
        uint64_t tx0 = f1[0].nic.tx_packets - f0[0].nic.tx_packets, tx1 = f1[1].nic.tx_packets - f0[1].nic.tx_packets;
        checkf(given >= 1, "fragments: the reassembling stack gave %llu datagram(s) to the other (frames sent by "
               "stack 0 +%llu, stack 1 +%llu)", (unsigned long long)given, (unsigned long long)tx0,
               (unsigned long long)tx1);
        /* the pairs still carry bytes both ways after the client's own
         * sequence moved on (the server ACKed what the fragments held) */
        checkf(exchange(c, s, NCONN) == NCONN, "%d pairs still exchange bytes exactly after the fragments", NCONN);
    }

    /* Connections from the server's stacks: replies hashed to the other
     * queue are handed over. */
    struct lsock *cl = NULL, *o[NCONN], *p[NCONN];
    rc = lsock_new(cli, &cl);
    if (rc == 0)
        rc = lsock_bind(cl, htonl(INADDR_ANY), htons(7000));
    if (rc == 0)
        rc = lsock_listen(cl, 64);
    check(rc == 0, "a listener on the client");
    /* Each stack's connections: half with a local port whose replies the
     * split puts on the other stack's queue (as a port with an opaque hash
     * would, by chance), half on its own. */
    started = 0;
    uint16_t port = 40000;
    for (int i = 0; i < NCONN; i++) {
        int home = i % 2, want = (i / 2) % 2 == 0 ? 1 - home : home;
        while (nic_steer_queue_tcp4(&steer, cli_ip, srv_ip, htons(7000), htons(port)) != want)
            port++;
        started += lsock_new(srv[home], &o[i]) == 0 && lsock_bind(o[i], htonl(INADDR_ANY), htons(port)) == 0 &&
                   lsock_connect(o[i], cli_ip, htons(7000)) == -EINPROGRESS;
        port++;
    }
    up = pump_until(o, NCONN, EPOLLOUT);
    stack_get_stats(srv[0], &st0);
    stack_get_stats(srv[1], &st1);
    checkf(started == NCONN && up == NCONN && st0.handover_in >= NCONN / 4 && st1.handover_in >= NCONN / 4,
           "%d of %d connections out of both stacks established; handed over: %llu to stack 0, %llu to stack 1",
           up, NCONN, (unsigned long long)st0.handover_in, (unsigned long long)st1.handover_in);
    checkf(st0.handover_in == st1.handover_out && st1.handover_in == st0.handover_out,
           "every frame handed out was taken (0->1 %llu/%llu, 1->0 %llu/%llu)",
           (unsigned long long)st0.handover_out, (unsigned long long)st1.handover_in,
           (unsigned long long)st1.handover_out, (unsigned long long)st0.handover_in);
    /* The client's side completes when the server's ACKs arrive. */
    int got = 0;
    for (int r = 0; r < 3000 && got < NCONN; r++) {
        if (lsock_accept(cl, &p[got]) == 0)
            got++;
        else
            pump(1);
    }
    /* the accepted order is the handshakes' order: pair each by port */
    struct lsock *pp[NCONN];
    int paired = 0;
    for (int i = 0; i < NCONN; i++) {
        uint32_t a;
        uint16_t port;
        lsock_name(o[i], false, &a, &port);
        for (int j = 0; j < got; j++) {
            uint32_t ra;
            uint16_t rport;
            if (lsock_name(p[j], true, &ra, &rport) == 0 && rport == port) {
                pp[i] = p[j];
                paired++;
            }
        }
    }
    if (paired == NCONN)
        checkf(exchange(pp, o, NCONN) == NCONN, "%d pairs out of the server exchange bytes exactly", NCONN);
    else
        checkf(0, "the client accepted %d, paired %d of %d", got, paired, NCONN);

    /* Outgoing connections without a bind: ports steered to their stack. */
    {
        struct lsock *u[NCONN];
        stack_get_stats(srv[0], &st0);
        stack_get_stats(srv[1], &st1);
        uint64_t ho0 = st0.handover_in + st1.handover_in, steered0 = st0.ports_steered + st1.ports_steered;
        int made = 0, home_ok = 0;
        for (int i = 0; i < NCONN; i++)
            made += lsock_new(srv[i % 2], &u[i]) == 0 && lsock_connect(u[i], cli_ip, htons(7000)) == -EINPROGRESS;
        int est = made == NCONN ? pump_until(u, NCONN, EPOLLOUT) : 0;
        for (int i = 0; i < made; i++) {
            uint32_t a;
            uint16_t pt;
            if (lsock_name(u[i], false, &a, &pt) == 0 &&
                nic_steer_queue_tcp4(&steer, cli_ip, srv_ip, htons(7000), pt) == i % 2)
                home_ok++;
            else
                printf("# connection %d of stack %d: local port %u replies to queue %d\n", i, i % 2, ntohs(pt),
                       nic_steer_queue_tcp4(&steer, cli_ip, srv_ip, htons(7000), pt));
        }
        stack_get_stats(srv[0], &st0);
        stack_get_stats(srv[1], &st1);
        uint64_t ho = st0.handover_in + st1.handover_in - ho0;
        uint64_t steered = st0.ports_steered + st1.ports_steered - steered0;
        checkf(est == NCONN && home_ok == NCONN && ho == 0 && steered == NCONN,
               "without a bind: %d of %d connections established, %d with a port whose replies reach their own "
               "stack, %llu frames handed over, %llu ports steered", est, NCONN, home_ok, (unsigned long long)ho,
               (unsigned long long)steered);
        for (int i = 0; i < made; i++)
            lsock_close(u[i]);
        pump(50);
        struct lsock *drop;
        while (lsock_accept(cl, &drop) == 0)
            lsock_close(drop);
    }

    /* Ephemeral ports: each stack its own part of the range. */
    uint16_t lo[2] = {0xffff, 0xffff}, hi[2] = {0, 0};
    struct lsock *e[8];
    int made = 0;
    for (int i = 0; i < 8; i++) {
        uint32_t a;
        uint16_t pt;
        if (lsock_new(srv[i % 2], &e[i]) != 0)
            break;
        made++;
        lsock_connect(e[i], cli_ip, htons(7000));
        lsock_name(e[i], false, &a, &pt);
        pt = ntohs(pt);
        lo[i % 2] = pt < lo[i % 2] ? pt : lo[i % 2];
        hi[i % 2] = pt > hi[i % 2] ? pt : hi[i % 2];
    }
    /* The range the stacks read at start (Linux's default if unreadable). */
    unsigned rlo = 32768, rhi = 60999;
    FILE *f = fopen("/proc/sys/net/ipv4/ip_local_port_range", "re");
    if (f != NULL) {
        if (fscanf(f, "%u %u", &rlo, &rhi) != 2)
            rlo = 32768, rhi = 60999;
        fclose(f);
    }
    unsigned mid = rlo + (rhi - rlo + 1) / 2;
    checkf(made == 8 && hi[0] != 0 && hi[0] < mid && lo[1] >= mid,
           "ephemeral ports: stack 0's from the lower half of %u-%u (%u-%u), stack 1's from the upper (%u-%u)", rlo,
           rhi, lo[0], hi[0], lo[1], hi[1]);
    for (int i = 0; i < made; i++)
        lsock_close(e[i]);

    for (int i = 0; i < NCONN; i++) {
        lsock_close(c[i]);
        if (i < acc)
            lsock_close(s[i]);
        lsock_close(o[i]);
        if (i < paired)
            lsock_close(pp[i]);
    }
    lsock_hold(l);
    lsock_close(l);
    for (struct lsock *x; (x = lsock_close_next(l)) != NULL;)
        lsock_close(x); /* its copy on stack 1 */
    lsock_release(l);
    lsock_close(cl);
    pump(300);
    struct stack_stats sc;
    stack_get_stats(cli, &sc);
    stack_get_stats(srv[0], &st0);
    checkf(sc.nic.mbuf_free == sc.nic.mbuf_total && st0.nic.mbuf_free == st0.nic.mbuf_total,
           "every buffer back once closed (client %llu/%llu, server %llu/%llu)",
           (unsigned long long)sc.nic.mbuf_free, (unsigned long long)sc.nic.mbuf_total,
           (unsigned long long)st0.nic.mbuf_free, (unsigned long long)st0.nic.mbuf_total);
    printf("# handed over: stack 0 %llu out / %llu in, stack 1 %llu out / %llu in; waited %llu, %llu\n",
           (unsigned long long)st0.handover_out, (unsigned long long)st0.handover_in,
           (unsigned long long)st1.handover_out, (unsigned long long)st1.handover_in,
           (unsigned long long)st0.handover_waited, (unsigned long long)st1.handover_waited);

    stack_group_leave(srv, 2);
    stack_close(srv[0]);
    stack_close(srv[1]);
    stack_close(cli);
    lstack_conf_free(&cc);
    lstack_conf_free(&cs);
    return tap_done();
}
