#!/usr/bin/env bash
# test_redis_xdp_pool.sh BUILD_DIR
# net_af_xdp registers the stack's mbuf pool with the kernel as an AF_XDP
# umem (lstack/nic/pool.c). When the pool's last mbufs lay past the umem's
# end, every frame sent from one vanished (the kernel skips it as an invalid
# descriptor) and the connection stalled for up to a minute once the pool's
# ring handed a run of them out (seen with 64 KiB SETs after ~1,600
# requests on the benchmark's 76,800-mbuf pool). This test cycles that pool
# with one client's 64 KiB SETs and checks:
#  1. every SET answers within MAX_MS (a lost reply costs lwIP's RTO: >= 1 s);
#  2. every frame the stack sent reached the client's veth (the stack's
#     tx_packets equals the veth's rx_packets: nothing else sends there);
#  3. the run ends within its time bound.
# Runs on net_af_xdp only (it is about that PMD); skips where it cannot.
set -u
# shellcheck disable=SC2034 # T_NAME is read by common.sh
T_NAME=rxpool
export TB_PMD=af_xdp
# shellcheck source=redis_lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/redis_lib.sh"
r_init "${1:-}" python3
r_is_lstack || tb_skip "about lstack's pool on net_af_xdp (LSTACK_TEST_TARGET=$R_TARGET)"

REQUESTS=2500
MAX_MS=900
# The benchmark's pool: 1200 x 64 = 76,800 mbufs (scripts/bench.sh).
r_conf "$R_CONF" 'tcp_conn_count = 1200;' 'mbuf_count_per_conn = 64;'
r_start srv "$R_TARGET"
r_wait_ready srv || r_fail "redis did not come up"
t_ok "redis-server up on lstack over net_af_xdp ($R_HOST:$R_PORT)"

out="$T_WORK/bench.csv"
rc=0
ip netns exec "$TB_NS_CLI" timeout 120 redis-benchmark -h "$R_HOST" -p "$R_PORT" -c 1 -t set -d 65536 \
    -n "$REQUESTS" --csv >"$out" 2>&1 || rc=$?
sed 's/^/   /' "$out"
((rc == 0)) || r_fail "redis-benchmark did not finish $REQUESTS SETs of 64 KiB within 120 s (exit $rc)"
t_ok "$REQUESTS SETs of 64 KiB done"
max=$(awk -F'"' '$2 == "SET" {print $16}' "$out")
[[ -n "$max" ]] || r_fail "no SET line in redis-benchmark's output"
awk -v m="$max" -v lim="$MAX_MS" 'BEGIN { exit !(m + 0 < lim) }' ||
    r_fail "slowest SET took $max ms (bound $MAX_MS ms): a reply or an ACK was lost and waited for a retransmission"
t_ok "slowest SET $max ms (< $MAX_MS ms)"

sleep 0.5 # let the last ACKs cross
tx=$(r_stat srv tx_packets) || r_fail "stackctl show stats failed"
rx=$(ip netns exec "$TB_NS_CLI" cat "/sys/class/net/$TB_IF_CLI/statistics/rx_packets")
((tx == rx)) || r_fail "the stack sent $tx frames, the client's veth received $rx: $((tx - rx)) lost on the way out"
t_ok "all $tx frames the stack sent reached the client's veth"

r_stop srv term || r_fail "redis did not exit cleanly on SIGTERM"
t_pass
