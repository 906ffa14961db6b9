/*
 * frame_flow.c - the 4-tuple or ARP-reply test of a received frame (see
 * frame_flow.h). Reads fixed offsets with byte loads (frames need not be
 * aligned).
 */
#include "filter/frame_flow.h"

enum {
    ETH_HLEN = 14,
    ETHERTYPE_IPV4 = 0x0800,
    ETHERTYPE_ARP = 0x0806,
    IP_PROTO_TCP = 6,
    ARP_LEN = 28,      /* Ethernet/IPv4 ARP body */
    ARP_OP_REPLY = 2,
    TCP_PORTS_LEN = 4, /* the ports are all a tuple needs of the TCP header */
};

static inline uint16_t be16(const uint8_t *p)
{
    return (uint16_t)((p[0] << 8) | p[1]);
}

/* Copy 4 bytes as they are on the wire (network order stays). */
static inline uint32_t raw32(const uint8_t *p)
{
    uint32_t v;
    __builtin_memcpy(&v, p, 4);
    return v;
}

enum frame_flow_kind frame_flow_classify(const uint8_t *data, size_t len, struct frame_flow_tuple *t)
{
    if (len < ETH_HLEN)
        return FRAME_FLOW_OTHER;
    uint16_t type = be16(data + 12);
    const uint8_t *l3 = data + ETH_HLEN;
    size_t l3len = len - ETH_HLEN;
    if (type == ETHERTYPE_ARP) {
        /* htype 1 (Ethernet), ptype IPv4, hlen 6, plen 4, op. */
        if (l3len < ARP_LEN || be16(l3) != 1 || be16(l3 + 2) != ETHERTYPE_IPV4 || l3[4] != 6 || l3[5] != 4)
            return FRAME_FLOW_OTHER;
        return be16(l3 + 6) == ARP_OP_REPLY ? FRAME_FLOW_ARP_REPLY : FRAME_FLOW_OTHER;
    }
    if (type != ETHERTYPE_IPV4 || l3len < 20 || (l3[0] >> 4) != 4)
        return FRAME_FLOW_OTHER;
    size_t ihl = (size_t)(l3[0] & 0x0f) * 4;
    if (ihl < 20 || l3len < ihl + TCP_PORTS_LEN || l3[9] != IP_PROTO_TCP)
        return FRAME_FLOW_OTHER;
    if ((be16(l3 + 6) & 0x3fff) != 0) /* MF or a fragment offset */
        return FRAME_FLOW_OTHER;
    const uint8_t *tcp = l3 + ihl;
    t->remote_ip = raw32(l3 + 12);
    t->local_ip = raw32(l3 + 16);
    t->remote_port = be16(tcp);
    t->local_port = be16(tcp + 2);
    return FRAME_FLOW_TCP4;
}
