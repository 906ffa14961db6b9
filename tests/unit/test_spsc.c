/*
 * test_spsc.c - the single-producer / single-consumer ring indices and byte
 * copies of common/spsc.h (run-to-wakeup's socket rings, sock/tcp_ring.c):
 * slots come out in the order they went in; a full ring takes nothing more
 * and an empty one gives nothing; indices that wrap past 2^32 and copies
 * that wrap past the end of the buffer keep the bytes whole; a producer and
 * a consumer thread move a counting byte stream through a small ring and
 * every byte arrives once, in order.
 */
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <string.h>

#include "common/spsc.h"
#include "tap.h"

/* Slots in, slots out, in order; room and avail as they go. */
static void test_order(void)
{
    struct spsc r;
    int slot[8];
    spsc_init(&r, 8, 0);
    checkf(spsc_room(&r) == 8 && spsc_avail(&r) == 0, "new ring: room %u avail %u", spsc_room(&r),
           spsc_avail(&r));
    for (int i = 0; i < 5; i++)
        slot[(r.tail + (uint32_t)i) & r.mask] = 100 + i;
    spsc_produce(&r, 5);
    checkf(spsc_avail(&r) == 5 && spsc_room(&r) == 3, "5 produced: avail %u room %u", spsc_avail(&r),
           spsc_room(&r));
    int bad = -1;
    for (int i = 0; i < 5; i++)
        if (slot[(r.head + (uint32_t)i) & r.mask] != 100 + i && bad < 0)
            bad = i;
    checkf(bad < 0, "slots read in the order written (first wrong: %d)", bad);
    spsc_consume(&r, 2);
    checkf(spsc_avail(&r) == 3 && spsc_room(&r) == 5, "2 consumed: avail %u room %u", spsc_avail(&r),
           spsc_room(&r));
    checkf(slot[r.head & r.mask] == 102, "the head after consuming 2 is the third: %d", slot[r.head & r.mask]);
}

/* Full: no room; empty: nothing to read. */
static void test_full_empty(void)
{
    struct spsc r;
    spsc_init(&r, 4, 0);
    spsc_produce(&r, 4);
    checkf(spsc_room(&r) == 0, "full ring: room %u", spsc_room(&r));
    checkf(spsc_avail(&r) == 4, "full ring: avail %u", spsc_avail(&r));
    spsc_consume(&r, 4);
    checkf(spsc_avail(&r) == 0 && spsc_room(&r) == 4, "emptied: avail %u room %u", spsc_avail(&r),
           spsc_room(&r));
}

/* Indices that cross 2^32, byte copies that cross the buffer's end. */
static void test_wrap(void)
{
    struct spsc r;
    char buf[16], out[16];
    spsc_init(&r, 16, UINT32_MAX - 5);
    int bad = 0;
    uint32_t seq = 0, got = 0;
    for (int round = 0; round < 40; round++) {
        char in[11];
        for (int i = 0; i < 11; i++)
            in[i] = (char)(seq + (uint32_t)i);
        uint32_t n = spsc_room(&r) < 11 ? spsc_room(&r) : 11;
        spsc_put_bytes(&r, buf, in, n);
        spsc_produce(&r, n);
        seq += n;
        uint32_t m = spsc_avail(&r);
        spsc_get_bytes(&r, buf, out, m);
        spsc_consume(&r, m);
        for (uint32_t i = 0; i < m; i++)
            if (out[i] != (char)(got + i))
                bad++;
        got += m;
    }
    checkf(bad == 0 && got == seq && got > 16 * 20, "bytes across the index wrap and the buffer end: %d wrong of %u",
           bad, got);
    checkf(r.head == r.tail && r.head < 1000, "indices wrapped past 2^32 (now %u)", r.head);
}

/* Two threads: a producer writes a counting stream in uneven pieces, a
 * consumer reads it in other pieces, through a 64-byte ring; each yields
 * when the other has to move. */
enum { STREAM = 1 << 20 };
static struct spsc tr;
static char tbuf[64];
static unsigned long stream_bad, stream_got;

static void *producer(void *arg)
{
    (void)arg;
    uint32_t sent = 0, piece = 1;
    char in[64];
    while (sent < STREAM) {
        uint32_t room = spsc_room(&tr);
        if (room == 0) {
            sched_yield(); /* a loaded 2-core machine: let the consumer run */
            continue;
        }
        uint32_t n = piece < room ? piece : room;
        if (n > STREAM - sent)
            n = STREAM - sent;
        for (uint32_t i = 0; i < n; i++)
            in[i] = (char)((sent + i) * 7);
        spsc_put_bytes(&tr, tbuf, in, n);
        spsc_produce(&tr, n);
        sent += n;
        piece = piece % 61 + 1;
    }
    return NULL;
}

static void *consumer(void *arg)
{
    (void)arg;
    uint32_t got = 0, piece = 5;
    char out[64];
    while (got < STREAM) {
        uint32_t avail = spsc_avail(&tr);
        if (avail == 0) {
            sched_yield();
            continue;
        }
        uint32_t n = piece < avail ? piece : avail;
        spsc_get_bytes(&tr, tbuf, out, n);
        spsc_consume(&tr, n);
        for (uint32_t i = 0; i < n; i++)
            if (out[i] != (char)((got + i) * 7))
                stream_bad++;
        got += n;
        piece = piece % 37 + 3;
    }
    stream_got = got;
    return NULL;
}

static void test_threads(void)
{
    spsc_init(&tr, sizeof(tbuf), UINT32_MAX - 1000);
    pthread_t p, c;
    pthread_create(&c, NULL, consumer, NULL);
    pthread_create(&p, NULL, producer, NULL);
    pthread_join(p, NULL);
    pthread_join(c, NULL);
    checkf(stream_bad == 0 && stream_got == STREAM, "two threads, 1 MiB through 64 bytes: %lu of %lu wrong",
           stream_bad, stream_got);
}

int main(void)
{
    test_order();
    test_full_empty();
    test_wrap();
    test_threads();
    return tap_done();
}
