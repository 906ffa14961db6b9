#!/usr/bin/env bash
# ltran_vs_direct.sh - scenario 1 of scripts/bench.sh (redis-benchmark -c 50
# -P 1 -t set,get -d 3) against a redis-server under lstack, direct on the
# port and through ltran, alternating in the same run, with ltran's core
# chosen per variant (issue 13: "where ltran's core came from"):
#   direct          lstack drives the port itself (the baseline)
#   ltran-srvcore   ltran shares the server's core (taskset)
#   ltran-clicore   ltran shares the client's core
# each through ltran with ltran's low_power_mode = 1 and 0 (lp1/lp0).
# The server runs on SERVER_CPU (1), redis-benchmark on CLIENT_CPU (0), like
# scripts/bench.sh. Prints one line per run: variant, round, SET and GET
# req/s, and ltran's cost per frame (stackctl ltran).
#   bench/ltran_vs_direct.sh BUILD [ROUNDS] [N]
set -u
BUILD="$(cd "${1:?usage: $0 BUILD [ROUNDS] [N]}" && pwd)"
ROUNDS="${2:-2}"
NREQ="${3:-30000}"
export LSTACK_TB="${LSTACK_TB:-lvd}"
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# shellcheck source=../tests/system/testbed.sh
source "$HERE/tests/system/testbed.sh"
# shellcheck source=../tests/preload_env.sh
source "$HERE/tests/preload_env.sh"
SERVER_CPU="${SERVER_CPU:-1}"
CLIENT_CPU="${CLIENT_CPU:-0}"
LIB="$BUILD/lstack/liblstack.so"
W="$(mktemp -d /tmp/ltran-vs-direct.XXXXXX)"
RPID=""
LPID=""
stop_all() {
    [[ -n "$RPID" ]] && kill -TERM "$RPID" 2>/dev/null && wait "$RPID" 2>/dev/null
    [[ -n "$LPID" ]] && kill -TERM "$LPID" 2>/dev/null && wait "$LPID" 2>/dev/null
    RPID="" LPID=""
}
cleanup_all() {
    stop_all
    umount "$W/huge" 2>/dev/null
    rm -rf "$W" "/var/run/dpdk/${LSTACK_TB}lt"
}
tb_on_cleanup cleanup_all
tb_trap_cleanup
tb_up || exit 1
mkdir -p "$W/huge"
mount -t hugetlbfs -o pagesize=2M nodev "$W/huge" || exit 1

wait_pong() {
    local i
    for ((i = 0; i < 300; i++)); do
        [[ "$(ip netns exec "$TB_NS_CLI" timeout 2 redis-cli -h "$TB_IP_STACK" ping 2>/dev/null)" == PONG ]] && return 0
        sleep 0.2
    done
    return 1
}

run() { # VARIANT ROUND LTRAN_CPU LTRAN_LP (LTRAN_CPU "": direct)
    local v="$1" r="$2" lcpu="$3" llp="$4" conf="$W/lstack.conf"
    if [[ -z "$lcpu" ]]; then
        tb_write_conf "$conf"
    else
        cat >"$W/ltran.conf" <<CONF
forward_kit_args = "--no-pci -l $lcpu --huge-dir $W/huge --vdev=$(tb_vdev)"
file_prefix = "${LSTACK_TB}lt"
ltran_socket = "$W/ltran.sock"
mbuf_pool_size = 16383
low_power_mode = $llp
CONF
        ip netns exec "$TB_NS_SRV" taskset -c "$lcpu" "$BUILD/ltran/ltran" -c "$W/ltran.conf" >"$W/ltran.log" 2>&1 &
        LPID=$!
        for ((i = 0; i < 100; i++)); do
            grep -q '^ltran: up on' "$W/ltran.log" && break
            sleep 0.1
        done
        tb_write_conf "$conf" "dpdk_args = [ \"--no-pci\", \"-l\", \"$SERVER_CPU\" ];" 'use_ltran = 1;' \
            "ltran_socket = \"$W/ltran.sock\";"
    fi
    ip netns exec "$TB_NS_SRV" taskset -c "$SERVER_CPU" env LD_PRELOAD="$(preload_list "$LIB")" \
        LSTACK_CONF_PATH="$conf" GAZELLE_BIND_PROCNAME=redis-server redis-server --bind 0.0.0.0 \
        --protected-mode no --save '' --appendonly no --daemonize no --dir "$W" >"$W/redis.log" 2>&1 &
    RPID=$!
    if ! wait_pong; then
        echo "$v round $r: redis did not answer"
        stop_all
        return
    fi
    local csv set get cost=""
    csv=$(ip netns exec "$TB_NS_CLI" taskset -c "$CLIENT_CPU" redis-benchmark -h "$TB_IP_STACK" --csv -n "$NREQ" \
        -c 50 -P 1 -t set,get -d 3 2>/dev/null)
    set=$(echo "$csv" | awk -F'"' '$2=="SET"{print $4}')
    get=$(echo "$csv" | awk -F'"' '$2=="GET"{print $4}')
    [[ -n "$lcpu" ]] && cost=$(ip netns exec "$TB_NS_SRV" "$BUILD/tools/stackctl" ltran "$W/ltran.sock" | grep '^cost:')
    printf '%-16s round %s  SET %10s  GET %10s  %s\n' "$v" "$r" "$set" "$get" "$cost"
    stop_all
}

echo "# $(date -u +%FT%TZ) load: $(cut -d' ' -f1-3 /proc/loadavg); server CPU $SERVER_CPU, client CPU $CLIENT_CPU, -n $NREQ"
for ((r = 1; r <= ROUNDS; r++)); do
    run direct "$r" "" ""
    run ltran-srvcore-lp1 "$r" "$SERVER_CPU" 1
    run ltran-clicore-lp1 "$r" "$CLIENT_CPU" 1
    run ltran-srvcore-lp0 "$r" "$SERVER_CPU" 0
    run ltran-clicore-lp0 "$r" "$CLIENT_CPU" 0
done
echo "# end load: $(cut -d' ' -f1-3 /proc/loadavg)"
