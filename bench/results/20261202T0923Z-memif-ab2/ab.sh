#!/usr/bin/env bash
# ab.sh OUT ROUNDS LABEL=LIB... : memif pair A/B (server CPU1, client CPU0), scenarios 5 and 1.
set -u
ROOT=/work/wt/both
OUT="$1"; ROUNDS="$2"; shift 2
declare -a LABELS=() LIBS=()
for a in "$@"; do LABELS+=("${a%%=*}"); LIBS+=("${a#*=}"); done
export LSTACK_TB=bo
source "$ROOT/tests/system/testbed.sh"
source "$ROOT/tests/preload_env.sh"
source "$ROOT/tests/system/memif_lib.sh"
mkdir -p "$OUT"
WORK=$(mktemp -d /tmp/both-ab/w.XXXX)
m_init boab "$WORK" "${LIBS[0]}" 1 0 || exit 1
m_conf server 'tcp_conn_count = 1200;' 'mbuf_count_per_conn = 64;'
m_conf client 'tcp_conn_count = 1200;' 'mbuf_count_per_conn = 64;'
trap 'kill $SRV 2>/dev/null; m_down; rm -rf $WORK' EXIT
for ((r=1; r<=ROUNDS; r++)); do
  for ((i=0;i<${#LIBS[@]};i++)); do
    j=$(( (i + r) % ${#LIBS[@]} )); L=${LABELS[$j]}; M_PRELOAD=$(preload_list "${LIBS[$j]}")
    (ulimit -n 10240; m_run server redis-server --port 6379 --bind 0.0.0.0 --protected-mode no --save '' --appendonly no --maxclients 4000 --daemonize no --dir "$WORK" --logfile "$WORK/redis.log") >/dev/null 2>&1 &
    SRV=$!
    for ((k=0;k<100;k++)); do [[ "$(ip netns exec $M_NS timeout 2 redis-cli -h 127.0.0.1 ping 2>&1)" == PONG ]] && break; sleep 0.2; done
    ld=$(cut -d' ' -f1 /proc/loadavg)
    for sc in "5:-c 1 -t ping -n ${N5:-50000}" "1:-c 50 -P 1 -t set,get -d 3 -n ${N1:-200000}"; do
      s=${sc%%:*}; args=${sc#*:}
      res=$( (M_BIND=redis-benchmark; m_run client timeout 120 redis-benchmark -h $M_IP_SRV -p 6379 --csv $args) 2>/dev/null | grep -v '^"test"' | tr -d '"' | awk -F, '{printf "%s %s p50=%s p99=%s; ", $1,$2,$5,$7}')
      echo "r$r $L s$s load=$ld $res" | tee -a "$OUT/results.txt"
    done
    kill -TERM $SRV; wait $SRV 2>/dev/null
  done
done
