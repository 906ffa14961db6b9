#!/usr/bin/env bash
# test_redis_rtw_shared.sh BUILD_DIR
# Redis 7 with `io-threads 2 io-threads-do-reads yes` under lstack
# in run-to-wakeup, redis's threads and the stack thread all on one CPU
# (num_cpus = that CPU, redis pinned there with taskset), 50 clients:
#  - redis-benchmark GET's p50 stays under 8 ms. Redis's I/O thread and main
#    thread wait for each other in busy loops; a stack thread that gave the
#    CPU away with sched_yield alone left each spinner the CPU until the
#    scheduler's tick (4 ms at HZ=250), and every event-loop round took
#    several ticks: p50 20-28 ms. With the idle thread's timed steps
#    (runtime/rtw_idle.h) it is 1.2-1.4 ms on a quiet machine; 8 ms leaves
#    room for a loaded CI machine, and the run is tried up to 3 times
#    (passes on the first under 8 ms), while the fault it catches makes
#    every run 20 ms or more.
# Needs 2 CPUs (the client runs on another one).
set -u
# shellcheck disable=SC2034 # T_NAME is read by common.sh
T_NAME=rrtws
# shellcheck source=redis_lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/redis_lib.sh"
r_init "${1:-}"
r_is_lstack || { echo "SKIP: run-to-wakeup is an lstack mode"; exit 77; }
ncpu=$(nproc)
((ncpu >= 2)) || { echo "SKIP: needs 2 CPUs (the server's and the client's)"; exit 77; }
CPU=$((ncpu - 1))
LIMIT_MS=8

r_conf "$R_CONF" 'tcp_conn_count = 1024;' 'stack_thread_mode = "run-to-wakeup";' "num_cpus = \"$CPU\";"

# p50 of a GET run against a fresh io-threads redis pinned to $CPU, in ms
# (into P50).
P50=""
run_once() {
    local name="$1" pid line
    r_start "$name" lstack --io-threads 2 --io-threads-do-reads yes
    r_wait_ready "$name" || r_fail "redis ($name) did not come up"
    pid=$(r_pid "$name")
    taskset -a -p -c "$CPU" "$pid" >/dev/null || r_fail "taskset of redis ($name) to CPU $CPU"
    R_BENCH_TIMEOUT=120 r_bench "$name" -c 50 -n 6000 -t get ||
        r_fail "redis-benchmark -c 50 against io-threads redis ($name)"
    line=$(tr '\r' '\n' <"$R_BENCH_OUT" | grep -a 'GET:' | tail -n 1)
    P50=$(sed -n 's/.*p50=\([0-9.]*\) msec.*/\1/p' <<<"$line")
    [[ -n "$P50" ]] || r_fail "no p50 in redis-benchmark's line: '$line'"
    r_stop "$name" term || r_fail "redis ($name) did not exit cleanly on SIGTERM"
}

seen=""
for attempt in 1 2 3; do
    run_once "srv$attempt"
    seen="$seen${seen:+, }$P50"
    if awk -v p="$P50" -v l="$LIMIT_MS" 'BEGIN{exit !(p < l)}'; then
        t_ok "io-threads redis on one CPU with the stack thread: GET p50 $P50 ms (< $LIMIT_MS ms; attempts: $seen ms)"
        r_pass
    fi
    echo "   attempt $attempt: GET p50 $P50 ms, over $LIMIT_MS ms"
done
r_fail "io-threads redis on one CPU with the stack thread: GET p50 $seen ms in 3 attempts, want < $LIMIT_MS ms (the spinners keep the CPU until the tick)"
