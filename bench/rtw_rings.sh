#!/usr/bin/env bash
# rtw_rings.sh - scenario 1 of scripts/bench.sh (redis-benchmark -c 50 -P 1
# -t set,get -d 3) against a redis-server under lstack in three variants,
# alternating in the same run (issue 12: run-to-wakeup's data rings):
#   rtc         stack_thread_mode = "run-to-completion" (the baseline)
#   rtw-locked  "run-to-wakeup" with LSTACK_RTW_RINGS=0: every socket call
#               under the stack's lock (the path before the rings)
#   rtw-rings   "run-to-wakeup" with the rings (sock/tcp_ring.c)
# The server runs on SERVER_CPU (1), redis-benchmark on CLIENT_CPU (0), like
# scripts/bench.sh; run-to-wakeup's stack thread on STACK_CPU (num_cpus,
# default 0: a 2-core machine has no third core). Prints one line per run:
# variant, round, SET and GET req/s, and the load average.
#   bench/rtw_rings.sh BUILD [ROUNDS] [N]
set -u
BUILD="$(cd "${1:?usage: $0 BUILD [ROUNDS] [N]}" && pwd)"
ROUNDS="${2:-3}"
NREQ="${3:-100000}"
export LSTACK_TB="${LSTACK_TB:-rtwr}"
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# shellcheck source=../tests/system/testbed.sh
source "$HERE/tests/system/testbed.sh"
# shellcheck source=../tests/preload_env.sh
source "$HERE/tests/preload_env.sh"
SERVER_CPU="${SERVER_CPU:-1}"
CLIENT_CPU="${CLIENT_CPU:-0}"
STACK_CPU="${STACK_CPU:-0}"
LIB="$BUILD/lstack/liblstack.so"
W="$(mktemp -d /tmp/rtw-rings.XXXXXX)"
RPID=""
stop_all() {
    [[ -n "$RPID" ]] && kill -TERM "$RPID" 2>/dev/null && wait "$RPID" 2>/dev/null
    RPID=""
}
cleanup_all() {
    stop_all
    rm -rf "$W"
}
tb_on_cleanup cleanup_all
tb_trap_cleanup
tb_up || exit 1

wait_pong() {
    local i
    for ((i = 0; i < 300; i++)); do
        [[ "$(ip netns exec "$TB_NS_CLI" timeout 2 redis-cli -h "$TB_IP_STACK" ping 2>/dev/null)" == PONG ]] && return 0
        sleep 0.2
    done
    return 1
}

run() { # VARIANT ROUND MODE RINGS
    local v="$1" r="$2" mode="$3" rings="$4" conf="$W/lstack.conf"
    tb_write_conf "$conf" "stack_thread_mode = \"$mode\";" "num_cpus = \"$STACK_CPU\";"
    ip netns exec "$TB_NS_SRV" taskset -c "$SERVER_CPU" env LD_PRELOAD="$(preload_list "$LIB")" \
        LSTACK_RTW_RINGS="$rings" LSTACK_CONF_PATH="$conf" GAZELLE_BIND_PROCNAME=redis-server redis-server \
        --bind 0.0.0.0 --protected-mode no --save '' --appendonly no --daemonize no --dir "$W" \
        >"$W/redis.log" 2>&1 &
    RPID=$!
    if ! wait_pong; then
        echo "$v round $r: redis did not answer"
        stop_all
        return
    fi
    local csv set get
    csv=$(ip netns exec "$TB_NS_CLI" taskset -c "$CLIENT_CPU" redis-benchmark -h "$TB_IP_STACK" --csv -n "$NREQ" \
        -c 50 -P 1 -t set,get -d 3 2>/dev/null)
    set=$(echo "$csv" | awk -F'"' '$2=="SET"{print $4}')
    get=$(echo "$csv" | awk -F'"' '$2=="GET"{print $4}')
    printf '%-11s round %s  SET %10s  GET %10s  load %s\n' "$v" "$r" "$set" "$get" "$(cut -d' ' -f1 /proc/loadavg)"
    stop_all
}

echo "# $(date -u +%FT%TZ) load: $(cut -d' ' -f1-3 /proc/loadavg); server CPU $SERVER_CPU, client CPU $CLIENT_CPU, stack thread CPU $STACK_CPU, -n $NREQ"
for ((r = 1; r <= ROUNDS; r++)); do
    run rtc "$r" run-to-completion 1
    run rtw-locked "$r" run-to-wakeup 0
    run rtw-rings "$r" run-to-wakeup 1
done
echo "# end load: $(cut -d' ' -f1-3 /proc/loadavg)"
