/*
 * mem_rss.c - a memory port split into RSS queues (see mem_rss.h): the
 * Toeplitz hash of each received frame picks its queue, each queue batches
 * its sends; a mutex serialises the queues over the underlying port. A
 * test port: not in liblstack.so.
 */
#include "mem_rss.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

const uint8_t nic_mem_rss_key[40] = {
    0x6d, 0x5a, 0x56, 0xda, 0x25, 0x5b, 0x0e, 0xc2, 0x41, 0x67, 0x25, 0x3d, 0x43, 0xa3,
    0x8f, 0xb0, 0xd0, 0xca, 0x2b, 0xcb, 0xae, 0x7b, 0x30, 0xb4, 0x77, 0xcb, 0x2d, 0xa3,
    0x80, 0x30, 0xf2, 0x0c, 0x6a, 0x42, 0xb7, 0x3b, 0xbe, 0xac, 0x01, 0xfa,
};

#define RETA 128
#define PULL 32
#define STAGE 64        /* frames a queue batches before its tx_flush */
#define STAGE_LEN 1536  /* the memory port's longest frame */

struct rss;

struct rss_q {
    struct nic base;       /* first: ops */
    struct rss *rss;
    unsigned idx;
    struct nic_pkt *pend;  /* frames for this queue, oldest first */
    unsigned head, count, cap;
    uint64_t rx_packets, rx_bytes;
    unsigned staged;       /* this queue's tx batch, copied to the port at tx_flush */
    uint16_t stage_len[STAGE];
    uint8_t (*stage)[STAGE_LEN];
};

struct rss {
    pthread_mutex_t mu;
    struct nic *under;
    unsigned nq, open;
    struct nic_steer steer;
    struct rss_q q[];
};

static struct rss_q *rq(struct nic *n)
{
    return (struct rss_q *)n;
}

static const struct rss_q *rq_c(const struct nic *n)
{
    return (const struct rss_q *)n;
}

/* The queue the NIC puts frame f on. */
static unsigned classify(const struct rss *r, const uint8_t *f, uint16_t len)
{
    if (len < 34 || f[12] != 0x08 || f[13] != 0x00 || (f[14] >> 4) != 4)
        return 0;
    const uint8_t *ip = f + 14;
    size_t ihl = (size_t)(ip[0] & 0x0f) * 4;
    bool frag = (((unsigned)ip[6] << 8 | ip[7]) & 0x3fff) != 0;
    uint32_t h;
    if (ip[9] == 6 && !frag && len >= 14 + ihl + 4) {
        uint32_t src, dst;
        uint16_t sp, dp;
        memcpy(&src, ip + 12, 4);
        memcpy(&dst, ip + 16, 4);
        memcpy(&sp, ip + ihl, 2);
        memcpy(&dp, ip + ihl + 2, 2);
        return (unsigned)nic_steer_queue_tcp4(&r->steer, src, dst, sp, dp);
    }
    h = nic_toeplitz(r->steer.key, r->steer.key_len, ip + 12, 8);
    return r->steer.reta[h % r->steer.reta_size];
}

/* Append p to q's list. -1: out of memory. */
static int push(struct rss_q *q, const struct nic_pkt *p)
{
    if (q->count == q->cap) {
        unsigned cap = q->cap ? q->cap * 2 : 64;
        struct nic_pkt *np = malloc(cap * sizeof(*np));
        if (np == NULL)
            return -1;
        for (unsigned i = 0; i < q->count; i++)
            np[i] = q->pend[(q->head + i) % q->cap];
        free(q->pend);
        q->pend = np;
        q->head = 0;
        q->cap = cap;
    }
    q->pend[(q->head + q->count) % q->cap] = *p;
    q->count++;
    return 0;
}

static unsigned take(struct rss_q *q, struct nic_pkt *pkts, unsigned max)
{
    unsigned n = 0;
    while (n < max && q->count > 0) {
        pkts[n++] = q->pend[q->head];
        q->head = (q->head + 1) % q->cap;
        q->count--;
    }
    return n;
}

static unsigned rss_rx_burst(struct nic *n, struct nic_pkt *pkts, unsigned max)
{
    struct rss_q *q = rq(n);
    struct rss *r = q->rss;
    pthread_mutex_lock(&r->mu);
    unsigned got = take(q, pkts, max);
    struct nic_pkt tmp[PULL];
    for (;;) {
        unsigned k = r->under->ops->rx_burst(r->under, tmp, PULL);
        for (unsigned i = 0; i < k; i++) {
            struct rss_q *to = &r->q[classify(r, tmp[i].data, tmp[i].len)];
            if (to == q && got < max)
                pkts[got++] = tmp[i];
            else if (push(to, &tmp[i]) != 0)
                r->under->ops->pkt_free(r->under, tmp[i].handle); /* out of memory: lost, as on a NIC */
        }
        if (k < PULL || got == max)
            break;
    }
    for (unsigned i = 0; i < got; i++) {
        q->rx_packets++;
        q->rx_bytes += pkts[i].len;
    }
    pthread_mutex_unlock(&r->mu);
    return got;
}

static void rss_pkt_free(struct nic *n, void *handle)
{
    struct rss *r = rq(n)->rss;
    pthread_mutex_lock(&r->mu);
    r->under->ops->pkt_free(r->under, handle);
    pthread_mutex_unlock(&r->mu);
}

/* Send this queue's batch through the port (the lock held). */
static unsigned flush_locked(struct rss_q *q)
{
    struct nic *u = q->rss->under;
    for (unsigned i = 0; i < q->staged; i++) {
        uint8_t *p = u->ops->tx_frame(u, q->stage_len[i]);
        if (p != NULL) /* else counted by the port */
            memcpy(p, q->stage[i], q->stage_len[i]);
    }
    q->staged = 0;
    return u->ops->tx_flush(u);
}

/* Each queue batches in its own buffers: a frame another queue's thread is
 * still writing never leaves with this queue's flush. */
static uint8_t *rss_tx_frame(struct nic *n, uint16_t len)
{
    struct rss_q *q = rq(n);
    if (len > STAGE_LEN)
        return NULL;
    if (q->staged == STAGE) {
        pthread_mutex_lock(&q->rss->mu);
        flush_locked(q);
        pthread_mutex_unlock(&q->rss->mu);
    }
    q->stage_len[q->staged] = len;
    return q->stage[q->staged++];
}

static unsigned rss_tx_flush(struct nic *n)
{
    struct rss_q *q = rq(n);
    if (q->staged == 0)
        return 0;
    pthread_mutex_lock(&q->rss->mu);
    unsigned k = flush_locked(q);
    pthread_mutex_unlock(&q->rss->mu);
    return k;
}

static void rss_get_stats(const struct nic *n, struct nic_stats *s)
{
    const struct rss_q *q = rq_c(n);
    struct rss *r = q->rss;
    pthread_mutex_lock(&r->mu);
    r->under->ops->get_stats(r->under, s);
    s->rx_packets = q->rx_packets;
    s->rx_bytes = q->rx_bytes;
    pthread_mutex_unlock(&r->mu);
}

static void rss_mac(const struct nic *n, uint8_t mac[6])
{
    struct nic *u = rq_c(n)->rss->under;
    u->ops->mac(u, mac);
}

static const char *rss_name(const struct nic *n)
{
    struct nic *u = rq_c(n)->rss->under;
    return u->ops->name(u);
}

/* The port's caps less TSO (a queue batches single frames only). */
static void rss_caps(const struct nic *n, struct nic_caps *c)
{
    struct nic *u = rq_c(n)->rss->under;
    u->ops->caps(u, c);
    c->tso_max = 0;
    c->tso_mss_max = 0;
}

static void rss_close(struct nic *n)
{
    struct rss_q *q = rq(n);
    struct rss *r = q->rss;
    pthread_mutex_lock(&r->mu);
    struct nic_pkt p;
    while (take(q, &p, 1) == 1)
        r->under->ops->pkt_free(r->under, p.handle);
    free(q->pend);
    q->pend = NULL;
    flush_locked(q);
    free(q->stage);
    q->stage = NULL;
    bool last = --r->open == 0;
    pthread_mutex_unlock(&r->mu);
    if (!last)
        return;
    r->under->ops->close(r->under);
    pthread_mutex_destroy(&r->mu);
    free(r);
}

static const struct nic_ops rss_ops = {
    .rx_burst = rss_rx_burst,
    .pkt_free = rss_pkt_free,
    .tx_frame = rss_tx_frame,
    .tx_flush = rss_tx_flush,
    .get_stats = rss_get_stats,
    .mac = rss_mac,
    .name = rss_name,
    .close = rss_close,
    .caps = rss_caps,
};

int nic_mem_rss_split(struct nic *under, unsigned nq, struct nic **out, struct nic_steer *steer)
{
    if (nq == 0 || nq > NIC_STEER_QUEUES_MAX)
        return -1;
    struct rss *r = calloc(1, sizeof(*r) + nq * sizeof(r->q[0]));
    if (r == NULL)
        return -1;
    pthread_mutex_init(&r->mu, NULL);
    r->under = under;
    r->nq = r->open = nq;
    r->steer.kind = NIC_STEER_TOEPLITZ;
    r->steer.nb_queues = (uint16_t)nq;
    r->steer.key_len = sizeof(nic_mem_rss_key);
    memcpy(r->steer.key, nic_mem_rss_key, sizeof(nic_mem_rss_key));
    r->steer.reta_size = RETA;
    for (unsigned i = 0; i < RETA; i++)
        r->steer.reta[i] = (uint16_t)(i % nq);
    for (unsigned i = 0; i < nq; i++) {
        r->q[i].stage = malloc(STAGE * sizeof(*r->q[i].stage));
        if (r->q[i].stage == NULL) {
            for (unsigned j = 0; j < i; j++)
                free(r->q[j].stage);
            pthread_mutex_destroy(&r->mu);
            free(r);
            return -1;
        }
        r->q[i].base.ops = &rss_ops;
        r->q[i].rss = r;
        r->q[i].idx = i;
        out[i] = &r->q[i].base;
    }
    if (steer != NULL)
        *steer = r->steer;
    return 0;
}
