#!/usr/bin/env bash
# test_redis_kill.sh BUILD_DIR
# kill -9 of redis-benchmark mid-run: the client kernel closes (FIN or RST)
# the benchmark's connections, some with requests in flight towards redis and
# some while redis is sending large replies. The server must drop all of
# them: CLIENT LIST polls down to the one redis-cli asking (bounded time),
# redis keeps serving, and the stack's free mbuf count and socket count
# return to their idle levels (stackctl; lstack only).
# LSTACK_TEST_TARGET=kernel runs the same against a kernel redis.
set -u
# shellcheck disable=SC2034 # T_NAME is read by common.sh
T_NAME=rkill
# shellcheck source=redis_lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/redis_lib.sh"
r_init "${1:-}"

r_conf "$R_CONF" 'tcp_conn_count = 512;' 'mbuf_count_per_conn = 64;'
r_start srv "$R_TARGET"
r_wait_ready srv || r_fail "redis did not come up"
t_ok "redis-server up on $R_TARGET ($R_HOST:$R_PORT)"

# A list whose LRANGE reply is ~600 KB, so that some connections die with
# unsent data queued on the server side.
r_bench srv -c 1 -n 600 -d 1000 -t lpush || r_fail "filling mylist"
[[ "$(r_cli srv llen mylist)" -ge 600 ]] || r_fail "mylist has $(r_cli srv llen mylist) elements"

wait_clients() {
    local want="$1" t="$2" i n=""
    for ((i = 0; i < t * 5; i++)); do
        n=$(r_cli srv client list 2>/dev/null | grep -c '^id=')
        [[ "$n" == "$want" ]] && { echo "$n"; return 0; }
        sleep 0.2
    done
    echo "$n"
    return 1
}

idle_mbuf=$(r_mbuf_free srv) || idle_mbuf=""
idle_socks=$(r_stat srv sockets) || idle_socks=""
[[ -z "$idle_mbuf" ]] || echo "   idle: mbuf_free $idle_mbuf, sockets $idle_socks (stackctl)"

for round in 1 2; do
    r_bench_bg srv "$T_WORK/bench-set.$round.log" -c 150 -P 16 -d 1000 -n 100000000 -r 100000 -t set
    p1=$R_BG_PID
    r_bench_bg srv "$T_WORK/bench-lrange.$round.log" -c 50 -n 100000000 lrange mylist 0 599
    p2=$R_BG_PID
    # until all 200 benchmark clients are connected (plus this redis-cli)
    n=$(wait_clients 201 20) || r_fail "round $round: expected 201 clients connected, CLIENT LIST shows $n"
    sleep 1
    if ! kill -0 "$p1" 2>/dev/null || ! kill -0 "$p2" 2>/dev/null; then
        r_fail "round $round: a benchmark ended before the kill: $(tail -c 300 "$T_WORK"/bench-*."$round".log | tr '\r' '\n' | grep -v '^ *$' | tail -n 4)"
    fi
    kill -KILL "$p1" "$p2"
    wait "$p1" 2>/dev/null
    wait "$p2" 2>/dev/null
    t0=$SECONDS
    n=$(wait_clients 1 20) ||
        r_fail "round $round: CLIENT LIST still shows $n clients 20 s after kill -9 of both benchmarks (want 1: this redis-cli)"
    t_ok "round $round: kill -9 of 200 busy benchmark clients: CLIENT LIST back to 1 within $((SECONDS - t0)) s"
    out=$(r_cli srv ping 2>&1)
    [[ "$out" == PONG ]] || r_fail "round $round: PING after the kill answered '$out'"
    r_alive srv || r_fail "redis died"
done

if [[ -n "$idle_mbuf" ]]; then
    now="" socks=""
    for ((i = 0; i < 50; i++)); do
        now=$(r_mbuf_free srv) || now=""
        socks=$(r_stat srv sockets) || socks=""
        [[ -n "$now" && "$socks" == "$idle_socks" ]] && ((now >= idle_mbuf)) && break
        sleep 0.2
    done
    [[ "$socks" == "$idle_socks" ]] || r_fail "stack sockets $socks 10 s after the kills, $idle_socks when idle"
    if [[ -z "$now" ]] || ((now < idle_mbuf)); then
        r_fail "free mbufs '$now' 10 s after the kills, $idle_mbuf when idle"
    fi
    t_ok "stack back to idle after the kills: mbuf_free $now (idle $idle_mbuf), sockets $socks (stackctl)"
elif r_is_lstack; then
    echo "   TODO: free mbuf count not checked: stackctl not built ($T_BUILD/tools/stackctl)"
fi

r_bench srv -c 50 -n 5000 -t set,get,lrange_100 || r_fail "redis-benchmark after the kills"
t_ok "redis serves a new redis-benchmark normally after the kills"
r_stop srv term || r_fail "redis did not exit cleanly on SIGTERM"
t_ok "redis exited 0 on SIGTERM"
t_pass
