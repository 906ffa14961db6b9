#!/usr/bin/env bash
# memif-race: memif_race (see memif_race.c) in a work dir of its own: an
# lstack net_memif port polled in a tight loop while its peer connects,
# streams and disconnects, or is SIGKILLed, MEMIF_RACE_CYCLES times
# (default 16: about 20 s; the unguarded port crashed within 12 in every try). Fails if the polling process crashes.
#
# Never a hang: every wait is bounded, and a run that overstays says which
# phase it was in and leaves its stacks behind. The whole run gets
# MEMIF_RACE_LIMIT seconds (default 180; it takes 6-30 s); the survivor's
# end phase (closing its port and exiting once the peer is done) gets
# MEMIF_RACE_END_LIMIT (default 30; it takes milliseconds). On expiry, every
# process of the run (survivor, peer, grandchild) is described: its threads
# with their kernel wait channels and, when gdb is installed, their stacks;
# then they are killed, by pid (an unbounded `timeout 240` would hide where
# a hang of the end phase was).
set -u
build="${1:?usage: $0 BUILD_DIR}"
source "$(dirname "$0")/memif_require.sh"
# tb_describe_pid (only functions and variables: no bed is made)
# shellcheck source=testbed.sh
source "$(dirname "$0")/testbed.sh"
work=$(mktemp -d /tmp/lstack-memif-race.XXXXXX)
# EAL's run-time directories carry this run's prefix: a SIGKILLed peer
# cannot remove its own.
export MEMIF_RACE_PREFIX="mrace${work##*.}"
trap 'rm -rf "$work" /var/run/dpdk/"$MEMIF_RACE_PREFIX"*' EXIT
limit=${MEMIF_RACE_LIMIT:-180}
end_limit=${MEMIF_RACE_END_LIMIT:-30}

# The pid and its descendants, parents first.
tree() {
    local p=$1 c
    echo "$p"
    for c in $(cat /proc/"$p"/task/*/children 2>/dev/null); do tree "$c"; done
}

"$build/tests/system/memif_race" "$work" "${MEMIF_RACE_CYCLES:-16}" >"$work/out" 2>&1 &
pid=$!
start=$SECONDS
end_seen=
why=
while kill -0 "$pid" 2>/dev/null; do
    # The end phase starts when the peer reports (or the survivor starts closing).
    if [[ -z $end_seen ]] && grep -q -E '^memif_race: (peer: [0-9]+ of|survivor: closing)' "$work/out"; then
        end_seen=$SECONDS
    fi
    if ((SECONDS - start >= limit)); then
        why="memif_race did not finish within $limit s"
    elif [[ -n $end_seen ]] && ((SECONDS - end_seen >= end_limit)); then
        why="the survivor did not finish within $end_limit s of the peer's end (end phase: the peer's exit, the survivor noticing it, closing its port, exiting)"
    fi
    [[ -z $why ]] || break
    sleep 0.2
done
if [[ -n $why ]]; then
    procs=$(tree "$pid")
    echo "HANG: $why; the last phase it printed:"
    grep -E '^memif_race:' "$work/out" | tail -n 3 | sed 's/^/    /'
    # shellcheck disable=SC2086 # one pid per word
    tb_describe_pid $procs
    for p in $(echo "$procs" | tac); do kill -KILL "$p" 2>/dev/null; done
fi
wait "$pid"
rc=$?
grep -v -E '^(EAL|TELEMETRY|rte_pmd_memif_probe)' "$work/out" | tail -n 20
if [[ -n $why ]]; then
    echo "FAIL: $why"
    exit 1
fi
if ((rc != 0)); then
    ((rc > 128)) && echo "FAIL: memif_race died of signal $((rc - 128)) (the poller crashed)"
    echo "FAIL: memif_race exited with status $rc"
    exit 1
fi
echo "PASS: memif-race"
