/*
 * test_handover.c - the frame handover between stacks (nic/handover.c):
 * frames reach the inbox of the stack they are forwarded to, in order; a
 * full inbox makes them wait in the sender's outbox (counted), never
 * dropped, while frames for another stack move on; two sender threads
 * and a receiver thread lose and reorder nothing; frames left in an inbox
 * or outbox at free go back to their origin port; bad arguments get
 * errors. Frames are fake (a handle carries a sequence number) from a fake
 * port that counts pkt_free.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#include "nic/handover.h"
#include "tap.h"

struct fake_nic {
    struct nic base;
    uint64_t freed;
};

static void fake_free(struct nic *n, void *handle)
{
    (void)handle;
    __atomic_add_fetch(&((struct fake_nic *)n)->freed, 1, __ATOMIC_RELAXED);
}

static const struct nic_ops fake_ops = {.pkt_free = fake_free};

static struct nic_handover_frame frame(struct fake_nic *origin, uintptr_t seq)
{
    struct nic_handover_frame f = {.origin = &origin->base};
    f.pkt.handle = (void *)seq;
    f.pkt.len = (uint16_t)(60 + seq % 1000);
    return f;
}

static void full_inbox_waits(void)
{
    struct fake_nic port = {.base.ops = &fake_ops};
    char err[256];
    struct nic_handover *in[2] = {nic_handover_create(8, 0, err, sizeof(err)),
                                  nic_handover_create(8, -1, err, sizeof(err))};
    check(in[0] != NULL && in[1] != NULL, "two inboxes of 8 frames (one on node 0, one anywhere)");
    struct nic_handover_out *o = nic_handover_out_create(in, 2, 32, err, sizeof(err));
    check(o != NULL, "an outbox of 32 frames");
    int rc = 0;
    for (uintptr_t i = 0; i < 20; i++) {
        struct nic_handover_frame f = frame(&port, i);
        rc |= nic_handover_forward(o, 0, &f);
    }
    struct nic_handover_stats st;
    nic_handover_stats(in[0], o, &st);
    checkf(rc == 0 && nic_handover_count(in[0]) == 8 && st.waiting == 12 && st.waited == 12 && st.out == 8,
           "20 frames to an inbox of 8: 8 in it, 12 wait (out %lu, waited %lu, waiting %u)", (unsigned long)st.out,
           (unsigned long)st.waited, st.waiting);
    /* stack 1's inbox has room: its frame passes the ones waiting for 0 */
    struct nic_handover_frame f1 = frame(&port, 1000);
    rc = nic_handover_forward(o, 1, &f1);
    check(rc == 0 && nic_handover_count(in[1]) == 1, "a frame for another stack is not held up behind them");
    check(nic_handover_retry(o) == 12, "retry with the inbox still full: 12 wait");

    struct nic_handover_frame got[64];
    uintptr_t next = 0;
    int order_ok = 1;
    unsigned total = 0;
    for (int round = 0; round < 10 && total < 20; round++) {
        unsigned k = nic_handover_take(in[0], got, 64);
        for (unsigned i = 0; i < k; i++) {
            if ((uintptr_t)got[i].pkt.handle != next || got[i].origin != &port.base ||
                got[i].pkt.len != 60 + next % 1000)
                order_ok = 0;
            next++;
            got[i].origin->ops->pkt_free(got[i].origin, got[i].pkt.handle);
        }
        total += k;
        nic_handover_retry(o);
    }
    checkf(total == 20 && order_ok, "the owner takes all 20, in order, with their origin (%u)", total);
    nic_handover_stats(in[0], o, &st);
    checkf(st.in == 20 && st.waiting == 0 && st.out == 21, "counters: in 20, out 21, none waiting (%lu %lu %u)",
           (unsigned long)st.in, (unsigned long)st.out, st.waiting);

    /* frames left behind go back to their port */
    for (uintptr_t i = 0; i < 12; i++) {
        struct nic_handover_frame f = frame(&port, i);
        nic_handover_forward(o, 0, &f);
    }
    uint64_t before = port.freed;
    nic_handover_out_free(o);
    nic_handover_free(in[0]);
    nic_handover_free(in[1]);
    checkf(port.freed - before == 13, "freeing the outbox and inboxes frees the 13 frames they held (%lu)",
           (unsigned long)(port.freed - before));
}

static void errors(void)
{
    struct fake_nic port = {.base.ops = &fake_ops};
    char err[256] = "";
    check(nic_handover_create(6, -1, err, sizeof(err)) == NULL && strstr(err, "power of two") != NULL,
          "6 slots: refused, the reason says why");
    check(nic_handover_create(1 << 17, -1, err, sizeof(err)) == NULL, "2^17 slots: refused");
    struct nic_handover *in[1] = {nic_handover_create(2, -1, err, sizeof(err))};
    struct nic_handover_out *o = nic_handover_out_create(in, 1, 2, err, sizeof(err));
    struct nic_handover_frame f = frame(&port, 1);
    check(nic_handover_forward(o, 1, &f) == -EINVAL, "a stack past the outbox's: -EINVAL");
    int rc = 0;
    for (int i = 0; i < 4; i++)
        rc |= nic_handover_forward(o, 0, &f);
    check(rc == 0, "2 frames in the inbox and 2 waiting");
    check(nic_handover_forward(o, 0, &f) == -ENOBUFS, "outbox full: -ENOBUFS, the frame stays the caller's");
    check(nic_handover_out_create(in, 0, 2, err, sizeof(err)) == NULL, "an outbox for no stack: refused");
    nic_handover_out_free(o);
    nic_handover_free(in[0]);
    check(port.freed == 4, "the 4 frames held went back at free");
}

/* Two producer threads, one consumer: nothing lost, each producer's frames in order. */
#define PER_PRODUCER 50000

struct producer {
    struct nic_handover_out *o;
    struct fake_nic *port;
    uintptr_t tag;
};

static void *produce(void *arg)
{
    struct producer *p = arg;
    for (uintptr_t i = 0; i < PER_PRODUCER; i++) {
        while (nic_handover_retry(p->o) > 0)
            sched_yield(); /* back-pressure: no new frame while some wait */
        struct nic_handover_frame f = frame(p->port, p->tag << 32 | i);
        if (nic_handover_forward(p->o, 0, &f) != 0)
            return (void *)1;
    }
    while (nic_handover_retry(p->o) > 0)
        sched_yield();
    return NULL;
}

static void threads(void)
{
    struct fake_nic port = {.base.ops = &fake_ops};
    char err[256];
    struct nic_handover *in[1] = {nic_handover_create(64, 0, err, sizeof(err))};
    struct producer p[2];
    pthread_t t[2];
    for (int i = 0; i < 2; i++) {
        p[i] = (struct producer){.o = nic_handover_out_create(in, 1, 32, err, sizeof(err)), .port = &port,
                                 .tag = (uintptr_t)i + 1};
        pthread_create(&t[i], NULL, produce, &p[i]);
    }
    uintptr_t next[2] = {0, 0};
    int bad = 0;
    unsigned long total = 0;
    struct nic_handover_frame got[32];
    time_t deadline = time(NULL) + 30; /* a lost frame fails the check below, not the run */
    while (total < 2UL * PER_PRODUCER && time(NULL) < deadline) {
        unsigned k = nic_handover_take(in[0], got, 32);
        if (k == 0)
            sched_yield();
        for (unsigned i = 0; i < k; i++) {
            uintptr_t h = (uintptr_t)got[i].pkt.handle, who = (h >> 32) - 1, seq = h & 0xffffffffu;
            if (who > 1 || seq != next[who])
                bad++;
            else
                next[who]++;
        }
        total += k;
    }
    void *r0, *r1;
    pthread_join(t[0], &r0);
    pthread_join(t[1], &r1);
    struct nic_handover_stats s0, s1;
    nic_handover_stats(NULL, p[0].o, &s0);
    nic_handover_stats(NULL, p[1].o, &s1);
    checkf(r0 == NULL && r1 == NULL && bad == 0 && total == 2UL * PER_PRODUCER,
           "2 threads x %d frames through a 64-slot inbox: all arrive, each thread's in order (%d out of order)",
           PER_PRODUCER, bad);
    printf("# frames that waited: %lu + %lu\n", (unsigned long)s0.waited, (unsigned long)s1.waited);
    nic_handover_out_free(p[0].o);
    nic_handover_out_free(p[1].o);
    nic_handover_free(in[0]);
}

/* What a handover costs in one thread: forward and take, per frame
 * (printed, not asserted). */
static void cost(void)
{
    struct fake_nic port = {.base.ops = &fake_ops};
    char err[256];
    struct nic_handover *in[1] = {nic_handover_create(1024, -1, err, sizeof(err))};
    struct nic_handover_out *o = nic_handover_out_create(in, 1, 32, err, sizeof(err));
    struct nic_handover_frame got[32];
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    for (uintptr_t i = 0; i < 1000000; i += 32) {
        for (uintptr_t j = 0; j < 32; j++) {
            struct nic_handover_frame f = frame(&port, i + j);
            nic_handover_forward(o, 0, &f);
        }
        nic_handover_take(in[0], got, 32);
    }
    clock_gettime(CLOCK_MONOTONIC, &b);
    double ns = (double)(b.tv_sec - a.tv_sec) * 1e9 + (double)(b.tv_nsec - a.tv_nsec);
    printf("# cost: %.1f ns per frame forwarded and taken (one thread, bursts of 32)\n", ns / 1000000);
    nic_handover_out_free(o);
    nic_handover_free(in[0]);
}

int main(void)
{
    full_inbox_waits();
    errors();
    threads();
    cost();
    return tap_done();
}
