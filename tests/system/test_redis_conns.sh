#!/usr/bin/env bash
# test_redis_conns.sh BUILD_DIR
# Connection limits:
#  1. tcp_conn_count = 64 (the listener counts): 80 connections opened one
#     after the other, each sending PING; at most 63 work, the others fail
#     cleanly (refused, reset or closed; none hangs), the working ones keep
#     working, and after closing 10 of them new connections work again.
#     (Kernel target: redis's maxclients 63 stands in for the stack's limit;
#      there the extra connections get an error reply and are closed.)
#  2. 10,000 concurrent clients: redis-benchmark -c 10000 -n 20000 -t ping
#     with maxclients 10100, tcp_conn_count 10200 and mbuf_count_per_conn 8
#     (so that the pool fits in the hugepages), fd limits raised.
# LSTACK_TEST_TARGET=kernel runs the same against a kernel redis.
set -u
# shellcheck disable=SC2034 # T_NAME is read by common.sh
T_NAME=rconns
# shellcheck source=redis_lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/redis_lib.sh"
r_init "${1:-}" python3

# --- 1: tcp_conn_count enforced -------------------------------------------
N=64
r_conf "$R_CONF" "tcp_conn_count = $N;" 'mbuf_count_per_conn = 32;'
if r_is_lstack; then
    r_start lim lstack
else
    r_start lim kernel --maxclients $((N - 1))
fi
r_wait_ready lim || r_fail "redis (tcp_conn_count = $N) did not come up"
t_ok "redis-server up on $R_TARGET with tcp_conn_count = $N"

out="$T_WORK/conns.log"
rc=0
ip netns exec "$TB_NS_CLI" timeout 300 python3 "$R_PY" conns "$(r_host lim)" "$(r_port lim)" \
    --open $((N + 16)) --limit $((N - 1)) --slack 2 --close 10 --timeout 5 --recover 15 >"$out" 2>&1 || rc=$?
sed 's/^/   /' "$out"
((rc == 0)) || r_fail "tcp_conn_count = $N not enforced cleanly (see above)"
r_alive lim || r_fail "redis died"
t_ok "$((N + 16)) connections with tcp_conn_count = $N: at most $((N - 1)) work, the rest fail cleanly, the listener recovers"
out=$(r_cli lim ping 2>&1)
[[ "$out" == PONG ]] || r_fail "PING after the limit test answered '$out'"
r_stop lim term || r_fail "redis did not exit cleanly on SIGTERM"
t_ok "redis exited 0 on SIGTERM"

# --- 2: 10,000 concurrent clients -------------------------------------------
C=10000
bigconf="$T_WORK/lstack-10k.conf"
r_conf "$bigconf" 'tcp_conn_count = 10200;' 'mbuf_count_per_conn = 8;'
R_CONF="$bigconf"
R_ULIMIT_N=20000 r_start big "$R_TARGET" --maxclients 10100 --tcp-backlog 4096
r_wait_ready big 90 || r_fail "redis (tcp_conn_count = 10200) did not come up"
[[ "$(r_cli big config get maxclients | tail -n 1)" == 10100 ]] ||
    r_fail "maxclients is $(r_cli big config get maxclients | tail -n 1), expected 10100 (fd limit too low?)"
idle_free=$(r_stat big mbuf_free) || idle_free=""
# redis-benchmark's own fd limit: raise it in the subshell that runs it.
ulimit -n 20000 || r_fail "cannot raise the fd limit to 20000"
R_BENCH_TIMEOUT=300 r_bench big -c $C -n 20000 -t ping || r_fail "redis-benchmark -c $C -n 20000 -t ping"
t_ok "redis-benchmark -c $C -n 20000 -t ping: exit 0, no error"
n=""
for ((i = 0; i < 100; i++)); do
    n=$(r_info big connected_clients)
    [[ "$n" == 1 ]] && break
    sleep 0.2
done
[[ "$n" == 1 ]] || r_fail "connected_clients is '$n' 20 s after the $C-client run, expected 1"
t_ok "connected_clients back to 1 after $C clients"
if [[ -n "$idle_free" ]]; then
    for ((i = 0; i < 50; i++)); do
        free=$(r_stat big mbuf_free)
        socks=$(r_stat big sockets)
        [[ "$socks" == 1 ]] && ((free >= idle_free)) && break
        sleep 0.2
    done
    [[ "$socks" == 1 ]] || r_fail "stack sockets $socks after the $C-client run, expected 1 (the listener)"
    ((free >= idle_free)) || r_fail "mbuf_free $free after the $C-client run, $idle_free before ($((idle_free - free)) not returned)"
    t_ok "stack back to idle: sockets 1, mbuf_free $free (before: $idle_free) (stackctl)"
fi
r_stop big term || r_fail "redis did not exit cleanly on SIGTERM"
t_ok "redis exited 0 on SIGTERM"
t_pass
