#!/usr/bin/env bash
# profile.sh - where the instructions of an lstack redis-server go, per request.
#
#   bench/profile.sh [--build DIR] [--out DIR] [-n N] [--scenario S] [--idle SECONDS]
#                    [--conn-count N] [--] [REDIS-BENCHMARK ARGS...]
#
# Brings up its own namespace pair (bed "lstkprof", or LSTACK_TB), starts
# redis-server under lstack inside valgrind --tool=callgrind (server on CPU
# 1, the stack's lcore 1), waits for it, zeroes the counters, runs
#   redis-benchmark -n N ARGS      (default: -c 50 -t set,get -d 3, N 20000)
# from the client namespace (CPU 0), dumps the counters and splits them by
# shared object with bench/callgrind_split.py: redis, lstack, lwIP, DPDK,
# libc, the allocator, and lstack + lwIP; per request. Everything is
# removed on exit; the callgrind file, a copy of /proc/PID/maps and the
# split stay in --out (default bench/results/profile-<UTC timestamp>/).
set -u

# Before the benchmark, --idle SECONDS (default 3) of no traffic get a dump
# of their own: the cost of an idle poll round. With the stack's busy_polls
# over the benchmark (stackctl), the split also gives the benchmark's work
# with its idle rounds taken out (callgrind_split.py --idle): the number of
# idle rounds depends on how long the server waited for the client, not on
# the stack, so that is the figure to compare builds with.
#
# --scenario S: ARGS of scripts/bench.sh's scenario S (1-6, without its -n),
# e.g. --scenario 2 for -c 1000 -r 1000000 -t set,get -d 3.
#
# --conn-count N: the server's tcp_conn_count (default 1200, as bench.sh).
# Under valgrind the server closes a test's connections slowly, so the next
# test's may arrive while they are still open: a build that refuses a
# connection over tcp_conn_count (1b61a7c) then resets some of scenario 2's
# GET connections, and redis-benchmark spins on them and never finishes;
# --conn-count 2400 leaves room for both tests' 1000.
#
# lwIP's functions are named from the library the stacks copy into their
# memfds: DIR/lstack/stack/lwip/liblstack_lwip.so, or Debian's liblwip.so.0
# for a build of before lstack built its own lwIP (callgrind_split.py --lwip).
#
# Valgrind runs the server ~50x slower, so the client is never the
# bottleneck and a poll round usually finds work: the counts are the cost of
# the work itself (idle poll rounds included only as far as they happen).
# DPDK runs with --no-huge under valgrind (it cannot map hugepages there);
# the instruction counts do not depend on the page size.
# shellcheck source-path=SCRIPTDIR/..

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD_DIR="${BUILD:-build}"
OUT=""
NREQ=20000
SERVER_CPU=1
CLIENT_CPU=0
SCENARIO=""
IDLE_S=3
CONN_COUNT=1200
while (($# > 0)); do
    case "$1" in
    --build) BUILD_DIR="$2"; shift 2 ;;
    --out) OUT="$2"; shift 2 ;;
    -n) NREQ="$2"; shift 2 ;;
    --scenario) SCENARIO="${2:-}"; shift 2 ;;
    --idle) IDLE_S="$2"; shift 2 ;;
    --conn-count) CONN_COUNT="$2"; shift 2 ;;
    -h | --help) sed -n '2,/^set -u$/{/^set -u$/d;s/^# \{0,1\}//;p}' "${BASH_SOURCE[0]}"; exit 0 ;;
    --) shift; break ;;
    *) break ;;
    esac
done
ARGS=("$@")
[[ "$IDLE_S" =~ ^[1-9][0-9]*$ ]] || { echo "profile.sh: --idle wants whole seconds > 0, not '$IDLE_S'" >&2; exit 2; }
[[ "$NREQ" =~ ^[1-9][0-9]*$ ]] || { echo "profile.sh: -n wants a positive integer, not '$NREQ'" >&2; exit 2; }
[[ "$CONN_COUNT" =~ ^[1-9][0-9]*$ ]] || { echo "profile.sh: --conn-count wants a positive integer, not '$CONN_COUNT'" >&2; exit 2; }
if [[ -n "$SCENARIO" ]]; then
    ((${#ARGS[@]} == 0)) || { echo "profile.sh: --scenario or redis-benchmark arguments, not both" >&2; exit 2; }
    # scripts/bench.sh's scenarios (S_ARGS there)
    # shellcheck disable=SC2054 # "set,get" is one argument
    case "$SCENARIO" in
    1) ARGS=(-c 50 -P 1 -t set,get -d 3) ;;
    2) ARGS=(-c 1000 -r 1000000 -t set,get -d 3) ;;
    3) ARGS=(-c 50 -P 16 -t set,get) ;;
    4) ARGS=(-c 50 -t set,get -d 1024) ;;
    5) ARGS=(-c 1 -t ping) ;;
    6) ARGS=(-c 10 -t set,get -d 65536) ;;
    *) echo "profile.sh: --scenario wants 1..6, not '$SCENARIO'" >&2; exit 2 ;;
    esac
fi
# shellcheck disable=SC2054 # "set,get" is one argument
((${#ARGS[@]} > 0)) || ARGS=(-c 50 -t set,get -d 3)

[[ $(id -u) -eq 0 ]] || { echo "profile.sh: must run as root" >&2; exit 1; }
for t in valgrind callgrind_control redis-server redis-benchmark redis-cli taskset nm objdump python3; do
    command -v "$t" >/dev/null 2>&1 || { echo "profile.sh: '$t' not found" >&2; exit 1; }
done
[[ "$BUILD_DIR" == /* ]] || BUILD_DIR="$ROOT/$BUILD_DIR"
LIB="$BUILD_DIR/lstack/liblstack.so"
[[ -f "$LIB" ]] || { echo "profile.sh: $LIB not built" >&2; exit 1; }
# What the stacks copy lwIP from (lstack/meson.build's LSTACK_LWIP_SO).
LWIP_SO="$BUILD_DIR/lstack/stack/lwip/liblstack_lwip.so"
[[ -f "$LWIP_SO" ]] || LWIP_SO=/usr/lib/x86_64-linux-gnu/liblwip.so.0
[[ -f "$LWIP_SO" ]] || { echo "profile.sh: no lwIP library to name lwIP's functions after (liblstack_lwip.so in $BUILD_DIR)" >&2; exit 1; }
[[ -n "$OUT" ]] || OUT="$ROOT/bench/results/profile-$(date -u +%Y%m%dT%H%M%SZ)"
mkdir -p "$OUT" && OUT="$(cd "$OUT" && pwd)"

export LSTACK_TB="${LSTACK_TB:-lstkprof}" TB_CPU="$SERVER_CPU"
# shellcheck source=tests/system/testbed.sh
source "$ROOT/tests/system/testbed.sh"

SRV_PID=""
# shellcheck disable=SC2317 # called from the cleanup trap
prof_cleanup() {
    if [[ -n "$SRV_PID" ]] && kill -0 "$SRV_PID" 2>/dev/null; then
        kill -TERM "$SRV_PID" 2>/dev/null
        local i
        for ((i = 0; i < 300; i++)); do
            kill -0 "$SRV_PID" 2>/dev/null || break
            sleep 0.1
        done
        kill -KILL "$SRV_PID" 2>/dev/null || true
    fi
    [[ -z "$SRV_PID" ]] || wait "$SRV_PID" 2>/dev/null || true
    return 0
}
tb_on_cleanup prof_cleanup
tb_trap_cleanup
tb_up >"$OUT/tb_up.log" 2>&1 || { cat "$OUT/tb_up.log"; exit 1; }
ip netns exec "$TB_NS_CLI" sysctl -qw net.ipv4.ip_local_port_range="1024 65535"

CONF="$OUT/lstack.conf"
tb_write_conf "$CONF" 'init_fail = "exit";' "tcp_conn_count = $CONN_COUNT;" 'mbuf_count_per_conn = 64;' \
    "dpdk_args = [ \"--no-huge\", \"-m\", \"700\", \"--no-pci\", \"--file-prefix\", \"${LSTACK_TB}x\", \"-l\", \"$SERVER_CPU\", \"--vdev=net_af_packet0,iface=$TB_IF_SRV\" ];"

CG="$OUT/callgrind.out"
(
    ulimit -n 10240
    exec taskset -c "$SERVER_CPU" ip netns exec "$TB_NS_SRV" env LD_PRELOAD="$LIB" \
        GAZELLE_BIND_PROCNAME=redis-server LSTACK_CONF_PATH="$CONF" \
        valgrind --tool=callgrind --callgrind-out-file="$CG" \
        "$(command -v redis-server)" --port 6379 --bind 0.0.0.0 --protected-mode no --save '' \
        --appendonly no --maxclients 4000 --tcp-backlog 1024 --daemonize no --dir "$OUT"
) >"$OUT/server.log" 2>&1 &
SRV_PID=$!

ready=0
for ((i = 0; i < 600; i++)); do
    [[ "$(ip netns exec "$TB_NS_CLI" timeout 2 redis-cli -h "$TB_IP_STACK" ping 2>/dev/null)" == PONG ]] && { ready=1; break; }
    kill -0 "$SRV_PID" 2>/dev/null || break
    sleep 0.2
done
((ready)) || { echo "profile.sh: redis under valgrind did not come up:"; tail -n 20 "$OUT/server.log"; exit 1; }
cp "/proc/$SRV_PID/maps" "$OUT/maps"

# busy_polls of the stack (stackctl); empty for a build without them.
busy_polls() {
    local ctl="$BUILD_DIR/tools/stackctl"
    [[ -x "$ctl" ]] || return 0
    ip netns exec "$TB_NS_SRV" "$ctl" -p "$SRV_PID" --json --timeout 60 show stats 2>/dev/null |
        python3 -c 'import json, sys; print(int(json.load(sys.stdin)["total"]["busy_polls"]))' 2>/dev/null || true
}

# The idle phase: IDLE_S seconds without traffic, its own dump (what an
# idle poll round costs, callgrind_split.py --idle).
callgrind_control -z "$SRV_PID" >/dev/null
sleep "$IDLE_S"
callgrind_control -d "$SRV_PID" >/dev/null
# shellcheck disable=SC2012 # our own file names
idle_dump=$(ls -t "$CG".* 2>/dev/null | head -n 1)
busy0=$(busy_polls)

callgrind_control -z "$SRV_PID" >/dev/null
ip netns exec "$TB_NS_CLI" taskset -c "$CLIENT_CPU" redis-benchmark -h "$TB_IP_STACK" -p 6379 --csv \
    -n "$NREQ" "${ARGS[@]}" | tee "$OUT/bench.csv"
callgrind_control -d "$SRV_PID" >/dev/null
busy1=$(busy_polls)
sleep 1
echo "redis-benchmark -n $NREQ ${ARGS[*]}" >"$OUT/command.txt"

# shellcheck disable=SC2012 # our own file names
dump=$(ls -t "$CG".* 2>/dev/null | head -n 1)
[[ -n "$dump" && "$dump" != "$idle_dump" ]] || { echo "profile.sh: no callgrind dump" >&2; exit 1; }
IDLE_ARGS=()
if [[ -n "$idle_dump" && -n "$busy0" && -n "$busy1" ]]; then
    IDLE_ARGS=(--idle "$idle_dump" --busy-rounds $((busy1 - busy0)))
else
    echo "(no busy_polls from stackctl: idle poll rounds not taken out)"
fi
# requests = N per test run
tests=$(($(grep -c '^"' "$OUT/bench.csv") - 1))
python3 "$ROOT/bench/callgrind_split.py" "$dump" --requests $((NREQ * tests)) --maps "$OUT/maps" --top 40 \
    --lwip "$LWIP_SO" "${IDLE_ARGS[@]}" \
    --calls stack_poll,ev_wait,epoll_wait,sendto,malloc,free,sctx_loop_lock,pbuf_alloc,tcp_write,tcp_output,tcp_input \
    | tee "$OUT/split.txt"
echo "profile: $OUT"
