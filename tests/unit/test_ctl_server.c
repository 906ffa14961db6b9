/*
 * test_ctl_server.c - the control server in one process, no root, no DPDK:
 * two stacks back to back over the memory port (A clients, B server), the
 * pcb paging of ctl_conns.c (order, exactly-once across pages while the
 * lists change, filters, fds, queues), then the server thread itself
 * (ctl_start on B) talked to with stackctl's own client code: hello,
 * connections, stats, config, loglevel, a version mismatch, a malformed
 * request, an unknown command, and the socket's removal at ctl_stop.
 * TAP output.
 */
#include <arpa/inet.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "conf/conf.h"
#include "ctl/ctl.h"
#include "ctl/ctl_conns.h"
#include "nic/nic.h"
#include "sock/lsock.h"
#include "stack/stack.h"
#include "ctl_test_host.h"

#define PORT 6379
#define NCONN 20
#define NACCEPT 15

#include "tap.h"

static struct stack *A, *B;
#define CTL_EXTRA "tcp_conn_count = 64;\nunix_prefix = \"t_\";"

static void pump(int rounds)
{
    for (int i = 0; i < rounds; i++) {
        stack_poll(A);
        stack_poll(B);
    }
}

/* Every connection of B, paged max at a time. */
static int dump(const struct ctl_conn_filter *f, int max, struct ctl_conn *out, int cap, int *pages)
{
    struct ctl_cursor cur = {0};
    struct ctl_conn page[64];
    int n = 0;
    *pages = 0;
    while (!cur.done) {
        int k = ctl_conns_page(B, f, &cur, page, max);
        if (k < 0)
            return -1;
        (*pages)++;
        for (int i = 0; i < k && n < cap; i++)
            out[n++] = page[i];
    }
    return n;
}

static struct lsock *clients[NCONN + 1], *served[NACCEPT], *listener;

static void setup_conns(void)
{
    lsock_new(B, &listener);
    lsock_bind(listener, htonl(INADDR_ANY), htons(PORT));
    lsock_listen(listener, 32);
    lsock_set_fd(listener, 100);
    uint32_t b_addr = inet_addr("198.18.0.1");
    for (int i = 0; i < NCONN; i++) {
        lsock_new(A, &clients[i]);
        lsock_connect(clients[i], b_addr, htons(PORT));
        pump(4);
    }
    pump(20);
    for (int i = 0; i < NACCEPT; i++) {
        lsock_accept(listener, &served[i]);
        lsock_set_fd(served[i], 200 + i);
    }
    struct iovec v = {"hello", 5};
    lsock_send(clients[0], &v, 1, 0); /* unread on B */
    pump(10);
}

static void test_paging(void)
{
    static struct ctl_conn all[128];
    struct ctl_conn_filter any = {-1, -1};
    int pages;
    int n = dump(&any, 7, all, 128, &pages);
    check(n == NCONN + 1 && pages == 4, "21 pcbs (a listener, 20 connections) in pages of 7 (and an empty one that ends the dump)");
    check(n > 0 && all[0].listener && all[0].pcb.lport == PORT && all[0].fd == 100 && all[0].backlog == 32 &&
              all[0].accept_q == NCONN - NACCEPT,
          "the listener first: fd, backlog, accept queue depth");
    int ordered = 1, fds = 0, queued = 0, unread = 0;
    for (int i = 2; i < n; i++)
        ordered &= all[i - 1].pcb.rport < all[i].pcb.rport;
    for (int i = 1; i < n; i++) {
        fds += all[i].fd >= 200 && all[i].fd < 200 + NACCEPT;
        queued += all[i].fd == -1;
        unread += all[i].recv_q == 5;
        if (strcmp(ctl_tcp_state_name(all[i].pcb.state), "ESTABLISHED") != 0)
            ordered = 0;
    }
    check(ordered, "connections ESTABLISHED, in remote port order, each once");
    check(fds == NACCEPT && queued == NCONN - NACCEPT, "accepted ones carry their fd, queued ones -1");
    check(unread == 1, "unread bytes show as recv_q");
    check(n > 1 && all[1].pcb.mss > 0 && all[1].pcb.cwnd > 0 && all[1].pcb.snd_wnd > 0 && all[1].pcb.rcv_wnd > 0 && all[1].pcb.rto_ms > 0,
          "window, mss, cwnd and rto come from the pcb");

    /* A connection that arrives between two pages must not disturb the others. */
    struct ctl_cursor cur = {0};
    struct ctl_conn page[64];
    uint32_t seen[65536 / 32] = {0}; /* one bit per remote port */
    int dup = 0, total = 0;
    uint32_t b_addr = inet_addr("198.18.0.1");
    for (int p = 0; !cur.done; p++) {
        int k = ctl_conns_page(B, &any, &cur, page, 5);
        for (int i = 0; i < k; i++) {
            unsigned port = page[i].pcb.rport;
            dup += (seen[port / 32] >> (port % 32)) & 1u;
            seen[port / 32] |= 1u << (port % 32); /* unsigned: 1 << 31 overflows an int */
            total++;
        }
        if (p == 1) {
            lsock_new(A, &clients[NCONN]);
            lsock_connect(clients[NCONN], b_addr, htons(PORT));
            pump(10);
        }
    }
    check(dup == 0 && total >= NCONN + 1, "a connection arriving mid-dump: no one reported twice, no one missed");

    struct ctl_conn_filter est = {ctl_tcp_state_parse("ESTABLISHED"), -1};
    check(dump(&est, 64, all, 128, &pages) == NCONN + 1, "--state ESTABLISHED: connections only");
    struct ctl_conn_filter lis = {ctl_tcp_state_parse("LISTEN"), -1};
    check(dump(&lis, 64, all, 128, &pages) == 1 && all[0].listener, "--state LISTEN: the listener only");
    uint32_t a;
    uint16_t port;
    lsock_name(clients[3], false, &a, &port);
    struct ctl_conn_filter one = {-1, ntohs(port)};
    check(dump(&one, 64, all, 128, &pages) == 1 && all[0].pcb.rport == ntohs(port), "--port: the one connection");

    /* B closes first: B's pcb ends in TIME_WAIT, without an fd. */
    lsock_close(served[1]);
    served[1] = NULL;
    pump(10);
    for (int i = 0; i < NCONN + 1; i++) {
        uint32_t ra;
        uint16_t rp;
        if (lsock_name(clients[i], true, &ra, &rp) != 0 || lsock_recv(clients[i], &(struct iovec){page, 1}, 1, 0) == 0) {
            lsock_close(clients[i]);
            clients[i] = NULL;
        }
    }
    pump(10);
    struct ctl_conn_filter tw = {ctl_tcp_state_parse("TIME_WAIT"), -1};
    check(dump(&tw, 64, all, 128, &pages) == 1 && all[0].fd == -1, "TIME_WAIT pcbs are listed (after the others)");
}

/* ---- the server ---- */

/* fds open now, counted by walking /proc/self/fd. */
static long count_fds(void)
{
    DIR *d = opendir("/proc/self/fd");
    long n = 0;
    struct dirent *e;
    while (d != NULL && (e = readdir(d)) != NULL)
        n += e->d_name[0] != '.';
    if (d != NULL)
        closedir(d);
    return n - 1; /* the walk's own fd */
}

/* show stats --json's app record carries the process's fds and limit. */
static void check_fds(const char *stats_json)
{
    struct rlimit rl;
    getrlimit(RLIMIT_NOFILE, &rl);
    const char *o = stats_json != NULL ? strstr(stats_json, "\"fds_open\":") : NULL;
    const char *l = stats_json != NULL ? strstr(stats_json, "\"fds_limit\":") : NULL;
    long open_fds = o != NULL ? atol(o + 11) : -1, limit = l != NULL ? atol(l + 12) : -1;
    long now = count_fds();
    printf("# fds_open %ld, fds_limit %ld; now %ld open, RLIMIT_NOFILE %ld\n", open_fds, limit, now,
           (long)rl.rlim_cur);
    /* During the request, stackctl's socket and the server's end of it were open too. */
    check(limit == (long)rl.rlim_cur && open_fds >= now && open_fds <= now + 2,
          "show stats: fds_open (fds open in the process) and fds_limit (RLIMIT_NOFILE)");
}

static void test_server(struct lstack_conf *conf)
{
    char dir[] = "/tmp/lstack-ctl-test.XXXXXX";
    if (mkdtemp(dir) == NULL) {
        check(0, "a run dir");
        return;
    }
    setenv(CTL_RUN_DIR_ENV, dir, 1);
    char err[1024];
    int rc = ctl_start(ctl_test_host(B, 1), conf, "ctl.conf", err, sizeof(err));
    check(rc == 0, "ctl_start");
    if (rc != 0) {
        printf("# %s\n", err);
        return;
    }
    const char *path = ctl_socket_path();
    char want[256];
    snprintf(want, sizeof(want), "%s/t_lstack.%ld.sock", dir, (long)getpid());
    struct stat st;
    check(path != NULL && strcmp(path, want) == 0 && stat(path, &st) == 0 && (st.st_mode & 0777) == 0600,
          "socket <run dir>/<unix_prefix>lstack.<pid>.sock, mode 0600");

    char *t = ctl_test_ask("{\"version\":1,\"cmd\":\"connections\"}", sc_show_connections, true, &rc, err, sizeof(err));
    check(rc == SC_OK && t != NULL && strstr(t, "\"listeners\":[{\"stack\":0,\"fd\":100,") != NULL &&
              strstr(t, "\"summary\":{\"connections\":") != NULL,
          "show connections through the socket");
    free(t);
    t = ctl_test_ask("{\"version\":1,\"cmd\":\"stats\"}", sc_show_stats, true, &rc, err, sizeof(err));
    check(rc == SC_OK && t != NULL && strstr(t, "\"conn_accepted\":") != NULL && strstr(t, "\"sockets\":") != NULL,
          "show stats through the socket");
    check(t != NULL && strstr(t, "\"rounds_busy\":") != NULL && strstr(t, "\"rounds_busy_cycles\":") != NULL &&
              strstr(t, "\"rounds_idle_cycles\":") != NULL && strstr(t, "\"rounds_rx_frames\":") != NULL &&
              strstr(t, "\"rounds_tx_frames\":") != NULL && strstr(t, "\"tsc_hz\":") != NULL &&
              strstr(t, "\"runtime\":{\"total\":{\"rounds\":") != NULL,
          "show stats through the socket: the poll rounds' counters and their runtime");
    check_fds(t);
    free(t);
    t = ctl_test_ask("{\"version\":1,\"cmd\":\"config\"}", sc_show_config, true, &rc, err, sizeof(err));
    check(rc == SC_OK && t != NULL && strstr(t, "\"tcp_conn_count\":64") != NULL &&
              strstr(t, "\"unix_prefix\":\"t_\"") != NULL && strstr(t, "\"nic_rxqueue_size\":4096") != NULL,
          "show config: set keys and defaults, typed");
    free(t);
    t = ctl_test_ask("{\"version\":1,\"cmd\":\"loglevel\",\"level\":\"debug\"}", sc_show_loglevel, false, &rc, err,
            sizeof(err));
    check(rc == SC_OK && t != NULL && strstr(t, "-> debug") != NULL, "set loglevel debug");
    free(t);
    t = ctl_test_ask("{\"version\":1,\"cmd\":\"loglevel\",\"level\":\"info\"}", sc_show_loglevel, false, &rc, err,
            sizeof(err));
    free(t);
    t = ctl_test_ask("{\"version\":1,\"cmd\":\"nic\"}", sc_show_nic, false, &rc, err, sizeof(err));
    check(rc == SC_OK && t != NULL && strstr(t, "nothing to describe") != NULL, "show nic on a memory port");
    free(t);

    check(strstr(ctl_test_raw(path, "{\"version\":2,\"cmd\":\"stats\"}\n"),
                 "{\"type\":\"error\",\"error\":\"protocol version mismatch: this process") != NULL,
          "a request of another version: an error record, not garbage");
    check(strstr(ctl_test_raw(path, "{\"version\":1,\"cmd\":\"stats\"\n"), "\"error\":\"malformed request:") != NULL,
          "a malformed request: an error record");
    check(strstr(ctl_test_raw(path, "{\"version\":1,\"cmd\":\"reboot\"}\n"), "\"error\":\"unknown command 'reboot'") != NULL,
          "an unknown command: an error record");
    check(strstr(ctl_test_raw(path, "{\"version\":1,\"cmd\":\"connections\",\"state\":\"x\"}\n"),
                 "unknown TCP state 'x'") != NULL,
          "a bad argument: an error record");
    t = ctl_test_raw(path, "");
    check(strncmp(t, "{\"type\":\"hello\",\"proto\":\"lstack-ctl\",\"version\":1,", 48) == 0,
          "hello first: protocol name and version");

    ctl_stop();
    check(stat(want, &st) != 0 && ctl_socket_path() == NULL, "ctl_stop removes the socket");
    rmdir(dir);
}

int main(void)
{
    struct lstack_conf cb;
    if (ctl_test_pair(CTL_EXTRA, &cb, &A, &B) != 0)
        return 1;
    pump(10);
    setup_conns();
    test_paging();
    test_server(&cb);
    lstack_conf_free(&cb);
    return tap_done();
}
