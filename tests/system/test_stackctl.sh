#!/usr/bin/env bash
# test_stackctl.sh BUILD_DIR
# stackctl against redis under lstack (and against lstackd):
#
# Control sockets go to a private LSTACK_RUN_DIR so that lstack processes of
# other tests running on the machine are not seen.
set -u

#  1. no target: a clear error and exit 3;
#  2. 1,000 clients held open: `show connections --json` lists exactly the
#     clients CLIENT LIST shows (same remote ports, same fds) plus the
#     listener; --state / --port filters; the stack lock is held briefly;
#  3. stats counters grow by the right order of magnitude while
#     redis-benchmark runs; -r / --watch rates; show config; show nic;
#     set loglevel;
#  3b. ten silent control clients do not delay stackctl; show stats's
#     fds_open / fds_limit; redis's fd limit lowered to its lowest free fd:
#     the thread does not spin, stackctl is told "out of file descriptors"
#     (or, the spare fd above the limit, waits) and is served once restored;
#  4. errors: dead PID, a non-lstack process, an unknown name, several
#     processes, a protocol version mismatch, a second user (socket mode,
#     then the process's SO_PEERCRED check): a clear message, non-zero exit;
#  5. a forked child (BGSAVE) leaves the socket alone; exit removes it;
#  6. lstackd serves the same socket.
# shellcheck disable=SC2034 # T_NAME is read by common.sh
T_NAME=ctl
# shellcheck source=redis_lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/redis_lib.sh"
r_is_lstack || tb_skip "stackctl inspects lstack processes only (LSTACK_TEST_TARGET=$R_TARGET)"
r_init "${1:-}" python3 runuser
SC="$T_BUILD/tools/stackctl"
[[ -x "$SC" ]] || t_fail "stackctl not built: $SC"

# A run dir of our own, reachable (not listable) through the 0700 work dir
# for the second-user checks.
export LSTACK_RUN_DIR="$T_WORK/run"
mkdir -p "$LSTACK_RUN_DIR"
chmod 0711 "$T_WORK"

# sc_expect RC PATTERN ARGS... : stackctl exits RC and says PATTERN on stderr.
SC_OUT=""
sc_expect() {
    local want="$1" pat="$2" rc=0
    shift 2
    SC_OUT=$("$@" 2>&1 >/dev/null) || rc=$?
    if ((rc != want)) || ! grep -qE -- "$pat" <<<"$SC_OUT"; then
        echo "   command: $*"
        echo "   exit $rc (want $want), said: $SC_OUT"
        return 1
    fi
    echo "   exit $rc: $SC_OUT"
}

# jq-less JSON checks: py EXPR FILE prints EXPR evaluated on the document d
# (a number or string as it is, a tuple as Python writes it).
py() {
    python3 -c "import json,sys; d=json.load(open(sys.argv[2])); v=($1); print(v if isinstance(v, (int, str)) else repr(v))" \
        "$1" "$2" 2>&1 || true
}

# --- 1: no target ----------------------------------------------------------
sc_expect 3 "no running lstack process found" "$SC" show stats || t_fail "no target: wrong error"
t_ok "no lstack process: 'no running lstack process found', exit 3"

# --- 2: 1,000 held clients -------------------------------------------------
N=1000
r_conf "$R_CONF" 'tcp_conn_count = 1200;' 'mbuf_count_per_conn = 16;'
# A socket left by a process killed with -9 (a pid that cannot exist):
# the next lstack process removes it when it starts its control socket.
STALE="$LSTACK_RUN_DIR/lstack.999999999.sock"
python3 -c 'import socket,sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])' "$STALE" ||
    t_fail "cannot make a stale socket $STALE"
R_ULIMIT_N=4096 r_start srv lstack --maxclients 2000
r_wait_ready srv || r_fail "redis did not come up"
[[ ! -e "$STALE" ]] || r_fail "the stale control socket of a dead pid was not removed at start"
t_ok "a control socket left by a dead process is removed when the next one starts"
PID=$(r_pid srv)
SOCK="$LSTACK_RUN_DIR/lstack.$PID.sock"
[[ -S "$SOCK" ]] || r_fail "no control socket $SOCK"
mode=$(stat -c %a "$SOCK")
[[ "$mode" == 600 ]] || r_fail "control socket mode $mode, expected 600"
t_ok "redis (pid $PID) serves its control socket $SOCK, mode 600"

"$SC" list >"$T_WORK/list.txt" 2>&1 || r_fail "stackctl list failed: $(cat "$T_WORK/list.txt")"
grep -qE "^ *$PID +redis-server +- +running" "$T_WORK/list.txt" || r_fail "stackctl list: $(cat "$T_WORK/list.txt")"
t_ok "stackctl list shows it"

cat >"$T_WORK/hold.py" <<'EOF'
import socket, sys, time
host, port, n = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
socks = []
for i in range(n):
    s = socket.create_connection((host, port), timeout=10)
    s.sendall(b"PING\r\n")
    socks.append(s)
for s in socks:
    buf = b""
    while not buf.endswith(b"\r\n"):
        chunk = s.recv(64)
        if not chunk:
            sys.exit("closed by the server")
        buf += chunk
print("ports " + " ".join(str(s.getsockname()[1]) for s in socks), flush=True)
print("ready", flush=True)
time.sleep(300)
EOF
ulimit -n 4096 || r_fail "cannot raise the fd limit"
ip netns exec "$TB_NS_CLI" python3 "$T_WORK/hold.py" "$(r_host srv)" "$(r_port srv)" $N >"$T_WORK/hold.log" 2>&1 &
HOLD=$!
R_BG_PIDS+=("$HOLD")
r_wait_log_ready "$HOLD" "$T_WORK/hold.log" || r_fail "the $N clients did not connect: $(tail -n 3 "$T_WORK/hold.log")"
sed -n 's/^ports //p' "$T_WORK/hold.log" | tr ' ' '\n' | sort -n >"$T_WORK/ports.held"
t_ok "$N clients connected and answered (held open)"

# CLIENT LIST from the server ns over 127.0.0.1: its own connection is a
# kernel one, so the stack's clients are exactly the 198.18.0.1 entries.
r_cli_local srv client list >"$T_WORK/clients.txt" || r_fail "CLIENT LIST failed"
grep -o "addr=$TB_IP_CLI:[0-9]* laddr=[^ ]* fd=[0-9]*" "$T_WORK/clients.txt" |
    sed 's/addr=[^:]*:\([0-9]*\) laddr=[^ ]* fd=\([0-9]*\)/\1 \2/' | sort -n >"$T_WORK/clients.redis"
"$SC" -p "$PID" show connections --json >"$T_WORK/conns.json" || r_fail "show connections --json failed"
python3 - "$T_WORK/conns.json" >"$T_WORK/clients.lstack" <<'EOF' || r_fail "show connections --json: bad document"
import json, sys
d = json.load(open(sys.argv[1]))
for c in d["connections"]:
    if c["state"] == "ESTABLISHED":
        print(c["remote"].split(":")[1], c["fd"])
EOF
sort -n -o "$T_WORK/clients.lstack" "$T_WORK/clients.lstack"
nredis=$(wc -l <"$T_WORK/clients.redis")
nlstack=$(wc -l <"$T_WORK/clients.lstack")
((nredis == N)) || r_fail "CLIENT LIST shows $nredis stack clients, expected $N"
if ! diff -q "$T_WORK/clients.redis" "$T_WORK/clients.lstack" >/dev/null; then
    diff "$T_WORK/clients.redis" "$T_WORK/clients.lstack" | head -n 10 | sed 's/^/   | /'
    r_fail "stackctl lists $nlstack established connections; they differ from CLIENT LIST (port fd, above)"
fi
cut -d' ' -f1 "$T_WORK/clients.lstack" | diff -q - "$T_WORK/ports.held" >/dev/null ||
    r_fail "the remote ports differ from the ports the clients hold"
t_ok "show connections --json: exactly CLIENT LIST's $N clients (same remote ports, same fds)"

[[ "$(py 'len(d["listeners"]), d["listeners"][0]["local"], d["listeners"][0]["backlog"]' "$T_WORK/conns.json")" == \
    "(1, '0.0.0.0:6379', 511)" ]] || r_fail "listeners: $(py 'd["listeners"]' "$T_WORK/conns.json")"
pages=$(py 'd["summary"]["pages"]' "$T_WORK/conns.json")
lockus=$(py 'd["summary"]["lock_max_us"]' "$T_WORK/conns.json")
((pages >= (N + 1 + 255) / 256)) || r_fail "$pages pages for $((N + 1)) pcbs of at most 256"
((lockus < 20000)) || r_fail "the stack lock was held $lockus us at once (page of 256)"
t_ok "plus the listener 0.0.0.0:6379 (backlog 511); $pages pages, longest lock hold $lockus us"

"$SC" -p "$PID" show connections >"$T_WORK/conns.txt" || r_fail "show connections (table) failed"
grep -qE "^ +0 +[0-9]+ +198\.18\.0\.2:6379 +198\.18\.0\.1:[0-9]+ +ESTABLISHED " "$T_WORK/conns.txt" ||
    r_fail "table rows: $(sed -n 5,6p "$T_WORK/conns.txt")"
# Exactly the N clients are ESTABLISHED rows; the summary counts every pcb,
# so a connection of the harness still closing (a FIN unacked) may add one.
est=$(grep -cE "^ +0 +[0-9]+ +198\.18\.0\.2:6379 +198\.18\.0\.1:[0-9]+ +ESTABLISHED " "$T_WORK/conns.txt")
((est == N)) || r_fail "table: $est ESTABLISHED rows, expected $N"
grep -qE "^$N connections, 1 listener;|^$((N + 1)) connections, 1 listener;" "$T_WORK/conns.txt" ||
    r_fail "table summary: $(tail -n 2 "$T_WORK/conns.txt")"
t_ok "show connections: aligned table, $N ESTABLISHED rows, summary '$(grep -E '^[0-9]+ connections' "$T_WORK/conns.txt" | cut -d';' -f1)'"

one=$(head -n 1 "$T_WORK/ports.held")
"$SC" -n redis-server show -c --port "$one" --json >"$T_WORK/one.json" || r_fail "--port filter failed"
[[ "$(py 'len(d["connections"]), len(d["listeners"]), d["connections"][0]["remote"]' "$T_WORK/one.json")" == \
    "(1, 0, '$TB_IP_CLI:$one')" ]] || r_fail "--port $one: $(cat "$T_WORK/one.json")"
"$SC" show -c --state listen --json >"$T_WORK/listen.json" || r_fail "--state filter failed"
[[ "$(py 'len(d["connections"]), len(d["listeners"])' "$T_WORK/listen.json")" == "(0, 1)" ]] ||
    r_fail "--state listen: $(head -c 300 "$T_WORK/listen.json")"
sc_expect 2 "--state 'bogus'" "$SC" show -c --state bogus || r_fail "bad --state accepted"
t_ok "filters: --port $one (one connection), --state listen (the listener), a bad state is a usage error"

# --stack N (one stack in this process: stack 0; stack 1 does not exist).
"$SC" show -c --stack 0 --json >"$T_WORK/s0.json" || r_fail "--stack 0 failed"
[[ "$(py 'len([c for c in d["connections"] if c["state"] == "ESTABLISHED"]), len(d["listeners"])' "$T_WORK/s0.json")" == \
    "($N, 1)" ]] || r_fail "--stack 0: $(head -c 300 "$T_WORK/s0.json")"
"$SC" show stats --stack 0 >/dev/null || r_fail "show stats --stack 0 failed"
sc_expect 1 "no stack 1: this process has 1" "$SC" show -c --stack 1 || r_fail "--stack 1 of one stack accepted"
sc_expect 1 "no stack 1: this process has 1" "$SC" show stats --stack 1 || r_fail "stats --stack 1 of one stack accepted"
sc_expect 2 "--stack wants" "$SC" show stats --stack x || r_fail "bad --stack accepted"
t_ok "--stack 0: the stack's $N connections and its listener; --stack 1: 'no stack 1', exit 1"

kill "$HOLD" 2>/dev/null
wait "$HOLD" 2>/dev/null
t_ok "clients released"

# --- 3: stats, rates, config, nic, loglevel --------------------------------
stat_of() { py "d['total']['$1'] if '$1' in d['total'] else d['app']['$1']" "$2"; }
"$SC" -p "$PID" show stats --json >"$T_WORK/s0.json" || r_fail "show stats --json failed"
REQ=20000
r_bench srv -c 50 -n $REQ -t set,get || r_fail "redis-benchmark"
"$SC" -p "$PID" show stats --json >"$T_WORK/s1.json" || r_fail "show stats --json failed"
total_req=$((2 * REQ))
bad=0
for k in rx_packets tx_packets reads writes; do
    d=$(($(stat_of $k "$T_WORK/s1.json") - $(stat_of $k "$T_WORK/s0.json")))
    echo "   $k +$d for $total_req requests"
    ((d >= total_req / 2 && d <= total_req * 10)) || bad=1
done
for k in rx_bytes tx_bytes; do
    d=$(($(stat_of $k "$T_WORK/s1.json") - $(stat_of $k "$T_WORK/s0.json")))
    echo "   $k +$d"
    ((d >= total_req * 10 && d <= total_req * 2000)) || bad=1
done
acc=$(($(stat_of conn_accepted "$T_WORK/s1.json") - $(stat_of conn_accepted "$T_WORK/s0.json")))
ew=$(($(stat_of epoll_waits "$T_WORK/s1.json") - $(stat_of epoll_waits "$T_WORK/s0.json")))
echo "   conn_accepted +$acc (2 tests x 50 clients), epoll_waits +$ew"
# One epoll_wait may return all 50 clients' requests: at least 1 wait per 100.
((acc >= 100 && acc <= 300 && ew >= total_req / 100 && ew <= total_req * 10)) || bad=1
((bad == 0)) || r_fail "stats counters did not grow as the benchmark did (above)"
t_ok "show stats: packets, bytes, reads, writes, accepts, epoll waits grow with the benchmark"

# The poll rounds over the benchmark: busy rounds, their frames (those the
# port gave but multi-segment drops), busy time per request within reason, the runtime.
rounds_d() { echo $(($(stat_of "$1" "$T_WORK/s1.json") - $(stat_of "$1" "$T_WORK/s0.json"))); }
busy=$(rounds_d rounds_busy)
rxf=$(rounds_d rounds_rx_frames)
rxp=$(rounds_d rx_packets)
txf=$(rounds_d rounds_tx_frames)
bcyc=$(rounds_d rounds_busy_cycles)
hz=$(stat_of tsc_hz "$T_WORK/s1.json")
us_per_req=$(python3 -c "print(f'{$bcyc / $hz * 1e6 / $total_req:.2f}' if $hz else 'none')")
echo "   rounds_busy +$busy, rounds_rx_frames +$rxf (rx_packets +$rxp), rounds_tx_frames +$txf," \
    "busy ${us_per_req} us per request (tsc_hz $hz)"
[[ "$(py '[k in d["runtime"]["total"] for k in ("busy_pct", "rounds_per_s", "cycles_per_frame")]' "$T_WORK/s1.json")" == \
    "[True, True, True]" ]] || r_fail "show stats --json: no runtime: $(head -c 300 "$T_WORK/s1.json")"
((busy > 0 && rxf <= rxp && rxf >= rxp * 99 / 100 && txf >= total_req / 2 && hz > 100000000)) ||
    r_fail "poll rounds did not count the benchmark's frames (above)"
python3 -c "import sys; sys.exit(0 if 0.05 <= $us_per_req <= 10000 else 1)" ||
    r_fail "busy time per request $us_per_req us is not plausible"
t_ok "show stats: busy rounds, the received frames counted by the rounds, busy time $us_per_req us/request"

# Issue 11: the time inside the port's tx bursts (the af_xdp kick and the
# kernel work it runs here) is counted, and is a part of the busy time.
txc=$(rounds_d tx_burst_cycles)
echo "   tx_burst_cycles +$txc of rounds_busy_cycles +$bcyc"
((txc > 0 && txc < bcyc)) || r_fail "tx_burst_cycles +$txc is not a part of the busy time +$bcyc"
t_ok "show stats: tx burst time counted, a part of the busy time"
txb=$(rounds_d tx_bursts)
txp=$(rounds_d tx_packets)
echo "   tx_bursts +$txb for tx_packets +$txp"
((txb > 0 && txb <= txp)) || r_fail "tx_bursts +$txb: not between 1 and the frames sent +$txp"
t_ok "show stats: tx bursts counted, at most one per frame sent"

"$SC" -p "$PID" show stats >"$T_WORK/stats.txt" 2>"$T_WORK/sc.err" || r_fail "show stats (table) failed: $(cat "$T_WORK/sc.err")"
grep -qE "^COUNTER +STACK 0 +TOTAL$" "$T_WORK/stats.txt" && grep -qE "^reads +[0-9]+$" "$T_WORK/stats.txt" ||
    r_fail "stats table: $(head -n 3 "$T_WORK/stats.txt")"
r_bench_bg srv "$T_WORK/bg.log" -c 20 -n 400000 -t ping
BG=$R_BG_PID
"$SC" -p "$PID" show stats --watch 1 --count 2 --json >"$T_WORK/rates.json" || r_fail "--watch failed"
"$SC" -p "$PID" show -r --count 1 >"$T_WORK/rates.txt" || r_fail "-r failed"
kill "$BG" 2>/dev/null
wait "$BG" 2>/dev/null
[[ $(wc -l <"$T_WORK/rates.json") == 2 ]] || r_fail "--watch 1 --count 2: $(cat "$T_WORK/rates.json")"
rx=$(tail -n 1 "$T_WORK/rates.json" | python3 -c 'import json,sys; print(int(json.load(sys.stdin)["rates"]["rx_packets"]))')
((rx > 1000)) || r_fail "rx_packets rate $rx/s while redis-benchmark runs"
grep -qE "^TIME +RX_PPS .* ROUNDS/S +BUSY% +FR/BUSY +CYC/FRAME +LOCKWAIT%$" "$T_WORK/rates.txt" ||
    r_fail "-r table: $(cat "$T_WORK/rates.txt")"
grep -qE "^RUNTIME \(since start\) +STACK 0 +TOTAL$" "$T_WORK/stats.txt" && grep -qE "^busy % +[0-9.]+ +[0-9.]+$" "$T_WORK/stats.txt" &&
    grep -qE "^lock wait % +[0-9.]+ +[0-9.]+$" "$T_WORK/stats.txt" ||
    r_fail "stats table: no runtime table: $(grep -A7 RUNTIME "$T_WORK/stats.txt")"
t_ok "stats table and its runtime table (lock wait too); --watch 1 --count 2 --json: 2 reports ($rx rx packets/s under load); -r table with the rounds"

"$SC" -p "$PID" show config --json >"$T_WORK/conf.json" || r_fail "show config --json failed"
[[ "$(py 'd["keys"]["tcp_conn_count"], d["keys"]["host_addr"], d["path"]' "$T_WORK/conf.json")" == \
    "(1200, '$TB_IP_STACK', '$R_CONF')" ]] || r_fail "show config: $(head -c 400 "$T_WORK/conf.json")"
"$SC" -p "$PID" show config | grep -q '^nic_rxqueue_size = 4096$' || r_fail "show config: no default nic_rxqueue_size"
t_ok "show config: set keys and defaults (tcp_conn_count 1200, nic_rxqueue_size 4096)"

"$SC" -p "$PID" show nic --json >"$T_WORK/nic.json" || r_fail "show nic --json failed"
[[ "$(py 'd["ports"][0]["port"]["driver"], d["ports"][0]["link"]["status"], d["ports"][0]["xstats"]["rx_good_packets"] > 0' "$T_WORK/nic.json")" == \
    "('net_af_packet', 'up', True)" ]] || r_fail "show nic: $(head -c 400 "$T_WORK/nic.json")"
t_ok "show nic: driver net_af_packet, link up, xstats"

"$SC" -p "$PID" set loglevel debug >"$T_WORK/ll.txt" || r_fail "set loglevel debug failed"
grep -q -- "-> debug" "$T_WORK/ll.txt" || r_fail "set loglevel: $(cat "$T_WORK/ll.txt")"
[[ "$(py 'd["log_level_now"]' <("$SC" -p "$PID" show config --json))" == debug ]] || r_fail "log level not debug"
"$SC" -p "$PID" set loglevel info >/dev/null || r_fail "set loglevel info failed"
sc_expect 2 "log level 'loud'" "$SC" -p "$PID" set loglevel loud || r_fail "bad level accepted"
t_ok "set loglevel debug, then info, at run time; a bad level is a usage error"

# --- 3b: floods and shortage of the control socket --------------------------
# Ten clients that connect and say nothing do not delay stackctl (they used
# to cost 2 s each); fds_open / fds_limit are the process's; with redis's fd
# limit lowered to its lowest free fd (every new fd fails with EMFILE), the
# control thread does not spin.
cat >"$T_WORK/silent.py" <<'EOF'
import socket, sys, time
socks = []
for i in range(int(sys.argv[2])):
    s = socket.socket(socket.AF_UNIX)
    s.connect(sys.argv[1])
    socks.append(s)
print("ready", flush=True)
time.sleep(60)
EOF
python3 "$T_WORK/silent.py" "$SOCK" 10 >"$T_WORK/silent.log" 2>&1 &
SILENT=$!
R_BG_PIDS+=("$SILENT")
for ((i = 0; i < 50; i++)); do grep -q ready "$T_WORK/silent.log" 2>/dev/null && break; sleep 0.1; done
t0=$(date +%s%N)
"$SC" -p "$PID" show stats >/dev/null 2>"$T_WORK/sc.err" || r_fail "show stats behind 10 silent clients failed: $(cat "$T_WORK/sc.err")"
ms=$((($(date +%s%N) - t0) / 1000000))
kill "$SILENT" 2>/dev/null
wait "$SILENT" 2>/dev/null
((ms < 1000)) || r_fail "show stats behind 10 silent control clients took $ms ms"
t_ok "10 silent clients on the control socket: show stats answered in $ms ms"

"$SC" -p "$PID" show stats --json >"$T_WORK/s2.json" || r_fail "show stats --json failed"
fds_open=$(py 'd["app"]["fds_open"]' "$T_WORK/s2.json")
fds_limit=$(py 'd["app"]["fds_limit"]' "$T_WORK/s2.json")
fds_now=$(find "/proc/$PID/fd" -mindepth 1 | wc -l)
if [[ "$fds_limit" != 4096 ]] || ((fds_open <= 10 || fds_open > fds_now + 2 || fds_open < fds_now - 2)); then
    r_fail "fds_open $fds_open (/proc says $fds_now), fds_limit $fds_limit (redis runs with ulimit -n 4096)"
fi
"$SC" -p "$PID" show stats | grep -qE "^fds_limit +4096$" || r_fail "show stats table: no fds_limit 4096"
t_ok "show stats: fds_open $fds_open (/proc/$PID/fd: $fds_now), fds_limit 4096"

# ctl_cpu_ms: utime + stime of redis's lstack-ctl thread, in ms (-1: not found).
ctl_cpu_ms() {
    local t
    for t in /proc/"$PID"/task/*; do
        [[ "$(cat "$t/comm" 2>/dev/null)" == lstack-ctl ]] || continue
        awk -v hz="$(getconf CLK_TCK)" '{ sub(/^.*\) /, ""); print int(($12 + $13) * 1000 / hz) }' "$t/stat"
        return
    done
    echo -1
}
# fd_layout: "SPARE LOWEST_FREE" of redis: the control thread's spare fd
# (its /dev/null, the highest-numbered one) and the lowest free number.
fd_layout() {
    python3 - "$PID" <<'EOF'
import os, sys
d = "/proc/%s/fd" % sys.argv[1]
used, nulls = set(), []
for f in os.listdir(d):
    used.add(int(f))
    try:
        if os.readlink(os.path.join(d, f)) == "/dev/null":
            nulls.append(int(f))
    except OSError:
        pass
print(max(nulls) if nulls else -1, min(set(range(len(used) + 1)) - used))
EOF
}
# The soft limit at the lowest free number: every new fd fails with EMFILE.
# If the spare is below it (every number below the limit taken, as at a real
# fd limit), stackctl is told why at once; if it is above (a hole below the
# spare: redis's fds here have one), nothing can be accepted and stackctl
# waits, unanswered, until the limit is restored. Either way the thread must
# not spin.
read -r spare low <<<"$(fd_layout)"
prlimit --pid "$PID" --nofile="$low:4096" || r_fail "prlimit"
c0=$(ctl_cpu_ms)
t0=$(date +%s%N)
if ((spare >= 0 && spare < low)); then
    what="the spare fd $spare is below it: stackctl told 'out of file descriptors'"
    ok=1
    sc_expect 1 "cannot serve the request: out of file descriptors: [0-9]+ open, limit $low \(RLIMIT_NOFILE\)" \
        "$SC" -p "$PID" --timeout 3 show stats || ok=0
else
    what="the spare fd $spare is above it: stackctl waited, unanswered"
    ok=1
    sc_expect 1 "did not greet: no answer within 2000 ms" "$SC" -p "$PID" --timeout 2 show stats || ok=0
fi
ms=$((($(date +%s%N) - t0) / 1000000))
sleep 1
c1=$(ctl_cpu_ms)
prlimit --pid "$PID" --nofile=4096:4096 || r_fail "prlimit (restore)"
((ok == 1)) || r_fail "fd limit $low: $what - not so (above)"
((c0 >= 0 && c1 - c0 < 200)) || r_fail "out of fds: lstack-ctl used $((c1 - c0)) ms of CPU in $((ms / 1000 + 1)) s"
"$SC" -p "$PID" show stats >/dev/null || r_fail "show stats after the fd limit was restored"
[[ "$(r_cli srv ping)" == PONG ]] || r_fail "redis does not answer after its fd limit was restored"
t_ok "fd limit lowered to $low; $what ($ms ms); lstack-ctl used $((c1 - c0)) ms CPU; served again once restored"

# --- 4: errors ---------------------------------------------------------------
sleep 0 &
dead=$!
wait "$dead"
sc_expect 3 "no process with PID $dead" "$SC" -p "$dead" show || r_fail "dead PID"
sc_expect 3 "process $$ \(.*\) is not an lstack process" "$SC" -p $$ show || r_fail "non-lstack PID"
sc_expect 3 "no running lstack process is named 'nosuch'" "$SC" -n nosuch show || r_fail "unknown name"
t_ok "dead PID, non-lstack process, unknown name: clear errors, exit 3"

# A fake server that speaks protocol version 99, and a leftover socket of a
# dead process: the fake makes two live processes, the leftover is ignored.
cat >"$T_WORK/fake.py" <<'EOF'
import os, socket, sys
path = os.path.join(sys.argv[1], "lstack.%d.sock" % os.getpid())
s = socket.socket(socket.AF_UNIX)
s.bind(path)
s.listen(4)
print("up", flush=True)
while True:
    c, _ = s.accept()
    c.sendall(b'{"type":"hello","proto":"lstack-ctl","version":99,"pid":%d,"prog":"fake","lstack":"9.9"}\n' % os.getpid())
    c.close()
EOF
python3 "$T_WORK/fake.py" "$LSTACK_RUN_DIR" >"$T_WORK/fake.log" 2>&1 &
FAKE=$!
R_BG_PIDS+=("$FAKE")
for ((i = 0; i < 50; i++)); do grep -q up "$T_WORK/fake.log" && break; sleep 0.1; done
python3 -c "import socket,sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])" "$LSTACK_RUN_DIR/lstack.$dead.sock"
sc_expect 3 "several lstack processes are running: " "$SC" show || r_fail "several processes"
grep -q "$PID (redis-server)" <<<"$SC_OUT" && grep -q "$FAKE (python3)" <<<"$SC_OUT" ||
    r_fail "several processes: both should be named"
sc_expect 5 "protocol version mismatch: process $FAKE .* version 99" "$SC" -p "$FAKE" show || r_fail "version"
"$SC" -n redis-server show >/dev/null || r_fail "-n redis-server with a fake and a leftover around"
"$SC" list | grep -qE "^ *$dead +- +- +gone" || r_fail "list: the leftover socket is not marked gone"
kill "$FAKE" 2>/dev/null
wait "$FAKE" 2>/dev/null
rm -f "$LSTACK_RUN_DIR/lstack.$FAKE.sock" "$LSTACK_RUN_DIR/lstack.$dead.sock"
t_ok "several processes: exit 3; protocol version 99: exit 5; a leftover socket is ignored"

sc_expect 4 "permission denied: cannot connect to .*uid 0.*uid 65534" \
    runuser -u nobody -- "$SC" -p "$PID" show stats || r_fail "second user (socket mode)"
chmod 0666 "$SOCK"
sc_expect 4 "permission denied: process $PID runs as uid 0; uid 65534 may not inspect it" \
    runuser -u nobody -- "$SC" -p "$PID" show stats || r_fail "second user (SO_PEERCRED)"
chmod 0600 "$SOCK"
t_ok "a second user (nobody): permission denied by the socket's mode, and by SO_PEERCRED, exit 4"

# --- 5: fork and exit --------------------------------------------------------
r_cli srv bgsave >/dev/null || r_fail "BGSAVE failed"
for ((i = 0; i < 100; i++)); do
    [[ "$(r_info srv rdb_bgsave_in_progress)" == 0 ]] && break
    sleep 0.1
done
[[ "$(r_info srv rdb_last_bgsave_status)" == ok ]] || r_fail "BGSAVE did not complete"
[[ -S "$SOCK" ]] || r_fail "the control socket is gone after a forked child exited"
"$SC" -p "$PID" show stats >/dev/null || r_fail "stackctl after BGSAVE"
t_ok "after a BGSAVE child exited: the socket is still there and answers"
r_stop srv term || r_fail "redis did not exit cleanly"
[[ ! -e "$SOCK" ]] || r_fail "the control socket is left after exit"
t_ok "redis exited 0; its control socket is removed"

# --- 6: lstackd ----------------------------------------------------------------
tb_write_conf "$T_WORK/lstackd.conf"
tb_start_lstackd "$T_BUILD/tools/lstackd" "$T_WORK/lstackd.conf" "$T_WORK/lstackd.log" ||
    r_fail "lstackd did not start"
"$SC" -n lstackd show stats --json >"$T_WORK/d.json" || r_fail "stackctl -n lstackd show stats"
[[ "$(py 'd["prog"], d["total"]["mbuf_total"] > 0' "$T_WORK/d.json")" == "('lstackd', True)" ]] ||
    r_fail "lstackd stats: $(head -c 300 "$T_WORK/d.json")"
"$SC" -n lstackd show -c >/dev/null || r_fail "stackctl -n lstackd show -c"
LPID=$TB_LSTACKD_PID
kill -USR1 "$LPID"
for ((i = 0; i < 50; i++)); do
    grep -q '^lstackd: runtime rounds=[1-9]' "$T_WORK/lstackd.log" && break
    sleep 0.1
done
grep -qE '^lstackd: runtime rounds=[1-9][0-9]* .* busy_pct=[0-9.]+ ' "$T_WORK/lstackd.log" ||
    r_fail "lstackd SIGUSR1: no runtime line: $(tail -n 2 "$T_WORK/lstackd.log")"
tb_stop_lstackd || r_fail "lstackd did not stop cleanly"
[[ ! -e "$LSTACK_RUN_DIR/lstack.$LPID.sock" ]] || r_fail "lstackd left its control socket"
t_ok "lstackd serves the same control socket and removes it at exit"

r_pass
