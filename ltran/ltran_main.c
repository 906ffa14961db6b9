/*
 * ltran_main.c - the ltran daemon: one DPDK port shared by several lstack
 * processes (docs/ltran.md).
 *
 *   ltran [-c FILE]     run (FILE: $LTRAN_CONF_PATH, else /etc/gazelle/ltran.conf)
 *   ltran --check -c F  parse the configuration, report, exit
 *   ltran --keys        print the ltran.conf keys
 *   ltran --version     print lstack's version
 *
 * Owns start-up order (conf, EAL, port and pool, dispatch table, socket),
 * the loop (forwarding round; the socket every millisecond by the TSC; the
 * idle sleep of low_power_mode, ltran_wake.c) and shut-down on SIGINT/SIGTERM (clients
 * see the socket close; DPDK's files are removed).
 * Design: docs/design.md#ltran-is-one-thread
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <rte_cycles.h>
#include <rte_ethdev.h>
#include <rte_mbuf.h>

#include "ltran.h"
#include "nic/nic_port.h"

static volatile sig_atomic_t stop_flag;

static void on_signal(int sig)
{
    (void)sig;
    stop_flag = 1;
}

static int usage(void)
{
    fprintf(stderr, "usage: ltran [-c FILE] [--check] | ltran --keys | ltran --version\n");
    return 2;
}

static int open_port(struct ltran *l, char *err, size_t errlen)
{
    struct nic_params np = {
        .has_mac = l->conf.has_mac,
        .nb_mbufs = (uint32_t)l->conf.nb_mbufs,
        .cache_size = 0, /* shared by processes whose lcore ids overlap: no per-lcore cache */
        .priv_size = LTRAN_PRIV_SIZE,
        .rx_desc = (uint16_t)l->conf.rx_desc,
        .tx_desc = (uint16_t)l->conf.tx_desc,
        .burst = LTRAN_BURST,
        .keep_pool = true, /* clients that have not seen ltran go yet still use it (close_port) */
    };
    memcpy(np.mac, l->conf.mac, 6);
    l->nic = nic_dpdk_open(&np, err, errlen);
    if (l->nic == NULL)
        return -1;
    struct nic_port_info pi;
    nic_dpdk_port_info(l->nic, &pi);
    l->port = pi.port;
    l->pool = pi.pool;
    l->data_room = pi.data_room;
    memcpy(l->mac, pi.mac, 6);
    struct nic_caps caps;
    l->nic->ops->caps(l->nic, &caps);
    l->mtu = caps.mtu;
    return 0;
}

/* Stop and close the port through its ops, but leave the pool (opened
 * with keep_pool): clients that have not seen ltran go yet still allocate
 * from it and free into it (their mappings outlive ltran; freeing it would
 * let EAL reuse its memory under them). */
static void close_port(struct ltran *l)
{
    l->nic->ops->close(l->nic);
    l->nic = NULL;
}

int main(int argc, char **argv)
{
    const char *path = getenv("LTRAN_CONF_PATH");
    if (path == NULL || path[0] == '\0')
        path = LTRAN_DEFAULT_CONF;
    bool check = false;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--keys") == 0) {
            ltran_conf_print_keys(stdout);
            return 0;
        } else if (strcmp(argv[i], "--version") == 0 || strcmp(argv[i], "-V") == 0) {
            printf("ltran (lstack %s), protocol version %d\n", LSTACK_VERSION, LTRAN_VERSION);
            return 0;
        } else if (strcmp(argv[i], "--check") == 0) {
            check = true;
        } else if ((strcmp(argv[i], "-c") == 0 || strcmp(argv[i], "--config") == 0) && i + 1 < argc) {
            path = argv[++i];
        } else {
            return usage();
        }
    }
    static struct ltran l;
    char err[8192];
    if (ltran_conf_load(path, &l.conf, err, sizeof(err)) != 0) {
        fprintf(stderr, "ltran: invalid configuration %s:\n%s", path, err);
        return 1;
    }
    if (check) {
        printf("%s: ok\n", path);
        return 0;
    }
    l.listen_fd = -1;
    l.stop = &stop_flag;
    struct sigaction sa = {.sa_handler = on_signal};
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);
    if (ldisp_init(&l.disp, (uint32_t)l.conf.max_conns) != 0) {
        fprintf(stderr, "ltran: out of memory for %d connections\n", l.conf.max_conns);
        return 1;
    }
    if (ltran_eal_init(&l.conf, err, sizeof(err)) != 0) {
        fprintf(stderr, "ltran: %s\n", err);
        return 1;
    }
    int rc = 1;
    if (open_port(&l, err, sizeof(err)) != 0) {
        fprintf(stderr, "ltran: %s\n", err);
        goto out_eal;
    }
    if (ltran_wake_init(&l, err, sizeof(err)) != 0) {
        fprintf(stderr, "ltran: %s\n", err);
        goto out_port;
    }
    if (ltran_ctl_open(&l, err, sizeof(err)) != 0) {
        fprintf(stderr, "ltran: control socket: %s\n", err);
        goto out_port;
    }
    fprintf(stderr, "ltran: up on %s (%02x:%02x:%02x:%02x:%02x:%02x), %d mbufs, socket %s, file prefix %s\n",
            l.nic->ops->name(l.nic), l.mac[0], l.mac[1], l.mac[2], l.mac[3], l.mac[4], l.mac[5],
            l.conf.nb_mbufs, l.conf.socket_path, l.conf.file_prefix);
    l.ctl_cycles = rte_get_tsc_hz() / 1000;
    l.next_ctl = 0;
    while (!stop_flag) {
        unsigned moved = ltran_fwd_round(&l);
        uint64_t now = rte_rdtsc();
        if (now >= l.next_ctl) {
            ltran_ctl_poll(&l);
            l.next_ctl = now + l.ctl_cycles;
        }
        ltran_idle(&l, moved, now);
    }
    double per = l.st.fwd_frames ? 1e9 / (double)rte_get_tsc_hz() / (double)l.st.fwd_frames : 0.0;
    fprintf(stderr, "ltran: stopping: %llu frames forwarded, %.1f ns busy per frame, of which %.1f ns in the "
                    "port's bursts: %.1f ns ltran's own (wake-ups of sleeping clients apart)\n",
            (unsigned long long)l.st.fwd_frames, (double)l.st.busy_cycles * per, (double)l.st.io_cycles * per,
            (double)(l.st.busy_cycles - l.st.io_cycles - l.st.wake_cycles) * per);
    rc = 0;
    ltran_ctl_close(&l);
out_port:
    close_port(&l);
out_eal:
    ltran_eal_cleanup(l.conf.file_prefix);
    ldisp_free(&l.disp);
    return rc;
}
