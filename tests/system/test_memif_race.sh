#!/usr/bin/env bash
# memif-race: memif_race (see memif_race.c) in a work dir of its own: an
# lstack net_memif port polled in a tight loop while its peer connects,
# streams and disconnects, or is SIGKILLed, MEMIF_RACE_CYCLES times
# (default 16: about 20 s; the unguarded port crashed within 12 in every try). Fails if the polling process crashes.
set -u
build="${1:?usage: $0 BUILD_DIR}"
[[ $(id -u) -eq 0 ]] || { echo "SKIP: must run as root"; exit 77; }
dpkg-query -W -f='${db:Status-Abbrev}' librte-net-memif23 2>/dev/null | grep -q '^ii' ||
    { echo "SKIP: DPDK's net_memif driver (librte-net-memif23) is not installed"; exit 77; }
work=$(mktemp -d /tmp/lstack-memif-race.XXXXXX)
# EAL's run-time directories carry this run's prefix: a SIGKILLed peer
# cannot remove its own.
export MEMIF_RACE_PREFIX="mrace${work##*.}"
trap 'rm -rf "$work" /var/run/dpdk/"$MEMIF_RACE_PREFIX"*' EXIT
rc=0
timeout 240 "$build/tests/system/memif_race" "$work" "${MEMIF_RACE_CYCLES:-16}" >"$work/out" 2>&1 || rc=$?
grep -v -E '^(EAL|TELEMETRY|rte_pmd_memif_probe)' "$work/out" | tail -n 20
if ((rc != 0)); then
    ((rc > 128)) && echo "FAIL: memif_race died of signal $((rc - 128)) (the poller crashed)"
    ((rc == 124)) && echo "FAIL: memif_race did not finish within 240 s"
    echo "FAIL: memif_race exited with status $rc"
    exit 1
fi
echo "PASS: memif-race"
