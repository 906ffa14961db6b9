/*
 * test_pcb_front.c - moving a burst's connections to the front of lwIP's
 * active PCB list (lstack/stack/pcb_front.c), one behaviour per test.
 * The PCBs are zeroed struct tcp_pcb with only the fields the lookup reads;
 * no lwIP code runs. TAP output.
 */
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lwip/tcp.h"
#include "stack/pcb_front.h"

#include "tap.h"

enum { NPCB = 1000, LPORT = 6379 };

static struct tcp_pcb pcbs[NPCB];
static struct tcp_pcb *head;
static struct pcb_front *pf;

static uint32_t client_ip(unsigned i) { return htonl(0xc6120001u + (i % 3)); }   /* 198.18.0.1..3 */
static uint16_t client_port(unsigned i) { return (uint16_t)(20000 + i); }

/* A list 0 -> 1 -> ... -> NPCB-1, PCB i = connection from client i. */
static void make_list(void)
{
    memset(pcbs, 0, sizeof(pcbs));
    for (unsigned i = 0; i < NPCB; i++) {
        IP_SET_TYPE_VAL(pcbs[i].remote_ip, IPADDR_TYPE_V4);
        ip_2_ip4(&pcbs[i].remote_ip)->addr = client_ip(i);
        pcbs[i].remote_port = client_port(i);
        pcbs[i].local_port = LPORT;
        pcbs[i].next = i + 1 < NPCB ? &pcbs[i + 1] : NULL;
    }
    head = &pcbs[0];
}

/* An Ethernet/IPv4 frame from client i to LPORT; proto 6 = TCP. */
static size_t frame_from(uint8_t *f, unsigned i, uint8_t proto)
{
    memset(f, 0, 64);
    f[12] = 0x08;
    f[13] = 0x00;
    uint8_t *ip = f + 14;
    ip[0] = 0x45;
    ip[9] = proto;
    uint32_t src = client_ip(i);
    memcpy(ip + 12, &src, 4);
    uint8_t *tcp = ip + 20;
    tcp[0] = (uint8_t)(client_port(i) >> 8);
    tcp[1] = (uint8_t)client_port(i);
    tcp[2] = LPORT >> 8;
    tcp[3] = LPORT & 0xff;
    return 14 + 20 + 20;
}

static void note(unsigned i)
{
    uint8_t f[64];
    size_t len = frame_from(f, i, 6);
    pcb_front_note(pf, f, len);
}

static unsigned list_len(void)
{
    unsigned n = 0;
    for (struct tcp_pcb *p = head; p != NULL && n <= NPCB; p = p->next)
        n++;
    return n;
}

/* Every PCB still in the list exactly once. */
static int same_set(void)
{
    static unsigned char seen[NPCB];
    memset(seen, 0, sizeof(seen));
    unsigned n = 0;
    for (struct tcp_pcb *p = head; p != NULL && n <= NPCB; p = p->next, n++) {
        size_t i = (size_t)(p - pcbs);
        if (i >= NPCB || seen[i])
            return 0;
        seen[i] = 1;
    }
    return n == NPCB;
}

static void test_moves_burst_to_front(void)
{
    make_list();
    pcb_front_reset(pf);
    note(999);
    note(500);
    note(998);
    unsigned moved = pcb_front_apply(pf, &head);
    check(moved == 3, "three noted connections are moved");
    /* the front group keeps list order: 500, 998, 999 */
    check(head == &pcbs[500] && head->next == &pcbs[998] && head->next->next == &pcbs[999],
          "the burst's PCBs lead the list");
    check(head->next->next->next == &pcbs[0], "the rest follows in its old order");
    check(same_set() && list_len() == NPCB, "no PCB lost or duplicated");
}

static void test_duplicate_segments_one_key(void)
{
    make_list();
    pcb_front_reset(pf);
    for (int k = 0; k < 5; k++)
        note(700);
    note(701);
    note(700);
    check(pf->n == 2, "six segments of two connections are two keys");
    check(pcb_front_apply(pf, &head) == 2 && head == &pcbs[700] && head->next == &pcbs[701],
          "each PCB is moved once");
    check(same_set(), "no PCB lost or duplicated");
}

static void test_single_connection_left_to_lwip(void)
{
    make_list();
    pcb_front_reset(pf);
    note(900);
    note(900);
    check(pcb_front_apply(pf, &head) == 0 && head == &pcbs[0] && same_set(),
          "a burst of one connection leaves the list to lwIP's own walk");
}

static void test_unknown_connection_changes_nothing(void)
{
    make_list();
    pcb_front_reset(pf);
    uint8_t f[64];
    size_t len = frame_from(f, 5000, 6); /* no PCB (a SYN, or a stale segment) */
    pcb_front_note(pf, f, len);
    check(pcb_front_apply(pf, &head) == 0, "nothing moved for a connection lwIP does not have");
    check(head == &pcbs[0] && same_set(), "list unchanged");
}

static void note_frame(const uint8_t *f, size_t len)
{
    make_list();
    pcb_front_reset(pf);
    pcb_front_note(pf, f, len);
}

static void test_icmp_ignored(void)
{
    uint8_t f[64];
    note_frame(f, frame_from(f, 10, 1));
    check(pf->n == 0, "ICMP is not noted");
}

static void test_arp_ignored(void)
{
    uint8_t f[64];
    frame_from(f, 10, 6);
    f[13] = 0x06; /* EtherType 0x0806 */
    note_frame(f, 42);
    check(pf->n == 0, "ARP is not noted");
}

static void test_truncated_ignored(void)
{
    uint8_t f[64];
    frame_from(f, 11, 6);
    note_frame(f, 14 + 20 + 3); /* ends before the destination port */
    check(pf->n == 0, "a TCP frame cut before its header ends is not noted");
}

static void test_syn_ignored(void)
{
    uint8_t f[64];
    size_t len = frame_from(f, 12, 6);
    f[14 + 20 + 13] = 0x02; /* SYN */
    note_frame(f, len);
    check(pf->n == 0, "a SYN (no PCB in the active list yet) is not noted");
    f[14 + 20 + 13] = 0x12; /* SYN|ACK */
    note_frame(f, len);
    check(pf->n == 1, "a SYN|ACK is (an outgoing connection's PCB exists)");
}

static void test_later_fragment_ignored(void)
{
    uint8_t f[64];
    size_t len = frame_from(f, 13, 6);
    f[14 + 6] = 0x00;
    f[14 + 7] = 0xb9; /* fragment offset 185 * 8: its bytes are not ports */
    note_frame(f, len);
    check(pf->n == 0, "a fragment past the first is not noted");
    f[14 + 6] = 0x20; /* MF, offset 0: the first fragment holds the ports */
    f[14 + 7] = 0x00;
    note_frame(f, len);
    check(pf->n == 1, "the first fragment is");
}

static void test_ip_options(void)
{
    uint8_t f[64];
    frame_from(f, 14, 6);
    /* IHL 6: four bytes of options move the TCP header */
    memmove(f + 14 + 24, f + 14 + 20, 20);
    memset(f + 14 + 20, 1, 4); /* NOP options */
    f[14] = 0x46;
    make_list();
    pcb_front_reset(pf);
    pcb_front_note(pf, f, 14 + 24 + 20);
    note(15);
    check(pf->n == 2 && pcb_front_apply(pf, &head) == 2 && head == &pcbs[14],
          "the ports are read after the IP options");
}

static void test_ipv6_pcb_skipped(void)
{
    make_list();
    /* an IPv6 PCB whose address bytes and ports would match client 20 */
    IP_SET_TYPE_VAL(pcbs[20].remote_ip, IPADDR_TYPE_V6);
    pcb_front_reset(pf);
    note(20);
    note(21);
    check(pcb_front_apply(pf, &head) == 1 && head == &pcbs[21], "an IPv6 PCB never matches an IPv4 segment");
    check(same_set(), "no PCB lost or duplicated");
}

static void test_new_burst_forgets_old(void)
{
    make_list();
    pcb_front_reset(pf);
    note(300);
    pcb_front_reset(pf);
    note(301);
    note(302);
    check(pcb_front_apply(pf, &head) == 2 && head == &pcbs[301] && head->next == &pcbs[302],
          "only the current burst's connections move");
    check(head->next->next == &pcbs[0], "the previous burst's one stays where it was");
}

static void test_generation_wrap(void)
{
    struct pcb_front *w = calloc(1, sizeof(*w));
    if (w == NULL)
        return;
    uint8_t f[64];
    make_list();
    pcb_front_reset(w); /* generation 1 */
    pcb_front_note(w, f, frame_from(f, 42, 6));
    w->gen = UINT32_MAX;
    pcb_front_reset(w); /* wraps: every slot cleared, generation 1 again */
    check(w->gen == 1 && w->n == 0, "the generation wraps to 1");
    pcb_front_note(w, f, frame_from(f, 42, 6)); /* stamped 1 before the wrap */
    pcb_front_note(w, f, frame_from(f, 43, 6));
    check(w->n == 2, "a key noted before the wrap is not taken as noted after it");
    check(pcb_front_apply(w, &head) == 2 && head == &pcbs[42], "lookups work after the wrap");
    free(w);
}

static void test_full_burst(void)
{
    make_list();
    pcb_front_reset(pf);
    for (unsigned i = 0; i < PCB_FRONT_MAX + 10; i++)
        note(NPCB - 1 - i);
    check(pf->n == PCB_FRONT_MAX, "keys past PCB_FRONT_MAX are dropped");
    check(pcb_front_apply(pf, &head) == PCB_FRONT_MAX, "every noted connection is moved");
    check(same_set(), "no PCB lost or duplicated");
    /* the first PCB_FRONT_MAX noted were NPCB-1 down to NPCB-PCB_FRONT_MAX */
    struct tcp_pcb *p = head;
    int ok = 1;
    for (unsigned k = 0; k < PCB_FRONT_MAX; k++, p = p->next)
        ok &= (size_t)(p - pcbs) >= NPCB - PCB_FRONT_MAX;
    check(ok, "they lead the list");
}

static void test_idle_reset_keeps_generation(void)
{
    make_list();
    pcb_front_reset(pf);
    note(10);
    pcb_front_reset(pf);
    uint32_t gen = pf->gen;
    pcb_front_reset(pf); /* idle rounds: nothing noted since */
    pcb_front_reset(pf);
    check(pf->gen == gen && pf->n == 0, "a reset after an empty burst costs nothing");
    note(20);
    note(21);
    check(pcb_front_apply(pf, &head) == 2 && head == &pcbs[20], "and the next burst works");
}

static void test_fresh_struct(void)
{
    struct pcb_front *fresh = calloc(1, sizeof(*fresh)); /* as in struct stack */
    if (fresh == NULL)
        return;
    make_list();
    pcb_front_reset(fresh);
    uint8_t f[64];
    pcb_front_note(fresh, f, frame_from(f, 5, 6));
    pcb_front_note(fresh, f, frame_from(f, 6, 6));
    check(fresh->n == 2 && pcb_front_apply(fresh, &head) == 2 && head == &pcbs[5],
          "a zeroed struct works from its first burst");
    free(fresh);
}

static void test_empty_list(void)
{
    struct tcp_pcb *none = NULL;
    pcb_front_reset(pf);
    note(1);
    note(2);
    check(pcb_front_apply(pf, &none) == 0 && none == NULL, "an empty list stays empty");
}

int main(void)
{
    pf = calloc(1, sizeof(*pf));
    if (pf == NULL)
        return 1;
    test_moves_burst_to_front();
    test_duplicate_segments_one_key();
    test_single_connection_left_to_lwip();
    test_unknown_connection_changes_nothing();
    test_icmp_ignored();
    test_arp_ignored();
    test_truncated_ignored();
    test_syn_ignored();
    test_later_fragment_ignored();
    test_ip_options();
    test_ipv6_pcb_skipped();
    test_new_burst_forgets_old();
    test_generation_wrap();
    test_full_burst();
    test_idle_reset_keeps_generation();
    test_fresh_struct();
    test_empty_list();
    free(pf);
    return tap_done();
}
