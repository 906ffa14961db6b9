/*
 * dispatch.h - ltran's dispatch table: which client a received frame goes
 * to, learnt from registrations and from what clients send. Pure: frame
 * bytes in, a verdict out; no DPDK, no I/O, no allocation after init.
 * One thread (ltran's loop) at a time.
 * Design: docs/design.md#ltran-learns-listeners-from-registrations-and-connections-from-syn-acks
 */
#ifndef LTRAN_DISPATCH_H
#define LTRAN_DISPATCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * The design, simplest robust one:
 *  - clients register their address (REGISTER) and each listener (LISTEN:
 *    explicit, because a listener sends nothing ltran could learn from);
 *  - connections are learnt from what a client sends: a SYN (active open)
 *    or SYN-ACK (passive open) from (ip, port) to (rip, rport) claims that
 *    4-tuple for its sender; a RST from its owner releases it; a client
 *    that goes away releases all of its entries;
 *  - received TCP: a SYN (no ACK) by (dst IP, dst port) to the listener's
 *    owner; anything else by 4-tuple, else to the owner of the listener on
 *    (dst IP, dst port) (it answers with a RST, as a lone stack would), else
 *    a counted drop (a SYN nobody listens to: a RST from ltran);
 *  - ARP requests for a registered address: ltran answers; other ARP frames
 *    for one go to every client with that address; ICMP and other IPv4 go to
 *    the first client registered with the destination address;
 *  - what a client sends to a registered address (ldisp_local) is handled
 *    as if received (hairpin), after it was learnt from.
 */

#define LDISP_MAX_CLIENTS 32
#define LDISP_MAX_LISTEN 1024

enum ldisp_verdict {
    LDISP_CLIENT,        /* to client *id */
    LDISP_CLIENTS,       /* a copy to each client in *mask (ARP for a shared address) */
    LDISP_ARP_ANSWER,    /* an ARP request for a client's address: ldisp_arp_reply */
    LDISP_RST,           /* a SYN no listener claims: ldisp_rst, then send */
    LDISP_DROP_UNCLAIMED,/* IPv4/ARP for an address or 4-tuple no client has */
    LDISP_DROP_OTHER,    /* not ARP/IPv4, malformed */
};

struct ldisp_conn {
    uint32_t lip, rip;   /* network order */
    uint16_t lport, rport;
    uint8_t state;       /* 0 empty, 1 used, 2 deleted */
    uint8_t id;
};

struct ldisp_listen {
    uint32_t ip;
    uint16_t port;
    uint8_t used, id;
};

struct ldisp {
    uint32_t ip[LDISP_MAX_CLIENTS];     /* registered address, 0 = free slot */
    uint64_t addr_filter[4];            /* bit per last octet of the registered addresses */
    struct ldisp_listen lis[LDISP_MAX_LISTEN];
    unsigned nlis;                      /* high-water mark of lis[] */
    struct ldisp_conn *conn;            /* open addressing, linear probing */
    uint32_t cap;                       /* power of two */
    uint32_t used, deleted;
    uint32_t owned[LDISP_MAX_CLIENTS];  /* 4-tuples per client */
    uint64_t learn_full;                /* SYN-ACKs not learnt: table full */
};

/* Table for cap 4-tuples (rounded up to a power of two, at least 64).
 * Returns 0 or -ENOMEM. */
int ldisp_init(struct ldisp *d, uint32_t cap);
void ldisp_free(struct ldisp *d);

/* Client id (< LDISP_MAX_CLIENTS) now has address ip (network order, not 0). */
void ldisp_client_add(struct ldisp *d, unsigned id, uint32_t ip);
/* Forget client id: its address, listeners and 4-tuples. */
void ldisp_client_remove(struct ldisp *d, unsigned id);

/* Claim (on) or release the listener (ip, port) for client id. Returns 0,
 * -EADDRINUSE (another client has it), -EINVAL (ip is not id's), -ENOSPC. */
int ldisp_listen(struct ldisp *d, unsigned id, uint32_t ip, uint16_t port, bool on);
/* Listener ports of client id, up to max (network order). Returns the count of all. */
unsigned ldisp_listeners(const struct ldisp *d, unsigned id, uint16_t *ports, unsigned max);

/* Where the received frame goes. *id for LDISP_CLIENT, *mask for LDISP_CLIENTS. */
enum ldisp_verdict ldisp_rx(const struct ldisp *d, const uint8_t *frame, size_t len, unsigned *id,
                            uint32_t *mask);

/* True if a frame a client sends is for a client of this ltran (IPv4 to a
 * registered address, or an ARP request for one): it must not leave by the
 * port but come back in (ldisp_rx): the hairpin that lets the instances
 * of a Redis Cluster, one address each, talk over their cluster bus. */
bool ldisp_local(const struct ldisp *d, const uint8_t *frame, size_t len);

/* Learn from a frame client id sends (SYN / SYN-ACK claim, RST releases). */
void ldisp_tx(struct ldisp *d, unsigned id, const uint8_t *frame, size_t len);

/* Owner of a 4-tuple (addresses and ports network order), or -1. */
int ldisp_conn_owner(const struct ldisp *d, uint32_t lip, uint16_t lport, uint32_t rip, uint16_t rport);

/* Turn the ARP request in frame (len >= 42) into the reply from mac, in
 * place. Returns the reply's length. */
size_t ldisp_arp_reply(uint8_t *frame, size_t len, const uint8_t mac[6]);

/* Turn the TCP SYN in frame into the RST|ACK answering it, in place (MACs,
 * addresses and ports swapped, options and payload dropped). Returns the
 * new length (54), or 0 if frame is not such a SYN. */
size_t ldisp_rst(uint8_t *frame, size_t len);

#endif
