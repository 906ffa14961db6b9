#!/usr/bin/env bash
# The main job: build lstack, make a namespace pair (a client on the kernel
# stack, a server whose veth is driven by DPDK's net_af_packet), bring an
# lstack stack up on the server side and ping it from the client.
# Everything it creates is removed again, also on failure or Ctrl-C.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}

scripts/install-deps.sh
[ -f "$BUILD/build.ninja" ] || meson setup "$BUILD"
ninja -C "$BUILD"

export LSTACK_TB=${LSTACK_TB:-demo}
source tests/system/testbed.sh
tb_require_root
tb_trap_cleanup
tb_up

conf="$TB_STATE_DIR/lstack.conf"
tb_write_conf "$conf"
echo "== lstack.conf"
cat "$conf"
tb_start_lstackd "$BUILD/tools/lstackd" "$conf" "$TB_STATE_DIR/lstackd.log"

echo "== ping $TB_IP_STACK (lstack) from the client namespace"
ip netns exec "$TB_NS_CLI" ping -c 20 -i 0.05 "$TB_IP_STACK"
echo "== arping $TB_IP_STACK"
ip netns exec "$TB_NS_CLI" arping -c 2 -I "$TB_IF_CLI" "$TB_IP_STACK"
echo "== stack counters"
tb_lstackd_stats
tb_stop_lstackd
echo "== lstackd output"
cat "$TB_STATE_DIR/lstackd.log"
