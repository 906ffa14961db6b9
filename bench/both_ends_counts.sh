#!/usr/bin/env bash
# both_ends_counts.sh - what one request costs each end of the memif pair,
# counted (frames, lstack calls, system calls), not timed: the figures hold
# on a loaded machine, where req/s do not (issue 11).
#
#   bench/both_ends_counts.sh [--build DIR] [--out DIR] [--window SECONDS] [--perf]
#
# Starts the pair of scripts/bench-both-ends.sh (tests/system/memif_lib.sh:
# redis-server under lstack role=server on CPU 1, redis-benchmark under
# lstack role=client on CPU 0, bed LSTACK_TB or "bocnt"), then for scenario 5
# (-c 1 -t ping_mbulk) and scenario 1 (-c 50 -P 1 -t set,get -d 3), each
# with a -n too large to end: 2 s in, over --window seconds (default 3),
#   - `stackctl -p PID show stats --json` of both processes at the start and
#     the end (frames sent and received, epoll_wait calls, reads, writes);
#   - `perf stat -e raw_syscalls:sys_enter,syscalls:sys_enter_epoll_wait -p PID`
#     on each (tracepoints: unlike strace, no stop per call to change the rate);
#   - the server's INFO total_commands_processed, for reference.
# --perf: also `perf record -F 1999 -g` of each process over the window
# (a second window of its own, after the counted one: sampling stops the
# processes now and then), and `perf report` of it (sNN.SIDE.perf.txt: self
# time by shared object and symbol). Timed, so noisy on a loaded machine.
# A request is a reply the server wrote: its lstack write calls over the
# window (one per reply at -P 1; INFO, read a little before and after the
# stackctl snapshots, counts a slightly longer window).
# Prints one line per scenario and end: per request, frames sent/received,
# lstack epoll_wait calls, reads, writes, system calls (of them epoll_wait).
# Raw files stay in --out (default bench/results/<UTC>-counts/).
# Needs root, a built tree, perf, redis-server/-cli/-benchmark, librte-net-memif23.
# shellcheck source-path=SCRIPTDIR/..
set -u

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD_DIR="$ROOT/build" OUT="" WINDOW=3 PERF=0
while (($# > 0)); do
    case "$1" in
    --build) BUILD_DIR="${2:-}"; shift 2 || exit 2 ;;
    --out) OUT="${2:-}"; shift 2 || exit 2 ;;
    --window) WINDOW="${2:-}"; shift 2 || exit 2 ;;
    --perf) PERF=1; shift ;;
    -h | --help) sed -n '2,/^set -u$/{/^set -u$/d;s/^# \{0,1\}//;p}' "${BASH_SOURCE[0]}"; exit 0 ;;
    *) echo "both_ends_counts.sh: unknown option '$1'" >&2; exit 2 ;;
    esac
done
[[ "$WINDOW" =~ ^[1-9][0-9]*$ ]] || { echo "both_ends_counts.sh: --window wants whole seconds" >&2; exit 2; }
[[ "$BUILD_DIR" == /* ]] || BUILD_DIR="$ROOT/$BUILD_DIR"
SC="$BUILD_DIR/tools/stackctl"
for f in "$BUILD_DIR/lstack/liblstack.so" "$SC"; do
    [[ -e "$f" ]] || { echo "both_ends_counts.sh: not built: $f" >&2; exit 1; }
done
for t in perf redis-server redis-cli redis-benchmark python3; do
    command -v "$t" >/dev/null 2>&1 || { echo "both_ends_counts.sh: '$t' not found" >&2; exit 1; }
done
[[ -n "$OUT" ]] || OUT="$ROOT/bench/results/$(date -u +%Y%m%dT%H%M%SZ)-counts"
mkdir -p "$OUT" || exit 1

export LSTACK_TB="${LSTACK_TB:-bocnt}"
# shellcheck source=tests/system/testbed.sh
source "$ROOT/tests/system/testbed.sh"
# shellcheck source=tests/preload_env.sh
source "$ROOT/tests/preload_env.sh"
# shellcheck source=tests/system/memif_lib.sh
source "$ROOT/tests/system/memif_lib.sh"
WORK="$(mktemp -d "/tmp/lstack-counts-${LSTACK_TB}.XXXXXX")"
SRV="" CLI=""
# shellcheck disable=SC2317 # the cleanup trap
cleanup() {
    local p
    for p in $CLI $SRV; do kill -TERM "$p" 2>/dev/null && wait "$p" 2>/dev/null; done
    m_down
    rm -rf "$WORK"
}
trap cleanup EXIT
m_init "$LSTACK_TB" "$WORK" "$BUILD_DIR/lstack/liblstack.so" 1 0 || exit 1
m_conf server 'tcp_conn_count = 1200;' 'mbuf_count_per_conn = 64;'
m_conf client 'tcp_conn_count = 1200;' 'mbuf_count_per_conn = 64;'
(ulimit -n 10240 && m_run server redis-server --port 6379 --bind 0.0.0.0 --protected-mode no --save '' \
    --appendonly no --daemonize no --dir "$WORK" --logfile "$WORK/redis.log") >"$OUT/server.log" 2>&1 &
SRV=$!
cmds() { m_kernel redis-cli -h 127.0.0.1 info stats | tr -d '\r' | sed -n 's/total_commands_processed://p'; }
for ((k = 0; k < 150; k++)); do
    [[ "$(m_kernel timeout 2 redis-cli -h 127.0.0.1 ping 2>&1)" == PONG ]] && break
    kill -0 "$SRV" 2>/dev/null || { echo "both_ends_counts.sh: the server exited" >&2; exit 1; }
    sleep 0.2
done
{ echo "script_tree_rev=$(git -C "$ROOT" rev-parse HEAD 2>/dev/null || echo "?") build=$BUILD_DIR (meson-info: $(sed -n "s/.*\"source_dir\": \"\([^\"]*\)\".*/\1/p" "$BUILD_DIR/meson-info/meson-info.json" 2>/dev/null))"
  echo "load_at_start=$(cut -d' ' -f1-3 /proc/loadavg)"; } >"$OUT/versions.txt"
for sc in "5:-c 1 -t ping_mbulk" "1:-c 50 -P 1 -t set,get -d 3"; do
    s=${sc%%:*}
    read -r -a args <<<"${sc#*:}"
    (M_BIND=redis-benchmark m_run client redis-benchmark -h "$M_IP_SRV" -p 6379 --csv -n 2000000000 "${args[@]}") \
        >"$OUT/s$s.csv" 2>&1 &
    CLI=$!
    sleep 2
    c0=$(cmds)
    for side in srv cli; do
        pid=$SRV; [[ $side == cli ]] && pid=$CLI
        "$SC" -p "$pid" show stats --json >"$OUT/s$s.$side.0.json"
    done
    perf stat -x, -e raw_syscalls:sys_enter,syscalls:sys_enter_epoll_wait -p "$SRV" -o "$OUT/s$s.srv.perf" -- sleep "$WINDOW" &
    p1=$!
    perf stat -x, -e raw_syscalls:sys_enter,syscalls:sys_enter_epoll_wait -p "$CLI" -o "$OUT/s$s.cli.perf" -- sleep "$WINDOW" &
    p2=$!
    wait "$p1" "$p2"
    for side in srv cli; do
        pid=$SRV; [[ $side == cli ]] && pid=$CLI
        "$SC" -p "$pid" show stats --json >"$OUT/s$s.$side.1.json"
    done
    c1=$(cmds)
    echo $((c1 - c0 - 1)) >"$OUT/s$s.req"
    if ((PERF)); then
        pp=()
        for side in srv cli; do
            pid=$SRV; [[ $side == cli ]] && pid=$CLI
            perf record -q -F 1999 -g -p "$pid" -o "$OUT/s$s.$side.perf.data" -- sleep "$WINDOW" 2>/dev/null &
            pp+=($!)
        done
        wait "${pp[@]}"
        for side in srv cli; do
            perf report -i "$OUT/s$s.$side.perf.data" --stdio --no-children --sort dso,sym --percent-limit 0.5 \
                -g none 2>/dev/null | grep -v '^$' >"$OUT/s$s.$side.perf.txt"
        done
    fi
    kill -INT "$CLI"
    wait "$CLI" 2>/dev/null
    CLI=""
done
echo "load_at_end=$(cut -d' ' -f1-3 /proc/loadavg)" >>"$OUT/versions.txt"
python3 - "$OUT" <<'PY' | tee "$OUT/summary.txt"
import json, sys
out = sys.argv[1]
for s in ("5", "1"):
    info = int(open(f"{out}/s{s}.req").read())
    a = json.load(open(f"{out}/s{s}.srv.0.json"))
    b = json.load(open(f"{out}/s{s}.srv.1.json"))
    req = b["app"]["writes"] - a["app"]["writes"]
    for side, name in (("srv", "server"), ("cli", "client")):
        a = json.load(open(f"{out}/s{s}.{side}.0.json"))
        b = json.load(open(f"{out}/s{s}.{side}.1.json"))
        def d(k):
            for g in ("total", "app"):
                if k in b.get(g, {}):
                    return b[g][k] - a[g][k]
            return None
        sysc = {}
        for line in open(f"{out}/s{s}.{side}.perf"):
            f = line.strip().split(",")
            if len(f) > 2 and "sys_enter" in f[2]:
                sysc[f[2].split(":")[-1]] = int(f[0])
        pr = lambda v: "-" if v is None or req <= 0 else f"{v / req:.3f}"
        print(f"scenario {s} {name}: {req} replies written (INFO: {info} commands); per request: frames sent {pr(d('tx_packets'))},"
              f" received {pr(d('rx_packets'))}; epoll_wait calls {pr(d('epoll_waits'))}, reads {pr(d('reads'))},"
              f" writes {pr(d('writes'))}; system calls {pr(sysc.get('sys_enter'))}"
              f" (epoll_wait {pr(sysc.get('sys_enter_epoll_wait'))})")
PY
cat "$OUT/versions.txt"
