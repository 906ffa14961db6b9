/*
 * lstackd - run one lstack stack with no application on top.
 *
 * Contract (stdout, line-buffered; tests parse these lines):
 *   lstackd: ready port=<dpdk name> mac=<mac> addr=<host_addr>
 *   lstackd: gateway <gateway_addr> is at <mac>       (once, when resolved)
 *   lstackd: stats k=v ...                             (on SIGUSR1)
 *   lstackd: stopped                                   (after SIGTERM/SIGINT)
 * Exit status 0 after a clean stop, 1 when the config or the bring-up fails
 * (the reason on stderr), 2 on a usage error. --version prints lstack's
 * version and exits 0.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/log.h"
#include "common/pkt_fanout.h"
#include "conf/conf.h"
#include "ctl/ctl.h"
#include "ctl/ctl_rounds.h"
#include "ctl/ctl_stack_fds.h"
#include "nic/nic.h"
#include "stack/stack.h"

/*
 * It brings a stack up from lstack.conf exactly as the preload does (same
 * library code: conf parser, EAL, port, lwIP copy, netif) and polls it, so a
 * user can check that the port, hugepages and addresses work (ARP, ping)
 * before putting an application on it. Tests drive it too.
 *
 * It serves the same control socket as the preload (lstack/ctl, stackctl):
 * the poll loop holds poll_mu around each round and hands it over at once
 * when the control thread waits for it.
 */

#define IDLE_POLLS_BEFORE_SLEEP 256
#define IDLE_SLEEP_MAX_US 1000

static volatile sig_atomic_t stop_requested;
static volatile sig_atomic_t stats_requested;

/* ---- control socket host ----
 * The loop takes poll_mu for each round; the control thread bumps
 * ctl_waiting while it waits, and the loop then yields until it got in
 * (a plain mutex would let the spinning loop take it again first). */
static pthread_mutex_t poll_mu = PTHREAD_MUTEX_INITIALIZER;
static int ctl_waiting;
static struct stack *the_stack;

static void host_lock(int index)
{
    (void)index;
    __atomic_add_fetch(&ctl_waiting, 1, __ATOMIC_SEQ_CST);
    pthread_mutex_lock(&poll_mu);
    __atomic_sub_fetch(&ctl_waiting, 1, __ATOMIC_SEQ_CST);
}

static void host_unlock(int index)
{
    (void)index;
    pthread_mutex_unlock(&poll_mu);
}

static struct stack *host_stack(int index)
{
    return index == 0 ? the_stack : NULL;
}

/* The fds the stack's start opened (stackctl's fds_stack), taken around it. */
static struct ctl_fd_census census;

static const struct ctl_host lstackd_host = {
    .stack = host_stack, .lock = host_lock, .unlock = host_unlock, .census = &census};

/* One poll round under poll_mu; let a waiting control request in after it. */
static unsigned poll_locked(struct stack *s)
{
    pthread_mutex_lock(&poll_mu);
    unsigned n = stack_poll(s);
    pthread_mutex_unlock(&poll_mu);
    while (__atomic_load_n(&ctl_waiting, __ATOMIC_SEQ_CST) != 0)
        sched_yield();
    return n;
}

static void on_stop(int sig)
{
    (void)sig;
    stop_requested = 1;
}

static void on_stats(int sig)
{
    (void)sig;
    stats_requested = 1;
}

static void usage(FILE *f)
{
    fprintf(f, "usage: lstackd [-f CONF] | lstackd --version\n"
               "  Bring one lstack stack up from CONF (default: $%s, else %s)\n"
               "  and serve ARP and ping on it until SIGTERM or SIGINT.\n"
               "  SIGUSR1 prints the counters.\n",
            LSTACK_CONF_ENV, LSTACK_CONF_DEFAULT_PATH);
}

static void fmt_mac(const uint8_t *m, char *buf, size_t len)
{
    snprintf(buf, len, "%02x:%02x:%02x:%02x:%02x:%02x", m[0], m[1], m[2], m[3], m[4], m[5]);
}

static void print_stats(const struct stack *s)
{
    struct stack_stats st;
    stack_get_stats(s, &st);
    printf("lstackd: stats");
#define STACK_STAT(name, kind, help) printf(" " #name "=%llu", (unsigned long long)st.name);
#define STACK_STAT_AT(name, field, kind, help) printf(" " #name "=%llu", (unsigned long long)st.field);
#include "stack/stack_stats.def"
#undef STACK_STAT
#undef STACK_STAT_AT
    printf("\n");
    /* The rounds as stackctl shows them (ctl_rounds.h), since the start. */
    struct ctl_rounds c = {.rounds = st.polls,
                           .busy = st.rounds.busy,
                           .rx_frames = st.rounds.rx_frames,
                           .tx_frames = st.rounds.tx_frames,
                           .busy_cycles = st.rounds.busy_cycles,
                           .idle_cycles = st.rounds.idle_cycles,
                           .tsc_hz = st.rounds.tsc_hz};
    struct ctl_rounds_view rt;
    ctl_rounds_derive(&c, 0, 1, &rt);
    printf("lstackd: runtime rounds=%lu rounds_busy=%lu rounds_rx_frames=%lu rounds_tx_frames=%lu"
           " rounds_busy_cycles=%lu rounds_idle_cycles=%lu tsc_hz=%lu rounds_per_s=%.0f busy_pct=%.2f"
           " frames_per_busy_round=%.2f cycles_per_frame=%.0f busy_us=%.0f\n",
           (unsigned long)c.rounds, (unsigned long)c.busy, (unsigned long)c.rx_frames, (unsigned long)c.tx_frames,
           (unsigned long)c.busy_cycles, (unsigned long)c.idle_cycles, (unsigned long)c.tsc_hz, rt.rounds_per_s,
           rt.busy_pct, rt.frames_per_busy_round, rt.cycles_per_frame, rt.busy_us);
}

static void install_signals(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sigemptyset(&sa.sa_mask);
    sa.sa_handler = on_stop;
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    sa.sa_handler = on_stats;
    sigaction(SIGUSR1, &sa, NULL);
}

static uint64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
    return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* Poll until asked to stop; report the gateway once it resolves. */
static void run(struct stack *s, const struct lstack_conf *conf)
{
    char gw[INET_ADDRSTRLEN];
    inet_ntop(AF_INET, &conf->gateway_addr, gw, sizeof(gw));
    int gw_known = 0;
    uint64_t next_check = 0;
    unsigned idle = 0;
    while (!stop_requested) {
        if (poll_locked(s) > 0)
            idle = 0;
        else
            idle++;
        if (stats_requested) {
            stats_requested = 0;
            pthread_mutex_lock(&poll_mu);
            print_stats(s);
            pthread_mutex_unlock(&poll_mu);
        }
        uint64_t t = now_ms();
        if (!gw_known && t >= next_check) {
            uint8_t mac[6];
            pthread_mutex_lock(&poll_mu);
            int known = stack_gateway_mac(s, mac);
            pthread_mutex_unlock(&poll_mu);
            if (known) {
                char m[24];
                fmt_mac(mac, m, sizeof(m));
                printf("lstackd: gateway %s is at %s\n", gw, m);
                gw_known = 1;
            }
            next_check = t + 1000;
        }
        if (conf->low_power_mode && idle >= IDLE_POLLS_BEFORE_SLEEP) {
            uint32_t ms = stack_next_timer_ms(s);
            usleep(ms * 1000 < IDLE_SLEEP_MAX_US ? ms * 1000 : IDLE_SLEEP_MAX_US);
        }
    }
}

int main(int argc, char **argv)
{
    const char *path = NULL;
    int opt;
    static const struct option longopts[] = {
        {"version", no_argument, NULL, 'V'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    while ((opt = getopt_long(argc, argv, "f:hV", longopts, NULL)) != -1) {
        switch (opt) {
        case 'V':
            printf("lstackd (lstack %s)\n", LSTACK_VERSION);
            return 0;
        case 'f':
            path = optarg;
            break;
        case 'h':
            usage(stdout);
            return 0;
        default:
            usage(stderr);
            return 2;
        }
    }
    if (optind != argc) {
        usage(stderr);
        return 2;
    }
    if (path == NULL)
        path = lstack_conf_path();
    setvbuf(stdout, NULL, _IOLBF, 0);

    struct lstack_conf conf;
    char err[4096];
    if (lstack_conf_load(path, &conf, err, sizeof(err)) != 0) {
        fprintf(stderr, "lstackd: invalid configuration:\n%s\n", err);
        return 1;
    }
    lstack_log_set_level(conf.log_level);

    install_signals();
    char *eal_argv[LSTACK_CONF_MAX_DPDK_ARGS + 1];
    eal_argv[0] = argv[0];
    memcpy(eal_argv + 1, conf.dpdk_argv, sizeof(char *) * (size_t)conf.dpdk_argc);
    if (ctl_census_begin(&census) != 0)
        LSTACK_WARN("cannot list lstackd's fds: stackctl's fds_stack will miss some");
    char added[128];
    pkt_fanout_nodefrag(true); /* fragments reach lwIP as they are (lstackd_sockopt.c) */
    int rc = nic_eal_init(conf.dpdk_argc + 1, eal_argv, added, sizeof(added), err, sizeof(err));
    pkt_fanout_nodefrag(false);
    if (added[0] != '\0')
        LSTACK_INFO("dpdk_args: lstack added %s (see dpdk_args in docs/config.md)", added);
    if (rc != 0) {
        LSTACK_ERR("%s", err);
        lstack_conf_free(&conf);
        return 1;
    }
    /* The stack thread runs on the configured CPU. */
    cpu_set_t cpus;
    CPU_ZERO(&cpus);
    CPU_SET(conf.cpus[0], &cpus);
    if (sched_setaffinity(0, sizeof(cpus), &cpus) != 0)
        LSTACK_WARN("cannot pin to cpu %d (num_cpus): %s", conf.cpus[0], strerror(errno));

    struct nic_params np = {
        .has_mac = conf.has_devices,
        .nb_mbufs = conf.tcp_conn_count * conf.mbuf_count_per_conn,
        .cache_size = conf.mem_cache_num,
        .priv_size = (uint16_t)stack_nic_priv_size(),
        .rx_desc = (uint16_t)conf.nic_rxqueue_size,
        .tx_desc = (uint16_t)conf.nic_txqueue_size,
        .burst = (uint16_t)conf.nic_read_number,
    };
    memcpy(np.mac, conf.devices, 6);
    struct nic *nic = nic_dpdk_open(&np, err, sizeof(err));
    struct stack *s = NULL;
    if (nic == NULL || stack_open(&s, &conf, 0, nic, err, sizeof(err)) != 0) {
        LSTACK_ERR("stack bring-up failed: %s", err);
        if (nic != NULL)
            nic->ops->close(nic);
        nic_eal_cleanup();
        lstack_conf_free(&conf);
        return 1;
    }
    uint8_t mac[6];
    char m[24], addr[INET_ADDRSTRLEN];
    stack_mac(s, mac);
    fmt_mac(mac, m, sizeof(m));
    inet_ntop(AF_INET, &conf.host_addr, addr, sizeof(addr));
    the_stack = s;
    ctl_census_end(&census); /* an empty census only makes fds_stack smaller */
    if (ctl_start(&lstackd_host, &conf, path, err, sizeof(err)) != 0)
        LSTACK_WARN("no control socket, stackctl cannot inspect lstackd: %s", err);
    printf("lstackd: ready port=%s mac=%s addr=%s\n", stack_port_name(s), m, addr);

    run(s, &conf);

    ctl_stop();
    ctl_census_free(&census);
    the_stack = NULL;
    stack_close(s);
    nic_eal_cleanup();
    lstack_conf_free(&conf);
    printf("lstackd: stopped\n");
    return 0;
}
