#!/usr/bin/env bash
# test_ltran_cluster.sh - a Redis Cluster under lstack through one ltran:
# three masters (198.18.0.2:7001, .3:7002, .4:7003) and a replica of the
# first (.5:7004), one address each, cluster-enabled; the cluster bus (port
# + 10000, connections between the instances) runs over lstack too: ltran
# hairpins what one client sends to another's address.
#   1. redis-cli --cluster create from the client namespace; cluster_state
#      ok on every node; the replica joins (add-node --cluster-slave) and
#      syncs;
#   2. redis-cli -c: 50 keys over all slots written and read back through
#      each master; redis-benchmark --cluster SET/GET;
#   3. stackctl ltran counts hairpinned frames (the bus did not leave by the
#      port);
#   4. kill -9 of the first master: its replica is promoted, the cluster is
#      ok again, and every key reads back (redis-cli -c).
# Bed: "${LSTACK_TB:-lstk}ltc". Exit 0 pass, 1 fail, 77 skip.
set -u
T_BASE="${LSTACK_TB:-lstk}"
export LSTACK_TB="${T_BASE}ltc"
# shellcheck source=ltran_lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/ltran_lib.sh"
NODES=(198.18.0.2:7001 198.18.0.3:7002 198.18.0.4:7003 198.18.0.5:7004)
lt_init "${1:-}"

SOCK="$W/ltran.sock"
lt_write_ltran_conf 16383 "1"
lt_start_ltran

cli() { ip netns exec "$TB_NS_CLI" timeout 20 redis-cli "$@"; }
node_cli() { # HOST:PORT ARGS...
    local hp="$1"
    shift
    cli -h "${hp%:*}" -p "${hp#*:}" "$@"
}

start_node() { # HOST:PORT
    local hp="$1" ip="${1%:*}" port="${1#*:}"
    tb_write_conf "$W/lstack-$port.conf" \
        "dpdk_args = [ \"--no-pci\", \"-l\", \"$TB_CPU\" ];" \
        'use_ltran = 1;' "ltran_socket = \"$SOCK\";" 'low_power_mode = 1;' "host_addr = \"$ip\";"
    mkdir -p "$W/n$port"
    ip netns exec "$TB_NS_SRV" env LD_PRELOAD="$(preload_list "$LIB")" LSTACK_CONF_PATH="$W/lstack-$port.conf" \
        GAZELLE_BIND_PROCNAME=redis-server redis-server --port "$port" --bind 0.0.0.0 --protected-mode no \
        --cluster-enabled yes --cluster-config-file "$W/n$port/nodes.conf" --cluster-node-timeout 3000 \
        --save '' --appendonly no --daemonize no --dir "$W/n$port" >"$W/redis$port.log" 2>&1 &
    RPID[$port]=$!
    for ((i = 0; i < 300; i++)); do
        [[ "$(node_cli "$hp" ping 2>/dev/null)" == PONG ]] && return 0
        kill -0 "${RPID[$port]}" 2>/dev/null || fail "redis on $hp exited"
        sleep 0.2
    done
    fail "redis on $hp did not answer PING through ltran"
}

for hp in "${NODES[@]}"; do start_node "$hp"; done
ok "four cluster-enabled redis-servers under lstack, one address each, answer PING through ltran"

cluster_ok() { # HOST:PORT...: cluster_state:ok on each, within 40 s
    local hp i
    for hp in "$@"; do
        for ((i = 0; i < 200; i++)); do
            node_cli "$hp" cluster info 2>/dev/null | grep -q '^cluster_state:ok' && break
            sleep 0.2
        done
        node_cli "$hp" cluster info 2>/dev/null | grep -q '^cluster_state:ok' || return 1
    done
}

cli --cluster create "${NODES[0]}" "${NODES[1]}" "${NODES[2]}" --cluster-yes >"$W/create.log" 2>&1 ||
    fail "redis-cli --cluster create failed: $(tail -n 5 "$W/create.log")"
cluster_ok "${NODES[0]}" "${NODES[1]}" "${NODES[2]}" || fail "the cluster did not reach cluster_state:ok"
ok "redis-cli --cluster create of three masters (the bus between them over lstack): cluster_state:ok"

M1_ID=$(node_cli "${NODES[0]}" cluster myid | tr -d '\r')
cli --cluster add-node "${NODES[3]}" "${NODES[0]}" --cluster-slave --cluster-master-id "$M1_ID" \
    >"$W/add.log" 2>&1 || fail "add-node of the replica failed: $(tail -n 5 "$W/add.log")"
for ((i = 0; i < 200; i++)); do
    node_cli "${NODES[3]}" info replication 2>/dev/null | grep -q '^master_link_status:up' && break
    sleep 0.2
done
node_cli "${NODES[3]}" info replication | grep -q '^master_link_status:up' ||
    fail "the replica did not sync from ${NODES[0]}: $(node_cli "${NODES[3]}" info replication | tr '\r\n' '  ')"
cluster_ok "${NODES[3]}" || fail "the replica does not see cluster_state:ok"
ok "a replica of ${NODES[0]} joins (add-node --cluster-slave) and syncs"

for ((k = 0; k < 50; k++)); do
    node_cli "${NODES[$((k % 3))]}" -c set "key:$k" "value-$k" >/dev/null || fail "redis-cli -c set key:$k failed"
done
node_cli "${NODES[0]}" -c wait 1 5000 >/dev/null
bad=0
for ((k = 0; k < 50; k++)); do
    v=$(node_cli "${NODES[$(((k + 1) % 3))]}" -c get "key:$k")
    [[ "$v" == "value-$k" ]] || bad=$((bad + 1))
done
((bad == 0)) || fail "$bad of 50 keys did not read back through redis-cli -c"
owners=$(for hp in "${NODES[@]:0:3}"; do node_cli "$hp" dbsize; done | tr '\n' ' ')
ok "redis-cli -c: 50 keys written and read back through other masters (keys per master: $owners)"

out=$(ip netns exec "$TB_NS_CLI" timeout 120 redis-benchmark --cluster -h "${NODES[0]%:*}" -p "${NODES[0]#*:}" \
    -t set,get -n 3000 -c 6 -q 2>&1) || fail "redis-benchmark --cluster failed: $out"
echo "$out" | tr '\r' '\n' | grep -E '^(SET|GET):' | sed 's/^/   /'
echo "$out" | tr '\r' '\n' | grep -qE '^SET: [0-9.]+ requests per second' &&
    echo "$out" | tr '\r' '\n' | grep -qE '^GET: [0-9.]+ requests per second' ||
    fail "redis-benchmark --cluster: no SET/GET figures: $out"
ok "redis-benchmark --cluster SET/GET against the cluster"

hairpin=$(ip netns exec "$TB_NS_SRV" "$STACKCTL" ltran "$SOCK" --json |
    python3 -c 'import json,sys; print(json.load(sys.stdin)["ltran"]["hairpin"])') || fail "stackctl ltran failed"
((hairpin > 100)) || fail "ltran hairpinned only $hairpin frames: the cluster bus did not go through it"
ok "the cluster bus stays inside ltran: $hairpin frames hairpinned"

kill -KILL "${RPID[7001]}"
wait "${RPID[7001]}" 2>/dev/null
unset "RPID[7001]"
for ((i = 0; i < 150; i++)); do
    node_cli "${NODES[3]}" role 2>/dev/null | head -n 1 | grep -q '^master' && break
    sleep 0.2
done
node_cli "${NODES[3]}" role | head -n 1 | grep -q '^master' ||
    fail "the replica was not promoted after kill -9 of its master: $(node_cli "${NODES[3]}" cluster nodes | tr '\n' ';')"
cluster_ok "${NODES[1]}" "${NODES[2]}" "${NODES[3]}" || fail "the cluster did not come back to ok after the failover"
bad=0
for ((k = 0; k < 50; k++)); do
    v=$(node_cli "${NODES[1]}" -c get "key:$k")
    [[ "$v" == "value-$k" ]] || bad=$((bad + 1))
done
((bad == 0)) || fail "after the failover $bad of 50 keys did not read back"
ok "kill -9 of ${NODES[0]}: its replica ${NODES[3]} is promoted, cluster_state:ok, all 50 keys read back"
ip netns exec "$TB_NS_SRV" "$STACKCTL" ltran "$SOCK" | sed 's/^/   | /'
echo "PASS: $(basename "$0") ($N checks)"
exit 0
