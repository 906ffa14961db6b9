#!/usr/bin/env bash
# syn_flood.sh - an established connection's latency with and without a SYN
# flood, lstack against the kernel (the target: the flood's p99 at most 2x
# the no-flood run's). Brings up its own bed ("${LSTACK_TB:-lstk}sf",
# removed on exit); for each target starts redis-server, then from the
# client namespace runs `redis_resp.py probe` (a PING a millisecond on one
# connection, a new connection every 0.5 s) for FLOOD_S seconds without a
# flood, then during `hping3 -S --flood` from a spoofed source, and prints
# both probes' p50/p99, the ratio of the p99s and (lstack) the stack's SYN
# counters. Pinning: redis-server on SERVER_CPU (1), hping3 and the probe
# on FLOOD_CPU (0).
#
#   [LSTACK_TB=x] [VAR=value...] bench/syn_flood.sh [BUILD_DIR] [lstack|kernel|both]
#
# Variables (below): the two servers' treatment alike on this bed, traces.
# shellcheck source-path=SCRIPTDIR/..
set -u

# Variables (every one applies to both targets alike):
#   FLOOD_S (10), SERVER_CPU (1), FLOOD_CPU (0), NEW_EVERY (0.5 s)
#   SF_CONF_EXTRA      more lstack.conf lines
#   SF_NICE=N          nice for redis, hping3 and the probe; SF_FLOOD_NICE=N: hping3 alone
#   SF_SERVER_NICE=N   redis alone
#   SF_PROBE_RT=N      the probe at SCHED_FIFO N; SF_FLOOD_IDLE=1: hping3 at SCHED_IDLE
#   SF_FLOOD_RATE=U    one SYN every U us instead of --flood
#   SF_PROBE_PIECES=1  each PING in four writes (four segments)
#   SF_SPOOF=ADDR      hping3's source (198.19.0.5, beyond the subnet); SF_RAND_SOURCE=1: random
#   SF_SRV_ROUTE=1     a default route in the server namespace (the kernel sends its SYN-ACKs too)
#   SF_CLIENT_RPS=1    the client veth's receive steered to FLOOD_CPU
#   SF_CLI_SINK=1      the client namespace forwards the SYN-ACKs into a sink (a cached route,
#                      not one uncached route entry per SYN-ACK freed through RCU)
#   SF_CLI_GW=1        a host route to each server through itself: hping3's raw sends then use
#                      the nexthop's cached route instead of an uncached entry per SYN
#   SF_SRV_DROP=1      a raw-table drop of the stack's address in the server namespace
#                      (af_packet's copy is taken first; the kernel's IP input then makes no
#                      route entry per frame)
#   SF_CLI_SPIN=1      a SCHED_IDLE spinner on FLOOD_CPU in every phase (an idle vCPU's
#                      wake-up otherwise lands on the no-flood PINGs only)
#   SF_INTERLEAVE=W    a third probe that stops and resumes hping3 every W seconds (flood and
#                      no-flood PINGs in the same seconds); SF_GUARD (0.05 s)
#   SF_PERF=FILE, SF_SCHED=1|FILE, SF_DST=1, SF_CAPTURE=1 (bench/probe_pcap.py),
#   SF_HIST=1, SF_DUMP=DIR  traces of the server CPU, the scheduler, route-entry
#                      allocations, packet captures, histograms, per-PING dumps
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="${1:-$ROOT/build}"
WHICH="${2:-both}"
FLOOD_S="${FLOOD_S:-10}"
SERVER_CPU="${SERVER_CPU:-1}"
FLOOD_CPU="${FLOOD_CPU:-0}"
NEW_EVERY="${NEW_EVERY:-0.5}"
SPOOF="${SF_SPOOF:-198.19.0.5}"

# shellcheck disable=SC2034 # read by common.sh
T_NAME=sf
# shellcheck source=tests/system/redis_lib.sh
source "$ROOT/tests/system/redis_lib.sh"
R_TARGET=lstack
[[ "$WHICH" == kernel ]] && R_TARGET=kernel
r_init "$BUILD" python3 hping3 taskset
if [[ "${SF_CLIENT_RPS:-0}" != 0 ]]; then
    ip netns exec "$TB_NS_CLI" sh -c "printf '%x' $((1 << FLOOD_CPU)) >/sys/class/net/$TB_IF_CLI/queues/rx-0/rps_cpus" ||
        r_fail "cannot set RPS on $TB_IF_CLI"
fi
if [[ "${SF_CLI_SINK:-0}" != 0 ]]; then
    { ip -n "$TB_NS_CLI" link add sfsink type veth peer name sfsink1 &&
        ip -n "$TB_NS_CLI" link set sfsink arp off up &&
        ip netns exec "$TB_NS_CLI" sysctl -qw net.ipv4.ip_forward=1 &&
        ip -n "$TB_NS_CLI" route add default via 10.255.255.2 dev sfsink onlink; } || r_fail "cannot set up the client namespace's sink"
fi
if [[ "${SF_CLI_GW:-0}" != 0 ]]; then
    for a in "$TB_IP_STACK" "$TB_IP_KERNEL"; do
        ip -n "$TB_NS_CLI" route add "$a/32" via "$a" dev "$TB_IF_CLI" onlink ||
            r_fail "cannot add a host route to $a via itself in $TB_NS_CLI"
    done
fi
if [[ "${SF_SRV_DROP:-0}" != 0 ]]; then
    IPT=$(command -v iptables-legacy || command -v iptables) || r_fail "SF_SRV_DROP needs iptables (apt-get install iptables)"
    ip netns exec "$TB_NS_SRV" "$IPT" -t raw -A PREROUTING -d "$TB_IP_STACK/32" -j DROP ||
        r_fail "cannot drop $TB_IP_STACK before routing in $TB_NS_SRV"
fi
[[ -z "${SF_CONF_EXTRA:-}" ]] || r_conf "$R_CONF" 'tcp_conn_count = 1024;' "$SF_CONF_EXTRA"

# probe SECONDS OUT : the probe, pinned to FLOOD_CPU.
NICE=()
[[ -z "${SF_NICE:-}" ]] || NICE=(nice -n "$SF_NICE")
PRIO=()
[[ -z "${SF_PROBE_RT:-}" ]] || PRIO=(chrt -f "$SF_PROBE_RT")
PIECES=()
[[ "${SF_PROBE_PIECES:-0}" == 0 ]] || PIECES=(--pieces)
probe() {
    local caps=() cap extra=()
    [[ "${SF_HIST:-0}" == 0 ]] || extra+=(--hist)
    if [[ -n "${SF_DUMP:-}" ]]; then
        local b="${2##*/}"
        extra+=(--dump "$SF_DUMP/${b%.log}.txt")
    fi
    extra+=("${@:3}")
    if [[ "${SF_CAPTURE:-0}" != 0 ]]; then
        local filt
        filt="tcp port $(r_port srv) and not host $SPOOF"
        taskset -c "$FLOOD_CPU" ip netns exec "$TB_NS_CLI" tcpdump -q -n -i "$TB_IF_CLI" -j host \
            --time-stamp-precision=nano -B 16384 -w "${2%.log}.cli.pcap" "$filt" >/dev/null 2>&1 &
        caps+=($!)
        taskset -c "$FLOOD_CPU" ip netns exec "$TB_NS_SRV" tcpdump -q -n -i "$TB_IF_SRV" -j host \
            --time-stamp-precision=nano -B 16384 -w "${2%.log}.srv.pcap" "$filt" >/dev/null 2>&1 &
        caps+=($!)
        R_BG_PIDS+=("${caps[@]}")
        sleep 1 # tcpdump's socket is open
    fi
    "${PRIO[@]}" "${NICE[@]}" taskset -c "$FLOOD_CPU" ip netns exec "$TB_NS_CLI" python3 "$R_PY" probe "$(r_host srv)" "$(r_port srv)" \
        --seconds "$1" --new-every "$NEW_EVERY" "${PIECES[@]}" "${extra[@]}" >"$2" 2>&1 || true
    if ((${#caps[@]})); then
        sleep 0.5
        for cap in "${caps[@]}"; do kill -INT "$cap" 2>/dev/null; done
        for cap in "${caps[@]}"; do wait "$cap" 2>/dev/null; done
        python3 "$ROOT/bench/probe_pcap.py" --port "$(r_port srv)" "${2%.log}.cli.pcap" "${2%.log}.srv.pcap" >>"$2" 2>&1
    fi
}

# wire p99 of a probe log with a capture, or nothing
wire_of() {
    sed -n 's/^pcap: wire .* p99 \([0-9.]*\) ms.*/\1/p' "$1"
}

# snap ARRAY "KEYS" : the stack's counters KEYS (stackctl totals, one call)
# into the associative array ARRAY (empty values if stackctl fails).
snap() {
    local -n into="$1"
    local k v json
    json=$(ip netns exec "$TB_NS_SRV" "$T_BUILD/tools/stackctl" -p "$(r_pid srv)" --json --timeout 10 show stats \
        2>/dev/null) || json=""
    for k in $2; do into["$k"]=""; done
    # shellcheck disable=SC2034 # a nameref to the caller's array
    while read -r k v; do into["$k"]="$v"; done < <(python3 -c '
import json, sys
try:
    t = json.loads(sys.argv[1])["total"]
except ValueError:
    sys.exit(0)
for k in sys.argv[2].split():
    if k in t:
        print(k, int(t[k]))' "$json" "$2")
}

# sched_snap PID : "ksoftirqd_ns ksoftirqd_slices redis_ns redis_wait_ns redis_nvcsw net_rx net_tx"
# of SERVER_CPU (SF_SCHED); redis's figures summed over its threads.
sched_snap() {
    local ks kst rs=(0 0) nv=0 t a b
    ks=$(pgrep -x "ksoftirqd/$SERVER_CPU" | head -1)
    read -r -a kst <"/proc/$ks/schedstat"
    for t in /proc/"$1"/task/*; do
        read -r a b _ <"$t/schedstat"
        rs[0]=$((rs[0] + a))
        rs[1]=$((rs[1] + b))
        nv=$((nv + $(sed -n 's/^nonvoluntary_ctxt_switches:\s*//p' "$t/status")))
    done
    local col=$((SERVER_CPU + 2))
    echo "${kst[0]} ${kst[2]} ${rs[0]} ${rs[1]} $nv $(awk -v c="$col" '$1=="NET_RX:"{x=$c} $1=="NET_TX:"{y=$c} END{print x, y}' /proc/softirqs)"
}

# sched_diff "BEFORE" "AFTER" : the SF_SCHED line
sched_diff() {
    local -a a b
    read -r -a a <<<"$1"
    read -r -a b <<<"$2"
    printf 'sched CPU %s: ksoftirqd ran %.1f ms in %d slices; redis ran %.1f ms, waited %.1f ms, %d involuntary switches; NET_RX %d NET_TX %d softirqs\n' \
        "$SERVER_CPU" "$(awk -v x=$((b[0] - a[0])) 'BEGIN{print x/1e6}')" $((b[1] - a[1])) \
        "$(awk -v x=$((b[2] - a[2])) 'BEGIN{print x/1e6}')" "$(awk -v x=$((b[3] - a[3])) 'BEGIN{print x/1e6}')" \
        $((b[4] - a[4])) $((b[5] - a[5])) $((b[6] - a[6]))
}

# in_addr_errors : the server namespace's IP InAddrErrors (frames its
# kernel received but could not route: with forwarding off, each one made
# an uncached route entry; SF_SRV_DROP's frames never get that far)
# shellcheck disable=SC2016 # awk's own $ fields
in_addr_errors() {
    ip netns exec "$TB_NS_SRV" awk '$1 == "Ip:" && !h { for (i = 2; i <= NF; i++) if ($i == "InAddrErrors") c = i; h = 1; next }
        $1 == "Ip:" && h { print $c; exit }' /proc/net/snmp
}

# dst_record FILE : 1 s of slab allocations on FLOOD_CPU with their call
# chains (SF_DST); dst_report FILE, after the flood (its perf script takes
# seconds of CPU): the route entries among them, by the caller that made them
dst_record() {
    perf record -q -e kmem:kmem_cache_alloc -g -C "$FLOOD_CPU" -o "$1" -- sleep 1 >/dev/null 2>&1 ||
        echo "SF_DST: perf record failed" >&2
}
dst_report() {
    [[ -s "$1" ]] || return 0
    perf script -i "$1" 2>/dev/null | awk '
        /kmem:kmem_cache_alloc:/ { d = 0; who = ""; n++; next }
        / dst_alloc\+/ { d = 1 }
        d && !who && / raw_sendmsg\+/ { who = "raw_sendmsg (hping3)" }
        d && !who && / ip_route_input_slow\+/ { who = "ip_route_input_slow" }
        /^$/ { if (d) { t++; c[who ? who : "other"]++ } d = 0 }
        END { printf "   route entries allocated on CPU '"$FLOOD_CPU"' in 1 s of flood (before the probe): %d (of %d slab allocations)", t, n
              for (k in c) printf "; %s %d", k, c[k]; printf "\n" }'
    rm -f "$1"
}

# veth_counts : "RX TX" packets of the client's veth (frames from and to
# the server namespace)
veth_counts() {
    ip netns exec "$TB_NS_CLI" cat "/sys/class/net/$TB_IF_CLI/statistics/rx_packets" \
        "/sys/class/net/$TB_IF_CLI/statistics/tx_packets" | tr '\n' ' '
}

# p50 / p99 of a probe log: "P50 P99"
lat_of() {
    sed -n 's/^probe: established: .* p50 \([0-9.]*\) ms, p99 \([0-9.]*\) ms.*/\1 \2/p' "$1"
}


run_target() {
    local kind="$1" pid c t
    r_start srv "$kind"
    r_wait_ready srv || r_fail "redis did not come up"
    pid=$(r_pid srv)
    if [[ "$kind" == kernel && "${SF_SRV_ROUTE:-0}" != 0 ]]; then # the kernel address is there now
        ip -n "$TB_NS_SRV" route replace default via "$TB_IP_CLI" || r_fail "cannot add a default route to $TB_NS_SRV"
    fi
    taskset -a -c -p "$SERVER_CPU" "$pid" >/dev/null || r_fail "cannot pin redis to CPU $SERVER_CPU"
    local snice="${SF_SERVER_NICE:-${SF_NICE:-}}"
    if [[ -n "$snice" ]]; then
        for t in /proc/"$pid"/task/*; do renice -n "$snice" -p "${t##*/}" >/dev/null; done
    fi
    echo "== $kind redis pid $pid on CPU $SERVER_CPU${snice:+ at nice $snice}; hping3 and the probe on CPU $FLOOD_CPU${SF_CLIENT_RPS:+, the client veth receive too (RPS)}; nice ${SF_NICE:-0}, hping3 ${SF_FLOOD_NICE:-${SF_NICE:-0}}${SF_FLOOD_IDLE:+ SCHED_IDLE}${SF_FLOOD_RATE:+ one SYN per ${SF_FLOOD_RATE} us}${SF_RAND_SOURCE:+ --rand-source}${SF_CLI_SINK:+; SYN-ACKs to a sink in the client namespace}$([[ "${SF_SRV_DROP:-0}" == 0 ]] || echo "; the server kernel drops frames to the stack before routing")$([[ "${SF_CLI_SPIN:-0}" == 0 ]] || echo "; client CPU spinner")$([[ "${SF_CLI_GW:-0}" == 0 ]] || echo "; client host routes via the servers' addresses")${SF_PROBE_RT:+; probe SCHED_FIFO $SF_PROBE_RT}${PIECES[*]:+; PING in 4 writes}; load: $(uptime | sed 's/.*load/load/')"
    local sa="" spin=""
    if [[ "${SF_CLI_SPIN:-0}" != 0 ]]; then
        taskset -c "$FLOOD_CPU" chrt -i 0 sh -c 'while :; do :; done' &
        spin=$!
        R_BG_PIDS+=("$spin")
        echo "   a SCHED_IDLE spinner on CPU $FLOOD_CPU (pid $spin) in every phase"
    fi
    [[ -z "${SF_SCHED:-}" ]] || sa=$(sched_snap "$pid")
    probe "$FLOOD_S" "$T_WORK/$kind-calm.log"
    [[ -z "${SF_SCHED:-}" ]] || sched_diff "$sa" "$(sched_snap "$pid")" >>"$T_WORK/$kind-calm.log"
    sed 's/^/   no flood: /' "$T_WORK/$kind-calm.log"

    local ae0 vc0
    ae0=$(in_addr_errors)
    vc0=$(veth_counts)
    local -A c0=() c1=()
    local keys="rx_packets syncookies_sent syncookies_recv drop_syn drop_syn_shed port_imissed rounds_busy rounds_rx_frames rounds_busy_cycles tsc_hz"
    if [[ "$kind" == lstack ]]; then
        snap c0 "$keys"
    fi
    local fnice=("${NICE[@]}")
    [[ -z "${SF_FLOOD_NICE:-}" ]] || fnice=(nice -n "$SF_FLOOD_NICE")
    [[ "${SF_FLOOD_IDLE:-0}" == 0 ]] || fnice=(chrt -i 0 "${fnice[@]}")
    # timeout -k 2: hping3 with -i, or at SCHED_IDLE, was seen not to exit
    # on SIGINT (it kept sending until killed)
    local rate=(--flood) src=(-a "$SPOOF")
    [[ -z "${SF_FLOOD_RATE:-}" ]] || rate=(-i "u$SF_FLOOD_RATE")
    [[ "${SF_RAND_SOURCE:-0}" == 0 ]] || src=(--rand-source)
    local inter="${SF_INTERLEAVE:-}" hp_s=$((FLOOD_S + 2 + ${SF_CAPTURE:-0} * 2))
    [[ -z "$inter" ]] || hp_s=$((hp_s + 2 * FLOOD_S + 2))
    [[ "${SF_DST:-0}" == 0 ]] || hp_s=$((hp_s + 30)) # SF_DST's perf record: 1 s, and seconds to write
    "${fnice[@]}" taskset -c "$FLOOD_CPU" ip netns exec "$TB_NS_CLI" timeout -s INT -k 2 "$hp_s" \
        hping3 -S -p "$(r_port srv)" "${rate[@]}" "${src[@]}" "$(r_host srv)" >"$T_WORK/$kind-hping.log" 2>&1 &
    local hp=$!
    R_BG_PIDS+=("$hp")
    sleep 1
    [[ "${SF_DST:-0}" == 0 ]] || dst_record "$T_WORK/$kind-dst.data"
    local pp=""
    if [[ -n "${SF_PERF:-}" ]]; then
        perf record -q -C "$SERVER_CPU" -o "$SF_PERF.$kind" -- sleep 4 >/dev/null 2>&1 &
        pp=$!
    fi
    local sp=""
    if [[ -n "${SF_SCHED:-}" && "$SF_SCHED" != 1 ]]; then
        perf sched record -q -C "$SERVER_CPU" -o "$SF_SCHED.$kind" -- sleep 3 >/dev/null 2>&1 &
        sp=$!
    fi
    [[ -z "${SF_SCHED:-}" ]] || sa=$(sched_snap "$pid")
    local pv0 pv1
    read -r -a pv0 <<<"$(veth_counts)"
    probe "$FLOOD_S" "$T_WORK/$kind-flood.log"
    read -r -a pv1 <<<"$(veth_counts)"
    # a flood probe without a flood (hping3's time bound ran out first, as
    # when SF_DST's perf record took seconds longer than planned): say how
    # many frames went out meanwhile
    echo "flood during this probe: $(((pv1[1] - pv0[1]) / FLOOD_S)) frames/s from the client$( ((pv1[1] - pv0[1] >= FLOOD_S * 20000)) || echo ' (NO FLOOD: do not use this run)')" >>"$T_WORK/$kind-flood.log"
    [[ -z "${SF_SCHED:-}" ]] || sched_diff "$sa" "$(sched_snap "$pid")" >>"$T_WORK/$kind-flood.log"
    [[ -z "$pp" ]] || wait "$pp"
    [[ -z "$sp" ]] || wait "$sp"
    if [[ -n "$inter" ]]; then
        local hpid
        hpid=$(pgrep -P "$hp" -x hping3 | head -1)
        if [[ -z "$hpid" ]]; then
            echo "interleaved: hping3 (child of $hp) not found: $(pstree -p "$hp" 2>&1)" >"$T_WORK/$kind-inter.log"
        else
            [[ -z "${SF_SCHED:-}" ]] || sa=$(sched_snap "$pid")
            probe "$((2 * FLOOD_S))" "$T_WORK/$kind-inter.log" --toggle "$hpid" --window "$inter" --guard "${SF_GUARD:-0.05}"
            [[ -z "${SF_SCHED:-}" ]] || sched_diff "$sa" "$(sched_snap "$pid")" >>"$T_WORK/$kind-inter.log"
        fi
    fi
    [[ -z "$spin" ]] || { kill "$spin" 2>/dev/null; wait "$spin" 2>/dev/null; }
    kill -INT "$hp" 2>/dev/null # the flood lasts as long as the probe (timeout passes the signal on)
    wait "$hp" 2>/dev/null || true
    sed 's/^/   flood:    /' "$T_WORK/$kind-flood.log"
    [[ -z "$inter" ]] || sed 's/^/   interleaved: /' "$T_WORK/$kind-inter.log"
    grep -E 'packets (transmitted|tramitted)' "$T_WORK/$kind-hping.log" | sed 's/^/   hping3:   /'
    [[ "${SF_DST:-0}" == 0 ]] || dst_report "$T_WORK/$kind-dst.data"
    local vc1
    read -r -a vc1 <<<"$(veth_counts)"
    read -r -a vc0 <<<"$vc0"
    echo "   client veth over the flood: $((vc1[1] - vc0[1])) frames sent (SYNs and the probe's), $((vc1[0] - vc0[0])) received (server to client)"
    echo "   server namespace kernel over the flood: IP InAddrErrors +$(($(in_addr_errors) - ae0)) (frames it could not route: one uncached route entry each)"
    if [[ "$kind" == lstack ]]; then
        local line="   stackctl over the flood:"
        snap c1 "$keys"
        for c in $keys; do
            [[ -n "${c0[$c]}" && -n "${c1[$c]}" && "$c" != tsc_hz ]] && line+=" $c +$((c1[$c] - c0[$c]))"
        done
        echo "$line"
        if [[ -n "${c0[rounds_busy]}" && -n "${c1[rounds_busy]}" ]] && ((c1[rounds_busy] > c0[rounds_busy])); then
            echo "   frames per busy round: $(((c1[rounds_rx_frames] - c0[rounds_rx_frames]) / (c1[rounds_busy] - c0[rounds_busy])))"
            awk -v c="$((c1[rounds_busy_cycles] - c0[rounds_busy_cycles]))" -v f="$((c1[rounds_rx_frames] - c0[rounds_rx_frames]))" \
                -v hz="${c1[tsc_hz]}" 'BEGIN { if (f > 0 && hz > 0) printf "   busy round time per received frame: %.2f us\n", c / f / hz * 1e6 }'
        fi
    fi
    if [[ -n "${SF_PERF:-}" && -f "$SF_PERF.$kind" ]]; then
        echo "   perf, CPU $SERVER_CPU during the flood (top 25 by samples):"
        perf report -q -i "$SF_PERF.$kind" --sort comm,dso,sym --stdio 2>/dev/null | grep -v '^$' | head -25 | sed 's/^/   | /'
    fi
    if [[ -n "$sp" && -f "$SF_SCHED.$kind" ]]; then
        echo "   perf sched latency, CPU $SERVER_CPU, 3 s of the flood (top 8 by max delay):"
        perf sched latency -i "$SF_SCHED.$kind" -s max 2>/dev/null | grep '|' | head -9 | sed 's/^/   | /'
    fi
    local calm flood
    read -r -a calm <<<"$(lat_of "$T_WORK/$kind-calm.log")"
    read -r -a flood <<<"$(lat_of "$T_WORK/$kind-flood.log")"
    if ((${#calm[@]} == 2 && ${#flood[@]} == 2)); then
        printf 'RESULT %s: no flood p50 %s p99 %s ms; flood p50 %s p99 %s ms; p99 ratio %.2f\n' "$kind" \
            "${calm[0]}" "${calm[1]}" "${flood[0]}" "${flood[1]}" \
            "$(awk -v a="${flood[1]}" -v b="${calm[1]}" 'BEGIN{print (b > 0 ? a / b : 0)}')"
        local wc wf
        wc=$(wire_of "$T_WORK/$kind-calm.log")
        wf=$(wire_of "$T_WORK/$kind-flood.log")
        [[ -z "$wc" || -z "$wf" ]] ||
            printf 'RESULT %s wire: no flood p99 %s ms; flood p99 %s ms; p99 ratio %.2f\n' "$kind" "$wc" "$wf" \
                "$(awk -v a="$wf" -v b="$wc" 'BEGIN{print (b > 0 ? a / b : 0)}')"
    else
        echo "RESULT $kind: a probe failed (see above)"
    fi
    if [[ -n "$inter" ]]; then
        sed -n 's/^probe: interleaved (\([^)]*\)): flood [0-9]* PINGs, p50 \([0-9.]*\) ms, p99 \([0-9.]*\) ms.*; no flood [0-9]* PINGs, p50 \([0-9.]*\) ms, p99 \([0-9.]*\) ms.*; p99 ratio \([0-9.a-z]*\).*/RESULT '"$kind"' interleaved (\1): no flood p50 \4 p99 \5 ms; flood p50 \2 p99 \3 ms; p99 ratio \6/p' \
            "$T_WORK/$kind-inter.log"
    fi
    r_stop srv term || echo "   redis did not exit cleanly"
    R_NAMES=()
}

case "$WHICH" in
lstack | kernel) run_target "$WHICH" ;;
both)
    run_target lstack
    run_target kernel
    ;;
*) echo "usage: $0 [BUILD_DIR] [lstack|kernel|both]" >&2; exit 2 ;;
esac
