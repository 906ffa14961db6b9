#!/usr/bin/env bash
# test_redis_rtw.sh BUILD_DIR
# Redis 7 with `io-threads 2 io-threads-do-reads yes` under lstack
# with stack_thread_mode = "run-to-wakeup":
#  - the log says the stack runs in run-to-wakeup, and a thread named
#    lstack-stack0 exists (the stack thread);
#  - idle, redis's own threads use (almost) no CPU: they sleep in
#    epoll_wait until the stack thread wakes them (in run-to-completion the
#    main thread spins in epoll_wait: RTW_TEST_MODE=run-to-completion shows
#    this check failing);
#  - a kernel fd in the same epoll set works: redis-cli over 127.0.0.1
#    (the kernel half of the 0.0.0.0 listener) while the stack serves;
#  - redis-benchmark (50 clients, SET/GET/INCR/LPUSH, with --threads 2)
#    from the client namespace completes without errors, and the values
#    read back are the ones written;
#  - SIGTERM: exit status 0.
set -u
# shellcheck disable=SC2034 # T_NAME is read by common.sh
T_NAME=rrtw
# shellcheck source=redis_lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/redis_lib.sh"
r_init "${1:-}"
r_is_lstack || { echo "SKIP: run-to-wakeup is an lstack mode"; exit 77; }

MODE="${RTW_TEST_MODE:-run-to-wakeup}"
r_conf "$R_CONF" 'tcp_conn_count = 1024;' "stack_thread_mode = \"$MODE\";"
r_start srv lstack --io-threads 2 --io-threads-do-reads yes
r_wait_ready srv || r_fail "redis did not come up"
pid=$(r_pid srv)
up=$(grep -m1 'stack up on' "${R_OUT[srv]}")
[[ "$up" == *"($MODE)"* ]] || r_fail "the stack does not say it runs in $MODE: $up"
t_ok "redis-server (io-threads 2, io-threads-do-reads yes) up: $up"

# Threads and their CPU ticks (utime + stime) from /proc.
thread_ticks() {
    local t
    for t in /proc/"$pid"/task/*; do
        [[ -r "$t/stat" ]] || continue
        printf '%s %s %s\n' "${t##*/}" "$(tr ' ' '_' <"$t/comm")" \
            "$(sed 's/^.*) //' "$t/stat" | awk '{print $12 + $13}')"
    done
}
if [[ "$MODE" == run-to-wakeup ]]; then
    thread_ticks | grep -q ' lstack-stack0 ' || r_fail "no thread named lstack-stack0: $(thread_ticks | tr '\n' ';')"
    t_ok "the stack thread lstack-stack0 runs"
fi

# Idle: 3 s; redis's threads (all but the stack thread and EAL's) may use
# at most 10 % of one CPU.
before=$(thread_ticks)
sleep 3
after=$(thread_ticks)
app=0
while read -r tid name t1; do
    case "$name" in lstack-stack* | eal-* | rte_* | telemetry* | dpdk-*) continue ;; esac
    t0=$(awk -v t="$tid" '$1 == t {print $3}' <<<"$before")
    [[ -n "$t0" ]] || t0=0
    d=$((t1 - t0))
    echo "   idle 3 s: thread $tid ($name) used $d ticks"
    app=$((app + d))
done <<<"$after"
hz=$(getconf CLK_TCK)
limit=$((hz * 3 / 10))
if ((app <= limit)); then
    t_ok "idle for 3 s: redis's threads used $app ticks of CPU (limit $limit): they sleep until woken"
else
    r_soft_fail "idle for 3 s, redis's threads used $app ticks (limit $limit at $hz/s): they do not sleep"
fi

out=$(r_cli_local srv set kfd viakernel 2>&1)
[[ "$out" == OK ]] || r_fail "redis-cli over 127.0.0.1 (a kernel fd in the same epoll set) answered '$out'"
out=$(r_cli srv get kfd 2>&1)
[[ "$out" == viakernel ]] || r_fail "GET over the stack answered '$out', expected viakernel"
t_ok "a kernel fd in the same epoll set (127.0.0.1) works beside the stack"

R_BENCH_TIMEOUT=300 r_bench srv -c 50 -n 10000 --threads 2 -t set,get,incr,lpush ||
    r_fail "redis-benchmark --threads 2 against io-threads redis"
t_ok "redis-benchmark -c 50 --threads 2 SET/GET/INCR/LPUSH: no errors"

r_pipe_roundtrip srv rtw 50 200 || r_fail "50 SETs through a pipe, read back"
t_ok "50 values written through a pipe read back unchanged"

r_idle_start srv || r_fail "idle client"
r_stop srv term || r_fail "redis did not exit cleanly on SIGTERM"
t_ok "SIGTERM: exit status 0"
r_idle_check || r_fail "the idle client did not see the connection end"
r_pass
