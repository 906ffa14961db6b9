/*
 * init.c - start the stack on first use (the first AF_INET stream socket()
 * of a bound process, after `daemonize yes` has forked), and stop it at
 * exit. A failure says why and follows init_fail: "kernel" carries on on
 * the kernel stack, "exit" stops the process. Called by the runtime.
 * Design: docs/design.md#lstack-starts-at-the-first-call-not-in-a-constructor
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>

#include "common/log.h"
#include "common/pkt_fanout.h"
#include "conf/conf.h"
#include "nic/nic.h"
#include "nic/nic_queues.h"
#include "runtime/app_affinity.h"
#include "runtime/runtime_priv.h"
#include "stack/stack.h"

/*
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
 */

/* How long the stack keeps running at exit for the last FINs to leave. */
#define EXIT_LINGER_MS 20

static pthread_mutex_t init_mu = PTHREAD_MUTEX_INITIALIZER;
static struct dpdk_calls dpdk;
/* How the port spreads flows over the group's queues (open_queues; 1.1
 * KiB: not on the stack of the first socket()). The group keeps a pointer. */
static struct nic_steer port_steer;

/* Registered with atexit once the stack runs: close the stack and release
 * EAL so no DPDK run file is left. Not in a forked child. */
static void rt_shutdown(void)
{
    if (rt.child || rt_state_v != RT_READY)
        return;
    /* The registered hooks: the control socket stops (no request may run
     * while the stacks go away), the sockets still open close. */
    for (int i = rt_nhooks - 1; i >= 0; i--)
        if (rt_hooks[i]->stopping != NULL)
            rt_hooks[i]->stopping();
    /* The owners stop (run-to-wakeup: the stack threads are joined); this
     * thread owns the stacks from here. */
    rt_stacks_stop();
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
    rt_state_v = RT_PASSIVE;
    rt_stacks_close();
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

/* Several stacks: the port with one queue pair per stack, each queue's pool
 * on its stack's CPU's node. Says how the port spreads flows. */
static int open_queues(const struct lstack_conf *c, const struct nic_params *np, unsigned nq, struct nic **out,
                       char *err, size_t errlen)
{
    struct nic_queues_params qp = {.port = *np, .nb_queues = nq};
    for (unsigned i = 0; i < nq; i++)
        qp.cpu[i] = c->cpus[i];
    if (dpdk.open_queues(&qp, out, &port_steer, err, errlen) != 0)
        return -1;
    LSTACK_INFO("port opened with %u queue pairs, one per stack; flows reach them by %s", nq,
                port_steer.kind == NIC_STEER_TOEPLITZ ? "RSS (Toeplitz: outgoing connections get ports whose "
                                                        "replies reach their stack)"
                                                 : "the port's own hash (frames on another stack's queue are "
                                                   "handed over)");
    return 0;
}

/* Each queue's pool (one per stack, on its CPU's node): the process's
 * budget (tcp_conn_count x mbuf_count_per_conn); with several stacks, each
 * its share of it, and at least what its rings and caches hold, so that
 * its queue can fill. */
static uint32_t pool_share(const struct lstack_conf *c, unsigned nq)
{
    uint64_t total = (uint64_t)c->tcp_conn_count * c->mbuf_count_per_conn;
    if (nq <= 1)
        return (uint32_t)total;
    uint64_t share = (total + nq - 1) / nq;
    uint64_t floor = (uint64_t)c->nic_rxqueue_size + c->nic_txqueue_size + 2u * c->nic_read_number +
                     2u * c->mem_cache_num;
    return (uint32_t)(share > floor ? share : floor);
}

/* use_ltran = 0: this process drives the port: one queue pair per stack
 * (nq of them) into out[0..nq). Returns 0 or -1 (err). */
static int open_port(const struct lstack_conf *c, char **argv, unsigned nq, struct nic **out, char *err,
                     size_t errlen)
{
    char added[128];
    pkt_fanout_nodefrag(true); /* fragments reach lwIP as they are (common/pkt_fanout.h) */
    int rc = dpdk.eal_init(c->dpdk_argc + 1, argv, added, sizeof(added), err, errlen);
    pkt_fanout_nodefrag(false);
    if (added[0] != '\0')
        LSTACK_INFO("dpdk_args: lstack added %s (see dpdk_args in docs/config.md)", added);
    if (rc != 0)
        return -1;
    struct nic_params np = {
        .has_mac = c->has_devices,
        .nb_mbufs = pool_share(c, nq),
        .cache_size = c->mem_cache_num,
        .priv_size = (uint16_t)stack_nic_priv_size(),
        .rx_desc = (uint16_t)c->nic_rxqueue_size,
        .tx_desc = (uint16_t)c->nic_txqueue_size,
        .burst = (uint16_t)c->nic_read_number,
    };
    memcpy(np.mac, c->devices, 6);
    if (nq == 1) {
        out[0] = dpdk.open(&np, err, errlen);
        return out[0] != NULL ? 0 : -1;
    }
    return open_queues(c, &np, nq, out, err, errlen);
}

/* How many stacks the configuration asks for: one per num_cpus CPU on a
 * port this process drives; one on ltran's, where several CPUs are refused
 * (it would silently run one). Returns the count, or -1 with a reason in
 * err. */
static int stacks_wanted(const struct lstack_conf *c, char *err, size_t errlen)
{
    int n = c->num_cpus > 0 ? c->num_cpus : 1;
    if (n == 1)
        return 1;
    if (c->use_ltran) {
        snprintf(err, errlen,
                 "num_cpus lists %d CPUs, but use_ltran = 1 gives this process one queue of ltran's port: "
                 "list one CPU",
                 n);
        return -1;
    }
    return n;
}

static int start(const struct lstack_conf *c, char *err, size_t errlen)
{
    int n = stacks_wanted(c, err, errlen);
    if (n < 0)
        return -1;
    if (dpdk_load(&dpdk, err, errlen) != 0)
        return -1;
    struct rt_affinity_plan aff; /* the affinity keys, checked before anything opens */
    if (rt_affinity_plan(c, dpdk.app_cpus, &aff, err, errlen) != 0)
        return -1;
    char *argv[LSTACK_CONF_MAX_DPDK_ARGS + 1];
    argv[0] = "lstack";
    memcpy(argv + 1, c->dpdk_argv, sizeof(char *) * (size_t)c->dpdk_argc);
    struct nic *q[LSTACK_CONF_STACKS_SUPPORTED] = {NULL};
    if (c->use_ltran) {
        q[0] = open_ltran(c, argv, err, errlen);
        if (q[0] == NULL) {
            dpdk.eal_cleanup();
            return -1;
        }
    } else if (open_port(c, argv, (unsigned)n, q, err, errlen) != 0) {
        dpdk.eal_cleanup();
        return -1;
    }
    if (rt_stacks_open(c, q, n, dpdk.handover, &port_steer, err, errlen) != 0) {
        dpdk.eal_cleanup();
        return -1;
    }
    if (rt_stacks_start(c, err, errlen) != 0 || rt_affinity_start(&aff, err, errlen) != 0) {
        rt_stacks_stop();
        rt_stacks_close();
        dpdk.eal_cleanup();
        return -1;
    }
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
        for (int i = 0; i < rt_nhooks; i++)
            if (rt_hooks[i]->starting != NULL)
                rt_hooks[i]->starting(); /* the control socket notes the fds the start opens */
        rc = start(&c, err, sizeof(err));
        for (int i = 0; i < rt_nhooks; i++) {
            if (rc != 0 && rt_hooks[i]->start_failed != NULL)
                rt_hooks[i]->start_failed();
            else if (rc == 0 && rt_hooks[i]->started != NULL)
                rt_hooks[i]->started(&c, path); /* the control socket: serves once RT_READY */
        }
        if (rc != 0)
            LSTACK_ERR("stack start failed: %s", err);
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
    if (rt.nstacks == 1)
        LSTACK_INFO("stack up on %s (%s)", stack_port_name(rt.stacks[0].stack), rt.stacks[0].mode->name);
    else
        LSTACK_INFO("stack up on %s (%s); %d stacks, one per queue and CPU", stack_port_name(rt.stacks[0].stack),
                    rt.stacks[0].mode->name, rt.nstacks);
    return true;
}
