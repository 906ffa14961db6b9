#!/usr/bin/env bash
# test_redis_nonbound.sh BUILD_DIR
# Processes that are not the bound one stay on the kernel, untouched:
#   LD_PRELOAD=liblstack.so GAZELLE_BIND_PROCNAME=redis-server /bin/sh -c 'echo hi | cat'
# prints exactly "hi", nothing on stderr, and creates no DPDK file, with a
# valid lstack.conf (whose EAL would create files: --huge-unlink), with no
# conf at all, and with a broken conf. Also: redis-cli and redis-benchmark
# under the same preload (their names differ) work against a kernel redis.
# Needs the preload, so lstack only (skipped for LSTACK_TEST_TARGET=kernel).
set -u
# shellcheck disable=SC2034 # T_NAME is read by common.sh
T_NAME=rnobind
# shellcheck source=redis_lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/redis_lib.sh"
r_is_lstack || tb_skip "needs the preload (LSTACK_TEST_TARGET=$R_TARGET)"
r_init "${1:-}"

fileconf="$T_WORK/lstack-files.conf"
r_conf_files "$fileconf"
badconf="$T_WORK/bad.conf"
printf 'dpdk_args = [ "--no-pci" ];\nno_such_key = 1;\n' >"$badconf"

check_sh() {
    local what="$1" conf="$2" out err
    r_dpdk_snapshot
    out="$T_WORK/sh.out"
    err="$T_WORK/sh.err"
    local -a envs=(LD_PRELOAD="$R_PRELOAD" GAZELLE_BIND_PROCNAME=redis-server)
    if [[ -n "$conf" ]]; then
        envs+=(LSTACK_CONF_PATH="$conf")
    else
        # no conf: the default path, which must not exist for this check
        [[ ! -e /etc/gazelle/lstack.conf ]] || { echo "   (skipping the no-conf case: /etc/gazelle/lstack.conf exists)"; return 0; }
    fi
    ip netns exec "$TB_NS_SRV" timeout 30 env -u LSTACK_CONF_PATH "${envs[@]}" /bin/sh -c 'echo hi | cat' >"$out" 2>"$err" ||
        r_fail "$what: /bin/sh -c 'echo hi | cat' failed (exit $?): $(head -c 500 "$err")"
    [[ "$(cat "$out")" == hi ]] || r_fail "$what: stdout is '$(head -c 200 "$out")', expected 'hi'"
    [[ ! -s "$err" ]] || r_fail "$what: unexpected stderr: $(head -c 500 "$err")"
    local files
    files=$(r_dpdk_files)
    [[ -z "$files" ]] || r_fail "$what: DPDK files created: $(tr '\n' ' ' <<<"$files")"
    t_ok "$what: sh -c 'echo hi | cat' prints hi, no stderr, no DPDK file"
}

check_sh "valid conf" "$fileconf"
check_sh "broken conf" "$badconf"
check_sh "no conf" ""

# Non-bound clients under the preload, talking to a kernel redis.
r_start kr kernel
r_wait_ready kr || r_fail "kernel redis did not come up"
r_dpdk_snapshot
envs=(LD_PRELOAD="$R_PRELOAD" GAZELLE_BIND_PROCNAME=redis-server LSTACK_CONF_PATH="$fileconf")
out=$(ip netns exec "$TB_NS_SRV" timeout 30 env "${envs[@]}" redis-cli -h "$TB_IP_KERNEL" -p "$(r_port kr)" ping 2>&1)
[[ "$out" == PONG ]] || r_fail "redis-cli under the preload answered '$out', expected PONG only"
log="$T_WORK/nb-bench.log"
rc=0
ip netns exec "$TB_NS_SRV" timeout 60 env "${envs[@]}" redis-benchmark -h "$TB_IP_KERNEL" -p "$(r_port kr)" -q \
    -c 20 -n 2000 -t set,get >"$log" 2>&1 || rc=$?
r__bench_check "$log" "$rc" "redis-benchmark under the preload (not bound)" || r_fail "non-bound redis-benchmark"
files=$(r_dpdk_files)
[[ -z "$files" ]] || r_fail "non-bound redis-cli/redis-benchmark created DPDK files: $(tr '\n' ' ' <<<"$files")"
t_ok "redis-cli and redis-benchmark under the preload (not bound) work on the kernel, no DPDK file"
r_stop kr term || r_fail "kernel redis did not exit cleanly"
t_pass
