#!/usr/bin/env bash
# test_redis_multi.sh BUILD_DIR
# One redis-server process, two stacks: stack_thread_mode =
# $LSTACK_TEST_STACK_MODE (default "run-to-wakeup"), num_cpus = "0,1", the
# port net_af_packet with qpairs=2 (two packet sockets in a fanout group:
# the kernel's flow hash spreads the clients' connections over the two
# queues, a hash lstack cannot compute).
set -u

#  - the log says 2 stacks; in run-to-wakeup threads lstack-stack0 and
#    lstack-stack1 run (in run-to-completion redis's own thread polls both);
#  - 64 kernel clients connected at once: each answered, and stackctl shows
#    them spread over both stacks (show connections --stack 0 / --stack 1),
#    the listener on both, and a total that matches;
#  - 200 SETs through one pipe, each value read back by its own connection
#    (new connections: either stack), byte-exact;
#  - redis-benchmark -c 50 SET/GET: no errors, accepts counted on both
#    stacks (show stats --stack N);
#  - an outgoing connection: the lstack redis replicates from a kernel
#    master in the client namespace (the replies to its SYN reach either
#    queue: the handover brings them to the connection's stack); the
#    handover counters are printed;
#  - SIGTERM: exit status 0.
# shellcheck disable=SC2034 # T_NAME is read by common.sh
T_NAME=rmul
# shellcheck source=redis_lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/redis_lib.sh"
r_init "${1:-}" python3
r_is_lstack || { echo "SKIP: several stacks are an lstack feature"; exit 77; }
SC="$T_BUILD/tools/stackctl"
[[ -x "$SC" ]] || r_fail "stackctl not built: $SC"
export LSTACK_RUN_DIR="$T_WORK/run"
mkdir -p "$LSTACK_RUN_DIR"

N=64
DPDK_ARGS=$(printf 'dpdk_args = [ "--in-memory", "--no-pci", "--file-prefix", "%s", "-l", "%s", "--vdev=net_af_packet0,iface=%s,framecnt=4096,qpairs=2" ];' \
    "${LSTACK_TB}x" "$TB_CPU" "$TB_IF_SRV")

MODE=${LSTACK_TEST_STACK_MODE:-run-to-wakeup}
r_conf "$R_CONF" "$DPDK_ARGS" 'num_cpus = "0,1";' "stack_thread_mode = \"$MODE\";" 'tcp_conn_count = 512;'
r_start srv lstack
r_wait_ready srv || r_fail "redis did not come up"
pid=$(r_pid srv)
up=$(grep -m1 'stack up on' "${R_OUT[srv]}")
[[ "$up" == *"($MODE); 2 stacks"* ]] || r_fail "the log does not say 2 stacks ($MODE): $up"
if [[ "$MODE" == run-to-wakeup ]]; then
    names=$(cat /proc/"$pid"/task/*/comm 2>/dev/null | tr '\n' ' ')
    [[ " $names " == *" lstack-stack0 "* && " $names " == *" lstack-stack1 "* ]] ||
        r_fail "no threads lstack-stack0 and lstack-stack1: $names"
fi
t_ok "redis-server up with 2 stacks: $up"

# py EXPR FILE: EXPR over the JSON document d.
py() {
    python3 -c "import json,sys; d=json.load(open(sys.argv[2])); v=($1); print(v if isinstance(v, (int, str)) else repr(v))" \
        "$1" "$2" 2>&1 || true
}

# --- N clients held open --------------------------------------------------
cat >"$T_WORK/hold.py" <<'PY'
import socket, sys, time
host, port, n = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
socks = []
for i in range(n):
    s = socket.create_connection((host, port), timeout=10)
    s.sendall(b"PING\r\n")
    if s.recv(16) != b"+PONG\r\n":
        print("bad answer on connection", i, flush=True)
        sys.exit(1)
    socks.append(s)
print("ready", flush=True)
time.sleep(300)
PY
ip netns exec "$TB_NS_CLI" python3 "$T_WORK/hold.py" "$(r_host srv)" "$(r_port srv)" $N >"$T_WORK/hold.log" 2>&1 &
HOLD=$!
R_BG_PIDS+=("$HOLD")
r_wait_log_ready "$HOLD" "$T_WORK/hold.log" || r_fail "the $N clients did not all connect: $(tail -n 3 "$T_WORK/hold.log")"
t_ok "$N kernel clients connected at once, each answered PING"

est=()
for s in 0 1; do
    "$SC" -p "$pid" show -c --stack $s --json >"$T_WORK/c$s.json" || r_fail "show connections --stack $s failed"
    est[s]=$(py 'len([c for c in d["connections"] if c["state"] == "ESTABLISHED"])' "$T_WORK/c$s.json")
    l=$(py 'len(d["listeners"])' "$T_WORK/c$s.json")
    [[ "$l" == 1 ]] || r_fail "stack $s has $l listeners: $(head -c 300 "$T_WORK/c$s.json")"
done
"$SC" -p "$pid" show -c --json >"$T_WORK/call.json" || r_fail "show connections failed"
all=$(py 'len([c for c in d["connections"] if c["state"] == "ESTABLISHED"])' "$T_WORK/call.json")
echo "   ESTABLISHED: stack 0 ${est[0]}, stack 1 ${est[1]}, all $all"
((est[0] > 0 && est[1] > 0)) || r_fail "the $N connections are not spread over both stacks (${est[0]}, ${est[1]})"
((est[0] + est[1] == N && all == N)) || r_fail "per-stack counts ${est[0]} + ${est[1]} and total $all, expected $N"
t_ok "show connections: the listener on both stacks, $N connections: ${est[0]} on stack 0, ${est[1]} on stack 1 (total $all)"
kill "$HOLD" 2>/dev/null
wait "$HOLD" 2>/dev/null

# --- byte-exact SET/GET over many connections -------------------------------
r_pipe_roundtrip srv multi 200 300 || r_fail "200 SETs through a pipe, read back"
t_ok "200 values SET through a pipe, each read back by a connection of its own: unchanged"

# --- redis-benchmark, accepts per stack -------------------------------------
for s in 0 1; do "$SC" -p "$pid" show stats --stack $s --json >"$T_WORK/s$s.a.json" || r_fail "show stats --stack $s"; done
R_BENCH_TIMEOUT=300 r_bench srv -c 50 -n 20000 -t set,get || r_fail "redis-benchmark -c 50 set,get"
acc=()
for s in 0 1; do
    "$SC" -p "$pid" show stats --stack $s --json >"$T_WORK/s$s.b.json" || r_fail "show stats --stack $s"
    acc[s]=$(($(py "d['total']['conn_accepted']" "$T_WORK/s$s.b.json") - $(py "d['total']['conn_accepted']" "$T_WORK/s$s.a.json")))
done
echo "   conn_accepted during the benchmark: stack 0 +${acc[0]}, stack 1 +${acc[1]}"
((acc[0] > 0 && acc[1] > 0)) || r_fail "the benchmark's connections were not accepted on both stacks"
t_ok "redis-benchmark -c 50 -n 20000 SET/GET: no errors; accepted on stack 0 +${acc[0]}, stack 1 +${acc[1]}"

# --- an outgoing connection: replica of a kernel master ---------------------
KPORT=6390
mkdir -p "$T_WORK/kmaster"
ip netns exec "$TB_NS_CLI" redis-server --port $KPORT --bind "$TB_IP_CLI" --protected-mode no --save '' \
    --appendonly no --dir "$T_WORK/kmaster" --daemonize no >"$T_WORK/kmaster/out.log" 2>&1 &
KM=$!
R_BG_PIDS+=("$KM")
for ((i = 0; i < 300; i++)); do
    [[ "$(ip netns exec "$TB_NS_CLI" redis-cli -h "$TB_IP_CLI" -p $KPORT ping 2>/dev/null)" == PONG ]] && break
    sleep 0.1
done
out=$(for i in $(seq 1 100); do printf 'SET km:%d kv-%d\r\n' "$i" "$i"; done |
    ip netns exec "$TB_NS_CLI" timeout 30 redis-cli -h "$TB_IP_CLI" -p $KPORT --pipe 2>&1) ||
    r_fail "filling the kernel master: $out; $(tail -n 3 "$T_WORK/kmaster/out.log")"
r_cli srv replicaof "$TB_IP_CLI" $KPORT >/dev/null || r_fail "REPLICAOF"
ok=0
for ((i = 0; i < 300; i++)); do
    [[ "$(r_cli srv get km:100)" == kv-100 && "$(r_info srv master_link_status)" == up ]] && { ok=1; break; }
    sleep 0.1
done
((ok)) || r_fail "the lstack replica did not sync from the kernel master (link $(r_info srv master_link_status))"
r_cli srv replicaof no one >/dev/null
"$SC" -p "$pid" show stats --json >"$T_WORK/ho.json" || r_fail "show stats"
echo "   handover: $(py "'in %d, out %d, waited %d; ARP replies shared %d' % (d['total']['handover_in'], d['total']['handover_out'], d['total']['handover_waited'], d['total']['arp_shared'])" "$T_WORK/ho.json")"
t_ok "an outgoing connection (replica of a kernel master) synced 100 keys"
kill "$KM" 2>/dev/null

r_stop srv term || r_fail "redis did not exit cleanly on SIGTERM"
t_ok "SIGTERM: exit status 0"
r_pass
