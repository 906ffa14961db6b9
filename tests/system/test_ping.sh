#!/usr/bin/env bash
# test_ping.sh BUILD_DIR
# The kernel in the client namespace pings the stack (lstackd, 198.18.0.2 on
# net_af_packet over a veth): 200 echo requests at 10 ms must get exactly
# 200 replies, and the stack's counters must account for them.
set -u
# shellcheck disable=SC2034 # T_NAME is read by common.sh
T_NAME=ping
# shellcheck source=common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
t_init "${1:-}" ping

before=$(tb_lstackd_stats) || t_fail "no stats from lstackd"
rx0=$(tb_stat_value "$before" rx_packets) || t_fail "bad stats line"
tx0=$(tb_stat_value "$before" tx_packets) || t_fail "bad stats line"

t_ping 200 0.01 || t_fail "ping -c 200 -i 0.01 -W 1 $TB_IP_STACK did not get exactly 200 replies"
t_ok "ping -c 200 -i 0.01: 200 sent, 200 received, no duplicates"

after=$(tb_lstackd_stats) || t_fail "no stats from lstackd"
echo "   $after"
rx1=$(tb_stat_value "$after" rx_packets) || t_fail "bad stats line"
tx1=$(tb_stat_value "$after" tx_packets) || t_fail "bad stats line"
((rx1 - rx0 >= 200)) || t_fail "rx_packets grew by $((rx1 - rx0)), expected >= 200"
((tx1 - tx0 >= 200)) || t_fail "tx_packets grew by $((tx1 - tx0)), expected >= 200"
t_ok "counters: rx_packets +$((rx1 - rx0)), tx_packets +$((tx1 - tx0)) (>= 200 each)"

tb_lstackd_running || t_fail "lstackd died"
t_stop
t_pass
