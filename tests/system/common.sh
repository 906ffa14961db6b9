# shellcheck shell=bash
# Shared by the system tests (sourced, never run).
#
# A test sets T_NAME (short, [a-z]) and sources this file with BUILD_DIR as $1
# of the test. Each test gets its own bed, named "${LSTACK_TB:-lstk}${T_NAME}",
# so a failing test never leaves anything the next one trips over.
# Exit codes: 0 pass, 1 fail, 77 skip (meson's convention).

T_BASE="${LSTACK_TB:-lstk}"
export LSTACK_TB="${T_BASE}${T_NAME:?T_NAME must be set before sourcing common.sh}"
T_HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=testbed.sh
source "$T_HERE/testbed.sh"
# shellcheck source=../preload_env.sh
source "$T_HERE/../preload_env.sh"

T_CHECKS=0
T_WORK=""

t_fail() {
    echo "FAIL: $*"
    if [[ -n "$TB_LSTACKD_LOG" && -f "$TB_LSTACKD_LOG" ]]; then
        echo "--- lstackd log (last 30 lines) ---"
        tail -n 30 "$TB_LSTACKD_LOG" | sed 's/^/  | /'
        echo "---"
    fi
    exit 1
}

t_ok() {
    T_CHECKS=$((T_CHECKS + 1))
    echo "ok $T_CHECKS: $*"
}

t_pass() {
    echo "PASS: $(basename "$0") ($T_CHECKS checks)"
    exit 0
}

# t_init BUILD_DIR TOOL... : skip unless root and tools present; set up the bed
# with a cleanup trap; write the conf; start lstackd.
t_init() {
    local build="${1:-}"
    shift
    tb_require_root
    tb_require_tools ip ethtool sysctl "$@"
    [[ -n "$build" ]] || { echo "usage: $0 BUILD_DIR"; exit 2; }
    T_BUILD="$(cd "$build" 2>/dev/null && pwd)" || t_fail "build dir '$build' not found"
    T_LSTACKD="$T_BUILD/tools/lstackd"
    [[ -x "$T_LSTACKD" ]] || t_fail "lstackd not built: $T_LSTACKD"
    [[ -d /sys/kernel/mm/hugepages/hugepages-2048kB ]] || tb_skip "no 2 MiB hugepage support in this kernel"

    T_WORK="$(mktemp -d "/tmp/lstack-test-${LSTACK_TB}.XXXXXX")"
    tb_on_cleanup 't__cleanup_work'
    tb_trap_cleanup
    echo "== $(basename "$0"): bed '$LSTACK_TB' (srv ns $TB_NS_SRV/$TB_IF_SRV, cli ns $TB_NS_CLI/$TB_IF_CLI)"
    tb_up || t_fail "test bed did not come up"
    tb_write_conf "$T_WORK/lstack.conf"
    tb_start_lstackd "$T_LSTACKD" "$T_WORK/lstack.conf" "$T_WORK/lstackd.log" ||
        t_fail "lstackd did not start (conf: $(tr '\n' ' ' <"$T_WORK/lstack.conf"))"
    t_ok "lstackd ready (pid $TB_LSTACKD_PID, mac $TB_LSTACKD_MAC)"
}

t__cleanup_work() {
    [[ -n "$T_WORK" && -d "$T_WORK" ]] || return 0
    # Keep the log of a failed run where a person can find it.
    if [[ -n "$TB_LSTACKD_PID" ]]; then
        tb_stop_lstackd >/dev/null 2>&1 || true
    fi
    if [[ "${T_KEEP_LOG:-0}" == 1 ]]; then
        echo "(logs kept in $T_WORK)"
    else
        rm -rf "$T_WORK"
    fi
}

# t_stop : stop lstackd and check it stopped cleanly.
t_stop() {
    tb_stop_lstackd || t_fail "lstackd did not stop cleanly"
    t_ok "lstackd stopped on SIGTERM: exit 0 and 'lstackd: stopped'"
}

# t_ping COUNT INTERVAL : ping the stack from the client ns; checks exactly COUNT replies.
t_ping() {
    local count="$1" interval="$2" out
    out=$(ip netns exec "$TB_NS_CLI" ping -n -c "$count" -i "$interval" -W 1 "$TB_IP_STACK" 2>&1)
    local summary
    summary=$(grep -E 'packets transmitted' <<<"$out")
    echo "   ping: $summary"
    if ! grep -qE "^$count packets transmitted, $count received," <<<"$out"; then
        echo "$out" | tail -n 5 | sed 's/^/   | /'
        return 1
    fi
    if grep -qE 'duplicates|errors' <<<"$summary"; then
        echo "   ping reported duplicates or errors"
        return 1
    fi
    return 0
}
