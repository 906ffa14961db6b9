/*
 * flow_dir.c - see flow_dir.h.
 *
 * A slot is two words: w1 = local_ip << 32 | remote_ip, w2 = local_port <<
 * 48 | remote_port << 32 | hash (the hash's low bit set: w2 == 0 is an
 * empty slot). The writer stores w1 before w2 and a reader loads w2 before
 * w1; the sequence counter around every change settles the rest (a reader
 * that saw the counter move, or odd, looks again). Every access to a slot
 * is atomic (relaxed), so that the readers' overlap with the writer is no
 * data race.
 */
#include "stack/flow_dir.h"

#include <stdlib.h>
#include <sys/random.h>

#include "common/hash64.h"

struct flow_slot {
    uint64_t w1, w2;
};

struct flow_table {
    struct flow_table *next_old;
    uint32_t mask;
    uint32_t seed;
    struct flow_slot slot[];
};

static uint32_t key_hash(const struct frame_flow_tuple *k, uint32_t seed)
{
    uint64_t x = ((uint64_t)k->local_ip << 32 | k->remote_ip) ^ ((uint64_t)k->local_port << 16 | k->remote_port) << 7;
    x ^= (uint64_t)seed * 0x9e3779b97f4a7c15ull;
    return (uint32_t)hash64_mix(x) | 1u;
}

static uint64_t key_w1(const struct frame_flow_tuple *k)
{
    return (uint64_t)k->local_ip << 32 | k->remote_ip;
}

static uint64_t key_w2(const struct frame_flow_tuple *k, uint32_t h)
{
    return (uint64_t)k->local_port << 48 | (uint64_t)k->remote_port << 32 | h;
}

static struct flow_table *table_new(uint32_t slots, uint32_t seed)
{
    struct flow_table *t = calloc(1, sizeof(*t) + (size_t)slots * sizeof(struct flow_slot));
    if (t == NULL)
        return NULL;
    t->mask = slots - 1;
    t->seed = seed;
    return t;
}

int flow_dir_init(struct flow_dir *d, uint32_t hint)
{
    uint32_t slots = 256, seed = 0;
    while (slots < 2 * (uint64_t)hint && slots < (1u << 28))
        slots <<= 1;
    if (getrandom(&seed, sizeof(seed), GRND_NONBLOCK) != (ssize_t)sizeof(seed))
        seed = (uint32_t)(uintptr_t)d * 2654435761u;
    *d = (struct flow_dir){.t = table_new(slots, seed)};
    return d->t != NULL ? 0 : -1;
}

void flow_dir_free(struct flow_dir *d)
{
    free(d->t);
    for (struct flow_table *o = d->old; o != NULL;) {
        struct flow_table *next = o->next_old;
        free(o);
        o = next;
    }
    d->t = d->old = NULL;
}

/* ---- the writer ---- */

static void change_begin(struct flow_dir *d)
{
    __atomic_store_n(&d->seq, d->seq + 1, __ATOMIC_RELAXED);
    __atomic_thread_fence(__ATOMIC_RELEASE);
}

static void change_end(struct flow_dir *d)
{
    __atomic_store_n(&d->seq, d->seq + 1, __ATOMIC_RELEASE);
}

static void slot_put(struct flow_slot *s, uint64_t w1, uint64_t w2)
{
    __atomic_store_n(&s->w1, w1, __ATOMIC_RELAXED);
    __atomic_store_n(&s->w2, w2, __ATOMIC_RELAXED);
}

static void insert(struct flow_table *t, uint64_t w1, uint64_t w2)
{
    uint32_t i = (uint32_t)w2 & t->mask;
    while (t->slot[i].w2 != 0)
        i = (i + 1) & t->mask;
    slot_put(&t->slot[i], w1, w2);
}

/* Double the table (not yet visible: no reader is in the new one). */
static struct flow_table *grown(const struct flow_table *t)
{
    struct flow_table *n = table_new((t->mask + 1) * 2, t->seed);
    if (n == NULL)
        return NULL;
    for (uint32_t i = 0; i <= t->mask; i++)
        if (t->slot[i].w2 != 0)
            insert(n, t->slot[i].w1, t->slot[i].w2);
    return n;
}

void flow_dir_add(struct flow_dir *d, const struct frame_flow_tuple *k)
{
    struct flow_table *t = d->t;
    if ((d->entries + 1) * 2 > t->mask + 1) {
        struct flow_table *n = grown(t);
        if (n == NULL && d->entries + 1 > t->mask) {
            d->full++; /* its segments on the wrong queue stay there */
            return;
        }
        if (n != NULL) {
            change_begin(d);
            __atomic_store_n(&d->t, n, __ATOMIC_RELEASE);
            change_end(d);
            t->next_old = d->old;
            d->old = t;
            t = n;
        }
    }
    uint32_t h = key_hash(k, t->seed);
    change_begin(d);
    insert(t, key_w1(k), key_w2(k, h));
    change_end(d);
    d->entries++;
}

void flow_dir_del(struct flow_dir *d, const struct frame_flow_tuple *k)
{
    struct flow_table *t = d->t;
    uint32_t h = key_hash(k, t->seed);
    uint64_t w1 = key_w1(k), w2 = key_w2(k, h);
    uint32_t i = h & t->mask;
    for (;;) {
        if (t->slot[i].w2 == 0)
            return; /* not there (the table was full when it came) */
        if (t->slot[i].w2 == w2 && t->slot[i].w1 == w1)
            break;
        i = (i + 1) & t->mask;
    }
    change_begin(d);
    /* Backward-shift deletion: move later entries of the probe run into the
     * hole unless their home slot lies cyclically in (hole, j]. */
    uint32_t hole = i, j = i;
    for (;;) {
        j = (j + 1) & t->mask;
        uint64_t v2 = t->slot[j].w2;
        if (v2 == 0)
            break;
        uint32_t home = (uint32_t)v2 & t->mask;
        if (((j - home) & t->mask) >= ((j - hole) & t->mask)) {
            slot_put(&t->slot[hole], t->slot[j].w1, v2);
            hole = j;
        }
    }
    slot_put(&t->slot[hole], 0, 0);
    change_end(d);
    d->entries--;
}

/* ---- readers ---- */

bool flow_dir_has(const struct flow_dir *d, const struct frame_flow_tuple *k)
{
    uint64_t w1 = key_w1(k);
    for (;;) {
        uint32_t s1 = __atomic_load_n(&d->seq, __ATOMIC_ACQUIRE);
        if (s1 & 1)
            continue; /* the writer is in a change: a few stores */
        const struct flow_table *t = __atomic_load_n(&d->t, __ATOMIC_ACQUIRE);
        uint32_t h = key_hash(k, t->seed);
        uint64_t w2 = key_w2(k, h);
        bool found = false;
        for (uint32_t i = h & t->mask, n = 0; n <= t->mask; i = (i + 1) & t->mask, n++) {
            uint64_t v2 = __atomic_load_n(&t->slot[i].w2, __ATOMIC_RELAXED);
            if (v2 == 0)
                break;
            if (v2 == w2 && __atomic_load_n(&t->slot[i].w1, __ATOMIC_RELAXED) == w1) {
                found = true;
                break;
            }
        }
        __atomic_thread_fence(__ATOMIC_ACQUIRE);
        if (__atomic_load_n(&d->seq, __ATOMIC_RELAXED) == s1)
            return found;
    }
}
