#!/usr/bin/env bash
# test_redis_pipeline.sh BUILD_DIR
# Redis's pipelining pattern, where both sides' windows close at once: one
# blocking connection writes 100,000 "SET key:i 0000i0000" + "GET key:i"
# pairs (4.4 MB) without reading, then reads the 200,000 replies (2.5 MB)
# and checks every byte (pipe_client.c). The client's receive buffer fills
# while it is still writing: its window is zero while redis's replies fill
# lstack's send buffer, and the client's data must still be acknowledged
# (zero-window probes and ACKs a Linux receiver takes: lwIP patches 0019,
# 0026).
# Against one redis under lstack in run-to-completion, then one in
# run-to-wakeup: PIPE_RUNS runs (default 30) one after the other, then 4
# such connections at once, 5 runs each (the shape where the zero-window
# probe falls while the clients still write: without the patch the first
# run stalls). Each run must complete within 5 s (the kernel's slowest
# here: ~0.5 s alone). A run that does not is reported with the client's
# TCP_INFO and the server's `stackctl show connections`, taken while the
# connection is still open. LSTACK_TEST_TARGET=kernel runs the same against
# a kernel redis; PIPE_MODES="run-to-wakeup" (say) runs one mode only.
#
# The soak (by hand, docs/reliability.md): PIPE_SOAK_SECONDS=600 runs, per
# mode, 16 pipelining connections and 8 connections doing SET+GET of 1 MiB
# values (every byte compared) at once for that long, instead of the
# rounds above: no byte may wait more than 10 s to move, no run may last
# more than 120 s.
set -u
# shellcheck disable=SC2034 # T_NAME is read by common.sh
T_NAME=rpipe
# shellcheck source=redis_lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/redis_lib.sh"
r_init "${1:-}"

CLIENT="$T_BUILD/tests/system/pipe_client"
[[ -x "$CLIENT" ]] || t_fail "pipe_client not built: $CLIENT"
CTL="$T_BUILD/tools/stackctl"
RUNS="${PIPE_RUNS:-30}"
# Each run within LIMIT s (the kernel's worst here is 0.5 s); a sanitizer
# build runs several times slower, so it gets 30 s a run, while the stall
# bound (no byte moved for STALL s), which the stall breaks, stays 5 s.
LIMIT=5
STALL=5
[[ -n "${ASAN_OPTIONS:-}" ]] && LIMIT=30
SOAK="${PIPE_SOAK_SECONDS:-0}"

# pipe_round NAME WHAT CLIENTS RUNS : CLIENTS connections at once, RUNS
# runs each, against redis NAME.
pipe_round() {
    local name="$1" what="$2" clients="$3" runs="$4" rc=0
    local out="$T_WORK/pipe.$1.$3.log" stall="$T_WORK/on_stall.$1.sh"
    {
        echo '#!/bin/sh'
        echo "echo '--- the client namespace: ss -tinm'"
        echo "ip netns exec $TB_NS_CLI ss -tinm"
        if [[ "${R_KIND[$name]}" == lstack && -x "$CTL" ]]; then
            echo "echo '--- the server: stackctl show connections'"
            echo "ip netns exec $TB_NS_SRV $CTL -p $(r_pid "$name") --timeout 5 show connections"
        fi
    } >"$stall"
    chmod +x "$stall"
    if ((SOAK > 0)); then
        ip netns exec "$TB_NS_CLI" timeout $((SOAK + 300)) "$CLIENT" "$(r_host "$name")" "$(r_port "$name")" \
            --pipe 16 --big 8 --seconds "$SOAK" --limit 120 --stall 10 --on-stall "$stall" >"$out" 2>&1 || rc=$?
    else
        ip netns exec "$TB_NS_CLI" timeout $((runs * (LIMIT + 2) + 30)) "$CLIENT" "$(r_host "$name")" \
            "$(r_port "$name")" --pipe "$clients" --runs "$runs" --limit "$LIMIT" --stall "$STALL" --on-stall "$stall" >"$out" 2>&1 ||
            rc=$?
    fi
    sed 's/^/   /' "$out"
    ((rc == 0)) || r_fail "$what: the client failed (exit $rc)"
    r_alive "$name" || r_fail "$what: redis died"
    if ((SOAK > 0)); then
        t_ok "$what: soak of $SOAK s, 16 pipelining and 8 1 MiB SET/GET connections at once: no stall, every byte right"
    else
        t_ok "$what: $clients connection(s) at once, $runs runs each of 100,000 pipelined SET+GET pairs, every reply right, each within ${LIMIT} s"
    fi
}

# rounds NAME WHAT : the rounds against redis NAME (or the soak).
rounds() {
    if ((SOAK > 0)); then
        pipe_round "$1" "$2" 24 0
    else
        pipe_round "$1" "$2" 1 "$RUNS"
        pipe_round "$1" "$2" 4 5
    fi
}

if r_is_lstack; then
    for mode in ${PIPE_MODES:-run-to-completion run-to-wakeup}; do
        name=${mode//-to-/2}
        r_conf "$R_CONF" 'tcp_conn_count = 1024;' "stack_thread_mode = \"$mode\";"
        r_start "$name" lstack
        r_wait_ready "$name" || r_fail "redis ($mode) did not come up"
        up=$(grep -m1 'stack up on' "${R_OUT[$name]}")
        [[ "$up" == *"($mode)"* ]] || r_fail "the stack does not say it runs in $mode: $up"
        echo "   ${up#*lstack: }"
        rounds "$name" "$mode"
        r_stop "$name" term || r_fail "redis ($mode) did not exit cleanly on SIGTERM"
    done
else
    r_start srv kernel
    r_wait_ready srv || r_fail "redis did not come up"
    rounds srv kernel
    r_stop srv term || r_fail "redis did not exit cleanly on SIGTERM"
fi
r_pass
