#!/usr/bin/env bash
# test_client_sem.sh BUILD_DIR
# Client-side semantic tests (tests/system/sem/csem.c): csem connects out
# through the stack (under the preload, in the server namespace) to kernel
# servers in the client namespace, mode by mode; LSTACK_TEST_TARGET=kernel
# runs the same checks on the kernel.
#
# Prints one "ok N - mode" / "not ok N - mode" line per mode; exits 1 if any
# failed.
set -u

# Client-side semantic tests (tests/system/sem/csem.c): csem runs under the
# preload (GAZELLE_BIND_PROCNAME=csem) in the server namespace, where the
# stack owns 198.18.0.2, and connects out to kernel servers in the client
# namespace: csem_peer (an echo server, backlog 4096) on 198.18.0.1, a
# closed port there, an address of the subnet nobody answers ARP for, and
# an address beyond the gateway whose SYNs the client namespace drops (no
# forwarding: it counts each in Ip InAddrErrors, which mode syn_times reads
# through csem_peer's pid, CSEM_PEER_NS_PID); tcp_syn_retries is 2 there
# (connect timeouts of 7 s). Two runs: every mode with the ephemeral range set to
# 20000-29999 in the server namespace (the stack reads it at start, like
# the kernel), then syn_times once more with tcp_syn_linear_timeouts 0
# (where the kernel has the sysctl), then "exhaust" with a range of 16 ports.
#
# Environment:
#   LSTACK_TEST_TARGET=kernel  run csem on the kernel (no preload) at
#                              198.18.0.3: checks the tests against Linux
#   CSEM_MODES=a,b             run only these modes
#   CSEM_SYN_RETRIES=n         tcp_syn_retries for syn_default (1..4, default 2)
#   CSEM_SYN_LINEAR=n          tcp_syn_linear_timeouts for syn_times (default:
#                              the kernel's, 4 on Linux 6.6 on)
# shellcheck disable=SC2034 # T_NAME is read by common.sh
T_NAME=csem
# shellcheck source=redis_lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/redis_lib.sh"
r_bed_init "${1:-}"

SEM_DIR="$T_BUILD/tests/system/sem"
CSEM="$SEM_DIR/csem"
PEER="$SEM_DIR/csem_peer"
[[ -x "$CSEM" && -x "$PEER" ]] || t_fail "csem / csem_peer not built in $SEM_DIR"
PORT=7100
CLOSED=7101
NOARP=198.18.0.77
FAR=198.51.100.1
COLD=198.18.0.5

# Room for 1,000 connections plus the ones still in TIME_WAIT's lsock-free
# state, and their buffers.
r_conf "$R_CONF" 'tcp_conn_count = 1500;' 'mbuf_count_per_conn = 8;'
if ! r_is_lstack; then
    # the kernel target needs the route the stack has (gateway_addr)
    ip -n "$TB_NS_SRV" route add default via "$TB_IP_CLI" || t_fail "cannot add a default route"
fi
ip netns exec "$TB_NS_CLI" sysctl -qw net.ipv4.ip_forward=0 || t_fail "ip_forward"
# a second address of the peer, for the cold ARP burst (mode cold)
ip -n "$TB_NS_CLI" addr add "$COLD/$TB_PREFIXLEN" dev "$TB_IF_CLI" || t_fail "cannot add $COLD"

plog="$T_WORK/peer.log"
ip netns exec "$TB_NS_CLI" bash -c "ulimit -n 8192; exec \"$PEER\" $PORT" >"$plog" 2>&1 &
ppid=$!
R_BG_PIDS+=("$ppid")
for ((i = 0; i < 50; i++)); do
    grep -q '^csem_peer: listening' "$plog" 2>/dev/null && break
    sleep 0.1
done
grep -q '^csem_peer: listening' "$plog" || t_fail "csem_peer did not start: $(cat "$plog")"
t_ok "csem_peer (kernel echo server) on $TB_IP_CLI:$PORT, pid $ppid"

# run_csem LOG RANGE MODES : csem in the server namespace with that ephemeral
# range. csem must exit within 30 s of its last line ("csem: N modes") and
# within 600 s in all; otherwise it is described (threads, wait channels,
# stacks: into HANGS, printed at the end of the output so that a log's tail
# has it) and SIGKILLed, and its exit status is "killed" (a failure).
HANGS="$T_WORK/hangs.txt"
csem_bad=()
run_csem() {
    local log="$1" range="$2" modes="$3" rc=0 pid start done_at=""
    ip netns exec "$TB_NS_SRV" sysctl -qw net.ipv4.ip_local_port_range="$range" || t_fail "ip_local_port_range"
    # SYN retries without TCP_SYNCNT (mode syn_default): ETIMEDOUT after 7 s
    ip netns exec "$TB_NS_SRV" sysctl -qw net.ipv4.tcp_syn_retries="${CSEM_SYN_RETRIES:-2}" || t_fail "tcp_syn_retries"
    if [[ -n "${CSEM_SYN_LINEAR:-}" ]]; then
        ip netns exec "$TB_NS_SRV" sysctl -qw net.ipv4.tcp_syn_linear_timeouts="$CSEM_SYN_LINEAR" ||
            t_fail "tcp_syn_linear_timeouts (Linux 6.6 on)"
    fi
    if r_is_lstack; then
        ip netns exec "$TB_NS_SRV" env LD_PRELOAD="$R_PRELOAD" GAZELLE_BIND_PROCNAME=csem CSEM_PEER_NS_PID="$ppid" \
            LSTACK_CONF_PATH="$R_CONF" "$CSEM" "$modes" "$R_HOST" "$TB_IP_CLI" "$PORT" "$CLOSED" "$NOARP" "$FAR" "$COLD" \
            >"$log" 2>&1 &
    else
        ip netns exec "$TB_NS_SRV" env CSEM_PEER_NS_PID="$ppid" "$CSEM" "$modes" "$R_HOST" "$TB_IP_CLI" "$PORT" \
            "$CLOSED" "$NOARP" "$FAR" "$COLD" >"$log" 2>&1 &
    fi
    pid=$!
    R_BG_PIDS+=("$pid")
    start=$SECONDS
    while ! tb_wait_gone "$pid" 1; do
        [[ -z "$done_at" ]] && grep -q '^csem: [0-9]* modes' "$log" && done_at=$SECONDS
        if ((SECONDS - start >= 600)) || { [[ -n "$done_at" ]] && ((SECONDS - done_at >= 30)); }; then
            {
                if [[ -n "$done_at" ]]; then
                    echo "# csem $modes (pid $pid) still running 30 s after its last line: SIGKILL. What it was doing:"
                else
                    echo "# csem $modes (pid $pid) still running after 600 s: SIGKILL. What it was doing:"
                fi
                echo "# its last output:"
                tail -n 5 "$log" | sed 's/^/#   | /'
                tb_describe_pid "$pid" | sed 's/^/# /'
            } >>"$HANGS" 2>&1
            kill -KILL "$pid" 2>/dev/null
            rc=killed
            break
        fi
    done
    if [[ "$rc" == killed ]]; then
        wait "$pid" 2>/dev/null
    else
        wait "$pid" 2>/dev/null || rc=$?
    fi
    echo "# csem $modes (range $range): exit status $rc"
    # 1 is csem's "a mode failed" (reported per mode); anything else is not
    [[ "$rc" == 0 || "$rc" == 1 ]] || csem_bad+=("csem $modes: exit status $rc")
}

failed=0
n=0
# report LOG MODE...
report() {
    local log="$1" m l
    shift
    for m in "$@"; do
        n=$((n + 1))
        l=$(grep -E "^(not )?ok - client $m(:|$)" "$log" | head -n 1)
        if [[ "$l" == "ok - client $m" ]]; then
            echo "ok $n - $m"
        else
            failed=$((failed + 1))
            echo "not ok $n - $m"
            echo "#   ${l:-(no verdict: csem gone?)}"
        fi
        grep -hE "^# client $m: " "$log" | sed 's/^/    /'
    done
}

modes1=()
want_exhaust=1
if [[ -n "${CSEM_MODES:-}" ]]; then
    IFS=, read -r -a sel <<<"$CSEM_MODES"
    want_exhaust=0
    for m in "${sel[@]}"; do
        if [[ "$m" == exhaust ]]; then want_exhaust=1; else modes1+=("$m"); fi
    done
else
    mapfile -t modes1 < <("$CSEM" list | grep -vx exhaust)
fi
if ((${#modes1[@]})); then
    log1="$T_WORK/csem.log"
    run_csem "$log1" "20000 29999" "$(IFS=,; echo "${modes1[*]}")"
    report "$log1" "${modes1[@]}"
fi
# syn_times again with the other rule of Linux's SYN timings: kernels
# before 6.6 have no tcp_syn_linear_timeouts (0); where it exists and the
# first run used another value, a run with 0 (15 s)
if [[ -z "${CSEM_MODES:-}" && -z "${CSEM_SYN_LINEAR:-}" && -r /proc/sys/net/ipv4/tcp_syn_linear_timeouts ]] &&
    [[ "$(ip netns exec "$TB_NS_SRV" cat /proc/sys/net/ipv4/tcp_syn_linear_timeouts)" != 0 ]]; then
    log3="$T_WORK/csem-linear0.log"
    CSEM_SYN_LINEAR=0 run_csem "$log3" "20000 29999" syn_times
    report "$log3" syn_times
fi
if ((want_exhaust)); then
    log2="$T_WORK/csem-exhaust.log"
    run_csem "$log2" "40000 40015" exhaust
    report "$log2" exhaust
fi
for f in "$T_WORK"/csem*.log; do
    if grep -qvE '^(ok|not ok) - |^# |^csem: ' "$f"; then
        echo "# other output of $(basename "$f") (preload messages?):"
        grep -vE '^(ok|not ok) - |^# |^csem: ' "$f" | head -n 20 | sed 's/^/#   | /'
    fi
done
kill -0 "$ppid" 2>/dev/null || t_fail "csem_peer died: $(tail -n 5 "$plog")"
# the hang reports last: a log's tail shows them
[[ -s "$HANGS" ]] && cat "$HANGS"
if ((failed)); then
    echo "FAIL: $failed of $n modes failed (logs: $T_WORK, kept)"
    T_KEEP_LOG=1
    exit 1
fi
((${#csem_bad[@]} == 0)) || t_fail "every mode passed, but ${csem_bad[*]}"
t_ok "all $n client-side modes pass on $R_TARGET"
t_pass
