#!/usr/bin/env bash
# test_redis_integrity.sh BUILD_DIR
# 20 concurrent clients (redis_resp.py, raw RESP over kernel sockets in the
# client namespace) write random keys with random-byte values from 1 B to
# 8 MB through SET, APPEND and RPUSH to redis under lstack, read each back
# (pipelined with the write where possible) and compare byte for byte; then
# one fresh connection reads every key again. Twice: the second round
# overwrites every key. The seed is printed; rerun one with R_SEED=<seed>. LSTACK_TEST_TARGET=kernel runs it against a kernel redis.
set -u
# shellcheck disable=SC2034 # T_NAME is read by common.sh
T_NAME=rinteg
# shellcheck source=redis_lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/redis_lib.sh"
r_init "${1:-}" python3

r_conf "$R_CONF" 'tcp_conn_count = 64;' 'mbuf_count_per_conn = 256;'
r_start srv "$R_TARGET"
r_wait_ready srv || r_fail "redis did not come up"
t_ok "redis-server up on $R_TARGET ($R_HOST:$R_PORT)"

# Two rounds on the same keys: the second overwrites every value (new sizes).
seed="${R_SEED:-$((RANDOM * 32768 + RANDOM))}"
for round in 1 2; do
    out="$T_WORK/integrity.$round.log"
    rc=0
    ip netns exec "$TB_NS_CLI" timeout 600 python3 "$R_PY" integrity "$R_HOST" "$R_PORT" \
        --clients 20 --seed "$((seed + round - 1))" --max-size $((8 << 20)) >"$out" 2>&1 || rc=$?
    sed 's/^/   /' "$out"
    ((rc == 0)) || r_fail "integrity check failed in round $round (exit $rc, seed $((seed + round - 1)); rerun with R_SEED=$seed)"
    r_alive srv || r_fail "redis died"
    t_ok "round $round: 20 clients: SET/APPEND/RPUSH of 1 B..8 MB random values read back identical (seed $((seed + round - 1)))"
done

r_stop srv term || r_fail "redis did not exit cleanly on SIGTERM"
t_ok "redis exited 0 on SIGTERM"
t_pass
