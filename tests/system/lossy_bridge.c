/*
 * lossy_bridge: forward Ethernet frames between two interfaces, impairing
 * them on the way (loss, duplication, reordering, delay with jitter,
 * corruption), for the loss-recovery tests. This kernel has no sch_netem,
 * so the impairments live in user space: the test bed (testbed.sh,
 * TB_BRIDGE=1) runs this program in a third namespace between the client
 * veth and the server veth.
 *
 * Prints "lossy_bridge: ready" on stdout once both sockets are bound, and
 * one "lossy_bridge: a->b ..." / "b->a ..." line of counters when it exits
 * (SIGINT, SIGTERM or --duration). Exit status 0, or 1 on a setup error.
 * Design: docs/design.md#the-lossy-bridge-is-a-plain-packet-socket-loop
 */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <linux/if_packet.h>
#include <net/ethernet.h>
#include <net/if.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

/*
 *   lossy_bridge --a IFACE --b IFACE [--ab SPEC] [--ba SPEC] [--both SPEC]
 *                [--seed N] [--duration S]
 *
 *   --a / --b    the two interfaces (the bed: a = towards the server,
 *                b = towards the client); frames read on one go out of the other
 *   --ab SPEC    impairments of frames travelling a -> b (default: none)
 *   --ba SPEC    the same for b -> a
 *   --both SPEC  both directions
 *   --seed N     the PRNG seed (default 1): the same seed draws the same
 *                decisions for the same sequence of frames
 *   --duration S exit after S seconds (default 600): a bridge left behind
 *                by a crashed test never runs for ever
 *
 *   SPEC is comma-separated key=value: loss=PCT, dup=PCT, reorder=PCT,
 *   corrupt=PCT, delay=MS, jitter=MS (e.g. "loss=5,dup=1,reorder=25,delay=10,jitter=5").
 *
 * What each impairment means (decided per frame, in this order):
 *   loss     the frame is dropped
 *   corrupt  one byte of the frame's TCP or UDP part (header or payload,
 *            inside the IP total length) is XORed with a random non-zero
 *            value, so that the L4 checksum no longer holds (a one-byte
 *            change always changes a ones'-complement sum); other frames
 *            are never corrupted
 *   dup      a second copy is sent right after the frame (same fate)
 *   reorder  the frame is sent at once, ahead of the delayed frames of its
 *            direction (netem's "reorder": the reordered frames skip the delay)
 *   delay    every other frame waits delay +/- jitter (uniform); jitter does
 *            not reorder by itself: a frame never leaves before the one
 *            queued ahead of it (each direction is one FIFO), so the amount
 *            of reordering is what "reorder" says
 * Only IPv4 frames are impaired; ARP and everything else passes unharmed
 * and undelayed (address resolution is not what the tests measure).
 *
 * Design: two AF_PACKET raw sockets (created with protocol 0 and bound with
 * ETH_P_ALL, so that nothing arrives before the bind picks the interface;
 * PACKET_IGNORE_OUTGOING so that our own transmissions are not read back),
 * one thread, ppoll with the time of the next due frame as the timeout.
 */

#ifndef PACKET_IGNORE_OUTGOING
#define PACKET_IGNORE_OUTGOING 23
#endif

#define FRAME_MAX 2048u     /* MTU 1500 frames; bigger ones are counted and dropped */
#define QUEUE_SLOTS 16384u  /* per direction: 10 ms at well over 100k frames/s */

struct impair {
    double loss, dup, reorder, corrupt; /* percent */
    double delay_ms, jitter_ms;
};

struct slot {
    uint64_t due_ns;
    uint32_t len;
    uint8_t data[FRAME_MAX];
};

struct counters {
    uint64_t rx, tx, lost, dup, reordered, corrupted, delayed, passed_non_ip;
    uint64_t queue_full, oversize, tx_err;
};

struct dir {
    const char *name;
    struct impair imp;
    int in_fd, out_fd;
    struct slot *q; /* FIFO ring of QUEUE_SLOTS */
    uint32_t head, count;
    uint64_t last_due_ns;
    struct counters c;
};

static volatile sig_atomic_t g_stop;

static void on_signal(int sig)
{
    (void)sig;
    g_stop = 1;
}

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* splitmix64: small, seedable, good enough for coin flips. */
static uint64_t g_rng;
static uint64_t rng_next(void)
{
    uint64_t z = (g_rng += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* true with probability pct percent (resolution 1e-6) */
static bool chance(double pct)
{
    if (pct <= 0)
        return false;
    return (double)(rng_next() % 100000000ull) < pct * 1000000.0;
}

static int parse_spec(const char *spec, struct impair *imp)
{
    char buf[256];
    if (strlen(spec) >= sizeof buf)
        return -1;
    strcpy(buf, spec);
    char *save = NULL;
    for (char *kv = strtok_r(buf, ",", &save); kv; kv = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(kv, '=');
        if (!eq)
            return -1;
        *eq = '\0';
        char *end;
        double v = strtod(eq + 1, &end);
        if (end == eq + 1 || *end != '\0' || v < 0)
            return -1;
        if (!strcmp(kv, "loss") && v <= 100)
            imp->loss = v;
        else if (!strcmp(kv, "dup") && v <= 100)
            imp->dup = v;
        else if (!strcmp(kv, "reorder") && v <= 100)
            imp->reorder = v;
        else if (!strcmp(kv, "corrupt") && v <= 100)
            imp->corrupt = v;
        else if (!strcmp(kv, "delay") && v <= 10000)
            imp->delay_ms = v;
        else if (!strcmp(kv, "jitter") && v <= 10000)
            imp->jitter_ms = v;
        else
            return -1;
    }
    if (imp->jitter_ms > imp->delay_ms)
        return -1;
    return 0;
}

static int open_port(const char *ifname)
{
    unsigned idx = if_nametoindex(ifname);
    if (!idx) {
        fprintf(stderr, "lossy_bridge: no interface '%s'\n", ifname);
        return -1;
    }
    int fd = socket(AF_PACKET, SOCK_RAW | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        perror("lossy_bridge: socket(AF_PACKET)");
        return -1;
    }
    int one = 1, big = 8 << 20;
    if (setsockopt(fd, SOL_PACKET, PACKET_IGNORE_OUTGOING, &one, sizeof one) != 0)
        perror("lossy_bridge: PACKET_IGNORE_OUTGOING (outgoing frames filtered by pkttype)");
    if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &big, sizeof big) != 0)
        (void)setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &big, sizeof big);
    if (setsockopt(fd, SOL_SOCKET, SO_SNDBUFFORCE, &big, sizeof big) != 0)
        (void)setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &big, sizeof big);
    struct sockaddr_ll sll = {
        .sll_family = AF_PACKET,
        .sll_protocol = htons(ETH_P_ALL),
        .sll_ifindex = (int)idx,
    };
    if (bind(fd, (struct sockaddr *)&sll, sizeof sll) != 0) {
        fprintf(stderr, "lossy_bridge: bind to %s: %s\n", ifname, strerror(errno));
        close(fd);
        return -1;
    }
    struct packet_mreq mr = { .mr_ifindex = (int)idx, .mr_type = PACKET_MR_PROMISC };
    if (setsockopt(fd, SOL_PACKET, PACKET_ADD_MEMBERSHIP, &mr, sizeof mr) != 0) {
        fprintf(stderr, "lossy_bridge: promiscuous mode on %s: %s\n", ifname, strerror(errno));
        close(fd);
        return -1;
    }
    return fd;
}

static void send_now(struct dir *d, const uint8_t *f, uint32_t len)
{
    if (send(d->out_fd, f, len, 0) == (ssize_t)len)
        d->c.tx++;
    else
        d->c.tx_err++;
}

static void enqueue(struct dir *d, const uint8_t *f, uint32_t len, uint64_t due)
{
    if (d->count == QUEUE_SLOTS) {
        d->c.queue_full++;
        return;
    }
    struct slot *s = &d->q[(d->head + d->count) % QUEUE_SLOTS];
    s->due_ns = due;
    s->len = len;
    memcpy(s->data, f, len);
    d->count++;
    d->c.delayed++;
}

/* Offset and length of the TCP/UDP part of an IPv4 frame, or false. */
static bool l4_span(const uint8_t *f, uint32_t len, uint32_t *off, uint32_t *l4len)
{
    if (len < 14 + 20)
        return false;
    const uint8_t *ip = f + 14;
    uint32_t ihl = (uint32_t)(ip[0] & 0x0f) * 4;
    uint32_t tot = ((uint32_t)ip[2] << 8) | ip[3];
    uint16_t frag = (uint16_t)(((ip[6] & 0x1f) << 8) | ip[7]);
    if ((ip[0] >> 4) != 4 || ihl < 20 || tot < ihl || 14 + tot > len || frag != 0)
        return false;
    if (ip[9] != 6 && ip[9] != 17)
        return false;
    if (tot == ihl)
        return false;
    *off = 14 + ihl;
    *l4len = tot - ihl;
    return true;
}

static void handle_frame(struct dir *d, uint8_t *f, uint32_t len, uint64_t now)
{
    d->c.rx++;
    if (len > FRAME_MAX) {
        d->c.oversize++;
        return;
    }
    uint16_t type = (uint16_t)((f[12] << 8) | f[13]);
    if (type != ETHERTYPE_IP) {
        d->c.passed_non_ip++;
        send_now(d, f, len);
        return;
    }
    const struct impair *im = &d->imp;
    if (chance(im->loss)) {
        d->c.lost++;
        return;
    }
    uint32_t off, l4len;
    if (im->corrupt > 0 && chance(im->corrupt) && l4_span(f, len, &off, &l4len)) {
        uint32_t at = off + (uint32_t)(rng_next() % l4len);
        f[at] ^= (uint8_t)(1 + rng_next() % 255);
        d->c.corrupted++;
    }
    int copies = 1;
    if (chance(im->dup)) {
        copies = 2;
        d->c.dup++;
    }
    bool reorder = chance(im->reorder);
    uint64_t delay_ns = (uint64_t)(im->delay_ms * 1e6);
    if (im->jitter_ms > 0) {
        double j = ((double)(rng_next() % 2000001ull) / 1000000.0 - 1.0) * im->jitter_ms;
        delay_ns = (uint64_t)((im->delay_ms + j) * 1e6);
    }
    for (int i = 0; i < copies; i++) {
        if (reorder || delay_ns == 0) {
            if (reorder && d->count > 0)
                d->c.reordered++;
            send_now(d, f, len);
        } else {
            uint64_t due = now + delay_ns;
            if (due < d->last_due_ns)
                due = d->last_due_ns; /* FIFO: jitter does not reorder */
            d->last_due_ns = due;
            enqueue(d, f, len, due);
        }
    }
}

/* Send every due frame; return the time of the next one (UINT64_MAX: none). */
static uint64_t flush_due(struct dir *d, uint64_t now)
{
    while (d->count > 0) {
        struct slot *s = &d->q[d->head];
        if (s->due_ns > now)
            return s->due_ns;
        send_now(d, s->data, s->len);
        d->head = (d->head + 1) % QUEUE_SLOTS;
        d->count--;
    }
    return UINT64_MAX;
}

static void read_some(struct dir *d, uint8_t *buf)
{
    for (int i = 0; i < 256; i++) {
        struct sockaddr_ll from;
        socklen_t fl = sizeof from;
        ssize_t n = recvfrom(d->in_fd, buf, 65536, MSG_TRUNC, (struct sockaddr *)&from, &fl);
        if (n < 0)
            return;
        if (from.sll_pkttype == PACKET_OUTGOING)
            continue;
        if (n < 14 || n > 65536) {
            d->c.rx++;
            d->c.oversize++;
            continue;
        }
        handle_frame(d, buf, (uint32_t)n, now_ns());
    }
}

static void print_counters(const struct dir *d)
{
    const struct counters *c = &d->c;
    printf("lossy_bridge: %s rx=%" PRIu64 " tx=%" PRIu64 " lost=%" PRIu64 " dup=%" PRIu64
           " reordered=%" PRIu64 " corrupted=%" PRIu64 " delayed=%" PRIu64 " non_ip=%" PRIu64
           " queue_full=%" PRIu64 " oversize=%" PRIu64 " tx_err=%" PRIu64 "\n",
           d->name, c->rx, c->tx, c->lost, c->dup, c->reordered, c->corrupted, c->delayed,
           c->passed_non_ip, c->queue_full, c->oversize, c->tx_err);
}

static void usage(void)
{
    fprintf(stderr, "usage: lossy_bridge --a IFACE --b IFACE [--ab SPEC] [--ba SPEC] [--both SPEC]\n"
                    "                    [--seed N] [--duration S]\n"
                    "  SPEC: loss=PCT,dup=PCT,reorder=PCT,corrupt=PCT,delay=MS,jitter=MS\n");
}

int main(int argc, char **argv)
{
    const char *ifa = NULL, *ifb = NULL;
    struct dir ab = { .name = "a->b" }, ba = { .name = "b->a" };
    uint64_t seed = 1;
    double duration = 600;
    for (int i = 1; i < argc; i++) {
        const char *o = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!v) {
            usage();
            return 2;
        }
        i++;
        if (!strcmp(o, "--a"))
            ifa = v;
        else if (!strcmp(o, "--b"))
            ifb = v;
        else if (!strcmp(o, "--ab") || !strcmp(o, "--ba") || !strcmp(o, "--both")) {
            bool ok = true;
            if (strcmp(o, "--ba"))
                ok = ok && parse_spec(v, &ab.imp) == 0;
            if (strcmp(o, "--ab"))
                ok = ok && parse_spec(v, &ba.imp) == 0;
            if (!ok) {
                fprintf(stderr, "lossy_bridge: bad SPEC '%s'\n", v);
                usage();
                return 2;
            }
        } else if (!strcmp(o, "--seed")) {
            char *end;
            seed = strtoull(v, &end, 0);
            if (*end) {
                usage();
                return 2;
            }
        } else if (!strcmp(o, "--duration")) {
            char *end;
            duration = strtod(v, &end);
            if (*end || duration <= 0) {
                usage();
                return 2;
            }
        } else {
            usage();
            return 2;
        }
    }
    if (!ifa || !ifb) {
        usage();
        return 2;
    }
    g_rng = seed;
    struct sigaction sa = { .sa_handler = on_signal };
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);

    int fa = open_port(ifa), fb = open_port(ifb);
    if (fa < 0 || fb < 0)
        return 1;
    ab.in_fd = fa, ab.out_fd = fb;
    ba.in_fd = fb, ba.out_fd = fa;
    ab.q = calloc(QUEUE_SLOTS, sizeof(struct slot));
    ba.q = calloc(QUEUE_SLOTS, sizeof(struct slot));
    uint8_t *buf = malloc(65536);
    if (!ab.q || !ba.q || !buf) {
        fprintf(stderr, "lossy_bridge: out of memory\n");
        return 1;
    }
    printf("lossy_bridge: ready a=%s b=%s seed=%" PRIu64 "\n", ifa, ifb, seed);
    fflush(stdout);

    uint64_t end = now_ns() + (uint64_t)(duration * 1e9);
    while (!g_stop) {
        uint64_t now = now_ns();
        if (now >= end)
            break;
        uint64_t next = end;
        uint64_t n1 = flush_due(&ab, now), n2 = flush_due(&ba, now);
        if (n1 < next)
            next = n1;
        if (n2 < next)
            next = n2;
        struct pollfd p[2] = { { .fd = fa, .events = POLLIN }, { .fd = fb, .events = POLLIN } };
        uint64_t wait = next > now ? next - now : 0;
        struct timespec ts = { .tv_sec = (time_t)(wait / 1000000000ull), .tv_nsec = (long)(wait % 1000000000ull) };
        int r = ppoll(p, 2, &ts, NULL);
        if (r < 0) {
            if (errno == EINTR)
                continue;
            perror("lossy_bridge: ppoll");
            break;
        }
        if (p[0].revents & POLLIN)
            read_some(&ab, buf);
        if (p[1].revents & POLLIN)
            read_some(&ba, buf);
    }
    print_counters(&ab);
    print_counters(&ba);
    fflush(stdout);
    close(fa);
    close(fb);
    free(ab.q);
    free(ba.q);
    free(buf);
    return 0;
}
