#!/usr/bin/env bash
# The main job: build lstack, make a namespace pair (a client on the kernel
# stack; a server whose veth is driven by DPDK's net_af_xdp), and run the
# same redis-server binary twice in the server namespace, one after the other:
#   - on the kernel, at 198.18.0.3:6380;
#   - under lstack (LD_PRELOAD=liblstack.so), at 198.18.0.2:6379;
# then the same redis-benchmark against each from the client namespace, and
# print both results. Then both ends on lstack: the same redis-benchmark
# under lstack against the same redis-server under lstack, two processes on
# this host joined by DPDK's net_memif (tests/system/memif_lib.sh; server on
# CPU 1, client on CPU 0), and one short table of the three. Everything it
# creates is removed again, also on failure or Ctrl-C.
#   DEMO_N (default 100000) requests per test, DEMO_CLIENTS (default 50).
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
N=${DEMO_N:-100000}
C=${DEMO_CLIENTS:-50}

scripts/install-deps.sh
[ -f "$BUILD/build.ninja" ] || meson setup "$BUILD"
ninja -C "$BUILD"

# shellcheck disable=SC2034 # T_NAME is read by common.sh
T_NAME=demo
# One server at a time (below), so the stack may take every frame of the
# veth at its XDP hook (tests/system/testbed.sh, TB_PMD).
export TB_PMD="${TB_PMD:-af_xdp}"
# shellcheck source=../tests/system/redis_lib.sh
source tests/system/redis_lib.sh
r_init "$BUILD"
r_conf "$R_CONF" 'tcp_conn_count = 1100;'
echo "== lstack.conf"
cat "$R_CONF"

bench() { # bench NAME: the same benchmark against redis NAME
    ip netns exec "$TB_NS_CLI" redis-benchmark -h "$(r_host "$1")" -p "$(r_port "$1")" \
        -c "$C" -n "$N" -t set,get -q 2>/dev/null | tr '\r' '\n' | grep -a 'requests per second'
}
# One server at a time: a waiting lstack server polls its NIC at full speed,
# which would take CPU from the kernel run on this 2-core machine.
echo "== redis-benchmark -c $C -n $N -t set,get, from the client namespace"
r_start kernel kernel
r_wait_ready kernel || r_fail "kernel redis did not start"
echo "-- kernel ($(r_host kernel):$(r_port kernel))"
kout=$(bench kernel)
echo "$kout"
r_stop kernel term || r_fail "kernel redis did not stop cleanly"

r_start lstack lstack
r_wait_ready lstack || r_fail "redis under lstack did not start"
echo "-- lstack ($(r_host lstack):$(r_port lstack))"
lout=$(bench lstack)
echo "$lout"
echo "== redis-cli -h 127.0.0.1 -p $(r_port lstack) ping, on the server host (the kernel half of 0.0.0.0)"
ip netns exec "$TB_NS_SRV" redis-cli -h 127.0.0.1 -p "$(r_port lstack)" ping
r_stop lstack term || r_fail "redis under lstack did not stop cleanly"

echo "== lstack / kernel (one run; scripts/bench.sh measures properly: rounds, pinning, latency)"
paste <(echo "$kout") <(echo "$lout") | awk -F'\t' '{
    split($1, k, " "); split($2, l, " ");
    printf "%s %.0f vs %.0f req/s: lstack/kernel = %.2f\n", k[1], k[2], l[2], l[2] / k[2] }'

# Both ends on lstack: a namespace of its own, the server's and the client's
# lstack.conf, net_memif between them.
# shellcheck source=../tests/system/memif_lib.sh
source tests/system/memif_lib.sh
m_init demo "$T_WORK" "$R_LIB" 1 0 || r_fail "cannot make the memif namespace"
tb_on_cleanup 'm_down'
m_conf server 'tcp_conn_count = 1100;'
m_conf client 'tcp_conn_count = 1100;'
echo "== both ends on lstack over net_memif: redis-benchmark under lstack (CPU 0) -> redis-server under lstack (CPU 1)"
(m_run server redis-server --port 6379 --bind 0.0.0.0 --protected-mode no --save '' --appendonly no \
    --dir "$T_WORK" --logfile "$T_WORK/memif-server.log") >"$T_WORK/memif-server.out" 2>&1 &
mpid=$!
for ((i = 0; i < 150; i++)); do
    [[ "$(m_kernel redis-cli -h 127.0.0.1 -p 6379 ping 2>/dev/null)" == PONG ]] && break
    kill -0 "$mpid" 2>/dev/null || break
    sleep 0.2
done
[[ "$(m_kernel redis-cli -h 127.0.0.1 -p 6379 ping 2>/dev/null)" == PONG ]] ||
    { tail -n 20 "$T_WORK/memif-server.out"; r_fail "redis-server under lstack on net_memif did not start"; }
bout=$( (m_run client redis-benchmark -h "$M_IP_SRV" -p 6379 -c "$C" -n "$N" -t set,get -q) 2>/dev/null |
    tr '\r' '\n' | grep -a 'requests per second')
echo "$bout"
kill -TERM "$mpid"
wait "$mpid" || r_fail "redis-server under lstack on net_memif did not stop cleanly"

echo "== redis-benchmark -c $C -n $N -t set,get: req/s (one run each)"
paste <(echo "$kout") <(echo "$lout") <(echo "$bout") | awk -F'\t' '
    BEGIN { printf "%-5s %14s %22s %22s\n", "test", "kernel", "lstack server", "both ends on lstack" }
    { split($1, k, " "); split($2, l, " "); split($3, b, " ");
      printf "%-5s %14.0f %15.0f (%4.2fx) %15.0f (%4.2fx)\n", k[1], k[2], l[2], l[2] / k[2], b[2], b[2] / k[2] }'
echo "   kernel: kernel client -> kernel server over the veth; lstack server: the same kernel client ->"
echo "   redis under lstack (net_af_xdp); both ends: redis-benchmark and redis-server under lstack, net_memif"
echo "== done"
