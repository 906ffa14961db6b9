#!/usr/bin/env bash
# test_redis_repl.sh BUILD_DIR
# Replication in both directions across the namespace pair:
#  1. redis under lstack is the master of a kernel replica (in the client ns):
#     a full sync forks a child (diskless: the child streams the RDB through a
#     pipe and the parent sends it on a stack socket; disk-based: the child
#     writes the file, the parent sends it), then the stream of writes.
#  2. the same redis becomes the replica of a kernel master (in the client
#     ns): its outgoing connection goes through the stack (connect, gateway
#     ARP, a full sync received on a stack socket).
# LSTACK_TEST_TARGET=kernel runs the same against a kernel redis.
set -u
# shellcheck disable=SC2034 # T_NAME is read by common.sh
T_NAME=rrepl
# shellcheck source=redis_lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/redis_lib.sh"
r_init "${1:-}"

REPLICA_PORT=6390
EXT_PORT=6391
CLI_PIDS=()
tb_on_cleanup 'for p in "${CLI_PIDS[@]}"; do kill -TERM "$p" 2>/dev/null; done; sleep 0.5'

# start_cli_redis PORT DIR [ARGS...] : a kernel redis in the client namespace.
start_cli_redis() {
    local port="$1" dir="$2"
    shift 2
    mkdir -p "$dir"
    ip netns exec "$TB_NS_CLI" redis-server --port "$port" --bind "$TB_IP_CLI" --protected-mode no \
        --save "" --appendonly no --dir "$dir" --logfile "$dir/redis.log" "$@" >/dev/null 2>&1 &
    CLI_PIDS+=($!)
}

cli_at() { # cli_at PORT ARGS... : redis-cli in the client ns to the client's own redis
    local port="$1"
    shift
    ip netns exec "$TB_NS_CLI" timeout 30 redis-cli -h "$TB_IP_CLI" -p "$port" "$@"
}

# wait_link WHO PORT|srv : until INFO replication says master_link_status:up
# and the sync is over.
wait_link() {
    local who="$1" i st sync
    for ((i = 0; i < 300; i++)); do
        if [[ "$who" == srv ]]; then
            st=$(r_info srv master_link_status)
            sync=$(r_info srv master_sync_in_progress)
        else
            st=$(cli_at "$who" info replication 2>/dev/null | tr -d '\r' | sed -n 's/^master_link_status://p')
            sync=$(cli_at "$who" info replication 2>/dev/null | tr -d '\r' | sed -n 's/^master_sync_in_progress://p')
        fi
        [[ "$st" == up && "$sync" == 0 ]] && return 0
        sleep 0.1
    done
    echo "   replication link of '$who' not up after 30 s (status '$st', sync '$sync')"
    return 1
}

# wait_same KEYS PORT : until the replica at PORT has KEYS keys.
wait_same() {
    local want="$1" port="$2" i n
    for ((i = 0; i < 300; i++)); do
        n=$(cli_at "$port" dbsize 2>/dev/null)
        [[ "$n" == "$want" ]] && return 0
        sleep 0.1
    done
    echo "   replica has $n keys, master $want"
    return 1
}

r_conf "$R_CONF" 'tcp_conn_count = 256;'
r_start srv "$R_TARGET" --repl-diskless-sync-delay 0
r_wait_ready srv || r_fail "redis did not come up"
t_ok "master: redis on $R_TARGET ($R_HOST:$R_PORT)"
r_bench srv -c 20 -P 16 -n 50000 -r 50000 -d 200 -t set || r_fail "populating the master failed"
keys=$(r_cli srv dbsize)
t_ok "master dataset: $keys keys"

# --- 1a: diskless full sync (Redis 7's default) ------------------------------
start_cli_redis "$REPLICA_PORT" "$T_WORK/replica" --replicaof "$R_HOST" "$R_PORT"
wait_link "$REPLICA_PORT" || r_fail "kernel replica never got in sync with the master (diskless)"
wait_same "$keys" "$REPLICA_PORT" || r_fail "replica does not hold the master's keys after the diskless sync"
t_ok "diskless full sync to a kernel replica: $keys keys"
r_bench srv -c 10 -n 5000 -r 1000000 -d 50 -t set || r_fail "writes after the sync failed"
keys=$(r_cli srv dbsize)
wait_same "$keys" "$REPLICA_PORT" || r_fail "the write stream did not reach the replica"
v=$(r_cli srv set repl:probe "through-the-stream")
[[ "$v" == OK ]] || r_fail "SET on the master answered $v"
for ((i = 0; i < 100; i++)); do
    [[ "$(cli_at "$REPLICA_PORT" get repl:probe)" == through-the-stream ]] && break
    sleep 0.1
done
[[ "$(cli_at "$REPLICA_PORT" get repl:probe)" == through-the-stream ]] || r_fail "a single write never reached the replica"
t_ok "write stream: $keys keys and a probe key on the replica"

# --- 1b: disk-based full sync --------------------------------------------------
keys=$(r_cli srv dbsize)
[[ "$(r_cli srv config set repl-diskless-sync no)" == OK ]] || r_fail "CONFIG SET repl-diskless-sync no"
cli_at "$REPLICA_PORT" replicaof no one >/dev/null
cli_at "$REPLICA_PORT" flushall >/dev/null
cli_at "$REPLICA_PORT" replicaof "$R_HOST" "$R_PORT" >/dev/null
wait_link "$REPLICA_PORT" || r_fail "kernel replica never got in sync with the master (disk-based)"
wait_same "$keys" "$REPLICA_PORT" || r_fail "replica does not hold the master's keys after the disk-based sync"
[[ "$(r_info srv rdb_last_bgsave_status)" == ok ]] || r_fail "the master's BGSAVE for the sync failed"
t_ok "disk-based full sync (BGSAVE child, file sent by the parent): $keys keys"

# --- 2: the same redis as the replica of a kernel master -----------------------
start_cli_redis "$EXT_PORT" "$T_WORK/extmaster"
for ((i = 0; i < 100; i++)); do
    [[ "$(cli_at "$EXT_PORT" ping 2>/dev/null)" == PONG ]] && break
    sleep 0.1
done
ip netns exec "$TB_NS_CLI" redis-benchmark -h "$TB_IP_CLI" -p "$EXT_PORT" -q -c 10 -n 20000 -r 20000 -d 100 \
    -t set >/dev/null 2>&1 || r_fail "populating the kernel master failed"
ext_keys=$(cli_at "$EXT_PORT" dbsize)
out=$(r_cli srv replicaof "$TB_IP_CLI" "$EXT_PORT")
[[ "$out" == OK* ]] || r_fail "REPLICAOF answered $out"
wait_link srv || r_fail "redis on $R_TARGET never got in sync with the kernel master (outgoing connection)"
for ((i = 0; i < 300; i++)); do
    [[ "$(r_cli srv dbsize)" == "$ext_keys" ]] && break
    sleep 0.1
done
[[ "$(r_cli srv dbsize)" == "$ext_keys" ]] || r_fail "replica on $R_TARGET holds $(r_cli srv dbsize) keys, master $ext_keys"
cli_at "$EXT_PORT" set repl:back "to-the-stack" >/dev/null
for ((i = 0; i < 100; i++)); do
    [[ "$(r_cli srv get repl:back)" == to-the-stack ]] && break
    sleep 0.1
done
[[ "$(r_cli srv get repl:back)" == to-the-stack ]] || r_fail "the kernel master's write stream did not reach the replica"
t_ok "replica of a kernel master over an outgoing connection: $ext_keys keys and the write stream"

r_alive srv || r_fail "redis died"
r_stop srv term || r_fail "redis did not exit cleanly on SIGTERM"
t_ok "redis exited 0 on SIGTERM"
t_pass
