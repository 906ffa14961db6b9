#!/usr/bin/env bash
# test_redis_client.sh BUILD_DIR
# Redis clients under the preload: redis-cli and redis-benchmark run with
# LD_PRELOAD=liblstack.so GAZELLE_BIND_PROCNAME=<name> in the server
# namespace (the stack owns 198.18.0.2; the kernel there has no address on
# the veth, so a connection that works went through the stack) against a
# kernel redis-server in the client namespace (198.18.0.1). The server's
#
# LSTACK_TEST_TARGET=kernel runs the same clients on the kernel at
# 198.18.0.3 (how the checks are validated). Client-side socket semantics in
# detail: test_client_sem.sh.
set -u

# CLIENT LIST shows where each connection came from. Checks: PING, a 1 MiB
# value both ways, redis-benchmark with 50 connections, with one, and with
# a new connection per request (-k 0: thousands of connects, the ephemeral
# ports and TIME_WAIT), and with two threads, each without errors
# (memtier_benchmark too, when one is installed). (A redis-server under lstack
# as the peer needs a second port: both ends on lstack is net_memif's
# business. The replica under lstack of a kernel master:
# test_redis_repl.sh.)
# shellcheck disable=SC2034 # T_NAME is read by common.sh
T_NAME=rcli
# shellcheck source=redis_lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/redis_lib.sh"
r_init "${1:-}"

KPORT=6400
KDIR="$T_WORK/kernel-redis"
mkdir -p "$KDIR"
r_conf "$R_CONF" 'tcp_conn_count = 256;'
if ! r_is_lstack; then
    ip -n "$TB_NS_SRV" route add default via "$TB_IP_CLI" 2>/dev/null || true
fi
# An ephemeral range of the server namespace's own (the stack reads it at
# start, like the kernel): the clients' ports must come from it.
ip netns exec "$TB_NS_SRV" sysctl -qw net.ipv4.ip_local_port_range="20000 29999" || t_fail "ip_local_port_range"

ip netns exec "$TB_NS_CLI" redis-server --port "$KPORT" --bind "$TB_IP_CLI" --protected-mode no --save "" \
    --appendonly no --dir "$KDIR" --logfile "$KDIR/redis.log" --maxclients 2000 >/dev/null 2>&1 &
kpid=$!
R_BG_PIDS+=("$kpid")
kcli() { ip netns exec "$TB_NS_CLI" timeout 30 redis-cli -h "$TB_IP_CLI" -p "$KPORT" "$@"; }
for ((i = 0; i < 100; i++)); do
    [[ "$(kcli ping 2>/dev/null)" == PONG ]] && break
    sleep 0.1
done
[[ "$(kcli ping 2>/dev/null)" == PONG ]] || r_fail "kernel redis-server did not start in $TB_NS_CLI"
t_ok "kernel redis-server on $TB_IP_CLI:$KPORT (pid $kpid)"

# client NAME CMD ARGS... : CMD in the server namespace, under the preload
# (GAZELLE_BIND_PROCNAME=NAME) for the lstack target, bounded by 300 s.
client() {
    local name="$1"
    shift
    if r_is_lstack; then
        ip netns exec "$TB_NS_SRV" timeout 300 env LD_PRELOAD="$R_PRELOAD" GAZELLE_BIND_PROCNAME="$name" \
            LSTACK_CONF_PATH="$R_CONF" LSTACK_LOG_LEVEL=warn "$@"
    else
        ip netns exec "$TB_NS_SRV" timeout 300 "$@"
    fi
}
rcli() { client redis-cli redis-cli -h "$TB_IP_CLI" -p "$KPORT" "$@"; }

out=$(rcli ping 2>&1)
[[ "$(tail -n 1 <<<"$out")" == PONG ]] || r_fail "redis-cli ping under $R_TARGET: $out"
t_ok "redis-cli ping from $R_TARGET: PONG"
if r_is_lstack && [[ "${LSTACK_TEST_STACKS:-1}" -gt 1 ]]; then # redis-client-multi
    out=$(ip netns exec "$TB_NS_SRV" timeout 300 env LD_PRELOAD="$R_PRELOAD" GAZELLE_BIND_PROCNAME=redis-cli \
        LSTACK_CONF_PATH="$R_CONF" redis-cli -h "$TB_IP_CLI" -p "$KPORT" ping 2>&1)
    echo "$out" >"$T_WORK/cli-up.log"
    r__check_mode "$T_WORK/cli-up.log" || r_fail "redis-cli under $R_TARGET: not $LSTACK_TEST_STACKS stacks"
    t_ok "the clients run $LSTACK_TEST_STACKS stacks: $(grep -m1 -o 'stack up on.*' <<<"$out")"
fi

# Where the connection came from: the server's CLIENT LIST, asked by a
# redis-cli in the same process as the connection it shows.
out=$(rcli client list 2>&1)
addr=$(grep -o 'addr=[0-9.]*:[0-9]*' <<<"$out" | head -n 1)
addr="${addr#addr=}"
[[ "${addr%:*}" == "$R_HOST" ]] || r_fail "the kernel server sees the client at '$addr', want $R_HOST:port ($out)"
p="${addr#*:}"
read -r lo hi < <(ip netns exec "$TB_NS_SRV" cat /proc/sys/net/ipv4/ip_local_port_range)
((p >= lo && p <= hi)) || r_fail "client port $p outside the ephemeral range $lo-$hi"
t_ok "the server sees the client at $addr (the stack's address, an ephemeral port in $lo-$hi)"

# 1 MiB both ways
val="$T_WORK/value"
head -c 786432 /dev/urandom | base64 -w 0 >"$val"
out=$(client redis-cli redis-cli -h "$TB_IP_CLI" -p "$KPORT" -x set big <"$val" 2>&1)
[[ "$(tail -n 1 <<<"$out")" == OK ]] || r_fail "redis-cli -x set (1 MiB): $out"
[[ "$(kcli strlen big)" == "$(stat -c %s "$val")" ]] || r_fail "the server holds $(kcli strlen big) bytes, sent $(stat -c %s "$val")"
rcli --raw get big >"$T_WORK/got" 2>"$T_WORK/got.err" || r_fail "redis-cli get big: $(cat "$T_WORK/got.err")"
cmp -s <(tr -d '\n' <"$T_WORK/got") "$val" || r_fail "the 1 MiB value read back differs ($(wc -c <"$T_WORK/got") bytes)"
t_ok "1 MiB value set and read back intact"

# bench ARGS... : redis-benchmark under the preload, checked like r_bench
bench() {
    local log="$T_WORK/bench.$RANDOM.log" rc=0 t0 t1
    t0=$(date +%s.%N)
    client redis-benchmark redis-benchmark -h "$TB_IP_CLI" -p "$KPORT" -q "$@" >"$log" 2>&1 || rc=$?
    t1=$(date +%s.%N)
    # the preload's own messages are not benchmark errors
    grep -v '^lstack: \|^EAL: \|^TELEMETRY: ' "$log" >"$log.b"
    r__bench_check "$log.b" "$rc" "redis-benchmark $*" "$(awk -v a="$t0" -v b="$t1" 'BEGIN{printf "%.1f", b-a}')"
}
conns0=$(kcli info stats | tr -d '\r' | sed -n 's/^total_connections_received://p')
bench -c 50 -n 20000 -t set,get -r 10000 -d 64 || r_fail "redis-benchmark -c 50 under $R_TARGET"
t_ok "redis-benchmark -c 50 set,get"
bench -c 1 -n 5000 -t ping || r_fail "redis-benchmark -c 1 ping under $R_TARGET"
t_ok "redis-benchmark -c 1 ping"
bench -c 20 -n 3000 -k 0 -t ping || r_fail "redis-benchmark -k 0 (a connection per request) under $R_TARGET"
conns1=$(kcli info stats | tr -d '\r' | sed -n 's/^total_connections_received://p')
((conns1 - conns0 >= 3000)) || r_fail "the server counted $((conns1 - conns0)) connections, want at least 3000"
t_ok "redis-benchmark -k 0: $((conns1 - conns0)) connections from one process"
bench -c 50 -P 16 -n 100000 -t set -r 100000 -d 200 || r_fail "redis-benchmark -P 16 under $R_TARGET"
t_ok "redis-benchmark -c 50 -P 16 set"
bench --threads 2 -c 20 -n 20000 -t set,get -r 10000 || r_fail "redis-benchmark --threads 2 under $R_TARGET"
t_ok "redis-benchmark --threads 2 (two threads on the one stack)"
# memtier_benchmark where it is installed (Debian 12 does not package it).
if command -v memtier_benchmark >/dev/null 2>&1; then
    mlog="$T_WORK/memtier.log"
    mrc=0
    client memtier_benchmark memtier_benchmark -s "$TB_IP_CLI" -p "$KPORT" --protocol=redis -t 2 -c 10 -n 1000 \
        --ratio=1:1 --hide-histogram >"$mlog" 2>&1 || mrc=$?
    if ((mrc != 0)) || ! grep -q '^Totals' "$mlog"; then
        tail -n 20 "$mlog"
        r_fail "memtier_benchmark under $R_TARGET exited $mrc (log above)"
    fi
    t_ok "memtier_benchmark -t 2 -c 10 (two threads on the one stack)"
else
    echo "note: memtier_benchmark is not installed (Debian 12 has no package); not run"
fi
kill -0 "$kpid" 2>/dev/null || r_fail "the kernel redis-server died"
t_pass
