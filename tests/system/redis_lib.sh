# shellcheck shell=bash
# Shared by the redis system tests and scripts/demo.sh (sourced, never run):
# redis-server in the server namespace, either under lstack (LD_PRELOAD,
# served on the stack's address 198.18.0.2) or on the kernel (no preload,
# served on the kernel address 198.18.0.3 added by tb_add_kernel_addr), with
# the same flags; redis-cli / redis-benchmark from the client namespace.

# Usage in a test:
#   T_NAME=rfoo; source redis_lib.sh; r_init "$1"
#   r_conf "$T_WORK/lstack.conf" 'tcp_conn_count = 1200;'   # optional
#   r_start srv "$R_TARGET" --maxclients 2000                # main shell only
#   r_wait_ready srv || r_fail "..."
#   r_bench srv -c 50 -n 1000 || r_fail "..."
#   r_stop srv term || r_fail "..."
#
# Which server the tests talk to: LSTACK_TEST_TARGET=lstack (default) or
# kernel. "kernel" runs the very same checks against a kernel redis, which is
# how the harness itself is validated: a check that fails on the kernel is a
# broken check, not an lstack bug. Checks that only make sense under lstack
# (hugepages, tcp_conn_count, ...) adapt or skip themselves (r_is_lstack).
#
# Environment:
#   LSTACK_TEST_TARGET   lstack | kernel (default lstack)
#   LSTACK_PRELOAD       the preload library (default BUILD/lstack/liblstack.so)
#   LSTACK_PRELOAD_EXTRA libraries preloaded before it (default: the ASan
#                        runtime of a sanitizer build; see tests/preload_env.sh)
#   T_KEEP_LOG=1         keep the work dir (logs, redis dirs) after the test

# shellcheck source=common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

R_TARGET="${LSTACK_TEST_TARGET:-lstack}"
R_PORT_LSTACK=6379
R_PORT_KERNEL=6380
R_LIB=""
R_PRELOAD="" # LD_PRELOAD for a process under lstack: R_LIB, after what it needs first
R_CONF=""
# shellcheck disable=SC2034 # R_HOST / R_PORT: for the tests that source this
R_HOST=""
R_PORT=""
R_PY="$T_HERE/redis_resp.py"
R_NAMES=()
declare -A R_PID=() R_KIND=() R_DIR=() R_OUT=() R_HOSTOF=() R_PORTOF=() R_PIDFILE=()

r_is_lstack() { [[ "$R_TARGET" == lstack ]]; }

# r_fail MSG : fail the test, with the tail of every redis log started so far.
r_fail() {
    local n
    echo "FAIL: $*"
    for n in "${R_NAMES[@]}"; do
        r__dump_logs "$n"
    done
    exit 1
}

# r_soft_fail MSG : a failed check after which the test can go on (the
# following checks do not depend on it): reported now, and r_pass fails.
R_SOFT_FAILS=0
r_soft_fail() {
    R_SOFT_FAILS=$((R_SOFT_FAILS + 1))
    echo "not ok: $*"
}

# r_pass : pass, unless a soft check failed.
r_pass() {
    if ((R_SOFT_FAILS > 0)); then
        local n
        echo "FAIL: $(basename "$0"): $R_SOFT_FAILS check(s) failed (see 'not ok' above)"
        for n in "${R_NAMES[@]}"; do
            r__dump_logs "$n"
        done
        exit 1
    fi
    t_pass
}

r__dump_logs() {
    local n="$1" f
    for f in "${R_OUT[$n]}" "${R_DIR[$n]}/redis.log"; do
        [[ -s "$f" ]] || continue
        echo "--- $n: $f (last 25 lines) ---"
        tail -n 25 "$f" | sed 's/^/  | /'
    done
}

# r_bed_init BUILD_DIR [TOOL...] : skip unless root and the tools are there;
# bring the bed up with a cleanup trap; write a default lstack.conf
# ($R_CONF: tcp_conn_count 1024, else the bed's defaults); for the kernel
# target add the kernel address. Sets R_HOST /
# R_PORT (the target's address and redis port). Used by r_init and test_sem.sh.
r_bed_init() {
    local build="${1:-}"
    shift
    tb_require_root
    tb_require_tools ip ethtool sysctl timeout "$@"
    [[ -n "$build" ]] || { echo "usage: $0 BUILD_DIR"; exit 2; }
    T_BUILD="$(cd "$build" 2>/dev/null && pwd)" || t_fail "build dir '$build' not found"
    case "$R_TARGET" in
    lstack)
        R_LIB="${LSTACK_PRELOAD:-$T_BUILD/lstack/liblstack.so}"
        [[ -f "$R_LIB" ]] || t_fail "preload library not built: $R_LIB"
        R_PRELOAD=$(preload_list "$R_LIB")
        R_HOST="$TB_IP_STACK"
        # shellcheck disable=SC2034 # read by the tests
        R_PORT="$R_PORT_LSTACK"
        ;;
    kernel)
        R_HOST="$TB_IP_KERNEL"
        # shellcheck disable=SC2034 # read by the tests
        R_PORT="$R_PORT_KERNEL"
        ;;
    *) t_fail "LSTACK_TEST_TARGET='$R_TARGET': expected lstack or kernel" ;;
    esac
    [[ -d /sys/kernel/mm/hugepages/hugepages-2048kB ]] || tb_skip "no 2 MiB hugepage support in this kernel"
    if [[ "$R_TARGET" == lstack && "$TB_PMD" == af_xdp ]]; then
        local why
        why=$(tb_af_xdp_ok) || tb_skip "$why"
    fi

    T_WORK="$(mktemp -d "/tmp/lstack-test-${LSTACK_TB}.XXXXXX")"
    tb_on_cleanup 'r__cleanup'
    tb_on_cleanup 't__cleanup_work'
    tb_trap_cleanup
    echo "== $(basename "$0"): target $R_TARGET ($R_HOST), bed '$LSTACK_TB', net_$TB_PMD"
    tb_up || t_fail "test bed did not come up"
    if ! r_is_lstack; then
        tb_add_kernel_addr || t_fail "cannot add the kernel address"
    fi
    # Thousands of short benchmark connections, each leaving a TIME_WAIT on
    # the client side (it closes first): give the client every port there is.
    ip netns exec "$TB_NS_CLI" sysctl -qw net.ipv4.ip_local_port_range="1024 65535" ||
        t_fail "cannot widen the client's ephemeral port range"
    # Room for clients that reconnect while their old connections still wait
    # for the application's close() (they count against tcp_conn_count).
    R_CONF="$T_WORK/lstack.conf"
    r_conf "$R_CONF" 'tcp_conn_count = 1024;'
}

# r_init BUILD_DIR [TOOL...] : r_bed_init for the redis tests.
r_init() {
    local build="${1:-}"
    shift
    r_bed_init "$build" redis-server redis-cli redis-benchmark "$@"
}

# r_conf FILE [LINE...] : a test-bed lstack.conf (tb_write_conf) where a failing
# init stops the process (init_fail = "exit"): a redis that silently fell
# back to the kernel must never pass a test meant for the stack.
r_conf() {
    local file="$1" l has=0
    shift
    for l in "$@"; do
        [[ "${l//[[:space:]]/}" == init_fail=* ]] && has=1
    done
    if ((has)); then
        tb_write_conf "$file" "$@"
    else
        tb_write_conf "$file" 'init_fail = "exit";' "$@"
    fi
}

# r__cmd KIND : the command prefix that runs redis-server of KIND in the server ns.
r__cmd() {
    if [[ "$1" == lstack ]]; then
        echo ip netns exec "$TB_NS_SRV" env LD_PRELOAD="$R_PRELOAD" GAZELLE_BIND_PROCNAME=redis-server \
            LSTACK_CONF_PATH="$R_CONF" redis-server
    else
        echo ip netns exec "$TB_NS_SRV" redis-server
    fi
}

# r__setup NAME KIND : bookkeeping shared by r_start and r_start_daemon.
r__setup() {
    local name="$1" kind="$2"
    [[ "$kind" == lstack || "$kind" == kernel ]] || r_fail "r_start: kind '$kind' is not lstack or kernel"
    [[ -z "${R_PID[$name]:-}" ]] || r_fail "redis '$name' already started (pid ${R_PID[$name]})"
    if [[ "$kind" == lstack ]]; then
        [[ -n "$R_LIB" && -f "$R_LIB" ]] || R_LIB="${LSTACK_PRELOAD:-$T_BUILD/lstack/liblstack.so}"
        [[ -f "$R_LIB" ]] || r_fail "preload library not built: $R_LIB"
        [[ -n "$R_PRELOAD" ]] || R_PRELOAD=$(preload_list "$R_LIB")
        R_HOSTOF[$name]="$TB_IP_STACK"
        R_PORTOF[$name]="$R_PORT_LSTACK"
    else
        tb_add_kernel_addr >/dev/null 2>&1 || r_fail "cannot add the kernel address"
        R_HOSTOF[$name]="$TB_IP_KERNEL"
        R_PORTOF[$name]="$R_PORT_KERNEL"
    fi
    R_KIND[$name]="$kind"
    R_DIR[$name]="$T_WORK/redis-$name"
    R_OUT[$name]="$T_WORK/redis-$name/stdout.log"
    rm -rf "${R_DIR[$name]}"
    mkdir -p "${R_DIR[$name]}"
    R_NAMES+=("$name")
}

# r__flags NAME : the flags every redis gets, kernel or lstack alike, into
# R_FLAGS (later args override them).
R_FLAGS=()
r__flags() {
    local name="$1"
    R_FLAGS=(--port "${R_PORTOF[$name]}" --bind 0.0.0.0 --protected-mode no
        --save "" --appendonly no --dir "${R_DIR[$name]}"
        --logfile "${R_DIR[$name]}/redis.log" --loglevel notice)
}

# r_start NAME KIND [REDIS ARGS...] : start redis-server in the server ns, in
# the background, as a child of this shell (call it from the main shell, not
# inside $(...)). KIND: lstack or kernel. R_ULIMIT_N, if set, is the fd limit.
r_start() {
    local name="$1" kind="$2"
    shift 2
    r__setup "$name" "$kind"
    local -a cmd
    read -r -a cmd <<<"$(r__cmd "$kind")"
    r__flags "$name"
    (
        [[ -z "${R_ULIMIT_N:-}" ]] || ulimit -n "$R_ULIMIT_N" || exit 111
        # `ip netns exec` and `env` exec: $! below is redis-server's own PID.
        exec "${cmd[@]}" "${R_FLAGS[@]}" --daemonize no "$@"
    ) >"${R_OUT[$name]}" 2>&1 &
    R_PID[$name]=$!
    echo "   started redis '$name' ($kind, ${R_HOSTOF[$name]}:${R_PORTOF[$name]}) pid ${R_PID[$name]}"
}

# r_start_daemon NAME KIND [REDIS ARGS...] : same with `daemonize yes`: the
# launcher exits at once; the daemon's PID comes from its pidfile.
r_start_daemon() {
    local name="$1" kind="$2" i rc=0
    shift 2
    r__setup "$name" "$kind"
    R_PIDFILE[$name]="${R_DIR[$name]}/redis.pid"
    local -a cmd
    read -r -a cmd <<<"$(r__cmd "$kind")"
    r__flags "$name"
    timeout 30 "${cmd[@]}" "${R_FLAGS[@]}" --daemonize yes --pidfile "${R_PIDFILE[$name]}" "$@" \
        >"${R_OUT[$name]}" 2>&1 || rc=$?
    ((rc == 0)) || r_fail "redis '$name' (daemonize yes): launcher exited with status $rc"
    for ((i = 0; i < 300; i++)); do
        [[ -s "${R_PIDFILE[$name]}" ]] && break
        sleep 0.1
    done
    [[ -s "${R_PIDFILE[$name]}" ]] || r_fail "redis '$name' (daemonize yes): no pidfile after 30 s"
    R_PID[$name]=$(tr -dc 0-9 <"${R_PIDFILE[$name]}")
    echo "   started redis '$name' ($kind, daemonized, ${R_HOSTOF[$name]}:${R_PORTOF[$name]}) pid ${R_PID[$name]}"
}

r_pid() { echo "${R_PID[$1]:-}"; }
r_host() { echo "${R_HOSTOF[$1]}"; }
r_port() { echo "${R_PORTOF[$1]}"; }
r_dir() { echo "${R_DIR[$1]}"; }

# r_alive NAME : the process runs (not a zombie).
r_alive() {
    local pid="${R_PID[$1]:-}"
    [[ -n "$pid" ]] && tb_running "$pid"
}

# r_cli NAME ARGS... : redis-cli from the client ns to NAME (30 s bound).
r_cli() {
    local name="$1"
    shift
    ip netns exec "$TB_NS_CLI" timeout 30 redis-cli -h "${R_HOSTOF[$name]}" -p "${R_PORTOF[$name]}" "$@"
}

# r_pipe_roundtrip NAME PREFIX N WIDTH : N SETs of PREFIX:i to value-i-<i
# zero-padded to WIDTH digits> through one redis-cli --pipe from the client
# ns, then each read back by a redis-cli of its own (a connection each).
# Prints how many differ; 1 if any does or the pipe failed.
# r_wait_log_ready PID LOG: wait up to 60 s for a line "ready" in LOG, written
# by background process PID (a client holding connections); true once it is
# there, false if PID exits first or the time runs out.
r_wait_log_ready() {
    local pid=$1 log=$2 i
    for ((i = 0; i < 600; i++)); do
        grep -q '^ready' "$log" 2>/dev/null && return 0
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.1
    done
    grep -q '^ready' "$log" 2>/dev/null
}

r_pipe_roundtrip() {
    local name="$1" prefix="$2" n="$3" width="$4" i v bad=0
    for i in $(seq 1 "$n"); do
        printf 'SET %s:%d value-%d-%0*d\r\n' "$prefix" "$i" "$i" "$width" "$i"
    done | ip netns exec "$TB_NS_CLI" timeout 30 redis-cli -h "${R_HOSTOF[$name]}" -p "${R_PORTOF[$name]}" \
        --pipe >/dev/null 2>&1 || { echo "   redis-cli --pipe of $n SETs failed"; return 1; }
    for i in $(seq 1 "$n"); do
        v=$(r_cli "$name" get "$prefix:$i")
        [[ "$v" == "value-$i-$(printf '%0*d' "$width" "$i")" ]] || bad=$((bad + 1))
    done
    ((bad == 0)) || { echo "   $bad of $n values read back differ from what was written"; return 1; }
}

# r_cli_local NAME ARGS... : redis-cli inside the server ns, to 127.0.0.1.
r_cli_local() {
    local name="$1"
    shift
    ip netns exec "$TB_NS_SRV" timeout 30 redis-cli -h 127.0.0.1 -p "${R_PORTOF[$name]}" "$@"
}

# r_info NAME FIELD : one field of INFO (all sections), from the client ns.
r_info() {
    r_cli "$1" info everything 2>/dev/null | tr -d '\r' | sed -n "s/^$2://p" | head -n 1
}

# r__check_mode LOG : with LSTACK_TEST_STACK_MODE set, a stack
# that says it is up in LOG must say it runs in that mode, and with
# LSTACK_TEST_STACKS=N (N > 1) that it runs N stacks.
r__check_mode() {
    local log="$1" up
    [[ -n "${LSTACK_TEST_STACK_MODE:-}" && -f "$log" ]] || return 0
    up=$(grep -m1 'stack up on' "$log") || return 0
    if [[ "$up" != *"($LSTACK_TEST_STACK_MODE)"* ]]; then
        echo "   the stack does not run in $LSTACK_TEST_STACK_MODE: $up"
        return 1
    fi
    if [[ "${LSTACK_TEST_STACKS:-1}" -gt 1 && "$up" != *"; $LSTACK_TEST_STACKS stacks"* ]]; then
        echo "   the process does not run $LSTACK_TEST_STACKS stacks: $up"
        return 1
    fi
    return 0
}

# r_wait_ready NAME [TIMEOUT_S] : until PING answers PONG from the client ns.
r_wait_ready() {
    local name="$1" timeout="${2:-60}" i out
    for ((i = 0; i < timeout * 5; i++)); do
        out=$(ip netns exec "$TB_NS_CLI" timeout 2 redis-cli -h "${R_HOSTOF[$name]}" -p "${R_PORTOF[$name]}" ping 2>&1)
        if [[ "$out" == PONG ]]; then
            echo "   redis '$name' answers PING at ${R_HOSTOF[$name]}:${R_PORTOF[$name]} after ~$((i / 5)) s"
            r__check_mode "${R_OUT[$name]}" || return 1
            return 0
        fi
        if ! r_alive "$name"; then
            echo "   redis '$name' (pid ${R_PID[$name]}) exited before answering PING"
            return 1
        fi
        sleep 0.2
    done
    echo "   redis '$name' did not answer PING within ${timeout}s (last: $out)"
    return 1
}


# r_stop NAME [term|shutdown|kill] : stop redis; for term and shutdown the exit
# status must be 0 (for a daemon: the process must be gone). 30 s bound, then
# SIGKILL and failure. Prints why on failure.
r_stop() {
    local name="$1" how="${2:-term}" pid rc=0 daemon=0 cli_rc=0
    pid="${R_PID[$name]:-}"
    [[ -n "$pid" ]] || return 0
    [[ -n "${R_PIDFILE[$name]:-}" ]] && daemon=1
    case "$how" in
    term) kill -TERM "$pid" 2>/dev/null || true ;;
    kill) kill -KILL "$pid" 2>/dev/null || true ;;
    shutdown)
        # redis-cli returns when the server closes the connection (on exit).
        local out
        out=$(ip netns exec "$TB_NS_CLI" timeout 10 redis-cli -h "${R_HOSTOF[$name]}" -p "${R_PORTOF[$name]}" \
            shutdown 2>&1) || cli_rc=$?
        [[ -z "$out" ]] || echo "   redis-cli shutdown said: $out"
        ;;
    *) r_fail "r_stop: unknown way '$how'" ;;
    esac
    if ! tb_wait_gone "$pid" 30; then
        echo "   redis '$name' (pid $pid) still running 30 s after '$how': SIGKILL"
        kill -KILL "$pid" 2>/dev/null || true
        tb_wait_gone "$pid" 5 || true
        ((daemon)) || wait "$pid" 2>/dev/null || true
        R_PID[$name]=""
        return 1
    fi
    if ((daemon)); then
        R_PID[$name]=""
        return 0
    fi
    wait "$pid" 2>/dev/null || rc=$?
    R_PID[$name]=""
    [[ "$how" == kill ]] && return 0
    if ((rc != 0)); then
        echo "   redis '$name' exited with status $rc after '$how' (expected 0)"
        return 1
    fi
    echo "   redis '$name' exited with status 0 after '$how'"
    if ((cli_rc == 124)); then
        echo "   but 'redis-cli shutdown' did not return within 10 s: the server never closed its connection (no FIN, no RST)"
        return 1
    fi
}

# r_idle_start NAME : an idle client (redis_resp.py idle) connected to NAME
# from the client ns, waiting for the server to close its connection.
# r_idle_check : after the server stopped, that client must have seen EOF or
# a reset (a process's exit closes its sockets) within 10 s.
R_IDLE_PID=""
R_IDLE_LOG=""
r_idle_start() {
    local name="$1" i
    R_IDLE_LOG="$T_WORK/idle.$RANDOM.log"
    ip netns exec "$TB_NS_CLI" python3 "$R_PY" idle "${R_HOSTOF[$name]}" "${R_PORTOF[$name]}" --wait 10 \
        >"$R_IDLE_LOG" 2>&1 &
    R_IDLE_PID=$!
    R_BG_PIDS+=("$R_IDLE_PID")
    for ((i = 0; i < 100; i++)); do
        grep -q '^idle: connected' "$R_IDLE_LOG" && return 0
        kill -0 "$R_IDLE_PID" 2>/dev/null || break
        sleep 0.1
    done
    echo "   idle client did not connect: $(cat "$R_IDLE_LOG")"
    return 1
}
r_idle_check() {
    local rc=0
    wait "$R_IDLE_PID" || rc=$?
    sed 's/^/   /' "$R_IDLE_LOG" | grep -v 'idle: connected'
    return "$rc"
}

r__cleanup() {
    local n pid
    for n in "${R_NAMES[@]}"; do
        pid="${R_PID[$n]:-}"
        [[ -n "$pid" ]] || continue
        if r_alive "$n"; then
            kill -TERM "$pid" 2>/dev/null || true
            tb_wait_gone "$pid" 10 || kill -KILL "$pid" 2>/dev/null || true
        fi
        [[ -n "${R_PIDFILE[$n]:-}" ]] || wait "$pid" 2>/dev/null || true
        R_PID[$n]=""
    done
    for pid in "${R_BG_PIDS[@]}"; do
        kill -0 "$pid" 2>/dev/null && kill -KILL "$pid" 2>/dev/null
        wait "$pid" 2>/dev/null || true
    done
    if [[ -n "$R_HUGEDIR" ]] && mountpoint -q "$R_HUGEDIR"; then
        rm -f "$R_HUGEDIR"/* 2>/dev/null
        umount "$R_HUGEDIR" 2>/dev/null || umount -l "$R_HUGEDIR" 2>/dev/null || true
    fi
    return 0
}

# r_conf_files FILE [LINE...] : like r_conf, but the EAL keeps its state in
# files (--huge-unlink, which lstack respects instead of adding --in-memory):
# a run dir /var/run/dpdk/<prefix> and hugepage files <prefix>map_* (unlinked
# once mapped) in a private hugetlbfs mounted under the work dir (unmounted
# by the cleanup trap), so that a test can check none is left behind.
R_HUGEDIR=""
r_conf_files() {
    local file="$1"
    shift
    if [[ -z "$R_HUGEDIR" ]]; then
        [[ -n "$T_WORK" && -d "$T_WORK" ]] || r_fail "r_conf_files: no work dir (r_init first)"
        R_HUGEDIR="$T_WORK/hugetlbfs"
        mkdir -p "$R_HUGEDIR"
        mount -t hugetlbfs -o pagesize=2M nodev "$R_HUGEDIR" || r_fail "cannot mount hugetlbfs on $R_HUGEDIR"
    fi
    r_conf "$file" "dpdk_args = [ \"--huge-unlink\", \"--no-pci\", \"--huge-dir\", \"$R_HUGEDIR\", \"--file-prefix\", \"${LSTACK_TB}x\", \"-l\", \"$TB_CPU\", \"--vdev=$(tb_vdev)\" ];" "$@"
}

# Background client processes started by r_bench_bg (killed by the cleanup trap).
R_BG_PIDS=()

# r_bench NAME ARGS... : redis-benchmark from the client ns against NAME (-q,
# bounded by R_BENCH_TIMEOUT, default 300 s). Passes when the exit status is
# 0 and the output has no "error"/"ERR"; prints the per-test summary lines.
# The full output is in $R_BENCH_OUT.
R_BENCH_OUT=""
r_bench() {
    local name="$1" rc=0
    shift
    R_BENCH_OUT="$T_WORK/bench.$$.$RANDOM.log"
    local t0 t1
    t0=$(date +%s.%N)
    ip netns exec "$TB_NS_CLI" timeout "${R_BENCH_TIMEOUT:-300}" \
        redis-benchmark -h "${R_HOSTOF[$name]}" -p "${R_PORTOF[$name]}" -q "$@" >"$R_BENCH_OUT" 2>&1 || rc=$?
    t1=$(date +%s.%N)
    r__bench_check "$R_BENCH_OUT" "$rc" "redis-benchmark $*" "$(awk -v a="$t0" -v b="$t1" 'BEGIN{printf "%.1f", b-a}')"
}

# r__bench_check LOG RC WHAT SECONDS
r__bench_check() {
    local log="$1" rc="$2" what="$3" secs="${4:-?}"
    local summary
    summary=$(tr '\r' '\n' <"$log" | grep -E 'requests per second' | sed 's/^/     /')
    echo "   $what: exit $rc, ${secs}s"
    [[ -z "$summary" ]] || echo "$summary"
    if ((rc == 124)); then
        echo "   redis-benchmark did not finish within ${R_BENCH_TIMEOUT:-300}s (timeout); output tail:"
        tr '\r' '\n' <"$log" | grep -v '^$' | tail -n 5 | sed 's/^/   | /'
        return 1
    fi
    if ((rc != 0)); then
        echo "   redis-benchmark exited with status $rc; output tail:"
        tr '\r' '\n' <"$log" | grep -v '^$' | tail -n 8 | sed 's/^/   | /'
        return 1
    fi
    if tr '\r' '\n' <"$log" | grep -qiE 'error|ERR|abort|disconnected|reset by peer'; then
        echo "   redis-benchmark output reports errors:"
        tr '\r' '\n' <"$log" | grep -iE 'error|ERR|abort|disconnected|reset by peer' | sort | uniq -c | head -n 8 | sed 's/^/   | /'
        return 1
    fi
    if [[ -z "$summary" ]]; then
        echo "   redis-benchmark printed no result line; output tail:"
        tr '\r' '\n' <"$log" | grep -v '^$' | tail -n 5 | sed 's/^/   | /'
        return 1
    fi
    return 0
}

# r_bench_bg NAME LOGFILE ARGS... : the same in the background (main shell
# only). R_BG_PID is redis-benchmark's own PID (`ip netns exec` execs it; no
# `timeout` in between, so that kill -9 reaches the benchmark itself); the
# cleanup trap kills it if the test leaves it running. Check with r_bench_wait.
R_BG_PID=""
r_bench_bg() {
    local name="$1" log="$2"
    shift 2
    ip netns exec "$TB_NS_CLI" \
        redis-benchmark -h "${R_HOSTOF[$name]}" -p "${R_PORTOF[$name]}" -q "$@" >"$log" 2>&1 &
    R_BG_PID=$!
    R_BG_PIDS+=("$R_BG_PID")
}

# r_bench_wait PID LOG WHAT : wait (R_BENCH_TIMEOUT, default 300 s) for a
# background benchmark and check it like r_bench.
r_bench_wait() {
    local pid="$1" log="$2" what="$3" rc=0
    if ! tb_wait_gone "$pid" "${R_BENCH_TIMEOUT:-300}"; then
        kill -KILL "$pid" 2>/dev/null
        wait "$pid" 2>/dev/null
        r__bench_check "$log" 124 "$what"
        return 1
    fi
    wait "$pid" || rc=$?
    r__bench_check "$log" "$rc" "$what"
}

# r_dpdk_files : DPDK files of this bed's prefix ("${LSTACK_TB}x", see
# tb_write_conf) and the default prefix's hugepage files that appeared after
# r_dpdk_snapshot: run dir /var/run/dpdk/<prefix>, hugetlbfs <prefix>map_*.
R_DPDK_BEFORE=""
r__dpdk_list() {
    local mnt
    {
        ls -d /var/run/dpdk/"${LSTACK_TB}"* 2>/dev/null
        ls -d /var/run/dpdk/rte 2>/dev/null
        while read -r _ mnt fstype _; do
            [[ "$fstype" == hugetlbfs ]] || continue
            ls "$mnt"/"${LSTACK_TB}"*map_* "$mnt"/rtemap_* 2>/dev/null
        done </proc/mounts
    } | sort -u
}
r_dpdk_snapshot() { R_DPDK_BEFORE="$(r__dpdk_list)"; }
r_dpdk_files() {
    comm -13 <(echo "$R_DPDK_BEFORE") <(r__dpdk_list) | grep -v '^$' || true
}

# r_stat NAME COUNTER : one counter of the stack(s) of NAME's process (the
# "total" of `stackctl -p PID --json show stats`: mbuf_free, sockets, ...;
# else its process-wide "app" part: reads, fds_stack, ...).
# Returns 1 (prints nothing) for a kernel redis or when stackctl is missing.
r_stat() {
    local name="$1" key="$2" ctl="$T_BUILD/tools/stackctl" json
    [[ "${R_KIND[$name]:-}" == lstack && -x "$ctl" && -n "${R_PID[$name]:-}" ]] || return 1
    json=$(ip netns exec "$TB_NS_SRV" "$ctl" -p "${R_PID[$name]}" --json --timeout 5 show stats 2>/dev/null) || return 1
    python3 -c 'import json, sys; d = json.loads(sys.argv[1]); k = sys.argv[2]; print(int(d["total"][k] if k in d["total"] else d["app"][k]))' \
        "$json" "$key" \
        2>/dev/null
}

# r_mbuf_free NAME : the stack's free mbuf count (r_stat mbuf_free).
r_mbuf_free() {
    r_stat "$1" mbuf_free
}

# r_py ARGS... : the RESP helper (redis_resp.py) in the client ns.
r_py() {
    ip netns exec "$TB_NS_CLI" python3 "$R_PY" "$@"
}
