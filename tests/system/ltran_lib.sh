#!/usr/bin/env bash
# ltran_lib.sh - the set-up the ltran system tests share (test_ltran_redis,
# test_ltran_lowpower, test_ltran_cluster): the bed, the tools they need,
# ok/fail reporting with the logs, and a cleanup that kills the redis
# processes and ltran the test started and unmounts its hugetlbfs.
#
# Use: set LSTACK_TB to the test's bed, source this file, then
#   lt_init BUILD_DIR
# which sets BUILD LTRAN STACKCTL LIB, brings the bed up and leaves a work
# directory W with hugetlbfs mounted on $W/huge. The test records the pids
# it starts in RPID[name] and LTRAN_PID for the cleanup.
T_HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=testbed.sh
source "$T_HERE/testbed.sh"
# shellcheck source=../preload_env.sh
source "$T_HERE/../preload_env.sh"

N=0
declare -A RPID=()
LTRAN_PID=""
W=""

ok() { N=$((N + 1)); echo "ok $N: $*"; }
fail() {
    echo "FAIL: $*"
    [[ -n "$W" ]] && for f in "$W"/*.log; do
        [[ -f "$f" ]] || continue
        echo "--- $f (last 15 lines)"
        tail -n 15 "$f" | sed 's/^/  | /'
    done
    exit 1
}

cleanup_all() {
    local p
    for p in "${RPID[@]}"; do kill -KILL "$p" 2>/dev/null || true; done
    [[ -n "$LTRAN_PID" ]] && kill -TERM "$LTRAN_PID" 2>/dev/null && sleep 1
    [[ -n "$LTRAN_PID" ]] && kill -KILL "$LTRAN_PID" 2>/dev/null
    if [[ -n "$W" ]]; then
        umount "$W/huge" 2>/dev/null || true
        rm -rf "/var/run/dpdk/${LSTACK_TB}lt"
        [[ "${T_KEEP_LOG:-0}" == 1 ]] && echo "(logs kept in $W)" || rm -rf "$W"
    fi
}

lt_init() {
    BUILD="${1:?usage: $0 BUILD_DIR}"
    BUILD="$(cd "$BUILD" && pwd)"
    LTRAN="$BUILD/ltran/ltran"
    STACKCTL="$BUILD/tools/stackctl"
    LIB="${LSTACK_PRELOAD:-$BUILD/lstack/liblstack.so}"
    tb_require_root
    tb_require_tools ip ethtool redis-server redis-cli redis-benchmark python3 mount
    [[ -x "$LTRAN" ]] || fail "ltran not built: $LTRAN"
    [[ -x "$STACKCTL" ]] || fail "stackctl not built: $STACKCTL"
    tb_on_cleanup cleanup_all
    tb_trap_cleanup
    W="$(mktemp -d "/tmp/lstack-test-${LSTACK_TB}.XXXXXX")"
    tb_up || fail "test bed did not come up"
    mkdir -p "$W/huge"
    mount -t hugetlbfs -o pagesize=2M nodev "$W/huge" || fail "cannot mount hugetlbfs on $W/huge"
}

# Write $W/ltran.conf for this bed (port: the server veth; prefix
# ${LSTACK_TB}lt; socket $SOCK): mbuf pool size $1, ltran's low_power_mode $2.
lt_write_ltran_conf() {
    cat >"$W/ltran.conf" <<CONF
forward_kit = "dpdk"
forward_kit_args = "--no-pci -l $TB_CPU --huge-dir $W/huge --vdev=$(tb_vdev)"
file_prefix = "${LSTACK_TB}lt"
ltran_socket = "$SOCK"
mbuf_pool_size = $1
low_power_mode = $2
CONF
}

# Start ltran in the server namespace on $W/ltran.conf (log $W/ltran.log,
# pid LTRAN_PID) and wait up to 10 s for it to say it is up; fail otherwise.
lt_start_ltran() {
    ip netns exec "$TB_NS_SRV" "$LTRAN" -c "$W/ltran.conf" >"$W/ltran.log" 2>&1 &
    LTRAN_PID=$!
    local i
    for ((i = 0; i < 100; i++)); do
        grep -q '^ltran: up on' "$W/ltran.log" 2>/dev/null && break
        kill -0 "$LTRAN_PID" 2>/dev/null || fail "ltran exited at start"
        sleep 0.1
    done
    grep -q '^ltran: up on' "$W/ltran.log" || fail "ltran did not come up in 10 s"
}
