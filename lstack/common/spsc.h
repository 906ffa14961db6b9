/*
 * spsc.h - the indices of a single-producer / single-consumer ring, and
 * byte copies in and out of a ring of bytes. The storage (an array of
 * slots, or of bytes) is the caller's; this header owns the two indices and
 * their memory ordering. Header-only: it inlines into the data path of the
 * run-to-wakeup socket rings (sock/tcp_ring.c).
 * Design: docs/design.md#a-single-producer-ring-of-lstacks-own
 */
#ifndef LSTACK_SPSC_H
#define LSTACK_SPSC_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

/*
 * Indices are free-running 32-bit counters (they wrap; differences are
 * taken modulo 2^32), the capacity a power of two of at most 2^31, the slot
 * of index i is i & mask.
 *   tail  written by the producer only: slots [head, tail) are filled;
 *   head  written by the consumer only: slots before it are free again.
 * Memory ordering (GCC's __atomic builtins, the C11 model):
 *  - the producer fills slots, then stores tail with release; the consumer
 *    loads tail with acquire before it reads them (it sees them filled);
 *  - the consumer reads slots, then stores head with release; the producer
 *    loads head with acquire before it overwrites them (the reads are done).
 * Each side reads its own index without ordering (nobody else writes it).
 * A producer that frees slots later than the consumer reads them (the rx
 * ring of tcp_ring.c, where the stack frees the buffers the application
 * read) keeps a third index of its own and measures room against it.
 */

struct spsc {
    uint32_t mask;   /* capacity - 1 */
    uint32_t tail;   /* producer: next index to fill (atomic) */
    uint32_t head;   /* consumer: next index to read (atomic) */
};

/* cap: a power of two, 2 .. 2^31. Both indices start at start (tests use a
 * start near 2^32 to cross the wrap). Not concurrent with anything. */
static inline void spsc_init(struct spsc *r, uint32_t cap, uint32_t start)
{
    r->mask = cap - 1;
    r->tail = start;
    r->head = start;
}

static inline uint32_t spsc_cap(const struct spsc *r)
{
    return r->mask + 1;
}

/* ---- producer ---- */

/* Slots the producer may fill now (it measures against the head it reads). */
static inline uint32_t spsc_room(const struct spsc *r)
{
    uint32_t head = __atomic_load_n(&r->head, __ATOMIC_ACQUIRE);
    return spsc_cap(r) - (r->tail - head);
}

/* Publish n filled slots (n <= spsc_room). */
static inline void spsc_produce(struct spsc *r, uint32_t n)
{
    __atomic_store_n(&r->tail, r->tail + n, __ATOMIC_RELEASE);
}

/* The consumer's head as the producer sees it (acquire: what the consumer
 * read before it is read). */
static inline uint32_t spsc_head_seen(const struct spsc *r)
{
    return __atomic_load_n(&r->head, __ATOMIC_ACQUIRE);
}

/* ---- consumer ---- */

/* Filled slots the consumer may read now. */
static inline uint32_t spsc_avail(const struct spsc *r)
{
    return __atomic_load_n(&r->tail, __ATOMIC_ACQUIRE) - r->head;
}

/* Give n read slots back (n <= spsc_avail). */
static inline void spsc_consume(struct spsc *r, uint32_t n)
{
    __atomic_store_n(&r->head, r->head + n, __ATOMIC_RELEASE);
}

/* ---- a ring of bytes (buf has spsc_cap bytes) ---- */

/* Producer: copy n bytes (n <= spsc_room) to the slots from tail on,
 * wrapping; publishing is spsc_produce's. */
static inline void spsc_put_bytes(const struct spsc *r, char *buf, const void *src, uint32_t n)
{
    uint32_t off = r->tail & r->mask, first = spsc_cap(r) - off;
    if (first > n)
        first = n;
    memcpy(buf + off, src, first);
    memcpy(buf, (const char *)src + first, n - first);
}

/* Consumer: copy n bytes (n <= spsc_avail) from the slots from head on,
 * wrapping; giving them back is spsc_consume's. */
static inline void spsc_get_bytes(const struct spsc *r, const char *buf, void *dst, uint32_t n)
{
    uint32_t off = r->head & r->mask, first = spsc_cap(r) - off;
    if (first > n)
        first = n;
    memcpy(dst, buf + off, first);
    memcpy((char *)dst + first, buf, n - first);
}

#endif
