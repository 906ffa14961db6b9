#!/usr/bin/env bash
# test_redis_fds.sh BUILD_DIR
# The fds lstack holds in redis's process, which come out of the fd limit
# redis sizes maxclients from (maxclients + 32 <= limit), with the pool of a
# 2,100-connection stack and `ulimit -n 2000`:
#  1. redis under lstack holds at most FDS_MAX (24) fds more than a kernel
#     redis started with the same flags (DPDK's hugepage memory is one memfd,
#     not one fd per 2 MiB page);
#  2. stackctl's fds_stack is that difference, as /proc/PID/fd shows it;
#  3. maxclients 1968 (the most redis grants under 2000 fds): 1968 clients
#     connect at once and answer PING, the next ones get redis's "max number
#     of clients reached" error, and after 10 leave, 10 new ones get in.
# TB_PMD=af_xdp runs it on net_af_xdp (registered as redis-fds-xdp).
# LSTACK_TEST_TARGET=kernel runs check 3 against a kernel redis (1 and 2
# compare lstack with the kernel: skipped there).
set -u
# shellcheck disable=SC2034 # T_NAME is read by common.sh
T_NAME=rfds
# shellcheck source=redis_lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/redis_lib.sh"
r_init "${1:-}" python3

FDS_MAX=24
LIMIT=2000
MAXCLIENTS=$((LIMIT - 32)) # redis keeps 32 fds for itself: the most it grants
r_conf "$R_CONF" 'tcp_conn_count = 2100;' 'mbuf_count_per_conn = 8;'

# fd_count NAME : how many fds NAME's process holds now.
fd_count() {
    local pid
    pid=$(r_pid "$1")
    find "/proc/$pid/fd" -mindepth 1 -maxdepth 1 2>/dev/null | wc -l
}

# fd_kinds NAME : what those fds are, counted by kind (numbers folded).
fd_kinds() {
    local pid f
    pid=$(r_pid "$1")
    for f in "/proc/$pid/fd"/*; do
        readlink "$f"
    done | sed -E 's/[0-9]+/N/g' | sort | uniq -c | sort -rn | sed 's/^/      /'
}

start_redis() { # NAME KIND
    R_ULIMIT_N=$LIMIT r_start "$1" "$2" --maxclients $MAXCLIENTS
    r_wait_ready "$1" 60 || r_fail "redis '$1' ($2, ulimit -n $LIMIT) did not come up"
}

# --- 1 and 2: the stack's fds --------------------------------------------------
if r_is_lstack; then
    start_redis kr kernel
    kern=$(fd_count kr)
    echo "   kernel redis: $kern fds"
    fd_kinds kr
    r_stop kr term || r_fail "kernel redis did not exit cleanly"
fi

start_redis srv "$R_TARGET"
got=$(r_cli srv config get maxclients | tail -n 1)
[[ "$got" == "$MAXCLIENTS" ]] || r_fail "maxclients is '$got', expected $MAXCLIENTS (fd limit $LIMIT)"

if r_is_lstack; then
    n=$(fd_count srv)
    beyond=$((n - kern))
    echo "   redis under lstack (net_$TB_PMD): $n fds, $beyond more than the kernel redis"
    fd_kinds srv
    if ((beyond <= FDS_MAX)); then
        t_ok "redis under lstack holds $beyond fds more than a kernel redis (at most $FDS_MAX)"
    else
        r_soft_fail "redis under lstack holds $beyond fds more than a kernel redis, at most $FDS_MAX expected (see above)"
    fi

    stat=$(r_stat srv fds_stack) || r_fail "stackctl show stats gave no fds_stack"
    huge=$(r_stat srv fds_hugepage) || r_fail "stackctl show stats gave no fds_hugepage"
    after=$(fd_count srv)
    echo "   stackctl: fds_stack $stat, fds_hugepage $huge; /proc/PID/fd: $n fds before, $after after the request"
    ((after == n)) || r_fail "the process holds $after fds after the stackctl request, $n before"
    if ((stat == beyond)); then
        t_ok "stackctl's fds_stack ($stat) is what /proc/PID/fd shows beyond the kernel redis"
    else
        r_soft_fail "stackctl's fds_stack is $stat, /proc/PID/fd shows $beyond beyond the kernel redis"
    fi
fi

# --- 3: maxclients close to the fd limit ---------------------------------------
# The client opens them all at once: its own fd limit must allow it.
ulimit -n 4096 || r_fail "cannot raise the test's fd limit to 4096"
out="$T_WORK/conns.log"
rc=0
r_py conns "$(r_host srv)" "$(r_port srv)" --open $((MAXCLIENTS + 8)) --limit $MAXCLIENTS --slack 0 \
    --close 10 --timeout 5 --recover 15 >"$out" 2>&1 || rc=$?
sed 's/^/   /' "$out"
((rc == 0)) || r_fail "$MAXCLIENTS clients under ulimit -n $LIMIT (see above)"
r_alive srv || r_fail "redis died"
t_ok "ulimit -n $LIMIT, maxclients $MAXCLIENTS: all $MAXCLIENTS clients connect at once and answer PING, the rest get an error"
r_stop srv term || r_fail "redis did not exit cleanly on SIGTERM"
t_ok "redis exited 0 on SIGTERM"
r_pass
