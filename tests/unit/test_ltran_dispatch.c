/*
 * test_ltran_dispatch.c - ltran's dispatch table (ltran/dispatch.c), one
 * behaviour per check: SYNs by listener, the rest by learnt 4-tuple, the
 * fallback to the listener's owner, unclaimed frames (RST for a SYN), ARP
 * answered or copied to every client of an address, ICMP to the first
 * client of the address, reclaim of a client gone, the table full; the RST
 * and ARP reply built in place; and the cost of a lookup among 10,000
 * 4-tuples (a bound that catches a scan, generous for a loaded machine;
 * the figure is printed). Pure: no DPDK. TAP output.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#include "common/inet_csum.h"
#include "dispatch.h"
#include "tap.h"

static const uint8_t MAC_PORT[6] = {2, 0, 0, 0, 0, 0xaa};
static const uint8_t MAC_PEER[6] = {2, 0, 0, 0, 0, 0xbb};

static uint32_t ip4(const char *s)
{
    struct in_addr a;
    inet_pton(AF_INET, s, &a);
    return a.s_addr;
}

/* An Ethernet/IPv4/TCP frame from src:sport to dst:dport with flags and
 * len bytes of payload. Returns its length. */
static size_t tcp_frame(uint8_t *f, uint32_t src, uint16_t sport, uint32_t dst, uint16_t dport, uint8_t flags,
                        size_t payload)
{
    memset(f, 0, 54 + payload);
    memcpy(f, MAC_PORT, 6);
    memcpy(f + 6, MAC_PEER, 6);
    f[12] = 0x08;
    uint8_t *ip = f + 14;
    ip[0] = 0x45;
    ip[2] = (uint8_t)((40 + payload) >> 8);
    ip[3] = (uint8_t)(40 + payload);
    ip[8] = 64;
    ip[9] = 6;
    memcpy(ip + 12, &src, 4);
    memcpy(ip + 16, &dst, 4);
    uint8_t *t = ip + 20;
    uint16_t sp = htons(sport), dp = htons(dport);
    memcpy(t, &sp, 2);
    memcpy(t + 2, &dp, 2);
    t[4] = 0x11, t[5] = 0x22, t[6] = 0x33, t[7] = 0x44; /* seq */
    t[12] = 5 << 4;
    t[13] = flags;
    return 54 + payload;
}

static size_t arp_frame(uint8_t *f, uint16_t op, uint32_t spa, uint32_t tpa)
{
    memset(f, 0, 42);
    memset(f, 0xff, 6);
    memcpy(f + 6, MAC_PEER, 6);
    f[12] = 0x08, f[13] = 0x06;
    f[15] = 1, f[16] = 0x08, f[18] = 6, f[19] = 4;
    f[21] = (uint8_t)op;
    memcpy(f + 22, MAC_PEER, 6);
    memcpy(f + 28, &spa, 4);
    memcpy(f + 38, &tpa, 4);
    return 42;
}

static size_t icmp_frame(uint8_t *f, uint32_t src, uint32_t dst)
{
    size_t n = tcp_frame(f, src, 0, dst, 0, 0, 0);
    f[14 + 9] = 1;
    return n;
}

enum { SYN = 0x02, ACK = 0x10, RST = 0x04, PSH = 0x08 };

int main(void)
{
    struct ldisp d;
    check(ldisp_init(&d, 1000) == 0, "init: a table for 1000 4-tuples");
    uint32_t A = ip4("198.18.0.2"), B = ip4("198.18.0.3"), PEER = ip4("198.18.0.1");
    ldisp_client_add(&d, 0, A);
    ldisp_client_add(&d, 1, A);
    ldisp_client_add(&d, 2, B);
    check(ldisp_listen(&d, 0, A, htons(6379), true) == 0, "client 0 claims A:6379");
    check(ldisp_listen(&d, 1, A, htons(6380), true) == 0, "client 1 claims A:6380 (same address, other port)");
    check(ldisp_listen(&d, 1, A, htons(6379), true) == -EADDRINUSE, "client 1 cannot claim A:6379 (client 0 has it)");
    check(ldisp_listen(&d, 0, A, htons(6379), true) == 0, "claiming one's own listener again is fine");
    check(ldisp_listen(&d, 2, A, htons(7000), true) == -EINVAL, "client 2 cannot claim on an address not its own");
    uint16_t ports[4];
    check(ldisp_listeners(&d, 1, ports, 4) == 1 && ports[0] == htons(6380), "listeners of client 1: 6380");

    uint8_t f[2048];
    unsigned id = 99;
    uint32_t mask = 0;
    size_t n = tcp_frame(f, PEER, 40000, A, 6380, SYN, 0);
    check(ldisp_rx(&d, f, n, &id, &mask) == LDISP_CLIENT && id == 1, "a SYN to A:6380 goes to its listener's owner (1)");
    n = tcp_frame(f, PEER, 40001, A, 6379, SYN, 0);
    check(ldisp_rx(&d, f, n, &id, &mask) == LDISP_CLIENT && id == 0, "a SYN to A:6379 goes to client 0");
    n = tcp_frame(f, PEER, 40002, A, 6381, SYN, 0);
    check(ldisp_rx(&d, f, n, &id, &mask) == LDISP_RST, "a SYN to A:6381 (nobody listens) is answered by a RST");
    n = tcp_frame(f, PEER, 40002, ip4("198.18.0.9"), 6381, SYN, 0);
    check(ldisp_rx(&d, f, n, &id, &mask) == LDISP_DROP_UNCLAIMED,
          "a SYN to an address no client has is dropped (no RST for another host's address)");
    n = tcp_frame(f, PEER, 40002, A, 6381, ACK, 10);
    check(ldisp_rx(&d, f, n, &id, &mask) == LDISP_DROP_UNCLAIMED, "a data segment nobody claims is dropped");

    /* Hairpin: what a client sends to another client's address. */
    n = tcp_frame(f, B, 50100, A, 6379, SYN, 0);
    check(ldisp_local(&d, f, n), "a SYN from client 2 to A:6379 is local (hairpin)");
    n = arp_frame(f, 1, B, A);
    check(ldisp_local(&d, f, n), "an ARP request from client 2 for A is local");
    n = arp_frame(f, 2, B, A);
    check(!ldisp_local(&d, f, n), "an ARP reply is not (ltran answers requests for client addresses itself)");
    n = tcp_frame(f, B, 50100, PEER, 6379, SYN, 0);
    check(!ldisp_local(&d, f, n), "a SYN to the peer leaves by the port");
    n = arp_frame(f, 1, B, PEER);
    check(!ldisp_local(&d, f, n), "an ARP request for the peer leaves by the port");
    n = icmp_frame(f, B, A);
    check(ldisp_local(&d, f, n), "ICMP to A is local");

    /* Learning: an active open of client 2 (its SYN) and a passive one of
     * client 1 (its SYN-ACK) claim their 4-tuples. */
    n = tcp_frame(f, B, 50000, PEER, 80, SYN, 0);
    ldisp_tx(&d, 2, f, n);
    n = tcp_frame(f, PEER, 80, B, 50000, SYN | ACK, 0);
    check(ldisp_rx(&d, f, n, &id, &mask) == LDISP_CLIENT && id == 2,
          "the SYN-ACK answering client 2's connect goes to client 2 (learnt from its SYN)");
    n = tcp_frame(f, A, 6380, PEER, 40000, SYN | ACK, 0);
    ldisp_tx(&d, 1, f, n);
    check(ldisp_conn_owner(&d, A, htons(6380), PEER, htons(40000)) == 1, "client 1's SYN-ACK claims its 4-tuple");
    /* Client 0 claims a connection to its listener's port, from the same peer port
     * but on another listener: 4-tuples are distinct. */
    n = tcp_frame(f, A, 6379, PEER, 40001, SYN | ACK, 0);
    ldisp_tx(&d, 0, f, n);
    n = tcp_frame(f, PEER, 40000, A, 6380, ACK | PSH, 100);
    check(ldisp_rx(&d, f, n, &id, &mask) == LDISP_CLIENT && id == 1, "data on a learnt 4-tuple goes to its owner");
    check(d.owned[0] == 1 && d.owned[1] == 1 && d.owned[2] == 1 && d.used == 3, "three 4-tuples, one per client");

    /* The 4-tuple wins over the listener: move A:6380's listener to... a
     * connection whose owner differs from the listener's owner. */
    n = tcp_frame(f, A, 6379, PEER, 40005, SYN | ACK, 0);
    ldisp_tx(&d, 1, f, n); /* client 1 answers for a connection on 6379 (e.g. a cookie) */
    n = tcp_frame(f, PEER, 40005, A, 6379, ACK, 0);
    check(ldisp_rx(&d, f, n, &id, &mask) == LDISP_CLIENT && id == 1,
          "a non-SYN goes by 4-tuple before listener (client 1 owns it, client 0 listens)");
    n = tcp_frame(f, PEER, 40006, A, 6379, ACK, 0);
    check(ldisp_rx(&d, f, n, &id, &mask) == LDISP_CLIENT && id == 0,
          "a non-SYN with no learnt 4-tuple goes to the listener's owner (it answers with a RST)");
    n = tcp_frame(f, PEER, 40005, A, 6379, SYN, 0);
    check(ldisp_rx(&d, f, n, &id, &mask) == LDISP_CLIENT && id == 0,
          "a new SYN on a known 4-tuple goes to the listener, not to the old owner");

    /* A RST from the owner releases the 4-tuple; from another client it does not. */
    n = tcp_frame(f, A, 6379, PEER, 40005, RST, 0);
    ldisp_tx(&d, 0, f, n);
    check(ldisp_conn_owner(&d, A, htons(6379), PEER, htons(40005)) == 1, "a RST from a non-owner releases nothing");
    ldisp_tx(&d, 1, f, n);
    check(ldisp_conn_owner(&d, A, htons(6379), PEER, htons(40005)) == -1, "a RST from the owner releases its 4-tuple");

    /* ARP. */
    n = arp_frame(f, 1, PEER, A);
    check(ldisp_rx(&d, f, n, &id, &mask) == LDISP_ARP_ANSWER, "an ARP request for a client's address: ltran answers");
    n = arp_frame(f, 1, PEER, ip4("198.18.0.77"));
    check(ldisp_rx(&d, f, n, &id, &mask) == LDISP_DROP_UNCLAIMED, "an ARP request for another address is dropped");
    n = arp_frame(f, 2, PEER, A);
    mask = 0;
    check(ldisp_rx(&d, f, n, &id, &mask) == LDISP_CLIENTS && mask == 0x3,
          "an ARP reply to A goes to every client with A (0 and 1)");
    n = arp_frame(f, 1, PEER, A);
    size_t rl = ldisp_arp_reply(f, n, MAC_PORT);
    uint32_t spa, tpa;
    memcpy(&spa, f + 28, 4);
    memcpy(&tpa, f + 38, 4);
    check(rl == 42 && f[21] == 2 && memcmp(f, MAC_PEER, 6) == 0 && memcmp(f + 6, MAC_PORT, 6) == 0 &&
              memcmp(f + 22, MAC_PORT, 6) == 0 && memcmp(f + 32, MAC_PEER, 6) == 0 && spa == A && tpa == PEER,
          "the ARP reply: op 2, from the port's MAC for A, to the asker");

    /* ICMP and other IPv4. */
    n = icmp_frame(f, PEER, B);
    check(ldisp_rx(&d, f, n, &id, &mask) == LDISP_CLIENT && id == 2, "ICMP to B goes to B's client");
    n = icmp_frame(f, PEER, A);
    check(ldisp_rx(&d, f, n, &id, &mask) == LDISP_CLIENT && id == 0, "ICMP to A goes to the first client with A");
    f[12] = 0x86, f[13] = 0xdd;
    check(ldisp_rx(&d, f, n, &id, &mask) == LDISP_DROP_OTHER, "IPv6 is dropped as other");
    check(ldisp_rx(&d, f, 10, &id, &mask) == LDISP_DROP_OTHER, "a runt frame is dropped as other");

    /* The RST ltran builds for an unclaimed SYN. */
    n = tcp_frame(f, PEER, 40002, A, 6381, SYN, 0);
    rl = ldisp_rst(f, n);
    uint8_t *ip = f + 14, *t = ip + 20;
    uint32_t s2, d2;
    memcpy(&s2, ip + 12, 4);
    memcpy(&d2, ip + 16, 4);
    uint32_t ackn = (uint32_t)t[8] << 24 | (uint32_t)t[9] << 16 | (uint32_t)t[10] << 8 | t[11];
    check(rl == 54 && s2 == A && d2 == PEER && t[0] == (6381 >> 8) && t[1] == (6381 & 0xff) &&
              t[2] == (40002 >> 8) && t[13] == (RST | ACK) && ackn == 0x11223345u && memcmp(f, MAC_PEER, 6) == 0,
          "RST|ACK from A:6381 to the peer, ack = SYN's seq + 1, MACs swapped");
    check(inet_tcp_verify(ip, 20, 40) && inet_ip_csum(ip, 20) == (uint16_t)(ip[10] << 8 | ip[11]),
          "the RST's IPv4 and TCP checksums are right");
    n = tcp_frame(f, PEER, 40002, A, 6381, ACK, 0);
    check(ldisp_rst(f, n) == 0, "no RST is built for a non-SYN");

    /* A client gone: its address, listeners and 4-tuples go. */
    ldisp_client_remove(&d, 1);
    n = tcp_frame(f, PEER, 40000, A, 6380, ACK, 10);
    check(ldisp_rx(&d, f, n, &id, &mask) == LDISP_DROP_UNCLAIMED, "after client 1 is gone, its connection's frames are unclaimed");
    n = tcp_frame(f, PEER, 40009, A, 6380, SYN, 0);
    check(ldisp_rx(&d, f, n, &id, &mask) == LDISP_RST, "after client 1 is gone, a SYN to its port gets a RST");
    check(d.owned[1] == 0 && ldisp_listeners(&d, 1, ports, 4) == 0, "client 1 owns nothing now");
    check(d.owned[0] == 1 && d.owned[2] == 1, "the others keep their 4-tuples");
    ldisp_client_add(&d, 1, A);
    check(ldisp_listen(&d, 1, A, htons(6380), true) == 0, "a client in the freed slot claims 6380 again");
    n = tcp_frame(f, A, 6380, B, 7000, SYN, 0);
    check(ldisp_local(&d, f, n), "B is still a client's address: local");
    ldisp_client_remove(&d, 2);
    check(!ldisp_local(&d, f, n), "after client 2 (B) is gone, a SYN to B leaves by the port");
    n = tcp_frame(f, B, 7000, A, 6380, SYN, 0);
    check(ldisp_local(&d, f, n), "A (clients 0 and 1) is still local");
    ldisp_free(&d);

    /* Full table: learning stops, counted; lookups of what is there still work. */
    check(ldisp_init(&d, 64) == 0, "a table of 64");
    ldisp_client_add(&d, 0, A);
    for (unsigned i = 0; i < 100; i++) {
        n = tcp_frame(f, A, 6379, PEER, (uint16_t)(1000 + i), SYN | ACK, 0);
        ldisp_tx(&d, 0, f, n);
    }
    checkf(d.used == 48 && d.learn_full == 52, "a table of 64 learns 48 (three quarters), counts 52 not learnt (%u, %llu)",
           d.used, (unsigned long long)d.learn_full);
    check(ldisp_conn_owner(&d, A, htons(6379), PEER, htons(1000)) == 0 &&
              ldisp_conn_owner(&d, A, htons(6379), PEER, htons(1047)) == 0,
          "the learnt ones are found");
    for (unsigned i = 0; i < 48; i++) {
        n = tcp_frame(f, A, 6379, PEER, (uint16_t)(1000 + i), RST, 0);
        ldisp_tx(&d, 0, f, n);
    }
    n = tcp_frame(f, A, 6379, PEER, 5000, SYN | ACK, 0);
    ldisp_tx(&d, 0, f, n);
    check(d.used == 1 && ldisp_conn_owner(&d, A, htons(6379), PEER, htons(5000)) == 0,
          "after RSTs free the table, learning works again (deleted slots reused)");
    ldisp_free(&d);

    /* Cost of classifying a data segment with 10,000 learnt 4-tuples. */
    check(ldisp_init(&d, 20000) == 0, "a table of 20000");
    ldisp_client_add(&d, 0, A);
    ldisp_client_add(&d, 1, B);
    ldisp_listen(&d, 0, A, htons(6379), true);
    for (unsigned i = 0; i < 10000; i++) {
        n = tcp_frame(f, A, 6379, ip4("10.1.0.1") + htonl(i / 50000), (uint16_t)(1024 + i), SYN | ACK, 0);
        ldisp_tx(&d, i & 1, f, n);
    }
    n = tcp_frame(f, ip4("10.1.0.1"), 1024 + 777, A, 6379, ACK | PSH, 64);
    struct timespec t0, t1;
    unsigned hits = 0;
    const unsigned rounds = 2000000;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (unsigned i = 0; i < rounds; i++) {
        f[14 + 20 + 1] = (uint8_t)(1024 + 777 + (i & 1)); /* alternate two flows: 777 (client 1) and 778 (client 0) */
        hits += ldisp_rx(&d, f, n, &id, &mask) == LDISP_CLIENT && id == ((i & 1) ? 0u : 1u);
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double ns = ((double)(t1.tv_sec - t0.tv_sec) * 1e9 + (double)(t1.tv_nsec - t0.tv_nsec)) / rounds;
    checkf(hits == rounds, "every lookup found its owner (%u of %u)", hits, rounds);
    /* The bound catches a scan of the table (~10 us here), not noise: the
     * machine the tests share may be loaded many times over. */
    checkf(ns < 1000.0, "classifying a frame among 10,000 4-tuples costs %.1f ns (bound 1000 ns)", ns);
    ldisp_free(&d);
    return tap_done();
}
