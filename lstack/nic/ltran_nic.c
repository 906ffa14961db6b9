/*
 * ltran_nic.c - the ltran variant of a port (use_ltran = 1): frames come
 * from and go to two rte_rings that ltran made for this process, in the
 * hugepage memory of ltran (a DPDK primary process; this process is its
 * secondary). Behind the same nic_ops table as the direct port (io.c).
 *
 * Socket calls go to the kernel through syscall(): liblstack.so interposes
 * the libc names, and this runs inside its stack start.
 *
 * No syscall on either side while the other one is awake.
 * Design: docs/design.md#ltran-clients-use-ltrans-one-pool
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <syslog.h>
#include <unistd.h>

#include <rte_cycles.h>
#include <rte_mbuf.h>
#include <rte_memzone.h>
#include <rte_mempool.h>
#include <rte_ring.h>

#include "common/ltran_msg.h"
#include "nic/nic.h"

/*
 * Owns: the registration on ltran's unix socket (lstack/common/
 * ltran_proto.h), the rings, the shared mbuf pool's use, and noticing ltran
 * go away (its socket closes: checked every LTRAN_CHECK_MS by the TSC in
 * rx_burst, one recv; then the port is dead: nothing comes in, what goes out
 * is dropped and counted, and it says so once on stderr and syslog; kernel
 * sockets of the process are not affected). ltran leaves the pool and the
 * rings in its memory as they are when it stops, so that what this process
 * does before it notices (allocate, dequeue, free) touches valid memory;
 * after, it no longer touches the rings nor allocates; it only frees the
 * buffers lwIP still holds into the pool.
 * Every buffer this process holds carries its tag (REGISTER's reply) in
 * mbuf hash.usr, cleared before it is freed: ltran frees what a process
 * killed with -9 still held.
 * Low power: the process gives ltran an eventfd at REGISTER (SCM_RIGHTS);
 * sleep_begin sets this client's word in ltran's wake zone and hands the
 * eventfd to the wait loop, which polls it with its kernel fds; ltran
 * writes it when it puts frames on the rx ring of a client whose word is
 * set. tx_flush wakes ltran (its eventfd, given in REGISTER's reply) when
 * ltran's word says it sleeps.
 */

#define LTRAN_TX_BATCH 64
#define LTRAN_MAX_BURST 512
#define LTRAN_CHECK_MS 100
#define LTRAN_RPC_TIMEOUT_S 5
#define LTRAN_MAX_ARGS 128

struct ltran_nic {
    struct nic base;
    int fd;                       /* ltran's socket */
    int wake_fd;                  /* eventfd ltran writes to wake us (-1: none) */
    int ltran_fd;                 /* ltran's eventfd: we write it to wake ltran (-1: none) */
    struct ltran_wake_zone *zone; /* in ltran's memory (NULL: no wake-ups) */
    bool gone;                    /* ltran closed it */
    uint32_t id, ip;
    uint32_t tag;                 /* hash.usr of the mbufs this process holds */
    struct rte_ring *rx, *tx;
    struct rte_mempool *pool;
    uint8_t mac[6];
    uint16_t mtu, data_room, burst;
    uint64_t next_check, check_cycles;
    unsigned tx_count;
    uint64_t sleeps, woken, wakes_sent; /* low power: sleeps begun, ended by ltran's eventfd, ltran woken */
    struct rte_mbuf *tx_batch[LTRAN_TX_BATCH];
    struct nic_stats st;
    char name[64];
    char sock_path[108];
};

static inline struct ltran_nic *lnic(struct nic *n)
{
    return (struct ltran_nic *)n;
}

static inline const struct ltran_nic *lnic_c(const struct nic *n)
{
    return (const struct ltran_nic *)n;
}

/* ---- the socket (kernel calls, not the interposed ones) ---- */

static int k_socket(int domain, int type, int proto)
{
    return (int)syscall(SYS_socket, domain, type, proto);
}

static int k_close(int fd)
{
    return (int)syscall(SYS_close, fd);
}

static ssize_t k_sendmsg(int fd, const struct msghdr *mh, int flags)
{
    return syscall(SYS_sendmsg, fd, mh, flags);
}

static ssize_t k_recvmsg(int fd, struct msghdr *mh, int flags)
{
    return syscall(SYS_recvmsg, fd, mh, flags);
}

/* The socket calls of ltran_msg.h: liblstack.so interposes the libc names. */
static const struct ltran_io k_io = {.sendmsg = k_sendmsg, .recvmsg = k_recvmsg, .close = k_close};

/* One request and its reply. Returns the reply's status (0 or -errno), or
 * -errno of the exchange itself; reply body copied to out (up to outlen).
 * pass_fd >= 0 goes along with the request; *got_fd (may be NULL) receives
 * an fd that came with the reply, else -1 (one that is not wanted is closed). */
static int rpc(int fd, uint16_t type, const void *body, uint32_t blen, void *out, size_t outlen, int pass_fd,
               int *got_fd)
{
    if (got_fd != NULL)
        *got_fd = -1;
    if (blen > 256)
        return -EMSGSIZE;
    if (ltran_msg_send(&k_io, fd, MSG_NOSIGNAL, type, 0, body, blen, pass_fd) < 0)
        return -errno;
    uint8_t rep[sizeof(struct ltran_hdr) + 512];
    long n = ltran_msg_recv(&k_io, fd, MSG_CMSG_CLOEXEC, rep, sizeof(rep), got_fd);
    if (n < 0)
        return errno == EAGAIN ? -ETIMEDOUT : -errno;
    if (n == 0)
        return -ECONNRESET;
    struct ltran_hdr rh;
    if (ltran_msg_header(rep, (size_t)n, &rh) != 0 || rh.type != type)
        return -EPROTO;
    if (rh.status != 0)
        return rh.status;
    if (rh.version != LTRAN_VERSION)
        return -EPROTONOSUPPORT;
    size_t body_len = (size_t)n - sizeof(rh);
    if (body_len < outlen)
        return -EPROTO;
    if (outlen > 0)
        memcpy(out, rep + sizeof(rh), outlen);
    return 0;
}

static int connect_ltran(const char *path, char *err, size_t errlen)
{
    int fd = k_socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        snprintf(err, errlen, "ltran: socket: %s", strerror(errno));
        return -1;
    }
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    snprintf(a.sun_path, sizeof(a.sun_path), "%s", path);
    if (syscall(SYS_connect, fd, &a, sizeof(a)) != 0) {
        snprintf(err, errlen, "cannot reach ltran at %s (ltran_socket): %s; is ltran running?", path,
                 strerror(errno));
        k_close(fd);
        return -1;
    }
    struct timeval tv = {.tv_sec = LTRAN_RPC_TIMEOUT_S};
    syscall(SYS_setsockopt, fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    return fd;
}

static void say_gone(struct ltran_nic *n)
{
    n->gone = true;
    fprintf(stderr, "lstack: ltran (%s) went away: this process's stack has no network now "
                    "(frames are dropped); its kernel sockets keep working; restart it once ltran is back\n",
            n->sock_path);
    syslog(LOG_ERR, "lstack: ltran (%s) went away: the stack has no network now; kernel sockets keep working",
           n->sock_path);
}

/* Every LTRAN_CHECK_MS: is ltran's end of the socket still open? */
static inline void check_alive(struct ltran_nic *n)
{
    uint64_t now = rte_rdtsc();
    if (n->gone || now < n->next_check)
        return;
    n->next_check = now + n->check_cycles;
    char c;
    long r = syscall(SYS_recvfrom, n->fd, &c, 1, MSG_DONTWAIT | MSG_PEEK, NULL, NULL);
    if (r == 0 || (r < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR))
        say_gone(n);
}

/* ---- the ops ---- */

static unsigned ltran_rx_burst(struct nic *nic, struct nic_pkt *pkts, unsigned max)
{
    struct ltran_nic *n = lnic(nic);
    check_alive(n);
    if (n->gone)
        return 0;
    if (max > n->burst)
        max = n->burst;
    struct rte_mbuf *m[LTRAN_MAX_BURST];
    unsigned got = rte_ring_sc_dequeue_burst(n->rx, (void **)m, max, NULL);
    unsigned out = 0;
    for (unsigned i = 0; i < got; i++) {
        n->st.rx_packets++;
        n->st.rx_bytes += m[i]->pkt_len;
        if (m[i]->nb_segs != 1) {
            n->st.drop_rx_multiseg++;
            m[i]->hash.usr = 0;
            rte_pktmbuf_free(m[i]);
            continue;
        }
        pkts[out] = (struct nic_pkt){
            .handle = m[i],
            .data = rte_pktmbuf_mtod(m[i], uint8_t *),
            .len = m[i]->data_len,
            .priv = rte_mbuf_to_priv(m[i]),
        };
        out++;
    }
    return out;
}

static void ltran_pkt_free(struct nic *nic, void *handle)
{
    (void)nic;
    struct rte_mbuf *m = handle;
    m->hash.usr = 0; /* no longer held: ltran must not free it for us */
    rte_pktmbuf_free(m);
}

/* After frames went on the tx ring: if ltran sleeps (low_power_mode), wake
 * it (its eventfd). The fence orders the ring's tail store before the load
 * of the word (ltran stores its word, fences, then looks at the rings). */
static void wake_ltran(struct ltran_nic *n)
{
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    uint32_t *w = &n->zone->ltran.sleeping;
    if (__atomic_load_n(w, __ATOMIC_RELAXED) == 0 || __atomic_exchange_n(w, 0, __ATOMIC_ACQ_REL) == 0)
        return;
    uint64_t one = 1;
    if (syscall(SYS_write, n->ltran_fd, &one, sizeof(one)) == (long)sizeof(one))
        n->wakes_sent++;
}

static unsigned ltran_tx_flush(struct nic *nic)
{
    struct ltran_nic *n = lnic(nic);
    unsigned sent = 0;
    if (!n->gone && n->tx_count > 0)
        sent = rte_ring_sp_enqueue_burst(n->tx, (void **)n->tx_batch, n->tx_count, NULL);
    if (sent > 0 && n->zone != NULL)
        wake_ltran(n);
    for (unsigned i = 0; i < sent; i++) {
        n->st.tx_packets++;
        n->st.tx_bytes += n->tx_batch[i]->pkt_len;
    }
    for (unsigned i = sent; i < n->tx_count; i++) {
        n->st.drop_tx_full++;
        n->tx_batch[i]->hash.usr = 0;
        rte_pktmbuf_free(n->tx_batch[i]);
    }
    n->tx_count = 0;
    return sent;
}

static uint8_t *ltran_tx_frame(struct nic *nic, uint16_t len)
{
    struct ltran_nic *n = lnic(nic);
    if (len > n->data_room) {
        n->st.drop_tx_toolong++;
        return NULL;
    }
    if (n->gone) {
        n->st.drop_tx_full++;
        return NULL;
    }
    if (n->tx_count == LTRAN_TX_BATCH)
        ltran_tx_flush(nic);
    struct rte_mbuf *m = rte_pktmbuf_alloc(n->pool);
    if (m == NULL) {
        n->st.drop_tx_nombuf++;
        return NULL;
    }
    m->hash.usr = n->tag; /* held until ltran takes it from the tx ring */
    uint8_t *data = (uint8_t *)rte_pktmbuf_append(m, len);
    n->tx_batch[n->tx_count++] = m;
    return data;
}

static void ltran_get_stats(const struct nic *nic, struct nic_stats *s)
{
    const struct ltran_nic *n = lnic_c(nic);
    *s = n->st;
    s->mbuf_free = rte_mempool_avail_count(n->pool);
    s->mbuf_total = n->pool->size;
}

static void ltran_mac(const struct nic *nic, uint8_t mac[6])
{
    memcpy(mac, lnic_c(nic)->mac, 6);
}

static const char *ltran_name(const struct nic *nic)
{
    return lnic_c(nic)->name;
}

static void ltran_close(struct nic *nic)
{
    struct ltran_nic *n = lnic(nic);
    ltran_tx_flush(nic);
    k_close(n->fd); /* ltran frees the rings and what they hold */
    if (n->wake_fd >= 0)
        k_close(n->wake_fd);
    if (n->ltran_fd >= 0)
        k_close(n->ltran_fd);
    free(n);
}

static void ltran_describe(const struct nic *nic, nic_describe_fn emit, void *ctx)
{
    const struct ltran_nic *n = lnic_c(nic);
    emit(ctx, &(struct nic_item){.group = "port", .name = "driver", .text = "ltran"});
    emit(ctx, &(struct nic_item){.group = "port", .name = "ltran_socket", .text = n->sock_path});
    emit(ctx, &(struct nic_item){.group = "port", .name = "client_id", .num = n->id});
    emit(ctx, &(struct nic_item){.group = "link", .name = "ltran", .text = n->gone ? "gone" : "up"});
    emit(ctx, &(struct nic_item){.group = "queues", .name = "rx_ring", .text = n->rx->name});
    emit(ctx, &(struct nic_item){.group = "queues", .name = "rx_ring_depth", .num = rte_ring_count(n->rx)});
    emit(ctx, &(struct nic_item){.group = "queues", .name = "tx_ring", .text = n->tx->name});
    emit(ctx, &(struct nic_item){.group = "queues", .name = "tx_ring_depth", .num = rte_ring_count(n->tx)});
    emit(ctx, &(struct nic_item){.group = "low_power", .name = "wake_up", .text = n->zone ? "eventfd" : "none"});
    emit(ctx, &(struct nic_item){.group = "low_power", .name = "sleeps", .num = n->sleeps});
    emit(ctx, &(struct nic_item){.group = "low_power", .name = "woken_by_ltran", .num = n->woken});
    emit(ctx, &(struct nic_item){.group = "low_power", .name = "ltran_woken", .num = n->wakes_sent});
    emit(ctx, &(struct nic_item){.group = "pool", .name = "name", .text = n->pool->name});
    emit(ctx, &(struct nic_item){.group = "pool", .name = "free", .num = rte_mempool_avail_count(n->pool)});
    emit(ctx, &(struct nic_item){.group = "pool", .name = "size", .num = n->pool->size});
}

static void ltran_caps(const struct nic *nic, struct nic_caps *c)
{
    const struct ltran_nic *n = lnic_c(nic);
    *c = (struct nic_caps){.mtu = n->mtu}; /* checksums: the stack's (ltran does not touch frames) */
}

static int ltran_claim_listen(struct nic *nic, uint32_t ip, uint16_t port, bool on)
{
    struct ltran_nic *n = lnic(nic);
    if (n->gone)
        return on ? -ENOTCONN : 0;
    struct ltran_listen l = {.ip = ip, .port = port, .on = on};
    int rc = rpc(n->fd, LTRAN_LISTEN, &l, sizeof(l), NULL, 0, -1, NULL);
    if (rc == -ECONNRESET || rc == -EPIPE) {
        say_gone(n);
        return on ? -ENOTCONN : 0;
    }
    return rc;
}

static int ltran_sleep_begin(struct nic *nic)
{
    struct ltran_nic *n = lnic(nic);
    if (n->gone || n->zone == NULL)
        return -ENOTSUP; /* the timed sleep */
    uint32_t *w = &n->zone->client[n->id].sleeping;
    __atomic_store_n(w, 1, __ATOMIC_RELAXED);
    __atomic_thread_fence(__ATOMIC_SEQ_CST); /* the word before the ring's count (ltran: ring, then word) */
    if (rte_ring_count(n->rx) != 0) {
        __atomic_store_n(w, 0, __ATOMIC_RELAXED);
        return -EAGAIN;
    }
    __atomic_fetch_add(&n->sleeps, 1, __ATOMIC_RELAXED);
    return n->wake_fd;
}

static void ltran_sleep_end(struct nic *nic)
{
    struct ltran_nic *n = lnic(nic);
    __atomic_store_n(&n->zone->client[n->id].sleeping, 0, __ATOMIC_RELAXED);
    uint64_t v;
    if (syscall(SYS_read, n->wake_fd, &v, sizeof(v)) == (long)sizeof(v))
        __atomic_fetch_add(&n->woken, 1, __ATOMIC_RELAXED);
}

static const struct nic_ops ltran_nic_ops = {
    .rx_burst = ltran_rx_burst,
    .pkt_free = ltran_pkt_free,
    .tx_frame = ltran_tx_frame,
    .tx_flush = ltran_tx_flush,
    .get_stats = ltran_get_stats,
    .mac = ltran_mac,
    .name = ltran_name,
    .close = ltran_close,
    .describe = ltran_describe,
    .caps = ltran_caps,
    .claim_listen = ltran_claim_listen,
    .sleep_begin = ltran_sleep_begin,
    .sleep_end = ltran_sleep_end,
};

/* ---- open ---- */

static void rpc_err(int rc, const char *what, char *err, size_t errlen)
{
    if (rc == -EPROTONOSUPPORT)
        snprintf(err, errlen, "ltran %s: ltran speaks another protocol version (this lstack: %d)", what,
                 LTRAN_VERSION);
    else
        snprintf(err, errlen, "ltran %s: %s", what, strerror(-rc));
}

struct nic *nic_ltran_open(const struct nic_ltran_params *p, char *added, size_t addedlen, char *err,
                           size_t errlen)
{
    added[0] = '\0';
    if (p->burst == 0 || p->burst > LTRAN_MAX_BURST) {
        snprintf(err, errlen, "rx burst %u outside 1..%u", p->burst, LTRAN_MAX_BURST);
        return NULL;
    }
    struct ltran_nic *n = calloc(1, sizeof(*n));
    if (n == NULL) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    n->wake_fd = n->ltran_fd = -1;
    snprintf(n->sock_path, sizeof(n->sock_path), "%s", p->socket_path);
    n->fd = connect_ltran(p->socket_path, err, errlen);
    if (n->fd < 0) {
        free(n);
        return NULL;
    }
    struct ltran_hello_reply hello;
    int rc = rpc(n->fd, LTRAN_HELLO, NULL, 0, &hello, sizeof(hello), -1, NULL);
    if (rc != 0) {
        rpc_err(rc, "hello", err, errlen);
        goto fail;
    }
    hello.file_prefix[LTRAN_NAME_MAX - 1] = hello.pool[LTRAN_NAME_MAX - 1] = '\0';

    /* EAL as ltran's secondary. */
    char prefix_arg[LTRAN_NAME_MAX + 16];
    snprintf(prefix_arg, sizeof(prefix_arg), "--file-prefix=%s", hello.file_prefix);
    char *argv[LTRAN_MAX_ARGS + 3];
    if (p->argc > LTRAN_MAX_ARGS) {
        snprintf(err, errlen, "more than %d dpdk_args", LTRAN_MAX_ARGS);
        goto fail;
    }
    memcpy(argv, p->argv, sizeof(char *) * (size_t)p->argc);
    argv[p->argc] = "--proc-type=secondary";
    argv[p->argc + 1] = prefix_arg;
    argv[p->argc + 2] = NULL;
    snprintf(added, addedlen, "--proc-type=secondary %s", prefix_arg);
    char eal_added[64];
    if (nic_eal_init(p->argc + 2, argv, eal_added, sizeof(eal_added), err, errlen) != 0)
        goto fail;

    n->pool = rte_mempool_lookup(hello.pool);
    if (n->pool == NULL) {
        snprintf(err, errlen, "ltran's mbuf pool %s not found in its memory", hello.pool);
        goto fail_eal;
    }
    /* A pool's ops are an index into a per-process table, filled as the
     * mempool drivers load: the same index must name the same ops here. */
    hello.pool_ops[LTRAN_NAME_MAX - 1] = '\0';
    if (n->pool->ops_index != hello.pool_ops_index ||
        strcmp(rte_mempool_get_ops(n->pool->ops_index)->name, hello.pool_ops) != 0) {
        snprintf(err, errlen, "ltran's pool uses mempool ops %s (#%u), which are #%d \"%s\" in this process: "
                              "ltran and lstack must use the same DPDK build",
                 hello.pool_ops, hello.pool_ops_index, n->pool->ops_index,
                 rte_mempool_get_ops(n->pool->ops_index)->name);
        goto fail_eal;
    }
    if (rte_pktmbuf_priv_size(n->pool) < p->priv_size) {
        snprintf(err, errlen, "ltran's mbufs have %u private bytes, this lstack needs %u (another build?)",
                 rte_pktmbuf_priv_size(n->pool), p->priv_size);
        goto fail_eal;
    }
    struct ltran_register reg = {.ip = p->ip, .pid = (int32_t)getpid()};
    FILE *comm = fopen("/proc/self/comm", "r");
    if (comm != NULL) {
        if (fgets(reg.name, sizeof(reg.name), comm) != NULL)
            reg.name[strcspn(reg.name, "\n")] = '\0';
        fclose(comm);
    }
    n->wake_fd = (int)syscall(SYS_eventfd2, 0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (n->wake_fd >= 0)
        reg.flags |= LTRAN_REG_WAKE_FD;
    struct ltran_register_reply rr;
    rc = rpc(n->fd, LTRAN_REGISTER, &reg, sizeof(reg), &rr, sizeof(rr), n->wake_fd, &n->ltran_fd);
    if (rc != 0) {
        rpc_err(rc, "register", err, errlen);
        goto fail_eal;
    }
    rr.rx_ring[LTRAN_NAME_MAX - 1] = rr.tx_ring[LTRAN_NAME_MAX - 1] = '\0';
    n->rx = rte_ring_lookup(rr.rx_ring);
    n->tx = rte_ring_lookup(rr.tx_ring);
    if (n->rx == NULL || n->tx == NULL) {
        snprintf(err, errlen, "ltran's rings %s/%s not found in its memory", rr.rx_ring, rr.tx_ring);
        goto fail_eal;
    }
    n->id = rr.id;
    n->tag = rr.tag;
    rr.wake_zone[LTRAN_NAME_MAX - 1] = '\0';
    const struct rte_memzone *z = rr.wake && n->id < LTRAN_MAX_CLIENTS ? rte_memzone_lookup(rr.wake_zone) : NULL;
    if (z != NULL && z->len >= sizeof(struct ltran_wake_zone) && n->ltran_fd >= 0) {
        n->zone = z->addr;
    } else {
        if (n->wake_fd >= 0)
            k_close(n->wake_fd); /* no wake-ups: the timed low-power sleep */
        if (n->ltran_fd >= 0)
            k_close(n->ltran_fd);
        n->wake_fd = n->ltran_fd = -1;
    }
    n->ip = p->ip;
    memcpy(n->mac, hello.mac, 6);
    n->mtu = hello.mtu;
    n->data_room = hello.data_room;
    n->burst = p->burst;
    n->check_cycles = rte_get_tsc_hz() / 1000 * LTRAN_CHECK_MS;
    n->next_check = rte_rdtsc() + n->check_cycles;
    snprintf(n->name, sizeof(n->name), "ltran:%s#%u", hello.file_prefix, n->id);
    n->base.ops = &ltran_nic_ops;
    return &n->base;
fail_eal:
    if (n->wake_fd >= 0)
        k_close(n->wake_fd);
    if (n->ltran_fd >= 0)
        k_close(n->ltran_fd);
    k_close(n->fd);
    free(n);
    nic_eal_cleanup();
    return NULL;
fail:
    k_close(n->fd);
    free(n);
    return NULL;
}
