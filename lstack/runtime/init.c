/*
 * init.c - start the stack on first use, and stop it at exit.
 *
 * The stack starts lazily, on the first AF_INET stream socket() of a bound
 * process: after `daemonize yes` has forked, so the daemon (not its parent)
 * owns DPDK. Steps: read lstack.conf, load the DPDK side, EAL (which restores
 * our CPU affinity and signal mask), port, stack. A failure says why on
 * stderr and syslog; then the init_fail policy decides: "kernel" keeps the
 * process on the kernel stack (loudly, once), "exit" stops it with that
 * message (the user asked for it). The policy is $LSTACK_INIT_FAIL when set
 * (a bad value is a configuration error of its own), else the file's
 * init_fail, also when the file itself is the failure: a file with errors
 * still gives the init_fail of a line that parsed (lstack_conf_load); one
 * that cannot be read gives the default, "kernel".
 *
 * Rejected: a library constructor (Gazelle's way: DPDK would be shared with
 * every fork, and `daemonize yes` would break).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>

#include "common/log.h"
#include "common/pkt_fanout.h"
#include "conf/conf.h"
#include "ctl/ctl_rt.h"
#include "event/event.h"
#include "nic/nic.h"
#include "posix/sock_fd.h"
#include "runtime/app_affinity.h"
#include "runtime/runtime_priv.h"
#include "stack/stack.h"

/* How long the stack keeps running at exit for the last FINs to leave. */
#define EXIT_LINGER_MS 20

static pthread_mutex_t init_mu = PTHREAD_MUTEX_INITIALIZER;
static struct dpdk_calls dpdk;

/* Registered with atexit once the stack runs: close the stack and release
 * EAL so no DPDK run file is left. Not in a forked child. */
static void rt_shutdown(void)
{
    if (rt.child || rt_state_v != RT_READY)
        return;
    ctl_rt_stop(); /* issue 4: no control request may run while the stack goes away */
    sockfd_close_all();
    /* The owner stops (run-to-wakeup: the stack thread is joined); this
     * thread owns the stacks from here. */
    for (int i = 0; i < rt.nstacks; i++)
        rt.stacks[i].mode->stop(&rt.stacks[i]);
    rt_affinity_stop();
    /* Let the FINs and RSTs leave and the peers' answers come in. */
    uint64_t until = rt_now_ms() + EXIT_LINGER_MS;
    while (rt_now_ms() < until) {
        for (int i = 0; i < rt.nstacks; i++) {
            sctx_lock(&rt.stacks[i]);
            sctx_poll(&rt.stacks[i]);
            sctx_unlock(&rt.stacks[i]);
        }
    }
    rt_lock();
    rt_state_v = RT_PASSIVE;
    rt.nic = NULL;
    for (int i = 0; i < rt.nstacks; i++) {
        stack_close(rt.stacks[i].stack);
        rt.stacks[i].stack = NULL;
    }
    rt.nstacks = 0;
    rt_unlock();
    dpdk.eal_exit();
}

/* use_ltran = 1: the port is ltran's; EAL starts as its secondary. */
static struct nic *open_ltran(const struct lstack_conf *c, char **argv, char *err, size_t errlen)
{
    struct nic_ltran_params lp = {
        .socket_path = c->ltran_socket,
        .ip = c->host_addr,
        .argc = c->dpdk_argc + 1,
        .argv = argv,
        .priv_size = (uint16_t)stack_nic_priv_size(),
        .burst = (uint16_t)c->nic_read_number,
    };
    char added[160];
    struct nic *nic = dpdk.ltran_open(&lp, added, sizeof(added), err, errlen);
    if (added[0] != '\0')
        LSTACK_INFO("dpdk_args: lstack added %s (use_ltran = 1)", added);
    return nic;
}

/* use_ltran = 0: this process drives the port. */
static struct nic *open_port(const struct lstack_conf *c, char **argv, char *err, size_t errlen)
{
    char added[128];
    pkt_fanout_nodefrag(true); /* fragments reach lwIP as they are (common/pkt_fanout.h) */
    int rc = dpdk.eal_init(c->dpdk_argc + 1, argv, added, sizeof(added), err, errlen);
    pkt_fanout_nodefrag(false);
    if (added[0] != '\0')
        LSTACK_INFO("dpdk_args: lstack added %s (see dpdk_args in docs/config.md)", added);
    if (rc != 0)
        return NULL;
    struct nic_params np = {
        .has_mac = c->has_devices,
        .nb_mbufs = c->tcp_conn_count * c->mbuf_count_per_conn,
        .cache_size = c->mem_cache_num,
        .priv_size = (uint16_t)stack_nic_priv_size(),
        .rx_desc = (uint16_t)c->nic_rxqueue_size,
        .tx_desc = (uint16_t)c->nic_txqueue_size,
        .burst = (uint16_t)c->nic_read_number,
    };
    memcpy(np.mac, c->devices, 6);
    return dpdk.open(&np, err, errlen);
}

static int start(const struct lstack_conf *c, char *err, size_t errlen)
{
    if (dpdk_load(&dpdk, err, errlen) != 0)
        return -1;
    struct rt_affinity_plan aff; /* the affinity keys, checked before anything opens */
    if (rt_affinity_plan(c, dpdk.app_cpus, &aff, err, errlen) != 0)
        return -1;
    char *argv[LSTACK_CONF_MAX_DPDK_ARGS + 1];
    argv[0] = "lstack";
    memcpy(argv + 1, c->dpdk_argv, sizeof(char *) * (size_t)c->dpdk_argc);
    struct nic *nic = c->use_ltran ? open_ltran(c, argv, err, errlen) : open_port(c, argv, err, errlen);
    if (nic == NULL) {
        dpdk.eal_cleanup();
        return -1;
    }
    struct stack_ctx *sc = &rt.stacks[0];
    sc->index = 0;
    sc->cpu = c->num_cpus > 0 ? c->cpus[0] : -1;
    sc->queue = 0; /* one queue: several are issue 12's flow steering */
    sc->mode = c->stack_thread_mode == LSTACK_MODE_RUN_TO_WAKEUP ? &stack_mode_rtw : &stack_mode_rtc;
    if (stack_open(&sc->stack, c, 0, nic, err, errlen) != 0) {
        nic->ops->close(nic);
        dpdk.eal_cleanup();
        return -1;
    }
    ev_use(sc->mode->wait); /* how application threads wait, before any can */
    int started = sc->mode->start(sc, c, err, errlen);
    if (started == 0 && rt_affinity_start(&aff, err, errlen) != 0) {
        sc->mode->stop(sc);
        started = -1;
    }
    if (started != 0) {
        stack_close(sc->stack);
        sc->stack = NULL;
        dpdk.eal_cleanup();
        return -1;
    }
    rt.nstacks = 1;
    rt.nic = nic;
    rt.host_addr = c->host_addr;
    rt.low_power = c->low_power_mode;
    return 0;
}

bool rt_ensure(void)
{
    int st = rt_state_v;
    if (st == RT_READY)
        return true;
    if (st != RT_UNINIT)
        return false;
    pthread_mutex_lock(&init_mu);
    if (rt_state_v != RT_UNINIT) {
        bool ready = rt_state_v == RT_READY;
        pthread_mutex_unlock(&init_mu);
        return ready;
    }
    rt_state_v = RT_INIT;
    const char *path = lstack_conf_path();
    struct lstack_conf c;
    char err[4096], env_err[512];
    enum lstack_init_fail policy;
    bool from_env;
    int rc = lstack_conf_load(path, &c, err, sizeof(err));
    if (rc != 0)
        LSTACK_ERR("invalid configuration %s:\n%s", path, err);
    if (lstack_init_fail_resolve(getenv(LSTACK_INIT_FAIL_ENV), c.init_fail, &policy, &from_env,
                                 env_err, sizeof(env_err)) != 0) {
        LSTACK_ERR("invalid environment: %s", env_err);
        if (rc == 0)
            lstack_conf_free(&c);
        rc = -1;
    }
    if (rc == 0) {
        c.init_fail = policy; /* what stackctl show config reports */
        lstack_log_set_level(c.log_level);
        ctl_rt_census_begin(); /* which fds the start opens: stackctl's fds_stack */
        rc = start(&c, err, sizeof(err));
        if (rc != 0) {
            ctl_rt_census_drop();
            LSTACK_ERR("stack start failed: %s", err);
        } else {
            ctl_rt_start(&c, path); /* issue 4: the control socket (stackctl); serves stacks once RT_READY */
        }
        lstack_conf_free(&c);
    }
    if (rc != 0) {
        rt_state_v = RT_PASSIVE;
        pthread_mutex_unlock(&init_mu);
        if (policy == LSTACK_INIT_FAIL_EXIT) {
            if (from_env)
                LSTACK_ERR("stopping the process (%s=exit)", LSTACK_INIT_FAIL_ENV);
            else
                LSTACK_ERR("stopping the process (init_fail = \"exit\" in %s)", path);
            exit(EXIT_FAILURE);
        }
        LSTACK_WARN("acceleration is OFF: this process runs on the kernel TCP/IP stack "
                    "(init_fail = \"kernel\"%s; %s=exit stops the process instead)",
                    from_env ? " from " LSTACK_INIT_FAIL_ENV : "", LSTACK_INIT_FAIL_ENV);
        return false;
    }
    atexit(rt_shutdown);
    rt_state_v = RT_READY;
    pthread_mutex_unlock(&init_mu);
    LSTACK_INFO("stack up on %s (%s)", stack_port_name(rt.stacks[0].stack), rt.stacks[0].mode->name);
    return true;
}
