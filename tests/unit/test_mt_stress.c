/*
 * test_mt_stress.c - many application threads on two stacks at once, the
 * way a preloaded server uses them: the runtime's two contexts in
 * run-to-wakeup (a stack thread each, their own locks, the data rings) on a
 * memory port split like an RSS NIC, driven through the POSIX layer's fd
 * ops and epoll sets, against a client stack on the other end of the wire.
 * Every exchange must come back byte-exact and every socket must be closed
 * in the end. Built for the sanitizer passes too (ASan + UBSan, and
 * ThreadSanitizer: -Db_sanitize=thread), which report what goes wrong
 * between the threads. TAP.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "common/stack_loop.h"
#include "conf/conf.h"
#include "event/event.h"
#include "nic/handover.h"
#include "mem_rss.h"
#include "nic/nic.h"
#include "posix/epoll_fd.h"
#include "posix/fd_ops.h"
#include "posix/fdtable.h"
#include "posix/sock_fd.h"
#include "runtime/runtime.h"
#include "runtime/stacks.h"
#include "sock/lsock.h"
#include "stack/stack.h"
#include "pair_conf.h"
#include "tap.h"

/*
 * The threads:
 *  - an acceptor thread waits in epoll on the listener (copied onto both
 *    stacks) and hands each accepted fd to one of two worker threads;
 *  - each worker waits in an epoll set of its own that holds connections
 *    of both stacks, echoes what it reads and closes the fd at EOF: fds
 *    accepted on one thread are closed on another;
 *  - an opener thread makes sockets (each on the next stack in turn),
 *    connects them out to the client's listener, waits in poll, checks the
 *    echo and closes them;
 *  - client threads connect to the listener, send a request, check the
 *    echo, close; a thread polls the client stack and echoes what reaches
 *    its listener.
 */

enum {
    SRV_PORT = 8000,
    CLI_PORT = 9000,
    CLIENTS = 3,       /* client threads */
    PER_CLIENT = 50,   /* connections each */
    OPENS = 60,        /* outgoing connections of the opener */
    WORKERS = 2,
    MAXQ = 256,
};

static uint32_t srv_ip, cli_ip;
static int stop_flag; /* atomic */

static bool stopping(void)
{
    return __atomic_load_n(&stop_flag, __ATOMIC_ACQUIRE);
}

static uint64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* ---- the wire: a memory port pair is a test port for one thread; here
 * the client's end and the server's two queues run on different threads,
 * so every call on them takes one lock (as a NIC's queues and pool are
 * safe for the threads that use them) ---- */

static pthread_mutex_t wire_mu = PTHREAD_MUTEX_INITIALIZER;

struct wire {
    struct nic base;
    struct nic *under;
};

static struct wire wires[3];

#define UNDER(n) (((struct wire *)(n))->under)
#define UNDER_C(n) (((const struct wire *)(n))->under)
#define WIRED(call)                     \
    do {                                \
        pthread_mutex_lock(&wire_mu);   \
        call;                           \
        pthread_mutex_unlock(&wire_mu); \
    } while (0)

static unsigned w_rx_burst(struct nic *n, struct nic_pkt *p, unsigned max)
{
    unsigned r;
    WIRED(r = UNDER(n)->ops->rx_burst(UNDER(n), p, max));
    return r;
}

static void w_pkt_free(struct nic *n, void *h)
{
    WIRED(UNDER(n)->ops->pkt_free(UNDER(n), h));
}

static uint8_t *w_tx_frame(struct nic *n, uint16_t len)
{
    uint8_t *f;
    WIRED(f = UNDER(n)->ops->tx_frame(UNDER(n), len));
    return f;
}

static unsigned w_tx_flush(struct nic *n)
{
    unsigned r;
    WIRED(r = UNDER(n)->ops->tx_flush(UNDER(n)));
    return r;
}

static void w_get_stats(const struct nic *n, struct nic_stats *st)
{
    WIRED(UNDER_C(n)->ops->get_stats(UNDER_C(n), st));
}

static void w_mac(const struct nic *n, uint8_t mac[6])
{
    UNDER_C(n)->ops->mac(UNDER_C(n), mac);
}

static const char *w_name(const struct nic *n)
{
    return UNDER_C(n)->ops->name(UNDER_C(n));
}

static void w_close(struct nic *n)
{
    WIRED(UNDER(n)->ops->close(UNDER(n)));
}

static void w_caps(const struct nic *n, struct nic_caps *c)
{
    UNDER_C(n)->ops->caps(UNDER_C(n), c);
}

static const struct nic_ops wire_ops = {
    .rx_burst = w_rx_burst,
    .pkt_free = w_pkt_free,
    .tx_frame = w_tx_frame,
    .tx_flush = w_tx_flush,
    .get_stats = w_get_stats,
    .mac = w_mac,
    .name = w_name,
    .close = w_close,
    .caps = w_caps,
};

static struct nic *wired(int i, struct nic *under)
{
    wires[i] = (struct wire){.base.ops = &wire_ops, .under = under};
    return &wires[i].base;
}

/* ---- the server side: through the POSIX layer ---- */

static const struct fd_ops *ops_of(int fd)
{
    struct fd_entry *e = fdt_get(fd);
    return e != NULL ? e->ops : NULL;
}

/* A stack socket, the way socket() makes one in a bound process. */
static int srv_socket(bool nonblock)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -1;
    if (sockfd_adopt(fd, nonblock ? SOCK_NONBLOCK : 0) != 0)
        return -1; /* fd closed by sockfd_adopt */
    return fd;
}

static int srv_close(int fd)
{
    return ops_of(fd)->close(fdt_get(fd), fd);
}

static ssize_t srv_read(int fd, void *buf, size_t len)
{
    return ops_of(fd)->read(fdt_get(fd), fd, buf, len);
}

static ssize_t srv_write(int fd, const void *buf, size_t len)
{
    return ops_of(fd)->write(fdt_get(fd), fd, buf, len);
}

/* Fds the acceptor hands to a worker. */
struct worker {
    pthread_t t;
    pthread_mutex_t mu;
    int q[MAXQ];
    int nq;
    int epfd;
    unsigned long echoed, closed; /* atomic */
};

static struct worker workers[WORKERS];
static int listen_fd, acc_epfd;
static unsigned long accepted; /* atomic */

static void *acceptor(void *arg)
{
    (void)arg;
    unsigned turn = 0;
    while (!stopping()) {
        struct epoll_event ev[8];
        int n = epfd_pwait(acc_epfd, ev, 8, 20, NULL);
        for (int i = 0; i < n; i++) {
            for (;;) {
                int c = ops_of(listen_fd)->accept4(fdt_get(listen_fd), listen_fd, NULL, NULL, SOCK_NONBLOCK);
                if (c < 0)
                    break;
                __atomic_add_fetch(&accepted, 1, __ATOMIC_RELAXED);
                struct worker *w = &workers[turn++ % WORKERS];
                pthread_mutex_lock(&w->mu);
                if (w->nq < MAXQ)
                    w->q[w->nq++] = c;
                else
                    srv_close(c);
                pthread_mutex_unlock(&w->mu);
            }
        }
    }
    return NULL;
}

static void *worker_main(void *arg)
{
    struct worker *w = arg;
    for (;;) {
        int take[MAXQ], nt = 0;
        pthread_mutex_lock(&w->mu);
        nt = w->nq;
        memcpy(take, w->q, sizeof(int) * (size_t)nt);
        w->nq = 0;
        pthread_mutex_unlock(&w->mu);
        for (int i = 0; i < nt; i++) {
            struct epoll_event ev = {.events = EPOLLIN | EPOLLRDHUP, .data.fd = take[i]};
            if (epfd_ctl(w->epfd, EPOLL_CTL_ADD, take[i], &ev) != 0)
                srv_close(take[i]);
        }
        if (stopping() && nt == 0)
            break;
        struct epoll_event evs[16];
        int n = epfd_pwait(w->epfd, evs, 16, 10, NULL);
        for (int i = 0; i < n; i++) {
            int fd = evs[i].data.fd;
            char buf[256];
            ssize_t r = srv_read(fd, buf, sizeof(buf));
            if (r > 0) {
                if (srv_write(fd, buf, (size_t)r) == r)
                    __atomic_add_fetch(&w->echoed, 1, __ATOMIC_RELAXED);
            } else if (r == 0 || (errno != EAGAIN && errno != EWOULDBLOCK)) {
                srv_close(fd); /* removes it from the epoll set as well */
                __atomic_add_fetch(&w->closed, 1, __ATOMIC_RELAXED);
            }
        }
    }
    return NULL;
}

/* Connect out to the client's listener, one socket after another, each on
 * the next stack in turn: write, wait for the echo in poll, close. */
static unsigned long opens_ok; /* atomic */

static void *opener(void *arg)
{
    (void)arg;
    for (int k = 0; k < OPENS && !stopping(); k++) {
        int fd = srv_socket(true);
        if (fd < 0)
            continue;
        struct sockaddr_in to = {.sin_family = AF_INET, .sin_addr.s_addr = cli_ip, .sin_port = htons(CLI_PORT)};
        int rc = ops_of(fd)->connect(fdt_get(fd), fd, (struct sockaddr *)&to, sizeof(to));
        char msg[32], got[32];
        int len = snprintf(msg, sizeof(msg), "out %d", k);
        size_t have = 0;
        uint64_t end = now_ms() + 5000;
        bool sent = false;
        if (rc == 0 || errno == EINPROGRESS) {
            while (have < (size_t)len && now_ms() < end) {
                struct pollfd p = {.fd = fd, .events = (short)(sent ? POLLIN : POLLOUT)};
                if (ev_ppoll(&p, 1, 50, NULL, &sockfd_lookup) <= 0)
                    continue;
                if (!sent && (p.revents & POLLOUT)) {
                    sent = srv_write(fd, msg, (size_t)len) == len;
                } else if (p.revents & POLLIN) {
                    ssize_t r = srv_read(fd, got + have, sizeof(got) - 1 - have);
                    if (r <= 0)
                        break;
                    have += (size_t)r;
                } else if (p.revents & (POLLERR | POLLHUP)) {
                    break;
                }
            }
        }
        if (have == (size_t)len && memcmp(got, msg, have) == 0)
            __atomic_add_fetch(&opens_ok, 1, __ATOMIC_RELAXED);
        else
            printf("# outgoing %d: got %zu of %d bytes\n", k, have, len);
        srv_close(fd);
    }
    return NULL;
}

/* ---- the client side: a stack of its own, lsock calls under its mutex ---- */

static struct stack *cli;
static pthread_mutex_t cli_mu = PTHREAD_MUTEX_INITIALIZER;
static struct lsock *cli_listener;
static struct lsock *cli_peers[OPENS + 8];
static int cli_npeers;
static unsigned long client_ok; /* atomic */

static void *cli_poller(void *arg)
{
    (void)arg;
    while (!stopping()) {
        pthread_mutex_lock(&cli_mu);
        stack_poll(cli);
        struct lsock *a;
        while (cli_npeers < (int)(sizeof(cli_peers) / sizeof(cli_peers[0])) && lsock_accept(cli_listener, &a) == 0)
            cli_peers[cli_npeers++] = a;
        for (int i = 0; i < cli_npeers; i++) {
            char buf[64];
            struct iovec v = {.iov_base = buf, .iov_len = sizeof(buf)};
            ssize_t r = lsock_recv(cli_peers[i], &v, 1, 0);
            if (r > 0) {
                v.iov_len = (size_t)r;
                lsock_send(cli_peers[i], &v, 1, 0);
            } else if (r == 0 || (r < 0 && r != -EAGAIN)) {
                lsock_close(cli_peers[i]);
                cli_peers[i--] = cli_peers[--cli_npeers];
            }
        }
        pthread_mutex_unlock(&cli_mu);
        sched_yield();
    }
    return NULL;
}

/* Wait until the socket shows one of events; the poller drives the stack. */
static uint32_t cli_wait(struct lsock *s, uint32_t events, uint64_t until)
{
    while (now_ms() < until) {
        pthread_mutex_lock(&cli_mu);
        uint32_t ev = lsock_events(s);
        pthread_mutex_unlock(&cli_mu);
        if (ev & (events | EPOLLERR | EPOLLHUP))
            return ev;
        usleep(100);
    }
    return 0;
}

static void *client(void *arg)
{
    int id = (int)(intptr_t)arg;
    for (int k = 0; k < PER_CLIENT && !stopping(); k++) {
        struct lsock *s = NULL;
        pthread_mutex_lock(&cli_mu);
        int rc = lsock_new(cli, &s);
        if (rc == 0)
            rc = lsock_connect(s, srv_ip, htons(SRV_PORT));
        pthread_mutex_unlock(&cli_mu);
        if (s == NULL)
            continue;
        uint64_t until = now_ms() + 5000;
        char msg[32], got[32];
        int len = snprintf(msg, sizeof(msg), "req %d.%d", id, k);
        size_t have = 0;
        if (rc == -EINPROGRESS && (cli_wait(s, EPOLLOUT, until) & EPOLLOUT)) {
            struct iovec v = {.iov_base = msg, .iov_len = (size_t)len};
            pthread_mutex_lock(&cli_mu);
            ssize_t w = lsock_send(s, &v, 1, 0);
            pthread_mutex_unlock(&cli_mu);
            while (w == len && have < (size_t)len && (cli_wait(s, EPOLLIN, until) & EPOLLIN)) {
                struct iovec g = {.iov_base = got + have, .iov_len = sizeof(got) - have};
                pthread_mutex_lock(&cli_mu);
                ssize_t r = lsock_recv(s, &g, 1, 0);
                pthread_mutex_unlock(&cli_mu);
                if (r <= 0)
                    break;
                have += (size_t)r;
            }
        }
        if (have == (size_t)len && memcmp(got, msg, have) == 0)
            __atomic_add_fetch(&client_ok, 1, __ATOMIC_RELAXED);
        else
            printf("# client %d.%d: got %zu of %d bytes\n", id, k, have, len);
        pthread_mutex_lock(&cli_mu);
        lsock_close(s);
        pthread_mutex_unlock(&cli_mu);
    }
    return NULL;
}

int main(void)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    struct lstack_conf sc, cc;
    char err[512];
    if (pair_conf(&sc, "198.18.0.2", "198.18.0.1",
                  "stack_thread_mode = \"run-to-wakeup\";\nnum_cpus = \"0,1\";\ntcp_conn_count = 128;") != 0 ||
        pair_conf(&cc, "198.18.0.1", "198.18.0.2", "tcp_conn_count = 256;") != 0) {
        check(0, "configs parse");
        return tap_done();
    }
    srv_ip = sc.host_addr;
    cli_ip = cc.host_addr;
    struct nic *cport, *sport, *q[2];
    struct nic_steer steer;
    check(nic_mem_pair(4096, (uint16_t)stack_nic_priv_size(), 32, &cport, &sport) == 0 &&
              nic_mem_rss_split(sport, 2, q, &steer) == 0,
          "a memory port, the server's end split into 2 RSS queues");
    int rc = stack_open(&cli, &cc, 2, wired(2, cport), err, sizeof(err));
    checkf(rc == 0, "client stack opens (%s)", rc == 0 ? "ok" : err);
    struct nic *wq[2] = {wired(0, q[0]), wired(1, q[1])};
    rc = rt_stacks_open(&sc, wq, 2, &nic_handover_api, &steer, err, sizeof(err));
    checkf(rc == 0, "two server stacks open as the runtime's contexts (%s)", rc == 0 ? "ok" : err);
    rc = rt_stacks_start(&sc, err, sizeof(err));
    checkf(rc == 0, "their stack threads start (%s)", rc == 0 ? "ok" : err);
    if (rc != 0)
        return tap_done();

    pthread_mutex_lock(&cli_mu);
    rc = lsock_new(cli, &cli_listener);
    if (rc == 0)
        rc = lsock_bind(cli_listener, cli_ip, htons(CLI_PORT));
    if (rc == 0)
        rc = lsock_listen(cli_listener, 128);
    pthread_mutex_unlock(&cli_mu);
    check(rc == 0, "the client listens");

    listen_fd = srv_socket(true);
    struct sockaddr_in at = {.sin_family = AF_INET, .sin_addr.s_addr = srv_ip, .sin_port = htons(SRV_PORT)};
    rc = listen_fd < 0 ? -1 : ops_of(listen_fd)->bind(fdt_get(listen_fd), listen_fd, (struct sockaddr *)&at, sizeof(at));
    if (rc == 0)
        rc = ops_of(listen_fd)->listen(fdt_get(listen_fd), listen_fd, 128);
    acc_epfd = epoll_create1(EPOLL_CLOEXEC);
    struct epoll_event lev = {.events = EPOLLIN, .data.fd = listen_fd};
    if (rc == 0)
        rc = epfd_ctl(acc_epfd, EPOLL_CTL_ADD, listen_fd, &lev);
    check(rc == 0, "the server listens (a copy on each stack) in an epoll set");

    pthread_t acc, opn, cpoll, cl[CLIENTS];
    for (int i = 0; i < WORKERS; i++) {
        pthread_mutex_init(&workers[i].mu, NULL);
        workers[i].epfd = epoll_create1(EPOLL_CLOEXEC);
        pthread_create(&workers[i].t, NULL, worker_main, &workers[i]);
    }
    pthread_create(&cpoll, NULL, cli_poller, NULL);
    pthread_create(&acc, NULL, acceptor, NULL);
    pthread_create(&opn, NULL, opener, NULL);
    for (int i = 0; i < CLIENTS; i++)
        pthread_create(&cl[i], NULL, client, (void *)(intptr_t)i);
    uint64_t t0 = now_ms();
    for (int i = 0; i < CLIENTS; i++)
        pthread_join(cl[i], NULL);
    pthread_join(opn, NULL);
    /* Let the workers see the last EOFs. */
    unsigned long closed = 0;
    for (uint64_t end = now_ms() + 5000; now_ms() < end;) {
        closed = 0;
        for (int i = 0; i < WORKERS; i++)
            closed += __atomic_load_n(&workers[i].closed, __ATOMIC_RELAXED);
        if (closed >= __atomic_load_n(&accepted, __ATOMIC_RELAXED))
            break;
        usleep(10000);
    }
    __atomic_store_n(&stop_flag, 1, __ATOMIC_RELEASE);
    pthread_join(acc, NULL);
    for (int i = 0; i < WORKERS; i++)
        pthread_join(workers[i].t, NULL);
    pthread_join(cpoll, NULL);
    double secs = (double)(now_ms() - t0) / 1e3;

    unsigned long echoed = workers[0].echoed + workers[1].echoed;
    checkf(client_ok == CLIENTS * PER_CLIENT,
           "%lu of %d client connections: request echoed byte-exact by the workers (%lu echoes, %.1f s)", client_ok,
           CLIENTS * PER_CLIENT, echoed, secs);
    checkf(accepted == CLIENTS * PER_CLIENT && closed == accepted,
           "every connection accepted on the acceptor thread (%lu) was closed on a worker thread (%lu)", accepted,
           closed);
    checkf(opens_ok == OPENS, "%lu of %d outgoing connections, one stack after the other: echo byte-exact", opens_ok,
           OPENS);

    srv_close(listen_fd);
    close(acc_epfd);
    for (int i = 0; i < WORKERS; i++)
        close(workers[i].epfd);
    rt_stacks_stop();
    unsigned long socks = 0, took[2] = {0, 0}, opened[2] = {0, 0};
    for (int i = 0; i < 2; i++) {
        struct stack_stats st;
        loop_lock(rt_loop_nth(i));
        rt_stack_stats(i, &st);
        loop_unlock(rt_loop_nth(i));
        socks += st.sockets;
        took[i] = st.conn_accepted;
        opened[i] = st.conn_opened;
    }
    checkf(took[0] > 0 && took[1] > 0 && opened[0] > 0 && opened[1] > 0,
           "both stacks took part: accepted %lu / %lu, connected out %lu / %lu", took[0], took[1], opened[0],
           opened[1]);
    checkf(socks == 0, "no server socket left open (%lu)", socks);
    rt_stacks_close();
    pthread_mutex_lock(&cli_mu);
    for (int i = 0; i < cli_npeers; i++)
        lsock_close(cli_peers[i]);
    lsock_close(cli_listener);
    pthread_mutex_unlock(&cli_mu);
    stack_close(cli);
    lstack_conf_free(&sc);
    lstack_conf_free(&cc);
    return tap_done();
}
