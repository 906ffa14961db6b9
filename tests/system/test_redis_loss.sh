#!/usr/bin/env bash
# test_redis_loss.sh BUILD_DIR
# Loss recovery: lstack-redis against kernel-redis on the very
# same impaired path. The bed runs with TB_BRIDGE=1: lossy_bridge (a third
# namespace) forwards every frame between client and server; a redis under
# lstack (198.18.0.2) and a kernel redis (198.18.0.3) run side by side behind
# it. For each loss profile one bridge runs with that profile, and the same
# byte-exact SET/GET workload (lossy_setget.py: values of 1 B .. 459 KB,
# every SET and GET timed) runs against the kernel, then against lstack.
set -u

# Profiles (both directions):
#   reorder  loss=5,dup=1,reorder=25,delay=10,jitter=5
#   corrupt  corrupt=10 (one byte of the TCP part flipped: checksum fails)
#
# Bounds (asserted): every byte comes back exact; lstack's total time at
# most max(4 x kernel, kernel + 2 s) and no single operation over 5 s. The
# targets are 2x and 2 s (docs/reliability.md has the full measure); the
# test's bound is looser because it runs on a loaded 2-core CI machine where
# the stack's poll thread, the bridge, redis and the client share the cores,
# and a run of ~30 operations has few retransmission timeouts to average
# over.
#
# Environment: LOSS_ROUNDS (default 3), LOSS_SEED (default 1),
# LOSS_PROFILES (default "reorder corrupt"; names as above).
# shellcheck disable=SC2034 # T_NAME is read by common.sh
T_NAME=rloss
export TB_BRIDGE=1
# shellcheck source=redis_lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/redis_lib.sh"
r_init "${1:-}" python3

BRIDGE="$T_BUILD/tests/system/lossy_bridge"
[[ -x "$BRIDGE" ]] || t_fail "lossy_bridge not built: $BRIDGE"
ROUNDS="${LOSS_ROUNDS:-3}"
SEED="${LOSS_SEED:-1}"
PROFILES="${LOSS_PROFILES:-reorder corrupt}"
declare -A SPEC=(
    [reorder]="loss=5,dup=1,reorder=25,delay=10,jitter=5"
    [corrupt]="corrupt=10"
    [clean]="delay=0"
)

# A clean bridge while the servers come up (nothing passes without one).
tb_start_bridge "$BRIDGE" "$T_WORK/bridge-clean.log" --both "${SPEC[clean]}" --duration 300 ||
    t_fail "the bridge did not start"
r_start lk lstack
r_start kn kernel
r_wait_ready lk || r_fail "redis under lstack did not come up behind the bridge"
r_wait_ready kn || r_fail "kernel redis did not come up behind the bridge"
tb_stop_bridge >/dev/null
t_ok "redis under lstack ($(r_host lk)) and a kernel redis ($(r_host kn)) behind the bridge"

# run NAME TAG : the workload against redis NAME; prints the setget line.
# For the redis under lstack, the stack's connections are dumped every 2 s
# meanwhile, and the last dump is printed when the run fails (what a stuck
# connection's windows, queues and timers were).
run() {
    local name="$1" tag="$2" out="$T_WORK/setget.$2.log" rc=0 watch=""
    if [[ "$name" == lk && -x "$T_BUILD/tools/stackctl" ]]; then
        (while sleep 2; do
            ip netns exec "$TB_NS_SRV" "$T_BUILD/tools/stackctl" -p "$(r_pid lk)" --timeout 2 show connections \
                >"$T_WORK/conns.$tag.tmp" 2>&1 && mv "$T_WORK/conns.$tag.tmp" "$T_WORK/conns.$tag"
        done) &
        watch=$!
    fi
    ip netns exec "$TB_NS_CLI" timeout 150 python3 "$T_HERE/lossy_setget.py" "$(r_host "$name")" "$(r_port "$name")" \
        --rounds "$ROUNDS" --seed "$SEED" --op-timeout 60 --tag "$tag" >"$out" 2>&1 || rc=$?
    if [[ -n "$watch" ]]; then
        kill "$watch" 2>/dev/null
        wait "$watch" 2>/dev/null
    fi
    cat "$out" >&2
    if ((rc != 0)); then
        [[ -f "$T_WORK/conns.$tag" ]] && sed 's/^/   conns: /' "$T_WORK/conns.$tag" >&2
        return 1
    fi
    grep '^setget: tag=' "$out"
}

field() { tr ' ' '\n' <<<"$1" | sed -n "s/^$2=//p"; }

# A time bound missed. The sanitizer pass (scripts/test.sh, ASAN_OPTIONS
# set) runs this test for memory errors with every call several times
# slower: there the bounds are reported, not asserted (the plain build
# asserts them). A hung or wrong operation fails in both.
loss_bound_fail() {
    if [[ -n "${ASAN_OPTIONS:-}" ]]; then
        echo "   sanitizer build: not asserted here: $*"
    else
        r_soft_fail "$*"
    fi
}

for p in $PROFILES; do
    [[ -n "${SPEC[$p]:-}" ]] || t_fail "unknown profile '$p'"
    echo "== profile $p: ${SPEC[$p]} (seed $SEED, $ROUNDS rounds)"
    tb_start_bridge "$BRIDGE" "$T_WORK/bridge-$p.log" --both "${SPEC[$p]}" --seed "$SEED" --duration 400 ||
        t_fail "the bridge did not start with profile $p"
    k=$(run kn "kernel-$p") || r_fail "profile $p: the kernel run failed (a broken bed, not an lstack bug)"
    l=$(run lk "lstack-$p") || { tb_stop_bridge; r_fail "profile $p: the lstack run failed (bytes differ or an operation timed out)"; }
    tb_stop_bridge >"$T_WORK/bridge-$p.counters"
    sed 's/^/   /' "$T_WORK/bridge-$p.counters"
    echo "   $k"
    echo "   $l"
    kt=$(field "$k" total_s) lt=$(field "$l" total_s) lw=$(field "$l" worst_s) kw=$(field "$k" worst_s)
    bound=$(awk -v k="$kt" 'BEGIN { b = 4 * k; if (b < k + 2) b = k + 2; printf "%.3f", b }')
    ratio=$(awk -v k="$kt" -v l="$lt" 'BEGIN { printf "%.2f", l / k }')
    echo "   profile $p: lstack ${lt} s (worst op ${lw} s) vs kernel ${kt} s (worst op ${kw} s): ${ratio}x"
    if awk -v l="$lt" -v b="$bound" 'BEGIN { exit !(l <= b) }'; then
        t_ok "profile $p: lstack total ${lt} s <= ${bound} s (max(4 x kernel ${kt} s, kernel + 2 s))"
    else
        loss_bound_fail "profile $p: lstack total ${lt} s > ${bound} s (max(4 x kernel ${kt} s, kernel + 2 s))"
    fi
    if awk -v w="$lw" 'BEGIN { exit !(w <= 5) }'; then
        t_ok "profile $p: lstack's worst operation ${lw} s <= 5 s"
    else
        loss_bound_fail "profile $p: lstack's worst operation ${lw} s > 5 s ($(field "$l" worst_op))"
    fi
done

tb_start_bridge "$BRIDGE" "$T_WORK/bridge-end.log" --both "${SPEC[clean]}" --duration 60 >/dev/null ||
    t_fail "the bridge did not start"
r_stop lk term || r_fail "redis under lstack did not exit cleanly on SIGTERM"
r_stop kn term || r_fail "kernel redis did not exit cleanly on SIGTERM"
tb_stop_bridge >/dev/null
t_ok "both redis exited 0 on SIGTERM"
r_pass
