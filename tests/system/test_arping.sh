#!/usr/bin/env bash
# test_arping.sh BUILD_DIR
# ARP both ways between the kernel client and the stack:
#  - the stack's MAC (ready line) is the server veth's MAC (net_af_packet);
#  - `arping -c 3` (iputils) from the client gets 3 replies carrying that MAC;
#  - the stack resolves its gateway (the client) to the client veth's MAC.
set -u
# shellcheck disable=SC2034 # T_NAME is read by common.sh
T_NAME=arp
# shellcheck source=common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
t_init "${1:-}" arping

# iputils-arping and the (incompatible) arping package share the binary name.
arping -V 2>&1 | grep -qi iputils || tb_skip "arping is not iputils-arping"

srv_mac=$(tb_mac "$TB_NS_SRV" "$TB_IF_SRV")
cli_mac=$(tb_mac "$TB_NS_CLI" "$TB_IF_CLI")
[[ -n "$srv_mac" && -n "$cli_mac" ]] || t_fail "cannot read the veth MACs"
echo "   server veth $TB_IF_SRV: $srv_mac; client veth $TB_IF_CLI: $cli_mac"

[[ "$TB_LSTACKD_MAC" == "$srv_mac" ]] ||
    t_fail "lstackd reports mac=$TB_LSTACKD_MAC, server veth has $srv_mac"
t_ok "lstackd's MAC is the server veth's MAC ($srv_mac)"

out=$(ip netns exec "$TB_NS_CLI" arping -c 3 -I "$TB_IF_CLI" "$TB_IP_STACK" 2>&1)
rc=$?
while IFS= read -r l; do echo "   | $l"; done <<<"$out"
((rc == 0)) || t_fail "arping exited with status $rc"
grep -q 'Received 3 response' <<<"$out" || t_fail "arping did not receive 3 responses"
mapfile -t macs < <(sed -n "s/^Unicast reply from ${TB_IP_STACK//./\\.} \[\([0-9A-Fa-f:]*\)\].*/\1/p" <<<"$out" | tr 'A-F' 'a-f')
((${#macs[@]} == 3)) || t_fail "expected 3 'Unicast reply from $TB_IP_STACK' lines, got ${#macs[@]}"
for m in "${macs[@]}"; do
    [[ "$m" == "$srv_mac" ]] || t_fail "ARP reply carries $m, expected $srv_mac"
done
t_ok "arping -c 3: 3 replies from $TB_IP_STACK, all with MAC $srv_mac"

# The stack resolves its gateway (lstackd checks once a second).
gw_line=""
for ((i = 0; i < 100; i++)); do
    gw_line=$(grep -m1 "^lstackd: gateway $TB_IP_CLI is at " "$TB_LSTACKD_LOG") && break
    sleep 0.1
done
[[ -n "$gw_line" ]] || t_fail "no 'lstackd: gateway $TB_IP_CLI is at ...' line within 10 s"
echo "   $gw_line"
gw_mac=$(awk '{print tolower($NF)}' <<<"$gw_line")
[[ "$gw_mac" == "$cli_mac" ]] || t_fail "stack resolved gateway to $gw_mac, client veth is $cli_mac"
t_ok "stack resolved its gateway $TB_IP_CLI to the client veth's MAC ($cli_mac)"

# The stack's ARP request for its gateway taught the client kernel the stack's MAC
# (arping itself uses a packet socket and leaves the neighbour table alone).
neigh=$(ip -n "$TB_NS_CLI" neigh show "$TB_IP_STACK" dev "$TB_IF_CLI" | awk '{print tolower($3)}')
[[ "$neigh" == "$srv_mac" ]] || t_fail "client neighbour entry for $TB_IP_STACK is '$neigh', expected $srv_mac"
t_ok "client kernel neighbour table has $TB_IP_STACK lladdr $srv_mac"

tb_lstackd_running || t_fail "lstackd died"
t_stop
t_pass
