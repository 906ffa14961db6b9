#!/usr/bin/env bash
# test_redis_pieces.sh BUILD_DIR
# Replies built from thousands of small pieces: EVAL of a Lua
# script returning 5000 (then 20000) small tables. Redis 7 keeps such a
# reply as a list of tiny blocks and writes it with writev of up to IOV_MAX
# (1024) entries (strace of a kernel redis: writev(..., 1024) = 14336). A
# kernel client (redis_resp.py pieces) reads each reply raw and compares it
# byte for byte; a PING after each pipelined batch must answer +PONG, and
# redis must still be up. LSTACK_TEST_TARGET=kernel runs it against a kernel
# redis.
set -u
# shellcheck disable=SC2034 # T_NAME is read by common.sh
T_NAME=rpiece
# shellcheck source=redis_lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/redis_lib.sh"
r_init "${1:-}" python3

r_start srv "$R_TARGET"
r_wait_ready srv || r_fail "redis did not come up"
t_ok "redis-server up on $R_TARGET ($R_HOST:$R_PORT)"

for spec in "5000 4 3" "20000 2 2"; do
    read -r tables pipeline rounds <<<"$spec"
    out="$T_WORK/pieces.$tables.log"
    rc=0
    r_py pieces "$R_HOST" "$R_PORT" --tables "$tables" --pipeline "$pipeline" --rounds "$rounds" \
        >"$out" 2>&1 || rc=$?
    sed 's/^/   /' "$out"
    ((rc == 0)) || r_fail "EVAL replies of $tables small tables differ or the connection broke (exit $rc)"
    r_alive srv || r_fail "redis died"
    t_ok "$((pipeline * rounds)) EVAL replies of $tables small tables (writev of up to 1024 entries) read back identical"
done

r_stop srv term || r_fail "redis did not exit cleanly on SIGTERM"
t_ok "redis exited 0 on SIGTERM"
t_pass
