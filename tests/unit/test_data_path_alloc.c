/*
 * test_data_path_alloc.c - nothing on the per-segment path calls malloc.
 *
 * Two stacks back to back over the memory port; a connection moves 8 MiB
 * each way (bulk, with ACKs and window updates) and 20,000 small
 * request/reply exchanges (the Redis shape) while this executable counts
 * every malloc, calloc and realloc the process makes (it defines them and
 * forwards to glibc's). After a warm-up round, the counted rounds must make
 * none: lwIP's memory comes from its copy's arena (lstack/stack/lwip/port/
 * lwip_mem.c), received data stays in the port's buffers, and the sock and
 * stack layers allocate only when a socket is created. No DPDK, no root.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/uio.h>

#include "common/sanitizer.h"
#include "conf/conf.h"
#include "nic/nic.h"
#include "mem_nic.h"
#include "sock/lsock.h"
#include "stack/stack.h"
#include "pair_conf.h"
#include "pair_pump.h"

#include "tap.h"

/*
 * With the argument "tso" the ports offer TSO (lwIP builds segments of many
 * MSS, the memory port cuts them) and the same must hold; "offload": the
 * ports offer checksum offload only (the same run without TSO, for
 * comparing instruction counts under callgrind, docs/performance.md).
 */

/* ---- counting allocator: glibc's, counted while armed ----
 * Visible (the build hides symbols by default) so that the dlopened lwIP
 * copy binds to these too. Under ASan, whose allocator cannot be replaced,
 * its malloc hook counts instead (every malloc, calloc and realloc). */
static int armed;
static unsigned long counted;

#if LSTACK_ASAN
/* The sanitizer runtime's (clang's sanitizer/allocator_interface.h; gcc 12
 * ships no header for it). */
int __sanitizer_install_malloc_and_free_hooks(void (*malloc_hook)(const volatile void *, size_t),
                                              void (*free_hook)(const volatile void *));

static void count_alloc(const volatile void *p, size_t n)
{
    (void)p;
    (void)n;
    counted += armed;
}

static void no_free_hook(const volatile void *p)
{
    (void)p;
}

/* Returns 0 once allocations are counted. */
static int count_setup(void)
{
    /* Both hooks or none: the runtime refuses a NULL one. */
    return __sanitizer_install_malloc_and_free_hooks(count_alloc, no_free_hook) != 0 ? 0 : -1;
}
#else
#define EXPORTED __attribute__((visibility("default")))
extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);

EXPORTED void *malloc(size_t n)
{
    counted += armed;
    return __libc_malloc(n);
}

EXPORTED void *calloc(size_t n, size_t m)
{
    counted += armed;
    return __libc_calloc(n, m);
}

EXPORTED void *realloc(void *p, size_t n)
{
    counted += armed;
    return __libc_realloc(p, n);
}

static int count_setup(void)
{
    return 0;
}
#endif

#define PORT 7000

static struct stack *A, *B;

static void pump(void)
{
    pair_pump(A, B, 1);
}

/* Move len bytes from w to r, pumping both stacks. Returns bytes read. */
__attribute__((noinline)) static size_t transfer(struct lsock *w, struct lsock *r, size_t len)
{
    static char out[65536], in[65536];
    size_t sent = 0, got = 0;
    for (int spins = 0; got < len && spins < 2000000; spins++) {
        if (sent < len) {
            size_t n = len - sent < sizeof(out) ? len - sent : sizeof(out);
            struct iovec v = {out, n};
            ssize_t k = lsock_send(w, &v, 1, 0);
            if (k > 0)
                sent += (size_t)k;
        }
        pump();
        for (;;) {
            struct iovec v = {in, sizeof(in)};
            ssize_t k = lsock_recv(r, &v, 1, 0);
            if (k <= 0)
                break;
            got += (size_t)k;
        }
    }
    return got;
}

/* n request/reply rounds of small messages (a Redis PING's shape). */
static int ping_pong(struct lsock *c, struct lsock *s, int n)
{
    static const char req[] = "*1\r\n$4\r\nPING\r\n", rep[] = "+PONG\r\n";
    char buf[64];
    for (int i = 0; i < n; i++) {
        struct iovec q = {(void *)req, sizeof(req) - 1}, p = {(void *)rep, sizeof(rep) - 1};
        if (lsock_send(c, &q, 1, 0) != (ssize_t)q.iov_len || !(pair_pump_until(A, B, s, EPOLLIN) & EPOLLIN))
            return i;
        struct iovec b = {buf, sizeof(buf)};
        if (lsock_recv(s, &b, 1, 0) != (ssize_t)q.iov_len || lsock_send(s, &p, 1, 0) != (ssize_t)p.iov_len ||
            !(pair_pump_until(A, B, c, EPOLLIN) & EPOLLIN))
            return i;
        b.iov_len = sizeof(buf);
        if (lsock_recv(c, &b, 1, 0) != (ssize_t)p.iov_len)
            return i;
    }
    return n;
}

/* Open the two stacks; with offload on memory ports that offer checksum
 * offload, with tso also TSO. */
static int open_stacks(const struct lstack_conf *ca, const struct lstack_conf *cb, int offload, int tso, char *err,
                       size_t errlen)
{
    if (!offload)
        return pair_open(ca, cb, &A, &B, err, errlen);
    const struct nic_caps caps = {.mtu = 1500, .rx_cksum = true, .tx_cksum = true, .tso_max = tso ? 65280 : 0};
    struct nic *na, *nb;
    /* a TSO frame takes up to 43 of the port's buffers until it is cut */
    if (nic_mem_pair(16384, (uint16_t)stack_nic_priv_size(), 32, &na, &nb) != 0)
        return -1;
    nic_mem_set_caps(na, &caps);
    nic_mem_set_caps(nb, &caps);
    /* The port's buffers up front, like an mbuf pool: in flight are at most
     * two windows of data (256 KiB each way, in chains and cut frames) and
     * their ACKs, far fewer than this. */
    if (nic_mem_prealloc(na, 4096) != 0)
        return -1;
    if (stack_open(&A, ca, 0, na, err, errlen) != 0 || stack_open(&B, cb, 1, nb, err, errlen) != 0)
        return -1;
    return 0;
}

int main(int argc, char **argv)
{
    struct lstack_conf ca, cb;
    char err[512] = "";
    int tso = argc > 1 && strcmp(argv[1], "tso") == 0;
    int offload = tso || (argc > 1 && strcmp(argv[1], "offload") == 0);
    if (count_setup() != 0) {
        check(0, "the ASan malloc hook installs (allocations can be counted)");
        return tap_done();
    }
    if (pair_conf(&ca, "198.18.0.2", "198.18.0.1", "tcp_conn_count = 64;") != 0 ||
        pair_conf(&cb, "198.18.0.1", "198.18.0.2", "tcp_conn_count = 64;") != 0 ||
        open_stacks(&ca, &cb, offload, tso, err, sizeof(err)) != 0) {
        printf("# %s\n", err);
        check(0, "two stacks open");
        return tap_done();
    }
    struct lsock *l = NULL, *c = NULL, *s = NULL;
    int ok = pair_connect(A, B, htonl(0xc6120001), PORT, &l, &c, &s) == 0;
    check(ok, "a connection between the stacks");
    if (!ok)
        return tap_done();

    /* Warm-up: the arena's size classes, the ARP entries, lwIP's timers. */
    size_t mb = 8u << 20;
    check(transfer(c, s, mb) == mb && transfer(s, c, mb) == mb && ping_pong(c, s, 1000) == 1000,
          "warm-up: 8 MiB each way and 1,000 exchanges");

    armed = 1;
    size_t up = transfer(c, s, mb), down = transfer(s, c, mb);
    int rounds = ping_pong(c, s, 20000);
    armed = 0;
    checkf(up == mb && down == mb && rounds == 20000, "the counted round ran: %zu and %zu bytes, %d exchanges",
           up, down, rounds);
    checkf(counted == 0, "no malloc/calloc/realloc on the data path (%lu calls)", counted);
    if (tso) {
        struct stack_stats sa, sb;
        stack_get_stats(A, &sa);
        stack_get_stats(B, &sb);
        checkf(sa.tx_tso > 0 && sb.tx_tso > 0, "the data went in TSO frames (A %llu, B %llu)",
               (unsigned long long)sa.tx_tso, (unsigned long long)sb.tx_tso);
    }

    lsock_close(c);
    lsock_close(s);
    lsock_close(l);
    stack_close(A);
    stack_close(B);
    lstack_conf_free(&ca);
    lstack_conf_free(&cb);
    return tap_done();
}
