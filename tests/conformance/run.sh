#!/usr/bin/env bash
# run.sh BUILD_DIR [conform.py options...]
# The conformance suite on one namespace bed (docs/conformance.md): the
# server namespace gets the kernel address 198.18.0.3 next to the stack's
# 198.18.0.2; conform_agent runs there twice, on the kernel and under the
# preload (run-to-completion, the default mode); conform.py runs in the
# client namespace and plays the remote peer of every scenario against
# both. Options after BUILD_DIR go to conform.py (--only NAME, --slow,
# --verbose, --targets linux, --fuzz SECONDS --seed N).
# Exit: 0 all passed or diverged as listed, 1 otherwise, 77 skipped.
set -u
# shellcheck disable=SC2034 # T_NAME is read by common.sh
T_NAME=conf
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=../system/common.sh
source "$HERE/../system/common.sh"

build="${1:-}"
[[ -n "$build" ]] || { echo "usage: $0 BUILD_DIR [conform.py options]"; exit 2; }
shift
tb_require_root
tb_require_tools ip ethtool sysctl python3
T_BUILD="$(cd "$build" 2>/dev/null && pwd)" || t_fail "build dir '$build' not found"
[[ -d /sys/kernel/mm/hugepages/hugepages-2048kB ]] || tb_skip "no 2 MiB hugepage support in this kernel"
AGENT="$T_BUILD/tests/conformance/conform_agent"
LIB="${LSTACK_PRELOAD:-$T_BUILD/lstack/liblstack.so}"
[[ -x "$AGENT" ]] || t_fail "conform_agent not built: $AGENT"
[[ -f "$LIB" ]] || t_fail "preload library not built: $LIB"
PRELOAD=$(preload_list "$LIB")

T_WORK="$(mktemp -d "/tmp/lstack-test-${LSTACK_TB}.XXXXXX")"
tb_on_cleanup 't__cleanup_work'
tb_trap_cleanup
tb_up || t_fail "test bed did not come up"
tb_add_kernel_addr || t_fail "cannot add the kernel address"
# The kernel's segments leave the server veth with complete checksums (the
# peer checks every checksum it sees).
ip netns exec "$TB_NS_SRV" ethtool -K "$TB_IF_SRV" tx off >/dev/null || t_fail "ethtool -K $TB_IF_SRV tx off"
# init_fail = "exit": an agent that fell back to the kernel must not pass
# for lstack. Room for the scenarios' connections that linger (TIME_WAIT).
tb_write_conf "$T_WORK/lstack.conf" 'init_fail = "exit";' 'tcp_conn_count = 512;' 'mbuf_count_per_conn = 16;'
mac=$(tb_mac "$TB_NS_SRV" "$TB_IF_SRV")
[[ -n "$mac" ]] || t_fail "no MAC on $TB_IF_SRV"

rc=0
ip netns exec "$TB_NS_CLI" python3 "$HERE/conform.py" --iface "$TB_IF_CLI" --target-mac "$mac" \
    --linux "ip netns exec $TB_NS_SRV $AGENT" --linux-ip "$TB_IP_KERNEL" \
    --linux-after "ip netns exec $TB_NS_SRV ip route flush cache" \
    --lstack "ip netns exec $TB_NS_SRV env LD_PRELOAD=$PRELOAD GAZELLE_BIND_PROCNAME=conform_agent LSTACK_CONF_PATH=$T_WORK/lstack.conf $AGENT" \
    --lstack-ip "$TB_IP_STACK" --logdir "$T_WORK" "$@" || rc=$?
if ((rc != 0)); then
    T_KEEP_LOG=1 # the agents' logs and a fuzz case stay for a person to look at
    for f in "$T_WORK"/agent-*.log; do
        [[ -s "$f" ]] || continue
        echo "--- $(basename "$f") (last 20 lines) ---"
        tail -n 20 "$f" | sed 's/^/  | /'
    done
fi
exit "$rc"
