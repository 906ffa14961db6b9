/*
 * pcb_hash.c - lwIP's TCP demultiplexing by a hash of the 4-tuple (patch
 * 0001 calls in here; see lwip_hooks.h).
 *
 * The table is mmap'd, not taken from the lwIP arena: it is one large
 * block that changes size, and no segment allocates it.
 * Which thread: the stack's owner only.
 */
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>

#include "common/hash64.h"
#include "lwip/opt.h"
#include "lwip/tcp.h"

#include "port/lwip_hooks.h"
#include "port/lwip_port.h"
#include "port/lwip_port_priv.h"

/*
 * Open addressing with linear probing over a power-of-two table of
 * {hash, pcb}; a slot's hash is compared before the PCB is touched, so a
 * lookup reads one cache line of the table and the one PCB it returns.
 * Deletion shifts the following entries back (no tombstones), so a lookup
 * stops at the first empty slot. The table holds the PCBs of the active and
 * TIME_WAIT lists, is sized for twice tcp_conn_count at start and doubles
 * when more than half full (a new connection then pays one rehash; a
 * segment never does). The hash is seeded per copy from getrandom, so a
 * peer cannot choose 4-tuples that collide.
 */

struct slot {
    uint32_t h;               /* the key's hash; 0 never stored (empty marker is pcb == NULL) */
    struct tcp_pcb *pcb;
};

static struct {
    struct slot *t;
    uint32_t mask;            /* slots - 1 */
    uint32_t seed;
    struct lstack_lwip_hash_stats st;
    lstack_flow_fn flow;      /* told of each entry and exit (lstack_lwip_flow_hook) */
    void *flow_ctx;
} H;

static void flow_tell(const struct tcp_pcb *p, int add)
{
    if (H.flow != NULL)
        H.flow(H.flow_ctx, ip4_addr_get_u32(ip_2_ip4(&p->local_ip)), p->local_port,
               ip4_addr_get_u32(ip_2_ip4(&p->remote_ip)), p->remote_port, add);
}

void lstack_lwip_flow_hook(lstack_flow_fn fn, void *ctx)
{
    H.flow = fn;
    H.flow_ctx = ctx;
    for (uint32_t i = 0; H.t != NULL && i <= H.mask; i++)
        if (H.t[i].pcb != NULL)
            flow_tell(H.t[i].pcb, 1);
}

static inline uint32_t key_hash(uint32_t lip, uint16_t lport, uint32_t rip, uint16_t rport)
{
    uint64_t x = ((uint64_t)rip << 32 | (uint64_t)rport << 16 | lport) ^ ((uint64_t)H.seed << 32 | H.seed);
    x ^= (uint64_t)lip * 0x9e3779b97f4a7c15ull;
    return (uint32_t)hash64_mix(x) | 1u;
}

static inline uint32_t pcb_hash(const struct tcp_pcb *p)
{
    return key_hash(ip4_addr_get_u32(ip_2_ip4(&p->local_ip)), p->local_port, ip4_addr_get_u32(ip_2_ip4(&p->remote_ip)),
                    p->remote_port);
}

static struct slot *table_new(uint32_t slots)
{
    void *m = mmap(NULL, (size_t)slots * sizeof(struct slot), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    return m == MAP_FAILED ? NULL : m;
}

int lstack_port_hash_init(uint32_t hint, uint32_t seed)
{
    uint32_t slots = 1024;
    while (slots < 2 * (uint64_t)hint && slots < (1u << 30))
        slots <<= 1;
    struct slot *t = table_new(slots);
    if (t == NULL)
        return -12; /* -ENOMEM */
    if (H.t != NULL)
        munmap(H.t, (size_t)(H.mask + 1) * sizeof(struct slot));
    H.t = t;
    H.mask = slots - 1;
    H.seed = seed;
    H.st.slots = slots;
    H.st.entries = 0;
    return 0;
}

static void insert(struct slot *t, uint32_t mask, uint32_t h, struct tcp_pcb *pcb)
{
    uint32_t i = h & mask;
    while (t[i].pcb != NULL)
        i = (i + 1) & mask;
    t[i].h = h;
    t[i].pcb = pcb;
}

/* Double the table. Returns 0, or -1 if no memory (the old table stays:
 * it only gets fuller, lookups stay correct). */
static int grow(void)
{
    uint32_t slots = (H.mask + 1) * 2;
    struct slot *t = table_new(slots);
    if (t == NULL)
        return -1;
    for (uint32_t i = 0; i <= H.mask; i++)
        if (H.t[i].pcb != NULL)
            insert(t, slots - 1, H.t[i].h, H.t[i].pcb);
    munmap(H.t, (size_t)(H.mask + 1) * sizeof(struct slot));
    H.t = t;
    H.mask = slots - 1;
    H.st.slots = slots;
    H.st.grows++;
    return 0;
}

void lstack_pcb_hash_add(struct tcp_pcb *pcb)
{
    if (H.t == NULL && lstack_port_hash_init(0, 0x2545f491u) != 0)
        lstack_lwip_assert_fail("pcb hash: no memory for the table", __FILE__, __LINE__);
    if ((H.st.entries + 1) * 2 > (uint64_t)H.mask + 1 && grow() != 0 && H.st.entries + 1 > H.mask)
        lstack_lwip_assert_fail("pcb hash: table full and cannot grow", __FILE__, __LINE__);
    insert(H.t, H.mask, pcb_hash(pcb), pcb);
    H.st.entries++;
    flow_tell(pcb, 1);
}

void lstack_pcb_hash_del(struct tcp_pcb *pcb)
{
    if (lstack_tcp_in_burst) /* no output owed to it at the burst's end (tcp_rx_burst.c) */
        lstack_tcp_burst_forget(pcb);
    if (H.t == NULL)
        return;
    uint32_t i = pcb_hash(pcb) & H.mask;
    while (H.t[i].pcb != pcb) {
        if (H.t[i].pcb == NULL) {
            /* Not where its tuple says: its tuple changed while listed.
             * Find it by address (never seen; kept so that a stale
             * pointer can never stay in the table). */
            for (i = 0; i <= H.mask && H.t[i].pcb != pcb; i++)
                ;
            if (i > H.mask)
                return;
            break;
        }
        i = (i + 1) & H.mask;
    }
    /* Backward-shift deletion: move later entries of the probe run into
     * the hole unless their home slot lies cyclically in (hole, j]. */
    uint32_t hole = i;
    uint32_t j = i;
    for (;;) {
        j = (j + 1) & H.mask;
        if (H.t[j].pcb == NULL)
            break;
        uint32_t home = H.t[j].h & H.mask;
        if (((j - home) & H.mask) >= ((j - hole) & H.mask)) {
            H.t[hole] = H.t[j];
            hole = j;
        }
    }
    H.t[hole].pcb = NULL;
    H.t[hole].h = 0;
    H.st.entries--;
    flow_tell(pcb, 0);
}

struct tcp_pcb *lstack_pcb_hash_lookup(u32_t local_ip, u16_t local_port, u32_t remote_ip, u16_t remote_port)
{
    if (H.t == NULL)
        return NULL;
    uint32_t h = key_hash(local_ip, local_port, remote_ip, remote_port);
    uint32_t i = h & H.mask;
    H.st.lookups++;
    for (;;) {
        struct slot *s = &H.t[i];
        H.st.probes++;
        if (s->pcb == NULL)
            return NULL;
        if (s->h == h) {
            struct tcp_pcb *p = s->pcb;
            if (p->local_port == local_port && p->remote_port == remote_port &&
                ip4_addr_get_u32(ip_2_ip4(&p->remote_ip)) == remote_ip &&
                ip4_addr_get_u32(ip_2_ip4(&p->local_ip)) == local_ip)
                return p;
        }
        i = (i + 1) & H.mask;
    }
}

void lstack_lwip_hash_stats(struct lstack_lwip_hash_stats *out)
{
    *out = H.st;
}
