#!/usr/bin/env bash
# test_redis_life.sh BUILD_DIR
# Redis under lstack from start to stop:
#  - PING from the client namespace (served by the stack) and
#    `redis-cli -h 127.0.0.1 ping` inside the server namespace (the listener
#    on 0.0.0.0 is also served by the kernel), both on one redis;
#  - SIGTERM: exit status 0, no process left, no DPDK file left;
#  - SHUTDOWN, with a conf that asks for --huge-unlink (DPDK then creates hugepage
#    files and a run dir): exit status 0, none of them left afterwards;
#  - `daemonize yes` (redis forks before the stack starts): serves on the
#    stack, stops on SIGTERM to the pidfile's PID, leaves nothing behind.
# LSTACK_TEST_TARGET=kernel runs the same against a kernel redis.
set -u
# shellcheck disable=SC2034 # T_NAME is read by common.sh
T_NAME=rlife
# shellcheck source=redis_lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/redis_lib.sh"
r_init "${1:-}"

no_leftovers() {
    local what="$1" files pids
    pids=$(ip netns pids "$TB_NS_SRV" 2>/dev/null | tr '\n' ' ')
    [[ -z "$pids" ]] || r_fail "$what: processes left in $TB_NS_SRV: $pids ($(ps -o pid=,comm= -p "${pids// /,}" 2>/dev/null | tr '\n' ' '))"
    files=$(r_dpdk_files)
    if [[ -n "$files" ]]; then
        r_soft_fail "$what: DPDK files left behind: $(tr '\n' ' ' <<<"$files")"
        # remove ours (this bed's prefix only) so that the next check starts clean
        grep -F "${LSTACK_TB}x" <<<"$files" | while read -r f; do rm -rf "$f"; done
        return 1
    fi
}

# --- 1: stack and kernel halves of one listener, then SIGTERM --------------
r_dpdk_snapshot
r_start srv "$R_TARGET"
r_wait_ready srv || r_fail "redis did not come up"
t_ok "redis-server up on $R_TARGET ($R_HOST:$R_PORT)"

out=$(r_cli srv set lifekey "via $R_HOST" 2>&1)
[[ "$out" == OK ]] || r_fail "SET from the client ns answered '$out'"
out=$(r_cli_local srv ping 2>&1)
[[ "$out" == PONG ]] || r_fail "redis-cli -h 127.0.0.1 ping in the server ns answered '$out', expected PONG"
out=$(r_cli_local srv get lifekey 2>&1)
[[ "$out" == "via $R_HOST" ]] || r_fail "GET over 127.0.0.1 answered '$out', expected 'via $R_HOST'"
t_ok "redis-cli -h 127.0.0.1 ping in the server ns: PONG (same redis: sees the key set over $R_HOST)"

r_idle_start srv || r_fail "idle client"
r_stop srv term || r_fail "redis did not exit cleanly on SIGTERM"
t_ok "SIGTERM: exit status 0"
if r_idle_check; then
    t_ok "SIGTERM: a connected idle client saw its connection closed"
else
    r_soft_fail "SIGTERM: a client connected when redis exited was never told (no FIN, no RST)"
fi
no_leftovers "after SIGTERM" &&
    t_ok "after SIGTERM: no DPDK run dir or hugepage file, no process left in the server ns"

# --- 2: SHUTDOWN, with DPDK files on disk while running -------------------
fileconf="$T_WORK/lstack-files.conf"
r_conf_files "$fileconf"
R_CONF="$fileconf"
r_start srv2 "$R_TARGET"
r_wait_ready srv2 || r_fail "redis (conf with --huge-unlink) did not come up"
if r_is_lstack; then
    running_files=$(r_dpdk_files | tr '\n' ' ')
    echo "   DPDK files while running: ${running_files:-none}"
fi
out=$(r_cli srv2 ping 2>&1)
[[ "$out" == PONG ]] || r_fail "PING answered '$out'"
r_idle_start srv2 || r_fail "idle client"
if r_stop srv2 shutdown; then
    t_ok "SHUTDOWN: exit status 0, redis-cli returned (conf with --huge-unlink)"
else
    r_alive srv2 && r_fail "redis did not exit on SHUTDOWN"
    r_soft_fail "SHUTDOWN: redis did not exit cleanly, or redis-cli SHUTDOWN did not return (see above)"
fi
if r_idle_check; then
    t_ok "SHUTDOWN: a connected idle client saw its connection closed"
else
    r_soft_fail "SHUTDOWN: a client connected when redis exited was never told (no FIN, no RST)"
fi
no_leftovers "after SHUTDOWN" &&
    t_ok "after SHUTDOWN: no DPDK run dir or hugepage file, no process left in the server ns"
R_CONF="$T_WORK/lstack.conf"

# --- 3: daemonize yes ------------------------------------------------------
r_start_daemon dmn "$R_TARGET"
r_wait_ready dmn || r_fail "daemonized redis did not come up"
dpid=$(r_pid dmn)
out=$(r_cli dmn set dkey dval 2>&1)
[[ "$out" == OK ]] || r_fail "SET to the daemonized redis answered '$out'"
out=$(r_cli dmn get dkey 2>&1)
[[ "$out" == dval ]] || r_fail "GET from the daemonized redis answered '$out'"
out=$(r_cli_local dmn ping 2>&1)
[[ "$out" == PONG ]] || r_fail "127.0.0.1 PING to the daemonized redis answered '$out'"
r_bench dmn -c 20 -n 2000 -t set,get || r_fail "redis-benchmark against the daemonized redis"
t_ok "daemonize yes: daemon pid $dpid serves SET/GET and redis-benchmark on $R_HOST, PING on 127.0.0.1"
r_stop dmn term || r_fail "daemonized redis did not stop on SIGTERM"
grep -q 'ready to exit, bye bye' "$(r_dir dmn)/redis.log" ||
    r_fail "daemonized redis stopped without its clean-exit message"
[[ ! -e "$(r_dir dmn)/redis.pid" ]] || r_fail "daemonized redis left its pidfile (not a clean exit)"
no_leftovers "after stopping the daemon" &&
    t_ok "daemon stopped on SIGTERM ('bye bye', pidfile removed); nothing left behind"
r_pass
