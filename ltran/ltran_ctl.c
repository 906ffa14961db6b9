/*
 * ltran_ctl.c - ltran's unix socket (SOCK_SEQPACKET, messages of
 * lstack/common/ltran_proto.h): lstack processes register and claim
 * listeners, stackctl asks for the figures; a peer whose socket closes
 * (exit, kill -9) is a client gone: its registrations, rings and the mbufs
 * they hold are reclaimed at once, and its slot can be taken again.
 *
 * Polled by the loop every millisecond while ltran is awake (ltran_main.c),
 * with one poll() of timeout 0: requests are rare (start-up, listen, close
 * of a listener); ltran's idle sleep waits on the same fds
 * (ltran_ctl_pollfds), so a request or a closed peer also ends it.
 * Design: docs/design.md#ltrans-registration-socket-is-served-from-its-loop
 */
#include <dirent.h>
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>
#include <rte_ring.h>

#include "common/ltran_msg.h"
#include "ltran.h"

static const struct ltran_io libc_io = {.sendmsg = sendmsg, .recvmsg = recvmsg, .close = close};

/* A reply, with fd pass_fd (>= 0) passed along (SCM_RIGHTS). Never waits:
 * a peer whose socket is full misses the reply. */
static void peer_reply_fd(int fd, uint16_t type, int32_t status, const void *body, uint32_t len, int pass_fd)
{
    ltran_msg_send(&libc_io, fd, MSG_NOSIGNAL | MSG_DONTWAIT, type, status, body, len, pass_fd);
}

static void peer_reply(int fd, uint16_t type, int32_t status, const void *body, uint32_t len)
{
    peer_reply_fd(fd, type, status, body, len, -1);
}

/* Remove the multi-process socket EAL made for the client's pid in ltran's
 * run directory (mp_socket_<pid>_<n>): a client killed with -9 leaves it. */
static void remove_mp_socket(int32_t pid)
{
    const char *dir = rte_eal_get_runtime_dir();
    DIR *d = dir != NULL ? opendir(dir) : NULL;
    if (d == NULL)
        return;
    char want[48];
    int n = snprintf(want, sizeof(want), "mp_socket_%d_", (int)pid);
    struct dirent *e;
    while ((e = readdir(d)) != NULL)
        if (strncmp(e->d_name, want, (size_t)n) == 0)
            unlinkat(dirfd(d), e->d_name, 0);
    closedir(d);
}

static void client_drop(struct ltran *l, int id)
{
    struct ltran_client *c = &l->cl[id];
    ldisp_client_remove(&l->disp, (unsigned)id);
    ltran_client_free_rings(c);
    unsigned held = ltran_client_reclaim_mbufs(l, c);
    if (c->pid > 0)
        remove_mp_socket(c->pid);
    if (c->wake_fd >= 0)
        close(c->wake_fd);
    c->wake_fd = -1;
    __atomic_store_n(&l->zone->client[id].sleeping, 0, __ATOMIC_RELAXED);
    fprintf(stderr, "ltran: client %d (%s, pid %d) gone: its rings and registrations are freed, and %u mbufs it held\n",
            id, c->name, c->pid, held);
    c->used = false;
}

static void peer_close(struct ltran *l, int p)
{
    struct ltran_peer *pe = &l->peers[p];
    if (pe->client >= 0)
        client_drop(l, pe->client);
    close(pe->fd);
    pe->fd = -1;
    pe->client = -1;
}

/* wake_fd: the eventfd that came with the request (-1: none); taken (set
 * to -1) when the client keeps it. */
static int do_register(struct ltran *l, int p, const struct ltran_register *r, struct ltran_register_reply *out,
                       int *wake_fd)
{
    if (l->peers[p].client >= 0)
        return -EISCONN;
    if (r->ip == 0)
        return -EINVAL;
    int id = -1;
    for (int i = 0; i < l->conf.max_clients && i < LTRAN_MAX_CLIENTS; i++)
        if (!l->cl[i].used) {
            id = i;
            break;
        }
    if (id < 0)
        return -EUSERS;
    struct ltran_client *c = &l->cl[id];
    memset(c, 0, sizeof(*c));
    memset(out, 0, sizeof(*out));
    snprintf(out->rx_ring, sizeof(out->rx_ring), "ltran_rx_%d", id);
    snprintf(out->tx_ring, sizeof(out->tx_ring), "ltran_tx_%d", id);
    c->rx = rte_ring_create(out->rx_ring, (unsigned)l->conf.ring_size, SOCKET_ID_ANY, RING_F_SP_ENQ | RING_F_SC_DEQ);
    c->tx = rte_ring_create(out->tx_ring, (unsigned)l->conf.ring_size, SOCKET_ID_ANY, RING_F_SP_ENQ | RING_F_SC_DEQ);
    if (c->rx == NULL || c->tx == NULL) {
        ltran_client_free_rings(c);
        return -ENOMEM;
    }
    c->used = true;
    c->tag = (++l->gen[id] << 8) | (uint32_t)(id + 1);
    out->tag = c->tag;
    c->peer = p;
    c->ip = r->ip;
    c->pid = r->pid;
    memcpy(c->name, r->name, sizeof(c->name));
    c->name[sizeof(c->name) - 1] = '\0';
    c->wake_fd = -1;
    __atomic_store_n(&l->zone->client[id].sleeping, 0, __ATOMIC_RELAXED);
    if ((r->flags & LTRAN_REG_WAKE_FD) && *wake_fd >= 0) {
        c->wake_fd = *wake_fd;
        *wake_fd = -1;
        out->wake = 1;
        snprintf(out->wake_zone, sizeof(out->wake_zone), "%s", LTRAN_WAKE_ZONE);
    }
    ldisp_client_add(&l->disp, (unsigned)id, r->ip);
    l->peers[p].client = id;
    out->id = (uint32_t)id;
    char ip[16];
    const uint8_t *a = (const uint8_t *)&r->ip;
    snprintf(ip, sizeof(ip), "%u.%u.%u.%u", a[0], a[1], a[2], a[3]);
    fprintf(stderr, "ltran: client %d registered: %s pid %d, %s\n", id, c->name, c->pid, ip);
    return 0;
}

static uint32_t stats_body(struct ltran *l, uint8_t *buf)
{
    struct ltran_stats st = l->st;
    st.tsc_hz = rte_get_tsc_hz();
    st.conns = l->disp.used;
    st.mbuf_free = rte_mempool_avail_count(l->pool);
    st.mbuf_total = l->pool->size;
    uint32_t n = 0;
    for (int i = 0; i < LTRAN_MAX_CLIENTS; i++) {
        const struct ltran_client *c = &l->cl[i];
        if (!c->used)
            continue;
        struct ltran_client_info in = {
            .id = (uint32_t)i,
            .pid = c->pid,
            .ip = c->ip,
            .rx_frames = c->rx_frames,
            .tx_frames = c->tx_frames,
            .drop_rx_full = c->drop_rx_full,
            .rx_ring_depth = rte_ring_count(c->rx),
            .tx_ring_depth = rte_ring_count(c->tx),
            .conns = l->disp.owned[i],
        };
        memcpy(in.name, c->name, sizeof(in.name));
        in.nlisten = ldisp_listeners(&l->disp, (unsigned)i, in.listen_port, LTRAN_LISTEN_SHOWN);
        memcpy(buf + sizeof(st) + n * sizeof(in), &in, sizeof(in));
        n++;
    }
    st.nclients = n;
    memcpy(buf, &st, sizeof(st));
    return (uint32_t)(sizeof(st) + n * sizeof(struct ltran_client_info));
}

static bool serve_msg(struct ltran *l, int p, const uint8_t *msg, ssize_t n, int *passed);

/* Serve one message of peer p. Returns false if the peer must be closed. */
static bool serve(struct ltran *l, int p)
{
    int fd = l->peers[p].fd;
    uint8_t msg[sizeof(struct ltran_hdr) + 256];
    int passed = -1; /* an fd that came with the message (REGISTER's eventfd) */
    ssize_t n = ltran_msg_recv(&libc_io, fd, MSG_DONTWAIT | MSG_CMSG_CLOEXEC, msg, sizeof(msg), &passed);
    bool keep = serve_msg(l, p, msg, n, &passed);
    if (passed >= 0)
        close(passed); /* not taken */
    return keep;
}

/* Serve message msg (n bytes, or recvmsg's -1) of peer p. */
static bool serve_msg(struct ltran *l, int p, const uint8_t *msg, ssize_t n, int *passed)
{
    int fd = l->peers[p].fd;
    if (n < 0)
        return errno == EAGAIN || errno == EINTR;
    if (n == 0)
        return false;
    struct ltran_hdr h;
    if (ltran_msg_header(msg, (size_t)n, &h) != 0)
        return false;
    if (h.version != LTRAN_VERSION) {
        peer_reply(fd, h.type, -EPROTONOSUPPORT, NULL, 0);
        return false;
    }
    const uint8_t *body = msg + sizeof(h);
    size_t blen = (size_t)n - sizeof(h);
    switch (h.type) {
    case LTRAN_HELLO: {
        struct ltran_hello_reply r = {.mtu = l->mtu, .data_room = l->data_room};
        snprintf(r.file_prefix, sizeof(r.file_prefix), "%s", l->conf.file_prefix);
        snprintf(r.pool, sizeof(r.pool), "%s", l->pool->name);
        r.pool_ops_index = (uint16_t)l->pool->ops_index;
        snprintf(r.pool_ops, sizeof(r.pool_ops), "%s", rte_mempool_get_ops(l->pool->ops_index)->name);
        memcpy(r.mac, l->mac, 6);
        peer_reply(fd, h.type, 0, &r, sizeof(r));
        return true;
    }
    case LTRAN_REGISTER: {
        struct ltran_register r;
        struct ltran_register_reply out;
        if (blen < sizeof(r)) {
            peer_reply(fd, h.type, -EINVAL, NULL, 0);
            return true;
        }
        memcpy(&r, body, sizeof(r));
        int rc = do_register(l, p, &r, &out, passed);
        peer_reply_fd(fd, h.type, rc, &out, rc == 0 ? sizeof(out) : 0, rc == 0 && out.wake ? l->wake_fd : -1);
        return true;
    }
    case LTRAN_LISTEN: {
        struct ltran_listen r;
        int rc = -ENOTCONN;
        if (blen < sizeof(r))
            rc = -EINVAL;
        else if (l->peers[p].client >= 0) {
            memcpy(&r, body, sizeof(r));
            rc = ldisp_listen(&l->disp, (unsigned)l->peers[p].client, r.ip, r.port, r.on != 0);
        }
        peer_reply(fd, h.type, rc, NULL, 0);
        return true;
    }
    case LTRAN_STATS: {
        uint8_t buf[sizeof(struct ltran_stats) + LTRAN_MAX_CLIENTS * sizeof(struct ltran_client_info)];
        uint32_t len = stats_body(l, buf);
        peer_reply(fd, h.type, 0, buf, len);
        return true;
    }
    default:
        peer_reply(fd, h.type, -EOPNOTSUPP, NULL, 0);
        return true;
    }
}

int ltran_ctl_open(struct ltran *l, char *err, size_t errlen)
{
    for (int i = 0; i < LTRAN_MAX_PEERS; i++)
        l->peers[i] = (struct ltran_peer){.fd = -1, .client = -1};
    const char *path = l->conf.socket_path;
    char dir[sizeof(l->conf.socket_path)];
    snprintf(dir, sizeof(dir), "%s", path);
    char *slash = strrchr(dir, '/');
    if (slash != NULL && slash != dir) {
        *slash = '\0';
        mkdir(dir, 0755); /* one level: /var/run/ltran */
    }
    int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        snprintf(err, errlen, "socket: %s", strerror(errno));
        return -1;
    }
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    snprintf(a.sun_path, sizeof(a.sun_path), "%s", path);
    if (access(path, F_OK) == 0) {
        int probe = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
        if (probe >= 0 && connect(probe, (struct sockaddr *)&a, sizeof(a)) == 0) {
            close(probe);
            close(fd);
            snprintf(err, errlen, "%s: another ltran answers there", path);
            return -1;
        }
        if (probe >= 0)
            close(probe);
        unlink(path); /* left by an ltran that was killed */
    }
    if (bind(fd, (struct sockaddr *)&a, sizeof(a)) != 0 || listen(fd, 64) != 0) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        close(fd);
        return -1;
    }
    chmod(path, 0600);
    l->listen_fd = fd;
    return 0;
}

/* The socket's fds into pf (the listener first), and in peer_of each
 * entry's index in peers[] (-1: the listener) when peer_of is not NULL. */
static int ctl_fds(const struct ltran *l, struct pollfd *pf, int *peer_of, int max)
{
    int n = 0;
    if (l->listen_fd >= 0 && n < max) {
        if (peer_of != NULL)
            peer_of[n] = -1;
        pf[n++] = (struct pollfd){.fd = l->listen_fd, .events = POLLIN};
    }
    for (int i = 0; i < LTRAN_MAX_PEERS && n < max; i++)
        if (l->peers[i].fd >= 0) {
            if (peer_of != NULL)
                peer_of[n] = i;
            pf[n++] = (struct pollfd){.fd = l->peers[i].fd, .events = POLLIN};
        }
    return n;
}

int ltran_ctl_pollfds(const struct ltran *l, struct pollfd *pf, int max)
{
    return ctl_fds(l, pf, NULL, max);
}

void ltran_ctl_poll(struct ltran *l)
{
    struct pollfd pf[LTRAN_MAX_PEERS + 1];
    int idx[LTRAN_MAX_PEERS + 1];
    int n = ctl_fds(l, pf, idx, LTRAN_MAX_PEERS + 1);
    if (n == 0 || poll(pf, (nfds_t)n, 0) <= 0)
        return;
    bool incoming = false;
    for (int k = 0; k < n; k++) {
        if (pf[k].revents == 0)
            continue;
        int p = idx[k];
        if (p < 0) { /* the listener: accepted after the peers are served */
            incoming = (pf[k].revents & POLLIN) != 0;
            continue;
        }
        bool keep = (pf[k].revents & POLLIN) ? serve(l, p) : false;
        if (!keep)
            peer_close(l, p);
    }
    if (incoming) {
        for (;;) {
            int fd = accept4(l->listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
            if (fd < 0)
                break;
            int slot = -1;
            for (int i = 0; i < LTRAN_MAX_PEERS; i++)
                if (l->peers[i].fd < 0) {
                    slot = i;
                    break;
                }
            if (slot < 0) {
                close(fd);
                continue;
            }
            l->peers[slot] = (struct ltran_peer){.fd = fd, .client = -1};
        }
    }
}

void ltran_ctl_close(struct ltran *l)
{
    /* Sockets only: a client learns from its socket that ltran is gone, and
     * until it checks (up to 100 ms) it still touches its rings, which stay
     * as they are (freed, their memory could be reused under it). */
    for (int i = 0; i < LTRAN_MAX_PEERS; i++)
        if (l->peers[i].fd >= 0) {
            close(l->peers[i].fd);
            l->peers[i].fd = -1;
        }
    if (l->listen_fd >= 0) {
        close(l->listen_fd);
        unlink(l->conf.socket_path);
        l->listen_fd = -1;
    }
}
