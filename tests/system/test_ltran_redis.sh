#!/usr/bin/env bash
# test_ltran_redis.sh - three redis-servers under lstack share one port
# through ltran (same IP 198.18.0.2, ports 6379-6381), each served to kernel
# clients of the client namespace:
#
# Also: use_ltran = 1 with no ltran (the process runs on the kernel and says
# why); a peer of another protocol version refused.
# Bed: "${LSTACK_TB:-lstk}ltr". Exit 0 pass, 1 fail, 77 skip.
set -u

#   1. ltran up (DPDK primary on the server veth's af_packet port); three
#      redis-servers with use_ltran = 1 register; stackctl ltran lists them
#      with their listener and address (table and --json);
#   2. each answers PING; byte-exact SET/GET of a 200 KB value on all three at
#      once; redis-benchmark SET/GET on all three at once; a port nobody
#      listens on (6382) is refused (RST from ltran); ping and ARP answered;
#   3. kill -9 of the one on 6380: ltran notices and frees it (stackctl shows
#      two clients), the other two keep serving their data, 6380 is refused;
#      a client killed while its stack holds received data (a python server
#      under lstack that never reads) gives every mbuf back to ltran's pool;
#      the same command restarts it and it serves again;
#   4. SIGTERM to ltran: it exits 0 and removes its DPDK files; each client
#      says "ltran ... went away" and keeps running, its kernel (loopback)
#      half still serving.
T_BASE="${LSTACK_TB:-lstk}"
export LSTACK_TB="${T_BASE}ltr"
# shellcheck source=ltran_lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/ltran_lib.sh"
lt_init "${1:-}"

SOCK="$W/ltran.sock"
PREFIX="${LSTACK_TB}lt"
lt_write_ltran_conf 8191 "1"
tb_write_conf "$W/lstack.conf" \
    "dpdk_args = [ \"--no-pci\", \"-l\", \"$TB_CPU\" ];" \
    'use_ltran = 1;' "ltran_socket = \"$SOCK\";" 'low_power_mode = 1;'

# No ltran yet: an lstack process with use_ltran = 1 says why and runs on
# the kernel (init_fail = "kernel", the default).
ip netns exec "$TB_NS_SRV" env LD_PRELOAD="$(preload_list "$LIB")" LSTACK_CONF_PATH="$W/lstack.conf" \
    GAZELLE_BIND_PROCNAME=redis-server redis-server --port 6390 --bind 127.0.0.1 --save '' --appendonly no \
    --daemonize no --dir "$W" >"$W/redis-noltran.log" 2>&1 &
RPID[noltran]=$!
for ((i = 0; i < 50; i++)); do
    [[ "$(ip netns exec "$TB_NS_SRV" timeout 2 redis-cli -p 6390 ping 2>/dev/null)" == PONG ]] && break
    sleep 0.2
done
grep -q "cannot reach ltran at $SOCK" "$W/redis-noltran.log" && grep -q 'acceleration is OFF' "$W/redis-noltran.log" &&
    [[ "$(ip netns exec "$TB_NS_SRV" timeout 2 redis-cli -p 6390 ping 2>/dev/null)" == PONG ]] ||
    fail "use_ltran = 1 without ltran: expected 'cannot reach ltran' and the kernel stack serving"
kill -TERM "${RPID[noltran]}"
wait "${RPID[noltran]}"
unset "RPID[noltran]"
ok "use_ltran = 1 with no ltran running: the process says so and serves on the kernel"

lt_start_ltran
ok "ltran up (pid $LTRAN_PID): $(grep '^ltran: up on' "$W/ltran.log")"

start_redis() { # PORT [CONF BIND KEY]: KEY names it in RPID (default: PORT)
    local port="$1" conf="${2:-$W/lstack.conf}" bind="${3:-0.0.0.0}" key="${4:-$1}"
    ip netns exec "$TB_NS_SRV" env LD_PRELOAD="$(preload_list "$LIB")" LSTACK_CONF_PATH="$conf" \
        GAZELLE_BIND_PROCNAME=redis-server redis-server --port "$port" --bind "$bind" --protected-mode no \
        --save '' --appendonly no --daemonize no --dir "$W" >"$W/redis$key.log" 2>&1 &
    RPID[$key]=$!
}

CLI_HOST="$TB_IP_STACK"
cli() { # PORT ARGS... : redis-cli from the client namespace (to $CLI_HOST)
    local port="$1"
    shift
    ip netns exec "$TB_NS_CLI" timeout 10 redis-cli -h "$CLI_HOST" -p "$port" "$@"
}

wait_pong() { # PORT [KEY]: up to 60 s (a sanitizer build on a loaded machine starts slowly)
    local i
    for ((i = 0; i < 300; i++)); do
        [[ "$(cli "$1" ping 2>/dev/null)" == PONG ]] && return 0
        kill -0 "${RPID[${2:-$1}]}" 2>/dev/null || return 1
        sleep 0.2
    done
    return 1
}

ltran_json() { ip netns exec "$TB_NS_SRV" "$STACKCTL" ltran "$SOCK" --json; }

# A peer of another protocol version is refused with EPROTONOSUPPORT and closed.
python3 - "$SOCK" <<'PY' || fail "ltran did not refuse a message of protocol version 99"
import errno, socket, struct, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
s.settimeout(5)
s.connect(sys.argv[1])
s.send(struct.pack("=IHHiI", 0x4c54524e, 99, 1, 0, 0))
magic, ver, typ, status, ln = struct.unpack("=IHHiI", s.recv(64)[:16])
assert status == -errno.EPROTONOSUPPORT and ver == 2, (status, ver)
assert s.recv(64) == b"", "still open"
PY
ok "a client of another protocol version gets EPROTONOSUPPORT (ltran's version 2) and is closed"

for p in 6379 6380 6381; do start_redis "$p"; done
for p in 6379 6380 6381; do
    wait_pong "$p" || fail "redis on $p (pid ${RPID[$p]}) did not answer PING through ltran"
done
ok "three redis-servers under lstack answer PING through one ltran port (198.18.0.2:6379-6381)"

js=$(ltran_json) || fail "stackctl ltran --json failed"
python3 - "$js" "${RPID[6379]}" "${RPID[6380]}" "${RPID[6381]}" <<'PY' || fail "stackctl ltran --json: $js"
import json, sys
d = json.loads(sys.argv[1])["ltran"]
pids = {int(p) for p in sys.argv[2:5]}
cl = {c["pid"]: c for c in d["clients"]}
assert set(cl) == pids, (set(cl), pids)
ports = sorted(c["listen"][0] for c in cl.values())
assert ports == [6379, 6380, 6381], ports
assert all(c["addr"] == "198.18.0.2" and c["rx_frames"] > 0 and c["tx_frames"] > 0 for c in cl.values())
PY
ok "stackctl ltran --json: three clients, 198.18.0.2, listeners 6379/6380/6381, frames in and out"
ip netns exec "$TB_NS_SRV" "$STACKCTL" ltran "$SOCK" | sed 's/^/   | /'

# Byte-exact SET/GET on the three at once (200 KB value each, distinct).
for p in 6379 6380 6381; do
    python3 -c "import os,base64,sys; sys.stdout.write(base64.b64encode(os.urandom(150000)).decode())" >"$W/val$p"
done
BG=()
for p in 6379 6380 6381; do
    (cli "$p" -x set big <"$W/val$p" >"$W/set$p.out" 2>&1) &
    BG+=($!)
done
wait "${BG[@]}"
check_get() { # PORT
    cli "$1" --raw get big | head -c -1 >"$W/got$1" && cmp -s "$W/got$1" "$W/val$1"
}
for p in 6379 6380 6381; do
    [[ "$(cat "$W/set$p.out")" == OK ]] || fail "SET on $p: $(cat "$W/set$p.out")"
    check_get "$p" || fail "GET on $p: the 200 KB value came back different ($(wc -c <"$W/got$p") bytes)"
done
ok "byte-exact SET/GET of a 200 KB value on all three at once"

BG=()
for p in 6379 6380 6381; do
    (ip netns exec "$TB_NS_CLI" timeout 120 redis-benchmark -h "$TB_IP_STACK" -p "$p" -n 3000 -c 5 -t set,get -q \
        >"$W/bench$p.out" 2>&1; echo "rc=$?" >>"$W/bench$p.out") &
    BG+=($!)
done
wait "${BG[@]}"
for p in 6379 6380 6381; do
    grep -q '^rc=0' "$W/bench$p.out" && [[ $(tr '\r' '\n' <"$W/bench$p.out" | grep -cE '^(SET|GET): [0-9.]+ requests per second') == 2 ]] ||
        fail "redis-benchmark on $p: $(tr '\r' '\n' <"$W/bench$p.out" | tail -n 3)"
    echo "   $p: $(tr '\r' '\n' <"$W/bench$p.out" | grep -E '^(SET|GET): [0-9.]+ requests' | tr '\n' ' ')"
done
ok "redis-benchmark SET/GET on the three at once"

out=$(cli 6382 ping 2>&1)
[[ "$out" == *"Connection refused"* ]] || fail "6382 (nobody listens): expected a refusal, got: $out"
ok "a port nobody listens on is refused (RST from ltran)"
arp_answered() { ltran_json | python3 -c "import json,sys; print(json.load(sys.stdin)['ltran']['arp_answered'])"; }
arp0=$(arp_answered)
ip -n "$TB_NS_CLI" neigh flush dev "$TB_IF_CLI" # the kernel must ask again
ip netns exec "$TB_NS_CLI" ping -n -c 3 -i 0.2 -W 1 "$TB_IP_STACK" >"$W/ping.out" 2>&1 ||
    fail "ping through ltran: $(tail -n 2 "$W/ping.out")"
arp1=$(arp_answered)
((arp1 > arp0)) || fail "ltran answered no ARP request for $TB_IP_STACK after the client's cache was flushed ($arp0 -> $arp1)"
ok "ARP for the shared address answered by ltran ($arp0 -> $arp1), ICMP echo answered (by the first client with it)"

# One IP each: a fourth process with its own address, on a port the others
# use too (6379 on 198.18.0.4): ltran tells them apart by address, answers
# ARP for the new address, and the first three are not disturbed.
IP4=198.18.0.4
tb_write_conf "$W/lstack4.conf" \
    "dpdk_args = [ \"--no-pci\", \"-l\", \"$TB_CPU\" ];" \
    'use_ltran = 1;' "ltran_socket = \"$SOCK\";" 'low_power_mode = 1;' "host_addr = \"$IP4\";"
start_redis 6379 "$W/lstack4.conf" "$IP4" ip4
CLI_HOST=$IP4
wait_pong 6379 ip4 || fail "redis on $IP4:6379 (its own address) did not answer PING through ltran"
cli 6379 set who four >/dev/null
[[ "$(cli 6379 get who)" == four ]] || fail "$IP4:6379: SET/GET wrong"
CLI_HOST=$TB_IP_STACK
[[ "$(cli 6379 get who)" == "" ]] && check_get 6379 || fail "198.18.0.2:6379 saw $IP4's data or lost its own"
ok "one IP each: a fourth process on $IP4:6379 serves its own data beside 198.18.0.2:6379"
kill -TERM "${RPID[ip4]}"
wait "${RPID[ip4]}" || fail "redis on $IP4 did not stop cleanly"
unset "RPID[ip4]"

# kill -9 of one: the other two keep serving, it can come back.
victim=${RPID[6380]}
kill -KILL "$victim"
wait "$victim" 2>/dev/null
for ((i = 0; i < 50; i++)); do
    grep -q "pid $victim) gone" "$W/ltran.log" && break
    sleep 0.1
done
grep -q "pid $victim) gone" "$W/ltran.log" || fail "ltran did not notice the kill -9 of pid $victim in 5 s"
js=$(ltran_json) || fail "stackctl ltran --json failed after the kill"
python3 -c "import json,sys; d=json.loads(sys.argv[1])['ltran']; assert len(d['clients'])==2 and $victim not in [c['pid'] for c in d['clients']], d" "$js" ||
    fail "after kill -9: stackctl ltran still shows the dead client: $js"
ls "/var/run/dpdk/$PREFIX" | grep -q "^mp_socket_${victim}_" && fail "ltran left the killed client's EAL socket mp_socket_${victim}_*"
ok "kill -9 of redis on 6380 (pid $victim): ltran freed its rings, registrations and EAL socket (two clients left)"
for p in 6379 6381; do
    check_get "$p" || fail "after the kill: GET on $p wrong"
done
out=$(cli 6380 ping 2>&1)
[[ "$out" == *"Connection refused"* ]] || fail "6380 after its kill: expected a refusal, got: $out"
ok "the other two serve their data; 6380 is refused"
start_redis 6380
wait_pong 6380 || fail "redis on 6380 did not come back after its kill -9"
cli 6380 -x set big <"$W/val6380" >/dev/null && check_get 6380 || fail "restarted 6380: SET/GET wrong"
ok "redis on 6380 restarted with the same config: PING and byte-exact SET/GET"

# mbufs held inside a killed client's stack come back: a server under lstack
# that accepts, keeps its stack polled (select on the connection for
# writing) and never reads; 200 KB sent to it stay in its lwIP's receive
# queue, in mbufs of ltran's pool, when it is killed with -9.
# The interpreter itself, not a wrapper script (pyenv's shim is bash, which
# would run under the preload, and a sanitizer build's runtime, too).
PY_REAL=$(python3 -c 'import sys; print(sys.executable)')
mb() { ltran_json | python3 -c "import json,sys; d=json.load(sys.stdin)['ltran']; print(d['mbuf_free'], d['mbuf_total'])"; }
ip netns exec "$TB_NS_SRV" env LD_PRELOAD="$(preload_list "$LIB")" LSTACK_CONF_PATH="$W/lstack.conf" \
    GAZELLE_BIND_PROCNAME=python3 "$PY_REAL" -c '
import select, socket, time
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("0.0.0.0", 7000)); s.listen(4)
c, _ = s.accept()
print("accepted", flush=True)
end = time.time() + 60
while time.time() < end:
    select.select([], [c], [], 0)
    time.sleep(0.002)
' >"$W/hold.log" 2>&1 &
RPID[hold]=$!
for ((i = 0; i < 50; i++)); do
    ip netns exec "$TB_NS_SRV" "$STACKCTL" ltran "$SOCK" --json | grep -q '"listen":\[7000\]' && break
    sleep 0.2
done
ip netns exec "$TB_NS_CLI" timeout 20 python3 -c '
import socket, sys, time
c = socket.create_connection((sys.argv[1], 7000), timeout=10)
c.sendall(b"x" * 200000)
time.sleep(15)
' "$TB_IP_STACK" >"$W/hold-cli.log" 2>&1 &
HOLD_CLI=$!
for ((i = 0; i < 50; i++)); do
    read -r free_before total <<<"$(mb)"
    ((free_before < total - 100)) && break
    sleep 0.2
done
((free_before < total - 100)) || fail "the non-reading server never held received data (free $free_before of $total)"
hp=${RPID[hold]}
kill -KILL "$hp"
wait "$hp" 2>/dev/null
unset "RPID[hold]"
for ((i = 0; i < 50; i++)); do
    grep -q "pid $hp) gone" "$W/ltran.log" && break
    sleep 0.1
done
held=$(sed -n "s/.*pid $hp) gone: .* and \([0-9]*\) mbufs it held.*/\1/p" "$W/ltran.log")
read -r free_after total <<<"$(mb)"
echo "   mbufs free: $free_before of $total while it held 200 KB unread, $free_after after kill -9; ltran freed ${held:-?} it held"
[[ -n "$held" && "$held" -gt 100 && "$free_after" == "$total" ]] ||
    fail "mbufs the killed client held were not all given back (held ${held:-?}, free $free_after of $total)"
ok "kill -9 of a client holding 200 KB unread in its stack: ltran frees the $held mbufs it held ($free_after of $total free)"
kill "$HOLD_CLI" 2>/dev/null
wait "$HOLD_CLI" 2>/dev/null

# ltran stops: clients say so and keep running; DPDK files removed.
kill -TERM "$LTRAN_PID"
rc=0
wait "$LTRAN_PID" || rc=$?
LTRAN_PID=""
((rc == 0)) || fail "ltran exited with $rc on SIGTERM"
[[ ! -e "/var/run/dpdk/$PREFIX" ]] || fail "ltran left /var/run/dpdk/$PREFIX"
[[ -z "$(ls "$W/huge")" ]] || fail "ltran left hugepage files: $(ls "$W/huge")"
ok "ltran exits 0 on SIGTERM and removes its DPDK files ($(grep '^ltran: stopping' "$W/ltran.log"))"
for p in 6379 6380 6381; do
    for ((i = 0; i < 30; i++)); do
        grep -q 'ltran .* went away' "$W/redis$p.log" && break
        sleep 0.1
    done
    grep -q 'ltran .* went away' "$W/redis$p.log" || fail "redis on $p did not say that ltran went away"
    kill -0 "${RPID[$p]}" 2>/dev/null || fail "redis on $p died with ltran"
    [[ "$(ip netns exec "$TB_NS_SRV" timeout 5 redis-cli -p "$p" ping 2>&1)" == PONG ]] ||
        fail "redis on $p: its kernel half (loopback) does not answer after ltran stopped"
done
ok "the three clients say 'ltran went away', keep running, and serve on the kernel (loopback)"
for p in 6379 6380 6381; do
    kill -TERM "${RPID[$p]}"
    rc=0
    wait "${RPID[$p]}" || rc=$?
    unset "RPID[$p]"
    ((rc == 0)) || fail "redis on $p exited with $rc on SIGTERM after ltran went away"
done
ok "they stop cleanly (exit 0)"
echo "PASS: $(basename "$0") ($N checks)"
exit 0
