#!/usr/bin/env bash
# test_tso_tap.sh BUILD_DIR
# TSO through a real DPDK port: redis-server under lstack on DPDK's tap PMD
# (net_tap), which takes TSO frames (mbuf chains with RTE_MBUF_F_TX_TCP_SEG)
# and cuts them in software before the kernel's tap interface sees them.
# The only DPDK port on this machine that takes TSO frames at all (af_packet
# and af_xdp have no TSO); it hands the kernel MSS frames, so this checks
# lstack's DPDK TSO path (chains, offload flags, the tap PMD's smaller MSS),
# not a speed-up. A kernel redis-cli in the same namespace SETs a 4 MB value
# and GETs it back byte for byte; stackctl must count TSO frames, none lost.
# Its own namespace "${LSTACK_TB:-lstk}tso"; exit 77 (skip) when not root or
# a tool is missing.
set -u
BUILD="$(cd "${1:?usage: $0 BUILD_DIR}" && pwd)"
HERE="$(cd "$(dirname "$0")" && pwd)"
# shellcheck source=../preload_env.sh
source "$HERE/../preload_env.sh"

NS="${LSTACK_TB:-lstk}tso"
IF="${NS}0"
IP_K=198.18.78.1 IP_S=198.18.78.2
skip() {
    echo "SKIP: $*"
    exit 77
}
[[ $EUID -eq 0 ]] || skip "needs root (namespaces, hugepages)"
for t in ip redis-server redis-cli base64 cmp; do
    command -v "$t" >/dev/null || skip "$t not installed"
done
[[ -c /dev/net/tun ]] || skip "no /dev/net/tun (the tap PMD needs it)"
((${#IF} <= 15)) || skip "LSTACK_TB too long for an interface name ($IF)"

WORK="$(mktemp -d "/tmp/lstack-test-$NS.XXXXXX")"
PID=""
fails=0
cleanup() {
    if [[ -n "$PID" ]] && kill -0 "$PID" 2>/dev/null; then
        kill "$PID" 2>/dev/null
        for _ in $(seq 50); do kill -0 "$PID" 2>/dev/null || break; sleep 0.1; done
        kill -9 "$PID" 2>/dev/null
    fi
    ip netns del "$NS" 2>/dev/null
    if ((fails)) || [[ -n "${T_KEEP_LOG:-}" ]]; then
        echo "(logs kept in $WORK)"
    else
        rm -rf "$WORK"
    fi
}
trap cleanup EXIT
ok() { echo "ok - $*"; }
fail() {
    echo "FAIL: $*"
    fails=1
    echo "--- redis log (last 20 lines)"
    tail -n 20 "$WORK/redis.log" 2>/dev/null
    exit 1
}

ip netns del "$NS" 2>/dev/null
ip netns add "$NS" || fail "cannot create namespace $NS"
ip -n "$NS" link set lo up

cat >"$WORK/lstack.conf" <<EOF
dpdk_args = [ "--no-pci", "--file-prefix", "${NS}x", "-l", "${TB_CPU:-0}", "--vdev=net_tap0,iface=$IF" ];
host_addr = "$IP_S";
mask_addr = "255.255.255.0";
gateway_addr = "$IP_K";
num_cpus = "${TB_CPU:-0}";
tcp_conn_count = 64;
mbuf_count_per_conn = 64;
EOF

ip netns exec "$NS" env LD_PRELOAD="$(preload_list "$BUILD/lstack/liblstack.so")" GAZELLE_BIND_PROCNAME=redis-server \
    LSTACK_CONF_PATH="$WORK/lstack.conf" LSTACK_RUN_DIR="$WORK" \
    redis-server --port 6379 --save "" --appendonly no --protected-mode no --dir "$WORK" >"$WORK/redis.log" 2>&1 &
PID=$!

# The tap PMD creates the interface when the stack starts.
for _ in $(seq 200); do
    ip -n "$NS" link show "$IF" >/dev/null 2>&1 && break
    kill -0 "$PID" 2>/dev/null || fail "redis-server exited"
    sleep 0.1
done
ip -n "$NS" link show "$IF" >/dev/null 2>&1 || fail "no interface $IF: the stack did not start on net_tap"
ip -n "$NS" addr add "$IP_K/24" dev "$IF"
ip -n "$NS" link set "$IF" up
for _ in $(seq 200); do
    [[ "$(ip netns exec "$NS" timeout 2 redis-cli -h "$IP_S" ping 2>/dev/null)" == PONG ]] && break
    sleep 0.1
done
[[ "$(ip netns exec "$NS" timeout 2 redis-cli -h "$IP_S" ping 2>/dev/null)" == PONG ]] ||
    fail "redis under lstack does not answer on $IP_S"
ok "redis-server under lstack on net_tap answers on $IP_S"

sc() { ip netns exec "$NS" env LSTACK_RUN_DIR="$WORK" "$BUILD/tools/stackctl" "$@"; }
nic="$(sc show nic 2>&1)"
grep -q 'tx_capable .*TCP_TSO' <<<"$nic" || skip "this DPDK's tap PMD offers no TSO"
grep -q 'tx_enabled .*TCP_TSO' <<<"$nic" || fail "the tap PMD offers TSO and lstack did not enable it: $nic"
ok "lstack enabled TSO on the tap PMD"

head -c 3000000 /dev/urandom | base64 -w0 >"$WORK/value"
printf '\n' >>"$WORK/value" # redis-cli --raw ends the reply with a newline
head -c -1 "$WORK/value" | ip netns exec "$NS" timeout 60 redis-cli -h "$IP_S" -x set big >"$WORK/set.out" 2>&1
grep -q '^OK' "$WORK/set.out" || fail "SET of a 4 MB value: $(cat "$WORK/set.out")"
ip netns exec "$NS" timeout 60 redis-cli -h "$IP_S" --raw get big >"$WORK/got" 2>&1
cmp -s "$WORK/value" "$WORK/got" || fail "GET returned $(stat -c %s "$WORK/got") bytes, not the 4 MB value"
ok "a 4 MB value set and read back byte for byte"

stats="$(sc show stats 2>&1)"
val() { awk -v k="$1" '$1 == k { print $NF; exit }' <<<"$stats"; }
tso="$(val tx_tso)" full="$(val drop_tx_full)" long="$(val drop_tx_toolong)"
[[ -n "$tso" && "$tso" -gt 0 ]] || fail "no TSO frame counted (tx_tso '$tso'): $stats"
[[ "$full" == 0 && "$long" == 0 ]] || fail "frames refused by the port: drop_tx_full $full, drop_tx_toolong $long"
ok "the reply left in $tso TSO frames, none refused by the port"

kill "$PID"
for _ in $(seq 100); do kill -0 "$PID" 2>/dev/null || break; sleep 0.1; done
kill -0 "$PID" 2>/dev/null && fail "redis did not exit on SIGTERM"
ok "redis exited on SIGTERM"
echo "PASS"
