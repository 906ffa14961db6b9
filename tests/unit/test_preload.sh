#!/usr/bin/env bash
# test_preload.sh BUILD_DIR SOURCE_DIR - the preload's contract with the
# processes it is loaded into, without a NIC:
#  - it exports exactly the calls listed in lstack/posix/calls.def;
#  - a process that is not bound runs untouched (no DPDK loaded, no output);
#  - a bound process whose stack cannot start says so loudly and carries on
#    on the kernel (init_fail = "kernel"), or stops with the reason
#    (init_fail = "exit").
set -u
build=$1
src=$2
lib="$build/lstack/liblstack.so"
probe="$build/tests/unit/preload_probe"
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
    sed -n 's/^LSTACK_CALL\(_VA\)\{0,1\}([^,]*, *\([A-Za-z0-9_]*\),.*/\2/p' "$src/lstack/posix/calls.def" |
        sort >"$tmp/listed"
    diff "$tmp/listed" "$tmp/exported" >"$tmp/diff" && [ -s "$tmp/listed" ]
}
check "liblstack.so exports exactly the calls of calls.def" exports_match
[ -s "$tmp/diff" ] && sed 's/^/# /' "$tmp/diff"

unbound_untouched() {
    local out
    out=$(LD_PRELOAD="$lib" GAZELLE_BIND_PROCNAME=redis-server sh -c 'echo hi | cat; grep -c librte /proc/self/maps' 2>"$tmp/err")
    [ "$out" = "$(printf 'hi\n0')" ] && [ ! -s "$tmp/err" ]
}
check "an unbound shell runs untouched: same output, no DPDK mapped, nothing on stderr" unbound_untouched

no_env_untouched() {
    LD_PRELOAD="$lib" "$probe" >/dev/null 2>"$tmp/err" && [ ! -s "$tmp/err" ]
}
check "without GAZELLE_BIND_PROCNAME the probe works and lstack says nothing" no_env_untouched

bad_conf_falls_back() {
    LD_PRELOAD="$lib" GAZELLE_BIND_PROCNAME=preload_probe LSTACK_CONF_PATH="$tmp/missing.conf" \
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
    LD_PRELOAD="$lib" GAZELLE_BIND_PROCNAME=preload_probe LSTACK_CONF_PATH="$tmp/exit.conf" \
        "$probe" >"$tmp/out" 2>"$tmp/err" || rc=$?
    [ "$rc" -eq 1 ] && grep -q "stopping the process" "$tmp/err" && ! grep -q "loopback ok" "$tmp/out"
}
check "bound, stack cannot start, init_fail = exit: stops with the reason (status 1)" start_fail_exits
sed 's/^/# stderr: /' "$tmp/err" | tail -5

echo "1..$n"
[ "$fails" -eq 0 ]
