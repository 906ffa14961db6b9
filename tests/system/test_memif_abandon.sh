#!/usr/bin/env bash
# memif-abandon: memif_abandon (see memif_abandon.c): a memif port's close
# given up on after its 10 s wait stays queued on EAL's interrupt thread,
# EAL's cleanup leaves the port to it, and it runs once that thread is free.
# About 15 s; bounded at MEMIF_ABANDON_LIMIT seconds (default 60), after
# which the process is described (threads, wait channels) and killed.
set -u
build="${1:?usage: $0 BUILD_DIR}"
source "$(dirname "$0")/memif_require.sh"
work=$(mktemp -d /tmp/lstack-memif-abandon.XXXXXX)
trap 'rm -rf "$work"' EXIT
limit=${MEMIF_ABANDON_LIMIT:-60}
"$build/tests/system/memif_abandon" "$work" >"$work/out" 2>&1 &
pid=$!
start=$SECONDS
while kill -0 "$pid" 2>/dev/null && ((SECONDS - start < limit)); do
    sleep 0.2
done
hung=
if kill -0 "$pid" 2>/dev/null; then
    hung=1
    echo "HANG: memif_abandon did not finish within $limit s"
    for t in /proc/"$pid"/task/*; do
        echo "    thread ${t##*/} ($(cat "$t/comm" 2>/dev/null)): wchan $(cat "$t/wchan" 2>/dev/null)"
    done
    kill -KILL "$pid" 2>/dev/null
fi
wait "$pid"
rc=$?
grep -v -E '^(EAL|TELEMETRY|rte_pmd_memif_probe)' "$work/out" | tail -n 20
rm -rf /var/run/dpdk/memifab"$pid"
if [[ -n $hung ]] || ((rc != 0)); then
    ((rc > 128)) && echo "FAIL: memif_abandon died of signal $((rc - 128))"
    echo "FAIL: memif-abandon (status $rc)"
    exit 1
fi
echo "PASS: memif-abandon"
