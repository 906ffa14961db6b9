/*
 * fuzz_frames.c - libFuzzer target: arbitrary frames into a stack's receive
 * path while it has a listener and an established connection.
 *
 * Only public interfaces: stack.h, nic.h, lsock.h (so the target survives
 * a change of the lwIP build). Frames reach A through nic_mem_inject; a
 * tap on A's port (nic_mem_set_tap) feeds seq_watch.h, which learns A's
 * sequence numbers.
 * Design: docs/design.md#the-frame-fuzzers-peer-is-a-real-stack
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>

#include "conf/conf.h"
#include "fuzz.h"
#include "frame_fix.h"
#include "nic/nic.h"
#include "mem_nic.h"
#include "sock/lsock.h"
#include "seq_watch.h"
#include "stack/stack.h"
#include "../unit/pair_conf.h"

/*
 * Two stacks back to back on the memory port (nic_mem_pair): A, the target
 * (198.18.0.2, a listener on 6379), and B, its peer (198.18.0.1). For each
 * input:
 *  1. B tells A its MAC again (an ARP reply: an earlier input may have
 *     taught A another), connects to A, A accepts; a few bytes each way;
 *  2. the input's records (frame_fix.h: frames, each fixed up to A's MAC,
 *     the addresses, the connection's ports and sequence numbers, checksums,
 *     as its flags say) go into A's receive queue as if B had sent them, in
 *     bursts; A and B are polled; A's application accepts whatever arrives,
 *     reads everything and, when asked, writes;
 *  3. B resets its connection, A's application closes every socket it got;
 *     then A must count exactly one socket, its listener (lsock.h: a socket
 *     counts from its arrival to its close).
 * The stacks live as long as the process (per-input stacks would load an
 * lwIP copy per input). The state lwIP keeps between inputs (half-open
 * connections, ARP entries, fragments waiting for reassembly) is part of
 * what is fuzzed.
 */

#define PORT 6379
#define MAX_ACCEPTED 64
#define CONN_COUNT "tcp_conn_count = 128;"

static struct stack *A, *B;
static struct nic *na; /* A's port: frames are injected into its rx queue */
static struct seq_watch watch; /* A's side of the established connection */
static struct lsock *listener;
static struct fix_ctx ctx;
static struct lsock *accepted[MAX_ACCEPTED];
static int naccepted;
static size_t app_bytes;  /* read by A's application during the input */
static bool verbose;      /* FUZZ_VERBOSE=1: one line per input (what reached A) */

static void die(const char *what)
{
    fprintf(stderr, "fuzz_frames: %s\n", what);
    abort();
}

static void pump(int rounds)
{
    for (int i = 0; i < rounds; i++) {
        lsock_flush_acks(A);
        stack_poll(A);
        lsock_flush_acks(B);
        stack_poll(B);
    }
}

/* A's application: take every queued connection, read all that arrived. */
static void app_serve(void)
{
    struct lsock *s;
    while (naccepted < MAX_ACCEPTED && lsock_accept(listener, &s) == 0)
        accepted[naccepted++] = s;
    for (int i = 0; i < naccepted; i++) {
        char buf[2048];
        struct iovec v = {buf, sizeof(buf)};
        ssize_t n;
        while ((n = lsock_recv(accepted[i], &v, 1, 0)) > 0)
            app_bytes += (size_t)n;
    }
}

static void app_send(void)
{
    static const char reply[] = "+PONG\r\n$64\r\n0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef\r\n";
    struct iovec v = {(void *)reply, sizeof(reply) - 1};
    for (int i = 0; i < naccepted; i++)
        lsock_send(accepted[i], &v, 1, 0);
}

static void app_close_all(void)
{
    app_serve();
    for (int i = 0; i < naccepted; i++)
        lsock_close(accepted[i]);
    naccepted = 0;
}

/* Queue f[0..len) in A's receive queue, fixed up (as if B had sent it; it
 * counts against B's buffers). 0, or -1 if B's buffers stay all in use
 * after a round (A holds them). */
static int inject(const uint8_t *f, uint16_t len, uint8_t flags)
{
    uint8_t buf[FRAME_FIX_MAX];
    memcpy(buf, f, len);
    frame_fix(buf, len, flags, &ctx);
    if (nic_mem_inject(na, buf, len) == 0)
        return 0;
    pump(1);
    return nic_mem_inject(na, buf, len);
}

/* A's port's tap: every frame A sends, on its way to B. */
static bool tap_a(void *arg, const uint8_t *frame, uint16_t len)
{
    (void)arg;
    seq_watch_frame(&watch, frame, len);
    return true;
}

/* An ARP reply from B to A: B's MAC for B's address. */
static void arp_refresh(void)
{
    uint8_t f[42] = {0};
    memcpy(f, ctx.target_mac, 6);
    memcpy(f + 6, ctx.peer_mac, 6);
    static const uint8_t arp_hdr[] = {0x08, 0x06, 0x00, 0x01, 0x08, 0x00, 6, 4, 0x00, 0x02};
    memcpy(f + 12, arp_hdr, sizeof(arp_hdr));
    memcpy(f + 22, ctx.peer_mac, 6);
    memcpy(f + 28, &ctx.peer_addr, 4);
    memcpy(f + 32, ctx.target_mac, 6);
    memcpy(f + 38, &ctx.target_addr, 4);
    inject(f, sizeof(f), 0);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    static struct lstack_conf ca, cb;
    char err[512];
    if (pair_conf(&ca, "198.18.0.2", "198.18.0.1", CONN_COUNT) != 0 ||
        pair_conf(&cb, "198.18.0.1", "198.18.0.2", CONN_COUNT) != 0)
        die("the pair configs do not parse");
    struct nic *nb;
    if (nic_mem_pair(4096, (uint16_t)stack_nic_priv_size(), 32, &na, &nb) != 0)
        die("no memory port pair");
    nic_mem_set_tap(na, tap_a, NULL);
    if (stack_open(&A, &ca, 0, na, err, sizeof(err)) != 0 || stack_open(&B, &cb, 1, nb, err, sizeof(err)) != 0)
        die(err);
    int one = 1;
    if (lsock_new(A, &listener) != 0 || lsock_setsockopt(listener, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) != 0 ||
        lsock_bind(listener, htonl(INADDR_ANY), htons(PORT)) != 0 || lsock_listen(listener, 128) != 0)
        die("no listener on A");
    pump(10); /* ARP both ways */
    stack_mac(A, ctx.target_mac);
    stack_mac(B, ctx.peer_mac);
    ctx.target_addr = ca.host_addr;
    ctx.peer_addr = cb.host_addr;
    ctx.target_port = htons(PORT);
    const char *v = getenv("FUZZ_VERBOSE");
    verbose = v != NULL && strcmp(v, "1") == 0;
    return 0;
}

/* FUZZ_VERBOSE: what A made of the input's frames (counter deltas). */
static void report(const struct stack_stats *before, unsigned records, int connected)
{
    struct stack_stats now;
    stack_get_stats(A, &now);
    uint64_t drops = 0;
    for (int v = 1; v < FRAME_VERDICT_COUNT; v++)
        drops += now.drop[v] - before->drop[v];
    fprintf(stderr, "fuzz_frames: %u records, connected %d; A: rx %llu, dropped %llu (", records, connected,
            (unsigned long long)(now.nic.rx_packets - before->nic.rx_packets), (unsigned long long)drops);
    for (int v = 1; v < FRAME_VERDICT_COUNT; v++)
        if (now.drop[v] != before->drop[v])
            fprintf(stderr, " %s %llu", frame_verdict_name((enum frame_verdict)v),
                    (unsigned long long)(now.drop[v] - before->drop[v]));
    fprintf(stderr, " ), lwIP refused %llu, tx %llu, app read %zu bytes\n",
            (unsigned long long)(now.lwip_input_err - before->lwip_input_err),
            (unsigned long long)(now.nic.tx_packets - before->nic.tx_packets), app_bytes);
}

/* Step 1: B's client c connected to A, accepted[0] its server side. */
static struct lsock *connect_b(void)
{
    struct lsock *c;
    if (lsock_new(B, &c) != 0)
        die("B cannot open a socket (B's sockets leak)");
    if (lsock_connect(c, ctx.target_addr, htons(PORT)) != -EINPROGRESS)
        die("B cannot start connecting");
    for (int i = 0; i < 50 && !(naccepted > 0 && (lsock_events(c) & (EPOLLOUT | EPOLLERR)) == EPOLLOUT); i++) {
        pump(1);
        app_serve();
    }
    uint32_t addr;
    uint16_t port;
    if (naccepted == 0 || lsock_name(c, false, &addr, &port) != 0) {
        lsock_close(c);
        return NULL; /* the last input left A unable to answer yet */
    }
    ctx.peer_port = port;
    seq_watch_set(&watch, ctx.target_addr, ctx.target_port, port);
    static const char hello[] = "*1\r\n$4\r\nPING\r\n";
    struct iovec v = {(void *)hello, sizeof(hello) - 1};
    lsock_send(c, &v, 1, 0);
    pump(2);
    app_serve();
    app_send();
    pump(2);
    char buf[256];
    struct iovec r = {buf, sizeof(buf)};
    while (lsock_recv(c, &r, 1, 0) > 0)
        ;
    return c;
}

static void teardown(struct lsock *c)
{
    struct linger lg = {1, 0};
    lsock_setsockopt(c, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
    lsock_close(c); /* RST */
    pump(2);
    app_close_all();
    pump(2);
    app_close_all();
    seq_watch_set(&watch, 0, 0, 0);
    unsigned n = lsock_count(A);
    if (n != 1) {
        fprintf(stderr, "fuzz_frames: A counts %u sockets after every close, expected 1 (its listener)\n", n);
        abort();
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    arp_refresh();
    pump(1);
    struct lsock *c = connect_b();
    if (c == NULL) {
        app_close_all();
        if (verbose)
            fprintf(stderr, "fuzz_frames: B could not connect to A: input not run\n");
        return 0;
    }
    struct stack_stats before;
    stack_get_stats(A, &before);
    app_bytes = 0;
    unsigned records = 0;
    size_t off = 0, used;
    uint8_t flags;
    const uint8_t *frame;
    uint16_t len;
    while ((used = frame_rec_next(data + off, size - off, &flags, &frame, &len)) > 0) {
        off += used;
        records++;
        ctx.rcv_nxt = watch.rcv_nxt;
        ctx.snd_nxt = watch.snd_nxt;
        if (inject(frame, len, flags) != 0)
            break;
        if (flags & REC_SEND)
            app_send(); /* leaves in the next poll: the next record sees its sequence numbers */
        if (flags & REC_POLL) {
            pump(1);
            app_serve();
        }
    }
    pump(2);
    app_serve();
    if (verbose)
        report(&before, records, watch.seen);
    teardown(c);
    return 0;
}
