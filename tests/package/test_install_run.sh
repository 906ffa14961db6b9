#!/usr/bin/env bash
# test_install_run.sh BUILD_DIR SOURCE_DIR - the files `meson install` puts
# down run a stack by themselves (TAP; root, DPDK's net_null port with
# --no-huge: no hugepages, no bed). From a --destdir install, with
# $LSTACK_LWIP_LIB, $LSTACK_DPDK_LIB and $LD_LIBRARY_PATH unset:
#  - lstackd starts its stack (its lwIP found through its RUNPATH);
#  - a program under the installed liblstack.so starts its stack
#    (init_fail = "exit": a failure would stop it) and the dynamic loader
#    takes liblstack_dpdk.so from the installed private directory.
set -u
# shellcheck source=tap.sh
source "$(dirname "$0")/tap.sh"
build=$(cd "$1" && pwd)
src=$(cd "$2" && pwd)
[[ $(id -u) -eq 0 ]] || { echo "1..0 # SKIP needs root (DPDK)"; exit 0; }
# shellcheck source=install_lib.sh
source "$src/tests/package/install_lib.sh"
inst_tree "$build"
unset LSTACK_LWIP_LIB LSTACK_DPDK_LIB LD_LIBRARY_PATH
export LSTACK_RUN_DIR="$DEST/run"
conf="$DEST/null.conf"
cat >"$conf" <<CONF
dpdk_args = ["--no-huge", "-m", "64", "--no-pci", "--no-shconf", "-l", "0", "--vdev=net_null0"];
host_addr = "198.18.0.2";
mask_addr = "255.255.255.0";
gateway_addr = "198.18.0.1";
tcp_conn_count = 16;
mbuf_count_per_conn = 16;
init_fail = "exit";
CONF

log="$DEST/lstackd.log"
"$DEST$BINDIR/lstackd" -f "$conf" >"$log" 2>&1 &
pid=$!
for ((i = 0; i < 100; i++)); do
    grep -q '^lstackd: ready' "$log" && break
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
done
if grep -q '^lstackd: ready' "$log"; then tap_ok "the installed lstackd starts its stack"; else
    tap_not_ok "the installed lstackd starts its stack"
    sed 's/^/# /' "$log"
fi
kill -TERM "$pid" 2>/dev/null
wait "$pid"
rc=$?
if [[ $rc -eq 0 ]]; then tap_ok "and stops on SIGTERM (status 0)"; else tap_not_ok "and stops on SIGTERM (status $rc)"; fi

out=$(LD_DEBUG=libs LD_PRELOAD="$DEST$LIBDIR/liblstack.so" GAZELLE_BIND_PROCNAME=preload_probe \
    LSTACK_CONF_PATH="$conf" "$build/tests/unit/preload_probe" 2>&1)
rc=$?
if [[ $rc -eq 0 ]] && grep -q "loopback ok" <<<"$out" && ! grep -q "acceleration is OFF" <<<"$out"; then
    tap_ok "a program under the installed liblstack.so starts its stack and works"
else
    tap_not_ok "a program under the installed liblstack.so starts its stack and works (status $rc)"
    grep -v 'LD_DEBUG\|^ *[0-9]*:' <<<"$out" | sed 's/^/# /'
fi
want="$DEST$PRIVDIR/liblstack_dpdk.so"
if grep -q "trying file=$want\$" <<<"$out" && grep -q "RUNPATH from file $DEST$LIBDIR/liblstack.so" <<<"$out"; then
    tap_ok "liblstack_dpdk.so comes from the private directory, through liblstack.so's RUNPATH"
else
    tap_not_ok "liblstack_dpdk.so comes from the private directory, through liblstack.so's RUNPATH"
    grep 'liblstack_dpdk\|RUNPATH' <<<"$out" | sed 's/^/# /'
fi
tap_end
