#!/usr/bin/env bash
# test_garbage.sh BUILD_DIR
# 100,000 malformed / unexpected frames (garbage_tx) at the stack, then:
#  - lstackd is still running and still answers 20 pings;
#  - every mbuf comes back to the pool (mbuf_free returns to its idle value
#    within 40 s: lwIP may hold IP fragments until reassembly times out);
#  - the drop counters account for the garbage.
# Note: with net_af_packet, the PMD joins a PACKET_FANOUT group with
# PACKET_FANOUT_FLAG_DEFRAG, so the server namespace's kernel reassembles IPv4
# fragments before the stack sees them (incomplete ones never reach it).
# lwIP's own reassembly is therefore not exercised on this test bed.
# Environment: GARBAGE_COUNT (100000), GARBAGE_SEED, GARBAGE_PAUSE_US (0), and
# garbage_tx's GARBAGE_TX_ONLY / GARBAGE_TX_SKIP to narrow a failure down.
set -u
# shellcheck disable=SC2034 # T_NAME is read by common.sh
T_NAME=garb
GARBAGE_COUNT="${GARBAGE_COUNT:-100000}"
GARBAGE_SEED="${GARBAGE_SEED:-20240611}"
GARBAGE_PAUSE_US="${GARBAGE_PAUSE_US:-0}" # pause per 64 frames; 0 = as fast as the kernel takes them
# shellcheck source=common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
t_init "${1:-}" ping

GTX="$T_BUILD/tests/system/garbage_tx"
[[ -x "$GTX" ]] || t_fail "garbage_tx not built: $GTX"

# Warm up (ARP in both directions), then let the stack go idle.
t_ping 3 0.1 || t_fail "stack does not answer ping before the garbage"
t_ok "stack answers ping before the garbage"
sleep 2
idle=$(tb_lstackd_stats) || t_fail "no stats from lstackd"
echo "   idle: $idle"
free_idle=$(tb_stat_value "$idle" mbuf_free) || t_fail "no mbuf_free"
total=$(tb_stat_value "$idle" mbuf_total) || t_fail "no mbuf_total"
rx0=$(tb_stat_value "$idle" rx_packets) || t_fail "no rx_packets"
nours0=$(tb_stat_value "$idle" drop_not_ours) || t_fail "no drop_not_ours"
malf0=$(tb_stat_value "$idle" drop_malformed) || t_fail "no drop_malformed"
nombuf0=$(tb_stat_value "$idle" drop_tx_nombuf) || t_fail "no drop_tx_nombuf"
t_ok "idle: mbuf_free=$free_idle of mbuf_total=$total"

echo "   sending $GARBAGE_COUNT garbage frames (seed $GARBAGE_SEED) from $TB_NS_CLI/$TB_IF_CLI to $TB_LSTACKD_MAC"
ip netns exec "$TB_NS_CLI" "$GTX" "$TB_IF_CLI" "$TB_LSTACKD_MAC" "$TB_IP_CLI" "$TB_IP_STACK" \
    "$GARBAGE_COUNT" "$GARBAGE_SEED" "$GARBAGE_PAUSE_US" >"$T_WORK/garbage_tx.out" 2>&1
rc=$?
sed 's/^/   | /' "$T_WORK/garbage_tx.out"
((rc == 0)) || t_fail "garbage_tx failed with status $rc"
t_ok "garbage_tx sent its frames"

sleep 1
tb_lstackd_running || t_fail "lstackd died during the garbage"
t_ok "lstackd still running after the garbage"

t_ping 20 0.05 || t_fail "stack does not answer 20/20 pings after the garbage"
t_ok "ping -c 20 after the garbage: 20 replies"

# mbufs held by the stack (reassembly, ARP queue) must all come back.
free_now=""
for ((s = 0; s <= 40; s++)); do
    line=$(tb_lstackd_stats) || t_fail "no stats from lstackd"
    free_now=$(tb_stat_value "$line" mbuf_free) || t_fail "no mbuf_free"
    ((free_now >= free_idle)) && break
    ((s % 5 == 0)) && echo "   t+${s}s: mbuf_free=$free_now (idle $free_idle)"
    sleep 1
done
((free_now >= free_idle)) || t_fail "mbuf leak: mbuf_free=$free_now after 40 s, idle was $free_idle (of $total)"
t_ok "mbuf_free back to its idle value ($free_now >= $free_idle) after ${s}s"

echo "   after: $line"
rx1=$(tb_stat_value "$line" rx_packets)
nours1=$(tb_stat_value "$line" drop_not_ours)
malf1=$(tb_stat_value "$line" drop_malformed)
nombuf1=$(tb_stat_value "$line" drop_tx_nombuf)
drops=""
for kv in $line; do
    [[ "$kv" == drop_*=* || "$kv" == port_*=* ]] && drops+=" $kv"
done
echo "   counters:$drops"
echo "   deltas: rx_packets +$((rx1 - rx0)) drop_not_ours +$((nours1 - nours0)) drop_malformed +$((malf1 - malf0)) drop_tx_nombuf +$((nombuf1 - nombuf0))"
((rx1 > rx0)) || t_fail "rx_packets did not grow"
((nours1 > nours0)) || t_fail "drop_not_ours did not grow"
((malf1 > malf0)) || t_fail "drop_malformed did not grow"
t_ok "drop counters grew (drop_not_ours +$((nours1 - nours0)), drop_malformed +$((malf1 - malf0)))"

t_stop
t_pass
