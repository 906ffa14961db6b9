#!/usr/bin/env bash
# test_redis_affinity.sh BUILD_DIR
# the application-thread affinity keys end to end, each thread's
# affinity read back with sched_getaffinity (`taskset -pc TID`) from a
# running redis-server (io-threads 2) under lstack in run-to-wakeup:
#  - app_bind_numa = 1, app_exclude_cpus = the stack CPU: redis's main
#    thread, which sleeps in epoll_wait, is bound to the stack CPU's NUMA
#    node (from sysfs) less that CPU; the stack thread stays on its CPU;
#    redis's io thread (it never waits on the stack) keeps the affinity the
#    process started with;
#  - main_thread_affinity = 1 beside app_bind_numa = 1: the main thread is
#    pinned to the stack CPU alone and stays there after it has slept;
#  - app_exclude_cpus covering the whole node: the start fails
#    (init_fail = "exit") and says which key.
# Needs a node with two CPUs or more (else skipped), and the preload.
set -u
# shellcheck disable=SC2034 # T_NAME is read by common.sh
T_NAME=raff
# shellcheck source=redis_lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/redis_lib.sh"
r_is_lstack || tb_skip "needs the preload (LSTACK_TEST_TARGET=$R_TARGET)"
r_init "${1:-}"

# cpus_expand LIST : "0-2,5" -> "0,1,2,5" (sorted, unique).
cpus_expand() {
    local part a b out=()
    IFS=, read -r -a parts <<<"$1"
    for part in "${parts[@]}"; do
        [[ -n "$part" ]] || continue
        if [[ "$part" == *-* ]]; then
            a=${part%-*} b=${part#*-}
            for ((; a <= b; a++)); do out+=("$a"); done
        else
            out+=("$part")
        fi
    done
    printf '%s\n' "${out[@]}" | sort -n -u | paste -sd, -
}

# affinity TID : the thread's CPU list as sched_getaffinity returns it.
affinity() { cpus_expand "$(taskset -pc "$1" 2>/dev/null | sed 's/^.*: //')"; }

# tid_named PID NAME : the thread of PID whose comm is NAME.
tid_named() {
    local t
    for t in /proc/"$1"/task/*; do
        [[ "$(cat "$t/comm" 2>/dev/null)" == "$2" ]] && { echo "${t##*/}"; return 0; }
    done
    return 1
}

cpu=$TB_CPU
node_dir=""
for d in /sys/devices/system/cpu/cpu"$cpu"/node*; do
    [[ -e "$d" ]] && { node_dir=$d; break; }
done
[[ -n "$node_dir" ]] || tb_skip "no NUMA node information for CPU $cpu"
node_cpus=$(cpus_expand "$(cat /sys/devices/system/node/"${node_dir##*/}"/cpulist)")
want_app=$(tr , '\n' <<<"$node_cpus" | grep -vx "$cpu" | paste -sd, -)
[[ -n "$want_app" ]] || tb_skip "CPU $cpu's node has no other CPU ($node_cpus)"
start_aff=$(affinity $$)
echo "   stack CPU $cpu, its node ${node_dir##*/}: CPUs $node_cpus; this shell: $start_aff"

# 1. app_bind_numa with the stack CPU excluded.
r_conf "$R_CONF" 'stack_thread_mode = "run-to-wakeup";' 'app_bind_numa = 1;' "app_exclude_cpus = \"$cpu\";"
r_start srv lstack --io-threads 2 --io-threads-do-reads yes
r_wait_ready srv || r_fail "redis did not come up (app_bind_numa = 1)"
pid=$(r_pid srv)
r_cli srv set k v >/dev/null
sleep 0.5 # the main thread sleeps in epoll_wait between requests
got=$(affinity "$pid")
[[ "$got" == "$want_app" ]] || r_fail "main thread (it waits in epoll_wait): affinity $got, want $want_app (node less CPU $cpu)"
t_ok "app_bind_numa = 1, app_exclude_cpus = \"$cpu\": the main thread is on $got"
st=$(tid_named "$pid" lstack-stack0) || r_fail "no thread lstack-stack0"
got=$(affinity "$st")
[[ "$got" == "$cpu" ]] || r_fail "the stack thread is on $got, want $cpu"
t_ok "the stack thread stays on CPU $cpu"
io=$(tid_named "$pid" io_thd_1) || r_fail "no redis io thread io_thd_1: $(cat /proc/"$pid"/task/*/comm | tr '\n' ' ')"
got=$(affinity "$io")
[[ "$got" == "$start_aff" ]] || r_fail "redis's io thread (it never waits on the stack) is on $got, want $start_aff as started"
t_ok "redis's io thread keeps its affinity ($got)"
grep -q "app_bind_numa: threads waiting on stack 0 are bound to CPUs" "${R_OUT[srv]}" ||
    r_fail "the log does not say where waiting threads go"
r_stop srv term || r_fail "redis did not exit cleanly on SIGTERM"

# 2. main_thread_affinity pins the main thread to the stack CPU; its first
#    sleep leaves it there.
r_conf "$R_CONF" 'stack_thread_mode = "run-to-wakeup";' 'app_bind_numa = 1;' 'main_thread_affinity = 1;'
r_start srv2 lstack
r_wait_ready srv2 || r_fail "redis did not come up (main_thread_affinity = 1)"
pid=$(r_pid srv2)
r_cli srv2 set k v >/dev/null
sleep 0.5
got=$(affinity "$pid")
[[ "$got" == "$cpu" ]] || r_fail "main_thread_affinity = 1: the main thread is on $got, want $cpu"
t_ok "main_thread_affinity = 1: the main thread stays on the stack CPU $cpu after sleeping"
r_stop srv2 term || r_fail "redis did not exit cleanly on SIGTERM"

# 3. Nothing left to bind to: the start fails, naming the key.
r_conf "$R_CONF" 'stack_thread_mode = "run-to-wakeup";' 'app_bind_numa = 1;' "app_exclude_cpus = \"$node_cpus\";"
r_start srv3 lstack
pid=$(r_pid srv3)
tb_wait_gone "$pid" 30 || r_fail "redis still runs with every CPU of the node excluded"
rc=0
wait "$pid" 2>/dev/null || rc=$?
name=srv3
R_PID[$name]="" # gone: nothing for the cleanup to stop
((rc != 0)) || r_fail "redis exited with 0, want non-zero (init_fail = exit)"
grep -q 'app_exclude_cpus ".*" leaves no CPU' "${R_OUT[srv3]}" ||
    r_fail "the failure does not name app_exclude_cpus: $(tail -n 3 "${R_OUT[srv3]}" | tr '\n' ' ')"
t_ok "every CPU of the node excluded: the start fails (status $rc) and names app_exclude_cpus"
r_pass
