#!/bin/bash
# s6_acks.sh LIB OUTDIR: the frames, and of them the pure ACKs, that an
# lstack redis-server (LD_PRELOAD=LIB) sends per SET and per GET in scenario
# 6 (redis-benchmark -n $N -c 10 -d 65536, N default 2000), counted by
# tcpdump on the client veth; appends one line per test to OUTDIR/acks.txt.
# The benchmark's bed and conf on net_af_xdp (server CPU 1, client CPU 0),
# bed name $LSTACK_TB (default s6a). A count, not a timing figure: run it
# under the shared quiet lock. Used by sessions 10 and 11
# (bench/results/a10-s6-acks/, ak11-s6-acks/; docs/performance.md).
set -u
LIB=$1 OUT=$2 N=${N:-2000}
mkdir -p "$OUT"
export LSTACK_TB=${LSTACK_TB:-s6a} TB_PMD=af_xdp TB_CPU=1 TB_HUGEPAGES=512
source "$(dirname "$0")/../tests/system/testbed.sh"
tb_require_root
tb_trap_cleanup
tb_up || exit 1
cat >"$OUT/lstack.conf" <<C
dpdk_args = [ "--in-memory", "--no-pci", "--file-prefix", "${LSTACK_TB}x", "-l", "1", "--vdev=net_af_xdp0,iface=$TB_IF_SRV,start_queue=0,queue_count=1" ];
host_addr = "198.18.0.2";
mask_addr = "255.255.255.0";
gateway_addr = "198.18.0.1";
num_cpus = "1";
init_fail = "exit";
tcp_conn_count = 1200;
mbuf_count_per_conn = 64;
C
taskset -c 1 ip netns exec "$TB_NS_SRV" env LD_PRELOAD="$LIB" GAZELLE_BIND_PROCNAME=redis-server LSTACK_CONF_PATH="$OUT/lstack.conf" \
  /usr/bin/redis-server --port 6379 --bind 0.0.0.0 --protected-mode no --save '' --appendonly no --daemonize no --dir "$OUT" --logfile "$OUT/redis.log" >"$OUT/stdout.log" 2>&1 &
SRV=$!
for i in $(seq 100); do [[ "$(ip netns exec "$TB_NS_CLI" timeout 2 redis-cli -h 198.18.0.2 ping 2>/dev/null)" == PONG ]] && break; sleep 0.2; done
for t in set get; do
  ip netns exec "$TB_NS_CLI" tcpdump -i "$TB_IF_CLI" -s 96 -w "$OUT/$t.pcap" -Q in 'src host 198.18.0.2 and tcp' >/dev/null 2>&1 &
  TD=$!; sleep 1
  taskset -c 0 ip netns exec "$TB_NS_CLI" redis-benchmark -h 198.18.0.2 -n "$N" -c 10 -t $t -d 65536 --csv >"$OUT/$t.csv" 2>&1
  sleep 0.5; kill -INT $TD; wait $TD
  all=$(tcpdump -r "$OUT/$t.pcap" 2>/dev/null | wc -l)
  pure=$(tcpdump -r "$OUT/$t.pcap" 'tcp[tcpflags] == tcp-ack and (ip[2:2] - ((ip[0]&0xf)<<2) - ((tcp[12]&0xf0)>>2)) == 0' 2>/dev/null | wc -l)
  echo "$t: N=$N frames_from_server=$all pure_acks=$pure per_request=$(python3 -c "print(round($pure/$N,2), round($all/$N,2))")" | tee -a "$OUT/acks.txt"
  rm -f "$OUT/$t.pcap"
done
kill -TERM $SRV; wait $SRV
tb_down
