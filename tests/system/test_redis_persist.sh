#!/usr/bin/env bash
# test_redis_persist.sh BUILD_DIR
# BGSAVE and BGREWRITEAOF while redis-benchmark runs: redis forks a child
# that writes the RDB / AOF (a child of a bound process stays off the stack
# and only drops its view of the stack sockets). Both must complete
# (INFO persistence: *_in_progress back to 0, last status ok), the files must
# be valid, and no benchmark client may see an error.
# LSTACK_TEST_TARGET=kernel runs the same against a kernel redis.
set -u
# shellcheck disable=SC2034 # T_NAME is read by common.sh
T_NAME=rpersist
# shellcheck source=redis_lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/redis_lib.sh"
r_init "${1:-}"

r_conf "$R_CONF" 'tcp_conn_count = 128;' 'mbuf_count_per_conn = 128;'
r_start srv "$R_TARGET" --appendonly yes --appendfsync everysec --auto-aof-rewrite-percentage 0
r_wait_ready srv || r_fail "redis did not come up"
t_ok "redis-server up on $R_TARGET ($R_HOST:$R_PORT), appendonly yes, dir $(r_dir srv)"

# A dataset that takes the forked child a moment to write (~200k keys).
r_bench srv -c 50 -P 16 -n 200000 -r 200000 -d 100 -t set || r_fail "populating the dataset failed"
keys=$(r_cli srv dbsize)
t_ok "dataset: $keys keys"

# r_wait_persist WHAT FIELD_IN_PROGRESS FIELD_STATUS : poll INFO until done.
wait_persist() {
    local what="$1" busy="$2" status="$3" i b s
    for ((i = 0; i < 600; i++)); do
        b=$(r_info srv "$busy")
        s=$(r_info srv "$status")
        # aof_rewrite_scheduled: a rewrite waits for a running BGSAVE
        if [[ "$b" == 0 && "$(r_info srv aof_rewrite_scheduled)" == 0 ]]; then
            [[ "$s" == ok ]] && return 0
            echo "   $what finished with $status=$s"
            return 1
        fi
        sleep 0.1
    done
    echo "   $what still in progress after 60 s ($busy=$b)"
    return 1
}

# The benchmark loops (-l) until the rounds are done. redis-benchmark exits
# at the first error it sees, so "still running after the last round" means
# no client saw an error; it is then stopped with SIGTERM and its output checked.
blog="$T_WORK/bench-bg.log"
r_bench_bg srv "$blog" -l -c 50 -P 4 -n 20000 -r 200000 -d 100 -t set,get,incr,lpush,rpop,sadd,hset
bpid=$R_BG_PID
sleep 1
kill -0 "$bpid" 2>/dev/null || r_fail "background redis-benchmark ended early: $(tr '\r' '\n' <"$blog" | grep -v '^ *$' | tail -n 3)"

for ((round = 1; round <= 3; round++)); do
    changes=$(r_info srv rdb_changes_since_last_save)
    out=$(r_cli srv bgsave 2>&1)
    [[ "$out" == *"Background saving started"* ]] || r_fail "BGSAVE (round $round) answered: $out"
    wait_persist BGSAVE rdb_bgsave_in_progress rdb_last_bgsave_status || r_fail "BGSAVE did not complete (round $round)"
    out=$(r_cli srv bgrewriteaof 2>&1)
    [[ "$out" == *"rewriting"* ]] || r_fail "BGREWRITEAOF (round $round) answered: $out"
    wait_persist BGREWRITEAOF aof_rewrite_in_progress aof_last_bgrewrite_status || r_fail "BGREWRITEAOF did not complete (round $round)"
    kill -0 "$bpid" 2>/dev/null || r_fail "redis-benchmark stopped during round $round: $(tr '\r' '\n' <"$blog" | grep -v '^ *$' | tail -n 3)"
    echo "   round $round: BGSAVE ok ($changes changes since the last save), BGREWRITEAOF ok, benchmark still running"
    sleep 0.3
done
forks=$(r_info srv total_forks)
((forks >= 6)) || r_fail "total_forks=$forks, expected >= 6"
t_ok "3 rounds of BGSAVE + BGREWRITEAOF completed during redis-benchmark (statuses ok, $forks forks)"

[[ "$(r_info srv aof_last_write_status)" == ok ]] || r_fail "aof_last_write_status=$(r_info srv aof_last_write_status)"
# (SIGTERM: a background job of a non-interactive shell ignores SIGINT)
kill -TERM "$bpid" 2>/dev/null
if ! tb_wait_gone "$bpid" 10; then
    echo "   redis-benchmark ignored SIGTERM for 10 s: SIGKILL"
    kill -KILL "$bpid" 2>/dev/null
fi
rc=0
wait "$bpid" || rc=$?
if tr '\r' '\n' <"$blog" | grep -qiE 'error|ERR|abort|disconnected|reset by peer'; then
    tr '\r' '\n' <"$blog" | grep -iE 'error|ERR|abort|disconnected|reset by peer' | sort | uniq -c | head -n 5 | sed 's/^/   | /'
    r_fail "a benchmark client saw an error during BGSAVE/BGREWRITEAOF"
fi
tr '\r' '\n' <"$blog" | grep -E 'requests per second' | sed 's/^/     /' | tail -n 7
t_ok "background redis-benchmark: ran through all rounds without an error (stopped by SIGTERM, status $rc)"

dir=$(r_dir srv)
[[ -s "$dir/dump.rdb" ]] || r_fail "no dump.rdb in $dir"
if command -v redis-check-rdb >/dev/null; then
    out=$(redis-check-rdb "$dir/dump.rdb" 2>&1) || r_fail "redis-check-rdb: $(tail -n 3 <<<"$out")"
    t_ok "dump.rdb ($(stat -c %s "$dir/dump.rdb") bytes) passes redis-check-rdb"
fi
aofdir="$dir/appendonlydir"
[[ -f "$aofdir/appendonly.aof.manifest" ]] || r_fail "no AOF manifest in $aofdir"
if command -v redis-check-aof >/dev/null; then
    out=$(redis-check-aof "$aofdir/appendonly.aof.manifest" 2>&1) || r_fail "redis-check-aof: $(tail -n 3 <<<"$out")"
    aoffiles=("$aofdir"/*)
    t_ok "AOF (${aoffiles[*]##*/}) passes redis-check-aof"
fi

r_alive srv || r_fail "redis died"
r_stop srv term || r_fail "redis did not exit cleanly on SIGTERM"
t_ok "redis exited 0 on SIGTERM"
t_pass
