#!/usr/bin/env bash
# nic-queues: a port opened with two rx/tx queue pairs
# (nic_dpdk_open_queues), one polling thread per queue, frames that reach
# queue 1 handed to queue 0's owner through the handover rings.
#   - net_af_packet qpairs=2 (a fanout group: the kernel's flow hash),
#   - net_tap with 2 queues (the kernel's tun picks a queue by flow hash),
#   - net_af_xdp queue_count=2 on a veth made with 2 rx and 2 tx queues,
#     where AF_XDP sockets work here;
# a kernel sends 64 UDP flows and 16 TCP SYNs; checks:
# both queues receive flows, no flow on both, every frame of queue 1 is
# handed over and taken by queue 0's owner, the describe op's per-queue
# counters agree with what the threads counted.
# Usage: test_nic_queues.sh BUILD_DIR
set -u
T_NAME=nq
# shellcheck source=common.sh
source "$(dirname "$0")/common.sh"

build="${1:-}"
[[ -n "$build" ]] || { echo "usage: $0 BUILD_DIR"; exit 2; }
tb_require_root
tb_require_tools ip ethtool python3
PROBE="$(cd "$build" && pwd)/tests/system/nic_queues_probe"
[[ -x "$PROBE" ]] || t_fail "not built: $PROBE"
T_WORK="$(mktemp -d "/tmp/lstack-test-${LSTACK_TB}.XXXXXX")"
tb_on_cleanup 't__cleanup_work'
tb_trap_cleanup
tb_up || t_fail "test bed did not come up"

# send_flows NS DST : 64 UDP flows (5 datagrams each) and 16 TCP SYNs (the
# socket is closed before the SYN's retransmission) from NS's kernel to DST.
send_flows() {
    ip netns exec "$1" python3 - "$2" <<'PY'
import socket, sys, time
dst = sys.argv[1]
for i in range(64):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind(("", 41000 + i))
    for _ in range(5):
        s.sendto(b"x" * 32, (dst, 9000))
    s.close()
for i in range(16):
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.setblocking(False)
    s.bind(("", 42000 + i))
    try:
        s.connect((dst, 6379))
    except BlockingIOError:
        pass
    time.sleep(0.02)
    s.close()
PY
}

val() { awk -v k="$1" '$1 == k {print $2; exit}' "$2"; }

# send_veth : the client's kernel sends to the stack's address over the veth.
send_veth() {
    local mac
    mac="$(tb_mac "$TB_NS_SRV" "$TB_IF_SRV")"
    ip -n "$TB_NS_CLI" neigh replace "$TB_IP_STACK" lladdr "$mac" dev "$TB_IF_CLI" nud permanent ||
        t_fail "static neighbour entry"
    send_flows "$TB_NS_CLI" "$TB_IP_STACK"
}

# send_tap : the server namespace's kernel sends to the tap port's address
# (the kernel's tun picks the queue of each frame from its flow hash).
TAP_IF="${LSTACK_TB}-t"
TAP_MAC="02:00:00:00:6e:71"
send_tap() {
    ip -n "$TB_NS_SRV" addr add 198.18.9.1/24 dev "$TAP_IF" &&
        ip -n "$TB_NS_SRV" link set "$TAP_IF" up &&
        ip -n "$TB_NS_SRV" neigh replace 198.18.9.2 lladdr "$TAP_MAC" dev "$TAP_IF" nud permanent ||
        t_fail "tap interface set-up"
    send_flows "$TB_NS_SRV" 198.18.9.2
}

# run_probe NAME VDEV SENDER : run the probe on 2 queues over VDEV while
# SENDER sends flows; check what it saw.
run_probe() {
    local name="$1" vdev="$2" sender="$3" out="$T_WORK/$1.out"
    ip netns exec "$TB_NS_SRV" "$PROBE" 5 2 --no-pci --file-prefix "${LSTACK_TB}$name" -l 0 --vdev="$vdev" \
        >"$out" 2>"$T_WORK/$name.err" &
    local pid=$! i
    for ((i = 0; i < 100; i++)); do
        grep -q '^ready' "$out" 2>/dev/null && break
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.1
    done
    grep -q '^ready' "$out" || { cat "$T_WORK/$name.err"; t_fail "$name: probe did not open the port with 2 queues"; }
    t_ok "$name: port open with 2 queue pairs ($(val steering "$out") steering)"
    "$sender"
    wait "$pid" || { cat "$T_WORK/$name.err"; t_fail "$name: probe failed"; }
    sed 's/^/   | /' "$out" | grep -v 'nic\.q[0-9]_\(tx\|drop\|port_o\|port_e\)'
    local r0 r1 f0 f1 multi handed taken
    r0=$(val queue0_rx "$out"); r1=$(val queue1_rx "$out")
    f0=$(val queue0_flows "$out"); f1=$(val queue1_flows "$out")
    multi=$(val flows_on_several_queues "$out")
    handed=$(val handed_over "$out"); taken=$(val taken_by_owner "$out")
    [[ "$(val nic.rx_queues "$out")" == 2 && "$(val nic.tx_queues "$out")" == 2 ]] ||
        t_fail "$name: describe does not say 2 queues"
    (( f0 >= 8 && f1 >= 8 )) || t_fail "$name: flows not spread over both queues ($f0, $f1)"
    t_ok "$name: flows reach both queues ($f0 and $f1 flows, $r0 and $r1 frames)"
    [[ "$multi" == 0 ]] || t_fail "$name: $multi flows seen on both queues"
    t_ok "$name: each flow on one queue"
    [[ "$handed" == "$r1" && "$taken" == "$r1" && "$(val forward_errors "$out")" == 0 ]] ||
        t_fail "$name: queue 1 received $r1 frames, $handed handed over, $taken taken by queue 0's owner"
    [[ "$(val handed_flows_seen_by_owner "$out")" == "$f1" ]] ||
        t_fail "$name: queue 0's owner saw $(val handed_flows_seen_by_owner "$out") of queue 1's $f1 flows"
    t_ok "$name: all $r1 frames of queue 1 handed over to queue 0's owner"
    [[ "$(val nic.q0_rx_packets "$out")" == "$r0" && "$(val nic.q1_rx_packets "$out")" == "$r1" ]] ||
        t_fail "$name: describe's per-queue rx differs from the threads' counts"
    [[ "$(val register_errors "$out")" == 0 ]] || t_fail "$name: nic_thread_register failed"
    grep -q '^closed' "$out" || t_fail "$name: did not close"
    t_ok "$name: per-queue counters in describe agree; threads registered with EAL; port closed"
}

# Two stacks on a port of one queue: refused, and the error names the devarg.
ip netns exec "$TB_NS_SRV" "$PROBE" 1 2 --no-pci --file-prefix "${LSTACK_TB}one" -l 0 \
    --vdev="net_af_packet0,iface=$TB_IF_SRV" >"$T_WORK/one.out" 2>"$T_WORK/one.err" &&
    t_fail "2 queues opened on an af_packet port without qpairs"
grep -q 'has 1 rx and 1 tx queues, 2 stacks need 2 of each: add qpairs=N' "$T_WORK/one.err" ||
    { cat "$T_WORK/one.err"; t_fail "no clear error for too few queues"; }
t_ok "2 queues on af_packet without qpairs: refused ($(grep -o 'port 0 .*' "$T_WORK/one.err"))"

run_probe afp "net_af_packet0,iface=$TB_IF_SRV,qpairs=2" send_veth
run_probe tap "net_tap0,iface=$TAP_IF,mac=$TAP_MAC" send_tap

# af_xdp: DPDK 22.11's PMD takes the number of queues it may use from the
# interface's "combined" channels (ethtool -l), and a veth has none (it
# reports RX and TX queues only: Linux 6.x): queue_count=2 is refused at
# probe ("larger than combined queue count 1"). Checked here, so that the
# part runs where an interface or a DPDK can do it.
if why=$(tb_af_xdp_ok); then
    ip netns exec "$TB_NS_SRV" ethtool -l "$TB_IF_SRV" >"$T_WORK/ethtool.out" 2>&1
    combined=$(awk '/^Pre-set/ {c = 1} c && /^Combined:/ {print $2; exit}' "$T_WORK/ethtool.out")
    if [[ "$combined" =~ ^[0-9]+$ ]] && (( combined >= 2 )); then
        run_probe xdp "net_af_xdp0,iface=$TB_IF_SRV,start_queue=0,queue_count=2" send_veth
        tb_xdp_off >/dev/null
    else
        echo "   af_xdp part skipped: the veth has no combined channels (ethtool -l: '${combined:-none}'),"
        echo "   and DPDK 22.11's net_af_xdp allows at most that many queues (1)"
    fi
else
    echo "   af_xdp part skipped: $why"
fi
t_pass
