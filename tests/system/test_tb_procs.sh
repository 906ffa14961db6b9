#!/usr/bin/env bash
# test_tb_procs.sh BUILD_DIR - testbed.sh's process helpers, which every
# system test uses to tell a process that still runs from one that has
# ended (no root, no bed): tb_running and tb_wait_gone must
#  - call a running child running, and a zombie (ended, unreaped) not;
#  - call a process whose leader thread has exited while another thread
#    runs running (a zombie leader is not an ended process), and wait for
#    its last thread;
#  - decide once, on one look: sem-multi reported sem_server "still
#    running 30 s after the client finished" 2 s after it (CI, twice; here
#    1 run in 10), because the harness looked again (kill -0, then the
#    state) and bash reaped the process between the two looks. Here 40
#    processes that end like sem_server (leader a zombie first, the process
#    a few milliseconds later) must all be found gone, each within its
#    bound, and their exit status collected.
# TAP output.
set -u
build="${1:?usage: $0 BUILD_DIR}"
shape="$build/tests/system/proc_shape"
# shellcheck source=testbed.sh
source "$(dirname "${BASH_SOURCE[0]}")/testbed.sh"
n=0
fails=0
check() { # check NAME COMMAND...
    local name=$1
    shift
    n=$((n + 1))
    if "$@"; then
        echo "ok $n - $name"
    else
        echo "not ok $n - $name"
        fails=$((fails + 1))
        return 1
    fi
}
# the state of every thread of PID, for a failure report
states() {
    local t
    for t in /proc/"$1"/task/*/stat; do
        [[ -r "$t" ]] && echo "# thread ${t%/stat}: $(cut -d' ' -f3 "$t" 2>/dev/null)"
    done
    return 0
}

not_running() { ! tb_running "$1"; }
not_gone_within() { ! tb_wait_gone "$1" "$2"; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# (not killed: a SIGTERM before the fork's exec would run the EXIT trap there)
sleep 1 &
p=$!
check "a running child is running" tb_running "$p"
wait "$p"

"$shape" zombie 1500 >"$tmp/zombie" &
zp=$!
for ((i = 0; i < 50; i++)); do
    [[ -s "$tmp/zombie" ]] && break
    sleep 0.1
done
zpid=$(cat "$tmp/zombie")
if [[ -n "$zpid" ]]; then
    check "a zombie (ended, not reaped) is not running" not_running "$zpid"
    check "tb_wait_gone: a zombie is gone" tb_wait_gone "$zpid" 1
else
    check "proc_shape zombie printed the zombie's pid" false
fi
wait "$zp"

"$shape" leader 3000 &
p=$!
sleep 0.3
check "a process whose leader exited while a thread runs is running" tb_running "$p" || states "$p"
check "tb_wait_gone waits for that thread (still there after 1 s)" not_gone_within "$p" 1 || states "$p"
t0=$SECONDS
tb_wait_gone "$p" 10
rc=$?
wait "$p"
st=$?
check "then gone within 10 s (status $rc after $((SECONDS - t0)) s) and its exit status collected ($st, want 7)" \
    test "$rc" = 0 -a "$st" = 7
check "a reaped child is not running" not_running "$p"

# 40 processes ending like sem_server, each waited for as test_sem.sh does
bad=0
for ((k = 0; k < 40; k++)); do
    "$shape" leader $((20 + RANDOM % 30)) &
    p=$!
    start=$SECONDS
    if ! tb_wait_gone "$p" 5; then
        bad=$((bad + 1))
        echo "# process $k (pid $p) called still running after $((SECONDS - start)) s"
        states "$p"
    fi
    wait "$p"
    st=$?
    if [[ "$st" != 7 ]]; then
        bad=$((bad + 1))
        echo "# process $k (pid $p): exit status $st, want 7"
    fi
done
check "40 processes ending with a zombie leader: each found gone within 5 s, status 7" test "$bad" = 0

# No harness decides "still running" with a second look after kill -0 (the
# look that bash's reaping made wrong): they call tb_running / tb_wait_gone.
here=$(dirname "${BASH_SOURCE[0]}")
second_look() {
    ! grep -nE 'kill -0 [^|;&]*&& *\[\[ *"\$\(awk' "$here"/*.sh "$here"/../../scripts/*.sh >"$tmp/looks"
}
check "no harness takes a second look (kill -0, then the state)" second_look || sed 's/^/# /' "$tmp/looks"
echo "1..$n"
exit $((fails > 0))
