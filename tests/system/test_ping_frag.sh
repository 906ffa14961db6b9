#!/usr/bin/env bash
# test_ping_frag.sh BUILD_DIR
# Fragmented IPv4 both ways: the kernel in the client namespace
# pings the stack (lstackd on net_af_packet) with 2000- and 8000-byte
# payloads, which leave the client in 2 and 6 fragments (-M dont). Every
# request must be answered; the stack must have reassembled the requests
# itself (frag_reassembled; nothing dropped as malformed: the af_packet
# PMD's kernel defragmentation is off, common/pkt_fanout.h) and fragmented
# its replies (the client kernel's ReasmOKs grows), and hold no frame
# afterwards.
set -u
# shellcheck disable=SC2034 # T_NAME is read by common.sh
T_NAME=pfrag
# shellcheck source=common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
t_init "${1:-}" ping

# Ip: ReasmOKs of the client namespace's kernel.
cli_reasm_oks() {
    # shellcheck disable=SC2016 # awk's own $c
    ip netns exec "$TB_NS_CLI" awk '/^Ip:/ { if (!h) { for (i = 1; i <= NF; i++) if ($i == "ReasmOKs") c = i; h = 1 } else print $c }' /proc/net/snmp
}

COUNT=20
before=$(tb_lstackd_stats) || t_fail "no stats from lstackd"
malf0=$(tb_stat_value "$before" drop_malformed) || t_fail "bad stats line"
fin0=$(tb_stat_value "$before" frag_in) || t_fail "no frag_in in the stats line"
fok0=$(tb_stat_value "$before" frag_reassembled) || t_fail "no frag_reassembled in the stats line"
reasm0=$(cli_reasm_oks)
[[ "$reasm0" =~ ^[0-9]+$ ]] || t_fail "cannot read ReasmOKs of the client namespace"

for size in 2000 8000; do
    out=$(ip netns exec "$TB_NS_CLI" ping -n -M dont -s "$size" -c "$COUNT" -i 0.05 -W 1 "$TB_IP_STACK" 2>&1)
    summary=$(grep -E 'packets transmitted' <<<"$out")
    echo "   ping -s $size: $summary"
    if ! grep -qE "^$COUNT packets transmitted, $COUNT received," <<<"$out" || grep -qE 'duplicates|errors' <<<"$summary"; then
        echo "$out" | tail -n 5 | sed 's/^/   | /'
        line=$(tb_lstackd_stats) && echo "   $line"
        t_fail "ping -M dont -s $size -c $COUNT: not exactly $COUNT replies"
    fi
    t_ok "ping -M dont -s $size -c $COUNT: $COUNT replies of $size bytes, no duplicates"
done

after=$(tb_lstackd_stats) || t_fail "no stats from lstackd"
echo "   $after"
malf1=$(tb_stat_value "$after" drop_malformed) || t_fail "bad stats line"
fin1=$(tb_stat_value "$after" frag_in) || t_fail "bad stats line"
fok1=$(tb_stat_value "$after" frag_reassembled) || t_fail "bad stats line"
held=$(tb_stat_value "$after" frag_mbufs_held) || t_fail "bad stats line"
mfree=$(tb_stat_value "$after" mbuf_free) || t_fail "bad stats line"
mtotal=$(tb_stat_value "$after" mbuf_total) || t_fail "bad stats line"
reasm1=$(cli_reasm_oks)

((malf1 == malf0)) || t_fail "drop_malformed grew by $((malf1 - malf0)): fragments were cut short before lwIP"
((fin1 - fin0 >= COUNT * 8)) || t_fail "frag_in grew by $((fin1 - fin0)), expected >= $((COUNT * 8)) (2 + 6 per pair)"
((fok1 - fok0 >= COUNT * 2)) || t_fail "frag_reassembled grew by $((fok1 - fok0)), expected >= $((COUNT * 2))"
t_ok "the stack reassembled the requests: frag_in +$((fin1 - fin0)), frag_reassembled +$((fok1 - fok0)), drop_malformed +0"
((reasm1 - reasm0 >= COUNT * 2)) ||
    t_fail "the client kernel reassembled $((reasm1 - reasm0)) datagrams, expected >= $((COUNT * 2)): replies not fragmented?"
t_ok "the replies left the stack in fragments: client ReasmOKs +$((reasm1 - reasm0))"

# Receive is zero-copy: a frame held by reassembly is an mbuf of the pool.
for ((i = 0; i < 20 && (held != 0 || mfree != mtotal); i++)); do
    sleep 0.1
    line=$(tb_lstackd_stats) || t_fail "no stats from lstackd"
    held=$(tb_stat_value "$line" frag_mbufs_held)
    mfree=$(tb_stat_value "$line" mbuf_free)
done
((held == 0 && mfree == mtotal)) || t_fail "afterwards frag_mbufs_held=$held, mbuf_free=$mfree of $mtotal"
t_ok "nothing held afterwards: frag_mbufs_held 0, mbuf_free $mfree of $mtotal"

tb_lstackd_running || t_fail "lstackd died"
t_stop
t_pass
