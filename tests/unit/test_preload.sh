#!/usr/bin/env bash
# test_preload.sh BUILD_DIR SOURCE_DIR - the preload's contract with the
# processes it is loaded into, without a NIC:
#  - it exports exactly the calls listed in lstack/common/calls.def;
#  - a process that is not bound runs untouched (no DPDK loaded, no output);
#  - a bound process whose stack cannot start says so loudly and carries on
#    on the kernel (init_fail = "kernel"), or stops with the reason
#    (init_fail = "exit"), also when the reason is the config file itself;
#  - LSTACK_INIT_FAIL (kernel|exit) wins over the file, also over a file
#    that cannot be read; a bad value of it is an error said loudly.
set -u
build=$1
src=$2
lib="$build/lstack/liblstack.so"
probe="$build/tests/unit/preload_probe"
# shellcheck source=../preload_env.sh
source "$src/tests/preload_env.sh"
pre=$(preload_list "$lib") # what LD_PRELOAD needs: lib, after the ASan runtime in a sanitizer build
n=0
fails=0
check() { # check NAME COMMAND...
    local name=$1
    shift
    n=$((n + 1))
    if "$@"; then echo "ok $n - $name"; else echo "not ok $n - $name"; fails=$((fails + 1)); fi
}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

exports_match() {
    # functions only: the linker's own __bss_start, _edata, _end are data markers
    nm -D --defined-only "$lib" | awk '$2 == "T" || $2 == "W" {print $3}' | sort >"$tmp/exported"
    sed -n 's/^LSTACK_CALL\(_VA\)\{0,1\}([^,]*, *\([A-Za-z0-9_]*\),.*/\2/p' "$src/lstack/common/calls.def" |
        sort >"$tmp/listed"
    diff "$tmp/listed" "$tmp/exported" >"$tmp/diff" && [ -s "$tmp/listed" ]
}
check "liblstack.so exports exactly the calls of calls.def" exports_match
[ -s "$tmp/diff" ] && sed 's/^/# /' "$tmp/diff"

unbound_untouched() {
    local out
    out=$(LD_PRELOAD="$pre" GAZELLE_BIND_PROCNAME=redis-server sh -c 'echo hi | cat; grep -c librte /proc/self/maps' 2>"$tmp/err")
    [ "$out" = "$(printf 'hi\n0')" ] && [ ! -s "$tmp/err" ]
}
check "an unbound shell runs untouched: same output, no DPDK mapped, nothing on stderr" unbound_untouched

no_env_untouched() {
    LD_PRELOAD="$pre" "$probe" >/dev/null 2>"$tmp/err" && [ ! -s "$tmp/err" ]
}
check "without GAZELLE_BIND_PROCNAME the probe works and lstack says nothing" no_env_untouched

bad_conf_falls_back() {
    LD_PRELOAD="$pre" GAZELLE_BIND_PROCNAME=preload_probe LSTACK_CONF_PATH="$tmp/missing.conf" \
        "$probe" >"$tmp/out" 2>"$tmp/err" || return 1
    grep -q "missing.conf" "$tmp/err" && grep -q "acceleration is OFF" "$tmp/err" && grep -q "loopback ok" "$tmp/out"
}
check "bound, unreadable config: says why and that acceleration is off, works on the kernel" bad_conf_falls_back
sed 's/^/# stderr: /' "$tmp/err"

start_fail_exits() {
    cat >"$tmp/exit.conf" <<CONF
dpdk_args = ["--no-huge", "-m", "64", "--no-pci", "--in-memory", "--file-prefix", "lstk-unit", "--vdev=net_nosuchpmd0"];
host_addr = "198.18.0.2";
mask_addr = "255.255.255.0";
gateway_addr = "198.18.0.1";
init_fail = "exit";
CONF
    local rc=0
    LD_PRELOAD="$pre" GAZELLE_BIND_PROCNAME=preload_probe LSTACK_CONF_PATH="$tmp/exit.conf" \
        "$probe" >"$tmp/out" 2>"$tmp/err" || rc=$?
    [ "$rc" -eq 1 ] && grep -q "stopping the process" "$tmp/err" && ! grep -q "loopback ok" "$tmp/out"
}
check "bound, stack cannot start, init_fail = exit: stops with the reason (status 1)" start_fail_exits
sed 's/^/# stderr: /' "$tmp/err" | tail -5

# A config with an error on line 6 and init_fail = "exit" on a line that parsed.
cat >"$tmp/broken.conf" <<CONF
init_fail = "exit";
dpdk_args = ["--no-huge", "--no-pci", "--in-memory"];
host_addr = "198.18.0.2";
mask_addr = "255.255.255.0";
gateway_addr = "198.18.0.1";
tcp_con_count = 100;
CONF
sed '1d' "$tmp/broken.conf" >"$tmp/broken-default.conf" # same error, now line 5, no init_fail

# run_probe ENV... : the probe bound, under the preload; its status in $rc.
run_probe() {
    rc=0
    env LD_PRELOAD="$pre" GAZELLE_BIND_PROCNAME=preload_probe "$@" "$probe" >"$tmp/out" 2>"$tmp/err" || rc=$?
}

broken_conf_exits() {
    run_probe LSTACK_CONF_PATH="$tmp/broken.conf"
    [ "$rc" -eq 1 ] && grep -qF "$tmp/broken.conf:6: unknown key 'tcp_con_count'" "$tmp/err" &&
        grep -qF "stopping the process (init_fail = \"exit\" in $tmp/broken.conf)" "$tmp/err" &&
        ! grep -q "loopback ok" "$tmp/out"
}
check "bound, error in the config, init_fail = exit in it: stops (status 1), naming file:line" broken_conf_exits
sed 's/^/# stderr: /' "$tmp/err" | tail -4

broken_conf_default_kernel() {
    run_probe LSTACK_CONF_PATH="$tmp/broken-default.conf"
    [ "$rc" -eq 0 ] && grep -qF "$tmp/broken-default.conf:5: unknown key" "$tmp/err" &&
        grep -q "acceleration is OFF" "$tmp/err" && grep -q "loopback ok" "$tmp/out"
}
check "bound, error in a config without init_fail: says so, carries on on the kernel" broken_conf_default_kernel

env_exit_unreadable() {
    run_probe LSTACK_CONF_PATH="$tmp/missing.conf" LSTACK_INIT_FAIL=exit
    [ "$rc" -eq 1 ] && grep -qF "$tmp/missing.conf: cannot read" "$tmp/err" &&
        grep -qF "stopping the process (LSTACK_INIT_FAIL=exit)" "$tmp/err" && ! grep -q "loopback ok" "$tmp/out"
}
check "bound, unreadable config, LSTACK_INIT_FAIL=exit: stops (status 1) with the reason" env_exit_unreadable
sed 's/^/# stderr: /' "$tmp/err" | tail -3

env_kernel_wins() {
    run_probe LSTACK_CONF_PATH="$tmp/broken.conf" LSTACK_INIT_FAIL=kernel
    [ "$rc" -eq 0 ] && grep -q "acceleration is OFF" "$tmp/err" && grep -q "loopback ok" "$tmp/out"
}
check "bound, broken config saying exit, LSTACK_INIT_FAIL=kernel: carries on on the kernel" env_kernel_wins

env_bad_value() {
    run_probe LSTACK_CONF_PATH="$tmp/missing.conf" LSTACK_INIT_FAIL=stop
    [ "$rc" -eq 0 ] && grep -qF "LSTACK_INIT_FAIL: value 'stop': is not a known value; allowed: \"kernel\" or \"exit\"" \
        "$tmp/err" && grep -q "acceleration is OFF" "$tmp/err" && grep -q "loopback ok" "$tmp/out"
}
check "bound, LSTACK_INIT_FAIL=stop: an error naming it, then the file's policy (here kernel)" env_bad_value
sed 's/^/# stderr: /' "$tmp/err" | tail -3

echo "1..$n"
[ "$fails" -eq 0 ]
