/*
 * pcb_front.c - see pcb_front.h.
 */
#include "stack/pcb_front.h"

#include <string.h>

#include "lwip/ip_addr.h"
#include "lwip/tcp.h"

enum {
    ETH_HLEN_ = 14,
    ETHERTYPE_IPV4_ = 0x0800,
    IPPROTO_TCP_ = 6,
    TCP_SYN_ = 0x02,
    TCP_ACK_ = 0x10,
};

static inline unsigned key_slot(uint32_t rip, uint16_t rport, uint16_t lport)
{
    uint32_t h = rip ^ ((uint32_t)rport << 16 | lport);
    h *= 0x9e3779b1u; /* Fibonacci hashing: the top bits are well mixed */
    return h >> (32 - 10);
}
_Static_assert(PCB_FRONT_SLOTS == 1u << 10, "key_slot returns 10 bits");
_Static_assert(PCB_FRONT_MAX * 2 <= PCB_FRONT_SLOTS, "the table stays at most half full");

/* The slot holding the key, or the empty slot where it would go. */
static inline struct pcb_front_slot *lookup(struct pcb_front *pf, uint32_t rip, uint16_t rport, uint16_t lport)
{
    unsigned i = key_slot(rip, rport, lport);
    for (;;) {
        struct pcb_front_slot *sl = &pf->slot[i];
        if (sl->gen != pf->gen || (sl->rip == rip && sl->rport == rport && sl->lport == lport))
            return sl;
        i = (i + 1) & (PCB_FRONT_SLOTS - 1);
    }
}

void pcb_front_note(struct pcb_front *pf, const uint8_t *f, size_t len)
{
    if (len < ETH_HLEN_ + 20 || ((unsigned)f[12] << 8 | f[13]) != ETHERTYPE_IPV4_)
        return;
    const uint8_t *ip = f + ETH_HLEN_;
    size_t ihl = (size_t)(ip[0] & 0x0f) * 4;
    if (ip[9] != IPPROTO_TCP_ || ihl < 20 || len < ETH_HLEN_ + ihl + 14)
        return;
    if ((((unsigned)ip[6] << 8 | ip[7]) & 0x1fff) != 0)
        return; /* a fragment past the first: no ports */
    const uint8_t *tcp = ip + ihl;
    if ((tcp[13] & (TCP_SYN_ | TCP_ACK_)) == TCP_SYN_)
        return; /* a connection request: no PCB in the active list */
    uint32_t rip;
    memcpy(&rip, ip + 12, 4);
    uint16_t rport = (uint16_t)(tcp[0] << 8 | tcp[1]);
    uint16_t lport = (uint16_t)(tcp[2] << 8 | tcp[3]);
    if (pf->n == PCB_FRONT_MAX)
        return;
    struct pcb_front_slot *sl = lookup(pf, rip, rport, lport);
    if (sl->gen == pf->gen)
        return; /* another segment of a noted connection */
    unsigned home = key_slot(rip, rport, lport);
    pf->home[home / 64] |= 1ull << (home % 64);
    sl->gen = pf->gen;
    sl->rip = rip;
    sl->rport = rport;
    sl->lport = lport;
    pf->n++;
}

static inline int noted(struct pcb_front *pf, const struct tcp_pcb *pcb)
{
    if (!IP_IS_V4_VAL(pcb->remote_ip))
        return 0;
    uint32_t rip = ip_2_ip4(&pcb->remote_ip)->addr;
    unsigned home = key_slot(rip, pcb->remote_port, pcb->local_port);
    if (!(pf->home[home / 64] >> (home % 64) & 1))
        return 0; /* most PCBs of the list: one bit in L1 */
    return lookup(pf, rip, pcb->remote_port, pcb->local_port)->gen == pf->gen;
}

unsigned pcb_front_apply(struct pcb_front *pf, struct tcp_pcb **head)
{
    if (pf->n < 2 || *head == NULL)
        return 0;
    struct tcp_pcb *front = NULL, *front_tail = NULL;
    struct tcp_pcb **link = head;
    unsigned moved = 0;
    /* Stop once every noted connection is found (SYNs and segments of
     * connections lwIP no longer has are never found: full walk). */
    while (*link != NULL && moved < pf->n) {
        struct tcp_pcb *pcb = *link;
        if (!noted(pf, pcb)) {
            link = &pcb->next;
            continue;
        }
        *link = pcb->next; /* unlink, append to the front group */
        pcb->next = NULL;
        if (front == NULL)
            front = pcb;
        else
            front_tail->next = pcb;
        front_tail = pcb;
        moved++;
    }
    if (front == NULL)
        return 0;
    front_tail->next = *head;
    *head = front;
    return moved;
}
