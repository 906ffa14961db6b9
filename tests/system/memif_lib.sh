# shellcheck shell=bash
# Two lstack processes on one host joined by DPDK's net_memif (sourced,
# never run): shared by test_redis_memif.sh, scripts/bench.sh --both-ends
# and scripts/demo.sh.

#   network namespace M_NS (lo only: both processes' kernel listeners live
#   there, nothing else sees them)
#   server: role=server, 198.19.0.2, MAC 02:fe:00:00:00:02, CPU M_SRV_CPU
#   client: role=client, 198.19.0.1, MAC 02:fe:00:00:00:01, CPU M_CLI_CPU
#   the memif control socket: the abstract name "M_DIR/memif.sock" (a name
#   of the caller's own, so that two beds never meet; abstract, DPDK's
#   default, because a socket file outlives a SIGKILLed server and DPDK
#   22.11's memif server then cannot bind it again: "Address already in use")
#
# Each process has its own lstack.conf and EAL: --in-memory (lstack adds it:
# no shared files, hugepage memory in memfds), its own --file-prefix (EAL's
# run-time directory), its own lcore. Nothing else is needed per pair: memif
# regions are memfds the client creates and passes over the socket.
# Either may start first: a client keeps trying its server (lstack's memif
# link watch, lstack/nic/memif_port.c) and a server keeps listening.
#
# Usage:
#   source memif_lib.sh
#   m_init NAME DIR LIB [SRV_CPU CLI_CPU]   # NAME: [a-z0-9]{1,12}; LIB: liblstack.so
#   m_conf server "tcp_conn_count = 256;"  # optional extra lines, per side
#   m_run server redis-server ARGS...       # argv under lstack, role=server, in the ns
#   m_run client redis-benchmark ARGS...    # the same, role=client
#   m_kernel CMD...                         # a plain command in the ns (no preload)
#   m_down                                   # remove the namespace

M_NS=""
M_DIR=""
M_LIB=""
M_PRELOAD=""
M_SRV_CPU=1
M_CLI_CPU=0
M_IP_SRV=198.19.0.2
M_IP_CLI=198.19.0.1
M_NAME=""
declare -A M_CONF=()

# m_init NAME DIR LIB [SRV_CPU CLI_CPU]
m_init() {
    M_NAME="$1" M_DIR="$2" M_LIB="$3"
    M_SRV_CPU="${4:-1}" M_CLI_CPU="${5:-0}"
    [[ "$M_NAME" =~ ^[a-z0-9]{1,12}$ ]] || { echo "m_init: NAME '$M_NAME': 1..12 of [a-z0-9]"; return 1; }
    M_NS="${M_NAME}-mif"
    M_PRELOAD=$(preload_list "$M_LIB")
    ip netns del "$M_NS" 2>/dev/null || true
    ip netns add "$M_NS" || return 1
    ip -n "$M_NS" link set lo up || return 1
    M_CONF[server]="$M_DIR/lstack-memif-server.conf"
    M_CONF[client]="$M_DIR/lstack-memif-client.conf"
    m_conf server && m_conf client
}

# m_conf server|client [LINE...] : (re)write that side's lstack.conf.
m_conf() {
    local side="$1" role ip gw mac cpu
    shift
    if [[ "$side" == server ]]; then
        role=server ip=$M_IP_SRV gw=$M_IP_CLI mac=02:fe:00:00:00:02 cpu=$M_SRV_CPU
    else
        role=client ip=$M_IP_CLI gw=$M_IP_SRV mac=02:fe:00:00:00:01 cpu=$M_CLI_CPU
    fi
    {
        echo "# lstack.conf for the memif $side of '$M_NAME' (tests/system/memif_lib.sh)"
        printf 'dpdk_args = [ "--in-memory", "--no-pci", "--file-prefix", "%s", "-l", "%s", "--vdev=net_memif0,role=%s,id=0,socket=%s,mac=%s" ];\n' \
            "${M_NAME}${side:0:1}" "$cpu" "$role" "$M_DIR/memif.sock" "$mac"
        echo "host_addr = \"$ip\";"
        echo "mask_addr = \"255.255.255.0\";"
        echo "gateway_addr = \"$gw\";"
        echo "num_cpus = \"$cpu\";"
        echo 'init_fail = "exit";'
        local l has_conn=0
        for l in "$@"; do [[ "$l" == tcp_conn_count* ]] && has_conn=1; done
        ((has_conn)) || echo "tcp_conn_count = 256;"
        # LSTACK_TEST_STACK_MODE=run-to-wakeup runs both sides in that mode.
        [[ -z "${LSTACK_TEST_STACK_MODE:-}" ]] || echo "stack_thread_mode = \"$LSTACK_TEST_STACK_MODE\";"
        printf '%s\n' "$@"
    } >"${M_CONF[$side]}"
}

# m_run server|client CMD ARGS... : CMD under lstack (bound by its basename,
# or by $M_BIND when CMD is a wrapper such as timeout), that side's conf, pinned to that side's CPU, in the namespace. Execs (use
# it in a subshell or in the background; `ip netns exec`, `taskset` and
# `env` exec too, so $! is CMD's own PID).
m_run() {
    local side="$1" cpu
    shift
    if [[ "$side" == server ]]; then cpu=$M_SRV_CPU; else cpu=$M_CLI_CPU; fi
    exec taskset -c "$cpu" ip netns exec "$M_NS" env LD_PRELOAD="$M_PRELOAD" \
        GAZELLE_BIND_PROCNAME="${M_BIND:-$(basename "$1")}" LSTACK_CONF_PATH="${M_CONF[$side]}" "$@"
}

# m_kernel CMD ARGS... : CMD in the namespace, on the kernel.
m_kernel() {
    ip netns exec "$M_NS" "$@"
}

# m_down : remove the namespace, the socket file, and EAL's run-time
# directories of both sides' file prefixes (a side killed with SIGKILL
# cannot remove its own).
m_down() {
    [[ -n "$M_NS" ]] && ip netns del "$M_NS" 2>/dev/null
    rm -f "$M_DIR/memif.sock"
    [[ -n "${M_NAME:-}" ]] && rm -rf "/var/run/dpdk/${M_NAME}s" "/var/run/dpdk/${M_NAME}c"
    return 0
}
