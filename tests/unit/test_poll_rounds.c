/*
 * test_poll_rounds.c - the poll-round counters (stack/round_acct.h): which
 * rounds are busy, the frames each one moved, where their time goes, and
 * the TSC rate they are converted with. Two stacks on the memory port (no
 * DPDK, no root), frames injected by hand, plus round_acct on made-up ticks.
 * TAP output.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/uio.h>
#include <time.h>

#include "conf/conf.h"
#include "ctl/ctl_rounds.h"
#include "nic/nic.h"
#include "mem_nic.h"
#include "sock/lsock.h"
#include "stack/round_acct.h"
#include "stack/stack.h"
#include "pair_conf.h"
#include "pair_pump.h"

#include "tap.h"

static struct stack_rounds rounds_of(struct stack *s)
{
    struct stack_stats st;
    stack_get_stats(s, &st);
    st.rounds.tsc_hz = 0; /* compared field by field below: the rate is not a count */
    return st.rounds;
}

static uint64_t polls_of(struct stack *s)
{
    struct stack_stats st;
    stack_get_stats(s, &st);
    return st.polls;
}

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void spin_us(unsigned us)
{
    uint64_t end = now_ns() + (uint64_t)us * 1000u;
    while (now_ns() < end) {
    }
}

/* A TSC read and a clock read at the same moment (retried while the
 * thread is held up between them). */
static void pair(uint64_t *tsc, uint64_t *ns)
{
    for (int i = 0; i < 100; i++) {
        uint64_t a = now_ns();
        *tsc = round_clock_now();
        uint64_t b = now_ns();
        *ns = a + (b - a) / 2;
        if (b - a < 20000)
            return;
    }
}

/* TSC ticks per second, measured here over 200 ms. */
static double tsc_hz_reference(void)
{
    uint64_t t0, n0, t1, n1;
    pair(&t0, &n0);
    do
        pair(&t1, &n1);
    while (n1 - n0 < 200000000u);
    return (double)(t1 - t0) * 1e9 / (double)(n1 - n0);
}

/* An ARP request for target (who-has, network order) from 198.18.0.9 at
 * 02:00:00:00:00:09, broadcast. 42 bytes. */
static size_t arp_request(uint8_t *f, uint32_t target)
{
    static const uint8_t mac[6] = {0x02, 0, 0, 0, 0, 0x09};
    uint32_t sender = inet_addr("198.18.0.9");
    memset(f, 0xff, 6);
    memcpy(f + 6, mac, 6);
    f[12] = 0x08, f[13] = 0x06;                      /* ARP */
    f[14] = 0, f[15] = 1, f[16] = 0x08, f[17] = 0;   /* Ethernet, IPv4 */
    f[18] = 6, f[19] = 4, f[20] = 0, f[21] = 1;      /* request */
    memcpy(f + 22, mac, 6);
    memcpy(f + 28, &sender, 4);
    memset(f + 32, 0, 6);
    memcpy(f + 38, &target, 4);
    return 42;
}

/* A frame for some other host (dropped by the filter as not_ours). */
static size_t other_frame(uint8_t *f)
{
    memset(f, 0, 60);
    static const uint8_t dst[6] = {0x02, 0, 0, 0, 0, 0x77}, src[6] = {0x02, 0, 0, 0, 0, 0x09};
    memcpy(f, dst, 6);
    memcpy(f + 6, src, 6);
    f[12] = 0x08, f[13] = 0x00;
    return 60;
}

/* round_acct alone, on made-up ticks. */
static void test_acct(void)
{
    struct round_acct a = {0};
    struct stack_rounds r;
    memset(&r, 0, sizeof(r));
    round_acct_begin(&a, &r, 1000); /* the first round: nothing before it to charge */
    round_acct_end(&a, &r, 3, 2);   /* busy: 3 in, 2 out */
    round_acct_begin(&a, &r, 1400); /* 400 ticks to the busy round */
    round_acct_end(&a, &r, 0, 0);
    round_acct_begin(&a, &r, 1500); /* 100 to the idle one */
    round_acct_end(&a, &r, 0, 1);   /* busy: only sent */
    round_acct_begin(&a, &r, 1450); /* a clock behind (another CPU's TSC): not charged */
    round_acct_end(&a, &r, 0, 0);
    round_acct_begin(&a, &r, 1460);
    checkf(r.busy == 2 && r.rx_frames == 3 && r.tx_frames == 3 && r.busy_cycles == 400 && r.idle_cycles == 110,
           "round_acct: span to the next round's start charged to the round; busy = frames in or out "
           "(busy %llu, rx %llu, tx %llu, busy cycles %llu, idle cycles %llu)",
           (unsigned long long)r.busy, (unsigned long long)r.rx_frames, (unsigned long long)r.tx_frames,
           (unsigned long long)r.busy_cycles, (unsigned long long)r.idle_cycles);
}

/* What ctl_rounds_view makes of counters (stackctl, lstackd). */
static void test_runtime(void)
{
    struct ctl_rounds c = {.rounds = 1000, .busy = 100, .rx_frames = 150, .tx_frames = 50,
                           .busy_cycles = 2000000, .idle_cycles = 6000000, .tsc_hz = 2000000000};
    struct ctl_rounds_view r;
    ctl_rounds_derive(&c, 0, 1, &r);
    checkf(r.busy_pct == 25.0 && r.frames_per_busy_round == 2.0 && r.cycles_per_frame == 10000.0 &&
               r.busy_us == 1000.0 && r.idle_us == 3000.0 && r.rounds_per_s == 250000.0,
           "runtime: busy %% %.1f, frames/busy round %.2f, cycles/frame %.0f, busy %.0f us, idle %.0f us, "
           "rounds/s %.0f",
           r.busy_pct, r.frames_per_busy_round, r.cycles_per_frame, r.busy_us, r.idle_us, r.rounds_per_s);
    ctl_rounds_derive(&c, 0.5, 1, &r);
    check(r.rounds_per_s == 2000.0, "runtime: rounds/s over a given interval");
    struct ctl_rounds zero = {0};
    ctl_rounds_derive(&zero, 0, 1, &r);
    check(r.busy_pct != r.busy_pct && r.cycles_per_frame != r.cycles_per_frame && r.busy_us != r.busy_us,
          "runtime: nothing timed yet reads as unknown (NAN), not 0");
    struct ctl_rounds later = c, d;
    later.rounds += 10, later.busy += 5, later.busy_cycles += 100;
    ctl_rounds_diff(&c, &later, &d);
    check(d.rounds == 10 && d.busy == 5 && d.busy_cycles == 100 && d.idle_cycles == 0 && d.tsc_hz == c.tsc_hz,
          "runtime: the difference of two readings");
}

static void test_pair(void)
{
    struct lstack_conf ca, cb;
    char err[512];
    if (pair_conf(&ca, "198.18.0.2", "198.18.0.1", NULL) != 0 || pair_conf(&cb, "198.18.0.1", "198.18.0.2", NULL) != 0) {
        check(0, "configs parse");
        return;
    }
    struct stack *a = NULL, *b = NULL;
    struct nic *na, *nb;
    if (pair_open_ports(&ca, &cb, &a, &b, &na, &nb, err, sizeof(err)) != 0) {
        printf("# %s\n", err);
        check(0, "two stacks on the memory port");
        return;
    }
    /* ARP both ways, then quiet; and the lwIP clock's first TSC measurement
     * (it needs 10 ms of rounds). */
    uint64_t t0 = now_ns();
    struct stack_stats st;
    do {
        pair_pump(a, b, 1);
        stack_get_stats(b, &st);
    } while ((st.rounds.tsc_hz == 0 || now_ns() - t0 < 30000000u) && now_ns() - t0 < 5000000000u);
    double ref = tsc_hz_reference();
    double rel = ref > 0 ? (double)st.rounds.tsc_hz / ref : 0;
    checkf(rel > 0.98 && rel < 1.02,
           "the TSC rate comes from the lwIP copy's clock: %llu Hz (this test measures %.0f Hz over 200 ms)",
           (unsigned long long)st.rounds.tsc_hz, ref);
    check(st.rounds.busy > 0 && st.rounds.busy < st.polls && st.rounds.busy_cycles > 0 && st.rounds.idle_cycles > 0,
          "bring-up: some rounds busy (ARP), most idle, both timed");

    /* Idle rounds: counted, never busy, their time idle. */
    stack_poll(b); /* the round before is charged at this one's start */
    struct stack_rounds r0 = rounds_of(b);
    uint64_t p0 = polls_of(b);
    for (int i = 0; i < 100; i++)
        stack_poll(b);
    struct stack_rounds r1 = rounds_of(b);
    checkf(polls_of(b) - p0 == 100 && r1.busy == r0.busy && r1.rx_frames == r0.rx_frames &&
               r1.tx_frames == r0.tx_frames && r1.busy_cycles == r0.busy_cycles && r1.idle_cycles > r0.idle_cycles,
           "100 empty rounds: 100 rounds, none busy, no frame, busy cycles unchanged, idle cycles +%llu",
           (unsigned long long)(r1.idle_cycles - r0.idle_cycles));

    /* A known burst: 5 frames for nobody (dropped) and 3 ARP requests for B
     * (answered in the same round): one busy round, 8 in, 3 out. */
    uint8_t f[64];
    int inj = 0;
    for (int i = 0; i < 5; i++)
        inj += nic_mem_inject(nb, f, (uint16_t)other_frame(f)) == 0;
    for (int i = 0; i < 3; i++)
        inj += nic_mem_inject(nb, f, (uint16_t)arp_request(f, inet_addr("198.18.0.1"))) == 0;
    r0 = rounds_of(b);
    stack_poll(b);
    r1 = rounds_of(b);
    checkf(inj == 8 && r1.busy - r0.busy == 1 && r1.rx_frames - r0.rx_frames == 8 && r1.tx_frames - r0.tx_frames == 3,
           "a burst of 8 frames (3 ARP requests): one busy round, 8 received, 3 sent (got %llu busy, %llu in, %llu out)",
           (unsigned long long)(r1.busy - r0.busy), (unsigned long long)(r1.rx_frames - r0.rx_frames),
           (unsigned long long)(r1.tx_frames - r0.tx_frames));

    /* What follows a busy round is its time, up to the next round: 3 ms of
     * "application" after it count busy; 3 ms after an empty round count
     * idle. Compared in TSC ticks read here around the spin (the rate the
     * lwIP clock measured first may be off on a loaded machine: it is only
     * shown in ms). */
    uint64_t hz = st.rounds.tsc_hz;
    uint64_t k0 = round_clock_now();
    spin_us(3000);
    uint64_t spin = round_clock_now() - k0;
    stack_poll(b); /* empty: charges the busy round's 3 ms */
    struct stack_rounds r2 = rounds_of(b);
    uint64_t dbusy = r2.busy_cycles - r1.busy_cycles;
    checkf(dbusy >= spin && dbusy < 2 * spin + 100000000u && r2.busy == r1.busy,
           "3 ms spent after a busy round are busy time: %llu ticks for a %llu-tick spin (%.3f ms)",
           (unsigned long long)dbusy, (unsigned long long)spin, (double)dbusy * 1e3 / (double)hz);
    k0 = round_clock_now();
    spin_us(3000);
    spin = round_clock_now() - k0;
    stack_poll(b);
    struct stack_rounds r3 = rounds_of(b);
    uint64_t didle = r3.idle_cycles - r2.idle_cycles;
    checkf(r3.busy_cycles == r2.busy_cycles && didle >= spin && didle < 2 * spin + 100000000u,
           "3 ms spent after an empty round are idle time: %llu ticks for a %llu-tick spin (%.3f ms)",
           (unsigned long long)didle, (unsigned long long)spin, (double)didle * 1e3 / (double)hz);

    /* The application's send between rounds: the round that sends it is
     * busy though it received nothing. */
    struct lsock *l, *c, *s;
    check(pair_connect(a, b, inet_addr("198.18.0.1"), 7000, &l, &c, &s) == 0, "a connection from A to B");
    pair_pump(a, b, 20);
    char msg[100] = "hello";
    struct iovec v = {.iov_base = msg, .iov_len = sizeof(msg)};
    stack_poll(b);
    r0 = rounds_of(b);
    ssize_t sent = s != NULL ? lsock_send(s, &v, 1, 0) : -1;
    stack_poll(b);
    r1 = rounds_of(b);
    checkf(sent == (ssize_t)sizeof(msg) && r1.busy - r0.busy == 1 && r1.rx_frames == r0.rx_frames &&
               r1.tx_frames - r0.tx_frames == 1,
           "a segment the application sent between rounds: the next round is busy, 1 frame out, none in "
           "(busy +%llu, out +%llu)",
           (unsigned long long)(r1.busy - r0.busy), (unsigned long long)(r1.tx_frames - r0.tx_frames));
    lsock_close(c);
    lsock_close(s);
    lsock_close(l);
    pair_pump(a, b, 20);

    stack_close(a);
    stack_close(b);
    lstack_conf_free(&ca);
    lstack_conf_free(&cb);
}

int main(void)
{
    test_acct();
    test_runtime();
    test_pair();
    return tap_done();
}
