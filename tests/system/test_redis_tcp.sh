#!/usr/bin/env bash
# test_redis_tcp.sh BUILD_DIR
# TCP under reuse and floods (issue 10), against redis:
#  1. TIME_WAIT reuse (RFC 6191): a kernel client bound to one source port
#     (SO_REUSEADDR) sends PING and QUIT, so that redis closes first and its
#     side holds the 4-tuple in TIME_WAIT; it connects again at once from the
#     same port, five times: every connect completes within 1 s.
# LSTACK_TEST_TARGET=kernel runs the same against a kernel redis.
set -u
# shellcheck disable=SC2034 # T_NAME is read by common.sh
T_NAME=rtcp
# shellcheck source=redis_lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/redis_lib.sh"
r_init "${1:-}" python3

r_start srv "$R_TARGET"
r_wait_ready srv || r_fail "redis did not come up"
t_ok "redis-server up on $R_TARGET ($R_HOST:$R_PORT)"

# --- 1: a client reconnects from the port the server holds in TIME_WAIT ----
out="$T_WORK/reuse.log"
rc=0
r_py reuse "$(r_host srv)" "$(r_port srv)" --rounds 5 --within 1.0 >"$out" 2>&1 || rc=$?
sed 's/^/   /' "$out"
((rc == 0)) || r_fail "a client reusing its port after QUIT did not reconnect within 1 s"
t_ok "5 reconnects from one source port after QUIT, each within 1 s"

r_alive srv || r_fail "redis died"
r_stop srv term || r_fail "redis did not exit cleanly on SIGTERM"
t_ok "redis exited 0 on SIGTERM"
r_pass
