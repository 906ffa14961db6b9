#!/usr/bin/env bash
# bench-both-ends.sh - the same redis-benchmark with both ends on lstack,
# against what a user on one host would pick on the kernel. Run through
# `scripts/bench.sh --both-ends [options]` (or directly).
#
#   scripts/bench.sh --both-ends [--rounds N] [-n N] [--scenarios 1,5]
#                    [--out DIR] [--build DIR] [--server-cpu N] [--client-cpu N]
#
# Needs root, a built tree, redis-server/-cli/-benchmark, taskset,
# python3, librte-net-memif23; gnuplot for the chart.
set -u

# Four kinds of run, the same redis-server binary and flags, the server
# pinned to --server-cpu (default 1), redis-benchmark to --client-cpu
# (default 0), the same arguments as bench.sh's scenarios 1-6:
#   kernel-veth   kernel client -> kernel server over the test bed's veth pair
#                 (bench.sh's kernel baseline: 198.18.0.3, two namespaces)
#   kernel-lo     kernel client -> kernel server over loopback (127.0.0.1)
#   kernel-unix   kernel client -> kernel server over a unix socket
#   memif         redis-benchmark under lstack -> redis-server under lstack,
#                 two processes joined by DPDK's net_memif
#                 (tests/system/memif_lib.sh)
# The kinds run one at a time, their order rotated each round. Output as
# bench.sh's (default bench/results/<UTC>-both-ends/): results.json,
# summary.txt (the table, also printed: req/s and p50/p99 per kind, and
# memif / each kernel kind), chart.png (gnuplot), commands.txt,
# versions.txt, the two lstack.conf files, raw/<scenario>-r<round>-<kind>/.
# Targets (reported, not enforced): scenario 1 memif >= 5x
# kernel-veth and >= 3x kernel-unix; scenario 5 memif >= 250k req/s with
# p99 <= 20 us.
#
# shellcheck source-path=SCRIPTDIR/..

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
usage() { sed -n '2,/^set -u$/{/^set -u$/d;s/^# \{0,1\}//;p}' "${BASH_SOURCE[0]}"; }
die_usage() { echo "bench.sh --both-ends: $*" >&2; exit 2; }

ROUNDS=3
NREQ=""
SCENARIOS="1,2,3,4,5,6"
OUT=""
BUILD_DIR="${BUILD:-build}"
SERVER_CPU=1
CLIENT_CPU=0
while (($# > 0)); do
    case "$1" in
    --both-ends) shift ;;
    --rounds) ROUNDS="${2:-}"; shift 2 || { usage >&2; exit 2; } ;;
    -n) NREQ="${2:-}"; shift 2 || { usage >&2; exit 2; } ;;
    --scenarios) SCENARIOS="${2:-}"; shift 2 || { usage >&2; exit 2; } ;;
    --out) OUT="${2:-}"; shift 2 || { usage >&2; exit 2; } ;;
    --build) BUILD_DIR="${2:-}"; shift 2 || { usage >&2; exit 2; } ;;
    --server-cpu) SERVER_CPU="${2:-}"; shift 2 || { usage >&2; exit 2; } ;;
    --client-cpu) CLIENT_CPU="${2:-}"; shift 2 || { usage >&2; exit 2; } ;;
    -h | --help) usage; exit 0 ;;
    *) die_usage "unknown option '$1' (with --both-ends: --rounds -n --scenarios --out --build --server-cpu --client-cpu)" ;;
    esac
done
[[ "$ROUNDS" =~ ^[1-9][0-9]*$ ]] || die_usage "--rounds wants a positive integer"
[[ -z "$NREQ" || "$NREQ" =~ ^[1-9][0-9]*$ ]] || die_usage "-n wants a positive integer"
[[ "$SCENARIOS" =~ ^[1-6](,[1-6])*$ ]] || die_usage "--scenarios wants a list of 1..6"
[[ "$SERVER_CPU" =~ ^[0-9]+$ && "$CLIENT_CPU" =~ ^[0-9]+$ && "$SERVER_CPU" != "$CLIENT_CPU" ]] ||
    die_usage "two different CPU ids"
[[ $(id -u) -eq 0 ]] || { echo "bench.sh --both-ends: must run as root" >&2; exit 1; }
for t in ip taskset timeout redis-server redis-cli redis-benchmark python3; do
    command -v "$t" >/dev/null 2>&1 || { echo "bench.sh --both-ends: '$t' not found" >&2; exit 1; }
done
dpkg-query -W -f='${db:Status-Abbrev}' librte-net-memif23 2>/dev/null | grep -q '^ii' ||
    { echo "bench.sh --both-ends: librte-net-memif23 is not installed (scripts/install-deps.sh)" >&2; exit 1; }
[[ "$BUILD_DIR" == /* ]] || BUILD_DIR="$ROOT/$BUILD_DIR"
LIB="${LSTACK_PRELOAD:-$BUILD_DIR/lstack/liblstack.so}"
[[ -f "$LIB" ]] || { echo "bench.sh --both-ends: not built: $LIB" >&2; exit 1; }
REDIS_SERVER="$(command -v redis-server)"

# The scenarios: bench.sh's arguments and request counts.
declare -A S_ARGS=() S_N=()
S_ARGS[1]="-c 50 -P 1 -t set,get -d 3"; S_N[1]=200000
S_ARGS[2]="-c 1000 -r 1000000 -t set,get -d 3"; S_N[2]=200000
S_ARGS[3]="-c 50 -P 16 -t set,get"; S_N[3]=1000000
S_ARGS[4]="-c 50 -t set,get -d 1024"; S_N[4]=200000
S_ARGS[5]="-c 1 -t ping"; S_N[5]=50000
S_ARGS[6]="-c 10 -t set,get -d 65536"; S_N[6]=40000
IFS=, read -r -a SCEN_LIST <<<"$SCENARIOS"
KINDS=(kernel-veth kernel-lo kernel-unix memif)

[[ -n "$OUT" ]] || OUT="$ROOT/bench/results/$(date -u +%Y%m%dT%H%M%SZ)-both-ends"
mkdir -p "$OUT/raw" || exit 1
OUT="$(cd "$OUT" && pwd)"

export LSTACK_TB="${LSTACK_TB:-lstkboth}"
export TB_CPU="$SERVER_CPU"
# shellcheck source=tests/system/testbed.sh
source "$ROOT/tests/system/testbed.sh"
# shellcheck source=tests/preload_env.sh
source "$ROOT/tests/preload_env.sh"
# shellcheck source=tests/system/memif_lib.sh
source "$ROOT/tests/system/memif_lib.sh"

WORK="$(mktemp -d "/tmp/lstack-bench-${LSTACK_TB}.XXXXXX")"
SRV_PID="" CLI_PID=""
log() { echo "bench: $*"; }
# shellcheck disable=SC2317 # the cleanup trap
both_cleanup() {
    local pid
    for pid in "$CLI_PID" "$SRV_PID"; do
        [[ -n "$pid" ]] || continue
        kill -TERM "$pid" 2>/dev/null && { tb_wait_gone "$pid" 10 || kill -KILL "$pid" 2>/dev/null; }
        wait "$pid" 2>/dev/null
    done
    m_down
    rm -rf "$WORK"
}
tb_on_cleanup both_cleanup
tb_trap_cleanup

tb_up >"$WORK/tb_up.log" 2>&1 || { cat "$WORK/tb_up.log"; exit 1; }
tb_add_kernel_addr >>"$WORK/tb_up.log" 2>&1 || { cat "$WORK/tb_up.log"; exit 1; }
ip netns exec "$TB_NS_CLI" sysctl -qw net.ipv4.ip_local_port_range="1024 65535"
m_init "${LSTACK_TB}" "$WORK" "$LIB" "$SERVER_CPU" "$CLIENT_CPU" || { echo "cannot make the memif namespace" >&2; exit 1; }
ip netns exec "$M_NS" sysctl -qw net.ipv4.ip_local_port_range="1024 65535"
# As bench.sh: 1000 clients + listener + redis-cli, 64 mbufs each; both sides.
m_conf server 'tcp_conn_count = 1200;' 'mbuf_count_per_conn = 64;'
m_conf client 'tcp_conn_count = 1200;' 'mbuf_count_per_conn = 64;'
cp "${M_CONF[server]}" "$OUT/lstack-memif-server.conf"
cp "${M_CONF[client]}" "$OUT/lstack-memif-client.conf"
UNIX_SOCK="$WORK/redis.sock"

# start_server KIND DIR : redis-server for KIND, pinned; SRV_PID is its own
# PID (the subshell execs, and so do taskset, ip netns exec and env).
start_server() {
    local kind="$1" dir="$2"
    local -a flags=(--port 6379 --bind 0.0.0.0 --protected-mode no --save '' --appendonly no
        --maxclients 4000 --tcp-backlog 1024 --daemonize no --dir "$dir" --logfile "$dir/redis.log")
    local -a pre=(taskset -c "$SERVER_CPU" ip netns exec "$M_NS")
    mkdir -p "$dir"
    case "$kind" in
    kernel-veth) pre=(taskset -c "$SERVER_CPU" ip netns exec "$TB_NS_SRV") ;;
    kernel-unix) flags+=(--unixsocket "$UNIX_SOCK" --unixsocketperm 700) ;;
    esac
    if [[ "$kind" == memif ]]; then
        (ulimit -n 10240 && m_run server "$REDIS_SERVER" "${flags[@]}") >"$dir/stdout.log" 2>&1 &
    else
        (ulimit -n 10240 && exec "${pre[@]}" "$REDIS_SERVER" "${flags[@]}") >"$dir/stdout.log" 2>&1 &
    fi
    SRV_PID=$!
}

# client_cmd KIND : the redis-benchmark prefix for KIND (target included).
client_cmd() {
    case "$1" in
    kernel-veth) echo "ip netns exec $TB_NS_CLI taskset -c $CLIENT_CPU redis-benchmark -h $TB_IP_KERNEL -p 6379" ;;
    kernel-lo) echo "ip netns exec $M_NS taskset -c $CLIENT_CPU redis-benchmark -h 127.0.0.1 -p 6379" ;;
    kernel-unix) echo "ip netns exec $M_NS taskset -c $CLIENT_CPU redis-benchmark -s $UNIX_SOCK" ;;
    memif) echo "taskset -c $CLIENT_CPU ip netns exec $M_NS env LD_PRELOAD=$M_PRELOAD GAZELLE_BIND_PROCNAME=redis-benchmark LSTACK_CONF_PATH=${M_CONF[client]} redis-benchmark -h $M_IP_SRV -p 6379" ;;
    esac
}

wait_ready() { # KIND
    local i ns=$M_NS
    [[ "$1" == kernel-veth ]] && ns=$TB_NS_SRV
    for ((i = 0; i < 300; i++)); do
        [[ "$(ip netns exec "$ns" timeout 2 redis-cli -h 127.0.0.1 -p 6379 ping 2>&1)" == PONG ]] &&
            [[ "$1" != kernel-unix || -S "$UNIX_SOCK" ]] && return 0
        kill -0 "$SRV_PID" 2>/dev/null || return 1
        sleep 0.2
    done
    return 1
}

stop_server() {
    [[ -n "$SRV_PID" ]] || return 0
    local rc=0
    kill -TERM "$SRV_PID" 2>/dev/null
    tb_wait_gone "$SRV_PID" 30 || { kill -KILL "$SRV_PID" 2>/dev/null; rc=1; }
    wait "$SRV_PID" 2>/dev/null || rc=$?
    SRV_PID=""
    return "$rc"
}

{
    echo "lstack_git_rev=$(git -C "$ROOT" rev-parse HEAD 2>/dev/null || echo unknown)"
    echo "lstack_git_dirty=$([[ -n "$(git -C "$ROOT" status --porcelain --untracked-files=no -- lstack meson.build 2>/dev/null)" ]] && echo 1 || echo 0)"
    echo "redis=$("$REDIS_SERVER" --version)"
    echo "dpdk=$(pkg-config --modversion libdpdk 2>/dev/null || echo '?')"
    echo "kernel=$(uname -r)"
    echo "cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1) x $(nproc --all)"
    echo "date_utc=$(date -u +%Y-%m-%dT%H:%M:%SZ)"
    echo "load_at_start=$(cut -d' ' -f1-3 /proc/loadavg)"
} >"$OUT/versions.txt"
{
    echo "# scripts/bench.sh --both-ends --rounds $ROUNDS --scenarios $SCENARIOS${NREQ:+ -n $NREQ}"
    echo "server: taskset -c $SERVER_CPU redis-server --port 6379 --bind 0.0.0.0 --protected-mode no --save '' --appendonly no --maxclients 4000 --tcp-backlog 1024 (kernel-unix: --unixsocket; memif: under lstack, lstack-memif-server.conf)"
    for k in "${KINDS[@]}"; do echo "$k client: $(client_cmd "$k") --csv -n N ARGS"; done
    for s in "${SCEN_LIST[@]}"; do echo "scenario $s client: ... --csv -n ${NREQ:-${S_N[$s]}} ${S_ARGS[$s]}"; done
} >"$OUT/commands.txt"

FAILED=0
run_one() { # SCENARIO ROUND KIND
    local s="$1" r="$2" kind="$3" n="${NREQ:-${S_N[$1]}}"
    local d="$OUT/raw/s$s-r$r-$kind"
    local -a args cmd
    read -r -a args <<<"${S_ARGS[$s]}"
    read -r -a cmd <<<"$(client_cmd "$kind")"
    rm -rf "$d"
    mkdir -p "$d"
    start_server "$kind" "$d/redis"
    if ! wait_ready "$kind"; then
        log "scenario $s round $r $kind: the server did not answer PING"
        tail -n 5 "$d/redis/stdout.log" | sed 's/^/  | /'
        echo not_ready >"$d/status"
        stop_server
        FAILED=$((FAILED + 1))
        return
    fi
    times >"$d/times.0"
    cat "/proc/$SRV_PID/stat" >"$d/pid_stat.0"
    cat /proc/stat >"$d/stat.0"
    date +%s%N >"$d/t.0"
    local rc=0
    timeout 300 "${cmd[@]}" --csv -n "$n" "${args[@]}" >"$d/bench.csv" 2>"$d/bench.err" &
    CLI_PID=$!
    wait "$CLI_PID" || rc=$?
    CLI_PID=""
    date +%s%N >"$d/t.1"
    cat /proc/stat >"$d/stat.1"
    cat "/proc/$SRV_PID/stat" >"$d/pid_stat.1" 2>/dev/null
    times >"$d/times.1"
    echo "$rc" >"$d/client_exit"
    stop_server || log "scenario $s round $r $kind: the server exited with an error status"
    if ((rc == 0)) && grep -q '^"test","rps"' "$d/bench.csv"; then
        echo ok >"$d/status"
        log "scenario $s round $r $kind: $(python3 "$ROOT/bench/both_ends.py" oneline "$d")"
    else
        echo failed >"$d/status"
        log "scenario $s round $r $kind: redis-benchmark exited $rc: $(tr '\r' '\n' <"$d/bench.err" | grep -v '^$' | tail -n 2 | tr '\n' ' ')"
        FAILED=$((FAILED + 1))
    fi
}

log "output: $OUT; server CPU $SERVER_CPU, client CPU $CLIENT_CPU, $ROUNDS round(s), scenarios $SCENARIOS"
log "machine: $(uptime | sed 's/^ *//')"
for ((r = 1; r <= ROUNDS; r++)); do
    order=()
    for ((i = 0; i < ${#KINDS[@]}; i++)); do order+=("${KINDS[(i + r - 1) % ${#KINDS[@]}]}"); done
    for s in "${SCEN_LIST[@]}"; do
        for k in "${order[@]}"; do run_one "$s" "$r" "$k"; done
    done
done
echo "load_at_end=$(cut -d' ' -f1-3 /proc/loadavg)" >>"$OUT/versions.txt"

agg_rc=0
python3 "$ROOT/bench/both_ends.py" aggregate "$OUT" --rounds "$ROUNDS" --scenarios "$SCENARIOS" \
    --server-cpu "$SERVER_CPU" --client-cpu "$CLIENT_CPU" || agg_rc=$?
if command -v gnuplot >/dev/null 2>&1 && [[ -f "$OUT/chart.gp" ]]; then
    (cd "$OUT" && gnuplot chart.gp) >"$WORK/gnuplot.log" 2>&1 || { log "gnuplot failed"; agg_rc=1; }
fi
log "results in $OUT"
((FAILED == 0 && agg_rc == 0)) || { log "FAILED: $FAILED run(s), aggregation status $agg_rc"; exit 1; }
exit 0
