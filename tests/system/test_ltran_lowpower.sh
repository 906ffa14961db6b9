#!/usr/bin/env bash
# test_ltran_lowpower.sh - the low-power check: ltran and three
# redis-servers under lstack (same IP, ports 6379-6381), all with
# low_power_mode = 1, on a machine with fewer cores than processes, stay
# responsive while the others are idle:
#
# It prints the CPUs each process may run on (ltran: its -l; the servers:
# any) and every figure.
# Bed: "${LSTACK_TB:-lstk}ltp". Exit 0 pass, 1 fail, 77 skip.
set -u

#   1. idle: ltran and each redis-server sleep (their CPU over 2 s is
#      bounded; ltran counts its sleeps, and on an af_packet port, whose
#      doorbell wakes it, sleeps long: at most 200 in 2 s);
#   2. PINGs one at a time after random 3-8 ms pauses (the server and ltran
#      asleep when each comes): the median round trip stays below a kernel
#      redis-server's on loopback, measured the same way in the same run, plus
#      LTRAN_LP_P50_EXTRA_MS (0.8 ms: a round trip through ltran to sleeping
#      processes takes three wake-ups more than the kernel's, ltran by its
#      doorbell, the server by its eventfd, ltran again by the server's, and
#      on a VM whose own wake-up costs 0.1-0.3 ms that was 0.3-0.6 ms above
#      the kernel's median, so 0.4 failed now and then on a quiet machine;
#      timed sleeps instead of wake-ups gave medians of 1.3-6.5 ms at
#      load 15-18, the kernel's 0.09-0.14 ms), in one of 3 attempts (each
#      against the kernel's median just before: a loaded machine's bursts
#      move one attempt), ltran counts the wake-ups it sent, and
#      the port's doorbell (a packet socket on the veth) woke ltran;
#   3. redis-benchmark -c 1 -t ping_inline to each in turn, the other two
#      idle: p99 below LTRAN_LP_P99_MS (the target is 1 ms; the default is a
#      generous 20 ms for a loaded 2-core CI machine; performance.md has the
#      measured figures).
T_BASE="${LSTACK_TB:-lstk}"
export LSTACK_TB="${T_BASE}ltp"
# shellcheck source=ltran_lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/ltran_lib.sh"
P50_EXTRA="${LTRAN_LP_P50_EXTRA_MS:-0.8}"
P99_MAX="${LTRAN_LP_P99_MS:-20}"
PINGS="${LTRAN_LP_PINGS:-200}"
lt_init "${1:-}"

SOCK="$W/ltran.sock"
PREFIX="${LSTACK_TB}lt"
lt_write_ltran_conf 8191 "${LTRAN_LP_LTRAN:-1}"
tb_write_conf "$W/lstack.conf" \
    "dpdk_args = [ \"--no-pci\", \"-l\", \"$TB_CPU\" ];" \
    'use_ltran = 1;' "ltran_socket = \"$SOCK\";" 'low_power_mode = 1;'

lt_start_ltran

for p in 6379 6380 6381; do
    ip netns exec "$TB_NS_SRV" env LD_PRELOAD="$(preload_list "$LIB")" LSTACK_CONF_PATH="$W/lstack.conf" \
        GAZELLE_BIND_PROCNAME=redis-server redis-server --port "$p" --bind 0.0.0.0 --protected-mode no \
        --save '' --appendonly no --daemonize no --dir "$W" >"$W/redis$p.log" 2>&1 &
    RPID[$p]=$!
done
cli() { ip netns exec "$TB_NS_CLI" timeout 10 redis-cli -h "$TB_IP_STACK" -p "$@"; }
for p in 6379 6380 6381; do
    for ((i = 0; i < 300; i++)); do
        [[ "$(cli "$p" ping 2>/dev/null)" == PONG ]] && break
        kill -0 "${RPID[$p]}" 2>/dev/null || fail "redis on $p exited"
        sleep 0.2
    done
    [[ "$(cli "$p" ping 2>/dev/null)" == PONG ]] || fail "redis on $p did not answer PING through ltran"
done
ok "ltran and three redis-servers, all low_power_mode = 1, answer PING"

ltran_stat() { # KEY: a number of stackctl ltran --json's "ltran" object
    ip netns exec "$TB_NS_SRV" "$STACKCTL" ltran "$SOCK" --json |
        python3 -c 'import json,sys; print(json.load(sys.stdin)["ltran"][sys.argv[1]])' "$1"
}
ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }

# 1. Idle: everyone sleeps.
sleep 1
s0=$(ltran_stat sleeps) || fail "stackctl ltran --json failed"
declare -A T0=()
for k in ltran 6379 6380 6381; do
    pid=$([[ $k == ltran ]] && echo "$LTRAN_PID" || echo "${RPID[$k]}")
    T0[$k]=$(ticks "$pid")
done
sleep 2
hz=$(getconf CLK_TCK)
line=""
for k in ltran 6379 6380 6381; do
    pid=$([[ $k == ltran ]] && echo "$LTRAN_PID" || echo "${RPID[$k]}")
    pct=$(( ($(ticks "$pid") - T0[$k]) * 100 / (2 * hz) ))
    line+=" $k ${pct}%"
    ((pct <= 50)) || fail "idle $k used ${pct}% of a CPU over 2 s (low_power_mode = 1)"
done
s1=$(ltran_stat sleeps)
(( s1 > s0 || ${LTRAN_LP_LTRAN:-1} == 0 )) || fail "ltran did not sleep while idle (sleeps $s0 -> $s1)"
# With the port's doorbell (af_packet) nothing but a frame, a client or the
# control socket ends ltran's sleep: a few sleeps a second, not one per
# millisecond (about 2,000 in 2 s before its control socket joined the sleep).
if [[ "${LTRAN_LP_LTRAN:-1}" == 1 && "$TB_PMD" == af_packet ]]; then
    ((s1 - s0 <= 200)) || fail "idle ltran slept $((s1 - s0)) times in 2 s: woken by a timer, not by work"
fi
ok "idle for 2 s: CPU$line; ltran slept $((s1 - s0)) times"
cpus() { awk '/^Cpus_allowed_list/ {print $2}' "/proc/$1/status"; }
echo "   CPUs allowed: ltran $(cpus "$LTRAN_PID"), redis $(cpus "${RPID[6379]}") / $(cpus "${RPID[6380]}") / $(cpus "${RPID[6381]}") (of $(nproc))"

# 2. One PING at a time to sleeping processes, against a kernel redis-server
# on the client namespace's loopback measured the same way now (the machine's
# load moves both; the server veth has no kernel address).
ip netns exec "$TB_NS_CLI" redis-server --port 6390 --bind 0.0.0.0 --protected-mode no --save '' \
    --appendonly no --daemonize no --dir "$W" >"$W/redis-kernel.log" 2>&1 &
RPID[kernel]=$!
for ((i = 0; i < 100; i++)); do
    [[ "$(ip netns exec "$TB_NS_CLI" redis-cli -p 6390 ping 2>/dev/null)" == PONG ]] && break
    sleep 0.1
done
spaced() { # HOST PORT: "p50 p90 p99 max" of $PINGS spaced PINGs
    ip netns exec "$TB_NS_CLI" python3 "$T_HERE/ltran_lp_ping.py" "$1" "$2" "$PINGS"
}
below() { python3 -c 'import sys; sys.exit(0 if float(sys.argv[1]) < float(sys.argv[2]) + float(sys.argv[3]) else 1)' "$@"; }
w0=$(ltran_stat wakeups_sent)
b0=$(ltran_stat woken_by_port)
for p in 6379 6380 6381; do
    # Up to 3 attempts, each against the kernel's median measured just before
    # (a burst of the machine's load moves one attempt, not three).
    passed=0
    for attempt in 1 2 3; do
        read -r k50 _ _ _ <<<"$(spaced 127.0.0.1 6390)" || fail "spaced PINGs to the kernel redis failed"
        read -r p50 p90 p99 mx <<<"$(spaced "$TB_IP_STACK" "$p")" || fail "spaced PINGs to $p failed"
        echo "   $p attempt $attempt: $PINGS PINGs after 3-8 ms pauses: p50 $p50 p90 $p90 p99 $p99 max $mx ms (kernel loopback p50 $k50)"
        if below "$p50" "$k50" "$P50_EXTRA"; then
            passed=1
            break
        fi
    done
    ((passed)) || fail "PINGs to a sleeping redis on $p: median not below the kernel's + $P50_EXTRA ms in 3 attempts"
done
w1=$(ltran_stat wakeups_sent)
b1=$(ltran_stat woken_by_port)
((w1 - w0 >= PINGS)) || fail "ltran woke sleeping clients $((w1 - w0)) times for $((3 * PINGS)) spaced PINGs"
if [[ "${LTRAN_LP_LTRAN:-1}" == 1 && "$TB_PMD" == af_packet ]]; then # the doorbell: af_packet only
    grep -q "the port's interface rings ltran awake" "$W/ltran.log" || fail "ltran has no doorbell on an af_packet port"
    ((b1 - b0 >= PINGS)) || fail "the port's doorbell woke ltran $((b1 - b0)) times for $((3 * PINGS)) spaced PINGs"
fi
ok "PINGs to sleeping servers: median below the kernel loopback's + $P50_EXTRA ms on each; ltran woke them $((w1 - w0)) times, the port's doorbell woke ltran $((b1 - b0)) times"

# 3. redis-benchmark -c 1 to each, the others idle; the same to the kernel
# redis on the client namespace's loopback first, as the machine's yardstick.
csv=$(ip netns exec "$TB_NS_CLI" timeout 60 redis-benchmark -h 127.0.0.1 -p 6390 -c 1 -n 5000 \
    -t ping_inline --csv 2>/dev/null | tail -n 1) || fail "redis-benchmark to the kernel redis failed"
IFS=, read -r _ rps _ _ p50 _ p99 mx <<<"${csv//\"/}"
echo "   kernel loopback: redis-benchmark -c 1 ping_inline: $rps req/s, p50 $p50 p99 $p99 max $mx ms"
for p in 6379 6380 6381; do
    csv=$(ip netns exec "$TB_NS_CLI" timeout 60 redis-benchmark -h "$TB_IP_STACK" -p "$p" -c 1 -n 5000 \
        -t ping_inline --csv 2>/dev/null | tail -n 1) || fail "redis-benchmark to $p failed"
    # "test","rps","avg_latency_ms","min_latency_ms","p50_latency_ms","p95_latency_ms","p99_latency_ms","max_latency_ms"
    IFS=, read -r _ rps _ _ p50 _ p99 mx <<<"${csv//\"/}"
    echo "   $p: redis-benchmark -c 1 ping_inline: $rps req/s, p50 $p50 p99 $p99 max $mx ms"
    python3 -c 'import sys; sys.exit(0 if float(sys.argv[1]) < float(sys.argv[2]) else 1)' "$p99" "$P99_MAX" ||
        fail "redis-benchmark -c 1 to $p: p99 $p99 ms, not below $P99_MAX ms"
done
ok "redis-benchmark -c 1 to each in turn: p99 below $P99_MAX ms"
ip netns exec "$TB_NS_SRV" "$STACKCTL" ltran "$SOCK" | sed 's/^/   | /'
echo "PASS: $(basename "$0") ($N checks)"
exit 0
