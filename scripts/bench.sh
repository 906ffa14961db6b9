#!/usr/bin/env bash
# bench.sh - redis-server on the kernel vs the same redis-server under lstack,
# side by side in one run (a benchmark, not a test: targets are reported,
# not enforced). On the test bed's namespace pair (tests/system/testbed.sh):
# per round and scenario the same redis-server runs on the kernel and under
# lstack, same flags, same pinned CPU; the same redis-benchmark runs from the
# client namespace on another CPU; the order alternates each round.
#
#   scripts/bench.sh [OPTIONS]          (-h: the options)
#
# Output: bench/results/<UTC timestamp>/ (ignored by git) or --out DIR:
# summary.txt, results.json/.csv, runs.csv, chart.png, commands.txt,
# versions.txt, raw/. Exit 0 when every run completed and parsed, 1
# otherwise, 2 on a usage error. Needs root and a built tree. What each
# option and figure means: docs/performance.md#running-the-benchmark.
# shellcheck source-path=SCRIPTDIR/..
set -u

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
for a in "$@"; do
    [[ "$a" == --both-ends ]] && exec "$ROOT/scripts/bench-both-ends.sh" "$@"
done

usage() {
    cat <<'EOF'
scripts/bench.sh [options]   redis-server on the kernel vs under lstack, side by side
  --rounds N            rounds (default 3; 1 with --short)
  -n N                  requests per test (default: per scenario)
  --scenarios LIST      of 1-7 (default 1,2,3,4,5,6):
                          1  -c 50 -P 1 -t set,get -d 3
                          2  -c 1000 -r 1000000 -t set,get -d 3
                          3  -c 50 -P 16 -t set,get
                          4  -c 50 -t set,get -d 1024
                          5  -c 1 -t ping
                          6  -c 10 -t set,get -d 65536
                          7  -c 50 -t set,get -d 3 --threads 2, servers with io-threads 2
  --short               one round, small -n, every scenario: does the command work?
  --out DIR, --build DIR, --server-cpu N (1), --client-cpu N (0), --retries N (2)
  --pmd af_xdp|af_packet          the vdev lstack drives the server veth with (af_xdp)
  --perf                          a perf profile of every run
  --base-build DIR                a second lstack build, kind "base", in the same run
  --rtw [--rtw-cpus LIST]         lstack in run-to-wakeup too, kind "rtw"
  --io-cpus LIST                  taskset list of scenario 7's servers
  --kernel-offload on|off         the kernel server's TSO/GSO/GRO on the veths (on)
  --client-gro on|off             GRO on the client veth (off)
  --rps on|off                    RPS on both veths (off)
  --client-napi off|threaded[:CPU|:any]   the client veth's receive in a NAPI kthread
  --both-ends                     both ends on lstack over net_memif (bench-both-ends.sh)
Details: docs/performance.md#running-the-benchmark
EOF
}

ROUNDS=""
NREQ=""
SCENARIOS="1,2,3,4,5,6"
SHORT=0
OUT=""
BUILD_DIR="${BUILD:-build}"
SERVER_CPU=1
CLIENT_CPU=0
PERF=0
RETRIES=""
PMD=af_xdp
BASE_DIR=""
KERNEL_OFFLOAD=on
CLIENT_GRO=off
RPS=off
CLIENT_NAPI=off
NAPI_SET=0
RTW=0
RTW_CPUS=""
IO_CPUS=""

die_usage() { echo "bench.sh: $*" >&2; exit 2; }
while (($# > 0)); do
    case "$1" in
    --rounds) ROUNDS="${2:-}"; shift 2 || { usage >&2; exit 2; } ;;
    -n) NREQ="${2:-}"; shift 2 || { usage >&2; exit 2; } ;;
    --scenarios) SCENARIOS="${2:-}"; shift 2 || { usage >&2; exit 2; } ;;
    --short) SHORT=1; shift ;;
    --out) OUT="${2:-}"; shift 2 || { usage >&2; exit 2; } ;;
    --build) BUILD_DIR="${2:-}"; shift 2 || { usage >&2; exit 2; } ;;
    --server-cpu) SERVER_CPU="${2:-}"; shift 2 || { usage >&2; exit 2; } ;;
    --client-cpu) CLIENT_CPU="${2:-}"; shift 2 || { usage >&2; exit 2; } ;;
    --perf) PERF=1; shift ;;
    --retries) RETRIES="${2:-}"; shift 2 || { usage >&2; exit 2; } ;;
    --pmd) PMD="${2:-}"; shift 2 || { usage >&2; exit 2; } ;;
    --base-build) BASE_DIR="${2:-}"; shift 2 || { usage >&2; exit 2; }
        [[ -n "$BASE_DIR" ]] || die_usage "--base-build wants a build directory" ;;
    --kernel-offload) KERNEL_OFFLOAD="${2:-}"; shift 2 || { usage >&2; exit 2; } ;;
    --client-gro) CLIENT_GRO="${2:-}"; shift 2 || { usage >&2; exit 2; } ;;
    --rps) RPS="${2:-}"; shift 2 || { usage >&2; exit 2; } ;;
    --client-napi) CLIENT_NAPI="${2:-}"; shift 2 || { usage >&2; exit 2; } ;;
    --rtw) RTW=1; shift ;;
    --rtw-cpus) RTW_CPUS="${2:-}"; RTW=1; shift 2 || { usage >&2; exit 2; } ;;
    --io-cpus) IO_CPUS="${2:-}"; shift 2 || { usage >&2; exit 2; } ;;
    -h | --help) usage; exit 0 ;;
    *) echo "bench.sh: unknown option '$1'" >&2; usage >&2; exit 2 ;;
    esac
done

[[ -z "$ROUNDS" || "$ROUNDS" =~ ^[1-9][0-9]*$ ]] || die_usage "--rounds wants a positive integer, not '$ROUNDS'"
[[ -z "$NREQ" || "$NREQ" =~ ^[1-9][0-9]*$ ]] || die_usage "-n wants a positive integer, not '$NREQ'"
[[ "$SCENARIOS" =~ ^[1-7](,[1-7])*$ ]] || die_usage "--scenarios wants a list of 1..7 like 1,3, not '$SCENARIOS'"
[[ "$SERVER_CPU" =~ ^[0-9]+$ && "$CLIENT_CPU" =~ ^[0-9]+$ ]] || die_usage "CPU ids are integers"
[[ "$SERVER_CPU" != "$CLIENT_CPU" ]] || die_usage "server and client need different CPUs"
[[ "$PMD" == af_xdp || "$PMD" == af_packet ]] || die_usage "--pmd wants af_xdp or af_packet, not '$PMD'"
[[ "$KERNEL_OFFLOAD" == on || "$KERNEL_OFFLOAD" == off ]] || die_usage "--kernel-offload wants on or off, not '$KERNEL_OFFLOAD'"
[[ "$CLIENT_GRO" == on || "$CLIENT_GRO" == off ]] || die_usage "--client-gro wants on or off, not '$CLIENT_GRO'"
[[ "$RPS" == on || "$RPS" == off ]] || die_usage "--rps wants on or off, not '$RPS'"
[[ "$CLIENT_NAPI" =~ ^(off|threaded(:([0-9]+|any))?)$ ]] ||
    die_usage "--client-napi wants off, threaded, threaded:CPU or threaded:any, not '$CLIENT_NAPI'"
# NAPI_CPU: the taskset list of the client veth's NAPI thread ("" = unpinned).
NAPI_CPU=""
if [[ "$CLIENT_NAPI" != off ]]; then
    NAPI_CPU="${CLIENT_NAPI#threaded}"
    NAPI_CPU="${NAPI_CPU#:}"
    [[ -n "$NAPI_CPU" ]] || NAPI_CPU="$CLIENT_CPU"
    [[ "$NAPI_CPU" == any ]] && NAPI_CPU=""
    CLIENT_NAPI="threaded:${NAPI_CPU:-any}"
    # veth has NAPI (and so a thread to run it) only with GRO on.
    CLIENT_GRO=on
fi
[[ -z "$RTW_CPUS" || "$RTW_CPUS" =~ ^[0-9]+(-[0-9]+)?(,[0-9]+(-[0-9]+)?)*$ ]] ||
    die_usage "--rtw-cpus wants a CPU list like 1 or 0,1, not '$RTW_CPUS'"
[[ -n "$RTW_CPUS" ]] || RTW_CPUS="$SERVER_CPU"
[[ -z "$IO_CPUS" || "$IO_CPUS" =~ ^[0-9]+(-[0-9]+)?(,[0-9]+(-[0-9]+)?)*$ ]] ||
    die_usage "--io-cpus wants a CPU list like 1 or 0,1, not '$IO_CPUS'"
[[ -n "$IO_CPUS" ]] || IO_CPUS="$SERVER_CPU"
if [[ -z "$ROUNDS" ]]; then
    if ((SHORT)); then ROUNDS=1; else ROUNDS=3; fi
fi
[[ -z "$RETRIES" || "$RETRIES" =~ ^[0-9]+$ ]] || die_usage "--retries wants an integer, not '$RETRIES'"
if [[ -z "$RETRIES" ]]; then
    if ((SHORT)); then RETRIES=0; else RETRIES=2; fi
fi
# Bound on one redis-benchmark run (a stuck run fails instead of hanging).
CLIENT_TIMEOUT=900
((SHORT)) && CLIENT_TIMEOUT=120

# ---------------------------------------------------------------------------
# scenarios: arguments and default request counts (full / --short). The full
# counts make each test last a few seconds on the kernel on a small VM.

declare -A S_ARGS=() S_N=() S_NSHORT=()
S_ARGS[1]="-c 50 -P 1 -t set,get -d 3"; S_N[1]=200000; S_NSHORT[1]=10000
S_ARGS[2]="-c 1000 -r 1000000 -t set,get -d 3"; S_N[2]=200000; S_NSHORT[2]=10000
S_ARGS[3]="-c 50 -P 16 -t set,get"; S_N[3]=1000000; S_NSHORT[3]=50000
S_ARGS[4]="-c 50 -t set,get -d 1024"; S_N[4]=200000; S_NSHORT[4]=10000
S_ARGS[5]="-c 1 -t ping"; S_N[5]=50000; S_NSHORT[5]=2000
S_ARGS[6]="-c 10 -t set,get -d 65536"; S_N[6]=40000; S_NSHORT[6]=1000
# 7: Redis io-threads: the server flags of every kind get S_SRV[7].
S_ARGS[7]="-c 50 -t set,get -d 3 --threads 2"; S_N[7]=200000; S_NSHORT[7]=10000
declare -A S_SRV=() S_TASKSET=()
S_SRV[7]="--io-threads 2 --io-threads-do-reads yes"
S_TASKSET[7]="" # set to --io-cpus below

IFS=, read -r -a SCEN_LIST <<<"$SCENARIOS"
S_TASKSET[7]="$IO_CPUS"

# ---------------------------------------------------------------------------
# prerequisites

if [[ $(id -u) -ne 0 ]]; then
    echo "bench.sh: must run as root (network namespaces, hugepages)" >&2
    exit 1
fi
for t in ip ethtool sysctl timeout taskset redis-server redis-cli redis-benchmark python3; do
    command -v "$t" >/dev/null 2>&1 || { echo "bench.sh: '$t' not found (scripts/install-deps.sh)" >&2; exit 1; }
done
if ((PERF)); then
    command -v perf >/dev/null 2>&1 || { echo "bench.sh: --perf needs perf (Debian: linux-perf)" >&2; exit 1; }
fi
NCPU=$(nproc --all)
((SERVER_CPU < NCPU && CLIENT_CPU < NCPU)) || { echo "bench.sh: this machine has CPUs 0..$((NCPU - 1))" >&2; exit 1; }
[[ -z "$NAPI_CPU" ]] || ((NAPI_CPU < NCPU)) || { echo "bench.sh: --client-napi: this machine has CPUs 0..$((NCPU - 1))" >&2; exit 1; }

[[ "$BUILD_DIR" == /* ]] || BUILD_DIR="$ROOT/$BUILD_DIR"
LIB="${LSTACK_PRELOAD:-$BUILD_DIR/lstack/liblstack.so}"
[[ -f "$LIB" ]] || { echo "bench.sh: preload library not built: $LIB (meson setup build && ninja -C build)" >&2; exit 1; }
# The kinds of server measured; "base" only with --base-build.
KINDS=(kernel lstack)
BASE_LIB=""
if [[ -n "$BASE_DIR" ]]; then
    [[ "$BASE_DIR" == /* ]] || BASE_DIR="$ROOT/$BASE_DIR"
    BASE_LIB="$BASE_DIR/lstack/liblstack.so"
    [[ -f "$BASE_LIB" ]] || { echo "bench.sh: --base-build: no $BASE_LIB (a built lstack tree's build directory)" >&2; exit 1; }
    # Allowed (an A/A run shows the bed's noise), but said.
    [[ "$BASE_LIB" -ef "$LIB" ]] && echo "bench.sh: note: the base is the measured library itself ($LIB)"
    KINDS+=(base)
fi
((RTW)) && KINDS+=(rtw)
# stackctl of each lstack build: the server's poll rounds before and after
# each client run (its busy time per request).
STACKCTL="$BUILD_DIR/tools/stackctl"
BASE_STACKCTL="${BASE_DIR:+$BASE_DIR/tools/stackctl}"
[[ -x "$STACKCTL" ]] || echo "bench.sh: note: no $STACKCTL: no stack busy time per request"
# The path, not its target: Debian's redis-server is a symlink to
# redis-check-rdb, which picks its role from argv[0].
REDIS_SERVER="$(command -v redis-server)"

if [[ -z "$OUT" ]]; then
    OUT="$ROOT/bench/results/$(date -u +%Y%m%dT%H%M%SZ)"
fi
mkdir -p "$OUT/raw" || { echo "bench.sh: cannot create $OUT" >&2; exit 1; }
OUT="$(cd "$OUT" && pwd)"

# ---------------------------------------------------------------------------
# the test bed: own namespace pair, the stack on SERVER_CPU

export LSTACK_TB="${LSTACK_TB:-lstkbench}"
export TB_CPU="$SERVER_CPU"
export TB_HUGEPAGES="${TB_HUGEPAGES:-512}"
export TB_PMD="$PMD"
# shellcheck source=tests/system/testbed.sh
source "$ROOT/tests/system/testbed.sh"

PORT_KERNEL=6380
PORT_LSTACK=6379
PORT_BASE=6381
PORT_RTW=6382
SRV_PID=""
CLI_PID=""
PERF_PID=""
WORK="$(mktemp -d "/tmp/lstack-bench-${LSTACK_TB}.XXXXXX")"

log() { echo "bench: $*"; }

# shellcheck disable=SC2317 # called from the cleanup trap
bench_cleanup() {
    local pid
    for pid in "$PERF_PID" "$CLI_PID" "$SRV_PID"; do
        [[ -n "$pid" ]] || continue
        if kill -0 "$pid" 2>/dev/null; then
            kill -TERM "$pid" 2>/dev/null || true
            tb_wait_gone "$pid" 10 || kill -KILL "$pid" 2>/dev/null || true
        fi
        wait "$pid" 2>/dev/null || true
    done
    PERF_PID="" CLI_PID="" SRV_PID=""
    offload_restore
    napi_undo
    [[ -n "$WORK" && -d "$WORK" ]] && rm -rf "$WORK"
    return 0
}
tb_on_cleanup bench_cleanup
tb_trap_cleanup

log "output: $OUT"
log "bed '$LSTACK_TB': server CPU $SERVER_CPU, client CPU $CLIENT_CPU, $ROUNDS round(s), scenarios $SCENARIOS, lstack on net_$PMD, kernel offloads $KERNEL_OFFLOAD, client GRO $CLIENT_GRO, RPS $RPS, client NAPI $CLIENT_NAPI${BASE_DIR:+, base build $BASE_DIR}$( ((RTW)) && echo ", run-to-wakeup kind (num_cpus $RTW_CPUS)")"
tb_up >"$WORK/tb_up.log" 2>&1 || { cat "$WORK/tb_up.log"; echo "bench.sh: test bed did not come up" >&2; exit 1; }
tb_add_kernel_addr >>"$WORK/tb_up.log" 2>&1 || { cat "$WORK/tb_up.log"; echo "bench.sh: cannot add the kernel address" >&2; exit 1; }
# -c 1000 with reconnects per test: every ephemeral port there is.
ip netns exec "$TB_NS_CLI" sysctl -qw net.ipv4.ip_local_port_range="1024 65535"
# --client-gro: set once for the whole run (the bed is this run's own and
# goes with it); a veth that refuses it ends the run rather than measuring
# something else than asked.
if [[ "$CLIENT_GRO" == on ]]; then
    ip netns exec "$TB_NS_CLI" ethtool -K "$TB_IF_CLI" gro on >/dev/null 2>&1
    if [[ "$(ip netns exec "$TB_NS_CLI" ethtool -k "$TB_IF_CLI" 2>/dev/null |
        sed -n 's/^generic-receive-offload: \(on\|off\).*/\1/p')" != on ]]; then
        echo "bench.sh: cannot turn GRO on on $TB_IF_CLI (--client-gro on)" >&2
        exit 1
    fi
fi
# --rps on: each veth's rx queues steer to its own side's CPU, once for the
# whole run; a queue that does not take it ends the run.
# rps_set NS IF CPU : write the mask of CPU to every rx queue of IF in NS.
rps_set() {
    local q ok=1 mask
    mask=$(printf '%x' $((1 << $3)))
    for q in $(ip netns exec "$1" sh -c "ls -d /sys/class/net/$2/queues/rx-*"); do
        ip netns exec "$1" sh -c "echo $mask >$q/rps_cpus" 2>/dev/null || ok=0
        [[ "$(ip netns exec "$1" cat "$q/rps_cpus" 2>/dev/null | tr -d ',0')" == "$(echo "$mask" | tr -d 0)" ]] || ok=0
    done
    ((ok)) || { echo "bench.sh: cannot set rps_cpus $mask on $2 (--rps on)" >&2; exit 1; }
}
if [[ "$RPS" == on ]]; then
    rps_set "$TB_NS_CLI" "$TB_IF_CLI" "$CLIENT_CPU"
    rps_set "$TB_NS_SRV" "$TB_IF_SRV" "$SERVER_CPU"
fi

# 1000 clients + listener + redis-cli; 64 mbufs each covers a full 64 KiB
# window of 1460-byte segments in flight.
CONF="$OUT/lstack.conf"
tb_write_conf "$CONF" 'init_fail = "exit";' 'tcp_conn_count = 1200;' 'mbuf_count_per_conn = 64;'

# conf_for_build CONF KEYS_DEF OUT : CONF without the keys KEYS_DEF (an
# lstack/conf/conf_keys.def) does not define; prints the keys left out.
conf_for_build() {
    awk -v keys="$2" '
        BEGIN {
            while ((getline line < keys) > 0)
                if (match(line, /^LSTACK_CONF_KEY\([a-z0-9_]+,/))
                    known[substr(line, 17, RLENGTH - 17)] = 1
        }
        /^[[:space:]]*[a-z0-9_]+[[:space:]]*=/ {
            k = $0; sub(/^[[:space:]]*/, "", k); sub(/[[:space:]]*=.*/, "", k)
            if (!(k in known)) { dropped = dropped " " k; next }
        }
        { print }
        END { print substr(dropped, 2) > "/dev/stderr" }
    ' "$1" 2>"$WORK/conf_dropped" >"$3" || return 1
    cat "$WORK/conf_dropped"
}

# --rtw: the same keys, in run-to-wakeup, the stack thread on RTW_CPUS.
CONF_RTW=""
if ((RTW)); then
    CONF_RTW="$OUT/lstack-rtw.conf"
    tb_write_conf "$CONF_RTW" 'init_fail = "exit";' 'tcp_conn_count = 1200;' 'mbuf_count_per_conn = 64;' \
        'stack_thread_mode = "run-to-wakeup";' "num_cpus = \"$RTW_CPUS\";"
fi

# The base build's conf: the same keys, less those its source does not know.
BASE_CONF=""
BASE_SRC=""
BASE_CONF_DROPPED=""
if [[ -n "$BASE_DIR" ]]; then
    BASE_CONF="$OUT/lstack-base.conf"
    BASE_SRC=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["directories"]["source"])' \
        "$BASE_DIR/meson-info/meson-info.json" 2>/dev/null)
    if [[ -f "$BASE_SRC/lstack/conf/conf_keys.def" ]]; then
        BASE_CONF_DROPPED=$(conf_for_build "$CONF" "$BASE_SRC/lstack/conf/conf_keys.def" "$BASE_CONF") ||
            { echo "bench.sh: cannot write $BASE_CONF" >&2; exit 1; }
        [[ -z "$BASE_CONF_DROPPED" ]] ||
            log "base build: its lstack-base.conf leaves out keys $BASE_CONF_DROPPED (unknown to $BASE_SRC)"
    else
        cp "$CONF" "$BASE_CONF"
        log "base build: no source tree found through $BASE_DIR/meson-info: lstack-base.conf is lstack.conf as it is"
    fi
fi

# --kernel-offload off: "NS IF FEATURE" turned off during kernel runs, and
# what each was before (restored by offload_restore).
OFFLOAD_FEATURES=("$TB_NS_SRV $TB_IF_SRV tso" "$TB_NS_SRV $TB_IF_SRV gso" "$TB_NS_SRV $TB_IF_SRV gro"
    "$TB_NS_CLI $TB_IF_CLI tso")
OFFLOAD_SAVED=()
declare -A ETHTOOL_NAME=([tso]=tcp-segmentation-offload [gso]=generic-segmentation-offload
    [gro]=generic-receive-offload)

offload_state() { # NS IF FEATURE : prints on or off
    ip netns exec "$1" ethtool -k "$2" 2>/dev/null |
        sed -n "s/^${ETHTOOL_NAME[$3]}: \(on\|off\).*/\1/p"
}

# offload_off : every OFFLOAD_FEATURES off; fails (and says which) when one
# stays on. Prints the state it leaves, for the run's record.
offload_off() {
    local f ns ifc feat was rc=0
    for f in "${OFFLOAD_FEATURES[@]}"; do
        read -r ns ifc feat <<<"$f"
        was=$(offload_state "$ns" "$ifc" "$feat")
        [[ -n "$was" ]] && OFFLOAD_SAVED+=("$ns $ifc $feat $was")
        ip netns exec "$ns" ethtool -K "$ifc" "$feat" off >/dev/null 2>&1
        if [[ "$(offload_state "$ns" "$ifc" "$feat")" != off ]]; then
            log "WARNING: cannot turn $feat off on $ifc"
            rc=1
        fi
        echo "$ifc $feat $(offload_state "$ns" "$ifc" "$feat") (was ${was:-?})"
    done
    return "$rc"
}

# shellcheck disable=SC2317 # also called from the cleanup trap
offload_restore() {
    local f ns ifc feat was
    for f in "${OFFLOAD_SAVED[@]}"; do
        read -r ns ifc feat was <<<"$f"
        ip netns exec "$ns" ethtool -K "$ifc" "$feat" "$was" >/dev/null 2>&1 ||
            log "WARNING: cannot turn $feat $was again on $ifc"
    done
    OFFLOAD_SAVED=()
}

# --client-napi threaded: the client veth's NAPI in a kernel thread, set
# once here (GRO is on above) and checked, with the thread's pinning,
# before every run (napi_check). NAPI_SET: threaded was written (undone at
# cleanup). NAPI_SRV_TSO: the server veth's TSO found before.
NAPI_SRV_TSO=""
NAPI_THREADED="/sys/class/net/$TB_IF_CLI/threaded"
# napi_pids : the PIDs of the client veth's NAPI threads. The thread's name
# is napi/<dev>-<napi id>, cut to 15 characters (TASK_COMM_LEN): matched on
# that prefix (the bed's veth names are its own).
napi_pids() {
    local prefix="napi/$TB_IF_CLI-"
    prefix="${prefix:0:15}"
    ps -e -o pid=,comm= | awk -v p="$prefix" 'index($2, p) == 1 { print $1 }'
}
# napi_check : fails (and says why) unless threaded is 1 and every NAPI
# thread of the client veth exists and is pinned to NAPI_CPU; pins them
# first. Prints what it found (PID, CPU list), for the run's record.
napi_check() {
    local pids pid aff
    [[ "$(ip netns exec "$TB_NS_CLI" cat "$NAPI_THREADED" 2>/dev/null)" == 1 ]] ||
        { echo "threaded is not 1 on $TB_IF_CLI"; return 1; }
    [[ "$(offload_state "$TB_NS_SRV" "$TB_IF_SRV" tso)" == off ]] ||
        { echo "TSO is on on $TB_IF_SRV: its frames would bypass $TB_IF_CLI's NAPI"; return 1; }
    pids=$(napi_pids)
    [[ -n "$pids" ]] || { echo "no napi/$TB_IF_CLI-* thread"; return 1; }
    for pid in $pids; do
        [[ -z "$NAPI_CPU" ]] || taskset -p -c "$NAPI_CPU" "$pid" >/dev/null 2>&1 ||
            { echo "cannot pin napi thread $pid to CPU $NAPI_CPU"; return 1; }
        aff=$(taskset -p -c "$pid" 2>/dev/null | sed 's/.*: //')
        echo "napi thread $pid ($(cat "/proc/$pid/comm" 2>/dev/null)) on CPUs $aff"
    done
}
# shellcheck disable=SC2317 # also called from the cleanup trap
napi_undo() {
    ((NAPI_SET)) || return 0
    ip netns exec "$TB_NS_CLI" sh -c "echo 0 >$NAPI_THREADED" 2>/dev/null ||
        log "WARNING: cannot set threaded 0 again on $TB_IF_CLI"
    [[ -z "$NAPI_SRV_TSO" ]] || ip netns exec "$TB_NS_SRV" ethtool -K "$TB_IF_SRV" tso "$NAPI_SRV_TSO" >/dev/null 2>&1 ||
        log "WARNING: cannot turn tso $NAPI_SRV_TSO again on $TB_IF_SRV"
    NAPI_SET=0
}
if [[ "$CLIENT_NAPI" != off ]]; then
    NAPI_SET=1
    NAPI_SRV_TSO=$(offload_state "$TB_NS_SRV" "$TB_IF_SRV" tso)
    ip netns exec "$TB_NS_SRV" ethtool -K "$TB_IF_SRV" tso off >/dev/null 2>&1
    [[ "$(offload_state "$TB_NS_SRV" "$TB_IF_SRV" tso)" == off ]] ||
        { echo "bench.sh: cannot turn TSO off on $TB_IF_SRV (--client-napi $CLIENT_NAPI)" >&2; exit 1; }
    if ! ip netns exec "$TB_NS_CLI" sh -c "echo 1 >$NAPI_THREADED" 2>/dev/null ||
        ! napi_check >"$WORK/napi_check"; then
        echo "bench.sh: cannot make $TB_IF_CLI's NAPI threaded (--client-napi $CLIENT_NAPI): $(cat "$WORK/napi_check" 2>/dev/null)" >&2
        exit 1
    fi
    log "client veth NAPI threaded: $(tr '\n' ';' <"$WORK/napi_check")"
fi

# Identical on both sides; only the port differs (the two never run at once).
ULIMIT_N=10240
redis_flags() { # PORT DIR
    echo --port "$1" --bind 0.0.0.0 --protected-mode no --save "''" --appendonly no \
        --maxclients 4000 --tcp-backlog 1024 --daemonize no --dir "$2" --logfile "$2/redis.log"
}

# ensure_hugepages : the machine's 2 MiB hugepages are shared with other test
# beds, whose teardown may lower the reservation while this run goes on:
# before each lstack start, raise it again when fewer than the pool needs
# are free (tb_down restores what it found, as for tb_up's own raise).
HP_NEED=$(((1200 * 64 * 2560 / 2097152) + 64))
ensure_hugepages() {
    local hp=/sys/kernel/mm/hugepages/hugepages-2048kB
    local free total
    free=$(cat "$hp/free_hugepages" 2>/dev/null) || return 0
    ((free >= HP_NEED)) && return 0
    total=$(cat "$hp/nr_hugepages")
    log "only $free free hugepages (of $total), the pool needs ~$HP_NEED: raising to $((total - free + TB_HUGEPAGES))"
    echo $((total - free + TB_HUGEPAGES)) >"$hp/nr_hugepages" 2>/dev/null || true
    tb__state_get HP_OLD >/dev/null || tb__state_set HP_OLD "$total"
    tb__state_set HP_SET "$(cat "$hp/nr_hugepages")"
}

# start_server KIND DIR CPUS [FLAGS...] : redis-server pinned to CPUS
# (taskset list) in the server ns, with the scenario's extra FLAGS (S_SRV).
# Sets SRV_PID (redis-server's own PID: taskset, ip netns exec and env exec).
start_server() {
    local kind="$1" dir="$2" cpus="$3" port
    shift 3
    local -a extra=("$@")
    local -a pre=(taskset -c "$cpus" ip netns exec "$TB_NS_SRV")
    if [[ "$kind" == lstack ]]; then
        ensure_hugepages
        port=$PORT_LSTACK
        pre+=(env LD_PRELOAD="$LIB" GAZELLE_BIND_PROCNAME=redis-server LSTACK_CONF_PATH="$CONF")
    elif [[ "$kind" == base ]]; then
        ensure_hugepages
        port=$PORT_BASE
        pre+=(env LD_PRELOAD="$BASE_LIB" GAZELLE_BIND_PROCNAME=redis-server LSTACK_CONF_PATH="$BASE_CONF")
    elif [[ "$kind" == rtw ]]; then
        ensure_hugepages
        port=$PORT_RTW
        pre+=(env LD_PRELOAD="$LIB" GAZELLE_BIND_PROCNAME=redis-server LSTACK_CONF_PATH="$CONF_RTW")
    else
        port=$PORT_KERNEL
        # The kernel server must get its frames: no stack's XDP program left.
        local x
        x=$(tb_xdp_off) || log "WARNING: the kernel server may not get its frames"
        [[ -z "$x" ]] || log "$x"
    fi
    mkdir -p "$dir"
    (
        ulimit -n "$ULIMIT_N" || exit 111
        exec "${pre[@]}" "$REDIS_SERVER" --port "$port" --bind 0.0.0.0 --protected-mode no --save '' \
            --appendonly no --maxclients 4000 --tcp-backlog 1024 --daemonize no \
            --dir "$dir" --logfile "$dir/redis.log" "${extra[@]}"
    ) >"$dir/stdout.log" 2>&1 &
    SRV_PID=$!
}

host_of() { if [[ "$1" == kernel ]]; then echo "$TB_IP_KERNEL"; else echo "$TB_IP_STACK"; fi; }
port_of() {
    case "$1" in
    kernel) echo "$PORT_KERNEL" ;;
    lstack) echo "$PORT_LSTACK" ;;
    base) echo "$PORT_BASE" ;;
    rtw) echo "$PORT_RTW" ;;
    esac
}

wait_ready() { # KIND
    local i out
    for ((i = 0; i < 300; i++)); do
        out=$(ip netns exec "$TB_NS_CLI" timeout 2 redis-cli -h "$(host_of "$1")" -p "$(port_of "$1")" ping 2>&1)
        [[ "$out" == PONG ]] && return 0
        kill -0 "$SRV_PID" 2>/dev/null || return 1
        sleep 0.2
    done
    return 1
}

stop_server() { # DIR
    local rc=0
    [[ -n "$SRV_PID" ]] || return 0
    kill -TERM "$SRV_PID" 2>/dev/null || true
    if ! tb_wait_gone "$SRV_PID" 30; then
        log "redis pid $SRV_PID still running 30 s after SIGTERM: SIGKILL"
        kill -KILL "$SRV_PID" 2>/dev/null || true
        rc=1
    fi
    wait "$SRV_PID" 2>/dev/null || rc=$?
    echo "$rc" >"$1/server_exit"
    SRV_PID=""
    return "$rc"
}

# ---------------------------------------------------------------------------
# record what is measured, and how

build_type() { # BUILD_DIR
    meson introspect "$1" --buildoptions 2>/dev/null |
        python3 -c 'import json, sys; print(*[o["value"] for o in json.load(sys.stdin) if o["name"] == "buildtype"])' 2>/dev/null
}

GIT_REV="$(git -C "$ROOT" rev-parse HEAD 2>/dev/null || echo unknown)"
GIT_DIRTY=0
# What goes into the preload: lstack's sources and the build files.
GIT_SRC=(lstack meson.build meson_options.txt)
if [[ -n "$(git -C "$ROOT" status --porcelain --untracked-files=no -- "${GIT_SRC[@]}" 2>/dev/null)" ]]; then
    GIT_DIRTY=1
    git -C "$ROOT" diff HEAD -- "${GIT_SRC[@]}" >"$OUT/lstack-worktree.diff" 2>/dev/null || true
fi
{
    echo "lstack_git_rev=$GIT_REV"
    echo "lstack_git_dirty=$GIT_DIRTY"
    echo "redis=$("$REDIS_SERVER" --version)"
    echo "redis_benchmark=$(redis-benchmark --version 2>/dev/null || echo '?')"
    echo "dpdk=$(pkg-config --modversion libdpdk 2>/dev/null || echo '?') ($(dpkg-query -W -f='${Version}' libdpdk-dev 2>/dev/null))"
    echo "lwip=$(cat "$ROOT/subprojects/lwip/.lstack-source" 2>/dev/null || echo '?') + lstack/stack/lwip (lwipopts.h, patches)"
    echo "kernel=$(uname -r) $(uname -v)"
    echo "cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1) x $NCPU"
    echo "virt=$(systemd-detect-virt 2>/dev/null || echo '?'), hypervisor $(lscpu 2>/dev/null | sed -n 's/^Hypervisor vendor:[[:space:]]*//p')"
    echo "os=$(. /etc/os-release && echo "$PRETTY_NAME")"
    echo "gcc=$(gcc -dumpfullversion 2>/dev/null || echo '?')"
    echo "buildtype=$(build_type "$BUILD_DIR")"
    echo "preload=$LIB"
    echo "preload_sha256=$(sha256sum "$LIB" | cut -d' ' -f1) built $(date -u -r "$LIB" +%Y-%m-%dT%H:%M:%SZ)"
    ((GIT_DIRTY)) && echo "lstack_git_diff=lstack-worktree.diff (git diff HEAD of lstack/ and the build files when the run started)"
    echo "redis_server=$REDIS_SERVER"
    echo "lstack_pmd=net_$PMD ($(tb_vdev))"
    if [[ "$KERNEL_OFFLOAD" == off ]]; then
        echo "kernel_offload=off (kernel runs: tso, gso, gro off on $TB_IF_SRV; tso off on $TB_IF_CLI)"
    else
        echo "kernel_offload=on (the veths as the test bed sets them)"
    fi
    if [[ "$CLIENT_GRO" == on ]]; then
        echo "client_gro=on (GRO on $TB_IF_CLI for every run)"
    else
        echo "client_gro=off (the client veth as the test bed sets it)"
    fi
    if [[ "$CLIENT_NAPI" != off ]]; then
        echo "client_napi=$CLIENT_NAPI (threaded NAPI on $TB_IF_CLI, GRO on, TSO off on $TB_IF_SRV, its thread pinned to CPUs ${NAPI_CPU:-any}; every run)"
    else
        echo "client_napi=off (the client veth's receive runs in the sender's context)"
    fi
    if [[ "$RPS" == on ]]; then
        echo "rps=on (rps_cpus: $TB_IF_CLI rx queues to CPU $CLIENT_CPU, $TB_IF_SRV rx queues to CPU $SERVER_CPU, every run)"
    else
        echo "rps=off (no receive steering: a veth's receive runs on the sender's CPU)"
    fi
    if [[ -n "$BASE_DIR" ]]; then
        echo "base_build=$BASE_DIR"
        echo "base_git_rev=$(git -C "$BASE_SRC" rev-parse HEAD 2>/dev/null || echo unknown)"
        echo "base_git_dirty=$([[ -n "$(git -C "$BASE_SRC" status --porcelain --untracked-files=no -- "${GIT_SRC[@]}" 2>/dev/null)" ]] && echo 1 || echo 0)"
        echo "base_buildtype=$(build_type "$BASE_DIR")"
        echo "base_preload=$BASE_LIB"
        echo "base_preload_sha256=$(sha256sum "$BASE_LIB" | cut -d' ' -f1) built $(date -u -r "$BASE_LIB" +%Y-%m-%dT%H:%M:%SZ)"
        if [[ -f "$BASE_DIR/lstack/stack/lwip/liblstack_lwip.so" ]]; then
            echo "base_lwip=$(cat "$BASE_SRC/subprojects/lwip/.lstack-source" 2>/dev/null || echo '?') + its lstack/stack/lwip"
        else
            echo "base_lwip=Debian liblwip $(dpkg-query -W -f='${Version}' liblwip-dev 2>/dev/null || echo '?')"
        fi
        echo "base_conf=lstack-base.conf${BASE_CONF_DROPPED:+ (left out, unknown to the base: $BASE_CONF_DROPPED)}"
    fi
    if ((RTW)); then
        echo "rtw_conf=lstack-rtw.conf (stack_thread_mode = run-to-wakeup, num_cpus = $RTW_CPUS; application threads on CPU $SERVER_CPU by taskset)"
    fi
    echo "date_utc=$(date -u +%Y-%m-%dT%H:%M:%SZ)"
} >"$OUT/versions.txt"

KERNEL_CMD="taskset -c $SERVER_CPU ip netns exec $TB_NS_SRV $REDIS_SERVER $(redis_flags $PORT_KERNEL DIR)"
LSTACK_CMD="taskset -c $SERVER_CPU ip netns exec $TB_NS_SRV env LD_PRELOAD=$LIB GAZELLE_BIND_PROCNAME=redis-server LSTACK_CONF_PATH=lstack.conf $REDIS_SERVER $(redis_flags $PORT_LSTACK DIR)"
RTW_CMD="taskset -c $SERVER_CPU ip netns exec $TB_NS_SRV env LD_PRELOAD=$LIB GAZELLE_BIND_PROCNAME=redis-server LSTACK_CONF_PATH=lstack-rtw.conf $REDIS_SERVER $(redis_flags $PORT_RTW DIR)"
BASE_CMD="taskset -c $SERVER_CPU ip netns exec $TB_NS_SRV env LD_PRELOAD=$BASE_LIB GAZELLE_BIND_PROCNAME=redis-server LSTACK_CONF_PATH=lstack-base.conf $REDIS_SERVER $(redis_flags $PORT_BASE DIR)"
{
    echo "# scripts/bench.sh $([[ $SHORT == 1 ]] && echo --short) --rounds $ROUNDS --scenarios $SCENARIOS${NREQ:+ -n $NREQ} --pmd $PMD$([[ $KERNEL_OFFLOAD == off ]] && echo " --kernel-offload off")$([[ $CLIENT_GRO == on ]] && echo " --client-gro on")$([[ $RPS == on ]] && echo " --rps on")$([[ $CLIENT_NAPI != off ]] && echo " --client-napi $CLIENT_NAPI")${BASE_DIR:+ --base-build $BASE_DIR}$( ((RTW)) && echo " --rtw-cpus $RTW_CPUS") --io-cpus $IO_CPUS"
    echo "# lstack drives the server veth with --vdev=$(tb_vdev)"
    echo "# each server started with ulimit -n $ULIMIT_N; client ns: net.ipv4.ip_local_port_range=\"1024 65535\""
    [[ "$CLIENT_GRO" == on ]] && echo "# before the first run: ip netns exec $TB_NS_CLI ethtool -K $TB_IF_CLI gro on"
    [[ "$CLIENT_NAPI" != off ]] && echo "# before the first run: ip netns exec $TB_NS_SRV ethtool -K $TB_IF_SRV tso off; ip netns exec $TB_NS_CLI sh -c 'echo 1 >$NAPI_THREADED'; before each run: taskset -p -c ${NAPI_CPU:-<all>} <pid of napi/$TB_IF_CLI-*>"
    [[ "$RPS" == on ]] && echo "# before the first run: echo <mask> >/sys/class/net/IF/queues/rx-*/rps_cpus: $TB_IF_CLI -> CPU $CLIENT_CPU, $TB_IF_SRV -> CPU $SERVER_CPU"
    if [[ "$KERNEL_OFFLOAD" == off ]]; then
        echo "# around each kernel run: ip netns exec $TB_NS_SRV ethtool -K $TB_IF_SRV tso off gso off gro off;" \
            "ip netns exec $TB_NS_CLI ethtool -K $TB_IF_CLI tso off (then the state found before again)"
    fi
    echo "kernel server: $KERNEL_CMD"
    echo "lstack server: $LSTACK_CMD"
    [[ -z "$BASE_DIR" ]] || echo "base server: $BASE_CMD"
    ((RTW)) && echo "rtw server: $RTW_CMD (stack_thread_mode = \"run-to-wakeup\", num_cpus = \"$RTW_CPUS\": the stack thread's CPU)"
    for s in "${SCEN_LIST[@]}"; do
        n="${NREQ:-${S_N[$s]}}"
        ((SHORT)) && [[ -z "$NREQ" ]] && n="${S_NSHORT[$s]}"
        echo "scenario $s client: ip netns exec $TB_NS_CLI taskset -c $CLIENT_CPU redis-benchmark -h HOST -p PORT --csv -n $n ${S_ARGS[$s]}"
        [[ -z "${S_SRV[$s]:-}" ]] || echo "scenario $s servers: every kind's flags above plus ${S_SRV[$s]}, taskset -c ${S_TASKSET[$s]:-$SERVER_CPU}"
    done
    echo "# HOST:PORT = $TB_IP_KERNEL:$PORT_KERNEL (kernel), $TB_IP_STACK:$PORT_LSTACK (lstack)${BASE_DIR:+, $TB_IP_STACK:$PORT_BASE (base)}$( ((RTW)) && echo ", $TB_IP_STACK:$PORT_RTW (rtw)")"
} >"$OUT/commands.txt"

# Other benchmark, test or build processes on the machine (not ours; just
# noted, per run, so that a noisy run can be told from a quiet one).
others_busy() {
    local n=0 pid
    for pid in $(pgrep -f '^(redis-server|redis-benchmark|redis-check-aof|sem_client|sem_server|valgrind|ninja|cc1)|/(redis-server|redis-benchmark|sem_client|sem_server|valgrind[^ ]*|ninja|cc1) ' 2>/dev/null); do
        [[ "$pid" == "${SRV_PID:-}" ]] && continue
        n=$((n + 1))
    done
    echo "$n"
}

# ---------------------------------------------------------------------------
# one run

# stack_stats KIND : `stackctl show stats --json` of the server under lstack
# (nothing for the kernel's, nor for a build without stackctl): bench.py
# takes the poll rounds' busy time over the client's run from two of these.
stack_stats() {
    local ctl="$STACKCTL"
    [[ "$1" == kernel ]] && return 0
    [[ "$1" == base ]] && ctl="$BASE_STACKCTL"
    [[ -n "$ctl" && -x "$ctl" ]] || return 0
    timeout 10 "$ctl" -p "$SRV_PID" show stats --json 2>/dev/null || true
}

# The client veth's packet and byte counters (rx = to the client): packets
# per request tell pure ACKs and window updates from replies.
netdev() {
    local f
    for f in rx_packets tx_packets rx_bytes tx_bytes; do
        echo "$f $(ip netns exec "$TB_NS_CLI" cat "/sys/class/net/$TB_IF_CLI/statistics/$f" 2>/dev/null)"
    done
    # Frames the client veth received through its NAPI (GRO or XDP), before
    # merging: veth's per-queue rx_queue_N_xdp_packets.
    echo "napi_packets $(ip netns exec "$TB_NS_CLI" ethtool -S "$TB_IF_CLI" 2>/dev/null |
        awk '/rx_queue_[0-9]+_xdp_packets:/ { n += $2 } END { print n + 0 }')"
}

# napi_stat : /proc/PID/stat of each NAPI thread of the client veth (none
# without --client-napi): bench.py counts their CPU time as the client's.
napi_stat() {
    local pid
    [[ "$CLIENT_NAPI" != off ]] || return 0
    for pid in $(napi_pids); do
        cat "/proc/$pid/stat" 2>/dev/null
    done
}

FAILED=0

run_one() { # SCENARIO ROUND KIND
    local s="$1" r="$2" kind="$3"
    local n="${NREQ:-${S_N[$s]}}"
    ((SHORT)) && [[ -z "$NREQ" ]] && n="${S_NSHORT[$s]}"
    local d="$OUT/raw/s$s-r$r-$kind"
    local -a args
    read -r -a args <<<"${S_ARGS[$s]}"
    rm -rf "$d"
    mkdir -p "$d"
    others_busy >"$d/others_before"
    if [[ "$kind" == kernel && "$KERNEL_OFFLOAD" == off ]]; then
        if ! offload_off >"$d/offload"; then
            log "scenario $s round $r kernel: the veth offloads are not all off (--kernel-offload off): $(tr '\n' ';' <"$d/offload")"
            echo "offload_on" >"$d/status"
            offload_restore
            FAILED=$((FAILED + 1))
            return 1
        fi
    fi
    if [[ "$CLIENT_NAPI" != off ]] && ! napi_check >"$d/client_napi"; then
        log "scenario $s round $r $kind: the client veth's NAPI is not as --client-napi $CLIENT_NAPI asks: $(tr '\n' ';' <"$d/client_napi")"
        echo "napi_off" >"$d/status"
        offload_restore
        FAILED=$((FAILED + 1))
        return 1
    fi
    local -a srv_extra=()
    [[ -z "${S_SRV[$s]:-}" ]] || read -r -a srv_extra <<<"${S_SRV[$s]}"
    start_server "$kind" "$d/redis" "${S_TASKSET[$s]:-$SERVER_CPU}" "${srv_extra[@]}"
    if ! wait_ready "$kind"; then
        log "scenario $s round $r $kind: redis did not answer PING; its output:"
        tail -n 20 "$d/redis/stdout.log" "$d/redis/redis.log" 2>/dev/null | sed 's/^/  | /'
        [[ "$kind" != kernel && "$PMD" == af_xdp ]] &&
            log "hint: net_af_xdp needs XDP sockets in the kernel (CONFIG_XDP_SOCKETS) and libxdp; --pmd af_packet reads the veth through a packet ring instead"
        echo "not_ready" >"$d/status"
        stop_server "$d" || true
        offload_restore
        FAILED=$((FAILED + 1))
        return 1
    fi
    if ((PERF)); then
        perf record -q -a -g -e cpu-clock -F 2000 -o "$d/perf.data" >"$d/perf.log" 2>&1 &
        PERF_PID=$!
        sleep 0.5
    fi
    # The client's CPU: the change in this shell's children times (`times`,
    # second line) over the run; it is the only child reaped in between.
    stack_stats "$kind" >"$d/stack_stats.0"
    times >"$d/times.0"
    netdev >"$d/netdev.0"
    cat "/proc/$SRV_PID/stat" >"$d/pid_stat.0"
    napi_stat >"$d/napi_stat.0"
    cat /proc/stat >"$d/stat.0"
    date +%s%N >"$d/t.0"
    local rc=0
    # In the background and waited for, so that a signal to this script is
    # handled at once (the cleanup trap then stops the client too).
    timeout "$CLIENT_TIMEOUT" ip netns exec "$TB_NS_CLI" taskset -c "$CLIENT_CPU" \
        redis-benchmark -h "$(host_of "$kind")" -p "$(port_of "$kind")" --csv -n "$n" "${args[@]}" \
        >"$d/bench.csv" 2>"$d/bench.err" &
    CLI_PID=$!
    local bench_pid="" i
    if ((PERF)); then
        # redis-benchmark's own PID (timeout's child: ip netns exec and taskset exec)
        for ((i = 0; i < 50; i++)); do
            bench_pid=$(pgrep -P "$CLI_PID" | head -n 1)
            [[ -n "$bench_pid" ]] && break
            sleep 0.01
        done
    fi
    wait "$CLI_PID" || rc=$?
    CLI_PID=""
    date +%s%N >"$d/t.1"
    cat /proc/stat >"$d/stat.1"
    cat "/proc/$SRV_PID/stat" >"$d/pid_stat.1" 2>/dev/null || : >"$d/pid_stat.1"
    napi_stat >"$d/napi_stat.1"
    times >"$d/times.1"
    netdev >"$d/netdev.1"
    stack_stats "$kind" >"$d/stack_stats.1"
    if ((PERF)); then
        kill -INT "$PERF_PID" 2>/dev/null || true
        wait "$PERF_PID" 2>/dev/null || true
        PERF_PID=""
        # Whole machine by CPU, process and object; then the server alone and
        # the client alone (samples of a process include the kernel work,
        # softirq too, done while it was the current task).
        perf report -i "$d/perf.data" --no-children --sort cpu,pid,dso --stdio -g none \
            >"$d/perf-all.txt" 2>/dev/null || true
        perf report -i "$d/perf.data" --no-children --sort pid,dso,sym --stdio -g none \
            >"$d/perf-sym.txt" 2>/dev/null || true
        echo "$SRV_PID" >"$d/server_pid"
        [[ -z "$bench_pid" ]] || echo "$bench_pid" >"$d/client_pid"
        python3 "$ROOT/bench/bench.py" perf "$d" >"$d/perf-split.txt" 2>&1 || true
        # The server's sends split: what its af_xdp kick (lstack)
        # or its write() (kernel) runs on its core, the client's receive too.
        perf script -i "$d/perf.data" -F cpu,pid,ip,sym,dso 2>/dev/null |
            HZ=2000 python3 "$ROOT/bench/kick_split.py" "$SRV_PID" "$SERVER_CPU" \
                "$([[ $kind == kernel ]] && echo kernel || echo lstack)" >"$d/perf-kick.txt" 2>&1 || true
    fi
    echo "$rc" >"$d/client_exit"
    others_busy >"$d/others_after"
    local src=0
    stop_server "$d" || src=$?
    offload_restore
    local ok=1
    if ((rc != 0)); then
        log "scenario $s round $r $kind: redis-benchmark exited with $rc: $(tr '\r' '\n' <"$d/bench.err" | grep -v '^$' | tail -n 3 | tr '\n' ' ')"
        ok=0
    elif ! grep -q '^"test","rps"' "$d/bench.csv"; then
        log "scenario $s round $r $kind: no CSV result from redis-benchmark"
        ok=0
    elif tr '\r' '\n' <"$d/bench.err" | grep -qiE 'error|ERR|disconnected|reset by peer'; then
        log "scenario $s round $r $kind: redis-benchmark reported errors: $(tr '\r' '\n' <"$d/bench.err" | grep -iE 'error|ERR' | head -n 2 | tr '\n' ' ')"
        ok=0
    fi
    if ((src != 0)); then
        log "scenario $s round $r $kind: redis exited with status $src after SIGTERM"
        ok=0
    fi
    if ((ok)); then
        echo ok >"$d/status"
        log "scenario $s round $r $kind: $(python3 "$ROOT/bench/bench.py" oneline "$d")"
    else
        echo failed >"$d/status"
        FAILED=$((FAILED + 1))
    fi
    return 0
}

log "machine: $(uptime | sed 's/^ *//'); other benchmark/test processes: $(others_busy)"
# A pair (kernel and lstack, and base with --base-build; same scenario and
# round) that another process disturbed (bench.py noisy: another benchmark,
# test or build running, or more than 8% of a CPU used by others) is run
# again, up to --retries times; the disturbed runs are kept aside as
# raw/<run>.noisyN.
# With --base-build the three kinds run in KINDS order in odd rounds and in
# the reverse order in even ones.
for ((r = 1; r <= ROUNDS; r++)); do
    kinds=()
    if ((r % 2 == 1)); then
        kinds=("${KINDS[@]}")
    else
        for ((i = ${#KINDS[@]} - 1; i >= 0; i--)); do kinds+=("${KINDS[i]}"); done
    fi
    for s in "${SCEN_LIST[@]}"; do
        for ((try = 0; ; try++)); do
            failed_before=$FAILED
            for k in "${kinds[@]}"; do
                run_one "$s" "$r" "$k"
            done
            ((FAILED == failed_before)) || break
            ((try < RETRIES)) || break
            dirs=()
            for k in "${KINDS[@]}"; do dirs+=("$OUT/raw/s$s-r$r-$k"); done
            why=$(python3 "$ROOT/bench/bench.py" noisy "${dirs[@]}") && break
            log "scenario $s round $r disturbed ($(echo "$why" | tr '\n' ' ')): again ($((try + 1))/$RETRIES)"
            for k in "${KINDS[@]}"; do
                mv "$OUT/raw/s$s-r$r-$k" "$OUT/raw/s$s-r$r-$k.noisy$((try + 1))"
            done
            sleep 5
        done
    done
done

# ---------------------------------------------------------------------------
# aggregate: JSON, CSV, table, chart

agg_rc=0
python3 "$ROOT/bench/bench.py" aggregate "$OUT" --rounds "$ROUNDS" --scenarios "$SCENARIOS" \
    --server-cpu "$SERVER_CPU" --client-cpu "$CLIENT_CPU" || agg_rc=$?
if command -v gnuplot >/dev/null 2>&1; then
    if [[ -f "$OUT/chart.gp" ]]; then
        (cd "$OUT" && gnuplot chart.gp) >"$WORK/gnuplot.log" 2>&1 ||
            { log "gnuplot failed:"; sed 's/^/  | /' "$WORK/gnuplot.log"; agg_rc=1; }
    fi
    if [[ -f "$OUT/chart-cpu.gp" ]]; then
        (cd "$OUT" && gnuplot chart-cpu.gp) >"$WORK/gnuplot.log" 2>&1 ||
            { log "gnuplot failed (chart-cpu.gp):"; sed 's/^/  | /' "$WORK/gnuplot.log"; agg_rc=1; }
    fi
else
    log "gnuplot not found: no chart.png (scripts/install-deps.sh installs gnuplot-nox)"
fi

log "results in $OUT"
if ((FAILED > 0 || agg_rc != 0)); then
    log "FAILED: $FAILED run(s) failed, aggregation status $agg_rc"
    exit 1
fi
exit 0
