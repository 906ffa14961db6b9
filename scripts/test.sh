#!/usr/bin/env bash
# Install what lstack needs (Debian packages), build it warning-free, and run
# every test: unit tests, then system tests in self-made network namespaces
# (those need root; without root they are skipped, not passed).
# Usage: scripts/test.sh [meson test args...]   (e.g. --suite unit)
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}

scripts/install-deps.sh

if [ -f "$BUILD/build.ninja" ]; then
    meson setup --reconfigure "$BUILD" >/dev/null
else
    meson setup "$BUILD"
fi
# Warnings are errors here, so "builds with no warnings" is checked on every run.
meson configure "$BUILD" -Dwerror=true
ninja -C "$BUILD"

rc=0
meson test -C "$BUILD" --print-errorlogs "$@" || rc=$?

# The benchmark command must keep working: one short round of every scenario
# (scripts/bench.sh --short, well under a minute). Needs root; only on a full run
# (no meson test arguments); LSTACK_BENCH_SHORT=0 leaves it out. Counted as
# one more test in the closing line.
bench=none
if [ $# -eq 0 ] && [ "${LSTACK_BENCH_SHORT:-1}" != 0 ]; then
    if [ "$(id -u)" -ne 0 ]; then
        echo "bench --short: SKIP (needs root)"
        bench=skip
    else
        bench_out=$(mktemp -d /tmp/lstack-bench-short.XXXXXX)
        # The benchmark's own vdev is net_af_xdp; where it cannot work, say so
        # and check the command on net_af_packet instead.
        pmd=af_xdp
        if ! why=$(bash -c '. tests/system/testbed.sh && tb_af_xdp_ok'); then
            echo "bench --short: $why: running it with --pmd af_packet"
            pmd=af_packet
        fi
        if timeout -s TERM 600 scripts/bench.sh --short --pmd "$pmd" --build "$BUILD" --out "$bench_out"; then
            echo "bench --short: OK"
            bench=ok
        else
            echo "bench --short: FAIL (results kept in $bench_out)"
            bench=fail
            rc=1
        fi
        [ "$bench" != ok ] || rm -rf "$bench_out"
    fi
fi

# One plain closing line: N passed, N failed (, N skipped).
python3 - "$BUILD/meson-logs/testlog.json" "$bench" <<'PY'
import json, sys
p = f = s = 0
for line in open(sys.argv[1]):
    r = json.loads(line).get("result")
    if r in ("OK", "EXPECTEDFAIL"): p += 1
    elif r == "SKIP": s += 1
    else: f += 1
bench = sys.argv[2]
if bench == "ok": p += 1
elif bench == "fail": f += 1
elif bench == "skip": s += 1
print(f"{p} passed, {f} failed, {s} skipped")
PY
exit $rc
