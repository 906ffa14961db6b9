/*
 * scale.c - does a second stack double the work a process does? N stacks
 * in one process (a group, as the runtime runs several), each polled by a
 * thread of its own pinned to a CPU of its own, each serving a minimal
 * request/response application ("+PONG" to a RESP PING), fed from memory
 * ports by the same thread, so that N stacks need N CPUs and no more.
 * Prints requests/s of 1 and N stacks in turn and the ratio of the
 * medians. Not a test: timings on a shared machine vary.
 *
 *   bench_scale [--stacks N] [--cpus 0,1] [--conns C] [--secs S] [--rounds R]
 *
 * Design: docs/design.md#the-scaling-benchmark-feeds-memory-ports-from-the-stacks-own-thread
 */
#include <arpa/inet.h>
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <time.h>
#include <unistd.h>

#include "common/inet_csum.h"
#include "conf/conf.h"
#include "mem_nic.h"
#include "nic/nic.h"
#include "scale.h"
#include "sock/lsock.h"
#include "stack/stack.h"
#include "raw_tcp.h"

/*
 * The load: the same thread that runs the stack plays its clients by
 * injecting pre-built request frames (their sequence and acknowledgement
 * numbers and checksums filled in) into the port's receive queue and
 * counting the replies the stack sends. Every connection has one request
 * outstanding; a reply lets its next request go. A thread's iteration:
 * under the stack's lock, one poll round (the requests in, lwIP, the
 * replies out), the application's look at the sockets that became
 * readable (read, write the reply), the tx batch sent; then, without the
 * lock, the next requests injected.
 *
 * 1 stack and N stacks run in turn, --rounds times (alternating, so a
 * drift of the machine favours neither), for --secs seconds each after a
 * warm-up; each run prints requests/s, per-stack requests/s and the time
 * each stack's thread spent waiting for a lock (measured here around every
 * lock taken, and as the runtime counts it where it does).
 */

#define MAX_STACKS 8
#define MAX_CONNS 256
#define SRV_PORT 6379
#define CLI_PORT0 20000

static const char request[] = "*1\r\n$4\r\nPING\r\n";
static const char reply[] = "+PONG\r\n";
#define REQ_LEN (sizeof(request) - 1)

/* ---- the clients of one stack: a TCP peer per connection, in frames ---- */

struct peer {
    uint32_t snd_nxt, rcv_nxt;
    bool up;           /* the SYN-ACK came */
    bool due;          /* its next request may go */
};

struct load {
    struct nic *port;  /* the stack's memory port: inject into it, tap what it sends */
    uint8_t srv_mac[6], cli_mac[6];
    uint32_t srv_ip, cli_ip;  /* network order */
    int nconn;
    struct peer peer[MAX_CONNS];
    uint8_t tmpl[MAX_CONNS][RAW_TCP_FRAME_MAX(REQ_LEN)]; /* each connection's request frame */
    uint16_t tmpl_len;
    int due[MAX_CONNS];
    int ndue;
    bool arp_due;
    uint32_t arp_ip;   /* the address the stack asked for */
    uint64_t replies;  /* written by the stack's thread (relaxed), read by main */
    uint64_t bad;      /* RSTs, FINs, unexpected segments */
};

static void due(struct load *l, int j)
{
    if (!l->peer[j].due) {
        l->peer[j].due = true;
        l->due[l->ndue++] = j;
    }
}

/* The tap: every frame the stack sends, at its tx flush. Taken off the
 * wire (freed) after a look. */
static bool tap(void *ctx, const uint8_t *f, uint16_t len)
{
    struct load *l = ctx;
    if (len >= 42 && f[12] == 0x08 && f[13] == 0x06 && f[21] == 1) { /* an ARP request */
        memcpy(&l->arp_ip, f + 38, 4);
        l->arp_due = true;
        return false;
    }
    struct raw_seg s;
    if (raw_tcp_parse(f, len, &s) != 0 || s.sport != SRV_PORT || s.dport < CLI_PORT0 ||
        s.dport >= CLI_PORT0 + l->nconn) {
        return false;
    }
    int j = s.dport - CLI_PORT0;
    struct peer *p = &l->peer[j];
    if (s.flags & (TH_RST | TH_FIN)) {
        l->bad++;
        return false;
    }
    if ((s.flags & TH_SYN) && (s.flags & TH_ACK)) {
        p->rcv_nxt = s.seq + 1;
        p->up = true;
        due(l, j);
    } else if (s.len > 0) {
        p->rcv_nxt = s.seq + s.len;
        __atomic_store_n(&l->replies, l->replies + s.len / (sizeof(reply) - 1), __ATOMIC_RELAXED);
        due(l, j);
    }
    return false;
}

static void inject_arp_reply(struct load *l)
{
    uint8_t f[60] = {0};
    memcpy(f, l->srv_mac, 6);
    memcpy(f + 6, l->cli_mac, 6);
    f[12] = 0x08, f[13] = 0x06;
    f[14] = 0, f[15] = 1, f[16] = 0x08, f[17] = 0, f[18] = 6, f[19] = 4, f[20] = 0, f[21] = 2;
    memcpy(f + 22, l->cli_mac, 6);
    memcpy(f + 28, &l->arp_ip, 4);
    memcpy(f + 32, l->srv_mac, 6);
    memcpy(f + 38, &l->srv_ip, 4);
    nic_mem_inject(l->port, f, sizeof(f));
}

static void put32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 24), p[1] = (uint8_t)(v >> 16), p[2] = (uint8_t)(v >> 8), p[3] = (uint8_t)v;
}

/* Inject the requests that may go: the pre-built frame with its sequence
 * and acknowledgement numbers and checksums filled in. */
static void feed(struct load *l)
{
    if (l->arp_due) {
        l->arp_due = false;
        inject_arp_reply(l);
    }
    int keep = 0;
    for (int k = 0; k < l->ndue; k++) {
        int j = l->due[k];
        struct peer *p = &l->peer[j];
        uint8_t *f = l->tmpl[j];
        put32(f + 14 + 20 + 4, p->snd_nxt);
        put32(f + 14 + 20 + 8, p->rcv_nxt);
        f[14 + 10] = f[14 + 11] = 0;
        f[14 + 20 + 16] = f[14 + 20 + 17] = 0;
        inet_frame_csum_fill(f, l->tmpl_len);
        if (nic_mem_inject(l->port, f, l->tmpl_len) != 0) {
            l->due[keep++] = j; /* no buffer free: again next time */
            continue;
        }
        p->due = false;
        p->snd_nxt += REQ_LEN;
    }
    l->ndue = keep;
}

/* The SYNs that open the connections, and each connection's request
 * frame built once. */
static void load_start(struct load *l)
{
    for (int j = 0; j < l->nconn; j++) {
        struct raw_seg s = {.saddr = l->cli_ip, .daddr = l->srv_ip, .sport = (uint16_t)(CLI_PORT0 + j),
                            .dport = SRV_PORT, .wnd = 65535, .wscale = -1};
        memcpy(s.src_mac, l->cli_mac, 6);
        memcpy(s.dst_mac, l->srv_mac, 6);
        l->peer[j].snd_nxt = 1000u + (uint32_t)j * 7919u;
        s.seq = l->peer[j].snd_nxt;
        s.flags = TH_SYN;
        s.mss = 1460;
        uint8_t f[128];
        size_t n = raw_tcp_build(f, sizeof(f), &s);
        nic_mem_inject(l->port, f, (uint16_t)n);
        l->peer[j].snd_nxt++;
        s.flags = TH_ACK | TH_PUSH;
        s.mss = 0;
        s.data = (const uint8_t *)request;
        s.len = REQ_LEN;
        l->tmpl_len = (uint16_t)raw_tcp_build(l->tmpl[j], sizeof(l->tmpl[j]), &s);
    }
}

/* ---- the application on one stack ---- */

struct app_conn {
    struct lsock *s;
    struct lsock_watcher w;
    struct app *app;
    bool ready;
};

struct app {
    struct lsock *ls;
    struct lsock_watcher lw;
    bool accept_due;
    struct app_conn conn[MAX_CONNS];
    int nconn;
    struct app_conn *ready[MAX_CONNS];
    int nready;
    uint64_t served;
};

static void conn_changed(struct lsock_watcher *w)
{
    struct app_conn *c = (struct app_conn *)((char *)w - offsetof(struct app_conn, w));
    if (!c->ready && (lsock_events_told(c->s) & EPOLLIN)) {
        c->ready = true;
        c->app->ready[c->app->nready++] = c;
    }
}

static void listener_changed(struct lsock_watcher *w)
{
    struct app *a = (struct app *)((char *)w - offsetof(struct app, lw));
    a->accept_due = true;
}

/* Under the stack's lock: accept, then answer every request read. */
static void serve(struct app *a)
{
    if (a->accept_due) {
        a->accept_due = false;
        struct lsock *c;
        while (a->nconn < MAX_CONNS && lsock_accept(a->ls, &c) == 0) {
            struct app_conn *ac = &a->conn[a->nconn++];
            ac->s = c;
            ac->app = a;
            ac->w.changed = conn_changed;
            lsock_watcher_link(lsock_watchers(c), &ac->w);
            conn_changed(&ac->w);
        }
    }
    for (int k = 0; k < a->nready; k++) {
        struct app_conn *c = a->ready[k];
        c->ready = false;
        char buf[512];
        struct iovec v = {.iov_base = buf, .iov_len = sizeof(buf)};
        ssize_t n = lsock_recv(c->s, &v, 1, 0);
        if (n <= 0)
            continue;
        size_t reqs = (size_t)n / REQ_LEN, off = 0;
        char out[64 * (sizeof(reply) - 1)];
        if (reqs > 64)
            reqs = 64;
        for (size_t r = 0; r < reqs; r++, off += sizeof(reply) - 1)
            memcpy(out + off, reply, sizeof(reply) - 1);
        struct iovec o = {.iov_base = out, .iov_len = off};
        lsock_send(c->s, &o, 1, 0);
        a->served += reqs;
    }
    a->nready = 0;
}

/* ---- the threads ---- */

struct worker {
    int index, cpu;
    pthread_t t;
    struct load load;
    struct app app;
    uint64_t lock_wait_ns; /* relaxed: read by main */
    int stop;
};

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void *worker_main(void *arg)
{
    struct worker *w = arg;
    uint64_t waited = 0;
    while (!__atomic_load_n(&w->stop, __ATOMIC_ACQUIRE)) {
        uint64_t t0 = now_ns(); /* a vDSO read, about 1% of an iteration's work */
        scale_lock(w->index);
        waited += now_ns() - t0;
        __atomic_store_n(&w->lock_wait_ns, waited, __ATOMIC_RELAXED);
        scale_poll(w->index);
        serve(&w->app);
        scale_flush(w->index);
        scale_unlock(w->index);
        feed(&w->load);
    }
    return NULL;
}

static int pin(pthread_attr_t *attr, int cpu)
{
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    return pthread_attr_setaffinity_np(attr, sizeof(set), &set);
}

struct result {
    double rps;
    double per_stack[MAX_STACKS];
    double wait_pct[MAX_STACKS];    /* lock wait, measured here, % of the run */
    double rt_wait_pct[MAX_STACKS]; /* the runtime's own count, % of the run (-1: none) */
    uint64_t bad;
};

static int conf_for(struct lstack_conf *c, int conns)
{
    char text[1024], err[1024];
    snprintf(text, sizeof(text),
             "dpdk_args = [\"--no-pci\"];\nhost_addr = \"198.18.0.2\";\nmask_addr = \"255.255.0.0\";\n"
             "gateway_addr = \"198.18.0.1\";\ntcp_conn_count = %d;\nnic_read_number = 64;\n",
             conns * 2 + 16);
    if (lstack_conf_parse(text, "scale.conf", c, err, sizeof(err)) != 0) {
        fprintf(stderr, "bench_scale: %s\n", err);
        return -1;
    }
    return 0;
}

static uint64_t tsc_hz_of(int i)
{
    struct stack_stats st;
    stack_get_stats(scale_stack(i), &st);
    return st.rounds.tsc_hz;
}

/* One run of n stacks on cpus[0..n). */
static int run(int n, const int *cpus, int conns, double secs, struct result *r)
{
    static struct worker w[MAX_STACKS];
    struct lstack_conf c;
    char err[512];
    if (conf_for(&c, conns) != 0)
        return -1;
    struct nic *q[MAX_STACKS], *far[MAX_STACKS];
    for (int i = 0; i < n; i++) {
        if (nic_mem_pair(4096, (uint16_t)stack_nic_priv_size(), 64, &q[i], &far[i]) != 0 ||
            nic_mem_prealloc(q[i], 2048) != 0) {
            fprintf(stderr, "bench_scale: no memory for the ports\n");
            return -1;
        }
    }
    if (scale_open(&c, q, n, err, sizeof(err)) != 0) {
        fprintf(stderr, "bench_scale: %s\n", err);
        return -1;
    }
    memset(w, 0, sizeof(w));
    for (int i = 0; i < n; i++) {
        struct worker *x = &w[i];
        x->index = i;
        x->cpu = cpus[i];
        struct load *l = &x->load;
        l->port = q[i];
        l->nconn = conns;
        stack_mac(scale_stack(i), l->srv_mac);
        uint8_t cm[6] = {0x02, 0xbe, 0, 0, 0, (uint8_t)(0x10 + i)};
        memcpy(l->cli_mac, cm, 6);
        l->srv_ip = inet_addr("198.18.0.2");
        l->cli_ip = htonl(ntohl(inet_addr("198.18.1.0")) + (uint32_t)i + 1);
        nic_mem_set_tap(q[i], tap, l);
        struct app *a = &x->app;
        scale_lock(i);
        int rc = scale_sock_new(i, &a->ls);
        if (rc == 0)
            rc = lsock_bind(a->ls, 0, htons(SRV_PORT));
        if (rc == 0)
            rc = lsock_listen(a->ls, 1024);
        if (rc == 0) {
            a->lw.changed = listener_changed;
            lsock_watcher_link(lsock_watchers(a->ls), &a->lw);
        }
        scale_unlock(i);
        if (rc != 0) {
            fprintf(stderr, "bench_scale: listener on stack %d: %s\n", i, strerror(-rc));
            return -1;
        }
        load_start(l);
    }
    uint64_t rt0[MAX_STACKS], rtw[MAX_STACKS];
    for (int i = 0; i < n; i++) {
        pthread_attr_t attr;
        pthread_attr_init(&attr);
        if (pin(&attr, w[i].cpu) != 0 || pthread_create(&w[i].t, &attr, worker_main, &w[i]) != 0) {
            fprintf(stderr, "bench_scale: cannot start the thread of stack %d on CPU %d\n", i, w[i].cpu);
            return -1;
        }
        pthread_attr_destroy(&attr);
    }
    usleep(500000); /* warm-up: handshakes done, caches warm */
    uint64_t rep0[MAX_STACKS], wait0[MAX_STACKS];
    uint64_t t0 = now_ns();
    for (int i = 0; i < n; i++) {
        rep0[i] = __atomic_load_n(&w[i].load.replies, __ATOMIC_RELAXED);
        wait0[i] = __atomic_load_n(&w[i].lock_wait_ns, __ATOMIC_RELAXED);
        scale_lock_counts(i, &rt0[i], &rtw[i]);
    }
    usleep((useconds_t)(secs * 1e6));
    uint64_t t1 = now_ns();
    double el = (double)(t1 - t0) / 1e9;
    r->rps = 0;
    for (int i = 0; i < n; i++) {
        uint64_t rep = __atomic_load_n(&w[i].load.replies, __ATOMIC_RELAXED) - rep0[i];
        uint64_t wt = __atomic_load_n(&w[i].lock_wait_ns, __ATOMIC_RELAXED) - wait0[i];
        uint64_t cyc, waits;
        scale_lock_counts(i, &cyc, &waits);
        r->per_stack[i] = (double)rep / el;
        r->rps += r->per_stack[i];
        r->wait_pct[i] = 100.0 * (double)wt / (double)(t1 - t0);
        uint64_t hz = tsc_hz_of(i);
        r->rt_wait_pct[i] = cyc == 0 && waits == 0 ? -1 : hz > 0 ? 100.0 * (double)(cyc - rt0[i]) / (double)hz / el : -1;
        (void)rtw;
    }
    for (int i = 0; i < n; i++)
        __atomic_store_n(&w[i].stop, 1, __ATOMIC_RELEASE);
    r->bad = 0;
    for (int i = 0; i < n; i++) {
        pthread_join(w[i].t, NULL);
        r->bad += w[i].load.bad;
    }
    for (int i = 0; i < n; i++)
        nic_mem_set_tap(q[i], NULL, NULL);
    scale_close();
    for (int i = 0; i < n; i++)
        far[i]->ops->close(far[i]);
    lstack_conf_free(&c);
    return 0;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static void print_run(int n, int round, const struct result *r)
{
    printf("%-7d %-6d %12.0f ", n, round, r->rps);
    for (int i = 0; i < n; i++)
        printf(" %s%.0f", i ? "/" : "", r->per_stack[i]);
    printf("   lock wait %%:");
    for (int i = 0; i < n; i++)
        printf(" %s%.1f", i ? "/" : "", r->wait_pct[i]);
    bool rt = false;
    for (int i = 0; i < n; i++)
        rt = rt || r->rt_wait_pct[i] >= 0;
    if (rt) {
        printf("   (runtime's:");
        for (int i = 0; i < n; i++)
            printf(" %s%.1f", i ? "/" : "", r->rt_wait_pct[i]);
        printf(")");
    }
    if (r->bad)
        printf("   %llu odd segments", (unsigned long long)r->bad);
    printf("\n");
    fflush(stdout);
}

int main(int argc, char **argv)
{
    int stacks = 2, conns = 32, rounds = 3;
    double secs = 2.0;
    int cpus[MAX_STACKS] = {0, 1, 2, 3, 4, 5, 6, 7};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (v == NULL) {
            fprintf(stderr, "bench_scale: %s needs a value\n", a);
            return 2;
        }
        if (strcmp(a, "--stacks") == 0)
            stacks = atoi(v);
        else if (strcmp(a, "--conns") == 0)
            conns = atoi(v);
        else if (strcmp(a, "--secs") == 0)
            secs = atof(v);
        else if (strcmp(a, "--rounds") == 0)
            rounds = atoi(v);
        else if (strcmp(a, "--cpus") == 0) {
            int k = 0;
            for (char *s = (char *)v; *s != '\0' && k < MAX_STACKS;) {
                cpus[k++] = (int)strtol(s, &s, 10);
                if (*s == ',')
                    s++;
            }
        } else {
            fprintf(stderr, "usage: bench_scale [--stacks N] [--cpus 0,1] [--conns C] [--secs S] [--rounds R]\n");
            return 2;
        }
        i++;
    }
    if (stacks < 2 || stacks > MAX_STACKS || conns < 1 || conns > MAX_CONNS || rounds < 1 || secs <= 0) {
        fprintf(stderr, "bench_scale: --stacks 2..%d, --conns 1..%d, --rounds >= 1, --secs > 0\n", MAX_STACKS,
                MAX_CONNS);
        return 2;
    }
    printf("# bench_scale: 1 and %d stacks, %d connections per stack, one request outstanding each, %.1f s "
           "per run, CPUs",
           stacks, conns, secs);
    for (int i = 0; i < stacks; i++)
        printf(" %d", cpus[i]);
    printf("\n%-7s %-6s %12s  %s\n", "stacks", "round", "req/s", "per stack");
    double one[64], many[64];
    if (rounds > 64)
        rounds = 64;
    for (int r = 0; r < rounds; r++) {
        for (int k = 0; k < 2; k++) {
            int n = (k ^ (r & 1)) == 0 ? 1 : stacks; /* 1, N in odd rounds; N, 1 in even ones */
            struct result res;
            memset(&res, 0, sizeof(res));
            if (run(n, cpus, conns, secs, &res) != 0)
                return 1;
            print_run(n, r + 1, &res);
            (n == 1 ? one : many)[r] = res.rps;
        }
    }
    qsort(one, (size_t)rounds, sizeof(double), cmp_double);
    qsort(many, (size_t)rounds, sizeof(double), cmp_double);
    double m1 = one[rounds / 2], mn = many[rounds / 2];
    printf("median: 1 stack %.0f req/s, %d stacks %.0f req/s, ratio %.2f\n", m1, stacks, mn, m1 > 0 ? mn / m1 : 0);
    return 0;
}
