#!/usr/bin/env bash
# redis-memif: redis-server under lstack and its clients under lstack, two
# processes on one host joined by DPDK's net_memif (tests/system/memif_lib.sh),
# and what happens when one side goes away:
#
# About 2 minutes on an idle 2-core machine with the default; MEMIF_CYCLES=20
# is the full measure (20 cycles of each side, about 4 minutes; CI runs the
# default). Namespace "${LSTACK_TB}-mif".
set -u

#   1. start order: server first, then client first (the client's connect
#      waits for the server to come up);
#   2. the client side comes and goes, MEMIF_CYCLES cycles (default 10):
#      redis-benchmark under lstack runs to its end (odd) or is SIGKILLed
#      mid-run (even). The server must stay up, show the link down
#      (stackctl show nic), keep serving a kernel client on its loopback
#      listener while the link is down, and be back to its idle mbuf and
#      fd counts afterwards;
#   3. the server side comes and goes, MEMIF_CYCLES cycles: the client is
#      a redis replica under lstack (replicaof over memif); the server is
#      restarted (odd) or SIGKILLed and started again (even). The replica
#      must stay up, reconnect (its memif link, then replication) and hold
#      byte-exact copies of values written on the server after each cycle.
# shellcheck disable=SC2034 # T_NAME is read by common.sh
T_NAME=memif
# shellcheck source=common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
# shellcheck source=memif_lib.sh
source "$T_HERE/memif_lib.sh"

build="${1:-}"
tb_require_root
tb_require_tools redis-server redis-cli redis-benchmark taskset timeout
[[ -n "$build" ]] || { echo "usage: $0 BUILD_DIR"; exit 2; }
T_BUILD="$(cd "$build" && pwd)" || t_fail "build dir '$build' not found"
dpkg-query -W -f='${db:Status-Abbrev}' librte-net-memif23 2>/dev/null | grep -q '^ii' ||
    tb_skip "DPDK's net_memif driver (librte-net-memif23) is not installed"
LIB="${LSTACK_PRELOAD:-$T_BUILD/lstack/liblstack.so}"
CTL="$T_BUILD/tools/stackctl"
[[ -f "$LIB" && -x "$CTL" ]] || t_fail "not built: $LIB, $CTL"
CYCLES="${MEMIF_CYCLES:-10}"
[[ "$CYCLES" =~ ^[1-9][0-9]*$ ]] || { echo "MEMIF_CYCLES must be a positive integer, not '$CYCLES'"; exit 2; }
T_WORK="$(mktemp -d "/tmp/lstack-test-${LSTACK_TB}.XXXXXX")"

PIDS=()
cleanup() {
    local p
    for p in "${PIDS[@]}"; do
        kill -0 "$p" 2>/dev/null && kill -KILL "$p" 2>/dev/null
        wait "$p" 2>/dev/null
    done
    m_down
    [[ -n "${T_KEEP_LOG:-}" ]] || rm -rf "$T_WORK"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

m_init "$LSTACK_TB" "$T_WORK" "$LIB" 1 0 || t_fail "cannot make namespace ${LSTACK_TB}-mif"
echo "== $(basename "$0"): namespace $M_NS, server $M_IP_SRV (CPU $M_SRV_CPU), client $M_IP_CLI (CPU $M_CLI_CPU), abstract socket $T_WORK/memif.sock"

fail() {
    echo "FAIL: $*"
    local f
    for f in "$T_WORK"/*.log; do
        [[ -s "$f" ]] || continue
        echo "--- $f (last 15 lines) ---"
        tail -n 15 "$f" | sed 's/^/  | /'
    done
    exit 1
}

# Redis flags: no persistence; idle clients closed after 3 s, so the
# connections of a client that was SIGKILLed (it sends nothing, as a host
# that vanished) are closed too.
SRV_PID=""
srv_start() { # LOG
    (m_run server redis-server --port 6379 --bind 0.0.0.0 --protected-mode no --save '' --appendonly no \
        --timeout 3 --dir "$T_WORK" --logfile "") >>"$T_WORK/$1" 2>&1 &
    SRV_PID=$!
    PIDS+=("$SRV_PID")
}
# kcli PORT ARGS... : redis-cli on the kernel, on the namespace's loopback.
kcli() {
    local port="$1"
    shift
    m_kernel timeout 10 redis-cli -h 127.0.0.1 -p "$port" "$@"
}
wait_pong() { # PORT PID
    local i
    for ((i = 0; i < 150; i++)); do
        [[ "$(kcli "$1" ping 2>/dev/null)" == PONG ]] && return 0
        kill -0 "$2" 2>/dev/null || return 1
        sleep 0.1
    done
    return 1
}
srv_stop() { # term|kill
    if [[ "$1" == kill ]]; then kill -KILL "$SRV_PID"; else kill -TERM "$SRV_PID"; fi
    tb_wait_gone "$SRV_PID" 20 || fail "redis-server (pid $SRV_PID) still there 20 s after SIG${1^^}"
    wait "$SRV_PID" 2>/dev/null
}
# lcli ARGS... : redis-cli under lstack, over memif, to the server.
lcli() {
    (M_BIND=redis-cli m_run client timeout 20 redis-cli -h "$M_IP_SRV" -p 6379 "$@") 2>>"$T_WORK/lcli.log"
}
# nic PID NAME : a "link" item of stackctl show nic.
nic() {
    m_kernel "$CTL" -p "$1" --timeout 5 show nic 2>/dev/null | awk -v n="$2" '$2 == "link" && $3 == n {print $4}'
}
stat() { # PID KEY
    m_kernel "$CTL" -p "$1" --json --timeout 5 show stats 2>/dev/null |
        python3 -c 'import json, sys; d = json.load(sys.stdin); k = sys.argv[1]; print(int(d["total"].get(k, d["app"].get(k, -1))))' "$2" 2>/dev/null
}
nfds() { find "/proc/$1/fd" -mindepth 1 -maxdepth 1 2>/dev/null | wc -l; }

# ---- 1. start order
echo "-- 1. start order: server first"
srv_start server.log
wait_pong 6379 "$SRV_PID" || fail "redis-server under lstack did not answer PING on its loopback"
out=$(lcli set first server-first)
[[ "$out" == OK ]] || fail "SET over memif after the server came first: '$out'"
[[ "$(kcli 6379 get first)" == server-first ]] || fail "the value set over memif is not on the server"
srv_stop term
echo "   ok: redis-cli under lstack set a key over memif, the server had it"

echo "-- 1. start order: client first (the server comes 2 s later)"
(M_BIND=redis-cli m_run client timeout 30 redis-cli -h "$M_IP_SRV" -p 6379 set second client-first) >"$T_WORK/early.out" 2>"$T_WORK/early.log" &
early=$!
PIDS+=("$early")
sleep 2
kill -0 "$early" 2>/dev/null || fail "redis-cli under lstack gave up before its server came: $(cat "$T_WORK/early.out")"
srv_start server.log
wait_pong 6379 "$SRV_PID" || fail "redis-server under lstack did not come up"
wait "$early" || fail "the early redis-cli failed: $(cat "$T_WORK/early.out")"
[[ "$(cat "$T_WORK/early.out")" == OK && "$(kcli 6379 get second)" == client-first ]] ||
    fail "client first: '$(cat "$T_WORK/early.out")', server has '$(kcli 6379 get second)'"
echo "   ok: the client's connect waited for the server (its memif link came up when the server did)"

# ---- 2. the client side comes and goes
echo "-- 2. client: $CYCLES cycles of redis-benchmark under lstack, to its end or SIGKILLed"
sleep 4 # the earlier clients' connections closed (--timeout 3)
base_fds=$(nfds "$SRV_PID")
base_mbuf=$(stat "$SRV_PID" mbuf_free)
[[ "$base_mbuf" =~ ^[0-9]+$ ]] || fail "no mbuf_free from stackctl (got '$base_mbuf')"
echo "   server idle: $base_fds fds, $base_mbuf free mbufs"
for ((c = 1; c <= CYCLES; c++)); do
    if ((c % 2 == 1)); then
        rc=0
        (M_BIND=redis-benchmark m_run client timeout 60 redis-benchmark -h "$M_IP_SRV" -p 6379 -c 10 -n 4000 -r 1000 -t set,get -q) \
            >"$T_WORK/bench.out" 2>>"$T_WORK/bench.log" || rc=$?
        if ((rc != 0)) || ! tr '\r' '\n' <"$T_WORK/bench.out" | grep -q 'GET: .* requests per second'; then
            fail "cycle $c: redis-benchmark under lstack failed (status $rc): $(tr '\r' '\n' <"$T_WORK/bench.out" | tail -n 3)"
        fi
        how="ran to its end: $(tr '\r' '\n' <"$T_WORK/bench.out" | grep -a 'GET:' | tail -n 1)"
    else
        (m_run client redis-benchmark -h "$M_IP_SRV" -p 6379 -c 20 -n 100000000 -r 1000 -t set -q) \
            >/dev/null 2>>"$T_WORK/bench.log" &
        b=$!
        PIDS+=("$b")
        sleep 2.5
        kill -0 "$b" 2>/dev/null || fail "cycle $c: redis-benchmark under lstack exited before it was killed"
        kill -KILL "$b"
        wait "$b" 2>/dev/null
        how="SIGKILLed mid-run"
    fi
    # The survivor: alive, the link seen down, its kernel listener serving.
    for ((i = 0; i < 20; i++)); do
        [[ "$(nic "$SRV_PID" status)" == down ]] && break
        sleep 0.1
    done
    kill -0 "$SRV_PID" 2>/dev/null || fail "cycle $c: redis-server died when its peer went away"
    [[ "$(nic "$SRV_PID" status)" == down ]] || fail "cycle $c: stackctl show nic: link '$(nic "$SRV_PID" status)' with no peer"
    [[ "$(kcli 6379 set kernel-$c v$c)" == OK && "$(kcli 6379 get kernel-$c)" == v$c ]] ||
        fail "cycle $c: the kernel client on loopback is not served while the link is down"
    echo "   cycle $c: client $how; server up, link down, loopback served"
done
echo "   server: link down events $(nic "$SRV_PID" down_events), up events $(nic "$SRV_PID" up_events)"
for ((i = 0; i < 100; i++)); do
    fds=$(nfds "$SRV_PID")
    mbuf=$(stat "$SRV_PID" mbuf_free)
    ((fds <= base_fds && mbuf >= base_mbuf - 8)) && break
    sleep 0.2
done
((fds <= base_fds)) || fail "server fds: $fds after the cycles, $base_fds before"
((mbuf >= base_mbuf - 8)) || fail "server free mbufs: $mbuf after the cycles, $base_mbuf before"
echo "   ok: server back to idle: $fds fds (was $base_fds), $mbuf free mbufs (was $base_mbuf)"

# ---- 3. the server side comes and goes
echo "-- 3. server: $CYCLES cycles of restart / SIGKILL, a replica under lstack as the client"
(m_run client redis-server --port 6380 --bind 0.0.0.0 --protected-mode no --save '' --appendonly no \
    --replicaof "$M_IP_SRV" 6379 --repl-timeout 5 --dir "$T_WORK" --logfile "") >"$T_WORK/replica.log" 2>&1 &
REP=$!
PIDS+=("$REP")
wait_pong 6380 "$REP" || fail "the replica under lstack did not come up"
link_up() { # the replica linked to the master that runs now (20 s)
    # Both sides: after a SIGKILL the replica still thinks its old link up
    # until the new master resets its next REPLCONF ACK (or repl-timeout).
    local i
    for ((i = 0; i < 200; i++)); do
        kcli 6380 info replication 2>/dev/null | tr -d '\r' | grep -q '^master_link_status:up' &&
            kcli 6379 info replication 2>/dev/null | tr -d '\r' | grep -q '^connected_slaves:1' && return 0
        kill -0 "$REP" 2>/dev/null || return 1
        sleep 0.1
    done
    return 1
}
link_up || fail "the replica never linked to its master over memif"
rep_fds=$(nfds "$REP")
for ((c = 1; c <= CYCLES; c++)); do
    if ((c % 2 == 1)); then srv_stop term; how=restarted; else srv_stop kill; how="SIGKILLed, started again"; fi
    sleep 0.5
    kill -0 "$REP" 2>/dev/null || fail "cycle $c: the replica died when its master's process went away"
    srv_start server.log
    wait_pong 6379 "$SRV_PID" || fail "cycle $c: redis-server did not come back"
    link_up || fail "cycle $c: the replica did not link to its master again"
    # Byte-exact: a value of every printable byte and spaces, 4 KiB.
    val=$(head -c 3072 /dev/urandom | base64 -w 0 | tr '+/' ' ~')
    printf '%s' "$val" | kcli 6379 -x set "k$c" >/dev/null || fail "cycle $c: SET on the master failed"
    got=""
    for ((i = 0; i < 100; i++)); do
        got=$(kcli 6380 get "k$c")
        [[ "$got" == "$val" ]] && break
        sleep 0.1
    done
    [[ "$got" == "$val" ]] || fail "cycle $c: the replica's copy of k$c differs (${#got} bytes, want ${#val})"
    echo "   cycle $c: server $how; replica up, relinked (reconnects $(nic "$REP" reconnects)), k$c byte-exact"
done
sleep 1
fds=$(nfds "$REP")
((fds <= rep_fds + 1)) || fail "replica fds: $fds after the cycles, $rep_fds before"
echo "   ok: replica fds $fds (was $rep_fds)"
srv_stop term
kill -TERM "$REP"
tb_wait_gone "$REP" 20 || fail "the replica did not stop on SIGTERM"
echo "PASS: $(basename "$0")"
