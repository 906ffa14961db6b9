#!/usr/bin/env bash
# rtw_rings.sh - scenario 1 of scripts/bench.sh (redis-benchmark -c 50 -P 1
# -t set,get -d 3) against a redis-server under lstack in three variants,
# alternating in the same run (issue 12: run-to-wakeup's data rings):
#   rtc         stack_thread_mode = "run-to-completion" (the baseline)
#   rtw-locked  "run-to-wakeup" with LSTACK_RTW_RINGS=0: every socket call
#               under the stack's lock (the path before the rings)
#   rtw-rings   "run-to-wakeup" with the rings (sock/tcp_ring.c)
# The bed, the server and its stop are tests/system/redis_lib.sh's. redis's
# main thread runs on SERVER_CPU (1), redis-benchmark on CLIENT_CPU (0),
# like scripts/bench.sh; run-to-wakeup's stack thread on STACK_CPU
# (num_cpus, default 0: a 2-core machine has no third core). Prints one
# line per run: variant, round, SET and GET req/s, the load average.
#   LSTACK_TB=xx bench/rtw_rings.sh BUILD [ROUNDS] [N]
set -u
ROUNDS="${2:-3}"
NREQ="${3:-100000}"
export LSTACK_TB="${LSTACK_TB:-rtwr}"
# shellcheck disable=SC2034 # T_NAME is read by common.sh
T_NAME=b
# shellcheck source=../tests/system/redis_lib.sh
source "$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/tests/system/redis_lib.sh"
r_init "${1:?usage: $0 BUILD [ROUNDS] [N]}"
SERVER_CPU="${SERVER_CPU:-1}"
CLIENT_CPU="${CLIENT_CPU:-0}"
STACK_CPU="${STACK_CPU:-0}"

run() { # VARIANT ROUND MODE RINGS
    local v="$1" r="$2" mode="$3" name="s$1$2"
    r_conf "$R_CONF" 'tcp_conn_count = 1024;' "stack_thread_mode = \"$mode\";" "num_cpus = \"$STACK_CPU\";"
    export LSTACK_RTW_RINGS="$4"
    r_start "$name" lstack >/dev/null
    if ! r_wait_ready "$name" >/dev/null; then
        echo "$v round $r: redis did not answer"
        r_stop "$name" kill
        return
    fi
    taskset -pc "$SERVER_CPU" "$(r_pid "$name")" >/dev/null # the main thread only: the stack thread keeps its CPU
    local csv set get
    csv=$(ip netns exec "$TB_NS_CLI" taskset -c "$CLIENT_CPU" redis-benchmark -h "$(r_host "$name")" \
        -p "$(r_port "$name")" --csv -n "$NREQ" -c 50 -P 1 -t set,get -d 3 2>/dev/null)
    set=$(echo "$csv" | awk -F'"' '$2=="SET"{print $4}')
    get=$(echo "$csv" | awk -F'"' '$2=="GET"{print $4}')
    printf '%-11s round %s  SET %10s  GET %10s  load %s\n' "$v" "$r" "$set" "$get" "$(cut -d' ' -f1 /proc/loadavg)"
    r_stop "$name" term >/dev/null || echo "   $v round $r: redis did not stop cleanly"
}

echo "# $(date -u +%FT%TZ) load: $(cut -d' ' -f1-3 /proc/loadavg); server CPU $SERVER_CPU, client CPU $CLIENT_CPU, stack thread CPU $STACK_CPU, -n $NREQ"
for ((r = 1; r <= ROUNDS; r++)); do
    run rtc "$r" run-to-completion 1
    run rtw-locked "$r" run-to-wakeup 0
    run rtw-rings "$r" run-to-wakeup 1
done
echo "# end load: $(cut -d' ' -f1-3 /proc/loadavg)"
