#!/usr/bin/env bash
# test_redis_initfail.sh BUILD_DIR
# What a bound redis-server does when its stack cannot start because of the
# configuration itself:
#  - an error in lstack.conf (an unknown key) with init_fail = "exit" on a
#    line that parsed: redis stops at once, non-zero, and its output names
#    file:line of the error and the policy that stopped it;
#  - LSTACK_INIT_FAIL=exit and a config file that does not exist: stops the
#    same way, saying the file cannot be read;
#  - the same broken file without init_fail (default "kernel"): redis carries
#    on on the kernel (answers 127.0.0.1 in the server namespace, not the
#    stack's address) and says loudly that acceleration is off.
# Needs the preload, so lstack only (skipped for LSTACK_TEST_TARGET=kernel).
set -u
# shellcheck disable=SC2034 # T_NAME is read by common.sh
T_NAME=rinitf
# shellcheck source=redis_lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/redis_lib.sh"
r_is_lstack || tb_skip "needs the preload (LSTACK_TEST_TARGET=$R_TARGET)"
r_init "${1:-}"

# exit_status NAME : wait (30 s) until redis NAME has exited; its status in
# R_RC (124 if it was still running: then it is killed).
R_RC=0
exit_status() {
    local name="$1" pid
    pid=$(r_pid "$name")
    R_RC=0
    if ! tb_wait_gone "$pid" 30; then
        kill -KILL "$pid" 2>/dev/null
        wait "$pid" 2>/dev/null
        R_RC=124
    else
        wait "$pid" 2>/dev/null || R_RC=$?
    fi
    R_PID[$name]=""
}

# says NAME TEXT : redis NAME's stdout/stderr has TEXT (fixed string).
says() {
    grep -qF -- "$2" "${R_OUT[$1]}" || {
        echo "   output of '$1' lacks: $2"
        sed 's/^/   | /' "${R_OUT[$1]}" | tail -n 8
        return 1
    }
}

# stops NAME REASON POLICY WHAT : start redis NAME under lstack ($R_CONF); it
# must exit non-zero, its output giving REASON and "stopping the process
# (POLICY)".
stops() {
    local name="$1" reason="$2" policy="$3" what="$4"
    r_start "$name" lstack
    exit_status "$name"
    ((R_RC != 0 && R_RC != 124)) || r_fail "$what: redis exit status $R_RC, want non-zero (124: still running)"
    says "$name" "$reason" || r_fail "$what: the reason is not given"
    says "$name" "stopping the process ($policy)" || r_fail "$what: no word of $policy stopping it"
    t_ok "$what: redis stopped (status $R_RC): $reason"
}

# --- 1: an error in the file, init_fail = "exit" in it ---------------------
broken="$T_WORK/broken.conf"
r_conf "$broken" 'tcp_con_count = 100;'
line=$(grep -n '^tcp_con_count' "$broken" | cut -d: -f1)
R_CONF="$broken"
stops bad "$broken:$line: unknown key 'tcp_con_count'" "init_fail = \"exit\" in $broken" \
    "unknown key on line $line, init_fail = \"exit\""

# --- 2: LSTACK_INIT_FAIL=exit, no file -----------------------------------
R_CONF="$T_WORK/no-such.conf"
export LSTACK_INIT_FAIL=exit
stops nofile "$R_CONF: cannot read: No such file or directory" "LSTACK_INIT_FAIL=exit" \
    "LSTACK_INIT_FAIL=exit, conf missing"
unset LSTACK_INIT_FAIL

# --- 3: the default carries on on the kernel, loudly ------------------------
R_CONF="$T_WORK/broken-default.conf"
tb_write_conf "$R_CONF" 'tcp_con_count = 100;'
r_start kern lstack
out=""
for ((i = 0; i < 100; i++)); do
    out=$(r_cli_local kern ping 2>&1)
    [[ "$out" == PONG ]] && break
    r_alive kern || break
    sleep 0.2
done
[[ "$out" == PONG ]] || r_fail "default init_fail with a broken conf: redis does not answer on 127.0.0.1 ('$out')"
says kern "unknown key 'tcp_con_count'" || r_fail "the error is not reported"
says kern "acceleration is OFF: this process runs on the kernel TCP/IP stack" || r_fail "no warning that acceleration is off"
stack_out=$(ip netns exec "$TB_NS_CLI" timeout 3 redis-cli -h "$TB_IP_STACK" -p "$(r_port kern)" ping 2>&1)
[[ "$stack_out" != PONG ]] || r_fail "the stack's address answers although the stack did not start"
r_stop kern term || r_fail "redis on the kernel did not exit cleanly on SIGTERM"
t_ok "default (init_fail kernel), same error: redis serves on the kernel, says acceleration is OFF, exits 0"
r_pass
