#!/usr/bin/env bash
# syn_flood.sh - an established connection's latency with and without a SYN
# flood, lstack against the kernel (issue #10: "established connections
# served during the flood with p99 at most 2x the no-flood run").
#
#   [LSTACK_TB=x] bench/syn_flood.sh [BUILD_DIR] [lstack|kernel|both]
#
# Brings up its own namespace bed ("${LSTACK_TB:-lstk}sf", removed on exit)
# and, for each target (default both, lstack first), starts redis-server in
# the server namespace, then from the client namespace:
#   1. `redis_resp.py probe` for FLOOD_S seconds without a flood: one
#      established connection sending PING every millisecond (p50/p99/max)
#      and a new connection (connect + PING) every 0.5 s;
#   2. `hping3 -S -p PORT --flood -a 198.19.0.5 TARGET` (a spoofed source
#      beyond the bed's subnet: the SYN-ACKs go to the gateway, the client
#      namespace's kernel, which drops them; nothing resets the half-open
#      connections), and after 1 s the same probe for FLOOD_S seconds;
#   3. prints both probes, hping3's count, and (lstack) the stack's SYN
#      counters and its rounds over the flood (frames per busy round: a round
#      that takes a full burst, nic_read_number, found the port's receive
#      ring backed up).
# The summary line per target: no-flood and flood p50/p99 and the ratio of
# the p99s (the target: at most 2).
#
# Pinning (2 cores): redis-server (every thread) on SERVER_CPU (default 1),
# hping3 and the probe on FLOOD_CPU (default 0). The kernel redis then
# handles each SYN in hping3's own softirq on FLOOD_CPU, while lstack's
# redis polls on SERVER_CPU and does the SYN work there; the probe competes
# with hping3 for FLOOD_CPU in both runs, and without a flood has it to
# itself. Other load on the machine moves every figure: print `uptime`
# beside them (the script does).
#
# Environment: FLOOD_S (10), SERVER_CPU (1), FLOOD_CPU (0), NEW_EVERY (0.5),
# SF_CONF_EXTRA (more lstack.conf lines, e.g. 'nic_read_number = 32;'),
# SF_NICE=N (a nice value, e.g. -10, for redis, hping3 and the probe
# alike: less noise from other load on a shared machine; default none),
# SF_FLOOD_NICE=N (a nice value for hping3 alone, e.g. 19: the probe then
# preempts the flooder on FLOOD_CPU at once, so the probe's p99 shows the
# server and not the client CPU's time slices; a flood from another machine
# would not share the probe's CPU at all; default: hping3 runs at SF_NICE),
# SF_PERF=FILE (perf record of SERVER_CPU for 4 s of the flood into
# FILE.<target>; the script prints the top of `perf report --sort
# comm,dso,sym`: where the server CPU's time goes, kernel work included).
# Scheduling of the client CPU (FLOOD_CPU), applied to both targets alike:
# SF_PROBE_RT=N runs the probe at SCHED_FIFO priority N (`chrt -f N`: it
# preempts hping3 as soon as a reply wakes it), SF_FLOOD_IDLE=1 runs hping3
# at SCHED_IDLE (`chrt -i 0`: it gets FLOOD_CPU only when nothing else wants
# it), SF_FLOOD_RATE=U sends one SYN every U microseconds (`hping3 -i uU`)
# instead of `--flood`, SF_PROBE_PIECES=1 sends each PING in the four writes
# (four segments) the probe used before session 8.
# The SYN-ACKs: the server namespace has no default route, so with the
# default source (198.19.0.5, beyond the subnet) the kernel server cannot
# route a single SYN-ACK (it sends none: hping3 in interval mode, which
# counts replies, saw 0 from the kernel and 97 % from lstack), while lstack
# sends each to its gateway, the client namespace, whose kernel receives,
# routes and drops it inside lstack's af_packet send on SERVER_CPU (3-6 us
# a frame on this bed). Three ways to treat both alike:
# SF_SRV_ROUTE=1 adds `default via` the client's address to the server
# namespace, so that the kernel server sends its SYN-ACKs too (from the
# flood's softirq on FLOOD_CPU); SF_SPOOF=ADDR sets hping3's source:
# an address on the bed's subnet that nothing answers ARP for (198.18.0.99)
# stops both servers' SYN-ACKs at ARP resolution (lwIP keeps one frame per
# pending entry, Linux a short queue): the servers' SYN handling alone, as
# on a NIC whose transmit costs a descriptor write; SF_CLIENT_RPS=1 steers
# the client veth's receive work to FLOOD_CPU (RPS, rps_cpus), so that the
# client namespace's receive of the server's frames runs on the client's
# CPU (as on a client machine) and not inside lstack's send on SERVER_CPU
# (on this VM it costs an IPI a frame, and takes CPU from hping3).
# SF_CLI_SINK=1 gives the client namespace somewhere to send the SYN-ACKs:
# IP forwarding on and a default route into an interface that drops what
# it is given (sfsink: one end of a veth pair whose other end is down, ARP
# off, and a gateway on it, so one neighbour entry and not one per
# destination, which --rand-source would churn; this kernel has no dummy). Without it the client namespace, which
# has no route to the spoofed sources, makes an uncached route entry for
# every SYN-ACK it receives (inside the server's send, on SERVER_CPU) and
# frees it through RCU: ksoftirqd on SERVER_CPU then preempts the polling
# redis (docs/reliability.md, session 9). With the sink the route is the
# nexthop's cached one; for both servers alike (with SF_SRV_ROUTE=1).
# SF_RAND_SOURCE=1: `hping3 --rand-source` instead of `-a SF_SPOOF` (random
# sources: the SYN-ACKs go to the gateway as above; not with SF_CAPTURE).
# SF_SERVER_NICE=N: redis alone at nice N (other load on SERVER_CPU then
# takes less of it; both targets alike).
# SF_SCHED=1 prints, over each probe, what ran on SERVER_CPU besides redis:
# ksoftirqd/SERVER_CPU's run time and time slices (softirq work the kernel
# deferred from the senders' bh-enable: it competes with a busy-polling
# redis for the CPU), redis's run and wait time and its involuntary
# context switches, and the CPU's NET_RX/NET_TX softirq counts;
# SF_SCHED=FILE also takes `perf sched record -C SERVER_CPU` for 3 s of the
# flood into FILE.<target> and prints `perf sched latency` of it.
# SF_CAPTURE=1 takes a packet capture on the client's and on the server's
# veth during each probe (tcpdump, filtered to the port and not the spoofed
# source, pinned to FLOOD_CPU) and prints bench/probe_pcap.py's split of
# the established connection's time: `wire` (round trip at the client's
# veth, without the probe process's scheduling), `to-srv` and `server`
# (from the server veth's receive of the PING to the reply at the client);
# the RESULT line then also gives the wire p99s and their ratio.
# SF_SRV_DROP=1 keeps the server namespace's own kernel from routing the
# frames addressed to the stack: af_packet hands lstack a copy of each frame
# and the kernel's IP input gets the frame too; for the stack's address,
# not local there and not forwarded, it makes an uncached "unreachable"
# route entry per frame and frees it through RCU, on the CPU that ran the
# veth's receive (the flooder's, FLOOD_CPU), where RCU callbacks run in
# whatever task holds it, the probe too (session 10: `dst_destroy` in the
# probe's samples during its slow PINGs; with this knob the flood's
# 0.2-0.3 ms mode stayed: most of those entries were hping3's own, see
# SF_CLI_GW). A raw-table PREROUTING drop
# of the stack's address (iptables, before the route lookup; af_packet's
# tap has its copy by then) stops that; on a NIC the kernel never sees the
# stack's frames. Needs iptables (Debian package `iptables`).
# SF_HIST=1 prints each probe's latency histogram; SF_DUMP=DIR writes each
# probe's PINGs (send time, latency, flood or not) to DIR/<target>-<phase>.txt
# (the slow PINGs' times, to set beside other traces).
# SF_INTERLEAVE=W (seconds, e.g. 1) adds a third probe of 2 x FLOOD_S
# seconds after the flood probe, the flood still on, in which the probe
# stops hping3 (SIGSTOP) and lets it go on (SIGCONT) every W seconds
# (`redis_resp.py probe --toggle`): flood and no-flood PINGs interleaved in
# the same seconds, so that a disturbance of the machine falls on both
# alike; a PING less than SF_GUARD seconds (0.05) after a stop still counts
# as flood (the stack may be draining its ring). Its RESULT line gives both
# p99s and their ratio beside the back-to-back method's.
# SF_CLI_SPIN=1 keeps FLOOD_CPU busy in every phase with a SCHED_IDLE
# spinner (`chrt -i 0`: the probe, SCHED_FIFO with SF_PROBE_RT, and hping3
# preempt it at once): without it the client's CPU idles between PINGs only
# when there is no flood, and on this VM an idle vCPU halts, so the no-flood
# PINGs alone pay the host's wake-up of the probe's CPU (1-7 ms stretches
# when the host is busy, docs/reliability.md session 10), which the flood,
# keeping that CPU busy, hides. A client on another machine than the flood
# would not see its CPU's state change with the flood.
# SF_CLI_GW=1 gives the client namespace a host route to each server's
# address through that address itself (`ip route add A/32 via A onlink`):
# the same neighbour, the same frames. hping3 sends through a raw socket
# that writes its own IP header (IPPROTO_RAW), and Linux looks up such a
# send's route with FLOWI_FLAG_KNOWN_NH, which skips the nexthop's cached
# route unless the nexthop is a link-scope gateway (`__mkroute_output`):
# on the bed's connected route every SYN allocates an uncached route entry
# in hping3's sendto, and frees it through RCU on the flooder's CPU, in
# whatever task holds FLOOD_CPU when the callbacks run, the real-time probe
# too (session 11: perf of `kmem:kmem_cache_alloc` -g on FLOOD_CPU, 27,608
# of 28,280 route-entry allocations in 1 s of flood from `raw_sendmsg`; 0
# with this route). A flood from another machine pays that on its own CPU;
# both targets alike. SF_DST=1 prints the route-entry allocations on
# FLOOD_CPU over 1 s of the flood by caller, before the flood probe starts
# (`perf record -e kmem:kmem_cache_alloc -g`; it slows the flood meanwhile).
# Every run prints the client veth's frames over the flood (SYNs out,
# server replies in) and the client's frame rate during the flood probe;
# a flood probe without a flood (under 20,000 frames/s: hping3's time
# bound ran out before the probe ended) is marked NO FLOOD.
# shellcheck source-path=SCRIPTDIR/..
set -u
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
