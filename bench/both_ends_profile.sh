#!/usr/bin/env bash
# both_ends_profile.sh - where the instructions of one end of the memif pair
# go, per request (callgrind: counted, not timed, so the figures hold on a
# loaded machine; issue 11).
#
#   bench/both_ends_profile.sh --side server|client [--scenario 5|1]
#                              [--build DIR] [--out DIR] [--window SECONDS]
#
# The pair of scripts/bench-both-ends.sh (tests/system/memif_lib.sh:
# redis-server under lstack role=server on CPU 1, redis-benchmark under
# lstack role=client on CPU 0, bed LSTACK_TB or "boprof"), with the --side
# process inside valgrind --tool=callgrind (its EAL with --no-huge: valgrind
# cannot map hugepages; the counts do not depend on the page size) and the
# other one native, so the profiled end hardly ever waits for its peer.
# redis-benchmark runs the scenario with a -n too large to end (scenario 5:
# -c 1 -t ping_mbulk; 1: -c 50 -P 1 -t set,get -d 3); --window seconds
# (default 20) after the first replies, the counters are zeroed, and dumped
# --window seconds later. A request is a reply the server wrote over the
# window (its lstack write calls, stackctl).
#
# After the window, an idle dump (3 s with the peer stopped by SIGSTOP: the
# link stays up, so the profiled end's rounds are the idle rounds of the
# window, memif's included): what an idle poll round costs;
# bench/callgrind_split.py takes the idle rounds of the window out with it
# (--idle, the profiled end's busy_polls over the window), as
# bench/profile.sh does.
#
# Output (--out, default bench/results/<UTC>-bprof-SIDE-sSCENARIO/): the
# callgrind files, /proc/PID/maps of the profiled process, stackctl
# snapshots, split.txt (bench/callgrind_split.py per request).
# Needs root, a built tree, valgrind, redis-server/-cli/-benchmark,
# python3, binutils (nm), librte-net-memif23.
# shellcheck source-path=SCRIPTDIR/..
set -u

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD_DIR="$ROOT/build" OUT="" WINDOW=20 SIDE="" SCEN=5
while (($# > 0)); do
    case "$1" in
    --side) SIDE="${2:-}"; shift 2 || exit 2 ;;
    --scenario) SCEN="${2:-}"; shift 2 || exit 2 ;;
    --build) BUILD_DIR="${2:-}"; shift 2 || exit 2 ;;
    --out) OUT="${2:-}"; shift 2 || exit 2 ;;
    --window) WINDOW="${2:-}"; shift 2 || exit 2 ;;
    -h | --help) sed -n '2,/^set -u$/{/^set -u$/d;s/^# \{0,1\}//;p}' "${BASH_SOURCE[0]}"; exit 0 ;;
    *) echo "both_ends_profile.sh: unknown option '$1'" >&2; exit 2 ;;
    esac
done
[[ "$SIDE" == server || "$SIDE" == client ]] || { echo "both_ends_profile.sh: --side server|client" >&2; exit 2; }
[[ "$WINDOW" =~ ^[1-9][0-9]*$ ]] || { echo "both_ends_profile.sh: --window wants whole seconds" >&2; exit 2; }
# shellcheck disable=SC2054 # "set,get" is one argument
case "$SCEN" in
5) ARGS=(-c 1 -t ping_mbulk) ;;
1) ARGS=(-c 50 -P 1 -t set,get -d 3) ;;
*) echo "both_ends_profile.sh: --scenario 5 or 1" >&2; exit 2 ;;
esac
[[ "$BUILD_DIR" == /* ]] || BUILD_DIR="$ROOT/$BUILD_DIR"
SC="$BUILD_DIR/tools/stackctl"
LWIP_SO="$BUILD_DIR/lstack/stack/lwip/liblstack_lwip.so"
for f in "$BUILD_DIR/lstack/liblstack.so" "$SC" "$LWIP_SO"; do
    [[ -e "$f" ]] || { echo "both_ends_profile.sh: not built: $f" >&2; exit 1; }
done
for t in valgrind callgrind_control redis-server redis-cli redis-benchmark python3 nm; do
    command -v "$t" >/dev/null 2>&1 || { echo "both_ends_profile.sh: '$t' not found" >&2; exit 1; }
done
[[ $(id -u) -eq 0 ]] || { echo "both_ends_profile.sh: must run as root" >&2; exit 1; }
[[ -n "$OUT" ]] || OUT="$ROOT/bench/results/$(date -u +%Y%m%dT%H%M%SZ)-bprof-$SIDE-s$SCEN"
mkdir -p "$OUT" && OUT="$(cd "$OUT" && pwd)" || exit 1

export LSTACK_TB="${LSTACK_TB:-boprof}"
# shellcheck source=tests/system/testbed.sh
source "$ROOT/tests/system/testbed.sh"
# shellcheck source=tests/preload_env.sh
source "$ROOT/tests/preload_env.sh"
# shellcheck source=tests/system/memif_lib.sh
source "$ROOT/tests/system/memif_lib.sh"
WORK="$(mktemp -d "/tmp/lstack-bprof-${LSTACK_TB}.XXXXXX")"
SRV="" CLI=""
# shellcheck disable=SC2317 # the cleanup trap
cleanup() {
    local p
    for p in $CLI $SRV; do
        kill -TERM "$p" 2>/dev/null || continue
        tb_wait_gone "$p" 60 || kill -KILL "$p" 2>/dev/null
        wait "$p" 2>/dev/null
    done
    m_down
    rm -rf "$WORK"
}
trap cleanup EXIT
m_init "$LSTACK_TB" "$WORK" "$BUILD_DIR/lstack/liblstack.so" 1 0 || exit 1
m_conf server 'tcp_conn_count = 1200;' 'mbuf_count_per_conn = 64;'
m_conf client 'tcp_conn_count = 1200;' 'mbuf_count_per_conn = 64;'
# The profiled side's EAL: no hugepages under valgrind (--no-huge, which
# --in-memory does not go with).
sed -i 's/"--in-memory",/"--no-huge", "-m", "700",/' "${M_CONF[$SIDE]}"
cp "${M_CONF[server]}" "${M_CONF[client]}" "$OUT/"
CG="$OUT/callgrind.out"
VG=(valgrind --tool=callgrind --callgrind-out-file="$CG")

srv_cmd=("$(command -v redis-server)" --port 6379 --bind 0.0.0.0 --protected-mode no --save '' --appendonly no
    --maxclients 4000 --daemonize no --dir "$WORK" --logfile "$WORK/redis.log")
if [[ $SIDE == server ]]; then
    (ulimit -n 10240 && M_BIND=redis-server m_run server "${VG[@]}" "${srv_cmd[@]}") >"$OUT/server.log" 2>&1 &
else
    (ulimit -n 10240 && m_run server "${srv_cmd[@]}") >"$OUT/server.log" 2>&1 &
fi
SRV=$!
up=0
for ((k = 0; k < 600; k++)); do
    [[ "$(m_kernel timeout 5 redis-cli -h 127.0.0.1 ping 2>&1)" == PONG ]] && { up=1; break; }
    kill -0 "$SRV" 2>/dev/null || break
    sleep 0.2
done
((up)) || { echo "both_ends_profile.sh: the server did not come up" >&2; tail -n 20 "$OUT/server.log" >&2; exit 1; }

stats() { "$SC" -p "$1" --timeout 60 show stats --json; }

if [[ $SIDE == client ]]; then
    (M_BIND=redis-benchmark m_run client "${VG[@]}" redis-benchmark -h "$M_IP_SRV" -p 6379 --csv -n 2000000000 \
        "${ARGS[@]}") >"$OUT/client.log" 2>&1 &
else
    (m_run client redis-benchmark -h "$M_IP_SRV" -p 6379 --csv -n 2000000000 "${ARGS[@]}") >"$OUT/client.log" 2>&1 &
fi
CLI=$!
PROF=$SRV
[[ $SIDE == client ]] && PROF=$CLI
# Wait for the first replies, then WINDOW more seconds of warm-up.
for ((k = 0; k < 600; k++)); do
    w=$(stats "$SRV" 2>/dev/null | python3 -c 'import json,sys; print(json.load(sys.stdin)["app"]["writes"])' 2>/dev/null)
    [[ -n "$w" && "$w" -gt 100 ]] && break
    kill -0 "$CLI" 2>/dev/null || { echo "both_ends_profile.sh: the client exited" >&2; tail -n 20 "$OUT/client.log" >&2; exit 1; }
    sleep 0.5
done
sleep "$WINDOW"
cp "/proc/$PROF/maps" "$OUT/maps"
stats "$SRV" >"$OUT/srv.0.json"
stats "$PROF" >"$OUT/prof.0.json"
callgrind_control -z "$PROF" >/dev/null
sleep "$WINDOW"
callgrind_control -d "$PROF" >/dev/null
stats "$PROF" >"$OUT/prof.1.json"
stats "$SRV" >"$OUT/srv.1.json"
# shellcheck disable=SC2012 # our own file names
dump=$(ls -t "$CG".* 2>/dev/null | head -n 1)
[[ -n "$dump" ]] || { echo "both_ends_profile.sh: no callgrind dump" >&2; exit 1; }
# The idle dump: the peer stopped, the link up.
PEER=$CLI
[[ $SIDE == client ]] && PEER=$SRV
kill -STOP "$PEER"
sleep 0.5
callgrind_control -z "$PROF" >/dev/null
sleep 3
callgrind_control -d "$PROF" >/dev/null
kill -CONT "$PEER"
# shellcheck disable=SC2012 # our own file names
idle_dump=$(ls -t "$CG".* 2>/dev/null | head -n 1)
IDLE_ARGS=()
read -r req busy < <(python3 - "$OUT" <<'PY'
import json, sys
o = sys.argv[1]
j = lambda n: json.load(open(f"{o}/{n}.json"))
print(j("srv.1")["app"]["writes"] - j("srv.0")["app"]["writes"],
      j("prof.1")["total"]["busy_polls"] - j("prof.0")["total"]["busy_polls"])
PY
)
[[ -n "$idle_dump" && "$idle_dump" != "$dump" ]] && IDLE_ARGS=(--idle "$idle_dump" --busy-rounds "$busy")
{
    echo "side=$SIDE scenario=$SCEN args=${ARGS[*]} window=${WINDOW}s requests=$req busy_rounds=$busy"
    echo "build=$BUILD_DIR rev=$(git -C "$(sed -n 's/.*"source_dir": "\([^"]*\)".*/\1/p' "$BUILD_DIR/meson-info/meson-info.json" 2>/dev/null || echo "$ROOT")" rev-parse --short HEAD 2>/dev/null)"
    echo "load: $(cut -d' ' -f1-3 /proc/loadavg)"
    python3 "$ROOT/bench/callgrind_split.py" "$dump" --requests "$req" --maps "$OUT/maps" --top 50 \
        --lwip "$LWIP_SO" "${IDLE_ARGS[@]}" \
        --calls stack_poll,ev_wait,epoll_wait,epoll_ctl,read,write,malloc,free,calloc,sctx_loop_lock,tcp_write,tcp_output,tcp_input,sys_check_timeouts
} | tee "$OUT/split.txt"
echo "profile: $OUT"
