#!/usr/bin/env bash
# test_sem.sh BUILD_DIR
# Semantic tests of the socket calls (tests/system/sem/): one sem_server
# process under the preload (GAZELLE_BIND_PROCNAME=sem_server) in the server
# namespace serves every mode in turn on one port; sem_client, on the kernel
# in the client namespace, drives them. A mode passes when both halves pass.
# Prints one "ok N - mode: what" / "not ok N - ..." line per mode (with both
# sides' reasons), exits 1 if any failed.
#
# Environment:
#   LSTACK_TEST_TARGET=kernel  run sem_server on the kernel (no preload) at
#                              198.18.0.3: checks the tests against Linux
#   SEM_MODES=a,b              run only these modes (default: all)
set -u
# shellcheck disable=SC2034 # T_NAME is read by common.sh
T_NAME=sem
# shellcheck source=redis_lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/redis_lib.sh"
r_bed_init "${1:-}"

SEM_DIR="$T_BUILD/tests/system/sem"
SRV="$SEM_DIR/sem_server"
CLI="$SEM_DIR/sem_client"
[[ -x "$SRV" && -x "$CLI" ]] || t_fail "sem_server / sem_client not built in $SEM_DIR"
PORT=7000
slog="$T_WORK/sem_server.log"
clog="$T_WORK/sem_client.log"

if r_is_lstack; then
    ip netns exec "$TB_NS_SRV" env LD_PRELOAD="$R_PRELOAD" GAZELLE_BIND_PROCNAME=sem_server \
        LSTACK_CONF_PATH="$R_CONF" "$SRV" all "$PORT" >"$slog" 2>&1 &
else
    ip netns exec "$TB_NS_SRV" "$SRV" all "$PORT" >"$slog" 2>&1 &
fi
spid=$!
R_BG_PIDS+=("$spid")
for ((i = 0; i < 600; i++)); do
    grep -q '^sem_server: listening' "$slog" 2>/dev/null && break
    kill -0 "$spid" 2>/dev/null || break
    sleep 0.1
done
if ! grep -q '^sem_server: listening' "$slog"; then
    sed 's/^/   | /' "$slog"
    t_fail "sem_server did not start listening within 60 s"
fi
r__check_mode "$slog" || t_fail "sem_server: wrong stack_thread_mode"
t_ok "sem_server listening on $R_TARGET ($R_HOST:$PORT), pid $spid${LSTACK_TEST_STACK_MODE:+ ($LSTACK_TEST_STACK_MODE)}"

crc=0
hang=""
ip netns exec "$TB_NS_CLI" timeout 900 "$CLI" "${SEM_MODES:-all}" "$R_HOST" "$PORT" >"$clog" 2>&1 || crc=$?
src=""
# tb_wait_gone's status alone decides (sem-multi's "hang" in CI, twice, was
# a second look at a process that bash had just reaped: see tb_running).
if ! tb_wait_gone "$spid" 30; then
    # What it was doing: its last lines, the stack's and the client
    # namespace's view of the connections, each thread's wait channel and
    # stack. Kept in a file and printed at the end of the output, after the
    # mode list, so that a log's tail has it.
    hang="$T_WORK/hang.txt"
    {
        echo "# sem_server (pid $spid) still running 30 s after the client finished: SIGKILL. What it was doing:"
        echo "# its last output:"
        tail -n 5 "$slog" | sed 's/^/#   | /'
        if r_is_lstack && [[ -x "$T_BUILD/tools/stackctl" ]]; then
            echo "# stackctl show connections (the stack's view):"
            timeout 10 "$T_BUILD/tools/stackctl" -p "$spid" show connections 2>&1 | head -n 20 | sed 's/^/#   | /'
        fi
        echo "# ss -tan in the client namespace (port $PORT):"
        ip netns exec "$TB_NS_CLI" ss -tan "( sport = :$PORT or dport = :$PORT )" 2>&1 | head -n 20 |
            sed 's/^/#   | /'
        tb_describe_pid "$spid" | sed 's/^/# /'
    } >"$hang" 2>&1
    kill -KILL "$spid" 2>/dev/null
    src=killed
fi
wait "$spid" 2>/dev/null
rc=$?
[[ -n "$src" ]] || src=$rc

# Join the two sides, mode by mode.
failed=0
n=0
mapfile -t modes < <("$CLI" list)
for entry in "${modes[@]}"; do
    m="${entry%%$'\t'*}"
    what="${entry#*$'\t'}"
    if [[ -n "${SEM_MODES:-}" && ",${SEM_MODES}," != *",$m,"* ]]; then
        continue
    fi
    n=$((n + 1))
    sl=$(grep -E "^(not )?ok - server $m(:|$)" "$slog" | head -n 1)
    cl=$(grep -E "^(not )?ok - client $m(:|$)" "$clog" | head -n 1)
    if [[ "$sl" == "ok - server $m" && "$cl" == "ok - client $m" ]]; then
        echo "ok $n - $m: $what"
    else
        failed=$((failed + 1))
        echo "not ok $n - $m: $what"
        [[ "$sl" == "ok - server $m" ]] || echo "#   server: ${sl:-(no verdict: server gone?)}"
        [[ "$cl" == "ok - client $m" ]] || echo "#   client: ${cl:-(no verdict)}"
    fi
    grep -hE "^# (server|client) $m: " "$slog" "$clog" | sed 's/^/    /'
done
echo "# sem_server exit status: $src; sem_client exit status: $crc"
grep -hE '^# client quit: ' "$clog"
if grep -qvE '^(ok|not ok) - |^# |^sem_server: ' "$slog"; then
    echo "# sem_server other output (preload messages?):"
    grep -vE '^(ok|not ok) - |^# |^sem_server: ' "$slog" | head -n 20 | sed 's/^/#   | /'
fi
# the hang report last: a log's tail shows it
[[ -z "$hang" ]] || cat "$hang"
if ((failed)); then
    echo "FAIL: $failed of $n modes failed (logs: $T_WORK, kept)"
    T_KEEP_LOG=1
    exit 1
fi
[[ "$src" == 0 ]] || t_fail "sem_server exited with status $src although every mode passed"
[[ "$crc" == 0 ]] || t_fail "sem_client exited with status $crc although every mode passed"
t_ok "all $n semantic modes pass on $R_TARGET"
t_pass
