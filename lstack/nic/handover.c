/*
 * handover.c - see handover.h: per-stack inboxes (rte_ring of frames,
 * many producers, one consumer) and per-stack outboxes (a fixed array of
 * frames waiting for a full inbox).
 *
 * The ring's memory comes from libnuma on the stack's node (or the heap),
 * and the ring is set up with rte_ring_init over it, so an inbox needs no
 * EAL memzone: inboxes can be made before or without EAL (the memory port
 * of the unit tests), and freeing one returns its memory at once.
 * Elements are struct nic_handover_frame by value (rte_ring's elem API), so
 * no per-frame descriptor is allocated.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <numa.h>
#include <rte_ring.h>
#include <rte_ring_elem.h>

#include "common/sanitizer.h"
#include "nic/handover.h"
#include "nic/steer.h"

/*
 * The outbox is a FIFO of (destination, frame) pairs. Retrying walks it in
 * order and moves every frame whose inbox takes it, stopping for a
 * destination at its first refusal, so frames to one stack keep their order
 * while frames to another move on. Its length is at most one rx burst, so
 * the walk is short.
 */

#define ESIZE ((unsigned)sizeof(struct nic_handover_frame))
_Static_assert(sizeof(struct nic_handover_frame) % 4 == 0, "rte_ring element size must be a multiple of 4");

struct nic_handover {
    struct rte_ring *ring;
    size_t mem_len;
    bool numa_mem;
    uint64_t in;              /* owner thread only */
};

struct waiting {
    unsigned to;
    struct nic_handover_frame f;
};

struct nic_handover_out {
    struct nic_handover *const *inbox;
    unsigned nb;
    unsigned capacity, head, count; /* FIFO in w[] */
    uint64_t out, waited;
    struct nic_handover *inbox_copy[NIC_STEER_QUEUES_MAX];
    struct waiting w[];
};

static void frame_free(struct nic_handover_frame *f)
{
    f->origin->ops->pkt_free(f->origin, f->pkt.handle);
}

struct nic_handover *nic_handover_create(unsigned slots, int node, char *err, size_t errlen)
{
    if (slots < 2 || slots > 65536 || (slots & (slots - 1)) != 0) {
        snprintf(err, errlen, "handover ring of %u slots: need a power of two in 2..65536", slots);
        return NULL;
    }
    struct nic_handover *h = calloc(1, sizeof(*h));
    if (h == NULL) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    /* RING_F_EXACT_SZ: `slots` usable entries (a plain ring holds one less) */
    ssize_t len = rte_ring_get_memsize_elem(ESIZE, slots * 2);
    if (len < 0) {
        snprintf(err, errlen, "handover ring of %u slots: %s", slots, strerror((int)-len));
        free(h);
        return NULL;
    }
    h->mem_len = (size_t)len;
    void *mem = NULL;
    if (node >= 0 && numa_available() >= 0 && node <= numa_max_node()) {
        mem = numa_alloc_onnode(h->mem_len, node); /* page-aligned */
        h->numa_mem = mem != NULL;
    }
    if (mem == NULL && posix_memalign(&mem, 64, h->mem_len) != 0)
        mem = NULL;
    if (mem == NULL) {
        snprintf(err, errlen, "handover ring: cannot allocate %zu bytes", h->mem_len);
        free(h);
        return NULL;
    }
    memset(mem, 0, h->mem_len);
    h->ring = mem;
    int rc = rte_ring_init(h->ring, "lstack_handover", slots, RING_F_SC_DEQ | RING_F_EXACT_SZ);
    if (rc != 0) {
        snprintf(err, errlen, "handover ring: %s", strerror(-rc));
        nic_handover_free(h);
        return NULL;
    }
    return h;
}

LSTACK_NO_TSAN void nic_handover_free(struct nic_handover *h)
{
    if (h == NULL)
        return;
    struct nic_handover_frame f;
    if (h->ring->size != 0)
        while (rte_ring_dequeue_elem(h->ring, &f, ESIZE) == 0)
            frame_free(&f);
    if (h->numa_mem)
        numa_free(h->ring, h->mem_len);
    else
        free(h->ring);
    free(h);
}

LSTACK_NO_TSAN unsigned nic_handover_take(struct nic_handover *h, struct nic_handover_frame *f, unsigned max)
{
    unsigned got = rte_ring_dequeue_burst_elem(h->ring, f, ESIZE, max, NULL);
    if (got > 0)
        LSTACK_TSAN_ACQUIRE(h); /* the frames the senders handed over before their enqueue */
    h->in += got;
    return got;
}

LSTACK_NO_TSAN unsigned nic_handover_count(const struct nic_handover *h)
{
    return rte_ring_count(h->ring);
}

struct nic_handover_out *nic_handover_out_create(struct nic_handover *const *inboxes, unsigned nb,
                                                 unsigned capacity, char *err, size_t errlen)
{
    if (nb == 0 || nb > NIC_STEER_QUEUES_MAX || capacity == 0 || capacity > 65536) {
        snprintf(err, errlen, "handover outbox: %u stacks (1..%u), %u frames (1..65536)", nb, NIC_STEER_QUEUES_MAX,
                 capacity);
        return NULL;
    }
    struct nic_handover_out *o = calloc(1, sizeof(*o) + capacity * sizeof(o->w[0]));
    if (o == NULL) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    memcpy(o->inbox_copy, inboxes, nb * sizeof(inboxes[0]));
    o->inbox = o->inbox_copy;
    o->nb = nb;
    o->capacity = capacity;
    return o;
}

void nic_handover_out_free(struct nic_handover_out *o)
{
    if (o == NULL)
        return;
    for (unsigned i = 0; i < o->count; i++)
        frame_free(&o->w[(o->head + i) % o->capacity].f);
    free(o);
}

/* Does o hold a frame for `to`? */
static bool waits_for(const struct nic_handover_out *o, unsigned to)
{
    for (unsigned i = 0; i < o->count; i++)
        if (o->w[(o->head + i) % o->capacity].to == to)
            return true;
    return false;
}

LSTACK_NO_TSAN int nic_handover_forward(struct nic_handover_out *o, unsigned to, const struct nic_handover_frame *f)
{
    if (to >= o->nb || o->inbox[to] == NULL)
        return -EINVAL;
    if (o->count == 0 || !waits_for(o, to)) {
        LSTACK_TSAN_RELEASE(o->inbox[to]);
        if (rte_ring_enqueue_elem(o->inbox[to]->ring, (void *)f, ESIZE) == 0) {
            o->out++;
            return 0;
        }
    }
    if (o->count == o->capacity)
        return -ENOBUFS;
    o->waited++;
    struct waiting *w = &o->w[(o->head + o->count) % o->capacity];
    w->to = to;
    w->f = *f;
    o->count++;
    return 0;
}

LSTACK_NO_TSAN unsigned nic_handover_retry(struct nic_handover_out *o)
{
    if (o->count == 0)
        return 0;
    uint64_t blocked = 0; /* destinations that refused a frame this pass (bit per stack) */
    unsigned kept = 0, n = o->count;
    for (unsigned i = 0; i < n; i++) {
        struct waiting w = o->w[(o->head + i) % o->capacity];
        uint64_t bit = UINT64_C(1) << w.to;
        if (!(blocked & bit)) {
            LSTACK_TSAN_RELEASE(o->inbox[w.to]);
            if (rte_ring_enqueue_elem(o->inbox[w.to]->ring, &w.f, ESIZE) == 0) {
                o->out++;
                continue;
            }
            blocked |= bit;
        }
        o->w[(o->head + kept) % o->capacity] = w; /* compact in place, order kept */
        kept++;
    }
    o->count = kept;
    return kept;
}

void nic_handover_stats(const struct nic_handover *h, const struct nic_handover_out *o, struct nic_handover_stats *s)
{
    memset(s, 0, sizeof(*s));
    if (h != NULL)
        s->in = __atomic_load_n(&h->in, __ATOMIC_RELAXED);
    if (o != NULL) {
        s->out = __atomic_load_n(&o->out, __ATOMIC_RELAXED);
        s->waited = __atomic_load_n(&o->waited, __ATOMIC_RELAXED);
        s->waiting = __atomic_load_n(&o->count, __ATOMIC_RELAXED);
    }
}

const struct nic_handover_api nic_handover_api = {
    .create = nic_handover_create,
    .free = nic_handover_free,
    .take = nic_handover_take,
    .count = nic_handover_count,
    .out_create = nic_handover_out_create,
    .out_free = nic_handover_out_free,
    .forward = nic_handover_forward,
    .retry = nic_handover_retry,
    .stats = nic_handover_stats,
};
